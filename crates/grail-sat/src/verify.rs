//! The verifier: whether an assignment satisfies a formula, decided from the formula and the
//! values alone, so a solver's answer is never taken on its word. Clauses are checked in
//! parallel (a large random formula has tens of millions).

use std::fmt;

use rayon::prelude::*;

use crate::{Assignment, Formula};

/// Clauses per parallel task: enough work to pay for the task.
const CHUNK: usize = 1 << 14;

/// What [`check`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// The formula's number of clauses.
    pub clauses: usize,
    /// How many clauses no literal satisfies.
    pub unsatisfied: usize,
    /// The first of them in file order, if any.
    pub first_unsatisfied: Option<UnsatisfiedClause>,
    /// How many of the formula's variables have no value (their literals count as false).
    pub unassigned_variables: usize,
}

/// A clause that an assignment leaves unsatisfied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnsatisfiedClause {
    /// Its 0-based index in the formula (the file's clause `index + 1`).
    pub index: usize,
    /// Its literals as written.
    pub literals: Vec<i32>,
}

impl Report {
    /// Whether every clause is satisfied.
    pub fn is_satisfied(&self) -> bool {
        self.unsatisfied == 0
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.first_unsatisfied {
            None => write!(f, "all {} clauses satisfied", self.clauses)?,
            Some(first) => {
                let literals: Vec<String> = first.literals.iter().map(i32::to_string).collect();
                write!(
                    f,
                    "{} of {} clauses unsatisfied; the first is clause {} (0-based index {}): {} 0",
                    self.unsatisfied,
                    self.clauses,
                    first.index + 1,
                    first.index,
                    literals.join(" ")
                )?;
            }
        }
        if self.unassigned_variables > 0 {
            write!(f, " ({} variables unassigned)", self.unassigned_variables)?;
        }
        Ok(())
    }
}

/// Checks `assignment` against `formula`. A literal is true only if its variable has the value
/// that makes it true: unassigned variables, and variables the assignment does not have, make
/// their literals false, so an empty clause is never satisfied.
pub fn check(formula: &Formula, assignment: &Assignment) -> Report {
    let values = assignment.values();
    let is_true = |literal: i32| {
        values.get(literal.unsigned_abs() as usize - 1).copied().flatten().is_some_and(|v| v == (literal > 0))
    };
    let chunks = formula.num_clauses().div_ceil(CHUNK);
    // (unsatisfied count, first unsatisfied index) per chunk, combined in order.
    let (unsatisfied, first) = (0..chunks)
        .into_par_iter()
        .map(|chunk| {
            let mut count = 0;
            let mut first = None;
            for c in chunk * CHUNK..((chunk + 1) * CHUNK).min(formula.num_clauses()) {
                if !formula.clause_at(c).iter().any(|&l| is_true(l)) {
                    count += 1;
                    first.get_or_insert(c);
                }
            }
            (count, first)
        })
        .reduce(|| (0, None), |a, b| (a.0 + b.0, a.1.or(b.1)));
    let assigned = values.iter().take(formula.num_vars()).filter(|v| v.is_some()).count();
    Report {
        clauses: formula.num_clauses(),
        unsatisfied,
        first_unsatisfied: first.map(|index| UnsatisfiedClause { index, literals: formula.clause_at(index).to_vec() }),
        unassigned_variables: formula.num_vars() - assigned,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_made_cases() {
        let f = Formula::new(3, [vec![1, 2], vec![-1, 3], vec![-2, -3], vec![2, 2]]).unwrap();
        let good = Assignment::from_literals(3, &[-1, 2, -3]).unwrap();
        let report = check(&f, &good);
        assert!(report.is_satisfied(), "{report}");
        assert_eq!(report.first_unsatisfied, None);
        assert_eq!(report.to_string(), "all 4 clauses satisfied");

        let bad = Assignment::from_literals(3, &[1, 2, 3]).unwrap();
        let report = check(&f, &bad);
        assert_eq!(report.unsatisfied, 1);
        assert_eq!(report.first_unsatisfied, Some(UnsatisfiedClause { index: 2, literals: vec![-2, -3] }));
        assert!(report.to_string().contains("clause 3 (0-based index 2): -2 -3 0"), "{report}");

        // Unassigned variables make their literals false, whichever sign.
        let partial = Assignment::from_literals(3, &[1]).unwrap();
        let report = check(&f, &partial);
        assert_eq!(report.unassigned_variables, 2);
        assert_eq!(report.unsatisfied, 3);
        assert_eq!(report.first_unsatisfied.unwrap().index, 1);
        // A shorter assignment: the missing variables are unassigned.
        let short = Assignment::from_literals(2, &[-1, 2]).unwrap();
        let report = check(&f, &short);
        assert_eq!((report.unsatisfied, report.unassigned_variables), (1, 1));

        // An empty clause is never satisfied; a tautology always is once its variable has a value.
        let f = Formula::new(2, [vec![], vec![2, -2]]).unwrap();
        let report = check(&f, &Assignment::from_literals(2, &[2]).unwrap());
        assert_eq!(report.unsatisfied, 1);
        assert_eq!(report.first_unsatisfied.unwrap().index, 0);
        assert!(
            check(&Formula::new(2, [[2, -2]]).unwrap(), &Assignment::from_literals(2, &[-2]).unwrap()).is_satisfied()
        );
        assert!(check(&Formula::default(), &Assignment::default()).is_satisfied());
    }

    #[test]
    fn the_first_unsatisfied_clause_is_first_across_chunks() {
        // Clauses 5 and every one from 3 * CHUNK on are unsatisfied by all-false values.
        let n = 4 * CHUNK;
        let clauses = (0..n).map(|c| if c == 5 || c >= 3 * CHUNK { vec![1] } else { vec![-1] });
        let f = Formula::new(1, clauses).unwrap();
        let report = check(&f, &Assignment::from_literals(1, &[-1]).unwrap());
        assert_eq!(report.unsatisfied, 1 + CHUNK);
        assert_eq!(report.first_unsatisfied.unwrap().index, 5);
    }
}
