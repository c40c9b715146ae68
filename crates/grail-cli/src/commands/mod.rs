//! One module per subcommand.

mod bench;
mod check;
mod compile;
mod convert;
mod demo;
mod gen_graph;
mod run;
mod stats;

use anyhow::{Context, Result};
use grail_graph::io::{ReadOptions, read_graph};
use grail_graph::{BuildOptions, Graph};

use crate::cli::{CleanArgs, Command, GraphArgs};
use crate::progress::Bars;

pub fn dispatch(command: Command, progress: &Bars) -> Result<()> {
    match command {
        Command::Gen(args) => gen_graph::gen_graph(args, progress),
        Command::Convert(args) => convert::convert(args, progress),
        Command::Stats(args) => stats::stats(args, progress),
        Command::Run(args) => run::run(args, progress),
        Command::Demo(args) => demo::demo(args, progress),
        Command::Bench(args) => bench::bench(args, progress),
        Command::Check(args) => check::check(args),
        Command::Compile(args) => compile::compile(args),
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
    read_graph(&args.graph, &ReadOptions { format: args.format, build }, progress)
        .with_context(|| format!("cannot load graph {}", args.graph.display()))
}

/// Milliseconds, for reports.
pub fn millis(duration: std::time::Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}
