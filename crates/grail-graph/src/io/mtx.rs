//! Matrix Market coordinate format (`.mtx`), read as the adjacency matrix of a graph.
//!
//! ```text
//! %%MatrixMarket matrix coordinate FIELD SYMMETRY
//! % comments
//! ROWS COLS NNZ
//! I J [VALUE]
//! ```
//!
//! - The header's words are case-insensitive. FIELD is `pattern` (no values: an unweighted
//!   graph), `integer`, or `real` (also spelled `double`); SYMMETRY is `general` or
//!   `symmetric`. `array` matrices, `complex` values and `skew-symmetric` or `hermitian`
//!   symmetry have no meaning as graphs and are rejected as unsupported.
//! - Lines starting with `%` are comments, and blank lines are ignored, anywhere after the header.
//! - The graph has `max(ROWS, COLS)` nodes. Each entry `I J` (1-based, `I <= ROWS`,
//!   `J <= COLS`) is the edge `I-1 -> J-1`; under `symmetric`, an off-diagonal entry is also the
//!   edge `J-1 -> I-1`, and a diagonal entry is one self-loop. There must be exactly NNZ entries.
//! - `integer` values must be non-negative and fit in 32 bits (integer weights). `real` values
//!   are never changed silently ([`RealWeights`]): by default they are real weights (`f32`; a
//!   value `f32` cannot hold is an error); asked to, the reader makes integer weights of them,
//!   refusing any that is not a whole number, rounding them to the nearest integer (halves away
//!   from zero), scaling them so that the smallest positive one is 1 and rounding (ratios kept to
//!   within rounding), or ignores them (the graph is read unweighted). As integers, a negative
//!   value, NaN, an infinity, or one that rounds above `u32::MAX` is an error. Real values are
//!   parsed by the standard library (`1.5`, `2e3`, `.5`), after a fast path for plain integers.
//!
//! The writer emits `coordinate integer general` or `coordinate real general` for weighted
//! graphs and `coordinate pattern general` otherwise, with one entry per edge in CSR order, so
//! graphs round-trip exactly (a real weight is written with the digits that read back as the
//! same `f32`).

use super::RealWeights;
use std::io::Write;
use std::ops::Range;

use crate::builder::EdgeList;
use crate::error::{Location, ParseError};
use crate::graph::{Graph, NodeId};
use crate::io::text::{self, EdgeSlots, Scanner, TextError};
use crate::progress::Progress;

pub(crate) fn parse(bytes: &[u8], real: RealWeights, progress: &dyn Progress) -> Result<EdgeList, ParseError> {
    parse_with(bytes, real, progress, text::MIN_CHUNK)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Pattern,
    Integer,
    Real(RealWeights),
}

#[derive(Debug, Clone, Copy)]
struct Header {
    field: Field,
    symmetric: bool,
    rows: u64,
    cols: u64,
    entries: u64,
    nodes: u32,
    body: usize,
    /// What real values are multiplied by before rounding (`--weights scale`), else 1.
    scale: f64,
}

fn parse_with(
    bytes: &[u8],
    real: RealWeights,
    progress: &dyn Progress,
    min_chunk: usize,
) -> Result<EdgeList, ParseError> {
    let mut s = Scanner::new(bytes, 0..bytes.len());
    let mut header = parse_header(&mut s).map_err(|e| e.locate(bytes))?;
    if header.field == Field::Real(RealWeights::Refuse) {
        header.field = Field::Real(real);
    }
    if real == RealWeights::Scale && matches!(header.field, Field::Real(_)) {
        header.scale = text::scale_factor(bytes, header.body, 2).map_err(|e| e.locate(bytes))?;
    }
    progress.begin("parsing mtx", Some(bytes.len() as u64));
    progress.advance(header.body as u64);
    let ranges = text::chunk_ranges(bytes, header.body, min_chunk);
    let weighted = header.field.weighted();
    let per_line = if header.symmetric { 2 } else { 1 };
    let parsed = text::parse_edges(bytes, &ranges, per_line, weighted, progress, |range, slots| {
        parse_chunk(bytes, range, &header, slots)
    });
    progress.finish();
    let (mut edges, counts) = parsed?;
    let found: u64 = counts.iter().sum();
    if found != header.entries {
        return Err(ParseError::new(
            Location::Whole,
            format!("header says {} entries, but the file has {found}", header.entries),
        ));
    }
    edges.num_nodes = header.nodes;
    edges.real = matches!(header.field, Field::Real(r) if text::keeps_reals(r));
    Ok(edges)
}

