//! Survey propagation with decimation, sequential: the reference that grail's parallel graph
//! program is compared with (surveys, how many variables decimation fixes, the outcome).
//!
//! A survey `eta[a -> i]` is the probability that clause `a` warns variable `i` to take the
//! value satisfying `a`, because every other variable of `a` is forced to violate it. For each
//! other variable `j` of `a`, with `S` the other clauses where `j` has the same sign as in `a`
//! and `U` those where it has the opposite sign, `P(X) = prod over b in X of (1 - eta[b -> j])`:
//!
//! - `pi_u = (1 - P(U)) P(S)`, `pi_s = (1 - P(S)) P(U)`, `pi_0 = P(S) P(U)`;
//! - `eta[a -> i] = prod over j != i of pi_u / (pi_u + pi_s + pi_0)`.
//!
//! Clauses are updated one at a time in a fresh random order each sweep (each update sees the
//! ones before it, which converges more reliably than updating all at once) until no survey
//! moves by `epsilon`. A variable's biases come from all its surveys: with `P+` and `P-` the
//! products over the clauses where it is positive and negative, `pi+ = (1 - P+) P-`,
//! `pi- = (1 - P-) P+`, `pi0 = P+ P-`, normalized to `W+`, `W-`, `W0`. Decimation fixes the
//! `fix_fraction` of variables with the largest `|W+ - W-|` to their favoured value, then unit
//! propagation simplifies the formula (satisfied clauses removed, false literals removed,
//! clauses left with one literal fix it), and surveys resume from their values. Once every
//! survey is below `trivial` the surveys carry no information, and WalkSAT solves what is left.
//!
//! Survey propagation is a heuristic: it may fail to converge, run into a contradiction, or
//! leave WalkSAT a formula it cannot solve, most often near the satisfiability threshold
//! (about 4.27 clauses per variable for random 3-SAT), and it says nothing when the formula is
//! unsatisfiable. Then the outcome has no assignment and its status says why; a caller reports
//! that no assignment was found, not that none exists. An assignment returned has been checked.

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::{Assignment, Formula, PickRule, Result, SatError, WalkSatOptions, check, walksat_outcome};

/// `1 - eta` below this counts as 0 (the survey as a certain warning), so products can leave
/// it out and count it instead, and dividing it back out never divides by 0.
const ZERO: f64 = 1e-12;

/// Mixed into the seed for WalkSAT, so its random choices are not a replay of the surveys'.
const WALKSAT_SEED: u64 = 0x9E37_79B9_7F4A_7C15;

/// How [`survey_propagation`] runs.
#[derive(Clone, Copy, Debug)]
pub struct SpOptions {
    /// Surveys have converged when a sweep changes none by this much.
    pub epsilon: f64,
    /// Sweeps allowed for one convergence (after each decimation step, a new count).
    pub max_iterations: usize,
    /// Fraction of the still-free variables that one decimation step fixes (at least one).
    pub fix_fraction: f64,
    /// Surveys all below this are trivial: decimation stops and WalkSAT takes over.
    pub trivial: f64,
    /// Seed of the initial surveys, the update orders and WalkSAT.
    pub seed: u64,
    /// WalkSAT's flips on the simplified formula.
    pub walksat_max_flips: u64,
    /// WalkSAT's noise on the simplified formula.
    pub walksat_noise: f64,
    /// How the local search on the simplified formula picks a variable: WalkSAT's rule or
    /// probSAT's.
    pub walksat_rule: PickRule,
}

