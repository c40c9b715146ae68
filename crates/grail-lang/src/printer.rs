//! Prints an AST back as canonical grail source: four-space indentation, one statement per line,
//! a blank line between items (but not between consecutive params, outputs or constants), and
//! parentheses exactly where precedence needs them. Parsing the output gives the same tree back
//! (spans aside), and printing that again gives the same text.

use std::fmt::Write;

use crate::ast::*;
use crate::token::Base;

/// The program as canonical source.
pub fn print_program(program: &Program) -> String {
    let mut printer = Printer { out: String::new(), indent: 0 };
    let mut previous: Option<&ItemKind> = None;
    for item in &program.items {
        if let Some(previous) = previous {
            let grouped = matches!(
                (previous, &item.kind),
                (ItemKind::Param(_), ItemKind::Param(_))
                    | (ItemKind::Output(_), ItemKind::Output(_))
                    | (ItemKind::Input(_), ItemKind::Input(_))
                    | (ItemKind::Const(_), ItemKind::Const(_))
            );
            if !grouped {
                printer.out.push('\n');
            }
        }
        printer.item(item);
        previous = Some(&item.kind);
    }
    printer.out
}

/// One expression as source (no surrounding context).
pub fn print_expr(expr: &Expr) -> String {
    let mut printer = Printer { out: String::new(), indent: 0 };
    printer.expr(expr);
    printer.out
}

struct Printer {
    out: String,
    indent: usize,
}

/// Binding strength of an expression's outermost operator, on `BinaryOp::precedence`'s scale.
fn precedence(expr: &Expr) -> u8 {
    match &expr.kind {
        ExprKind::Range { .. } => 1,
        ExprKind::Binary { op, .. } => op.precedence(),
        ExprKind::Cast { .. } => 11,
        ExprKind::Unary { .. } => 12,
        _ => 13,
    }
}

/// Whether a struct literal occurs anywhere inside, which a condition must then parenthesise.
fn contains_struct_literal(expr: &Expr) -> bool {
    match &expr.kind {
        ExprKind::StructLiteral { .. } => true,
        ExprKind::Unary { operand, .. } => contains_struct_literal(operand),
        ExprKind::Binary { lhs, rhs, .. } => contains_struct_literal(lhs) || contains_struct_literal(rhs),
        ExprKind::Range { start, end } => contains_struct_literal(start) || contains_struct_literal(end),
        ExprKind::Cast { expr, .. } => contains_struct_literal(expr),
        ExprKind::Field { base, .. } | ExprKind::Index { base, .. } => contains_struct_literal(base),
        ExprKind::MethodCall { receiver, .. } => contains_struct_literal(receiver),
        _ => false,
    }
}

/// Whether the leftmost token would be `invoke`, which at the start of a statement means the
/// `invoke` statement rather than an expression.
fn starts_with_invoke(expr: &Expr) -> bool {
    match &expr.kind {
        ExprKind::Invoke(_) => true,
        ExprKind::Binary { lhs, .. } => starts_with_invoke(lhs),
        ExprKind::Cast { expr, .. } => starts_with_invoke(expr),
        ExprKind::Field { base, .. } | ExprKind::Index { base, .. } => starts_with_invoke(base),
        ExprKind::MethodCall { receiver, .. } => starts_with_invoke(receiver),
        _ => false,
    }
}

