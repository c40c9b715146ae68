//! Regions that exchange on the devices: when every part of a partitioned graph is a GPU and
//! every pair of GPUs reaches the other's memory, an outlined region (an `iterate` or `pipe`
//! that one GPU runs as one control kernel) runs on all parts at once, one control kernel per
//! GPU, and each invocation's superstep ends on the devices: the parts write their changed
//! ghosts and pushed ghosts into their owners' inboxes and their reduction values into every
//! part's slots, through peer memory, meet at a barrier (each part's generation stored in every
//! part's arrival words), and the owners merge, append and refresh the ghosts of properties
//! read through them in their own memory (`grail_peer_step` in `grail_cuda.h`). The host is not
//! involved from the region's first invocation to its last, where a superstep driven from the
//! host costs launches, waits and copies on every part.
//!
//! This module decides whether a region can run so ([`obstacle`]) and builds each part's
//! tables ([`Table`]) from the addresses every part reports ([`Addresses`]).

use std::sync::Arc;

use grail_graph::PropertyType;
use grail_ir::opt::outline::kernels_of;
use grail_ir::{OutlineId, PropertyId, Stmt};

use super::bsp::{Links, Mirrors, Written};
use super::merge::{Merge, type_code};

/// The most parts a region exchanging on the devices has (`GRAIL_MAX_PARTS`).
pub(crate) const MAX_PARTS: usize = 8;

/// What a part is asked to make ready before the region: where its columns and records of the
/// region's synchronized properties are, and buffers the others write into.
pub(crate) struct Request<'a> {
    pub region: OutlineId,
    pub properties: &'a [PropertyId],
    /// The part's ghosts and mirrors: the fixed lists its records belong to (its inbox of nodes
    /// holds one per mirror: every ghost of its nodes elsewhere, once per exchange).
    pub ghosts: &'a [u32],
    pub mirrors: &'a [u32],
    pub parts: usize,
    /// Whether it holds the parts' stop word (part 0).
    pub barrier: bool,
    /// The region's grid.
    pub grid: super::RegionGrid,
    /// Whether the region is an asynchronous loop (`grail_peer_async_step`): the part's rings
    /// from every other part are made too.
    pub rings: bool,
}

/// Where a part's buffers are (device addresses), as [`Request`] asked.
#[derive(Debug, Clone, Default)]
pub(crate) struct Addresses {
    /// By requested property: the column, the ghosts' records, the mirrors' records.
    pub columns: Vec<u64>,
    pub ghost_records: Vec<u64>,
    pub mirror_records: Vec<u64>,
    /// By requested property: the inbox of changes by mirror entry (two parities): the words
    /// before and after, and the exchange that wrote them.
    pub in_before: Vec<u64>,
    pub in_after: Vec<u64>,
    pub in_step: Vec<u64>,
    /// The part's arrival words at the parts' barrier (one per part), and its mirror entries.
    pub arrive: u64,
    pub mirrors: u64,
    pub partials: u64,
    /// Its inbox of nodes (two parities of [`inbox_cap`] items) and the inbox's two counts.
    pub inbox: u64,
    pub inbox_len: u64,
    /// Part 0's words, the stop word second (0 on other parts).
    pub barrier: u64,
    /// The asynchronous exchange (when [`Request::rings`]): the part's words, and by sender its
    /// rings of records and nodes and their capacities.
    pub words: u64,
    pub rec_rings: Vec<u64>,
    pub node_rings: Vec<u64>,
    pub rec_caps: Vec<u64>,
    pub node_caps: Vec<u64>,
}

/// A property an invocation synchronizes, as `grail_peer_entry` holds it.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub kernel: u32,
    pub size: u32,
    pub kind: u32,
    pub op: u32,
    pub merge: bool,
    pub refresh: bool,
    /// The kernel pushes every node whose word it changes, and lists on the devices are
    /// allowed (unless `GRAIL_PEER_LISTS=0`): after its first exchange in a region, the
    /// exchange sends, merges and refreshes only the nodes in the worklist where they are few
    /// (1); with `GRAIL_PEER_LISTS=check`, then compares every ghost and mirror too and counts
    /// what the lists missed (2). 0: every exchange compares every ghost and mirror.
    pub listed: u32,
    /// By part.
    pub columns: Vec<u64>,
    pub ghost_records: Vec<u64>,
    pub mirror_records: Vec<u64>,
    pub in_before: Vec<u64>,
    pub in_after: Vec<u64>,
    pub in_step: Vec<u64>,
}

