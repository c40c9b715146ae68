//! Building CSR graphs from edge lists, in parallel and deterministically.
//!
//! The result never depends on the number of threads: edges keep the order they were given in
//! (within each source node) unless sorting is asked for. The build is a stable parallel radix
//! partition of the edges by blocks of source nodes, followed by a per-block counting scatter.

use rayon::prelude::*;

use crate::error::{GraphError, Result};
use crate::graph::{Csr, Graph, NodeId, Weight};
use crate::par::{DisjointWriter, node_groups, split_by_bounds};

/// Edges as parallel arrays (structure of arrays), plus the number of nodes they range over.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EdgeList {
    pub num_nodes: u32,
    pub sources: Vec<NodeId>,
    pub targets: Vec<NodeId>,
    /// One weight per edge, or `None` for an unweighted graph: a `u32`, or an `f32`'s bits
    /// when `real`.
    pub weights: Option<Vec<Weight>>,
    /// Whether `weights` holds real (`f32`) weights, as bits.
    pub real: bool,
}

impl EdgeList {
    /// An empty list over `num_nodes` nodes.
    pub fn new(num_nodes: u32, weighted: bool) -> EdgeList {
        EdgeList { num_nodes, sources: Vec::new(), targets: Vec::new(), weights: weighted.then(Vec::new), real: false }
    }

    /// Unweighted edges from pairs.
    pub fn from_pairs(num_nodes: u32, pairs: &[(NodeId, NodeId)]) -> EdgeList {
        EdgeList {
            num_nodes,
            sources: pairs.iter().map(|e| e.0).collect(),
            targets: pairs.iter().map(|e| e.1).collect(),
            weights: None,
            real: false,
        }
    }

    /// Weighted edges from triples.
    pub fn from_triples(num_nodes: u32, triples: &[(NodeId, NodeId, Weight)]) -> EdgeList {
        EdgeList {
            num_nodes,
            sources: triples.iter().map(|e| e.0).collect(),
            targets: triples.iter().map(|e| e.1).collect(),
            weights: Some(triples.iter().map(|e| e.2).collect()),
            real: false,
        }
    }

    /// Edges with real weights from triples. Every weight must be a finite number (not NaN or
    /// an infinity), as the readers require: a graph built here can be written and read back.
    pub fn from_real_triples(num_nodes: u32, triples: &[(NodeId, NodeId, f32)]) -> Result<EdgeList> {
        if let Some(e) = triples.iter().position(|t| !t.2.is_finite()) {
            let (u, v, w) = triples[e];
            return Err(GraphError::invalid(format!(
                "edge {e} ({u} -> {v}) weighs {w}: real weights must be finite numbers"
            )));
        }
        Ok(EdgeList {
            num_nodes,
            sources: triples.iter().map(|e| e.0).collect(),
            targets: triples.iter().map(|e| e.1).collect(),
            weights: Some(triples.iter().map(|e| e.2.to_bits()).collect()),
            real: true,
        })
    }

    /// Appends an edge; `weight` is ignored by an unweighted list.
    pub fn push(&mut self, source: NodeId, target: NodeId, weight: Weight) {
        self.sources.push(source);
        self.targets.push(target);
        if let Some(weights) = &mut self.weights {
            weights.push(weight);
        }
    }

    pub fn len(&self) -> usize {
        self.sources.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }

    pub fn is_weighted(&self) -> bool {
        self.weights.is_some()
    }

    /// Every edge of `graph`'s out-CSR, in CSR order.
    pub fn from_csr(csr: &Csr) -> EdgeList {
        EdgeList {
            num_nodes: csr.num_nodes(),
            sources: csr.edge_sources(),
            targets: csr.targets().to_vec(),
            weights: csr.weight_words().map(<[Weight]>::to_vec),
            real: csr.has_real_weights(),
        }
    }
}

/// How to turn an edge list into a graph.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BuildOptions {
    /// Add `v -> u` for every `u -> v` (with the same weight).
    pub symmetrize: bool,
    /// Drop edges `u -> u`.
    pub remove_self_loops: bool,
    /// Keep one edge per `(u, v)`: the one of minimum weight. Implies `sort`.
    pub dedup: bool,
    /// Sort each adjacency by target (then weight).
    pub sort: bool,
}

impl BuildOptions {
    /// Keep the edges exactly as given.
    pub const AS_GIVEN: BuildOptions =
        BuildOptions { symmetrize: false, remove_self_loops: false, dedup: false, sort: false };

