//! Graphs resident on a GPU: [`DeviceGraph`] holds a graph's arrays in device memory so that
//! runs of any number of programs on that graph (many sources, many algorithms) copy nothing of
//! it again. The out-CSR and the weights go up when it is made; the arrays only some programs
//! read (the reverse CSR, the in-edges' ids, the edges' sources) go up the first time a program
//! needs them. Every upload goes through pinned staging buffers.
//!
//! A resident graph also grows: [`DeviceGraph::insert`] adds a batch of edges on the device
//! (dynamic algorithms' batches) as the host added it to its copy with room per node
//! ([`grail_graph::Csr::insert`]), so that only the batch (and the rows it moved) go up.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use cudarc::driver::{CudaContext, CudaFunction};
use grail_graph::Graph;
use grail_graph::insert::Insertion;
use grail_graph::room::Inserted;
use grail_ir::{Module, Type, analysis};
use rayon::prelude::*;

use super::buffer::{DeviceBuffer, Staging, arg, call, launch, synchronize};
use super::device::Device;
use super::executor::{GpuProgram, ResidentTable};
use crate::error::{Result, RuntimeError};

/// A graph's arrays on one device (see the module documentation).
pub struct DeviceGraph {
    context: Arc<CudaContext>,
    ordinal: usize,
    /// The graph it holds: node and edge counts and the address of its offsets array, so that a
    /// run on another graph is refused rather than computed on the wrong arrays.
    identity: (u32, u64, usize),
    pub(crate) offsets: DeviceBuffer,
    /// Where rows end, for a graph with room after its rows (`None`: packed, a row ends where
    /// the next begins).
    ends: Option<DeviceBuffer>,
    pub(crate) targets: DeviceBuffer,
    /// The edge weights as the graph stores them (`u32`, or `f32` bits for real weights), or,
    /// for an unweighted graph, `u32` ones made here the first time a program reads them.
    pub(crate) weights: Option<DeviceBuffer>,
    pub(crate) reverse: Option<(DeviceBuffer, DeviceBuffer)>,
    pub(crate) in_edge_ids: Option<DeviceBuffer>,
    pub(crate) edge_sources: Option<DeviceBuffer>,
    upload: Duration,
    /// Pinned buffers for the uploads, kept for the arrays a later program needs.
    staging: Option<Staging>,
}

impl std::fmt::Debug for DeviceGraph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceGraph")
            .field("device", &self.ordinal)
            .field("nodes", &self.identity.0)
            .field("edges", &self.identity.1)
            .finish_non_exhaustive()
    }
}

fn identity(graph: &Graph) -> (u32, u64, usize) {
    (graph.num_nodes(), graph.num_edges(), graph.out().offsets().as_ptr() as usize)
}

impl DeviceGraph {
    /// Copies `graph`'s out-CSR and weights to `device`.
    pub fn new(device: &Device, graph: &Graph) -> Result<DeviceGraph> {
        let started = Instant::now();
        let context = device.context().clone();
        context.bind_to_thread().map_err(|e| call("cuCtxSetCurrent", e))?;
        let out = graph.out();
        let mut staging = None;
        let arrays = OutArrays::upload(&context, out, &mut staging)?;
        Ok(DeviceGraph {
            ordinal: device.info().ordinal,
            identity: identity(graph),
            offsets: arrays.offsets,
            ends: arrays.ends,
            targets: arrays.targets,
            weights: arrays.weights,
            reverse: None,
            in_edge_ids: None,
            edge_sources: None,
            upload: started.elapsed(),
            staging,
            context,
        })
    }

    /// The device address of the array of rows' ends (`out_ends` in generated code): the
    /// offsets shifted by one on a packed graph.
    pub(crate) fn ends_ptr(&self) -> u64 {
        self.ends.as_ref().map_or(self.offsets.ptr() + 8, DeviceBuffer::ptr)
    }

    /// The device it lives on.
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// The time spent making the graph resident so far: building what the host had to build
    /// and copying it up.
    pub fn upload_time(&self) -> Duration {
        self.upload
    }

