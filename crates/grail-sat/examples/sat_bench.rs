//! Times the data side of survey propagation on random 3-SAT: the generator (on all threads and
//! on one, which must give the same formula), DIMACS writing and reading, WalkSAT's flips per
//! second (WalkSAT's rule and probSAT's), and the sequential survey propagation reference.
//!
//! `cargo run --release -p grail-sat --example sat_bench [variables] [ratio] [walksat_flips] [sp]`
//!
//! WalkSAT's rate counts its setup too; near the threshold (4.2) on a large formula it stops at
//! the flip limit, which is what a rate needs. `sp` adds a survey propagation run.

use std::time::Instant;

use grail_sat::{
    PickRule, SpOptions, WalkSatOptions, random_ksat, read_cnf, survey_propagation, walksat_outcome, write_cnf,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num_vars: usize = args.first().map_or(Ok(1_000_000), |a| a.parse())?;
    let ratio: f64 = args.get(1).map_or(Ok(4.2), |a| a.parse())?;
    let flips: u64 = args.get(2).map_or(Ok(10_000_000), |a| a.parse())?;
    let with_sp = args.get(3).is_some_and(|a| a == "sp");

    let start = Instant::now();
    let formula = random_ksat(num_vars, ratio, 3, 1)?;
    let threads = rayon::current_num_threads();
    println!(
        "generate: {num_vars} variables x {ratio} = {} clauses in {:.3} s on {threads} threads",
        formula.num_clauses(),
        start.elapsed().as_secs_f64()
    );
    let start = Instant::now();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    let again = pool.install(|| random_ksat(num_vars, ratio, 3, 1))?;
    println!("generate: {:.3} s on 1 thread, same formula: {}", start.elapsed().as_secs_f64(), again == formula);
    drop(again);

    let dir = tempfile::tempdir()?;
    let path = dir.path().join("bench.cnf");
    let start = Instant::now();
    write_cnf(&formula, &path)?;
    let size = std::fs::metadata(&path)?.len() as f64 / 1e6;
    println!("write_cnf: {:.3} s ({size:.0} MB)", start.elapsed().as_secs_f64());
    let start = Instant::now();
    let back = read_cnf(&path)?;
    println!("read_cnf: {:.3} s, same formula: {}", start.elapsed().as_secs_f64(), back == formula);
    drop(back);

    for (name, rule) in [("walksat", PickRule::WalkSat), ("probsat", PickRule::ProbSat)] {
        let start = Instant::now();
        let options = WalkSatOptions { max_flips: flips, seed: 1, rule, ..WalkSatOptions::default() };
        let outcome = walksat_outcome(&formula, &options)?;
        let seconds = start.elapsed().as_secs_f64();
        println!(
            "{name}: {} flips in {seconds:.3} s = {:.2} M flips/s; {}",
            outcome.flips,
            outcome.flips as f64 / seconds / 1e6,
            match outcome.assignment {
                Some(_) => "satisfied (verified)".to_string(),
                None => format!("{} clauses unsatisfied at the limit", outcome.unsatisfied),
            }
        );
    }

    if with_sp {
        let start = Instant::now();
        let outcome = survey_propagation(&formula, &SpOptions { seed: 1, ..SpOptions::default() })?;
        println!(
            "survey propagation: {:?} in {:.3} s; {} sweeps, {} decimation steps, {} variables fixed by surveys and {} \
             by unit propagation, {} clauses left to WalkSAT ({} flips)",
            outcome.status,
            start.elapsed().as_secs_f64(),
            outcome.iterations,
            outcome.decimation_steps,
            outcome.fixed_by_sp,
            outcome.fixed_by_propagation,
            outcome.walksat_clauses,
            outcome.walksat_flips
        );
    }
    Ok(())
}