    /// A simple directed graph: no self-loops, no duplicate edges, sorted adjacencies.
    pub const SIMPLE: BuildOptions =
        BuildOptions { symmetrize: false, remove_self_loops: true, dedup: true, sort: true };

    /// The simple undirected graph (stored symmetrically) underlying the edges.
    pub const UNDIRECTED: BuildOptions =
        BuildOptions { symmetrize: true, remove_self_loops: true, dedup: true, sort: true };
}

/// Builds a graph from an edge list.
pub fn build(edges: EdgeList, options: &BuildOptions) -> Result<Graph> {
    Ok(Graph::with_facts(build_csr(edges, options)?, crate::facts::Facts::of_build(options)))
}

/// Builds the out-edge CSR of an edge list.
pub fn build_csr(mut edges: EdgeList, options: &BuildOptions) -> Result<Csr> {
    check_edges(&edges)?;
    if options.symmetrize {
        symmetrize(&mut edges);
    }
    let csr = scatter_by_source(&edges, options.remove_self_loops)?.with_real_weights(edges.real);
    drop(edges);
    let csr = if options.sort || options.dedup { sort_adjacencies(csr) } else { csr };
    Ok(if options.dedup { dedup_sorted(csr) } else { csr })
}

/// Checks that the arrays agree in length and that every real weight is a finite number.
fn check_edges(edges: &EdgeList) -> Result<()> {
    let m = edges.sources.len();
    if edges.targets.len() != m || edges.weights.as_ref().is_some_and(|w| w.len() != m) {
        return Err(GraphError::invalid(format!(
            "edge list arrays differ in length: {} sources, {} targets, {} weights",
            m,
            edges.targets.len(),
            edges.weights.as_ref().map_or(m, Vec::len)
        )));
    }
    // The fields are public, so a list may hold what `from_real_triples` refuses: checked here
    // too, so that no graph holds a real weight that the readers would refuse on reading it back.
    if edges.real
        && let Some(weights) = &edges.weights
        && let Some(e) = crate::par::first_index(m, |e| !f32::from_bits(weights[e]).is_finite())
    {
        return Err(GraphError::invalid(format!(
            "edge {e} ({} -> {}) weighs {}: real weights must be finite numbers",
            edges.sources[e],
            edges.targets[e],
            f32::from_bits(weights[e])
        )));
    }
    Ok(())
}

fn symmetrize(edges: &mut EdgeList) {
    let m = edges.sources.len();
    let mut sources = Vec::with_capacity(2 * m);
    sources.extend_from_slice(&edges.sources);
    sources.extend_from_slice(&edges.targets);
    let mut targets = Vec::with_capacity(2 * m);
    targets.extend_from_slice(&edges.targets);
    targets.extend_from_slice(&edges.sources);
    edges.sources = sources;
    edges.targets = targets;
    if let Some(weights) = &mut edges.weights {
        weights.extend_from_within(..);
    }
}

/// How the builder cuts work: edges into chunks, nodes into blocks of `1 << shift` ids.
struct Partition {
    chunk_len: usize,
    chunks: usize,
    shift: u32,
    blocks: usize,
}

impl Partition {
    fn new(num_nodes: u32, num_edges: usize) -> Partition {
        let threads = rayon::current_num_threads().max(1);
        let chunks = (num_edges / (1 << 16)).clamp(1, 4 * threads);
        let chunk_len = num_edges.div_ceil(chunks).max(1);
        let want_blocks = (8 * threads) as u64;
        let mut shift = 0;
        while (u64::from(num_nodes)).div_ceil(1 << shift) > want_blocks {
            shift += 1;
        }
        let blocks = (u64::from(num_nodes).div_ceil(1 << shift)).max(1) as usize;
        Partition { chunk_len, chunks, shift, blocks }
    }
}

