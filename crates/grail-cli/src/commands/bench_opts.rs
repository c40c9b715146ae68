//! `grail bench opts`: what each optimization does, as IrGL's Figures 8 and 9 show it.
//!
//! For each target, generated graph (`--graphs`, as `grail bench suite` makes them) and
//! program (each suite algorithm's default variant, and `traverse`, IrGL's traversal
//! microbenchmark of Listing 5), the program runs with:
//!
//! - `none`: unoptimized, the baseline every speedup is over;
//! - each optimization alone (`outline=all`, `np=tb+wp+fg`, `coop=warp`, `backoff=on`,
//!   `ldg=on`), where the target has the key;
//! - `all`: every optimization, as `--opt all` gives it;
//! - `tuned`: the tuning database's configuration for the program, target and the graph's class,
//!   when `grail tune` recorded one (otherwise the row says so; nothing is made up).
//!
//! A configuration the program gives the pass nothing to do with is shown as not applicable,
//! with the pass's reason; one that compiles to the same program as a configuration already
//! measured (the same generated code on this target; see `grail_algos::tuning::space`) is shown
//! with that configuration's times and marked as the same program, rather than measured again.
//! Each measured configuration runs once untimed, its result verified (suite algorithms by their
//! verifiers, except that a triangle count, once one configuration's has passed the verifier,
//! must equal it; `traverse` must push each edge's head once) and memory, caches and worker threads
//! warmed up, then `--repeat` times; the best end-to-end time and the best kernel time are
//! reported (GPU: CUDA events around every kernel; CPU: the executor's time inside kernels),
//! with speedups over `none`. `kernel ms` of `traverse` is its `traverse` kernel alone, the loop
//! Listing 5 times.

use std::collections::HashMap;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use grail_algos::suite::compile_source;
use grail_algos::tuning::class::{self, Classified};
use grail_algos::tuning::space::{self, Fingerprint, Key, Space, target_keys};
use grail_algos::tuning::{OptSource, ProgramId};
use grail_algos::{Algorithm, OptChoice, RunParams, Target, Variant, verify};
use grail_graph::Graph;
use grail_ir::{Module, OptConfig};
use grail_runtime::ModuleCache;
use grail_runtime::cpu::{RunStats, Value};
use serde_json::json;

use super::bench_suite::BenchGraph;
use super::millis;
use super::targets::Builder;
use crate::progress::Bars;

/// The microbenchmark's program name.
const TRAVERSE: &str = "traverse";

/// The keys shown alone, in the order of IrGL's figures' legends.
const ALONE: [Key; 5] = [Key::Outline, Key::Np, Key::Coop, Key::Backoff, Key::Ldg];

/// What `grail bench opts` was asked for.
pub struct OptsBench {
    pub graphs: Vec<BenchGraph>,
    pub algorithms: Vec<String>,
    pub repeat: u32,
    pub targets: Vec<Target>,
    pub device: usize,
    pub json: bool,
    pub threads: usize,
    /// Also draw the speedups as an SVG chart here.
    pub plot: Option<std::path::PathBuf>,
}

/// A program the table covers.
struct Program {
    /// What the table calls it: `bfs`, `traverse`.
    name: String,
    /// The suite variant, or `None` for `traverse`.
    variant: Option<&'static Variant>,
    lowered: Module,
    id: ProgramId,
}

