//! Graphs resident on a GPU: [`DeviceGraph`] holds a graph's arrays in device memory so that
//! runs of any number of programs on that graph (many sources, many algorithms) copy nothing of
//! it again. The out-CSR and the weights go up when it is made; the arrays only some programs
//! read (the reverse CSR, the in-edges' ids, the edges' sources) go up the first time a program
//! needs them. Every upload goes through pinned staging buffers.
//!
//! A resident graph also grows: [`DeviceGraph::insert`] adds a batch of edges on the device
//! (dynamic algorithms' batches), so that only the batch goes up.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use cudarc::driver::CudaContext;
use grail_graph::Graph;
use grail_graph::insert::Insertion;
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
    /// The arrays the last [`DeviceGraph::insert`] moved out of, the next one's to move into.
    spare: SpareArrays,
}

/// Offsets, targets and weights no longer current, kept for the next insertion.
#[derive(Default)]
struct SpareArrays {
    offsets: Option<DeviceBuffer>,
    targets: Option<DeviceBuffer>,
    weights: Option<DeviceBuffer>,
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
        let offsets = DeviceBuffer::from_slice_staged(&context, out.offsets(), "the graph's offsets", &mut staging)?;
        let targets = DeviceBuffer::from_slice_staged(&context, out.targets(), "the graph's edges", &mut staging)?;
        let weights = match out.weight_words() {
            Some(w) => Some(DeviceBuffer::from_slice_staged(&context, w, "the graph's weights", &mut staging)?),
            None => None,
        };
        Ok(DeviceGraph {
            ordinal: device.info().ordinal,
            identity: identity(graph),
            offsets,
            targets,
            weights,
            reverse: None,
            in_edge_ids: None,
            edge_sources: None,
            upload: started.elapsed(),
            staging,
            spare: SpareArrays::default(),
            context,
        })
    }

    /// The device address of the array of rows' ends (`out_ends` in generated code): the
    /// offsets shifted by one.
    pub(crate) fn ends_ptr(&self) -> u64 {
        self.offsets.ptr() + 8
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

    /// Grows the resident graph by `batch` on the device, so that it holds `after`: the graph it
    /// held with the same batch inserted on the host ([`grail_graph::Csr::with_inserted`]),
    /// offsets, edges and weights alike, in the same order. `batch` must be sorted by source,
    /// stably (each node's inserted edges in batch order), as `with_inserted` places them. Only
    /// the batch goes up; the device moves every edge once (into arrays with an eighth more
    /// room, and keeps the old ones for the next batch to move into, so that a run of batches
    /// allocates nothing after the first two). The arrays made for other programs (the reverse
    /// CSR, the in-edges' ids, the edges' sources) are dropped, and made again for the new graph
    /// when a program reads them. `program` is any program loaded on this graph's device: the
    /// kernels that move the edges are part of every program's runtime.
    ///
    /// Returns the batch as it went up: a table of (source, target, weight) rows on the device,
    /// for a program that takes the batch as an input collection of such rows (`struct { src:
    /// Node, dst: Node, weight: u32 }`) to take without copying it up again.
    pub fn insert(&mut self, program: &GpuProgram, after: &Graph, batch: &[Insertion]) -> Result<ResidentTable> {
        let started = Instant::now();
        let (nodes, edges, _) = self.identity;
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
        if after.out().has_real_weights() {
            return Err(RuntimeError::program("a resident graph with real weights cannot take inserted edges"));
        }
        if after.out().is_weighted() && self.weights.is_none() {
            self.weights = Some(DeviceBuffer::filled_u32(&self.context, edges as usize, 1, "the unit edge weights")?);
        }
        self.context.bind_to_thread().map_err(|e| call("cuCtxSetCurrent", e))?;
        let count = batch.len();
        // The batch goes up once, as three columns (sources, targets, weights) written straight
        // into pinned memory on every core, and checked in the same pass (a 1% batch of a graph
        // of 65 M edges is 650,000 edges): the table returned, which a program can take as its
        // input.
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
        let uploaded = started.elapsed();
        let table = ResidentTable {
            buffer: inserted,
            leaves: vec![Type::Node, Type::Node, Type::U32],
            rows: count,
            context: self.context.clone(),
        };
        if batch.is_empty() {
            self.identity = identity(after);
            return Ok(table);
        }
        // What was made from the old edges describes another graph now.
        self.reverse = None;
        self.in_edge_ids = None;
        self.edge_sources = None;
        let inserted = &table.buffer;
        let points = DeviceBuffer::new(&self.context, count * 8, "the inserted edges' places")?;
        let total = after.num_edges() as usize;
        let spare = std::mem::take(&mut self.spare);
        let new_offsets = match spare.offsets {
            Some(offsets) => offsets,
            None => DeviceBuffer::new(&self.context, (nodes as usize + 1) * 8, "the graph's offsets")?,
        };
        let new_targets = roomy(&self.context, spare.targets, total * 4, "the graph's edges")?;
        let new_weights = match &self.weights {
            Some(_) => Some(roomy(&self.context, spare.weights, total * 4, "the graph's weights")?),
            None => None,
        };
        let (n, count32) = (u64::from(nodes), count as u32);
        let (src, dst, weight) = (inserted.ptr(), inserted.ptr() + 4 * count as u64, inserted.ptr() + 8 * count as u64);
        let (old_offsets, new_offsets_ptr, points_ptr) = (self.offsets.ptr(), new_offsets.ptr(), points.ptr());
        let grid = |items: u64| items.div_ceil(u64::from(INSERT_BLOCK) * INSERT_ITEMS).clamp(1, 8192) as u32;
        // SAFETY: (const uint64_t *old_offsets, uint64_t *new_offsets, uint64_t n, const uint32_t
        // *src, uint32_t count, uint64_t *points): both offsets arrays hold n + 1 words, the batch
        // `count` sources below n (checked above), `points` count words.
        unsafe {
            launch(
                &program.insert_offsets,
                grid((n + 1).max(count as u64)),
                INSERT_BLOCK,
                &mut [arg(&old_offsets), arg(&new_offsets_ptr), arg(&n), arg(&src), arg(&count32), arg(&points_ptr)],
            )?
        };
        let old_targets = self.targets.ptr();
        let old_weights = self.weights.as_ref().map_or(0, DeviceBuffer::ptr);
        let new_targets_ptr = new_targets.ptr();
        let new_weights_ptr = new_weights.as_ref().map_or(0, DeviceBuffer::ptr);
        // SAFETY: (const uint32_t *old_targets, const uint32_t *old_weights, uint64_t edges, uint32_t
        // *new_targets, uint32_t *new_weights, const uint64_t *points, const uint32_t *dst, const
        // uint32_t *weight, uint32_t count): the old arrays hold `edges` entries, the new ones
        // `edges + count`; the weights are both given or both null; `points` was filled above.
        unsafe {
            launch(
                &program.insert_edges,
                grid(edges.max(count as u64)),
                INSERT_BLOCK,
                &mut [
                    arg(&old_targets),
                    arg(&old_weights),
                    arg(&edges),
                    arg(&new_targets_ptr),
                    arg(&new_weights_ptr),
                    arg(&points_ptr),
                    arg(&dst),
                    arg(&weight),
                    arg(&count32),
                ],
            )?
        };
        let launched = started.elapsed();
        synchronize().map_err(|e| call("the kernels inserting edges into a resident graph", e))?;
        if super::executor::trace_run() {
            let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
            eprintln!(
                "grail insert of {count} edges: checked and uploaded {:.3} ms, launched {:.3}, done {:.3}",
                ms(uploaded),
                ms(launched),
                ms(started.elapsed())
            );
        }
        // Only now: a failure before leaves the graph it held, under its old identity.
        self.identity = identity(after);
        self.spare = SpareArrays {
            offsets: Some(std::mem::replace(&mut self.offsets, new_offsets)),
            targets: Some(std::mem::replace(&mut self.targets, new_targets)),
            weights: match new_weights {
                Some(w) => self.weights.replace(w),
                None => None,
            },
        };
        Ok(table)
    }

    /// The resident out-CSR copied back, with the weights the device holds (unit ones made
    /// for an unweighted graph included), for checking it against the host's graph.
    pub fn download_csr(&self) -> Result<grail_graph::Csr> {
        self.context.bind_to_thread().map_err(|e| call("cuCtxSetCurrent", e))?;
        let (nodes, edges, _) = self.identity;
        let mut offsets = vec![0u64; nodes as usize + 1];
        self.offsets.download(0, &mut offsets)?;
        let mut targets = vec![0u32; edges as usize];
        self.targets.download(0, &mut targets)?;
        let weights = match &self.weights {
            Some(buffer) => {
                let mut weights = vec![0u32; edges as usize];
                buffer.download(0, &mut weights)?;
                Some(weights)
            }
            None => None,
        };
        grail_graph::Csr::from_parts(offsets, targets, weights)
            .map_err(|e| RuntimeError::program(format!("the graph on the device is not a graph: {e}")))
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
    /// here once), the in-edges' ids, the edges' sources.
    pub(crate) fn prepare(&mut self, module: &Module, graph: &Graph) -> Result<()> {
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
            let edges = graph.out().num_edges() as usize;
            self.weights = Some(DeviceBuffer::filled_u32(&self.context, edges, 1, "the unit edge weights")?);
        }
        if analysis::needs_edge_sources(module) && self.edge_sources.is_none() {
            let sources = graph.out().edge_sources();
            self.edge_sources = Some(self.upload(&sources, "the edges' sources")?);
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

/// Threads a block of the insertion kernels, and items a thread takes in each of its block's
/// chunks (`GRAIL_INSERT_ITEMS` in `grail_cuda.h`).
const INSERT_BLOCK: u32 = 256;
const INSERT_ITEMS: u64 = 16;

/// `spare` if it holds `bytes`, else a new buffer with an eighth more room (or exactly `bytes`
/// when that much more does not fit).
fn roomy(context: &Arc<CudaContext>, spare: Option<DeviceBuffer>, bytes: usize, what: &str) -> Result<DeviceBuffer> {
    match spare {
        Some(buffer) if buffer.bytes() >= bytes => Ok(buffer),
        spare => {
            drop(spare);
            DeviceBuffer::new(context, bytes + bytes / 8, what).or_else(|_| DeviceBuffer::new(context, bytes, what))
        }
    }
}
