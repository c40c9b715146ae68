//! [`OptConfig`]: which optimizations a compilation applies, and with which parameters.
//!
//! A configuration is written as a short string of `key=value` pairs separated by commas, e.g.
//! `outline=all,np=tb+wp+fg,coop=warp,backoff=on`. The string may start with a preset (`none`
//! or `all`) that the pairs after it modify (`all,coop=none`); without one, the pairs modify
//! `none`. [`OptConfig`]'s `Display` prints every key in a fixed order, and parsing that text
//! gives the same configuration back, so the text is what reports, JSON output and the tuning
//! database store.

use std::fmt;
use std::str::FromStr;

use crate::ir::Aggregation;

/// Which `iterate`/`pipe` regions iteration outlining moves onto the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Outline {
    /// None: every kernel invocation is a launch from the host.
    #[default]
    None,
    /// The outermost region of each outline tree that can move (IrGL §4.1); where a root cannot,
    /// its children are tried.
    All,
}

/// How a collection's elements lie in memory ([`OptConfig::layout`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Layout {
    /// Each field an array of its own (per segment), then the lock, claim and removed words:
    /// a loop over the elements reading one field reads consecutive memory.
    #[default]
    Columns,
    /// Each element's fields, lock, claim and removed words side by side in one row: a kernel
    /// that hops from element to element (a cavity's triangles) reads one or two cache lines per
    /// element instead of one per field.
    Rows,
}

/// Which nested-parallelism schedulers (IrGL §4.3, Table 5) share a nested loop's iterations.
/// Inner loops too short for every selected scheduler run serially in their item's thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Schedulers {
    /// Thread block: loops of at least a block's threads (`block`).
    pub tb: bool,
    /// Warp: loops of at least 32 iterations (every loop the thread block leaves, when
    /// fine-grained is off).
    pub wp: bool,
    /// Fine-grained: the rest, spread over the block's threads by a prefix sum.
    pub fg: bool,
}

impl Schedulers {
    pub const SERIAL: Schedulers = Schedulers { tb: false, wp: false, fg: false };
    pub const ALL: Schedulers = Schedulers { tb: true, wp: true, fg: true };

    pub fn is_serial(self) -> bool {
        self == Schedulers::SERIAL
    }

    /// Every combination, serial first: what the tuner searches.
    pub fn combinations() -> impl Iterator<Item = Schedulers> {
        (0u8..8).map(|bits| Schedulers { tb: bits & 4 != 0, wp: bits & 2 != 0, fg: bits & 1 != 0 })
    }
}

