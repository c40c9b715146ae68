//! Whole-module questions the runtimes ask before they run a program: which graph arrays it
//! reads (the reverse CSR, edge sources, in-edge ids) and which synchronisation state it needs
//! (locks, claims), and whether it can run on a partitioned graph. Each answer covers every body:
//! functions, kernels and `main`.

use crate::ir::*;

/// Whether the program looks at in-edges: `in_edges`, `in_neighbors`, `in_degree`, or an
/// in-neighbour by index. The runtime then builds (or borrows) the reverse CSR.
pub fn needs_reverse(module: &Module) -> bool {
    any_adjacency(module, Adjacency::uses_reverse)
        || any_expr(module, |e| {
            matches!(e.kind, ExprKind::Degree { reverse: true, .. } | ExprKind::Neighbor { reverse: true, .. })
        })
}

/// Whether the program reads `e.src` of an edge handle: the runtime then provides the source of
/// every out-edge by edge id.
pub fn needs_edge_sources(module: &Module) -> bool {
    // Removing an input edge lowers its source's degree.
    module.growth.as_ref().is_some_and(|g| g.removed.is_some())
        || any_expr(module, |e| matches!(e.kind, ExprKind::EdgeSource(_)))
}

/// Whether the program iterates `in_edges()` as edges: the runtime then provides, for every
/// position of the reverse CSR, the id of the same edge among the out-edges.
pub fn needs_in_edge_ids(module: &Module) -> bool {
    any_adjacency(module, |a| a == Adjacency::InEdges)
}

/// Whether any kernel takes per-node locks (`atomic` or `exclusive`).
pub fn uses_locks(module: &Module) -> bool {
    any_stmt(
        module,
        |s| matches!(s, Stmt::Lock { kind: LockKind::Atomic | LockKind::Exclusive, elements, .. } if locks_nodes(module, elements)),
    )
}

/// Whether any kernel claims nodes (`single`).
pub fn uses_claims(module: &Module) -> bool {
    any_stmt(
        module,
        |s| matches!(s, Stmt::Lock { kind: LockKind::Single, elements, .. } if locks_nodes(module, elements)),
    )
}

/// Whether a lock statement's elements are nodes (collection elements keep their lock and claim
/// words in the collection's segments).
fn locks_nodes(module: &Module, elements: &[Expr]) -> bool {
    locked_item(module, elements) == Some(Type::Node)
}

/// Whether `kernel` takes locks (`atomic`, `exclusive`) or claims on collection elements: a
/// kernel that changes a collection's structure in place.
pub fn locks_elements(module: &Module, kernel: &Kernel) -> bool {
    let mut found = false;
    walk_block(&kernel.body.block, &mut |stmt| {
        if let Stmt::Lock { elements, .. } = stmt {
            found |= matches!(locked_item(module, elements), Some(Type::Element(_)));
        }
    });
    found
}

/// Whether a kernel changes the graph's structure the morph way: it retries items or locks
/// collection elements (the kernels that scattered first passes and adaptive parallelism are
/// for).
pub fn is_morph_kernel(module: &Module, kernel: &Kernel) -> bool {
    crate::opt::backoff::retries(kernel) || locks_elements(module, kernel)
}

/// What a lock statement locks: `Node` or a collection's `Element`, also when its one element is
/// an array's first items (`exclusive(q.first(n))`).
pub fn locked_item(module: &Module, elements: &[Expr]) -> Option<Type> {
    match elements.first() {
        Some(Expr { kind: ExprKind::ArrayPrefix { .. }, ty: Type::Array(id) }) => {
            module.arrays.get(id.index()).map(|a| a.element)
        }
        Some(e) => Some(e.ty),
        None => None,
    }
}

/// What a kernel may change in the graph's state, the functions it calls included: the
/// properties it writes (by id) and whether it touches union-find sets (a find compresses
/// paths, so it writes too). The GPU runtime marks exactly these stale on the host after the
/// kernel runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelEffects {
    pub writes: Vec<bool>,
    pub sets: bool,
}

/// The effects of kernel `kernel` (see [`KernelEffects`]).
pub fn kernel_effects(module: &Module, kernel: KernelId) -> KernelEffects {
    let mut effects = KernelEffects { writes: vec![false; module.properties.len()], sets: false };
    for body in kernel_bodies(module, kernel) {
        walk_block(&body.block, &mut |stmt| {
            if let Stmt::Assign { place, .. } = stmt {
                mark_written(place, &mut effects);
            }
            stmt_exprs(stmt, &mut |expr| {
                walk_expr(expr, &mut |e| match &e.kind {
                    ExprKind::Atomic { place, .. } => mark_written(place, &mut effects),
                    ExprKind::SetFind { .. } | ExprKind::SetUnion { .. } => effects.sets = true,
                    _ => {}
                })
            });
        });
    }
    effects
}

/// How a kernel (with the functions it calls) writes one property: a partitioned run merges
/// what kernels wrote into ghosts with the operator these imply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PropertyWrites {
    /// An assignment (`=`, `+=`, ...), to the property or one of its struct fields.
    pub plain: bool,
    pub min: bool,
    pub max: bool,
    /// `atomic_add` or `atomic_sub`: both merge by sum.
    pub add: bool,
    pub and: bool,
    pub or: bool,
    pub cas: bool,
    /// Some write goes through another node than the item of the kernel's loop over all nodes
    /// or its worklist (or is made in a function the kernel calls): on a partitioned graph,
    /// ghosts may change.
    pub remote: bool,
}

impl PropertyWrites {
    /// Whether the kernel writes the property at all.
    pub fn any(&self) -> bool {
        let PropertyWrites { plain, min, max, add, and, or, cas, remote: _ } = *self;
        plain || min || max || add || and || or || cas
    }

    /// The atomics among the writes that each imply a merge operator, as the program spells them.
    fn merges(&self) -> Vec<&'static str> {
        [
            (self.min, "atomic_min"),
            (self.max, "atomic_max"),
            (self.add, "atomic_add/sub"),
            (self.and, "atomic_and"),
            (self.or, "atomic_or"),
        ]
        .into_iter()
        .filter_map(|(written, name)| written.then_some(name))
        .collect()
    }
}

