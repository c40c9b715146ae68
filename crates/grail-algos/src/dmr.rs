//! Delaunay mesh refinement by the grail program `programs/dmr.grail` (Bowyer-Watson with
//! Ruppert's boundary splitting), on the CPU or a GPU: the mesh goes in as the program's input
//! collections (points, and triangles with their neighbours) and comes back from its outputs.

use std::time::{Duration, Instant};

use grail_graph::{Csr, Graph, GraphError};
use grail_ir::OptConfig;
use grail_mesh::{Mesh, NO_NEIGHBOR};
use grail_runtime::Table;
use grail_runtime::cpu::{RunOutput, Value};
use grail_runtime::gpu::GpuTimes;
use rayon::prelude::*;

use crate::error::{AlgoError, Result};
use crate::{Target, program_source};

/// A refined mesh, and how long the program ran (on a GPU, also the kernels' time).
#[derive(Debug, Clone)]
pub struct Refined {
    /// The input's points first, numbered as in the input, then the new ones.
    pub mesh: Mesh,
    /// False when the refinement stopped at its point budget with bad triangles left.
    pub complete: bool,
    /// The whole refinement: the program's run, and the spatial ordering before it and its
    /// undoing after it when `Options::spatial_order` is on.
    pub time: Duration,
    /// Of `time`, the spatial ordering and its undoing.
    pub order_time: Duration,
    /// The refinement's rounds (invocations of its kernel `refine`) and the worklist items they
    /// took, retried ones included: the bad triangles each round found, and those that came back.
    pub rounds: u64,
    pub items: u64,
    /// Of `time`, the kernels' (on a GPU, by CUDA events; on the CPU, the kernels' runs): the
    /// rest is filling the mesh in, reading it back and the ordering.
    pub kernel_time: Duration,
    /// On a GPU: the kernels' share of `time`, and copying the mesh up and back.
    pub gpu_times: Option<GpuTimes>,
    /// The windows of sharpness it refined in ([`Options::windows`], resolved).
    pub windows: u32,
}

/// [`Options::windows`] by default on `target`: two on a GPU, where the sharpest-first order
/// made the kernels 7-10% faster (an H200, 2.5 and 5 million points); one (all at once) on the
/// CPU, where the order cost 10% on 2 cores (the sharpest triangles lie apart, so consecutive
/// items share less cache) and nothing on 16.
pub fn default_windows(target: Target) -> u32 {
    if target == Target::Gpu { 2 } else { 1 }
}

/// The most windows of sharpness: each costs a pass over every triangle.
pub const MAX_WINDOWS: u32 = 64;

/// How to refine: the quality bound, the point budget, and where the program runs.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// No triangle may keep an angle below this many degrees (0 to
    /// [`grail_mesh::refine::MAX_MIN_ANGLE`], 34; from about 33.5° refinement may not end on
    /// some meshes, and `max_points` stops it).
    pub min_angle: f64,
    /// The most points the refined mesh may have; past it bad triangles are left (a domain with
    /// input angles too small for the bound could otherwise be refined without end).
    pub max_points: u32,
    /// `Cpu`, or `Gpu` (on `device`).
    pub target: Target,
    pub device: usize,
    /// CPU threads (0: one per core).
    pub threads: usize,
    /// The optimizations `dmr` is compiled with (`OptConfig::all()` by default; the benchmark
    /// switches them off one at a time).
    pub opt: OptConfig,
    /// Insert a bad triangle's off-center where it is nearer than its circumcenter (as Triangle
    /// does): fewer points for the same bound. Off: circumcenters only.
    pub off_centers: bool,
    /// Renumber the mesh along a Hilbert curve before refining it (the morph paper's memory
    /// layout optimization, §6.1: neighbours in the plane become neighbours in memory), and
    /// the result back to the input's numbering after. `None`: the target's default, on for the
    /// CPU (whose caches it fills with neighbours) and off for a GPU (2026-11-26, an H200, 10 M
    /// triangles: the kernels' time the same either way, so the ordering's 320 ms on the host
    /// would be a loss).
    pub spatial_order: Option<bool>,
    /// Refine the sharpest bad triangles first, in this many windows of sharpness (1: all at
    /// once). Fewer points for the same bound, as a sequential refiner's worst-first queue gets:
    /// on 10 M triangles (an H200) two windows made 6% fewer triangles and five 10% fewer, the
    /// kernels 7% and 6% faster; on 16 cores the same time. `None`: [`default_windows`].
    pub windows: Option<u32>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            min_angle: 30.0,
            max_points: u32::MAX,
            target: Target::Cpu,
            device: 0,
            threads: 0,
            opt: OptConfig::all(),
            off_centers: true,
            spatial_order: None,
            windows: None,
        }
    }
}

