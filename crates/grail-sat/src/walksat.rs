//! WalkSAT local search with the break-count heuristic: survey propagation's finishing step
//! once the surveys are trivial, and a baseline to compare it with.
//!
//! Each step picks an unsatisfied clause at random. A variable of it whose flip breaks no
//! satisfied clause is flipped if there is one; otherwise, with probability `noise`, a random
//! variable of the clause, else the one that breaks the fewest (ties broken at random).
//!
//! Everything a step needs is kept up to date as variables flip, so a step costs the
//! occurrences of the flipped variable and not a scan of the formula: per-literal occurrence
//! lists, per clause the number of true literals and the XOR of the variables making them
//! true (which names the one variable when exactly one literal is true), per variable its
//! break count (clauses it alone satisfies), and the unsatisfied clauses in a list with each
//! one's position, for removal in constant time.

use std::sync::atomic::{AtomicBool, Ordering};

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::{Assignment, Formula, Result, SatError, check};

/// How a step chooses the variable to flip in its unsatisfied clause.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PickRule {
    /// WalkSAT's: a variable that breaks nothing if there is one; else, with probability
    /// `noise`, a random one, otherwise the one that breaks the fewest.
    #[default]
    WalkSat,
    /// probSAT's: each variable with probability proportional to f(breaks), where f falls with
    /// the number of clauses the flip would break: polynomially for clauses of up to 3
    /// literals (`(1 + b)^-2.38`), exponentially for longer ones (`c^-b`, c from 3.0 for 4
    /// literals to 5.4 for 7 and more), the published settings. No noise: the distribution is
    /// the randomness.
    ProbSat,
}

/// How [`walksat`] searches.
#[derive(Clone, Copy, Debug)]
pub struct WalkSatOptions<'a> {
    /// Flips before giving up.
    pub max_flips: u64,
    /// Probability of a random-walk move when every variable of the clause breaks something,
    /// in `[0, 1]`; 0.5 is the classic setting, near the best for random 3-SAT.
    pub noise: f64,
    /// Seed of the search's random choices: the same seed gives the same search.
    pub seed: u64,
    /// Starting values (for the formula's number of variables); unassigned variables, and all
    /// of them without a start, begin at random.
    pub start: Option<&'a Assignment>,
    /// How a step picks its variable (`noise` applies to [`PickRule::WalkSat`] only).
    pub rule: PickRule,
}

impl Default for WalkSatOptions<'_> {
    fn default() -> Self {
        WalkSatOptions { max_flips: 100_000_000, noise: 0.5, seed: 0, start: None, rule: PickRule::WalkSat }
    }
}

/// What a search ended with.
#[derive(Clone, Debug)]
pub struct WalkSatOutcome {
    /// A complete assignment satisfying the formula, checked by [`check`]; `None` if none was
    /// found within `max_flips` (which does not prove the formula unsatisfiable, except when
    /// it has an empty clause).
    pub assignment: Option<Assignment>,
    /// Flips made.
    pub flips: u64,
    /// Clauses unsatisfied when the search stopped.
    pub unsatisfied: usize,
}

/// Searches for an assignment satisfying `formula`; `Ok(None)` if none was found within
/// `options.max_flips`. Errors are for options out of range, never for an unlucky search.
pub fn walksat(formula: &Formula, options: &WalkSatOptions) -> Result<Option<Assignment>> {
    walksat_outcome(formula, options).map(|outcome| outcome.assignment)
}

/// A WalkSAT noise suited to `formula`'s longest clause: 0.5 for 3-SAT, 0.4 for 4-SAT and 0.3
/// from 5 literals on. Longer clauses break less often when flipped, so fewer random steps
/// serve: on random 5-SAT of 5,000 variables at ratio 16 (where the surveys are trivial and
/// WalkSAT does everything) 0.3 finds an assignment in about 35,000 flips and 0.5 none in 10^8.
pub fn suggested_noise(formula: &Formula) -> f64 {
    match formula.clauses().map(<[i32]>::len).max().unwrap_or(0) {
        0..=3 => 0.5,
        4 => 0.4,
        _ => 0.3,
    }
}

