//! The one error type of the library.

use thiserror::Error;

/// Anything that can go wrong: a graph that cannot be read or is not what an algorithm needs, a
/// program that does not compile, a backend that cannot build or run it, a result that fails
/// verification, a parameter that does not exist. Every message names what and where, as the
/// command line prints it.
#[derive(Debug, Error)]
pub enum Error {
    /// Reading, building or checking a graph; a verifier that rejected a result.
    #[error(transparent)]
    Graph(#[from] grail_graph::GraphError),
    /// A suite algorithm could not run as asked (a variant or parameter it does not have, a
    /// source node outside the graph).
    #[error(transparent)]
    Algorithm(#[from] grail_algos::AlgoError),
    /// The CPU or GPU backend could not build or run a program (no C compiler, no GPU, a fault).
    #[error(transparent)]
    Runtime(#[from] grail_runtime::RuntimeError),
    /// A grail program with errors: the rendered diagnostics, with file, line and column.
    #[error("{0}")]
    Compile(String),
    /// A property, parameter or option the program or call does not have, or of another type.
    #[error("{0}")]
    Usage(String),
}

impl From<grail_runtime::GpuError> for Error {
    fn from(error: grail_runtime::GpuError) -> Error {
        Error::Runtime(error.into())
    }
}

impl Error {
    /// Whether the run was stopped by its time limit (`time_limit`).
    pub fn is_timeout(&self) -> bool {
        use grail_runtime::RuntimeError::TimedOut;
        matches!(self, Error::Runtime(TimedOut { .. }))
            || matches!(self, Error::Algorithm(grail_algos::AlgoError::Runtime(TimedOut { .. })))
    }

    /// Whether a verifier rejected a result (as opposed to the run failing).
    pub fn is_verification_failure(&self) -> bool {
        matches!(self, Error::Graph(grail_graph::GraphError::Verification(_)))
            || matches!(self, Error::Algorithm(e) if e.is_verification_failure())
    }
}

/// `Result` with [`enum@Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
