//! METIS graph format (`.graph`, `.metis`), as read by METIS and KaHIP.
//!
//! ```text
//! % comment lines start with '%'
//! N M [FMT [NCON]]
//! [size] [w_1 ... w_NCON] v_1 [ew_1] v_2 [ew_2] ...      <- one line per vertex, N lines
//! ```
//!
//! - The header gives N vertices and M undirected edges. FMT has up to three binary digits:
//!   the ones digit says the edges have weights, the tens digit that the vertices have NCON
//!   weights each (NCON defaults to 1), the hundreds digit that each vertex has a size.
//! - Then come exactly N vertex lines, the i-th for vertex i (1-based). A vertex line holds the
//!   vertex's size and weights when FMT asks for them, then its neighbours (1-based ids in
//!   `1..=N`), each followed by the edge's weight when FMT asks for edge weights.
//! - Blank lines are significant: a blank line is a vertex without neighbours. Blank lines after
//!   the N-th vertex line are ignored, so a trailing empty line does no harm.
//! - Lines starting with `%` are comments, anywhere.
//! - Each edge appears in the lines of both of its ends, so there must be exactly 2M neighbour
//!   entries in all. The graph read has exactly the directed edges listed, `i -> neighbour`, in
//!   file order; symmetry is not checked (use `--symmetrize` to enforce it).
//! - Sizes, weights and ids are non-negative integers; weights must fit in 32 bits. The first
//!   vertex weight of each vertex becomes the node property `vertex_weight`; further
//!   constraints and sizes are read and dropped.
//!
//! Only simple symmetric graphs (no self-loops, no duplicate edges, every edge in both directions
//! with the same weight) can be written, as METIS tools reject anything else. The writer emits
//! `N M` (plus `001` with edge weights, `010` with a `vertex_weight` property, `011` with both)
//! and one line per vertex with its neighbours in CSR order.

use std::io::Write;
use std::ops::Range;

use rayon::prelude::*;

use crate::builder::EdgeList;
use crate::error::{GraphError, Location, ParseError, Result};
use crate::graph::{Graph, MAX_NODES};
use crate::io::text::{self, EdgeChunk, Scanner, TextError};
use crate::progress::Progress;

/// The node property that vertex weights are read into and written from.
const VERTEX_WEIGHT: &str = "vertex_weight";

pub(crate) fn parse(bytes: &[u8], progress: &dyn Progress) -> Result<(EdgeList, Option<Vec<u32>>), ParseError> {
    parse_with(bytes, progress, text::MIN_CHUNK)
}

#[derive(Debug, Clone, Copy)]
struct Header {
    nodes: u32,
    edges: u64,
    edge_weights: bool,
    vertex_weights: u64,
    sizes: bool,
    body: usize,
}

/// The vertex lines of one chunk.
struct Chunk {
    /// Neighbours (sources filled in once the chunk's first vertex is known) and edge weights.
    edges: EdgeChunk,
    /// Per vertex line, the number of neighbour entries up to and including it.
    ends: Vec<usize>,
    /// Per vertex line, its first weight (0 for a blank line).
    vertex_weights: Vec<u32>,
    /// The first blank vertex line, when vertex lines need weights or sizes: (index, offset).
    first_bare: Option<(usize, usize)>,
    /// The last vertex line that is not blank.
    last_filled: Option<usize>,
}

fn parse_with(
    bytes: &[u8],
    progress: &dyn Progress,
    min_chunk: usize,
) -> Result<(EdgeList, Option<Vec<u32>>), ParseError> {
    let header = parse_header(bytes)?;
    progress.begin("parsing metis", Some(bytes.len() as u64));
    progress.advance(header.body as u64);
    let ranges = text::chunk_ranges(bytes, header.body, min_chunk);
    let chunks = text::parse_chunks(bytes, &ranges, progress, |range| parse_chunk(bytes, range, &header));
    progress.finish();
    let mut chunks = chunks?;

    let n = header.nodes as usize;
    let mut firsts = Vec::with_capacity(chunks.len());
    let mut lines = 0usize;
    for chunk in &chunks {
        firsts.push(lines);
        lines += chunk.ends.len();
    }
    if lines < n {
        return Err(ParseError::new(
            Location::Whole,
            format!(
                "header says {n} vertices, but the file has {lines} vertex lines \
                 (a vertex without neighbours still needs an empty line)"
            ),
        ));
    }
    for (chunk, &first) in chunks.iter().zip(&firsts) {
        if let Some((index, offset)) = chunk.first_bare
            && first + index < n
        {
            let what = if header.sizes { "a vertex size" } else { "a vertex weight" };
            return Err(TextError::new(offset, format!("expected {what}, found an empty vertex line")).locate(bytes));
        }
        if chunk.last_filled.is_some_and(|last| first + last >= n) {
            let offset = extra_line(bytes, header.body, n);
            return Err(TextError::new(offset, format!("header says {n} vertices, but this is vertex line {}", n + 1))
                .locate(bytes));
        }
    }
    let entries: u64 = chunks.iter().map(|c| c.edges.targets.len() as u64).sum();
    if Some(entries) != header.edges.checked_mul(2) {
        return Err(ParseError::new(
            Location::Whole,
            format!(
                "header says {} edges, so {} neighbour entries, but the vertex lines list {entries}",
                header.edges,
                u128::from(header.edges) * 2
            ),
        ));
    }

    // Each entry's source is the vertex of its line.
    chunks.par_iter_mut().zip(&firsts).for_each(|(chunk, &first)| {
        let sources = &mut chunk.edges.sources;
        sources.reserve_exact(chunk.edges.targets.len());
        let mut start = 0;
        for (line, &end) in chunk.ends.iter().enumerate() {
            sources.extend(std::iter::repeat_n((first + line) as u32, end - start));
            start = end;
        }
    });
    let mut vertex_weights = Vec::with_capacity(chunks.len());
    let mut edges = Vec::with_capacity(chunks.len());
    for chunk in chunks {
        vertex_weights.push(chunk.vertex_weights);
        edges.push(chunk.edges);
    }
    let vertex_weights = (header.vertex_weights > 0).then(|| {
        let mut weights = text::concat(vertex_weights);
        weights.truncate(n);
        weights
    });
    Ok((text::assemble(header.nodes, edges, header.edge_weights), vertex_weights))
}

