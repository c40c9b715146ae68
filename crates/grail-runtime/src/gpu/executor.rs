//! The GPU executor: runs a module's orchestration in Rust (the shared interpreter of
//! `crate::host`) and its kernels as CUDA, compiled by NVRTC for the device found.
//!
//! One invocation of a kernel: bump the invocation number (claims compare against it); for each
//! phase, launch its kernel over the phase's items (a grid-stride loop, the grid sized from the
//! item count and the kernel's occupancy); while it retried items, launch it again over them
//! (`ctx.retrying`); the pushes of every phase land in the output worklist, which becomes the
//! current one. After each launch the host reads back a few counters (pushes, retries, spill
//! flags, the reduction), so overflowing worklists are grown and their spilled items gathered
//! before anything else runs (see `grail_cuda.h`'s `grail_wl`).
//!
//! Coherence (the AMM idea of IrGL, at the granularity of columns): every property column and
//! the union-find parents have a host copy and a device copy, and the executor tracks which are
//! current. A kernel needs every column on the device, so stale device copies are uploaded
//! before it runs; afterwards the columns it writes ([`grail_ir::analysis::kernel_effects`]) are
//! current only on the device. Host code reading one element of a device-only column copies
//! that element back (the whole column once it has read many); writing one element writes
//! both copies that are current. At the end, the columns current only on the device come back.

mod outlined;
mod peers;

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::sys::CUlimit;
use cudarc::driver::{CudaContext, CudaFunction};
use grail_graph::Graph;
use grail_ir::analysis::{self, KernelEffects};
use grail_ir::{CollectionId, KernelId, Module, OutlineId, PropertyId, Space, Stmt, Type};

use super::buffer::{self, DeviceBuffer, Event, arg, call, launch};
use super::device::{Device, GpuModule};
use super::ffi::{
    GRAIL_MERGE_SEGS, GRAIL_SEGS, GRAIL_SPILL_SEGS, GpuColl, GpuCtx, GpuMergeSeg, GpuMergeSegs, GpuWorklist,
};
use super::graph::DeviceGraph;
use crate::cache::ModuleCache;
use crate::cpu::ffi::GrailValue;
use crate::cpu::{KernelStats, RunOutput, RunStats};
use crate::error::{GpuError, Result, RuntimeError};
use crate::host::interp::{self, Machine};
use crate::host::memory::{ColumnRef, HostArrays, Memory};
use crate::host::table::Table;
use crate::host::value::Value;
use crate::host::{accumulator_type, bind_params, flatten, grail_values, identity, leaf_types, ops};

/// Threads per block of the runtime's own kernels (the program's phases use the block size of
/// its configuration, `Module::opt.block`, which its generated code is written for).
const BLOCK: u32 = 256;

/// Element reads of a device-only column from host code before the whole column is copied back.
const ELEMENT_READS_BEFORE_DOWNLOAD: u32 = 64;

/// The smallest capacity of a device worklist, in items.
const MIN_WORKLIST: u64 = 1024;

/// How many unused small worklist buffers a run keeps, besides its largest unused one
/// ([`GpuRun::keep_list`]).
const SPARE_LISTS: usize = 4;

/// Slots of the counters buffer the kernels write and the host reads after every launch.
mod counter {
    /// Pushes made this invocation (`grail_wl.len` of the output worklist).
    pub const PUSHES: usize = 0;
    /// Retries made by the current launch.
    pub const RETRIES: usize = 1;
    /// Two u32 words: the output worklist's and the retry list's overflow flags.
    pub const OVERFLOW: usize = 2;
    /// The reduction's `grail_value`.
    pub const ACC: usize = 3;
    /// A phase's item count, from its size kernel.
    pub const SIZE: usize = 4;
    pub const COUNT: usize = 5;
    /// After the counters: a word per route of a partitioned run's exchange, counting the
    /// changes sent along it by the comparisons that follow an invocation
    /// ([`super::GpuRun::invoke_sending`]); zeroed with the counters, read back with them.
    pub const ROUTES: usize = 16;
    /// After the routes' words: the kernel's arguments.
    pub const ARGS: usize = COUNT + ROUTES;
}

/// A module compiled for one GPU and loaded, ready to run on any graph.
pub struct GpuProgram {
    module: Module,
    source: String,
    device: Device,
    kernels: Vec<KernelCode>,
    collections: Vec<CollectionCode>,
    unspill: CudaFunction,
    free_spill: CudaFunction,
    colls_free: CudaFunction,
    /// A partitioned run's copies of column elements into 64-bit words, comparisons with the
    /// words recorded, stores, and merges.
    gather_words: CudaFunction,
    split_pushes: CudaFunction,
    clear_ghost_flags: CudaFunction,
    /// Union-find parents made the identity on the device (`grail_sets_identity`).
    sets_identity: CudaFunction,
    /// The edges' sources made on the device (`grail_edge_sources`).
    edge_sources: CudaFunction,
    diff_words: CudaFunction,
    put_words: CudaFunction,
    merge_words: CudaFunction,
    unpack_changes: CudaFunction,
    put_changes: CudaFunction,
    route_pushes: CudaFunction,
    split_route_pushes: CudaFunction,
    merge_changes: CudaFunction,
    merge_changes_segs: CudaFunction,
    /// A deferred superstep's changes merged with their count read on the sender's device.
    merge_changes_counted: CudaFunction,
    /// The program's update functions' kernels (`grail_merge_custom_<i>`), in order.
    merge_custom: Vec<CudaFunction>,
    /// A resident graph with room per node grown by a batch of edges ([`DeviceGraph::insert`]):
    /// the outgrown rows moved, the edges placed, the rows' ends moved past them.
    pub(crate) room_move: CudaFunction,
    pub(crate) room_place: CudaFunction,
    pub(crate) room_advance: CudaFunction,
    /// An input collection's rows from a [`ResidentTable`]'s columns.
    rows_from_columns: CudaFunction,
    /// The control kernels of the outlined regions.
    regions: Vec<outlined::RegionCode>,
    /// By property: a weight column that nothing writes, bound to the resident graph's weights
    /// instead of copied.
    bound_weights: Vec<bool>,
    /// Pinned buffers for copying results back, made on the first large copy.
    staging: std::sync::Mutex<Option<super::buffer::Staging>>,
    /// Mailboxes of runs that ended, for the next runs: pinned memory costs a millisecond or
    /// more to allocate and to free, more than a small run's kernels.
    mailboxes: std::sync::Mutex<Vec<buffer::Mailbox>>,
    /// The collections' segments (device-heap memory) a run that ended left for the next run,
    /// by collection: allocating them in the kernels that fill a collection cost a run of
    /// incremental SSSP's repair a third of a millisecond per batch (see `DeviceCollections`).
    kept_segments: std::sync::Mutex<Vec<[u64; GRAIL_SEGS]>>,
    /// Keeps the functions above loaded.
    _loaded: GpuModule,
}

impl Drop for GpuProgram {
    /// Gives the segments a run left for the next back to the device heap.
    fn drop(&mut self) {
        let kept = std::mem::take(self.kept_segments.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner()));
        if !kept.is_empty() && self.context().bind_to_thread().is_ok() {
            // Errors are ignored: after a kernel fault the context is gone, and its heap with it.
            drop(DeviceCollections::over(self, &kept));
        }
    }
}

impl std::fmt::Debug for GpuProgram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuProgram").field("module", &self.module.name).finish_non_exhaustive()
    }
}

/// The error checked mode's record (`grail_cuda.h`'s `GRAIL_CHECK_*` code and the value at fault)
/// stands for, worded as the CPU target words the same failure; `None` when no check failed.
fn failed_check(kernel: &str, device: &str, num_nodes: u32, [what, value]: [u64; 2]) -> Option<RuntimeError> {
    const DIVIDE: u64 = 1;
    const PUSH: u64 = 2;
    const PUSH_ELEMENT: u64 = 3;
    match what {
        0 => None,
        DIVIDE => Some(RuntimeError::Gpu(GpuError::KernelFault {
            kernel: kernel.to_string(),
            device: device.to_string(),
            message: "an integer division or remainder by zero, or of the type's minimum by -1 (found by --checks)"
                .into(),
        })),
        PUSH => Some(RuntimeError::program(format!(
            "kernel `{kernel}` pushed node {value}, but the graph has {num_nodes} nodes"
        ))),
        PUSH_ELEMENT => Some(RuntimeError::program(format!(
            "kernel `{kernel}` pushed element {value}, which its worklist's collection does not have"
        ))),
        other => Some(RuntimeError::program(format!("kernel `{kernel}` failed check {other}"))),
    }
}

/// How a phase's item count is known.
#[derive(Clone, Copy, PartialEq, Eq)]
enum PhaseSize {
    /// The input worklist's length.
    Worklist,
    /// The node count (or the retried items' count).
    AllNodes,
    AllEdges,
    /// Computed on the device by the phase's size kernel (collections, ranges).
    Computed,
}

struct PhaseCode {
    run: CudaFunction,
    size_kernel: CudaFunction,
    size: PhaseSize,
    /// Blocks that fit on the device at once: a larger grid only queues.
    max_grid: u32,
    /// For a phase whose nested loop the whole grid may run for huge ranges
    /// (`grail_ir::opt::nested::grid_shared`): the `_hubs` kernel that runs the ranges the
    /// phase posted, launched behind it (it returns at once where none was), and its grid.
    hubs: Option<(CudaFunction, u32)>,
}

struct KernelCode {
    phases: Vec<PhaseCode>,
    uses_worklist: bool,
    effects: KernelEffects,
}

struct CollectionCode {
    add: CudaFunction,
    get: CudaFunction,
    /// Places elements `begin..begin + count` from their leaves (input collections).
    put: CudaFunction,
    clear_claims: CudaFunction,
}

/// What a GPU run took beyond [`RunStats`].
#[derive(Debug, Clone, Default)]
pub struct GpuTimes {
    /// GPU time of every kernel invocation (CUDA events around each), launches and the small
    /// copies of counters between them included.
    pub kernels: Duration,
    /// Copying the graph, the columns and the input collections to the device (wall time).
    pub upload: Duration,
    /// Copying results back (wall time).
    pub download: Duration,
}

impl GpuProgram {
    /// By property, whether its column is the resident graph's weight words themselves: a
    /// weight column nothing writes, whose type is the words' kind (u32 for integer weights
    /// or the unit ones, f32 for real weights).
    fn weights_bound_on(&self, csr: &grail_graph::Csr) -> Vec<bool> {
        let real = csr.has_real_weights();
        (self.module.properties.iter().zip(&self.bound_weights))
            .map(|(p, &b)| b && (p.ty == Type::F32) == real)
            .collect()
    }

    /// Emits CUDA, compiles it with NVRTC for `device` (through the cache when given) and loads it.
    pub fn compile(module: Module, device: Device, cache: Option<&ModuleCache>) -> Result<GpuProgram> {
        let mut source = grail_codegen::emit_cuda(&module)?;
        if device.checks() {
            source.insert_str(0, "#define GRAIL_CHECKS 1\n");
        }
        device.context().bind_to_thread().map_err(|e| call("cuCtxSetCurrent", e))?;
        let name = format!("{}.cu", module.name);
        let compiled = match cache {
            Some(cache) => device.compile(cache, &source, &name)?,
            None => super::nvrtc::compile(&source, &name, device.arch())?,
        };
        let loaded = device.load(&compiled)?;
        let sm_count = device.info().sm_count.max(1);
        let mut kernels = Vec::with_capacity(module.kernels.len());
        for (k, kernel) in module.kernels.iter().enumerate() {
            let mut phases = Vec::new();
            for (p, stmt) in kernel.body.block.iter().enumerate() {
                let Stmt::ForAll(forall) = stmt else {
                    return Err(RuntimeError::program(format!(
                        "kernel `{}` has a statement outside its loops",
                        kernel.name
                    )));
                };
                let size = match forall.space {
                    Space::Worklist => PhaseSize::Worklist,
                    // With added nodes, the node ids run past the input's: the size kernel counts.
                    Space::AllNodes if module.growth.as_ref().is_none_or(|g| g.nodes.is_none()) => PhaseSize::AllNodes,
                    // With added edges, the edge ids run past the input's: the size kernel counts.
                    Space::AllEdges if module.growth.is_none() => PhaseSize::AllEdges,
                    _ => PhaseSize::Computed,
                };
                let run = loaded.function(&format!("grail_k{k}_{p}"))?;
                let size_kernel = loaded.function(&format!("grail_k{k}_{p}_size"))?;
                let per_sm = run
                    .occupancy_max_active_blocks_per_multiprocessor(module.opt.block, 0, None)
                    .map_err(|e| call("cuOccupancyMaxActiveBlocksPerMultiprocessor", e))?
                    .max(1);
                let hubs = if grail_ir::opt::nested::grid_shared(forall) {
                    let drain = loaded.function(&format!("grail_k{k}_{p}_hubs"))?;
                    let per_sm = drain
                        .occupancy_max_active_blocks_per_multiprocessor(module.opt.block, 0, None)
                        .map_err(|e| call("cuOccupancyMaxActiveBlocksPerMultiprocessor", e))?
                        .max(1);
                    Some((drain, sm_count * per_sm))
                } else {
                    None
                };
                phases.push(PhaseCode { run, size_kernel, size, max_grid: sm_count * per_sm, hubs });
            }
            kernels.push(KernelCode {
                phases,
                uses_worklist: kernel.uses_worklist(),
                effects: analysis::kernel_effects(&module, KernelId(k as u32)),
            });
        }
        let mut collections = Vec::with_capacity(module.collections.len());
        for c in 0..module.collections.len() {
            collections.push(CollectionCode {
                add: loaded.function(&format!("grail_c{c}_add_host"))?,
                get: loaded.function(&format!("grail_c{c}_get_host"))?,
                put: loaded.function(&format!("grail_c{c}_put_host"))?,
                clear_claims: loaded.function(&format!("grail_c{c}_clear_claims"))?,
            });
        }
        let mut regions = Vec::new();
        for (id, name, invoked, host_writes) in outlined::outlined_regions(&module) {
            let control = loaded.function(&format!("grail_o{}", id.0))?;
            let per_sm = control
                .occupancy_max_active_blocks_per_multiprocessor(module.opt.block, 0, None)
                .map_err(|e| call("cuOccupancyMaxActiveBlocksPerMultiprocessor", e))?;
            let retries = invoked.iter().any(|k| grail_ir::opt::backoff::retries(&module.kernels[k.index()]));
            regions.push(outlined::RegionCode {
                id,
                name,
                control,
                max_grid: sm_count * per_sm,
                blocks_per_sm: per_sm,
                sms: sm_count,
                kernels: invoked,
                host_writes,
                retries,
            });
        }
        let written = analysis::written_anywhere(&module);
        let bound_weights = module
            .properties
            .iter()
            .enumerate()
            .map(|(p, property)| property.is_weight && matches!(property.ty, Type::U32 | Type::F32) && !written[p])
            .collect();
        let program = GpuProgram {
            staging: std::sync::Mutex::new(None),
            mailboxes: std::sync::Mutex::new(Vec::new()),
            kept_segments: std::sync::Mutex::new(Vec::new()),
            bound_weights,
            regions,
            unspill: loaded.function("grail_wl_unspill")?,
            free_spill: loaded.function("grail_wl_free_spill")?,
            colls_free: loaded.function("grail_colls_free")?,
            gather_words: loaded.function("grail_gather_words")?,
            split_pushes: loaded.function("grail_split_pushes")?,
            clear_ghost_flags: loaded.function("grail_clear_ghost_flags")?,
            sets_identity: loaded.function("grail_sets_identity")?,
            edge_sources: loaded.function("grail_edge_sources")?,
            diff_words: loaded.function("grail_diff_words")?,
            put_words: loaded.function("grail_put_words")?,
            merge_words: loaded.function("grail_merge_words")?,
            unpack_changes: loaded.function("grail_unpack_changes")?,
            put_changes: loaded.function("grail_put_changes")?,
            route_pushes: loaded.function("grail_route_pushes")?,
            split_route_pushes: loaded.function("grail_split_route_pushes")?,
            merge_changes: loaded.function("grail_merge_changes")?,
            merge_changes_segs: loaded.function("grail_merge_changes_segs")?,
            merge_changes_counted: loaded.function("grail_merge_changes_counted")?,
            room_move: loaded.function("grail_room_move")?,
            room_place: loaded.function("grail_room_place")?,
            room_advance: loaded.function("grail_room_advance")?,
            rows_from_columns: loaded.function("grail_rows_from_columns")?,
            merge_custom: (0..module.merge_functions.len())
                .map(|i| loaded.function(&format!("grail_merge_custom_{i}")))
                .collect::<std::result::Result<Vec<_>, _>>()?,
            module,
            source,
            device,
            kernels,
            collections,
            _loaded: loaded,
        };
        program.reserve_heap()?;
        Ok(program)
    }

    /// The CUDA context of the program's device.
    pub(crate) fn context(&self) -> &Arc<CudaContext> {
        self.device.context()
    }

    pub fn module(&self) -> &Module {
        &self.module
    }

