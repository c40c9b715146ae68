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

use grail_ir::opt::nested;
use grail_ir::*;

use super::Cuda;
use crate::CodegenError;
use crate::printer::{Emitter, c_type};

/// The executor's view of a recorded loop: where its range ends, and where each
/// closure value comes from (expressions of the executing thread).
struct Source {
    end: String,
    closure: Vec<String>,
}

/// The item loop of a scheduled phase, with the nested loop `inner` ending top-level statement
/// `top` of the item's body. `item` is item `i` as an expression of `i`; `indices` the lines that
/// `mapping` how the loop index `j` gives the item's index `i` (plain or backoff order).
pub(super) fn scheduled_items(
    e: &mut Emitter<'_, Cuda>,
    kernel: &Kernel,
    forall: &ForAll,
    top: usize,
    inner: &ForAll,
    item: &str,
    mapping: &Mapping,
) -> Result<(), CodegenError> {
    let closure: Vec<(String, String)> = nested::closure(kernel, inner)
        .into_iter()
        .map(|id| (e.local(id), c_type(kernel.body.locals[id.index()].ty)))
        .collect();
    let np = inner.schedule;
    e.line(
        1,
        &format!(
            "for (uint64_t b_ = (uint64_t)blockIdx.x * blockDim.x; b_ < {}; b_ += grail_thread_count()) {{",
            mapping.limit
        ),
    );
    e.line(2, "const uint64_t j = b_ + threadIdx.x;");
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
    let remaining = "(np_e_ - np_b_)";
    if np.thread_block {
        thread_block(e, inner, &closure, remaining)?;
    }
    let fine = np.fine_grained;
    if np.warp {
        warp(e, inner, &closure, if fine { "32" } else { "1" })?;
    }
    if fine {
        fine_grained(e, inner, &closure)?;
    } else if !np.warp {
        // Thread block alone: what it left runs serially in its own thread.
        let own = Source { end: "np_e_".into(), closure: Vec::new() };
        e.line(2, "{");
        run_range(e, inner, &[], &own, "k = np_b_", "k++", 3)?;
        e.line(2, "}");
    }
    if !after.is_empty() {
        e.line(2, "if (act_) do {");
        e.item_part(forall, None, after, 3)?;
        e.line(2, "} while (0);");
    }
    e.line(1, "}");
    Ok(())
}

/// How a phase's loop index `j` maps to its item `i`, and how far `j` runs.
pub(super) struct Mapping {
    /// The bound of `j` (an expression of `size`).
    pub limit: String,
    /// Item `i` from `j`.
    pub index: String,
}

/// The thread-block executor: while some thread's range has at least a block's positions, the
/// block runs one such range together.
fn thread_block(
    e: &mut Emitter<'_, Cuda>,
    inner: &ForAll,
    closure: &[(String, String)],
    remaining: &str,
) -> Result<(), CodegenError> {
    e.line(2, "{");
    e.line(3, "__shared__ int tb_owner_;");
    e.line(3, "__shared__ uint64_t tb_b_, tb_e_;");
    for (c, (_, ty)) in closure.iter().enumerate() {
        e.line(3, &format!("__shared__ {ty} tb_c{c}_;"));
    }
    e.line(3, "for (;;) {");
    e.line(4, "if (threadIdx.x == 0) tb_owner_ = -1;");
    e.line(4, "__syncthreads();");
    e.line(4, &format!("if ({remaining} >= (uint64_t)GRAIL_BLOCK) tb_owner_ = (int)threadIdx.x;"));
    e.line(4, "__syncthreads();");
    e.line(4, "const int owner_ = tb_owner_;");
    e.line(4, "if (owner_ < 0) break;");
    e.line(4, "if (owner_ == (int)threadIdx.x) {");
    e.line(5, "tb_b_ = np_b_;");
    e.line(5, "tb_e_ = np_e_;");
    for (c, (name, _)) in closure.iter().enumerate() {
        e.line(5, &format!("tb_c{c}_ = {name};"));
    }
    e.line(5, "np_b_ = np_e_;");
    e.line(4, "}");
    e.line(4, "__syncthreads();");
    let source = Source { end: "tb_e_".into(), closure: (0..closure.len()).map(|c| format!("tb_c{c}_")).collect() };
    run_range(e, inner, closure, &source, "k = tb_b_ + threadIdx.x", "k += blockDim.x", 4)?;
    e.line(4, "__syncthreads();");
    e.line(3, "}");
    e.line(2, "}");
    Ok(())
}

