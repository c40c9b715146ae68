//! Single-source shortest path distances.
//!
//! `distance[v]` is the minimum, over directed paths (over out-edges) from `source` to `v`, of
//! the sum of the path's edge weights, so `distance[source] == 0`, or an infinite distance when
//! there is no such path. Integer weights (`u32`, 1 each in an unweighted graph) are summed in
//! `u64` ([`sssp`]): a path has at most `n - 1 < 2^32` edges of weight below `2^32`, so a real
//! distance never reaches [`INFINITE_DISTANCE`]. Real weights (`f32`, non-negative) are summed
//! in `f64` along each path ([`sssp_real`], unreached nodes at `f64::INFINITY`): with
//! non-negative weights, rounding is monotone (`a <= b` gives `a + w <= b + w`), so every
//! label-correcting order finds the same least path sum, and the verifier can ask for equality.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use super::{assert_source, check_length, check_source, failure};
use crate::error::{GraphError, Result};
use crate::graph::{Csr, Graph, NodeId};

/// The distance of a node that the source does not reach.
pub const INFINITE_DISTANCE: u64 = u64::MAX;

/// A distance type: `u64` sums of integer weights, `f64` sums of real ones.
trait Distance: Copy + PartialEq + std::fmt::Display + Send + Sync {
    const INFINITE: Self;
    const ZERO: Self;
    /// An edge weight as this type sums it.
    type Weight: Copy + PartialEq + std::fmt::Display;
    /// Where a distance plus a weight is compared without overflow.
    type Wide: Copy + PartialOrd + std::fmt::Display;
    fn wide(self) -> Self::Wide;
    fn through(self, w: Self::Weight) -> Self::Wide;
    fn narrow(wide: Self::Wide) -> Self;
    fn is_zero(w: Self::Weight) -> bool;
    /// A key that orders distances as `u64`s do (for the heap).
    fn key(self) -> u64;
    fn from_key(key: u64) -> Self;
    fn edges(csr: &Csr, u: NodeId) -> impl Iterator<Item = (NodeId, Self::Weight)> + '_;
}

impl Distance for u64 {
    const INFINITE: u64 = INFINITE_DISTANCE;
    const ZERO: u64 = 0;
    type Weight = u32;
    type Wide = u128;
    fn wide(self) -> u128 {
        u128::from(self)
    }
    fn through(self, w: u32) -> u128 {
        u128::from(self) + u128::from(w)
    }
    fn narrow(wide: u128) -> u64 {
        wide as u64
    }
    fn is_zero(w: u32) -> bool {
        w == 0
    }
    fn key(self) -> u64 {
        self
    }
    fn from_key(key: u64) -> u64 {
        key
    }
    fn edges(csr: &Csr, u: NodeId) -> impl Iterator<Item = (NodeId, u32)> + '_ {
        csr.weighted_neighbors(u)
    }
}

impl Distance for f64 {
    const INFINITE: f64 = f64::INFINITY;
    const ZERO: f64 = 0.0;
    type Weight = f64;
    type Wide = f64;
    fn wide(self) -> f64 {
        self
    }
    fn through(self, w: f64) -> f64 {
        self + w
    }
    fn narrow(wide: f64) -> f64 {
        wide
    }
    fn is_zero(w: f64) -> bool {
        w == 0.0
    }
    // Non-negative doubles order as their bits do.
    fn key(self) -> u64 {
        self.to_bits()
    }
    fn from_key(key: u64) -> f64 {
        f64::from_bits(key)
    }
    fn edges(csr: &Csr, u: NodeId) -> impl Iterator<Item = (NodeId, f64)> + '_ {
        csr.real_weighted_neighbors(u)
    }
}

/// Shortest path distances from `source` over integer weights: Dijkstra's algorithm with a
/// binary heap.
///
/// # Panics
/// If `source` is not a node of `graph`, or the graph's weights are real (use [`sssp_real`]).
pub fn sssp(graph: &Graph, source: NodeId) -> Vec<u64> {
    dijkstra(graph, source)
}

