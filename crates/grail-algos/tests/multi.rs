//! Partitioned runs on CPU devices: every suite variant whose program can run on a partitioned
//! graph, on 1, 2, 3 and 4 devices, with every partition method, on random multigraphs and on
//! generated graphs, checked by the suite's verifiers; and the programs that cannot be
//! partitioned refused with their reasons.

use std::sync::OnceLock;

use grail_algos::suite::{MultiParams, SuiteProgram};
use grail_algos::{Algorithm, RunParams, Target, VARIANTS, Variant, run, verify};
use grail_graph::builder::{BuildOptions, EdgeList, build};
use grail_graph::generate::{GenOptions, Generator, generate};
use grail_graph::partition::Method;
use grail_graph::{Graph, NoProgress};
use grail_ir::OptConfig;
use grail_runtime::ModuleCache;
use grail_runtime::cpu::CCompiler;
use grail_runtime::multi::{Device, Mode, SyncStats, Topology};

/// Whether METIS is there to test; without it its cases are skipped, unless
/// GRAIL_REQUIRE_METIS=1 (CI) makes that a failure.
fn methods() -> Vec<Method> {
    let mut methods = vec![Method::Ordered, Method::Degree, Method::Random, Method::Ranges];
    if grail_graph::metis::available() {
        methods.extend([Method::Metis, Method::MetisEdges]);
    } else {
        assert!(
            std::env::var("GRAIL_REQUIRE_METIS").as_deref() != Ok("1"),
            "GRAIL_REQUIRE_METIS=1 but the system's METIS cannot be loaded"
        );
        eprintln!("METIS is not installed: its cases are skipped");
    }
    methods
}

fn multi(devices: usize, method: Method) -> MultiParams {
    MultiParams { seed: 7, ..MultiParams::new(vec![Device::Cpu; devices], method) }
}

/// The variants that can run partitioned, each compiled once for 1..=4 CPU devices.
fn programs() -> &'static [(usize, SuiteProgram)] {
    static PROGRAMS: OnceLock<Vec<(usize, SuiteProgram)>> = OnceLock::new();
    PROGRAMS.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("grail-test-cache-multi-{}", std::process::id()));
        let cache = ModuleCache::at(dir);
        let compiler = CCompiler::detect().expect("the tests need a C compiler");
        let mut programs = Vec::new();
        for variant in partitionable() {
            for k in 1..=4 {
                let program = SuiteProgram::compile_multi(
                    variant,
                    &vec![Device::Cpu; k],
                    &compiler,
                    Some(&cache),
                    &OptConfig::all(),
                )
                .unwrap_or_else(|e| panic!("{}: {e}", variant.program));
                programs.push((k, program));
            }
        }
        programs
    })
}

fn partitionable() -> Vec<&'static Variant> {
    VARIANTS
        .iter()
        .filter(|v| {
            let module = grail_algos::suite::optimized(v, &OptConfig::all()).unwrap();
            grail_ir::analysis::partition_obstacles(&module).is_empty()
        })
        .collect()
}

#[test]
fn the_partitionable_variants_include_one_of_each_algorithm_of_the_several_devices_issue() {
    let names: Vec<&str> = partitionable().iter().map(|v| v.program).collect();
    // bfs_do, pr and pr_pull32 read in-neighbours (a part holds its owned nodes' in-edges), and
    // bfs_do the out-degree of ghosts (a part holds those too).
    // cc's union-find set is joined across the parts (grail_ir::sets).
    for program in ["bfs", "bfs_do", "sssp_wl", "sssp_ds", "cc", "cc_lp", "pr", "pr_pull32", "pr_push", "pr_residual"] {
        assert!(names.contains(&program), "{program} not among {names:?}");
    }
}

/// A small deterministic generator (SplitMix64), so failures reproduce from the printed seed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % n
    }
}

/// A random weighted multigraph with self-loops, duplicates and isolated nodes.
fn random_graph(seed: u64) -> Graph {
    let mut rng = Rng(seed);
    let n = 1 + rng.below(60) as u32;
    let m = rng.below(u64::from(n) * 4 + 1);
    let mut edges = EdgeList::new(n, true);
    for _ in 0..m {
        let u = rng.below(u64::from(n)) as u32;
        let v = if rng.below(10) == 0 { u } else { rng.below(u64::from(n)) as u32 };
        edges.push(u, v, 1 + rng.below(50) as u32);
    }
    build(edges, &BuildOptions::AS_GIVEN).expect("a valid edge list builds")
}

fn check(k: usize, program: &SuiteProgram, graph: &Graph, method: Method, threads: usize, what: &str) {
    check_with(program, graph, multi(k, method), threads, what);
}

