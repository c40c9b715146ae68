//! `grail bench multi`: one device beside several, as a table.
//!
//! For each generated graph and algorithm: the one-device baseline (`--baseline cpu|gpu`, the
//! algorithm's default variant, and the variant the partitioned runs use when that differs),
//! then every `--devices` list with every `--partition` method and `--modes` mode (an `async`
//! row only where the algorithm's variant has a loop that runs asynchronously). Each row is
//! the best of `--repeat` runs, every result verified once. *time* is the whole run as `grail
//! run` reports it; *algo* the algorithm's own time: on a GPU its kernels (CUDA events), on the
//! CPU the run, on several devices the supersteps (computing and synchronizing); *sync* the
//! share of that spent synchronizing; *speedup* the baseline's best *algo* over this row's.
//! BFS and SSSP start at the graph's node of most out-edges.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::Arc;

use anyhow::{Context, Result};
use grail_algos::suite::{MultiParams, MultiReport};
use grail_algos::{Algorithm, RunParams, RunResult, Target, run, verify};
use grail_graph::Graph;
use grail_graph::partition::{Method, Partitioning};
use grail_runtime::multi::{Device, Mode, Topology, Worker};
use serde_json::json;

use super::bench_suite::BenchGraph;
use super::millis;
use crate::progress::Bars;

/// What `grail bench multi` was asked for.
pub struct MultiBench {
    pub graphs: Vec<BenchGraph>,
    pub algorithms: Vec<Algorithm>,
    /// Variant names to run partitioned (empty: each algorithm's partitioned default).
    pub variants: Vec<String>,
    pub devices: Vec<Vec<Device>>,
    pub partitions: Vec<Method>,
    pub modes: Vec<Mode>,
    pub baseline: Target,
    pub device: usize,
    pub repeat: u32,
    pub json: bool,
    pub threads: usize,
    /// Where to draw the speedups, if anywhere.
    pub plot: Option<std::path::PathBuf>,
    /// The optimizations of every run.
    pub opt: grail_algos::OptChoice,
    /// How the asynchronous rows' packets travel (their mode reads `async-ring` around a ring).
    pub topology: Topology,
    /// Who runs the asynchronous rows' loops (a row each; `async-host` for the host).
    pub workers: Vec<Worker>,
}

/// One row of the table.
struct Row {
    graph: String,
    algorithm: Algorithm,
    devices: String,
    variant: &'static str,
    partition: Option<Method>,
    mode: Option<Mode>,
    topology: Topology,
    worker: Worker,
    time_ms: f64,
    algo_ms: f64,
    report: Option<MultiReport>,
}

impl Row {
    /// The row of a run on the one device `devices` names.
    fn one_device(graph: &str, algorithm: Algorithm, devices: &str, variant: &'static str, run: &RunResult) -> Row {
        Row {
            graph: graph.to_string(),
            algorithm,
            devices: devices.to_string(),
            variant,
            partition: None,
            mode: None,
            topology: Topology::Direct,
            worker: Worker::default(),
            time_ms: millis(run.time),
            algo_ms: algo_time(run),
            report: None,
        }
    }
}

/// The algorithm's own time of a run: its kernels on a GPU, the run on the CPU, the supersteps
/// on several devices.
fn algo_time(result: &RunResult) -> f64 {
    match (&result.multi, &result.gpu) {
        (Some(report), _) => millis(report.sync.compute + report.sync.sync),
        (None, Some(gpu)) => millis(gpu.kernels),
        (None, None) => millis(result.time),
    }
}

/// The best of `repeat` runs (by the algorithm's own time), the first verified.
fn best(algorithm: Algorithm, graph: &Graph, target: Target, params: &RunParams, repeat: u32) -> Result<RunResult> {
    let mut best: Option<RunResult> = None;
    for i in 0..repeat.max(1) {
        let result = run(algorithm, graph, target, params)?;
        if i == 0 {
            verify(algorithm, graph, params, &result.output).with_context(|| format!("{algorithm}: a wrong result"))?;
        }
        if best.as_ref().is_none_or(|b| algo_time(&result) < algo_time(b)) {
            best = Some(result);
        }
    }
    Ok(best.expect("at least one run"))
}

/// Whether `algorithm` has a variant called `name`.
fn has_variant(algorithm: Algorithm, name: &str) -> bool {
    grail_algos::Variant::of(algorithm).any(|v| v.name == name)
}

/// The variants `algorithm` runs partitioned with: those of `names` it has, or its default
/// (`None`) when `names` is empty or names none of its variants.
fn variant_choices(algorithm: Algorithm, names: &[String]) -> Vec<Option<&str>> {
    let mine: Vec<Option<&str>> =
        names.iter().filter(|name| has_variant(algorithm, name)).map(|name| Some(name.as_str())).collect();
    if mine.is_empty() { vec![None] } else { mine }
}

