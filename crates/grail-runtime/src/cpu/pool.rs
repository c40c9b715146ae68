//! The worker threads of one run: the calling thread plus `threads - 1` workers that take
//! chunks of a job from a shared atomic cursor (dynamic scheduling, chunks shrinking as the job
//! runs out, so that the threads finish together).
//!
//! Workers live for the whole run (scoped threads), so an invocation costs no thread creation:
//! the caller publishes a job by bumping an epoch, every thread claims chunks until the job is
//! done, and the caller waits for the workers that joined it (the barrier at the end of every
//! phase). Between jobs a worker spins for a short while (the next invocation usually follows
//! within microseconds) and then sleeps on a condition variable, so an idle run does not hold
//! cores.
//!
//! Inside a *persistent parallel region* ([`Pool::set_region`]: the executor opens one for each
//! outlined `iterate`/`pipe`, the CPU's analogue of the GPU's control kernel) workers never go
//! to sleep between jobs: they stay spinning on the epoch, so each phase of the region starts on
//! every thread within the time a cache line takes to travel, and the executor hands even small
//! phases to all threads. A spinning worker yields its core now and then, so a machine with
//! more runnable threads than cores still makes progress.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};
use std::thread::{Scope, ScopedJoinHandle};
use std::time::{Duration, Instant};

/// How long an idle worker spins before it sleeps (outside a region).
const SPIN: Duration = Duration::from_micros(200);

/// Spins between two yields of a worker that waits inside a region, and of a caller waiting for
/// the workers at the end of a job.
const SPINS_PER_YIELD: u32 = 1 << 14;

/// Set in [`Shared::state`] once the caller has run out of chunks: a worker that has not
/// joined the job by then skips it, so the caller never waits for a thread the system has not
/// scheduled yet.
const CLOSED: u64 = 1 << 31;
const JOINED: u64 = CLOSED - 1;

/// What a job runs: `work(thread, begin, end)` for each claimed chunk `begin..end`, with the
/// index of the thread that claimed it (the caller is 0).
pub(crate) type Work<'a> = dyn Fn(usize, u64, u64) + Sync + 'a;

/// A job over `0..size`: chunks of at least `min_chunk` and at most `max_chunk` items, about a
/// `1 / (4 * threads)` share of what is left when claimed (guided scheduling).
#[derive(Clone, Copy)]
pub(crate) struct Job<'a> {
    pub work: &'a Work<'a>,
    pub size: u64,
    pub min_chunk: u64,
    pub max_chunk: u64,
}

/// A job as the workers see it: the work's lifetime erased (the caller does not return before
/// every worker that joined the job has left it).
#[derive(Clone, Copy)]
struct Published {
    work: *const Work<'static>,
    size: u64,
    min_chunk: u64,
    max_chunk: u64,
}

struct Shared {
    job: UnsafeCell<Option<Published>>,
    epoch: AtomicU64,
    cursor: AtomicU64,
    /// The current job's epoch (high 32 bits), whether it is closed to late workers
    /// ([`CLOSED`]), and how many workers joined it and are not done (low bits).
    state: AtomicU64,
    stop: AtomicBool,
    /// Inside a persistent parallel region: workers do not sleep.
    region: AtomicBool,
    sleepers: AtomicUsize,
    threads: u64,
    lock: Mutex<()>,
    wake: Condvar,
}

// SAFETY: `job` is written only by the calling thread while no worker reads it (before the
// epoch is bumped, after every worker has reported back); the work it points at is `Sync` and
// outlives the job.
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
    pub fn new(threads: usize) -> PoolState {
        PoolState(Shared {
            job: UnsafeCell::new(None),
            epoch: AtomicU64::new(0),
            cursor: AtomicU64::new(0),
            // Epoch 0 has no job: closed, so that a worker woken before the first job (a region
            // opening wakes the sleepers) cannot join it and then leave the first real job's
            // count one short.
            state: AtomicU64::new(CLOSED),
            stop: AtomicBool::new(false),
            region: AtomicBool::new(false),
            sleepers: AtomicUsize::new(0),
            threads: threads.max(1) as u64,
            lock: Mutex::new(()),
            wake: Condvar::new(),
        })
    }
}

