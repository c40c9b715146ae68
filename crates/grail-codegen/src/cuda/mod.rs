//! The CUDA target: kernels and functions of a module as one CUDA C++ translation unit for NVRTC
//! (`-std=c++17 -default-device`), starting with its device runtime header, [`CUDA_HEADER`]
//! (`grail_cuda.h`), the counterpart of [`crate::c::CPU_HEADER`] with the same helper names.
//!
//! The header's `grail_ctx` has a `#[repr(C)]` mirror in `grail-runtime` (`gpu/ffi.rs`), and the
//! header compiles with NVRTC alone (it includes no C library headers).
//!
//! The interface the GPU runtime uses, for kernel `k` (its index in the module) and phase `p` (its
//! top-level `forall` number `p`), with `args` in device memory (one [`grail_value`] per kernel
//! parameter) and the grid's blocks a whole number of warps:
//!
//! - `extern "C" __global__ void grail_k<k>_<p>_size(const grail_ctx ctx, const grail_value
//!   *args, uint64_t *size)`: thread 0 of block 0 writes the phase's item count;
//! - `__device__ __forceinline__ void grail_k<k>_<p>_run(const grail_ctx *ctx, const grail_value *args, uint64_t
//!   size)`: the phase for every thread of a grid, a grid-stride loop over items `0..size`, then
//!   the reduction's epilogue; every thread reaches its end;
//! - `extern "C" __global__ void grail_k<k>_<p>(const grail_ctx ctx, const grail_value *args,
//!   uint64_t size)` calls `_run`;
//! - pushes and retries go to `ctx->pushes` and `ctx->retries` with `grail_push`;
//! - a reduction keeps a partial value per thread (from the operator's identity), reduces it
//!   across the warp, and lane 0 folds the warp's value into `*ctx->acc` atomically, in the
//!   `grail_value` member the CPU target uses (`f` for floats, `i` for signed, `u` for the rest);
//!   the runtime stores the identity there before the launch;
//! - for collection `c`: `__device__ uint32_t grail_c<c>_add(ctx, element)`, and the kernels
//!   `grail_c<c>_add_host(ctx, const grail_value *flat, uint32_t *handle)`,
//!   `grail_c<c>_get_host(ctx, uint64_t begin, uint64_t count, grail_value *flat)` and
//!   `grail_c<c>_clear_claims(ctx)`.
//!
//! [`grail_value`]: CUDA_HEADER

use std::cell::Cell;
use std::fmt::Write;

use grail_ir::*;

use crate::CodegenError;
use crate::printer::{self, Emitter, Items, Target, c_type, element_field, from_value, leaves, store_leaves};

/// The device runtime header: fixed-width types, `grail_ctx`, worklists with overflow detection,
/// atomics that report a change, locks, single, union-find.
pub const CUDA_HEADER: &str = include_str!("grail_cuda.h");

mod marks;
mod outline;
mod schedule;

/// Emits the CUDA program for a valid module, applying the optimizations its
/// [`Module::opt`] configuration and marks select.
pub fn emit_cuda(module: &Module) -> Result<String, CodegenError> {
    let read_only = if module.opt.ldg { grail_ir::opt::ldg::read_only(module) } else { Vec::new() };
    let target = Cuda {
        block: module.opt.block,
        read_only,
        backoff: module.opt.backoff,
        scatter: module.opt.scatter,
        converge: module.opt.converge,
        lockcache: module.opt.lockcache,
        block_round: Cell::new(false),
        queue: Cell::new(false),
    };
    printer::emit(module, &target)
}

/// The atomic folds of a warp's partial reduction into the kernel's `grail_value` result:
/// `grail_acc_<op>_<member>`.
const HELPERS: &str = r#"
/* Reductions: folds v into the kernel's result. Integer sums and products work on the 64 bits
 * (the host truncates to the result's type: the same value modulo 2^32 as a 32-bit fold). */
