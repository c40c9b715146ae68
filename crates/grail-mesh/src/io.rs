//! Triangle's file formats: `.node` (points), `.ele` (triangles), `.poly` (points, boundary
//! segments, holes). Numbering starts at 0 or 1 as the file's first point says; `#` starts a
//! comment; blank lines are skipped. Extra attributes and boundary markers are read past.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::{Mesh, MeshError, Result};

/// The lines of a file that hold something: each one's line number and where its text (without
/// its comment) lies in the file. Found on every core, and read without copying: meshes of
/// millions of triangles are files of hundreds of megabytes.
struct Lines {
    path: String,
    text: String,
    rows: Vec<Row>,
    next: usize,
}

/// A line with content: its number (from 1) and its text's byte range, comment excluded.
#[derive(Debug, Clone, Copy)]
struct Row {
    line: usize,
    start: usize,
    end: usize,
}

/// Bytes of text below which a chunk is not worth a task of its own.
const CHUNK: usize = 1 << 20;

/// Rows parsed at a time by one task: enough to amortize the task, few enough to share.
const ROWS_PER_TASK: usize = 1 << 14;

impl Lines {
    fn read(path: &Path) -> Result<Lines> {
        let text =
            fs::read_to_string(path).map_err(|cause| MeshError::Io { path: path.display().to_string(), cause })?;
        let rows = rows_of(&text);
        Ok(Lines { path: path.display().to_string(), text, rows, next: 0 })
    }

    fn fail(&self, line: usize, message: impl Into<String>) -> MeshError {
        MeshError::Malformed { path: self.path.clone(), line, message: message.into() }
    }

