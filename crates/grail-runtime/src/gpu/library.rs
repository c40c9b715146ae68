//! Finding and loading the NVRTC library and the CUDA driver at run time.
//!
//! cudarc (built with `dynamic-loading`) opens its libraries by file name only, through the
//! system's loader: `libnvrtc.so`, ..., `libnvrtc.so.13`, `libnvrtc.so.12`, ... and `libcuda.so.1`;
//! it cannot be given a path, and it panics when nothing loads. So grail finds NVRTC first, by
//! itself, in more places (`GRAIL_NVRTC_LIB`, the system's loader, the CUDA toolkit's folders, the
//! folders NVIDIA's pip wheels install into), and loads it by its full path. The library stays
//! loaded for the life of the process, and when cudarc then asks the loader for
//! `libnvrtc.so.13` (or `.12`), the loader hands back the library already loaded under that
//! soname. Before grail calls into cudarc it has checked that cudarc will find the library, so
//! cudarc's panics never happen.

use std::ffi::c_int;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use crate::error::GpuError;

/// The file names NVRTC goes by, newest first (only the versions cudarc's bindings look for).
#[cfg(not(windows))]
pub const NVRTC_NAMES: &[&str] = &["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"];
#[cfg(windows)]
pub const NVRTC_NAMES: &[&str] = &["nvrtc64_130_0.dll", "nvrtc64_120_0.dll"];

/// The CUDA driver's file names.
#[cfg(not(windows))]
const DRIVER_NAMES: &[&str] = &["libcuda.so.1", "libcuda.so"];
#[cfg(windows)]
const DRIVER_NAMES: &[&str] = &["nvcuda.dll"];

/// The folders, under a Python `site-packages`, where NVIDIA's wheels put NVRTC: `nvidia-cuda-nvrtc`
/// (CUDA 13) and `nvidia-cuda-nvrtc-cu12` (CUDA 12).
pub const WHEEL_DIRS: &[&str] = &["nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"];

/// The environment variable that names the NVRTC library, or the folder that holds it.
pub const NVRTC_ENV: &str = "GRAIL_NVRTC_LIB";

/// Where grail looks for NVRTC, in order. [`NvrtcSearch::from_env`] is what grail uses; tests
/// build their own.
#[derive(Debug, Clone, Default)]
pub struct NvrtcSearch {
    /// `GRAIL_NVRTC_LIB`: a library file, or a folder holding one. When set, the only place
    /// searched: a user who names a library gets that library or an error about it.
    pub explicit: Option<PathBuf>,
    /// Whether to ask the system's loader for [`NVRTC_NAMES`] (`LD_LIBRARY_PATH`, the ld.so cache,
    /// the default folders).
    pub system: bool,
    /// Folders to look in, each with where it came from (for the error message).
    pub dirs: Vec<(PathBuf, String)>,
    /// Whether to ask `python3` for its site-packages folders and look in [`WHEEL_DIRS`] there.
    pub python: bool,
}

/// An NVRTC library, loaded.
#[derive(Debug)]
pub struct FoundLibrary {
    /// The file, when it was loaded by path; `None` when the system's loader found it by name.
    pub path: Option<PathBuf>,
    /// The file name it was loaded as.
    pub name: String,
    library: libloading::Library,
}

impl NvrtcSearch {
    /// The search grail does: `GRAIL_NVRTC_LIB` if set; else the system's loader, then
    /// `$CUDA_HOME`, `$CUDA_PATH`, `$CUDA_ROOT`, the usual toolkit folders, and the NVIDIA wheels
    /// in python3's site-packages.
    pub fn from_env() -> NvrtcSearch {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        if let Some(explicit) = var(NVRTC_ENV) {
            return NvrtcSearch { explicit: Some(explicit), ..NvrtcSearch::default() };
        }
        let mut dirs = Vec::new();
        for name in ["CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"] {
            if let Some(root) = var(name) {
                dirs.push((root.join("lib64"), format!("${name}/lib64")));
                dirs.push((root.join("lib"), format!("${name}/lib")));
            }
        }
        dirs.push((PathBuf::from("/usr/local/cuda/lib64"), "the CUDA toolkit's default folder".into()));
        let mut versioned: Vec<PathBuf> = std::fs::read_dir("/usr/local")
            .into_iter()
            .flatten()
            .flatten()
            .filter(|entry| entry.file_name().to_string_lossy().starts_with("cuda-"))
            .map(|entry| entry.path().join("lib64"))
            .collect();
        versioned.sort();
        for dir in versioned.into_iter().rev() {
            dirs.push((dir, "a CUDA toolkit".into()));
        }
        dirs.push((PathBuf::from("/opt/cuda/lib64"), "a CUDA toolkit".into()));
        NvrtcSearch { explicit: None, system: true, dirs, python: true }
    }

