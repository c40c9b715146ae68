//! `grail tune`: find the fastest optimization configuration of a program on an input, and
//! record it in the tuning database for the input's class.
//!
//! The program is a suite algorithm (each candidate's result checked by the algorithm's
//! verifier) or a program file (each candidate's outputs compared with the unoptimized
//! configuration's, when that configuration gives the same outputs twice; a program whose
//! outputs vary from run to run is measured unchecked, with a warning). The configuration
//! space, the order of the search, pruning and the budget are `grail_algos::tuning`'s
//! (`space` and `search`); this command compiles and runs the candidates, draws the progress
//! bar, prints the table and records the winner.

use std::path::Path;
use std::time::Duration;

use anyhow::Result;
use grail_algos::suite::{Prepared, SuiteProgram, compile_source};
use grail_algos::tuning::class::{self, Classified};
use grail_algos::tuning::db::{self, CandidateRecord, Database, Entry};
use grail_algos::tuning::search::{self, Candidate, Measure, Observer, Outcome, Sample, SearchError, Status};
use grail_algos::tuning::space::{self, Space};
use grail_algos::tuning::{ProgramId, TargetKey};
use grail_algos::{Algorithm, RunParams, Target, Variant, verify};
use grail_graph::properties::Column;
use grail_graph::{BuildOptions, Graph};
use grail_ir::{Module, OptConfig};
use grail_runtime::ModuleCache;
use grail_runtime::cpu::{RunOutput, Value};
use serde_json::json;

use super::targets::{Builder, FileProgram};
use super::{UsageError, load, millis};
use crate::cli::TuneArgs;
use crate::progress::Bars;

