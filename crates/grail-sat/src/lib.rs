//! Boolean satisfiability: the data side of survey propagation, which grail runs as a graph
//! program over the bipartite graph of clauses and variables.
//!
//! - [`Formula`]: a CNF formula stored flat (one literal array and clause offsets, the CSR shape
//!   a graph program reads), literals as DIMACS writes them: non-zero `i32`, `v` or `-v`;
//! - [`dimacs`]: DIMACS CNF files and `v`-line solution files, every error with file and line;
//! - [`Assignment`]: a value per variable, possibly unassigned;
//! - [`check`]: a verifier that trusts nothing of the code that made the assignment;
//! - [`random_ksat`]: uniform random k-SAT, generated in parallel yet the same for any thread
//!   count, so a benchmark instance is named by its arguments alone;
//! - [`walksat()`]: local search, the finishing step of survey propagation and a baseline;
//! - [`survey_propagation()`]: a sequential reference of survey-inspired decimation, to compare
//!   the grail program's surveys and outcomes with.

mod assignment;
pub mod dimacs;
mod formula;
pub mod generate;
pub mod sp;
pub mod verify;
pub mod walksat;

pub use assignment::Assignment;
pub use dimacs::{parse_cnf, parse_solution, read_cnf, read_solution, write_cnf, write_solution};
pub use formula::{Formula, MAX_VARIABLES, push_cleaned};
pub use generate::random_ksat;
pub use sp::{SpOptions, SpOutcome, SpStatus, check_options, survey_propagation};
pub use verify::{Report, UnsatisfiedClause, check};
pub use walksat::{
    PickRule, WalkSatOptions, WalkSatOutcome, suggested_noise, walksat, walksat_outcome, walksat_portfolio,
};

/// What can go wrong reading, writing, generating or solving.
#[derive(Debug, thiserror::Error)]
pub enum SatError {
    /// The message includes the system's, so the error has no `source` (which would print it
    /// twice in a chain of causes).
    #[error("{path}: {cause}")]
    Io { path: String, cause: std::io::Error },
    /// A malformed file: where, and what is wrong.
    #[error("{path}:{line}: {message}")]
    Malformed { path: String, line: usize, message: String },
    /// A request that cannot be met (a parameter out of range, a literal outside the formula).
    #[error("{0}")]
    Invalid(String),
}

pub type Result<T, E = SatError> = std::result::Result<T, E>;
