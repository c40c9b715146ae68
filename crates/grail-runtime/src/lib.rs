//! grail-runtime
