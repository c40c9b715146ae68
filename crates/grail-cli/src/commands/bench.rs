//! `grail bench`: how fast grail's own machinery is.
//!
//! `grail bench suite`: the algorithm suite on generated graphs (see `bench_suite`).
//!
//! `grail bench opts`: each optimization's effect on the suite (see `bench_opts`).
//! `grail bench prep`: preparing the suite's input, step by step (see `bench_prep`).
//! `grail bench multi`: one device beside several (see `bench_multi`).
//!
//! `grail bench load`: how fast grail loads one graph from every format it reads.
//! The graph is an undirected R-MAT (Kronecker, Graph500 parameters) graph with random weights,
//! written once in each format; every load is timed end to end (read, parse, build the CSR) with
//! the file in the page cache, and the best of `--repeat` runs is reported next to the time it
//! takes merely to read the file's bytes.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use grail_algos::Algorithm;
use grail_graph::generate::{GenOptions, Generator, generate};
use grail_graph::io::{Format, ReadOptions, read_graph, write_graph};
use grail_graph::{Graph, NoProgress};
use serde_json::json;

use super::bench_suite::SuiteBench;
use super::millis;
use crate::cli::BenchCommand;
use crate::progress::Bars;

/// The graphs of `--graphs`: generated (`KIND:SCALE`) or files, numbered from `base`; checked
/// before anything runs.
fn bench_graphs(specs: &[String], base: u8) -> Result<Vec<super::bench_suite::BenchGraph>> {
    specs.iter().map(|spec| super::bench_suite::BenchGraph::parse(spec, base)).collect()
}

pub fn bench(command: BenchCommand, threads: usize, progress: &Bars) -> Result<()> {
    match command {
        BenchCommand::Multi {
            graphs,
            base,
            algorithms,
            variants,
            devices,
            partitions,
            modes,
            topology,
            workers,
            baseline,
            device,
            repeat,
            json,
            plot,
            opt,
        } => {
            if let Some(plot) = &plot {
                crate::plot::check_path(plot)?;
            }
            let gpus = || -> std::result::Result<u32, String> {
                grail_runtime::gpu::device_count().map(|n| n as u32).map_err(|e| format!("cannot count the GPUs: {e}"))
            };
            let devices = devices
                .iter()
                .map(|list| {
                    grail_runtime::multi::parse_devices(list, gpus)
                        .map_err(|e| crate::commands::UsageError(format!("--devices: {e}")))
                })
                .collect::<std::result::Result<Vec<_>, _>>()?;
            let bench = super::bench_multi::MultiBench {
                graphs: bench_graphs(&graphs, base)?,
                algorithms,
                variants,
                devices,
                partitions,
                modes,
                baseline,
                device,
                repeat,
                json,
                threads,
                plot,
                opt,
                topology,
                workers,
            };
            super::bench_multi::multi(bench, progress)
        }
        BenchCommand::Suite {
            graphs,
            base,
            algorithms,
            all_variants,
            repeat,
            no_verify,
            targets,
            device,
            opt,
            json,
            plot,
        } => {
            let algorithms = if algorithms.is_empty() { Algorithm::ALL.to_vec() } else { algorithms };
            let bench = SuiteBench {
                graphs: bench_graphs(&graphs, base)?,
                algorithms,
                all_variants,
                repeat,
                verify: !no_verify,
                targets,
                device,
                opt,
                json,
                plot,
                threads,
            };
            super::bench_suite::suite(bench, progress)
        }
        BenchCommand::Opts { graphs, base, algorithms, repeat, targets, device, json, plot } => {
            let graphs = bench_graphs(&graphs, base)?;
            let bench =
                super::bench_opts::OptsBench { graphs, algorithms, repeat, targets, device, json, threads, plot };
            super::bench_opts::opts(bench, progress)
        }
        BenchCommand::Load { scale, repeat, dir, json } => load(scale, repeat.max(1), dir, json, progress),
        BenchCommand::Gen { scale, repeat, json } => generators(scale, repeat.max(1), json),
        BenchCommand::Prep { graphs, repeat, json } => super::bench_prep::prep(&graphs, repeat, json, progress),
    }
}

/// The best time of `repeat` runs of `f`, and its last result.
fn best_of<T>(repeat: u32, mut f: impl FnMut() -> Result<T>) -> Result<(Duration, T)> {
    let mut best = Duration::MAX;
    let mut last = None;
    for _ in 0..repeat {
        let start = Instant::now();
        last = Some(f()?);
        best = best.min(start.elapsed());
    }
    Ok((best, last.expect("repeat is at least 1")))
}