__device__ inline void grail_acc_sum_f(grail_value *acc, double v) { atomicAdd(&acc->f, v); }
__device__ inline void grail_acc_sum_i(grail_value *acc, int64_t v) { atomicAdd(&acc->u, (uint64_t)v); }
__device__ inline void grail_acc_sum_u(grail_value *acc, uint64_t v) { atomicAdd(&acc->u, v); }
__device__ inline void grail_acc_min_i(grail_value *acc, int64_t v) { atomicMin(&acc->i, v); }
__device__ inline void grail_acc_min_u(grail_value *acc, uint64_t v) { atomicMin(&acc->u, v); }
__device__ inline void grail_acc_max_i(grail_value *acc, int64_t v) { atomicMax(&acc->i, v); }
__device__ inline void grail_acc_max_u(grail_value *acc, uint64_t v) { atomicMax(&acc->u, v); }
__device__ inline void grail_acc_any_u(grail_value *acc, uint64_t v) { atomicOr(&acc->u, v); }
__device__ inline void grail_acc_all_u(grail_value *acc, uint64_t v) { atomicAnd(&acc->u, v); }
/* The rest are compare-and-swap loops on the member's bits; op 0 is min, 1 max, 2 product. */
__device__ inline void grail_acc_update_f(grail_value *acc, double v, int op) {
    uint64_t seen = *(volatile uint64_t *)&acc->u;
    for (;;) {
        double old = __longlong_as_double((long long)seen);
        double next = op == 0 ? (v < old ? v : old) : op == 1 ? (v > old ? v : old) : old * v;
        if (op != 2 && next == old) return;
        uint64_t prev = atomicCAS(&acc->u, seen, (uint64_t)__double_as_longlong(next));
        if (prev == seen) return;
        seen = prev;
    }
}
__device__ inline void grail_acc_min_f(grail_value *acc, double v) { grail_acc_update_f(acc, v, 0); }
__device__ inline void grail_acc_max_f(grail_value *acc, double v) { grail_acc_update_f(acc, v, 1); }
__device__ inline void grail_acc_product_f(grail_value *acc, double v) { grail_acc_update_f(acc, v, 2); }
__device__ inline void grail_acc_product_u(grail_value *acc, uint64_t v) {
    uint64_t seen = *(volatile uint64_t *)&acc->u;
    for (;;) {
        uint64_t prev = atomicCAS(&acc->u, seen, seen * v);
        if (prev == seen) return;
        seen = prev;
    }
}
__device__ inline void grail_acc_product_i(grail_value *acc, int64_t v) { grail_acc_product_u(acc, (uint64_t)v); }

"#;

/// The CUDA target of the printer, with what it needs of the module's configuration.
pub(crate) struct Cuda {
    /// Threads per block (`GRAIL_BLOCK`): the schedulers' shared arrays are this long, and the
    /// runtime launches every kernel with it.
    block: u32,
    /// Properties read through the read-only data cache (`ldg=on`; empty otherwise).
    read_only: Vec<bool>,
    /// Retried items handed out in blocks (retry backoff).
    backoff: bool,
    /// Morph kernels' first passes take their items scattered ([`grail_ir::OptConfig::scatter`]).
    scatter: bool,
    /// Warp-uniform item loops ([`grail_ir::OptConfig::converge`]).
    converge: bool,
    /// Plain loads of element fields in lock sections ([`grail_ir::OptConfig::lockcache`]).
    lockcache: bool,
    /// Emitting a position of an executor round that every thread of a block makes together
    /// (thread block, fine-grained): a block-level push records its item for the round's
    /// `grail_push_block` ([`schedule`]) instead of pushing.
    block_round: Cell<bool>,
    /// Emitting a phase's `_run_queue` function ([`grail_ir::opt::queue`]): its pushes store
    /// their items with release semantics, so that a block taking an item sees what was written
    /// before it was pushed.
    queue: Cell<bool>,
}

impl Target for Cuda {
    const ONLY_USED_LOCALS: bool = true;

    fn prelude(&self) -> String {
        format!(
            "{CUDA_HEADER}#define GRAIL_BLOCK {}\n{}{HELPERS}#define GRAIL_GEOM __device__ inline\n#define GRAIL_GEOM_SLOW __device__ __noinline__\n{}",
            self.block,
            printer::value_helpers("__device__ inline"),
            crate::GEOMETRY
        )
    }

    fn worklist_item(&self, e: &Emitter<'_, Self>, index: &str) -> String {
        if printer::has_outlined(e.module) {
            // An outlined region's lists may hold items past their capacity in spill segments.
            let (items, cap, spill) = (e.ctx("items"), e.ctx("items_cap"), e.ctx("items_spill"));
            format!("grail_item({items}, {cap}, {spill}, {index})")
        } else {
            format!("{}[{index}]", e.ctx("items"))
        }
    }

    fn orchestration(&self, e: &mut Emitter<'_, Self>, stmt: &Stmt, depth: usize) -> Result<(), CodegenError> {
        outline::orchestration(e, stmt, depth)
    }

    fn region_store(&self, e: &mut Emitter<'_, Self>, line: &str, depth: usize) -> Result<(), CodegenError> {
        // One thread stores for all; the barrier makes the store visible before anything after.
        e.line(depth, &format!("if (grail_thread_index() == 0) {{ {line} }}"));
        e.line(depth, "grail_grid_sync(S);");
        Ok(())
    }

