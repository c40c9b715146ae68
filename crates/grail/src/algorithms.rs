//! The suite algorithms as methods of [`Graph`]: `graph.bfs(0).on(Target::Gpu(0)).run()?`.

use std::marker::PhantomData;

use grail_algos::{Algorithm, Output, RunParams};
use grail_graph::NodeId;
use grail_graph::partition::Method as PartitionMethod;
use grail_graph::reference::SpanningForest;
use grail_ir::OptConfig;
use grail_runtime::multi::{Device, Topology, Worker};

use crate::error::{Error, Result};
use crate::graph::Graph;

/// Where a program runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Target {
    /// Every core of this machine: C generated from the program, built with the system's C
    /// compiler (`$CC`, else `cc`).
    #[default]
    Cpu,
    /// The NVIDIA GPU of this number (from 0): CUDA generated from the program, compiled by
    /// NVRTC, run through the driver.
    Gpu(usize),
    /// The sequential reference implementation that checks the others (suite algorithms only).
    Reference,
}

impl Target {
    pub(crate) fn split(self) -> (grail_algos::Target, usize) {
        match self {
            Target::Cpu => (grail_algos::Target::Cpu, 0),
            Target::Gpu(device) => (grail_algos::Target::Gpu, device),
            Target::Reference => (grail_algos::Target::Reference, 0),
        }
    }
}

/// PageRank's result: a rank per node (summing to 1) and the iterations it took.
#[derive(Debug, Clone, PartialEq)]
pub struct PageRank {
    pub ranks: Vec<f64>,
    pub iterations: u32,
}

/// A BFS level of a node the source does not reach.
pub const UNREACHED: u32 = grail_graph::reference::UNREACHED;
/// An SSSP distance of a node the source does not reach.
pub const INFINITE_DISTANCE: u64 = grail_graph::reference::INFINITE_DISTANCE;

/// What a suite algorithm's run gives back, by algorithm. Sealed: implemented for the result
/// types of [`Graph`]'s algorithm methods.
pub trait AlgorithmOutput: Sized + private::Sealed {
    #[doc(hidden)]
    fn from_output(output: Output) -> Option<Self>;
}

mod private {
    pub trait Sealed {}
}

macro_rules! outputs {
    ($($ty:ty => $pattern:pat => $value:expr;)*) => {$(
        impl private::Sealed for $ty {}
        impl AlgorithmOutput for $ty {
            fn from_output(output: Output) -> Option<Self> {
                match output {
                    $pattern => Some($value),
                    _ => None,
                }
            }
        }
    )*};
}

/// Levels of BFS and labels of CC are both `Vec<u32>`; the run knows which it asked for.
impl private::Sealed for Vec<u32> {}
impl AlgorithmOutput for Vec<u32> {
    fn from_output(output: Output) -> Option<Self> {
        match output {
            Output::Levels(v) | Output::Components(v) => Some(v),
            _ => None,
        }
    }
}

/// Distances as `f64`: over real weights as computed, over integer ones converted (exact up
/// to 2^53), infinity where there is no path.
impl private::Sealed for Vec<f64> {}
impl AlgorithmOutput for Vec<f64> {
    fn from_output(output: Output) -> Option<Self> {
        match output {
            Output::RealDistances(d) => Some(d),
            Output::Distances(d) => {
                Some(d.into_iter().map(|d| if d == INFINITE_DISTANCE { f64::INFINITY } else { d as f64 }).collect())
            }
            _ => None,
        }
    }
}

outputs! {
    Vec<u64> => Output::Distances(d) => d;
    PageRank => Output::Ranks { ranks, iterations } => PageRank { ranks, iterations };
    u64 => Output::Triangles(count) => count;
    Vec<bool> => Output::IndependentSet(in_set) => in_set;
    SpanningForest => Output::SpanningForest(forest) => forest;
}

/// A suite algorithm about to run: choose the target and options, then [`Run::run`].
#[must_use = "a run does nothing until `.run()`"]
#[derive(Debug, Clone)]
pub struct Run<'g, T> {
    graph: &'g Graph,
    algorithm: Algorithm,
    target: Target,
    params: RunParams,
    verify: bool,
    /// [`Run::parts`]: each node's part, checked when the run starts.
    owner: Option<Vec<u32>>,
    output: PhantomData<T>,
}

/// How a run went, besides its result.
#[derive(Debug, Clone)]
pub struct RunInfo {
    /// The algorithm's own time (not compiling, not checking), end to end on its target.
    pub time: std::time::Duration,
    /// On the GPU: time inside kernels, by CUDA events.
    pub kernel_time: Option<std::time::Duration>,
    /// The suite program variant that ran (generated targets).
    pub variant: Option<&'static str>,
    /// The optimization configuration it was compiled with (generated targets), as `--opt`
    /// writes it.
    pub opt: Option<String>,
}

