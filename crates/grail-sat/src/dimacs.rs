//! DIMACS files: CNF formulas and the `v`-line solutions SAT solvers print.
//!
//! A CNF file is comment lines (`c ...`), one header `p cnf <variables> <clauses>` before any
//! clause, then clauses as literals each ended by `0`; a clause may span lines and a line may
//! hold several clauses. A line starting with `%` ends the formula (SATLIB's files end with
//! `%` and a stray `0`). Reading is strict where leniency would hide damage:
//!
//! - the number of clauses must equal the header's (a truncated or concatenated file is
//!   caught, not silently read as another formula);
//! - the last clause must end with `0` too: a file cut short in its last clause would
//!   otherwise read as a formula with a shorter, different clause;
//! - a lone `0` is an empty clause, which is read (it is valid DIMACS) and makes the formula
//!   unsatisfiable; duplicate literals and tautologies are kept as written.
//!
//! Input is never trusted to be well-formed: every error names the file and line and says what
//! was expected; nothing panics. Files are written through grail's atomic writer, to a temporary
//! file beside the target renamed into place, so an error leaves no half-written file (`-`
//! writes to standard output).

use std::io::Write;
use std::path::Path;

use crate::{Assignment, Formula, MAX_VARIABLES, Result, SatError};

/// Reads a DIMACS CNF file.
pub fn read_cnf(path: &Path) -> Result<Formula> {
    parse_cnf_bytes(&read(path)?, &path.display().to_string())
}

/// Parses DIMACS CNF text; `name` (a file name) is what errors call it.
pub fn parse_cnf(text: &str, name: &str) -> Result<Formula> {
    parse_cnf_bytes(text.as_bytes(), name)
}

/// Parses DIMACS CNF bytes (not necessarily UTF-8, which DIMACS does not promise).
pub fn parse_cnf_bytes(bytes: &[u8], name: &str) -> Result<Formula> {
    let fail = |line: usize, message: String| SatError::Malformed { path: name.to_string(), line, message };
    // (variables, clauses, line) of the header once read.
    let mut header: Option<(usize, u64, usize)> = None;
    let mut literals: Vec<i32> = Vec::new();
    let mut starts = vec![0usize];
    // The line where the clause being read started, and the line of its last token.
    let mut open: Option<usize> = None;
    let mut last_token_line = 0;
    let mut last_line = 1;
    for (number, line) in lines(bytes) {
        let mut fields = tokens(line).peekable();
        let Some(first) = fields.peek() else { continue };
        last_line = number;
        match first[0] {
            b'c' => continue,
            b'%' => break,
            b'p' => {
                if let Some((_, _, at)) = header {
                    return Err(fail(number, format!("a second header (the first is on line {at})")));
                }
                let fields: Vec<&[u8]> = fields.collect();
                let (vars, clauses) = parse_header(&fields).map_err(|m| fail(number, m))?;
                // Reserve from the header, but never more than the text could hold.
                let cap = bytes.len() / 2;
                starts.reserve((clauses as usize).min(cap));
                literals.reserve((clauses as usize).saturating_mul(3).min(cap));
                header = Some((vars, clauses, number));
            }
            _ => {
                let Some((vars, clauses, _)) = header else {
                    return Err(fail(number, "a clause before the header `p cnf <variables> <clauses>`".into()));
                };
                for token in fields {
                    let Some(value) = parse_int(token) else {
                        return Err(fail(
                            number,
                            format!(
                                "`{}` is not an integer: expected a literal or the 0 that ends a clause",
                                show(token)
                            ),
                        ));
                    };
                    if open.is_none() {
                        let count = starts.len() - 1;
                        if count as u64 >= clauses {
                            return Err(fail(
                                number,
                                format!("clause {} is more than the {clauses} the header declares", count + 1),
                            ));
                        }
                        open = Some(number);
                    }
                    last_token_line = number;
                    if value == 0 {
                        starts.push(literals.len());
                        open = None;
                    } else if value.unsigned_abs() > vars as u64 {
                        return Err(fail(
                            number,
                            format!(
                                "literal {}: variable {} is not in 1..={vars} (the header's count)",
                                show(token),
                                show(token.strip_prefix(b"-").unwrap_or(token))
                            ),
                        ));
                    } else {
                        literals.push(value as i32);
                    }
                }
            }
        }
    }
    let Some((vars, clauses, at)) = header else {
        return Err(fail(last_line, "no header `p cnf <variables> <clauses>`".into()));
    };
    if let Some(from) = open {
        return Err(fail(last_token_line, format!("the last clause (from line {from}) does not end with 0")));
    }
    let count = starts.len() - 1;
    if (count as u64) < clauses {
        return Err(fail(at, format!("the header declares {clauses} clauses, the file has {count}")));
    }
    Ok(Formula::from_flat_unchecked(vars, literals, starts))
}

