//! `grail demo`: grail's main job on built-in inputs. Generates one graph of each kind, compiles
//! every suite algorithm's grail program for the target (default: the CPU), runs it on each
//! graph, verifies each result against the sequential reference and prints a summary table;
//! then the morph algorithms, which change what they run on: mesh refinement, survey
//! propagation, points-to analysis and incremental shortest paths, each checked by its own
//! verifier; then (on the generated targets) BFS, SSSP, CC and PageRank on a graph partitioned
//! over several devices.

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
    if !args.json {
        // Sizes: points and triangles, variables and clauses, variables and constraints, nodes
        // and edges.
        println!(
            "\n{:<14} {:>10} {:>11}  {:<5} {:>10}  {:<9} result",
            "input", "size", "", "algo", "time ms", "verified"
        );
    }
    for record in morph_records(args.scale, target, args.device, threads, &opt, progress)? {
        if !args.json {
            print_row(&record, "result");
        }
        records.push(record);
    }
    if target != Target::Reference {
        if !args.json {
            println!(
                "\n{:<14} {:>10} {:>11}  {:<5} {:>10}  {:<9} devices",
                "graph", "nodes", "edges", "algo", "time ms", "verified"
            );
        }
        for record in multi_records(args.scale, target, args.device, threads, progress)? {
            if !args.json {
                print_row(&record, "devices");
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

/// A row of the morph or several-devices table; `last`: the record's field for the last column.
fn print_row(record: &serde_json::Value, last: &str) {
    println!(
        "{:<14} {:>10} {:>11}  {:<5} {:>10.2}  {:<9} {}",
        record["graph"].as_str().unwrap_or(""),
        record["nodes"].as_u64().unwrap_or(0),
        record["edges"].as_u64().unwrap_or(0),
        record["algorithm"].as_str().unwrap_or(""),
        record["time_ms"].as_f64().unwrap_or(0.0),
        "ok",
        record[last].as_str().unwrap_or("")
    );
}

/// BFS, SSSP, CC and PageRank on the R-MAT graph partitioned over several devices
/// (bulk-synchronous, ordered parts), each verified: two CPU devices, or on the GPU target the
/// GPU and the CPU together.
fn multi_records(
    scale: u32,
    target: Target,
    device: usize,
    threads: usize,
    progress: &Bars,
) -> Result<Vec<serde_json::Value>> {
    use grail_runtime::multi::{Device, Mode};
    let devices = match target {
        Target::Gpu => vec![Device::Gpu(device as u32), Device::Cpu],
        _ => vec![Device::Cpu, Device::Cpu],
    };
    let list = devices.iter().map(ToString::to_string).collect::<Vec<_>>().join(",");
    let (label, generator, undirected) = inputs(scale).remove(0);
    let options = GenOptions { seed: 1, max_weight: Some(255) };
    let graph =
        generate(&generator, &options, undirected, progress).with_context(|| format!("cannot generate {label}"))?;
    progress.clear();
    let multi = grail_algos::suite::MultiParams {
        devices,
        mode: Some(Mode::Bsp),
        partition: grail_graph::partition::Method::Ordered,
        seed: 1,
        jitter: None,
        priority_delta: None,
        topology: Default::default(),
        worker: Default::default(),
        partitioning: None,
        partition_file: None,
        kernel_times: false,
        defer_steps: None,
    };
    let params = RunParams { threads, multi: Some(multi), ..Default::default() };
    let mut records = Vec::new();
    for algorithm in [Algorithm::Bfs, Algorithm::Sssp, Algorithm::Cc, Algorithm::Pr] {
        let result =
            run(algorithm, &graph, Target::Cpu, &params).with_context(|| format!("{algorithm} over {list}"))?;
        verify(algorithm, &graph, &params, &result.output)
            .with_context(|| format!("{algorithm} over {list} failed verification"))?;
        let mut record = json!({
            "graph": label,
            "nodes": graph.num_nodes(),
            "edges": graph.num_edges(),
            "algorithm": algorithm.name(),
            "variant": result.variant.map(|v| v.name),
            "target": target.name(),
            "devices": list,
            "time_ms": millis(result.time),
            "verified": true,
            "result": result.output.headline_text(),
        });
        record.as_object_mut().expect("object").extend(result.output.headline());
        records.push(record);
    }
    Ok(records)
}

/// The morph algorithms on inputs sized by `scale`, each result verified: a mesh of 2^(scale-2)
/// random points refined to 30° (the mesh verifier), a random 3-SAT formula of 2^(scale-4)
/// variables, at least 1,024 (the surveys of smaller formulas this near the threshold often do
/// not converge), at ratio 4 (the assignment checked clause by clause), points-to constraints of a
/// ring of 64 functions through a shared table (equal to the reference solver's sets), and three
/// batches of insertions into the R-MAT graph (each repair equal to Dijkstra's). Rows as the graph rows have them; `nodes` and
/// `edges` give the input's sizes (points and triangles, variables and clauses, variables and
/// constraints, nodes and edges).
fn morph_records(
    scale: u32,
    target: Target,
    device: usize,
    threads: usize,
    opt: &grail_ir::OptConfig,
    progress: &Bars,
) -> Result<Vec<serde_json::Value>> {
    let row = |input: String, sizes: (usize, usize), algorithm: &str, time: std::time::Duration, result: String| {
        json!({
            "graph": input,
            "nodes": sizes.0,
            "edges": sizes.1,
            "algorithm": algorithm,
            "variant": algorithm,
            "target": target.name(),
            "time_ms": millis(time),
            "verified": true,
            "result": result,
        })
    };
    let mut records = Vec::new();
    // Mesh refinement.
    let points = (1usize << scale.saturating_sub(2)).max(16);
    let mesh = grail_mesh::generate::random_points(points, 1.0, 1)?;
    let before = grail_mesh::verify::check(&mesh, 30.0, None);
    let start = std::time::Instant::now();
    let refined = match target {
        Target::Reference => grail_mesh::refine::reference(&mesh, 30.0, usize::MAX)?.mesh,
        _ => {
            let options = grail_algos::dmr::Options { target, device, threads, opt: *opt, ..Default::default() };
            grail_algos::dmr::refine(&mesh, &options)?.mesh
        }
    };
    let time = start.elapsed();
    let after = grail_mesh::verify::check(&refined, 30.0, Some(before.area));
    anyhow::ensure!(
        after.is_valid() && after.bad == 0,
        "dmr on {points} points failed verification: {:?}",
        after.problems
    );
    let result = format!("{} -> {} triangles, {} bad -> 0", before.triangles, after.triangles, before.bad);
    records.push(row(format!("mesh{scale}"), (points, before.triangles), "dmr", time, result));
    // Survey propagation.
    let vars = (1usize << scale.saturating_sub(4)).max(1024);
    let formula = grail_sat::random_ksat(vars, 4.0, 3, 1)?;
    let sp = grail_sat::SpOptions { seed: 1, ..Default::default() };
    let start = std::time::Instant::now();
    let outcome = match target {
        Target::Reference => grail_sat::survey_propagation(&formula, &sp)?,
        _ => {
            let options = grail_algos::sp::Options { target, device, threads, opt: *opt, sp, ..Default::default() };
            grail_algos::sp::solve(&formula, &options)?.outcome
        }
    };
    let time = start.elapsed();
    let assignment =
        outcome.assignment.as_ref().with_context(|| format!("sp found no assignment: {:?}", outcome.status))?;
    anyhow::ensure!(grail_sat::check(&formula, assignment).is_satisfied(), "sp's assignment failed verification");
    let result = format!("satisfied, {} fixed by surveys", outcome.fixed_by_sp);
    records.push(row(format!("3sat{scale}"), (vars, formula.num_clauses()), "sp", time, result));
    // Points-to analysis.
    // A ring takes a round per hop: kept short.
    let constraints = ring_of_functions(64)?;
    let start = std::time::Instant::now();
    let expected = grail_pta::solve_sequential(&constraints);
    let solved = match target {
        Target::Reference => expected.clone(),
        _ => {
            let options = grail_algos::pta::Options { target, device, threads, opt: *opt, ..Default::default() };
            grail_algos::pta::solve(&constraints, &options)?.points_to
        }
    };
    let time = start.elapsed();
    if let Some(difference) = grail_pta::compare(&solved, &expected) {
        anyhow::bail!("pta failed verification: {}", difference.describe(&constraints));
    }
    let result = format!("{} points-to facts", solved.total());
    records.push(row(format!("ring{scale}"), (constraints.num_vars(), constraints.len()), "pta", time, result));
    // Incremental shortest paths.
    let (label, generator, undirected) = inputs(scale).swap_remove(0);
    let graph = generate(&generator, &GenOptions { seed: 1, max_weight: Some(255) }, undirected, progress)?;
    progress.clear();
    let batches =
        grail_graph::insert::random_batches(graph.num_nodes(), 3, (graph.num_edges() as usize / 1000).max(1), 255, 1);
    let source = graph.out().max_degree().0;
    let options = grail_algos::dsssp::Options { target, device, threads, opt: *opt, fresh: false, verify: true };
    let (nodes, edges) = (graph.num_nodes() as usize, graph.num_edges() as usize);
    let report = grail_algos::dsssp::run(graph, source, &batches, &options, |_| {})?;
    let time: std::time::Duration = report.batches.iter().map(|b| b.update.total).sum();
    let lowered: usize = report.batches.iter().map(|b| b.lowered).sum();
    let result = format!("3 batches of 0.1%: {lowered} distances lowered");
    records.push(row(label, (nodes, edges), "dsssp", time, result));
    Ok(records)
}

/// Points-to constraints of `functions` functions: each takes the address of a local and of a
/// heap object, stores one through the other and loads it back, passes it on to the next
/// function around a ring, and every seventh goes through a shared table.
fn ring_of_functions(functions: usize) -> Result<grail_pta::Constraints> {
    let mut c = grail_pta::Constraints::new();
    for f in 0..functions {
        let (p, q, r) = (format!("f{f}.p"), format!("f{f}.q"), format!("f{f}.r"));
        c.address_of(&p, &format!("f{f}.x"))?;
        c.address_of(&q, &format!("malloc@f{f}"))?;
        c.store(&q, &p)?;
        c.load(&r, &q)?;
        c.copy(&format!("f{}.arg", (f + 1) % functions), &r)?;
        c.copy(&p, &format!("f{f}.arg"))?;
        c.address_of("@table", &format!("malloc@f{f}"))?;
        if f % 7 == 0 {
            c.load(&format!("f{f}.t"), "@table")?;
            c.store(&format!("f{f}.t"), &p)?;
        }
    }
    Ok(c)
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
