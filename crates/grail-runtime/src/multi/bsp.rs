//! The bulk-synchronous partitioned machine (Falcon §5.10): `main` is interpreted once, on the
//! host, against a [`Machine`] whose every invocation runs the kernel on all parts at once and
//! then synchronizes them, each part sending straight to the others ([`super::exchange`]):
//!
//! 1. pushes of ghosts go to their owners' worklists (in the owner's local ids);
//! 2. for each node property the kernel writes, every ghost whose value changed is merged into
//!    its owner with the kernel's [`Merge`];
//! 3. for properties kernels read through ghosts, the owners' values that their ghosts do not
//!    hold are copied to them;
//! 4. the parts' reductions are combined with the kernel's operator.
//!
//! Host code sees the graph in global ids: a node's property lives with its owner (a write
//! also goes to its ghosts), an edge's with its source's owner.

use std::io::Write;
use std::time::{Duration, Instant};

use grail_graph::partition::Part;
use grail_graph::{Column, Graph, PropertyType};
use grail_ir::{CollectionId, KernelId, Module, OutlineId, Owner, PropertyId};

use super::asynchronous;
use super::crew::{Crew, Exchanged, Job, Outcome, Synced};
use super::exchange::{peer, route_to};
use super::merge::{Merge, normal, normalize};
use super::peer;
use super::{Indices, PartRun};
use crate::error::{Result, RuntimeError};
use crate::host::interp::Machine;
use crate::host::memory::Memory;
use crate::host::table::Table;
use crate::host::value::{Value, column_type};
use crate::host::{combine, ops};

/// Where a part's ghosts live among the other parts.
pub(crate) struct Links {
    owned: u32,
    /// The ghosts' local ids, grouped by owner part (the order of every ghost vector below and
    /// of the cache).
    ghosts: Vec<u32>,
    /// Where each part's group starts in `ghosts`, by part (one more entry: the end).
    starts: Vec<usize>,
    /// Each ghost's local id on its owner, in `ghosts`' order.
    at_owner: Vec<u32>,
    /// By ghost (local id minus `owned`): its position in `ghosts`.
    position: Vec<u32>,
    /// By ghost (local id minus `owned`): its owner part.
    owner_of: Vec<u32>,
    /// `starts`, as a fixed list of 32-bit words a device keeps.
    starts32: Vec<u32>,
}

impl Links {
    /// The links of every part, from each part's ghosts and the owner of every node.
    pub fn of(parts: &[Part], owner: &[u32]) -> Vec<Links> {
        use rayon::prelude::*;
        parts
            .par_iter()
            .map(|part| {
                let k = parts.len();
                let ghosts = part.ghosts();
                let owner_of: Vec<u32> = ghosts.iter().map(|&g| owner[g as usize]).collect();
                let mut order: Vec<u32> = (0..ghosts.len() as u32).collect();
                order.sort_by_key(|&j| owner_of[j as usize]);
                let mut starts = vec![0usize; k + 1];
                for &o in &owner_of {
                    starts[o as usize + 1] += 1;
                }
                for p in 0..k {
                    starts[p + 1] += starts[p];
                }
                let mut position = vec![0u32; ghosts.len()];
                for (pos, &j) in order.iter().enumerate() {
                    position[j as usize] = pos as u32;
                }
                let at_owner = order
                    .iter()
                    .map(|&j| {
                        let g = ghosts[j as usize];
                        parts[owner_of[j as usize] as usize].local(g).expect("an owner holds its node")
                    })
                    .collect();
                Links {
                    owned: part.num_owned(),
                    ghosts: order.iter().map(|&j| part.num_owned() + j).collect(),
                    starts32: starts.iter().map(|&s| s as u32).collect(),
                    starts,
                    at_owner,
                    position,
                    owner_of,
                }
            })
            .collect()
    }

    /// The part's owned nodes (local ids below it; its ghosts' are above).
    pub fn owned(&self) -> u32 {
        self.owned
    }

    /// The ghosts' local ids, grouped by owner part.
    pub fn ghosts(&self) -> &[u32] {
        &self.ghosts
    }

    pub fn group(&self, owner: usize) -> std::ops::Range<usize> {
        self.starts[owner]..self.starts[owner + 1]
    }

    /// Each ghost's local id on its owner, in [`Links::ghosts`]' order.
    pub fn at_owner(&self) -> &[u32] {
        &self.at_owner
    }

    /// By ghost (local id minus the owned count): its owner part, and its position in
    /// [`Links::ghosts`].
    pub fn owner_of(&self) -> &[u32] {
        &self.owner_of
    }

    pub fn position(&self) -> &[u32] {
        &self.position
    }

    /// The lists that take a pushed ghost to its owner, for part `part` (this one).
    pub fn map(&self, part: usize) -> super::GhostMap<'_> {
        super::GhostMap {
            part,
            owner_of: &self.owner_of,
            position: &self.position,
            at_owner: &self.at_owner,
            starts: &self.starts32,
        }
    }
}

/// A part's owned nodes that other parts hold as ghosts: one entry per (part, ghost).
pub(crate) struct Mirrors {
    /// The owned node's local id, per entry (a fixed list for [`PartRun::diff`]).
    locals: Vec<u32>,
    /// The part holding the ghost and the ghost's position in its [`Links::ghosts`].
    targets: Vec<(u32, u32)>,
    /// Where each part's entries start (one more entry: the end); a part's entries are its
    /// ghosts of this part's nodes, in its order.
    starts: Vec<usize>,
}

impl Mirrors {
    /// The owned nodes' local ids, one per (part, ghost).
    pub fn locals(&self) -> &[u32] {
        &self.locals
    }

    /// The part holding each entry's ghost and the ghost's position in its [`Links::ghosts`].
    pub fn targets(&self) -> &[(u32, u32)] {
        &self.targets
    }

    /// The entries for part `q`'s ghosts.
    pub fn group(&self, q: usize) -> std::ops::Range<usize> {
        self.starts[q]..self.starts[q + 1]
    }

    /// A part's shared slots: its nodes that are ghosts elsewhere (these mirrors, each once,
    /// in order) and then its ghosts (`links`, the part's own links): the slots the joins of
    /// union-find sets run over ([`grail_ir::Module::over_slots`]).
    pub fn shared_slots(&self, links: &Links) -> Vec<u32> {
        let mut slots = self.locals.clone();
        slots.sort_unstable();
        slots.dedup();
        slots.extend_from_slice(links.ghosts());
        slots
    }

    /// Every part's mirrors, from the parts' links.
    pub fn of(links: &[Links]) -> Vec<Mirrors> {
        let k = links.len();
        (0..k)
            .map(|o| {
                let mut mirrors = Mirrors { locals: Vec::new(), targets: Vec::new(), starts: vec![0] };
                for (q, links) in links.iter().enumerate() {
                    if q != o {
                        for i in links.group(o) {
                            mirrors.locals.push(links.at_owner[i]);
                            mirrors.targets.push((q as u32, i as u32));
                        }
                    }
                    mirrors.starts.push(mirrors.locals.len());
                }
                mirrors
            })
            .collect()
    }
}

