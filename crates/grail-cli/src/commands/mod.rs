//! One module per subcommand.

mod bench;
mod bench_opts;
mod bench_prep;
mod bench_suite;
mod check;
mod compile;
mod convert;
mod demo;
mod devices;
mod gen_graph;
mod mesh;
mod run;
mod stats;
mod targets;
mod tune;

use anyhow::{Context, Result};
use grail_graph::io::{ReadOptions, read_graph};
use grail_graph::{BuildOptions, Graph};

use crate::cli::{CleanArgs, Command, GraphArgs};
use crate::progress::Bars;

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
        Command::Mesh(command) => mesh::mesh(command),
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

/// Reads the graph a command works on.
pub fn load(args: &GraphArgs, build: BuildOptions, progress: &Bars) -> Result<Graph> {
    if args.graph.is_none() {
        return Err(UsageError("--graph FILE is required (only `--variant help` needs no graph)".into()).into());
    }
    read_graph(args.path(), &ReadOptions { format: args.format, build }, progress).context("cannot load the graph")
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