/// What is being tuned.
enum Subject {
    Suite { algorithm: Algorithm, variant: &'static Variant },
    File { values: Vec<Option<Value>> },
}

pub fn tune(args: TuneArgs, threads: usize, progress: &Bars) -> Result<()> {
    if let Ok(algorithm) = args.program.parse::<Algorithm>()
        && super::variant_help(algorithm, args.variant.as_deref())
    {
        return Ok(());
    }
    let target = args.target.unwrap_or(Target::Cpu);
    if target == Target::Reference {
        return Err(UsageError("grail tune measures generated code: --target cpu or gpu".into()).into());
    }
    if args.device.is_some() && target != Target::Gpu {
        return Err(UsageError("--device chooses the GPU of --target gpu".into()).into());
    }
    let (subject, lowered, name) = match args.program.parse::<Algorithm>() {
        Ok(algorithm) => {
            let variant = Variant::find(algorithm, args.variant.as_deref()).map_err(UsageError)?;
            let source = grail_algos::program_source(variant.program).expect("every variant names a suite program");
            let lowered = compile_source(variant.program, source)?;
            (Subject::Suite { algorithm, variant }, lowered, variant.program.to_string())
        }
        Err(message) => {
            let path = Path::new(&args.program);
            if !(args.program.ends_with(".grail")
                || path.is_file()
                || grail_algos::program_source(&args.program).is_some())
            {
                return Err(UsageError(format!("{message}, nor is '{}' a grail program file", args.program)).into());
            }
            if args.variant.is_some() {
                return Err(UsageError("--variant is for suite algorithms".into()).into());
            }
            let lowered = super::check::lower_file(path)?;
            let values = super::run::file_params(&lowered, &args.params, args.source)?;
            (Subject::File { values }, lowered, args.program.clone())
        }
    };
    let program_id = ProgramId::of(&name, &lowered);
    let builder = Builder::new(target, args.device.unwrap_or(0))?;
    let database = db::default_path();
    if !args.dry_run {
        // A database that cannot be read would be overwritten at the end: refuse now.
        Database::load(&database)?;
    }
    let space = Space::of(&lowered, target)?;

    let graph = load(&args.graph, BuildOptions::AS_GIVEN, progress)?;
    progress.clear();
    let classified = class::classify(&graph);
    let options = search::Options { budget: args.budget, repeat: args.repeat, prune_factor: 2.0 };
    if !args.json {
        print_header(&name, &args, &builder, &graph, &classified, &space, &options);
    }

    let cache = ModuleCache::default_location();
    let fingerprint = |config: &OptConfig| space::fingerprint(&lowered, config, target);
    let mut observer = Bar { progress, name: &name };
    let outcome = match subject {
        Subject::Suite { algorithm, variant } => {
            let params = RunParams {
                source: args.source,
                variant: Some(variant.name.to_string()),
                program_params: args.params.clone(),
                threads,
                device: args.device.unwrap_or(0),
                ..Default::default()
            };
            if algorithm.needs_source() {
                params.source_in(&graph)?;
            }
            let mut measure = SuiteMeasure {
                builder: &builder,
                variant,
                cache: &cache,
                graph: &graph,
                params,
                program: None,
                prepared: None,
            };
            search::search(&space, &fingerprint, &mut measure, &mut observer, &options)
        }
        Subject::File { values } => {
            let mut measure = FileMeasure {
                builder: &builder,
                lowered: &lowered,
                cache: &cache,
                graph: &graph,
                values,
                threads,
                program: None,
                compiled: 0,
                runs: 0,
                reference: Reference::Unknown,
            };
            let outcome = search::search(&space, &fingerprint, &mut measure, &mut observer, &options);
            if matches!(measure.reference, Reference::Varies(_)) {
                progress.clear();
            }
            if let Reference::Varies(why) = &measure.reference {
                eprintln!(
                    "warning: {name}'s outputs differ between two runs of the unoptimized configuration ({why}), so \
                     the candidates' outputs were not checked"
                );
            }
            outcome
        }
    };
    progress.clear();
    let outcome = outcome.map_err(|e| match e {
        SearchError::Setup(e) => anyhow::Error::from(e),
        SearchError::Baseline(e) => e.context(format!("{name} does not run unoptimized (--opt none)")),
    })?;
    for candidate in &outcome.candidates {
        if let Status::Failed(why) = &candidate.status
            && why.starts_with("wrong result")
        {
            eprintln!("warning: {} computed a wrong result; this is a bug in grail's passes: {why}", candidate.config);
        }
    }
    let Some(winner) = outcome.winner() else {
        let wrong = grail_graph::GraphError::Verification(format!(
            "no configuration of {name} computed a right result on {}",
            args.graph.path().display()
        ));
        return Err(anyhow::Error::from(wrong).context("nothing to record"));
    };
    let entry = Entry {
        program: name.clone(),
        program_hash: program_id.hash.clone(),
        target: builder.key().key,
        class: classified.class.to_string(),
        opt: winner.config.to_string(),
        time_ms: winner.best.map_or(0.0, millis),
        none_ms: outcome.none().best.map(millis),
        date: db::now_utc(),
        graph: args.graph.path().display().to_string(),
        features: classified.features.clone(),
        threads: (target == Target::Cpu).then(|| if threads == 0 { rayon::current_num_threads() } else { threads }),
        candidates: outcome.candidates.iter().map(record).collect(),
    };
    if !args.dry_run {
        Database::record(&database, entry.clone())?;
    }
    if args.json {
        print_json(&program_id, &builder.key(), &classified, &space, &outcome, &entry, &database, args.dry_run)?;
    } else {
        print_outcome(&outcome, &entry, &database, args.dry_run);
    }
    Ok(())
}

/// Compiles and runs a suite variant's candidates, checking each first run with the verifier.
struct SuiteMeasure<'a> {
    builder: &'a Builder,
    variant: &'static Variant,
    cache: &'a ModuleCache,
    graph: &'a Graph,
    params: RunParams,
    program: Option<SuiteProgram>,
    /// The input as the program needs it, made once (it does not depend on the configuration).
    prepared: Option<Prepared<'a>>,
}

