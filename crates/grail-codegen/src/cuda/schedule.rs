//! The nested-parallelism schedulers (IrGL §4.3) in CUDA: a phase whose nested loop the pass
//! scheduled ([`grail_ir::opt::nested`]) becomes, per block of items:
//!
//! 1. *inspector*: each thread runs its item up to the nested loop (part A) and records the
//!    loop's range of adjacency positions instead of running it;
//! 2. *executors*, in the paper's order (descending preferred loop size), separated by
//!    `__syncthreads()`: thread block (a recorded range of at least `GRAIL_BLOCK` positions is run
//!    by the whole block), warp (ranges of at least 32 when fine-grained follows, else every
//!    range left, run by the owner's warp), fine-grained (the rest: a block-wide prefix sum lays
//!    every remaining position out, and each thread runs one per round), or, when neither warp
//!    nor fine-grained is selected, each thread runs what is left of its own range serially;
//! 3. each thread finishes its item (part B: the item's statements after the loop).
//!
//! The item's locals the loop body reads (its closure, [`grail_ir::opt::nested::closure`]) go
//! with the range: in shared memory for thread block and fine-grained, by shuffles for warp.
//! The executing thread *shadows* them (a block-scoped local of the same name), so the loop body
//! prints unchanged and the executing thread's own item is left intact. The outer loop is made
//! uniform (every thread of a block makes the same number of passes, invalid items included) so
//! the barriers are reached by all.
//!
//! Cooperative conversion at block level (IrGL §4.2, Listing 9) happens here: in the thread
//! block and fine-grained executors every thread of a block makes the same rounds, one position
//! each, so a push the pass marked `Block` records its item in the round
//! ([`block_push_slots`]), and after the position, at the focal point that ends the round, every
//! thread calls `grail_push_block`, which reserves the block's slots with one atomic.
//!
//! A scheduled *fold* (`acc = acc op value` over adjacency, [`grail_ir::opt::nested::fold`])
//! runs the same way, except that each executing thread folds `value` into a partial result,
//! and the partials reach the owner's `acc`: through a block reduction (thread block), a warp
//! reduction (warp), or shared-memory atomics on the owner's slot (fine-grained).

use grail_ir::opt::nested::{self, Fold};
use grail_ir::*;

use super::Cuda;
use crate::CodegenError;
use crate::printer::{Emitter, c_type, constant, local_name};

/// The scheduled loop: what the executors need of it.
struct Loop<'a> {
    var: LocalId,
    adjacency: Adjacency,
    filter: Option<&'a Expr>,
    body: &'a Block,
    schedule: Schedule,
    /// For a fold: the fold, the accumulator's C type and name, and the operator's identity.
    fold: Option<(Fold, String, String, String)>,
    /// The body's push sites that cooperative conversion aggregates by block.
    block_pushes: Vec<PushSite>,
}

impl<'a> Loop<'a> {
    fn of(e: &Emitter<'_, Cuda>, kernel: &Kernel, site: &'a Stmt) -> Result<Loop<'a>, CodegenError> {
        match site {
            Stmt::ForAll(forall) => {
                let Space::Adjacent(adjacency, _) = &forall.space else {
                    return Err(CodegenError::Internal("a scheduled loop that is not over adjacency".into()));
                };
                Ok(Loop {
                    var: forall.var,
                    adjacency: *adjacency,
                    filter: forall.filter.as_ref(),
                    body: &forall.body,
                    schedule: forall.schedule,
                    fold: None,
                    block_pushes: block_pushes(kernel, &forall.body),
                })
            }
            Stmt::ForEach { var, adjacency, body, schedule, .. } => {
                let fold = nested::fold(site, &kernel.body.locals)
                    .ok_or_else(|| CodegenError::Internal("a scheduled sequential loop that is not a fold".into()))?;
                let ty = kernel.body.locals[fold.acc.index()].ty;
                let identity = match fold.op {
                    ReduceOp::Sum => constant(Const::Int(0), ty),
                    ReduceOp::Min => constant(Const::Inf, ty),
                    _ => lowest(ty),
                };
                let name = e.local(fold.acc);
                Ok(Loop {
                    var: *var,
                    adjacency: *adjacency,
                    filter: None,
                    body,
                    schedule: *schedule,
                    fold: Some((fold, c_type(ty), name, identity)),
                    block_pushes: Vec::new(),
                })
            }
            _ => Err(CodegenError::Internal("a scheduled statement that is not a loop".into())),
        }
    }
}