impl Default for SpOptions {
    fn default() -> Self {
        SpOptions {
            epsilon: 1e-3,
            max_iterations: 1000,
            fix_fraction: 0.01,
            trivial: 1e-2,
            seed: 0,
            walksat_max_flips: 100_000_000,
            walksat_noise: 0.5,
            walksat_rule: PickRule::ProbSat,
        }
    }
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpStatus {
    /// The assignment satisfies the formula (checked).
    Satisfied,
    /// A clause lost all its literals, or surveys forced a variable both ways: the fixed
    /// values are wrong, or the formula is unsatisfiable.
    Contradiction,
    /// Surveys did not converge within `max_iterations` sweeps.
    NotConverged,
    /// WalkSAT found no assignment for the simplified formula within its flips.
    WalkSatFailed,
}

/// What [`survey_propagation`] did.
#[derive(Clone, Debug)]
pub struct SpOutcome {
    /// Whether and why not it found an assignment.
    pub status: SpStatus,
    /// A complete assignment satisfying the formula when the status is `Satisfied`.
    pub assignment: Option<Assignment>,
    /// Variables fixed by decimation (from their biases).
    pub fixed_by_sp: usize,
    /// Variables fixed by unit propagation (unit clauses of the formula included).
    pub fixed_by_propagation: usize,
    /// Survey sweeps, over all convergences.
    pub iterations: usize,
    /// Decimation steps.
    pub decimation_steps: usize,
    /// Clauses left to WalkSAT (0 if decimation satisfied them all).
    pub walksat_clauses: usize,
    /// Flips WalkSAT made.
    pub walksat_flips: u64,
    /// False when the last convergence failed and WalkSAT finished what decimation had left
    /// (the grail program does that; this reference stops with `NotConverged` instead).
    pub converged: bool,
}

impl SpOutcome {
    /// Nothing done yet, and no assignment: the outcome a run starts from, `status` until it
    /// finds one.
    pub fn unsolved(status: SpStatus) -> SpOutcome {
        SpOutcome {
            status,
            assignment: None,
            fixed_by_sp: 0,
            fixed_by_propagation: 0,
            iterations: 0,
            decimation_steps: 0,
            walksat_clauses: 0,
            walksat_flips: 0,
            converged: true,
        }
    }

