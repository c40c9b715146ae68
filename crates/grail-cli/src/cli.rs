//! The command line: every subcommand and flag, with help text.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use grail_algos::{Algorithm, Target};
use grail_graph::io::Format;

#[derive(Debug, Parser)]
#[command(
    name = "grail",
    version,
    about = "grail: graph algorithms written once, run fast on CPUs and GPUs",
    after_help = "Exit status: 0 success; 1 an error (bad input, I/O, a failed build); 2 a usage error; 3 a verifier \
                  rejected a result; 70 generated code faulted (an internal or software error: an index out of range \
                  or a division by zero on the CPU, a kernel fault or, with --checks, a division by zero \
                  on the GPU) or host code divided by zero or a type's minimum by -1; 124 `grail run --timeout` stopped \
                  the run; 128 + N signal N (SIGINT, SIGTERM) interrupted grail."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Draw no progress bars.
    #[arg(long, short, global = true)]
    pub quiet: bool,
    /// Worker threads for parallel work (default, or 0: one per core; at most 4096).
    #[arg(long, global = true, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<usize>,
}

/// The most worker threads `--threads` accepts: far more than any machine's cores, and few
/// enough to start in a moment.
const MAX_THREADS: usize = 4096;

/// `--threads`: a thread count from 0 (one per core) to [`MAX_THREADS`].
fn parse_threads(text: &str) -> Result<usize, String> {
    let threads: usize = text.trim().parse().map_err(|e| format!("{e}"))?;
    if threads > MAX_THREADS {
        return Err(format!("{threads} threads is too many: at most {MAX_THREADS}"));
    }
    Ok(threads)
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Generate a graph and write it to a file.
    Gen(GenArgs),
    /// Convert a graph between formats, optionally cleaning or reordering it.
    Convert(ConvertArgs),
    /// Print a graph's statistics.
    Stats(StatsArgs),
    /// Run a suite algorithm on a graph.
    Run(RunArgs),
    /// Find the fastest optimization configuration of a program on an input, verifying every
    /// candidate, and record it for the input's class: `grail run` then uses it by default.
    Tune(TuneArgs),
    /// Generate inputs of each kind, run and verify every algorithm (the suite on graphs, then
    /// the morph algorithms: mesh refinement, SP, PTA, incremental SSSP), print a summary
    /// (grail's main job on built-in inputs).
    Demo(DemoArgs),
    /// Benchmarks of grail itself.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Parse and type-check a grail program and report every error found, with file, line,
    /// column and the offending source; exits 1 if there is any.
    Check(CheckArgs),
    /// Compile a grail program and write the stage chosen by --emit to standard output.
    Compile(CompileArgs),
    /// List the NVIDIA GPUs grail can use and check each with a self-test kernel (driver,
    /// NVRTC, the device runtime header, module loading).
    Devices(DevicesArgs),
    /// Triangle meshes (the input and output of Delaunay mesh refinement), in Triangle's
    /// `.node`/`.ele`/`.poly` formats: generate, check, refine, draw.
    #[command(subcommand)]
    Mesh(MeshCommand),
    /// Survey propagation on a DIMACS CNF formula: writes a satisfying assignment as `v` lines;
    /// exit 4 when none was found (survey propagation is a heuristic).
    Sp(SpArgs),
    /// Inclusion-based (Andersen) points-to analysis: constraints extracted from a C program's
    /// LLVM IR, and solved.
    #[command(subcommand)]
    Pta(PtaCommand),
    /// Incremental shortest paths: edges inserted in batches, the distances repaired after each
    /// (and, for comparison, solved again from scratch); deletions are not supported.
    Dsssp(DssspArgs),
    /// Partition a graph among K devices: every node gets an owner (METIS's edge-cut
    /// minimization, contiguous id ranges by nodes or edges, degree-sorted dealing, or a hash);
    /// prints the edge cut, the balance and each part's nodes, edges and ghosts.
    Partition(PartitionArgs),
    /// Predicate-based filtering, Groute's example of routers: a random array cut into
    /// segments, each sent to the first device with a free buffer, filtered there by a grail
    /// program, the kept values brought back in order; prints how the devices shared the work.
    Pbf(PbfArgs),
    /// Parallel sections (Falcon's): several suite algorithms at once on one graph, each on its
    /// own device (`bfs@gpu:0 pr/push@cpu`); prints each section's time beside the wall time.
    Sections(SectionsArgs),
}

