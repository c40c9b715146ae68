//! The tuning database: one JSON file recording, for each program, target and input class, the
//! configuration `grail tune` found fastest and what it measured to find it.
//!
//! The file lives in the cache folder (`$GRAIL_CACHE_DIR`, else `$XDG_CACHE_HOME/grail`, else
//! `~/.cache/grail`) as `tuning.json`, or wherever `$GRAIL_TUNING_DB` says. It is meant to be
//! read (and, if need be, edited) by people: pretty-printed, one entry per key, the winner's
//! configuration in the same text `--opt` takes. Writes go to a temporary file beside it that is
//! renamed over it, so a reader never sees half a file; the file is read again just before
//! writing, so entries another process recorded meanwhile are kept (two processes recording at
//! the same instant can still lose one of the two entries, never the file). A file that is not
//! a database this grail can read is reported with its path and where the problem is; `grail run`
//! then warns and uses the default, `grail tune` refuses to overwrite it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::class::Features;

/// The format version this grail reads and writes.
pub const VERSION: u32 = 1;

/// The file name inside the cache folder.
pub const FILE_NAME: &str = "tuning.json";

/// The environment variable that names the database file instead.
pub const ENV: &str = "GRAIL_TUNING_DB";

/// The database file: `$GRAIL_TUNING_DB`, else `tuning.json` in the module cache's folder.
pub fn default_path() -> PathBuf {
    match std::env::var_os(ENV).filter(|v| !v.is_empty()) {
        Some(path) => PathBuf::from(path),
        None => grail_runtime::ModuleCache::default_location().dir().join(FILE_NAME),
    }
}

/// The whole file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Database {
    pub version: u32,
    pub entries: Vec<Entry>,
}

impl Default for Database {
    fn default() -> Self {
        Database { version: VERSION, entries: Vec::new() }
    }
}

/// The winner for one program, target and input class.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// The program's name, for people: a suite program (`bfs_do`) or a file's path.
    pub program: String,
    /// The key: a hash of the program's unoptimized IR (see `ProgramId`).
    pub program_hash: String,
    /// The key: `cpu`, or `gpu:` and the GPU's model name.
    pub target: String,
    /// The key: the input class, `size=M,skew=high,diameter=low`.
    pub class: String,
    /// The winning configuration, as `--opt` takes it.
    pub opt: String,
    /// Its best time, in milliseconds.
    pub time_ms: f64,
    /// The unoptimized configuration's best time, for comparison.
    pub none_ms: Option<f64>,
    /// When it was measured: UTC, `YYYY-MM-DDTHH:MM:SSZ`.
    pub date: String,
    /// The graph it was measured on.
    pub graph: String,
    /// That graph's features.
    pub features: Features,
    /// CPU worker threads, on the CPU.
    pub threads: Option<usize>,
    /// Every candidate considered, in the order they were.
    pub candidates: Vec<CandidateRecord>,
}

/// One measured (or skipped) configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CandidateRecord {
    pub opt: String,
    /// `measured`, `pruned` (slower than twice the best on its first run, not repeated),
    /// `failed` (it did not compile or run, or computed a wrong result), `same as #N` (the same
    /// program as candidate N on this target), `skipped` (out of budget).
    pub status: String,
    /// Its best time, when it ran.
    pub time_ms: Option<f64>,
    /// How many timed runs it had (after one untimed run that checked its result).
    pub runs: u32,
    /// Why it failed, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Why the database could not be used.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// The message includes the system's, so the error has no `source` (which would print it
    /// twice in a chain of causes).
    #[error("cannot read the tuning database {path}: {cause}")]
    Read { path: PathBuf, cause: std::io::Error },
    #[error(
        "the tuning database {path} is not valid ({message}); move it away or delete it, and `grail tune` writes a \
         new one"
    )]
    Corrupt { path: PathBuf, message: String },
    #[error("the tuning database {path} has format version {found}; this grail reads version {VERSION}")]
    Version { path: PathBuf, found: u32 },
    #[error("cannot write the tuning database {path}: {message}")]
    Write { path: PathBuf, message: String },
}

impl Database {
    /// Reads the database at `path`; an empty one when there is no file.
    pub fn load(path: &Path) -> Result<Database, DbError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Database::default()),
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                return Err(DbError::Corrupt { path: path.to_path_buf(), message: "it is not UTF-8 text".into() });
            }
            Err(cause) => return Err(DbError::Read { path: path.to_path_buf(), cause }),
        };
        Database::parse(&text, path)
    }

    /// Parses a database's text (`path` names it in errors).
    pub fn parse(text: &str, path: &Path) -> Result<Database, DbError> {
        let corrupt = |e: serde_json::Error| {
            let what = e.to_string();
            let what = what.split(" at line ").next().unwrap_or_default();
            let message =
                if e.line() > 0 { format!("line {}, column {}: {what}", e.line(), e.column()) } else { what.into() };
            DbError::Corrupt { path: path.to_path_buf(), message }
        };
        // The version first, so a newer format is reported as such rather than as corrupt.
        let value: serde_json::Value = serde_json::from_str(text).map_err(corrupt)?;
        if let Some(found) = value.get("version").and_then(|v| v.as_u64())
            && found != u64::from(VERSION)
        {
            return Err(DbError::Version { path: path.to_path_buf(), found: found.min(u64::from(u32::MAX)) as u32 });
        }
        serde_json::from_value(value).map_err(corrupt)
    }

    /// The entry for a program, target and class.
    pub fn lookup(&self, program_hash: &str, target: &str, class: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.program_hash == program_hash && e.target == target && e.class == class)
    }

    /// The entries for a program and target, whatever their class.
    pub fn for_program<'a>(&'a self, program_hash: &'a str, target: &'a str) -> impl Iterator<Item = &'a Entry> {
        self.entries.iter().filter(move |e| e.program_hash == program_hash && e.target == target)
    }

    /// Adds `entry`, replacing the one with its key.
    pub fn insert(&mut self, entry: Entry) {
        match self
            .entries
            .iter_mut()
            .find(|e| e.program_hash == entry.program_hash && e.target == entry.target && e.class == entry.class)
        {
            Some(old) => *old = entry,
            None => self.entries.push(entry),
        }
    }

    /// Writes the database to `path` atomically (a temporary file renamed over it), creating
    /// the folder.
    pub fn save(&self, path: &Path) -> Result<(), DbError> {
        let fail = |message: String| DbError::Write { path: path.to_path_buf(), message };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| fail(format!("cannot create {}: {e}", dir.display())))?;
        }
        let text = serde_json::to_string_pretty(self).map_err(|e| fail(e.to_string()))?;
        grail_graph::io::write_atomically(path, |out| {
            out.write_all(text.as_bytes())?;
            out.write_all(b"\n")
        })
        .map_err(|e| fail(e.to_string()))
    }

    /// Records `entry` in the database at `path`: reads it again, replaces or adds the entry,
    /// writes it back atomically.
    pub fn record(path: &Path, entry: Entry) -> Result<(), DbError> {
        let mut db = Database::load(path)?;
        db.insert(entry);
        db.save(path)
    }
}