/// How kernel `kernel` writes each property, by property id (see [`PropertyWrites`]).
pub fn kernel_property_writes(module: &Module, kernel: KernelId) -> Vec<PropertyWrites> {
    let mut writes = vec![PropertyWrites::default(); module.properties.len()];
    let items = loop_items(&module.kernels[kernel.index()].body);
    for (b, body) in kernel_bodies(module, kernel).enumerate() {
        // Only the kernel's own body (b == 0) has loop items.
        let remote = |place: &Place| {
            b > 0
                || !matches!(root_place(place), Place::Property { element, .. }
                    if matches!(element.kind, ExprKind::Load(Place::Local(l)) if items.contains(&l)))
        };
        walk_block(&body.block, &mut |stmt| {
            if let Stmt::Assign { place, .. } = stmt
                && let Some(property) = stored_property(place)
            {
                writes[property.index()].plain = true;
                writes[property.index()].remote |= remote(place);
            }
            stmt_exprs(stmt, &mut |expr| {
                walk_expr(expr, &mut |e| {
                    if let ExprKind::Atomic { op, place, .. } = &e.kind
                        && let Some(property) = stored_property(place)
                    {
                        let w = &mut writes[property.index()];
                        w.remote |= remote(place);
                        match op {
                            AtomicOp::Min => w.min = true,
                            AtomicOp::Max => w.max = true,
                            AtomicOp::Add | AtomicOp::Sub => w.add = true,
                            AtomicOp::And => w.and = true,
                            AtomicOp::Or => w.or = true,
                            AtomicOp::Cas => w.cas = true,
                        }
                    }
                })
            });
        });
    }
    writes
}

/// By property: whether kernel `kernel` writes it and every write is followed, in the same
/// invocation, by a push of the node written, so that the invocation's output worklist holds
/// every node whose word it may have changed. A partitioned run's exchange on the devices then
/// looks only at the listed nodes' ghosts and mirrors instead of at every one of them.
///
/// Conservative by construction: a write counts as pushed only as
/// - an assignment or an atomic statement on `x.p` (`x` a local node, or `e.dst`/`e.src` of a
///   local edge) with `push(x)` later in the same block, nothing but assignments to other
///   locals, atomics, reductions and pushes before it; or
/// - an atomic on `x.p` that is an `if`'s condition or the last operand of its `&&` chain (an
///   atomic is true when it changed the word, and then the branch runs), with `push(x)` so in
///   the branch.
///
/// Any other write, and every write in a function the kernel calls, leaves its property out;
/// so does every write of a kernel that keeps some of its pushes in the pushing thread (local
/// worklists, [`crate::opt::local`]): those nodes run within the invocation and never reach
/// its output worklist.
pub fn pushed_writes(module: &Module, kernel: KernelId) -> Vec<bool> {
    if module.opt.local && crate::opt::local::eligible(module, kernel).is_ok() {
        return vec![false; module.properties.len()];
    }
    let mut written = vec![false; module.properties.len()];
    let mut unpushed = vec![false; module.properties.len()];
    let mut note = |place: &Place, pushed: bool| {
        if let Some(property) = stored_property(place) {
            written[property.index()] = true;
            unpushed[property.index()] |= !pushed;
        }
    };
    for (b, body) in kernel_bodies(module, kernel).enumerate() {
        pushed_in_block(&body.block, b == 0, &mut note);
    }
    written.iter().zip(&unpushed).map(|(&w, &u)| w && !u).collect()
}

/// [`pushed_writes`]'s walk of a block: every write in it and its nested blocks reported to
/// `note` with whether it counts as pushed (never where `own` is false: a called function).
fn pushed_in_block(block: &Block, own: bool, note: &mut impl FnMut(&Place, bool)) {
    for (i, stmt) in block.iter().enumerate() {
        let rest = &block[i + 1..];
        // An atomic followed by the push of its node: the statement itself, with the push after
        // it in this block, or the one deciding an `if`, with the push first in its branch.
        let pushed_after = |a: &Expr, stmts: &[Stmt]| matches!(&a.kind, ExprKind::Atomic { place, .. } if written_node(place).is_some_and(|x| pushes_first(stmts, x)));
        let covered: Option<&Expr> = match stmt {
            Stmt::Assign { place, .. } if stored_property(place).is_some() => {
                note(place, own && written_node(place).is_some_and(|x| pushes_first(rest, x)));
                None
            }
            Stmt::Eval(e) => Some(e).filter(|e| pushed_after(e, rest)),
            Stmt::If { cond, then, .. } => last_conjunct(cond).filter(|a| pushed_after(a, then)),
            _ => None,
        };
        stmt_exprs(stmt, &mut |expr| {
            walk_expr(expr, &mut |e| {
                if let ExprKind::Atomic { place, .. } = &e.kind {
                    note(place, own && covered.is_some_and(|c| std::ptr::eq(c, e)));
                }
            })
        });
        for child in stmt.blocks() {
            pushed_in_block(child, own, note);
        }
    }
}

/// The node `x` of a write to `x.p` (or a field of it), where `x` is a local or an end of a
/// local edge: an expression that names the same node wherever its locals are unchanged.
fn written_node(place: &Place) -> Option<&Expr> {
    let Place::Property { element, .. } = root_place(place) else { return None };
    node_local(element).map(|_| &**element)
}

/// The local a node expression `x` reads, if it is a local or an end of a local edge.
fn node_local(x: &Expr) -> Option<LocalId> {
    match &x.kind {
        ExprKind::Load(Place::Local(l)) => Some(*l),
        ExprKind::EdgeSource(edge) | ExprKind::EdgeTarget(edge) => match edge.kind {
            ExprKind::Load(Place::Local(l)) => Some(l),
            _ => None,
        },
        _ => None,
    }
}

/// The expression that decides a condition when it is true last: the condition itself, or the
/// last operand of its `&&` chain.
fn last_conjunct(cond: &Expr) -> Option<&Expr> {
    match &cond.kind {
        ExprKind::Binary(BinaryOp::And, _, right) => last_conjunct(right),
        _ => Some(cond),
    }
}

/// Whether `stmts` reach `push(x)` before anything that could leave the block or change `x`'s
/// local: only assignments to other locals or properties, atomics, reductions and other pushes
/// first.
fn pushes_first(stmts: &[Stmt], x: &Expr) -> bool {
    let Some(local) = node_local(x) else { return false };
    for stmt in stmts {
        match stmt {
            Stmt::Push { value, .. } if value == x => return true,
            Stmt::Assign { place: Place::Local(l), .. } if *l == local => return false,
            Stmt::Assign { .. } | Stmt::Eval(_) | Stmt::Reduce { .. } | Stmt::Push { .. } => {}
            _ => return false,
        }
    }
    false
}