/// A node property a kernel writes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Written {
    pub property: PropertyId,
    pub merge: Merge,
    /// Whether it writes through another node than its loop's item (then ghosts may change).
    pub remote: bool,
    /// Whether every write is followed by a push of the node written
    /// (`grail_ir::analysis::pushed_writes`): the invocation's output worklist then holds every
    /// node it changed.
    pub pushed: bool,
}

/// Figures of a partitioned run.
#[derive(Debug, Clone, Default)]
pub struct SyncStats {
    /// Invocations (each a superstep on every part).
    pub steps: u64,
    /// Time the parts spent computing (the slowest part's, per step, summed).
    pub compute: Duration,
    /// Time spent between the parts' kernels: forwarding pushes, merging and copying ghosts (a
    /// merge the parts make at the start of the next superstep counts in
    /// that superstep's `compute`).
    pub sync: Duration,
    /// Ghost values merged into their owners (changed ones only).
    pub merged: u64,
    /// Values copied from owners to ghosts (those that differ from what the ghost holds).
    pub copied: u64,
    /// Pushed ghosts sent to their owners' worklists.
    pub forwarded: u64,
    /// Worklist loops run asynchronously (`Mode::Async`); their invocations count in `steps`
    /// (every part's), and their time in `sync` as long as the part that spent longest
    /// exchanging (merging packets, finding and sending changes) spent on it, the rest in
    /// `compute`.
    pub async_loops: u64,
    /// Pushed nodes that waited under soft priorities (asynchronous mode).
    pub deferred: u64,
    /// Packets passed on by parts they were not for (the asynchronous mode's ring).
    pub relayed: u64,
    /// Outlined regions run on every part at once, exchanging on the devices; their
    /// invocations count in `steps` (one per superstep), their time in `sync` as long as the
    /// part that spent longest in the exchanges (waiting for the others included) spent there,
    /// the rest in `compute`.
    pub device_regions: u64,
    /// Union-find joins finished through the host ([`Bsp::join_through_host`]); their time
    /// counts in `sync`.
    pub host_joins: u64,
    /// Supersteps queued on the GPUs without waiting for them ([`Bsp::defers`]): their changes
    /// are merged on the devices when the parts next run.
    pub unwaited: u64,
}

pub(crate) struct Bsp<'a, 's> {
    pub module: &'a Module,
    /// The whole graph's arrays, for host code (no property columns: those live on the parts).
    pub memory: Memory<'a>,
    pub params: &'a [Value],
    pub out: &'a mut dyn Write,
    /// The parts' ids and ghosts, and their local graphs (the parts' CSRs moved there).
    pub parts: &'a [Part],
    pub graphs: &'a [Graph],
    pub owner: &'a [u32],
    pub runs: Vec<Box<dyn PartRun + 'a>>,
    pub links: Vec<Links>,
    /// Each part's shared slots, where kernels over slots run ([`Mirrors::shared_slots`]).
    pub shared: Vec<Vec<u32>>,
    /// By kernel: the node properties it writes and how they merge.
    pub merges: Vec<Vec<Written>>,
    /// By part: its nodes that are ghosts elsewhere, and where.
    pub mirrors: Vec<Mirrors>,
    /// By property: whether some kernel reads it through a ghost
    /// (`grail_ir::analysis::remote_reads`); only those ghosts are kept equal to their owners.
    pub remotely_read: Vec<bool>,
    pub stats: SyncStats,
    /// The threads driving parts 1.. (part 0 runs on the interpreter's thread).
    pub crew: Crew<'s>,
    pub mode: super::Mode,
    /// The asynchronous mode's jitter seed (tests).
    pub jitter: Option<u64>,
    /// The asynchronous mode's soft priorities' width ([`super::MultiOptions::priority_delta`]).
    pub priority_delta: Option<u64>,
    /// The asynchronous mode's topology ([`super::MultiOptions::topology`]).
    pub topology: asynchronous::Topology,
    /// Who runs its loops ([`super::MultiOptions::worker`]).
    pub worker: super::Worker,
    /// The last superstep's changes, not merged yet: the next superstep's parts merge them
    /// before their kernels (one round of the crew fewer), and anything else that looks at the
    /// parts merges them first ([`Bsp::flush`]). Only a superstep that pushed nothing and whose
    /// ghosts need nothing back leaves its merge for later.
    pub pending: Option<Exchanged>,
    /// Which outlined regions run on all parts at once, exchanging on the devices
    /// ([`super::peer`]); `Never` unless every part is a GPU reaching every other's memory.
    pub device_regions: super::DeviceRegions,
    /// Those regions' grids.
    pub region_grid: super::RegionGrid,
    /// The defaults kernel, where the value it gives a node depends on the node alone
    /// (`grail_ir::analysis::node_local_defaults`): every part runs it over its ghosts too, and
    /// nothing is sent.
    pub local_defaults: Option<KernelId>,
    /// Every part's lists for regions exchanging on the devices, once made
    /// ([`peer::Lists::of_every_part`]; empty before).
    pub peer_lists: Vec<std::sync::Arc<peer::Lists>>,
    /// By set ([`grail_ir::Module::set_joins`]), how its join goes.
    pub joins: Vec<JoinProgress>,
    /// After how many rounds a join is finished through the host; `None`: when the rounds so
    /// far have cost what going through the host would ([`Bsp::host_join_due`]).
    pub host_join_after: Option<u32>,
    /// Whether supersteps that need nothing back may be deferred ([`Bsp::defers`]): every part
    /// is a GPU reaching every other's memory (and `GRAIL_DEFER_STEPS` is not `0`).
    pub defer_steps: bool,
}

/// A set's join so far.
#[derive(Debug, Clone, Copy, Default)]
pub struct JoinProgress {
    /// Its rounds (0 outside a join).
    pub rounds: u32,
    /// When its first round started.
    pub started: Option<Instant>,
    /// Whether the host has joined it.
    pub through_host: bool,
}

/// What a join through the host is taken to cost: this much, and [`HOST_JOIN_PER_SLOT`] per
/// slot the parts share. A round on the devices carries a class across one boundary between
/// parts, so trees chained through the parts many times (a graph of high diameter cut at
/// random) take many rounds; the host joins in one, at the price of every shared slot's root
/// and class brought over and sent back, and two more rounds (one takes the classes to the
/// roots, one finds nothing left to do). So a join goes through the host once its rounds have
/// cost that price and two rounds more (as one rents skis until the rent paid would have
/// bought them): never more than twice the better of the two.
pub const HOST_JOIN_FIXED: Duration = Duration::from_micros(200);

/// The host join's cost per shared slot (two words gathered, one put, a union on the host):
/// 47 ns on the development machine, four CPU devices (road network of 2^18 nodes in random
/// parts: 700,000 shared slots, 33 ms); less on GPUs, whose gathers are copies.
pub const HOST_JOIN_PER_SLOT: Duration = Duration::from_nanos(50);

/// `GRAIL_HOST_JOIN_AFTER`, a number of rounds, if set: joins go through the host after that
/// many rounds, whatever they cost (to compare one way with the other without rebuilding).
pub fn host_join_after_from_env() -> Option<u32> {
    std::env::var("GRAIL_HOST_JOIN_AFTER").ok()?.trim().parse().ok()
}

