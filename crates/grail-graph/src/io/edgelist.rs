//! SNAP-style edge lists: `.el` (`u v` per line) and weighted `.wel` (`u v w` per line).
//!
//! - Node ids are 0-based decimal integers below `u32::MAX`. Weights are integer weights (`u32`)
//!   when every one is a whole number from 0 to `u32::MAX` (`7`, also `7.0` or `7e0`), or, when
//!   any is negative or not a whole number (`-2`, `0.25`, `1e-3`), real weights, every one read
//!   as Matrix Market's `real` values are ([`RealWeights`]: by default `f32`, where NaN, an
//!   infinity or a value `f32` cannot hold is an error). A file of whole numbers with one above
//!   `u32::MAX` is an error rather than a file of real weights, which would lose its digits.
//!   Whichever kind the file has, an error names the first line that breaks that kind's rules.
//!   Fields are separated by spaces or tabs; `\r\n` line ends are accepted.
//! - Lines whose first non-blank character is `#` or `%` are comments; blank lines are ignored.
//! - Every other line must hold exactly 2 (`.el`) or 3 (`.wel`) fields.
//! - Each line is the directed edge `u -> v`; edges keep the order of the file.
//! - There is no header, so the node count is the largest id plus one: nodes above the largest
//!   id that appears (trailing isolated nodes) cannot be represented, and are lost when a graph
//!   that has them is written and read back.
//!
//! The writer emits one line per edge in CSR order; `.el` drops weights.

use std::io::Write;
use std::ops::Range;

use rayon::prelude::*;

use super::RealWeights;
use crate::builder::EdgeList;
use crate::error::ParseError;
use crate::graph::Graph;
use crate::io::text::{self, EdgeSlots, Scanner, TextError};
use crate::progress::Progress;

pub(crate) fn parse(bytes: &[u8], weighted: bool, progress: &dyn Progress) -> Result<EdgeList, ParseError> {
    parse_with(bytes, weighted, progress, text::MIN_CHUNK)
}

/// A `.wel` file: integer weights when they all are whole numbers that fit in 32 bits, real
/// weights (treated as `real` says) when any is negative or not whole.
pub(crate) fn parse_weighted(bytes: &[u8], real: RealWeights, progress: &dyn Progress) -> Result<EdgeList, ParseError> {
    parse_weighted_with(bytes, real, progress, text::MIN_CHUNK)
}

fn parse_weighted_with(
    bytes: &[u8],
    real: RealWeights,
    progress: &dyn Progress,
    min_chunk: usize,
) -> Result<EdgeList, ParseError> {
    if real != RealWeights::Keep {
        return parse_reals(bytes, real, progress, min_chunk);
    }
    // Integers first: the usual case, and the fast one.
    let integer_error = match parse_edges_with(bytes, Weights::Integer, progress, min_chunk) {
        Ok(edges) => return Ok(edges),
        Err(e) => e,
    };
    // Which error is the file's depends on its kind, not on which pass stopped first: in a file
    // of real weights, the integer pass stops at its first real weight, which is no error at all,
    // and the error is the real pass's; in a file of integers, the real pass accepts what the
    // integer rules refuse (a weight above 2^32), and the error is the integer pass's.
    let reals = parse_reals(bytes, real, progress, min_chunk);
    let surely_real =
        |edges: &EdgeList| edges.weights.iter().flatten().any(|&w| makes_weights_real(f64::from(f32::from_bits(w))));
    match reals {
        Ok(edges) if surely_real(&edges) => Ok(edges),
        // A value that is not whole may round to a whole `f32` (`16777217.5`): the text decides.
        reals if has_real_weight(bytes, min_chunk) => reals,
        _ => Err(integer_error),
    }
}

/// Whether a weight read as `value` makes a `.wel` file's weights real: it is negative or not a
/// whole number. NaN and infinities are errors of either kind, so they decide nothing.
fn makes_weights_real(value: f64) -> bool {
    value.is_finite() && (value < 0.0 || value.fract() != 0.0)
}