pub fn opts(bench: OptsBench, progress: &Bars) -> Result<()> {
    if let Some(plot) = &bench.plot {
        crate::plot::check_path(plot)?;
    }
    if let Some(target) = bench.targets.iter().find(|t| **t == Target::Reference) {
        bail!("--targets: {target} is not a generated target (expected cpu or gpu)");
    }
    let names: Vec<String> = if bench.algorithms.is_empty() {
        Algorithm::ALL.iter().map(|a| a.name().to_string()).chain([TRAVERSE.to_string()]).collect()
    } else {
        bench.algorithms.clone()
    };
    let mut programs = Vec::new();
    for name in names {
        let (variant, program) = if name == TRAVERSE {
            (None, TRAVERSE)
        } else {
            let algorithm: Algorithm =
                name.parse().map_err(|e: String| super::UsageError(format!("--algorithms: {e}, or {TRAVERSE}")))?;
            let variant = Variant::find(algorithm, None).map_err(super::UsageError)?;
            (Some(variant), variant.program)
        };
        let source = grail_algos::program_source(program).expect("suite programs exist");
        let lowered = compile_source(program, source)?;
        let id = ProgramId::of(program, &lowered);
        programs.push(Program { name, variant, lowered, id });
    }
    let builders = bench.targets.iter().map(|&t| Builder::new(t, bench.device)).collect::<Result<Vec<_>>>()?;
    let cache = ModuleCache::default_location();

    let mut rows = Vec::new();
    for spec in &bench.graphs {
        let (label, graph) = (spec.label().to_string(), spec.make(progress)?);
        let classified = class::classify(&graph);
        for builder in &builders {
            if !bench.json {
                println!(
                    "\n{label} ({} nodes, {} edges, class {}), target {}",
                    graph.num_nodes(),
                    graph.num_edges(),
                    classified.class,
                    builder.key()
                );
                println!(
                    "  {:<10} {:<9} {:>10} {:>10} {:>8} {:>8}  {:<8} note",
                    "program", "config", "time ms", "kernel ms", "speedup", "kernel", "verified"
                );
            }
            for program in &programs {
                let table = Table { builder, graph: &graph, label: &label, classified: &classified, cache: &cache };
                for row in table.rows(program, &bench)? {
                    if !bench.json {
                        print_row(&row);
                    }
                    rows.push(row);
                }
            }
        }
    }
    if let Some(plot) = &bench.plot {
        crate::plot::table_bars(
            plot,
            "grail bench opts: speedup over unoptimized (end to end)",
            "speedup over none (x)",
            &rows,
            |r| format!("{} {}", r["program"].as_str().unwrap_or(""), r["graph"].as_str().unwrap_or("")),
            |r| r["config"].as_str().filter(|c| *c != "none").map(String::from),
            |r| r["speedup"].as_f64(),
        )?;
    }
    if bench.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        print_summary(&rows);
        println!(
            "\ntimes: best of {} runs, {} CPU threads; speedups over `none`; kernel ms: GPU kernel time by CUDA \
             events, CPU time inside kernels",
            bench.repeat,
            if bench.threads == 0 { rayon::current_num_threads() } else { bench.threads }
        );
    }
    Ok(())
}

/// One graph on one target.
struct Table<'a> {
    builder: &'a Builder,
    graph: &'a Graph,
    label: &'a str,
    classified: &'a Classified,
    cache: &'a ModuleCache,
}

/// A measured configuration.
#[derive(Clone)]
struct Timing {
    time: Duration,
    kernel: Duration,
    /// Which row measured it.
    row: String,
}