    /// A row's whitespace-separated fields.
    fn fields(&self, row: Row) -> std::str::SplitWhitespace<'_> {
        self.text[row.start..row.end].split_whitespace()
    }

    /// The error for a file that ends where `what` was expected.
    fn ended(&self, what: &str) -> MeshError {
        let last = self.rows.last().map_or(1, |r| r.line);
        self.fail(last, format!("the file ends where {what} was expected"))
    }

    /// The next row with at least `min` fields, and its line number (for headers: the rows in
    /// bulk go through `parse_rows`).
    fn row(&mut self, what: &str, min: usize) -> Result<(usize, Vec<String>)> {
        let Some(&row) = self.rows.get(self.next) else {
            return Err(self.ended(what));
        };
        self.next += 1;
        let fields: Vec<String> = self.fields(row).map(String::from).collect();
        if fields.len() < min {
            return Err(self.fail(row.line, format!("{what}: expected at least {min} numbers, found {}", fields.len())));
        }
        Ok((row.line, fields))
    }

    /// The next `count` rows, each with at least `min` fields, parsed on every core by `parse`
    /// (given the row's place among them, its line number and its fields). Where several are
    /// malformed, the error is the first one's, as a line-by-line reader would give.
    fn parse_rows<T: Send>(
        &mut self,
        count: u64,
        what: &str,
        min: usize,
        parse: impl Fn(&Lines, u64, usize, &[&str]) -> Result<T> + Sync,
    ) -> Result<Vec<T>> {
        let this = &*self;
        let first = this.next;
        let available = (this.rows.len() - first) as u64;
        let taken = count.min(available) as usize;
        let rows = &this.rows[first..first + taken];
        let one = |k: usize| -> Result<T> {
            let row = rows[k];
            let mut fields = [""; 8];
            let mut found = 0;
            for field in this.fields(row) {
                if found < fields.len() {
                    fields[found] = field;
                }
                found += 1;
            }
            if found < min {
                return Err(this.fail(row.line, format!("{what}: expected at least {min} numbers, found {found}")));
            }
            parse(this, k as u64, row.line, &fields[..found.min(fields.len())])
        };
        let parsed: std::result::Result<Vec<T>, ()> =
            (0..taken).into_par_iter().with_min_len(ROWS_PER_TASK).map(|k| one(k).map_err(|_| ())).collect();
        let parsed = match parsed {
            Ok(parsed) => parsed,
            Err(()) => {
                // Some row is malformed: the first one, in order, names the error.
                for k in 0..taken {
                    one(k)?;
                }
                unreachable!("a row failed in parallel but not in order");
            }
        };
        if (taken as u64) < count {
            return Err(this.ended(what));
        }
        self.next += taken;
        Ok(parsed)
    }

    fn int(&self, line: usize, field: &str, what: &str) -> Result<u64> {
        field.parse().map_err(|_| self.fail(line, format!("{what}: `{field}` is not a non-negative integer")))
    }

    fn float(&self, line: usize, field: &str, what: &str) -> Result<f64> {
        match field.parse::<f64>() {
            Ok(value) if value.is_finite() => Ok(value),
            _ => Err(self.fail(line, format!("{what}: `{field}` is not a finite number"))),
        }
    }

    /// `count` points after a `<count> <dim> <attributes> <markers>` header already read; the
    /// numbering base is the first point's number.
    fn points(&mut self, count: u64) -> Result<(Vec<[f64; 2]>, u32)> {
        const WHAT: &str = "a point `<number> <x> <y>`";
        let base = match self.rows.get(self.next) {
            Some(&row) if count > 0 => {
                let number = self.fields(row).next().map(|field| self.int(row.line, field, "point number"));
                match number {
                    Some(Ok(number)) if number > 1 => {
                        return Err(
                            self.fail(row.line, format!("the first point is numbered {number}: expected 0 or 1"))
                        );
                    }
                    Some(Ok(number)) => number as u32,
                    // The row's own parse below reports what is wrong with it.
                    _ => 0,
                }
            }
            _ => 0,
        };
        let points = self.parse_rows(count, WHAT, 3, |lines, k, line, fields| {
            let number = lines.int(line, fields[0], "point number")?;
            if number != k + u64::from(base) {
                return Err(lines.fail(
                    line,
                    format!("point numbered {number}, expected {} (points are numbered in order)", k + u64::from(base)),
                ));
            }
            Ok([lines.float(line, fields[1], "x")?, lines.float(line, fields[2], "y")?])
        })?;
        Ok((points, base))
    }

    /// A point index as written, checked against `count` points numbered from `base`.
    fn index(&self, line: usize, field: &str, base: u32, count: usize) -> Result<u32> {
        let number = self.int(line, field, "point index")?;
        let index = number.checked_sub(u64::from(base)).filter(|&i| i < count as u64).ok_or_else(|| {
            self.fail(line, format!("point {number} does not exist ({})", crate::mesh::point_range(count, base)))
        })?;
        Ok(index as u32)
    }

    fn header(&mut self, what: &str) -> Result<(usize, Vec<String>)> {
        self.row(what, 1)
    }
}

/// The rows of `text`: its lines with something before a `#`, numbered from 1. Chunks of the
/// text (cut at line breaks by [`grail_graph::io::chunk_ranges`]) are split on every core, and
/// their line numbers offset by the breaks before them.
fn rows_of(text: &str) -> Vec<Row> {
    let bytes = text.as_bytes();
    let chunks: Vec<(Vec<Row>, usize)> = grail_graph::io::chunk_ranges(bytes, 0, CHUNK)
        .into_par_iter()
        .map(|range| {
            let (from, to) = (range.start, range.end);
            let mut rows = Vec::new();
            let mut breaks = 0;
            let mut start = from;
            while start < to {
                let end = memchr::memchr(b'\n', &bytes[start..to]).map_or(to, |i| start + i);
                let content = memchr::memchr(b'#', &bytes[start..end]).map_or(end, |i| start + i);
                if !text[start..content].trim().is_empty() {
                    rows.push(Row { line: breaks + 1, start, end: content });
                }
                if end < to {
                    breaks += 1;
                }
                start = end + 1;
            }
            (rows, breaks)
        })
        .collect();
    let mut rows = Vec::with_capacity(chunks.iter().map(|c| c.0.len()).sum());
    let mut before = 0;
    for (chunk, breaks) in chunks {
        rows.extend(chunk.into_iter().map(|row| Row { line: row.line + before, ..row }));
        before += breaks;
    }
    rows
}

