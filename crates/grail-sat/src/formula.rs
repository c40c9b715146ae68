//! A CNF formula. Clauses are stored flat, one array of literals and one of clause starts,
//! rather than a vector per clause: a random 4.2-ratio formula over 4 million variables has
//! 16.8 million clauses, and one allocation each would cost more than the literals themselves.
//! The flat arrays are also the compressed-row shape grail's graph programs read.

use crate::{Result, SatError};

/// Appends `clause`'s literals to `out` with repeats merged, and returns true; for a tautology
/// (a literal beside its negation, `negate` of it) appends nothing and returns false. Literals
/// are DIMACS numbers or any coding of them.
pub fn push_cleaned<T: Copy + PartialEq>(
    out: &mut Vec<T>,
    clause: impl IntoIterator<Item = T>,
    negate: impl Fn(T) -> T,
) -> bool {
    let start = out.len();
    for l in clause {
        let kept = &out[start..];
        if kept.contains(&negate(l)) {
            out.truncate(start);
            return false;
        }
        if !kept.contains(&l) {
            out.push(l);
        }
    }
    true
}

/// The most variables a formula can have: literals are `i32`, as in DIMACS files.
pub const MAX_VARIABLES: usize = i32::MAX as usize;

/// A formula in conjunctive normal form over variables `1..=num_vars`.
///
/// A literal is a non-zero `i32` as DIMACS writes it: `v` is variable `v`, `-v` its negation.
/// Clauses are kept as given: duplicate literals, tautologies (`v` and `-v` in one clause) and
/// empty clauses (which make the formula unsatisfiable) are all allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Formula {
    num_vars: usize,
    literals: Vec<i32>,
    /// `num_clauses + 1` offsets into `literals`, starting at 0.
    starts: Vec<usize>,
}

impl Default for Formula {
    fn default() -> Self {
        Formula { num_vars: 0, literals: Vec::new(), starts: vec![0] }
    }
}

impl Formula {
    /// A formula from its clauses; every literal's variable must lie in `1..=num_vars`.
    pub fn new<C: AsRef<[i32]>>(num_vars: usize, clauses: impl IntoIterator<Item = C>) -> Result<Formula> {
        check_num_vars(num_vars)?;
        let mut literals = Vec::new();
        let mut starts = vec![0];
        for (index, clause) in clauses.into_iter().enumerate() {
            for &literal in clause.as_ref() {
                check_literal(literal, num_vars).map_err(|m| SatError::Invalid(format!("clause {index}: {m}")))?;
                literals.push(literal);
            }
            starts.push(literals.len());
        }
        Ok(Formula { num_vars, literals, starts })
    }

    /// A formula from its flat arrays: `starts` holds `num_clauses + 1` non-decreasing offsets
    /// into `literals`, from 0 to `literals.len()`.
    pub fn from_flat(num_vars: usize, literals: Vec<i32>, starts: Vec<usize>) -> Result<Formula> {
        check_num_vars(num_vars)?;
        if starts.first() != Some(&0) || starts.last() != Some(&literals.len()) {
            return Err(SatError::Invalid(format!(
                "clause starts must run from 0 to the number of literals ({})",
                literals.len()
            )));
        }
        if let Some(i) = starts.windows(2).position(|w| w[0] > w[1]) {
            return Err(SatError::Invalid(format!("clause starts decrease at clause {i}")));
        }
        if let Some((i, message)) =
            literals.iter().enumerate().find_map(|(i, &l)| check_literal(l, num_vars).err().map(|m| (i, m)))
        {
            return Err(SatError::Invalid(format!("literal {i} of the formula: {message}")));
        }
        Ok(Formula { num_vars, literals, starts })
    }

    /// For code that builds valid arrays itself (the parser, the generator).
    pub(crate) fn from_flat_unchecked(num_vars: usize, literals: Vec<i32>, starts: Vec<usize>) -> Formula {
        debug_assert!(starts.first() == Some(&0) && starts.last() == Some(&literals.len()));
        Formula { num_vars, literals, starts }
    }

    /// The number of variables (some may occur in no clause).
    pub fn num_vars(&self) -> usize {
        self.num_vars
    }

