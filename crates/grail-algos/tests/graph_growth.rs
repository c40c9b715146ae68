//! Kernels that add and remove edges (`G.add_edge`, `G.remove_edge`) on the CPU: every count a
//! program sees after adding from many threads (past the first segment of added edges) and
//! after removing input and added edges alike, checked exactly against the graph's own.

use grail_algos::suite::compile_source;
use grail_graph::builder::{BuildOptions, EdgeList, build};
use grail_graph::generate::{GenOptions, Generator, generate};
use grail_graph::properties::Column;
use grail_graph::{Graph, NoProgress};
use grail_runtime::ModuleCache;
use grail_runtime::cpu::{CCompiler, CpuProgram, RunOptions, Value};

const EDGE_GROWTH: &str = include_str!("../../grail-lang/tests/programs/edge_growth.grail");

fn compile(name: &str, source: &str) -> CpuProgram {
    let dir = std::env::temp_dir().join(format!("grail-test-cache-{}", std::process::id()));
    let module = compile_source(name, source).unwrap_or_else(|e| panic!("{e}"));
    let compiler = CCompiler::detect().expect("the tests need a C compiler");
    CpuProgram::compile(module, &compiler, Some(&ModuleCache::at(dir))).unwrap()
}

/// What `edge_growth.grail` must see per node, after the additions and after the removals:
/// (degree, weight sum, head sum).
struct Expected {
    added: Vec<(u32, u64, u64)>,
    pruned: Vec<(u32, u64, u64)>,
    edges_added: u64,
    removed: u64,
}

fn expected(graph: &Graph, extra: u32) -> Expected {
    let n = graph.num_nodes();
    let csr = graph.out();
    let mut result = Expected { added: Vec::new(), pruned: Vec::new(), edges_added: 0, removed: 0 };
    for u in 0..n {
        let mut edges: Vec<(u32, u32)> = csr.weighted_neighbors(u).collect();
        edges.extend((1..=extra).map(|j| ((u + j) % n, j)));
        let tally = |edges: &mut dyn Iterator<Item = &(u32, u32)>| {
            edges.fold((0u32, 0u64, 0u64), |(d, w, h), &(v, weight)| (d + 1, w + u64::from(weight), h + u64::from(v)))
        };
        result.added.push(tally(&mut edges.iter()));
        result.pruned.push(tally(&mut edges.iter().filter(|(_, w)| w % 2 == 1)));
        result.edges_added += edges.len() as u64;
        result.removed += edges.iter().filter(|(_, w)| w % 2 == 0).count() as u64;
    }
    result
}

fn column_u32(column: &Column) -> &[u32] {
    match column {
        Column::U32(values) => values,
        other => panic!("a u32 column, not {other:?}"),
    }
}

fn column_u64(column: &Column) -> &[u64] {
    match column {
        Column::U64(values) => values,
        other => panic!("a u64 column, not {other:?}"),
    }
}

/// A property's id: the program's node properties in declaration order after `weight`.
fn property(name: &str) -> usize {
    const NAMES: [&str; 10] = [
        "weight",
        "degree_added",
        "seen_added",
        "weights_added",
        "heads_added",
        "degree_pruned",
        "seen_pruned",
        "weights_pruned",
        "heads_pruned",
        "foreign",
    ];
    NAMES.iter().position(|n| *n == name).expect("a property of edge_growth.grail")
}

fn check(program: &CpuProgram, graph: &Graph, threads: usize, what: &str) {
    let extra = 3;
    let out = program.run(graph, &[Some(Value::U32(extra))], &RunOptions { threads }, &mut std::io::sink()).unwrap();
    let want = expected(graph, extra);
    let final_edges = want.edges_added - want.removed;
    assert_eq!(
        out.result,
        Some(Value::U64(want.edges_added * 1_000_000_000 + want.removed * 10_000 + final_edges)),
        "{what}, {threads} threads: edges after adding, removed once each, left"
    );
    let p = |name: &str| &out.properties[property(name)];
    assert!(column_u32(p("foreign")).iter().all(|&f| f == 0), "{what}: an added edge's ends or weight, or a tail");
    let degree_added = column_u32(p("degree_added"));
    let seen_added = column_u32(p("seen_added"));
    let degree_pruned = column_u32(p("degree_pruned"));
    let seen_pruned = column_u32(p("seen_pruned"));
    for u in 0..graph.num_nodes() as usize {
        let (degree, weights, heads) = want.added[u];
        assert_eq!((degree_added[u], seen_added[u]), (degree, degree), "{what}, node {u}: degree after adding");
        assert_eq!(column_u64(p("weights_added"))[u], weights, "{what}, node {u}: weights after adding");
        assert_eq!(column_u64(p("heads_added"))[u], heads, "{what}, node {u}: heads after adding");
        let (degree, weights, heads) = want.pruned[u];
        assert_eq!((degree_pruned[u], seen_pruned[u]), (degree, degree), "{what}, node {u}: degree after removing");
        assert_eq!(column_u64(p("weights_pruned"))[u], weights, "{what}, node {u}: weights after removing");
        assert_eq!(column_u64(p("heads_pruned"))[u], heads, "{what}, node {u}: heads after removing");
    }
}

