//! Loading and running compiled programs: the CPU executor (a shared library built with the system
//! C compiler), the CUDA executor (NVRTC and the driver through `cudarc`), coherence of host and
//! device copies, and later the multi-device runtime.
//!
//! Not built yet: this crate holds its place in the workspace. See `docs/architecture.md`.