/// The push sites in `body` that cooperative conversion aggregates by block.
fn block_pushes(kernel: &Kernel, body: &Block) -> Vec<PushSite> {
    let mut sites = Vec::new();
    walk_block(body, &mut |stmt| {
        if let Stmt::Push { site, .. } = stmt
            && kernel.push_sites.get(site.index()) == Some(&Aggregation::Block)
        {
            sites.push(*site);
        }
    });
    sites
}

/// The locals in which a block-level push site records, during a round, whether its thread
/// pushes and what.
pub(super) fn block_push_slots(site: PushSite) -> (String, String) {
    (format!("bp{}_", site.0), format!("bv{}_", site.0))
}

/// Opens a block-wide round's records of its block-level pushes (none pushed yet).
fn open_block_pushes(e: &mut Emitter<'_, Cuda>, inner: &Loop<'_>, depth: usize) {
    for &site in &inner.block_pushes {
        let (valid, item) = block_push_slots(site);
        e.line(depth, &format!("bool {valid} = false;"));
        e.line(depth, &format!("uint32_t {item} = 0;"));
    }
}

/// Ends a block-wide round at its focal point: every thread of the block pushes what it
/// recorded, one atomic per block and site.
fn close_block_pushes(e: &mut Emitter<'_, Cuda>, inner: &Loop<'_>, depth: usize) {
    for &site in &inner.block_pushes {
        let (valid, item) = block_push_slots(site);
        let release = if e.target.queue.get() { "_release" } else { "" };
        e.line(depth, &format!("grail_push_block{release}(&ctx->pushes, {valid}, {item});"));
    }
}

/// Runs `position` with block-level pushes recorded rather than pushed.
fn in_block_round<T>(e: &mut Emitter<'_, Cuda>, f: impl FnOnce(&mut Emitter<'_, Cuda>) -> T) -> T {
    let outer = e.target.block_round.replace(true);
    let result = f(e);
    e.target.block_round.set(outer);
    result
}

/// The least value of a type (the identity of `max`).
fn lowest(ty: Type) -> String {
    match ty {
        Type::Scalar(Scalar::F32 | Scalar::F64) => format!("(({})-INFINITY)", c_type(ty)),
        Type::Scalar(Scalar::I32) => "INT32_MIN".into(),
        Type::Scalar(Scalar::I64) => "INT64_MIN".into(),
        _ => format!("(({})0)", c_type(ty)),
    }
}

/// The inspector's record of a scheduled loop over `node`'s adjacency: its range of positions.
pub(super) fn record(
    e: &mut Emitter<'_, Cuda>,
    adjacency: Adjacency,
    node: &Expr,
    depth: usize,
) -> Result<(), CodegenError> {
    let node = e.expr(node)?;
    let (row, _) = e.adjacency(adjacency);
    e.line(depth, "{");
    e.line(depth + 1, &format!("const uint32_t n_ = {node};"));
    e.line(depth + 1, &format!("np_b_ = {};", row.begin("n_")));
    e.line(depth + 1, &format!("np_e_ = {};", row.end("n_")));
    e.line(depth, "}");
    Ok(())
}

/// How a phase's loop index `j` maps to its item `i`, and how far `j` runs.
pub(super) struct Mapping {
    /// The bound of `j` (an expression of `size`).
    pub limit: String,
    /// Item `i` from `j`.
    pub index: String,
}