/// A part's lists that `grail_peers` points at, fixed by the partitioning: made once per run
/// and copied to the part's device before `main` runs (on an R-MAT graph of 2^23 nodes over two
/// GPUs, about two million ghosts a part, making and copying them for each region took most of
/// a BFS's time).
#[derive(Debug, Clone, Default)]
pub(crate) struct Lists {
    /// By ghost position: local id, owner, local id at the owner, entry among the owner's mirrors.
    pub ghost_local: Vec<u32>,
    pub ghost_owner: Vec<u32>,
    pub ghost_at: Vec<u32>,
    pub ghost_mirror: Vec<u32>,
    /// By ghost (local id minus the owned count): owner, local id there.
    pub owner_of: Vec<u32>,
    pub at_of: Vec<u32>,
    /// By mirror entry: the owned node, the part holding its ghost, the ghost's position and
    /// local id there.
    pub mirror_local: Vec<u32>,
    pub mirror_part: Vec<u32>,
    pub mirror_ghost: Vec<u32>,
    pub mirror_ghost_local: Vec<u32>,
    /// By ghost (local id minus the owned count): its position. By owned node: where its
    /// mirror entries start in `mirror_order` (one more: the end), and the entries; so that an
    /// exchange can send on the nodes a worklist lists without looking at every ghost and
    /// mirror (`Entry::listed`).
    pub ghost_position: Vec<u32>,
    pub mirror_start: Vec<u32>,
    pub mirror_order: Vec<u32>,
}

/// Whether exchanges on the devices may look only at the nodes a worklist lists
/// ([`Entry::listed`]): 1 by default, 2 with `GRAIL_PEER_LISTS=check` (each listed pass
/// followed by the full comparison, which fails the run if the lists missed anything), 0 with
/// `GRAIL_PEER_LISTS=0` (every exchange compares every ghost and mirror).
fn lists_mode() -> u32 {
    static MODE: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *MODE.get_or_init(|| match std::env::var("GRAIL_PEER_LISTS").as_deref() {
        Ok("0") => 0,
        Ok("check") => 2,
        _ => 1,
    })
}

/// How many lists [`Lists::in_order`] gives.
pub(crate) const LISTS: usize = 13;

impl Lists {
    /// Part `q`'s lists.
    pub fn of(links: &[Links], mirrors: &[Mirrors], q: usize) -> Lists {
        let own = &links[q];
        let mut ghost_owner = vec![0u32; own.ghosts().len()];
        let mut ghost_mirror = vec![0u32; own.ghosts().len()];
        for (o, theirs) in mirrors.iter().enumerate() {
            let first_mirror = theirs.group(q).start;
            for (t, i) in own.group(o).enumerate() {
                ghost_owner[i] = o as u32;
                ghost_mirror[i] = (first_mirror + t) as u32;
            }
        }
        let (mirror_part, mirror_ghost): (Vec<u32>, Vec<u32>) = mirrors[q].targets().iter().copied().unzip();
        let mirror_ghost_local =
            mirrors[q].targets().iter().map(|&(p, position)| links[p as usize].ghosts()[position as usize]).collect();
        let (mirror_start, mirror_order) = by_owned_node(mirrors[q].locals(), own.owned());
        Lists {
            ghost_local: own.ghosts().to_vec(),
            ghost_owner,
            ghost_at: own.at_owner().to_vec(),
            ghost_mirror,
            owner_of: own.owner_of().to_vec(),
            at_of: (0..own.owner_of().len()).map(|j| own.at_owner()[own.position()[j] as usize]).collect(),
            mirror_local: mirrors[q].locals().to_vec(),
            mirror_part,
            mirror_ghost,
            mirror_ghost_local,
            ghost_position: own.position().to_vec(),
            mirror_start,
            mirror_order,
        }
    }