/// A random weighted multigraph (self-loops and parallel edges kept), weights 1-9.
fn random_graph(seed: u64) -> Graph {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let n = 1 + next(40) as u32;
    let mut edges = EdgeList::new(n, true);
    for _ in 0..next(u64::from(n) * 5 + 1) {
        edges.push(next(u64::from(n)) as u32, next(u64::from(n)) as u32, 1 + next(9) as u32);
    }
    build(edges, &BuildOptions::AS_GIVEN).unwrap()
}

#[test]
fn added_and_removed_edges_are_seen_exactly_on_random_graphs() {
    let program = compile("edge_growth", EDGE_GROWTH);
    for seed in 0..40 {
        let graph = random_graph(seed);
        for threads in [1, 2, 3] {
            check(&program, &graph, threads, &format!("random graph {seed}"));
        }
    }
}

#[test]
fn additions_from_many_threads_grow_past_the_first_segment() {
    // 3 added edges per node: 60,000 and 98,304 added edges, many segments of added edges.
    let program = compile("edge_growth", EDGE_GROWTH);
    let options = GenOptions { seed: 5, max_weight: Some(9) };
    let graphs = [
        (
            "random",
            generate(&Generator::Uniform { nodes: 20_000, average_degree: 4 }, &options, true, &NoProgress).unwrap(),
        ),
        ("rmat", generate(&Generator::graph500(15), &options, true, &NoProgress).unwrap()),
    ];
    for (what, graph) in &graphs {
        for threads in [1, 4] {
            check(&program, graph, threads, what);
        }
    }
}

#[test]
fn programs_that_change_edges_refuse_what_only_the_input_graph_has() {
    let cases = [
        ("kernel k() { forall u in G.nodes() { G.add_edge(u, u); let w = u.neighbor(0); } }", "indexed neighbour"),
        ("kernel k() { forall u in G.nodes() { G.add_edge(u, u); for v in u.in_neighbors() { } } }", "in-edges"),
        (
            "kernel k() { forall e in G.edges() { G.remove_edge(e); } }\nfn main() -> u32 { let u = 0 as Node; return u.degree(); }",
            "`main` reads a degree",
        ),
        ("fn main() { G.add_edge(0 as Node, 0 as Node); }", "host code cannot call `G.add_edge`"),
        ("kernel k() { forall u in G.nodes() { G.add_edge(u, u, 3); } }", "does not declare"),
        ("fn main() { let gone = G.remove_node(0 as Node); }", "host code cannot call `G.remove_node`"),
        ("fn main() { let there = G.has_node(0 as Node); }", "host code cannot call `G.has_node`: kernels ask it"),
        ("kernel k() { forall u in G.nodes() { G.remove_node(u); let w = u.neighbor(0); } }", "indexed neighbour"),
        ("kernel k() { forall u in G.nodes() { let gone = G.remove_node(u, u); } }", "G.remove_node"),
    ];
    for (source, message) in cases {
        let source = format!(
            "graph {{ node x: u32; }}\n{source}\n{}",
            if source.contains("fn main") { "" } else { "fn main() { invoke k(); }" }
        );
        let error = compile_source("bad", &source).err().unwrap_or_else(|| panic!("accepted: {source}")).to_string();
        assert!(error.contains(message), "{source}\nsays: {error}");
    }
}

const NODE_GROWTH: &str = include_str!("../../grail-lang/tests/programs/node_growth.grail");