/// Runs and verifies; the nodes that waited under soft priorities.
fn check_with(program: &SuiteProgram, graph: &Graph, how: MultiParams, threads: usize, what: &str) -> SyncStats {
    let (k, method) = (how.devices.len(), how.partition);
    let variant = program.variant();
    let params =
        RunParams { threads, source: Some(u64::from(graph.num_nodes() / 3)), multi: Some(how), ..Default::default() };
    let context = || {
        format!(
            "{} on {what} ({} nodes, {} edges), {k} CPU devices, {} partitioning, {threads} threads",
            variant.program,
            graph.num_nodes(),
            graph.num_edges(),
            method.name()
        )
    };
    let run = program.run(graph, &params).unwrap_or_else(|e| panic!("{}: {e}", context()));
    if let Err(e) = verify(variant.algorithm, graph, &params, &run.output) {
        panic!("{}: {e}", context());
    }
    let report = run.multi.expect("a partitioned run reports its parts");
    assert_eq!(report.parts.len(), k);
    // Ghosts are refreshed where kernels read them (not pr_push's: it only adds into them). The
    // initial values are not sent (each part gives its ghosts theirs), and a part that wrote a
    // ghost needs nothing back, so a search from node 0 that stays near it may copy nothing;
    // labels and ranks change all over a generated graph, so those runs must copy. (Not `cc`'s
    // classes: where a part's own trees already hold each class's least id, as its ghost of a
    // hub of R-MAT, every ghost gets its owner's value without a copy.)
    let read_through_ghosts = grail_ir::analysis::remote_reads(program.module()).contains(&true);
    let changes_everywhere = matches!(variant.algorithm, Algorithm::Cc | Algorithm::Pr)
        && variant.program != "cc"
        && graph.num_edges() >= 1000;
    if report.parts.iter().any(|p| p.ghosts > 0) && read_through_ghosts && changes_everywhere {
        assert!(report.sync.copied > 0, "{}: ghosts never refreshed", context());
    }
    assert_eq!(report.parts.iter().map(|p| u64::from(p.nodes)).sum::<u64>(), u64::from(graph.num_nodes()));
    // Worklist loops whose body is empty or only counts run asynchronously in that mode
    // (sssp_wl, cc_lp, pr_residual, bfs_async).
    if report.mode == Mode::Async && matches!(variant.program, "sssp_wl" | "cc_lp" | "pr_residual" | "bfs_async") {
        assert!(report.sync.async_loops > 0, "{}: no asynchronous loop", context());
    }
    report.sync
}

#[test]
fn the_asynchronous_mode_agrees_with_the_reference_and_ends_under_random_delays() {
    // The termination-detection stress test: packets delayed at random and taken in shuffled
    // order, on 1-4 devices, a different seed for every run; every third run sends its packets
    // around a ring of the parts.
    let methods = methods();
    let (mut deferred, mut relayed) = (0, 0);
    for seed in 0..30u64 {
        let graph = random_graph(1000 + seed);
        let method = methods[seed as usize % methods.len()];
        for (k, program) in programs() {
            if *k as u32 > graph.num_nodes() {
                continue;
            }
            let how = MultiParams {
                devices: vec![Device::Cpu; *k],
                mode: Some(Mode::Async),
                partition: method,
                seed: 7,
                jitter: Some(seed * 16 + *k as u64),
                // Soft priorities in every other run, in buckets narrow enough that pushed
                // nodes wait.
                priority_delta: (seed % 2 == 1).then_some(1 + seed % 7),
                topology: if seed % 3 == 2 { Topology::Ring } else { Topology::Direct },
                worker: Default::default(),
                partitioning: None,
                partition_file: None,
                kernel_times: false,
                defer_steps: None,
            };
            let sync = check_with(program, &graph, how, 1, &format!("random graph seed {}, asynchronous", 1000 + seed));
            deferred += sync.deferred;
            relayed += sync.relayed;
        }
    }
    let graph =
        generate(&Generator::graph500(10), &GenOptions { seed: 5, max_weight: Some(100) }, false, &NoProgress).unwrap();
    for (k, program) in programs().iter().filter(|(k, _)| *k >= 2) {
        let how = MultiParams {
            devices: vec![Device::Cpu; *k],
            mode: Some(Mode::Async),
            partition: Method::Random,
            seed: 3,
            jitter: None,
            priority_delta: Some(8),
            topology: if *k >= 3 { Topology::Ring } else { Topology::Direct },
            worker: Default::default(),
            partitioning: None,
            partition_file: None,
            kernel_times: false,
            defer_steps: None,
        };
        let sync = check_with(program, &graph, how, 2, "rmat, asynchronous");
        deferred += sync.deferred;
        relayed += sync.relayed;
    }
    assert!(deferred > 0, "soft priorities never made a pushed node wait");
    assert!(relayed > 0, "no packet went around the ring through a part it was not for");
}

#[test]
fn every_partitionable_variant_agrees_with_the_reference_on_1_to_4_cpu_devices() {
    let methods = methods();
    for seed in 0..24u64 {
        let graph = random_graph(seed);
        let method = methods[seed as usize % methods.len()];
        for (k, program) in programs() {
            if *k as u32 > graph.num_nodes() {
                continue;
            }
            check(*k, program, &graph, method, 1, &format!("random graph seed {seed}"));
        }
    }
}