    /// Grows the resident graph on the device so that it holds `after`: the graph it held, with
    /// room per node, into which the host inserted a batch ([`grail_graph::Graph::insert_edges`],
    /// whose report is `inserted`). The device takes the same steps: the rows the batch outgrew
    /// move to the end of the edge arrays, then each inserted edge goes after its row's last, so
    /// that both copies hold the same arrays (`--verify` checks it). Only the batch and the moved
    /// rows' places go up, unless the host laid the rows out afresh (its first batch, or when
    /// half the slots went unused): then the arrays go up whole. The arrays made for other
    /// programs (the reverse CSR, the in-edges' ids, the edges' sources) are dropped, and made
    /// again for the new graph when a program reads them. `program` is any program loaded on
    /// this graph's device: the kernels that place the edges are part of every program's runtime.
    ///
    /// Returns the batch as it went up: a table of (source, target, weight) rows on the device,
    /// for a program that takes the batch as an input collection of such rows (`struct { src:
    /// Node, dst: Node, weight: u32 }`) to take without copying it up again.
    pub fn insert(&mut self, program: &GpuProgram, after: &Graph, inserted: &Inserted) -> Result<ResidentTable> {
        let started = Instant::now();
        let (nodes, edges, _) = self.identity;
        let batch = &inserted.placed;
        if program.device().info().ordinal != self.ordinal {
            return Err(RuntimeError::program(format!(
                "the program is loaded on device {}, the resident graph lives on device {}",
                program.device().info().ordinal,
                self.ordinal
            )));
        }
        if after.num_nodes() != nodes || after.num_edges() != edges + batch.len() as u64 {
            return Err(RuntimeError::program(format!(
                "inserting {} edges into the resident graph ({nodes} nodes, {edges} edges) cannot give a graph of {} \
                 nodes and {} edges",
                batch.len(),
                after.num_nodes(),
                after.num_edges()
            )));
        }
        let out = after.out();
        if out.has_real_weights() {
            return Err(RuntimeError::program("a resident graph with real weights cannot take inserted edges"));
        }
        if out.is_packed() || out.edge_slots() != inserted.slots {
            return Err(RuntimeError::program(
                "the graph given is not the one the insertion's report describes (a graph with room per node)",
            ));
        }
        self.context.bind_to_thread().map_err(|e| call("cuCtxSetCurrent", e))?;
        let count = batch.len();
        let table = self.upload_batch(batch, nodes)?;
        let uploaded = started.elapsed();
        // What was made from the old edges describes another graph now.
        self.reverse = None;
        self.in_edge_ids = None;
        self.edge_sources = None;
        if inserted.relaid || self.ends.is_none() {
            // Laid out afresh: every array changed.
            let arrays = OutArrays::upload(&self.context, out, &mut self.staging)?;
            (self.offsets, self.ends, self.targets, self.weights) =
                (arrays.offsets, arrays.ends, arrays.targets, arrays.weights);
            self.identity = identity(after);
            return Ok(table);
        }
        if out.is_weighted() && self.weights.is_none() {
            let slots = self.targets.bytes() / 4;
            self.weights = Some(DeviceBuffer::filled_u32(&self.context, slots, 1, "the unit edge weights")?);
        }
        // The edge arrays grow as the host's did (ahead of need, so rarely).
        let slots = inserted.slots as usize;
        if self.targets.bytes() < slots * 4 {
            let grown = |old: &DeviceBuffer, what: &str| -> Result<DeviceBuffer> {
                let new = DeviceBuffer::new(&self.context, slots * 4, what)?;
                new.copy_from(old, old.bytes())?;
                Ok(new)
            };
            self.targets = grown(&self.targets, "the graph's edges")?;
            if let Some(weights) = &self.weights {
                self.weights = Some(grown(weights, "the graph's weights")?);
            }
        }
        let ends = self.ends.as_ref().expect("a graph with room has its rows' ends");
        let (starts_ptr, ends_ptr, targets_ptr) = (self.offsets.ptr(), ends.ptr(), self.targets.ptr());
        let weights_ptr = self.weights.as_ref().map_or(0, DeviceBuffer::ptr);
        let grid = |items: u64| items.div_ceil(u64::from(INSERT_BLOCK)).clamp(1, 8192) as u32;
        let moves = &inserted.moves;
        // The moved rows' list, kept until the kernels have run (the synchronize below).
        let _moved = if moves.is_empty() {
            None
        } else {
            let words: Vec<u64> = moves.iter().flat_map(|m| [u64::from(m.node), m.from, m.to, m.len]).collect();
            let buffer = DeviceBuffer::from_slice_staged(&self.context, &words, "the moved rows", &mut self.staging)?;
            let (moves_ptr, moved) = (buffer.ptr(), moves.len() as u32);
            // SAFETY: (uint64_t *starts, uint64_t *ends, uint32_t *targets, uint32_t *weights,
            // const uint64_t *moves, uint32_t count): the rows' arrays hold a word per node, the
            // edge arrays `slots` words, every move's source and place lie within them (the host
            // made the same moves on arrays of the same length); weights may be null.
            unsafe {
                launch(
                    &program.room_move,
                    grid(32 * u64::from(moved)),
                    INSERT_BLOCK,
                    &mut [
                        arg(&starts_ptr),
                        arg(&ends_ptr),
                        arg(&targets_ptr),
                        arg(&weights_ptr),
                        arg(&moves_ptr),
                        arg(&moved),
                    ],
                )?
            };
            Some(buffer)
        };
        if count > 0 {
            let count32 = count as u32;
            let (src, dst, weight) =
                (table.buffer.ptr(), table.buffer.ptr() + 4 * count as u64, table.buffer.ptr() + 8 * count as u64);
            // SAFETY: (const uint64_t *ends, uint32_t *targets, uint32_t *weights, const uint32_t
            // *src, const uint32_t *dst, const uint32_t *weight, uint32_t count): the batch's
            // columns hold `count` words, its sources sorted and below the node count (checked
            // when it went up); each row has room for its inserted edges (the host's insertion
            // made it); weights may be null.
            unsafe {
                launch(
                    &program.room_place,
                    grid(count as u64),
                    INSERT_BLOCK,
                    &mut [
                        arg(&ends_ptr),
                        arg(&targets_ptr),
                        arg(&weights_ptr),
                        arg(&src),
                        arg(&dst),
                        arg(&weight),
                        arg(&count32),
                    ],
                )?
            };
            // SAFETY: (uint64_t *ends, const uint32_t *src, uint32_t count): as above.
            unsafe {
                launch(
                    &program.room_advance,
                    grid(count as u64),
                    INSERT_BLOCK,
                    &mut [arg(&ends_ptr), arg(&src), arg(&count32)],
                )?
            };
        }
        let launched = started.elapsed();
        synchronize().map_err(|e| call("the kernels inserting edges into a resident graph", e))?;
        if super::executor::trace_run() {
            let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
            eprintln!(
                "grail insert of {count} edges ({} rows moved): checked and uploaded {:.3} ms, launched {:.3}, done {:.3}",
                moves.len(),
                ms(uploaded),
                ms(launched),
                ms(started.elapsed())
            );
        }
        self.identity = identity(after);
        Ok(table)
    }

