//! Inserting a batch of edges into a CSR: the graph a dynamic algorithm sees after each batch
//! (incremental SSSP's updates).
//!
//! [`Csr::with_inserted`] writes a new packed CSR in one parallel pass: each node's old edges,
//! then its inserted ones in batch order, so edge ids of a node's old edges keep their relative
//! order and the inserted edges come last. The cost is one copy of the edge arrays (memory
//! bandwidth), however small the batch: a dynamic algorithm inserts in place instead, into a
//! CSR with room per node ([`Csr::insert`], module [`crate::room`]), which places the edges the
//! same way; this is the packed reference the tests compare it with.

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;

use crate::error::{GraphError, Location, ParseError, Result};
use crate::graph::{Csr, NodeId, Weight};
use crate::par::{node_groups, split_by_bounds};

/// An edge to insert: source, target, weight (1 for an unweighted graph's edges).
pub type Insertion = (NodeId, NodeId, Weight);

impl Csr {
    /// Fails unless every endpoint of `batch` is a node and the weights are integers (a batch's
    /// weights are): the first edge that names a missing node, by its number in the batch.
    pub(crate) fn check_batch(&self, batch: &[Insertion]) -> Result<()> {
        let n = self.num_nodes();
        let bad = |&(u, v, _): &Insertion| u >= n || v >= n;
        // In chunks: an element-wise parallel search cost ten times a sequential one.
        const CHUNK: usize = 1 << 14;
        if let Some(c) = batch.par_chunks(CHUNK).position_first(|chunk| chunk.iter().any(bad)) {
            let i = c * CHUNK + batch[c * CHUNK..].iter().position(bad).expect("the chunk has one");
            let (u, v, _) = batch[i];
            return Err(GraphError::invalid(format!(
                "inserted edge {} ({u} -> {v}) names a node the graph does not have (it has {n} nodes)",
                i + 1
            )));
        }
        if self.has_real_weights() {
            return Err(GraphError::invalid(
                "the graph has real weights; inserted edges carry integer weights (read it with --weights round|scale)",
            ));
        }
        Ok(())
    }

    /// This CSR with `batch` inserted (parallel edges and self-loops kept, as a multigraph
    /// would). An unweighted CSR becomes weighted (its edges weigh 1) when an inserted edge
    /// weighs anything else. Every endpoint must be a node; real weights are refused (the
    /// batch's weights are integers).
    ///
    /// # Panics
    ///
    /// On a CSR with room per node ([`Csr::insert`] is how such a CSR takes a batch).
    pub fn with_inserted(&self, batch: &[Insertion]) -> Result<Csr> {
        assert!(self.is_packed(), "with_inserted on a CSR with room per node");
        let n = self.num_nodes();
        self.check_batch(batch)?;
        let weighted = self.is_weighted() || batch.iter().any(|&(_, _, w)| w != 1);
        // The batch by source, stable (a node's inserted edges keep their batch order).
        let mut sorted = batch.to_vec();
        sorted.par_sort_by_key(|&(u, _, _)| u);
        let old = self.offsets();
        // New offset of v: its old offset plus the inserted edges of the nodes before it.
        let offsets: Vec<u64> = (0..=n as usize)
            .into_par_iter()
            .map(|v| old[v] + sorted.partition_point(|&(u, _, _)| (u as usize) < v) as u64)
            .collect();
        let total = offsets[n as usize] as usize;
        let mut targets: Vec<NodeId> = vec![0; total];
        let mut weights: Vec<Weight> = if weighted { vec![0; total] } else { Vec::new() };
        let groups = node_groups(&offsets);
        let edge_bounds: Vec<usize> = groups.iter().map(|&v| offsets[v] as usize).collect();
        let target_pieces = split_by_bounds(&mut targets, &edge_bounds);
        let weight_pieces: Vec<&mut [Weight]> = if weighted {
            split_by_bounds(&mut weights, &edge_bounds)
        } else {
            (0..groups.len() - 1).map(|_| &mut [][..]).collect()
        };
        let old_weights = self.weights();
        target_pieces.into_par_iter().zip(weight_pieces).enumerate().for_each(|(g, (targets, weights))| {
            let mut at = 0;
            for v in groups[g]..groups[g + 1] {
                let range = self.edge_range(v as NodeId);
                let len = range.len();
                targets[at..at + len].copy_from_slice(&self.targets()[range.clone()]);
                if weighted {
                    match old_weights {
                        Some(w) => weights[at..at + len].copy_from_slice(&w[range]),
                        None => weights[at..at + len].fill(1),
                    }
                }
                at += len;
                let first = (offsets[v] - old[v]) as usize;
                let last = (offsets[v + 1] - old[v + 1]) as usize;
                for &(_, t, w) in &sorted[first..last] {
                    targets[at] = t;
                    if weighted {
                        weights[at] = w;
                    }
                    at += 1;
                }
            }
        });
        Csr::from_parts(offsets, targets, weighted.then_some(weights))
    }
}

