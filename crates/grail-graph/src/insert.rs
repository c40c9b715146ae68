//! Inserting a batch of edges into a CSR: the graph a dynamic algorithm sees after each batch
//! (incremental SSSP's updates).
//!
//! The new CSR is written in one parallel pass: each node's old edges, then its inserted ones in
//! batch order, so edge ids of a node's old edges keep their relative order and the inserted
//! edges come last. The cost is one copy of the edge arrays (memory bandwidth), however small
//! the batch; what a batch costs to repair is the algorithm's business.

use rayon::prelude::*;

use crate::error::{GraphError, Result};
use crate::graph::{Csr, NodeId, Weight};
use crate::par::{node_groups, split_by_bounds};

/// An edge to insert: source, target, weight (1 for an unweighted graph's edges).
pub type Insertion = (NodeId, NodeId, Weight);

impl Csr {
    /// This CSR with `batch` inserted (parallel edges and self-loops kept, as a multigraph
    /// would). An unweighted CSR becomes weighted (its edges weigh 1) when an inserted edge
    /// weighs anything else. Every endpoint must be a node; real weights are refused (the
    /// batch's weights are integers).
    pub fn with_inserted(&self, batch: &[Insertion]) -> Result<Csr> {
        let n = self.num_nodes();
        if let Some((i, &(u, v, _))) = batch.iter().enumerate().find(|(_, (u, v, _))| *u >= n || *v >= n) {
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
    fn endpoints_outside_the_graph_are_named() {
        let csr = Csr::from_parts(vec![0, 1, 1], vec![1], None).unwrap();
        let err = csr.with_inserted(&[(0, 1, 1), (0, 2, 1)]).unwrap_err().to_string();
        assert!(err.contains("inserted edge 2 (0 -> 2)") && err.contains("2 nodes"), "{err}");
    }
}
