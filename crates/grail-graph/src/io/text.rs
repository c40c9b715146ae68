//! Shared machinery for the text formats: chunked parallel parsing, byte-level number parsing,
//! error positions, and chunked parallel writing.
//!
//! A text reader parses its header sequentially, then cuts the body into chunks that end at line
//! boundaries and parses the chunks in parallel into per-chunk arrays, which are concatenated in
//! parallel at the end. The hot loop works on bytes: no UTF-8 checks, no splitting iterators, and
//! no line counting. An error carries the byte offset where it was found; its line number is
//! computed only when the error is reported, by counting the newlines before it.

use std::io::Write;
use std::ops::Range;

use rayon::prelude::*;

use crate::builder::EdgeList;
use crate::error::{Location, ParseError};
use crate::graph::{Csr, MAX_NODES, NodeId};
use crate::io::RealWeights;
use crate::par::split_by_bounds;
use crate::progress::Progress;

/// Chunks smaller than this are not worth a task of their own.
pub(crate) const MIN_CHUNK: usize = 1 << 20;

/// The first line that is neither blank nor a comment (starting with one of `comment_starts`).
pub(crate) fn first_data_line<'a>(bytes: &'a [u8], comment_starts: &[u8]) -> Option<&'a [u8]> {
    bytes
        .split(|&b| b == b'\n')
        .map(|line| line.trim_ascii())
        .find(|line| !line.is_empty() && !comment_starts.contains(&line[0]))
}

/// A problem at a byte offset of a text input; becomes a [`ParseError`] with a line number.
#[derive(Debug)]
pub(crate) struct TextError {
    pub offset: usize,
    pub message: String,
}

impl TextError {
    pub fn new(offset: usize, message: impl Into<String>) -> Self {
        TextError { offset, message: message.into() }
    }

    /// Attaches the 1-based line of the offset.
    pub fn locate(self, bytes: &[u8]) -> ParseError {
        ParseError::new(Location::Line(line_at(bytes, self.offset)), self.message)
    }
}

/// The 1-based line that byte `offset` is on.
pub(crate) fn line_at(bytes: &[u8], offset: usize) -> u64 {
    let end = offset.min(bytes.len());
    memchr::memchr_iter(b'\n', &bytes[..end]).count() as u64 + 1
}

/// A token of the input for an error message: lossily decoded, and shortened if long.
pub(crate) fn quote(token: &[u8]) -> String {
    const LIMIT: usize = 40;
    if token.len() > LIMIT {
        format!("{}...", String::from_utf8_lossy(&token[..LIMIT]))
    } else {
        String::from_utf8_lossy(token).into_owned()
    }
}

#[inline(always)]
fn is_space(b: u8) -> bool {
    b == b' ' || b == b'\t' || b == b'\r'
}

#[inline(always)]
fn ends_token(b: Option<&u8>) -> bool {
    match b {
        None => true,
        Some(&b) => b == b'\n' || is_space(b),
    }
}

/// The number of whitespace-separated fields on the line that `offset` is on.
pub(crate) fn fields_on_line(bytes: &[u8], offset: usize) -> usize {
    let offset = offset.min(bytes.len());
    let start = memchr::memrchr(b'\n', &bytes[..offset]).map_or(0, |i| i + 1);
    let end = memchr::memchr(b'\n', &bytes[offset..]).map_or(bytes.len(), |i| offset + i);
    bytes[start..end].split(|&b| is_space(b)).filter(|f| !f.is_empty()).count()
}

/// Reads fields off lines of a byte slice. Positions are offsets into the whole input, so errors
/// can be placed without knowing which chunk they came from.
pub(crate) struct Scanner<'a> {
    /// The input up to the end of the part being scanned.
    bytes: &'a [u8],
    pos: usize,
    /// Where the last token read starts.
    token: usize,
}

impl<'a> Scanner<'a> {
    /// Scans `range` of `bytes`.
    pub fn new(bytes: &'a [u8], range: Range<usize>) -> Self {
        let end = range.end.min(bytes.len());
        let start = range.start.min(end);
        Scanner { bytes: &bytes[..end], pos: start, token: start }
    }