/// Shortest path distances from `source`, summing each weight (real, integer, or 1 when
/// unweighted) as `f64`; `f64::INFINITY` where there is no path.
///
/// # Panics
/// If `source` is not a node of `graph`, or a weight is negative (see [`check_real_weights`]).
pub fn sssp_real(graph: &Graph, source: NodeId) -> Vec<f64> {
    if let Err(e) = check_real_weights(graph) {
        panic!("{e}");
    }
    dijkstra(graph, source)
}

/// Checks that every real weight is non-negative, as shortest paths need.
pub fn check_real_weights(graph: &Graph) -> Result<()> {
    let Some(weights) = graph.out().real_weights() else { return Ok(()) };
    match weights.par_iter().position_first(|&w| w < 0.0) {
        None => Ok(()),
        Some(e) => {
            let sources = graph.out().edge_sources();
            Err(GraphError::invalid(format!(
                "shortest paths need non-negative weights, and edge {e} ({} -> {}) weighs {}",
                sources[e],
                graph.out().targets()[e],
                weights[e]
            )))
        }
    }
}

fn dijkstra<D: Distance>(graph: &Graph, source: NodeId) -> Vec<D> {
    assert_source(graph, source);
    let mut distances = vec![D::INFINITE; graph.num_nodes() as usize];
    let mut heap = BinaryHeap::new();
    distances[source as usize] = D::ZERO;
    heap.push(Reverse((D::ZERO.key(), source)));
    while let Some(Reverse((key, u))) = heap.pop() {
        if key > distances[u as usize].key() {
            continue; // A stale entry: u was settled with a shorter distance.
        }
        let distance = D::from_key(key);
        for (v, w) in D::edges(graph.out(), u) {
            let through_u = D::narrow(distance.through(w));
            if through_u.key() < distances[v as usize].key() {
                distances[v as usize] = through_u;
                heap.push(Reverse((through_u.key(), v)));
            }
        }
    }
    distances
}

/// Repairs `distances` (shortest path distances over integer weights before `inserted` was
/// added to `graph`; `graph` holds the inserted edges now) into the distances of the graph as it
/// is: the sequential reference of incremental SSSP. Insertions only lower distances, so
/// Dijkstra's algorithm restarted from the heads of the inserted edges that offer a shorter path
/// visits only the nodes whose distance falls. Returns how many nodes' distances fell.
///
/// # Panics
/// If `distances` does not have one entry per node, or an inserted edge names a node the graph
/// does not have.
pub fn repair_sssp(graph: &Graph, distances: &mut [u64], inserted: &[crate::insert::Insertion]) -> usize {
    assert_eq!(distances.len(), graph.num_nodes() as usize, "one distance per node");
    let mut lowered = vec![false; distances.len()];
    let mut heap = BinaryHeap::new();
    let mut lower = |v: NodeId, d: u64, distances: &mut [u64], heap: &mut BinaryHeap<Reverse<(u64, NodeId)>>| {
        if d < distances[v as usize] {
            distances[v as usize] = d;
            lowered[v as usize] = true;
            heap.push(Reverse((d, v)));
        }
    };
    for &(u, v, w) in inserted {
        let du = distances[u as usize];
        if du != INFINITE_DISTANCE {
            lower(v, du + u64::from(w), distances, &mut heap);
        }
    }
    while let Some(Reverse((d, u))) = heap.pop() {
        if d > distances[u as usize] {
            continue; // Stale.
        }
        for (v, w) in graph.out().weighted_neighbors(u) {
            lower(v, d + u64::from(w), distances, &mut heap);
        }
    }
    lowered.iter().filter(|&&l| l).count()
}

/// Checks that `distances` are the shortest path distances from `source` over integer weights,
/// without trusting any reference run.
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
    verify_distances(graph, source, distances)
}

