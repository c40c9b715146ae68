//! Running a suite algorithm on a target, and checking its result.

use std::time::{Duration, Instant};

use grail_graph::reference::{self, PageRankOptions};
use grail_graph::{Graph, GraphError, NodeId, Result};

use crate::algorithm::{Algorithm, Target};
use crate::output::Output;

/// Parameters of a run. The source is checked against the graph before anything runs.
#[derive(Debug, Clone, Default)]
pub struct RunParams {
    /// The source node (BFS, SSSP), as a 0-based internal id; 0 when not given.
    pub source: Option<u64>,
    pub pagerank: PageRankOptions,
}

impl RunParams {
    /// The source node, checked against `graph`.
    pub fn source_in(&self, graph: &Graph) -> Result<NodeId> {
        if graph.num_nodes() == 0 {
            return Err(GraphError::invalid("the graph has no nodes, so there is no source node"));
        }
        graph.check_node(self.source.unwrap_or(0), "source node")
    }
}

/// What a run produced and how long the algorithm itself took (not loading, not checking).
#[derive(Debug, Clone)]
pub struct RunResult {
    pub algorithm: Algorithm,
    pub target: Target,
    pub output: Output,
    pub time: Duration,
}

/// Runs `algorithm` on `graph` with `target`.
pub fn run(algorithm: Algorithm, graph: &Graph, target: Target, params: &RunParams) -> Result<RunResult> {
    let source = if algorithm.needs_source() { params.source_in(graph)? } else { 0 };
    let start = Instant::now();
    let output = match target {
        Target::Reference => run_reference(algorithm, graph, source, params),
    };
    Ok(RunResult { algorithm, target, output, time: start.elapsed() })
}

fn run_reference(algorithm: Algorithm, graph: &Graph, source: NodeId, params: &RunParams) -> Output {
    match algorithm {
        Algorithm::Bfs => Output::Levels(reference::bfs(graph, source)),
        Algorithm::Sssp => Output::Distances(reference::sssp(graph, source)),
        Algorithm::Cc => Output::Components(reference::connected_components(graph)),
        Algorithm::Pr => {
            let result = reference::pagerank(graph, &params.pagerank);
            Output::Ranks { ranks: result.ranks, iterations: result.iterations }
        }
        Algorithm::Tri => Output::Triangles(reference::triangles(graph)),
        Algorithm::Mis => Output::IndependentSet(reference::maximal_independent_set(graph)),
        Algorithm::Mst => Output::SpanningForest(reference::minimum_spanning_forest(graph)),
    }
}

/// Checks a result with the algorithm's verifier.
pub fn verify(algorithm: Algorithm, graph: &Graph, params: &RunParams, output: &Output) -> Result<()> {
    let mismatch = || GraphError::Verification(format!("{algorithm} cannot produce this kind of output"));
    match (algorithm, output) {
        (Algorithm::Bfs, Output::Levels(levels)) => reference::verify_bfs(graph, params.source_in(graph)?, levels),
        (Algorithm::Sssp, Output::Distances(d)) => reference::verify_sssp(graph, params.source_in(graph)?, d),
        (Algorithm::Cc, Output::Components(labels)) => reference::verify_components(graph, labels),
        (Algorithm::Pr, Output::Ranks { ranks, .. }) => reference::verify_pagerank(graph, ranks),
        (Algorithm::Tri, Output::Triangles(count)) => reference::verify_triangles(graph, *count),
        (Algorithm::Mis, Output::IndependentSet(in_set)) => reference::verify_mis(graph, in_set),
        (Algorithm::Mst, Output::SpanningForest(forest)) => reference::verify_msf(graph, forest),
        _ => Err(mismatch()),
    }
}
