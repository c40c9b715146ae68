//! The names of the suite's algorithms and of the targets that run them.

use std::fmt;
use std::str::FromStr;

/// A suite algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// Breadth-first search: hop level of every node from a source.
    Bfs,
    /// Single-source shortest paths over `u32` weights, summed in `u64`.
    Sssp,
    /// Weakly connected components, labelled by their smallest node id.
    Cc,
    /// PageRank (damping 0.85, dangling rank spread uniformly).
    Pr,
    /// Triangle counting on the underlying undirected simple graph.
    Tri,
    /// A maximal independent set of the underlying undirected graph.
    Mis,
    /// A minimum spanning forest of the underlying undirected graph.
    Mst,
}

impl Algorithm {
    pub const ALL: [Algorithm; 7] =
        [Algorithm::Bfs, Algorithm::Sssp, Algorithm::Cc, Algorithm::Pr, Algorithm::Tri, Algorithm::Mis, Algorithm::Mst];

    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Bfs => "bfs",
            Algorithm::Sssp => "sssp",
            Algorithm::Cc => "cc",
            Algorithm::Pr => "pr",
            Algorithm::Tri => "tri",
            Algorithm::Mis => "mis",
            Algorithm::Mst => "mst",
        }
    }

    /// One line saying what the algorithm computes.
    pub fn description(self) -> &'static str {
        match self {
            Algorithm::Bfs => "breadth-first search levels from a source",
            Algorithm::Sssp => "shortest-path distances from a source",
            Algorithm::Cc => "weakly connected components",
            Algorithm::Pr => "PageRank",
            Algorithm::Tri => "triangle count",
            Algorithm::Mis => "maximal independent set",
            Algorithm::Mst => "minimum spanning forest",
        }
    }

    /// Whether the algorithm starts from a source node.
    pub fn needs_source(self) -> bool {
        matches!(self, Algorithm::Bfs | Algorithm::Sssp)
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Algorithm {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Algorithm::ALL.into_iter().find(|a| a.name().eq_ignore_ascii_case(s)).ok_or_else(|| {
            let names: Vec<_> = Algorithm::ALL.iter().map(|a| a.name()).collect();
            format!("unknown algorithm '{s}' (expected one of: {})", names.join(", "))
        })
    }
}

/// What runs an algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// The sequential reference implementation: slow, obviously correct, the oracle.
    Reference,
    /// The suite's grail program compiled to C and run on every core.
    Cpu,
    /// The suite's grail program compiled to CUDA and run on one GPU.
    Gpu,
}

impl Target {
    pub const ALL: [Target; 3] = [Target::Reference, Target::Cpu, Target::Gpu];

    pub fn name(self) -> &'static str {
        match self {
            Target::Reference => "reference",
            Target::Cpu => "cpu",
            Target::Gpu => "gpu",
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Target {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "reference" | "ref" => Ok(Target::Reference),
            "cpu" => Ok(Target::Cpu),
            "gpu" | "cuda" => Ok(Target::Gpu),
            _ => Err(format!("unknown target '{s}' (expected: reference, cpu, gpu)")),
        }
    }
}