/// The warp executor: while some lane's range has at least `min` positions, its warp runs it
/// together, the range and closure broadcast from the owner lane by shuffles.
fn warp(
    e: &mut Emitter<'_, Cuda>,
    inner: &ForAll,
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
    let source = Source { end: "wp_e_".into(), closure: (0..closure.len()).map(|c| format!("wp_c{c}_")).collect() };
    run_range(e, inner, closure, &source, "k = wp_b_ + lane_", "k += 32", 4)?;
    e.line(4, "__syncwarp();");
    e.line(3, "}");
    e.line(2, "}");
    Ok(())
}

/// The fine-grained executor: every thread's remaining positions laid out one after another by
/// a block-wide prefix sum; in each round the block's threads take one position each.
fn fine_grained(e: &mut Emitter<'_, Cuda>, inner: &ForAll, closure: &[(String, String)]) -> Result<(), CodegenError> {
    e.line(2, "{");
    e.line(3, "__shared__ uint32_t fg_src_[GRAIL_BLOCK];");
    e.line(3, "__shared__ uint64_t fg_beg_[GRAIL_BLOCK];");
    for (c, (_, ty)) in closure.iter().enumerate() {
        e.line(3, &format!("__shared__ {ty} fg_c{c}_[GRAIL_BLOCK];"));
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
    e.line(4, "if (done_ + threadIdx.x < fg_total_) {");
    e.line(5, "const uint32_t o_ = fg_src_[threadIdx.x];");
    e.line(5, "const uint64_t k = fg_beg_[o_] + done_ + threadIdx.x;");
    let closure_src: Vec<String> = (0..closure.len()).map(|c| format!("fg_c{c}_[o_]")).collect();
    e.line(5, "do {");
    run_position(e, inner, closure, &closure_src, 6)?;
    e.line(5, "} while (0);");
    e.line(4, "}");
    e.line(4, "__syncthreads();");
    e.line(3, "}");
    e.line(3, "np_b_ = np_e_;");
    e.line(2, "}");
    Ok(())
}

/// A loop over positions `k` (from `init`, stepping by `step`, up to `source.end`) running the
/// nested loop's body at each.
fn run_range(
    e: &mut Emitter<'_, Cuda>,
    inner: &ForAll,
    closure: &[(String, String)],
    source: &Source,
    init: &str,
    step: &str,
    depth: usize,
) -> Result<(), CodegenError> {
    e.line(depth, &format!("for (uint64_t {init}; k < {}; {step}) {{", source.end));
    run_position(e, inner, closure, &source.closure, depth + 1)?;
    e.line(depth, "}");
    Ok(())
}

/// The nested loop's body at adjacency position `k`, with the closure's locals shadowed by the
/// values in `sources` (none: the thread's own).
fn run_position(
    e: &mut Emitter<'_, Cuda>,
    inner: &ForAll,
    closure: &[(String, String)],
    sources: &[String],
    depth: usize,
) -> Result<(), CodegenError> {
    let Space::Adjacent(adjacency, _) = &inner.space else {
        return Err(CodegenError::Internal("a scheduled loop that is not over adjacency".into()));
    };
    e.line(depth, "{");
    for ((name, ty), source) in closure.iter().zip(sources) {
        e.line(depth + 1, &format!("const {ty} {name} = {source};"));
    }
    let (_, item) = e.adjacency(*adjacency);
    let var = e.local(inner.var);
    e.line(depth + 1, &format!("{var} = {item};"));
    match &inner.filter {
        None => e.looped(&inner.body, depth + 1)?,
        Some(filter) => {
            let filter = e.expr(filter)?;
            e.line(depth + 1, &format!("if ({filter}) {{"));
            e.looped(&inner.body, depth + 2)?;
            e.line(depth + 1, "}");
        }
    }
    e.line(depth, "}");
    Ok(())
}