    /// Every part's lists, made in parallel.
    pub fn of_every_part(links: &[Links], mirrors: &[Mirrors]) -> Vec<Arc<Lists>> {
        use rayon::prelude::*;
        (0..links.len()).into_par_iter().map(|q| Arc::new(Lists::of(links, mirrors, q))).collect()
    }

    /// The lists in `grail_peers`' order.
    pub fn in_order(&self) -> [&[u32]; LISTS] {
        [
            &self.ghost_local,
            &self.ghost_owner,
            &self.ghost_at,
            &self.ghost_mirror,
            &self.owner_of,
            &self.at_of,
            &self.mirror_local,
            &self.mirror_part,
            &self.mirror_ghost,
            &self.mirror_ghost_local,
            &self.ghost_position,
            &self.mirror_start,
            &self.mirror_order,
        ]
    }
}

/// The entries of `locals` (owned local ids below `owned`) grouped by node: where each node's
/// entries start (one more: the end), and the entries, each node's in increasing order.
fn by_owned_node(locals: &[u32], owned: u32) -> (Vec<u32>, Vec<u32>) {
    let mut start = vec![0u32; owned as usize + 1];
    for &v in locals {
        start[v as usize + 1] += 1;
    }
    for v in 0..owned as usize {
        start[v + 1] += start[v];
    }
    let mut next = start.clone();
    let mut order = vec![0u32; locals.len()];
    for (m, &v) in locals.iter().enumerate() {
        order[next[v as usize] as usize] = m as u32;
        next[v as usize] += 1;
    }
    (start, order)
}

/// One part's tables for `grail_peers`: the host lists its device copies and the other parts'
/// addresses.
#[derive(Debug, Clone, Default)]
pub(crate) struct Table {
    pub part: u32,
    pub parts: u32,
    pub entries: Vec<Entry>,
    /// The part's ghost and mirror lists (made once per run: [`Lists::of`]).
    pub lists: Arc<Lists>,
    /// Part 0's words (the stop word second); every part's reduction slots, inbox of nodes, its
    /// counts and capacity, arrival words and mirror entries.
    pub barrier: u64,
    pub partials: Vec<u64>,
    pub inbox: Vec<u64>,
    pub inbox_len: Vec<u64>,
    pub inbox_cap: Vec<u64>,
    pub arrive: Vec<u64>,
    pub mirror_counts: Vec<u64>,
    /// The asynchronous exchange ([`Rings`]), or `None` for supersteps.
    pub rings: Option<Rings>,
    /// Where the parts wait for each other on the host before launching (shared by every
    /// part's table).
    pub start: Arc<StartLine>,
}

/// The parts of a region exchanging on the devices launch it together: each arrives here
/// once its launch is ready (or it failed before it), and launches once every part has. A
/// part whose driver thread woke late would otherwise start its kernel a millisecond after the
/// others, which spend that millisecond waiting for it at their first barrier on the device.
#[derive(Debug, Default)]
pub(crate) struct StartLine {
    /// A bit for each part that has arrived.
    arrived: std::sync::atomic::AtomicU64,
}

impl StartLine {
    /// Part `part` arrives, without waiting (again: nothing more).
    pub fn arrive(&self, part: usize) {
        self.arrived.fetch_or(1 << part, std::sync::atomic::Ordering::AcqRel);
    }

    /// Part `part` arrives, and waits for all `parts` parts to have.
    pub fn arrive_and_wait(&self, part: usize, parts: usize) {
        use std::sync::atomic::Ordering;
        self.arrive(part);
        let all = if parts >= 64 { u64::MAX } else { (1u64 << parts) - 1 };
        let mut spins = 0u32;
        while self.arrived.load(Ordering::Acquire) & all != all {
            spins += 1;
            // Yielding now and then lets a machine with fewer cores than parts go on.
            if spins % 256 == 0 {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
    }
}

/// Arrives for part `.1` at start line `.0` when dropped, unless it has already: a part that
/// fails, or panics, before its launch does not hold the others at the line.
pub(crate) struct ArriveOnDrop<'a>(pub &'a StartLine, pub usize);

impl Drop for ArriveOnDrop<'_> {
    fn drop(&mut self) {
        self.0.arrive(self.1);
    }
}

