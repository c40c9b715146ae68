//! The IR's invariants, checked.
//!
//! Lowering and every pass must produce a module that validates; the emitters rely on it and do
//! not check again. The rules: ids are in range; every expression's type is what its operands
//! make it; parallel loops, pushes, retries, reductions and locks appear only in kernels;
//! invocations, `Iterate` and `Pipe` only in `main`; `print` only in `main` outside `Iterate` and
//! `Pipe`; `break` only in a sequential loop; each push site of a kernel is used exactly once; a
//! kernel's body is a sequence of parallel loops (phases); `retry` appears only in loops over
//! nodes; host code does not touch collection elements' fields; a lock statement locks nodes,
//! or elements of one collection.

use crate::ir::*;

/// A broken invariant: where, and what.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("invalid IR in {location}: {message}")]
pub struct ValidationError {
    pub location: String,
    pub message: String,
}

/// Checks every invariant of `module`; returns the first one broken.
pub fn validate(module: &Module) -> Result<(), ValidationError> {
    let fail = |location: String, message: String| ValidationError { location, message };
    for (i, property) in module.properties.iter().enumerate() {
        let is_number = property.ty.scalar().is_some_and(|s| s.is_integer() || s.is_float());
        if property.is_weight && (property.owner != Owner::Edge || !is_number) {
            return Err(fail(
                format!("property {}", property.name),
                "only a numeric edge property can hold the weights".into(),
            ));
        }
        check_type(module, property.ty).map_err(|m| fail(format!("property #{i}"), m))?;
    }
    for &output in &module.outputs {
        match module.properties.get(output.index()) {
            Some(p) if p.owner == Owner::Node || p.ty == Type::BOOL => {}
            _ => {
                return Err(fail(
                    "outputs".into(),
                    format!("output #{} is not a node property or a bool edge property", output.0),
                ));
            }
        }
    }
    for &(property, function) in &module.merge_functions {
        let (Some(p), Some(f)) = (module.properties.get(property.index()), module.functions.get(function.index()))
        else {
            return Err(fail("update functions".into(), "a property or function that does not exist".into()));
        };
        let params: Vec<Type> = f.body.locals.iter().take(f.params as usize).map(|l| l.ty).collect();
        if p.owner != Owner::Node || p.ty.scalar().is_none() || params != [p.ty, p.ty] || f.result != p.ty {
            return Err(fail(
                format!("the update function of {}", p.name),
                format!("`{}` is not (current: T, incoming: T) -> T of the node property's scalar type", f.name),
            ));
        }
    }
    for (i, collection) in module.collections.iter().enumerate() {
        if collection.element.index() >= module.structs.len() {
            return Err(fail(format!("collection #{i}"), format!("struct #{} does not exist", collection.element.0)));
        }
    }
    for &output in &module.collection_outputs {
        if output.index() >= module.collections.len() {
            return Err(fail("outputs".into(), format!("collection #{} does not exist", output.0)));
        }
    }
    for &input in &module.collection_inputs {
        if input.index() >= module.collections.len() {
            return Err(fail("inputs".into(), format!("collection #{} does not exist", input.0)));
        }
    }
    for &input in &module.property_inputs {
        if module.properties.get(input.index()).is_none_or(|p| p.owner != Owner::Node) {
            return Err(fail("inputs".into(), format!("property #{} is not a node property", input.0)));
        }
    }
    for function in &module.functions {
        let checker = Checker::new(module, &function.body, Role::Function(function.result), &function.name);
        checker.params(function.params)?;
        checker.block(&function.body.block, Scope::default())?;
    }
    for kernel in &module.kernels {
        let checker = Checker::new(module, &kernel.body, Role::Kernel(kernel), &kernel.name);
        checker.params(kernel.params)?;
        // Each top-level loop is one parallel phase; there is no code between phases.
        if kernel.body.block.iter().any(|stmt| !matches!(stmt, Stmt::ForAll(_))) {
            return Err(fail(format!("kernel {}", kernel.name), "a kernel's body holds only parallel loops".into()));
        }
        checker.block(&kernel.body.block, Scope::default())?;
        let mut used = vec![0u32; kernel.push_sites.len()];
        let mut bad_site = None;
        walk_block(&kernel.body.block, &mut |stmt| {
            if let Stmt::Push { site, .. } = stmt {
                match used.get_mut(site.index()) {
                    Some(count) => *count += 1,
                    None => bad_site = Some(*site),
                }
            }
        });
        if let Some(site) = bad_site {
            return Err(fail(
                format!("kernel {}", kernel.name),
                format!("push site #{} has no entry in push_sites", site.0),
            ));
        }
        if let Some(site) = used.iter().position(|&count| count != 1) {
            return Err(fail(
                format!("kernel {}", kernel.name),
                format!("push site #{site} is used {} times; each site must be used once", used[site]),
            ));
        }
    }
    let checker = Checker::new(module, &module.main, Role::Host(module.main_result), "main");
    checker.block(&module.main.block, Scope::default())
}

