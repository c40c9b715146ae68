//! PageRank.
//!
//! The ranks are the stationary distribution of a random surfer on the directed graph who, at
//! each step, with probability `damping` follows one of the current node's out-edges chosen
//! uniformly (a node with `k` edges to the same node sends `k` shares there), or jumps to a
//! node chosen uniformly otherwise; a node without out-edges (dangling) always jumps uniformly.
//! In symbols, with `n` nodes and `d = damping`:
//!
//! `rank[v] = (1 - d) / n + d * (sum over edges u -> v of rank[u] / outdeg(u)
//!            + sum over dangling u of rank[u] / n)`,
//!
//! so the ranks are non-negative and sum to 1. The reference computes them by power iteration
//! from the uniform distribution.

use super::{check_length, failure};
use crate::error::Result;
use crate::graph::Graph;

/// The largest L1 distance to the reference ranks that [`verify_pagerank`] accepts; also how far
/// from 1 the ranks may sum.
pub const PAGERANK_L1_TOLERANCE: f64 = 1e-4;

/// How the power iteration runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PageRankOptions {
    /// The probability of following an edge rather than jumping.
    pub damping: f64,
    /// Stop once an iteration changes the ranks by less than this, in L1 norm.
    pub tolerance: f64,
    /// Stop after this many iterations even if the ranks still change.
    pub max_iterations: u32,
}

impl Default for PageRankOptions {
    fn default() -> Self {
        PageRankOptions { damping: 0.85, tolerance: 1e-9, max_iterations: 1000 }
    }
}

/// The ranks, and how many iterations produced them.
#[derive(Debug, Clone, PartialEq)]
pub struct PageRank {
    pub ranks: Vec<f64>,
    pub iterations: u32,
}

/// PageRank by power iteration: each iteration pushes every node's rank along its out-edges.
///
/// Each iteration shrinks the L1 error by a factor `damping`, so the result is within about
/// `tolerance * damping / (1 - damping)` of the exact ranks once it stops on `tolerance`.
pub fn pagerank(graph: &Graph, options: &PageRankOptions) -> PageRank {
    let n = graph.num_nodes() as usize;
    if n == 0 {
        return PageRank { ranks: Vec::new(), iterations: 0 };
    }
    let d = options.damping;
    let mut ranks = vec![1.0 / n as f64; n];
    let mut next = vec![0.0; n];
    let mut iterations = 0;
    while iterations < options.max_iterations {
        let dangling: f64 =
            (0..graph.num_nodes()).filter(|&u| graph.out_degree(u) == 0).map(|u| ranks[u as usize]).sum();
        next.fill((1.0 - d) / n as f64 + d * dangling / n as f64);
        for u in 0..graph.num_nodes() {
            let neighbors = graph.neighbors(u);
            if !neighbors.is_empty() {
                let share = d * ranks[u as usize] / neighbors.len() as f64;
                for &v in neighbors {
                    next[v as usize] += share;
                }
            }
        }
        let change: f64 = ranks.iter().zip(&next).map(|(a, b)| (a - b).abs()).sum();
        std::mem::swap(&mut ranks, &mut next);
        iterations += 1;
        if change < options.tolerance {
            break;
        }
    }
    PageRank { ranks, iterations }
}

/// Checks that `ranks` are PageRank with the default damping: every rank finite and
/// non-negative, the ranks summing to 1 and lying within [`PAGERANK_L1_TOLERANCE`] (L1 norm)
/// of a reference run.
pub fn verify_pagerank(graph: &Graph, ranks: &[f64]) -> Result<()> {
    check_length(graph, ranks.len(), "ranks")?;
    if let Some(v) = ranks.iter().position(|r| !r.is_finite() || *r < 0.0) {
        return Err(failure(format!("node {v} has rank {}, which is not a finite non-negative number", ranks[v])));
    }
    let sum: f64 = ranks.iter().sum();
    if !ranks.is_empty() && (sum - 1.0).abs() >= PAGERANK_L1_TOLERANCE {
        return Err(failure(format!("the ranks sum to {sum} instead of 1")));
    }
    let reference = pagerank(graph, &PageRankOptions::default()).ranks;
    let l1: f64 = ranks.iter().zip(&reference).map(|(a, b)| (a - b).abs()).sum();
    if l1 >= PAGERANK_L1_TOLERANCE {
        // Name the node that differs the most (the first of those, on ties).
        let mut worst = 0;
        for v in 0..ranks.len() {
            if (ranks[v] - reference[v]).abs() > (ranks[worst] - reference[worst]).abs() {
                worst = v;
            }
        }
        return Err(failure(format!(
            "the ranks are {l1:e} away from the reference in L1 norm (limit {PAGERANK_L1_TOLERANCE:e}); the largest \
             difference is at node {worst}: rank {} where the reference has {}",
            ranks[worst], reference[worst]
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{BuildOptions, EdgeList, build};

    #[test]
    fn symmetric_cycle_is_uniform() {
        let g = build(EdgeList::from_pairs(4, &[(0, 1), (1, 2), (2, 3), (3, 0)]), &BuildOptions::AS_GIVEN).unwrap();
        let result = pagerank(&g, &PageRankOptions::default());
        for r in &result.ranks {
            assert!((r - 0.25).abs() < 1e-12);
        }
        verify_pagerank(&g, &result.ranks).unwrap();
    }

    #[test]
    fn two_nodes_one_edge() {
        // 0 -> 1, and 1 dangling: r1 = 0.15/2 + 0.85 * (r0 + r1 / 2), r0 = 0.15/2 + 0.85 * r1 / 2.
        let g = build(EdgeList::from_pairs(2, &[(0, 1)]), &BuildOptions::AS_GIVEN).unwrap();
        let ranks = pagerank(&g, &PageRankOptions::default()).ranks;
        // With r0 + r1 = 1: 1.425 * r0 = 0.5.
        let r0 = 0.5 / 1.425;
        assert!((ranks[0] - r0).abs() < 1e-9, "{ranks:?}");
        assert!((ranks[1] - (1.0 - r0)).abs() < 1e-9, "{ranks:?}");
    }

    #[test]
    fn rejects_wrong_ranks() {
        let g = build(EdgeList::from_pairs(3, &[(0, 1), (1, 2), (2, 0), (0, 2)]), &BuildOptions::AS_GIVEN).unwrap();
        let good = pagerank(&g, &PageRankOptions::default()).ranks;
        let check = |r: &[f64]| verify_pagerank(&g, r).unwrap_err().to_string();
        let mut r = good.clone();
        r[1] = f64::NAN;
        assert!(check(&r).contains("node 1 has rank NaN"), "{}", check(&r));
        r = good.clone();
        r[2] += 0.01;
        assert!(check(&r).contains("sum to"), "{}", check(&r));
        r = good.clone();
        r[0] -= 0.03;
        r[1] += 0.01;
        r[2] += 0.02;
        assert!(check(&r).contains("node 0"), "{}", check(&r));
        assert!(check(&good[..2]).contains("2 ranks"));
    }
}
