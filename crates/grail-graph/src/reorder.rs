//! Node reorderings: relabelling node ids so that nodes used together sit together in memory.
//!
//! A [`Permutation`] maps every old id to a new one; [`Permutation::apply`] builds the relabelled
//! graph. [`reorder`] computes the permutation of a [`Reordering`]:
//!
//! * [`Reordering::Degree`]: by descending out-degree (ties by smaller old id), so hubs share the
//!   first cache lines and per-node arrays of skewed graphs have their hot part up front;
//! * [`Reordering::Bfs`]: in breadth-first order, so neighbours get nearby ids (a cheap locality
//!   ordering in the spirit of Cuthill–McKee);
//! * [`Reordering::Random`]: a seeded uniform shuffle, which destroys any locality of the input
//!   (the baseline against which the others are measured).

use std::sync::atomic::{AtomicU32, Ordering as AtomicOrdering};

use rand::RngExt;
use rayon::prelude::*;

use crate::error::{GraphError, Result};
use crate::facts::Facts;
use crate::generate::{Stream, block_rng, hash3};
use crate::graph::{Csr, EdgeId, Graph, MAX_NODES, NodeId};
use crate::par::{node_groups, split_by_lengths};

/// A relabelling of the nodes `0..n`: old id `u` becomes `new_id(u)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Permutation {
    new_id_of_old: Vec<u32>,
}

impl Permutation {
    /// The permutation that sends old id `u` to `new_id_of_old[u]`; checks that every id in
    /// `0..len` appears exactly once.
    pub fn from_new_ids(new_id_of_old: Vec<u32>) -> Result<Permutation> {
        let n = new_id_of_old.len();
        if n as u64 > MAX_NODES {
            return Err(GraphError::invalid(format!(
                "a permutation of {n} ids is longer than the {MAX_NODES} allowed"
            )));
        }
        let mut seen = vec![0u64; n.div_ceil(64)];
        for (old, &new) in new_id_of_old.iter().enumerate() {
            if new as usize >= n {
                return Err(GraphError::invalid(format!(
                    "not a permutation: old id {old} maps to {new}, but there are only {n} ids"
                )));
            }
            let (word, bit) = (new as usize / 64, 1u64 << (new % 64));
            if seen[word] & bit != 0 {
                let first = new_id_of_old.iter().position(|&x| x == new).unwrap();
                return Err(GraphError::invalid(format!(
                    "not a permutation: old ids {first} and {old} both map to {new}"
                )));
            }
            seen[word] |= bit;
        }
        Ok(Permutation { new_id_of_old })
    }

    /// The permutation that keeps every id.
    pub fn identity(n: u32) -> Self {
        Permutation { new_id_of_old: (0..n).collect() }
    }

    /// The permutation that numbers `order[k]` as `k`; `order` must be a permutation.
    fn from_order(order: &[NodeId]) -> Permutation {
        Permutation { new_id_of_old: invert(order) }
    }

    /// The new id of old node `old`.
    #[inline]
    pub fn new_id(&self, old: NodeId) -> NodeId {
        self.new_id_of_old[old as usize]
    }

    /// The inverse: element `k` is the old id of the node numbered `k`.
    pub fn old_ids(&self) -> Vec<NodeId> {
        invert(&self.new_id_of_old)
    }

    /// Element `u` is the new id of old node `u`.
    pub fn as_slice(&self) -> &[u32] {
        &self.new_id_of_old
    }

    pub fn len(&self) -> usize {
        self.new_id_of_old.len()
    }

    pub fn is_empty(&self) -> bool {
        self.new_id_of_old.is_empty()
    }

    /// The relabelled graph: node `new_id(u)` has `u`'s edges (targets relabelled, weights
    /// carried, adjacency sorted by new target id, parallel edges kept in their old relative
    /// order), node and edge properties carried along. The in-edges are rebuilt if the input had
    /// them. Parallel: each new node gathers its own edges.
    pub fn apply(&self, graph: &Graph) -> Result<Graph> {
        self.apply_with(graph, true)
    }

