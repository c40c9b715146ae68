//! Reading and writing graphs in the formats users have files in.
//!
//! | format | [`Format`] | extensions | numbering | direction |
//! | --- | --- | --- | --- | --- |
//! | DIMACS shortest path | `dimacs` | `.gr` (text) | 1-based | arcs as listed |
//! | Matrix Market coordinate | `mtx` | `.mtx` | 1-based | general: as listed; symmetric: both ways |
//! | SNAP-style edge list | `el` | `.el`, `.txt` | 0-based | as listed |
//! | weighted edge list | `wel` | `.wel` | 0-based | as listed |
//! | Galois/LonestarGPU binary | `galois` | `.gr` (binary) | 0-based | as stored |
//! | METIS | `metis` | `.graph`, `.metis` | 1-based | undirected (both ways) |
//! | grail binary CSR | `gcsr` | `.gcsr` | 0-based | as stored |
//!
//! Any text format may be gzip-compressed (`.gz`). Where extensions collide (`.gr`), the content
//! decides; an explicit format overrides both. Text is parsed in parallel; every error names the
//! file and the line (text) or byte offset (binary). Writers write to a temporary file beside the
//! target and rename it into place, so a failed write leaves nothing behind.

mod binary;
mod dimacs;
mod edgelist;
mod galois;
mod gcsr;
mod metis;
mod mtx;
pub(crate) mod text;

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::builder::{BuildOptions, EdgeList, build_csr};
use crate::error::{GraphError, Location, ParseError, Result};
use crate::graph::{Csr, Graph};
use crate::progress::Progress;

pub use gcsr::{GCSR_MAGIC, GCSR_VERSION};
pub use text::chunk_ranges;

/// A graph file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    Dimacs,
    MatrixMarket,
    EdgeList,
    WeightedEdgeList,
    Galois,
    Metis,
    Gcsr,
}

impl Format {
    pub const ALL: [Format; 7] = [
        Format::Dimacs,
        Format::MatrixMarket,
        Format::EdgeList,
        Format::WeightedEdgeList,
        Format::Galois,
        Format::Metis,
        Format::Gcsr,
    ];

    /// The name used by `--format`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Dimacs => "dimacs",
            Format::MatrixMarket => "mtx",
            Format::EdgeList => "el",
            Format::WeightedEdgeList => "wel",
            Format::Galois => "galois",
            Format::Metis => "metis",
            Format::Gcsr => "gcsr",
        }
    }

    /// The usual file extension.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Dimacs | Format::Galois => "gr",
            Format::MatrixMarket => "mtx",
            Format::EdgeList => "el",
            Format::WeightedEdgeList => "wel",
            Format::Metis => "graph",
            Format::Gcsr => "gcsr",
        }
    }

    /// Whether the format is binary (and so never gzip-compressed by convention).
    pub fn is_binary(self) -> bool {
        matches!(self, Format::Galois | Format::Gcsr)
    }

    /// Whether the format stores edge weights.
    pub fn stores_weights(self) -> bool {
        !matches!(self, Format::EdgeList)
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Format, String> {
        Format::ALL.into_iter().find(|f| f.name().eq_ignore_ascii_case(s)).ok_or_else(|| {
            let names: Vec<_> = Format::ALL.iter().map(|f| f.name()).collect();
            format!("unknown graph format '{s}' (expected one of: {})", names.join(", "))
        })
    }
}

/// How to read a graph.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadOptions {
    /// The format, or `None` to tell it from the file name and contents.
    pub format: Option<Format>,
    /// What to do to the edges after reading (default: keep them as stored).
    pub build: BuildOptions,
    /// What to do with real edge weights (Matrix Market `real`, decimals in `.wel`).
    pub real_weights: RealWeights,
}

/// What to do with real edge weights: keep them (the default), or make integer weights of them
/// as asked. A weight is never changed without being asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RealWeights {
    /// Real weights, as `f32` (the default); a value `f32` cannot hold is an error naming it.
    #[default]
    Keep,
    /// Integer weights; a value that is not a whole number is an error naming it.
    Refuse,
    /// Round each to the nearest integer (halves away from zero).
    Round,
    /// Multiply all by the factor that makes the smallest positive weight 1, then round: the
    /// weights keep their ratios to within rounding.
    Scale,
    /// Read the graph unweighted.
    Ignore,
}