impl Measure for SuiteMeasure<'_> {
    type Error = anyhow::Error;

    fn compile(&mut self, config: &OptConfig) -> Result<()> {
        let program = self.builder.suite(self.variant, config, self.cache)?;
        if self.prepared.is_none() {
            self.prepared = Some(program.prepare(self.graph)?);
        }
        self.program = Some(program);
        Ok(())
    }

    fn run(&mut self, check: bool) -> Result<Sample> {
        let program = self.program.as_ref().expect("compiled before running");
        let prepared = self.prepared.as_ref().expect("prepared when compiled");
        let run = program.run_prepared(self.graph, prepared, &self.params)?;
        let wrong = if check {
            verify(self.variant.algorithm, self.graph, &self.params, &run.output).err().map(|e| e.to_string())
        } else {
            None
        };
        let kernel = match &run.gpu {
            Some(gpu) => Some(gpu.kernels),
            None => Some(run.stats.kernels.iter().map(|k| k.time).sum()),
        };
        Ok(Sample { time: run.stats.elapsed, kernel, wrong })
    }
}

/// What a program file's candidates are checked against.
enum Reference {
    Unknown,
    /// The unoptimized configuration's outputs.
    Known(Outputs),
    /// They differ between two runs of the unoptimized configuration (why): not checked.
    Varies(String),
}

/// What a program computed: its output properties, collections and result.
struct Outputs {
    properties: Vec<(String, Column)>,
    collections: Vec<(String, Vec<String>)>,
    result: Option<Value>,
}

impl Outputs {
    fn of(module: &Module, mut output: RunOutput) -> Outputs {
        let properties = module
            .outputs
            .iter()
            .map(|id| {
                let column = std::mem::replace(&mut output.properties[id.index()], Column::Bool(Vec::new()));
                (module.properties[id.index()].name.clone(), column)
            })
            .collect();
        // Elements are added concurrently, so their order is not part of the result.
        let collections = module
            .collection_outputs
            .iter()
            .zip(output.collections)
            .map(|(id, elements)| {
                let mut text: Vec<String> = (0..elements.len())
                    .map(|row| {
                        let leaves =
                            (0..elements.leaves().len()).map(|leaf| format!("{:?}", elements.value(row, leaf)));
                        leaves.collect::<Vec<_>>().join(" ")
                    })
                    .collect();
                text.sort_unstable();
                (module.collections[id.index()].name.clone(), text)
            })
            .collect();
        Outputs { properties, collections, result: output.result }
    }

    /// Where `other` differs from these outputs, if it does (floats within a relative 1e-5).
    fn difference(&self, other: &Outputs) -> Option<String> {
        if !same_value(self.result.as_ref(), other.result.as_ref()) {
            return Some(format!(
                "the result is {} instead of {}",
                other.result.as_ref().map_or("nothing".into(), Value::to_string),
                self.result.as_ref().map_or("nothing".into(), Value::to_string)
            ));
        }
        for ((name, a), (_, b)) in self.properties.iter().zip(&other.properties) {
            if let Some(i) = first_difference(a, b) {
                return Some(format!("output `{name}` differs at element {i}"));
            }
        }
        for ((name, a), (_, b)) in self.collections.iter().zip(&other.collections) {
            if a != b {
                let count = |n: usize| format!("{n} element{}", if n == 1 { "" } else { "s" });
                return Some(format!("collection `{name}` differs ({} instead of {})", count(b.len()), count(a.len())));
            }
        }
        None
    }
}

fn close(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-5 * a.abs().max(b.abs()) || (a.is_nan() && b.is_nan())
}

fn same_value(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (Some(Value::F64(x)), Some(Value::F64(y))) => close(*x, *y),
        (Some(Value::F32(x)), Some(Value::F32(y))) => close(f64::from(*x), f64::from(*y)),
        (a, b) => a == b,
    }
}

