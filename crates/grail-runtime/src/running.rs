//! Which kernel the process is running now, for a watchdog that ends a run taking too long
//! (`grail run --timeout`): neither a CPU thread inside generated code nor a GPU kernel can be
//! stopped from outside, so the watchdog ends the process, and names the kernel it was in.

use std::sync::{Arc, Mutex};

/// The kernel being run (CPU) or waited for (GPU), if any.
static RUNNING: Mutex<Option<Arc<str>>> = Mutex::new(None);

/// The name of the kernel a run is in now (on the CPU, the kernel whose phases run; on a GPU,
/// the kernel the host is waiting for), or `None` between kernels.
pub fn running_kernel() -> Option<String> {
    RUNNING.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).as_deref().map(str::to_string)
}

/// Marks `name` as the running kernel until dropped.
pub(crate) struct Running(());

impl Running {
    pub fn enter(name: Arc<str>) -> Running {
        *RUNNING.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(name);
        Running(())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        *RUNNING.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = None;
    }
}
