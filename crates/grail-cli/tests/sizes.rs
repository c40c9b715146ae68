//! Sizes too large to hold are refused up front with a clear message, not left to abort on a
//! failed allocation or an overflow: `grail gen sat`, `grail sp` on a formula whose header
//! names billions of variables, and `grail pbf --count`.

mod common;

use std::time::{Duration, Instant};

use common::grail;

/// Runs grail, expecting exit `code` quickly with every one of `needles` in its error.
fn refused(args: &[&str], code: i32, needles: &[&str]) {
    let start = Instant::now();
    let out = grail(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
    for needle in needles {
        assert!(stderr.contains(needle), "{args:?}: `{needle}` missing from: {stderr}");
    }
    assert!(!stderr.contains("panicked") && !stderr.contains("memory allocation"), "{args:?}: {stderr}");
    assert!(start.elapsed() < Duration::from_secs(30), "{args:?} took {:?}", start.elapsed());
}

#[test]
fn generating_a_formula_too_large_to_hold_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.cnf");
    refused(
        &["gen", "sat", "--vars", "2147483647", "--ratio", "4.2", "-o", out.to_str().unwrap()],
        1,
        &["9019431317 clauses", "64 GiB"],
    );
    assert!(!out.exists());
}

#[test]
fn a_header_with_billions_of_variables_is_refused_on_every_target() {
    let dir = tempfile::tempdir().unwrap();
    let cnf = dir.path().join("big.cnf");
    std::fs::write(&cnf, "p cnf 2147483647 1\n2147483647 0\n").unwrap();
    let sol = dir.path().join("x.sol");
    for target in ["reference", "cpu"] {
        refused(
            &["sp", cnf.to_str().unwrap(), "--target", target, "-o", sol.to_str().unwrap()],
            1,
            &["big.cnf", "p cnf 2147483647 1", "64 GiB"],
        );
    }
    assert!(!sol.exists());
}

#[test]
fn ordinary_formulas_still_solve() {
    let dir = tempfile::tempdir().unwrap();
    let cnf = dir.path().join("f.cnf");
    let cnf = cnf.to_str().unwrap();
    let generated = grail(&["gen", "sat", "--vars", "1000", "--ratio", "4.2", "-o", cnf]);
    assert!(generated.status.success(), "{}", String::from_utf8_lossy(&generated.stderr));
    let sol = dir.path().join("f.sol");
    let run = grail(&["sp", cnf, "--target", "cpu", "--verify", "-o", sol.to_str().unwrap()]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
}

#[test]
fn pbf_counts_too_large_to_hold_are_usage_errors() {
    for count in ["18446744073709551615", "100000000000"] {
        refused(&["pbf", "--count", count], 2, &["--count", count, "64 GiB"]);
    }
}