/// The item loop of a scheduled phase, whose nested loop ([`nested::site`]) ends a top-level
/// statement of the item's body. `item` is item `i` as an expression of `i`; `mapping` how the
/// loop index `j` gives the item's index `i` (plain or backoff order); `hubs` the phase's name
/// where it posts hubs ([`hub_declarations`]).
pub(super) fn scheduled_items(
    e: &mut Emitter<'_, Cuda>,
    kernel: &Kernel,
    forall: &ForAll,
    item: &str,
    mapping: &Mapping,
    hubs: Option<&str>,
) -> Result<(), CodegenError> {
    let (top, site) =
        nested::site(forall).ok_or_else(|| CodegenError::Internal("a scheduled phase without its loop".into()))?;
    let inner = Loop::of(e, kernel, site)?;
    let closure = closure_of(e, kernel, site);
    let np = inner.schedule;
    let queue = e.target.queue.get();
    if queue {
        queue_batch_open(e);
    } else {
        e.line(
            1,
            &format!(
                "for (uint64_t b_ = (uint64_t)blockIdx.x * blockDim.x; b_ < {}; b_ += grail_thread_count()) {{",
                mapping.limit
            ),
        );
        e.line(2, "const uint64_t j = b_ + threadIdx.x;");
    }
    e.line(2, &format!("const uint64_t i = {};", mapping.index));
    e.line(2, "uint64_t np_b_ = 0, np_e_ = 0;");
    let after = &forall.body[top + 1..];
    if !after.is_empty() {
        e.line(2, "bool act_ = false;");
    }
    e.line(2, "do {");
    e.line(3, &format!("if (j >= {} || i >= size) break;", mapping.limit));
    e.item_part(forall, Some(item), &forall.body[..=top], 3)?;
    if !after.is_empty() {
        e.line(3, "act_ = true;");
    }
    e.line(2, "} while (0);");
    if np.thread_block {
        if let Some(name) = hubs {
            post_hub(e, &closure, name);
        }
        thread_block(e, &inner, &closure)?;
    }
    let fine = np.fine_grained;
    if np.warp {
        warp(e, &inner, &closure, if fine { "32" } else { "1" })?;
    }
    if fine {
        fine_grained(e, &inner, &closure)?;
    } else if !np.warp {
        // Thread block alone: what it left runs serially in its own thread, as written.
        e.line(2, "{");
        e.line(3, "for (uint64_t k = np_b_; k < np_e_; k++) {");
        serial_position(e, &inner, 4)?;
        e.line(3, "}");
        e.line(2, "}");
    }
    if !after.is_empty() {
        e.line(2, "if (act_) do {");
        e.item_part(forall, None, after, 3)?;
        e.line(2, "} while (0);");
    }
    if queue {
        queue_batch_close(e);
    } else {
        e.line(1, "}");
    }
    Ok(())
}

/// Opens a queue's item loop ([`grail_ir::opt::queue`]): the block takes its next batch of slots
/// `[qb_, qe_)`, leaving the loop once the queue has ended; thread `threadIdx.x` has slot `j`,
/// and its item `qi_` once it has landed.
pub(super) fn queue_batch_open(e: &mut Emitter<'_, Cuda>) {
    e.line(1, "for (;;) {");
    e.line(2, "uint64_t qb_, qe_;");
    e.line(2, "grail_queue_take(q, &qb_, &qe_);");
    e.line(2, "if (qb_ == qe_) break;");
    e.line(2, "const uint64_t j = qb_ + threadIdx.x;");
    e.line(2, "const uint32_t qi_ = j < qe_ ? grail_queue_item(q, j) : 0u;");
}

/// Closes a queue's item loop: the batch is done once every thread of the block has made its
/// pushes.
pub(super) fn queue_batch_close(e: &mut Emitter<'_, Cuda>) {
    e.line(2, "grail_queue_done(q, qe_ - qb_);");
    e.line(1, "}");
}

/// The scheduled loop's closure: each local's C name and type (the names marked used: the
/// code that reads them declares them).
fn closure_of(e: &Emitter<'_, Cuda>, kernel: &Kernel, site: &Stmt) -> Vec<(String, String)> {
    nested::closure(kernel, site)
        .into_iter()
        .map(|id| (e.local(id), c_type(kernel.body.locals[id.index()].ty)))
        .collect()
}

/// The closure's names and types without marking the locals used: for code that only declares
/// shadows of them (the drain) or names no local (the hub's record).
fn closure_unused(kernel: &Kernel, site: &Stmt) -> Vec<(String, String)> {
    nested::closure(kernel, site)
        .into_iter()
        .map(|id| {
            let local = &kernel.body.locals[id.index()];
            (local_name(id.index(), &local.name), c_type(local.ty))
        })
        .collect()
}

