//! Triangle counting.
//!
//! The count is the number of unordered node triples `{a, b, c}` that are pairwise adjacent in
//! the undirected simple graph underlying the input: edge directions ignored, self-loops
//! dropped, parallel edges counted once.

use super::failure;
use crate::builder::{BuildOptions, EdgeList, build};
use crate::error::Result;
use crate::graph::{Graph, NodeId};

/// The number of triangles: each undirected edge is oriented from the lower to the higher node
/// in (degree, id) order, and each triangle is counted once, at its lowest two nodes, by merging
/// their sorted forward lists. The orientation bounds every forward list by `O(sqrt(m))`, which
/// keeps skewed (power-law) graphs fast.
pub fn triangles(graph: &Graph) -> u64 {
    let mut edges = EdgeList::from_csr(graph.out());
    edges.weights = None;
    let simple = build(edges, &BuildOptions::UNDIRECTED).expect("the edges of a valid graph build");
    let n = simple.num_nodes();
    let below = |u: NodeId, v: NodeId| (simple.out_degree(u), u) < (simple.out_degree(v), v);
    // Forward lists, still sorted by id as the builder left them.
    let mut offsets = Vec::with_capacity(n as usize + 1);
    let mut forward = Vec::with_capacity(simple.num_edges() as usize / 2);
    offsets.push(0usize);
    for u in 0..n {
        forward.extend(simple.neighbors(u).iter().copied().filter(|&v| below(u, v)));
        offsets.push(forward.len());
    }
    drop(simple);
    let list = |u: NodeId| &forward[offsets[u as usize]..offsets[u as usize + 1]];
    let mut count = 0u64;
    for u in 0..n {
        let mine = list(u);
        for &v in mine {
            count += sorted_intersection_len(mine, list(v));
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
