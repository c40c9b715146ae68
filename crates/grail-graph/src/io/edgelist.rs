//! SNAP-style edge lists: `.el` (`u v` per line) and weighted `.wel` (`u v w` per line).
//!
//! - Node ids are 0-based decimal integers below `u32::MAX`. Weights are decimal integers that
//!   fit in 32 bits (integer weights), or, when any is not a whole number (`0.25`, `1e-3`),
//!   real weights, treated as Matrix Market's `real` values are ([`RealWeights`]).
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

use super::RealWeights;
use crate::builder::EdgeList;
use crate::error::ParseError;
use crate::graph::Graph;
use crate::io::text::{self, EdgeSlots, Scanner, TextError};
use crate::progress::Progress;

pub(crate) fn parse(bytes: &[u8], weighted: bool, progress: &dyn Progress) -> Result<EdgeList, ParseError> {
    parse_with(bytes, weighted, progress, text::MIN_CHUNK)
}

/// A `.wel` file: integer weights when they all are whole numbers that fit in 32 bits, else
/// real weights treated as `real` says.
pub(crate) fn parse_weighted(bytes: &[u8], real: RealWeights, progress: &dyn Progress) -> Result<EdgeList, ParseError> {
    let integers = if matches!(real, RealWeights::Keep) { Some(parse(bytes, true, progress)) } else { None };
    match integers {
        Some(Ok(edges)) => Ok(edges),
        Some(Err(integer_error)) => {
            // Real weights only when some weight is not whole: a whole one that failed did not fit.
            match parse_reals(bytes, real, progress, text::MIN_CHUNK) {
                Ok(edges) if edges.weights.iter().flatten().any(|&w| f32::from_bits(w).fract() != 0.0) => Ok(edges),
                _ => Err(integer_error),
            }
        }
        None => parse_reals(bytes, real, progress, text::MIN_CHUNK),
    }
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
        Weights::Integer => s.weight("a weight")?,
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
}