/// Whether some line's weight, as written, [makes the file's weights real](makes_weights_real).
/// Lines are taken as the parser takes them; a malformed one is left to the parser's errors.
fn has_real_weight(bytes: &[u8], min_chunk: usize) -> bool {
    text::chunk_ranges(bytes, 0, min_chunk).into_par_iter().any(|range| {
        let mut s = Scanner::new(bytes, range);
        while !s.is_done() {
            s.skip_spaces();
            if !matches!(s.peek(), None | Some(b'\n' | b'#' | b'%')) {
                s.word();
                s.word();
                let token = s.word();
                if std::str::from_utf8(token).ok().and_then(|t| t.parse::<f64>().ok()).is_some_and(makes_weights_real) {
                    return true;
                }
            }
            s.next_line();
        }
        false
    })
}

/// An integer weight written as a whole number in another way than digits alone (`7.0`, `7e0`,
/// as tools that hold every weight as a float write them), or `None`.
#[cold]
fn whole_weight(token: &[u8]) -> Option<u32> {
    let value = std::str::from_utf8(token).ok()?.parse::<f64>().ok()?;
    let whole = value.is_finite() && value.is_sign_positive() && value.fract() == 0.0;
    (whole && value <= f64::from(u32::MAX)).then_some(value as u32)
}

/// A `.wel` file whose weights are read as real values (see [`text::real_weight`]).
fn parse_reals(
    bytes: &[u8],
    real: RealWeights,
    progress: &dyn Progress,
    min_chunk: usize,
) -> Result<EdgeList, ParseError> {
    let scale =
        if real == RealWeights::Scale { text::scale_factor(bytes, 0, 2).map_err(|e| e.locate(bytes))? } else { 1.0 };
    let mode = if real == RealWeights::Ignore { Weights::Skip } else { Weights::Real { real, scale } };
    let mut edges = parse_edges_with(bytes, mode, progress, min_chunk)?;
    edges.real = text::keeps_reals(real);
    Ok(edges)
}

/// How a line's third field is read.
#[derive(Debug, Clone, Copy)]
enum Weights {
    None,
    /// A third field is there, and ignored (`--weights ignore`).
    Skip,
    Integer,
    Real {
        real: RealWeights,
        scale: f64,
    },
}

fn parse_with(bytes: &[u8], weighted: bool, progress: &dyn Progress, min_chunk: usize) -> Result<EdgeList, ParseError> {
    parse_edges_with(bytes, if weighted { Weights::Integer } else { Weights::None }, progress, min_chunk)
}

fn parse_edges_with(
    bytes: &[u8],
    mode: Weights,
    progress: &dyn Progress,
    min_chunk: usize,
) -> Result<EdgeList, ParseError> {
    let weighted = !matches!(mode, Weights::None | Weights::Skip);
    progress.begin(if weighted { "parsing wel" } else { "parsing el" }, Some(bytes.len() as u64));
    let ranges = text::chunk_ranges(bytes, 0, min_chunk);
    let parsed =
        text::parse_edges(bytes, &ranges, 1, weighted, progress, |range, slots| parse_chunk(bytes, range, mode, slots));
    progress.finish();
    let (mut edges, max_ids) = parsed?;
    // Ids are below u32::MAX, so the count fits.
    edges.num_nodes = max_ids.into_iter().flatten().max().map_or(0, |m| m + 1);
    Ok(edges)
}

/// Parses the lines of one chunk into `slots`; returns the largest id.
fn parse_chunk(
    bytes: &[u8],
    range: Range<usize>,
    mode: Weights,
    slots: &mut EdgeSlots,
) -> Result<Option<u32>, TextError> {
    let weighted = !matches!(mode, Weights::None | Weights::Skip);
    let mut max_id = 0u32;
    let mut any = false;
    let mut s = Scanner::new(bytes, range);
    while !s.is_done() {
        s.skip_spaces();
        match s.peek() {
            None => break,
            Some(b'\n') => {
                s.next_line();
                continue;
            }
            Some(b'#' | b'%') => {
                s.next_line();
                continue;
            }
            Some(_) => {}
        }
        let line_start = s.pos();
        let line = parse_line(&mut s, mode);
        let columns = !matches!(mode, Weights::None);
        let (u, v, w) = line.map_err(|e| field_count_error(bytes, line_start, columns).unwrap_or(e))?;
        if weighted {
            slots.push_weighted(u, v, w);
        } else {
            slots.push(u, v);
        }
        max_id = max_id.max(u).max(v);
        any = true;
    }
    Ok(any.then_some(max_id))
}

