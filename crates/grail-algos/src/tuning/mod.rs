//! Which optimization configuration a run uses, and the tuner that finds the best one.
//!
//! `--opt` says `none`, `all`, `KEY=VALUE,...` ([`OptChoice::Given`]) or `tuned`, the default
//! ([`OptChoice::Tuned`]), which [`resolve`]s to the configuration `grail tune` recorded for the
//! program, target and input class in the tuning database ([`db`]), else to the target's
//! documented default ([`default_config`]). The pieces:
//!
//! - [`class`]: the input class, from a few cheap graph features (size, degree skew, an
//!   estimated diameter), e.g. `size=M,skew=high,diameter=low`;
//! - [`db`]: the tuning database, a JSON file in the cache folder, keyed by program hash
//!   ([`ProgramId`]), target ([`TargetKey`]: `cpu`, or `gpu:` and the GPU's model) and class;
//! - [`space`]: which keys can matter for a program on a target, and which configurations are
//!   the same program;
//! - [`search`]: the order candidates are measured in, pruning, the budget, the winner.
//!
//! A lookup costs nothing when the database holds no entry for the program and target (the
//! graph is not even classified); otherwise classifying the graph costs a pass over its
//! offsets and breadth-first sweeps bounded to a quarter of a million edges (about 10 ms on a
//! scale-20 Kronecker graph).

pub mod class;
pub mod db;
pub mod search;
pub mod space;

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use grail_graph::Graph;
use grail_ir::opt::ConfigError;
use grail_ir::opt::Schedulers;
use grail_ir::{Module, OptConfig};

use crate::algorithm::Target;
use crate::error::Result;
use crate::variant::Variant;
use class::{Classified, InputClass};
use db::Database;

/// What `--opt` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OptChoice {
    /// The tuned configuration for this program, target and input class, else the default.
    #[default]
    Tuned,
    /// Exactly this configuration.
    Given(OptConfig),
}

impl FromStr for OptChoice {
    type Err = ConfigError;

    fn from_str(text: &str) -> std::result::Result<Self, Self::Err> {
        match text.trim() {
            "tuned" => Ok(OptChoice::Tuned),
            other => OptConfig::parse(other).map(OptChoice::Given),
        }
    }
}

impl fmt::Display for OptChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptChoice::Tuned => f.write_str("tuned"),
            OptChoice::Given(config) => config.fmt(f),
        }
    }
}

/// The configuration a target uses when nothing was tuned for the input: on the GPU every
/// optimization (the passes leave alone what they cannot apply, and say why); on the CPU the
/// same passes, whose GPU-only decisions the C target ignores.
pub fn default_config(target: Target) -> OptConfig {
    match target {
        Target::Gpu | Target::Cpu | Target::Reference => OptConfig::all(),
    }
}

/// Blocks per multiprocessor of the GPU's default for a program with worklist loops on a
/// high-diameter input (a road network, a grid, a mesh): one. Such a loop makes thousands of
/// invocations of a few thousand items each (a BFS level, an SSSP window), where each grid
/// barrier and each block's start of a phase cost more than the threads past one block a
/// multiprocessor gain: on an H100, BFS on a road network of 2^24 nodes took 81.6 ms of
/// kernels with one block per multiprocessor against 219.3 ms with all that fit (direction-
/// optimizing BFS 100.8 against 126.6, near-far SSSP 163.7 against 195.9).
pub const HIGH_DIAMETER_GRID: u32 = 1;

/// Below this many edges on every node, the GPU parts of a run partitioned in the asynchronous
/// mode take no nested-parallelism schedulers by default (on a high-diameter graph:
/// [`resolve_for_devices`]). No node has a warp's worth of edges to share, and each invocation
/// of a part's worklist loop, a fraction of one GPU's, still pays the schedulers' block-wide
/// steps. On four H200s, road24 (`grail bench multi --modes async`, algo ms, the schedulers on /
/// off): SSSP (`wl`) over two GPUs 137.9 / 89.0, over four 116.7 / 87.1; BFS (`async`) 85.9 /
/// 82.7 and 87.0 / 86.8. Supersteps keep them (label propagation over two GPUs took 3,471 ms
/// with them, 4,225 without), and so does one GPU (BFS `do` and SSSP `nf` 14% and 8% slower
/// without).
pub const PARTITIONED_SERIAL_BELOW_DEGREE: u64 = 32;

