//! grail-ir
