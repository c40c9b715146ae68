//! Times the CPU executor on the IR's sample BFS (top-down, data-driven): a Kronecker graph
//! (Graph500 parameters, undirected) and a road-like graph with thousands of levels.
//!
//! `cargo run --release -p grail-runtime --example bfs_bench [scale] [road_nodes] [trials] [threads,...]`

use std::time::{Duration, Instant};

use grail_graph::generate::{GenOptions, Generator, generate};
use grail_graph::{Graph, NoProgress, reference};
use grail_ir::samples::{LEVEL, bfs};
use grail_ir::*;
use grail_runtime::ModuleCache;
use grail_runtime::cpu::{CCompiler, CpuProgram, RunOptions, Value};

/// The sample BFS with `level` set to INF first (the sample leaves that to lowering).
fn bfs_module() -> Module {
    let mut module = bfs();
    let init = Kernel {
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
                    place: Place::Property { property: LEVEL, element: Box::new(Expr::local(LocalId(0), Type::Node)) },
                    value: Expr::inf(Type::U32),
                }],
            }))],
        },
    };
    module.kernels.push(init);
    module.main.block.insert(0, Stmt::Invoke { kernel: KernelId(1), args: vec![], result: None });
    module
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn bench(name: &str, program: &CpuProgram, graph: &Graph, trials: usize, thread_counts: &[usize]) {
    let sources: Vec<u32> = (0..)
        .map(|i: u64| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) as u32 % graph.num_nodes())
        .filter(|&u| graph.out_degree(u) > 0)
        .take(trials)
        .collect();
    let started = Instant::now();
    for &s in &sources {
        std::hint::black_box(reference::bfs(graph, s));
    }
    let reference_time = started.elapsed() / trials as u32;
    println!(
        "{name}: {} nodes, {} edges; sequential reference BFS {:.2} ms",
        graph.num_nodes(),
        graph.num_edges(),
        reference_time.as_secs_f64() * 1e3
    );
    for &threads in thread_counts {
        let options = RunOptions { threads };
        let mut elapsed = Vec::new();
        let mut kernel_time = Vec::new();
        let mut levels = 0;
        for &s in &sources {
            let output = program.run(graph, &[Some(Value::Node(s))], &options, &mut std::io::sink()).unwrap();
            elapsed.push(output.stats.elapsed);
            kernel_time.push(output.stats.kernels[0].time);
            levels = output.stats.kernels[0].invocations;
        }
        let (e, k) = (median(elapsed), median(kernel_time));
        println!(
            "  threads {threads}: run {:.2} ms (expand {:.2} ms over {levels} levels, {:.2} us/level)",
            e.as_secs_f64() * 1e3,
            k.as_secs_f64() * 1e3,
            k.as_secs_f64() * 1e6 / levels as f64
        );
    }
}

fn main() {
    let args: Vec<u64> = std::env::args().skip(1).take(3).map(|a| a.parse().expect("numbers")).collect();
    let scale = args.first().copied().unwrap_or(18) as u32;
    let road_nodes = args.get(1).copied().unwrap_or(1 << 20) as u32;
    let trials = args.get(2).copied().unwrap_or(9) as usize;
    let threads: Vec<usize> = std::env::args()
        .nth(4)
        .map_or_else(|| vec![1, 2], |list| list.split(',').map(|t| t.parse().expect("thread counts")).collect());
    let compiler = CCompiler::detect().unwrap();
    let cache = ModuleCache::default_location();
    let program = CpuProgram::compile(bfs_module(), &compiler, Some(&cache)).unwrap();
    let options = GenOptions { seed: 1, max_weight: None };
    let kron = generate(&Generator::graph500(scale), &options, true, &NoProgress).unwrap();
    bench(&format!("kron scale {scale}"), &program, &kron, trials, &threads);
    drop(kron);
    let road = generate(&Generator::Road { nodes: road_nodes }, &options, false, &NoProgress).unwrap();
    bench("road", &program, &road, trials, &threads);
    drop(road);
    let strip = generate(&Generator::Grid { rows: 4, cols: 50_000 }, &options, false, &NoProgress).unwrap();
    bench("grid 4 x 50000", &program, &strip, trials, &threads);
}
