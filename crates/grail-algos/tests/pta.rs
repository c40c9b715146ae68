//! Andersen's analysis by the grail program (`pta.grail`) on the CPU, on one and several
//! threads, against the sequential reference set by set: random constraint sets of every mix
//! (cycles of copies, loads and stores through pointers to pointers, self-references), and a
//! program-shaped one large enough for many rounds and sets spanning many 64-target blocks.

use grail_algos::Target;
use grail_algos::pta::{Epochs, Options, Solved, solve};
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

/// How cycles are collapsed.
#[derive(Debug, Clone, Copy)]
enum Collapse {
    Off,
    /// The defaults (small inputs run one epoch after collapsing the static copy cycles).
    Default,
    /// An epoch per round that added an edge, the objects renumbered whenever the blocks
    /// doubled: every resumption and renumbering path on small inputs.
    Eager,
}

fn agrees(constraints: &Constraints, threads: usize, collapse: Collapse, what: &str) -> Solved {
    let expected = solve_sequential(constraints);
    // Every optimization, or none (no outlined region), by thread count.
    let opt = if threads == 2 { OptConfig::NONE } else { OptConfig::all() };
    let mut options = Options { target: Target::Cpu, threads, opt, ..Options::default() };
    match collapse {
        Collapse::Off => options.collapse = false,
        Collapse::Default => {}
        Collapse::Eager => options.epochs = Epochs { edges: 1, renumber_blocks: 0, slot_sources: 1 },
    }
    let solved = solve(constraints, &options).unwrap_or_else(|e| panic!("{what}: {e}"));
    if let Some(difference) = compare(&solved.points_to, &expected) {
        panic!("{what}, {threads} threads, collapse {collapse:?}: {}", difference.describe(constraints));
    }
    solved
}

#[test]
fn random_constraints_give_the_references_sets() {
    for seed in 0..120u64 {
        let vars = 1 + (seed * 7 % 150) as u32;
        let count = (seed as usize * 13) % 400;
        let constraints = random_constraints(vars, count, seed);
        let collapse = [Collapse::Off, Collapse::Default, Collapse::Eager][seed as usize % 3];
        let threads = 1 + (seed as usize / 3) % 3;
        agrees(&constraints, threads, collapse, &format!("seed {seed}: {vars} variables, {count} constraints"));
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
    let whole = agrees(&c, 3, Collapse::Off, "ring of functions");
    assert!(whole.rounds > 5, "{} rounds", whole.rounds);
    assert_eq!((whole.epochs, whole.collapsed), (1, 0));
    // The ring closes through the stores and loads (p -> heap -> r -> the next function's arg
    // -> its p): only collapsing between epochs finds it.
    let eager = agrees(&c, 2, Collapse::Eager, "ring of functions, collapsed");
    assert!(eager.epochs > 2, "{} epochs", eager.epochs);
    assert!(eager.collapsed >= 4 * functions - 1, "{} variables collapsed", eager.collapsed);
    agrees(&c, 3, Collapse::Default, "ring of functions, default epochs");
    let expected = solve_sequential(&c);
    assert!(expected.total() > 50_000, "{} facts", expected.total());
}

/// Two objects on a cycle of copies (collapsed before the first round, `o1` standing for
/// both) and a pointer that reaches `o2` only after a chain of copies: the load through it
/// must pull from `o2`'s representative, which holds `o2`'s targets.
#[test]
fn a_load_through_a_collapsed_object_reads_its_representative() {
    let mut c = Constraints::new();
    c.address_of("z", "o1").unwrap(); // o1 is an object, numbered before o2
    c.address_of("p0", "o2").unwrap();
    c.copy("o1", "o2").unwrap();
    c.copy("o2", "o1").unwrap();
    c.address_of("o2", "t").unwrap();
    for i in 1..12 {
        c.copy(&format!("p{i}"), &format!("p{}", i - 1)).unwrap();
    }
    c.load("r", "p11").unwrap(); // r = *p11 = the set of o2: {t}
    c.store("p11", "u").unwrap(); // *p11 = u: o2 (so o1) gains u's set
    c.address_of("u", "w").unwrap();
    for collapse in [Collapse::Off, Collapse::Default, Collapse::Eager] {
        let solved = agrees(&c, 2, collapse, "a collapsed object");
        if !matches!(collapse, Collapse::Off) {
            assert_eq!(solved.collapsed, 1, "{collapse:?}");
        }
    }
}
