//! Failed writes and bad limits end grail with an error, not a panic: standard output on a full
//! device, compressed partition files, and the `--threads` limit.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::grail;

/// Runs `grail ARGS --quiet` with standard output on /dev/full, if there is one.
fn grail_to_full(args: &[&str]) -> Option<std::process::Output> {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").ok()?;
    let out = Command::new(env!("CARGO_BIN_EXE_grail"))
        .args(args)
        .arg("--quiet")
        .env("GRAIL_CACHE_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("grail-cache"))
        .stdout(Stdio::from(full))
        .output()
        .expect("grail runs");
    Some(out)
}

fn small_graph(dir: &Path) -> String {
    let path = dir.join("w.wel");
    std::fs::write(&path, "0 1 2\n1 2 3\n").unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn a_full_standard_output_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let graph = small_graph(dir.path());
    for args in [vec!["stats", graph.as_str()], vec!["run", "bfs", "-g", graph.as_str(), "--json"]] {
        let Some(out) = grail_to_full(&args) else { return };
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains("error: cannot write to standard output"), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[test]
fn a_gz_partition_file_is_compressed_and_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let graph = small_graph(dir.path());
    let part = dir.path().join("x.part.gz");
    let out = grail(&["partition", &graph, "-k", "2", "-m", "ordered", "-o", part.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(&std::fs::read(&part).unwrap()[..2], &[0x1f, 0x8b]);
    let run = grail(&[
        "run",
        "bfs",
        "-g",
        &graph,
        "--devices",
        "cpu,cpu",
        "--partition-file",
        part.to_str().unwrap(),
        "-o",
        "-",
    ]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    assert_eq!(String::from_utf8(run.stdout).unwrap(), "0\n1\n2\n");
}

#[test]
fn too_many_threads_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let graph = small_graph(dir.path());
    let out = grail(&["--threads", "100000", "stats", &graph]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("at most 4096"));
    let zero = grail(&["--threads", "0", "stats", &graph]);
    assert!(zero.status.success(), "{}", String::from_utf8_lossy(&zero.stderr));
}
