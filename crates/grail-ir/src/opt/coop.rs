//! Cooperative conversion (IrGL §4.2): pushes aggregated across a warp or a thread block, so a
//! warp (or block) makes one atomic reservation on the worklist instead of one per thread.
//!
//! Warp-level aggregation is always correct: the threads of a warp that reach a push together
//! reserve their slots with one atomic, whatever the branches around it. Block-level aggregation
//! contains a barrier, so every thread of the block must reach it: it may only stand at a
//! *focal point* (§4.2.2), a statement that is iteratively control-dependent on uniform branches
//! only. [`focal_points`](Cfg::focal_points) finds them on a phase's control dependence graph
//! ([`Cfg`]), where the phase's own loop and the scheduled nested loops count as uniform (the
//! schedulers' loops are uniform by construction) along with the branches marked `uniform`.
//!
//! A push usually sits under a non-uniform `if` (BFS pushes only unvisited heads), so, as in
//! IrGL's Listing 9, the push itself is not moved to a focal point: it records its item, and
//! the block-aggregated push stands at the focal point that ends the iteration of the uniform
//! loop around it. That is legal when the push runs at most once per iteration of that loop:
//! the statement of the loop's body that contains it (its *anchor*) is a focal point, and no
//! sequential loop or lock lies between the anchor and the push. The CUDA target emits the
//! block-level push in the executors whose rounds every thread of a block makes together
//! (thread block and fine-grained); so a site is given `Block` only inside a nested loop whose
//! schedule has one of them, and the warp executor and serial remainder push it by warp.

use crate::ir::*;
use crate::opt::OptConfig;

pub(crate) fn run(module: &mut Module, config: &OptConfig, notes: &mut Vec<String>) {
    if config.coop == Aggregation::None {
        return;
    }
    for kernel in &mut module.kernels {
        if kernel.push_sites.is_empty() {
            continue;
        }
        let mut level = vec![Aggregation::Warp; kernel.push_sites.len()];
        if config.coop == Aggregation::Block {
            for (p, stmt) in kernel.body.block.iter().enumerate() {
                let Stmt::ForAll(phase) = stmt else { continue };
                let cfg = Cfg::of_phase(phase);
                let focal = cfg.focal_points();
                for (node, site) in cfg.push_sites() {
                    match cfg.anchors[node] {
                        Some(anchor) if focal[anchor] => level[site.index()] = Aggregation::Block,
                        Some(_) => notes.push(format!(
                            "kernel `{}`, phase {p}: push #{} is under a statement that depends on a non-uniform \
                             branch: aggregated by warp, not by block",
                            kernel.name, site.0
                        )),
                        None => notes.push(format!(
                            "kernel `{}`, phase {p}: push #{} is not in a nested loop run by the thread-block or \
                             fine-grained scheduler (or is inside a sequential loop or lock there): aggregated by \
                             warp, not by block",
                            kernel.name, site.0
                        )),
                    }
                }
            }
        }
        kernel.push_sites = level;
    }
}

/// What a node of a phase's control-flow graph is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    Start,
    Exit,
    /// A statement that does not branch.
    Plain,
    /// A push statement, with its site.
    Push(PushSite),
    /// A branch (`if`, or the head of a loop), and whether every thread decides it alike.
    Branch {
        uniform: bool,
    },
}

/// The control-flow graph of one kernel phase, one node per statement (a loop's node is its
/// head), with Start and Exit. The phase's loop is the first branch: it is uniform, since the
/// code around every phase makes its trip count the same in every thread of a block.
#[derive(Debug, Clone)]
pub struct Cfg {
    pub kinds: Vec<NodeKind>,
    pub succs: Vec<Vec<usize>>,
    /// For each node, its *anchor*: the statement of the body of a nested loop run by the
    /// thread-block or fine-grained scheduler that contains it (itself, for such a statement),
    /// with no sequential loop or lock in between; `None` elsewhere.
    pub anchors: Vec<Option<usize>>,
}

