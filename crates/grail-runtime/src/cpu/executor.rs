//! The CPU executor: runs a module's orchestration in Rust ([`super::interp`]) and its kernels
//! in the generated C, split across a pool of threads.
//!
//! One invocation of a kernel: bump the invocation number (claims compare against it); for each
//! phase in order, ask the phase's size function how many items there are and run them, in
//! dynamically claimed chunks on every thread when there are many, on the calling thread alone
//! when there are few; while any thread retried items, run the phase again over the retried
//! items (`ctx.retrying`); finally concatenate every thread's pushes, in thread order, into
//! the next worklist and combine the threads' partial reductions.

use std::io::Write;
use std::time::{Duration, Instant};

use grail_graph::{Column, Graph};
use grail_ir::{CollectionId, Kernel, KernelId, Module, ReduceOp, Type};

use super::fault::{KernelGuard, KernelName};
use super::ffi::{
    BufFreeFn, CollAddFn, CollClearFn, CollFreeFn, CollGetFn, GrailColl, GrailCtx, GrailThread, GrailValue, PhaseFn,
    SizeFn, ThreadSlot,
};
use super::pool::{Job, Pool, PoolState};
use super::toolchain::{CCompiler, NativeLibrary};
use crate::cache::ModuleCache;
use crate::error::{Result, RuntimeError};
use crate::host::interp::{self, Machine};
use crate::host::memory::Memory;
use crate::host::ops;
use crate::host::value::{Value, column_type};
use crate::host::{accumulator_type, bind_params, combine, flatten, grail_values, identity, leaf_types, unflatten};

/// Phases with fewer items than this run on the calling thread alone. Handing a phase to
/// spinning workers costs about 0.2 us; below a few hundred items (road-network BFS levels)
/// the split gains nothing. Measured with `examples/bfs_bench.rs`.
const PARALLEL_MIN_ITEMS: u64 = 256;

/// Chunks are about 1/32 of a thread's share, so threads that drew heavy items (hubs of
/// power-law graphs) are balanced by the rest, within these bounds.
const MIN_CHUNK: u64 = 64;
const MAX_CHUNK: u64 = 8192;

/// A module compiled for the CPU and loaded, ready to run on any graph.
pub struct CpuProgram {
    module: Module,
    source: String,
    kernels: Vec<KernelCode>,
    buf_free: BufFreeFn,
    coll_free: CollFreeFn,
    /// Each collection's host functions, by collection id.
    collections: Vec<CollectionCode>,
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
    get: CollGetFn,
    clear_claims: CollClearFn,
}

/// A kernel's generated functions, one pair per phase.
struct KernelCode {
    phases: Vec<(SizeFn, PhaseFn)>,
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
    /// that order), each a `Value::Struct`.
    pub collections: Vec<Vec<Value>>,
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
            for p in 0..kernel.body.block.len() {
                // SAFETY: the C target emits exactly these signatures for these names.
                let size: SizeFn = unsafe { library.function(&format!("grail_k{k}_{p}_size"))? };
                let phase: PhaseFn = unsafe { library.function(&format!("grail_k{k}_{p}"))? };
                phases.push((size, phase));
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
        let coll_free: CollFreeFn = unsafe { library.function("grail_coll_free")? };
        let mut collections = Vec::with_capacity(module.collections.len());
        for c in 0..module.collections.len() {
            // SAFETY: the C target emits these signatures for every collection.
            let add: CollAddFn = unsafe { library.function(&format!("grail_c{c}_add_host"))? };
            let get: CollGetFn = unsafe { library.function(&format!("grail_c{c}_get_host"))? };
            let clear_claims: CollClearFn = unsafe { library.function(&format!("grail_c{c}_clear_claims"))? };
            collections.push(CollectionCode { add, get, clear_claims });
        }
        Ok(CpuProgram {
            module,
            source,
            kernels,
            buf_free,
            coll_free,
            collections,
            _library: library,
            _build_dir: build_dir,
        })
    }

