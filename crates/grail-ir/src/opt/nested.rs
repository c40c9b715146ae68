//! Nested parallelism (IrGL §4.3): which nested loop of a kernel phase the schedulers run.
//!
//! A nested `forall` over a node's adjacency runs, unoptimized, as a serial loop in its item's
//! thread, so one hub's million edges keep one thread busy while its warp waits. The schedulers
//! (thread block, warp, fine-grained; [`Schedulers`]) share the iterations of the inner loops of
//! a whole block among its threads: each thread runs its item up to the nested loop and records
//! the loop's range (the *inspector*), then the block runs the recorded loops together (the
//! *executors*), then each thread finishes its item. Besides `forall`, the schedulers take a
//! sequential `for` over adjacency whose body only *folds* a value into one local
//! (`incoming += u.contrib`, [`fold`]): its iterations are independent but for the fold, so the
//! executors compute partial results and the item's thread combines them (a floating-point sum
//! is then added in another order, as any parallel sum is). That is only the original program
//! when:
//!
//! - the loop is the last thing its item does on its path, except for statements that follow it
//!   at the top of the item's body (which run after the executors): it stands at the top of the
//!   item's body, or last in a branch of an `if` that does;
//! - the loop's body writes no local that the rest of the item uses (a fold's accumulator
//!   aside), so iterations share nothing but the values they read, their *closure*, which the
//!   executors hand to whichever thread runs an iteration; those values are scalars.
//!
//! One nested loop per phase is scheduled (the first that qualifies); the pass marks it with the
//! configured [`Schedule`] and notes why any other stays serial. [`site`] and [`closure`] answer
//! the same questions for the emitters.

use crate::analysis::{expr_local_reads, local_uses, stmt_local_uses, walk_expr};
use crate::ir::*;
use crate::opt::{OptConfig, Schedulers};

