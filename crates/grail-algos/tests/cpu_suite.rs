//! Every suite variant, compiled by grail and run on the CPU, agrees with the references: on
//! hundreds of small random graphs (directed, with self-loops, duplicate edges, isolated nodes,
//! several components) and on generated graphs of every kind, with one and with two threads;
//! compiled with every optimization on (the default) and under a sample of configurations.

use std::sync::OnceLock;

use grail_algos::suite::SuiteProgram;
use grail_algos::{RunParams, VARIANTS, verify};
use grail_graph::builder::{BuildOptions, EdgeList, build};
use grail_graph::generate::{GenOptions, Generator, generate};
use grail_graph::{Graph, NoProgress};
use grail_ir::OptConfig;
use grail_runtime::ModuleCache;
use grail_runtime::cpu::CCompiler;

/// Every variant compiled once for the whole test binary, cached in a private folder.
fn programs() -> &'static [SuiteProgram] {
    static PROGRAMS: OnceLock<Vec<SuiteProgram>> = OnceLock::new();
    PROGRAMS.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("grail-test-cache-{}", std::process::id()));
        let cache = ModuleCache::at(dir);
        let compiler = CCompiler::detect().expect("the tests need a C compiler");
        VARIANTS
            .iter()
            .map(|v| {
                SuiteProgram::compile(v, &compiler, Some(&cache), &OptConfig::all())
                    .unwrap_or_else(|e| panic!("{}: {e}", v.program))
            })
            .collect()
    })
}

/// Configurations that differ in every optimization, each once: what the passes decide must
/// not change a result.
fn sample_configs() -> Vec<OptConfig> {
    [
        "none",
        "np=tb",
        "np=wp,coop=warp",
        "np=fg,coop=block,block=64",
        "outline=all,np=tb+fg,backoff=on",
        "outline=all,np=wp+fg,coop=block,ldg=on,block=1024",
        "all,np=tb+wp,coop=none",
        "all,np=serial,local=on",
    ]
    .iter()
    .map(|text| text.parse().expect("a valid configuration"))
    .collect()
}

/// A small deterministic generator (SplitMix64), so failures reproduce from the printed seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A random multigraph: some nodes isolated, self-loops and duplicates kept, edges clustered in
/// a few groups so that there are several components.
fn random_graph(seed: u64) -> Graph {
    let mut rng = Rng(seed);
    let n = 1 + rng.below(40) as u32;
    let groups = 1 + rng.below(4) as u32;
    let m = rng.below(u64::from(n) * 3 + 1);
    let weighted = rng.below(4) != 0;
    let mut edges = EdgeList::new(n, weighted);
    for _ in 0..m {
        // Nodes congruent to `group` modulo `groups`: edges never leave a group.
        let group = (rng.below(u64::from(groups)) as u32).min(n - 1);
        let count = u64::from((n - 1 - group) / groups + 1);
        let u = group + rng.below(count) as u32 * groups;
        let v = if rng.below(10) == 0 { u } else { group + rng.below(count) as u32 * groups };
        // Few distinct weights make ties, which spanning forests must break consistently.
        let spread = if rng.below(3) == 0 { 3 } else { 100 };
        let w = 1 + rng.below(spread) as u32;
        edges.push(u, v, w);
        if rng.below(8) == 0 {
            edges.push(u, v, w + 1);
        }
    }
    build(edges, &BuildOptions::AS_GIVEN).expect("a valid edge list builds")
}

fn check(program: &SuiteProgram, graph: &Graph, threads: usize, what: &str) {
    let variant = program.variant();
    let params = RunParams { threads, source: Some(u64::from(graph.num_nodes() / 2)), ..Default::default() };
    let run = program.run(graph, &params).unwrap_or_else(|e| panic!("{} on {what}: {e}", variant.program));
    if let Err(e) = verify(variant.algorithm, graph, &params, &run.output) {
        panic!(
            "{} on {what} ({} nodes, {} edges, {threads} threads): {e}",
            variant.program,
            graph.num_nodes(),
            graph.num_edges()
        );
    }
}

#[test]
fn every_variant_agrees_with_the_reference_on_random_small_graphs() {
    for seed in 0..300u64 {
        let graph = random_graph(seed);
        for program in programs() {
            check(program, &graph, 1 + (seed % 2) as usize, &format!("random graph seed {seed}"));
        }
    }
}

