//! `grail bench suite`: the algorithm suite on generated graphs, as a table.
//!
//! Graphs are generated the way the GAP benchmark suite makes its synthetic inputs, so the
//! figures compare with it: `kron:S` is a Graph500 Kronecker graph of 2^S nodes, edge factor 16,
//! symmetrized (GAP's `-g S`); `urand:S` is a uniform random graph of 2^S nodes and 16 * 2^S
//! edges, symmetrized (GAP's `-u S`); `grid:S` a 2-D grid of about 2^S nodes; `road:S` a
//! road-like planar graph of 2^S nodes. Weights are uniform in 1..=255 (GAP's SSSP weights).
//!
//! Each algorithm variant is compiled once per target (`--targets cpu,gpu`), run `--repeat` times
//! per graph, and its best time is reported: the executor's time (property initialisation and
//! every kernel and host step; on the GPU also copying the output properties back: end to end),
//! not generation, compilation or loading. On the GPU the graph is resident after the first run
//! (which copies it to the device), so the best run is a run on a resident graph; the JSON
//! output's `first_ms` is the first run, upload included. On the GPU the kernels' own time (CUDA events
//! around every invocation) is shown too, and GTEPS are computed from it. Preparing the input (`prep ms`: the reverse CSR for
//! programs that pull over in-edges, the undirected simple graph for tri and mis, and tri's
//! relabelling by degree) is done once per graph and shown apart. Every result is verified once
//! unless `--no-verify`.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use anyhow::{Context, Result, bail};
use grail_algos::suite::SuiteProgram;
use grail_algos::tuning::ProgramId;
use grail_algos::{Algorithm, Output, RunParams, Target, VARIANTS, Variant, verify};
use grail_graph::Graph;
use grail_graph::generate::{GenOptions, Generator, generate};
use grail_ir::OptConfig;
use grail_runtime::ModuleCache;
use serde_json::json;

use super::millis;
use super::targets::Builder;
use crate::progress::Bars;

/// What `grail bench suite` was asked for.
pub struct SuiteBench {
    pub graphs: Vec<BenchGraph>,
    pub algorithms: Vec<Algorithm>,
    pub all_variants: bool,
    pub repeat: u32,
    pub verify: bool,
    /// The generated targets to run on.
    pub targets: Vec<Target>,
    pub device: usize,
    pub opt: grail_algos::OptChoice,
    pub json: bool,
    /// Also draw the table as an SVG chart here.
    pub plot: Option<std::path::PathBuf>,
    pub threads: usize,
}

/// A graph kind and size, parsed from `kind:scale`: its label, generator, and whether it is
/// stored undirected.
pub(super) fn parse_graph(spec: &str) -> Result<(String, Generator, bool)> {
    let (kind, scale) = spec.split_once(':').unwrap_or((spec, "18"));
    let scale: u32 = scale.parse().with_context(|| format!("graph '{spec}': the scale must be a number"))?;
    anyhow::ensure!((1..=30).contains(&scale), "graph '{spec}': the scale must be between 1 and 30");
    let nodes = 1u32 << scale;
    Ok(match kind {
        "kron" | "rmat" => (format!("kron{scale}"), Generator::graph500(scale), true),
        "urand" | "random" => (format!("urand{scale}"), Generator::Uniform { nodes, average_degree: 16 }, true),
        "grid" => {
            let (rows, cols) = (1u32 << scale.div_ceil(2), 1u32 << (scale / 2));
            (format!("grid{rows}x{cols}"), Generator::Grid { rows, cols }, true)
        }
        "road" => (format!("road{scale}"), Generator::Road { nodes }, true),
        _ => bail!("unknown graph kind '{kind}' in '{spec}' (expected kron, urand, grid or road)"),
    })
}

/// A benchmark's graph: generated (`KIND:SCALE`) or read from a file the user has.
pub(super) enum BenchGraph {
    Generated { label: String, generator: Generator, undirected: bool },
    File { label: String, path: std::path::PathBuf, base: u8 },
}

impl BenchGraph {
    /// `KIND:SCALE` ([`parse_graph`]), or the path of a graph file in any format `grail run
    /// --graph` reads, numbered from `base` (its label: the file name up to its first dot).
    pub fn parse(spec: &str, base: u8) -> Result<BenchGraph> {
        let path = std::path::Path::new(spec);
        if path.is_file() {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let label = name.split('.').next().filter(|stem| !stem.is_empty()).unwrap_or(&name).to_string();
            return Ok(BenchGraph::File { label, path: path.to_path_buf(), base });
        }
        if spec.contains(['/', '\\', '.']) {
            bail!("graph '{spec}': no such file (a graph is KIND:SCALE or the path of a graph file)");
        }
        let (label, generator, undirected) = parse_graph(spec)?;
        Ok(BenchGraph::Generated { label, generator, undirected })
    }

