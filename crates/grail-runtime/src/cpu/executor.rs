//! The CPU executor: runs a module's orchestration in Rust ([`super::interp`]) and its kernels
//! in the generated C, split across a pool of threads.
//!
//! One invocation of a kernel: bump the invocation number (claims compare against it); for each
//! phase in order, ask the phase's size function how many items there are and run them, in
//! dynamically claimed chunks on every thread when there are many, on the calling thread alone
//! when there are few; in a phase with a split site, then share the iterations of the loops its
//! items deferred (hubs' adjacencies) among all threads in edge-balanced chunks; while any
//! thread retried items, run the phase again over the retried items (`ctx.retrying`); finally
//! concatenate every thread's pushes, in thread order, into the next worklist and combine the
//! threads' partial reductions. An outlined `iterate`/`pipe` runs as one persistent parallel
//! region of the pool (its workers spin between the region's phases).

use std::io::Write;
use std::time::{Duration, Instant};

use grail_graph::{Column, Graph};
use grail_ir::{CollectionId, Kernel, KernelId, Module, ReduceOp, Stmt, Type};

use super::fault::{KernelGuard, KernelName};
use super::ffi::{
    BufFreeFn, CollAddFn, CollBytesFn, CollClearFn, CollFreeFn, CollGetFn, CollGrowFn, CollPutFn, GrailColl, GrailCtx,
    GrailSlots, GrailThread, GrailValue, MergeFn, PhaseFn, SizeFn, SplitFn, ThreadSlot, WBufFreeFn,
};
use super::pool::{Job, Pool, PoolState};
use super::toolchain::{CCompiler, NativeLibrary};
use crate::cache::ModuleCache;
use crate::error::{Result, RuntimeError};
use crate::host::interp::{self, Machine};
use crate::host::memory::Memory;
use crate::host::ops;
use crate::host::table::Table;
use crate::host::value::{Value, column_type};
use crate::host::{accumulator_type, bind_params, combine, flatten, grail_values, identity};

/// Phases with fewer items than this run on the calling thread alone. Handing a phase to
/// spinning workers costs about 0.2 us; below a few hundred items (road-network BFS levels)
/// the split gains nothing. Measured with `examples/bfs_bench.rs`.
const PARALLEL_MIN_ITEMS: u64 = 256;

/// The same inside a persistent parallel region, where every worker is known to be spinning on
/// the next job: a phase of this many items is worth sharing.
const REGION_PARALLEL_MIN_ITEMS: u64 = 128;

/// Chunks shrink from a quarter of a thread's share of what is left down to this, so that the
/// threads run out of work together; and never grow past the maximum, so that a thread that
/// drew heavy items (hubs of power-law graphs) is balanced by the rest.
const MIN_CHUNK: u64 = 64;
const MAX_CHUNK: u64 = 8192;

/// A phase with a split site defers an adjacency loop (a hub's) when it has at least this many
/// iterations and at least an eighth of a thread's share of the phase's estimated work (its
/// items times the mean degree, over the threads): smaller loops balance by themselves among
/// the chunks of items.
const SPLIT_FLOOR: u64 = 1024;

/// The deferred loops' iterations are shared in chunks of this many iterations at least and
/// at most (edge-balanced: a hub's edges spread over every thread).
const SPLIT_MIN_CHUNK: u64 = 256;
const SPLIT_MAX_CHUNK: u64 = 16384;

/// A module compiled for the CPU and loaded, ready to run on any graph.
pub struct CpuProgram {
    module: Module,
    source: String,
    kernels: Vec<KernelCode>,
    buf_free: BufFreeFn,
    wbuf_free: WBufFreeFn,
    coll_free: CollFreeFn,
    /// Each collection's host functions, by collection id.
    collections: Vec<CollectionCode>,
    /// The program's update functions (`Module::merge_functions`), in order.
    pub(crate) merges: Vec<MergeFn>,
    /// Columns of earlier runs handed back by [`CpuProgram::recycle`], for the next run.
    spare: std::sync::Mutex<Vec<Column>>,
    /// The collections' segments a run that ended left for the next run, by collection
    /// (see `Collections::keep`).
    kept_segments: std::sync::Mutex<Vec<KeptSegments>>,
    // Keeps the function pointers above valid; dropped after them (field order).
    _library: NativeLibrary,
    _build_dir: Option<tempfile::TempDir>,
}

impl std::fmt::Debug for CpuProgram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CpuProgram").field("module", &self.module.name).finish_non_exhaustive()
    }
}

/// A collection's generated host functions.
#[derive(Clone, Copy)]
struct CollectionCode {
    add: CollAddFn,
    grow: CollGrowFn,
    put: CollPutFn,
    get: CollGetFn,
    clear_claims: CollClearFn,
    /// The bytes of the collection's segment 0 (segment `s` holds that many shifted left by `s`).
    seg_bytes: u64,
}

/// One collection's segments (`calloc`ed by generated code), kept from a run for the next.
struct KeptSegments([*mut std::ffi::c_void; super::ffi::GRAIL_SEGS]);

// SAFETY: the segments belong to the program that keeps them; one run at a time takes them.
unsafe impl Send for KeptSegments {}

/// A phase's generated functions.
#[derive(Clone, Copy)]
struct PhaseCode {
    size: SizeFn,
    run: PhaseFn,
    /// For a phase with a split site: what runs it with hubs deferred.
    split: Option<SplitCode>,
}

/// The generated functions of a phase with a split site.
#[derive(Clone, Copy)]
struct SplitCode {
    /// The phase function that defers loops of at least `split_min` iterations.
    hubs: PhaseFn,
    /// Runs part of a deferred loop.
    part: SplitFn,
    /// The words of a record.
    stride: usize,
    /// Whether the loops walk the reverse CSR.
    reverse: bool,
}

/// A kernel's generated functions, by phase.
struct KernelCode {
    phases: Vec<PhaseCode>,
    uses_worklist: bool,
    /// For the fault handler's message.
    name: KernelName,
}

/// How to run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunOptions {
    /// Worker threads, the calling thread included; 0 = one per core.
    pub threads: usize,
}

/// What a run leaves.
#[derive(Debug, Clone)]
pub struct RunOutput {
    /// Every property's final column, by property id; a `u32` weight property that nothing
    /// writes is read in place from the graph and comes back empty.
    pub properties: Vec<Column>,
    /// What `main` returned.
    pub result: Option<Value>,
    /// The elements of each collection the program outputs (`Module::collection_outputs`, in
    /// that order), removed ones left out.
    pub collections: Vec<Table>,
    pub stats: RunStats,
}

#[derive(Debug, Clone, Default)]
pub struct RunStats {
    /// By kernel id.
    pub kernels: Vec<KernelStats>,
    /// The whole run, setup included.
    pub elapsed: Duration,
}

#[derive(Debug, Clone, Default)]
pub struct KernelStats {
    pub name: String,
    pub invocations: u64,
    /// Items processed over all phases, retried items included.
    pub items: u64,
    pub pushes: u64,
    pub retries: u64,
    /// Nested loops (hubs' adjacencies) whose iterations were shared among the threads instead
    /// of run by their item's thread (CPU only).
    pub split: u64,
    pub time: Duration,
}

