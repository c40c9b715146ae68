//! Expressions: name resolution, type checking with expected types, and lowering.
//!
//! Typing is bidirectional in the small: a lowering call gets the type its context expects, if
//! any, as a *hint*. Only literals and `INF` use it (an unsuffixed integer literal takes the
//! expected integer or float type, a float literal the expected float type, `INF` the expected
//! numeric type); everything else has a type of its own, which the caller compares with what it
//! needs. Binary operators pass the type of their typed operand to a literal one. Without any
//! context, an integer literal is `i32` and a float literal `f64`, as in Rust.

use grail_ir::{
    Adjacency, AtomicOp, BinaryOp, Builtin, CollectionId, Const, Expr, ExprKind, Owner, Place, Scalar, StructId, Type,
    UnaryOp,
};

use super::scope::{Binding, BodyKind};
use super::{Global, GraphName, Lowerer, types};
use crate::ast;
use crate::diagnostics::Diagnostic;
use crate::span::Span;
use crate::token::{FloatSuffix, IntSuffix};

/// The left-hand side of an assignment, or the base of a field access: a place that can be
/// written, or only a value.
pub(super) enum Lv {
    Place {
        place: Place,
        ty: Type,
        /// The local the place is part of, with its declaration and whether it is `mut`; `None`
        /// for properties, which are always writable.
        root: Option<(String, Span, bool)>,
    },
    Value(Expr),
}

impl Lv {
    pub(super) fn ty(&self) -> Type {
        match self {
            Lv::Place { ty, .. } => *ty,
            Lv::Value(e) => e.ty,
        }
    }

    pub(super) fn into_expr(self) -> Expr {
        match self {
            Lv::Place { place, ty, .. } => Expr::new(ExprKind::Load(place), ty),
            Lv::Value(e) => e,
        }
    }
}

/// What a `for` or `forall` iterates.
pub(super) enum Iter {
    Range(Expr, Expr),
    AllNodes,
    AllEdges,
    Adjacent(Adjacency, Expr),
    Worklist,
    Collection(CollectionId),
}

/// Whether an expression's type comes from its context: literals without suffix, `INF`, and
/// arithmetic made only of them.
pub(super) fn is_flexible(e: &ast::Expr) -> bool {
    match &e.kind {
        ast::ExprKind::Int { suffix: None, .. } | ast::ExprKind::Float { suffix: None, .. } | ast::ExprKind::Inf => {
            true
        }
        ast::ExprKind::Unary { operand, .. } => is_flexible(operand),
        ast::ExprKind::Binary { op, lhs, rhs } => match op {
            ast::BinaryOp::Shl | ast::BinaryOp::Shr => is_flexible(lhs),
            _ if op.is_comparison() || matches!(op, ast::BinaryOp::And | ast::BinaryOp::Or) => false,
            _ => is_flexible(lhs) && is_flexible(rhs),
        },
        _ => false,
    }
}

fn binary_op(op: ast::BinaryOp) -> BinaryOp {
    use ast::BinaryOp as A;
    match op {
        A::Mul => BinaryOp::Mul,
        A::Div => BinaryOp::Div,
        A::Rem => BinaryOp::Rem,
        A::Add => BinaryOp::Add,
        A::Sub => BinaryOp::Sub,
        A::Shl => BinaryOp::Shl,
        A::Shr => BinaryOp::Shr,
        A::BitAnd => BinaryOp::BitAnd,
        A::BitXor => BinaryOp::BitXor,
        A::BitOr => BinaryOp::BitOr,
        A::Eq => BinaryOp::Eq,
        A::Ne => BinaryOp::Ne,
        A::Lt => BinaryOp::Lt,
        A::Le => BinaryOp::Le,
        A::Gt => BinaryOp::Gt,
        A::Ge => BinaryOp::Ge,
        A::And => BinaryOp::And,
        A::Or => BinaryOp::Or,
    }
}

/// The binary operator of a compound assignment.
pub(super) fn assign_op(op: ast::AssignOp) -> Option<ast::BinaryOp> {
    match op {
        ast::AssignOp::Assign => None,
        ast::AssignOp::Add => Some(ast::BinaryOp::Add),
        ast::AssignOp::Sub => Some(ast::BinaryOp::Sub),
        ast::AssignOp::Mul => Some(ast::BinaryOp::Mul),
        ast::AssignOp::Div => Some(ast::BinaryOp::Div),
    }
}

fn atomic_op(name: &str) -> Option<AtomicOp> {
    Some(match name {
        "atomic_min" => AtomicOp::Min,
        "atomic_max" => AtomicOp::Max,
        "atomic_add" => AtomicOp::Add,
        "atomic_sub" => AtomicOp::Sub,
        "atomic_and" => AtomicOp::And,
        "atomic_or" => AtomicOp::Or,
        "atomic_cas" => AtomicOp::Cas,
        _ => return None,
    })
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 { format!("1 {what}") } else { format!("{n} {what}s") }
}

fn adjacency(name: &str) -> Option<Adjacency> {
    Some(match name {
        "out_edges" => Adjacency::OutEdges,
        "in_edges" => Adjacency::InEdges,
        "neighbors" => Adjacency::OutNeighbors,
        "in_neighbors" => Adjacency::InNeighbors,
        _ => return None,
    })
}

const NODE_METHODS: &[&str] =
    &["degree", "in_degree", "neighbor", "in_neighbor", "out_edges", "in_edges", "neighbors", "in_neighbors"];

impl<'a> Lowerer<'a> {
    /// Lowers `e`, which must have type `ty`.
    pub(super) fn expect(&mut self, e: &ast::Expr, ty: Type) -> Option<Expr> {
        let lowered = self.expr(e, Some(ty))?;
        if lowered.ty != ty {
            self.mismatch(e, ty, lowered.ty);
            return None;
        }
        Some(lowered)
    }

    /// Reports that `e` has type `found` where `expected` is needed.
    pub(super) fn mismatch(&mut self, e: &ast::Expr, expected: Type, found: Type) {
        let (want, got) = (self.type_name(expected), self.type_name(found));
        if found == Type::Unit {
            let message = format!("expected a `{want}`, but this expression has no value");
            self.report(Diagnostic::error(message, e.span));
            return;
        }
        let mut diagnostic = Diagnostic::error(format!("mismatched types: expected `{want}`, found `{got}`"), e.span);
        if matches!(expected, Type::Node | Type::Edge) && is_flexible(e) {
            let id = if expected == Type::Node { "u32" } else { "u64" };
            diagnostic =
                diagnostic.with_note(format!("a literal is a number; an id is written `n as {want}` (from `{id}`)"));
        } else if types::castable(found, expected) {
            diagnostic = diagnostic.with_note(format!("there are no implicit conversions; convert with `as {want}`"));
        }
        self.report(diagnostic);
    }