pub const START: usize = 0;
pub const EXIT: usize = 1;

impl Cfg {
    fn new() -> Cfg {
        Cfg {
            kinds: vec![NodeKind::Start, NodeKind::Exit],
            succs: vec![Vec::new(), Vec::new()],
            anchors: vec![None; 2],
        }
    }

    pub fn add(&mut self, kind: NodeKind) -> usize {
        self.kinds.push(kind);
        self.succs.push(Vec::new());
        self.anchors.push(None);
        self.kinds.len() - 1
    }

    pub fn edge(&mut self, from: usize, to: usize) {
        if !self.succs[from].contains(&to) {
            self.succs[from].push(to);
        }
    }

    /// The graph of a phase: Start → phase loop head → body → back to the head; head → Exit.
    pub fn of_phase(phase: &ForAll) -> Cfg {
        let mut cfg = Cfg::new();
        let head = cfg.add(NodeKind::Branch { uniform: true });
        cfg.edge(START, head);
        cfg.edge(head, EXIT);
        let loops = Loop { head, exit: EXIT };
        let ends = cfg.block(&phase.body, vec![head], loops, Anchor::None);
        for end in ends {
            cfg.edge(end, head);
        }
        cfg
    }

    /// Adds a block's statements after the nodes `preds`; returns the nodes control leaves it from
    /// (falling through its end).
    fn block(&mut self, block: &Block, mut preds: Vec<usize>, loops: Loop, anchor: Anchor) -> Vec<usize> {
        for stmt in block {
            preds = self.stmt(stmt, preds, loops, anchor);
        }
        preds
    }

    fn stmt(&mut self, stmt: &Stmt, preds: Vec<usize>, loops: Loop, anchor: Anchor) -> Vec<usize> {
        let node = self.add(match stmt {
            Stmt::Push { site, .. } => NodeKind::Push(*site),
            Stmt::If { uniform, .. } | Stmt::While { uniform, .. } => NodeKind::Branch { uniform: *uniform },
            Stmt::ForAll(forall) => NodeKind::Branch { uniform: forall.schedule != Schedule::SERIAL },
            Stmt::For { .. } | Stmt::ForEach { .. } => NodeKind::Branch { uniform: false },
            Stmt::Lock { .. } => NodeKind::Branch { uniform: false },
            _ => NodeKind::Plain,
        });
        for p in preds {
            self.edge(p, node);
        }
        let inside = match anchor {
            Anchor::None => Anchor::None,
            Anchor::Body => Anchor::In(node),
            Anchor::In(a) => Anchor::In(a),
        };
        if let Anchor::In(a) = inside {
            self.anchors[node] = Some(a);
        }
        match stmt {
            Stmt::If { then, otherwise, .. } => {
                let mut ends = self.block(then, vec![node], loops, inside);
                ends.extend(self.block(otherwise, vec![node], loops, inside));
                ends
            }
            Stmt::Lock { body, otherwise, .. } => {
                let mut ends = self.block(body, vec![node], loops, Anchor::None);
                ends.extend(self.block(otherwise, vec![node], loops, Anchor::None));
                ends
            }
            Stmt::While { body, .. } | Stmt::For { body, .. } | Stmt::ForEach { body, .. } => {
                // The loop's exit: a fresh node after it, so `break` has somewhere to go.
                let after = self.add(NodeKind::Plain);
                self.edge(node, after);
                let ends = self.block(body, vec![node], Loop { head: node, exit: after }, Anchor::None);
                for end in ends {
                    self.edge(end, node);
                }
                vec![after]
            }
            Stmt::ForAll(forall) => {
                // A nested parallel loop: `continue` ends an iteration (back to its head).
                let after = self.add(NodeKind::Plain);
                self.edge(node, after);
                let schedule = forall.schedule;
                let rounds = if schedule.thread_block || schedule.fine_grained { Anchor::Body } else { Anchor::None };
                let ends = self.block(&forall.body, vec![node], Loop { head: node, exit: after }, rounds);
                for end in ends {
                    self.edge(end, node);
                }
                vec![after]
            }
            Stmt::Break => {
                self.edge(node, loops.exit);
                Vec::new()
            }
            Stmt::Continue => {
                self.edge(node, loops.head);
                Vec::new()
            }
            _ => vec![node],
        }
    }

