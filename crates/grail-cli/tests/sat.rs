//! `grail gen sat` and `grail sp` as users run them.

mod common;

use common::grail;

#[test]
fn generated_formulas_are_solved_verified_and_failures_exit_4() {
    let dir = tempfile::tempdir().unwrap();
    let cnf = dir.path().join("f.cnf");
    let cnf = cnf.to_str().unwrap();
    let generated = grail(&["gen", "sat", "--vars", "2000", "--ratio", "3.8", "--seed", "5", "-o", cnf]);
    assert!(generated.status.success(), "{}", String::from_utf8_lossy(&generated.stderr));
    let text = std::fs::read_to_string(cnf).unwrap();
    assert!(text.lines().any(|l| l == "p cnf 2000 7600"), "header missing");
    // Solved, the assignment verified here and by the command.
    let solution = dir.path().join("f.sol");
    let run = grail(&["sp", cnf, "--verify", "--json", "-o", solution.to_str().unwrap()]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    for key in ["satisfied", "vars_fixed_by_sp", "time_ms"] {
        assert!(!summary[key].is_null(), "{key} missing: {summary}");
    }
    assert_eq!(summary["satisfied"], true);
    assert_eq!(summary["verified"], true);
    let formula = grail_sat::read_cnf(std::path::Path::new(cnf)).unwrap();
    let assignment = grail_sat::read_solution(&solution, formula.num_vars()).unwrap();
    assert!(grail_sat::check(&formula, &assignment).is_satisfied());
    // The grail program ran (the default target, cpu); the reference solves it too.
    assert_eq!(summary["target"], "cpu");
    assert!(summary["program_ms"].as_f64().is_some(), "{summary}");
    let reference = grail(&["sp", cnf, "--target", "reference", "--verify", "--json"]);
    assert!(reference.status.success(), "{}", String::from_utf8_lossy(&reference.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&reference.stdout).unwrap();
    assert_eq!((summary["target"].as_str(), summary["verified"].as_bool()), (Some("reference"), Some(true)));
    // The program's own local search, and what the surveys left written out: the assignment
    // satisfies it too.
    let rest = dir.path().join("rest.cnf");
    let sol = dir.path().join("searched.sol");
    let sol_arg = sol.to_str().unwrap();
    let run =
        grail(&["sp", cnf, "--search-rounds", "100000", "--rest", rest.to_str().unwrap(), "--json", "-o", sol_arg]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert!(summary["search_rounds"].as_u64().is_some_and(|r| r > 0), "{summary}");
    assert!(summary["kernels"].as_array().is_some_and(|k| k.iter().any(|k| k["name"] == "update")), "{summary}");
    let left = grail_sat::read_cnf(&rest).unwrap();
    assert_eq!(Some(left.num_clauses() as u64), summary["walksat_clauses"].as_u64());
    let searched = grail_sat::read_solution(&sol, formula.num_vars()).unwrap();
    assert!(left.num_clauses() > 0 && grail_sat::check(&left, &searched).is_satisfied());
    let bad = grail(&["sp", cnf, "--search-rounds", "-3"]);
    assert_eq!(bad.status.code(), Some(2), "{}", String::from_utf8_lossy(&bad.stderr));
    let reference = grail(&["sp", cnf, "--target", "reference", "--rest", rest.to_str().unwrap()]);
    assert_eq!(reference.status.code(), Some(2), "{}", String::from_utf8_lossy(&reference.stderr));
    assert!(String::from_utf8_lossy(&reference.stderr).contains("not the reference's"));
    // Far past the threshold there is no assignment: exit 4, and no assignment file.
    let over = dir.path().join("u.cnf");
    let over = over.to_str().unwrap();
    assert!(grail(&["gen", "sat", "--vars", "6", "--ratio", "60", "-o", over]).status.success());
    let none = dir.path().join("u.sol");
    let failed = grail(&["sp", over, "-o", none.to_str().unwrap()]);
    assert_eq!(failed.status.code(), Some(4), "{}", String::from_utf8_lossy(&failed.stderr));
    assert!(String::from_utf8_lossy(&failed.stderr).contains("no satisfying assignment found"));
    assert!(!none.exists());
}

/// Where the surveys are trivial the local search does everything. WalkSAT's noise is chosen by
/// the clause length (random 5-SAT at ratio 16 is out of reach at 3-SAT's 0.5); probSAT, the
/// default, has no noise to choose, and --noise with it is a usage error.
#[test]
fn walksat_noise_follows_the_clause_length() {
    let dir = tempfile::tempdir().unwrap();
    let cnf = dir.path().join("k5.cnf");
    let cnf = cnf.to_str().unwrap();
    assert!(
        grail(&["gen", "sat", "--vars", "3000", "--ratio", "16", "--k", "5", "--seed", "2", "-o", cnf])
            .status
            .success()
    );
    let run = grail(&["sp", cnf, "--verify", "--json", "--local-search", "walksat"]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!((summary["walksat_noise"].as_f64(), summary["verified"].as_bool()), (Some(0.3), Some(true)));
    let forced =
        grail(&["sp", cnf, "--local-search", "walksat", "--noise", "0.5", "--walksat-flips", "200000", "--json"]);
    assert_eq!(forced.status.code(), Some(4), "{}", String::from_utf8_lossy(&forced.stdout));
    let run = grail(&["sp", cnf, "--verify", "--json", "--walksat-flips", "200000"]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!((summary["local_search"].as_str(), summary["verified"].as_bool()), (Some("probsat"), Some(true)));
    let noisy = grail(&["sp", cnf, "--noise", "0.4"]);
    assert_eq!(noisy.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&noisy.stderr).contains("--noise is WalkSAT's"));
}

#[test]
fn an_empty_clause_is_reported_as_unsatisfiable_and_the_assignment_keeps_stdout_to_itself() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.cnf");
    std::fs::write(&empty, "p cnf 2 2\n1 2 0\n0\n").unwrap();
    let run = grail(&["sp", empty.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&run.stderr).contains("empty clause, so it is unsatisfiable"));
    let free = dir.path().join("free.cnf");
    std::fs::write(&free, "p cnf 3 0\n").unwrap();
    let run = grail(&["sp", free.to_str().unwrap(), "-o", "-"]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    assert_eq!(String::from_utf8_lossy(&run.stdout).trim(), "v -1 -2 -3 0");
}

#[test]
fn malformed_formulas_and_impossible_parameters_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.cnf");
    std::fs::write(&bad, "c a comment\np cnf 3 2\n1 -2 0\n2 4 0\n").unwrap();
    let run = grail(&["sp", bad.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("bad.cnf:4:") && stderr.contains("variable 4"), "{stderr}");
    let out = dir.path().join("x.cnf");
    let run = grail(&["gen", "sat", "--vars", "10", "--ratio", "4", "--k", "9", "-o", out.to_str().unwrap()]);
    assert!(!run.status.success());
    assert!(String::from_utf8_lossy(&run.stderr).contains("3 to 6"));
    for (flag, value, says) in
        [("--fix-fraction", "0", "fix fraction"), ("--noise", "1.5", "noise"), ("--max-sweeps", "0", "iteration")]
    {
        let run = grail(&["sp", bad.to_str().unwrap(), flag, value]);
        assert_eq!(run.status.code(), Some(2), "{flag} {value}");
        assert!(
            String::from_utf8_lossy(&run.stderr).contains(says),
            "{flag}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
    }
    let run = grail(&["sp", bad.to_str().unwrap(), "--target", "reference", "--clause-order", "variable"]);
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("--clause-order"));
    assert!(!out.exists());
}
