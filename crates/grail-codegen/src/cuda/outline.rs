//! Outlined regions (IrGL §4.1) in CUDA: for each `iterate` or `pipe` of `main` that iteration
//! outlining marked, a control kernel `grail_o<id>(ctx, region)` that runs the whole loop, and
//! for each kernel such a loop invokes, `grail_k<k>_invoke(ctx, state, args)`: its phases' `_run`
//! functions with a grid barrier after each, its retry passes, its worklist swap and its
//! reduction's result (see `grail_cuda.h`'s outlined regions for the counter rings).
//!
//! The control kernel starts by loading the host locals the region names from the region's
//! frame (every thread its own copy), runs the region's statements (printed by the shared
//! printer in region mode: stores to properties by one thread and a barrier; invocations, loops
//! and nested regions by [`orchestration`]), and ends with global thread 0 writing the locals,
//! the worklist state and the claims' invocation number back for the host.

use std::fmt::Write;

use grail_ir::*;

use super::{Cuda, reduction};
use crate::CodegenError;
use crate::printer::{self, Emitter, c_type, from_value, member_type, value_member};

/// The control kernels of `module`'s outlined regions, after the invoke functions of the
/// kernels they invoke.
pub(super) fn regions(target: &Cuda, out: &mut String, module: &Module) -> Result<(), CodegenError> {
    let regions = grail_ir::opt::outline::outlined_regions(&module.main.block);
    if regions.is_empty() {
        return Ok(());
    }
    for (k, invoked) in grail_ir::opt::outline::region_kernels(module).into_iter().enumerate() {
        if invoked {
            invoke_function(target, out, module, KernelId(k as u32))?;
        }
    }
    for k in grail_ir::opt::queue::queued_kernels(module) {
        queue_invoke_function(out, module, k);
    }
    for region in regions {
        control_kernel(target, out, module, region)?;
    }
    Ok(())
}

/// The id of a region statement.
fn region_id(stmt: &Stmt) -> u32 {
    match stmt {
        Stmt::Iterate(iterate) => iterate.id.0,
        Stmt::Pipe(pipe) => pipe.id.0,
        _ => u32::MAX,
    }
}

