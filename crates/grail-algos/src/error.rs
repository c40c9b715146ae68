//! Errors of running a suite algorithm.

use grail_graph::GraphError;
use grail_runtime::RuntimeError;

#[derive(Debug, thiserror::Error)]
pub enum AlgoError {
    /// The graph or a node id is not what the algorithm needs, or a verifier failed.
    #[error(transparent)]
    Graph(#[from] GraphError),
    /// The CPU backend could not build or run the program.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// A suite program that does not compile: a bug in grail, reported with its diagnostics.
    #[error("the suite program `{name}` does not compile; this is a bug in grail:\n{diagnostics}")]
    Program { name: String, diagnostics: String },
    /// An optimization pass produced an invalid module: a bug in grail.
    #[error("internal error (a bug in grail): {0}")]
    Internal(String),
    /// A variant, parameter or option the algorithm does not have.
    #[error("{0}")]
    Usage(String),
}

impl AlgoError {
    /// Whether a verifier rejected the result (as opposed to the run failing).
    pub fn is_verification_failure(&self) -> bool {
        matches!(self, AlgoError::Graph(GraphError::Verification(_)))
    }
}

pub type Result<T, E = AlgoError> = std::result::Result<T, E>;
