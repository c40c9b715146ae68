//! Weakly connected components.
//!
//! Two nodes are in the same component when a path joins them with edge directions ignored.
//! `label[v]` is the smallest node id in `v`'s component, which makes the labelling unique.

use super::union_find::UnionFind;
use super::{check_length, failure, in_edges};
use crate::error::Result;
use crate::graph::Graph;

/// Component labels: a breadth-first search over out- and in-edges from each node not yet
/// labelled, in increasing id order, so the node a search starts from is its component's
/// smallest.
pub fn connected_components(graph: &Graph) -> Vec<u32> {
    let n = graph.num_nodes();
    let reverse = in_edges(graph);
    let mut labels = vec![u32::MAX; n as usize];
    let mut queue = std::collections::VecDeque::new();
    for start in 0..n {
        if labels[start as usize] != u32::MAX {
            continue;
        }
        labels[start as usize] = start;
        queue.push_back(start);
        while let Some(u) = queue.pop_front() {
            for &v in graph.neighbors(u).iter().chain(reverse.neighbors(u)) {
                if labels[v as usize] == u32::MAX {
                    labels[v as usize] = start;
                    queue.push_back(v);
                }
            }
        }
    }
    labels
}

/// Checks that `labels` are the weakly connected components, each labelled by its smallest
/// node: every edge joins equal labels, and each label is the smallest id of its component as
/// a union-find over the edges (not the search of the reference) computes it.
pub fn verify_components(graph: &Graph, labels: &[u32]) -> Result<()> {
    check_length(graph, labels.len(), "labels")?;
    let n = graph.num_nodes();
    if let Some(v) = labels.iter().position(|&label| label >= n) {
        return Err(failure(format!("node {v} has label {}, which is not a node of the {n}-node graph", labels[v])));
    }
    let mut sets = UnionFind::new(n);
    for u in 0..n {
        for &v in graph.neighbors(u) {
            if labels[u as usize] != labels[v as usize] {
                return Err(failure(format!(
                    "edge {u} -> {v} joins node {u} labelled {} and node {v} labelled {}",
                    labels[u as usize], labels[v as usize]
                )));
            }
            sets.union(u, v);
        }
    }
    // The smallest node of each set, kept at its root; nodes in increasing order set it first.
    let mut smallest = vec![u32::MAX; n as usize];
    for v in 0..n {
        let root = sets.find(v) as usize;
        if smallest[root] == u32::MAX {
            smallest[root] = v;
        }
        if labels[v as usize] != smallest[root] {
            return Err(failure(format!(
                "node {v} has label {}, but the smallest node of its component is {}",
                labels[v as usize], smallest[root]
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{BuildOptions, EdgeList, build};

    #[test]
    fn components_ignore_direction() {
        let g =
            build(EdgeList::from_pairs(7, &[(3, 0), (3, 5), (2, 4), (6, 6), (4, 2)]), &BuildOptions::AS_GIVEN).unwrap();
        let labels = connected_components(&g);
        assert_eq!(labels, vec![0, 1, 2, 0, 2, 0, 6]);
        verify_components(&g, &labels).unwrap();
        let check = |labels: &[u32]| verify_components(&g, labels).unwrap_err().to_string();
        let mut bad = labels.clone();
        bad[5] = 5;
        assert!(check(&bad).contains("edge 3 -> 5"), "{}", check(&bad));
        // A consistent but wrong labelling: component {0, 3, 5} labelled 3.
        bad = vec![3, 1, 2, 3, 2, 3, 6];
        assert!(check(&bad).contains("node 0 has label 3"), "{}", check(&bad));
        // Two components sharing a label.
        bad = vec![0, 0, 2, 0, 2, 0, 6];
        assert!(check(&bad).contains("node 1 has label 0"), "{}", check(&bad));
        bad = labels.clone();
        bad[1] = 70;
        assert!(check(&bad).contains("node 1 has label 70"), "{}", check(&bad));
        assert!(check(&labels[1..]).contains("6 labels"));
    }
}
