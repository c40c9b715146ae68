//! Iteration outlining (IrGL §4.1): which `iterate` and `pipe` regions move onto the device.
//!
//! An outlined region runs as one *control kernel*: every thread of a grid that fits on the
//! device at once runs the region's host code (each with its own copy of the host's locals, so
//! every thread takes the same branches), the kernels it invokes become calls of their phases'
//! device functions separated by grid-wide barriers, and the host launches once for the whole
//! loop instead of once per invocation.
//!
//! The outline tree (Figure 4) has a node for every region, its children the regions nested in
//! it. A region can move when its host code can run on the device and every region inside it
//! can; host code can run on the device unless it prints, returns, adds to a collection, uses
//! union-find sets, has locals of struct type, or calls a function that writes anything
//! (each thread would write). A region nested inside an outlined one must share its worklist
//! (no `initial` of its own). [`Outline::All`] outlines the outermost region of each tree that
//! can move, and looks at the children of one that cannot; each region left on the host gets a
//! note that says why.

use crate::analysis::{root_place, stmt_exprs, walk_expr};
use crate::ir::*;
use crate::opt::{OptConfig, Outline};

pub(crate) fn run(module: &mut Module, config: &OptConfig, notes: &mut Vec<String>) {
    if config.outline == Outline::None {
        return;
    }
    let checker = Checker { module: &*module };
    let mut marks = Vec::new();
    checker.roots(&module.main.block, &mut marks, notes);
    mark(&mut module.main.block, &marks);
}

/// The name of a region in notes and errors: `iterate#0`, `pipe#1`.
pub fn region_name(stmt: &Stmt) -> String {
    match stmt {
        Stmt::Iterate(iterate) => format!("iterate#{}", iterate.id.0),
        Stmt::Pipe(pipe) => format!("pipe#{}", pipe.id.0),
        _ => "a statement".into(),
    }
}

/// The id of a region statement.
pub fn region_id(stmt: &Stmt) -> Option<OutlineId> {
    match stmt {
        Stmt::Iterate(iterate) => Some(iterate.id),
        Stmt::Pipe(pipe) => Some(pipe.id),
        _ => None,
    }
}

struct Checker<'m> {
    module: &'m Module,
}

impl Checker<'_> {
    /// Visits the outline tree from `block`: outlines the roots that can move, descends into the
    /// ones that cannot.
    fn roots(&self, block: &Block, marks: &mut Vec<OutlineId>, notes: &mut Vec<String>) {
        for stmt in block {
            match region_id(stmt) {
                Some(id) => match self.why_not(stmt, true) {
                    None => marks.push(id),
                    Some(why) => {
                        notes.push(format!("{} is not outlined: {why}", region_name(stmt)));
                        for child in stmt.blocks() {
                            self.roots(child, marks, notes);
                        }
                    }
                },
                None => {
                    for child in stmt.blocks() {
                        self.roots(child, marks, notes);
                    }
                }
            }
        }
    }

    /// Why the region `stmt` cannot run on the device (`None` when it can). A root's `initial`
    /// is evaluated by the host before the launch; a nested region's cannot be.
    fn why_not(&self, stmt: &Stmt, root: bool) -> Option<String> {
        let (initial, body) = match stmt {
            Stmt::Iterate(iterate) => match &iterate.until {
                Until::Empty { initial, .. } => (initial.is_some(), &iterate.body),
                Until::Condition { .. } => (false, &iterate.body),
            },
            Stmt::Pipe(pipe) => (pipe.initial.is_some(), &pipe.body),
            _ => return Some("it is not a region".into()),
        };
        if initial && !root {
            return Some(format!("the region {} inside it starts a worklist of its own", region_name(stmt)));
        }
        if let Some(why) = self.exprs_why_not(stmt) {
            return Some(why);
        }
        self.block_why_not(body)
    }

    fn block_why_not(&self, block: &Block) -> Option<String> {
        for stmt in block {
            let why = match stmt {
                Stmt::Print(_) => Some("it prints".to_string()),
                Stmt::Return(_) => Some("it returns from `main`".to_string()),
                Stmt::Iterate(_) | Stmt::Pipe(_) => {
                    // A nested region: its own header and body, checked as a non-root.
                    self.why_not(stmt, false)
                }
                _ => self.exprs_why_not(stmt).or_else(|| stmt.blocks().into_iter().find_map(|b| self.block_why_not(b))),
            };
            if why.is_some() {
                return why;
            }
        }
        None
    }

    /// Why a statement's own expressions (not its blocks') cannot run on the device.
    fn exprs_why_not(&self, stmt: &Stmt) -> Option<String> {
        let mut why = None;
        if let Stmt::Assign { place, .. } = stmt
            && self.struct_place(place)
        {
            why = Some("it assigns a host variable of struct type".to_string());
        }
        let invoked = match stmt {
            Stmt::Invoke { kernel, .. } => Some(*kernel),
            Stmt::Iterate(iterate) => match &iterate.until {
                Until::Empty { kernel, .. } => Some(*kernel),
                Until::Condition { .. } => None,
            },
            _ => None,
        };
        if let Some(kernel) = invoked
            && claims_elements(&self.module.kernels[kernel.index()])
        {
            why = Some(format!(
                "kernel `{}` claims collection elements (`single`), whose claim words only the host clears",
                self.module.kernels[kernel.index()].name
            ));
        }
        stmt_exprs(stmt, &mut |expr| {
            walk_expr(expr, &mut |e| {
                if why.is_some() {
                    return;
                }
                why = match &e.kind {
                    ExprKind::SetFind { .. } | ExprKind::SetUnion { .. } => {
                        Some("its host code uses union-find sets".to_string())
                    }
                    ExprKind::CollectionAdd { .. } => Some("its host code adds to a collection".to_string()),
                    ExprKind::CollectionCompact(_) => Some("its host code compacts a collection".to_string()),
                    ExprKind::Atomic { .. } => Some("its host code uses an atomic".to_string()),
                    ExprKind::Call(f, _) if self.function_writes(*f) => Some(format!(
                        "its host code calls `{}`, which writes (every thread would)",
                        self.module.functions[f.index()].name
                    )),
                    ExprKind::Load(place) if self.struct_place(place) => {
                        Some("its host code reads a host variable of struct type".to_string())
                    }
                    ExprKind::CollectionLen(_) => None,
                    _ => None,
                };
            })
        });
        why
    }

    /// Whether a place is (a field of) a host local of struct type.
    fn struct_place(&self, place: &Place) -> bool {
        match place {
            Place::Local(id) => matches!(self.module.main.locals[id.index()].ty, Type::Struct(_)),
            Place::Field { base, .. } | Place::Index { base, .. } => self.struct_place(base),
            Place::Property { .. } | Place::ElementField { .. } => false,
        }
    }

    /// Whether function `f` (or one it calls) writes a property, an element or a set, or uses
    /// an atomic.
    fn function_writes(&self, f: FunctionId) -> bool {
        let mut seen = vec![false; self.module.functions.len()];
        let mut pending = vec![f];
        while let Some(f) = pending.pop() {
            if std::mem::replace(&mut seen[f.index()], true) {
                continue;
            }
            let mut writes = false;
            walk_block(&self.module.functions[f.index()].body.block, &mut |stmt| {
                if let Stmt::Assign { place, .. } = stmt
                    && !matches!(root_place(place), Place::Local(_))
                {
                    writes = true;
                }
                stmt_exprs(stmt, &mut |expr| {
                    walk_expr(expr, &mut |e| match &e.kind {
                        ExprKind::Atomic { .. }
                        | ExprKind::SetFind { .. }
                        | ExprKind::SetUnion { .. }
                        | ExprKind::CollectionAdd { .. }
                        | ExprKind::CollectionRemove { .. } => writes = true,
                        ExprKind::Call(g, _) => pending.push(*g),
                        _ => {}
                    })
                });
            });
            if writes {
                return true;
            }
        }
        false
    }
}

