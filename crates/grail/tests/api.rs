//! The library API on the CPU and reference targets (the GPU's own test skips without a GPU).

use grail::{Error, Graph, Program, Session, Target, UNREACHED};

/// A small random-looking directed graph with weights, deterministic.
fn sample() -> Graph {
    let n = 200u32;
    let mut edges = Vec::new();
    let mut x = 12345u64;
    for _ in 0..1200 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let u = (x >> 33) as u32 % n;
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let v = (x >> 33) as u32 % n;
        edges.push((u, v, (x >> 20) as u32 % 50 + 1));
    }
    Graph::from_weighted_edges(n, edges).unwrap()
}

#[test]
fn every_algorithm_agrees_with_its_reference_on_the_cpu() {
    let graph = sample();
    let undirected = graph.undirected();
    assert_eq!(graph.bfs(3).run().unwrap(), graph.bfs(3).on(Target::Reference).run().unwrap());
    assert_eq!(graph.sssp(3).run().unwrap(), graph.sssp(3).on(Target::Reference).run().unwrap());
    assert_eq!(
        undirected.connected_components().run().unwrap(),
        undirected.connected_components().on(Target::Reference).run().unwrap()
    );
    assert_eq!(undirected.triangles().run().unwrap(), undirected.triangles().on(Target::Reference).run().unwrap());
    // Results that may differ from the reference's and still be right are verified instead.
    undirected.pagerank().verify().run().unwrap();
    undirected.maximal_independent_set().verify().run().unwrap();
    let forest = undirected.minimum_spanning_forest().verify().run().unwrap();
    assert_eq!(forest.weight, undirected.minimum_spanning_forest().on(Target::Reference).run().unwrap().weight);
}

#[test]
fn runs_take_options_and_report_how_they_went() {
    let graph = sample();
    let (levels, info) = graph.bfs(0).variant("wl").opt("none").unwrap().threads(1).run_with_info().unwrap();
    assert_eq!(levels, graph.bfs(0).on(Target::Reference).run().unwrap());
    assert_eq!(info.variant, Some("wl"));
    assert!(info.opt.unwrap().starts_with("outline=none"));
    let ranks = graph.pagerank().tolerance(1e-3).max_iterations(5).on(Target::Reference).run().unwrap();
    assert!(ranks.iterations <= 5);
}

#[test]
fn bad_requests_are_errors_that_say_what() {
    let graph = sample();
    let message = |e: Error| e.to_string();
    assert!(message(graph.bfs(1000).run().unwrap_err()).contains("1000"));
    assert!(message(graph.bfs(0).variant("fast").run().unwrap_err()).contains("fast"));
    assert!(message(graph.bfs(0).opt("np=xx").unwrap_err()).contains("xx"));
    let bad_csr = Graph::from_csr(vec![0, 2, 1], vec![0, 1], None).unwrap_err();
    assert!(!bad_csr.to_string().is_empty());
    let missing = Graph::load("/nonexistent/graph.gr").unwrap_err();
    assert!(missing.to_string().contains("/nonexistent/graph.gr"));
}

#[test]
fn graphs_load_and_save_through_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.el");
    std::fs::write(&path, "0 1\n1 2\n2 0\n5 6\n").unwrap();
    let graph = Graph::load(&path).unwrap();
    assert_eq!((graph.num_nodes(), graph.num_edges()), (7, 4));
    let levels = graph.bfs(0).run().unwrap();
    assert_eq!(&levels[..3], &[0, 1, 2]);
    assert_eq!(levels[5], UNREACHED);
    let copy = dir.path().join("g.gcsr");
    graph.save(&copy).unwrap();
    let back = Graph::load(&copy).unwrap();
    assert_eq!((back.offsets(), back.targets()), (graph.offsets(), graph.targets()));
    let undirected = Graph::load_with(&path, grail::LoadOptions { undirected: true, ..Default::default() }).unwrap();
    assert_eq!(undirected.num_edges(), 8);
}

const SCALE: &str = "
graph { node value: f64 = 0.0; node hits: u32 = 0; }
param factor: f64 = 2.0;
param from: Node;
output value;
kernel scale(f: f64) { forall u in G.nodes() { u.value = (u.degree() as f64) * f; } }
fn main() -> u32 { invoke scale(factor); from.hits = 7; return from.hits; }
";

