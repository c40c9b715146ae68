//! Statements and whole bodies: functions, kernels, the property initialisers and `main`.

use grail_ir::{
    self as ir, Aggregation, Expr, ExprKind, ForAll, FunctionId, Initial, KernelId, LockKind, OutlineId, Owner, Place,
    PrintArg, PushSite, Schedule, Space, Stmt, Type, Until,
};

use super::expr::{Iter, Lv, assign_op};
use super::scope::{BodyCx, BodyKind, Flow};
use super::{Global, Lowerer, types};
use crate::ast;
use crate::diagnostics::Diagnostic;
use crate::span::Span;

/// Every name a block declares (`let`, loop variables), with where, nested blocks included.
fn collect_declared(block: &ast::Block, out: &mut Vec<(String, Span)>) {
    for stmt in &block.stmts {
        collect_stmt(stmt, out);
    }
}

fn collect_stmt(stmt: &ast::Stmt, out: &mut Vec<(String, Span)>) {
    use ast::StmtKind as S;
    match &stmt.kind {
        S::Let { name, .. } => out.push((name.name.clone(), name.span)),
        S::For { var, body, .. } | S::ForAll { var, body, .. } => {
            out.push((var.name.clone(), var.span));
            collect_declared(body, out);
        }
        S::If { then, otherwise, .. } => {
            collect_declared(then, out);
            match otherwise {
                Some(ast::Else::Block(block)) => collect_declared(block, out),
                Some(ast::Else::If(stmt)) => collect_stmt(stmt, out),
                None => {}
            }
        }
        S::While { body, .. } | S::IterateLoop { body, .. } | S::Pipe { body, .. } => collect_declared(body, out),
        S::Iterate { body: Some(body), .. } => collect_declared(body, out),
        S::Atomic { body, otherwise, .. }
        | S::Exclusive { body, otherwise, .. }
        | S::Single { body, otherwise, .. } => {
            collect_declared(body, out);
            if let Some(otherwise) = otherwise {
                collect_declared(otherwise, out);
            }
        }
        _ => {}
    }
}

/// Whether every path through the block ends in `return`.
fn always_returns(block: &ast::Block) -> bool {
    block.stmts.iter().any(stmt_returns)
}

fn stmt_returns(stmt: &ast::Stmt) -> bool {
    match &stmt.kind {
        ast::StmtKind::Return(_) => true,
        ast::StmtKind::If { then, otherwise: Some(otherwise), .. } => {
            always_returns(then)
                && match otherwise {
                    ast::Else::Block(block) => always_returns(block),
                    ast::Else::If(stmt) => stmt_returns(stmt),
                }
        }
        _ => false,
    }
}

/// The span of a block's closing brace.
fn closing(block: &ast::Block) -> Span {
    Span { start: block.span.end.saturating_sub(1).max(block.span.start), ..block.span }
}

impl<'a> Lowerer<'a> {
    fn enter(&mut self, kind: BodyKind, block: &ast::Block) {
        self.body = BodyCx::new(kind);
        collect_declared(block, &mut self.body.declared);
    }

    fn leave(&mut self) -> BodyCx {
        std::mem::replace(&mut self.body, BodyCx::new(BodyKind::Const))
    }

    pub(super) fn function(&mut self, id: FunctionId) -> Option<ir::Function> {
        let decl = &self.functions[id.index()];
        let (ast, result) = (decl.ast, decl.result);
        let params = decl.sig.params.clone();
        self.enter(BodyKind::Function { id, result }, &ast.body);
        for (name, span, ty) in &params {
            self.body.declare(name, *ty, false, *span, false);
        }
        let block = self.block(&ast.body, Flow::default());
        if let Some(ty) = result.filter(|t| *t != Type::Unit)
            && !always_returns(&ast.body)
        {
            let message = format!("function `{}` may end without returning a `{}`", ast.name.name, self.type_name(ty));
            let diagnostic = Diagnostic::error(message, closing(&ast.body))
                .with_label(ast.name.span, "declared to return a value")
                .with_note("end every path with `return value;`");
            self.report(diagnostic);
        }
        let body = self.leave();
        Some(ir::Function {
            name: ast.name.name.clone(),
            params: params.len() as u32,
            result: result?,
            body: ir::Body { locals: body.locals, block },
        })
    }

    pub(super) fn kernel(&mut self, id: KernelId) -> Option<ir::Kernel> {
        let decl = &self.kernels[id.index()];
        let (ast, reduction) = (decl.ast, decl.reduction);
        let params = decl.sig.params.clone();
        self.enter(BodyKind::Kernel { reduction }, &ast.body);
        for (name, span, ty) in &params {
            self.body.declare(name, *ty, false, *span, true);
        }
        let mut block = Vec::new();
        self.body.push_scope();
        for stmt in &ast.body.stmts {
            if let ast::StmtKind::ForAll { var, ty, space, filter, body } = &stmt.kind {
                self.forall(var, ty.as_ref(), space, filter.as_ref(), body, Flow::default(), &mut block);
            } else {
                let diagnostic = Diagnostic::error("a kernel's body holds only `forall` loops", stmt.span)
                    .with_note("each top-level `forall` is one parallel phase; move this statement into one");
                self.report(diagnostic);
            }
        }
        self.body.pop_scope();
        let body = self.leave();
        let reduction = match reduction {
            Some((op, ty)) => Some((op, ty?)),
            None => None,
        };
        Some(ir::Kernel {
            name: ast.name.name.clone(),
            params: params.len() as u32,
            reduction,
            body: ir::Body { locals: body.locals, block },
            push_sites: vec![Aggregation::None; body.push_sites as usize],
        })
    }

