//! The fixed-point checker: it passes the reference's solutions and every superset that is a
//! fixed point, and it catches any one fact taken from a least solution.

mod common;

use common::random_constraints;

use grail_pta::{Constraints, PointsTo, VarId, check_solution, parse_constraints, solve_sequential};
use proptest::prelude::*;

fn constraints(text: &str) -> Constraints {
    parse_constraints(text, "test.cons").unwrap_or_else(|e| panic!("{e}"))
}

/// The solution as sets of ids, to edit.
fn sets(pts: &PointsTo) -> Vec<Vec<VarId>> {
    pts.iter().map(|(_, set)| set.to_vec()).collect()
}

#[test]
fn each_kind_of_constraint_is_checked() {
    let c = constraints("p = &a\nq = p\nr = *q\n*q = s\ns = &b\na = &c\n");
    let pts = solve_sequential(&c);
    assert_eq!(check_solution(&c, &pts), Ok(()));
    let id = |name: &str| c.id(name).unwrap();
    let without = |var: &str, target: &str| {
        let mut s = sets(&pts);
        s[id(var) as usize].retain(|&t| t != id(target));
        PointsTo::from_sets(s)
    };
    // p = &a
    let v = check_solution(&c, &without("p", "a")).unwrap_err();
    assert_eq!((v.index, v.holder, v.target, v.through), (0, id("p"), id("a"), None));
    // q = p
    let v = check_solution(&c, &without("q", "a")).unwrap_err();
    assert_eq!((v.index, v.holder, v.target, v.through), (1, id("q"), id("a"), None));
    // r = *q: a is in the set of q, and c (a's) must be in r's.
    let v = check_solution(&c, &without("r", "c")).unwrap_err();
    assert_eq!((v.index, v.holder, v.target, v.through), (2, id("r"), id("c"), Some(id("a"))));
    assert!(
        v.describe(&c).contains("constraint 3 (`r = *q`) does not hold: the set of `r` lacks `c`"),
        "{}",
        v.describe(&c)
    );
    // *q = s: b (s's) must be in the set of a.
    let v = check_solution(&c, &without("a", "b")).unwrap_err();
    assert_eq!((v.index, v.holder, v.target, v.through), (3, id("a"), id("b"), Some(id("a"))));
    assert_eq!(v.violated, 1);
    // Everything empty: every address-of fails first, and is counted.
    let v = check_solution(&c, &PointsTo::new(c.num_vars())).unwrap_err();
    assert_eq!((v.index, v.violated), (0, 3));
    assert!(v.describe(&c).ends_with("; 2 more constraints do not hold"), "{}", v.describe(&c));
    // A solution covering fewer variables: the others have empty sets.
    assert!(check_solution(&c, &PointsTo::new(0)).is_err());
    assert_eq!(check_solution(&constraints("p = q\n"), &PointsTo::new(0)), Ok(()));
}

#[test]
fn extra_targets_are_not_its_business() {
    // Soundness only: every variable pointing to every variable satisfies every constraint.
    let c = constraints("p = &a\nq = *p\n*q = p\nr = q\n");
    let n = c.num_vars() as VarId;
    let everything = PointsTo::from_sets(vec![(0..n).collect(); n as usize]);
    assert_eq!(check_solution(&c, &everything), Ok(()));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The least solution holds, and without any one of its facts it does not: were the smaller
    /// solution a fixed point, the least solution would not be least.
    #[test]
    fn the_least_solution_passes_and_no_fact_can_go(c in random_constraints()) {
        let pts = solve_sequential(&c);
        prop_assert_eq!(check_solution(&c, &pts), Ok(()));
        for (v, set) in pts.iter() {
            for &t in set {
                let mut s = sets(&pts);
                s[v as usize].retain(|&x| x != t);
                prop_assert!(check_solution(&c, &PointsTo::from_sets(s)).is_err(), "{v} -> {t} removed");
            }
        }
    }
}