/// `grail_k<k>_invoke`: one invocation of kernel `k` inside a control kernel, as the GPU
/// executor's `run_kernel` does it from the host. Inlined, with the phases' `_run` functions, so
/// that the context and the state live in registers rather than in every thread's local memory.
fn invoke_function(target: &Cuda, out: &mut String, module: &Module, k: KernelId) -> Result<(), CodegenError> {
    let kernel = &module.kernels[k.index()];
    let k = k.index();
    let worklist = kernel.uses_worklist();
    let claims = uses_node_claims(kernel);
    let adaptive = module.opt.adapt && grail_ir::analysis::is_morph_kernel(module, kernel);
    let reduction = match kernel.reduction {
        Some(_) => Some(reduction(&Emitter::new(target, module, &kernel.body, Some(kernel)))?),
        None => None,
    };
    let mut f = String::new();
    let mut line = lines_into(&mut f);
    line(0, &format!("/* kernel `{}` invoked in an outlined region */", kernel.name));
    line(
        0,
        &format!(
            "__device__ __forceinline__ grail_value grail_k{k}_invoke(grail_ctx *c, grail_state *S, const grail_value *args) {{"
        ),
    );
    line(1, "grail_region *const R = S->R;");
    line(1, "grail_value result_;");
    line(1, "result_.u = 0;");
    if claims {
        line(1, "c->invocation = grail_next_invocation(c, S);");
    }
    line(1, "const uint64_t inv_ = S->inv;");
    let reads_list = kernel.body.block.iter().any(|s| matches!(s, Stmt::ForAll(f) if f.space == Space::Worklist));
    if reads_list {
        line(1, "const grail_list in_ = S->lists[S->cur];");
    }
    if worklist {
        line(1, "const grail_list out_ = S->lists[S->cur ^ 1u];");
        line(1, "c->pushes = grail_list_wl(&out_, &R->push_len[inv_ % GRAIL_RING], NULL);");
    }
    if reduction.is_some() {
        line(1, &format!("const uint32_t kinv_ = S->kinv[{k}];"));
        line(1, &format!("c->acc = &R->acc[{k} * GRAIL_RING + kinv_ % GRAIL_RING];"));
    }
    for (p, stmt) in kernel.body.block.iter().enumerate() {
        let Stmt::ForAll(phase) = stmt else {
            return Err(CodegenError::Internal(format!("kernel {} has a statement outside its loops", kernel.name)));
        };
        line(1, "{");
        line(2, "uint64_t size_;");
        line(2, "c->retrying = 0u;");
        if adaptive {
            line(2, &format!("c->active = grail_adapt_threads(S->stats[{}]);", 4 * k));
        }
        match phase.space {
            Space::Worklist => {
                line(2, "c->items = in_.items;");
                line(2, "c->items_cap = in_.cap;");
                line(2, "c->items_spill = in_.spill;");
                line(2, "c->item_count = S->len;");
                line(2, "size_ = S->len;");
            }
            Space::AllNodes if module.growth.as_ref().is_none_or(|g| g.nodes.is_none()) => {
                line(2, "size_ = c->num_nodes;")
            }
            Space::AllEdges if module.growth.is_none() => line(2, "size_ = c->num_edges;"),
            _ => line(2, &format!("size_ = grail_k{k}_{p}_size_of(c, args);")),
        }
        line(2, "for (;;) {");
        line(3, "const uint64_t step_ = S->step;");
        line(3, "const grail_list rw_ = S->retry_lists[S->retry_cur ^ 1u];");
        line(3, "uint32_t *const over_ = &R->step_overflow[step_ % GRAIL_RING];");
        line(3, "c->retries = grail_list_wl(&rw_, &R->retry_len[step_ % GRAIL_RING], over_);");
        line(3, "c->pushes.overflow = over_;");
        let marked = super::marked(module, k, p).is_some();
        // A phase that marks decide runs without the hub executor.
        let hubs = !marked && grail_ir::opt::nested::grid_shared(phase);
        match (marked, hubs) {
            (true, _) => line(3, &format!("grail_k{k}_{p}_run_marks(c, args, size_, S);")),
            (false, true) => {
                // The hubs it posted (`schedule::hub_declarations`), drained by the grid after its
                // barrier; the step's count, read by every thread before the second barrier, is
                // cleared after it (the next step posts to the other count).
                line(3, &format!("uint64_t *const hubs_ = &grail_k{k}_{p}_hub_count_[(step_ & 1u) * 2u];"));
                line(3, &format!("grail_k{k}_{p}_run(c, args, size_, hubs_);"));
            }
            (false, false) => line(3, &format!("grail_k{k}_{p}_run(c, args, size_);")),
        }
        line(3, "grail_grid_sync(S);");
        if hubs {
            line(3, "if (*(volatile uint64_t *)hubs_ != 0u) {");
            line(4, &format!("grail_k{k}_{p}_drain(c, args, hubs_);"));
            line(4, "grail_grid_sync(S);");
            line(4, "if (grail_thread_index() == 0) {");
            line(5, "hubs_[0] = 0u;");
            line(5, "hubs_[1] = 0u;");
            line(4, "}");
            line(3, "}");
        }
        // Checked mode: a failed check leaves the region, so the host sees it (its substitute
        // values could otherwise keep an iterate going on the device forever).
        line(3, "if (grail_checks_failed(c)) {");
        line(4, &format!("if (grail_thread_index() == 0) c->checks[2] = {}ull;", k + 1));
        line(4, "S->failed = true;");
        line(4, "return result_;");
        line(3, "}");
        // A collection that could not grow leaves the region too: the failing adds wrote their
        // sink element, and the host reports the collection's error.
        if !module.collections.is_empty() {
            line(3, &format!("if (grail_colls_failed(c, {})) {{", module.collections.len()));
            line(4, "S->failed = true;");
            line(4, "return result_;");
            line(3, "}");
        }
        line(3, "const uint64_t retried_ = grail_read_u64(&R->retry_len[step_ % GRAIL_RING]);");
        line(3, "const uint32_t overflow_ = *(volatile uint32_t *)over_;");
        line(3, "if (grail_thread_index() == 0) {");
        line(4, "R->retry_len[(step_ + 2) % GRAIL_RING] = 0;");
        line(4, "R->step_overflow[(step_ + 2) % GRAIL_RING] = 0u;");
        line(3, "}");
        line(3, "if (overflow_ > S->overflow) S->overflow = overflow_;");
        line(3, &format!("S->stats[{}] += size_;", 4 * k + 1));
        line(3, &format!("S->stats[{}] += retried_;", 4 * k + 3));
        line(3, "S->step = step_ + 1;");
        line(3, "if (overflow_ >= 2u) {");
        line(4, "S->failed = true;");
        line(4, "return result_;");
        line(3, "}");
        line(3, "if (retried_ == 0) break;");
        line(3, "S->retry_cur ^= 1u;");
        line(3, "c->items = rw_.items;");
        line(3, "c->items_cap = rw_.cap;");
        line(3, "c->items_spill = rw_.spill;");
        line(3, "c->item_count = retried_;");
        line(3, "c->retrying = 1u;");
        if adaptive {
            // Retry passes hand out their items by thread (backoff): every thread takes some.
            line(3, "c->active = 0u;");
        }
        line(3, "size_ = retried_;");
        line(2, "}");
        line(1, "}");
    }
    if worklist {
        line(1, "const uint64_t pushes_ = grail_read_u64(&R->push_len[inv_ % GRAIL_RING]);");
    }
    if adaptive {
        line(1, "c->active = 0u;");
    }
    line(1, &format!("S->stats[{}] += 1;", 4 * k));
    if worklist {
        line(1, &format!("S->stats[{}] += pushes_;", 4 * k + 2));
    }
    line(1, "if (grail_thread_index() == 0) {");
    if worklist {
        line(2, "R->push_len[(inv_ + 2) % GRAIL_RING] = 0;");
    }
    if let Some(r) = &reduction {
        // The slot two invocations ahead starts again at the identity.
        let member = r.member;
        line(
            2,
            &format!(
                "R->acc[{k} * GRAIL_RING + (kinv_ + 2) % GRAIL_RING].{member} = ({})({});",
                member_type(member),
                r.identity
            ),
        );
    }
    line(1, "}");
    line(1, "S->inv = inv_ + 1;");
    // Only a program with a queued loop tracks what its lists hold (the queue empties only
    // the slots written since it last ran); the others keep their registers.
    let tracks_lists = !grail_ir::opt::queue::queued_kernels(module).is_empty();
    if worklist {
        line(1, "S->cur ^= 1u;");
        line(1, "S->len = pushes_;");
        line(1, "S->all_len = pushes_;");
        if tracks_lists {
            line(1, "grail_list_written(S, S->cur, pushes_);");
        }
    }
    if reduction.is_some() {
        line(1, &format!("result_ = grail_read_value(&R->acc[{k} * GRAIL_RING + kinv_ % GRAIL_RING]);"));
        line(1, &format!("S->kinv[{k}] = kinv_ + 1;"));
    }
    // On a part of a partitioned graph: the superstep's exchange with the other parts, on the
    // devices; the kernel's value becomes every part's, combined in part order. Left out of
    // programs that cannot be partitioned: the branch alone changed how ptxas allocated
    // registers in `dmr`'s control kernel (80 instead of 64, three blocks a multiprocessor
    // instead of four) and made its refinement 12-15% slower.
    if partitionable(module) {
        peer_step(&mut line, k, worklist, reduction.as_ref());
    }
    line(1, "return result_;");
    line(0, "}");
    drop(line);
    out.push_str(&f);
    Ok(())
}