/// One edge line: `u v` or `u v w`.
#[inline(always)]
fn parse_line(s: &mut Scanner, mode: Weights) -> Result<(u32, u32, u32), TextError> {
    let u = s.node0()?;
    let v = s.node0()?;
    let w = match mode {
        Weights::None => 1,
        Weights::Skip => {
            s.word();
            1
        }
        Weights::Integer => match s.weight("a weight") {
            Ok(w) => w,
            // The integer rules' error stands for anything else, a value above 2^32 included.
            Err(e) => whole_weight(s.token()).ok_or(e)?,
        },
        Weights::Real { real, scale } => text::real_weight(s, real, scale)?,
    };
    s.end_line(if matches!(mode, Weights::None) { "the target node" } else { "the weight" })?;
    Ok((u, v, w))
}

/// The error for a line with the wrong number of fields, if that is what is wrong with it.
#[cold]
fn field_count_error(bytes: &[u8], line_start: usize, weighted: bool) -> Option<TextError> {
    let found = text::fields_on_line(bytes, line_start);
    let (expected, fields) = if weighted { (3, "source target weight") } else { (2, "source target") };
    if found == expected {
        return None;
    }
    let hint = if !weighted && found == 3 { "; for weighted edges use --format wel" } else { "" };
    Some(TextError::new(line_start, format!("expected {expected} fields ({fields}), found {found}{hint}")))
}

pub(crate) fn write(
    graph: &Graph,
    weighted: bool,
    out: &mut dyn Write,
    progress: &dyn Progress,
) -> std::io::Result<()> {
    let csr = graph.out();
    text::write_edge_lines(csr, b"", out, progress, b"", 0, weighted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::NoProgress;

    #[test]
    fn chunking_does_not_change_the_result() {
        let mut text = String::from("# comment\n\n");
        for i in 0..500u32 {
            text.push_str(&format!("{} {}\t{}\r\n", i % 37, (i * 7) % 101, i));
            if i % 50 == 0 {
                text.push_str("% another comment\n   \n");
            }
        }
        let whole = parse_with(text.as_bytes(), true, &NoProgress, usize::MAX).unwrap();
        for min in [1, 7, 64, 1000] {
            assert_eq!(parse_with(text.as_bytes(), true, &NoProgress, min).unwrap(), whole);
        }
        assert_eq!(whole.num_nodes, 101);
        assert_eq!(whole.len(), 500);
    }

    #[test]
    fn first_error_wins_across_chunks() {
        let mut text = String::new();
        for i in 0..300 {
            text.push_str(if i == 100 || i == 250 { "1 x\n" } else { "1 2\n" });
        }
        let err = parse_with(text.as_bytes(), false, &NoProgress, 16).unwrap_err();
        assert_eq!(err.to_string(), "line 101: expected a node id, found 'x'");
    }

    /// The file's kind, and so its error, is the same however it is cut into chunks: the weight
    /// that makes it real may be in another chunk than the error, before it or after it.
    #[test]
    fn the_kind_and_the_error_do_not_depend_on_chunks() {
        let lines = |special: &[(usize, &str)]| {
            (0..400).map(|i| special.iter().find(|s| s.0 == i).map_or("1 2 3\n", |s| s.1)).collect::<String>()
        };
        let cases = [
            (lines(&[(100, "1 2 zz\n"), (300, "1 2 0.5\n")]), Some("line 101: expected a real value, found 'zz'")),
            (lines(&[(100, "1 2 0.5\n"), (300, "1 2 zz\n")]), Some("line 301: expected a real value, found 'zz'")),
            (lines(&[(100, "1 2 -4\n"), (300, "1 2 nan\n")]), Some("line 301: value nan cannot be a weight")),
            (lines(&[(100, "1 2 5000000000\n"), (300, "1 2 -1\n")]), None),
            (
                lines(&[(100, "1 2 5000000000\n"), (300, "1 2 x\n")]),
                Some("line 101: weight 5000000000 does not fit in 32 bits"),
            ),
        ];
        for (text, expected) in cases {
            for min in [16, 1000, usize::MAX] {
                let parsed = parse_weighted_with(text.as_bytes(), RealWeights::Keep, &NoProgress, min);
                match expected {
                    Some(message) => assert_eq!(parsed.unwrap_err().to_string(), message, "chunks of {min}"),
                    None => assert!(parsed.unwrap().real, "chunks of {min}"),
                }
            }
        }
    }
}
