//! The threads that drive parts 1.. of a partitioned run while the calling thread drives part 0.
//!
//! A superstep on every part must start within microseconds of the last one's synchronization
//! (a road graph takes thousands of supersteps), so the drivers live for the whole run: each
//! waits for the next invocation spinning for a while, then parked (an idle run holds no cores),
//! runs its part's kernel, and reports back.

use std::cell::UnsafeCell;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::thread::{Scope, Thread};
use std::time::{Duration, Instant};

use grail_ir::KernelId;

use super::PartRun;
use super::exchange::{Counted, GhostMap, Received, Route, Share};
use crate::error::{Result, RuntimeError};
use crate::host::value::Value;

/// The bytes of a change in an inbox.
const CHANGE: usize = std::mem::size_of::<super::Change>();

/// How long a driver spins for the next invocation before it parks.
const SPIN: Duration = Duration::from_micros(300);

/// A part's run, driven by one thread at a time: its driver during an invocation, the calling
/// thread between invocations. Its lifetime is erased: the run outlives the crew that drives it
/// (the caller of [`RunPtr::new`] promises it).
#[derive(Clone, Copy)]
pub(crate) struct RunPtr(*mut (dyn PartRun + 'static));
// SAFETY: see `RunPtr`: the hand-over happens through `epoch` (release) and `pending` (acquire).
unsafe impl Send for RunPtr {}
unsafe impl Sync for RunPtr {}

impl RunPtr {
    /// # Safety
    ///
    /// `run` must stay valid, and untouched by anyone but the crew during invocations, until
    /// the crew that drives it has stopped.
    pub unsafe fn new<'a>(run: &mut (dyn PartRun + 'a)) -> RunPtr {
        let ptr: *mut (dyn PartRun + 'a) = run;
        // SAFETY: only the lifetime changes (the layout of the pointer is the same); the
        // caller promises the run outlives every use.
        RunPtr(unsafe { std::mem::transmute::<*mut (dyn PartRun + 'a), *mut (dyn PartRun + 'static)>(ptr) })
    }
}

/// What the drivers share with the calling thread.
pub(crate) struct CrewState {
    epoch: AtomicU64,
    pending: AtomicUsize,
    stop: AtomicBool,
    /// The invocation (written only while no driver runs).
    job: UnsafeCell<Job>,
    /// When the invocation was handed out (written with it; read only when tracing sums).
    published: UnsafeCell<Option<Instant>>,
    /// Each part's outcome (part `q`'s written only by its driver while it runs).
    results: Vec<UnsafeCell<Option<Result<Outcome>>>>,
    runs: Vec<RunPtr>,
    /// Each part's ghosts' local ids and its mirrors' (its nodes that are ghosts elsewhere):
    /// fixed lists (see `PartRun::diff`), by address and length.
    ghosts: Vec<(usize, usize)>,
    mirrors: Vec<(usize, usize)>,
    /// Each part's shared slots (its mirrors, once each, then its ghosts), where kernels over
    /// slots run: a fixed list by address and length (empty without such kernels).
    shared: Vec<(usize, usize)>,
    /// Each part's routes to the others ([`super::exchange`]), in the order of the peers.
    routes: Vec<Vec<Route>>,
    /// Each part's ghost map's lists (`owner_of`, `position`, `at_owner`, `starts`), by address
    /// and length.
    maps: Vec<[(usize, usize); 4]>,
    /// Where the parts of a superstep that merges the last one's changes first wait for each
    /// other before sending this one's (the inboxes they send into are the ones being merged).
    merged: SpinBarrier,
}

/// A barrier of the parts' drivers, spinning (a superstep is microseconds).
struct SpinBarrier {
    parties: usize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
}

impl SpinBarrier {
    fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.parties {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            return;
        }
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == generation {
            spins += 1;
            if spins % 256 == 0 {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
    }
}

/// What every part does at once.
pub(crate) enum Job {
    /// A superstep: the kernel with each part's arguments, then what each part does on its own
    /// before the host synchronizes them.
    Step {
        kernel: KernelId,
        args: Vec<Vec<Value>>,
        /// The node properties whose ghosts the kernel may have changed: each part finds its
        /// changed ghosts.
        diff: Vec<grail_ir::PropertyId>,
        /// Whether the kernel pushes: each part sends its pushed ghosts to their owners.
        split: bool,
        /// Whether the kernel runs over the part's shared slots alone
        /// ([`grail_ir::Module::over_slots`]).
        over_slots: bool,
        /// The last superstep's changes, merged by their owners first (where no ghost needs
        /// its owner's word back: the merge is all that is left of that exchange).
        merge_first: Option<Exchanged>,
        /// Whether the parts queue the kernel and its comparisons without waiting for them
        /// ([`super::PartRun::invoke_deferred`]); never with `merge_first` or `split`.
        deferred: bool,
    },
    /// Each owner merges the changes the others sent it, then sends its words to their ghosts.
    Merge(Exchanged),
    /// Each part stores the words their owners sent in its ghosts.
    Refresh(Exchanged),
    /// Each part gets its exchanges' lists, and the records of these properties, ready; and its
    /// lists for regions exchanging on the devices, when given (by part), with `rings` the
    /// asynchronous exchange's rings too.
    Prepare { properties: Vec<grail_ir::PropertyId>, peer_lists: Vec<std::sync::Arc<super::peer::Lists>>, rings: bool },
    /// Each part runs the defaults kernel over its ghosts too, with its arguments, then records
    /// the words of these properties at its ghosts and mirrors: nothing to send.
    Defaults { kernel: KernelId, args: Vec<Vec<Value>>, properties: Vec<grail_ir::PropertyId> },
    /// Every part runs its side of an asynchronous worklist loop until all are done.
    Async(std::sync::Arc<super::asynchronous::AsyncState>),
    /// Every part runs an outlined region at once, exchanging on the devices ([`super::peer`]),
    /// from `main`'s locals, with its table.
    Region { region: grail_ir::OutlineId, locals: Vec<Value>, tables: Vec<super::peer::Table> },
    /// A set's join through the host, its first half: each part runs `roots` over its shared
    /// slots, then gathers their `root` and `class` words (in [`Outcome::words`], the roots
    /// first).
    JoinGather { roots: KernelId, root: grail_ir::PropertyId, class: grail_ir::PropertyId },
    /// Its second half: each part stores `words[q]`, a class per shared slot, at its ghosts
    /// and mirrors.
    JoinPut { class: grail_ir::PropertyId, words: Vec<Vec<u64>> },
}

impl Job {
    /// What the job is called in traces.
    fn name(&self) -> &'static str {
        match self {
            Job::Step { .. } => "step",
            Job::Merge(_) => "merge",
            Job::Refresh(_) => "refresh",
            Job::Prepare { .. } => "prepare",
            Job::Defaults { .. } => "defaults",
            Job::Async(_) => "async",
            Job::Region { .. } => "region",
            Job::JoinGather { .. } => "join gather",
            Job::JoinPut { .. } => "join put",
        }
    }
}

/// A node property a superstep wrote, as the exchange treats it.
#[derive(Clone, Copy)]
pub(crate) struct Synced {
    pub property: grail_ir::PropertyId,
    pub merge: super::Merge,
    /// Ghosts may have changed (the kernel writes through other nodes than its item).
    pub remote: bool,
    /// Kernels read it through ghosts: ghosts get their owners' words.
    pub read: bool,
}

/// The changes sent in the last round: `counts[q][w][i]` is how many changes of property `w`
/// the peer of part `q`'s route `i` sent into `q`'s inbox.
pub(crate) struct Exchanged {
    pub properties: Vec<Synced>,
    pub counts: Vec<Vec<Vec<usize>>>,
    /// `pushes[q][i]`: how many pushes of part `q`'s nodes the peer of its route `i` sent.
    pub pushes: Vec<Vec<usize>>,
    /// After a deferred superstep, by sending part: where its counts lie and its event
    /// (`counts` is then empty); empty otherwise.
    pub on_devices: Vec<super::DeviceCounts>,
}

/// What a part's superstep left.
#[derive(Default)]
pub(crate) struct Outcome {
    pub result: Option<Value>,
    /// By property the round sent, by route: how many changes went to the route's peer.
    pub sent: Vec<Vec<usize>>,
    /// By route: the ghosts pushed (each once) that went to the route's peer.
    pub pushes: Vec<usize>,
    /// After a region: `main`'s locals, whether the part stopped because another failed, and
    /// how long it spent exchanging.
    pub locals: Vec<Value>,
    pub stopped: bool,
    pub exchanging: Duration,
    /// After `Prepare`: the part had no room for the lists and buffers of regions exchanging on
    /// the devices (out of its memory, or its `--device-memory-limit`).
    pub no_room_for_regions: bool,
    /// After `JoinGather`: the words gathered.
    pub words: Vec<u64>,
    /// After a deferred superstep: where the part's counts lie, and its event.
    pub deferred: Option<super::DeviceCounts>,
}

// SAFETY: `job` is written by the calling thread before it bumps `epoch` and read by drivers
// after they see the bump; `results[q]` is written by driver q before it decrements `pending`
// and read by the calling thread after `pending` reaches 0.
unsafe impl Sync for CrewState {}

impl CrewState {
    /// The state for driving `runs` (each pointer valid, and used by nobody else, until the
    /// crew stops), whose ghosts and mirrors are `ghosts` and `mirrors` (lists that outlive the
    /// crew, unchanged), and `shared` their shared slots (the same).
    pub fn new(
        runs: Vec<RunPtr>,
        ghosts: &[&[u32]],
        mirrors: &[&[u32]],
        shared: &[&[u32]],
        maps: &[GhostMap<'_>],
        routes: Vec<Vec<Route>>,
    ) -> CrewState {
        let runs_len = runs.len();
        let addresses = |lists: &[&[u32]]| lists.iter().map(|list| (list.as_ptr() as usize, list.len())).collect();
        CrewState {
            epoch: AtomicU64::new(0),
            pending: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            job: UnsafeCell::new(Job::Refresh(Exchanged {
                properties: Vec::new(),
                counts: Vec::new(),
                pushes: Vec::new(),
                on_devices: Vec::new(),
            })),
            published: UnsafeCell::new(None),
            results: runs.iter().map(|_| UnsafeCell::new(None)).collect(),
            runs,
            ghosts: addresses(ghosts),
            mirrors: addresses(mirrors),
            shared: addresses(shared),
            routes,
            maps: maps
                .iter()
                .map(|m| [m.owner_of, m.position, m.at_owner, m.starts].map(|l| (l.as_ptr() as usize, l.len())))
                .collect(),
            merged: SpinBarrier { parties: runs_len, arrived: AtomicUsize::new(0), generation: AtomicUsize::new(0) },
        }
    }

    /// Part `q`'s superstep, on the calling thread.
    ///
    /// # Safety
    ///
    /// Part `q`'s run is this thread's for the call, and the job is not being written.
    unsafe fn step(&self, q: usize) -> Result<Outcome> {
        // SAFETY: as the caller promises; the lists live as long as the crew.
        let (run, job) = unsafe { (&mut *{ self.runs[q] }.0, &*self.job.get()) };
        let list = |(ptr, len): (usize, usize)| unsafe { std::slice::from_raw_parts(ptr as *const u32, len) };
        run.bind()?;
        let (ghosts, mirrors, routes) = (list(self.ghosts[q]), list(self.mirrors[q]), &self.routes[q]);
        let shared = list(self.shared[q]);
        let mut outcome = Outcome::default();
        let mut phases = super::trace::Phases::start(q, job.name());
        match job {
            Job::Step { kernel, args, diff, split, over_slots, merge_first, deferred } => {
                // Each owner's ghosts that changed go to the owner's inbox after the kernel,
                // each property's to its own share.
                let sends: Vec<Vec<super::Send>> = (0..diff.len())
                    .map(|i| {
                        let share = |r: &Route| r.to_owner.as_ref().map(|p| p.share(i, r.ghosts.len() * CHANGE));
                        routes.iter().map(|r| (r.ghosts.clone(), share(r))).collect()
                    })
                    .collect();
                if *deferred {
                    outcome.deferred = Some(run.invoke_deferred(*kernel, &args[q], diff, ghosts, &sends)?);
                    phases.end("kernel and changes queued");
                } else if let Some(exchanged) = merge_first {
                    // The merges are queued before the kernel (which waits for them). Every part
                    // reaches the barrier, failed (or panicking) or not, so that no part waits
                    // forever; past it, the others' inboxes are free to be written again.
                    let ran = std::panic::catch_unwind(AssertUnwindSafe(|| {
                        merge_received(run, q, routes, mirrors, exchanged)?;
                        if *over_slots {
                            run.invoke_over_list(*kernel, &args[q], shared)
                        } else {
                            run.invoke(*kernel, &args[q])
                        }
                    }));
                    self.merged.wait();
                    let ran = ran.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                    outcome.result = ran?;
                    phases.end("merge and kernel");
                    for (&property, sends) in diff.iter().zip(&sends) {
                        outcome.sent.push(run.send_changes_to(property, ghosts, sends)?);
                    }
                    phases.end("changes sent");
                } else if *over_slots {
                    (outcome.result, outcome.sent) =
                        run.invoke_over_list_sending(*kernel, &args[q], shared, diff, ghosts, &sends)?;
                    phases.end("kernel over the shared slots and changes sent");
                } else {
                    (outcome.result, outcome.sent) = run.invoke_sending(*kernel, &args[q], diff, ghosts, &sends)?;
                    phases.end("kernel and changes sent");
                }
                if *split {
                    let [owner_of, position, at_owner, starts] = self.maps[q].map(list);
                    let map = GhostMap { part: q, owner_of, position, at_owner, starts };
                    outcome.pushes = run.send_pushes(map, routes)?;
                    phases.end("pushes sent");
                }
            }
            Job::JoinGather { roots, root, class } => {
                run.invoke_over_list(*roots, &[], shared)?;
                let mut classes = Vec::new();
                run.gather(*root, super::Indices::List(shared), &mut outcome.words)?;
                run.gather(*class, super::Indices::List(shared), &mut classes)?;
                outcome.words.extend_from_slice(&classes);
                phases.end("roots and classes gathered");
            }
            Job::JoinPut { class, words } => {
                // The shared slots are the mirrors (sorted, each once), then the ghosts in order.
                let words = &words[q];
                let mirrored = shared.len() - ghosts.len();
                let positions: Vec<u32> = (0..ghosts.len().max(mirrors.len()) as u32).collect();
                run.put(*class, ghosts, &positions[..ghosts.len()], &words[mirrored..])?;
                let at_mirror = |l: &u32| shared[..mirrored].binary_search(l).expect("a mirror is a shared slot");
                let mirror_words: Vec<u64> = mirrors.iter().map(|l| words[at_mirror(l)]).collect();
                run.put(*class, mirrors, &positions[..mirrors.len()], &mirror_words)?;
                phases.end("classes put");
            }
            Job::Merge(exchanged) => {
                merge_received(run, q, routes, mirrors, exchanged)?;
                phases.end("merge");
                // This part's words its ghosts elsewhere have not seen, to their parts' inboxes
                // (after the merges, which the comparisons follow on the device).
                for (i, synced) in exchanged.properties.iter().filter(|s| s.read).enumerate() {
                    let share = |r: &Route| r.to_ghosts.as_ref().map(|p| p.share(i, r.mirrors.len() * CHANGE));
                    let sends: Vec<super::Send> = routes.iter().map(|r| (r.mirrors.clone(), share(r))).collect();
                    outcome.sent.push(run.send_changes_to(synced.property, mirrors, &sends)?);
                }
                phases.end("mirrors' changes sent");
                // The merges are done before another part writes this part's inboxes again.
                run.settle()?;
                phases.end("settled");
            }
            Job::Refresh(exchanged) => {
                for (w, synced) in exchanged.properties.iter().enumerate() {
                    for (route, &count) in routes.iter().zip(&exchanged.counts[q][w]) {
                        if let Some(inbox) = route.from_owner.filter(|_| count > 0) {
                            let share = Share::of(inbox, w, route.ghosts.len() * CHANGE);
                            run.put_changes(synced.property, share, count, ghosts, route.ghosts.start)?;
                        }
                    }
                }
                phases.end("ghosts stored");
            }
            Job::Defaults { kernel, args, properties } => {
                outcome.result = run.invoke_over_slots(*kernel, &args[q])?;
                phases.end("kernel over every slot");
                for &property in properties {
                    run.record_current(property, ghosts)?;
                    run.record_current(property, mirrors)?;
                }
                phases.end("words recorded");
            }
            Job::Prepare { properties, peer_lists, rings } => {
                let map = self.maps[q].map(list);
                let lists: Vec<&[u32]> = [ghosts, mirrors, shared].into_iter().chain(map).collect();
                let records: Vec<(&[u32], grail_ir::PropertyId)> =
                    properties.iter().flat_map(|&p| [(ghosts, p), (mirrors, p)]).collect();
                run.prepare_exchange(self.runs.len(), &lists, &records)?;
                phases.end("lists and records");
                if let Some(lists) = peer_lists.get(q) {
                    match run.prepare_peer_lists(lists, self.runs.len(), properties.len(), *rings) {
                        Ok(()) => phases.end("lists for regions on the devices"),
                        // The run's regions then go superstep by superstep from the host.
                        Err(crate::error::RuntimeError::OutOfMemory { .. }) => outcome.no_room_for_regions = true,
                        Err(error) => return Err(error),
                    }
                }
            }
            Job::Async(state) => return super::asynchronous::drive(q, run, ghosts, mirrors, state),
            Job::Region { region, locals, tables } => {
                let mut mine = locals.clone();
                match run.run_region_with_peers(*region, &mut mine, &tables[q])? {
                    super::peer::End::Done(exchanging) => outcome.exchanging = exchanging,
                    super::peer::End::Stopped => outcome.stopped = true,
                }
                outcome.locals = mine;
            }
        }
        Ok(outcome)
    }
}

/// Part `q`'s side of an exchange's merge: the pushes the others sent it appended to its
/// worklist, their changed ghosts of its nodes merged in.
fn merge_received(
    run: &mut dyn PartRun,
    q: usize,
    routes: &[Route],
    mirrors: &[u32],
    exchanged: &Exchanged,
) -> Result<()> {
    if !exchanged.on_devices.is_empty() {
        return merge_counted(run, q, routes, mirrors, &exchanged.properties, &exchanged.on_devices);
    }
    for (route, &count) in routes.iter().zip(&exchanged.pushes[q]) {
        if let Some(inbox) = route.from_ghost_pushes.filter(|_| count > 0) {
            run.take_pushes(inbox, count)?;
        }
    }
    // The i-th property sent (of those written through other nodes) is in share i.
    // Every sender's changes of one property in one call (one launch on a GPU).
    for (i, (w, synced)) in exchanged.properties.iter().enumerate().filter(|(_, s)| s.remote).enumerate() {
        let received: Vec<Received> = routes
            .iter()
            .zip(&exchanged.counts[q][w])
            .filter_map(|(route, &count)| {
                let inbox = route.from_ghosts.filter(|_| count > 0)?;
                let share = Share::of(inbox, i, route.mirrors.len() * CHANGE);
                Some(Received { share, count, start: route.mirrors.start })
            })
            .collect();
        if !received.is_empty() {
            run.merge_changes(synced.property, synced.merge, &received, mirrors, synced.read)?;
        }
    }
    Ok(())
}

/// [`merge_received`] after a deferred superstep: the senders' counts of the changes of
/// `properties` are on their devices (`on_devices`, by part), so the merges wait for the
/// senders' events there and read them.
fn merge_counted(
    run: &mut dyn PartRun,
    q: usize,
    routes: &[Route],
    mirrors: &[u32],
    properties: &[Synced],
    on_devices: &[super::DeviceCounts],
) -> Result<()> {
    let from = |i: usize| on_devices[super::exchange::peer(q, i)];
    let events: Vec<u64> =
        routes.iter().enumerate().filter(|(_, r)| r.from_ghosts.is_some()).map(|(i, _)| from(i).event).collect();
    if events.is_empty() {
        return Ok(());
    }
    run.wait_for_events(&events)?;
    for (i, synced) in properties.iter().filter(|s| s.remote).enumerate() {
        let received: Vec<Counted> = routes
            .iter()
            .enumerate()
            .filter_map(|(r, route)| {
                let inbox = route.from_ghosts?;
                let sender = from(r);
                // The sender's word for property i and its route to this part.
                let word = i * sender.sends + super::exchange::route_to(super::exchange::peer(q, r), q);
                Some(Counted {
                    share: Share::of(inbox, i, route.mirrors.len() * CHANGE),
                    count_at: sender.words + 8 * word as u64,
                    most: route.mirrors.len(),
                    start: route.mirrors.start,
                })
            })
            .collect();
        run.merge_counted(synced.property, synced.merge, &received, mirrors)?;
    }
    Ok(())
}

/// The drivers of parts 1..; dropping the crew stops them.
pub(crate) struct Crew<'s> {
    state: &'s CrewState,
    threads: Vec<Thread>,
}

impl<'s> Crew<'s> {
    /// Starts a driver for every part but the first in `scope`.
    pub fn start<'env>(scope: &'s Scope<'s, 'env>, state: &'s CrewState) -> Crew<'s> {
        let threads = (1..state.runs.len()).map(|q| scope.spawn(move || drive(state, q)).thread().clone()).collect();
        Crew { state, threads }
    }

    /// Runs `job` on every part at once, part 0 on the calling thread; each part's outcome.
    pub fn run(&mut self, job: Job) -> Vec<Result<Outcome>> {
        let state = self.state;
        // SAFETY: no driver runs (the last invocation's all reported back).
        unsafe {
            *state.job.get() = job;
            *state.published.get() = super::trace::summing().then(Instant::now);
        }
        state.pending.store(self.threads.len(), Ordering::Release);
        state.epoch.fetch_add(1, Ordering::Release);
        for thread in &self.threads {
            thread.unpark();
        }
        // SAFETY: part 0 is driven by this thread alone; the job is written.
        let first = unsafe { state.step(0) };
        let others = super::trace::summing().then(Instant::now);
        let mut spins = 0u32;
        while state.pending.load(Ordering::Acquire) != 0 {
            spins += 1;
            if spins % 256 == 0 {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
        if let Some(others) = others {
            super::trace::add("crew: part 0 done, waiting for the others".to_string(), others.elapsed());
        }
        let mut results = vec![first];
        for slot in &state.results[1..] {
            // SAFETY: every driver has reported back.
            results.push(unsafe { (*slot.get()).take() }.expect("every driver reports"));
        }
        results
    }
}

impl Drop for Crew<'_> {
    fn drop(&mut self) {
        self.state.stop.store(true, Ordering::Release);
        self.state.epoch.fetch_add(1, Ordering::Release);
        for thread in &self.threads {
            thread.unpark();
        }
    }
}

/// Driver `q`'s loop: wait for an invocation, run it on part `q`, report.
fn drive(state: &CrewState, q: usize) {
    let mut seen = 0u64;
    loop {
        let waiting = Instant::now();
        let mut epoch = state.epoch.load(Ordering::Acquire);
        let mut spins = 0u32;
        while epoch == seen {
            spins += 1;
            if waiting.elapsed() < SPIN {
                // Yielding now and then lets a machine with fewer cores than drivers go on.
                if spins % 256 == 0 {
                    std::thread::yield_now();
                } else {
                    std::hint::spin_loop();
                }
            } else {
                std::thread::park_timeout(Duration::from_millis(5));
            }
            epoch = state.epoch.load(Ordering::Acquire);
        }
        seen = epoch;
        if state.stop.load(Ordering::Acquire) {
            return;
        }
        // SAFETY: written before the epoch moved, not written again until every driver reports.
        if let Some(published) = unsafe { *state.published.get() } {
            super::trace::add(format!("crew: part {q} started after"), published.elapsed());
        }
        // SAFETY: the job was written before the epoch moved; part `q` is this driver's until it
        // reports back.
        let result = std::panic::catch_unwind(AssertUnwindSafe(|| unsafe { state.step(q) })).unwrap_or_else(|panic| {
            let what =
                panic.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| panic.downcast_ref::<String>().cloned());
            Err(RuntimeError::program(format!(
                "internal error: the driver of part {q} panicked: {}",
                what.unwrap_or_default()
            )))
        });
        // SAFETY: only this driver writes this slot, and the caller reads it after `pending`.
        unsafe { *state.results[q].get() = Some(result) };
        state.pending.fetch_sub(1, Ordering::AcqRel);
    }
}
