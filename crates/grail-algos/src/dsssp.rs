//! Incremental single-source shortest paths (Falcon's dynamic SSSP): edges arrive in batches,
//! and after each batch the distances are repaired from the inserted edges' heads instead of
//! recomputed.
//!
//! Each batch is inserted into the graph's CSR on the host ([`grail_graph::Csr::with_inserted`], one parallel
//! copy of the edge arrays), and then the grail program `programs/dsssp.grail` repairs the
//! distances on the CPU or a GPU: the known distances go in as the program's starting `dist` (an
//! input property), the inserted edges as an input collection, and only the nodes whose
//! distance falls are visited. On a GPU the new graph is copied to the device for every batch (a
//! graph that grows on the device itself, by edges added from kernels, is not built yet), so a
//! batch's whole time there is dominated by that copy; [`Timing`] keeps the computation apart. Deletions are not supported: they raise
//! distances, which a repair from the changed edges alone cannot undo.
//!
//! Each batch can also be solved from scratch by the suite's SSSP program on the same target
//! (`fresh`), for the comparison the benchmark reports, and checked against a fresh Dijkstra's
//! on the graph as it is (`verify`).

use std::io::sink;
use std::time::{Duration, Instant};

use grail_graph::insert::Insertion;
use grail_graph::reference::{INFINITE_DISTANCE, repair_sssp, sssp};
use grail_graph::{Column, Graph, GraphError, NodeId};
use grail_ir::{Module, OptConfig};
use grail_runtime::ModuleCache;
use grail_runtime::Table;
use grail_runtime::cpu::{CCompiler, CpuProgram, RunOptions, RunOutput, Value};
use grail_runtime::gpu::{Device, DeviceGraph, GpuProgram};
use rayon::prelude::*;

use crate::error::{AlgoError, Result};
use crate::{Algorithm, Target, Variant};

/// How to run: where, and what to measure and check besides the repair.
#[derive(Debug, Clone)]
pub struct Options {
    /// `Reference` (sequential Dijkstra's restarted from the inserted edges), `Cpu` or `Gpu`.
    pub target: Target,
    pub device: usize,
    /// CPU threads (0: one per core).
    pub threads: usize,
    /// The optimizations both programs are compiled with.
    pub opt: OptConfig,
    /// Also solve every batch from scratch on the same target, for comparison.
    pub fresh: bool,
    /// Check the distances after every batch against a fresh Dijkstra's on the graph as it is.
    pub verify: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { target: Target::Cpu, device: 0, threads: 0, opt: OptConfig::all(), fresh: true, verify: false }
    }
}

/// How long a step took.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Timing {
    /// The step as a caller waits for it; on a GPU, copying the graph and the inputs up and the
    /// distances back included.
    pub total: Duration,
    /// The computation alone: the kernels' GPU time on a GPU; the program's run on the CPU (its
    /// input collections' filling included); the reference's run.
    pub compute: Duration,
}

/// What one batch did.
#[derive(Debug, Clone)]
pub struct BatchReport {
    /// Numbered from 1.
    pub index: usize,
    /// Edges inserted by this batch.
    pub inserted: usize,
    /// Edges of the graph after it.
    pub edges: u64,
    /// Inserting the batch into the CSR (host).
    pub merge: Duration,
    /// Repairing the distances.
    pub update: Timing,
    /// Nodes whose distance fell.
    pub lowered: usize,
    /// Solving the new graph from scratch on the same target, when asked for.
    pub fresh: Option<Timing>,
    /// Whether the distances were checked against a fresh Dijkstra's (and passed).
    pub verified: bool,
}

/// The whole run.
#[derive(Debug, Clone)]
pub struct Report {
    /// Solving the graph as given, before the first batch.
    pub initial: Timing,
    pub batches: Vec<BatchReport>,
    /// The distances after the last batch.
    pub distances: Vec<u64>,
    /// The graph after the last batch.
    pub graph: Graph,
}