/// `grail_k<k>_invoke_queue`: kernel `k`'s worklist loop run as one queue
/// ([`grail_ir::opt::queue`]) in an outlined region, until no item is left (or the pushes past
/// the current list's capacity, which become the next invocation's items). The list's slots past
/// its items that anything wrote since the queue last ran on it are emptied first
/// (`grail_state.dirty`); after the queue, what it did not hand out (and what spilled) is moved
/// to the other list.
///
/// On a part of a partitioned graph in the asynchronous mode (the fused worker, `grail_peers`
/// in mode 1), the queue runs in turns: its blocks stop taking items `GRAIL_ASYNC_QUEUE_NS`
/// after the turn began, and the part exchanges with the others (`grail_peer_async_step`:
/// what its items changed in ghosts and the ghosts they met go out, what came in is merged
/// and appended) before the loop's next invocation starts the next turn. A part whose loops
/// exchange in supersteps, or with the host, goes in rounds as usual.
fn queue_invoke_function(out: &mut String, module: &Module, k: KernelId) {
    let kernel = &module.kernels[k.index()];
    let k = k.index();
    let mut f = String::new();
    let mut line = lines_into(&mut f);
    line(0, &format!("/* kernel `{}`'s loop run as one queue in an outlined region */", kernel.name));
    line(
        0,
        &format!(
            "__device__ __forceinline__ grail_value grail_k{k}_invoke_queue(grail_ctx *c, grail_state *S, const grail_value *args) {{"
        ),
    );
    let partitioned = partitionable(module);
    if partitioned {
        line(
            1,
            &format!(
                "if (S->R->peers != NULL ? S->R->peers->mode == 0u : c->ghost_flags != NULL) return grail_k{k}_invoke(c, S, args);"
            ),
        );
    } else {
        line(1, &format!("if (S->R->peers != NULL) return grail_k{k}_invoke(c, S, args);"));
    }
    line(1, "grail_region *const R = S->R;");
    line(1, "grail_value result_;");
    line(1, "result_.u = 0;");
    line(1, "const uint64_t inv_ = S->inv;");
    line(1, "const uint64_t step_ = S->step;");
    line(1, "const grail_list q_ = S->lists[S->cur];");
    line(1, "const uint64_t len_ = S->len;");
    line(1, "uint32_t *const over_ = &R->step_overflow[step_ % GRAIL_RING];");
    // Only the slots written since the queue last emptied this list (`grail_list_written`):
    // on `sssp_nfq`'s windows that is the last window's pushes, not the list's capacity.
    line(1, "const uint64_t dirty_ = S->dirty[S->cur];");
    line(
        1,
        "for (uint64_t x_ = len_ + grail_thread_index(); x_ < dirty_; x_ += grail_thread_count()) q_.items[x_] = GRAIL_QUEUE_EMPTY;",
    );
    // The counters start again inside the barrier, once every thread has arrived: a thread
    // may still be reading the last queue's counters until it arrives (the last queue ends
    // with a barrier, but a thread that has read them may come here before the others do).
    line(1, "grail_grid_sync_with(S, [&] {");
    line(2, "if (threadIdx.x == 0) {");
    line(3, "R->queue_head = 0u;");
    line(3, "R->queue_tail = len_;");
    line(3, "R->queue_done = 0u;");
    line(2, "}");
    line(1, "});");
    line(1, "c->retrying = 0u;");
    line(1, "c->items = q_.items;");
    line(1, "c->items_cap = q_.cap;");
    line(1, "c->items_spill = q_.spill;");
    line(1, "c->item_count = len_;");
    line(1, "c->pushes = grail_list_wl(&q_, &R->queue_tail, over_);");
    line(1, "grail_queue q;");
    line(1, "q.head = &R->queue_head;");
    line(1, "q.tail = &R->queue_tail;");
    line(1, "q.done = &R->queue_done;");
    line(1, "q.cap = q_.cap;");
    line(1, "q.items = q_.items;");
    if partitioned {
        line(1, "q.deadline = R->peers != NULL ? grail_clock_ns() + GRAIL_ASYNC_QUEUE_NS : 0u;");
    } else {
        line(1, "q.deadline = 0u;");
    }
    line(1, &format!("grail_k{k}_0_run_queue(c, args, &q);"));
    line(1, "grail_grid_sync(S);");
    line(1, "if (grail_checks_failed(c)) {");
    line(2, &format!("if (grail_thread_index() == 0) c->checks[2] = {}ull;", k + 1));
    line(2, "S->failed = true;");
    line(2, "return result_;");
    line(1, "}");
    line(1, "const uint64_t total_ = grail_read_u64(&R->queue_tail);");
    line(1, "const uint64_t taken_ = total_ < q_.cap ? total_ : q_.cap;");
    // The slots handed out: all of the list's but on a part whose turn ended first. What is
    // left, [head_, total_), is contiguous in the list and its spill: where anything spilled,
    // the list was handed out to its capacity or is the rest's first part.
    line(1, "const uint64_t head_ = grail_read_u64(&R->queue_head);");
    line(1, "const uint64_t left_ = total_ - head_;");
    // Slots [len_, taken_) hold pushes now; every slot past them is still empty.
    line(1, "S->dirty[S->cur] = taken_;");
    line(1, "if (left_ != 0u && *(volatile uint32_t *)over_ < 2u) {");
    line(2, "const grail_list o_ = S->lists[S->cur ^ 1u];");
    line(2, "grail_list_written(S, S->cur ^ 1u, left_);");
    // `grail_push_slot` writes a reserved slot and never reads the length: any counter will do.
    line(2, "const grail_wl to_ = grail_list_wl(&o_, &R->queue_done, over_);");
    line(2, "for (uint64_t x_ = grail_thread_index(); x_ < left_; x_ += grail_thread_count())");
    line(3, "grail_push_slot(&to_, x_, grail_item(q_.items, q_.cap, q_.spill, head_ + x_));");
    line(2, "grail_grid_sync(S);");
    line(2, "S->cur ^= 1u;");
    line(1, "}");
    line(1, "const uint32_t overflow_ = *(volatile uint32_t *)over_;");
    line(1, "if (overflow_ > S->overflow) S->overflow = overflow_;");
    line(1, &format!("S->stats[{}] += 1;", 4 * k));
    line(1, &format!("S->stats[{}] += head_;", 4 * k + 1));
    line(1, &format!("S->stats[{}] += total_ - len_;", 4 * k + 2));
    line(1, "if (grail_thread_index() == 0) {");
    line(2, "R->retry_len[(step_ + 2) % GRAIL_RING] = 0;");
    line(2, "R->step_overflow[(step_ + 2) % GRAIL_RING] = 0u;");
    line(2, "R->push_len[(inv_ + 2) % GRAIL_RING] = 0;");
    line(1, "}");
    line(1, "S->step = step_ + 1;");
    line(1, "S->inv = inv_ + 1;");
    line(1, "if (overflow_ >= 2u) {");
    line(2, "S->failed = true;");
    line(2, "return result_;");
    line(1, "}");
    line(1, "S->len = left_;");
    line(1, "S->all_len = left_;");
    if partitioned {
        // The turn's exchange, as after an invocation in rounds (`peer_step`'s asynchronous
        // branch); what comes in is appended to the list the leftovers are in.
        line(1, "if (R->peers != NULL) {");
        line(2, "c->pushes = grail_list_wl(&S->lists[S->cur], &R->queue_done, over_);");
        line(2, "uint64_t len_ = left_;");
        // After every turn: the turn's length, not a count of invocations, spaces the exchanges.
        line(2, "S->async_gap = 1u;");
        async_exchange(&mut line, k, 2);
        line(1, "}");
    }
    line(1, "return result_;");
    line(0, "}");
    drop(line);
    out.push_str(&f);
}