/// Every optimization and its parameters. `OptConfig::default()` is the unoptimized program
/// (`none`); [`OptConfig::all`] turns every optimization on with its default parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OptConfig {
    /// Iteration outlining (IrGL §4.1): GPU only; on the CPU the analogue is one persistent
    /// parallel region.
    pub outline: Outline,
    /// Nested-parallelism schedulers for nested `forall` loops (IrGL §4.3).
    pub np: Schedulers,
    /// Cooperative conversion (IrGL §4.2): the level at which pushes are aggregated.
    pub coop: Aggregation,
    /// Retry backoff (IrGL §4.4): retried items are handed out in blocks, so neighbours in the
    /// retry list (which tend to conflict) run on the same thread.
    pub backoff: bool,
    /// Loads of columns no kernel writes go through the read-only data cache (`__ldg`).
    pub ldg: bool,
    /// Threads per block on the GPU (a multiple of 32, 32..=1024).
    pub block: u32,
    /// Blocks per multiprocessor of an outlined region's control kernel: 0 for as many as fit
    /// (every thread the device can hold), fewer for regions whose steps are small (each step
    /// costs every thread a little bookkeeping, and a barrier waits for every block).
    pub grid: u32,
    /// Pipe unrolling (IrGL §4.4): an outlined `pipe` loop's body appears this many times per
    /// trip of the control kernel's loop (1: not unrolled).
    pub unroll: u32,
    /// GPU: a morph kernel (one that retries, or locks collection elements) takes its first
    /// pass's items scattered over the worklist, so that a warp's items are far apart in the
    /// mesh and rarely fight over the same elements.
    pub scatter: bool,
    /// GPU: inside a lock section, element fields are read with plain (cacheable) loads: the
    /// lock's acquire makes the owner's view current. Off: every element read goes around L1.
    pub lockcache: bool,
    /// Local worklists (the morph paper's §7.5): a kernel that is the whole of its `iterate`
    /// runs some of the items it pushes in the pushing thread, right away
    /// ([`crate::opt::local`]).
    pub local: bool,
    /// How collections' elements are laid out (both targets).
    pub layout: Layout,
    /// GPU: the lanes of a warp take their items together and meet again (`__syncwarp`) before
    /// each next one. Without it a lane that finishes an item early starts its next while the
    /// others are still in theirs, and the lanes drift apart for good: on `dmr` a warp ran with
    /// two of its 32 lanes active on average.
    pub converge: bool,
    /// GPU, with `converge`: in a phase that claims a neighbourhood (`exclusive`: a morph
    /// operator's long items, find, claim, check, change), the lanes also meet after each stage
    /// of the item (each top-level statement of its body that loops, locks or ends the item, and
    /// each run of the others between them), every lane passing every stage and running it only
    /// while its item is live. Without it, lanes that part at a branch of a long item body run
    /// the rest of it in groups, one group after another: on `dmr` 3.6 of 32 lanes were active on
    /// average, and the stages made its refinement 15% faster.
    pub stages: bool,
    /// GPU: an `exclusive` that is a statement of its kernel's item itself (not inside a loop or
    /// an `if`), in a kernel an outlined region invokes, resolves its conflicts by the morph
    /// paper's 3-phase marking (§7.3; [`crate::opt::marks`]) instead of locks: the grid's items
    /// go in rounds, each thread marks its elements (race), raises its marks where a lower
    /// thread's stand (priority check), and owns its elements when every mark is still its own
    /// (check), with grid barriers between. Elsewhere, and on the CPU, `exclusive` takes locks.
    /// Off in `all`: slower than locks on dmr (docs/benchmarks.md).
    pub marks: bool,
    /// GPU: adaptive parallelism (the morph paper's §7.4). A morph kernel (one that retries or
    /// locks collection elements) that an outlined region invokes runs its first three
    /// invocations of each launch with an eighth, a quarter and half of the grid's threads
    /// taking items, then all of them: early on, when nearly every item is work and the
    /// neighbourhoods crowd each other, fewer threads at once conflict less. Phases run by the
    /// nested-parallelism schedulers or decided by marks keep every thread. Off in `all`: on
    /// dmr's 10 M triangles the first invocations, with most of the items, take twice as long
    /// (docs/benchmarks.md).
    pub adapt: bool,
    /// GPU: an outlined `iterate` with an empty body whose kernel only lowers (or only raises)
    /// properties by atomics runs as one queue, without rounds: a block takes the next items as
    /// soon as they are pushed ([`crate::opt::queue`]). The least fixed point it computes is the
    /// rounds' where each value offered grows with the values read (BFS, SSSP, label
    /// propagation). Off in `all`: `grail run --mode async` asks for it on one GPU. On the GPU
    /// parts of a partitioned run in the asynchronous mode it runs in turns, the part
    /// exchanging with the others between them; asked for only by `--opt ...,queue=on` there,
    /// since so far it is slower than the rounds (docs/benchmarks.md).
    pub queue: bool,
}

impl Default for OptConfig {
    fn default() -> Self {
        OptConfig::NONE
    }
}

/// Why a configuration string was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid optimization configuration `{text}`: {message}")]
pub struct ConfigError {
    pub text: String,
    pub message: String,
}

impl OptConfig {
    /// The unoptimized program: one thread per item, one atomic per push, a launch per
    /// invocation, 256 threads per block.
    pub const NONE: OptConfig = OptConfig {
        outline: Outline::None,
        np: Schedulers::SERIAL,
        coop: Aggregation::None,
        backoff: false,
        ldg: false,
        block: 256,
        grid: 0,
        unroll: 1,
        scatter: false,
        lockcache: false,
        local: false,
        layout: Layout::Columns,
        converge: false,
        stages: false,
        marks: false,
        adapt: false,
        queue: false,
    };

    /// Every optimization on, with its default parameters.
    pub const fn all() -> OptConfig {
        OptConfig {
            outline: Outline::All,
            np: Schedulers::ALL,
            coop: Aggregation::Warp,
            backoff: true,
            ldg: true,
            block: 256,
            grid: 0,
            unroll: 2,
            scatter: true,
            lockcache: true,
            // Off: on `dmr` it makes about 8% more triangles (new bad triangles refined before
            // the neighbouring cavities that would have removed them), for no gain on the CPU.
            local: false,
            layout: Layout::Rows,
            converge: true,
            stages: true,
            marks: false,
            adapt: false,
            queue: false,
        }
    }