impl CpuProgram {
    /// Emits C, builds (through the cache when given) and loads it, resolving every phase's
    /// symbols.
    pub fn compile(module: Module, compiler: &CCompiler, cache: Option<&ModuleCache>) -> Result<CpuProgram> {
        let source = grail_codegen::emit_c(&module)?;
        for property in &module.properties {
            if column_type(property.ty).is_none() {
                return Err(RuntimeError::Unsupported(format!(
                    "property `{}` has type {}; the CPU executor stores only scalar, node and edge properties",
                    property.name, property.ty
                )));
            }
        }
        let (library, build_dir) = match cache {
            Some(cache) => (compiler.load(&source, cache)?, None),
            None => {
                let dir = tempfile::tempdir().map_err(|e| RuntimeError::io(std::env::temp_dir(), e))?;
                (compiler.load(&source, &ModuleCache::at(dir.path()))?, Some(dir))
            }
        };
        let mut kernels = Vec::with_capacity(module.kernels.len());
        for (k, kernel) in module.kernels.iter().enumerate() {
            let mut phases = Vec::with_capacity(kernel.body.block.len());
            for (p, stmt) in kernel.body.block.iter().enumerate() {
                // SAFETY: the C target emits exactly these signatures for these names.
                let size: SizeFn = unsafe { library.function(&format!("grail_k{k}_{p}_size"))? };
                let run: PhaseFn = unsafe { library.function(&format!("grail_k{k}_{p}"))? };
                let site = match stmt {
                    Stmt::ForAll(forall) => grail_codegen::c::split_site(kernel, forall),
                    _ => None,
                };
                let split = match site {
                    // SAFETY: as above, for phases with a split site.
                    Some(site) => Some(SplitCode {
                        hubs: unsafe { library.function(&format!("grail_k{k}_{p}_hubs"))? },
                        part: unsafe { library.function(&format!("grail_k{k}_{p}_split"))? },
                        stride: site.stride(),
                        reverse: site.reverse,
                    }),
                    None => None,
                };
                phases.push(PhaseCode { size, run, split });
            }
            kernels.push(KernelCode {
                phases,
                uses_worklist: kernel.uses_worklist(),
                name: KernelName::new(&kernel.name),
            });
        }
        // SAFETY: the header defines `void grail_buf_free(grail_buf *)` and
        // `void grail_coll_free(grail_coll *)`.
        let buf_free: BufFreeFn = unsafe { library.function("grail_buf_free")? };
        // SAFETY: the header defines `void grail_wbuf_free(grail_wbuf *)`.
        let wbuf_free: WBufFreeFn = unsafe { library.function("grail_wbuf_free")? };
        let coll_free: CollFreeFn = unsafe { library.function("grail_coll_free")? };
        let mut collections = Vec::with_capacity(module.collections.len());
        for c in 0..module.collections.len() {
            // SAFETY: the C target emits these signatures for every collection.
            let add: CollAddFn = unsafe { library.function(&format!("grail_c{c}_add_host"))? };
            let get: CollGetFn = unsafe { library.function(&format!("grail_c{c}_get_host"))? };
            let grow: CollGrowFn = unsafe { library.function(&format!("grail_c{c}_grow_host"))? };
            let put: CollPutFn = unsafe { library.function(&format!("grail_c{c}_put_host"))? };
            let clear_claims: CollClearFn = unsafe { library.function(&format!("grail_c{c}_clear_claims"))? };
            let seg_bytes: CollBytesFn = unsafe { library.function(&format!("grail_c{c}_seg_bytes_host"))? };
            // SAFETY: a function of no arguments returning a constant.
            let seg_bytes = unsafe { seg_bytes() };
            collections.push(CollectionCode { add, grow, put, get, clear_claims, seg_bytes });
        }
        let mut merges = Vec::with_capacity(module.merge_functions.len());
        for i in 0..module.merge_functions.len() {
            // SAFETY: the C target emits `uint64_t grail_merge_custom_<i>(const grail_ctx *,
            // uint64_t, uint64_t)` for every update function.
            merges.push(unsafe { library.function::<MergeFn>(&format!("grail_merge_custom_{i}"))? });
        }
        Ok(CpuProgram {
            module,
            source,
            kernels,
            buf_free,
            wbuf_free,
            coll_free,
            collections,
            merges,
            spare: std::sync::Mutex::new(Vec::new()),
            kept_segments: std::sync::Mutex::new(Vec::new()),
            _library: library,
            _build_dir: build_dir,
        })
    }

    pub fn module(&self) -> &Module {
        &self.module
    }

    /// Hands a finished run's columns (those of its [`RunOutput::properties`] the caller does
    /// not keep) back to the program: its next run takes each from them instead of allocating
    /// (a caller running the program again and again on a large graph, as incremental SSSP
    /// does per batch, saves a page fault per page of every column). At most one column per
    /// property is kept.
    pub fn recycle(&self, columns: Vec<Column>) {
        let mut spare = self.spare.lock().unwrap_or_else(|e| e.into_inner());
        spare.extend(columns.into_iter().filter(|c| !c.is_empty()));
        let keep = self.module.properties.len();
        if spare.len() > keep {
            let extra = spare.len() - keep;
            spare.drain(..extra);
        }
    }

    /// Allocates this program's property columns for a graph of `nodes` nodes and `edges` edges,
    /// their pages touched on every core, and keeps them for the next runs as [`recycle`] keeps
    /// a run's: a caller that will run the program on such a graph pays the columns' page faults
    /// now, before the runs it times (incremental SSSP's first repair, say).
    ///
    /// [`recycle`]: CpuProgram::recycle
    pub fn reserve_columns(&self, nodes: usize, edges: usize) {
        let columns = self
            .module
            .properties
            .iter()
            // A weight property reads the graph's own weights unless something writes it.
            .filter(|property| !property.is_weight)
            .filter_map(|property| {
                let ty = crate::host::value::column_type(property.ty)?;
                let len = if property.owner == grail_ir::Owner::Node { nodes } else { edges };
                Some(crate::host::memory::zeroed_on_every_core(Column::zeroed(ty, len)))
            })
            .collect();
        self.recycle(columns);
    }

    pub fn c_source(&self) -> &str {
        &self.source
    }

    /// Runs the program on `graph`.
    ///
    /// `params`: one entry per module param, `None` = use its default (an error naming the
    /// param if it has none). Node params are checked against the graph's node count; `print`
    /// lines go to `out`.
    pub fn run(
        &self,
        graph: &Graph,
        params: &[Option<Value>],
        options: &RunOptions,
        out: &mut dyn Write,
    ) -> Result<RunOutput> {
        self.run_with_inputs(graph, params, &[], options, out)
    }

    /// [`CpuProgram::run`] for a program with input collections (`input coll;`): `inputs` holds
    /// one table per input ([`Table::for_collection`]), in declaration order; row `i` of each
    /// gets handle `i`.
    pub fn run_with_inputs(
        &self,
        graph: &Graph,
        params: &[Option<Value>],
        inputs: &[Table],
        options: &RunOptions,
        out: &mut dyn Write,
    ) -> Result<RunOutput> {
        let started = Instant::now();
        let params = bind_params(&self.module, graph, params)?;
        let mut param_values = Vec::with_capacity(params.len());
        grail_values(&params, "parameters", &mut param_values)?;
        let mut spare = std::mem::take(&mut *self.spare.lock().unwrap_or_else(|e| e.into_inner()));
        let memory = Memory::borrowing_weights_reusing(&self.module, graph, &mut spare)?;
        drop(spare);
        let threads = match options.threads {
            0 => rayon::current_num_threads().max(1),
            n => n,
        };
        let state = PoolState::new(threads);
        let (result, stats, memory) = std::thread::scope(|scope| {
            let pool = Pool::start(scope, &state);
            let mut run = Run::new(self, memory, params, param_values, &pool, out);
            let result = interp::fill_inputs(&self.module, &mut run, inputs)
                .and_then(|()| interp::run_main(&self.module, &mut run))
                .and_then(|result| Ok((result, interp::collection_outputs(&self.module, &mut run)?)))
                .and_then(|(result, collections)| {
                    Ok((result, collections, interp::added_nodes(&self.module, &mut run)?))
                });
            if result.is_ok() {
                run.collections.keep(self);
            }
            (result, run.stats, run.memory)
        });
        let (result, collections, added_nodes) = result?;
        let mut properties = memory.into_columns();
        if let Some(added) = &added_nodes {
            interp::extend_with_added_nodes(&self.module, &mut properties, graph.num_nodes() as usize, added);
        }
        Ok(RunOutput {
            properties,
            result,
            collections,
            stats: RunStats { kernels: stats, elapsed: started.elapsed() },
        })
    }
}

impl CpuProgram {
    /// A run of this program on one part of a partitioned graph (`crate::multi`): `graph` is the
    /// part's local graph (owned nodes, then ghosts), `params` the run's parameters with node
    /// parameters in the part's local ids, `pool` the part's threads.
    pub(crate) fn part_run<'a, 'r, 'p>(
        &'a self,
        graph: &'a Graph,
        params: Vec<Value>,
        shape: &PartShape<'a>,
        pool: &'r Pool<'p>,
        out: &'a mut dyn Write,
    ) -> Result<Run<'a, 'r, 'p>> {
        let mut param_values = Vec::with_capacity(params.len());
        grail_values(&params, "parameters", &mut param_values)?;
        let memory = Memory::borrowing_weights(&self.module, graph)?;
        let mut run = Run::new(self, memory, params, param_values, pool, out);
        run.ctx.num_nodes = shape.owned.into();
        run.ctx.graph_nodes = shape.graph_nodes;
        run.ctx.graph_edges = shape.graph_edges;
        run.ctx.global_ids = shape.global_ids.as_ptr();
        if !shape.ghost_degrees.is_empty() {
            run.ctx.ghost_degrees = shape.ghost_degrees.as_ptr();
        }
        Ok(run)
    }
}

