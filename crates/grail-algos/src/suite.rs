//! The generated targets: the suite's grail programs, compiled by grail's front end and C
//! backend (run by the CPU executor) or CUDA backend (run by the GPU executor), with their
//! outputs turned into the suite's [`Output`]s.

use std::borrow::Cow;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use grail_graph::properties::Column;
use grail_graph::reference::SpanningForest;
use grail_graph::{Graph, GraphError};
use grail_ir::{Module, OptConfig, Owner, Type, analysis, optimize};
use grail_lang::SourceMap;
use grail_lang::diagnostics::render_to_string;
use grail_runtime::ModuleCache;
use grail_runtime::cpu::{CCompiler, CpuProgram, RunOptions, RunOutput, RunStats, Value};
use grail_runtime::gpu::{Device, DeviceGraph, GpuProgram, GpuTimes};
use grail_runtime::multi::RegionGrid;
use grail_runtime::multi::{MultiOptions, MultiProgram, PartFigures, SyncStats};

use crate::algorithm::Algorithm;
use crate::error::{AlgoError, Result};
use crate::output::Output;
use crate::run::RunParams;
use crate::variant::Variant;

/// Compiles a grail program's source to the IR, rendering its diagnostics into the error.
pub fn compile_source(name: &str, source: &str) -> Result<Module> {
    let mut files = SourceMap::new();
    let file = files.add(format!("{name}.grail"), source);
    let (module, diagnostics) = grail_lang::compile(files.text(file), file, name);
    match module {
        Some(module) => Ok(module),
        None => Err(AlgoError::Program { name: name.to_string(), diagnostics: render_to_string(&diagnostics, &files) }),
    }
}

/// A suite variant's program compiled to the IR and optimized with `opt`.
pub fn optimized(variant: &Variant, opt: &OptConfig) -> Result<Module> {
    optimized_program(variant.program, opt)
}

/// The suite program `name` (`programs/NAME.grail`) compiled to the IR and optimized with `opt`.
pub fn optimized_program(name: &str, opt: &OptConfig) -> Result<Module> {
    let source =
        crate::program_source(name).ok_or_else(|| AlgoError::Internal(format!("no suite program `{name}`")))?;
    let module = compile_source(name, source)?;
    optimize(module, opt).map_err(|e| AlgoError::Internal(format!("optimizing `{name}` with {opt}: {e}")))
}

/// Compiles `module` (already optimized) for `target` and runs it once on `graph` with its
/// parameters and input collections: on the CPU on `threads` threads (0: every core), or on GPU
/// `device`, which also gives the GPU's times. For the morph programs' drivers (`dmr`, `sp`),
/// which run a program once per call (their references are called directly).
pub(crate) fn run_module(
    module: Module,
    target: crate::Target,
    device: usize,
    threads: usize,
    graph: &Graph,
    params: &[Option<Value>],
    inputs: &[grail_runtime::Table],
) -> Result<(RunOutput, Option<GpuTimes>)> {
    ModuleProgram::compile(module, target, device, threads)?.run(graph, params, inputs)
}

/// A program (already optimized) compiled once for the CPU or a GPU, to run as often as its
/// driver needs (`pta` runs one per epoch).
pub(crate) enum ModuleProgram {
    Cpu { program: Box<CpuProgram>, threads: usize },
    Gpu(Box<GpuProgram>),
}

impl ModuleProgram {
    /// Compiled through the module cache: for the CPU to run on `threads` threads (0: every
    /// core), or for GPU `device`.
    pub(crate) fn compile(
        module: Module,
        target: crate::Target,
        device: usize,
        threads: usize,
    ) -> Result<ModuleProgram> {
        let cache = ModuleCache::default_location();
        match target {
            crate::Target::Cpu => Ok(ModuleProgram::Cpu {
                program: Box::new(CpuProgram::compile(module, &CCompiler::detect()?, Some(&cache))?),
                threads,
            }),
            crate::Target::Gpu => {
                let device = Device::open(device).map_err(grail_runtime::RuntimeError::from)?;
                Ok(ModuleProgram::Gpu(Box::new(GpuProgram::compile(module, device, Some(&cache))?)))
            }
            crate::Target::Reference => Err(AlgoError::Usage(format!(
                "`{}` runs on the cpu or gpu target; the reference is a separate function",
                module.name
            ))),
        }
    }

