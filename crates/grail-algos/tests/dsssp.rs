//! Incremental SSSP (`dsssp.grail`) on the CPU, on one and several threads: after every batch of
//! insertions the repaired distances equal a fresh Dijkstra's on the graph as it is (the driver's
//! own check, `verify`) and the suite's SSSP run from scratch (`fresh`), on random graphs of every
//! kind, with batches that reach new parts of the graph, lower nothing, add self-loops, parallel
//! and zero-weight edges.

use grail_algos::Target;
use grail_algos::dsssp::{Options, run};
use grail_graph::generate::{GenOptions, Generator, generate};
use grail_graph::insert::{Insertion, random_batches};
use grail_graph::reference::sssp;
use grail_graph::{Graph, NoProgress};
use grail_ir::OptConfig;

fn graphs() -> Vec<(String, Graph)> {
    let generators = [
        Generator::Uniform { nodes: 300, average_degree: 2 },
        Generator::Uniform { nodes: 1000, average_degree: 6 },
        Generator::Rmat { scale: 9, edge_factor: 8, a: 0.57, b: 0.19, c: 0.19, permute: true },
        Generator::Grid { rows: 20, cols: 30 },
        Generator::Road { nodes: 800 },
    ];
    let mut graphs = Vec::new();
    for (i, generator) in generators.iter().enumerate() {
        for (seed, max_weight) in [(1, Some(100)), (2, None)] {
            let options = GenOptions { seed: seed + i as u64, max_weight };
            let graph = generate(generator, &options, false, &NoProgress).unwrap();
            graphs.push((format!("{} seed {seed} weights {max_weight:?}", generator.name()), graph));
        }
    }
    graphs
}

/// Random batches, then batches of edges out of the source's unreached part into it and back,
/// self-loops, zero weights and repeats of existing edges.
fn batches(graph: &Graph, seed: u64) -> Vec<Vec<Insertion>> {
    let n = graph.num_nodes();
    let mut batches = random_batches(n, 3, 1 + n as usize / 50, 50, seed);
    let unreached: Vec<u32> =
        sssp(graph, 0).iter().enumerate().filter(|(_, d)| **d == u64::MAX).map(|(v, _)| v as u32).collect();
    if let Some(&far) = unreached.first() {
        batches.push(vec![(0, far, 7), (far, 0, 1)]);
    }
    batches.push(vec![(1 % n, 1 % n, 0), (0, 2 % n, 0), (0, 2 % n, 0)]);
    let first_edge: Vec<Insertion> = graph.out().weighted_neighbors(0).take(1).map(|(v, w)| (0, v, w)).collect();
    batches.push(first_edge);
    batches.push(Vec::new());
    // Many edges out of one node: its row outgrows its room and moves.
    batches.push((0..40).map(|i| (0, (i * 7) % n, i % 5)).collect());
    batches
}

#[test]
fn repaired_distances_equal_fresh_ones_after_every_batch() {
    for (i, (what, graph)) in graphs().into_iter().enumerate() {
        let batches = batches(&graph, i as u64);
        for threads in [1, 3] {
            // One thread with no optimization (no outlined region), three with every one.
            let opt = if threads == 1 { OptConfig::NONE } else { OptConfig::all() };
            let options =
                Options { target: Target::Cpu, threads, opt, verify: true, fresh: true, ..Options::default() };
            let mut seen = 0;
            let report = run(graph.clone(), 0, &batches, &options, |b| {
                seen += 1;
                assert_eq!(b.index, seen);
            })
            .unwrap_or_else(|e| panic!("{what}, {threads} threads: {e}"));
            assert_eq!(seen, batches.len());
            let inserted: usize = batches.iter().map(Vec::len).sum();
            assert_eq!(report.graph.num_edges(), graph.num_edges() + inserted as u64, "{what}");
            assert_eq!(report.distances, sssp(&report.graph, 0), "{what}, {threads} threads");
            assert!(report.batches.iter().all(|b| b.verified && b.fresh.is_some()));
        }
        // The reference target repairs the same way, sequentially.
        let options = Options { target: Target::Reference, verify: true, ..Options::default() };
        let report = run(graph.clone(), 0, &batches, &options, |_| {}).unwrap();
        assert_eq!(report.distances, sssp(&report.graph, 0), "{what}, reference");
    }
}

#[test]
fn batches_naming_missing_nodes_are_refused_with_their_number() {
    let graph =
        generate(&Generator::Uniform { nodes: 10, average_degree: 2 }, &GenOptions::default(), false, &NoProgress)
            .unwrap();
    let options = Options { target: Target::Reference, ..Options::default() };
    let err = run(graph, 0, &[vec![(0, 1, 1)], vec![(3, 10, 1)]], &options, |_| {}).unwrap_err().to_string();
    assert!(err.contains("batch 2") && err.contains("3 -> 10"), "{err}");
}

/// A program that names edges by number cannot run on a graph with room after its rows (edge
/// ids there are positions, not 0 to the edge count): the error says so and why; the suite's SSSP
/// (what a fresh solve runs) and BFS run, and verify.
#[test]
fn programs_naming_edges_by_number_are_refused_on_a_graph_with_room() {
    let mut graph = generate(
        &Generator::Uniform { nodes: 200, average_degree: 4 },
        &GenOptions { seed: 3, max_weight: Some(9) },
        false,
        &NoProgress,
    )
    .unwrap();
    graph.insert_edges(&[(0, 5, 1), (0, 6, 2), (0, 7, 3), (0, 8, 4)]).unwrap();
    assert!(!graph.out().is_packed());
    let params = |variant: &str| grail_algos::RunParams { variant: Some(variant.into()), ..Default::default() };
    let err = grail_algos::run(grail_algos::Algorithm::Cc, &graph, Target::Cpu, &params("uf")).unwrap_err().to_string();
    assert!(err.contains("room") && err.contains("loops over every edge"), "{err}");
    for (algorithm, variant) in [(grail_algos::Algorithm::Sssp, "nf"), (grail_algos::Algorithm::Bfs, "wl")] {
        let params = params(variant);
        let result = grail_algos::run(algorithm, &graph, Target::Cpu, &params).unwrap();
        let verified = grail_algos::verify(algorithm, &graph, &params, &result.output);
        assert!(verified.is_ok(), "{algorithm:?} {variant}: {verified:?}");
    }
}
