//! The configuration space of one program on one target: which [`OptConfig`] keys can matter,
//! with which values, and which configurations are in fact the same program.
//!
//! A key is searched only when it can change what runs:
//!
//! 1. **The target implements it** ([`target_keys`]): the read-only data cache (`ldg`) and
//!    thread blocks (`block`) are GPU hardware, so the CPU target has no such keys.
//! 2. **The program gives it something to do**, as the passes see it: `outline` when the pass
//!    outlines some `iterate` or `pipe` (otherwise the pass's note says why none can move); `np`
//!    when the pass schedules some nested loop; `coop` when a kernel pushes (and `block` only
//!    when the pass block-aggregates some push: one in a nested loop that the thread-block or
//!    fine-grained scheduler runs); `backoff`
//!    when a kernel retries; `ldg` when some property is only read by kernels; `layout` when
//!    the program has collections; `scatter`, `lockcache` and `adapt` when a kernel is a morph
//!    kernel (it retries or locks collection elements; `adapt` only in an outlined region);
//!    `local` when a kernel can keep its pushes; `marks` when marks can decide an `exclusive`;
//!    `converge` for every GPU program (every phase has an item loop); `stages` when a phase
//!    claims with `exclusive` (its items run in stages with `converge` on).
//! 3. **It changes the program**: two configurations are the same program on a target when the
//!    target's generated source (C or CUDA) is the same and so are the values of the keys the
//!    target's executor applies itself, without the generated code ([`EXECUTOR_KEYS`]:
//!    outlining, which changes how the executor drives `main`; retry backoff, which changes how
//!    it hands out retried items; the block size it launches with). Only one configuration of
//!    each such group is measured. This is how configurations the backend does not (yet) tell
//!    apart cost nothing: on the CPU, the schedulers' variants that all compile to the same C are
//!    one candidate.
//!
//! A backend that starts applying a key in its executor rather than in the generated code must
//! add it to [`EXECUTOR_KEYS`], or the tuner will take its configurations for one program.

use std::fmt;

use grail_ir::opt::{Layout, Outline, Schedulers, backoff, ldg, local, marks, nested};
use grail_ir::{Aggregation, KernelId, Module, OptConfig, Stmt, optimize};

use crate::algorithm::Target;
use crate::error::{AlgoError, Result};

/// A key of [`OptConfig`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    Outline,
    Np,
    Coop,
    Backoff,
    Ldg,
    Block,
    Grid,
    Unroll,
    Scatter,
    Lockcache,
    Local,
    Layout,
    Converge,
    Stages,
    Marks,
    Adapt,
}

impl Key {
    pub const ALL: [Key; 16] = [
        Key::Outline,
        Key::Np,
        Key::Coop,
        Key::Backoff,
        Key::Ldg,
        Key::Block,
        Key::Grid,
        Key::Unroll,
        Key::Scatter,
        Key::Lockcache,
        Key::Local,
        Key::Layout,
        Key::Converge,
        Key::Stages,
        Key::Marks,
        Key::Adapt,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Key::Outline => "outline",
            Key::Np => "np",
            Key::Coop => "coop",
            Key::Backoff => "backoff",
            Key::Ldg => "ldg",
            Key::Block => "block",
            Key::Grid => "grid",
            Key::Unroll => "unroll",
            Key::Scatter => "scatter",
            Key::Lockcache => "lockcache",
            Key::Local => "local",
            Key::Layout => "layout",
            Key::Converge => "converge",
            Key::Stages => "stages",
            Key::Marks => "marks",
            Key::Adapt => "adapt",
        }
    }

    /// The value `all` gives this key.
    pub fn all_value(self) -> Setting {
        Setting::of(self, &OptConfig::all())
    }

    /// The value `none` gives this key.
    pub fn none_value(self) -> Setting {
        Setting::of(self, &OptConfig::NONE)
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The keys a target implements at all.
pub fn target_keys(target: Target) -> &'static [Key] {
    match target {
        Target::Gpu => &Key::ALL,
        Target::Cpu | Target::Reference => &[Key::Outline, Key::Np, Key::Coop, Key::Backoff, Key::Local, Key::Layout],
    }
}