impl FromStr for RealWeights {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<RealWeights, String> {
        match s {
            "keep" | "real" => Ok(RealWeights::Keep),
            "refuse" => Ok(RealWeights::Refuse),
            "round" => Ok(RealWeights::Round),
            "scale" => Ok(RealWeights::Scale),
            "ignore" => Ok(RealWeights::Ignore),
            _ => Err(format!("--weights {s}: expected keep, round, scale, ignore or refuse")),
        }
    }
}

/// Splits `name.ext.gz` into (`ext`, compressed).
fn extension_of(path: &Path) -> (Option<String>, bool) {
    let lower = |p: &Path| p.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    match lower(path) {
        Some(ext) if ext == "gz" => (path.file_stem().map(Path::new).and_then(lower), true),
        other => (other, false),
    }
}

fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

/// Tells the format of a file from its extension and (decompressed) contents.
pub fn detect_format(path: &Path, bytes: &[u8]) -> Result<Format> {
    if bytes.starts_with(GCSR_MAGIC) {
        return Ok(Format::Gcsr);
    }
    let (ext, _) = extension_of(path);
    let by_extension = match ext.as_deref() {
        Some("gr") => Some(if galois::looks_like(bytes) { Format::Galois } else { Format::Dimacs }),
        Some("mtx") => Some(Format::MatrixMarket),
        Some("el" | "txt" | "edges" | "snap" | "tsv" | "csv") => Some(Format::EdgeList),
        Some("wel") => Some(Format::WeightedEdgeList),
        Some("graph" | "metis") => Some(Format::Metis),
        Some("gcsr") => Some(Format::Gcsr),
        _ => None,
    };
    if let Some(format) = by_extension {
        return Ok(format);
    }
    // Unknown extension: look at the contents.
    if bytes.starts_with(b"%%MatrixMarket") {
        return Ok(Format::MatrixMarket);
    }
    if galois::looks_like(bytes) {
        return Ok(Format::Galois);
    }
    let first_line = text::first_data_line(bytes, b"#%c");
    if bytes.starts_with(b"c ") || bytes.starts_with(b"p sp") || first_line.is_some_and(|l| l.starts_with(b"p ")) {
        return Ok(Format::Dimacs);
    }
    match first_line.map(|l| l.split(|b| b.is_ascii_whitespace()).filter(|f| !f.is_empty()).count()) {
        Some(2) => Ok(Format::EdgeList),
        Some(3) => Ok(Format::WeightedEdgeList),
        _ => Err(GraphError::UnknownFormat {
            path: path.to_path_buf(),
            message: "cannot tell the graph format from the file name or contents; give it with --format \
                      (dimacs, mtx, el, wel, galois, metis, gcsr)"
                .into(),
        }),
    }
}

/// The bytes of a file, decompressed if gzip: memory-mapped when possible.
enum Contents {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl std::ops::Deref for Contents {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Contents::Mapped(map) => map,
            Contents::Owned(bytes) => bytes,
        }
    }
}

fn read_contents(path: &Path, progress: &dyn Progress) -> Result<Contents> {
    let file = File::open(path).map_err(|e| GraphError::io(path, e))?;
    let metadata = file.metadata().map_err(|e| GraphError::io(path, e))?;
    if metadata.is_dir() {
        // Mapping a directory fails with "No such device", which says nothing of the mistake.
        let cause = std::io::Error::new(std::io::ErrorKind::IsADirectory, "a directory, not a graph file");
        return Err(GraphError::io(path, cause));
    }
    let len = metadata.len();
    if len == 0 {
        return Ok(Contents::Owned(Vec::new()));
    }
    // SAFETY: the map is read-only and lives only while the graph is parsed; a file truncated
    // under us by another process is the one case memory maps cannot guard against.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| GraphError::io(path, e))?;
    if !is_gzip(&map) {
        return Ok(Contents::Mapped(map));
    }
    progress.begin("decompressing", Some(len));
    let mut decoder = flate2::read::MultiGzDecoder::new(ProgressReader { inner: &map[..], progress });
    let mut bytes = Vec::with_capacity(len as usize * 4);
    let result = decoder.read_to_end(&mut bytes);
    progress.finish();
    result.map_err(|e| GraphError::Malformed {
        path: path.to_path_buf(),
        location: Location::Whole,
        message: format!("gzip data is corrupt or truncated: {e}"),
    })?;
    Ok(Contents::Owned(bytes))
}