    #[inline(always)]
    pub fn pos(&self) -> usize {
        self.pos
    }

    #[inline(always)]
    pub fn is_done(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    #[inline(always)]
    pub fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    #[inline(always)]
    pub fn skip_spaces(&mut self) {
        while let Some(&b) = self.bytes.get(self.pos) {
            if !is_space(b) {
                break;
            }
            self.pos += 1;
        }
    }

    /// Skips spaces and tells whether the line (or input) ends here.
    #[inline(always)]
    pub fn at_line_end(&mut self) -> bool {
        self.skip_spaces();
        matches!(self.peek(), None | Some(b'\n'))
    }

    /// Moves to the start of the next line.
    #[inline]
    pub fn next_line(&mut self) {
        let rest = self.bytes.get(self.pos..).unwrap_or(&[]);
        self.pos = match memchr::memchr(b'\n', rest) {
            Some(i) => self.pos + i + 1,
            None => self.bytes.len(),
        };
    }

    /// Ends a line that must hold nothing more; `what` names what the line should end after.
    #[inline(always)]
    pub fn end_line(&mut self, what: &str) -> Result<(), TextError> {
        if self.at_line_end() {
            self.pos = (self.pos + 1).min(self.bytes.len());
            Ok(())
        } else {
            let word = self.word();
            Err(self.error(format!("expected the end of the line after {what}, found '{}'", quote(word))))
        }
    }

    /// The next whitespace-separated token (empty at the end of the line).
    pub fn word(&mut self) -> &'a [u8] {
        self.skip_spaces();
        self.token = self.pos;
        while !ends_token(self.bytes.get(self.pos)) {
            self.pos += 1;
        }
        &self.bytes[self.token..self.pos]
    }

