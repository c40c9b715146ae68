//! grail's own binary CSR format (`.gcsr`): the fastest way to load a graph.
//!
//! Every field is little-endian and every array starts at a multiple of 8 bytes, so the file can
//! be memory-mapped and its arrays used in place. Version 1:
//!
//! | bytes | field |
//! | --- | --- |
//! | 8 | magic `GRAILCSR` |
//! | 4 | format version (1) |
//! | 4 | flags: bit 0 set when the graph has edge weights; other bits must be 0 |
//! | 8 | node count `n` (at most 2^32 - 1) |
//! | 8 | edge count `m` |
//! | 8 | checksum (below) |
//! | 8 | reserved, 0 |
//! | 8 (n + 1) | CSR offsets: node `u`'s edges are `offsets[u]..offsets[u + 1]` |
//! | 4 m | edge targets (`u32`), then zero padding to a multiple of 8 |
//! | 4 m | edge weights (`u32`) when flag bit 0 is set, then zero padding to a multiple of 8 |
//!
//! The checksum covers everything after the 48-byte header: it is cut into 4 MiB blocks, each
//! block is hashed with XXH3-64 (seed 0), and the checksum is the XXH3-64 of those block hashes
//! written one after another as little-endian `u64`s. Blocks make it verifiable in parallel.
//! Node and edge property columns are not stored by version 1.

use std::io::Write;

use rayon::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

use super::binary::{Reader, check_length, decode_u32s, decode_u64s, write_u32s, write_u64s};
use crate::error::{Location, ParseError};
use crate::graph::{Csr, Graph, MAX_NODES};
use crate::par::{first_decrease, first_out_of_range};
use crate::progress::Progress;

/// The first 8 bytes of every `.gcsr` file.
pub const GCSR_MAGIC: &[u8; 8] = b"GRAILCSR";
/// The version this build writes and reads.
pub const GCSR_VERSION: u32 = 1;

const HEADER_BYTES: usize = 48;
const CHECKSUM_AT: u64 = 32;
const CHECKSUM_BLOCK: usize = 4 << 20;
const FLAG_WEIGHTED: u32 = 1;
const WHAT: &str = "grail binary graph";

/// The bytes an array of `elements` `u32`s takes, padded to a multiple of 8; `None` on overflow.
fn padded_u32_array(elements: u64) -> Option<u64> {
    elements.checked_mul(4)?.checked_next_multiple_of(8)
}

/// The checksum of the bytes after the header.
fn checksum(payload: &[u8]) -> u64 {
    let hashes: Vec<u8> =
        payload.par_chunks(CHECKSUM_BLOCK).flat_map_iter(|block| xxh3_64(block).to_le_bytes()).collect();
    xxh3_64(&hashes)
}

pub(crate) fn parse(bytes: &[u8], progress: &dyn Progress) -> Result<Csr, ParseError> {
    let at = |offset: u64, message: String| ParseError::new(Location::Byte(offset), message);
    let mut reader = Reader::new(bytes, WHAT);
    if reader.take(8, "the magic number")? != GCSR_MAGIC {
        return Err(at(0, format!("not a {WHAT}: the file does not start with {:?}", "GRAILCSR")));
    }
    let version = reader.u32("the header")?;
    if version != GCSR_VERSION {
        return Err(at(
            8,
            format!("{WHAT} version {version} is not supported (this grail reads version {GCSR_VERSION})"),
        ));
    }
    let flags = reader.u32("the header")?;
    if flags & !FLAG_WEIGHTED != 0 {
        return Err(at(12, format!("unknown flags {flags:#x} (this grail knows only {FLAG_WEIGHTED:#x}: weighted)")));
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
    let weighted = flags & FLAG_WEIGHTED != 0;
    let arrays = if weighted { 2 } else { 1 };
    let expected = (n + 1)
        .checked_mul(8)
        .and_then(|offsets| offsets.checked_add(padded_u32_array(m)?.checked_mul(arrays)?))
        .and_then(|payload| payload.checked_add(HEADER_BYTES as u64));
    check_length(bytes, n, m, expected)?;
    progress.begin("checking", Some(bytes.len() as u64));
    let actual_checksum = checksum(&bytes[HEADER_BYTES..]);
    progress.advance(bytes.len() as u64);
    progress.finish();
    if actual_checksum != stored_checksum {
        return Err(at(
            CHECKSUM_AT,
            format!(
                "checksum mismatch (stored {stored_checksum:#018x}, computed {actual_checksum:#018x}): the file is corrupt"
            ),
        ));
    }
    let offsets_at = reader.pos() as u64;
    let offsets = decode_u64s(reader.take(8 * (n + 1), "the offsets")?);
    if offsets[0] != 0 || offsets[n as usize] != m {
        return Err(at(
            offsets_at,
            format!("offsets run from {} to {}, expected 0 to {m}", offsets[0], offsets[n as usize]),
        ));
    }
    if let Some(i) = first_decrease(&offsets) {
        return Err(at(offsets_at + 8 * i as u64, format!("offsets decrease at node {}", i - 1)));
    }
    let targets_at = reader.pos() as u64;
    let targets = decode_u32s(reader.take(4 * m, "the targets")?);
    if let Some(e) = first_out_of_range(&targets, n) {
        return Err(at(
            targets_at + 4 * e as u64,
            format!("edge {e} points to node {}, but there are {n} nodes", targets[e]),
        ));
    }
    reader.align(8, "padding")?;
    let weights = if weighted {
        let weights = decode_u32s(reader.take(4 * m, "the weights")?);
        reader.align(8, "padding")?;
        Some(weights)
    } else {
        None
    };
    reader.finish()?;
    Ok(Csr::from_parts_unchecked(offsets, targets, weights))
}

pub(crate) fn write(graph: &Graph, out: &mut dyn Write) -> std::io::Result<()> {
    let csr = graph.out();
    let m = csr.num_edges();
    // The payload is assembled in memory once to checksum it; binary graphs are written rarely
    // and read often, so the reader's speed is what matters.
    let mut payload = Vec::with_capacity(8 * (csr.num_nodes() as usize + 1) + 2 * (4 * m as usize).next_multiple_of(8));
    write_u64s(&mut payload, csr.offsets())?;
    let pad = |payload: &mut Vec<u8>| payload.resize(payload.len().next_multiple_of(8), 0);
    write_u32s(&mut payload, csr.targets())?;
    pad(&mut payload);
    if let Some(weights) = csr.weights() {
        write_u32s(&mut payload, weights)?;
        pad(&mut payload);
    }
    out.write_all(GCSR_MAGIC)?;
    out.write_all(&GCSR_VERSION.to_le_bytes())?;
    out.write_all(&(if csr.is_weighted() { FLAG_WEIGHTED } else { 0 }).to_le_bytes())?;
    write_u64s(out, &[u64::from(csr.num_nodes()), m, checksum(&payload), 0])?;
    out.write_all(&payload)
}