/// A writer of indented lines (four spaces a level) into `out`.
fn lines_into(out: &mut String) -> impl FnMut(usize, &str) + '_ {
    move |depth: usize, text: &str| {
        for _ in 0..depth {
            out.push_str("    ");
        }
        out.push_str(text);
        out.push('\n');
    }
}

/// Whether a multi-device run could take the program (`grail_ir::analysis::partition_obstacles`):
/// only then can an outlined region run on a part whose exchanges are made on the devices.
fn partitionable(module: &Module) -> bool {
    grail_ir::analysis::partition_obstacles(module).is_empty()
}

/// The superstep's exchange after an invocation of kernel `k`, on a part of a partitioned graph.
fn peer_step(line: &mut impl FnMut(usize, &str), k: usize, worklist: bool, reduction: Option<&super::Reduction>) {
    line(1, "if (R->peers != NULL) {");
    line(2, &format!("uint64_t len_ = {};", if worklist { "S->len" } else { "0" }));
    if worklist {
        // The asynchronous mode: the part goes on with its own worklist, exchanging as it goes;
        // the list is empty only once every part's is and nothing is in flight.
        line(2, "if (R->peers->mode != 0u) {");
        async_exchange(line, k, 3);
        line(3, "return result_;");
        line(2, "}");
    }
    line(
        2,
        &format!(
            "if (!grail_peer_step(c, S, {k}u, result_, {}, &len_, {})) return result_;",
            reduction.is_some(),
            if worklist { "&S->lists[S->cur]" } else { "NULL" }
        ),
    );
    if worklist {
        line(2, "S->len = len_;");
        line(2, "S->all_len = grail_peer_len(S);");
        line(2, "grail_list_written(S, S->cur, len_);");
    }
    if let Some(r) = &reduction {
        let (ty, member) = (&r.ty, r.member);
        line(2, &format!("{ty} all_ = {};", r.identity));
        line(2, "for (uint32_t q_ = 0; q_ < R->peers->parts; q_++) {");
        line(3, &format!("const {ty} v_ = ({ty})grail_peer_partial(S, q_, 0u).{member};"));
        line(3, &format!("all_ = {};", Emitter::<Cuda>::combine(r.op, ty, "all_", "v_")));
        line(2, "}");
        line(2, &format!("result_.{member} = ({})all_;", member_type(member)));
    }
    line(1, "}");
}

