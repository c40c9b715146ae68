//! The sequential reference solver: known answers, agreement with the definition (a naive
//! fixpoint over all constraints) on random sets, and its speed on large ones.

mod common;

use common::random_constraints;

use std::collections::BTreeSet;

use grail_pta::{Constraint, Constraints, PointsTo, compare, parse_constraints, solve_sequential};
use proptest::prelude::*;

/// Each variable's targets by name, for variables with any.
fn sets(c: &Constraints, pts: &PointsTo) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = pts
        .iter()
        .filter(|(_, set)| !set.is_empty())
        .map(|(v, set)| {
            let mut targets: Vec<String> = set.iter().map(|&t| c.name(t).to_string()).collect();
            targets.sort();
            (c.name(v).to_string(), targets)
        })
        .collect();
    out.sort();
    out
}

fn solved(text: &str) -> Vec<(String, Vec<String>)> {
    let c = parse_constraints(text, "test.txt").unwrap();
    sets(&c, &solve_sequential(&c))
}

fn expect(lines: &[(&str, &[&str])]) -> Vec<(String, Vec<String>)> {
    lines.iter().map(|(v, ts)| (v.to_string(), ts.iter().map(|t| t.to_string()).collect())).collect()
}

#[test]
fn address_of_and_copies() {
    assert_eq!(
        solved("p = &a\nq = p\nr = q\nr = &b\ns = t\nvar lonely\n"),
        expect(&[("p", &["a"]), ("q", &["a"]), ("r", &["a", "b"])])
    );
    assert!(solved("").is_empty());
    assert!(solved("p = q\nq = *r\n*r = p\n").is_empty(), "nothing points anywhere without `&`");
}

#[test]
fn loads_and_stores_through_several_levels() {
    // a -> b -> c -> d; x = *a is {c}, y = *x is {d}; *a = e makes b point to e's target too.
    let text = "a = &b\nb = &c\nc = &d\nx = *a\ny = *x\ne = &f\n*a = e\nz = *b\n";
    assert_eq!(
        solved(text),
        expect(&[
            ("a", &["b"]),
            ("b", &["c", "f"]),
            ("c", &["d"]),
            ("e", &["f"]),
            ("x", &["c", "f"]),
            ("y", &["d"]),
            ("z", &["d"]),
        ])
    );
    // A store whose pointer learns its targets only later (through a load).
    let text = "*p = q\nq = &x\np = *pp\npp = &cell\ncell = &o1\nr = *p\n";
    assert_eq!(
        solved(text),
        expect(&[("cell", &["o1"]), ("o1", &["x"]), ("p", &["o1"]), ("pp", &["cell"]), ("q", &["x"]), ("r", &["x"])])
    );
}

#[test]
fn cycles() {
    // A copy cycle shares one set.
    assert_eq!(
        solved("p = q\nq = r\nr = p\nr = &a\nq = &b\n"),
        expect(&[("p", &["a", "b"]), ("q", &["a", "b"]), ("r", &["a", "b"])])
    );
    // A variable pointing to itself; loads and stores through it feed back into it.
    assert_eq!(
        solved("p = &p\nq = *p\n*p = r\nr = &a\n"),
        expect(&[("a", &["a"]), ("p", &["a", "p"]), ("q", &["a", "p"]), ("r", &["a"])])
    );
    // A cycle made by a load and a store: x = *p, *p = x with p pointing to x.
    assert_eq!(solved("p = &x\nx = *p\n*p = x\nx = &o\n"), expect(&[("p", &["x"]), ("x", &["o"])]));
    // The swap of two pointers through a function, flow-insensitively: both may hold both.
    let swap = "pa = &p\npb = &q\np = &x\nq = &y\nt = *pa\nu = *pb\n*pa = u\n*pb = t\n";
    assert_eq!(
        solved(swap),
        expect(&[
            ("p", &["x", "y"]),
            ("pa", &["p"]),
            ("pb", &["q"]),
            ("q", &["x", "y"]),
            ("t", &["x", "y"]),
            ("u", &["x", "y"]),
        ])
    );
}

#[test]
fn the_order_of_constraints_does_not_matter() {
    let lines = ["a = &b", "b = &c", "x = *a", "*a = e", "e = &f", "y = *x", "c = &d", "q = y", "y = q"];
    let base = solved(&lines.join("\n"));
    for shift in 1..lines.len() {
        let mut rotated = lines.to_vec();
        rotated.rotate_left(shift);
        rotated.reverse();
        // Variables get other ids, so compare by name.
        assert_eq!(solved(&rotated.join("\n")), base, "{rotated:?}");
    }
}

