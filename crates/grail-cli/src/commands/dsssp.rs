//! `grail dsssp`: incremental single-source shortest paths over batches of edge insertions.

use std::time::Duration;

use anyhow::{Context, Result};
use grail_algos::Output;
use grail_algos::dsssp::{BatchReport, Options, Timing, run};
use grail_graph::io::ReadOptions;
use grail_graph::{BuildOptions, NodeId, Progress};
use serde_json::json;

use crate::cli::{BatchSize, DssspArgs, SourceNode};
use crate::commands::{UsageError, read_input};
use crate::progress::Bars;

pub fn dsssp(args: DssspArgs, threads: usize, progress: &Bars) -> Result<()> {
    if args.json && args.output.as_deref().is_some_and(|p| p.as_os_str() == "-") {
        return Err(UsageError("--json and -o - would both write to standard output; give -o a file".into()).into());
    }
    let options = ReadOptions { format: args.format, build: BuildOptions::default(), real_weights: Default::default() };
    let graph = read_input(&args.graph, &options, args.base, progress)?;
    let source = match args.source {
        SourceNode::MaxDegree if graph.num_nodes() == 0 => {
            return Err(UsageError("the graph has no nodes, so there is no source node".into()).into());
        }
        source => source.resolve(&graph)? as NodeId,
    };
    let batches = match (&args.updates, args.random_batches) {
        (Some(path), _) => grail_graph::insert::read_batches(path).context("cannot read the updates")?,
        (None, Some(count)) => {
            let size = match args.batch_size {
                Some(BatchSize::Edges(size)) => size,
                Some(BatchSize::Percent(percent)) => {
                    ((graph.num_edges() as f64 * percent / 100.0).round() as usize).max(1)
                }
                None => {
                    return Err(UsageError(
                        "--random-batches needs --batch-size (edges, or a share such as 0.1%)".into(),
                    )
                    .into());
                }
            };
            if graph.num_nodes() == 0 {
                return Err(UsageError("the graph has no nodes to insert edges between".into()).into());
            }
            if args.local {
                if graph.out().has_real_weights() {
                    return Err(UsageError("--local weighs integer walks; the graph has real weights".into()).into());
                }
                grail_graph::insert::random_local_batches(graph.out(), count, size, args.seed)
            } else {
                let max_weight = graph.out().weights().and_then(|w| w.iter().copied().max()).unwrap_or(1).max(1);
                grail_graph::insert::random_batches(graph.num_nodes(), count, size, max_weight, args.seed)
            }
        }
        (None, None) => {
            return Err(
                UsageError("give the insertions: --updates FILE, or --random-batches K --batch-size B".into()).into()
            );
        }
    };
    let edges_before = graph.num_edges();
    let run_options = Options {
        target: args.target,
        device: args.program.device,
        threads,
        opt: args.program.opt,
        fresh: !args.no_fresh,
        verify: args.verify,
    };
    progress.begin("updating", Some(batches.len() as u64));
    let report = run(graph, source, &batches, &run_options, |_| progress.advance(1))?;
    progress.finish();
    if let Some(path) = &args.output {
        grail_graph::io::write_text_file(path, |out| Output::Distances(report.distances.clone()).write_values(out))
            .context("cannot write the distances")?;
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let timing =
        |t: &Timing| json!({ "total_ms": ms(t.total), "compute_ms": ms(t.compute), "read_back_ms": ms(t.read_back) });
    let speedup =
        |b: &BatchReport| b.fresh.as_ref().map(|f| f.compute.as_secs_f64() / b.update.compute.as_secs_f64().max(1e-9));
    if args.json {
        let batches: Vec<_> = report
            .batches
            .iter()
            .map(|b| {
                json!({
                    "batch": b.index,
                    "inserted": b.inserted,
                    "edges": b.edges,
                    "lowered": b.lowered,
                    "merge_ms": ms(b.merge),
                    "insert_ms": ms(b.insert),
                    "update_ms": ms(b.update.compute),
                    "update_total_ms": ms(b.update.total),
                    "update_read_back_ms": ms(b.update.read_back),
                    "fresh_ms": b.fresh.as_ref().map(|f| ms(f.compute)),
                    "fresh_total_ms": b.fresh.as_ref().map(|f| ms(f.total)),
                    "fresh_read_back_ms": b.fresh.as_ref().map(|f| ms(f.read_back)),
                    "speedup": speedup(b),
                    "update_kernels": kernel_rows(&b.update.kernels),
                    "verified": b.verified,
                })
            })
            .collect();
        let summary = json!({
            "graph": args.graph.display().to_string(),
            "nodes": report.graph.num_nodes(),
            "edges_before": edges_before,
            "edges_after": report.graph.num_edges(),
            "source": source,
            "target": args.target.name(),
            "opt": args.program.opt.to_string(),
            "initial": timing(&report.initial),
            "batches": batches,
            "time_ms": report.batches.iter().map(|b| ms(b.update.compute)).sum::<f64>(),
            "verified": args.verify,
        });
        println!("{}", serde_json::to_string_pretty(&summary)?);
        return Ok(());
    }
    if args.output.as_deref().is_some_and(|p| p.as_os_str() == "-") {
        return Ok(()); // The distances went to standard output.
    }
    println!(
        "{}: {} nodes, {} edges; source {source}; {} batches on {}",
        args.graph.display(),
        report.graph.num_nodes(),
        edges_before,
        report.batches.len(),
        args.target
    );
    println!("  initial solve: {:.2} ms ({:.2} ms computing)", ms(report.initial.total), ms(report.initial.compute));
    for b in &report.batches {
        let fresh = match (b.fresh.as_ref(), speedup(b)) {
            (Some(f), Some(x)) => {
                let whole = ms(f.total) / ms(b.update.total).max(1e-9);
                format!(
                    "; from scratch {:.2} ms ({:.2} computing): {x:.1}x computing, {whole:.1}x whole",
                    ms(f.total),
                    ms(f.compute)
                )
            }
            _ => String::new(),
        };
        let device = if b.insert.is_zero() { String::new() } else { format!(", {:.2} on the device", ms(b.insert)) };
        println!(
            "  batch {}: {} edges in ({:.2} ms inserting on the host{device}), {} distances lowered; update {:.2} ms \
             ({:.2} computing){fresh}{}",
            b.index,
            b.inserted,
            ms(b.merge),
            b.lowered,
            ms(b.update.total),
            ms(b.update.compute),
            if b.verified { "; verified" } else { "" }
        );
    }
    Ok(())
}

/// A run's kernels as JSON rows: where a repair's time went (how many windows, how many items).
fn kernel_rows(kernels: &[grail_runtime::cpu::KernelStats]) -> Vec<serde_json::Value> {
    kernels
        .iter()
        .filter(|k| k.invocations > 0)
        .map(|k| {
            json!({
                "name": k.name,
                "invocations": k.invocations,
                "items": k.items,
                "ms": k.time.as_secs_f64() * 1e3,
            })
        })
        .collect()
}
