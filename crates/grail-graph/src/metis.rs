//! The system's METIS library, loaded when a partitioning asks for it (as grail loads NVRTC):
//! building grail needs no METIS, and `--method metis` on a machine without it is a clear error
//! naming the package to install.
//!
//! The library is `$GRAIL_METIS_LIB` when set, else `libmetis.so.5` or `libmetis.so` (Debian's
//! `libmetis5`, which `libmetis-dev` brings) found the usual way. METIS is built with 32- or
//! 64-bit indices (`IDXTYPEWIDTH`); which one is told from how many bytes
//! `METIS_SetDefaultOptions` writes, before anything else is passed to it.

use std::sync::{Mutex, OnceLock};

use crate::error::{GraphError, Result};

/// `METIS_NOPTIONS`, `METIS_OPTION_SEED` and `METIS_OK` from `metis.h` (5.x).
const NOPTIONS: usize = 40;
const OPTION_SEED: usize = 8;
const OK: i32 = 1;

type SetDefaultOptions = unsafe extern "C" fn(*mut u8) -> i32;
/// `METIS_PartGraphKway(nvtxs, ncon, xadj, adjncy, vwgt, vsize, adjwgt, nparts, tpwgts, ubvec,
/// options, objval, part)`, every pointer to `idx_t` except the two `real_t` ones.
type PartGraphKway = unsafe extern "C" fn(
    *mut u8,
    *mut u8,
    *mut u8,
    *mut u8,
    *mut u8,
    *mut u8,
    *mut u8,
    *mut u8,
    *mut u8,
    *mut u8,
    *mut u8,
    *mut u8,
    *mut u8,
) -> i32;

struct Metis {
    /// Kept loaded: the function pointers below point into it.
    _library: libloading::Library,
    set_default_options: SetDefaultOptions,
    part_graph_kway: PartGraphKway,
    /// Bytes per `idx_t`: 4 or 8.
    idx_bytes: usize,
}

/// METIS keeps its random state in globals (GKlib's generator), so two partitionings running at
/// once would disturb each other's results: calls take turns.
static TURN: Mutex<()> = Mutex::new(());

fn load() -> std::result::Result<Metis, String> {
    let candidates: Vec<String> = match std::env::var("GRAIL_METIS_LIB") {
        Ok(path) if !path.is_empty() => vec![path],
        _ => vec!["libmetis.so.5".into(), "libmetis.so".into(), "libmetis.dylib".into()],
    };
    let mut tried = Vec::new();
    for name in &candidates {
        // SAFETY: loading METIS runs no initialisers beyond the C runtime's.
        match unsafe { libloading::Library::new(name) } {
            Ok(library) => {
                // SAFETY: the symbols have these signatures in METIS 5's metis.h.
                let (set_default_options, part_graph_kway) = unsafe {
                    let set: libloading::Symbol<SetDefaultOptions> =
                        library.get(b"METIS_SetDefaultOptions\0").map_err(|e| format!("{name}: {e}"))?;
                    let part: libloading::Symbol<PartGraphKway> =
                        library.get(b"METIS_PartGraphKway\0").map_err(|e| format!("{name}: {e}"))?;
                    (*set, *part)
                };
                // The index width: a 32-bit METIS writes 40 four-byte -1s, a 64-bit one 40
                // eight-byte ones; the rest of the buffer keeps its pattern.
                let mut probe = vec![0x5au8; NOPTIONS * 8 * 2];
                // SAFETY: the buffer has room for NOPTIONS 8-byte indices and more.
                let status = unsafe { set_default_options(probe.as_mut_ptr()) };
                if status != OK {
                    return Err(format!("{name}: METIS_SetDefaultOptions returned {status}"));
                }
                let idx_bytes = if probe[NOPTIONS * 4..NOPTIONS * 8].iter().all(|&b| b == 0xff) { 8 } else { 4 };
                return Ok(Metis { _library: library, set_default_options, part_graph_kway, idx_bytes });
            }
            Err(e) => tried.push(format!("{name} ({e})")),
        }
    }
    Err(format!(
        "METIS is not installed: partitioning with METIS loads the system's library at run time (on Debian or \
         Ubuntu `apt-get install libmetis5`, or set GRAIL_METIS_LIB to its path); tried {}",
        tried.join(", ")
    ))
}

fn library() -> Result<&'static Metis> {
    static METIS: OnceLock<std::result::Result<Metis, String>> = OnceLock::new();
    METIS.get_or_init(load).as_ref().map_err(|e| GraphError::invalid(e.clone()))
}

/// Whether the system's METIS can be loaded (tests skip METIS without it, unless told not to).
pub fn available() -> bool {
    library().is_ok()
}

/// An index array as METIS's `idx_t` takes it.
enum Indices {
    Narrow(Vec<i32>),
    Wide(Vec<i64>),
}

