//! The ten nodes of highest PageRank: `cargo run --release -p grail --example pagerank_top10 -- GRAPH`.

use grail::Graph;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: pagerank_top10 GRAPH")?;
    let graph = Graph::load(&path)?;
    let result = graph.pagerank().tolerance(1e-6).run()?;
    let mut order: Vec<u32> = (0..graph.num_nodes()).collect();
    order.sort_by(|&a, &b| result.ranks[b as usize].total_cmp(&result.ranks[a as usize]));
    println!("after {} iterations:", result.iterations);
    for (place, &node) in order.iter().take(10).enumerate() {
        println!("{:>3}. node {node:>10}  rank {:.6}", place + 1, result.ranks[node as usize]);
    }
    Ok(())
}
