//! Incremental single-source shortest paths (Falcon's dynamic SSSP): edges arrive in batches,
//! and after each batch the distances are repaired from the inserted edges' heads instead of
//! recomputed.
//!
//! The graph gets room per node before the first solve ([`Graph::make_room`]), and each batch
//! is inserted into it in place on the host ([`Graph::insert_edges`]: the batch's edges go after
//! their rows, rows that outgrow their room move; no copy of the edge arrays), and then the
//! grail program `programs/dsssp.grail` repairs the distances on the CPU or a GPU: the known
//! distances go in as the program's starting `dist` (an input property), the inserted edges as
//! an input collection, and only the nodes whose distance falls are visited. On a GPU the graph
//! and the distances stay on the device from batch to batch: the batch goes up and is inserted
//! there too ([`DeviceGraph::insert`], the same steps on the same arrays as the host's), the
//! repair starts from the distances the last one left there
//! ([`ResidentColumn`]) and takes the batch the insertion uploaded as its input collection
//! ([`ResidentTable`]), and copying the distances back is timed apart. Deletions are not supported: they
//! raise distances, which a repair from the changed edges alone cannot undo.
//!
//! Before the first batch the repair runs once, untimed, on a neutral batch (self-loops of weight
//! 0, as many as the largest batch has edges), so that what a program's first run makes is not
//! counted against the first batch; its window is chosen once, from every edge.
//!
//! Each batch can also be solved from scratch by the suite's SSSP program on the same target
//! (`fresh`), for the comparison the benchmark reports, and checked against a fresh Dijkstra's
//! on the graph as it is (`verify`).

use std::io::sink;
use std::time::{Duration, Instant};

