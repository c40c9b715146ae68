//! `grail sections`: several suite algorithms at once, each on its own device
//! (`grail_algos::sections`).

use anyhow::Result;
use grail_algos::sections::{Section, run_sections};
use grail_algos::{RunParams, verify};
use grail_graph::Progress;
use grail_graph::io::ReadOptions;
use serde_json::json;

use super::{UsageError, millis};
use crate::cli::SectionsArgs;
use crate::progress::Bars;

pub fn sections(args: SectionsArgs, threads: usize, progress: &Bars) -> Result<()> {
    let sections = args
        .sections
        .iter()
        .map(|s| Section::parse(s))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(UsageError)?;
    let options = ReadOptions { format: args.format, ..Default::default() };
    let graph = super::read_input(&args.graph, &options, args.base, progress)?;
    let params = RunParams { source: args.source, threads, ..RunParams::default() };
    progress.begin("running the sections", None);
    let ran = run_sections(&graph, &sections, &params);
    progress.finish();
    let (results, wall) = ran?;
    if args.verify {
        for done in &results {
            verify(done.section.algorithm, &graph, &params, &done.result.output)?;
        }
    }
    progress.clear();
    let name = |s: &Section| {
        let variant = s.variant.as_deref().map_or(String::new(), |v| format!("/{v}"));
        format!("{}{variant}@{}", s.algorithm.name(), s.device)
    };
    if args.json {
        let rows: Vec<_> = results
            .iter()
            .map(|done| {
                json!({
                    "section": name(&done.section),
                    "variant": done.result.variant.map(|v| v.name),
                    "time_ms": millis(done.result.time),
                })
            })
            .collect();
        let summary = json!({ "sections": rows, "wall_ms": millis(wall), "verified": args.verify.then_some(true) });
        println!("{}", serde_json::to_string_pretty(&summary)?);
        return Ok(());
    }
    for done in &results {
        let variant = done.result.variant.map_or("-", |v| v.name);
        println!("{:<24} {:<9} {:>10.2} ms", name(&done.section), variant, millis(done.result.time));
    }
    let sum: f64 = results.iter().map(|d| millis(d.result.time)).sum();
    println!(
        "all at once: {:.2} ms of wall time (the sections' times add up to {sum:.2} ms){}",
        millis(wall),
        if args.verify { ", every result verified" } else { "" }
    );
    Ok(())
}
