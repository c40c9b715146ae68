//! `grail gen`: generate a graph and write it.

use anyhow::{Context, Result};
use grail_graph::generate::{GenOptions, Generator, generate};
use grail_graph::io::write_graph;

use crate::cli::{GenArgs, GenKind};
use crate::progress::Bars;

pub fn gen_graph(args: GenArgs, progress: &Bars) -> Result<()> {
    // The generator, whether its edges go both ways, and the shared options.
    let (generator, undirected, common) = match args.kind {
        GenKind::Sat { vars, ratio, k, seed, output } => return super::sat::generate(vars, ratio, k, seed, &output),
        GenKind::Rmat { scale, edge_factor, a, b, c, no_permute, undirected, common } => {
            (Generator::Rmat { scale, edge_factor, a, b, c, permute: !no_permute }, undirected, common)
        }
        GenKind::Random { nodes, degree, undirected, common } => {
            (Generator::Uniform { nodes, average_degree: degree }, undirected, common)
        }
        GenKind::Grid { rows, cols, common } => (Generator::Grid { rows, cols: cols.unwrap_or(rows) }, true, common),
        GenKind::Road { nodes, common } => (Generator::Road { nodes }, true, common),
    };
    if matches!(generator, Generator::Road { .. }) && common.max_weight.is_some() {
        return Err(super::UsageError(
            "--max-weight does not apply to road graphs: their weights are the edges' Euclidean lengths \
             (a grid cell is 1000 units long), which a cap would distort"
                .into(),
        )
        .into());
    }
    super::check_binary_to_terminal(&common.output, common.format)?;
    let options = GenOptions { seed: common.seed, max_weight: common.max_weight };
    let graph = generate(&generator, &options, undirected, progress)
        .with_context(|| format!("cannot generate the {} graph", generator.name()))?;
    super::note_dropped_weights(&graph, &common.output, common.format);
    write_graph(&graph, &common.output, common.format, progress)
        .map_err(|e| match e {
            grail_graph::GraphError::UnknownFormat { path, message } => {
                grail_graph::GraphError::UnknownFormat { path, message: format!("{message} with --format FORMAT") }
            }
            other => other,
        })
        .context("cannot write the generated graph")?;
    progress.clear();
    eprintln!(
        "wrote {}: {} nodes, {} edges{}",
        common.output.display(),
        graph.num_nodes(),
        graph.num_edges(),
        if graph.is_weighted() { ", weighted" } else { "" }
    );
    Ok(())
}