/// The keys a target's executor applies itself (see the module documentation).
pub const EXECUTOR_KEYS: &[(Target, &[Key])] = &[
    (Target::Cpu, &[Key::Outline, Key::Backoff]),
    (Target::Gpu, &[Key::Outline, Key::Backoff, Key::Block, Key::Grid]),
];

fn executor_keys(target: Target) -> &'static [Key] {
    EXECUTOR_KEYS.iter().find(|(t, _)| *t == target).map_or(&[], |(_, keys)| keys)
}

/// The block sizes the tuner tries on the GPU.
pub const BLOCK_SIZES: [u32; 3] = [128, 256, 512];

/// The control kernels' blocks per multiprocessor the tuner tries (0: all that fit).
pub const GRID_SIZES: [u32; 3] = [0, 1, 2];

/// The pipe unrollings the tuner tries.
pub const UNROLLS: [u32; 3] = [1, 2, 4];

/// One key's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Setting {
    Outline(Outline),
    Np(Schedulers),
    Coop(Aggregation),
    Backoff(bool),
    Ldg(bool),
    Block(u32),
    Grid(u32),
    Unroll(u32),
    Scatter(bool),
    Lockcache(bool),
    Local(bool),
    Layout(Layout),
    Converge(bool),
    Stages(bool),
    Marks(bool),
    Adapt(bool),
}

impl Setting {
    /// `config`'s value of `key`.
    pub fn of(key: Key, config: &OptConfig) -> Setting {
        match key {
            Key::Outline => Setting::Outline(config.outline),
            Key::Np => Setting::Np(config.np),
            Key::Coop => Setting::Coop(config.coop),
            Key::Backoff => Setting::Backoff(config.backoff),
            Key::Ldg => Setting::Ldg(config.ldg),
            Key::Block => Setting::Block(config.block),
            Key::Grid => Setting::Grid(config.grid),
            Key::Unroll => Setting::Unroll(config.unroll),
            Key::Scatter => Setting::Scatter(config.scatter),
            Key::Lockcache => Setting::Lockcache(config.lockcache),
            Key::Local => Setting::Local(config.local),
            Key::Layout => Setting::Layout(config.layout),
            Key::Converge => Setting::Converge(config.converge),
            Key::Stages => Setting::Stages(config.stages),
            Key::Marks => Setting::Marks(config.marks),
            Key::Adapt => Setting::Adapt(config.adapt),
        }
    }

    /// `config` with this value.
    pub fn apply(self, config: OptConfig) -> OptConfig {
        let mut config = config;
        match self {
            Setting::Outline(v) => config.outline = v,
            Setting::Np(v) => config.np = v,
            Setting::Coop(v) => config.coop = v,
            Setting::Backoff(v) => config.backoff = v,
            Setting::Ldg(v) => config.ldg = v,
            Setting::Block(v) => config.block = v,
            Setting::Grid(v) => config.grid = v,
            Setting::Unroll(v) => config.unroll = v,
            Setting::Scatter(v) => config.scatter = v,
            Setting::Lockcache(v) => config.lockcache = v,
            Setting::Local(v) => config.local = v,
            Setting::Layout(v) => config.layout = v,
            Setting::Converge(v) => config.converge = v,
            Setting::Stages(v) => config.stages = v,
            Setting::Marks(v) => config.marks = v,
            Setting::Adapt(v) => config.adapt = v,
        }
        config
    }

    /// The key this is a value of.
    pub fn key(self) -> Key {
        match self {
            Setting::Outline(_) => Key::Outline,
            Setting::Np(_) => Key::Np,
            Setting::Coop(_) => Key::Coop,
            Setting::Backoff(_) => Key::Backoff,
            Setting::Ldg(_) => Key::Ldg,
            Setting::Block(_) => Key::Block,
            Setting::Grid(_) => Key::Grid,
            Setting::Unroll(_) => Key::Unroll,
            Setting::Scatter(_) => Key::Scatter,
            Setting::Lockcache(_) => Key::Lockcache,
            Setting::Local(_) => Key::Local,
            Setting::Layout(_) => Key::Layout,
            Setting::Converge(_) => Key::Converge,
            Setting::Stages(_) => Key::Stages,
            Setting::Marks(_) => Key::Marks,
            Setting::Adapt(_) => Key::Adapt,
        }
    }

