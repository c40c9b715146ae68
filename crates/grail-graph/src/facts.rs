//! What is known of a graph's edges ([`Facts`]), and the parallel checks that learn it.
//!
//! Preparing a graph for a program (symmetrizing it, sorting it, transposing it) is skipped when
//! the graph is known not to need it. Builders record what they made, `.gcsr` version 2 files
//! store it, and [`scan`] learns the cheap facts of any CSR in one parallel pass.

use std::hash::{BuildHasher, Hasher};

use rayon::prelude::*;

use crate::builder::BuildOptions;
use crate::graph::{Csr, NodeId, Weight};
use crate::par::node_groups;

/// What is known of a graph's out-edges. A field that is `false` is not known to hold (it may
/// hold all the same); one that is `true` holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Facts {
    /// Every adjacency is sorted by target, then by weight.
    pub sorted: bool,
    /// No edge `u -> u`.
    pub no_self_loops: bool,
    /// No two edges of a node have the same target.
    pub no_duplicates: bool,
    /// Every edge `u -> v` of weight `w` has a matching `v -> u` of weight `w`, counting
    /// multiplicities.
    pub symmetric: bool,
}

impl Facts {
    /// Nothing known.
    pub const NONE: Facts = Facts { sorted: false, no_self_loops: false, no_duplicates: false, symmetric: false };

    /// The undirected simple graph, stored symmetrically with sorted adjacencies.
    pub const UNDIRECTED_SIMPLE: Facts =
        Facts { sorted: true, no_self_loops: true, no_duplicates: true, symmetric: true };

    /// Sorted, without self-loops or duplicates (symmetric or not).
    pub fn is_simple_sorted(self) -> bool {
        self.sorted && self.no_self_loops && self.no_duplicates
    }

    /// Symmetric, sorted, without self-loops or duplicates: what `tri` and `mis` take as is.
    pub fn is_undirected_simple(self) -> bool {
        self.is_simple_sorted() && self.symmetric
    }

    /// Symmetric with sorted adjacencies: the reverse CSR is the out-CSR itself (a node's
    /// in-edges, listed by source, are its out-edges listed by target).
    pub fn reverse_is_out(self) -> bool {
        self.sorted && self.symmetric
    }

    /// Everything either knows.
    pub fn union(self, other: Facts) -> Facts {
        Facts {
            sorted: self.sorted || other.sorted,
            no_self_loops: self.no_self_loops || other.no_self_loops,
            no_duplicates: self.no_duplicates || other.no_duplicates,
            symmetric: self.symmetric || other.symmetric,
        }
    }

    /// What a build with `options` guarantees of its result.
    pub(crate) fn of_build(options: &BuildOptions) -> Facts {
        Facts {
            sorted: options.sort || options.dedup,
            no_self_loops: options.remove_self_loops,
            no_duplicates: options.dedup,
            // Symmetrizing adds v -> u of the same weight for every u -> v; dropping self-loops
            // and keeping the lightest of parallel edges keep that.
            symmetric: options.symmetrize,
        }
    }

    /// The facts as names, for messages and `grail stats`.
    pub fn names(self) -> Vec<&'static str> {
        let mut names = Vec::new();
        for (known, name) in [
            (self.sorted, "sorted"),
            (self.no_self_loops, "no self-loops"),
            (self.no_duplicates, "no duplicates"),
            (self.symmetric, "symmetric"),
        ] {
            if known {
                names.push(name);
            }
        }
        names
    }
}