/// Deferred supersteps (queued without a wait, their changes merged from counts left on the
/// senders' devices when the parts next run) are the GPUs' protocol; CPU parts asked to defer
/// run the same protocol at once, so its bookkeeping (which sender's count word a receiver
/// reads, what waits for what) is checked here without GPUs.
#[test]
fn supersteps_deferred_on_every_part_give_the_references_results() {
    let methods = methods();
    let mut unwaited = 0;
    for seed in 0..8u64 {
        let graph = random_graph(100 + seed);
        let method = methods[seed as usize % methods.len()];
        for (k, program) in programs().iter().filter(|(k, _)| *k >= 2) {
            if *k as u32 > graph.num_nodes() {
                continue;
            }
            let how = MultiParams { defer_steps: Some(true), ..multi(*k, method) };
            let sync = check_with(program, &graph, how, 1, &format!("random graph seed {}, deferred", 100 + seed));
            // Afforest's neighbour rounds and labelling need nothing back.
            if program.variant().program == "cc_afforest_set" {
                unwaited += sync.unwaited;
            }
        }
    }
    assert!(unwaited > 0, "Afforest's rounds were never deferred");
    // PageRank on a graph without dangling nodes spreads its ranks by a kernel that reduces
    // nothing: its additions are merged when `gather` starts.
    let grid =
        generate(&Generator::Grid { rows: 20, cols: 15 }, &GenOptions { seed: 2, max_weight: None }, true, &NoProgress)
            .unwrap();
    for (k, program) in programs().iter().filter(|(k, p)| *k >= 2 && p.variant().program == "pr_push") {
        for method in [Method::Ordered, Method::Random] {
            let how = MultiParams { defer_steps: Some(true), ..multi(*k, method) };
            let sync = check_with(program, &grid, how, 1, "grid 20 x 15, deferred");
            assert!(sync.unwaited > 0 && sync.merged > 0, "{k} parts: PageRank's spreading not deferred: {sync:?}");
        }
    }
    let graph =
        generate(&Generator::graph500(10), &GenOptions { seed: 5, max_weight: Some(100) }, false, &NoProgress).unwrap();
    for (k, program) in programs().iter().filter(|(k, _)| *k >= 2) {
        let how = MultiParams { defer_steps: Some(true), ..multi(*k, Method::Random) };
        check_with(program, &graph, how, 2, "rmat 2^10, deferred");
    }
}

#[test]
fn every_partition_method_gives_the_same_verified_results_on_generated_graphs() {
    let weighted = GenOptions { seed: 3, max_weight: Some(100) };
    let graphs = [
        ("rmat", generate(&Generator::graph500(10), &weighted, false, &NoProgress).unwrap()),
        ("grid", generate(&Generator::Grid { rows: 40, cols: 30 }, &weighted, true, &NoProgress).unwrap()),
    ];
    for (name, graph) in &graphs {
        for method in methods() {
            for (k, program) in programs().iter().filter(|(k, _)| *k >= 2) {
                check(*k, program, graph, method, 2, name);
            }
        }
    }
}

#[test]
fn the_suite_runs_partitioned_through_run_with_its_partitioned_default_variant() {
    let graph = random_graph(11);
    for algorithm in [Algorithm::Bfs, Algorithm::Sssp, Algorithm::Cc, Algorithm::Pr] {
        let params = RunParams { multi: Some(multi(2, Method::Ordered)), threads: 2, ..Default::default() };
        let result = run(algorithm, &graph, Target::Cpu, &params).unwrap_or_else(|e| panic!("{algorithm}: {e}"));
        verify(algorithm, &graph, &params, &result.output).unwrap_or_else(|e| panic!("{algorithm}: {e}"));
        let variant = result.variant.expect("a generated target");
        let module = grail_algos::suite::optimized(variant, &OptConfig::default()).unwrap();
        assert!(grail_ir::analysis::partition_obstacles(&module).is_empty(), "{}", variant.program);
        assert_eq!(result.multi.expect("parts reported").parts.len(), 2);
        // The one-device default where it runs partitioned (BFS's direction-optimizing
        // search reads in-neighbours, which parts hold), PageRank's push where it is faster.
        let expected = match algorithm {
            Algorithm::Bfs => "do",
            Algorithm::Pr => "push",
            _ => variant.name,
        };
        assert_eq!(variant.name, expected, "{algorithm}");
    }
    // The asynchronous mode takes BFS's variant whose loop runs without rounds on a graph of
    // many levels (a grid), and the partitioned default, in supersteps, on one of few.
    let how = MultiParams { mode: Some(Mode::Async), ..multi(2, Method::Ordered) };
    let params = RunParams { multi: Some(how), threads: 2, ..Default::default() };
    let grid = generate(&Generator::Grid { rows: 80, cols: 60 }, &GenOptions::default(), true, &NoProgress).unwrap();
    for (graph, expected) in [(&grid, "async"), (&graph, "do")] {
        let result = run(Algorithm::Bfs, graph, Target::Cpu, &params).unwrap();
        verify(Algorithm::Bfs, graph, &params, &result.output).unwrap();
        assert_eq!(result.variant.expect("a generated target").name, expected);
        let async_loops = result.multi.expect("parts reported").sync.async_loops;
        assert_eq!(async_loops > 0, expected == "async", "bfs {expected}: {async_loops} asynchronous loops");
    }
}