    /// Lowers an expression; `hint` is the type the context expects, if it knows one.
    pub(super) fn expr(&mut self, e: &ast::Expr, hint: Option<Type>) -> Option<Expr> {
        use ast::ExprKind as K;
        match &e.kind {
            K::Int { value, suffix, .. } => self.int_literal(*value, *suffix, hint, e.span),
            K::Float { value, suffix } => {
                let ty = match suffix {
                    Some(FloatSuffix::F32) => Type::Scalar(Scalar::F32),
                    Some(FloatSuffix::F64) => Type::Scalar(Scalar::F64),
                    None => hint.filter(|t| types::is_float(*t)).unwrap_or(Type::Scalar(Scalar::F64)),
                };
                Some(Expr::new(ExprKind::Const(Const::Float(*value)), ty))
            }
            K::Bool(b) => Some(Expr::bool(*b)),
            K::Str(_) => self.error("string literals are only allowed as arguments of `print`", e.span),
            K::Name(ident) => self.name(ident),
            K::Graph => {
                let diagnostic = Diagnostic::error("`G` is the graph, not a value", e.span)
                    .with_note("use `G.num_nodes()`, `G.num_edges()`, or a set's `G.name.find(u)`");
                self.report(diagnostic);
                None
            }
            K::Inf => match hint {
                Some(ty) if types::is_numeric(ty) => Some(Expr::inf(ty)),
                _ => {
                    let diagnostic = Diagnostic::error("`INF` needs a numeric type from its context", e.span)
                        .with_note("`INF` is the largest value of the type expected where it stands: write `let x: u32 = INF;`, or compare it with a typed value");
                    self.report(diagnostic);
                    None
                }
            },
            K::Worklist => self.error("`worklist` is only allowed as the iteration space of `forall`", e.span),
            K::Unary { op, operand } => self.unary(*op, operand, hint, e.span),
            K::Binary { op, lhs, rhs } => self.binary(*op, lhs, rhs, hint, e.span),
            K::Cast { expr, ty } => self.cast(expr, ty, e.span),
            K::Call(call) => self.call(call, hint),
            K::MethodCall { receiver, method, args } => self.method(receiver, method, args, e.span),
            K::Field { base, field } => {
                if let K::Graph = base.kind {
                    return self.graph_field(field);
                }
                Some(self.lvalue(e)?.into_expr())
            }
            K::Index { .. } => Some(self.lvalue(e)?.into_expr()),
            K::StructLiteral { name, fields } => self.struct_literal(name, fields, e.span),
            K::Range { .. } => self.error("a range `a..b` can only be iterated by `for` or `forall`", e.span),
            K::Invoke(_) => {
                let message = if self.body.kind.is_host() {
                    "`invoke` with a result must be the whole value of a `let`, an assignment or a `return`"
                } else {
                    "`invoke` is only allowed in `main`: kernels and functions cannot run kernels"
                };
                self.error(message, e.span)
            }
            K::Error => None,
        }
    }

    fn int_literal(&mut self, value: u64, suffix: Option<IntSuffix>, hint: Option<Type>, span: Span) -> Option<Expr> {
        let ty = match suffix {
            Some(IntSuffix::I32) => Type::Scalar(Scalar::I32),
            Some(IntSuffix::I64) => Type::Scalar(Scalar::I64),
            Some(IntSuffix::U32) => Type::U32,
            Some(IntSuffix::U64) => Type::U64,
            None => match hint {
                Some(t) if types::is_integer(t) => t,
                Some(t) if types::is_float(t) => {
                    return Some(Expr::new(ExprKind::Const(Const::Float(value as f64)), t));
                }
                _ => Type::Scalar(Scalar::I32),
            },
        };
        if !types::literal_fits(value, ty) {
            return self.error(format!("the literal `{value}` does not fit in `{ty}`"), span);
        }
        Some(Expr::int(value, ty))
    }

    /// A plain name used as a value.
    fn name(&mut self, ident: &ast::Ident) -> Option<Expr> {
        match self.body.lookup(&ident.name) {
            Some(Binding::Local { id, ty, .. }) => return Some(Expr::local(*id, *ty)),
            Some(Binding::Poisoned) => return None,
            None => {}
        }
        match self.values.get(&ident.name).map(|(g, _)| *g) {
            Some(Global::Param(id)) => {
                let ty = self.params[id.index()].ty?;
                Some(Expr::new(ExprKind::Param(id), ty))
            }
            Some(Global::Const(index)) => {
                let (value, ty) = self.const_value(index, ident.span)?;
                Some(Expr::new(ExprKind::Const(value), ty))
            }
            Some(Global::Function(_)) => {
                self.error(format!("`{0}` is a function; call it with `{0}(...)`", ident.name), ident.span)
            }
            Some(Global::Kernel(_)) => {
                self.error(format!("`{0}` is a kernel; run it with `invoke {0}(...)`", ident.name), ident.span)
            }
            Some(Global::Main) => self.error("`main` is the entry point, not a value", ident.span),
            None => {
                self.unknown_name(ident);
                None
            }
        }
    }

    pub(super) fn unknown_name(&mut self, ident: &ast::Ident) {
        let name = ident.name.as_str();
        if name == "self" {
            let diagnostic = Diagnostic::error("`self` is only defined in a property's initialiser", ident.span)
                .with_note("there it is the node (or edge) being initialised");
            self.report(diagnostic);
            return;
        }
        let declared = self.body.declared.iter().find(|(n, _)| n == name).map(|(_, s)| *s);
        if let Some(at) = declared {
            let diagnostic = if at.start > ident.span.start {
                Diagnostic::error(format!("`{name}` is used before its declaration"), ident.span)
                    .with_label(at, "declared here")
            } else {
                Diagnostic::error(format!("`{name}` is not in scope here"), ident.span)
                    .with_label(at, "declared here, in a block that has ended")
            };
            self.report(diagnostic);
            return;
        }
        match self.graph_names.get(name).map(|(g, _)| *g) {
            Some(GraphName::Property(_)) => {
                let message = format!("`{name}` is a property: read it through a node or an edge, as in `u.{name}`");
                self.report(Diagnostic::error(message, ident.span));
                return;
            }
            Some(GraphName::Set(_)) => {
                let message = format!("`{name}` is a set: use `G.{name}.find(u)` or `G.{name}.union(u, v)`");
                self.report(Diagnostic::error(message, ident.span));
                return;
            }
            Some(GraphName::Collection(_)) => {
                let message = format!("`{name}` is a collection: it is `G.{name}`");
                self.report(Diagnostic::error(message, ident.span));
                return;
            }
            _ => {}
        }
        let candidates: Vec<String> =
            self.body.names().map(str::to_string).chain(self.values.keys().cloned()).collect();
        let mut diagnostic = Diagnostic::error(format!("cannot find `{name}` in this scope"), ident.span);
        if let Some(close) = types::suggest(name, candidates.iter().map(String::as_str)) {
            diagnostic = diagnostic.with_note(format!("did you mean `{close}`?"));
        }
        self.report(diagnostic);
    }

