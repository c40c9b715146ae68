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
        // Every reached node is pushed once (the source is the initial item) and expanded once;
        // with several threads two may both find a node unvisited and both push it (the
        // program's check-then-set is not atomic), which changes no level.
        if threads == 1 {
            assert_eq!((stats.pushes, stats.items), (reached - 1, reached));
        } else {
            assert!(stats.pushes >= reached - 1 && stats.items == stats.pushes + 1);
        }
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

// ---- Building IR by hand ----

fn local(name: &str, ty: Type) -> Local {
    Local { name: name.into(), ty }
}

fn l(i: u32, ty: Type) -> Expr {
    Expr::local(LocalId(i), ty)
}

fn node(i: u32) -> Expr {
    l(i, Type::Node)
}

fn u32c(v: u64) -> Expr {
    Expr::int(v, Type::U32)
}

fn bin(op: BinaryOp, a: Expr, b: Expr) -> Expr {
    Expr::binary(op, a, b)
}

fn prop(p: u32, element: Expr, ty: Type) -> Expr {
    Expr::property(PropertyId(p), element, ty)
}

fn set_prop(p: u32, element: Expr, value: Expr) -> Stmt {
    Stmt::Assign { place: Place::Property { property: PropertyId(p), element: Box::new(element) }, value }
}

fn assign(i: u32, value: Expr) -> Stmt {
    Stmt::Assign { place: Place::Local(LocalId(i)), value }
}

fn forall(var: u32, space: Space, filter: Option<Expr>, body: Block) -> Stmt {
    Stmt::ForAll(Box::new(ForAll { var: LocalId(var), space, filter, body, schedule: Schedule::SERIAL }))
}

fn for_each(var: u32, adjacency: Adjacency, of: Expr, body: Block) -> Stmt {
    Stmt::ForEach { var: LocalId(var), adjacency, node: of, body, schedule: Schedule::SERIAL }
}

fn if_(cond: Expr, then: Block, otherwise: Block) -> Stmt {
    Stmt::If { cond, then, otherwise, uniform: false }
}

fn invoke(kernel: u32, args: Vec<Expr>, result: Option<u32>) -> Stmt {
    Stmt::Invoke { kernel: KernelId(kernel), args, result: result.map(LocalId) }
}

fn param(i: u32, ty: Type) -> Expr {
    Expr::new(ExprKind::Param(ParamId(i)), ty)
}

fn num_nodes() -> Expr {
    Expr::new(ExprKind::NumNodes, Type::U32)
}

fn kernel(name: &str, params: u32, locals: Vec<Local>, reduction: Option<(ReduceOp, Type)>, block: Block) -> Kernel {
    let mut pushes = 0;
    walk_block(&block, &mut |stmt| pushes += matches!(stmt, Stmt::Push { .. }) as usize);
    Kernel {
        name: name.into(),
        params,
        reduction,
        body: Body { locals, block },
        push_sites: vec![Aggregation::None; pushes],
    }
}

fn node_prop(name: &str, ty: Type) -> Property {
    Property { name: name.into(), owner: Owner::Node, ty, is_weight: false }
}

/// `forall u in G.nodes() { u.p = value(u); }`
fn init_kernel(name: &str, p: u32, value: Expr) -> Kernel {
    kernel(
        name,
        0,
        vec![local("u", Type::Node)],
        None,
        vec![forall(0, Space::AllNodes, None, vec![set_prop(p, node(0), value)])],
    )
}

fn checked(module: Module) -> Module {
    if let Err(err) = validate(&module) {
        panic!("{err}\n{}", print(&module));
    }
    module
}