/// What a part's run needs to know of the whole graph: kernels over all nodes run over its
/// `owned` nodes (local ids below it; the ghosts follow), `G.num_nodes()` and `G.num_edges()`
/// are the graph's, a node's number (`u as u32`) is its global id, and a ghost's out-degree
/// (whose row the part does not hold) is in `ghost_degrees` (empty where no kernel reads one).
pub(crate) struct PartShape<'s> {
    pub owned: u32,
    pub graph_nodes: u64,
    pub graph_edges: u64,
    pub global_ids: &'s [u32],
    pub ghost_degrees: &'s [u32],
}

impl crate::multi::PartRun for Run<'_, '_, '_> {
    fn gather(
        &mut self,
        property: grail_ir::PropertyId,
        at: crate::multi::Indices<'_>,
        out: &mut Vec<u64>,
    ) -> Result<()> {
        let column = self.memory.columns[property.index()];
        out.clear();
        match at {
            crate::multi::Indices::Range(start, end) => column.words_into(start as usize, end as usize, out),
            list => list.for_each(|i| out.push(column.bits(i))),
        }
        Ok(())
    }

    fn invoke_over_slots(&mut self, kernel: KernelId, args: &[Value]) -> Result<Option<Value>> {
        let owned = self.ctx.num_nodes;
        self.ctx.num_nodes = self.ctx.node_slots;
        let result = self.run_kernel(kernel, args);
        self.ctx.num_nodes = owned;
        result
    }

    fn invoke_over_list(&mut self, kernel: KernelId, args: &[Value], list: &[u32]) -> Result<Option<Value>> {
        // The list outlives the invocation (a fixed list of the run's).
        self.listed = Some((list.as_ptr(), list.len() as u64));
        self.run_kernel(kernel, args)
    }

    fn record_current(&mut self, property: grail_ir::PropertyId, list: &[u32]) -> Result<()> {
        let column = self.memory.columns[property.index()];
        let key = (list.as_ptr() as usize, list.len(), property.0);
        let recorded = self.records.entry(key).or_insert_with(|| vec![0; list.len()]);
        for (&local, word) in list.iter().zip(recorded.iter_mut()) {
            *word = column.bits(local as usize);
        }
        Ok(())
    }

    fn diff(
        &mut self,
        property: grail_ir::PropertyId,
        list: &[u32],
        out: &mut Vec<crate::multi::Change>,
    ) -> Result<()> {
        let column = self.memory.columns[property.index()];
        let key = (list.as_ptr() as usize, list.len(), property.0);
        let recorded = self.records.entry(key).or_insert_with(|| vec![0; list.len()]);
        for (position, (&local, old)) in list.iter().zip(recorded.iter_mut()).enumerate() {
            let new = column.bits(local as usize);
            if new != *old {
                out.push(crate::multi::Change { position: position as u32, old: *old, new });
                *old = new;
            }
        }
        Ok(())
    }

    fn put(&mut self, property: grail_ir::PropertyId, list: &[u32], positions: &[u32], words: &[u64]) -> Result<()> {
        let column = self.memory.columns[property.index()];
        let key = (list.as_ptr() as usize, list.len(), property.0);
        let recorded = self.records.entry(key).or_insert_with(|| vec![0; list.len()]);
        for (&position, &word) in positions.iter().zip(words) {
            column.set_bits(list[position as usize] as usize, word);
            recorded[position as usize] = word;
        }
        Ok(())
    }

    fn merge_in(
        &mut self,
        property: grail_ir::PropertyId,
        merge: crate::multi::Merge,
        at: &[u32],
        before: &mut [u64],
        after: &[u64],
    ) -> Result<()> {
        let column = self.memory.columns[property.index()];
        let ty = column_type(self.module.properties[property.index()].ty).expect("a scalar column");
        for ((&local, old), &new) in at.iter().zip(before.iter_mut()).zip(after) {
            let current = crate::multi::normal(ty, column.bits(local as usize));
            let word = match merge {
                // SAFETY: the program's update function on words, with this run's context.
                crate::multi::Merge::Custom(i) => {
                    crate::multi::normal(ty, unsafe { (self.program.merges[i as usize])(&*self.ctx, current, new) })
                }
                _ => merge.apply(ty, current, *old, new),
            };
            column.set_bits(local as usize, word);
            *old = word;
        }
        Ok(())
    }

    fn take_pushed_ghosts(&mut self) -> Result<Vec<u32>> {
        let owned = self.ctx.num_nodes as u32;
        let mut ghosts = Vec::new();
        if let Some(current) = self.worklists.last_mut() {
            current.retain(|&x| {
                if x < owned {
                    return true;
                }
                ghosts.push(x);
                false
            });
        }
        ghosts.sort_unstable();
        ghosts.dedup();
        Ok(ghosts)
    }

    fn extend_worklist(&mut self, items: &[u32]) -> Result<()> {
        if let Some(current) = self.worklists.last_mut() {
            current.extend_from_slice(items);
        }
        Ok(())
    }

    fn kernel_stats(&self) -> &[KernelStats] {
        &self.stats
    }

    fn open_inbox(&mut self, bytes: usize) -> Result<(usize, crate::multi::Place)> {
        // In 8-byte words: aligned for changes.
        let inbox = vec![0u64; bytes.div_ceil(8)].into_boxed_slice();
        let place = crate::multi::Place::Host { address: inbox.as_ptr() as usize, bytes };
        self.inboxes.push(inbox);
        Ok((self.inboxes.len() - 1, place))
    }

    fn send_pushes(&mut self, map: crate::multi::GhostMap<'_>, routes: &[crate::multi::Route]) -> Result<Vec<usize>> {
        let owned = self.ctx.num_nodes as u32;
        let ghosts = self.take_pushed_ghosts()?;
        let mut by_route: Vec<Vec<u32>> = vec![Vec::new(); routes.len()];
        for x in ghosts {
            let j = (x - owned) as usize;
            let route = crate::multi::exchange::route_to(map.part, map.owner_of[j] as usize);
            by_route[route].push(map.at_owner[map.position[j] as usize]);
        }
        let mut sent = Vec::with_capacity(routes.len());
        for (route, ids) in routes.iter().zip(&by_route) {
            match &route.to_owner_pushes {
                Some(to) => to.write_from_host(ids)?,
                None => debug_assert!(ids.is_empty(), "a part pushes only ghosts it holds"),
            }
            sent.push(ids.len());
        }
        Ok(sent)
    }

    fn take_pushes(&mut self, inbox: usize, count: usize) -> Result<()> {
        // SAFETY: the inbox holds at least `count` node ids, written by the part that sent them.
        let ids = unsafe { std::slice::from_raw_parts(self.inboxes[inbox].as_ptr().cast::<u32>(), count) };
        if let Some(current) = self.worklists.last_mut() {
            current.extend_from_slice(ids);
        }
        Ok(())
    }

    fn send_changes(
        &mut self,
        property: grail_ir::PropertyId,
        list: &[u32],
        range: std::ops::Range<usize>,
        to: &crate::multi::Place,
    ) -> Result<usize> {
        let column = self.memory.columns[property.index()];
        let key = (list.as_ptr() as usize, list.len(), property.0);
        let recorded = self.records.entry(key).or_insert_with(|| vec![0; list.len()]);
        self.outgoing.clear();
        let start = range.start;
        for i in range {
            let new = column.bits(list[i] as usize);
            if new != recorded[i] {
                self.outgoing.push(crate::multi::Change { position: (i - start) as u32, old: recorded[i], new });
                recorded[i] = new;
            }
        }
        to.write_from_host(&self.outgoing)?;
        Ok(self.outgoing.len())
    }

    fn defers(&self, _kernel: KernelId) -> bool {
        // Only where a run asks for deferred supersteps on CPU parts (`MultiOptions::defer_steps`).
        true
    }

    fn invoke_deferred(
        &mut self,
        kernel: KernelId,
        args: &[Value],
        diff: &[grail_ir::PropertyId],
        list: &[u32],
        sends: &[Vec<crate::multi::Send>],
    ) -> Result<crate::multi::DeviceCounts> {
        self.invoke(kernel, args)?;
        let routes = sends.first().map_or(0, Vec::len);
        // Its words are read by the receivers in the next round: the vector is only resized
        // here, when no merge reads it (`Bsp::defers`).
        self.deferred_counts.clear();
        self.deferred_counts.resize((diff.len() * routes).max(1), 0);
        for (i, (&property, sends)) in diff.iter().zip(sends).enumerate() {
            for (s, (range, to)) in sends.iter().enumerate() {
                if let Some(to) = to.as_ref().filter(|_| !range.is_empty()) {
                    self.deferred_counts[i * routes + s] = self.send_changes(property, list, range.clone(), to)? as u64;
                }
            }
        }
        Ok(crate::multi::DeviceCounts { words: self.deferred_counts.as_ptr() as u64, sends: routes, event: 0 })
    }

    fn wait_for_events(&mut self, _events: &[u64]) -> Result<()> {
        // The senders' work is done: the crew's rounds order it before this one.
        Ok(())
    }

    fn merge_counted(
        &mut self,
        property: grail_ir::PropertyId,
        merge: crate::multi::Merge,
        received: &[crate::multi::Counted],
        list: &[u32],
    ) -> Result<()> {
        let received: Vec<crate::multi::Received> = received
            .iter()
            .map(|r| {
                // SAFETY: the sender's count word (`invoke_deferred`), which stays as it is until
                // its next deferred superstep, after this merge.
                let count = unsafe { *(r.count_at as *const u64) }.min(r.most as u64) as usize;
                self.merged_counted += count as u64;
                crate::multi::Received { share: r.share, count, start: r.start }
            })
            .collect();
        self.merge_changes(property, merge, &received, list, false)
    }

    fn merged_on_device(&mut self) -> Result<u64> {
        Ok(self.merged_counted)
    }

    fn merge_changes(
        &mut self,
        property: grail_ir::PropertyId,
        merge: crate::multi::Merge,
        received: &[crate::multi::Received],
        list: &[u32],
        record: bool,
    ) -> Result<()> {
        for &crate::multi::Received { share: inbox, count, start } in received {
            let changes = inbox_changes(&self.inboxes[inbox.inbox], inbox.offset, count);
            let at: Vec<u32> = changes.iter().map(|c| list[start + c.position as usize]).collect();
            let mut before: Vec<u64> = changes.iter().map(|c| c.old).collect();
            let after: Vec<u64> = changes.iter().map(|c| c.new).collect();
            self.merge_in(property, merge, &at, &mut before, &after)?;
            if record {
                let column = self.memory.columns[property.index()];
                let ty = column_type(self.module.properties[property.index()].ty).expect("a scalar column");
                let key = (list.as_ptr() as usize, list.len(), property.0);
                let recorded = self.records.entry(key).or_insert_with(|| vec![0; list.len()]);
                for change in inbox_changes(&self.inboxes[inbox.inbox], inbox.offset, count) {
                    // As this part's column would read the ghost's word.
                    recorded[start + change.position as usize] = word_as_read(column, ty, change.new);
                }
            }
        }
        Ok(())
    }

    fn put_changes(
        &mut self,
        property: grail_ir::PropertyId,
        inbox: crate::multi::Share,
        count: usize,
        list: &[u32],
        start: usize,
    ) -> Result<()> {
        let column = self.memory.columns[property.index()];
        let key = (list.as_ptr() as usize, list.len(), property.0);
        let recorded = self.records.entry(key).or_insert_with(|| vec![0; list.len()]);
        for change in inbox_changes(&self.inboxes[inbox.inbox], inbox.offset, count) {
            let i = start + change.position as usize;
            let local = list[i] as usize;
            column.set_bits(local, change.new);
            recorded[i] = column.bits(local);
        }
        Ok(())
    }
}