struct ProgressReader<'a> {
    inner: &'a [u8],
    progress: &'a dyn Progress,
}

impl Read for ProgressReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.progress.advance(n as u64);
        Ok(n)
    }
}

/// Reads a graph file.
pub fn read_graph(path: &Path, options: &ReadOptions, progress: &dyn Progress) -> Result<Graph> {
    let contents = read_contents(path, progress)?;
    let format = match options.format {
        Some(format) => format,
        None => detect_format(path, &contents)?,
    };
    parse_graph_with(&contents, format, &options.build, options.real_weights, progress).map_err(|e| e.in_file(path))
}

/// Parses a graph from the bytes of a file (decompressed) in a known format.
pub fn parse_graph(
    bytes: &[u8],
    format: Format,
    build: &BuildOptions,
    progress: &dyn Progress,
) -> Result<Graph, ParseError> {
    parse_graph_with(bytes, format, build, RealWeights::Keep, progress)
}

/// [`parse_graph`], saying what to do with real weights.
pub fn parse_graph_with(
    bytes: &[u8],
    format: Format,
    build: &BuildOptions,
    real_weights: RealWeights,
    progress: &dyn Progress,
) -> Result<Graph, ParseError> {
    let graph = match format {
        Format::Galois => from_csr(galois::parse(bytes)?, build),
        Format::Gcsr => {
            let graph = gcsr::parse(bytes, progress)?;
            if *build == BuildOptions::AS_GIVEN {
                Ok(graph)
            } else {
                from_edges(EdgeList::from_csr(graph.out()), build)
            }
        }
        Format::Dimacs => from_edges(dimacs::parse(bytes, progress)?, build),
        Format::MatrixMarket => from_edges(mtx::parse(bytes, real_weights, progress)?, build),
        Format::EdgeList => from_edges(edgelist::parse(bytes, false, progress)?, build),
        Format::WeightedEdgeList => from_edges(edgelist::parse_weighted(bytes, real_weights, progress)?, build),
        Format::Metis => {
            let (edges, vertex_weights) = metis::parse(bytes, progress)?;
            let mut graph = from_edges(edges, build)?;
            if let Some(weights) = vertex_weights {
                graph
                    .node_props
                    .insert_values("vertex_weight", weights)
                    .map_err(|e| ParseError::new(Location::Whole, e.to_string()))?;
            }
            Ok(graph)
        }
    }?;
    Ok(graph)
}

fn from_edges(edges: EdgeList, build: &BuildOptions) -> Result<Graph, ParseError> {
    build_csr(edges, build).map(Graph::from_csr).map_err(|e| ParseError::new(Location::Whole, e.to_string()))
}

fn from_csr(csr: Csr, build: &BuildOptions) -> Result<Graph, ParseError> {
    if *build == BuildOptions::AS_GIVEN {
        Ok(Graph::from_csr(csr))
    } else {
        from_edges(EdgeList::from_csr(&csr), build)
    }
}