    fn phases_share_a_launch(&self, module: &Module) -> bool {
        printer::has_outlined(module)
    }

    fn epilogue(&self, out: &mut String, module: &Module) -> Result<(), CodegenError> {
        outline::regions(self, out, module)
    }

    /// Element fields are read around the L1 cache: a kernel that morphs a collection reads
    /// fields other multiprocessors write in the same invocation, and L1 is not coherent between
    /// multiprocessors. Inside a lock's section they are plain loads, which the compiler may
    /// reuse and L1 may serve: taking the locks ended with a fence (`__threadfence`, which on
    /// sm_70 and later also invalidates L1: `CCTL.IVALL` in the SASS), and the elements the
    /// section owns change only under its own hand.
    fn load_element_field(&self, access: String, ty: &str, locked: bool) -> String {
        if locked && self.lockcache { access } else { format!("(*(volatile {ty} *)&{access})") }
    }

    fn merge_entry_point(&self, out: &mut String, index: usize, body: &str) {
        // As grail_merge_words, with the program's function for the operator.
        writeln!(
            out,
            "/* update function {index}: merges changed ghosts into the owner's elements at[0..n) */\n\
             extern \"C\" __global__ void grail_merge_custom_{index}(const grail_ctx ctx_, void *column, uint32_t size,\n\
                 const uint32_t *at, uint64_t n, uint64_t *before, const uint64_t *after) {{\n\
                 const grail_ctx *ctx = &ctx_;\n\
                 for (uint64_t i = grail_thread_index(); i < n; i += grail_thread_count()) {{\n\
                     const uint64_t k = at[i];\n\
                     const uint64_t current = grail_load_word(column, size, k), incoming = after[i];\n\
             {body}        grail_store_word(column, size, k, w_);\n\
                     before[i] = w_;\n\
                 }}\n}}"
        )
        .unwrap();
    }

    fn ghost_item_check(&self, var: &str) -> Option<String> {
        Some(format!(
            "if (ctx->ghost_flags != NULL && {var} >= ctx->num_nodes) {{ grail_note_ghost(ctx, {var}); continue; }}"
        ))
    }

    fn load_property(&self, e: &Emitter<'_, Self>, property: PropertyId, access: String) -> String {
        let scalar = e.module.properties[property.index()].ty;
        let readable = !matches!(scalar, Type::Scalar(Scalar::Bool) | Type::Struct(_) | Type::Unit);
        if e.kernel.is_some() && readable && self.read_only.get(property.index()).copied().unwrap_or(false) {
            format!("__ldg(&{access})")
        } else {
            access
        }
    }

    fn nested_forall(&self, e: &mut Emitter<'_, Self>, forall: &ForAll, depth: usize) -> Result<(), CodegenError> {
        if forall.schedule == Schedule::SERIAL {
            return printer::serial_nested_forall(self, e, forall, depth);
        }
        let Space::Adjacent(adjacency, node) = &forall.space else {
            return Err(CodegenError::Internal("a nested parallel loop that is not over adjacency".into()));
        };
        schedule::record(e, *adjacency, node, depth)
    }

    fn scheduled_fold(&self, e: &mut Emitter<'_, Self>, stmt: &Stmt, depth: usize) -> Result<(), CodegenError> {
        let Stmt::ForEach { adjacency, node, .. } = stmt else {
            return Err(CodegenError::Internal("a scheduled fold that is not a loop over adjacency".into()));
        };
        schedule::record(e, *adjacency, node, depth)
    }