    /// [`Permutation::apply`], dropping the edge weights unless `weights`.
    pub fn apply_with(&self, graph: &Graph, weights: bool) -> Result<Graph> {
        if self.len() != graph.num_nodes() as usize {
            return Err(GraphError::invalid(format!(
                "a permutation of {} ids cannot relabel a graph of {} nodes",
                self.len(),
                graph.num_nodes()
            )));
        }
        let old = graph.out();
        let old_of_new = self.old_ids();
        let n = old_of_new.len();
        let degrees: Vec<u64> = old_of_new.par_iter().map(|&u| old.degree(u)).collect();
        let mut offsets = Vec::with_capacity(n + 1);
        offsets.push(0u64);
        for d in degrees {
            offsets.push(offsets.last().unwrap() + d);
        }
        let m = old.num_edges() as usize;
        let keep_edge_order = !graph.edge_props.is_empty();
        let mut targets = vec![0 as NodeId; m];
        let mut weights = old.weight_words().filter(|_| weights).map(|_| vec![0; m]);
        let mut edge_order: Vec<EdgeId> = vec![0; if keep_edge_order { m } else { 0 }];

        let bounds = node_groups(&offsets);
        let edge_bounds: Vec<usize> = bounds.iter().map(|&v| offsets[v] as usize).collect();
        let lengths = || edge_bounds.windows(2).map(|w| w[1] - w[0]);
        let target_pieces = split_by_lengths(&mut targets, lengths());
        let weight_pieces: Vec<Option<&mut [u32]>> = match &mut weights {
            Some(w) => split_by_lengths(w, lengths()).into_iter().map(Some).collect(),
            None => lengths().map(|_| None).collect(),
        };
        let order_pieces: Vec<Option<&mut [EdgeId]>> = if keep_edge_order {
            split_by_lengths(&mut edge_order, lengths()).into_iter().map(Some).collect()
        } else {
            lengths().map(|_| None).collect()
        };
        target_pieces.into_par_iter().zip(weight_pieces).zip(order_pieces).enumerate().for_each(
            |(g, ((targets, mut weights), mut order))| {
                let mut keys: Vec<u64> = Vec::new();
                let mut edges: Vec<(NodeId, EdgeId)> = Vec::new();
                let mut at = 0;
                for &u in &old_of_new[bounds[g]..bounds[g + 1]] {
                    let range = old.edge_range(u);
                    let degree = range.len();
                    if weights.is_none() && order.is_none() {
                        // Only the targets move: relabel them in place and sort.
                        let list = &mut targets[at..at + degree];
                        for (slot, &v) in list.iter_mut().zip(&old.targets()[range]) {
                            *slot = self.new_id(v);
                        }
                        list.sort_unstable();
                        at += degree;
                    } else if degree <= u32::MAX as usize {
                        // Sort (new target, position) packed in one word; positions are distinct,
                        // so parallel edges keep their old order.
                        keys.clear();
                        keys.extend(
                            old.targets()[range.clone()]
                                .iter()
                                .enumerate()
                                .map(|(i, &v)| (u64::from(self.new_id(v)) << 32) | i as u64),
                        );
                        keys.sort_unstable();
                        for &key in &keys {
                            let e = range.start + (key as u32) as usize;
                            targets[at] = (key >> 32) as NodeId;
                            if let Some(weights) = weights.as_deref_mut() {
                                weights[at] = old.weight_words().unwrap()[e];
                            }
                            if let Some(order) = order.as_deref_mut() {
                                order[at] = e as EdgeId;
                            }
                            at += 1;
                        }
                    } else {
                        edges.clear();
                        edges.extend(range.map(|e| (self.new_id(old.targets()[e]), e as EdgeId)));
                        edges.sort_unstable();
                        for &(v, e) in &edges {
                            targets[at] = v;
                            if let Some(weights) = weights.as_deref_mut() {
                                weights[at] = old.weight_words().unwrap()[e as usize];
                            }
                            if let Some(order) = order.as_deref_mut() {
                                order[at] = e;
                            }
                            at += 1;
                        }
                    }
                }
            },
        );

        // Relabelling keeps every fact; adjacencies come out sorted by target, and by weight
        // too unless parallel edges were out of weight order.
        let known = graph.facts();
        let facts = Facts { sorted: known.sorted || known.no_duplicates || weights.is_none(), ..known };
        let mut result = Graph::with_facts(
            Csr::from_parts_unchecked(offsets, targets, weights).with_real_weights(old.has_real_weights()),
            facts,
        );
        result.node_props = graph.node_props.gather(&old_of_new);
        if keep_edge_order {
            result.edge_props = graph.edge_props.gather(&edge_order);
        }
        if graph.in_edge_ids().is_some() {
            result.build_in_edge_ids();
        } else if graph.reverse().is_some() {
            result.build_reverse();
        }
        Ok(result)
    }
}

