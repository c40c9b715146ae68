//! grail's own binary CSR format (`.gcsr`): the fastest way to load a graph, prepared or not.
//!
//! Every field is little-endian and every array starts at a multiple of 8 bytes, so the file can
//! be memory-mapped and its arrays used in place. A 48-byte header, then the arrays:
//!
//! | bytes | field |
//! | --- | --- |
//! | 8 | magic `GRAILCSR` |
//! | 4 | format version (1 or 2; this build writes 2) |
//! | 4 | flags (below) |
//! | 8 | node count `n` (at most 2^32 - 1) |
//! | 8 | edge count `m` |
//! | 8 | checksum (below) |
//! | 8 | reserved, 0 |
//! | 8 (n + 1) | CSR offsets: node `u`'s edges are `offsets[u]..offsets[u + 1]` |
//! | 4 m | edge targets (`u32`), then zero padding to a multiple of 8 |
//! | 4 m | edge weights (`u32`) when flag bit 0 is set, then zero padding to a multiple of 8 |
//! | 8 (n + 1) | version 2, flag bit 5 (unless bits 1 and 4): the reverse CSR's offsets |
//! | 4 m | its sources (`u32`), sorted within each node's in-edges; padded to 8 |
//! | 4 m | its weights when bit 0 is set too; padded to 8 |
//! | 8 m | version 2, flag bit 6: for every in-edge, its out-edge id (`u64`) |
//!
//! Flags: bit 0, the graph has edge weights. Version 2 adds what is known of the edges and what
//! comes with them: bit 1, adjacencies sorted by target then weight; bit 2, no self-loops; bit 3,
//! no duplicate edges (only with bit 1); bit 4, symmetric (every `u -> v` of weight `w` has a
//! `v -> u` of weight `w`, counting multiplicities); bit 5, the reverse CSR comes with the graph
//! (its arrays are stored, except when bits 1 and 4 are set too: the reverse CSR of a sorted
//! symmetric graph is the out-CSR itself); bit 6, in-edge ids are stored (only with bit 5);
//! bit 7, the weights are real: each word is an `f32` (only with bit 0; NaN and infinities are
//! refused).
//! Other bits must be 0.
//!
//! Checksum: the bytes after the header are cut into 4 MiB blocks, each hashed with XXH3-64
//! (seed 0); the checksum is the XXH3-64 of those hashes written one after another as
//! little-endian `u64`s (blocks make it verifiable in parallel). Version 2 puts first in that list
//! the hash of the header itself, its checksum field taken as 0, so that the flags are covered.
//!
//! A version 2 reader checks what the flags claim: order, self-loops and duplicates exactly;
//! symmetry, and a stored reverse CSR without in-edge ids, by a fingerprint of the edge multiset
//! under a fresh random key (see [`crate::facts`]); a reverse CSR with in-edge ids exactly, edge
//! by edge. Node and edge property columns are not stored.

use std::io::Write;

use rayon::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

use super::binary::{Reader, check_length, decode_u32s, decode_u64s, write_u32s, write_u64s};
use crate::error::{Location, ParseError};
use crate::facts::{Facts, Fingerprint, scan};
use crate::graph::{Csr, EdgeId, Graph, MAX_NODES, NodeId};
use crate::par::{first_decrease, first_index, first_out_of_range};
use crate::progress::Progress;

/// The first 8 bytes of every `.gcsr` file.
pub const GCSR_MAGIC: &[u8; 8] = b"GRAILCSR";
/// The version this build writes (it reads 1 too).
pub const GCSR_VERSION: u32 = 2;

const HEADER_BYTES: usize = 48;
const CHECKSUM_AT: usize = 32;
const CHECKSUM_BLOCK: usize = 4 << 20;
const WHAT: &str = "grail binary graph";

const FLAG_WEIGHTED: u32 = 1 << 0;
const FLAG_SORTED: u32 = 1 << 1;
const FLAG_NO_SELF_LOOPS: u32 = 1 << 2;
const FLAG_NO_DUPLICATES: u32 = 1 << 3;
const FLAG_SYMMETRIC: u32 = 1 << 4;
const FLAG_REVERSE: u32 = 1 << 5;
const FLAG_IN_EDGE_IDS: u32 = 1 << 6;
const FLAG_REAL_WEIGHTS: u32 = 1 << 7;
const FLAGS_V2: u32 = (1 << 8) - 1;

/// The bytes an array of `elements` `u32`s takes, padded to a multiple of 8; `None` on overflow.
fn padded_u32_array(elements: u64) -> Option<u64> {
    elements.checked_mul(4)?.checked_next_multiple_of(8)
}