/// `node_growth.grail`: the input's odd nodes sprout a new node each, then every input node
/// does. Which id a new node gets depends on the threads' order, so the checks are what holds
/// whatever it is.
fn check_sprouts(program: &CpuProgram, graph: &Graph, threads: usize, what: &str) {
    let out = program.run(graph, &[], &RunOptions { threads }, &mut std::io::sink()).unwrap();
    let n = graph.num_nodes() as usize;
    let total = n + n / 2 + n;
    assert_eq!(out.result, Some(Value::U32(total as u32)), "{what}, {threads} threads: nodes");
    // label, parent, seen, bad: the program's properties after `weight`.
    let (label, parent, seen, bad) = (
        column_u32(&out.properties[1]),
        column_u32(&out.properties[2]),
        column_u32(&out.properties[3]),
        column_u32(&out.properties[4]),
    );
    assert!([label, parent, seen, bad].iter().all(|c| c.len() == total), "{what}: every node output");
    assert!(bad.iter().all(|&b| b == 0), "{what}, {threads} threads: a new node's initial values, or a degree");
    let mut children = vec![0u32; n];
    for v in n..total {
        let p = parent[v] as usize;
        assert!(p < n, "{what}: node {v}'s parent {p}");
        assert_eq!(label[v], 7 + parent[v], "{what}: node {v} starts at the initial label");
        assert_eq!(seen[v], 1, "{what}, {threads} threads: node {v} has its parent as its neighbour");
        children[p] += 1;
    }
    for u in 0..n {
        assert_eq!(children[u], 1 + (u % 2) as u32, "{what}: node {u}'s new neighbours");
        assert_eq!(seen[u], graph.out().degree(u as u32) as u32 + children[u], "{what}, {threads} threads: node {u}");
        assert_eq!((label[u], parent[u]), (7, u32::MAX), "{what}: input node {u}");
    }
}

#[test]
fn nodes_added_from_many_threads_start_at_their_initial_values() {
    let program = compile("node_growth", NODE_GROWTH);
    for seed in 0..30 {
        let graph = random_graph(seed);
        for threads in [1, 3] {
            check_sprouts(&program, &graph, threads, &format!("random graph {seed}"));
        }
    }
    let options = GenOptions { seed: 3, max_weight: Some(9) };
    let graph =
        generate(&Generator::Uniform { nodes: 30_000, average_degree: 3 }, &options, true, &NoProgress).unwrap();
    for threads in [1, 4] {
        check_sprouts(&program, &graph, threads, "30,000 nodes");
    }
}

const NODE_REMOVAL: &str = include_str!("../../grail-lang/tests/programs/node_removal.grail");

/// `node_removal.grail`: the nodes with ids divisible by 3 removed with their out-edges, the
/// rest counting their present and removed heads, then nodes added and removed again; every
/// count checked exactly.
fn check_removals(program: &CpuProgram, graph: &Graph, threads: usize, what: &str) {
    let out = program.run(graph, &[], &RunOptions { threads }, &mut std::io::sink()).unwrap();
    let n = graph.num_nodes();
    let csr = graph.out();
    let gone = |u: u32| u % 3 == 0;
    let present: Vec<u32> = (0..n).filter(|&u| !gone(u)).collect();
    let churned = present.iter().filter(|&&u| u % 7 == 1).count() as u64;
    let removed_edges: u64 = (0..n).filter(|&u| gone(u)).map(|u| csr.neighbors(u).len() as u64).sum();
    let edges = graph.num_edges() - removed_edges + churned;
    assert_eq!(
        out.result,
        Some(Value::U64(present.len() as u64 * 1_000_000_000_000 + edges * 1_000_000 + churned)),
        "{what}, {threads} threads: nodes, edges and churned nodes left"
    );
    // seen, live_heads, dead_heads, removals: the properties after `weight`.
    let columns: Vec<&[u32]> = (1..5).map(|p| column_u32(&out.properties[p])).collect();
    assert!(columns.iter().all(|c| c.len() == n as usize + churned as usize), "{what}: a line per node");
    for u in 0..n {
        let i = u as usize;
        let (live, dead) = if gone(u) {
            (0, 0)
        } else {
            let heads = csr.neighbors(u);
            (heads.iter().filter(|&&v| !gone(v)).count() as u32, heads.iter().filter(|&&v| gone(v)).count() as u32)
        };
        let want = [u32::from(!gone(u)), live, dead, u32::from(gone(u))];
        let got = [columns[0][i], columns[1][i], columns[2][i], columns[3][i]];
        assert_eq!(got, want, "{what}, {threads} threads, node {u}: seen, live heads, dead heads, removals");
    }
    assert!(columns.iter().all(|c| c[n as usize..].iter().all(|&x| x == 0)), "{what}: an added node's values");
}

#[test]
fn removed_nodes_leave_exact_counts() {
    let program = compile("node_removal", NODE_REMOVAL);
    for seed in 0..30 {
        let graph = random_graph(seed);
        for threads in [1, 3] {
            check_removals(&program, &graph, threads, &format!("random graph {seed}"));
        }
    }
    let options = GenOptions { seed: 9, max_weight: Some(9) };
    let graph = generate(&Generator::graph500(14), &options, true, &NoProgress).unwrap();
    check_removals(&program, &graph, 4, "rmat 14");
}