    /// Whether an assignment was found.
    pub fn is_satisfied(&self) -> bool {
        self.status == SpStatus::Satisfied
    }
}

/// Survey-inspired decimation on `formula`, finished by WalkSAT; see the module's notes. Errors
/// are for options out of range; a failed search is an outcome.
pub fn survey_propagation(formula: &Formula, options: &SpOptions) -> Result<SpOutcome> {
    check_options(options)?;
    if formula.num_literals() >= u32::MAX as usize {
        return Err(SatError::Invalid(format!(
            "{} literals: survey propagation handles fewer than 2^32",
            formula.num_literals()
        )));
    }
    let n = formula.num_vars();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(options.seed);
    let mut outcome = SpOutcome::unsolved(SpStatus::Contradiction);
    let Some(mut work) = Work::new(formula, &mut rng) else {
        return Ok(outcome);
    };
    let mut values: Vec<Option<bool>> = vec![None; n];
    let mut products = Products::new(n);
    work.index(n);
    loop {
        match work.propagate(&mut values) {
            Some(fixed) => outcome.fixed_by_propagation += fixed,
            None => return Ok(outcome),
        }
        work.simplify(&values);
        if work.num_clauses() == 0 {
            break;
        }
        work.index(n);
        match work.converge(&mut products, options, &mut rng) {
            Ok(sweeps) => outcome.iterations += sweeps,
            Err((sweeps, status)) => {
                outcome.iterations += sweeps;
                outcome.status = status;
                return Ok(outcome);
            }
        }
        if work.eta.iter().all(|&eta| eta < options.trivial) {
            break;
        }
        let Some(fixed) = work.decimate(&mut products, &mut values, options.fix_fraction) else {
            return Ok(outcome);
        };
        outcome.fixed_by_sp += fixed;
        outcome.decimation_steps += 1;
    }
    outcome.walksat_clauses = work.num_clauses();
    if work.num_clauses() > 0 {
        let rest = work.formula(n);
        let search = WalkSatOptions {
            max_flips: options.walksat_max_flips,
            noise: options.walksat_noise,
            seed: options.seed ^ WALKSAT_SEED,
            start: None,
            rule: options.walksat_rule,
        };
        let found = walksat_outcome(&rest, &search)?;
        outcome.walksat_flips = found.flips;
        let Some(found) = found.assignment else {
            outcome.status = SpStatus::WalkSatFailed;
            return Ok(outcome);
        };
        // Fixed variables occur nowhere in `rest`; WalkSAT's values fill in the free ones.
        for (value, found) in values.iter_mut().zip(found.values()) {
            value.get_or_insert(found.unwrap_or(false));
        }
    }
    let assignment = Assignment::from_values(values.into_iter().map(|v| Some(v.unwrap_or(false))).collect());
    let report = check(formula, &assignment);
    if !report.is_satisfied() {
        return Err(SatError::Invalid(format!(
            "internal error: survey propagation's assignment fails the verifier: {report}"
        )));
    }
    outcome.status = SpStatus::Satisfied;
    outcome.assignment = Some(assignment);
    Ok(outcome)
}

/// Refuses options out of range, naming the option and what it takes.
pub fn check_options(options: &SpOptions) -> Result<()> {
    let bad = |what: &str, value: f64, expected: &str| {
        Err(SatError::Invalid(format!("survey propagation {what} {value}: expected {expected}")))
    };
    if !(options.epsilon.is_finite() && options.epsilon > 0.0) {
        return bad("epsilon", options.epsilon, "a positive number");
    }
    if !(options.fix_fraction > 0.0 && options.fix_fraction <= 1.0) {
        return bad("fix fraction", options.fix_fraction, "a fraction in (0, 1]");
    }
    if !(options.trivial > 0.0 && options.trivial <= 1.0) {
        return bad("trivial-survey bound", options.trivial, "a number in (0, 1]");
    }
    if !(0.0..=1.0).contains(&options.walksat_noise) {
        return bad("WalkSAT noise", options.walksat_noise, "a probability in [0, 1]");
    }
    if options.max_iterations == 0 {
        return Err(SatError::Invalid("survey propagation needs at least one iteration".into()));
    }
    Ok(())
}

/// The formula as simplified so far, with a survey per literal occurrence (an edge). Literal
/// codes are as in WalkSAT: `2i` for variable index `i`, `2i + 1` for its negation; a variable
/// occurs at most once in a clause.
struct Work {
    starts: Vec<usize>,
    lits: Vec<u32>,
    eta: Vec<f64>,
    /// Derived by `index`: each edge's clause, and each variable's edges.
    edge_clause: Vec<u32>,
    var_starts: Vec<usize>,
    var_edges: Vec<u32>,
}

/// Per variable, the products of `1 - eta` over its positive and its negative edges: the
/// factors counted as zero apart, the others multiplied.
struct Products {
    product: [Vec<f64>; 2],
    zeros: [Vec<u32>; 2],
}

impl Products {
    fn new(n: usize) -> Products {
        Products { product: [vec![1.0; n], vec![1.0; n]], zeros: [vec![0; n], vec![0; n]] }
    }

    fn reset(&mut self) {
        self.product.iter_mut().for_each(|p| p.fill(1.0));
        self.zeros.iter_mut().for_each(|z| z.fill(0));
    }

    fn add(&mut self, code: u32, eta: f64) {
        let (side, v) = ((code & 1) as usize, (code >> 1) as usize);
        let factor = 1.0 - eta;
        if factor < ZERO {
            self.zeros[side][v] += 1;
        } else {
            self.product[side][v] *= factor;
        }
    }

    fn remove(&mut self, code: u32, eta: f64) {
        let (side, v) = ((code & 1) as usize, (code >> 1) as usize);
        let factor = 1.0 - eta;
        if factor < ZERO {
            self.zeros[side][v] -= 1;
        } else {
            self.product[side][v] /= factor;
        }
    }

