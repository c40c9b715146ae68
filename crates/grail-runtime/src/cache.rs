//! The on-disk cache of compiled modules, keyed by a hash of everything that shapes the result.
//!
//! Compiling generated code takes far longer than loading it, so grail keeps every module it
//! builds: CPU shared libraries now, GPU modules later. Entries are written to a temporary file
//! and renamed into place, so concurrent grail processes never see a half-written entry.

use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::Xxh3;

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

    /// Makes sure the cache folder exists.
    pub fn create(&self) -> Result<()> {
        std::fs::create_dir_all(&self.dir).map_err(|e| RuntimeError::io(&self.dir, e))
    }
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
