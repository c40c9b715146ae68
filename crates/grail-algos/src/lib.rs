//! grail-algos