/// Runs incremental SSSP from `source` over `batches`, calling `each` after every batch.
pub fn run(
    graph: Graph,
    source: NodeId,
    batches: &[Vec<Insertion>],
    options: &Options,
    mut each: impl FnMut(&BatchReport),
) -> Result<Report> {
    if graph.out().has_real_weights() {
        return Err(AlgoError::Graph(GraphError::invalid(
            "incremental SSSP takes integer weights; the graph has real ones (read it with --weights round|scale)",
        )));
    }
    let source = graph.check_node(u64::from(source), "source node")?;
    let engine = Engine::new(options)?;
    let mut graph = graph;
    let (mut distances, initial) = engine.fresh(&graph, source)?;
    engine.reserve_update(&graph);
    if options.verify {
        check_equal(&distances, &sssp(&graph, source), "the initial distances", DIJKSTRA)?;
    }
    let mut reports = Vec::with_capacity(batches.len());
    for (i, batch) in batches.iter().enumerate() {
        let index = i + 1;
        let started = Instant::now();
        graph = Graph::from_csr(graph.out().with_inserted(batch).map_err(|e| batch_error(index, e))?);
        let merge = started.elapsed();
        let before = distances;
        let (after, update) = engine.update(&graph, &before, batch)?;
        let lowered = (0..after.len()).into_par_iter().filter(|&v| after[v] < before[v]).count();
        engine.recycle(before, true);
        let fresh = if options.fresh {
            let (fresh, timing) = engine.fresh(&graph, source)?;
            check_equal(&after, &fresh, &format!("batch {index}: the repaired distances"), "a run from scratch")?;
            engine.recycle(fresh, false);
            Some(timing)
        } else {
            None
        };
        if options.verify {
            check_equal(&after, &sssp(&graph, source), &format!("batch {index}: the repaired distances"), DIJKSTRA)?;
        }
        distances = after;
        let report = BatchReport {
            index,
            inserted: batch.len(),
            edges: graph.num_edges(),
            merge,
            update,
            lowered,
            fresh,
            verified: options.verify,
        };
        each(&report);
        reports.push(report);
    }
    Ok(Report { initial, batches: reports, distances, graph })
}

fn batch_error(index: usize, e: GraphError) -> AlgoError {
    AlgoError::Graph(GraphError::invalid(format!("batch {index}: {e}")))
}

const DIJKSTRA: &str = "a fresh Dijkstra's";

/// `got` must be `expected` node for node; the error names the first node that differs.
fn check_equal(got: &[u64], expected: &[u64], what: &str, by: &str) -> Result<()> {
    let shown = |d: u64| if d == INFINITE_DISTANCE { "inf".to_string() } else { d.to_string() };
    match (0..got.len()).into_par_iter().find_first(|&v| got[v] != expected[v]) {
        None => Ok(()),
        Some(v) => Err(AlgoError::Graph(GraphError::Verification(format!(
            "{what}: node {v} is at distance {}, {by} says {}",
            shown(got[v]),
            shown(expected[v])
        )))),
    }
}

/// The two programs (repair and from scratch), compiled for the target.
enum Engine {
    Reference,
    Cpu { update: Box<CpuProgram>, fresh: Box<CpuProgram>, threads: usize },
    Gpu { update: Box<GpuProgram>, fresh: Box<GpuProgram> },
}

impl Engine {
    fn new(options: &Options) -> Result<Engine> {
        let modules = || -> Result<(Module, Module)> {
            let update = crate::suite::optimized_program("dsssp", &options.opt)?;
            let variant = Variant::find(Algorithm::Sssp, None).expect("sssp has a default variant");
            Ok((update, crate::suite::optimized(variant, &options.opt)?))
        };
        let cache = ModuleCache::default_location();
        Ok(match options.target {
            Target::Reference => Engine::Reference,
            Target::Cpu => {
                let (update, fresh) = modules()?;
                let compiler = CCompiler::detect()?;
                Engine::Cpu {
                    update: Box::new(CpuProgram::compile(update, &compiler, Some(&cache))?),
                    fresh: Box::new(CpuProgram::compile(fresh, &compiler, Some(&cache))?),
                    threads: options.threads,
                }
            }
            Target::Gpu => {
                let (update, fresh) = modules()?;
                let device = Device::open(options.device).map_err(grail_runtime::RuntimeError::from)?;
                Engine::Gpu {
                    update: Box::new(GpuProgram::compile(update, device.clone(), Some(&cache))?),
                    fresh: Box::new(GpuProgram::compile(fresh, device, Some(&cache))?),
                }
            }
        })
    }

    /// The distances from `source` computed from scratch.
    fn fresh(&self, graph: &Graph, source: NodeId) -> Result<(Vec<u64>, Timing)> {
        let started = Instant::now();
        match self {
            Engine::Reference => {
                let distances = sssp(graph, source);
                let time = started.elapsed();
                Ok((distances, Timing { total: time, compute: time }))
            }
            Engine::Cpu { fresh, threads, .. } => {
                let params = source_params(fresh.module(), source);
                let mut output = fresh.run(graph, &params, &RunOptions { threads: *threads }, &mut sink())?;
                let compute = output.stats.elapsed;
                let distances = distances_of(fresh.module(), &mut output)?;
                fresh.recycle(output.properties);
                Ok((distances, Timing { total: started.elapsed(), compute }))
            }
            Engine::Gpu { fresh, .. } => {
                let params = source_params(fresh.module(), source);
                let (mut output, times) = fresh.run(graph, &params, &mut sink())?;
                let distances = distances_of(fresh.module(), &mut output)?;
                Ok((distances, Timing { total: started.elapsed(), compute: times.kernels }))
            }
        }
    }

