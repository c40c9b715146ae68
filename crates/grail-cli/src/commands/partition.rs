//! `grail partition`: a graph cut into parts, as the multi-device runtime would place it.

use std::io::Write;
use std::time::Instant;

use anyhow::{Context, Result};
use grail_graph::io::ReadOptions;
use grail_graph::partition::{Report, partition as partition_graph};

use super::millis;
use crate::cli::PartitionArgs;
use crate::progress::Bars;
use grail_graph::Progress;

pub fn partition(args: PartitionArgs, progress: &Bars) -> Result<()> {
    let start = Instant::now();
    let options = ReadOptions { format: args.format, ..Default::default() };
    let graph = super::read_input(&args.input, &options, args.base, progress)?;
    let load_ms = millis(start.elapsed());

    let start = Instant::now();
    progress.begin(&format!("partitioning ({})", args.method), None);
    let partitioning = partition_graph(&graph, args.parts, args.method, args.seed)
        .with_context(|| format!("cannot partition {}", args.input.display()))?;
    progress.finish();
    let partition_ms = millis(start.elapsed());

    let start = Instant::now();
    let report = partitioning.report(&graph);
    let report_ms = millis(start.elapsed());

    let to_stdout = args.output.as_deref().is_some_and(|p| p.as_os_str() == "-");
    if let Some(path) = &args.output {
        partitioning.write(path).context("cannot write the partition file")?;
    }
    progress.clear();

    let text = if args.json {
        let value = json(&args, &report, load_ms, partition_ms, report_ms);
        serde_json::to_string_pretty(&value)? + "\n"
    } else {
        table(&args, &report, load_ms, partition_ms, report_ms)
    };
    // With the partition on standard output, the report goes to standard error.
    if to_stdout {
        std::io::stderr().write_all(text.as_bytes())?;
    } else {
        std::io::stdout().write_all(text.as_bytes())?;
    }
    Ok(())
}

fn json(args: &PartitionArgs, report: &Report, load_ms: f64, partition_ms: f64, report_ms: f64) -> serde_json::Value {
    let cut = report.edge_cut();
    let balance = report.balance();
    let parts: Vec<serde_json::Value> = report
        .parts
        .iter()
        .enumerate()
        .map(|(p, c)| {
            serde_json::json!({
                "part": p,
                "nodes": c.nodes,
                "edges": c.edges,
                "cut_edges": c.cut_edges,
                "ghosts": c.ghosts,
            })
        })
        .collect();
    serde_json::json!({
        "file": args.input.display().to_string(),
        "method": args.method.name(),
        "parts": args.parts,
        "seed": args.seed,
        "nodes": report.nodes,
        "edges": report.edges,
        "edge_cut": cut.edges,
        "edge_cut_share": cut.share,
        "node_balance": balance.nodes,
        "edge_balance": balance.edges,
        "per_part": parts,
        "output": args.output.as_ref().map(|p| p.display().to_string()),
        "load_ms": load_ms,
        "partition_ms": partition_ms,
        "report_ms": report_ms,
    })
}

fn table(args: &PartitionArgs, report: &Report, load_ms: f64, partition_ms: f64, report_ms: f64) -> String {
    let cut = report.edge_cut();
    let balance = report.balance();
    let mut out = String::new();
    let rows = [
        ("file", args.input.display().to_string()),
        ("nodes", report.nodes.to_string()),
        ("edges", report.edges.to_string()),
        ("parts", format!("{} ({}, seed {})", args.parts, args.method, args.seed)),
        ("edge cut", format!("{} ({:.2}% of the edges)", cut.edges, cut.share * 100.0)),
        ("node balance", format!("{:.3} (largest part / mean)", balance.nodes)),
        ("edge balance", format!("{:.3}", balance.edges)),
        ("load time", format!("{load_ms:.1} ms")),
        ("partition time", format!("{partition_ms:.1} ms")),
        ("report time", format!("{report_ms:.1} ms")),
    ];
    for (name, value) in rows {
        out += &format!("{name:<16} {value}\n");
    }
    if let Some(path) = &args.output
        && path.as_os_str() != "-"
    {
        out += &format!("{:<16} {}\n", "written", path.display());
    }
    out += &format!("\n{:>6} {:>12} {:>14} {:>14} {:>12}\n", "part", "nodes", "edges", "cut edges", "ghosts");
    for (p, c) in report.parts.iter().enumerate() {
        out += &format!("{p:>6} {:>12} {:>14} {:>14} {:>12}\n", c.nodes, c.edges, c.cut_edges, c.ghosts);
    }
    out
}
