//! Compiling CUDA C++ with NVRTC: architectures, options, compiled images, the on-disk cache,
//! and compile errors that quote the generated source.

use std::ffi::{CString, c_char};
use std::fmt;
use std::io::Write;
use std::path::PathBuf;
use std::str::FromStr;

use cudarc::nvrtc::result::{self as nvrtc_result, NvrtcError};
use cudarc::nvrtc::sys::{self as nvrtc_sys, nvrtcResult};

use crate::cache::{CacheKey, ModuleCache};
use crate::error::GpuError;

use super::library;

/// A GPU architecture to compile for: a real one (`sm_90`: NVRTC makes a cubin, machine code
/// for that GPU) or a virtual one (`compute_90`: NVRTC makes PTX, which the driver compiles for
/// the GPU it finds). `sm_90a` and `sm_100f` are the architecture-specific and family variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Arch {
    major: u32,
    minor: u32,
    /// `a` (this GPU only) or `f` (the family).
    suffix: Option<char>,
    is_virtual: bool,
}

impl Arch {
    /// The real architecture `sm_<major><minor>`.
    pub fn sm(major: u32, minor: u32) -> Arch {
        Arch { major, minor, suffix: None, is_virtual: false }
    }

    /// The virtual architecture `compute_<major><minor>`.
    pub fn compute(major: u32, minor: u32) -> Arch {
        Arch { major, minor, suffix: None, is_virtual: true }
    }

    /// The compute capability (major, minor).
    pub fn compute_capability(&self) -> (u32, u32) {
        (self.major, self.minor)
    }

    /// Whether NVRTC makes PTX (virtual) rather than a cubin (real) for it.
    pub fn is_virtual(&self) -> bool {
        self.is_virtual
    }

    /// NVRTC's number for the architecture (`90` for sm_90), as `nvrtcGetSupportedArchs` lists them.
    pub fn number(&self) -> u32 {
        self.major * 10 + self.minor
    }

    /// Whether code compiled for `self` runs on a device of architecture `device`. A cubin runs
    /// on its own major version from its minor version up (`sm_80` runs on sm_86, not on sm_90);
    /// PTX runs on anything at least as new; an `a` architecture runs only on itself.
    pub fn runs_on(&self, device: Arch) -> bool {
        let (mine, theirs) = ((self.major, self.minor), (device.major, device.minor));
        match self.suffix {
            Some('a') => mine == theirs,
            Some(_) => self.major == device.major && self.minor <= device.minor,
            None if self.is_virtual => mine <= theirs,
            None => self.major == device.major && self.minor <= device.minor,
        }
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let prefix = if self.is_virtual { "compute" } else { "sm" };
        write!(f, "{prefix}_{}{}", self.major, self.minor)?;
        if let Some(suffix) = self.suffix {
            write!(f, "{suffix}")?;
        }
        Ok(())
    }
}

impl FromStr for Arch {
    type Err = GpuError;

    /// `sm_90`, `sm_90a`, `sm_100f`, `compute_90`, ...: the last digit is the minor version.
    fn from_str(s: &str) -> Result<Arch, GpuError> {
        let bad = || GpuError::BadArch { given: s.to_string() };
        let (is_virtual, rest) = match (s.strip_prefix("sm_"), s.strip_prefix("compute_")) {
            (Some(rest), _) => (false, rest),
            (_, Some(rest)) => (true, rest),
            _ => return Err(bad()),
        };
        let (digits, suffix) = match rest.char_indices().last() {
            Some((i, c @ ('a' | 'f'))) => (&rest[..i], Some(c)),
            _ => (rest, None),
        };
        if digits.len() < 2 || digits.len() > 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let (major, minor) = digits.split_at(digits.len() - 1);
        let major: u32 = major.parse().map_err(|_| bad())?;
        let minor: u32 = minor.parse().map_err(|_| bad())?;
        if major < 2 {
            return Err(bad());
        }
        Ok(Arch { major, minor, suffix, is_virtual })
    }
}

