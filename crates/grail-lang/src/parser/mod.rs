//! The parser: recursive descent over the grammar of `docs/language.md` section 10, with
//! precedence climbing for expressions.
//!
//! Errors are reported, then the parser resynchronises (a bad statement skips to the next `;` or
//! `}`, a bad item to the next item keyword) so one run reports as many real errors as it can. A
//! second error at the token where the last one was reported is dropped: it is almost always a
//! consequence of the first. Nesting is capped at [`MAX_DEPTH`] so that neither the parser nor
//! the recursive passes after it can overflow the stack.

mod expressions;
mod items;
mod statements;

use crate::ast::Program;
use crate::diagnostics::Diagnostic;
use crate::lexer::lex;
use crate::span::{FileId, Span};
use crate::token::{Keyword, Token, TokenKind};

/// How deeply blocks and expressions may nest.
pub const MAX_DEPTH: usize = 256;

/// Parses one file. Returns the program only if there were no errors, and every diagnostic.
pub fn parse(source: &str, file: FileId) -> (Option<Program>, Vec<Diagnostic>) {
    let (program, diagnostics) = parse_recovering(source, file);
    let ok = !crate::diagnostics::has_errors(&diagnostics);
    (ok.then_some(program), diagnostics)
}

/// Parses one file, returning the tree even when there were errors: the parts that failed are
/// left out or replaced by `ExprKind::Error`.
pub fn parse_recovering(source: &str, file: FileId) -> (Program, Vec<Diagnostic>) {
    let (tokens, mut diagnostics) = lex(source, file);
    let mut parser = Parser::new(tokens, file);
    let program = parser.program();
    // Text swallowed by an unterminated string or comment ends the file early; what the parser
    // then says about the end of the file only repeats that.
    let swallowed = diagnostics.iter().any(|d| d.message.starts_with("unterminated"));
    let end = source.len();
    diagnostics.extend(parser.diags.into_iter().filter(|d| !(swallowed && d.primary.start as usize >= end)));
    // Lexer and parser errors interleave by position, as a reader meets them.
    diagnostics.sort_by_key(|d| (d.primary.start, d.primary.end));
    (program, diagnostics)
}

/// An error has been reported; the caller should recover.
#[derive(Debug)]
pub(crate) struct Reported;

pub(crate) type PResult<T> = Result<T, Reported>;

pub(crate) struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    file: FileId,
    diags: Vec<Diagnostic>,
    /// Token index of the last reported error, to drop follow-on errors at the same place.
    last_error_at: Option<usize>,
    depth: usize,
    too_deep: bool,
    /// Set while parsing a condition or iteration space, where `Name {` starts a block.
    no_struct: bool,
}

impl Parser {
    fn new(mut tokens: Vec<Token>, file: FileId) -> Parser {
        if tokens.last().is_none_or(|t| t.kind != TokenKind::Eof) {
            let end = tokens.last().map_or(Span::new(file, 0, 0), |t| t.span.after());
            tokens.push(Token { kind: TokenKind::Eof, span: end });
        }
        Parser {
            tokens,
            pos: 0,
            file,
            diags: Vec::new(),
            last_error_at: None,
            depth: 0,
            too_deep: false,
            no_struct: false,
        }
    }

    fn peek(&self) -> &TokenKind {
        &self.tokens[self.pos].kind
    }

    fn peek_at(&self, ahead: usize) -> &TokenKind {
        let last = self.tokens.len() - 1;
        &self.tokens[(self.pos + ahead).min(last)].kind
    }

    /// The current token's span.
    fn span(&self) -> Span {
        self.tokens[self.pos].span
    }

    /// The span of the last consumed token (the start of the file before any).
    fn prev_span(&self) -> Span {
        if self.pos == 0 { Span::new(self.file, 0, 0) } else { self.tokens[self.pos - 1].span }
    }

    fn bump(&mut self) -> Token {
        let token = self.tokens[self.pos].clone();
        if token.kind != TokenKind::Eof {
            self.pos += 1;
        }
        token
    }

    fn at(&self, kind: &TokenKind) -> bool {
        self.peek() == kind
    }

    fn at_kw(&self, keyword: Keyword) -> bool {
        *self.peek() == TokenKind::Keyword(keyword)
    }

    fn at_eof(&self) -> bool {
        self.at(&TokenKind::Eof)
    }

    fn eat(&mut self, kind: &TokenKind) -> bool {
        let found = self.at(kind);
        if found {
            self.bump();
        }
        found
    }

    fn eat_kw(&mut self, keyword: Keyword) -> bool {
        self.eat(&TokenKind::Keyword(keyword))
    }

    /// Reports an error at the current token unless one was already reported there.
    fn report(&mut self, diagnostic: Diagnostic) -> Reported {
        if !self.too_deep && self.last_error_at != Some(self.pos) {
            self.diags.push(diagnostic);
            self.last_error_at = Some(self.pos);
        }
        Reported
    }

    /// "expected X, found Y" at the current token.
    fn expected(&mut self, what: &str) -> Reported {
        let message = format!("expected {what}, found {}", self.peek());
        let span = self.span();
        self.report(Diagnostic::error(message, span))
    }