/// The checksum of a file: of its payload, and for version 2 of its header too.
fn checksum(header: Option<&[u8]>, payload: &[u8]) -> u64 {
    let mut hashes: Vec<u8> = Vec::with_capacity(8 * (payload.len() / CHECKSUM_BLOCK + 2));
    if let Some(header) = header {
        let mut header = header[..HEADER_BYTES].to_vec();
        header[CHECKSUM_AT..CHECKSUM_AT + 8].fill(0);
        hashes.extend(xxh3_64(&header).to_le_bytes());
    }
    let blocks: Vec<u8> =
        payload.par_chunks(CHECKSUM_BLOCK).flat_map_iter(|block| xxh3_64(block).to_le_bytes()).collect();
    hashes.extend(blocks);
    xxh3_64(&hashes)
}

fn at(offset: u64, message: String) -> ParseError {
    ParseError::new(Location::Byte(offset), message)
}

pub(crate) fn parse(bytes: &[u8], progress: &dyn Progress) -> Result<Graph, ParseError> {
    let mut reader = Reader::new(bytes, WHAT);
    if reader.take(8, "the magic number")? != GCSR_MAGIC {
        return Err(at(0, format!("not a {WHAT}: the file does not start with {:?}", "GRAILCSR")));
    }
    let version = reader.u32("the header")?;
    if version != 1 && version != 2 {
        return Err(at(8, format!("{WHAT} version {version} is not supported (this grail reads versions 1 and 2)")));
    }
    let flags = reader.u32("the header")?;
    let known = if version == 1 { FLAG_WEIGHTED } else { FLAGS_V2 };
    if flags & !known != 0 {
        return Err(at(
            12,
            format!("unknown flags {:#x} for version {version} (this grail knows {known:#x})", flags & !known),
        ));
    }
    let n = reader.u64("the header")?;
    let m = reader.u64("the header")?;
    let stored_checksum = reader.u64("the header")?;
    let reserved = reader.u64("the header")?;
    if reserved != 0 {
        return Err(at(40, format!("reserved header field is {reserved:#x}, expected 0")));
    }
    if n > MAX_NODES {
        return Err(at(16, format!("{n} nodes is more than the {MAX_NODES} a graph may have")));
    }
    let facts = Facts {
        sorted: flags & FLAG_SORTED != 0,
        no_self_loops: flags & FLAG_NO_SELF_LOOPS != 0,
        no_duplicates: flags & FLAG_NO_DUPLICATES != 0,
        symmetric: flags & FLAG_SYMMETRIC != 0,
    };
    let (weighted, has_reverse, has_ids) =
        (flags & FLAG_WEIGHTED != 0, flags & FLAG_REVERSE != 0, flags & FLAG_IN_EDGE_IDS != 0);
    if facts.no_duplicates && !facts.sorted {
        return Err(at(12, "flag 0x8 (no duplicates) is only valid with flag 0x2 (sorted)".into()));
    }
    let real = flags & FLAG_REAL_WEIGHTS != 0;
    if real && !weighted {
        return Err(at(12, "flag 0x80 (real weights) is only valid with flag 0x1 (weighted)".into()));
    }
    if has_ids && !has_reverse {
        return Err(at(12, "flag 0x40 (in-edge ids) is only valid with flag 0x20 (reverse CSR)".into()));
    }
    // The reverse CSR of a sorted symmetric graph is the out-CSR: it is not stored again.
    let reverse_stored = has_reverse && !facts.reverse_is_out();
    let arrays = if weighted { 2 } else { 1 };
    let csr_bytes = |n: u64, m: u64| (n + 1).checked_mul(8)?.checked_add(padded_u32_array(m)?.checked_mul(arrays)?);
    let expected = csr_bytes(n, m)
        .and_then(|out| if reverse_stored { out.checked_mul(2) } else { Some(out) })
        .and_then(|payload| if has_ids { payload.checked_add(m.checked_mul(8)?) } else { Some(payload) })
        .and_then(|payload| payload.checked_add(HEADER_BYTES as u64));
    check_length(bytes, n, m, expected)?;
    progress.begin("checking", Some(bytes.len() as u64));
    let actual_checksum = checksum((version == 2).then_some(bytes), &bytes[HEADER_BYTES..]);
    progress.advance(bytes.len() as u64);
    progress.finish();
    if actual_checksum != stored_checksum {
        return Err(at(
            CHECKSUM_AT as u64,
            format!(
                "checksum mismatch (stored {stored_checksum:#018x}, computed {actual_checksum:#018x}): the file is corrupt"
            ),
        ));
    }
    let out = read_csr(&mut reader, n, m, weighted, real, "")?;
    let reverse = if reverse_stored {
        let reverse_at = reader.pos() as u64;
        Some((reverse_at, read_csr(&mut reader, n, m, weighted, real, "reverse ")?))
    } else {
        None
    };
    let ids = if has_ids {
        let ids_at = reader.pos() as u64;
        Some((ids_at, decode_u64s(reader.take(8 * m, "the in-edge ids")?)))
    } else {
        None
    };
    reader.finish()?;
    check_facts(&out.1, out.0, facts)?;
    if let Some((reverse_at, (sources_at, reverse))) = &reverse {
        check_reverse(&out.1, reverse, *reverse_at, *sources_at, ids.is_some())?;
    }
    if let Some((ids_at, ids)) = &ids {
        let sources = reverse.as_ref().map_or(&out.1, |(_, (_, reverse))| reverse);
        check_in_edge_ids(&out.1, sources, ids, *ids_at)?;
    }
    let mut graph = Graph::with_facts(out.1, facts);
    if has_reverse {
        graph.set_reverse(reverse.map(|(_, (_, csr))| csr), ids.map(|(_, ids)| ids));
    }
    Ok(graph)
}

