//! `grail demo`: grail's main job on built-in inputs. Generates one graph of each kind, runs every
//! suite algorithm on it, verifies each result and prints a summary table.

use anyhow::{Context, Result};
use grail_algos::{Algorithm, RunParams, Target, run, verify};
use grail_graph::Graph;
use grail_graph::generate::{GenOptions, Generator, generate};
use serde_json::json;

use super::millis;
use crate::cli::DemoArgs;
use crate::progress::Bars;

/// The built-in inputs for a scale: (label, generator, undirected).
fn inputs(scale: u32) -> Vec<(String, Generator, bool)> {
    let nodes = 1u32 << scale;
    let side = 1u32 << scale.div_ceil(2);
    vec![
        (
            format!("rmat{scale}"),
            Generator::Rmat { scale, edge_factor: 16, a: 0.57, b: 0.19, c: 0.19, permute: true },
            false,
        ),
        (format!("random{scale}"), Generator::Uniform { nodes, average_degree: 8 }, false),
        (format!("grid{side}x{side}"), Generator::Grid { rows: side, cols: side }, true),
        (format!("road{scale}"), Generator::Road { nodes }, true),
    ]
}

pub fn demo(args: DemoArgs, progress: &Bars) -> Result<()> {
    anyhow::ensure!((4..=24).contains(&args.scale), "--scale must be between 4 and 24 for the demo");
    let mut records = Vec::new();
    if !args.json {
        println!(
            "{:<14} {:>10} {:>11}  {:<5} {:>10}  {:<9} result",
            "graph", "nodes", "edges", "algo", "time ms", "verified"
        );
    }
    for (label, generator, undirected) in inputs(args.scale) {
        let options = GenOptions { seed: 1, max_weight: Some(255) };
        let graph =
            generate(&generator, &options, undirected, progress).with_context(|| format!("cannot generate {label}"))?;
        progress.clear();
        for algorithm in Algorithm::ALL {
            let record = run_one(&label, &graph, algorithm)?;
            if !args.json {
                println!(
                    "{:<14} {:>10} {:>11}  {:<5} {:>10.2}  {:<9} {}",
                    label,
                    graph.num_nodes(),
                    graph.num_edges(),
                    algorithm.name(),
                    record["time_ms"].as_f64().unwrap_or(0.0),
                    "ok",
                    record["result"].as_str().unwrap_or("")
                );
            }
            records.push(record);
        }
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&records)?);
    } else {
        println!("\nevery result above was checked by its verifier (target: reference)");
    }
    Ok(())
}

fn run_one(label: &str, graph: &Graph, algorithm: Algorithm) -> Result<serde_json::Value> {
    let params = RunParams::default();
    let result = run(algorithm, graph, Target::Reference, &params)?;
    verify(algorithm, graph, &params, &result.output)
        .with_context(|| format!("{algorithm} on {label} failed verification"))?;
    let mut record = json!({
        "graph": label,
        "nodes": graph.num_nodes(),
        "edges": graph.num_edges(),
        "algorithm": algorithm.name(),
        "target": Target::Reference.name(),
        "time_ms": millis(result.time),
        "verified": true,
        "result": result.output.headline_text(),
    });
    record.as_object_mut().expect("object").extend(result.output.headline());
    Ok(record)
}
