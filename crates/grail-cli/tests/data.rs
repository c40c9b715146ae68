//! Data is never changed silently: what grail assumes is said, real weights stay real (and are
//! made integers only when asked), 1-based files are read as such when asked and noticed when not.

mod common;

use common::grail;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn assumptions_are_said() {
    let dir = tempfile::tempdir().unwrap();
    let el = dir.path().join("g.el");
    std::fs::write(&el, "0 1\n1 2\n2 0\n3 2\n").unwrap();
    let el = el.to_str().unwrap();
    let sssp = grail(&["run", "sssp", "-g", el]);
    assert!(sssp.status.success());
    assert!(text(&sssp.stderr).contains("no edge weights: sssp takes every edge to weigh 1"), "{}", text(&sssp.stderr));
    let cc = grail(&["run", "cc", "-g", el]);
    assert!(text(&cc.stderr).contains("weakly connected components"), "{}", text(&cc.stderr));
    let road = dir.path().join("road.el");
    let generated = grail(&["gen", "road", "--nodes", "64", "-o", road.to_str().unwrap()]);
    assert!(generated.status.success());
    assert!(text(&generated.stderr).contains("holds no edge weights"), "{}", text(&generated.stderr));
    let capped = grail(&["gen", "road", "--nodes", "64", "--max-weight", "9", "-o", road.to_str().unwrap()]);
    assert_eq!(capped.status.code(), Some(2));
    assert!(text(&capped.stderr).contains("--max-weight does not apply to road graphs"));
}

#[test]
fn real_weights_stay_real_unless_rounding_or_ignoring_is_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let mtx = dir.path().join("w.mtx");
    std::fs::write(&mtx, "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 2 0.3\n2 3 0.2\n1 3 0.9\n").unwrap();
    let mtx = mtx.to_str().unwrap();
    // Real distances on every target, verified: 0 -> 1 -> 2 is 0.3 + 0.2 (as f32s, summed in f64).
    let expected = f64::from(0.3f32) + f64::from(0.2f32);
    for target in ["reference", "cpu"] {
        for variant in if target == "cpu" { vec!["nf", "wl"] } else { vec![] }.into_iter().map(Some).chain([None]) {
            let mut args = vec!["run", "sssp", "-g", mtx, "--target", target, "--verify", "--json"];
            if let Some(variant) = variant {
                args.extend(["--variant", variant]);
            }
            let run = grail(&args);
            assert!(run.status.success(), "{target} {variant:?}: {}", text(&run.stderr));
            let summary: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
            assert_eq!(summary["max_distance"].as_f64(), Some(expected), "{summary}");
        }
    }
    let values = dir.path().join("d.txt");
    assert!(grail(&["run", "sssp", "-g", mtx, "-o", values.to_str().unwrap()]).status.success());
    let lines: Vec<f64> = std::fs::read_to_string(&values).unwrap().lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(lines, vec![0.0, f64::from(0.3f32), expected]);
    let bf = grail(&["run", "sssp", "-g", mtx, "--variant", "bf"]);
    assert_eq!(bf.status.code(), Some(2));
    assert!(text(&bf.stderr).contains("weights are real") && text(&bf.stderr).contains("--variant nf or wl"));
    let mst = grail(&["run", "mst", "-g", mtx, "--verify", "--json"]);
    assert!(mst.status.success(), "{}", text(&mst.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&mst.stdout).unwrap();
    assert!((summary["weight"].as_f64().unwrap() - 0.5).abs() < 1e-6, "{summary}");
    let stats = grail(&["stats", mtx]);
    assert!(text(&stats.stdout).contains("(real)"), "{}", text(&stats.stdout));
    // Written back to formats that hold real weights, refused by those that hold integers.
    let wel = dir.path().join("w.wel");
    assert!(grail(&["convert", mtx, "-o", wel.to_str().unwrap()]).status.success());
    assert_eq!(std::fs::read_to_string(&wel).unwrap(), "0 1 0.3\n0 2 0.9\n1 2 0.2\n");
    let dimacs = grail(&["convert", mtx, "-o", dir.path().join("w.gr").to_str().unwrap()]);
    assert_ne!(dimacs.status.code(), Some(0));
    assert!(text(&dimacs.stderr).contains("weights are real"), "{}", text(&dimacs.stderr));
    let refused = grail(&["run", "sssp", "-g", mtx, "--weights", "refuse"]);
    assert_eq!(refused.status.code(), Some(1));
    let message = text(&refused.stderr);
    assert!(message.contains("line 3") && message.contains("0.3") && message.contains("round (nearest"), "{message}");
    let rounded = grail(&["run", "sssp", "-g", mtx, "--weights", "round", "--verify"]);
    assert!(rounded.status.success(), "{}", text(&rounded.stderr));
    let ignored = grail(&["run", "sssp", "-g", mtx, "--weights", "ignore", "--json"]);
    assert!(ignored.status.success(), "{}", text(&ignored.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&ignored.stdout).unwrap();
    assert_eq!(summary["max_distance"], 1, "{summary}");
    let scaled = grail(&["run", "sssp", "-g", mtx, "--weights", "scale", "--json"]);
    assert!(scaled.status.success(), "{}", text(&scaled.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&scaled.stdout).unwrap();
    // 0.2 is the smallest: 0.3 -> 2 (1.5 rounded), 0.2 -> 1, 0.9 -> 5 (4.5 rounded); node 2 is
    // reached through node 1 at 2 + 1 = 3.
    assert_eq!(summary["max_distance"], 3, "{summary}");
    let bad = grail(&["run", "sssp", "-g", mtx, "--weights", "truncate"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn one_based_edge_lists() {
    let dir = tempfile::tempdir().unwrap();
    let el = dir.path().join("one.el");
    std::fs::write(&el, "1 2\n2 3\n3 1\n").unwrap();
    let el = el.to_str().unwrap();
    let plain = grail(&["stats", el, "--json"]);
    assert!(text(&plain.stderr).contains("--base 1"), "{}", text(&plain.stderr));
    let as_zero: serde_json::Value = serde_json::from_slice(&plain.stdout).unwrap();
    assert_eq!(as_zero["nodes"], 4);
    let based = grail(&["stats", el, "--base", "1", "--json"]);
    assert!(based.status.success());
    assert!(!text(&based.stderr).contains("--base 1"));
    let as_one: serde_json::Value = serde_json::from_slice(&based.stdout).unwrap();
    assert_eq!(as_one["nodes"], 3);
    let levels = grail(&["run", "bfs", "-g", el, "--base", "1", "--verify"]);
    assert!(levels.status.success(), "{}", text(&levels.stderr));
    let zero = dir.path().join("zero.el");
    std::fs::write(&zero, "0 1\n1 2\n").unwrap();
    let wrong = grail(&["stats", zero.to_str().unwrap(), "--base", "1"]);
    assert_eq!(wrong.status.code(), Some(1));
    assert!(text(&wrong.stderr).contains("node 0 appears in edge 0 -> 1"));
    // Formats that number their nodes themselves are not shifted again: a usage error.
    let dimacs = dir.path().join("d.gr");
    std::fs::write(&dimacs, "p sp 3 1\na 2 3 5\n").unwrap();
    let out = dir.path().join("x.wel");
    let refused = grail(&["convert", dimacs.to_str().unwrap(), "--base", "1", "-o", out.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    assert!(text(&refused.stderr).contains("numbers its nodes itself"), "{}", text(&refused.stderr));
    assert!(!out.exists());
}