    /// The value as `--opt` writes it (`tb+wp`, `warp`, `on`, `128`).
    pub fn text(self) -> String {
        let config = self.apply(OptConfig::NONE).to_string();
        let key = format!("{}=", self.key().name());
        config.split(',').find_map(|pair| pair.strip_prefix(key.as_str())).expect("every key is printed").to_string()
    }
}

/// A key the tuner searches: its values (the `none` value first) and why it can matter.
#[derive(Debug, Clone)]
pub struct Dimension {
    pub key: Key,
    pub values: Vec<Setting>,
    pub why: String,
}

/// A key the tuner leaves at its `none` value, and why.
#[derive(Debug, Clone)]
pub struct Skipped {
    pub key: Key,
    pub why: String,
}

/// The keys that can matter for a program on a target.
#[derive(Debug, Clone)]
pub struct Space {
    pub target: Target,
    pub dimensions: Vec<Dimension>,
    pub skipped: Vec<Skipped>,
}

impl Space {
    /// The space of `module` (unoptimized) on `target`.
    pub fn of(module: &Module, target: Target) -> Result<Space> {
        let mut space = Space { target, dimensions: Vec::new(), skipped: Vec::new() };
        let implemented = target_keys(target);
        for key in Key::ALL {
            if !implemented.contains(&key) {
                let why = match key {
                    Key::Ldg => "the read-only data cache is GPU hardware",
                    Key::Block => "thread blocks are GPU hardware",
                    Key::Grid => "control kernels' grids are GPU hardware",
                    Key::Unroll => "only control kernels (GPU) run pipe loops on the device",
                    Key::Scatter | Key::Converge | Key::Stages | Key::Adapt => "it shapes GPU item loops",
                    Key::Lockcache => "it chooses GPU loads",
                    Key::Marks => "it is a GPU lowering of `exclusive`",
                    _ => "the target does not implement it",
                };
                space.skipped.push(Skipped { key, why: format!("{why}; the {target} target has no such key") });
                continue;
            }
            match relevance(module, key, target)? {
                Ok((values, why)) => space.dimensions.push(Dimension { key, values, why }),
                Err(why) => space.skipped.push(Skipped { key, why }),
            }
        }
        Ok(space)
    }

    /// How many configurations the space holds.
    pub fn size(&self) -> usize {
        self.dimensions.iter().map(|d| d.values.len()).product()
    }

    /// Every configuration, those closest to `none` first (the other keys at their `none`
    /// values).
    pub fn configurations(&self) -> Vec<OptConfig> {
        let mut configs = vec![OptConfig::NONE];
        for dimension in &self.dimensions {
            configs = configs.iter().flat_map(|c| dimension.values.iter().map(|v| v.apply(*c))).collect();
        }
        configs.sort_by_key(|c| self.distance(c, &OptConfig::NONE));
        configs
    }

    /// Every searched key at its `all` value (the others at `none`).
    pub fn all(&self) -> OptConfig {
        self.dimensions.iter().fold(OptConfig::NONE, |c, d| d.key.all_value().apply(c))
    }

    /// Each searched key alone at its `all` value, in key order.
    pub fn singles(&self) -> Vec<(Key, OptConfig)> {
        self.dimensions
            .iter()
            .filter(|d| d.key.all_value() != d.key.none_value())
            .map(|d| (d.key, d.key.all_value().apply(OptConfig::NONE)))
            .collect()
    }

    /// The configurations that differ from `config` in one searched key.
    pub fn neighbours(&self, config: &OptConfig) -> Vec<OptConfig> {
        let mut out = Vec::new();
        for dimension in &self.dimensions {
            for value in &dimension.values {
                let next = value.apply(*config);
                if next != *config {
                    out.push(next);
                }
            }
        }
        out
    }

    /// In how many searched keys two configurations differ.
    pub fn distance(&self, a: &OptConfig, b: &OptConfig) -> usize {
        self.dimensions.iter().filter(|d| Setting::of(d.key, a) != Setting::of(d.key, b)).count()
    }
}

