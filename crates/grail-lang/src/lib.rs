//! grail-lang