/// Places every edge under its source, keeping the given order within each source.
fn scatter_by_source(edges: &EdgeList, skip_self_loops: bool) -> Result<Csr> {
    let n = edges.num_nodes;
    let m = edges.sources.len();
    let part = Partition::new(n, m);
    let chunk = |c: usize| c * part.chunk_len..((c + 1) * part.chunk_len).min(m);
    let keep = |u: NodeId, v: NodeId| !(skip_self_loops && u == v);

    // Pass 1: per chunk, how many edges fall in each block of sources; ids are checked here.
    let histograms: Vec<Vec<usize>> = (0..part.chunks)
        .into_par_iter()
        .map(|c| {
            let mut hist = vec![0usize; part.blocks];
            for i in chunk(c) {
                let (u, v) = (edges.sources[i], edges.targets[i]);
                if u >= n || v >= n {
                    return Err(GraphError::invalid(format!(
                        "edge {i} ({u} -> {v}) names a node outside the {n} nodes of the graph"
                    )));
                }
                if keep(u, v) {
                    hist[(u >> part.shift) as usize] += 1;
                }
            }
            Ok(hist)
        })
        .collect::<Result<_>>()?;

    // Where each block's edges start, and where each chunk writes within each block.
    let mut block_start = vec![0usize; part.blocks + 1];
    for b in 0..part.blocks {
        block_start[b + 1] = block_start[b] + histograms.iter().map(|h| h[b]).sum::<usize>();
    }
    let total = block_start[part.blocks];
    let mut cursors = Vec::with_capacity(part.chunks);
    let mut running = block_start[..part.blocks].to_vec();
    for hist in &histograms {
        cursors.push(running.clone());
        for (r, h) in running.iter_mut().zip(hist) {
            *r += h;
        }
    }

    // Pass 2: stable partition of the edges into blocks.
    let weighted = edges.weights.is_some();
    let mut part_src = vec![0 as NodeId; total];
    let mut part_dst = vec![0 as NodeId; total];
    let mut part_w = vec![0 as Weight; if weighted { total } else { 0 }];
    {
        let (ws, wd, ww) =
            (DisjointWriter::new(&mut part_src), DisjointWriter::new(&mut part_dst), DisjointWriter::new(&mut part_w));
        cursors.into_par_iter().enumerate().for_each(|(c, mut cursor)| {
            for i in chunk(c) {
                let (u, v) = (edges.sources[i], edges.targets[i]);
                if keep(u, v) {
                    let slot = &mut cursor[(u >> part.shift) as usize];
                    // SAFETY: chunk c owns positions [cursors[c][b], cursors[c+1][b]) of each
                    // block b, and `slot` stays in that range by construction of the histograms.
                    unsafe {
                        ws.write(*slot, u);
                        wd.write(*slot, v);
                        if let Some(w) = &edges.weights {
                            ww.write(*slot, w[i]);
                        }
                    }
                    *slot += 1;
                }
            }
        });
    }

    // Pass 3: per block, a counting scatter by exact source into the final arrays.
    // A header may declare billions of nodes that no edge uses; fail cleanly if they do not fit.
    let mut offsets = zeroed(n as usize + 1, "node offsets")?;
    let mut targets = vec![0 as NodeId; total];
    let mut weights = vec![0 as Weight; if weighted { total } else { 0 }];
    let block_nodes = 1usize << part.shift;
    let mut target_pieces = split_by_bounds(&mut targets, &block_start);
    let mut weight_pieces = if weighted {
        split_by_bounds(&mut weights, &block_start)
    } else {
        (0..part.blocks).map(|_| &mut [][..]).collect()
    };
    let offset_pieces: Vec<&mut [u64]> = offsets[..n as usize].chunks_mut(block_nodes).collect();
    offset_pieces
        .into_par_iter()
        .zip(target_pieces.par_iter_mut())
        .zip(weight_pieces.par_iter_mut())
        .enumerate()
        .for_each(|(b, ((offsets, targets), weights))| {
            let lo = (b << part.shift) as NodeId;
            let range = block_start[b]..block_start[b + 1];
            for &u in &part_src[range.clone()] {
                offsets[(u - lo) as usize] += 1;
            }
            let mut sum = block_start[b] as u64;
            for slot in offsets.iter_mut() {
                let degree = *slot;
                *slot = sum;
                sum += degree;
            }
            let mut cursor: Vec<usize> = offsets.iter().map(|&o| o as usize - block_start[b]).collect();
            for i in range {
                let at = &mut cursor[(part_src[i] - lo) as usize];
                targets[*at] = part_dst[i];
                if weighted {
                    weights[*at] = part_w[i];
                }
                *at += 1;
            }
        });
    offsets[n as usize] = total as u64;
    Ok(Csr::from_parts_unchecked(offsets, targets, weighted.then_some(weights)))
}

/// A vector of `len` zeros, or an error saying how much memory it would have needed.
fn zeroed<T: Clone + Default>(len: usize, what: &str) -> Result<Vec<T>> {
    let mut values = Vec::new();
    values.try_reserve_exact(len).map_err(|_| {
        GraphError::invalid(format!(
            "not enough memory for {what}: {len} entries need {:.1} GB",
            (len as f64) * std::mem::size_of::<T>() as f64 / 1e9
        ))
    })?;
    values.resize(len, T::default());
    Ok(values)
}