/// The first index where two columns differ (the length, when one is a prefix of the other).
fn first_difference(a: &Column, b: &Column) -> Option<usize> {
    fn first<T>(a: &[T], b: &[T], same: impl Fn(&T, &T) -> bool) -> Option<usize> {
        a.iter().zip(b).position(|(x, y)| !same(x, y)).or_else(|| (a.len() != b.len()).then(|| a.len().min(b.len())))
    }
    match (a, b) {
        (Column::Bool(a), Column::Bool(b)) => first(a, b, |x, y| x == y),
        (Column::U32(a), Column::U32(b)) => first(a, b, |x, y| x == y),
        (Column::U64(a), Column::U64(b)) => first(a, b, |x, y| x == y),
        (Column::I32(a), Column::I32(b)) => first(a, b, |x, y| x == y),
        (Column::I64(a), Column::I64(b)) => first(a, b, |x, y| x == y),
        (Column::F32(a), Column::F32(b)) => first(a, b, |x, y| close(f64::from(*x), f64::from(*y))),
        (Column::F64(a), Column::F64(b)) => first(a, b, |x, y| close(*x, *y)),
        _ => Some(0),
    }
}

/// Compiles and runs a program file's candidates, checking each first run against the
/// unoptimized configuration's outputs. What the program prints is dropped.
struct FileMeasure<'a> {
    builder: &'a Builder,
    lowered: &'a Module,
    cache: &'a ModuleCache,
    graph: &'a Graph,
    values: Vec<Option<Value>>,
    threads: usize,
    program: Option<FileProgram>,
    /// Configurations compiled so far (the first is `none`), and runs of the current one.
    compiled: usize,
    runs: usize,
    reference: Reference,
}

impl Measure for FileMeasure<'_> {
    type Error = anyhow::Error;

    fn compile(&mut self, config: &OptConfig) -> Result<()> {
        self.program = Some(self.builder.optimized(self.lowered, config, self.cache)?);
        self.compiled += 1;
        self.runs = 0;
        Ok(())
    }

    fn run(&mut self, check: bool) -> Result<Sample> {
        let program = self.program.as_ref().expect("compiled before running");
        let (output, gpu) = program.run(self.graph, &self.values, &[], self.threads, &mut std::io::sink())?;
        self.runs += 1;
        let time = output.stats.elapsed;
        let kernel = match &gpu {
            Some(gpu) => Some(gpu.kernels),
            None => Some(output.stats.kernels.iter().map(|k| k.time).sum()),
        };
        let baseline = self.compiled == 1;
        let outputs = Outputs::of(program.module(), output);
        let mut wrong = None;
        match &self.reference {
            Reference::Unknown if baseline => self.reference = Reference::Known(outputs),
            Reference::Known(reference) if baseline && self.runs == 2 => {
                if let Some(why) = reference.difference(&outputs) {
                    self.reference = Reference::Varies(why);
                }
            }
            Reference::Known(reference) if check => wrong = reference.difference(&outputs),
            _ => {}
        }
        Ok(Sample { time, kernel, wrong })
    }
}

/// The progress bar: one step per distinct program measured.
struct Bar<'a> {
    progress: &'a Bars,
    name: &'a str,
}

impl Observer for Bar<'_> {
    fn start(&mut self, index: usize, planned: usize, candidate: &Candidate) {
        use grail_graph::Progress;
        if index == 0 {
            self.progress.begin("tuning", Some(planned as u64));
        }
        let what = candidate.label.clone().unwrap_or_else(|| candidate.config.to_string());
        self.progress.message(format!("tuning {} {}/{planned}: {what}", self.name, index + 1));
    }

    fn done(&mut self, _: usize, candidate: &Candidate, _: Option<Duration>) {
        use grail_graph::Progress;
        if !matches!(candidate.status, Status::Same(_)) {
            self.progress.advance(1);
        }
    }
}

fn record(candidate: &Candidate) -> CandidateRecord {
    CandidateRecord {
        opt: candidate.config.to_string(),
        status: candidate.status_text(),
        time_ms: candidate.best.map(millis),
        runs: candidate.runs,
        error: match &candidate.status {
            Status::Failed(why) => Some(why.clone()),
            _ => None,
        },
    }
}

fn describe_class(c: &Classified) -> String {
    let f = &c.features;
    let mean = f.mean_degree.max(f64::MIN_POSITIVE);
    format!(
        "class {} (max/mean degree {:.1}, {:.1}% of edges from hubs, diameter {}{}; {:.1} ms to classify)",
        c.class,
        f.max_degree as f64 / mean,
        f.hub_edge_share * 100.0,
        if f.diameter_exact || f.diameter >= class::HIGH_DIAMETER { "at least " } else { "about " },
        f.diameter,
        f.millis
    )
}