#[derive(Debug, Args)]
pub struct SectionsArgs {
    /// The sections, each `ALGO[/VARIANT]@DEVICE`: `bfs@gpu:0`, `pr/push@cpu`, `sssp/nf@gpu:1`.
    #[arg(required = true, value_name = "ALGO@DEVICE")]
    pub sections: Vec<String>,
    /// The graph file (any format `grail run --graph` reads).
    #[arg(long, short, value_name = "FILE")]
    pub graph: PathBuf,
    /// Input format, when the extension and contents do not tell.
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<Format>,
    /// The first node id in the file: 1 for files that number nodes from 1.
    #[arg(long, value_name = "0|1", default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=1))]
    pub base: u8,
    /// Source node of bfs and sssp sections.
    #[arg(long, short)]
    pub source: Option<u64>,
    /// Check every section's result with the algorithm's verifier; exit 3 if one fails.
    #[arg(long)]
    pub verify: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct PbfArgs {
    /// The devices that filter, as `grail run --devices` takes them: `gpu:0,gpu:1`, `all`,
    /// `cpu*4`, `gpu:0,cpu`.
    #[arg(long, value_name = "LIST", default_value = "cpu")]
    pub devices: String,
    /// Values in the array (random 32-bit values).
    #[arg(long, default_value_t = 10_000_000)]
    pub count: usize,
    /// Values per segment.
    #[arg(long, default_value_t = 1 << 20, value_parser = clap::value_parser!(u64).range(1..))]
    pub segment: u64,
    /// A value is kept when this divides it.
    #[arg(long, default_value_t = 7, value_parser = clap::value_parser!(u32).range(1..))]
    pub divisor: u32,
    /// The array's random seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Compare with a plain filter; exit 3 when they differ.
    #[arg(long)]
    pub verify: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// The optimizations the filter program is compiled with (as `grail run --opt`).
    #[arg(long, value_name = "CONFIG", default_value = "all")]
    pub opt: grail_ir::OptConfig,
}

/// Where a grail program runs and how it is compiled, for the commands whose `--target cpu|gpu`
/// runs one (`grail mesh refine`, `sp`, `pta solve`, `dsssp`).
#[derive(Debug, Args, Clone, Copy)]
pub struct ProgramArgs {
    /// The GPU of --target gpu, numbered from 0.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub device: usize,
    /// The optimizations the grail program is compiled with (cpu and gpu targets): `all` (the
    /// default), `none`, or KEY=VALUE pairs after an optional preset, e.g. `all,outline=none`
    /// or `all,scatter=off` (the keys as `grail run --opt` takes them).
    #[arg(long, value_name = "CONFIG", default_value = "all")]
    pub opt: grail_ir::OptConfig,
}

#[derive(Debug, Args)]
pub struct DssspArgs {
    /// The graph file (any format `grail run --graph` reads), with integer weights or none.
    #[arg(long, short, value_name = "FILE")]
    pub graph: PathBuf,
    /// Input format, when the extension and contents do not tell.
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<grail_graph::io::Format>,
    /// The first node id in the graph file: 1 for files that number nodes from 1.
    #[arg(long, value_name = "0|1", default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=1))]
    pub base: u8,
    /// The source node (0-based), or `max-degree` for the node with the most out-edges (on
    /// generated power-law graphs node 0 may reach nothing).
    #[arg(long, default_value = "0")]
    pub source: SourceNode,
    /// The insertions: `u v w` lines (0-based ids, weight 1 when left out), batches separated
    /// by blank lines, `#` comments.
    #[arg(long, value_name = "FILE", conflicts_with = "random_batches")]
    pub updates: Option<PathBuf>,
    /// Insert K batches of random edges instead: uniformly random endpoints (weights up to the
    /// graph's largest), or with --local short-cuts between nearby nodes.
    #[arg(long, value_name = "K")]
    pub random_batches: Option<usize>,
    /// Random batches with locality: each edge joins a node to the end of a random walk of 2-4
    /// out-edges from it, weighing half to all of the walk (new roads between nearby places).
    #[arg(long, requires = "random_batches")]
    pub local: bool,
    /// Edges per random batch: a count, or a share of the graph's edges such as `0.1%`.
    #[arg(long, value_name = "B")]
    pub batch_size: Option<BatchSize>,
    /// Seed of the random batches.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Who repairs the distances: `reference` (Dijkstra's restarted from the inserted edges),
    /// `cpu` or `gpu` (the grail program `dsssp`).
    #[arg(long, default_value = "cpu")]
    pub target: grail_algos::Target,
    #[command(flatten)]
    pub program: ProgramArgs,
    /// Do not solve each batch from scratch for comparison.
    #[arg(long)]
    pub no_fresh: bool,
    /// Check the distances after every batch against a fresh Dijkstra's (exit 3 when they
    /// differ).
    #[arg(long)]
    pub verify: bool,
    /// Print JSON instead of a summary.
    #[arg(long)]
    pub json: bool,
    /// Where to write the final distances, one line per node (`inf` unreached); `-` for
    /// standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// A source node: an id, or the node with the most out-edges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceNode {
    Id(u64),
    MaxDegree,
}

impl SourceNode {
    /// The node id given, if one was (`max-degree` needs the graph: [`SourceNode::resolve`]).
    pub fn id(self) -> Option<u64> {
        match self {
            SourceNode::Id(id) => Some(id),
            SourceNode::MaxDegree => None,
        }
    }

    /// The node this names in `graph`, checked to be one.
    pub fn resolve(self, graph: &grail_graph::Graph) -> Result<u64, grail_graph::GraphError> {
        match self {
            SourceNode::Id(id) => graph.check_node(id, "source node").map(u64::from),
            SourceNode::MaxDegree if graph.num_nodes() > 0 => Ok(u64::from(graph.out().max_degree().0)),
            SourceNode::MaxDegree => {
                Err(grail_graph::GraphError::invalid("the graph has no nodes, so there is no source node"))
            }
        }
    }
}

impl std::str::FromStr for SourceNode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        if s == "max-degree" {
            return Ok(SourceNode::MaxDegree);
        }
        s.parse().map(SourceNode::Id).map_err(|_| format!("`{s}`: expected a node id or `max-degree`"))
    }
}

/// A batch size: a number of edges, or a share of the graph's edges (`0.1%`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BatchSize {
    Edges(usize),
    Percent(f64),
}

impl std::str::FromStr for BatchSize {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("`{s}`: expected a number of edges (1 or more) or a share such as 0.1%");
        match s.strip_suffix('%') {
            Some(share) => match share.trim().parse::<f64>() {
                Ok(p) if p > 0.0 && p <= 100.0 => Ok(BatchSize::Percent(p)),
                _ => Err(bad()),
            },
            None => match s.parse::<usize>() {
                Ok(n) if n > 0 => Ok(BatchSize::Edges(n)),
                _ => Err(bad()),
            },
        }
    }
}

#[derive(Debug, Args)]
pub struct SpArgs {
    /// The formula: a DIMACS CNF file (`p cnf VARS CLAUSES`, clauses ended by 0).
    #[arg(value_name = "FILE")]
    pub input: PathBuf,
    /// Who solves it.
    #[arg(long, value_enum, default_value_t = SpTarget::Cpu)]
    pub target: SpTarget,
    #[command(flatten)]
    pub program: ProgramArgs,
    /// Check the assignment clause by clause against the formula read again (exit 3 when it
    /// fails).
    #[arg(long)]
    pub verify: bool,
    /// Print JSON instead of a summary.
    #[arg(long)]
    pub json: bool,
    /// Random seed of the initial surveys (and, for the reference, of their update order) and
    /// of the local search.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The share of the free variables one decimation step fixes (at least one variable).
    #[arg(long, value_name = "F", default_value_t = 0.01)]
    pub fix_fraction: f64,
    /// Surveys have converged when a sweep moves none by more than this.
    #[arg(long, value_name = "EPS", default_value_t = 0.001)]
    pub epsilon: f64,
    /// Sweeps allowed for one convergence (then the run ends: surveys did not converge).
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub max_sweeps: usize,
    /// The local search's flips on what the surveys leave (`walksat` in the JSON's names stands
    /// for either local search).
    #[arg(long, value_name = "N", default_value_t = 100_000_000)]
    pub walksat_flips: u64,
    /// WalkSAT's noise (the probability of a random walk step); by default 0.5 for 3-SAT, 0.4
    /// for 4-SAT and 0.3 for longer clauses.
    #[arg(long, value_name = "P")]
    pub noise: Option<f64>,
    /// The local search that finishes what the surveys leave: probSAT (each variable of the
    /// clause chosen with a probability that falls with what its flip breaks; no noise), or
    /// WalkSAT (with --noise). probSAT took half WalkSAT's flips on a 4-SAT formula's remainder
    /// and solved random 3-SAT near the threshold that WalkSAT did not.
    #[arg(long, value_enum, default_value_t = LocalSearch::Probsat)]
    pub local_search: LocalSearch,
    /// Rounds of the grail program's own parallel local search (cpu and gpu targets) before
    /// --local-search takes over on the host from its values: each round, every unsatisfied
    /// clause draws one of its variables probSAT's way and the drawn ones flip at once. 0: the
    /// host's search alone. By default 500000 on a GPU (faster than the host's from a million
    /// variables on) and 0 on the CPU.
    #[arg(long, value_name = "N")]
    pub search_rounds: Option<u32>,
    /// Also write what the surveys leave for the local search as DIMACS CNF (the formula's
    /// variables, the deleted clauses and false literals left out), e.g. for another solver
    /// (cpu and gpu targets; not written when the surveys end in a contradiction).
    #[arg(long, value_name = "FILE")]
    pub rest: Option<PathBuf>,
    /// The order of the clauses in the factor graph (cpu and gpu targets): `variable` (by
    /// smallest variable, each clause's literals by variable: neighbouring clauses share
    /// variables, 15% faster surveys on a GPU for 5-SAT), `read` (as the file lists them), or
    /// `auto`: `variable` for clauses of up to 5 literals, `read` beyond (with the variable
    /// order a million-variable 6-SAT formula at ratio 38 ended in a contradiction where the
    /// order read solved it). The order changes the surveys' start and so the run.
    #[arg(long, value_enum, default_value_t = ClauseOrderArg::Auto)]
    pub clause_order: ClauseOrderArg,
    /// Where to write the assignment (`v 1 -2 3 ... 0` lines); `-` for standard output.
    #[arg(short, long, value_name = "ASSIGNMENT")]
    pub output: Option<PathBuf>,
}

