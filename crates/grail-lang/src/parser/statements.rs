//! Blocks and statements.

use super::{PResult, Parser, Reported};
use crate::ast::*;
use crate::diagnostics::Diagnostic;
use crate::span::Span;
use crate::token::{Keyword, TokenKind};

impl Parser {
    /// `{ stmt* }`. A missing `}` is reported at the end of the file or at the next item keyword,
    /// and the block ends there.
    pub(super) fn block(&mut self) -> PResult<Block> {
        self.nested(|p| {
            let open = p.expect(TokenKind::LBrace, "to open a block")?;
            let mut stmts = Vec::new();
            loop {
                if p.eat(&TokenKind::RBrace) {
                    break;
                }
                if p.at_eof() || p.at_item_keyword() {
                    let message = format!("expected `}}` to close the block, found {}", p.peek());
                    let span = p.span();
                    p.report(Diagnostic::error(message, span).with_label(open, "the block opened here"));
                    break;
                }
                let before = p.pos;
                match p.stmt() {
                    Ok(stmt) => stmts.push(stmt),
                    Err(Reported) if p.too_deep => return Err(Reported),
                    Err(Reported) => p.recover_stmt(),
                }
                if p.pos == before {
                    p.bump();
                }
            }
            Ok(Block { stmts, span: open.to(p.prev_span()) })
        })
    }