/// The asynchronous exchange after kernel `k`'s invocation or queue turn on a part
/// (`grail_peer_async_step`), with the part's worklist length in `len_`, which becomes the list's.
fn async_exchange(line: &mut impl FnMut(usize, &str), k: usize, depth: usize) {
    line(depth, &format!("if (!grail_peer_async_step(c, S, {k}u, &len_, &S->lists[S->cur])) return result_;"));
    line(depth, "S->len = len_;");
    line(depth, "S->all_len = len_;");
    line(depth, "grail_list_written(S, S->cur, len_);");
}

/// Whether a kernel claims nodes (`single`), which needs a fresh invocation number.
fn uses_node_claims(kernel: &Kernel) -> bool {
    let mut found = false;
    walk_block(&kernel.body.block, &mut |stmt| {
        found |= matches!(stmt, Stmt::Lock { kind: LockKind::Single, elements, .. }
            if elements.first().is_some_and(|e| e.ty == Type::Node));
    });
    found
}

/// `grail_o<id>`: the control kernel of one outlined region.
fn control_kernel(target: &Cuda, out: &mut String, module: &Module, region: &Stmt) -> Result<(), CodegenError> {
    let id = region_id(region);
    let mut e = Emitter::new(target, module, &module.main, None);
    e.region = true;
    // The region itself, printed first: it tells which locals and context fields to load.
    let region_block = vec![region.clone()];
    let code = e.capture(|e| e.block(&region_block, 1))?;
    let used = e.used_locals();
    e.out.clear();
    writeln!(e.out, "/* {}, outlined: the whole loop in one launch */", grail_ir::opt::outline::region_name(region))
        .unwrap();
    writeln!(
        e.out,
        "extern \"C\" __global__ void __launch_bounds__(GRAIL_BLOCK) grail_o{id}(const grail_ctx ctx_, grail_region *R) {{"
    )
    .unwrap();
    e.line(1, "const grail_ctx *const ctx = &ctx_;");
    // The context the kernels see: one copy, whose worklist and reduction fields each
    // invocation sets.
    e.line(1, "grail_ctx c_ = ctx_;");
    e.views();
    let kernels = module.kernels.len().max(1);
    e.line(1, &format!("uint32_t kinv_[{kernels}] = {{0}};"));
    e.line(1, &format!("uint64_t stats_[{}] = {{0}};", 4 * kernels));
    e.line(1, "grail_state S_ = grail_state_begin(R, kinv_, stats_);");
    e.line(1, "grail_state *const S = &S_;");
    let mut stores = Vec::new();
    for &i in &used {
        let local = &module.main.locals[i];
        if matches!(local.ty, Type::Struct(_) | Type::Unit) {
            return Err(CodegenError::Internal(format!("outlined host code uses `{}`, a struct", local.name)));
        }
        let name = printer::local_name(i, &local.name);
        let value = from_value(local.ty, &format!("R->frame[{i}]"));
        e.line(1, &format!("{} {name} = {value};", c_type(local.ty)));
        let member = value_member(local.ty);
        stores.push(format!("R->frame[{i}].{member} = ({}){name};", member_type(member)));
    }
    // Always one jump to the end, so the label is used.
    e.line(1, "if (S->failed) goto grail_done_;");
    e.out.push_str(&code);
    e.line(0, "grail_done_:;");
    // A part that failed stops the others at their next peer barrier.
    if partitionable(module) {
        e.line(
            1,
            "if (R->peers != NULL && S->failed && grail_thread_index() == 0) atomicExch_system(&R->peers->barrier[1], 1u);",
        );
    }
    e.line(1, "if (grail_thread_index() == 0) {");
    e.line(2, "R->len = S->len;");
    e.line(2, "R->cur = S->cur;");
    e.line(2, "R->invocation = S->invocation;");
    e.line(2, "R->overflow = S->overflow;");
    e.line(2, &format!("for (int s_ = 0; s_ < {}; s_++) R->stats[s_] = stats_[s_];", 4 * kernels));
    for store in stores {
        e.line(2, &store);
    }
    e.line(1, "}");
    e.line(0, "}");
    out.push_str(&e.out);
    Ok(())
}