/// A part's side of the asynchronous exchange: every part's words; by receiver, the rings this
/// part writes in the receiver's memory, their capacities and the most one step writes; by
/// sender, the rings in this part's memory and their capacities.
#[derive(Debug, Clone, Default)]
pub(crate) struct Rings {
    pub words: Vec<u64>,
    pub rec_ring: Vec<u64>,
    pub node_ring: Vec<u64>,
    pub rec_cap: Vec<u64>,
    pub node_cap: Vec<u64>,
    pub rec_most: Vec<u64>,
    pub node_most: Vec<u64>,
    pub rec_ring_in: Vec<u64>,
    pub node_ring_in: Vec<u64>,
    pub rec_cap_in: Vec<u64>,
    pub node_cap_in: Vec<u64>,
}

/// How many of part `q`'s ghosts each part owns (its ghosts by owner), and how many of its
/// mirror entries each part holds as ghosts, from `q`'s lists.
fn route_counts(lists: &Lists, parts: usize) -> (Vec<u64>, Vec<u64>) {
    let mut ghosts = vec![0u64; parts];
    let mut mirrors = vec![0u64; parts];
    for &o in &lists.ghost_owner {
        ghosts[o as usize] += 1;
    }
    for &p in &lists.mirror_part {
        mirrors[p as usize] += 1;
    }
    (ghosts, mirrors)
}

/// The records and nodes a step of the asynchronous exchange sends from a part to each part
/// at most, from the sender's lists: a record per ghost the receiver owns for each merged
/// property, and per mirror entry it holds for each refreshed one; a node per ghost it owns
/// (nothing to the sender itself, which owns none of its ghosts and holds none of its mirrors).
fn most_per_step(lists: &Lists, parts: usize, merged: u64, refreshed: u64) -> Vec<(u64, u64)> {
    let (ghosts, mirrors) = route_counts(lists, parts);
    ghosts.iter().zip(&mirrors).map(|(&g, &m)| (merged * g + refreshed * m, g)).collect()
}

/// The capacities of a part's rings from every sender (by sender; the part's own, unused, of
/// one slot), for a loop synchronizing up to `properties` properties: three times what one step
/// of the sender writes at most, so that a sender finding room for one step never waits on the
/// receiver, which takes a step's records at its next exchange (`grail_async_at_barrier`).
pub(crate) fn ring_caps(lists: &Lists, parts: usize, properties: usize) -> Vec<(u64, u64)> {
    let (ghosts, mirrors) = route_counts(lists, parts);
    let p = properties as u64;
    // The sender's ghosts of this part's nodes are this part's mirror entries for it, and the
    // other way round.
    let steps = ring_steps();
    (0..parts).map(|s| (steps * p * (mirrors[s] + ghosts[s]) + 1, steps * mirrors[s] + 1)).collect()
}

/// The steps of a sender's most a ring holds ([`ring_caps`]).
const RING_STEPS: u64 = 3;

/// [`RING_STEPS`], or 1 or 2 with `GRAIL_ASYNC_RING_STEPS` (tests: rings that fill, so that
/// senders wait for room; the GPU suite runs them).
fn ring_steps() -> u64 {
    std::env::var("GRAIL_ASYNC_RING_STEPS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|n| (1..=RING_STEPS).contains(n))
        .unwrap_or(RING_STEPS)
}

/// Why the asynchronous exchange cannot take region entries `entries` (their merge operators):
/// a property read through ghosts must merge by an idempotent operator (refreshes of one ghost
/// may be applied in any order), and none by replacement.
pub(crate) fn async_obstacle(entries: &[Entry]) -> Option<String> {
    let (sum, replace) = (Merge::Sum.code(), Merge::Replace.code());
    entries.iter().find_map(|e| {
        (e.op == replace || (e.refresh && e.op == sum)).then(|| {
            "a property it synchronizes merges by replacement, or by a sum and is read through ghosts".to_string()
        })
    })
}

/// How a region's parts end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    /// The region ran to its end, spending this long in its exchanges (waiting for the other
    /// parts included).
    Done(std::time::Duration),
    /// Another part failed, and this one stopped at a barrier (its error is the other's).
    Stopped,
}

