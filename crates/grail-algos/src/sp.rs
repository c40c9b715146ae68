//! Survey propagation by the grail program `programs/sp.grail`, on the CPU or a GPU: the
//! formula becomes its factor graph (variables, then clauses, as nodes; an edge from a clause
//! to each of its variables, weighing 1 for a negated literal), the program runs surveys,
//! decimation and unit propagation on it, deleting clauses and literals by marking. What is
//! left when the surveys become trivial goes to a local search: first the program's own
//! parallel probSAT (every unsatisfied clause draws a variable each round, the drawn ones flip
//! at once) for at most [`Options::search_rounds`] rounds, then, if clauses are still
//! unsatisfied, the sequential local search here from the program's values, as in grail-sat's
//! reference ([`grail_sat::survey_propagation`]). Unlike the reference, what is left when the
//! surveys stop converging goes to the local search too (updating every clause at once
//! converges less surely near the threshold), and `converged` says so. Every assignment
//! returned has been checked against the formula.

use std::time::{Duration, Instant};

use grail_graph::{Column, Csr, Graph};
use grail_ir::{Module, OptConfig};
use grail_runtime::cpu::{RunOutput, Value};
use grail_runtime::gpu::GpuTimes;
use grail_sat::{Assignment, Formula, SpOptions, SpOutcome, SpStatus, WalkSatOptions, check, walksat_portfolio};
use rayon::prelude::*;

use crate::Target;
use crate::error::{AlgoError, Result};

/// Mixed into the seed for WalkSAT, as the reference does.
const WALKSAT_SEED: u64 = 0x9E37_79B9_7F4A_7C15;

/// Where and how to run.
#[derive(Debug, Clone)]
pub struct Options {
    /// `Cpu` or `Gpu`.
    pub target: Target,
    pub device: usize,
    /// CPU threads (0: one per core).
    pub threads: usize,
    pub opt: OptConfig,
    /// The surveys' and WalkSAT's settings, as the reference takes them.
    pub sp: SpOptions,
    /// Rounds of the program's parallel local search before the host's takes over (0: the
    /// host's alone; `None`: [`DEFAULT_GPU_SEARCH_ROUNDS`] on a GPU for clauses of up to 4
    /// literals, 0 otherwise). Each round flips a variable of every unsatisfied clause at once:
    /// early rounds flip thousands, the last ones a few, each round costing the latency of one
    /// clause's and one variable's work. On the CPU the host's sequential search is faster; on
    /// an H100 the program's took 6.0 s where the host's took 9-15 s on random 3-SAT of a
    /// million variables, 7.8 against 34 s at two million, 8.4 s where the host's failed at
    /// four million, 5.7 against 11.6 s on 4-SAT; on 5-SAT (variables in a hundred clauses
    /// each) 38 s against 7 s.
    pub search_rounds: Option<u32>,
    /// Keep what the surveys leave ([`Solved::rest`]), for a user's own solver.
    pub keep_rest: bool,
    /// The order of the clauses in the factor graph (`None`: [`ClauseOrder::Variable`] for
    /// formulas whose clauses have at most [`VARIABLE_ORDER_LONGEST`] literals, the order read
    /// beyond).
    pub clause_order: Option<ClauseOrder>,
}

/// How the clauses are laid out in the factor graph. Any order solves the same formula: every
/// clause's surveys are updated at once, and the simplified formula is built from the order
/// used. The order changes the surveys' start (each literal's seeded by its edge) and the
/// order of the floating-point sums, so the runs differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClauseOrder {
    /// As the formula lists them.
    Read,
    /// By smallest variable, each clause's literals by variable: the clauses a warp updates
    /// together read and add to nearby variables with their first literals, where in a random
    /// formula's order every literal of every lane misses on its own. On an H100, a million
    /// variables: 5-SAT at 20 surveyed in 15.4 s instead of 17.8, 3-SAT at 4.2 in 2.0 s
    /// instead of 2.3; 6-SAT at 38 ended in a contradiction after 21 sweeps with three seeds
    /// (solved with the order read, two seeds): hence the default by clause length.
    Variable,
}