    /// The full product on one side of variable `v`.
    fn full(&self, side: usize, v: usize) -> f64 {
        if self.zeros[side][v] > 0 { 0.0 } else { self.product[side][v] }
    }
}

impl Work {
    /// Clauses with duplicate literals merged and tautologies dropped, surveys random in
    /// `[0, 1)`; `None` if a clause is empty.
    fn new(formula: &Formula, rng: &mut Xoshiro256PlusPlus) -> Option<Work> {
        let mut starts = vec![0];
        let mut lits: Vec<u32> = Vec::with_capacity(formula.num_literals());
        for clause in formula.clauses() {
            if clause.is_empty() {
                return None;
            }
            let start = lits.len();
            for &l in clause {
                let code = 2 * (l.unsigned_abs() - 1) + u32::from(l < 0);
                if lits[start..].contains(&(code ^ 1)) {
                    lits.truncate(start);
                    break;
                }
                if !lits[start..].contains(&code) {
                    lits.push(code);
                }
            }
            if lits.len() > start {
                starts.push(lits.len());
            }
        }
        let eta = (0..lits.len()).map(|_| rng.random::<f64>()).collect();
        Some(Work { starts, lits, eta, edge_clause: Vec::new(), var_starts: Vec::new(), var_edges: Vec::new() })
    }

    fn num_clauses(&self) -> usize {
        self.starts.len() - 1
    }

    /// Builds each edge's clause and each variable's edges.
    fn index(&mut self, n: usize) {
        self.edge_clause.clear();
        for c in 0..self.num_clauses() {
            self.edge_clause.extend(std::iter::repeat_n(c as u32, self.starts[c + 1] - self.starts[c]));
        }
        let mut counts = vec![0usize; n + 1];
        for &code in &self.lits {
            counts[(code >> 1) as usize + 1] += 1;
        }
        for v in 1..=n {
            counts[v] += counts[v - 1];
        }
        self.var_starts = counts.clone();
        self.var_edges = vec![0; self.lits.len()];
        for (e, &code) in self.lits.iter().enumerate() {
            let v = (code >> 1) as usize;
            self.var_edges[counts[v]] = e as u32;
            counts[v] += 1;
        }
    }

    /// Unit propagation from the current values: clauses left with one free literal and none
    /// true fix it. Returns how many variables it fixed, or `None` on a clause with every
    /// literal false. Needs `index`.
    fn propagate(&self, values: &mut [Option<bool>]) -> Option<usize> {
        let is_true = |values: &[Option<bool>], code: u32| values[(code >> 1) as usize].map(|v| v != (code & 1 == 1));
        // Some(Some(code)): a unit on `code`; Some(None): nothing to do; None: a conflict.
        let unit = |values: &[Option<bool>], c: usize| {
            let mut free = None;
            let mut count = 0;
            for &code in &self.lits[self.starts[c]..self.starts[c + 1]] {
                match is_true(values, code) {
                    Some(true) => return Some(None),
                    Some(false) => {}
                    None => {
                        free = Some(code);
                        count += 1;
                    }
                }
            }
            match count {
                0 => None,
                1 => Some(free),
                _ => Some(None),
            }
        };
        let mut fixed = 0;
        let mut queue = Vec::new();
        let mut assign = |values: &mut [Option<bool>], code: u32, queue: &mut Vec<u32>| {
            values[(code >> 1) as usize] = Some(code & 1 == 0);
            queue.push(code >> 1);
            fixed += 1;
        };
        for c in 0..self.num_clauses() {
            if let Some(code) = unit(values, c)? {
                assign(values, code, &mut queue);
            }
        }
        while let Some(v) = queue.pop() {
            for &e in &self.var_edges[self.var_starts[v as usize]..self.var_starts[v as usize + 1]] {
                if let Some(code) = unit(values, self.edge_clause[e as usize] as usize)? {
                    assign(values, code, &mut queue);
                }
            }
        }
        Some(fixed)
    }