/// Whether region `region` loops over a worklist (an `iterate` until empty, or a `pipe`).
pub(crate) fn has_worklist_loop(region: &Stmt) -> bool {
    grail_ir::block_has(std::slice::from_ref(region), |stmt| {
        matches!(stmt, Stmt::Pipe(_))
            || matches!(stmt, Stmt::Iterate(iterate) if matches!(iterate.until, grail_ir::Until::Empty { .. }))
    })
}

/// Why region `region` cannot exchange on the devices with these merges; `None` when it can.
pub(crate) fn obstacle(
    region: &Stmt,
    merges: &[Vec<Written>],
    over_slots: &[grail_ir::KernelId],
    parts: usize,
) -> Option<String> {
    if parts > MAX_PARTS {
        return Some(format!("it has {parts} parts, more than {MAX_PARTS}"));
    }
    if let Some(why) = grail_ir::analysis::partitioned_region_obstacle(region) {
        return Some(why);
    }
    for kernel in kernels_of(region) {
        if over_slots.contains(&kernel) {
            return Some("it joins union-find sets across the parts (kernels over the slots parts share)".into());
        }
        if merges[kernel.index()].iter().any(|w| matches!(w.merge, Merge::Custom(_))) {
            return Some("a kernel's writes merge with the program's own update function".into());
        }
    }
    None
}

/// The properties region `region` synchronizes: written by its kernels through other nodes
/// (merged), or written by them and read through ghosts (refreshed); in property order.
pub(crate) fn synced_properties(region: &Stmt, merges: &[Vec<Written>], remotely_read: &[bool]) -> Vec<PropertyId> {
    let mut properties: Vec<PropertyId> = kernels_of(region)
        .into_iter()
        .flat_map(|k| merges[k.index()].iter())
        .filter(|w| w.remote || remotely_read[w.property.index()])
        .map(|w| w.property)
        .collect();
    properties.sort();
    properties.dedup();
    properties
}

/// The items a part's inbox of nodes holds per exchange, from its mirror entries (at least one,
/// so that the buffer is never empty).
pub(crate) fn inbox_cap(mirrors: u64) -> u64 {
    mirrors.max(1)
}

/// The bytes of an element of type `ty` on a device.
fn element_size(ty: PropertyType) -> u32 {
    match ty {
        PropertyType::Bool => 1,
        PropertyType::I32 | PropertyType::U32 | PropertyType::F32 => 4,
        PropertyType::I64 | PropertyType::U64 | PropertyType::F64 => 8,
    }
}

/// What every part needs: the plan's entries (the same on every part) and each part's lists.
pub(crate) struct Plan<'a> {
    pub region: &'a Stmt,
    pub merges: &'a [Vec<Written>],
    pub remotely_read: &'a [bool],
    pub properties: &'a [PropertyId],
    pub types: &'a [PropertyType],
    /// Every part's lists ([`Lists::of_every_part`]).
    pub lists: &'a [Arc<Lists>],
    /// The start line every table of the plan shares ([`Table::start`]).
    pub start: Arc<StartLine>,
}

