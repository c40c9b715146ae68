//! Breadth-first search levels.
//!
//! `level[v]` is the minimum number of edges on a directed path (over out-edges) from `source`
//! to `v`, so `level[source] == 0`, or [`UNREACHED`] when there is no such path.

use std::collections::VecDeque;

use super::{assert_source, check_length, check_source, failure};
use crate::error::Result;
use crate::graph::{Graph, NodeId};

/// The level of a node that the source does not reach.
pub const UNREACHED: u32 = u32::MAX;

/// Hop levels from `source` over out-edges.
///
/// # Panics
/// If `source` is not a node of `graph`.
pub fn bfs(graph: &Graph, source: NodeId) -> Vec<u32> {
    assert_source(graph, source);
    let mut levels = vec![UNREACHED; graph.num_nodes() as usize];
    let mut queue = VecDeque::new();
    levels[source as usize] = 0;
    queue.push_back(source);
    while let Some(u) = queue.pop_front() {
        let next = levels[u as usize] + 1;
        for &v in graph.neighbors(u) {
            if levels[v as usize] == UNREACHED {
                levels[v as usize] = next;
                queue.push_back(v);
            }
        }
    }
    levels
}

/// Checks that `levels` are the BFS levels from `source`, without trusting any reference run.
///
/// The checks: the source has level 0; every edge `u -> v` out of a reached node reaches `v`
/// with `level[v] <= level[u] + 1`; and every other reached node has an in-edge from a node one
/// level lower. The first two give `level <= true distance` (by induction along a shortest
/// path, and every node the source reaches is reached); the last gives a path of exactly
/// `level` edges from the source (levels strictly fall along parents down to the only level 0),
/// so `level >= true distance`.
pub fn verify_bfs(graph: &Graph, source: NodeId, levels: &[u32]) -> Result<()> {
    check_length(graph, levels.len(), "levels")?;
    check_source(graph, source)?;
    if levels[source as usize] != 0 {
        return Err(failure(format!("source {source} has level {} instead of 0", levels[source as usize])));
    }
    // Whether some in-edge of the node comes from a node exactly one level lower.
    let mut has_parent = vec![false; levels.len()];
    for u in 0..graph.num_nodes() {
        let level_u = levels[u as usize];
        if level_u == UNREACHED {
            continue;
        }
        let next = u64::from(level_u) + 1;
        for &v in graph.neighbors(u) {
            let level_v = levels[v as usize];
            if level_v == UNREACHED {
                return Err(failure(format!(
                    "edge {u} -> {v}: node {u} is reached (level {level_u}) but node {v} is marked unreached"
                )));
            }
            if u64::from(level_v) > next {
                return Err(failure(format!(
                    "edge {u} -> {v}: node {v} has level {level_v}, more than one above node {u}'s level {level_u}"
                )));
            }
            if u64::from(level_v) == next {
                has_parent[v as usize] = true;
            }
        }
    }
    for (v, (&level, &justified)) in levels.iter().zip(&has_parent).enumerate() {
        if level == UNREACHED || v == source as usize || justified {
            continue;
        }
        return Err(if level == 0 {
            failure(format!("node {v} has level 0 but is not the source {source}"))
        } else {
            failure(format!("node {v} has level {level} but no in-edge from a node at level {}", level - 1))
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{BuildOptions, EdgeList, build};

    fn graph(n: u32, pairs: &[(u32, u32)]) -> Graph {
        build(EdgeList::from_pairs(n, pairs), &BuildOptions::AS_GIVEN).unwrap()
    }

    #[test]
    fn levels_of_a_small_graph() {
        let g = graph(6, &[(0, 1), (0, 2), (1, 3), (2, 3), (3, 4), (4, 0), (5, 0)]);
        let levels = bfs(&g, 0);
        assert_eq!(levels, vec![0, 1, 1, 2, 3, UNREACHED]);
        verify_bfs(&g, 0, &levels).unwrap();
    }

    #[test]
    fn rejects_wrong_levels() {
        let g = graph(6, &[(0, 1), (0, 2), (1, 3), (2, 3), (3, 4), (4, 0), (5, 0)]);
        let good = bfs(&g, 0);
        let check = |levels: &[u32]| verify_bfs(&g, 0, levels).unwrap_err().to_string();
        let mut levels = good.clone();
        levels[3] = 3;
        assert!(check(&levels).contains("edge 1 -> 3"), "{}", check(&levels));
        levels = good.clone();
        levels[4] = 2;
        assert!(check(&levels).contains("node 4 has level 2 but no in-edge"), "{}", check(&levels));
        levels = good.clone();
        levels[4] = UNREACHED;
        assert!(check(&levels).contains("edge 3 -> 4"), "{}", check(&levels));
        levels = good.clone();
        levels[5] = 0;
        assert!(check(&levels).contains("node 5 has level 0"), "{}", check(&levels));
        levels = good.clone();
        levels[0] = 1;
        assert!(check(&levels).contains("source 0 has level 1"), "{}", check(&levels));
        assert!(check(&good[..5]).contains("5 levels"), "{}", check(&good[..5]));
        assert!(verify_bfs(&g, 6, &good).unwrap_err().to_string().contains("source 6 is out of range"));
        levels = good.clone();
        levels[5] = u32::MAX - 1;
        assert!(check(&levels).contains("node 5"), "{}", check(&levels));
    }
}