fn device_list(devices: &[Device]) -> String {
    devices.iter().map(ToString::to_string).collect::<Vec<_>>().join(",")
}

pub fn multi(bench: MultiBench, progress: &Bars) -> Result<()> {
    if let Some(name) = bench.variants.iter().find(|name| !bench.algorithms.iter().any(|&a| has_variant(a, name))) {
        return Err(crate::commands::UsageError(format!(
            "--variants: none of the algorithms {} has a variant '{name}'",
            bench.algorithms.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
        ))
        .into());
    }
    anyhow::ensure!(
        matches!(bench.baseline, Target::Cpu | Target::Gpu),
        "--baseline: expected cpu or gpu, got {}",
        bench.baseline
    );
    let base = RunParams { threads: bench.threads, device: bench.device, opt: bench.opt, ..Default::default() };
    let baseline_name = match bench.baseline {
        Target::Gpu => format!("gpu:{}", bench.device),
        _ => "cpu".to_string(),
    };
    let mut rows: Vec<Row> = Vec::new();
    // The table is printed a row at a time, as the rows are measured (a long benchmark that is
    // stopped keeps what it measured); JSON at the end.
    let table = !bench.json;
    if table {
        progress.println(&header());
    }
    let emit = |rows: &Vec<Row>| {
        if table {
            progress.println(&table_line(rows, rows.last().expect("a row just added")));
        }
    };
    for spec in &bench.graphs {
        let (label, graph) = (spec.label().to_string(), spec.make(progress)?);
        // BFS and SSSP start at the node of most out-edges (the lowest id among ties), which
        // lies in the graph's giant component: node 0 of an R-MAT graph can be nearly isolated
        // (on kron23 both reached it in two supersteps).
        let base = RunParams { source: Some(u64::from(graph.out().max_degree().0)), ..base.clone() };
        // Each split made once per graph, for every run that uses it.
        let mut splits: HashMap<(usize, Method), Arc<Partitioning>> = HashMap::new();
        for &algorithm in &bench.algorithms {
            let one = best(algorithm, &graph, bench.baseline, &base, bench.repeat)?;
            let default = one.variant.map_or("", |v| v.name);
            rows.push(Row::one_device(&label, algorithm, &baseline_name, default, &one));
            emit(&rows);
            for (choice, devices) in variant_choices(algorithm, &bench.variants)
                .into_iter()
                .flat_map(|choice| bench.devices.iter().map(move |devices| (choice, devices)))
            {
                for &partition in &bench.partitions {
                    let split = match splits.entry((devices.len(), partition)) {
                        Entry::Occupied(made) => made.get().clone(),
                        Entry::Vacant(slot) => {
                            let made = grail_graph::partition::partition(&graph, devices.len() as u32, partition, 1)
                                .with_context(|| format!("{label}: {} parts by {}", devices.len(), partition.name()))?;
                            slot.insert(Arc::new(made)).clone()
                        }
                    };
                    let runs = bench.modes.iter().flat_map(|&mode| {
                        let workers = if mode == Mode::Async { bench.workers.clone() } else { vec![Worker::default()] };
                        workers.into_iter().map(move |worker| (mode, worker))
                    });
                    for (mode, worker) in runs {
                        let params = RunParams {
                            multi: Some(MultiParams {
                                devices: devices.clone(),
                                mode: Some(mode),
                                partition,
                                seed: 1,
                                jitter: None,
                                priority_delta: None,
                                topology: bench.topology,
                                worker,
                                partitioning: Some(split.clone()),
                                partition_file: None,
                                kernel_times: false,
                                defer_steps: None,
                            }),
                            variant: choice.map(str::to_string),
                            ..base.clone()
                        };
                        let parts = best(algorithm, &graph, Target::Cpu, &params, bench.repeat)?;
                        if mode == Mode::Async && parts.multi.as_ref().is_none_or(|r| r.sync.async_loops == 0) {
                            // No loop of this variant runs asynchronously: the row would repeat bsp's.
                            continue;
                        }
                        let variant = parts.variant.map_or("", |v| v.name);
                        // The one device with the same variant, once per algorithm and graph.
                        if variant != default
                            && !rows.iter().any(|r| {
                                r.graph == label
                                    && r.algorithm == algorithm
                                    && r.variant == variant
                                    && r.report.is_none()
                            })
                        {
                            let same = RunParams { variant: Some(variant.to_string()), ..base.clone() };
                            let one = best(algorithm, &graph, bench.baseline, &same, bench.repeat)?;
                            rows.push(Row::one_device(&label, algorithm, &baseline_name, variant, &one));
                            emit(&rows);
                        }
                        rows.push(Row {
                            graph: label.clone(),
                            algorithm,
                            devices: device_list(devices),
                            variant,
                            partition: Some(partition),
                            mode: Some(mode),
                            topology: bench.topology,
                            worker,
                            time_ms: millis(parts.time),
                            algo_ms: algo_time(&parts),
                            report: parts.multi,
                        });
                        emit(&rows);
                    }
                }
            }
        }
    }
    if let Some(plot) = &bench.plot {
        let rows = json_rows(&rows);
        crate::plot::table_bars(
            plot,
            "grail bench multi: speedup over the best one-device time",
            "speedup (x)",
            &rows,
            |r| format!("{} {}", r["graph"].as_str().unwrap_or(""), r["algorithm"].as_str().unwrap_or("")),
            |r| {
                let split = r["partition"].as_str()?;
                Some(format!("{} ({split}, {})", r["devices"].as_str().unwrap_or(""), r["mode"].as_str().unwrap_or("")))
            },
            |r| r["speedup"].as_f64(),
        )?;
    }
    if bench.json {
        println!("{}", serde_json::to_string_pretty(&json_rows(&rows))?);
    }
    Ok(())
}