/// What NVRTC made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageKind {
    /// Machine code for one architecture.
    Cubin,
    /// PTX text, compiled by the driver when loaded.
    Ptx,
}

impl ImageKind {
    /// The file extension of a cached image.
    pub fn extension(self) -> &'static str {
        match self {
            ImageKind::Cubin => "cubin",
            ImageKind::Ptx => "ptx",
        }
    }
}

/// A compiled module, ready for [`super::Device::load`].
#[derive(Debug, Clone)]
pub struct CompiledModule {
    /// The program's name (what NVRTC's messages call the source).
    pub name: String,
    pub arch: Arch,
    pub kind: ImageKind,
    /// The cubin, or the PTX text (without a terminating NUL).
    pub image: Vec<u8>,
    /// NVRTC's warnings (empty when there were none, and for a module from the cache).
    pub log: String,
    /// Whether the image came from the on-disk cache.
    pub from_cache: bool,
}

impl CompiledModule {
    /// The PTX text, for a PTX image.
    pub fn ptx(&self) -> Option<&str> {
        match self.kind {
            ImageKind::Ptx => std::str::from_utf8(&self.image).ok(),
            ImageKind::Cubin => None,
        }
    }
}

/// NVRTC's options for one compilation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileOptions {
    pub arch: Arch,
    /// `-lineinfo`: source line numbers in the image, for profilers and compute-sanitizer.
    pub line_info: bool,
    /// `-default-device`: functions without `__host__`/`__device__` are device functions (the
    /// generated code's helpers are plain C functions). On by default.
    pub default_device: bool,
    /// More options, passed as they are.
    pub extra: Vec<String>,
}

impl CompileOptions {
    pub fn new(arch: Arch) -> CompileOptions {
        CompileOptions { arch, line_info: false, default_device: true, extra: Vec::new() }
    }

    /// The arguments given to `nvrtcCompileProgram`.
    pub fn args(&self) -> Vec<String> {
        let mut args = vec!["-std=c++17".to_string(), format!("--gpu-architecture={}", self.arch)];
        if self.default_device {
            args.push("-default-device".into());
        }
        if self.line_info {
            args.push("-lineinfo".into());
        }
        args.extend(self.extra.iter().cloned());
        args
    }
}

/// What grail knows about the NVRTC it uses.
#[derive(Debug, Clone)]
pub struct NvrtcInfo {
    /// The library file, when grail loaded it by path (`None`: found by the system's loader).
    pub path: Option<PathBuf>,
    /// The file name it was loaded as.
    pub name: String,
    /// NVRTC's CUDA version, e.g. (13, 0).
    pub version: (u32, u32),
    /// The real architectures it compiles for, as numbers (`90` for sm_90).
    pub archs: Vec<u32>,
}

impl fmt::Display for NvrtcInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NVRTC {}.{} ", self.version.0, self.version.1)?;
        match &self.path {
            Some(path) => write!(f, "({})", path.display())?,
            None => write!(f, "({})", self.name)?,
        }
        if let (Some(first), Some(last)) = (self.archs.first(), self.archs.last()) {
            write!(f, ", sm_{first} to sm_{last}")?;
        }
        Ok(())
    }
}

/// Finds and loads NVRTC (see [`super::library`]) and says which it is.
pub fn nvrtc_info() -> Result<NvrtcInfo, GpuError> {
    let nvrtc = library::nvrtc()?;
    Ok(NvrtcInfo {
        path: nvrtc.path.clone(),
        name: nvrtc.name.clone(),
        version: nvrtc.version,
        archs: supported_archs()?,
    })
}