/// A way to number the nodes; see the module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reordering {
    /// By descending out-degree, ties by smaller old id.
    Degree,
    /// Breadth-first over out-edges (in stored adjacency order) from the node of highest
    /// out-degree (the smallest id among ties), numbering nodes as they are discovered; when the
    /// search runs out, it goes on from the smallest id not yet numbered, until all are.
    Bfs,
    /// A uniform random shuffle determined by the seed.
    Random { seed: u64 },
}

/// The same type under the name the specification uses, for callers that do not import
/// `std::cmp::Ordering` next to it.
pub use Reordering as Ordering;

/// The permutation that `ordering` gives for `graph`.
pub fn reorder(graph: &Graph, ordering: Reordering) -> Permutation {
    let n = graph.num_nodes();
    match ordering {
        Reordering::Degree => Permutation::from_order(&degree_order(graph.out())),
        Reordering::Bfs => Permutation::from_order(&bfs_order(graph.out())),
        Reordering::Random { seed } => Permutation { new_id_of_old: random_permutation(n, seed, Stream::Shuffle) },
    }
}

/// Nodes by descending out-degree, ties by smaller id: a parallel sort of one word per node
/// (the degree's complement above the id) while degrees fit in 32 bits.
fn degree_order(csr: &Csr) -> Vec<NodeId> {
    let n = csr.num_nodes();
    if csr.max_degree().1 >= u64::from(u32::MAX) {
        let mut order: Vec<NodeId> = (0..n).collect();
        order.par_sort_unstable_by_key(|&u| (std::cmp::Reverse(csr.degree(u)), u));
        return order;
    }
    let mut keys: Vec<u64> =
        (0..n).into_par_iter().map(|u| (u64::from(u32::MAX) - csr.degree(u)) << 32 | u64::from(u)).collect();
    keys.par_sort_unstable();
    keys.into_par_iter().map(|key| key as NodeId).collect()
}

/// Whether the nodes are already numbered as [`Reordering::Degree`] would number them: degrees
/// never increase with the id (so the degree order is the identity).
pub fn is_degree_ordered(csr: &Csr) -> bool {
    let offsets = csr.offsets();
    let degree = |u: usize| offsets[u + 1] - offsets[u];
    crate::par::first_index(csr.num_nodes().saturating_sub(1) as usize, |u| degree(u) < degree(u + 1)).is_none()
}

/// Whether the out-degrees are skewed: the average degree over half again the median of an
/// even sample of the nodes' degrees. Numbering by degree pays where they are (R-MAT, social
/// networks: a few hubs hold most edges, and work that favours them finds them up front); a road
/// network or a uniform random graph, whose average and median degrees are about the same,
/// keeps its own numbering and the locality that comes with it.
pub fn degrees_skewed(csr: &Csr) -> bool {
    /// Nodes sampled, evenly spread over the ids.
    const SAMPLES: usize = 1024;
    let n = csr.num_nodes() as usize;
    if n < 2 {
        return false;
    }
    let step = (n / SAMPLES).max(1);
    let mut sample: Vec<EdgeId> = (0..n).step_by(step).take(SAMPLES).map(|u| csr.degree(u as NodeId)).collect();
    let middle = sample.len() / 2;
    let median = *sample.select_nth_unstable(middle).1;
    let average = csr.num_edges() as f64 / n as f64;
    average > 1.5 * median as f64
}

/// `graph` numbered by descending out-degree ([`Reordering::Degree`]), adjacencies sorted by
/// target, edge weights kept if `weights`; borrowed (weights and all) when it already is so
/// numbered and sorted.
pub fn by_degree(graph: &Graph, weights: bool) -> Result<std::borrow::Cow<'_, Graph>> {
    if is_degree_ordered(graph.out()) {
        let mut facts = graph.facts();
        if !facts.sorted {
            facts = facts.union(crate::facts::scan(graph.out()));
        }
        if facts.sorted {
            return Ok(std::borrow::Cow::Borrowed(graph));
        }
    }
    Ok(std::borrow::Cow::Owned(reorder(graph, Reordering::Degree).apply_with(graph, weights)?))
}

