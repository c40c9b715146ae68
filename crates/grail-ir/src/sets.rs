//! Union-find sets on a partitioned graph.
//!
//! On one device `G.s.find(u)` is the root of u's tree, and the root is the smallest id of its
//! class: `union` hooks the larger root under the smaller. On a partitioned graph each part
//! unions over its own node slots (its nodes and its ghosts), so a class that spans parts has a
//! tree on each, and no part holds all of its nodes. [`for_parts`] rewrites a module for such a
//! run so that `find` gives, on every part, what it gives on one device: the smallest global id
//! of the class.
//!
//! - Each set gets a hidden node property, its *class*: every slot's starts as its global id
//!   (in the defaults kernel, which a part runs over its ghosts too).
//! - A program may use `find`'s result only as a value ([`obstacles`] says where it does not):
//!   `find(u) as T` and `find(a) == find(b)` read the class of u's local root instead.
//! - Before each invocation of a kernel that reads a class, if a kernel has united since the
//!   last join, `main` joins the parts' trees: rounds of a hidden kernel over the slots that
//!   another part also holds ([`crate::Module::over_slots`]: the runtime runs it over that list
//!   alone), in which each slot and its root both take the lesser of their classes; after it,
//!   as after any kernel that writes through other nodes, the ghosts' changes are merged into
//!   their owners by min and the owners' new values copied to their ghosts. A round that lowers
//!   nothing ends the join: every shared slot then holds its root's class, every ghost its
//!   owner's, so every root of a class holds the class's least global id. (The other slots'
//!   classes are never read; a root holds its tree's least global id from the start, being its
//!   least local id.) A round moves a class across one part boundary, so trees chained through
//!   many parts, as a graph of high diameter cut at random makes, would take many rounds: the
//!   runtime finishes a join that goes on through the host instead, with a second hidden kernel
//!   that writes each shared slot's root ([`crate::SetJoin`]).
//!
//! Classes only fall, so a join after further unions starts from the last one's values. Within
//! a kernel that both unions and finds, `find` sees the last join and this part's unions since:
//! two nodes with one class are joined; two with different classes may still be (the next join
//! says).

use crate::analysis::walk_expr;
use crate::ir::*;

/// Why the module's sets cannot run on a partitioned graph, one sentence each (empty: they
/// can, after [`for_parts`]).
pub fn obstacles(module: &Module) -> Vec<String> {
    let mut obstacles = Vec::new();
    if module.sets.is_empty() {
        return obstacles;
    }
    let finders = finding_kernels(module);
    let mut bodies: Vec<(String, &Body)> =
        module.kernels.iter().map(|k| (format!("the kernel `{}`", k.name), &k.body)).collect();
    bodies.extend(module.functions.iter().map(|f| (format!("the function `{}`", f.name), &f.body)));
    for (who, body) in bodies {
        // Finds used as values, against all finds; unions whose result is dropped, against all.
        let (mut finds, mut as_values, mut unions, mut dropped) = (0, 0, 0, 0);
        walk_block(&body.block, &mut |stmt| {
            if let Stmt::Eval(Expr { kind: ExprKind::SetUnion { .. }, .. }) = stmt {
                dropped += 1;
            }
            crate::analysis::stmt_exprs(stmt, &mut |e| {
                walk_expr(e, &mut |e| match &e.kind {
                    ExprKind::SetFind { .. } => finds += 1,
                    ExprKind::SetUnion { .. } => unions += 1,
                    ExprKind::Cast(inner) if is_find(inner) && e.ty.scalar().is_some_and(Scalar::is_integer) => {
                        as_values += 1
                    }
                    ExprKind::Binary(BinaryOp::Eq | BinaryOp::Ne, a, b) if is_find(a) && is_find(b) => as_values += 2,
                    _ => {}
                })
            });
        });
        if finds > as_values {
            obstacles.push(format!(
                "{who} uses a `find` result as a node: on a part the class's representative may be a \
                 node the part does not hold (use it as a value: `find(u) as u32`, `find(a) == find(b)`)"
            ));
        }
        if unions > dropped {
            obstacles.push(format!(
                "{who} uses a `union` result: on a part it says whether two of the part's trees were \
                 joined, not whether two classes were"
            ));
        }
    }
    let mut in_main = false;
    walk_block(&module.main.block, &mut |stmt| {
        crate::analysis::stmt_exprs(stmt, &mut |e| {
            walk_expr(e, &mut |e| in_main |= matches!(e.kind, ExprKind::SetFind { .. } | ExprKind::SetUnion { .. }))
        });
        match stmt {
            Stmt::Iterate(iterate) => {
                if let Until::Empty { kernel, .. } = iterate.until
                    && finders[kernel.index()]
                {
                    obstacles.push(format!(
                        "the kernel `{}` finds in a set and runs as a worklist loop: the parts' classes \
                         are joined between invocations from `main`, not between a loop's rounds",
                        module.kernels[kernel.index()].name
                    ));
                }
            }
            Stmt::Pipe(pipe) => walk_block(&pipe.body, &mut |inner| {
                if let Stmt::Invoke { kernel, .. } = inner
                    && finders[kernel.index()]
                {
                    obstacles.push(format!(
                        "the kernel `{}` finds in a set inside a `pipe`: the parts' classes are joined \
                         between invocations, which would break the pipe's worklists",
                        module.kernels[kernel.index()].name
                    ));
                }
            }),
            _ => {}
        }
    });
    if in_main {
        obstacles.push("`main` uses a union-find set: on a partitioned graph only kernels do".to_string());
    }
    obstacles
}

