//! Errors of the runtime: each says what failed and what the user can do about it.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// No usable C compiler: the CPU backend cannot build anything.
    #[error(
        "no C compiler found: `{program}` {problem}. grail's CPU backend builds the code it generates with the \
         system C compiler: install gcc or clang (for example `apt-get install gcc`), or set CC to a compiler's path"
    )]
    NoCompiler { program: String, problem: String },
    /// The C compiler rejected generated code: a bug in grail's code generator, reported in full.
    #[error("the C compiler `{program}` failed on generated code ({status}); this is a bug in grail:\n{log}")]
    CompileFailed { program: String, status: String, log: String },
    /// A built library could not be loaded.
    #[error("cannot load {}: {message}", path.display())]
    Load { path: PathBuf, message: String },
    /// A symbol the runtime expected is not in a loaded library.
    #[error("{} has no symbol `{name}`", path.display())]
    MissingSymbol { path: PathBuf, name: String },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl RuntimeError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        RuntimeError::Io { path: path.into(), source }
    }
}

pub type Result<T, E = RuntimeError> = std::result::Result<T, E>;
