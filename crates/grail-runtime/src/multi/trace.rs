//! Where a partitioned run's supersteps spend their time, on standard error, when
//! `GRAIL_TRACE_STEPS=1`: per superstep the kernel, its computing and synchronizing time and
//! what moved; per part and job, the time of each phase of its driver (the host's calls, which
//! wait where the device work they queued must finish); in the asynchronous mode, per part and
//! cycle of its driver that did something, what it took in, ran and sent, and the time of each.
//! Off, it costs one flag test per phase.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Whether tracing is on (read once).
pub fn on() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("GRAIL_TRACE_STEPS").is_some_and(|v| v != "0" && !v.is_empty()))
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
        if self.last.is_some() {
            let phases: Vec<String> = self.ended.iter().map(|(name, d)| format!("{name} {}", micros(*d))).collect();
            eprintln!("trace   part {} {}: {}", self.part, self.job, phases.join(", "));
        }
    }
}

/// A superstep's line: the kernel, its computing and synchronizing time, and what moved.
pub(crate) fn step(step: u64, kernel: &str, compute: Duration, sync: Duration, moved: [u64; 3]) {
    let [merged, copied, forwarded] = moved;
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
pub(crate) fn invocation(kernel: &str, items: u64, up: Duration, launched: Duration, after: Duration, gpu_ms: f32) {
    eprintln!(
        "trace     gpu `{kernel}`: {items} items, columns up {}, launches {}, after {}, kernels {:.0} us",
        micros(up),
        micros(launched),
        micros(after),
        f64::from(gpu_ms) * 1e3
    );
}