/// Whether `key` can matter for `module`: its values and why, or why not.
fn relevance(module: &Module, key: Key, target: Target) -> Result<std::result::Result<(Vec<Setting>, String), String>> {
    let with = |setting: Setting| optimized(module, &setting.apply(OptConfig::NONE));
    let first_note = |m: &Module, about: &str| m.opt_notes.iter().find(|n| n.contains(about)).cloned();
    Ok(match key {
        Key::Outline => {
            let m = with(Setting::Outline(Outline::All))?;
            let mut regions = Vec::new();
            walk_regions(&m.main.block, &mut |stmt| {
                if is_outlined(stmt) {
                    regions.push(grail_ir::opt::outline::region_name(stmt));
                }
            });
            if regions.is_empty() {
                let mut any = false;
                walk_regions(&module.main.block, &mut |_| any = true);
                Err(if any {
                    first_note(&m, "not outlined").unwrap_or_else(|| "no region can be outlined".into())
                } else {
                    "the program has no iterate or pipe".into()
                })
            } else {
                Ok((
                    vec![Setting::Outline(Outline::None), Setting::Outline(Outline::All)],
                    format!("{} can be outlined", regions.join(", ")),
                ))
            }
        }
        Key::Np => {
            let m = with(Setting::Np(Schedulers::ALL))?;
            let kernels: Vec<&str> = m
                .kernels
                .iter()
                .filter(|k| {
                    k.body.block.iter().any(|s| matches!(s, Stmt::ForAll(phase) if nested::site(phase).is_some()))
                })
                .map(|k| k.name.as_str())
                .collect();
            if kernels.is_empty() {
                Err(first_note(&m, "nested loop")
                    .unwrap_or_else(|| "no kernel has a nested loop the schedulers can run".into()))
            } else {
                Ok((
                    Schedulers::combinations().map(Setting::Np).collect(),
                    format!(
                        "nested loops in {}",
                        kernels.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                    ),
                ))
            }
        }
        Key::Coop => {
            let sites: usize = module.kernels.iter().map(|k| k.push_sites.len()).sum();
            if sites == 0 {
                Err("no kernel pushes".into())
            } else {
                let m = with(Setting::Coop(Aggregation::Block))?;
                let block = m.kernels.iter().any(|k| k.push_sites.contains(&Aggregation::Block));
                let mut values = vec![Setting::Coop(Aggregation::None), Setting::Coop(Aggregation::Warp)];
                if block {
                    values.push(Setting::Coop(Aggregation::Block));
                }
                Ok((values, format!("{sites} push site{}", if sites == 1 { "" } else { "s" })))
            }
        }
        Key::Backoff => {
            let retrying: Vec<&str> =
                module.kernels.iter().filter(|k| backoff::retries(k)).map(|k| k.name.as_str()).collect();
            if retrying.is_empty() {
                Err("no kernel retries".into())
            } else {
                Ok((
                    vec![Setting::Backoff(false), Setting::Backoff(true)],
                    format!("{} retr{}", retrying.join(", "), if retrying.len() == 1 { "ies" } else { "y" }),
                ))
            }
        }
        Key::Ldg => {
            let read_only: Vec<&str> = ldg::read_only(module)
                .iter()
                .zip(&module.properties)
                .filter(|(r, _)| **r)
                .map(|(_, p)| p.name.as_str())
                .collect();
            if read_only.is_empty() {
                Err("every property is written by some kernel".into())
            } else {
                Ok((
                    vec![Setting::Ldg(false), Setting::Ldg(true)],
                    format!("kernels only read {}", read_only.join(", ")),
                ))
            }
        }
        Key::Grid => {
            debug_assert_eq!(target, Target::Gpu);
            let m = with(Setting::Outline(Outline::All))?;
            let mut outlined = false;
            walk_regions(&m.main.block, &mut |stmt| outlined |= is_outlined(stmt));
            if outlined {
                Ok((
                    GRID_SIZES.iter().map(|&g| Setting::Grid(g)).collect(),
                    "blocks per multiprocessor of the outlined regions' control kernels".to_string(),
                ))
            } else {
                Err("no region can be outlined, so there is no control kernel to size".into())
            }
        }
        Key::Unroll => {
            debug_assert_eq!(target, Target::Gpu);
            let m = optimized(module, &OptConfig { outline: Outline::All, unroll: 2, ..OptConfig::NONE })?;
            let mut unrolled = false;
            walk_regions(&m.main.block, &mut |stmt| unrolled |= matches!(stmt, Stmt::Pipe(p) if p.unroll > 1));
            if unrolled {
                Ok((
                    UNROLLS.iter().map(|&u| Setting::Unroll(u)).collect(),
                    "copies of an outlined pipe loop's body".to_string(),
                ))
            } else {
                Err("no `pipe` loop is outlined, so there is none to unroll".into())
            }
        }
        Key::Block => {
            debug_assert_eq!(target, Target::Gpu);
            Ok((
                BLOCK_SIZES.iter().map(|&b| Setting::Block(b)).collect(),
                "threads per block of every launch".to_string(),
            ))
        }
        Key::Layout => {
            if module.collections.is_empty() {
                Err("the program has no collections".into())
            } else {
                let names: Vec<String> = module.collections.iter().map(|c| format!("`{}`", c.name)).collect();
                Ok((
                    vec![Setting::Layout(Layout::Columns), Setting::Layout(Layout::Rows)],
                    format!("collections {} in columns or rows", names.join(", ")),
                ))
            }
        }
        Key::Converge => {
            debug_assert_eq!(target, Target::Gpu);
            Ok((vec![Setting::Converge(false), Setting::Converge(true)], "every phase's item loop".to_string()))
        }
        Key::Scatter | Key::Lockcache | Key::Adapt => {
            debug_assert_eq!(target, Target::Gpu);
            let morph: Vec<&str> = module
                .kernels
                .iter()
                .filter(|k| grail_ir::analysis::is_morph_kernel(module, k))
                .map(|k| k.name.as_str())
                .collect();
            let outlined = grail_ir::opt::outline::region_kernels(&with(Setting::Outline(Outline::All))?);
            let adaptive: Vec<&str> = module
                .kernels
                .iter()
                .enumerate()
                .filter(|(i, k)| outlined[*i] && grail_ir::analysis::is_morph_kernel(module, k))
                .map(|(_, k)| k.name.as_str())
                .collect();
            let (kernels, values, what) = match key {
                Key::Scatter => (morph, [Setting::Scatter(false), Setting::Scatter(true)], "first passes scattered"),
                Key::Lockcache => {
                    (morph, [Setting::Lockcache(false), Setting::Lockcache(true)], "loads in lock sections")
                }
                _ => (adaptive, [Setting::Adapt(false), Setting::Adapt(true)], "adaptive parallelism"),
            };
            if kernels.is_empty() {
                Err(if key == Key::Adapt {
                    "no morph kernel (one that retries or locks collection elements) runs in an outlined region"
                } else {
                    "no morph kernel (one that retries or locks collection elements)"
                }
                .into())
            } else {
                let names: Vec<String> = kernels.iter().map(|k| format!("`{k}`")).collect();
                Ok((values.to_vec(), format!("{what}: {}", names.join(", "))))
            }
        }
        Key::Local => {
            let m = with(Setting::Local(true))?;
            let kernels: Vec<&str> = (0..m.kernels.len())
                .filter(|&k| local::eligible(&m, KernelId(k as u32)).is_ok())
                .map(|k| m.kernels[k].name.as_str())
                .collect();
            if kernels.is_empty() {
                Err(first_note(&m, "no local worklist")
                    .unwrap_or_else(|| "no kernel pushes to its own worklist".into()))
            } else {
                let names: Vec<String> = kernels.iter().map(|k| format!("`{k}`")).collect();
                Ok((vec![Setting::Local(false), Setting::Local(true)], format!("{} keep pushes", names.join(", "))))
            }
        }
        Key::Stages => {
            debug_assert_eq!(target, Target::Gpu);
            let m = optimized(module, &OptConfig { converge: true, stages: true, ..OptConfig::NONE })?;
            let mut kernels = Vec::new();
            for (k, kernel) in m.kernels.iter().enumerate() {
                let staged = kernel.body.block.iter().any(|stmt| {
                    matches!(stmt, Stmt::ForAll(phase) if grail_ir::opt::stages::staged(&m, KernelId(k as u32), phase))
                });
                if staged {
                    kernels.push(format!("`{}`", kernel.name));
                }
            }
            if kernels.is_empty() {
                Err("no phase claims with `exclusive`".into())
            } else {
                Ok((
                    vec![Setting::Stages(false), Setting::Stages(true)],
                    format!("{} run their items in stages (with converge)", kernels.join(", ")),
                ))
            }
        }
        Key::Marks => {
            debug_assert_eq!(target, Target::Gpu);
            let m = optimized(module, &OptConfig { outline: Outline::All, marks: true, ..OptConfig::NONE })?;
            let mut kernels = Vec::new();
            for (k, kernel) in m.kernels.iter().enumerate() {
                if (0..kernel.body.block.len()).any(|p| marks::site(&m, KernelId(k as u32), p).is_ok()) {
                    kernels.push(kernel.name.as_str());
                }
            }
            if kernels.is_empty() {
                Err(first_note(&m, "takes locks, not marks")
                    .unwrap_or_else(|| "no `exclusive` that marks can decide".into()))
            } else {
                let names: Vec<String> = kernels.iter().map(|k| format!("`{k}`")).collect();
                Ok((
                    vec![Setting::Marks(false), Setting::Marks(true)],
                    format!("marks can decide {}", names.join(", ")),
                ))
            }
        }
    })
}

