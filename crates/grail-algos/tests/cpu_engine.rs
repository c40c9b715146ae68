//! The CPU executor's scheduling, through grail programs whose results are known exactly:
//! nested loops of hubs shared among the threads (split sites), outlined regions run as one
//! persistent parallel region (left by `break`, or by an error), and the weight column read in
//! place from the graph unless something writes it. Each program runs with one to three threads
//! and under configurations that switch each mechanism on and off.

use grail_algos::suite::{SuiteProgram, compile_source};
use grail_algos::{RunParams, VARIANTS, verify};
use grail_graph::Graph;
use grail_graph::builder::{BuildOptions, EdgeList, build};
use grail_graph::properties::Column;
use grail_ir::{OptConfig, Stmt, optimize};
use grail_runtime::ModuleCache;
use grail_runtime::cpu::{CCompiler, CpuProgram, RunOptions, RunOutput, Value};

fn cache() -> ModuleCache {
    ModuleCache::at(std::env::temp_dir().join(format!("grail-test-cache-engine-{}", std::process::id())))
}

fn config(text: &str) -> OptConfig {
    text.parse().expect("a valid configuration")
}

fn compile(name: &str, source: &str, opt: &OptConfig) -> CpuProgram {
    let module = compile_source(name, source).unwrap_or_else(|e| panic!("{e}"));
    let module = optimize(module, opt).unwrap_or_else(|e| panic!("{name} with {opt}: {e}"));
    let compiler = CCompiler::detect().expect("the tests need a C compiler");
    CpuProgram::compile(module, &compiler, Some(&cache())).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn run(program: &CpuProgram, graph: &Graph, params: &[Option<Value>], threads: usize) -> RunOutput {
    program.run(graph, params, &RunOptions { threads }, &mut std::io::sink()).unwrap()
}

fn u64s(column: &Column) -> &[u64] {
    match column {
        Column::U64(v) => v,
        other => panic!("expected a u64 column, got {:?}", other.ty()),
    }
}

/// `hubs` nodes joined to every other node (both ways), the rest on a ring, weights 1 to 9:
/// adjacency loops of thousands of iterations beside loops of two or three.
fn hub_graph(n: u32, hubs: u32) -> Graph {
    let mut edges = EdgeList::new(n, true);
    let mut w = 0u32;
    let mut weight = || {
        w = w % 9 + 1;
        w
    };
    for h in 0..hubs {
        for v in hubs..n {
            edges.push(h, v, weight());
            edges.push(v, h, weight());
        }
    }
    for v in hubs..n {
        let next = if v + 1 == n { hubs } else { v + 1 };
        edges.push(v, next, weight());
        edges.push(next, v, weight());
    }
    build(edges, &BuildOptions::AS_GIVEN).unwrap()
}

const THREADS: [usize; 3] = [1, 2, 3];

#[test]
fn hub_loops_are_shared_among_threads_and_every_variant_stays_right() {
    let graph = hub_graph(6000, 3);
    let compiler = CCompiler::detect().expect("the tests need a C compiler");
    for opt in [OptConfig::all(), config("np=fg"), config("none")] {
        for variant in VARIANTS {
            let program = SuiteProgram::compile(variant, &compiler, Some(&cache()), &opt)
                .unwrap_or_else(|e| panic!("{} with {opt}: {e}", variant.program));
            for threads in THREADS {
                // A ring node as the source: its frontier holds the hubs, which are split.
                let params = RunParams { threads, source: Some(100), ..Default::default() };
                let run = program.run(&graph, &params).unwrap_or_else(|e| panic!("{}: {e}", variant.program));
                verify(variant.algorithm, &graph, &params, &run.output)
                    .unwrap_or_else(|e| panic!("{} with {opt}, {threads} threads: {e}", variant.program));
                if variant.program == "bfs" {
                    let expand = run.stats.kernels.iter().find(|k| k.name == "expand").unwrap();
                    let splits = threads > 1 && !opt.np.is_serial();
                    assert_eq!(expand.split > 0, splits, "bfs with {opt}, {threads} threads: {} split", expand.split);
                }
            }
        }
    }
}

/// A nested loop whose closure holds values of several types, with atomics and a reduction in
/// its body: the same result whether the hubs' loops are split or not.
const CLOSURES: &str = r#"
graph { node w: f32 = 0.5; node hits: u64; }
output hits;
kernel spread(scale: u64) -> sum u64 {
    forall u in G.nodes() {
        let a = (u as u32) as u64 * scale;
        let f: f32 = u.w * 2.0;
        let even = u.degree() % 2 == 0;
        let s: i32 = 0 - 3;
        forall v in u.neighbors() where (v as u32) != 1 {
            if even { atomic_add(v.hits, a + 1); } else { atomic_add(v.hits, 1); }
            if f > 0.9 && s < 0 { reduce 1; }
        }
    }
}
fn main() -> u64 { return invoke spread(3); }
"#;

#[test]
fn split_loops_restore_their_closure() {
    let graph = hub_graph(5000, 2);
    let out = graph.out();
    let mut hits = vec![0u64; graph.num_nodes() as usize];
    let mut count = 0u64;
    for u in 0..graph.num_nodes() {
        let add = if out.degree(u) % 2 == 0 { u64::from(u) * 3 + 1 } else { 1 };
        for &v in out.neighbors(u) {
            if v != 1 {
                hits[v as usize] += add;
                count += 1;
            }
        }
    }
    for opt in [OptConfig::all(), config("np=tb"), config("none")] {
        let program = compile("closures", CLOSURES, &opt);
        for threads in THREADS {
            let output = run(&program, &graph, &[], threads);
            assert_eq!(u64s(&output.properties[1]), hits.as_slice(), "with {opt}, {threads} threads");
            assert_eq!(output.result, Some(Value::U64(count)), "with {opt}, {threads} threads");
            let splits = output.stats.kernels[0].split;
            assert_eq!(splits > 0, threads > 1 && !opt.np.is_serial(), "with {opt}, {threads} threads");
        }
    }
}

/// An outlined pipe left by `break` after `limit` rounds, then an outlined iterate: every node
/// is bumped once a round.
const BREAKS: &str = r#"
graph { node count: u32; }
param limit: u32 = 25;
output count;
kernel bump() {
    forall u in worklist { u.count += 1; push(u); }
}
kernel total() -> sum u64 { forall u in G.nodes() { reduce u.count as u64; } }
fn main() -> u64 {
    let mut round: u32 = 0;
    pipe initial G.nodes() {
        invoke bump();
        round += 1;
        if round == limit { break; }
    }
    let mut again: u32 = 0;
    iterate bump() initial G.nodes() {
        again += 1;
        if again == 3 { break; }
    }
    return invoke total();
}
"#;

#[test]
fn outlined_regions_left_by_break() {
    for opt in [OptConfig::all(), config("outline=all"), config("none")] {
        let program = compile("breaks", BREAKS, &opt);
        let outlined = program
            .module()
            .main
            .block
            .iter()
            .filter(|s| matches!(s, Stmt::Pipe(p) if p.outlined) || matches!(s, Stmt::Iterate(i) if i.outlined))
            .count();
        assert_eq!(outlined, if opt.outline == grail_ir::opt::Outline::All { 2 } else { 0 }, "with {opt}");
        // Below, between and above the sizes at which phases are shared among threads.
        for n in [1u32, 100, 200, 3000] {
            let graph = build(EdgeList::new(n, false), &BuildOptions::AS_GIVEN).unwrap();
            for threads in THREADS {
                for limit in [1u32, 25] {
                    let output = run(&program, &graph, &[Some(Value::U32(limit))], threads);
                    let Column::U32(count) = &output.properties[0] else { panic!("count is u32") };
                    assert!(count.iter().all(|&c| c == limit + 3), "n {n}, limit {limit}, {threads} threads, {opt}");
                    assert_eq!(output.result, Some(Value::U64(u64::from(n) * u64::from(limit + 3))));
                }
            }
        }
    }
}

/// An outlined region whose kernel fails: the error comes back, and the program runs again.
const FAILS: &str = r#"
graph { node seen: u32; }
param bad: u32 = 0;
output seen;
kernel hop(round: u32) {
    forall u in worklist {
        u.seen += 1;
        if round == bad { push((G.num_nodes() + 5) as Node); } else if round < 10 { push(u); }
    }
}
fn main() {
    let mut round: u32 = 1;
    pipe initial G.nodes() {
        invoke hop(round);
        round += 1;
    }
}
"#;

#[test]
fn an_error_inside_an_outlined_region_ends_the_run() {
    let program = compile("fails", FAILS, &OptConfig::all());
    let graph = build(EdgeList::new(500, false), &BuildOptions::AS_GIVEN).unwrap();
    for threads in THREADS {
        let error = program
            .run(&graph, &[Some(Value::U32(4))], &RunOptions { threads }, &mut std::io::sink())
            .expect_err("a pushed node beyond the graph");
        assert!(error.to_string().contains("pushed node 505"), "{error}");
        let output = run(&program, &graph, &[Some(Value::U32(0))], threads);
        let Column::U32(seen) = &output.properties[0] else { panic!("seen is u32") };
        assert!(seen.iter().all(|&s| s == 10), "{threads} threads");
    }
}

/// Weights read in place, written by a kernel, written by host code: the sums are the same as
/// computed here, and the graph's own weights never change.
const READS: &str = r#"
graph { edge weight: u32; node total: u64; }
output total;
kernel gather() { forall u in G.nodes() { for e in u.out_edges() { u.total += e.weight as u64; } } }
fn main() { invoke gather(); }
"#;
const KERNEL_WRITES: &str = r#"
graph { edge weight: u32; node total: u64; }
output total;
kernel double() { forall e in G.edges() { e.weight = e.weight * 2; } }
kernel gather() { forall u in G.nodes() { for e in u.out_edges() { u.total += e.weight as u64; } } }
fn main() { invoke double(); invoke gather(); }
"#;
const HOST_WRITES: &str = r#"
graph { edge weight: u32; node total: u64; }
output total;
kernel gather() { forall u in G.nodes() { for e in u.out_edges() { u.total += e.weight as u64; } } }
fn main() { let first = 0 as Edge; first.weight = 1000; invoke gather(); }
"#;

#[test]
fn weights_are_read_in_place_unless_written() {
    let graph = hub_graph(300, 1);
    let weights = graph.out().weights().expect("weighted").to_vec();
    let sums = |scale: u64, first: Option<u64>| -> Vec<u64> {
        (0..graph.num_nodes())
            .map(|u| {
                graph
                    .out()
                    .edge_range(u)
                    .map(|e| match (e, first) {
                        (0, Some(w)) => w,
                        _ => u64::from(weights[e]) * scale,
                    })
                    .sum()
            })
            .collect()
    };
    let cases = [
        ("reads", READS, sums(1, None)),
        ("kernel_writes", KERNEL_WRITES, sums(2, None)),
        ("host_writes", HOST_WRITES, sums(1, Some(1000))),
    ];
    for (name, source, expected) in cases {
        let program = compile(name, source, &OptConfig::all());
        for threads in THREADS {
            let output = run(&program, &graph, &[], threads);
            assert_eq!(u64s(&output.properties[1]), expected.as_slice(), "{name}, {threads} threads");
            assert_eq!(graph.out().weights(), Some(weights.as_slice()), "{name} changed the graph's weights");
        }
    }
}

/// Columns handed back by `CpuProgram::recycle` (or made ahead by `reserve_columns`) serve the
/// next run zeroed: a program that counts into a property without an initializer counts the
/// same on every run.
#[test]
fn recycled_columns_start_at_zero() {
    let source = "graph { node hits: u64; node seen: bool; }
        output hits;
        output seen;
        kernel tally() { forall v in G.nodes() { for e in v.out_edges() { atomic_add(e.dst.hits, 1); e.dst.seen = true; } } }
        fn main() { invoke tally(); }";
    let program = compile("tally", source, &OptConfig::all());
    let graph = hub_graph(300, 2);
    let in_degree: Vec<u64> = {
        let mut d = vec![0u64; graph.num_nodes() as usize];
        for &t in graph.out().targets() {
            d[t as usize] += 1;
        }
        d
    };
    // Columns reserved before the first run serve it as recycled ones do.
    program.reserve_columns(graph.num_nodes() as usize, graph.num_edges() as usize);
    for round in 0..3 {
        let output = run(&program, &graph, &[], 2);
        assert_eq!(u64s(&output.properties[0]), in_degree.as_slice(), "run {round}");
        program.recycle(output.properties);
    }
}

/// `ln` and `exp` in kernels, in folded constants and in host code, on f64 and f32: sums of
/// logarithms added atomically come back as the products they stand for.
#[test]
fn logarithms_and_exponentials() {
    let source = "graph { node logs: f64; node product: f64; node half: f32; edge weight: u32; }
        output product;
        output half;
        const LN2: f64 = ln(2.0);
        kernel gather() { forall v in G.nodes() { for e in v.out_edges() { atomic_add(e.dst.logs, ln(e.weight as f64)); } } }
        kernel settle() { forall v in G.nodes() { v.product = exp(v.logs); v.half = exp(ln(8.0f32) - LN2 as f32); } }
        fn main() -> f64 { invoke gather(); invoke settle(); return exp(LN2 * 3.0); }";
    let graph = hub_graph(200, 2);
    let out = graph.out();
    let mut product = vec![1.0f64; graph.num_nodes() as usize];
    for u in 0..graph.num_nodes() {
        for (&v, &w) in out.neighbors(u).iter().zip(&out.weights().unwrap()[out.edge_range(u)]) {
            product[v as usize] *= f64::from(w);
        }
    }
    for opt in [OptConfig::all(), config("none")] {
        let program = compile("logs", source, &opt);
        for threads in THREADS {
            let output = run(&program, &graph, &[], threads);
            let Column::F64(got) = &output.properties[1] else { panic!("product is not f64") };
            for (v, (got, want)) in got.iter().zip(&product).enumerate() {
                assert!((got - want).abs() <= want * 1e-12, "node {v}: {got} against {want}, {threads} threads");
            }
            let Column::F32(half) = &output.properties[2] else { panic!("half is not f32") };
            assert!(half.iter().all(|h| (h - 4.0).abs() < 1e-5), "{:?}", &half[..3]);
            let Some(Value::F64(eight)) = output.result else { panic!("{:?}", output.result) };
            assert!((eight - 8.0).abs() < 1e-12, "{eight}");
        }
    }
}
