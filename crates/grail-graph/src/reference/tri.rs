//! Triangle counting.
//!
//! The count is the number of unordered node triples `{a, b, c}` that are pairwise adjacent in
//! the undirected simple graph underlying the input: edge directions ignored, self-loops
//! dropped, parallel edges counted once.

use super::failure;
use crate::builder::{BuildOptions, EdgeList, build};
use crate::error::Result;
use crate::graph::{Graph, NodeId};

/// The number of triangles. Nodes are renumbered by increasing (degree, id), and each
/// undirected edge is kept only from its lower to its higher end in that order, so every
/// triangle `a < b < c` is counted exactly once: at edge `(a, b)`, as the common element `c` of
/// the sorted forward lists of `a` (past `b`) and `b`. The ordering bounds every forward list by
/// `O(sqrt(m))`, which keeps skewed (power-law) graphs fast.
pub fn triangles(graph: &Graph) -> u64 {
    let mut edges = EdgeList::from_csr(graph.out());
    edges.weights = None;
    let simple = build(edges, &BuildOptions::UNDIRECTED).expect("the edges of a valid graph build");
    let n = simple.num_nodes();
    let mut by_degree: Vec<NodeId> = (0..n).collect();
    by_degree.sort_unstable_by_key(|&u| (simple.out_degree(u), u));
    let mut rank = vec![0 as NodeId; n as usize];
    for (r, &u) in by_degree.iter().enumerate() {
        rank[u as usize] = r as NodeId;
    }
    // Forward lists in rank numbering, each sorted.
    let mut offsets = Vec::with_capacity(n as usize + 1);
    let mut forward = Vec::with_capacity(simple.num_edges() as usize / 2);
    offsets.push(0usize);
    for &u in &by_degree {
        let start = forward.len();
        let ru = rank[u as usize];
        forward.extend(simple.neighbors(u).iter().map(|&v| rank[v as usize]).filter(|&rv| rv > ru));
        forward[start..].sort_unstable();
        offsets.push(forward.len());
    }
    drop(simple);
    let list = |r: NodeId| &forward[offsets[r as usize]..offsets[r as usize + 1]];
    let mut count = 0u64;
    for a in 0..n {
        let mine = list(a);
        for (i, &b) in mine.iter().enumerate() {
            count += sorted_intersection_len(&mine[i + 1..], list(b));
        }
    }
    count
}

/// The number of values two sorted, duplicate-free slices share.
fn sorted_intersection_len(a: &[NodeId], b: &[NodeId]) -> u64 {
    let (mut i, mut j, mut shared) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                shared += 1;
                i += 1;
                j += 1;
            }
        }
    }
    shared
}

/// Checks a triangle count against [`triangles`]. The reference is itself tested against
/// independent algorithms (enumerating all triples, and intersecting adjacency bitsets), so the
/// count a backend computes is compared with an answer that does not share its method.
pub fn verify_triangles(graph: &Graph, count: u64) -> Result<()> {
    let expected = triangles(graph);
    if count == expected {
        Ok(())
    } else {
        Err(failure(format!("triangle count {count} differs from the reference count {expected}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_triangles_of_the_underlying_simple_graph() {
        // A 4-clique (4 triangles) given with mixed directions, duplicates and a self-loop,
        // plus a pendant node and an isolated one.
        let pairs = [(0, 1), (1, 0), (2, 0), (0, 3), (1, 2), (3, 1), (2, 3), (3, 2), (3, 3), (3, 4)];
        let g = build(EdgeList::from_pairs(6, &pairs), &BuildOptions::AS_GIVEN).unwrap();
        assert_eq!(triangles(&g), 4);
        verify_triangles(&g, 4).unwrap();
        let err = verify_triangles(&g, 5).unwrap_err().to_string();
        assert!(err.contains("triangle count 5") && err.contains("reference count 4"), "{err}");
        let empty = build(EdgeList::new(0, false), &BuildOptions::AS_GIVEN).unwrap();
        assert_eq!(triangles(&empty), 0);
    }
}