impl Bsp<'_, '_> {
    /// The merges of every kernel's node-property writes.
    pub fn merges_of(module: &Module) -> Vec<Vec<Written>> {
        (0..module.kernels.len())
            .map(|k| {
                let pushed = grail_ir::analysis::pushed_writes(module, KernelId(k as u32));
                grail_ir::analysis::kernel_property_writes(module, KernelId(k as u32))
                    .iter()
                    .enumerate()
                    .filter(|(p, _)| module.properties[*p].owner == Owner::Node)
                    .filter_map(|(p, writes)| {
                        Merge::of(writes).map(|merge| Written {
                            property: PropertyId(p as u32),
                            // The program's own update function, where it gives one.
                            merge: module
                                .merge_functions
                                .iter()
                                .position(|(q, _)| q.index() == p)
                                .map_or(merge, |i| Merge::Custom(i as u32)),
                            // A kernel over every slot writes ghosts as its items.
                            remote: writes.remote || module.over_slots.contains(&KernelId(k as u32)),
                            pushed: pushed[p],
                        })
                    })
                    .collect()
            })
            .collect()
    }

    fn column_type(&self, property: PropertyId) -> PropertyType {
        column_type(self.module.properties[property.index()].ty).expect("a scalar column (checked at compile time)")
    }

    /// Node `u`'s owner and local id there.
    fn home(&self, u: u32) -> (usize, u32) {
        let o = self.owner[u as usize] as usize;
        (o, self.parts[o].local(u).expect("an owner holds its node"))
    }

    /// Edge `e`'s part and local id there (the part that owns its source).
    fn edge_home(&self, e: u64) -> (usize, usize) {
        let offsets = self.memory.out.offsets();
        let source = offsets.partition_point(|&o| o <= e) - 1;
        let (o, local) = self.home(source as u32);
        let local_start = self.graphs[o].out().offsets()[local as usize];
        (o, (local_start + (e - offsets[source])) as usize)
    }

    /// Each part's arguments: node arguments in its local ids.
    fn part_args(&self, kernel: KernelId, args: &[Value]) -> Result<Vec<Vec<Value>>> {
        let mut part_args = Vec::with_capacity(self.parts.len());
        for part in self.parts {
            let mut local = Vec::with_capacity(args.len());
            for arg in args {
                local.push(match *arg {
                    Value::Node(u) => Value::Node(part.local(u).ok_or_else(|| {
                        RuntimeError::Unsupported(format!(
                            "kernel `{}` is given node {u}, which part {} neither owns nor reaches; in a \
                             partitioned run, pass nodes to `main` only",
                            self.module.kernels[kernel.index()].name,
                            part.id()
                        ))
                    })?),
                    Value::Edge(_) => {
                        return Err(RuntimeError::Unsupported(format!(
                            "kernel `{}` is given an edge; edge ids are local to a part in a partitioned run",
                            self.module.kernels[kernel.index()].name
                        )));
                    }
                    ref other => other.clone(),
                });
            }
            part_args.push(local);
        }
        Ok(part_args)
    }

    /// Runs kernel `kernel` on every part at once (`over_slots`: over its ghosts too), each part
    /// then finding the ghosts of `diff` it changed and (with `split`) splitting its pushed
    /// ghosts off; each part's outcome.
    fn run_parts(
        &mut self,
        kernel: KernelId,
        args: &[Value],
        diff: Vec<PropertyId>,
        split: bool,
        over_slots: bool,
        deferred: bool,
    ) -> Result<Vec<Outcome>> {
        let part_args = self.part_args(kernel, args)?;
        let merge_first = self.pending.take();
        let job = Job::Step { kernel, args: part_args, diff, split, over_slots, merge_first, deferred };
        self.crew.run(job).into_iter().collect()
    }

    /// Each part's invocations so far of `kernels`, from its statistics (a GPU part's inside its
    /// device loops too).
    fn invocations(&self, kernels: &[KernelId]) -> Vec<u64> {
        self.runs
            .iter()
            .map(|run| {
                let stats = run.kernel_stats();
                kernels.iter().filter_map(|k| stats.get(k.index())).map(|s| s.invocations).sum()
            })
            .collect()
    }

    /// Counts a loop that ran without the host's supersteps: `elapsed` in all, split as the
    /// part that spent longest exchanging (`exchanging`) spent it.
    fn account(&mut self, elapsed: Duration, exchanging: Duration) {
        self.stats.sync += exchanging.min(elapsed);
        self.stats.compute += elapsed.saturating_sub(exchanging);
    }

    /// Gets every part's exchanges ready before the supersteps ([`super::PartRun::prepare_exchange`]):
    /// the properties kernels write through other nodes (their ghosts are compared, their
    /// mirrors merged into) and those read through ghosts (their mirrors compared, their ghosts
    /// stored into).
    pub fn prepare_exchanges(&mut self) -> Result<()> {
        if self.parts.len() < 2 {
            return Ok(());
        }
        let properties = self.exchanged_properties();
        // The lists of regions exchanging on the devices too, where one may run.
        let regions = grail_ir::opt::outline::outlined_regions(&self.module.main.block);
        let peer_lists =
            if regions.iter().any(|r| self.exchanges_on_devices(r)) { self.peer_lists() } else { Vec::new() };
        // Rings only where a loop may take them: an outlined `iterate` until empty whose body
        // only counts (what the interpreter offers as an asynchronous loop).
        let rings = self.fused_worker()
            && regions
                .iter()
                .any(|r| matches!(r, grail_ir::Stmt::Iterate(it) if crate::host::interp::offers_worklist_loop(it)));
        let mut room = true;
        for outcome in self.crew.run(Job::Prepare { properties, peer_lists, rings }) {
            room &= !outcome?.no_room_for_regions;
        }
        if !room {
            // A part without room for them: no region exchanges on the devices in this run.
            self.device_regions = super::DeviceRegions::Never;
        }
        Ok(())
    }

    /// Counts the rounds of a set's join as its kernel is invoked, and finishes the join
    /// through the host first once that is due ([`Bsp::host_join_due`]); any other kernel ends
    /// the joins.
    fn count_join_round(&mut self, kernel: KernelId) -> Result<()> {
        let joins = &self.module.set_joins;
        if let Some(j) = joins.iter().position(|join| join.round == kernel) {
            let join = &mut self.joins[j];
            join.rounds += 1;
            if join.rounds == 1 {
                join.started = Some(Instant::now());
            }
            if self.parts.len() > 1 && !self.joins[j].through_host && self.host_join_due(self.joins[j]) {
                self.joins[j].through_host = true;
                let started = Instant::now();
                self.join_through_host(j)?;
                self.stats.sync += started.elapsed();
                self.stats.host_joins += 1;
            }
        } else {
            self.joins.iter_mut().for_each(|join| *join = JoinProgress::default());
        }
        Ok(())
    }

    /// Whether a join whose next round is about to start goes through the host first: after
    /// `host_join_after` rounds where that is set, else once the rounds so far cost at least
    /// what the host's join would ([`HOST_JOIN_FIXED`]) and two rounds more.
    fn host_join_due(&self, join: JoinProgress) -> bool {
        let done = join.rounds - 1;
        if let Some(after) = self.host_join_after {
            return done == after;
        }
        let Some(started) = join.started.filter(|_| done > 0) else { return false };
        let spent = started.elapsed();
        let slots: usize = self.shared.iter().map(Vec::len).sum();
        let host = HOST_JOIN_FIXED + HOST_JOIN_PER_SLOT * slots as u32;
        spent >= host + 2 * (spent / done)
    }

