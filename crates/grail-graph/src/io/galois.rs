//! (being written)
use std::io::Write;

use crate::error::{Location, ParseError};
use crate::graph::{Csr, Graph};

pub(crate) fn looks_like(bytes: &[u8]) -> bool {
    bytes.len() >= 8 && matches!(u64::from_le_bytes(bytes[..8].try_into().unwrap()), 1 | 2)
}

pub(crate) fn parse(_bytes: &[u8]) -> Result<Csr, ParseError> {
    Err(ParseError::new(Location::Whole, "galois reader is being written"))
}

pub(crate) fn write(_graph: &Graph, _out: &mut dyn Write) -> std::io::Result<()> {
    Err(std::io::Error::other("galois writer is being written"))
}
