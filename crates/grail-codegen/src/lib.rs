//! Code generation from grail's IR.
//!
//! One C-family printer (the internal `printer` module) walks the IR for every target:
//! expressions, statements, locks, adjacency loops, constants, types and collection layouts print
//! the same everywhere, and a target (its `Target` trait) says only what differs: the prelude
//! (runtime header and typed helpers), function qualifiers, struct literals, the phase wrapper
//! (size function, item loop, per-thread state, the reduction's epilogue), pushes and retries,
//! the adjacency loops' schedule, and collections' host entry points.
//!
//! - [`c`]: C11 for the CPU backend ([`emit_c`]); a phase is a size function and a chunk
//!   function over `begin..end` with per-thread buffers.
//! - [`cuda`]: CUDA C++ for NVRTC and the GPU backend ([`emit_cuda`]); a phase is a size kernel,
//!   a grid-stride `_run` device function and the kernel that calls it, with device worklists
//!   and warp-level reductions.
//!
//! Emitters take a module that [`grail_ir::validate`] accepts and must produce code that
//! compiles: a construct a target cannot express yet is a [`CodegenError::Unsupported`] error,
//! never invalid code.

pub mod c;
pub mod cuda;
mod printer;

/// The robust geometric predicates (`orient2d`, `incircle`), in C that both targets compile with
/// their own `GRAIL_GEOM` qualifier.
pub(crate) const GEOMETRY: &str = include_str!("geometry.h");

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
