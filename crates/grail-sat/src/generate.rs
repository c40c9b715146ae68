//! Uniform random k-SAT, the standard benchmark of survey propagation.
//!
//! Clauses are drawn in parallel, in fixed chunks that each have their own generator seeded
//! from the seed and the chunk's number: the chunks do not depend on the thread count, so the
//! formula is a function of the arguments alone and a benchmark instance can be named by them
//! instead of shipped as a file.

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;

use crate::{Formula, MAX_VARIABLES, Result, SatError};

/// Generated formulas above this size are refused rather than left to exhaust memory (the
/// limit of the graph generators' edge lists).
const MAX_FORMULA_BYTES: u64 = 64 << 30;

/// Clauses per chunk. Changing it changes every generated formula.
const CHUNK: usize = 1 << 14;

/// A random formula over `num_vars` variables with `round(ratio * num_vars)` clauses of `k`
/// literals (3 <= k <= 6). Each clause has `k` distinct variables drawn uniformly, each
/// negated with probability 1/2; the same arguments give the same formula on any number of
/// threads.
pub fn random_ksat(num_vars: usize, ratio: f64, k: usize, seed: u64) -> Result<Formula> {
    if !(3..=6).contains(&k) {
        return Err(SatError::Invalid(format!("k = {k}: expected 3 to 6 literals per clause")));
    }
    if num_vars < k {
        return Err(SatError::Invalid(format!("{num_vars} variables: a clause of {k} distinct variables needs {k}")));
    }
    if num_vars > MAX_VARIABLES {
        return Err(SatError::Invalid(format!("{num_vars} variables: at most {MAX_VARIABLES} are supported")));
    }
    if !(ratio.is_finite() && ratio >= 0.0) {
        return Err(SatError::Invalid(format!("clause-to-variable ratio {ratio}: expected a non-negative number")));
    }
    let clauses = (ratio * num_vars as f64).round();
    // A clause is `k` 4-byte literals and an 8-byte start; refuse up front, as the graph
    // generators do, rather than abort on a failed allocation.
    if clauses * (4 * k + 8) as f64 > MAX_FORMULA_BYTES as f64 {
        return Err(SatError::Invalid(format!(
            "a formula of {clauses} clauses of {k} literals would need more than the {} GiB a generated formula may take",
            MAX_FORMULA_BYTES >> 30
        )));
    }
    let clauses = clauses as usize;
    let mut literals = vec![0i32; clauses * k];
    let top = num_vars as u32;
    literals.par_chunks_mut(CHUNK * k).enumerate().for_each(|(chunk, out)| {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(chunk_seed(seed, chunk as u64));
        for clause in out.chunks_exact_mut(k) {
            let mut signs: u64 = rng.random();
            for j in 0..k {
                let var = loop {
                    let v = rng.random_range(1..=top);
                    if !clause[..j].iter().any(|l| l.unsigned_abs() == v) {
                        break v as i32;
                    }
                };
                clause[j] = if signs & 1 == 1 { -var } else { var };
                signs >>= 1;
            }
        }
    });
    let starts: Vec<usize> = (0..=clauses).into_par_iter().map(|c| c * k).collect();
    Ok(Formula::from_flat_unchecked(num_vars, literals, starts))
}

/// A chunk's seed: both inputs mixed (SplitMix64's finalizer), so neighbouring chunks and
/// neighbouring seeds get unrelated streams.
fn chunk_seed(seed: u64, chunk: u64) -> u64 {
    mix(seed ^ mix(chunk.wrapping_add(0x9E37_79B9_7F4A_7C15)))
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clause_count_and_distinct_variables() {
        for k in 3..=6 {
            let f = random_ksat(50, 4.26, k, 7).unwrap();
            assert_eq!(f.num_clauses(), 213);
            assert_eq!(f.num_vars(), 50);
            for clause in f.clauses() {
                assert_eq!(clause.len(), k);
                let mut vars: Vec<u32> = clause.iter().map(|l| l.unsigned_abs()).collect();
                assert!(vars.iter().all(|&v| (1..=50).contains(&v)));
                vars.sort_unstable();
                vars.dedup();
                assert_eq!(vars.len(), k, "{clause:?}");
            }
        }
        // Exactly k variables: every clause holds all of them.
        let f = random_ksat(6, 2.0, 6, 1).unwrap();
        assert!(f.clauses().all(|c| c.iter().map(|l| l.unsigned_abs()).sum::<u32>() == 21));
        assert_eq!(random_ksat(1000, 0.0, 3, 1).unwrap().num_clauses(), 0);
        assert_eq!(random_ksat(3, 0.5, 3, 1).unwrap().num_clauses(), 2);
    }

    #[test]
    fn signs_and_variables_look_uniform() {
        let f = random_ksat(100, 50.0, 4, 3).unwrap();
        let negative = f.literals().iter().filter(|&&l| l < 0).count() as f64 / f.num_literals() as f64;
        assert!((negative - 0.5).abs() < 0.01, "{negative}");
        let mut counts = [0usize; 100];
        for l in f.literals() {
            counts[l.unsigned_abs() as usize - 1] += 1;
        }
        // 200 occurrences expected per variable; a standard deviation is about 14.
        assert!(counts.iter().all(|&c| (120..280).contains(&c)), "{counts:?}");
    }

    #[test]
    fn bad_arguments_are_errors() {
        assert!(random_ksat(100, 4.0, 2, 1).is_err());
        assert!(random_ksat(100, 4.0, 7, 1).is_err());
        assert!(random_ksat(4, 4.0, 5, 1).is_err());
        assert!(random_ksat(100, -1.0, 3, 1).is_err());
        assert!(random_ksat(100, f64::NAN, 3, 1).is_err());
        assert!(random_ksat(100, f64::INFINITY, 3, 1).is_err());
        assert!(random_ksat(1 << 40, 4.0, 3, 1).is_err());
        assert!(random_ksat(1 << 30, 1e12, 3, 1).is_err());
        let e = random_ksat(MAX_VARIABLES, 4.2, 3, 1).unwrap_err().to_string();
        assert!(e.contains("64 GiB"), "{e}");
    }

    #[test]
    fn the_formula_depends_on_the_arguments_not_the_threads() {
        // Several chunks, the last one partial.
        let n = 12_345;
        let run = |threads: usize, seed: u64| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| random_ksat(n, 4.2, 3, seed).unwrap())
        };
        let one = run(1, 42);
        assert!(one.num_clauses() > 3 * CHUNK);
        assert_eq!(one, run(4, 42));
        assert_eq!(one, random_ksat(n, 4.2, 3, 42).unwrap());
        assert_ne!(one, run(4, 43));
        // Two chunks are not copies of each other.
        assert_ne!(one.literals()[..3 * 100], one.literals()[3 * CHUNK..3 * (CHUNK + 100)]);
    }
}