    /// Loads the first NVRTC found, or says everywhere it looked.
    pub fn find(&self) -> Result<FoundLibrary, GpuError> {
        if let Some(explicit) = &self.explicit {
            return find_explicit(explicit);
        }
        let mut searched = Vec::new();
        if self.system {
            for name in NVRTC_NAMES {
                // SAFETY: NVRTC's initialisers are plain C library setup with no preconditions.
                if let Ok(library) = unsafe { libloading::Library::new(*name) } {
                    return Ok(FoundLibrary { path: None, name: name.to_string(), library });
                }
            }
            let ld_path = match std::env::var("LD_LIBRARY_PATH") {
                Ok(value) if !value.is_empty() => format!("LD_LIBRARY_PATH={value}"),
                _ => "LD_LIBRARY_PATH unset".into(),
            };
            searched.push(format!(
                "the system's library path ({ld_path}; the ld.so cache; /lib, /usr/lib): no {}",
                NVRTC_NAMES.join(", ")
            ));
        }
        let mut dirs = self.dirs.clone();
        if self.python {
            match python_site_dirs() {
                Ok(sites) => {
                    let mut any = false;
                    for site in sites {
                        for wheel in WHEEL_DIRS {
                            let dir = site.join(wheel);
                            if dir.is_dir() {
                                any = true;
                                dirs.push((dir, "an NVIDIA pip wheel".into()));
                            }
                        }
                    }
                    if !any {
                        searched.push(format!(
                            "python3's site-packages: no NVIDIA wheel folder ({})",
                            WHEEL_DIRS.join(", ")
                        ));
                    }
                }
                Err(problem) => searched.push(format!("python3's site-packages: {problem}")),
            }
        }
        for (dir, origin) in &dirs {
            match find_in_dir(dir) {
                Ok(found) => return Ok(found),
                Err(problem) => searched.push(format!("{} ({origin}): {problem}", dir.display())),
            }
        }
        Err(GpuError::NvrtcNotFound { names: NVRTC_NAMES.join(", "), searched })
    }
}

/// `GRAIL_NVRTC_LIB` names a file or a folder.
fn find_explicit(path: &Path) -> Result<FoundLibrary, GpuError> {
    let fail = |message: String| GpuError::NvrtcLoad { path: path.to_path_buf(), message };
    if path.is_dir() {
        return find_in_dir(path).map_err(fail);
    }
    if !path.exists() {
        return Err(fail("there is no such file or folder".into()));
    }
    load_file(path).map_err(fail)
}

/// Loads a library by its full path.
fn load_file(path: &Path) -> Result<FoundLibrary, String> {
    // SAFETY: as in `find`: loading NVRTC runs no initialiser with preconditions.
    match unsafe { libloading::Library::new(path) } {
        Ok(library) => Ok(FoundLibrary {
            path: Some(path.to_path_buf()),
            name: path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            library,
        }),
        Err(e) => Err(format!("{} does not load: {e}", path.display())),
    }
}

/// The NVRTC libraries in a folder, best first: [`NVRTC_NAMES`] in order, then any other
/// `libnvrtc.so.*` (a toolkit's fully versioned file), newest first.
fn candidates_in(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut others = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        let is_nvrtc = name.starts_with("libnvrtc.so.") || (cfg!(windows) && name.starts_with("nvrtc64_"));
        if is_nvrtc && !NVRTC_NAMES.contains(&name.as_str()) {
            others.push(name);
        }
    }
    others.sort();
    let named = NVRTC_NAMES.iter().map(|n| n.to_string()).filter(|n| dir.join(n).exists());
    Ok(named.chain(others.into_iter().rev()).map(|n| dir.join(n)).collect())
}

fn find_in_dir(dir: &Path) -> Result<FoundLibrary, String> {
    let candidates = match candidates_in(dir) {
        Ok(candidates) => candidates,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err("no such folder".into()),
        Err(e) => return Err(format!("cannot be read: {e}")),
    };
    if candidates.is_empty() {
        return Err(format!("has no {}", NVRTC_NAMES.join(", ")));
    }
    let mut problems = Vec::new();
    for path in candidates {
        match load_file(&path) {
            Ok(found) => return Ok(found),
            Err(problem) => problems.push(problem),
        }
    }
    Err(problems.join("; "))
}

