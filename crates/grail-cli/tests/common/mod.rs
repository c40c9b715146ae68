//! What the command-line tests share: running the built `grail` as a user would.

use std::path::Path;
use std::process::{Command, Output};

/// Runs `grail ARGS --quiet` with a module cache of the test build's own.
pub fn grail(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_grail"))
        .args(args)
        .arg("--quiet")
        .env("GRAIL_CACHE_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("grail-cache"))
        .output()
        .expect("grail runs")
}