/// By property: whether a kernel (or a function a kernel calls) reads it through another node
/// than the item of its loop over all nodes or its worklist: a load, or an atomic whose result
/// is used (an `atomic_add`/`atomic_sub` statement only adds). On a partitioned graph, only such
/// a property's ghosts need their owners' values after every superstep.
pub fn remote_reads(module: &Module) -> Vec<bool> {
    let mut reads = vec![false; module.properties.len()];
    for k in 0..module.kernels.len() {
        let kernel = KernelId(k as u32);
        let items = loop_items(&module.kernels[k].body);
        for (b, body) in kernel_bodies(module, kernel).enumerate() {
            // Only the kernel's own body (b == 0) has loop items.
            let mut mark = |place: &Place| {
                if let Place::Property { property, element } = root_place(place)
                    && (b > 0 || !matches!(element.kind, ExprKind::Load(Place::Local(l)) if items.contains(&l)))
                {
                    reads[property.index()] = true;
                }
            };
            walk_block(&body.block, &mut |stmt| {
                let bare_add = |e: &Expr| {
                    matches!(stmt, Stmt::Eval(top) if std::ptr::eq(top, e))
                        && matches!(e.kind, ExprKind::Atomic { op: AtomicOp::Add | AtomicOp::Sub, .. })
                };
                stmt_exprs(stmt, &mut |expr| {
                    walk_expr(expr, &mut |e| match &e.kind {
                        ExprKind::Load(place) => mark(place),
                        ExprKind::Atomic { place, .. } if !bare_add(e) => mark(place),
                        _ => {}
                    })
                });
            });
        }
    }
    reads
}

/// The kernel's body, then the body of every function it reaches through calls, each once.
fn kernel_bodies(module: &Module, kernel: KernelId) -> impl Iterator<Item = &Body> {
    std::iter::once(&module.kernels[kernel.index()].body)
        .chain(reached_functions(module, kernel).into_iter().map(|f| &module.functions[f.index()].body))
}

/// The functions a kernel calls, directly or through other functions, each once, in the order
/// they are found.
pub(crate) fn reached_functions(module: &Module, kernel: KernelId) -> Vec<FunctionId> {
    let mut queued = vec![false; module.functions.len()];
    let mut reached = Vec::new();
    let mut pending = vec![&module.kernels[kernel.index()].body];
    while let Some(body) = pending.pop() {
        walk_block(&body.block, &mut |stmt| {
            stmt_exprs(stmt, &mut |expr| {
                walk_expr(expr, &mut |e| {
                    if let ExprKind::Call(function, _) = e.kind
                        && !std::mem::replace(&mut queued[function.index()], true)
                    {
                        reached.push(function);
                        pending.push(&module.functions[function.index()].body);
                    }
                })
            });
        });
    }
    reached
}

/// Which locals a block reads and which it assigns (loop variables and invocation results
/// included), by index, into `reads` and `writes` (each as long as the body's locals).
pub fn local_uses(block: &Block, reads: &mut [bool], writes: &mut [bool]) {
    walk_block(block, &mut |stmt| stmt_local_uses(stmt, reads, writes));
}

/// [`local_uses`] of one statement alone (its expressions and what it assigns, not its blocks).
pub fn stmt_local_uses(stmt: &Stmt, reads: &mut [bool], writes: &mut [bool]) {
    match stmt {
        Stmt::Assign { place, .. } => mark_local_written(place, writes),
        Stmt::For { var, .. } | Stmt::ForEach { var, .. } => writes[var.index()] = true,
        Stmt::ForAll(forall) => writes[forall.var.index()] = true,
        Stmt::Invoke { result: Some(local), .. } => writes[local.index()] = true,
        _ => {}
    }
    stmt_exprs(stmt, &mut |expr| expr_local_reads(expr, reads));
    // A field assignment reads the rest of the struct.
    if let Stmt::Assign { place: Place::Field { base, .. }, .. } = stmt {
        place_local_reads(base, reads);
    }
}

/// Marks the locals an expression reads.
pub fn expr_local_reads(expr: &Expr, reads: &mut [bool]) {
    walk_expr(expr, &mut |e| {
        if let ExprKind::Load(place) | ExprKind::Atomic { place, .. } = &e.kind {
            place_local_reads(place, reads);
        }
    });
}

fn place_local_reads(place: &Place, reads: &mut [bool]) {
    match place {
        Place::Local(id) => reads[id.index()] = true,
        Place::Field { base, .. } | Place::Index { base, .. } => place_local_reads(base, reads),
        Place::Property { .. } | Place::ElementField { .. } => {}
    }
}

fn mark_local_written(place: &Place, writes: &mut [bool]) {
    match place {
        Place::Local(id) => writes[id.index()] = true,
        Place::Field { base, .. } | Place::Index { base, .. } => mark_local_written(base, writes),
        Place::Property { .. } | Place::ElementField { .. } => {}
    }
}

/// The local, property or element a place is a field of (or the place itself).
pub fn root_place(place: &Place) -> &Place {
    match place {
        Place::Field { base, .. } | Place::Index { base, .. } => root_place(base),
        other => other,
    }
}

/// The property a store to `place` writes (through any struct fields), if it is one.
pub fn stored_property(place: &Place) -> Option<PropertyId> {
    match root_place(place) {
        Place::Property { property, .. } => Some(*property),
        _ => None,
    }
}

/// Marks the properties that assignments in `block` store to (host code has no atomics).
pub fn assigned_properties(block: &Block, written: &mut [bool]) {
    walk_block(block, &mut |stmt| {
        if let Stmt::Assign { place, .. } = stmt
            && let Some(property) = stored_property(place)
        {
            written[property.index()] = true;
        }
    });
}

/// Which properties anything writes: a kernel or a function ([`written_by_kernels`], atomics
/// included), or an assignment in host code.
pub fn written_anywhere(module: &Module) -> Vec<bool> {
    let mut written = written_by_kernels(module);
    for function in &module.functions {
        assigned_properties(&function.body.block, &mut written);
    }
    assigned_properties(&module.main.block, &mut written);
    written
}

/// Which properties host code names: loaded or stored anywhere in `main` or in a function (which
/// host code may call). The others live on a GPU alone during a run: no host copy is needed
/// unless the caller reads them (outputs) or gives them (inputs).
pub fn host_touched_properties(module: &Module) -> Vec<bool> {
    let mut touched = vec![false; module.properties.len()];
    let mut mark = |block: &Block| {
        walk_block(block, &mut |stmt| {
            if let Stmt::Assign { place, .. } = stmt
                && let Some(property) = stored_property(place)
            {
                touched[property.index()] = true;
            }
            stmt_exprs(stmt, &mut |expr| {
                walk_expr(expr, &mut |e| match &e.kind {
                    ExprKind::Load(place) | ExprKind::Atomic { place, .. } => {
                        if let Some(property) = stored_property(place) {
                            touched[property.index()] = true;
                        }
                    }
                    _ => {}
                })
            });
        })
    };
    mark(&module.main.block);
    for function in &module.functions {
        mark(&function.body.block);
    }
    touched
}