    /// Copies `batch` up once, as three columns (sources, targets, weights) written straight
    /// into pinned memory on every core and checked in the same pass (a 1% batch of a graph of
    /// 65 M edges is 650,000 edges): the table a program can take as its input.
    fn upload_batch(&mut self, batch: &[Insertion], nodes: u32) -> Result<ResidentTable> {
        let count = batch.len();
        let faulty = AtomicBool::new(false);
        let inserted = DeviceBuffer::from_words_made(
            &self.context,
            3 * count,
            |first, words| {
                let (mut column, mut i) = (first / count, first % count);
                let mut ok = true;
                for word in words {
                    let (u, v, w) = batch[i];
                    *word = match column {
                        0 => {
                            ok &= u < nodes && (i == 0 || batch[i - 1].0 <= u);
                            u
                        }
                        1 => {
                            ok &= v < nodes;
                            v
                        }
                        _ => w,
                    };
                    i += 1;
                    if i == count {
                        (column, i) = (column + 1, 0);
                    }
                }
                if !ok {
                    faulty.store(true, Ordering::Relaxed);
                }
            },
            "the inserted edges",
            &mut self.staging,
        )?;
        if faulty.load(Ordering::Relaxed) {
            return Err(batch_fault(batch, nodes));
        }
        Ok(ResidentTable {
            buffer: inserted,
            leaves: vec![Type::Node, Type::Node, Type::U32],
            rows: count,
            context: self.context.clone(),
        })
    }

