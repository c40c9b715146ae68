//! Single-source shortest path distances.
//!
//! `distance[v]` is the minimum, over directed paths (over out-edges) from `source` to `v`, of
//! the sum of the path's edge weights (`u32` weights summed in `u64`; every edge weighs 1 in an
//! unweighted graph), so `distance[source] == 0`, or [`INFINITE_DISTANCE`] when there is no
//! such path. A path has at most `n - 1 < 2^32` edges of weight below `2^32`, so a real
//! distance never reaches `u64::MAX`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use super::{assert_source, check_length, check_source, failure};
use crate::error::Result;
use crate::graph::{Graph, NodeId};

/// The distance of a node that the source does not reach.
pub const INFINITE_DISTANCE: u64 = u64::MAX;

/// Shortest path distances from `source`: Dijkstra's algorithm with a binary heap.
///
/// # Panics
/// If `source` is not a node of `graph`.
pub fn sssp(graph: &Graph, source: NodeId) -> Vec<u64> {
    assert_source(graph, source);
    let mut distances = vec![INFINITE_DISTANCE; graph.num_nodes() as usize];
    let mut heap = BinaryHeap::new();
    distances[source as usize] = 0;
    heap.push(Reverse((0u64, source)));
    while let Some(Reverse((distance, u))) = heap.pop() {
        if distance > distances[u as usize] {
            continue; // A stale entry: u was settled with a shorter distance.
        }
        for (v, w) in graph.out().weighted_neighbors(u) {
            let through_u = distance + u64::from(w);
            if through_u < distances[v as usize] {
                distances[v as usize] = through_u;
                heap.push(Reverse((through_u, v)));
            }
        }
    }
    distances
}

