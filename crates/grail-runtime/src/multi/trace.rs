//! Where a partitioned run's supersteps spend their time, on standard error, when
//! `GRAIL_TRACE_STEPS=1`: per superstep the kernel, its computing and synchronizing time and
//! what moved; per part and job, the time of each phase of its driver (the host's calls, which
//! wait where the device work they queued must finish); in the asynchronous mode, per part and
//! cycle of its driver that did something, what it took in, ran and sent, and the time of each.
//! Off, it costs one flag test per phase. With `GRAIL_TRACE_STEPS=sum` nothing is printed as it
//! happens (printing takes longer than a superstep's phases): each line's times are added up
//! under its name, and the totals and means are printed once, when the partitioned run ends.

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Whether tracing is on (read once).
pub fn on() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("GRAIL_TRACE_STEPS").is_some_and(|v| v != "0" && !v.is_empty()))
}

/// Whether tracing adds the times up instead of printing each (`GRAIL_TRACE_STEPS=sum`).
pub fn summing() -> bool {
    static SUM: OnceLock<bool> = OnceLock::new();
    *SUM.get_or_init(|| std::env::var_os("GRAIL_TRACE_STEPS").is_some_and(|v| v == "sum"))
}

/// The summed times by name: how many were added, and their total.
static SUMS: Mutex<BTreeMap<String, (u64, Duration)>> = Mutex::new(BTreeMap::new());

/// Adds `d` to the total called `name` (when summing).
pub(crate) fn add(name: String, d: Duration) {
    let mut sums = SUMS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let entry = sums.entry(name).or_default();
    entry.0 += 1;
    entry.1 += d;
}

/// Named laps of one host call, added up under `prefix` (only when summing): where the
/// driver calls of an invocation go.
pub(crate) struct Laps {
    prefix: &'static str,
    last: Option<Instant>,
}

impl Laps {
    pub fn start(prefix: &'static str) -> Laps {
        Laps { prefix, last: summing().then(Instant::now) }
    }

    /// Ends the lap called `name`.
    pub fn lap(&mut self, name: &'static str) {
        if let Some(last) = self.last {
            let now = Instant::now();
            add(format!("{}: {name}", self.prefix), now - last);
            self.last = Some(now);
        }
    }
}

/// When the host last gave the parts a superstep's work back to itself (summing).
static HOST_SINCE: Mutex<Option<Instant>> = Mutex::new(None);

/// Marks the end of a superstep on the host: the time until the next [`host_resumes`] is the
/// host's own between supersteps (the interpreter's, the synchronization's bookkeeping).
pub(crate) fn host_from_now() {
    if summing() {
        *HOST_SINCE.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(Instant::now());
    }
}

/// Adds the host's time since [`host_from_now`] (summing).
pub(crate) fn host_resumes() {
    if summing()
        && let Some(since) = HOST_SINCE.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take()
    {
        add("host between supersteps".to_string(), since.elapsed());
    }
}