/// The variable and clause counts of a `p cnf V C` header.
fn parse_header(fields: &[&[u8]]) -> std::result::Result<(usize, u64), String> {
    let expected = "expected the header `p cnf <variables> <clauses>`";
    let found = fields.iter().map(|f| show(f)).collect::<Vec<_>>().join(" ");
    let [b"p", format, vars, clauses] = fields else {
        return Err(format!("{expected}, found `{found}`"));
    };
    if *format != b"cnf" {
        return Err(format!("format `{}`: only `cnf` is supported ({expected})", show(format)));
    }
    let count = |field: &[u8], what: &str| match parse_int(field) {
        Some(n) if n >= 0 => Ok(n as u64),
        _ => Err(format!("number of {what} `{}` is not a non-negative integer ({expected})", show(field))),
    };
    let (vars, clauses) = (count(vars, "variables")?, count(clauses, "clauses")?);
    if vars > MAX_VARIABLES as u64 {
        return Err(format!("{vars} variables: at most {MAX_VARIABLES} are supported"));
    }
    Ok((vars as usize, clauses))
}

/// Writes `formula` as DIMACS CNF, one clause a line; the file is replaced only once complete.
pub fn write_cnf(formula: &Formula, path: &Path) -> Result<()> {
    write_atomically(path, |out| {
        writeln!(out, "p cnf {} {}", formula.num_vars(), formula.num_clauses())?;
        let mut line = Vec::with_capacity(256);
        for clause in formula.clauses() {
            line.clear();
            for &literal in clause {
                push_int(&mut line, literal);
                line.push(b' ');
            }
            line.extend_from_slice(b"0\n");
            out.write_all(&line)?;
        }
        Ok(())
    })
}

/// Reads a solution file (see [`parse_solution`]) for a formula over `num_vars` variables.
pub fn read_solution(path: &Path, num_vars: usize) -> Result<Assignment> {
    parse_solution_bytes(&read(path)?, &path.display().to_string(), num_vars)
}

/// Parses a solution as SAT solvers print it, for a formula over `num_vars` variables: `v`
/// lines of literals ended by one `0` (there may be several `v` lines), optional `c` comments
/// and an `s SATISFIABLE` status line. Variables not named stay unassigned; a variable out of
/// range, one given both values, values after the `0`, a missing `0`, or a status other than
/// `SATISFIABLE` are errors.
pub fn parse_solution(text: &str, name: &str, num_vars: usize) -> Result<Assignment> {
    parse_solution_bytes(text.as_bytes(), name, num_vars)
}

/// [`parse_solution`] on bytes.
pub fn parse_solution_bytes(bytes: &[u8], name: &str, num_vars: usize) -> Result<Assignment> {
    let fail = |line: usize, message: String| SatError::Malformed { path: name.to_string(), line, message };
    let mut assignment = Assignment::new(num_vars);
    // The line of the terminating 0, once read.
    let mut ended: Option<usize> = None;
    let mut last_line = 1;
    for (number, line) in lines(bytes) {
        let mut fields = tokens(line);
        let Some(first) = fields.next() else { continue };
        last_line = number;
        match first {
            [b'c', ..] => {}
            b"s" => match fields.next() {
                Some(b"SATISFIABLE") => {}
                Some(status) => {
                    return Err(fail(
                        number,
                        format!("the status is `{}`: expected `SATISFIABLE` before values", show(status)),
                    ));
                }
                None => return Err(fail(number, "an empty status line: expected `s SATISFIABLE`".into())),
            },
            b"v" => {
                for token in fields {
                    if let Some(at) = ended {
                        return Err(fail(
                            number,
                            format!("`{}` after the 0 that ended the values on line {at}", show(token)),
                        ));
                    }
                    let value = parse_int(token).filter(|v| i32::try_from(*v).is_ok()).ok_or_else(|| {
                        fail(number, format!("`{}` is not a literal: expected a literal or the final 0", show(token)))
                    })?;
                    if value == 0 {
                        ended = Some(number);
                    } else {
                        assignment.assign_literal(value as i32).map_err(|m| fail(number, m))?;
                    }
                }
            }
            _ => {
                return Err(fail(
                    number,
                    format!("`{}`: expected `v` value lines, an `s` status line or `c` comments", show(first)),
                ));
            }
        }
    }
    if ended.is_none() {
        return Err(fail(last_line, "the values do not end with 0 (expected `v <literals> 0`)".into()));
    }
    Ok(assignment)
}

