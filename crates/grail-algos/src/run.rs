//! Running a suite algorithm on a target, and checking its result.

use std::time::{Duration, Instant};

use grail_graph::reference::{self, PageRankOptions};
use grail_graph::{Graph, GraphError, NodeId};
use grail_runtime::ModuleCache;
use grail_runtime::cpu::{CCompiler, RunStats};
use grail_runtime::gpu::{Device, GpuTimes};

use crate::algorithm::{Algorithm, Target};
use crate::error::{AlgoError, Result};
use crate::output::Output;
use crate::suite::SuiteProgram;
use crate::tuning::{self, OptChoice, TargetKey};
use crate::variant::Variant;

/// Parameters of a run. The source is checked against the graph before anything runs.
#[derive(Debug, Clone, Default)]
pub struct RunParams {
    /// The source node (BFS, SSSP), as a 0-based internal id; 0 when not given.
    pub source: Option<u64>,
    pub pagerank: PageRankOptions,
    /// The variant (`--variant`) for the generated targets; each algorithm's default if `None`.
    pub variant: Option<String>,
    /// Further program parameters as `name=value` text (`--param delta=512`).
    pub program_params: Vec<(String, String)>,
    /// Worker threads of the CPU target; 0 means one per core.
    pub threads: usize,
    /// The GPU of the GPU target (`--device`), numbered from 0.
    pub device: usize,
    /// The optimization configuration of the generated targets (`--opt`).
    pub opt: OptChoice,
    /// On the GPU, check integer divisions and pushed items on the device (`--checks`), as the
    /// CPU target always does.
    pub checks: bool,
    /// Stop a generated target's run that takes longer, at the next kernel invocation or host
    /// loop round ([`grail_runtime::limits`]); compiling and preparing do not count.
    pub time_limit: Option<std::time::Duration>,
    /// Keep every loop of `main` on the host (no iteration outlining), so that each
    /// invocation's reduction value can be traced ([`grail_runtime::limits::with_trace`]).
    pub loops_on_host: bool,
    /// Run on several devices, the graph partitioned among them (`--devices`), instead of the
    /// target's one device; the target must then be the CPU (the default).
    pub multi: Option<crate::suite::MultiParams>,
    /// On one GPU, whether worklist loops that allow it run as one queue, without rounds
    /// ([`grail_ir::opt::queue`]): `Some(true)` for `grail run --target gpu --mode async`,
    /// `Some(false)` for `--mode bsp`; `None` lets the run decide: bfs, its variant not named,
    /// on a graph not of low diameter, takes its label-correcting variant, and sssp on one of
    /// high diameter its `nfq`, as one queue unless `--opt` was given; their results are the
    /// rounds' (each offered value grows with the value read). A variant written for the queue
    /// (`QUEUE_VARIANTS`: sssp's `nfq`), named, runs as one too.
    pub queue: Option<bool>,
}