/// [`verify_sssp`] for the `f64` distances of [`sssp_real`] (the same checks, with each sum
/// rounded as the algorithms round it).
pub fn verify_sssp_real(graph: &Graph, source: NodeId, distances: &[f64]) -> Result<()> {
    if let Some(v) = distances.iter().position(|d| d.is_nan() || *d < 0.0) {
        return Err(failure(format!("node {v} has distance {}, which no path has", distances[v])));
    }
    verify_distances(graph, source, distances)
}

fn verify_distances<D: Distance>(graph: &Graph, source: NodeId, distances: &[D]) -> Result<()> {
    check_length(graph, distances.len(), "distances")?;
    check_source(graph, source)?;
    if distances[source as usize] != D::ZERO {
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
        if distance_u == D::INFINITE {
            return false;
        }
        for (v, w) in D::edges(csr, u) {
            let distance_v = distances[v as usize];
            // Wide: a garbage distance near the top must not wrap around.
            let through_u = distance_u.through(w);
            if distance_v == D::INFINITE || distance_v.wide() > through_u {
                return true;
            }
            if distance_v.wide() == through_u {
                has_tight_in_edge[v as usize].store(true, Ordering::Relaxed);
                if D::is_zero(w) {
                    zero_weight_tight.store(true, Ordering::Relaxed);
                }
            }
        }
        false
    });
    if let Some(u) = first_bad {
        let distance_u = distances[u as usize];
        for (v, w) in D::edges(csr, u) {
            let distance_v = distances[v as usize];
            let through_u = distance_u.through(w);
            if distance_v == D::INFINITE {
                return Err(failure(format!(
                    "edge {u} -> {v} (weight {w}): node {u} is reached (distance {distance_u}) but node {v} is \
                     marked unreached"
                )));
            }
            if distance_v.wide() > through_u {
                return Err(failure(format!(
                    "edge {u} -> {v} (weight {w}): node {v} has distance {distance_v}, more than node {u}'s \
                     distance {distance_u} + {w} = {through_u}"
                )));
            }
        }
    }
    for (v, (&distance, tight)) in distances.iter().zip(&has_tight_in_edge).enumerate() {
        if distance != D::INFINITE && v != source as usize && !tight.load(Ordering::Relaxed) {
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
        for (v, w) in D::edges(csr, u) {
            if !found[v as usize] && distances[u as usize].through(w) == distances[v as usize].wide() {
                found[v as usize] = true;
                stack.push(v);
            }
        }
    }
    for (v, (&distance, &found)) in distances.iter().zip(&found).enumerate() {
        if distance != D::INFINITE && !found {
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
    fn real_weights() {
        let edges = EdgeList::from_real_triples(4, &[(0, 1, 0.5), (0, 2, 0.1), (2, 1, 0.2), (1, 3, 1.25)]).unwrap();
        let g = build(edges, &BuildOptions::AS_GIVEN).unwrap();
        let d = sssp_real(&g, 0);
        let via_2 = f64::from(0.1f32) + f64::from(0.2f32);
        assert_eq!(d, vec![0.0, via_2, f64::from(0.1f32), via_2 + 1.25]);
        verify_sssp_real(&g, 0, &d).unwrap();
        let mut wrong = d.clone();
        wrong[1] = 0.5;
        assert!(verify_sssp_real(&g, 0, &wrong).unwrap_err().to_string().contains("edge 2 -> 1"));
        wrong[1] = f64::NAN;
        assert!(verify_sssp_real(&g, 0, &wrong).is_err());
        let negative = EdgeList::from_real_triples(2, &[(0, 1, -0.5)]).unwrap();
        let g = build(negative, &BuildOptions::AS_GIVEN).unwrap();
        assert!(check_real_weights(&g).unwrap_err().to_string().contains("weighs -0.5"));
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
