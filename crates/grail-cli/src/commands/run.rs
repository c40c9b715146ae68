//! `grail run`: run a suite algorithm, or a user's grail program, on a graph file.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use grail_algos::suite::{MultiParams, MultiReport};
use grail_algos::suite::{bind_named, forest_of};
use grail_algos::tuning::{self, ProgramId, Resolution};
use grail_algos::{Algorithm, Output, RunParams, Target, Variant, run as run_algorithm, verify};
use grail_graph::partition::{Method, Partitioning};
use grail_graph::properties::Column;
use grail_graph::{BuildOptions, Graph};
use grail_ir::{Module, Owner, Type};
use grail_runtime::cpu::{RunStats, Value};
use grail_runtime::gpu::GpuTimes;
use grail_runtime::multi::MultiProgram;
use grail_runtime::{ModuleCache, Table};
use serde_json::json;

use super::targets::Builder;
use super::{UsageError, load, millis};
use crate::cli::{RunArgs, SourceNode};
use crate::progress::Bars;

pub fn run(args: RunArgs, threads: usize, progress: &Bars) -> Result<()> {
    if let Some(seconds) = args.timeout {
        if !(seconds.is_finite() && seconds > 0.0) {
            return Err(UsageError(format!("--timeout {seconds}: expected a positive number of seconds")).into());
        }
        watchdog(seconds);
    }
    grail_runtime::gpu::set_memory_limit(args.device_memory_limit);
    match args.program.parse::<Algorithm>() {
        Ok(algorithm) => run_suite(algorithm, args, threads, progress),
        Err(_)
            if args.program.ends_with(".grail")
                || Path::new(&args.program).is_file()
                || grail_algos::program_source(&args.program).is_some() =>
        {
            run_program(args, threads, progress)
        }
        Err(message) => Err(UsageError(format!("{message}, nor is '{}' a grail program file", args.program)).into()),
    }
}

