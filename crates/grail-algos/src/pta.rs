//! Andersen's points-to analysis by the grail program `programs/pta.grail`, on the CPU or a
//! GPU: the constraints become a graph (a node per variable, an edge per constraint weighing its
//! kind), the program grows each variable's set as sparse bit vectors and adds the copy edges
//! loads and stores imply, and the sets come back from its output collection. The sequential
//! reference is [`grail_pta::solve_sequential`]; results are compared with it set by set.

use std::time::Duration;

use grail_graph::{Csr, Graph};
use grail_ir::OptConfig;
use grail_pta::{Constraint, Constraints, PointsTo, VarId};
use grail_runtime::cpu::{RunOutput, Value};
use grail_runtime::gpu::GpuTimes;

use crate::Target;
use crate::error::{AlgoError, Result};

/// Where to run.
#[derive(Debug, Clone)]
pub struct Options {
    /// `Cpu` or `Gpu`.
    pub target: Target,
    pub device: usize,
    /// CPU threads (0: one per core).
    pub threads: usize,
    pub opt: OptConfig,
}

impl Default for Options {
    fn default() -> Self {
        Options { target: Target::Cpu, device: 0, threads: 0, opt: OptConfig::all() }
    }
}

/// The solution and what the run took.
#[derive(Debug, Clone)]
pub struct Solved {
    pub points_to: PointsTo,
    /// Rounds of evaluation, propagation and merging.
    pub rounds: u32,
    /// The program's run.
    pub time: Duration,
    /// On a GPU: its kernels' share, and the copies.
    pub gpu_times: Option<GpuTimes>,
}

/// The kinds of constraint, as the program reads them from the edge weights.
const COPY: u32 = 0;
const LOAD: u32 = 1;
const STORE: u32 = 2;
const ADDRESS_OF: u32 = 3;

/// Solves `constraints` with the grail program.
pub fn solve(constraints: &Constraints, options: &Options) -> Result<Solved> {
    let n = constraints.num_vars();
    if n == 0 {
        return Ok(Solved {
            points_to: PointsTo::from_sets(Vec::new()),
            rounds: 0,
            time: Duration::ZERO,
            gpu_times: None,
        });
    }
    if n >= u32::MAX as usize / 2 {
        return Err(AlgoError::Usage(format!("{n} variables: the grail solver handles fewer than 2^31")));
    }
    let graph = constraint_graph(constraints)?;
    let module = crate::suite::optimized_program("pta", &options.opt)?;
    let params: Vec<Option<Value>> = vec![None; module.params.len()];
    let (output, gpu_times) =
        crate::suite::run_module(module, options.target, options.device, options.threads, &graph, &params, &[])?;
    let time = output.stats.elapsed;
    let (points_to, rounds) = points_to_of(n, output)?;
    Ok(Solved { points_to, rounds, time, gpu_times })
}

/// A node per variable and an edge `p -> q` per constraint over `p` and `q`, weighing its kind.
fn constraint_graph(constraints: &Constraints) -> Result<Graph> {
    let n = constraints.num_vars();
    let edge = |c: &Constraint| match *c {
        Constraint::Copy { dst, src } => (dst, src, COPY),
        Constraint::Load { dst, src } => (dst, src, LOAD),
        Constraint::Store { dst, src } => (dst, src, STORE),
        Constraint::AddressOf { dst, src } => (dst, src, ADDRESS_OF),
    };
    let mut offsets = vec![0u64; n + 1];
    for c in constraints.constraints() {
        offsets[edge(c).0 as usize + 1] += 1;
    }
    for v in 0..n {
        offsets[v + 1] += offsets[v];
    }
    let m = constraints.constraints().len();
    let mut next: Vec<u64> = offsets[..n].to_vec();
    let (mut targets, mut weights) = (vec![0u32; m], vec![0u32; m]);
    for c in constraints.constraints() {
        let (p, q, kind) = edge(c);
        let at = next[p as usize] as usize;
        targets[at] = q;
        weights[at] = kind;
        next[p as usize] += 1;
    }
    let csr = Csr::from_parts(offsets, targets, Some(weights))
        .map_err(|e| AlgoError::Internal(format!("the constraint graph: {e}")))?;
    Ok(Graph::from_csr(csr))
}

/// Each variable's set from the program's blocks (owner, base, bits, delta, next), and the rounds.
fn points_to_of(n: usize, output: RunOutput) -> Result<(PointsTo, u32)> {
    let [blocks] = output.collections.as_slice() else {
        return Err(AlgoError::Internal("pta's output is not its sets".into()));
    };
    let rounds = match output.result {
        Some(Value::U32(rounds)) => rounds,
        _ => return Err(AlgoError::Internal("pta's main did not return its rounds".into())),
    };
    let mut sets: Vec<Vec<VarId>> = vec![Vec::new(); n];
    for row in 0..blocks.len() {
        let (owner, base, bits) = (blocks.u32(row, 0) as usize, blocks.u32(row, 1), blocks.row(row)[2]);
        if bits == 0 {
            continue; // The sentinel.
        }
        let set = sets
            .get_mut(owner)
            .ok_or_else(|| AlgoError::Internal(format!("pta wrote a block for variable {owner} of {n}")))?;
        for bit in 0..64 {
            if bits >> bit & 1 == 1 {
                let target = base as u64 * 64 + bit;
                if target >= n as u64 {
                    return Err(AlgoError::Internal(format!("pta put {target} in a set: there are {n} variables")));
                }
                set.push(target as VarId);
            }
        }
    }
    Ok((PointsTo::from_sets(sets), rounds))
}
