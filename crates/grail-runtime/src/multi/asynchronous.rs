//! The asynchronous mode (Groute's way, in part): a worklist loop (`iterate k() initial ...`
//! with an empty body) runs on every part without supersteps. Each part's driver runs the
//! kernel whenever its worklist has items, sends the ghosts it changed and pushed to their
//! owners as packets, merges the packets it receives as they come, and, for properties
//! kernels read through ghosts, sends its boundary nodes' new values to their ghosts (also to
//! the ghost a value came from: leaving those out was measured slower, docs/benchmarks.md).
//! `GRAIL_TRACE_STEPS=1` prints each part's cycles: what came in, ran and went out. The loop
//! ends when every part is idle and no packet is in flight (checked twice around the idle
//! flags, with the count of packets ever sent unchanged between: no part can have woken).
//!
//! With soft priorities (Groute §4.4, [`Priority`]), nodes other parts push to a part wait in
//! buckets of their value while they are more than a width above the lowest waiting one, and
//! are taken, lowest bucket first, when the part's worklist runs dry: a shortest-path wave
//! crossing into a part is not run ahead of nearer work there.
//!
//! Packets travel through a [`Transport`]: in-process mailboxes now (through host memory between
//! GPUs), a message-passing transport beyond one node later; a seeded
//! jitter (random short waits, packets taken in shuffled order) tests that the result and the
//! termination do not depend on timing.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use grail_graph::PropertyType;
use grail_ir::{KernelId, OutlineId, PropertyId};

use super::crew::Outcome;
use super::merge::{Merge, normal};
use super::{Change, PartRun};
use crate::error::{Result, RuntimeError};
use crate::host::value::Value;

/// A node property the loop's kernel writes.
pub(crate) struct Written {
    pub property: PropertyId,
    pub ty: PropertyType,
    pub merge: Merge,
    /// Written through other nodes than the kernel's items: ghosts may change.
    pub remote: bool,
    /// Read through ghosts by some kernel: ghosts are kept equal to their owners.
    pub read: bool,
}

/// Where each part's ghosts and mirrors live among the other parts.
pub(crate) struct Routing {
    pub owned: u32,
    /// By ghost position (in the part's ghost list): its owner part and local id there.
    pub ghost_owner: Vec<u32>,
    pub ghost_at: Vec<u32>,
    /// By ghost (local id minus `owned`): its position in the ghost list.
    pub ghost_position: Vec<u32>,
    /// By mirror position (in the part's mirror list): the part holding the ghost, and its
    /// position there.
    pub mirror_target: Vec<(u32, u32)>,
}

/// How packets travel between parts: what a transport between processes (message passing)
/// would implement to run the same loop beyond one node. `send` must not block; `take` returns
/// what arrived for a part since its last call, each packet with its sender, and is called by
/// the part's driver whenever it looks for work (idle or not), so a transport may pass packets
/// on there. Packets from one part to another arrive in the order they were sent (as messages
/// between two processes do under MPI's non-overtaking rule); packets from different senders
/// in any order. The loop relies on it: an owner's new value for a ghost replaces the last, and
/// goes out before the pushes of the nodes that will read it.
pub(crate) trait Transport: Send + Sync {
    fn send(&self, from: usize, to: usize, packet: Packet);
    fn take(&self, part: usize) -> Vec<(usize, Packet)>;
    /// Packets passed on by parts they were not for (0 where every packet goes straight).
    fn relayed(&self) -> u64 {
        0
    }
}

/// The transport within one process: a mailbox per part.
pub(crate) struct Mailboxes(Vec<Mutex<Vec<(usize, Packet)>>>);

impl Mailboxes {
    pub fn new(parts: usize) -> Mailboxes {
        Mailboxes((0..parts).map(|_| Mutex::new(Vec::new())).collect())
    }
}

impl Transport for Mailboxes {
    fn send(&self, from: usize, to: usize, packet: Packet) {
        self.0[to].lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push((from, packet));
    }