    fn unary(&mut self, op: ast::UnaryOp, operand: &ast::Expr, hint: Option<Type>, span: Span) -> Option<Expr> {
        let value = self.expr(operand, hint)?;
        let ty = value.ty;
        let (op, ok) = match op {
            ast::UnaryOp::Neg => (UnaryOp::Neg, types::is_numeric(ty)),
            ast::UnaryOp::Not => (UnaryOp::Not, ty == Type::BOOL || types::is_integer(ty)),
        };
        if !ok {
            let message = match op {
                UnaryOp::Neg => format!("cannot negate a value of type `{}`", self.type_name(ty)),
                UnaryOp::Not => format!("`!` applies to `bool` and integers, not to `{}`", self.type_name(ty)),
            };
            return self.error(message, span);
        }
        Some(Expr::new(ExprKind::Unary(op, Box::new(value)), ty))
    }

    /// Lowers two operands that must have one type: a literal side takes the other side's type.
    fn operands(&mut self, lhs: &ast::Expr, rhs: &ast::Expr, hint: Option<Type>) -> (Option<Expr>, Option<Expr>) {
        if is_flexible(lhs) && !is_flexible(rhs) {
            let r = self.expr(rhs, hint);
            let l = self.expr(lhs, r.as_ref().map(|r| r.ty).or(hint));
            (l, r)
        } else {
            let l = self.expr(lhs, hint);
            let r = self.expr(rhs, l.as_ref().map(|l| l.ty).or(hint));
            (l, r)
        }
    }

    fn binary(
        &mut self,
        op: ast::BinaryOp,
        lhs: &ast::Expr,
        rhs: &ast::Expr,
        hint: Option<Type>,
        span: Span,
    ) -> Option<Expr> {
        use ast::BinaryOp as A;
        let symbol = op.as_str();
        if matches!(op, A::And | A::Or) {
            let l = self.expect(lhs, Type::BOOL);
            let r = self.expect(rhs, Type::BOOL);
            return Some(Expr::binary(binary_op(op), l?, r?));
        }
        if matches!(op, A::Shl | A::Shr) {
            let l = self.expr(lhs, hint);
            let r = if is_flexible(rhs) {
                self.expr(rhs, l.as_ref().map(|l| l.ty).filter(|t| types::is_integer(*t)))
            } else {
                self.expr(rhs, None)
            };
            let (l, r) = (l?, r?);
            for side in [&l, &r] {
                if !types::is_integer(side.ty) {
                    let message = format!("`{symbol}` shifts integers, not `{}`", self.type_name(side.ty));
                    return self.error(message, span);
                }
            }
            return Some(Expr::binary(binary_op(op), l, r));
        }
        let operand_hint = if op.is_comparison() { None } else { hint };
        let (l, r) = self.operands(lhs, rhs, operand_hint);
        let (l, r) = (l?, r?);
        if l.ty != r.ty {
            let (lt, rt) = (self.type_name(l.ty), self.type_name(r.ty));
            let mut diagnostic =
                Diagnostic::error(format!("`{symbol}` needs operands of the same type, found `{lt}` and `{rt}`"), span)
                    .with_label(lhs.span, lt.clone())
                    .with_label(rhs.span, rt.clone());
            if types::castable(r.ty, l.ty) {
                diagnostic = diagnostic.with_note(format!(
                    "there are no implicit conversions; convert one side with `as`, e.g. `... as {lt}`"
                ));
            }
            self.report(diagnostic);
            return None;
        }
        let ty = l.ty;
        let ok = match op {
            A::Add | A::Sub | A::Mul | A::Div => types::is_numeric(ty),
            A::Rem => types::is_integer(ty),
            A::BitAnd | A::BitOr | A::BitXor => types::is_integer(ty) || ty == Type::BOOL,
            A::Eq | A::Ne => !matches!(ty, Type::Struct(_) | Type::Unit),
            _ => types::is_numeric(ty),
        };
        if !ok {
            let name = self.type_name(ty);
            let mut diagnostic = Diagnostic::error(format!("`{symbol}` cannot be applied to `{name}`"), span);
            if op.is_comparison() && matches!(ty, Type::Node | Type::Edge) {
                let id = if ty == Type::Node { "u32" } else { "u64" };
                diagnostic =
                    diagnostic.with_note(format!("ids are ordered as numbers: `(a as {id}) {symbol} (b as {id})`"));
            }
            self.report(diagnostic);
            return None;
        }
        if matches!(op, A::Div | A::Rem) && self.divides_by_zero(symbol, &r, rhs.span) {
            return None;
        }
        // Operands known at compile time that overflow are an error here, as a zero divisor is,
        // rather than a fault when the code runs (a constant's value reports it when folded).
        if matches!(op, A::Div | A::Rem)
            && self.body.kind != BodyKind::Const
            && super::consts::folds_to_overflow(binary_op(op), &l, &r)
        {
            return self.error(format!("`{symbol}` overflows: it divides the type's minimum by -1"), span);
        }
        Some(Expr::binary(binary_op(op), l, r))
    }

    /// Reports an integer divisor known to be zero (at `span`), for `symbol` (`/`, `%`, `/=`):
    /// an error here rather than a fault (or, on the CPU, a trap the C compiler puts in its
    /// place) when the kernel runs. A constant's value reports it as its own, when folded.
    pub(super) fn divides_by_zero(&mut self, symbol: &str, divisor: &Expr, span: Span) -> bool {
        let zero = self.body.kind != BodyKind::Const
            && types::is_integer(divisor.ty)
            && matches!(super::consts::fold(divisor), Ok(grail_ir::Const::Int(0)));
        if zero {
            self.error::<()>(format!("`{symbol}` by zero: the divisor is always 0"), span);
        }
        zero
    }

    fn cast(&mut self, value: &ast::Expr, ty: &ast::Type, span: Span) -> Option<Expr> {
        let target = self.resolve_type(ty);
        let inner_hint = match target {
            Some(Type::Node) => Some(Type::U32),
            Some(Type::Edge) => Some(Type::U64),
            Some(t) if types::is_numeric(t) => Some(t),
            _ => None,
        };
        let value = self.expr(value, if is_flexible(value) { inner_hint } else { None })?;
        let target = target?;
        if !types::castable(value.ty, target) {
            let (from, to) = (self.type_name(value.ty), self.type_name(target));
            let mut diagnostic = Diagnostic::error(format!("cannot convert `{from}` to `{to}` with `as`"), span);
            let note = match (value.ty, target) {
                (Type::Node, _) | (_, Type::Node) => Some("a `Node` converts to and from `u32` only"),
                (Type::Edge, _) | (_, Type::Edge) => Some("an `Edge` converts to and from `u64` only"),
                (Type::Scalar(Scalar::Bool), _) | (_, Type::Scalar(Scalar::Bool)) => {
                    Some("`bool` does not convert with `as`; use a comparison or `if`")
                }
                _ => None,
            };
            if let Some(note) = note {
                diagnostic = diagnostic.with_note(note);
            }
            self.report(diagnostic);
            return None;
        }
        if value.ty == target {
            return Some(value);
        }
        Some(Expr::cast(value, target))
    }