impl Indices {
    fn new(bytes: usize, values: impl Iterator<Item = u64>) -> Indices {
        if bytes == 8 {
            Indices::Wide(values.map(|v| v as i64).collect())
        } else {
            Indices::Narrow(values.map(|v| v as i32).collect())
        }
    }

    fn ptr(&mut self) -> *mut u8 {
        match self {
            Indices::Narrow(v) => v.as_mut_ptr().cast(),
            Indices::Wide(v) => v.as_mut_ptr().cast(),
        }
    }

    fn get(&self, i: usize) -> i64 {
        match self {
            Indices::Narrow(v) => i64::from(v[i]),
            Indices::Wide(v) => v[i],
        }
    }

    fn set(&mut self, i: usize, value: i64) {
        match self {
            Indices::Narrow(v) => v[i] = value as i32,
            Indices::Wide(v) => v[i] = value,
        }
    }
}

/// `METIS_PartGraphKway` on the undirected graph `offsets`/`targets` (each edge both ways, no
/// self-loops), nodes weighing `weights` (1 each when `None`): a part in `0..parts` per node,
/// with METIS's seed set from `seed`.
pub(crate) fn part_graph_kway(
    offsets: &[u64],
    targets: &[u32],
    weights: Option<&[u64]>,
    parts: u32,
    seed: u64,
) -> Result<Vec<u32>> {
    let metis = library()?;
    let n = offsets.len() - 1;
    let limit: u64 = if metis.idx_bytes == 8 { i64::MAX as u64 } else { i32::MAX as u64 };
    if n as u64 > limit || targets.len() as u64 > limit {
        return Err(GraphError::invalid(format!(
            "the graph is too large for this METIS: its undirected simple graph has {n} nodes and {} adjacency \
             entries (each edge twice), and the system's METIS ({}-bit indices) takes at most {limit} of either",
            targets.len(),
            metis.idx_bytes * 8
        )));
    }
    // METIS sums the weights in idx_t: their total must fit too.
    let total_weight = weights.map_or(0, |w| w.iter().sum::<u64>());
    if total_weight > limit {
        return Err(GraphError::invalid(format!(
            "the graph is too large for this METIS: its nodes weigh {total_weight} in all (1 plus the degree each), \
             and the system's METIS ({}-bit indices) takes at most {limit}",
            metis.idx_bytes * 8
        )));
    }
    let bytes = metis.idx_bytes;
    let mut vwgt = weights.map(|w| Indices::new(bytes, w.iter().copied()));
    let mut xadj = Indices::new(bytes, offsets.iter().copied());
    let mut adjncy = Indices::new(bytes, targets.iter().map(|&t| u64::from(t)));
    let mut part = Indices::new(bytes, std::iter::repeat_n(0, n));
    let mut nvtxs = Indices::new(bytes, std::iter::once(n as u64));
    let mut ncon = Indices::new(bytes, std::iter::once(1));
    let mut nparts = Indices::new(bytes, std::iter::once(u64::from(parts)));
    let mut objval = Indices::new(bytes, std::iter::once(0));
    let mut options = Indices::new(bytes, std::iter::repeat_n(0, NOPTIONS));
    let status = {
        let _turn = TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        // SAFETY: options holds NOPTIONS indices of METIS's width.
        let status = unsafe { (metis.set_default_options)(options.ptr()) };
        if status != OK {
            return Err(GraphError::invalid(format!("METIS_SetDefaultOptions returned {status}")));
        }
        options.set(OPTION_SEED, ((seed ^ (seed >> 32)) & 0x7fff_ffff) as i64);
        let null = std::ptr::null_mut();
        let vwgt = vwgt.as_mut().map_or(null, Indices::ptr);
        // SAFETY: every array has the length and width METIS reads (n + 1 offsets, one target
        // per adjacency entry, n node weights or none, n parts, single values for the counts);
        // the other weights and the target fractions are absent (null), as METIS allows.
        unsafe {
            (metis.part_graph_kway)(
                nvtxs.ptr(),
                ncon.ptr(),
                xadj.ptr(),
                adjncy.ptr(),
                vwgt,
                null,
                null,
                nparts.ptr(),
                null,
                null,
                options.ptr(),
                objval.ptr(),
                part.ptr(),
            )
        }
    };
    match status {
        OK => {}
        -2 => return Err(GraphError::invalid("METIS could not partition the graph: it rejected the input")),
        -3 => return Err(GraphError::invalid("METIS could not partition the graph: it ran out of memory")),
        other => return Err(GraphError::invalid(format!("METIS could not partition the graph (error {other})"))),
    }
    (0..n)
        .map(|v| match part.get(v) {
            p if (0..i64::from(parts)).contains(&p) => Ok(p as u32),
            p => Err(GraphError::invalid(format!("METIS returned part {p} for node {v}, outside 0 to {}", parts - 1))),
        })
        .collect()
}