fn generators(scale: u32, repeat: u32, json: bool) -> Result<()> {
    anyhow::ensure!((1..=31).contains(&scale), "--scale must be between 1 and 31");
    let nodes = 1u32 << scale;
    let side = 1u32 << scale.div_ceil(2);
    let cases = [
        (format!("rmat{scale}"), Generator::graph500(scale), false),
        (format!("random{scale}"), Generator::Uniform { nodes, average_degree: 16 }, false),
        (format!("grid{side}x{side}"), Generator::Grid { rows: side, cols: side }, true),
        (format!("road{scale}"), Generator::Road { nodes }, true),
    ];
    let options = GenOptions { seed: 1, max_weight: Some(255) };
    let mut rows = Vec::new();
    if !json {
        println!(
            "{:<14} {:>10} {:>12} {:>10} {:>10} {:>12}",
            "graph", "nodes", "edges", "draw ms", "total ms", "M edges/s"
        );
    }
    for (label, generator, undirected) in cases {
        let (draw, edges) = best_of(repeat, || Ok(generator.edges(&options, &NoProgress)?.len()))?;
        let (total, graph) = best_of(repeat, || Ok(generate(&generator, &options, undirected, &NoProgress)?))?;
        let row = json!({
            "graph": label,
            "nodes": graph.num_nodes(),
            "edges_drawn": edges,
            "edges": graph.num_edges(),
            "draw_ms": millis(draw),
            "total_ms": millis(total),
            "m_edges_per_s": edges as f64 / 1e6 / total.as_secs_f64(),
        });
        if !json {
            println!(
                "{:<14} {:>10} {:>12} {:>10.1} {:>10.1} {:>12.1}",
                label,
                graph.num_nodes(),
                graph.num_edges(),
                millis(draw),
                millis(total),
                row["m_edges_per_s"].as_f64().unwrap()
            );
        }
        rows.push(row);
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        println!(
            "\ndraw: generating the raw edges; total: edges plus building the graph (best of {repeat}, {} threads)",
            rayon::current_num_threads()
        );
    }
    Ok(())
}

/// The files the benchmark writes: (label, file name, format).
const FILES: [(&str, &str, Format); 9] = [
    ("el", "graph.el", Format::EdgeList),
    ("el.gz", "graph.el.gz", Format::EdgeList),
    ("wel", "graph.wel", Format::WeightedEdgeList),
    ("dimacs", "graph.gr", Format::Dimacs),
    ("mtx", "graph.mtx", Format::MatrixMarket),
    ("metis", "graph.graph", Format::Metis),
    ("galois", "graph.galois.gr", Format::Galois),
    ("gcsr", "graph.gcsr", Format::Gcsr),
    ("mtx.gz", "graph.mtx.gz", Format::MatrixMarket),
];

fn load(scale: u32, repeat: u32, dir: Option<PathBuf>, json: bool, progress: &Bars) -> Result<()> {
    let temp;
    let dir = match dir {
        Some(dir) => {
            std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
            dir
        }
        None => {
            temp = tempfile::tempdir().context("cannot create a temporary folder")?;
            temp.path().to_path_buf()
        }
    };
    let generator = Generator::graph500(scale);
    let graph = generate(&generator, &GenOptions { seed: 1, max_weight: Some(255) }, true, progress)?;
    eprintln!(
        "rmat scale {scale}, undirected: {} nodes, {} directed edges; writing {} files to {}",
        graph.num_nodes(),
        graph.num_edges(),
        FILES.len(),
        dir.display()
    );
    let mut rows = Vec::new();
    for (label, name, format) in FILES {
        let path = dir.join(name);
        write_graph(&graph, &path, Some(format), progress).with_context(|| format!("cannot write {label}"))?;
        progress.clear();
        let row = time_format(&graph, label, &path, format, repeat)?;
        if !json {
            if rows.is_empty() {
                println!(
                    "{:<8} {:>10} {:>11} {:>10} {:>9} {:>11}",
                    "format", "size MB", "read ms", "load ms", "MB/s", "M edges/s"
                );
            }
            println!(
                "{:<8} {:>10.1} {:>11.1} {:>10.1} {:>9.0} {:>11.1}",
                label,
                row["size_mb"].as_f64().unwrap(),
                row["read_ms"].as_f64().unwrap(),
                row["load_ms"].as_f64().unwrap(),
                row["mb_per_s"].as_f64().unwrap(),
                row["m_edges_per_s"].as_f64().unwrap()
            );
        }
        rows.push(row);
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        println!(
            "\nread ms: reading the file's bytes only; load ms: read, parse and build the CSR (best of {repeat}, \
             {} threads)",
            rayon::current_num_threads()
        );
    }
    Ok(())
}

fn time_format(graph: &Graph, label: &str, path: &Path, format: Format, repeat: u32) -> Result<serde_json::Value> {
    let size = std::fs::metadata(path)?.len();
    let (read, _) = best_of(repeat, || Ok(std::hint::black_box(std::fs::read(path)?).len()))?;
    let options = ReadOptions { format: Some(format), ..Default::default() };
    let (load, loaded) = best_of(repeat, || Ok(read_graph(path, &options, &NoProgress)?))?;
    // The benchmark is only worth something if every format gives the graph back.
    anyhow::ensure!(
        loaded.num_edges() == graph.num_edges() && loaded.out().targets() == graph.out().targets(),
        "{label}: the graph read back differs from the one written"
    );
    let mb = size as f64 / 1e6;
    Ok(json!({
        "format": label,
        "size_mb": mb,
        "read_ms": millis(read),
        "load_ms": millis(load),
        "mb_per_s": mb / load.as_secs_f64(),
        "m_edges_per_s": graph.num_edges() as f64 / 1e6 / load.as_secs_f64(),
    }))
}