impl RunParams {
    /// The source node, checked against `graph`.
    pub fn source_in(&self, graph: &Graph) -> grail_graph::Result<NodeId> {
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
    /// The variant that ran, on the generated targets.
    pub variant: Option<&'static Variant>,
    pub output: Output,
    pub time: Duration,
    /// The executor's work counts and per-kernel times.
    pub stats: Option<RunStats>,
    /// The GPU target's kernel, upload and download times.
    pub gpu: Option<GpuTimes>,
    /// The optimization configuration the generated targets compiled with.
    pub opt: Option<grail_ir::OptConfig>,
    /// Where `opt` came from, the input's class when it was computed, and any warning about the
    /// tuning database.
    pub resolution: Option<tuning::Resolution>,
    /// On several devices: the partitioning and the parts' figures.
    pub multi: Option<crate::suite::MultiReport>,
}

/// The mode a partitioned run of `algorithm` takes where none is asked for
/// ([`crate::suite::MultiParams::mode`] `None`): asynchronous for BFS and SSSP on graphs whose
/// diameter is not low when every device is a GPU, bulk-synchronous otherwise. A road network's
/// BFS or SSSP is thousands of small rounds, which the fused worker runs without meeting the
/// other GPUs at each (a road network of 2^24 nodes over two H200s: BFS 83.4 ms against 216.1
/// in supersteps, SSSP 138.9 against 227.1 in METIS parts; docs/benchmarks.md); on R-MAT the
/// parts' own paths, found first, are lowered again and again asynchronously (kron23 BFS 382.8
/// ms against 3.05 in supersteps, SSSP 69.7 against 27.4). Label propagation and PageRank keep
/// their supersteps, and so do CPU devices, whose host-driven asynchronous mode is the slower on
/// roads too (a road network of 2^20 nodes over two CPU devices of one core each: BFS 56.7-60.0
/// ms in supersteps against 116.3-129.2, SSSP 88.2-90.7 against 250.9-251.5).
pub fn preferred_mode(
    algorithm: Algorithm,
    graph: &Graph,
    devices: &[grail_runtime::multi::Device],
) -> grail_runtime::multi::Mode {
    use grail_runtime::multi::{Device, Mode};
    let gpus_only = !devices.is_empty() && devices.iter().all(|d| matches!(d, Device::Gpu(_)));
    if gpus_only
        && matches!(algorithm, Algorithm::Bfs | Algorithm::Sssp)
        && tuning::class::diameter_level(graph) != tuning::class::Level::Low
    {
        Mode::Async
    } else {
        Mode::Bsp
    }
}

/// Runs `algorithm` on `graph` with `target`.
pub fn run(algorithm: Algorithm, graph: &Graph, target: Target, params: &RunParams) -> Result<RunResult> {
    let chosen;
    let params = match &params.multi {
        Some(multi) if multi.mode.is_none() => {
            let mut with_mode = params.clone();
            if let Some(multi) = &mut with_mode.multi {
                multi.mode = Some(preferred_mode(algorithm, graph, &multi.devices));
            }
            chosen = with_mode;
            &chosen
        }
        _ => params,
    };
    let source = if algorithm.needs_source() { params.source_in(graph)? } else { 0 };
    if algorithm == Algorithm::Sssp {
        reference::check_real_weights(graph)?;
    }
    if params.multi.is_some() && target != Target::Cpu {
        return Err(AlgoError::Usage(
            "a run over several devices names them with --devices instead of a --target".into(),
        ));
    }
    match target {
        Target::Reference => {
            if let Some(variant) = &params.variant {
                return Err(AlgoError::Usage(format!(
                    "the reference target has no variants (--variant {variant} is for --target cpu or gpu)"
                )));
            }
            if !params.program_params.is_empty() {
                return Err(AlgoError::Usage("--param is for the generated targets (--target cpu or gpu)".into()));
            }
            let start = Instant::now();
            let output = run_reference(algorithm, graph, source, params);
            Ok(RunResult {
                algorithm,
                target,
                variant: None,
                output,
                time: start.elapsed(),
                stats: None,
                gpu: None,
                opt: None,
                resolution: None,
                multi: None,
            })
        }
        Target::Cpu | Target::Gpu => {
            // The graph's diameter is estimated once, here, for the variant and the config.
            let own_queue = queued_variant(algorithm, target, graph, params);
            let variant = match &params.multi {
                Some(multi) => {
                    partitionable_variant(algorithm, params.variant.as_deref(), graph, multi.mode.unwrap_or_default())?
                }
                None => {
                    let name = params.variant.as_deref().or(own_queue);
                    Variant::find(algorithm, name)
                        .and_then(|v| v.for_weights(graph.out().weight_kind()))
                        .map_err(AlgoError::Usage)?
                }
            };
            let cache = ModuleCache::default_location();
            let program_id = tuning::ProgramId::of_variant(variant)?;
            // `--loops-on-host` over whatever configuration the run takes.
            let loops_placed = |mut resolution: tuning::Resolution| {
                if params.loops_on_host {
                    resolution.config.outline = grail_ir::opt::Outline::None;
                }
                // One GPU's queues: asked for, or bfs's own choice (`queued_variant`), which
                // also takes blocks of 512 threads by default (road24: 45.6 ms against 54.0 with
                // 256, docs/benchmarks.md).
                let auto = params.queue.is_none()
                    && !matches!(resolution.source, tuning::OptSource::Given)
                    && target == Target::Gpu
                    && (own_queue.is_some() || QUEUE_VARIANTS.contains(&(algorithm, variant.name)));
                if params.queue == Some(true) || auto {
                    resolution.config.queue = true;
                }
                if let (true, tuning::OptSource::Default { why }) = (auto, &mut resolution.source) {
                    resolution.config.block = QUEUE_BLOCK;
                    why.push_str(&format!(
                        "; its worklist loop as one queue (as --mode async), blocks of {QUEUE_BLOCK} threads"
                    ));
                }
                resolution
            };
            let resolve = |key: &TargetKey| loops_placed(tuning::resolve(params.opt, key, &program_id, Some(graph)));
            let (resolution, program) = if let Some(multi) = &params.multi {
                let resolution = loops_placed(tuning::resolve_for_devices(
                    params.opt,
                    &multi.devices,
                    multi.mode.unwrap_or_default(),
                    &program_id,
                    Some(graph),
                )?);
                let program = SuiteProgram::compile_multi(
                    variant,
                    &multi.devices,
                    &CCompiler::detect()?,
                    Some(&cache),
                    &resolution.config,
                )?;
                (resolution, program)
            } else if target == Target::Cpu {
                let resolution = resolve(&TargetKey::cpu());
                let program = SuiteProgram::compile(variant, &CCompiler::detect()?, Some(&cache), &resolution.config)?;
                (resolution, program)
            } else {
                let device =
                    Device::open(params.device).map_err(grail_runtime::RuntimeError::from)?.with_checks(params.checks);
                let key = TargetKey::gpu(&device.info().name);
                let resolution = resolve(&key);
                let program = SuiteProgram::compile_gpu(variant, device, Some(&cache), &resolution.config)?;
                (resolution, program)
            };
            let opt = resolution.config;
            let run = program.run(graph, params)?;
            let time = run.stats.elapsed;
            Ok(RunResult {
                algorithm,
                target,
                variant: Some(variant),
                output: run.output,
                time,
                stats: Some(run.stats),
                gpu: run.gpu,
                opt: Some(opt),
                resolution: Some(resolution),
                multi: run.multi,
            })
        }
    }
}

/// The variants partitioned runs take by default in place of the algorithm's first that can
/// run partitioned: PageRank pushes (on the road network of 2^24 nodes over 2 and 4 H200s,
/// 13.3 and 9.5 ms against pull32's 18.3 and 12.9: pushing sends only the sums kernels wrote
/// into ghosts, pulling refreshes every ghost's contribution; docs/benchmarks.md, "In-edges on
/// parts").
const PARTITIONED_DEFAULTS: &[(Algorithm, &str)] = &[(Algorithm::Pr, "push")];

/// The variants partitioned runs in supersteps (`--mode bsp`) take by default: SSSP's
/// delta-stepping without retries, whose windows order the work as the one-device default's
/// do (over two H200s, R-MAT 2^23 32.6 ms against the worklist's 39.9, and faster than one GPU's
/// near-far 34.2; a road network of 2^24 nodes 222.6 against 231.8; docs/benchmarks.md,
/// "Partitioned SSSP in windows"). In the asynchronous mode the worklist variant stays: its
/// loop runs without rounds.
const BSP_DEFAULTS: &[(Algorithm, &str)] = &[(Algorithm::Sssp, "ds")];

/// The variants asynchronous partitioned runs (`--mode async`) take by default on graphs whose
/// diameter is not low: those whose worklist loop runs without rounds where the partitioned
/// default's would run in supersteps anyway (BFS's level counter ties its loop to rounds;
/// `bfs_async` takes a node's level from its own). On a graph of low diameter (R-MAT, social
/// networks) the partitioned default runs instead, in supersteps: there a part's levels, found
/// first along its own paths, are lowered again and again by the shorter paths through the
/// other parts (kron23 over two H100s: 382.8 ms asynchronously against 3.05 ms in supersteps;
/// on a road network of 2^24 nodes 215.9 against 232.8 ms).
const ASYNC_DEFAULTS: &[(Algorithm, &str)] = &[(Algorithm::Bfs, "async")];

/// Variants written for one GPU's queues ([`grail_ir::opt::queue`]): named, they run so on a GPU
/// unless `--mode bsp` or `--opt` says otherwise (their results are the rounds' own).
const QUEUE_VARIANTS: &[(Algorithm, &str)] = &[(Algorithm::Sssp, "nfq")];

/// Threads per block of a loop bfs runs as one queue by its own choice ([`queued_variant`]).
const QUEUE_BLOCK: u32 = 512;

/// The variant a run on one GPU takes as one queue of its own accord (`RunParams::queue` not
/// given, no variant named), where rounds of a few thousand nodes each are mostly grid
/// barriers: bfs's label-correcting one on a graph not of low diameter, sssp's `nfq` on one of
/// high diameter with integer weights (one H200: road networks of 2^21 and 2^24 nodes and grids
/// of 2^20 and 2^22, 1.5-2.3x nf's time; on R-MAT 2^22 nf's supersteps are 1.7x faster).
fn queued_variant(algorithm: Algorithm, target: Target, graph: &Graph, params: &RunParams) -> Option<&'static str> {
    use crate::tuning::class::{Level, diameter_level};
    if !(params.queue.unwrap_or(true)
        && params.variant.is_none()
        && params.multi.is_none()
        && !params.loops_on_host
        && target == Target::Gpu)
    {
        return None;
    }
    match algorithm {
        Algorithm::Bfs if diameter_level(graph) != Level::Low => Some("async"),
        Algorithm::Sssp
            if diameter_level(graph) == Level::High
                && graph.out().weight_kind() != Some(grail_graph::WeightKind::Real) =>
        {
            Some("nfq")
        }
        _ => None,
    }
}