    pub(crate) fn module(&self) -> &Module {
        match self {
            ModuleProgram::Cpu { program, .. } => program.module(),
            ModuleProgram::Gpu(program) => program.module(),
        }
    }

    /// One run on `graph` with these parameters and inputs; on a GPU also its times.
    pub(crate) fn run(
        &self,
        graph: &Graph,
        params: &[Option<Value>],
        inputs: &[grail_runtime::Table],
    ) -> Result<(RunOutput, Option<GpuTimes>)> {
        let sink = &mut std::io::sink();
        match self {
            ModuleProgram::Cpu { program, threads } => {
                Ok((program.run_with_inputs(graph, params, inputs, &RunOptions { threads: *threads }, sink)?, None))
            }
            ModuleProgram::Gpu(program) => {
                let (output, times) = program.run_with_inputs(graph, params, inputs, sink)?;
                Ok((output, Some(times)))
            }
        }
    }
}

/// A suite variant compiled for a target, ready to run on any number of graphs.
pub struct SuiteProgram {
    variant: &'static Variant,
    program: Compiled,
}

/// The executor's program.
enum Compiled {
    Cpu(Box<CpuProgram>),
    Gpu(Box<GpuProgram>),
    /// Partitioned over several devices (the run's `RunParams::multi` says how).
    Multi(Box<MultiProgram>),
}

/// A run over several devices (`--devices`): which devices, how they cooperate, how the graph
/// is split among them.
#[derive(Debug, Clone)]
pub struct MultiParams {
    pub devices: Vec<grail_runtime::multi::Device>,
    /// The mode, or `None` where none was asked for (`grail run --devices` without `--mode`,
    /// the library's `on_devices`): a suite algorithm's run then takes the one
    /// [`crate::preferred_mode`] gives for the graph and the devices, a program file's
    /// supersteps.
    pub mode: Option<grail_runtime::multi::Mode>,
    pub partition: grail_graph::partition::Method,
    /// The seed of the random partitioning.
    pub seed: u64,
    /// The asynchronous mode's random waits and shuffled packets, from this seed (tests).
    pub jitter: Option<u64>,
    /// The asynchronous mode's soft priorities, with this bucket width
    /// (`grail_runtime::multi::MultiOptions::priority_delta`).
    pub priority_delta: Option<u64>,
    /// How the asynchronous mode's packets travel (`grail_runtime::multi::Topology`).
    pub topology: grail_runtime::multi::Topology,
    /// Who runs the asynchronous mode's loops on GPUs (`grail_runtime::multi::Worker`).
    pub worker: grail_runtime::multi::Worker,
    /// A partitioning of the graph made before, into as many parts as there are devices (then
    /// `partition` and `seed` only name how it was made): a benchmark splits a graph once for
    /// all its runs, METIS taking minutes on large graphs.
    pub partitioning: Option<std::sync::Arc<grail_graph::partition::Partitioning>>,
    /// The partition file `partitioning` was read from (`grail run --partition-file`), which
    /// the report names instead of `partition`.
    pub partition_file: Option<std::path::PathBuf>,
    /// Whether GPU parts time their kernels (`grail run --stats`;
    /// `grail_runtime::multi::MultiOptions::kernel_times`).
    pub kernel_times: bool,
    /// Whether supersteps that need nothing read back are queued without a wait
    /// (`grail_runtime::multi::MultiOptions::defer_steps`; `None`: where every part is a GPU
    /// reaching the others).
    pub defer_steps: Option<bool>,
}

impl MultiParams {
    /// Bulk-synchronous on `devices`, the graph split by `partition` (seed 1), packets straight
    /// to their parts, no jitter, no soft priorities.
    pub fn new(devices: Vec<grail_runtime::multi::Device>, partition: grail_graph::partition::Method) -> MultiParams {
        MultiParams {
            devices,
            mode: Some(grail_runtime::multi::Mode::Bsp),
            partition,
            seed: 1,
            jitter: None,
            priority_delta: None,
            topology: grail_runtime::multi::Topology::Direct,
            worker: grail_runtime::multi::Worker::default(),
            partitioning: None,
            partition_file: None,
            kernel_times: false,
            defer_steps: None,
        }
    }
}

