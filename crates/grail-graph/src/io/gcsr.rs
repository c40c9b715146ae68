//! (being written)
use std::io::Write;

use crate::error::{Location, ParseError};
use crate::graph::{Csr, Graph};
use crate::progress::Progress;

pub const GCSR_MAGIC: &[u8; 8] = b"GRAILCSR";
pub const GCSR_VERSION: u32 = 1;

pub(crate) fn parse(_bytes: &[u8], _progress: &dyn Progress) -> Result<Csr, ParseError> {
    Err(ParseError::new(Location::Whole, "gcsr reader is being written"))
}

pub(crate) fn write(_graph: &Graph, _out: &mut dyn Write) -> std::io::Result<()> {
    Err(std::io::Error::other("gcsr writer is being written"))
}
