//! The reverse CSR (every node's in-edges, as out-edges), built in parallel and
//! deterministically.
//!
//! A node's in-edges are listed in the order of the out-edges they are: by source, and parallel
//! edges in their out-list order, whatever the number of threads. Three passes, none of which
//! materializes an edge list:
//!
//! 1. each group of consecutive source nodes (balanced by edges) counts its edges into each
//!    block of target nodes;
//! 2. each group writes its edges, in order, into its own share of each block's range: a stable
//!    radix partition by target block, so sources stay in order within a block;
//! 3. each block places its edges by exact target with a counting scatter, in cache.

use rayon::prelude::*;

use crate::graph::{Csr, EdgeId, NodeId, Weight};
use crate::par::{DisjointWriter, node_groups_of, split_by_bounds};

/// The arrays of a transposed CSR; `weights` and `ids` only when asked for.
pub(crate) struct Transposed {
    pub offsets: Vec<u64>,
    /// The source of every in-edge.
    pub sources: Vec<NodeId>,
    pub weights: Option<Vec<Weight>>,
    /// For every in-edge, its id among the out-edges.
    pub ids: Option<Vec<EdgeId>>,
}

/// In-edges per target block that pass 3 aims at (its arrays stay in cache).
const BLOCK_EDGES: usize = 1 << 16;
/// At most this many target blocks: each group writes to every block in pass 2, and more open
/// write streams than this stop being cheap.
const MAX_BLOCKS: usize = 1024;

/// Transposes `csr`, carrying its weights when `weights` (and it has them) and recording every
/// in-edge's out-edge id when `ids`.
pub(crate) fn transpose(csr: &Csr, weights: bool, ids: bool) -> Transposed {
    let n = csr.num_nodes() as usize;
    let m = csr.num_edges() as usize;
    let (offsets, targets) = (csr.offsets(), csr.targets());
    let in_weights = if weights { csr.weight_words() } else { None };
    if m == 0 {
        return Transposed {
            offsets: vec![0; n + 1],
            sources: Vec::new(),
            weights: in_weights.map(|_| Vec::new()),
            ids: ids.then(Vec::new),
        };
    }
    let threads = rayon::current_num_threads().max(1);
    let want_blocks = (m / BLOCK_EDGES).max(4 * threads).min(MAX_BLOCKS);
    let mut shift = 0;
    while n.div_ceil(1 << shift) > want_blocks {
        shift += 1;
    }
    let blocks = n.div_ceil(1 << shift);
    let groups = node_groups_of(offsets, 4 * threads);
    let group_edges = |g: usize| offsets[groups[g]] as usize..offsets[groups[g + 1]] as usize;

    // Pass 1: per group, its edges into each target block.
    let histograms: Vec<Vec<usize>> = (0..groups.len() - 1)
        .into_par_iter()
        .map(|g| {
            let mut hist = vec![0usize; blocks];
            for &v in &targets[group_edges(g)] {
                hist[(v >> shift) as usize] += 1;
            }
            hist
        })
        .collect();
    let mut block_start = vec![0usize; blocks + 1];
    for b in 0..blocks {
        block_start[b + 1] = block_start[b] + histograms.iter().map(|h| h[b]).sum::<usize>();
    }
    let mut cursors = Vec::with_capacity(histograms.len());
    let mut running = block_start[..blocks].to_vec();
    for hist in &histograms {
        cursors.push(running.clone());
        for (r, h) in running.iter_mut().zip(hist) {
            *r += h;
        }
    }
    drop(histograms);

    // Pass 2: the stable partition by target block; a key is (target << 32) | source.
    let mut keys = vec![0u64; m];
    let mut part_weights = vec![0 as Weight; if in_weights.is_some() { m } else { 0 }];
    let mut part_ids = vec![0 as EdgeId; if ids { m } else { 0 }];
    {
        let (wk, ww, wi) = (
            DisjointWriter::new(&mut keys),
            DisjointWriter::new(&mut part_weights),
            DisjointWriter::new(&mut part_ids),
        );
        cursors.into_par_iter().enumerate().for_each(|(g, mut cursor)| {
            for u in groups[g]..groups[g + 1] {
                for e in offsets[u] as usize..offsets[u + 1] as usize {
                    let v = targets[e];
                    let slot = &mut cursor[(v >> shift) as usize];
                    // SAFETY: group g owns positions [cursors[g][b], cursors[g + 1][b]) of each
                    // block b, and `slot` stays in that range by construction of the histograms.
                    unsafe {
                        wk.write(*slot, (u64::from(v) << 32) | u as u64);
                        if let Some(w) = in_weights {
                            ww.write(*slot, w[e]);
                        }
                        if ids {
                            wi.write(*slot, e as EdgeId);
                        }
                    }
                    *slot += 1;
                }
            }
        });
    }

    // Pass 3: per block, a counting scatter by exact target into the final arrays.
    let mut out_offsets = vec![0u64; n + 1];
    let mut sources = vec![0 as NodeId; m];
    let mut weights_out = vec![0 as Weight; if in_weights.is_some() { m } else { 0 }];
    let mut ids_out = vec![0 as EdgeId; if ids { m } else { 0 }];
    let source_pieces = split_by_bounds(&mut sources, &block_start);
    let weight_pieces = optional_pieces(&mut weights_out, in_weights.is_some(), &block_start);
    let id_pieces = optional_pieces(&mut ids_out, ids, &block_start);
    let offset_pieces: Vec<&mut [u64]> = out_offsets[..n].chunks_mut(1 << shift).collect();
    offset_pieces.into_par_iter().zip(source_pieces).zip(weight_pieces).zip(id_pieces).enumerate().for_each(
        |(b, (((node_offsets, sources), mut weights), mut ids))| {
            let lo = b << shift;
            let range = block_start[b]..block_start[b + 1];
            for &key in &keys[range.clone()] {
                node_offsets[(key >> 32) as usize - lo] += 1;
            }
            let mut cursor = Vec::with_capacity(node_offsets.len());
            let mut sum = 0usize;
            for slot in node_offsets.iter_mut() {
                let degree = *slot as usize;
                cursor.push(sum);
                *slot = (block_start[b] + sum) as u64;
                sum += degree;
            }
            for k in range {
                let key = keys[k];
                let at = &mut cursor[(key >> 32) as usize - lo];
                sources[*at] = key as NodeId;
                if let Some(weights) = weights.as_deref_mut() {
                    weights[*at] = part_weights[k];
                }
                if let Some(ids) = ids.as_deref_mut() {
                    ids[*at] = part_ids[k];
                }
                *at += 1;
            }
        },
    );
    out_offsets[n] = m as u64;
    Transposed { offsets: out_offsets, sources, weights: in_weights.map(|_| weights_out), ids: ids.then_some(ids_out) }
}