/// Which properties any kernel (or a function a kernel calls) writes: the others are read-only
/// while kernels run.
pub fn written_by_kernels(module: &Module) -> Vec<bool> {
    let mut written = vec![false; module.properties.len()];
    for k in 0..module.kernels.len() {
        let effects = kernel_effects(module, KernelId(k as u32));
        for (w, e) in written.iter_mut().zip(effects.writes) {
            *w |= e;
        }
    }
    written
}

/// Marks the property a place stores into, if it is one.
fn mark_written(place: &Place, effects: &mut KernelEffects) {
    match place {
        Place::Property { property, .. } => effects.writes[property.index()] = true,
        Place::Field { base, .. } | Place::Index { base, .. } => mark_written(base, effects),
        Place::Local(_) | Place::ElementField { .. } => {}
    }
}

/// By collection, whether code that runs on the device side (a kernel, or a function, which a
/// kernel may call) reads its count (`len()`). The CPU target counts the other collections' adds
/// and removals per thread and totals them when the kernel ends; these must be counted as they
/// happen.
pub fn collections_counted_in_kernels(module: &Module) -> Vec<bool> {
    let mut counted = vec![false; module.collections.len()];
    // Added edges count exactly: `G.num_edges()` reads the count, and removing an input edge
    // counts there too.
    if let Some(growth) = &module.growth {
        counted[growth.added.index()] = true;
    }
    let device_bodies = module.functions.iter().map(|f| &f.body).chain(module.kernels.iter().map(|k| &k.body));
    for body in device_bodies {
        walk_block(&body.block, &mut |stmt| {
            stmt_exprs(stmt, &mut |expr| {
                walk_expr(expr, &mut |e| {
                    if let ExprKind::CollectionLen(c) = e.kind {
                        counted[c.index()] = true;
                    }
                })
            });
        });
    }
    counted
}

/// Why a module cannot run on a partitioned graph, one sentence each (empty: it can). A part holds
/// its own nodes with their out-edges and ghost copies of the remote heads, numbered by local ids;
/// after each invocation, what kernels wrote into ghosts is merged into the owners.
pub fn partition_obstacles(module: &Module) -> Vec<String> {
    let mut obstacles = Vec::new();
    if module.growth.is_some() {
        obstacles.push("its kernels add or remove edges: a part's edges are fixed when the graph is split".to_string());
    }
    for collection in &module.collections {
        obstacles.push(format!("it declares the collection `{}`: collections live on one device", collection.name));
    }
    obstacles.extend(crate::sets::obstacles(module));
    for property in &module.properties {
        if let Some(handle) = held_handle(module, property.ty) {
            let what = match handle {
                Type::Edge => "an Edge".to_string(),
                Type::Element(c) => format!("a handle of `{}`", module.collections[c.index()].name),
                _ => "a Node".to_string(),
            };
            let inside = if handle == property.ty { "" } else { " in a field" };
            obstacles.push(format!(
                "the property `{}` holds {what}{inside}: handles are local ids on a part",
                property.name
            ));
        }
    }
    // Kernels and the functions they call run on every part; the rest of the functions and
    // `main` only on the host.
    let mut on_parts = vec![false; module.functions.len()];
    for (k, kernel) in module.kernels.iter().enumerate() {
        let id = KernelId(k as u32);
        let who = format!("the kernel `{}`", kernel.name);
        part_obstacles(module, &kernel.body, &who, &mut obstacles);
        for function in reached_functions(module, id) {
            if !std::mem::replace(&mut on_parts[function.index()], true) {
                let function = &module.functions[function.index()];
                let who = format!("the function `{}` (called from the kernel `{}`)", function.name, kernel.name);
                part_obstacles(module, &function.body, &who, &mut obstacles);
            }
        }
        for (property, writes) in module.properties.iter().zip(kernel_property_writes(module, id)) {
            let merges = writes.merges();
            if merges.len() > 1 {
                let both = if merges.len() == 2 { "both " } else { "" };
                obstacles.push(format!(
                    "{who} writes the property `{}` with {both}{}: the ghosts' values could not be merged \
                     into their owners with one operator",
                    property.name,
                    and_list(&merges)
                ));
            }
        }
    }
    for (function, _) in module.functions.iter().zip(on_parts).filter(|&(_, on_parts)| !on_parts) {
        reverse_obstacle(&function.body, &format!("the function `{}`", function.name), &mut obstacles);
    }
    reverse_obstacle(&module.main, "`main`", &mut obstacles);
    obstacles
}