    fn function_qualifier(&self) -> &'static str {
        "GRAIL_FUNCTION"
    }

    const LOCKED_FUNCTIONS: bool = true;

    fn add_qualifier(&self) -> &'static str {
        "__device__ inline"
    }

    fn struct_literal(&self, ty: &str, fields: &[String]) -> String {
        format!("{ty}{{{}}}", fields.join(", "))
    }

    fn collection_entry_points(&self, out: &mut String, module: &Module, c: usize, collection: &CollectionDecl) {
        let element = Type::Struct(collection.element);
        let fields = &module.structs[collection.element.index()].fields;
        let elem_ty = c_type(element);
        let mut flat = Vec::new();
        leaves(module, element, "v".to_string(), &mut flat);
        // Adding one element, given as its leaves, by one thread.
        writeln!(
            out,
            "extern \"C\" __global__ void grail_c{c}_add_host(const grail_ctx ctx, const grail_value *flat, uint32_t *handle) {{"
        )
        .unwrap();
        writeln!(out, "    if (grail_thread_index() != 0) return;").unwrap();
        writeln!(out, "    {elem_ty} v;\n    memset(&v, 0, sizeof v);").unwrap();
        for (k, (path, ty)) in flat.iter().enumerate() {
            writeln!(out, "    {path} = {};", from_value(*ty, &format!("flat[{k}]"))).unwrap();
        }
        writeln!(out, "    *handle = grail_c{c}_add(&ctx, v);\n}}").unwrap();
        // Reading elements begin..begin+count back: their leaves, row after row, and whether each
        // was removed (one byte each).
        writeln!(
            out,
            "extern \"C\" __global__ void grail_c{c}_get_host(const grail_ctx ctx, uint64_t begin, uint64_t count, grail_value *flat, uint8_t *gone) {{"
        )
        .unwrap();
        writeln!(out, "    const grail_coll *coll = &ctx.colls[{c}];").unwrap();
        writeln!(out, "    for (uint64_t j = grail_thread_index(); j < count; j += grail_thread_count()) {{").unwrap();
        writeln!(out, "        const uint64_t i = begin + j;\n        {elem_ty} v;").unwrap();
        for (f, (_, ty)) in fields.iter().enumerate() {
            writeln!(out, "        v.f{f} = {};", element_field(c, f, *ty)).unwrap();
        }
        store_leaves(out, "        ", &flat, &format!("j * {} + ", flat.len()));
        writeln!(out, "        gone[j] = !grail_coll_has(coll, GRAIL_C{c}_GONE, (uint32_t)i);").unwrap();
        writeln!(out, "    }}\n}}").unwrap();
        // Placing elements begin..begin+count from their leaves (an input collection).
        writeln!(
            out,
            "extern \"C\" __global__ void grail_c{c}_put_host(const grail_ctx ctx, uint64_t begin, uint64_t count, const grail_value *flat) {{"
        )
        .unwrap();
        writeln!(out, "    grail_coll *coll = &ctx.colls[{c}];").unwrap();
        writeln!(out, "    for (uint64_t j = grail_thread_index(); j < count; j += grail_thread_count()) {{").unwrap();
        writeln!(out, "        const uint64_t i = begin + j;").unwrap();
        writeln!(out, "        if (!grail_coll_place(coll, GRAIL_C{c}_BYTES, GRAIL_C{c}_LOCKS, i)) return;").unwrap();
        writeln!(out, "        {elem_ty} v;\n        memset(&v, 0, sizeof v);").unwrap();
        for (k, (path, ty)) in flat.iter().enumerate() {
            writeln!(out, "        {path} = {};", from_value(*ty, &format!("flat[j * {} + {k}]", flat.len()))).unwrap();
        }
        for (f, (_, ty)) in fields.iter().enumerate() {
            writeln!(out, "        {} = v.f{f};", element_field(c, f, *ty)).unwrap();
        }
        writeln!(out, "    }}\n}}").unwrap();
        // Zeroing the claim words of every allocated segment.
        writeln!(out, "extern \"C\" __global__ void grail_c{c}_clear_claims(const grail_ctx ctx) {{").unwrap();
        writeln!(out, "    const grail_coll *coll = &ctx.colls[{c}];").unwrap();
        writeln!(out, "    for (unsigned s = 0; s < GRAIL_SEGS; s++) {{").unwrap();
        // A slot holds 0 or a marker (GRAIL_SEG_BUSY, GRAIL_SEG_FAILED) when it has no segment.
        writeln!(out, "        char *seg = (char *)coll->segs[s];").unwrap();
        writeln!(out, "        if ((uint64_t)(uintptr_t)seg <= GRAIL_SEG_FAILED) continue;").unwrap();
        writeln!(out, "        const uint64_t n = (uint64_t)1 << (GRAIL_SEG_LOG + s);").unwrap();
        writeln!(
            out,
            "        for (uint64_t w = grail_thread_index(); w < n; w += grail_thread_count()) \
             *(uint32_t *)GRAIL_SLOT(seg, s, GRAIL_C{c}_CLAIMS, 4, w) = 0u;"
        )
        .unwrap();
        writeln!(out, "    }}\n}}").unwrap();
    }

    fn phase(
        &self,
        mut e: Emitter<'_, Self>,
        kernel: usize,
        phase: usize,
        forall: &ForAll,
    ) -> Result<String, CodegenError> {
        let name = format!("grail_k{kernel}_{phase}");
        let kernel_name = e.kernel.map_or("", |k| k.name.as_str());
        // The item count: a device function (outlined regions call it) and the size kernel.
        let size = e.phase_size(forall)?;
        e.line(0, &format!("/* kernel `{kernel_name}`, phase {phase} */"));
        e.line(0, &format!("__device__ uint64_t {name}_size_of(const grail_ctx *ctx, const grail_value *args) {{"));
        e.prologue();
        e.line(1, &format!("return {size};"));
        e.line(0, "}");
        e.line(
            0,
            &format!(
                "extern \"C\" __global__ void {name}_size(const grail_ctx ctx_, const grail_value *args, uint64_t *size) {{"
            ),
        );
        e.line(1, &format!("if (blockIdx.x == 0 && threadIdx.x == 0) *size = {name}_size_of(&ctx_, args);"));
        e.line(0, "}");
        let kernel_ir = e.kernel.ok_or_else(|| CodegenError::Internal("a phase outside a kernel".into()))?;
        // The hub executor's table (see `schedule::hub_declarations`), for a phase that posts.
        let hub_site = grail_ir::opt::nested::site(forall)
            .filter(|_| grail_ir::opt::nested::grid_shared(forall))
            .map(|(_, site)| site);
        if let Some(site) = hub_site {
            schedule::hub_declarations(&mut e, kernel_ir, site, &name);
        }
        let size_fn = std::mem::take(&mut e.out);
        e.reset_uses();
        let (item, mapping, backoff) = self.item_mapping(&e, forall)?;
        let hubs = hub_site.map(|_| name.as_str());
        let items = e.capture(|e| match grail_ir::opt::nested::site(forall) {
            Some(_) => schedule::scheduled_items(e, kernel_ir, forall, &item, &mapping, hubs),
            None => {
                let limit = &mapping.limit;
                // Adaptive parallelism: the threads past ctx->active (a whole number of warps)
                // take no items, and the others step over the active ones only.
                let adaptive = e.module.opt.adapt && grail_ir::analysis::is_morph_kernel(e.module, kernel_ir);
                let stride = if adaptive {
                    e.line(1, "const uint64_t threads_ = grail_item_threads(ctx);");
                    "threads_"
                } else {
                    "grail_thread_count()"
                };
                let start = |first: &str| {
                    if adaptive { format!("({first} < threads_ ? {first} : ~(uint64_t)0)") } else { first.to_string() }
                };
                if self.converge {
                    // Warp-uniform: every lane makes the same trips (its warp's first item index
                    // steps through the range), so the lanes meet at the top of each trip.
                    e.line(1, "const uint64_t lane_ = grail_thread_index() & 31u;");
                    let first = start("grail_thread_index() - lane_");
                    e.line(1, &format!("for (uint64_t j0_ = {first}; j0_ < {limit}; j0_ += {stride}) {{"));
                    e.line(2, "__syncwarp();");
                    e.line(2, "const uint64_t j = j0_ + lane_;");
                    if grail_ir::opt::stages::staged(e.module, KernelId(kernel as u32), forall) {
                        // The lanes also meet after each stage of the item (`Emitter::item_staged`):
                        // every lane passes every stage, a lane past the items too.
                        let mut prologue = vec![format!("const uint64_t i = {};", mapping.index)];
                        if backoff {
                            prologue.push("if (i >= size) continue;".to_string());
                        }
                        e.item_staged(forall, &item, &format!("j < {limit}"), &prologue, 2)?;
                        e.line(1, "}");
                        return Ok(());
                    }
                    e.line(2, &format!("if (j >= {limit}) continue;"));
                } else {
                    let first = start("grail_thread_index()");
                    e.line(1, &format!("for (uint64_t j = {first}; j < {limit}; j += {stride}) {{"));
                }
                e.line(2, &format!("const uint64_t i = {};", mapping.index));
                if backoff {
                    e.line(2, "if (i >= size) continue;");
                }
                e.item_chain(forall, &item, 2)?;
                e.line(1, "}");
                Ok(())
            }
        })?;
        e.out = size_fn;
        let hub_param = if hubs.is_some() { ", uint64_t *hubs_" } else { "" };
        run_function(
            &mut e,
            &format!(
                "GRAIL_PHASE void {name}_run(const grail_ctx *ctx, const grail_value *args, uint64_t size{hub_param})"
            ),
            &items,
        )?;
        let hub_arg = if hubs.is_some() { format!(", &{name}_hub_count_[0]") } else { String::new() };
        e.line(
            0,
            &format!(
                "extern \"C\" __global__ void {name}(const grail_ctx ctx, const grail_value *args, uint64_t size) {{ {name}_run(&ctx, args, size{hub_arg}); }}"
            ),
        );
        let queue = self.queue_run(&mut e, kernel, phase, forall)?;
        e.out.push_str(&queue);
        let (module, body, kernel_ir) = (e.module, e.body, e.kernel);
        let mut out = e.out;
        if let (Some(site), Some(kernel_ir)) = (hub_site, kernel_ir) {
            out.push_str(&self.hub_drain(Emitter::new(self, module, body, Some(kernel_ir)), site, &name)?);
        }
        out.push_str(&self.marked_run(Emitter::new(self, module, body, kernel_ir), kernel, phase, forall)?);
        Ok(out)
    }

    fn push(&self, e: &mut Emitter<'_, Self>, site: PushSite, value: &str, depth: usize) {
        let aggregation = e.kernel.and_then(|k| k.push_sites.get(site.index()).copied()).unwrap_or_default();
        // Checked mode checks a pushed item against what the worklist holds.
        let checked = match e.kernel.map(Kernel::worklist_item) {
            Some(Type::Element(c)) => format!("grail_pushed_element(ctx, {}, {value})", c.0),
            // Nodes that kernels add are nodes too.
            _ if e.module.growth.as_ref().is_some_and(|g| g.nodes.is_some()) => {
                format!("grail_pushed_grown(ctx, {value})")
            }
            _ => format!("grail_pushed(ctx, {value})"),
        };
        let push = match aggregation {
            Aggregation::None => "grail_push",
            Aggregation::Block if self.block_round.get() => {
                let (valid, item) = schedule::block_push_slots(site);
                e.line(depth, &format!("{valid} = true;"));
                e.line(depth, &format!("{item} = {checked};"));
                return;
            }
            // The warp executor and the serial remainder run the same body outside block-wide
            // rounds: there a block-level site pushes by warp.
            Aggregation::Warp | Aggregation::Block => "grail_push_warp",
        };
        let release = if self.queue.get() { "_release" } else { "" };
        e.line(depth, &format!("{push}{release}(&ctx->pushes, {checked});"));
    }

    fn divide(&self, op: BinaryOp, ty: Type, l: &str, r: &str) -> Result<String, CodegenError> {
        let name = if op == BinaryOp::Div { "div" } else { "rem" };
        Ok(format!("grail_{name}_{}(ctx, {l}, {r})", printer::type_suffix(ty)?))
    }

    fn retry(&self, e: &mut Emitter<'_, Self>, value: &str, depth: usize) {
        e.line(depth, &format!("grail_push(&ctx->retries, {value});"));
    }
}

