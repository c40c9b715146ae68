//! CSRs with room per node: rows followed by unused slots, so that a batch of inserted edges
//! goes into the rows it extends instead of every edge of the graph moving (what
//! [`Csr::with_inserted`] does, one copy of the edge arrays per batch, however small the batch).
//! Dynamic algorithms (incremental SSSP) keep their graph this way between batches.
//!
//! Layout: node `u`'s edges are positions `offsets[u] .. ends[u]` of the edge arrays, and its row
//! may grow in place up to `limits[u]`. A row that outgrows its room moves to the end of the
//! arrays with twice the room it needs (its old slots are left unused), so a batch costs the
//! batch plus the rows it moves; when more than half the slots are unused, the next insertion
//! lays every row out afresh. Every step is deterministic: a copy of the graph on a device
//! follows the same steps from the same [`Insertion`]'s report and holds the same arrays.
//!
//! Edge ids are positions, as on a packed CSR, but they do not run densely from 0 to the edge
//! count: edge columns hold one value per slot ([`Csr::edge_slots`]), and a program that makes
//! edges from numbers or loops over every edge id cannot run on such a graph (the runtimes refuse
//! it and say why). [`Csr::packed`] gives the packed CSR of the same rows.

use rayon::prelude::*;

use crate::error::{GraphError, Result};
use crate::graph::{Csr, NodeId, Weight};
use crate::insert::Insertion;
use crate::par::DisjointWriter;

/// Where the rows of a CSR with room end and how far each may grow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Room {
    /// Past each row's last edge.
    pub ends: Vec<u64>,
    /// Past each row's last slot.
    pub limits: Vec<u64>,
    /// Edges in rows.
    pub edges: u64,
    /// Slots handed out to rows (the rows' room, and slots moved rows left behind): where the
    /// next moved row goes. The edge arrays may be longer (grown ahead).
    pub used: u64,
    /// Slots moved rows left behind.
    pub unused: u64,
}

/// A row that a batch moved to the end of the edge arrays: its edges (before the batch) copied
/// from `from` to `to`, where it may grow to `to + room`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowMove {
    pub node: NodeId,
    pub from: u64,
    pub to: u64,
    pub len: u64,
    pub room: u64,
}

/// What [`Csr::insert`] did, for a copy of the graph elsewhere (a device) to do the same.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inserted {
    /// The batch by source, stably (each node's inserted edges in batch order): node `u`'s
    /// inserted edges went to its row's end in this order.
    pub placed: Vec<Insertion>,
    /// `true` when the rows were laid out afresh (the graph had no room yet, or too many unused
    /// slots): the arrays changed everywhere, and a copy must be made again.
    pub relaid: bool,
    /// The rows moved before the batch went in (none when `relaid`), in node order.
    pub moves: Vec<RowMove>,
    /// The edge arrays' length after the batch (they only grow).
    pub slots: u64,
    /// The graph was unweighted and the batch made it weighted (every older edge weighs 1).
    pub weighted_now: bool,
}

/// The room a row of `len` edges gets when laid out: an eighth more, and at least 2 slots.
fn room_for(len: u64) -> u64 {
    len / 8 + 2
}

impl Csr {
    /// Whether every row ends where the next begins (no room per node): the CSR every reader,
    /// writer and algorithm takes.
    pub fn is_packed(&self) -> bool {
        self.room.is_none()
    }

    /// Positions in the edge arrays: the length of an edge column. The edge count on a packed
    /// CSR; more with room per node.
    pub fn edge_slots(&self) -> u64 {
        self.targets.len() as u64
    }

    /// This CSR with room after every row (an eighth of its length, and 2 slots at least), laid
    /// out in node order.
    pub fn with_room(&self) -> Csr {
        let n = self.num_nodes() as usize;
        let offsets = self.row_starts(|degree| degree + room_for(degree));
        let total = offsets[n];
        let ends: Vec<u64> = (0..n).into_par_iter().map(|u| offsets[u] + self.degree(u as NodeId)).collect();
        let limits: Vec<u64> = (0..n).into_par_iter().map(|u| offsets[u + 1]).collect();
        // Reserved beyond the rows' room for the rows that will move (a sixteenth more), so that
        // the first batches grow the arrays without copying them.
        let (targets, weights) = self.rows_copied_to(&offsets, total as usize, (total + total / 16) as usize);
        let room = Room { ends, limits, edges: self.num_edges(), used: total, unused: 0 };
        Csr { offsets, targets, weights, real: self.real, room: Some(Box::new(room)) }
    }