/// Prints the summed times (their count, total and mean) and clears them: the end of a run.
pub(crate) fn print_sums() {
    if !summing() {
        return;
    }
    let sums = std::mem::take(&mut *SUMS.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
    for (name, (count, total)) in sums {
        let mean = total.as_secs_f64() * 1e6 / count.max(1) as f64;
        eprintln!("trace sum {name}: {count} times, {} in all, {mean:.1} us each", micros(total));
    }
}

/// The phases of one part's job, timed as they end.
pub(crate) struct Phases {
    part: usize,
    job: &'static str,
    last: Option<Instant>,
    ended: Vec<(&'static str, Duration)>,
}

impl Phases {
    pub fn start(part: usize, job: &'static str) -> Phases {
        Phases { part, job, last: on().then(Instant::now), ended: Vec::new() }
    }

    /// Ends the phase called `name` (the time since the last one ended).
    pub fn end(&mut self, name: &'static str) {
        if let Some(last) = self.last {
            let now = Instant::now();
            self.ended.push((name, now - last));
            self.last = Some(now);
        }
    }

    /// Drops the phases without printing them (a cycle that did nothing).
    pub fn discard(mut self) {
        self.last = None;
    }
}

impl Drop for Phases {
    fn drop(&mut self) {
        if self.last.is_some() && summing() {
            for (name, d) in &self.ended {
                add(format!("part {} {}: {name}", self.part, self.job), *d);
            }
        } else if self.last.is_some() {
            let phases: Vec<String> = self.ended.iter().map(|(name, d)| format!("{name} {}", micros(*d))).collect();
            eprintln!("trace   part {} {}: {}", self.part, self.job, phases.join(", "));
        }
    }
}

/// A superstep's line: the kernel, its computing and synchronizing time, and what moved.
pub(crate) fn step(step: u64, kernel: &str, compute: Duration, sync: Duration, moved: [u64; 3]) {
    let [merged, copied, forwarded] = moved;
    if summing() {
        add(format!("step `{kernel}` compute"), compute);
        add(format!("step `{kernel}` sync"), sync);
        return;
    }
    eprintln!(
        "trace step {step} `{kernel}`: compute {}, sync {}; merged {merged}, copied {copied}, forwarded {forwarded}",
        micros(compute),
        micros(sync)
    );
}

/// The instant the process's first launch was traced: parts' launch instants printed against
/// it can be compared (how far apart the parts' kernels started).
fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// When a region's control kernel was launched on a part, how long the host took to get
/// there from the region's start on that part (uploading its state), and how long it then
/// waited for the other parts to be ready too (`multi::peer::StartLine`).
pub(crate) struct Launch {
    pub prelude: Duration,
    pub waited: Duration,
    pub at: Instant,
}

/// A region run on every GPU at once: its launch, its control kernel's time and where global
/// thread 0's exchanges went (`grail_region`'s `peer_phase_ns`: sending, the first barrier,
/// merging, refreshing, the last barrier; its waits for the other parts inside the barriers).
/// The asynchronous exchange counts no supersteps and no phases, only its whole time.
pub(crate) fn peer_region(
    device: &str,
    launch: &Launch,
    gpu_ms: f32,
    exchanges: u64,
    total_ns: u64,
    phase_ns: [u64; 6],
) {
    let us = |ns: u64| format!("{:.0}", ns as f64 / 1e3);
    let [send, first, merge, refresh, last, waits] = phase_ns.map(us);
    let exchanged = if exchanges == 0 && phase_ns == [0; 6] {
        format!("asynchronous exchanges {} us (sending, taking and waiting idle)", us(total_ns))
    } else {
        format!(
            "{exchanges} exchanges {} us (send {send}, barrier {first}, merge {merge}, refresh {refresh}, \
             barrier {last}; waiting for the others {waits})",
            us(total_ns)
        )
    };
    eprintln!(
        "trace   {device} region on the devices: launched at {} after {} on the host and {} waiting for the \
         others there, kernel {:.0} us, {exchanged}",
        micros(launch.at.saturating_duration_since(epoch())),
        micros(launch.prelude),
        micros(launch.waited),
        f64::from(gpu_ms) * 1e3,
    );
}

fn micros(d: Duration) -> String {
    format!("{:.0} us", d.as_secs_f64() * 1e6)
}

/// A GPU invocation's line: its items, the columns' copy up, the launches with their waits, what
/// followed (the next worklist), and the kernels' own time by CUDA events.
pub(crate) fn invocation(
    kernel: &str,
    items: u64,
    up: Duration,
    launched: Duration,
    waited: Duration,
    after: Duration,
    gpu_ms: f32,
) {
    if summing() {
        add(format!("gpu `{kernel}` columns up"), up);
        add(format!("gpu `{kernel}` launches and waits"), launched);
        add(format!("gpu `{kernel}` of which waits"), waited);
        add(format!("gpu `{kernel}` after"), after);
        add(format!("gpu `{kernel}` kernels (events)"), Duration::from_secs_f64(f64::from(gpu_ms) / 1e3));
        return;
    }
    eprintln!(
        "trace     gpu `{kernel}`: {items} items, columns up {}, launches {} (waits {}), after {}, kernels {:.0} us",
        micros(up),
        micros(launched),
        micros(waited),
        micros(after),
        f64::from(gpu_ms) * 1e3
    );
}

/// A GPU part's comparisons of one property's ghosts or mirrors: how many sends went straight
/// into inboxes on devices it reaches and how many through copies, what they found, and the time.
pub(crate) fn changes_sent(property: &str, direct: usize, copied: usize, found: usize, took: Duration) {
    if summing() {
        add(format!("gpu changes of `{property}` sent"), took);
        return;
    }
    eprintln!(
        "trace     gpu changes of `{property}`: {direct} sends into inboxes, {copied} through copies, {found} found, {}",
        micros(took)
    );
}

/// A GPU buffer made with `cuMemAlloc`, or dropped (kept for reuse or freed), and the host time
/// it took: either may wait for the device's work, so one made or dropped inside a superstep
/// shows in its time.
pub(crate) fn device_memory(ordinal: usize, how: &str, what: &str, bytes: usize, took: Duration) {
    if summing() {
        add(format!("gpu memory {how}"), took);
        return;
    }
    eprintln!("trace     device {ordinal}: {what} of {bytes} bytes {how}, {}", micros(took));
}