    /// The push statements: node and site.
    pub fn push_sites(&self) -> impl Iterator<Item = (usize, PushSite)> + '_ {
        self.kinds.iter().enumerate().filter_map(|(n, k)| match k {
            NodeKind::Push(site) => Some((n, *site)),
            _ => None,
        })
    }

    /// Each node's immediate post-dominator (Exit's is itself); nodes that cannot reach Exit
    /// get none.
    pub fn post_dominators(&self) -> Vec<Option<usize>> {
        let n = self.kinds.len();
        // The iterative set algorithm on bit vectors: pdom(Exit) = {Exit}, pdom(v) = {v} ∪
        // ⋂ pdom(successors).
        let full = vec![true; n];
        let mut pdom: Vec<Vec<bool>> = vec![full; n];
        pdom[EXIT] = (0..n).map(|i| i == EXIT).collect();
        let mut changed = true;
        while changed {
            changed = false;
            for v in 0..n {
                if v == EXIT {
                    continue;
                }
                let mut set = vec![true; n];
                if self.succs[v].is_empty() {
                    set = vec![false; n];
                }
                for &s in &self.succs[v] {
                    for (x, bit) in set.iter_mut().enumerate() {
                        *bit &= pdom[s][x];
                    }
                }
                set[v] = true;
                if set != pdom[v] {
                    pdom[v] = set;
                    changed = true;
                }
            }
        }
        // The immediate post-dominator: the strict post-dominator that every other strict one
        // post-dominates.
        (0..n)
            .map(|v| {
                if v == EXIT {
                    return Some(EXIT);
                }
                let strict: Vec<usize> = (0..n).filter(|&d| d != v && pdom[v][d]).collect();
                strict.iter().copied().find(|&d| strict.iter().all(|&o| o == d || pdom[d][o]))
            })
            .collect()
    }

    /// The control dependence graph: for each node, the branches it is control-dependent on
    /// (Ferrante, Ottenstein and Warren): for every edge a → b where b does not post-dominate
    /// a, every node on the post-dominator tree path from b up to, not including, ipdom(a)
    /// depends on a.
    pub fn control_dependences(&self) -> Vec<Vec<usize>> {
        let ipdom = self.post_dominators();
        let n = self.kinds.len();
        let mut deps = vec![Vec::new(); n];
        for a in 0..n {
            for &b in &self.succs[a] {
                let stop = ipdom[a];
                let mut runner = Some(b);
                while let Some(r) = runner {
                    if Some(r) == stop {
                        break;
                    }
                    if !deps[r].contains(&a) {
                        deps[r].push(a);
                    }
                    let up = ipdom[r];
                    runner = if up == Some(r) { None } else { up };
                }
            }
        }
        deps
    }

    /// The focal points: nodes iteratively control-dependent only on uniform branches, other
    /// than possibly themselves.
    pub fn focal_points(&self) -> Vec<bool> {
        let deps = self.control_dependences();
        (0..self.kinds.len())
            .map(|v| {
                // Every branch v depends on, transitively, except v itself.
                let mut seen = vec![false; self.kinds.len()];
                let mut pending: Vec<usize> = deps[v].clone();
                while let Some(d) = pending.pop() {
                    if std::mem::replace(&mut seen[d], true) {
                        continue;
                    }
                    if d != v && !matches!(self.kinds[d], NodeKind::Branch { uniform: true }) {
                        return false;
                    }
                    pending.extend(deps[d].iter().copied());
                }
                true
            })
            .collect()
    }
}

