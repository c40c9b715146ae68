//! `grail convert`: read a graph, optionally clean, reorder or unweight it, write it.

use anyhow::{Context, Result};
use grail_graph::io::{ReadOptions, read_graph, write_graph};
use grail_graph::reorder::{Reordering, reorder};
use grail_graph::{Graph, builder};

use crate::cli::ConvertArgs;
use crate::progress::Bars;

pub fn convert(args: ConvertArgs, progress: &Bars) -> Result<()> {
    let options = ReadOptions { format: args.from, build: args.clean.build_options() };
    let mut graph = read_graph(&args.input, &options, progress)
        .with_context(|| format!("cannot load graph {}", args.input.display()))?;
    if args.unweighted && graph.is_weighted() {
        graph = Graph::from_csr(graph.into_csr().without_weights());
    }
    if let Some(order) = &args.reorder {
        let ordering = match order.as_str() {
            "degree" => Reordering::Degree,
            "bfs" => Reordering::Bfs,
            _ => Reordering::Random { seed: args.seed },
        };
        graph = reorder(&graph, ordering).apply(&graph).context("cannot reorder the graph")?;
        // Keep the adjacency order the user asked for, if any.
        if args.clean.sort {
            let edges = builder::EdgeList::from_csr(graph.out());
            graph = builder::build(edges, &grail_graph::BuildOptions { sort: true, ..Default::default() })?;
        }
    }
    write_graph(&graph, &args.output, args.to, progress)
        .with_context(|| format!("cannot write {}", args.output.display()))?;
    progress.clear();
    eprintln!("wrote {}: {} nodes, {} edges", args.output.display(), graph.num_nodes(), graph.num_edges());
    Ok(())
}