    /// Drops satisfied clauses and false literals, keeping the surveys of the edges left. Every
    /// clause left has two or more literals (after `propagate`).
    fn simplify(&mut self, values: &[Option<bool>]) {
        let mut starts = vec![0];
        let mut lits = Vec::with_capacity(self.lits.len());
        let mut eta = Vec::with_capacity(self.lits.len());
        for c in 0..self.num_clauses() {
            let range = self.starts[c]..self.starts[c + 1];
            let satisfied =
                self.lits[range.clone()].iter().any(|&code| values[(code >> 1) as usize] == Some(code & 1 == 0));
            if satisfied {
                continue;
            }
            for e in range {
                if values[(self.lits[e] >> 1) as usize].is_none() {
                    lits.push(self.lits[e]);
                    eta.push(self.eta[e]);
                }
            }
            starts.push(lits.len());
        }
        (self.starts, self.lits, self.eta) = (starts, lits, eta);
    }

    /// Sweeps until no survey changes by `epsilon`: the sweeps made, or with them why not.
    fn converge(
        &mut self,
        products: &mut Products,
        options: &SpOptions,
        rng: &mut Xoshiro256PlusPlus,
    ) -> std::result::Result<usize, (usize, SpStatus)> {
        let mut order: Vec<u32> = (0..self.num_clauses() as u32).collect();
        let mut ratios = Vec::new();
        for sweep in 1..=options.max_iterations {
            // Recomputed each sweep, so the rounding of many divisions does not build up.
            products.reset();
            for (&code, &eta) in self.lits.iter().zip(&self.eta) {
                products.add(code, eta);
            }
            for i in (1..order.len()).rev() {
                order.swap(i, rng.random_range(0..=i));
            }
            let mut max_change: f64 = 0.0;
            for &a in &order {
                let range = self.starts[a as usize]..self.starts[a as usize + 1];
                ratios.clear();
                for e in range.clone() {
                    let (code, eta) = (self.lits[e], self.eta[e]);
                    let (side, v) = ((code & 1) as usize, (code >> 1) as usize);
                    // The product over the same side without this edge's own factor.
                    let (mut same, mut zeros) = (products.product[side][v], products.zeros[side][v]);
                    if 1.0 - eta < ZERO {
                        zeros -= 1;
                    } else {
                        same /= 1.0 - eta;
                    }
                    let same = if zeros > 0 { 0.0 } else { same };
                    let opposite = products.full(side ^ 1, v);
                    let pi_u = (1.0 - opposite) * same;
                    let pi_s = (1.0 - same) * opposite;
                    let pi_0 = same * opposite;
                    let total = pi_u + pi_s + pi_0;
                    if total <= 0.0 {
                        // Warned both ways by other clauses.
                        return Err((sweep, SpStatus::Contradiction));
                    }
                    ratios.push(pi_u / total);
                }
                // eta[a -> i]: the product of the other ratios, from prefix and suffix products.
                let k = ratios.len();
                let mut prefix = 1.0;
                let mut fresh = [0.0f64; 8];
                let mut fresh_vec = Vec::new();
                let out: &mut [f64] = if k <= fresh.len() {
                    &mut fresh[..k]
                } else {
                    fresh_vec.resize(k, 0.0);
                    &mut fresh_vec
                };
                for (slot, &r) in out.iter_mut().zip(&ratios) {
                    *slot = prefix;
                    prefix *= r;
                }
                let mut suffix = 1.0;
                for (slot, &r) in out.iter_mut().zip(&ratios).rev() {
                    *slot *= suffix;
                    suffix *= r;
                }
                for (e, &new) in range.zip(out.iter()) {
                    let (code, old) = (self.lits[e], self.eta[e]);
                    max_change = max_change.max((new - old).abs());
                    products.remove(code, old);
                    products.add(code, new);
                    self.eta[e] = new;
                }
            }
            if max_change < options.epsilon {
                return Ok(sweep);
            }
        }
        Err((options.max_iterations, SpStatus::NotConverged))
    }

