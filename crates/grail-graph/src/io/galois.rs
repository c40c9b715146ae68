//! The Galois / LonestarGPU binary `.gr` format, the format those suites' inputs ship in.
//!
//! All fields little-endian:
//!
//! | bytes | field |
//! | --- | --- |
//! | 8 | version: 1 (32-bit node ids) or 2 (64-bit node ids) |
//! | 8 | size of one edge's data: 0 (unweighted) or 4 (`u32` weight) |
//! | 8 | node count `n` |
//! | 8 | edge count `m` |
//! | 8 n | the *end* offset of each node's edges (the start of node 0 is 0) |
//! | 4 m or 8 m | edge targets, 0-based |
//! | 0 or 4 | version 1 only: padding to a multiple of 8 when `m` is odd |
//! | 4 m | edge weights, when the data size is 4 |
//!
//! grail writes version 1 (its node ids are 32-bit) and reads both.

use std::io::Write;

use super::binary::{Reader, check_length, decode_u32s, decode_u64s, write_u32s, write_u64s};
use crate::error::{Location, ParseError};
use crate::graph::{Csr, Graph, MAX_NODES};
use crate::par::{first_decrease, first_out_of_range};

const HEADER_BYTES: u64 = 32;
const WHAT: &str = "Galois binary graph";

/// Whether the bytes start like a Galois binary graph (version 1 or 2).
pub(crate) fn looks_like(bytes: &[u8]) -> bool {
    bytes.len() >= 8 && matches!(u64::from_le_bytes(bytes[..8].try_into().unwrap()), 1 | 2)
}

pub(crate) fn parse(bytes: &[u8]) -> Result<Csr, ParseError> {
    let mut reader = Reader::new(bytes, WHAT);
    let version = reader.u64("the header")?;
    let data_size = reader.u64("the header")?;
    let n = reader.u64("the header")?;
    let m = reader.u64("the header")?;
    let at = |offset: u64, message: String| ParseError::new(Location::Byte(offset), message);
    if version != 1 && version != 2 {
        return Err(at(0, format!("unsupported {WHAT} version {version} (expected 1 or 2)")));
    }
    if data_size != 0 && data_size != 4 {
        return Err(at(8, format!("edge data of {data_size} bytes is not supported (expected 0 or 4: u32 weights)")));
    }
    if n > MAX_NODES {
        return Err(at(16, format!("{n} nodes is more than the {MAX_NODES} grail supports")));
    }
    let id_size = if version == 1 { 4 } else { 8 };
    // Check the total length before allocating anything, so a corrupt header cannot ask for
    // terabytes.
    let padding = if version == 1 && m % 2 == 1 { 4 } else { 0 };
    let expected = n
        .checked_mul(8)
        .and_then(|x| x.checked_add(m.checked_mul(id_size)?))
        .and_then(|x| x.checked_add(padding))
        .and_then(|x| x.checked_add(m.checked_mul(data_size)?))
        .and_then(|x| x.checked_add(HEADER_BYTES));
    check_length(bytes, n, m, expected)?;
    let ends_at = reader.pos() as u64;
    let ends = decode_u64s(reader.take(8 * n, "the edge offsets")?);
    let mut offsets = Vec::with_capacity(n as usize + 1);
    offsets.push(0);
    offsets.extend_from_slice(&ends);
    drop(ends);
    if let Some(u) = first_decrease(&offsets) {
        return Err(at(ends_at + 8 * (u as u64 - 1), format!("edge offsets decrease at node {}", u - 1)));
    }
    if offsets[n as usize] != m {
        return Err(at(ends_at, format!("edge offsets end at {}, but the header says {m} edges", offsets[n as usize])));
    }
    let targets_at = reader.pos() as u64;
    let targets = if version == 1 {
        decode_u32s(reader.take(4 * m, "the edge targets")?)
    } else {
        let wide = decode_u64s(reader.take(8 * m, "the edge targets")?);
        if let Some(e) = wide.iter().position(|&t| t >= n) {
            return Err(at(
                targets_at + 8 * e as u64,
                format!("edge {e} points to node {}, but there are {n} nodes", wide[e]),
            ));
        }
        wide.into_iter().map(|t| t as u32).collect()
    };
    if let Some(e) = first_out_of_range(&targets, n) {
        return Err(at(
            targets_at + id_size * e as u64,
            format!("edge {e} points to node {}, but there are {n} nodes", targets[e]),
        ));
    }
    reader.take(padding, "padding")?;
    let weights = (data_size == 4).then(|| reader.take(4 * m, "the edge weights").map(decode_u32s)).transpose()?;
    reader.finish()?;
    Ok(Csr::from_parts_unchecked(offsets, targets, weights))
}

pub(crate) fn write(graph: &Graph, out: &mut dyn Write) -> std::io::Result<()> {
    let csr = graph.out();
    let m = csr.num_edges();
    let data_size: u64 = if csr.is_weighted() { 4 } else { 0 };
    write_u64s(out, &[1, data_size, u64::from(csr.num_nodes()), m])?;
    write_u64s(out, &csr.offsets()[1..])?;
    write_u32s(out, csr.targets())?;
    if m % 2 == 1 {
        out.write_all(&[0; 4])?;
    }
    if let Some(weights) = csr.weights() {
        write_u32s(out, weights)?;
    }
    Ok(())
}