fn check_type(module: &Module, ty: Type) -> Result<(), String> {
    match ty {
        Type::Struct(id) if id.index() >= module.structs.len() => Err(format!("struct #{} does not exist", id.0)),
        Type::Element(id) if id.index() >= module.collections.len() => {
            Err(format!("collection #{} does not exist", id.0))
        }
        Type::Array(id) => match module.arrays.get(id.index()) {
            None => Err(format!("array type #{} does not exist", id.0)),
            Some(a) if a.len == 0 || matches!(a.element, Type::Array(_) | Type::Struct(_) | Type::Unit) => {
                Err(format!("array type #{} holds {} x {}", id.0, a.len, a.element))
            }
            Some(a) => check_type(module, a.element),
        },
        _ => Ok(()),
    }
}

/// What kind of body is being checked.
#[derive(Clone, Copy)]
enum Role<'m> {
    Function(Type),
    Kernel(&'m Kernel),
    Host(Type),
}

/// Where in the body a statement is.
#[derive(Clone, Copy, Default)]
struct Scope {
    /// Inside a sequential loop (of the current parallel item, if any).
    in_loop: bool,
    /// Inside a `ForAll`.
    in_forall: bool,
    /// Inside an `Iterate` or `Pipe`.
    in_region: bool,
    /// Inside a top-level parallel loop over the worklist or all nodes, whose items (of this
    /// type) can be retried.
    retry_items: Option<Type>,
}

struct Checker<'m> {
    module: &'m Module,
    body: &'m Body,
    role: Role<'m>,
    name: &'m str,
}

type Check = Result<(), ValidationError>;

impl<'m> Checker<'m> {
    fn new(module: &'m Module, body: &'m Body, role: Role<'m>, name: &'m str) -> Self {
        Checker { module, body, role, name }
    }

    fn fail<T>(&self, message: impl Into<String>) -> Result<T, ValidationError> {
        let kind = match self.role {
            Role::Function(_) => "function",
            Role::Kernel(_) => "kernel",
            Role::Host(_) => "host function",
        };
        Err(ValidationError { location: format!("{kind} {}", self.name), message: message.into() })
    }

    fn params(&self, count: u32) -> Check {
        if count as usize > self.body.locals.len() {
            return self.fail(format!("{count} parameters but only {} locals", self.body.locals.len()));
        }
        Ok(())
    }

    fn local(&self, id: LocalId) -> Result<Type, ValidationError> {
        match self.body.locals.get(id.index()) {
            Some(local) => Ok(local.ty),
            None => self.fail(format!("local #{} does not exist", id.0)),
        }
    }

    fn is_kernel(&self) -> bool {
        matches!(self.role, Role::Kernel(_))
    }

    fn is_host(&self) -> bool {
        matches!(self.role, Role::Host(_))
    }

    fn expect(&self, what: &str, expr: &Expr, ty: Type) -> Check {
        self.expr(expr)?;
        if expr.ty != ty {
            return self.fail(format!("{what} has type {}, expected {ty}", expr.ty));
        }
        Ok(())
    }

    fn block(&self, block: &Block, scope: Scope) -> Check {
        block.iter().try_for_each(|stmt| self.stmt(stmt, scope))
    }

