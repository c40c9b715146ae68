//! `grail convert`: read a graph, optionally clean, reorder or unweight it, write it (a `.gcsr`
//! with what is known of it, and on request its reverse CSR and in-edge ids).

use anyhow::{Context, Result};
use grail_graph::GraphError;
use grail_graph::builder;
use grail_graph::io::{Format, ReadOptions, detect_format, write_graph};
use grail_graph::reorder::{Reordering, reorder};

use super::UsageError;
use crate::cli::ConvertArgs;
use crate::progress::Bars;

pub fn convert(args: ConvertArgs, progress: &Bars) -> Result<()> {
    let format = args.to.or_else(|| detect_format(&args.output, &[]).ok());
    if (args.with_reverse || args.with_in_edge_ids) && format != Some(Format::Gcsr) {
        let flag = if args.with_reverse { "--with-reverse" } else { "--with-in-edge-ids" };
        return Err(UsageError(format!("{flag} needs a .gcsr output (the only format that stores it)")).into());
    }
    let options = ReadOptions {
        format: args.from,
        build: args.clean.build_options(),
        real_weights: args.weights.unwrap_or_default(),
    };
    let mut graph = super::read_input(&args.input, &options, args.base, progress)?;
    if args.unweighted {
        graph = graph.without_weights();
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
    if args.with_in_edge_ids {
        graph.build_in_edge_ids();
    } else if args.with_reverse {
        graph.build_reverse();
    }
    super::check_binary_to_terminal(&args.output, args.to)?;
    super::note_dropped_weights(&graph, &args.output, args.to);
    write_graph(&graph, &args.output, args.to, progress)
        .map_err(|e| match e {
            GraphError::UnknownFormat { path, message } => {
                GraphError::UnknownFormat { path, message: format!("{message} with --to FORMAT") }
            }
            other => other,
        })
        .context("cannot write the graph")?;
    progress.clear();
    eprintln!("wrote {}: {} nodes, {} edges", args.output.display(), graph.num_nodes(), graph.num_edges());
    Ok(())
}