    pub fn label(&self) -> &str {
        match self {
            BenchGraph::Generated { label, .. } | BenchGraph::File { label, .. } => label,
        }
    }

    /// The graph: generated with seed 1 and weights uniform in 1..=255, or read as `grail run`
    /// reads it (real weights kept).
    pub fn make(&self, progress: &Bars) -> Result<Graph> {
        match self {
            BenchGraph::Generated { label, generator, undirected } => {
                generate_weighted(label, generator, *undirected, progress)
            }
            BenchGraph::File { path, base, .. } => {
                let options = grail_graph::io::ReadOptions {
                    format: None,
                    build: grail_graph::BuildOptions::AS_GIVEN,
                    real_weights: Default::default(),
                };
                let graph = super::read_input(path, &options, *base, progress)
                    .with_context(|| format!("graph '{}'", path.display()))?;
                progress.clear();
                Ok(graph)
            }
        }
    }
}

/// A benchmark graph: generated with seed 1 and weights uniform in 1..=255 (GAP's SSSP weights).
pub(super) fn generate_weighted(
    label: &str,
    generator: &Generator,
    undirected: bool,
    progress: &Bars,
) -> Result<Graph> {
    let options = GenOptions { seed: 1, max_weight: Some(255) };
    let graph =
        generate(generator, &options, undirected, progress).with_context(|| format!("cannot generate {label}"))?;
    progress.clear();
    Ok(graph)
}

pub fn suite(bench: SuiteBench, progress: &Bars) -> Result<()> {
    if let Some(plot) = &bench.plot {
        crate::plot::check_path(plot)?;
    }
    if let Some(target) = bench.targets.iter().find(|t| **t == Target::Reference) {
        bail!("--targets: {target} is not a generated target (expected cpu or gpu)");
    }
    let cache = ModuleCache::default_location();
    let variants: Vec<&'static Variant> = VARIANTS
        .iter()
        .filter(|v| bench.algorithms.contains(&v.algorithm))
        .filter(|v| bench.all_variants || Variant::find(v.algorithm, None).is_ok_and(|d| d == *v))
        .collect();
    let builders = bench.targets.iter().map(|&t| Builder::new(t, bench.device)).collect::<Result<Vec<_>>>()?;
    let ids = variants.iter().map(|v| Ok(ProgramId::of_variant(v)?)).collect::<Result<Vec<_>>>()?;
    // Programs by variant, target and configuration: `tuned` may pick another for each graph.
    let mut programs: HashMap<(usize, usize, OptConfig), SuiteProgram> = HashMap::new();
    if !bench.json {
        println!(
            "{:<12} {:>9} {:>10}  {:<5} {:<9} {:<4} {:>10} {:>10} {:>8} {:>8} {:>11}  {:<8} result",
            "graph",
            "nodes",
            "edges",
            "algo",
            "variant",
            "on",
            "time ms",
            "kernel ms",
            "prep ms",
            "GTEPS",
            "invocations",
            "verified"
        );
    }
    let mut rows = Vec::new();
    for spec in &bench.graphs {
        let (label, graph) = (spec.label().to_string(), spec.make(progress)?);
        for (v, &variant) in variants.iter().enumerate() {
            for (t, builder) in builders.iter().enumerate() {
                let resolution = builder.resolve(bench.opt, &ids[v], Some(&graph));
                for warning in &resolution.warnings {
                    eprintln!("warning: {warning}");
                }
                let opt = resolution.config;
                let program = match programs.entry((v, t, opt)) {
                    Entry::Occupied(entry) => entry.into_mut(),
                    Entry::Vacant(entry) => entry.insert(builder.suite(variant, &opt, &cache)?),
                };
                let mut row = run_variant(&label, &graph, builder.target(), program, &bench)?;
                row["opt"] = opt.to_string().into();
                row["opt_source"] = resolution.source.short().into();
                if !bench.json {
                    print_row(&row);
                }
                rows.push(row);
            }
        }
    }
    if let Some(plot) = &bench.plot {
        crate::plot::table_bars(
            plot,
            "grail bench suite: best time per algorithm and graph",
            "time (ms)",
            &rows,
            |r| {
                format!(
                    "{} {} {}",
                    r["algorithm"].as_str().unwrap_or(""),
                    r["variant"].as_str().unwrap_or(""),
                    r["graph"].as_str().unwrap_or("")
                )
            },
            |r| r["target"].as_str().map(String::from),
            |r| r["time_ms"].as_f64(),
        )?;
    }
    if bench.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        println!(
            "\ntimes: best of {} runs, {} CPU threads; GPU kernel ms: CUDA events; GTEPS: directed edges (times \
             rounds for pr) per ns of time (of kernel time on the GPU)",
            bench.repeat,
            if bench.threads == 0 { rayon::current_num_threads() } else { bench.threads }
        );
    }
    Ok(())
}