fn run_suite(algorithm: Algorithm, args: RunArgs, threads: usize, progress: &Bars) -> Result<()> {
    let target = args.target.unwrap_or(Target::Cpu);
    if super::variant_help(algorithm, args.variant.as_deref()) {
        return Ok(());
    }
    let mut params = RunParams {
        source: args.source.and_then(SourceNode::id),
        variant: args.variant.clone(),
        program_params: args.params.clone(),
        threads,
        device: args.device.unwrap_or(0),
        opt: args.opt,
        checks: args.checks,
        ..Default::default()
    };
    if args.device.is_some() && target != Target::Gpu {
        return Err(UsageError("--device chooses the GPU of --target gpu".into()).into());
    }
    params.multi = multi_params(&args)?;
    params.queue = one_gpu_queue(&args, target)?;
    if let Some(tolerance) = args.pr_tolerance {
        anyhow::ensure!(tolerance > 0.0 && tolerance.is_finite(), "--pr-tolerance must be a positive number");
        params.pagerank.tolerance = tolerance;
    }
    if let Some(iterations) = args.pr_max_iterations {
        anyhow::ensure!(iterations > 0, "--pr-max-iterations must be at least 1");
        params.pagerank.max_iterations = iterations;
    }
    if target != Target::Reference {
        // Fail on a bad variant before spending time on loading.
        Variant::find(algorithm, params.variant.as_deref()).map_err(UsageError)?;
    }
    if let Some(plot) = &args.plot {
        if algorithm != Algorithm::Pr {
            return Err(UsageError(format!("--plot draws PageRank's convergence; {algorithm} has none")).into());
        }
        crate::plot::check_path(plot)?;
    }
    if args.json && args.output.as_deref().is_some_and(|p| p.as_os_str() == "-") {
        return Err(UsageError("--json and --output - would both write to standard output: choose one".into()).into());
    }
    let start = Instant::now();
    let graph = load(&args.graph, BuildOptions::AS_GIVEN, progress)?;
    let load_ms = millis(start.elapsed());
    progress.clear();
    note_assumptions(algorithm, &graph);
    if let Some(SourceNode::MaxDegree) = args.source {
        params.source = Some(SourceNode::MaxDegree.resolve(&graph)?);
    }
    if let Some(how) = &mut params.multi {
        read_partition_file(how, &graph)?;
    }

    // The convergence curve is the run's own: every round's L1 change, as the PageRank
    // programs' `gather` (or `sweep`) reduces it, traced on the host (loops kept there).
    params.loops_on_host |= args.plot.is_some();
    let (result, trace) = grail_runtime::limits::with_trace(|| run_algorithm(algorithm, &graph, target, &params));
    let result = result?;
    if let Some(resolution) = &result.resolution {
        warn(&resolution.warnings);
    }
    let verified = if args.verify {
        verify(algorithm, &graph, &params, &result.output).with_context(|| {
            // Where the result came from: the target, or the devices of a partitioned run.
            let from = result.multi.as_ref().map_or_else(|| format!("target {target}"), devices_text);
            format!("{algorithm} result from {from} is wrong")
        })?;
        Some(true)
    } else {
        None
    };
    if let Some(path) = &args.output {
        grail_graph::io::write_text_file(path, |out| result.output.write_values(out))
            .context("cannot write the result")?;
        if path.as_os_str() == "-" && !args.json {
            // The values went to standard output: the summary would only be mixed into them.
            return Ok(());
        }
    }

    if let Some(plot) = &args.plot {
        let changes: Vec<f64> = trace
            .iter()
            .filter(|(kernel, _)| kernel == "gather" || kernel == "sweep")
            .filter_map(|(_, value)| match value {
                grail_runtime::cpu::Value::F64(x) => Some(*x),
                grail_runtime::cpu::Value::F32(x) => Some(f64::from(*x)),
                _ => None,
            })
            .collect();
        let name = args.graph.path().display();
        let (changes, title) = if changes.is_empty() {
            // The reference target, or a variant without rounds (residual push): the reference
            // power iteration's curve on the same graph and options, and the title says so.
            let (reference, changes) = grail_graph::reference::pagerank_with_changes(&graph, &params.pagerank);
            let title = format!(
                "PageRank convergence on {name} (the reference power iteration's {} rounds)",
                reference.iterations
            );
            (changes, title)
        } else {
            let variant = result.variant.map_or(String::new(), |v| format!(", variant {}", v.name));
            let title = format!("PageRank convergence on {name} ({} rounds, target {target}{variant})", changes.len());
            (changes, title)
        };
        crate::plot::convergence(plot, &title, "iteration", "L1 change of the ranks", "change", &changes)?;
    }
    let time_ms = millis(result.time);
    let variant = result.variant.map(|v| v.name);
    let target = match &result.multi {
        Some(report) => devices_text(report),
        None => target.to_string(),
    };
    if args.json {
        let mut summary = json!({
            "algorithm": algorithm.name(),
            "target": target,
            "variant": variant,
            "graph": args.graph.path().display().to_string(),
            "nodes": graph.num_nodes(),
            "edges": graph.num_edges(),
            "time_ms": time_ms,
            "load_ms": load_ms,
            "verified": verified,
            "opt": result.opt.map(|o| o.to_string()),
        });
        if let Some(resolution) = &result.resolution {
            summary.as_object_mut().expect("object").extend(opt_json(resolution));
        }
        if let Some(gpu) = &result.gpu {
            summary.as_object_mut().expect("object").extend(gpu_json(gpu));
        }
        if let Some(report) = &result.multi {
            summary["multi"] = multi_json(report);
        }
        if algorithm.needs_source() {
            summary["source"] = params.source_in(&graph)?.into();
        }
        if args.stats {
            summary["stats"] = stats_json(result.stats.as_ref());
        }
        summary.as_object_mut().expect("object").extend(result.output.headline());
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        let variant = variant.map(|v| format!(" (variant {v})")).unwrap_or_default();
        println!(
            "{algorithm} on {} ({} nodes, {} edges), target {target}{variant}",
            args.graph.path().display(),
            graph.num_nodes(),
            graph.num_edges(),
        );
        print_time(time_ms, load_ms, result.gpu.as_ref());
        if let Some(report) = &result.multi {
            print_multi(report, result.time);
        }
        if let Some(resolution) = &result.resolution {
            print_opt(resolution);
        }
        println!("  result    {}", result.output.headline_text());
        if verified.is_some() {
            println!("  verified  ok");
        }
        if let Some(path) = &args.output {
            println!("  written   {}", path.display());
        }
        if args.stats {
            print_stats(result.stats.as_ref());
        }
    }
    Ok(())
}

