//! Little-endian array helpers shared by the binary formats.

use rayon::prelude::*;

use crate::error::{Location, ParseError};

/// A cursor over a binary input that reports truncation with the offset it needed.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    what: &'static str,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8], what: &'static str) -> Self {
        Reader { bytes, pos: 0, what }
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// The next `len` bytes, described as `part` if the input ends first.
    pub(crate) fn take(&mut self, len: u64, part: &str) -> Result<&'a [u8], ParseError> {
        let available = (self.bytes.len() - self.pos) as u64;
        if len > available {
            return Err(ParseError::new(
                Location::Byte(self.bytes.len() as u64),
                format!(
                    "{} is truncated: {part} needs {len} bytes from byte {}, but the file ends after {available}",
                    self.what, self.pos
                ),
            ));
        }
        let slice = &self.bytes[self.pos..self.pos + len as usize];
        self.pos += len as usize;
        Ok(slice)
    }

    pub(crate) fn u32(&mut self, part: &str) -> Result<u32, ParseError> {
        Ok(u32::from_le_bytes(self.take(4, part)?.try_into().unwrap()))
    }

    pub(crate) fn u64(&mut self, part: &str) -> Result<u64, ParseError> {
        Ok(u64::from_le_bytes(self.take(8, part)?.try_into().unwrap()))
    }

    /// Skips padding up to the next multiple of `align`.
    pub(crate) fn align(&mut self, align: usize, part: &str) -> Result<(), ParseError> {
        let pad = (align - self.pos % align) % align;
        self.take(pad as u64, part).map(|_| ())
    }

    /// Fails unless the whole input has been consumed.
    pub(crate) fn finish(&self) -> Result<(), ParseError> {
        if self.pos == self.bytes.len() {
            Ok(())
        } else {
            Err(ParseError::new(
                Location::Byte(self.pos as u64),
                format!("{} has {} unexpected bytes after its end", self.what, self.bytes.len() - self.pos),
            ))
        }
    }
}

/// Decodes little-endian `u32`s in parallel.
pub(crate) fn decode_u32s(bytes: &[u8]) -> Vec<u32> {
    let mut out = vec![0u32; bytes.len() / 4];
    out.par_chunks_mut(1 << 16).zip(bytes.par_chunks(4 << 16)).for_each(|(out, bytes)| {
        for (o, b) in out.iter_mut().zip(bytes.chunks_exact(4)) {
            *o = u32::from_le_bytes(b.try_into().unwrap());
        }
    });
    out
}

/// Decodes little-endian `u64`s in parallel.
pub(crate) fn decode_u64s(bytes: &[u8]) -> Vec<u64> {
    let mut out = vec![0u64; bytes.len() / 8];
    out.par_chunks_mut(1 << 15).zip(bytes.par_chunks(8 << 15)).for_each(|(out, bytes)| {
        for (o, b) in out.iter_mut().zip(bytes.chunks_exact(8)) {
            *o = u64::from_le_bytes(b.try_into().unwrap());
        }
    });
    out
}

/// Writes `values` as little-endian bytes, in large pieces.
pub(crate) fn write_u32s(out: &mut dyn std::io::Write, values: &[u32]) -> std::io::Result<()> {
    let mut buffer = Vec::with_capacity(1 << 20);
    for chunk in values.chunks(1 << 18) {
        buffer.clear();
        buffer.extend(chunk.iter().flat_map(|v| v.to_le_bytes()));
        out.write_all(&buffer)?;
    }
    Ok(())
}

/// Writes `values` as little-endian bytes, in large pieces.
pub(crate) fn write_u64s(out: &mut dyn std::io::Write, values: &[u64]) -> std::io::Result<()> {
    let mut buffer = Vec::with_capacity(1 << 20);
    for chunk in values.chunks(1 << 17) {
        buffer.clear();
        buffer.extend(chunk.iter().flat_map(|v| v.to_le_bytes()));
        out.write_all(&buffer)?;
    }
    Ok(())
}

/// Fails unless a binary graph's length is the `expected` one its header implies (`None` when
/// that size overflows). The error points at the header's edge count, at byte 24 in both formats.
pub(crate) fn check_length(bytes: &[u8], n: u64, m: u64, expected: Option<u64>) -> Result<(), ParseError> {
    if expected == Some(bytes.len() as u64) {
        return Ok(());
    }
    let expected = expected.map_or("more than 2^64".to_string(), |e| e.to_string());
    Err(ParseError::new(
        Location::Byte(24),
        format!("header describes {n} nodes and {m} edges ({expected} bytes), but the file has {} bytes", bytes.len()),
    ))
}