/// Without a mode asked for, BFS and SSSP over GPUs run asynchronously on a graph of many
/// levels and in supersteps on one of few; every other case, and CPU devices, in supersteps.
/// A run on CPU devices so chosen is verified and reports the mode it took.
#[test]
fn the_mode_not_asked_for_is_chosen_by_the_graph_and_the_devices() {
    let grid = generate(&Generator::Grid { rows: 80, cols: 60 }, &GenOptions::default(), true, &NoProgress).unwrap();
    let rmat =
        generate(&Generator::graph500(10), &GenOptions { seed: 5, max_weight: Some(100) }, false, &NoProgress).unwrap();
    let gpus = [Device::Gpu(0), Device::Gpu(1)];
    let mixed = [Device::Gpu(0), Device::Cpu];
    for algorithm in [Algorithm::Bfs, Algorithm::Sssp, Algorithm::Cc, Algorithm::Pr] {
        let on_grid = if matches!(algorithm, Algorithm::Bfs | Algorithm::Sssp) { Mode::Async } else { Mode::Bsp };
        assert_eq!(grail_algos::preferred_mode(algorithm, &grid, &gpus), on_grid, "{algorithm} on a grid");
        assert_eq!(grail_algos::preferred_mode(algorithm, &rmat, &gpus), Mode::Bsp, "{algorithm} on R-MAT");
        assert_eq!(grail_algos::preferred_mode(algorithm, &grid, &mixed), Mode::Bsp, "{algorithm}, a GPU and a CPU");
        assert_eq!(grail_algos::preferred_mode(algorithm, &grid, &[Device::Cpu; 2]), Mode::Bsp, "{algorithm}, CPUs");
    }
    let how = MultiParams { mode: None, ..multi(2, Method::Ordered) };
    let params = RunParams { multi: Some(how), threads: 2, ..Default::default() };
    let result = run(Algorithm::Bfs, &grid, Target::Cpu, &params).unwrap();
    verify(Algorithm::Bfs, &grid, &params, &result.output).unwrap();
    assert_eq!(result.multi.expect("parts reported").mode, Mode::Bsp, "CPU devices run in supersteps");
}

#[test]
fn programs_that_cannot_be_partitioned_are_refused_with_their_reasons() {
    let graph = random_graph(5);
    let refused = |algorithm, variant: &str| {
        let params =
            RunParams { variant: Some(variant.into()), multi: Some(multi(2, Method::Ordered)), ..Default::default() };
        run(algorithm, &graph, Target::Cpu, &params).expect_err("refused").to_string()
    };
    let message = refused(Algorithm::Cc, "afforest");
    assert!(
        message.contains("turns an integer into a node") && message.contains("cannot run on a partitioned graph"),
        "{message}"
    );
    let message = refused(Algorithm::Tri, "merge");
    assert!(message.contains("other than its loop's item"), "{message}");
    let message = run(
        Algorithm::Mst,
        &graph,
        Target::Cpu,
        &RunParams { multi: Some(multi(2, Method::Ordered)), ..Default::default() },
    )
    .expect_err("no MST variant can be partitioned")
    .to_string();
    assert!(message.contains("no mst variant") || message.contains("no MST variant"), "{message}");
    let message = run(
        Algorithm::Bfs,
        &graph,
        Target::Gpu,
        &RunParams { multi: Some(multi(2, Method::Ordered)), ..Default::default() },
    )
    .expect_err("--devices replaces --target")
    .to_string();
    assert!(message.contains("--devices"), "{message}");
    // An edge's number in a kernel, or in an edge property's initial value, is its place among
    // the part's edges.
    for source in [
        "graph { node s: u64; } output s; kernel k() { forall u in G.nodes() { for e in u.out_edges() { u.s += e as u64; } } } fn main() { invoke k(); }",
        "graph { edge id: u64 = self as u64; node s: u64; } output s; kernel k() { forall u in G.nodes() { for e in u.out_edges() { u.s += e.id; } } } fn main() { invoke k(); }",
    ] {
        let module = grail_algos::suite::compile_source("edges", source).unwrap();
        let obstacles = grail_ir::analysis::partition_obstacles(&module);
        assert!(obstacles.iter().any(|o| o.contains("turns an edge into a number")), "{obstacles:?}");
    }
}

/// Supersteps queued without a wait whose changes of two properties (sums of different
/// types) are merged on the receiving parts when the next superstep starts, alternating with
/// supersteps that send nothing: every column as on one device, on 2-4 CPU devices running the
/// deferred protocol, in every partition method.
const SPREAD: &str = r#"
graph { node cur: u32; node mass: u64; node hits: i32; }
output cur; output hits;
kernel start() { forall u in G.nodes() { u.cur = ((u as u32) * 7919) % 1000; } }
kernel spread() { forall u in G.nodes() { forall v in u.neighbors() { atomic_add(v.mass, u.cur as u64); atomic_add(v.hits, 1); } } }
kernel settle() { forall u in G.nodes() { u.cur = ((u.mass + u.cur as u64) % 1009) as u32; u.mass = 0; } }
fn main() { invoke start(); let mut round: u32 = 0; while round < 4 { invoke spread(); invoke settle(); round += 1; } }
"#;