impl Printer {
    fn line_start(&mut self) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
    }

    fn item(&mut self, item: &Item) {
        match &item.kind {
            ItemKind::Graph(graph) => {
                if graph.decls.is_empty() {
                    self.out.push_str("graph {}\n");
                    return;
                }
                self.out.push_str("graph {\n");
                self.indent += 1;
                for decl in &graph.decls {
                    self.line_start();
                    match &decl.kind {
                        GraphDeclKind::Property { owner, name, ty, init } => {
                            let word = if *owner == PropertyOwner::Node { "node" } else { "edge" };
                            let _ = write!(self.out, "{word} {}: {}", name.name, ty.kind.name());
                            if let Some(init) = init {
                                self.out.push_str(" = ");
                                self.expr(init);
                            }
                        }
                        GraphDeclKind::Set { name } => {
                            let _ = write!(self.out, "set {}", name.name);
                        }
                        GraphDeclKind::Collection { name, ty } => {
                            let _ = write!(self.out, "collection {}: {}", name.name, ty.kind.name());
                        }
                        GraphDeclKind::Merge { property, function } => {
                            let _ = write!(self.out, "merge {} with {}", property.name, function.name);
                        }
                    }
                    self.out.push_str(";\n");
                }
                self.indent -= 1;
                self.out.push_str("}\n");
            }
            ItemKind::Param(param) => {
                let _ = write!(self.out, "param {}: {}", param.name.name, param.ty.kind.name());
                if let Some(default) = &param.default {
                    self.out.push_str(" = ");
                    self.expr(default);
                }
                self.out.push_str(";\n");
            }
            ItemKind::Output(output) => {
                let _ = writeln!(self.out, "output {};", output.name.name);
            }
            ItemKind::Input(input) => {
                let _ = writeln!(self.out, "input {};", input.name.name);
            }
            ItemKind::Const(constant) => {
                let _ = write!(self.out, "const {}: {} = ", constant.name.name, constant.ty.kind.name());
                self.expr(&constant.value);
                self.out.push_str(";\n");
            }
            ItemKind::Struct(decl) => {
                let _ = write!(self.out, "struct {} {{", decl.name.name);
                if decl.fields.is_empty() {
                    self.out.push_str("}\n");
                    return;
                }
                self.out.push('\n');
                for field in &decl.fields {
                    let _ = writeln!(self.out, "    {}: {},", field.name.name, field.ty.kind.name());
                }
                self.out.push_str("}\n");
            }
            ItemKind::Function(function) => {
                let _ = write!(self.out, "fn {}", function.name.name);
                self.params(&function.params);
                if let Some(ret) = &function.ret {
                    let _ = write!(self.out, " -> {}", ret.kind.name());
                }
                self.out.push(' ');
                self.block(&function.body);
                self.out.push('\n');
            }
            ItemKind::Kernel(kernel) => {
                let _ = write!(self.out, "kernel {}", kernel.name.name);
                self.params(&kernel.params);
                if let Some(reduction) = &kernel.reduction {
                    let _ = write!(self.out, " -> {} {}", reduction.op.as_str(), reduction.ty.kind.name());
                }
                self.out.push(' ');
                self.block(&kernel.body);
                self.out.push('\n');
            }
        }
    }

    fn params(&mut self, params: &[FieldDecl]) {
        self.out.push('(');
        for (i, param) in params.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            let _ = write!(self.out, "{}: {}", param.name.name, param.ty.kind.name());
        }
        self.out.push(')');
    }

    /// `{ ... }` starting at the cursor and ending after `}` (no newline).
    fn block(&mut self, block: &Block) {
        if block.stmts.is_empty() {
            self.out.push_str("{}");
            return;
        }
        self.out.push_str("{\n");
        self.indent += 1;
        for stmt in &block.stmts {
            self.line_start();
            self.stmt(stmt);
            self.out.push('\n');
        }
        self.indent -= 1;
        self.line_start();
        self.out.push('}');
    }

    fn stmt(&mut self, stmt: &Stmt) {
        match &stmt.kind {
            StmtKind::Let { mutable, name, ty, value } => {
                self.out.push_str(if *mutable { "let mut " } else { "let " });
                self.out.push_str(&name.name);
                if let Some(ty) = ty {
                    let _ = write!(self.out, ": {}", ty.kind.name());
                }
                if let Some(value) = value {
                    self.out.push_str(" = ");
                    self.expr(value);
                }
                self.out.push(';');
            }
            StmtKind::Assign { place, op, value } => {
                self.expr(place);
                let _ = write!(self.out, " {} ", op.as_str());
                self.expr(value);
                self.out.push(';');
            }
            StmtKind::If { cond, then, otherwise } => {
                self.out.push_str("if ");
                self.condition(cond);
                self.out.push(' ');
                self.block(then);
                match otherwise {
                    None => {}
                    Some(Else::Block(block)) => {
                        self.out.push_str(" else ");
                        self.block(block);
                    }
                    Some(Else::If(next)) => {
                        self.out.push_str(" else ");
                        self.stmt(next);
                    }
                }
            }
            StmtKind::While { cond, body } => {
                self.out.push_str("while ");
                self.condition(cond);
                self.out.push(' ');
                self.block(body);
            }
            StmtKind::For { var, iter, body } => {
                let _ = write!(self.out, "for {} in ", var.name);
                self.condition(iter);
                self.out.push(' ');
                self.block(body);
            }
            StmtKind::ForAll { var, ty, space, filter, body } => {
                let _ = write!(self.out, "forall {}", var.name);
                if let Some(ty) = ty {
                    let _ = write!(self.out, ": {}", ty.kind.name());
                }
                self.out.push_str(" in ");
                self.condition(space);
                if let Some(filter) = filter {
                    self.out.push_str(" where ");
                    self.condition(filter);
                }
                self.out.push(' ');
                self.block(body);
            }
            StmtKind::Break => self.out.push_str("break;"),
            StmtKind::Continue => self.out.push_str("continue;"),
            StmtKind::Return(value) => {
                self.out.push_str("return");
                if let Some(value) = value {
                    self.out.push(' ');
                    self.expr(value);
                }
                self.out.push(';');
            }
            StmtKind::Push(item) | StmtKind::Retry(item) => {
                self.out.push_str(if matches!(stmt.kind, StmtKind::Push(_)) { "push(" } else { "retry(" });
                self.expr(item);
                self.out.push_str(");");
            }
            StmtKind::Reduce(value) => {
                self.out.push_str("reduce ");
                self.expr(value);
                self.out.push(';');
            }
            StmtKind::Atomic { target, body, otherwise } => {
                self.lock("atomic", std::slice::from_ref(target), body, otherwise.as_ref());
            }
            StmtKind::Exclusive { targets, body, otherwise } => {
                self.lock("exclusive", targets, body, otherwise.as_ref());
            }
            StmtKind::Single { target, body, otherwise } => {
                self.lock("single", std::slice::from_ref(target), body, otherwise.as_ref());
            }
            StmtKind::Invoke(call) => {
                self.out.push_str("invoke ");
                self.call(call);
                self.out.push(';');
            }
            StmtKind::Iterate { call, initial, body } => {
                self.out.push_str("iterate ");
                self.call(call);
                self.initial(initial.as_ref());
                match body {
                    Some(body) => {
                        self.out.push(' ');
                        self.block(body);
                    }
                    None => self.out.push(';'),
                }
            }
            StmtKind::IterateLoop { body, condition, cond } => {
                self.out.push_str("iterate ");
                self.block(body);
                self.out.push_str(if *condition == LoopCondition::While { " while " } else { " until " });
                self.expr(cond);
                self.out.push(';');
            }
            StmtKind::Pipe { once, initial, body } => {
                self.out.push_str(if *once { "pipe once" } else { "pipe" });
                self.initial(initial.as_ref());
                self.out.push(' ');
                self.block(body);
            }
            StmtKind::Expr(expr) => {
                if starts_with_invoke(expr) {
                    self.out.push('(');
                    self.expr(expr);
                    self.out.push(')');
                } else {
                    self.expr(expr);
                }
                self.out.push(';');
            }
        }
    }

    fn lock(&mut self, word: &str, targets: &[Expr], body: &Block, otherwise: Option<&Block>) {
        self.out.push_str(word);
        self.args(targets);
        self.out.push(' ');
        self.block(body);
        if let Some(otherwise) = otherwise {
            self.out.push_str(" else ");
            self.block(otherwise);
        }
    }

    fn initial(&mut self, initial: Option<&Initial>) {
        match initial {
            None => {}
            Some(Initial::List { items, .. }) => {
                self.out.push_str(" initial [");
                self.comma_separated(items);
                self.out.push(']');
            }
            Some(Initial::Expr(expr)) => {
                self.out.push_str(" initial ");
                self.condition(expr);
            }
        }
    }

    /// An expression followed by a block: struct literals inside need parentheses.
    fn condition(&mut self, expr: &Expr) {
        if let ExprKind::Range { start, end } = &expr.kind {
            self.condition(start);
            self.out.push_str("..");
            self.condition(end);
        } else if contains_struct_literal(expr) {
            self.out.push('(');
            self.expr(expr);
            self.out.push(')');
        } else {
            self.expr(expr);
        }
    }

    fn call(&mut self, call: &Call) {
        self.out.push_str(&call.callee.name);
        self.args(&call.args);
    }

    fn args(&mut self, args: &[Expr]) {
        self.out.push('(');
        self.comma_separated(args);
        self.out.push(')');
    }

    fn comma_separated(&mut self, exprs: &[Expr]) {
        for (i, expr) in exprs.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.expr(expr);
        }
    }

    fn operand(&mut self, expr: &Expr, parenthesise: bool) {
        if parenthesise {
            self.out.push('(');
        }
        self.expr(expr);
        if parenthesise {
            self.out.push(')');
        }
    }

    fn expr(&mut self, expr: &Expr) {
        match &expr.kind {
            ExprKind::Int { value, base, suffix } => {
                let _ = match base {
                    Base::Decimal => write!(self.out, "{value}"),
                    Base::Hex => write!(self.out, "0x{value:x}"),
                    Base::Binary => write!(self.out, "0b{value:b}"),
                };
                if let Some(suffix) = suffix {
                    self.out.push_str(suffix.as_str());
                }
            }
            ExprKind::Float { value, suffix } => {
                // `{:?}` always writes a `.` or an exponent, so the text reads back as a float.
                let _ = write!(self.out, "{value:?}");
                if let Some(suffix) = suffix {
                    self.out.push_str(suffix.as_str());
                }
            }
            ExprKind::Bool(value) => self.out.push_str(if *value { "true" } else { "false" }),
            ExprKind::Str(text) => {
                self.out.push('"');
                for c in text.chars() {
                    match c {
                        '\n' => self.out.push_str("\\n"),
                        '\t' => self.out.push_str("\\t"),
                        '\\' => self.out.push_str("\\\\"),
                        '"' => self.out.push_str("\\\""),
                        c => self.out.push(c),
                    }
                }
                self.out.push('"');
            }
            ExprKind::Name(name) => self.out.push_str(&name.name),
            ExprKind::Graph => self.out.push('G'),
            ExprKind::Inf => self.out.push_str("INF"),
            ExprKind::Worklist => self.out.push_str("worklist"),
            ExprKind::Unary { op, operand } => {
                self.out.push(if *op == UnaryOp::Neg { '-' } else { '!' });
                self.operand(operand, precedence(operand) < 12);
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let p = op.precedence();
                // Left-associative; comparisons do not chain, so a comparison operand needs
                // parentheses on either side.
                self.operand(lhs, precedence(lhs) < p || (op.is_comparison() && precedence(lhs) == p));
                let _ = write!(self.out, " {} ", op.as_str());
                self.operand(rhs, precedence(rhs) <= p);
            }
            ExprKind::Cast { expr, ty } => {
                self.operand(expr, precedence(expr) < 11);
                let _ = write!(self.out, " as {}", ty.kind.name());
            }
            ExprKind::Call(call) => self.call(call),
            ExprKind::MethodCall { receiver, method, args } => {
                self.operand(receiver, precedence(receiver) < 13);
                let _ = write!(self.out, ".{}", method.name);
                self.args(args);
            }
            ExprKind::Field { base, field } => {
                self.operand(base, precedence(base) < 13);
                let _ = write!(self.out, ".{}", field.name);
            }
            ExprKind::Index { base, index } => {
                self.operand(base, precedence(base) < 13);
                self.out.push('[');
                self.expr(index);
                self.out.push(']');
            }
            ExprKind::StructLiteral { name, fields } => {
                self.out.push_str(&name.name);
                if fields.is_empty() {
                    self.out.push_str(" {}");
                    return;
                }
                self.out.push_str(" { ");
                for (i, field) in fields.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    let _ = write!(self.out, "{}: ", field.name.name);
                    self.expr(&field.value);
                }
                self.out.push_str(" }");
            }
            ExprKind::Range { start, end } => {
                self.expr(start);
                self.out.push_str("..");
                self.expr(end);
            }
            ExprKind::Invoke(call) => {
                self.out.push_str("invoke ");
                self.call(call);
            }
            ExprKind::Error => self.out.push_str("/* error */"),
        }
    }
}
