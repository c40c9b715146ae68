//! DIMACS shortest-path text format (`.gr`), as used by the 9th DIMACS Implementation Challenge.
//!
//! ```text
//! c comment lines may appear anywhere
//! p sp N M
//! a U V W
//! ```
//!
//! - Exactly one problem line `p sp N M` (N nodes, M arcs) comes before any arc.
//! - Each arc line `a U V W` is the directed edge `U -> V` of weight `W`. Ids are 1-based, in
//!   `1..=N` (node `U` becomes node `U - 1`); weights are non-negative integers that fit in 32
//!   bits. Arcs keep the order of the file.
//! - Lines starting with `c` are comments; blank lines are ignored. The number of arc lines must
//!   be exactly M.
//!
//! Graphs read from this format are always weighted. The writer emits `p sp N M` and one arc per
//! edge in CSR order, with weight 1 for every edge of an unweighted graph.

use std::io::Write;
use std::ops::Range;

use crate::builder::EdgeList;
use crate::error::{Location, ParseError};
use crate::graph::Graph;
use crate::io::text::{self, EdgeSlots, Scanner, TextError};
use crate::progress::Progress;

pub(crate) fn parse(bytes: &[u8], progress: &dyn Progress) -> Result<EdgeList, ParseError> {
    parse_with(bytes, progress, text::MIN_CHUNK)
}

/// The problem line: node count, arc count, and where the arcs start.
struct Header {
    nodes: u32,
    arcs: u64,
    body: usize,
}

fn parse_with(bytes: &[u8], progress: &dyn Progress, min_chunk: usize) -> Result<EdgeList, ParseError> {
    let header = parse_header(bytes)?;
    progress.begin("parsing dimacs", Some(bytes.len() as u64));
    progress.advance(header.body as u64);
    let ranges = text::chunk_ranges(bytes, header.body, min_chunk);
    let n = u64::from(header.nodes);
    let parsed =
        text::parse_edges(bytes, &ranges, 1, true, progress, |range, slots| parse_chunk(bytes, range, n, slots));
    progress.finish();
    let (mut edges, _) = parsed?;
    let found = edges.len() as u64;
    if found != header.arcs {
        return Err(ParseError::new(
            Location::Whole,
            format!("header says {} arcs, but the file has {found}", header.arcs),
        ));
    }
    edges.num_nodes = header.nodes;
    Ok(edges)
}

fn parse_header(bytes: &[u8]) -> Result<Header, ParseError> {
    let mut s = Scanner::new(bytes, 0..bytes.len());
    match scan_header(&mut s) {
        Ok(Some(header)) => Ok(header),
        Ok(None) => {
            Err(ParseError::new(Location::Whole, "no problem line 'p sp N M' found: is this a DIMACS .gr file?"))
        }
        Err(e) => Err(e.locate(bytes)),
    }
}

/// Finds and reads the problem line, or `None` if the input ends first.
fn scan_header(s: &mut Scanner) -> Result<Option<Header>, TextError> {
    loop {
        s.skip_spaces();
        match s.peek() {
            None => {
                return Ok(None);
            }
            Some(b'\n') | Some(b'c') => s.next_line(),
            Some(b'p') => {
                let word = s.word();
                if word != b"p" {
                    return Err(s.error(format!("expected the problem line 'p sp N M', found '{}'", text::quote(word))));
                }
                let kind = s.word();
                if kind != b"sp" {
                    return Err(
                        s.error(format!("expected problem type 'sp' (shortest path), found '{}'", text::quote(kind)))
                    );
                }
                let n = s.number("the node count N of 'p sp N M'")?;
                let nodes = text::check_node_count(n, s)?;
                let arcs = s.number("the arc count M of 'p sp N M'")?;
                s.end_line("the arc count")?;
                return Ok(Some(Header { nodes, arcs, body: s.pos() }));
            }
            Some(b'a') => {
                s.word();
                return Err(s.error("arc line before the problem line: expected 'p sp N M' first"));
            }
            Some(_) => {
                let word = s.word();
                return Err(s.error(format!(
                    "expected a comment 'c ...' or the problem line 'p sp N M', found '{}'",
                    text::quote(word)
                )));
            }
        }
    }
}

fn parse_chunk(bytes: &[u8], range: Range<usize>, n: u64, slots: &mut EdgeSlots) -> Result<(), TextError> {
    let mut s = Scanner::new(bytes, range);
    while !s.is_done() {
        s.skip_spaces();
        match s.peek() {
            None => break,
            Some(b'a') => {
                let word = s.word();
                if word != b"a" {
                    return Err(line_kind_error(&s, word));
                }
                let u = s.id1(n, "a node id")?;
                let v = s.id1(n, "a node id")?;
                let w = s.weight("a weight")?;
                s.end_line("the weight of 'a U V W'")?;
                slots.push_weighted(u, v, w);
            }
            Some(b'\n' | b'c') => s.next_line(),
            Some(b'p') => {
                s.word();
                return Err(s.error("a second problem line: a file has exactly one 'p sp N M', before the arcs"));
            }
            Some(_) => {
                let word = s.word();
                return Err(line_kind_error(&s, word));
            }
        }
    }
    Ok(())
}

#[cold]
fn line_kind_error(s: &Scanner, word: &[u8]) -> TextError {
    s.error(format!("expected an arc 'a U V W' or a comment 'c ...', found '{}'", text::quote(word)))
}

pub(crate) fn write(graph: &Graph, out: &mut dyn Write, progress: &dyn Progress) -> std::io::Result<()> {
    let csr = graph.out();
    let mut header = b"p sp ".to_vec();
    text::push_u64(&mut header, u64::from(csr.num_nodes()));
    header.push(b' ');
    text::push_u64(&mut header, csr.num_edges());
    header.push(b'\n');
    text::write_edge_lines(csr, &header, out, progress, b"a ", 1, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::NoProgress;

    #[test]
    fn chunking_does_not_change_the_result() {
        let mut text = String::from("c hello\np sp 50 400\n");
        for i in 0..400u32 {
            text.push_str(&format!("a {} {} {}\n", i % 50 + 1, (i * 7) % 50 + 1, i));
            if i % 60 == 0 {
                text.push_str("c between\n\n");
            }
        }
        let whole = parse_with(text.as_bytes(), &NoProgress, usize::MAX).unwrap();
        for min in [1, 9, 100] {
            assert_eq!(parse_with(text.as_bytes(), &NoProgress, min).unwrap(), whole);
        }
        assert_eq!(whole.len(), 400);
    }
}