    /// The kernel that sets the initial values of properties, if any property has an
    /// initialiser: one phase over all nodes and one over all edges, as needed.
    pub(super) fn init(&mut self) -> Option<ir::Kernel> {
        self.body = BodyCx::new(BodyKind::Init);
        let mut block = Vec::new();
        for (owner, space, ty) in
            [(Owner::Node, Space::AllNodes, Type::Node), (Owner::Edge, Space::AllEdges, Type::Edge)]
        {
            let inits: Vec<(usize, &'a ast::Expr, Option<Type>)> = self
                .props
                .iter()
                .enumerate()
                .filter(|(_, p)| p.owner == owner && !p.is_weight)
                .filter_map(|(i, p)| p.init.map(|init| (i, init, p.ty)))
                .collect();
            if inits.is_empty() {
                continue;
            }
            self.body.push_scope();
            let var = self.body.declare("self", Some(ty), false, inits[0].1.span, false).expect("a typed local");
            let mut body = Vec::new();
            for (index, init, prop_ty) in inits {
                let Some(prop_ty) = prop_ty else { continue };
                if let Some(value) = self.expect(init, prop_ty) {
                    let place = Place::Property {
                        property: ir::PropertyId(index as u32),
                        element: Box::new(Expr::local(var, ty)),
                    };
                    body.push(Stmt::Assign { place, value });
                }
            }
            self.body.pop_scope();
            block.push(Stmt::ForAll(Box::new(ForAll { var, space, filter: None, body, schedule: Schedule::SERIAL })));
        }
        let body = self.leave();
        if block.is_empty() {
            return None;
        }
        Some(ir::Kernel {
            name: "init".to_string(),
            params: 0,
            reduction: None,
            body: ir::Body { locals: body.locals, block },
            push_sites: Vec::new(),
        })
    }

    pub(super) fn host(&mut self, main: &'a ast::Function) -> ir::Body {
        let result = self.main_result;
        self.enter(BodyKind::Host { result: Some(result) }, &main.body);
        let mut block = Vec::new();
        if let Some(init) = self.init_id() {
            block.push(Stmt::Invoke { kernel: init, args: Vec::new(), result: None });
        }
        block.extend(self.block(&main.body, Flow::default()));
        if result != Type::Unit && !always_returns(&main.body) {
            let message = format!("`main` may end without returning a `{}`", self.type_name(result));
            let diagnostic = Diagnostic::error(message, closing(&main.body))
                .with_label(main.name.span, "declared to return a value")
                .with_note("end every path with `return value;`");
            self.report(diagnostic);
        }
        let body = self.leave();
        ir::Body { locals: body.locals, block }
    }

    pub(super) fn block(&mut self, block: &ast::Block, flow: Flow) -> Vec<Stmt> {
        self.body.push_scope();
        let mut out = Vec::new();
        for stmt in &block.stmts {
            self.stmt(stmt, flow, &mut out);
        }
        self.body.pop_scope();
        out
    }

    /// A value that may be a kernel's result (`invoke k()`), which `main` receives in a
    /// temporary first; `expected` is the type the context needs, if known.
    fn value(&mut self, e: &ast::Expr, expected: Option<Type>, flow: Flow, out: &mut Vec<Stmt>) -> Option<Expr> {
        if let ast::ExprKind::Invoke(call) = &e.kind
            && self.body.kind.is_host()
        {
            let value = self.invoke(call, flow, true, out)?;
            if let Some(expected) = expected
                && value.ty != expected
            {
                self.mismatch(e, expected, value.ty);
                return None;
            }
            return Some(value);
        }
        match expected {
            Some(ty) => self.expect(e, ty),
            None => self.expr(e, None),
        }
    }

    /// `invoke k(args)`: emits the invocation; with `want_result`, returns the result's temporary.
    fn invoke(&mut self, call: &ast::Call, flow: Flow, want_result: bool, out: &mut Vec<Stmt>) -> Option<Expr> {
        let _ = flow;
        if !self.body.kind.is_host() {
            let diagnostic = Diagnostic::error("`invoke` is only allowed in `main`", call.span)
                .with_note("kernels and functions cannot run kernels; `main` orchestrates them");
            self.report(diagnostic);
            return None;
        }
        let (kernel, args) = self.kernel_call(call)?;
        let decl = &self.kernels[kernel.index()];
        if !want_result {
            out.push(Stmt::Invoke { kernel, args, result: None });
            return None;
        }
        let name = decl.ast.name.name.clone();
        match decl.reduction {
            None => {
                let diagnostic = Diagnostic::error(format!("kernel `{name}` has no result"), call.span)
                    .with_note(format!("a kernel with a result declares a reduction: `kernel {name}(...) -> sum u64`"));
                self.report(diagnostic);
                None
            }
            Some((_, ty)) => {
                let ty = ty?;
                let temp = self.body.fresh(&format!("{name}_result"), ty, true);
                out.push(Stmt::Invoke { kernel, args, result: Some(temp) });
                Some(Expr::local(temp, ty))
            }
        }
    }

    /// Resolves the kernel of `invoke`/`iterate` and lowers its arguments.
    fn kernel_call(&mut self, call: &ast::Call) -> Option<(KernelId, Vec<Expr>)> {
        let name = call.callee.name.as_str();
        let kernel = match self.values.get(name).map(|(g, _)| *g) {
            Some(Global::Kernel(id)) => id,
            Some(Global::Function(_)) => {
                let message = format!("`{name}` is a function, not a kernel; call it directly: `{name}(...)`");
                return self.error(message, call.callee.span);
            }
            Some(_) => return self.error(format!("`{name}` is not a kernel"), call.callee.span),
            None => {
                let candidates: Vec<&str> = self.kernels.iter().map(|k| k.ast.name.name.as_str()).collect();
                let mut diagnostic = Diagnostic::error(format!("cannot find kernel `{name}`"), call.callee.span);
                if let Some(close) = types::suggest(name, candidates) {
                    diagnostic = diagnostic.with_note(format!("did you mean `{close}`?"));
                }
                self.report(diagnostic);
                return None;
            }
        };
        let params: Vec<Option<Type>> = self.kernels[kernel.index()].sig.params.iter().map(|(_, _, t)| *t).collect();
        let args = self.arguments(&call.args, &params, &format!("kernel `{name}`"), call.span)?;
        Some((kernel, args))
    }

    fn initial(&mut self, initial: &ast::Initial) -> Option<Initial> {
        match initial {
            ast::Initial::List { items, .. } => {
                let lowered: Vec<Option<Expr>> = items.iter().map(|item| self.expect(item, Type::Node)).collect();
                Some(Initial::Items(lowered.into_iter().collect::<Option<Vec<_>>>()?))
            }
            ast::Initial::Expr(e) => {
                if let ast::ExprKind::MethodCall { receiver, method, args } = &e.kind
                    && matches!(receiver.kind, ast::ExprKind::Graph)
                    && method.name == "nodes"
                {
                    self.arguments(args, &[], "`G.nodes`", e.span)?;
                    return Some(Initial::AllNodes);
                }
                let value = self.expr(e, Some(Type::Node))?;
                if value.ty != Type::Node {
                    let diagnostic = Diagnostic::error(
                        format!("`initial` takes nodes, not a `{}`", self.type_name(value.ty)),
                        e.span,
                    )
                    .with_note("write a list `initial [a, b]` or `initial G.nodes()`");
                    self.report(diagnostic);
                    return None;
                }
                Some(Initial::Items(vec![value]))
            }
        }
    }

    fn next_outline(&mut self) -> OutlineId {
        let id = OutlineId(self.outlines);
        self.outlines += 1;
        id
    }

    /// Checks that a kernel-only statement stands inside a kernel's `forall`.
    fn in_kernel_loop(&mut self, what: &str, span: Span, flow: Flow) -> bool {
        if matches!(self.body.kind, BodyKind::Kernel { .. }) && flow.in_forall {
            return true;
        }
        let message = if matches!(self.body.kind, BodyKind::Kernel { .. }) {
            format!("{what} must be inside a `forall`")
        } else {
            format!("{what} is only allowed inside a kernel's `forall`")
        };
        self.report(Diagnostic::error(message, span));
        false
    }

    fn host_only(&mut self, what: &str, span: Span) -> bool {
        if self.body.kind.is_host() {
            return true;
        }
        let diagnostic = Diagnostic::error(format!("{what} is only allowed in `main`"), span)
            .with_note("`main` orchestrates kernels; kernels and functions cannot");
        self.report(diagnostic);
        false
    }

    fn stmt(&mut self, stmt: &ast::Stmt, flow: Flow, out: &mut Vec<Stmt>) {
        use ast::StmtKind as S;
        let span = stmt.span;
        match &stmt.kind {
            S::Let { mutable, name, ty, value: None } => {
                // An array without an initialiser starts zeroed (the parser allows no other).
                let declared = ty.as_ref().and_then(|t| self.resolve_type(t));
                if declared.is_some() && !self.body.kind.is_host() {
                    self.note_kernel_only(name.span);
                }
                if declared.is_some() && self.body.kind.is_host() {
                    self.error::<()>("arrays are for kernels and the functions they call", name.span);
                }
                let id = self.body.declare(&name.name, declared, *mutable, name.span, false);
                if let (Some(id), Some(ty)) = (id, declared) {
                    out.push(Stmt::Assign { place: Place::Local(id), value: Expr::new(ExprKind::Zeroed, ty) });
                }
            }
            S::Let { mutable, name, ty, value: Some(value) } => {
                let declared = ty.as_ref().map(|t| self.resolve_type(t));
                let lowered = match declared {
                    Some(None) => {
                        self.value(value, None, flow, out);
                        None
                    }
                    Some(Some(ty)) => self.value(value, Some(ty), flow, out),
                    None => self.value(value, None, flow, out),
                };
                let mut ty = match declared {
                    Some(t) => t,
                    None => lowered.as_ref().map(|v| v.ty),
                };
                if ty == Some(Type::Unit) {
                    self.error::<()>("this expression has no value to bind", value.span);
                    ty = None;
                }
                let uniform = !*mutable && lowered.as_ref().is_some_and(|v| self.is_uniform(v));
                let id = self.body.declare(&name.name, ty, *mutable, name.span, uniform);
                if let (Some(id), Some(value)) = (id, lowered) {
                    out.push(Stmt::Assign { place: Place::Local(id), value });
                }
            }
            S::Assign { place, op, value } => self.assign(place, *op, value, flow, out),
            S::If { cond, then, otherwise } => {
                let cond = self.expect(cond, Type::BOOL);
                let then = self.block(then, flow);
                let otherwise = match otherwise {
                    None => Vec::new(),
                    Some(ast::Else::Block(block)) => self.block(block, flow),
                    Some(ast::Else::If(stmt)) => {
                        let mut nested = Vec::new();
                        self.stmt(stmt, flow, &mut nested);
                        nested
                    }
                };
                if let Some(cond) = cond {
                    let uniform = self.is_uniform(&cond);
                    out.push(Stmt::If { cond, then, otherwise, uniform });
                }
            }
            S::While { cond, body } => {
                let cond = self.expect(cond, Type::BOOL);
                let body = self.block(body, Flow { in_loop: true, ..flow });
                if let Some(cond) = cond {
                    let uniform = self.is_uniform(&cond);
                    out.push(Stmt::While { cond, body, uniform });
                }
            }
            S::For { var, iter, body } => self.for_loop(var, iter, body, flow, out),
            S::ForAll { var, ty, space, filter, body } => {
                if self.body.kind.is_kernel() {
                    self.forall(var, ty.as_ref(), space, filter.as_ref(), body, flow, out);
                } else {
                    let diagnostic = Diagnostic::error("`forall` is only allowed in kernels", span)
                        .with_note("write the parallel loop in a `kernel` and run it with `invoke`");
                    self.report(diagnostic);
                }
            }
            S::Break => {
                if !flow.in_loop {
                    let diagnostic = if flow.in_forall {
                        Diagnostic::error("`break` cannot leave a `forall`", span)
                            .with_note("use `continue` to skip the rest of this item")
                    } else {
                        Diagnostic::error("`break` outside a loop", span)
                    };
                    self.report(diagnostic);
                } else {
                    out.push(Stmt::Break);
                }
            }
            S::Continue => {
                if flow.in_loop || flow.in_forall {
                    out.push(Stmt::Continue);
                } else {
                    self.error::<()>("`continue` outside a loop", span);
                }
            }
            S::Return(value) => self.ret(value.as_ref(), span, flow, out),
            S::Push(value) => {
                let ok = self.in_kernel_loop("`push`", span, flow);
                let value = self.expr(value, None).and_then(|value| self.worklist_push(value, span));
                if let (true, Some(value)) = (ok, value) {
                    let site = PushSite(self.body.push_sites);
                    self.body.push_sites += 1;
                    out.push(Stmt::Push { site, value });
                }
            }
            S::Retry(value) => {
                let mut ok = self.in_kernel_loop("`retry`", span, flow);
                if ok && flow.retry_items.is_none() {
                    let diagnostic = Diagnostic::error("`retry` needs a `forall` over nodes", span).with_note(
                        "only the items of `forall u in worklist` and `forall u in G.nodes()` can be retried",
                    );
                    self.report(diagnostic);
                    ok = false;
                }
                let value = self.expect(value, flow.retry_items.unwrap_or(Type::Node));
                if let (true, Some(value)) = (ok, value) {
                    out.push(Stmt::Retry { value });
                }
            }
            S::Reduce(value) => self.reduce(value, span, flow, out),
            S::Atomic { target, body, otherwise } => {
                self.lock(LockKind::Atomic, std::slice::from_ref(target), body, otherwise.as_ref(), span, flow, out)
            }
            S::Exclusive { targets, body, otherwise } => {
                self.lock(LockKind::Exclusive, targets, body, otherwise.as_ref(), span, flow, out)
            }
            S::Single { target, body, otherwise } => {
                self.lock(LockKind::Single, std::slice::from_ref(target), body, otherwise.as_ref(), span, flow, out)
            }
            S::Invoke(call) => {
                self.invoke(call, flow, false, out);
            }
            S::Iterate { call, initial, body } => {
                if !self.host_only("`iterate`", span) {
                    return;
                }
                let called = self.kernel_call(call);
                if let Some((kernel, _)) = &called
                    && let Some(lowered) = self.lowered_kernel(*kernel)
                    && !lowered.uses_worklist()
                {
                    let name = &call.callee.name;
                    let diagnostic = Diagnostic::error(
                        format!("`iterate {name}(...)` repeats until the worklist is empty, but `{name}` does not use the worklist"),
                        call.callee.span,
                    )
                    .with_note("a kernel uses the worklist when it iterates `worklist` or pushes; otherwise loop with `iterate { ... } while cond;`");
                    self.report(diagnostic);
                }
                if let (Some((kernel, _)), Some(first)) = (&called, initial.as_ref())
                    && let Some(lowered) = self.lowered_kernel(*kernel)
                    && let Type::Element(c) = lowered.worklist_item()
                {
                    let (name, coll) = (&call.callee.name, self.collections[c.index()].name.clone());
                    let diagnostic = Diagnostic::error(
                        format!("`initial` gives nodes, but `{name}`'s worklist holds elements of `{coll}`"),
                        match first {
                            ast::Initial::List { span, .. } => *span,
                            ast::Initial::Expr(e) => e.span,
                        },
                    )
                    .with_note(format!(
                        "fill the worklist with a kernel that pushes them (`forall t in G.{coll} where ... {{ push(t); }}`), then `iterate {name}();`"
                    ));
                    self.report(diagnostic);
                }
                let initial = initial.as_ref().map(|i| self.initial(i));
                let region = Flow { in_region: true, in_loop: true, ..flow };
                let body = body.as_ref().map(|b| self.block(b, region)).unwrap_or_default();
                let (Some((kernel, args)), Some(initial)) = (called, initial.map_or(Some(None), |i| i.map(Some)))
                else {
                    return;
                };
                let id = self.next_outline();
                let until = Until::Empty { kernel, args, initial };
                out.push(Stmt::Iterate(Box::new(ir::Iterate { id, until, body, outlined: false })));
            }
            S::IterateLoop { body, condition, cond } => {
                if !self.host_only("`iterate`", span) {
                    return;
                }
                let body = self.block(body, Flow { in_region: true, in_loop: true, ..flow });
                // The condition sees the variables declared before the loop, not those of its body.
                let Some(cond) = self.expect(cond, Type::BOOL) else { return };
                let id = self.next_outline();
                let until = Until::Condition { cond, stop_when: *condition == ast::LoopCondition::Until };
                out.push(Stmt::Iterate(Box::new(ir::Iterate { id, until, body, outlined: false })));
            }
            S::Pipe { once, initial, body } => {
                if !self.host_only("`pipe`", span) {
                    return;
                }
                let initial = initial.as_ref().map(|i| self.initial(i));
                let body = self.block(body, Flow { in_region: true, in_loop: !*once || flow.in_loop, ..flow });
                let Some(initial) = initial.map_or(Some(None), |i| i.map(Some)) else { return };
                let id = self.next_outline();
                out.push(Stmt::Pipe(Box::new(ir::Pipe { id, once: *once, initial, body, outlined: false, unroll: 1 })));
            }
            S::Expr(e) => match &e.kind {
                ast::ExprKind::Call(call) if call.callee.name == "print" => self.print(call, flow, out),
                ast::ExprKind::Invoke(call) => {
                    self.invoke(call, flow, false, out);
                }
                _ => {
                    if let Some(value) = self.expr(e, None) {
                        out.push(Stmt::Eval(value));
                    }
                }
            },
        }
    }

    fn assign(&mut self, target: &ast::Expr, op: ast::AssignOp, value: &ast::Expr, flow: Flow, out: &mut Vec<Stmt>) {
        let place = match self.lvalue(target) {
            Some(Lv::Place { root: Some((name, declared, false)), .. }) => {
                let diagnostic =
                    Diagnostic::error(format!("cannot assign to `{name}`, which is not declared `mut`"), target.span)
                        .with_label(declared, format!("declared here; write `let mut {name}` to allow assignments"));
                self.report(diagnostic);
                None
            }
            Some(Lv::Place { place, ty, .. }) => Some((place, ty)),
            Some(Lv::Value(value)) => {
                let message = match &value.kind {
                    ExprKind::Param(_) => "cannot assign to a param: params are fixed for the whole run",
                    ExprKind::Const(_) => "cannot assign to a constant",
                    ExprKind::EdgeSource(_) | ExprKind::EdgeTarget(_) => "cannot assign to an edge's endpoint",
                    _ => "cannot assign to this expression",
                };
                self.error::<()>(message, target.span);
                None
            }
            None => None,
        };
        let hint = place.as_ref().map(|(_, ty)| *ty);
        let value_span = value.span;
        let value = self.value(value, hint, flow, out);
        let (Some((place, ty)), Some(value)) = (place, value) else { return };
        let value = match assign_op(op) {
            None => value,
            Some(op) => {
                if !types::is_numeric(ty) {
                    let message = format!("`{}=` cannot be applied to `{}`", op.as_str(), self.type_name(ty));
                    self.error::<()>(message, target.span);
                    return;
                }
                let binary = match op {
                    ast::BinaryOp::Add => ir::BinaryOp::Add,
                    ast::BinaryOp::Sub => ir::BinaryOp::Sub,
                    ast::BinaryOp::Mul => ir::BinaryOp::Mul,
                    _ => ir::BinaryOp::Div,
                };
                if binary == ir::BinaryOp::Div && self.divides_by_zero("/=", &value, value_span) {
                    return;
                }
                Expr::binary(binary, Expr::new(ExprKind::Load(place.clone()), ty), value)
            }
        };
        out.push(Stmt::Assign { place, value });
    }

    fn ret(&mut self, value: Option<&ast::Expr>, span: Span, flow: Flow, out: &mut Vec<Stmt>) {
        let (expected, who) = match self.body.kind {
            BodyKind::Function { result, id } => {
                (result, format!("function `{}`", self.functions[id.index()].ast.name.name))
            }
            BodyKind::Host { result } => (result, "`main`".to_string()),
            _ => {
                let diagnostic = Diagnostic::error("`return` is not allowed in a kernel", span)
                    .with_note("use `continue` to finish an item early");
                self.report(diagnostic);
                return;
            }
        };
        match (value, expected) {
            (None, Some(Type::Unit)) => out.push(Stmt::Return(None)),
            (None, Some(ty)) => {
                let message = format!("missing return value: {who} returns a `{}`", self.type_name(ty));
                self.error::<()>(message, span);
            }
            (Some(value), Some(Type::Unit)) => {
                self.value(value, None, flow, out);
                let diagnostic = Diagnostic::error(format!("{who} returns no value"), value.span)
                    .with_note("declare the result type: `fn name(...) -> T`");
                self.report(diagnostic);
            }
            (Some(value), Some(ty)) => {
                if let Some(value) = self.value(value, Some(ty), flow, out) {
                    out.push(Stmt::Return(Some(value)));
                }
            }
            (value, None) => {
                if let Some(value) = value {
                    self.value(value, None, flow, out);
                }
            }
        }
    }

    fn reduce(&mut self, value: &ast::Expr, span: Span, flow: Flow, out: &mut Vec<Stmt>) {
        if !self.in_kernel_loop("`reduce`", span, flow) {
            self.expr(value, None);
            return;
        }
        let BodyKind::Kernel { reduction } = self.body.kind else { return };
        let Some((_, ty)) = reduction else {
            let diagnostic = Diagnostic::error("`reduce` in a kernel without a reduction", span)
                .with_note("declare what the kernel combines: `kernel name(...) -> sum u64`");
            self.report(diagnostic);
            self.expr(value, None);
            return;
        };
        let Some(ty) = ty else {
            self.expr(value, None);
            return;
        };
        if let Some(value) = self.expect(value, ty) {
            out.push(Stmt::Reduce { value });
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn lock(
        &mut self,
        kind: LockKind,
        targets: &[ast::Expr],
        body: &ast::Block,
        otherwise: Option<&ast::Block>,
        span: Span,
        flow: Flow,
        out: &mut Vec<Stmt>,
    ) {
        let ok = self.in_kernel_loop(&format!("`{}`", kind.name()), span, flow);
        // `exclusive(q.first(n))`: the first n items of an array, a set known only as the
        // kernel runs (a cavity).
        if let [target] = targets
            && let ast::ExprKind::MethodCall { receiver, method, args } = &target.kind
            && method.name == "first"
        {
            let prefix = self.array_prefix(receiver, args, target.span);
            if prefix.is_some() && kind != LockKind::Exclusive {
                let message =
                    format!("`{}` takes listed elements; only `exclusive` takes an array's items", kind.name());
                self.error::<()>(message, target.span);
            }
            let body = self.block(body, flow);
            let otherwise = otherwise.map(|b| self.block(b, flow)).unwrap_or_default();
            if let (true, Some(prefix), LockKind::Exclusive) = (ok, prefix, kind) {
                out.push(Stmt::Lock { kind, elements: vec![prefix], body, otherwise });
            }
            return;
        }
        // Nodes, or elements of one collection: the first target says which.
        let mut kind_ty: Option<Type> = None;
        let mut elements: Vec<Option<Expr>> = Vec::new();
        for target in targets {
            let element = match kind_ty {
                Some(ty) => self.expect(target, ty),
                None => match self.expr(target, None) {
                    Some(e) if matches!(e.ty, Type::Node | Type::Element(_)) => {
                        kind_ty = Some(e.ty);
                        Some(e)
                    }
                    Some(e) => {
                        let message = format!(
                            "`{}` locks nodes or collection elements, not a `{}`",
                            kind.name(),
                            self.type_name(e.ty)
                        );
                        self.error(message, target.span)
                    }
                    None => None,
                },
            };
            elements.push(element);
        }
        let body = self.block(body, flow);
        let otherwise = otherwise.map(|b| self.block(b, flow)).unwrap_or_default();
        let Some(elements) = elements.into_iter().collect::<Option<Vec<_>>>() else { return };
        if ok && !elements.is_empty() {
            out.push(Stmt::Lock { kind, elements, body, otherwise });
        }
    }

    fn print(&mut self, call: &ast::Call, flow: Flow, out: &mut Vec<Stmt>) {
        let mut ok = self.host_only("`print`", call.span);
        if ok && flow.in_region {
            let diagnostic = Diagnostic::error("`print` is not allowed inside `iterate` or `pipe`", call.span)
                .with_note("these loops may run on the device; print after them");
            self.report(diagnostic);
            ok = false;
        }
        let mut args = Vec::new();
        for arg in &call.args {
            if let ast::ExprKind::Str(text) = &arg.kind {
                args.push(Some(PrintArg::Text(text.clone())));
                continue;
            }
            let value = self.expr(arg, None);
            args.push(match value {
                Some(v) if types::is_plain(v.ty) => Some(PrintArg::Value(v)),
                Some(v) => {
                    let message = format!("`print` cannot show a value of type `{}`", self.type_name(v.ty));
                    self.error(message, arg.span)
                }
                None => None,
            });
        }
        if let (true, Some(args)) = (ok, args.into_iter().collect::<Option<Vec<_>>>()) {
            out.push(Stmt::Print(args));
        }
    }

    fn for_loop(&mut self, var: &ast::Ident, iter: &ast::Expr, body: &ast::Block, flow: Flow, out: &mut Vec<Stmt>) {
        let space = self.iteration(iter);
        let inner = Flow { in_loop: true, ..flow };
        self.body.push_scope();
        let lowered = match space {
            Some(Iter::Range(start, end)) => {
                let id = self.body.declare(&var.name, Some(start.ty), false, var.span, false);
                let body = self.block(body, inner);
                id.map(|var| Stmt::For { var, start, end, body })
            }
            Some(Iter::Adjacent(adjacency, node)) => {
                let id = self.body.declare(&var.name, Some(adjacency.item()), false, var.span, false);
                let body = self.block(body, inner);
                id.map(|var| Stmt::ForEach { var, adjacency, node, body, schedule: Schedule::SERIAL })
            }
            Some(iter @ (Iter::AllNodes | Iter::AllEdges)) => {
                // A sequential loop over every node or edge: a range over every id there has
                // been, skipping those not present (removed by a kernel), as `forall` does.
                let (item, index_ty, ids) = match iter {
                    Iter::AllNodes => (Type::Node, Type::U32, ExprKind::NodeIds),
                    _ => (Type::Edge, Type::U64, ExprKind::EdgeIds),
                };
                let index = self.body.fresh(&format!("{}_index", var.name), index_ty, false);
                let id = self.body.declare(&var.name, Some(item), false, var.span, false).expect("a typed local");
                let present = match iter {
                    Iter::AllNodes => ExprKind::HasNode(Box::new(Expr::local(id, item))),
                    _ => ExprKind::HasEdge(Box::new(Expr::local(id, item))),
                };
                let stmts = vec![
                    Stmt::Assign { place: Place::Local(id), value: Expr::cast(Expr::local(index, index_ty), item) },
                    Stmt::If {
                        cond: Expr::new(present, Type::BOOL),
                        then: self.block(body, inner),
                        otherwise: Vec::new(),
                        uniform: false,
                    },
                ];
                Some(Stmt::For {
                    var: index,
                    start: Expr::int(0, index_ty),
                    end: Expr::new(ids, index_ty),
                    body: stmts,
                })
            }
            Some(Iter::Worklist) => {
                let diagnostic = Diagnostic::error("`for` cannot iterate the worklist", iter.span)
                    .with_note("a kernel processes the worklist in parallel: `forall u in worklist { ... }`");
                self.report(diagnostic);
                self.body.declare(&var.name, None, false, var.span, false);
                self.block(body, inner);
                None
            }
            Some(Iter::Collection(_)) => {
                let diagnostic = Diagnostic::error("`for` cannot iterate a collection", iter.span)
                    .with_note("a kernel visits a collection's elements in parallel: `forall t in G.tris { ... }`");
                self.report(diagnostic);
                self.body.declare(&var.name, None, false, var.span, false);
                self.block(body, inner);
                None
            }
            None => {
                self.body.declare(&var.name, None, false, var.span, false);
                self.block(body, inner);
                None
            }
        };
        self.body.pop_scope();
        if let Some(stmt) = lowered {
            out.push(stmt);
        }
    }

    /// A `forall` of a kernel: a phase at the top level, a nested loop over adjacency inside.
    #[allow(clippy::too_many_arguments)]
    fn forall(
        &mut self,
        var: &ast::Ident,
        ty: Option<&ast::Type>,
        space: &ast::Expr,
        filter: Option<&ast::Expr>,
        body: &ast::Block,
        flow: Flow,
        out: &mut Vec<Stmt>,
    ) {
        let top = !flow.in_forall;
        let iter = self.iteration(space);
        let (space_ir, item) = match iter {
            Some(Iter::Adjacent(adjacency, node)) => {
                if top {
                    let diagnostic = Diagnostic::error(
                        "a `forall` over a node's edges or neighbours must be nested in a `forall` over nodes",
                        space.span,
                    )
                    .with_note("a kernel's top-level loops run over `worklist`, `G.nodes()`, `G.edges()` or a range");
                    self.report(diagnostic);
                    (None, Some(adjacency.item()))
                } else {
                    (Some(Space::Adjacent(adjacency, node)), Some(adjacency.item()))
                }
            }
            None => (None, None),
            Some(other) => {
                let (space_ir, item) = match other {
                    Iter::Collection(id) => (Space::Collection(id), Type::Element(id)),
                    Iter::Worklist => (Space::Worklist, self.worklist_item_type(ty, space.span)),
                    Iter::AllNodes => (Space::AllNodes, Type::Node),
                    Iter::AllEdges => (Space::AllEdges, Type::Edge),
                    Iter::Range(start, end) => {
                        let ty = start.ty;
                        (Space::Range(start, end), ty)
                    }
                    Iter::Adjacent(..) => unreachable!("handled above"),
                };
                if !top {
                    let diagnostic = Diagnostic::error(
                        "a `forall` inside another `forall` must iterate a node's edges or neighbours",
                        space.span,
                    )
                    .with_note("nested parallel loops run over `u.out_edges()`, `u.in_edges()`, `u.neighbors()` or `u.in_neighbors()`; use `for` for a sequential loop");
                    self.report(diagnostic);
                    (None, Some(item))
                } else {
                    (Some(space_ir), Some(item))
                }
            }
        };
        self.body.push_scope();
        let id = self.body.declare(&var.name, item, false, var.span, false);
        let filter = filter.map(|f| self.expect(f, Type::BOOL));
        if let (Some(ty), false) = (ty, matches!(space_ir, Some(Space::Worklist))) {
            let diagnostic = Diagnostic::error("only a `forall` over `worklist` takes a type", ty.span)
                .with_note("the other spaces say what they hold: `G.nodes()` nodes, `G.tris` elements of `tris`");
            self.report(diagnostic);
        }
        let retry_items = if top {
            match (&space_ir, item) {
                (Some(Space::Worklist | Space::AllNodes), Some(item)) => Some(item),
                _ => None,
            }
        } else {
            flow.retry_items
        };
        let inner = Flow { in_forall: true, in_loop: false, in_region: flow.in_region, retry_items };
        let body = self.block(body, inner);
        self.body.pop_scope();
        let (Some(space), Some(var)) = (space_ir, id) else { return };
        let filter = match filter {
            None => None,
            Some(Some(f)) => Some(f),
            Some(None) => return,
        };
        out.push(Stmt::ForAll(Box::new(ForAll { var, space, filter, body, schedule: Schedule::SERIAL })));
    }

    /// The item type of `forall x[: ty] in worklist`: nodes, or the elements of the collection
    /// `ty` names; it must agree with the kernel's other worklist loops and pushes.
    fn worklist_item_type(&mut self, ty: Option<&ast::Type>, span: Span) -> Type {
        let item = match ty {
            None => self.body.worklist_items.map_or(Type::Node, |(t, _)| t),
            Some(ty) => match self.resolve_type(ty) {
                Some(t @ (Type::Node | Type::Element(_))) => t,
                Some(other) => {
                    let message =
                        format!("a worklist holds nodes or collection elements, not `{}`", self.type_name(other));
                    let diagnostic = Diagnostic::error(message, ty.span).with_note(
                        "write `forall u in worklist` for nodes, `forall t: tris in worklist` for elements of `tris`",
                    );
                    self.report(diagnostic);
                    Type::Node
                }
                None => Type::Node,
            },
        };
        self.agree_on_worklist_items(item, ty.map_or(span, |t| t.span));
        item
    }

    /// A pushed value: a node, or an element of a collection, as the kernel's worklist holds.
    fn worklist_push(&mut self, value: Expr, span: Span) -> Option<Expr> {
        if !matches!(value.ty, Type::Node | Type::Element(_)) {
            let message = format!("a worklist holds nodes or collection elements, not `{}`", self.type_name(value.ty));
            return self.error(message, span);
        }
        self.agree_on_worklist_items(value.ty, span).then_some(value)
    }

    /// Records what the kernel's worklist holds, or reports a disagreement with what was said
    /// before; false on a disagreement.
    fn agree_on_worklist_items(&mut self, item: Type, span: Span) -> bool {
        match self.body.worklist_items {
            None => {
                self.body.worklist_items = Some((item, span));
                true
            }
            Some((seen, _)) if seen == item => true,
            Some((seen, at)) => {
                let message = format!(
                    "this kernel's worklist holds `{}`, so it cannot also hold `{}`",
                    self.type_name(seen),
                    self.type_name(item)
                );
                let diagnostic = Diagnostic::error(message, span).with_label(at, "said here");
                self.report(diagnostic);
                false
            }
        }
    }

    /// `q.first(n)` as the one target of `exclusive`: the first `n` items of array `q`, which
    /// holds nodes or collection elements.
    fn array_prefix(&mut self, receiver: &ast::Expr, args: &[ast::Expr], span: Span) -> Option<Expr> {
        let array = self.expr(receiver, None)?;
        let Type::Array(id) = array.ty else {
            let message =
                format!("`.first(n)` takes the first items of an array, not of a `{}`", self.type_name(array.ty));
            return self.error(message, receiver.span);
        };
        if !matches!(self.arrays[id.index()].element, Type::Node | Type::Element(_)) {
            let message = format!(
                "`exclusive` locks nodes or collection elements, not the items of a `{}`",
                self.type_name(array.ty)
            );
            return self.error(message, receiver.span);
        }
        let [count] = args else {
            return self.error("`.first(n)` takes one argument: how many items", span);
        };
        let count = self.expr(count, Some(Type::U32))?;
        if !types::is_integer(count.ty) {
            let message = format!("`.first(n)` counts items with an integer, not `{}`", self.type_name(count.ty));
            return self.error(message, span);
        }
        let ty = array.ty;
        Some(Expr::new(ExprKind::ArrayPrefix { array: Box::new(array), count: Box::new(count) }, ty))
    }
}