/// `values` cut at `bounds` when `present`, else one `None` per piece.
fn optional_pieces<'a, T>(values: &'a mut [T], present: bool, bounds: &[usize]) -> Vec<Option<&'a mut [T]>> {
    if present {
        split_by_bounds(values, bounds).into_iter().map(Some).collect()
    } else {
        (0..bounds.len() - 1).map(|_| None).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{BuildOptions, EdgeList, build_csr};

    /// The transpose by definition: in-edges gathered by scanning the out-edges in id order.
    fn naive(csr: &Csr) -> (Vec<u64>, Vec<NodeId>, Vec<Weight>, Vec<EdgeId>) {
        let n = csr.num_nodes() as usize;
        let mut lists: Vec<Vec<(NodeId, Weight, EdgeId)>> = vec![Vec::new(); n];
        for u in 0..csr.num_nodes() {
            for e in csr.edge_range(u) {
                let w = csr.weight_words().map_or(0, |w| w[e]);
                lists[csr.targets()[e] as usize].push((u, w, e as EdgeId));
            }
        }
        let mut offsets = vec![0u64];
        let (mut sources, mut weights, mut ids) = (Vec::new(), Vec::new(), Vec::new());
        for list in lists {
            offsets.push(offsets.last().unwrap() + list.len() as u64);
            for (u, w, e) in list {
                sources.push(u);
                weights.push(w);
                ids.push(e);
            }
        }
        (offsets, sources, weights, ids)
    }

    fn random_csr(n: u32, m: usize, seed: u64, skew: bool) -> Csr {
        let mut state = seed;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) as u32
        };
        let triples: Vec<_> = (0..m)
            .map(|_| {
                let v = if skew && next() % 4 == 0 { next() % n.min(3) } else { next() % n };
                (next() % n, v, next() % 50)
            })
            .collect();
        build_csr(EdgeList::from_triples(n, &triples), &BuildOptions::AS_GIVEN).unwrap()
    }

    #[test]
    fn matches_the_definition_on_any_thread_count() {
        let cases = [(1, 0), (5, 0), (1, 3), (7, 40), (300, 5000), (5000, 200_000), (70_000, 300_000)];
        for (i, &(n, m)) in cases.iter().enumerate() {
            let csr = random_csr(n, m, i as u64 + 1, i % 2 == 0);
            let (offsets, sources, weights, ids) = naive(&csr);
            for threads in [1, 3, 8] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                let t = pool.install(|| transpose(&csr, true, true));
                assert_eq!(t.offsets, offsets, "n {n} m {m} threads {threads}");
                assert_eq!(t.sources, sources, "n {n} m {m} threads {threads}");
                assert_eq!(t.weights.unwrap(), weights);
                assert_eq!(t.ids.unwrap(), ids);
                let bare = pool.install(|| transpose(&csr, false, false));
                assert_eq!(
                    (bare.offsets, bare.sources, bare.weights, bare.ids),
                    (offsets.clone(), sources.clone(), None, None)
                );
            }
        }
    }
}