#[test]
fn deferred_supersteps_changes_are_merged_when_the_next_starts() {
    use grail_runtime::multi::{MultiOptions, MultiProgram};
    let module = grail_algos::suite::compile_source("spread", SPREAD).unwrap();
    let module = grail_ir::opt::optimize(module, &OptConfig::all()).unwrap();
    let (compiler, cache) = toolchain("spread");
    let one = grail_runtime::cpu::CpuProgram::compile(module.clone(), &compiler, Some(&cache)).unwrap();
    let mut unwaited = 0;
    for seed in 0..6 {
        let graph = random_graph(200 + seed);
        let alone = one.run(&graph, &[], &grail_runtime::cpu::RunOptions { threads: 1 }, &mut std::io::sink()).unwrap();
        for k in [2, 3, 4] {
            let devices = vec![Device::Cpu; k];
            let program = MultiProgram::compile(module.clone(), &devices, &compiler, Some(&cache)).unwrap();
            for method in methods() {
                let partitioning = grail_graph::partition::partition(&graph, k as u32, method, seed).unwrap();
                let options = MultiOptions { threads: k, defer_steps: Some(true), ..MultiOptions::default() };
                let run = program.run(&graph, &partitioning, &[], &options, &mut std::io::sink()).unwrap();
                let what = format!("seed {seed}, {k} parts, {}", method.name());
                assert_eq!(run.output.properties[0], alone.properties[0], "{what}: cur");
                assert_eq!(run.output.properties[2], alone.properties[2], "{what}: hits");
                // `start` and every `spread` (each `settle` first merges what the spread sent).
                assert_eq!(run.sync.unwaited, 5, "{what}: supersteps not waited for");
                unwaited += run.sync.unwaited;
            }
        }
    }
    assert!(unwaited > 0, "no superstep was deferred");
}

/// Label propagation by pulling (each node lowers its own label from its neighbours' and pushes
/// them), plainly and with `atomic_min` on its own label: in the asynchronous mode a node pushed
/// to another part reads its neighbour's label there through a ghost, which must hold the new
/// value by then. Every label as on one device, under random delays, on symmetric graphs.
const PULLS: [&str; 2] = [
    r#"
graph { node lab: u32 = self as u32; }
output lab;
kernel prop() { forall u in worklist { let mut m = u.lab; for v in u.neighbors() { if v.lab < m { m = v.lab; } }
    if m < u.lab { u.lab = m; for v in u.neighbors() { push(v); } } } }
fn main() { iterate prop() initial G.nodes(); }
"#,
    r#"
graph { node lab: u32 = self as u32; }
output lab;
kernel prop() { forall u in worklist { let mut m = u.lab; for v in u.neighbors() { if v.lab < m { m = v.lab; } }
    if m < u.lab { atomic_min(u.lab, m); for v in u.neighbors() { push(v); } } } }
fn main() { iterate prop() initial G.nodes(); }
"#,
];

/// A random symmetric multigraph (every edge both ways).
fn random_symmetric_graph(seed: u64) -> Graph {
    let mut rng = Rng(seed);
    let n = 2 + rng.below(80) as u32;
    let m = rng.below(u64::from(n) * 2 + 1);
    let mut edges = EdgeList::new(n, false);
    for _ in 0..m {
        let (u, v) = (rng.below(u64::from(n)) as u32, rng.below(u64::from(n)) as u32);
        edges.push(u, v, 1);
        edges.push(v, u, 1);
    }
    build(edges, &BuildOptions::AS_GIVEN).expect("a valid edge list builds")
}

#[test]
fn pulled_values_reach_pushed_nodes_before_they_run_asynchronously() {
    use grail_runtime::multi::{MultiOptions, MultiProgram};
    let (compiler, cache) = toolchain("pulls");
    for (p, source) in PULLS.iter().enumerate() {
        let module = grail_algos::suite::compile_source("pull", source).unwrap();
        let module = grail_ir::opt::optimize(module, &OptConfig::all()).unwrap();
        let one = grail_runtime::cpu::CpuProgram::compile(module.clone(), &compiler, Some(&cache)).unwrap();
        let programs: Vec<MultiProgram> = (2..=4)
            .map(|k| MultiProgram::compile(module.clone(), &vec![Device::Cpu; k], &compiler, Some(&cache)).unwrap())
            .collect();
        for seed in 0..40u64 {
            let graph = random_symmetric_graph(300 + seed);
            let alone =
                one.run(&graph, &[], &grail_runtime::cpu::RunOptions { threads: 1 }, &mut std::io::sink()).unwrap();
            for (program, k) in programs.iter().zip(2u32..) {
                if k > graph.num_nodes() {
                    continue;
                }
                let method = [Method::Random, Method::Ordered][seed as usize % 2];
                let partitioning = grail_graph::partition::partition(&graph, k, method, seed).unwrap();
                let options = MultiOptions {
                    threads: k as usize,
                    mode: Mode::Async,
                    jitter: Some(seed * 8 + u64::from(k)),
                    topology: if seed % 3 == 2 { Topology::Ring } else { Topology::Direct },
                    ..MultiOptions::default()
                };
                let run = program.run(&graph, &partitioning, &[], &options, &mut std::io::sink()).unwrap();
                assert!(run.sync.async_loops > 0, "program {p}, seed {seed}, {k} parts: no asynchronous loop");
                assert_eq!(
                    run.output.properties[0],
                    alone.properties[0],
                    "program {p}, seed {seed}, {k} parts, {}: labels",
                    method.name()
                );
            }
        }
    }
}