/// How a partitioned run whose parts are all GPUs runs its outlined regions: on every GPU at
/// once where the runtime chooses to, with one block per multiprocessor on graphs of high
/// diameter (road networks, meshes: thousands of small supersteps) and every resident block
/// elsewhere (R-MAT, social networks: a few large supersteps; on R-MAT of 2^23 nodes over two
/// H200s BFS took 1.80 ms against 2.37 driven from the host, SSSP 27.7 against 32.1, CC 24.1
/// against 29.5).
fn device_regions(graph: &Graph, how: &MultiParams) -> (grail_runtime::multi::DeviceRegions, RegionGrid) {
    use grail_runtime::multi::{Device, DeviceRegions};
    let gpus = how.devices.iter().filter(|d| matches!(d, Device::Gpu(_))).count();
    if gpus < 2 || gpus < how.devices.len() {
        return (DeviceRegions::Auto, RegionGrid::default());
    }
    match crate::tuning::class::classify(graph).class.diameter {
        crate::tuning::class::Level::Low => (DeviceRegions::Auto, RegionGrid::Resident),
        _ => (DeviceRegions::Auto, RegionGrid::OnePerMultiprocessor),
    }
}

/// How a partitioned run went.
#[derive(Debug, Clone)]
pub struct MultiReport {
    pub devices: Vec<grail_runtime::multi::Device>,
    pub mode: grail_runtime::multi::Mode,
    /// How the asynchronous mode's packets traveled.
    pub topology: grail_runtime::multi::Topology,
    /// Who was asked to run the asynchronous mode's loops (after `GRAIL_FUSED_WORKER`; the
    /// fused worker runs a loop only where every part is a GPU reaching the others, which
    /// `sync.device_regions` counts).
    pub worker: grail_runtime::multi::Worker,
    pub partition: grail_graph::partition::Method,
    /// Where the parts came from instead, when they were read from a partition file.
    pub partition_file: Option<std::path::PathBuf>,
    /// Choosing every node's part (not counted in the run's time, as loading is not).
    pub partition_time: Duration,
    /// Building the parts' local graphs (counted in the run's time).
    pub split_time: Duration,
    /// The share of the graph's edges that cross parts.
    pub edge_cut: f64,
    pub parts: Vec<PartFigures>,
    pub sync: SyncStats,
}

/// What one run produced.
#[derive(Debug)]
pub struct SuiteRun {
    pub output: Output,
    /// The executor's figures: per-kernel invocations, items, pushes, time (GPU time on the GPU).
    pub stats: RunStats,
    /// On the GPU: kernel time by CUDA events, upload and download times.
    pub gpu: Option<GpuTimes>,
    /// Time spent preparing the input the program needs (see [`Prepared`]), not counted in
    /// `stats.elapsed`.
    pub prepare: Duration,
    /// On several devices: how the graph was split and the parts synchronized.
    pub multi: Option<MultiReport>,
}

/// The graph a variant runs on, made ready before the timed run: the undirected simple graph
/// for `tri` and `mis` (the language's input contract for them), numbered by decreasing degree
/// for `tri` (so its merges stay short), and the reverse CSR for programs that read in-edges
/// (built once, as graph loaders of other suites do, not on every run). On the GPU, the first
/// run also makes the prepared graph resident on the device, and the runs after it copy nothing
/// of the graph again.
pub struct Prepared<'g> {
    pub graph: Cow<'g, Graph>,
    pub time: Duration,
    resident: Mutex<Option<DeviceGraph>>,
}

