//! Edge insertion into a CSR and the incremental SSSP reference built on it, against a graph
//! built from scratch and a fresh Dijkstra's.

use grail_graph::insert::Insertion;
use grail_graph::reference::{repair_sssp, sssp};
use grail_graph::{Csr, Graph};
use proptest::prelude::*;

/// A graph of `n` nodes from `(u, v, w)` triples (ids taken modulo `n`).
fn csr_of(n: u32, edges: &[(u32, u32, u32)], weighted: bool) -> Csr {
    let mut adjacency = vec![Vec::new(); n as usize];
    for &(u, v, w) in edges {
        adjacency[(u % n) as usize].push((v % n, w));
    }
    let mut offsets = vec![0u64];
    let (mut targets, mut weights) = (Vec::new(), Vec::new());
    for list in &adjacency {
        for &(v, w) in list {
            targets.push(v);
            weights.push(w);
        }
        offsets.push(targets.len() as u64);
    }
    Csr::from_parts(offsets, targets, weighted.then_some(weights)).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Inserting batch after batch gives the graph built from all the edges at once, node by
    /// node in the same order, and repairing the distances after each batch gives a fresh
    /// Dijkstra's on the graph so far.
    #[test]
    fn batches_match_a_graph_built_at_once(
        n in 1u32..40,
        initial in prop::collection::vec((0u32..1000, 0u32..1000, 0u32..20), 0..120),
        batches in prop::collection::vec(prop::collection::vec((0u32..1000, 0u32..1000, 0u32..20), 0..30), 1..6),
        source in 0u32..1000,
    ) {
        let source = source % n;
        let mut csr = csr_of(n, &initial, true);
        let mut all = initial.clone();
        let mut distances = sssp(&Graph::from_csr(csr.clone()), source);
        for batch in &batches {
            let batch: Vec<Insertion> = batch.iter().map(|&(u, v, w)| (u % n, v % n, w)).collect();
            csr = csr.with_inserted(&batch).unwrap();
            all.extend(batch.iter().copied());
            let expected = csr_of(n, &all, true);
            prop_assert_eq!(csr.offsets(), expected.offsets());
            prop_assert_eq!(csr.targets(), expected.targets());
            prop_assert_eq!(csr.weights(), expected.weights());
            let graph = Graph::from_csr(csr.clone());
            let before = distances.clone();
            let lowered = repair_sssp(&graph, &mut distances, &batch);
            let fresh = sssp(&graph, source);
            prop_assert_eq!(&distances, &fresh);
            prop_assert_eq!(lowered, before.iter().zip(&fresh).filter(|(b, f)| f < b).count());
        }
    }
}
