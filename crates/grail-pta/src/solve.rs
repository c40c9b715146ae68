//! The sequential reference solver.

use std::collections::{HashSet, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

use crate::{Constraint, Constraints, PointsTo, VarId};

/// Solves `constraints`: the least sets that satisfy every constraint (Andersen's analysis).
///
/// This is the reference the other solvers are verified against, so it is the textbook
/// worklist algorithm with hash sets and nothing clever (no cycle collapsing, no ordering
/// heuristics). Copy constraints are edges `q -> p` of a graph; each variable keeps its set and
/// the part of it not yet sent along its edges (the difference), and a variable is on the
/// worklist while that part is not empty. When a variable `q` learns a new target `a`, each load
/// `p = *q` adds the edge `a -> p` and each store `*q = r` the edge `r -> a`; a new edge sends
/// its source's whole set once, later growth travels as differences. So each target crosses
/// each edge about once: the work is the sum over the edges of their sources' final sets, which
/// for a hundred thousand constraints of program-like shape is a second or two. Without cycle
/// collapsing, a large cycle of copies with large sets costs in proportion.
pub fn solve_sequential(constraints: &Constraints) -> PointsTo {
    let n = constraints.num_vars();
    let mut solver = Solver {
        sets: vec![IdSet::default(); n],
        pending: vec![Vec::new(); n],
        successors: vec![Vec::new(); n],
        edges: IdSet::default(),
        worklist: VecDeque::new(),
        queued: vec![false; n],
    };
    // loads[q]: the `p` of each `p = *q`; stores[p]: the `q` of each `*p = q`.
    let mut loads: Vec<Vec<VarId>> = vec![Vec::new(); n];
    let mut stores: Vec<Vec<VarId>> = vec![Vec::new(); n];
    for &c in constraints.constraints() {
        match c {
            Constraint::AddressOf { dst, src } => solver.insert(dst, src),
            Constraint::Copy { dst, src } => solver.add_edge(src, dst),
            Constraint::Load { dst, src } => loads[src as usize].push(dst),
            Constraint::Store { dst, src } => stores[dst as usize].push(src),
        }
    }
    while let Some(v) = solver.worklist.pop_front() {
        solver.queued[v as usize] = false;
        let new = std::mem::take(&mut solver.pending[v as usize]);
        for &a in &new {
            for &p in &loads[v as usize] {
                solver.add_edge(a, p);
            }
            for &q in &stores[v as usize] {
                solver.add_edge(q, a);
            }
        }
        let mut i = 0;
        while i < solver.successors[v as usize].len() {
            let w = solver.successors[v as usize][i];
            for &a in &new {
                solver.insert(w, a);
            }
            i += 1;
        }
    }
    PointsTo::from_sets(solver.sets.into_iter().map(|s| s.into_iter().collect()).collect())
}

/// A multiplicative hash of the ids (the one rustc uses): the standard hasher resists
/// adversarial keys, which ids are not, at several times the cost.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

type IdSet<T> = HashSet<T, BuildHasherDefault<IdHasher>>;

struct Solver {
    /// Each variable's set so far.
    sets: Vec<IdSet<VarId>>,
    /// The part of each set not yet sent along the variable's edges (and loads and stores).
    pending: Vec<Vec<VarId>>,
    /// Copy edges `v -> w`: the set of `w` includes the set of `v`.
    successors: Vec<Vec<VarId>>,
    edges: IdSet<(VarId, VarId)>,
    worklist: VecDeque<VarId>,
    queued: Vec<bool>,
}

impl Solver {
    /// Adds `target` to the set of `v`.
    fn insert(&mut self, v: VarId, target: VarId) {
        if self.sets[v as usize].insert(target) {
            self.pending[v as usize].push(target);
            if !self.queued[v as usize] {
                self.queued[v as usize] = true;
                self.worklist.push_back(v);
            }
        }
    }

    /// Adds the edge `from -> to` and, if it is new, sends the whole set of `from` along it
    /// (what `from` learns later travels with its differences).
    fn add_edge(&mut self, from: VarId, to: VarId) {
        if from == to || !self.edges.insert((from, to)) {
            return;
        }
        self.successors[from as usize].push(to);
        let known: Vec<VarId> = self.sets[from as usize].iter().copied().collect();
        for target in known {
            self.insert(to, target);
        }
    }
}