impl<'g, T: AlgorithmOutput> Run<'g, T> {
    pub(crate) fn new(graph: &'g Graph, algorithm: Algorithm, source: Option<NodeId>) -> Run<'g, T> {
        let params = RunParams { source: source.map(u64::from), ..RunParams::default() };
        Run { graph, algorithm, target: Target::Cpu, params, verify: false, owner: None, output: PhantomData }
    }

    /// Runs on `target` (default: [`Target::Cpu`]).
    pub fn on(mut self, target: Target) -> Self {
        self.target = target;
        self
    }

    /// Runs on several devices, the graph partitioned among them by `partition` (`grail run
    /// --devices`): e.g. `&[Device::Gpu(0), Device::Gpu(1)]`, or `&[Device::Cpu; 4]` (the
    /// threads shared among the CPU devices). The algorithm's first variant that can run
    /// partitioned is used unless [`Run::variant`] names one; one that cannot is an error naming
    /// the reasons. The mode is the one `grail run --devices` takes without `--mode`
    /// ([`grail_algos::preferred_mode`]: asynchronous for BFS and SSSP over GPUs on graphs not of
    /// low diameter, bulk-synchronous otherwise) unless [`Run::asynchronous`] or
    /// [`Run::bulk_synchronous`] says.
    pub fn on_devices(mut self, devices: &[Device], partition: PartitionMethod) -> Self {
        self.target = Target::Cpu;
        self.params.multi = Some(grail_algos::suite::MultiParams {
            mode: None,
            ..grail_algos::suite::MultiParams::new(devices.to_vec(), partition)
        });
        self
    }

    /// With [`Run::on_devices`]: runs in supersteps (Falcon's bulk-synchronous execution, `grail
    /// run --mode bsp`) whatever the graph. Without `on_devices` it changes nothing.
    pub fn bulk_synchronous(mut self) -> Self {
        if let Some(multi) = &mut self.params.multi {
            multi.mode = Some(grail_runtime::multi::Mode::Bsp);
        }
        self
    }

    /// With [`Run::on_devices`]: the parts as given instead of the partition method: `owner[u]`
    /// is node `u`'s part, from 0 to the device count minus one, as a partition file holds them
    /// (`grail partition -o`, METIS's `gpmetis`; `grail run --partition-file`). A list of
    /// another length, a part out of range or a part with no node is an error when the run
    /// starts.
    pub fn parts(mut self, owner: Vec<u32>) -> Self {
        self.owner = Some(owner);
        self
    }

    /// With [`Run::on_devices`]: runs the worklist loops that can (sssp's, cc's, residual
    /// PageRank's, and BFS's, which then takes its label-correcting `async` variant on graphs
    /// not of low diameter unless [`Run::variant`] names another) asynchronously, Groute's way (`grail run --mode async`): every device works
    /// on its own worklist and sends its changes as packets as it goes, straight to their
    /// devices ([`Topology::Direct`]) or around a ring of the devices ([`Topology::Ring`]);
    /// the other loops stay bulk-synchronous. Without `on_devices` it changes nothing.
    pub fn asynchronous(mut self, topology: Topology) -> Self {
        if let Some(multi) = &mut self.params.multi {
            multi.mode = Some(grail_runtime::multi::Mode::Async);
            multi.topology = topology;
        }
        self
    }

    /// With [`Run::asynchronous`] on GPUs that reach each other's memory: who runs the
    /// asynchronous loops ([`Worker::Fused`], the default: Groute's fused worker kernel, one
    /// control kernel per GPU to the loop's end; [`Worker::Host`]: the host exchanges packets
    /// every 256 invocations). Without `on_devices` it changes nothing.
    pub fn worker(mut self, worker: Worker) -> Self {
        if let Some(multi) = &mut self.params.multi {
            multi.worker = worker;
        }
        self
    }

    /// Worker threads on the CPU (default: one per core).
    pub fn threads(mut self, threads: usize) -> Self {
        self.params.threads = threads;
        self
    }

    /// Stops a run on a generated target that takes longer than `limit` with
    /// an error for which [`Error::is_timeout`] holds: checked before each kernel invocation and each round of a loop of
    /// the program's `main`, so a single kernel that never ends (or a loop a GPU runs whole) is
    /// not interrupted. Compiling does not count.
    pub fn time_limit(mut self, limit: std::time::Duration) -> Self {
        self.params.time_limit = Some(limit);
        self
    }

    /// The suite program variant (`grail run ALGO --variant help` lists them), instead of the
    /// algorithm's default.
    pub fn variant(mut self, name: &str) -> Self {
        self.params.variant = Some(name.to_string());
        self
    }

    /// The optimization configuration instead of the tuned one (`"none"`, `"all"`,
    /// `"all,np=tb+wp"`, ...): see `grail compile --help`.
    pub fn opt(mut self, config: &str) -> Result<Self> {
        let config: OptConfig = config.parse().map_err(|e: grail_ir::opt::ConfigError| Error::Usage(e.to_string()))?;
        self.params.opt = grail_algos::OptChoice::Given(config);
        Ok(self)
    }

    /// A program parameter by name (`delta` of `sssp`'s near-far variant, ...), as text.
    pub fn param(mut self, name: &str, value: impl ToString) -> Self {
        self.params.program_params.push((name.to_string(), value.to_string()));
        self
    }

    /// Checks the result with the algorithm's verifier before returning it.
    pub fn verify(mut self) -> Self {
        self.verify = true;
        self
    }

    /// Runs the algorithm.
    pub fn run(self) -> Result<T> {
        self.run_with_info().map(|(value, _)| value)
    }

    /// Runs the algorithm; its result and how the run went.
    pub fn run_with_info(mut self) -> Result<(T, RunInfo)> {
        let (target, device) = self.target.split();
        self.params.device = device;
        let graph = self.graph.as_inner();
        if let Some(owner) = self.owner.take() {
            let Some(multi) = &mut self.params.multi else {
                return Err(Error::Usage("parts splits a run over several devices: call on_devices first".into()));
            };
            if owner.len() != graph.num_nodes() as usize {
                return Err(Error::Usage(format!(
                    "parts: {} nodes' parts for a graph of {} nodes",
                    owner.len(),
                    graph.num_nodes()
                )));
            }
            let parts = multi.devices.len() as u32;
            let partitioning = grail_graph::partition::Partitioning::from_owner(parts, owner)
                .map_err(|e| Error::Usage(format!("parts: {e}")))?;
            if let Some(empty) = partitioning.empty_part() {
                return Err(Error::Usage(format!(
                    "parts: part {empty} has no nodes; each of the {parts} devices needs some"
                )));
            }
            multi.partitioning = Some(std::sync::Arc::new(partitioning));
        }
        let result = grail_algos::run(self.algorithm, graph, target, &self.params)?;
        if self.verify {
            grail_algos::verify(self.algorithm, graph, &self.params, &result.output)?;
        }
        let info = RunInfo {
            time: result.time,
            kernel_time: result.gpu.as_ref().map(|g| g.kernels),
            variant: result.variant.map(|v| v.name),
            opt: result.opt.map(|c| c.to_string()),
        };
        let real = matches!(result.output, Output::RealDistances(_));
        let value = T::from_output(result.output).ok_or_else(|| {
            if real {
                Error::Usage("the graph's weights are real, so its distances are too: use sssp_real".into())
            } else {
                Error::Usage(format!("internal error (a bug in grail): {} gave another kind of result", self.algorithm))
            }
        })?;
        Ok((value, info))
    }
}

impl Run<'_, PageRank> {
    /// Stop once an iteration changes the ranks by less than this, in L1 norm.
    pub fn tolerance(mut self, tolerance: f64) -> Self {
        self.params.pagerank.tolerance = tolerance;
        self
    }