/// Writes the assigned variables as `v` lines of at most about 80 characters, ended by `0`;
/// unassigned variables are left out. No `s` status line is written: whether the values
/// satisfy a formula is for [`crate::check`] to say.
pub fn write_solution(assignment: &Assignment, path: &Path) -> Result<()> {
    write_atomically(path, |out| {
        let mut line = Vec::with_capacity(96);
        line.push(b'v');
        for literal in assignment.literals().chain([0]) {
            let before = line.len();
            line.push(b' ');
            push_int(&mut line, literal);
            if line.len() > 80 && before > 1 {
                out.write_all(&line[..before])?;
                out.write_all(b"\n")?;
                let rest = line[before..].to_vec();
                line.clear();
                line.push(b'v');
                line.extend_from_slice(&rest);
            }
        }
        line.push(b'\n');
        out.write_all(&line)
    })
}

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|cause| SatError::Io { path: path.display().to_string(), cause })
}

/// Writes through grail's one atomic writer (standard output for `-`, special files written
/// through, links followed, a temporary file renamed into place and removed on interrupt).
fn write_atomically(path: &Path, write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    grail_graph::io::write_atomically(path, write).map_err(|e| match e {
        grail_graph::GraphError::Io { path, cause } => SatError::Io { path: path.display().to_string(), cause },
        other => SatError::Invalid(other.to_string()),
    })
}

/// The lines of a text, numbered from 1 (a `\r` before the newline counts as whitespace).
fn lines(bytes: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    bytes.split(|&b| b == b'\n').enumerate().map(|(i, line)| (i + 1, line))
}

fn tokens(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(|b| b.is_ascii_whitespace()).filter(|t| !t.is_empty())
}

/// A decimal integer with an optional sign; values past `i64` saturate (and are then out of
/// any range checked), anything else not a digit gives `None`.
fn parse_int(token: &[u8]) -> Option<i64> {
    let (negative, digits) = match token {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        _ => (false, token),
    };
    if digits.is_empty() {
        return None;
    }
    let mut value: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        value = value.saturating_mul(10).saturating_add(i64::from(d - b'0'));
    }
    Some(if negative { -value } else { value })
}

/// A token as errors quote it: lossy UTF-8, cut to 40 characters.
fn show(token: &[u8]) -> String {
    let text = String::from_utf8_lossy(token);
    match text.char_indices().nth(40) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.into_owned(),
    }
}

/// Appends the decimal text of `value` (faster than `write!` for the millions a big formula has).
fn push_int(out: &mut Vec<u8>, value: i32) {
    if value < 0 {
        out.push(b'-');
    }
    let mut magnitude = value.unsigned_abs();
    let mut digits = [0u8; 10];
    let mut n = 0;
    loop {
        digits[n] = b'0' + (magnitude % 10) as u8;
        n += 1;
        magnitude /= 10;
        if magnitude == 0 {
            break;
        }
    }
    out.extend(digits[..n].iter().rev());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_parse_and_print() {
        assert_eq!(parse_int(b"-12"), Some(-12));
        assert_eq!(parse_int(b"+7"), Some(7));
        assert_eq!(parse_int(b"0"), Some(0));
        assert_eq!(parse_int(b"-"), None);
        assert_eq!(parse_int(b"1x"), None);
        assert_eq!(parse_int(b"99999999999999999999999"), Some(i64::MAX));
        for v in [0, 1, -1, 10, -10, 123456789, i32::MAX, i32::MIN] {
            let mut out = Vec::new();
            push_int(&mut out, v);
            assert_eq!(out, v.to_string().as_bytes());
        }
        assert_eq!(show(&[b'x'; 50]), format!("{}...", "x".repeat(40)));
    }
}