/// [`walksat`], with the number of flips it made.
pub fn walksat_outcome(formula: &Formula, options: &WalkSatOptions) -> Result<WalkSatOutcome> {
    walksat_portfolio(formula, options, 1)
}

/// `searches` independent searches at once, one per thread, from the seeds `options.seed`,
/// `options.seed + 1`, ...: the first to satisfy the formula stops the others. WalkSAT's run
/// times vary widely from seed to seed, so the fastest of several is much faster than one on
/// average; which assignment comes back depends on which search finishes first. `flips` is the
/// winner's (or, when none succeeds, the first search's).
pub fn walksat_portfolio(formula: &Formula, options: &WalkSatOptions, searches: usize) -> Result<WalkSatOutcome> {
    if !(0.0..=1.0).contains(&options.noise) {
        return Err(SatError::Invalid(format!("WalkSAT noise {}: expected a probability in [0, 1]", options.noise)));
    }
    if let Some(start) = options.start
        && start.num_vars() != formula.num_vars()
    {
        return Err(SatError::Invalid(format!(
            "the starting assignment has {} variables, the formula {}",
            start.num_vars(),
            formula.num_vars()
        )));
    }
    let Some(instance) = Instance::new(formula)? else {
        // An empty clause: nothing satisfies it.
        return Ok(WalkSatOutcome { assignment: None, flips: 0, unsatisfied: formula.num_clauses() });
    };
    let stop = AtomicBool::new(false);
    let search = |i: usize| {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(options.seed.wrapping_add(i as u64));
        let values: Vec<bool> = (0..formula.num_vars())
            .map(|v| options.start.and_then(|s| s.values()[v]).unwrap_or_else(|| rng.random()))
            .collect();
        let mut search = Search::new(&instance, values);
        let flips = match options.rule {
            PickRule::WalkSat => search.run(options.max_flips, options.noise, &mut rng, &stop),
            PickRule::ProbSat => search.run_probsat(options.max_flips, &mut rng, &stop),
        };
        if search.unsat.is_empty() {
            stop.store(true, Ordering::Relaxed);
        }
        (search.unsat.len(), flips, search.values)
    };
    let (unsatisfied, flips, values) = if searches <= 1 {
        search(0)
    } else {
        let done: Vec<_> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..searches).map(|i| scope.spawn(move || search(i))).collect();
            workers.into_iter().map(|w| w.join().expect("a WalkSAT search")).collect()
        });
        let winner = done.iter().position(|(unsat, _, _)| *unsat == 0).unwrap_or(0);
        done.into_iter().nth(winner).expect("at least one search")
    };
    if unsatisfied != 0 {
        return Ok(WalkSatOutcome { assignment: None, flips, unsatisfied });
    }
    let assignment = Assignment::from_values(values.into_iter().map(Some).collect());
    let report = check(formula, &assignment);
    if !report.is_satisfied() {
        return Err(SatError::Invalid(format!("internal error: WalkSAT's assignment fails the verifier: {report}")));
    }
    Ok(WalkSatOutcome { assignment: Some(assignment), flips, unsatisfied: 0 })
}

/// The formula as the search reads it: literal `v` of variable index `i = |v| - 1` is code
/// `2i` (positive) or `2i + 1` (negative). Duplicate literals are merged and tautologies
/// dropped (they are satisfied whatever the values), so a variable occurs at most once in a
/// clause, which the XOR bookkeeping needs.
struct Instance {
    /// Offsets are `u32` (the literals are fewer than 2^32): half the memory traffic of `usize`.
    clause_starts: Vec<u32>,
    clause_lits: Vec<u32>,
    /// `2 * num_vars + 1` offsets into `occurrences`, per literal code.
    occ_starts: Vec<u32>,
    occurrences: Vec<u32>,
}