/// Reads a `.node` file: its points and numbering base.
pub fn read_node(path: &Path) -> Result<(Vec<[f64; 2]>, u32)> {
    let mut lines = Lines::read(path)?;
    let (line, header) = lines.header("the header `<points> <dimension> <attributes> <markers>`")?;
    let count = lines.int(line, &header[0], "number of points")?;
    if let Some(dim) = header.get(1)
        && dim != "2"
    {
        return Err(lines.fail(line, format!("dimension {dim}: only planar (2) meshes are supported")));
    }
    lines.points(count)
}

/// Reads an `.ele` file against `count` points numbered from `base`.
pub fn read_ele(path: &Path, base: u32, count: usize) -> Result<Vec<[u32; 3]>> {
    let mut lines = Lines::read(path)?;
    let (line, header) = lines.header("the header `<triangles> <corners> <attributes>`")?;
    let triangles = lines.int(line, &header[0], "number of triangles")?;
    let corners = header.get(1).map_or(Ok(3), |f| lines.int(line, f, "corners per triangle"))?;
    if corners != 3 && corners != 6 {
        return Err(lines
            .fail(line, format!("{corners} corners per triangle: expected 3 (or 6, of which the first 3 are used)")));
    }
    lines.parse_rows(triangles, "a triangle `<number> <a> <b> <c>`", 4, |lines, _, line, fields| {
        let mut tri = [0u32; 3];
        for (slot, field) in tri.iter_mut().zip(&fields[1..4]) {
            *slot = lines.index(line, field, base, count)?;
        }
        Ok(tri)
    })
}

/// Reads a `.poly` file (points it leaves to the `.node` beside it are read from there): the
/// domain as a mesh without triangles, and its numbering base.
pub fn read_poly(path: &Path) -> Result<(Mesh, u32)> {
    let mut lines = Lines::read(path)?;
    let (line, header) = lines.header("the header `<points> <dimension> <attributes> <markers>`")?;
    let count = lines.int(line, &header[0], "number of points")?;
    let (points, base) = if count == 0 {
        let node = path.with_extension("node");
        read_node(&node).map_err(|e| match e {
            MeshError::Io { cause, .. } => MeshError::Io {
                path: format!("{} (the .poly file has no points, so they are read from it)", node.display()),
                cause,
            },
            other => other,
        })?
    } else {
        lines.points(count)?
    };
    let (line, header) = lines.header("the segment header `<segments> <markers>`")?;
    let segment_count = lines.int(line, &header[0], "number of segments")?;
    let n = points.len();
    let segments = lines.parse_rows(segment_count, "a segment `<number> <a> <b>`", 3, |lines, _, line, fields| {
        let a = lines.index(line, fields[1], base, n)?;
        let b = lines.index(line, fields[2], base, n)?;
        if a == b {
            return Err(lines.fail(line, "a segment from a point to itself"));
        }
        Ok([a, b])
    })?;
    let mut holes = Vec::new();
    if lines.next < lines.rows.len() {
        let (line, header) = lines.header("the hole header `<holes>`")?;
        let hole_count = lines.int(line, &header[0], "number of holes")?;
        holes = lines.parse_rows(hole_count, "a hole `<number> <x> <y>`", 3, |lines, _, line, fields| {
            Ok([lines.float(line, fields[1], "x")?, lines.float(line, fields[2], "y")?])
        })?;
    }
    Ok((Mesh { points, triangles: Vec::new(), segments, holes }, base))
}

