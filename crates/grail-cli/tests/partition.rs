//! `grail partition` as users run it.

mod common;

use common::grail;

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn every_method_reports_and_writes_the_partition_file() {
    let dir = tempfile::tempdir().unwrap();
    let graph = dir.path().join("road.gcsr");
    let graph = graph.to_str().unwrap();
    let generated = grail(&["gen", "road", "--nodes", "3000", "-o", graph]);
    assert!(generated.status.success(), "{}", stderr(&generated));
    let loaded = grail_graph::io::read_graph(
        std::path::Path::new(graph),
        &grail_graph::io::ReadOptions::default(),
        &grail_graph::NoProgress,
    )
    .unwrap();
    let mut cuts = std::collections::BTreeMap::new();
    // METIS is loaded at run time: without it (and without GRAIL_REQUIRE_METIS=1) its case is
    // skipped.
    let metis = grail_graph::metis::available();
    assert!(
        metis || std::env::var("GRAIL_REQUIRE_METIS").as_deref() != Ok("1"),
        "GRAIL_REQUIRE_METIS=1 but the system's METIS cannot be loaded"
    );
    let methods = ["metis", "ordered", "degree", "random", "ranges"];
    for method in methods.into_iter().filter(|&m| m != "metis" || metis) {
        let file = dir.path().join(format!("road.part.{method}"));
        let run =
            grail(&["partition", graph, "--parts", "4", "--method", method, "--json", "-o", file.to_str().unwrap()]);
        assert!(run.status.success(), "{method}: {}", stderr(&run));
        let report: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
        assert_eq!(report["method"], method);
        assert_eq!(report["parts"], 4);
        assert_eq!(report["nodes"], 3000);
        let parts = report["per_part"].as_array().unwrap();
        assert_eq!(parts.len(), 4);
        let sum = |key: &str| parts.iter().map(|p| p[key].as_u64().unwrap()).sum::<u64>();
        assert_eq!(sum("nodes"), 3000);
        assert_eq!(sum("edges"), report["edges"].as_u64().unwrap());
        assert_eq!(sum("cut_edges"), report["edge_cut"].as_u64().unwrap());
        assert!(parts.iter().all(|p| p["ghosts"].as_u64().unwrap() <= p["cut_edges"].as_u64().unwrap()));
        for key in ["edge_cut_share", "node_balance", "edge_balance", "partition_ms"] {
            assert!(report[key].as_f64().is_some(), "{key} missing: {report}");
        }
        // The file: line i holds node i's part; its cut, counted here, is the one reported.
        let text = std::fs::read_to_string(&file).unwrap();
        let owner: Vec<u32> = text.lines().map(|l| l.parse().unwrap()).collect();
        assert_eq!(owner.len(), 3000);
        assert!(owner.iter().all(|&p| p < 4));
        let mut cut = 0;
        for u in 0..loaded.num_nodes() {
            cut += loaded.neighbors(u).iter().filter(|&&v| owner[v as usize] != owner[u as usize]).count() as u64;
        }
        assert_eq!(report["edge_cut"].as_u64().unwrap(), cut, "{method}");
        let back = grail_graph::partition::Partitioning::read(&file, 3000, Some(4)).unwrap();
        assert_eq!(back.owner(), owner);
        cuts.insert(method, cut);
    }
    if metis {
        assert!(cuts["metis"] * 4 < cuts["random"], "{cuts:?}");
    }

    // The table names the cut and every part; the same seed gives the same file.
    let run = grail(&["partition", graph, "-k", "3", "-m", "random", "--seed", "9"]);
    assert!(run.status.success(), "{}", stderr(&run));
    let table = String::from_utf8_lossy(&run.stdout);
    for words in ["edge cut", "node balance", "edge balance", "ghosts"] {
        assert!(table.contains(words), "{words} missing:\n{table}");
    }
    assert_eq!(table.lines().filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit())).count(), 3);
    let once = grail(&["partition", graph, "-k", "3", "-m", "random", "--seed", "9", "-o", "-"]);
    let again = grail(&["partition", graph, "-k", "3", "-m", "random", "--seed", "9", "-o", "-", "--threads", "1"]);
    assert!(once.status.success() && again.status.success());
    assert_eq!(once.stdout, again.stdout);
    assert_eq!(String::from_utf8_lossy(&once.stdout).lines().count(), 3000);
    // With the partition on standard output, the report is on standard error.
    assert!(stderr(&once).contains("edge cut"), "{}", stderr(&once));
}