/// Reads one CSR's arrays (offsets, targets, weights), checking offsets and ids; returns where
/// its targets start, and the CSR.
fn read_csr(
    reader: &mut Reader,
    n: u64,
    m: u64,
    weighted: bool,
    real: bool,
    which: &str,
) -> Result<(u64, Csr), ParseError> {
    let offsets_at = reader.pos() as u64;
    let offsets = decode_u64s(reader.take(8 * (n + 1), &format!("the {which}offsets"))?);
    if offsets[0] != 0 || offsets[n as usize] != m {
        return Err(at(
            offsets_at,
            format!("{which}offsets run from {} to {}, expected 0 to {m}", offsets[0], offsets[n as usize]),
        ));
    }
    if let Some(i) = first_decrease(&offsets) {
        return Err(at(offsets_at + 8 * i as u64, format!("{which}offsets decrease at node {}", i - 1)));
    }
    let targets_at = reader.pos() as u64;
    let what = if which.is_empty() { "the targets".to_string() } else { "the reverse sources".to_string() };
    let targets = decode_u32s(reader.take(4 * m, &what)?);
    if let Some(e) = first_out_of_range(&targets, n) {
        let kind = if which.is_empty() { "edge" } else { "in-edge" };
        let verb = if which.is_empty() { "points to" } else { "comes from" };
        return Err(at(
            targets_at + 4 * e as u64,
            format!("{kind} {e} {verb} node {}, but there are {n} nodes", targets[e]),
        ));
    }
    reader.align(8, "padding")?;
    let weights = if weighted {
        let weights_at = reader.pos() as u64;
        let weights = decode_u32s(reader.take(4 * m, &format!("the {which}weights"))?);
        // Every other reader and constructor refuses NaN and infinities too: a weight that no
        // text format can write back, and that no shortest path can sum meaningfully.
        if real && let Some(e) = first_index(weights.len(), |e| !f32::from_bits(weights[e]).is_finite()) {
            let node = offsets.partition_point(|&o| o <= e as u64) - 1;
            let (edge, arrow) = if which.is_empty() { ("edge", "->") } else { ("in-edge", "<-") };
            return Err(at(
                weights_at + 4 * e as u64,
                format!(
                    "{edge} {e} (node {node} {arrow} {}) weighs {}: real weights must be finite numbers",
                    targets[e],
                    f32::from_bits(weights[e])
                ),
            ));
        }
        reader.align(8, "padding")?;
        Some(weights)
    } else {
        None
    };
    Ok((targets_at, Csr::from_parts_unchecked(offsets, targets, weights).with_real_weights(real)))
}

/// The first node (in id order) for which `bad` holds, scanning nodes in parallel.
fn first_node(csr: &Csr, bad: impl Fn(NodeId) -> bool + Sync) -> Option<NodeId> {
    first_index(csr.num_nodes() as usize, |u| bad(u as NodeId)).map(|u| u as NodeId)
}

/// Whether edge `e` of node `u` breaks a claim.
type EdgeTest<'a> = dyn Fn(NodeId, usize) -> bool + Sync + 'a;