    /// Whether nothing is switched on.
    pub fn is_none(&self) -> bool {
        *self == OptConfig::NONE
    }

    /// Parses a configuration (see the module documentation).
    pub fn parse(text: &str) -> Result<OptConfig, ConfigError> {
        let fail = |message: String| ConfigError { text: text.to_string(), message };
        let mut config = OptConfig::NONE;
        let pieces: Vec<&str> = text.split(',').map(str::trim).collect();
        if pieces.iter().all(|p| p.is_empty()) {
            return Err(fail("it is empty (say `none` for the unoptimized program)".into()));
        }
        for (i, piece) in pieces.iter().enumerate() {
            if piece.is_empty() {
                return Err(fail("an empty item between commas".into()));
            }
            match *piece {
                "none" | "all" if i > 0 => {
                    return Err(fail(format!("the preset `{piece}` can only come first")));
                }
                "none" => config = OptConfig::NONE,
                "all" => config = OptConfig::all(),
                _ => {
                    let Some((key, value)) = piece.split_once('=') else {
                        return Err(fail(format!(
                            "`{piece}` is neither a preset (none, all) nor key=value (keys: {})",
                            KEYS.join(", ")
                        )));
                    };
                    config.set(key.trim(), value.trim()).map_err(fail)?;
                }
            }
        }
        Ok(config)
    }

    /// Sets one key.
    fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let on_off = |value: &str| match value {
            "on" | "true" | "yes" => Ok(true),
            "off" | "false" | "no" => Ok(false),
            _ => Err(format!("{key}={value}: expected on or off")),
        };
        match key {
            "outline" => {
                self.outline = match value {
                    "none" | "off" => Outline::None,
                    "all" | "on" => Outline::All,
                    _ => return Err(format!("outline={value}: expected none or all")),
                }
            }
            "np" => {
                let mut np = Schedulers::SERIAL;
                if value != "serial" && value != "none" && value != "off" {
                    for part in value.split('+') {
                        match part.trim() {
                            "tb" => np.tb = true,
                            "wp" => np.wp = true,
                            "fg" => np.fg = true,
                            other => {
                                return Err(format!(
                                    "np={value}: `{other}` is not a scheduler (tb, wp, fg, joined by +; or serial)"
                                ));
                            }
                        }
                    }
                }
                self.np = np;
            }
            "coop" => {
                self.coop = match value {
                    "none" | "off" | "thread" => Aggregation::None,
                    "warp" => Aggregation::Warp,
                    "block" | "tb" => Aggregation::Block,
                    _ => return Err(format!("coop={value}: expected none, warp or block")),
                }
            }
            "backoff" => self.backoff = on_off(value)?,
            "ldg" => self.ldg = on_off(value)?,
            "scatter" => self.scatter = on_off(value)?,
            "lockcache" => self.lockcache = on_off(value)?,
            "local" => self.local = on_off(value)?,
            "converge" => self.converge = on_off(value)?,
            "stages" => self.stages = on_off(value)?,
            "marks" => self.marks = on_off(value)?,
            "adapt" => self.adapt = on_off(value)?,
            "queue" => self.queue = on_off(value)?,
            "layout" => {
                self.layout = match value {
                    "columns" | "soa" => Layout::Columns,
                    "rows" | "aos" => Layout::Rows,
                    _ => return Err(format!("layout={value}: expected columns or rows")),
                }
            }
            "block" => {
                let block: u32 = value.parse().map_err(|_| format!("block={value}: expected a number of threads"))?;
                if !(32..=1024).contains(&block) || block % 32 != 0 {
                    return Err(format!("block={value}: a block holds a multiple of 32 threads, 32 to 1024"));
                }
                self.block = block;
            }
            "grid" => {
                let grid: u32 = value
                    .parse()
                    .map_err(|_| format!("grid={value}: expected blocks per multiprocessor (0: all that fit)"))?;
                if grid > 32 {
                    return Err(format!("grid={value}: a multiprocessor holds at most 32 blocks"));
                }
                self.grid = grid;
            }
            "unroll" => {
                let unroll: u32 =
                    value.parse().map_err(|_| format!("unroll={value}: expected copies of a pipe's body (1: none)"))?;
                if !(1..=8).contains(&unroll) {
                    return Err(format!("unroll={value}: a pipe's body may be copied 1 to 8 times"));
                }
                self.unroll = unroll;
            }
            _ => return Err(format!("unknown key `{key}` (keys: {})", KEYS.join(", "))),
        }
        Ok(())
    }
}