/// Learns, in one parallel pass over the edges, whether `csr`'s adjacencies are sorted (by
/// target, then weight), free of self-loops and (when sorted) of duplicates. Symmetry is not
/// decided here: `symmetric` is `false`.
pub fn scan(csr: &Csr) -> Facts {
    let bounds = node_groups(csr.offsets());
    let targets = csr.targets();
    let weights = csr.weight_words();
    let key = |w: u32| if csr.has_real_weights() { crate::graph::real_weight_order_key(w) } else { w };
    let (sorted, no_self_loops, no_duplicates) = (0..bounds.len() - 1)
        .into_par_iter()
        .map(|g| {
            // One branch-free pass: each flag collects its offences over the group.
            let (mut unsorted, mut loops, mut duplicates) = (false, false, false);
            for u in bounds[g]..bounds[g + 1] {
                let range = csr.edge_range(u as NodeId);
                let list = &targets[range.clone()];
                let Some(&first) = list.first() else { continue };
                loops |= first == u as NodeId;
                match weights.map(|w| &w[range]) {
                    None => {
                        for pair in list.windows(2) {
                            unsorted |= pair[0] > pair[1];
                            duplicates |= pair[0] == pair[1];
                            loops |= pair[1] == u as NodeId;
                        }
                    }
                    Some(w) => {
                        for (i, pair) in list.windows(2).enumerate() {
                            let same = pair[0] == pair[1];
                            unsorted |= pair[0] > pair[1] || (same && key(w[i]) > key(w[i + 1]));
                            duplicates |= same;
                            loops |= pair[1] == u as NodeId;
                        }
                    }
                }
            }
            (!unsorted, !loops, !duplicates)
        })
        .reduce(|| (true, true, true), |a, b| (a.0 && b.0, a.1 && b.1, a.2 && b.2));
    // Duplicates are only found next to each other in sorted lists.
    Facts { sorted, no_self_loops, no_duplicates: sorted && no_duplicates, symmetric: false }
}

/// Whether `csr`, whose adjacencies are sorted (by target, then weight), is symmetric, given its
/// transpose: exactly when the two are equal, since the transpose lists each node's in-edges by
/// source and parallel edges by weight.
pub(crate) fn symmetric_given_transpose(csr: &Csr, transpose: &Csr) -> bool {
    csr.offsets() == transpose.offsets()
        && csr.targets() == transpose.targets()
        && (csr.weight_words().is_none() || csr.weight_words() == transpose.weight_words())
}

/// A multiset fingerprint of edges: the wrapping sum of a keyed hash of each `(u, v, w)`, so
/// equal multisets of edges have equal fingerprints whatever their order, and different ones
/// differ but with a probability of about 2^-64 for a key drawn at random after the edges are
/// fixed. Used to check what a file claims without rebuilding what it stores.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fingerprint {
    keys: [u64; 3],
}

impl Fingerprint {
    /// A fingerprint under a fresh random key.
    pub(crate) fn random() -> Fingerprint {
        let mut keys = [0u64; 3];
        for (i, key) in keys.iter_mut().enumerate() {
            let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
            hasher.write_usize(i);
            *key = hasher.finish() | 1;
        }
        Fingerprint { keys }
    }

    /// The hash of edge `(u, v)` of weight `w`: one 128-bit product of keyed words.
    #[inline]
    fn edge(&self, u: NodeId, v: NodeId, w: Weight) -> u64 {
        let x = (u64::from(u) << 32) | u64::from(v);
        fold(x ^ self.keys[0], x.rotate_left(17) ^ u64::from(w).wrapping_mul(self.keys[2]) ^ self.keys[1])
    }

    /// The fingerprints of `csr`'s edges `(u, v, w)` and of their reverses `(v, u, w)` (weight 0
    /// throughout when unweighted), in one pass. The graph is symmetric when they agree, and a
    /// CSR holds the reverse edges of another when its first equals the other's second.
    pub(crate) fn of(&self, csr: &Csr) -> (u64, u64) {
        let bounds = node_groups(csr.offsets());
        (0..bounds.len() - 1)
            .into_par_iter()
            .map(|g| {
                let (mut forward, mut backward) = (0u64, 0u64);
                for u in bounds[g] as NodeId..bounds[g + 1] as NodeId {
                    let range = csr.edge_range(u);
                    let weights = csr.weight_words().map(|w| &w[range.clone()]);
                    for (i, &v) in csr.targets()[range].iter().enumerate() {
                        let w = weights.map_or(0, |w| w[i]);
                        forward = forward.wrapping_add(self.edge(u, v, w));
                        backward = backward.wrapping_add(self.edge(v, u, w));
                    }
                }
                (forward, backward)
            })
            .reduce(|| (0, 0), |a, b| (a.0.wrapping_add(b.0), a.1.wrapping_add(b.1)))
    }
}