    /// The last token read.
    pub fn token(&self) -> &'a [u8] {
        &self.bytes[self.token.min(self.pos)..self.pos]
    }

    /// An error at the start of the last token read.
    pub fn error(&self, message: impl Into<String>) -> TextError {
        TextError::new(self.token, message)
    }

    /// Reads an unsigned decimal number; `what` names it for errors ("a node id"). Numbers too
    /// large for `u64` come back as `u64::MAX`, which every caller's range check rejects.
    #[inline(always)]
    pub fn number(&mut self, what: &str) -> Result<u64, TextError> {
        self.skip_spaces();
        let start = self.pos;
        self.token = start;
        if let Some(value) = self.short_number(start) {
            return Ok(value);
        }
        let mut value: u64 = 0;
        while let Some(&b) = self.bytes.get(self.pos) {
            let digit = b.wrapping_sub(b'0');
            if digit > 9 {
                break;
            }
            value = value.wrapping_mul(10).wrapping_add(u64::from(digit));
            self.pos += 1;
        }
        let len = self.pos - start;
        // 19 digits always fit in a u64; anything odd goes to the careful path.
        if len == 0 || len > 19 || !ends_token(self.bytes.get(self.pos)) {
            return self.number_slow(start, what);
        }
        Ok(value)
    }

    /// Reads a number of 1 to 7 digits followed by whitespace with a few word operations
    /// (SWAR: the 8 bytes at `start` are tested and converted at once), or returns `None`.
    #[inline(always)]
    fn short_number(&mut self, start: usize) -> Option<u64> {
        let word: [u8; 8] = self.bytes.get(start..start.wrapping_add(8))?.try_into().ok()?;
        // Each byte minus '0' (digits become 0..=9); a byte is a non-digit iff adding 0x76 sets
        // its high bit or the high bit was set already. Carries only run from non-digits upward.
        let x = u64::from_le_bytes(word) ^ 0x3030_3030_3030_3030;
        let non_digits = (x.wrapping_add(0x7676_7676_7676_7676) | x) & 0x8080_8080_8080_8080;
        let len = (non_digits.trailing_zeros() / 8) as usize;
        if len == 0 || len == 8 {
            return None;
        }
        // The byte after the digits, taken from the register rather than from memory.
        let after = ((x >> (8 * len)) as u8) ^ b'0';
        if !ends_token(Some(&after)) {
            return None;
        }
        // Move the digits to the top bytes (zeros before them), then combine pairs, quads, octets.
        let mut v = x << (64 - 8 * len as u32);
        v = (v & 0x0F0F_0F0F_0F0F_0F0F).wrapping_mul(2561) >> 8;
        v = (v & 0x00FF_00FF_00FF_00FF).wrapping_mul(6_553_601) >> 16;
        v = (v & 0x0000_FFFF_0000_FFFF).wrapping_mul(42_949_672_960_001) >> 32;
        self.pos = start + len;
        Some(v)
    }

    #[cold]
    #[inline(never)]
    fn number_slow(&mut self, start: usize, what: &str) -> Result<u64, TextError> {
        self.pos = start;
        let token = self.word();
        if token.is_empty() {
            return Err(self.error(format!("expected {what}, found the end of the line")));
        }
        if token.iter().all(u8::is_ascii_digit) {
            let value = token
                .iter()
                .try_fold(0u64, |v, &d| v.checked_mul(10)?.checked_add(u64::from(d - b'0')))
                .unwrap_or(u64::MAX);
            return Ok(value);
        }
        if token.len() > 1 && token[0] == b'-' && token[1..].iter().all(u8::is_ascii_digit) {
            return Err(
                self.error(format!("expected {what}, found '{}': negative numbers are not allowed", quote(token)))
            );
        }
        Err(self.error(format!("expected {what}, found '{}'", quote(token))))
    }

    /// A 0-based node id: below `u32::MAX`, which is reserved.
    #[inline(always)]
    pub fn node0(&mut self) -> Result<NodeId, TextError> {
        let value = self.number("a node id")?;
        if value < MAX_NODES {
            Ok(value as NodeId)
        } else {
            Err(self.error(format!("node id {} is out of range: ids must be below {MAX_NODES}", quote(self.token()))))
        }
    }

    /// A 1-based id in `1..=n`, returned 0-based; `what` is "node id", "row index", ...
    #[inline(always)]
    pub fn id1(&mut self, n: u64, what: &str) -> Result<NodeId, TextError> {
        let value = self.number(what)?;
        if value >= 1 && value <= n { Ok((value - 1) as NodeId) } else { Err(self.id1_error(n, what)) }
    }

    #[cold]
    fn id1_error(&self, n: u64, what: &str) -> TextError {
        let what = what.trim_start_matches("a ").trim_start_matches("an ");
        let token = quote(self.token());
        if n == 0 {
            self.error(format!("{what} {token} is out of range: the header says there are none"))
        } else {
            self.error(format!("{what} {token} is out of range 1..={n} (ids are 1-based)"))
        }
    }

    /// A weight that must fit in 32 bits; `what` is "a weight", "a vertex weight", ...
    #[inline(always)]
    pub fn weight(&mut self, what: &str) -> Result<u32, TextError> {
        let value = self.number(what)?;
        if value <= u64::from(u32::MAX) {
            Ok(value as u32)
        } else {
            let what = what.trim_start_matches("a ").trim_start_matches("an ");
            Err(self.error(format!("{what} {} does not fit in 32 bits", quote(self.token()))))
        }
    }
}

/// Cuts `bytes[start..]` into ranges that end just after a newline (the last one at the end of
/// the input): about four per thread, none much smaller than `min_chunk`. Public for other
/// crates' text formats (grail-mesh's Triangle files) as [`crate::io::chunk_ranges`].
pub fn chunk_ranges(bytes: &[u8], start: usize, min_chunk: usize) -> Vec<Range<usize>> {
    let len = bytes.len();
    let start = start.min(len);
    let body = len - start;
    let threads = rayon::current_num_threads().max(1);
    let count = (body / min_chunk.max(1)).clamp(1, 4 * threads);
    let target = body.div_ceil(count).max(1);
    let mut ranges = Vec::with_capacity(count + 1);
    let mut at = start;
    while at < len {
        let mut end = at.saturating_add(target).min(len);
        if end < len && bytes[end - 1] != b'\n' {
            end = memchr::memchr(b'\n', &bytes[end..]).map_or(len, |i| end + i + 1);
        }
        ranges.push(at..end);
        at = end;
    }
    ranges
}