    /// The generated CUDA.
    pub fn cuda_source(&self) -> &str {
        &self.source
    }

    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Sizes the device heap that collections and spilled worklist items come from (the driver's
    /// default is 8 MiB). A program with collections keeps its elements there, so it gets half
    /// the device's memory (a mesh of 10 million triangles refined needs about 7 GiB); one
    /// without needs it only for worklists that outgrow their arrays, and gets a sixteenth, at
    /// most 8 GiB, leaving the rest to the graph. At least 256 MiB either way. Set before the
    /// first launch; a heap that is already larger is kept.
    ///
    /// `GRAIL_DEVICE_STACK_KIB` sets a thread's stack as well. compute-sanitizer's memcheck,
    /// checking the device heap (its default), stops a kernel with a large frame that calls
    /// malloc (a mesh refinement's, whose arrays take 15.4 KiB) with an illegal address of its
    /// own making unless the stack is larger than the frame needs: `dmr` runs clean under it
    /// with 64 KiB. The same happens to a plain CUDA program with a 2.5 KiB array and malloc.
    fn reserve_heap(&self) -> Result<()> {
        let context = self.device.context();
        if let Some(value) = std::env::var_os("GRAIL_DEVICE_STACK_KIB") {
            let kib =
                value.to_str().and_then(|v| v.trim().parse::<usize>().ok()).filter(|&k| (1..=1 << 20).contains(&k));
            let Some(kib) = kib else {
                return Err(RuntimeError::Input(format!(
                    "GRAIL_DEVICE_STACK_KIB={value:?}: a thread's stack in KiB, from 1 to 1048576, was expected"
                )));
            };
            context
                .set_limit(CUlimit::CU_LIMIT_STACK_SIZE, kib << 10)
                .map_err(|e| call("cuCtxSetLimit(CU_LIMIT_STACK_SIZE)", e))?;
        }
        let total = self.device.info().total_memory as usize;
        let wanted = if self.module.collections.is_empty() {
            (total / 16).clamp(256 << 20, 8 << 30)
        } else {
            (total / 2).max(256 << 20)
        };
        let current = context.get_limit(CUlimit::CU_LIMIT_MALLOC_HEAP_SIZE).unwrap_or(0);
        if current < wanted {
            // The heap is taken from what the device has free: memory kept for buffers goes back.
            super::buffer::release_kept(context);
            context
                .set_limit(CUlimit::CU_LIMIT_MALLOC_HEAP_SIZE, wanted)
                .map_err(|e| call("cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE)", e))?;
        }
        Ok(())
    }

    /// Runs the program on `graph`, as [`crate::cpu::CpuProgram::run`] does; also returns the GPU's times.
    ///
    /// The graph is copied to the device for this run alone; [`GpuProgram::run_on`] runs on a
    /// graph made resident once ([`DeviceGraph`]).
    pub fn run(&self, graph: &Graph, params: &[Option<Value>], out: &mut dyn Write) -> Result<(RunOutput, GpuTimes)> {
        self.run_with_inputs(graph, params, &[], out)
    }

    /// [`GpuProgram::run`] for a program with input collections, as
    /// [`crate::cpu::CpuProgram::run_with_inputs`] takes them (copied up in bulk).
    pub fn run_with_inputs(
        &self,
        graph: &Graph,
        params: &[Option<Value>],
        inputs: &[Table],
        out: &mut dyn Write,
    ) -> Result<(RunOutput, GpuTimes)> {
        let started = Instant::now();
        let mut resident = DeviceGraph::new(&self.device, graph)?;
        let uploaded = resident.upload_time();
        let (mut output, mut times) = self.run_on_with_inputs(graph, &mut resident, params, inputs, out)?;
        times.upload += uploaded;
        output.stats.elapsed = started.elapsed();
        Ok((output, times))
    }

    /// Runs the program on `graph`, whose arrays `resident` holds on the device (adding what this
    /// program reads that it does not hold yet). Only the output properties are copied back: in
    /// the returned columns, the others hold what the host last had of them.
    pub fn run_on(
        &self,
        graph: &Graph,
        resident: &mut DeviceGraph,
        params: &[Option<Value>],
        out: &mut dyn Write,
    ) -> Result<(RunOutput, GpuTimes)> {
        self.run_on_with_inputs(graph, resident, params, &[], out)
    }

    /// [`GpuProgram::run_on`] for a program with input collections.
    pub fn run_on_with_inputs(
        &self,
        graph: &Graph,
        resident: &mut DeviceGraph,
        params: &[Option<Value>],
        inputs: &[Table],
        out: &mut dyn Write,
    ) -> Result<(RunOutput, GpuTimes)> {
        let (output, times, _) =
            self.run_resident(graph, resident, params, inputs, ResidentInputs::default(), &[], out)?;
        Ok((output, times))
    }

    /// [`GpuProgram::run_on_with_inputs`] with inputs and outputs that stay on the device
    /// between runs: `given` are input properties (`input p;`) whose values a run before this one
    /// left on the device, and input collections a resident graph's insertion put there (they
    /// take no table in `inputs`, which holds the other inputs in order), and `keep` are output
    /// properties left on the device for a later run instead of copied back (returned in
    /// `keep`'s order). A dynamic algorithm's batches pass their state along this way, with
    /// nothing but the batch crossing to the device, once. The returned [`RunOutput`] holds
    /// full columns of the outputs copied back and of what host code read or wrote; the others
    /// (kept outputs, given inputs, properties the kernels alone use) stay on the device and come
    /// back empty.
    #[allow(clippy::too_many_arguments)]
    pub fn run_resident(
        &self,
        graph: &Graph,
        resident: &mut DeviceGraph,
        params: &[Option<Value>],
        inputs: &[Table],
        given: ResidentInputs,
        keep: &[PropertyId],
        out: &mut dyn Write,
    ) -> Result<(RunOutput, GpuTimes, Vec<ResidentColumn>)> {
        let started = Instant::now();
        self.check_resident(&given, keep)?;
        resident.check(graph, &self.device)?;
        let context = self.device.context().clone();
        context.bind_to_thread().map_err(|e| call("cuCtxSetCurrent", e))?;
        let checked = started.elapsed();
        let before = resident.upload_time();
        resident.prepare(&self.module, graph, &self.edge_sources)?;
        let prepared = resident.upload_time() - before;
        let params = bind_params(&self.module, graph, params)?;
        let params_bound = started.elapsed();
        // Host copies of what the kernels alone read stay unbuilt; bound weights stay unfilled
        // (an unweighted graph's are the resident graph's unit weights, made on the device).
        let bound = self.weights_bound_on(graph.out());
        let fill_weights = self.module.properties.iter().zip(&bound).any(|(p, b)| p.is_weight && !b);
        let wanted = self.host_columns_wanted(&given, keep, fill_weights);
        let host = HostArrays { weights: fill_weights, graph_arrays: false };
        let memory = Memory::with_columns(&self.module, graph, host, &wanted)?;
        let memory_made = started.elapsed();
        for (p, column) in &given.properties {
            let property = &self.module.properties[p.index()];
            let (kind, len) = (memory.columns[p.index()].property_type(), memory.full_len(property));
            if (column.kind, column.len) != (kind, len) {
                return Err(RuntimeError::Input(format!(
                    "the resident column given for `{}` holds {} elements of type {:?}, the property takes {len} of \
                     {kind:?}",
                    property.name, column.len, column.kind,
                )));
            }
        }
        let set_up = Instant::now();
        let mut run = GpuRun::new(self, context, memory, params, out, resident, fill_weights)?;
        let set_up = set_up.elapsed();
        run.times.upload += prepared;
        let given_ids: Vec<PropertyId> = given.properties.iter().map(|(p, _)| *p).collect();
        let given_collections: Vec<CollectionId> = given.collections.iter().map(|(c, _)| *c).collect();
        for (p, column) in given.properties {
            run.adopt_column(p.index(), column.buffer)?;
        }
        // Input collections count as uploading (a large mesh's take hundreds of milliseconds).
        let filling = Instant::now();
        let result =
            given.collections.iter().try_for_each(|(id, table)| run.collection_fill_resident(*id, table)).and_then(
                |()| interp::fill_inputs_except(&self.module, &mut run, inputs, &given_ids, &given_collections),
            );
        run.times.upload += filling.elapsed();
        let filled = filling.elapsed();
        let result = result.and_then(|()| interp::run_main(&self.module, &mut run));
        let downloaded = Instant::now();
        let ran = downloaded - filling - filled;
        let (result, collections) =
            result.and_then(|result| Ok((result, interp::collection_outputs(&self.module, &mut run)?)))?;
        let added_nodes = interp::added_nodes(&self.module, &mut run)?;
        run.download_outputs(keep)?;
        run.times.download += downloaded.elapsed();
        let outputs = downloaded.elapsed();
        let torn_down = Instant::now();
        // The run's other buffers go here (with the run moved into the block), not at the end.
        let (memory, stats, times, columns, mailbox, colls) = {
            let run = run;
            let GpuRun { memory, stats, times, columns, mailbox, colls, .. } = run;
            (memory, stats, times, columns, mailbox, colls)
        };
        self.give_back_mailbox(mailbox)?;
        colls.keep(self);
        let mut columns: Vec<Option<DeviceColumn>> = columns.into_iter().map(Some).collect();
        let kept = keep
            .iter()
            .map(|p| {
                let buffer = columns[p.index()].take().expect("kept once (checked)").buffer;
                let kind = memory.columns[p.index()].property_type();
                let len = memory.full_len(&self.module.properties[p.index()]);
                ResidentColumn { buffer, kind, len, context: self.context().clone() }
            })
            .collect();
        drop(columns);
        if trace_run() {
            let ms = |d: Duration| d.as_secs_f64() * 1e3;
            eprintln!(
                "grail run `{}`: {:.3} ms: checked at {:.3}, resident graph prepared {:.3}, parameters bound at {:.3}, \
                 host memory made at {:.3}, run set up {:.3}, inputs {:.3}, main {:.3} (kernels {:.3}), outputs {:.3}, \
                 torn down {:.3}",
                self.module.name,
                ms(started.elapsed()),
                ms(checked),
                ms(prepared),
                ms(params_bound),
                ms(memory_made),
                ms(set_up),
                ms(filled),
                ms(ran),
                ms(times.kernels),
                ms(outputs),
                ms(torn_down.elapsed())
            );
        }
        let mut properties = memory.into_columns();
        if let Some(added) = &added_nodes {
            interp::extend_with_added_nodes(&self.module, &mut properties, graph.num_nodes() as usize, added);
        }
        Ok((
            RunOutput {
                properties,
                result,
                collections,
                stats: RunStats { kernels: stats, elapsed: started.elapsed() },
            },
            times,
            kept,
        ))
    }

    /// A mailbox for a run: one an earlier run gave back, or a new one.
    fn take_mailbox(&self) -> Result<buffer::Mailbox> {
        let kept = self.mailboxes.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).pop();
        match kept {
            Some(mailbox) => Ok(mailbox),
            None => buffer::Mailbox::new(self.context()),
        }
    }

    /// Keeps the mailbox of a run that ended for the next run, once every copy through it is
    /// done.
    fn give_back_mailbox(&self, mailbox: buffer::Mailbox) -> Result<()> {
        buffer::synchronize().map_err(|e| call("cuCtxSynchronize", e))?;
        mailbox.settle();
        self.mailboxes.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(mailbox);
        Ok(())
    }

    /// `column` (left on the device by a run of this program or another on its device) copied
    /// back to the host, through this program's pinned buffers.
    pub fn read_back(&self, column: &ResidentColumn) -> Result<grail_graph::Column> {
        if !Arc::ptr_eq(&column.context, self.context()) {
            return Err(RuntimeError::Input("the resident column lives on another device than the program".into()));
        }
        self.context().bind_to_thread().map_err(|e| call("cuCtxSetCurrent", e))?;
        let mut host = grail_graph::Column::zeroed(column.kind, column.len);
        let (ptr, size) = crate::host::memory::ColumnRef::of(&mut host).raw_bytes();
        let mut staging = self.staging.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        // SAFETY: the host column holds len * size bytes, as the device's does (at least).
        unsafe { column.buffer.download_staged(ptr, column.len * size, &mut staging)? };
        Ok(host)
    }

    /// By property, whether a run needs its host column: unless the module changes the graph's
    /// shape (whose host side reads the added elements' columns), every property but those
    /// that stay on the device alone: not named by host code, not an output copied back, not an
    /// input filled from the host, not weights filled there.
    fn host_columns_wanted(&self, given: &ResidentInputs, keep: &[PropertyId], fill_weights: bool) -> Vec<bool> {
        let module = &self.module;
        if module.growth.is_some() {
            return vec![true; module.properties.len()];
        }
        let touched = analysis::host_touched_properties(module);
        (0..module.properties.len())
            .map(|i| {
                let p = PropertyId(i as u32);
                let property = &module.properties[i];
                touched[i]
                    || (module.outputs.contains(&p) && !keep.contains(&p))
                    || (module.property_inputs.contains(&p) && !given.properties.iter().any(|(q, _)| *q == p))
                    || (property.is_weight && fill_weights)
            })
            .collect()
    }

    /// Fails unless each of `given` is one of the program's input properties (or collections) on
    /// this device, and each of `keep` one of its outputs, each named once (types and lengths are
    /// checked against the run's columns).
    fn check_resident(&self, given: &ResidentInputs, keep: &[PropertyId]) -> Result<()> {
        let module = &self.module;
        let name = |p: PropertyId| &module.properties[p.index()].name;
        let properties = &given.properties;
        for (i, (p, column)) in properties.iter().enumerate() {
            if !module.property_inputs.contains(p) || properties[..i].iter().any(|(q, _)| q == p) {
                return Err(RuntimeError::Input(format!(
                    "`{}` is given as a resident column, but it is not an input property of `{}` (or is given twice)",
                    name(*p),
                    module.name
                )));
            }
            if !Arc::ptr_eq(&column.context, self.context()) {
                return Err(RuntimeError::Input(format!(
                    "the resident column given for `{}` lives on another device than the program",
                    name(*p)
                )));
            }
        }
        let collections = &given.collections;
        for (i, (c, table)) in collections.iter().enumerate() {
            let name = &module.collections[c.index()].name;
            if !module.collection_inputs.contains(c) || collections[..i].iter().any(|(d, _)| d == c) {
                return Err(RuntimeError::Input(format!(
                    "`{name}` is given as a resident table, but it is not an input collection of `{}` (or is given \
                     twice)",
                    module.name
                )));
            }
            if !Arc::ptr_eq(&table.context, self.context()) {
                return Err(RuntimeError::Input(format!(
                    "the resident table given for `{name}` lives on another device than the program"
                )));
            }
            let expected = Table::for_collection(module, *c);
            if table.leaves != expected.leaves() {
                return Err(RuntimeError::Input(format!(
                    "input collection `{name}` takes rows of ({}), the resident table given holds rows of ({})",
                    interp::leaf_names(module, expected.leaves()),
                    interp::leaf_names(module, &table.leaves)
                )));
            }
        }
        for (i, p) in keep.iter().enumerate() {
            if !module.outputs.contains(p) || keep[..i].contains(p) || module.properties[p.index()].is_weight {
                return Err(RuntimeError::Input(format!(
                    "`{}` is to stay on the device, but it is not an output of `{}` (or is named twice, or is the \
                     graph's weights, which stay with the resident graph)",
                    name(*p),
                    module.name
                )));
            }
        }
        Ok(())
    }
}

/// A property's column that a run left on the device ([`GpuProgram::run_resident`]'s `keep`),
/// for a later run on the same device to take as an input property, or to be copied back.
pub struct ResidentColumn {
    buffer: DeviceBuffer,
    kind: grail_graph::PropertyType,
    len: usize,
    context: Arc<CudaContext>,
}

impl std::fmt::Debug for ResidentColumn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResidentColumn").field("kind", &self.kind).field("len", &self.len).finish_non_exhaustive()
    }
}

impl ResidentColumn {
    /// The elements' type.
    pub fn kind(&self) -> grail_graph::PropertyType {
        self.kind
    }

    /// The number of elements (the graph's nodes, or edges for an edge property).
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Rows of a collection's elements on the device, stored as columns of unsigned 32-bit leaves
/// (column `j`'s value `i` at `j * rows + i`): what [`DeviceGraph::insert`] returns of the batch
/// it placed (rows of source, target, weight), for a run to take as an input collection whose
/// elements have those leaves (`node`, `u32`) without copying the batch up again
/// ([`ResidentInputs::collections`]).
pub struct ResidentTable {
    pub(crate) buffer: DeviceBuffer,
    pub(crate) leaves: Vec<grail_ir::Type>,
    pub(crate) rows: usize,
    pub(crate) context: Arc<CudaContext>,
}

impl std::fmt::Debug for ResidentTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResidentTable").field("leaves", &self.leaves).field("rows", &self.rows).finish_non_exhaustive()
    }
}

impl ResidentTable {
    /// The types of a row's leaves.
    pub fn leaves(&self) -> &[grail_ir::Type] {
        &self.leaves
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.rows
    }

    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }
}

/// Inputs of a run that are on the device already ([`GpuProgram::run_resident`]): input
/// properties a run before left there, input collections a resident graph's insertion uploaded.
/// They take no table among the run's host inputs.
#[derive(Debug, Default)]
pub struct ResidentInputs {
    pub properties: Vec<(PropertyId, ResidentColumn)>,
    pub collections: Vec<(CollectionId, ResidentTable)>,
}

/// Which copies of a column are current.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Current {
    Both,
    Host,
    Device,
}

/// A column's device copy and coherence state.
struct DeviceColumn {
    buffer: DeviceBuffer,
    current: Current,
    /// Element reads from host code since the column was last current on both sides.
    element_reads: u32,
}

/// A worklist on the device: `len` items of `cap`.
struct DeviceList {
    buffer: DeviceBuffer,
    cap: u64,
    len: u64,
}

impl DeviceList {
    fn with_capacity(context: &Arc<CudaContext>, cap: u64, what: &str) -> Result<DeviceList> {
        let cap = cap.max(MIN_WORKLIST);
        Ok(DeviceList { buffer: DeviceBuffer::new(context, cap as usize * 4, what)?, cap, len: 0 })
    }
}