/// The hub executor's declarations for phase `name` (`grail_k<k>_<p>`), before its `_run`:
/// a hub's record (where its range begins, its length, its place in the step's hubs laid end
/// to end, its closure), the table of a step's hubs, and per step two words: the hubs posted
/// (the count in the top 24 bits, their positions' total below) and the next position to hand
/// out. An outlined region's consecutive steps use the two pairs in turn, so that one step's
/// reset never meets the next step's posts. Then the count of blocks done with a launched drain.
///
/// The hub executor extends the thread-block executor to the whole grid. A range of at least
/// `GRAIL_HUB_MIN` positions (a hub's adjacency: on power-law graphs millions, which one block
/// runs in thousands of rounds while the rest of the grid idles) is *posted* instead: one
/// atomic gives its thread the hub's slot and its place after the hubs posted before it, the
/// thread writes the record and goes on. After the phase, every block of the grid *drains* the
/// hubs: it takes `GRAIL_HUB_CHUNK` positions of the hubs laid end to end at a time (one atomic),
/// finds the hub they start in by binary search, and runs them, into the next hub where the
/// chunk crosses one. That happens in an outlined region right after the phase's barrier (when
/// a hub was posted, then another barrier), elsewhere in the `_hubs` kernel the runtime
/// launches behind the phase's. Only phases whose item ends with the loop post
/// ([`nested::grid_shared`]); a full table leaves the range to its block.
pub(super) fn hub_declarations(e: &mut Emitter<'_, Cuda>, kernel: &Kernel, site: &Stmt, name: &str) {
    let closure = closure_unused(kernel, site);
    e.line(0, &format!("typedef struct {name}_hub {{"));
    e.line(1, "uint64_t b, n, at;");
    for (c, (_, ty)) in closure.iter().enumerate() {
        e.line(1, &format!("{ty} c{c};"));
    }
    e.line(0, &format!("}} {name}_hub;"));
    e.line(0, &format!("__device__ {name}_hub {name}_hubs_[GRAIL_HUB_CAP];"));
    e.line(0, &format!("__device__ uint64_t {name}_hub_count_[4];"));
    e.line(0, &format!("__device__ uint32_t {name}_hub_left_;"));
}

/// Posts this thread's range as a hub when it is that long (and the table has room).
fn post_hub(e: &mut Emitter<'_, Cuda>, closure: &[(String, String)], name: &str) {
    e.line(2, "if (np_e_ - np_b_ >= (uint64_t)GRAIL_HUB_MIN) {");
    e.line(3, "const uint64_t n_ = np_e_ - np_b_;");
    e.line(3, "const uint64_t was_ = atomicAdd(&hubs_[0], GRAIL_HUB_ONE | n_);");
    e.line(3, "const uint64_t s_ = was_ >> GRAIL_HUB_SHIFT;");
    e.line(3, "if (s_ < GRAIL_HUB_CAP) {");
    e.line(4, &format!("{name}_hub *const h_ = &{name}_hubs_[s_];"));
    e.line(4, "h_->b = np_b_;");
    e.line(4, "h_->n = n_;");
    e.line(4, "h_->at = was_ & (GRAIL_HUB_ONE - 1u);");
    for (c, (local, _)) in closure.iter().enumerate() {
        e.line(4, &format!("h_->c{c} = {local};"));
    }
    e.line(4, "np_b_ = np_e_;");
    e.line(3, "}");
    e.line(2, "}");
}