/// Parses `ranges` of `bytes` in parallel with `parse`, reporting each chunk's bytes as it is
/// done. The error reported is the first in the input, whichever task found it.
pub(crate) fn parse_chunks<T, F>(
    bytes: &[u8],
    ranges: &[Range<usize>],
    progress: &dyn Progress,
    parse: F,
) -> Result<Vec<T>, ParseError>
where
    T: Send,
    F: Fn(Range<usize>) -> Result<T, TextError> + Sync,
{
    let results: Vec<Result<T, TextError>> = ranges
        .par_iter()
        .with_max_len(1)
        .map(|range| {
            let result = parse(range.clone());
            progress.advance(range.len() as u64);
            result
        })
        .collect();
    results.into_iter().map(|r| r.map_err(|e| e.locate(bytes))).collect()
}

/// Room for one chunk's edges inside the final edge arrays, so that chunks parse straight into
/// place without a concatenation afterwards.
pub(crate) struct EdgeSlots<'a> {
    sources: &'a mut [NodeId],
    targets: &'a mut [NodeId],
    /// Empty for unweighted formats.
    weights: &'a mut [u32],
    len: usize,
    /// Set if a chunk produced more edges than its lines allow, which the callers' formats rule
    /// out; checked rather than trusted so that no input can index out of bounds.
    overflow: bool,
}

impl EdgeSlots<'_> {
    #[inline(always)]
    pub fn push(&mut self, source: NodeId, target: NodeId) {
        match (self.sources.get_mut(self.len), self.targets.get_mut(self.len)) {
            (Some(s), Some(t)) => {
                *s = source;
                *t = target;
                self.len += 1;
            }
            _ => self.overflow = true,
        }
    }

    #[inline(always)]
    pub fn push_weighted(&mut self, source: NodeId, target: NodeId, weight: u32) {
        match (self.sources.get_mut(self.len), self.targets.get_mut(self.len), self.weights.get_mut(self.len)) {
            (Some(s), Some(t), Some(w)) => {
                *s = source;
                *t = target;
                *w = weight;
                self.len += 1;
            }
            _ => self.overflow = true,
        }
    }
}