/// The site-packages folders of `python3` (or `python`): system, user and virtual environment.
fn python_site_dirs() -> Result<Vec<PathBuf>, String> {
    const SCRIPT: &str = "import site, sys\n\
        dirs = list(getattr(site, 'getsitepackages', lambda: [])())\n\
        dirs.append(site.getusersitepackages())\n\
        dirs += [p for p in sys.path if p.endswith('-packages')]\n\
        print('\\n'.join(dirs))";
    let mut problems = Vec::new();
    for python in ["python3", "python"] {
        match std::process::Command::new(python).args(["-c", SCRIPT]).stdin(std::process::Stdio::null()).output() {
            Ok(out) if out.status.success() => {
                let mut dirs: Vec<PathBuf> = Vec::new();
                for line in String::from_utf8_lossy(&out.stdout).lines().filter(|l| !l.is_empty()) {
                    let dir = PathBuf::from(line);
                    if !dirs.contains(&dir) {
                        dirs.push(dir);
                    }
                }
                return Ok(dirs);
            }
            Ok(out) => problems.push(format!("`{python}` failed ({})", out.status)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => problems.push(format!("no `{python}`")),
            Err(e) => problems.push(format!("`{python}` cannot run: {e}")),
        }
    }
    Err(problems.join(", "))
}

/// The NVRTC library grail compiles with, loaded once per process.
#[derive(Debug)]
pub(crate) struct Nvrtc {
    /// The file, when grail loaded it by path and cudarc uses that same library.
    pub path: Option<PathBuf>,
    pub name: String,
    pub version: (u32, u32),
    /// Keeps the library loaded, so that cudarc's look-up by soname finds it.
    _library: libloading::Library,
}

type VersionFn = unsafe extern "C" fn(*mut c_int, *mut c_int) -> c_int;

static NVRTC: OnceLock<Nvrtc> = OnceLock::new();
static NVRTC_INIT: Mutex<()> = Mutex::new(());

/// The NVRTC library: found and checked on first use, then the same for the whole process. A
/// failure is not remembered, so a later call (after the user fixed something) searches again.
pub(crate) fn nvrtc() -> Result<&'static Nvrtc, GpuError> {
    if let Some(nvrtc) = NVRTC.get() {
        return Ok(nvrtc);
    }
    let _guard = NVRTC_INIT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(nvrtc) = NVRTC.get() {
        return Ok(nvrtc);
    }
    let found = NvrtcSearch::from_env().find()?;
    let nvrtc = adopt(found)?;
    Ok(NVRTC.get_or_init(|| nvrtc))
}

/// Checks that cudarc will use the library grail loaded, and reads its version.
fn adopt(found: FoundLibrary) -> Result<Nvrtc, GpuError> {
    let described = found.path.clone().unwrap_or_else(|| PathBuf::from(&found.name));
    // SAFETY: only opens libraries by name (ours is already loaded), like `find`.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Err(GpuError::NvrtcUnusable {
            path: described,
            message: format!(
                "its version is not one grail's CUDA bindings load (they look for {}); install NVRTC 12 or 13",
                NVRTC_NAMES.join(", ")
            ),
        });
    }
    // SAFETY: `nvrtcVersion` has this signature in every NVRTC.
    let ours = unsafe { found.library.get::<VersionFn>(b"nvrtcVersion\0") }.map(|f| *f);
    let Ok(ours) = ours else {
        return Err(GpuError::NvrtcUnusable { path: described, message: "it has no nvrtcVersion: not NVRTC".into() });
    };
    // SAFETY: `is_culib_present` said cudarc's look-up succeeds, so `culib` does not panic.
    let theirs = unsafe { cudarc::nvrtc::sys::culib().get::<VersionFn>(b"nvrtcVersion\0") }.map(|f| *f).ok();
    let (mut major, mut minor) = (0, 0);
    // SAFETY: two valid out-pointers.
    let status = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    if status != cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(GpuError::NvrtcUnusable { path: described, message: format!("nvrtcVersion failed: {status:?}") });
    }
    // cudarc tries `libnvrtc.so` first; if that is another file than the one grail found, cudarc
    // uses it, and grail reports it by name rather than a path it does not use.
    let same = theirs.is_some_and(|theirs| theirs as usize == ours as usize);
    Ok(Nvrtc {
        path: if same { found.path } else { None },
        name: if same { found.name } else { "libnvrtc (found by the system's loader)".into() },
        version: (major.max(0) as u32, minor.max(0) as u32),
        _library: found.library,
    })
}

static DRIVER: OnceLock<libloading::Library> = OnceLock::new();
static DRIVER_INIT: Mutex<()> = Mutex::new(());

/// Loads the CUDA driver and initialises it (`cuInit`), once per process.
pub(crate) fn driver() -> Result<(), GpuError> {
    if DRIVER.get().is_some() {
        return Ok(());
    }
    let _guard = DRIVER_INIT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if DRIVER.get().is_some() {
        return Ok(());
    }
    let mut problems = Vec::new();
    let mut library = None;
    for name in DRIVER_NAMES {
        // SAFETY: the driver library's initialisers have no preconditions.
        match unsafe { libloading::Library::new(*name) } {
            Ok(lib) => {
                library = Some(lib);
                break;
            }
            Err(e) => problems.push(crate::cpu::toolchain::load_failure(&e)),
        }
    }
    let Some(library) = library else {
        return Err(GpuError::NoDriver { message: problems.join("; ") });
    };
    // SAFETY: the driver is loaded; cudarc finds it under the same name.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err(GpuError::NoDriver {
            message: format!("the CUDA bindings do not find the driver library under {}", DRIVER_NAMES.join(", ")),
        });
    }
    cudarc::driver::result::init().map_err(|e| super::device::driver_error("cuInit", e))?;
    let _ = DRIVER.set(library);
    Ok(())
}