/// Where the statements being added stand with respect to an anchor ([`Cfg::anchors`]).
#[derive(Clone, Copy)]
enum Anchor {
    /// Not inside a loop whose iterations a whole block runs together (or inside a sequential
    /// loop or a lock within one).
    None,
    /// Directly in the body of such a loop: each statement is its own anchor.
    Body,
    /// Inside anchor statement `usize`.
    In(usize),
}

/// The innermost loop around a statement: where `continue` and `break` go.
#[derive(Clone, Copy)]
struct Loop {
    head: usize,
    exit: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// IrGL's Figure 6: BFS's operator (Listing 3) as a control-flow graph: node 2 is the outer
    /// `ForAll` (uniform), 3 the inner `ForAll` over edges, 4 the `if` on the level, 5 the level
    /// store, 6 the push (the paper's 0..4 are our 2..6; 7 is the inner loop's exit).
    fn figure6(inner_uniform: bool) -> Cfg {
        let mut cfg = Cfg::new();
        let outer = cfg.add(NodeKind::Branch { uniform: true });
        let inner = cfg.add(NodeKind::Branch { uniform: inner_uniform });
        let cond = cfg.add(NodeKind::Branch { uniform: false });
        let store = cfg.add(NodeKind::Plain);
        let push = cfg.add(NodeKind::Push(PushSite(0)));
        let after_inner = cfg.add(NodeKind::Plain);
        cfg.edge(START, outer);
        cfg.edge(outer, inner);
        cfg.edge(outer, EXIT);
        cfg.edge(inner, cond);
        cfg.edge(inner, after_inner);
        cfg.edge(after_inner, outer);
        cfg.edge(cond, store);
        cfg.edge(cond, inner);
        cfg.edge(store, push);
        cfg.edge(push, inner);
        cfg
    }

    fn focal_set(cfg: &Cfg) -> Vec<usize> {
        cfg.focal_points().iter().enumerate().filter(|(_, f)| **f).map(|(n, _)| n).collect()
    }

    #[test]
    fn figure5_control_dependences() {
        let deps = figure6(false).control_dependences();
        // The outer loop depends on itself (and Start's edge into the loop), the inner loop on
        // the outer loop and itself, the if on the inner loop, store and push on the if.
        assert!(deps[2].contains(&2));
        assert_eq!(deps[3].iter().filter(|&&d| d != 3).copied().collect::<Vec<_>>(), vec![2]);
        assert_eq!(deps[4], vec![3]);
        assert_eq!(deps[5], vec![4]);
        assert_eq!(deps[6], vec![4]);
    }

    #[test]
    fn figure6a_focal_points_before_the_inner_loop_is_uniform() {
        // {Start, outer, inner, Exit} and the inner loop's exit: the if, store and push depend
        // on the non-uniform inner loop.
        assert_eq!(focal_set(&figure6(false)), vec![START, EXIT, 2, 3, 7]);
    }

    #[test]
    fn figure6b_focal_points_once_the_inner_loop_is_uniform() {
        // The if joins them; store and push still depend on the non-uniform if, which is why
        // Listing 9 moves the aggregated push out of it, to the focal point after it.
        assert_eq!(focal_set(&figure6(true)), vec![START, EXIT, 2, 3, 4, 7]);
    }

    #[test]
    fn pushes_of_a_phase_are_found_and_judged() {
        let module = crate::samples::bfs();
        let Stmt::ForAll(phase) = &module.kernels[0].body.block[0] else { unreachable!() };
        let cfg = Cfg::of_phase(phase);
        let focal = cfg.focal_points();
        let sites: Vec<_> = cfg.push_sites().collect();
        assert_eq!(sites.len(), 1);
        assert!(!focal[sites[0].0], "BFS's push is under a non-uniform if");
    }
}