impl<'a> Table<'a> {
    fn rows(&self, program: &Program, bench: &OptsBench) -> Result<Vec<serde_json::Value>> {
        let target = self.builder.target();
        let space = Space::of(&program.lowered, target)?;
        let mut configs: Vec<(String, Result<OptConfig, String>)> = vec![("none".into(), Ok(OptConfig::NONE))];
        for key in ALONE {
            let config = if !target_keys(target).contains(&key) {
                Err(format!("the {target} target has no such key"))
            } else if let Some(skipped) = space.skipped.iter().find(|s| s.key == key) {
                Err(format!("not applicable: {}", skipped.why))
            } else {
                Ok(key.all_value().apply(OptConfig::NONE))
            };
            configs.push((key.name().into(), config));
        }
        configs.push(("all".into(), Ok(OptConfig::all())));
        let resolution = self.builder.resolve(OptChoice::Tuned, &program.id, Some(self.graph));
        configs.push((
            "tuned".into(),
            match resolution.source {
                OptSource::Tuned { .. } => Ok(resolution.config),
                _ => Err(format!("not tuned for class {} (grail tune records it)", self.classified.class)),
            },
        ));

        let mut measured: HashMap<Fingerprint, Timing> = HashMap::new();
        let mut none: Option<Timing> = None;
        let mut rows = Vec::new();
        let mut prepared = None;
        let mut triangles = None;
        for (label, config) in configs {
            let mut row = json!({
                "target": self.builder.key().key,
                "graph": self.label,
                "nodes": self.graph.num_nodes(),
                "edges": self.graph.num_edges(),
                "class": self.classified.class.to_string(),
                "program": program.name,
                "variant": program.variant.map(|v| v.name),
                "config": label,
                "opt": config.as_ref().ok().map(|c| c.to_string()),
            });
            let config = match config {
                Ok(config) => config,
                Err(why) => {
                    row["note"] = why.into();
                    rows.push(row);
                    continue;
                }
            };
            let print = space::fingerprint(&program.lowered, &config, target)?;
            let timing = match measured.get(&print) {
                Some(timing) => {
                    row["note"] = format!("the same program as `{}` on this target", timing.row).into();
                    timing.clone()
                }
                None => {
                    let (time, kernel) = self
                        .measure(program, &config, bench, &mut prepared, &mut triangles)
                        .with_context(|| format!("{} with {config} on {} ({target})", program.name, self.label))?;
                    row["verified"] = true.into();
                    let timing = Timing { time, kernel, row: label.clone() };
                    measured.insert(print, timing.clone());
                    timing
                }
            };
            let none = none.get_or_insert_with(|| timing.clone());
            row["time_ms"] = millis(timing.time).into();
            row["kernel_ms"] = millis(timing.kernel).into();
            row["speedup"] = (none.time.as_secs_f64() / timing.time.as_secs_f64()).into();
            row["kernel_speedup"] = (none.kernel.as_secs_f64() / timing.kernel.as_secs_f64().max(1e-12)).into();
            rows.push(row);
        }
        Ok(rows)
    }

    /// Compiles and runs one configuration `repeat` times, verifying the first run: the best
    /// end-to-end and kernel times.
    fn measure(
        &self,
        program: &Program,
        config: &OptConfig,
        bench: &OptsBench,
        prepared: &mut Option<grail_algos::suite::Prepared<'a>>,
        triangles: &mut Option<grail_algos::Output>,
    ) -> Result<(Duration, Duration)> {
        let params = RunParams { threads: bench.threads, device: bench.device, ..Default::default() };
        let (mut best, mut best_kernel) = (Duration::MAX, Duration::MAX);
        match program.variant {
            Some(variant) => {
                let compiled = self.builder.suite(variant, config, self.cache)?;
                if prepared.is_none() {
                    *prepared = Some(compiled.prepare(self.graph)?);
                }
                let input = prepared.as_ref().expect("prepared above");
                let first = compiled.run_prepared(self.graph, input, &params)?;
                match triangles {
                    // The triangle verifier counts them again (seconds on a large graph): once
                    // one configuration's count has passed it, the others must give that count.
                    Some(verified) if *verified != first.output => {
                        return Err(grail_graph::GraphError::Verification(format!(
                            "{:?} differs from the verified {verified:?} of an earlier configuration",
                            first.output
                        ))
                        .into());
                    }
                    Some(_) => {}
                    None => {
                        verify(variant.algorithm, self.graph, &params, &first.output)?;
                        if variant.algorithm == Algorithm::Tri {
                            *triangles = Some(first.output.clone());
                        }
                    }
                }
                for _ in 0..bench.repeat.max(1) {
                    let result = compiled.run_prepared(self.graph, input, &params)?;
                    best = best.min(result.stats.elapsed);
                    best_kernel = best_kernel.min(match &result.gpu {
                        Some(gpu) => gpu.kernels,
                        None => kernel_time(&result.stats, None),
                    });
                }
            }
            None => {
                let compiled = self.builder.optimized(&program.lowered, config, self.cache)?;
                let heads: u64 = self.graph.out().targets().iter().map(|&v| u64::from(v)).sum();
                let (first, _) = compiled.run(self.graph, &[], &[], bench.threads, &mut std::io::sink())?;
                if first.result != Some(Value::U64(heads)) {
                    return Err(grail_graph::GraphError::Verification(format!(
                        "{TRAVERSE} pushed ids summing to {}, not every edge's head once ({heads})",
                        first.result.map_or("nothing".into(), |v| v.to_string()),
                    ))
                    .into());
                }
                for _ in 0..bench.repeat.max(1) {
                    let (output, _) = compiled.run(self.graph, &[], &[], bench.threads, &mut std::io::sink())?;
                    best = best.min(output.stats.elapsed);
                    best_kernel = best_kernel.min(kernel_time(&output.stats, Some(TRAVERSE)));
                }
            }
        }
        Ok((best, best_kernel))
    }
}

