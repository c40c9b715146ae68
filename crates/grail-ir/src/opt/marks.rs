//! Conflict resolution by marking (the morph paper's §7.3, "probabilistic 3-phase conflict
//! resolution"): how a GPU kernel's `exclusive` can own its elements without locks.
//!
//! With [`OptConfig::marks`], an `exclusive` that is a statement of its kernel's item itself
//! (not inside a loop, an `if` or another section) is lowered, in the phases an outlined region
//! runs, as rounds over the phase's items that every thread of the grid makes together:
//!
//! 1. each thread runs its item up to the `exclusive` and writes its number into the lock word
//!    of every element it names (*race*: plain stores, the last one wins);
//! 2. after a grid barrier, each thread looks at its marks again: a higher thread's mark means
//!    it has lost; a lower one's it raises to its own (`atomicMax`) (*priority check*);
//! 3. after a second barrier, a thread whose marks all still stand owns its elements (*check*,
//!    read-only, so no two threads can both see themselves owning a shared element); losers
//!    clear what is left of their marks and run the `else` block; winners run the section,
//!    clear their marks and finish the item; a third barrier ends the round, so the next
//!    round's items read the graph as this round's winners left it.
//!
//! Among overlapping claims the highest thread always wins, so a round of conflicts makes
//! progress. Marks live in the lock words with the thread numbers locks use, so a lock that a
//! winner's section takes inside the section (an `exclusive` of new elements) waits for and
//! excludes the same threads as before. Locks taken before the marked `exclusive` could wait on
//! a mark whose thread waits at the barrier: such kernels keep locks.
//!
//! Off in `all`: on an H200, refining dmr's 10 M triangles takes 18% longer with marks than with
//! locks (each round waits at its barriers for its slowest item; docs/benchmarks.md).
//!
//! The pass marks nothing in the IR: the CUDA emitter asks [`site`] for each phase when
//! [`OptConfig::marks`] is on, and this pass notes why a kernel's `exclusive` keeps its locks.
//! The CPU backend always takes locks (its threads are few and rarely collide).

use crate::analysis::{stmt_exprs, walk_expr};
use crate::ir::*;
use crate::opt::{OptConfig, local, nested, outline};

pub(crate) fn run(module: &mut Module, config: &OptConfig, notes: &mut Vec<String>) {
    if !config.marks {
        return;
    }
    for (k, kernel) in module.kernels.iter().enumerate() {
        for (p, stmt) in kernel.body.block.iter().enumerate() {
            let Stmt::ForAll(phase) = stmt else { continue };
            if !has_exclusive(&phase.body) {
                continue;
            }
            if let Err(why) = site(module, KernelId(k as u32), p) {
                notes.push(format!("kernel `{}`: its `exclusive` takes locks, not marks: {why}", kernel.name));
            }
        }
    }
}

/// The position in phase `phase` of kernel `id`'s item body of the `exclusive` that marks
/// resolve (see the module documentation), or why there is none. `module.opt` must have been
/// set by the optimizer (outlining and local worklists decide too).
pub fn site(module: &Module, id: KernelId, phase: usize) -> Result<usize, String> {
    let kernel = &module.kernels[id.index()];
    let Some(Stmt::ForAll(forall)) = kernel.body.block.get(phase) else {
        return Err("no such phase".into());
    };
    let top =
        forall.body.iter().position(|s| matches!(s, Stmt::Lock { kind: LockKind::Exclusive, .. })).ok_or(
            "no `exclusive` is a statement of the item itself (one inside a loop or an `if` cannot be marked)",
        )?;
    if !outline::region_kernels(module)[id.index()] {
        return Err("no outlined region invokes it (marks need the region's grid barrier)".into());
    }
    if nested::site(forall).is_some() {
        return Err("a scheduler shares its nested loop (items move between threads)".into());
    }
    if module.opt.local && local::eligible(module, id).is_ok() {
        return Err("local worklists run its items in chains, not rounds".into());
    }
    let before = &forall.body[..top];
    if locks_in(module, before) {
        return Err(
            "it takes a lock before the `exclusive` (which could wait on a mark whose thread waits at a barrier)"
                .into(),
        );
    }
    Ok(top)
}

/// Visits `stmts` and every statement nested in them.
fn walk_stmts(stmts: &[Stmt], visit: &mut impl FnMut(&Stmt)) {
    for stmt in stmts {
        visit(stmt);
        for child in stmt.blocks() {
            walk_block(child, visit);
        }
    }
}

/// Whether an item's body has an `exclusive` anywhere.
fn has_exclusive(block: &Block) -> bool {
    let mut found = false;
    walk_block(block, &mut |stmt| found |= matches!(stmt, Stmt::Lock { kind: LockKind::Exclusive, .. }));
    found
}

/// Whether `block`, or a function it calls (directly or not), takes a lock (`atomic` or
/// `exclusive`; `single` claims, which never wait).
fn locks_in(module: &Module, stmts: &[Stmt]) -> bool {
    let mut seen = vec![false; module.functions.len()];
    let mut pending: Vec<&[Stmt]> = vec![stmts];
    while let Some(stmts) = pending.pop() {
        let mut found = false;
        walk_stmts(stmts, &mut |stmt| {
            found |= matches!(stmt, Stmt::Lock { kind: LockKind::Atomic | LockKind::Exclusive, .. });
            stmt_exprs(stmt, &mut |expr| {
                walk_expr(expr, &mut |e| {
                    if let ExprKind::Call(f, _) = e.kind
                        && !std::mem::replace(&mut seen[f.index()], true)
                    {
                        pending.push(&module.functions[f.index()].body.block);
                    }
                })
            });
        });
        if found {
            return true;
        }
    }
    false
}