const BANNER: &str = "%%MatrixMarket matrix coordinate FIELD SYMMETRY";

fn parse_header(s: &mut Scanner) -> Result<Header, TextError> {
    let banner = s.word();
    if !banner.eq_ignore_ascii_case(b"%%MatrixMarket") {
        return Err(s.error(format!("expected the header '{BANNER}', found '{}'", text::quote(banner))));
    }
    let mut next = |what: &str| -> Result<String, TextError> {
        let word = s.word();
        if word.is_empty() {
            return Err(s.error(format!("expected {what} in the header '{BANNER}', found the end of the line")));
        }
        Ok(String::from_utf8_lossy(word).to_ascii_lowercase())
    };
    let object = next("the object 'matrix'")?;
    if object != "matrix" {
        return Err(s_error_unsupported(s, &object, "only 'matrix' objects are graphs"));
    }
    let format = next("the format 'coordinate'")?;
    match format.as_str() {
        "coordinate" => {}
        "array" => return Err(s_error_unsupported(s, &format, "only sparse 'coordinate' matrices are supported")),
        _ => {
            return Err(
                s.error(format!("expected the format 'coordinate', found '{}'", text::quote(format.as_bytes())))
            );
        }
    }
    let field = next("the field (pattern, integer or real)")?;
    let field = match field.as_str() {
        "pattern" => Field::Pattern,
        "integer" => Field::Integer,
        "real" | "double" => Field::Real(RealWeights::Refuse),
        "complex" => return Err(s_error_unsupported(s, &field, "use pattern, integer or real values")),
        _ => {
            return Err(s.error(format!(
                "expected the field pattern, integer or real, found '{}'",
                text::quote(field.as_bytes())
            )));
        }
    };
    let symmetry = next("the symmetry (general or symmetric)")?;
    let symmetric = match symmetry.as_str() {
        "general" => false,
        "symmetric" => true,
        "skew-symmetric" | "hermitian" => {
            return Err(s_error_unsupported(s, &symmetry, "use general or symmetric matrices"));
        }
        _ => {
            return Err(s.error(format!(
                "expected the symmetry general or symmetric, found '{}'",
                text::quote(symmetry.as_bytes())
            )));
        }
    };
    s.end_line("the symmetry")?;
    // Comments and blank lines, then the size line.
    loop {
        s.skip_spaces();
        match s.peek() {
            Some(b'%' | b'\n') => s.next_line(),
            _ => break,
        }
    }
    if s.is_done() {
        return Err(TextError::new(s.pos(), "expected the size line 'ROWS COLS NNZ', found the end of the file"));
    }
    let rows = s.number("the row count of 'ROWS COLS NNZ'")?;
    let cols = s.number("the column count of 'ROWS COLS NNZ'")?;
    let nodes = text::check_node_count(rows.max(cols), s)?;
    let entries = s.number("the entry count of 'ROWS COLS NNZ'")?;
    s.end_line("the entry count of 'ROWS COLS NNZ'")?;
    Ok(Header { field, symmetric, rows, cols, entries, nodes, body: s.pos(), scale: 1.0 })
}

#[cold]
fn s_error_unsupported(s: &Scanner, word: &str, hint: &str) -> TextError {
    s.error(format!("unsupported Matrix Market variant '{}': {hint}", text::quote(word.as_bytes())))
}