/// The obstacles of a body run on every part (a kernel's, or a function's a kernel calls).
fn part_obstacles(module: &Module, body: &Body, who: &str, obstacles: &mut Vec<String>) {
    in_edge_obstacle(body, who, obstacles);
    let mut lock_kinds = Vec::new();
    // The loops over every node or edge (`for v in G.nodes()` lowers to one over the ids), and
    // their counters: a loop's own cast of its counter to a node is not reported again.
    let mut whole_loops = Vec::new();
    let mut counters = Vec::new();
    walk_block(&body.block, &mut |stmt| match stmt {
        Stmt::For { var, end, .. }
            if matches!(end.kind, ExprKind::NumNodes | ExprKind::NumEdges | ExprKind::NodeIds | ExprKind::EdgeIds) =>
        {
            let whole = if matches!(end.kind, ExprKind::NumNodes | ExprKind::NodeIds) {
                ("node", "G.nodes()", "a part holds only its own nodes and their ghosts")
            } else {
                ("edge", "G.edges()", "a part holds only its own nodes' out-edges")
            };
            if !whole_loops.contains(&whole) {
                whole_loops.push(whole);
            }
            counters.push(*var);
        }
        Stmt::Lock { kind: kind @ (LockKind::Atomic | LockKind::Exclusive), elements, .. }
            if locks_nodes(module, elements) && !lock_kinds.contains(kind) =>
        {
            lock_kinds.push(*kind)
        }
        _ => {}
    });
    if !lock_kinds.is_empty() {
        let kinds: Vec<_> = lock_kinds.iter().map(|k| format!("`{}`", k.name())).collect();
        obstacles.push(format!(
            "{who} locks nodes with {}: a node's lock exists once per part, so sections on different \
             devices would not exclude each other",
            and_list(&kinds)
        ));
    }
    for (item, iterator, why) in whole_loops {
        obstacles.push(format!("{who} loops over every {item} in sequence (`for .. in {iterator}`): {why}"));
    }
    let mut params = Vec::new();
    let mut casts = Vec::new();
    let mut edge_numbers = false;
    walk_block(&body.block, &mut |stmt| {
        stmt_exprs(stmt, &mut |expr| {
            walk_expr(expr, &mut |e| match &e.kind {
                ExprKind::Param(id) if module.params[id.index()].ty == Type::Node && !params.contains(id) => {
                    params.push(*id)
                }
                // A node's number is its global id on every part (`grail_ctx.global_ids`); an
                // edge's is its position in the part's own edge arrays.
                ExprKind::Cast(value) if value.ty == Type::Edge && e.ty != Type::Edge => edge_numbers = true,
                ExprKind::Cast(value)
                    if matches!(e.ty, Type::Node | Type::Edge)
                        && !matches!(value.ty, Type::Node | Type::Edge)
                        && !matches!(value.kind, ExprKind::Load(Place::Local(l)) if counters.contains(&l))
                        && !casts.contains(&e.ty) =>
                {
                    casts.push(e.ty)
                }
                _ => {}
            })
        });
    });
    if retries_other_nodes(body) {
        obstacles.push(format!(
            "{who} retries a node other than its loop's item (`retry`): on a part a retried ghost would \
             run where its edges are not, and its owner would not run it in this invocation"
        ));
    }
    if reads_remote_adjacency(body) {
        obstacles.push(format!(
            "{who} reads the edges, neighbours or degree of a node other than its loop's item: a ghost's \
             edges are on its owner's part"
        ));
    }
    for id in params {
        obstacles.push(format!(
            "{who} reads the Node parameter `{}`: node parameters go to `main` only (kernels see a part's \
             local ids)",
            module.params[id.index()].name
        ));
    }
    for ty in casts {
        let (what, name) = if ty == Type::Node { ("a node", "Node") } else { ("an edge", "Edge") };
        obstacles.push(format!("{who} turns an integer into {what} (`as {name}`): ids in kernels are local to a part"));
    }
    if edge_numbers {
        obstacles.push(format!(
            "{who} turns an edge into a number (`as` on an edge): an edge's number on a part is its place among \
             that part's edges, not in the whole graph"
        ));
    }
}

/// Whether a body (a kernel's, or a function's a kernel calls) retries a node that is not an
/// item of a loop over all nodes or the worklist (conservative, as `reads_remote_adjacency`).
fn retries_other_nodes(body: &Body) -> bool {
    let items = loop_items(body);
    let mut other = false;
    walk_block(&body.block, &mut |stmt| {
        if let Stmt::Retry { value } = stmt
            && value.ty == Type::Node
        {
            other |= !matches!(value.kind, ExprKind::Load(Place::Local(l)) if items.contains(&l));
        }
    });
    other
}

/// Whether a body (a kernel's, or a function's a kernel calls) reads the adjacency (edges,
/// neighbours, in-degree) of a node that is not an item of a loop over all nodes or the
/// worklist: on a part only owned nodes have edges. (Any node's out-degree can be read: a part
/// holds its ghosts' out-degrees, see [`reads_ghost_degrees`].) Conservative: a copy of the
/// item in another local, or a function's node parameter, counts as another node.
fn reads_remote_adjacency(body: &Body) -> bool {
    let items = loop_items(body);
    let is_item = |node: &Expr| matches!(node.kind, ExprKind::Load(Place::Local(l)) if items.contains(&l));
    let mut remote = false;
    walk_block(&body.block, &mut |stmt| {
        match stmt {
            Stmt::ForEach { node, .. } => remote |= !is_item(node),
            Stmt::ForAll(forall) => {
                if let Space::Adjacent(_, node) = &forall.space {
                    remote |= !is_item(node);
                }
            }
            _ => {}
        }
        stmt_exprs(stmt, &mut |expr| {
            walk_expr(expr, &mut |e| {
                if let ExprKind::Degree { node, reverse: true } | ExprKind::Neighbor { node, .. } = &e.kind {
                    remote |= !is_item(node);
                }
            })
        });
    });
    remote
}

/// Whether a kernel (or a function a kernel calls) reads the out-degree of a node that may not
/// be its loop's item (see [`degree_of_non_item`]): a partitioned run then gives every part its
/// ghosts' out-degrees, whose edges it does not hold.
pub fn reads_ghost_degrees(module: &Module) -> bool {
    (0..module.kernels.len()).any(|k| {
        let kernel = KernelId(k as u32);
        let items = loop_items(&module.kernels[k].body);
        kernel_bodies(module, kernel).enumerate().any(|(b, body)| {
            // Only the kernel's own body (b == 0) has loop items.
            let items = if b == 0 { &items[..] } else { &[] };
            let mut found = false;
            walk_block(&body.block, &mut |stmt| {
                stmt_exprs(stmt, &mut |expr| walk_expr(expr, &mut |e| found |= degree_of_non_item(e, items)))
            });
            found
        })
    })
}

/// Whether `e` reads the out-degree of a node that is not one of `items` (the locals of the
/// body's loops over all nodes or the worklist, [`loop_items`]): on a part such a node may be
/// a ghost, whose out-degree comes from the part's ghost degrees, not its (empty) row.
pub fn degree_of_non_item(e: &Expr, items: &[LocalId]) -> bool {
    matches!(&e.kind, ExprKind::Degree { node, reverse: false }
        if !matches!(node.kind, ExprKind::Load(Place::Local(l)) if items.contains(&l)))
}

/// The module's defaults kernel ([`Module::defaults`]) when the value it gives each node depends
/// on that node alone: constants, parameters other than nodes, the graph's counts, the node's
/// number (`u as u32`, its global id on a part) and arithmetic on them; no property, edge or
/// degree read, no call. Such a kernel run over a part's ghosts too gives them their owners'
/// values, so a partitioned run need not send them.
pub fn node_local_defaults(module: &Module) -> Option<KernelId> {
    let kernel = module.defaults?;
    let body = &module.kernels.get(kernel.index())?.body;
    let pure = |e: &Expr, item: LocalId| {
        let mut ok = true;
        walk_expr(e, &mut |e| {
            ok &= match &e.kind {
                ExprKind::Const(_)
                | ExprKind::NumNodes
                | ExprKind::NumEdges
                | ExprKind::Unary(..)
                | ExprKind::Binary(..)
                | ExprKind::Cast(_)
                | ExprKind::Struct(..)
                | ExprKind::Zeroed
                | ExprKind::Field(..) => true,
                ExprKind::Param(id) => module.params[id.index()].ty != Type::Node,
                ExprKind::Load(Place::Local(l)) => *l == item,
                _ => false,
            }
        });
        ok
    };
    let mut local = true;
    for stmt in &body.block {
        match stmt {
            Stmt::ForAll(forall) if forall.space == Space::AllNodes && forall.filter.is_none() => {
                for inner in &forall.body {
                    local &= matches!(inner, Stmt::Assign { place: Place::Property { element, .. }, value }
                        if matches!(element.kind, ExprKind::Load(Place::Local(l)) if l == forall.var)
                            && pure(value, forall.var));
                }
            }
            Stmt::ForAll(forall) if forall.space != Space::AllNodes => {}
            _ => local = false,
        }
    }
    local.then_some(kernel)
}

