//! The suite's variants: which grail program computes an algorithm, and how.

use crate::algorithm::Algorithm;

/// One way to compute a suite algorithm: a grail program of `programs/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variant {
    pub algorithm: Algorithm,
    /// What `--variant` calls it.
    pub name: &'static str,
    /// The suite program (a file stem in `programs/`).
    pub program: &'static str,
    /// One line for help texts and tables.
    pub summary: &'static str,
}

/// Every variant; the first of each algorithm is its default.
pub const VARIANTS: &[Variant] = &[
    Variant {
        algorithm: Algorithm::Bfs,
        name: "do",
        program: "bfs_do",
        summary: "direction-optimizing, switching between top-down and bottom-up steps",
    },
    Variant {
        algorithm: Algorithm::Bfs,
        name: "wl",
        program: "bfs",
        summary: "data-driven, a worklist level by level",
    },
    Variant {
        algorithm: Algorithm::Bfs,
        name: "async",
        program: "bfs_async",
        summary: "label-correcting, levels lowered by atomic_min: runs without rounds over several devices (--mode async)",
    },
    Variant {
        algorithm: Algorithm::Sssp,
        name: "nf",
        program: "sssp_nf",
        summary: "near-far, delta-stepping windows over a worklist",
    },
    Variant { algorithm: Algorithm::Sssp, name: "wl", program: "sssp_wl", summary: "data-driven worklist relaxation" },
    Variant {
        algorithm: Algorithm::Sssp,
        name: "nfq",
        program: "sssp_nfq",
        summary: "near-far whose windows run as one queue on a GPU (--mode async), in rounds elsewhere",
    },
    Variant {
        algorithm: Algorithm::Sssp,
        name: "ds",
        program: "sssp_ds",
        summary: "delta-stepping windows over one worklist, near heads pushed, not retried (runs partitioned)",
    },
    Variant {
        algorithm: Algorithm::Sssp,
        name: "bf",
        program: "sssp_bf",
        summary: "topology-driven Bellman-Ford with an updated flag",
    },
    Variant {
        algorithm: Algorithm::Cc,
        name: "afforest",
        program: "cc_afforest",
        summary: "Afforest: link a few neighbours, sample the big component, link the rest outside it",
    },
    Variant {
        algorithm: Algorithm::Cc,
        name: "afforest-set",
        program: "cc_afforest_set",
        summary: "Afforest over a union-find set (runs partitioned: the parts' classes joined through their ghosts)",
    },
    Variant { algorithm: Algorithm::Cc, name: "uf", program: "cc", summary: "union-find over every edge, then labels" },
    Variant {
        algorithm: Algorithm::Cc,
        name: "lp",
        program: "cc_lp",
        summary: "label propagation: atomic_min to neighbours, a worklist of the nodes lowered",
    },
    Variant {
        algorithm: Algorithm::Pr,
        name: "pull32",
        program: "pr_pull32",
        summary: "topology-driven power iteration, pull, f32 ranks and contributions",
    },
    Variant { algorithm: Algorithm::Pr, name: "pull", program: "pr", summary: "topology-driven power iteration, pull" },
    Variant {
        algorithm: Algorithm::Pr,
        name: "push",
        program: "pr_push",
        summary: "topology-driven power iteration, push (atomic adds; runs partitioned)",
    },
    Variant {
        algorithm: Algorithm::Pr,
        name: "residual",
        program: "pr_residual",
        summary: "data-driven residual push",
    },
    Variant { algorithm: Algorithm::Tri, name: "merge", program: "tri", summary: "sorted-adjacency merge per edge" },
    Variant { algorithm: Algorithm::Mis, name: "luby", program: "mis", summary: "Luby's random-priority rounds" },
    Variant {
        algorithm: Algorithm::Mst,
        name: "boruvka",
        program: "mst",
        summary: "Boruvka rounds over a union-find set",
    },
];

/// The variants that run on graphs with real weights in place of the [`VARIANTS`] entry of
/// the same algorithm and name (see [`Variant::for_weights`]).
pub const REAL_WEIGHT_VARIANTS: &[Variant] = &[
    Variant {
        algorithm: Algorithm::Sssp,
        name: "nf",
        program: "sssp_nf_real",
        summary: "near-far over real weights (f32 weights, f64 distances)",
    },
    Variant {
        algorithm: Algorithm::Sssp,
        name: "wl",
        program: "sssp_wl_real",
        summary: "data-driven worklist relaxation over real weights (f32 weights, f64 distances)",
    },
];