/// Checks every fact the flags claim of the out-edges.
fn check_facts(csr: &Csr, targets_at: u64, facts: Facts) -> Result<(), ParseError> {
    if facts == Facts::NONE {
        return Ok(());
    }
    let found = scan(csr);
    let (targets, weights, offsets) = (csr.targets(), csr.weight_words(), csr.offsets());
    let key = |w: u32| if csr.has_real_weights() { crate::graph::real_weight_order_key(w) } else { w };
    // Whether edge `e` of node `u` breaks the claim: a self-loop, or out of order with (or equal
    // to) the edge before it in the same list.
    let self_loop = |u: NodeId, e: usize| targets[e] == u;
    let out_of_order = |u: NodeId, e: usize| {
        e > offsets[u as usize] as usize
            && (targets[e - 1] > targets[e]
                || (targets[e - 1] == targets[e] && weights.is_some_and(|w| key(w[e - 1]) > key(w[e]))))
    };
    let repeated = |u: NodeId, e: usize| e > offsets[u as usize] as usize && targets[e - 1] == targets[e];
    let claims: [(bool, &str, &EdgeTest); 3] = [
        (facts.sorted && !found.sorted, "sorted (0x2)", &out_of_order),
        (facts.no_self_loops && !found.no_self_loops, "no self-loops (0x4)", &self_loop),
        (facts.no_duplicates && !found.no_duplicates, "no duplicates (0x8)", &repeated),
    ];
    for (broken, name, breaks) in claims {
        if !broken {
            continue;
        }
        let edge = |u: NodeId| csr.edge_range(u).find(|&e| breaks(u, e));
        let u = first_node(csr, |u| edge(u).is_some()).expect("the scan found one");
        let e = edge(u).expect("the node has one");
        return Err(at(
            targets_at + 4 * e as u64,
            format!("flag {name} is set, but edge {e} (node {u} -> {}) breaks it", targets[e]),
        ));
    }
    if facts.symmetric {
        let (forward, backward) = Fingerprint::random().of(csr);
        if forward != backward {
            return Err(at(12, "flag symmetric (0x10) is set, but the edges are not symmetric".into()));
        }
    }
    Ok(())
}

/// Checks a stored reverse CSR against the out-edges: sources sorted within each node, and (when
/// no in-edge ids will check it edge by edge) the same multiset of edges.
fn check_reverse(out: &Csr, reverse: &Csr, reverse_at: u64, sources_at: u64, ids: bool) -> Result<(), ParseError> {
    let unsorted = |v: NodeId| reverse.neighbors(v).windows(2).any(|w| w[0] > w[1]);
    if let Some(v) = first_node(reverse, unsorted) {
        let range = reverse.edge_range(v);
        let p = (range.start + 1..range.end).find(|&p| reverse.targets()[p - 1] > reverse.targets()[p]).unwrap();
        return Err(at(
            sources_at + 4 * p as u64,
            format!(
                "the in-edges of node {v} are not sorted by source (in-edge {p} comes from {})",
                reverse.targets()[p]
            ),
        ));
    }
    if !ids {
        let fingerprint = Fingerprint::random();
        if fingerprint.of(out).0 != fingerprint.of(reverse).1 {
            return Err(at(reverse_at, "the reverse CSR does not hold the same edges as the graph".into()));
        }
    }
    Ok(())
}

/// Checks in-edge ids edge by edge: in-edge `p` of node `v`, from `u`, must name an out-edge of
/// `u` that points to `v` with the same weight, ids increasing within each node's in-edges (so
/// every out-edge is named exactly once).
fn check_in_edge_ids(out: &Csr, reverse: &Csr, ids: &[EdgeId], ids_at: u64) -> Result<(), ParseError> {
    let m = out.num_edges();
    let wrong = |v: NodeId, p: usize| -> Option<String> {
        let (u, e) = (reverse.targets()[p], ids[p]);
        if e >= m {
            return Some(format!("in-edge {p} names out-edge {e}, but there are {m} edges"));
        }
        let range = out.edge_range(u);
        if !range.contains(&(e as usize)) || out.targets()[e as usize] != v {
            return Some(format!("in-edge {p} ({u} -> {v}) names out-edge {e}, which is not an edge {u} -> {v}"));
        }
        if let (Some(rw), Some(w)) = (reverse.weight_words(), out.weight_words())
            && rw[p] != w[e as usize]
        {
            return Some(format!("in-edge {p} has weight {}, but out-edge {e} has {}", rw[p], w[e as usize]));
        }
        if p > reverse.edge_range(v).start && ids[p - 1] >= e {
            return Some(format!("in-edge ids of node {v} do not increase at in-edge {p}"));
        }
        None
    };
    let broken = |v: NodeId| reverse.edge_range(v).find_map(|p| wrong(v, p).map(|message| (p, message)));
    if let Some(v) = first_node(reverse, |v| broken(v).is_some()) {
        let (p, message) = broken(v).expect("found");
        return Err(at(ids_at + 8 * p as u64, message));
    }
    Ok(())
}