impl Plan<'_> {
    /// Part `q`'s table, from every part's addresses.
    pub fn table(&self, q: usize, addresses: &[Addresses]) -> Table {
        let k = self.lists.len();
        let slot = |p: PropertyId| self.properties.iter().position(|&x| x == p).expect("a synchronized property");
        let mut entries = Vec::new();
        for kernel in kernels_of(self.region) {
            for w in &self.merges[kernel.index()] {
                let refresh = self.remotely_read[w.property.index()];
                if !w.remote && !refresh {
                    continue;
                }
                let s = slot(w.property);
                let ty = self.types[s];
                entries.push(Entry {
                    kernel: kernel.0,
                    size: element_size(ty),
                    kind: type_code(ty),
                    op: w.merge.code(),
                    merge: w.remote,
                    refresh,
                    listed: if w.pushed { lists_mode() } else { 0 },
                    columns: addresses.iter().map(|a| a.columns[s]).collect(),
                    ghost_records: addresses.iter().map(|a| a.ghost_records[s]).collect(),
                    mirror_records: addresses.iter().map(|a| a.mirror_records[s]).collect(),
                    in_before: addresses.iter().map(|a| a.in_before[s]).collect(),
                    in_after: addresses.iter().map(|a| a.in_after[s]).collect(),
                    in_step: addresses.iter().map(|a| a.in_step[s]).collect(),
                });
            }
        }
        Table {
            part: q as u32,
            parts: k as u32,
            entries,
            lists: self.lists[q].clone(),
            barrier: addresses[0].barrier,
            partials: addresses.iter().map(|a| a.partials).collect(),
            inbox: addresses.iter().map(|a| a.inbox).collect(),
            inbox_len: addresses.iter().map(|a| a.inbox_len).collect(),
            inbox_cap: addresses.iter().map(|a| inbox_cap(a.mirrors)).collect(),
            arrive: addresses.iter().map(|a| a.arrive).collect(),
            mirror_counts: addresses.iter().map(|a| a.mirrors).collect(),
            rings: None,
            start: self.start.clone(),
        }
    }

    /// Part `q`'s table for the asynchronous exchange, or why the region cannot run so.
    pub fn async_table(&self, q: usize, addresses: &[Addresses]) -> Result<Table, String> {
        let mut table = self.table(q, addresses);
        if let Some(why) = async_obstacle(&table.entries) {
            return Err(why);
        }
        let k = addresses.len();
        if addresses.iter().any(|a| a.words == 0 || a.rec_caps.len() != k) {
            return Err("a part has no rings for it".into());
        }
        let merged = table.entries.iter().filter(|e| e.merge).count() as u64;
        let refreshed = table.entries.iter().filter(|e| e.refresh).count() as u64;
        let mut rings = Rings { words: addresses.iter().map(|a| a.words).collect(), ..Rings::default() };
        let most = most_per_step(&self.lists[q], k, merged, refreshed);
        let steps = ring_steps();
        for (theirs, &(rec_most, node_most)) in addresses.iter().zip(&most) {
            if steps * rec_most > theirs.rec_caps[q] || steps * node_most > theirs.node_caps[q] {
                return Err("its rings were made for fewer properties".into());
            }
            rings.rec_ring.push(theirs.rec_rings[q]);
            rings.node_ring.push(theirs.node_rings[q]);
            rings.rec_cap.push(theirs.rec_caps[q]);
            rings.node_cap.push(theirs.node_caps[q]);
            rings.rec_most.push(rec_most);
            rings.node_most.push(node_most);
        }
        let mine = &addresses[q];
        rings.rec_ring_in = mine.rec_rings.clone();
        rings.node_ring_in = mine.node_rings.clone();
        rings.rec_cap_in = mine.rec_caps.clone();
        rings.node_cap_in = mine.node_caps.clone();
        table.rings = Some(rings);
        Ok(table)
    }
}

#[cfg(test)]
mod tests {
    use grail_graph::generate::{GenOptions, Generator, generate};
    use grail_graph::partition::{Method, partition};
    use grail_ir::{Iterate, Until};

    use super::*;

    /// Every part passes the start line once all have arrived, whether they arrive to launch,
    /// fail first, or panic first (the guard arrives for them as it drops).
    #[test]
    fn the_start_line_lets_every_part_go_once_all_arrived() {
        for failing in [None, Some(false), Some(true)] {
            let line = StartLine::default();
            let parts = 4;
            std::thread::scope(|scope| {
                for part in 0..parts {
                    let line = &line;
                    scope.spawn(move || {
                        let _arrives = ArriveOnDrop(line, part);
                        std::thread::sleep(std::time::Duration::from_millis(5 * part as u64));
                        match failing {
                            Some(panics) if part == 2 => {
                                if panics {
                                    // Caught here, as the crew's drivers catch a part's panic.
                                    let _ = std::panic::catch_unwind(|| {
                                        let _arrives = ArriveOnDrop(line, part);
                                        panic!("part {part} failed before its launch");
                                    });
                                }
                            }
                            _ => line.arrive_and_wait(part, parts),
                        }
                    });
                }
            });
            assert_eq!(line.arrived.load(std::sync::atomic::Ordering::Acquire), 0b1111, "{failing:?}");
        }
    }

