//! The worker threads of one run: the calling thread plus `threads - 1` workers that take
//! chunks of a kernel phase from a shared atomic cursor (dynamic scheduling).
//!
//! Workers live for the whole run (scoped threads), so an invocation costs no thread creation:
//! the caller publishes a job by bumping an epoch, every thread claims chunks until the phase
//! is done, and the caller waits for the workers to report back. Between jobs a worker spins
//! for a short while (the next invocation usually follows within microseconds) and then sleeps
//! on a condition variable, so an idle run does not hold cores.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};
use std::thread::{Scope, ScopedJoinHandle};
use std::time::{Duration, Instant};

use super::ffi::{GrailCtx, GrailThread, GrailValue, PhaseFn};

/// How long an idle worker spins before it sleeps.
const SPIN: Duration = Duration::from_micros(200);

/// One phase run over `0..size`: what every thread needs to run its chunks.
#[derive(Clone, Copy)]
pub(crate) struct Job {
    pub phase: PhaseFn,
    pub ctx: *const GrailCtx,
    pub args: *const GrailValue,
    pub size: u64,
    pub chunk: u64,
    /// One `grail_thread` per thread of the pool, by thread index (the caller is 0).
    pub threads: *mut GrailThread,
}

struct Shared {
    job: UnsafeCell<Option<Job>>,
    epoch: AtomicU64,
    cursor: AtomicU64,
    /// Workers that have not finished the current job.
    pending: AtomicUsize,
    stop: AtomicBool,
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
}

// SAFETY: `job` is written only by the calling thread while no worker reads it (before the
// epoch is bumped, after every worker has reported back); the pointers it holds are used by
// generated code under the rules of the C ABI (disjoint `grail_thread`s, atomics on shared
// columns).
unsafe impl Sync for Shared {}
unsafe impl Send for Shared {}

/// The pool; dropping it stops the workers (the enclosing scope joins them).
pub(crate) struct Pool<'scope> {
    shared: &'scope Shared,
    workers: usize,
    _handles: Vec<ScopedJoinHandle<'scope, ()>>,
}

/// The state the pool's threads share; lives in the caller's frame, outside the scope.
pub(crate) struct PoolState(Shared);

impl PoolState {
    pub fn new() -> PoolState {
        PoolState(Shared {
            job: UnsafeCell::new(None),
            epoch: AtomicU64::new(0),
            cursor: AtomicU64::new(0),
            pending: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            sleepers: AtomicUsize::new(0),
            lock: Mutex::new(()),
            wake: Condvar::new(),
        })
    }
}

impl<'scope> Pool<'scope> {
    /// Starts `threads - 1` workers in `scope`; the calling thread is thread 0.
    pub fn start<'env>(scope: &'scope Scope<'scope, 'env>, state: &'scope PoolState, threads: usize) -> Pool<'scope> {
        let shared = &state.0;
        let workers = threads.saturating_sub(1);
        let handles = (1..=workers)
            .map(|index| {
                std::thread::Builder::new()
                    .name(format!("grail-cpu-{index}"))
                    .spawn_scoped(scope, move || worker(shared, index))
            })
            .collect::<Result<Vec<_>, _>>();
        let handles = match handles {
            Ok(handles) => handles,
            // Thread creation failed (a limit of the system): run with the threads we got is not
            // possible without their handles, so run on the calling thread alone.
            Err(_) => {
                shared.stop.store(true, Ordering::SeqCst);
                return Pool { shared, workers: 0, _handles: Vec::new() };
            }
        };
        Pool { shared, workers, _handles: handles }
    }

    /// Threads that run chunks, the caller included.
    pub fn threads(&self) -> usize {
        self.workers + 1
    }

    /// Runs `job` on every thread (or on the calling thread alone, as one chunk, when
    /// `parallel` is false); returns when all its chunks are done.
    pub fn run(&self, job: Job, parallel: bool) {
        let shared = self.shared;
        if self.workers == 0 || !parallel {
            run_chunks(&job, &shared.cursor, 0, true);
            return;
        }
        // SAFETY: every worker has reported back from the previous job (`pending` is 0), so no
        // thread reads `job` now.
        unsafe { *shared.job.get() = Some(job) };
        shared.cursor.store(0, Ordering::Relaxed);
        shared.pending.store(self.workers, Ordering::Relaxed);
        shared.epoch.fetch_add(1, Ordering::SeqCst);
        if shared.sleepers.load(Ordering::SeqCst) > 0 {
            let _guard = shared.lock.lock().unwrap_or_else(PoisonError::into_inner);
            shared.wake.notify_all();
        }
        run_chunks(&job, &shared.cursor, 0, false);
        let mut spins = 0u32;
        while shared.pending.load(Ordering::Acquire) != 0 {
            spins = spins.saturating_add(1);
            if spins < 4096 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
}

impl Drop for Pool<'_> {
    fn drop(&mut self) {
        let shared = self.shared;
        shared.stop.store(true, Ordering::SeqCst);
        let _guard = shared.lock.lock().unwrap_or_else(PoisonError::into_inner);
        shared.wake.notify_all();
    }
}

/// Claims chunks of `job` until none are left; `alone`: no other thread takes part.
fn run_chunks(job: &Job, cursor: &AtomicU64, index: usize, alone: bool) {
    // SAFETY (for the calls below): `threads` has one element per pool thread and each thread
    // uses only its own; `ctx` and `args` stay valid and unchanged until the job is complete;
    // `phase` is the generated function of this ABI.
    let thread = unsafe { job.threads.add(index) };
    if alone {
        if job.size > 0 {
            unsafe { (job.phase)(job.ctx, job.args, 0, job.size, thread) };
        }
        return;
    }
    loop {
        let begin = cursor.fetch_add(job.chunk, Ordering::Relaxed);
        if begin >= job.size {
            break;
        }
        let end = begin.saturating_add(job.chunk).min(job.size);
        unsafe { (job.phase)(job.ctx, job.args, begin, end, thread) };
    }
}

fn worker(shared: &Shared, index: usize) {
    let mut seen = 0;
    while let Some(epoch) = wait_for_job(shared, seen) {
        seen = epoch;
        // SAFETY: the caller wrote the job before bumping the epoch (which this thread read
        // with acquire ordering) and will not write it again until this thread reports back.
        let Some(job) = (unsafe { *shared.job.get() }) else { break };
        run_chunks(&job, &shared.cursor, index, false);
        shared.pending.fetch_sub(1, Ordering::Release);
    }
}

/// Waits until the epoch moves past `seen` (returns it) or the pool stops (`None`).
fn wait_for_job(shared: &Shared, seen: u64) -> Option<u64> {
    let start = Instant::now();
    let mut spins = 0u32;
    loop {
        if shared.stop.load(Ordering::Acquire) {
            return None;
        }
        let epoch = shared.epoch.load(Ordering::Acquire);
        if epoch != seen {
            return Some(epoch);
        }
        spins = spins.wrapping_add(1);
        if spins % 128 == 0 && start.elapsed() > SPIN {
            break;
        }
        std::hint::spin_loop();
    }
    let mut guard = shared.lock.lock().unwrap_or_else(PoisonError::into_inner);
    shared.sleepers.fetch_add(1, Ordering::SeqCst);
    let result = loop {
        if shared.stop.load(Ordering::SeqCst) {
            break None;
        }
        let epoch = shared.epoch.load(Ordering::SeqCst);
        if epoch != seen {
            break Some(epoch);
        }
        guard = shared.wake.wait(guard).unwrap_or_else(PoisonError::into_inner);
    };
    shared.sleepers.fetch_sub(1, Ordering::SeqCst);
    result
}
