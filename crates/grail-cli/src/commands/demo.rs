//! `grail demo`: grail's main job on built-in inputs. Generates one graph of each kind, compiles
//! every suite algorithm's grail program for the target (default: the CPU), runs it on each
//! graph, verifies each result against the sequential reference and prints a summary table.

use anyhow::{Context, Result};
use grail_algos::suite::SuiteProgram;
use grail_algos::{Algorithm, RunParams, Target, Variant, run, verify};
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

pub fn demo(args: DemoArgs, threads: usize, progress: &Bars) -> Result<()> {
    anyhow::ensure!((4..=24).contains(&args.scale), "--scale must be between 4 and 24 for the demo");
    let target = args.target;
    // Every program is compiled once, before the graphs exist, so `tuned` cannot pick by input
    // class here: it gives the target's default.
    let opt = match args.opt {
        grail_algos::OptChoice::Given(config) => config,
        grail_algos::OptChoice::Tuned => grail_algos::tuning::default_config(target),
    };
    // Compile every program once, before any graph: the C compiler runs here (or the cache hits).
    let programs = match target {
        Target::Reference => Vec::new(),
        Target::Cpu => {
            let compiler = grail_runtime::cpu::CCompiler::detect()?;
            let cache = grail_runtime::ModuleCache::default_location();
            Algorithm::ALL
                .iter()
                .map(|&a| {
                    let variant = Variant::find(a, None).map_err(anyhow::Error::msg)?;
                    Ok(SuiteProgram::compile(variant, &compiler, Some(&cache), &opt)?)
                })
                .collect::<Result<Vec<_>>>()?
        }
        Target::Gpu => {
            let cache = grail_runtime::ModuleCache::default_location();
            Algorithm::ALL
                .iter()
                .map(|&a| {
                    let variant = Variant::find(a, None).map_err(anyhow::Error::msg)?;
                    let device = grail_runtime::gpu::Device::open(args.device)?;
                    Ok(SuiteProgram::compile_gpu(variant, device, Some(&cache), &opt)?)
                })
                .collect::<Result<Vec<_>>>()?
        }
    };
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
        for (i, algorithm) in Algorithm::ALL.into_iter().enumerate() {
            let record = run_one(&label, &graph, algorithm, target, programs.get(i), threads)?;
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
        println!("\nevery result above was checked by its verifier (target: {target})");
    }
    Ok(())
}

fn run_one(
    label: &str,
    graph: &Graph,
    algorithm: Algorithm,
    target: Target,
    program: Option<&SuiteProgram>,
    threads: usize,
) -> Result<serde_json::Value> {
    let params = RunParams { threads, ..Default::default() };
    let (output, time, variant) = match program {
        Some(program) => {
            let run = program.run(graph, &params).with_context(|| format!("{algorithm} on {label}"))?;
            (run.output, run.stats.elapsed, Some(program.variant().name))
        }
        None => {
            let result = run(algorithm, graph, target, &params)?;
            (result.output, result.time, result.variant.map(|v| v.name))
        }
    };
    verify(algorithm, graph, &params, &output)
        .with_context(|| format!("{algorithm} on {label} failed verification"))?;
    let mut record = json!({
        "graph": label,
        "nodes": graph.num_nodes(),
        "edges": graph.num_edges(),
        "algorithm": algorithm.name(),
        "variant": variant,
        "target": target.name(),
        "time_ms": millis(time),
        "verified": true,
        "result": output.headline_text(),
    });
    record.as_object_mut().expect("object").extend(output.headline());
    Ok(record)
}