    fn stmt(&mut self) -> PResult<Stmt> {
        let start = self.span();
        let kind = match self.peek() {
            TokenKind::Keyword(Keyword::Let) => {
                self.bump();
                let mutable = self.eat_kw(Keyword::Mut);
                let name = self.ident("a variable name after `let`")?;
                let ty = if self.eat(&TokenKind::Colon) { Some(self.ty()?) } else { None };
                let array = ty.as_ref().is_some_and(|t| matches!(t.kind, crate::ast::TypeKind::Array(..)));
                let value = if array && self.at(&TokenKind::Semi) {
                    None
                } else {
                    self.expect(TokenKind::Eq, "and an initial value: every `let` needs one (but an array's)")?;
                    Some(self.expr()?)
                };
                self.semi("after the `let` statement");
                StmtKind::Let { mutable, name, ty, value }
            }
            TokenKind::Keyword(Keyword::If) => return self.if_chain(),
            TokenKind::Keyword(Keyword::While) => {
                self.bump();
                let cond = self.condition("`while`")?;
                let body = self.block()?;
                StmtKind::While { cond, body }
            }
            TokenKind::Keyword(Keyword::For) => {
                self.bump();
                let var = self.ident("a loop variable after `for`")?;
                self.expect_kw(Keyword::In, "after the loop variable")?;
                let iter = self.iteration_space(false)?;
                let body = self.block()?;
                StmtKind::For { var, iter, body }
            }
            TokenKind::Keyword(Keyword::Forall) => {
                self.bump();
                let var = self.ident("a loop variable after `forall`")?;
                let ty = if self.eat(&TokenKind::Colon) { Some(self.ty()?) } else { None };
                self.expect_kw(Keyword::In, "after the loop variable")?;
                let space = self.iteration_space(true)?;
                let filter = if self.eat_kw(Keyword::Where) { Some(self.condition("`where`")?) } else { None };
                let body = self.block()?;
                StmtKind::ForAll { var, ty, space, filter, body }
            }
            TokenKind::Keyword(Keyword::Break) => {
                self.bump();
                self.semi("after `break`");
                StmtKind::Break
            }
            TokenKind::Keyword(Keyword::Continue) => {
                self.bump();
                self.semi("after `continue`");
                StmtKind::Continue
            }
            TokenKind::Keyword(Keyword::Return) => {
                self.bump();
                let value =
                    if self.at(&TokenKind::Semi) || self.at(&TokenKind::RBrace) { None } else { Some(self.expr()?) };
                self.semi("after the `return` statement");
                StmtKind::Return(value)
            }
            TokenKind::Keyword(keyword @ (Keyword::Push | Keyword::Retry)) => {
                let keyword = *keyword;
                self.bump();
                self.expect(TokenKind::LParen, &format!("after `{}`", keyword.as_str()))?;
                let item = self.with_no_struct(false, |p| p.expr())?;
                self.expect(TokenKind::RParen, &format!("to close `{}(`", keyword.as_str()))?;
                self.semi(&format!("after the `{}` statement", keyword.as_str()));
                if keyword == Keyword::Push { StmtKind::Push(item) } else { StmtKind::Retry(item) }
            }
            TokenKind::Keyword(Keyword::Reduce) => {
                self.bump();
                let value = self.expr()?;
                self.semi("after the `reduce` statement");
                StmtKind::Reduce(value)
            }
            TokenKind::Keyword(keyword @ (Keyword::Atomic | Keyword::Exclusive | Keyword::Single)) => {
                let keyword = *keyword;
                let word = keyword.as_str();
                self.bump();
                self.expect(TokenKind::LParen, &format!("after `{word}`"))?;
                let mut targets = vec![self.with_no_struct(false, |p| p.expr())?];
                while keyword == Keyword::Exclusive && self.eat(&TokenKind::Comma) {
                    targets.push(self.with_no_struct(false, |p| p.expr())?);
                }
                let close = if keyword == Keyword::Exclusive { "`,` or `)`" } else { "`)`" };
                if !self.eat(&TokenKind::RParen) {
                    return Err(self.expected(&format!("{close} after the `{word}` target")));
                }
                let body = self.block()?;
                let otherwise = if self.eat_kw(Keyword::Else) { Some(self.block()?) } else { None };
                match keyword {
                    Keyword::Atomic => StmtKind::Atomic { target: targets.remove(0), body, otherwise },
                    Keyword::Single => StmtKind::Single { target: targets.remove(0), body, otherwise },
                    _ => StmtKind::Exclusive { targets, body, otherwise },
                }
            }
            TokenKind::Keyword(Keyword::Invoke) => {
                self.bump();
                let call = self.call("a kernel name after `invoke`")?;
                self.semi("after the `invoke` statement");
                StmtKind::Invoke(call)
            }
            TokenKind::Keyword(Keyword::Iterate) => {
                self.bump();
                if self.at(&TokenKind::LBrace) {
                    let body = self.block()?;
                    let condition = if self.eat_kw(Keyword::While) {
                        LoopCondition::While
                    } else if self.eat_kw(Keyword::Until) {
                        LoopCondition::Until
                    } else {
                        return Err(self.expected("`while` or `until` after the `iterate` block"));
                    };
                    let cond = self.expr()?;
                    self.semi("after the `iterate` loop's condition");
                    StmtKind::IterateLoop { body, condition, cond }
                } else {
                    let call = self.call("a kernel name or `{` after `iterate`")?;
                    let initial = self.initial()?;
                    let body = if self.at(&TokenKind::LBrace) {
                        Some(self.block()?)
                    } else {
                        // The grammar has no `;` here; accept one, since it reads naturally.
                        self.eat(&TokenKind::Semi);
                        None
                    };
                    StmtKind::Iterate { call, initial, body }
                }
            }
            TokenKind::Keyword(Keyword::Pipe) => {
                self.bump();
                let once = self.eat_kw(Keyword::Once);
                let initial = self.initial()?;
                let body = self.block()?;
                StmtKind::Pipe { once, initial, body }
            }
            _ => {
                let expr = self.expr()?;
                let op = match self.peek() {
                    TokenKind::Eq => Some(AssignOp::Assign),
                    TokenKind::PlusEq => Some(AssignOp::Add),
                    TokenKind::MinusEq => Some(AssignOp::Sub),
                    TokenKind::StarEq => Some(AssignOp::Mul),
                    TokenKind::SlashEq => Some(AssignOp::Div),
                    _ => None,
                };
                if let Some(op) = op {
                    if !is_place(&expr) {
                        self.report(Diagnostic::error("invalid left-hand side of an assignment", expr.span).with_note(
                            "only a variable, a property (`v.dist`, `u.neighbor(0).dist`) or a field can be assigned",
                        ));
                    }
                    self.bump();
                    let value = self.expr()?;
                    self.semi("after the assignment");
                    StmtKind::Assign { place: expr, op, value }
                } else {
                    self.semi("after the expression statement");
                    StmtKind::Expr(expr)
                }
            }
        };
        Ok(Stmt { kind, span: start.to(self.prev_span()) })
    }