/// Refines `mesh` until no triangle has an angle below `options.min_angle` degrees (or the mesh
/// has `options.max_points` points).
pub fn refine(mesh: &Mesh, options: &Options) -> Result<Refined> {
    let Options { min_angle, max_points, target, device, threads, opt, off_centers, spatial_order, windows } = *options;
    let most = grail_mesh::refine::MAX_MIN_ANGLE;
    if !(min_angle.is_finite() && (0.0..=most).contains(&min_angle)) {
        return Err(AlgoError::Usage(format!(
            "--min-angle {min_angle}: expected 0 to {most} degrees (above, Delaunay refinement need not end)"
        )));
    }
    let windows = windows.unwrap_or_else(|| default_windows(target));
    if !(1..=MAX_WINDOWS).contains(&windows) {
        return Err(AlgoError::Usage(format!("--windows {windows}: expected 1 to {MAX_WINDOWS}")));
    }
    let source = program_source("dmr").expect("dmr is a suite program");
    let module = crate::suite::compile_source("dmr", source)?;
    let mut order_time = Duration::ZERO;
    let ordered = spatial_order.unwrap_or(target == Target::Cpu).then(|| {
        let ordering = Instant::now();
        let ordered = grail_mesh::order::spatial_order(mesh);
        order_time = ordering.elapsed();
        ordered
    });
    let inputs = inputs(&module, ordered.as_ref().map_or(mesh, |o| &o.mesh))?;
    let module = grail_ir::optimize(module, &opt).map_err(|e| AlgoError::Internal(format!("optimizing `dmr`: {e}")))?;
    let cos_bound = Value::F64(min_angle.to_radians().cos());
    // The off-center's height per unit of the shortest side (none for a bound of 0: nothing is bad).
    let half = (min_angle / 2.0).to_radians();
    let off_center = if half > 0.0 && off_centers { 0.95 / (2.0 * half.tan()) } else { f64::MAX };
    let params =
        [Some(cos_bound), Some(Value::U32(max_points)), Some(Value::F64(off_center)), Some(Value::U32(windows))];
    // The program reads no graph: an empty one stands in.
    let graph = Graph::from_csr(Csr::empty(1, false));
    let (output, gpu_times) = crate::suite::run_module(module, target, device, threads, &graph, &params, &inputs)?;
    let mut refined = mesh_of(&output)?;
    if let Some(ordered) = &ordered {
        let undoing = Instant::now();
        // The input's points keep their place in the program (it only adds points).
        refined.points.splice(0..mesh.points.len(), mesh.points.iter().copied());
        refined.triangles.par_iter_mut().for_each(|t| *t = t.map(|v| ordered.original_point(v)));
        order_time += undoing.elapsed();
    }
    let time = output.stats.elapsed + order_time;
    let complete = refined.points.len() < max_points as usize;
    let refine = output.stats.kernels.iter().find(|k| k.name == "refine");
    let (rounds, items) = refine.map_or((0, 0), |k| (k.invocations, k.items));
    let kernel_time = match &gpu_times {
        Some(times) => times.kernels,
        None => output.stats.kernels.iter().map(|k| k.time).sum(),
    };
    Ok(Refined { mesh: refined, complete, time, order_time, rounds, items, kernel_time, gpu_times, windows })
}

