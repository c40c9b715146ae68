//! Nested parallelism (IrGL §4.3): which nested `forall` of a kernel phase the schedulers run.
//!
//! A nested `forall` over a node's adjacency runs, unoptimized, as a serial loop in its item's
//! thread, so one hub's million edges keep one thread busy while its warp waits. The schedulers
//! (thread block, warp, fine-grained; [`Schedulers`]) share the iterations of the inner loops of
//! a whole block among its threads: each thread runs its item up to the nested loop and records
//! the loop's range (the *inspector*), then the block runs the recorded loops together (the
//! *executors*), then each thread finishes its item. That is only the original program when:
//!
//! - the loop is the last thing its item does on its path, except for statements that follow it
//!   at the top of the item's body (which run after the executors): it stands at the top of the
//!   item's body, or last in a branch of an `if` that does;
//! - the loop's body writes no local that the rest of the item uses (iterations then share
//!   nothing but the values they read, its *closure*, which the executors hand to whichever
//!   thread runs an iteration), and those values are scalars.
//!
//! One nested loop per phase is scheduled (the first that qualifies); the pass marks it with the
//! configured [`Schedule`] and notes why any other stays serial. [`site`] and [`closure`] answer
//! the same questions for the emitters.

use crate::analysis::{expr_local_reads, local_uses, stmt_local_uses};
use crate::ir::*;
use crate::opt::{OptConfig, Schedulers};

pub(crate) fn run(module: &mut Module, config: &OptConfig, notes: &mut Vec<String>) {
    if config.np.is_serial() {
        return;
    }
    let schedule = schedule_of(config.np);
    for kernel in &mut module.kernels {
        let body = kernel.body.clone();
        for (p, stmt) in kernel.body.block.iter_mut().enumerate() {
            let Stmt::ForAll(phase) = stmt else { continue };
            let found = count_nested(&phase.body);
            if found == 0 {
                continue;
            }
            let where_ = format!("kernel `{}`, phase {p}", kernel.name);
            match eligible(&body, phase) {
                Ok(top) => {
                    if let Some(inner) = tail_forall_mut(&mut phase.body[top]) {
                        inner.schedule = schedule;
                    }
                    if found > 1 {
                        notes.push(format!("{where_}: only its first schedulable nested loop is scheduled"));
                    }
                }
                Err(why) => notes.push(format!("{where_}: the nested loop stays serial: {why}")),
            }
        }
    }
}

/// The IR schedule of a scheduler combination.
pub fn schedule_of(np: Schedulers) -> Schedule {
    Schedule { thread_block: np.tb, warp: np.wp, fine_grained: np.fg }
}

/// The number of nested `forall`s in a block (at any depth).
fn count_nested(block: &Block) -> usize {
    let mut count = 0;
    walk_block(block, &mut |stmt| count += usize::from(matches!(stmt, Stmt::ForAll(_))));
    count
}

/// The nested loop a statement ends with: the statement itself, or the tail loop of the last
/// statement of either branch of an `if` (the `then` branch first).
pub fn tail_forall(stmt: &Stmt) -> Option<&ForAll> {
    match stmt {
        Stmt::ForAll(forall) if matches!(forall.space, Space::Adjacent(..)) => Some(forall),
        Stmt::If { then, otherwise, .. } => {
            then.last().and_then(tail_forall).or_else(|| otherwise.last().and_then(tail_forall))
        }
        _ => None,
    }
}

fn tail_forall_mut(stmt: &mut Stmt) -> Option<&mut ForAll> {
    match stmt {
        Stmt::ForAll(forall) if matches!(forall.space, Space::Adjacent(..)) => Some(forall),
        Stmt::If { then, otherwise, .. } => {
            if then.last().and_then(tail_forall).is_some() {
                then.last_mut().and_then(tail_forall_mut)
            } else {
                otherwise.last_mut().and_then(tail_forall_mut)
            }
        }
        _ => None,
    }
}