    fn stmt(&self, stmt: &Stmt, scope: Scope) -> Check {
        let looped = Scope { in_loop: true, ..scope };
        match stmt {
            Stmt::Assign { place, value } => {
                let ty = self.place(place)?;
                self.expect("the assigned value", value, ty)
            }
            Stmt::If { cond, then, otherwise, .. } => {
                self.expect("an `if` condition", cond, Type::BOOL)?;
                self.block(then, scope)?;
                self.block(otherwise, scope)
            }
            Stmt::While { cond, body, .. } => {
                self.expect("a `while` condition", cond, Type::BOOL)?;
                self.block(body, looped)
            }
            Stmt::For { var, start, end, body } => {
                let ty = self.local(*var)?;
                if !ty.scalar().is_some_and(Scalar::is_integer) {
                    return self.fail(format!("a range loop variable has type {ty}, expected an integer"));
                }
                self.expect("a range start", start, ty)?;
                self.expect("a range end", end, ty)?;
                self.block(body, looped)
            }
            Stmt::ForEach { var, adjacency, node, body, .. } => {
                self.expect_local(*var, adjacency.item())?;
                self.expect("the node of an adjacency loop", node, Type::Node)?;
                self.block(body, looped)
            }
            Stmt::ForAll(forall) => self.forall(forall, scope),
            Stmt::Push { value, .. } => {
                self.kernel_only(stmt, scope)?;
                self.expect("a worklist item", value, self.worklist_item())
            }
            Stmt::Retry { value } => {
                self.kernel_only(stmt, scope)?;
                let Some(items) = scope.retry_items else {
                    return self.fail("`retry` in a loop whose items are neither the worklist's nor all nodes");
                };
                self.expect("a retried item", value, items)
            }
            Stmt::Reduce { value } => {
                self.kernel_only(stmt, scope)?;
                match self.role {
                    Role::Kernel(Kernel { reduction: Some((_, ty)), .. }) => self.expect("a reduced value", value, *ty),
                    _ => self.fail("`reduce` in a kernel without a reduction result"),
                }
            }
            Stmt::Lock { kind: lock, elements, body, otherwise } => {
                self.kernel_only(stmt, scope)?;
                if elements.is_empty() {
                    return self.fail("a lock statement needs at least one element");
                }
                if let [Expr { kind: ExprKind::ArrayPrefix { array, count }, ty }] = elements.as_slice() {
                    if *lock != LockKind::Exclusive {
                        return self.fail("an array's items locked by a lock other than `exclusive`");
                    }
                    self.expect("a locked array", array, *ty)?;
                    self.expr(count)?;
                    if !count.ty.scalar().is_some_and(Scalar::is_integer) {
                        return self.fail(format!("an item count of type {}", count.ty));
                    }
                    let Type::Array(id) = ty else { return self.fail("locking the items of a non-array") };
                    let element = self.module.arrays.get(id.index()).map(|a| a.element);
                    if !matches!(element, Some(Type::Node | Type::Element(_))) {
                        return self.fail("locking the items of an array that holds neither nodes nor elements");
                    }
                    self.block(body, scope)?;
                    return self.block(otherwise, scope);
                }
                // All nodes, or all elements of one collection: each kind has its own lock words.
                let kind = elements[0].ty;
                if !matches!(kind, Type::Node | Type::Element(_)) {
                    return self.fail(format!("a locked element of type {kind}, expected a node or an element"));
                }
                for element in elements {
                    self.expect("a locked element", element, kind)?;
                }
                self.block(body, scope)?;
                self.block(otherwise, scope)
            }
            Stmt::Break | Stmt::Continue => {
                if scope.in_loop || (matches!(stmt, Stmt::Continue) && scope.in_forall) {
                    Ok(())
                } else {
                    self.fail("`break` or `continue` outside a loop")
                }
            }
            Stmt::Return(value) => {
                let expected = match self.role {
                    Role::Function(ty) | Role::Host(ty) => ty,
                    Role::Kernel(_) => return self.fail("`return` in a kernel"),
                };
                match (value, expected) {
                    (None, Type::Unit) => Ok(()),
                    (Some(value), ty) if ty != Type::Unit => self.expect("the returned value", value, ty),
                    _ => self.fail(format!("a `return` that does not match the result type {expected}")),
                }
            }
            Stmt::Eval(expr) => self.expr(expr),
            Stmt::Invoke { kernel, args, result } => {
                self.host_only("an invocation")?;
                let kernel = self.invocation(*kernel, args)?;
                match (kernel.reduction, result) {
                    (Some((_, ty)), Some(local)) => self.expect_local(*local, ty),
                    (None, Some(_)) => self.fail(format!("kernel {} has no result to receive", kernel.name)),
                    _ => Ok(()),
                }
            }
            Stmt::Iterate(iterate) => {
                self.host_only("`iterate`")?;
                match &iterate.until {
                    Until::Empty { kernel, args, initial } => {
                        let kernel = self.invocation(*kernel, args)?;
                        if !kernel.uses_worklist() {
                            return self.fail(format!(
                                "`iterate` until empty over kernel {}, which has no worklist",
                                kernel.name
                            ));
                        }
                        self.initial(initial.as_ref())?;
                    }
                    Until::Condition { cond, .. } => self.expect("an `iterate` condition", cond, Type::BOOL)?,
                }
                self.block(&iterate.body, Scope { in_region: true, in_loop: true, ..scope })
            }
            Stmt::Pipe(pipe) => {
                self.host_only("`pipe`")?;
                if pipe.unroll == 0 || (pipe.unroll > 1 && (pipe.once || !pipe.outlined)) {
                    return self.fail(format!(
                        "pipe#{} is unrolled {} times, but only an outlined pipe loop may be unrolled, at least once",
                        pipe.id.0, pipe.unroll
                    ));
                }
                self.initial(pipe.initial.as_ref())?;
                self.block(&pipe.body, Scope { in_region: true, in_loop: !pipe.once || scope.in_loop, ..scope })
            }
            Stmt::Print(args) => {
                self.host_only("`print`")?;
                if scope.in_region {
                    return self.fail("`print` inside `iterate` or `pipe`");
                }
                args.iter().try_for_each(|arg| match arg {
                    PrintArg::Text(_) => Ok(()),
                    PrintArg::Value(expr) => self.expr(expr),
                })
            }
        }
    }