/// Work queued right after an invocation's last launch ([`GpuRun::run_kernel_then`]), and
/// where what it found comes back.
type FollowUp<'f, 'a> = dyn FnMut(&mut GpuRun<'a>) -> Result<Found> + 'f;

/// Where the words a follow-up found come back.
enum Found {
    /// In a copy of its own.
    Fetched(buffer::Ticket),
    /// In the first `n` route words (`counter::ROUTES`), copied back with the counters.
    WithCounters(usize),
}

/// One run in progress.
pub(crate) struct GpuRun<'a> {
    program: &'a GpuProgram,
    module: &'a Module,
    context: Arc<CudaContext>,
    memory: Memory<'a>,
    params: Vec<Value>,
    out: &'a mut dyn Write,
    stats: Vec<KernelStats>,
    times: GpuTimes,
    columns: Vec<DeviceColumn>,
    /// Union-find parents (a column of u32) when the program has sets.
    sets: Option<DeviceColumn>,
    _props_table: DeviceBuffer,
    _params: DeviceBuffer,
    locks_and_claims: Vec<DeviceBuffer>,
    claims: Option<usize>,
    colls: DeviceCollections,
    /// The invocation's words: its counters, the exchange's route counts, its arguments (the
    /// layout of `counter`), set by one copy before an invocation's launches and read back by
    /// one after them (each copy is a driver call of microseconds, and a partitioned run's
    /// supersteps are each as long as a few of them).
    counters: DeviceBuffer,
    /// The output worklist's spill table, then the retry lists'.
    spill: DeviceBuffer,
    /// The pinned words an invocation's small copies go through, asynchronously.
    mailbox: buffer::Mailbox,
    /// The worklist stack; the last is current.
    worklists: Vec<DeviceList>,
    /// The next worklist being filled.
    spare: DeviceList,
    /// Retried items: the list being read and the one being written.
    retries: [DeviceList; 2],
    ctx: GpuCtx,
    invocation: u32,
    /// Checked mode's record of the first failed check (`ctx.checks`), read after every wait
    /// when the program was compiled with checks.
    checks: DeviceBuffer,
    /// On a part of a partitioned graph: every local node's global id (`ctx.global_ids`), and
    /// the index and word buffers of the gathers and scatters between parts (grown as needed).
    _part_ids: Option<DeviceBuffer>,
    /// On a part whose kernels read other nodes' out-degrees: its ghosts' (`ctx.ghost_degrees`).
    _ghost_degrees: Option<DeviceBuffer>,
    /// Worklist buffers no list uses now, kept for the next one instead of freed and
    /// allocated again (both synchronize the device, and on a partitioned run cost hundreds of
    /// microseconds a superstep): the largest, and at most [`SPARE_LISTS`] small ones.
    spare_lists: Vec<DeviceList>,
    /// The invocations an outlined worklist loop may make before it leaves with work left (0:
    /// until its worklist is empty); set while a part runs its loop between exchanges.
    region_budget: u32,
    exchange: Option<(DeviceBuffer, DeviceBuffer, usize)>,
    /// The device copies of the index lists that stay the same for the whole run
    /// (`Indices::Fixed`), by the host list's address and length.
    fixed: std::collections::HashMap<(usize, usize), DeviceBuffer>,
    /// The buffers that split a pushed worklist into owned nodes and ghosts.
    split: Option<SplitBuffers>,
    /// The words recorded for each fixed list and property (`PartRun::diff`), and the changes
    /// found with their count (grown as needed: changes, count, capacity).
    records: std::collections::HashMap<(usize, usize, u32), DeviceBuffer>,
    changes: Option<(DeviceBuffer, DeviceBuffer, usize)>,
    /// The inboxes other parts write their changes into (`PartRun::open_inbox`), and the
    /// owner ids and words a merge takes (`merge_buffers`: grown as needed, kept for the run).
    inboxes: Vec<DeviceBuffer>,
    unpacked: Option<(DeviceBuffer, DeviceBuffer, DeviceBuffer, usize)>,
    /// An invocation's start and end events, made on the first.
    events: Option<(Event, Event)>,
    /// Whether invocations time their kernels (CUDA events around each; a one-GPU run always
    /// does, its kernels' time being its algorithm's). A part of a partitioned run does only
    /// when asked (`MultiOptions::kernel_times`): recording and reading the events costs its
    /// host 4-8 us per superstep, about 2.6 of them before the kernel can start.
    time_kernels: bool,
    /// The items of the next invocation's first passes, where `invoke_over_list` gives them
    /// (a fixed list's device copy and length), instead of all nodes.
    listed: Option<(u64, u64)>,
    /// Each route's count of changes sent straight into its inbox (`PartRun::send_changes_to`).
    route_counts: Option<DeviceBuffer>,
    /// The owners' inboxes for this part's pushes, by part (`send_pushes_direct`).
    push_inboxes: Option<DeviceBuffer>,
    /// The pushed ghosts by owner part, and their counts (`PartRun::send_pushes`).
    routed: Option<(DeviceBuffer, DeviceBuffer)>,
    /// The buffers of a region that exchanges with the other parts on the devices
    /// (`executor/peers.rs`), its `grail_peers` address while it runs (0 otherwise), and
    /// whether it stopped because another part failed.
    peers: Option<peers::PeerBuffers>,
    /// The part's lists for those regions, copied before `main` (`PartRun::prepare_peer_lists`).
    peer_lists: Option<peers::PeerLists>,
    /// The grid of the region exchanging with the others (set with its buffers).
    region_grid: crate::multi::RegionGrid,
    region_peers: u64,
    region_stopped: bool,
    region_exchange: Duration,
    /// The allocation holding a region's state (spill tables, locals, reductions, counts,
    /// barrier words, `grail_region`), kept for the run's later regions.
    region_state: Option<DeviceBuffer>,
    /// Where the parts of a region exchanging on the devices wait for each other before
    /// launching it, this part's number and how many there are (taken when this part arrives).
    region_start: Option<(Arc<crate::multi::peer::StartLine>, usize, usize)>,
    /// A deferred superstep's buffers (`PartRun::invoke_deferred`), made on the first.
    deferred: Option<DeferredSends>,
    /// The changes merged from others' deferred supersteps (a device word, made on the first
    /// such merge, read when the run ends).
    merged_tally: Option<DeviceBuffer>,
    /// The kernel a deferred superstep queued, until a wait: a fault that wait finds may be its.
    unwaited: std::cell::Cell<Option<KernelId>>,
}

/// What a part's deferred supersteps count in: a word per property and send (zeroed before the
/// comparisons, read by the receivers' merges on their devices), and the event recorded after
/// the sends.
struct DeferredSends {
    counts: DeviceBuffer,
    words: usize,
    sent: Event,
}

/// What [`crate::multi::PartRun::take_pushed_ghosts`] works in on a GPU.
struct SplitBuffers {
    /// Where the owned items go; swapped with the worklist that was split.
    kept: DeviceList,
    /// The ghosts found (a word per ghost of the part at most), one flag word per ghost, and the
    /// two counts.
    ghosts: DeviceBuffer,
    flags: DeviceBuffer,
    counts: DeviceBuffer,
}

/// The run's collections' segment tables; dropping them frees the segments, through a kernel
/// (device-heap memory cannot be freed by the driver).
struct DeviceCollections {
    table: DeviceBuffer,
    count: u32,
    free: CudaFunction,
}

impl DeviceCollections {
    fn ptr(&self) -> u64 {
        self.table.ptr()
    }

    fn download<T: Copy>(&self, offset: usize, out: &mut [T]) -> Result<()> {
        self.table.download(offset, out)
    }

    fn upload<T: Copy>(&self, offset: usize, values: &[T]) -> Result<()> {
        self.table.upload(offset, values)
    }
}

impl DeviceCollections {
    /// A run's empty collections: over the segments the program's last run left when it left
    /// some, else without segments.
    fn for_run(program: &GpuProgram) -> Result<DeviceCollections> {
        let count = program.module.collections.len();
        let kept = std::mem::take(&mut *program.kept_segments.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
        if kept.len() == count && count > 0 {
            return DeviceCollections::over(program, &kept);
        }
        if !kept.is_empty() {
            // (Never: the same program's runs have the same collections.)
            drop(DeviceCollections::over(program, &kept)?);
        }
        let bytes = count * std::mem::size_of::<GpuColl>();
        let table = DeviceBuffer::zeroed(program.context(), bytes, "the collections' segment tables")?;
        Ok(DeviceCollections { table, count: count as u32, free: program.colls_free.clone() })
    }

    /// Empty collections over `segments` (which their drop frees).
    fn over(program: &GpuProgram, segments: &[[u64; GRAIL_SEGS]]) -> Result<DeviceCollections> {
        let colls: Vec<GpuColl> = segments.iter().map(|&segs| GpuColl { segs, ..GpuColl::default() }).collect();
        let table = DeviceBuffer::from_slice(program.context(), &colls, "the collections' segment tables")?;
        Ok(DeviceCollections { table, count: colls.len() as u32, free: program.colls_free.clone() })
    }

    /// The segments of a run that ended well, left to `program`'s next run; freed (by the drop)
    /// instead when a collection holds a segment past [`crate::host::KEEP_SEGMENT_MAX`] or
    /// failed, or the program keeps another run's already (two threads on one program).
    fn keep(mut self, program: &GpuProgram) {
        let mut kept = program.kept_segments.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if self.count == 0 || !kept.is_empty() {
            return;
        }
        let mut colls = vec![GpuColl::default(); self.count as usize];
        if self.table.download(0, &mut colls).is_err() {
            return;
        }
        const FAILED: u64 = 2;
        let small = colls.iter().all(|coll| {
            coll.failed == 0
                && coll
                    .segs
                    .iter()
                    .enumerate()
                    .all(|(s, &seg)| seg == 0 || (seg > FAILED && s <= crate::host::KEEP_SEGMENT_MAX))
        });
        if small {
            self.count = 0;
            *kept = colls.iter().map(|coll| coll.segs).collect();
        }
    }
}

impl Drop for DeviceCollections {
    fn drop(&mut self) {
        if self.count == 0 {
            return;
        }
        let (colls, count) = (self.table.ptr(), self.count);
        // SAFETY: (grail_coll *, uint32_t): one thread per collection. Errors are ignored: after a
        // kernel fault the context is gone, and its heap with it.
        let launched = unsafe { launch(&self.free, 1, 32, &mut [arg(&colls), arg(&count)]) };
        if launched.is_ok() {
            let _ = buffer::synchronize();
        }
    }
}

impl<'a> GpuRun<'a> {
    fn new(
        program: &'a GpuProgram,
        context: Arc<CudaContext>,
        memory: Memory<'a>,
        params: Vec<Value>,
        out: &'a mut dyn Write,
        graph: &DeviceGraph,
        host_has_weights: bool,
    ) -> Result<GpuRun<'a>> {
        let module = &program.module;
        let uploading = Instant::now();
        let c = &context;
        let out_csr = memory.out;
        let n = u64::from(out_csr.num_nodes());
        let optional = |buffer: &Option<DeviceBuffer>| buffer.as_ref().map_or(0, DeviceBuffer::ptr);
        let mut ctx = GpuCtx {
            items_cap: u64::MAX,
            num_nodes: n,
            // Edge ids are positions in the edge arrays: with room after rows, more than edges.
            num_edges: out_csr.edge_slots(),
            graph_nodes: n,
            graph_edges: out_csr.num_edges(),
            node_slots: n,
            out_offsets: graph.offsets.ptr(),
            out_ends: graph.ends_ptr(),
            out_targets: graph.targets.ptr(),
            in_edge_ids: optional(&graph.in_edge_ids),
            edge_sources: optional(&graph.edge_sources),
            ..GpuCtx::default()
        };
        if let Some((offsets, sources)) = &graph.reverse {
            ctx.in_offsets = offsets.ptr();
            // The reverse CSR is packed: a row ends where the next starts.
            ctx.in_ends = offsets.ptr() + 8;
            ctx.in_sources = sources.ptr();
        }
        let checks = DeviceBuffer::zeroed(c, 24, "the checks' record")?;
        ctx.checks = checks.ptr();
        let mut columns = Vec::with_capacity(memory.columns.len());
        for ((column, property), bound) in
            memory.columns.iter().zip(&module.properties).zip(&program.weights_bound_on(memory.out))
        {
            let (_, size) = column.raw_bytes();
            let what = format!("property `{}`", property.name);
            // A weight column nothing writes is the resident graph's weights themselves.
            if let (true, Some(weights)) = (*bound, &graph.weights) {
                let current = if host_has_weights { Current::Both } else { Current::Device };
                columns.push(DeviceColumn { buffer: DeviceBuffer::view(weights), current, element_reads: 0 });
                continue;
            }
            // Bool columns in whole words: the bool atomics work on the word. A column the host
            // did not fill holds zeros: the device's copy is zeroed in place, not copied up. A
            // property without a host column (`Memory::with_columns`) is current there alone.
            let len = memory.full_len(property);
            let bytes = (len * size).next_multiple_of(4);
            if property.is_weight && host_has_weights {
                let buffer = DeviceBuffer::new(c, bytes, &what)?;
                columns.push(DeviceColumn { buffer, current: Current::Host, element_reads: 0 });
            } else {
                let buffer = DeviceBuffer::zeroed(c, bytes, &what)?;
                let current = if column.len() == len { Current::Both } else { Current::Device };
                columns.push(DeviceColumn { buffer, current, element_reads: 0 });
            }
        }
        let table: Vec<u64> = columns.iter().map(|col| col.buffer.ptr()).collect();
        let props_table = DeviceBuffer::from_slice(c, &table, "the property table")?;
        ctx.props = props_table.ptr();
        let mut param_values = Vec::with_capacity(params.len());
        grail_values(&params, "parameters", &mut param_values)?;
        let params_buffer = DeviceBuffer::from_slice(c, &param_values, "the parameters")?;
        ctx.params = params_buffer.ptr();
        // The parents start as the identity on both sides (`Memory::with` makes the host's):
        // the device's made there, not copied up.
        let sets = match memory.sets.len {
            0 => None,
            len => {
                let buffer = DeviceBuffer::new(c, len * 4, "the union-find sets")?;
                let (ptr, total) = (buffer.ptr(), len as u64);
                let grid = total.div_ceil(u64::from(BLOCK)).clamp(1, 4096) as u32;
                // SAFETY: (uint32_t *sets, uint64_t slots, uint64_t n): the buffer holds n
                // parents, a set's `n` of them per node slot.
                unsafe { launch(&program.sets_identity, grid, BLOCK, &mut [arg(&ptr), arg(&n), arg(&total)])? };
                Some(DeviceColumn { buffer, current: Current::Both, element_reads: 0 })
            }
        };
        ctx.sets = sets.as_ref().map_or(0, |s| s.buffer.ptr());
        let mut locks_and_claims = Vec::new();
        let mut claims = None;
        if memory.locks.len > 0 {
            locks_and_claims.push(DeviceBuffer::zeroed(c, memory.locks.len * 4, "the lock words")?);
            ctx.locks = locks_and_claims[0].ptr();
        }
        if memory.claims.len > 0 {
            locks_and_claims.push(DeviceBuffer::zeroed(c, memory.claims.len * 4, "the claim words")?);
            claims = Some(locks_and_claims.len() - 1);
            ctx.claims = locks_and_claims[locks_and_claims.len() - 1].ptr();
        }
        let colls = DeviceCollections::for_run(program)?;
        ctx.colls = colls.ptr();
        let spill = DeviceBuffer::zeroed(c, 2 * GRAIL_SPILL_SEGS * 8, "the worklists' spill tables")?;
        let most_args = module.kernels.iter().map(|k| k.params as usize).max().unwrap_or(0);
        let leaves = module
            .collections
            .iter()
            .map(|coll| {
                let mut types = Vec::new();
                leaf_types(module, Type::Struct(coll.element), &mut types);
                types.len()
            })
            .max()
            .unwrap_or(0);
        let words = counter::ARGS + most_args.max(leaves).max(1);
        let counters = DeviceBuffer::zeroed(c, words * 8, "the kernels' counters and arguments")?;
        let spare = DeviceList::with_capacity(c, n + 1024, "a worklist")?;
        let retries = [
            DeviceList::with_capacity(c, MIN_WORKLIST, "a retry list")?,
            DeviceList::with_capacity(c, MIN_WORKLIST, "a retry list")?,
        ];
        let stats =
            module.kernels.iter().map(|k| KernelStats { name: k.name.clone(), ..KernelStats::default() }).collect();
        let mut run = GpuRun {
            program,
            module,
            context: context.clone(),
            memory,
            params,
            out,
            stats,
            times: GpuTimes::default(),
            columns,
            sets,
            _props_table: props_table,
            _params: params_buffer,
            locks_and_claims,
            claims,
            colls,
            counters,
            spill,
            mailbox: program.take_mailbox()?,
            worklists: vec![DeviceList { buffer: DeviceBuffer::new(c, 4, "a worklist")?, cap: 1, len: 0 }],
            spare,
            retries,
            ctx,
            invocation: 0,
            checks,
            _part_ids: None,
            _ghost_degrees: None,
            spare_lists: Vec::new(),
            exchange: None,
            fixed: std::collections::HashMap::new(),
            split: None,
            region_budget: 0,
            records: std::collections::HashMap::new(),
            changes: None,
            inboxes: Vec::new(),
            unpacked: None,
            events: None,
            time_kernels: true,
            listed: None,
            route_counts: None,
            push_inboxes: None,
            routed: None,
            peers: None,
            peer_lists: None,
            region_grid: crate::multi::RegionGrid::default(),
            region_peers: 0,
            region_stopped: false,
            region_exchange: Duration::ZERO,
            region_state: None,
            region_start: None,
            deferred: None,
            merged_tally: None,
            unwaited: std::cell::Cell::new(None),
        };
        run.times.upload += uploading.elapsed();
        Ok(run)
    }

    fn num_nodes(&self) -> u32 {
        self.memory.out.num_nodes()
    }

    fn device_name(&self) -> String {
        let info = self.program.device.info();
        format!("device {} ({})", info.ordinal, info.name)
    }

    /// Waits for the device; a fault is reported against `kernel`, and so is a run that a
    /// watchdog ends while the host waits (`crate::running_kernel`).
    fn wait(&self, kernel: &str) -> Result<()> {
        // A fault may be a deferred superstep's kernel's, queued before this wait's.
        let kernel = match self.unwaited.take() {
            Some(earlier) => std::borrow::Cow::Owned(format!(
                "{}` (queued without a wait) or `{kernel}",
                self.module.kernels[earlier.index()].name
            )),
            None => std::borrow::Cow::Borrowed(kernel),
        };
        let kernel: &str = &kernel;
        let running = crate::running::Running::enter(kernel.into());
        buffer::synchronize().map_err(|e| self.fault(kernel, e))?;
        drop(running);
        // Every copy queued through the mailbox is done: its words can be taken again (what came
        // back is read right after this wait, before anything more is queued).
        self.mailbox.settle();
        if self.program.device.checks() {
            let mut record = [0u64; 3];
            self.checks.download(0, &mut record)?;
            // An outlined region names the kernel whose step found the failure (word 2: its
            // index plus one).
            let kernel = match record[2] {
                0 => kernel,
                k => self.program.module.kernels.get(k as usize - 1).map_or(kernel, |k| k.name.as_str()),
            };
            if let Some(error) = failed_check(kernel, &self.device_name(), self.num_nodes(), [record[0], record[1]]) {
                return Err(error);
            }
        }
        Ok(())
    }

