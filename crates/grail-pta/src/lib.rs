//! Inclusion-based (Andersen) points-to analysis: the data side of the analysis, which grail
//! runs as a graph program over the constraint graph.
//!
//! - [`Constraints`]: named variables (pointers, and the objects they may point to: globals,
//!   stack slots, heap allocation sites, functions) and the four kinds of inclusion constraints
//!   over them, `p = &a`, `p = q`, `p = *q` and `*p = q` — the whole input language, so that a
//!   solver needs nothing else;
//! - [`text`]: the constraint file format, every error with file and line;
//! - [`solve_sequential`]: a plain worklist solver, the reference other solvers are checked
//!   against, so it is written to be obviously right rather than fast;
//! - [`points_to`]: the solution ([`PointsTo`]), its text format and [`compare`], which names the
//!   first variable two solutions disagree on;
//! - [`check_solution`]: the independent check that a solution satisfies every constraint (a
//!   fixed point, so sound; minimality is checked by comparing with the reference);
//! - [`llvm`]: constraints extracted from textual LLVM IR (what `clang -S -emit-llvm` writes),
//!   field- and context-insensitively, with a [`Warning`] for everything the model leaves out.

mod constraints;
pub mod llvm;
pub mod points_to;
mod solve;
pub mod text;
mod verify;

pub use constraints::{Constraint, Constraints, VarId, check_name};
pub use llvm::{Warning, extract_llvm, read_llvm};
pub use points_to::{
    Difference, PointsTo, compare, parse_points_to, read_points_to, write_points_to, write_points_to_into,
};
pub use solve::solve_sequential;
pub use text::{parse_constraints, read_constraints, write_constraints, write_constraints_into};
pub use verify::{Violation, check_solution};

/// What can go wrong reading, writing or extracting constraints and solutions.
#[derive(Debug, thiserror::Error)]
pub enum PtaError {
    /// The message includes the system's, so the error has no `source` (which would print it
    /// twice in a chain of causes).
    #[error("{path}: {cause}")]
    Io { path: String, cause: std::io::Error },
    /// A malformed file: where, and what is wrong.
    #[error("{path}:{line}: {message}")]
    Malformed { path: String, line: usize, message: String },
    /// A request that cannot be met (a name that cannot be written, an unknown variable id).
    #[error("{0}")]
    Invalid(String),
}

pub type Result<T, E = PtaError> = std::result::Result<T, E>;

/// Writes through grail's one atomic writer (standard output for `-`, special files written
/// through, links followed, a temporary file renamed into place and removed on interrupt), so
/// an error never leaves a half-written file behind.
fn write_atomically(
    path: &std::path::Path,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<()> {
    grail_graph::io::write_atomically(path, write).map_err(|e| match e {
        grail_graph::GraphError::Io { path, cause } => PtaError::Io { path: path.display().to_string(), cause },
        other => PtaError::Invalid(other.to_string()),
    })
}

/// Reads a whole text file; a file that is not UTF-8 is an error naming the first bad line.
fn read_text(path: &std::path::Path) -> Result<String> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|cause| PtaError::Io { path: shown.clone(), cause })?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        PtaError::Malformed { path: shown, line, message: "the text is not UTF-8".into() }
    })
}