/// The first `count` changes of an inbox's share that starts at byte `offset`.
fn inbox_changes(inbox: &[u64], offset: usize, count: usize) -> &[crate::multi::Change] {
    assert!(offset % 8 == 0, "an inbox's shares start at whole words");
    let inbox = &inbox[offset / 8..];
    assert!(count * std::mem::size_of::<crate::multi::Change>() <= inbox.len() * 8, "an inbox overrun");
    // SAFETY: in bounds (checked); the words are 8-byte aligned and every bit pattern is a change.
    unsafe { std::slice::from_raw_parts(inbox.as_ptr().cast::<crate::multi::Change>(), count) }
}

/// A word from another device (4-byte values may come zero-extended) as `column` reads it back.
fn word_as_read(column: crate::host::memory::ColumnRef, ty: grail_graph::PropertyType, word: u64) -> u64 {
    let word = crate::multi::normal(ty, word);
    match column {
        crate::host::memory::ColumnRef::I32(_) => word as u32 as i32 as i64 as u64,
        _ => word,
    }
}

/// The threads' `grail_thread`s; frees their buffers with the program's `grail_buf_free`.
pub(super) struct ThreadStates {
    states: Vec<ThreadSlot>,
    /// Each thread's `grail_slots`, one per collection (its state points at them).
    slots: Vec<Box<[GrailSlots]>>,
    free: BufFreeFn,
    wfree: WBufFreeFn,
}

impl Drop for ThreadStates {
    fn drop(&mut self) {
        for state in &mut self.states {
            // SAFETY: the buffers were grown by the same program's code (realloc) or are empty.
            unsafe {
                (self.free)(&mut state.pushes);
                (self.free)(&mut state.retries);
                (self.wfree)(&mut state.deferred);
            }
        }
    }
}

/// The run's collections; frees their segments with the program's `grail_coll_free`. Boxed so
/// that `grail_ctx` can point at them.
pub(super) struct Collections {
    colls: Box<[GrailColl]>,
    free: CollFreeFn,
}

impl Collections {
    /// The segments an earlier run of `program` left, cleared on every core (a fresh segment
    /// is zeroed: the generated code relies on it), in place of the empty ones: clearing pages
    /// the process has touched costs less than touching fresh ones.
    fn reuse(&mut self, program: &CpuProgram) {
        use rayon::prelude::*;
        let kept = std::mem::take(&mut *program.kept_segments.lock().unwrap_or_else(|e| e.into_inner()));
        if kept.len() != self.colls.len() {
            // (None kept, which a program of no collections never has.)
            program.free_segments(kept);
            return;
        }
        let mut pieces: Vec<(usize, usize)> = Vec::new();
        for (c, segments) in kept.iter().enumerate() {
            for (s, &segment) in segments.0.iter().enumerate() {
                if !segment.is_null() {
                    pieces.push((segment as usize, (program.collections[c].seg_bytes << s) as usize));
                }
            }
        }
        pieces.par_iter().for_each(|&(at, bytes)| {
            // SAFETY: a segment calloc'ed by the generated code with exactly these bytes, owned by
            // the program's stash until now: no other thread holds it.
            let memory = unsafe { std::slice::from_raw_parts_mut(at as *mut u8, bytes) };
            memory.par_chunks_mut(1 << 20).for_each(|chunk| chunk.fill(0));
        });
        for (coll, segments) in self.colls.iter_mut().zip(kept) {
            coll.segs = segments.0;
        }
    }

    /// The segments of a run that ended well, for `program`'s next run: none (and every segment
    /// freed, by the drop) when a collection holds a segment past
    /// [`crate::host::KEEP_SEGMENT_MAX`] or failed, or the program keeps another run's already.
    fn keep(&mut self, program: &CpuProgram) {
        let small = self.colls.iter().all(|coll| {
            coll.failed == 0
                && coll.segs.iter().enumerate().all(|(s, seg)| seg.is_null() || s <= crate::host::KEEP_SEGMENT_MAX)
        });
        let mut kept = program.kept_segments.lock().unwrap_or_else(|e| e.into_inner());
        if self.colls.is_empty() || !small || !kept.is_empty() {
            return;
        }
        *kept =
            self.colls.iter_mut().map(|coll| KeptSegments(std::mem::replace(coll, GrailColl::EMPTY).segs)).collect();
    }
}

