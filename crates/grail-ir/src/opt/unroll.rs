//! Pipe unrolling (IrGL §4.4): an outlined `pipe` loop's body is repeated in the control kernel,
//! `unroll` copies per trip of the loop, with the worklist's emptiness checked between copies, so
//! the device compiler sees a longer straight run of kernel phases to schedule and inline
//! across. Runs after outlining: only a loop that runs on the device is unrolled (a host loop
//! gains nothing from it), and a `pipe once` is no loop.

use crate::ir::*;
use crate::opt::OptConfig;

pub(crate) fn run(module: &mut Module, config: &OptConfig, notes: &mut Vec<String>) {
    if config.unroll <= 1 {
        return;
    }
    let mut unrolled = 0;
    let mut left = Vec::new();
    walk_pipes(&mut module.main.block, &mut |pipe| {
        if pipe.once {
            return;
        }
        if pipe.outlined {
            pipe.unroll = config.unroll;
            unrolled += 1;
        } else {
            left.push(pipe.id.0);
        }
    });
    for id in left {
        notes.push(format!("pipe unrolling: pipe#{id} runs on the host (not outlined), so it is not unrolled"));
    }
    if unrolled == 0 && !notes.iter().any(|n| n.starts_with("pipe unrolling")) {
        notes.push("pipe unrolling: the program has no `pipe` loop".into());
    }
}

/// Calls `f` on every `pipe` of a host block, outermost first.
fn walk_pipes(block: &mut Block, f: &mut impl FnMut(&mut Pipe)) {
    for stmt in block {
        match stmt {
            Stmt::Pipe(pipe) => {
                f(pipe);
                walk_pipes(&mut pipe.body, f);
            }
            Stmt::Iterate(iterate) => walk_pipes(&mut iterate.body, f),
            Stmt::If { then, otherwise, .. } => {
                walk_pipes(then, f);
                walk_pipes(otherwise, f);
            }
            Stmt::While { body, .. } | Stmt::For { body, .. } => walk_pipes(body, f),
            _ => {}
        }
    }
}