#[test]
fn a_program_runs_with_named_parameters_and_typed_outputs() {
    let program = Program::from_source("scale", SCALE).unwrap();
    assert_eq!(program.outputs(), ["value"]);
    assert_eq!(program.params().len(), 2);
    let graph = Graph::from_edges(3, [(0, 1), (0, 2), (1, 2)]).unwrap();
    let out = program.on(&graph).param("factor", 0.5).param("from", 1).run().unwrap();
    assert_eq!(out.property::<f64>("value").unwrap(), &[1.0, 0.5, 0.0]);
    assert_eq!(out.property::<u32>("hits").unwrap(), &[0, 7, 0]);
    assert_eq!(out.result().map(|v| v.to_string()), Some("7".to_string()));
    // Asking wrongly is an error that names the problem.
    let wrong_type = out.property::<u32>("value").unwrap_err().to_string();
    assert!(wrong_type.contains("f64"), "{wrong_type}");
    let unknown = out.property::<f64>("valeu").unwrap_err().to_string();
    assert!(unknown.contains("no property `valeu`"), "{unknown}");
    let bad_param = program.on(&graph).param("factr", 1).run().unwrap_err().to_string();
    assert!(bad_param.contains("factr"), "{bad_param}");
}

#[test]
fn compile_errors_come_back_rendered() {
    let error = Program::from_source("broken", "graph { node x: u32 = 0; }\nfn main() { y = 1; }\n").unwrap_err();
    let text = error.to_string();
    assert!(matches!(error, Error::Compile(_)));
    assert!(text.contains("broken.grail:2"), "{text}");
    assert!(Program::suite("bfs_do").is_ok());
    assert!(Program::suite("nope").unwrap_err().to_string().contains("bfs_do"));
}

#[test]
fn a_session_compiles_once_and_gives_what_single_runs_give() {
    let graph = sample();
    let undirected = graph.undirected();
    let mut session = Session::new(&undirected, Target::Cpu).unwrap();
    for source in [0, 5, 199] {
        assert_eq!(session.bfs(source).unwrap(), undirected.bfs(source).on(Target::Reference).run().unwrap());
        assert_eq!(session.sssp(source).unwrap(), undirected.sssp(source).on(Target::Reference).run().unwrap());
    }
    assert_eq!(session.triangles().unwrap(), undirected.triangles().on(Target::Reference).run().unwrap());
    assert!(session.bfs(1000).is_err());
    assert!(Session::new(&graph, Target::Reference).is_err());
}

#[test]
fn a_gpu_session_agrees_with_the_reference_when_there_is_a_gpu() {
    let graph = sample().undirected();
    let mut session = match Session::new(&graph, Target::Gpu(0)) {
        Ok(session) => session,
        Err(e) => {
            eprintln!("a_gpu_session_agrees_with_the_reference_when_there_is_a_gpu: skipped, no GPU: {e}");
            return;
        }
    };
    for source in [0, 7] {
        assert_eq!(session.bfs(source).unwrap(), graph.bfs(source).on(Target::Reference).run().unwrap());
        assert_eq!(session.sssp(source).unwrap(), graph.sssp(source).on(Target::Reference).run().unwrap());
    }
    // An unweighted graph: every edge weighs 1 on the device too.
    let unweighted = Graph::from_edges(5, [(0, 1), (1, 2), (2, 3), (3, 4), (0, 4)]).unwrap();
    let distances = unweighted.sssp(0).on(Target::Gpu(0)).verify().run().unwrap();
    assert_eq!(distances, [0, 1, 2, 3, 1]);
    unweighted.undirected().minimum_spanning_forest().on(Target::Gpu(0)).verify().run().unwrap();
    assert_eq!(
        session.connected_components().unwrap(),
        graph.connected_components().on(Target::Reference).run().unwrap()
    );
}