/// `grail sp --clause-order`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ClauseOrderArg {
    /// `variable` for clauses of up to 5 literals, `read` beyond.
    Auto,
    /// As the formula lists them.
    Read,
    /// By smallest variable, each clause's literals by variable.
    Variable,
}

/// The local search of `grail sp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LocalSearch {
    /// WalkSAT with the break-count heuristic and noise.
    Walksat,
    /// probSAT: a variable drawn with probability falling with its break count.
    Probsat,
}

/// Who runs survey propagation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SpTarget {
    /// The sequential reference (survey-inspired decimation finished by the local search;
    /// clauses updated one at a time in random order).
    Reference,
    /// The grail program (`sp`) on the CPU, on --threads threads: every clause's surveys updated
    /// at once, decimation and unit propagation in the program, the local search on the host.
    Cpu,
    /// The grail program (`sp`) on a GPU (`--device`), as on the CPU.
    Gpu,
}

#[derive(Debug, Subcommand)]
pub enum PtaCommand {
    /// Extract points-to constraints from textual LLVM IR (`clang -S -emit-llvm -O0 -g0 -o
    /// PROG.ll PROG.c`, with `-fno-discard-value-names` for the source's names of locals); a
    /// summary and a warning for each construct the model leaves out go to standard error.
    Extract(PtaExtractArgs),
    /// Solve points-to constraints: each pointer's set of the objects it may point to.
    Solve(PtaSolveArgs),
}

#[derive(Debug, Args)]
pub struct PtaExtractArgs {
    /// The program: textual LLVM IR (a `.ll` file).
    #[arg(value_name = "PROG.ll")]
    pub input: PathBuf,
    /// Where to write the constraints (`p = &a`, `p = q`, `p = *q`, `*p = q` lines); `-` for
    /// standard output.
    #[arg(short, long, value_name = "CONSTRAINTS")]
    pub output: PathBuf,
}

#[derive(Debug, Args)]
pub struct PtaSolveArgs {
    /// The constraints: a file as `grail pta extract` writes it.
    #[arg(value_name = "CONSTRAINTS")]
    pub input: PathBuf,
    /// Who solves them.
    #[arg(long, value_enum, default_value_t = PtaTarget::Cpu)]
    pub target: PtaTarget,
    #[command(flatten)]
    pub program: ProgramArgs,
    /// For the cpu and gpu targets: collapse cycles of copy edges (variables that end with
    /// equal sets) into one variable between epochs of rounds, the cycles the loads and stores
    /// close included; off, the program runs once to the end.
    #[arg(long, value_name = "on|off", value_parser = parse_on_off, default_value = "on", action = clap::ArgAction::Set)]
    pub collapse: bool,
    /// Check that the solution satisfies every constraint (a fixed point, so sound; exit 3 when
    /// one does not hold), by a checker that shares no code with the solvers; for the cpu and
    /// gpu targets, also that it equals the reference's solution set by set (so least).
    #[arg(long)]
    pub verify: bool,
    /// Print JSON instead of a summary.
    #[arg(long)]
    pub json: bool,
    /// Where to write the solution (one line per pointer, `name: target target ...`, sorted);
    /// `-` for standard output.
    #[arg(short, long, value_name = "POINTS_TO")]
    pub output: Option<PathBuf>,
}

/// Who solves points-to constraints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PtaTarget {
    /// The sequential worklist solver, the reference.
    Reference,
    /// The grail program (`pta`) on the CPU, on --threads threads: sparse bit-vector sets grown
    /// in place, copy edges added as loads and stores resolve, rounds of evaluation and
    /// pull-based propagation.
    Cpu,
    /// The grail program (`pta`) on a GPU (`--device`), as on the CPU.
    Gpu,
}

#[derive(Debug, Subcommand)]
pub enum MeshCommand {
    /// The Delaunay triangulation of N random points in a square, written as OUT.node and
    /// OUT.ele.
    Gen(MeshGenArgs),
    /// Check a mesh (a .node file with its .ele beside it): a valid triangulation, every edge
    /// Delaunay (exact predicates), and its quality; exits 3 when it is not valid.
    Check(MeshCheckArgs),
    /// Refine a mesh until no triangle has an angle below the bound (Delaunay refinement),
    /// writing OUT.node and OUT.ele. The input is checked first, alike for every target: a mesh
    /// must pass `grail mesh check`, a .poly domain have distinct points and segments that
    /// cross nowhere and lie on its boundary (else exit 1, nothing written).
    Refine(MeshRefineArgs),
    /// Draw a mesh as SVG or PNG (by the output's extension): every triangle outlined, those
    /// with an angle below the bound filled.
    Draw(MeshDrawArgs),
}

/// Who refines a mesh.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MeshTarget {
    /// The sequential reference refiner (Ruppert's and Chew's algorithms).
    Reference,
    /// The grail program (`dmr`) on the CPU, on --threads threads. A .poly domain is
    /// triangulated first (constrained Delaunay, holes removed); its segments must all be on the
    /// domain's boundary.
    Cpu,
    /// The grail program (`dmr`) on a GPU (`--device`), as on the CPU.
    Gpu,
}