/// The longest clause for which [`ClauseOrder::Variable`] is the default.
pub const VARIABLE_ORDER_LONGEST: usize = 5;

/// [`Options::search_rounds`] by default on a GPU: what the surveys left of random 3-SAT at
/// 4.2 took 128,652 rounds at a million variables and 143,431 at four million.
pub const DEFAULT_GPU_SEARCH_ROUNDS: u32 = 500_000;

impl Default for Options {
    fn default() -> Self {
        Options {
            target: Target::Cpu,
            device: 0,
            threads: 0,
            opt: OptConfig::all(),
            sp: SpOptions::default(),
            search_rounds: None,
            keep_rest: false,
            clause_order: None,
        }
    }
}

/// What a run did, and how long its parts took.
#[derive(Debug, Clone)]
pub struct Solved {
    pub outcome: SpOutcome,
    /// The grail program's run (surveys, decimation, propagation).
    pub program_time: Duration,
    /// On a GPU: its kernels' share, and the copies.
    pub gpu_times: Option<GpuTimes>,
    /// The host's local search on what was left (zero when the program's satisfied it).
    pub walksat_time: Duration,
    /// Rounds of the program's local search (0 when it did not run).
    pub search_rounds: u32,
    /// What the surveys left for the local search (over the formula's variables, the fixed
    /// ones in no clause), when [`Options::keep_rest`] asked for it.
    pub rest: Option<Formula>,
    /// The program's kernels (and outlined regions): invocations and time.
    pub kernels: Vec<grail_runtime::cpu::KernelStats>,
}

