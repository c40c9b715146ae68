//! Devices: counting and choosing GPUs, what they are, loading compiled modules onto them.

use std::fmt;
use std::sync::Arc;

use cudarc::driver::result::DriverError;
use cudarc::driver::sys::{CUdevice_attribute, cudaError_enum};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule};
use cudarc::nvrtc::Ptx;

use crate::cache::ModuleCache;
use crate::error::GpuError;

use super::library;
use super::nvrtc::{self, Arch, CompileOptions, CompiledModule, ImageKind};

/// What a device is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    /// Its number, as `--device` takes it.
    pub ordinal: usize,
    pub name: String,
    /// (major, minor), e.g. (9, 0).
    pub compute_capability: (u32, u32),
    /// The architecture to compile for: `sm_<major><minor>`.
    pub arch: Arch,
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// Bytes of device memory, and how many were free when the device was opened.
    pub total_memory: u64,
    pub free_memory: u64,
    pub max_threads_per_block: u32,
    pub warp_size: u32,
    /// Bytes of shared memory a block can have (without opting in to more).
    pub shared_memory_per_block: u32,
    pub l2_cache_bytes: u32,
    /// Whether kernels can be launched cooperatively (grid-wide barriers, for outlined loops).
    pub cooperative_launch: bool,
    /// The CUDA version the driver supports, e.g. (13, 0).
    pub driver_version: (u32, u32),
}

impl fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "device {}: {} ({}, {} SMs, {:.1} GiB, driver for CUDA {}.{})",
            self.ordinal,
            self.name,
            self.arch,
            self.sm_count,
            self.total_memory as f64 / (1u64 << 30) as f64,
            self.driver_version.0,
            self.driver_version.1
        )
    }
}

/// A driver error as grail reports it: the call, the CUDA error's name and description, and a
/// hint for the errors users can do something about.
pub(crate) fn driver_error(call: &str, e: DriverError) -> GpuError {
    use cudaError_enum::*;
    let code = e.error_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|_| format!("{:?}", e.0));
    let description =
        e.error_string().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|_| "no description".into());
    let hint = match e.0 {
        CUDA_ERROR_NO_DEVICE => return GpuError::NoDevice { hint: visible_devices_hint() },
        CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER => "; the NVIDIA driver is too old for this call: update the driver",
        CUDA_ERROR_SYSTEM_DRIVER_MISMATCH | CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE => {
            "; the CUDA driver library does not match the kernel module: reboot or reinstall the NVIDIA driver"
        }
        CUDA_ERROR_OUT_OF_MEMORY => "; the GPU is out of memory",
        CUDA_ERROR_DEVICE_UNAVAILABLE => "; the GPUs are busy or in exclusive mode (nvidia-smi shows who uses them)",
        _ => "",
    };
    GpuError::Driver { call: call.to_string(), code, description, hint: hint.to_string() }
}

fn visible_devices_hint() -> String {
    match std::env::var("CUDA_VISIBLE_DEVICES") {
        Ok(value) => format!(" (CUDA_VISIBLE_DEVICES={value:?} may hide the GPUs)"),
        Err(_) => " (is this machine's GPU visible here? `nvidia-smi` lists what the driver sees)".to_string(),
    }
}

/// The number of CUDA devices. Loads and initialises the driver first.
pub fn device_count() -> Result<usize, GpuError> {
    library::driver()?;
    let count = cudarc::driver::result::device::get_count().map_err(|e| driver_error("cuDeviceGetCount", e))?;
    Ok(count.max(0) as usize)
}

/// Whether the driver has a GPU `ordinal`: an error that says what it found otherwise.
fn check_ordinal(ordinal: usize) -> Result<(), GpuError> {
    let found = device_count()?;
    if found == 0 {
        return Err(GpuError::NoDevice { hint: visible_devices_hint() });
    }
    if ordinal >= found {
        return Err(GpuError::BadDevice { requested: ordinal, found });
    }
    Ok(())
}

/// The model name of GPU `ordinal` (what [`DeviceInfo::name`] says once it is open), read
/// without creating its context: the tuning database keys a GPU's configurations by it, and a
/// partitioned run chooses its configuration before its parts open their devices.
pub fn device_name(ordinal: usize) -> Result<String, GpuError> {
    check_ordinal(ordinal)?;
    // Below the driver's count, which it gave as a c_int.
    let device =
        cudarc::driver::result::device::get(ordinal as std::ffi::c_int).map_err(|e| driver_error("cuDeviceGet", e))?;
    cudarc::driver::result::device::get_name(device).map_err(|e| driver_error("cuDeviceGetName", e))
}

/// The CUDA version the driver supports.
fn driver_version() -> Result<(u32, u32), GpuError> {
    let mut version = 0;
    // SAFETY: a valid out-pointer; the driver is loaded.
    unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut version) }
        .result()
        .map_err(|e| driver_error("cuDriverGetVersion", e))?;
    let version = version.max(0) as u32;
    Ok((version / 1000, version % 1000 / 10))
}

/// One GPU, with its primary context. Clones share the context.
#[derive(Debug, Clone)]
pub struct Device {
    context: Arc<CudaContext>,
    info: DeviceInfo,
    checks: bool,
}

impl Device {
    /// Opens device `ordinal` (0 is the first): "device 3 requested, 1 found" when there is no
    /// such device.
    pub fn open(ordinal: usize) -> Result<Device, GpuError> {
        check_ordinal(ordinal)?;
        let context = CudaContext::new(ordinal).map_err(|e| driver_error("cuDevicePrimaryCtxRetain", e))?;
        let info = query(&context, ordinal)?;
        Ok(Device { context, info, checks: false })
    }

