//! Minimum spanning forest.
//!
//! Over the undirected graph underlying the input (edge directions ignored, self-loops
//! ignored, of parallel edges only the lightest counting; every edge weighs 1 in an unweighted
//! graph), a spanning forest is a set of edges without a cycle that connects every pair of
//! nodes the graph connects: one spanning tree per component, `n - components` edges in all.
//! A minimum one has the least total weight. Several forests may be minimum; their weight is
//! the same.

use super::failure;
use super::union_find::UnionFind;
use crate::error::Result;
use crate::graph::{Graph, NodeId, Weight};

/// A spanning forest as undirected edges `(u, v, weight)`, and its total weight.
///
/// Over a graph with real weights, each edge's weight is the `f32`'s bits, `weight` is 0 and
/// `real_weight` the total (summed in `f64`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpanningForest {
    pub edges: Vec<(NodeId, NodeId, Weight)>,
    pub weight: u64,
    pub real_weight: Option<f64>,
}

impl SpanningForest {
    /// The total weight as a number, whatever the weights' kind.
    pub fn total(&self) -> f64 {
        self.real_weight.unwrap_or(self.weight as f64)
    }

    /// A forest of `graph`'s edges from its integer twin over order keys
    /// ([`crate::graph::Csr::with_weight_order_keys`]): each key back to the real weight's bits,
    /// and the real total. A forest over integer weights comes back as it is.
    pub fn from_order_keys(graph: &Graph, keyed: SpanningForest) -> SpanningForest {
        if !graph.out().has_real_weights() {
            return keyed;
        }
        let edges: Vec<_> =
            keyed.edges.into_iter().map(|(u, v, key)| (u, v, crate::graph::real_weight_from_order_key(key))).collect();
        let real_weight = edges.iter().map(|&(_, _, bits)| f64::from(f32::from_bits(bits))).sum();
        SpanningForest { edges, weight: 0, real_weight: Some(real_weight) }
    }
}

/// `graph` with integer weights ordered as its real ones, when they are real.
fn keyed_graph(graph: &Graph) -> Option<Graph> {
    graph.out().has_real_weights().then(|| Graph::from_csr(graph.out().with_weight_order_keys()))
}

/// A minimum spanning forest by Kruskal's algorithm: edges by increasing `(weight, u, v)` with
/// `u < v`, each kept if it joins two trees. Edges come out as `(u, v, w)` with `u < v`, in the
/// order they were kept. A parallel edge never beats a lighter one, as the lighter comes first.
pub fn minimum_spanning_forest(graph: &Graph) -> SpanningForest {
    if let Some(keyed) = keyed_graph(graph) {
        return SpanningForest::from_order_keys(graph, minimum_spanning_forest(&keyed));
    }
    let csr = graph.out();
    let mut candidates = Vec::with_capacity(graph.num_edges() as usize);
    for u in 0..graph.num_nodes() {
        for (v, w) in csr.weighted_neighbors(u) {
            if u != v {
                candidates.push((w, u.min(v), u.max(v)));
            }
        }
    }
    candidates.sort_unstable();
    let mut trees = UnionFind::new(graph.num_nodes());
    let mut forest = SpanningForest::default();
    for (w, u, v) in candidates {
        if trees.union(u, v) {
            forest.edges.push((u, v, w));
            forest.weight += u64::from(w);
        }
    }
    forest
}

