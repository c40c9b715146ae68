//! Survey propagation by the grail program (`sp.grail`) on the CPU: random k-SAT formulas
//! solved with their assignments checked clause by clause, surveys that do the work near the
//! threshold, honest failures on unsatisfiable formulas, and formulas with units, repeated
//! literals and tautologies.

use grail_algos::Target;
use grail_algos::sp::{ClauseOrder, Options, solve};
use grail_ir::OptConfig;
use grail_sat::{Formula, SpOptions, SpStatus, check, random_ksat};

/// One thread with no optimization (no outlined region), more with every one.
fn options(seed: u64, threads: usize) -> Options {
    let opt = if threads == 1 { OptConfig::NONE } else { OptConfig::all() };
    Options { target: Target::Cpu, threads, opt, sp: SpOptions { seed, ..SpOptions::default() }, ..Options::default() }
}

#[test]
fn random_3sat_near_the_threshold_is_solved_with_the_surveys_doing_work() {
    for seed in 0..3 {
        let formula = random_ksat(3000, 4.0, 3, seed).unwrap();
        let solved = solve(&formula, &options(seed, 1 + seed as usize % 3)).unwrap();
        let outcome = &solved.outcome;
        assert_eq!(outcome.status, SpStatus::Satisfied, "seed {seed}: {outcome:?}");
        assert!(check(&formula, outcome.assignment.as_ref().unwrap()).is_satisfied());
        assert!(outcome.fixed_by_sp > 0 && outcome.decimation_steps > 0, "seed {seed}: {outcome:?}");
        assert!(outcome.walksat_clauses < formula.num_clauses(), "{outcome:?}");
    }
}

#[test]
fn k_from_4_to_6_and_easy_formulas() {
    for (k, ratio) in [(4, 8.0), (5, 16.0), (6, 30.0)] {
        let formula = random_ksat(800, ratio, k, k as u64).unwrap();
        let outcome = solve(&formula, &options(1, 2)).unwrap().outcome;
        assert_eq!(outcome.status, SpStatus::Satisfied, "k {k}: {outcome:?}");
        assert!(check(&formula, outcome.assignment.as_ref().unwrap()).is_satisfied());
    }
    // Far below the threshold the surveys are trivial at once: WalkSAT does everything.
    let easy = random_ksat(500, 2.0, 3, 1).unwrap();
    let outcome = solve(&easy, &options(0, 2)).unwrap().outcome;
    assert!(outcome.is_satisfied());
    assert_eq!((outcome.fixed_by_sp, outcome.decimation_steps), (0, 0));
}

/// Both layouts of the factor graph solve the same formulas: the clauses as read and in
/// variable order (a different run, the same formula), with clauses of 3 and of 6 literals
/// (whose default orders differ).
#[test]
fn either_clause_order_solves_the_formula() {
    for (k, ratio) in [(3, 4.0), (6, 30.0)] {
        let formula = random_ksat(1500, ratio, k, 11).unwrap();
        for order in [ClauseOrder::Read, ClauseOrder::Variable] {
            let options = Options { clause_order: Some(order), ..options(2, 2) };
            let outcome = solve(&formula, &options).unwrap().outcome;
            assert_eq!(outcome.status, SpStatus::Satisfied, "k {k}, {order:?}: {outcome:?}");
            assert!(check(&formula, outcome.assignment.as_ref().unwrap()).is_satisfied());
        }
    }
}

/// Small formulas this near the threshold often keep the surveys from converging (updating
/// every clause at once oscillates); what decimation left then goes to WalkSAT.
#[test]
fn what_is_left_when_the_surveys_stop_converging_goes_to_walksat() {
    let mut rescued = 0;
    for seed in [3, 5, 6] {
        let formula = random_ksat(256, 4.0, 3, seed).unwrap();
        let outcome = solve(&formula, &options(1, 2)).unwrap().outcome;
        assert_eq!(outcome.status, SpStatus::Satisfied, "seed {seed}: {outcome:?}");
        assert!(check(&formula, outcome.assignment.as_ref().unwrap()).is_satisfied());
        rescued += usize::from(!outcome.converged);
    }
    assert!(rescued > 0, "no formula exercised the path");
}