/// Now, as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn now_utc() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    utc_text(secs)
}

/// Seconds since 1970 as `YYYY-MM-DDTHH:MM:SSZ` (the proleptic Gregorian calendar).
pub fn utc_text(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rest = secs % 86_400;
    // Days to a civil date (the algorithm of Howard Hinnant's `civil_from_days`).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rest / 3600, rest % 3600 / 60, rest % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(class: &str, opt: &str) -> Entry {
        Entry {
            program: "bfs".into(),
            program_hash: "00ff".into(),
            target: "cpu".into(),
            class: class.into(),
            opt: opt.into(),
            time_ms: 1.5,
            none_ms: Some(2.0),
            date: utc_text(0),
            graph: "g.gr".into(),
            features: Features {
                nodes: 10,
                edges: 20,
                mean_degree: 2.0,
                max_degree: 3,
                hub_edge_share: 0.0,
                diameter: 4,
                diameter_exact: true,
                swept_edges: 20,
                millis: 0.1,
            },
            threads: Some(2),
            candidates: vec![CandidateRecord {
                opt: opt.into(),
                status: "measured".into(),
                time_ms: Some(1.5),
                runs: 3,
                error: None,
            }],
        }
    }

    #[test]
    fn dates_are_utc_text() {
        assert_eq!(utc_text(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_text(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc_text(1_798_761_599), "2026-12-31T23:59:59Z");
        assert!(now_utc().starts_with("20"));
    }

    #[test]
    fn round_trip_and_replacement() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("tuning.json");
        assert_eq!(Database::load(&path).unwrap(), Database::default());
        Database::record(&path, entry("size=S,skew=low,diameter=low", "none")).unwrap();
        Database::record(&path, entry("size=M,skew=low,diameter=low", "all")).unwrap();
        Database::record(&path, entry("size=S,skew=low,diameter=low", "np=tb")).unwrap();
        let db = Database::load(&path).unwrap();
        assert_eq!(db.entries.len(), 2);
        assert_eq!(db.lookup("00ff", "cpu", "size=S,skew=low,diameter=low").unwrap().opt, "np=tb");
        assert!(db.lookup("00ff", "gpu:x", "size=S,skew=low,diameter=low").is_none());
        assert_eq!(db.for_program("00ff", "cpu").count(), 2);
        // Human-readable: pretty-printed, one key per line.
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("\n      \"opt\": \"np=tb\""), "{text}");
        // Nothing left beside it.
        let names: Vec<_> =
            std::fs::read_dir(path.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("tuning.json")]);
    }

    #[test]
    fn corrupt_and_foreign_files_are_errors_that_say_where() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tuning.json");
        for (text, needle) in [
            ("{\"version\": 1, \"entries\": [", "line 1"),
            ("not json", "not valid"),
            ("{\"version\": 1}", "missing field `entries`"),
            ("{\"version\": 1, \"entries\": [{\"program\": 3}]}", "not valid"),
            ("[1, 2]", "not valid"),
        ] {
            std::fs::write(&path, text).unwrap();
            let error = Database::load(&path).unwrap_err().to_string();
            assert!(error.contains(needle) && error.contains("tuning.json"), "{text}: {error}");
            // Recording refuses to overwrite what it cannot read.
            assert!(Database::record(&path, entry("c", "none")).is_err());
            assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        }
        std::fs::write(&path, "{\"version\": 7, \"entries\": []}").unwrap();
        assert!(Database::load(&path).unwrap_err().to_string().contains("format version 7"));
        std::fs::write(&path, [0xff, 0xfe, 0x00]).unwrap();
        assert!(Database::load(&path).unwrap_err().to_string().contains("not UTF-8"));
    }

    #[test]
    fn an_unusable_path_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tuning.json");
        Database::record(&path, entry("a", "none")).unwrap();
        let before = std::fs::read_to_string(&path).unwrap();
        // A database whose parent is a file can be neither read nor written; the error says where.
        let blocked = path.join("nested.json");
        let error = Database::record(&blocked, entry("b", "all")).unwrap_err().to_string();
        assert!(error.contains("nested.json"), "{error}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
    }
}