/// The variant a partitioned run uses: the one named, or the algorithm's default for the mode
/// ([`ASYNC_DEFAULTS`], [`BSP_DEFAULTS`], [`PARTITIONED_DEFAULTS`]), or its first variant whose program can run
/// on a partitioned graph; an error gives the reasons the others cannot.
fn partitionable_variant(
    algorithm: Algorithm,
    name: Option<&str>,
    graph: &Graph,
    mode: grail_runtime::multi::Mode,
) -> Result<&'static Variant> {
    let weights = graph.out().weight_kind();
    let obstacles = |variant: &'static Variant| -> Result<Vec<String>> {
        let module = crate::suite::optimized(variant, &grail_ir::OptConfig::default())?;
        Ok(grail_ir::analysis::partition_obstacles(&module))
    };
    if name.is_some() {
        let variant = Variant::find(algorithm, name).and_then(|v| v.for_weights(weights)).map_err(AlgoError::Usage)?;
        let reasons = obstacles(variant)?;
        if !reasons.is_empty() {
            return Err(AlgoError::Usage(format!(
                "{algorithm} variant '{}' cannot run on a partitioned graph: {}",
                variant.name,
                reasons.join("; ")
            )));
        }
        return Ok(variant);
    }
    let mut refused = Vec::new();
    let asynchronous = if mode == grail_runtime::multi::Mode::Async
        && ASYNC_DEFAULTS.iter().any(|(a, _)| *a == algorithm)
        && crate::tuning::class::diameter_level(graph) != crate::tuning::class::Level::Low
    {
        ASYNC_DEFAULTS
    } else {
        &[]
    };
    let bsp = if mode == grail_runtime::multi::Mode::Bsp { BSP_DEFAULTS } else { &[] };
    let preferred = asynchronous
        .iter()
        .chain(bsp)
        .chain(PARTITIONED_DEFAULTS)
        .filter(|(a, _)| *a == algorithm)
        .map(|(_, name)| *name);
    let preferred: Vec<&'static Variant> =
        preferred.filter_map(|name| Variant::of(algorithm).find(|v| v.name == name)).collect();
    for variant in preferred.into_iter().chain(Variant::of(algorithm)) {
        let Ok(variant) = variant.for_weights(weights) else { continue };
        let reasons = obstacles(variant)?;
        if reasons.is_empty() {
            return Ok(variant);
        }
        refused.push(format!("'{}': {}", variant.name, reasons.join("; ")));
    }
    Err(AlgoError::Usage(format!("no {algorithm} variant can run on a partitioned graph ({})", refused.join(" | "))))
}

