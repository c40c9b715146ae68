//! Parallel sections (Falcon's): several suite algorithms at once on one graph, each on its own
//! device, a GPU or the CPU, sharing the graph in memory. Each section is an ordinary run of
//! its algorithm ([`crate::run`]) on its own thread; CPU sections share the cores equally.
//! `grail sections` prints each section's time beside the wall time of all of them.

use std::time::{Duration, Instant};

use grail_graph::Graph;
use grail_runtime::multi::Device;

use crate::error::{AlgoError, Result};
use crate::{Algorithm, RunParams, RunResult, Target, run};

/// One algorithm on one device.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub algorithm: Algorithm,
    /// A suite variant's name (`wl`, `push`...), or the default.
    pub variant: Option<String>,
    pub device: Device,
}

impl Section {
    /// `ALGO[/VARIANT]@DEVICE`: `bfs@gpu:0`, `pr/push@cpu`, `sssp/nf@gpu:1`.
    pub fn parse(text: &str) -> std::result::Result<Section, String> {
        let (what, device) = text
            .split_once('@')
            .ok_or_else(|| format!("`{text}`: expected ALGO[/VARIANT]@DEVICE, e.g. bfs@gpu:0 or pr/push@cpu"))?;
        let (algorithm, variant) = match what.split_once('/') {
            Some((a, v)) => (a, Some(v.to_string())),
            None => (what, None),
        };
        let algorithm = algorithm.parse::<Algorithm>().map_err(|e| format!("`{text}`: {e}"))?;
        let device = parse_one_device(device).map_err(|e| format!("`{text}`: {e}"))?;
        Ok(Section { algorithm, variant, device })
    }
}

/// The one device after a section's `@`: `cpu`, `gpu` or `gpu:N`.
fn parse_one_device(text: &str) -> std::result::Result<Device, String> {
    const EXPECTED: &str = "expected cpu, gpu or gpu:N";
    let word = text.trim();
    if word.is_empty() {
        return Err(format!("no device after `@` ({EXPECTED})"));
    }
    let several = |count: String| {
        format!(
            "`{word}` names {count}, and a section runs on one device ({EXPECTED}); one algorithm over several \
             devices is `grail run ALGO --devices {word}`"
        )
    };
    if word == "all" {
        return Err(several("every GPU".into()));
    }
    let known = |w: &str| {
        matches!(w.trim(), "cpu" | "gpu" | "all") || w.trim().starts_with("gpu:") || w.trim().starts_with("cpu*")
    };
    if let Some(unknown) = word.split(',').find(|w| !w.trim().is_empty() && !known(w)) {
        return Err(format!("unknown device `{}` ({EXPECTED})", unknown.trim()));
    }
    let devices = grail_runtime::multi::parse_devices(word, || Err("`all` is not a section's device".into()))?;
    match devices[..] {
        [device] => Ok(device),
        _ => Err(several(format!("{} devices", devices.len()))),
    }
}

/// What one section gave.
#[derive(Debug)]
pub struct SectionResult {
    pub section: Section,
    pub result: RunResult,
}

/// Runs every section at once on `graph` (`base` gives the source, iterations and the like);
/// returns each result in order and the wall time of all of them.
pub fn run_sections(graph: &Graph, sections: &[Section], base: &RunParams) -> Result<(Vec<SectionResult>, Duration)> {
    if sections.is_empty() {
        return Err(AlgoError::Usage("no section to run: name at least one ALGO@DEVICE".into()));
    }
    let cpus = sections.iter().filter(|s| s.device == Device::Cpu).count();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cpu_threads = match base.threads {
        0 => (cores / cpus.max(1)).max(1),
        n => n,
    };
    let started = Instant::now();
    let results: Vec<Result<SectionResult>> = std::thread::scope(|scope| {
        let workers: Vec<_> = sections
            .iter()
            .map(|section| {
                scope.spawn(move || {
                    let (target, device, threads) = match section.device {
                        Device::Cpu => (Target::Cpu, 0, cpu_threads),
                        Device::Gpu(n) => (Target::Gpu, n as usize, base.threads),
                    };
                    let params = RunParams { variant: section.variant.clone(), device, threads, ..base.clone() };
                    let result = run(section.algorithm, graph, target, &params)?;
                    Ok(SectionResult { section: section.clone(), result })
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("a section's thread")).collect()
    });
    let wall = started.elapsed();
    Ok((results.into_iter().collect::<Result<Vec<_>>>()?, wall))
}