/// Parses one chunk's entries into `slots`; returns the number of entries.
fn parse_chunk(bytes: &[u8], range: Range<usize>, h: &Header, slots: &mut EdgeSlots) -> Result<u64, TextError> {
    let weighted = h.field.weighted();
    let mut entries = 0u64;
    let mut s = Scanner::new(bytes, range);
    while !s.is_done() {
        s.skip_spaces();
        match s.peek() {
            None => break,
            Some(b'\n' | b'%') => {
                s.next_line();
                continue;
            }
            Some(_) => {}
        }
        let i = s.id1(h.rows, "a row index")?;
        let j = s.id1(h.cols, "a column index")?;
        let w = match h.field {
            Field::Pattern => 1,
            Field::Integer => s.weight("an integer value")?,
            Field::Real(RealWeights::Ignore) => {
                s.word();
                1
            }
            Field::Real(real) => text::real_weight(&mut s, real, h.scale)?,
        };
        s.end_line(if weighted { "the value" } else { "the column index of a pattern entry" })?;
        entries += 1;
        push(slots, weighted, i, j, w);
        if h.symmetric && i != j {
            push(slots, weighted, j, i, w);
        }
    }
    Ok(entries)
}

#[inline(always)]
fn push(slots: &mut EdgeSlots, weighted: bool, u: NodeId, v: NodeId, w: u32) {
    if weighted {
        slots.push_weighted(u, v, w);
    } else {
        slots.push(u, v);
    }
}

impl Field {
    fn weighted(self) -> bool {
        !matches!(self, Field::Pattern | Field::Real(RealWeights::Ignore))
    }
}

pub(crate) fn write(graph: &Graph, out: &mut dyn Write, progress: &dyn Progress) -> std::io::Result<()> {
    let csr = graph.out();
    let mut header = format!(
        "%%MatrixMarket matrix coordinate {} general\n",
        match csr.weight_kind() {
            Some(crate::graph::WeightKind::Integer) => "integer",
            Some(crate::graph::WeightKind::Real) => "real",
            None => "pattern",
        }
    )
    .into_bytes();
    for (i, count) in [u64::from(csr.num_nodes()), u64::from(csr.num_nodes()), csr.num_edges()].into_iter().enumerate()
    {
        text::push_u64(&mut header, count);
        header.push(if i == 2 { b'\n' } else { b' ' });
    }
    text::write_edge_lines(csr, &header, out, progress, b"", 1, csr.is_weighted())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::NoProgress;

    #[test]
    fn chunking_does_not_change_the_result() {
        let mut text = String::from("%%MatrixMarket matrix coordinate real symmetric\n% c\n\n40 30 300\n");
        for i in 0..300u32 {
            text.push_str(&format!("{} {} {}.{}\n", i % 40 + 1, (i * 7) % 30 + 1, i, i % 10));
            if i % 70 == 0 {
                text.push_str("% between\n\n");
            }
        }
        let whole = parse_with(text.as_bytes(), RealWeights::Round, &NoProgress, usize::MAX).unwrap();
        for min in [1, 9, 100] {
            assert_eq!(parse_with(text.as_bytes(), RealWeights::Round, &NoProgress, min).unwrap(), whole);
        }
        assert_eq!(whole.num_nodes, 40);
    }

    #[test]
    fn real_values_round() {
        let text = b"%%MatrixMarket matrix coordinate real general\n2 2 4\n1 1 0.5\n1 2 2.49\n2 1 1e3\n2 2 7\n";
        let edges = parse_with(text, RealWeights::Round, &NoProgress, usize::MAX).unwrap();
        assert_eq!(edges.weights, Some(vec![1, 2, 1000, 7]));
    }

    #[test]
    fn real_values_are_kept_as_f32() {
        let text = b"%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 0.5\n1 2 0.3\n2 1 -1e3\n";
        let edges = parse_with(text, RealWeights::Keep, &NoProgress, usize::MAX).unwrap();
        assert!(edges.real);
        let values: Vec<f32> = edges.weights.unwrap().into_iter().map(f32::from_bits).collect();
        assert_eq!(values, vec![0.5, 0.3, -1000.0]);
        for bad in ["1e39", "1e-50", "nan"] {
            let text = format!("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 {bad}\n");
            let err = parse_with(text.as_bytes(), RealWeights::Keep, &NoProgress, usize::MAX).unwrap_err();
            assert!(err.to_string().contains(bad), "{err}");
        }
    }
}