/// The default for `program` on `target` with `graph` as input: [`default_config`], with
/// [`HIGH_DIAMETER_GRID`] on a GPU for a program with worklist loops on a high-diameter input
/// (the diameter estimated by [`class::diameter_level`]'s bounded sweeps), and for the parts
/// of a run partitioned in the asynchronous mode (`async_parts`) on such an input whose degrees
/// are all below [`PARTITIONED_SERIAL_BELOW_DEGREE`], no nested-parallelism schedulers; and
/// why.
fn fallback(
    target: Target,
    program: &ProgramId,
    graph: Option<&Graph>,
    async_parts: bool,
    why: String,
) -> (OptConfig, String) {
    let mut config = default_config(target);
    let Some(graph) = graph else { return (config, why) };
    if target == Target::Gpu && program.worklist_loops && class::diameter_level(graph) == class::Level::High {
        config.grid = HIGH_DIAMETER_GRID;
        let mut why = format!("{why}; one block per multiprocessor for worklist loops on a high-diameter input");
        if async_parts && graph.out().max_degree().1 < PARTITIONED_SERIAL_BELOW_DEGREE {
            config.np = Schedulers::SERIAL;
            why.push_str(&format!(
                ", and in its asynchronous parts no nested-parallelism schedulers (no node has {PARTITIONED_SERIAL_BELOW_DEGREE} edges)"
            ));
        }
        return (config, why);
    }
    (config, why)
}

/// What the tuning database knows a program by: a hash of its unoptimized IR as printed (so
/// comments and layout do not change it, and a change to what the program does, or to how
/// grail lowers it, does), and a name for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramId {
    pub name: String,
    pub hash: String,
    /// Whether `main` has a loop that runs until its worklist is empty (`iterate ... until
    /// empty`, or a `pipe`): such loops make one small invocation after another on a
    /// high-diameter graph, which is what the GPU's default for those graphs is chosen for
    /// ([`resolve`]).
    pub worklist_loops: bool,
}

impl ProgramId {
    /// The identity of `module`, the program as lowered (before any pass).
    pub fn of(name: &str, module: &Module) -> ProgramId {
        let mut plain = module.clone();
        plain.opt = OptConfig::NONE;
        plain.opt_notes.clear();
        let text = grail_ir::print(&plain);
        let mut worklist_loops = false;
        grail_ir::walk_block(&module.main.block, &mut |stmt| {
            worklist_loops |= matches!(stmt, grail_ir::Stmt::Pipe(p) if !p.once)
                || matches!(stmt, grail_ir::Stmt::Iterate(i) if matches!(i.until, grail_ir::Until::Empty { .. }));
        });
        ProgramId {
            name: name.to_string(),
            hash: format!("{:016x}", xxhash_rust::xxh3::xxh3_64(text.as_bytes())),
            worklist_loops,
        }
    }

    /// The identity of a suite variant's program.
    pub fn of_variant(variant: &Variant) -> Result<ProgramId> {
        let source = crate::program_source(variant.program).expect("every variant names a suite program");
        Ok(ProgramId::of(variant.program, &crate::suite::compile_source(variant.program, source)?))
    }
}

/// The target as the tuning database keys it: `cpu`, or `gpu:` and the GPU's model name (the
/// best configuration differs between GPU models more than between two GPUs of one model).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetKey {
    pub target: Target,
    pub key: String,
}

impl TargetKey {
    pub fn cpu() -> TargetKey {
        TargetKey { target: Target::Cpu, key: "cpu".into() }
    }

    /// A GPU of the named model.
    pub fn gpu(model: &str) -> TargetKey {
        TargetKey { target: Target::Gpu, key: format!("gpu:{model}") }
    }

    /// The key of a partitioned run over `devices`: its first GPU's where it has one, else the
    /// CPU's. The configuration's GPU-only choices (the control kernel's grid, say) are for the
    /// GPU parts, and the C target ignores them: with the CPU's key the GPU parts of a run on a
    /// road network got a full grid where one block per multiprocessor is what their worklist
    /// loops want ([`HIGH_DIAMETER_GRID`]).
    pub fn for_devices(devices: &[grail_runtime::multi::Device]) -> Result<TargetKey> {
        let first_gpu = devices.iter().find_map(|device| match device {
            grail_runtime::multi::Device::Gpu(ordinal) => Some(*ordinal as usize),
            _ => None,
        });
        Ok(match first_gpu {
            Some(ordinal) => {
                TargetKey::gpu(&grail_runtime::gpu::device_name(ordinal).map_err(grail_runtime::RuntimeError::from)?)
            }
            None => TargetKey::cpu(),
        })
    }
}