    /// Finishes set `j`'s join in one step: every part's shared slots (its ghosts and mirrors)
    /// with their roots (as global ids) and classes come to the host, which unions each slot's
    /// node with its root's and gives every slot the least class of its union; the next round
    /// on the devices takes those to the roots. Every class is a global id of one of its
    /// members, and the least member of a class that spans parts is a root whose tree holds
    /// shared slots, so the least class of a union is the class's least id. The parts gather
    /// and put at once, each by its driver.
    fn join_through_host(&mut self, j: usize) -> Result<()> {
        use rayon::prelude::*;
        let mut laps = super::trace::Laps::start("host join");
        self.flush()?;
        let join = self.module.set_joins[j];
        let gathered: Vec<Outcome> = self
            .crew
            .run(Job::JoinGather { roots: join.roots, root: join.root, class: join.class })
            .into_iter()
            .collect::<Result<_>>()?;
        // (node, root, class) of every shared slot, part by part.
        let mut slots: Vec<(u32, u32, u32)> = Vec::new();
        for (q, outcome) in gathered.iter().enumerate() {
            let (part, shared) = (&self.parts[q], &self.shared[q]);
            let (roots, classes) = outcome.words.split_at(shared.len());
            slots.extend(
                shared.iter().zip(roots).zip(classes).map(|((&l, &r), &c)| (part.global(l), r as u32, c as u32)),
            );
        }
        laps.lap("gathered");
        // The global ids met, numbered: as themselves where the slots are many beside the
        // graph's nodes, else densely, by sorting every slot's two ids with where they came from
        // (binary searches, one per id, took most of the time).
        let nodes = self.owner.len();
        let (number, numbers): (Vec<u32>, u32) = if 2 * slots.len() >= nodes / 16 {
            (slots.iter().flat_map(|&(node, root, _)| [node, root]).collect(), nodes.saturating_sub(1) as u32)
        } else {
            let mut met: Vec<(u32, u32)> = slots
                .iter()
                .enumerate()
                .flat_map(|(i, &(node, root, _))| [(node, 2 * i as u32), (root, 2 * i as u32 + 1)])
                .collect();
            met.par_sort_unstable();
            let mut number = vec![0u32; met.len()];
            let mut numbers = 0u32;
            for (k, &(id, at)) in met.iter().enumerate() {
                if k > 0 && id != met[k - 1].0 {
                    numbers += 1;
                }
                number[at as usize] = numbers;
            }
            (number, numbers)
        };
        let mut parent: Vec<u32> = (0..=numbers).collect();
        fn find(parent: &mut [u32], mut u: u32) -> u32 {
            while parent[u as usize] != u {
                let grand = parent[parent[u as usize] as usize];
                parent[u as usize] = grand;
                u = grand;
            }
            u
        }
        for pair in number.chunks_exact(2) {
            let (a, b) = (find(&mut parent, pair[0]), find(&mut parent, pair[1]));
            if a != b {
                parent[a.max(b) as usize] = a.min(b);
            }
        }
        let mut least = vec![u32::MAX; parent.len()];
        let unions: Vec<u32> = number.chunks_exact(2).map(|pair| find(&mut parent, pair[0])).collect();
        for (&u, &(_, _, class)) in unions.iter().zip(&slots) {
            least[u as usize] = least[u as usize].min(class);
        }
        let mut words = Vec::with_capacity(self.shared.len());
        let mut at = 0;
        for shared in &self.shared {
            words.push(unions[at..at + shared.len()].iter().map(|&u| u64::from(least[u as usize])).collect());
            at += shared.len();
        }
        laps.lap("unioned");
        for outcome in self.crew.run(Job::JoinPut { class: join.class, words }) {
            outcome?;
        }
        laps.lap("put");
        Ok(())
    }

    /// Whether the asynchronous mode's loops run in a fused worker kernel on every GPU at once
    /// ([`super::Worker::Fused`]), where the region allows it: every part is a GPU reaching the
    /// others, and neither soft priorities, a ring topology nor jitter is asked for (the
    /// host-driven mode makes those).
    fn fused_worker(&self) -> bool {
        self.mode == super::Mode::Async
            && self.worker == super::Worker::Fused
            && self.device_regions != super::DeviceRegions::Never
            && self.priority_delta.is_none()
            && self.topology == asynchronous::Topology::Direct
            && self.jitter.is_none()
    }

    /// A loop's rounds: the most invocations of `kernel` any part made since `before`.
    fn rounds_since(&self, kernel: KernelId, before: &[u64]) -> u64 {
        self.invocations(&[kernel]).iter().zip(before).map(|(after, before)| after - before).max().unwrap_or(0)
    }

    /// Every part's lists for regions exchanging on the devices, made the first time.
    fn peer_lists(&mut self) -> Vec<std::sync::Arc<peer::Lists>> {
        if self.peer_lists.is_empty() {
            self.peer_lists = peer::Lists::of_every_part(&self.links, &self.mirrors);
        }
        self.peer_lists.clone()
    }

    /// Whether outlined region `stmt` runs on every part at once, exchanging on the devices
    /// (as far as the program and the choice of regions say; each part may still decline).
    fn exchanges_on_devices(&self, stmt: &grail_ir::Stmt) -> bool {
        let wanted = match self.device_regions {
            super::DeviceRegions::Never => false,
            super::DeviceRegions::Always => true,
            super::DeviceRegions::Auto => peer::has_worklist_loop(stmt),
        };
        wanted && peer::obstacle(stmt, &self.merges, &self.module.over_slots, self.parts.len()).is_none()
    }

    /// The node properties parts exchange, in id order: those some kernel writes through other
    /// nodes than its items, and those kernels read through ghosts.
    fn exchanged_properties(&self) -> Vec<PropertyId> {
        let written = |p: usize| self.merges.iter().flatten().any(|w| w.remote && w.property.index() == p);
        (0..self.module.properties.len())
            .filter(|&p| self.module.properties[p].owner == Owner::Node && (self.remotely_read[p] || written(p)))
            .map(|p| PropertyId(p as u32))
            .collect()
    }

    /// The defaults kernel as a superstep with nothing to send: every part runs it over its
    /// ghosts too (they get their owners' values, which depend on the node alone), and records
    /// the words its ghosts and mirrors now hold of the properties it writes that parts
    /// exchange. (Otherwise the next exchange would copy every ghost's initial value to it: on
    /// an R-MAT graph of 2^23 nodes over four GPUs, 9.3 M words.)
    fn invoke_defaults(&mut self, kernel: KernelId, args: &[Value]) -> Result<Option<Value>> {
        self.flush()?;
        let started = Instant::now();
        let writes = grail_ir::analysis::kernel_property_writes(self.module, kernel);
        let mut properties = self.exchanged_properties();
        properties.retain(|p| writes[p.index()].any());
        let job = Job::Defaults { kernel, args: self.part_args(kernel, args)?, properties };
        let results: Vec<Outcome> = self.crew.run(job).into_iter().collect::<Result<_>>()?;
        self.stats.steps += 1;
        self.stats.compute += started.elapsed();
        if super::trace::on() {
            let name = &self.module.kernels[kernel.index()].name;
            super::trace::step(self.stats.steps, name, started.elapsed(), Duration::ZERO, [0; 3]);
        }
        // A defaults kernel reduces nothing (it is made from the initialisers).
        Ok(results.into_iter().next().and_then(|outcome| outcome.result))
    }