/// The hub executor's drain, the items of `{name}_drain(ctx, args, hubs_)` (`hubs_` the step's
/// two words): every block takes chunks of the posted hubs' positions until none is left.
/// Block-uniform throughout: the chunk comes through shared memory, and every thread reads the
/// same records (volatile: an earlier step's may still be in this multiprocessor's L1).
pub(super) fn drain_hubs(
    e: &mut Emitter<'_, Cuda>,
    kernel: &Kernel,
    site: &Stmt,
    name: &str,
) -> Result<(), CodegenError> {
    let inner = Loop::of(e, kernel, site)?;
    let closure = closure_unused(kernel, site);
    let field = |f: &str| format!("*(volatile uint64_t *)&{name}_hubs_[h_].{f}");
    e.line(1, "const uint64_t posted_ = *(volatile uint64_t *)&hubs_[0] >> GRAIL_HUB_SHIFT;");
    e.line(1, "const uint32_t hn_ = posted_ < GRAIL_HUB_CAP ? (uint32_t)posted_ : GRAIL_HUB_CAP;");
    e.line(1, "if (hn_ == 0u) return;");
    e.line(
        1,
        &format!(
            "const uint64_t total_ = *(volatile uint64_t *)&{name}_hubs_[hn_ - 1u].at + *(volatile uint64_t *)&{name}_hubs_[hn_ - 1u].n;"
        ),
    );
    e.line(1, "__shared__ uint64_t hk_;");
    e.line(1, "for (;;) {");
    e.line(2, "if (threadIdx.x == 0) hk_ = atomicAdd(&hubs_[1], (uint64_t)GRAIL_HUB_CHUNK);");
    e.line(2, "__syncthreads();");
    e.line(2, "uint64_t k0_ = hk_;");
    e.line(2, "__syncthreads();");
    e.line(2, "if (k0_ >= total_) break;");
    e.line(2, "const uint64_t k1_ = k0_ + GRAIL_HUB_CHUNK < total_ ? k0_ + GRAIL_HUB_CHUNK : total_;");
    // The last hub that starts at or before k0_.
    e.line(2, "uint32_t lo_ = 0u, hi_ = hn_ - 1u;");
    e.line(2, "while (lo_ < hi_) {");
    e.line(3, "const uint32_t mid_ = (lo_ + hi_ + 1u) / 2u;");
    e.line(3, &format!("if (*(volatile uint64_t *)&{name}_hubs_[mid_].at <= k0_) lo_ = mid_; else hi_ = mid_ - 1u;"));
    e.line(2, "}");
    e.line(2, "for (uint32_t h_ = lo_; k0_ < k1_; h_++) {");
    e.line(3, &format!("const uint64_t hb_ = {};", field("b")));
    e.line(3, &format!("const uint64_t ha_ = {};", field("at")));
    e.line(3, &format!("const uint64_t ha_end_ = ha_ + {};", field("n")));
    e.line(3, "const uint64_t end_ = ha_end_ < k1_ ? ha_end_ : k1_;");
    for (c, (_, ty)) in closure.iter().enumerate() {
        e.line(3, &format!("const {ty} hc{c}_ = *(volatile {ty} *)&{name}_hubs_[h_].c{c};"));
    }
    let sources: Vec<String> = (0..closure.len()).map(|c| format!("hc{c}_")).collect();
    block_positions(e, &inner, &closure, &sources, ("k0_", "end_"), "hb_ + (q_ - ha_)", 3)?;
    e.line(3, "k0_ = end_;");
    e.line(2, "}");
    e.line(1, "}");
    // Every use of the closure binds to the shadows `position` declares.
    for id in nested::closure(kernel, site) {
        e.unmark_local(id);
    }
    Ok(())
}

