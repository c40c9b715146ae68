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

/// Shape statistics of road graphs; run with `--ignored --nocapture`.
#[test]
#[ignore = "prints statistics"]
fn road_statistics() {
    for nodes in [10_000u32, 1_000_000] {
        let graph = generate(&Generator::Road { nodes }, &GenOptions { seed: 1, max_weight: None }, false, &NoProgress)
            .unwrap();
        let eccentricity = |source: u32| {
            let mut dist = vec![u32::MAX; nodes as usize];
            let mut queue = std::collections::VecDeque::from([source]);
            dist[source as usize] = 0;
            let mut last = source;
            while let Some(u) = queue.pop_front() {
                last = u;
                for &v in graph.neighbors(u) {
                    if dist[v as usize] == u32::MAX {
                        dist[v as usize] = dist[u as usize] + 1;
                        queue.push_back(v);
                    }
                }
            }
            (last, dist[last as usize])
        };
        let (far, _) = eccentricity(0);
        let (_, diameter) = eccentricity(far);
        println!(
            "road {nodes}: average degree {:.2}, max degree {}, diameter >= {diameter} hops (2 sqrt(n) = {:.0})",
            graph.num_edges() as f64 / f64::from(nodes),
            graph.out().max_degree().1,
            2.0 * f64::from(nodes).sqrt()
        );
    }
}