#[test]
fn units_repeats_and_tautologies_are_handled_and_contradictions_reported() {
    // x1; (-x1 or x2); (x2 or x2 or -x3); (x3 or -x3); (-x2 or x3 or x4)
    let formula = Formula::new(4, [vec![1], vec![-1, 2], vec![2, 2, -3], vec![3, -3], vec![-2, 3, 4]]).unwrap();
    let outcome = solve(&formula, &options(0, 1)).unwrap().outcome;
    assert!(outcome.is_satisfied(), "{outcome:?}");
    let assignment = outcome.assignment.unwrap();
    assert_eq!((assignment.value(1), assignment.value(2)), (Some(true), Some(true)));
    assert!(outcome.fixed_by_propagation >= 2);
    // Every assignment of three variables is excluded: unit propagation or WalkSAT fails, and
    // no assignment is claimed.
    let all8: Vec<Vec<i32>> =
        (0..8).map(|bits| (1..=3).map(|v| if bits >> (v - 1) & 1 == 1 { -v } else { v }).collect()).collect();
    let unsat = Formula::new(3, all8).unwrap();
    let mut opts = options(0, 1);
    opts.sp.walksat_max_flips = 10_000;
    let outcome = solve(&unsat, &opts).unwrap().outcome;
    assert!(!outcome.is_satisfied() && outcome.assignment.is_none(), "{outcome:?}");
    // x1 and -x1: a contradiction found by propagation.
    let outcome = solve(&Formula::new(1, [vec![1], vec![-1]]).unwrap(), &options(0, 1)).unwrap().outcome;
    assert_eq!(outcome.status, SpStatus::Contradiction);
}

/// The program's own parallel local search finishes what the surveys leave, on one thread and
/// several, for 3 literals (polynomial weights) and 4 (exponential); with too few rounds the
/// host's search goes on from the program's values. What the surveys left, kept, is satisfied
/// by the assignment and has the clauses the search was given.
#[test]
fn the_programs_local_search_finishes_or_hands_over_to_the_host() {
    for (k, ratio, threads) in [(3, 4.0, 1), (3, 4.1, 3), (4, 8.5, 2)] {
        let formula = random_ksat(2000, ratio, k, 7).unwrap();
        let mut opts = options(7, threads);
        opts.search_rounds = Some(1_000_000);
        opts.keep_rest = true;
        let solved = solve(&formula, &opts).unwrap();
        let outcome = &solved.outcome;
        assert_eq!(outcome.status, SpStatus::Satisfied, "k {k}: {outcome:?}");
        let assignment = outcome.assignment.as_ref().unwrap();
        assert!(check(&formula, assignment).is_satisfied());
        assert!(solved.search_rounds > 0 && solved.search_rounds < 1_000_000, "k {k}: {}", solved.search_rounds);
        assert_eq!(outcome.walksat_flips, 0, "k {k}: the host searched");
        let rest = solved.rest.as_ref().unwrap();
        assert_eq!(rest.num_clauses(), outcome.walksat_clauses);
        assert!(rest.num_clauses() > 0 && check(rest, assignment).is_satisfied());
    }
    let formula = random_ksat(2000, 4.1, 3, 8).unwrap();
    let mut opts = options(8, 2);
    opts.search_rounds = Some(2);
    let solved = solve(&formula, &opts).unwrap();
    assert_eq!(solved.outcome.status, SpStatus::Satisfied, "{:?}", solved.outcome);
    assert!(check(&formula, solved.outcome.assignment.as_ref().unwrap()).is_satisfied());
    assert_eq!(solved.search_rounds, 2);
    assert!(solved.outcome.walksat_flips > 0, "the host did not take over");
    assert!(solved.rest.is_none(), "kept without being asked");
}
