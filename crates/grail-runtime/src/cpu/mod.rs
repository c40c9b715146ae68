//! The CPU side of the runtime: the C toolchain and the executor.
//!
//! [`CpuProgram::compile`] emits a module's kernels as C, builds and loads them;
//! [`CpuProgram::run`] interprets the orchestration (`main`) in Rust and runs every kernel
//! phase across a pool of threads through the C ABI of `grail_cpu.h` ([`ffi`] mirrors it).
//!
//! - `toolchain.rs`: `$CC` detection, building and loading shared libraries;
//! - `executor.rs`: [`CpuProgram`], invocations, retries, worklists, reductions, statistics;
//! - `interp.rs`: the host interpreter (statements, expressions, regions, host graph access);
//! - `ops.rs`: arithmetic with the generated C's semantics; `value.rs`: [`Value`];
//! - `memory.rs`: property columns, sets, locks, claims and the extra graph arrays;
//! - `pool.rs`: the run's worker threads and dynamic chunking;
//! - `fault.rs`: the message and exit status when generated code faults.

mod executor;
mod fault;
mod ffi;
mod interp;
mod memory;
mod ops;
mod pool;
pub mod toolchain;
mod value;

pub use executor::{CpuProgram, KernelStats, RunOptions, RunOutput, RunStats};
pub use fault::FAULT_EXIT_CODE;
pub use toolchain::{CCompiler, NativeLibrary};
pub use value::Value;
