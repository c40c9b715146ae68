//! Variables and inclusion constraints.

use std::collections::HashMap;
use std::fmt;

use crate::{PtaError, Result};

/// A variable's number: variables are numbered `0..n` in the order they were first named, which
/// is also the vertex numbering a graph program over the constraints uses.
pub type VarId = u32;

/// One inclusion constraint. `dst` is always the left side as written, `src` the right side;
/// "the set of `x`" is the set of variables `x` may point to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Constraint {
    /// `p = &a`: `a` is in the set of `p` (`dst` is `p`, `src` is `a`).
    AddressOf { dst: VarId, src: VarId },
    /// `p = q`: the set of `p` includes the set of `q`.
    Copy { dst: VarId, src: VarId },
    /// `p = *q`: for each `a` in the set of `q`, the set of `p` includes the set of `a`.
    Load { dst: VarId, src: VarId },
    /// `*p = q`: for each `a` in the set of `p`, the set of `a` includes the set of `q`.
    Store { dst: VarId, src: VarId },
}

impl Constraint {
    /// The two variables, left side first.
    pub fn vars(self) -> (VarId, VarId) {
        match self {
            Constraint::AddressOf { dst, src }
            | Constraint::Copy { dst, src }
            | Constraint::Load { dst, src }
            | Constraint::Store { dst, src } => (dst, src),
        }
    }
}

/// A set of named variables and the constraints over them.
///
/// Names are unique; each names one variable. Constraints are kept in the order they were
/// added, duplicates included, so that a file reads back as it was written.
#[derive(Clone, Debug, Default)]
pub struct Constraints {
    names: Vec<String>,
    ids: HashMap<String, VarId>,
    constraints: Vec<Constraint>,
}

impl PartialEq for Constraints {
    fn eq(&self, other: &Self) -> bool {
        // `ids` is derived from `names`.
        self.names == other.names && self.constraints == other.constraints
    }
}

impl Eq for Constraints {}

/// Checks that `name` can be written in the text formats: not empty, no whitespace, no `=`, and
/// not starting with `*`, `&` (which are operators there) or `#` (which starts a comment).
pub fn check_name(name: &str) -> std::result::Result<(), String> {
    let Some(first) = name.chars().next() else {
        return Err("a variable name cannot be empty".into());
    };
    if matches!(first, '*' | '&' | '#') {
        return Err(format!("the name `{name}` starts with `{first}`, which the text format reads as an operator"));
    }
    if let Some(c) = name.chars().find(|&c| c.is_whitespace() || c == '=') {
        return Err(format!("the name {name:?} holds {c:?}: names are tokens without whitespace or `=`"));
    }
    Ok(())
}

impl Constraints {
    pub fn new() -> Constraints {
        Constraints::default()
    }

    /// The variable named `name`, added (with the next id) if there is none yet. An error if the
    /// name could not be written (see [`check_name`]) or all `u32` ids are taken.
    pub fn var(&mut self, name: &str) -> Result<VarId> {
        if let Some(&id) = self.ids.get(name) {
            return Ok(id);
        }
        check_name(name).map_err(PtaError::Invalid)?;
        let id = VarId::try_from(self.names.len())
            .ok()
            .filter(|&id| id < VarId::MAX)
            .ok_or_else(|| PtaError::Invalid(format!("more than {} variables", VarId::MAX)))?;
        self.names.push(name.to_string());
        self.ids.insert(name.to_string(), id);
        Ok(id)
    }

    /// The id of the variable named `name`, if there is one.
    pub fn id(&self, name: &str) -> Option<VarId> {
        self.ids.get(name).copied()
    }

    /// The name of variable `id`.
    ///
    /// # Panics
    ///
    /// If `id` is not a variable of these constraints (ids come from [`Constraints::var`]).
    pub fn name(&self, id: VarId) -> &str {
        &self.names[id as usize]
    }

    pub fn num_vars(&self) -> usize {
        self.names.len()
    }

    /// The variables' names in id order.
    pub fn names(&self) -> impl ExactSizeIterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }

    /// Adds a constraint over existing variables (an error names an id that is not one).
    pub fn push(&mut self, constraint: Constraint) -> Result<()> {
        let (dst, src) = constraint.vars();
        let n = self.names.len();
        if let Some(bad) = [dst, src].into_iter().find(|&v| v as usize >= n) {
            return Err(PtaError::Invalid(format!("variable {bad} does not exist ({n} variables)")));
        }
        self.constraints.push(constraint);
        Ok(())
    }

    /// Adds `p = &a`, naming (and so adding) the variables.
    pub fn address_of(&mut self, p: &str, a: &str) -> Result<()> {
        let (dst, src) = (self.var(p)?, self.var(a)?);
        self.push(Constraint::AddressOf { dst, src })
    }

    /// Adds `p = q`.
    pub fn copy(&mut self, p: &str, q: &str) -> Result<()> {
        let (dst, src) = (self.var(p)?, self.var(q)?);
        self.push(Constraint::Copy { dst, src })
    }

    /// Adds `p = *q`.
    pub fn load(&mut self, p: &str, q: &str) -> Result<()> {
        let (dst, src) = (self.var(p)?, self.var(q)?);
        self.push(Constraint::Load { dst, src })
    }

    /// Adds `*p = q`.
    pub fn store(&mut self, p: &str, q: &str) -> Result<()> {
        let (dst, src) = (self.var(p)?, self.var(q)?);
        self.push(Constraint::Store { dst, src })
    }

    /// The constraints in the order they were added.
    pub fn constraints(&self) -> &[Constraint] {
        &self.constraints
    }

    /// The number of constraints.
    pub fn len(&self) -> usize {
        self.constraints.len()
    }

    pub fn is_empty(&self) -> bool {
        self.constraints.is_empty()
    }

    /// How many constraints of each kind: address-of, copy, load, store.
    pub fn counts(&self) -> [usize; 4] {
        let mut counts = [0; 4];
        for c in &self.constraints {
            counts[match c {
                Constraint::AddressOf { .. } => 0,
                Constraint::Copy { .. } => 1,
                Constraint::Load { .. } => 2,
                Constraint::Store { .. } => 3,
            }] += 1;
        }
        counts
    }

    /// A constraint as the text format writes it (`p = &a`, `p = q`, `p = *q`, `*p = q`).
    pub fn show(&self, constraint: Constraint) -> impl fmt::Display + '_ {
        Shown { names: &self.names, constraint }
    }
}

struct Shown<'a> {
    names: &'a [String],
    constraint: Constraint,
}

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (dst, src) = self.constraint.vars();
        let name = |v: VarId| self.names.get(v as usize).map_or("?", String::as_str);
        let (p, q) = (name(dst), name(src));
        match self.constraint {
            Constraint::AddressOf { .. } => write!(f, "{p} = &{q}"),
            Constraint::Copy { .. } => write!(f, "{p} = {q}"),
            Constraint::Load { .. } => write!(f, "{p} = *{q}"),
            Constraint::Store { .. } => write!(f, "*{p} = {q}"),
        }
    }
}