/// Parses `ranges` of `bytes` in parallel into one edge list, each chunk writing its edges
/// straight into its share of the final arrays. A chunk's share is `per_line` edges for each of
/// its lines, so `parse` must produce at most that many per line. Gaps left by comments and
/// blank lines are closed afterwards. Returns the edges (with `num_nodes` 0) and each chunk's
/// own result.
pub(crate) fn parse_edges<T, F>(
    bytes: &[u8],
    ranges: &[Range<usize>],
    per_line: usize,
    weighted: bool,
    progress: &dyn Progress,
    parse: F,
) -> Result<(EdgeList, Vec<T>), ParseError>
where
    T: Send,
    F: Fn(Range<usize>, &mut EdgeSlots) -> Result<T, TextError> + Sync,
{
    // Lines per chunk: a vectorised newline count, plus an unterminated last line.
    let room: Vec<usize> = ranges
        .par_iter()
        .map(|r| {
            let chunk = &bytes[r.clone()];
            let lines = memchr::memchr_iter(b'\n', chunk).count() + usize::from(chunk.last() != Some(&b'\n'));
            lines * per_line
        })
        .collect();
    let total: usize = room.iter().sum();
    let mut sources = vec![0 as NodeId; total];
    let mut targets = vec![0 as NodeId; total];
    let mut weights = vec![0u32; if weighted { total } else { 0 }];
    let mut bounds = vec![0usize];
    bounds.extend(room.iter().scan(0, |at, r| {
        *at += r;
        Some(*at)
    }));
    let weight_bounds: Vec<usize> = if weighted { bounds.clone() } else { vec![0; bounds.len()] };
    let slots: Vec<EdgeSlots> = split_by_bounds(&mut sources, &bounds)
        .into_iter()
        .zip(split_by_bounds(&mut targets, &bounds))
        .zip(split_by_bounds(&mut weights, &weight_bounds))
        .map(|((sources, targets), weights)| EdgeSlots { sources, targets, weights, len: 0, overflow: false })
        .collect();
    let results: Vec<Result<(T, usize), TextError>> = slots
        .into_par_iter()
        .zip(ranges.par_iter())
        .with_max_len(1)
        .map(|(mut slots, range)| {
            let result = parse(range.clone(), &mut slots);
            progress.advance(range.len() as u64);
            match result {
                Ok(_) if slots.overflow => {
                    Err(TextError::new(range.start, "internal error: a chunk produced more edges than it has lines"))
                }
                Ok(value) => Ok((value, slots.len)),
                Err(e) => Err(e),
            }
        })
        .collect();
    let mut values = Vec::with_capacity(results.len());
    let mut lens = Vec::with_capacity(results.len());
    for result in results {
        let (value, len) = result.map_err(|e| e.locate(bytes))?;
        values.push(value);
        lens.push(len);
    }
    // Close the gaps: each chunk's edges move down to follow the previous chunk's.
    let mut at = 0;
    for (c, &len) in lens.iter().enumerate() {
        let from = bounds[c];
        if from != at {
            sources.copy_within(from..from + len, at);
            targets.copy_within(from..from + len, at);
            if weighted {
                weights.copy_within(from..from + len, at);
            }
        }
        at += len;
    }
    sources.truncate(at);
    targets.truncate(at);
    weights.truncate(at);
    Ok((EdgeList { num_nodes: 0, sources, targets, weights: weighted.then_some(weights), real: false }, values))
}

/// Edges parsed from one chunk.
#[derive(Debug, Default)]
pub(crate) struct EdgeChunk {
    pub sources: Vec<NodeId>,
    pub targets: Vec<NodeId>,
    /// Empty for unweighted formats.
    pub weights: Vec<u32>,
}

impl EdgeChunk {
    /// Room for about the edges that `bytes` bytes of text hold.
    pub fn for_bytes(bytes: usize, weighted: bool) -> Self {
        let edges = bytes / 10 + 16;
        EdgeChunk {
            sources: Vec::with_capacity(edges),
            targets: Vec::with_capacity(edges),
            weights: Vec::with_capacity(if weighted { edges } else { 0 }),
        }
    }
}

/// Joins per-chunk edges, in order, into one edge list.
pub(crate) fn assemble(num_nodes: u32, chunks: Vec<EdgeChunk>, weighted: bool) -> EdgeList {
    let mut sources = Vec::with_capacity(chunks.len());
    let mut targets = Vec::with_capacity(chunks.len());
    let mut weights = Vec::with_capacity(chunks.len());
    for chunk in chunks {
        sources.push(chunk.sources);
        targets.push(chunk.targets);
        weights.push(chunk.weights);
    }
    let (sources, (targets, weights)) =
        rayon::join(|| concat(sources), || rayon::join(|| concat(targets), || weighted.then(|| concat(weights))));
    EdgeList { num_nodes, sources, targets, weights, real: false }
}

/// Concatenates arrays in parallel.
pub(crate) fn concat(mut parts: Vec<Vec<u32>>) -> Vec<u32> {
    if parts.len() == 1 {
        return parts.pop().unwrap_or_default();
    }
    let total = parts.iter().map(Vec::len).sum();
    // Zeroed allocations of this size come straight from the OS, so the zeroing is free.
    let mut out = vec![0u32; total];
    let mut pieces = Vec::with_capacity(parts.len());
    let mut rest = out.as_mut_slice();
    for part in &parts {
        let (head, tail) = rest.split_at_mut(part.len());
        pieces.push(head);
        rest = tail;
    }
    pieces.into_par_iter().zip(parts.par_iter()).for_each(|(dst, src)| dst.copy_from_slice(src));
    out
}