fn parse_header(bytes: &[u8]) -> Result<Header, ParseError> {
    let mut s = Scanner::new(bytes, 0..bytes.len());
    loop {
        s.skip_spaces();
        match s.peek() {
            Some(b'%' | b'\n') => s.next_line(),
            _ => break,
        }
    }
    if s.is_done() {
        return Err(ParseError::new(Location::Whole, "no header line 'N M [FMT [NCON]]' found: the file is empty"));
    }
    read_header(&mut s).map_err(|e| e.locate(bytes))
}

fn read_header(s: &mut Scanner) -> Result<Header, TextError> {
    let n = s.number("the vertex count N of 'N M [FMT [NCON]]'")?;
    let nodes = text::check_node_count(n, s)?;
    let edges = s.number("the edge count M of 'N M [FMT [NCON]]'")?;
    let mut header = Header { nodes, edges, edge_weights: false, vertex_weights: 0, sizes: false, body: 0 };
    let fmt = s.word();
    if !fmt.is_empty() {
        if fmt.len() > 3 || !fmt.iter().all(|&b| b == b'0' || b == b'1') {
            return Err(
                s.error(format!("expected FMT of up to 3 binary digits (like 011), found '{}'", text::quote(fmt)))
            );
        }
        let digit = |place: usize| fmt.len() > place && fmt[fmt.len() - 1 - place] == b'1';
        header.edge_weights = digit(0);
        header.sizes = digit(2);
        if digit(1) {
            header.vertex_weights = 1;
        }
        if !s.at_line_end() {
            let ncon = s.number("the number of vertex weights NCON")?;
            if header.vertex_weights > 0 {
                if ncon == 0 {
                    return Err(s.error("NCON is 0, but FMT says the vertices have weights"));
                }
                header.vertex_weights = ncon;
            }
        }
    }
    s.end_line("the header 'N M [FMT [NCON]]'")?;
    header.body = s.pos();
    Ok(header)
}

fn parse_chunk(bytes: &[u8], range: Range<usize>, h: &Header) -> Result<Chunk, TextError> {
    let n = u64::from(h.nodes);
    let mut chunk = Chunk {
        edges: EdgeChunk::for_bytes(range.len(), h.edge_weights),
        ends: Vec::new(),
        vertex_weights: Vec::new(),
        first_bare: None,
        last_filled: None,
    };
    let bare_matters = h.sizes || h.vertex_weights > 0;
    let mut s = Scanner::new(bytes, range);
    while !s.is_done() {
        s.skip_spaces();
        match s.peek() {
            None => break,
            Some(b'%') => {
                s.next_line();
                continue;
            }
            Some(b'\n') => {
                if bare_matters && chunk.first_bare.is_none() {
                    chunk.first_bare = Some((chunk.ends.len(), s.pos()));
                }
                chunk.vertex_weights.push(0);
            }
            Some(_) => {
                if h.sizes {
                    s.number("a vertex size")?;
                }
                let mut vertex_weight = 0;
                for k in 0..h.vertex_weights {
                    let w = s.weight("a vertex weight")?;
                    if k == 0 {
                        vertex_weight = w;
                    }
                }
                chunk.vertex_weights.push(vertex_weight);
                chunk.last_filled = Some(chunk.ends.len());
                while !s.at_line_end() {
                    let v = s.id1(n, "a neighbour id")?;
                    if h.edge_weights {
                        let w = s.weight("an edge weight")?;
                        chunk.edges.targets.push(v);
                        chunk.edges.weights.push(w);
                    } else {
                        chunk.edges.targets.push(v);
                    }
                }
            }
        }
        chunk.ends.push(chunk.edges.targets.len());
        s.next_line();
    }
    Ok(chunk)
}