    /// The properties a kernel wrote (`written`), as the exchange treats them.
    fn synced(&self, written: &[Written]) -> Vec<Synced> {
        written
            .iter()
            .map(|w| Synced {
                property: w.property,
                merge: w.merge,
                remote: w.remote,
                read: self.remotely_read[w.property.index()],
            })
            .collect()
    }

    /// Whether `kernel`'s superstep is not waited for ([`PartRun::invoke_deferred`]): the run
    /// defers steps (every part a GPU reaching every other), nothing is left to merge from the
    /// last superstep (its inboxes are free), the kernel pushes nothing, reduces nothing and
    /// runs over the nodes, what it writes through other nodes merges by a built-in operator
    /// and no kernel reads it through ghosts (nothing goes back to the ghosts), and every part
    /// can run it reading nothing back: Afforest's neighbour rounds, a labelling pass.
    ///
    /// (A kernel that reduces and sends, PageRank's scatter, could have its changes merged on
    /// the devices while it runs and wait once, for the reduction: on four H200s that made
    /// PageRank on road24 7% slower, 7.77-7.91 -> 8.33-8.41 ms, so such a kernel goes as usual.)
    fn defers(&self, kernel: KernelId, merges: &[Written], split: bool, over_slots: bool) -> bool {
        self.defer_steps
            && self.pending.is_none()
            && !split
            && !over_slots
            && self.module.kernels[kernel.index()].reduction.is_none()
            && merges.iter().all(|m| !self.remotely_read[m.property.index()] && !matches!(m.merge, Merge::Custom(_)))
            && self.runs.iter().all(|run| run.defers(kernel))
    }

    /// Merges the last superstep's changes that were left for later, before anything looks at
    /// the parts.
    fn flush(&mut self) -> Result<()> {
        if let Some(exchanged) = self.pending.take() {
            for outcome in self.crew.run(Job::Merge(exchanged)) {
                outcome?;
            }
        }
        Ok(())
    }

    /// Synchronizes what a kernel wrote, after every part sent its pushed ghosts and its
    /// changed ghosts of the properties written through other nodes to their owners
    /// (`outcomes[q].pushes` by route, `outcomes[q].sent` by such property and route): each
    /// owner appends the pushes to its worklist, merges the changes and, for properties kernels
    /// read through ghosts, sends its words that its ghosts have not seen; each part then
    /// stores those in its ghosts ([`super::exchange`]).
    fn synchronize(&mut self, written: &[Written], outcomes: Vec<Outcome>, pushes_made: bool) -> Result<()> {
        let k = self.parts.len();
        let properties = self.synced(written);
        // What each owner received: counts[o][w][its route to q] = what q sent it.
        let mut counts = vec![vec![vec![0usize; k - 1]; properties.len()]; k];
        let mut received = 0;
        for (q, outcome) in outcomes.iter().enumerate() {
            let remote = properties.iter().enumerate().filter(|(_, s)| s.remote).map(|(w, _)| w);
            for (w, sent) in remote.zip(&outcome.sent) {
                for (i, &n) in sent.iter().enumerate() {
                    let o = peer(q, i);
                    counts[o][w][route_to(o, q)] = n;
                    received += n as u64;
                }
            }
        }
        self.stats.merged += received;
        let mut pushes = vec![vec![0usize; k - 1]; k];
        let mut forwarded = 0;
        for (q, outcome) in outcomes.iter().enumerate() {
            for (i, &n) in outcome.pushes.iter().enumerate() {
                let o = peer(q, i);
                pushes[o][route_to(o, q)] = n;
                forwarded += n as u64;
            }
        }
        self.stats.forwarded += forwarded;
        let read: Vec<Synced> = properties.iter().copied().filter(|s| s.read).collect();
        if received == 0 && forwarded == 0 && read.is_empty() {
            return Ok(());
        }
        if read.is_empty() && !pushes_made {
            // Nothing goes back to the ghosts and no worklist waits: the owners merge when the
            // parts next run (or are looked at).
            self.pending = Some(Exchanged { properties, counts, pushes, on_devices: Vec::new() });
            return Ok(());
        }
        let merged: Vec<Outcome> = self
            .crew
            .run(Job::Merge(Exchanged { properties, counts, pushes, on_devices: Vec::new() }))
            .into_iter()
            .collect::<Result<_>>()?;
        if read.is_empty() {
            return Ok(());
        }
        let mut counts = vec![vec![vec![0usize; k - 1]; read.len()]; k];
        let mut copied = 0;
        for (o, outcome) in merged.iter().enumerate() {
            for (w, sent) in outcome.sent.iter().enumerate() {
                for (i, &n) in sent.iter().enumerate() {
                    let q = peer(o, i);
                    counts[q][w][route_to(q, o)] = n;
                    copied += n as u64;
                }
            }
        }
        self.stats.copied += copied;
        if copied > 0 {
            let refresh = Exchanged { properties: read, counts, pushes: Vec::new(), on_devices: Vec::new() };
            for outcome in self.crew.run(Job::Refresh(refresh)) {
                outcome?;
            }
        }
        Ok(())
    }

    /// Adds the changes merged on the devices after deferred supersteps to the figures (read
    /// once, at the end; after [`Bsp::columns`], which merged the last of them).
    pub fn count_merged_on_devices(&mut self) -> Result<()> {
        if self.stats.unwaited == 0 {
            return Ok(());
        }
        for run in &mut self.runs {
            run.bind()?;
            self.stats.merged += run.merged_on_device()?;
        }
        self.runs[0].bind()
    }