    fn take(&self, part: usize) -> Vec<(usize, Packet)> {
        std::mem::take(&mut *self.0[part].lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
    }
}

/// Groute's ring (§4.3): every part sends to the next part on the ring only, which keeps the
/// packets for itself and passes the others on when it next looks for work; a packet from part
/// `q` to part `r` makes `(r - q) mod k` hops. For devices whose links form a ring (or where only
/// neighbours are connected); where every pair is connected, sending straight is faster. A
/// packet in a mailbox on its way still counts as in flight, so termination waits for it.
pub(crate) struct Ring {
    /// By part: what waits there, each packet with its sender and its destination (passed on
    /// in the order it came, so each pair's packets keep theirs).
    boxes: Vec<Mutex<Vec<(usize, usize, Packet)>>>,
    relayed: AtomicU64,
}

impl Ring {
    pub fn new(parts: usize) -> Ring {
        Ring { boxes: (0..parts).map(|_| Mutex::new(Vec::new())).collect(), relayed: AtomicU64::new(0) }
    }

    fn post(&self, at: usize, from: usize, to: usize, packet: Packet) {
        self.boxes[at].lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push((from, to, packet));
    }
}

impl Transport for Ring {
    fn send(&self, from: usize, to: usize, packet: Packet) {
        self.post((from + 1) % self.boxes.len(), from, to, packet);
    }

    fn take(&self, part: usize) -> Vec<(usize, Packet)> {
        let arrived = std::mem::take(&mut *self.boxes[part].lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
        let next = (part + 1) % self.boxes.len();
        let mut mine = Vec::new();
        for (from, to, packet) in arrived {
            if to == part {
                mine.push((from, packet));
            } else {
                self.relayed.fetch_add(1, Ordering::Relaxed);
                self.post(next, from, to, packet);
            }
        }
        mine
    }

    fn relayed(&self) -> u64 {
        self.relayed.load(Ordering::Relaxed)
    }
}

/// Which way packets travel between the parts of the asynchronous mode.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Topology {
    /// Every part sends straight to every other.
    #[default]
    Direct,
    /// Around a ring of the parts, in part order ([`Ring`]).
    Ring,
}

impl std::str::FromStr for Topology {
    type Err = String;
    fn from_str(text: &str) -> std::result::Result<Topology, String> {
        match text {
            "direct" => Ok(Topology::Direct),
            "ring" => Ok(Topology::Ring),
            other => Err(format!("unknown topology `{other}` (expected direct or ring)")),
        }
    }
}

impl std::fmt::Display for Topology {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Topology::Direct => "direct",
            Topology::Ring => "ring",
        })
    }
}

/// What parts send each other.
pub(crate) enum Packet {
    /// Ghosts of property `w` that part `from` changed: the owner's local ids, the ghosts'
    /// words before and after, and their positions at the sender (to give values back).
    Merge { w: usize, from: usize, at: Vec<u32>, before: Vec<u64>, after: Vec<u64>, positions: Vec<u32> },
    /// Owned nodes pushed through their ghosts.
    Push(Vec<u32>),
    /// New words for ghosts of property `w` (positions in the receiver's ghost list).
    Refresh { w: usize, positions: Vec<u32>, words: Vec<u64> },
}

/// The invocations a part's device makes in its share of a worklist loop between exchanges
/// ([`PartRun::run_loop_locally`]): enough that the exchange's cost (finding the changed ghosts,
/// copies through the host) is small beside them, few enough that the other parts hear of the
/// changes while the loop goes on (a shortest-path wave crosses into the next part). The
/// environment variable `GRAIL_EXCHANGE_ROUNDS` overrides it (0: until the part's worklist is
/// empty), for measuring.
pub const EXCHANGE_ROUNDS: u32 = 256;

fn exchange_rounds() -> u32 {
    std::env::var("GRAIL_EXCHANGE_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(EXCHANGE_ROUNDS)
}

/// Soft priorities: which written property orders the pushed nodes, and the width of a bucket.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Priority {
    /// Its index among the loop's written properties.
    pub w: usize,
    pub delta: u64,
}

impl Priority {
    /// The priority of a loop whose kernel lowers an integer property of other nodes with
    /// `atomic_min` (the first such), buckets `delta` wide; `None` when it lowers none.
    pub fn of(written: &[Written], delta: u64) -> Option<Priority> {
        let integer = |ty| matches!(ty, PropertyType::U32 | PropertyType::U64 | PropertyType::I32 | PropertyType::I64);
        written
            .iter()
            .position(|w| w.remote && w.merge == Merge::Min && integer(w.ty))
            .map(|w| Priority { w, delta: delta.max(1) })
    }

