//! BFS on a graph file: `cargo run --release -p grail --example bfs_file -- GRAPH [SOURCE] [gpu]`.

use grail::{Graph, Target, UNREACHED};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: bfs_file GRAPH [SOURCE] [gpu]")?;
    let source: u32 = args.next().map_or(Ok(0), |s| s.parse())?;
    let target = if args.next().as_deref() == Some("gpu") { Target::Gpu(0) } else { Target::Cpu };

    let graph = Graph::load(&path)?;
    let (levels, info) = graph.bfs(source).on(target).verify().run_with_info()?;
    let reached: Vec<u32> = levels.into_iter().filter(|&l| l != UNREACHED).collect();
    println!(
        "{path}: {} of {} nodes reached from {source}, {} levels, {:.2} ms on {target:?} (verified)",
        reached.len(),
        graph.num_nodes(),
        reached.iter().max().map_or(0, |m| m + 1),
        info.time.as_secs_f64() * 1e3
    );
    Ok(())
}
