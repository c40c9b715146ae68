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
    /// The code generator cannot turn the program into C.
    #[error(transparent)]
    Codegen(#[from] grail_codegen::CodegenError),
    /// A construct the CPU executor does not run yet.
    #[error("not supported by the CPU executor yet: {0}")]
    Unsupported(String),
    /// A parameter without a default was not given.
    #[error("the program needs a value for parameter `{name}`, which has no default")]
    MissingParam { name: String },
    /// A parameter's value is unusable.
    #[error("parameter `{name}`: {message}")]
    BadParam { name: String, message: String },
    /// The caller passed the wrong number of parameter slots.
    #[error("the program has {expected} parameters, but {given} values were passed")]
    ParamCount { expected: usize, given: usize },
    /// Memory for something the run needs could not be had.
    #[error("out of memory: {what}")]
    OutOfMemory { what: String },
    /// The program did something it must not (divided by zero, indexed past the graph, ...).
    #[error("the program failed: {message}")]
    Program { message: String },
    /// Writing the program's `print` output failed.
    #[error("cannot write the program's output: {0}")]
    Output(#[source] std::io::Error),
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

impl RuntimeError {
    pub(crate) fn program(message: impl Into<String>) -> Self {
        RuntimeError::Program { message: message.into() }
    }
}