impl Cuda {
    /// A phase's item as an expression of its index `i`, how the loop index `j` maps to `i`, and
    /// whether retry backoff applies (`i` may then fall past the items).
    fn item_mapping(
        &self,
        e: &Emitter<'_, Self>,
        forall: &ForAll,
    ) -> Result<(String, schedule::Mapping, bool), CodegenError> {
        // The item loop: grid-stride, or the schedulers' uniform loop. With retry backoff, a
        // retry pass hands each thread a block of consecutive items.
        let item = match e.phase_items(forall)? {
            Items::Each(item) => item,
            Items::AllNodes { retrying, item } => format!("({retrying} ? {item} : (uint32_t)i)"),
        };
        let backoff = self.backoff && e.kernel.is_some_and(grail_ir::opt::backoff::retries);
        // A kernel that retries or locks collection elements (a morph kernel) takes its first
        // pass's items scattered over the worklist (grail_first_item).
        let scatter = self.scatter && e.kernel.is_some_and(|k| grail_ir::analysis::is_morph_kernel(e.module, k));
        let first = if scatter { "grail_first_item(j, size)" } else { "j" };
        let mapping = if backoff {
            let retrying = e.ctx("retrying");
            schedule::Mapping {
                limit: format!("({retrying} ? grail_backoff_limit(size) : size)"),
                index: format!("({retrying} ? grail_backoff_item(j, size) : {first})"),
            }
        } else {
            schedule::Mapping { limit: "size".into(), index: first.into() }
        };
        Ok((item, mapping, backoff))
    }

