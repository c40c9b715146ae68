//! Andersen's analysis by the grail program (`pta.grail`) on the CPU, on one and several
//! threads, against the sequential reference set by set: random constraint sets of every mix
//! (cycles of copies, loads and stores through pointers to pointers, self-references), and a
//! program-shaped one large enough for many rounds and sets spanning many 64-target blocks.

use grail_algos::Target;
use grail_algos::pta::{Options, solve};
use grail_ir::OptConfig;
use grail_pta::{Constraint, Constraints, compare, solve_sequential};

/// Numbers from a seed (splitmix64).
struct Random(u64);

impl Random {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % n
    }
}

fn random_constraints(vars: u32, count: usize, seed: u64) -> Constraints {
    let mut random = Random(seed);
    let mut constraints = Constraints::new();
    for v in 0..vars {
        constraints.var(&format!("v{v}")).unwrap();
    }
    for _ in 0..count {
        let (dst, src) = (random.below(vars as u64) as u32, random.below(vars as u64) as u32);
        let constraint = match random.below(10) {
            0..=2 => Constraint::AddressOf { dst, src },
            3..=5 => Constraint::Copy { dst, src },
            6..=7 => Constraint::Load { dst, src },
            _ => Constraint::Store { dst, src },
        };
        constraints.push(constraint).unwrap();
    }
    constraints
}

fn agrees(constraints: &Constraints, threads: usize, what: &str) -> u32 {
    let expected = solve_sequential(constraints);
    // Every optimization, or none (no outlined region), by thread count.
    let opt = if threads == 2 { OptConfig::NONE } else { OptConfig::all() };
    let options = Options { target: Target::Cpu, threads, opt, ..Options::default() };
    let solved = solve(constraints, &options).unwrap_or_else(|e| panic!("{what}: {e}"));
    if let Some(difference) = compare(&solved.points_to, &expected) {
        panic!("{what}, {threads} threads: {}", difference.describe(constraints));
    }
    solved.rounds
}

#[test]
fn random_constraints_give_the_references_sets() {
    for seed in 0..120u64 {
        let vars = 1 + (seed * 7 % 150) as u32;
        let count = (seed as usize * 13) % 400;
        let constraints = random_constraints(vars, count, seed);
        agrees(&constraints, 1 + seed as usize % 3, &format!("seed {seed}: {vars} variables, {count} constraints"));
    }
}

/// Functions with locals, a heap site each, pointers passed around a ring of calls, a global
/// table of function-pointer-like objects loaded and stored through: sets of hundreds of
/// targets over many blocks, and chains that need many rounds.
#[test]
fn a_program_shaped_input_needs_many_rounds_and_blocks() {
    let mut c = Constraints::new();
    let functions = 300;
    for f in 0..functions {
        let (p, q, r, obj, heap) =
            (format!("f{f}.p"), format!("f{f}.q"), format!("f{f}.r"), format!("f{f}.x"), format!("malloc@f{f}"));
        c.address_of(&p, &obj).unwrap();
        c.address_of(&q, &heap).unwrap();
        c.store(&q, &p).unwrap(); // *q = p: the heap object points to x
        c.load(&r, &q).unwrap(); // r = *q
        let next = format!("f{}.arg", (f + 1) % functions);
        c.copy(&next, &r).unwrap(); // calls pass r on around the ring
        c.copy(&format!("f{f}.p"), &format!("f{f}.arg")).unwrap();
        c.address_of("@table", &heap).unwrap();
        if f % 7 == 0 {
            c.load(&format!("f{f}.t"), "@table").unwrap();
            c.store(&format!("f{f}.t"), &format!("f{f}.p")).unwrap();
        }
    }
    let rounds = agrees(&c, 3, "ring of functions");
    assert!(rounds > 5, "{rounds} rounds");
    let expected = solve_sequential(&c);
    assert!(expected.total() > 50_000, "{} facts", expected.total());
}
