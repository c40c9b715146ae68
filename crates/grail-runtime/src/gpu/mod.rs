//! The GPU layer: NVRTC, the CUDA driver, devices and compiled modules, through `cudarc` with
//! both libraries loaded at run time (nothing CUDA is needed to build grail).
//!
//! - [`library`]: finding NVRTC (`GRAIL_NVRTC_LIB`, the system's loader, CUDA toolkits, NVIDIA's
//!   pip wheels) and the driver, with errors that say what to install.
//! - [`nvrtc`]: [`Arch`], [`compile`] / [`compile_with`] ([`CompileOptions`]) to a
//!   [`CompiledModule`] (a cubin for `sm_XY`, PTX for `compute_XY`), [`compile_cached`] through
//!   the [`crate::ModuleCache`], and compile errors that quote the generated source
//!   ([`nvrtc::compile_report`]).
//! - [`device`]: [`device_count`], [`Device::open`] (`--device N`), [`DeviceInfo`],
//!   [`Device::load`] to a [`GpuModule`].
//! - [`DeviceGraph`]: a graph resident on a device, for runs of many programs on it (and grown
//!   there by batches of edges); [`ResidentColumn`]: a property a run left on the device for the
//!   next.
//! - [`ffi`]: the `#[repr(C)]` mirrors of `grail_cuda.h`'s `grail_ctx`, `grail_wl` and `grail_coll`.
//! - [`probe`]: opens a device and runs a self-test kernel over every helper of `grail_cuda.h`.
//!
//! Only compiling is tested without a GPU; everything after `cuInit` needs one.

mod buffer;
pub(crate) use buffer::{connect_peers, upload_to};
pub mod device;
mod executor;
pub mod ffi;
mod graph;
pub mod library;
pub mod nvrtc;
pub mod selftest;

pub use buffer::set_memory_limit;
pub use device::{Device, DeviceInfo, GpuModule, device_count, device_name};
pub use executor::{GpuProgram, GpuTimes, ResidentColumn, ResidentInputs, ResidentTable, trace_run};
pub use ffi::{GpuColl, GpuCtx, GpuWorklist};
pub use graph::DeviceGraph;
pub use nvrtc::{
    Arch, CompileOptions, CompiledModule, ImageKind, NvrtcInfo, compile, compile_cached, compile_with, nvrtc_info,
    nvrtc_or_skip,
};

use crate::error::GpuError;

/// Checks the whole GPU path on device 0: loads the driver and NVRTC, opens the device, compiles
/// the self-test kernel (`grail_cuda.h` and every helper in it) for the device's architecture,
/// runs it, and checks its results. Returns what the device is.
pub fn probe() -> Result<DeviceInfo, GpuError> {
    probe_device(0)
}

/// [`probe`] on device `ordinal`.
pub fn probe_device(ordinal: usize) -> Result<DeviceInfo, GpuError> {
    let device = Device::open(ordinal)?;
    selftest::run(&device)?;
    Ok(device.info().clone())
}