    /// Phase `phase` of kernel `kernel`'s `_run_queue` function, when its kernel runs as one
    /// queue ([`grail_ir::opt::queue`]): the item loop takes batches from the queue
    /// (`grail_queue_take`) instead of striding over a list, each item waited for and read as
    /// it lands (`grail_queue_item`), and every batch counted done once its pushes are made.
    /// The schedulers' hubs stay with the block that meets them: there is no grid barrier for
    /// the hub executor's drain.
    fn queue_run(
        &self,
        e: &mut Emitter<'_, Self>,
        kernel: usize,
        phase: usize,
        forall: &ForAll,
    ) -> Result<String, CodegenError> {
        let Some(kernel_ir) = e.kernel else { return Ok(String::new()) };
        if phase != 0 || !grail_ir::opt::queue::queued_kernels(e.module).contains(&KernelId(kernel as u32)) {
            return Ok(String::new());
        }
        let mut q = Emitter::new(self, e.module, e.body, Some(kernel_ir));
        let outer = self.queue.replace(true);
        let items = q.capture(|q| match grail_ir::opt::nested::site(forall) {
            Some(_) => {
                let mapping = schedule::Mapping { limit: "qe_".into(), index: "j".into() };
                schedule::scheduled_items(q, kernel_ir, forall, "qi_", &mapping, None)
            }
            None => {
                schedule::queue_batch_open(q);
                q.line(2, "do {");
                q.line(3, "if (j >= qe_) break;");
                q.line(3, "const uint64_t i = j;");
                q.line(3, "(void)i;");
                q.item_chain(forall, "qi_", 3)?;
                q.line(2, "} while (0);");
                schedule::queue_batch_close(q);
                Ok(())
            }
        });
        self.queue.set(outer);
        let items = items?;
        let name = format!("grail_k{kernel}_{phase}");
        q.line(0, &format!("/* kernel `{}`, phase {phase}: its items taken from one queue */", kernel_ir.name));
        run_function(
            &mut q,
            &format!(
                "GRAIL_PHASE void {name}_run_queue(const grail_ctx *ctx, const grail_value *args, const grail_queue *q)"
            ),
            &format!("    const uint64_t size = ~(uint64_t)0;\n    (void)size;\n{items}"),
        )?;
        Ok(q.out)
    }

