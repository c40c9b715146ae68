//! Limits and traces a caller puts around a run, on the calling thread: a deadline (a run past
//! it stops at the next kernel invocation or host loop round with [`RuntimeError::TimedOut`]),
//! and a trace of every host-visible invocation's reduction value (a convergence curve, say).
//!
//! Both act between kernels: a kernel that never ends, or an outlined loop that runs whole on a
//! GPU, is not interrupted (nothing can stop generated code from outside without ending the
//! process, which `grail run --timeout` does).

use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

use crate::error::{Result, RuntimeError};
use crate::host::value::Value;

thread_local! {
    static DEADLINE: Cell<Option<(Instant, Duration)>> = const { Cell::new(None) };
    static TRACE: RefCell<Option<Vec<(String, Value)>>> = const { RefCell::new(None) };
}

/// Runs `f` with a time limit on the runs it makes on this thread (none when `limit` is `None`);
/// the previous limit comes back afterwards.
pub fn with_time_limit<T>(limit: Option<Duration>, f: impl FnOnce() -> T) -> T {
    // A limit past what a clock can hold is no limit.
    let deadline = limit.and_then(|l| Instant::now().checked_add(l).map(|at| (at, l)));
    let previous = DEADLINE.with(|d| d.replace(deadline));
    let result = f();
    DEADLINE.with(|d| d.set(previous));
    result
}

/// Runs `f`, recording the reduction value of every kernel invocation the host makes on this
/// thread, in order, by kernel name (an invocation inside an outlined GPU loop is not seen).
pub fn with_trace<T>(f: impl FnOnce() -> T) -> (T, Vec<(String, Value)>) {
    let previous = TRACE.with(|t| t.replace(Some(Vec::new())));
    let result = f();
    let trace = TRACE.with(|t| t.replace(previous)).unwrap_or_default();
    (result, trace)
}

/// An error when the deadline has passed; `at` names where the run is (the kernel about to run).
pub(crate) fn check(at: &str) -> Result<()> {
    match DEADLINE.with(Cell::get) {
        Some((deadline, limit)) if Instant::now() >= deadline => {
            Err(RuntimeError::TimedOut { limit, at: at.to_string() })
        }
        _ => Ok(()),
    }
}

/// Records an invocation's reduction value when a trace is on.
pub(crate) fn record(kernel: &str, value: &Value) {
    TRACE.with(|t| {
        if let Some(trace) = t.borrow_mut().as_mut() {
            trace.push((kernel.to_string(), value.clone()));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_nest_and_come_back() {
        assert!(check("k").is_ok());
        with_time_limit(Some(Duration::ZERO), || {
            let err = check("relax").unwrap_err().to_string();
            assert!(err.contains("relax"), "{err}");
            with_time_limit(None, || assert!(check("k").is_ok()));
            assert!(check("k").is_err());
        });
        assert!(check("k").is_ok());
        let ((), trace) = with_trace(|| record("gather", &Value::F64(0.5)));
        assert_eq!(trace, vec![("gather".to_string(), Value::F64(0.5))]);
        record("outside", &Value::F64(1.0));
    }
}