/// Runs on every thread count; the outputs (properties, result, printed text) must agree.
fn run_all(program: &CpuProgram, graph: &Graph, params: &[Option<Value>]) -> (RunOutput, String) {
    let mut first: Option<(RunOutput, String)> = None;
    for threads in THREADS {
        let mut out = Vec::new();
        let output = program.run(graph, params, &RunOptions { threads }, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        match &first {
            None => first = Some((output, text)),
            Some((o, t)) => {
                assert_eq!(o.properties, output.properties, "threads {threads}");
                assert_eq!(o.result, output.result, "threads {threads}");
                assert_eq!(*t, text, "threads {threads}");
                for (a, b) in o.stats.kernels.iter().zip(&output.stats.kernels) {
                    assert_eq!(
                        (a.invocations, a.items, a.pushes, a.retries),
                        (b.invocations, b.items, b.pushes, b.retries)
                    );
                }
            }
        }
    }
    first.unwrap()
}

// ---- Reductions ----

#[test]
fn reductions_of_every_operator() {
    let f64_ = Type::Scalar(Scalar::F64);
    let f32_ = Type::Scalar(Scalar::F32);
    let i32_ = Type::Scalar(Scalar::I32);
    let i64_ = Type::Scalar(Scalar::I64);
    let n = 5000u32;
    let u = || node(0);
    let as_ = |ty| Expr::cast(u(), ty);
    let float = |x: f64| Expr::new(ExprKind::Const(Const::Float(x)), f64_);
    let nodes: Vec<u32> = (0..n).collect();
    // (operator, type, contributed value, expected over all nodes, expected over none)
    let cases: Vec<(ReduceOp, Type, Expr, Value, Value)> = vec![
        (
            ReduceOp::Sum,
            Type::U32,
            bin(BinaryOp::Mul, as_(Type::U32), u32c(1_000_003)),
            Value::U32(nodes.iter().fold(0u32, |a, &x| a.wrapping_add(x.wrapping_mul(1_000_003)))),
            Value::U32(0),
        ),
        (
            ReduceOp::Sum,
            i64_,
            bin(BinaryOp::Sub, as_(i64_), Expr::int(2600, i64_)),
            Value::I64(nodes.iter().map(|&x| i64::from(x) - 2600).sum()),
            Value::I64(0),
        ),
        (ReduceOp::Sum, f64_, as_(f64_), Value::F64(f64::from(n) * f64::from(n - 1) / 2.0), Value::F64(0.0)),
        (ReduceOp::Sum, f32_, as_(f32_), Value::F32((f64::from(n) * f64::from(n - 1) / 2.0) as f32), Value::F32(0.0)),
        (
            ReduceOp::Product,
            Type::U64,
            bin(BinaryOp::Add, bin(BinaryOp::Rem, as_(Type::U64), Expr::int(3, Type::U64)), Expr::int(1, Type::U64)),
            Value::U64(nodes.iter().fold(1u64, |a, &x| a.wrapping_mul(u64::from(x % 3 + 1)))),
            Value::U64(1),
        ),
        (
            ReduceOp::Min,
            f64_,
            bin(BinaryOp::Add, bin(BinaryOp::Mul, as_(f64_), float(-1.5)), float(7.0)),
            Value::F64(f64::from(n - 1) * -1.5 + 7.0),
            Value::F64(f64::INFINITY),
        ),
        (
            ReduceOp::Max,
            f64_,
            bin(BinaryOp::Mul, as_(f64_), float(-0.5)),
            Value::F64(-0.0),
            Value::F64(f64::NEG_INFINITY),
        ),
        (
            ReduceOp::Min,
            i32_,
            bin(BinaryOp::Sub, as_(i32_), Expr::int(3000, i32_)),
            Value::I32(-3000),
            Value::I32(i32::MAX),
        ),
        (
            ReduceOp::Max,
            Type::U32,
            bin(BinaryOp::BitXor, as_(Type::U32), u32c(0x5555)),
            Value::U32(nodes.iter().map(|&x| x ^ 0x5555).max().unwrap()),
            Value::U32(0),
        ),
        (ReduceOp::Max, i64_, Expr::int(-5i64 as u64, i64_), Value::I64(-5), Value::I64(i64::MIN)),
        (
            ReduceOp::Any,
            Type::BOOL,
            bin(BinaryOp::Eq, u(), Expr::cast(u32c(4321), Type::Node)),
            Value::Bool(true),
            Value::Bool(false),
        ),
        (
            ReduceOp::All,
            Type::BOOL,
            bin(BinaryOp::Lt, as_(Type::U32), num_nodes()),
            Value::Bool(true),
            Value::Bool(true),
        ),
        (ReduceOp::All, Type::BOOL, bin(BinaryOp::Ne, as_(Type::U32), u32c(17)), Value::Bool(false), Value::Bool(true)),
    ];
    let mut kernels = Vec::new();
    let mut main_locals = Vec::new();
    let mut main = Vec::new();
    let mut expected = String::new();
    for (i, (op, ty, value, all, none)) in cases.into_iter().enumerate() {
        for (filter, want) in [(None, all), (Some(Expr::bool(false)), none)] {
            let k = kernels.len() as u32;
            let body = vec![forall(0, Space::AllNodes, filter, vec![Stmt::Reduce { value: value.clone() }])];
            kernels.push(kernel(&format!("r{i}_{k}"), 0, vec![local("u", Type::Node)], Some((op, ty)), body));
            main_locals.push(local(&format!("r{k}"), ty));
            main.push(invoke(k, vec![], Some(k)));
            main.push(Stmt::Print(vec![PrintArg::Text(format!("{}:", op.name())), PrintArg::Value(l(k, ty))]));
            expected.push_str(&format!("{}: {want}\n", op.name()));
        }
    }
    let module = checked(Module {
        name: "reductions".into(),
        kernels,
        main: Body { locals: main_locals, block: main },
        ..Module::default()
    });
    let program = compile(module);
    let graph = generated(Generator::Uniform { nodes: n, average_degree: 2 }, false);
    let (output, text) = run_all(&program, &graph, &[]);
    assert_eq!(text, expected);
    assert!(output.stats.kernels.iter().all(|k| k.invocations == 1));
}

// ---- Retry ----

#[test]
fn retried_items_run_again_within_the_invocation() {
    // kernel bump() { forall u in G.nodes() { u.count += 1; if u.count <= u % 4 { retry(u); } } }
    // kernel again() { forall u in worklist { u.twice += 1; if u.twice <= u % 3 { retry(u); } } }
    let bump_body = |p: u32, modulus: u64| {
        vec![
            set_prop(p, node(0), bin(BinaryOp::Add, prop(p, node(0), Type::U32), u32c(1))),
            if_(
                bin(
                    BinaryOp::Le,
                    prop(p, node(0), Type::U32),
                    bin(BinaryOp::Rem, Expr::cast(node(0), Type::U32), u32c(modulus)),
                ),
                vec![Stmt::Retry { value: node(0) }],
                vec![],
            ),
        ]
    };
    let module = checked(Module {
        name: "retry".into(),
        properties: vec![node_prop("count", Type::U32), node_prop("twice", Type::U32)],
        kernels: vec![
            kernel(
                "bump",
                0,
                vec![local("u", Type::Node)],
                None,
                vec![forall(0, Space::AllNodes, None, bump_body(0, 4))],
            ),
            kernel(
                "again",
                0,
                vec![local("u", Type::Node)],
                None,
                vec![forall(0, Space::Worklist, None, bump_body(1, 3))],
            ),
        ],
        main: Body {
            locals: vec![],
            block: vec![
                invoke(0, vec![], None),
                Stmt::Pipe(Box::new(Pipe {
                    id: OutlineId(0),
                    once: true,
                    initial: Some(Initial::AllNodes),
                    body: vec![invoke(1, vec![], None)],
                    outlined: false,
                    unroll: 1,
                })),
            ],
        },
        ..Module::default()
    });
    let program = compile(module);
    let n = 5000u32;
    let graph = generated(Generator::Uniform { nodes: n, average_degree: 1 }, false);
    let (output, _) = run_all(&program, &graph, &[]);
    let count: Vec<u32> = (0..n).map(|u| u % 4 + 1).collect();
    let twice: Vec<u32> = (0..n).map(|u| u % 3 + 1).collect();
    assert_eq!(u32s(&output.properties[0]), count.as_slice());
    assert_eq!(u32s(&output.properties[1]), twice.as_slice());
    let bump = &output.stats.kernels[0];
    let retries: u64 = (0..n).map(|u| u64::from(u % 4)).sum();
    assert_eq!((bump.invocations, bump.retries, bump.items), (1, retries, u64::from(n) + retries));
    let again = &output.stats.kernels[1];
    let retries: u64 = (0..n).map(|u| u64::from(u % 3)).sum();
    assert_eq!((again.invocations, again.retries, again.items, again.pushes), (1, retries, u64::from(n) + retries, 0));
}

// ---- Worklists: pipe with initial, a kernel over all nodes that pushes (A4) ----

#[test]
fn pipe_with_a_pushing_kernel_over_all_nodes() {
    let level = |e: Expr| prop(0, e, Type::U32);
    // kernel step(next: u32) { forall v in G.nodes() where v.level == INF {
    //     for u in v.in_neighbors() { if u.level == next - 1 { v.level = next; push(v); break; } } } }
    let step = kernel(
        "step",
        1,
        vec![local("next", Type::U32), local("v", Type::Node), local("u", Type::Node)],
        None,
        vec![forall(
            1,
            Space::AllNodes,
            Some(bin(BinaryOp::Eq, level(node(1)), Expr::inf(Type::U32))),
            vec![for_each(
                2,
                Adjacency::InNeighbors,
                node(1),
                vec![if_(
                    bin(BinaryOp::Eq, level(node(2)), bin(BinaryOp::Sub, l(0, Type::U32), u32c(1))),
                    vec![
                        set_prop(0, node(1), l(0, Type::U32)),
                        Stmt::Push { site: PushSite(0), value: node(1) },
                        Stmt::Break,
                    ],
                    vec![],
                )],
            )],
        )],
    );
    // kernel tally() -> sum u32 { forall u in G.nodes() where u.level != INF { reduce 1; } }
    let tally = kernel(
        "tally",
        0,
        vec![local("u", Type::Node)],
        Some((ReduceOp::Sum, Type::U32)),
        vec![forall(
            0,
            Space::AllNodes,
            Some(bin(BinaryOp::Ne, level(node(0)), Expr::inf(Type::U32))),
            vec![Stmt::Reduce { value: u32c(1) }],
        )],
    );
    let source = param(0, Type::Node);
    let module = checked(Module {
        name: "bfs_pull".into(),
        properties: vec![node_prop("level", Type::U32)],
        params: vec![Param { name: "source".into(), ty: Type::Node, default: Some(Const::Int(0)) }],
        outputs: vec![PropertyId(0)],
        kernels: vec![init_kernel("init", 0, Expr::inf(Type::U32)), step, tally],
        main: Body {
            locals: vec![local("next", Type::U32), local("reached", Type::U32)],
            block: vec![
                invoke(0, vec![], None),
                set_prop(0, source.clone(), u32c(0)),
                assign(0, u32c(1)),
                Stmt::Pipe(Box::new(Pipe {
                    id: OutlineId(0),
                    once: false,
                    initial: Some(Initial::Items(vec![source])),
                    body: vec![
                        invoke(1, vec![l(0, Type::U32)], None),
                        invoke(2, vec![], Some(1)),
                        assign(0, bin(BinaryOp::Add, l(0, Type::U32), u32c(1))),
                    ],
                    outlined: false,
                    unroll: 1,
                })),
                Stmt::Return(Some(l(1, Type::U32))),
            ],
        },
        main_result: Type::U32,
        ..Module::default()
    });
    let program = compile(module);
    let graph = generated(Generator::graph500(11), false);
    for source in [0, 77] {
        let expected = reference::bfs(&graph, source);
        let (output, _) = run_all(&program, &graph, &[Some(Value::Node(source))]);
        assert_eq!(u32s(&output.properties[0]), expected.as_slice());
        let reached = expected.iter().filter(|&&l| l != u32::MAX).count() as u32;
        assert_eq!(output.result, Some(Value::U32(reached)));
        let depth = expected.iter().filter(|&&l| l != u32::MAX).max().copied().unwrap();
        assert_eq!(output.stats.kernels[1].invocations, u64::from(depth) + 1);
        assert_eq!(output.stats.kernels[1].pushes, u64::from(reached) - 1);
    }
    // The default source.
    let (output, _) = run_all(&program, &graph, &[None]);
    assert_eq!(u32s(&output.properties[0]), reference::bfs(&graph, 0).as_slice());
}

// ---- Iterate until a condition ----

#[test]
fn iterate_until_no_label_changes() {
    let label = |e: Expr| prop(0, e, Type::U32);
    // kernel spread() -> any bool { forall u in G.nodes() { for v in u.neighbors() {
    //     if atomic_min(v.label, u.label) { reduce true; } } } }
    let spread = kernel(
        "spread",
        0,
        vec![local("u", Type::Node), local("v", Type::Node)],
        Some((ReduceOp::Any, Type::BOOL)),
        vec![forall(
            0,
            Space::AllNodes,
            None,
            vec![for_each(
                1,
                Adjacency::OutNeighbors,
                node(0),
                vec![if_(
                    Expr::new(
                        ExprKind::Atomic {
                            op: AtomicOp::Min,
                            place: Place::Property { property: PropertyId(0), element: Box::new(node(1)) },
                            operands: vec![label(node(0))],
                        },
                        Type::BOOL,
                    ),
                    vec![Stmt::Reduce { value: Expr::bool(true) }],
                    vec![],
                )],
            )],
        )],
    );
    let module = checked(Module {
        name: "cc_labels".into(),
        properties: vec![node_prop("label", Type::U32)],
        kernels: vec![init_kernel("init", 0, Expr::cast(node(0), Type::U32)), spread],
        main: Body {
            locals: vec![local("changed", Type::BOOL), local("rounds", Type::U32)],
            block: vec![
                invoke(0, vec![], None),
                Stmt::Iterate(Box::new(Iterate {
                    id: OutlineId(0),
                    until: Until::Condition { cond: l(0, Type::BOOL), stop_when: false },
                    body: vec![invoke(1, vec![], Some(0)), assign(1, bin(BinaryOp::Add, l(1, Type::U32), u32c(1)))],
                    outlined: false,
                })),
                Stmt::Return(Some(l(1, Type::U32))),
            ],
        },
        main_result: Type::U32,
        ..Module::default()
    });
    let program = compile(module);
    let graph = generated(Generator::graph500(10), true);
    let expected = reference::connected_components(&graph);
    for threads in THREADS {
        let output = run_with(&program, &graph, &[], threads);
        assert_eq!(u32s(&output.properties[0]), expected.as_slice(), "threads {threads}");
        let Some(Value::U32(rounds)) = output.result else { panic!("{:?}", output.result) };
        assert_eq!(u64::from(rounds), output.stats.kernels[1].invocations);
        assert!(rounds >= 2);
    }
}

// ---- Union-find over all edges, with e.src ----

#[test]
fn union_find_components() {
    let edge = || l(0, Type::Edge);
    // kernel join() { forall e in G.edges() { G.comp.union(e.src, e.dst); } }
    let join = kernel(
        "join",
        0,
        vec![local("e", Type::Edge)],
        None,
        vec![forall(
            0,
            Space::AllEdges,
            None,
            vec![Stmt::Eval(Expr::new(
                ExprKind::SetUnion {
                    set: SetId(0),
                    a: Box::new(Expr::new(ExprKind::EdgeSource(Box::new(edge())), Type::Node)),
                    b: Box::new(Expr::new(ExprKind::EdgeTarget(Box::new(edge())), Type::Node)),
                },
                Type::BOOL,
            ))],
        )],
    );
    let find = |u: Expr| Expr::new(ExprKind::SetFind { set: SetId(0), node: Box::new(u) }, Type::Node);
    let module = checked(Module {
        name: "cc_union_find".into(),
        properties: vec![node_prop("label", Type::U32)],
        sets: vec![SetDecl { name: "comp".into() }],
        kernels: vec![join, init_kernel("label", 0, Expr::cast(find(node(0)), Type::U32))],
        main: Body {
            locals: vec![],
            block: vec![
                invoke(0, vec![], None),
                invoke(1, vec![], None),
                Stmt::Print(vec![
                    PrintArg::Text("last".into()),
                    PrintArg::Value(find(Expr::cast(bin(BinaryOp::Sub, num_nodes(), u32c(1)), Type::Node))),
                ]),
            ],
        },
        ..Module::default()
    });
    assert!(analysis::needs_edge_sources(&module));
    let program = compile(module);
    for graph in [generated(Generator::graph500(11), false), generated(Generator::Road { nodes: 3000 }, false)] {
        let expected = reference::connected_components(&graph);
        let (output, text) = run_all(&program, &graph, &[]);
        assert_eq!(u32s(&output.properties[0]), expected.as_slice());
        assert_eq!(text, format!("last {}\n", expected.last().unwrap()));
    }
}

// ---- single() as a duplicate filter ----

#[test]
fn single_pushes_each_node_once_per_invocation() {
    // kernel dedup() { forall e in G.edges() { v = e.dst; single(v) { push(v); } } }
    // kernel count() { forall u in worklist { u.hits = u.hits + 1; } }
    let dedup = kernel(
        "dedup",
        0,
        vec![local("e", Type::Edge), local("v", Type::Node)],
        None,
        vec![forall(
            0,
            Space::AllEdges,
            None,
            vec![
                assign(1, Expr::new(ExprKind::EdgeTarget(Box::new(l(0, Type::Edge))), Type::Node)),
                Stmt::Lock {
                    kind: LockKind::Single,
                    elements: vec![node(1)],
                    body: vec![Stmt::Push { site: PushSite(0), value: node(1) }],
                    otherwise: vec![],
                },
            ],
        )],
    );
    let count = kernel(
        "count",
        0,
        vec![local("u", Type::Node)],
        None,
        vec![forall(
            0,
            Space::Worklist,
            None,
            vec![set_prop(0, node(0), bin(BinaryOp::Add, prop(0, node(0), Type::U32), u32c(1)))],
        )],
    );
    let module = checked(Module {
        name: "dedup".into(),
        properties: vec![node_prop("hits", Type::U32)],
        kernels: vec![dedup, count],
        main: Body {
            locals: vec![],
            block: vec![
                invoke(0, vec![], None),
                invoke(1, vec![], None),
                invoke(0, vec![], None),
                invoke(1, vec![], None),
            ],
        },
        ..Module::default()
    });
    let program = compile(module);
    let graph = generated(Generator::graph500(11), false);
    let mut expected = vec![0u32; graph.num_nodes() as usize];
    for &v in graph.out().targets() {
        expected[v as usize] = 2;
    }
    let (output, _) = run_all(&program, &graph, &[]);
    assert_eq!(u32s(&output.properties[0]), expected.as_slice());
    let distinct = expected.iter().filter(|&&h| h > 0).count() as u64;
    assert_eq!(output.stats.kernels[0].pushes, 2 * distinct);
    assert_eq!(output.stats.kernels[1].items, 2 * distinct);
}

/// `break` and `continue` out of an `atomic` or `exclusive` body release its locks; a `break`
/// of a loop inside the body does not.
#[test]
fn jumps_out_of_lock_bodies_release_the_locks() {
    // kernel leave() { forall u in G.nodes() {
    //     for v in u.out_neighbors() { atomic(u) { u.hits += 1; break; } }
    //     exclusive(u, u) { if u % 2 == 0 { continue; } u.hits += 10; }
    //     atomic(u) { while true { atomic(u) {} else { u.hits += 1000; } break; } u.hits += 100; }
    // } }
    // kernel check() { forall u in G.nodes() { atomic(u) { u.free = 1; } else { u.free = 2; } } }
    let add = |amount: u64| set_prop(0, node(0), bin(BinaryOp::Add, prop(0, node(0), Type::U32), u32c(amount)));
    let lock =
        |kind, elements: Vec<Expr>, body: Block, otherwise: Block| Stmt::Lock { kind, elements, body, otherwise };
    let even = bin(BinaryOp::Eq, bin(BinaryOp::Rem, Expr::cast(node(0), Type::U32), u32c(2)), u32c(0));
    let leave = kernel(
        "leave",
        0,
        vec![local("u", Type::Node), local("v", Type::Node)],
        None,
        vec![forall(
            0,
            Space::AllNodes,
            None,
            vec![
                for_each(
                    1,
                    Adjacency::OutNeighbors,
                    node(0),
                    vec![lock(LockKind::Atomic, vec![node(0)], vec![add(1), Stmt::Break], vec![])],
                ),
                lock(
                    LockKind::Exclusive,
                    vec![node(0), node(0)],
                    vec![if_(even, vec![Stmt::Continue], vec![]), add(10)],
                    vec![],
                ),
                lock(
                    LockKind::Atomic,
                    vec![node(0)],
                    vec![
                        Stmt::While {
                            cond: Expr::new(ExprKind::Const(Const::Bool(true)), Type::BOOL),
                            body: vec![lock(LockKind::Atomic, vec![node(0)], vec![], vec![add(1000)]), Stmt::Break],
                            uniform: false,
                        },
                        add(100),
                    ],
                    vec![],
                ),
            ],
        )],
    );
    let check = kernel(
        "check",
        0,
        vec![local("u", Type::Node)],
        None,
        vec![forall(
            0,
            Space::AllNodes,
            None,
            vec![lock(
                LockKind::Atomic,
                vec![node(0)],
                vec![set_prop(1, node(0), u32c(1))],
                vec![set_prop(1, node(0), u32c(2))],
            )],
        )],
    );
    let module = checked(Module {
        name: "locks".into(),
        properties: vec![node_prop("hits", Type::U32), node_prop("free", Type::U32)],
        kernels: vec![leave, check],
        main: Body { locals: vec![], block: vec![invoke(0, vec![], None), invoke(1, vec![], None)] },
        ..Module::default()
    });
    let program = compile(module);
    let graph = generated(Generator::graph500(10), false);
    let (output, _) = run_all(&program, &graph, &[]);
    let expected: Vec<u32> = (0..graph.num_nodes())
        .map(|u| {
            let degree = graph.out().offsets()[u as usize + 1] - graph.out().offsets()[u as usize];
            u32::from(degree > 0) + if u % 2 == 1 { 1110 } else { 0 }
        })
        .collect();
    assert_eq!(u32s(&output.properties[0]), expected.as_slice());
    assert!(u32s(&output.properties[1]).iter().all(|&free| free == 1), "a lock was left held");
}

// ---- Host code: functions, property assignment, loops, print ----

#[test]
fn host_code_calls_functions_and_assigns_properties() {
    let u64_ = Type::U64;
    let val = |e: Expr| prop(0, e, u64_);
    let call = |f: u32, args: Vec<Expr>, ty: Type| Expr::new(ExprKind::Call(FunctionId(f), args), ty);
    // fn twice(x: u64) -> u64 { return x * 2; }
    let twice = Function {
        name: "twice".into(),
        params: 1,
        result: u64_,
        body: Body {
            locals: vec![local("x", u64_)],
            block: vec![Stmt::Return(Some(bin(BinaryOp::Mul, l(0, u64_), Expr::int(2, u64_))))],
        },
    };
    // fn bump(u: Node) { u.val = u.val + 1; }
    let bump = Function {
        name: "bump".into(),
        params: 1,
        result: Type::Unit,
        body: Body {
            locals: vec![local("u", Type::Node)],
            block: vec![set_prop(0, node(0), bin(BinaryOp::Add, val(node(0)), Expr::int(1, u64_)))],
        },
    };
    // kernel add2() { forall u in G.nodes() { u.val = u.val + twice(1); } }
    let add2 = kernel(
        "add2",
        0,
        vec![local("u", Type::Node)],
        None,
        vec![forall(
            0,
            Space::AllNodes,
            None,
            vec![set_prop(0, node(0), bin(BinaryOp::Add, val(node(0)), call(0, vec![Expr::int(1, u64_)], u64_)))],
        )],
    );
    let source = || param(0, Type::Node);
    // main locals: a, i, v, total
    let main = vec![
        assign(0, call(0, vec![Expr::int(21, u64_)], u64_)),
        set_prop(0, source(), l(0, u64_)),
        Stmt::For {
            var: LocalId(1),
            start: u32c(0),
            end: u32c(5),
            body: vec![
                if_(bin(BinaryOp::Eq, l(1, Type::U32), u32c(3)), vec![Stmt::Continue], vec![]),
                assign(3, bin(BinaryOp::Add, l(3, u64_), Expr::cast(l(1, Type::U32), u64_))),
            ],
        },
        Stmt::While {
            cond: bin(BinaryOp::Lt, l(3, u64_), Expr::int(100, u64_)),
            body: vec![assign(3, bin(BinaryOp::Mul, l(3, u64_), Expr::int(2, u64_)))],
            uniform: true,
        },
        for_each(2, Adjacency::OutNeighbors, source(), vec![Stmt::Eval(call(1, vec![node(2)], Type::Unit))]),
        invoke(0, vec![], None),
        Stmt::Print(vec![
            PrintArg::Text("a".into()),
            PrintArg::Value(l(0, u64_)),
            PrintArg::Text("total".into()),
            PrintArg::Value(l(3, u64_)),
            PrintArg::Text("none".into()),
            PrintArg::Value(Expr::inf(Type::U32)),
            PrintArg::Value(Expr::new(ExprKind::Const(Const::Float(0.25)), Type::Scalar(Scalar::F64))),
        ]),
        Stmt::Return(Some(bin(BinaryOp::Add, l(3, u64_), val(source())))),
    ];
    let module = checked(Module {
        name: "host".into(),
        properties: vec![node_prop("val", u64_)],
        params: vec![Param { name: "source".into(), ty: Type::Node, default: None }],
        functions: vec![twice, bump],
        kernels: vec![add2],
        main: Body {
            locals: vec![local("a", u64_), local("i", Type::U32), local("v", Type::Node), local("total", u64_)],
            block: main,
        },
        main_result: u64_,
        ..Module::default()
    });
    let program = compile(module);
    let graph = graph_of(6, &[(1, 2), (1, 2), (1, 5), (2, 1), (0, 1), (1, 1)]);
    let (output, text) = run_all(&program, &graph, &[Some(Value::Node(1))]);
    assert_eq!(text, "a 42 total 112 none inf 0.25\n");
    let Column::U64(val) = &output.properties[0] else { panic!() };
    assert_eq!(val.as_slice(), &[2, 2 + 42 + 1, 2 + 2, 2, 2, 2 + 1]);
    assert_eq!(output.result, Some(Value::U64(112 + 45)));
}

// ---- In-edges as edges and e.src, in kernels and in host code ----

#[test]
fn in_edges_carry_their_out_edge_ids() {
    let u64_ = Type::U64;
    let edge = || l(1, Type::Edge);
    let src = |e: Expr| Expr::new(ExprKind::EdgeSource(Box::new(e)), Type::Node);
    let dst = |e: Expr| Expr::new(ExprKind::EdgeTarget(Box::new(e)), Type::Node);
    let weight = |e: Expr| Expr::cast(prop(0, e, Type::U32), u64_);
    // kernel sum_in() { forall v in G.nodes() { for e in v.in_edges() {
    //     v.insum = v.insum + e.src as u64 * 1000 + e.weight as u64; if e.dst != v { v.bad = true; } } } }
    let sum_in = kernel(
        "sum_in",
        0,
        vec![local("v", Type::Node), local("e", Type::Edge)],
        None,
        vec![forall(
            0,
            Space::AllNodes,
            None,
            vec![for_each(
                1,
                Adjacency::InEdges,
                node(0),
                vec![
                    set_prop(
                        1,
                        node(0),
                        bin(
                            BinaryOp::Add,
                            prop(1, node(0), u64_),
                            bin(
                                BinaryOp::Add,
                                bin(BinaryOp::Mul, Expr::cast(src(edge()), u64_), Expr::int(1000, u64_)),
                                weight(edge()),
                            ),
                        ),
                    ),
                    if_(bin(BinaryOp::Ne, dst(edge()), node(0)), vec![set_prop(2, node(0), Expr::bool(true))], vec![]),
                ],
            )],
        )],
    );
    let source = || param(0, Type::Node);
    let module = checked(Module {
        name: "in_edges".into(),
        properties: vec![
            Property { name: "weight".into(), owner: Owner::Edge, ty: Type::U32, is_weight: true },
            node_prop("insum", u64_),
            node_prop("bad", Type::BOOL),
        ],
        params: vec![Param { name: "source".into(), ty: Type::Node, default: None }],
        kernels: vec![sum_in],
        main: Body {
            locals: vec![local("total", u64_), local("e", Type::Edge)],
            block: vec![
                invoke(0, vec![], None),
                // for e in source.in_edges() { total = total + e.src as u64 + e.weight as u64; }
                for_each(
                    1,
                    Adjacency::InEdges,
                    source(),
                    vec![assign(
                        0,
                        bin(
                            BinaryOp::Add,
                            l(0, u64_),
                            bin(BinaryOp::Add, Expr::cast(src(edge()), u64_), weight(edge())),
                        ),
                    )],
                ),
                Stmt::Return(Some(l(0, u64_))),
            ],
        },
        main_result: u64_,
        ..Module::default()
    });
    assert!(analysis::needs_in_edge_ids(&module) && analysis::needs_edge_sources(&module));
    let program = compile(module);
    let n = 3000u32;
    let triples: Vec<(u32, u32, u32)> =
        (0..20_000u32).map(|i| ((i * 7919) % n, (i * 104_729 + i / 3) % n, i % 97 + 1)).collect();
    let graph = build(EdgeList::from_triples(n, &triples), &BuildOptions::AS_GIVEN).unwrap();
    let mut insum = vec![0u64; n as usize];
    for &(u, v, w) in &triples {
        insum[v as usize] += u64::from(u) * 1000 + u64::from(w);
    }
    // The ids the graph holds (from a prepared file, say) serve as well as the ones the run
    // makes.
    let mut with_ids = graph.clone();
    with_ids.build_in_edge_ids();
    for (source, graph) in [(0, &graph), (1234, &graph), (1234, &with_ids)] {
        let (output, _) = run_all(&program, graph, &[Some(Value::Node(source))]);
        let Column::U64(got) = &output.properties[1] else { panic!() };
        assert_eq!(got, &insum);
        assert_eq!(output.properties[2], Column::Bool(vec![false; n as usize]));
        let total: u64 = triples.iter().filter(|t| t.1 == source).map(|&(u, _, w)| u64::from(u) + u64::from(w)).sum();
        assert_eq!(output.result, Some(Value::U64(total)));
    }
    // Unweighted graphs give weight 1.
    let unweighted = graph_of(3, &[(0, 2), (1, 2)]);
    let (output, _) = run_all(&program, &unweighted, &[Some(Value::Node(2))]);
    assert_eq!(output.properties[0], Column::U32(vec![1, 1]));
    // Sources 0 and 1, weight 1 each.
    assert_eq!(output.result, Some(Value::U64(1 + 1 + 1)));
}

// ---- Errors a program can cause ----

fn failing(main: Block, kernels: Vec<Kernel>) -> RuntimeError {
    let module = checked(Module {
        name: "failing".into(),
        properties: vec![node_prop("level", Type::U32)],
        kernels,
        main: Body { locals: vec![local("x", Type::U32)], block: main },
        ..Module::default()
    });
    let program = compile(module);
    let graph = graph_of(10, &[(0, 1)]);
    try_run(&program, &graph, &[]).unwrap_err()
}

#[test]
fn program_faults_are_errors() {
    let zero = bin(BinaryOp::Sub, num_nodes(), num_nodes());
    let err = failing(vec![assign(0, bin(BinaryOp::Div, u32c(1), zero.clone()))], vec![]);
    // Host code's arithmetic faults are kernels' (the command line's exit status 70).
    assert!(matches!(err, RuntimeError::HostFault { .. }) && err.to_string().contains("division by zero"), "{err}");
    let err = failing(vec![assign(0, bin(BinaryOp::Rem, u32c(1), zero))], vec![]);
    assert!(matches!(err, RuntimeError::HostFault { .. }) && err.to_string().contains("remainder by zero"), "{err}");
    let past_end = Expr::cast(num_nodes(), Type::Node);
    let err = failing(vec![set_prop(0, past_end.clone(), u32c(0))], vec![]);
    assert!(err.to_string().contains("element 10 of property `level`, which has 10 elements"), "{err}");
    // kernel bad() { forall u in G.nodes() where u == 0 { push(G.num_nodes() as Node); } }
    let bad = kernel(
        "bad",
        0,
        vec![local("u", Type::Node)],
        None,
        vec![forall(
            0,
            Space::AllNodes,
            Some(bin(BinaryOp::Eq, node(0), Expr::cast(u32c(0), Type::Node))),
            vec![Stmt::Push { site: PushSite(0), value: past_end.clone() }],
        )],
    );
    let err = failing(vec![invoke(0, vec![], None)], vec![bad]);
    assert!(err.to_string().contains("kernel `bad` pushed node 10, but the graph has 10 nodes"), "{err}");
    let pipe = Stmt::Pipe(Box::new(Pipe {
        id: OutlineId(0),
        once: true,
        initial: Some(Initial::Items(vec![past_end])),
        body: vec![],
        outlined: false,
        unroll: 1,
    }));
    let err = failing(vec![pipe], vec![]);
    assert!(err.to_string().contains("uses node 10, but the graph has 10 nodes"), "{err}");
}

#[test]
fn all_cores_by_default() {
    let program = compile(bfs_with_init());
    let graph = generated(Generator::Grid { rows: 30, cols: 30 }, false);
    let output = program.run(&graph, &[Some(Value::Node(0))], &RunOptions::default(), &mut Vec::new()).unwrap();
    assert_eq!(u32s(&output.properties[0]), reference::bfs(&graph, 0).as_slice());
    assert!(output.stats.elapsed >= output.stats.kernels[0].time);
}