    /// The hub executor's drain of phase `name` (see `schedule::hub_declarations`): the device
    /// function an outlined region calls after the phase's barrier, out of line (it runs only
    /// where a hub was posted, and inlined it would cost the control kernel registers), and the
    /// `_hubs` kernel the runtime launches behind the phase's, whose last block out clears the
    /// count of hubs posted for the next launch.
    fn hub_drain(&self, mut e: Emitter<'_, Self>, site: &Stmt, name: &str) -> Result<String, CodegenError> {
        let kernel = e.kernel.ok_or_else(|| CodegenError::Internal("a phase outside a kernel".into()))?;
        let items = e.capture(|e| schedule::drain_hubs(e, kernel, site, name))?;
        e.line(0, &format!("/* kernel `{}`: the hubs its phase posted, run by the whole grid */", kernel.name));
        run_function(
            &mut e,
            &format!(
                "__device__ __noinline__ void {name}_drain(const grail_ctx *ctx, const grail_value *args, uint64_t *hubs_)"
            ),
            &items,
        )?;
        e.line(
            0,
            &format!("extern \"C\" __global__ void {name}_hubs(const grail_ctx ctx, const grail_value *args) {{"),
        );
        e.line(1, &format!("uint64_t *const hubs_ = &{name}_hub_count_[0];"));
        e.line(1, "if (*(volatile uint64_t *)hubs_ == 0u) return;");
        e.line(1, &format!("{name}_drain(&ctx, args, hubs_);"));
        e.line(1, "__syncthreads();");
        e.line(1, "if (threadIdx.x == 0) {");
        e.line(2, "__threadfence();");
        e.line(2, &format!("if (atomicAdd(&{name}_hub_left_, 1u) == gridDim.x - 1u) {{"));
        e.line(3, "hubs_[0] = 0u;");
        e.line(3, "hubs_[1] = 0u;");
        e.line(3, &format!("{name}_hub_left_ = 0u;"));
        e.line(2, "}");
        e.line(1, "}");
        e.line(0, "}");
        Ok(e.out)
    }

    /// Phase `phase` of kernel `kernel`'s `_run_marks` function (see [`marks`]), when marks
    /// decide one of its `exclusive`s.
    fn marked_run(
        &self,
        mut e: Emitter<'_, Self>,
        kernel: usize,
        phase: usize,
        forall: &ForAll,
    ) -> Result<String, CodegenError> {
        let Some(top) = marked(e.module, kernel, phase) else {
            return Ok(String::new());
        };
        let (item, mapping, backoff) = self.item_mapping(&e, forall)?;
        let items = e.capture(|e| marks::marked_items(e, forall, top, &item, &mapping, backoff))?;
        let name = format!("grail_k{kernel}_{phase}");
        e.line(
            0,
            &format!(
                "/* kernel `{}`, phase {phase}: its `exclusive` decided by marks */",
                e.kernel.map_or("", |k| k.name.as_str())
            ),
        );
        run_function(
            &mut e,
            &format!(
                "GRAIL_PHASE_MARKS void {name}_run_marks(const grail_ctx *ctx, const grail_value *args, uint64_t size, grail_state *S)"
            ),
            &items,
        )?;
        Ok(e.out)
    }
}