/// By property, whether the defaults kernel ([`Module::defaults`], which `main` invokes first)
/// writes every element: a statement of a loop over all nodes (or all edges), unfiltered, that
/// assigns the property of the loop's item outright. What such a column held before the run
/// is never read, so a column reused from an earlier run need not be cleared first.
pub fn written_by_defaults(module: &Module) -> Vec<bool> {
    let mut written = vec![false; module.properties.len()];
    let Some(kernel) = module.defaults.and_then(|k| module.kernels.get(k.index())) else { return written };
    for stmt in &kernel.body.block {
        let Stmt::ForAll(forall) = stmt else { continue };
        if !matches!(forall.space, Space::AllNodes | Space::AllEdges) || forall.filter.is_some() {
            continue;
        }
        for inner in &forall.body {
            if let Stmt::Assign { place: Place::Property { property, element }, .. } = inner
                && matches!(element.kind, ExprKind::Load(Place::Local(l)) if l == forall.var)
            {
                written[property.index()] = true;
            }
        }
    }
    written
}

/// The variables of a body's loops over all nodes or the worklist: the items, which a part owns.
pub fn loop_items(body: &Body) -> Vec<LocalId> {
    let mut items = Vec::new();
    walk_block(&body.block, &mut |stmt| {
        if let Stmt::ForAll(forall) = stmt
            && matches!(forall.space, Space::Worklist | Space::AllNodes)
        {
            items.push(forall.var);
        }
    });
    items
}

/// The obstacle of a body run on every part: iterating in-edges as edges. A part holds its
/// owned nodes' in-neighbours (their sources, in local ids), but an in-edge's id and properties
/// belong to its source's part. (In-neighbours and in-degrees of other nodes than the loop's
/// item are [`reads_remote_adjacency`]'s.)
fn in_edge_obstacle(body: &Body, who: &str, obstacles: &mut Vec<String>) {
    let mut found = false;
    walk_block(&body.block, &mut |stmt| {
        found |= match stmt {
            Stmt::ForEach { adjacency, .. } => *adjacency == Adjacency::InEdges,
            Stmt::ForAll(forall) => matches!(forall.space, Space::Adjacent(Adjacency::InEdges, _)),
            _ => false,
        };
    });
    if found {
        obstacles.push(format!(
            "{who} reads in-edges as edges: a part holds its nodes' in-neighbours, but an in-edge's id and \
             properties are on its source's part"
        ));
    }
}

/// The obstacle of a body the host runs (`main`, functions no kernel calls): reading the
/// graph's in-edges, which the host does not hold for a partitioned run.
fn reverse_obstacle(body: &Body, who: &str, obstacles: &mut Vec<String>) {
    let mut reads = Vec::new();
    let mut note = |what: &'static str| {
        if !reads.contains(&what) {
            reads.push(what);
        }
    };
    walk_block(&body.block, &mut |stmt| {
        let adjacency = match stmt {
            Stmt::ForEach { adjacency, .. } => Some(*adjacency),
            Stmt::ForAll(forall) => match forall.space {
                Space::Adjacent(adjacency, _) => Some(adjacency),
                _ => None,
            },
            _ => None,
        };
        match adjacency {
            Some(Adjacency::InEdges) => note("in-edges"),
            Some(Adjacency::InNeighbors) => note("in-neighbours"),
            _ => {}
        }
        stmt_exprs(stmt, &mut |expr| {
            walk_expr(expr, &mut |e| match e.kind {
                ExprKind::Neighbor { reverse: true, .. } => note("in-neighbours"),
                ExprKind::Degree { reverse: true, .. } => note("in-degrees"),
                _ => {}
            })
        });
    });
    if !reads.is_empty() {
        obstacles.push(format!(
            "{who} reads {}: the host of a partitioned run holds no in-edges (kernels may read their items')",
            and_list(&reads)
        ));
    }
}

/// The handle a value of type `ty` holds, itself or in a struct field or array item.
fn held_handle(module: &Module, ty: Type) -> Option<Type> {
    match ty {
        Type::Node | Type::Edge | Type::Element(_) => Some(ty),
        Type::Struct(id) => module.structs[id.index()].fields.iter().find_map(|&(_, field)| held_handle(module, field)),
        Type::Array(id) => held_handle(module, module.arrays[id.index()].element),
        Type::Scalar(_) | Type::Unit => None,
    }
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[impl AsRef<str>]) -> String {
    let items: Vec<&str> = items.iter().map(AsRef::as_ref).collect();
    match items.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// Every body of the module.
fn bodies(module: &Module) -> impl Iterator<Item = &Body> {
    module
        .functions
        .iter()
        .map(|f| &f.body)
        .chain(module.kernels.iter().map(|k| &k.body))
        .chain(std::iter::once(&module.main))
}

fn any_stmt(module: &Module, mut test: impl FnMut(&Stmt) -> bool) -> bool {
    bodies(module).any(|body| block_has(&body.block, &mut test))
}

/// Why the program cannot run on a graph whose rows may have room after them
/// (`grail_graph::Csr::with_room`: edge ids are positions that do not run densely from 0 to the
/// edge count), if it cannot: it adds or removes edges, iterates in-edges as edges, loops over
/// every edge, or makes edges from numbers.
pub fn room_obstacle(module: &Module) -> Option<&'static str> {
    if module.growth.is_some() {
        return Some("its kernels add or remove edges");
    }
    if needs_in_edge_ids(module) {
        return Some("it iterates in-edges as edges");
    }
    if any_stmt(module, |s| matches!(s, Stmt::ForAll(forall) if matches!(forall.space, Space::AllEdges)))
        || any_expr(module, |e| matches!(e.kind, ExprKind::EdgeIds | ExprKind::HasEdge(_)))
    {
        return Some("it loops over every edge");
    }
    if any_expr(module, |e| e.ty == Type::Edge && matches!(&e.kind, ExprKind::Cast(value) if value.ty != Type::Edge)) {
        return Some("it makes edges from numbers");
    }
    None
}