/// The graph of a file that numbers nodes from 1 (many SNAP edge lists): node `i` becomes
/// `i - 1`. Node 0 must not appear in any edge; an error names the first edge that uses it.
pub fn from_one_based(graph: &Graph) -> Result<Graph> {
    let csr = graph.out();
    let zero_out = csr.offsets()[1] - csr.offsets()[0];
    if graph.num_nodes() == 0 {
        return Ok(graph.clone());
    }
    let first_use = if zero_out > 0 {
        Some(format!("0 -> {}", csr.targets()[0]))
    } else {
        let targets = csr.targets();
        targets.iter().position(|&v| v == 0).map(|e| {
            let source = csr.offsets().partition_point(|&o| o <= e as u64) - 1;
            format!("{source} -> 0")
        })
    };
    if let Some(edge) = first_use {
        return Err(GraphError::invalid(format!(
            "the graph is read as 1-based (--base 1), but node 0 appears in edge {edge}"
        )));
    }
    let mut edges = EdgeList::from_csr(csr);
    edges.num_nodes -= 1;
    for v in edges.sources.iter_mut().chain(edges.targets.iter_mut()) {
        *v -= 1;
    }
    build_csr(edges, &BuildOptions::AS_GIVEN).map(Graph::from_csr)
}

/// The format a graph written to `path` gets: `format` if given, else what the name says.
pub fn output_format(path: &Path, format: Option<Format>) -> Result<Format> {
    let (ext, _) = extension_of(path);
    Ok(match format {
        Some(format) => format,
        None => match ext.as_deref() {
            Some("gr") => Format::Dimacs,
            Some("galois") => Format::Galois,
            _ => detect_format(path, &[]).map_err(|_| GraphError::UnknownFormat {
                path: path.to_path_buf(),
                message: "cannot tell the output format from the file name; name the format \
                          (dimacs, mtx, el, wel, galois, metis, gcsr)"
                    .into(),
            })?,
        },
    })
}

/// Writes a graph file in the given format (or the one its extension names), gzip-compressed if
/// the name ends in `.gz`. The file appears only once it is complete.
pub fn write_graph(graph: &Graph, path: &Path, format: Option<Format>, progress: &dyn Progress) -> Result<()> {
    // A graph with room per node is written as its packed CSR.
    let graph = &*graph.packed();
    let (_, compressed) = extension_of(path);
    let format = output_format(path, format)?;
    if graph.out().has_real_weights() && matches!(format, Format::Dimacs | Format::Metis | Format::Galois) {
        return Err(GraphError::invalid(format!(
            "{} files hold integer weights, and this graph's weights are real: write .mtx, .wel or .gcsr, \
             or read the graph with --weights round|scale to make them integers",
            format.name()
        )));
    }
    if format == Format::Metis {
        metis::check_writable(graph)?;
    }
    progress.begin(&format!("writing {}", format.name()), Some(graph.num_edges()));
    let result = write_atomically(path, |file| {
        if compressed {
            let mut encoder = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
            write_format(graph, format, &mut encoder, progress)?;
            encoder.finish()?.flush()
        } else {
            write_format(graph, format, file, progress)
        }
    });
    progress.finish();
    result
}

/// Writes `.gcsr` version 1: the out-edges only, for grail builds that read no later version
/// (nothing known of the graph, no reverse CSR). [`write_graph`] writes the current version.
pub fn write_gcsr_version_1(graph: &Graph, path: &Path) -> Result<()> {
    write_atomically(path, |file| gcsr::write_version_1(graph, file))
}

/// Writes the file at `path` through `write`, as command-line tools do:
///
/// - `-` is standard output;
/// - an existing file that is not a regular file (`/dev/stdout`, a FIFO, a terminal) is written
///   through, not replaced;
/// - a symbolic link is followed: the file it points to is replaced, the link stays;
/// - a regular file is written to a temporary file beside it and renamed over it once complete,
///   so it never holds half a result and the old file stays intact if writing fails. The
///   temporary file is removed on every error, and on SIGINT or SIGTERM by
///   [`remove_temporaries`] (which the command line calls from its signal handler).
pub fn write_atomically(path: &Path, write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    if path.as_os_str() == "-" {
        let stdout = std::io::stdout();
        let mut out = BufWriter::with_capacity(1 << 20, stdout.lock());
        return write(&mut out).and_then(|()| out.flush()).map_err(|e| GraphError::io(Path::new("standard output"), e));
    }
    if let Ok(meta) = std::fs::metadata(path)
        && !meta.is_file()
        && !meta.is_dir()
    {
        let file = std::fs::OpenOptions::new().write(true).open(path).map_err(|e| GraphError::io(path, e))?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        return write(&mut out).and_then(|()| out.flush()).map_err(|e| GraphError::io(path, e));
    }
    // A link is replaced by what it points to, not by a file of its own.
    let resolved;
    let path = match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            resolved = resolve_link(path)?;
            resolved.as_path()
        }
        _ => path,
    };
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let prefix = format!(".{}.", path.file_name().and_then(|n| n.to_str()).unwrap_or("grail"));
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    // Temporary files are private by default; the result should get the usual permissions
    // (0666 less the umask), like any file the user creates.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    // Bound in this order so that on an error the file goes (`temp`) before its registration.
    let (registered, temp) = Temporary::create(&builder, dir).map_err(|e| GraphError::io(path, e))?;
    let mut file = BufWriter::with_capacity(1 << 20, temp.as_file());
    write(&mut file).and_then(|()| file.flush()).map_err(|e| GraphError::io(path, e))?;
    drop(file);
    temp.persist(path).map_err(|e| GraphError::io(path, e.error))?;
    drop(registered);
    Ok(())
}

