//! Errors of the runtime: each says what failed and what the user can do about it.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// No usable C compiler: the CPU backend cannot build anything.
    #[error(
        "no C compiler found: `{program}` {problem}. grail's CPU backend builds the code it generates with the \
         system C compiler: install gcc or clang (for example `apt-get install gcc`), or set CC to a compiler's path"
    )]
    NoCompiler { program: String, problem: String },
    /// The C compiler rejected generated code: a bug in grail's code generator (or a flag the
    /// user added, which `blame` then names), reported in full.
    #[error("the C compiler `{program}` failed on generated code ({status}); {blame}:\n{log}")]
    CompileFailed { program: String, status: String, blame: String, log: String },
    /// A built library could not be loaded.
    #[error("cannot load {}: {message}", path.display())]
    Load { path: PathBuf, message: String },
    /// The module cache folder can be written by other users: a library loaded from it could run
    /// their code.
    #[error(
        "the module cache {} {why}: grail loads compiled code from it, so another user could make grail run theirs; \
         make it private (chmod 700 {}) or set GRAIL_CACHE_DIR to a private folder",
        dir.display(),
        dir.display()
    )]
    UnsafeCache { dir: PathBuf, why: String },
    /// A symbol the runtime expected is not in a loaded library.
    #[error(
        "cannot use {} as the folder of compiled modules ($GRAIL_CACHE_DIR, default ~/.cache/grail): {cause}",
        dir.display()
    )]
    CacheDir { dir: PathBuf, cause: std::io::Error },

    #[error("{} has no symbol `{name}`", path.display())]
    MissingSymbol { path: PathBuf, name: String },
    /// The code generator cannot turn the program into C.
    #[error(transparent)]
    Codegen(#[from] grail_codegen::CodegenError),
    /// A construct the CPU executor does not run yet.
    #[error("not supported by grail's executors yet: {0}")]
    Unsupported(String),
    /// A parameter without a default was not given.
    #[error("the program needs a value for parameter `{name}`, which has no default")]
    MissingParam { name: String },
    /// A parameter's value is unusable.
    #[error("parameter `{name}`: {message}")]
    BadParam { name: String, message: String },
    /// The caller passed the wrong number of parameter slots.
    #[error("the program has {expected} parameters, but {given} values were passed")]
    ParamCount { expected: usize, given: usize },
    /// Memory for something the run needs could not be had.
    #[error("the run took longer than its time limit of {limit:?} and was stopped before {at}")]
    TimedOut { limit: std::time::Duration, at: String },

    /// The input does not suit the program (integer weights asked of a graph with real ones).
    #[error("{0}")]
    Input(String),

    #[error("out of memory: {what}")]
    OutOfMemory { what: String },
    /// The program did something it must not (indexed past the graph, ...).
    #[error("the program failed: {message}")]
    Program { message: String },
    /// Host code faulted as a kernel would: an integer division or remainder by zero, or of the
    /// type's minimum by -1. Kept apart from [`RuntimeError::Program`] so that callers can treat
    /// it as a kernel's fault (the command line's exit status 70).
    #[error("the program failed: {message}")]
    HostFault { message: String },
    /// Writing the program's `print` output failed.
    #[error("cannot write the program's output: {0}")]
    Output(std::io::Error),
    /// The GPU layer failed: no NVRTC, no driver, no such device, code that did not compile...
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// The message includes the system's, so the error has no `source` (which would print it
    /// twice in a chain of causes).
    #[error("{}: {cause}", path.display())]
    Io { path: PathBuf, cause: std::io::Error },
}

impl RuntimeError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        RuntimeError::Io { path: path.into(), cause: grail_graph::error::unwrap_io_error(source) }
    }
}

pub type Result<T, E = RuntimeError> = std::result::Result<T, E>;

impl RuntimeError {
    pub(crate) fn program(message: impl Into<String>) -> Self {
        RuntimeError::Program { message: message.into() }
    }
}