/// Ends the process after `seconds`: generated code on either target may loop forever, and
/// neither a CPU thread inside it nor a GPU kernel can be interrupted from outside, so the
/// whole run stops, with a clear message naming the kernel it was in, exit status 124 (as
/// `timeout(1)`), and any file being written removed.
///
/// The process ends with `_exit`, without the exit handlers of the libraries it loaded: the
/// CUDA driver's would tear down a context whose kernel is still running, and could wait for it;
/// ending the process is what always stops a kernel (as a kill does). Standard output is
/// line-buffered, so at most a partial line of a program's `print` output is lost.
fn watchdog(seconds: f64) {
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs_f64(seconds));
        grail_graph::io::remove_temporaries();
        let kernel = grail_runtime::running_kernel().map(|k| format!(" in kernel `{k}`")).unwrap_or_default();
        eprintln!("error: the run took longer than --timeout {seconds} s and was stopped{kernel}");
        // SAFETY: _exit(2) ends the process at once; nothing after it runs.
        unsafe { libc::_exit(TIMEOUT_EXIT_CODE) };
    });
}

/// The exit status of a run stopped by `--timeout`.
pub const TIMEOUT_EXIT_CODE: i32 = 124;

/// What an algorithm assumes of an input that does not say, on standard error: weights of 1 on
/// an unweighted graph, edges taken both ways on a directed one.
fn note_assumptions(algorithm: Algorithm, graph: &Graph) {
    let weighted = graph.out().is_weighted();
    match algorithm {
        Algorithm::Sssp | Algorithm::Mst if !weighted => {
            eprintln!("note: the graph has no edge weights: {algorithm} takes every edge to weigh 1");
        }
        Algorithm::Cc | Algorithm::Mst | Algorithm::Tri | Algorithm::Mis => {
            let facts = graph.facts();
            let symmetric = facts.symmetric || grail_graph::facts::scan(graph.out()).symmetric;
            if !symmetric {
                let what = match algorithm {
                    Algorithm::Cc => "weakly connected components (edges taken both ways)",
                    Algorithm::Mst => "a spanning forest of the graph with edges taken both ways",
                    _ => "the undirected simple graph underlying it",
                };
                eprintln!("note: the graph is directed: {algorithm} works on {what}");
            }
        }
        _ => {}
    }
}

/// The run's time; on the GPU, what the kernels and the copies took of it.
fn print_time(time_ms: f64, load_ms: f64, gpu: Option<&GpuTimes>) {
    match gpu {
        None => println!("  time      {time_ms:.2} ms (load {load_ms:.1} ms)"),
        Some(gpu) => println!(
            "  time      {time_ms:.2} ms end to end: kernels {:.2} ms, upload {:.2} ms, download {:.2} ms (load {load_ms:.1} ms)",
            millis(gpu.kernels),
            millis(gpu.upload),
            millis(gpu.download)
        ),
    }
}

/// Prints what went wrong with the tuning database, on stderr.
fn warn(warnings: &[String]) {
    for warning in warnings {
        eprintln!("warning: {warning}");
    }
}

/// The configuration a run used and where it came from.
fn print_opt(resolution: &Resolution) {
    println!("  opt       {} ({})", resolution.config, resolution.source);
    if let Some(classified) = &resolution.class {
        println!("  input     class {} ({:.1} ms to classify)", classified.class, classified.features.millis);
    }
}

/// `opt_source` (`given`, `default`, `tuned for class ...`) and, when it was computed, the
/// input's class.
fn opt_json(resolution: &Resolution) -> serde_json::Map<String, serde_json::Value> {
    let mut map = serde_json::Map::new();
    map.insert("opt_source".into(), resolution.source.short().into());
    if let Some(classified) = &resolution.class {
        map.insert("input_class".into(), classified.class.to_string().into());
    }
    map
}

fn gpu_json(gpu: &GpuTimes) -> serde_json::Map<String, serde_json::Value> {
    let value = json!({
        "kernel_ms": millis(gpu.kernels),
        "upload_ms": millis(gpu.upload),
        "download_ms": millis(gpu.download),
    });
    match value {
        serde_json::Value::Object(map) => map,
        _ => unreachable!("an object"),
    }
}