/// The keys, in the order `Display` prints them.
const KEYS: &[&str] = &[
    "outline",
    "np",
    "coop",
    "backoff",
    "ldg",
    "block",
    "grid",
    "unroll",
    "scatter",
    "lockcache",
    "local",
    "layout",
    "converge",
    "stages",
    "marks",
    "adapt",
    "queue",
];

impl FromStr for OptConfig {
    type Err = ConfigError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        OptConfig::parse(text)
    }
}

impl fmt::Display for Schedulers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_serial() {
            return f.write_str("serial");
        }
        let names: Vec<&str> = [(self.tb, "tb"), (self.wp, "wp"), (self.fg, "fg")]
            .iter()
            .filter_map(|&(on, name)| on.then_some(name))
            .collect();
        f.write_str(&names.join("+"))
    }
}

impl fmt::Display for OptConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let on_off = |b: bool| if b { "on" } else { "off" };
        let outline = match self.outline {
            Outline::None => "none",
            Outline::All => "all",
        };
        let layout = match self.layout {
            Layout::Columns => "columns",
            Layout::Rows => "rows",
        };
        let coop = match self.coop {
            Aggregation::None => "none",
            Aggregation::Warp => "warp",
            Aggregation::Block => "block",
        };
        write!(
            f,
            "outline={outline},np={},coop={coop},backoff={},ldg={},block={},grid={},unroll={},scatter={},lockcache={},local={},layout={layout},converge={},stages={},marks={},adapt={},queue={}",
            self.np,
            on_off(self.backoff),
            on_off(self.ldg),
            self.block,
            self.grid,
            self.unroll,
            on_off(self.scatter),
            on_off(self.lockcache),
            on_off(self.local),
            on_off(self.converge),
            on_off(self.stages),
            on_off(self.marks),
            on_off(self.adapt),
            on_off(self.queue)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_and_round_trips() {
        assert_eq!(OptConfig::parse("none").unwrap(), OptConfig::NONE);
        assert_eq!(OptConfig::parse("all").unwrap(), OptConfig::all());
        let text = OptConfig::all().to_string();
        assert_eq!(
            text,
            "outline=all,np=tb+wp+fg,coop=warp,backoff=on,ldg=on,block=256,grid=0,unroll=2,scatter=on,lockcache=on,local=off,layout=rows,converge=on,stages=on,marks=off,adapt=off,queue=off"
        );
        assert_eq!(OptConfig::parse(&text).unwrap(), OptConfig::all());
        for np in Schedulers::combinations() {
            let config = OptConfig { np, ..OptConfig::NONE };
            assert_eq!(OptConfig::parse(&config.to_string()).unwrap(), config);
        }
    }

    #[test]
    fn pairs_modify_the_preset() {
        let config = OptConfig::parse("all, coop=none ,np=wp").unwrap();
        assert_eq!(config.coop, Aggregation::None);
        assert_eq!(config.np, Schedulers { wp: true, ..Schedulers::SERIAL });
        assert_eq!(config.outline, Outline::All);
        let config = OptConfig::parse("np=tb+fg,block=128").unwrap();
        assert_eq!(config.outline, Outline::None);
        assert_eq!(config.block, 128);
    }

    #[test]
    fn errors_name_the_problem() {
        for (text, needle) in [
            ("", "empty"),
            ("np=tb+xx", "`xx` is not a scheduler"),
            ("block=100", "multiple of 32"),
            ("grid=40", "at most 32 blocks"),
            ("grid=many", "blocks per multiprocessor"),
            ("unroll=0", "1 to 8 times"),
            ("unroll=x", "copies of a pipe's body"),
            ("coop=grid", "expected none, warp or block"),
            ("speed=max", "unknown key `speed`"),
            ("np=tb,all", "can only come first"),
            ("fast", "neither a preset"),
            ("np=tb,,coop=warp", "empty item"),
        ] {
            let error = OptConfig::parse(text).unwrap_err().to_string();
            assert!(error.contains(needle), "{text}: {error}");
        }
    }
}