    fn fault(&self, kernel: &str, e: cudarc::driver::DriverError) -> RuntimeError {
        if buffer::is_kernel_fault(&e) {
            RuntimeError::Gpu(GpuError::KernelFault {
                kernel: kernel.to_string(),
                device: self.device_name(),
                message: buffer::fault_message(&e),
            })
        } else {
            call("cuCtxSynchronize", e)
        }
    }

    /// Uploads every column whose device copy is stale.
    fn columns_to_device(&mut self) -> Result<()> {
        let started = Instant::now();
        let mut moved = false;
        for (column, host) in self.columns.iter_mut().zip(&self.memory.columns) {
            if column.current == Current::Host {
                let (ptr, size) = host.raw_bytes();
                // SAFETY: the host column holds len * size bytes; no kernel runs.
                unsafe { column.buffer.upload_raw(0, ptr, host.len() * size)? };
                column.current = Current::Both;
                moved = true;
            }
        }
        if let Some(sets) = &mut self.sets
            && sets.current == Current::Host
        {
            let raw = self.memory.sets;
            // SAFETY: the parents array holds `len` u32s.
            unsafe { sets.buffer.upload_raw(0, raw.ptr.cast(), raw.len * 4)? };
            sets.current = Current::Both;
            moved = true;
        }
        if moved {
            self.times.upload += started.elapsed();
        }
        Ok(())
    }

    /// Copies back the output columns current only on the device, except those in `keep` (left
    /// on the device).
    fn download_outputs(&mut self, keep: &[PropertyId]) -> Result<()> {
        for p in 0..self.columns.len() {
            if self.module.outputs.iter().any(|o| o.index() == p) && !keep.iter().any(|k| k.index() == p) {
                self.column_to_host(p)?;
            }
        }
        Ok(())
    }

    /// Makes `buffer` (a column a run before left on the device) the device copy of column `p`,
    /// current there.
    fn adopt_column(&mut self, p: usize, buffer: DeviceBuffer) -> Result<()> {
        self._props_table.upload(p * 8, &[buffer.ptr()])?;
        self.columns[p] = DeviceColumn { buffer, current: Current::Device, element_reads: 0 };
        Ok(())
    }

    fn column_to_host(&mut self, p: usize) -> Result<()> {
        self.check_host_column(p)?;
        let column = &mut self.columns[p];
        if column.current == Current::Device {
            let host = self.memory.columns[p];
            let (ptr, size) = host.raw_bytes();
            let mut staging = self.program.staging.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            // SAFETY: the host column holds len * size bytes; no kernel runs.
            unsafe { column.buffer.download_staged(ptr, host.len() * size, &mut staging)? };
            column.current = Current::Both;
            column.element_reads = 0;
        }
        Ok(())
    }

    /// Fails unless column `p` has its host copy (see `GpuProgram::host_columns_wanted`: one
    /// without is never read by host code, so this is an internal inconsistency if it happens).
    fn check_host_column(&self, p: usize) -> Result<()> {
        let property = &self.module.properties[p];
        if self.memory.columns[p].len() != self.memory.full_len(property) {
            return Err(RuntimeError::program(format!(
                "property `{}` has no host copy in this run (it was to stay on the device)",
                property.name
            )));
        }
        Ok(())
    }

    /// Makes element `index` of column `p` current on the host (the whole column after many).
    fn element_to_host(&mut self, p: usize, index: usize) -> Result<()> {
        if self.columns[p].current != Current::Device {
            return Ok(());
        }
        self.check_host_column(p)?;
        let column = &mut self.columns[p];
        column.element_reads += 1;
        if column.element_reads > ELEMENT_READS_BEFORE_DOWNLOAD {
            return self.column_to_host(p);
        }
        let (ptr, size) = self.memory.columns[p].raw_bytes();
        // SAFETY: `index` is in range (the interpreter checked it); one element's bytes.
        unsafe { column.buffer.download_raw(index * size, ptr.add(index * size), size) }
    }

    /// After host code wrote element `index` of column `p` on the host: the device copy too.
    fn element_to_device(&mut self, p: usize, index: usize) -> Result<()> {
        let column = &mut self.columns[p];
        if column.current == Current::Host {
            return Ok(());
        }
        let (ptr, size) = self.memory.columns[p].raw_bytes();
        // SAFETY: as above.
        unsafe { column.buffer.upload_raw(index * size, ptr.add(index * size), size) }
    }

    /// Writes `values` into the counters at `slot`, ordered before the next launch.
    fn set_counters(&self, slot: usize, values: &[u64]) -> Result<()> {
        self.mailbox.send(self.counters.ptr() + 8 * slot as u64, values)
    }

    /// Queues the counters' copy back, to read after the next wait.
    fn fetch_counters(&self) -> Result<buffer::Ticket> {
        self.mailbox.fetch(self.counters.ptr(), counter::COUNT)
    }

    /// The counters a fetch brought back (after a wait).
    fn counters_of(&self, ticket: &buffer::Ticket) -> [u64; counter::COUNT] {
        let mut values = [0u64; counter::COUNT];
        values.copy_from_slice(&self.mailbox.read(ticket)[..counter::COUNT]);
        values
    }

    /// Where the kernels' arguments are.
    fn args_ptr(&self) -> u64 {
        self.counters.ptr() + 8 * counter::ARGS as u64
    }

    fn read_counters(&self) -> Result<[u64; counter::COUNT]> {
        let mut values = [0u64; counter::COUNT];
        self.counters.download(0, &mut values)?;
        Ok(values)
    }

    fn worklist_struct(list: &DeviceList, len: u64, overflow: u64, spill: u64) -> GpuWorklist {
        GpuWorklist { items: list.buffer.ptr(), len, cap: list.cap, overflow, spill }
    }

    /// The `grail_wl` of the output worklist and of the retry list being written.
    fn set_worklists(&mut self, retry_target: usize) {
        let base = self.counters.ptr();
        let spill = self.spill.ptr();
        self.ctx.pushes = Self::worklist_struct(
            &self.spare,
            base + 8 * counter::PUSHES as u64,
            base + 8 * counter::OVERFLOW as u64,
            spill,
        );
        self.ctx.retries = Self::worklist_struct(
            &self.retries[retry_target],
            base + 8 * counter::RETRIES as u64,
            base + 8 * counter::OVERFLOW as u64 + 4,
            spill + 8 * GRAIL_SPILL_SEGS as u64,
        );
    }

    /// After a launch whose pushes (or retries) spilled: grows the list to hold `len` items and
    /// moves the spilled ones into it (nothing is re-run). `flag` is the overflow word's value.
    fn absorb_spill(&mut self, retries: Option<usize>, len: u64, flag: u32, kernel: &str) -> Result<()> {
        if flag >= 2 {
            return Err(RuntimeError::OutOfMemory {
                what: format!(
                    "the device heap, while kernel `{kernel}` {} {len} items",
                    if retries.is_some() { "retried" } else { "pushed" }
                ),
            });
        }
        let wl = if retries.is_some() { self.ctx.retries } else { self.ctx.pushes };
        let cap = (len + len / 2).max(MIN_WORKLIST);
        let grown = DeviceList::with_capacity(&self.context, cap, "a worklist")?;
        let list = match retries {
            Some(i) => &mut self.retries[i],
            None => &mut self.spare,
        };
        grown.buffer.copy_from(&list.buffer, list.cap as usize * 4)?;
        let dest = grown.buffer.ptr();
        let spilled = len - list.cap;
        let grid = (spilled.div_ceil(u64::from(BLOCK))).min(4096) as u32;
        // SAFETY: (grail_wl, uint32_t *, uint64_t): `dest` holds `cap` >= len items and the
        // spill segments hold the items past the old capacity.
        unsafe { launch(&self.program.unspill, grid, BLOCK, &mut [arg(&wl), arg(&dest), arg(&len)])? };
        // SAFETY: (grail_wl), one thread.
        unsafe { launch(&self.program.free_spill, 1, 1, &mut [arg(&wl)])? };
        *list = DeviceList { len: list.len, ..grown };
        let slot = if retries.is_some() { 4 } else { 0 };
        self.counters.upload(counter::OVERFLOW * 8 + slot, &[0u32])?;
        self.wait(kernel)
    }

    /// Runs kernel `id` once; its reduction's value.
    /// Starts an invocation with arguments `args` and the reduction's first value `acc_bits`:
    /// numbers it, and sends the counters' first values (the route counts' zeros) and the
    /// arguments by one copy; where the kernel finds its arguments.
    fn start_invocation(&mut self, args: &[Value], acc_bits: u64) -> Result<u64> {
        let mut arg_values = Vec::with_capacity(args.len());
        grail_values(args, "kernel arguments", &mut arg_values)?;
        self.number_invocation()?;
        let mut words = [0u64; counter::ARGS].to_vec();
        words[counter::ACC] = acc_bits;
        // SAFETY: a grail_value is 8 bytes of plain data in every member.
        words.extend(arg_values.iter().map(|v| unsafe { v.u }));
        self.mailbox.send(self.counters.ptr(), &words)?;
        Ok(self.args_ptr())
    }

    /// Numbers the next invocation (`ctx.invocation`, which claims compare with), setting every
    /// claim word back to 0 when the numbers wrap around.
    fn number_invocation(&mut self) -> Result<()> {
        self.invocation = self.invocation.wrapping_add(1);
        if self.invocation == 0 {
            self.clear_claims()?;
            self.invocation = 1;
        }
        self.ctx.invocation = self.invocation;
        Ok(())
    }

    /// Queues the drain of the hubs a phase set aside (the hub executor), if it has one.
    fn drain_hubs(&self, phase: &PhaseCode, args_ptr: u64) -> Result<()> {
        if let Some((drain, drain_grid)) = &phase.hubs {
            // SAFETY: (grail_ctx, const grail_value *), the phase's context and arguments.
            unsafe { launch(drain, *drain_grid, self.module.opt.block, &mut [arg(&self.ctx), arg(&args_ptr)])? };
        }
        Ok(())
    }

    /// After an invocation of `code`: the columns (and sets) it writes are current on the device.
    fn written_on_device(&mut self, code: &KernelCode) {
        for (p, written) in code.effects.writes.iter().enumerate() {
            if *written {
                self.columns[p].current = Current::Device;
                self.columns[p].element_reads = 0;
            }
        }
        if code.effects.sets
            && let Some(sets) = &mut self.sets
        {
            sets.current = Current::Device;
            sets.element_reads = 0;
        }
    }

    fn run_kernel(&mut self, id: KernelId, args: &[Value]) -> Result<Option<Value>> {
        self.run_kernel_then(id, args, None).map(|(result, _)| result)
    }

    /// [`GpuRun::run_kernel`], and `then` queues more work right after the invocation's last
    /// launch, before its wait (only for a kernel of one phase that never retries, whose launch
    /// is the last); the words `then`'s fetch brought back come with the result.
    fn run_kernel_then(
        &mut self,
        id: KernelId,
        args: &[Value],
        mut then: Option<&mut FollowUp<'_, 'a>>,
    ) -> Result<(Option<Value>, Vec<u64>)> {
        // Taken first: an invocation that fails leaves no list for the next.
        let listed = self.listed.take();
        let program = self.program;
        let kernel = &program.module.kernels[id.index()];
        let code = &program.kernels[id.index()];
        // Where an invocation's host time goes, for `GRAIL_TRACE_STEPS` (multi::trace).
        let traced = crate::multi::trace::on().then(Instant::now);
        let mut laps = crate::multi::trace::Laps::start("invocation");
        self.columns_to_device()?;
        let columns_up = traced.map(|t| t.elapsed());
        let acc = kernel.reduction.map(|(op, ty)| identity(op, ty));
        // SAFETY: a grail_value is 8 bytes of plain data in every member.
        let acc_bits = acc.map_or(0, |v| unsafe { v.u });
        let args_ptr = self.start_invocation(args, acc_bits)?;
        laps.lap("words sent");
        self.ctx.acc = if acc.is_some() { self.counters.ptr() + 8 * counter::ACC as u64 } else { 0 };
        let input = match (listed, code.uses_worklist, self.worklists.last()) {
            (Some(list), _, _) => list,
            (None, true, Some(list)) => (list.buffer.ptr(), list.len),
            _ => (0, 0),
        };
        // Kernels over all nodes run over the owned ones (all of them, but on a part).
        let n = self.ctx.num_nodes;
        let m = self.memory.out.num_edges();
        // The invocation's timing events, kept between invocations (creating them costs), where
        // the run times its kernels.
        let events = match (self.time_kernels || traced.is_some(), self.events.take()) {
            (false, kept) => {
                self.events = kept;
                None
            }
            (true, Some(events)) => Some(events),
            (true, None) => Some((Event::new()?, Event::new()?)),
        };
        if let Some((start, _)) = &events {
            start.record()?;
        }
        laps.lap("start event");
        let mut items = 0u64;
        let mut retried_total = 0u64;
        let mut pushes = 0u64;
        // The counters as the last launch left them, and whether they are as the invocation set
        // them (the retry count and overflow words zero already).
        let mut counters = [0u64; counter::COUNT];
        counters[counter::ACC] = acc_bits;
        let mut counters_fresh = true;
        let mut following = Vec::new();
        let mut waited = Duration::ZERO;
        for phase in &code.phases {
            // A listed invocation's passes run over its list, as a retry pass over its items.
            let mut retrying = listed.is_some();
            let mut retry_read = 0usize;
            self.ctx.items = input.0;
            self.ctx.item_count = input.1;
            loop {
                let retry_write = 1 - retry_read;
                self.ctx.retrying = u32::from(retrying);
                self.set_worklists(retry_write);
                // The retry count and both overflow words in one copy: the pushes' word is 0 here
                // (cleared when the invocation starts and after its spill is absorbed).
                if !std::mem::take(&mut counters_fresh) {
                    self.set_counters(counter::RETRIES, &[0, 0])?;
                }
                let size = match (phase.size, retrying) {
                    (_, true) | (PhaseSize::Worklist, false) => self.ctx.item_count,
                    (PhaseSize::AllNodes, false) => n,
                    (PhaseSize::AllEdges, false) => m,
                    (PhaseSize::Computed, false) => {
                        let out = self.counters.ptr() + 8 * counter::SIZE as u64;
                        // SAFETY: (grail_ctx, const grail_value *, uint64_t *), one thread.
                        unsafe { launch(&phase.size_kernel, 1, 1, &mut [arg(&self.ctx), arg(&args_ptr), arg(&out)])? };
                        let fetched = self.fetch_counters()?;
                        self.wait(&kernel.name)?;
                        self.counters_of(&fetched)[counter::SIZE]
                    }
                };
                items += size;
                if size > 0 {
                    let block = self.module.opt.block;
                    let grid = size.div_ceil(u64::from(block)).min(u64::from(phase.max_grid)) as u32;
                    // SAFETY: (grail_ctx, const grail_value *, uint64_t): the context points at this
                    // run's live buffers, `args_ptr` at one value per kernel parameter.
                    laps.lap("before the launch");
                    unsafe { launch(&phase.run, grid, block, &mut [arg(&self.ctx), arg(&args_ptr), arg(&size)])? };
                    laps.lap("the launch");
                    self.drain_hubs(phase, args_ptr)?;
                }
                // Recorded after every launch: the last one recorded is the invocation's end.
                if let Some((_, end)) = &events {
                    end.record()?;
                }
                laps.lap("end event");
                let followed = match then.take() {
                    Some(queue) => Some(queue(self)?),
                    None => None,
                };
                laps.lap("follow-up");
                let fetched = match followed {
                    Some(Found::WithCounters(n)) => self.mailbox.fetch(self.counters.ptr(), counter::COUNT + n)?,
                    _ => self.fetch_counters()?,
                };
                laps.lap("fetch");
                let waiting = traced.map(|_| Instant::now());
                self.wait(&kernel.name)?;
                if let Some(waiting) = waiting {
                    waited += waiting.elapsed();
                }
                laps.lap("wait");
                counters = self.counters_of(&fetched);
                following = match followed {
                    Some(Found::Fetched(ticket)) => self.mailbox.read(&ticket),
                    Some(Found::WithCounters(n)) => {
                        self.mailbox.read(&fetched)[counter::COUNT..counter::COUNT + n].to_vec()
                    }
                    None => following,
                };
                pushes = counters[counter::PUSHES];
                let (push_flag, retry_flag) =
                    (counters[counter::OVERFLOW] as u32, (counters[counter::OVERFLOW] >> 32) as u32);
                if push_flag != 0 {
                    self.absorb_spill(None, pushes, push_flag, &kernel.name)?;
                }
                let retried = counters[counter::RETRIES];
                if retry_flag != 0 {
                    self.absorb_spill(Some(retry_write), retried, retry_flag, &kernel.name)?;
                }
                if retried == 0 {
                    break;
                }
                retried_total += retried;
                self.retries[retry_write].len = retried;
                self.ctx.items = self.retries[retry_write].buffer.ptr();
                self.ctx.item_count = retried;
                retry_read = retry_write;
                retrying = true;
            }
        }
        if code.phases.is_empty() {
            if let Some((_, end)) = &events {
                end.record()?;
            }
            self.wait(&kernel.name)?;
        }
        let launched = traced.map(|t| t.elapsed());
        let gpu_ms = match &events {
            Some((start, end)) => start.elapsed_ms(end)?,
            None => 0.0,
        };
        laps.lap("event time");
        if events.is_some() {
            self.events = events;
        }
        self.ctx.items = 0;
        self.ctx.item_count = 0;
        self.ctx.retrying = 0;
        if code.uses_worklist {
            let capacity = u64::from(self.num_nodes()) + 1024;
            let fresh = match self.worklists.pop() {
                Some(list) if list.cap >= capacity => list,
                popped => {
                    if let Some(small) = popped {
                        self.keep_list(small);
                    }
                    self.take_list(capacity)?
                }
            };
            let mut done = std::mem::replace(&mut self.spare, fresh);
            done.len = pushes;
            self.worklists.push(done);
        }
        self.check_collections()?;
        self.written_on_device(code);
        if let (Some(t), Some(up), Some(launched)) = (traced, columns_up, launched) {
            crate::multi::trace::invocation(
                &kernel.name,
                items,
                up,
                launched - up,
                waited,
                t.elapsed() - launched,
                gpu_ms,
            );
        }
        let result = match kernel.reduction {
            Some((_, ty)) => {
                // As the last launch left it (nothing has run since).
                let bits = counters[counter::ACC];
                let value = Value::from_grail(accumulator_type(ty), GrailValue { u: bits })
                    .ok_or_else(|| RuntimeError::Unsupported(format!("a reduction over {ty}")))?;
                Some(ops::cast(&value, ty).map_err(RuntimeError::program)?)
            }
            None => None,
        };
        let stats = &mut self.stats[id.index()];
        stats.invocations += 1;
        stats.items += items;
        stats.pushes += pushes;
        stats.retries += retried_total;
        let gpu_time = Duration::from_secs_f64(f64::from(gpu_ms) / 1e3);
        stats.time += gpu_time;
        self.times.kernels += gpu_time;
        Ok((result, following))
    }

