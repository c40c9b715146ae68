//! (being written)
use std::io::Write;

use crate::builder::EdgeList;
use crate::error::{Location, ParseError};
use crate::graph::Graph;
use crate::progress::Progress;

pub(crate) fn parse(_bytes: &[u8], _progress: &dyn Progress) -> Result<EdgeList, ParseError> {
    Err(ParseError::new(Location::Whole, "mtx reader is being written"))
}

pub(crate) fn write(_graph: &Graph, _out: &mut dyn Write, _progress: &dyn Progress) -> std::io::Result<()> {
    Err(std::io::Error::other("mtx writer is being written"))
}
