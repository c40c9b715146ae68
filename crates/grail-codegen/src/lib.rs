//! Code generation from grail's IR.
//!
//! One C-family printer ([`printer`], internal) walks the IR for every target; a target says
//! only what differs (its prelude, qualifiers, phase wrappers, pushes, reductions' epilogues,
//! collections' host entry points). [`c`] emits C11 for the CPU backend, [`cuda`] CUDA C++ for
//! the GPU backend. Emitters take a module that [`grail_ir::validate`] accepts and must produce
//! code that compiles: a construct a target cannot express yet is a
//! [`CodegenError::Unsupported`] error, never invalid code.

pub mod c;
pub mod cuda;
mod printer;

pub use c::emit_c;
pub use cuda::emit_cuda;

#[derive(Debug, thiserror::Error)]
pub enum CodegenError {
    /// The module breaks an IR invariant.
    #[error(transparent)]
    Invalid(#[from] grail_ir::ValidationError),
    /// A construct this target cannot generate yet.
    #[error("not supported by this code generator yet: {0}")]
    Unsupported(String),
    /// A broken assumption inside grail.
    #[error("internal code generator error: {0}")]
    Internal(String),
}
