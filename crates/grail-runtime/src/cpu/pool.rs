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

use super::ffi::{GrailCtx, GrailValue, PhaseFn, ThreadSlot};

/// How long an idle worker spins before it sleeps.
const SPIN: Duration = Duration::from_micros(200);

/// Set in [`Shared::state`] once the caller has run out of chunks: a worker that has not
/// joined the job by then skips it, so the caller never waits for a thread the system has not
/// scheduled yet.
const CLOSED: u64 = 1 << 31;
const JOINED: u64 = CLOSED - 1;

/// One phase run over `0..size`: what every thread needs to run its chunks.
#[derive(Clone, Copy)]
pub(crate) struct Job {
    pub phase: PhaseFn,
    pub ctx: *const GrailCtx,
    pub args: *const GrailValue,
    pub size: u64,
    pub chunk: u64,
    /// One `grail_thread` per thread of the pool, by thread index (the caller is 0).
    pub threads: *mut ThreadSlot,
}

struct Shared {
    job: UnsafeCell<Option<Job>>,
    epoch: AtomicU64,
    cursor: AtomicU64,
    /// The current job's epoch (high 32 bits), whether it is closed to late workers
    /// ([`CLOSED`]), and how many workers joined it and are not done (low bits).
    state: AtomicU64,
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
            state: AtomicU64::new(0),
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
        // SAFETY: the previous job is closed and every worker that joined it has left, so no
        // thread reads `job` now (a late worker reads it only after joining the new epoch).
        unsafe { *shared.job.get() = Some(job) };
        shared.cursor.store(0, Ordering::Relaxed);
        let epoch = shared.epoch.load(Ordering::Relaxed).wrapping_add(1);
        shared.state.store(tag(epoch), Ordering::Release);
        shared.epoch.store(epoch, Ordering::SeqCst);
        if shared.sleepers.load(Ordering::SeqCst) > 0 {
            let _guard = shared.lock.lock().unwrap_or_else(PoisonError::into_inner);
            shared.wake.notify_all();
        }
        run_chunks(&job, &shared.cursor, 0, false);
        shared.state.fetch_or(CLOSED, Ordering::AcqRel);
        let mut spins = 0u32;
        while shared.state.load(Ordering::Acquire) & JOINED != 0 {
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
    let thread = unsafe { &raw mut (*job.threads.add(index)).0 };
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

/// The epoch's tag in [`Shared::state`].
fn tag(epoch: u64) -> u64 {
    (epoch & 0xffff_ffff) << 32
}

fn worker(shared: &Shared, index: usize) {
    let mut seen = 0;
    while let Some(epoch) = wait_for_job(shared, seen) {
        seen = epoch;
        if !join(shared, epoch) {
            continue;
        }
        // SAFETY: the caller wrote the job before opening its epoch, which this thread joined
        // with acquire ordering; the caller does not write it again until this thread leaves.
        let job = unsafe { *shared.job.get() };
        if let Some(job) = job {
            run_chunks(&job, &shared.cursor, index, false);
        }
        shared.state.fetch_sub(1, Ordering::Release);
    }
}

/// Joins the job of `epoch` unless the caller has closed it (or moved on).
fn join(shared: &Shared, epoch: u64) -> bool {
    let mut state = shared.state.load(Ordering::Acquire);
    loop {
        if state & !JOINED != tag(epoch) {
            return false;
        }
        match shared.state.compare_exchange_weak(state, state + 1, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return true,
            Err(now) => state = now,
        }
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