    /// The resident out-CSR copied back, with the weights the device holds (unit ones made
    /// for an unweighted graph included), for checking it against the host's graph: with its
    /// room, when it has room per node.
    pub fn download_csr(&self) -> Result<grail_graph::Csr> {
        self.context.bind_to_thread().map_err(|e| call("cuCtxSetCurrent", e))?;
        let nodes = self.identity.0 as usize;
        let mut offsets = vec![0u64; nodes + 1];
        self.offsets.download(0, &mut offsets)?;
        let slots = match &self.ends {
            Some(_) => self.targets.bytes() / 4,
            None => offsets[nodes] as usize,
        };
        let mut targets = vec![0u32; slots];
        self.targets.download(0, &mut targets)?;
        let weights = match &self.weights {
            Some(buffer) => {
                let mut weights = vec![0u32; slots];
                buffer.download(0, &mut weights)?;
                Some(weights)
            }
            None => None,
        };
        let csr = match &self.ends {
            Some(buffer) => {
                let mut ends = vec![0u64; nodes];
                buffer.download(0, &mut ends)?;
                grail_graph::Csr::from_parts_with_room(offsets, ends, targets, weights)
            }
            None => grail_graph::Csr::from_parts(offsets, targets, weights),
        };
        csr.map_err(|e| RuntimeError::program(format!("the graph on the device is not a graph: {e}")))
    }

    /// Fails unless this holds `graph` on `device`.
    pub(crate) fn check(&self, graph: &Graph, device: &Device) -> Result<()> {
        if self.identity != identity(graph) || self.ordinal != device.info().ordinal {
            return Err(RuntimeError::program(format!(
                "the resident graph holds another graph (or lives on device {}, not {}): make one for this graph",
                self.ordinal,
                device.info().ordinal
            )));
        }
        Ok(())
    }

    /// Adds what `module` reads beyond the out-CSR: the reverse CSR (the graph's own, or built
    /// here once), the in-edges' ids, the edges' sources (made on the device by `edge_sources`,
    /// the program's `grail_edge_sources`).
    pub(crate) fn prepare(&mut self, module: &Module, graph: &Graph, edge_sources: &CudaFunction) -> Result<()> {
        let started = Instant::now();
        self.context.bind_to_thread().map_err(|e| call("cuCtxSetCurrent", e))?;
        if analysis::needs_in_edge_ids(module) && self.in_edge_ids.is_none() {
            // The ids go with the reverse CSR they index: the graph's own pair, or both built here.
            match (graph.reverse(), graph.in_edge_ids()) {
                (Some(csr), Some(ids)) => {
                    self.reverse = Some(self.upload_reverse(csr.offsets(), csr.targets())?);
                    self.in_edge_ids = Some(self.upload(ids, "the in-edges' ids")?);
                }
                _ => {
                    let (csr, ids) = graph.out().transpose_with_ids();
                    self.reverse = Some(self.upload_reverse(csr.offsets(), csr.targets())?);
                    self.in_edge_ids = Some(self.upload(&ids, "the in-edges' ids")?);
                }
            }
        }
        if analysis::needs_reverse(module) && self.reverse.is_none() {
            let out = graph.out();
            self.reverse = Some(match graph.reverse() {
                // A symmetric graph with sorted lists is its own reverse: the same arrays.
                Some(csr)
                    if std::ptr::eq(csr.offsets().as_ptr(), out.offsets().as_ptr())
                        && std::ptr::eq(csr.targets().as_ptr(), out.targets().as_ptr()) =>
                {
                    (DeviceBuffer::view(&self.offsets), DeviceBuffer::view(&self.targets))
                }
                Some(csr) => self.upload_reverse(csr.offsets(), csr.targets())?,
                None => {
                    let csr = out.transpose();
                    self.upload_reverse(csr.offsets(), csr.targets())?
                }
            });
        }
        // An unweighted graph's edges weigh 1 each: for a program that reads weights, a column of
        // ones made on the device once (not 4 bytes an edge copied up every run).
        if self.weights.is_none() && module.properties.iter().any(|p| p.is_weight && p.ty == grail_ir::Type::U32) {
            let slots = graph.out().edge_slots() as usize;
            self.weights = Some(DeviceBuffer::filled_u32(&self.context, slots, 1, "the unit edge weights")?);
        }
        if analysis::needs_edge_sources(module) && self.edge_sources.is_none() {
            let out = graph.out();
            let (n, slots) = (u64::from(out.num_nodes()), out.edge_slots());
            let sources = DeviceBuffer::new(&self.context, (slots as usize * 4).max(4), "the edges' sources")?;
            if n > 0 && slots > 0 {
                let (offsets, ends, ptr) = (self.offsets.ptr(), self.ends_ptr(), sources.ptr());
                let grid = slots.div_ceil(256).clamp(1, 8192) as u32;
                // SAFETY: (const uint64_t *offsets, const uint64_t *ends, uint64_t n, uint64_t
                // slots, uint32_t *sources): n + 1 offsets and n ends on the device, room for
                // `slots` sources.
                unsafe {
                    launch(edge_sources, grid, 256, &mut [arg(&offsets), arg(&ends), arg(&n), arg(&slots), arg(&ptr)])?
                };
            }
            self.edge_sources = Some(sources);
        }
        self.upload += started.elapsed();
        Ok(())
    }