fn run_reference(algorithm: Algorithm, graph: &Graph, source: NodeId, params: &RunParams) -> Output {
    match algorithm {
        Algorithm::Bfs => Output::Levels(reference::bfs(graph, source)),
        Algorithm::Sssp if graph.out().has_real_weights() => Output::RealDistances(reference::sssp_real(graph, source)),
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
        (Algorithm::Sssp, Output::RealDistances(d)) => reference::verify_sssp_real(graph, params.source_in(graph)?, d),
        (Algorithm::Cc, Output::Components(labels)) => reference::verify_components(graph, labels),
        (Algorithm::Pr, Output::Ranks { ranks, .. }) => reference::verify_pagerank(graph, ranks),
        (Algorithm::Tri, Output::Triangles(count)) => reference::verify_triangles(graph, *count),
        (Algorithm::Mis, Output::IndependentSet(in_set)) => reference::verify_mis(graph, in_set),
        (Algorithm::Mst, Output::SpanningForest(forest)) => reference::verify_msf(graph, forest),
        _ => Err(mismatch()),
    }
    .map_err(AlgoError::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use grail_graph::NoProgress;
    use grail_graph::generate::{GenOptions, Generator, generate};

    /// bfs takes its label-correcting variant as one queue on one GPU, on a road network, when
    /// nothing else was asked; not on a graph of low diameter, not on the CPU, not with a
    /// variant named or `--mode bsp`.
    #[test]
    fn bfs_queues_its_own_loop_only_where_rounds_are_mostly_barriers() {
        let road = generate(&Generator::Road { nodes: 40_000 }, &GenOptions::default(), false, &NoProgress).unwrap();
        let kron = generate(&Generator::graph500(12), &GenOptions::default(), false, &NoProgress).unwrap();
        let plain = RunParams::default();
        assert_eq!(queued_variant(Algorithm::Bfs, Target::Gpu, &road, &plain), Some("async"));
        assert_eq!(queued_variant(Algorithm::Bfs, Target::Gpu, &kron, &plain), None);
        assert_eq!(queued_variant(Algorithm::Bfs, Target::Cpu, &road, &plain), None);
        assert_eq!(queued_variant(Algorithm::Sssp, Target::Gpu, &road, &plain), Some("nfq"));
        assert_eq!(queued_variant(Algorithm::Sssp, Target::Gpu, &kron, &plain), None);
        assert_eq!(queued_variant(Algorithm::Pr, Target::Gpu, &road, &plain), None);
        let named = RunParams { variant: Some("wl".into()), ..RunParams::default() };
        assert_eq!(queued_variant(Algorithm::Bfs, Target::Gpu, &road, &named), None);
        let rounds = RunParams { queue: Some(false), ..RunParams::default() };
        assert_eq!(queued_variant(Algorithm::Bfs, Target::Gpu, &road, &rounds), None);
        let asked = RunParams { queue: Some(true), ..RunParams::default() };
        assert_eq!(queued_variant(Algorithm::Bfs, Target::Gpu, &road, &asked), Some("async"));
    }
}