/// A program file compiled for one device, or for the parts of a partitioned run.
enum Compiled {
    One(super::targets::FileProgram),
    Parts(Box<MultiProgram>, MultiParams),
}

/// Whether `--mode` asks one GPU to run its worklist loops as queues
/// ([`grail_ir::opt::queue`]: `async`) or in rounds (`bsp`); `--mode` without `--devices` means
/// one device. `None`: not said.
fn one_gpu_queue(args: &RunArgs, target: Target) -> Result<Option<bool>> {
    use grail_runtime::multi::Mode;
    match (args.mode, &args.devices) {
        (None, _) | (Some(_), Some(_)) => Ok(None),
        (Some(Mode::Bsp), None) => Ok(Some(false)),
        (Some(Mode::Async), None) if target == Target::Gpu => Ok(Some(true)),
        (Some(Mode::Async), None) => Err(UsageError(
            "--mode async on one device runs on a GPU (--target gpu), where worklist loops run as queues; over \
             several devices it needs --devices"
                .into(),
        )
        .into()),
    }
}

/// The partitioned run `--devices`, `--mode` and `--partition` ask for, if any.
fn multi_params(args: &RunArgs) -> Result<Option<MultiParams>> {
    let Some(list) = &args.devices else { return Ok(None) };
    let gpus = || -> std::result::Result<u32, String> {
        grail_runtime::gpu::device_count().map(|n| n as u32).map_err(|e| format!("cannot count the GPUs: {e}"))
    };
    let devices = grail_runtime::multi::parse_devices(list, gpus).map_err(|e| UsageError(format!("--devices: {e}")))?;
    let partition =
        args.partition.unwrap_or(if grail_graph::metis::available() { Method::Metis } else { Method::Ordered });
    if args.soft_priority.is_some() && args.mode != Some(grail_runtime::multi::Mode::Async) {
        return Err(UsageError("--soft-priority orders the asynchronous mode's work: add --mode async".into()).into());
    }
    if args.topology.is_some() && args.mode != Some(grail_runtime::multi::Mode::Async) {
        return Err(
            UsageError("--topology says how the asynchronous mode's packets travel: add --mode async".into()).into()
        );
    }
    if args.worker.is_some() && args.mode != Some(grail_runtime::multi::Mode::Async) {
        return Err(UsageError("--worker says who runs the asynchronous mode's loops: add --mode async".into()).into());
    }
    Ok(Some(MultiParams {
        devices,
        mode: args.mode,
        partition,
        seed: 1,
        jitter: None,
        priority_delta: args.soft_priority,
        topology: args.topology.unwrap_or_default(),
        worker: args.worker.unwrap_or_default(),
        partitioning: None,
        partition_file: args.partition_file.clone(),
        kernel_times: args.stats,
        defer_steps: None,
    }))
}

/// Reads `--partition-file` into `how`, for `graph` (once loaded): one part per device.
fn read_partition_file(how: &mut MultiParams, graph: &Graph) -> Result<()> {
    let Some(path) = &how.partition_file else { return Ok(()) };
    let parts = how.devices.len() as u32;
    let partitioning = Partitioning::read(path, graph.num_nodes(), Some(parts)).context("--partition-file")?;
    if let Some(empty) = partitioning.empty_part() {
        return Err(UsageError(format!(
            "--partition-file {}: part {empty} has no nodes; each of the {parts} devices needs some",
            path.display()
        ))
        .into());
    }
    how.partitioning = Some(std::sync::Arc::new(partitioning));
    Ok(())
}

/// `devices cpu,gpu:0 (bsp, metis)`.
fn devices_text(report: &MultiReport) -> String {
    let devices: Vec<String> = report.devices.iter().map(ToString::to_string).collect();
    let mode = match (report.mode, report.topology) {
        (grail_runtime::multi::Mode::Async, grail_runtime::multi::Topology::Ring) => "async around a ring".to_string(),
        (mode, _) => mode.to_string(),
    };
    let split = match &report.partition_file {
        Some(file) => format!("parts from {}", file.display()),
        None => format!("{} partitioning", report.partition.name()),
    };
    format!("devices {} ({mode}, {split})", devices.join(","))
}

