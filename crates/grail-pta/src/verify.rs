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
//! against the finished sets with binary searches, so a fault in how a solver propagates cannot
//! hide itself here.

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
    let mut first = None;
    let mut violated = 0;
    for (index, &constraint) in constraints.constraints().iter().enumerate() {
        if let Some((holder, target, through)) = failure(constraint, points_to) {
            violated += 1;
            first.get_or_insert(Violation { index, constraint, holder, target, through, violated: 0 });
        }
    }
    match first {
        None => Ok(()),
        Some(v) => Err(Violation { violated, ..v }),
    }
}

/// What a constraint misses, if it does not hold: the variable whose set lacks a target, the
/// target, and the object gone through.
fn failure(constraint: Constraint, pts: &PointsTo) -> Option<(VarId, VarId, Option<VarId>)> {
    let has = |v: VarId, t: VarId| pts.get(v).binary_search(&t).is_ok();
    // The first target of `from` that `into` lacks.
    let missing = |into: VarId, from: VarId| pts.get(from).iter().copied().find(|&t| !has(into, t));
    match constraint {
        Constraint::AddressOf { dst, src } => (!has(dst, src)).then_some((dst, src, None)),
        Constraint::Copy { dst, src } => missing(dst, src).map(|t| (dst, t, None)),
        Constraint::Load { dst, src } => pts.get(src).iter().find_map(|&a| missing(dst, a).map(|t| (dst, t, Some(a)))),
        Constraint::Store { dst, src } => pts.get(dst).iter().find_map(|&a| missing(a, src).map(|t| (a, t, Some(a)))),
    }
}
