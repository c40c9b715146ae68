//! Loading and running compiled grail programs.
//!
//! Built so far: the CPU toolchain ([`cpu::toolchain`]), which turns generated C into a loaded
//! shared library through the system C compiler, with an on-disk cache keyed by content. Still to
//! come, as the IR and code generators land: the CPU executor (orchestration in Rust, kernels
//! split dynamically across threads), the CUDA executor (NVRTC and the driver through `cudarc`),
//! host/device coherence, and the multi-device runtime. See `docs/architecture.md`.

pub mod cache;
pub mod cpu;
mod error;

pub use cache::ModuleCache;
pub use error::{Result, RuntimeError};
