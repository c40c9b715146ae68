//! `grail run --devices` as users run it: suite algorithms and program files over several CPU
//! devices, verified, with the parts reported; and the mistakes a user can make.

mod common;

use common::grail;

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Runs `grail ARGS --verify --json`, which must succeed with a verified result; its summary.
fn verified_summary(args: &[&str]) -> serde_json::Value {
    let args: Vec<&str> = args.iter().copied().chain(["--verify", "--json"]).collect();
    let run = grail(&args);
    assert!(run.status.success(), "{args:?}: {}", stderr(&run));
    let summary: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(summary["verified"], true, "{args:?}");
    summary
}

fn generated(dir: &tempfile::TempDir) -> String {
    let graph = dir.path().join("kron.gcsr");
    let graph = graph.to_str().unwrap().to_string();
    let made = grail(&["gen", "rmat", "--scale", "10", "--max-weight", "50", "-o", &graph]);
    assert!(made.status.success(), "{}", stderr(&made));
    graph
}

#[test]
fn suite_algorithms_run_verified_over_several_cpu_devices() {
    let dir = tempfile::tempdir().unwrap();
    let graph = generated(&dir);
    for algorithm in ["bfs", "sssp", "cc", "pr"] {
        for devices in ["cpu", "cpu*3", "cpu,cpu"] {
            let summary = verified_summary(&[
                "run",
                algorithm,
                "--graph",
                &graph,
                "--devices",
                devices,
                "--partition",
                "ordered",
            ]);
            let parts = summary["multi"]["parts"].as_array().expect("the parts are reported");
            let expected = if devices == "cpu*3" {
                3
            } else if devices == "cpu" {
                1
            } else {
                2
            };
            assert_eq!(parts.len(), expected, "{algorithm} over {devices}");
            let nodes: u64 = parts.iter().map(|p| p["nodes"].as_u64().unwrap()).sum();
            assert_eq!(nodes, summary["nodes"].as_u64().unwrap());
            // A CPU part always times its kernels (only GPU parts wait for --stats).
            assert!(parts.iter().all(|p| p["kernel_ms"].as_f64().is_some()), "{summary}");
            assert!(summary["target"].as_str().unwrap().starts_with("devices cpu"), "{summary}");
        }
    }
}