#[derive(Debug, Args)]
pub struct MeshRefineArgs {
    /// The input: a .poly file (a domain: points, boundary segments, holes), or a mesh (IN.node
    /// with IN.ele beside it).
    #[arg(value_name = "IN")]
    pub input: PathBuf,
    /// The quality bound in degrees: no triangle keeps a smaller angle (0 to 34). Delaunay
    /// refinement is sure to end only for bounds up to about 20.7°; it ends on most meshes up to
    /// about 33°, and from about 33.5° it refines some meshes without end, until the
    /// --max-points budget stops it.
    #[arg(long, value_name = "DEG", default_value_t = 30.0)]
    pub min_angle: f64,
    /// Who refines it.
    #[arg(long, value_enum, default_value_t = MeshTarget::Reference)]
    pub target: MeshTarget,
    /// At most this many points are added: past it the refinement stops with bad triangles
    /// left, and says so (a warning on standard error, `"complete": false` in --json; the exit
    /// status stays 0). Default: 1000000 plus 100 per input point, which refinements that end
    /// stay well within, and which stops one that would not end in seconds on a small mesh.
    #[arg(long, value_name = "N")]
    pub max_points: Option<usize>,
    #[command(flatten)]
    pub program: ProgramArgs,
    /// Insert circumcenters only, never off-centers (cpu and gpu targets): more triangles for
    /// the same bound, as the refiners before off-centers made.
    #[arg(long)]
    pub circumcenters: bool,
    /// Renumber the mesh along a Hilbert curve before refining it (cpu and gpu targets): the
    /// morph paper's memory layout optimization, which puts triangles and points that are near
    /// in the plane near in memory. Default: on for the cpu target, off for gpu (where it does
    /// not pay for itself). The output keeps the input's point numbers either way.
    #[arg(long, value_name = "on|off", value_parser = parse_on_off)]
    pub spatial_order: Option<bool>,
    /// Refine the sharpest bad triangles first, in N windows of sharpness (cpu and gpu
    /// targets; 1: all at once, up to 64). More windows, fewer points for the same bound: on 10
    /// million triangles 2 made 6% fewer triangles than 1, 5 made 10% fewer. Default: 2 on a
    /// GPU (where it is also faster), 1 on the CPU (where it costs a little time).
    #[arg(long, value_name = "N")]
    pub windows: Option<u32>,
    /// Check the result with the mesh verifier (exit 3 when it fails).
    #[arg(long)]
    pub verify: bool,
    /// Print JSON instead of a summary.
    #[arg(long)]
    pub json: bool,
    /// Where to write: OUT.node and OUT.ele, numbered as the input was.
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
}

#[derive(Debug, Args)]
pub struct MeshDrawArgs {
    /// The mesh: IN.node (or IN.ele, or IN), with IN.node and IN.ele beside each other.
    #[arg(value_name = "IN")]
    pub input: PathBuf,
    /// The picture: a .svg or .png file.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Triangles with a smaller angle (degrees) are highlighted.
    #[arg(long, value_name = "DEG", default_value_t = 30.0)]
    pub min_angle: f64,
    /// The picture's longer side in pixels.
    #[arg(long, value_name = "PIXELS", default_value_t = 1200)]
    pub size: u32,
}

#[derive(Debug, Args)]
pub struct MeshGenArgs {
    /// How many random points.
    #[arg(long, value_name = "N")]
    pub points: usize,
    /// The random seed (the same seed gives the same mesh).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The side of the square the points are drawn from (1.6e-27 to 3.2e60: the coordinates
    /// the triangulation's exact arithmetic takes).
    #[arg(long, value_name = "SIDE", default_value_t = 1.0)]
    pub square: f64,
    /// Where to write: OUT.node and OUT.ele.
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
    /// Number points and triangles from 0 or 1 (Triangle's default).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(0..=1))]
    pub base: u32,
}

#[derive(Debug, Args)]
pub struct MeshCheckArgs {
    /// The mesh: IN.node (or IN.ele, or IN), with IN.node and IN.ele beside each other.
    #[arg(value_name = "IN")]
    pub input: PathBuf,
    /// The quality bound: triangles with a smaller angle (degrees) are counted as bad.
    #[arg(long, value_name = "DEG", default_value_t = 30.0)]
    pub min_angle: f64,
    /// Print JSON instead of a summary.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct DevicesArgs {
    /// Check only this device (numbered from 0).
    #[arg(long, value_name = "N")]
    pub device: Option<usize>,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The program: a .grail file, or a suite program's name (bfs, sssp_nf, ...).
    #[arg(value_name = "FILE")]
    pub program: PathBuf,
}

#[derive(Debug, Args)]
pub struct CompileArgs {
    /// The program: a .grail file, a suite algorithm (bfs, sssp, ...: the program `grail run`
    /// runs for it, its default variant unless --variant), or a suite program's name (sssp_nf, ...).
    #[arg(value_name = "ALGO|FILE")]
    pub program: PathBuf,
    /// The suite algorithm's variant (`grail run ALGO --variant help` lists them).
    #[arg(long, value_name = "NAME")]
    pub variant: Option<String>,
    /// What to write: `ast` (the parsed program as canonical grail source), `ir` (the checked
    /// program lowered to grail's IR), `c` (the C the CPU backend compiles) or `cuda` (the CUDA
    /// C++ the GPU backend compiles with NVRTC).
    /// Not needed for `--variant help`.
    #[arg(long, value_enum, value_name = "STAGE", required_unless_present = "variant")]
    pub emit: Option<Emit>,
    /// Optimizations: `none` (the default here: the program as written, unoptimized), `all`, or KEY=VALUE pairs after an optional preset,
    /// e.g. `all,coop=none` or `outline=all,np=tb+wp+fg,coop=warp,backoff=on,ldg=on,block=256`.
    #[arg(long, value_name = "CONFIG", default_value = "none")]
    pub opt: grail_ir::OptConfig,
}

/// A compiler stage `grail compile` can write out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Emit {
    /// The parsed program as canonical grail source.
    Ast,
    /// The IR: kernels as parallel phases, and the host orchestration.
    Ir,
    /// The C11 translation unit the CPU backend builds.
    C,
    /// The CUDA C++ translation unit the GPU backend compiles with NVRTC.
    Cuda,
}

#[derive(Debug, Args)]
pub struct GenArgs {
    #[command(subcommand)]
    pub kind: GenKind,
}

/// Options every generator shares.
#[derive(Debug, Args, Clone)]
pub struct GenCommon {
    /// Where to write the graph; the format follows the extension unless --format is given.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Output format (dimacs, mtx, el, wel, galois, metis, gcsr).
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<Format>,
    /// Random seed; the same seed gives the same graph on any machine and thread count.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Give edges random integer weights in [1, W].
    #[arg(long, value_name = "W")]
    pub max_weight: Option<u32>,
}