    /// Sets every claim word back to 0 (when invocation numbers wrap around).
    fn clear_claims(&mut self) -> Result<()> {
        if let Some(i) = self.claims {
            self.locks_and_claims[i].clear()?;
        }
        for code in &self.program.collections {
            // SAFETY: (grail_ctx), grid-stride over the allocated segments.
            unsafe { launch(&code.clear_claims, 1024, BLOCK, &mut [arg(&self.ctx)])? };
        }
        self.wait("(clearing claims)")
    }

    fn collection_tables(&self) -> Result<Vec<GpuColl>> {
        let mut colls = vec![GpuColl::default(); self.module.collections.len()];
        self.colls.download(0, &mut colls)?;
        Ok(colls)
    }

    /// Fails if generated code could not grow a collection.
    fn check_collections(&self) -> Result<()> {
        if self.module.collections.is_empty() {
            return Ok(());
        }
        for (coll, decl) in self.collection_tables()?.iter().zip(&self.module.collections) {
            match coll.failed {
                0 => {}
                1 => {
                    return Err(RuntimeError::OutOfMemory {
                        what: format!("the device heap, for collection `{}`", decl.name),
                    });
                }
                _ => {
                    return Err(RuntimeError::program(format!(
                        "collection `{}` is full: it holds at most {} elements",
                        decl.name,
                        u32::MAX - 1
                    )));
                }
            }
        }
        Ok(())
    }

    /// Fails unless input collection `id` is still empty: it is filled once, before `main`.
    fn check_unfilled(&self, id: CollectionId) -> Result<()> {
        if self.coll_len(id)?.0 != 0 {
            return Err(RuntimeError::Input(format!(
                "input collection `{}` is filled once, before `main` starts",
                self.module.collections[id.index()].name
            )));
        }
        Ok(())
    }

    /// Collection `id` filled with the `count` rows of leaf words in `rows` (on the device),
    /// through its generated `put` kernel.
    fn put_rows(&mut self, id: CollectionId, count: u64, rows: &DeviceBuffer) -> Result<()> {
        let (begin, ptr) = (0u64, rows.ptr());
        let grid = count.div_ceil(u64::from(BLOCK)).min(4096) as u32;
        let put = &self.program.collections[id.index()].put;
        // SAFETY: (grail_ctx, uint64_t, uint64_t, const grail_value *): `rows` holds count rows of leaves.
        unsafe { launch(put, grid, BLOCK, &mut [arg(&self.ctx), arg(&begin), arg(&count), arg(&ptr)])? };
        self.wait("(filling an input collection)")?;
        // The elements are in place: the collection holds them.
        self.colls.upload(id.index() * std::mem::size_of::<GpuColl>(), &[count])?;
        self.check_collections()
    }

    /// Input collection `id` filled from a table already on the device (its leaves checked by
    /// `check_resident`): its columns widened into rows of words there, then put.
    fn collection_fill_resident(&mut self, id: CollectionId, table: &ResidentTable) -> Result<()> {
        if table.rows == 0 {
            return Ok(());
        }
        self.check_unfilled(id)?;
        let what = format!("input collection `{}`", self.module.collections[id.index()].name);
        let (count, leaves) = (table.rows as u64, table.leaves.len() as u32);
        let rows = DeviceBuffer::new(&self.context, table.rows * table.leaves.len() * 8, &what)?;
        let (columns, words) = (table.buffer.ptr(), rows.ptr());
        let grid = (count * u64::from(leaves)).div_ceil(u64::from(BLOCK)).clamp(1, 4096) as u32;
        // SAFETY: (const uint32_t *columns, uint64_t rows, uint32_t leaves, uint64_t *words): the
        // table holds `leaves` columns of `count` values, `words` room for count * leaves.
        unsafe {
            launch(
                &self.program.rows_from_columns,
                grid,
                BLOCK,
                &mut [arg(&columns), arg(&count), arg(&leaves), arg(&words)],
            )?
        };
        self.put_rows(id, count, &rows)
    }

    /// The slots of a collection (every element added, removed or not) and how many were removed.
    fn coll_len(&self, id: CollectionId) -> Result<(u32, u32)> {
        let mut words = [0u64; 2];
        self.colls.download(id.index() * std::mem::size_of::<GpuColl>(), &mut words)?;
        Ok((words[0].min(u64::from(u32::MAX) - 1) as u32, words[1] as u32))
    }

    /// Every slot of collection `id` (removed ones too), read back through its generated get
    /// kernel (the leaves straight into the table's words), and which were removed.
    fn read_slots(&mut self, id: CollectionId) -> Result<(Table, Vec<bool>)> {
        let mut table = Table::for_collection(self.module, id);
        let width = table.leaves().len();
        let len = self.coll_len(id)?.0 as usize;
        // At least a word and a byte: a device buffer is never empty.
        let flat = DeviceBuffer::new(&self.context, (len * width * 8).max(8), "a collection's output")?;
        let gone = DeviceBuffer::new(&self.context, len.max(1), "a collection's output")?;
        if len > 0 {
            let (begin, count, dest, flags) = (0u64, len as u64, flat.ptr(), gone.ptr());
            let grid = count.div_ceil(u64::from(BLOCK)).min(4096) as u32;
            let get = &self.program.collections[id.index()].get;
            // SAFETY: (grail_ctx, uint64_t, uint64_t, grail_value *, uint8_t *): `flat` holds
            // len * width values and `gone` len bytes.
            unsafe {
                launch(get, grid, BLOCK, &mut [arg(&self.ctx), arg(&begin), arg(&count), arg(&dest), arg(&flags)])?
            };
            self.wait("(reading a collection)")?;
        }
        let mut words = vec![0u64; len * width];
        {
            // Through the pinned staging buffers: a mesh's triangles come back as hundreds of MB.
            let mut staging = self.program.staging.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            // SAFETY: `words` holds len * width u64s, as many bytes as are copied.
            unsafe { flat.download_staged(words.as_mut_ptr().cast(), words.len() * 8, &mut staging)? };
        }
        let mut removed = vec![0u8; len];
        gone.download(0, &mut removed)?;
        table.set_words(len, words);
        Ok((table, removed.into_iter().map(|flag| flag != 0).collect()))
    }
}

impl Machine for GpuRun<'_> {
    fn memory(&self) -> &Memory<'_> {
        &self.memory
    }

    fn params(&self) -> &[Value] {
        &self.params
    }

    fn print(&mut self, line: &str) -> Result<()> {
        self.out.write_all(line.as_bytes()).map_err(RuntimeError::Output)
    }

    fn read_property(&mut self, property: PropertyId, index: usize) -> Result<Value> {
        self.element_to_host(property.index(), index)?;
        let declared = &self.module.properties[property.index()];
        self.memory.columns[property.index()].read(declared.ty, index).ok_or_else(|| {
            RuntimeError::program(format!("cannot read element {index} of property `{}`", declared.name))
        })
    }

    fn write_property(&mut self, property: PropertyId, index: usize, value: &Value) -> Result<bool> {
        let column: ColumnRef = self.memory.columns[property.index()];
        if !column.write(index, value) {
            return Ok(false);
        }
        self.element_to_device(property.index(), index)?;
        Ok(true)
    }

    fn parent(&mut self, index: usize) -> Result<u32> {
        let raw = self.memory.sets;
        if let Some(sets) = &mut self.sets
            && sets.current == Current::Device
        {
            // SAFETY: the parents array holds `len` u32s.
            unsafe { sets.buffer.download_raw(0, raw.ptr.cast(), raw.len * 4)? };
            sets.current = Current::Both;
        }
        raw.get(index).ok_or_else(|| RuntimeError::program("a union-find parent out of range"))
    }

    fn set_parent(&mut self, index: usize, parent: u32) -> Result<()> {
        self.parent(index)?;
        let raw = self.memory.sets;
        raw.set(index, parent);
        if let Some(sets) = &self.sets
            && sets.current == Current::Both
        {
            sets.buffer.upload(index * 4, &[parent])?;
        }
        Ok(())
    }

    fn invoke(&mut self, kernel: KernelId, args: &[Value]) -> Result<Option<Value>> {
        self.run_kernel(kernel, args)
    }

    fn collection_add(&mut self, id: CollectionId, value: &Value) -> Result<Value> {
        let mut flat = Vec::new();
        flatten(value, &mut flat)?;
        self.counters.upload(8 * counter::ARGS, &flat)?;
        let (args_ptr, handle) = (self.args_ptr(), self.counters.ptr() + 8 * counter::SIZE as u64);
        let add = &self.program.collections[id.index()].add;
        // SAFETY: (grail_ctx, const grail_value *, uint32_t *), one thread; `args` holds the leaves.
        unsafe { launch(add, 1, 1, &mut [arg(&self.ctx), arg(&args_ptr), arg(&handle)])? };
        self.wait("(adding to a collection)")?;
        self.check_collections()?;
        let handle = self.read_counters()?[counter::SIZE] as u32;
        Ok(Value::Element(handle))
    }

    fn collection_read(&mut self, id: CollectionId) -> Result<(Table, Vec<bool>)> {
        self.read_slots(id)
    }

    fn collection_clear(&mut self, id: CollectionId) -> Result<()> {
        // The one collection's segments, freed by a device thread (device-heap memory).
        let (coll, count) = (self.colls.ptr() + (id.index() * std::mem::size_of::<GpuColl>()) as u64, 1u32);
        // SAFETY: (grail_coll *, uint32_t): one collection of this run's table.
        unsafe { launch(&self.program.colls_free, 1, 32, &mut [arg(&coll), arg(&count)])? };
        self.wait("(clearing a collection)")
    }

    /// Copies the rows up at once and has the device place them, row `i` at slot `i`.
    fn fill_property(&mut self, property: PropertyId, table: &Table) -> Result<()> {
        // The host's copy is filled whole, then copied up before the next kernel.
        self.column_to_host(property.index())?;
        if !self.memory.columns[property.index()].fill_from(table) {
            return Err(interp::unfit_input(self.module, property));
        }
        self.columns[property.index()].current = Current::Host;
        Ok(())
    }

    fn collection_fill(&mut self, id: CollectionId, table: &Table) -> Result<()> {
        if table.is_empty() {
            return Ok(());
        }
        self.check_unfilled(id)?;
        let what = format!("input collection `{}`", self.module.collections[id.index()].name);
        // A struct without fields has rows of no words: one word stands in for the buffer.
        let words = if table.words().is_empty() { &[0u64][..] } else { table.words() };
        let buffer = {
            let mut staging = self.program.staging.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            DeviceBuffer::from_slice_staged(&self.context, words, &what, &mut staging)?
        };
        self.put_rows(id, table.len() as u64, &buffer)
    }

    fn collection_len(&mut self, id: CollectionId) -> Result<u32> {
        let (slots, removed) = self.coll_len(id)?;
        // Wrapping, as on the CPU: see `grail_ir::GraphGrowth`.
        Ok(slots.wrapping_sub(removed))
    }

    fn push_worklist(&mut self, items: Vec<u32>) -> Result<()> {
        let list = self.take_list(items.len() as u64)?;
        if !items.is_empty() {
            list.buffer.upload(0, &items)?;
        }
        self.worklists.push(DeviceList { len: items.len() as u64, ..list });
        Ok(())
    }

    fn pop_worklist(&mut self) {
        if let Some(list) = self.worklists.pop() {
            self.keep_list(list);
        }
    }

    fn worklist_is_empty(&mut self) -> Result<bool> {
        Ok(self.worklists.last().is_none_or(|list| list.len == 0))
    }

    fn run_outlined(&mut self, region: OutlineId, locals: &mut [Value]) -> Result<bool> {
        self.run_outlined_region(region, locals)
    }
}

impl GpuProgram {
    /// `graph` (a part's local graph) made resident on this program's GPU with what the program
    /// reads of it.
    pub(crate) fn part_graph(&self, graph: &Graph) -> Result<DeviceGraph> {
        self.device.context().bind_to_thread().map_err(|e| call("cuCtxSetCurrent", e))?;
        let mut resident = DeviceGraph::new(&self.device, graph)?;
        resident.prepare(&self.module, graph, &self.edge_sources)?;
        Ok(resident)
    }

    /// A run of this program on one part of a partitioned graph (`crate::multi`), `resident`
    /// being [`GpuProgram::part_graph`] of `graph`; as [`crate::cpu::CpuProgram`]'s part runs.
    pub(crate) fn part_run<'a>(
        &'a self,
        graph: &'a Graph,
        resident: &DeviceGraph,
        params: Vec<Value>,
        shape: &crate::cpu::executor::PartShape<'_>,
        time_kernels: bool,
        out: &'a mut dyn Write,
    ) -> Result<GpuRun<'a>> {
        let context = self.device.context().clone();
        context.bind_to_thread().map_err(|e| call("cuCtxSetCurrent", e))?;
        let bound = self.weights_bound_on(graph.out());
        let fill_weights = self.module.properties.iter().zip(&bound).any(|(p, b)| p.is_weight && !b);
        let memory = Memory::with(&self.module, graph, HostArrays { weights: fill_weights, graph_arrays: false })?;
        let mut run = GpuRun::new(self, context, memory, params, out, resident, fill_weights)?;
        run.time_kernels = time_kernels;
        run.ctx.num_nodes = shape.owned.into();
        run.ctx.graph_nodes = shape.graph_nodes;
        run.ctx.graph_edges = shape.graph_edges;
        let ids = DeviceBuffer::from_slice(&run.context, shape.global_ids, "the part's global node ids")?;
        run.ctx.global_ids = ids.ptr();
        run._part_ids = Some(ids);
        if !shape.ghost_degrees.is_empty() {
            let degrees =
                DeviceBuffer::from_slice(&run.context, shape.ghost_degrees, "the part's ghosts' out-degrees")?;
            run.ctx.ghost_degrees = degrees.ptr();
            run._ghost_degrees = Some(degrees);
        }
        Ok(run)
    }
}

/// Whether every send of `sends` that carries something goes straight into its inbox (is among
/// `direct`, [`GpuRun::direct_sends`]).
fn every_send_direct(sends: &[crate::multi::Send], direct: &[(usize, u64)]) -> bool {
    sends
        .iter()
        .enumerate()
        .all(|(i, (range, to))| to.is_none() || range.is_empty() || direct.iter().any(|&(j, _)| j == i))
}

/// The most changes (all senders' together) a part merges by one launch of
/// `grail_merge_changes_segs`; more go by a launch per sender. Measured on four H200s: PageRank
/// on road24 in ordered parts (thousands of changes a superstep) 8.18 -> 7.84 ms with the one
/// launch and untimed parts together; on R-MAT 2^24 (millions) 42.6 -> 43.3-43.8 ms with the
/// one launch alone, the compare-and-swap costing more than the launches it saves.
const MERGE_ONE_LAUNCH_MOST: usize = 1 << 16;