impl fmt::Display for TargetKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.key)
    }
}

/// Where a run's configuration came from.
#[derive(Debug, Clone, PartialEq)]
pub enum OptSource {
    /// `--opt` named it.
    Given,
    /// The tuning database's entry for the input's class, measured on `date`.
    Tuned { class: InputClass, date: String },
    /// The target's default, and why no tuned configuration applied.
    Default { why: String },
}

impl OptSource {
    /// The short form JSON output reports as `opt_source`: `given`, `default`, or `tuned for
    /// class size=M,skew=high,diameter=low`.
    pub fn short(&self) -> String {
        match self {
            OptSource::Given => "given".into(),
            OptSource::Tuned { class, .. } => format!("tuned for class {class}"),
            OptSource::Default { .. } => "default".into(),
        }
    }
}

impl fmt::Display for OptSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptSource::Given => f.write_str("given by --opt"),
            OptSource::Tuned { class, date } => write!(f, "tuned for class {class} on {date}"),
            OptSource::Default { why } => write!(f, "default: {why}"),
        }
    }
}

/// A resolved `--opt`.
#[derive(Debug, Clone)]
pub struct Resolution {
    pub config: OptConfig,
    pub source: OptSource,
    /// The input's class, when it was computed (only when the database has entries for the
    /// program and target).
    pub class: Option<Classified>,
    /// Problems with the database that did not stop the run, for the user to see.
    pub warnings: Vec<String>,
}

/// The configuration a run with `choice` uses for `program` on `target`, with `graph` as its
/// input (`None` when the input is not known yet: the default then).
pub fn resolve(choice: OptChoice, target: &TargetKey, program: &ProgramId, graph: Option<&Graph>) -> Resolution {
    resolve_in(&db::default_path(), choice, target, program, graph)
}

/// The configuration of a run partitioned over `devices` in `mode`: [`resolve`] for the
/// devices' [`TargetKey::for_devices`], whose default in the asynchronous mode turns the
/// nested-parallelism schedulers off on a high-diameter graph of low degrees
/// ([`PARTITIONED_SERIAL_BELOW_DEGREE`]).
pub fn resolve_for_devices(
    choice: OptChoice,
    devices: &[grail_runtime::multi::Device],
    mode: grail_runtime::multi::Mode,
    program: &ProgramId,
    graph: Option<&Graph>,
) -> Result<Resolution> {
    let target = TargetKey::for_devices(devices)?;
    let async_parts = mode == grail_runtime::multi::Mode::Async;
    Ok(resolve_with(&db::default_path(), choice, &target, program, graph, async_parts))
}

/// [`resolve`] with the database at `path`.
pub fn resolve_in(
    path: &Path,
    choice: OptChoice,
    target: &TargetKey,
    program: &ProgramId,
    graph: Option<&Graph>,
) -> Resolution {
    resolve_with(path, choice, target, program, graph, false)
}