fn is_find(expr: &Expr) -> bool {
    matches!(expr.kind, ExprKind::SetFind { .. })
}

/// By kernel, whether it (or a function it calls) finds in a set.
fn finding_kernels(module: &Module) -> Vec<bool> {
    kernels_using(module, |e| matches!(e.kind, ExprKind::SetFind { .. }))
}

/// By kernel, whether it (or a function it calls) unions in a set.
fn unioning_kernels(module: &Module) -> Vec<bool> {
    kernels_using(module, |e| matches!(e.kind, ExprKind::SetUnion { .. }))
}

/// By kernel, whether an expression of it (or of a function it calls) is `what`.
fn kernels_using(module: &Module, what: impl Fn(&Expr) -> bool) -> Vec<bool> {
    (0..module.kernels.len())
        .map(|k| {
            let kernel = KernelId(k as u32);
            let bodies = std::iter::once(&module.kernels[k].body).chain(
                crate::analysis::reached_functions(module, kernel)
                    .into_iter()
                    .map(|f| &module.functions[f.index()].body),
            );
            let mut uses = false;
            for body in bodies {
                walk_block(&body.block, &mut |stmt| {
                    crate::analysis::stmt_exprs(stmt, &mut |e| walk_expr(e, &mut |e| uses |= what(e)))
                });
            }
            uses
        })
        .collect()
}

/// `module` rewritten for a partitioned run (see the module's documentation); the module as it
/// is when it has no sets. Expects a module [`obstacles`] finds nothing in.
pub fn for_parts(module: &Module) -> Module {
    let mut module = module.clone();
    if module.sets.is_empty() {
        return module;
    }
    let (mut finders, mut unioners) = (finding_kernels(&module), unioning_kernels(&module));
    let classes: Vec<PropertyId> = (0..module.sets.len())
        .map(|s| {
            let name = format!("{}.class", module.sets[s].name);
            push_property(&mut module, name, Type::U32)
        })
        .collect();
    // `find` as a value reads the class of the local root.
    let read_class = |expr: &mut Expr| match &mut expr.kind {
        ExprKind::Cast(inner) if is_find(inner) => **inner = class_of(&classes, (**inner).clone()),
        ExprKind::Binary(BinaryOp::Eq | BinaryOp::Ne, a, b) if is_find(a) && is_find(b) => {
            **a = class_of(&classes, (**a).clone());
            **b = class_of(&classes, (**b).clone());
        }
        _ => {}
    };
    for kernel in &mut module.kernels {
        rewrite_block(&mut kernel.body.block, &mut { read_class });
    }
    for function in &mut module.functions {
        rewrite_block(&mut function.body.block, &mut { read_class });
    }
    start_classes(&mut module, &classes);
    // The join's kernels, per set, and the loop that runs them.
    let mut joins = Vec::new();
    for (s, &class) in classes.iter().enumerate() {
        let name = module.sets[s].name.clone();
        let set = SetId(s as u32);
        let round = push_round_kernel(&mut module, format!("{name}.join"), set, class);
        module.over_slots.push(round);
        joins.push(round);
        let root = push_property(&mut module, format!("{name}.root"), Type::U32);
        let roots = push_roots_kernel(&mut module, format!("{name}.roots"), set, root);
        module.set_joins.push(SetJoin { set, class, root, round, roots });
    }
    let lowered = push_flag(&mut module.main, "join_lowered");
    // Joined only where a union ran since the last join.
    let unioned = push_flag(&mut module.main, "unioned_since_join");
    let mut join: Block = joins.iter().map(|&round| join_loop(round, lowered)).collect();
    join.push(set_flag(unioned, false));
    let join = Stmt::If { cond: flag(unioned), then: join, otherwise: Vec::new(), uniform: true };
    // The kernels made here neither find nor union in the program's sets.
    finders.resize(module.kernels.len(), false);
    unioners.resize(module.kernels.len(), false);
    let marks = Marks { finders, unioners, join, unioned };
    module.main.block.insert(0, set_flag(unioned, false));
    marks.insert(&mut module.main.block);
    module
}