    /// The packed CSR of the same rows (the same edges, in the same order in each row).
    pub fn packed(&self) -> Csr {
        if self.is_packed() {
            return self.clone();
        }
        let offsets = self.row_starts(|degree| degree);
        let m = offsets[self.num_nodes() as usize] as usize;
        let (targets, weights) = self.rows_copied_to(&offsets, m, m);
        Csr::from_parts_unchecked(offsets, targets, weights).with_real_weights(self.real)
    }

    /// Where each row starts when row `u` takes `size(degree of u)` slots, in node order (one
    /// entry per node plus one: the last is the slots taken).
    fn row_starts(&self, size: impl Fn(u64) -> u64) -> Vec<u64> {
        let mut starts = Vec::with_capacity(self.num_nodes() as usize + 1);
        let mut at = 0;
        starts.push(at);
        for u in 0..self.num_nodes() {
            at += size(self.degree(u));
            starts.push(at);
        }
        starts
    }

    /// The edge arrays (`slots` long, `capacity` reserved) with node `u`'s row copied to
    /// `starts[u]`, in parallel; the slots between rows zero.
    fn rows_copied_to(&self, starts: &[u64], slots: usize, capacity: usize) -> (Vec<NodeId>, Option<Vec<Weight>>) {
        let column = || {
            let mut column = Vec::with_capacity(capacity);
            column.resize(slots, 0);
            column
        };
        let mut targets: Vec<NodeId> = column();
        let mut weights: Option<Vec<Weight>> = self.weights.as_ref().map(|_| column());
        let targets_out = DisjointWriter::new(&mut targets);
        let weights_out = weights.as_mut().map(|w| DisjointWriter::new(w));
        (0..self.num_nodes()).into_par_iter().with_min_len(256).for_each(|u| {
            for (i, e) in self.edge_range(u).enumerate() {
                let at = starts[u as usize] as usize + i;
                // SAFETY: row u's slots belong to this task alone.
                unsafe { targets_out.write(at, self.targets[e]) };
                if let (Some(out), Some(w)) = (&weights_out, &self.weights) {
                    // SAFETY: as above.
                    unsafe { out.write(at, w[e]) };
                }
            }
        });
        (targets, weights)
    }

    /// Assembles a CSR with room from its arrays (a device's copy, read back), checking that
    /// every row lies within the arrays and its targets are nodes.
    pub fn from_parts_with_room(
        offsets: Vec<u64>,
        ends: Vec<u64>,
        targets: Vec<NodeId>,
        weights: Option<Vec<Weight>>,
    ) -> Result<Csr> {
        let n = offsets
            .len()
            .checked_sub(1)
            .ok_or_else(|| GraphError::invalid("CSR offsets must have one entry per node plus one"))?;
        if ends.len() != n {
            return Err(GraphError::invalid(format!("{} row ends for {n} nodes", ends.len())));
        }
        if weights.as_ref().is_some_and(|w| w.len() != targets.len()) {
            return Err(GraphError::invalid("the weights and the edge slots differ in length"));
        }
        let slots = targets.len() as u64;
        if let Some(u) = (0..n).into_par_iter().find_first(|&u| offsets[u] > ends[u] || ends[u] > slots) {
            return Err(GraphError::invalid(format!(
                "row {u} runs from {} to {}, outside the {slots} slots",
                offsets[u], ends[u]
            )));
        }
        let bad_target = (0..n)
            .into_par_iter()
            .find_first(|&u| targets[offsets[u] as usize..ends[u] as usize].iter().any(|&v| v as usize >= n));
        if let Some(u) = bad_target {
            return Err(GraphError::invalid(format!("an edge of node {u} points to a node the graph does not have")));
        }
        let edges = (0..n).into_par_iter().map(|u| ends[u] - offsets[u]).sum();
        let limits = ends.clone();
        let room = Room { ends, limits, edges, used: slots, unused: 0 };
        Ok(Csr { offsets, targets, weights, real: false, room: Some(Box::new(room)) })
    }

