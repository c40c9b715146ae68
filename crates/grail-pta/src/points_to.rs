//! Solutions: each variable's set of targets, the file format they are written in, and a
//! comparison that names where two solutions part.
//!
//! A points-to file has one line per variable whose set is not empty:
//!
//! ```text
//! file    := line*
//! line    := (NAME ':' (whitespace NAME)*)? comment?
//! comment := '#' anything up to the end of the line (where a token begins)
//! ```
//!
//! for example `main.%p: @g main.x`. The line's first token is the variable's name with a `:`
//! appended; names may hold `:` themselves (`malloc@main:12`), so only the last `:` of that token
//! is the separator. Names are those of the constraint file ([`crate::text`]), which never start
//! with `#`. [`write_points_to`] sorts lines by name and each line's targets by name (byte
//! order), so two solvers' files of the same solution are the same file and `diff` shows where
//! they differ. Reading is strict: every name must be a variable of the constraints, and a
//! variable or a target given twice is an error naming the file and line. A line with no
//! targets (`p:`) is allowed and says the set is empty.

use std::io::Write;
use std::path::Path;

use crate::{Constraints, PtaError, Result, VarId};

/// A solution: for each variable, its targets as sorted ids.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PointsTo {
    sets: Vec<Vec<VarId>>,
}

impl PointsTo {
    /// A solution of `num_vars` empty sets.
    pub fn new(num_vars: usize) -> PointsTo {
        PointsTo { sets: vec![Vec::new(); num_vars] }
    }

    /// A solution from one set per variable, in any order and with repeats (they are sorted and
    /// made unique here).
    pub fn from_sets(mut sets: Vec<Vec<VarId>>) -> PointsTo {
        for set in &mut sets {
            set.sort_unstable();
            set.dedup();
        }
        PointsTo { sets }
    }

    pub fn num_vars(&self) -> usize {
        self.sets.len()
    }

    /// The targets of `v`, sorted by id; empty for a variable with none or not in the solution.
    pub fn get(&self, v: VarId) -> &[VarId] {
        self.sets.get(v as usize).map_or(&[], Vec::as_slice)
    }

    /// Each variable and its targets, in id order.
    pub fn iter(&self) -> impl Iterator<Item = (VarId, &[VarId])> {
        self.sets.iter().enumerate().map(|(v, set)| (v as VarId, set.as_slice()))
    }

    /// The sum of the sets' sizes: the number of points-to facts.
    pub fn total(&self) -> usize {
        self.sets.iter().map(Vec::len).sum()
    }

    /// Whether two variables may point to a common target.
    pub fn may_alias(&self, a: VarId, b: VarId) -> bool {
        let (mut x, mut y) = (self.get(a).iter().peekable(), self.get(b).iter().peekable());
        while let (Some(&&p), Some(&&q)) = (x.peek(), y.peek()) {
            match p.cmp(&q) {
                std::cmp::Ordering::Less => drop(x.next()),
                std::cmp::Ordering::Greater => drop(y.next()),
                std::cmp::Ordering::Equal => return true,
            }
        }
        false
    }
}

/// Where two solutions first differ: the variable (the lowest id whose sets differ) and the
/// targets only one of them has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    pub var: VarId,
    pub only_in_a: Vec<VarId>,
    pub only_in_b: Vec<VarId>,
}

impl Difference {
    /// The difference in words, with the variables' names.
    pub fn describe(&self, constraints: &Constraints) -> String {
        let name = |v: VarId| {
            if (v as usize) < constraints.num_vars() { constraints.name(v).to_string() } else { format!("#{v}") }
        };
        let list = |set: &[VarId]| {
            if set.is_empty() {
                "nothing".to_string()
            } else {
                set.iter().map(|&v| name(v)).collect::<Vec<_>>().join(" ")
            }
        };
        format!(
            "the sets of `{}` differ: only the first has {}, only the second has {}",
            name(self.var),
            list(&self.only_in_a),
            list(&self.only_in_b)
        )
    }
}