    /// Consumes `kind` or reports "expected `kind` CONTEXT, found ...".
    fn expect(&mut self, kind: TokenKind, context: &str) -> PResult<Span> {
        if self.at(&kind) {
            return Ok(self.bump().span);
        }
        let text = kind.fixed_text().unwrap_or("?");
        let what = if context.is_empty() { format!("`{text}`") } else { format!("`{text}` {context}") };
        Err(self.expected(&what))
    }

    fn expect_kw(&mut self, keyword: Keyword, context: &str) -> PResult<Span> {
        self.expect(TokenKind::Keyword(keyword), context)
    }

    /// A `;` that ends a statement or item. A missing one is reported but not fatal: parsing goes
    /// on as if it were there, which is the right guess nearly always.
    fn semi(&mut self, context: &str) {
        if self.eat(&TokenKind::Semi) {
            return;
        }
        // Point just after the statement, where the `;` belongs, as well as at what came instead.
        let message = format!("expected `;` {context}, found {}", self.peek());
        let found = self.span();
        let mut diagnostic = Diagnostic::error(message, self.prev_span().after());
        if found.start != self.prev_span().end {
            diagnostic = diagnostic.with_label(found, "found this instead");
        }
        self.report(diagnostic);
    }

    fn ident(&mut self, what: &str) -> PResult<crate::ast::Ident> {
        if let TokenKind::Ident(name) = self.peek() {
            let name = name.clone();
            let span = self.bump().span;
            return Ok(crate::ast::Ident { name, span });
        }
        if let TokenKind::Keyword(k) = self.peek() {
            let message = format!("expected {what}, found keyword `{}`", k.as_str());
            let span = self.span();
            return Err(
                self.report(Diagnostic::error(message, span).with_note(format!("`{}` is a reserved word", k.as_str())))
            );
        }
        Err(self.expected(what))
    }

    /// Goes one level deeper; past [`MAX_DEPTH`] reports once and abandons the file.
    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            if !self.too_deep {
                let span = self.span();
                self.diags.push(
                    Diagnostic::error(format!("nesting is too deep (the limit is {MAX_DEPTH} levels)"), span)
                        .with_note(
                            "each operator of a chain such as `a + b + c` is a level too (the later passes walk \
                             the tree it makes): split a long one with `let`",
                        )
                        .with_note("the rest of the file is not checked"),
                );
                self.too_deep = true;
            }
            self.pos = self.tokens.len() - 1;
            return Err(Reported);
        }
        Ok(())
    }

    /// Runs `f` one level deeper, restoring the depth however `f` ends.
    fn nested<T>(&mut self, f: impl FnOnce(&mut Parser) -> PResult<T>) -> PResult<T> {
        let saved = self.depth;
        let result = self.enter().and_then(|()| f(self));
        self.depth = saved;
        result
    }

    /// Runs `f` with struct literals allowed or not.
    fn with_no_struct<T>(&mut self, no_struct: bool, f: impl FnOnce(&mut Parser) -> PResult<T>) -> PResult<T> {
        let saved = self.no_struct;
        self.no_struct = no_struct;
        let result = f(self);
        self.no_struct = saved;
        result
    }

    fn at_item_keyword(&self) -> bool {
        matches!(
            self.peek(),
            TokenKind::Keyword(
                Keyword::Graph
                    | Keyword::Param
                    | Keyword::Output
                    | Keyword::Input
                    | Keyword::Const
                    | Keyword::Struct
                    | Keyword::Fn
                    | Keyword::Kernel
            )
        )
    }

    fn program(&mut self) -> Program {
        let start = self.span();
        let mut items = Vec::new();
        while !self.at_eof() {
            let before = self.pos;
            match self.item() {
                Ok(item) => items.push(item),
                Err(Reported) => self.recover_item(),
            }
            if self.pos == before && !self.at_eof() {
                self.bump();
            }
        }
        let end = self.span();
        Program { items, span: Span::new(self.file, 0, end.end as usize).to(start) }
    }

    /// After a bad item: skip to the next item keyword.
    fn recover_item(&mut self) {
        while !self.at_eof() && !self.at_item_keyword() {
            self.bump();
        }
    }

    /// Skips up to and past the `}` that closes the current brace level.
    fn skip_past_close_brace(&mut self) {
        let mut braces = 0usize;
        loop {
            match self.peek() {
                TokenKind::Eof => return,
                TokenKind::LBrace => braces += 1,
                TokenKind::RBrace if braces == 0 => {
                    self.bump();
                    return;
                }
                TokenKind::RBrace => braces -= 1,
                _ => {}
            }
            self.bump();
        }
    }

    /// After a bad statement: skip past the next `;`, or up to the `}` that closes the block,
    /// stepping over nested braces; stop before an item keyword (a missing `}`).
    fn recover_stmt(&mut self) {
        let mut braces = 0usize;
        loop {
            match self.peek() {
                TokenKind::Eof => return,
                TokenKind::Semi if braces == 0 => {
                    self.bump();
                    return;
                }
                TokenKind::LBrace => braces += 1,
                TokenKind::RBrace => {
                    if braces == 0 {
                        return;
                    }
                    braces -= 1;
                    if braces == 0 {
                        self.bump();
                        // A skipped block usually ends the bad statement (`if x < { ... }`).
                        if !matches!(self.peek(), TokenKind::Keyword(Keyword::Else)) {
                            return;
                        }
                        continue;
                    }
                }
                _ if braces == 0 && self.at_item_keyword() => return,
                _ => {}
            }
            self.bump();
        }
    }
}