/// Survey propagation on `formula` with the grail program; see the module's notes.
pub fn solve(formula: &Formula, options: &Options) -> Result<Solved> {
    let sp = &options.sp;
    grail_sat::check_options(sp).map_err(|e| AlgoError::Usage(e.to_string()))?;
    let mut outcome = SpOutcome::unsolved(SpStatus::Contradiction);
    let Some(clauses) = clean_clauses(formula)? else {
        return Ok(Solved {
            outcome,
            program_time: Duration::ZERO,
            gpu_times: None,
            walksat_time: Duration::ZERO,
            search_rounds: 0,
            rest: None,
            kernels: Vec::new(),
        });
    };
    let n = formula.num_vars();
    let longest = clauses.clauses().map(<[i32]>::len).max().unwrap_or(0);
    let order = options.clause_order.unwrap_or(if longest <= VARIABLE_ORDER_LONGEST {
        ClauseOrder::Variable
    } else {
        ClauseOrder::Read
    });
    let clauses = match order {
        ClauseOrder::Read => clauses,
        ClauseOrder::Variable => in_variable_order(clauses)?,
    };
    let graph = factor_graph(n, &clauses)?;
    let module = crate::suite::optimized_program("sp", &options.opt)?;
    let rounds = options.search_rounds.unwrap_or(match options.target {
        Target::Gpu if longest <= 4 => DEFAULT_GPU_SEARCH_ROUNDS,
        _ => 0,
    });
    let params = params(&module, n, longest, sp, rounds)?;
    let (mut output, gpu_times) = crate::suite::run_module(
        module.clone(),
        options.target,
        options.device,
        options.threads,
        &graph,
        &params,
        &[],
    )?;
    let program_time = output.stats.elapsed;
    let kernels = std::mem::take(&mut output.stats.kernels);
    let Results { values, satisfied, guesses, packed } = results(&module, output)?;
    const COUNT: u64 = (1 << 20) - 1;
    let search_rounds = (packed & COUNT) as u32;
    outcome.iterations = ((packed >> 20) & COUNT) as usize;
    outcome.decimation_steps = ((packed >> 40) & COUNT) as usize;
    outcome.fixed_by_sp = values[..n].iter().filter(|&&v| v == 1 || v == 2).count();
    outcome.fixed_by_propagation = values[..n].iter().filter(|&&v| v == 3 || v == 4).count();
    match packed >> 60 {
        0 => {}
        1 => {
            return Ok(Solved {
                outcome,
                program_time,
                gpu_times,
                walksat_time: Duration::ZERO,
                search_rounds,
                rest: None,
                kernels,
            });
        }
        // The surveys stopped converging: what decimation has left may still be easy, so
        // WalkSAT gets it (an assignment it finds is checked like any other).
        2 => outcome.converged = false,
        other => return Err(AlgoError::Internal(format!("sp returned status {other}"))),
    }
    // What is left: the clauses not deleted, without their false literals.
    let mut fixed: Vec<Option<bool>> = values[..n].iter().map(|&v| (v != 0).then_some(v % 2 == 1)).collect();
    let mut rest_literals = Vec::new();
    let mut rest_starts = vec![0];
    for (c, clause) in clauses.clauses().enumerate() {
        if satisfied[n + c] {
            continue;
        }
        rest_literals.extend(clause.iter().filter(|&&l| fixed[l.unsigned_abs() as usize - 1].is_none()));
        rest_starts.push(rest_literals.len());
    }
    outcome.walksat_clauses = rest_starts.len() - 1;
    let started = Instant::now();
    // The program's local search, where it ran, left its values in `guess`: they end the
    // search if they satisfy what is left, and start the host's if not.
    let device_values = (search_rounds > 0).then(|| {
        let values = fixed.iter().zip(&guesses).map(|(fixed, &guess)| Some(fixed.unwrap_or(guess == 1))).collect();
        Assignment::from_values(values)
    });
    let rest = Formula::from_flat(n, rest_literals, rest_starts)
        .map_err(|e| AlgoError::Internal(format!("the simplified formula: {e}")))?;
    let device_satisfied = device_values.as_ref().is_some_and(|values| check(&rest, values).is_satisfied());
    if device_satisfied {
        for (value, guess) in fixed.iter_mut().zip(&guesses) {
            value.get_or_insert(*guess == 1);
        }
    }
    if !device_satisfied && outcome.walksat_clauses > 0 {
        let search = WalkSatOptions {
            max_flips: sp.walksat_max_flips,
            noise: sp.walksat_noise,
            seed: sp.seed ^ WALKSAT_SEED,
            start: device_values.as_ref(),
            rule: sp.walksat_rule,
        };
        // One search per core (--threads), the first to finish wins: WalkSAT's time varies
        // widely with the seed.
        let searches = match options.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        let found = walksat_portfolio(&rest, &search, searches).map_err(|e| AlgoError::Usage(e.to_string()))?;
        outcome.walksat_flips = found.flips;
        let Some(found) = found.assignment else {
            outcome.status = if outcome.converged { SpStatus::WalkSatFailed } else { SpStatus::NotConverged };
            let walksat_time = started.elapsed();
            let rest = options.keep_rest.then_some(rest);
            return Ok(Solved { outcome, program_time, gpu_times, walksat_time, search_rounds, rest, kernels });
        };
        for (value, found) in fixed.iter_mut().zip(found.values()) {
            value.get_or_insert(found.unwrap_or(false));
        }
    }
    let walksat_time = started.elapsed();
    let assignment = Assignment::from_values(fixed.into_iter().map(|v| Some(v.unwrap_or(false))).collect());
    let report = check(formula, &assignment);
    if !report.is_satisfied() {
        return Err(AlgoError::Internal(format!(
            "the grail survey propagation's assignment fails the verifier: {report}"
        )));
    }
    outcome.status = SpStatus::Satisfied;
    outcome.assignment = Some(assignment);
    let rest = options.keep_rest.then_some(rest);
    Ok(Solved { outcome, program_time, gpu_times, walksat_time, search_rounds, rest, kernels })
}