/// The index of the top-level statement of `phase`'s body that holds a nested loop the
/// schedulers can run, or why none can.
fn eligible(body: &Body, phase: &ForAll) -> Result<usize, String> {
    let Some(top) = phase.body.iter().position(|stmt| tail_forall(stmt).is_some()) else {
        return Err("it is not the last thing its item does (it is inside a loop, a lock, or followed by \
                    other statements inside a branch)"
            .into());
    };
    let inner = tail_forall(&phase.body[top]).expect("found above");
    let n = body.locals.len();
    // The locals the inner loop assigns, and those the rest of the item uses.
    let (mut inner_reads, mut inner_writes) = (vec![false; n], vec![false; n]);
    local_uses(&inner.body, &mut inner_reads, &mut inner_writes);
    inner_writes[inner.var.index()] = true;
    let outside = outside_uses(phase, inner, n);
    if let Some(shared) = (0..n).find(|&i| inner_writes[i] && outside[i]) {
        return Err(format!("its body writes `{}`, which the rest of the item uses", body.locals[shared].name));
    }
    for local in closure_locals(body, inner, 0) {
        if matches!(body.locals[local.index()].ty, Type::Struct(_)) {
            return Err(format!("its body reads `{}`, a struct, from its item", body.locals[local.index()].name));
        }
    }
    Ok(top)
}

/// The locals read or written by `phase` outside the nested loop `inner` (its filter and the
/// node whose adjacency it walks count as outside).
fn outside_uses(phase: &ForAll, inner: &ForAll, n: usize) -> Vec<bool> {
    let (mut reads, mut writes) = (vec![false; n], vec![false; n]);
    writes[phase.var.index()] = true;
    if let Some(filter) = &phase.filter {
        expr_local_reads(filter, &mut reads);
    }
    fn walk(block: &Block, inner: &ForAll, reads: &mut [bool], writes: &mut [bool]) {
        for stmt in block {
            if let Stmt::ForAll(forall) = stmt
                && std::ptr::eq(&**forall, inner)
            {
                if let Space::Adjacent(_, node) = &forall.space {
                    expr_local_reads(node, reads);
                }
                continue;
            }
            stmt_local_uses(stmt, reads, writes);
            for child in stmt.blocks() {
                walk(child, inner, reads, writes);
            }
        }
    }
    walk(&phase.body, inner, &mut reads, &mut writes);
    reads.iter().zip(&writes).map(|(r, w)| *r || *w).collect()
}

/// The closure of a nested loop: the locals its filter and body read and do not write (the
/// item variable and what the item set before the loop), other than the kernel's first `params` locals (its
/// parameters, the same in every thread).
fn closure_locals(body: &Body, inner: &ForAll, params: u32) -> Vec<LocalId> {
    let n = body.locals.len();
    let (mut reads, mut writes) = (vec![false; n], vec![false; n]);
    local_uses(&inner.body, &mut reads, &mut writes);
    if let Some(filter) = &inner.filter {
        expr_local_reads(filter, &mut reads);
    }
    writes[inner.var.index()] = true;
    (params as usize..n).filter(|&i| reads[i] && !writes[i]).map(|i| LocalId(i as u32)).collect()
}

/// Where a phase's scheduled nested loop is: the index of the top-level statement of the item's
/// body that ends with it, and the loop; `None` when the phase has none.
pub fn site(phase: &ForAll) -> Option<(usize, &ForAll)> {
    phase.body.iter().enumerate().find_map(|(top, stmt)| {
        let inner = tail_forall(stmt)?;
        (inner.schedule != Schedule::SERIAL).then_some((top, inner))
    })
}

/// The closure of the scheduled nested loop `inner` of a phase of `kernel`: the locals its body
/// reads and does not write, other than the kernel's parameters.
pub fn closure(kernel: &Kernel, inner: &ForAll) -> Vec<LocalId> {
    closure_locals(&kernel.body, inner, kernel.params)
}
