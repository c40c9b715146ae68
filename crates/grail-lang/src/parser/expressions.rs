//! Expressions: precedence climbing with Rust's operator order. `as` binds tighter than every
//! binary operator and looser than unary ones; comparisons do not chain.

use super::{PResult, Parser};
use crate::ast::*;
use crate::diagnostics::Diagnostic;
use crate::token::{Keyword, TokenKind};

fn binary_op(kind: &TokenKind) -> Option<BinaryOp> {
    Some(match kind {
        TokenKind::Star => BinaryOp::Mul,
        TokenKind::Slash => BinaryOp::Div,
        TokenKind::Percent => BinaryOp::Rem,
        TokenKind::Plus => BinaryOp::Add,
        TokenKind::Minus => BinaryOp::Sub,
        TokenKind::Shl => BinaryOp::Shl,
        TokenKind::Shr => BinaryOp::Shr,
        TokenKind::And => BinaryOp::BitAnd,
        TokenKind::Caret => BinaryOp::BitXor,
        TokenKind::Or => BinaryOp::BitOr,
        TokenKind::EqEq => BinaryOp::Eq,
        TokenKind::NotEq => BinaryOp::Ne,
        TokenKind::Lt => BinaryOp::Lt,
        TokenKind::Le => BinaryOp::Le,
        TokenKind::Gt => BinaryOp::Gt,
        TokenKind::Ge => BinaryOp::Ge,
        TokenKind::AndAnd => BinaryOp::And,
        TokenKind::OrOr => BinaryOp::Or,
        _ => return None,
    })
}

impl Parser {
    pub(super) fn expr(&mut self) -> PResult<Expr> {
        self.binary(0)
    }

    /// Operands and operators at or above `min` precedence. Every operator applied makes the tree
    /// one level deeper, so each counts against the nesting limit.
    fn binary(&mut self, min: u8) -> PResult<Expr> {
        let saved = self.depth;
        let result = self.binary_loop(min);
        self.depth = saved;
        result
    }

    fn binary_loop(&mut self, min: u8) -> PResult<Expr> {
        let mut lhs = self.cast()?;
        while let Some(op) = binary_op(self.peek()) {
            let precedence = op.precedence();
            if precedence < min {
                break;
            }
            self.enter()?;
            self.bump();
            let rhs = self.binary(precedence + 1)?;
            if op.is_comparison()
                && let Some(next) = binary_op(self.peek())
                && next.is_comparison()
            {
                let span = self.span();
                self.report(
                    Diagnostic::error("comparison operators cannot be chained", span)
                        .with_label(lhs.span.to(rhs.span), "this is already a comparison")
                        .with_note(format!(
                            "use `&&` to combine comparisons, or parentheses: `(a {} b) {} c`",
                            op.as_str(),
                            next.as_str()
                        )),
                );
            }
            let span = lhs.span.to(rhs.span);
            lhs = Expr { kind: ExprKind::Binary { op, lhs: Box::new(lhs), rhs: Box::new(rhs) }, span };
        }
        Ok(lhs)
    }

    /// `unary (as type)*`.
    fn cast(&mut self) -> PResult<Expr> {
        let saved = self.depth;
        let result = (|| {
            let mut expr = self.unary()?;
            while self.eat_kw(Keyword::As) {
                self.enter()?;
                let ty = self.ty()?;
                let span = expr.span.to(ty.span);
                expr = Expr { kind: ExprKind::Cast { expr: Box::new(expr), ty }, span };
            }
            Ok(expr)
        })();
        self.depth = saved;
        result
    }

    fn unary(&mut self) -> PResult<Expr> {
        let op = match self.peek() {
            TokenKind::Minus => UnaryOp::Neg,
            TokenKind::Bang => UnaryOp::Not,
            _ => return self.postfix(),
        };
        self.nested(|p| {
            let start = p.bump().span;
            let operand = p.unary()?;
            let span = start.to(operand.span);
            Ok(Expr { kind: ExprKind::Unary { op, operand: Box::new(operand) }, span })
        })
    }

    /// `primary (.field | .method(args))*`.
    fn postfix(&mut self) -> PResult<Expr> {
        let saved = self.depth;
        let result = (|| {
            let mut expr = self.primary()?;
            loop {
                if self.eat(&TokenKind::LBracket) {
                    self.enter()?;
                    let index = self.with_no_struct(false, |p| p.expr())?;
                    self.expect(TokenKind::RBracket, "after an array index")?;
                    let span = expr.span.to(self.prev_span());
                    expr = Expr { kind: ExprKind::Index { base: Box::new(expr), index: Box::new(index) }, span };
                    continue;
                }
                if !self.eat(&TokenKind::Dot) {
                    break;
                }
                self.enter()?;
                let name = self.ident("a field or method name after `.`")?;
                if self.at(&TokenKind::LParen) {
                    self.bump();
                    let args = self.with_no_struct(false, |p| p.comma_list(TokenKind::RParen, "argument list"))?;
                    let span = expr.span.to(self.prev_span());
                    expr = Expr { kind: ExprKind::MethodCall { receiver: Box::new(expr), method: name, args }, span };
                } else {
                    let span = expr.span.to(name.span);
                    expr = Expr { kind: ExprKind::Field { base: Box::new(expr), field: name }, span };
                }
            }
            Ok(expr)
        })();
        self.depth = saved;
        result
    }

