//! `grail stats`: what a graph file holds.

use std::time::Instant;

use anyhow::Result;
use grail_graph::GraphStats;
use grail_graph::io::ReadOptions;

use super::millis;
use crate::cli::StatsArgs;
use crate::progress::Bars;

pub fn stats(args: StatsArgs, progress: &Bars) -> Result<()> {
    let start = Instant::now();
    let options =
        ReadOptions { format: args.format, real_weights: args.weights.unwrap_or_default(), ..Default::default() };
    let graph = super::read_input(&args.input, &options, args.base, progress)?;
    let load_ms = millis(start.elapsed());
    let stats = GraphStats::of(&graph);
    progress.clear();
    if args.json {
        let mut value = serde_json::to_value(&stats)?;
        value["file"] = args.input.display().to_string().into();
        value["load_ms"] = load_ms.into();
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(());
    }
    let weights = match (stats.min_weight, stats.max_weight) {
        (Some(lo), Some(hi)) => format!("{lo} to {hi} ({})", stats.weight_kind.unwrap_or("integer")),
        _ if stats.weighted => "none (no edges)".to_string(),
        _ => "unweighted".to_string(),
    };
    let rows = [
        ("file", args.input.display().to_string()),
        ("nodes", stats.nodes.to_string()),
        ("edges", stats.edges.to_string()),
        ("average degree", format!("{:.2}", stats.average_degree)),
        ("max out-degree", stats.max_out_degree.to_string()),
        ("max in-degree", stats.max_in_degree.to_string()),
        ("self-loops", stats.self_loops.to_string()),
        ("duplicate edges", stats.duplicate_edges.to_string()),
        ("isolated nodes", stats.isolated_nodes.to_string()),
        ("symmetric", stats.symmetric.to_string()),
        ("weights", weights),
        ("load time", format!("{load_ms:.1} ms")),
    ];
    for (name, value) in rows {
        println!("{name:<16} {value}");
    }
    Ok(())
}
