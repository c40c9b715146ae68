//! (being written)
use std::io::Write;

use crate::builder::EdgeList;
use crate::error::{Location, ParseError, Result};
use crate::graph::Graph;
use crate::progress::Progress;

pub(crate) fn parse(_bytes: &[u8], _progress: &dyn Progress) -> Result<(EdgeList, Option<Vec<u32>>), ParseError> {
    Err(ParseError::new(Location::Whole, "metis reader is being written"))
}

pub(crate) fn check_writable(_graph: &Graph) -> Result<()> {
    Ok(())
}

pub(crate) fn write(_graph: &Graph, _out: &mut dyn Write, _progress: &dyn Progress) -> std::io::Result<()> {
    Err(std::io::Error::other("metis writer is being written"))
}