/// The parts of a partitioned run and where its time went.
fn print_multi(report: &MultiReport, total: std::time::Duration) {
    let share = |part: std::time::Duration| 100.0 * part.as_secs_f64() / total.as_secs_f64().max(1e-9);
    println!(
        "  split     {:.1}% of the edges cut; partitioning {:.1} ms (not in the time), parts built in {:.1} ms",
        100.0 * report.edge_cut,
        millis(report.partition_time),
        millis(report.split_time)
    );
    println!(
        "  steps     {} supersteps: computing {:.2} ms ({:.0}%), synchronizing {:.2} ms ({:.0}%): {} ghosts merged, {} copied, {} pushes forwarded",
        report.sync.steps,
        millis(report.sync.compute),
        share(report.sync.compute),
        millis(report.sync.sync),
        share(report.sync.sync),
        report.sync.merged,
        report.sync.copied,
        report.sync.forwarded
    );
    if report.sync.async_loops > 0 {
        println!("  async     {} worklist loop(s) without supersteps", report.sync.async_loops);
    }
    if report.sync.relayed > 0 {
        println!("  ring      {} packet(s) passed on by devices they were not for", report.sync.relayed);
    }
    if report.sync.deferred > 0 {
        println!("  priority  {} pushed node(s) waited for nearer work", report.sync.deferred);
    }
    if report.sync.host_joins > 0 {
        println!(
            "  joins     {} union-find join(s) finished through the host (in the synchronizing time)",
            report.sync.host_joins
        );
    }
    if report.sync.unwaited > 0 {
        println!(
            "  queued    {} superstep(s) queued on the devices without a wait, their changes merged there by the next",
            report.sync.unwaited
        );
    }
    if report.sync.device_regions > 0 {
        println!(
            "  devices   {} outlined region(s) run on every GPU at once, exchanging between the GPUs",
            report.sync.device_regions
        );
    }
    for (i, part) in report.parts.iter().enumerate() {
        let threads = if part.threads > 0 { format!(", {} threads", part.threads) } else { String::new() };
        println!(
            "  part {i}    {}{threads}: {} nodes, {} edges, {} ghosts; kernels {}",
            part.device,
            part.nodes,
            part.edges,
            part.ghosts,
            part.kernel_time.map_or("not timed (--stats times them)".to_string(), |t| format!("{:.2} ms", millis(t)))
        );
    }
}

fn multi_json(report: &MultiReport) -> serde_json::Value {
    json!({
        "devices": report.devices.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "mode": report.mode.to_string(),
        "partition": if report.partition_file.is_some() { "file" } else { report.partition.name() },
        "partition_file": report.partition_file.as_ref().map(|f| f.display().to_string()),
        "edge_cut": report.edge_cut,
        "partition_ms": millis(report.partition_time),
        "split_ms": millis(report.split_time),
        "steps": report.sync.steps,
        "compute_ms": millis(report.sync.compute),
        "sync_ms": millis(report.sync.sync),
        "merged": report.sync.merged,
        "copied": report.sync.copied,
        "forwarded": report.sync.forwarded,
        "async_loops": report.sync.async_loops,
        "device_regions": report.sync.device_regions,
        "deferred": report.sync.deferred,
        "relayed": report.sync.relayed,
        "host_joins": report.sync.host_joins,
        "unwaited": report.sync.unwaited,
        "topology": report.topology.to_string(),
        "worker": report.worker.to_string(),
        "parts": report.parts.iter().map(|p| json!({
            "device": p.device.to_string(),
            "nodes": p.nodes,
            "edges": p.edges,
            "ghosts": p.ghosts,
            "threads": p.threads,
            "kernel_ms": p.kernel_time.map(millis),
        })).collect::<Vec<_>>(),
    })
}

