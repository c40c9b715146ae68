//! grail-codegen