    /// Every property's column in global ids, from the parts; the graph's weights empty where
    /// nothing writes them, as a run on one device leaves them (they are the graph's own, and
    /// gathering them back took seconds on R-MAT of 2^25 nodes over four GPUs).
    pub fn columns(&mut self) -> Result<Vec<Column>> {
        self.flush()?;
        let offsets = self.memory.out.offsets();
        let written = grail_ir::analysis::written_anywhere(self.module);
        let mut columns = Vec::with_capacity(self.module.properties.len());
        let mut words = Vec::new();
        for (p, property) in self.module.properties.iter().enumerate() {
            let id = PropertyId(p as u32);
            let ty = self.column_type(id);
            if property.is_weight && !written[p] {
                columns.push(column_from_words(ty, Vec::new()));
                continue;
            }
            let mut global =
                vec![
                    0u64;
                    if property.owner == Owner::Node { offsets.len() - 1 } else { offsets[offsets.len() - 1] as usize }
                ];
            for (q, part) in self.parts.iter().enumerate() {
                use rayon::prelude::*;
                // Every global slot is written by one part, and within it by one owned node.
                let target = SharedWords(global.as_mut_ptr());
                match property.owner {
                    Owner::Node => {
                        self.runs[q].bind()?;
                        self.runs[q].gather(id, Indices::Range(0, u64::from(part.num_owned())), &mut words)?;
                        normalize(ty, &mut words);
                        part.owned().par_iter().zip(words.par_iter()).with_min_len(1 << 14).for_each(|(&u, &w)| {
                            // SAFETY: `u` is a node of the graph (below `global`'s length), owned
                            // by this part alone and listed once.
                            unsafe { target.at(u as usize).write(w) }
                        });
                    }
                    _ => {
                        self.runs[q].bind()?;
                        self.runs[q].gather(id, Indices::Range(0, self.graphs[q].num_edges()), &mut words)?;
                        normalize(ty, &mut words);
                        let local = self.graphs[q].out().offsets();
                        part.owned().par_iter().enumerate().with_min_len(1 << 12).for_each(|(l, &u)| {
                            let (start, end) = (local[l] as usize, local[l + 1] as usize);
                            let g = offsets[u as usize] as usize;
                            // SAFETY: node `u`'s edges `g..g + end - start` lie within `global`
                            // and belong to `u` alone, which this part owns.
                            unsafe {
                                std::ptr::copy_nonoverlapping(words[start..end].as_ptr(), target.at(g), end - start)
                            };
                        });
                    }
                }
            }
            columns.push(column_from_words(ty, global));
        }
        Ok(columns)
    }
}

/// Words of a column being filled by several threads at once, each at its own slots.
#[derive(Clone, Copy)]
struct SharedWords(*mut u64);
// SAFETY: the threads write disjoint slots (see the uses), and the vector outlives them.
unsafe impl Send for SharedWords {}
unsafe impl Sync for SharedWords {}

impl SharedWords {
    /// Slot `i`'s address.
    ///
    /// # Safety
    /// `i` is within the vector.
    unsafe fn at(self, i: usize) -> *mut u64 {
        // SAFETY: as the caller promises.
        unsafe { self.0.add(i) }
    }
}

/// A column of type `ty` from [`crate::host::memory::ColumnRef::bits`] words.
fn column_from_words(ty: PropertyType, words: Vec<u64>) -> Column {
    use rayon::prelude::*;
    match ty {
        PropertyType::Bool => Column::Bool(words.into_par_iter().map(|w| w != 0).collect()),
        PropertyType::I32 => Column::I32(words.into_par_iter().map(|w| w as u32 as i32).collect()),
        PropertyType::I64 => Column::I64(words.into_par_iter().map(|w| w as i64).collect()),
        PropertyType::U32 => Column::U32(words.into_par_iter().map(|w| w as u32).collect()),
        PropertyType::U64 => Column::U64(words),
        PropertyType::F32 => Column::F32(words.into_par_iter().map(|w| f32::from_bits(w as u32)).collect()),
        PropertyType::F64 => Column::F64(words.into_par_iter().map(f64::from_bits).collect()),
    }
}

fn no_collections() -> RuntimeError {
    RuntimeError::Unsupported("collections in a partitioned run".into())
}