/// Time spent inside kernels (only the one named, when given).
fn kernel_time(stats: &RunStats, only: Option<&str>) -> Duration {
    stats.kernels.iter().filter(|k| only.is_none_or(|name| k.name == name)).map(|k| k.time).sum()
}

fn print_row(row: &serde_json::Value) {
    let number = |key: &str, digits: usize| row[key].as_f64().map_or("-".to_string(), |v| format!("{v:.digits$}"));
    let times = |key: &str| row[key].as_f64().map_or("-".to_string(), |v| format!("{v:.2}x"));
    let program = match row["variant"].as_str() {
        Some(variant) => format!("{} {variant}", row["program"].as_str().unwrap_or("")),
        None => row["program"].as_str().unwrap_or("").to_string(),
    };
    println!(
        "  {:<10} {:<9} {:>10} {:>10} {:>8} {:>8}  {:<8} {}",
        program,
        row["config"].as_str().unwrap_or(""),
        number("time_ms", 3),
        number("kernel_ms", 3),
        times("speedup"),
        times("kernel_speedup"),
        if row["verified"].as_bool() == Some(true) { "ok" } else { "" },
        row["note"].as_str().unwrap_or("")
    );
}

/// Figure 8: the speedup of `all` and of `tuned` over `none`, per program, graph and target,
/// and the median over the table.
fn print_summary(rows: &[serde_json::Value]) {
    let pick = |config: &str| -> Vec<&serde_json::Value> {
        rows.iter().filter(|r| r["config"] == config && r["speedup"].is_f64()).collect()
    };
    let (all, tuned) = (pick("all"), pick("tuned"));
    if all.is_empty() {
        return;
    }
    println!("\nspeedup over none (end to end):");
    println!("  {:<8} {:<14} {:<10} {:>8} {:>8}", "target", "graph", "program", "all", "tuned");
    for row in &all {
        let tuned = tuned
            .iter()
            .find(|t| t["target"] == row["target"] && t["graph"] == row["graph"] && t["program"] == row["program"])
            .and_then(|t| t["speedup"].as_f64())
            .map_or("-".to_string(), |s| format!("{s:.2}x"));
        println!(
            "  {:<8} {:<14} {:<10} {:>8} {:>8}",
            row["target"].as_str().unwrap_or(""),
            row["graph"].as_str().unwrap_or(""),
            row["program"].as_str().unwrap_or(""),
            format!("{:.2}x", row["speedup"].as_f64().unwrap_or(0.0)),
            tuned
        );
    }
    let median = |rows: &[&serde_json::Value]| {
        let mut s: Vec<f64> = rows.iter().filter_map(|r| r["speedup"].as_f64()).collect();
        s.sort_by(f64::total_cmp);
        s.get(s.len() / 2).copied()
    };
    if let Some(m) = median(&all) {
        println!("  median speedup of all: {m:.2}x over {} rows", all.len());
    }
    if let Some(m) = median(&tuned) {
        println!("  median speedup of tuned: {m:.2}x over {} rows", tuned.len());
    }
}