    /// `if c { } else if d { } else { }`, parsed as a loop so long chains cost no stack.
    fn if_chain(&mut self) -> PResult<Stmt> {
        let saved = self.depth;
        let result = self.if_chain_arms();
        self.depth = saved;
        result
    }

    fn if_chain_arms(&mut self) -> PResult<Stmt> {
        let mut arms: Vec<(Span, Expr, Block)> = Vec::new();
        let mut last_else = None;
        loop {
            // Each `else if` nests one level deeper in the tree, so it counts against the limit.
            self.enter()?;
            let start = self.span();
            self.bump();
            let cond = self.condition("`if`")?;
            let then = self.block()?;
            arms.push((start, cond, then));
            if !self.eat_kw(Keyword::Else) {
                break;
            }
            if self.at_kw(Keyword::If) {
                continue;
            }
            if !self.at(&TokenKind::LBrace) {
                return Err(self.expected("`{` or `if` after `else`"));
            }
            last_else = Some(Else::Block(self.block()?));
            break;
        }
        let end = self.prev_span();
        let mut otherwise = last_else;
        while let Some((start, cond, then)) = arms.pop() {
            let stmt = Stmt { kind: StmtKind::If { cond, then, otherwise: otherwise.take() }, span: start.to(end) };
            if arms.is_empty() {
                return Ok(stmt);
            }
            otherwise = Some(Else::If(Box::new(stmt)));
        }
        Err(Reported)
    }

    /// A condition: an expression where `Name {` starts the block, not a struct literal.
    fn condition(&mut self, after: &str) -> PResult<Expr> {
        if self.at(&TokenKind::LBrace) {
            return Err(self.expected(&format!("a condition after {after}")));
        }
        self.with_no_struct(true, |p| p.expr())
    }

    /// `a..b`, an iterator expression, or (for `forall`) `worklist`.
    fn iteration_space(&mut self, allow_worklist: bool) -> PResult<Expr> {
        if allow_worklist && self.at_kw(Keyword::Worklist) {
            let span = self.bump().span;
            return Ok(Expr { kind: ExprKind::Worklist, span });
        }
        if self.at(&TokenKind::LBrace) {
            let what = if allow_worklist {
                "an iteration space (`worklist`, a range or an iterator)"
            } else {
                "a range or an iterator"
            };
            return Err(self.expected(what));
        }
        self.with_no_struct(true, |p| {
            let start = p.expr()?;
            if p.eat(&TokenKind::DotDot) {
                let end = p.expr()?;
                let span = start.span.to(end.span);
                return Ok(Expr { kind: ExprKind::Range { start: Box::new(start), end: Box::new(end) }, span });
            }
            Ok(start)
        })
    }

    /// `[initial ([a, b] | expr)]` after `iterate k(..)` and `pipe`.
    fn initial(&mut self) -> PResult<Option<Initial>> {
        if !self.eat_kw(Keyword::Initial) {
            return Ok(None);
        }
        if self.at(&TokenKind::LBracket) {
            let open = self.bump().span;
            let items = self.with_no_struct(false, |p| p.comma_list(TokenKind::RBracket, "initial worklist"))?;
            return Ok(Some(Initial::List { items, span: open.to(self.prev_span()) }));
        }
        Ok(Some(Initial::Expr(self.with_no_struct(true, |p| p.expr())?)))
    }
}

/// The grammar's `place`: a name, or a field chain that starts at a name.
/// Whether an expression can stand left of `=`: a name, or a field of anything (a property of
/// any `Node` or `Edge` expression, `u.neighbor(0).label`, `G.comp.find(u).label`; the checker
/// says when the base is a value whose field cannot be written).
fn is_place(expr: &Expr) -> bool {
    matches!(expr.kind, ExprKind::Name(_) | ExprKind::Field { .. } | ExprKind::Index { .. })
}