    fn expect_local(&self, id: LocalId, ty: Type) -> Check {
        let actual = self.local(id)?;
        if actual != ty {
            return self.fail(format!("local #{} has type {actual}, expected {ty}", id.0));
        }
        Ok(())
    }

    fn kernel_only(&self, stmt: &Stmt, scope: Scope) -> Check {
        if !self.is_kernel() || !scope.in_forall {
            let what = match stmt {
                Stmt::Push { .. } => "`push`",
                Stmt::Retry { .. } => "`retry`",
                Stmt::Reduce { .. } => "`reduce`",
                _ => "a lock statement",
            };
            return self.fail(format!("{what} outside a kernel's parallel loop"));
        }
        Ok(())
    }

    /// What the kernel being checked holds in its worklist (nodes outside kernels).
    fn worklist_item(&self) -> Type {
        match self.role {
            Role::Kernel(kernel) => kernel.worklist_item(),
            _ => Type::Node,
        }
    }

    fn host_only(&self, what: &str) -> Check {
        if !self.is_host() {
            return self.fail(format!("{what} outside `main`"));
        }
        Ok(())
    }

    fn forall(&self, forall: &ForAll, scope: Scope) -> Check {
        if !self.is_kernel() {
            return self.fail("a parallel loop outside a kernel");
        }
        let item = match &forall.space {
            Space::Worklist => self.worklist_item(),
            Space::AllNodes => Type::Node,
            Space::AllEdges => Type::Edge,
            Space::Range(start, end) => {
                self.expr(start)?;
                if !start.ty.scalar().is_some_and(Scalar::is_integer) {
                    return self.fail(format!("a parallel range over {}, expected an integer type", start.ty));
                }
                self.expect("a range end", end, start.ty)?;
                start.ty
            }
            Space::Adjacent(adjacency, node) => {
                self.expect("the node of an adjacency loop", node, Type::Node)?;
                adjacency.item()
            }
            Space::Collection(id) => {
                self.collection(*id)?;
                Type::Element(*id)
            }
        };
        let nested = matches!(forall.space, Space::Adjacent(..));
        if !nested && scope.in_forall {
            return self.fail("only a node's edges or neighbours can be iterated by a nested parallel loop");
        }
        if nested && !scope.in_forall {
            return self.fail("a parallel loop over a node's edges must be nested in another parallel loop");
        }
        self.expect_local(forall.var, item)?;
        if let Some(filter) = &forall.filter {
            self.expect("a `where` condition", filter, Type::BOOL)?;
        }
        let retry_items = match forall.space {
            _ if nested => scope.retry_items,
            Space::Worklist | Space::AllNodes => Some(item),
            _ => None,
        };
        self.block(&forall.body, Scope { in_forall: true, in_loop: false, retry_items, ..scope })
    }