impl GpuRun<'_> {
    /// What the merge kernels take of `property`'s column: its device address, its elements'
    /// size, its type's code and `merge`'s operator code.
    fn merge_operands(&self, property: PropertyId, merge: crate::multi::Merge) -> (u64, u32, u32, u32) {
        let declared = &self.module.properties[property.index()];
        let kind = crate::multi::type_code(crate::host::value::column_type(declared.ty).expect("a scalar column"));
        let (_, size) = self.memory.columns[property.index()].raw_bytes();
        (self.columns[property.index()].buffer.ptr(), size as u32, kind, merge.code())
    }

    /// One sender's changes merged (`PartRun::merge_changes`).
    #[allow(clippy::too_many_arguments)]
    fn merge_one(
        &mut self,
        property: PropertyId,
        merge: crate::multi::Merge,
        inbox: crate::multi::Share,
        count: usize,
        list: &[u32],
        start: usize,
        record: bool,
    ) -> Result<()> {
        if count == 0 {
            return Ok(());
        }
        let mut laps = crate::multi::trace::Laps::start("merge");
        self.columns_to_device()?;
        let at = self.fixed_list(list)? + 4 * start as u64;
        laps.lap("lists");
        let record = if record { self.record(list, property)? + 8 * start as u64 } else { 0 };
        if !matches!(merge, crate::multi::Merge::Custom(_)) {
            let (column, size, kind, op) = self.merge_operands(property, merge);
            let (changes, n64) = (self.inboxes[inbox.inbox].ptr() + inbox.offset as u64, count as u64);
            let grid = n64.div_ceil(u64::from(BLOCK)).min(4096) as u32;
            // SAFETY: (void *column, uint32_t size, uint32_t kind, uint32_t op, const uint32_t *at,
            // const grail_change *changes, uint64_t n, uint64_t *record): the inbox holds
            // `count` changes, each position within the list's range from `start`, `at` and
            // `record` point into the list's copies; a null record is not written. Not waited
            // for: the part's next launch follows it in order (`PartRun::settle`).
            self.columns[property.index()].current = Current::Device;
            laps.lap("arguments");
            let launched = unsafe {
                launch(
                    &self.program.merge_changes,
                    grid,
                    BLOCK,
                    &mut [
                        arg(&column),
                        arg(&size),
                        arg(&kind),
                        arg(&op),
                        arg(&at),
                        arg(&changes),
                        arg(&n64),
                        arg(&record),
                    ],
                )
            };
            laps.lap("launch");
            return launched;
        }
        let [at_out, before, after] = self.merge_buffers(count)?;
        let (changes, n64) = (self.inboxes[inbox.inbox].ptr() + inbox.offset as u64, count as u64);
        let (_, size) = self.memory.columns[property.index()].raw_bytes();
        let size = size as u32;
        let grid = n64.div_ceil(u64::from(BLOCK)).min(4096) as u32;
        // SAFETY: (const grail_change *changes, uint64_t n, const uint32_t *at, uint32_t size,
        // uint32_t *at_out, uint64_t *before, uint64_t *after, uint64_t *record): the inbox
        // holds `count` changes, each position within the list's range from `start` (as the
        // sender's range has the same length), `at` and `record` point into the list's copies,
        // the outputs hold `count` entries; a null record is not written.
        unsafe {
            launch(
                &self.program.unpack_changes,
                grid,
                BLOCK,
                &mut [
                    arg(&changes),
                    arg(&n64),
                    arg(&at),
                    arg(&size),
                    arg(&at_out),
                    arg(&before),
                    arg(&after),
                    arg(&record),
                ],
            )?
        };
        // Not waited for: the part's next launch follows in order (`PartRun::settle`).
        self.launch_merge(property, merge, at_out, count, before, after)
    }

    /// Up to [`GRAIL_MERGE_SEGS`] senders' changes of a built-in merge of 4- or 8-byte elements
    /// merged by one launch (`grail_merge_changes_segs`: compare-and-swap, since two senders
    /// may change one node).
    fn merge_senders(
        &mut self,
        property: PropertyId,
        merge: crate::multi::Merge,
        senders: &[crate::multi::Received],
        list: &[u32],
        record: bool,
    ) -> Result<()> {
        if let [one] = senders {
            return self.merge_one(property, merge, one.share, one.count, list, one.start, record);
        }
        self.columns_to_device()?;
        let at = self.fixed_list(list)?;
        let records = if record { self.record(list, property)? } else { 0 };
        let mut segs = GpuMergeSegs::default();
        for (seg, r) in segs.seg.iter_mut().zip(senders) {
            *seg = GpuMergeSeg {
                at: at + 4 * r.start as u64,
                changes: self.inboxes[r.share.inbox].ptr() + r.share.offset as u64,
                record: if record { records + 8 * r.start as u64 } else { 0 },
                n: r.count as u64,
            };
        }
        let total: u64 = senders.iter().map(|r| r.count as u64).sum();
        let (column, size, kind, op) = self.merge_operands(property, merge);
        self.columns[property.index()].current = Current::Device;
        let grid = total.div_ceil(u64::from(BLOCK)).min(4096) as u32;
        // SAFETY: (void *column, uint32_t size, uint32_t kind, uint32_t op, grail_merge_segs segs,
        // uint64_t total): each segment's inbox holds its `n` changes, positions within its
        // sender's range of the list from `at`, `record` (or null) indexed as `at`; `total` is
        // their sum; 4- or 8-byte elements. Not waited for, as `merge_one`.
        unsafe {
            launch(
                &self.program.merge_changes_segs,
                grid,
                BLOCK,
                &mut [arg(&column), arg(&size), arg(&kind), arg(&op), arg(&segs), arg(&total)],
            )
        }
    }

    /// The exchange buffers, holding at least `n` indices and words.
    fn exchange(&mut self, n: usize) -> Result<(u64, u64)> {
        if self.exchange.as_ref().is_none_or(|(_, _, cap)| *cap < n) {
            let cap = n.max(1024).next_power_of_two();
            let at = DeviceBuffer::new(&self.context, cap * 4, "the parts' exchange indices")?;
            let words = DeviceBuffer::new(&self.context, cap * 8, "the parts' exchange words")?;
            self.exchange = Some((at, words, cap));
        }
        let (at, words, _) = self.exchange.as_ref().expect("made above");
        Ok((at.ptr(), words.ptr()))
    }

    /// The buffers a merge of `n` changes takes its owner ids, words before and words after
    /// from (grown as needed, kept for the run).
    fn merge_buffers(&mut self, n: usize) -> Result<[u64; 3]> {
        if self.unpacked.as_ref().is_none_or(|(_, _, _, cap)| *cap < n) {
            // A merge queued earlier may still read the buffers being replaced.
            self.wait("the exchange between parts")?;
            let cap = n.max(1024).next_power_of_two();
            let what = "the changes of an inbox, unpacked";
            self.unpacked = Some((
                DeviceBuffer::new(&self.context, cap * 4, what)?,
                DeviceBuffer::new(&self.context, cap * 8, what)?,
                DeviceBuffer::new(&self.context, cap * 8, what)?,
                cap,
            ));
        }
        let (at, before, after, _) = self.unpacked.as_ref().expect("made above");
        Ok([at.ptr(), before.ptr(), after.ptr()])
    }

    /// The device copy of a fixed list (made on first use).
    fn fixed_list(&mut self, list: &[u32]) -> Result<u64> {
        let key = (list.as_ptr() as usize, list.len());
        if !self.fixed.contains_key(&key) {
            let copy = DeviceBuffer::from_slice(&self.context, list, "the parts' exchange indices")?;
            self.fixed.insert(key, copy);
        }
        Ok(self.fixed[&key].ptr())
    }

    /// The words recorded for a fixed list and property (zeros when first used).
    fn record(&mut self, list: &[u32], property: PropertyId) -> Result<u64> {
        let key = (list.as_ptr() as usize, list.len(), property.0);
        if !self.records.contains_key(&key) {
            let words = DeviceBuffer::zeroed(&self.context, list.len() * 8, "the parts' recorded words")?;
            self.records.insert(key, words);
        }
        Ok(self.records[&key].ptr())
    }

    /// Copies column `p`'s elements at `at` into `words` (the gather kernel).
    fn gather_words(&mut self, p: usize, at: &[u32], words: &mut [u64]) -> Result<()> {
        if at.is_empty() {
            return Ok(());
        }
        self.columns_to_device()?;
        let (mut at_ptr, words_ptr) = self.exchange(at.len())?;
        match self.fixed.get(&(at.as_ptr() as usize, at.len())) {
            // A fixed list is on the device already.
            Some(copy) => at_ptr = copy.ptr(),
            None => self.exchange.as_ref().expect("made above").0.upload(0, at)?,
        }
        self.launch_gather(p, at_ptr, at.len() as u64, words_ptr)?;
        self.wait("the exchange between parts")?;
        self.exchange.as_ref().expect("made above").1.download(0, words)
    }

    /// Queues the gather kernel: column `p`'s elements at the `n` local ids at `at` into the `n`
    /// words at `words` (device pointers).
    fn launch_gather(&self, p: usize, at: u64, n: u64, words: u64) -> Result<()> {
        let (_, size) = self.memory.columns[p].raw_bytes();
        let (column, size) = (self.columns[p].buffer.ptr(), size as u32);
        let grid = n.div_ceil(u64::from(BLOCK)).min(4096) as u32;
        // SAFETY: (const void *column, uint32_t size, const uint32_t *at, uint64_t n, uint64_t
        // *words): the column holds the part's elements of `size` bytes, the callers' indices
        // are local nodes, and their buffers hold `n` entries.
        unsafe {
            launch(
                &self.program.gather_words,
                grid,
                BLOCK,
                &mut [arg(&column), arg(&size), arg(&at), arg(&n), arg(&words)],
            )
        }
    }
}

impl GpuRun<'_> {
    /// An empty worklist of at least `cap` items: a kept one (the smallest that fits), or a
    /// new one.
    fn take_list(&mut self, cap: u64) -> Result<DeviceList> {
        let fitting = (0..self.spare_lists.len())
            .filter(|&i| self.spare_lists[i].cap >= cap)
            .min_by_key(|&i| self.spare_lists[i].cap);
        match fitting {
            Some(i) => Ok(DeviceList { len: 0, ..self.spare_lists.swap_remove(i) }),
            None => DeviceList::with_capacity(&self.context, cap, "a worklist"),
        }
    }

    /// Keeps a worklist buffer no list uses for [`GpuRun::take_list`]. Of the large ones (past
    /// [`MIN_WORKLIST`] items) only the largest stays, so that what is kept never costs more
    /// than one more full worklist of device memory; of the small ones, [`SPARE_LISTS`].
    fn keep_list(&mut self, list: DeviceList) {
        let large = |l: &DeviceList| l.cap > MIN_WORKLIST;
        if large(&list)
            && let Some(i) = self.spare_lists.iter().position(large)
        {
            if self.spare_lists[i].cap < list.cap {
                self.spare_lists[i] = list;
            }
            return;
        }
        if !large(&list) && self.spare_lists.iter().filter(|l| !large(l)).count() >= SPARE_LISTS {
            return;
        }
        self.spare_lists.push(list);
    }

    /// The buffers that split a worklist of `len` items between owned nodes and ghosts, made
    /// (or grown) on first use.
    fn split_buffers(&mut self, len: u64) -> Result<()> {
        let owned = self.ctx.num_nodes as u32;
        let slots = self.num_nodes();
        let c = &self.context;
        let capacity = len.max(u64::from(slots) + 1024);
        if self.split.is_none() {
            let ghosts = ((slots - owned) as usize).max(1);
            self.split = Some(SplitBuffers {
                kept: DeviceList::with_capacity(c, capacity, "a worklist")?,
                ghosts: DeviceBuffer::new(c, ghosts * 4, "the pushed ghosts")?,
                flags: DeviceBuffer::zeroed(c, ghosts * 4, "the pushed ghosts' flags")?,
                counts: DeviceBuffer::new(c, 16, "the split's counts")?,
            });
        }
        let split = self.split.as_mut().expect("made above");
        if split.kept.cap < len {
            split.kept = DeviceList::with_capacity(c, capacity, "a worklist")?;
        }
        Ok(())
    }

    /// The current worklist's length when it has items to split between owned nodes and
    /// ghosts (the split buffers made ready for it); `None` when there is nothing to split.
    fn split_ready(&mut self) -> Result<Option<u64>> {
        let len = self.worklists.last().map_or(0, |list| list.len);
        if len == 0 || self.num_nodes() == self.ctx.num_nodes as u32 {
            return Ok(None);
        }
        self.split_buffers(len)?;
        Ok(Some(len))
    }

    /// The current worklist's items, and the split buffers' flags, kept list, ghosts and counts.
    fn split_pointers(&self) -> [u64; 5] {
        let split = self.split.as_ref().expect("made by split_ready");
        let current = self.worklists.last().expect("a worklist with items");
        [current.buffer.ptr(), split.flags.ptr(), split.kept.buffer.ptr(), split.ghosts.ptr(), split.counts.ptr()]
    }

    /// Splits the current worklist: the owned items stay, the ghosts (each once) are left in
    /// the split buffers' list, their flags set; how many ghosts.
    fn split_worklist(&mut self) -> Result<u64> {
        let owned = self.ctx.num_nodes as u32;
        let Some(len) = self.split_ready()? else { return Ok(0) };
        self.split.as_ref().expect("made by split_ready").counts.clear()?;
        let [items, flags, kept, ghosts, counts] = self.split_pointers();
        let grid = len.div_ceil(u64::from(BLOCK)).min(4096) as u32;
        // SAFETY: (const uint32_t *items, uint64_t n, uint32_t owned, uint32_t *flags, uint32_t *kept,
        // uint32_t *ghosts, unsigned long long *counts): `kept` holds `len` items, `ghosts` and
        // `flags` a word per ghost, and every pushed item is a local node (checked kernels).
        unsafe {
            launch(
                &self.program.split_pushes,
                grid,
                BLOCK,
                &mut [arg(&items), arg(&len), arg(&owned), arg(&flags), arg(&kept), arg(&ghosts), arg(&counts)],
            )?
        };
        buffer::synchronize().map_err(|e| call("cuCtxSynchronize", e))?;
        let mut lengths = [0u64; 2];
        let split = self.split.as_mut().expect("made by split_ready");
        split.counts.download(0, &mut lengths)?;
        let current = self.worklists.last_mut().expect("a worklist with items");
        std::mem::swap(current, &mut split.kept);
        current.len = lengths[0];
        Ok(lengths[1])
    }

    /// The sends (by index) whose inbox lies on a device this one writes to directly, with
    /// the inbox's address; empty ranges left out.
    fn direct_sends(&self, sends: &[crate::multi::Send]) -> Vec<(usize, u64)> {
        sends
            .iter()
            .enumerate()
            .filter(|(_, (range, _))| !range.is_empty())
            .filter_map(|(i, (_, to))| match to {
                Some(crate::multi::Place::Device { ptr, context, .. }) if buffer::reaches(&self.context, context) => {
                    Some((i, *ptr))
                }
                _ => None,
            })
            .collect()
    }

    /// Queues, for each of `direct` (sends by index, with their inboxes), the comparison of
    /// property `property` at its range of the fixed list `list`, writing the changes straight
    /// into the inbox and counting them in its own word; then the counts' copy back (a word per
    /// send, read after the next wait).
    fn queue_changes(
        &mut self,
        property: PropertyId,
        list: &[u32],
        sends: &[crate::multi::Send],
        direct: &[(usize, u64)],
    ) -> Result<buffer::Ticket> {
        if self.route_counts.as_ref().is_none_or(|b| b.bytes() < 8 * sends.len()) {
            self.route_counts = Some(DeviceBuffer::new(&self.context, 8 * sends.len(), "the changes' counts")?);
        }
        let counts = self.route_counts.as_ref().expect("made above").ptr();
        buffer::clear_async(counts, 8 * sends.len())?;
        self.launch_comparisons(property, list, sends, direct, counts)?;
        self.mailbox.fetch(counts, sends.len())
    }

    /// Queues the comparisons of [`GpuRun::queue_changes`], counting in the words at `counts`
    /// (a word per send, zero).
    fn launch_comparisons(
        &mut self,
        property: PropertyId,
        list: &[u32],
        sends: &[crate::multi::Send],
        direct: &[(usize, u64)],
        counts: u64,
    ) -> Result<()> {
        self.columns_to_device()?;
        let (_, size) = self.memory.columns[property.index()].raw_bytes();
        let (column, size) = (self.columns[property.index()].buffer.ptr(), size as u32);
        let at_list = self.fixed_list(list)?;
        let records = self.record(list, property)?;
        for &(i, inbox) in direct {
            let range = &sends[i].0;
            let (at, record) = (at_list + 4 * range.start as u64, records + 8 * range.start as u64);
            let (n64, count) = (range.len() as u64, counts + 8 * i as u64);
            let grid = n64.div_ceil(u64::from(BLOCK)).min(4096) as u32;
            // SAFETY: as in `find_changes`, with `out` the inbox on a device this one reaches
            // (peer access, or this device), which holds a change per position of the range,
            // and `count` one word of `route_counts`.
            unsafe {
                launch(
                    &self.program.diff_words,
                    grid,
                    BLOCK,
                    &mut [arg(&column), arg(&size), arg(&at), arg(&n64), arg(&record), arg(&inbox), arg(&count)],
                )?
            };
        }
        Ok(())
    }

    /// By part, the inbox for part `part`'s pushes that `routes` lead to (0 for `part` itself
    /// and where a route has none), when this device reaches every one of them.
    fn reachable_push_inboxes(&self, part: usize, routes: &[crate::multi::Route]) -> Option<Vec<u64>> {
        let mut inboxes = vec![0u64; routes.len() + 1];
        for (i, route) in routes.iter().enumerate() {
            match &route.to_owner_pushes {
                None => {}
                Some(crate::multi::Place::Device { ptr, context, .. }) if buffer::reaches(&self.context, context) => {
                    inboxes[crate::multi::exchange::peer(part, i)] = *ptr;
                }
                Some(_) => return None,
            }
        }
        Some(inboxes)
    }

    /// [`crate::multi::PartRun::send_pushes`] where every owner's inbox is reachable: the
    /// worklist split and each ghost written into its owner's inbox by one kernel, one wait.
    fn send_pushes_direct(
        &mut self,
        map: crate::multi::GhostMap<'_>,
        routes: &[crate::multi::Route],
        inboxes: &[u64],
    ) -> Result<Vec<usize>> {
        let mut sent = vec![0usize; routes.len()];
        let owned = self.ctx.num_nodes as u32;
        let Some(len) = self.split_ready()? else { return Ok(sent) };
        let k = inboxes.len();
        let (owner_of, position, at_owner) =
            (self.fixed_list(map.owner_of)?, self.fixed_list(map.position)?, self.fixed_list(map.at_owner)?);
        if self.push_inboxes.as_ref().is_none_or(|b| b.bytes() < 8 * k) {
            self.push_inboxes = Some(DeviceBuffer::new(&self.context, 8 * k, "the owners' inboxes")?);
        }
        let inboxes_ptr = self.push_inboxes.as_ref().expect("made above").ptr();
        self.mailbox.send(inboxes_ptr, inboxes)?;
        let split = self.split.as_mut().expect("made by split_ready");
        if split.counts.bytes() < 8 * (2 + k) {
            split.counts = DeviceBuffer::new(&self.context, 8 * (2 + k), "the split's counts")?;
        }
        buffer::clear_async(split.counts.ptr(), 8 * (2 + k))?;
        let [items, flags, kept, ghosts, counts] = self.split_pointers();
        let grid = len.div_ceil(u64::from(BLOCK)).min(4096) as u32;
        // SAFETY: (const uint32_t *items, uint64_t n, uint32_t owned, uint32_t *flags, uint32_t
        // *kept, uint32_t *ghosts, const uint32_t *owner_of, const uint32_t *position, const
        // uint32_t *at_owner, uint32_t *const *inboxes, unsigned long long *counts): as
        // grail_split_pushes and grail_route_pushes; each owner's inbox (on a device this one
        // reaches) holds a word per ghost of this part that it owns; `counts` holds 2 + k words.
        unsafe {
            launch(
                &self.program.split_route_pushes,
                grid,
                BLOCK,
                &mut [
                    arg(&items),
                    arg(&len),
                    arg(&owned),
                    arg(&flags),
                    arg(&kept),
                    arg(&ghosts),
                    arg(&owner_of),
                    arg(&position),
                    arg(&at_owner),
                    arg(&inboxes_ptr),
                    arg(&counts),
                ],
            )?
        };
        let fetched = self.mailbox.fetch(counts, 2 + k)?;
        self.wait("the split of a worklist between parts")?;
        let counts = self.mailbox.read(&fetched);
        let split = self.split.as_mut().expect("made by split_ready");
        let current = self.worklists.last_mut().expect("a worklist with items");
        std::mem::swap(current, &mut split.kept);
        current.len = counts[0];
        // Queued: the next split follows it in order.
        self.clear_ghost_flags(counts[1])?;
        for (i, sent) in sent.iter_mut().enumerate() {
            *sent = counts[2 + crate::multi::exchange::peer(map.part, i)] as usize;
        }
        Ok(sent)
    }

    /// Clears the flags of the `n` ghosts in the split buffers' list, for the next split.
    fn clear_ghost_flags(&mut self, n: u64) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        let owned = self.ctx.num_nodes as u32;
        let split = self.split.as_ref().expect("split buffers");
        let (flags, ghosts) = (split.flags.ptr(), split.ghosts.ptr());
        let grid = n.div_ceil(u64::from(BLOCK)).min(4096) as u32;
        // SAFETY: (uint32_t *flags, const uint32_t *ghosts, uint64_t n, uint32_t owned): the
        // ghosts just found, each below the part's slots.
        unsafe {
            launch(&self.program.clear_ghost_flags, grid, BLOCK, &mut [arg(&flags), arg(&ghosts), arg(&n), arg(&owned)])
        }
    }

    /// The `n` ghosts a split or a loop run on the device found (in the split buffers' list),
    /// their flags cleared for the next time.
    fn collect_ghosts(&mut self, n: u64) -> Result<Vec<u32>> {
        let split = self.split.as_ref().expect("split buffers");
        let mut found = vec![0u32; n as usize];
        split.ghosts.download(0, &mut found)?;
        self.clear_ghost_flags(n)?;
        self.wait("the split of a worklist between parts")?;
        Ok(found)
    }
}