    /// A word's place in the order of its type, as an unsigned number.
    fn key(ty: PropertyType, word: u64) -> u64 {
        const SIGN: u64 = 1 << 63;
        match ty {
            PropertyType::I32 => (word as u32 as i32 as i64 as u64) ^ SIGN,
            PropertyType::I64 => word ^ SIGN,
            PropertyType::U32 => word & 0xffff_ffff,
            _ => word,
        }
    }
}

/// The nodes waiting on a part under soft priorities, by bucket.
#[derive(Default)]
struct Waiting {
    buckets: std::collections::BTreeMap<u64, Vec<u32>>,
    /// The highest key taken at once: nodes up to it go straight to the worklist.
    limit: Option<u64>,
}

impl Waiting {
    /// Sorts pushed nodes (with their keys) into those to run now and those to wait.
    fn sort(&mut self, priority: Priority, items: Vec<u32>, keys: &[u64], now: &mut Vec<u32>) -> u64 {
        let mut waiting = 0;
        for (item, &key) in items.into_iter().zip(keys) {
            if self.limit.is_some_and(|limit| key <= limit) {
                now.push(item);
            } else {
                self.buckets.entry(key / priority.delta).or_default().push(item);
                waiting += 1;
            }
        }
        waiting
    }

    /// The lowest waiting bucket, when the part has nothing else to do; the limit rises to its
    /// top.
    fn release(&mut self, priority: Priority) -> Vec<u32> {
        let Some((lowest, items)) = self.buckets.pop_first() else { return Vec::new() };
        self.limit = Some(lowest.saturating_add(1).saturating_mul(priority.delta).saturating_sub(1));
        items
    }
}

/// What the parts share during one asynchronous loop.
pub(crate) struct AsyncState {
    pub kernel: KernelId,
    /// Each part's arguments.
    pub args: Vec<Vec<Value>>,
    pub written: Vec<Written>,
    pub routing: Vec<Routing>,
    /// Random waits and shuffled packets, from this seed (tests).
    pub jitter: Option<u64>,
    /// The loop's outlined region and `main`'s locals: a part that can runs the loop whole on
    /// its device between exchanges ([`PartRun::run_loop_locally`]) instead of a round.
    pub region: Option<(OutlineId, Vec<Value>)>,
    /// Soft priorities for the nodes parts push to each other, if asked for.
    pub priority: Option<Priority>,
    transport: Box<dyn Transport>,
    in_flight: AtomicI64,
    sent: AtomicU64,
    idle: Vec<AtomicBool>,
    done: AtomicBool,
    failed: Mutex<Option<RuntimeError>>,
    pub invocations: AtomicU64,
    pub merged: AtomicU64,
    pub copied: AtomicU64,
    pub forwarded: AtomicU64,
    /// Pushed nodes that waited under soft priorities.
    pub deferred: AtomicU64,
    /// Per part, nanoseconds spent exchanging (merging what arrived, finding and sending
    /// changes), not running the kernel or waiting.
    pub exchanging: Vec<AtomicU64>,
}