/// Reads a file of batches of insertions: one `u v w` line per edge (0-based node ids; `w`, a
/// non-negative integer weight, may be left out for 1), batches separated by one or more blank
/// lines, `#` starting a comment. Every error names the file and the line.
pub fn read_batches(path: &std::path::Path) -> Result<Vec<Vec<Insertion>>> {
    let bytes = std::fs::read(path).map_err(|e| GraphError::io(path, e))?;
    parse_batches(&bytes).map_err(|e| e.in_file(path))
}

/// [`read_batches`] on the bytes of such a file.
pub fn parse_batches(bytes: &[u8]) -> Result<Vec<Vec<Insertion>>, ParseError> {
    let mut batches = Vec::new();
    let mut current = Vec::new();
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let at = Location::Line(i as u64 + 1);
        let line = std::str::from_utf8(line).map_err(|_| ParseError::new(at, "the line is not UTF-8"))?;
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            if !current.is_empty() {
                batches.push(std::mem::take(&mut current));
            }
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        if !(2..=3).contains(&fields.len()) {
            return Err(ParseError::new(
                at,
                format!("expected `u v` or `u v w` (an edge to insert), found {} fields", fields.len()),
            ));
        }
        let number = |text: &str, what: &str| -> Result<u32, ParseError> {
            text.parse::<u32>()
                .map_err(|_| ParseError::new(at, format!("{what} `{text}` is not a number from 0 to 4294967295")))
        };
        let u = number(fields[0], "the source")?;
        let v = number(fields[1], "the target")?;
        let w = match fields.get(2) {
            Some(text) => number(text, "the weight")?,
            None => 1,
        };
        current.push((u, v, w));
    }
    if !current.is_empty() {
        batches.push(current);
    }
    Ok(batches)
}

/// `count` batches of `size` random edges between the `num_nodes` nodes, weights uniform in
/// `[1, max_weight]`: the same for a seed, whatever the machine.
pub fn random_batches(
    num_nodes: NodeId,
    count: usize,
    size: usize,
    max_weight: Weight,
    seed: u64,
) -> Vec<Vec<Insertion>> {
    assert!(num_nodes > 0 && max_weight > 0, "random insertions need nodes and a positive weight bound");
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    (0..count)
        .map(|_| {
            (0..size)
                .map(|_| {
                    let u = rng.random_range(0..num_nodes);
                    let v = rng.random_range(0..num_nodes);
                    (u, v, rng.random_range(1..=max_weight))
                })
                .collect()
        })
        .collect()
}