    /// Inserts `batch` (parallel edges and self-loops kept, as [`Csr::with_inserted`] does),
    /// giving the CSR room per node first if it has none; node `u`'s inserted edges follow its
    /// old ones in batch order, as there. An unweighted CSR becomes weighted (its edges weigh 1)
    /// when an inserted edge weighs anything else. On an error the CSR is unchanged.
    pub fn insert(&mut self, batch: &[Insertion]) -> Result<Inserted> {
        let n = self.num_nodes();
        self.check_batch(batch)?;
        let weighted_now = !self.is_weighted() && batch.par_iter().any(|&(_, _, w)| w != 1);
        if weighted_now {
            self.weights = Some(vec![1; self.targets.len()]);
        }
        let placed = sorted_by_source(batch, n);
        let relaid = match &self.room {
            None => true,
            Some(room) => room.unused > self.targets.len() as u64 / 2,
        };
        if relaid {
            *self = self.with_room();
        }
        // The batch in pieces that end where a row does, a few a thread: one task takes each
        // piece's rows (a list of every row's start, collected in parallel, did not scale).
        let pieces = row_pieces(&placed, 4 * rayon::current_num_threads());
        let room = self.room.as_mut().expect("laid out with room above");
        let offsets = &self.offsets;
        let outgrown: Vec<(NodeId, u64, u64)> = pieces
            .par_iter()
            .flat_map_iter(|&piece| {
                rows(&placed, piece).filter_map(|(first, last)| {
                    let u = placed[first].0 as usize;
                    let len = room.ends[u] - offsets[u];
                    let need = len + (last - first) as u64;
                    (offsets[u] + need > room.limits[u]).then_some((u as NodeId, len, need))
                })
            })
            .collect();
        let mut moves = Vec::with_capacity(outgrown.len());
        for (node, len, need) in outgrown {
            let u = node as usize;
            let cap = 2 * need + 2;
            moves.push(RowMove { node, from: self.offsets[u], to: room.used, len, room: cap });
            room.unused += room.limits[u] - self.offsets[u];
            room.used += cap;
        }
        if room.used > self.targets.len() as u64 {
            // A little more than needed within what the arrays have reserved (touching pages
            // costs), a quarter more when that is exhausted (copying costs).
            let len = self.targets.len() as u64;
            let capacity = self.targets.capacity() as u64;
            let slots = if room.used <= capacity {
                (room.used + len / 256).min(capacity)
            } else {
                room.used.max(len + len / 4)
            };
            self.targets.resize(slots as usize, 0);
            if let Some(w) = &mut self.weights {
                w.resize(slots as usize, 0);
            }
        }
        {
            // Moved rows go to fresh slots past every row: their copies touch nothing another
            // move reads or writes, and each updates its own node's row.
            let targets = DisjointWriter::new(&mut self.targets);
            let weights = self.weights.as_mut().map(|w| DisjointWriter::new(w));
            let (starts, ends, limits) = (
                DisjointWriter::new(&mut self.offsets),
                DisjointWriter::new(&mut room.ends),
                DisjointWriter::new(&mut room.limits),
            );
            moves.par_iter().with_min_len(64).for_each(|m| {
                for k in 0..m.len as usize {
                    let (from, to) = (m.from as usize + k, m.to as usize + k);
                    // SAFETY: `from` lies in the row before the move, which no move writes;
                    // `to` in this move's fresh slots, which no other move touches.
                    unsafe { targets.write(to, targets.read(from)) };
                    if let Some(weights) = &weights {
                        // SAFETY: as above.
                        unsafe { weights.write(to, weights.read(from)) };
                    }
                }
                let u = m.node as usize;
                // SAFETY: a node moves at most once a batch: only this move writes its row.
                unsafe {
                    starts.write(u, m.to);
                    ends.write(u, m.to + m.len);
                    limits.write(u, m.to + m.room);
                }
            });
        }
        {
            let targets = DisjointWriter::new(&mut self.targets);
            let weights = self.weights.as_mut().map(|w| DisjointWriter::new(w));
            let ends = DisjointWriter::new(&mut room.ends);
            pieces.par_iter().for_each(|&piece| {
                for (first, last) in rows(&placed, piece) {
                    let u = placed[first].0 as usize;
                    // SAFETY: only this row of the batch reads or writes node u's end.
                    let end = unsafe { ends.read(u) };
                    for (i, &(_, v, w)) in placed[first..last].iter().enumerate() {
                        let at = end as usize + i;
                        // SAFETY: positions end .. end + (last - first) lie in u's row's room,
                        // which no other row touches.
                        unsafe { targets.write(at, v) };
                        if let Some(weights) = &weights {
                            // SAFETY: as above.
                            unsafe { weights.write(at, w) };
                        }
                    }
                    // SAFETY: only this row of the batch writes node u's end.
                    unsafe { ends.write(u, end + (last - first) as u64) };
                }
            });
        }
        room.edges += batch.len() as u64;
        let n = n as usize;
        self.offsets[n] = self.targets.len() as u64;
        Ok(Inserted { placed, relaid, moves, slots: self.targets.len() as u64, weighted_now })
    }
}

