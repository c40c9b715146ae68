//! `grail dsssp` as users run it: batches from a file and at random, on the reference and the
//! CPU, verified; the distances written; bad batches and impossible parameters refused.

mod common;

use common::grail;

#[test]
fn batches_from_a_file_and_at_random_are_repaired_and_verified() {
    let dir = tempfile::tempdir().unwrap();
    let graph = dir.path().join("g.wel");
    // 0 -> 1 -> 2 -> 3 by weight 4 each, 0 -> 4 by 1; node 5 unreached.
    std::fs::write(&graph, "0 1 4\n1 2 4\n2 3 4\n0 4 1\n5 0 1\n").unwrap();
    let updates = dir.path().join("u.txt");
    // Batch 1 makes 4 -> 3 a shortcut; batch 2 reaches 5 and lowers nothing else; batch 3 adds
    // a parallel edge that lowers nothing.
    std::fs::write(&updates, "# shortcut\n4 3 1\n4 2\n\n3 5 2\n\n0 1 9\n").unwrap();
    let distances = dir.path().join("d.txt");
    for target in ["reference", "cpu"] {
        let run = grail(&[
            "dsssp",
            "--graph",
            graph.to_str().unwrap(),
            "--updates",
            updates.to_str().unwrap(),
            "--target",
            target,
            "--verify",
            "--json",
            "-o",
            distances.to_str().unwrap(),
        ]);
        assert!(run.status.success(), "{target}: {}", String::from_utf8_lossy(&run.stderr));
        let summary: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
        let batches = summary["batches"].as_array().unwrap();
        assert_eq!(batches.len(), 3);
        let lowered: Vec<u64> = batches.iter().map(|b| b["lowered"].as_u64().unwrap()).collect();
        assert_eq!(lowered, [2, 1, 0], "{target}: {summary}");
        for b in batches {
            for key in ["update_ms", "fresh_ms", "merge_ms", "insert_ms", "update_read_back_ms", "fresh_read_back_ms"] {
                assert!(b[key].as_f64().is_some(), "{key} missing: {b}");
            }
            assert_eq!(b["verified"], true);
        }
        assert_eq!(summary["edges_after"], 9);
        assert_eq!(std::fs::read_to_string(&distances).unwrap(), "0\n4\n2\n2\n1\n4\n", "{target}");
    }
    let random = grail(&[
        "dsssp",
        "--graph",
        graph.to_str().unwrap(),
        "--random-batches",
        "3",
        "--batch-size",
        "50%",
        "--source",
        "max-degree",
        "--verify",
    ]);
    assert!(random.status.success(), "{}", String::from_utf8_lossy(&random.stderr));
    let text = String::from_utf8_lossy(&random.stdout);
    assert!(text.contains("batch 3: 3 edges in") && text.contains("verified"), "{text}");
    let local = grail(&[
        "dsssp",
        "--graph",
        graph.to_str().unwrap(),
        "--random-batches",
        "2",
        "--batch-size",
        "4",
        "--local",
        "--target",
        "reference",
        "--verify",
    ]);
    assert!(local.status.success(), "{}", String::from_utf8_lossy(&local.stderr));
    assert!(String::from_utf8_lossy(&local.stdout).contains("batch 2: 4 edges in"));
}

#[test]
fn bad_batches_and_parameters_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let graph = dir.path().join("g.el");
    std::fs::write(&graph, "0 1\n1 2\n").unwrap();
    let g = graph.to_str().unwrap();
    let updates = dir.path().join("u.txt");
    std::fs::write(&updates, "0 1\n\n2 x 1\n").unwrap();
    let run = grail(&["dsssp", "--graph", g, "--updates", updates.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("u.txt: line 3") && stderr.contains("`x`"), "{stderr}");
    std::fs::write(&updates, "0 7 1\n").unwrap();
    let run = grail(&["dsssp", "--graph", g, "--updates", updates.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&run.stderr).contains("batch 1: inserted edge 1 (0 -> 7)"));
    let out = dir.path().join("d.txt");
    let run = grail(&["dsssp", "--graph", g, "-o", out.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("--random-batches"));
    assert!(!out.exists());
    let run = grail(&["dsssp", "--graph", g, "--random-batches", "1", "--batch-size", "1", "--json", "-o", "-"]);
    assert_eq!(run.status.code(), Some(2));
    let run = grail(&["dsssp", "--graph", g, "--random-batches", "2", "--batch-size", "0"]);
    assert_eq!(run.status.code(), Some(2));
    let run = grail(&["dsssp", "--graph", g, "--source", "9", "--random-batches", "1", "--batch-size", "1"]);
    assert_eq!(run.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&run.stderr).contains("source node"));
}
