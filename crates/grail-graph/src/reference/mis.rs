//! Maximal independent set.
//!
//! A set of nodes is independent when no edge joins two of its nodes, and maximal when every
//! node outside it has a neighbour inside it, both over the undirected graph underlying the
//! input (edge directions ignored, self-loops ignored). The reference is the greedy set by
//! increasing id: a node joins when no smaller neighbour has joined.

use super::{check_length, failure};
use crate::error::Result;
use crate::graph::Graph;

/// The greedy maximal independent set by increasing id, as one flag per node.
///
/// Node `u` is decided at its turn: it is excluded if an earlier member has an edge to it
/// (recorded as `blocked` when that member joined) or it has an edge to an earlier member, so
/// both directions count without building the in-edges.
pub fn maximal_independent_set(graph: &Graph) -> Vec<bool> {
    let n = graph.num_nodes();
    let mut in_set = vec![false; n as usize];
    let mut blocked = vec![false; n as usize];
    for u in 0..n {
        if blocked[u as usize] || graph.neighbors(u).iter().any(|&v| v < u && in_set[v as usize]) {
            continue;
        }
        in_set[u as usize] = true;
        for &v in graph.neighbors(u) {
            if v != u {
                blocked[v as usize] = true;
            }
        }
    }
    in_set
}

/// Checks that `in_set` is a maximal independent set: no edge (other than a self-loop) joins
/// two members, and every non-member has a member among its neighbours in either direction.
/// Any such set passes, not only the greedy one.
pub fn verify_mis(graph: &Graph, in_set: &[bool]) -> Result<()> {
    check_length(graph, in_set.len(), "flags")?;
    let mut dominated = vec![false; in_set.len()];
    for u in 0..graph.num_nodes() {
        for &v in graph.neighbors(u) {
            if u == v {
                continue;
            }
            if in_set[u as usize] && in_set[v as usize] {
                return Err(failure(format!("edge {u} -> {v} joins two nodes of the set: {u} and {v}")));
            }
            dominated[v as usize] |= in_set[u as usize];
            dominated[u as usize] |= in_set[v as usize];
        }
    }
    if let Some(v) = (0..in_set.len()).find(|&v| !in_set[v] && !dominated[v]) {
        return Err(failure(format!(
            "the set is not maximal: node {v} is not in it and has no neighbour in it, so it could be added"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{BuildOptions, EdgeList, build};

    #[test]
    fn greedy_set_and_its_checks() {
        // A path 0 - 1 - 2 - 3 given with mixed directions, a self-loop on 4, isolated 5.
        let g = build(EdgeList::from_pairs(6, &[(1, 0), (1, 2), (3, 2), (4, 4)]), &BuildOptions::AS_GIVEN).unwrap();
        let set = maximal_independent_set(&g);
        assert_eq!(set, vec![true, false, true, false, true, true]);
        verify_mis(&g, &set).unwrap();
        // Another valid set.
        verify_mis(&g, &[false, true, false, true, true, true]).unwrap();
        verify_mis(&g, &[true, false, false, true, true, true]).unwrap();
        let check = |s: &[bool]| verify_mis(&g, s).unwrap_err().to_string();
        let bad = [true, true, false, true, true, true];
        assert!(check(&bad).contains("edge 1 -> 0"), "{}", check(&bad));
        let bad = [true, false, true, false, false, true];
        assert!(check(&bad).contains("node 4 is not in it"), "{}", check(&bad));
        assert!(check(&set[..3]).contains("3 flags"));
    }
}