/// The offset of the first non-blank vertex line past the first `n`, found again by a
/// sequential scan, on the error path only.
#[cold]
fn extra_line(bytes: &[u8], body: usize, n: usize) -> usize {
    let mut s = Scanner::new(bytes, body..bytes.len());
    let mut index = 0usize;
    while !s.is_done() {
        s.skip_spaces();
        match s.peek() {
            None => break,
            Some(b'%') => {}
            Some(b'\n') => index += 1,
            Some(_) => {
                if index >= n {
                    return s.pos();
                }
                index += 1;
            }
        }
        s.next_line();
    }
    body
}

/// Whether the graph can be written as METIS: simple and symmetric.
pub(crate) fn check_writable(graph: &Graph) -> Result<()> {
    let csr = graph.out();
    const FIX: &str = "convert it first with `grail convert --symmetrize --dedup --no-self-loops`";
    if u64::from(csr.num_nodes()) > MAX_NODES {
        return Err(GraphError::invalid("too many nodes for METIS"));
    }
    if let Some(u) = (0..csr.num_nodes()).into_par_iter().find_first(|&u| csr.neighbors(u).contains(&u)) {
        return Err(GraphError::invalid(format!(
            "METIS files hold simple undirected graphs, but node {u} has a self-loop; {FIX}"
        )));
    }
    let sorted = crate::builder::sort_adjacencies(csr.clone());
    if let Some(u) =
        (0..sorted.num_nodes()).into_par_iter().find_first(|&u| sorted.neighbors(u).windows(2).any(|w| w[0] == w[1]))
    {
        return Err(GraphError::invalid(format!(
            "METIS files hold simple undirected graphs, but node {u} has duplicate edges; {FIX}"
        )));
    }
    if !graph.is_symmetric() {
        let weights = if graph.is_weighted() { " with the same weight" } else { "" };
        return Err(GraphError::invalid(format!(
            "METIS files hold undirected graphs, but this graph is not symmetric (some edge u -> v has no \
             v -> u{weights}); {FIX}"
        )));
    }
    Ok(())
}

pub(crate) fn write(graph: &Graph, out: &mut dyn Write, progress: &dyn Progress) -> std::io::Result<()> {
    let csr = graph.out();
    let vertex_weights = graph.node_props.get::<u32>(VERTEX_WEIGHT);
    let mut header = Vec::new();
    text::push_u64(&mut header, u64::from(csr.num_nodes()));
    header.push(b' ');
    text::push_u64(&mut header, csr.num_edges() / 2);
    match (vertex_weights.is_some(), csr.is_weighted()) {
        (false, false) => {}
        (false, true) => header.extend_from_slice(b" 001"),
        (true, false) => header.extend_from_slice(b" 010"),
        (true, true) => header.extend_from_slice(b" 011"),
    }
    header.push(b'\n');
    text::write_chunked(csr, &header, out, progress, |nodes, buf| {
        for u in nodes {
            let mut first = true;
            let mut sep = |buf: &mut Vec<u8>| {
                if !first {
                    buf.push(b' ');
                }
                first = false;
            };
            if let Some(vw) = vertex_weights {
                sep(buf);
                text::push_u64(buf, u64::from(vw[u as usize]));
            }
            for e in csr.edge_range(u) {
                sep(buf);
                text::push_u64(buf, u64::from(csr.targets()[e]) + 1);
                if let Some(w) = csr.weights() {
                    buf.push(b' ');
                    text::push_u64(buf, u64::from(w[e]));
                }
            }
            buf.push(b'\n');
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::NoProgress;

    #[test]
    fn chunking_does_not_change_the_result() {
        let n = 200u32;
        let mut text = format!("% comment\n{n} {n} 011\n");
        for u in 1..=n {
            // A ring: u's neighbours are u-1 and u+1.
            let (a, b) = (if u == 1 { n } else { u - 1 }, if u == n { 1 } else { u + 1 });
            text.push_str(&format!("{} {a} {} {b} {}\n", u * 3, u + a, u + b));
            if u % 40 == 0 {
                text.push_str("% between\n");
            }
        }
        text.push_str("\n\n");
        let whole = parse_with(text.as_bytes(), &NoProgress, usize::MAX).unwrap();
        for min in [1, 9, 100] {
            let (edges, weights) = parse_with(text.as_bytes(), &NoProgress, min).unwrap();
            assert_eq!((&edges, &weights), (&whole.0, &whole.1));
        }
        assert_eq!(whole.0.len(), 2 * n as usize);
        assert_eq!(whole.1.as_ref().unwrap()[..3], [3, 6, 9]);
    }
}