    /// What `grail_peer_step` relies on, for every part of several splits: a ghost's mirror entry
    /// at its owner names the same node and points back at the ghost; a mirror's ghost is the
    /// ghost it names; the ghost tables by local id agree with those by position.
    #[test]
    fn every_table_points_each_ghost_and_mirror_at_the_other() {
        let graph =
            generate(&Generator::graph500(10), &GenOptions::default(), false, &grail_graph::NoProgress).unwrap();
        let region = Stmt::Iterate(Box::new(Iterate {
            id: OutlineId(0),
            body: Vec::new(),
            until: Until::Condition { cond: grail_ir::Expr::bool(true), stop_when: true },
            outlined: true,
        }));
        for k in 2..=4u32 {
            for method in [Method::Ranges, Method::Random] {
                let partitioning = partition(&graph, k, method, 5).unwrap();
                let parts = partitioning.parts(&graph);
                let links = Links::of(&parts, partitioning.owner());
                let mirrors = Mirrors::of(&links);
                let lists = Lists::of_every_part(&links, &mirrors);
                let plan = Plan {
                    region: &region,
                    merges: &[],
                    remotely_read: &[],
                    properties: &[],
                    types: &[],
                    lists: &lists,
                    start: Arc::default(),
                };
                let addresses: Vec<Addresses> =
                    (0..k).map(|q| Addresses { barrier: 100 + u64::from(q), ..Default::default() }).collect();
                let tables: Vec<Table> = (0..k as usize).map(|q| plan.table(q, &addresses)).collect();
                for (q, table) in tables.iter().enumerate() {
                    let own = &table.lists;
                    assert_eq!(table.barrier, 100, "every part meets at part 0's barrier");
                    let owned = parts[q].num_owned();
                    for i in 0..own.ghost_local.len() {
                        let o = own.ghost_owner[i] as usize;
                        assert_ne!(o, q);
                        let m = own.ghost_mirror[i] as usize;
                        assert_eq!(tables[o].lists.mirror_local[m], own.ghost_at[i], "{k} parts, {method:?}");
                        assert_eq!(tables[o].lists.mirror_part[m] as usize, q);
                        assert_eq!(tables[o].lists.mirror_ghost[m] as usize, i);
                        assert_eq!(tables[o].lists.mirror_ghost_local[m], own.ghost_local[i]);
                        let j = (own.ghost_local[i] - owned) as usize;
                        assert_eq!(own.owner_of[j] as usize, o);
                        assert_eq!(own.at_of[j], own.ghost_at[i]);
                        assert_eq!(
                            parts[q].local_to_global()[own.ghost_local[i] as usize],
                            parts[o].local_to_global()[own.ghost_at[i] as usize]
                        );
                        assert_eq!(own.ghost_position[j] as usize, i, "a listed ghost finds its position");
                    }
                    // A listed owned node finds each of its mirror entries, and only them.
                    assert_eq!(own.mirror_start.len(), owned as usize + 1);
                    let mut seen = vec![false; own.mirror_local.len()];
                    for v in 0..owned as usize {
                        for j in own.mirror_start[v]..own.mirror_start[v + 1] {
                            let m = own.mirror_order[j as usize] as usize;
                            assert_eq!(own.mirror_local[m] as usize, v);
                            assert!(!std::mem::replace(&mut seen[m], true));
                        }
                    }
                    assert!(seen.iter().all(|&s| s), "every mirror entry under its node");
                }
            }
        }
    }