    /// Lowers arguments against parameter types; reports a wrong count at `span`.
    pub(super) fn arguments(
        &mut self,
        args: &[ast::Expr],
        params: &[Option<Type>],
        callee: &str,
        span: Span,
    ) -> Option<Vec<Expr>> {
        if args.len() != params.len() {
            let message = format!(
                "{callee} takes {}, but {} given",
                plural(params.len(), "argument"),
                if args.len() == 1 { "1 was".to_string() } else { format!("{} were", args.len()) }
            );
            self.report(Diagnostic::error(message, span));
            for arg in args {
                self.expr(arg, None);
            }
            return None;
        }
        let mut out = Vec::with_capacity(args.len());
        let mut ok = true;
        for (arg, param) in args.iter().zip(params) {
            let lowered = match param {
                Some(ty) => self.expect(arg, *ty),
                None => {
                    self.expr(arg, None);
                    None
                }
            };
            match lowered {
                Some(e) => out.push(e),
                None => ok = false,
            }
        }
        ok.then_some(out)
    }

    fn call(&mut self, call: &ast::Call, hint: Option<Type>) -> Option<Expr> {
        let name = call.callee.name.as_str();
        let span = call.span;
        match name {
            "min" | "max" => {
                let builtin = if name == "min" { Builtin::Min } else { Builtin::Max };
                if call.args.len() != 2 {
                    return self.builtin_arity(call, 2);
                }
                let (a, b) = self.operands(&call.args[0], &call.args[1], hint);
                let (a, b) = (a?, b?);
                if a.ty != b.ty {
                    let (at, bt) = (self.type_name(a.ty), self.type_name(b.ty));
                    let message = format!("`{name}` needs two arguments of the same type, found `{at}` and `{bt}`");
                    let diagnostic = Diagnostic::error(message, span).with_note(format!(
                        "there are no implicit conversions; convert one with `as`, e.g. `... as {at}`"
                    ));
                    self.report(diagnostic);
                    return None;
                }
                if !types::is_numeric(a.ty) {
                    return self.error(format!("`{name}` compares numbers, not `{}`", self.type_name(a.ty)), span);
                }
                let ty = a.ty;
                Some(Expr::new(ExprKind::Builtin(builtin, vec![a, b]), ty))
            }
            "abs" | "sqrt" | "ln" | "exp" => {
                let builtin = match name {
                    "abs" => Builtin::Abs,
                    "sqrt" => Builtin::Sqrt,
                    "ln" => Builtin::Ln,
                    _ => Builtin::Exp,
                };
                if call.args.len() != 1 {
                    return self.builtin_arity(call, 1);
                }
                let hint = if builtin.is_float_math() {
                    hint.filter(|t| types::is_float(*t)).or(Some(Type::Scalar(Scalar::F64)))
                } else {
                    hint
                };
                let x = self.expr(&call.args[0], hint)?;
                let ok = if builtin.is_float_math() { types::is_float(x.ty) } else { types::is_numeric(x.ty) };
                if !ok {
                    let wanted = if builtin.is_float_math() { "a float" } else { "a number" };
                    let message = format!("`{name}` takes {wanted}, not `{}`", self.type_name(x.ty));
                    return self.error(message, call.args[0].span);
                }
                let ty = x.ty;
                Some(Expr::new(ExprKind::Builtin(builtin, vec![x]), ty))
            }
            "orient2d" | "incircle" => {
                let (builtin, arity) = if name == "orient2d" { (Builtin::Orient2d, 6) } else { (Builtin::InCircle, 8) };
                if call.args.len() != arity {
                    return self.builtin_arity(call, arity);
                }
                if self.body.kind.is_host() {
                    let message = format!("`{name}` is for kernels and the functions they call");
                    return self.error(message, call.callee.span);
                }
                let f64_ty = Type::Scalar(Scalar::F64);
                let args: Vec<Option<Expr>> = call.args.iter().map(|a| self.expect(a, f64_ty)).collect();
                let args: Option<Vec<Expr>> = args.into_iter().collect();
                Some(Expr::new(ExprKind::Builtin(builtin, args?), f64_ty))
            }
            "print" => self.error("`print` is a statement; it has no value", span),
            _ => {
                if let Some(op) = atomic_op(name) {
                    return self.atomic(op, call);
                }
                self.user_call(call)
            }
        }
    }

    fn builtin_arity(&mut self, call: &ast::Call, arity: usize) -> Option<Expr> {
        let given = call.args.len();
        let message = format!(
            "`{}` takes {}, but {} given",
            call.callee.name,
            plural(arity, "argument"),
            if given == 1 { "1 was".to_string() } else { format!("{given} were") }
        );
        for arg in &call.args {
            self.expr(arg, None);
        }
        self.error(message, call.span)
    }

    fn user_call(&mut self, call: &ast::Call) -> Option<Expr> {
        let name = call.callee.name.as_str();
        match self.values.get(name).map(|(g, _)| *g) {
            Some(Global::Function(id)) => {
                let decl = &self.functions[id.index()];
                let params: Vec<Option<Type>> = decl.sig.params.iter().map(|(_, _, t)| *t).collect();
                let result = decl.result;
                if let BodyKind::Function { id: caller, .. } = self.body.kind {
                    self.calls[caller.index()].push((id, call.span));
                }
                if self.body.kind.is_host()
                    && let Some(at) = self.element_access_from(id)
                {
                    let message = format!(
                        "`main` cannot call `{name}`: it uses collection elements' fields or arrays, which only kernels have"
                    );
                    let diagnostic = Diagnostic::error(message, call.span)
                        .with_label(at, "here")
                        .with_note("host code adds and counts elements; kernels read and write their fields");
                    self.report(diagnostic);
                }
                let args = self.arguments(&call.args, &params, &format!("function `{name}`"), call.span)?;
                Some(Expr::new(ExprKind::Call(id, args), result?))
            }
            Some(Global::Kernel(_)) => {
                let message = format!("`{name}` is a kernel; run it from `main` with `invoke {name}(...)`");
                self.error(message, call.callee.span)
            }
            Some(Global::Main) => self.error("`main` is the entry point and cannot be called", call.callee.span),
            Some(Global::Param(_) | Global::Const(_)) => {
                self.error(format!("`{name}` is not a function"), call.callee.span)
            }
            None => {
                let candidates: Vec<&str> = self
                    .values
                    .iter()
                    .filter(|(_, (g, _))| matches!(g, Global::Function(_)))
                    .map(|(n, _)| n.as_str())
                    .chain(super::BUILTINS.iter().copied())
                    .collect();
                let mut diagnostic = Diagnostic::error(format!("cannot find function `{name}`"), call.callee.span);
                if let Some(close) = types::suggest(name, candidates) {
                    diagnostic = diagnostic.with_note(format!("did you mean `{close}`?"));
                }
                self.report(diagnostic);
                for arg in &call.args {
                    self.expr(arg, None);
                }
                None
            }
        }
    }