#[test]
fn a_time_limit_stops_runaway_runs_between_kernels() {
    use std::time::{Duration, Instant};
    let graph = sample();
    let err = graph.bfs(0).time_limit(Duration::ZERO).run().unwrap_err();
    assert!(err.is_timeout(), "{err}");
    assert!(err.to_string().contains("time limit"), "{err}");
    // A host loop that never ends stops soon after the limit, with a clean error.
    let spin = Program::from_source(
        "spin",
        "graph { node x: u32; }\nkernel touch() { forall u in G.nodes() { u.x = 1; } }\n\
         fn main() { while true { invoke touch(); } }\n",
    )
    .unwrap();
    let started = Instant::now();
    let err = spin.on(&graph).time_limit(Duration::from_millis(200)).run().unwrap_err();
    assert!(err.is_timeout() && err.to_string().contains("time limit of 200ms"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(30));
    // Without a limit, runs are unaffected.
    assert!(graph.bfs(0).time_limit(Duration::from_secs(600)).run().is_ok());
}

#[test]
fn input_collections_from_values_or_text() {
    use grail::Value;
    let source = include_str!("../../grail-lang/tests/programs/linked_input.grail");
    let program = Program::from_source("linked_input", source).unwrap();
    let graph = sample();
    let n = 20u32;
    let values: Vec<Value> =
        (0..n).map(|i| Value::Struct(vec![Value::U32(i), Value::Element((i + 1) % n), Value::U32(0)])).collect();
    let text: String = (0..n).map(|i| format!("{i} {} 0\n", (i + 1) % n)).collect();
    let mut table = program.table("links").unwrap();
    for i in 0..n {
        table.push(&[Value::U32(i), Value::Element((i + 1) % n), Value::U32(0)]).unwrap();
    }
    let runs = [
        program.on(&graph).input("links", values),
        program.on(&graph).input_text("links", text),
        program.on(&graph).input_table("links", table),
    ];
    for run in runs {
        let out = run.run().unwrap();
        assert_eq!(out.result(), Some(&Value::U32(n)));
        // Each link's sum is its value and the next one's, whatever order they come back in.
        let links = out.collection("links").unwrap();
        let mut sums: Vec<u32> = links.rows().map(|row| row[2] as u32).collect();
        sums.sort_unstable();
        let mut expected: Vec<u32> = (0..n).map(|i| i + (i + 1) % n).collect();
        expected.sort_unstable();
        assert_eq!(sums, expected);
        assert!(out.collection("nodes").is_err());
    }
    assert!(program.table("nodes").unwrap_err().to_string().contains("no collection `nodes`"));
    let err = program.on(&graph).run().unwrap_err().to_string();
    assert!(err.contains("takes input collection `links`"), "{err}");
    let err = program.on(&graph).input_text("links", "").input_text("nodes", "").run().unwrap_err().to_string();
    assert!(err.contains("has no input `nodes`"), "{err}");
}

/// Input properties of every scalar type reach their columns bit for bit (u64 ones are copied
/// whole, the others element by element from their bits).
#[test]
fn input_node_properties_of_every_type() {
    use grail::Value;
    let source = "graph { node a: f64; node b: bool; node c: i32; node d: Node; node e: u32; node f: f32; node g: i64; node sum: f64; }\n\
                  input a; input b; input c; input d; input e; input f; input g;\n\
                  output sum;\n\
                  kernel add() { forall u in G.nodes() {\n\
                      let mut s = u.a + u.c as f64 + u.d as u32 as f64 + u.e as f64 + u.f as f64 + u.g as f64;\n\
                      if u.b { s += 0.5; }\n\
                      u.sum = s;\n\
                  } }\n\
                  fn main() { invoke add(); }\n";
    let program = Program::from_source("typed_inputs", source).unwrap();
    let graph = sample();
    let n = graph.num_nodes();
    let f = |u: u32| u as f64 * 0.25;
    let mut run = program.on(&graph);
    run = run.input("a", (0..n).map(|u| Value::F64(f(u))).collect());
    run = run.input("b", (0..n).map(|u| Value::Bool(u % 3 == 0)).collect());
    run = run.input("c", (0..n).map(|u| Value::I32(-(u as i32))).collect());
    run = run.input("d", (0..n).map(|u| Value::Node(n - 1 - u)).collect());
    run = run.input("e", (0..n).map(|u| Value::U32(2 * u)).collect());
    run = run.input("f", (0..n).map(|u| Value::F32(u as f32 * 0.5)).collect());
    run = run.input("g", (0..n).map(|u| Value::I64(-3 * i64::from(u))).collect());
    let out = run.target(Target::Cpu).run().unwrap();
    let expected: Vec<f64> = (0..n)
        .map(|u| {
            let b = if u % 3 == 0 { 0.5 } else { 0.0 };
            f(u) - f64::from(u) + f64::from(n - 1 - u) + f64::from(2 * u) + f64::from(u) * 0.5 - 3.0 * f64::from(u) + b
        })
        .collect();
    assert_eq!(out.property::<f64>("sum").unwrap(), &expected[..]);
}

#[test]
fn input_node_properties_from_values_or_text() {
    use grail::Value;
    let source = "graph { node start: u64; node twice: u64; }\n\
                  input start;\n\
                  output twice;\n\
                  kernel double() { forall u in G.nodes() { u.twice = 2 * u.start + u.degree() as u64; } }\n\
                  fn main() { invoke double(); }\n";
    let program = Program::from_source("doubled", source).unwrap();
    let graph = sample();
    let n = graph.num_nodes() as u64;
    let offsets = graph.offsets();
    let expected: Vec<u64> = (0..n as usize).map(|u| 2 * (u * u) as u64 + offsets[u + 1] - offsets[u]).collect();
    let values: Vec<Value> = (0..n).map(|u| Value::U64(u * u)).collect();
    let text: String = (0..n).map(|u| format!("{}\n", u * u)).collect();
    for run in [program.on(&graph).input("start", values), program.on(&graph).input_text("start", text)] {
        let out = run.target(Target::Cpu).run().unwrap();
        assert_eq!(out.property::<u64>("twice").unwrap(), &expected[..]);
    }
    // One value per node, of the property's type.
    let err = program.on(&graph).input_text("start", "1\n2\n").run().unwrap_err().to_string();
    assert!(err.contains("input property `start` takes one u64 per node of the graph (200), given 2 row(s)"), "{err}");
    let err = program.on(&graph).input_text("start", "1\nseven\n").run().unwrap_err().to_string();
    assert!(err.contains("input `start`: line 2"), "{err}");
    let err = program.on(&graph).run().unwrap_err().to_string();
    assert!(err.contains("takes input property `start`"), "{err}");
}

#[test]
fn algorithms_run_partitioned_over_several_devices() {
    use grail::{Device, PartitionMethod, Topology};
    let graph = sample();
    let devices = [Device::Cpu; 3];
    let reference = graph.sssp(3).on(Target::Reference).run().unwrap();
    let partitioned = graph.sssp(3).on_devices(&devices, PartitionMethod::Random).verify().run().unwrap();
    assert_eq!(partitioned, reference);
    for topology in [Topology::Direct, Topology::Ring] {
        let asynchronous =
            graph.sssp(3).on_devices(&devices, PartitionMethod::Random).asynchronous(topology).verify().run().unwrap();
        assert_eq!(asynchronous, reference, "{topology}");
    }
    let levels = graph.bfs(3).on_devices(&devices[..2], PartitionMethod::Ordered).verify().run().unwrap();
    assert_eq!(levels, graph.bfs(3).on(Target::Reference).run().unwrap());
    let in_supersteps =
        graph.bfs(3).on_devices(&devices[..2], PartitionMethod::Ordered).bulk_synchronous().verify().run().unwrap();
    assert_eq!(in_supersteps, levels);
    // Triangle counting reads a neighbour's adjacency, which a ghost does not have.
    let error = graph.undirected().triangles().on_devices(&devices, PartitionMethod::Ordered).run().unwrap_err();
    assert!(error.to_string().contains("partitioned"), "{error}");

    // Parts given as each node's part (a partition file's contents): the same result, and a
    // list that does not fit is refused when the run starts.
    let owner: Vec<u32> = (0..200u32).map(|u| (u * 7 + 1) % 3).collect();
    let given = graph.sssp(3).on_devices(&devices, PartitionMethod::Metis).parts(owner.clone()).verify().run().unwrap();
    assert_eq!(given, reference);
    let usage = |run: grail::Result<Vec<u64>>| run.unwrap_err().to_string();
    let message = usage(graph.sssp(3).on_devices(&devices, PartitionMethod::Random).parts(owner[..199].to_vec()).run());
    assert!(message.contains("199 nodes' parts for a graph of 200 nodes"), "{message}");
    let message = usage(graph.sssp(3).on_devices(&devices[..2], PartitionMethod::Random).parts(owner.clone()).run());
    assert!(message.contains("but there are only 2 parts"), "{message}");
    let message =
        usage(graph.sssp(3).on_devices(&[Device::Cpu; 4], PartitionMethod::Random).parts(owner.clone()).run());
    assert!(message.contains("part 3 has no nodes"), "{message}");
    let message = usage(graph.sssp(3).parts(owner).run());
    assert!(message.contains("on_devices"), "{message}");
}