/// The clauses with repeated literals merged and tautologies dropped (as the reference does),
/// flat; `None` if a clause is empty. Chunks of clauses are cleaned on every core and joined in
/// order.
fn clean_clauses(formula: &Formula) -> Result<Option<Formula>> {
    const CHUNK: usize = 1 << 16;
    let starts = formula.clause_starts();
    let chunks: Vec<Option<(Vec<i32>, Vec<usize>)>> = (0..formula.num_clauses().div_ceil(CHUNK))
        .into_par_iter()
        .map(|chunk| {
            let clauses = chunk * CHUNK..((chunk + 1) * CHUNK).min(formula.num_clauses());
            let mut literals = Vec::with_capacity(starts[clauses.end] - starts[clauses.start]);
            let mut lens = Vec::with_capacity(clauses.len());
            for c in clauses {
                let clause = &formula.literals()[starts[c]..starts[c + 1]];
                if clause.is_empty() {
                    return None;
                }
                let start = literals.len();
                if grail_sat::push_cleaned(&mut literals, clause.iter().copied(), |l| -l) {
                    lens.push(literals.len() - start);
                }
            }
            Some((literals, lens))
        })
        .collect();
    let mut literals = Vec::with_capacity(formula.literals().len());
    let mut clause_starts = Vec::with_capacity(formula.num_clauses() + 1);
    clause_starts.push(0);
    for chunk in chunks {
        let Some((chunk_literals, lens)) = chunk else { return Ok(None) };
        for len in lens {
            clause_starts.push(clause_starts.last().copied().unwrap_or(0) + len);
        }
        literals.extend_from_slice(&chunk_literals);
    }
    Formula::from_flat(formula.num_vars(), literals, clause_starts)
        .map(Some)
        .map_err(|e| AlgoError::Internal(format!("the formula without repeats and tautologies: {e}")))
}

/// The clauses ordered by their smallest variable, each clause's literals by variable
/// ([`ClauseOrder::Variable`]).
fn in_variable_order(clauses: Formula) -> Result<Formula> {
    let starts = clauses.clause_starts();
    let literals = clauses.literals();
    // A counting sort by smallest variable (stable: by clause within a variable).
    let smallest: Vec<u32> = (0..clauses.num_clauses())
        .into_par_iter()
        .map(|c| literals[starts[c]..starts[c + 1]].iter().map(|l| l.unsigned_abs()).min().unwrap_or(0))
        .collect();
    let mut place = vec![0usize; clauses.num_vars() + 2];
    for &v in &smallest {
        place[v as usize + 1] += 1;
    }
    for v in 1..place.len() {
        place[v] += place[v - 1];
    }
    let mut order = vec![0u32; smallest.len()];
    for (c, &v) in smallest.iter().enumerate() {
        order[place[v as usize]] = c as u32;
        place[v as usize] += 1;
    }
    let mut new_starts = Vec::with_capacity(order.len() + 1);
    new_starts.push(0);
    for &c in &order {
        let c = c as usize;
        new_starts.push(new_starts.last().copied().unwrap_or(0) + starts[c + 1] - starts[c]);
    }
    let mut new_literals = vec![0i32; literals.len()];
    // Each clause's slot in the new order, filled on every core: split the literals at the
    // clauses' boundaries, a chunk of clauses at a time.
    const CHUNK: usize = 1 << 14;
    let mut pieces = Vec::with_capacity(order.len().div_ceil(CHUNK));
    let mut rest: &mut [i32] = &mut new_literals;
    for chunk in 0..order.len().div_ceil(CHUNK) {
        let (first, last) = (chunk * CHUNK, ((chunk + 1) * CHUNK).min(order.len()));
        let (piece, tail) = rest.split_at_mut(new_starts[last] - new_starts[first]);
        pieces.push((first..last, piece));
        rest = tail;
    }
    pieces.into_par_iter().for_each(|(range, piece)| {
        let base = new_starts[range.start];
        for i in range {
            let c = order[i] as usize;
            let to = &mut piece[new_starts[i] - base..new_starts[i + 1] - base];
            to.copy_from_slice(&literals[starts[c]..starts[c + 1]]);
            to.sort_unstable_by_key(|l| l.unsigned_abs());
        }
    });
    Formula::from_flat(clauses.num_vars(), new_literals, new_starts)
        .map_err(|e| AlgoError::Internal(format!("the clauses in variable order: {e}")))
}

