//! `grail gen sat` and `grail sp`: random k-SAT formulas, and survey propagation on a formula.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::ValueEnum;
use grail_graph::Progress;
use grail_sat::{SpOptions, SpStatus, check, random_ksat, read_cnf, survey_propagation, write_cnf, write_solution};
use serde_json::json;

use crate::cli::{SpArgs, SpTarget};
use crate::progress::Bars;
use grail_algos::Target;

/// Survey propagation ended without an assignment (exit 4): not an error in the formula or the
/// program, but the heuristic's honest failure, or a formula that plainly has none.
#[derive(Debug)]
pub struct NoAssignment {
    reason: String,
    /// The formula is known to have no assignment (an empty clause), not just none found.
    unsatisfiable: bool,
}

impl std::fmt::Display for NoAssignment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.unsatisfiable {
            write!(f, "no satisfying assignment: {}", self.reason)
        } else {
            write!(
                f,
                "no satisfying assignment found ({}); survey propagation is a heuristic: near the threshold it can fail",
                self.reason
            )
        }
    }
}

impl std::error::Error for NoAssignment {}

/// Writes the random formula `grail gen sat` describes.
pub fn generate(vars: usize, ratio: f64, k: usize, seed: u64, output: &Path) -> Result<()> {
    let formula = random_ksat(vars, ratio, k, seed).context("cannot generate the formula")?;
    grail_sat::write_cnf(&formula, output).context("cannot write the formula")?;
    eprintln!(
        "wrote {}: {} variables, {} clauses of {k} literals",
        output.display(),
        formula.num_vars(),
        formula.num_clauses()
    );
    Ok(())
}

/// Formulas whose solving would need more than this are refused rather than left to exhaust
/// memory (the limit of the graph generators' edge lists).
const MAX_SOLVE_BYTES: u64 = 64 << 30;

/// Roughly what survey propagation needs per variable, literal and clause (measured on the
/// reference and the grail program, with room to spare): the solvers size their arrays by the
/// header's variable count, used or not.
const BYTES_PER_VARIABLE: u64 = 48;
const BYTES_PER_LITERAL: u64 = 80;
const BYTES_PER_CLAUSE: u64 = 32;

/// Refuses a formula whose header implies more memory than [`MAX_SOLVE_BYTES`], before any
/// solver allocates for it.
fn check_size(formula: &grail_sat::Formula, path: &Path) -> Result<()> {
    let (vars, clauses, literals) =
        (formula.num_vars() as u64, formula.num_clauses() as u64, formula.num_literals() as u64);
    let bytes = vars
        .saturating_mul(BYTES_PER_VARIABLE)
        .saturating_add(literals.saturating_mul(BYTES_PER_LITERAL))
        .saturating_add(clauses.saturating_mul(BYTES_PER_CLAUSE));
    if bytes > MAX_SOLVE_BYTES {
        anyhow::bail!(
            "{}: the header `p cnf {vars} {clauses}` would need about {} GiB to solve, \
             more than the {} GiB a formula may take; the solvers size their arrays by the header's variable count",
            path.display(),
            bytes.div_ceil(1 << 30),
            MAX_SOLVE_BYTES >> 30
        );
    }
    Ok(())
}