/// Host orchestration inside a control kernel: invocations, `iterate` and `pipe` loops.
pub(super) fn orchestration(e: &mut Emitter<'_, Cuda>, stmt: &Stmt, depth: usize) -> Result<(), CodegenError> {
    if !e.region {
        return Err(CodegenError::Internal("host orchestration in device code".into()));
    }
    match stmt {
        Stmt::Invoke { kernel, args, result } => invoke(e, *kernel, args, *result, false, depth),
        Stmt::Iterate(iterate) => {
            // A worklist loop also leaves after the region's budget of invocations, if it has one.
            e.line(depth, "{");
            e.line(depth + 1, "const uint64_t inv0_ = S->inv;");
            e.line(depth + 1, "do {");
            if let Until::Empty { kernel, args, .. } = &iterate.until {
                let queued = grail_ir::opt::queue::queued(e.module, iterate).is_some();
                invoke(e, *kernel, args, None, queued, depth + 2)?;
            }
            e.looped(&iterate.body, depth + 2)?;
            let until = match &iterate.until {
                Until::Empty { .. } => {
                    "S->all_len != 0 && (S->R->budget == 0u || S->inv - inv0_ < (uint64_t)S->R->budget)".to_string()
                }
                Until::Condition { cond, stop_when } => format!("{} != {stop_when}", e.expr(cond)?),
            };
            e.line(depth + 1, &format!("}} while ({until});"));
            e.line(depth + 1, "(void)inv0_;");
            e.line(depth, "}");
            Ok(())
        }
        Stmt::Pipe(pipe) if pipe.once => {
            e.line(depth, "{");
            e.block(&pipe.body, depth + 1)?;
            e.line(depth, "}");
            Ok(())
        }
        Stmt::Pipe(pipe) => {
            // Unrolled (pipe unrolling), the body repeats with the loop's test between copies:
            // `break` and `continue` in any copy still mean what they mean in the loop.
            e.line(depth, "do {");
            for copy in 0..pipe.unroll.max(1) {
                if copy > 0 {
                    e.line(depth + 1, "if (S->all_len == 0) break;");
                }
                e.line(depth + 1, "{");
                e.looped(&pipe.body, depth + 2)?;
                e.line(depth + 1, "}");
            }
            e.line(depth, "} while (S->all_len != 0);");
            Ok(())
        }
        _ => Err(CodegenError::Internal("a statement that cannot run in an outlined region".into())),
    }
}