impl AsyncState {
    pub fn new(
        kernel: KernelId,
        args: Vec<Vec<Value>>,
        written: Vec<Written>,
        routing: Vec<Routing>,
        jitter: Option<u64>,
        topology: Topology,
    ) -> AsyncState {
        let k = routing.len();
        let transport: Box<dyn Transport> = match topology {
            Topology::Direct => Box::new(Mailboxes::new(k)),
            Topology::Ring => Box::new(Ring::new(k)),
        };
        AsyncState {
            kernel,
            args,
            written,
            routing,
            jitter,
            region: None,
            priority: None,
            transport,
            in_flight: AtomicI64::new(0),
            sent: AtomicU64::new(0),
            idle: (0..k).map(|_| AtomicBool::new(false)).collect(),
            done: AtomicBool::new(false),
            failed: Mutex::new(None),
            invocations: AtomicU64::new(0),
            merged: AtomicU64::new(0),
            copied: AtomicU64::new(0),
            forwarded: AtomicU64::new(0),
            deferred: AtomicU64::new(0),
            exchanging: (0..k).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// The first error a part met, if any.
    pub fn take_error(&self) -> Option<RuntimeError> {
        self.failed.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take()
    }

    fn send(&self, from: usize, to: usize, packet: Packet) {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        self.sent.fetch_add(1, Ordering::SeqCst);
        self.transport.send(from, to, packet);
    }

    /// Packets the transport passed on through parts they were not for.
    pub fn relayed(&self) -> u64 {
        self.transport.relayed()
    }

    /// Whether every part is idle with nothing in flight, and stayed so while checked.
    fn finished(&self) -> bool {
        let sent = self.sent.load(Ordering::SeqCst);
        if self.in_flight.load(Ordering::SeqCst) != 0 || !self.idle.iter().all(|i| i.load(Ordering::SeqCst)) {
            return false;
        }
        self.in_flight.load(Ordering::SeqCst) == 0 && self.sent.load(Ordering::SeqCst) == sent
    }
}

/// A small generator for the jitter (xorshift).
struct Jitter(u64);

impl Jitter {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn wait(&mut self) {
        let micros = self.next() % 40;
        if micros > 20 {
            std::thread::sleep(Duration::from_micros(micros));
        }
    }
}

/// Part `q`'s side of the loop, on its driver's thread; `ghosts` and `mirrors` are its fixed
/// lists.
pub(crate) fn drive(
    q: usize,
    run: &mut dyn PartRun,
    ghosts: &[u32],
    mirrors: &[u32],
    state: &AsyncState,
) -> Result<Outcome> {
    let result = drive_inner(q, run, ghosts, mirrors, state);
    if let Err(error) = result {
        state.failed.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).get_or_insert(error);
        state.done.store(true, Ordering::SeqCst);
    }
    Ok(Outcome::default())
}

/// What one cycle of a part's asynchronous driver took in and sent out (`GRAIL_TRACE_STEPS=1`):
/// words merged into its nodes and pushed nodes received, ghost values refreshed; the kernel's
/// invocations; the ghosts' changes sent to their owners, the ghosts pushed, the boundary
/// values sent to the parts that hold them as ghosts.
#[derive(Default)]
struct Moved {
    merged_in: u64,
    pushed_in: u64,
    refreshed_in: u64,
    invocations: u64,
    merged_out: u64,
    pushed_out: u64,
    refreshed_out: u64,
}

impl std::fmt::Display for Moved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "in: merged {}, pushed {}, refreshed {}; {} invocations; out: changes {}, pushed {}, boundary {}",
            self.merged_in,
            self.pushed_in,
            self.refreshed_in,
            self.invocations,
            self.merged_out,
            self.pushed_out,
            self.refreshed_out
        )
    }
}

/// Invokes the loop's kernel on this part up to `budget` times (0: until its worklist is
/// empty) without exchanging, taking the ghosts each invocation pushed out of the worklist (a
/// part runs its own nodes only): what a GPU part's outlined loop does on the device, for a part
/// that runs it invocation by invocation (a CPU part). Returns the ghosts pushed, each once, and
/// the invocations made.
fn invoke_locally(run: &mut dyn PartRun, kernel: KernelId, args: &[Value], budget: u32) -> Result<(Vec<u32>, u64)> {
    let mut ghosts = Vec::new();
    let mut invoked = 0u64;
    loop {
        run.invoke(kernel, args)?;
        invoked += 1;
        ghosts.extend(run.take_pushed_ghosts()?);
        if (budget != 0 && invoked >= u64::from(budget)) || run.worklist_is_empty()? {
            break;
        }
    }
    ghosts.sort_unstable();
    ghosts.dedup();
    Ok((ghosts, invoked))
}