/// The definition: apply every constraint until nothing changes.
fn naive(c: &Constraints) -> PointsTo {
    let mut sets: Vec<BTreeSet<u32>> = vec![BTreeSet::new(); c.num_vars()];
    loop {
        let mut changed = false;
        for &k in c.constraints() {
            let mut add = |sets: &mut Vec<BTreeSet<u32>>, to: u32, from: Vec<u32>| {
                for t in from {
                    changed |= sets[to as usize].insert(t);
                }
            };
            match k {
                Constraint::AddressOf { dst, src } => add(&mut sets, dst, vec![src]),
                Constraint::Copy { dst, src } => {
                    let from = sets[src as usize].iter().copied().collect();
                    add(&mut sets, dst, from);
                }
                Constraint::Load { dst, src } => {
                    for a in sets[src as usize].clone() {
                        let from = sets[a as usize].iter().copied().collect();
                        add(&mut sets, dst, from);
                    }
                }
                Constraint::Store { dst, src } => {
                    for a in sets[dst as usize].clone() {
                        let from = sets[src as usize].iter().copied().collect();
                        add(&mut sets, a, from);
                    }
                }
            }
        }
        if !changed {
            return PointsTo::from_sets(sets.into_iter().map(|s| s.into_iter().collect()).collect());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn agrees_with_the_naive_fixpoint(c in random_constraints()) {
        let (fast, slow) = (solve_sequential(&c), naive(&c));
        prop_assert!(compare(&fast, &slow).is_none(), "{}", compare(&fast, &slow).unwrap().describe(&c));
        prop_assert_eq!(fast, slow);
    }
}

/// A small deterministic generator (xorshift), so the large test needs no seed from outside.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u32) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % u64::from(n)) as u32
    }
}

/// Constraints shaped like those extracted from a program compiled without optimization:
/// each function's locals live in stack slots (`%s = &slot`) that SSA temporaries are loaded
/// from and stored to; some temporaries are addresses (of heap objects, globals, slots), some
/// are loaded through other temporaries; calls pass a temporary to a nearby function's
/// parameter and take its return value.
fn program_like(functions: u32, rng: &mut Rng) -> Constraints {
    const SLOTS: u32 = 6;
    const TEMPS: u32 = 8;
    const GLOBALS: u32 = 100;
    let mut c = Constraints::new();
    for g in 0..GLOBALS {
        c.var(&format!("@g{g}")).unwrap();
    }
    let var = |c: &mut Constraints, name: String| c.var(&name).unwrap();
    let push = |c: &mut Constraints, k: Constraint| c.push(k).unwrap();
    for f in 0..functions {
        let slots: Vec<u32> = (0..SLOTS)
            .map(|i| {
                let (p, object) = (var(&mut c, format!("f{f}.%s{i}")), var(&mut c, format!("f{f}.s{i}")));
                push(&mut c, Constraint::AddressOf { dst: p, src: object });
                p
            })
            .collect();
        let param = var(&mut c, format!("f{f}.%p"));
        push(&mut c, Constraint::Store { dst: slots[0], src: param });
        let mut temps = Vec::new();
        for j in 0..TEMPS {
            let t = var(&mut c, format!("f{f}.%t{j}"));
            let slot = slots[rng.below(SLOTS) as usize];
            let earlier = if j == 0 { None } else { Some(temps[rng.below(j) as usize]) };
            let def = match (rng.below(40), earlier) {
                (4, Some(e)) => Constraint::Load { dst: t, src: e },
                (5 | 10..=12, _) => Constraint::AddressOf { dst: t, src: var(&mut c, format!("malloc@f{f}#{j}")) },
                (6, _) => Constraint::Copy { dst: t, src: rng.below(GLOBALS) },
                (7, _) => Constraint::AddressOf { dst: t, src: rng.below(GLOBALS) },
                (8, _) => Constraint::AddressOf { dst: t, src: var(&mut c, format!("f{f}.s{}", rng.below(SLOTS))) },
                (9 | 13..=16, Some(e)) => Constraint::Copy { dst: t, src: e },
                _ => Constraint::Load { dst: t, src: slot },
            };
            push(&mut c, def);
            push(
                &mut c,
                match (rng.below(40), earlier) {
                    (0, Some(e)) => Constraint::Store { dst: e, src: t },
                    (1, _) => Constraint::Copy { dst: rng.below(GLOBALS), src: t },
                    _ => Constraint::Store { dst: slots[rng.below(SLOTS) as usize], src: t },
                },
            );
            temps.push(t);
        }
        let ret = var(&mut c, format!("f{f}.<ret>"));
        push(&mut c, Constraint::Copy { dst: ret, src: temps[rng.below(TEMPS) as usize] });
        // A call of a function nearby (of the same module, say).
        let callee = (f + rng.below(64)).saturating_sub(32).min(functions - 1);
        let (arg, result) = (temps[rng.below(TEMPS) as usize], temps[rng.below(TEMPS) as usize]);
        let (callee_param, callee_ret) =
            (var(&mut c, format!("f{callee}.%p")), var(&mut c, format!("f{callee}.<ret>")));
        push(&mut c, Constraint::Copy { dst: callee_param, src: arg });
        push(&mut c, Constraint::Copy { dst: result, src: callee_ret });
    }
    c
}

#[test]
fn a_hundred_thousand_constraints_take_seconds_at_most() {
    let c = program_like(4_000, &mut Rng(0x9e37_79b9_7f4a_7c15));
    assert!(c.len() >= 100_000, "{} constraints", c.len());
    let start = std::time::Instant::now();
    let pts = solve_sequential(&c);
    let took = start.elapsed();
    eprintln!("{} variables, {} constraints, {} facts: {took:?}", c.num_vars(), c.len(), pts.total());
    assert!(pts.total() > c.len() / 10, "the sets are not trivial: {} facts", pts.total());
    assert!(took.as_secs_f64() < 10.0, "{} constraints took {took:?}", c.len());
}