    /// On the CPU, the repair's columns allocated (and their pages touched) before the first
    /// batch, so that its repair does not pay the page faults the later ones are spared by
    /// reusing columns.
    fn reserve_update(&self, graph: &Graph) {
        if let Engine::Cpu { update, .. } = self {
            update.reserve_columns(graph.num_nodes() as usize, graph.num_edges() as usize);
        }
    }

    /// Hands distances no longer needed back to the program that computed them (the repair's
    /// or the fresh run's), whose next run fills its column in them instead of fresh pages.
    fn recycle(&self, distances: Vec<u64>, repaired: bool) {
        if let Engine::Cpu { update, fresh, .. } = self {
            let program = if repaired { update } else { fresh };
            program.recycle(vec![Column::U64(distances)]);
        }
    }

    /// `before` repaired after `batch` was inserted into `graph`.
    fn update(&self, graph: &Graph, before: &[u64], batch: &[Insertion]) -> Result<(Vec<u64>, Timing)> {
        let started = Instant::now();
        match self {
            Engine::Reference => {
                let mut distances = before.to_vec();
                repair_sssp(graph, &mut distances, batch);
                let time = started.elapsed();
                Ok((distances, Timing { total: time, compute: time }))
            }
            Engine::Cpu { update, threads, .. } => {
                let inputs = update_inputs(update.module(), before, batch)?;
                let params = vec![None; update.module().params.len()];
                let mut output =
                    update.run_with_inputs(graph, &params, &inputs, &RunOptions { threads: *threads }, &mut sink())?;
                let compute = output.stats.elapsed;
                let distances = distances_of(update.module(), &mut output)?;
                update.recycle(output.properties);
                Ok((distances, Timing { total: started.elapsed(), compute }))
            }
            Engine::Gpu { update, .. } => {
                let inputs = update_inputs(update.module(), before, batch)?;
                let mut resident = DeviceGraph::new(update.device(), graph)?;
                let params = vec![None; update.module().params.len()];
                let (mut output, times) =
                    update.run_on_with_inputs(graph, &mut resident, &params, &inputs, &mut sink())?;
                let distances = distances_of(update.module(), &mut output)?;
                Ok((distances, Timing { total: started.elapsed(), compute: times.kernels }))
            }
        }
    }
}

/// The suite SSSP program's parameters: the source, the rest left to their defaults.
fn source_params(module: &Module, source: NodeId) -> Vec<Option<Value>> {
    module.params.iter().map(|p| (p.name == "source").then_some(Value::Node(source))).collect()
}

/// The program's output distances, taken out of `output`.
fn distances_of(module: &Module, output: &mut RunOutput) -> Result<Vec<u64>> {
    let id = *module.outputs.first().ok_or_else(|| AlgoError::Internal(format!("`{}` has no output", module.name)))?;
    match std::mem::replace(&mut output.properties[id.index()], Column::Bool(Vec::new())) {
        Column::U64(distances) => Ok(distances),
        _ => Err(AlgoError::Internal(format!("`{}` does not output u64 distances", module.name))),
    }
}

/// `dsssp`'s inputs: `inserted` (the batch), then `dist` (every node's distance before it).
fn update_inputs(module: &Module, before: &[u64], batch: &[Insertion]) -> Result<Vec<Table>> {
    let ([inserted_id], [dist_id]) = (&module.collection_inputs[..], &module.property_inputs[..]) else {
        return Err(AlgoError::Internal("dsssp's inputs are not inserted and dist".into()));
    };
    let inserted = batch.iter().flat_map(|&(u, v, w)| [u64::from(u), u64::from(v), u64::from(w)]).collect();
    let inserted = Table::from_words(Table::for_collection(module, *inserted_id).leaves().to_vec(), inserted);
    let dist = Table::from_words(vec![module.properties[dist_id.index()].ty], before.to_vec());
    let fail = |e: grail_runtime::RuntimeError| AlgoError::Internal(format!("dsssp's inputs: {e}"));
    Ok(vec![inserted.map_err(fail)?, dist.map_err(fail)?])
}
