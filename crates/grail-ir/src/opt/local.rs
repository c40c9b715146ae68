//! Local worklists (the morph paper's §7.5): a thread keeps a few of the items it pushes and
//! runs them itself, right after the item that pushed them, instead of leaving them to the next
//! invocation. What a thread makes (a cavity's new bad triangles, a relaxed node's heads) is
//! near what it just touched, and the items it keeps skip the trip through the global worklist
//! and the round boundary.
//!
//! Running a pushed item early is the same as finding it in this invocation's input, which is
//! right only when nothing tells the invocations apart: the kernel must be the whole loop of
//! every `iterate` that runs it (`iterate k(...)` with an empty body, so no host code sees the
//! rounds), run nowhere else, over its worklist in one phase, and claim nothing with `single`
//! (claims last one invocation: an item run early could find itself already claimed). A
//! reduction's value would also differ, so reduction kernels are left alone. The schedulers'
//! item loops are left alone too (their items move between threads).
//!
//! The pass marks nothing in the IR: the emitters ask [`eligible`] when [`OptConfig::local`] is
//! on, and this pass notes why a kernel pushing to its own worklist is not eligible.

use crate::ir::*;
use crate::opt::OptConfig;

/// Items a thread keeps (the rest of its pushes go to the worklist).
pub const CAPACITY: u32 = 16;

/// Items a thread runs from its local worklist after one item of the input, before it pushes
/// what is left to the worklist: a chain of pushes cannot hold one thread for long.
pub const BUDGET: u32 = 256;

pub(crate) fn run(module: &mut Module, config: &OptConfig, notes: &mut Vec<String>) {
    if !config.local {
        return;
    }
    for (k, kernel) in module.kernels.iter().enumerate() {
        if !pushes(kernel) {
            continue;
        }
        if let Err(why) = eligible(module, KernelId(k as u32)) {
            notes.push(format!("kernel `{}`: no local worklist: {why}", kernel.name));
        }
    }
}

/// Whether kernel `id`'s pushes may run in the thread that makes them (see the module
/// documentation), or why not.
pub fn eligible(module: &Module, id: KernelId) -> Result<(), String> {
    let kernel = &module.kernels[id.index()];
    if !pushes(kernel) {
        return Err("it pushes nothing".into());
    }
    if kernel.reduction.is_some() {
        return Err("it returns a reduction, which items run early would change".into());
    }
    let [Stmt::ForAll(phase)] = kernel.body.block.as_slice() else {
        return Err("it has several phases".into());
    };
    if phase.space != Space::Worklist {
        return Err("its loop is not over its worklist".into());
    }
    if crate::opt::nested::site(phase).is_some() {
        return Err("a scheduler shares its nested loop (items move between threads)".into());
    }
    let mut single = false;
    walk_block(&kernel.body.block, &mut |stmt| {
        single |= matches!(stmt, Stmt::Lock { kind: LockKind::Single, .. });
    });
    if single {
        return Err("it claims with `single`, whose claims last one invocation".into());
    }
    // Every place that runs it: only as the whole of an `iterate` until its worklist is empty.
    let mut runs = 0;
    let mut other = None;
    walk_block(&module.main.block, &mut |stmt| match stmt {
        Stmt::Iterate(iterate) => {
            if let Until::Empty { kernel: k, .. } = &iterate.until
                && *k == id
            {
                if iterate.body.is_empty() {
                    runs += 1;
                } else {
                    other = Some("its `iterate` has host code between invocations");
                }
            }
        }
        Stmt::Invoke { kernel: k, .. } if *k == id => other = Some("it is invoked on its own, outside an `iterate`"),
        Stmt::Pipe(_) if pipe_invokes(stmt, id) => {
            other = Some("it runs in a `pipe`, where other kernels share its worklist")
        }
        _ => {}
    });
    if let Some(why) = other {
        return Err(why.into());
    }
    if runs == 0 {
        return Err("no `iterate` runs it".into());
    }
    Ok(())
}

fn pushes(kernel: &Kernel) -> bool {
    let mut found = false;
    walk_block(&kernel.body.block, &mut |stmt| found |= matches!(stmt, Stmt::Push { .. }));
    found
}

/// Whether a `pipe` statement invokes kernel `id` anywhere inside it.
fn pipe_invokes(pipe: &Stmt, id: KernelId) -> bool {
    let Stmt::Pipe(pipe) = pipe else { return false };
    let mut found = false;
    walk_block(&pipe.body, &mut |stmt| match stmt {
        Stmt::Invoke { kernel, .. } => found |= *kernel == id,
        Stmt::Iterate(iterate) => found |= matches!(&iterate.until, Until::Empty { kernel, .. } if *kernel == id),
        _ => {}
    });
    found
}
