//! The CPU executor through grail programs whose results are known exactly: the weight column
//! read in place from the graph unless something writes it. Each program runs with one to three
//! threads.

use grail_algos::suite::compile_source;
use grail_graph::Graph;
use grail_graph::builder::{BuildOptions, EdgeList, build};
use grail_graph::properties::Column;
use grail_ir::{OptConfig, optimize};
use grail_runtime::ModuleCache;
use grail_runtime::cpu::{CCompiler, CpuProgram, RunOptions, RunOutput, Value};

fn cache() -> ModuleCache {
    ModuleCache::at(std::env::temp_dir().join(format!("grail-test-cache-engine-{}", std::process::id())))
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