impl Machine for Bsp<'_, '_> {
    fn memory(&self) -> &Memory<'_> {
        &self.memory
    }

    fn params(&self) -> &[Value] {
        self.params
    }

    fn print(&mut self, line: &str) -> Result<()> {
        self.out.write_all(line.as_bytes()).map_err(RuntimeError::Output)
    }

    fn property_len(&self, property: PropertyId) -> usize {
        match self.module.properties[property.index()].owner {
            Owner::Node => self.memory.out.num_nodes() as usize,
            _ => self.memory.out.num_edges() as usize,
        }
    }

    fn read_property(&mut self, property: PropertyId, index: usize) -> Result<Value> {
        self.flush()?;
        let (q, local) = match self.module.properties[property.index()].owner {
            Owner::Node => {
                let (o, l) = self.home(index as u32);
                (o, l as usize)
            }
            _ => self.edge_home(index as u64),
        };
        self.runs[q].bind()?;
        self.runs[q].read_property(property, local)
    }

    fn write_property(&mut self, property: PropertyId, index: usize, value: &Value) -> Result<bool> {
        self.flush()?;
        if self.module.properties[property.index()].owner != Owner::Node {
            let (q, local) = self.edge_home(index as u64);
            self.runs[q].bind()?;
            return self.runs[q].write_property(property, local, value);
        }
        let u = index as u32;
        let (o, l) = self.home(u);
        self.runs[o].bind()?;
        if !self.runs[o].write_property(property, l as usize, value)? {
            return Ok(false);
        }
        let mut word = Vec::new();
        self.runs[o].gather(property, Indices::List(&[l]), &mut word)?;
        normalize(self.column_type(property), &mut word);
        for q in (0..self.parts.len()).filter(|&q| q != o) {
            let Some(local) = self.parts[q].local(u) else { continue };
            let links = &self.links[q];
            let position = links.position[(local - links.owned) as usize];
            self.runs[q].bind()?;
            self.runs[q].put(property, &links.ghosts, &[position], &word)?;
        }
        Ok(true)
    }

    /// Each part's owned nodes get their values; its ghosts get theirs through `put`, which also
    /// records them (so the first exchange sees no change where nothing changed).
    fn fill_property(&mut self, property: PropertyId, table: &Table) -> Result<()> {
        self.flush()?;
        let ty = self.column_type(property);
        let words = table.words();
        for (q, part) in self.parts.iter().enumerate() {
            let owned: Vec<u64> = part.owned().iter().map(|&u| words[u as usize]).collect();
            let owned = Table::from_words(table.leaves().to_vec(), owned)?;
            self.runs[q].bind()?;
            self.runs[q].fill_property(property, &owned)?;
            let links = &self.links[q];
            let ghosts: Vec<u64> = links.ghosts.iter().map(|&g| normal(ty, words[part.global(g) as usize])).collect();
            let positions: Vec<u32> = (0..ghosts.len() as u32).collect();
            self.runs[q].put(property, &links.ghosts, &positions, &ghosts)?;
        }
        Ok(())
    }

    fn parent(&mut self, _index: usize) -> Result<u32> {
        Err(RuntimeError::Unsupported("union-find sets in a partitioned run".into()))
    }

    fn set_parent(&mut self, _index: usize, _parent: u32) -> Result<()> {
        Err(RuntimeError::Unsupported("union-find sets in a partitioned run".into()))
    }

    fn invoke(&mut self, kernel: KernelId, args: &[Value]) -> Result<Option<Value>> {
        if self.local_defaults == Some(kernel) && self.parts.len() > 1 {
            return self.invoke_defaults(kernel, args);
        }
        self.count_join_round(kernel)?;
        super::trace::host_resumes();
        let started = Instant::now();
        let declared = &self.module.kernels[kernel.index()];
        let merges = self.merges[kernel.index()].clone();
        // Ghosts change only where the kernel writes a property through another node than its
        // item.
        let diff: Vec<PropertyId> = merges.iter().filter(|m| m.remote).map(|m| m.property).collect();
        let split = declared.uses_worklist();
        let over_slots = self.module.over_slots.contains(&kernel);
        let deferred = self.defers(kernel, &merges, split, over_slots);
        let mut outcomes = self.run_parts(kernel, args, diff.clone(), split, over_slots, deferred)?;
        let computed = Instant::now();
        self.stats.compute += computed - started;
        self.stats.steps += 1;
        if deferred {
            // Nothing came back: the owners merge on their devices when the parts next run.
            if !diff.is_empty() {
                // No counts or pushes on the host: the merges read the senders' counts.
                self.pending = Some(Exchanged {
                    properties: self.synced(&merges),
                    counts: Vec::new(),
                    pushes: Vec::new(),
                    on_devices: outcomes.iter().map(|outcome| outcome.deferred.unwrap_or_default()).collect(),
                });
            }
            self.stats.unwaited += 1;
            if super::trace::on() {
                super::trace::step(self.stats.steps, &declared.name, computed - started, Duration::ZERO, [0; 3]);
            }
            super::trace::host_from_now();
            return Ok(None);
        }
        let results: Vec<Option<Value>> = outcomes.iter_mut().map(|outcome| outcome.result.take()).collect();
        let moved_before = [self.stats.merged, self.stats.copied, self.stats.forwarded];
        self.synchronize(&merges, outcomes, split)?;
        if super::trace::on() {
            let moved = [self.stats.merged, self.stats.copied, self.stats.forwarded];
            super::trace::step(
                self.stats.steps,
                &declared.name,
                computed - started,
                computed.elapsed(),
                std::array::from_fn(|i| moved[i] - moved_before[i]),
            );
        }
        let result = match declared.reduction {
            Some((op, ty)) => {
                let mut total: Option<Value> = None;
                for value in results.into_iter().flatten() {
                    total = Some(match total {
                        None => value,
                        Some(sum) => combine(op, &sum, &value).map_err(RuntimeError::program)?,
                    });
                }
                match total {
                    Some(total) => Some(ops::cast(&total, ty).map_err(RuntimeError::program)?),
                    None => None,
                }
            }
            None => None,
        };
        self.stats.sync += computed.elapsed();
        super::trace::host_from_now();
        Ok(result)
    }

    fn run_worklist_loop(
        &mut self,
        kernel: KernelId,
        args: &[Value],
        region: Option<OutlineId>,
        locals: &[Value],
    ) -> Result<Option<u64>> {
        self.flush()?;
        if self.mode != super::Mode::Async {
            return Ok(None);
        }
        // A node pushed to its owner may run before the new values of the ghosts it reads
        // arrive there. Where the pushing part wrote those values into its own nodes (a pull:
        // each node lowers its own label from its neighbours' and pushes them), its boundary
        // values go out before its pushes (`asynchronous::drive`), so they arrive first.
        // (Where a kernel reads through ghosts what it writes into them, as BFS's `next <
        // v.level` before its `atomic_min`, a stale ghost only costs an atomic the owner's
        // merge undoes.)
        let pulls = self.merges[kernel.index()].iter().any(|w| !w.remote && self.remotely_read[w.property.index()]);
        let started = Instant::now();
        // The loop's rounds are the most any part made.
        let before = self.invocations(&[kernel]);
        // The fused worker exchanges on the devices in an order of its own: it takes no pulls.
        if let Some(region) = region.filter(|_| self.fused_worker() && !pulls) {
            // The body runs on the host once per round, so the locals the parts leave go unused.
            let mut scratch = locals.to_vec();
            if self.run_on_devices(region, &mut scratch, true)? {
                self.stats.async_loops += 1;
                return Ok(Some(self.rounds_since(kernel, &before)));
            }
        }
        let written = self.merges[kernel.index()]
            .iter()
            .map(|w| asynchronous::Written {
                property: w.property,
                ty: self.column_type(w.property),
                merge: w.merge,
                remote: w.remote,
                read: self.remotely_read[w.property.index()],
            })
            .collect();
        let routing = self
            .links
            .iter()
            .zip(&self.mirrors)
            .map(|(links, mirrors)| asynchronous::Routing {
                owned: links.owned,
                ghost_owner: links.ghosts.iter().map(|&g| links.owner_of[(g - links.owned) as usize]).collect(),
                ghost_at: links.at_owner.clone(),
                ghost_position: links.position.clone(),
                mirror_target: mirrors.targets.clone(),
            })
            .collect();
        let mut state = asynchronous::AsyncState::new(
            kernel,
            self.part_args(kernel, args)?,
            written,
            routing,
            self.jitter,
            self.topology,
        );
        state.region = region.map(|region| (region, locals.to_vec()));
        state.priority = self.priority_delta.and_then(|delta| asynchronous::Priority::of(&state.written, delta));
        let state = std::sync::Arc::new(state);
        for outcome in self.crew.run(Job::Async(state.clone())) {
            outcome?;
        }
        if let Some(error) = state.take_error() {
            return Err(error);
        }
        let count = |c: &std::sync::atomic::AtomicU64| c.load(std::sync::atomic::Ordering::Relaxed);
        self.stats.steps += count(&state.invocations);
        self.stats.merged += count(&state.merged);
        self.stats.copied += count(&state.copied);
        self.stats.forwarded += count(&state.forwarded);
        self.stats.deferred += count(&state.deferred);
        self.stats.relayed += state.relayed();
        self.stats.async_loops += 1;
        let exchanging = state.exchanging.iter().map(count).max().map_or(Duration::ZERO, Duration::from_nanos);
        self.account(started.elapsed(), exchanging);
        Ok(Some(self.rounds_since(kernel, &before)))
    }

    fn collection_add(&mut self, _id: CollectionId, _value: &Value) -> Result<Value> {
        Err(no_collections())
    }

    fn collection_read(&mut self, _id: CollectionId) -> Result<(Table, Vec<bool>)> {
        Err(no_collections())
    }

    fn collection_clear(&mut self, _id: CollectionId) -> Result<()> {
        Err(no_collections())
    }

    fn collection_fill(&mut self, _id: CollectionId, _table: &Table) -> Result<()> {
        Err(no_collections())
    }

    fn collection_len(&mut self, _id: CollectionId) -> Result<u32> {
        Err(no_collections())
    }

    fn push_worklist(&mut self, items: Vec<u32>) -> Result<()> {
        self.flush()?;
        let mut lists: Vec<Vec<u32>> = vec![Vec::new(); self.parts.len()];
        for u in items {
            if u as usize >= self.owner.len() {
                return Err(RuntimeError::program(format!(
                    "a worklist item {u} is not a node of the graph, which has {} nodes",
                    self.owner.len()
                )));
            }
            let (o, l) = self.home(u);
            lists[o].push(l);
        }
        for (run, list) in self.runs.iter_mut().zip(lists) {
            run.bind()?;
            run.push_worklist(list)?;
        }
        Ok(())
    }

    fn pop_worklist(&mut self) {
        for run in &mut self.runs {
            // A GPU whose context cannot be made current has failed already; its list goes with it.
            if run.bind().is_ok() {
                run.pop_worklist();
            }
        }
    }

    fn worklist_is_empty(&mut self) -> Result<bool> {
        self.flush()?;
        for run in &mut self.runs {
            run.bind()?;
            if !run.worklist_is_empty()? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Runs the region on every part at once, exchanging on the devices, where every part is
    /// a GPU reaching the others and the region's host code means the same on every part
    /// ([`super::peer`]); otherwise the interpreter runs it superstep by superstep.
    fn run_outlined(&mut self, region: OutlineId, locals: &mut [Value]) -> Result<bool> {
        self.flush()?;
        self.run_on_devices(region, locals, false)
    }

    fn outlined_region(&mut self, open: bool) {
        for run in &mut self.runs {
            run.outlined_region(open);
        }
    }
}

impl Bsp<'_, '_> {
    /// Runs outlined region `region` on every part at once, exchanging on the devices: in
    /// supersteps, or with `rings` asynchronously (a worklist loop's fused worker); false, with
    /// nothing run, where the parts or the region do not allow it.
    fn run_on_devices(&mut self, region: OutlineId, locals: &mut [Value], rings: bool) -> Result<bool> {
        let k = self.parts.len();
        let Some(stmt) = grail_ir::opt::outline::find_region(&self.module.main.block, region) else {
            return Ok(false);
        };
        if !self.exchanges_on_devices(stmt) {
            return Ok(false);
        }
        // The region's time includes making the parts ready.
        let started = Instant::now();
        let properties = peer::synced_properties(stmt, &self.merges, &self.remotely_read);
        let types: Vec<PropertyType> = properties.iter().map(|&p| self.column_type(p)).collect();
        let mut addresses = Vec::with_capacity(k);
        for q in 0..k {
            let request = peer::Request {
                region,
                properties: &properties,
                ghosts: self.links[q].ghosts(),
                mirrors: self.mirrors[q].locals(),
                parts: k,
                barrier: q == 0,
                grid: self.region_grid,
                rings,
            };
            self.runs[q].bind()?;
            match self.runs[q].peer_buffers(&request) {
                Ok(Some(a)) => addresses.push(a),
                Ok(None) => return Ok(false),
                // No room for the region's exchange on this part: the run's regions go
                // superstep by superstep from the host.
                Err(RuntimeError::OutOfMemory { .. }) => {
                    self.device_regions = super::DeviceRegions::Never;
                    return Ok(false);
                }
                Err(error) => return Err(error),
            }
        }
        let lists = self.peer_lists();
        let plan = peer::Plan {
            region: stmt,
            merges: &self.merges,
            remotely_read: &self.remotely_read,
            properties: &properties,
            types: &types,
            lists: &lists,
            start: std::sync::Arc::default(),
        };
        let tables = if rings {
            match (0..k).map(|q| plan.async_table(q, &addresses)).collect::<std::result::Result<Vec<_>, _>>() {
                Ok(tables) => tables,
                Err(_) => return Ok(false),
            }
        } else {
            (0..k).map(|q| plan.table(q, &addresses)).collect()
        };
        let kernels = grail_ir::opt::outline::kernels_of(stmt);
        let before = self.invocations(&kernels)[0];
        let outcomes = self.crew.run(Job::Region { region, locals: locals.to_vec(), tables });
        let mut first = None;
        let mut stopped = false;
        let mut exchanging = Duration::ZERO;
        for outcome in outcomes {
            // A part's own failure, not the stop it caused on the others, is the error.
            let outcome = outcome?;
            stopped |= outcome.stopped;
            exchanging = exchanging.max(outcome.exchanging);
            if first.is_none() {
                first = Some(outcome);
            }
        }
        let first = first.expect("a partitioned run has parts");
        if stopped {
            return Err(RuntimeError::program(
                "a part of the partitioned graph stopped the others in an outlined region without reporting why",
            ));
        }
        locals.clone_from_slice(&first.locals);
        self.stats.steps += self.invocations(&kernels)[0] - before;
        self.account(started.elapsed(), exchanging);
        self.stats.device_regions += 1;
        Ok(true)
    }
}

/// Each part's local graph (owned nodes, then ghosts with empty rows; its in-edges where the
/// part has them), moved out of the part.
pub(crate) fn part_graphs(parts: &mut [Part]) -> Vec<Graph> {
    use rayon::prelude::*;
    parts.par_iter_mut().map(Part::take_graph).collect()
}

#[cfg(test)]
mod tests {
    use grail_graph::generate::{GenOptions, Generator, generate};
    use grail_graph::partition::{Method, partition};

    use super::*;

    /// What the exchange relies on: part `q`'s ghosts owned by part `o` are, in the same order,
    /// part `o`'s mirror entries for `q` (so a change's position within its route's range means
    /// the same node at both ends), and every route's peer is found back from either end.
    #[test]
    fn a_parts_ghosts_of_an_owner_are_the_owners_mirrors_for_it_in_order() {
        let graph =
            generate(&Generator::graph500(10), &GenOptions::default(), false, &grail_graph::NoProgress).unwrap();
        for k in 1..=5u32 {
            for method in [Method::Ranges, Method::Random] {
                let partitioning = partition(&graph, k, method, 3).unwrap();
                let parts = partitioning.parts(&graph);
                let links = Links::of(&parts, partitioning.owner());
                let mirrors = Mirrors::of(&links);
                let k = k as usize;
                for q in 0..k {
                    assert!(links[q].group(q).is_empty(), "a part holds no ghosts of its own nodes");
                    for o in (0..k).filter(|&o| o != q) {
                        let ghosts = links[q].group(o);
                        let mirrored = mirrors[o].group(q);
                        assert_eq!(ghosts.len(), mirrored.len(), "{k} parts by {method:?}: {q} and {o}");
                        assert_eq!(&links[q].at_owner[ghosts.clone()], &mirrors[o].locals()[mirrored]);
                        for i in ghosts {
                            let global = parts[q].local_to_global()[links[q].ghosts()[i] as usize];
                            assert_eq!(partitioning.owner()[global as usize] as usize, o);
                        }
                        assert_eq!(peer(q, route_to(q, o)), o);
                    }
                }
            }
        }
    }

    /// A part's shared slots: each of its nodes that another part holds as a ghost, once, in
    /// order, then its ghosts (what `JoinPut` relies on to find each list's words).
    #[test]
    fn a_parts_shared_slots_are_its_mirrors_once_then_its_ghosts() {
        let graph = generate(&Generator::graph500(9), &GenOptions::default(), false, &grail_graph::NoProgress).unwrap();
        for k in 2..=4u32 {
            let partitioning = partition(&graph, k, Method::Random, 5).unwrap();
            let parts = partitioning.parts(&graph);
            let links = Links::of(&parts, partitioning.owner());
            let mirrors = Mirrors::of(&links);
            for (q, (mirrors, links)) in mirrors.iter().zip(&links).enumerate() {
                let shared = mirrors.shared_slots(links);
                let mut expected: Vec<u32> = mirrors.locals().to_vec();
                expected.sort_unstable();
                expected.dedup();
                // From three parts on, some node is a ghost on two others: it is shared once.
                assert!(k < 3 || expected.len() < mirrors.locals().len(), "{k} parts: part {q}");
                let owned = links.owned();
                assert!(expected.iter().all(|&l| l < owned));
                assert!(links.ghosts().iter().all(|&l| l >= owned));
                expected.extend_from_slice(links.ghosts());
                assert_eq!(shared, expected, "{k} parts: part {q}");
            }
        }
    }
}