impl<'g> Prepared<'g> {
    /// `graph` as it is, with `time` spent making it.
    pub fn new(graph: Cow<'g, Graph>, time: Duration) -> Prepared<'g> {
        Prepared { graph, time, resident: Mutex::new(None) }
    }

    /// The same input owning its graph (a clone of a graph shares its edge arrays, so this
    /// copies no edges): for holders that outlive the original's borrow, such as a session.
    pub fn into_owned(self) -> Prepared<'static> {
        let resident = self.resident.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner());
        Prepared { graph: Cow::Owned(self.graph.into_owned()), time: self.time, resident: Mutex::new(resident) }
    }
}

/// What a program needs of its input, made by [`prepare_input`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InputNeeds {
    /// The undirected simple graph underlying the input, adjacencies sorted.
    pub undirected_simple: bool,
    /// Nodes numbered by decreasing out-degree (ties by old id) where the degrees are skewed
    /// (`grail_graph::reorder::degrees_skewed`), adjacencies sorted.
    pub degree_order: bool,
    /// The reverse CSR.
    pub reverse: bool,
    /// The reverse CSR with, for every in-edge, its out-edge id.
    pub in_edge_ids: bool,
    /// Integer weights that order as real ones do, for a program that only compares weights
    /// (MST) and reads them as `u32` (edge ids unchanged).
    pub weight_order_keys: bool,
}

impl InputNeeds {
    /// The graph as it is.
    pub const NONE: InputNeeds = InputNeeds {
        undirected_simple: false,
        degree_order: false,
        reverse: false,
        in_edge_ids: false,
        weight_order_keys: false,
    };
}

/// Makes `graph` ready for a program that needs `needs`; borrows it when nothing is needed. Each
/// step is skipped when the graph is known (or found, by a parallel scan) not to need it: a
/// symmetric simple graph with sorted adjacencies is not symmetrized, a graph numbered by degree
/// or whose degrees are not skewed is not renumbered, a graph that holds its reverse CSR (or is
/// its own) gets none built. A borrowed undirected simple graph keeps its weights; the programs
/// that ask for one ignore them.
pub fn prepare_input(graph: &Graph, needs: InputNeeds) -> Result<Prepared<'_>> {
    let start = Instant::now();
    let mut input = Cow::Borrowed(graph);
    if needs.weight_order_keys && graph.out().has_real_weights() {
        input = Cow::Owned(Graph::from_csr(graph.out().with_weight_order_keys()));
    }
    if needs.undirected_simple {
        input = grail_graph::undirected::undirected_simple(graph);
    }
    if needs.degree_order && grail_graph::reorder::degrees_skewed(input.out()) {
        input = match grail_graph::reorder::by_degree(&input, false)? {
            Cow::Borrowed(_) => input,
            Cow::Owned(relabelled) => Cow::Owned(relabelled),
        };
    }
    if needs.in_edge_ids && input.in_edge_ids().is_none() {
        input.to_mut().build_in_edge_ids();
    }
    if needs.reverse && input.reverse().is_none() {
        input.to_mut().build_reverse();
    }
    Ok(Prepared::new(input, start.elapsed()))
}

impl SuiteProgram {
    /// Compiles `variant`'s program; the shared library comes from `cache` when it was built
    /// before.
    pub fn compile(
        variant: &'static Variant,
        compiler: &CCompiler,
        cache: Option<&ModuleCache>,
        opt: &OptConfig,
    ) -> Result<Self> {
        let module = optimized(variant, opt)?;
        let program = CpuProgram::compile(module, compiler, cache)?;
        Ok(SuiteProgram { variant, program: Compiled::Cpu(Box::new(program)) })
    }

    /// Compiles `variant`'s program for `device` with NVRTC; the image comes from `cache` when
    /// it was built before.
    pub fn compile_gpu(
        variant: &'static Variant,
        device: Device,
        cache: Option<&ModuleCache>,
        opt: &OptConfig,
    ) -> Result<Self> {
        let module = optimized(variant, opt)?;
        let program = GpuProgram::compile(module, device, cache)?;
        Ok(SuiteProgram { variant, program: Compiled::Gpu(Box::new(program)) })
    }