    /// This device in checked mode (`grail run --checks`) or not: programs compiled for it check
    /// integer divisions and pushed items on the device, as the CPU target does (see
    /// `grail_cuda.h`), and a failed check stops the run with an error.
    pub fn with_checks(mut self, checks: bool) -> Device {
        self.checks = checks;
        self
    }

    /// Whether programs compiled for this device check divisions and pushes.
    pub fn checks(&self) -> bool {
        self.checks
    }

    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The architecture to compile for.
    pub fn arch(&self) -> Arch {
        self.info.arch
    }

    /// The cudarc context, for memory and launches.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.context
    }

    /// Compiles `source` for this device (a cubin for its architecture) through the cache, with
    /// the NVRTC options in `$GRAIL_NVRTC_FLAGS` (split at white space) added, as `$GRAIL_CFLAGS`
    /// is to the C compiler's (for instance `-maxrregcount=64`).
    pub fn compile(&self, cache: &ModuleCache, source: &str, name: &str) -> Result<CompiledModule, GpuError> {
        let mut options = CompileOptions::new(self.arch());
        let flags = std::env::var("GRAIL_NVRTC_FLAGS").unwrap_or_default();
        options.extra = flags.split_whitespace().map(str::to_string).collect();
        nvrtc::compile_cached(cache, source, name, &options)
    }

    /// Loads a compiled module. A module for another architecture is refused with a message that
    /// names both, before the driver gets to say only "no binary for GPU".
    pub fn load(&self, module: &CompiledModule) -> Result<GpuModule, GpuError> {
        let fail = |message: String| GpuError::ModuleLoad {
            name: module.name.clone(),
            arch: module.arch.to_string(),
            device: format!("device {} ({}, {})", self.info.ordinal, self.info.name, self.info.arch),
            message,
        };
        if !module.arch.runs_on(self.info.arch) {
            return Err(fail(format!(
                "code for {} does not run on {}; compile for the device's architecture",
                module.arch, self.info.arch
            )));
        }
        let image = match module.kind {
            ImageKind::Cubin => Ptx::from_binary(module.image.clone()),
            ImageKind::Ptx => match module.ptx() {
                Some(ptx) if !ptx.contains('\0') => Ptx::from_src(ptx),
                _ => return Err(fail("the PTX is not text".into())),
            },
        };
        let loaded = self.context.load_module(image).map_err(|e| {
            use cudaError_enum::*;
            let hint = match e.0 {
                CUDA_ERROR_UNSUPPORTED_PTX_VERSION => {
                    "; the driver is older than the NVRTC that made this PTX: compile a cubin (sm_XY) or update the driver"
                }
                CUDA_ERROR_NO_BINARY_FOR_GPU | CUDA_ERROR_INVALID_IMAGE => {
                    "; the image is not for this GPU: compile for the device's architecture"
                }
                CUDA_ERROR_JIT_COMPILER_NOT_FOUND => "; the driver cannot compile PTX here: compile a cubin (sm_XY)",
                _ => "",
            };
            match driver_error("cuModuleLoadData", e) {
                GpuError::Driver { code, description, .. } => fail(format!("{code} ({description}){hint}")),
                other => other,
            }
        })?;
        Ok(GpuModule { module: loaded, name: module.name.clone() })
    }
}

/// A module loaded on a device.
#[derive(Debug, Clone)]
pub struct GpuModule {
    module: Arc<CudaModule>,
    name: String,
}

impl GpuModule {
    /// The kernel called `kernel` (an `extern "C" __global__` function).
    pub fn function(&self, kernel: &str) -> Result<CudaFunction, GpuError> {
        self.module.load_function(kernel).map_err(|e| match e.0 {
            cudaError_enum::CUDA_ERROR_NOT_FOUND => {
                GpuError::MissingKernel { module: self.name.clone(), kernel: kernel.to_string() }
            }
            _ => driver_error("cuModuleGetFunction", e),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The cudarc module.
    pub fn module(&self) -> &Arc<CudaModule> {
        &self.module
    }
}

fn query(context: &Arc<CudaContext>, ordinal: usize) -> Result<DeviceInfo, GpuError> {
    let attribute = |attribute: CUdevice_attribute, what: &str| -> Result<u32, GpuError> {
        context
            .attribute(attribute)
            .map(|v| v.max(0) as u32)
            .map_err(|e| driver_error(&format!("cuDeviceGetAttribute({what})"), e))
    };
    use CUdevice_attribute::*;
    let name = context.name().map_err(|e| driver_error("cuDeviceGetName", e))?;
    let major = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "compute capability")?;
    let minor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "compute capability")?;
    let (free, total) = context.mem_get_info().map_err(|e| driver_error("cuMemGetInfo", e))?;
    Ok(DeviceInfo {
        ordinal,
        name,
        compute_capability: (major, minor),
        arch: Arch::sm(major, minor),
        sm_count: attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "SM count")?,
        total_memory: total as u64,
        free_memory: free as u64,
        max_threads_per_block: attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "threads per block")?,
        warp_size: attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE, "warp size")?,
        shared_memory_per_block: attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, "shared memory")?,
        l2_cache_bytes: attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2 cache size")?,
        cooperative_launch: attribute(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, "cooperative launch")? != 0,
        driver_version: driver_version()?,
    })
}
