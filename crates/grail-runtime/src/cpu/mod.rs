//! The CPU side of the runtime: the C toolchain and the executor.
//!
//! [`CpuProgram::compile`] emits a module's kernels as C, builds and loads them;
//! [`CpuProgram::run`] interprets the orchestration (`main`) in Rust and runs every kernel
//! phase across a pool of threads through the C ABI of `grail_cpu.h` (`ffi` mirrors it).
//!
//! - `toolchain.rs`: `$CC` detection, building and loading shared libraries;
//! - `executor.rs`: [`CpuProgram`], invocations, retries, worklists, reductions, statistics;
//! - `crate::host`: the interpreter of `main`, the host memory, values and arithmetic, shared
//!   with the GPU executor (the CPU executor is a `host::interp::Machine`);
//! - `pool.rs`: the run's worker threads, dynamic chunking, persistent parallel regions;
//! - `fault.rs`: the message and exit status when generated code faults.

pub(crate) mod executor;
mod fault;
pub(crate) mod ffi;
pub(crate) mod pool;
pub mod toolchain;

pub use crate::host::{Table, Value};
pub use executor::{CpuProgram, KernelStats, RunOptions, RunOutput, RunStats};
pub use fault::FAULT_EXIT_CODE;
pub use toolchain::{CCompiler, NativeLibrary};
