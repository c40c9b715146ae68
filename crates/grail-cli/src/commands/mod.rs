//! One module per subcommand.

mod bench;
mod bench_multi;
mod bench_opts;
mod bench_prep;
mod bench_suite;
mod check;
mod compile;
mod convert;
mod demo;
mod devices;
mod dsssp;
mod gen_graph;
mod mesh;
mod partition;
mod pbf;
mod pta;
mod run;
mod sat;
mod sections;
mod stats;
mod targets;
mod tune;

use anyhow::{Context, Result};
use grail_graph::io::{ReadOptions, read_graph};
use grail_graph::{BuildOptions, Graph};

use crate::cli::{CleanArgs, Command, GraphArgs};

use crate::progress::Bars;
pub use sat::NoAssignment;

/// Runs a subcommand; `threads` is the --threads value, 0 when not given (one per core).
pub fn dispatch(command: Command, threads: usize, progress: &Bars) -> Result<()> {
    match command {
        Command::Gen(args) => gen_graph::gen_graph(args, progress),
        Command::Convert(args) => convert::convert(args, progress),
        Command::Stats(args) => stats::stats(args, progress),
        Command::Run(args) => run::run(args, threads, progress),
        Command::Tune(args) => tune::tune(args, threads, progress),
        Command::Demo(args) => demo::demo(args, threads, progress),
        Command::Bench(args) => bench::bench(args, threads, progress),
        Command::Check(args) => check::check(args),
        Command::Compile(args) => compile::compile(args),
        Command::Devices(args) => devices::devices(args),
        Command::Mesh(command) => mesh::mesh(command, threads, progress),
        Command::Sp(args) => sat::sp(args, threads, progress),
        Command::Pta(command) => pta::pta(command, threads, progress),
        Command::Dsssp(args) => dsssp::dsssp(args, threads, progress),
        Command::Partition(args) => partition::partition(args, progress),
        Command::Pbf(args) => pbf::pbf(args, threads, progress),
        Command::Sections(args) => sections::sections(args, threads, progress),
    }
}

impl CleanArgs {
    pub fn build_options(self) -> BuildOptions {
        BuildOptions {
            symmetrize: self.symmetrize,
            remove_self_loops: self.no_self_loops,
            dedup: self.dedup,
            sort: self.sort,
        }
    }
}

/// Refuses to write a binary format to standard output when that is a terminal (it would only
/// garble the screen); a pipe or a file takes it.
pub fn check_binary_to_terminal(path: &std::path::Path, format: Option<grail_graph::io::Format>) -> Result<()> {
    // SAFETY: isatty has no preconditions.
    let terminal = unsafe { libc::isatty(1) } == 1;
    if path.as_os_str() == "-"
        && terminal
        && let Ok(format) = grail_graph::io::output_format(path, format)
        && format.is_binary()
    {
        return Err(UsageError(format!(
            "-o -: {} is a binary format, and standard output is a terminal; redirect it to a file or a pipe",
            format.name()
        ))
        .into());
    }
    Ok(())
}

/// Says so on standard error when writing `graph` to `path` drops its weights (an edge list
/// holds none), rather than losing them silently.
pub fn note_dropped_weights(graph: &Graph, path: &std::path::Path, format: Option<grail_graph::io::Format>) {
    if graph.out().is_weighted()
        && let Ok(format) = grail_graph::io::output_format(path, format)
        && !format.stores_weights()
    {
        eprintln!(
            "note: {}: the {} format holds no edge weights, so the graph's weights are not written",
            path.display(),
            format.name()
        );
    }
}

/// `--base 1` shifts the ids of a plain edge list; the other formats fix their own numbering
/// (DIMACS, Matrix Market and METIS count from 1 and are read so; the binary ones from 0), and
/// shifting them again would silently renumber the graph: refused.
fn refuse_base_for_numbered_formats(path: &std::path::Path, options: &ReadOptions) -> Result<()> {
    use grail_graph::io::Format;
    let format = match options.format {
        Some(format) => Some(format),
        None => {
            // The first bytes tell a binary file from a text one of the same extension.
            let mut head = Vec::new();
            if let Ok(file) = std::fs::File::open(path) {
                use std::io::Read;
                let _ = file.take(64).read_to_end(&mut head);
            }
            grail_graph::io::detect_format(path, &head).ok()
        }
    };
    match format {
        Some(format @ (Format::Dimacs | Format::MatrixMarket | Format::Metis | Format::Galois | Format::Gcsr)) => {
            Err(UsageError(format!(
                "--base 1: {} is a {} file, which numbers its nodes itself ({}); --base is for plain edge \
                 lists (.el, .wel)",
                path.display(),
                format.name(),
                if matches!(format, Format::Galois | Format::Gcsr) { "from 0" } else { "from 1, and is read so" }
            ))
            .into())
        }
        _ => Ok(()),
    }
}

/// Reads an input graph: numbered from `base`, with a note when a plain edge list looks 1-based
/// but is read from 0.
pub fn read_input(path: &std::path::Path, options: &ReadOptions, base: u8, progress: &Bars) -> Result<Graph> {
    if base == 1 {
        refuse_base_for_numbered_formats(path, options)?;
    }
    let graph = read_graph(path, options, progress).context("cannot load the graph")?;
    if base == 1 {
        return grail_graph::io::from_one_based(&graph).context("cannot load the graph");
    }
    let edge_list = matches!(
        options.format.or_else(|| grail_graph::io::detect_format(path, &[]).ok()),
        Some(grail_graph::io::Format::EdgeList | grail_graph::io::Format::WeightedEdgeList)
    );
    if edge_list && graph.num_nodes() > 1 && graph.out().offsets()[1] == 0 && !graph.out().targets().contains(&0) {
        progress.clear();
        eprintln!(
            "note: node 0 of {} is in no edge: if the file numbers nodes from 1, read it with --base 1",
            path.display()
        );
    }
    Ok(graph)
}

/// `--variant help`: lists the algorithm's variants on standard output, and says whether it did
/// (`grail run`, `grail compile` and `grail tune` take it alike, with no graph).
pub fn variant_help(algorithm: grail_algos::Algorithm, variant: Option<&str>) -> bool {
    if variant != Some("help") {
        return false;
    }
    println!("variants of {algorithm} (the first is the default):");
    for variant in grail_algos::Variant::of(algorithm) {
        println!("  {:<10} {:<12} {}", variant.name, format!("({})", variant.program), variant.summary);
    }
    true
}

/// Reads the graph a command works on.
pub fn load(args: &GraphArgs, build: BuildOptions, progress: &Bars) -> Result<Graph> {
    if args.graph.is_none() {
        return Err(UsageError("--graph FILE is required (only `--variant help` needs no graph)".into()).into());
    }
    let options = ReadOptions { format: args.format, build, real_weights: args.weights.unwrap_or_default() };
    read_input(args.path(), &options, args.base, progress)
}

/// A mistake in how grail was called (an unknown name, a bad flag value) that clap cannot see:
/// reported like clap's own usage errors, with exit status 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Whether an error is a usage error (exit status 2).
pub fn is_usage_error(error: &anyhow::Error) -> bool {
    error.chain().any(|e| {
        e.is::<UsageError>()
            || matches!(e.downcast_ref::<grail_algos::AlgoError>(), Some(grail_algos::AlgoError::Usage(_)))
    })
}

/// Milliseconds, for reports.
pub fn millis(duration: std::time::Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}