#[test]
fn bad_requests_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let graph = dir.path().join("grid.el");
    let graph = graph.to_str().unwrap();
    assert!(grail(&["gen", "grid", "--rows", "2", "--cols", "3", "-o", graph]).status.success());
    // Usage errors: exit 2.
    let zero = grail(&["partition", graph, "--parts", "0", "--method", "ranges"]);
    assert_eq!(zero.status.code(), Some(2), "{}", stderr(&zero));
    assert!(stderr(&zero).contains("--parts"), "{}", stderr(&zero));
    let unknown = grail(&["partition", graph, "--parts", "2", "--method", "kway"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(stderr(&unknown).contains("unknown partitioning method `kway`"), "{}", stderr(&unknown));
    assert!(stderr(&unknown).contains("metis, ordered, degree, random, ranges"));
    let no_method = grail(&["partition", graph, "--parts", "2"]);
    assert_eq!(no_method.status.code(), Some(2));
    // Errors of input: exit 1, nothing written.
    let out = dir.path().join("parts");
    let missing = dir.path().join("missing.el");
    let run = grail(&["partition", missing.to_str().unwrap(), "-k", "2", "-m", "metis", "-o", out.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(1));
    assert!(stderr(&run).contains("missing.el") && stderr(&run).contains("No such file"), "{}", stderr(&run));
    let many = grail(&["partition", graph, "-k", "7", "-m", "metis", "-o", out.to_str().unwrap()]);
    assert_eq!(many.status.code(), Some(1));
    assert!(stderr(&many).contains("6 nodes into 7 parts"), "{}", stderr(&many));
    assert!(!out.exists());
    let unwritable = grail(&["partition", graph, "-k", "2", "-m", "ranges", "-o", "/nonexistent-grail-dir/p"]);
    assert_eq!(unwritable.status.code(), Some(1));
    assert!(stderr(&unwritable).contains("cannot write the partition file"), "{}", stderr(&unwritable));
}

/// `grail run --partition-file`: parts written once (`grail partition -o`, or METIS's own
/// tools) split a later run as they are; a file that does not fit the graph or the devices is
/// refused with the line or the part at fault.
#[test]
fn a_run_takes_its_parts_from_a_partition_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let graph = path("road.gcsr");
    assert!(grail(&["gen", "road", "--nodes", "3000", "-o", &graph]).status.success());
    let parts = path("road.part.2");
    let split = grail(&["partition", &graph, "-k", "2", "-m", "random", "-o", &parts]);
    assert!(split.status.success(), "{}", stderr(&split));
    for algorithm in ["bfs", "sssp", "cc"] {
        let run = grail(&[
            "run",
            algorithm,
            "-g",
            &graph,
            "--devices",
            "cpu*2",
            "--partition-file",
            &parts,
            "--verify",
            "--json",
        ]);
        assert!(run.status.success(), "{algorithm}: {}", stderr(&run));
        let report: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
        assert_eq!(report["verified"], true, "{report}");
        assert_eq!(report["multi"]["partition"], "file");
        assert_eq!(report["multi"]["partition_file"], parts.as_str());
        // The random split's cut, not the ordered one's of a road network (well under 1%).
        assert!(report["multi"]["edge_cut"].as_f64().unwrap() > 0.3, "{report}");
    }

    let text = std::fs::read_to_string(&parts).unwrap();
    let refused = |name: &str, contents: &str, devices: &str| {
        let file = path(name);
        std::fs::write(&file, contents).unwrap();
        let run = grail(&["run", "bfs", "-g", &graph, "--devices", devices, "--partition-file", &file]);
        assert!(!run.status.success(), "{name} was accepted");
        stderr(&run)
    };
    let message = refused("three.part", &text, "cpu*3");
    assert!(message.contains("part 2 has no nodes"), "{message}");
    let message = refused("short.part", &text[..text.len() / 2], "cpu*2");
    assert!(message.contains("there must be one per node"), "{message}");
    let message = refused("word.part", &text.replacen('\n', "\nx\n", 1), "cpu*2");
    assert!(message.contains("line 2") && message.contains("expected a part number"), "{message}");
    let message = refused("big.part", &text.replacen("0\n", "7\n", 1), "cpu*2");
    assert!(message.contains("part 7, but there are only 2 parts"), "{message}");
    let both = grail(&[
        "run",
        "bfs",
        "-g",
        &graph,
        "--devices",
        "cpu*2",
        "--partition",
        "ordered",
        "--partition-file",
        &parts,
    ]);
    assert!(!both.status.success());
}
