//! The CPU executor end to end: modules compiled with the machine's C compiler, run on
//! generated and hand-made graphs with 1, 2 and 3 threads, checked against the references.

use grail_graph::generate::{GenOptions, Generator, generate};
use grail_graph::reference;
use grail_graph::{BuildOptions, Column, EdgeList, Graph, NoProgress, build};
use grail_ir::samples::bfs;
use grail_ir::*;
use grail_runtime::cpu::{CCompiler, CpuProgram, RunOptions, RunOutput, Value};
use grail_runtime::{ModuleCache, RuntimeError};

const THREADS: [usize; 3] = [1, 2, 3];

fn cache() -> ModuleCache {
    ModuleCache::at(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("grail-executor-cache"))
}

fn compile(module: Module) -> CpuProgram {
    let compiler = CCompiler::new("cc", Vec::new()).expect("the test machine has a C compiler");
    CpuProgram::compile(module, &compiler, Some(&cache())).unwrap()
}

fn run_with(program: &CpuProgram, graph: &Graph, params: &[Option<Value>], threads: usize) -> RunOutput {
    let mut out = Vec::new();
    program.run(graph, params, &RunOptions { threads }, &mut out).unwrap()
}

fn try_run(program: &CpuProgram, graph: &Graph, params: &[Option<Value>]) -> Result<RunOutput, RuntimeError> {
    program.run(graph, params, &RunOptions { threads: 2 }, &mut Vec::new())
}

fn u32s(column: &Column) -> &[u32] {
    match column {
        Column::U32(v) => v,
        other => panic!("expected a u32 column, got {:?}", other.ty()),
    }
}

fn graph_of(n: u32, pairs: &[(u32, u32)]) -> Graph {
    build(EdgeList::from_pairs(n, pairs), &BuildOptions::AS_GIVEN).unwrap()
}

fn generated(generator: Generator, undirected: bool) -> Graph {
    generate(&generator, &GenOptions { seed: 7, max_weight: None }, undirected, &NoProgress).unwrap()
}

/// BFS levels from `source` on every thread count equal the reference's.
fn check_bfs(program: &CpuProgram, graph: &Graph, source: u32) {
    let expected = reference::bfs(graph, source);
    for threads in THREADS {
        let output = run_with(program, graph, &[Some(Value::Node(source))], threads);
        assert_eq!(u32s(&output.properties[0]), expected.as_slice(), "threads {threads}, source {source}");
        let stats = &output.stats.kernels[0];
        assert_eq!(stats.name, "expand");
        let reached = expected.iter().filter(|&&l| l != u32::MAX).count() as u64;
        // Every reached node is pushed once (the source is the initial item) and expanded once.
        assert_eq!(stats.pushes, reached - 1);
        assert_eq!(stats.items, reached);
        let depth = expected.iter().filter(|&&l| l != u32::MAX).max().copied().unwrap_or(0);
        assert_eq!(stats.invocations, u64::from(depth) + 1);
    }
}

/// BFS's level array initialised to INF: the sample leaves that to lowering, so add it here.
fn bfs_with_init() -> Module {
    let mut module = bfs();
    let n = module.kernels.len() as u32;
    // kernel init(): forall u in G.nodes() { u.level = INF; }
    module.kernels.push(Kernel {
        name: "init".into(),
        params: 0,
        reduction: None,
        push_sites: vec![],
        body: Body {
            locals: vec![Local { name: "u".into(), ty: Type::Node }],
            block: vec![Stmt::ForAll(Box::new(ForAll {
                var: LocalId(0),
                space: Space::AllNodes,
                filter: None,
                schedule: Schedule::SERIAL,
                body: vec![Stmt::Assign {
                    place: Place::Property {
                        property: samples::LEVEL,
                        element: Box::new(Expr::local(LocalId(0), Type::Node)),
                    },
                    value: Expr::inf(Type::U32),
                }],
            }))],
        },
    });
    module.main.block.insert(0, Stmt::Invoke { kernel: KernelId(n), args: vec![], result: None });
    validate(&module).unwrap();
    module
}

#[test]
fn bfs_on_generated_graphs() {
    let program = compile(bfs_with_init());
    let graphs = [
        generated(Generator::graph500(12), false),
        generated(Generator::graph500(10), true),
        generated(Generator::Grid { rows: 40, cols: 70 }, false),
        generated(Generator::Road { nodes: 5000 }, false),
        generated(Generator::Uniform { nodes: 3000, average_degree: 3 }, false),
    ];
    for graph in &graphs {
        for source in [0, graph.num_nodes() / 2, graph.num_nodes() - 1] {
            check_bfs(&program, graph, source);
        }
    }
}

#[test]
fn bfs_on_small_hand_graphs() {
    let program = compile(bfs_with_init());
    // Two components, a self-loop, a duplicate edge, isolated nodes 6 and 7.
    let graph = graph_of(8, &[(0, 1), (1, 2), (1, 2), (2, 2), (2, 0), (3, 4), (4, 5), (5, 3)]);
    for source in 0..8 {
        check_bfs(&program, &graph, source);
    }
    let single = graph_of(1, &[]);
    check_bfs(&program, &single, 0);
    let looped = graph_of(1, &[(0, 0), (0, 0)]);
    check_bfs(&program, &looped, 0);
}

#[test]
fn params_are_checked() {
    let program = compile(bfs_with_init());
    let graph = graph_of(4, &[(0, 1)]);
    let err = try_run(&program, &graph, &[None]).unwrap_err();
    assert!(matches!(&err, RuntimeError::MissingParam { name } if name == "source"), "{err}");
    assert!(err.to_string().contains("`source`"), "{err}");
    let err = try_run(&program, &graph, &[Some(Value::Node(4))]).unwrap_err();
    assert!(matches!(&err, RuntimeError::BadParam { name, .. } if name == "source"), "{err}");
    assert!(err.to_string().contains("node 4 is not in the graph, which has 4 nodes"), "{err}");
    let err = try_run(&program, &graph, &[Some(Value::U32(1))]).unwrap_err();
    assert!(matches!(err, RuntimeError::BadParam { .. }), "{err}");
    let err = try_run(&program, &graph, &[]).unwrap_err();
    assert!(matches!(err, RuntimeError::ParamCount { expected: 1, given: 0 }), "{err}");
}