/// The program's inputs for `mesh`: its points, and its triangles with their neighbours, as
/// the tables of `module`'s input collections `points` and `tris`. A mesh the program cannot
/// take is bad input (`GraphError::Invalid`, as a file's contents are), not a usage error: how
/// grail was called is not at fault.
fn inputs(module: &grail_ir::Module, mesh: &Mesh) -> Result<Vec<Table>> {
    let across = mesh.neighbors().map_err(|e| GraphError::invalid(format!("the mesh cannot be refined: {e}")))?;
    // The program keeps exactly the sides without a neighbour: a segment inside the domain (with
    // triangles on both sides) would be refined across.
    let mut boundary = std::collections::HashSet::new();
    for (t, n) in mesh.triangles.iter().zip(&across) {
        for i in 0..3 {
            if n[i] == NO_NEIGHBOR {
                let (u, v) = (t[(i + 1) % 3], t[(i + 2) % 3]);
                boundary.insert((u.min(v), u.max(v)));
            }
        }
    }
    if let Some([u, v]) = mesh.segments.iter().find(|[u, v]| !boundary.contains(&((*u).min(*v), (*u).max(*v)))) {
        return Err(GraphError::invalid(format!(
            "segment {u}-{v} lies inside the domain: the grail refiner keeps only the domain's boundary, \
             not segments with the domain on both sides (not supported yet)"
        ))
        .into());
    }
    let [points_id, tris_id] = module.collection_inputs[..] else {
        return Err(AlgoError::Internal("dmr's inputs are not points and triangles".into()));
    };
    // Rows as the program's structs lay them out: Point { x, y, sa, sb, small } (an input
    // point lies inside no segment: itself twice); Tri { a, b, c, n0, n1, n2, e0, e1, e2 } (a
    // neighbour's handle, and whether there is one).
    // Filled on every core: a mesh of 10 M triangles is 90 M words.
    let small = sharp_corners(mesh, &boundary);
    let point_words = mesh
        .points
        .par_iter()
        .enumerate()
        .flat_map_iter(|(i, p)| [p[0].to_bits(), p[1].to_bits(), i as u64, i as u64, u64::from(small[i])])
        .collect();
    let tri_words = mesh
        .triangles
        .par_iter()
        .zip(&across)
        .flat_map_iter(|(t, n)| {
            let handle = |o: u32| u64::from(if o == NO_NEIGHBOR { 0 } else { o });
            let present = |o: u32| u64::from(o != NO_NEIGHBOR);
            [t[0].into(), t[1].into(), t[2].into(), handle(n[0]), handle(n[1]), handle(n[2])].into_iter().chain([
                present(n[0]),
                present(n[1]),
                present(n[2]),
            ])
        })
        .collect();
    let table = |id, words| {
        Table::from_words(Table::for_collection(module, id).leaves().to_vec(), words)
            .map_err(|e| AlgoError::Internal(format!("dmr's inputs: {e}")))
    };
    Ok(vec![table(points_id, point_words)?, table(tris_id, tri_words)?])
}

/// Corners of the domain sharper than 60 degrees, by point: boundary points (on a side in
/// `boundary`) around which the triangles' angles sum to less than that. Ruppert's refinement
/// does not end at such a corner unless it splits its sides on concentric shells and leaves the
/// triangles between them alone (what `dmr.grail` does with these flags).
fn sharp_corners(mesh: &Mesh, boundary: &std::collections::HashSet<(u32, u32)>) -> Vec<bool> {
    let mut on_boundary = vec![false; mesh.points.len()];
    for &(u, v) in boundary {
        on_boundary[u as usize] = true;
        on_boundary[v as usize] = true;
    }
    let angle = |t: &[u32; 3], i: usize| -> f64 {
        let [p, q, r] = [t[i], t[(i + 1) % 3], t[(i + 2) % 3]].map(|v| mesh.points[v as usize]);
        let (ux, uy, vx, vy) = (q[0] - p[0], q[1] - p[1], r[0] - p[0], r[1] - p[1]);
        (ux * vy - uy * vx).abs().atan2(ux * vx + uy * vy)
    };
    // Few triangles touch the boundary: their corners' angles, gathered on every core.
    let angles: Vec<(u32, f64)> = mesh
        .triangles
        .par_iter()
        .filter(|t| t.iter().any(|&v| on_boundary[v as usize]))
        .flat_map_iter(|t| (0..3).filter(|&i| on_boundary[t[i] as usize]).map(move |i| (t[i], angle(t, i))))
        .collect();
    let mut around = vec![0.0f64; mesh.points.len()];
    for (v, a) in angles {
        around[v as usize] += a;
    }
    (0..mesh.points.len()).map(|v| on_boundary[v] && around[v] < std::f64::consts::FRAC_PI_3).collect()
}

/// The refined mesh from the program's output collections: points (x, y), then the live
/// triangles' corners.
fn mesh_of(output: &RunOutput) -> Result<Mesh> {
    let [points, faces] = output.collections.as_slice() else {
        return Err(AlgoError::Internal("dmr's outputs are not points and faces".into()));
    };
    // On every core: tens of millions of rows.
    let points = (0..points.len()).into_par_iter().map(|i| [points.f64(i, 0), points.f64(i, 1)]).collect();
    let triangles =
        (0..faces.len()).into_par_iter().map(|i| [faces.u32(i, 0), faces.u32(i, 1), faces.u32(i, 2)]).collect();
    Ok(Mesh { points, triangles, ..Mesh::default() })
}