    /// Fixes the most biased `fraction` of the variables still in the formula (at least one)
    /// to their favoured values; returns how many, or `None` if some variable is forced both
    /// ways. Needs `index` and converged surveys.
    fn decimate(&self, products: &mut Products, values: &mut [Option<bool>], fraction: f64) -> Option<usize> {
        products.reset();
        for (&code, &eta) in self.lits.iter().zip(&self.eta) {
            products.add(code, eta);
        }
        // (bias |W+ - W-|, variable, favoured value) of the variables with edges.
        let mut biased: Vec<(f64, u32, bool)> = Vec::new();
        for v in 0..values.len() {
            if self.var_starts[v] == self.var_starts[v + 1] {
                continue;
            }
            let (plus, minus) = (products.full(0, v), products.full(1, v));
            let pi_plus = (1.0 - plus) * minus;
            let pi_minus = (1.0 - minus) * plus;
            let total = pi_plus + pi_minus + plus * minus;
            if total <= 0.0 {
                return None;
            }
            let (w_plus, w_minus) = (pi_plus / total, pi_minus / total);
            biased.push(((w_plus - w_minus).abs(), v as u32, w_plus > w_minus));
        }
        let count = ((fraction * biased.len() as f64).ceil() as usize).clamp(1, biased.len().max(1));
        let by_bias = |a: &(f64, u32, bool), b: &(f64, u32, bool)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
        if count < biased.len() {
            biased.select_nth_unstable_by(count, by_bias);
        }
        for &(_, v, value) in biased.iter().take(count) {
            values[v as usize] = Some(value);
        }
        Some(count.min(biased.len()))
    }