    fn invocation(&self, kernel: KernelId, args: &[Expr]) -> Result<&'m Kernel, ValidationError> {
        let Some(kernel) = self.module.kernels.get(kernel.index()) else {
            return self.fail(format!("kernel #{} does not exist", kernel.0));
        };
        self.arguments(&kernel.name, &kernel.body, kernel.params, args)?;
        Ok(kernel)
    }

    fn arguments(&self, callee: &str, body: &Body, params: u32, args: &[Expr]) -> Check {
        if args.len() != params as usize {
            return self.fail(format!("{callee} takes {params} arguments, given {}", args.len()));
        }
        for (arg, param) in args.iter().zip(&body.locals) {
            self.expect(&format!("an argument of {callee}"), arg, param.ty)?;
        }
        Ok(())
    }

    fn initial(&self, initial: Option<&Initial>) -> Check {
        match initial {
            Some(Initial::Items(items)) => {
                items.iter().try_for_each(|item| self.expect("an initial item", item, Type::Node))
            }
            _ => Ok(()),
        }
    }

    fn place(&self, place: &Place) -> Result<Type, ValidationError> {
        match place {
            Place::Local(id) => self.local(*id),
            Place::Property { property, element } => {
                let Some(decl) = self.module.properties.get(property.index()) else {
                    return self.fail(format!("property #{} does not exist", property.0));
                };
                let owner = if decl.owner == Owner::Node { Type::Node } else { Type::Edge };
                self.expect(&format!("the element of property {}", decl.name), element, owner)?;
                Ok(decl.ty)
            }
            Place::ElementField { collection, element, field } => {
                if self.is_host() {
                    return self.fail("a collection element's field in host code");
                }
                let decl = self.collection(*collection)?;
                self.expect(&format!("an element of collection {}", decl.name), element, Type::Element(*collection))?;
                self.field(Type::Struct(decl.element), *field)
            }
            Place::Field { base, field } => {
                let ty = self.place(base)?;
                self.field(ty, *field)
            }
            Place::Index { base, index } => {
                if self.is_host() {
                    return self.fail("an array in host code");
                }
                let Type::Array(id) = self.place(base)? else {
                    return self.fail("indexing a place that is not an array");
                };
                let Some(decl) = self.module.arrays.get(id.index()) else {
                    return self.fail(format!("array type #{} does not exist", id.0));
                };
                self.expr(index)?;
                if !index.ty.scalar().is_some_and(Scalar::is_integer) {
                    return self.fail(format!("an array index of type {}", index.ty));
                }
                Ok(decl.element)
            }
        }
    }

    fn collection(&self, id: CollectionId) -> Result<&'m CollectionDecl, ValidationError> {
        match self.module.collections.get(id.index()) {
            Some(decl) => Ok(decl),
            None => self.fail(format!("collection #{} does not exist", id.0)),
        }
    }

    fn field(&self, ty: Type, field: u32) -> Result<Type, ValidationError> {
        let Type::Struct(id) = ty else {
            return self.fail(format!("field #{field} of a value of type {ty}"));
        };
        match self.module.structs.get(id.index()).and_then(|s| s.fields.get(field as usize)) {
            Some((_, ty)) => Ok(*ty),
            None => self.fail(format!("struct #{} has no field #{field}", id.0)),
        }
    }

    fn expr(&self, expr: &Expr) -> Check {
        check_type(self.module, expr.ty).or_else(|m| self.fail(m))?;
        let ty = expr.ty;
        let want = |expected: Type| -> Check {
            if ty == expected {
                Ok(())
            } else {
                self.fail(format!("an expression of type {ty} where {expected} is meant"))
            }
        };
        match &expr.kind {
            ExprKind::ArrayPrefix { .. } => self.fail("an array's first items outside `exclusive`"),
            ExprKind::Zeroed => {
                if !matches!(ty, Type::Array(_)) {
                    return self.fail(format!("a zeroed value of type {ty}"));
                }
                Ok(())
            }
            ExprKind::Const(c) => {
                let ok = match c {
                    Const::Bool(_) => ty == Type::BOOL,
                    Const::Int(_) => {
                        matches!(ty, Type::Node | Type::Edge) || ty.scalar().is_some_and(Scalar::is_integer)
                    }
                    Const::Float(_) => ty.scalar().is_some_and(Scalar::is_float),
                    Const::Inf => matches!(ty, Type::Node | Type::Edge) || ty.is_numeric(),
                };
                if !ok {
                    return self.fail(format!("constant {c:?} of type {ty}"));
                }
                Ok(())
            }
            ExprKind::Load(place) => want(self.place(place)?),
            ExprKind::Param(id) => match self.module.params.get(id.index()) {
                Some(param) => want(param.ty),
                None => self.fail(format!("param #{} does not exist", id.0)),
            },
            ExprKind::NumNodes | ExprKind::NodeIds => want(Type::U32),
            ExprKind::NumEdges | ExprKind::EdgeIds => want(Type::U64),
            ExprKind::HasEdge(edge) => {
                self.expect("the edge", edge, Type::Edge)?;
                want(Type::BOOL)
            }
            ExprKind::EdgeSource(edge) | ExprKind::EdgeTarget(edge) => {
                self.expect("an edge", edge, Type::Edge)?;
                want(Type::Node)
            }
            ExprKind::Degree { node, .. } => {
                self.expect("a node", node, Type::Node)?;
                want(Type::U32)
            }
            ExprKind::Neighbor { node, index, .. } => {
                self.expect("a node", node, Type::Node)?;
                self.expect("a neighbour index", index, Type::U32)?;
                want(Type::Node)
            }
            ExprKind::Unary(op, operand) => {
                self.expr(operand)?;
                let ok = match op {
                    UnaryOp::Neg => operand.ty.is_numeric(),
                    UnaryOp::Not => operand.ty == Type::BOOL || operand.ty.scalar().is_some_and(Scalar::is_integer),
                };
                if !ok {
                    return self.fail(format!("{op:?} of a value of type {}", operand.ty));
                }
                want(operand.ty)
            }
            ExprKind::Binary(op, left, right) => self.binary(*op, left, right, ty),
            ExprKind::Cast(value) => {
                self.expr(value)?;
                let castable = |t: Type| t.is_numeric() || matches!(t, Type::Node | Type::Edge);
                // An element converts to its index; nothing converts to an element.
                let from_element = matches!(value.ty, Type::Element(_)) && ty == Type::U32;
                if !from_element && (!castable(value.ty) || !castable(ty)) {
                    return self.fail(format!("a cast from {} to {ty}", value.ty));
                }
                Ok(())
            }
            ExprKind::Call(id, args) => {
                let Some(function) = self.module.functions.get(id.index()) else {
                    return self.fail(format!("function #{} does not exist", id.0));
                };
                self.arguments(&function.name, &function.body, function.params, args)?;
                want(function.result)
            }
            ExprKind::Builtin(builtin @ (Builtin::Orient2d | Builtin::InCircle), args) => {
                if self.is_host() {
                    return self.fail(format!("{builtin:?} in host code"));
                }
                let arity = if *builtin == Builtin::Orient2d { 6 } else { 8 };
                if args.len() != arity {
                    return self.fail(format!("{builtin:?} takes {arity} arguments, given {}", args.len()));
                }
                for arg in args {
                    self.expect(&format!("an argument of {builtin:?}"), arg, Type::F64)?;
                }
                want(Type::F64)
            }
            ExprKind::Builtin(builtin, args) => {
                let arity = if matches!(builtin, Builtin::Min | Builtin::Max) { 2 } else { 1 };
                if args.len() != arity {
                    return self.fail(format!("{builtin:?} takes {arity} arguments, given {}", args.len()));
                }
                for arg in args {
                    self.expect(&format!("an argument of {builtin:?}"), arg, ty)?;
                }
                let ok = match builtin {
                    Builtin::Sqrt | Builtin::Ln | Builtin::Exp => ty.scalar().is_some_and(Scalar::is_float),
                    _ => ty.is_numeric(),
                };
                if !ok {
                    return self.fail(format!("{builtin:?} of a value of type {ty}"));
                }
                Ok(())
            }
            ExprKind::Atomic { op, place, operands } => {
                if self.is_host() {
                    return self.fail("an atomic operation in host code");
                }
                if matches!(place, Place::Local(_)) {
                    return self.fail("an atomic operation on a local variable");
                }
                let target = self.place(place)?;
                let arithmetic = matches!(op, AtomicOp::Add | AtomicOp::Sub);
                let bitwise = matches!(op, AtomicOp::And | AtomicOp::Or);
                let integer = target.scalar().is_some_and(Scalar::is_integer);
                let ok = match target {
                    Type::BOOL => !arithmetic,
                    Type::Node | Type::Edge | Type::Element(_) => *op == AtomicOp::Cas,
                    _ if bitwise => integer,
                    _ => target.is_numeric(),
                };
                if !ok {
                    return self.fail(format!("atomic {} on a value of type {target}", op.name()));
                }
                if operands.len() != op.operands() {
                    return self.fail(format!("atomic {} takes {} operands", op.name(), op.operands()));
                }
                for operand in operands {
                    self.expect(&format!("an operand of atomic {}", op.name()), operand, target)?;
                }
                want(Type::BOOL)
            }
            ExprKind::SetFind { set, node } => {
                self.set(*set)?;
                self.expect("a node", node, Type::Node)?;
                want(Type::Node)
            }
            ExprKind::SetUnion { set, a, b } => {
                self.set(*set)?;
                self.expect("a node", a, Type::Node)?;
                self.expect("a node", b, Type::Node)?;
                want(Type::BOOL)
            }
            ExprKind::Struct(id, fields) => {
                let Some(decl) = self.module.structs.get(id.index()) else {
                    return self.fail(format!("struct #{} does not exist", id.0));
                };
                if fields.len() != decl.fields.len() {
                    return self.fail(format!(
                        "struct {} has {} fields, given {}",
                        decl.name,
                        decl.fields.len(),
                        fields.len()
                    ));
                }
                for (value, (name, ty)) in fields.iter().zip(&decl.fields) {
                    self.expect(&format!("field {name}"), value, *ty)?;
                }
                want(Type::Struct(*id))
            }
            ExprKind::Field(base, field) => {
                self.expr(base)?;
                want(self.field(base.ty, *field)?)
            }
            ExprKind::CollectionAdd { collection, value } => {
                let decl = self.collection(*collection)?;
                self.expect(&format!("an element of collection {}", decl.name), value, Type::Struct(decl.element))?;
                want(Type::Element(*collection))
            }
            ExprKind::CollectionLen(id) => {
                self.collection(*id)?;
                want(Type::U32)
            }
            ExprKind::CollectionCompact(id) => {
                if !self.is_host() {
                    return self.fail("compacting a collection outside host code");
                }
                self.collection(*id)?;
                want(Type::U32)
            }
            ExprKind::CollectionRemove { collection, element } | ExprKind::CollectionHas { collection, element } => {
                if self.is_host() {
                    return self.fail("removing or testing a collection element in host code");
                }
                let decl = self.collection(*collection)?;
                self.expect(&format!("an element of collection {}", decl.name), element, Type::Element(*collection))?;
                want(Type::BOOL)
            }
            ExprKind::AddEdge { src, dst, weight } => {
                let Some(growth) = &self.module.growth else {
                    return self.fail("an edge added in a program without the graph's growth declarations");
                };
                if self.is_host() {
                    return self.fail("adding an edge in host code");
                }
                self.expect("the new edge's source", src, Type::Node)?;
                self.expect("the new edge's head", dst, Type::Node)?;
                if let Some(weight) = weight {
                    let bound = growth
                        .edge_fields
                        .iter()
                        .find(|(p, _)| self.module.properties.get(p.index()).is_some_and(|p| p.is_weight));
                    let Some((property, _)) = bound else {
                        return self.fail("a weight given to an added edge, with no property bound to weights");
                    };
                    self.expect("the new edge's weight", weight, self.module.properties[property.index()].ty)?;
                }
                want(Type::Edge)
            }
            ExprKind::AddNode => {
                if self.module.growth.as_ref().is_none_or(|g| g.nodes.is_none()) {
                    return self.fail("a node added in a program without the added nodes' collection");
                }
                if self.is_host() {
                    return self.fail("adding a node in host code");
                }
                want(Type::Node)
            }
            ExprKind::RemoveNode(node) | ExprKind::HasNode(node) => {
                let removing = matches!(expr.kind, ExprKind::RemoveNode(_));
                let machinery = |g: &GraphGrowth| g.node_removed.is_some() && g.nodes.is_some() && g.removed.is_some();
                if removing && !self.module.growth.as_ref().is_some_and(machinery) {
                    return self
                        .fail("a node removed in a program without its removal marks, added nodes and edge marks");
                }
                // Host code looks nodes up only in the loops over every node (`G.has_node`
                // itself is a kernel's: the language refuses it in host code).
                if removing && self.is_host() {
                    return self.fail("removing a node in host code");
                }
                self.expect("the node", node, Type::Node)?;
                want(Type::BOOL)
            }
            ExprKind::RemoveEdge(edge) => {
                if self.module.growth.as_ref().is_none_or(|g| g.removed.is_none()) {
                    return self.fail("an edge removed in a program without the removal marks");
                }
                if self.is_host() {
                    return self.fail("removing an edge in host code");
                }
                self.expect("the removed edge", edge, Type::Edge)?;
                want(Type::BOOL)
            }
        }
    }

    fn set(&self, set: SetId) -> Check {
        if set.index() >= self.module.sets.len() {
            return self.fail(format!("set #{} does not exist", set.0));
        }
        Ok(())
    }

    fn binary(&self, op: BinaryOp, left: &Expr, right: &Expr, ty: Type) -> Check {
        self.expr(left)?;
        self.expr(right)?;
        let operand = left.ty;
        let integer = operand.scalar().is_some_and(Scalar::is_integer);
        let (ok, result) = match op {
            BinaryOp::Shl | BinaryOp::Shr => (integer && right.ty.scalar().is_some_and(Scalar::is_integer), operand),
            _ if right.ty != operand => {
                return self.fail(format!("`{}` between {operand} and {}", op.symbol(), right.ty));
            }
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div => (operand.is_numeric(), operand),
            BinaryOp::Rem => (integer, operand),
            BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor => (integer || operand == Type::BOOL, operand),
            BinaryOp::And | BinaryOp::Or => (operand == Type::BOOL, Type::BOOL),
            BinaryOp::Eq | BinaryOp::Ne => (!matches!(operand, Type::Struct(_) | Type::Unit), Type::BOOL),
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => {
                (operand.is_numeric() || matches!(operand, Type::Node | Type::Edge), Type::BOOL)
            }
        };
        if !ok {
            return self.fail(format!("`{}` on values of type {operand}", op.symbol()));
        }
        if ty != result {
            return self.fail(format!("`{}` gives {result}, but the expression says {ty}", op.symbol()));
        }
        Ok(())
    }
}