/// Runs `f(first_node, node_offsets, targets, weights)` over groups of nodes in parallel, where
/// `node_offsets` are the group's offsets (one more than its nodes, absolute) and `targets` and
/// `weights` are the group's part of the edge arrays.
fn for_each_group(
    offsets: &[u64],
    targets: &mut [NodeId],
    weights: Option<&mut [Weight]>,
    f: impl Fn(NodeId, &[u64], &mut [NodeId], Option<&mut [Weight]>) + Sync,
) {
    let bounds = node_groups(offsets);
    let edge_bounds: Vec<usize> = bounds.iter().map(|&u| offsets[u] as usize).collect();
    let target_pieces = split_by_bounds(targets, &edge_bounds);
    let weight_pieces: Vec<Option<&mut [Weight]>> = match weights {
        Some(w) => split_by_bounds(w, &edge_bounds).into_iter().map(Some).collect(),
        None => (0..target_pieces.len()).map(|_| None).collect(),
    };
    target_pieces.into_par_iter().zip(weight_pieces).enumerate().for_each(|(g, (targets, weights))| {
        f(bounds[g] as NodeId, &offsets[bounds[g]..=bounds[g + 1]], targets, weights)
    });
}

/// Sorts every adjacency by target, then weight.
pub fn sort_adjacencies(csr: Csr) -> Csr {
    let real = csr.has_real_weights();
    // Real weights sort by value through their order key, which is its own inverse's partner.
    let key = |w: Weight| if real { crate::graph::real_weight_order_key(w) } else { w };
    let unkey = |k: Weight| if real { crate::graph::real_weight_from_order_key(k) } else { k };
    let (offsets, mut targets, mut weights) = csr.into_parts();
    for_each_group(&offsets, &mut targets, weights.as_deref_mut(), |_, offs, targets, mut weights| {
        let base = offs[0];
        let mut keyed = Vec::new();
        for w in offs.windows(2) {
            let range = (w[0] - base) as usize..(w[1] - base) as usize;
            match weights.as_deref_mut() {
                None => targets[range].sort_unstable(),
                Some(weights) => {
                    // Sort (target, weight) pairs packed into one key.
                    keyed.clear();
                    keyed.extend(range.clone().map(|i| (u64::from(targets[i]) << 32) | u64::from(key(weights[i]))));
                    keyed.sort_unstable();
                    for (i, packed) in range.zip(&keyed) {
                        targets[i] = (packed >> 32) as NodeId;
                        weights[i] = unkey(*packed as Weight);
                    }
                }
            }
        }
    });
    Csr::from_parts_unchecked(offsets, targets, weights).with_real_weights(real)
}