    pub fn module(&self) -> &Module {
        &self.module
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
        let started = Instant::now();
        let params = bind_params(&self.module, graph, params)?;
        let mut param_values = Vec::with_capacity(params.len());
        grail_values(&params, "parameters", &mut param_values)?;
        let memory = Memory::borrowing_weights(&self.module, graph)?;
        let threads = match options.threads {
            0 => rayon::current_num_threads().max(1),
            n => n,
        };
        let state = PoolState::new();
        let (result, stats, memory) = std::thread::scope(|scope| {
            let pool = Pool::start(scope, &state, threads);
            let mut run = Run::new(self, memory, params, param_values, &pool, out);
            let result =
                interp::run_main(&self.module, &mut run).and_then(|result| Ok((result, run.collection_outputs()?)));
            (result, run.stats, run.memory)
        });
        let (result, collections) = result?;
        Ok(RunOutput {
            properties: memory.into_columns(),
            result,
            collections,
            stats: RunStats { kernels: stats, elapsed: started.elapsed() },
        })
    }
}

/// The threads' `grail_thread`s; frees their buffers with the program's `grail_buf_free`.
pub(super) struct ThreadStates {
    states: Vec<ThreadSlot>,
    free: BufFreeFn,
}

impl Drop for ThreadStates {
    fn drop(&mut self) {
        for state in &mut self.states {
            // SAFETY: the buffers were grown by the same program's code (realloc) or are empty.
            unsafe {
                (self.free)(&mut state.pushes);
                (self.free)(&mut state.retries);
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

impl Drop for Collections {
    fn drop(&mut self) {
        for coll in self.colls.iter_mut() {
            // SAFETY: the segments were allocated by the same program's code (calloc) or are null.
            unsafe { (self.free)(coll) };
        }
    }
}

/// One run in progress: memory, worklists, threads and statistics.
pub(super) struct Run<'a, 'r, 'p> {
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
    args: Vec<GrailValue>,
    invocation: u32,
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
        let ctx = Box::new(GrailCtx {
            num_nodes: out_csr.num_nodes().into(),
            num_edges: out_csr.num_edges(),
            out_offsets: out_csr.offsets().as_ptr(),
            out_targets: out_csr.targets().as_ptr(),
            in_offsets: memory.reverse.as_ref().map_or(std::ptr::null(), |r| r.offsets.as_ptr()),
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
        });
        let states = (0..pool.threads()).map(|_| ThreadSlot(GrailThread::new())).collect();
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
            threads: ThreadStates { states, free: program.buf_free },
            collections,
            pool,
            spare: Vec::new(),
            retry_items: Vec::new(),
            args: Vec::new(),
            invocation: 0,
        }
    }

    pub fn num_nodes(&self) -> u32 {
        self.memory.out.num_nodes()
    }

    /// Runs kernel `id` once with the given arguments; returns its reduction's value.
    fn run_kernel(&mut self, id: KernelId, args: &[Value]) -> Result<Option<Value>> {
        let started = Instant::now();
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
        let (input, input_len) = match (code.uses_worklist, self.worklists.last()) {
            (true, Some(list)) => (list.as_ptr(), list.len() as u64),
            _ => (std::ptr::null(), 0),
        };
        self.ctx.invocation = self.invocation;
        let threads = self.threads.states.len() as u64;
        let mut items = 0u64;
        let mut retries = 0u64;
        let guard = KernelGuard::enter(&code.name);
        for &(size_fn, phase_fn) in &code.phases {
            self.ctx.items = input;
            self.ctx.item_count = input_len;
            self.ctx.retrying = 0;
            loop {
                let ctx: *const GrailCtx = &*self.ctx;
                // SAFETY: the context points at this run's live arrays; `args` has one value per
                // kernel parameter.
                let size = unsafe { size_fn(ctx, self.args.as_ptr()) };
                items += size;
                let job = Job {
                    phase: phase_fn,
                    ctx,
                    args: self.args.as_ptr(),
                    size,
                    chunk: (size / (threads * 32)).clamp(MIN_CHUNK, MAX_CHUNK),
                    threads: self.threads.states.as_mut_ptr(),
                };
                self.pool.run(job, size >= PARALLEL_MIN_ITEMS);
                let retried: u64 = self.threads.states.iter().map(|t| t.retries.len).sum();
                if self.threads.states.iter().any(|t| t.retries.failed != 0) {
                    return Err(RuntimeError::OutOfMemory {
                        what: format!("the retry list of kernel `{}`", kernel.name),
                    });
                }
                if retried == 0 {
                    break;
                }
                retries += retried;
                self.retry_items.clear();
                for state in &mut self.threads.states {
                    self.retry_items.extend_from_slice(state.retries.items());
                    state.retries.len = 0;
                }
                check_items(&self.retry_items, self.num_nodes(), kernel, "retried")?;
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
        let pushes: u64 = self.threads.states.iter().map(|t| t.pushes.len).sum();
        if code.uses_worklist {
            self.spare.clear();
            self.spare.reserve(pushes as usize);
            for state in &self.threads.states {
                self.spare.extend_from_slice(state.pushes.items());
            }
            check_items(&self.spare, self.num_nodes(), kernel, "pushed")?;
            if let Some(current) = self.worklists.last_mut() {
                std::mem::swap(current, &mut self.spare);
            }
        }
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
        stats.time += started.elapsed();
        Ok(result)
    }

    /// The number of elements of a collection.
    fn coll_len(&self, id: CollectionId) -> u32 {
        let len = self.collections.colls[id.index()].len;
        len.min(u64::from(u32::MAX) - 1) as u32
    }

    /// Adds an element (a `Value::Struct` of the collection's element type) from host code.
    fn coll_add(&mut self, id: CollectionId, value: &Value) -> Result<Value> {
        let mut flat = Vec::new();
        flatten(value, &mut flat)?;
        let add = self.program.collections[id.index()].add;
        // SAFETY: the context points at this run's live collections; `flat` holds one value per
        // scalar leaf of the element type, as the C target's add function reads them.
        let handle = unsafe { add(&*self.ctx, flat.as_ptr()) };
        self.check_collections()?;
        Ok(Value::Element(handle))
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

    /// The elements of every output collection, read back through the C target's functions.
    fn collection_outputs(&self) -> Result<Vec<Vec<Value>>> {
        let mut outputs = Vec::with_capacity(self.module.collection_outputs.len());
        for &id in &self.module.collection_outputs {
            let element = Type::Struct(self.module.collections[id.index()].element);
            let mut leaves = Vec::new();
            leaf_types(self.module, element, &mut leaves);
            let get = self.program.collections[id.index()].get;
            let len = self.coll_len(id);
            let mut flat = vec![GrailValue::default(); leaves.len()];
            let mut elements = Vec::with_capacity(len as usize);
            for i in 0..len {
                // SAFETY: `i` is below the collection's length and `flat` has one slot per leaf.
                unsafe { get(&*self.ctx, i, flat.as_mut_ptr()) };
                let mut values = flat.iter().zip(&leaves).map(|(v, ty)| Value::from_grail(*ty, *v));
                elements.push(unflatten(self.module, element, &mut values)?);
            }
            outputs.push(elements);
        }
        Ok(outputs)
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
        Ok(self.coll_len(id))
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
}

/// Every item of a worklist the kernel made must be a node of the graph.
fn check_items(items: &[u32], num_nodes: u32, kernel: &Kernel, what: &str) -> Result<()> {
    match items.iter().copied().max() {
        Some(max) if max >= num_nodes => Err(RuntimeError::program(format!(
            "kernel `{}` {what} node {max}, but the graph has {num_nodes} nodes",
            kernel.name
        ))),
        _ => Ok(()),
    }
}