/// Runs a user's program file on the CPU or a GPU.
fn run_program(args: RunArgs, threads: usize, progress: &Bars) -> Result<()> {
    let path = Path::new(&args.program);
    let target = args.target.unwrap_or(Target::Cpu);
    if target == Target::Reference {
        bail!("a program file runs on --target cpu or gpu; the reference target runs suite algorithms");
    }
    if args.device.is_some() && target != Target::Gpu {
        return Err(UsageError("--device chooses the GPU of --target gpu".into()).into());
    }
    if args.verify {
        bail!("--verify checks suite algorithms against their references; a program file has none");
    }
    if args.variant.is_some() || args.pr_tolerance.is_some() || args.pr_max_iterations.is_some() {
        return Err(UsageError(
            "--variant and --pr-* are for suite algorithms; pass a program's parameters with --param NAME=VALUE".into(),
        )
        .into());
    }
    let lowered = super::check::lower_file(path)?;
    if args.output.is_some() && lowered.outputs.is_empty() && lowered.collection_outputs.is_empty() {
        bail!("--output: {} declares no `output` to write", path.display());
    }
    // A source given by id is checked now, before loading; `max-degree` once the graph is in.
    let mut values = file_params(&lowered, &args.params, args.source.and_then(SourceNode::id))?;
    let inputs = file_inputs(&lowered, &args.inputs)?;
    let program_id = ProgramId::of(&args.program, &lowered);
    // The input's class picks the tuned configuration, so the graph is loaded before compiling.
    let start = Instant::now();
    let graph = load(&args.graph, BuildOptions::AS_GIVEN, progress)?;
    let load_ms = millis(start.elapsed());
    progress.clear();
    if let Some(SourceNode::MaxDegree) = args.source {
        values = file_params(&lowered, &args.params, Some(SourceNode::MaxDegree.resolve(&graph)?))?;
    }
    let cache = ModuleCache::default_location();
    let builder = Builder::checked(target, args.device.unwrap_or(0), args.checks)?;
    let multi = multi_params(&args)?;
    // A partitioned run takes its first GPU's configuration, where it has one.
    let resolution = match &multi {
        Some(how) => tuning::resolve_for_devices(
            args.opt,
            &how.devices,
            how.mode.unwrap_or_default(),
            &program_id,
            Some(&graph),
        )?,
        None => builder.resolve(args.opt, &program_id, Some(&graph)),
    };
    warn(&resolution.warnings);
    let mut opt = resolution.config;
    opt.queue |= one_gpu_queue(&args, target)? == Some(true);
    let mut stdout = std::io::stdout();
    // One device, or parts of the graph on several.
    let program = match multi {
        Some(mut how) => {
            read_partition_file(&mut how, &graph)?;
            let module = grail_ir::optimize(lowered.clone(), &opt)
                .map_err(|e| anyhow::anyhow!("internal error (a bug in grail): optimizing with {opt}: {e}"))?;
            let compiler = grail_runtime::cpu::CCompiler::detect()?;
            Compiled::Parts(Box::new(MultiProgram::compile(module, &how.devices, &compiler, Some(&cache))?), how)
        }
        None => Compiled::One(builder.optimized(&lowered, &opt, &cache)?),
    };
    let (module, output, gpu, report) = match &program {
        Compiled::One(program) => {
            let (output, gpu) = program.run(&graph, &values, &inputs, threads, &mut stdout)?;
            (program.module(), output, gpu, None)
        }
        Compiled::Parts(program, how) => {
            let (output, report) =
                grail_algos::suite::run_partitioned(program, &graph, how, &values, &inputs, threads, &mut stdout)?;
            (program.module(), output, None, Some(report))
        }
    };
    let target = match &report {
        Some(report) => devices_text(report),
        None => target.to_string(),
    };
    let mut written = Vec::new();
    if let Some(out_path) = &args.output {
        for (path, what) in output_files(module, out_path) {
            grail_graph::io::write_text_file(&path, |out| match what {
                Some(c) => write_collection(&output.collections[c], out),
                None => write_outputs(module, &graph, &output.properties, out),
            })
            .context("cannot write the result")?;
            written.push(path);
        }
        if out_path.as_os_str() == "-" && !args.json {
            // The values went to standard output: the summary would only be mixed into them.
            return Ok(());
        }
    }
    let time_ms = millis(output.stats.elapsed);
    if args.json {
        let mut summary = json!({
            "program": args.program,
            "target": target,
            "graph": args.graph.path().display().to_string(),
            "nodes": graph.num_nodes(),
            "edges": graph.num_edges(),
            "time_ms": time_ms,
            "load_ms": load_ms,
            "result": output.result.as_ref().map(|v| v.to_string()),
            "opt": opt.to_string(),
        });
        summary.as_object_mut().expect("object").extend(opt_json(&resolution));
        if let Some(gpu) = &gpu {
            summary.as_object_mut().expect("object").extend(gpu_json(gpu));
        }
        if let Some(report) = &report {
            summary["multi"] = multi_json(report);
        }
        if args.stats {
            summary["stats"] = stats_json(Some(&output.stats));
        }
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        println!(
            "{} on {} ({} nodes, {} edges), target {target}",
            args.program,
            args.graph.path().display(),
            graph.num_nodes(),
            graph.num_edges()
        );
        print_time(time_ms, load_ms, gpu.as_ref());
        if let Some(report) = &report {
            print_multi(report, output.stats.elapsed);
        }
        print_opt(&resolution);
        if let Some(result) = &output.result {
            println!("  result    {result}");
        }
        for path in &written {
            println!("  written   {}", path.display());
        }
        if args.stats {
            print_stats(Some(&output.stats));
        }
    }
    Ok(())
}