/// The first variable (by id) whose sets in `a` and `b` differ, or `None` if the solutions are
/// the same; a variable one solution does not cover counts as having an empty set there.
pub fn compare(a: &PointsTo, b: &PointsTo) -> Option<Difference> {
    (0..a.num_vars().max(b.num_vars()) as VarId).find_map(|v| {
        let (x, y) = (a.get(v), b.get(v));
        (x != y).then(|| Difference {
            var: v,
            only_in_a: x.iter().filter(|t| y.binary_search(t).is_err()).copied().collect(),
            only_in_b: y.iter().filter(|t| x.binary_search(t).is_err()).copied().collect(),
        })
    })
}

/// Writes the non-empty sets of `points_to`, named after `constraints`' variables, to `path`
/// (replaced only once complete; `-` writes to standard output).
pub fn write_points_to(constraints: &Constraints, points_to: &PointsTo, path: &Path) -> Result<()> {
    check_fits(constraints, points_to)?;
    crate::write_atomically(path, |out| write_points_to_into(constraints, points_to, out))
}

/// [`write_points_to`] to any writer (the solution must be over `constraints`' variables).
pub fn write_points_to_into(
    constraints: &Constraints,
    points_to: &PointsTo,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    check_fits(constraints, points_to)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()))?;
    let mut vars: Vec<VarId> = points_to.iter().filter(|(_, set)| !set.is_empty()).map(|(v, _)| v).collect();
    vars.sort_unstable_by(|&a, &b| constraints.name(a).cmp(constraints.name(b)));
    let mut targets = Vec::new();
    let mut line = String::new();
    for v in vars {
        targets.clear();
        targets.extend(points_to.get(v).iter().map(|&t| constraints.name(t)));
        targets.sort_unstable();
        line.clear();
        line.push_str(constraints.name(v));
        line.push(':');
        for t in &targets {
            line.push(' ');
            line.push_str(t);
        }
        line.push('\n');
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}

fn check_fits(constraints: &Constraints, points_to: &PointsTo) -> Result<()> {
    let n = constraints.num_vars();
    if points_to.num_vars() > n {
        return Err(PtaError::Invalid(format!(
            "the solution covers {} variables, the constraints have {n}",
            points_to.num_vars()
        )));
    }
    if let Some((v, t)) =
        points_to.iter().find_map(|(v, set)| set.last().filter(|&&t| t as usize >= n).map(|&t| (v, t)))
    {
        return Err(PtaError::Invalid(format!("variable {v} points to {t}, which is not a variable ({n} variables)")));
    }
    Ok(())
}

/// Reads a points-to file over `constraints`' variables.
pub fn read_points_to(path: &Path, constraints: &Constraints) -> Result<PointsTo> {
    parse_points_to(&crate::read_text(path)?, &path.display().to_string(), constraints)
}

/// Parses a points-to file over `constraints`' variables; `file_name` is what errors call it.
pub fn parse_points_to(text: &str, file_name: &str, constraints: &Constraints) -> Result<PointsTo> {
    let mut sets: Vec<Vec<VarId>> = vec![Vec::new(); constraints.num_vars()];
    // The line that gave each variable's set.
    let mut given: Vec<usize> = vec![0; constraints.num_vars()];
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let fail = |message: String| PtaError::Malformed { path: file_name.to_string(), line: number, message };
        let mut tokens = line.split_whitespace().take_while(|t| !t.starts_with('#'));
        let Some(first) = tokens.next() else { continue };
        let name = match first.strip_suffix(':') {
            Some(name) if !name.is_empty() => name,
            _ => return Err(fail(format!("`{first}`: expected `NAME:` and then the targets of NAME"))),
        };
        let lookup = |name: &str, what: &str| {
            constraints.id(name).ok_or_else(|| fail(format!("{what} `{name}` is not a variable of the constraints")))
        };
        let v = lookup(name, "the variable")?;
        if given[v as usize] != 0 {
            return Err(fail(format!("a second line for `{name}` (the first is line {})", given[v as usize])));
        }
        given[v as usize] = number;
        let set = &mut sets[v as usize];
        for target in tokens {
            set.push(lookup(target, "the target")?);
        }
        set.sort_unstable();
        if let Some(pair) = set.windows(2).find(|w| w[0] == w[1]) {
            return Err(fail(format!("`{name}` lists `{}` twice", constraints.name(pair[0]))));
        }
    }
    Ok(PointsTo { sets })
}
