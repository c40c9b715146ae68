//! A program of one's own: each node's number of two-hop paths, written in grail and run with a
//! parameter. `cargo run --release -p grail --example custom_program -- GRAPH [gpu]`.

use grail::{Graph, Program, Target};

const TWO_HOP: &str = "
graph { node paths: u64 = 0; }
param cap: u32 = 1000000;
output paths;
kernel count(cap: u32) {
    forall u in G.nodes() {
        let mut total: u64 = 0;
        for v in u.neighbors() {
            total += v.degree() as u64;
        }
        u.paths = min(total, cap as u64);
    }
}
fn main() { invoke count(cap); }
";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: custom_program GRAPH [gpu]")?;
    let target = if args.next().as_deref() == Some("gpu") { Target::Gpu(0) } else { Target::Cpu };
    let graph = Graph::load(&path)?;
    let program = Program::from_source("two_hop", TWO_HOP)?;
    let out = program.on(&graph).target(target).param("cap", 1_000_000).run()?;
    let paths = out.property::<u64>("paths")?;
    let busiest = (0..paths.len()).max_by_key(|&u| paths[u]).unwrap_or(0);
    println!("{} two-hop paths in all; node {busiest} starts the most ({})", paths.iter().sum::<u64>(), paths[busiest]);
    Ok(())
}
