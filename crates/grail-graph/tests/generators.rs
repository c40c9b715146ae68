//! Generators and reorderings through the public API only.

use grail_graph::NoProgress;
use grail_graph::generate::{GenOptions, Generator, generate};
use grail_graph::reorder::{Reordering, reorder};

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