const UPDATE_FUNCTION: &str = include_str!("../../grail-lang/tests/programs/update_function.grail");

/// `update_function.grail`'s `marked` on a partitioned graph: its own update function adds up the
/// marks, so each node counts the parts that hold an in-neighbour of it; `best`, merged by the
/// larger value, ends as on one device.
#[test]
fn a_programs_own_update_functions_merge_the_ghosts() {
    use grail_graph::properties::Column;
    use grail_runtime::multi::{MultiOptions, MultiProgram};
    let module = grail_algos::suite::compile_source("update_function", UPDATE_FUNCTION).unwrap();
    let module = grail_ir::opt::optimize(module, &OptConfig::all()).unwrap();
    let compiler = CCompiler::detect().expect("the tests need a C compiler");
    let dir = std::env::temp_dir().join(format!("grail-test-cache-update-{}", std::process::id()));
    let cache = ModuleCache::at(dir);
    let u32s = |column: &Column| match column {
        Column::U32(values) => values.clone(),
        other => panic!("a u32 column, not {other:?}"),
    };
    for seed in 0..12 {
        let graph = random_graph(seed);
        let one = grail_runtime::cpu::CpuProgram::compile(module.clone(), &compiler, Some(&cache)).unwrap();
        let alone = one.run(&graph, &[], &grail_runtime::cpu::RunOptions { threads: 1 }, &mut std::io::sink()).unwrap();
        let best_alone = u32s(&alone.properties[1]);
        for k in [2, 3, 4] {
            for mode in [Mode::Bsp, Mode::Async] {
                let devices = vec![Device::Cpu; k];
                let program = MultiProgram::compile(module.clone(), &devices, &compiler, Some(&cache)).unwrap();
                let partitioning = grail_graph::partition::partition(&graph, k as u32, Method::Random, seed).unwrap();
                let options = MultiOptions { threads: k, mode, jitter: None, ..MultiOptions::default() };
                let run = program.run(&graph, &partitioning, &[], &options, &mut std::io::sink()).unwrap();
                let (marked, best) = (u32s(&run.output.properties[0]), u32s(&run.output.properties[1]));
                let mut parts: Vec<Vec<u32>> = vec![Vec::new(); graph.num_nodes() as usize];
                for u in 0..graph.num_nodes() {
                    for &v in graph.out().neighbors(u) {
                        parts[v as usize].push(partitioning.owner_of(u));
                    }
                }
                for (v, owners) in parts.iter_mut().enumerate() {
                    owners.sort_unstable();
                    owners.dedup();
                    assert_eq!(marked[v], owners.len() as u32, "seed {seed}, {k} parts, {mode:?}: node {v}'s marks");
                }
                assert_eq!(best, best_alone, "seed {seed}, {k} parts, {mode:?}: the largest label reaching each node");
            }
        }
    }
}

/// The suite's partitioned variants' outlined loops can run on every GPU at once, exchanging on
/// the devices (their host code computes with locals only); a loop whose host code touches a
/// property or the graph cannot, and says why.
#[test]
fn the_partitioned_variants_loops_can_run_on_every_gpu_at_once() {
    let opt = OptConfig::all();
    for (algorithm, name) in
        [("pr", "push"), ("bfs", "do"), ("bfs", "wl"), ("bfs", "async"), ("sssp", "wl"), ("sssp", "ds"), ("cc", "lp")]
    {
        let variant = Variant::find(algorithm.parse::<Algorithm>().unwrap(), Some(name)).unwrap();
        let module = grail_algos::suite::optimized(variant, &opt).unwrap();
        let regions = grail_ir::opt::outline::outlined_regions(&module.main.block);
        assert!(!regions.is_empty(), "{algorithm} {name} has no outlined loop");
        for region in regions {
            assert_eq!(grail_ir::analysis::partitioned_region_obstacle(region), None, "{algorithm} {name}");
        }
    }
    for (body, why) in [
        ("source.rank = 0.5;", "it stores to a property"),
        ("if source.rank > 2.0 { break; }", "it reads a property"),
        ("rounds += G.num_nodes() as u32;", "it reads the graph"),
    ] {
        let source = format!(
            "graph {{ node rank: f64 = 1.0; }}\nparam source: Node;\nkernel k() -> sum f64 {{ forall u in G.nodes() {{ reduce u.rank; }} }}\n\
             fn main() {{ let mut rounds: u32 = 0; iterate {{ let s = invoke k(); rounds += 1; {body} }} until rounds > 3; }}"
        );
        let module = grail_algos::suite::compile_source("region", &source).unwrap_or_else(|e| panic!("{body}: {e}"));
        let module = grail_ir::optimize(module, &opt).unwrap();
        let regions = grail_ir::opt::outline::outlined_regions(&module.main.block);
        let obstacle = regions.iter().find_map(|r| grail_ir::analysis::partitioned_region_obstacle(r));
        assert!(obstacle.as_deref().is_some_and(|o| o.contains(why)), "{body}: {obstacle:?}");
    }
}