/// A hidden node property of the module.
fn push_property(module: &mut Module, name: String, ty: Type) -> PropertyId {
    module.properties.push(Property { name, owner: Owner::Node, ty, is_weight: false });
    PropertyId(module.properties.len() as u32 - 1)
}

fn flag(local: LocalId) -> Expr {
    Expr::new(ExprKind::Load(Place::Local(local)), Type::BOOL)
}

fn set_flag(local: LocalId, value: bool) -> Stmt {
    Stmt::Assign { place: Place::Local(local), value: Expr::new(ExprKind::Const(Const::Bool(value)), Type::BOOL) }
}

/// `find` (an `ExprKind::SetFind`) as a read of its root's class.
fn class_of(classes: &[PropertyId], find: Expr) -> Expr {
    let ExprKind::SetFind { set, .. } = find.kind else { unreachable!("called on a find") };
    Expr::new(ExprKind::Load(Place::Property { property: classes[set.index()], element: Box::new(find) }), Type::U32)
}

/// Every slot's class starts at its global id (`u as u32` on a part), in the defaults kernel
/// (made if the module has none, and invoked first).
fn start_classes(module: &mut Module, classes: &[PropertyId]) {
    let kernel = match module.defaults {
        Some(kernel) => kernel,
        None => {
            module.kernels.push(Kernel {
                name: "init".into(),
                params: 0,
                reduction: None,
                body: Body::default(),
                push_sites: Vec::new(),
            });
            let kernel = KernelId(module.kernels.len() as u32 - 1);
            module.defaults = Some(kernel);
            module.main.block.insert(0, Stmt::Invoke { kernel, args: Vec::new(), result: None });
            kernel
        }
    };
    let body = &mut module.kernels[kernel.index()].body;
    let var = LocalId(body.locals.len() as u32);
    body.locals.push(Local { name: "slot".into(), ty: Type::Node });
    let slot = || Expr::new(ExprKind::Load(Place::Local(var)), Type::Node);
    let assigns = classes
        .iter()
        .map(|&property| Stmt::Assign {
            place: Place::Property { property, element: Box::new(slot()) },
            value: Expr::new(ExprKind::Cast(Box::new(slot())), Type::U32),
        })
        .collect();
    body.block.push(Stmt::ForAll(Box::new(ForAll {
        var,
        space: Space::AllNodes,
        filter: None,
        body: assigns,
        schedule: Schedule::SERIAL,
    })));
}

