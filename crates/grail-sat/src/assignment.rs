//! Truth assignments. A variable may be unassigned: a solution file need not name every
//! variable, and survey propagation fixes variables a few at a time.

use crate::formula::check_literal;
use crate::{Result, SatError};

/// A value per variable `1..=num_vars`, `None` where unassigned.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Assignment {
    values: Vec<Option<bool>>,
}

impl Assignment {
    /// `num_vars` unassigned variables.
    pub fn new(num_vars: usize) -> Assignment {
        Assignment { values: vec![None; num_vars] }
    }

    /// The values of variables `1..=values.len()`, in order.
    pub fn from_values(values: Vec<Option<bool>>) -> Assignment {
        Assignment { values }
    }

    /// The assignment that makes `literals` true, the other variables unassigned; a variable out
    /// of `1..=num_vars` or given both values is an error.
    pub fn from_literals(num_vars: usize, literals: &[i32]) -> Result<Assignment> {
        let mut assignment = Assignment::new(num_vars);
        for &literal in literals {
            assignment.assign_literal(literal).map_err(SatError::Invalid)?;
        }
        Ok(assignment)
    }

    /// Makes `literal` true; an error if it is out of range or its variable has the other value.
    pub(crate) fn assign_literal(&mut self, literal: i32) -> std::result::Result<(), String> {
        check_literal(literal, self.values.len())?;
        let slot = &mut self.values[literal.unsigned_abs() as usize - 1];
        match *slot {
            Some(value) if value != (literal > 0) => {
                Err(format!("variable {} is given both values", literal.unsigned_abs()))
            }
            _ => {
                *slot = Some(literal > 0);
                Ok(())
            }
        }
    }

    /// The number of variables, assigned or not.
    pub fn num_vars(&self) -> usize {
        self.values.len()
    }

    /// The value of variable `var` (1-based); `None` if unassigned or out of range.
    pub fn value(&self, var: usize) -> Option<bool> {
        self.values.get(var.checked_sub(1)?).copied().flatten()
    }

    /// Sets variable `var` (1-based); an error if it is out of range.
    pub fn set(&mut self, var: usize, value: Option<bool>) -> Result<()> {
        let n = self.values.len();
        match var.checked_sub(1).and_then(|i| self.values.get_mut(i)) {
            Some(slot) => {
                *slot = value;
                Ok(())
            }
            None => Err(SatError::Invalid(format!("variable {var} is not in 1..={n}"))),
        }
    }

    /// The value of a DIMACS literal: `None` if its variable is unassigned or out of range.
    pub fn literal_value(&self, literal: i32) -> Option<bool> {
        self.value(literal.unsigned_abs() as usize).map(|v| v == (literal > 0))
    }

    /// The values of variables `1..=num_vars`, in order.
    pub fn values(&self) -> &[Option<bool>] {
        &self.values
    }

    /// The true literals, by variable (unassigned variables are left out).
    pub fn literals(&self) -> impl Iterator<Item = i32> + '_ {
        // Variables past i32::MAX, which no formula has, cannot be written as literals.
        self.values.iter().zip(1..=i32::MAX).filter_map(|(value, var)| value.map(|v| if v { var } else { -var }))
    }

    /// How many variables have a value.
    pub fn num_assigned(&self) -> usize {
        self.values.iter().filter(|v| v.is_some()).count()
    }

    /// Whether every variable has a value.
    pub fn is_complete(&self) -> bool {
        self.values.iter().all(Option::is_some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_values_and_errors() {
        let mut a = Assignment::from_literals(4, &[1, -3, 1]).unwrap();
        assert_eq!(a.values(), [Some(true), None, Some(false), None]);
        assert_eq!(a.literal_value(-3), Some(true));
        assert_eq!(a.literal_value(2), None);
        assert_eq!(a.literal_value(9), None);
        assert_eq!(a.value(0), None);
        assert_eq!(a.num_assigned(), 2);
        assert!(!a.is_complete());
        a.set(2, Some(true)).unwrap();
        a.set(4, Some(false)).unwrap();
        assert!(a.is_complete());
        assert!(a.set(5, Some(true)).is_err());
        assert!(a.set(0, Some(true)).is_err());
        assert_eq!(a.literals().collect::<Vec<_>>(), [1, 2, -3, -4]);
        let e = Assignment::from_literals(4, &[2, -2]).unwrap_err().to_string();
        assert!(e.contains("variable 2 is given both values"), "{e}");
        assert!(Assignment::from_literals(4, &[5]).is_err());
    }
}
