//! The grail language front end: lexer, parser, AST with spans, name resolution, type checking
//! and diagnostics.
//!
//! Not built yet: this crate holds its place in the workspace so that the boundary exists from the
//! start. It will depend on nothing but `grail-graph` (for property types) and produce the AST that
//! `grail-ir` lowers. See `docs/architecture.md`.