    fn atomic(&mut self, op: AtomicOp, call: &ast::Call) -> Option<Expr> {
        let name = call.callee.name.as_str();
        if self.body.kind.is_host() {
            let diagnostic = Diagnostic::error(format!("`{name}` is only allowed in kernels and functions"), call.span)
                .with_note("host code runs on one thread; assign the property directly");
            self.report(diagnostic);
            return None;
        }
        if call.args.len() != op.operands() + 1 {
            return self.builtin_arity(call, op.operands() + 1);
        }
        let target = &call.args[0];
        let (place, ty) = match self.lvalue(target) {
            Some(Lv::Place { place, ty, root: None }) => (place, ty),
            Some(Lv::Place { root: Some((local, _, _)), .. }) => {
                let diagnostic = Diagnostic::error(
                    format!("the first argument of `{name}` must be a property, not the local variable `{local}`"),
                    target.span,
                )
                .with_note("atomic operations act on memory shared between threads, such as `v.dist`");
                self.report(diagnostic);
                for operand in &call.args[1..] {
                    self.expr(operand, None);
                }
                return None;
            }
            Some(Lv::Value(_)) => {
                let message = format!("the first argument of `{name}` must be a property, such as `v.dist`");
                self.report(Diagnostic::error(message, target.span));
                return None;
            }
            None => {
                for operand in &call.args[1..] {
                    self.expr(operand, None);
                }
                return None;
            }
        };
        let arithmetic = matches!(op, AtomicOp::Add | AtomicOp::Sub);
        let bitwise = matches!(op, AtomicOp::And | AtomicOp::Or);
        // Handles (nodes, edges, elements) are compared and swapped: a lock-free list's head.
        let ok = match ty {
            Type::Scalar(Scalar::Bool) => !arithmetic,
            Type::Node | Type::Edge | Type::Element(_) => op == AtomicOp::Cas,
            _ if bitwise => types::is_integer(ty),
            _ => types::is_numeric(ty),
        };
        if !ok {
            let message = format!("`{name}` cannot act on a property of type `{}`", self.type_name(ty));
            return self.error(message, target.span);
        }
        let mut operands = Vec::new();
        let mut failed = false;
        for operand in &call.args[1..] {
            match self.expect(operand, ty) {
                Some(e) => operands.push(e),
                None => failed = true,
            }
        }
        if failed {
            return None;
        }
        Some(Expr::new(ExprKind::Atomic { op, place, operands }, Type::BOOL))
    }

    /// `G.name` outside a method call.
    fn graph_field(&mut self, field: &ast::Ident) -> Option<Expr> {
        let name = field.name.as_str();
        match self.graph_names.get(name).map(|(g, _)| *g) {
            Some(GraphName::Set(_)) => {
                let message = format!("`G.{name}` is a set; use `G.{name}.find(u)` or `G.{name}.union(u, v)`");
                self.error(message, field.span)
            }
            Some(GraphName::Collection(_)) => {
                let message = format!(
                    "`G.{name}` is a collection: iterate it with `forall t in G.{name}`, or call `G.{name}.add(...)` or `G.{name}.len()`"
                );
                self.error(message, field.span)
            }
            Some(GraphName::Property(_)) => {
                let message = format!("`{name}` is a property: read it through a node or an edge, as in `u.{name}`");
                self.error(message, field.span)
            }
            None => {
                let message = format!("the graph has no set named `{name}`");
                self.error(message, field.span)
            }
        }
    }

    fn method(&mut self, receiver: &ast::Expr, method: &ast::Ident, args: &[ast::Expr], span: Span) -> Option<Expr> {
        let name = method.name.as_str();
        if let ast::ExprKind::Graph = receiver.kind {
            return match name {
                "num_nodes" | "num_edges" => {
                    self.arguments(args, &[], &format!("`G.{name}`"), span)?;
                    Some(if name == "num_nodes" {
                        Expr::new(ExprKind::NumNodes, Type::U32)
                    } else {
                        Expr::new(ExprKind::NumEdges, Type::U64)
                    })
                }
                "nodes" | "edges" => {
                    let message = format!("`G.{name}()` is an iteration space: use it in `for`, `forall` or `initial`");
                    self.error(message, span)
                }
                "add_edge" | "remove_edge" | "add_node" | "remove_node" | "has_node" => {
                    self.edge_change(name, args, method.span, span)
                }
                _ => {
                    let candidates = [
                        "num_nodes",
                        "num_edges",
                        "nodes",
                        "edges",
                        "add_edge",
                        "remove_edge",
                        "add_node",
                        "remove_node",
                        "has_node",
                    ];
                    let mut diagnostic = Diagnostic::error(format!("the graph has no method `{name}`"), method.span);
                    if let Some(close) = types::suggest(name, candidates) {
                        diagnostic = diagnostic.with_note(format!("did you mean `{close}`?"));
                    }
                    self.report(diagnostic);
                    None
                }
            };
        }
        if let ast::ExprKind::Field { base, field } = &receiver.kind
            && let ast::ExprKind::Graph = base.kind
        {
            return match self.graph_names.get(&field.name).map(|(g, _)| *g) {
                Some(GraphName::Set(set)) => match name {
                    "find" => {
                        let mut args =
                            self.arguments(args, &[Some(Type::Node)], &format!("`G.{}.find`", field.name), span)?;
                        let node = Box::new(args.remove(0));
                        Some(Expr::new(ExprKind::SetFind { set, node }, Type::Node))
                    }
                    "union" => {
                        let params = [Some(Type::Node), Some(Type::Node)];
                        let mut args = self.arguments(args, &params, &format!("`G.{}.union`", field.name), span)?;
                        let b = Box::new(args.remove(1));
                        let a = Box::new(args.remove(0));
                        Some(Expr::new(ExprKind::SetUnion { set, a, b }, Type::BOOL))
                    }
                    _ => {
                        let message = format!("a set has the methods `find` and `union`, not `{name}`");
                        self.error(message, method.span)
                    }
                },
                Some(GraphName::Collection(collection)) => {
                    self.collection_method(collection, field, method, args, span)
                }
                _ => self.graph_field(field),
            };
        }
        let value = self.expr(receiver, None)?;
        if value.ty != Type::Node {
            let mut diagnostic = Diagnostic::error(
                format!("a value of type `{}` has no method `{name}`", self.type_name(value.ty)),
                method.span,
            );
            if value.ty == Type::Edge {
                diagnostic = diagnostic.with_note("an edge's endpoints are `e.src` and `e.dst`");
            }
            self.report(diagnostic);
            return None;
        }
        let node = Box::new(value);
        match name {
            "degree" | "in_degree" => {
                if name == "in_degree" {
                    self.note_fixed_graph(method.span, "an in-degree");
                }
                self.arguments(args, &[], &format!("`{name}`"), span)?;
                Some(Expr::new(ExprKind::Degree { node, reverse: name == "in_degree" }, Type::U32))
            }
            "neighbor" | "in_neighbor" => {
                self.note_fixed_graph(method.span, "an indexed neighbour (`neighbor(i)`)");
                let mut args = self.arguments(args, &[Some(Type::U32)], &format!("`{name}`"), span)?;
                let index = Box::new(args.remove(0));
                Some(Expr::new(ExprKind::Neighbor { node, index, reverse: name == "in_neighbor" }, Type::Node))
            }
            _ if adjacency(name).is_some() => {
                let message = format!("`{name}()` is an iteration space: use it in `for` or `forall`");
                self.error(message, span)
            }
            _ => {
                let mut diagnostic = Diagnostic::error(format!("a `Node` has no method `{name}`"), method.span);
                if let Some(close) = types::suggest(name, NODE_METHODS.iter().copied()) {
                    diagnostic = diagnostic.with_note(format!("did you mean `{close}`?"));
                }
                self.report(diagnostic);
                None
            }
        }
    }