    /// Compiles `variant`'s program for partitioned runs over `devices` (each run then says
    /// how to split the graph: [`RunParams::multi`]); refused, with the reasons, when the
    /// program cannot be partitioned.
    pub fn compile_multi(
        variant: &'static Variant,
        devices: &[grail_runtime::multi::Device],
        compiler: &CCompiler,
        cache: Option<&ModuleCache>,
        opt: &OptConfig,
    ) -> Result<Self> {
        let module = optimized(variant, opt)?;
        let program = MultiProgram::compile(module, devices, compiler, cache)?;
        Ok(SuiteProgram { variant, program: Compiled::Multi(Box::new(program)) })
    }

    pub fn variant(&self) -> &'static Variant {
        self.variant
    }

    /// The program's IR.
    pub fn module(&self) -> &Module {
        match &self.program {
            Compiled::Cpu(program) => program.module(),
            Compiled::Gpu(program) => program.module(),
            Compiled::Multi(program) => program.module(),
        }
    }

    /// The generated source: C or CUDA (empty for a partitioned program).
    pub fn source(&self) -> &str {
        match &self.program {
            Compiled::Cpu(program) => program.c_source(),
            Compiled::Gpu(program) => program.cuda_source(),
            // Each device kind of a partitioned program has its own; none is the program's.
            Compiled::Multi(_) => "",
        }
    }

    /// Runs the program on `graph` and converts what it computed to the suite's output.
    pub fn run(&self, graph: &Graph, params: &RunParams) -> Result<SuiteRun> {
        let prepared = self.prepare(graph)?;
        self.run_prepared(graph, &prepared, params)
    }

    /// Makes `graph` ready for this program (see [`Prepared`]); borrows it when nothing is
    /// needed.
    pub fn prepare<'g>(&self, graph: &'g Graph) -> Result<Prepared<'g>> {
        prepare_input(graph, self.needs())
    }

    /// What this program needs of its input graph.
    pub fn needs(&self) -> InputNeeds {
        InputNeeds {
            undirected_simple: self.variant.needs_undirected_simple(),
            degree_order: self.variant.algorithm == Algorithm::Tri,
            reverse: analysis::needs_reverse(self.module()),
            in_edge_ids: analysis::needs_in_edge_ids(self.module()),
            weight_order_keys: self.variant.algorithm == Algorithm::Mst,
        }
    }

    /// Runs the program on a graph `prepare` made from `original`.
    pub fn run_prepared(&self, original: &Graph, prepared: &Prepared<'_>, params: &RunParams) -> Result<SuiteRun> {
        let values = self.bind_params(original, params)?;
        let mut stdout = std::io::stdout();
        let input: &Graph = &prepared.graph;
        let mut multi = None;
        let run = || -> Result<(RunOutput, Option<GpuTimes>)> {
            Ok(match &self.program {
                Compiled::Cpu(program) => {
                    (program.run(input, &values, &RunOptions { threads: params.threads }, &mut stdout)?, None)
                }
                Compiled::Multi(program) => {
                    let how = params.multi.as_ref().ok_or_else(|| {
                        AlgoError::Usage("a program compiled for several devices runs with RunParams::multi".into())
                    })?;
                    if how.devices != program.devices() {
                        return Err(AlgoError::Usage(format!(
                            "the program was compiled for the devices {:?}, and the run asks for {:?}",
                            program.devices(),
                            how.devices
                        )));
                    }
                    let (output, report) =
                        run_partitioned(program, input, how, &values, &[], params.threads, &mut stdout)?;
                    multi = Some(report);
                    (output, None)
                }
                Compiled::Gpu(program) => {
                    let mut resident = prepared.resident.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                    if resident.as_ref().is_some_and(|r| r.ordinal() != program.device().info().ordinal) {
                        *resident = None;
                    }
                    // The first run copies the graph up: that counts in its time.
                    let mut made = Duration::ZERO;
                    if resident.is_none() {
                        let device_graph = DeviceGraph::new(program.device(), input)?;
                        made = device_graph.upload_time();
                        *resident = Some(device_graph);
                    }
                    let device_graph = resident.as_mut().expect("made above");
                    let (mut run, mut times) = program.run_on(input, device_graph, &values, &mut stdout)?;
                    times.upload += made;
                    run.stats.elapsed += made;
                    (run, Some(times))
                }
            })
        };
        let (run, gpu) = grail_runtime::limits::with_time_limit(params.time_limit, run)?;
        let output = suite_output(self.variant.algorithm, self.module(), input, run.properties, run.result)?;
        // A forest found over order keys carries the real weights of the original edges.
        let output = match output {
            Output::SpanningForest(keyed) => Output::SpanningForest(SpanningForest::from_order_keys(original, keyed)),
            other => other,
        };
        Ok(SuiteRun { output, stats: run.stats, gpu, prepare: prepared.time, multi })
    }

    /// One value per program parameter: `source` and the PageRank options from `params`,
    /// anything else from `params.program_params`, the rest left to their defaults.
    fn bind_params(&self, graph: &Graph, params: &RunParams) -> Result<Vec<Option<Value>>> {
        let module = self.module();
        let mut values: Vec<Option<Value>> = vec![None; module.params.len()];
        // The power iterations take the run's PageRank options (pr_residual's tolerance means
        // something else).
        let pull_pagerank = matches!(self.variant.program, "pr" | "pr_pull32" | "pr_push");
        for (i, param) in module.params.iter().enumerate() {
            values[i] = match param.name.as_str() {
                "source" if param.ty == Type::Node => Some(Value::Node(params.source_in(graph)?)),
                "tolerance" if pull_pagerank => Some(Value::F64(params.pagerank.tolerance)),
                "max_iterations" if pull_pagerank => Some(Value::U32(params.pagerank.max_iterations)),
                "spread" if param.ty == Type::U32 && window_by_class(graph, params) => {
                    Some(Value::U32(if self.variant.program == "sssp_nfq" { WIDE_QUEUE_SPREAD } else { WIDE_SPREAD }))
                }
                _ => None,
            };
        }
        bind_named(module, &params.program_params, &mut values)?;
        Ok(values)
    }
}

