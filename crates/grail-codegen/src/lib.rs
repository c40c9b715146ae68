//! Code generation: one C-family printer with two targets behind a trait (host C11 with atomics
//! for the CPU, CUDA C++ for the GPU), plus the runtime headers generated code includes.
//!
//! Not built yet: this crate holds its place in the workspace. See `docs/architecture.md`.