/// The speedup's base of a row: the best one-device algo time of its graph and algorithm among
/// `rows` (measured before any partitioned row of theirs, so a row printed as it comes has it).
fn baseline(rows: &[Row], row: &Row) -> f64 {
    rows.iter()
        .filter(|r| r.report.is_none() && r.graph == row.graph && r.algorithm == row.algorithm)
        .map(|r| r.algo_ms)
        .fold(f64::INFINITY, f64::min)
}

/// The rows as JSON objects (what `--json` prints and `--plot` draws).
fn json_rows(rows: &[Row]) -> Vec<serde_json::Value> {
    rows.iter()
        .map(|row| {
            json!({
                "graph": row.graph,
                "algorithm": row.algorithm.name(),
                "devices": row.devices,
                "variant": row.variant,
                "partition": row.partition.map(Method::name),
                "mode": row.mode.map(|_| mode_name(row)),
                "time_ms": row.time_ms,
                "algo_ms": row.algo_ms,
                "speedup": baseline(rows, row) / row.algo_ms,
                "sync_share": row.report.as_ref().map(|r| millis(r.sync.sync) / row.algo_ms.max(1e-9)),
                "edge_cut": row.report.as_ref().map(|r| r.edge_cut),
                "steps": row.report.as_ref().map(|r| r.sync.steps),
                // What crossed between the parts: ghosts' changes merged into their owners,
                // owners' values copied to ghosts, pushed nodes forwarded to their owners.
                "merged": row.report.as_ref().map(|r| r.sync.merged),
                "copied": row.report.as_ref().map(|r| r.sync.copied),
                "forwarded": row.report.as_ref().map(|r| r.sync.forwarded),
            })
        })
        .collect()
}

fn header() -> String {
    format!(
        "{:<12} {:<5} {:<22} {:<9} {:<8} {:<10} {:>10} {:>10} {:>8} {:>6} {:>6} {:>8}",
        "graph",
        "algo",
        "devices",
        "variant",
        "split",
        "mode",
        "time ms",
        "algo ms",
        "speedup",
        "sync%",
        "cut%",
        "steps"
    )
}

/// A table line for `row`, one of `rows`.
fn table_line(rows: &[Row], row: &Row) -> String {
    let (sync, cut, steps) = match &row.report {
        Some(r) => (
            format!("{:.1}", 100.0 * millis(r.sync.sync) / row.algo_ms.max(1e-9)),
            format!("{:.1}", 100.0 * r.edge_cut),
            r.sync.steps.to_string(),
        ),
        None => ("-".into(), "-".into(), "-".into()),
    };
    format!(
        "{:<12} {:<5} {:<22} {:<9} {:<8} {:<10} {:>10.2} {:>10.2} {:>8.2} {:>6} {:>6} {:>8}",
        row.graph,
        row.algorithm.name(),
        row.devices,
        row.variant,
        row.partition.map_or("-", Method::name),
        row.mode.map_or("-", |_| mode_name(row)),
        row.time_ms,
        row.algo_ms,
        baseline(rows, row) / row.algo_ms,
        sync,
        cut,
        steps
    )
}

/// A partitioned row's mode: `async-ring` for the asynchronous mode around a ring,
/// `async-host` for its loops driven from the host where the fused worker could take them.
fn mode_name(row: &Row) -> &'static str {
    match (row.mode, row.topology) {
        (Some(Mode::Async), Topology::Ring) => "async-ring",
        (Some(Mode::Async), _) if row.worker == Worker::Host => "async-host",
        (Some(Mode::Async), _) => "async",
        _ => "bsp",
    }
}