/// The window of the SSSP programs that take one (`spread`: mean weights over the mean degree)
/// on graphs of high diameter: road networks and meshes settle few nodes per window of 4, and
/// each window is a step of the loop (one H100, `sssp_nf`: a road network of 2^24 nodes 144 ->
/// 88 ms, a 2048 x 2048 grid 118 -> 68 ms; on R-MAT 2^23 the 4 stays: 38 ms against 72 at 64;
/// docs/benchmarks.md, "SSSP's window by the graph's diameter").
pub(crate) const WIDE_SPREAD: u32 = 64;

/// The same for `sssp_nfq`, whose windows each cost a pass over the nodes and a queue's start:
/// fewer, wider windows (one H200, a road network of 2^24 nodes: 110.7-111.2 ms at 64, 80.9 at
/// 128, 67.2 at 256; docs/benchmarks.md, "Worklist loops as one queue on a GPU").
pub(crate) const WIDE_QUEUE_SPREAD: u32 = 256;

/// Whether the suite chooses an SSSP window by the graph's class: no width given (`delta`,
/// `spread`), and a high diameter ([`crate::tuning::class::diameter_level`]: sweeps bounded to
/// a quarter of a million edges).
pub(crate) fn window_by_class(graph: &Graph, params: &RunParams) -> bool {
    let given = params.program_params.iter().any(|(name, _)| name == "delta" || name == "spread");
    !given && crate::tuning::class::diameter_level(graph) == crate::tuning::class::Level::High
}

