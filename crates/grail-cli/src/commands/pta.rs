//! `grail pta extract` and `grail pta solve`: Andersen's points-to analysis, from a program's
//! LLVM IR to constraints, and from constraints to each pointer's set of targets.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use grail_graph::Progress;
use grail_pta::{
    Constraints, PointsTo, check_solution, read_constraints, read_llvm, solve_sequential, write_constraints,
    write_points_to,
};
use serde_json::json;

use super::{UsageError, millis};
use crate::cli::{PtaCommand, PtaExtractArgs, PtaSolveArgs, PtaTarget};
use crate::progress::Bars;

pub fn pta(command: PtaCommand, threads: usize, progress: &Bars) -> Result<()> {
    match command {
        PtaCommand::Extract(args) => extract(args, progress),
        PtaCommand::Solve(args) => solve(args, threads, progress),
    }
}

/// `N variables, M constraints (a address-of, c copy, l load, s store)`.
fn counts(constraints: &Constraints) -> String {
    let [a, c, l, s] = constraints.counts();
    format!(
        "{} variables, {} constraints ({a} address-of, {c} copy, {l} load, {s} store)",
        constraints.num_vars(),
        constraints.len()
    )
}

fn extract(args: PtaExtractArgs, progress: &Bars) -> Result<()> {
    progress.begin("extracting", None);
    let extracted = read_llvm(&args.input).context("cannot extract points-to constraints");
    progress.finish();
    let (constraints, warnings) = extracted?;
    for warning in &warnings {
        eprintln!("warning: {warning}");
    }
    write_constraints(&constraints, &args.output).context("cannot write the constraints")?;
    let warned = match warnings.len() {
        0 => String::new(),
        1 => ", 1 warning".into(),
        n => format!(", {n} warnings"),
    };
    eprintln!("{}: {}{warned}", args.input.display(), counts(&constraints));
    Ok(())
}

fn solve(args: PtaSolveArgs, threads: usize, progress: &Bars) -> Result<()> {
    let to_stdout = args.output.as_deref() == Some(Path::new("-"));
    if to_stdout && args.json {
        return Err(UsageError("--json and -o - would both write to standard output; give -o a file".into()).into());
    }
    progress.begin("reading", None);
    let read = read_constraints(&args.input).context("cannot read the constraints");
    progress.finish();
    let constraints = read?;
    progress.begin("solving", None);
    let start = Instant::now();
    // The grail program's rounds and, on a GPU, its kernels' time.
    let mut rounds = None;
    let mut epochs = None;
    let mut collapsed = None;
    let mut kernels = None;
    let mut program_time = None;
    let points_to = match args.target {
        PtaTarget::Reference => solve_sequential(&constraints),
        PtaTarget::Cpu | PtaTarget::Gpu => {
            let options = grail_algos::pta::Options {
                target: if args.target == PtaTarget::Cpu { grail_algos::Target::Cpu } else { grail_algos::Target::Gpu },
                device: args.program.device,
                threads,
                opt: args.program.opt,
                collapse: args.collapse,
                ..Default::default()
            };
            let solved = grail_algos::pta::solve(&constraints, &options)?;
            rounds = Some(solved.rounds);
            epochs = Some(solved.epochs);
            collapsed = Some(solved.collapsed);
            kernels = solved.gpu_times.map(|t| millis(t.kernels));
            program_time = Some(solved.time);
            solved.points_to
        }
    };
    let time = start.elapsed();
    progress.finish();
    // A solver other than the reference must find the reference's sets, the least solution.
    let mut reference_time = None;
    if args.verify && args.target != PtaTarget::Reference {
        progress.begin("solving with the reference", None);
        let start = Instant::now();
        let expected = solve_sequential(&constraints);
        reference_time = Some(start.elapsed());
        progress.finish();
        if let Some(difference) = grail_pta::compare(&points_to, &expected) {
            return Err(grail_graph::GraphError::Verification(format!(
                "the solution differs from the reference's: {}",
                difference.describe(&constraints)
            ))
            .into());
        }
    }
    // Every constraint checked against the finished sets by a checker that shares no code with
    // the solvers. It proves the solution sound (a fixed point), not least: a solver other than
    // the reference is checked for that by equality with the reference's solution.
    let mut verify_time = None;
    if args.verify {
        progress.begin("verifying", None);
        let start = Instant::now();
        let checked = check_solution(&constraints, &points_to);
        verify_time = Some(start.elapsed());
        progress.finish();
        if let Err(violation) = checked {
            return Err(grail_graph::GraphError::Verification(format!(
                "the solution is not a fixed point of {}: {}",
                args.input.display(),
                violation.describe(&constraints)
            ))
            .into());
        }
    }
    if let Some(output) = &args.output {
        write_points_to(&constraints, &points_to, output).context("cannot write the solution")?;
    }
    let pointers = points_to.iter().filter(|(_, set)| !set.is_empty()).count();
    let largest = largest_set(&constraints, &points_to);
    if args.json {
        let [a, c, l, s] = constraints.counts();
        let summary = json!({
            "input": args.input.display().to_string(),
            "target": match args.target {
                PtaTarget::Reference => "reference",
                PtaTarget::Cpu => "cpu",
                PtaTarget::Gpu => "gpu",
            },
            "rounds": rounds,
            // Runs of the program, with cycles collapsed between them.
            "epochs": epochs,
            // Variables whose set is another's: collapsed into its cycle.
            "collapsed": collapsed,
            "kernels_ms": kernels,
            "reference_ms": reference_time.map(millis),
            "variables": constraints.num_vars(),
            "constraints": constraints.len(),
            "constraints_by_kind": { "address_of": a, "copy": c, "load": l, "store": s },
            "pointers": pointers,
            "facts": points_to.total(),
            "largest_set": largest.as_ref().map(|(name, size)| json!({ "variable": name, "size": size })),
            // The whole solve (reading aside): building the constraint graph and compiling the
            // program (or finding it in the module cache) included.
            "time_ms": millis(time),
            // The solve after compiling: the program's runs (the graph to the device and the
            // sets back included) and, between them, collapsing cycles.
            "program_ms": program_time.map(millis),
            "verify_ms": verify_time.map(millis),
            "verified": args.verify.then_some(true),
            "output": args.output.as_ref().map(|o| o.display().to_string()),
        });
        println!("{}", serde_json::to_string_pretty(&summary)?);
        return Ok(());
    }
    let mut lines = vec![
        format!("{}: {}", args.input.display(), counts(&constraints)),
        format!(
            "  solved in {:.1} ms: {pointers} pointers with a non-empty set, {} points-to facts{}",
            millis(time),
            points_to.total(),
            largest.map_or(String::new(), |(name, size)| format!(", the largest `{name}` with {size}"))
        ),
    ];
    if let Some(time) = verify_time {
        lines.push(format!("  verified in {:.1} ms: every constraint holds (a fixed point)", millis(time)));
    }
    for line in lines {
        // The solution has standard output to itself under `-o -`.
        if to_stdout {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    }
    Ok(())
}

/// The variable with the most targets (the first by name among equals), if any has one.
fn largest_set(constraints: &Constraints, points_to: &PointsTo) -> Option<(String, usize)> {
    points_to
        .iter()
        .filter(|(_, set)| !set.is_empty())
        .map(|(v, set)| (std::cmp::Reverse(set.len()), constraints.name(v)))
        .min()
        .map(|(size, name)| (name.to_string(), size.0))
}