/// Checks a node count read from a header.
pub(crate) fn check_node_count(n: u64, scanner: &Scanner) -> Result<u32, TextError> {
    if n <= MAX_NODES {
        Ok(n as u32)
    } else {
        Err(scanner.error(format!("{n} nodes is more than the {MAX_NODES} a graph may have")))
    }
}

/// "00" to "99": two digits per division when formatting.
const DIGIT_PAIRS: [u8; 200] = {
    let mut table = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        table[2 * i] = b'0' + (i / 10) as u8;
        table[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    table
};

/// Appends the decimal digits of `value`.
#[inline]
pub(crate) fn push_u64(buf: &mut Vec<u8>, mut value: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    while value >= 100 {
        let pair = (value % 100) as usize * 2;
        value /= 100;
        i -= 2;
        digits[i..i + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
    if value >= 10 {
        let pair = value as usize * 2;
        i -= 2;
        digits[i..i + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    } else {
        i -= 1;
        digits[i] = b'0' + value as u8;
    }
    buf.extend_from_slice(&digits[i..]);
}

/// Nodes per formatting task at most, and edges per task to aim for.
const WRITE_NODES: u64 = 1 << 16;
const WRITE_EDGES: u64 = 1 << 18;

/// Groups of consecutive nodes with a bounded number of nodes and about `WRITE_EDGES` edges.
fn write_groups(csr: &Csr) -> Vec<Range<u32>> {
    let offsets = csr.offsets();
    let n = u64::from(csr.num_nodes());
    let mut groups = Vec::new();
    let mut u = 0u64;
    while u < n {
        let goal = offsets[u as usize].saturating_add(WRITE_EDGES);
        let by_edges = offsets.partition_point(|&o| o < goal) as u64;
        let end = by_edges.clamp(u + 1, (u + WRITE_NODES).min(n));
        groups.push(u as u32..end as u32);
        u = end;
    }
    groups
}

/// Writes one line per edge, `prefix u v [w]`, with node ids plus `id_base` and, when the
/// format has a weight column, the edge's weight (1 for an unweighted graph).
pub(crate) fn write_edge_lines(
    csr: &Csr,
    header: &[u8],
    out: &mut dyn Write,
    progress: &dyn Progress,
    prefix: &[u8],
    id_base: u64,
    weight_column: bool,
) -> std::io::Result<()> {
    let real = csr.real_weights();
    write_chunked(csr, header, out, progress, |nodes, buf| {
        for u in nodes {
            for e in csr.edge_range(u) {
                buf.extend_from_slice(prefix);
                push_u64(buf, u64::from(u) + id_base);
                buf.push(b' ');
                push_u64(buf, u64::from(csr.targets()[e]) + id_base);
                if weight_column {
                    buf.push(b' ');
                    match real {
                        // Display writes the fewest digits that read back as the same f32.
                        Some(real) => {
                            use std::io::Write as _;
                            let _ = write!(buf, "{}", real[e]);
                        }
                        None => push_u64(buf, csr.weights().map_or(1, |w| u64::from(w[e]))),
                    }
                }
                buf.push(b'\n');
            }
        }
    })
}

/// Writes `header`, then the lines that `format` makes for each group of nodes: groups are
/// formatted in parallel, a batch at a time, while the previous batch is written, in order.
/// Progress is in edges.
pub(crate) fn write_chunked<F>(
    csr: &Csr,
    header: &[u8],
    out: &mut dyn Write,
    progress: &dyn Progress,
    format: F,
) -> std::io::Result<()>
where
    F: Fn(Range<u32>, &mut Vec<u8>) + Sync,
{
    out.write_all(header)?;
    let groups = write_groups(csr);
    let edges_in = |nodes: &Range<u32>| csr.offsets()[nodes.end as usize] - csr.offsets()[nodes.start as usize];
    let format_batch = |batch: &[Range<u32>]| -> Vec<(u64, Vec<u8>)> {
        batch
            .par_iter()
            .with_max_len(1)
            .map(|nodes| {
                let edges = edges_in(nodes);
                let mut buf = Vec::with_capacity((edges as usize + nodes.len()) * 24);
                format(nodes.clone(), &mut buf);
                (edges, buf)
            })
            .collect()
    };
    let mut write_batch = |buffers: &[(u64, Vec<u8>)]| -> std::io::Result<()> {
        for (edges, buf) in buffers {
            out.write_all(buf)?;
            progress.advance(*edges);
        }
        Ok(())
    };
    let batch_len = 4 * rayon::current_num_threads().max(1);
    let mut previous: Vec<(u64, Vec<u8>)> = Vec::new();
    for batch in groups.chunks(batch_len) {
        let mut formatted = Vec::new();
        let mut written = Ok(());
        // The writer need not be Send, so it stays on this thread while the pool formats.
        rayon::in_place_scope(|scope| {
            scope.spawn(|_| formatted = format_batch(batch));
            written = write_batch(&previous);
        });
        written?;
        previous = formatted;
    }
    write_batch(&previous)
}

/// What the value columns of a text format hold after [`real_weight`]: `u32` weights, or `f32`
/// bits under [`RealWeights::Keep`].
pub(crate) fn keeps_reals(real: RealWeights) -> bool {
    real == RealWeights::Keep
}

/// A real value as a weight word. Under [`RealWeights::Keep`], the bits of the nearest `f32`,
/// refusing one `f32` cannot hold (overflow, a non-zero value that would become 0, NaN);
/// otherwise a whole number as it is, and another one rounded when `real` says so (after
/// multiplying by `scale`), else an error; such a weight must be non-negative and fit in 32 bits.
pub(crate) fn real_weight(s: &mut Scanner, real: RealWeights, scale: f64) -> Result<u32, TextError> {
    let token = s.word();
    if token.is_empty() {
        return Err(s.error("expected a real value, found the end of the line"));
    }
    let value = if token.len() <= 19 && token.iter().all(u8::is_ascii_digit) {
        token.iter().fold(0u64, |v, &d| v * 10 + u64::from(d - b'0')) as f64
    } else {
        match std::str::from_utf8(token).ok().and_then(|t| t.parse::<f64>().ok()) {
            Some(value) => value,
            None => return Err(s.error(format!("expected a real value, found '{}'", quote(token)))),
        }
    };
    if real == RealWeights::Keep {
        let single = value as f32;
        return if value.is_nan() {
            Err(s.error(format!("value {} cannot be a weight", quote(token))))
        } else if single.is_infinite() {
            Err(s.error(format!(
                "value {} is beyond the range of grail's real weights (f32, finite, up to about \
                 3.4e38)",
                quote(token)
            )))
        } else if value != 0.0 && single == 0.0 {
            Err(s.error(format!(
                "value {} is too small for grail's real weights (f32) and would become 0; read it \
                 with --weights scale",
                quote(token)
            )))
        } else {
            Ok(single.to_bits())
        };
    }
    let value = value * scale;
    let rounded = value.round();
    if value.is_nan() || value < 0.0 {
        Err(s.error(format!("value {} cannot be a weight: integer weights are non-negative", quote(token))))
    } else if value.is_finite() && rounded != value && real == RealWeights::Refuse {
        Err(s.error(format!(
            "value {} is not a whole number, and --weights refuse asks for integer weights: read \
             it with --weights keep (real weights, the default), round (nearest integer), scale \
             (smallest weight 1, ratios kept) or ignore (unweighted)",
            quote(token)
        )))
    } else if rounded > f64::from(u32::MAX) {
        Err(s.error(format!("value {} rounds to a weight that does not fit in 32 bits", quote(token))))
    } else {
        Ok(rounded as u32)
    }
}

/// The factor `--weights scale` multiplies real values by: the one that makes the smallest
/// positive value 1, so every weight keeps its ratio to the others to within rounding (a
/// weight 1.5 times the smallest becomes 2). `value_column` is the 0-based field of the value on
/// each line (after `body`); lines starting with `%` or `#` are comments. An error at the
/// largest value's line when it would not fit in 32 bits.
pub(crate) fn scale_factor(bytes: &[u8], body: usize, value_column: usize) -> Result<f64, TextError> {
    let (mut smallest, mut largest) = (f64::INFINITY, 0.0f64);
    let mut largest_at = body;
    let mut s = Scanner::new(bytes, body..bytes.len());
    while !s.is_done() {
        s.skip_spaces();
        match s.peek() {
            None => break,
            Some(b'\n' | b'%' | b'#') => {
                s.next_line();
                continue;
            }
            Some(_) => {}
        }
        for _ in 0..value_column {
            s.word();
            s.skip_spaces();
        }
        let token = s.word();
        if let Some(value) = std::str::from_utf8(token).ok().and_then(|t| t.parse::<f64>().ok())
            && value.is_finite()
            && value > 0.0
        {
            smallest = smallest.min(value);
            if value > largest {
                largest = value;
                largest_at = s.pos() - token.len();
            }
        }
        s.next_line();
    }
    if !smallest.is_finite() {
        return Ok(1.0);
    }
    let factor = 1.0 / smallest;
    if (largest * factor).round() > f64::from(u32::MAX) {
        return Err(TextError::new(
            largest_at,
            format!(
                "--weights scale: the largest weight is {:.3e} times the smallest, more than 32-bit weights \
                 hold; use --weights round",
                largest / smallest
            ),
        ));
    }
    Ok(factor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_end_at_newlines_and_cover_everything() {
        let text = b"1 2\n33 44\n555 666\n7 8\n9 10";
        for min in 1..12 {
            let ranges = chunk_ranges(text, 4, min);
            assert_eq!(ranges.first().unwrap().start, 4);
            assert_eq!(ranges.last().unwrap().end, text.len());
            for w in ranges.windows(2) {
                assert_eq!(w[0].end, w[1].start);
                assert_eq!(text[w[0].end - 1], b'\n');
            }
        }
        assert!(chunk_ranges(text, text.len(), 1).is_empty());
    }

    #[test]
    fn numbers() {
        let text = b"  12\t0 18446744073709551615 99999999999999999999999 x1 -4\n";
        let mut s = Scanner::new(text, 0..text.len());
        assert_eq!(s.number("a").unwrap(), 12);
        assert_eq!(s.number("a").unwrap(), 0);
        assert_eq!(s.number("a").unwrap(), u64::MAX);
        assert_eq!(s.number("a").unwrap(), u64::MAX);
        assert_eq!(s.number("a node id").unwrap_err().message, "expected a node id, found 'x1'");
        assert!(s.number("a weight").unwrap_err().message.contains("negative"));
        let err = s.number("a weight").unwrap_err();
        assert_eq!(err.message, "expected a weight, found the end of the line");
        assert_eq!(line_at(text, err.offset), 1);
    }

    #[test]
    fn short_and_long_numbers_agree() {
        for len in 1..=21 {
            for digit in [b'1', b'9'] {
                let token: Vec<u8> = std::iter::repeat_n(digit, len).collect();
                for tail in [&b" 1234567"[..], b"\n", b"\t\t\t\t\t\t\t\t", b""] {
                    let text = [&token[..], tail].concat();
                    let mut s = Scanner::new(&text, 0..text.len());
                    let expected = std::str::from_utf8(&token).unwrap().parse::<u64>().unwrap_or(u64::MAX);
                    assert_eq!(s.number("n").unwrap(), expected, "{text:?}");
                    assert_eq!(s.pos(), len);
                }
            }
        }
        for bad in [&b"12x4567 "[..], b"1234567x", b"-1234567", b"1.000000"] {
            let mut s = Scanner::new(bad, 0..bad.len());
            assert!(s.number("n").is_err(), "{bad:?}");
        }
    }

    #[test]
    fn formats_numbers() {
        let mut buf = Vec::new();
        for v in [0, 7, 9, 10, 99, 100, 101, 1000, 12345, 4294967295, u64::MAX] {
            buf.clear();
            push_u64(&mut buf, v);
            assert_eq!(buf, v.to_string().as_bytes());
        }
    }
}