/// Whether NVRTC can be used, for test suites that need it: when it cannot, says on stderr that
/// `test` was skipped and why, unless `GRAIL_REQUIRE_NVRTC=1` (as CI sets), which makes a
/// missing NVRTC a panic instead of a skip.
pub fn nvrtc_or_skip(test: &str) -> bool {
    match nvrtc_info() {
        Ok(_) => true,
        Err(e) => {
            if std::env::var("GRAIL_REQUIRE_NVRTC").is_ok_and(|v| v == "1") {
                panic!("GRAIL_REQUIRE_NVRTC=1, but NVRTC cannot be used: {e}");
            }
            // Past the test harness's capture of stdout.
            let _ = writeln!(std::io::stderr(), "{test}: skipped, no NVRTC: {e}");
            false
        }
    }
}

/// The real architectures this NVRTC compiles for (`nvrtcGetSupportedArchs`).
fn supported_archs() -> Result<Vec<u32>, GpuError> {
    let mut count: i32 = 0;
    // SAFETY: a valid out-pointer; NVRTC is loaded (callers went through `library::nvrtc`).
    check("nvrtcGetNumSupportedArchs", unsafe { nvrtc_sys::nvrtcGetNumSupportedArchs(&mut count) })?;
    let mut archs = vec![0i32; count.max(0) as usize];
    // SAFETY: `archs` has room for `count` entries.
    check("nvrtcGetSupportedArchs", unsafe { nvrtc_sys::nvrtcGetSupportedArchs(archs.as_mut_ptr()) })?;
    let mut archs: Vec<u32> = archs.into_iter().filter(|&a| a > 0).map(|a| a as u32).collect();
    archs.sort_unstable();
    Ok(archs)
}

fn check(call: &'static str, status: nvrtcResult) -> Result<(), GpuError> {
    status.result().map_err(|e| nvrtc_error(call, e))
}

fn nvrtc_error(call: &'static str, e: NvrtcError) -> GpuError {
    GpuError::Nvrtc { call, message: format!("{:?}", e.0) }
}

/// Compiles CUDA C++ `source` for `arch` with grail's default options (see [`CompileOptions`]).
/// `name` is what NVRTC's messages call the source, e.g. `bfs.cu`.
pub fn compile(source: &str, name: &str, arch: Arch) -> Result<CompiledModule, GpuError> {
    compile_with(source, name, &CompileOptions::new(arch))
}

/// Destroys an NVRTC program when dropped.
struct Program(nvrtc_sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: the program was created by nvrtcCreateProgram and is destroyed once.
        let _ = unsafe { nvrtc_result::destroy_program(self.0) };
    }
}

/// Compiles with the given options: a cubin for a real architecture, PTX for a virtual one.
pub fn compile_with(source: &str, name: &str, options: &CompileOptions) -> Result<CompiledModule, GpuError> {
    let nvrtc = library::nvrtc()?;
    let nul = |what: &str| GpuError::Nvrtc {
        call: "nvrtcCreateProgram",
        message: format!("the {what} contains a NUL byte, which C++ source cannot"),
    };
    let c_source = CString::new(source).map_err(|_| nul("source"))?;
    let c_name = CString::new(name).map_err(|_| nul("name"))?;
    let program = Program(
        nvrtc_result::create_program(&c_source, Some(&c_name)).map_err(|e| nvrtc_error("nvrtcCreateProgram", e))?,
    );
    let args = options.args();
    // SAFETY: `program` is a live program; the options are plain strings.
    let status = unsafe { nvrtc_result::compile_program(program.0, &args) };
    let log = program_log(&program);
    let arch = options.arch;
    match status {
        Ok(()) => {}
        Err(NvrtcError(nvrtcResult::NVRTC_ERROR_COMPILATION)) => {
            let report = compile_report(&log, source, name);
            return Err(GpuError::CompileFailed { name: name.into(), arch: arch.to_string(), log, report });
        }
        Err(NvrtcError(nvrtcResult::NVRTC_ERROR_INVALID_OPTION)) => {
            let archs = supported_archs().unwrap_or_default();
            if !archs.is_empty() && !archs.contains(&arch.number()) {
                let supported = match (archs.first(), archs.last()) {
                    (Some(first), Some(last)) => format!("sm_{first} to sm_{last}"),
                    _ => "none".into(),
                };
                let version = format!("{}.{}", nvrtc.version.0, nvrtc.version.1);
                let newer = archs.last().is_some_and(|&last| arch.number() > last);
                let advice = if newer {
                    "install a newer NVRTC (`python3 -m pip install -U nvidia-cuda-nvrtc`) or compile for an older architecture"
                } else {
                    "this GPU generation is too old for it: use an older NVRTC (CUDA 12: `nvidia-cuda-nvrtc-cu12`) or a newer GPU"
                };
                return Err(GpuError::ArchUnsupported {
                    arch: arch.to_string(),
                    version,
                    supported,
                    advice: advice.into(),
                });
            }
            let message = format!("it rejected the options {}: {}", args.join(" "), log.trim());
            return Err(GpuError::Nvrtc { call: "nvrtcCompileProgram", message });
        }
        Err(e) => {
            let message =
                format!("{:?}{}", e.0, if log.trim().is_empty() { String::new() } else { format!(": {log}") });
            return Err(GpuError::Nvrtc { call: "nvrtcCompileProgram", message });
        }
    }
    let (kind, image) = if arch.is_virtual() {
        // SAFETY: the program compiled.
        let ptx = unsafe { nvrtc_result::get_ptx(program.0) }.map_err(|e| nvrtc_error("nvrtcGetPTX", e))?;
        (ImageKind::Ptx, c_chars_to_string(&ptx).into_bytes())
    } else {
        (ImageKind::Cubin, cubin(&program)?)
    };
    Ok(CompiledModule { name: name.into(), arch, kind, image, log: log.trim().to_string(), from_cache: false })
}

