//! The CUDA target. So far: its device runtime header, [`CUDA_HEADER`] (`grail_cuda.h`), the
//! counterpart of [`crate::c::CPU_HEADER`] with the same helper names, which generated CUDA code
//! includes by pasting it at the top. The emitter joins with the GPU backend.
//!
//! The header's `grail_ctx` has a `#[repr(C)]` mirror in `grail-runtime` (`gpu/ffi.rs`), and the
//! header compiles with NVRTC alone (it includes no C library headers).

/// The device runtime header: fixed-width types, `grail_ctx`, worklists with overflow detection,
/// atomics that report a change, locks, single, union-find.
pub const CUDA_HEADER: &str = include_str!("grail_cuda.h");

/// The CUDA emitter (being built; until then every module is refused).
pub fn emit_cuda(_module: &grail_ir::Module) -> Result<String, crate::CodegenError> {
    Err(crate::CodegenError::Unsupported("the CUDA target".into()))
}