/// `random_graph(seed)` with real weights: the integer ones divided by 7 (ties kept), some 0,
/// and with `negative` some below 0.
fn real_weighted_graph(seed: u64, negative: bool) -> Graph {
    let graph = random_graph(seed);
    let csr = graph.out();
    let mut edges = Vec::new();
    for u in 0..graph.num_nodes() {
        for (v, w) in csr.weighted_neighbors(u) {
            let real = if w % 11 == 0 { 0.0 } else { w as f32 / 7.0 };
            edges.push((u, v, if negative && w % 5 == 0 { -real } else { real }));
        }
    }
    build(EdgeList::from_real_triples(graph.num_nodes(), &edges).unwrap(), &BuildOptions::AS_GIVEN).unwrap()
}

#[test]
fn real_weights_give_verified_distances_and_forests() {
    let dir = std::env::temp_dir().join(format!("grail-test-cache-real-{}", std::process::id()));
    let cache = ModuleCache::at(dir);
    let compiler = CCompiler::detect().expect("the tests need a C compiler");
    let real = Some(grail_graph::WeightKind::Real);
    let programs: Vec<SuiteProgram> = ["nf", "wl"]
        .iter()
        .map(|name| grail_algos::Variant::find(grail_algos::Algorithm::Sssp, Some(name)).unwrap())
        .chain([grail_algos::Variant::find(grail_algos::Algorithm::Mst, None).unwrap()])
        .map(|v| {
            let v = v.for_weights(real).unwrap();
            SuiteProgram::compile(v, &compiler, Some(&cache), &OptConfig::all()).unwrap()
        })
        .collect();
    assert_eq!(programs[0].variant().program, "sssp_nf_real");
    for seed in 0..120u64 {
        for program in &programs {
            let negative = program.variant().algorithm == grail_algos::Algorithm::Mst;
            let graph = real_weighted_graph(seed, negative);
            check(program, &graph, 1 + (seed % 2) as usize, &format!("real-weighted graph seed {seed}"));
        }
    }
    // An integer program on real weights is refused, naming what to do.
    let graph = real_weighted_graph(1, false);
    let integer = SuiteProgram::compile(
        grail_algos::Variant::find(grail_algos::Algorithm::Sssp, Some("bf")).unwrap(),
        &compiler,
        Some(&cache),
        &OptConfig::all(),
    )
    .unwrap();
    let err = integer.run(&graph, &RunParams::default()).unwrap_err().to_string();
    assert!(err.contains("weights are real") && err.contains("--weights round"), "{err}");
}

#[test]
fn every_variant_agrees_with_the_reference_on_generated_graphs() {
    let options = GenOptions { seed: 3, max_weight: Some(255) };
    let cases = [
        ("rmat", Generator::graph500(10), false),
        ("rmat undirected", Generator::graph500(9), true),
        ("random", Generator::Uniform { nodes: 2000, average_degree: 4 }, false),
        ("sparse random", Generator::Uniform { nodes: 3000, average_degree: 1 }, true),
        ("grid", Generator::Grid { rows: 30, cols: 40 }, true),
        ("road", Generator::Road { nodes: 3000 }, true),
    ];
    for (label, generator, undirected) in cases {
        let graph = generate(&generator, &options, undirected, &NoProgress).unwrap();
        for program in programs() {
            for threads in [1, 2, 3] {
                check(program, &graph, threads, label);
            }
        }
    }
}

#[test]
fn empty_and_edgeless_graphs() {
    let edgeless = build(EdgeList::new(5, false), &BuildOptions::AS_GIVEN).unwrap();
    for program in programs() {
        check(program, &edgeless, 2, "an edgeless graph");
    }
    let empty = build(EdgeList::new(0, false), &BuildOptions::AS_GIVEN).unwrap();
    for program in programs() {
        let params = RunParams::default();
        let result = program.run(&empty, &params);
        if program.variant().algorithm.needs_source() {
            let error = result.expect_err("no source in an empty graph").to_string();
            assert!(error.contains("no nodes"), "{error}");
        } else {
            let run = result.unwrap_or_else(|e| panic!("{} on the empty graph: {e}", program.variant().program));
            verify(program.variant().algorithm, &empty, &params, &run.output).unwrap();
        }
    }
}

