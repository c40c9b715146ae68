//! The grail language front end: lexer, parser, AST with spans, a printer that writes an AST back
//! as canonical source, diagnostics, and the pass that resolves names, checks types and lowers a
//! program to the IR ([`mod@lower`], [`compile`]).
//!
//! Name resolution and type checking work over [`ast::Program`]; every node carries a [`Span`],
//! so their diagnostics point at source like the parser's do. See `docs/language.md` for the
//! language and `docs/architecture.md` for where this crate sits.

pub mod ast;
pub mod diagnostics;
pub mod lexer;
pub mod lower;
pub mod parser;
pub mod printer;
pub mod span;
pub mod token;

pub use diagnostics::{Diagnostic, Severity, has_errors};
pub use lower::{compile, lower};
pub use parser::{MAX_DEPTH, parse, parse_recovering};
pub use printer::print_program;
pub use span::{FileId, SourceMap, Span};
