//! `grail run`: run a suite algorithm on a graph file.

use std::time::Instant;

use anyhow::{Context, Result};
use grail_algos::{RunParams, run as run_algorithm, verify};
use grail_graph::BuildOptions;
use grail_graph::io::write_atomically;
use serde_json::json;

use super::{load, millis};
use crate::cli::RunArgs;
use crate::progress::Bars;

pub fn run(args: RunArgs, progress: &Bars) -> Result<()> {
    let mut params = RunParams { source: args.source, ..Default::default() };
    if let Some(tolerance) = args.pr_tolerance {
        anyhow::ensure!(tolerance > 0.0 && tolerance.is_finite(), "--pr-tolerance must be a positive number");
        params.pagerank.tolerance = tolerance;
    }
    if let Some(iterations) = args.pr_max_iterations {
        anyhow::ensure!(iterations > 0, "--pr-max-iterations must be at least 1");
        params.pagerank.max_iterations = iterations;
    }
    let start = Instant::now();
    let graph = load(&args.graph, BuildOptions::AS_GIVEN, progress)?;
    let load_ms = millis(start.elapsed());
    progress.clear();

    let result = run_algorithm(args.algorithm, &graph, args.target, &params)?;
    let verified = if args.verify {
        verify(args.algorithm, &graph, &params, &result.output)
            .with_context(|| format!("{} result from target {} is wrong", args.algorithm, args.target))?;
        Some(true)
    } else {
        None
    };
    if let Some(path) = &args.output {
        write_atomically(path, |out| result.output.write_values(out))
            .with_context(|| format!("cannot write the result to {}", path.display()))?;
    }

    let time_ms = millis(result.time);
    if args.json {
        let mut summary = json!({
            "algorithm": args.algorithm.name(),
            "target": args.target.name(),
            "graph": args.graph.graph.display().to_string(),
            "nodes": graph.num_nodes(),
            "edges": graph.num_edges(),
            "time_ms": time_ms,
            "load_ms": load_ms,
            "verified": verified,
        });
        if args.algorithm.needs_source() {
            summary["source"] = params.source_in(&graph)?.into();
        }
        summary.as_object_mut().expect("object").extend(result.output.headline());
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        println!(
            "{} on {} ({} nodes, {} edges), target {}",
            args.algorithm,
            args.graph.graph.display(),
            graph.num_nodes(),
            graph.num_edges(),
            args.target
        );
        println!("  time      {time_ms:.2} ms (load {load_ms:.1} ms)");
        println!("  result    {}", result.output.headline_text());
        if verified.is_some() {
            println!("  verified  ok");
        }
        if let Some(path) = &args.output {
            println!("  written   {}", path.display());
        }
    }
    Ok(())
}
