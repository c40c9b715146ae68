//! The constraint file format: one constraint a line, as the constraints are usually written
//! on paper, so that a file is easy to write by hand and to read in a diff.
//!
//! ```text
//! file       := line*
//! line       := statement? comment?            (whitespace between tokens is free)
//! statement  := NAME '=' '&' NAME               address-of   p = &a
//!             | NAME '=' NAME                   copy         p = q
//!             | NAME '=' '*' NAME               load         p = *q
//!             | '*' NAME '=' NAME               store        *p = q
//!             | 'var' NAME                      declaration  var p
//! comment    := '#' anything up to the end of the line
//! NAME       := FIRST REST*
//! FIRST      := any character except whitespace, '=', '*', '&' and '#'
//! REST       := any character except whitespace and '='
//! ```
//!
//! Tokens need no whitespace between them (`p=&a` is `p = &a`), but a name ends only at
//! whitespace or `=`: `*`, `&` and `#` are operators, or a comment, only where a token begins.
//! Inside a name they are ordinary characters, so names such as `malloc@main#2` or `a*b` are
//! fine, while a name *starting* with `*`, `&` or `#` cannot be written at all — a leading `*`
//! or `&` would read as the operator, a leading `#` as a comment — and
//! [`Constraints::var`](crate::Constraints::var) refuses such names for that reason. `var` is a
//! keyword only as the first token of a line followed by a name, so a variable may be called
//! `var` (`var = &a` is a constraint, `var var` declares it).
//!
//! Variables are numbered in the order the file first names them (the left side of a
//! constraint before its right side). `var NAME` names a variable without a constraint, so that
//! variables that occur in none still exist; [`write_constraints`] declares every variable first,
//! in id order, so a file reads back with the same ids. `*p = *q` and `*p = &a` are not
//! constraints (each needs a variable in between) and are errors, as is anything else that does
//! not match the grammar; every error names the file and line and says what was expected.

use std::io::Write;
use std::path::Path;

use crate::{Constraint, Constraints, PtaError, Result};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Token<'a> {
    Name(&'a str),
    Eq,
    Star,
    Amp,
}

impl Token<'_> {
    fn shown(self) -> String {
        match self {
            Token::Name(n) => n.to_string(),
            Token::Eq => "=".into(),
            Token::Star => "*".into(),
            Token::Amp => "&".into(),
        }
    }
}

/// The tokens of one line, up to a comment.
fn tokens(line: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    let mut rest = line;
    loop {
        rest = rest.trim_start();
        let Some(first) = rest.chars().next() else { break };
        let (token, len) = match first {
            '#' => break,
            '=' => (Token::Eq, 1),
            '*' => (Token::Star, 1),
            '&' => (Token::Amp, 1),
            _ => {
                let len = rest.find(|c: char| c.is_whitespace() || c == '=').unwrap_or(rest.len());
                (Token::Name(&rest[..len]), len)
            }
        };
        out.push(token);
        rest = &rest[len..];
    }
    out
}

/// Reads a constraint file.
pub fn read_constraints(path: &Path) -> Result<Constraints> {
    parse_constraints(&crate::read_text(path)?, &path.display().to_string())
}

/// Parses constraint text; `file_name` is what errors call it.
pub fn parse_constraints(text: &str, file_name: &str) -> Result<Constraints> {
    let mut constraints = Constraints::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let fail = |message: String| PtaError::Malformed { path: file_name.to_string(), line: number, message };
        let tokens = tokens(line);
        if tokens.is_empty() {
            continue;
        }
        let statement = statement(&tokens).map_err(fail)?;
        let mut var = |name: &str| constraints.var(name).map_err(|e| fail(e.to_string()));
        let constraint = match statement {
            Statement::Declare(name) => {
                var(name)?;
                continue;
            }
            Statement::AddressOf(p, a) => Constraint::AddressOf { dst: var(p)?, src: var(a)? },
            Statement::Copy(p, q) => Constraint::Copy { dst: var(p)?, src: var(q)? },
            Statement::Load(p, q) => Constraint::Load { dst: var(p)?, src: var(q)? },
            Statement::Store(p, q) => Constraint::Store { dst: var(p)?, src: var(q)? },
        };
        constraints.push(constraint).map_err(|e| fail(e.to_string()))?;
    }
    Ok(constraints)
}

enum Statement<'a> {
    Declare(&'a str),
    AddressOf(&'a str, &'a str),
    Copy(&'a str, &'a str),
    Load(&'a str, &'a str),
    Store(&'a str, &'a str),
}

const EXPECTED: &str = "expected `p = &a`, `p = q`, `p = *q`, `*p = q` or `var NAME`";

fn statement<'a>(tokens: &[Token<'a>]) -> std::result::Result<Statement<'a>, String> {
    use Token::*;
    let found = || tokens.iter().map(|t| t.shown()).collect::<Vec<_>>().join(" ");
    let (statement, used) = match tokens {
        [Name("var"), Name(name), ..] => (Statement::Declare(name), 2),
        [Name("var")] => return Err("`var` without a name: expected `var NAME`".into()),
        [Name(p), Eq, Amp, Name(a), ..] => (Statement::AddressOf(p, a), 4),
        [Name(p), Eq, Star, Name(q), ..] => (Statement::Load(p, q), 4),
        [Name(p), Eq, Name(q), ..] => (Statement::Copy(p, q), 3),
        [Star, Name(p), Eq, Name(q), ..] => (Statement::Store(p, q), 4),
        [Star, Name(_), Eq, Star, Name(_), ..] => {
            return Err(format!(
                "`{}` is not a constraint: load into a variable first (`t = *q`, then `*p = t`)",
                found()
            ));
        }
        [Star, Name(_), Eq, Amp, Name(_), ..] => {
            return Err(format!(
                "`{}` is not a constraint: take the address into a variable first (`t = &a`, then `*p = t`)",
                found()
            ));
        }
        [Name(p)] | [Star, Name(p)] => return Err(format!("expected `=` after `{p}` ({EXPECTED})")),
        [Name(_), Eq] | [Star, Name(_), Eq] => {
            return Err(format!("nothing after `=`: {EXPECTED}"));
        }
        _ => return Err(format!("{EXPECTED}, found `{}`", found())),
    };
    if let Some(extra) = tokens.get(used) {
        return Err(format!("unexpected `{}` after the statement (one a line): {EXPECTED}", extra.shown()));
    }
    Ok(statement)
}

/// Writes `constraints` to `path`: every variable declared (`var NAME`) in id order, then the
/// constraints in order, so that [`read_constraints`] gives back the same ids and constraints.
/// The file is replaced only once complete; `-` writes to standard output.
pub fn write_constraints(constraints: &Constraints, path: &Path) -> Result<()> {
    crate::write_atomically(path, |out| write_constraints_into(constraints, out))
}

/// [`write_constraints`] to any writer.
pub fn write_constraints_into(constraints: &Constraints, out: &mut dyn Write) -> std::io::Result<()> {
    let [a, c, l, s] = constraints.counts();
    writeln!(
        out,
        "# {} variables; {} constraints: {a} address-of, {c} copy, {l} load, {s} store",
        constraints.num_vars(),
        constraints.len()
    )?;
    for name in constraints.names() {
        writeln!(out, "var {name}")?;
    }
    for &c in constraints.constraints() {
        writeln!(out, "{}", constraints.show(c))?;
    }
    Ok(())
}