/// The thread-block executor: while some thread's range has at least a block's positions, the
/// block runs one such range together.
fn thread_block(e: &mut Emitter<'_, Cuda>, inner: &Loop<'_>, closure: &[(String, String)]) -> Result<(), CodegenError> {
    e.line(2, "{");
    e.line(3, "__shared__ int tb_owner_;");
    e.line(3, "__shared__ uint64_t tb_b_, tb_e_;");
    for (c, (_, ty)) in closure.iter().enumerate() {
        e.line(3, &format!("__shared__ {ty} tb_c{c}_;"));
    }
    if let Some((_, ty, _, _)) = &inner.fold {
        e.line(3, &format!("__shared__ {ty} tb_fold_[32];"));
    }
    e.line(3, "for (;;) {");
    // The lowest thread with a range that long owns this round (an atomic, so the choice is
    // deterministic and no two stores race).
    e.line(4, "if (threadIdx.x == 0) tb_owner_ = INT32_MAX;");
    e.line(4, "__syncthreads();");
    e.line(4, "if (np_e_ - np_b_ >= (uint64_t)GRAIL_BLOCK) atomicMin(&tb_owner_, (int)threadIdx.x);");
    e.line(4, "__syncthreads();");
    e.line(4, "const int owner_ = tb_owner_;");
    e.line(4, "if (owner_ == INT32_MAX) break;");
    e.line(4, "if (owner_ == (int)threadIdx.x) {");
    e.line(5, "tb_b_ = np_b_;");
    e.line(5, "tb_e_ = np_e_;");
    for (c, (name, _)) in closure.iter().enumerate() {
        e.line(5, &format!("tb_c{c}_ = {name};"));
    }
    e.line(5, "np_b_ = np_e_;");
    e.line(4, "}");
    e.line(4, "__syncthreads();");
    let sources: Vec<String> = (0..closure.len()).map(|c| format!("tb_c{c}_")).collect();
    open_partial(e, inner, 4);
    block_positions(e, inner, closure, &sources, ("tb_b_", "tb_e_"), "q_", 4)?;
    if let Some((fold, ty, acc, identity)) = &inner.fold {
        // The block's partials: each warp's by shuffles, then the warps' by the owner.
        warp_fold(e, fold.op, ty, "part_", 4);
        e.line(4, "if ((threadIdx.x & 31u) == 0u) tb_fold_[threadIdx.x >> 5] = part_;");
        e.line(4, "__syncthreads();");
        e.line(4, "if (owner_ == (int)threadIdx.x) {");
        e.line(5, &format!("{ty} total_ = {identity};"));
        e.line(5, "for (unsigned w_ = 0; w_ < (blockDim.x >> 5); w_++) {");
        e.line(6, &format!("total_ = {};", Emitter::<Cuda>::combine(fold.op, ty, "total_", "tb_fold_[w_]")));
        e.line(5, "}");
        e.line(5, &format!("{acc} = {};", Emitter::<Cuda>::combine(fold.op, ty, acc, "total_")));
        e.line(4, "}");
    }
    e.line(4, "__syncthreads();");
    e.line(3, "}");
    // Every thread has read the owner word before anyone writes it again.
    e.line(3, "__syncthreads();");
    e.line(2, "}");
    Ok(())
}

/// Positions `range.0..range.1` (`q_`) of a scheduled loop run by the whole block, each at
/// adjacency position `k` = `at` (an expression of `q_`): every thread takes every
/// `blockDim.x`-th. Where the body pushes by block, in rounds that every thread makes (the last
/// one partly idle), each ending with the block's pushes; `continue` in the body ends only the
/// position.
fn block_positions(
    e: &mut Emitter<'_, Cuda>,
    inner: &Loop<'_>,
    closure: &[(String, String)],
    sources: &[String],
    range: (&str, &str),
    at: &str,
    depth: usize,
) -> Result<(), CodegenError> {
    let (from, to) = range;
    if inner.block_pushes.is_empty() {
        e.line(depth, &format!("for (uint64_t q_ = {from} + threadIdx.x; q_ < {to}; q_ += blockDim.x) {{"));
        e.line(depth + 1, &format!("const uint64_t k = {at};"));
        position(e, inner, closure, sources, depth + 1)?;
    } else {
        e.line(depth, &format!("for (uint64_t r_ = {from}; r_ < {to}; r_ += blockDim.x) {{"));
        e.line(depth + 1, "const uint64_t q_ = r_ + threadIdx.x;");
        e.line(depth + 1, &format!("const uint64_t k = {at};"));
        open_block_pushes(e, inner, depth + 1);
        e.line(depth + 1, &format!("if (q_ < {to}) do {{"));
        in_block_round(e, |e| position(e, inner, closure, sources, depth + 2))?;
        e.line(depth + 1, "} while (0);");
        close_block_pushes(e, inner, depth + 1);
    }
    e.line(depth, "}");
    Ok(())
}