pub fn sp(args: SpArgs, threads: usize, progress: &Bars) -> Result<()> {
    let mut sp_options = SpOptions {
        seed: args.seed,
        fix_fraction: args.fix_fraction,
        epsilon: args.epsilon,
        max_iterations: args.max_sweeps,
        walksat_max_flips: args.walksat_flips,
        walksat_noise: args.noise.unwrap_or(0.5),
        walksat_rule: match args.local_search {
            crate::cli::LocalSearch::Walksat => grail_sat::PickRule::WalkSat,
            crate::cli::LocalSearch::Probsat => grail_sat::PickRule::ProbSat,
        },
        ..SpOptions::default()
    };
    // Out-of-range settings are usage errors, before anything runs.
    grail_sat::check_options(&sp_options).map_err(|e| super::UsageError(e.to_string()))?;
    if args.noise.is_some() && args.local_search != crate::cli::LocalSearch::Walksat {
        return Err(super::UsageError(
            "--noise is WalkSAT's: probSAT, the default local search, has none (add --local-search walksat)".into(),
        )
        .into());
    }
    if args.target == SpTarget::Reference
        && (args.search_rounds.is_some()
            || args.rest.is_some()
            || args.clause_order != crate::cli::ClauseOrderArg::Auto)
    {
        return Err(super::UsageError(
            "--search-rounds, --rest and --clause-order are the grail program's (--target cpu or gpu), not the \
             reference's"
                .into(),
        )
        .into());
    }
    progress.begin("reading", None);
    let formula = read_cnf(&args.input)?;
    progress.finish();
    check_size(&formula, &args.input)?;
    if args.noise.is_none() {
        sp_options.walksat_noise = grail_sat::suggested_noise(&formula);
    }
    progress.begin("solving", None);
    let start = Instant::now();
    let grail_options = |target| grail_algos::sp::Options {
        target,
        device: args.program.device,
        threads,
        opt: args.program.opt,
        sp: sp_options,
        search_rounds: args.search_rounds,
        keep_rest: args.rest.is_some(),
        clause_order: match args.clause_order {
            crate::cli::ClauseOrderArg::Auto => None,
            crate::cli::ClauseOrderArg::Read => Some(grail_algos::sp::ClauseOrder::Read),
            crate::cli::ClauseOrderArg::Variable => Some(grail_algos::sp::ClauseOrder::Variable),
        },
    };
    // The grail program's part (surveys, decimation, propagation) and, on a GPU, its kernels'.
    let mut program_ms = None;
    let mut kernels_ms = None;
    let mut walksat_ms = None;
    let mut search_rounds = None;
    let mut kernels = Vec::new();
    let outcome = match args.target {
        SpTarget::Reference => survey_propagation(&formula, &sp_options)?,
        SpTarget::Cpu | SpTarget::Gpu => {
            let target = if args.target == SpTarget::Cpu { Target::Cpu } else { Target::Gpu };
            let solved = grail_algos::sp::solve(&formula, &grail_options(target))?;
            program_ms = Some(solved.program_time.as_secs_f64() * 1e3);
            kernels_ms = solved.gpu_times.map(|t| t.kernels.as_secs_f64() * 1e3);
            walksat_ms = Some(solved.walksat_time.as_secs_f64() * 1e3);
            search_rounds = Some(solved.search_rounds);
            kernels = solved
                .kernels
                .iter()
                .filter(|k| k.invocations > 0)
                .map(|k| json!({"name": k.name, "invocations": k.invocations, "items": k.items, "ms": k.time.as_secs_f64() * 1e3}))
                .collect();
            if let (Some(rest), Some(path)) = (&solved.rest, &args.rest) {
                write_cnf(rest, path).context("cannot write the formula the surveys left")?;
            }
            solved.outcome
        }
    };
    let time = start.elapsed();
    progress.finish();
    // The assignment checked against the formula as the file holds it, read again: nothing of
    // the solver's own copy is trusted.
    let verified = match (&outcome.assignment, args.verify) {
        (Some(assignment), true) => {
            let report = check(&read_cnf(&args.input)?, assignment);
            if !report.is_satisfied() {
                return Err(grail_graph::GraphError::Verification(format!(
                    "the assignment does not satisfy {}: {report}",
                    args.input.display()
                ))
                .into());
            }
            Some(true)
        }
        _ => None,
    };
    if let (Some(assignment), Some(output)) = (&outcome.assignment, &args.output) {
        write_solution(assignment, output).context("cannot write the assignment")?;
    }
    let status = match outcome.status {
        SpStatus::Satisfied => "satisfied",
        SpStatus::Contradiction => "contradiction",
        SpStatus::NotConverged => "surveys did not converge",
        SpStatus::WalkSatFailed => "WalkSAT found no assignment for the simplified formula",
    };
    if args.json {
        let summary = json!({
            "input": args.input.display().to_string(),
            "target": target_name(args.target),
            "program_ms": program_ms,
            "kernels_ms": kernels_ms,
            "walksat_ms": walksat_ms,
            "search_rounds": search_rounds,
            "kernels": kernels,
            "variables": formula.num_vars(),
            "clauses": formula.num_clauses(),
            "satisfied": outcome.is_satisfied(),
            "status": status,
            "vars_fixed_by_sp": outcome.fixed_by_sp,
            "vars_fixed_by_propagation": outcome.fixed_by_propagation,
            "survey_sweeps": outcome.iterations,
            "decimation_steps": outcome.decimation_steps,
            "walksat_clauses": outcome.walksat_clauses,
            "walksat_flips": outcome.walksat_flips,
            "walksat_noise": sp_options.walksat_noise,
            "local_search": args.local_search.to_possible_value().map(|v| v.get_name().to_string()),
            "surveys_converged": outcome.converged,
            "time_ms": time.as_secs_f64() * 1e3,
            "verified": verified,
        });
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        let mut lines = vec![
            format!("{}: {} variables, {} clauses", args.input.display(), formula.num_vars(), formula.num_clauses()),
            format!(
                "  {status} in {:.1} ms: {} variables fixed by surveys, {} by unit propagation, {} clauses left to WalkSAT ({} flips)",
                time.as_secs_f64() * 1e3,
                outcome.fixed_by_sp,
                outcome.fixed_by_propagation,
                outcome.walksat_clauses,
                outcome.walksat_flips
            ),
        ];
        if verified == Some(true) {
            lines.push("  verified: every clause satisfied".into());
        }
        // Under `-o -` the assignment has standard output to itself.
        let to_stdout = args.output.as_deref().is_some_and(|o| o.as_os_str() == "-");
        for line in lines {
            if to_stdout {
                eprintln!("{line}");
            } else {
                println!("{line}");
            }
        }
    }
    if formula.has_empty_clause() {
        let reason = "the formula has an empty clause, so it is unsatisfiable".into();
        return Err(NoAssignment { reason, unsatisfiable: true }.into());
    }
    if outcome.is_satisfied() {
        Ok(())
    } else {
        Err(NoAssignment { reason: status.to_string(), unsatisfiable: false }.into())
    }
}

fn target_name(target: SpTarget) -> &'static str {
    match target {
        SpTarget::Reference => "reference",
        SpTarget::Cpu => "cpu",
        SpTarget::Gpu => "gpu",
    }
}