    /// `G.add_edge(u, v)`, `G.add_edge(u, v, w)`, `G.remove_edge(e)`, `G.add_node()` and
    /// `G.remove_node(u)`: kernels change the graph (see `grail_ir::GraphGrowth`); and
    /// `G.has_node(u)`, which asks whether a node is there.
    fn edge_change(&mut self, name: &str, args: &[ast::Expr], at: Span, span: Span) -> Option<Expr> {
        if self.body.kind.is_host() {
            let what = if name == "has_node" { "kernels ask it" } else { "kernels change the graph" };
            let message = format!("host code cannot call `G.{name}`: {what}");
            let diagnostic = Diagnostic::error(message, at)
                .with_note("call it in a kernel (or a function a kernel calls), then `invoke` the kernel");
            self.report(diagnostic);
            return None;
        }
        self.note_kernel_only(at);
        let callee = format!("`G.{name}`");
        if name == "add_node" {
            self.edge_changes.nodes_added.get_or_insert(at);
            self.arguments(args, &[], &callee, span)?;
            return Some(Expr::new(ExprKind::AddNode, Type::Node));
        }
        if name == "remove_node" || name == "has_node" {
            if name == "remove_node" {
                self.edge_changes.nodes_removed.get_or_insert(at);
            }
            let mut args = self.arguments(args, &[Some(Type::Node)], &callee, span)?;
            let node = Box::new(args.remove(0));
            let kind = if name == "remove_node" { ExprKind::RemoveNode(node) } else { ExprKind::HasNode(node) };
            return Some(Expr::new(kind, Type::BOOL));
        }
        if name == "remove_edge" {
            self.edge_changes.removed.get_or_insert(at);
            let mut args = self.arguments(args, &[Some(Type::Edge)], &callee, span)?;
            return Some(Expr::new(ExprKind::RemoveEdge(Box::new(args.remove(0))), Type::BOOL));
        }
        self.edge_changes.added.get_or_insert(at);
        let weight = self.props.iter().find(|p| p.is_weight).map(|p| p.ty);
        let mut params = vec![Some(Type::Node), Some(Type::Node)];
        if args.len() == 3 {
            match weight {
                Some(ty) => params.push(ty),
                None => {
                    let message =
                        "`G.add_edge(u, v, w)` sets the new edge's `weight`, which the graph block does not declare";
                    let diagnostic = Diagnostic::error(message, span)
                        .with_note("declare `edge weight: u32;` (or another numeric type) in the graph block");
                    self.report(diagnostic);
                    return None;
                }
            }
        }
        let mut args = self.arguments(args, &params, &callee, span)?;
        let weight = (args.len() == 3).then(|| Box::new(args.remove(2)));
        let dst = Box::new(args.remove(1));
        let src = Box::new(args.remove(0));
        Some(Expr::new(ExprKind::AddEdge { src, dst, weight }, Type::Edge))
    }

    /// Records a use of something only the input graph has (indexed neighbours, in-edges), an
    /// error if a kernel also adds or removes edges.
    fn note_fixed_graph(&mut self, at: Span, what: &'static str) {
        self.edge_changes.fixed_reads.push((at, what));
    }