/// The warp executor: while some lane's range has at least `min` positions, its warp runs it
/// together, the range and closure broadcast from the owner lane by shuffles.
fn warp(
    e: &mut Emitter<'_, Cuda>,
    inner: &Loop<'_>,
    closure: &[(String, String)],
    min: &str,
) -> Result<(), CodegenError> {
    e.line(2, "{");
    e.line(3, "const unsigned lane_ = threadIdx.x & 31u;");
    e.line(3, "for (;;) {");
    e.line(4, &format!("const unsigned want_ = __ballot_sync(0xffffffffu, np_e_ - np_b_ >= (uint64_t){min});"));
    e.line(4, "if (want_ == 0u) break;");
    e.line(4, "const int owner_ = __ffs(want_) - 1;");
    e.line(4, "const uint64_t wp_b_ = __shfl_sync(0xffffffffu, np_b_, owner_);");
    e.line(4, "const uint64_t wp_e_ = __shfl_sync(0xffffffffu, np_e_, owner_);");
    for (c, (name, ty)) in closure.iter().enumerate() {
        let shuffled = if ty == "bool" {
            format!("(__shfl_sync(0xffffffffu, (int){name}, owner_) != 0)")
        } else {
            format!("__shfl_sync(0xffffffffu, {name}, owner_)")
        };
        e.line(4, &format!("const {ty} wp_c{c}_ = {shuffled};"));
    }
    e.line(4, "if ((int)lane_ == owner_) np_b_ = np_e_;");
    let sources: Vec<String> = (0..closure.len()).map(|c| format!("wp_c{c}_")).collect();
    open_partial(e, inner, 4);
    e.line(4, "for (uint64_t k = wp_b_ + lane_; k < wp_e_; k += 32) {");
    position(e, inner, closure, &sources, 5)?;
    e.line(4, "}");
    if let Some((fold, ty, acc, _)) = &inner.fold {
        warp_fold(e, fold.op, ty, "part_", 4);
        e.line(
            4,
            &format!("if ((int)lane_ == owner_) {acc} = {};", Emitter::<Cuda>::combine(fold.op, ty, acc, "part_")),
        );
    }
    e.line(4, "__syncwarp();");
    e.line(3, "}");
    e.line(2, "}");
    Ok(())
}

/// The fine-grained executor: every thread's remaining positions laid out one after another by
/// a block-wide prefix sum; in each round the block's threads take one position each.
fn fine_grained(e: &mut Emitter<'_, Cuda>, inner: &Loop<'_>, closure: &[(String, String)]) -> Result<(), CodegenError> {
    e.line(2, "{");
    e.line(3, "__shared__ uint32_t fg_src_[GRAIL_BLOCK];");
    e.line(3, "__shared__ uint64_t fg_beg_[GRAIL_BLOCK];");
    for (c, (_, ty)) in closure.iter().enumerate() {
        e.line(3, &format!("__shared__ {ty} fg_c{c}_[GRAIL_BLOCK];"));
    }
    if let Some((_, ty, _, identity)) = &inner.fold {
        e.line(3, &format!("__shared__ {ty} fg_fold_[GRAIL_BLOCK];"));
        e.line(3, &format!("fg_fold_[threadIdx.x] = {identity};"));
    }
    e.line(3, "const uint64_t fg_n_ = np_e_ - np_b_;");
    e.line(3, "uint64_t fg_total_;");
    e.line(3, "const uint64_t fg_off_ = grail_block_exclusive_scan(fg_n_, &fg_total_);");
    e.line(3, "fg_beg_[threadIdx.x] = np_b_ - fg_off_;");
    for (c, (name, _)) in closure.iter().enumerate() {
        e.line(3, &format!("fg_c{c}_[threadIdx.x] = {name};"));
    }
    e.line(3, "for (uint64_t done_ = 0; done_ < fg_total_; done_ += blockDim.x) {");
    e.line(4, "const uint64_t lo_ = fg_off_ > done_ ? fg_off_ : done_;");
    e.line(4, "const uint64_t end_ = done_ + blockDim.x;");
    e.line(4, "const uint64_t hi_ = fg_off_ + fg_n_ < end_ ? fg_off_ + fg_n_ : end_;");
    e.line(4, "for (uint64_t g_ = lo_; g_ < hi_; g_++) fg_src_[g_ - done_] = threadIdx.x;");
    e.line(4, "__syncthreads();");
    open_block_pushes(e, inner, 4);
    e.line(4, "if (done_ + threadIdx.x < fg_total_) {");
    e.line(5, "const uint32_t o_ = fg_src_[threadIdx.x];");
    e.line(5, "const uint64_t k = fg_beg_[o_] + done_ + threadIdx.x;");
    let sources: Vec<String> = (0..closure.len()).map(|c| format!("fg_c{c}_[o_]")).collect();
    match &inner.fold {
        None => {
            e.line(5, "do {");
            in_block_round(e, |e| position(e, inner, closure, &sources, 6))?;
            e.line(5, "} while (0);");
        }
        Some((fold, ty, _, identity)) => {
            e.line(5, &format!("{ty} part_ = {identity};"));
            position(e, inner, closure, &sources, 5)?;
            let atomic = match fold.op {
                ReduceOp::Sum => "atomicAdd",
                ReduceOp::Min => "atomicMin",
                _ => "atomicMax",
            };
            let cast = match ty.as_str() {
                "uint64_t" | "int64_t" if fold.op == ReduceOp::Sum => "(unsigned long long *)",
                "int64_t" => "(long long *)",
                "uint64_t" => "(unsigned long long *)",
                _ => "",
            };
            let value = if cast.starts_with("(unsigned") { "(unsigned long long)part_" } else { "part_" };
            e.line(5, &format!("{atomic}({cast}&fg_fold_[o_], {value});"));
        }
    }
    e.line(4, "}");
    close_block_pushes(e, inner, 4);
    e.line(4, "__syncthreads();");
    e.line(3, "}");
    if let Some((fold, ty, acc, _)) = &inner.fold {
        e.line(
            3,
            &format!("if (fg_n_ > 0) {acc} = {};", Emitter::<Cuda>::combine(fold.op, ty, acc, "fg_fold_[threadIdx.x]")),
        );
    }
    e.line(3, "np_b_ = np_e_;");
    e.line(2, "}");
    Ok(())
}