impl CpuProgram {
    /// Frees segments a run left.
    fn free_segments(&self, kept: Vec<KeptSegments>) {
        for segments in kept {
            let mut coll = GrailColl { segs: segments.0, ..GrailColl::EMPTY };
            // SAFETY: segments calloc'ed by this program's code, freed once.
            unsafe { (self.coll_free)(&mut coll) };
        }
    }
}

impl Drop for CpuProgram {
    /// Frees the segments a run left for the next.
    fn drop(&mut self) {
        let kept = std::mem::take(self.kept_segments.get_mut().unwrap_or_else(|e| e.into_inner()));
        self.free_segments(kept);
    }
}

impl Drop for Collections {
    fn drop(&mut self) {
        for coll in self.colls.iter_mut() {
            // SAFETY: the segments were allocated by the same program's code (calloc) or are null.
            unsafe { (self.free)(coll) };
        }
    }
}

/// The run's context shared with the threads that read collections back (they only read).
struct SharedCtx<'c>(&'c GrailCtx);

// SAFETY: the context is only read through this while no kernel runs (a bulk fill writes the
// elements its collections point to, each slot from one thread).
unsafe impl Sync for SharedCtx<'_> {}

/// One run in progress: memory, worklists, threads and statistics.
pub(crate) struct Run<'a, 'r, 'p> {
    pub program: &'a CpuProgram,
    pub module: &'a Module,
    pub memory: Memory<'a>,
    pub params: Vec<Value>,
    pub out: &'a mut dyn Write,
    pub stats: Vec<KernelStats>,
    /// The stack of worklists; the last is the current one.
    pub worklists: Vec<Vec<u32>>,
    ctx: Box<GrailCtx>,
    _param_values: Vec<GrailValue>,
    threads: ThreadStates,
    collections: Collections,
    pool: &'r Pool<'p>,
    /// The next worklist being assembled (swapped with the current one).
    spare: Vec<u32>,
    retry_items: Vec<u32>,
    /// The items of the next invocation's first passes, where `invoke_over_list` gives them
    /// (a fixed list's address and length), instead of all nodes.
    listed: Option<(*const u32, u64)>,
    args: Vec<GrailValue>,
    invocation: u32,
    /// The deferred loops of a phase being shared: each record, and where its iterations start
    /// among all of theirs (one more entry: the total).
    split_records: Vec<*const u64>,
    split_starts: Vec<u64>,
    /// The `split_min` every thread holds.
    split_min: u64,
    /// The graph's largest out- and in-degree, once a phase with a split site needed them.
    max_degrees: [Option<u64>; 2],
    /// On a part of a partitioned graph: the words last recorded for each fixed list of local
    /// ids and property (`crate::multi::PartRun::diff`), by the list's address and length.
    records: std::collections::HashMap<(usize, usize, u32), Vec<u64>>,
    /// The inboxes other parts write their changes into (`crate::multi::PartRun::open_inbox`),
    /// and the changes found before they are sent.
    inboxes: Vec<Box<[u64]>>,
    outgoing: Vec<crate::multi::Change>,
    /// A deferred superstep's counts (`crate::multi::PartRun::invoke_deferred`: on a CPU part
    /// the protocol runs at once, which tests it without a GPU), read by the receivers at their
    /// addresses; and the changes merged from others' deferred supersteps.
    deferred_counts: Vec<u64>,
    merged_counted: u64,
}

impl<'a, 'r, 'p> Run<'a, 'r, 'p> {
    fn new(
        program: &'a CpuProgram,
        memory: Memory<'a>,
        params: Vec<Value>,
        param_values: Vec<GrailValue>,
        pool: &'r Pool<'p>,
        out: &'a mut dyn Write,
    ) -> Self {
        let module = &program.module;
        let out_csr = memory.out;
        let mut collections = Collections {
            colls: module.collections.iter().map(|_| GrailColl::EMPTY).collect(),
            free: program.coll_free,
        };
        collections.reuse(program);
        let ctx = Box::new(GrailCtx {
            num_nodes: out_csr.num_nodes().into(),
            // Edge ids are positions in the edge arrays: with room after rows, more than edges.
            num_edges: out_csr.edge_slots(),
            out_offsets: out_csr.offsets().as_ptr(),
            out_ends: out_csr.ends().as_ptr(),
            out_targets: out_csr.targets().as_ptr(),
            in_offsets: memory.reverse.as_ref().map_or(std::ptr::null(), |r| r.offsets.as_ptr()),
            // The reverse CSR is packed: a row ends where the next starts.
            in_ends: memory.reverse.as_ref().map_or(std::ptr::null(), |r| r.offsets.as_ptr().wrapping_add(1)),
            in_sources: memory.reverse.as_ref().map_or(std::ptr::null(), |r| r.sources.as_ptr()),
            edge_sources: memory.edge_sources.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
            in_edge_ids: memory
                .reverse
                .as_ref()
                .and_then(|r| r.edge_ids.as_ref())
                .map_or(std::ptr::null(), |s| s.as_ptr()),
            props: memory.props.as_ptr(),
            params: param_values.as_ptr(),
            items: std::ptr::null(),
            item_count: 0,
            retrying: 0,
            locks: memory.locks.ptr,
            claims: memory.claims.ptr,
            invocation: 0,
            sets: memory.sets.ptr,
            colls: collections.colls.as_mut_ptr(),
            graph_nodes: out_csr.num_nodes().into(),
            graph_edges: out_csr.num_edges(),
            node_slots: out_csr.num_nodes().into(),
            global_ids: std::ptr::null(),
            ghost_degrees: std::ptr::null(),
        });
        let mut states: Vec<ThreadSlot> = (0..pool.threads()).map(|_| ThreadSlot(GrailThread::new())).collect();
        let mut slots: Vec<Box<[GrailSlots]>> =
            states.iter().map(|_| vec![GrailSlots::default(); module.collections.len()].into_boxed_slice()).collect();
        for (state, slots) in states.iter_mut().zip(&mut slots) {
            if !slots.is_empty() {
                state.slots = slots.as_mut_ptr();
            }
        }
        let stats =
            module.kernels.iter().map(|k| KernelStats { name: k.name.clone(), ..KernelStats::default() }).collect();
        Run {
            program,
            module,
            memory,
            params,
            out,
            stats,
            worklists: vec![Vec::new()],
            ctx,
            _param_values: param_values,
            threads: ThreadStates { states, slots, free: program.buf_free, wfree: program.wbuf_free },
            collections,
            pool,
            spare: Vec::new(),
            retry_items: Vec::new(),
            listed: None,
            args: Vec::new(),
            invocation: 0,
            split_records: Vec::new(),
            split_starts: Vec::new(),
            split_min: u64::MAX,
            max_degrees: [None; 2],
            records: std::collections::HashMap::new(),
            inboxes: Vec::new(),
            outgoing: Vec::new(),
            deferred_counts: Vec::new(),
            merged_counted: 0,
        }
    }

    pub fn num_nodes(&self) -> u32 {
        self.memory.out.num_nodes()
    }

    /// The items a worklist of `item`s may hold: the graph's nodes, or a collection's elements.
    fn item_bound(&self, item: Type) -> ItemBound {
        match item {
            Type::Element(c) => {
                let count = self.coll_len(c);
                let name = &self.module.collections[c.index()].name;
                ItemBound { count, noun: format!("element of `{name}`"), whole: format!("`{name}` has {count}") }
            }
            _ => {
                let n = self.num_nodes();
                ItemBound { count: n, noun: "node".into(), whole: format!("the graph has {n} nodes") }
            }
        }
    }