/// Two union-find sets on a partitioned graph: `find` as a value (`as u32`, and `==` between
/// finds read through ghosts), unions after a join (the second join starts from the first's
/// classes), on 2-4 CPU devices in every partition method: every column as on one device.
const TWO_SETS: &str = r#"
graph { node a: u32; node b: u32; node same: u32; node again: u32; set s; set t; }
output a; output b; output same; output again;
kernel join_s() { forall e in G.edges() { if (e.src as u32) % 3 != 0 { G.s.union(e.src, e.dst); } } }
kernel join_t() { forall e in G.edges() { if (e.dst as u32) % 2 == 0 { G.t.union(e.src, e.dst); } } }
kernel label() { forall u in G.nodes() { u.a = G.s.find(u) as u32; u.b = G.t.find(u) as u32; } }
kernel count() {
    forall u in G.nodes() {
        for v in u.neighbors() { if G.s.find(u) == G.s.find(v) { atomic_add(u.same, 1); } }
    }
}
kernel join_rest() { forall e in G.edges() { if (e.src as u32) % 3 == 0 { G.s.union(e.src, e.dst); } } }
kernel relabel() { forall u in G.nodes() { u.again = G.s.find(u) as u32; } }
fn main() {
    invoke join_s(); invoke join_t(); invoke label(); invoke count(); invoke join_rest(); invoke relabel();
}
"#;

/// A C compiler and a module cache of the test's own (`what` names its directory).
fn toolchain(what: &str) -> (CCompiler, ModuleCache) {
    let compiler = CCompiler::detect().expect("the tests need a C compiler");
    let dir = std::env::temp_dir().join(format!("grail-test-cache-{what}-{}", std::process::id()));
    (compiler, ModuleCache::at(dir))
}

/// A `u32` column's values.
fn u32_values(column: &grail_graph::properties::Column) -> Vec<u32> {
    match column {
        grail_graph::properties::Column::U32(values) => values.clone(),
        other => panic!("a u32 column, not {other:?}"),
    }
}

#[test]
fn union_find_sets_are_joined_across_the_parts() {
    use grail_runtime::multi::{MultiOptions, MultiProgram};
    let module = grail_algos::suite::compile_source("two_sets", TWO_SETS).unwrap();
    let module = grail_ir::opt::optimize(module, &OptConfig::all()).unwrap();
    assert!(grail_ir::analysis::partition_obstacles(&module).is_empty());
    let (compiler, cache) = toolchain("sets");
    let one = grail_runtime::cpu::CpuProgram::compile(module.clone(), &compiler, Some(&cache)).unwrap();
    let programs: Vec<MultiProgram> = (2..=4)
        .map(|k| MultiProgram::compile(module.clone(), &vec![Device::Cpu; k], &compiler, Some(&cache)).unwrap())
        .collect();
    for seed in 0..6 {
        let graph = random_graph(seed);
        let alone = one.run(&graph, &[], &grail_runtime::cpu::RunOptions { threads: 1 }, &mut std::io::sink()).unwrap();
        let expected: Vec<Vec<u32>> = (0..4).map(|p| u32_values(&alone.properties[p])).collect();
        for (program, k) in programs.iter().zip(2..) {
            for method in methods() {
                let partitioning = grail_graph::partition::partition(&graph, k, method, seed).unwrap();
                let options = MultiOptions { threads: k as usize, ..MultiOptions::default() };
                let run = program.run(&graph, &partitioning, &[], &options, &mut std::io::sink()).unwrap();
                for (p, name) in ["a", "b", "same", "again"].iter().enumerate() {
                    assert_eq!(
                        u32_values(&run.output.properties[p]),
                        expected[p],
                        "seed {seed}, {k} parts, {} partitioning: `{name}`",
                        method.name()
                    );
                }
            }
        }
    }
}