    /// Copies `data` up through this graph's staging buffers.
    fn upload<T: Copy>(&mut self, data: &[T], what: &str) -> Result<DeviceBuffer> {
        DeviceBuffer::from_slice_staged(&self.context, data, what, &mut self.staging)
    }

    fn upload_reverse(&mut self, offsets: &[u64], sources: &[u32]) -> Result<(DeviceBuffer, DeviceBuffer)> {
        Ok((self.upload(offsets, "the reverse graph's offsets")?, self.upload(sources, "the reverse graph's edges")?))
    }
}

/// The error for a batch whose check failed: the first edge that names a node the graph does not
/// have, or comes from a smaller source than the edge before it.
fn batch_fault(batch: &[Insertion], nodes: u32) -> RuntimeError {
    let bad = (0..batch.len()).into_par_iter().find_first(|&i| {
        let (u, v, _) = batch[i];
        u >= nodes || v >= nodes || (i > 0 && batch[i - 1].0 > u)
    });
    let Some(i) = bad else { return RuntimeError::program("the inserted batch failed its check") };
    let (u, v, _) = batch[i];
    RuntimeError::program(if u >= nodes || v >= nodes {
        format!("inserted edge {} ({u} -> {v}) names a node the resident graph does not have ({nodes} nodes)", i + 1)
    } else {
        format!(
            "the batch inserted into a resident graph must be sorted by source: edge {} comes from node {u}, the one \
             before it from node {}",
            i + 1,
            batch[i - 1].0
        )
    })
}

/// Threads a block of the insertion kernels.
const INSERT_BLOCK: u32 = 256;

/// A graph's out-edge arrays on a device: offsets, the rows' ends when it has room per node,
/// edges and weights (the edge arrays one word per slot).
struct OutArrays {
    offsets: DeviceBuffer,
    ends: Option<DeviceBuffer>,
    targets: DeviceBuffer,
    weights: Option<DeviceBuffer>,
}

impl OutArrays {
    fn upload(context: &Arc<CudaContext>, out: &grail_graph::Csr, staging: &mut Option<Staging>) -> Result<OutArrays> {
        let offsets = DeviceBuffer::from_slice_staged(context, out.offsets(), "the graph's offsets", staging)?;
        let ends = match out.is_packed() {
            true => None,
            false => Some(DeviceBuffer::from_slice_staged(context, out.ends(), "the graph's rows' ends", staging)?),
        };
        let targets = DeviceBuffer::from_slice_staged(context, out.targets(), "the graph's edges", staging)?;
        let weights = match out.weight_words() {
            Some(w) => Some(DeviceBuffer::from_slice_staged(context, w, "the graph's weights", staging)?),
            None => None,
        };
        Ok(OutArrays { offsets, ends, targets, weights })
    }
}
