//! `grail bench prep`: how long the suite spends making its input ready ("prep") before a program
//! sees the graph, step by step, and what the first run of a file costs (load plus prep).
//!
//! Graphs are generated as `grail bench suite` makes them (`kron:S`, `urand:S`, `grid:S`,
//! `road:S`: symmetric, simple, sorted, weighted). Kronecker and uniform graphs are also measured
//! directed (the raw edges, simple but not symmetric), the input that really needs
//! symmetrizing. Each graph is written once as `.gcsr` to a temporary folder; every step is timed
//! on its own, best of `--repeat`, with the file in the page cache:
//!
//! * `load`: reading the `.gcsr` file;
//! * `simple`: the undirected simple graph (tri and mis);
//! * `degree`: numbering the simple graph by decreasing degree, adjacencies sorted (tri);
//! * `reverse`: the reverse CSR (programs that pull over in-edges);
//! * `tri`, `mis`, `pull`: the whole prep of those programs on the loaded graph;
//! * `first tri`, `first pull`: loading the file plus that prep, what a first run pays before
//!   the executor starts.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use grail_algos::suite::{InputNeeds, prepare_input, undirected_simple};
use grail_graph::builder::sort_adjacencies;
use grail_graph::generate::{GenOptions, Generator, generate};
use grail_graph::io::{Format, ReadOptions, read_graph, write_graph};
use grail_graph::reorder::{Reordering, reorder};
use grail_graph::{Graph, NoProgress};
use serde_json::json;

use super::bench_suite::parse_graph;
use super::millis;
use crate::progress::Bars;

/// The prep of the suite's program kinds.
const TRI: InputNeeds = InputNeeds { undirected_simple: true, degree_order: true, reverse: false };
const MIS: InputNeeds = InputNeeds { undirected_simple: true, degree_order: false, reverse: false };
const PULL: InputNeeds = InputNeeds { undirected_simple: false, degree_order: false, reverse: true };

/// The columns of the table, in order: (JSON key, heading).
const STEPS: [(&str, &str); 9] = [
    ("load_ms", "load"),
    ("simple_ms", "simple"),
    ("degree_ms", "degree"),
    ("reverse_ms", "reverse"),
    ("tri_ms", "tri"),
    ("mis_ms", "mis"),
    ("pull_ms", "pull"),
    ("first_tri_ms", "first tri"),
    ("first_pull_ms", "first pull"),
];

pub fn prep(graphs: &[String], repeat: u32, json: bool, progress: &Bars) -> Result<()> {
    let specs = graphs.iter().map(|g| parse_graph(g)).collect::<Result<Vec<_>>>()?;
    let dir = tempfile::tempdir().context("cannot create a temporary folder")?;
    let mut rows = Vec::new();
    if !json {
        print!("{:<12} {:<5} {:>9} {:>10}", "graph", "input", "nodes", "edges");
        for (_, heading) in STEPS {
            print!(" {heading:>10}");
        }
        println!();
    }
    for (label, generator, _) in specs {
        let options = GenOptions { seed: 1, max_weight: Some(255) };
        let mut inputs = vec![("sym", true)];
        if matches!(generator, Generator::Rmat { .. } | Generator::Uniform { .. }) {
            inputs.push(("dir", false));
        }
        for (input, undirected) in inputs {
            let graph = generate(&generator, &options, undirected, progress)
                .with_context(|| format!("cannot generate {label}"))?;
            progress.clear();
            let path = dir.path().join(format!("{label}-{input}.gcsr"));
            write_graph(&graph, &path, Some(Format::Gcsr), &NoProgress)
                .with_context(|| format!("cannot write {}", path.display()))?;
            let row = measure(&label, input, &graph, &path, repeat.max(1))?;
            std::fs::remove_file(&path).ok();
            if !json {
                print!(
                    "{:<12} {:<5} {:>9} {:>10}",
                    label,
                    input,
                    row["nodes"].as_u64().unwrap_or(0),
                    row["edges"].as_u64().unwrap_or(0)
                );
                for (key, _) in STEPS {
                    match row[key].as_f64() {
                        Some(ms) => print!(" {ms:>10.1}"),
                        None => print!(" {:>10}", "-"),
                    }
                }
                println!();
            }
            rows.push(row);
        }
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        println!(
            "\nms, best of {repeat}, {} threads; sym: as `grail bench suite` generates it (symmetric, simple, \
             sorted); dir: the directed simple graph",
            rayon::current_num_threads()
        );
    }
    Ok(())
}

/// The best time of `repeat` runs of `f` (each given a fresh input by `setup`, not timed).
fn best<I, T>(repeat: u32, mut setup: impl FnMut() -> I, mut f: impl FnMut(I) -> Result<T>) -> Result<Duration> {
    let mut best = Duration::MAX;
    for _ in 0..repeat {
        let input = setup();
        let start = Instant::now();
        let result = f(input)?;
        best = best.min(start.elapsed());
        drop(std::hint::black_box(result));
    }
    Ok(best)
}

fn measure(label: &str, input: &str, graph: &Graph, path: &Path, repeat: u32) -> Result<serde_json::Value> {
    let read = || read_graph(path, &ReadOptions { format: Some(Format::Gcsr), ..Default::default() }, &NoProgress);
    let loaded = read()?;
    anyhow::ensure!(loaded.out() == graph.out(), "{label}: the graph read back differs from the one written");
    let load = best(repeat, || (), |()| Ok(read()?))?;
    let simple_graph = undirected_simple(graph)?;
    let simple = best(repeat, || (), |()| Ok(undirected_simple(graph)?))?;
    let degree = best(
        repeat,
        || (),
        |()| {
            let relabelled = reorder(&simple_graph, Reordering::Degree).apply(&simple_graph)?;
            Ok(sort_adjacencies(relabelled.into_csr()))
        },
    )?;
    let reverse = best(
        repeat,
        || Graph::from_csr(graph.out().clone()),
        |mut g| {
            g.build_reverse();
            Ok(g)
        },
    )?;
    let prep = |needs| best(repeat, || (), |()| Ok(prepare_input(&loaded, needs)?.graph.num_edges()));
    let first = |needs| best(repeat, || (), |()| Ok(prepare_input(&read()?, needs)?.graph.num_edges()));
    Ok(json!({
        "graph": label,
        "input": input,
        "nodes": graph.num_nodes(),
        "edges": graph.num_edges(),
        "threads": rayon::current_num_threads(),
        "load_ms": millis(load),
        "simple_ms": millis(simple),
        "degree_ms": millis(degree),
        "reverse_ms": millis(reverse),
        "tri_ms": millis(prep(TRI)?),
        "mis_ms": millis(prep(MIS)?),
        "pull_ms": millis(prep(PULL)?),
        "first_tri_ms": millis(first(TRI)?),
        "first_pull_ms": millis(first(PULL)?),
    }))
}