    /// Runs kernel `id` once with the given arguments; returns its reduction's value.
    fn run_kernel(&mut self, id: KernelId, args: &[Value]) -> Result<Option<Value>> {
        let started = Instant::now();
        // Taken first: an invocation that fails leaves no list for the next.
        let listed = self.listed.take();
        let program = self.program;
        let kernel = &program.module.kernels[id.index()];
        let code = &program.kernels[id.index()];
        self.args.clear();
        grail_values(args, "kernel arguments", &mut self.args)?;
        self.invocation = self.invocation.wrapping_add(1);
        if self.invocation == 0 {
            // Claims from 2^32 invocations ago would look current: forget them.
            self.memory.clear_claims();
            for (coll, code) in self.collections.colls.iter_mut().zip(&self.program.collections) {
                // SAFETY: the segments are this run's, allocated by the same program's code.
                unsafe { (code.clear_claims)(coll) };
            }
            self.invocation = 1;
        }
        let identity = kernel.reduction.map(|(op, ty)| identity(op, ty));
        for state in &mut self.threads.states {
            state.pushes.len = 0;
            state.retries.len = 0;
            if let Some(identity) = identity {
                state.acc = identity;
            }
        }
        let (input, input_len) = match (listed, code.uses_worklist, self.worklists.last()) {
            (Some(list), _, _) => list,
            (None, true, Some(list)) => (list.as_ptr(), list.len() as u64),
            _ => (std::ptr::null(), 0),
        };
        self.ctx.invocation = self.invocation;
        #[cfg(debug_assertions)]
        let before = self.pushed_words(id);
        let mut items = 0u64;
        let mut retries = 0u64;
        let mut split = 0u64;
        let guard = KernelGuard::enter(&code.name);
        for (p, &phase) in code.phases.iter().enumerate() {
            // Retried items are the phase's: the worklist's (nodes or elements) or nodes.
            let retried_type = match kernel.body.block.get(p) {
                Some(Stmt::ForAll(forall)) if forall.space == grail_ir::Space::Worklist => kernel.worklist_item(),
                _ => Type::Node,
            };
            self.ctx.items = input;
            self.ctx.item_count = input_len;
            // A listed invocation's passes run over its list, as a retry pass over its items.
            self.ctx.retrying = u32::from(listed.is_some());
            let mut serial = false;
            loop {
                let (size, shared) = self.run_phase(phase, kernel, serial)?;
                items += size;
                split += shared;
                let retried: u64 = self.threads.states.iter().map(|t| t.retries.len).sum();
                if self.threads.states.iter().any(|t| t.retries.failed != 0) {
                    return Err(RuntimeError::OutOfMemory {
                        what: format!("the retry list of kernel `{}`", kernel.name),
                    });
                }
                if retried == 0 {
                    break;
                }
                // A pass whose items all came back, each once (try-locks that kept failing each
                // other, as the same threads take the same items pass after pass), made no
                // progress: the next runs on one thread, where every claim succeeds. A pass that
                // retried as many other items (SSSP's near window, which retries neighbours) is
                // progress, and runs on every thread.
                let pass = (retried == size).then(|| {
                    if self.ctx.retrying != 0 {
                        fingerprint(self.retry_items.iter().copied())
                    } else if self.ctx.items.is_null() {
                        fingerprint(0..size as u32)
                    } else {
                        // SAFETY: the worklist the first pass read, `item_count` ids, untouched since.
                        fingerprint(
                            unsafe { std::slice::from_raw_parts(self.ctx.items, self.ctx.item_count as usize) }
                                .iter()
                                .copied(),
                        )
                    }
                });
                retries += retried;
                self.retry_items.clear();
                for state in &mut self.threads.states {
                    self.retry_items.extend_from_slice(state.retries.items());
                    state.retries.len = 0;
                }
                serial = pass.is_some_and(|pass| pass == fingerprint(self.retry_items.iter().copied()));
                check_items(&self.retry_items, self.item_bound(retried_type), kernel, "retried")?;
                self.ctx.items = self.retry_items.as_ptr();
                self.ctx.item_count = self.retry_items.len() as u64;
                self.ctx.retrying = 1;
            }
        }
        drop(guard);
        self.ctx.items = std::ptr::null();
        self.ctx.item_count = 0;
        self.ctx.retrying = 0;
        if self.threads.states.iter().any(|t| t.pushes.failed != 0) {
            return Err(RuntimeError::OutOfMemory { what: format!("the worklist kernel `{}` pushes to", kernel.name) });
        }
        self.count_thread_slots();
        let pushes: u64 = self.threads.states.iter().map(|t| t.pushes.len).sum();
        if code.uses_worklist {
            self.spare.clear();
            self.spare.reserve(pushes as usize);
            for state in &self.threads.states {
                self.spare.extend_from_slice(state.pushes.items());
            }
            check_items(&self.spare, self.item_bound(kernel.worklist_item()), kernel, "pushed")?;
            if let Some(current) = self.worklists.last_mut() {
                std::mem::swap(current, &mut self.spare);
            }
        }
        #[cfg(debug_assertions)]
        self.check_pushed_words(id, before)?;
        self.check_collections()?;
        let result = match kernel.reduction {
            Some((op, ty)) => Some(self.combine(op, ty)?),
            None => None,
        };
        let stats = &mut self.stats[id.index()];
        stats.invocations += 1;
        stats.items += items;
        stats.pushes += pushes;
        stats.retries += retries;
        stats.split += split;
        stats.time += started.elapsed();
        Ok(result)
    }

    /// Debug builds, graphs of up to 2^16 nodes: the words of the node properties kernel `id`
    /// pushes every change of (`grail_ir::analysis::pushed_writes`, on which a partitioned run's
    /// exchanges on the GPUs rely), before the invocation.
    #[cfg(debug_assertions)]
    fn pushed_words(&self, id: KernelId) -> Vec<(usize, Vec<u64>)> {
        let module = &self.program.module;
        let kernel = &module.kernels[id.index()];
        let n = self.num_nodes() as usize;
        if !self.program.kernels[id.index()].uses_worklist || kernel.worklist_item() != Type::Node || n > 1 << 16 {
            return Vec::new();
        }
        let pushed = grail_ir::analysis::pushed_writes(module, id);
        (0..module.properties.len())
            .filter(|&p| pushed[p] && module.properties[p].owner == grail_ir::Owner::Node)
            .map(|p| (p, (0..n).map(|v| self.memory.columns[p].bits(v)).collect()))
            .collect()
    }

    /// Fails if the invocation of kernel `id` just made changed a word of `before` (from
    /// [`Run::pushed_words`]) at a node it did not push: the compiler's analysis was wrong.
    #[cfg(debug_assertions)]
    fn check_pushed_words(&self, id: KernelId, before: Vec<(usize, Vec<u64>)>) -> Result<()> {
        if before.is_empty() {
            return Ok(());
        }
        let Some(list) = self.worklists.last() else { return Ok(()) };
        let mut pushed = vec![false; self.num_nodes() as usize];
        for &v in list {
            pushed[v as usize] = true;
        }
        let module = &self.program.module;
        for (p, words) in before {
            if let Some(v) = (0..words.len()).find(|&v| !pushed[v] && self.memory.columns[p].bits(v) != words[v]) {
                return Err(RuntimeError::program(format!(
                    "internal error: kernel `{}` changed `{}` of node {v} without pushing it, though \
                     grail_ir::analysis::pushed_writes found every write of it pushed",
                    module.kernels[id.index()].name,
                    module.properties[p].name
                )));
            }
        }
        Ok(())
    }

    /// Runs one pass of a phase over its items as the context gives them (the input or the
    /// retried items), then the loops it deferred, if any; returns the number of items and of
    /// loops shared.
    /// Runs one pass of a phase; on the calling thread alone with `serial`.
    fn run_phase(&mut self, phase: PhaseCode, kernel: &Kernel, serial: bool) -> Result<(u64, u64)> {
        let threads = self.threads.states.len() as u64;
        // SAFETY: the context points at this run's live arrays; `args` has one value per kernel
        // parameter.
        let size = unsafe { (phase.size)(&*self.ctx, self.args.as_ptr()) };
        // Hubs are deferred only when some node can be one: otherwise the plain function, whose
        // loops carry no test for them.
        let split = match phase.split {
            Some(split) if threads > 1 => {
                let mean_degree = self.memory.out.num_edges() / u64::from(self.num_nodes()).max(1);
                let split_min = (size.saturating_mul(mean_degree) / (8 * threads)).max(SPLIT_FLOOR);
                (self.max_degree(split.reverse) >= split_min).then_some((split, split_min))
            }
            _ => None,
        };
        if let Some((_, split_min)) = split {
            // Written only when it changes: each write is a cache miss on a line the worker
            // owns.
            if split_min != self.split_min {
                self.split_min = split_min;
                for state in &mut self.threads.states {
                    state.split_min = split_min;
                }
            }
        }
        let (slots, args, ctx) =
            (SlotsPtr(self.threads.states.as_mut_ptr()), ArgsPtr(self.args.as_ptr()), CtxPtr(&*self.ctx));
        let run = split.map_or(phase.run, |(split, _)| split.hubs);
        let work = move |thread: usize, begin: u64, end: u64| {
            // SAFETY: each thread passes its own index, so no two threads use one
            // `grail_thread`; the context, arguments and columns stay valid and unchanged until
            // the job is complete; `run` is the generated function of this ABI.
            unsafe { run(ctx.get(), args.get(), begin, end, slots.thread(thread)) }
        };
        let min_items = if self.pool.in_region() { REGION_PARALLEL_MIN_ITEMS } else { PARALLEL_MIN_ITEMS };
        let job = Job { work: &work, size, min_chunk: MIN_CHUNK, max_chunk: MAX_CHUNK };
        self.pool.run(job, !serial && size >= min_items);
        let shared = match split {
            Some((split, _)) => self.run_deferred(split.part, split.stride, kernel)?,
            None => 0,
        };
        Ok((size, shared))
    }

