//! The `grail` command as users run it: the documented contract, and every error path.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// Runs grail with a module cache of the test build's own, so tests never touch the user's.
fn grail(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_grail"))
        .args(args)
        .arg("--quiet")
        .env("GRAIL_CACHE_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("grail-cache"))
        .output()
        .expect("grail runs")
}

fn ok(args: &[&str]) -> String {
    let out = grail(args);
    assert!(out.status.success(), "grail {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn json(args: &[&str]) -> Value {
    serde_json::from_str(&ok(args)).expect("valid JSON")
}

/// Runs a command that must fail; returns (exit code, stderr).
fn fails(args: &[&str]) -> (i32, String) {
    let out = grail(args);
    assert!(!out.status.success(), "grail {args:?} should have failed");
    (out.status.code().unwrap(), String::from_utf8(out.stderr).unwrap())
}

fn path(dir: &Path, name: &str) -> String {
    dir.join(name).to_str().unwrap().to_string()
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    files
}

#[test]
fn stats_json_has_the_documented_fields() {
    let dir = tempfile::tempdir().unwrap();
    let file = path(dir.path(), "g.gcsr");
    ok(&["gen", "rmat", "--scale", "8", "--max-weight", "9", "-o", &file]);
    let stats = json(&["stats", &file, "--json"]);
    assert_eq!(stats["nodes"], 256);
    assert!(stats["edges"].as_u64().unwrap() > 1000);
    assert!(stats["max_out_degree"].as_u64().unwrap() > 16);
    assert_eq!(stats["self_loops"], 0);
    assert_eq!(stats["weighted"], true);
}

#[test]
fn every_algorithm_verifies_on_every_generator() {
    let dir = tempfile::tempdir().unwrap();
    let graphs = [
        ("rmat.gr", vec!["rmat", "--scale", "9", "--max-weight", "100"]),
        ("random.wel", vec!["random", "--nodes", "700", "--degree", "3", "--max-weight", "50", "--undirected"]),
        ("grid.mtx", vec!["grid", "--rows", "20", "--cols", "30"]),
        ("road.graph", vec!["road", "--nodes", "900"]),
    ];
    for (name, gen_args) in graphs {
        let file = path(dir.path(), name);
        let mut args = vec!["gen"];
        args.extend(gen_args);
        args.extend(["-o", &file]);
        ok(&args);
        for (algorithm, target) in
            ["bfs", "sssp", "cc", "pr", "tri", "mis", "mst"].into_iter().flat_map(|a| [(a, "reference"), (a, "cpu")])
        {
            let summary = json(&["run", algorithm, "--graph", &file, "--verify", "--json", "--target", target]);
            assert_eq!(summary["algorithm"], algorithm);
            assert_eq!(summary["target"], target);
            assert_eq!(summary["verified"], true, "{algorithm} on {name}");
            assert!(summary["time_ms"].as_f64().unwrap() >= 0.0);
            let headline = match algorithm {
                "bfs" => "max_level",
                "sssp" => "reached",
                "cc" => "components",
                "pr" => "iterations",
                "tri" => "triangles",
                "mis" => "size",
                _ => "weight",
            };
            assert!(summary.get(headline).is_some(), "{algorithm} summary lacks {headline}: {summary}");
        }
    }
}

#[test]
fn output_files_hold_one_value_per_node() {
    let dir = tempfile::tempdir().unwrap();
    let graph = path(dir.path(), "g.gr");
    // Node 3 (file id 4) cannot be reached from node 0.
    std::fs::write(&graph, "c tiny\np sp 4 3\na 1 2 5\na 2 3 7\na 4 1 1\n").unwrap();
    let levels = path(dir.path(), "levels.txt");
    let summary = json(&["run", "bfs", "--graph", &graph, "--source", "0", "--json", "--output", &levels]);
    assert_eq!((summary["reached"].as_u64(), summary["max_level"].as_u64()), (Some(3), Some(2)));
    assert_eq!(std::fs::read_to_string(&levels).unwrap(), "0\n1\n2\ninf\n");
    let distances = path(dir.path(), "dist.txt");
    ok(&["run", "sssp", "--graph", &graph, "--output", &distances, "--verify"]);
    assert_eq!(std::fs::read_to_string(&distances).unwrap(), "0\n5\n12\ninf\n");
    let forest = path(dir.path(), "forest.txt");
    let summary = json(&["run", "mst", "--graph", &graph, "--json", "--output", &forest, "--verify"]);
    assert_eq!((summary["weight"].as_u64(), summary["edges"].as_u64()), (Some(13), Some(3)));
    assert_eq!(std::fs::read_to_string(&forest).unwrap().lines().count(), 3);
}

#[test]
fn convert_between_formats_keeps_the_graph() {
    let dir = tempfile::tempdir().unwrap();
    let source = path(dir.path(), "road.gr");
    ok(&["gen", "road", "--nodes", "500", "-o", &source]);
    let before = json(&["stats", &source, "--json"]);
    let mut previous = source.clone();
    for name in ["road.mtx", "road.wel", "road.galois.gr", "road.graph", "road.gcsr", "road.mtx.gz", "road2.gr"] {
        let next = path(dir.path(), name);
        let mut args = vec!["convert", previous.as_str(), "-o", next.as_str()];
        if name.ends_with("galois.gr") {
            args.extend(["--to", "galois"]);
        }
        ok(&args);
        let after = json(&["stats", &next, "--json"]);
        for key in ["nodes", "edges", "max_out_degree", "weighted", "symmetric", "min_weight", "max_weight"] {
            assert_eq!(before[key], after[key], "{key} changed converting to {name}");
        }
        previous = next;
    }
    assert_eq!(std::fs::read(&source).unwrap(), std::fs::read(&previous).unwrap(), "DIMACS round trip is exact");
}

#[test]
fn convert_cleans_and_reorders() {
    let dir = tempfile::tempdir().unwrap();
    let input = path(dir.path(), "g.el");
    std::fs::write(&input, "0 1\n0 1\n1 1\n2 0\n").unwrap();
    let output = path(dir.path(), "clean.el");
    ok(&["convert", &input, "-o", &output, "--symmetrize", "--dedup", "--no-self-loops"]);
    let stats = json(&["stats", &output, "--json"]);
    assert_eq!((stats["edges"].as_u64(), stats["symmetric"].as_bool()), (Some(4), Some(true)));
    let reordered = path(dir.path(), "degree.el");
    ok(&["convert", &output, "-o", &reordered, "--reorder", "degree"]);
    assert_eq!(std::fs::read_to_string(&reordered).unwrap().lines().next(), Some("0 1"));
}

#[test]
fn convert_writes_prepared_gcsr_files() {
    let dir = tempfile::tempdir().unwrap();
    let directed = path(dir.path(), "directed.el");
    std::fs::write(&directed, "0 1\n1 2\n2 0\n0 2\n3 1\n").unwrap();
    let prepared = path(dir.path(), "prepared.gcsr");
    ok(&["convert", &directed, "-o", &prepared, "--with-reverse"]);
    let bytes = std::fs::read(&prepared).unwrap();
    // Version 2; sorted, no self-loops, no duplicates, reverse CSR stored.
    assert_eq!(&bytes[8..16], &[2, 0, 0, 0, 0x2e, 0, 0, 0]);
    let with_ids = path(dir.path(), "ids.gcsr");
    ok(&["convert", &prepared, "-o", &with_ids, "--with-in-edge-ids"]);
    assert_eq!(std::fs::read(&with_ids).unwrap()[12], 0x6e);
    // Prepared or not, every algorithm gives the same result.
    for algorithm in ["bfs", "pr", "cc", "tri", "mis"] {
        let results: Vec<String> = [&directed, &prepared]
            .iter()
            .map(|graph| {
                let out = path(dir.path(), &format!("{algorithm}.out"));
                ok(&["run", algorithm, "--graph", graph, "--source", "0", "--verify", "--threads", "1", "-o", &out]);
                std::fs::read_to_string(&out).unwrap()
            })
            .collect();
        assert_eq!(results[0], results[1], "{algorithm}");
    }
    // Only .gcsr stores a reverse CSR.
    let (code, stderr) = fails(&["convert", &directed, "-o", &path(dir.path(), "out.mtx"), "--with-reverse"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--with-reverse needs a .gcsr output"), "{stderr}");
}

#[test]
fn bench_prep_reports_every_step() {
    let rows = json(&["bench", "prep", "--graphs", "kron:8,road:8", "--repeat", "1", "--json"]);
    let rows = rows.as_array().unwrap();
    // kron directed and symmetric, road symmetric.
    assert_eq!(rows.len(), 3);
    for key in ["load_ms", "scan_ms", "simple_ms", "degree_ms", "reverse_ms", "first_pull_v2_ms"] {
        assert!(rows.iter().all(|row| row[key].as_f64().is_some_and(|ms| ms >= 0.0)), "{key}");
    }
}

#[test]
fn malformed_input_names_file_and_line_and_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let bad = path(dir.path(), "bad.gr");
    std::fs::write(&bad, "p sp 3 2\na 1 2 4\na 1 x 4\n").unwrap();
    let out = path(dir.path(), "out.gcsr");
    let (code, stderr) = fails(&["convert", &bad, "-o", &out]);
    assert_eq!(code, 1);
    assert!(stderr.contains("bad.gr") && stderr.contains("line 3"), "{stderr}");
    assert_eq!(files_in(dir.path()), vec![PathBuf::from(&bad)], "no output or temporary file may remain");

    let (code, stderr) = fails(&["run", "bfs", "--graph", &bad]);
    assert_eq!(code, 1);
    assert!(stderr.contains("line 3"), "{stderr}");
}

#[test]
fn run_takes_the_node_of_most_out_edges_as_its_source() {
    let dir = tempfile::tempdir().unwrap();
    let graph = path(dir.path(), "g.el");
    // Node 2 has the most out-edges (three), node 0 reaches nothing.
    std::fs::write(&graph, "1 0\n2 0\n2 1\n2 3\n3 1\n").unwrap();
    for program in ["bfs", "sssp"] {
        let summary = json(&["run", program, "--graph", &graph, "--source", "max-degree", "--verify", "--json"]);
        assert_eq!(summary["source"], 2, "{summary}");
        assert_eq!(summary["verified"], true, "{summary}");
    }
    let (code, stderr) = fails(&["run", "bfs", "--graph", &graph, "--source", "most"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("expected a node id or `max-degree`"), "{stderr}");
}

#[test]
fn impossible_parameters_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let graph = path(dir.path(), "g.el");
    std::fs::write(&graph, "0 1\n1 2\n").unwrap();
    let (code, stderr) = fails(&["run", "bfs", "--graph", &graph, "--source", "3"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("source node 3 is out of range"), "{stderr}");
    let (code, stderr) = fails(&["run", "bfs", "--graph", &path(dir.path(), "missing.el")]);
    assert_eq!(code, 1);
    assert!(stderr.contains("missing.el"), "{stderr}");
    let (code, stderr) = fails(&["run", "bfs", "--graph", &graph, "--target", "tpu"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("unknown target 'tpu' (expected: reference, cpu, gpu)"), "{stderr}");
    let (code, stderr) = fails(&["run", "bfs", "--graph", &graph, "--device", "1"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--device chooses the GPU of --target gpu"), "{stderr}");
    // Without a driver (CI) the driver is named; with one, the missing device.
    let (code, stderr) = fails(&["run", "bfs", "--graph", &graph, "--target", "gpu", "--device", "99"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("no NVIDIA driver") || stderr.contains("device 99 requested"), "{stderr}");
    let (code, stderr) = fails(&["run", "nosuch", "--graph", &graph]);
    assert_eq!(code, 2);
    assert!(stderr.contains("unknown algorithm 'nosuch'"), "{stderr}");
    let (code, stderr) = fails(&["run", "bfs", "--graph", &graph, "--variant", "sideways"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("bfs has no variant 'sideways' (expected one of: do, wl, async)"), "{stderr}");
    let (code, stderr) = fails(&["run", "sssp", "--graph", &graph, "--param", "nosuch=1"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("no parameter `nosuch`"), "{stderr}");
    let (code, stderr) = fails(&["run", "sssp", "--graph", &graph, "--param", "delta=-3"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--param delta=-3: expected a value of type u64"), "{stderr}");
    let (code, stderr) = fails(&["gen", "rmat", "--scale", "40", "-o", &path(dir.path(), "x.el")]);
    assert_eq!(code, 1);
    assert!(stderr.contains("scale"), "{stderr}");
    let (code, stderr) = fails(&["gen", "grid", "--rows", "4", "-o", &path(dir.path(), "x.unknown")]);
    assert_eq!(code, 1);
    assert!(stderr.contains("--format"), "{stderr}");
    assert!(!dir.path().join("x.el").exists() && !dir.path().join("x.unknown").exists());
}

#[test]
fn demo_runs_and_verifies_everything() {
    for target in ["cpu", "reference"] {
        let records = json(&["demo", "--scale", "8", "--json", "--target", target]);
        let records = records.as_array().unwrap();
        // Seven suite algorithms on four graphs, then the four morph algorithms, then (generated
        // targets) four algorithms over two CPU devices.
        let several = if target == "cpu" { 4 } else { 0 };
        assert_eq!(records.len(), 4 * 7 + 4 + several);
        assert!(records.iter().all(|r| r["verified"] == true && r["target"] == target));
        let morph: Vec<&str> = records[28..32].iter().map(|r| r["algorithm"].as_str().unwrap()).collect();
        assert_eq!(morph, ["dmr", "sp", "pta", "dsssp"]);
        assert!(records[32..].iter().all(|r| r["devices"] == "cpu,cpu"));
    }
}

#[test]
fn cpu_runs_every_variant_with_stats_and_output_files() {
    let dir = tempfile::tempdir().unwrap();
    let graph = path(dir.path(), "g.gr");
    std::fs::write(&graph, "c tiny\np sp 5 4\na 1 2 5\na 2 3 7\na 4 1 1\na 3 1 2\n").unwrap();
    for (algorithm, variant) in [("bfs", "wl"), ("bfs", "do"), ("sssp", "nf"), ("sssp", "wl"), ("sssp", "bf")] {
        let out = path(dir.path(), &format!("{algorithm}-{variant}.txt"));
        let summary = json(&[
            "run",
            algorithm,
            "--graph",
            &graph,
            "--variant",
            variant,
            "--verify",
            "--stats",
            "--json",
            "-o",
            &out,
        ]);
        assert_eq!(summary["variant"], variant);
        let kernels = summary["stats"]["kernels"].as_array().unwrap();
        assert!(kernels.iter().any(|k| k["invocations"].as_u64().unwrap() > 0), "{summary}");
        let expected = if algorithm == "bfs" { "0\n1\n2\ninf\ninf\n" } else { "0\n5\n12\ninf\ninf\n" };
        assert_eq!(std::fs::read_to_string(&out).unwrap(), expected, "{algorithm} {variant}");
    }
    let text = ok(&["run", "pr", "--graph", &graph, "--variant", "residual", "--verify", "--stats"]);
    assert!(text.contains("verified  ok") && text.contains("invocations"), "{text}");
    let variants = ok(&["run", "sssp", "--graph", &graph, "--variant", "help"]);
    assert!(variants.contains("nf") && variants.contains("sssp_bf"), "{variants}");
}

#[test]
fn user_programs_run_with_params() {
    let dir = tempfile::tempdir().unwrap();
    let graph = path(dir.path(), "g.el");
    std::fs::write(&graph, "0 1\n1 2\n2 0\n3 3\n").unwrap();
    let program = path(dir.path(), "hops.grail");
    std::fs::write(
        &program,
        "graph { node hops: u32 = INF; }\nparam source: Node;\nparam limit: u32;\noutput hops;\n\
         kernel step(next: u32) { forall u in worklist { for v in u.neighbors() {\n\
             if v.hops == INF { v.hops = next; push(v); } } } }\n\
         fn main() -> u32 { source.hops = 0; let mut next: u32 = 1;\n\
             iterate step(next) initial [source] { next += 1; }\n\
             print(\"levels\", min(next - 2, limit)); return min(next - 2, limit); }\n",
    )
    .unwrap();
    let out = path(dir.path(), "hops.txt");
    let text = ok(&["run", &program, "--graph", &graph, "--source", "1", "--param", "limit=10", "-o", &out]);
    assert!(text.contains("levels 2") && text.contains("result    2"), "{text}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "2\n0\n1\ninf\n");
    let (code, stderr) = fails(&["run", &program, "--graph", &graph, "--source", "1"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("limit"), "{stderr}");
    let (code, stderr) = fails(&["run", &program, "--graph", &graph, "--source", "9", "--param", "limit=1"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("source") && stderr.contains('9'), "{stderr}");
    let (code, stderr) = fails(&["run", &program, "--graph", &graph, "--param", "limit=1", "--param", "source=x"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--param source=x"), "{stderr}");
}

#[test]
fn kernel_faults_name_the_kernel_and_exit_70() {
    let dir = tempfile::tempdir().unwrap();
    let graph = path(dir.path(), "g.el");
    std::fs::write(&graph, "0 1\n1 2\n2 0\n").unwrap();
    let program = path(dir.path(), "fault.grail");
    std::fs::write(
        &program,
        "graph { node level: u32; }\nparam far: u32 = 4000000000;\nparam d: i32 = 0;\nparam which: u32 = 0;\n\
         kernel poke() { forall u in G.nodes() { let v = far as Node; v.level = 1; } }\n\
         kernel divide() -> sum i32 { forall u in G.nodes() { reduce 7 / d; } }\n\
         kernel past() { forall u in G.nodes() { let mut a: [u32; 4]; a[which + 2] = 1; u.level = a[0]; } }\n\
         fn main() { if which == 0 { invoke poke(); } else if which == 1 { let x = invoke divide(); } else { invoke past(); } }\n",
    )
    .unwrap();
    let (code, stderr) = fails(&["run", &program, "--graph", &graph]);
    assert_eq!(code, 70, "{stderr}");
    assert!(stderr.contains("kernel `poke` stopped on an invalid memory access"), "{stderr}");
    let (code, stderr) = fails(&["run", &program, "--graph", &graph, "--param", "which=1"]);
    assert_eq!(code, 70, "{stderr}");
    assert!(stderr.contains("kernel `divide` stopped on an arithmetic fault"), "{stderr}");
    // An array index past the end: a trap, reported once however many threads hit it.
    let (code, stderr) = fails(&["run", &program, "--graph", &graph, "--param", "which=2"]);
    assert_eq!(code, 70, "{stderr}");
    assert_eq!(
        stderr.matches("kernel `past` stopped on a trap: an array index past the array's end").count(),
        1,
        "{stderr}"
    );
}

#[test]
fn collections_are_written_one_line_per_element() {
    let dir = tempfile::tempdir().unwrap();
    let graph = path(dir.path(), "g.el");
    std::fs::write(&graph, "0 1\n1 2\n2 0\n2 3\n").unwrap();
    let program = path(dir.path(), "pairs.grail");
    std::fs::write(
        &program,
        "struct Pair { a: Node, b: Node, w: f64 }\ngraph { collection pairs: Pair; node seen: u32; }\n\
         output seen;\noutput pairs;\n\
         kernel list() { forall e in G.edges() { G.pairs.add(Pair { a: e.src, b: e.dst, w: 0.5 }); } }\n\
         kernel mark() { forall p in G.pairs { atomic_add(p.b.seen, 1); } }\n\
         fn main() -> u32 { invoke list(); invoke mark(); return G.pairs.len(); }\n",
    )
    .unwrap();
    let out = path(dir.path(), "out.txt");
    let text = ok(&["run", &program, "--graph", &graph, "-o", &out]);
    assert!(text.contains("result    4"), "{text}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "1\n1\n1\n1\n");
    let mut pairs: Vec<String> =
        std::fs::read_to_string(format!("{out}.pairs")).unwrap().lines().map(str::to_string).collect();
    pairs.sort();
    assert_eq!(pairs, ["0 1 0.5", "1 2 0.5", "2 0 0.5", "2 3 0.5"]);
}

#[test]
fn devices_without_a_gpu_say_what_is_missing() {
    // CI and development machines have no GPU: `grail devices` must say what it needs.
    let out = grail(&["devices"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        assert!(String::from_utf8_lossy(&out.stdout).contains("self-test passed"));
    } else {
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains("NVIDIA driver") || stderr.contains("NVRTC") || stderr.contains("GPU"), "{stderr}");
    }
}

/// Runs grail with the tuning database at `db` (and the tests' module cache).
fn grail_db(db: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_grail"))
        .args(args)
        .arg("--quiet")
        .env("GRAIL_CACHE_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("grail-cache"))
        .env("GRAIL_TUNING_DB", db)
        .output()
        .expect("grail runs")
}

fn json_db(db: &Path, args: &[&str]) -> Value {
    let out = grail_db(db, args);
    assert!(out.status.success(), "grail {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}

#[test]
fn tune_records_a_winner_that_run_then_uses() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tuning.json");
    let graph = path(dir.path(), "g.gr");
    ok(&["gen", "rmat", "--scale", "8", "--max-weight", "9", "-o", &graph]);

    // Before tuning: the default, and no class computed.
    let before = json_db(&db, &["run", "bfs", "--graph", &graph, "--json"]);
    assert_eq!(before["opt_source"], "default");
    assert!(before.get("input_class").is_none());

    let tuned = json_db(&db, &["tune", "bfs", "--graph", &graph, "--budget", "20", "--repeat", "1", "--json"]);
    assert_eq!(tuned["recorded"], true);
    assert_eq!(tuned["program"], "bfs_do");
    assert_eq!(tuned["target"], "cpu");
    let candidates = tuned["candidates"].as_array().unwrap();
    assert_eq!(candidates[0]["label"], "none");
    assert_eq!(candidates[0]["status"], "measured");
    assert!(candidates.iter().any(|c| c["label"] == "all"), "{tuned}");
    let winner = tuned["winner"]["opt"].as_str().unwrap().to_string();
    let class = tuned["class"].as_str().unwrap().to_string();
    assert!(class.starts_with("size=XS,skew="), "{class}");
    let keys: Vec<&str> =
        tuned["space"]["keys"].as_array().unwrap().iter().map(|k| k["key"].as_str().unwrap()).collect();
    assert!(keys.contains(&"np") && !keys.contains(&"block"), "{keys:?}");
    let text = std::fs::read_to_string(&db).unwrap();
    assert!(text.contains(&format!("\"opt\": \"{winner}\"")), "{text}");

    // `grail run` now uses it, and says so; --opt overrides it.
    let after = json_db(&db, &["run", "bfs", "--graph", &graph, "--json", "--verify"]);
    assert_eq!(after["opt"], winner.as_str());
    assert_eq!(after["opt_source"], format!("tuned for class {class}"));
    assert_eq!(after["input_class"], class.as_str());
    assert_eq!(after["verified"], true);
    let human = String::from_utf8(grail_db(&db, &["run", "bfs", "--graph", &graph]).stdout).unwrap();
    assert!(human.contains(&format!("(tuned for class {class} on 20")), "{human}");
    let given = json_db(&db, &["run", "bfs", "--graph", &graph, "--json", "--opt", "none"]);
    assert_eq!(given["opt_source"], "given");
    // Another variant is another program: not tuned.
    let other = json_db(&db, &["run", "bfs", "--variant", "wl", "--graph", &graph, "--json"]);
    assert_eq!(other["opt_source"], "default");

    // A program file (here the traversal microbenchmark, by its suite name) is tuned against
    // its own unoptimized outputs, and `grail run` finds its entry too.
    let traverse = json_db(&db, &["tune", "traverse", "--graph", &graph, "--budget", "20", "--repeat", "2", "--json"]);
    assert_eq!(traverse["recorded"], true);
    let run = json_db(&db, &["run", "traverse", "--graph", &graph, "--json"]);
    assert!(run["opt_source"].as_str().unwrap().starts_with("tuned for class"), "{run}");
    assert_eq!(run["opt"], traverse["winner"]["opt"]);

    // --dry-run measures but records nothing.
    let before = std::fs::read_to_string(&db).unwrap();
    let out = grail_db(&db, &["tune", "cc", "--graph", &graph, "--budget", "5", "--repeat", "1", "--dry-run"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("winner") && text.contains("recorded  nothing"), "{text}");
    assert_eq!(std::fs::read_to_string(&db).unwrap(), before);
}

#[test]
fn tune_rejects_bad_input_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tuning.json");
    let graph = path(dir.path(), "g.el");
    std::fs::write(&graph, "0 1\n1 2\n2 0\n").unwrap();
    let fail = |args: &[&str]| {
        let out = grail_db(&db, args);
        assert!(!out.status.success(), "grail {args:?} should have failed");
        (out.status.code().unwrap(), String::from_utf8(out.stderr).unwrap())
    };
    for budget in ["-1", "0", "abc", "nan", "inf"] {
        let (code, stderr) = fail(&["tune", "bfs", "--graph", &graph, "--budget", budget]);
        assert_eq!(code, 2, "{budget}: {stderr}");
        assert!(stderr.contains("--budget"), "{stderr}");
    }
    let (code, stderr) = fail(&["tune", "bogus", "--graph", &graph]);
    assert_eq!(code, 2);
    assert!(stderr.contains("unknown algorithm 'bogus'"), "{stderr}");
    let (code, stderr) = fail(&["tune", "bfs", "--graph", &path(dir.path(), "missing.gr")]);
    assert_eq!(code, 1);
    assert!(stderr.contains("missing.gr"), "{stderr}");
    let (code, stderr) = fail(&["tune", "bfs", "--graph", &graph, "--target", "reference"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--target cpu or gpu"), "{stderr}");
    let (code, stderr) = fail(&["tune", "bfs", "--graph", &graph, "--variant", "nope"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("no variant 'nope'"), "{stderr}");
    let (code, _) = fail(&["tune", "bfs", "--graph", &graph, "--source", "99"]);
    assert_eq!(code, 1);
    let (code, _) = fail(&["tune", "bfs", "--graph", &graph, "--repeat", "0"]);
    assert_eq!(code, 2);
    assert!(!db.exists(), "nothing recorded by failed runs");

    // A corrupt database: tune refuses to overwrite it, run warns and uses the default.
    std::fs::write(&db, "{\"version\": 1, \"entries\": [oops]}").unwrap();
    let (code, stderr) = fail(&["tune", "bfs", "--graph", &graph]);
    assert_eq!(code, 1);
    assert!(stderr.contains("tuning.json") && stderr.contains("line 1"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&db).unwrap(), "{\"version\": 1, \"entries\": [oops]}");
    let out = grail_db(&db, &["run", "bfs", "--graph", &graph, "--json"]);
    assert!(out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("warning: the tuning database") && stderr.contains("not valid"), "{stderr}");
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["opt_source"], "default");
}

#[test]
fn bench_opts_prints_the_optimization_table() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tuning.json");
    let rows = json_db(
        &db,
        &["bench", "opts", "--graphs", "kron:7", "--algorithms", "bfs,traverse", "--repeat", "1", "--json"],
    );
    let rows = rows.as_array().unwrap();
    let configs = ["none", "outline", "np", "coop", "backoff", "ldg", "all", "tuned"];
    for program in ["bfs", "traverse"] {
        let of: Vec<&Value> = rows.iter().filter(|r| r["program"] == program).collect();
        let names: Vec<&str> = of.iter().map(|r| r["config"].as_str().unwrap()).collect();
        assert_eq!(names, configs, "{program}");
        assert_eq!(of[0]["verified"], true);
        assert_eq!(of[0]["speedup"], 1.0);
        assert!(of[0]["kernel_ms"].as_f64().unwrap() > 0.0);
        // Nothing was tuned: the row says so instead of inventing a time.
        let tuned = of.last().unwrap();
        assert!(tuned["note"].as_str().unwrap().starts_with("not tuned for class"), "{tuned}");
        assert!(tuned.get("time_ms").is_none());
        // ldg is not a CPU key.
        assert!(of[5]["note"].as_str().unwrap().contains("no such key"));
    }
    // traverse has no iterate or pipe to outline.
    let outline = rows.iter().find(|r| r["program"] == "traverse" && r["config"] == "outline").unwrap();
    assert!(outline["note"].as_str().unwrap().contains("no iterate or pipe"), "{outline}");
    let text = ok(&["bench", "opts", "--graphs", "grid:6", "--algorithms", "sssp", "--repeat", "1"]);
    assert!(text.contains("speedup over none") && text.contains("median speedup of all"), "{text}");
    let (code, stderr) = fails(&["bench", "opts", "--algorithms", "nope"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("traverse"), "{stderr}");
}

#[test]
fn the_traversal_microbenchmark_runs_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let graph = path(dir.path(), "g.el");
    std::fs::write(&graph, "0 1\n1 2\n2 0\n0 2\n").unwrap();
    let summary = json(&["run", "traverse", "--graph", &graph, "--json", "--stats"]);
    // One push per edge; the checksum is the sum of the edges' heads.
    assert_eq!(summary["result"], "5");
    let kernels = summary["stats"]["kernels"].as_array().unwrap();
    assert_eq!(kernels[0]["kernel"], "traverse");
    assert_eq!(kernels[0]["pushes"], 4);
}