fn program_log(program: &Program) -> String {
    // SAFETY: `program` is live; a failure to get the log leaves it empty.
    unsafe { nvrtc_result::get_program_log(program.0) }.map(|log| c_chars_to_string(&log)).unwrap_or_default()
}

fn cubin(program: &Program) -> Result<Vec<u8>, GpuError> {
    let mut size = 0usize;
    // SAFETY: `program` compiled; `size` is a valid out-pointer.
    check("nvrtcGetCUBINSize", unsafe { nvrtc_sys::nvrtcGetCUBINSize(program.0, &mut size) })?;
    if size == 0 {
        return Err(GpuError::Nvrtc { call: "nvrtcGetCUBIN", message: "NVRTC made no cubin".into() });
    }
    let mut image = vec![0u8; size];
    // SAFETY: `image` has the `size` bytes NVRTC asked for.
    check("nvrtcGetCUBIN", unsafe { nvrtc_sys::nvrtcGetCUBIN(program.0, image.as_mut_ptr() as *mut c_char) })?;
    Ok(image)
}

/// A NUL-terminated buffer from NVRTC as text.
fn c_chars_to_string(chars: &[c_char]) -> String {
    let bytes: Vec<u8> = chars.iter().map(|&c| c as u8).take_while(|&b| b != 0).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// One `file(line): severity: message` line of NVRTC's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    pub file: String,
    /// 1-based.
    pub line: usize,
    /// `error`, `catastrophic error`, `warning #177-D`, `remark`, ...
    pub severity: String,
    pub message: String,
}

impl LogEntry {
    /// Whether this entry stopped the compilation.
    pub fn is_error(&self) -> bool {
        self.severity == "error" || self.severity == "catastrophic error" || self.severity.starts_with("error #")
    }
}

/// The `file(line): severity: message` lines of an NVRTC log, in order.
pub fn parse_log(log: &str) -> Vec<LogEntry> {
    log.lines().filter_map(parse_log_line).collect()
}

fn parse_log_line(line: &str) -> Option<LogEntry> {
    let close = line.find("): ")?;
    let open = line[..close].rfind('(')?;
    let number = &line[open + 1..close];
    if open == 0 || number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let rest = &line[close + 3..];
    let (severity, message) = rest.split_once(": ")?;
    let known = ["error", "catastrophic error", "warning", "remark", "note"];
    if !known.iter().any(|k| severity == *k || severity.starts_with(&format!("{k} #"))) {
        return None;
    }
    Some(LogEntry {
        file: line[..open].to_string(),
        line: number.parse().ok()?,
        severity: severity.to_string(),
        message: message.to_string(),
    })
}