/// A join round's kernel, which the runtime runs over the slots another part also holds
/// (ghosts, and owned nodes that are ghosts elsewhere), reducing whether it lowered a class: x
/// and x's root both take the lesser of their classes (`atomic_min`, as other slots of the tree
/// lower the root's at once). The other slots' classes are never read: `find` reads the root's,
/// and a root holds its tree's least class already, as long as classes start at the global
/// ids: a root is its tree's least local id, and local ids keep the global ids' order among
/// owned nodes and among ghosts (a root is owned unless its tree is all ghosts).
fn push_round_kernel(module: &mut Module, name: String, set: SetId, class: PropertyId) -> KernelId {
    let mut body = Body::default();
    let local = |body: &mut Body, name: &str, ty: Type| {
        body.locals.push(Local { name: name.into(), ty });
        LocalId(body.locals.len() as u32 - 1)
    };
    let (x, root, value) = (local(&mut body, "x", Type::Node), local(&mut body, "root", Type::Node), {
        local(&mut body, "value", Type::U32)
    });
    let load = |l: LocalId, ty: Type| Expr::new(ExprKind::Load(Place::Local(l)), ty);
    let class_at = |l: LocalId| Place::Property { property: class, element: Box::new(load(l, Type::Node)) };
    let less = |a: Expr, b: Expr| Expr::new(ExprKind::Binary(BinaryOp::Lt, Box::new(a), Box::new(b)), Type::BOOL);
    // `if value < l.class { atomic_min(l.class, value); reduce true; }`
    let lower = |l: LocalId| Stmt::If {
        cond: less(load(value, Type::U32), Expr::new(ExprKind::Load(class_at(l)), Type::U32)),
        then: vec![
            Stmt::Eval(Expr::new(
                ExprKind::Atomic { op: AtomicOp::Min, place: class_at(l), operands: vec![load(value, Type::U32)] },
                Type::BOOL,
            )),
            Stmt::Reduce { value: Expr::new(ExprKind::Const(Const::Bool(true)), Type::BOOL) },
        ],
        otherwise: Vec::new(),
        uniform: false,
    };
    body.block.push(Stmt::ForAll(Box::new(ForAll {
        var: x,
        space: Space::AllNodes,
        filter: None,
        body: vec![
            Stmt::Assign {
                place: Place::Local(root),
                value: Expr::new(ExprKind::SetFind { set, node: Box::new(load(x, Type::Node)) }, Type::Node),
            },
            Stmt::Assign {
                place: Place::Local(value),
                value: Expr::new(
                    ExprKind::Builtin(
                        Builtin::Min,
                        vec![
                            Expr::new(ExprKind::Load(class_at(x)), Type::U32),
                            Expr::new(ExprKind::Load(class_at(root)), Type::U32),
                        ],
                    ),
                    Type::U32,
                ),
            },
            lower(root),
            lower(x),
        ],
        schedule: Schedule::SERIAL,
    })));
    module.kernels.push(Kernel {
        name,
        params: 0,
        reduction: Some((ReduceOp::Any, Type::BOOL)),
        body,
        push_sites: Vec::new(),
    });
    KernelId(module.kernels.len() as u32 - 1)
}

/// The kernel that writes each shared slot's root, as a global id, into `root`: what the
/// runtime reads to join through the host. (Not over slots as far as `main` knows: the runtime
/// invokes it over each part's shared slots itself, with nothing exchanged.)
fn push_roots_kernel(module: &mut Module, name: String, set: SetId, root: PropertyId) -> KernelId {
    let mut body = Body::default();
    body.locals.push(Local { name: "x".into(), ty: Type::Node });
    let x = LocalId(0);
    let slot = || Box::new(Expr::new(ExprKind::Load(Place::Local(x)), Type::Node));
    let find = Expr::new(ExprKind::SetFind { set, node: slot() }, Type::Node);
    body.block.push(Stmt::ForAll(Box::new(ForAll {
        var: x,
        space: Space::AllNodes,
        filter: None,
        body: vec![Stmt::Assign {
            place: Place::Property { property: root, element: slot() },
            value: Expr::new(ExprKind::Cast(Box::new(find)), Type::U32),
        }],
        schedule: Schedule::SERIAL,
    })));
    module.kernels.push(Kernel { name, params: 0, reduction: None, body, push_sites: Vec::new() });
    KernelId(module.kernels.len() as u32 - 1)
}

/// A bool local of `body`.
fn push_flag(body: &mut Body, name: &str) -> LocalId {
    body.locals.push(Local { name: name.into(), ty: Type::BOOL });
    LocalId(body.locals.len() as u32 - 1)
}