/// Errors of the GPU layer (`gpu` module): finding NVRTC and the driver, compiling, devices,
/// modules. Each message says what failed and what to do; none needs CUDA to be built.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// No NVRTC library anywhere grail looked: `searched` lists the places, in order.
    #[error(
        "cannot find the NVRTC library ({names}), which grail needs to compile CUDA code. Install it with \
         `python3 -m pip install nvidia-cuda-nvrtc` (CUDA 13; `nvidia-cuda-nvrtc-cu12` for CUDA 12) or install the \
         CUDA toolkit, or set GRAIL_NVRTC_LIB to the library file or the folder that holds it. Searched:{}",
        bullet_list(searched)
    )]
    NvrtcNotFound { names: String, searched: Vec<String> },
    /// `GRAIL_NVRTC_LIB` names something that is not a loadable NVRTC library.
    #[error(
        "GRAIL_NVRTC_LIB={} cannot be used: {message}. Set it to the NVRTC library (libnvrtc.so.13 or \
         libnvrtc.so.12) or the folder that holds it, or unset it to let grail search",
        path.display()
    )]
    NvrtcLoad { path: PathBuf, message: String },
    /// An NVRTC library was loaded, but the CUDA bindings cannot use it.
    #[error("the NVRTC library {} cannot be used: {message}", path.display())]
    NvrtcUnusable { path: PathBuf, message: String },
    /// A string that is not a GPU architecture.
    #[error("`{given}` is not a GPU architecture: expected sm_XY or compute_XY, for example sm_90")]
    BadArch { given: String },
    /// This NVRTC does not know the architecture.
    #[error("NVRTC {version} cannot compile for {arch} (it knows {supported}); {advice}")]
    ArchUnsupported { arch: String, version: String, supported: String, advice: String },
    /// NVRTC rejected the code. `report` is NVRTC's log followed by the generated source lines it
    /// points at.
    #[error("NVRTC could not compile `{name}` for {arch}; this is a bug in grail's CUDA code generator:\n{report}")]
    CompileFailed { name: String, arch: String, log: String, report: String },
    /// Any other NVRTC failure.
    #[error("NVRTC failed in {call}: {message}")]
    Nvrtc { call: &'static str, message: String },
    /// The CUDA driver library is missing.
    #[error(
        "no NVIDIA driver: {message}. Running on a GPU needs the NVIDIA driver (libcuda.so.1) from NVIDIA or \
         the distribution's packages; compiling CUDA code with NVRTC alone does not"
    )]
    NoDriver { message: String },
    /// The driver is there, but it sees no GPU.
    #[error("the NVIDIA driver sees no CUDA GPU{hint}")]
    NoDevice { hint: String },
    /// A device number past the last device.
    #[error("device {requested} requested, {found} found (devices are numbered from 0)")]
    BadDevice { requested: usize, found: usize },
    /// A driver call failed.
    #[error("the CUDA driver failed in {call}: {code} ({description}){hint}")]
    Driver { call: String, code: String, description: String, hint: String },
    /// A compiled module cannot run on the device it was loaded on.
    #[error("cannot load `{name}` ({arch}) on {device}: {message}")]
    ModuleLoad { name: String, arch: String, device: String, message: String },
    /// A kernel the runtime expected is not in a loaded module.
    #[error("the GPU module `{module}` has no kernel `{kernel}`")]
    MissingKernel { module: String, kernel: String },
    /// The probe's test kernel computed something wrong: the device, driver or grail_cuda.h is broken.
    /// A kernel faulted on the device (the context is lost with it).
    #[error("kernel `{kernel}` stopped on {device}: {message}")]
    KernelFault { kernel: String, device: String, message: String },
    #[error("the GPU self-test failed on {device}: {message}")]
    SelfTest { device: String, message: String },
    /// The compiled-module cache is not safe to load code from (see `RuntimeError::UnsafeCache`).
    #[error("{0}")]
    UnsafeCache(String),
    /// Reading or writing the compiled-module cache failed.
    #[error("GPU module cache {}: {cause}", path.display())]
    Cache { path: PathBuf, cause: std::io::Error },
}

fn bullet_list(items: &[String]) -> String {
    items.iter().map(|item| format!("\n  - {item}")).collect()
}