fn optimized(module: &Module, config: &OptConfig) -> Result<Module> {
    optimize(module.clone(), config)
        .map_err(|e| AlgoError::Internal(format!("optimizing `{}` with {config}: {e}", module.name)))
}

fn is_outlined(stmt: &Stmt) -> bool {
    match stmt {
        Stmt::Iterate(iterate) => iterate.outlined,
        Stmt::Pipe(pipe) => pipe.outlined,
        _ => false,
    }
}

/// Visits every `iterate` and `pipe` of a block, nested ones included.
fn walk_regions(block: &grail_ir::Block, visit: &mut impl FnMut(&Stmt)) {
    grail_ir::walk_block(block, &mut |stmt| {
        if matches!(stmt, Stmt::Iterate(_) | Stmt::Pipe(_)) {
            visit(stmt);
        }
    });
}

/// What makes two configurations the same program on a target: a hash of the generated source
/// and the values of the keys the executor applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fingerprint(u64);

/// The fingerprint of `module` (unoptimized) compiled with `config` for `target`.
pub fn fingerprint(module: &Module, config: &OptConfig, target: Target) -> Result<Fingerprint> {
    let optimized = optimized(module, config)?;
    let source = match target {
        Target::Gpu => grail_codegen::emit_cuda(&optimized),
        Target::Cpu | Target::Reference => grail_codegen::emit_c(&optimized),
    }
    .map_err(|e| AlgoError::Internal(format!("generating code for `{}` with {config}: {e}", module.name)))?;
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    hasher.update(source.as_bytes());
    for &key in executor_keys(target) {
        // The control kernels' grid means nothing without outlined regions.
        if key == Key::Grid && config.outline == Outline::None {
            continue;
        }
        hasher.update(b"\0");
        hasher.update(Setting::of(key, config).text().as_bytes());
    }
    Ok(Fingerprint(hasher.digest()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::compile_source;

    fn module(name: &str) -> Module {
        compile_source(name, crate::program_source(name).unwrap()).unwrap()
    }

    #[test]
    fn settings_print_as_opt_values() {
        assert_eq!(Setting::Np(Schedulers { tb: true, wp: false, fg: true }).text(), "tb+fg");
        assert_eq!(Setting::Coop(Aggregation::Warp).text(), "warp");
        assert_eq!(Setting::Block(128).text(), "128");
        assert_eq!(Setting::Outline(Outline::All).text(), "all");
        for key in Key::ALL {
            let text = key.all_value().apply(OptConfig::NONE).to_string();
            assert!(text.contains(&format!("{key}={}", key.all_value().text())), "{text}");
        }
    }

    #[test]
    fn keys_that_cannot_matter_are_skipped_with_a_reason() {
        // bfs: an iterate with scalar host code, a nested loop, pushes, no retries.
        let space = Space::of(&module("bfs"), Target::Gpu).unwrap();
        let keys: Vec<Key> = space.dimensions.iter().map(|d| d.key).collect();
        assert!(keys.contains(&Key::Np) && keys.contains(&Key::Coop) && keys.contains(&Key::Block), "{space:?}");
        let skipped: Vec<(Key, &str)> = space.skipped.iter().map(|s| (s.key, s.why.as_str())).collect();
        assert!(skipped.contains(&(Key::Backoff, "no kernel retries")), "{skipped:?}");
        // The CPU has no ldg or block keys.
        let cpu = Space::of(&module("bfs"), Target::Cpu).unwrap();
        assert!(cpu.dimensions.iter().all(|d| d.key != Key::Ldg && d.key != Key::Block));
        assert!(cpu.skipped.iter().any(|s| s.key == Key::Block && s.why.contains("GPU hardware")));
        // sssp_nf retries.
        let nf = Space::of(&module("sssp_nf"), Target::Cpu).unwrap();
        assert!(nf.dimensions.iter().any(|d| d.key == Key::Backoff), "{nf:?}");
        // tri has no pushes.
        let tri = Space::of(&module("tri"), Target::Cpu).unwrap();
        assert!(tri.skipped.iter().any(|s| s.key == Key::Coop && s.why == "no kernel pushes"), "{tri:?}");
        // bfs has no collections and no morph kernel; converge shapes every GPU program.
        assert!(keys.contains(&Key::Converge), "{space:?}");
        for (key, why) in [
            (Key::Layout, "no collections"),
            (Key::Scatter, "no morph kernel"),
            (Key::Stages, "no phase claims with `exclusive`"),
            (Key::Marks, ""),
        ] {
            assert!(skipped.iter().any(|(k, w)| *k == key && w.contains(why)), "{key}: {skipped:?}");
        }
    }

    #[test]
    fn a_morph_program_searches_the_morph_keys() {
        // dmr: collections, a refinement that locks triangles in an outlined iterate, a claim
        // that marks can decide.
        let dmr = module("dmr");
        let gpu = Space::of(&dmr, Target::Gpu).unwrap();
        let keys: Vec<Key> = gpu.dimensions.iter().map(|d| d.key).collect();
        for key in [Key::Layout, Key::Scatter, Key::Lockcache, Key::Converge, Key::Stages, Key::Marks, Key::Adapt] {
            assert!(keys.contains(&key), "{key}: {gpu:?}");
        }
        // The CPU has the layout, not the GPU's keys.
        let cpu = Space::of(&dmr, Target::Cpu).unwrap();
        let keys: Vec<Key> = cpu.dimensions.iter().map(|d| d.key).collect();
        assert!(keys.contains(&Key::Layout), "{cpu:?}");
        assert!(cpu.skipped.iter().any(|s| s.key == Key::Marks && s.why.contains("GPU")), "{cpu:?}");
        // Every value prints as --opt writes it.
        for d in &gpu.dimensions {
            for v in &d.values {
                let text = v.apply(OptConfig::NONE).to_string();
                assert!(text.contains(&format!("{}={}", d.key, v.text())), "{text}");
            }
        }
    }

    #[test]
    fn configurations_start_at_none_and_cover_the_product() {
        let space = Space::of(&module("bfs"), Target::Gpu).unwrap();
        let configs = space.configurations();
        assert_eq!(configs.len(), space.size());
        assert_eq!(configs[0], OptConfig::NONE);
        let distinct: std::collections::HashSet<_> = configs.iter().collect();
        assert_eq!(distinct.len(), configs.len());
        assert!(configs.contains(&space.all()));
        for (key, single) in space.singles() {
            assert_eq!(space.distance(&single, &OptConfig::NONE), 1, "{key}");
        }
        let all = space.all();
        assert!(space.neighbours(&all).iter().all(|n| space.distance(n, &all) == 1));
    }

    #[test]
    fn the_same_generated_program_has_the_same_fingerprint() {
        let m = module("bfs");
        let none = fingerprint(&m, &OptConfig::NONE, Target::Cpu).unwrap();
        assert_eq!(none, fingerprint(&m, &OptConfig::NONE, Target::Cpu).unwrap());
        // Executor keys always tell programs apart.
        let outlined = OptConfig { outline: Outline::All, ..OptConfig::NONE };
        assert_ne!(none, fingerprint(&m, &outlined, Target::Cpu).unwrap());
        let block = OptConfig { block: 128, ..OptConfig::NONE };
        assert_ne!(
            fingerprint(&m, &OptConfig::NONE, Target::Gpu).unwrap(),
            fingerprint(&m, &block, Target::Gpu).unwrap()
        );
        // ldg is not a CPU key: its value cannot change the C.
        let ldg = OptConfig { ldg: true, ..OptConfig::NONE };
        assert_eq!(none, fingerprint(&m, &ldg, Target::Cpu).unwrap());
    }
}
