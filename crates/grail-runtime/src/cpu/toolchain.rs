//! Building generated C into a shared library with the system C compiler, and loading it.
//!
//! The compiler is `$CC` (default `cc`), invoked as
//! `$CC -std=c11 -O3 -march=native -fPIC -shared -pthread -fwrapv $GRAIL_CFLAGS -o lib.so source.c -lm`
//! (`$CC` and `$GRAIL_CFLAGS` split into words as a shell would, quotes honoured)
//! (`-fwrapv`: integer arithmetic wraps, as the language defines it).
//! Built libraries are cached by a hash of the source, the compiler's path and version, and the
//! flags, so a program is compiled once per machine and compiler.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cache::{CacheKey, ModuleCache};
use crate::error::{Result, RuntimeError};

/// Flags every build uses.
const BASE_FLAGS: &[&str] = &["-std=c11", "-O3", "-march=native", "-fPIC", "-shared", "-pthread", "-fwrapv"];

/// Splits a command line into words as a POSIX shell would for a plain command: whitespace
/// separates, single quotes keep everything literal, double quotes and backslashes escape.
/// No expansions. At least one word, or an error.
fn split_words(text: &str) -> std::result::Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err("an unclosed single quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => word.push(chars.next().ok_or("a backslash at the end")?),
                        Some(c) => word.push(c),
                        None => return Err("an unclosed double quote".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.push(chars.next().ok_or("a backslash at the end")?);
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    if words.is_empty() {
        return Err("no command".into());
    }
    Ok(words)
}

/// How much of a failing compiler's output an error shows.
const LOG_LINES: usize = 60;

/// A C compiler that works: it answered `--version`.
#[derive(Debug, Clone)]
pub struct CCompiler {
    program: String,
    /// Words that follow the program in `$CC` (`CC="gcc -O0"`), before grail's flags.
    leading: Vec<String>,
    version: String,
    extra_flags: Vec<String>,
}

impl CCompiler {
    /// The compiler `$CC` names (split into words as make does: `CC="gcc -O0"` runs `gcc` with
    /// `-O0` first), or `cc`, with extra flags from `$GRAIL_CFLAGS`.
    pub fn detect() -> Result<CCompiler> {
        let cc = std::env::var("CC").ok().filter(|cc| !cc.trim().is_empty()).unwrap_or_else(|| "cc".into());
        let mut words = split_words(&cc).map_err(|problem| RuntimeError::NoCompiler {
            program: cc.clone(),
            problem: format!("cannot be split into words ({problem})"),
        })?;
        let program = words.remove(0);
        let extra = std::env::var("GRAIL_CFLAGS").unwrap_or_default();
        let extra = if extra.trim().is_empty() {
            Vec::new()
        } else {
            split_words(&extra).map_err(|problem| RuntimeError::NoCompiler {
                program: cc.clone(),
                problem: format!("cannot be given $GRAIL_CFLAGS, which cannot be split into words ({problem})"),
            })?
        };
        let mut compiler = CCompiler::with_leading(&program, words, extra)?;
        compiler.program = program;
        Ok(compiler)
    }

    /// A specific compiler, checked by running it with `--version`.
    pub fn new(program: &str, extra_flags: Vec<String>) -> Result<CCompiler> {
        CCompiler::with_leading(program, Vec::new(), extra_flags)
    }

    /// A compiler run as `program leading... flags...`, checked with `--version`.
    fn with_leading(program: &str, leading: Vec<String>, extra_flags: Vec<String>) -> Result<CCompiler> {
        let no_compiler = |problem: String| RuntimeError::NoCompiler { program: program.to_string(), problem };
        let output = Command::new(program).args(&leading).arg("--version").output().map_err(|e| {
            no_compiler(match e.kind() {
                std::io::ErrorKind::NotFound => "was not found".to_string(),
                _ => format!("could not be run ({e})"),
            })
        })?;
        if !output.status.success() {
            return Err(no_compiler(format!("failed to report its version ({})", output.status)));
        }
        let version = String::from_utf8_lossy(&output.stdout).lines().next().unwrap_or("").trim().to_string();
        Ok(CCompiler { program: program.to_string(), leading, version, extra_flags })
    }

    /// The compiler's first `--version` line, e.g. `cc (Debian 12.2.0-14) 12.2.0`.
    pub fn version(&self) -> &str {
        &self.version
    }

    fn flags(&self) -> impl Iterator<Item = &str> {
        self.leading
            .iter()
            .map(String::as_str)
            .chain(BASE_FLAGS.iter().copied())
            .chain(self.extra_flags.iter().map(String::as_str))
    }

    /// The cache key of `source` built by this compiler with these flags.
    fn key(&self, source: &str) -> CacheKey {
        let flags = self.flags().collect::<Vec<_>>().join(" ");
        CacheKey::new("cpu", &[source.as_bytes(), self.program.as_bytes(), self.version.as_bytes(), flags.as_bytes()])
    }

    /// The shared library for `source`, from the cache or freshly built. Returns its path and
    /// whether it was built now.
    pub fn build(&self, source: &str, cache: &ModuleCache) -> Result<(PathBuf, bool)> {
        let key = self.key(source);
        if let Some(library) = cache.verified(&key, "so")? {
            return Ok((library, false));
        }
        cache.create()?;
        let work = tempfile::Builder::new()
            .prefix(".build-")
            .tempdir_in(cache.dir())
            .map_err(|e| RuntimeError::io(cache.dir(), e))?;
        let source_path = work.path().join("program.c");
        std::fs::write(&source_path, source).map_err(|e| RuntimeError::io(&source_path, e))?;
        let built = work.path().join("program.so");
        let output = Command::new(&self.program)
            .args(self.flags())
            .arg("-o")
            .arg(&built)
            .arg(&source_path)
            .arg("-lm")
            .output()
            .map_err(|e| RuntimeError::NoCompiler {
                program: self.program.clone(),
                problem: format!("could not be run ({e})"),
            })?;
        if !output.status.success() {
            let added: Vec<&str> = self.leading.iter().chain(&self.extra_flags).map(String::as_str).collect();
            let blame = if added.is_empty() {
                "this is a bug in grail".to_string()
            } else {
                format!(
                    "check the flags added by $CC and $GRAIL_CFLAGS ({}); without them, this is a bug in grail",
                    added.join(" ")
                )
            };
            return Err(RuntimeError::CompileFailed {
                program: self.program.clone(),
                status: output.status.to_string(),
                blame,
                log: compiler_log(&output.stderr, &output.stdout),
            });
        }
        let library = cache.store(&key, "so", &built)?;
        Ok((library, true))
    }

    /// Builds (or finds) and loads the library for `source`. A cached library the loader
    /// refuses (damaged in a way its checksum cannot tell) is built again, once.
    pub fn load(&self, source: &str, cache: &ModuleCache) -> Result<NativeLibrary> {
        let (path, built) = self.build(source, cache)?;
        match NativeLibrary::open(&path) {
            Err(RuntimeError::Load { message, .. }) if !built => {
                cache.discard(&path, &message);
                let (path, _) = self.build(source, cache)?;
                NativeLibrary::open(&path)
            }
            result => result,
        }
    }
}

/// The compiler's diagnostics, cut to the first [`LOG_LINES`] lines.
fn compiler_log(stderr: &[u8], stdout: &[u8]) -> String {
    let text = if stderr.is_empty() { stdout } else { stderr };
    let text = String::from_utf8_lossy(text);
    let lines: Vec<&str> = text.lines().collect();
    let mut log = lines.iter().take(LOG_LINES).copied().collect::<Vec<_>>().join("\n");
    if lines.len() > LOG_LINES {
        log.push_str(&format!("\n... ({} more lines)", lines.len() - LOG_LINES));
    }
    log
}

/// A loaded shared library of generated code.
pub struct NativeLibrary {
    library: libloading::Library,
    path: PathBuf,
}

impl std::fmt::Debug for NativeLibrary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeLibrary").field("path", &self.path).finish()
    }
}