/// `count` batches of `size` edges with locality, as new roads or links between nearby places:
/// each joins a random node to the end of a random walk of 2 to 4 out-edges from it (or to a
/// random node when the walk gets stuck), weighing the walk's total weight times a factor in
/// [1/2, 1) (a shortcut, but not a free one; at least 1). The same for a seed, whatever the
/// machine.
pub fn random_local_batches(csr: &Csr, count: usize, size: usize, seed: u64) -> Vec<Vec<Insertion>> {
    let n = csr.num_nodes();
    assert!(n > 0, "random insertions need nodes");
    assert!(!csr.has_real_weights(), "local insertions weigh integer walks");
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut edge = || {
        let u = rng.random_range(0..n);
        let hops = rng.random_range(2..=4);
        let (mut at, mut length) = (u, 0u64);
        for _ in 0..hops {
            let degree = csr.degree(at);
            if degree == 0 {
                break;
            }
            let i = csr.edge_range(at).start + rng.random_range(0..degree) as usize;
            length += u64::from(csr.weights().map_or(1, |w| w[i]));
            at = csr.targets()[i];
        }
        if at == u {
            at = rng.random_range(0..n);
            length = 1;
        }
        let factor = rng.random_range(0.5..1.0);
        let weight = ((length as f64 * factor) as u64).clamp(1, u64::from(Weight::MAX)) as Weight;
        (u, at, weight)
    };
    (0..count).map(|_| (0..size).map(|_| edge()).collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edges(csr: &Csr) -> Vec<(NodeId, NodeId, Weight)> {
        (0..csr.num_nodes()).flat_map(|u| csr.weighted_neighbors(u).map(move |(v, w)| (u, v, w))).collect()
    }

    #[test]
    fn inserted_edges_follow_each_nodes_old_ones() {
        let csr = Csr::from_parts(vec![0, 2, 2, 3], vec![1, 2, 0], Some(vec![5, 6, 7])).unwrap();
        let new = csr.with_inserted(&[(1, 2, 9), (0, 0, 1), (2, 1, 3), (0, 2, 4)]).unwrap();
        assert_eq!(new.offsets(), &[0, 4, 5, 7]);
        assert_eq!(edges(&new), vec![(0, 1, 5), (0, 2, 6), (0, 0, 1), (0, 2, 4), (1, 2, 9), (2, 0, 7), (2, 1, 3)]);
    }

    #[test]
    fn unweighted_graphs_become_weighted_only_when_needed() {
        let csr = Csr::from_parts(vec![0, 1, 1], vec![1], None).unwrap();
        let unit = csr.with_inserted(&[(1, 0, 1)]).unwrap();
        assert!(!unit.is_weighted());
        assert_eq!(unit.targets(), &[1, 0]);
        let heavy = csr.with_inserted(&[(1, 0, 8)]).unwrap();
        assert_eq!(edges(&heavy), vec![(0, 1, 1), (1, 0, 8)]);
        assert!(csr.with_inserted(&[]).unwrap().targets() == csr.targets());
    }

    #[test]
    fn batch_files_split_at_blank_lines_and_name_bad_lines() {
        let text = b"# two batches\n0 1 5\n1 2\n\n\n2 0 7 # back\n";
        assert_eq!(parse_batches(text).unwrap(), vec![vec![(0, 1, 5), (1, 2, 1)], vec![(2, 0, 7)]]);
        assert!(parse_batches(b"\n\n").unwrap().is_empty());
        let err = parse_batches(b"0 1 2\n0 -1 2\n").unwrap_err();
        assert_eq!(err.location, Location::Line(2));
        assert!(err.message.contains("`-1`"), "{}", err.message);
        assert!(parse_batches(b"0 1 2 3\n").unwrap_err().message.contains("4 fields"));
    }

    #[test]
    fn random_batches_are_in_range_and_repeatable() {
        let batches = random_batches(10, 3, 50, 4, 9);
        assert_eq!(batches.len(), 3);
        assert!(batches.iter().flatten().all(|&(u, v, w)| u < 10 && v < 10 && (1..=4).contains(&w)));
        assert_eq!(batches, random_batches(10, 3, 50, 4, 9));
        assert_ne!(batches, random_batches(10, 3, 50, 4, 10));
    }

    #[test]
    fn local_batches_join_nearby_nodes_by_shorter_walks() {
        // A path 0 -> 1 -> ... -> 99, each edge weighing 10.
        let offsets: Vec<u64> = (0..=100u64).map(|v| v.min(99)).collect();
        let csr = Csr::from_parts(offsets, (1..100).collect(), Some(vec![10; 99])).unwrap();
        let batches = random_local_batches(&csr, 2, 200, 3);
        assert_eq!(batches, random_local_batches(&csr, 2, 200, 3));
        for &(u, v, w) in batches.iter().flatten() {
            if v > u {
                // Along the path: 2 to 4 hops ahead (fewer where the path ends), cheaper than
                // the walk but at least half.
                let hops = v - u;
                assert!((2..=4).contains(&hops) || v == 99, "{u} -> {v}");
                assert!((5 * hops..10 * hops).contains(&w), "{u} -> {v} weighs {w}");
            } else {
                assert_eq!(w, 1, "a stuck walk gives a random edge of weight 1");
            }
        }
    }

    #[test]
    fn endpoints_outside_the_graph_are_named() {
        let csr = Csr::from_parts(vec![0, 1, 1], vec![1], None).unwrap();
        let err = csr.with_inserted(&[(0, 1, 1), (0, 2, 1)]).unwrap_err().to_string();
        assert!(err.contains("inserted edge 2 (0 -> 2)") && err.contains("2 nodes"), "{err}");
    }
}