/// [`write_atomically`] for a text file, gzip-compressed when its name ends in `.gz` (as graph
/// files are): for result files.
pub fn write_text_file(path: &Path, write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("gz")) {
        write_atomically(path, |file| {
            let mut encoder = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
            write(&mut encoder)?;
            encoder.finish().map(drop)
        })
    } else {
        write_atomically(path, write)
    }
}

/// Where a symbolic link finally points (a link to a file that does not exist yet included).
fn resolve_link(path: &Path) -> Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = std::fs::read_link(&current).map_err(|e| GraphError::io(&current, e))?;
                current = match current.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            _ => return Ok(current),
        }
    }
    Err(GraphError::invalid(format!("{}: too many levels of symbolic links", path.display())))
}

/// Temporary files being written, removed by [`remove_temporaries`] if the process is stopped.
static TEMPORARIES: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Set by [`remove_temporaries`]: the process is stopping, and makes no more temporary files.
static STOPPING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A temporary file's place in [`TEMPORARIES`], given up when it is renamed or removed.
struct Temporary(PathBuf);

impl Temporary {
    /// A new temporary file in `dir`, registered in the same step: it is made and listed under
    /// the list's lock, so a signal's [`remove_temporaries`] finds it, however soon after its
    /// creation the signal comes (or, once stopping, no file is made).
    fn create(builder: &tempfile::Builder, dir: &Path) -> std::io::Result<(Temporary, tempfile::NamedTempFile)> {
        let mut list = TEMPORARIES.lock().unwrap_or_else(|p| p.into_inner());
        if STOPPING.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(std::io::Error::new(std::io::ErrorKind::Interrupted, "interrupted"));
        }
        let temp = builder.tempfile_in(dir)?;
        list.push(temp.path().to_path_buf());
        Ok((Temporary(temp.path().to_path_buf()), temp))
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        TEMPORARIES.lock().unwrap_or_else(|p| p.into_inner()).retain(|p| *p != self.0);
    }
}

/// Removes every temporary file a write in progress has made: for a signal handler about to end
/// the process, so that an interrupted command leaves nothing half-written behind.
pub fn remove_temporaries() {
    let mut list = TEMPORARIES.lock().unwrap_or_else(|p| p.into_inner());
    STOPPING.store(true, std::sync::atomic::Ordering::SeqCst);
    let paths = std::mem::take(&mut *list);
    drop(list);
    for path in paths {
        let _ = std::fs::remove_file(path);
    }
}

fn write_format(graph: &Graph, format: Format, out: &mut dyn Write, progress: &dyn Progress) -> std::io::Result<()> {
    match format {
        Format::Dimacs => dimacs::write(graph, out, progress),
        Format::MatrixMarket => mtx::write(graph, out, progress),
        Format::EdgeList => edgelist::write(graph, false, out, progress),
        Format::WeightedEdgeList => edgelist::write(graph, true, out, progress),
        Format::Metis => metis::write(graph, out, progress),
        Format::Galois => galois::write(graph, out),
        Format::Gcsr => gcsr::write(graph, out),
    }
}