fn print_header(
    name: &str,
    args: &TuneArgs,
    builder: &Builder,
    graph: &Graph,
    classified: &Classified,
    space: &Space,
    options: &search::Options,
) {
    println!("tune {name} on {}, target {}", args.graph.path().display(), builder.key());
    println!("  input     {} nodes, {} edges: {}", graph.num_nodes(), graph.num_edges(), describe_class(classified));
    for (i, d) in space.dimensions.iter().enumerate() {
        let values: Vec<String> = d.values.iter().map(|v| v.text()).collect();
        println!("  {:<9} {} = {} ({})", if i == 0 { "space" } else { "" }, d.key, values.join(" | "), d.why);
    }
    for s in &space.skipped {
        println!("  {:<9} {}: {}", "fixed", s.key, s.why);
    }
    println!(
        "  budget    {:.0} s; a checking run, then {} timed run{} a candidate, the best counts; a first timed run \
         over {}x the best so far is not repeated",
        options.budget.as_secs_f64(),
        options.repeat,
        if options.repeat == 1 { "" } else { "s" },
        options.prune_factor
    );
}

fn print_outcome(outcome: &Outcome, entry: &Entry, database: &Path, dry_run: bool) {
    let none = outcome.none().best;
    println!();
    println!(
        "  {:>3}  {:<14} {:>10} {:>10} {:>8} {:>4}  {:<11} opt",
        "#", "candidate", "time ms", "kernel ms", "speedup", "runs", "status"
    );
    for (i, c) in outcome.candidates.iter().enumerate() {
        let speedup = match (none, c.best) {
            (Some(n), Some(b)) if c.valid() || matches!(c.status, Status::Same(_)) => {
                format!("{:.2}x", n.as_secs_f64() / b.as_secs_f64())
            }
            _ => "-".into(),
        };
        println!(
            "  {:>3}  {:<14} {:>10} {:>10} {:>8} {:>4}  {:<11} {}",
            i + 1,
            c.label.as_deref().unwrap_or(""),
            c.best
                .filter(|_| !matches!(c.status, Status::Failed(_)))
                .map_or("-".into(), |t| format!("{:.3}", millis(t))),
            c.kernel
                .filter(|_| c.valid() || matches!(c.status, Status::Same(_)))
                .map_or("-".into(), |t| format!("{:.3}", millis(t))),
            speedup,
            c.runs,
            c.status_text(),
            c.config
        );
        if let Status::Failed(why) = &c.status {
            println!("  {:>3}  {}", "", why.lines().next().unwrap_or_default());
        }
    }
    println!();
    let measured = outcome.distinct - outcome.unmeasured;
    println!(
        "  measured  {measured} of {} distinct programs ({} configurations) in {:.1} s{}",
        outcome.distinct,
        outcome.configurations,
        outcome.elapsed.as_secs_f64(),
        if outcome.unmeasured > 0 { "; the budget ran out" } else { "" }
    );
    if let Some(winner) = outcome.winner() {
        let index = outcome.winner.unwrap_or(0) + 1;
        let speedup = entry.none_ms.map_or(String::new(), |n| format!(", {:.2}x over none", n / entry.time_ms));
        println!("  winner    #{index} {}: {:.3} ms{speedup}", winner.config, entry.time_ms);
    }
    if dry_run {
        println!("  recorded  nothing (--dry-run)");
    } else {
        println!("  recorded  {} for {} on {} in {}", entry.class, entry.program, entry.target, database.display());
    }
}