/// A program file's parameter values: `--param NAME=VALUE` and `--source`, the rest left to
/// their defaults. The passes do not change a program's parameters, so `module` may be the
/// lowered program.
pub(super) fn file_params(
    module: &Module,
    params: &[(String, String)],
    source: Option<u64>,
) -> Result<Vec<Option<Value>>> {
    let mut values: Vec<Option<Value>> = vec![None; module.params.len()];
    bind_named(module, params, &mut values)?;
    if let Some(source) = source {
        let Some(index) = module.params.iter().position(|p| p.name == "source" && p.ty == Type::Node) else {
            bail!("--source: the program has no `param source: Node`");
        };
        let source = u32::try_from(source).map_err(|_| anyhow::anyhow!("--source {source} is not a node id"))?;
        values[index] = Some(Value::Node(source));
    }
    Ok(values)
}

/// Where `--output FILE` puts each output: the node (or bool edge) outputs in FILE, and each
/// output collection (`Some(i)`, its position in `collection_outputs`) in `FILE.<name>`, or in
/// FILE itself when it is the program's only output.
fn output_files(module: &Module, path: &Path) -> Vec<(PathBuf, Option<usize>)> {
    let mut files = Vec::new();
    if !module.outputs.is_empty() {
        files.push((path.to_path_buf(), None));
    }
    let only_collection = module.outputs.is_empty() && module.collection_outputs.len() == 1;
    for (i, id) in module.collection_outputs.iter().enumerate() {
        let file = if only_collection {
            path.to_path_buf()
        } else {
            let mut name = path.as_os_str().to_os_string();
            name.push(format!(".{}", module.collections[id.index()].name));
            PathBuf::from(name)
        };
        files.push((file, Some(i)));
    }
    files
}

/// The inputs of a program file, from `--input NAME=FILE`: each collection the program declares
/// as an input, read in the format `--output` writes collections in, then each input node
/// property, one value per line as `--output` writes properties.
fn file_inputs(module: &Module, given: &[(String, String)]) -> Result<Vec<Table>> {
    // The file given for input `name` (`what` and the file's `format` name it when missing),
    // and its text.
    let read = |name: &str, what: &str, format: &str| -> Result<(&String, String)> {
        let Some((_, file)) = given.iter().find(|(n, _)| n == name) else {
            return Err(UsageError(format!(
                "{} takes input {what} `{name}`: give it with --input {name}=FILE ({format})",
                module.name
            ))
            .into());
        };
        let text = std::fs::read_to_string(file).with_context(|| format!("cannot read --input {name}={file}"))?;
        Ok((file, text))
    };
    let mut inputs = Vec::with_capacity(module.collection_inputs.len() + module.property_inputs.len());
    for &id in &module.collection_inputs {
        let (file, text) = read(&module.collections[id.index()].name, "collection", "one element per line")?;
        inputs.push(grail_runtime::read_collection(module, id, &text).map_err(|e| anyhow::anyhow!("{file}: {e}"))?);
    }
    for &id in &module.property_inputs {
        let (file, text) = read(&module.properties[id.index()].name, "property", "one value per line, node by node")?;
        inputs
            .push(grail_runtime::read_property_values(module, id, &text).map_err(|e| anyhow::anyhow!("{file}: {e}"))?);
    }
    let declared = |n: &String| {
        module.collection_inputs.iter().any(|id| &module.collections[id.index()].name == n)
            || module.property_inputs.iter().any(|id| &module.properties[id.index()].name == n)
    };
    if let Some((name, _)) = given.iter().find(|(n, _)| !declared(n)) {
        return Err(UsageError(format!("--input {name}: {} has no input `{name}`", module.name)).into());
    }
    Ok(inputs)
}

