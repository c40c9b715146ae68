//! Items: the graph block, params, outputs, constants, structs, functions and kernels.

use super::{PResult, Parser, Reported};
use crate::ast::*;
use crate::diagnostics::Diagnostic;
use crate::token::{Keyword, TokenKind};

impl Parser {
    pub(super) fn item(&mut self) -> PResult<Item> {
        let start = self.span();
        let kind = match self.peek() {
            TokenKind::Keyword(Keyword::Graph) => ItemKind::Graph(self.graph_block()?),
            TokenKind::Keyword(Keyword::Param) => {
                self.bump();
                let name = self.ident("a parameter name after `param`")?;
                self.expect(TokenKind::Colon, "and a type after the parameter name")?;
                let ty = self.ty()?;
                let default = if self.eat(&TokenKind::Eq) { Some(self.expr()?) } else { None };
                self.semi("after the `param` declaration");
                ItemKind::Param(Param { name, ty, default })
            }
            TokenKind::Keyword(Keyword::Output) => {
                self.bump();
                let name = self.ident("a property name after `output`")?;
                self.semi("after the `output` declaration");
                ItemKind::Output(Output { name })
            }
            TokenKind::Keyword(Keyword::Input) => {
                self.bump();
                let name = self.ident("a collection name after `input`")?;
                self.semi("after the `input` declaration");
                ItemKind::Input(Output { name })
            }
            TokenKind::Keyword(Keyword::Const) => {
                self.bump();
                let name = self.ident("a constant name after `const`")?;
                self.expect(TokenKind::Colon, "and a type after the constant name")?;
                let ty = self.ty()?;
                self.expect(TokenKind::Eq, "and a value: constants need one")?;
                let value = self.expr()?;
                self.semi("after the `const` declaration");
                ItemKind::Const(Const { name, ty, value })
            }
            TokenKind::Keyword(Keyword::Struct) => {
                self.bump();
                let name = self.ident("a struct name after `struct`")?;
                self.expect(TokenKind::LBrace, "to open the struct's fields")?;
                let fields = self.fields(TokenKind::RBrace, "struct field")?;
                ItemKind::Struct(StructDecl { name, fields })
            }
            TokenKind::Keyword(Keyword::Fn) => {
                self.bump();
                let name = self.ident("a function name after `fn`")?;
                self.expect(TokenKind::LParen, "to open the parameter list")?;
                let params = self.fields(TokenKind::RParen, "parameter")?;
                let ret = if self.eat(&TokenKind::Arrow) { Some(self.ty()?) } else { None };
                let body = self.block()?;
                ItemKind::Function(Function { name, params, ret, body })
            }
            TokenKind::Keyword(Keyword::Kernel) => {
                self.bump();
                let name = self.ident("a kernel name after `kernel`")?;
                self.expect(TokenKind::LParen, "to open the parameter list")?;
                let params = self.fields(TokenKind::RParen, "parameter")?;
                let reduction = if self.eat(&TokenKind::Arrow) { Some(self.reduction()?) } else { None };
                let body = self.block()?;
                ItemKind::Kernel(Kernel { name, params, reduction, body })
            }
            _ => {
                return Err(
                    self.expected("an item (`graph`, `param`, `input`, `output`, `const`, `struct`, `fn` or `kernel`)")
                );
            }
        };
        Ok(Item { kind, span: start.to(self.prev_span()) })
    }

    fn reduction(&mut self) -> PResult<Reduction> {
        let op_span = self.span();
        let op = match self.peek() {
            TokenKind::Ident(name) => ReduceOp::lookup(name),
            _ => None,
        };
        let Some(op) = op else {
            let message = format!(
                "expected a reduction operator (`sum`, `product`, `min`, `max`, `any` or `all`) after `->` in a kernel, found {}",
                self.peek()
            );
            let diagnostic = Diagnostic::error(message, op_span)
                .with_note("a kernel returns a value only as a reduction: `kernel k() -> sum u64 { ... }`");
            return Err(self.report(diagnostic));
        };
        self.bump();
        let ty = self.ty()?;
        Ok(Reduction { op, op_span, ty })
    }