/// Splits `graph` as `how` says and runs `program` on the parts: what the run left (columns in
/// global ids) and how it went. The partitioning's time is reported apart from the run's.
pub fn run_partitioned(
    program: &MultiProgram,
    graph: &Graph,
    how: &MultiParams,
    values: &[Option<Value>],
    inputs: &[grail_runtime::Table],
    threads: usize,
    out: &mut dyn std::io::Write,
) -> Result<(RunOutput, MultiReport)> {
    let started = Instant::now();
    let made;
    let partitioning = match &how.partitioning {
        Some(partitioning) => partitioning.as_ref(),
        None => {
            made = grail_graph::partition::partition(graph, how.devices.len() as u32, how.partition, how.seed)?;
            &made
        }
    };
    let partition_time = started.elapsed();
    let edge_cut = partitioning.edge_cut(graph).share;
    let (device_regions, region_grid) = device_regions(graph, how);
    let mode = how.mode.unwrap_or_default();
    let options = MultiOptions {
        threads,
        mode,
        jitter: how.jitter,
        device_regions,
        region_grid,
        priority_delta: how.priority_delta,
        topology: how.topology,
        worker: how.worker,
        kernel_times: how.kernel_times,
        defer_steps: how.defer_steps,
        ..MultiOptions::default()
    };
    let run = program.run_with_inputs(graph, partitioning, values, inputs, &options, out)?;
    let report = MultiReport {
        devices: how.devices.clone(),
        mode,
        topology: how.topology,
        worker: how.worker.resolved(),
        partition: how.partition,
        partition_file: how.partition_file.clone(),
        partition_time,
        split_time: run.split,
        edge_cut,
        parts: run.parts,
        sync: run.sync,
    };
    Ok((run.output, report))
}

/// Sets the parameters given as `name=value` text, checking names and types.
pub fn bind_named(module: &Module, given: &[(String, String)], values: &mut [Option<Value>]) -> Result<()> {
    for (name, text) in given {
        let Some(index) = module.params.iter().position(|p| &p.name == name) else {
            let known: Vec<&str> = module.params.iter().map(|p| p.name.as_str()).collect();
            let known =
                if known.is_empty() { "it has none".to_string() } else { format!("it has {}", known.join(", ")) };
            return Err(AlgoError::Usage(format!("the program `{}` has no parameter `{name}` ({known})", module.name)));
        };
        let ty = module.params[index].ty;
        let value = Value::parse(ty, text)
            .map_err(|e| AlgoError::Usage(format!("--param {name}={text}: expected a value of type {ty}: {e}")))?;
        values[index] = Some(value);
    }
    Ok(())
}

/// The undirected simple graph underlying `graph`, adjacency lists sorted, weights dropped.
pub fn undirected_simple(graph: &Graph) -> Result<Graph> {
    Ok(grail_graph::undirected::undirected_simple(graph).into_owned().without_weights())
}

/// Turns the program's output property (or result) into the algorithm's output.
fn suite_output(
    algorithm: Algorithm,
    module: &Module,
    graph: &Graph,
    mut properties: Vec<Column>,
    result: Option<Value>,
) -> Result<Output> {
    let wrong = |what: &str| {
        AlgoError::Graph(GraphError::invalid(format!(
            "the suite program `{}` does not produce {what} as {algorithm} needs",
            module.name
        )))
    };
    let mut output_column = || -> Result<(Owner, Column)> {
        let id = *module.outputs.first().ok_or_else(|| wrong("an output property"))?;
        let owner = module.properties[id.index()].owner;
        Ok((owner, std::mem::replace(&mut properties[id.index()], Column::Bool(Vec::new()))))
    };
    Ok(match algorithm {
        Algorithm::Bfs => match output_column()? {
            (Owner::Node, Column::U32(levels)) => Output::Levels(levels),
            _ => return Err(wrong("a u32 node property")),
        },
        Algorithm::Sssp => match output_column()? {
            (Owner::Node, Column::U64(distances)) => Output::Distances(distances),
            (Owner::Node, Column::F64(distances)) => Output::RealDistances(distances),
            _ => return Err(wrong("a u64 or f64 node property")),
        },
        Algorithm::Cc => match output_column()? {
            (Owner::Node, Column::U32(labels)) => Output::Components(labels),
            _ => return Err(wrong("a u32 node property")),
        },
        Algorithm::Pr => match (output_column()?, result) {
            ((Owner::Node, Column::F64(ranks)), Some(Value::U32(iterations))) => Output::Ranks { ranks, iterations },
            ((Owner::Node, Column::F32(ranks)), Some(Value::U32(iterations))) => {
                Output::Ranks { ranks: ranks.into_iter().map(f64::from).collect(), iterations }
            }
            _ => return Err(wrong("an f32 or f64 node property and a u32 round count")),
        },
        Algorithm::Tri => match result {
            Some(Value::U64(count)) => Output::Triangles(count),
            _ => return Err(wrong("a u64 result")),
        },
        Algorithm::Mis => match output_column()? {
            (Owner::Node, Column::Bool(in_set)) => Output::IndependentSet(in_set),
            _ => return Err(wrong("a bool node property")),
        },
        Algorithm::Mst => match output_column()? {
            (Owner::Edge, Column::Bool(chosen)) => Output::SpanningForest(forest_of(graph, &chosen)),
            _ => return Err(wrong("a bool edge property")),
        },
    })
}