/// A phase's run function: `signature`, then the views, parameters and locals its `items` (the
/// item loop, already emitted) use, the reduction's accumulator and its epilogue.
fn run_function(e: &mut Emitter<'_, Cuda>, signature: &str, items: &str) -> Result<(), CodegenError> {
    e.line(0, &format!("{signature} {{"));
    e.prologue();
    let reduction = if e.uses.acc { Some(reduction(e)?) } else { None };
    if let Some(r) = &reduction {
        e.line(1, &format!("{} acc_ = {};", r.ty, r.identity));
    }
    e.out.push_str(items);
    if let Some(r) = &reduction {
        r.epilogue(e);
    }
    e.line(0, "}");
    Ok(())
}

/// The position of the `exclusive` that marks decide in phase `phase` of kernel `kernel`, when
/// the module's configuration asks for marks and the phase allows them
/// ([`grail_ir::opt::marks::site`]).
pub(crate) fn marked(module: &Module, kernel: usize, phase: usize) -> Option<usize> {
    if !module.opt.marks {
        return None;
    }
    grail_ir::opt::marks::site(module, KernelId(kernel as u32), phase).ok()
}

/// A phase's reduction: the accumulator's C type, the operator's identity in it, and the
/// operator, for the warp's fold and the atomic into the result.
pub(crate) struct Reduction {
    pub(crate) op: ReduceOp,
    pub(crate) ty: String,
    pub(crate) identity: String,
    pub(crate) member: &'static str,
}

pub(crate) fn reduction(e: &Emitter<'_, Cuda>) -> Result<Reduction, CodegenError> {
    let (op, ty, t, member) = e.accumulator()?;
    let unsupported = || Err(CodegenError::Unsupported(format!("a `{}` reduction of type {ty} on the GPU", op.name())));
    let identity = match (ty, op) {
        (Type::Scalar(Scalar::Bool), ReduceOp::Any | ReduceOp::Max) => "false",
        (Type::Scalar(Scalar::Bool), ReduceOp::All | ReduceOp::Min) => "true",
        (Type::Scalar(Scalar::Bool), _) | (_, ReduceOp::Any | ReduceOp::All) => return unsupported(),
        (Type::Struct(_) | Type::Array(_) | Type::Unit, _) => return unsupported(),
        (_, ReduceOp::Sum) => "0",
        (_, ReduceOp::Product) => "1",
        (Type::Scalar(Scalar::F32 | Scalar::F64), ReduceOp::Min) => "INFINITY",
        (Type::Scalar(Scalar::F32 | Scalar::F64), ReduceOp::Max) => "-INFINITY",
        (Type::Scalar(Scalar::I32), ReduceOp::Min) => "INT32_MAX",
        (Type::Scalar(Scalar::I32), ReduceOp::Max) => "INT32_MIN",
        (Type::Scalar(Scalar::I64), ReduceOp::Min) => "INT64_MAX",
        (Type::Scalar(Scalar::I64), ReduceOp::Max) => "INT64_MIN",
        (Type::Scalar(Scalar::U32) | Type::Node | Type::Element(_), ReduceOp::Min) => "UINT32_MAX",
        (Type::Scalar(Scalar::U64) | Type::Edge, ReduceOp::Min) => "UINT64_MAX",
        (_, ReduceOp::Max) => "0",
    };
    Ok(Reduction { op, identity: format!("({t}){identity}"), ty: t, member })
}

impl Reduction {
    /// After the item loop, with every thread of the grid here: the warp's partial values
    /// folded by a butterfly of shuffles (votes for bools), then lane 0 folds the warp's value
    /// into the result unless it is the identity.
    fn epilogue(&self, e: &mut Emitter<'_, Cuda>) {
        let Reduction { op, ty, identity, member } = self;
        let mask = "0xffffffffu";
        if ty == "bool" {
            let vote = if matches!(op, ReduceOp::Any | ReduceOp::Max) { "__any_sync" } else { "__all_sync" };
            e.line(1, &format!("acc_ = {vote}({mask}, acc_) != 0;"));
        } else {
            e.line(1, "for (int o_ = 16; o_ > 0; o_ >>= 1) {");
            e.line(2, &format!("const {ty} r_ = __shfl_xor_sync({mask}, acc_, o_);"));
            e.line(2, &format!("acc_ = {};", Emitter::<Cuda>::combine(*op, ty, "acc_", "r_")));
            e.line(1, "}");
        }
        let fold = match op {
            ReduceOp::Any | ReduceOp::Max if ty == "bool" => "any",
            ReduceOp::All | ReduceOp::Min if ty == "bool" => "all",
            op => op.name(),
        };
        let member_ty = printer::member_type(member);
        e.line(
            1,
            &format!(
                "if ((threadIdx.x & 31u) == 0u && acc_ != {identity}) grail_acc_{fold}_{member}(ctx->acc, ({member_ty})acc_);"
            ),
        );
    }
}