/// The `.node` and `.ele` paths of a mesh named by either file (or by its name without them).
pub fn mesh_paths(path: &Path) -> (PathBuf, PathBuf) {
    match path.extension().and_then(|e| e.to_str()) {
        Some("node" | "ele") => (path.with_extension("node"), path.with_extension("ele")),
        _ => {
            let with = |ext: &str| PathBuf::from(format!("{}.{ext}", path.display()));
            (with("node"), with("ele"))
        }
    }
}

/// Reads a triangulated mesh: a `.node` file and the `.ele` beside it; triangles are made
/// counter-clockwise, and a degenerate one is an error naming it as the files number it.
/// Returns the mesh and the files' numbering base.
pub fn read_mesh(path: &Path) -> Result<(Mesh, u32)> {
    let (mut mesh, base) = read_mesh_oriented(path)?;
    mesh.normalize_numbered(base)?;
    Ok((mesh, base))
}

/// Reads a triangulated mesh as [`read_mesh`] does, but keeps degenerate triangles rather than
/// failing on the first: for a caller that verifies the mesh next
/// ([`crate::verify::check_numbered`]), which names every problem, so that a mesh with a
/// degenerate triangle is judged as any other invalid mesh is. Points named by the triangles
/// exist (the reader checks every index); clockwise triangles are made counter-clockwise.
pub fn read_mesh_oriented(path: &Path) -> Result<(Mesh, u32)> {
    let (node, ele) = mesh_paths(path);
    let (points, base) = read_node(&node)?;
    let triangles = read_ele(&ele, base, points.len())?;
    let mut mesh = Mesh { points, triangles, ..Mesh::default() };
    mesh.orient();
    Ok((mesh, base))
}

/// Writes `OUT.node` and `OUT.ele` numbered from `base` (Triangle's own default is 1), each
/// replaced only once complete. The lines are formatted on every core, a batch at a time.
pub fn write_mesh(mesh: &Mesh, out: &Path, base: u32) -> Result<()> {
    let (node, ele) = mesh_paths(out);
    let base = u64::from(base);
    write_atomically(&node, |f| {
        writeln!(f, "{} 2 0 0", mesh.points.len())?;
        // `{:?}` prints the shortest text that reads back as the same f64.
        write_rows(f, &mesh.points, |text, i, p| writeln!(text, "{} {:?} {:?}", i as u64 + base, p[0], p[1]))
    })?;
    write_atomically(&ele, |f| {
        writeln!(f, "{} 3 0", mesh.triangles.len())?;
        write_rows(f, &mesh.triangles, |text, t, tri| {
            let [a, b, c] = tri.map(|v| u64::from(v) + base);
            writeln!(text, "{} {a} {b} {c}", t as u64 + base)
        })
    })
}

/// Writes a line per item to `out`: chunks of items formatted on every core into text, a batch
/// of chunks at a time (so that the whole file is never held at once), written in order.
fn write_rows<T: Sync>(
    out: &mut dyn Write,
    items: &[T],
    line: impl Fn(&mut Vec<u8>, usize, &T) -> std::io::Result<()> + Sync,
) -> std::io::Result<()> {
    const LINES: usize = 1 << 14;
    let batch = LINES * rayon::current_num_threads().max(1) * 4;
    for (b, items) in items.chunks(batch).enumerate() {
        let texts: Vec<std::io::Result<Vec<u8>>> = items
            .par_chunks(LINES)
            .enumerate()
            .map(|(c, chunk)| {
                let mut text = Vec::with_capacity(chunk.len() * 40);
                for (i, item) in chunk.iter().enumerate() {
                    line(&mut text, b * batch + c * LINES + i, item)?;
                }
                Ok(text)
            })
            .collect();
        for text in texts {
            out.write_all(&text?)?;
        }
    }
    Ok(())
}

/// Writes through grail's one atomic writer (standard output for `-`, special files written
/// through, links followed, a temporary file renamed into place and removed on interrupt).
fn write_atomically(path: &Path, write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    grail_graph::io::write_atomically(path, write).map_err(|e| MeshError::Invalid(e.to_string()))
}
