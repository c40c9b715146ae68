//! Errors of the graph substrate.
//!
//! Every problem with user input names where it was found: the file, and the line (text formats)
//! or byte offset (binary formats), plus what was expected. Nothing here panics on bad input.

use std::fmt;
use std::path::{Path, PathBuf};

/// Where in an input a problem was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// A 1-based line of a text input.
    Line(u64),
    /// A 0-based byte offset into a binary input (after decompression).
    Byte(u64),
    /// The input as a whole (a count that does not add up, a missing header).
    Whole,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Line(line) => write!(f, "line {line}"),
            Location::Byte(offset) => write!(f, "byte {offset}"),
            Location::Whole => f.write_str("whole file"),
        }
    }
}

/// A problem found while parsing bytes, before the file it came from is known.
///
/// Parsers work on byte slices and return this; [`ParseError::in_file`] attaches the path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub location: Location,
    pub message: String,
}

impl ParseError {
    pub fn new(location: Location, message: impl Into<String>) -> Self {
        ParseError { location, message: message.into() }
    }

    /// Attaches the file the bytes came from.
    pub fn in_file(self, path: &Path) -> GraphError {
        GraphError::Malformed { path: path.to_path_buf(), location: self.location, message: self.message }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

impl std::error::Error for ParseError {}

/// Any error of the graph substrate.
#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    /// The operating system refused a read or write.
    /// The message includes the system's, so the error has no `source` (which would print it
    /// twice in a chain of causes).
    #[error("{}: {cause}", path.display())]
    Io { path: PathBuf, cause: std::io::Error },
    /// A file's contents do not follow its format.
    #[error("{}: {location}: {message}", path.display())]
    Malformed { path: PathBuf, location: Location, message: String },
    /// The format of a file could not be told from its name or contents.
    #[error("{}: {message}", path.display())]
    UnknownFormat { path: PathBuf, message: String },
    /// A request that cannot be met: a parameter out of range, a graph that a format cannot hold.
    #[error("{0}")]
    Invalid(String),
    /// A result that a verifier rejected.
    #[error("verification failed: {0}")]
    Verification(String),
}

impl GraphError {
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        GraphError::Io { path: path.to_path_buf(), cause: unwrap_io_error(source) }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        GraphError::Invalid(message.into())
    }
}

pub type Result<T, E = GraphError> = std::result::Result<T, E>;

/// The system's error inside `error` when `error` only wraps it with a path (as the `tempfile`
/// crate's errors do: `No such file or directory (os error 2) at path "/dir/.name.XXXX.tmp"`):
/// messages name their file themselves, once, and the temporary file's name means nothing to
/// the reader. `tempfile` keeps the system's error private, so its words are taken from the
/// message.
pub fn unwrap_io_error(error: std::io::Error) -> std::io::Error {
    if error.get_ref().is_none() {
        return error;
    }
    let message = error.to_string();
    match message.find(" at path \"") {
        Some(at) if message.ends_with('"') => std::io::Error::new(error.kind(), &message[..at]),
        _ => error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_temporary_files_path_is_not_part_of_the_message() {
        let wrapped = tempfile::Builder::new().tempfile_in("/nonexistent-grail-dir").unwrap_err();
        assert!(wrapped.to_string().contains("at path"), "{wrapped}");
        let error = GraphError::io(Path::new("/nonexistent-grail-dir/g.el"), wrapped);
        assert_eq!(error.to_string(), "/nonexistent-grail-dir/g.el: No such file or directory (os error 2)");
        assert!(std::error::Error::source(&error).is_none());
        let plain = std::io::Error::other("disk on fire");
        assert_eq!(GraphError::io(Path::new("x"), plain).to_string(), "x: disk on fire");
    }
}