use grail_graph::insert::Insertion;
use grail_graph::reference::{INFINITE_DISTANCE, repair_sssp, sssp};
use grail_graph::room::Inserted;
use grail_graph::{Column, Graph, GraphError, NodeId};
use grail_ir::{Module, OptConfig};
use grail_runtime::ModuleCache;
use grail_runtime::Table;
use grail_runtime::cpu::{CCompiler, CpuProgram, KernelStats, RunOptions, RunOutput, Value};
use grail_runtime::gpu::{Device, DeviceGraph, GpuProgram, ResidentColumn, ResidentInputs, ResidentTable};
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
#[derive(Debug, Clone, Default)]
pub struct Timing {
    /// The step as a caller waits for it: on a GPU, the batch and the inputs copied up and the
    /// run's kernels, with the distances left on the device (the initial solve also copies the
    /// graph up); on the CPU, the program's run with its inputs filled and outputs taken.
    pub total: Duration,
    /// The computation alone: the kernels' GPU time on a GPU; the program's run on the CPU (its
    /// input collections' filling included); the reference's run.
    pub compute: Duration,
    /// On a GPU, copying the distances back to the host after the step (zero elsewhere).
    pub read_back: Duration,
    /// The program's kernels: invocations, items and time of each (empty for the reference).
    pub kernels: Vec<KernelStats>,
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
    /// On a GPU, inserting the batch into the graph on the device (copying it up included); a
    /// step of either kind, repairing or solving again, needs the grown graph. Zero elsewhere.
    pub insert: Duration,
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
    /// The graph after the last batch (packed).
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
    let mut engine = Engine::new(options)?;
    let mut graph = graph;
    // Edge property columns other than the weights do not follow inserted edges (neither program
    // reads them): dropped, as a graph grown by copying dropped them.
    graph.edge_props = grail_graph::Properties::new(graph.num_edges() as usize);
    // Room per node before the first solve: the batches then go into the rows in place, here
    // and on a device (whose copy is made by the first solve).
    graph.make_room()?;
    // SSSP's window as the suite chooses it from the graph's class, the class found outside the
    // timed runs (as the tuner's is).
    let wide = |graph: &Graph| crate::suite::window_by_class(graph, &crate::RunParams::default());
    let (mut distances, initial) = engine.fresh(&graph, source, true, wide(&graph))?;
    engine.reserve_update(&graph);
    let width = repair_width(&graph);
    if !matches!(engine, Engine::Reference) && graph.num_nodes() > 0 {
        // One repair before the first batch, untimed, as compiling is, of a batch as large as the
        // largest made of self-loops of weight 0 (which lower no distance, and are not inserted
        // into the graph): what a program's first run makes and later runs reuse (its columns,
        // its input collection's segments; on a GPU its device buffers and mailbox: 1 ms of a 1%
        // batch's 2.2 ms whole run on R-MAT 2^22) is not counted against the first batch.
        let neutral = vec![(0, 0, 0); batches.iter().map(Vec::len).max().unwrap_or(0)];
        let (after, before, _) = engine.update(&graph, distances, &neutral, width)?;
        engine.recycle(before, true);
        distances = after;
    }
    if options.verify {
        check_equal(&distances, &sssp(&graph, source), "the initial distances", DIJKSTRA)?;
    }
    let mut reports = Vec::with_capacity(batches.len());
    for (i, batch) in batches.iter().enumerate() {
        let index = i + 1;
        let started = Instant::now();
        // The batch by source, as the host's insertion placed it: the device's insertion takes it
        // in that order, and a repair reads its heads' distances in it.
        let inserted = graph.insert_edges(batch).map_err(|e| batch_error(index, e))?;
        let merge = started.elapsed();
        let insert = engine.insert(&graph, &inserted)?;
        let batch = inserted.placed;
        if options.verify {
            engine.check_resident_graph(&graph).map_err(|e| batch_error(index, e))?;
        }
        let (after, before, update) = engine.update(&graph, distances, &batch, width)?;
        let lowered = (0..after.len()).into_par_iter().filter(|&v| after[v] < before[v]).count();
        engine.recycle(before, true);
        let fresh = if options.fresh {
            let (fresh, timing) = engine.fresh(&graph, source, false, wide(&graph))?;
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
            insert,
            update,
            lowered,
            fresh,
            verified: options.verify,
        };
        each(&report);
        reports.push(report);
    }
    // Packed again once the batches are in: what every reader of a graph takes.
    let graph = graph.packed().into_owned();
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
    Cpu {
        update: Box<CpuProgram>,
        fresh: Box<CpuProgram>,
        threads: usize,
        /// The words of the last batch's input table, for the next batch's (their pages
        /// touched already).
        rows: Vec<u64>,
    },
    Gpu {
        update: Box<GpuProgram>,
        fresh: Box<GpuProgram>,
        /// The graph on the device (made by the initial solve), grown by every batch.
        graph: Option<Box<DeviceGraph>>,
        /// The distances as the initial solve or the last repair left them on the device.
        distances: Option<ResidentColumn>,
        /// The batch the resident graph took last, on the device: the repair's input
        /// collection, not copied up again.
        batch: Option<ResidentTable>,
    },
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
                    rows: Vec::new(),
                }
            }
            Target::Gpu => {
                let (update, fresh) = modules()?;
                let device = Device::open(options.device).map_err(grail_runtime::RuntimeError::from)?;
                Engine::Gpu {
                    update: Box::new(GpuProgram::compile(update, device.clone(), Some(&cache))?),
                    fresh: Box::new(GpuProgram::compile(fresh, device, Some(&cache))?),
                    graph: None,
                    distances: None,
                    batch: None,
                }
            }
        })
    }

    /// On a GPU, the batch the host inserted into `graph` (`inserted`) inserted into the graph on
    /// the device the same way, which then holds `graph`, and kept there for the repair; nothing
    /// elsewhere (the host's graph is the one the programs read).
    fn insert(&mut self, graph: &Graph, inserted: &Inserted) -> Result<Duration> {
        let started = Instant::now();
        if let Engine::Gpu { update, graph: Some(resident), batch: uploaded, .. } = self {
            *uploaded = Some(resident.insert(update, graph, inserted)?);
        }
        Ok(started.elapsed())
    }

    /// On a GPU, checks that the graph on the device is `graph`: the same rows in the same
    /// places, with the same edges.
    fn check_resident_graph(&self, graph: &Graph) -> std::result::Result<(), GraphError> {
        let Engine::Gpu { graph: Some(resident), .. } = self else { return Ok(()) };
        let device =
            resident.download_csr().map_err(|e| GraphError::Verification(format!("the graph on the device: {e}")))?;
        let n = graph.num_nodes() as usize;
        if device.offsets()[..n] != graph.out().offsets()[..n] || device.ends() != graph.out().ends() {
            return Err(GraphError::Verification(
                "the rows of the graph grown on the device lie elsewhere than the host's after the same insertion"
                    .into(),
            ));
        }
        let (device, out) = (device.packed(), graph.out().packed());
        let weights_differ = match (device.weights(), out.weights()) {
            (Some(device), Some(host)) => device != host,
            (Some(device), None) => device.iter().any(|&w| w != 1),
            (None, host) => host.is_some(),
        };
        if device.offsets() != out.offsets() || device.targets() != out.targets() || weights_differ {
            return Err(GraphError::Verification(
                "the graph grown on the device differs from the host's after the same insertion".into(),
            ));
        }
        Ok(())
    }

    /// The distances from `source` computed from scratch; on a GPU, left there as the state the
    /// next repair starts from when `initial`.
    fn fresh(&mut self, graph: &Graph, source: NodeId, initial: bool, wide: bool) -> Result<(Vec<u64>, Timing)> {
        let started = Instant::now();
        match self {
            Engine::Reference => {
                let distances = sssp(graph, source);
                let time = started.elapsed();
                Ok((distances, Timing { total: time, compute: time, read_back: Duration::ZERO, kernels: Vec::new() }))
            }
            Engine::Cpu { fresh, threads, .. } => {
                let params = source_params(fresh.module(), source, wide);
                let mut output = fresh.run(graph, &params, &RunOptions { threads: *threads }, &mut sink())?;
                let compute = output.stats.elapsed;
                let kernels = std::mem::take(&mut output.stats.kernels);
                let distances = distances_of(fresh.module(), &mut output)?;
                fresh.recycle(output.properties);
                Ok((distances, Timing { total: started.elapsed(), compute, read_back: Duration::ZERO, kernels }))
            }
            Engine::Gpu { fresh, graph: resident, distances: state, .. } => {
                let resident = resident_graph(resident, fresh, graph)?;
                let params = source_params(fresh.module(), source, wide);
                let keep = [output_id(fresh.module())?];
                let (output, times, mut kept) =
                    fresh.run_resident(graph, resident, &params, &[], ResidentInputs::default(), &keep, &mut sink())?;
                let total = started.elapsed();
                let column = kept.pop().expect("one column kept");
                let distances = download_distances(fresh, &column)?;
                if initial {
                    *state = Some(column);
                }
                let read_back = started.elapsed() - total;
                Ok((distances, Timing { total, compute: times.kernels, read_back, kernels: output.stats.kernels }))
            }
        }
    }

    /// On the CPU, the repair's columns allocated (and their pages touched) before the first
    /// batch, so that its repair does not pay the page faults the later ones are spared by
    /// reusing them. (The batch's input table is made by the untimed first repair, and kept.)
    fn reserve_update(&mut self, graph: &Graph) {
        if let Engine::Cpu { update, .. } = self {
            update.reserve_columns(graph.num_nodes() as usize, graph.out().edge_slots() as usize);
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

    /// `before` repaired after `batch` was inserted into `graph`: the repaired distances, and
    /// `before` given back.
    fn update(
        &mut self,
        graph: &Graph,
        before: Vec<u64>,
        batch: &[Insertion],
        width: u64,
    ) -> Result<(Vec<u64>, Vec<u64>, Timing)> {
        let started = Instant::now();
        match self {
            Engine::Reference => {
                let mut distances = before.clone();
                repair_sssp(graph, &mut distances, batch);
                let time = started.elapsed();
                Ok((
                    distances,
                    before,
                    Timing { total: time, compute: time, read_back: Duration::ZERO, kernels: Vec::new() },
                ))
            }
            Engine::Cpu { update, threads, rows, .. } => {
                // The known distances are the `dist` input's words themselves (no copy: 4 M of
                // them took 2-3 ms on 16 cores), taken back after the run; the batch's table is
                // written into the last one's words.
                let spare = std::mem::take(rows);
                let mut inputs = update_inputs(update.module(), Some(before), Some((batch, spare)))?;
                let params = repair_params(update.module(), width);
                let run =
                    update.run_with_inputs(graph, &params, &inputs, &RunOptions { threads: *threads }, &mut sink());
                let before = inputs.pop().map(Table::into_words).unwrap_or_default();
                *rows = inputs.pop().map(Table::into_words).unwrap_or_default();
                let mut output = run?;
                let compute = output.stats.elapsed;
                let kernels = std::mem::take(&mut output.stats.kernels);
                let distances = distances_of(update.module(), &mut output)?;
                update.recycle(output.properties);
                Ok((
                    distances,
                    before,
                    Timing { total: started.elapsed(), compute, read_back: Duration::ZERO, kernels },
                ))
            }
            Engine::Gpu { update, graph: resident, distances: state, batch: uploaded, .. } => {
                let resident = resident_graph(resident, update, graph)?;
                let module = update.module();
                // The known distances are the ones the last step left on the device, when it
                // did; the batch is the one the resident graph took, when it did.
                let mut given = ResidentInputs::default();
                let known = match state.take() {
                    Some(column) => {
                        given.properties.push((module.property_inputs[0], column));
                        None
                    }
                    None => Some(before.clone()),
                };
                let inserted = match uploaded.take() {
                    Some(table) => {
                        given.collections.push((module.collection_inputs[0], table));
                        None
                    }
                    None => Some((batch, Vec::new())),
                };
                let inputs = update_inputs(module, known, inserted)?;
                let params = repair_params(module, width);
                let keep = [output_id(module)?];
                let prepared = started.elapsed();
                let (output, times, mut kept) =
                    update.run_resident(graph, resident, &params, &inputs, given, &keep, &mut sink())?;
                let total = started.elapsed();
                if grail_runtime::gpu::trace_run() {
                    eprintln!(
                        "grail dsssp repair: inputs made {:.3} ms, run returned {:.3} ms",
                        prepared.as_secs_f64() * 1e3,
                        total.as_secs_f64() * 1e3
                    );
                }
                let column = kept.pop().expect("one column kept");
                let distances = download_distances(update, &column)?;
                *state = Some(column);
                let read_back = started.elapsed() - total;
                Ok((
                    distances,
                    before,
                    Timing { total, compute: times.kernels, read_back, kernels: output.stats.kernels },
                ))
            }
        }
    }
}

/// The repair's window width (`dsssp.grail`'s `delta`), chosen once before the first batch as
/// the program chooses it when not given (16 mean edge weights over the mean out-degree, at least
/// 1), from every edge instead of a sample: a batch of insertions changes neither much, and the
/// program's sampling cost each repair two more kernels (0.07 ms of a 0.3 ms repair on a GPU).
fn repair_width(graph: &Graph) -> u64 {
    let out = graph.out();
    let (n, m) = (u64::from(out.num_nodes()), out.num_edges());
    if n == 0 || m == 0 {
        return 1;
    }
    let total: u64 = (0..out.num_nodes())
        .into_par_iter()
        .with_min_len(4096)
        .map(|u| out.neighbor_weights(u).map_or(out.degree(u), |w| w.iter().map(|&w| u64::from(w)).sum()))
        .sum();
    let (mean_weight, mean_degree) = (total as f64 / m as f64, m as f64 / n as f64);
    (16.0 * mean_weight / mean_degree).max(1.0) as u64
}

/// `dsssp`'s parameters: the window width, the rest left to their defaults.
fn repair_params(module: &Module, width: u64) -> Vec<Option<Value>> {
    module.params.iter().map(|p| (p.name == "delta").then_some(Value::U64(width))).collect()
}

/// The suite SSSP program's parameters: the source, and the window the suite gives it on a graph
/// of high diameter when `wide` (`suite::window_by_class`, decided outside the timed run), the
/// rest left to their defaults: the run from scratch is SSSP as `grail run` runs it.
fn source_params(module: &Module, source: NodeId, wide: bool) -> Vec<Option<Value>> {
    module
        .params
        .iter()
        .map(|p| match p.name.as_str() {
            "source" => Some(Value::Node(source)),
            "spread" if wide => Some(Value::U32(crate::suite::WIDE_SPREAD)),
            _ => None,
        })
        .collect()
}

/// The graph on the device, made from `graph` (on `program`'s device) the first time.
fn resident_graph<'a>(
    slot: &'a mut Option<Box<DeviceGraph>>,
    program: &GpuProgram,
    graph: &Graph,
) -> Result<&'a mut DeviceGraph> {
    if slot.is_none() {
        *slot = Some(Box::new(DeviceGraph::new(program.device(), graph)?));
    }
    Ok(slot.as_mut().expect("made above"))
}