#[derive(Debug, Subcommand)]
pub enum GenKind {
    /// R-MAT / Kronecker graph (Graph500 parameters by default): 2^scale nodes, a power-law degree distribution.
    Rmat {
        /// log2 of the node count.
        #[arg(long)]
        scale: u32,
        /// Edges generated per node.
        #[arg(long, default_value_t = 16)]
        edge_factor: u32,
        /// Probability of the top-left quadrant.
        #[arg(long, default_value_t = 0.57)]
        a: f64,
        /// Probability of the top-right quadrant.
        #[arg(long, default_value_t = 0.19)]
        b: f64,
        /// Probability of the bottom-left quadrant.
        #[arg(long, default_value_t = 0.19)]
        c: f64,
        /// Keep R-MAT's node numbering instead of relabelling nodes at random.
        #[arg(long)]
        no_permute: bool,
        /// Store every edge in both directions.
        #[arg(long)]
        undirected: bool,
        #[command(flatten)]
        common: GenCommon,
    },
    /// Uniform random graph: each edge joins two nodes chosen uniformly.
    Random {
        /// Number of nodes.
        #[arg(long)]
        nodes: u32,
        /// Average out-degree (edges generated per node).
        #[arg(long, default_value_t = 16)]
        degree: u32,
        /// Store every edge in both directions.
        #[arg(long)]
        undirected: bool,
        #[command(flatten)]
        common: GenCommon,
    },
    /// 2-D grid with 4 neighbours per node, stored in both directions.
    Grid {
        /// Number of rows.
        #[arg(long)]
        rows: u32,
        /// Number of columns (default: as many as rows).
        #[arg(long)]
        cols: Option<u32>,
        #[command(flatten)]
        common: GenCommon,
    },
    /// Road-like network: planar, low degree, high diameter, Euclidean integer weights.
    Road {
        /// Number of nodes.
        #[arg(long)]
        nodes: u32,
        #[command(flatten)]
        common: GenCommon,
    },
    /// Random k-SAT formula (not a graph), written as DIMACS CNF: ratio x vars clauses of k
    /// distinct variables, each negated with probability 1/2.
    Sat {
        /// Number of variables.
        #[arg(long)]
        vars: usize,
        /// Clauses per variable (4.2 is near the 3-SAT threshold).
        #[arg(long)]
        ratio: f64,
        /// Literals per clause (3 to 6).
        #[arg(long, default_value_t = 3)]
        k: usize,
        /// Random seed; the same seed gives the same formula on any machine and thread count.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Where to write the formula (`-` for standard output).
        #[arg(short, long, value_name = "FILE")]
        output: PathBuf,
    },
}

#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// The graph to read.
    pub input: PathBuf,
    /// Where to write the result.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Input format, when the extension and contents do not tell.
    #[arg(long, value_name = "FORMAT")]
    pub from: Option<Format>,
    /// Output format, when the extension does not tell.
    #[arg(long, value_name = "FORMAT")]
    pub to: Option<Format>,
    /// Real edge weights (Matrix Market `real`, fractional or negative weights in `.wel`): `keep` them as real
    /// weights (f32; the default), or make integers of them: `round` to the nearest integer,
    /// `scale` (the smallest positive weight becomes 1, ratios kept to within rounding), or
    /// `refuse` any that is not whole; or `ignore` them (read the graph unweighted).
    #[arg(long, value_name = "keep|round|scale|refuse|ignore")]
    pub weights: Option<grail_graph::io::RealWeights>,
    /// The first node id in the file: 1 for files that number nodes from 1 (many SNAP edge
    /// lists; node `i` becomes `i - 1`).
    #[arg(long, value_name = "0|1", default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=1))]
    pub base: u8,
    #[command(flatten)]
    pub clean: CleanArgs,
    /// Renumber the nodes: by descending degree, in BFS order, or at random.
    #[arg(long, value_name = "ORDER", value_parser = ["degree", "bfs", "random"])]
    pub reorder: Option<String>,
    /// Seed for --reorder random.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Drop edge weights.
    #[arg(long)]
    pub unweighted: bool,
    /// Store the reverse CSR (every node's in-edges) in the output, so that programs that read
    /// in-edges find it ready; `.gcsr` output only. A symmetric graph with sorted adjacencies is
    /// its own reverse: the file then only says so.
    #[arg(long)]
    pub with_reverse: bool,
    /// Store, with the reverse CSR, every in-edge's out-edge id (for programs that iterate
    /// `in_edges()`); `.gcsr` output only.
    #[arg(long)]
    pub with_in_edge_ids: bool,
}

/// Edge clean-up applied while loading.
#[derive(Debug, Args, Clone, Copy)]
pub struct CleanArgs {
    /// Add the reverse of every edge.
    #[arg(long)]
    pub symmetrize: bool,
    /// Keep one edge per (u, v) pair: the lightest.
    #[arg(long)]
    pub dedup: bool,
    /// Drop edges from a node to itself.
    #[arg(long)]
    pub no_self_loops: bool,
    /// Sort each node's edges by target.
    #[arg(long)]
    pub sort: bool,
}

impl GraphArgs {
    /// The graph file (empty when not given, which only `--variant help` allows).
    pub fn path(&self) -> &std::path::Path {
        self.graph.as_deref().unwrap_or(std::path::Path::new(""))
    }
}

