//! Summary statistics of a graph, as `grail stats` prints them.

use rayon::prelude::*;

use crate::graph::Graph;

/// What `grail stats` reports. Counts are of directed edges as stored.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct GraphStats {
    pub nodes: u32,
    pub edges: u64,
    pub weighted: bool,
    pub max_out_degree: u64,
    pub max_in_degree: u64,
    pub average_degree: f64,
    pub self_loops: u64,
    /// Edges that repeat an earlier `(u, v)` pair.
    pub duplicate_edges: u64,
    /// Nodes with no edges in or out.
    pub isolated_nodes: u64,
    /// Every edge `u -> v` has a matching `v -> u` of the same weight.
    pub symmetric: bool,
    /// `"integer"` or `"real"`; `None` when unweighted.
    pub weight_kind: Option<&'static str>,
    pub min_weight: Option<f64>,
    pub max_weight: Option<f64>,
}

impl GraphStats {
    pub fn of(graph: &Graph) -> GraphStats {
        let csr = graph.out();
        let n = csr.num_nodes();
        let in_degree = csr.transpose();
        let (self_loops, duplicate_edges) = (0..n)
            .into_par_iter()
            .map_init(Vec::new, |scratch, u| {
                let neighbors = csr.neighbors(u);
                let loops = neighbors.iter().filter(|&&v| v == u).count() as u64;
                scratch.clear();
                scratch.extend_from_slice(neighbors);
                scratch.sort_unstable();
                let duplicates = scratch.windows(2).filter(|w| w[0] == w[1]).count() as u64;
                (loops, duplicates)
            })
            .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        let isolated_nodes =
            (0..n).into_par_iter().filter(|&u| csr.degree(u) == 0 && in_degree.degree(u) == 0).count() as u64;
        let weights = csr.weights_as_f64().unwrap_or_default();
        GraphStats {
            nodes: n,
            edges: csr.num_edges(),
            weighted: csr.is_weighted(),
            max_out_degree: csr.max_degree().1,
            max_in_degree: in_degree.max_degree().1,
            average_degree: if n == 0 { 0.0 } else { csr.num_edges() as f64 / f64::from(n) },
            self_loops,
            duplicate_edges,
            isolated_nodes,
            symmetric: graph.is_symmetric(),
            weight_kind: csr.weight_kind().map(|k| k.name()),
            min_weight: weights.par_iter().copied().reduce_with(f64::min),
            max_weight: weights.par_iter().copied().reduce_with(f64::max),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{BuildOptions, EdgeList, build};

    #[test]
    fn counts_loops_duplicates_and_isolated_nodes() {
        let edges = EdgeList::from_triples(5, &[(0, 1, 3), (0, 1, 4), (1, 1, 2), (2, 0, 9)]);
        let stats = GraphStats::of(&build(edges, &BuildOptions::AS_GIVEN).unwrap());
        assert_eq!((stats.nodes, stats.edges, stats.self_loops, stats.duplicate_edges), (5, 4, 1, 1));
        assert_eq!((stats.max_out_degree, stats.max_in_degree, stats.isolated_nodes), (2, 3, 2));
        assert_eq!((stats.min_weight, stats.max_weight, stats.symmetric), (Some(2.0), Some(9.0), false));
    }
}