    /// The largest out-degree (in-degree with `reverse`) of the graph, computed once a run, on
    /// every thread.
    fn max_degree(&mut self, reverse: bool) -> u64 {
        if let Some(max) = self.max_degrees[usize::from(reverse)] {
            return max;
        }
        // Rows begin at `starts` and end at `ends` (the out-CSR may have room after its rows).
        let (starts, ends): (&[u64], &[u64]) = match (reverse, &self.memory.reverse) {
            (false, _) => (self.memory.out.offsets(), self.memory.out.ends()),
            (true, Some(reverse)) => (&reverse.offsets, reverse.offsets.get(1..).unwrap_or(&[])),
            (true, None) => (&[], &[]),
        };
        let max = std::sync::atomic::AtomicU64::new(0);
        let nodes = ends.len() as u64;
        let work = |_: usize, begin: u64, end: u64| {
            let (begin, end) = (begin as usize, end as usize);
            let chunk = ends[begin..end].iter().zip(&starts[begin..end]).map(|(e, s)| e - s).max();
            max.fetch_max(chunk.unwrap_or(0), std::sync::atomic::Ordering::Relaxed);
        };
        let job = Job { work: &work, size: nodes, min_chunk: 1 << 16, max_chunk: 1 << 18 };
        self.pool.run(job, nodes >= 1 << 17);
        let max = max.into_inner();
        self.max_degrees[usize::from(reverse)] = Some(max);
        max
    }

    /// Shares the iterations of the loops the threads deferred in the last pass of a phase
    /// among all threads, in edge-balanced chunks, and forgets the records.
    fn run_deferred(&mut self, split: SplitFn, stride: usize, kernel: &Kernel) -> Result<u64> {
        if self.threads.states.iter().any(|t| t.deferred.failed != 0) {
            return Err(RuntimeError::OutOfMemory { what: format!("the deferred loops of kernel `{}`", kernel.name) });
        }
        self.split_records.clear();
        self.split_starts.clear();
        let mut total = 0u64;
        for state in &self.threads.states {
            for record in state.deferred.words().chunks_exact(stride) {
                self.split_records.push(record.as_ptr());
                self.split_starts.push(total);
                total += record[1] - record[0];
            }
        }
        if total == 0 {
            return Ok(0);
        }
        self.split_starts.push(total);
        let (slots, args, ctx) =
            (SlotsPtr(self.threads.states.as_mut_ptr()), ArgsPtr(self.args.as_ptr()), CtxPtr(&*self.ctx));
        let (records, starts) = (RecordPtrs(&self.split_records), &self.split_starts);
        let work = move |thread: usize, begin: u64, end: u64| {
            // The record holding iteration `begin`, then each record up to `end`.
            let mut r = starts.partition_point(|&start| start <= begin) - 1;
            let mut at = begin;
            while at < end {
                let (start, stop) = (starts[r], starts[r + 1]);
                let piece_end = end.min(stop);
                let record = records.get(r);
                // SAFETY: the record lies in a thread's `deferred` buffer, which nothing changes
                // while the job runs (the split functions defer nothing); positions are within
                // the record's range; the rest as for the phase's items.
                unsafe {
                    let first = *record;
                    split(
                        ctx.get(),
                        args.get(),
                        record,
                        first + (at - start),
                        first + (piece_end - start),
                        slots.thread(thread),
                    );
                }
                at = piece_end;
                r += 1;
            }
        };
        let job = Job { work: &work, size: total, min_chunk: SPLIT_MIN_CHUNK, max_chunk: SPLIT_MAX_CHUNK };
        self.pool.run(job, true);
        for state in &mut self.threads.states {
            state.deferred.len = 0;
        }
        Ok(self.split_records.len() as u64)
    }

    /// The number of elements of a collection.
    /// The slots of a collection: every element added, removed or not.
    fn coll_len(&self, id: CollectionId) -> u32 {
        let len = self.collections.colls[id.index()].len;
        len.min(u64::from(u32::MAX) - 1) as u32
    }

    /// Adds an element (a `Value::Struct` of the collection's element type) from host code.
    fn coll_add(&mut self, id: CollectionId, value: &Value) -> Result<Value> {
        let handle = self.add_flattened(id, value, &mut Vec::new())?;
        self.check_collections()?;
        Ok(Value::Element(handle))
    }

    /// Adds `value` to collection `id` through `flat`, a buffer for its leaves; the caller checks
    /// the collections afterwards.
    fn add_flattened(&mut self, id: CollectionId, value: &Value, flat: &mut Vec<GrailValue>) -> Result<u32> {
        flat.clear();
        flatten(value, flat)?;
        let add = self.program.collections[id.index()].add;
        // SAFETY: the context points at this run's live collections; `flat` holds one value per
        // scalar leaf of the element type, as the C target's add function reads them.
        Ok(unsafe { add(&*self.ctx, flat.as_ptr()) })
    }

    /// Counts what the threads did through their own slots (`grail_slots`) into the collections:
    /// their removals, and the slots of their blocks they did not use (left marked removed).
    /// Their blocks end with the kernel.
    fn count_thread_slots(&mut self) {
        for slots in &mut self.threads.slots {
            for (coll, slot) in self.collections.colls.iter_mut().zip(slots.iter_mut()) {
                coll.removed += slot.removed + (slot.end - slot.next);
                *slot = GrailSlots::default();
            }
        }
    }

