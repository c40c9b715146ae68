//! The independent check of a solution: every constraint holds of it.
//!
//! A solution that satisfies every constraint is a fixed point of the analysis, and so *sound*:
//! whatever the program can make a pointer point to is in its set. Andersen's analysis is the
//! *least* such solution, and minimality cannot be checked this cheaply (it takes solving
//! again), so this check says nothing about extra targets: the solution that lets every variable
//! point to every variable passes it. A solver other than the reference is therefore checked in
//! two ways, each independent of its code: its solution is a fixed point ([`check_solution`]),
//! and it equals the reference's ([`crate::compare`] against [`crate::solve_sequential`]).
//!
//! The checker shares nothing with the solvers: it reads each constraint once and tests it
//! against the finished sets (sorted lists, one searched for the other's elements in order), so
//! a fault in how a solver propagates cannot hide itself here. Constraints are checked on every
//! core: a load through a pointer to a thousand objects of a thousand targets each is a million
//! lookups.

use rayon::prelude::*;

use crate::{Constraint, Constraints, PointsTo, VarId};

/// Why a solution is not a fixed point: the first constraint that does not hold, what is
/// missing, and how many constraints fail in all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The constraint's index in [`Constraints::constraints`].
    pub index: usize,
    pub constraint: Constraint,
    /// The variable whose set lacks `target`.
    pub holder: VarId,
    /// What the constraint puts in the set of `holder` and the solution leaves out.
    pub target: VarId,
    /// For a load or store, the object in the pointer's set that the constraint goes through.
    pub through: Option<VarId>,
    /// How many constraints do not hold (at least 1).
    pub violated: usize,
}

impl Violation {
    /// The violation in words, with the variables' names.
    pub fn describe(&self, constraints: &Constraints) -> String {
        let name = |v: VarId| {
            if (v as usize) < constraints.num_vars() { constraints.name(v).to_string() } else { format!("#{v}") }
        };
        let (dst, src) = self.constraint.vars();
        let why = match (self.constraint, self.through) {
            (Constraint::AddressOf { .. }, _) => String::new(),
            (Constraint::Copy { .. }, _) => format!(" (it is in the set of `{}`)", name(src)),
            (Constraint::Load { .. }, Some(a)) => {
                format!(" (it is in the set of `{}`, which the set of `{}` holds)", name(a), name(src))
            }
            (Constraint::Store { .. }, Some(a)) => {
                format!(" (it is in the set of `{}`, and `{}` is in the set of `{}`)", name(src), name(a), name(dst))
            }
            _ => String::new(),
        };
        let others = match self.violated {
            0 | 1 => String::new(),
            2 => "; 1 more constraint does not hold".into(),
            n => format!("; {} more constraints do not hold", n - 1),
        };
        format!(
            "constraint {} (`{}`) does not hold: the set of `{}` lacks `{}`{why}{others}",
            self.index + 1,
            constraints.show(self.constraint),
            name(self.holder),
            name(self.target),
        )
    }
}

/// Checks that `points_to` satisfies every constraint of `constraints`:
///
/// - `p = &a`: `a` is in the set of `p`;
/// - `p = q`: the set of `p` includes the set of `q`;
/// - `p = *q`: for each `a` in the set of `q`, the set of `p` includes the set of `a`;
/// - `*p = q`: for each `a` in the set of `p`, the set of `a` includes the set of `q`.
///
/// This is soundness (a fixed point), not minimality: see the module's documentation. A variable
/// the solution does not cover has an empty set.
pub fn check_solution(constraints: &Constraints, points_to: &PointsTo) -> Result<(), Violation> {
    // Each failing constraint with its index; the first by index is reported, with the count.
    let failures = constraints
        .constraints()
        .par_iter()
        .enumerate()
        .filter_map(|(index, &constraint)| {
            failure(constraint, points_to).map(|(holder, target, through)| Violation {
                index,
                constraint,
                holder,
                target,
                through,
                violated: 1,
            })
        })
        .reduce_with(|a, b| {
            let violated = a.violated + b.violated;
            let first = if a.index <= b.index { a } else { b };
            Violation { violated, ..first }
        });
    match failures {
        None => Ok(()),
        Some(v) => Err(v),
    }
}

/// The first element of sorted `from` that sorted `into` lacks. Each element is looked for from
/// where the last was found, by galloping (steps of 1, 2, 4, ... then a binary search within the
/// last step): about |from| log(|into| / |from|) comparisons, whichever list is the longer.
fn first_missing(into: &[VarId], from: &[VarId]) -> Option<VarId> {
    let mut at = 0;
    for &t in from {
        let mut step = 1;
        let mut end = at;
        while end < into.len() && into[end] < t {
            at = end + 1;
            end += step;
            step *= 2;
        }
        let end = end.min(into.len());
        match into[at..end].binary_search(&t) {
            Ok(i) => at += i + 1,
            Err(_) if end < into.len() && into[end] == t => at = end + 1,
            Err(_) => return Some(t),
        }
    }
    None
}

/// What a constraint misses, if it does not hold: the variable whose set lacks a target, the
/// target, and the object gone through.
fn failure(constraint: Constraint, pts: &PointsTo) -> Option<(VarId, VarId, Option<VarId>)> {
    let has = |v: VarId, t: VarId| pts.get(v).binary_search(&t).is_ok();
    // The first target of `from` that `into` lacks.
    let missing = |into: VarId, from: VarId| first_missing(pts.get(into), pts.get(from));
    match constraint {
        Constraint::AddressOf { dst, src } => (!has(dst, src)).then_some((dst, src, None)),
        Constraint::Copy { dst, src } => missing(dst, src).map(|t| (dst, t, None)),
        Constraint::Load { dst, src } => pts.get(src).iter().find_map(|&a| missing(dst, a).map(|t| (dst, t, Some(a)))),
        Constraint::Store { dst, src } => pts.get(dst).iter().find_map(|&a| missing(a, src).map(|t| (a, t, Some(a)))),
    }
}

#[cfg(test)]
mod tests {
    use super::first_missing;
    use proptest::prelude::*;

    fn sorted(mut v: Vec<u32>) -> Vec<u32> {
        v.sort_unstable();
        v.dedup();
        v
    }

    proptest! {
        /// The galloping search finds the same first missing element as a search of each one.
        #[test]
        fn galloping_finds_the_first_missing_element(
            into in proptest::collection::vec(0u32..200, 0..120),
            from in proptest::collection::vec(0u32..200, 0..60),
            subset in any::<bool>(),
        ) {
            let into = sorted(into);
            // Half the cases draw `from` out of `into`, so that nothing is missing.
            let from = if subset { into.iter().copied().filter(|x| from.contains(x)).collect() } else { sorted(from) };
            let expected = from.iter().copied().find(|t| into.binary_search(t).is_err());
            prop_assert_eq!(first_missing(&into, &from), expected);
        }
    }

    #[test]
    fn edges() {
        assert_eq!(first_missing(&[], &[]), None);
        assert_eq!(first_missing(&[], &[3]), Some(3));
        assert_eq!(first_missing(&[3], &[]), None);
        assert_eq!(first_missing(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], &[10]), None);
        assert_eq!(first_missing(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], &[1, 10, 11]), Some(11));
        assert_eq!(first_missing(&[2, 4, 6, 8], &[2, 5]), Some(5));
    }
}
