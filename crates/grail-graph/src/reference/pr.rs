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

/// The largest L1 norm of one exact PageRank step's change, `|T(r) - r|_1`, that
/// [`verify_pagerank`] accepts: GAP's target error, and the suite's default stopping tolerance.
/// `T` contracts L1 distances by the damping `d` (its linear part is column-stochastic), so
/// ranks that pass are within `PAGERANK_L1_TOLERANCE / (1 - d)` (6.7e-4 with `d` = 0.85) of the
/// exact ranks in L1 norm.
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
        // GAP's: stop at an L1 change below 1e-4 (its `-t`), without its cap of 20 iterations,
        // so that the result always passes `verify_pagerank`.
        PageRankOptions { damping: 0.85, tolerance: PAGERANK_L1_TOLERANCE, max_iterations: 1000 }
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
/// `tolerance * damping / (1 - damping)` of the exact ranks once it stops on `tolerance`, and
/// one more iteration would change it by less than `tolerance * damping`.
pub fn pagerank(graph: &Graph, options: &PageRankOptions) -> PageRank {
    pagerank_with_changes(graph, options).0
}

/// [`pagerank`], and the L1 change of the ranks at each iteration (its convergence).
pub fn pagerank_with_changes(graph: &Graph, options: &PageRankOptions) -> (PageRank, Vec<f64>) {
    let n = graph.num_nodes() as usize;
    if n == 0 {
        return (PageRank { ranks: Vec::new(), iterations: 0 }, Vec::new());
    }
    let mut changes = Vec::new();
    let d = options.damping;
    let mut ranks = vec![1.0 / n as f64; n];
    let mut next = vec![0.0; n];
    let mut iterations = 0;
    while iterations < options.max_iterations {
        power_step(graph, &ranks, d, &mut next);
        let change: f64 = ranks.iter().zip(&next).map(|(a, b)| (a - b).abs()).sum();
        changes.push(change);
        std::mem::swap(&mut ranks, &mut next);
        iterations += 1;
        if change < options.tolerance {
            break;
        }
    }
    (PageRank { ranks, iterations }, changes)
}

/// Checks that `ranks` are PageRank with the default damping, up to [`PAGERANK_L1_TOLERANCE`]
/// as GAP's verifier checks it: every rank finite and non-negative, and `ranks` a fixed point
/// within the tolerance, that is one exact step `T` of the power iteration (computed here in
/// f64) changes them by less than the tolerance in L1 norm. That bounds the distance to the
/// exact ranks by `PAGERANK_L1_TOLERANCE / (1 - d)`, and the sum's distance to 1 alike (checked
/// first, for a clearer message: `sum(T(r)) - sum(r) = (1 - d) (1 - sum(r))`). Runs in linear
/// time, without a reference run.
pub fn verify_pagerank(graph: &Graph, ranks: &[f64]) -> Result<()> {
    check_length(graph, ranks.len(), "ranks")?;
    if let Some(v) = ranks.iter().position(|r| !r.is_finite() || *r < 0.0) {
        return Err(failure(format!("node {v} has rank {}, which is not a finite non-negative number", ranks[v])));
    }
    if ranks.is_empty() {
        return Ok(());
    }
    let d = PageRankOptions::default().damping;
    let sum: f64 = ranks.iter().sum();
    if (sum - 1.0).abs() >= PAGERANK_L1_TOLERANCE / (1.0 - d) {
        return Err(failure(format!("the ranks sum to {sum} instead of 1")));
    }
    let mut step = vec![0.0; ranks.len()];
    power_step(graph, ranks, d, &mut step);
    let change: f64 = ranks.iter().zip(&step).map(|(a, b)| (a - b).abs()).sum();
    if change >= PAGERANK_L1_TOLERANCE {
        // Name the node that changes the most (the first of those, on ties).
        let mut worst = 0;
        for v in 0..ranks.len() {
            if (ranks[v] - step[v]).abs() > (ranks[worst] - step[worst]).abs() {
                worst = v;
            }
        }
        return Err(failure(format!(
            "the ranks are not PageRank's fixed point: one exact step changes them by {change:e} in L1 norm (limit \
             {PAGERANK_L1_TOLERANCE:e}); the largest change is at node {worst}: rank {} where the step gives {}",
            ranks[worst], step[worst]
        )));
    }
    Ok(())
}

/// One iteration of the power iteration from `ranks` (which need not sum to 1), into `next`:
/// `T(ranks)`.
fn power_step(graph: &Graph, ranks: &[f64], d: f64, next: &mut [f64]) {
    let n = ranks.len() as f64;
    let dangling: f64 = (0..graph.num_nodes()).filter(|&u| graph.out_degree(u) == 0).map(|u| ranks[u as usize]).sum();
    next.fill((1.0 - d) / n + d * dangling / n);
    for u in 0..graph.num_nodes() {
        let neighbors = graph.neighbors(u);
        if !neighbors.is_empty() {
            let share = d * ranks[u as usize] / neighbors.len() as f64;
            for &v in neighbors {
                next[v as usize] += share;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{BuildOptions, EdgeList, build};

    /// Far past convergence, for checks against exact values.
    const PRECISE: PageRankOptions = PageRankOptions { damping: 0.85, tolerance: 1e-14, max_iterations: 10_000 };

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
        let ranks = pagerank(&g, &PRECISE).ranks;
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

    #[test]
    fn accepts_what_stops_on_the_tolerance_and_nothing_farther_than_the_bound() {
        // A small graph with a dangling node (3), a self-loop and a parallel edge.
        let pairs = [(0, 1), (1, 2), (2, 0), (0, 2), (2, 2), (1, 3), (4, 0), (4, 0), (0, 4)];
        let g = build(EdgeList::from_pairs(5, &pairs), &BuildOptions::AS_GIVEN).unwrap();
        let exact = pagerank(&g, &PRECISE).ranks;
        let default = pagerank(&g, &PageRankOptions::default());
        verify_pagerank(&g, &default.ranks).unwrap();
        // Fewer rounds than the default run needs are not a fixed point within the tolerance.
        let early = PageRankOptions { max_iterations: default.iterations - 3, ..PageRankOptions::default() };
        let message = verify_pagerank(&g, &pagerank(&g, &early).ranks).unwrap_err().to_string();
        assert!(message.contains("not PageRank's fixed point"), "{message}");
        // Whatever passes lies within the tolerance / (1 - d) of the exact ranks: walk from the
        // exact ranks towards a wrong vector and check every accepted point on the way.
        let wrong = [0.5, 0.1, 0.1, 0.1, 0.2];
        for step in 0..=1000 {
            let t = f64::from(step) / 1000.0;
            let r: Vec<f64> = exact.iter().zip(&wrong).map(|(a, b)| a + t * (b - a)).collect();
            if verify_pagerank(&g, &r).is_ok() {
                let l1: f64 = r.iter().zip(&exact).map(|(a, b)| (a - b).abs()).sum();
                assert!(l1 < PAGERANK_L1_TOLERANCE / 0.15, "accepted ranks {l1} away from the exact ones");
            }
        }
    }
}