/// How to read an input graph.
#[derive(Debug, Args, Clone)]
pub struct GraphArgs {
    /// The graph file (dimacs .gr, .mtx, .el/.txt, .wel, Galois .gr, METIS .graph, .gcsr; any text format may be .gz).
    /// Not needed for `--variant help`.
    #[arg(long, short, value_name = "FILE", required_unless_present = "variant")]
    pub graph: Option<PathBuf>,
    /// Input format, when the extension and contents do not tell.
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<Format>,
    /// Real edge weights (Matrix Market `real`, fractional or negative weights in `.wel`): `keep` them as real
    /// weights (f32; the default), or make integers of them: `round` to the nearest integer,
    /// `scale` (the smallest positive weight becomes 1, ratios kept to within rounding), or
    /// `refuse` any that is not whole; or `ignore` them (read the graph unweighted).
    #[arg(long, value_name = "keep|round|scale|refuse|ignore")]
    pub weights: Option<grail_graph::io::RealWeights>,
    /// The first node id in the file: 1 for files that number nodes from 1 (many SNAP edge
    /// lists; node `i` becomes `i - 1`).
    #[arg(long, value_name = "0|1", default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=1))]
    pub base: u8,
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    /// The graph file.
    pub input: PathBuf,
    /// Input format, when the extension and contents do not tell.
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<Format>,
    /// Real edge weights (Matrix Market `real`, fractional or negative weights in `.wel`): `keep` them as real
    /// weights (f32; the default), or make integers of them: `round` to the nearest integer,
    /// `scale` (the smallest positive weight becomes 1, ratios kept to within rounding), or
    /// `refuse` any that is not whole; or `ignore` them (read the graph unweighted).
    #[arg(long, value_name = "keep|round|scale|refuse|ignore")]
    pub weights: Option<grail_graph::io::RealWeights>,
    /// The first node id in the file: 1 for files that number nodes from 1 (many SNAP edge
    /// lists; node `i` becomes `i - 1`).
    #[arg(long, value_name = "0|1", default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=1))]
    pub base: u8,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct PartitionArgs {
    /// The graph file (any format `grail stats` reads).
    pub input: PathBuf,
    /// How many parts (devices): from 1 to the graph's node count.
    #[arg(long, short = 'k', value_name = "K", value_parser = clap::value_parser!(u32).range(1..))]
    pub parts: u32,
    /// `metis` (METIS's k-way edge-cut minimization on the undirected simple graph, equal node
    /// counts), `ordered` (contiguous id ranges of about m/K out-edges each), `degree` (nodes
    /// sorted by degree, dealt out so every part gets a similar mix), `random` (a seeded hash of
    /// each id), `ranges` (contiguous id ranges of equal node counts) or `metis-edges` (METIS
    /// with each node weighing 1 plus its out-degree: about equal edges per part).
    #[arg(long, short, value_name = "metis|ordered|degree|random|ranges|metis-edges")]
    pub method: grail_graph::partition::Method,
    /// Seed for `random` and for METIS's own randomness; the same seed gives the same parts on
    /// any thread count.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write each node's part to FILE, one per line (line i: node i's part, METIS's partition
    /// file format); `-` is standard output (the report then goes to standard error).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Input format, when the extension and contents do not tell.
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<Format>,
    /// The first node id in the file: 1 for files that number nodes from 1.
    #[arg(long, value_name = "0|1", default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=1))]
    pub base: u8,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// What to run: a suite algorithm (bfs, sssp, cc, pr, tri, mis, mst) or a grail program
    /// file (`prog.grail`, run with --target cpu or gpu).
    #[arg(value_name = "ALGO|FILE")]
    pub program: String,
    #[command(flatten)]
    pub graph: GraphArgs,
    /// Source node for bfs and sssp (and any program with a `source` parameter): the 0-based
    /// internal id (file id minus one in 1-based formats), or `max-degree` for the node with
    /// the most out-edges (on generated power-law graphs node 0 may reach nothing).
    #[arg(long, short, value_name = "N")]
    pub source: Option<SourceNode>,
    /// What runs it: `reference` (sequential, the oracle), `cpu` (generated C on every core)
    /// or `gpu` (generated CUDA on one NVIDIA GPU). Default: `cpu`.
    #[arg(long, short, value_name = "TARGET")]
    pub target: Option<Target>,
    /// The GPU for `--target gpu`, numbered from 0 as `grail devices` lists them.
    #[arg(long, value_name = "N")]
    pub device: Option<usize>,
    /// Run on several devices, the graph partitioned among them (instead of --target):
    /// comma-separated `cpu` (a group of the CPU's cores; the threads are shared among the CPU
    /// devices), `cpu*K` (K of them), `gpu:N`, `gpu` (GPU 0) or `all` (every GPU).
    #[arg(long, value_name = "LIST", conflicts_with_all = ["target", "device"])]
    pub devices: Option<String>,
    /// How the devices of --devices cooperate: `bsp` (bulk-synchronous supersteps, ghosts merged
    /// into their owners after every kernel) or `async` (worklist loops whose body is empty or
    /// only counts rounds, such as sssp's, cc's and residual PageRank's, run without supersteps:
    /// every device works on its own worklist and sends its changes as packets as it goes; the
    /// rest as in bsp). bfs takes its label-correcting `async` variant there on graphs not of
    /// low diameter (road networks, meshes), and its supersteps on the others, where they are
    /// far faster. Default for the suite's algorithms: `async` for bfs and sssp on graphs not
    /// of low diameter when every device is a GPU, `bsp` otherwise; for program files, `bsp`.
    /// With --target gpu (one GPU), `async` runs worklist loops with an empty body whose kernel
    /// only lowers (or only raises) properties by atomics as one queue, without rounds: an item
    /// is taken as soon as it is pushed (`--opt queue=on`); other loops keep their rounds.
    #[arg(long, value_name = "bsp|async")]
    pub mode: Option<grail_runtime::multi::Mode>,
    /// Soft priorities for `--mode async` (Groute's): nodes one device pushes to another wait
    /// there, in buckets of this width of the value the loop lowers with `atomic_min` (sssp's
    /// distance, cc's label), while they are more than a bucket above the lowest waiting and the
    /// device has other work; then the lowest bucket goes first.
    #[arg(long, value_name = "DELTA", requires = "devices", value_parser = clap::value_parser!(u64).range(1..))]
    pub soft_priority: Option<u64>,
    /// How `--mode async`'s packets travel between the devices: `direct` (each straight to its
    /// device, the default) or `ring` (Groute's ring: each device sends to the next one only,
    /// which keeps its own packets and passes the others on).
    #[arg(long, value_name = "direct|ring", requires = "devices")]
    pub topology: Option<grail_runtime::multi::Topology>,
    /// Who runs `--mode async`'s loops where every device is a GPU reaching the others:
    /// `fused` (the default: Groute's fused worker kernel, one control kernel per GPU to the
    /// loop's end, exchanging through the GPUs' memory) or `host` (each GPU leaves its loop
    /// every 256 invocations and the host exchanges packets). `GRAIL_FUSED_WORKER=0|1`
    /// overrides either.
    #[arg(long, value_name = "fused|host", requires = "devices")]
    pub worker: Option<grail_runtime::multi::Worker>,
    /// Let grail use at most this much memory on each GPU, e.g. `1.5G` or `800M` (K, M, G, T:
    /// powers of 1024): a small GPU made of a large one, to run graphs larger than one device
    /// over several (--devices). Past it, allocations fail as the GPU's own out-of-memory does.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub device_memory_limit: Option<u64>,
    /// How --devices splits the graph, as `grail partition --method` (default: metis where the
    /// system's METIS is installed, else ordered).
    #[arg(long, value_name = "METHOD", requires = "devices", conflicts_with = "partition_file")]
    pub partition: Option<grail_graph::partition::Method>,
    /// Split the graph for --devices as FILE says: line i holds node i's part, 0 to the device
    /// count minus one (the partition file `grail partition -o` and METIS's `gpmetis` write), so
    /// parts made once, or on another machine, are used as they are.
    #[arg(long, value_name = "FILE", requires = "devices")]
    pub partition_file: Option<std::path::PathBuf>,
    /// Which of the algorithm's grail programs runs on a generated target (`grail run ALGO
    /// --variant help` lists them); each algorithm has a default.
    #[arg(long, value_name = "NAME")]
    pub variant: Option<String>,
    /// A program parameter, `name=value` (repeatable): `--param delta=512`.
    #[arg(long = "param", value_name = "NAME=VALUE", value_parser = parse_param)]
    pub params: Vec<(String, String)>,
    /// An input collection of a program file (`input name;`), read from FILE as `--output`
    /// writes collections: one element per line, its fields separated by spaces (repeatable).
    #[arg(long = "input", value_name = "NAME=FILE", value_parser = parse_param)]
    pub inputs: Vec<(String, String)>,
    /// Write the result: line i holds node i's value (`inf` where there is none); for mst one `u v w` line per edge.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Print a JSON summary instead of text.
    #[arg(long)]
    pub json: bool,
    /// Check the result with the algorithm's verifier.
    #[arg(long)]
    pub verify: bool,
    /// Report the generated code's work: per kernel, invocations, items processed, pushes, time
    /// (over several devices, GPU parts then time their kernels: a few microseconds a superstep).
    #[arg(long)]
    pub stats: bool,
    /// PageRank: stop when the L1 change of an iteration falls below this.
    #[arg(long, value_name = "EPS")]
    pub pr_tolerance: Option<f64>,
    /// PageRank: stop after this many iterations at most.
    #[arg(long, value_name = "N")]
    pub pr_max_iterations: Option<u32>,
    /// Optimizations: `tuned` (the default: the tuned configuration for this input, else every
    /// optimization), `none` (unoptimized), `all`, or KEY=VALUE pairs after an optional preset,
    /// e.g. `all,coop=none` or `outline=all,np=tb+wp+fg,coop=warp,backoff=on,ldg=on,block=256`.
    #[arg(long, value_name = "CONFIG", default_value = "tuned")]
    pub opt: grail_algos::OptChoice,
    /// For `pr`: draw the convergence (the ranks' L1 change per iteration) as a chart, an .svg
    /// file.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// On the GPU, check what the CPU target always checks: integer division or remainder by zero
    /// (or of the type's minimum by -1) stops the run with exit status 70, and a pushed item that
    /// is not a node of the graph with an error. Slower; the CPU's runs are checked anyway.
    #[arg(long)]
    pub checks: bool,
    /// Stop the run after this many seconds (a program that never ends, on either target): a
    /// message naming the kernel it was in, and exit status 124.
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,
}

#[derive(Debug, Args)]
pub struct TuneArgs {
    /// What to tune: a suite algorithm (bfs, sssp, cc, pr, tri, mis, mst; its default variant
    /// unless --variant), a grail program file, or a suite program's name (`traverse`).
    #[arg(value_name = "ALGO|FILE")]
    pub program: String,
    #[command(flatten)]
    pub graph: GraphArgs,
    /// The target to tune for: `cpu` (the default) or `gpu`.
    #[arg(long, short, value_name = "TARGET")]
    pub target: Option<Target>,
    /// The GPU for `--target gpu`, numbered from 0.
    #[arg(long, value_name = "N")]
    pub device: Option<usize>,
    /// Stop starting new measurements after this many seconds (compiling included); the
    /// unoptimized configuration is always measured.
    #[arg(long, value_name = "SECONDS", default_value = "60", value_parser = parse_budget, allow_negative_numbers = true)]
    pub budget: std::time::Duration,
    /// Timed runs of each candidate that is not pruned (its best time counts), after one
    /// untimed run that checks its result and warms up.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,
    /// The suite algorithm's variant (`grail run ALGO --variant help` lists them).
    #[arg(long, value_name = "NAME")]
    pub variant: Option<String>,
    /// A program parameter, `name=value` (repeatable).
    #[arg(long = "param", value_name = "NAME=VALUE", value_parser = parse_param)]
    pub params: Vec<(String, String)>,
    /// Source node for bfs and sssp (and any program with a `source` parameter).
    #[arg(long, short, value_name = "N")]
    pub source: Option<u64>,
    /// Measure and report, but do not record the winner.
    #[arg(long)]
    pub dry_run: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// `on` or `off` (also `true`/`false`, `yes`/`no`).
fn parse_on_off(text: &str) -> Result<bool, String> {
    match text {
        "on" | "true" | "yes" => Ok(true),
        "off" | "false" | "no" => Ok(false),
        _ => Err(format!("expected on or off, not `{text}`")),
    }
}

/// A time budget in seconds: a positive number.
fn parse_budget(text: &str) -> Result<std::time::Duration, String> {
    let seconds: f64 = text.trim().parse().map_err(|_| format!("expected a number of seconds, got '{text}'"))?;
    if !(seconds > 0.0 && seconds <= 1e7) {
        return Err(format!("the budget must be a positive number of seconds (at most 1e7), got '{text}'"));
    }
    Ok(std::time::Duration::from_secs_f64(seconds))
}

/// Splits `name=value`.
/// A size in bytes: a number with an optional K, M, G or T (powers of 1024; a trailing `B` or
/// `iB` is allowed).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim().trim_end_matches(['B', 'b']).trim_end_matches('i');
    let (number, unit) = match trimmed.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&trimmed[..i], c.to_ascii_uppercase()),
        _ => (trimmed, ' '),
    };
    let scale: u64 = match unit {
        ' ' => 1,
        'K' => 1 << 10,
        'M' => 1 << 20,
        'G' => 1 << 30,
        'T' => 1 << 40,
        _ => return Err(format!("`{text}` is not a size such as 1.5G or 800M (units K, M, G, T)")),
    };
    let value: f64 = number.trim().parse().map_err(|_| format!("`{text}` is not a size such as 1.5G or 800M"))?;
    if !(value > 0.0 && value.is_finite()) {
        return Err(format!("`{text}`: a size must be positive"));
    }
    Ok((value * scale as f64) as u64)
}