/// Drops repeated targets from sorted adjacencies, keeping the first (lightest) of each.
fn dedup_sorted(csr: Csr) -> Csr {
    let real = csr.has_real_weights();
    let (offsets, mut targets, mut weights) = csr.into_parts();
    let n = offsets.len() - 1;
    // Compact each adjacency in place, and record its new length.
    let new_degree: Vec<std::sync::atomic::AtomicU64> = (0..n).map(|_| Default::default()).collect();
    for_each_group(&offsets, &mut targets, weights.as_deref_mut(), |first, offs, targets, mut weights| {
        let base = offs[0];
        for (k, w) in offs.windows(2).enumerate() {
            let (start, end) = ((w[0] - base) as usize, (w[1] - base) as usize);
            let mut kept = start;
            for i in start..end {
                if i == start || targets[i] != targets[kept - 1] {
                    targets[kept] = targets[i];
                    if let Some(weights) = weights.as_deref_mut() {
                        weights[kept] = weights[i];
                    }
                    kept += 1;
                }
            }
            new_degree[first as usize + k].store((kept - start) as u64, std::sync::atomic::Ordering::Relaxed);
        }
    });
    let mut new_offsets = vec![0u64; n + 1];
    for u in 0..n {
        new_offsets[u + 1] = new_offsets[u] + new_degree[u].load(std::sync::atomic::Ordering::Relaxed);
    }
    if new_offsets[n] == offsets[n] {
        return Csr::from_parts_unchecked(offsets, targets, weights).with_real_weights(real);
    }
    let m = new_offsets[n] as usize;
    let compact = |old: &[u32]| -> Vec<u32> {
        let mut out = vec![0u32; m];
        let bounds = node_groups(&new_offsets);
        let edge_bounds: Vec<usize> = bounds.iter().map(|&u| new_offsets[u] as usize).collect();
        split_by_bounds(&mut out, &edge_bounds).into_par_iter().enumerate().for_each(|(g, piece)| {
            let mut at = 0;
            for u in bounds[g]..bounds[g + 1] {
                let len = (new_offsets[u + 1] - new_offsets[u]) as usize;
                let from = offsets[u] as usize;
                piece[at..at + len].copy_from_slice(&old[from..from + len]);
                at += len;
            }
        });
        out
    };
    let targets = compact(&targets);
    let weights = weights.as_deref().map(compact);
    Csr::from_parts_unchecked(new_offsets, targets, weights).with_real_weights(real)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adjacency(csr: &Csr) -> Vec<Vec<(u32, u32)>> {
        (0..csr.num_nodes()).map(|u| csr.weighted_neighbors(u).collect()).collect()
    }

    #[test]
    fn keeps_order_as_given() {
        let edges = EdgeList::from_triples(4, &[(2, 1, 5), (0, 3, 1), (2, 0, 7), (0, 3, 2), (3, 3, 9)]);
        let csr = build_csr(edges, &BuildOptions::AS_GIVEN).unwrap();
        assert_eq!(adjacency(&csr), vec![vec![(3, 1), (3, 2)], vec![], vec![(1, 5), (0, 7)], vec![(3, 9)]]);
    }

    #[test]
    fn simple_undirected_keeps_minimum_weight() {
        let edges = EdgeList::from_triples(4, &[(2, 1, 5), (0, 3, 4), (1, 2, 3), (0, 3, 2), (3, 3, 9)]);
        let csr = build_csr(edges, &BuildOptions::UNDIRECTED).unwrap();
        assert_eq!(adjacency(&csr), vec![vec![(3, 2)], vec![(2, 3)], vec![(1, 3)], vec![(0, 2)]]);
    }

    #[test]
    fn allocation_failure_is_an_error() {
        let err = zeroed::<u64>(usize::MAX / 4, "node offsets").unwrap_err().to_string();
        assert!(err.starts_with("not enough memory for node offsets"), "{err}");
    }

    #[test]
    fn rejects_ids_out_of_range() {
        let edges = EdgeList::from_pairs(2, &[(0, 1), (1, 2)]);
        let err = build_csr(edges, &BuildOptions::AS_GIVEN).unwrap_err().to_string();
        assert!(err.contains("edge 1 (1 -> 2)"), "{err}");
    }

    #[test]
    fn same_result_on_any_thread_count() {
        let n = 5000u32;
        let mut state = 12345u64;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) as u32
        };
        let triples: Vec<_> = (0..200_000).map(|_| (next() % n, next() % n, next() % 100)).collect();
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let many = rayon::ThreadPoolBuilder::new().num_threads(7).build().unwrap();
        for options in [BuildOptions::AS_GIVEN, BuildOptions::SIMPLE, BuildOptions::UNDIRECTED] {
            let a = one.install(|| build_csr(EdgeList::from_triples(n, &triples), &options).unwrap());
            let b = many.install(|| build_csr(EdgeList::from_triples(n, &triples), &options).unwrap());
            assert_eq!(a, b);
        }
        // As given: each adjacency lists its edges in input order.
        let csr = many.install(|| build_csr(EdgeList::from_triples(n, &triples), &BuildOptions::AS_GIVEN).unwrap());
        let mut expected = vec![Vec::new(); n as usize];
        for &(u, v, w) in &triples {
            expected[u as usize].push((v, w));
        }
        assert_eq!(adjacency(&csr), expected);
    }

    #[test]
    fn transpose_and_symmetry() {
        let edges = EdgeList::from_triples(3, &[(0, 1, 4), (1, 2, 5), (0, 2, 6)]);
        let graph = build(edges, &BuildOptions::SIMPLE).unwrap();
        let reverse = graph.out().transpose();
        assert_eq!(adjacency(&reverse), vec![vec![], vec![(0, 4)], vec![(0, 6), (1, 5)]]);
        assert!(!graph.is_symmetric());
        let sym = build(EdgeList::from_csr(graph.out()), &BuildOptions::UNDIRECTED).unwrap();
        assert!(sym.is_symmetric());
    }
}