/// Checks that `distances` are the shortest path distances from `source`, without trusting any
/// reference run.
///
/// The checks: the source is at distance 0; every edge `u -> v` out of a reached node reaches
/// `v` with `distance[v] <= distance[u] + w`; and every reached node is reachable from the
/// source along tight edges (`distance[u] + w == distance[v]`). The first two give
/// `distance <= true distance`; the last gives a real path of length `distance`, so
/// `distance >= true distance`. A search over tight edges, rather than asking each node for
/// one tight in-edge, is what rules out distances propped up by cycles of zero-weight edges; it
/// runs only when some tight edge weighs 0 (otherwise a tight in-edge per node suffices, see
/// below). The edge checks run in parallel.
pub fn verify_sssp(graph: &Graph, source: NodeId, distances: &[u64]) -> Result<()> {
    check_length(graph, distances.len(), "distances")?;
    check_source(graph, source)?;
    if distances[source as usize] != 0 {
        return Err(failure(format!("source {source} has distance {} instead of 0", distances[source as usize])));
    }
    let csr = graph.out();
    // The edge checks, in parallel over nodes: the first failing node's message (lowest id, so
    // the report does not depend on scheduling), each node's tight in-edge, and whether a tight
    // edge weighs 0.
    let has_tight_in_edge: Vec<AtomicBool> = (0..distances.len()).map(|_| AtomicBool::new(false)).collect();
    let zero_weight_tight = AtomicBool::new(false);
    let first_bad = (0..graph.num_nodes()).into_par_iter().find_first(|&u| {
        let distance_u = distances[u as usize];
        if distance_u == INFINITE_DISTANCE {
            return false;
        }
        for (v, w) in csr.weighted_neighbors(u) {
            let distance_v = distances[v as usize];
            // In u128: a garbage distance near u64::MAX must not wrap around.
            let through_u = u128::from(distance_u) + u128::from(w);
            if distance_v == INFINITE_DISTANCE || u128::from(distance_v) > through_u {
                return true;
            }
            if u128::from(distance_v) == through_u {
                has_tight_in_edge[v as usize].store(true, Ordering::Relaxed);
                if w == 0 {
                    zero_weight_tight.store(true, Ordering::Relaxed);
                }
            }
        }
        false
    });
    if let Some(u) = first_bad {
        let distance_u = distances[u as usize];
        for (v, w) in csr.weighted_neighbors(u) {
            let distance_v = distances[v as usize];
            let through_u = u128::from(distance_u) + u128::from(w);
            if distance_v == INFINITE_DISTANCE {
                return Err(failure(format!(
                    "edge {u} -> {v} (weight {w}): node {u} is reached (distance {distance_u}) but node {v} is \
                     marked unreached"
                )));
            }
            if u128::from(distance_v) > through_u {
                return Err(failure(format!(
                    "edge {u} -> {v} (weight {w}): node {v} has distance {distance_v}, more than node {u}'s \
                     distance {distance_u} + {w} = {through_u}"
                )));
            }
        }
    }
    for (v, (&distance, tight)) in distances.iter().zip(&has_tight_in_edge).enumerate() {
        if distance != INFINITE_DISTANCE && v != source as usize && !tight.load(Ordering::Relaxed) {
            return Err(failure(format!(
                "node {v} has distance {distance} but no in-edge u -> {v} with distance[u] + weight == {distance}"
            )));
        }
    }
    // With every tight edge of positive weight, following tight in-edges back from a reached
    // node strictly lowers the distance, so it ends at the source (the one reached node without
    // a tight in-edge): every reached node hangs off the source. Only zero-weight tight edges
    // can form a cycle that props distances up, and only then is the search below needed.
    if !zero_weight_tight.load(Ordering::Relaxed) {
        return Ok(());
    }
    // Every reached node must hang off the source through tight edges.
    let mut found = vec![false; distances.len()];
    let mut stack = vec![source];
    found[source as usize] = true;
    while let Some(u) = stack.pop() {
        for (v, w) in csr.weighted_neighbors(u) {
            if !found[v as usize]
                && u128::from(distances[u as usize]) + u128::from(w) == u128::from(distances[v as usize])
            {
                found[v as usize] = true;
                stack.push(v);
            }
        }
    }
    for (v, (&distance, &found)) in distances.iter().zip(&found).enumerate() {
        if distance != INFINITE_DISTANCE && !found {
            return Err(failure(format!(
                "node {v} has distance {distance}, but no path of edges with distance[u] + weight == distance[v] \
                 leads to it from the source {source} (it is propped up by a cycle of zero-weight edges)"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{BuildOptions, EdgeList, build};

    fn graph(n: u32, triples: &[(u32, u32, u32)]) -> Graph {
        build(EdgeList::from_triples(n, triples), &BuildOptions::AS_GIVEN).unwrap()
    }

    #[test]
    fn distances_of_a_small_graph() {
        let g = graph(5, &[(0, 1, 4), (0, 2, 1), (2, 1, 2), (1, 3, 5), (3, 3, 0), (4, 0, 1)]);
        let distances = sssp(&g, 0);
        assert_eq!(distances, vec![0, 3, 1, 8, INFINITE_DISTANCE]);
        verify_sssp(&g, 0, &distances).unwrap();
    }

    #[test]
    fn unweighted_edges_weigh_one() {
        let g = build(EdgeList::from_pairs(3, &[(0, 1), (1, 2), (0, 2)]), &BuildOptions::AS_GIVEN).unwrap();
        assert_eq!(sssp(&g, 1), vec![INFINITE_DISTANCE, 0, 1]);
        assert_eq!(sssp(&g, 0), vec![0, 1, 1]);
    }

    #[test]
    fn rejects_distances_held_up_by_a_zero_cycle() {
        // 1 and 2 form a zero-weight cycle entered from 0 through a weight-10 edge.
        let g = graph(3, &[(0, 1, 10), (1, 2, 0), (2, 1, 0)]);
        assert_eq!(sssp(&g, 0), vec![0, 10, 10]);
        verify_sssp(&g, 0, &[0, 10, 10]).unwrap();
        let err = verify_sssp(&g, 0, &[0, 5, 5]).unwrap_err().to_string();
        assert!(err.contains("node 1 has distance 5"), "{err}");
    }

    #[test]
    fn zero_weight_edges_justify_distance_zero() {
        let g = graph(3, &[(0, 1, 0), (1, 2, 0)]);
        verify_sssp(&g, 0, &[0, 0, 0]).unwrap();
        let err = verify_sssp(&g, 1, &[0, 0, 0]).unwrap_err().to_string();
        assert!(err.contains("source 1 has distance 0") || err.contains("node 0"), "{err}");
    }

    #[test]
    fn rejects_wrong_distances() {
        let g = graph(5, &[(0, 1, 4), (0, 2, 1), (2, 1, 2), (1, 3, 5), (4, 0, 1)]);
        let good = sssp(&g, 0);
        let check = |d: &[u64]| verify_sssp(&g, 0, d).unwrap_err().to_string();
        let mut d = good.clone();
        d[1] = 4;
        assert!(check(&d).contains("edge 2 -> 1"), "{}", check(&d));
        d = good.clone();
        d[3] = 7;
        assert!(check(&d).contains("node 3 has distance 7"), "{}", check(&d));
        d = good.clone();
        d[4] = 0;
        assert!(check(&d).contains("node 4 has distance 0"), "{}", check(&d));
        d = good.clone();
        d[3] = INFINITE_DISTANCE;
        assert!(check(&d).contains("edge 1 -> 3"), "{}", check(&d));
        d = good.clone();
        d[4] = u64::MAX - 1;
        assert!(check(&d).contains("node 4"), "{}", check(&d));
        assert!(check(&good[..2]).contains("2 distances"));
        assert!(verify_sssp(&g, 9, &good).unwrap_err().to_string().contains("source 9"));
    }
}