impl Instance {
    /// `None` if the formula has an empty clause.
    fn new(formula: &Formula) -> Result<Option<Instance>> {
        if formula.num_literals() >= u32::MAX as usize {
            return Err(SatError::Invalid(format!(
                "{} literals: WalkSAT handles fewer than 2^32",
                formula.num_literals()
            )));
        }
        let code = |l: i32| 2 * (l.unsigned_abs() - 1) + u32::from(l < 0);
        let mut clause_starts = Vec::with_capacity(formula.num_clauses() + 1);
        clause_starts.push(0);
        let mut clause_lits = Vec::with_capacity(formula.num_literals());
        let mut counts = vec![0u32; 2 * formula.num_vars() + 1];
        for clause in formula.clauses() {
            if clause.is_empty() {
                return Ok(None);
            }
            let start = clause_lits.len();
            if !crate::push_cleaned(&mut clause_lits, clause.iter().map(|&l| code(l)), |c| c ^ 1) {
                continue;
            }
            for &c in &clause_lits[start..] {
                counts[c as usize + 1] += 1;
            }
            clause_starts.push(clause_lits.len() as u32);
        }
        for i in 1..counts.len() {
            counts[i] += counts[i - 1];
        }
        let occ_starts = counts.clone();
        let mut next = counts;
        let mut occurrences = vec![0u32; clause_lits.len()];
        for c in 0..clause_starts.len() - 1 {
            for &l in &clause_lits[clause_starts[c] as usize..clause_starts[c + 1] as usize] {
                occurrences[next[l as usize] as usize] = c as u32;
                next[l as usize] += 1;
            }
        }
        Ok(Some(Instance { clause_starts, clause_lits, occ_starts, occurrences }))
    }

    fn num_clauses(&self) -> usize {
        self.clause_starts.len() - 1
    }

    fn clause(&self, c: usize) -> &[u32] {
        &self.clause_lits[self.clause_starts[c] as usize..self.clause_starts[c + 1] as usize]
    }

    fn longest_clause(&self) -> usize {
        self.clause_starts.windows(2).map(|w| (w[1] - w[0]) as usize).max().unwrap_or(0)
    }

    fn occurrences(&self, code: u32) -> &[u32] {
        let code = code as usize;
        &self.occurrences[self.occ_starts[code] as usize..self.occ_starts[code + 1] as usize]
    }
}

const NOT_LISTED: u32 = u32::MAX;

/// A clause's number of true literals, and the XOR of the indices of the variables making them
/// true: when the count is 1, the XOR is the one variable whose flip would break the clause.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Trues {
    count: u32,
    xor: u32,
}

struct Search<'a> {
    instance: &'a Instance,
    values: Vec<bool>,
    /// Per clause, side by side so that a flip touches one cache line per clause.
    trues: Vec<Trues>,
    breaks: Vec<u32>,
    unsat: Vec<u32>,
    /// Position of each clause in `unsat`, `NOT_LISTED` if satisfied.
    position: Vec<u32>,
}