    fn primary(&mut self) -> PResult<Expr> {
        let span = self.span();
        let kind = match self.peek().clone() {
            TokenKind::Int { value, base, suffix } => {
                self.bump();
                ExprKind::Int { value, base, suffix }
            }
            TokenKind::Float { value, suffix } => {
                self.bump();
                ExprKind::Float { value, suffix }
            }
            TokenKind::Str(text) => {
                self.bump();
                ExprKind::Str(text)
            }
            TokenKind::Keyword(Keyword::True) => {
                self.bump();
                ExprKind::Bool(true)
            }
            TokenKind::Keyword(Keyword::False) => {
                self.bump();
                ExprKind::Bool(false)
            }
            TokenKind::Keyword(Keyword::G) => {
                self.bump();
                ExprKind::Graph
            }
            TokenKind::Keyword(Keyword::Inf) => {
                self.bump();
                ExprKind::Inf
            }
            TokenKind::Keyword(Keyword::Invoke) => {
                self.bump();
                let call = self.call("a kernel name after `invoke`")?;
                let span = span.to(call.span);
                return Ok(Expr { kind: ExprKind::Invoke(call), span });
            }
            TokenKind::Keyword(Keyword::Worklist) => {
                let message = "`worklist` is only allowed as the iteration space of `forall`";
                return Err(self.report(Diagnostic::error(message, span)));
            }
            TokenKind::LParen => {
                return self.nested(|p| {
                    p.bump();
                    let inner = p.with_no_struct(false, |p| p.expr())?;
                    p.expect(TokenKind::RParen, "to close the parenthesis")?;
                    // Parentheses only group; the tree's shape keeps the grouping.
                    Ok(Expr { kind: inner.kind, span: span.to(p.prev_span()) })
                });
            }
            TokenKind::Ident(name) => {
                if matches!(self.peek_at(1), TokenKind::LParen) {
                    let call = self.call("a function name")?;
                    return Ok(Expr { span: call.span, kind: ExprKind::Call(call) });
                }
                if matches!(self.peek_at(1), TokenKind::LBrace) {
                    let fields_follow =
                        matches!(self.peek_at(2), TokenKind::Ident(_)) && matches!(self.peek_at(3), TokenKind::Colon);
                    if fields_follow && self.no_struct {
                        self.report(Diagnostic::error("struct literals are not allowed here", span).with_note(
                            "in a condition or iteration space `Name {` starts the block; write `(Name { ... })`",
                        ));
                        return self.with_no_struct(false, |p| p.struct_literal());
                    }
                    if !self.no_struct && (fields_follow || matches!(self.peek_at(2), TokenKind::RBrace)) {
                        return self.struct_literal();
                    }
                }
                let span = self.bump().span;
                ExprKind::Name(Ident { name, span })
            }
            _ => return Err(self.expected("an expression")),
        };
        Ok(Expr { kind, span })
    }

    fn struct_literal(&mut self) -> PResult<Expr> {
        self.nested(|p| {
            let name = p.ident("a struct name")?;
            p.expect(TokenKind::LBrace, "to open the struct literal")?;
            let mut fields = Vec::new();
            while !p.at(&TokenKind::RBrace) {
                let field = p.ident("a field name or `}` in the struct literal")?;
                p.expect(TokenKind::Colon, "after the field name")?;
                let value = p.expr()?;
                fields.push(FieldInit { span: field.span.to(value.span), name: field, value });
                if !p.eat(&TokenKind::Comma) && !p.at(&TokenKind::RBrace) {
                    // Skip to this literal's `}` so the enclosing statement is not cut short.
                    p.expected("`,` or `}` in the struct literal");
                    p.skip_past_close_brace();
                    let span = name.span.to(p.prev_span());
                    return Ok(Expr { kind: ExprKind::StructLiteral { name, fields }, span });
                }
            }
            p.bump();
            let span = name.span.to(p.prev_span());
            Ok(Expr { kind: ExprKind::StructLiteral { name, fields }, span })
        })
    }

    /// `name(args)`.
    pub(super) fn call(&mut self, what: &str) -> PResult<Call> {
        let callee = self.ident(what)?;
        self.expect(TokenKind::LParen, "to open the argument list")?;
        let args = self.with_no_struct(false, |p| p.comma_list(TokenKind::RParen, "argument list"))?;
        let span = callee.span.to(self.prev_span());
        Ok(Call { callee, args, span })
    }

    /// Expressions separated by commas (a trailing one allowed), up to and including `close`.
    pub(super) fn comma_list(&mut self, close: TokenKind, what: &str) -> PResult<Vec<Expr>> {
        self.nested(|p| {
            let mut items = Vec::new();
            while !p.at(&close) {
                items.push(p.expr()?);
                if !p.eat(&TokenKind::Comma) && !p.at(&close) {
                    let close_text = close.fixed_text().unwrap_or("?");
                    return Err(p.expected(&format!("`,` or `{close_text}` in the {what}")));
                }
            }
            p.bump();
            Ok(items)
        })
    }
}
