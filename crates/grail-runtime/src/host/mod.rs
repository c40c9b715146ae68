//! What every backend shares on the host: the interpreter of `main` ([`interp`], over a
//! backend's [`interp::Machine`]), the host's copy of a run's memory ([`memory`]: property
//! columns, union-find parents, lock and claim words, the graph arrays a program needs beyond
//! the out-CSR), [`Value`]s and the arithmetic of the generated code ([`ops`]).

pub(crate) mod interp;
pub(crate) mod memory;
pub(crate) mod ops;
pub(crate) mod value;

pub use value::Value;