#[allow(clippy::too_many_arguments)]
fn print_json(
    program: &ProgramId,
    target: &TargetKey,
    classified: &Classified,
    space: &Space,
    outcome: &Outcome,
    entry: &Entry,
    database: &Path,
    dry_run: bool,
) -> Result<()> {
    let none = outcome.none().best;
    let candidates: Vec<_> = outcome
        .candidates
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let valid = c.valid() || matches!(c.status, Status::Same(_));
            json!({
                "index": i + 1,
                "label": c.label,
                "opt": c.config.to_string(),
                "status": c.status_text(),
                "time_ms": c.best.filter(|_| valid).map(millis),
                "kernel_ms": c.kernel.filter(|_| valid).map(millis),
                "speedup": none.zip(c.best).filter(|_| valid).map(|(n, b)| n.as_secs_f64() / b.as_secs_f64()),
                "runs": c.runs,
                "error": match &c.status { Status::Failed(why) => Some(why.clone()), _ => None },
            })
        })
        .collect();
    let summary = json!({
        "program": program.name,
        "program_hash": program.hash,
        "target": target.key,
        "graph": entry.graph,
        "class": classified.class.to_string(),
        "features": classified.features,
        "space": {
            "keys": space.dimensions.iter().map(|d| json!({
                "key": d.key.name(),
                "values": d.values.iter().map(|v| v.text()).collect::<Vec<_>>(),
                "why": d.why,
            })).collect::<Vec<_>>(),
            "fixed": space.skipped.iter().map(|s| json!({ "key": s.key.name(), "why": s.why })).collect::<Vec<_>>(),
            "configurations": outcome.configurations,
            "distinct": outcome.distinct,
        },
        "candidates": candidates,
        "unmeasured": outcome.unmeasured,
        "elapsed_s": outcome.elapsed.as_secs_f64(),
        "none_ms": entry.none_ms,
        "winner": {
            "index": outcome.winner.map(|i| i + 1),
            "opt": entry.opt,
            "time_ms": entry.time_ms,
            "speedup": entry.none_ms.map(|n| n / entry.time_ms),
        },
        "database": database.display().to_string(),
        "recorded": !dry_run,
    });
    println!("{}", serde_json::to_string_pretty(&summary)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outputs(level: Vec<u32>, rank: Vec<f64>, result: Option<Value>, elements: &[&str]) -> Outputs {
        Outputs {
            properties: vec![("level".into(), Column::U32(level)), ("rank".into(), Column::F64(rank))],
            collections: vec![("found".into(), elements.iter().map(|e| e.to_string()).collect())],
            result,
        }
    }

    #[test]
    fn outputs_differ_where_they_should_and_only_there() {
        let base = outputs(vec![0, 1, 2], vec![0.25, 0.5, 0.25], Some(Value::U64(7)), &["a", "b"]);
        let same = outputs(vec![0, 1, 2], vec![0.25, 0.5 + 1e-9, 0.25], Some(Value::U64(7)), &["a", "b"]);
        assert_eq!(base.difference(&same), None);
        let level = outputs(vec![0, 2, 2], vec![0.25, 0.5, 0.25], Some(Value::U64(7)), &["a", "b"]);
        assert_eq!(base.difference(&level).unwrap(), "output `level` differs at element 1");
        let rank = outputs(vec![0, 1, 2], vec![0.25, 0.5, 0.26], Some(Value::U64(7)), &["a", "b"]);
        assert_eq!(base.difference(&rank).unwrap(), "output `rank` differs at element 2");
        let result = outputs(vec![0, 1, 2], vec![0.25, 0.5, 0.25], Some(Value::U64(8)), &["a", "b"]);
        assert_eq!(base.difference(&result).unwrap(), "the result is 8 instead of 7");
        let shorter = outputs(vec![0, 1], vec![0.25, 0.5, 0.25], Some(Value::U64(7)), &["a", "b"]);
        assert_eq!(base.difference(&shorter).unwrap(), "output `level` differs at element 2");
        let fewer = outputs(vec![0, 1, 2], vec![0.25, 0.5, 0.25], Some(Value::U64(7)), &["a"]);
        assert!(base.difference(&fewer).unwrap().contains("(1 element instead of 2 elements)"));
        assert!(same_value(Some(&Value::F32(1.0)), Some(&Value::F32(1.000_001))));
        assert!(!same_value(Some(&Value::F64(1.0)), None));
    }
}