    /// Stop after this many iterations even if the ranks still change.
    pub fn max_iterations(mut self, iterations: u32) -> Self {
        self.params.pagerank.max_iterations = iterations;
        self
    }
}

/// The suite algorithms.
impl Graph {
    /// Breadth-first search levels from `source` (edges followed forward); [`UNREACHED`] where
    /// there is no path.
    pub fn bfs(&self, source: NodeId) -> Run<'_, Vec<u32>> {
        Run::new(self, Algorithm::Bfs, Some(source))
    }

    /// Shortest-path distances from `source` over integer edge weights (1 each when
    /// unweighted); [`INFINITE_DISTANCE`] where there is no path. A graph with real weights
    /// is an error: use [`Graph::sssp_real`].
    pub fn sssp(&self, source: NodeId) -> Run<'_, Vec<u64>> {
        Run::new(self, Algorithm::Sssp, Some(source))
    }

    /// Shortest-path distances from `source` as `f64`, over real weights (`f32`, summed in
    /// `f64`) or integer ones; `f64::INFINITY` where there is no path. Negative weights are an
    /// error.
    pub fn sssp_real(&self, source: NodeId) -> Run<'_, Vec<f64>> {
        Run::new(self, Algorithm::Sssp, Some(source))
    }

    /// Connected components of the graph taken as undirected (weakly connected components): each
    /// node's label is the smallest node id of its component.
    pub fn connected_components(&self) -> Run<'_, Vec<u32>> {
        Run::new(self, Algorithm::Cc, None)
    }

    /// PageRank (damping 0.85) until the ranks change by less than the tolerance.
    pub fn pagerank(&self) -> Run<'_, PageRank> {
        Run::new(self, Algorithm::Pr, None)
    }

    /// The number of triangles of the undirected simple graph underlying this one.
    pub fn triangles(&self) -> Run<'_, u64> {
        Run::new(self, Algorithm::Tri, None)
    }

    /// A maximal independent set of the undirected simple graph underlying this one.
    pub fn maximal_independent_set(&self) -> Run<'_, Vec<bool>> {
        Run::new(self, Algorithm::Mis, None)
    }

    /// A minimum spanning forest of the graph taken as undirected.
    pub fn minimum_spanning_forest(&self) -> Run<'_, SpanningForest> {
        Run::new(self, Algorithm::Mst, None)
    }
}