impl Variant {
    /// The variant to run on a graph whose weights are `kind`: itself, or for real weights its
    /// real-weight twin (SSSP), or an error naming the variants that have one. Algorithms that
    /// only compare weights (MST, through order keys) or ignore them run as they are.
    pub fn for_weights(&'static self, kind: Option<grail_graph::WeightKind>) -> Result<&'static Variant, String> {
        if kind != Some(grail_graph::WeightKind::Real) || self.algorithm != Algorithm::Sssp {
            return Ok(self);
        }
        REAL_WEIGHT_VARIANTS.iter().find(|v| v.algorithm == self.algorithm && v.name == self.name).ok_or_else(|| {
            let names: Vec<_> =
                REAL_WEIGHT_VARIANTS.iter().filter(|v| v.algorithm == self.algorithm).map(|v| v.name).collect();
            format!(
                "{} variant '{}' reads integer weights, and this graph's weights are real: use --variant {}, or \
                 read the graph with --weights round|scale",
                self.algorithm,
                self.name,
                names.join(" or ")
            )
        })
    }

    /// The variants of one algorithm, default first.
    pub fn of(algorithm: Algorithm) -> impl Iterator<Item = &'static Variant> {
        VARIANTS.iter().filter(move |v| v.algorithm == algorithm)
    }

    /// The variant named `name` (its default when `None`).
    pub fn find(algorithm: Algorithm, name: Option<&str>) -> Result<&'static Variant, String> {
        let mut variants = Variant::of(algorithm);
        match name {
            None => Ok(variants.next().expect("every algorithm has a variant")),
            Some(name) => variants.find(|v| v.name.eq_ignore_ascii_case(name) || v.program == name).ok_or_else(|| {
                let names: Vec<_> = Variant::of(algorithm).map(|v| v.name).collect();
                format!("{algorithm} has no variant '{name}' (expected one of: {})", names.join(", "))
            }),
        }
    }

    /// Whether the program needs the undirected simple graph underlying its input, with sorted
    /// adjacency lists (the language's input contract for these programs): `tri`, `mis`, and
    /// CC by label propagation, whose labels flow along out-edges only.
    pub fn needs_undirected_simple(&self) -> bool {
        matches!(self.algorithm, Algorithm::Tri | Algorithm::Mis) || self.program == "cc_lp"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_algorithm_has_a_default_and_programs_exist() {
        for algorithm in Algorithm::ALL {
            let default = Variant::find(algorithm, None).unwrap();
            assert_eq!(default.algorithm, algorithm);
        }
        for variant in VARIANTS.iter().chain(REAL_WEIGHT_VARIANTS) {
            assert!(crate::program_source(variant.program).is_some(), "{} has no program", variant.program);
        }
        let real = Some(grail_graph::WeightKind::Real);
        let nf = Variant::find(Algorithm::Sssp, None).unwrap();
        assert_eq!(nf.for_weights(real).unwrap().program, "sssp_nf_real");
        assert_eq!(nf.for_weights(Some(grail_graph::WeightKind::Integer)).unwrap(), nf);
        let bf = Variant::find(Algorithm::Sssp, Some("bf")).unwrap();
        assert!(bf.for_weights(real).unwrap_err().contains("--variant nf or wl"));
        let mst = Variant::find(Algorithm::Mst, None).unwrap();
        assert_eq!(mst.for_weights(real).unwrap(), mst);
        assert_eq!(Variant::find(Algorithm::Bfs, Some("do")).unwrap().program, "bfs_do");
        let lp = Variant::find(Algorithm::Cc, Some("lp")).unwrap();
        assert_eq!(lp.program, "cc_lp");
        assert!(lp.needs_undirected_simple());
        assert_ne!(Variant::find(Algorithm::Cc, None).unwrap(), lp, "lp is not the default cc");
        assert!(!Variant::find(Algorithm::Cc, Some("uf")).unwrap().needs_undirected_simple());
        let error = Variant::find(Algorithm::Bfs, Some("nope")).unwrap_err();
        assert!(error.contains("do, wl"), "{error}");
    }
}
