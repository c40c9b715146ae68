//! The 3-phase lowering of `exclusive` (the morph paper's §7.3, [`grail_ir::opt::marks`]): a
//! phase's `grail_k<k>_<p>_run_marks(ctx, args, size, S)`, which an outlined region's invoke
//! function calls instead of `_run`. Every thread of the region's grid makes the same rounds;
//! in each, a thread takes the next item, runs it up to the marked `exclusive` (statement `top`
//! of the item's body) and records the elements it names, then:
//!
//! ```text
//! race (marks) | barrier | priority check | barrier | check, section or else, rest of the item | barrier
//! ```
//!
//! with `grail_mark_*` from `grail_cuda.h`. A thread without an item, or whose item ended
//! before the `exclusive` (`continue`, the filter), names no elements and only meets the
//! barriers.

use grail_ir::*;

use super::Cuda;
use super::schedule::Mapping;
use crate::CodegenError;
use crate::printer::Emitter;

/// The item loop of a phase whose `exclusive` at `top` marks decide.
pub(super) fn marked_items(
    e: &mut Emitter<'_, Cuda>,
    forall: &ForAll,
    top: usize,
    item: &str,
    mapping: &Mapping,
    backoff: bool,
) -> Result<(), CodegenError> {
    let Stmt::Lock { kind: LockKind::Exclusive, elements, body, otherwise } = &forall.body[top] else {
        return Err(CodegenError::Internal("a marked statement that is not `exclusive`".into()));
    };
    let (coll, locks, _) = e.lock_words(elements);
    let limit = &mapping.limit;
    // The elements' handles are copied: the section may change the array they came from.
    let capacity = match elements.as_slice() {
        [Expr { kind: ExprKind::ArrayPrefix { .. }, ty: Type::Array(id) }] => e.module.arrays[id.index()].len as usize,
        _ => elements.len(),
    };
    e.line(1, "const uint32_t me_ = (uint32_t)grail_thread_index() + 2u;");
    // The claimed handles live as long as the function (not one round): a frame slot whose
    // lifetime ends every round is one the compiler may share with other locals.
    e.line(1, &format!("uint32_t mk_[{}];", capacity.max(1)));
    e.line(1, &format!("for (uint64_t b_ = 0; b_ < {limit}; b_ += grail_thread_count()) {{"));
    e.line(2, "const uint64_t j = b_ + grail_thread_index();");
    e.line(2, "int mk_n_ = -1;");
    e.line(2, "do {");
    e.line(3, &format!("if (j >= {limit}) break;"));
    e.line(3, &format!("const uint64_t i = {};", mapping.index));
    if backoff {
        e.line(3, "if (i >= size) break;");
    }
    e.item_part(forall, Some(item), &forall.body[..top], 3)?;
    match elements.as_slice() {
        [Expr { kind: ExprKind::ArrayPrefix { array, count }, .. }] => {
            let (array, count) = (e.expr(array)?, e.expr(count)?);
            e.line(3, "{");
            e.line(
                4,
                &format!("const int n_ = (uint64_t)({count}) <= {capacity} ? (int)({count}) : (GRAIL_TRAP(), 0);"),
            );
            e.line(4, &format!("for (int k_ = 0; k_ < n_; k_++) mk_[k_] = ({array}).v[k_];"));
            e.line(4, "mk_n_ = n_;");
            e.line(3, "}");
        }
        listed => {
            for (k, element) in listed.iter().enumerate() {
                let element = e.expr(element)?;
                e.line(3, &format!("mk_[{k}] = {element};"));
            }
            e.line(3, &format!("mk_n_ = {};", listed.len()));
        }
    }
    e.line(2, "} while (0);");
    let args = format!("ctx, {coll}, {locks}, mk_, mk_n_, me_");
    e.line(2, &format!("if (mk_n_ > 0) grail_mark_race({args});"));
    e.line(2, "grail_grid_sync(S);");
    e.line(2, &format!("bool won_ = mk_n_ >= 0 && grail_mark_priority({args});"));
    e.line(2, "grail_grid_sync(S);");
    e.line(2, &format!("if (won_) won_ = grail_mark_check({args});"));
    e.line(2, &format!("if (mk_n_ > 0 && !won_) grail_mark_clear({args});"));
    e.line(2, "if (mk_n_ >= 0) do {");
    // Acquire, as a lock's: the section's reads come after the check (and L1 holds nothing
    // older).
    e.line(3, "if (won_) __threadfence();");
    e.marked_section("won_", format!("grail_mark_release({args});"), body, otherwise, 3)?;
    e.item_part(forall, None, &forall.body[top + 1..], 3)?;
    e.line(2, "} while (0);");
    // The round's sections are over before the next round's items read what they changed.
    e.line(2, "grail_grid_sync(S);");
    e.line(1, "}");
    Ok(())
}