/// `placed` (sorted by source) cut into about `count` pieces `(first, past the last)` that each
/// end where a row does.
fn row_pieces(placed: &[Insertion], count: usize) -> Vec<(usize, usize)> {
    let len = placed.len();
    let mut cuts = vec![0];
    for k in 1..count.max(1) {
        let mut cut = (len * k / count).max(*cuts.last().expect("starts with 0"));
        while cut > 0 && cut < len && placed[cut - 1].0 == placed[cut].0 {
            cut += 1;
        }
        if cut < len && cut > *cuts.last().expect("starts with 0") {
            cuts.push(cut);
        }
    }
    cuts.push(len);
    cuts.windows(2).map(|w| (w[0], w[1])).filter(|(a, b)| a < b).collect()
}

/// The rows of a piece of `placed`: `(first, past the last)` positions of each source's edges.
fn rows(placed: &[Insertion], (first, last): (usize, usize)) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut at = first;
    std::iter::from_fn(move || {
        if at >= last {
            return None;
        }
        let start = at;
        let u = placed[start].0;
        while at < last && placed[at].0 == u {
            at += 1;
        }
        Some((start, at))
    })
}

/// `batch` sorted by source, stably: a least-significant-digit radix sort on the sources (as many
/// 11-bit digits as node ids need), each pass counting and scattering chunks of the batch in
/// parallel (a comparison sort of a 1% batch of a 65 M-edge graph took 23 ms on 2 cores).
fn sorted_by_source(batch: &[Insertion], nodes: u32) -> Vec<Insertion> {
    const BITS: u32 = 11;
    const DIGITS: usize = 1 << BITS;
    let passes = (32 - nodes.saturating_sub(1).leading_zeros()).div_ceil(BITS);
    if batch.len() < 2 || passes == 0 {
        return batch.to_vec();
    }
    let chunk = batch.len().div_ceil(4 * rayon::current_num_threads()).max(1 << 14);
    // Zeroed vectors come from the allocator untouched: their pages are faulted in by the
    // scatters, on every core (a copy of the batch first cost a sequential pass).
    let mut sorted = vec![(0, 0, 0); batch.len()];
    let mut spare = if passes > 1 { vec![(0, 0, 0); batch.len()] } else { Vec::new() };
    for pass in 0..passes {
        let shift = pass * BITS;
        let digit = |u: NodeId| ((u >> shift) as usize) & (DIGITS - 1);
        // The first pass reads the batch; each later one what the one before wrote. The last
        // writes `sorted`.
        let (from, to): (&[Insertion], &mut Vec<Insertion>) = match (pass, (passes - 1 - pass) % 2) {
            (0, 0) => (batch, &mut sorted),
            (0, _) => (batch, &mut spare),
            (_, 0) => (&spare, &mut sorted),
            _ => (&sorted, &mut spare),
        };
        // Each chunk's count of each digit, then where its first of each digit goes: after every
        // smaller digit, and after the same digit in the chunks before it (which keeps it stable).
        let counts: Vec<Vec<usize>> = from
            .par_chunks(chunk)
            .map(|piece| {
                let mut count = vec![0usize; DIGITS];
                for &(u, _, _) in piece {
                    count[digit(u)] += 1;
                }
                count
            })
            .collect();
        let mut places = vec![vec![0usize; DIGITS]; counts.len()];
        let mut at = 0;
        for d in 0..DIGITS {
            for (c, count) in counts.iter().enumerate() {
                places[c][d] = at;
                at += count[d];
            }
        }
        let out = DisjointWriter::new(to);
        from.par_chunks(chunk).zip(places).for_each(|(piece, mut place)| {
            for &edge in piece {
                let d = digit(edge.0);
                // SAFETY: the places of different chunks and digits are disjoint ranges.
                unsafe { out.write(place[d], edge) };
                place[d] += 1;
            }
        });
    }
    sorted
}
