//! The on-disk cache of compiled modules, keyed by a hash of everything that shapes the result.
//!
//! Compiling generated code takes far longer than loading it, so grail keeps every module it
//! builds: CPU shared libraries and GPU images. Nothing in the folder is trusted unchecked:
//!
//! - the folder is created private (0700), and a folder other users can write is refused
//!   (loading a library from it would run whatever they put there);
//! - every entry has a checksum beside it (`ENTRY.xxh`, its 128-bit xxh3 in hex), written before
//!   the entry is renamed into place, and checked before the entry is used: a truncated or
//!   damaged entry (a full disk, a crash, a stray edit) is removed and rebuilt, with a note,
//!   instead of crashing the loader;
//! - entries and checksums are written to temporary files and renamed into place, so concurrent
//!   grail processes never see half of one.

use std::io::Write;
use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::{Xxh3, xxh3_128};

use crate::error::{Result, RuntimeError};

/// A folder of compiled modules.
#[derive(Debug, Clone)]
pub struct ModuleCache {
    dir: PathBuf,
}

impl ModuleCache {
    /// `$GRAIL_CACHE_DIR`, else `$XDG_CACHE_HOME/grail`, else `$HOME/.cache/grail`, else a folder in
    /// the system's temporary directory.
    pub fn default_location() -> ModuleCache {
        let from_env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let dir = from_env("GRAIL_CACHE_DIR")
            .or_else(|| from_env("XDG_CACHE_HOME").map(|d| d.join("grail")))
            .or_else(|| from_env("HOME").map(|d| d.join(".cache").join("grail")))
            .unwrap_or_else(|| std::env::temp_dir().join("grail-cache"));
        ModuleCache { dir }
    }

    /// A cache in the given folder (created when first written).
    pub fn at(dir: impl Into<PathBuf>) -> ModuleCache {
        ModuleCache { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The path of the entry for `key` with the given extension, whether or not it exists.
    pub fn entry(&self, key: &CacheKey, extension: &str) -> PathBuf {
        self.dir.join(format!("{}-{:032x}.{extension}", key.kind, key.hash))
    }

    /// Makes sure the cache folder exists (created private) and is safe to load code from.
    pub fn create(&self) -> Result<()> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            if !self.dir.is_dir() {
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(&self.dir)
                    .map_err(|e| self.unusable(e))?;
            }
        }
        #[cfg(not(unix))]
        std::fs::create_dir_all(&self.dir).map_err(|e| self.unusable(e))?;
        self.check_private()
    }

    /// The error for a cache folder that cannot be made or read.
    fn unusable(&self, cause: std::io::Error) -> RuntimeError {
        RuntimeError::CacheDir { dir: self.dir.clone(), cause: grail_graph::error::unwrap_io_error(cause) }
    }