/// What `main` reads of the graph's edges, if anything: a degree, an indexed neighbour, an
/// edge's endpoints or properties, or a loop over edges or adjacency. Host code has only the
/// input graph, so this is an error in a program whose kernels add or remove edges.
pub fn host_edge_reads(module: &Module) -> Option<&'static str> {
    let mut found = None;
    walk_block(&module.main.block, &mut |stmt| {
        match stmt {
            Stmt::ForEach { .. } => found = found.or(Some("a loop over a node's edges or neighbours")),
            Stmt::ForAll(forall) if matches!(forall.space, Space::AllEdges | Space::Adjacent(..)) => {
                found = found.or(Some("a loop over edges"))
            }
            _ => {}
        }
        stmt_exprs(stmt, &mut |expr| {
            walk_expr(expr, &mut |e| {
                let what = match &e.kind {
                    ExprKind::Degree { .. } => Some("a degree"),
                    ExprKind::Neighbor { .. } => Some("an indexed neighbour"),
                    ExprKind::EdgeSource(_) | ExprKind::EdgeTarget(_) => Some("an edge's endpoints"),
                    ExprKind::Load(Place::Property { property, .. })
                        if module.properties[property.index()].owner == Owner::Edge =>
                    {
                        Some("an edge property")
                    }
                    _ => None,
                };
                found = found.or(what);
            })
        });
    });
    found
}

fn any_adjacency(module: &Module, mut test: impl FnMut(Adjacency) -> bool) -> bool {
    any_stmt(module, |stmt| match stmt {
        Stmt::ForEach { adjacency, .. } => test(*adjacency),
        Stmt::ForAll(forall) => matches!(forall.space, Space::Adjacent(adjacency, _) if test(adjacency)),
        _ => false,
    })
}

/// Whether any expression anywhere in the module (sub-expressions included) passes `test`.
fn any_expr(module: &Module, mut test: impl FnMut(&Expr) -> bool) -> bool {
    let mut found = false;
    for body in bodies(module) {
        walk_block(&body.block, &mut |stmt| {
            stmt_exprs(stmt, &mut |expr| walk_expr(expr, &mut |e| found |= test(e)));
        });
    }
    found
}

/// The expressions a statement holds directly (not those of its nested blocks).
pub(crate) fn stmt_exprs(stmt: &Stmt, visit: &mut impl FnMut(&Expr)) {
    match stmt {
        Stmt::Assign { place, value } => {
            place_exprs(place, visit);
            visit(value);
        }
        Stmt::If { cond, .. } | Stmt::While { cond, .. } => visit(cond),
        Stmt::For { start, end, .. } => {
            visit(start);
            visit(end);
        }
        Stmt::ForEach { node, .. } => visit(node),
        Stmt::ForAll(forall) => {
            match &forall.space {
                Space::Range(start, end) => {
                    visit(start);
                    visit(end);
                }
                Space::Adjacent(_, node) => visit(node),
                Space::Worklist | Space::AllNodes | Space::AllEdges | Space::Collection(_) => {}
            }
            if let Some(filter) = &forall.filter {
                visit(filter);
            }
        }
        Stmt::Push { value, .. } | Stmt::Retry { value } | Stmt::Reduce { value } | Stmt::Eval(value) => visit(value),
        Stmt::Return(value) => value.iter().for_each(visit),
        Stmt::Lock { elements, .. } => elements.iter().for_each(visit),
        Stmt::Invoke { args, .. } => args.iter().for_each(visit),
        Stmt::Iterate(iterate) => match &iterate.until {
            Until::Empty { args, initial, .. } => {
                args.iter().for_each(&mut *visit);
                initial_exprs(initial.as_ref(), visit);
            }
            Until::Condition { cond, .. } => visit(cond),
        },
        Stmt::Pipe(pipe) => initial_exprs(pipe.initial.as_ref(), visit),
        Stmt::Print(args) => {
            for arg in args {
                if let PrintArg::Value(expr) = arg {
                    visit(expr);
                }
            }
        }
        Stmt::Break | Stmt::Continue => {}
    }
}

fn initial_exprs(initial: Option<&Initial>, visit: &mut impl FnMut(&Expr)) {
    if let Some(Initial::Items(items)) = initial {
        items.iter().for_each(visit);
    }
}

pub(crate) fn place_exprs<'a>(place: &'a Place, visit: &mut impl FnMut(&'a Expr)) {
    match place {
        Place::Local(_) => {}
        Place::Property { element, .. } | Place::ElementField { element, .. } => visit(element),
        Place::Field { base, .. } => place_exprs(base, visit),
        Place::Index { base, index } => {
            place_exprs(base, visit);
            visit(index);
        }
    }
}

/// Why the host code of an outlined region (its statements outside kernels) cannot run on every
/// part of a partitioned graph at once, each part with its own copy of `main`'s locals; `None`
/// when it can: it computes with locals, parameters and constants only, invokes kernels with
/// such arguments, and loops. Nodes, edges, properties, graph counts, function calls and
/// printing mean something else (or happen once per part) on a part.
pub fn partitioned_region_obstacle(region: &Stmt) -> Option<String> {
    let mut obstacle = None;
    let mut note = |why: &str| {
        if obstacle.is_none() {
            obstacle = Some(why.to_string());
        }
    };
    // The region's own first worklist is filled by the host before the region runs.
    let mut region = region.clone();
    match &mut region {
        Stmt::Iterate(iterate) => {
            if let Until::Empty { initial, .. } = &mut iterate.until {
                *initial = None;
            }
        }
        Stmt::Pipe(pipe) => pipe.initial = None,
        _ => {}
    }
    walk_block(&[region], &mut |stmt| {
        match stmt {
            Stmt::Print(_) => note("it prints"),
            Stmt::Assign { place, .. } if stored_property(place).is_some() => note("it stores to a property"),
            Stmt::ForEach { .. } | Stmt::ForAll(_) | Stmt::Lock { .. } | Stmt::Push { .. } | Stmt::Retry { .. } => {
                note("it loops over the graph")
            }
            _ => {}
        }
        stmt_exprs(stmt, &mut |expr| {
            walk_expr(expr, &mut |e| {
                if matches!(e.ty, Type::Node | Type::Edge | Type::Element(_)) {
                    note("it computes with nodes or edges, whose ids are local to a part");
                }
                match &e.kind {
                    ExprKind::Load(place) | ExprKind::Atomic { place, .. }
                        if !matches!(root_place(place), Place::Local(_)) =>
                    {
                        note("it reads a property")
                    }
                    ExprKind::NumNodes | ExprKind::NumEdges | ExprKind::Degree { .. } | ExprKind::Neighbor { .. } => {
                        note("it reads the graph")
                    }
                    ExprKind::Call(..) => note("it calls a function"),
                    ExprKind::Const(_)
                    | ExprKind::Load(_)
                    | ExprKind::Param(_)
                    | ExprKind::Unary(..)
                    | ExprKind::Binary(..)
                    | ExprKind::Cast(_)
                    | ExprKind::Builtin(..)
                    | ExprKind::Field(..)
                    | ExprKind::Struct(..)
                    | ExprKind::Zeroed => {}
                    _ => note("it uses the graph or a collection"),
                }
            })
        });
    });
    obstacle
}

