//! `grail bench prep`: how long the suite spends making its input ready ("prep") before a program
//! sees the graph, step by step, and what the first run of a file costs (load plus prep).
//!
//! Graphs are generated as `grail bench suite` makes them (`kron:S`, `urand:S`, `grid:S`,
//! `road:S`: symmetric, simple, sorted, weighted). Kronecker and uniform graphs are also measured
//! directed (the raw edges, simple but not symmetric), the input that really needs
//! symmetrizing. Each graph is written twice to a temporary folder: as a `.gcsr` version 1 file
//! (what older grail wrote: nothing known of the graph) and as a prepared version 2 file
//! (`grail convert --with-reverse`: what is known of it, and its reverse CSR). Every step is
//! timed on its own, best of `--repeat`, with the files in the page cache:
//!
//! * `load`: reading the version 1 file;
//! * `scan`: learning, in one pass, whether adjacencies are sorted, without self-loops or
//!   duplicates (what tells prep which work it can skip);
//! * `simple`: the undirected simple graph (tri and mis), from the graph as loaded;
//! * `degree`: numbering the simple graph by decreasing degree, adjacencies sorted (tri);
//! * `reverse`: transposing the graph (the reverse CSR of programs that pull over in-edges);
//! * `tri`, `mis`, `pull`: the whole prep of those programs on the loaded graph;
//! * `first tri`, `first pull`: loading the version 1 file plus that prep, what a first run pays
//!   before the executor starts;
//! * `load v2`, `v2 tri`, `v2 pull`: the same from the prepared file.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use grail_algos::suite::{InputNeeds, prepare_input};
use grail_graph::generate::{GenOptions, Generator, generate};
use grail_graph::io::{Format, ReadOptions, read_graph, write_gcsr_version_1, write_graph};
use grail_graph::reorder::by_degree;
use grail_graph::undirected::undirected_simple;
use grail_graph::{Graph, NoProgress};
use serde_json::json;

use super::bench_suite::parse_graph;
use super::millis;
use crate::progress::Bars;

/// The prep of the suite's program kinds.
const TRI: InputNeeds = InputNeeds { undirected_simple: true, degree_order: true, ..InputNeeds::NONE };
const MIS: InputNeeds = InputNeeds { undirected_simple: true, ..InputNeeds::NONE };
const PULL: InputNeeds = InputNeeds { reverse: true, ..InputNeeds::NONE };

/// The columns of the table, in order: (JSON key, heading).
const STEPS: [(&str, &str); 13] = [
    ("load_ms", "load"),
    ("scan_ms", "scan"),
    ("simple_ms", "simple"),
    ("degree_ms", "degree"),
    ("reverse_ms", "reverse"),
    ("tri_ms", "tri"),
    ("mis_ms", "mis"),
    ("pull_ms", "pull"),
    ("first_tri_ms", "first tri"),
    ("first_pull_ms", "first pull"),
    ("load_v2_ms", "load v2"),
    ("first_tri_v2_ms", "v2 tri"),
    ("first_pull_v2_ms", "v2 pull"),
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
            let v1 = dir.path().join(format!("{label}-{input}-v1.gcsr"));
            write_gcsr_version_1(&graph, &v1).context("cannot write the benchmark's graph")?;
            let v2 = dir.path().join(format!("{label}-{input}-v2.gcsr"));
            let mut prepared = graph.clone();
            prepared.build_reverse();
            write_graph(&prepared, &v2, Some(Format::Gcsr), &NoProgress)
                .context("cannot write the benchmark's graph")?;
            drop(prepared);
            let row = measure(&label, input, &graph, [&v1, &v2], repeat.max(1))?;
            std::fs::remove_file(&v1).ok();
            std::fs::remove_file(&v2).ok();
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
             sorted); dir: the directed simple graph; load .. first pull: from a .gcsr version 1 file; v2: \
             from a version 2 file written with --with-reverse",
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

fn measure(label: &str, input: &str, graph: &Graph, paths: [&Path; 2], repeat: u32) -> Result<serde_json::Value> {
    let read_from =
        |path: &Path| read_graph(path, &ReadOptions { format: Some(Format::Gcsr), ..Default::default() }, &NoProgress);
    let read = || read_from(paths[0]);
    let read_v2 = || read_from(paths[1]);
    let loaded = read()?;
    anyhow::ensure!(loaded.out() == graph.out(), "{label}: the graph read back differs from the one written");
    let loaded_v2 = read_v2()?;
    anyhow::ensure!(
        loaded_v2.out() == graph.out() && loaded_v2.reverse().is_some(),
        "{label}: the prepared graph read back differs from the one written"
    );
    drop(loaded_v2);
    let load = best(repeat, || (), |()| Ok(read()?))?;
    let load_v2 = best(repeat, || (), |()| Ok(read_v2()?))?;
    // The steps run on the graph as loaded: nothing known of it but what the file says.
    let scan = best(repeat, || (), |()| Ok(grail_graph::facts::scan(loaded.out())))?;
    let simple_graph = undirected_simple(&loaded);
    let simple = best(repeat, || (), |()| Ok(undirected_simple(&loaded).num_edges()))?;
    let degree = best(repeat, || (), |()| Ok(by_degree(&simple_graph, false)?.num_edges()))?;
    let reverse = best(repeat, || (), |()| Ok(loaded.out().transpose()))?;
    let prep = |needs| best(repeat, || (), |()| Ok(prepare_input(&loaded, needs)?.graph.num_edges()));
    let first = |needs| best(repeat, || (), |()| Ok(prepare_input(&read()?, needs)?.graph.num_edges()));
    let first_v2 = |needs| best(repeat, || (), |()| Ok(prepare_input(&read_v2()?, needs)?.graph.num_edges()));
    Ok(json!({
        "graph": label,
        "input": input,
        "nodes": graph.num_nodes(),
        "edges": graph.num_edges(),
        "threads": rayon::current_num_threads(),
        "load_ms": millis(load),
        "scan_ms": millis(scan),
        "simple_ms": millis(simple),
        "degree_ms": millis(degree),
        "reverse_ms": millis(reverse),
        "tri_ms": millis(prep(TRI)?),
        "mis_ms": millis(prep(MIS)?),
        "pull_ms": millis(prep(PULL)?),
        "first_tri_ms": millis(first(TRI)?),
        "first_pull_ms": millis(first(PULL)?),
        "load_v2_ms": millis(load_v2),
        "first_tri_v2_ms": millis(first_v2(TRI)?),
        "first_pull_v2_ms": millis(first_v2(PULL)?),
    }))
}