fn drive_inner(q: usize, run: &mut dyn PartRun, ghosts: &[u32], mirrors: &[u32], state: &AsyncState) -> Result<()> {
    let k = state.routing.len();
    let routing = &state.routing[q];
    let mut jitter = state.jitter.map(|seed| Jitter(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (q as u64 + 1)));
    let mut changes: Vec<Change> = Vec::new();
    let mut idle_rounds = 0u32;
    let mut exchanging = Duration::ZERO;
    // Whether this part runs the loop on its device between exchanges (known after the first
    // try), and for how many invocations at a time.
    let mut region = state.region.clone();
    let budget = exchange_rounds();
    let mut waiting = Waiting::default();
    let mut keys = Vec::new();
    let mut cycle = 0u64;
    while !state.done.load(Ordering::SeqCst) {
        let mut packets = state.transport.take(q);
        let exchange_started = std::time::Instant::now();
        let received = packets.len() as i64;
        // What this cycle took in and sent out, for `GRAIL_TRACE_STEPS=1` (timing nothing when
        // it is off).
        let mut phases = super::trace::Phases::start(q, "async cycle");
        let mut moved = Moved::default();
        if received > 0 {
            state.idle[q].store(false, Ordering::SeqCst);
        }
        if let Some(jitter) = &mut jitter {
            // Senders taken in a random order, each sender's packets in theirs (as a transport
            // may deliver them: see `Transport`).
            let first = jitter.next() as usize % k;
            packets.sort_by_key(|(from, _)| (from + k - first) % k);
        }
        let mut owned_changed = false;
        for (_, packet) in packets {
            match packet {
                Packet::Merge { w, from, at, before, after, positions } => {
                    moved.merged_in += at.len() as u64;
                    let written = &state.written[w];
                    let mut words = before;
                    run.merge_in(written.property, written.merge, &at, &mut words, &after)?;
                    state.merged.fetch_add(at.len() as u64, Ordering::Relaxed);
                    owned_changed = true;
                    if written.read {
                        // A ghost whose new value its owner did not take gets the owner's back.
                        let (mut back, mut back_words) = (Vec::new(), Vec::new());
                        for ((&word, &new), &position) in words.iter().zip(&after).zip(&positions) {
                            let word = normal(written.ty, word);
                            if word != new {
                                back.push(position);
                                back_words.push(word);
                            }
                        }
                        if !back.is_empty() {
                            state.send(q, from, Packet::Refresh { w, positions: back, words: back_words });
                        }
                    }
                }
                Packet::Push(items) => {
                    moved.pushed_in += items.len() as u64;
                    state.forwarded.fetch_add(items.len() as u64, Ordering::Relaxed);
                    match state.priority {
                        Some(priority) => {
                            let written = &state.written[priority.w];
                            run.gather(written.property, super::Indices::List(&items), &mut keys)?;
                            for key in &mut keys {
                                *key = Priority::key(written.ty, *key);
                            }
                            let mut now = Vec::new();
                            let deferred = waiting.sort(priority, items, &keys, &mut now);
                            state.deferred.fetch_add(deferred, Ordering::Relaxed);
                            run.extend_worklist(&now)?;
                        }
                        None => run.extend_worklist(&items)?,
                    }
                }
                Packet::Refresh { w, positions, words } => {
                    moved.refreshed_in += positions.len() as u64;
                    state.copied.fetch_add(positions.len() as u64, Ordering::Relaxed);
                    run.put(state.written[w].property, ghosts, &positions, &words)?;
                }
            }
        }
        // The packets' effects are in this part now (its worklist, its columns, the waiting
        // nodes).
        state.in_flight.fetch_sub(received, Ordering::SeqCst);
        let mut work = !run.worklist_is_empty()?;
        if let Some(priority) = state.priority.filter(|_| !work) {
            let released = waiting.release(priority);
            if !released.is_empty() {
                run.extend_worklist(&released)?;
                work = true;
            }
        }
        exchanging += exchange_started.elapsed();
        phases.end("packets in");
        // The ghosts this cycle's kernels pushed, by owner: sent after the boundary values, so
        // that a pushed node that reads a ghost finds its new value there (the packets between
        // two parts arrive in the order they were sent).
        let mut pushes: Vec<Vec<u32>> = vec![Vec::new(); k];
        let exchange_started = if work {
            state.idle[q].store(false, Ordering::SeqCst);
            // The whole loop on the device, until this part's worklist is empty, where it can;
            // else one round.
            let mut pushed_ghosts = None;
            if let Some((id, locals)) = &mut region {
                pushed_ghosts = run.run_loop_locally(*id, locals, budget)?;
                if pushed_ghosts.is_none() {
                    region = None;
                }
            }
            let mut invoked = 1;
            if pushed_ghosts.is_none() {
                let (ghosts, made) = invoke_locally(run, state.kernel, &state.args[q], budget)?;
                pushed_ghosts = Some(ghosts);
                invoked = made;
            }
            let exchange_started = std::time::Instant::now();
            phases.end("kernels");
            moved.invocations = invoked;
            state.invocations.fetch_add(invoked, Ordering::Relaxed);
            owned_changed = true;
            for (w, written) in state.written.iter().enumerate().filter(|(_, w)| w.remote) {
                changes.clear();
                run.diff(written.property, ghosts, &mut changes)?;
                let mut packets: Vec<Packet> = (0..k)
                    .map(|_| Packet::Merge {
                        w,
                        from: q,
                        at: Vec::new(),
                        before: Vec::new(),
                        after: Vec::new(),
                        positions: Vec::new(),
                    })
                    .collect();
                for change in &changes {
                    let i = change.position as usize;
                    if let Packet::Merge { at, before, after, positions, .. } =
                        &mut packets[routing.ghost_owner[i] as usize]
                    {
                        at.push(routing.ghost_at[i]);
                        before.push(normal(written.ty, change.old));
                        after.push(normal(written.ty, change.new));
                        positions.push(change.position);
                    }
                }
                moved.merged_out += changes.len() as u64;
                for (o, packet) in packets.into_iter().enumerate() {
                    if matches!(&packet, Packet::Merge { at, .. } if !at.is_empty()) {
                        if let Some(jitter) = &mut jitter {
                            jitter.wait();
                        }
                        state.send(q, o, packet);
                    }
                }
            }
            let pushed_ghosts = match pushed_ghosts {
                Some(ghosts) => ghosts,
                None => run.take_pushed_ghosts()?,
            };
            for x in pushed_ghosts {
                let position = routing.ghost_position[(x - routing.owned) as usize] as usize;
                pushes[routing.ghost_owner[position] as usize].push(routing.ghost_at[position]);
            }
            phases.end("ghosts out");
            exchange_started
        } else {
            std::time::Instant::now()
        };
        if owned_changed {
            // This part's boundary values its ghosts elsewhere have not seen.
            for (w, written) in state.written.iter().enumerate().filter(|(_, w)| w.read) {
                changes.clear();
                run.diff(written.property, mirrors, &mut changes)?;
                let mut packets: Vec<(Vec<u32>, Vec<u64>)> = vec![Default::default(); k];
                for change in &changes {
                    let (part, position) = routing.mirror_target[change.position as usize];
                    packets[part as usize].0.push(position);
                    packets[part as usize].1.push(normal(written.ty, change.new));
                }
                for (p, (positions, words)) in packets.into_iter().enumerate() {
                    if !positions.is_empty() {
                        moved.refreshed_out += positions.len() as u64;
                        state.send(q, p, Packet::Refresh { w, positions, words });
                    }
                }
            }
            phases.end("boundary out");
        }
        for (o, items) in pushes.into_iter().enumerate() {
            if !items.is_empty() {
                moved.pushed_out += items.len() as u64;
                state.send(q, o, Packet::Push(items));
            }
        }
        exchanging += exchange_started.elapsed();
        if received > 0 || work {
            if super::trace::on() {
                cycle += 1;
                eprintln!("trace   part {q} cycle {cycle}: {moved}");
            }
            drop(phases);
        } else {
            // An idle cycle: nothing to say.
            phases.discard();
        }
        if !work && received == 0 {
            state.idle[q].store(true, Ordering::SeqCst);
            if state.finished() {
                state.done.store(true, Ordering::SeqCst);
                break;
            }
            idle_rounds += 1;
            match &mut jitter {
                Some(jitter) => jitter.wait(),
                None if idle_rounds % 64 == 0 => std::thread::yield_now(),
                None => std::hint::spin_loop(),
            }
        } else {
            idle_rounds = 0;
        }
    }
    state.exchanging[q].store(exchanging.as_nanos() as u64, Ordering::Relaxed);
    Ok(())
}
