//! Loading and running compiled grail programs.
//!
//! Built so far: the CPU backend ([`cpu`]): the toolchain, which turns generated C into a loaded
//! shared library through the system C compiler, with an on-disk cache keyed by content
//! ([`cache`]), and the executor ([`cpu::CpuProgram`]), which interprets orchestration in Rust and
//! splits every kernel phase dynamically across threads. Still to come: the CUDA executor (NVRTC
//! and the driver through `cudarc`), host/device coherence, and the multi-device runtime. See
//! `docs/architecture.md`.

pub mod cache;
pub mod cpu;
mod error;
#[cfg(feature = "gpu")]
pub mod gpu;
mod host;
pub mod limits;
pub mod multi;
mod running;

pub use cache::ModuleCache;
pub use error::{GpuError, Result, RuntimeError};
pub use host::{Table, read_collection, read_property_values};
pub use running::running_kernel;