/// A fold's partial result, before an executor's positions.
fn open_partial(e: &mut Emitter<'_, Cuda>, inner: &Loop<'_>, depth: usize) {
    if let Some((_, ty, _, identity)) = &inner.fold {
        e.line(depth, &format!("{ty} part_ = {identity};"));
    }
}

/// Folds `value` across the warp by a butterfly of shuffles (every lane ends with the total).
fn warp_fold(e: &mut Emitter<'_, Cuda>, op: ReduceOp, ty: &str, value: &str, depth: usize) {
    e.line(depth, "for (int o_ = 16; o_ > 0; o_ >>= 1) {");
    e.line(depth + 1, &format!("const {ty} y_ = __shfl_xor_sync(0xffffffffu, {value}, o_);"));
    e.line(depth + 1, &format!("{value} = {};", Emitter::<Cuda>::combine(op, ty, value, "y_")));
    e.line(depth, "}");
}

/// The loop at adjacency position `k`, run by an executor, with the closure's locals shadowed by
/// the values in `sources`: a `forall`'s body, or a fold's value folded into `part_`.
fn position(
    e: &mut Emitter<'_, Cuda>,
    inner: &Loop<'_>,
    closure: &[(String, String)],
    sources: &[String],
    depth: usize,
) -> Result<(), CodegenError> {
    e.line(depth, "{");
    for ((name, ty), source) in closure.iter().zip(sources) {
        e.line(depth + 1, &format!("const {ty} {name} = {source};"));
    }
    let item = e.adjacency_item(inner.adjacency);
    let var = e.local(inner.var);
    e.line(depth + 1, &format!("{var} = {item};"));
    match (&inner.fold, inner.filter) {
        (Some((fold, ty, _, _)), _) => {
            let value = e.expr(&fold.value)?;
            e.line(depth + 1, &format!("part_ = {};", Emitter::<Cuda>::combine(fold.op, ty, "part_", &value)));
        }
        (None, None) => e.looped(inner.body, depth + 1)?,
        (None, Some(filter)) => {
            let filter = e.expr(filter)?;
            e.line(depth + 1, &format!("if ({filter}) {{"));
            e.looped(inner.body, depth + 2)?;
            e.line(depth + 1, "}");
        }
    }
    e.line(depth, "}");
    Ok(())
}

/// The loop at position `k` run by its own item's thread, as written.
fn serial_position(e: &mut Emitter<'_, Cuda>, inner: &Loop<'_>, depth: usize) -> Result<(), CodegenError> {
    let item = e.adjacency_item(inner.adjacency);
    let var = e.local(inner.var);
    e.line(depth, &format!("{var} = {item};"));
    match inner.filter {
        None => e.looped(inner.body, depth),
        Some(filter) => {
            let filter = e.expr(filter)?;
            e.line(depth, &format!("if ({filter}) {{"));
            e.looped(inner.body, depth + 1)?;
            e.line(depth, "}");
            Ok(())
        }
    }
}