/// A set in a program whose own initial values are not the node's alone (a degree): its parts
/// do not run the defaults over their ghosts, whose classes then come from their owners (the
/// class is read through ghosts, so the superstep copies it); the labels are those of one
/// device.
#[test]
fn sets_start_their_classes_on_every_slot_beside_defaults_that_are_not_local() {
    use grail_runtime::multi::{MultiOptions, MultiProgram};
    let source = "graph { node label: u32; node d: u32 = self.degree() as u32; set comp; }
        output label; output d;
        kernel join() { forall e in G.edges() { G.comp.union(e.src, e.dst); } }
        kernel spread() { forall u in G.nodes() { u.label = G.comp.find(u) as u32; } }
        fn main() { invoke join(); invoke spread(); }";
    let module = grail_algos::suite::compile_source("degrees", source).unwrap();
    assert!(grail_ir::analysis::node_local_defaults(&module).is_none());
    let (compiler, cache) = toolchain("start");
    let one = grail_runtime::cpu::CpuProgram::compile(module.clone(), &compiler, Some(&cache)).unwrap();
    let program = MultiProgram::compile(module, &[Device::Cpu; 3], &compiler, Some(&cache)).unwrap();
    for seed in 0..4 {
        let graph = random_graph(seed);
        let alone = one.run(&graph, &[], &grail_runtime::cpu::RunOptions { threads: 1 }, &mut std::io::sink()).unwrap();
        let partitioning = grail_graph::partition::partition(&graph, 3, Method::Random, seed).unwrap();
        let options = MultiOptions { threads: 3, ..MultiOptions::default() };
        let run = program.run(&graph, &partitioning, &[], &options, &mut std::io::sink()).unwrap();
        assert_eq!(u32_values(&run.output.properties[0]), u32_values(&alone.properties[0]), "seed {seed}");
    }
}

/// A join finished through the host (`MultiOptions::host_join_after`: after one round on the
/// devices, or two) gives the same classes as rounds on the devices alone.
#[test]
fn a_join_finished_through_the_host_gives_the_same_classes() {
    use grail_runtime::multi::{MultiOptions, MultiProgram};
    let module = grail_algos::suite::compile_source("two_sets", TWO_SETS).unwrap();
    let (compiler, cache) = toolchain("host-join");
    let one = grail_runtime::cpu::CpuProgram::compile(module.clone(), &compiler, Some(&cache)).unwrap();
    for k in [2u32, 4] {
        let program =
            MultiProgram::compile(module.clone(), &vec![Device::Cpu; k as usize], &compiler, Some(&cache)).unwrap();
        for seed in 0..4 {
            let graph = random_graph(seed);
            let alone =
                one.run(&graph, &[], &grail_runtime::cpu::RunOptions { threads: 1 }, &mut std::io::sink()).unwrap();
            for method in [Method::Random, Method::Ordered] {
                let partitioning = grail_graph::partition::partition(&graph, k, method, seed).unwrap();
                for after in [1, 2] {
                    let options =
                        MultiOptions { threads: k as usize, host_join_after: Some(after), ..MultiOptions::default() };
                    let run = program.run(&graph, &partitioning, &[], &options, &mut std::io::sink()).unwrap();
                    for p in 0..4 {
                        assert_eq!(
                            u32_values(&run.output.properties[p]),
                            u32_values(&alone.properties[p]),
                            "seed {seed}, {k} parts, {} partitioning, the host after {after} rounds: column {p}",
                            method.name()
                        );
                    }
                }
            }
        }
    }
}

/// The parts' classes are joined before a kernel that finds only when a kernel has united since
/// the last join: on one part (no ghosts, so each join is one round), `two_sets` joins before
/// `label` and before `relabel`, not before `count`.
#[test]
fn sets_are_joined_only_after_unions() {
    use grail_runtime::multi::{MultiOptions, MultiProgram};
    let module = grail_algos::suite::compile_source("two_sets", TWO_SETS).unwrap();
    let (compiler, cache) = toolchain("joins");
    let program = MultiProgram::compile(module, &[Device::Cpu], &compiler, Some(&cache)).unwrap();
    let graph = random_graph(1);
    let partitioning = grail_graph::partition::partition(&graph, 1, Method::Ordered, 1).unwrap();
    let run = program.run(
        &graph,
        &partitioning,
        &[],
        &MultiOptions { threads: 2, ..MultiOptions::default() },
        &mut std::io::sink(),
    );
    let kernels = run.unwrap().output.stats.kernels;
    let invocations = |name: &str| kernels.iter().find(|k| k.name == name).map(|k| k.invocations);
    for join in ["s.join", "t.join"] {
        assert_eq!(invocations(join), Some(2), "{join}: {kernels:#?}");
    }
    assert_eq!(invocations("count"), Some(1));
}

#[test]
fn sets_whose_find_gives_a_node_are_refused_with_the_reason() {
    let reasons = |source: &str| {
        let module = grail_algos::suite::compile_source("refused", source).unwrap();
        grail_ir::analysis::partition_obstacles(&module).join("; ")
    };
    let as_node = reasons(
        "graph { node label: u32; set s; } output label;
         kernel k() { forall u in G.nodes() { u.label = G.s.find(u).label; } }
         fn main() { invoke k(); }",
    );
    assert!(as_node.contains("uses a `find` result as a node"), "{as_node}");
    let union_result = reasons(
        "graph { node label: u32; set s; } output label;
         kernel k() { forall e in G.edges() { if G.s.union(e.src, e.dst) { e.src.label = 1; } } }
         fn main() { invoke k(); }",
    );
    assert!(union_result.contains("uses a `union` result"), "{union_result}");
    let in_pipe = reasons(
        "graph { node label: u32; set s; } output label;
         kernel k() { forall u in worklist { u.label = G.s.find(u) as u32; } }
         fn main() { pipe initial G.nodes() { invoke k(); } }",
    );
    assert!(in_pipe.contains("inside a `pipe`"), "{in_pipe}");
}
