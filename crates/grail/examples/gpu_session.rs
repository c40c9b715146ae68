//! Many BFS and SSSP runs on one graph kept on the GPU:
//! `cargo run --release -p grail --example gpu_session -- GRAPH [cpu]`.

use std::time::Instant;

use grail::{Graph, Session, Target, UNREACHED};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: gpu_session GRAPH [cpu]")?;
    let target = if args.next().as_deref() == Some("cpu") { Target::Cpu } else { Target::Gpu(0) };
    let graph = Graph::load(&path)?;
    let mut session = Session::new(&graph, target)?;
    let sources: Vec<u32> = (0..8).map(|i| (i as u64 * graph.num_nodes() as u64 / 8) as u32).collect();
    for &source in &sources {
        let start = Instant::now();
        let levels = session.bfs(source)?;
        let distances = session.sssp(source)?;
        let reached = levels.iter().filter(|&&l| l != UNREACHED).count();
        let farthest = distances.iter().filter(|&&d| d != grail::INFINITE_DISTANCE).max().copied().unwrap_or(0);
        println!(
            "source {source:>9}: {reached} reached, farthest at distance {farthest} ({:.1} ms for both)",
            start.elapsed().as_secs_f64() * 1e3
        );
    }
    Ok(())
}