/// The 128-bit product of `a` and `b`, folded to 64 bits.
#[inline]
fn fold(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    (product as u64) ^ ((product >> 64) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{EdgeList, build_csr};

    fn csr(triples: &[(u32, u32, u32)], options: &BuildOptions) -> Csr {
        build_csr(EdgeList::from_triples(4, triples), options).unwrap()
    }

    #[test]
    fn scan_finds_loops_duplicates_and_order() {
        let simple = csr(&[(0, 1, 1), (0, 2, 1), (1, 0, 1)], &BuildOptions::AS_GIVEN);
        assert_eq!(scan(&simple), Facts { symmetric: false, ..Facts::UNDIRECTED_SIMPLE });
        let looped = csr(&[(0, 1, 1), (2, 2, 1)], &BuildOptions::AS_GIVEN);
        assert!(!scan(&looped).no_self_loops && scan(&looped).sorted);
        let unsorted = csr(&[(0, 2, 1), (0, 1, 1)], &BuildOptions::AS_GIVEN);
        assert_eq!(scan(&unsorted), Facts { no_self_loops: true, ..Facts::NONE });
        let duplicated = csr(&[(0, 1, 1), (0, 1, 1)], &BuildOptions::AS_GIVEN);
        assert_eq!(scan(&duplicated), Facts { sorted: true, no_self_loops: true, ..Facts::NONE });
        // Parallel edges out of weight order are not sorted.
        let heavy_first = csr(&[(0, 1, 5), (0, 1, 2)], &BuildOptions::AS_GIVEN);
        assert!(!scan(&heavy_first).sorted);
        assert!(scan(&csr(&[(0, 1, 2), (0, 1, 5)], &BuildOptions::AS_GIVEN)).sorted);
    }

    #[test]
    fn build_facts_hold() {
        let triples = [(0, 1, 4), (1, 0, 3), (2, 2, 1), (3, 1, 2), (3, 1, 1), (0, 3, 9)];
        for options in [BuildOptions::AS_GIVEN, BuildOptions::SIMPLE, BuildOptions::UNDIRECTED] {
            let built = csr(&triples, &options);
            let claimed = Facts::of_build(&options);
            let found = scan(&built);
            assert!(!claimed.sorted || found.sorted, "{options:?}");
            assert!(!claimed.no_self_loops || found.no_self_loops, "{options:?}");
            assert!(!claimed.no_duplicates || found.no_duplicates, "{options:?}");
            let symmetric = symmetric_given_transpose(
                &crate::builder::sort_adjacencies(built.clone()),
                &crate::builder::sort_adjacencies(built.transpose()),
            );
            assert!(!claimed.symmetric || symmetric, "{options:?}");
        }
    }

    #[test]
    fn fingerprints_compare_multisets() {
        let print = Fingerprint::random();
        let a = csr(&[(0, 1, 4), (1, 0, 4), (2, 3, 1), (3, 2, 1)], &BuildOptions::AS_GIVEN);
        // The same edges in another order.
        let b = csr(&[(3, 2, 1), (1, 0, 4), (2, 3, 1), (0, 1, 4)], &BuildOptions::AS_GIVEN);
        assert_eq!(print.of(&a), print.of(&b));
        assert_eq!(print.of(&a).0, print.of(&a).1, "a is symmetric");
        assert_eq!(print.of(&a.transpose()).1, print.of(&a).0, "the transpose holds the reverse edges");
        let c = csr(&[(0, 1, 4), (1, 0, 5), (2, 3, 1), (3, 2, 1)], &BuildOptions::AS_GIVEN);
        assert_ne!(print.of(&c).0, print.of(&c).1, "a weight differs");
        assert_eq!(print.of(&c.transpose()).1, print.of(&c).0);
        let d = csr(&[(0, 1, 4), (0, 1, 4), (1, 0, 4)], &BuildOptions::AS_GIVEN);
        assert_ne!(print.of(&d).0, print.of(&d).1, "multiplicities count");
        // Another key gives other fingerprints.
        assert_ne!(Fingerprint::random().of(&a), print.of(&a));
    }
}