/// Visits an expression and all its sub-expressions, parents first.
pub fn walk_expr(expr: &Expr, visit: &mut impl FnMut(&Expr)) {
    visit(expr);
    let mut children: Vec<&Expr> = Vec::new();
    match &expr.kind {
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
        ExprKind::Load(place) => place_exprs(place, &mut |e| children.push(e)),
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
        | ExprKind::HasEdge(e) => children.push(e),
        ExprKind::AddEdge { src, dst, weight } => {
            children.extend([&**src, &**dst]);
            children.extend(weight.as_deref());
        }
        ExprKind::Neighbor { node, index, .. } => children.extend([&**node, &**index]),
        ExprKind::Binary(_, a, b) | ExprKind::SetUnion { a, b, .. } => children.extend([&**a, &**b]),
        ExprKind::ArrayPrefix { array, count } => children.extend([&**array, &**count]),
        ExprKind::Call(_, args) | ExprKind::Builtin(_, args) | ExprKind::Struct(_, args) => children.extend(args),
        ExprKind::Atomic { place, operands, .. } => {
            place_exprs(place, &mut |e| children.push(e));
            children.extend(operands);
        }
    }
    for child in children {
        walk_expr(child, visit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::samples::bfs;

    /// BFS with its edge loop (`for e in u.out_edges() { v = e.dst; if ... }`) edited.
    fn bfs_with(edit: impl FnOnce(&mut Stmt)) -> Module {
        let mut module = bfs();
        let Stmt::ForAll(forall) = &mut module.kernels[0].body.block[0] else { unreachable!() };
        edit(&mut forall.body[0]);
        module
    }

    fn with_adjacency(adjacency: Adjacency) -> Module {
        bfs_with(|stmt| {
            let Stmt::ForEach { adjacency: a, .. } = stmt else { unreachable!() };
            *a = adjacency;
        })
    }

    #[test]
    fn bfs_expand_writes_only_its_level() {
        let module = bfs();
        let effects = kernel_effects(&module, KernelId(0));
        assert_eq!(effects.writes.iter().filter(|&&w| w).count(), 1);
        assert!(!effects.sets);
    }

    #[test]
    fn bfs_needs_nothing_extra() {
        let module = bfs();
        assert!(!needs_reverse(&module));
        assert!(!needs_edge_sources(&module));
        assert!(!needs_in_edge_ids(&module));
        assert!(!uses_locks(&module));
        assert!(!uses_claims(&module));
    }

    #[test]
    fn in_edges_need_the_reverse_and_edge_ids() {
        let module = with_adjacency(Adjacency::InEdges);
        assert!(needs_reverse(&module));
        assert!(needs_in_edge_ids(&module));
        let module = with_adjacency(Adjacency::InNeighbors);
        assert!(needs_reverse(&module));
        assert!(!needs_in_edge_ids(&module));
    }

    #[test]
    fn bfs_writes_its_level_plainly_and_runs_partitioned() {
        let module = bfs();
        let writes = kernel_property_writes(&module, KernelId(0));
        assert_eq!(writes, [PropertyWrites { plain: true, remote: true, ..Default::default() }]);
        assert!(writes[0].any());
        assert!(!PropertyWrites::default().any());
        assert!(partition_obstacles(&module).is_empty());
    }

    /// BFS with `level[v] = next` replaced by atomics of the given operators.
    fn bfs_with_atomics(ops: &[AtomicOp]) -> Module {
        bfs_with(|stmt| {
            let Stmt::ForEach { body, .. } = stmt else { unreachable!() };
            let Stmt::If { then, .. } = &mut body[1] else { unreachable!() };
            let Stmt::Assign { place, value } = then.remove(0) else { unreachable!() };
            for &op in ops.iter().rev() {
                let operands = vec![value.clone(); op.operands()];
                let atomic = ExprKind::Atomic { op, place: place.clone(), operands };
                then.insert(0, Stmt::Eval(Expr::new(atomic, Type::BOOL)));
            }
        })
    }

    #[test]
    fn atomics_are_told_apart_and_two_merges_are_an_obstacle() {
        let module = bfs_with_atomics(&[AtomicOp::Sub, AtomicOp::Cas]);
        let writes = kernel_property_writes(&module, KernelId(0));
        assert_eq!(writes, [PropertyWrites { add: true, cas: true, remote: true, ..Default::default() }]);
        assert!(partition_obstacles(&module).is_empty());
        let module = bfs_with_atomics(&[AtomicOp::Min, AtomicOp::Or]);
        assert_eq!(
            partition_obstacles(&module),
            ["the kernel `expand` writes the property `level` with both atomic_min and atomic_or: the ghosts' \
              values could not be merged into their owners with one operator"]
        );
    }

    #[test]
    fn nested_expressions_are_seen() {
        let module = bfs_with(|stmt| {
            let Stmt::ForEach { body, .. } = stmt else { unreachable!() };
            let Stmt::Assign { value, .. } = &mut body[0] else { unreachable!() };
            let edge = Expr::local(LocalId(2), Type::Edge);
            *value = Expr::new(ExprKind::EdgeSource(Box::new(edge)), Type::Node);
        });
        assert!(needs_edge_sources(&module));
        assert!(!needs_reverse(&module));
        let module = bfs_with(|stmt| {
            let Stmt::ForEach { body, .. } = stmt else { unreachable!() };
            let Stmt::If { cond, then, .. } = &mut body[1] else { unreachable!() };
            let node = Expr::local(LocalId(3), Type::Node);
            *cond = Expr::binary(
                BinaryOp::Gt,
                Expr::new(ExprKind::Degree { node: Box::new(node.clone()), reverse: true }, Type::U32),
                Expr::int(0, Type::U32),
            );
            let inner = std::mem::take(then);
            *then = vec![Stmt::Lock { kind: LockKind::Single, elements: vec![node], body: inner, otherwise: vec![] }];
        });
        assert!(needs_reverse(&module));
        assert!(uses_claims(&module));
        assert!(!uses_locks(&module));
    }
}
