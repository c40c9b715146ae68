//! Generators and reorderings through the public API only.

use std::time::Instant;

use grail_graph::generate::{GenOptions, Generator, generate};
use grail_graph::reorder::{Reordering, reorder};
use grail_graph::{BuildOptions, NoProgress, build};

#[test]
fn public_api_round_trip() {
    let options = GenOptions { seed: 2024, max_weight: Some(255) };
    for (generator, undirected) in [
        (Generator::graph500(10), true),
        (Generator::Uniform { nodes: 500, average_degree: 6 }, false),
        (Generator::Grid { rows: 20, cols: 30 }, true),
        (Generator::Road { nodes: 777 }, true),
    ] {
        let graph = generate(&generator, &options, undirected, &NoProgress).unwrap();
        assert_eq!(graph.is_symmetric(), undirected, "{}", generator.name());
        let relabelled = reorder(&graph, Reordering::Bfs).apply(&graph).unwrap();
        assert_eq!(relabelled.num_edges(), graph.num_edges());
        assert_eq!(relabelled.is_symmetric(), undirected);
        assert_eq!(relabelled.node_props.schema().count(), graph.node_props.schema().count());
    }
}

/// Timing of the Graph500 scale-20 edge list; run with
/// `cargo test --release -p grail-graph --test generators -- --ignored --nocapture`.
#[test]
#[ignore = "timing; run in release mode"]
fn rmat_scale_20_timing() {
    let generator = Generator::graph500(20);
    let options = GenOptions { seed: 1, max_weight: None };
    let _ = generator.edges(&options, &NoProgress).unwrap();
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let start = Instant::now();
        let edges = generator.edges(&options, &NoProgress).unwrap();
        best = best.min(start.elapsed().as_secs_f64());
        assert_eq!(edges.len(), 16 << 20);
    }
    let unpermuted = Generator::Rmat { scale: 20, edge_factor: 16, a: 0.57, b: 0.19, c: 0.19, permute: false };
    let mut best_unpermuted = f64::INFINITY;
    for _ in 0..3 {
        let start = Instant::now();
        let _ = unpermuted.edges(&options, &NoProgress).unwrap();
        best_unpermuted = best_unpermuted.min(start.elapsed().as_secs_f64());
    }
    println!("rmat scale 20 without permutation: {best_unpermuted:.3} s");
    let weighted = GenOptions { seed: 1, max_weight: Some(255) };
    let start = Instant::now();
    let edges = generator.edges(&weighted, &NoProgress).unwrap();
    let weighted_time = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let graph = build(edges, &BuildOptions::SIMPLE).unwrap();
    let build_time = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let permutation = reorder(&graph, Reordering::Degree);
    let _ = permutation.apply(&graph).unwrap();
    let reorder_time = start.elapsed().as_secs_f64();
    println!(
        "rmat scale 20 on {} threads: {:.3} s unweighted (best of 5), {:.3} s weighted; build {:.3} s; degree reorder + apply {:.3} s",
        rayon::current_num_threads(),
        best,
        weighted_time,
        build_time,
        reorder_time
    );
}