#[test]
fn the_asynchronous_mode_runs_worklist_loops_without_supersteps() {
    let dir = tempfile::tempdir().unwrap();
    let graph = generated(&dir);
    // Without and with soft priorities, and around a ring of the three devices (some packets
    // pass through a device they are not for); residual PageRank's loop body only counts its
    // rounds.
    let cases: [(&str, &str, &[&str]); 6] = [
        ("sssp", "wl", &[]),
        ("cc", "lp", &[]),
        ("sssp", "wl", &["--soft-priority", "4"]),
        ("cc", "lp", &["--soft-priority", "4"]),
        ("pr", "residual", &[]),
        ("sssp", "wl", &["--topology", "ring"]),
    ];
    // CPU devices have no fused worker: whichever is asked for, the host drives the loop (the
    // report names the one asked for).
    for worker in ["fused", "host"] {
        let summary = verified_summary(&[
            "run",
            "sssp",
            "--variant",
            "wl",
            "--graph",
            &graph,
            "--devices",
            "cpu*2",
            "--mode",
            "async",
            "--worker",
            worker,
        ]);
        assert_eq!(summary["multi"]["worker"], worker, "{summary}");
        assert_eq!(summary["multi"]["async_loops"], 1, "{summary}");
        assert_eq!(summary["multi"]["device_regions"], 0, "{summary}");
    }
    for (algorithm, variant, extra) in cases {
        let mut args = vec![
            "run",
            algorithm,
            "--variant",
            variant,
            "--graph",
            &graph,
            "--devices",
            "cpu*3",
            "--mode",
            "async",
            "--partition",
            "random",
        ];
        args.extend(extra);
        let summary = verified_summary(&args);
        assert_eq!(summary["multi"]["mode"], "async");
        assert_eq!(summary["multi"]["async_loops"], 1, "{summary}");
        let ring = extra.contains(&"ring");
        assert_eq!(summary["multi"]["topology"], if ring { "ring" } else { "direct" });
        if ring {
            assert!(summary["multi"]["relayed"].as_u64().unwrap() > 0, "{summary}");
        }
    }
    // BFS in the asynchronous mode takes its label-correcting variant, whose loop has no body,
    // on a graph of many levels (a road network); on R-MAT, of few, the partitioned default in
    // supersteps. The level-by-level variant, asked for, passes its kernel the level its body
    // counts: it runs bulk-synchronously, and is right.
    let road = dir.path().join("road.gcsr").to_str().unwrap().to_string();
    let made = grail(&["gen", "road", "--nodes", "4000", "-o", &road]);
    assert!(made.status.success(), "{}", stderr(&made));
    let summary = verified_summary(&["run", "bfs", "--graph", &road, "--devices", "cpu*2", "--mode", "async"]);
    assert_eq!(summary["variant"], "async", "{summary}");
    assert_eq!(summary["multi"]["async_loops"], 1, "{summary}");
    let summary = verified_summary(&["run", "bfs", "--graph", &graph, "--devices", "cpu*2", "--mode", "async"]);
    assert_eq!(summary["variant"], "do", "{summary}");
    assert_eq!(summary["multi"]["async_loops"], 0, "{summary}");
    let summary = verified_summary(&[
        "run",
        "bfs",
        "--variant",
        "wl",
        "--graph",
        &graph,
        "--devices",
        "cpu*2",
        "--mode",
        "async",
    ]);
    assert_eq!(summary["multi"]["async_loops"], 0, "{summary}");
    // Without --devices, `--mode async` is one GPU's queues: refused on the CPU, with the reason.
    let refused = grail(&["run", "bfs", "--graph", &road, "--mode", "async"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("--mode async on one device runs on a GPU (--target gpu)"),
        "{}",
        stderr(&refused)
    );
    let bsp = grail(&["run", "bfs", "--graph", &road, "--mode", "bsp", "--verify"]);
    assert!(bsp.status.success(), "{}", stderr(&bsp));
}

/// A program whose kernel writes six properties through its neighbours (and another reads two
/// of them back through ghosts): each superstep sends the changes of each, and the owners' words
/// of those read back, each in its own share of the inboxes.
const SEVERAL_PROPERTIES: &str = include_str!("../../grail-lang/tests/programs/several_properties.grail");

#[test]
fn kernels_that_write_several_properties_through_neighbours_agree_over_several_devices() {
    let dir = tempfile::tempdir().unwrap();
    let graph = generated(&dir);
    let program = dir.path().join("several.grail");
    std::fs::write(&program, SEVERAL_PROPERTIES).unwrap();
    let program = program.to_str().unwrap();
    let one = dir.path().join("one.txt");
    let run = grail(&["run", program, "--graph", &graph, "--target", "cpu", "-o", one.to_str().unwrap()]);
    assert!(run.status.success(), "{}", stderr(&run));
    let expected = std::fs::read_to_string(&one).unwrap();
    for (devices, mode) in [("cpu*2", "bsp"), ("cpu*3", "bsp"), ("cpu*4", "async")] {
        let parts = dir.path().join(format!("{devices}.txt"));
        let run = grail(&[
            "run",
            program,
            "--graph",
            &graph,
            "--devices",
            devices,
            "--partition",
            "random",
            "--mode",
            mode,
            "-o",
            parts.to_str().unwrap(),
        ]);
        assert!(run.status.success(), "{devices}: {}", stderr(&run));
        assert_eq!(std::fs::read_to_string(parts).unwrap(), expected, "{devices} {mode}");
    }
}

#[test]
fn a_program_file_runs_over_several_devices_and_writes_its_output() {
    let dir = tempfile::tempdir().unwrap();
    let graph = generated(&dir);
    let program = dir.path().join("reach.grail");
    std::fs::write(
        &program,
        "graph { node hops: u32 = INF; }
param source: Node;
output hops;
kernel step() {
    forall u in worklist {
        forall v in u.neighbors() {
            if atomic_min(v.hops, u.hops + 1) { push(v); }
        }
    }
}
fn main() {
    source.hops = 0;
    iterate step() initial [source]
}
",
    )
    .unwrap();
    let one = dir.path().join("one.txt");
    let parts = dir.path().join("parts.txt");
    let program = program.to_str().unwrap();
    let run = grail(&["run", program, "--graph", &graph, "--source", "3", "-o", one.to_str().unwrap()]);
    assert!(run.status.success(), "{}", stderr(&run));
    let run = grail(&[
        "run",
        program,
        "--graph",
        &graph,
        "--source",
        "3",
        "--devices",
        "cpu*4",
        "--partition",
        "random",
        "-o",
        parts.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert!(String::from_utf8_lossy(&run.stdout).contains("part 3"), "{}", String::from_utf8_lossy(&run.stdout));
    assert_eq!(std::fs::read_to_string(one).unwrap(), std::fs::read_to_string(parts).unwrap());
}

#[test]
fn mistakes_get_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let graph = generated(&dir);
    let cases: &[(&[&str], &str)] = &[
        (&["run", "bfs", "--graph", &graph, "--devices", "tpu:0"], "unknown device `tpu:0`"),
        (&["run", "bfs", "--graph", &graph, "--devices", "cpu*0"], "cpu*K"),
        (&["run", "bfs", "--graph", &graph, "--devices", "cpu", "--target", "gpu"], "cannot be used with"),
        (&["run", "bfs", "--graph", &graph, "--mode", "async"], "--target gpu"),
        (
            &["run", "cc", "--graph", &graph, "--devices", "cpu*2", "--variant", "afforest"],
            "turns an integer into a node",
        ),
        (&["run", "tri", "--graph", &graph, "--devices", "cpu*2"], "no tri variant can run on a partitioned graph"),
        (&["run", "bfs", "--graph", &graph, "--device-memory-limit", "lots"], "is not a size"),
        (&["run", "sssp", "--graph", &graph, "--devices", "cpu*2", "--soft-priority", "8"], "add --mode async"),
        (&["run", "sssp", "--graph", &graph, "--devices", "cpu*2", "--mode", "async", "--soft-priority", "0"], "0"),
        (&["run", "sssp", "--graph", &graph, "--devices", "cpu*2", "--topology", "ring"], "add --mode async"),
        (
            &["run", "sssp", "--graph", &graph, "--devices", "cpu*2", "--mode", "async", "--topology", "star"],
            "direct or ring",
        ),
        (&["run", "sssp", "--graph", &graph, "--devices", "cpu*2", "--worker", "host"], "add --mode async"),
        (
            &["run", "sssp", "--graph", &graph, "--devices", "cpu*2", "--mode", "async", "--worker", "gpu"],
            "fused or host",
        ),
    ];
    for (args, expected) in cases {
        let run = grail(args);
        assert!(!run.status.success(), "{args:?} succeeded");
        let message = stderr(&run);
        assert!(message.contains(expected), "{args:?}: expected `{expected}` in: {message}");
        assert!(!message.contains("panicked"), "{args:?}: {message}");
    }
}

#[test]
fn bench_multi_prints_one_device_beside_several() {
    let dir = tempfile::tempdir().unwrap();
    let chart = dir.path().join("speedups.svg");
    let run = grail(&[
        "--quiet",
        "bench",
        "multi",
        "--graphs",
        "kron:8,road:8",
        "--algorithms",
        "bfs,pr",
        "--variants",
        "do,wl,pull32,push",
        "--devices",
        "cpu*2",
        "--devices",
        "cpu*3",
        "--partition",
        "ordered,random",
        "--repeat",
        "1",
        "--json",
        "--plot",
        chart.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    // The chart: a bar per device list, split and mode, for each graph and algorithm.
    let svg = std::fs::read_to_string(&chart).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(200)]);
    for label in ["kron8 bfs", "road8 pr", "cpu,cpu (ordered, bsp)", "cpu,cpu,cpu (random, bsp)"] {
        assert!(svg.contains(label), "the chart has no `{label}`");
    }
    let rows: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    // Per graph and algorithm: the default variant on one device (bfs do, pr pull32), the
    // other variant asked for on one device (bfs wl, pr push), and each of the two variants over
    // 2 lists x 2 methods.
    assert_eq!(rows.len(), 2 * 2 * (2 + 2 * 4));
    for variant in ["do", "wl", "pull32", "push"] {
        let partitioned = rows.iter().filter(|r| r["variant"] == variant && r["partition"].is_string()).count();
        assert_eq!(partitioned, 2 * 4, "partitioned rows of {variant}");
    }
    // A variant no algorithm asked for has is a usage error.
    let wrong =
        grail(&["--quiet", "bench", "multi", "--graphs", "kron:8", "--algorithms", "bfs", "--variants", "push"]);
    assert_eq!(wrong.status.code(), Some(2), "{}", stderr(&wrong));
    assert!(stderr(&wrong).contains("has a variant 'push'"), "{}", stderr(&wrong));
    for row in rows {
        assert!(row["algo_ms"].as_f64().unwrap() >= 0.0, "{row}");
        if row["partition"].is_string() {
            assert!(row["steps"].as_u64().unwrap() > 0, "{row}");
            assert!(row["edge_cut"].as_f64().unwrap() >= 0.0, "{row}");
        }
    }
}

#[test]
fn bench_multi_names_the_asynchronous_rows_around_a_ring() {
    let run = grail(&[
        "--quiet",
        "bench",
        "multi",
        "--graphs",
        "kron:8",
        "--algorithms",
        "sssp",
        "--devices",
        "cpu*3",
        "--modes",
        "bsp,async",
        "--topology",
        "ring",
        "--repeat",
        "1",
        "--json",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let rows: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let modes: Vec<&str> = rows.as_array().unwrap().iter().filter_map(|r| r["mode"].as_str()).collect();
    assert_eq!(modes, ["bsp", "async-ring"], "{rows}");
}

#[test]
fn bench_multi_runs_the_asynchronous_rows_with_each_worker_asked_for() {
    let run = grail(&[
        "--quiet",
        "bench",
        "multi",
        "--graphs",
        "road:8",
        "--algorithms",
        "sssp",
        "--devices",
        "cpu*2",
        "--modes",
        "bsp,async",
        "--workers",
        "fused,host",
        "--repeat",
        "1",
        "--json",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let rows: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let modes: Vec<&str> = rows.as_array().unwrap().iter().filter_map(|r| r["mode"].as_str()).collect();
    assert_eq!(modes, ["bsp", "async", "async-host"], "{rows}");
}

#[test]
fn pbf_filters_through_routers_and_says_how_the_devices_shared_it() {
    let summary = verified_summary(&[
        "-q",
        "pbf",
        "--devices",
        "cpu*3",
        "--count",
        "20000",
        "--segment",
        "1500",
        "--divisor",
        "5",
    ]);
    let devices = summary["devices"].as_array().unwrap();
    assert_eq!(devices.len(), 3);
    let segments: u64 = devices.iter().map(|d| d["segments"].as_u64().unwrap()).sum();
    let values: u64 = devices.iter().map(|d| d["values"].as_u64().unwrap()).sum();
    assert_eq!((segments, values), (20_000u64.div_ceil(1500), 20_000));
    // About a fifth of uniform values are divisible by 5.
    let kept = summary["kept"].as_u64().unwrap();
    assert!((3_500..4_500).contains(&kept), "{kept}");
    let refused = grail(&["pbf", "--devices", "tpu", "--count", "10"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
}

#[test]
fn sections_run_several_algorithms_at_once_verified() {
    let dir = tempfile::tempdir().unwrap();
    let graph = generated(&dir);
    let summary = verified_summary(&["-q", "sections", "--graph", &graph, "bfs@cpu", "pr/push@cpu", "cc@cpu"]);
    let sections = summary["sections"].as_array().unwrap();
    let names: Vec<&str> = sections.iter().map(|s| s["section"].as_str().unwrap()).collect();
    assert_eq!(names, ["bfs@cpu", "pr/push@cpu", "cc@cpu"]);
    assert_eq!(sections[1]["variant"], "push");
    let refused = grail(&["sections", "--graph", &graph, "bfs@tpu"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
}

#[test]
fn trace_steps_tells_where_each_superstep_went_and_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let graph = generated(&dir);
    let args = ["run", "bfs", "-g", &graph, "--devices", "cpu*2", "--partition", "ordered", "--verify"];
    let traced = std::process::Command::new(env!("CARGO_BIN_EXE_grail"))
        .args(args)
        .arg("--quiet")
        .env("GRAIL_CACHE_DIR", std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("grail-cache"))
        .env("GRAIL_TRACE_STEPS", "1")
        .output()
        .expect("grail runs");
    assert!(traced.status.success(), "{}", stderr(&traced));
    let text = stderr(&traced);
    // Each part's preparation, every superstep with its kernel, and each part's phases.
    assert!(text.contains("trace   part 0 prepare") && text.contains("trace   part 1 prepare"), "{text}");
    assert!(text.contains("trace step 1 `init`") && text.contains("`top_down`"), "{text}");
    // The initial values depend on each node alone: every part gives its ghosts theirs, and
    // nothing is sent.
    let init = text.lines().find(|l| l.starts_with("trace step 1 `init`")).unwrap();
    assert!(init.ends_with("merged 0, copied 0, forwarded 0"), "{init}");
    assert!(text.contains("trace   part 1 defaults: kernel over every slot"), "{text}");
    assert!(text.contains("trace   part 1 step: kernel"), "{text}");
    let plain = grail(&args);
    assert!(plain.status.success() && !stderr(&plain).contains("trace"), "{}", stderr(&plain));
}

#[test]
fn bench_multi_takes_a_graph_file_beside_generated_graphs() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ring-of-six.el");
    std::fs::write(&file, "0 1\n1 2\n2 3\n3 4\n4 5\n5 0\n").unwrap();
    let graphs = format!("{},kron:6", file.display());
    let run = grail(&[
        "--quiet",
        "bench",
        "multi",
        "--graphs",
        &graphs,
        "--algorithms",
        "bfs",
        "--devices",
        "cpu*2",
        "--repeat",
        "1",
        "--json",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let rows: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let graphs: Vec<&str> = rows.as_array().unwrap().iter().map(|r| r["graph"].as_str().unwrap()).collect();
    assert!(graphs.contains(&"ring-of-six") && graphs.contains(&"kron6"), "{graphs:?}");
    // A file that numbers nodes from 1, read so with --base 1: no note about node 0.
    let one_based = dir.path().join("one-based.el");
    std::fs::write(&one_based, "1 2\n2 3\n3 1\n").unwrap();
    let args = ["--graphs", one_based.to_str().unwrap(), "--algorithms", "bfs", "--devices", "cpu*2", "--repeat", "1"];
    let from_one = grail(&[&["bench", "multi", "--base", "1"], &args[..]].concat());
    assert!(from_one.status.success(), "{}", stderr(&from_one));
    assert!(!stderr(&from_one).contains("--base 1"), "{}", stderr(&from_one));
    let from_zero = grail(&[&["bench", "multi"], &args[..]].concat());
    assert!(stderr(&from_zero).contains("read it with --base 1"), "{}", stderr(&from_zero));
    // A path that names no file is an error that says so.
    let missing = dir.path().join("missing.gr");
    let wrong = grail(&["--quiet", "bench", "multi", "--graphs", missing.to_str().unwrap()]);
    assert!(!wrong.status.success());
    assert!(stderr(&wrong).contains("no such file"), "{}", stderr(&wrong));
}

/// A union-find set's join is finished through the host after `GRAIL_HOST_JOIN_AFTER` rounds
/// (by default when its rounds have cost what that would: it depends on the timing, so only
/// verified here), and the report says how many joins went there; a road network in random
/// parts, whose join takes many rounds on the devices.
#[test]
fn joins_through_the_host_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let graph = dir.path().join("road.gcsr");
    let graph = graph.to_str().unwrap().to_string();
    let made = grail(&["gen", "road", "--nodes", "20000", "--seed", "5", "-o", &graph]);
    assert!(made.status.success(), "{}", stderr(&made));
    let args = ["run", "cc", "--variant", "uf", "-g", &graph, "--devices", "cpu*3", "--partition", "random"];
    for (after, joins) in [(Some("1"), Some(1)), (Some("100000"), Some(0)), (None, None)] {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_grail"));
        command
            .args(args)
            .args(["--verify", "--json", "--quiet"])
            .env("GRAIL_CACHE_DIR", std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("grail-cache"));
        match after {
            Some(after) => command.env("GRAIL_HOST_JOIN_AFTER", after),
            None => command.env_remove("GRAIL_HOST_JOIN_AFTER"),
        };
        let run = command.output().expect("grail runs");
        assert!(run.status.success(), "{}", stderr(&run));
        let summary: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
        assert_eq!(summary["verified"], true);
        let reported = summary["multi"]["host_joins"].as_u64().unwrap();
        match joins {
            Some(0) => assert_eq!(reported, 0, "{summary}"),
            Some(joins) => assert!(reported >= joins, "{summary}"),
            None => {}
        }
    }
}