fn run_variant(
    label: &str,
    graph: &Graph,
    target: Target,
    program: &SuiteProgram,
    bench: &SuiteBench,
) -> Result<serde_json::Value> {
    let variant = program.variant();
    let algorithm = variant.algorithm;
    // Sources as GAP picks them would need its RNG; node 0 of a scrambled Kronecker graph is as
    // good as any, and a fixed source keeps runs comparable.
    let params = RunParams { threads: bench.threads, ..Default::default() };
    let prepared = program.prepare(graph).with_context(|| format!("cannot prepare {label} for {}", variant.program))?;
    let mut best = None;
    let mut best_kernels = None;
    let mut last = None;
    let mut first = None;
    for _ in 0..bench.repeat.max(1) {
        let run = program
            .run_prepared(graph, &prepared, &params)
            .with_context(|| format!("{} on {label} ({target})", variant.program))?;
        let time = run.stats.elapsed;
        first.get_or_insert(time);
        if best.is_none_or(|b| time < b) {
            best = Some(time);
        }
        if let Some(gpu) = &run.gpu
            && best_kernels.is_none_or(|b| gpu.kernels < b)
        {
            best_kernels = Some(gpu.kernels);
        }
        last = Some(run);
    }
    let (time, run) = (best.expect("at least one run"), last.expect("at least one run"));
    let verified = if bench.verify {
        verify(algorithm, graph, &params, &run.output)
            .with_context(|| format!("{} on {label} computed a wrong result", variant.program))?;
        Some(true)
    } else {
        None
    };
    let rounds = match run.output {
        Output::Ranks { iterations, .. } => f64::from(iterations),
        _ => 1.0,
    };
    let gteps = match algorithm {
        Algorithm::Bfs | Algorithm::Sssp | Algorithm::Cc | Algorithm::Pr => {
            Some(graph.num_edges() as f64 * rounds / best_kernels.unwrap_or(time).as_secs_f64() / 1e9)
        }
        _ => None,
    };
    let invocations: u64 = run.stats.kernels.iter().map(|k| k.invocations).sum();
    Ok(json!({
        "graph": label,
        "nodes": graph.num_nodes(),
        "edges": graph.num_edges(),
        "algorithm": algorithm.name(),
        "variant": variant.name,
        "target": target.name(),
        "time_ms": millis(time),
        "first_ms": first.map(millis),
        "kernel_ms": best_kernels.map(millis),
        "prepare_ms": millis(prepared.time),
        "gteps": gteps,
        "invocations": invocations,
        "verified": verified,
        "result": run.output.headline_text(),
    }))
}

fn print_row(row: &serde_json::Value) {
    let gteps = row["gteps"].as_f64().map_or("-".to_string(), |g| format!("{g:.3}"));
    let kernels = row["kernel_ms"].as_f64().map_or("-".to_string(), |k| format!("{k:.2}"));
    println!(
        "{:<12} {:>9} {:>10}  {:<5} {:<9} {:<4} {:>10.2} {:>10} {:>8.1} {:>8} {:>11}  {:<8} {}",
        row["graph"].as_str().unwrap_or(""),
        row["nodes"].as_u64().unwrap_or(0),
        row["edges"].as_u64().unwrap_or(0),
        row["algorithm"].as_str().unwrap_or(""),
        row["variant"].as_str().unwrap_or(""),
        row["target"].as_str().unwrap_or(""),
        row["time_ms"].as_f64().unwrap_or(0.0),
        kernels,
        row["prepare_ms"].as_f64().unwrap_or(0.0),
        gteps,
        row["invocations"].as_u64().unwrap_or(0),
        if row["verified"].as_bool() == Some(true) { "ok" } else { "-" },
        row["result"].as_str().unwrap_or("")
    );
}