/// Nodes `0..n` are the variables, `n + c` clause `c`; an edge from each clause to each of its
/// variables, weighing 1 when the literal is negated.
fn factor_graph(n: usize, clauses: &Formula) -> Result<Graph> {
    let nodes = n + clauses.num_clauses();
    if nodes >= u32::MAX as usize {
        return Err(AlgoError::Usage(format!(
            "{n} variables and {} clauses: the factor graph needs fewer than 2^32 nodes",
            clauses.num_clauses()
        )));
    }
    let mut offsets = vec![0u64; n];
    offsets.extend(clauses.clause_starts().iter().map(|&s| s as u64));
    let targets = clauses.literals().iter().map(|l| l.unsigned_abs() - 1).collect();
    let weights = clauses.literals().iter().map(|&l| u32::from(l < 0)).collect();
    let csr = Csr::from_parts(offsets, targets, Some(weights))
        .map_err(|e| AlgoError::Internal(format!("the factor graph: {e}")))?;
    Ok(Graph::from_csr(csr))
}

fn params(module: &Module, n: usize, longest: usize, sp: &SpOptions, rounds: u32) -> Result<Vec<Option<Value>>> {
    let max_sweeps = u32::try_from(sp.max_iterations).unwrap_or(u32::MAX);
    module
        .params
        .iter()
        .map(|p| {
            Ok(Some(match p.name.as_str() {
                "vars" => Value::U32(n as u32),
                "epsilon" => Value::F64(sp.epsilon),
                "trivial" => Value::F64(sp.trivial),
                "fraction" => Value::F64(sp.fix_fraction),
                "max_sweeps" => Value::U32(max_sweeps),
                "seed" => Value::U64(sp.seed),
                "rounds" => Value::U32(rounds),
                "longest" => Value::U32(u32::try_from(longest).unwrap_or(u32::MAX)),
                other => return Err(AlgoError::Internal(format!("sp has an unexpected parameter `{other}`"))),
            }))
        })
        .collect()
}

/// What the program left: per node its `value`, `satisfied` and `guess`, and what `main` returned.
struct Results {
    values: Vec<u32>,
    satisfied: Vec<bool>,
    guesses: Vec<u32>,
    packed: u64,
}

/// The program's outputs, checked for their types.
fn results(module: &Module, mut output: RunOutput) -> Result<Results> {
    let wrong = || AlgoError::Internal("sp's outputs are not value (u32), satisfied (bool) and guess (u32)".into());
    let [value_id, satisfied_id, guess_id] = module.outputs[..] else { return Err(wrong()) };
    let mut take_u32 = |id: grail_ir::PropertyId| match std::mem::replace(
        &mut output.properties[id.index()],
        Column::Bool(Vec::new()),
    ) {
        Column::U32(values) => Ok(values),
        _ => Err(wrong()),
    };
    let values = take_u32(value_id)?;
    let guesses = take_u32(guess_id)?;
    let satisfied = match std::mem::replace(&mut output.properties[satisfied_id.index()], Column::Bool(Vec::new())) {
        Column::Bool(satisfied) => satisfied,
        _ => return Err(wrong()),
    };
    let packed = match output.result {
        Some(Value::U64(packed)) => packed,
        _ => return Err(AlgoError::Internal("sp's main did not return its status".into())),
    };
    Ok(Results { values, satisfied, guesses, packed })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The variable order holds the same clauses (as sets of literals), each sorted by
    /// variable, the clauses by their smallest variable.
    #[test]
    fn the_variable_order_keeps_every_clause() {
        for k in [3, 5, 6] {
            let formula = grail_sat::random_ksat(3000, 4.0 * k as f64, k, 7).unwrap();
            let ordered = in_variable_order(formula.clone()).unwrap();
            let sorted = |f: &Formula| {
                let mut clauses: Vec<Vec<i32>> = f
                    .clauses()
                    .map(|c| {
                        let mut c = c.to_vec();
                        c.sort_unstable();
                        c
                    })
                    .collect();
                clauses.sort_unstable();
                clauses
            };
            assert_eq!(sorted(&formula), sorted(&ordered), "k {k}");
            let smallest: Vec<u32> = ordered.clauses().map(|c| c[0].unsigned_abs()).collect();
            assert!(smallest.windows(2).all(|w| w[0] <= w[1]), "k {k}: clauses not by smallest variable");
            assert!(ordered.clauses().all(|c| c.windows(2).all(|w| w[0].unsigned_abs() < w[1].unsigned_abs())));
        }
    }
}