    /// What is left, as a formula over the original variables.
    fn formula(&self, n: usize) -> Formula {
        let literals =
            self.lits.iter().map(|&code| ((code >> 1) + 1) as i32 * if code & 1 == 1 { -1 } else { 1 }).collect();
        Formula::from_flat_unchecked(n, literals, self.starts.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random_ksat;

    #[test]
    fn random_3sat_at_ratio_4_is_solved() {
        for seed in 0..3 {
            let f = random_ksat(2000, 4.0, 3, seed).unwrap();
            let outcome = survey_propagation(&f, &SpOptions { seed, ..SpOptions::default() }).unwrap();
            assert_eq!(outcome.status, SpStatus::Satisfied, "seed {seed}: {outcome:?}");
            let a = outcome.assignment.as_ref().unwrap();
            assert!(check(&f, a).is_satisfied());
            assert!(a.is_complete());
            // At ratio 4.0 the surveys are not trivial: decimation does part of the work.
            assert!(outcome.fixed_by_sp > 0 && outcome.decimation_steps > 0, "{outcome:?}");
            assert!(outcome.walksat_clauses < f.num_clauses());
        }
    }

    #[test]
    fn easy_formulas_have_trivial_surveys() {
        let f = random_ksat(500, 2.0, 3, 1).unwrap();
        let outcome = survey_propagation(&f, &SpOptions::default()).unwrap();
        assert!(outcome.is_satisfied());
        assert_eq!(outcome.fixed_by_sp, 0);
        assert_eq!(outcome.walksat_clauses, f.num_clauses());
    }

    #[test]
    fn unsatisfiable_formulas_are_reported_honestly() {
        let all8: Vec<Vec<i32>> =
            (0..8).map(|bits| (1..=3).map(|v| if bits >> (v - 1) & 1 == 1 { -v } else { v }).collect()).collect();
        let options = SpOptions { walksat_max_flips: 10_000, ..SpOptions::default() };
        let outcome = survey_propagation(&Formula::new(3, &all8).unwrap(), &options).unwrap();
        assert!(!outcome.is_satisfied());
        assert!(outcome.assignment.is_none());
        assert!(matches!(outcome.status, SpStatus::Contradiction | SpStatus::WalkSatFailed), "{outcome:?}");

        let empty = Formula::new(2, [vec![1, 2], vec![]]).unwrap();
        let outcome = survey_propagation(&empty, &options).unwrap();
        assert_eq!((outcome.status, outcome.iterations), (SpStatus::Contradiction, 0));

        // Unit propagation alone finds the conflict.
        let units = Formula::new(3, [vec![1], vec![-1, 2], vec![-2, 3], vec![-3, -1]]).unwrap();
        let outcome = survey_propagation(&units, &options).unwrap();
        assert_eq!(outcome.status, SpStatus::Contradiction);
        assert!(outcome.assignment.is_none());
    }

    #[test]
    fn unit_propagation_can_solve_alone() {
        let f = Formula::new(4, [vec![1], vec![-1, 2], vec![-2, 3, 3], vec![4, -4], vec![-3, 1]]).unwrap();
        let outcome = survey_propagation(&f, &SpOptions::default()).unwrap();
        assert!(outcome.is_satisfied());
        assert_eq!((outcome.fixed_by_propagation, outcome.fixed_by_sp, outcome.iterations), (3, 0, 0));
        let a = outcome.assignment.unwrap();
        assert!(check(&f, &a).is_satisfied());
        assert_eq!(&a.values()[..3], [Some(true); 3]);
        assert!(survey_propagation(&Formula::default(), &SpOptions::default()).unwrap().is_satisfied());
    }

    #[test]
    fn the_same_seed_gives_the_same_run_and_options_are_checked() {
        let f = random_ksat(300, 4.0, 3, 8).unwrap();
        let options = SpOptions { seed: 5, fix_fraction: 0.05, ..SpOptions::default() };
        let a = survey_propagation(&f, &options).unwrap();
        let b = survey_propagation(&f, &options).unwrap();
        assert_eq!(
            (a.status, a.iterations, a.fixed_by_sp, a.walksat_flips),
            (b.status, b.iterations, b.fixed_by_sp, b.walksat_flips)
        );
        assert_eq!(a.assignment, b.assignment);
        for bad in [
            SpOptions { epsilon: 0.0, ..SpOptions::default() },
            SpOptions { fix_fraction: 0.0, ..SpOptions::default() },
            SpOptions { fix_fraction: 1.5, ..SpOptions::default() },
            SpOptions { trivial: f64::NAN, ..SpOptions::default() },
            SpOptions { max_iterations: 0, ..SpOptions::default() },
            SpOptions { walksat_noise: -0.1, ..SpOptions::default() },
        ] {
            assert!(survey_propagation(&f, &bad).is_err());
        }
    }

    #[test]
    fn surveys_satisfy_their_equations_after_convergence() {
        let f = random_ksat(300, 4.1, 3, 2).unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let mut work = Work::new(&f, &mut rng).unwrap();
        work.index(300);
        let mut products = Products::new(300);
        let options = SpOptions { epsilon: 1e-9, max_iterations: 5000, ..SpOptions::default() };
        work.converge(&mut products, &options, &mut rng).unwrap();
        // Recompute one survey from the definition, by brute force over the other clauses.
        let mut nontrivial = 0;
        for a in 0..work.num_clauses() {
            for e in work.starts[a]..work.starts[a + 1] {
                let mut expected = 1.0;
                for other in work.starts[a]..work.starts[a + 1] {
                    if other == e {
                        continue;
                    }
                    let code = work.lits[other];
                    let (mut same, mut opposite) = (1.0, 1.0);
                    for b in 0..work.num_clauses() {
                        if b == a {
                            continue;
                        }
                        for x in work.starts[b]..work.starts[b + 1] {
                            if work.lits[x] == code {
                                same *= 1.0 - work.eta[x];
                            } else if work.lits[x] == code ^ 1 {
                                opposite *= 1.0 - work.eta[x];
                            }
                        }
                    }
                    let pi_u = (1.0 - opposite) * same;
                    expected *= pi_u / (pi_u + (1.0 - same) * opposite + same * opposite);
                }
                assert!((work.eta[e] - expected).abs() < 1e-6, "{} vs {expected}", work.eta[e]);
                nontrivial += usize::from(expected > 0.01);
            }
        }
        assert!(nontrivial > 0);
    }
}