    /// The number of clauses.
    pub fn num_clauses(&self) -> usize {
        self.starts.len() - 1
    }

    /// The number of literal occurrences, over all clauses.
    pub fn num_literals(&self) -> usize {
        self.literals.len()
    }

    /// Clause `index` (0-based, in file order), or `None` past the last.
    pub fn clause(&self, index: usize) -> Option<&[i32]> {
        let (&start, &end) = (self.starts.get(index)?, self.starts.get(index + 1)?);
        Some(&self.literals[start..end])
    }

    /// The clauses in order.
    pub fn clauses(&self) -> impl ExactSizeIterator<Item = &[i32]> + '_ {
        self.starts.windows(2).map(|w| &self.literals[w[0]..w[1]])
    }

    /// All literals, clause after clause.
    pub fn literals(&self) -> &[i32] {
        &self.literals
    }

    /// `num_clauses + 1` offsets: clause `c` is `literals()[starts[c]..starts[c + 1]]`.
    pub fn clause_starts(&self) -> &[usize] {
        &self.starts
    }

    /// Whether some clause is empty, which no assignment satisfies.
    pub fn has_empty_clause(&self) -> bool {
        self.starts.windows(2).any(|w| w[0] == w[1])
    }

    /// Clause `c` without the bounds check of [`Formula::clause`], for the solvers' loops.
    pub(crate) fn clause_at(&self, c: usize) -> &[i32] {
        &self.literals[self.starts[c]..self.starts[c + 1]]
    }
}

fn check_num_vars(num_vars: usize) -> Result<()> {
    if num_vars > MAX_VARIABLES {
        return Err(SatError::Invalid(format!("{num_vars} variables: at most {MAX_VARIABLES} are supported")));
    }
    Ok(())
}

/// Why `literal` is not a literal of a formula over `num_vars` variables.
pub(crate) fn check_literal(literal: i32, num_vars: usize) -> std::result::Result<(), String> {
    if literal == 0 {
        return Err("literal 0 (0 only ends a clause in DIMACS files)".into());
    }
    if literal.unsigned_abs() as usize > num_vars {
        return Err(format!("literal {literal}: variable {} is not in 1..={num_vars}", literal.unsigned_abs()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cleaned_clauses_merge_repeats_and_drop_tautologies() {
        let mut out = vec![9];
        assert!(push_cleaned(&mut out, [1, -2, 1, 3, -2], |l| -l));
        assert_eq!(out, [9, 1, -2, 3]);
        assert!(!push_cleaned(&mut out, [4, 5, -4, 6], |l| -l));
        assert_eq!(out, [9, 1, -2, 3], "a tautology left literals behind");
        let mut codes = Vec::new();
        assert!(!push_cleaned(&mut codes, [2u32, 3], |c| c ^ 1));
        assert!(codes.is_empty());
    }

    #[test]
    fn clauses_are_kept_as_given_and_literals_checked() {
        let f = Formula::new(3, [vec![1, -2, 1], vec![], vec![3, -3]]).unwrap();
        assert_eq!(f.num_clauses(), 3);
        assert_eq!(f.num_literals(), 5);
        assert_eq!(f.clause(0), Some(&[1, -2, 1][..]));
        assert_eq!(f.clause(1), Some(&[][..]));
        assert_eq!(f.clause(3), None);
        assert!(f.has_empty_clause());
        assert_eq!(f.clause_starts(), [0, 3, 3, 5]);
        let e = Formula::new(3, [[1, 4]]).unwrap_err().to_string();
        assert!(e.contains("clause 0: literal 4: variable 4 is not in 1..=3"), "{e}");
        assert!(Formula::new(3, [[0]]).is_err());
        assert!(Formula::new(3, [[i32::MIN]]).is_err());
        assert!(Formula::from_flat(2, vec![1, 2], vec![0, 1, 2]).is_ok());
        assert!(Formula::from_flat(2, vec![1, 2], vec![0, 2, 1, 2]).is_err());
        assert!(Formula::from_flat(2, vec![1, 2], vec![0, 1]).is_err());
        assert!(Formula::from_flat(1, vec![1, 2], vec![0, 2]).is_err());
        assert_eq!(Formula::default().num_clauses(), 0);
    }
}