    /// `G.coll.add(value)`, `G.coll.len()`, `G.coll.remove(t)` and `G.coll.has(t)`.
    fn collection_method(
        &mut self,
        collection: CollectionId,
        field: &ast::Ident,
        method: &ast::Ident,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<Expr> {
        let callee = format!("`G.{}.{}`", field.name, method.name);
        match method.name.as_str() {
            "add" => {
                let element = self.collections[collection.index()].element.map(Type::Struct);
                let mut args = self.arguments(args, &[element], &callee, span)?;
                let value = Box::new(args.remove(0));
                Some(Expr::new(ExprKind::CollectionAdd { collection, value }, Type::Element(collection)))
            }
            "len" => {
                self.arguments(args, &[], &callee, span)?;
                Some(Expr::new(ExprKind::CollectionLen(collection), Type::U32))
            }
            "compact" => {
                self.arguments(args, &[], &callee, span)?;
                if !self.body.kind.is_host() {
                    let message = "only host code compacts a collection: kernels run while handles are in use";
                    return self.error(message, method.span);
                }
                Some(Expr::new(ExprKind::CollectionCompact(collection), Type::U32))
            }
            "remove" | "has" => {
                match self.body.kind {
                    BodyKind::Host { .. } => {
                        let message = format!("host code cannot {} elements: kernels do", method.name);
                        let diagnostic = Diagnostic::error(message, method.span)
                            .with_note("`main` adds elements and counts them; kernels remove and test them");
                        self.report(diagnostic);
                        return None;
                    }
                    BodyKind::Function { id, .. } => {
                        self.element_access[id.index()].get_or_insert(method.span);
                    }
                    _ => {}
                }
                let mut args = self.arguments(args, &[Some(Type::Element(collection))], &callee, span)?;
                let element = Box::new(args.remove(0));
                let kind = if method.name == "remove" {
                    ExprKind::CollectionRemove { collection, element }
                } else {
                    ExprKind::CollectionHas { collection, element }
                };
                Some(Expr::new(kind, Type::BOOL))
            }
            other => {
                let mut diagnostic = Diagnostic::error(
                    format!("a collection has the methods `add`, `len`, `remove`, `has` and `compact`, not `{other}`"),
                    method.span,
                );
                if let Some(close) = types::suggest(other, ["add", "len", "remove", "has", "compact"]) {
                    diagnostic = diagnostic.with_note(format!("did you mean `{close}`?"));
                }
                self.report(diagnostic);
                None
            }
        }
    }

    /// `element.field` where `element` is a handle into `collection`.
    fn element_field(&mut self, element: Expr, collection: CollectionId, field: &ast::Ident) -> Option<Lv> {
        let struct_id = self.collections[collection.index()].element?;
        let info = &self.structs[struct_id.index()];
        let Some(index) = info.fields.iter().position(|(n, _)| *n == field.name) else {
            let names: Vec<&str> = info.fields.iter().map(|(n, _)| n.as_str()).collect();
            let message = format!(
                "the elements of `{}` (struct `{}`) have no field `{}`",
                self.collections[collection.index()].name,
                info.ast.name.name,
                field.name
            );
            let mut diagnostic = Diagnostic::error(message, field.span);
            if let Some(close) = types::suggest(&field.name, names) {
                diagnostic = diagnostic.with_note(format!("did you mean `{close}`?"));
            }
            self.report(diagnostic);
            return None;
        };
        let ty = info.fields[index].1?;
        match self.body.kind {
            BodyKind::Host { .. } => {
                let diagnostic =
                    Diagnostic::error("host code cannot read or write the fields of collection elements", field.span)
                        .with_note("`main` adds elements and counts them; kernels read and write their fields");
                self.report(diagnostic);
                return None;
            }
            BodyKind::Function { id, .. } => {
                let first = &mut self.element_access[id.index()];
                first.get_or_insert(field.span);
            }
            _ => {}
        }
        let place = Place::ElementField { collection, element: Box::new(element), field: index as u32 };
        Some(Lv::Place { place, ty, root: None })
    }

    /// A name, field chain or other expression as something that may be written.
    pub(super) fn lvalue(&mut self, e: &ast::Expr) -> Option<Lv> {
        match &e.kind {
            ast::ExprKind::Name(ident) => match self.body.lookup(&ident.name) {
                Some(Binding::Local { id, ty, mutable, span }) => Some(Lv::Place {
                    place: Place::Local(*id),
                    ty: *ty,
                    root: Some((ident.name.clone(), *span, *mutable)),
                }),
                Some(Binding::Poisoned) => None,
                None => Some(Lv::Value(self.name(ident)?)),
            },
            ast::ExprKind::Index { base, index } => {
                let base_lv = self.lvalue(base)?;
                let index = self.expr(index, Some(Type::U32))?;
                let Type::Array(array) = base_lv.ty() else {
                    let message = format!("`[...]` indexes arrays, not `{}`", self.type_name(base_lv.ty()));
                    return self.error(message, e.span);
                };
                if !types::is_integer(index.ty) {
                    let message = format!("an array index is an integer, not `{}`", self.type_name(index.ty));
                    return self.error(message, e.span);
                }
                if self.body.kind.is_host() {
                    return self.error("arrays are for kernels and the functions they call", e.span);
                }
                self.note_kernel_only(e.span);
                let ty = self.arrays[array.index()].element;
                match base_lv {
                    Lv::Place { place, root, .. } => Some(Lv::Place {
                        place: Place::Index { base: Box::new(place), index: Box::new(index) },
                        ty,
                        root,
                    }),
                    Lv::Value(_) => self.error("only an array held in a variable can be indexed", e.span),
                }
            }
            ast::ExprKind::Field { base, field } if !matches!(base.kind, ast::ExprKind::Graph) => {
                let base_lv = self.lvalue(base)?;
                match base_lv.ty() {
                    Type::Node | Type::Edge => self.property(base_lv.into_expr(), field),
                    Type::Element(collection) => self.element_field(base_lv.into_expr(), collection, field),
                    Type::Struct(id) => self.struct_field(base_lv, id, field),
                    other => {
                        let message = format!(
                            "a value of type `{}` has no field or property `{}`",
                            self.type_name(other),
                            field.name
                        );
                        self.error(message, field.span)
                    }
                }
            }
            _ => Some(Lv::Value(self.expr(e, None)?)),
        }
    }

    /// `element.name` where `element` is a node or an edge.
    fn property(&mut self, element: Expr, field: &ast::Ident) -> Option<Lv> {
        let name = field.name.as_str();
        let owner = if element.ty == Type::Node { Owner::Node } else { Owner::Edge };
        if owner == Owner::Edge && (name == "src" || name == "dst") {
            let kind = if name == "src" {
                ExprKind::EdgeSource(Box::new(element))
            } else {
                ExprKind::EdgeTarget(Box::new(element))
            };
            return Some(Lv::Value(Expr::new(kind, Type::Node)));
        }
        let kind_name = |o: Owner| if o == Owner::Node { "node" } else { "edge" };
        match self.graph_names.get(name).map(|(g, s)| (*g, *s)) {
            Some((GraphName::Property(id), at)) => {
                let prop = &self.props[id.index()];
                if prop.owner != owner {
                    let message = format!(
                        "`{name}` is {} property, but this is {}",
                        if prop.owner == Owner::Node { "a node" } else { "an edge" },
                        if owner == Owner::Node { "a `Node`" } else { "an `Edge`" }
                    );
                    let mut diagnostic = Diagnostic::error(message, field.span).with_label(at, "declared here");
                    if owner == Owner::Edge {
                        diagnostic = diagnostic
                            .with_note(format!("an edge's endpoints are `e.src` and `e.dst`: `e.dst.{name}`"));
                    }
                    self.report(diagnostic);
                    return None;
                }
                let ty = prop.ty?;
                Some(Lv::Place { place: Place::Property { property: id, element: Box::new(element) }, ty, root: None })
            }
            Some((GraphName::Set(_), _)) => {
                let message = format!("`{name}` is a set: use `G.{name}.find(u)` or `G.{name}.union(u, v)`");
                self.error(message, field.span)
            }
            Some((GraphName::Collection(_), _)) => {
                let message = format!("`{name}` is a collection, not a property: it is `G.{name}`");
                self.error(message, field.span)
            }
            None => {
                let mut candidates: Vec<&str> =
                    self.props.iter().filter(|p| p.owner == owner).map(|p| p.name.as_str()).collect();
                if owner == Owner::Edge {
                    candidates.extend(["src", "dst"]);
                }
                let mut diagnostic =
                    Diagnostic::error(format!("there is no {} property named `{name}`", kind_name(owner)), field.span);
                if let Some(close) = types::suggest(name, candidates) {
                    diagnostic = diagnostic.with_note(format!("did you mean `{close}`?"));
                } else if owner == Owner::Node && NODE_METHODS.contains(&name) {
                    diagnostic = diagnostic.with_note(format!("`{name}` is a method: `u.{name}(...)`"));
                }
                self.report(diagnostic);
                None
            }
        }
    }

    fn struct_field(&mut self, base: Lv, id: StructId, field: &ast::Ident) -> Option<Lv> {
        let info = &self.structs[id.index()];
        let Some(index) = info.fields.iter().position(|(n, _)| *n == field.name) else {
            let names: Vec<&str> = info.fields.iter().map(|(n, _)| n.as_str()).collect();
            let mut diagnostic =
                Diagnostic::error(format!("struct `{}` has no field `{}`", info.ast.name.name, field.name), field.span);
            if let Some(close) = types::suggest(&field.name, names) {
                diagnostic = diagnostic.with_note(format!("did you mean `{close}`?"));
            }
            self.report(diagnostic);
            return None;
        };
        let ty = info.fields[index].1?;
        let index = index as u32;
        Some(match base {
            Lv::Place { place, root, .. } => {
                Lv::Place { place: Place::Field { base: Box::new(place), field: index }, ty, root }
            }
            Lv::Value(value) => Lv::Value(Expr::new(ExprKind::Field(Box::new(value), index), ty)),
        })
    }

    fn struct_literal(&mut self, name: &ast::Ident, fields: &[ast::FieldInit], span: Span) -> Option<Expr> {
        let Some(&id) = self.types.get(&name.name) else {
            let known = self.structs.iter().any(|s| s.ast.name.name == name.name);
            if !known {
                let candidates: Vec<&str> = self.types.keys().map(String::as_str).collect();
                let mut diagnostic = Diagnostic::error(format!("unknown struct `{}`", name.name), name.span);
                if let Some(close) = types::suggest(&name.name, candidates) {
                    diagnostic = diagnostic.with_note(format!("did you mean `{close}`?"));
                }
                self.report(diagnostic);
            }
            for field in fields {
                self.expr(&field.value, None);
            }
            return None;
        };
        let declared: Vec<(String, Option<Type>)> = self.structs[id.index()].fields.clone();
        let mut values: Vec<Option<Expr>> = vec![None; declared.len()];
        let mut given = vec![false; declared.len()];
        let mut ok = true;
        for field in fields {
            let Some(index) = declared.iter().position(|(n, _)| *n == field.name.name) else {
                let message = format!("struct `{}` has no field `{}`", name.name, field.name.name);
                self.report(Diagnostic::error(message, field.name.span));
                self.expr(&field.value, None);
                ok = false;
                continue;
            };
            if std::mem::replace(&mut given[index], true) {
                let message = format!("field `{}` is given twice", field.name.name);
                self.report(Diagnostic::error(message, field.name.span));
                ok = false;
                continue;
            }
            values[index] = match declared[index].1 {
                Some(ty) => self.expect(&field.value, ty),
                None => {
                    self.expr(&field.value, None);
                    None
                }
            };
            ok &= values[index].is_some();
        }
        let missing: Vec<&str> =
            declared.iter().zip(&given).filter(|(_, g)| !**g).map(|((n, _), _)| n.as_str()).collect();
        if !missing.is_empty() {
            let list = missing.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
            let message = format!("struct `{}` is missing {list}", name.name);
            self.report(Diagnostic::error(message, span));
            return None;
        }
        if !ok {
            return None;
        }
        let values = values.into_iter().collect::<Option<Vec<_>>>()?;
        Some(Expr::new(ExprKind::Struct(id, values), Type::Struct(id)))
    }

    /// What a `for`, `forall` or `initial` iterates.
    pub(super) fn iteration(&mut self, e: &ast::Expr) -> Option<Iter> {
        use ast::ExprKind as K;
        match &e.kind {
            K::Worklist => return Some(Iter::Worklist),
            K::Range { start, end } => {
                let (s, t) = self.operands(start, end, None);
                let (s, t) = (s?, t?);
                if s.ty != t.ty {
                    let (st, tt) = (self.type_name(s.ty), self.type_name(t.ty));
                    let message = format!("a range needs bounds of the same type, found `{st}` and `{tt}`");
                    return self.error(message, e.span);
                }
                if !types::is_integer(s.ty) {
                    let message = format!("a range runs over integers, not `{}`", self.type_name(s.ty));
                    return self.error(message, e.span);
                }
                return Some(Iter::Range(s, t));
            }
            K::MethodCall { receiver, method, args } => {
                let name = method.name.as_str();
                if let K::Graph = receiver.kind
                    && matches!(name, "nodes" | "edges")
                {
                    self.arguments(args, &[], &format!("`G.{name}`"), e.span)?;
                    return Some(if name == "nodes" { Iter::AllNodes } else { Iter::AllEdges });
                }
                if let Some(adjacency) = adjacency(name)
                    && !matches!(receiver.kind, K::Graph)
                {
                    let node = self.expr(receiver, None)?;
                    if node.ty != Type::Node {
                        let message = format!("`{name}()` is a method of nodes, not of `{}`", self.type_name(node.ty));
                        return self.error(message, method.span);
                    }
                    self.arguments(args, &[], &format!("`{name}`"), e.span)?;
                    if adjacency.uses_reverse() {
                        self.note_fixed_graph(method.span, "in-edges");
                    }
                    return Some(Iter::Adjacent(adjacency, node));
                }
            }
            K::Field { base, field } if matches!(base.kind, K::Graph) => {
                if let Some((GraphName::Collection(id), _)) = self.graph_names.get(&field.name) {
                    return Some(Iter::Collection(*id));
                }
            }
            _ => {}
        }
        let value = self.expr(e, None)?;
        let diagnostic = Diagnostic::error(format!("cannot iterate over a value of type `{}`", self.type_name(value.ty)), e.span)
            .with_note("loops run over a range `a..b`, `G.nodes()`, `G.edges()`, a collection `G.name`, or a node's `out_edges()`, `in_edges()`, `neighbors()` or `in_neighbors()`");
        self.report(diagnostic);
        None
    }

    /// Whether every thread of a kernel computes the same value for `e`: it reads only constants,
    /// params, the graph's size and uniform locals. Host code is one thread, so always.
    pub(super) fn is_uniform(&self, e: &Expr) -> bool {
        if self.body.kind.is_host() {
            return true;
        }
        match &e.kind {
            ExprKind::Const(_)
            | ExprKind::Param(_)
            | ExprKind::NumNodes
            | ExprKind::NumEdges
            | ExprKind::NodeIds
            | ExprKind::EdgeIds => true,
            ExprKind::Load(place) => self.place_uniform(place),
            ExprKind::Unary(_, x) | ExprKind::Cast(x) | ExprKind::Field(x, _) => self.is_uniform(x),
            ExprKind::Binary(_, a, b) => self.is_uniform(a) && self.is_uniform(b),
            ExprKind::Builtin(_, args) | ExprKind::Struct(_, args) => args.iter().all(|a| self.is_uniform(a)),
            _ => false,
        }
    }

    fn place_uniform(&self, place: &Place) -> bool {
        match place {
            Place::Local(id) => self.body.uniform.get(id.index()).copied().unwrap_or(false),
            Place::Field { base, .. } => self.place_uniform(base),
            Place::Property { .. } | Place::ElementField { .. } | Place::Index { .. } => false,
        }
    }

    /// Records that the function being lowered uses something only kernels have (element
    /// fields, arrays), so that `main` may not call it.
    pub(super) fn note_kernel_only(&mut self, at: Span) {
        if let BodyKind::Function { id, .. } = self.body.kind {
            self.element_access[id.index()].get_or_insert(at);
        }
    }
}