/// What the dynamic loader said, not only "dlopen failed": libloading keeps the loader's own
/// words (the missing file, the undefined symbol) in the error's source.
pub(crate) fn load_failure(error: &libloading::Error) -> String {
    match std::error::Error::source(error) {
        Some(detail) => detail.to_string(),
        None => error.to_string(),
    }
}

impl NativeLibrary {
    /// Loads a shared library.
    pub fn open(path: &Path) -> Result<NativeLibrary> {
        // SAFETY: grail loads only libraries it built from its own generated code, whose
        // initialisers do nothing.
        let library = unsafe { libloading::Library::new(path) }
            .map_err(|e| RuntimeError::Load { path: path.to_path_buf(), message: load_failure(&e) })?;
        Ok(NativeLibrary { library, path: path.to_path_buf() })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A function exported by the library. The pointer is valid while this library is alive.
    ///
    /// # Safety
    /// `T` must be the exact function pointer type of the symbol, as the code generator emitted it.
    pub unsafe fn function<T: Copy>(&self, name: &str) -> Result<T> {
        // SAFETY: the caller guarantees `T` matches the symbol's type.
        let symbol = unsafe { self.library.get::<T>(name.as_bytes()) }
            .map_err(|_| RuntimeError::MissingSymbol { path: self.path.clone(), name: name.to_string() })?;
        Ok(*symbol)
    }
}

#[cfg(test)]
mod split_tests {
    use super::*;

    #[test]
    fn cc_splits_like_a_shell() {
        assert_eq!(split_words("gcc -O0").unwrap(), ["gcc", "-O0"]);
        assert_eq!(split_words("  '/opt/my cc/gcc' -DX=\"a b\" c\\ d ").unwrap(), ["/opt/my cc/gcc", "-DX=a b", "c d"]);
        assert!(split_words("gcc 'oops").is_err());
        assert!(split_words("   ").is_err());
    }
}