/// Whether a kernel has a `single` over collection elements.
fn claims_elements(kernel: &Kernel) -> bool {
    let mut found = false;
    walk_block(&kernel.body.block, &mut |stmt| {
        found |= matches!(stmt, Stmt::Lock { kind: LockKind::Single, elements, .. }
            if elements.first().is_some_and(|e| matches!(e.ty, Type::Element(_))));
    });
    found
}

/// Sets `outlined` on the regions in `marks`.
fn mark(block: &mut Block, marks: &[OutlineId]) {
    for stmt in block {
        match stmt {
            Stmt::Iterate(iterate) => {
                if marks.contains(&iterate.id) {
                    iterate.outlined = true;
                } else {
                    mark(&mut iterate.body, marks);
                }
            }
            Stmt::Pipe(pipe) => {
                if marks.contains(&pipe.id) {
                    pipe.outlined = true;
                } else {
                    mark(&mut pipe.body, marks);
                }
            }
            Stmt::If { then, otherwise, .. } => {
                mark(then, marks);
                mark(otherwise, marks);
            }
            Stmt::While { body, .. } | Stmt::For { body, .. } | Stmt::ForEach { body, .. } => mark(body, marks),
            _ => {}
        }
    }
}

/// The outlined regions of a block: the `iterate` and `pipe` statements outlining marked, not
/// looking inside them (regions do not nest).
pub fn outlined_regions(block: &Block) -> Vec<&Stmt> {
    fn regions<'m>(block: &'m Block, out: &mut Vec<&'m Stmt>) {
        for stmt in block {
            match stmt {
                Stmt::Iterate(iterate) if iterate.outlined => out.push(stmt),
                Stmt::Pipe(pipe) if pipe.outlined => out.push(stmt),
                _ => stmt.blocks().into_iter().for_each(|child| regions(child, out)),
            }
        }
    }
    let mut found = Vec::new();
    regions(block, &mut found);
    found
}

/// The outlined region `id` of a block.
pub fn find_region(block: &Block, id: OutlineId) -> Option<&Stmt> {
    outlined_regions(block).into_iter().find(|stmt| region_id(stmt) == Some(id))
}

/// The kernels one region statement invokes, in id order, each once.
pub fn kernels_of(region: &Stmt) -> Vec<KernelId> {
    let mut kernels = Vec::new();
    let mut visit = |stmt: &Stmt| match stmt {
        Stmt::Invoke { kernel, .. } => kernels.push(*kernel),
        Stmt::Iterate(iterate) => {
            if let Until::Empty { kernel, .. } = &iterate.until {
                kernels.push(*kernel);
            }
        }
        _ => {}
    };
    visit(region);
    region.blocks().into_iter().for_each(|child| walk_block(child, &mut visit));
    kernels.sort();
    kernels.dedup();
    kernels
}

/// Which kernels (by index) an outlined region invokes: their phases run inside a control
/// kernel, where every thread of the grid can meet at a grid barrier.
pub fn region_kernels(module: &Module) -> Vec<bool> {
    let mut invoked = vec![false; module.kernels.len()];
    for region in outlined_regions(&module.main.block) {
        for kernel in kernels_of(region) {
            invoked[kernel.index()] = true;
        }
    }
    invoked
}