/// `invoke kernel(args)` in a control kernel; `queued`: the invocation of a worklist loop run as
/// one queue (`grail_k<k>_invoke_queue`).
fn invoke(
    e: &mut Emitter<'_, Cuda>,
    kernel: KernelId,
    args: &[Expr],
    result: Option<LocalId>,
    queued: bool,
    depth: usize,
) -> Result<(), CodegenError> {
    e.line(depth, "{");
    e.line(depth + 1, &format!("grail_value a_[{}];", args.len().max(1)));
    if args.is_empty() {
        e.line(depth + 1, "a_[0].u = 0;");
    }
    for (i, arg) in args.iter().enumerate() {
        let member = value_member(arg.ty);
        let value = e.expr(arg)?;
        e.line(depth + 1, &format!("a_[{i}].{member} = ({})({value});", member_type(member)));
    }
    let suffix = if queued { "_queue" } else { "" };
    e.line(depth + 1, &format!("const grail_value r_ = grail_k{}_invoke{suffix}(&c_, S, a_);", kernel.0));
    e.line(depth + 1, "if (S->failed) goto grail_done_;");
    match result {
        Some(local) => {
            let ty = e.body.locals[local.index()].ty;
            let name = e.local(local);
            e.line(depth + 1, &format!("{name} = {};", from_value(ty, "r_")));
        }
        None => e.line(depth + 1, "(void)r_;"),
    }
    e.line(depth, "}");
    Ok(())
}