    /// Fails if generated code could not grow a collection.
    fn check_collections(&self) -> Result<()> {
        for (coll, decl) in self.collections.colls.iter().zip(&self.module.collections) {
            match coll.failed {
                0 => {}
                1 => return Err(RuntimeError::OutOfMemory { what: format!("collection `{}`", decl.name) }),
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

    /// The threads' partial reductions combined, as a value of the reduction's type.
    fn combine(&self, op: ReduceOp, ty: Type) -> Result<Value> {
        let acc_ty = accumulator_type(ty);
        let mut total: Option<Value> = None;
        for state in &self.threads.states {
            let value = Value::from_grail(acc_ty, state.acc)
                .ok_or_else(|| RuntimeError::Unsupported(format!("a reduction over {ty}")))?;
            total = Some(match total {
                None => value,
                Some(total) => combine(op, &total, &value).map_err(RuntimeError::program)?,
            });
        }
        let total = total.ok_or_else(|| RuntimeError::program("no threads"))?;
        ops::cast(&total, ty).map_err(RuntimeError::program)
    }
}

impl Machine for Run<'_, '_, '_> {
    fn memory(&self) -> &Memory<'_> {
        &self.memory
    }

    fn params(&self) -> &[Value] {
        &self.params
    }

    fn print(&mut self, line: &str) -> Result<()> {
        self.out.write_all(line.as_bytes()).map_err(RuntimeError::Output)
    }

    fn read_property(&mut self, property: grail_ir::PropertyId, index: usize) -> Result<Value> {
        let declared = &self.module.properties[property.index()];
        self.memory.columns[property.index()].read(declared.ty, index).ok_or_else(|| {
            RuntimeError::program(format!("cannot read element {index} of property `{}`", declared.name))
        })
    }

    fn write_property(&mut self, property: grail_ir::PropertyId, index: usize, value: &Value) -> Result<bool> {
        Ok(self.memory.columns[property.index()].write(index, value))
    }

    fn parent(&mut self, index: usize) -> Result<u32> {
        self.memory.sets.get(index).ok_or_else(|| RuntimeError::program("a union-find parent out of range"))
    }

    fn set_parent(&mut self, index: usize, parent: u32) -> Result<()> {
        self.memory.sets.set(index, parent);
        Ok(())
    }

    fn invoke(&mut self, kernel: KernelId, args: &[Value]) -> Result<Option<Value>> {
        self.run_kernel(kernel, args)
    }

    fn collection_add(&mut self, id: CollectionId, value: &Value) -> Result<Value> {
        self.coll_add(id, value)
    }

    fn collection_len(&mut self, id: CollectionId) -> Result<u32> {
        // Wrapping: removed input edges count with the added edges' removals (see
        // `grail_ir::GraphGrowth`), so that collection's difference may be negative.
        Ok(self.coll_len(id).wrapping_sub(self.collections.colls[id.index()].removed as u32))
    }

    fn fill_property(&mut self, property: grail_ir::PropertyId, table: &Table) -> Result<()> {
        if !self.memory.columns[property.index()].fill_from(table) {
            return Err(crate::host::interp::unfit_input(self.module, property));
        }
        Ok(())
    }

    fn collection_fill(&mut self, id: CollectionId, table: &Table) -> Result<()> {
        use rayon::prelude::*;
        let code = self.program.collections[id.index()];
        let width = table.leaves().len();
        // All the slots at once, then the rows written on every core: row `r` becomes element
        // `base + r` (0 + r for an input, filled into an empty collection).
        let mut base = 0u64;
        // SAFETY: the context points at this run's live collections; no kernel runs meanwhile.
        if unsafe { (code.grow)(&*self.ctx, table.len() as u64, &mut base) } == 0 {
            return self.check_collections();
        }
        let ctx = SharedCtx(&self.ctx);
        let empty = [0u64];
        (0..table.len()).into_par_iter().with_min_len(4096).for_each(|row| {
            let ctx = &ctx;
            let leaves = if width == 0 { empty.as_slice() } else { table.row(row) };
            // SAFETY: the slot was reserved above and its segment made; each row writes only its
            // own slot; a row holds one word per scalar leaf of the element type (a
            // grail_value's bits), as the C target's put function reads them.
            unsafe { (code.put)(ctx.0, base + row as u64, leaves.as_ptr().cast()) };
        });
        self.check_collections()
    }

    fn collection_read(&mut self, id: CollectionId) -> Result<(Table, Vec<bool>)> {
        use rayon::prelude::*;
        let mut table = Table::for_collection(self.module, id);
        let width = table.leaves().len();
        let get = self.program.collections[id.index()].get;
        let len = self.coll_len(id) as usize;
        let mut removed = vec![false; len];
        // A row of one word for a struct without fields (dropped below).
        let mut words = vec![0u64; len * width.max(1)];
        // Reading only: the get function may run on several threads at once (millions of
        // elements come back from a mesh refinement).
        let ctx = SharedCtx(&self.ctx);
        words.par_chunks_mut(width.max(1)).zip(removed.par_iter_mut()).enumerate().for_each_init(
            // One slot per leaf, and one more: whether the element was removed.
            || vec![GrailValue::default(); width + 1],
            |flat, (i, (row, gone))| {
                let ctx = &ctx;
                // SAFETY: `i` is below the collection's length and `flat` has a slot per leaf
                // and one; the get function only reads the context and the segments.
                unsafe { get(ctx.0, i as u32, flat.as_mut_ptr()) };
                // SAFETY: every member of the union is a plain 64-bit value.
                unsafe {
                    *gone = flat[width].u != 0;
                    for (word, leaf) in row.iter_mut().zip(flat.iter()) {
                        *word = leaf.u;
                    }
                }
            },
        );
        if width == 0 {
            words.clear();
        }
        table.set_words(len, words);
        Ok((table, removed))
    }

    fn collection_clear(&mut self, id: CollectionId) -> Result<()> {
        // SAFETY: the segments were allocated by this program's code; nothing runs meanwhile.
        unsafe { (self.collections.free)(&mut self.collections.colls[id.index()]) };
        Ok(())
    }

    fn push_worklist(&mut self, items: Vec<u32>) -> Result<()> {
        self.worklists.push(items);
        Ok(())
    }

    fn pop_worklist(&mut self) {
        self.worklists.pop();
    }

    fn worklist_is_empty(&mut self) -> Result<bool> {
        Ok(self.worklists.last().is_none_or(Vec::is_empty))
    }

    /// An outlined region is one persistent parallel region: the workers keep spinning from
    /// its first phase to its last instead of going back to sleep between invocations.
    fn outlined_region(&mut self, open: bool) {
        self.pool.set_region(open);
    }
}

/// Pointers a job's work shares among the pool's threads (see the safety comment where they are
/// used).
#[derive(Clone, Copy)]
struct SlotsPtr(*mut ThreadSlot);
#[derive(Clone, Copy)]
struct ArgsPtr(*const GrailValue);
#[derive(Clone, Copy)]
struct CtxPtr(*const GrailCtx);
#[derive(Clone, Copy)]
struct RecordPtrs<'a>(&'a [*const u64]);
impl RecordPtrs<'_> {
    fn get(self, index: usize) -> *const u64 {
        self.0[index]
    }
}
unsafe impl Send for RecordPtrs<'_> {}
unsafe impl Sync for RecordPtrs<'_> {}
impl SlotsPtr {
    /// Thread `index`'s `grail_thread` (through a method, so closures capture the wrapper).
    fn thread(self, index: usize) -> *mut GrailThread {
        // SAFETY: in bounds: one slot per pool thread, and threads pass their own index.
        unsafe { &raw mut (*self.0.add(index)).0 }
    }
}
impl ArgsPtr {
    fn get(self) -> *const GrailValue {
        self.0
    }
}
impl CtxPtr {
    fn get(self) -> *const GrailCtx {
        self.0
    }
}
// SAFETY: the pointees are shared by the rules of the C ABI: a `grail_thread` per thread,
// read-only arguments and context, columns written with atomics or by one item each.
unsafe impl Send for SlotsPtr {}
unsafe impl Sync for SlotsPtr {}
unsafe impl Send for ArgsPtr {}
unsafe impl Sync for ArgsPtr {}
unsafe impl Send for CtxPtr {}
unsafe impl Sync for CtxPtr {}

/// How many items of a worklist's kind exist, and what they are called (`node`, `element of
/// tris`): every item must be below the count.
struct ItemBound {
    count: u32,
    noun: String,
    whole: String,
}

/// Every item of a worklist the kernel made must be a node of the graph (or an element of the
/// collection its worklist holds).
fn check_items(items: &[u32], bound: ItemBound, kernel: &Kernel, what: &str) -> Result<()> {
    match items.iter().copied().max() {
        Some(max) if max >= bound.count => Err(RuntimeError::program(format!(
            "kernel `{}` {what} {} {max}, but {}",
            kernel.name, bound.noun, bound.whole
        ))),
        _ => Ok(()),
    }
}

/// A fingerprint of a multiset of ids: the same for the same ids in any order, and, with high
/// probability, different for different ones.
fn fingerprint(ids: impl Iterator<Item = u32>) -> (u64, u64) {
    ids.fold((0u64, 0u64), |(sum, xor), id| {
        let mut h = u64::from(id).wrapping_add(0x9e37_79b9_7f4a_7c15);
        h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        h ^= h >> 31;
        (sum.wrapping_add(h), xor ^ h.rotate_left(17))
    })
}

#[cfg(test)]
mod tests {
    use super::fingerprint;

    #[test]
    fn a_fingerprint_ignores_order_and_tells_different_ids_apart() {
        let items = [7u32, 3, 3, 1_000_000, 0];
        let shuffled = [3u32, 0, 1_000_000, 7, 3];
        assert_eq!(fingerprint(items.iter().copied()), fingerprint(shuffled.iter().copied()));
        // The same count, other ids: a pass that retried its items' neighbours.
        assert_ne!(fingerprint(items.iter().copied()), fingerprint([7u32, 3, 4, 1_000_000, 0].into_iter()));
        assert_ne!(fingerprint(0..5u32), fingerprint([0u32, 1, 2, 3, 3].into_iter()));
        assert_eq!(fingerprint(0..5u32), fingerprint([4u32, 2, 0, 1, 3].into_iter()));
    }
}
