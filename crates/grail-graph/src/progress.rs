//! Progress reporting for long operations (loading, building, generating, writing).
//!
//! The substrate knows nothing about terminals: it reports through this trait, and the CLI
//! draws bars. Library users who do not care pass [`NoProgress`].

/// Receives progress of one long operation at a time. Implementations must be cheap to call
/// from several threads; callers report in coarse steps (megabytes, chunks), never per item.
pub trait Progress: Sync {
    /// A new phase starts; `total` is its size in units of `advance` when known.
    fn begin(&self, _phase: &str, _total: Option<u64>) {}
    /// `delta` more units of the current phase are done.
    fn advance(&self, _delta: u64) {}
    /// The current phase is over.
    fn finish(&self) {}
}

/// Reports nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {}