#[test]
fn stats_count_the_work() {
    let graph = generate(&Generator::Grid { rows: 10, cols: 10 }, &GenOptions::default(), true, &NoProgress).unwrap();
    let bfs = programs().iter().find(|p| p.variant().program == "bfs").unwrap();
    let run = bfs.run(&graph, &RunParams { source: Some(0), threads: 1, ..Default::default() }).unwrap();
    let expand = run.stats.kernels.iter().find(|k| k.name == "expand").expect("bfs has an expand kernel");
    // Corner to corner of a 10x10 grid: 19 levels, each node processed once.
    assert_eq!(expand.invocations, 19);
    assert_eq!(expand.items, 100);
    assert_eq!(expand.pushes, 99);
}

#[test]
fn every_configuration_agrees_with_the_reference() {
    let dir = std::env::temp_dir().join(format!("grail-test-cache-configs-{}", std::process::id()));
    let cache = ModuleCache::at(dir);
    let compiler = CCompiler::detect().expect("the tests need a C compiler");
    let options = GenOptions { seed: 5, max_weight: Some(255) };
    let graphs: Vec<(&str, Graph)> = vec![
        ("rmat", generate(&Generator::graph500(9), &options, false, &NoProgress).unwrap()),
        ("road", generate(&Generator::Road { nodes: 1500 }, &options, true, &NoProgress).unwrap()),
        ("random graph seed 7", random_graph(7)),
    ];
    for config in sample_configs() {
        for variant in VARIANTS {
            let program = SuiteProgram::compile(variant, &compiler, Some(&cache), &config)
                .unwrap_or_else(|e| panic!("{} with {config}: {e}", variant.program));
            for (label, graph) in &graphs {
                check(&program, graph, 2, &format!("{label} with {config}"));
            }
        }
    }
}

/// `graph` as a file of each kind a user may hold, read back: `.gcsr` version 1 (nothing known
/// of the graph) and version 2 with its reverse CSR and in-edge ids (prepared).
fn as_files(graph: &Graph, label: &str) -> Vec<(String, Graph)> {
    use grail_graph::io::{Format, parse_graph, write_gcsr_version_1, write_graph};
    let dir = std::env::temp_dir().join(format!("grail-test-prepared-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let read = |path: &std::path::Path| {
        let bytes = std::fs::read(path).unwrap();
        parse_graph(&bytes, Format::Gcsr, &BuildOptions::AS_GIVEN, &NoProgress).unwrap()
    };
    let v1 = dir.join(format!("{label}-v1.gcsr"));
    write_gcsr_version_1(graph, &v1).unwrap();
    let mut prepared = graph.clone();
    prepared.build_in_edge_ids();
    let v2 = dir.join(format!("{label}-v2.gcsr"));
    write_graph(&prepared, &v2, Some(Format::Gcsr), &NoProgress).unwrap();
    let files =
        vec![(format!("{label} from .gcsr v1"), read(&v1)), (format!("{label} from prepared .gcsr v2"), read(&v2))];
    std::fs::remove_dir_all(&dir).ok();
    assert!(files[1].1.reverse().is_some() && files[1].1.in_edge_ids().is_some());
    files
}

#[test]
fn prepared_and_unprepared_inputs_give_identical_results() {
    let options = GenOptions { seed: 11, max_weight: Some(255) };
    let graphs: Vec<(String, Graph)> = vec![
        ("rmat".into(), generate(&Generator::graph500(9), &options, false, &NoProgress).unwrap()),
        ("rmat undirected".into(), generate(&Generator::graph500(9), &options, true, &NoProgress).unwrap()),
        ("road".into(), generate(&Generator::Road { nodes: 1500 }, &options, true, &NoProgress).unwrap()),
        ("random graph seed 5".into(), random_graph(5)),
        ("random graph seed 9".into(), random_graph(9)),
    ];
    for (label, graph) in &graphs {
        // The graph as built (the builder's facts known), with nothing known, and from files.
        let mut inputs = vec![(format!("{label}, nothing known"), Graph::from_csr(graph.out().clone()))];
        inputs.extend(as_files(graph, label));
        let params = RunParams { threads: 1, source: Some(u64::from(graph.num_nodes() / 2)), ..Default::default() };
        for program in programs() {
            let expected = program.run(graph, &params).unwrap().output;
            for (what, input) in &inputs {
                assert_eq!(input.out(), graph.out(), "{what}");
                let output = program.run(input, &params).unwrap().output;
                assert_eq!(output, expected, "{} on {what}", program.variant().program);
            }
        }
    }
}