/// The edges flagged in `chosen` (by edge id) as a forest with its weight.
pub fn forest_of(graph: &Graph, chosen: &[bool]) -> SpanningForest {
    let csr = graph.out();
    let mut edges = Vec::new();
    let mut weight = 0u64;
    for u in 0..graph.num_nodes() {
        for e in csr.edge_range(u) {
            if chosen[e] {
                let w = csr.weights().map_or(1, |w| w[e]);
                edges.push((u, csr.targets()[e], w));
                weight += u64::from(w);
            }
        }
    }
    SpanningForest { edges, weight, real_weight: None }
}

#[cfg(test)]
mod tests {
    use super::*;
    use grail_graph::NoProgress;
    use grail_graph::generate::{GenOptions, Generator, generate};

    #[test]
    fn the_defaults_kernel_writes_whole_the_columns_with_initialisers_alone() {
        for opt in [OptConfig::default(), OptConfig::all()] {
            let module = optimized_program("dsssp", &opt).unwrap();
            let written = analysis::written_by_defaults(&module);
            let named = |name: &str| written[module.properties.iter().position(|p| p.name == name).unwrap()];
            // `relaxed: u64 = INF`; `dist` is an input, `queued` has no initialiser.
            assert!(named("relaxed"), "{opt}");
            assert!(!named("dist") && !named("queued") && !named("weight"), "{opt}");
        }
    }

    /// Runs whose parts are all GPUs run their worklist loops on every GPU at once, one block
    /// per multiprocessor on a road network and every resident block on R-MAT; a run with a
    /// CPU part leaves the choice to the runtime (which has no peer access there).
    #[test]
    fn regions_on_every_gpu_take_their_grid_by_the_graphs_diameter() {
        use grail_runtime::multi::{Device, DeviceRegions};
        let options = GenOptions { seed: 3, max_weight: Some(9) };
        let road = generate(&Generator::Road { nodes: 1 << 16 }, &options, true, &NoProgress).unwrap();
        let kron = generate(&Generator::graph500(14), &options, true, &NoProgress).unwrap();
        let how = |devices: Vec<Device>| MultiParams::new(devices, grail_graph::partition::Method::Ranges);
        let gpus = how(vec![Device::Gpu(0), Device::Gpu(1)]);
        assert_eq!(device_regions(&road, &gpus), (DeviceRegions::Auto, RegionGrid::OnePerMultiprocessor));
        assert_eq!(device_regions(&kron, &gpus), (DeviceRegions::Auto, RegionGrid::Resident));
        let mixed = how(vec![Device::Gpu(0), Device::Cpu]);
        assert_eq!(device_regions(&kron, &mixed), (DeviceRegions::Auto, RegionGrid::OnePerMultiprocessor));
    }

    #[test]
    fn sssp_windows_widen_on_graphs_of_high_diameter_unless_a_width_is_given() {
        let options = GenOptions { seed: 3, max_weight: Some(9) };
        let road = generate(&Generator::Road { nodes: 1 << 16 }, &options, true, &NoProgress).unwrap();
        let kron = generate(&Generator::graph500(14), &options, true, &NoProgress).unwrap();
        let plain = RunParams::default();
        assert!(window_by_class(&road, &plain));
        assert!(!window_by_class(&kron, &plain));
        for name in ["delta", "spread"] {
            let given = RunParams { program_params: vec![(name.into(), "8".into())], ..RunParams::default() };
            assert!(!window_by_class(&road, &given), "{name} given");
        }
    }
}