    /// Refuses a folder that users other than this one can write.
    pub fn check_private(&self) -> Result<()> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let Ok(meta) = std::fs::metadata(&self.dir) else { return Ok(()) };
            let unsafe_cache = |why: String| Err(RuntimeError::UnsafeCache { dir: self.dir.clone(), why });
            // SAFETY: geteuid has no preconditions.
            let me = unsafe { libc::geteuid() };
            if meta.uid() != me {
                return unsafe_cache(format!("belongs to user {}, not to this user ({me})", meta.uid()));
            }
            if meta.mode() & 0o022 != 0 {
                return unsafe_cache(format!("can be written by other users (mode {:o})", meta.mode() & 0o777));
            }
        }
        Ok(())
    }

    /// The entry for `key` if it is there and its checksum matches. A damaged entry (no
    /// checksum, a wrong one) is removed, with a note on standard error, and `None` returned so
    /// that the caller builds it again.
    pub fn verified(&self, key: &CacheKey, extension: &str) -> Result<Option<PathBuf>> {
        let path = self.entry(key, extension);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) if !self.dir.is_dir() => return Err(self.unusable(e)),
            Err(e) => return Err(RuntimeError::io(&path, e)),
        };
        self.check_private()?;
        let expected = std::fs::read_to_string(checksum_path(&path)).ok();
        if expected.as_deref().map(str::trim) == Some(checksum(&bytes).as_str()) {
            return Ok(Some(path));
        }
        self.discard(
            &path,
            if expected.is_some() {
                "its checksum does not match (damaged)"
            } else {
                "it has no checksum (damaged, or written by an older grail)"
            },
        );
        Ok(None)
    }

    /// Removes a damaged entry and its checksum, saying so.
    pub fn discard(&self, path: &Path, why: &str) {
        eprintln!("note: not using the cached module {}: {why}; building it again", path.display());
        let _ = std::fs::remove_file(path);
        let _ = std::fs::remove_file(checksum_path(path));
    }

    /// Stores the file `built` (in the cache folder) as the entry for `key`: its checksum first,
    /// then the file renamed into place.
    pub fn store(&self, key: &CacheKey, extension: &str, built: &Path) -> Result<PathBuf> {
        let path = self.entry(key, extension);
        let bytes = std::fs::read(built).map_err(|e| RuntimeError::io(built, e))?;
        let mut sum = tempfile::Builder::new()
            .prefix(".sum-")
            .tempfile_in(&self.dir)
            .map_err(|e| RuntimeError::io(&self.dir, e))?;
        writeln!(sum, "{}", checksum(&bytes)).map_err(|e| RuntimeError::io(sum.path(), e))?;
        sum.persist(checksum_path(&path)).map_err(|e| RuntimeError::io(&path, e.error))?;
        // Another process building the same module may win the race: harmless, the same bytes.
        std::fs::rename(built, &path).map_err(|e| RuntimeError::io(&path, e))?;
        Ok(path)
    }

    /// Stores `bytes` as the entry for `key`.
    pub fn store_bytes(&self, key: &CacheKey, extension: &str, bytes: &[u8]) -> Result<PathBuf> {
        self.create()?;
        let mut file = tempfile::Builder::new()
            .prefix(".entry-")
            .tempfile_in(&self.dir)
            .map_err(|e| RuntimeError::io(&self.dir, e))?;
        file.write_all(bytes).map_err(|e| RuntimeError::io(file.path(), e))?;
        let (_, built) = file.keep().map_err(|e| RuntimeError::io(&self.dir, e.error))?;
        let stored = self.store(key, extension, &built);
        if stored.is_err() {
            let _ = std::fs::remove_file(&built);
        }
        stored
    }
}

/// Where an entry's checksum is.
fn checksum_path(entry: &Path) -> PathBuf {
    let mut name = entry.as_os_str().to_owned();
    name.push(".xxh");
    PathBuf::from(name)
}

/// The checksum of an entry's bytes, as stored.
fn checksum(bytes: &[u8]) -> String {
    format!("{:032x}", xxh3_128(bytes))
}

/// A hash of a module's inputs (source, compiler identity, flags) and the kind of module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheKey {
    kind: &'static str,
    hash: u128,
}

impl CacheKey {
    /// Hashes the parts in order; each part is length-prefixed so that no two different lists of
    /// parts give the same byte stream.
    pub fn new(kind: &'static str, parts: &[&[u8]]) -> CacheKey {
        let mut hasher = Xxh3::new();
        for part in parts {
            hasher.update(&(part.len() as u64).to_le_bytes());
            hasher.update(part);
        }
        CacheKey { kind, hash: hasher.digest128() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_separate_parts() {
        let a = CacheKey::new("cpu", &[b"ab", b"c"]);
        let b = CacheKey::new("cpu", &[b"a", b"bc"]);
        assert_ne!(a, b);
        assert_eq!(a, CacheKey::new("cpu", &[b"ab", b"c"]));
        let cache = ModuleCache::at("/tmp/x");
        assert!(cache.entry(&a, "so").to_str().unwrap().starts_with("/tmp/x/cpu-"));
    }
}