impl GpuRun<'_> {
    /// Compares the elements at positions `range` of the fixed list `list` with the words
    /// recorded for them, records the current ones, and leaves the changed ones in
    /// `self.changes` (positions counted from `range.start`); how many changed.
    fn find_changes(&mut self, property: PropertyId, list: &[u32], range: std::ops::Range<usize>) -> Result<usize> {
        if range.is_empty() {
            return Ok(0);
        }
        self.columns_to_device()?;
        let at = self.fixed_list(list)? + 4 * range.start as u64;
        let record = self.record(list, property)? + 8 * range.start as u64;
        let n = range.len();
        if self.changes.as_ref().is_none_or(|(_, _, cap)| *cap < n) {
            let cap = n.next_power_of_two();
            let size = std::mem::size_of::<crate::multi::Change>();
            let changes = DeviceBuffer::new(&self.context, cap * size, "the parts' changed words")?;
            let count = DeviceBuffer::new(&self.context, 8, "the parts' changed count")?;
            self.changes = Some((changes, count, cap));
        }
        let (changes, count, _) = self.changes.as_ref().expect("made above");
        count.clear()?;
        let (_, size) = self.memory.columns[property.index()].raw_bytes();
        let (column, size, n64) = (self.columns[property.index()].buffer.ptr(), size as u32, n as u64);
        let (out_ptr, count_ptr) = (changes.ptr(), count.ptr());
        let grid = n64.div_ceil(u64::from(BLOCK)).min(4096) as u32;
        // SAFETY: (const void *column, uint32_t size, const uint32_t *at, uint64_t n, uint64_t
        // *record, grail_change *out, unsigned long long *count): `at` and `record` point at
        // `n` entries of the list's copies, `out` has room for `n` changes, every index is a
        // local id of the part.
        unsafe {
            launch(
                &self.program.diff_words,
                grid,
                BLOCK,
                &mut [arg(&column), arg(&size), arg(&at), arg(&n64), arg(&record), arg(&out_ptr), arg(&count_ptr)],
            )?
        };
        self.wait("the exchange between parts")?;
        let mut found = [0u64];
        self.changes.as_ref().expect("made above").1.download(0, &mut found)?;
        Ok(found[0] as usize)
    }

    /// Merges `n` changed ghosts into column `property`: `at` (owner ids), `before` and
    /// `after` are device buffers of `n` entries; `before` is left holding the new words.
    fn launch_merge(
        &mut self,
        property: PropertyId,
        merge: crate::multi::Merge,
        at: u64,
        n: usize,
        before: u64,
        after: u64,
    ) -> Result<()> {
        let (column, size, kind, op) = self.merge_operands(property, merge);
        let n64 = n as u64;
        let grid = n64.div_ceil(u64::from(BLOCK)).min(4096) as u32;
        match merge {
            // SAFETY: (grail_ctx, void *column, uint32_t size, const uint32_t *at, uint64_t n,
            // uint64_t *before, const uint64_t *after), as grail_merge_words's below, with this
            // run's context for the program's update function.
            crate::multi::Merge::Custom(i) => unsafe {
                let ctx = self.ctx;
                launch(
                    &self.program.merge_custom[i as usize],
                    grid,
                    BLOCK,
                    &mut [arg(&ctx), arg(&column), arg(&size), arg(&at), arg(&n64), arg(&before), arg(&after)],
                )?
            },
            // SAFETY: (void *column, uint32_t size, uint32_t kind, uint32_t op, const uint32_t *at,
            // uint64_t n, uint64_t *before, const uint64_t *after): `n` distinct local ids of the
            // part, and `n` words in each buffer.
            _ => unsafe {
                launch(
                    &self.program.merge_words,
                    grid,
                    BLOCK,
                    &mut [
                        arg(&column),
                        arg(&size),
                        arg(&kind),
                        arg(&op),
                        arg(&at),
                        arg(&n64),
                        arg(&before),
                        arg(&after),
                    ],
                )?
            },
        }
        self.columns[property.index()].current = Current::Device;
        Ok(())
    }
}