/// What a file's flags say of `graph`: what is known of it, completed by a parallel scan and,
/// when symmetry is unknown, by an exact check (a transpose, or sorting for unsorted lists).
fn facts_to_write(graph: &Graph) -> Facts {
    let mut facts = graph.facts();
    if !facts.is_simple_sorted() {
        facts = facts.union(scan(graph.out()));
    }
    if !facts.symmetric {
        facts.symmetric = match graph.reverse() {
            Some(reverse) if facts.sorted => crate::facts::symmetric_given_transpose(graph.out(), reverse),
            _ => graph.is_symmetric(),
        };
    }
    facts.no_duplicates &= facts.sorted;
    facts
}

/// Writes version 2: the graph, what is known of it, and the reverse CSR and in-edge ids it
/// holds (a reverse CSR that is the out-CSR itself is flagged, not stored again).
pub(crate) fn write(graph: &Graph, out: &mut dyn Write) -> std::io::Result<()> {
    let csr = graph.out();
    let m = csr.num_edges();
    let facts = facts_to_write(graph);
    let reverse_stored = graph.reverse().filter(|_| !facts.reverse_is_out());
    let ids = graph.in_edge_ids();
    let mut flags = 0;
    for (set, flag) in [
        (csr.is_weighted(), FLAG_WEIGHTED),
        (csr.has_real_weights(), FLAG_REAL_WEIGHTS),
        (facts.sorted, FLAG_SORTED),
        (facts.no_self_loops, FLAG_NO_SELF_LOOPS),
        (facts.no_duplicates, FLAG_NO_DUPLICATES),
        (facts.symmetric, FLAG_SYMMETRIC),
        (graph.reverse().is_some(), FLAG_REVERSE),
        (ids.is_some(), FLAG_IN_EDGE_IDS),
    ] {
        if set {
            flags |= flag;
        }
    }
    // The payload is assembled in memory once to checksum it; binary graphs are written rarely
    // and read often, so the reader's speed is what matters.
    let csr_bytes = 8 * (csr.num_nodes() as usize + 1) + 2 * (4 * m as usize).next_multiple_of(8);
    let mut payload = Vec::with_capacity(csr_bytes * if reverse_stored.is_some() { 2 } else { 1 } + 8 * m as usize);
    write_csr(&mut payload, csr)?;
    if let Some(reverse) = reverse_stored {
        write_csr(&mut payload, reverse)?;
    }
    if let Some(ids) = ids {
        write_u64s(&mut payload, ids)?;
    }
    let mut header = Vec::with_capacity(HEADER_BYTES);
    header.extend_from_slice(GCSR_MAGIC);
    header.extend(GCSR_VERSION.to_le_bytes());
    header.extend(flags.to_le_bytes());
    write_u64s(&mut header, &[u64::from(csr.num_nodes()), m, 0, 0])?;
    let sum = checksum(Some(&header), &payload);
    header[CHECKSUM_AT..CHECKSUM_AT + 8].copy_from_slice(&sum.to_le_bytes());
    out.write_all(&header)?;
    out.write_all(&payload)
}

/// Writes version 1 (the out-edges only), for grail builds that read no other version.
pub(crate) fn write_version_1(graph: &Graph, out: &mut dyn Write) -> std::io::Result<()> {
    let csr = graph.out();
    if csr.has_real_weights() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "version 1 of .gcsr holds integer weights only; this graph's are real (write version 2)",
        ));
    }
    let mut payload = Vec::new();
    write_csr(&mut payload, csr)?;
    out.write_all(GCSR_MAGIC)?;
    out.write_all(&1u32.to_le_bytes())?;
    out.write_all(&(if csr.is_weighted() { FLAG_WEIGHTED } else { 0 }).to_le_bytes())?;
    write_u64s(out, &[u64::from(csr.num_nodes()), csr.num_edges(), checksum(None, &payload), 0])?;
    out.write_all(&payload)
}

fn write_csr(payload: &mut Vec<u8>, csr: &Csr) -> std::io::Result<()> {
    let pad = |payload: &mut Vec<u8>| payload.resize(payload.len().next_multiple_of(8), 0);
    write_u64s(payload, csr.offsets())?;
    write_u32s(payload, csr.targets())?;
    pad(payload);
    if let Some(weights) = csr.weight_words() {
        write_u32s(payload, weights)?;
        pad(payload);
    }
    Ok(())
}