/// [`resolve_in`] for one device or a run in supersteps, or for the parts of a run partitioned
/// in the asynchronous mode (`async_parts`).
fn resolve_with(
    path: &Path,
    choice: OptChoice,
    target: &TargetKey,
    program: &ProgramId,
    graph: Option<&Graph>,
    async_parts: bool,
) -> Resolution {
    let default = |why: String, class: Option<Classified>, warnings: Vec<String>| {
        let (config, why) = fallback(target.target, program, graph, async_parts, why);
        Resolution { config, source: OptSource::Default { why }, class, warnings }
    };
    if let OptChoice::Given(config) = choice {
        return Resolution { config, source: OptSource::Given, class: None, warnings: Vec::new() };
    }
    let database = match Database::load(path) {
        Ok(database) => database,
        Err(e) => return default("the tuning database cannot be read".into(), None, vec![e.to_string()]),
    };
    let entries: Vec<&db::Entry> = database.for_program(&program.hash, &target.key).collect();
    if entries.is_empty() {
        return default(format!("nothing tuned for {} on {target}", program.name), None, Vec::new());
    }
    let Some(graph) = graph else {
        return default("no input to classify".into(), None, Vec::new());
    };
    let classified = class::classify(graph);
    let key = classified.class.to_string();
    let Some(entry) = entries.iter().find(|e| e.class == key) else {
        let mut others: Vec<&str> = entries.iter().map(|e| e.class.as_str()).collect();
        others.sort_unstable();
        let why = format!("{} on {target} is tuned for class {}, not {key}", program.name, others.join("; "));
        return default(why, Some(classified), Vec::new());
    };
    match OptConfig::parse(&entry.opt) {
        Ok(config) => Resolution {
            config,
            source: OptSource::Tuned { class: classified.class, date: entry.date.clone() },
            class: Some(classified),
            warnings: Vec::new(),
        },
        Err(e) => default(
            "the tuned entry cannot be used".into(),
            Some(classified),
            vec![format!("ignoring the tuning database {}'s entry for {} ({key}): {e}", path.display(), program.name)],
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use grail_graph::NoProgress;
    use grail_graph::generate::{GenOptions, Generator, generate};

    fn program() -> ProgramId {
        ProgramId::of_variant(Variant::find(crate::Algorithm::Bfs, Some("wl")).unwrap()).unwrap()
    }

    #[test]
    fn program_ids_follow_the_program_not_its_comments() {
        let source = crate::program_source("bfs").unwrap();
        let a = ProgramId::of("bfs", &crate::suite::compile_source("bfs", source).unwrap());
        let commented = format!("// another comment\n{source}\n// and one more\n");
        let b = ProgramId::of("bfs", &crate::suite::compile_source("bfs", &commented).unwrap());
        assert_eq!(a.hash, b.hash);
        assert_eq!(a.hash.len(), 16);
        let changed = source.replace("next += 1;", "next += 2;");
        let c = ProgramId::of("bfs", &crate::suite::compile_source("bfs", &changed).unwrap());
        assert_ne!(a.hash, c.hash);
        assert_eq!(a, program());
    }

    #[test]
    fn partitioned_runs_without_a_gpu_take_the_cpu_key() {
        use grail_runtime::multi::Device;
        // No GPU is opened, nor the driver loaded, for a run on CPU devices alone.
        assert_eq!(TargetKey::for_devices(&[Device::Cpu, Device::Cpu]).unwrap(), TargetKey::cpu());
        assert_eq!(TargetKey::for_devices(&[]).unwrap(), TargetKey::cpu());
    }

    #[test]
    fn worklist_loops_on_high_diameter_inputs_get_one_block_per_multiprocessor_by_default() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tuning.json");
        let long =
            generate(&Generator::Grid { rows: 400, cols: 4 }, &GenOptions::default(), true, &NoProgress).unwrap();
        let kron =
            generate(&Generator::Uniform { nodes: 4096, average_degree: 8 }, &GenOptions::default(), true, &NoProgress)
                .unwrap();
        assert_eq!(class::diameter_level(&long), class::Level::High);
        assert_ne!(class::diameter_level(&kron), class::Level::High);
        let gpu = TargetKey::gpu("H100");
        let bfs = program();
        assert!(bfs.worklist_loops);
        let r = resolve_in(&path, OptChoice::Tuned, &gpu, &bfs, Some(&long));
        assert_eq!(r.config.grid, HIGH_DIAMETER_GRID);
        assert!(r.source.to_string().contains("one block per multiprocessor"), "{}", r.source);
        assert_eq!(r.config.np, default_config(Target::Gpu).np);
        // The parts of a run on it partitioned in the asynchronous mode (degrees below a warp's
        // lanes): no schedulers.
        let parts = resolve_with(&path, OptChoice::Tuned, &gpu, &bfs, Some(&long), true);
        assert_eq!((parts.config.grid, parts.config.np), (HIGH_DIAMETER_GRID, Schedulers::SERIAL));
        assert!(parts.source.to_string().contains("no nested-parallelism schedulers"), "{}", parts.source);
        assert_eq!(
            resolve_with(&path, OptChoice::Tuned, &gpu, &bfs, Some(&kron), true).config,
            default_config(Target::Gpu)
        );
        assert_eq!(resolve_with(&path, OptChoice::Tuned, &TargetKey::cpu(), &bfs, Some(&long), true).config.grid, 0);
        // Not on a low-diameter graph, not on the CPU, not for a loop that is not a worklist's,
        // and never over what --opt gives.
        assert_eq!(resolve_in(&path, OptChoice::Tuned, &gpu, &bfs, Some(&kron)).config, default_config(Target::Gpu));
        assert_eq!(resolve_in(&path, OptChoice::Tuned, &TargetKey::cpu(), &bfs, Some(&long)).config.grid, 0);
        let pr = ProgramId::of_variant(Variant::find(crate::Algorithm::Pr, Some("pull")).unwrap()).unwrap();
        assert!(!pr.worklist_loops);
        assert_eq!(resolve_in(&path, OptChoice::Tuned, &gpu, &pr, Some(&long)).config.grid, 0);
        let given = resolve_in(&path, OptChoice::Given(OptConfig::all()), &gpu, &bfs, Some(&long));
        assert_eq!(given.config.grid, 0);
    }

    #[test]
    fn tuned_resolves_through_the_database() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tuning.json");
        let graph = generate(&Generator::Grid { rows: 8, cols: 8 }, &GenOptions::default(), true, &NoProgress).unwrap();
        let cpu = TargetKey::cpu();
        let id = program();
        // Nothing recorded: the default, without classifying.
        let r = resolve_in(&path, OptChoice::Tuned, &cpu, &id, Some(&graph));
        assert_eq!(r.config, default_config(Target::Cpu));
        assert_eq!(r.source.short(), "default");
        assert!(r.class.is_none());
        assert!(r.source.to_string().contains("nothing tuned for bfs on cpu"), "{}", r.source);
        // Given wins over everything.
        let given = resolve_in(&path, OptChoice::Given(OptConfig::NONE), &cpu, &id, Some(&graph));
        assert_eq!((given.config, given.source), (OptConfig::NONE, OptSource::Given));

        let class = class::classify(&graph);
        let entry = db::Entry {
            program: id.name.clone(),
            program_hash: id.hash.clone(),
            target: cpu.key.clone(),
            class: class.class.to_string(),
            opt: "np=tb+wp".into(),
            time_ms: 1.0,
            none_ms: None,
            date: "2026-01-02T03:04:05Z".into(),
            graph: "grid".into(),
            features: class.features.clone(),
            threads: None,
            candidates: Vec::new(),
        };
        Database::record(&path, entry.clone()).unwrap();
        let r = resolve_in(&path, OptChoice::Tuned, &cpu, &id, Some(&graph));
        assert_eq!(r.config, OptConfig::parse("np=tb+wp").unwrap());
        assert_eq!(r.source.short(), format!("tuned for class {}", class.class));
        // Another target, or another class: the default, saying why.
        let gpu = resolve_in(&path, OptChoice::Tuned, &TargetKey::gpu("H100"), &id, Some(&graph));
        assert_eq!(gpu.source.short(), "default");
        let big = generate(&Generator::graph500(12), &GenOptions::default(), true, &NoProgress).unwrap();
        let other = resolve_in(&path, OptChoice::Tuned, &cpu, &id, Some(&big));
        assert!(other.source.to_string().contains("is tuned for class size=XS"), "{}", other.source);
        assert!(other.class.is_some());
        // An entry whose configuration does not parse is ignored with a warning.
        Database::record(&path, db::Entry { opt: "np=fast".into(), ..entry }).unwrap();
        let r = resolve_in(&path, OptChoice::Tuned, &cpu, &id, Some(&graph));
        assert_eq!(r.source.short(), "default");
        assert!(r.warnings[0].contains("np=fast"), "{:?}", r.warnings);
    }

    #[test]
    fn a_corrupt_database_is_a_warning_not_a_failure() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tuning.json");
        std::fs::write(&path, "{\"version\": 1, \"entries\": [{]}").unwrap();
        let r = resolve_in(&path, OptChoice::Tuned, &TargetKey::cpu(), &program(), None);
        assert_eq!(r.config, default_config(Target::Cpu));
        assert_eq!(r.warnings.len(), 1);
        assert!(r.warnings[0].contains("tuning.json") && r.warnings[0].contains("line 1"), "{:?}", r.warnings);
    }
}