impl crate::multi::PartRun for GpuRun<'_> {
    fn bind(&self) -> Result<()> {
        self.context.bind_to_thread().map_err(|e| call("cuCtxSetCurrent", e))
    }

    fn gather(&mut self, property: PropertyId, at: crate::multi::Indices<'_>, out: &mut Vec<u64>) -> Result<()> {
        use crate::multi::Indices;
        out.clear();
        match at {
            Indices::List(list) => {
                out.resize(list.len(), 0);
                self.gather_words(property.index(), list, out)
            }
            Indices::Range(start, end) => {
                self.column_to_host(property.index())?;
                self.memory.columns[property.index()].words_into(start as usize, end as usize, out);
                Ok(())
            }
        }
    }

    fn diff(&mut self, property: PropertyId, list: &[u32], out: &mut Vec<crate::multi::Change>) -> Result<()> {
        let found = self.find_changes(property, list, 0..list.len())?;
        if found > 0 {
            let (changes, _, _) = self.changes.as_ref().expect("made by find_changes");
            let start = out.len();
            out.resize(start + found, crate::multi::Change::default());
            changes.download(0, &mut out[start..])?;
        }
        Ok(())
    }

    fn put(&mut self, property: PropertyId, list: &[u32], positions: &[u32], words: &[u64]) -> Result<()> {
        if positions.is_empty() {
            return Ok(());
        }
        self.columns_to_device()?;
        let at = self.fixed_list(list)?;
        let record = self.record(list, property)?;
        let n = positions.len();
        let (positions_ptr, words_ptr) = self.exchange(n)?;
        let (positions_buffer, words_buffer, _) = self.exchange.as_ref().expect("made above");
        positions_buffer.upload(0, positions)?;
        words_buffer.upload(0, words)?;
        let (_, size) = self.memory.columns[property.index()].raw_bytes();
        let (column, size, n64) = (self.columns[property.index()].buffer.ptr(), size as u32, n as u64);
        let grid = n64.div_ceil(u64::from(BLOCK)).min(4096) as u32;
        // SAFETY: (void *column, uint32_t size, const uint32_t *at, const uint32_t *positions,
        // uint64_t n, const uint64_t *words, uint64_t *record): every position is below the
        // list's length, whose entries are local ids of the part.
        unsafe {
            launch(
                &self.program.put_words,
                grid,
                BLOCK,
                &mut [
                    arg(&column),
                    arg(&size),
                    arg(&at),
                    arg(&positions_ptr),
                    arg(&n64),
                    arg(&words_ptr),
                    arg(&record),
                ],
            )?
        };
        self.wait("the exchange between parts")?;
        self.columns[property.index()].current = Current::Device;
        Ok(())
    }

    fn merge_in(
        &mut self,
        property: PropertyId,
        merge: crate::multi::Merge,
        at: &[u32],
        before: &mut [u64],
        after: &[u64],
    ) -> Result<()> {
        if at.is_empty() {
            return Ok(());
        }
        self.columns_to_device()?;
        let n = at.len();
        // The run's merge buffers, not fresh ones: an allocation costs more than the merge once
        // peer access maps it into every GPU.
        let [at_ptr, before_ptr, after_ptr] = self.merge_buffers(n)?;
        let (at_buffer, before_buffer, after_buffer, _) = self.unpacked.as_ref().expect("made by merge_buffers");
        at_buffer.upload(0, at)?;
        before_buffer.upload(0, before)?;
        after_buffer.upload(0, after)?;
        self.launch_merge(property, merge, at_ptr, n, before_ptr, after_ptr)?;
        self.wait("the exchange between parts")?;
        self.unpacked.as_ref().expect("made by merge_buffers").1.download(0, before)?;
        Ok(())
    }

    fn open_inbox(&mut self, bytes: usize) -> Result<(usize, crate::multi::Place)> {
        let inbox = DeviceBuffer::new(&self.context, bytes, "an inbox for what another part sends")?;
        let place = crate::multi::Place::Device { ptr: inbox.ptr(), bytes, context: self.context.clone() };
        self.inboxes.push(inbox);
        Ok((self.inboxes.len() - 1, place))
    }

    fn send_pushes(&mut self, map: crate::multi::GhostMap<'_>, routes: &[crate::multi::Route]) -> Result<Vec<usize>> {
        if let Some(inboxes) = self.reachable_push_inboxes(map.part, routes) {
            return self.send_pushes_direct(map, routes, &inboxes);
        }
        let mut sent = vec![0usize; routes.len()];
        let n = self.split_worklist()?;
        if n == 0 {
            return Ok(sent);
        }
        let k = routes.len() + 1;
        let owned = self.ctx.num_nodes as u32;
        let (owner_of, position) = (self.fixed_list(map.owner_of)?, self.fixed_list(map.position)?);
        let (at_owner, starts) = (self.fixed_list(map.at_owner)?, self.fixed_list(map.starts)?);
        if self.routed.is_none() {
            let what = "the pushed ghosts by owner";
            self.routed = Some((
                DeviceBuffer::new(&self.context, map.at_owner.len().max(1) * 4, what)?,
                DeviceBuffer::new(&self.context, k * 8, what)?,
            ));
        }
        let (out, counts) = self.routed.as_ref().expect("made above");
        counts.clear()?;
        let (out, counts_ptr) = (out.ptr(), counts.ptr());
        let ghosts = self.split.as_ref().expect("made by split_worklist").ghosts.ptr();
        let grid = n.div_ceil(u64::from(BLOCK)).min(4096) as u32;
        // SAFETY: (const uint32_t *ghosts, uint64_t n, uint32_t owned, const uint32_t *owner_of,
        // const uint32_t *position, const uint32_t *at_owner, const uint32_t *starts, uint32_t
        // *out, unsigned long long *counts): `n` distinct ghosts of the part; the maps' copies
        // cover every ghost; `out` holds a word per ghost and `counts` one per part.
        unsafe {
            launch(
                &self.program.route_pushes,
                grid,
                BLOCK,
                &mut [
                    arg(&ghosts),
                    arg(&n),
                    arg(&owned),
                    arg(&owner_of),
                    arg(&position),
                    arg(&at_owner),
                    arg(&starts),
                    arg(&out),
                    arg(&counts_ptr),
                ],
            )?
        };
        self.clear_ghost_flags(n)?;
        let mut by_part = vec![0u64; k];
        self.routed.as_ref().expect("made above").1.download(0, &mut by_part)?;
        for (i, route) in routes.iter().enumerate() {
            let o = crate::multi::exchange::peer(map.part, i);
            let count = by_part[o] as usize;
            if count == 0 {
                continue;
            }
            let to = route.to_owner_pushes.as_ref().expect("a part pushes only ghosts it holds");
            super::buffer::copy_to_place(&self.context, out + 4 * u64::from(map.starts[o]), count * 4, to)?;
            sent[i] = count;
        }
        Ok(sent)
    }

    fn take_pushes(&mut self, inbox: usize, count: usize) -> Result<()> {
        let n = count as u64;
        let Some(list) = self.worklists.last_mut() else { return Ok(()) };
        if list.cap < list.len + n {
            let grown = DeviceList::with_capacity(&self.context, (list.len + n) * 2, "a worklist")?;
            grown.buffer.copy_from(&list.buffer, list.len as usize * 4)?;
            *list = DeviceList { len: list.len, ..grown };
        }
        let bytes = count * 4;
        // SAFETY: the inbox holds `count` node ids; the worklist has room for them after its
        // items. Queued on the null stream: the part's next launch follows it (`settle`).
        unsafe {
            cudarc::driver::result::memcpy_dtod_async(
                list.buffer.ptr() + list.len * 4,
                self.inboxes[inbox].ptr(),
                bytes,
                std::ptr::null_mut(),
            )
        }
        .map_err(|e| call("cuMemcpyDtoDAsync", e))?;
        list.len += n;
        Ok(())
    }

    fn send_changes(
        &mut self,
        property: PropertyId,
        list: &[u32],
        range: std::ops::Range<usize>,
        to: &crate::multi::Place,
    ) -> Result<usize> {
        let found = self.find_changes(property, list, range)?;
        if found > 0 {
            let (changes, _, _) = self.changes.as_ref().expect("made by find_changes");
            super::buffer::copy_to_place(
                &self.context,
                changes.ptr(),
                found * std::mem::size_of::<crate::multi::Change>(),
                to,
            )?;
        }
        Ok(found)
    }

    fn invoke_over_slots(&mut self, kernel: KernelId, args: &[Value]) -> Result<Option<Value>> {
        let owned = self.ctx.num_nodes;
        self.ctx.num_nodes = self.ctx.node_slots;
        let result = self.run_kernel(kernel, args);
        self.ctx.num_nodes = owned;
        result
    }

    fn invoke_over_list(&mut self, kernel: KernelId, args: &[Value], list: &[u32]) -> Result<Option<Value>> {
        let items = if list.is_empty() { 0 } else { self.fixed_list(list)? };
        self.listed = Some((items, list.len() as u64));
        self.run_kernel(kernel, args)
    }

    fn invoke_over_list_sending(
        &mut self,
        kernel: KernelId,
        args: &[Value],
        over: &[u32],
        diff: &[PropertyId],
        list: &[u32],
        sends: &[Vec<crate::multi::Send>],
    ) -> Result<(Option<Value>, Vec<Vec<usize>>)> {
        let items = if over.is_empty() { 0 } else { self.fixed_list(over)? };
        self.listed = Some((items, over.len() as u64));
        crate::multi::PartRun::invoke_sending(self, kernel, args, diff, list, sends)
    }

    fn record_current(&mut self, property: PropertyId, list: &[u32]) -> Result<()> {
        if list.is_empty() {
            return Ok(());
        }
        self.columns_to_device()?;
        // The fixed list's copy holds its local ids, its record a word per entry.
        let (at, record) = (self.fixed_list(list)?, self.record(list, property)?);
        self.launch_gather(property.index(), at, list.len() as u64, record)?;
        self.wait("recording the words a list's nodes hold")
    }

    fn prepare_exchange(&mut self, parts: usize, lists: &[&[u32]], records: &[(&[u32], PropertyId)]) -> Result<()> {
        for list in lists.iter().filter(|l| !l.is_empty()) {
            self.fixed_list(list)?;
        }
        // The small buffers the direct exchanges count in and address the owners' inboxes by,
        // at their full size now: one replaced in a superstep would be freed there.
        if self.route_counts.as_ref().is_none_or(|b| b.bytes() < 8 * parts) {
            self.route_counts = Some(DeviceBuffer::new(&self.context, 8 * parts, "the changes' counts")?);
        }
        if self.push_inboxes.as_ref().is_none_or(|b| b.bytes() < 8 * parts) {
            self.push_inboxes = Some(DeviceBuffer::new(&self.context, 8 * parts, "the owners' inboxes")?);
        }
        for &(list, property) in records.iter().filter(|(l, _)| !l.is_empty()) {
            self.record(list, property)?;
        }
        // The worklists' and the split's buffers, which the first supersteps would make.
        if self.module.kernels.iter().any(|k| k.uses_worklist()) {
            let capacity = u64::from(self.num_nodes()) + 1024;
            if let [only] = self.worklists.as_mut_slice()
                && only.len == 0
                && only.cap < capacity
            {
                *only = DeviceList::with_capacity(&self.context, capacity, "a worklist")?;
            }
            let reserve = DeviceList::with_capacity(&self.context, capacity, "a worklist")?;
            self.keep_list(reserve);
            if self.num_nodes() > self.ctx.num_nodes as u32 {
                self.split_buffers(0)?;
                let split = self.split.as_mut().expect("made above");
                if split.counts.bytes() < 8 * (2 + parts) {
                    split.counts = DeviceBuffer::new(&self.context, 8 * (2 + parts), "the split's counts")?;
                }
            }
        }
        Ok(())
    }

    fn send_changes_to(
        &mut self,
        property: PropertyId,
        list: &[u32],
        sends: &[crate::multi::Send],
    ) -> Result<Vec<usize>> {
        let started = std::time::Instant::now();
        let direct = self.direct_sends(sends);
        let mut sent = vec![0usize; sends.len()];
        if !direct.is_empty() {
            let fetched = self.queue_changes(property, list, sends, &direct)?;
            self.wait("the exchange between parts")?;
            let found = self.mailbox.read(&fetched);
            for &(i, _) in &direct {
                sent[i] = found[i] as usize;
            }
        }
        for (i, (range, to)) in sends.iter().enumerate() {
            if let Some(to) = to.as_ref().filter(|_| !direct.iter().any(|&(j, _)| j == i)) {
                sent[i] = self.send_changes(property, list, range.clone(), to)?;
            }
        }
        if crate::multi::trace::on() {
            let copied = sends.iter().filter(|(_, to)| to.is_some()).count() - direct.len();
            let name = &self.module.properties[property.index()].name;
            crate::multi::trace::changes_sent(name, direct.len(), copied, sent.iter().sum(), started.elapsed());
        }
        Ok(sent)
    }

    fn invoke_sending(
        &mut self,
        kernel: KernelId,
        args: &[Value],
        diff: &[PropertyId],
        list: &[u32],
        sends: &[Vec<crate::multi::Send>],
    ) -> Result<(Option<Value>, Vec<Vec<usize>>)> {
        // The comparisons go right after the kernel's one launch where nothing can follow it (no
        // retry pass) and one property's changes all go straight into inboxes: one wait for
        // both. Otherwise the kernel, then each property's sends.
        let declared = &self.module.kernels[kernel.index()];
        let one_launch =
            self.program.kernels[kernel.index()].phases.len() == 1 && !grail_ir::opt::backoff::retries(declared);
        let followed = match (diff, sends) {
            ([property], [sends]) if one_launch => {
                let direct = self.direct_sends(sends);
                (every_send_direct(sends, &direct) && !direct.is_empty()).then_some((*property, sends, direct))
            }
            _ => None,
        };
        let Some((property, sends, direct)) = followed else {
            let result = self.run_kernel(kernel, args)?;
            let sent = diff.iter().zip(sends).map(|(&p, s)| self.send_changes_to(p, list, s)).collect::<Result<_>>()?;
            return Ok((result, sent));
        };
        // The counts in the invocation's route words where there are enough of them (zeroed
        // and copied back with its counters), else in words of their own.
        let mut queue = |run: &mut GpuRun<'_>| {
            if sends.len() <= counter::ROUTES {
                let counts = run.counters.ptr() + 8 * counter::COUNT as u64;
                run.launch_comparisons(property, list, sends, &direct, counts)?;
                Ok(Found::WithCounters(sends.len()))
            } else {
                run.queue_changes(property, list, sends, &direct).map(Found::Fetched)
            }
        };
        let (result, found) = self.run_kernel_then(kernel, args, Some(&mut queue))?;
        let mut sent = vec![0usize; sends.len()];
        for &(i, _) in &direct {
            sent[i] = found[i] as usize;
        }
        Ok((result, vec![sent]))
    }

    fn settle(&mut self) -> Result<()> {
        self.wait("the exchange between parts")
    }

    fn defers(&self, kernel: KernelId) -> bool {
        let code = &self.program.kernels[kernel.index()];
        let declared = &self.module.kernels[kernel.index()];
        // Timed kernels and checked programs read something back after every kernel.
        !self.time_kernels
            && !self.program.device.checks()
            && self.listed.is_none()
            && declared.reduction.is_none()
            && !code.uses_worklist
            && !grail_ir::opt::backoff::retries(declared)
            && matches!(code.phases.as_slice(), [phase] if matches!(phase.size, PhaseSize::AllNodes | PhaseSize::AllEdges))
    }

    fn invoke_deferred(
        &mut self,
        kernel: KernelId,
        args: &[Value],
        diff: &[PropertyId],
        list: &[u32],
        sends: &[Vec<crate::multi::Send>],
    ) -> Result<crate::multi::DeviceCounts> {
        let program = self.program;
        let declared = &program.module.kernels[kernel.index()];
        let code = &program.kernels[kernel.index()];
        let phase = match code.phases.as_slice() {
            [phase] if self.defers(kernel) => phase,
            _ => {
                return Err(RuntimeError::Unsupported(format!(
                    "kernel `{}` as a deferred superstep (it reads something back)",
                    declared.name
                )));
            }
        };
        let routes = sends.first().map_or(0, Vec::len);
        let directs: Vec<Vec<(usize, u64)>> = sends.iter().map(|s| self.direct_sends(s)).collect();
        if !sends.iter().zip(&directs).all(|(sends, direct)| every_send_direct(sends, direct)) {
            return Err(RuntimeError::Unsupported(
                "a deferred superstep sending to a part whose memory this GPU does not reach".into(),
            ));
        }
        self.columns_to_device()?;
        let args_ptr = self.start_invocation(args, 0)?;
        self.ctx.acc = 0;
        self.ctx.items = 0;
        self.ctx.item_count = 0;
        self.ctx.retrying = 0;
        self.set_worklists(1);
        let size = match phase.size {
            PhaseSize::AllEdges => self.memory.out.num_edges(),
            _ => self.ctx.num_nodes,
        };
        if size > 0 {
            let block = self.module.opt.block;
            let grid = size.div_ceil(u64::from(block)).min(u64::from(phase.max_grid)) as u32;
            // SAFETY: as in `run_kernel_then`: (grail_ctx, const grail_value *, uint64_t), the
            // context pointing at this run's live buffers, `args_ptr` at the arguments.
            unsafe { launch(&phase.run, grid, block, &mut [arg(&self.ctx), arg(&args_ptr), arg(&size)])? };
            self.drain_hubs(phase, args_ptr)?;
        }
        let words_needed = (diff.len() * routes).max(1);
        if self.deferred.as_ref().is_none_or(|d| d.words < words_needed) {
            // No merge reads the counts being replaced: a deferred superstep follows only
            // merges that are done (`Bsp::defers`).
            self.deferred = Some(DeferredSends {
                counts: DeviceBuffer::new(&self.context, 8 * words_needed, "a deferred superstep's counts")?,
                words: words_needed,
                sent: Event::untimed()?,
            });
        }
        let counts = self.deferred.as_ref().expect("made above").counts.ptr();
        buffer::clear_async(counts, 8 * words_needed)?;
        for (i, ((&property, sends), direct)) in diff.iter().zip(sends).zip(&directs).enumerate() {
            if !direct.is_empty() {
                self.launch_comparisons(property, list, sends, direct, counts + 8 * (i * routes) as u64)?;
            }
        }
        let deferred = self.deferred.as_ref().expect("made above");
        deferred.sent.record()?;
        let event = deferred.sent.handle();
        self.unwaited.set(Some(kernel));
        self.written_on_device(code);
        let stats = &mut self.stats[kernel.index()];
        stats.invocations += 1;
        stats.items += size;
        Ok(crate::multi::DeviceCounts { words: counts, sends: routes, event })
    }

    fn wait_for_events(&mut self, events: &[u64]) -> Result<()> {
        for &event in events {
            buffer::wait_for_event(event)?;
        }
        Ok(())
    }

    fn merge_counted(
        &mut self,
        property: PropertyId,
        merge: crate::multi::Merge,
        received: &[crate::multi::Counted],
        list: &[u32],
    ) -> Result<()> {
        if received.is_empty() {
            return Ok(());
        }
        if matches!(merge, crate::multi::Merge::Custom(_)) {
            return Err(RuntimeError::Unsupported("an update function's merge after a deferred superstep".into()));
        }
        self.columns_to_device()?;
        if self.merged_tally.is_none() {
            let tally = DeviceBuffer::new(&self.context, 8, "the changes merged after deferred supersteps")?;
            tally.clear()?;
            self.merged_tally = Some(tally);
        }
        let tally = self.merged_tally.as_ref().expect("made above").ptr();
        let at_list = self.fixed_list(list)?;
        let (column, size, kind, op) = self.merge_operands(property, merge);
        self.columns[property.index()].current = Current::Device;
        for r in received {
            let at = at_list + 4 * r.start as u64;
            let changes = self.inboxes[r.share.inbox].ptr() + r.share.offset as u64;
            let most = r.most as u64;
            let grid = most.div_ceil(u64::from(BLOCK)).clamp(1, 4096) as u32;
            // SAFETY: (void *column, uint32_t size, uint32_t kind, uint32_t op, const uint32_t
            // *at, const grail_change *changes, const unsigned long long *count, uint64_t most,
            // unsigned long long *tally): the inbox's share holds up to `most` changes (its
            // sender's range), positions within that range of the list from `at`; `count` is
            // the sender's word on its device, complete once this stream's wait for the
            // sender's event is over (`wait_for_events`, queued before). Not waited for: the
            // part's next launch follows in order, as `merge_one`.
            unsafe {
                launch(
                    &self.program.merge_changes_counted,
                    grid,
                    BLOCK,
                    &mut [
                        arg(&column),
                        arg(&size),
                        arg(&kind),
                        arg(&op),
                        arg(&at),
                        arg(&changes),
                        arg(&r.count_at),
                        arg(&most),
                        arg(&tally),
                    ],
                )?
            };
        }
        Ok(())
    }

    fn merged_on_device(&mut self) -> Result<u64> {
        let Some(merged) = &self.merged_tally else { return Ok(0) };
        let mut tally = [0u64];
        merged.download(0, &mut tally)?;
        Ok(tally[0])
    }

    fn merge_changes(
        &mut self,
        property: PropertyId,
        merge: crate::multi::Merge,
        received: &[crate::multi::Received],
        list: &[u32],
        record: bool,
    ) -> Result<()> {
        // Several senders' changes by one launch where the merge is built in and atomic on the
        // element (the middle parts of a chain, every part of a well-cut graph, have two or
        // more) and the changes are few: each launch is a few microseconds on the superstep's
        // path, which pays where the merges' work is less.
        let (_, size) = self.memory.columns[property.index()].raw_bytes();
        let changes: usize = received.iter().map(|r| r.count).sum();
        if received.len() > 1
            && changes <= MERGE_ONE_LAUNCH_MOST
            && !matches!(merge, crate::multi::Merge::Custom(_))
            && matches!(size, 4 | 8)
        {
            for senders in received.chunks(GRAIL_MERGE_SEGS) {
                self.merge_senders(property, merge, senders, list, record)?;
            }
            return Ok(());
        }
        for r in received {
            self.merge_one(property, merge, r.share, r.count, list, r.start, record)?;
        }
        Ok(())
    }

    fn put_changes(
        &mut self,
        property: PropertyId,
        inbox: crate::multi::Share,
        count: usize,
        list: &[u32],
        start: usize,
    ) -> Result<()> {
        if count == 0 {
            return Ok(());
        }
        self.columns_to_device()?;
        let at = self.fixed_list(list)? + 4 * start as u64;
        let record = self.record(list, property)? + 8 * start as u64;
        let (_, size) = self.memory.columns[property.index()].raw_bytes();
        let (column, size) = (self.columns[property.index()].buffer.ptr(), size as u32);
        let (changes, n64) = (self.inboxes[inbox.inbox].ptr() + inbox.offset as u64, count as u64);
        let grid = n64.div_ceil(u64::from(BLOCK)).min(4096) as u32;
        // SAFETY: (void *column, uint32_t size, const uint32_t *at, const grail_change *changes,
        // uint64_t n, uint64_t *record): the inbox holds `count` changes whose positions lie
        // within the list's range from `start`; every index is a local id of the part.
        unsafe {
            launch(
                &self.program.put_changes,
                grid,
                BLOCK,
                &mut [arg(&column), arg(&size), arg(&at), arg(&changes), arg(&n64), arg(&record)],
            )?
        };
        self.wait("the exchange between parts")?;
        self.columns[property.index()].current = Current::Device;
        Ok(())
    }

    fn run_loop_locally(&mut self, region: OutlineId, locals: &mut [Value], budget: u32) -> Result<Option<Vec<u32>>> {
        let owned = self.ctx.num_nodes as u32;
        let slots = self.num_nodes();
        let len = self.worklists.last().map_or(0, |list| list.len);
        self.split_buffers(len)?;
        let split = self.split.as_ref().expect("made above");
        split.counts.clear()?;
        // Ghosts found in the worklist are noted (grail_note_ghost) and not run.
        if slots > owned {
            self.ctx.ghost_flags = split.flags.ptr();
            self.ctx.ghost_list = split.ghosts.ptr();
            self.ctx.ghost_count = split.counts.ptr() + 8;
        }
        self.region_budget = budget;
        let ran = self.run_outlined_region(region, locals);
        self.region_budget = 0;
        (self.ctx.ghost_flags, self.ctx.ghost_list, self.ctx.ghost_count) = (0, 0, 0);
        if !ran? {
            return Ok(None);
        }
        if slots == owned {
            return Ok(Some(Vec::new()));
        }
        let mut count = [0u64; 2];
        self.split.as_ref().expect("made above").counts.download(0, &mut count)?;
        let mut found = self.collect_ghosts(count[1])?;
        // Left after its budget: the ghosts pushed in the last invocations are still in the
        // worklist.
        if self.worklists.last().is_some_and(|list| list.len > 0) {
            found.extend(self.take_pushed_ghosts()?);
            found.sort_unstable();
            found.dedup();
        }
        Ok(Some(found))
    }

    fn take_pushed_ghosts(&mut self) -> Result<Vec<u32>> {
        let n = self.split_worklist()?;
        self.collect_ghosts(n)
    }

    fn extend_worklist(&mut self, items: &[u32]) -> Result<()> {
        if items.is_empty() {
            return Ok(());
        }
        let n = items.len() as u64;
        let Some(list) = self.worklists.last_mut() else { return self.push_worklist(items.to_vec()) };
        if list.cap < list.len + n {
            let grown = DeviceList::with_capacity(&self.context, (list.len + n) * 2, "a worklist")?;
            grown.buffer.copy_from(&list.buffer, list.len as usize * 4)?;
            *list = DeviceList { len: list.len, ..grown };
        }
        list.buffer.upload(list.len as usize * 4, items)?;
        list.len += n;
        Ok(())
    }

    fn kernel_stats(&self) -> &[KernelStats] {
        &self.stats
    }

    fn prepare_peer_lists(
        &mut self,
        lists: &std::sync::Arc<crate::multi::peer::Lists>,
        parts: usize,
        properties: usize,
        rings: bool,
    ) -> Result<()> {
        GpuRun::prepare_peer_lists(self, lists, parts, properties, rings)
    }

    fn peer_buffers(
        &mut self,
        request: &crate::multi::peer::Request<'_>,
    ) -> Result<Option<crate::multi::peer::Addresses>> {
        self.prepare_peers(request)
    }

    fn run_region_with_peers(
        &mut self,
        region: OutlineId,
        locals: &mut [Value],
        table: &crate::multi::peer::Table,
    ) -> Result<crate::multi::peer::End> {
        self.run_with_peers(region, locals, table)
    }
}

/// `GRAIL_TRACE_RUN=1`: a resident run ([`GpuProgram::run_resident`]) prints where its wall time
/// went (setting up its device memory, filling inputs, `main`, reading outputs, tearing down);
/// so do a resident graph's insertion and the callers that time their own steps around them.
pub fn trace_run() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("GRAIL_TRACE_RUN").is_some_and(|v| v != "0" && !v.is_empty()))
}

/// Places buffers one after another in one allocation, each aligned to 256 bytes.
#[derive(Default)]
struct Layout {
    bytes: usize,
}

impl Layout {
    /// The offset of the next buffer of `bytes` bytes.
    fn take(&mut self, bytes: usize) -> usize {
        let at = self.bytes.next_multiple_of(256);
        self.bytes = at + bytes.max(4);
        at
    }
}

/// The bytes of plain values: integers, floats, [`GrailValue`]s, and the `#[repr(C)]` mirrors of
/// grail_cuda.h's structs (integers only, no padding: their layout is checked against the
/// header's).
fn plain_bytes<T: Copy>(values: &[T]) -> &[u8] {
    // SAFETY: `T` is plain data without padding, so every byte is initialized.
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values)) }
}

/// Fills `out` from `bytes` at `at` (plain values, as [`plain_bytes`] wrote them).
fn read_plain<T: Copy>(bytes: &[u8], at: usize, out: &mut [T]) {
    let len = std::mem::size_of_val(out);
    let from = &bytes[at..at + len];
    // SAFETY: `from` holds `len` bytes; every bit pattern is a valid plain value of `T`.
    unsafe { std::ptr::copy_nonoverlapping(from.as_ptr(), out.as_mut_ptr().cast::<u8>(), len) }
}

/// The allocation kept in `slot`, made (for `what`) where there is none of at least `bytes`:
/// kept for a run's later regions, since an allocation before a launch delays a part's start
/// against the others' (slow where peer access maps every allocation into every GPU).
fn kept_buffer<'s>(
    slot: &'s mut Option<DeviceBuffer>,
    context: &Arc<CudaContext>,
    bytes: usize,
    what: &str,
) -> Result<&'s DeviceBuffer> {
    if slot.as_ref().is_none_or(|b| b.bytes() < bytes) {
        // The old one is freed first: the device may hold only one of them.
        *slot = None;
        *slot = Some(DeviceBuffer::new(context, bytes, what)?);
    }
    Ok(slot.as_ref().expect("made above"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_checks_read_as_the_cpu_targets_errors() {
        let device = "device 0 (a GPU)";
        assert!(failed_check("k", device, 10, [0, 0]).is_none());
        let divide = failed_check("split", device, 10, [1, 0]).unwrap();
        assert!(matches!(divide, RuntimeError::Gpu(GpuError::KernelFault { .. })), "{divide:?}");
        assert_eq!(
            divide.to_string(),
            "kernel `split` stopped on device 0 (a GPU): an integer division or remainder by zero, or of the type's \
             minimum by -1 (found by --checks)"
        );
        assert_eq!(
            failed_check("spread", device, 10, [2, 4_000_000_000]).unwrap().to_string(),
            "the program failed: kernel `spread` pushed node 4000000000, but the graph has 10 nodes"
        );
    }
}