/// `loop { lowered = false; lowered = invoke round(); if !lowered { break } }`.
fn join_loop(round: KernelId, lowered: LocalId) -> Stmt {
    let none = Expr::new(ExprKind::Unary(UnaryOp::Not, Box::new(flag(lowered))), Type::BOOL);
    Stmt::While {
        cond: Expr::new(ExprKind::Const(Const::Bool(true)), Type::BOOL),
        body: vec![
            set_flag(lowered, false),
            Stmt::Invoke { kernel: round, args: Vec::new(), result: Some(lowered) },
            Stmt::If { cond: none, then: vec![Stmt::Break], otherwise: Vec::new(), uniform: true },
        ],
        uniform: true,
    }
}

/// What `main` gets around its invocations: `join` before every invocation of a kernel that
/// finds, and `unioned` set after every statement that may run a kernel that unions.
struct Marks {
    finders: Vec<bool>,
    unioners: Vec<bool>,
    join: Stmt,
    unioned: LocalId,
}

impl Marks {
    /// Marks `block` and the host blocks inside it.
    fn insert(&self, block: &mut Block) {
        let mut i = 0;
        while i < block.len() {
            if let Stmt::Invoke { kernel, .. } = &block[i]
                && self.finders[kernel.index()]
            {
                block.insert(i, self.join.clone());
                i += 1;
            }
            let unions = self.unions(&block[i]);
            match &mut block[i] {
                Stmt::If { then, otherwise, .. } => {
                    self.insert(then);
                    self.insert(otherwise);
                }
                Stmt::While { body, .. } | Stmt::For { body, .. } => self.insert(body),
                Stmt::Iterate(iterate) => self.insert(&mut iterate.body),
                _ => {}
            }
            if unions {
                block.insert(i + 1, set_flag(self.unioned, true));
                i += 1;
            }
            i += 1;
        }
    }

    /// Whether `stmt` may run a kernel that unions (a loop's own kernel, or any it invokes).
    fn unions(&self, stmt: &Stmt) -> bool {
        let mut unions = false;
        let mut visit = |s: &Stmt| match s {
            Stmt::Invoke { kernel, .. } => unions |= self.unioners[kernel.index()],
            Stmt::Iterate(iterate) => {
                if let Until::Empty { kernel, .. } = iterate.until {
                    unions |= self.unioners[kernel.index()];
                }
            }
            _ => {}
        };
        visit(stmt);
        for block in stmt.blocks() {
            walk_block(block, &mut visit);
        }
        unions
    }
}

/// Applies `f` to every expression of `block` (nested blocks included), each after its
/// subexpressions.
fn rewrite_block(block: &mut Block, f: &mut impl FnMut(&mut Expr)) {
    for stmt in block {
        rewrite_stmt(stmt, f);
    }
}