/// Nodes in breadth-first discovery order, restarting from the smallest unnumbered id.
fn bfs_order(csr: &Csr) -> Vec<NodeId> {
    let n = csr.num_nodes() as usize;
    let mut order = Vec::with_capacity(n);
    if n == 0 {
        return order;
    }
    let mut seen = vec![false; n];
    let mut next_unseen = 0usize;
    let mut root = csr.max_degree().0;
    loop {
        seen[root as usize] = true;
        order.push(root);
        // `order` doubles as the queue: everything after `head` is discovered but not expanded.
        let mut head = order.len() - 1;
        while head < order.len() {
            let u = order[head];
            head += 1;
            for &v in csr.neighbors(u) {
                if !seen[v as usize] {
                    seen[v as usize] = true;
                    order.push(v);
                }
            }
        }
        while next_unseen < n && seen[next_unseen] {
            next_unseen += 1;
        }
        if next_unseen == n {
            return order;
        }
        root = next_unseen as NodeId;
    }
}

/// A uniform random permutation of `0..n` (as new id of each old id), the same for a seed on any
/// number of threads. Ids are scattered into random buckets of about 4096 (by a hash of the id),
/// grouped by a parallel sort, then shuffled within each bucket by its own random stream: a
/// uniform bucket assignment followed by uniform shuffles is a uniform permutation.
fn random_permutation(n: u32, seed: u64, stream: Stream) -> Vec<u32> {
    let buckets = u64::from(n).div_ceil(4096).max(1);
    let mut keys: Vec<u64> = (0..n)
        .into_par_iter()
        .map(|i| {
            let bucket = (u128::from(hash3(seed, stream, u64::from(i))) * u128::from(buckets)) >> 64;
            ((bucket as u64) << 32) | u64::from(i)
        })
        .collect();
    keys.par_sort_unstable();
    let starts: Vec<usize> = (0..=buckets).into_par_iter().map(|b| keys.partition_point(|&k| k >> 32 < b)).collect();
    let pieces = split_by_lengths(&mut keys, starts.windows(2).map(|w| w[1] - w[0]));
    pieces.into_par_iter().enumerate().for_each(|(b, piece)| {
        // The high bit keeps these streams apart from the per-id hashes above.
        let mut rng = block_rng(seed, stream, b as u64 | 1 << 63);
        for i in (1..piece.len()).rev() {
            let j = rng.random_range(0..=i as u64) as usize;
            piece.swap(i, j);
        }
    });
    let order: Vec<u32> = keys.into_par_iter().map(|k| k as u32).collect();
    invert(&order)
}