pub(crate) fn run(module: &mut Module, config: &OptConfig, notes: &mut Vec<String>) {
    if config.np.is_serial() {
        return;
    }
    if module.growth.is_some() {
        // The schedulers share out ranges of CSR positions; added edges are lists.
        notes.push("nested loops stay serial: the program's kernels add or remove edges".to_string());
        return;
    }
    let schedule = schedule_of(config.np);
    for kernel in &mut module.kernels {
        let body = kernel.body.clone();
        for (p, stmt) in kernel.body.block.iter_mut().enumerate() {
            let Stmt::ForAll(phase) = stmt else { continue };
            let found = count_nested(&phase.body, &body.locals);
            if found == 0 {
                continue;
            }
            let where_ = format!("kernel `{}`, phase {p}", kernel.name);
            match eligible(&body, phase) {
                Ok(top) => {
                    let mut chosen = schedule;
                    if let Some(Stmt::ForEach { body: fold_body, .. }) = tail_site(&phase.body[top]) {
                        let fold = fold_of(fold_body, &body.locals).expect("eligible checked it");
                        if chosen.fine_grained && !fold.fine_grained_ok(&body.locals) {
                            chosen.fine_grained = false;
                            notes.push(format!(
                                "{where_}: the fine-grained scheduler cannot fold a `{}` of this type in shared \
                                 memory; the others share the loop",
                                fold.op.name()
                            ));
                        }
                    }
                    if let Some(site) = tail_site_mut(&mut phase.body[top]) {
                        set_schedule(site, chosen);
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

fn set_schedule(site: &mut Stmt, schedule: Schedule) {
    match site {
        Stmt::ForAll(forall) => forall.schedule = schedule,
        Stmt::ForEach { schedule: s, .. } => *s = schedule,
        _ => {}
    }
}

/// A fold: a sequential loop's body that is exactly `acc = acc op value` (or `value op acc`;
/// `op` a sum, or `min`/`max`), where `value` reads neither `acc` nor anything a thread could
/// see change (no atomics, calls, sets or collection adds).
#[derive(Debug, Clone, PartialEq)]
pub struct Fold {
    pub acc: LocalId,
    pub op: ReduceOp,
    pub value: Expr,
}

impl Fold {
    /// Whether the fine-grained scheduler can fold this in shared memory: sums of numbers, and
    /// the minimum or maximum of integers (the shared-memory atomics that exist).
    pub fn fine_grained_ok(&self, locals: &[Local]) -> bool {
        let ty = locals[self.acc.index()].ty;
        match self.op {
            ReduceOp::Sum => ty.is_numeric(),
            ReduceOp::Min | ReduceOp::Max => ty.scalar().is_some_and(Scalar::is_integer),
            _ => false,
        }
    }
}

/// The fold a sequential loop's body is, if it is one.
fn fold_of(body: &Block, locals: &[Local]) -> Option<Fold> {
    let [Stmt::Assign { place: Place::Local(acc), value }] = body.as_slice() else { return None };
    let acc = *acc;
    let ty = locals[acc.index()].ty;
    if !ty.is_numeric() || matches!(ty, Type::Node | Type::Edge) {
        return None;
    }
    let is_acc = |e: &Expr| matches!(&e.kind, ExprKind::Load(Place::Local(id)) if *id == acc);
    let (op, value) = match &value.kind {
        ExprKind::Binary(BinaryOp::Add, a, b) if is_acc(a) => (ReduceOp::Sum, &**b),
        ExprKind::Binary(BinaryOp::Add, a, b) if is_acc(b) => (ReduceOp::Sum, &**a),
        ExprKind::Builtin(builtin @ (Builtin::Min | Builtin::Max), args) if args.len() == 2 => {
            let op = if *builtin == Builtin::Min { ReduceOp::Min } else { ReduceOp::Max };
            if is_acc(&args[0]) {
                (op, &args[1])
            } else if is_acc(&args[1]) {
                (op, &args[0])
            } else {
                return None;
            }
        }
        _ => return None,
    };
    if value.ty != ty {
        return None;
    }
    let mut pure = true;
    let mut reads = vec![false; locals.len()];
    expr_local_reads(value, &mut reads);
    walk_expr(value, &mut |e| {
        pure &= !matches!(
            e.kind,
            ExprKind::Atomic { .. }
                | ExprKind::Call(..)
                | ExprKind::SetFind { .. }
                | ExprKind::SetUnion { .. }
                | ExprKind::CollectionAdd { .. }
                | ExprKind::CollectionRemove { .. }
        )
    });
    (pure && !reads[acc.index()]).then(|| Fold { acc, op, value: value.clone() })
}

/// The fold of a scheduled sequential loop (`None` for anything else).
pub fn fold(stmt: &Stmt, locals: &[Local]) -> Option<Fold> {
    match stmt {
        Stmt::ForEach { body, .. } => fold_of(body, locals),
        _ => None,
    }
}

/// The nested loops the schedulers could take in a block: `forall`s and folds.
fn count_nested(block: &Block, locals: &[Local]) -> usize {
    let mut count = 0;
    walk_block(block, &mut |stmt| {
        count += usize::from(
            matches!(stmt, Stmt::ForAll(_))
                || matches!(stmt, Stmt::ForEach { body, .. } if fold_of(body, locals).is_some()),
        )
    });
    count
}

/// Whether a statement is a nested loop the schedulers could take (a `forall` over adjacency,
/// or a sequential loop over adjacency; whether the latter is a fold is checked apart).
fn is_site(stmt: &Stmt) -> bool {
    matches!(stmt, Stmt::ForAll(forall) if matches!(forall.space, Space::Adjacent(..)))
        || matches!(stmt, Stmt::ForEach { .. })
}

/// The nested loop a statement ends with: the statement itself, or the tail loop of the last
/// statement of either branch of an `if` (the `then` branch first).
pub fn tail_site(stmt: &Stmt) -> Option<&Stmt> {
    match stmt {
        _ if is_site(stmt) => Some(stmt),
        Stmt::If { then, otherwise, .. } => {
            then.last().and_then(tail_site).or_else(|| otherwise.last().and_then(tail_site))
        }
        _ => None,
    }
}

fn tail_site_mut(stmt: &mut Stmt) -> Option<&mut Stmt> {
    if is_site(stmt) {
        return Some(stmt);
    }
    match stmt {
        Stmt::If { then, otherwise, .. } => {
            if then.last().and_then(tail_site).is_some() {
                then.last_mut().and_then(tail_site_mut)
            } else {
                otherwise.last_mut().and_then(tail_site_mut)
            }
        }
        _ => None,
    }
}

/// The index of the top-level statement of `phase`'s body that ends with a nested loop the
/// schedulers can run, or why none can.
fn eligible(body: &Body, phase: &ForAll) -> Result<usize, String> {
    let mut why_not = None;
    for (top, stmt) in phase.body.iter().enumerate() {
        let Some(site) = tail_site(stmt) else { continue };
        match check_site(body, phase, site) {
            Ok(()) => return Ok(top),
            Err(why) => {
                why_not.get_or_insert(why);
            }
        }
    }
    Err(why_not.unwrap_or_else(|| {
        "it is not the last thing its item does (it is inside a loop, a lock, or followed by other statements \
         inside a branch)"
            .into()
    }))
}

/// Whether the schedulers can run `site` (a tail loop of `phase`).
fn check_site(body: &Body, phase: &ForAll, site: &Stmt) -> Result<(), String> {
    let n = body.locals.len();
    let (var, inner_body) = match site {
        Stmt::ForAll(forall) => (forall.var, &forall.body),
        Stmt::ForEach { var, body: inner, .. } => (*var, inner),
        _ => return Err("not a loop".into()),
    };
    let fold = match site {
        Stmt::ForEach { body: inner, .. } => {
            Some(fold_of(inner, &body.locals).ok_or("a sequential loop that does more than fold into one local")?)
        }
        _ => None,
    };
    let (mut inner_reads, mut inner_writes) = (vec![false; n], vec![false; n]);
    local_uses(inner_body, &mut inner_reads, &mut inner_writes);
    inner_writes[var.index()] = true;
    if let Some(fold) = &fold {
        // The accumulator is combined back into the item's copy; the rest of the item may use it.
        inner_writes[fold.acc.index()] = false;
    }
    let outside = outside_uses(phase, site, n);
    if let Some(shared) = (0..n).find(|&i| inner_writes[i] && outside[i]) {
        return Err(format!("its body writes `{}`, which the rest of the item uses", body.locals[shared].name));
    }
    for local in closure_locals(body, site, 0) {
        if matches!(body.locals[local.index()].ty, Type::Struct(_)) {
            return Err(format!("its body reads `{}`, a struct, from its item", body.locals[local.index()].name));
        }
    }
    Ok(())
}

/// The locals read or written by `phase` outside the nested loop `site` (its filter and the
/// node whose adjacency it walks count as outside).
fn outside_uses(phase: &ForAll, site: &Stmt, n: usize) -> Vec<bool> {
    let (mut reads, mut writes) = (vec![false; n], vec![false; n]);
    writes[phase.var.index()] = true;
    if let Some(filter) = &phase.filter {
        expr_local_reads(filter, &mut reads);
    }
    fn walk(block: &Block, site: &Stmt, reads: &mut [bool], writes: &mut [bool]) {
        for stmt in block {
            if std::ptr::eq(stmt, site) {
                match stmt {
                    Stmt::ForAll(forall) => {
                        if let Space::Adjacent(_, node) = &forall.space {
                            expr_local_reads(node, reads);
                        }
                    }
                    Stmt::ForEach { node, .. } => expr_local_reads(node, reads),
                    _ => {}
                }
                continue;
            }
            stmt_local_uses(stmt, reads, writes);
            for child in stmt.blocks() {
                walk(child, site, reads, writes);
            }
        }
    }
    walk(&phase.body, site, &mut reads, &mut writes);
    reads.iter().zip(&writes).map(|(r, w)| *r || *w).collect()
}

/// The closure of a nested loop: the locals its filter and body read and do not write (the
/// item variable and what the item set before the loop), other than the kernel's first
/// `params` locals (its parameters, the same in every thread). A fold's closure is what its
/// value reads.
fn closure_locals(body: &Body, site: &Stmt, params: u32) -> Vec<LocalId> {
    let n = body.locals.len();
    let (mut reads, mut writes) = (vec![false; n], vec![false; n]);
    match site {
        Stmt::ForAll(forall) => {
            local_uses(&forall.body, &mut reads, &mut writes);
            if let Some(filter) = &forall.filter {
                expr_local_reads(filter, &mut reads);
            }
            writes[forall.var.index()] = true;
        }
        Stmt::ForEach { var, body: inner, .. } => {
            if let Some(fold) = fold_of(inner, &body.locals) {
                expr_local_reads(&fold.value, &mut reads);
            }
            writes[var.index()] = true;
        }
        _ => {}
    }
    (params as usize..n).filter(|&i| reads[i] && !writes[i]).map(|i| LocalId(i as u32)).collect()
}

/// Where a phase's scheduled nested loop is: the index of the top-level statement of the item's
/// body that ends with it, and the loop (a `forall`, or a fold's `for`); `None` when the phase
/// has none.
pub fn site(phase: &ForAll) -> Option<(usize, &Stmt)> {
    phase.body.iter().enumerate().find_map(|(top, stmt)| {
        let site = tail_site(stmt)?;
        let schedule = match site {
            Stmt::ForAll(forall) => forall.schedule,
            Stmt::ForEach { schedule, .. } => *schedule,
            _ => Schedule::SERIAL,
        };
        (schedule != Schedule::SERIAL).then_some((top, site))
    })
}

/// Whether the GPU may hand phase `phase`'s scheduled loop, for an item with a huge range, to
/// the whole grid (the hub executor of `grail-codegen`'s CUDA schedulers): the thread-block
/// scheduler runs the loop, it is a `forall` (a fold's partial results would have to reach
/// their item's thread), and nothing of the item follows it, so the item's thread can go on
/// before the loop's iterations have run (they run after the phase, before its barrier).
pub fn grid_shared(phase: &ForAll) -> bool {
    match site(phase) {
        Some((top, Stmt::ForAll(inner))) => inner.schedule.thread_block && top + 1 == phase.body.len(),
        _ => false,
    }
}

/// The closure of the scheduled nested loop `site` of a phase of `kernel`: the locals its body
/// reads and does not write, other than the kernel's parameters.
pub fn closure(kernel: &Kernel, site: &Stmt) -> Vec<LocalId> {
    closure_locals(&kernel.body, site, kernel.params)
}