impl<'a> Search<'a> {
    fn new(instance: &'a Instance, values: Vec<bool>) -> Search<'a> {
        let m = instance.num_clauses();
        let mut search = Search {
            instance,
            trues: vec![Trues::default(); m],
            breaks: vec![0; values.len()],
            values,
            unsat: Vec::new(),
            position: vec![NOT_LISTED; m],
        };
        for c in 0..m {
            for &l in instance.clause(c) {
                if search.is_true(l) {
                    search.trues[c].count += 1;
                    search.trues[c].xor ^= l >> 1;
                }
            }
            match search.trues[c] {
                Trues { count: 0, .. } => search.list(c as u32),
                Trues { count: 1, xor } => search.breaks[xor as usize] += 1,
                _ => {}
            }
        }
        search
    }

    fn is_true(&self, code: u32) -> bool {
        self.values[(code >> 1) as usize] != (code & 1 == 1)
    }

    fn list(&mut self, c: u32) {
        self.position[c as usize] = self.unsat.len() as u32;
        self.unsat.push(c);
    }

    fn unlist(&mut self, c: u32) {
        let at = self.position[c as usize];
        let last = self.unsat.pop().unwrap_or(c);
        if last != c {
            self.unsat[at as usize] = last;
            self.position[last as usize] = at;
        }
        self.position[c as usize] = NOT_LISTED;
    }

    /// Flips variable index `v`, keeping every count current.
    fn flip(&mut self, v: u32) {
        let instance = self.instance;
        let was_true = 2 * v + u32::from(!self.values[v as usize]);
        let now_true = was_true ^ 1;
        self.values[v as usize] = !self.values[v as usize];
        for &c in instance.occurrences(now_true) {
            let c = c as usize;
            let Trues { count, xor } = self.trues[c];
            match count {
                0 => {
                    self.unlist(c as u32);
                    self.breaks[v as usize] += 1;
                }
                1 => self.breaks[xor as usize] -= 1,
                _ => {}
            }
            self.trues[c] = Trues { count: count + 1, xor: xor ^ v };
        }
        for &c in instance.occurrences(was_true) {
            let c = c as usize;
            let Trues { count, xor } = self.trues[c];
            let (count, xor) = (count - 1, xor ^ v);
            self.trues[c] = Trues { count, xor };
            match count {
                0 => {
                    self.list(c as u32);
                    self.breaks[v as usize] -= 1;
                }
                1 => self.breaks[xor as usize] += 1,
                _ => {}
            }
        }
    }

    /// Steps until the formula is satisfied, `max_flips` were made, or `stop` is set (checked
    /// every 4,096 flips: another search of a portfolio won); returns the flips made. Each step
    /// takes an unsatisfied clause at random and flips the variable `pick` chooses in it (from
    /// the clause's literal codes and the break counts).
    fn walk(
        &mut self,
        max_flips: u64,
        rng: &mut Xoshiro256PlusPlus,
        stop: &AtomicBool,
        mut pick: impl FnMut(&[u32], &[u32], &mut Xoshiro256PlusPlus) -> u32,
    ) -> u64 {
        let instance = self.instance;
        let mut flips = 0;
        while flips < max_flips && !self.unsat.is_empty() {
            if flips % 4096 == 0 && stop.load(Ordering::Relaxed) {
                break;
            }
            let c = self.unsat[rng.random_range(0..self.unsat.len())] as usize;
            let chosen = pick(instance.clause(c), &self.breaks, rng);
            self.flip(chosen);
            flips += 1;
        }
        flips
    }

    /// probSAT's steps (see [`PickRule::ProbSat`]).
    fn run_probsat(&mut self, max_flips: u64, rng: &mut Xoshiro256PlusPlus, stop: &AtomicBool) -> u64 {
        const TABLE: usize = 64;
        let k = self.instance.longest_clause();
        let weight: Vec<f64> = (0..TABLE)
            .map(|b| {
                let b = b as f64;
                match k {
                    0..=3 => (1.0 + b).powf(-2.38),
                    4 => 3.0f64.powf(-b),
                    5 => 3.7f64.powf(-b),
                    6 => 5.1f64.powf(-b),
                    _ => 5.4f64.powf(-b),
                }
            })
            .collect();
        let mut cumulative = Vec::with_capacity(k);
        self.walk(max_flips, rng, stop, |clause, breaks, rng| {
            cumulative.clear();
            let mut sum = 0.0;
            for &l in clause {
                sum += weight[(breaks[(l >> 1) as usize] as usize).min(TABLE - 1)];
                cumulative.push(sum);
            }
            let r = rng.random::<f64>() * sum;
            let at = cumulative.iter().position(|&c| r < c).unwrap_or(clause.len() - 1);
            clause[at] >> 1
        })
    }

    /// WalkSAT's steps: a variable that breaks nothing, else with probability `noise` a random
    /// one, otherwise the one that breaks the fewest (ties broken at random).
    fn run(&mut self, max_flips: u64, noise: f64, rng: &mut Xoshiro256PlusPlus, stop: &AtomicBool) -> u64 {
        self.walk(max_flips, rng, stop, |clause, breaks, rng| {
            let mut best = u32::MAX;
            let mut chosen = 0;
            let mut ties = 0;
            for &l in clause {
                let b = breaks[(l >> 1) as usize];
                if b < best {
                    (best, chosen, ties) = (b, l >> 1, 1);
                } else if b == best {
                    ties += 1;
                    if rng.random_range(0..ties) == 0 {
                        chosen = l >> 1;
                    }
                }
            }
            if best > 0 && rng.random::<f64>() < noise {
                chosen = clause[rng.random_range(0..clause.len())] >> 1;
            }
            chosen
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random_ksat;

    #[test]
    fn probsat_solves_random_formulas_of_every_clause_length() {
        // Below each threshold (3-SAT 4.27, 4-SAT 9.93, 5-SAT 21.1, 6-SAT 43.4): each table of
        // the rule, a portfolio and a single search, every assignment verified.
        for (k, ratio, vars) in [(3, 4.0, 3_000), (4, 8.5, 1_000), (5, 16.0, 600), (6, 32.0, 300)] {
            for seed in 0..2 {
                let f = random_ksat(vars, ratio, k, seed).unwrap();
                let options = WalkSatOptions {
                    max_flips: 50_000_000,
                    seed,
                    rule: PickRule::ProbSat,
                    ..WalkSatOptions::default()
                };
                let outcome = walksat_portfolio(&f, &options, 1 + seed as usize).unwrap();
                let a = outcome.assignment.unwrap_or_else(|| panic!("random {k}-SAT at {ratio}, seed {seed}"));
                assert!(check(&f, &a).is_satisfied() && a.is_complete());
            }
        }
        // Unsatisfiable: it runs out of flips and says so.
        let contradiction = Formula::new(2, vec![vec![1, 2], vec![-1, 2], vec![1, -2], vec![-1, -2]]).unwrap();
        let options = WalkSatOptions { max_flips: 10_000, rule: PickRule::ProbSat, ..WalkSatOptions::default() };
        let outcome = walksat_outcome(&contradiction, &options).unwrap();
        assert!(outcome.assignment.is_none() && outcome.unsatisfied == 1 && outcome.flips == 10_000);
    }

    #[test]
    fn a_portfolio_of_searches_finds_a_verified_assignment_and_stops_the_rest() {
        for seed in 0..4 {
            let f = random_ksat(2_000, 4.0, 3, seed).unwrap();
            let options = WalkSatOptions { max_flips: 50_000_000, seed, ..WalkSatOptions::default() };
            let outcome = walksat_portfolio(&f, &options, 4).unwrap();
            let a = outcome.assignment.expect("random 3-SAT at ratio 4.0 is solved");
            assert!(check(&f, &a).is_satisfied() && a.is_complete());
            assert!(outcome.flips > 0);
        }
        // Nothing to find: every search runs out, and none is reported as a success.
        let contradiction = Formula::new(1, vec![vec![1], vec![-1]]).unwrap();
        let options = WalkSatOptions { max_flips: 10_000, ..WalkSatOptions::default() };
        let outcome = walksat_portfolio(&contradiction, &options, 3).unwrap();
        assert!(outcome.assignment.is_none() && outcome.unsatisfied == 1);
    }

    #[test]
    fn random_3sat_below_the_threshold_is_solved() {
        for seed in 0..5 {
            let f = random_ksat(300, 3.5, 3, seed).unwrap();
            let options = WalkSatOptions { max_flips: 2_000_000, seed, ..WalkSatOptions::default() };
            let outcome = walksat_outcome(&f, &options).unwrap();
            let a = outcome.assignment.expect("random 3-SAT at ratio 3.5 is solved");
            assert!(check(&f, &a).is_satisfied());
            assert!(a.is_complete());
            // The same seed, the same search.
            let again = walksat_outcome(&f, &options).unwrap();
            assert_eq!((again.flips, again.assignment), (outcome.flips, Some(a)));
        }
    }

    #[test]
    fn unsatisfiable_formulas_give_none() {
        // All 8 clauses over 3 variables: every assignment falsifies one.
        let clauses: Vec<Vec<i32>> =
            (0..8).map(|bits| (1..=3).map(|v| if bits >> (v - 1) & 1 == 1 { -v } else { v }).collect()).collect();
        let f = Formula::new(3, &clauses).unwrap();
        let outcome = walksat_outcome(&f, &WalkSatOptions { max_flips: 10_000, ..WalkSatOptions::default() }).unwrap();
        assert!(outcome.assignment.is_none());
        assert_eq!(outcome.flips, 10_000);
        assert_eq!(outcome.unsatisfied, 1);
        let empty = Formula::new(2, [vec![1, 2], vec![]]).unwrap();
        assert_eq!(walksat(&empty, &WalkSatOptions::default()).unwrap(), None);
    }

    #[test]
    fn duplicates_tautologies_and_unused_variables() {
        let f = Formula::new(5, [vec![1, 1, -2], vec![3, -3], vec![-1, -1], vec![2, 4, 2]]).unwrap();
        for seed in 0..10 {
            let a = walksat(&f, &WalkSatOptions { seed, ..WalkSatOptions::default() }).unwrap().unwrap();
            assert!(check(&f, &a).is_satisfied());
            assert!(a.is_complete());
        }
        assert!(
            walksat(&Formula::new(0, Vec::<Vec<i32>>::new()).unwrap(), &WalkSatOptions::default()).unwrap().is_some()
        );
    }

    #[test]
    fn a_satisfying_start_needs_no_flips_and_options_are_checked() {
        let f = random_ksat(200, 3.0, 3, 9).unwrap();
        let a = walksat(&f, &WalkSatOptions::default()).unwrap().unwrap();
        let outcome = walksat_outcome(&f, &WalkSatOptions { start: Some(&a), ..WalkSatOptions::default() }).unwrap();
        assert_eq!(outcome.flips, 0);
        assert_eq!(outcome.assignment, Some(a));
        assert!(walksat(&f, &WalkSatOptions { noise: 1.5, ..WalkSatOptions::default() }).is_err());
        assert!(walksat(&f, &WalkSatOptions { noise: f64::NAN, ..WalkSatOptions::default() }).is_err());
        let short = Assignment::new(10);
        assert!(walksat(&f, &WalkSatOptions { start: Some(&short), ..WalkSatOptions::default() }).is_err());
        // Pure random walk solves an easy formula; pure greed at least returns only verified answers.
        let easy = random_ksat(200, 2.0, 3, 9).unwrap();
        let a = walksat(&easy, &WalkSatOptions { noise: 1.0, ..WalkSatOptions::default() }).unwrap().unwrap();
        assert!(check(&easy, &a).is_satisfied());
        let greedy = WalkSatOptions { noise: 0.0, max_flips: 10_000, ..WalkSatOptions::default() };
        if let Some(a) = walksat(&easy, &greedy).unwrap() {
            assert!(check(&easy, &a).is_satisfied());
        }
    }

    #[test]
    fn counts_stay_consistent_with_a_recount() {
        let f = random_ksat(60, 4.5, 3, 5).unwrap();
        let instance = Instance::new(&f).unwrap().unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let values: Vec<bool> = (0..60).map(|_| rng.random()).collect();
        let mut search = Search::new(&instance, values);
        for _ in 0..500 {
            search.run(1, 0.5, &mut rng, &AtomicBool::new(false));
            let fresh = Search::new(&instance, search.values.clone());
            assert_eq!(search.trues, fresh.trues);
            assert_eq!(search.breaks, fresh.breaks);
            let mut listed = search.unsat.clone();
            listed.sort_unstable();
            let mut expected = fresh.unsat.clone();
            expected.sort_unstable();
            assert_eq!(listed, expected);
            for (i, &c) in search.unsat.iter().enumerate() {
                assert_eq!(search.position[c as usize], i as u32);
            }
        }
    }
}