/// The program's first output (its distances).
fn output_id(module: &Module) -> Result<grail_ir::PropertyId> {
    module.outputs.first().copied().ok_or_else(|| AlgoError::Internal(format!("`{}` has no output", module.name)))
}

/// Distances a run of `program` left on the device, copied back.
fn download_distances(program: &GpuProgram, column: &ResidentColumn) -> Result<Vec<u64>> {
    match program.read_back(column)? {
        Column::U64(distances) => Ok(distances),
        _ => Err(AlgoError::Internal("the distances on the device are not u64".into())),
    }
}

/// The program's output distances, taken out of `output`.
fn distances_of(module: &Module, output: &mut RunOutput) -> Result<Vec<u64>> {
    let id = output_id(module)?;
    match std::mem::replace(&mut output.properties[id.index()], Column::Bool(Vec::new())) {
        Column::U64(distances) => Ok(distances),
        _ => Err(AlgoError::Internal(format!("`{}` does not output u64 distances", module.name))),
    }
}

/// `dsssp`'s inputs: `inserted` (the batch, its rows written into the words given), then `dist`
/// (every node's distance before it), each unless it is on the device already (`None`).
fn update_inputs(
    module: &Module,
    before: Option<Vec<u64>>,
    batch: Option<(&[Insertion], Vec<u64>)>,
) -> Result<Vec<Table>> {
    let ([inserted_id], [dist_id]) = (&module.collection_inputs[..], &module.property_inputs[..]) else {
        return Err(AlgoError::Internal("dsssp's inputs are not inserted and dist".into()));
    };
    let fail = |e: grail_runtime::RuntimeError| AlgoError::Internal(format!("dsssp's inputs: {e}"));
    let mut tables = Vec::with_capacity(2);
    if let Some((batch, mut inserted)) = batch {
        // Every word is written below: only words beyond the last batch's are zeroed first, and
        // new words come zeroed from the allocator (their pages faulted in by the writes below,
        // on every core, not by a zeroing pass on one).
        if inserted.capacity() < 3 * batch.len() {
            inserted = vec![0u64; 3 * batch.len()];
        } else {
            inserted.resize(3 * batch.len(), 0);
        }
        inserted.par_chunks_mut(3).zip(batch.par_iter()).for_each(|(row, &(u, v, w))| {
            row.copy_from_slice(&[u64::from(u), u64::from(v), u64::from(w)]);
        });
        let leaves = Table::for_collection(module, *inserted_id).leaves().to_vec();
        tables.push(Table::from_words(leaves, inserted).map_err(fail)?);
    }
    if let Some(before) = before {
        tables.push(Table::from_words(vec![module.properties[dist_id.index()].ty], before).map_err(fail)?);
    }
    Ok(tables)
}