/// Writes a collection: one line per element, its fields (nested structs' fields inline)
/// separated by spaces, `inf` for a type's largest value.
fn write_collection(elements: &Table, out: &mut dyn Write) -> std::io::Result<()> {
    for row in 0..elements.len() {
        for leaf in 0..elements.leaves().len() {
            if leaf > 0 {
                out.write_all(b" ")?;
            }
            write!(out, "{}", elements.value(row, leaf))?;
        }
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// Writes a program's outputs: one line per node with the node outputs' values separated by
/// spaces, or, for a `bool` edge output, one `src dst weight` line per edge set.
fn write_outputs(module: &Module, graph: &Graph, columns: &[Column], out: &mut dyn Write) -> std::io::Result<()> {
    let outputs: Vec<_> =
        module.outputs.iter().map(|id| (&module.properties[id.index()], &columns[id.index()])).collect();
    match outputs.as_slice() {
        [] => Err(std::io::Error::other("the program declares no `output` to write")),
        [(property, Column::Bool(chosen))] if property.owner == Owner::Edge => {
            Output::SpanningForest(forest_of(graph, chosen)).write_values(out)
        }
        _ if outputs.iter().all(|(p, _)| p.owner == Owner::Node) => {
            // Every node: the input's, and any that kernels added (their columns are longer).
            let nodes =
                outputs.iter().map(|(_, column)| column.len()).min().unwrap_or(0).max(graph.num_nodes() as usize);
            for node in 0..nodes {
                for (i, (_, column)) in outputs.iter().enumerate() {
                    if i > 0 {
                        out.write_all(b" ")?;
                    }
                    write_element(column, node, out)?;
                }
                out.write_all(b"\n")?;
            }
            Ok(())
        }
        _ => Err(std::io::Error::other(
            "a program's outputs are either node properties or one bool edge property, not a mix",
        )),
    }
}

/// Writes one element of a column; the type's largest value (`INF`) as `inf`.
fn write_element(column: &Column, i: usize, out: &mut dyn Write) -> std::io::Result<()> {
    match column {
        Column::Bool(v) => out.write_all(if v[i] { b"1" } else { b"0" }),
        Column::U32(v) if v[i] == u32::MAX => out.write_all(b"inf"),
        Column::U32(v) => write!(out, "{}", v[i]),
        Column::U64(v) if v[i] == u64::MAX => out.write_all(b"inf"),
        Column::U64(v) => write!(out, "{}", v[i]),
        Column::I32(v) if v[i] == i32::MAX => out.write_all(b"inf"),
        Column::I32(v) => write!(out, "{}", v[i]),
        Column::I64(v) if v[i] == i64::MAX => out.write_all(b"inf"),
        Column::I64(v) => write!(out, "{}", v[i]),
        Column::F32(v) => write!(out, "{:.9e}", v[i]),
        Column::F64(v) => write!(out, "{:.9e}", v[i]),
    }
}

fn print_stats(stats: Option<&RunStats>) {
    let Some(stats) = stats else {
        println!("  stats     none (the reference target does not count work)");
        return;
    };
    println!(
        "  {:<20} {:>11} {:>14} {:>14} {:>12} {:>10}",
        "kernel", "invocations", "items", "pushes", "retries", "time ms"
    );
    for k in &stats.kernels {
        println!(
            "  {:<20} {:>11} {:>14} {:>14} {:>12} {:>10.2}",
            k.name,
            k.invocations,
            k.items,
            k.pushes,
            k.retries,
            millis(k.time)
        );
    }
}

fn stats_json(stats: Option<&RunStats>) -> serde_json::Value {
    let Some(stats) = stats else { return serde_json::Value::Null };
    let kernels: Vec<_> = stats
        .kernels
        .iter()
        .map(|k| {
            json!({
                "kernel": k.name, "invocations": k.invocations, "items": k.items,
                "pushes": k.pushes, "retries": k.retries, "time_ms": millis(k.time),
            })
        })
        .collect();
    json!({ "elapsed_ms": millis(stats.elapsed), "kernels": kernels })
}