    /// What `grail_peer_async_step` relies on: each part writes into the ring its receiver reads
    /// for it (the receiver's ring from this sender, with the receiver's capacity), and every
    /// ring holds two of the sender's largest steps; merges the rings cannot take are refused.
    #[test]
    fn every_async_table_writes_into_the_ring_its_receiver_reads() {
        use crate::multi::merge::Merge;
        use grail_ir::{KernelId, Until};

        let graph =
            generate(&Generator::graph500(10), &GenOptions::default(), false, &grail_graph::NoProgress).unwrap();
        let region = Stmt::Iterate(Box::new(Iterate {
            id: OutlineId(0),
            body: Vec::new(),
            until: Until::Empty { kernel: KernelId(0), args: Vec::new(), initial: None },
            outlined: true,
        }));
        let written = |merge| vec![vec![Written { property: PropertyId(0), merge, remote: true, pushed: false }]];
        for k in 2..=4usize {
            let partitioning = partition(&graph, k as u32, Method::Random, 9).unwrap();
            let parts = partitioning.parts(&graph);
            let links = Links::of(&parts, partitioning.owner());
            let mirrors = Mirrors::of(&links);
            let lists = Lists::of_every_part(&links, &mirrors);
            // Fake addresses that name their part, ring and sender.
            let addresses: Vec<Addresses> = (0..k)
                .map(|q| {
                    let caps = ring_caps(&lists[q], k, 1);
                    Addresses {
                        columns: vec![1],
                        ghost_records: vec![2],
                        mirror_records: vec![3],
                        in_before: vec![4],
                        in_after: vec![5],
                        in_step: vec![6],
                        words: 1000 * (q as u64 + 1),
                        rec_rings: (0..k as u64).map(|s| 1000 * (q as u64 + 1) + 10 + s).collect(),
                        node_rings: (0..k as u64).map(|s| 1000 * (q as u64 + 1) + 20 + s).collect(),
                        rec_caps: caps.iter().map(|c| c.0).collect(),
                        node_caps: caps.iter().map(|c| c.1).collect(),
                        ..Addresses::default()
                    }
                })
                .collect();
            for (merge, read) in [(Merge::Min, true), (Merge::Sum, false), (Merge::Or, true)] {
                let merges = written(merge);
                let plan = Plan {
                    region: &region,
                    merges: &merges,
                    remotely_read: &[read],
                    properties: &[PropertyId(0)],
                    types: &[PropertyType::U32],
                    lists: &lists,
                    start: Arc::default(),
                };
                for q in 0..k {
                    let table = plan.async_table(q, &addresses).expect("the rings take min, sum and or");
                    let rings = table.rings.as_ref().unwrap();
                    assert_eq!(rings.words, addresses.iter().map(|a| a.words).collect::<Vec<_>>());
                    for o in (0..k).filter(|&o| o != q) {
                        assert_eq!(rings.rec_ring[o], 1000 * (o as u64 + 1) + 10 + q as u64);
                        assert_eq!(rings.node_ring[o], 1000 * (o as u64 + 1) + 20 + q as u64);
                        assert_eq!(rings.rec_cap[o], addresses[o].rec_caps[q]);
                        assert!(
                            ring_steps() * rings.rec_most[o] <= rings.rec_cap[o]
                                && ring_steps() * rings.node_most[o] <= rings.node_cap[o]
                        );
                        let ghosts = table.lists.ghost_owner.iter().filter(|&&x| x as usize == o).count() as u64;
                        assert_eq!(rings.node_most[o], ghosts, "a node per ghost the receiver owns");
                        assert_eq!(rings.rec_ring_in[o], addresses[q].rec_rings[o]);
                    }
                }
            }
            for (merge, read) in [(Merge::Replace, false), (Merge::Sum, true)] {
                let merges = written(merge);
                let plan = Plan {
                    region: &region,
                    merges: &merges,
                    remotely_read: &[read],
                    properties: &[PropertyId(0)],
                    types: &[PropertyType::U32],
                    lists: &lists,
                    start: Arc::default(),
                };
                assert!(plan.async_table(0, &addresses).is_err(), "{merge:?}, read through ghosts: {read}");
            }
        }
    }
}