fn parse_param(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => Ok((name.trim().to_string(), value.trim().to_string())),
        _ => Err(format!("expected NAME=VALUE, got '{text}'")),
    }
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// log2 of the R-MAT graph's node count; the other graphs are sized to match.
    #[arg(long, default_value_t = 16)]
    pub scale: u32,
    /// What runs the algorithms: `cpu` or `gpu` (the suite's grail programs, compiled) or
    /// `reference`.
    #[arg(long, short, default_value = "cpu", value_name = "TARGET")]
    pub target: Target,
    /// The GPU for `--target gpu`, numbered from 0.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub device: usize,
    /// Optimizations: `tuned` (the default: the tuned configuration for this input, else every
    /// optimization), `none` (unoptimized), `all`, or KEY=VALUE pairs after an optional preset,
    /// e.g. `all,coop=none` or `outline=all,np=tb+wp+fg,coop=warp,backoff=on,ldg=on,block=256`.
    #[arg(long, value_name = "CONFIG", default_value = "tuned")]
    pub opt: grail_algos::OptChoice,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Run the algorithm suite on generated graphs (GAP-style kron, urand, grid, road) or graph
    /// files and print a table: best time, GTEPS, kernel invocations, verification.
    Suite {
        /// Graphs as KIND:SCALE (kron, urand, grid, road; 2^SCALE nodes, generated) or graph files
        /// (any format `grail run --graph` reads; labelled by the file name), comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "kron:18,urand:20,grid:20,road:20")]
        graphs: Vec<String>,
        /// The first node id in the graph files of --graphs: 1 for files that number nodes from 1
        /// (many SNAP edge lists), as `grail run --base` takes it.
        #[arg(long, value_name = "0|1", default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=1))]
        base: u8,
        /// Algorithms to run, comma-separated (default: all).
        #[arg(long, value_delimiter = ',', value_name = "ALGO")]
        algorithms: Vec<Algorithm>,
        /// Run every variant of each algorithm, not only its default.
        #[arg(long)]
        all_variants: bool,
        /// Timed runs per algorithm and graph (the best is reported).
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
        repeat: u32,
        /// Skip checking each result with its verifier.
        #[arg(long)]
        no_verify: bool,
        /// Targets to run each algorithm on, comma-separated: cpu, gpu.
        #[arg(long, value_delimiter = ',', default_value = "cpu", value_name = "TARGET")]
        targets: Vec<Target>,
        /// The GPU of the gpu target, numbered from 0.
        #[arg(long, value_name = "N", default_value_t = 0)]
        device: usize,
        /// Optimizations: `tuned` (the default: the tuned configuration for this input, else every
        /// optimization), `none` (unoptimized), `all`, or KEY=VALUE pairs after an optional preset,
        /// e.g. `all,coop=none` or `outline=all,np=tb+wp+fg,coop=warp,backoff=on,ldg=on,block=256`.
        #[arg(long, value_name = "CONFIG", default_value = "tuned")]
        opt: grail_algos::OptChoice,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Also draw the table as a chart (an .svg file).
        #[arg(long, value_name = "FILE.svg")]
        plot: Option<PathBuf>,
    },
    /// The optimizations' effect (IrGL's Figures 8 and 9): per algorithm and graph, kernel and
    /// end-to-end time unoptimized, with each optimization alone, with all, and tuned, and the
    /// speedups over unoptimized; plus IrGL's traversal microbenchmark.
    Opts {
        /// Graphs as KIND:SCALE (kron, urand, grid, road; 2^SCALE nodes, generated) or graph files
        /// (any format `grail run --graph` reads; labelled by the file name), comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "kron:18,urand:18,grid:18,road:18")]
        graphs: Vec<String>,
        /// The first node id in the graph files of --graphs: 1 for files that number nodes from 1
        /// (many SNAP edge lists), as `grail run --base` takes it.
        #[arg(long, value_name = "0|1", default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=1))]
        base: u8,
        /// Algorithms to run, comma-separated (default: all, each its default variant; `traverse`
        /// is the microbenchmark).
        #[arg(long, value_delimiter = ',', value_name = "ALGO")]
        algorithms: Vec<String>,
        /// Timed runs per configuration (the best is reported), after one untimed run that
        /// verifies the result and warms up.
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
        repeat: u32,
        /// Targets, comma-separated: cpu, gpu.
        #[arg(long, value_delimiter = ',', default_value = "cpu", value_name = "TARGET")]
        targets: Vec<Target>,
        /// The GPU of the gpu target, numbered from 0.
        #[arg(long, value_name = "N", default_value_t = 0)]
        device: usize,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Also draw the table as a chart (an .svg file).
        #[arg(long, value_name = "FILE.svg")]
        plot: Option<PathBuf>,
    },
    /// One device beside several (`grail run --devices`) on generated graphs or graph files: per algorithm,
    /// the one-device baseline and every device list with every partition method and mode,
    /// best of --repeat, verified; whole run time, the algorithm's own time, speedup, the share
    /// spent synchronizing, the edges cut.
    Multi {
        /// Graphs as KIND:SCALE (kron, urand, grid, road; 2^SCALE nodes, generated) or graph files
        /// (any format `grail run --graph` reads; labelled by the file name), comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "road:18,kron:16")]
        graphs: Vec<String>,
        /// The first node id in the graph files of --graphs: 1 for files that number nodes from 1
        /// (many SNAP edge lists), as `grail run --base` takes it.
        #[arg(long, value_name = "0|1", default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=1))]
        base: u8,
        /// Algorithms, comma-separated.
        #[arg(long, value_delimiter = ',', value_name = "ALGO", default_value = "bfs,sssp,cc,pr")]
        algorithms: Vec<Algorithm>,
        /// Variants to run partitioned, comma-separated (`grail run --variant` names, e.g.
        /// `do,wl,pull32,push`): each algorithm's variants of these names, side by side. Default:
        /// each algorithm's partitioned default (as `grail run --devices` picks it).
        #[arg(long, value_delimiter = ',', value_name = "NAMES")]
        variants: Vec<String>,
        /// A device list as `grail run --devices` takes it (repeatable): `gpu:0,gpu:1`, `all`,
        /// `cpu*4`, `gpu:0,cpu`.
        #[arg(long = "devices", value_name = "LIST", default_value = "cpu*2")]
        devices: Vec<String>,
        /// Partition methods, comma-separated (as `grail partition --method`).
        #[arg(long = "partition", value_delimiter = ',', value_name = "METHOD", default_value = "ordered")]
        partitions: Vec<grail_graph::partition::Method>,
        /// Modes, comma-separated: `bsp` (supersteps) and `async` (worklist loops without
        /// supersteps; an algorithm without such a loop gets no async row).
        #[arg(long = "modes", value_delimiter = ',', value_name = "MODE", default_value = "bsp")]
        modes: Vec<grail_runtime::multi::Mode>,
        /// How the asynchronous rows' packets travel between the devices: `direct` or `ring`
        /// (as `grail run --topology`; their mode reads `async-ring`).
        #[arg(long, value_name = "direct|ring", default_value = "direct")]
        topology: grail_runtime::multi::Topology,
        /// Who runs the asynchronous rows' loops on GPUs, comma-separated: `fused` and `host`
        /// (as `grail run --worker`; a `host` row's mode reads `async-host`).
        #[arg(long, value_delimiter = ',', value_name = "WORKER", default_value = "fused")]
        workers: Vec<grail_runtime::multi::Worker>,
        /// The one device to compare with: `cpu` (every core) or `gpu` (--device).
        #[arg(long, value_name = "TARGET", default_value = "cpu")]
        baseline: Target,
        /// The GPU of a `gpu` baseline.
        #[arg(long, value_name = "N", default_value_t = 0)]
        device: usize,
        /// Timed runs per row (the best is reported).
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
        repeat: u32,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Also draw the speedups as a chart (an .svg file): per graph and algorithm, a bar for
        /// each device list (with its split and mode) over the best one-device time.
        #[arg(long, value_name = "FILE.svg")]
        plot: Option<PathBuf>,
        /// Optimizations of every run, one device and several, as `grail run --opt` takes them
        /// (`tuned`, `none`, `all` or KEY=VALUE pairs, e.g. `all,grid=1`).
        #[arg(long, value_name = "CONFIG", default_value = "tuned")]
        opt: grail_algos::OptChoice,
    },
    /// Time preparing the suite's input (undirected simple graph, degree order, reverse CSR) step
    /// by step on generated graphs, and the first run of a file: load plus prep.
    Prep {
        /// Graphs as KIND:SCALE (kron, urand, grid, road; 2^SCALE nodes), comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "kron:20,urand:20,road:20")]
        graphs: Vec<String>,
        /// Timed runs per step (the best is reported).
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
        repeat: u32,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Time each generator at one size: drawing the edges, and the whole graph (edges + build).
    Gen {
        /// log2 of the node count (grid: the nearest square).
        #[arg(long, default_value_t = 20)]
        scale: u32,
        /// Timed runs per generator (the best is reported).
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
        repeat: u32,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Time loading one R-MAT graph from every format grail reads.
    Load {
        /// log2 of the node count of the R-MAT graph (stored undirected).
        #[arg(long, default_value_t = 20)]
        scale: u32,
        /// Timed loads per format (the best is reported).
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
        repeat: u32,
        /// Folder for the generated files (default: a temporary folder, removed afterwards).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_read_with_binary_units() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("800M"), Ok(800 << 20));
        assert_eq!(parse_size("1.5G"), Ok(3 << 29));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("64k"), Ok(64 << 10));
        for bad in ["", "lots", "-1G", "0", "1X"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }
}
