//! The undirected simple graph underlying a graph, made straight from its CSR.
//!
//! Node `u`'s neighbours are the union of its out- and in-neighbours, less `u` itself, sorted and
//! without repeats. The in-neighbours come from the transpose (or the reverse CSR the graph
//! holds), which lists them sorted by source; each node then merges two sorted lists, in
//! parallel, counting first and writing second. No edge list is materialized, and nothing is
//! done at all for a graph already known (or found) to be undirected and simple.

use std::borrow::Cow;

use rayon::prelude::*;

use crate::builder::sort_adjacencies;
use crate::facts::{Facts, scan};
use crate::graph::{Csr, Graph, NodeId};
use crate::par::{node_groups, split_by_bounds};

/// The undirected simple graph underlying `graph`: symmetric, sorted, without self-loops or
/// parallel edges, unweighted. Borrows `graph` when its edges already are all that (its weights,
/// if any, then stay); a structure of unknown symmetry costs one transpose to decide.
pub fn undirected_simple(graph: &Graph) -> Cow<'_, Graph> {
    let out = graph.out();
    let mut facts = graph.facts();
    if !facts.is_simple_sorted() {
        facts = facts.union(scan(out));
    }
    if facts.is_undirected_simple() {
        return Cow::Borrowed(graph);
    }
    let sorted_copy;
    let sorted = if facts.sorted {
        out
    } else {
        sorted_copy = sort_adjacencies(Csr::from_parts_unchecked(out.offsets().to_vec(), out.targets().to_vec(), None));
        &sorted_copy
    };
    if facts.symmetric {
        // Every in-neighbour is an out-neighbour: cleaning each list is enough.
        return Cow::Owned(Graph::with_facts(merge(sorted, None), Facts::UNDIRECTED_SIMPLE));
    }
    let transpose_copy;
    let transpose = match graph.reverse() {
        Some(reverse) => reverse,
        None => {
            transpose_copy = out.transpose_structure();
            &transpose_copy
        }
    };
    if facts.is_simple_sorted() && out.offsets() == transpose.offsets() && out.targets() == transpose.targets() {
        return Cow::Borrowed(graph);
    }
    Cow::Owned(Graph::with_facts(merge(sorted, Some(transpose)), Facts::UNDIRECTED_SIMPLE))
}

/// Per node, the sorted union of its lists in `a` and `b` (each sorted), repeats and the node
/// itself left out.
fn merge(a: &Csr, b: Option<&Csr>) -> Csr {
    let n = a.num_nodes() as usize;
    let list_b = |u: usize| b.map_or(&[][..], |b| b.neighbors(u as NodeId));
    // Balance the groups by the work of both lists.
    let work: Vec<u64> = match b {
        Some(b) => a.offsets().par_iter().zip(b.offsets()).map(|(x, y)| x + y).collect(),
        None => a.offsets().to_vec(),
    };
    let bounds = node_groups(&work);
    drop(work);
    let mut degrees = vec![0u64; n];
    split_by_bounds(&mut degrees, &bounds).into_par_iter().enumerate().for_each(|(g, degrees)| {
        for (slot, u) in degrees.iter_mut().zip(bounds[g]..bounds[g + 1]) {
            let mut count = 0u64;
            union_into(u as NodeId, a.neighbors(u as NodeId), list_b(u), |_| count += 1);
            *slot = count;
        }
    });
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0u64);
    let mut sum = 0u64;
    for d in degrees {
        sum += d;
        offsets.push(sum);
    }
    let mut targets = vec![0 as NodeId; sum as usize];
    let edge_bounds: Vec<usize> = bounds.iter().map(|&u| offsets[u] as usize).collect();
    split_by_bounds(&mut targets, &edge_bounds).into_par_iter().enumerate().for_each(|(g, piece)| {
        let mut at = 0;
        for u in bounds[g]..bounds[g + 1] {
            union_into(u as NodeId, a.neighbors(u as NodeId), list_b(u), |v| {
                piece[at] = v;
                at += 1;
            });
        }
    });
    Csr::from_parts_unchecked(offsets, targets, None)
}

/// Calls `emit` with every value of the sorted lists `a` and `b`, in order, once each, except
/// `skip`.
#[inline]
fn union_into(skip: NodeId, a: &[NodeId], b: &[NodeId], mut emit: impl FnMut(NodeId)) {
    let (mut i, mut j) = (0, 0);
    let mut last = None;
    while i < a.len() || j < b.len() {
        let v = if j == b.len() || (i < a.len() && a[i] <= b[j]) {
            i += 1;
            a[i - 1]
        } else {
            j += 1;
            b[j - 1]
        };
        if v != skip && last != Some(v) {
            emit(v);
            last = Some(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{BuildOptions, EdgeList, build, build_csr};

    fn random_edges(n: u32, m: usize, seed: u64) -> Vec<(u32, u32, u32)> {
        let mut state = seed;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) as u32
        };
        (0..m).map(|_| (next() % n, next() % n, next() % 9)).collect()
    }

    #[test]
    fn agrees_with_the_edge_list_build() {
        for (i, &(n, m)) in [(1, 0), (1, 3), (4, 10), (50, 400), (3000, 40_000)].iter().enumerate() {
            let triples = random_edges(n, m, i as u64 + 7);
            let expected = build_csr(EdgeList::from_triples(n, &triples), &BuildOptions::UNDIRECTED).unwrap();
            let expected = expected.without_weights();
            for options in [BuildOptions::AS_GIVEN, BuildOptions::SIMPLE, BuildOptions::UNDIRECTED] {
                let graph = build(EdgeList::from_triples(n, &triples), &options).unwrap();
                // Also with what the builder knows forgotten, and with the reverse CSR held.
                let forgotten = Graph::from_csr(graph.out().clone());
                let mut with_reverse = forgotten.clone();
                with_reverse.build_reverse();
                for input in [&graph, &forgotten, &with_reverse] {
                    let simple = undirected_simple(input);
                    assert_eq!(simple.out().offsets(), expected.offsets(), "{options:?}");
                    assert_eq!(simple.out().targets(), expected.targets(), "{options:?}");
                    assert!(
                        simple.facts().is_undirected_simple() || crate::facts::scan(simple.out()).is_simple_sorted()
                    );
                    let already =
                        input.out().offsets() == expected.offsets() && input.out().targets() == expected.targets();
                    assert_eq!(matches!(simple, Cow::Borrowed(_)), already, "{options:?}");
                }
            }
        }
    }

    #[test]
    fn symmetric_but_unclean_lists_are_cleaned() {
        // Symmetric with a self-loop, parallel edges and unsorted lists.
        let pairs = [(0, 2), (0, 1), (1, 0), (2, 0), (1, 1), (0, 1), (1, 0)];
        let mut graph = build(EdgeList::from_pairs(3, &pairs), &BuildOptions::AS_GIVEN).unwrap();
        assert!(graph.learn_symmetry());
        let simple = undirected_simple(&graph);
        assert_eq!(simple.out().targets(), [1, 2, 0, 0]);
    }
}
