//! The CPU side of the runtime.

pub mod toolchain;

pub use toolchain::{CCompiler, NativeLibrary};