/// The inverse of a permutation given as a slice.
fn invert(permutation: &[u32]) -> Vec<u32> {
    let inverse: Vec<AtomicU32> = (0..permutation.len()).into_par_iter().map(|_| AtomicU32::new(0)).collect();
    permutation.par_iter().enumerate().for_each(|(i, &p)| inverse[p as usize].store(i as u32, AtomicOrdering::Relaxed));
    inverse.into_par_iter().map(AtomicU32::into_inner).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{BuildOptions, EdgeList, build};
    use crate::generate::{GenOptions, Generator, generate};
    use crate::progress::NoProgress;

    fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(f)
    }

    fn rmat(scale: u32, max_weight: Option<u32>) -> Graph {
        generate(&Generator::graph500(scale), &GenOptions { seed: 3, max_weight }, false, &NoProgress).unwrap()
    }

    /// Every edge as (source, target, weight), sorted.
    fn edge_multiset(graph: &Graph) -> Vec<(u32, u32, u32)> {
        let mut edges: Vec<_> = (0..graph.num_nodes())
            .flat_map(|u| graph.out().weighted_neighbors(u).map(move |(v, w)| (u, v, w)))
            .collect();
        edges.sort_unstable();
        edges
    }

    #[test]
    fn validation() {
        assert!(Permutation::from_new_ids(vec![2, 0, 1]).is_ok());
        assert!(Permutation::from_new_ids(vec![]).unwrap().is_empty());
        let err = Permutation::from_new_ids(vec![0, 3, 1]).unwrap_err().to_string();
        assert!(err.contains("old id 1 maps to 3"), "{err}");
        let err = Permutation::from_new_ids(vec![1, 0, 1]).unwrap_err().to_string();
        assert!(err.contains("old ids 0 and 2 both map to 1"), "{err}");
        let p = Permutation::from_new_ids(vec![2, 0, 1]).unwrap();
        assert_eq!((p.len(), p.new_id(0), p.old_ids(), p.as_slice()), (3, 2, vec![1, 2, 0], &[2, 0, 1][..]));
        assert_eq!(Permutation::identity(4).as_slice(), [0, 1, 2, 3]);
        let graph = build(EdgeList::from_pairs(2, &[(0, 1)]), &BuildOptions::SIMPLE).unwrap();
        assert!(p.apply(&graph).is_err());
    }

    #[test]
    fn every_ordering_is_a_permutation_and_deterministic() {
        let graph = rmat(12, None);
        for ordering in [Reordering::Degree, Reordering::Bfs, Reordering::Random { seed: 5 }] {
            let one = in_pool(1, || reorder(&graph, ordering));
            let five = in_pool(5, || reorder(&graph, ordering));
            assert_eq!(one, five, "{ordering:?}");
            assert!(Permutation::from_new_ids(one.as_slice().to_vec()).is_ok(), "{ordering:?}");
            assert_eq!(one.len(), graph.num_nodes() as usize);
        }
        assert_ne!(reorder(&graph, Reordering::Random { seed: 5 }), reorder(&graph, Reordering::Random { seed: 6 }));
    }

    #[test]
    fn random_shuffle_looks_uniform() {
        // Each of 6 ids lands in each of 6 positions about 1/6 of the time.
        let mut counts = [[0u32; 6]; 6];
        for seed in 0..6000 {
            let p = random_permutation(6, seed, Stream::Shuffle);
            for (old, &new) in p.iter().enumerate() {
                counts[old][new as usize] += 1;
            }
        }
        assert!(counts.iter().flatten().all(|&c| (850..1150).contains(&c)), "{counts:?}");
        // Large enough to use many buckets.
        let p = random_permutation(100_000, 1, Stream::Shuffle);
        assert!(Permutation::from_new_ids(p.clone()).is_ok());
        let fixed = p.iter().enumerate().filter(|&(i, &v)| i as u32 == v).count();
        assert!(fixed < 10, "{fixed} fixed points");
    }

    #[test]
    fn apply_relabels_edges_weights_and_properties() {
        let mut graph = rmat(10, Some(50));
        let n = graph.num_nodes();
        graph.node_props.insert_values("id", (0..n).collect::<Vec<u32>>()).unwrap();
        let sources = graph.out().edge_sources();
        let targets = graph.out().targets().to_vec();
        let weights = graph.out().weights().unwrap().to_vec();
        let tag: Vec<u64> = sources.iter().zip(&targets).map(|(&u, &v)| (u64::from(u) << 32) | u64::from(v)).collect();
        graph.edge_props.insert_values("tag", tag).unwrap();
        graph.edge_props.insert_values("w", weights.iter().map(|&w| f64::from(w)).collect::<Vec<_>>()).unwrap();
        graph.build_reverse();
        for ordering in [Reordering::Degree, Reordering::Bfs, Reordering::Random { seed: 1 }] {
            let p = reorder(&graph, ordering);
            let relabelled = in_pool(3, || p.apply(&graph).unwrap());
            assert_eq!(relabelled, in_pool(1, || p.apply(&graph).unwrap()));
            assert!(relabelled.reverse().is_some());
            // Same edges under the relabelling.
            let mut expected: Vec<_> = sources
                .iter()
                .zip(&targets)
                .zip(&weights)
                .map(|((&u, &v), &w)| (p.new_id(u), p.new_id(v), w))
                .collect();
            expected.sort_unstable();
            assert_eq!(edge_multiset(&relabelled), expected);
            // Adjacencies sorted by new id; node and edge properties follow their owners.
            let ids = relabelled.node_props.get::<u32>("id").unwrap();
            let tags = relabelled.edge_props.get::<u64>("tag").unwrap();
            let w = relabelled.edge_props.get::<f64>("w").unwrap();
            for v in 0..n {
                assert!(relabelled.neighbors(v).is_sorted());
                assert_eq!(p.new_id(ids[v as usize]), v);
                for (e, (t, weight)) in relabelled.out().edge_range(v).zip(relabelled.out().weighted_neighbors(v)) {
                    let (old_u, old_t) = ((tags[e] >> 32) as u32, tags[e] as u32);
                    assert_eq!((p.new_id(old_u), p.new_id(old_t)), (v, t));
                    assert_eq!(w[e], f64::from(weight));
                }
            }
            // The inverse permutation restores the original.
            let back = Permutation::from_new_ids(p.old_ids()).unwrap().apply(&relabelled).unwrap();
            assert_eq!(back, graph);
        }
    }

    /// R-MAT's degrees are skewed; a road network's, a grid's and a uniform random graph's are
    /// not (numbering them by degree would only scatter their neighbours).
    #[test]
    fn only_skewed_degrees_call_for_renumbering() {
        let make = |generator: Generator, undirected: bool| {
            crate::generate::generate(&generator, &GenOptions::default(), undirected, &crate::NoProgress).unwrap()
        };
        assert!(degrees_skewed(make(Generator::graph500(12), true).out()));
        assert!(degrees_skewed(make(Generator::graph500(12), false).out()));
        assert!(!degrees_skewed(make(Generator::Road { nodes: 5000 }, true).out()));
        assert!(!degrees_skewed(make(Generator::Grid { rows: 60, cols: 70 }, true).out()));
        assert!(!degrees_skewed(make(Generator::Uniform { nodes: 5000, average_degree: 8 }, true).out()));
        // Too few nodes to say.
        assert!(!degrees_skewed(make(Generator::Uniform { nodes: 1, average_degree: 1 }, false).out()));
    }

    #[test]
    fn degree_order_is_non_increasing() {
        let graph = rmat(12, None);
        let relabelled = reorder(&graph, Reordering::Degree).apply(&graph).unwrap();
        let degrees: Vec<u64> = (0..relabelled.num_nodes()).map(|v| relabelled.out_degree(v)).collect();
        assert!(degrees.windows(2).all(|w| w[0] >= w[1]));
        // Ties keep the old order.
        let p = reorder(&graph, Reordering::Degree);
        let old = p.old_ids();
        assert!(old.windows(2).all(|w| graph.out_degree(w[0]) > graph.out_degree(w[1]) || w[0] < w[1]));
    }

    #[test]
    fn bfs_order_numbers_a_bfs_tree_consecutively() {
        // Two components, so the restart rule is exercised too; node 7 has the highest degree.
        let pairs = [(7, 2), (7, 5), (7, 0), (2, 4), (5, 4), (4, 9), (0, 7), (1, 3), (3, 6), (6, 8), (8, 1)];
        let graph = build(EdgeList::from_pairs(10, &pairs), &BuildOptions::SIMPLE).unwrap();
        let p = reorder(&graph, Reordering::Bfs);
        assert_eq!(p.old_ids(), [7, 0, 2, 5, 4, 9, 1, 3, 6, 8]);
        for graph in [rmat(12, None), graph] {
            let relabelled = reorder(&graph, Reordering::Bfs).apply(&graph).unwrap();
            // A BFS of the relabelled graph (neighbours in id order, restarting from the smallest
            // unvisited id) visits the nodes in id order.
            let order = bfs_order_from(&relabelled, 0);
            assert_eq!(order, (0..relabelled.num_nodes()).collect::<Vec<_>>());
        }
    }

    fn bfs_order_from(graph: &Graph, root: u32) -> Vec<u32> {
        let n = graph.num_nodes() as usize;
        let mut seen = vec![false; n];
        let mut order = Vec::new();
        for start in std::iter::once(root as usize).chain(0..n) {
            if seen[start] {
                continue;
            }
            seen[start] = true;
            let mut queue = std::collections::VecDeque::from([start as u32]);
            while let Some(u) = queue.pop_front() {
                order.push(u);
                for &v in graph.neighbors(u) {
                    if !seen[v as usize] {
                        seen[v as usize] = true;
                        queue.push_back(v);
                    }
                }
            }
        }
        order
    }
}