/// Checks that `forest` is a minimum spanning forest: each edge joins two distinct nodes of the
/// graph with the weight of the lightest graph edge between them (in either direction); the
/// edges form no cycle; every graph edge joins nodes of one tree (so there are
/// `nodes - components` edges); the weights sum to `forest.weight`; and that weight is the one
/// the reference finds (all minimum spanning forests weigh the same).
pub fn verify_msf(graph: &Graph, forest: &SpanningForest) -> Result<()> {
    if let Some(keyed) = keyed_graph(graph) {
        // Minimum over real weights is minimum over their order keys (all minimum forests have
        // the same weights, so the same sum of keys); then the real total is checked.
        let Some(total) = forest.real_weight else {
            return Err(failure("the graph's weights are real, but the forest gives no real total"));
        };
        let edges: Vec<_> =
            forest.edges.iter().map(|&(u, v, bits)| (u, v, crate::graph::real_weight_order_key(bits))).collect();
        let weight = edges.iter().map(|&(_, _, key)| u64::from(key)).sum();
        verify_msf(&keyed, &SpanningForest { edges, weight, real_weight: None })?;
        let reals: Vec<f64> = forest.edges.iter().map(|&(_, _, bits)| f64::from(f32::from_bits(bits))).collect();
        let sum: f64 = reals.iter().sum();
        let scale: f64 = reals.iter().map(|w| w.abs()).sum();
        if (sum - total).abs() > 1e-9 * scale.max(1.0) {
            return Err(failure(format!("the forest's edges weigh {sum} in all, but its weight is given as {total}")));
        }
        return Ok(());
    }
    if forest.real_weight.is_some() {
        return Err(failure("the forest gives a real total, but the graph's weights are integers"));
    }
    let n = graph.num_nodes();
    let edges = &forest.edges;
    let mut trees = UnionFind::new(n);
    for (i, &(u, v, w)) in edges.iter().enumerate() {
        if u >= n || v >= n {
            return Err(failure(format!("forest edge {i} ({u}, {v}, weight {w}) names a node outside the {n} nodes")));
        }
        if u == v {
            return Err(failure(format!("forest edge {i} ({u}, {v}, weight {w}) is a self-loop")));
        }
        if !trees.union(u, v) {
            return Err(failure(format!(
                "forest edge {i} ({u}, {v}, weight {w}) closes a cycle: {u} and {v} are already joined by earlier edges"
            )));
        }
    }

    // Hang each tree from a root, so a graph edge {u, v} is a forest edge exactly when one end
    // is the other's parent, which finds the lightest graph edge for every forest edge in one
    // pass without hashing.
    let none = u32::MAX;
    let mut offsets = vec![0usize; n as usize + 1];
    for &(u, v, _) in edges {
        offsets[u as usize + 1] += 1;
        offsets[v as usize + 1] += 1;
    }
    for i in 0..n as usize {
        offsets[i + 1] += offsets[i];
    }
    let mut cursor = offsets.clone();
    let mut adjacent = vec![(0 as NodeId, 0u32); 2 * edges.len()];
    for (i, &(u, v, _)) in edges.iter().enumerate() {
        adjacent[cursor[u as usize]] = (v, i as u32);
        cursor[u as usize] += 1;
        adjacent[cursor[v as usize]] = (u, i as u32);
        cursor[v as usize] += 1;
    }
    let mut parent = vec![none; n as usize];
    let mut parent_edge = vec![none; n as usize];
    let mut visited = vec![false; n as usize];
    let mut stack = Vec::new();
    for root in 0..n {
        if visited[root as usize] {
            continue;
        }
        visited[root as usize] = true;
        stack.push(root);
        while let Some(u) = stack.pop() {
            for &(v, i) in &adjacent[offsets[u as usize]..offsets[u as usize + 1]] {
                if !visited[v as usize] {
                    visited[v as usize] = true;
                    parent[v as usize] = u;
                    parent_edge[v as usize] = i;
                    stack.push(v);
                }
            }
        }
    }
    drop(adjacent);

    let csr = graph.out();
    let mut lightest = vec![u64::MAX; edges.len()];
    let mut components = UnionFind::new(n);
    let mut first_unspanned = None;
    for u in 0..n {
        for (v, w) in csr.weighted_neighbors(u) {
            if u == v {
                continue;
            }
            let i = if parent[u as usize] == v {
                parent_edge[u as usize]
            } else if parent[v as usize] == u {
                parent_edge[v as usize]
            } else {
                none
            };
            if i != none {
                lightest[i as usize] = lightest[i as usize].min(u64::from(w));
            }
            if first_unspanned.is_none() && !trees.same(u, v) {
                first_unspanned = Some((u, v));
            }
            components.union(u, v);
        }
    }
    for (i, &(u, v, w)) in edges.iter().enumerate() {
        if lightest[i] == u64::MAX {
            return Err(failure(format!("forest edge {i} ({u}, {v}, weight {w}) is not an edge of the graph")));
        }
        if lightest[i] != u64::from(w) {
            return Err(failure(format!(
                "forest edge {i} ({u}, {v}) has weight {w}, but the lightest edge between {u} and {v} weighs {}",
                lightest[i]
            )));
        }
    }
    if let Some((u, v)) = first_unspanned {
        let component_count = (0..n).filter(|&x| components.find(x) == x).count();
        return Err(failure(format!(
            "the forest does not span the graph: edge {u} -> {v} joins two of its trees; it has {} edges where a \
             spanning forest of these {n} nodes in {component_count} components has {}",
            edges.len(),
            n as usize - component_count
        )));
    }
    let sum: u64 = edges.iter().map(|&(_, _, w)| u64::from(w)).sum();
    if sum != forest.weight {
        return Err(failure(format!(
            "the forest's edges weigh {sum} in all, but its weight is given as {}",
            forest.weight
        )));
    }
    let minimum = minimum_spanning_forest(graph).weight;
    if forest.weight != minimum {
        return Err(failure(format!(
            "the forest weighs {}, but a minimum spanning forest weighs {minimum}",
            forest.weight
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{BuildOptions, EdgeList, build};

    fn sample() -> Graph {
        // Two components: {0, 1, 2, 3} with a parallel heavier edge and a self-loop, and {4, 5}.
        let triples = [(0, 1, 4), (1, 2, 2), (2, 0, 3), (2, 3, 7), (3, 2, 1), (1, 0, 9), (3, 3, 0), (5, 4, 6)];
        build(EdgeList::from_triples(7, &triples), &BuildOptions::AS_GIVEN).unwrap()
    }

    #[test]
    fn forest_of_a_small_graph() {
        let g = sample();
        let forest = minimum_spanning_forest(&g);
        assert_eq!(forest.edges, vec![(2, 3, 1), (1, 2, 2), (0, 2, 3), (4, 5, 6)]);
        assert_eq!(forest.weight, 12);
        verify_msf(&g, &forest).unwrap();
        // Another order and orientation of the same forest.
        let other =
            SpanningForest { edges: vec![(5, 4, 6), (2, 0, 3), (3, 2, 1), (2, 1, 2)], weight: 12, real_weight: None };
        verify_msf(&g, &other).unwrap();
    }

    #[test]
    fn rejects_wrong_forests() {
        let g = sample();
        let check = |edges: Vec<(u32, u32, u32)>, weight: u64| {
            verify_msf(&g, &SpanningForest { edges, weight, real_weight: None }).unwrap_err().to_string()
        };
        let e = check(vec![(2, 3, 1), (1, 2, 2), (0, 1, 4), (4, 5, 6)], 13);
        assert!(e.contains("weighs 13") && e.contains("weighs 12"), "{e}");
        let e = check(vec![(2, 3, 7), (1, 2, 2), (0, 2, 3), (4, 5, 6)], 18);
        assert!(e.contains("edge 0 (2, 3) has weight 7") && e.contains("weighs 1"), "{e}");
        let e = check(vec![(2, 3, 1), (1, 2, 2), (0, 2, 3), (0, 1, 4), (4, 5, 6)], 16);
        assert!(e.contains("edge 3 (0, 1, weight 4) closes a cycle"), "{e}");
        let e = check(vec![(2, 3, 1), (1, 2, 2), (0, 2, 3)], 6);
        assert!(e.contains("edge 5 -> 4 joins two of its trees") && e.contains("has 4"), "{e}");
        let e = check(vec![(2, 3, 1), (1, 2, 2), (0, 2, 3), (4, 5, 6), (5, 6, 1)], 13);
        assert!(e.contains("edge 4 (5, 6, weight 1) is not an edge"), "{e}");
        let e = check(vec![(2, 3, 1), (1, 2, 2), (0, 2, 3), (4, 5, 6)], 11);
        assert!(e.contains("weigh 12 in all"), "{e}");
        let e = check(vec![(3, 3, 0)], 0);
        assert!(e.contains("self-loop"), "{e}");
        let e = check(vec![(3, 9, 0)], 0);
        assert!(e.contains("node outside"), "{e}");
    }

    #[test]
    fn real_weights_by_order() {
        // Negative and fractional weights: the forest takes the lightest by value.
        let triples = [(0, 1, 0.5), (1, 2, -2.0), (0, 2, 0.25), (2, 3, 1e-3), (1, 3, -1.5)];
        let g = build(EdgeList::from_real_triples(4, &triples).unwrap(), &BuildOptions::AS_GIVEN).unwrap();
        let forest = minimum_spanning_forest(&g);
        let weights: Vec<f32> = forest.edges.iter().map(|e| f32::from_bits(e.2)).collect();
        assert_eq!(weights, vec![-2.0, -1.5, 0.25]);
        assert_eq!(forest.real_weight, Some(-3.25));
        verify_msf(&g, &forest).unwrap();
        let mut heavier = forest.clone();
        heavier.edges[2] = (0, 1, 0.5f32.to_bits());
        heavier.real_weight = Some(-3.0);
        assert!(verify_msf(&g, &heavier).is_err());
        let mut misstated = forest.clone();
        misstated.real_weight = Some(-3.0);
        assert!(verify_msf(&g, &misstated).unwrap_err().to_string().contains("given as -3"));
    }
}