    /// `name: T, ...` up to and including `close` (struct fields and parameters).
    fn fields(&mut self, close: TokenKind, what: &str) -> PResult<Vec<FieldDecl>> {
        let mut fields = Vec::new();
        let close_text = close.fixed_text().unwrap_or("?");
        while !self.at(&close) {
            let name = self.ident(&format!("a {what} name or `{close_text}`"))?;
            self.expect(TokenKind::Colon, &format!("and a type after the {what} name"))?;
            let ty = self.ty()?;
            fields.push(FieldDecl { span: name.span.to(ty.span), name, ty });
            if !self.eat(&TokenKind::Comma) && !self.at(&close) {
                return Err(self.expected(&format!("`,` or `{close_text}` after the {what}")));
            }
        }
        self.bump();
        Ok(fields)
    }

    fn graph_block(&mut self) -> PResult<GraphBlock> {
        self.bump();
        let open = self.expect(TokenKind::LBrace, "after `graph`")?;
        let mut decls = Vec::new();
        loop {
            match self.peek() {
                TokenKind::RBrace => {
                    self.bump();
                    break;
                }
                TokenKind::Eof => {
                    let span = self.span();
                    let message = "expected `}` to close the graph block, found end of file";
                    return Err(self.report(Diagnostic::error(message, span).with_label(open, "opened here")));
                }
                _ if self.at_item_keyword() => {
                    let message = format!("expected `}}` to close the graph block, found {}", self.peek());
                    let span = self.span();
                    self.report(Diagnostic::error(message, span).with_label(open, "opened here"));
                    break;
                }
                _ => match self.graph_decl() {
                    Ok(decl) => decls.push(decl),
                    Err(Reported) => self.recover_stmt(),
                },
            }
        }
        Ok(GraphBlock { decls })
    }

    fn graph_decl(&mut self) -> PResult<GraphDecl> {
        let start = self.span();
        let kind = match self.peek() {
            TokenKind::Keyword(keyword @ (Keyword::Node | Keyword::Edge)) => {
                let owner = if *keyword == Keyword::Node { PropertyOwner::Node } else { PropertyOwner::Edge };
                let word = keyword.as_str();
                self.bump();
                let name = self.ident(&format!("a property name after `{word}`"))?;
                self.expect(TokenKind::Colon, "and a type after the property name")?;
                let ty = self.ty()?;
                let init = if self.eat(&TokenKind::Eq) { Some(self.expr()?) } else { None };
                self.semi("after the property declaration");
                GraphDeclKind::Property { owner, name, ty, init }
            }
            TokenKind::Keyword(Keyword::Set) => {
                self.bump();
                let name = self.ident("a set name after `set`")?;
                self.semi("after the `set` declaration");
                GraphDeclKind::Set { name }
            }
            TokenKind::Keyword(Keyword::Collection) => {
                self.bump();
                let name = self.ident("a collection name after `collection`")?;
                self.expect(TokenKind::Colon, "and an element type after the collection name")?;
                let ty = self.ty()?;
                self.semi("after the `collection` declaration");
                GraphDeclKind::Collection { name, ty }
            }
            TokenKind::Ident(word) if word == "merge" => {
                self.bump();
                let property = self.ident("a node property's name after `merge`")?;
                match self.peek() {
                    TokenKind::Ident(word) if word == "with" => {
                        self.bump();
                    }
                    _ => return Err(self.expected("`with` and the update function's name after the property")),
                }
                let function = self.ident("the update function's name after `with`")?;
                self.semi("after the `merge` declaration");
                GraphDeclKind::Merge { property, function }
            }
            _ => return Err(self.expected("`node`, `edge`, `set`, `collection`, `merge` or `}` in the graph block")),
        };
        Ok(GraphDecl { kind, span: start.to(self.prev_span()) })
    }

    /// A type: a built-in type name, a struct name, or `[T; N]`.
    pub(super) fn ty(&mut self) -> PResult<Type> {
        if self.at(&TokenKind::LBracket) {
            let start = self.bump().span;
            let element = self.ty()?;
            self.expect(TokenKind::Semi, "and a length after an array's element type: `[u32; 16]`")?;
            let TokenKind::Int { value, .. } = self.peek().clone() else {
                return Err(self.expected("an array length (an integer)"));
            };
            self.bump();
            self.expect(TokenKind::RBracket, "after the array length")?;
            let span = start.to(self.prev_span());
            return Ok(Type { kind: TypeKind::Array(Box::new(element), value), span });
        }
        if let TokenKind::Ident(name) = self.peek() {
            let kind = TypeKind::from_name(name);
            let span = self.bump().span;
            return Ok(Type { kind, span });
        }
        Err(self.expected("a type"))
    }
}