/// The most errors [`compile_report`] quotes the source for.
const QUOTED_ERRORS: usize = 20;

/// NVRTC's log, followed by the lines of `source` (the program called `name`) that its errors
/// point at, each with the line before and after and its line number, so that a report shows the
/// generated code even when NVRTC's own excerpt is missing or cut.
pub fn compile_report(log: &str, source: &str, name: &str) -> String {
    let mut report = log.trim_end().to_string();
    if report.is_empty() {
        report.push_str("(NVRTC gave no log)");
    }
    let lines: Vec<&str> = source.lines().collect();
    let errors: Vec<LogEntry> = parse_log(log).into_iter().filter(|e| e.is_error() && e.file == name).collect();
    let mut quoted = Vec::new();
    let mut shown = String::new();
    for error in &errors {
        if quoted.contains(&error.line) {
            continue;
        }
        if quoted.len() == QUOTED_ERRORS {
            let left = errors.iter().filter(|e| !quoted.contains(&e.line)).count();
            shown.push_str(&format!("\n... and {left} more\n"));
            break;
        }
        quoted.push(error.line);
        shown.push_str(&format!("\n{name}:{}: {}: {}\n", error.line, error.severity, error.message));
        if error.line == 0 || error.line > lines.len() {
            shown.push_str(&format!("    (the source has {} lines)\n", lines.len()));
            continue;
        }
        let width = (error.line + 1).min(lines.len()).to_string().len();
        for number in error.line.saturating_sub(1).max(1)..=(error.line + 1).min(lines.len()) {
            let mark = if number == error.line { '>' } else { ' ' };
            shown.push_str(&format!("  {mark} {number:>width$} | {}\n", lines[number - 1]));
        }
    }
    if !shown.is_empty() {
        report.push_str("\n\nthe generated source at each error:\n");
        report.push_str(shown.trim_start_matches('\n'));
    }
    report.trim_end().to_string()
}

/// Compiles through the on-disk cache: the image is keyed by the source, name, options (the
/// architecture among them) and NVRTC's version, so a hit is exactly what compiling would give.
/// Entries are written to a temporary file and renamed into place.
pub fn compile_cached(
    cache: &ModuleCache,
    source: &str,
    name: &str,
    options: &CompileOptions,
) -> Result<CompiledModule, GpuError> {
    let nvrtc = library::nvrtc()?;
    let version = format!("nvrtc {}.{}", nvrtc.version.0, nvrtc.version.1);
    let args = options.args().join("\n");
    let key = CacheKey::new("cuda", &[source.as_bytes(), name.as_bytes(), args.as_bytes(), version.as_bytes()]);
    let kind = if options.arch.is_virtual() { ImageKind::Ptx } else { ImageKind::Cubin };
    let cached = cache.verified(&key, kind.extension()).map_err(cache_error)?;
    if let Some(path) = cached {
        match std::fs::read(&path) {
            Ok(image) if !image.is_empty() => {
                return Ok(CompiledModule {
                    name: name.into(),
                    arch: options.arch,
                    kind,
                    image,
                    log: String::new(),
                    from_cache: true,
                });
            }
            Ok(_) => cache.discard(&path, "it is empty"),
            Err(e) => return Err(GpuError::Cache { path: path.clone(), cause: e }),
        }
    }
    let module = compile_with(source, name, options)?;
    cache.store_bytes(&key, kind.extension(), &module.image).map_err(cache_error)?;
    Ok(module)
}

/// A cache failure as the GPU layer reports it.
fn cache_error(error: crate::RuntimeError) -> GpuError {
    match error {
        crate::RuntimeError::Io { path, cause } => GpuError::Cache { path, cause },
        other => GpuError::UnsafeCache(other.to_string()),
    }
}