fn rewrite_stmt(stmt: &mut Stmt, f: &mut impl FnMut(&mut Expr)) {
    match stmt {
        Stmt::Assign { place, value } => {
            rewrite_place(place, f);
            rewrite_expr(value, f);
        }
        Stmt::If { cond, then, otherwise, .. } => {
            rewrite_expr(cond, f);
            rewrite_block(then, f);
            rewrite_block(otherwise, f);
        }
        Stmt::While { cond, body, .. } => {
            rewrite_expr(cond, f);
            rewrite_block(body, f);
        }
        Stmt::For { start, end, body, .. } => {
            rewrite_expr(start, f);
            rewrite_expr(end, f);
            rewrite_block(body, f);
        }
        Stmt::ForEach { node, body, .. } => {
            rewrite_expr(node, f);
            rewrite_block(body, f);
        }
        Stmt::ForAll(forall) => {
            match &mut forall.space {
                Space::Range(start, end) => {
                    rewrite_expr(start, f);
                    rewrite_expr(end, f);
                }
                Space::Adjacent(_, node) => rewrite_expr(node, f),
                Space::Worklist | Space::AllNodes | Space::AllEdges | Space::Collection(_) => {}
            }
            if let Some(filter) = &mut forall.filter {
                rewrite_expr(filter, f);
            }
            rewrite_block(&mut forall.body, f);
        }
        Stmt::Push { value, .. } | Stmt::Retry { value } | Stmt::Reduce { value } | Stmt::Eval(value) => {
            rewrite_expr(value, f)
        }
        Stmt::Return(value) => value.iter_mut().for_each(|e| rewrite_expr(e, f)),
        Stmt::Lock { elements, body, otherwise, .. } => {
            elements.iter_mut().for_each(|e| rewrite_expr(e, f));
            rewrite_block(body, f);
            rewrite_block(otherwise, f);
        }
        Stmt::Invoke { args, .. } => args.iter_mut().for_each(|e| rewrite_expr(e, f)),
        Stmt::Iterate(iterate) => {
            match &mut iterate.until {
                Until::Empty { args, initial, .. } => {
                    args.iter_mut().for_each(|e| rewrite_expr(e, f));
                    if let Some(Initial::Items(items)) = initial {
                        items.iter_mut().for_each(|e| rewrite_expr(e, f));
                    }
                }
                Until::Condition { cond, .. } => rewrite_expr(cond, f),
            }
            rewrite_block(&mut iterate.body, f);
        }
        Stmt::Pipe(pipe) => {
            if let Some(Initial::Items(items)) = &mut pipe.initial {
                items.iter_mut().for_each(|e| rewrite_expr(e, f));
            }
            rewrite_block(&mut pipe.body, f);
        }
        Stmt::Print(args) => {
            for arg in args {
                if let PrintArg::Value(expr) = arg {
                    rewrite_expr(expr, f);
                }
            }
        }
        Stmt::Break | Stmt::Continue => {}
    }
}

fn rewrite_place(place: &mut Place, f: &mut impl FnMut(&mut Expr)) {
    match place {
        Place::Local(_) => {}
        Place::Property { element, .. } | Place::ElementField { element, .. } => rewrite_expr(element, f),
        Place::Field { base, .. } => rewrite_place(base, f),
        Place::Index { base, index } => {
            rewrite_place(base, f);
            rewrite_expr(index, f);
        }
    }
}

fn rewrite_expr(expr: &mut Expr, f: &mut impl FnMut(&mut Expr)) {
    match &mut expr.kind {
        ExprKind::Const(_)
        | ExprKind::Param(_)
        | ExprKind::NumNodes
        | ExprKind::NumEdges
        | ExprKind::NodeIds
        | ExprKind::EdgeIds
        | ExprKind::CollectionLen(_)
        | ExprKind::CollectionCompact(_)
        | ExprKind::AddNode
        | ExprKind::Zeroed => {}
        ExprKind::Load(place) => rewrite_place(place, f),
        ExprKind::EdgeSource(e)
        | ExprKind::EdgeTarget(e)
        | ExprKind::Degree { node: e, .. }
        | ExprKind::Unary(_, e)
        | ExprKind::Cast(e)
        | ExprKind::Field(e, _)
        | ExprKind::SetFind { node: e, .. }
        | ExprKind::CollectionAdd { value: e, .. }
        | ExprKind::CollectionRemove { element: e, .. }
        | ExprKind::CollectionHas { element: e, .. }
        | ExprKind::RemoveEdge(e)
        | ExprKind::RemoveNode(e)
        | ExprKind::HasNode(e)
        | ExprKind::HasEdge(e) => rewrite_expr(e, f),
        ExprKind::AddEdge { src, dst, weight } => {
            rewrite_expr(src, f);
            rewrite_expr(dst, f);
            if let Some(weight) = weight {
                rewrite_expr(weight, f);
            }
        }
        ExprKind::Neighbor { node: a, index: b, .. }
        | ExprKind::Binary(_, a, b)
        | ExprKind::SetUnion { a, b, .. }
        | ExprKind::ArrayPrefix { array: a, count: b } => {
            rewrite_expr(a, f);
            rewrite_expr(b, f);
        }
        ExprKind::Call(_, args) | ExprKind::Builtin(_, args) | ExprKind::Struct(_, args) => {
            args.iter_mut().for_each(|e| rewrite_expr(e, f))
        }
        ExprKind::Atomic { place, operands, .. } => {
            rewrite_place(place, f);
            operands.iter_mut().for_each(|e| rewrite_expr(e, f));
        }
    }
    f(expr);
}
