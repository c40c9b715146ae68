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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Inserting in place into a CSR with room (rows moved when they outgrow their room, the
    /// whole graph laid out again when half its slots are unused) holds, batch after batch, the
    /// graph that inserting by copying gives, row for row; the report says where each inserted
    /// edge went, and what moved.
    #[test]
    fn room_per_node_holds_what_copying_gives(
        n in 1u32..30,
        initial in prop::collection::vec((0u32..1000, 0u32..1000, 0u32..20), 0..80),
        batches in prop::collection::vec(prop::collection::vec((0u32..1000, 0u32..1000, 1u32..20), 0..40), 1..10),
        hub in 0u32..1000,
        weighted in any::<bool>(),
    ) {
        let mut copied = csr_of(n, &initial, weighted);
        let mut roomy = copied.clone();
        for (b, batch) in batches.iter().enumerate() {
            // Every other batch leans on one node, so that its row outgrows its room.
            let batch: Vec<Insertion> = batch
                .iter()
                .map(|&(u, v, w)| (if b % 2 == 1 { hub % n } else { u % n }, v % n, if weighted { w } else { 1 }))
                .collect();
            let before = roomy.clone();
            copied = copied.with_inserted(&batch).unwrap();
            let report = roomy.insert(&batch).unwrap();
            prop_assert!(!roomy.is_packed());
            prop_assert_eq!(roomy.num_edges(), copied.num_edges());
            prop_assert_eq!(roomy.edge_slots(), report.slots);
            let packed = roomy.packed();
            prop_assert_eq!(packed.offsets(), copied.offsets());
            prop_assert_eq!(packed.targets(), copied.targets());
            prop_assert_eq!(packed.weights(), copied.weights());
            for u in 0..n {
                prop_assert_eq!(roomy.neighbors(u), copied.neighbors(u));
            }
            // The placed batch is the batch by source, stably.
            let mut sorted = batch.clone();
            sorted.sort_by_key(|&(u, _, _)| u);
            prop_assert_eq!(&report.placed, &sorted);
            if !report.relaid {
                // Unmoved rows start where they did; moved ones where the report says.
                for u in 0..n {
                    let moved = report.moves.iter().find(|m| m.node == u);
                    match moved {
                        Some(m) => {
                            prop_assert_eq!(roomy.offsets()[u as usize], m.to);
                            prop_assert_eq!(m.from, before.offsets()[u as usize]);
                            prop_assert_eq!(m.len, before.degree(u));
                        }
                        None => prop_assert_eq!(roomy.offsets()[u as usize], before.offsets()[u as usize]),
                    }
                }
            }
        }
        // Read back as a device would, the arrays make the same graph.
        let ends = roomy.ends().to_vec();
        let again = Csr::from_parts_with_room(
            roomy.offsets().to_vec(),
            ends,
            roomy.targets().to_vec(),
            roomy.weights().map(<[u32]>::to_vec),
        )
        .unwrap();
        prop_assert_eq!(again.packed(), roomy.packed());
    }
}

/// A node that does not exist and real weights are refused, and the CSR is left as it was.
#[test]
fn inserting_in_place_refuses_bad_batches_and_changes_nothing() {
    let mut csr = csr_of(3, &[(0, 1, 5), (1, 2, 7)], true).with_room();
    let before = csr.clone();
    let error = csr.insert(&[(0, 1, 1), (2, 9, 1)]).unwrap_err().to_string();
    assert!(error.contains("inserted edge 2 (2 -> 9)"), "{error}");
    assert_eq!(csr, before);
    // An unweighted graph becomes weighted, its old edges weighing 1.
    let mut unweighted = csr_of(3, &[(0, 1, 5), (1, 2, 7)], false);
    let report = unweighted.insert(&[(2, 0, 4)]).unwrap();
    assert!(report.weighted_now && report.relaid);
    assert_eq!(unweighted.weighted_neighbors(2).collect::<Vec<_>>(), vec![(0, 4)]);
    assert_eq!(unweighted.weighted_neighbors(0).collect::<Vec<_>>(), vec![(1, 1)]);
    // The reverse of a CSR with room is its packed copy's.
    assert_eq!(csr.transpose(), csr.packed().transpose());
    assert_eq!(csr.edge_sources().len() as u64, csr.edge_slots());
    // Every slot of a row holds the row's node; the room after a row's end holds 0.
    let sources = csr.edge_sources();
    for (e, &source) in sources.iter().enumerate() {
        let owner = (0..csr.num_nodes()).find(|&u| csr.edge_range(u).contains(&e));
        assert_eq!(source, owner.unwrap_or(0), "slot {e}");
    }
    let packed = csr.packed();
    assert_eq!(packed.edge_sources(), vec![0, 1]);
}

/// A graph with room per node is written and partitioned as its packed CSR.
#[test]
fn a_graph_with_room_is_written_and_partitioned_packed() {
    let mut graph = Graph::from_csr(csr_of(6, &[(0, 1, 5), (1, 2, 7), (2, 3, 1), (4, 5, 2)], true));
    graph.insert_edges(&[(0, 5, 3), (0, 4, 2), (0, 3, 1), (0, 2, 9), (5, 0, 4)]).unwrap();
    assert!(!graph.out().is_packed());
    let packed = graph.out().packed();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("grown.gcsr");
    grail_graph::io::write_graph(&graph, &path, None, &grail_graph::NoProgress).unwrap();
    let read = grail_graph::io::read_graph(&path, &Default::default(), &grail_graph::NoProgress).unwrap();
    assert_eq!(read.out(), &packed);
    let parts = grail_graph::partition::partition(&graph, 2, grail_graph::partition::Method::Ordered, 1).unwrap();
    let again =
        grail_graph::partition::partition(&Graph::from_csr(packed), 2, grail_graph::partition::Method::Ordered, 1)
            .unwrap();
    assert_eq!(parts.owner(), again.owner());
}
