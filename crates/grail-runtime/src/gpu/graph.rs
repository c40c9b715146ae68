//! Graphs resident on a GPU: [`DeviceGraph`] holds a graph's arrays in device memory so that
//! runs of any number of programs on that graph (many sources, many algorithms) copy nothing of
//! it again. The out-CSR and the weights go up when it is made; the arrays only some programs
//! read (the reverse CSR, the in-edges' ids, the edges' sources) go up the first time a program
//! needs them. Every upload goes through pinned staging buffers.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::CudaContext;
use grail_graph::Graph;
use grail_ir::{Module, analysis};

use super::buffer::{DeviceBuffer, Staging, call};
use super::device::Device;
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
            context,
        })
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