impl<'scope> Pool<'scope> {
    /// Starts `threads - 1` workers in `scope` (the count given to [`PoolState::new`]); the
    /// calling thread is thread 0.
    pub fn start<'env>(scope: &'scope Scope<'scope, 'env>, state: &'scope PoolState) -> Pool<'scope> {
        let shared = &state.0;
        let workers = shared.threads as usize - 1;
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

    /// Whether a persistent parallel region is open.
    pub fn in_region(&self) -> bool {
        self.shared.region.load(Ordering::Relaxed)
    }

    /// Opens (`true`) or closes a persistent parallel region: while it is open, workers wait
    /// for the next job spinning instead of sleeping. Opening wakes the sleeping ones now, so
    /// the region's first phase finds them awake.
    pub fn set_region(&self, open: bool) {
        let shared = self.shared;
        if self.workers == 0 || shared.region.swap(open, Ordering::SeqCst) == open {
            return;
        }
        if open && shared.sleepers.load(Ordering::SeqCst) > 0 {
            let _guard = shared.lock.lock().unwrap_or_else(PoisonError::into_inner);
            shared.wake.notify_all();
        }
    }

    /// Runs `job` on every thread (or on the calling thread alone, as one chunk, when
    /// `parallel` is false); returns when all its chunks are done.
    pub fn run(&self, job: Job<'_>, parallel: bool) {
        let shared = self.shared;
        if job.size == 0 {
            return;
        }
        if self.workers == 0 || !parallel {
            (job.work)(0, 0, job.size);
            return;
        }
        // SAFETY: erasing the lifetime is sound because this function does not return before
        // every worker that joined the job has left it, and a worker that did not join never
        // dereferences the pointer.
        let work: *const Work<'static> = unsafe { std::mem::transmute(job.work as *const Work<'_>) };
        let published = Published { work, size: job.size, min_chunk: job.min_chunk, max_chunk: job.max_chunk };
        // SAFETY: the previous job is closed and every worker that joined it has left, so no
        // thread reads `job` now (a late worker reads it only after joining the new epoch).
        unsafe { *shared.job.get() = Some(published) };
        shared.cursor.store(0, Ordering::Relaxed);
        let epoch = shared.epoch.load(Ordering::Relaxed).wrapping_add(1);
        shared.state.store(tag(epoch), Ordering::Release);
        shared.epoch.store(epoch, Ordering::SeqCst);
        if shared.sleepers.load(Ordering::SeqCst) > 0 {
            let _guard = shared.lock.lock().unwrap_or_else(PoisonError::into_inner);
            shared.wake.notify_all();
        }
        run_chunks(shared, &published, 0);
        shared.state.fetch_or(CLOSED, Ordering::AcqRel);
        let mut spins = 0u32;
        while shared.state.load(Ordering::Acquire) & JOINED != 0 {
            spins = spins.wrapping_add(1);
            if spins % SPINS_PER_YIELD == 0 {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
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

/// The next chunk of a job: about a `1 / (4 * threads)` share of what is left, within the
/// job's bounds; `None` when nothing is left.
fn claim(shared: &Shared, job: &Published) -> Option<(u64, u64)> {
    let mut begin = shared.cursor.load(Ordering::Relaxed);
    loop {
        if begin >= job.size {
            return None;
        }
        let share = (job.size - begin) / (4 * shared.threads);
        let end = begin.saturating_add(share.clamp(job.min_chunk.max(1), job.max_chunk.max(1))).min(job.size);
        match shared.cursor.compare_exchange_weak(begin, end, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return Some((begin, end)),
            Err(now) => begin = now,
        }
    }
}

/// Claims chunks of `job` until none are left.
fn run_chunks(shared: &Shared, job: &Published, index: usize) {
    // SAFETY: the work outlives the job (see `Pool::run`) and is `Sync`.
    let work = unsafe { &*job.work };
    while let Some((begin, end)) = claim(shared, job) {
        work(index, begin, end);
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
            run_chunks(shared, &job, index);
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

/// Waits until the epoch moves past `seen` (returns it) or the pool stops (`None`): spinning
/// for [`SPIN`], or for as long as a region is open, then sleeping. A worker woken because a
/// region opened goes back to spinning on the same `seen`: it never returns an epoch it has
/// seen.
fn wait_for_job(shared: &Shared, seen: u64) -> Option<u64> {
    loop {
        let mut start = Instant::now();
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
            if spins % SPINS_PER_YIELD == 0 && shared.region.load(Ordering::Relaxed) {
                // Hot in a region: stay, but let another runnable thread have the core a moment.
                std::thread::yield_now();
                start = Instant::now();
            } else if spins % 128 == 0 && !shared.region.load(Ordering::Relaxed) && start.elapsed() > SPIN {
                break;
            }
            std::hint::spin_loop();
        }
        let mut guard = shared.lock.lock().unwrap_or_else(PoisonError::into_inner);
        shared.sleepers.fetch_add(1, Ordering::SeqCst);
        let woken = loop {
            if shared.stop.load(Ordering::SeqCst) {
                break None;
            }
            let epoch = shared.epoch.load(Ordering::SeqCst);
            if epoch != seen {
                break Some(Some(epoch));
            }
            if shared.region.load(Ordering::SeqCst) {
                // A region opened: spin again, for the job it will bring.
                break Some(None);
            }
            guard = shared.wake.wait(guard).unwrap_or_else(PoisonError::into_inner);
        };
        shared.sleepers.fetch_sub(1, Ordering::SeqCst);
        drop(guard);
        match woken {
            None => return None,
            Some(Some(epoch)) => return Some(epoch),
            Some(None) => continue,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

    use super::*;

    /// No worker can join the job of an epoch it has run, nor epoch 0, which has none: a worker
    /// that did (woken before the first job by a region opening) held a count the first real
    /// job's start then overwrote, and its leaving made that job's count wrap: the caller waited
    /// forever, or a chunk ran after its job had ended (crashes and wrong results with 32
    /// threads on 32 cores).
    #[test]
    fn no_worker_joins_a_job_that_is_not_open() {
        let state = PoolState::new(4);
        assert!(!join(&state.0, 0), "epoch 0 has no job to join");
        std::thread::scope(|scope| {
            let pool = Pool::start(scope, &state);
            // Let the workers fall asleep, then wake them with a region, as an outlined loop
            // does before its first invocation.
            std::thread::sleep(Duration::from_millis(5));
            pool.set_region(true);
            std::thread::sleep(Duration::from_millis(5));
            assert_eq!(state.0.state.load(Ordering::SeqCst) & JOINED, 0, "a woken worker joined epoch 0");
            let counts: Vec<AtomicU32> = (0..10_000).map(|_| AtomicU32::new(0)).collect();
            let work = |_: usize, begin: u64, end: u64| {
                for i in begin..end {
                    counts[i as usize].fetch_add(1, Ordering::Relaxed);
                }
            };
            pool.run(Job { work: &work, size: 10_000, min_chunk: 16, max_chunk: 64 }, true);
            assert!(counts.iter().all(|c| c.load(Ordering::Relaxed) == 1));
            pool.set_region(false);
        });
    }

    /// Many small jobs one after another on many threads, as retry passes make them: every
    /// index runs once, no chunk of a job runs after `run` returned for it, serial and parallel
    /// jobs alternate, and regions open (waking sleeping workers) and close in between.
    /// `GRAIL_POOL_STRESS=N` runs N times as many jobs with 8 to 128 threads (races need real
    /// cores to show).
    #[test]
    fn small_jobs_in_a_row_never_overlap() {
        let scale: u64 = std::env::var("GRAIL_POOL_STRESS").ok().and_then(|v| v.parse().ok()).unwrap_or(0);
        let thread_counts: &[usize] = if scale > 0 { &[8, 16, 32, 64, 128] } else { &[3, 8] };
        let jobs = 400 * scale.max(1);
        for &threads in thread_counts {
            let state = PoolState::new(threads);
            let current = AtomicU64::new(0);
            std::thread::scope(|scope| {
                let pool = Pool::start(scope, &state);
                let mut seed = 0x9e37_79b9_7f4a_7c15u64 ^ threads as u64;
                for job in 1..=jobs {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    let size = 1 + seed % 3000;
                    if seed % 97 == 0 {
                        pool.set_region(false);
                        // Long enough for the workers to fall asleep before the region wakes them.
                        std::thread::sleep(SPIN * 2);
                        pool.set_region(true);
                    }
                    let counts: Vec<AtomicU32> = (0..size).map(|_| AtomicU32::new(0)).collect();
                    current.store(job, Ordering::SeqCst);
                    let work = |_: usize, begin: u64, end: u64| {
                        assert_eq!(current.load(Ordering::SeqCst), job, "a chunk of job {job} ran after it ended");
                        for i in begin..end {
                            counts[i as usize].fetch_add(1, Ordering::Relaxed);
                        }
                    };
                    pool.run(Job { work: &work, size, min_chunk: 64, max_chunk: 8192 }, size >= 128);
                    current.store(0, Ordering::SeqCst);
                    let wrong = counts.iter().position(|c| c.load(Ordering::Relaxed) != 1);
                    assert_eq!(wrong, None, "job {job} of {size} items on {threads} threads");
                }
                pool.set_region(false);
            });
        }
    }

    /// Every index of every job is run exactly once, by a thread of the pool, whatever the size,
    /// the chunk bounds, the thread count, and whether a region is open (workers spinning) or
    /// not (workers sleeping between jobs).
    #[test]
    fn every_index_runs_once() {
        for threads in [1, 2, 3, 4] {
            let state = PoolState::new(threads);
            std::thread::scope(|scope| {
                let pool = Pool::start(scope, &state);
                assert_eq!(pool.threads(), threads);
                for (round, size) in [0u64, 1, 15, 64, 65, 1000, 4097, 100_000].into_iter().enumerate() {
                    let region = round % 2 == 1;
                    pool.set_region(region);
                    assert_eq!(pool.in_region(), region && threads > 1);
                    for (min_chunk, max_chunk) in [(1, 1), (16, 64), (64, 8192)] {
                        let counts: Vec<AtomicU32> = (0..size).map(|_| AtomicU32::new(0)).collect();
                        let worst_thread = AtomicU64::new(0);
                        let shared_out = AtomicU32::new(0);
                        let work = |thread: usize, begin: u64, end: u64| {
                            assert!(begin < end && end <= size, "chunk {begin}..{end} of {size}");
                            // Shared out, chunks keep to the bounds; alone, the caller runs it whole.
                            if shared_out.load(Ordering::Relaxed) == 1 {
                                assert!(end - begin <= max_chunk, "chunk {begin}..{end} above {max_chunk}");
                            }
                            worst_thread.fetch_max(thread as u64, Ordering::Relaxed);
                            for i in begin..end {
                                counts[i as usize].fetch_add(1, Ordering::Relaxed);
                            }
                        };
                        for parallel in [true, false] {
                            shared_out.store(u32::from(parallel && threads > 1), Ordering::Relaxed);
                            counts.iter().for_each(|c| c.store(0, Ordering::Relaxed));
                            pool.run(Job { work: &work, size, min_chunk, max_chunk }, parallel);
                            let wrong = counts.iter().position(|c| c.load(Ordering::Relaxed) != 1);
                            assert_eq!(wrong, None, "size {size}, {threads} threads, chunks {min_chunk}..{max_chunk}");
                        }
                        assert!(worst_thread.load(Ordering::Relaxed) < threads as u64);
                    }
                }
                pool.set_region(false);
            });
        }
    }
}
