//! Triangle's file formats: `.node` (points), `.ele` (triangles), `.poly` (points, boundary
//! segments, holes). Numbering starts at 0 or 1 as the file's first point says; `#` starts a
//! comment; blank lines are skipped. Extra attributes and boundary markers are read past.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::{Mesh, MeshError, Result};

/// The lines of a file that hold something: (line number, whitespace-separated fields).
struct Lines {
    path: String,
    rows: Vec<(usize, Vec<String>)>,
    next: usize,
}

impl Lines {
    fn read(path: &Path) -> Result<Lines> {
        let text =
            fs::read_to_string(path).map_err(|cause| MeshError::Io { path: path.display().to_string(), cause })?;
        let rows = text
            .lines()
            .enumerate()
            .filter_map(|(i, line)| {
                let content = line.split('#').next().unwrap_or("");
                let fields: Vec<String> = content.split_whitespace().map(String::from).collect();
                (!fields.is_empty()).then_some((i + 1, fields))
            })
            .collect();
        Ok(Lines { path: path.display().to_string(), rows, next: 0 })
    }

    fn fail(&self, line: usize, message: impl Into<String>) -> MeshError {
        MeshError::Malformed { path: self.path.clone(), line, message: message.into() }
    }

    /// The next row with at least `min` fields, and its line number.
    fn row(&mut self, what: &str, min: usize) -> Result<(usize, Vec<String>)> {
        let last = self.rows.last().map_or(1, |r| r.0);
        let Some((line, fields)) = self.rows.get(self.next).cloned() else {
            return Err(self.fail(last, format!("the file ends where {what} was expected")));
        };
        self.next += 1;
        if fields.len() < min {
            return Err(self.fail(line, format!("{what}: expected at least {min} numbers, found {}", fields.len())));
        }
        Ok((line, fields))
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
        let mut points = Vec::with_capacity(count as usize);
        let mut base = 0;
        for k in 0..count {
            let (line, fields) = self.row("a point `<number> <x> <y>`", 3)?;
            let number = self.int(line, &fields[0], "point number")?;
            if k == 0 {
                if number > 1 {
                    return Err(self.fail(line, format!("the first point is numbered {number}: expected 0 or 1")));
                }
                base = number as u32;
            } else if number != k + u64::from(base) {
                return Err(self.fail(
                    line,
                    format!("point numbered {number}, expected {} (points are numbered in order)", k + u64::from(base)),
                ));
            }
            points.push([self.float(line, &fields[1], "x")?, self.float(line, &fields[2], "y")?]);
        }
        Ok((points, base))
    }

    /// A point index as written, checked against `count` points numbered from `base`.
    fn index(&self, line: usize, field: &str, base: u32, count: usize) -> Result<u32> {
        let number = self.int(line, field, "point index")?;
        let index = number.checked_sub(u64::from(base)).filter(|&i| i < count as u64).ok_or_else(|| {
            self.fail(
                line,
                format!(
                    "point {number} does not exist (points are numbered {base}..{})",
                    count as u64 + u64::from(base)
                ),
            )
        })?;
        Ok(index as u32)
    }

    fn header(&mut self, what: &str) -> Result<(usize, Vec<String>)> {
        self.row(what, 1)
    }
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
    let mut out = Vec::with_capacity(triangles as usize);
    for _ in 0..triangles {
        let (line, fields) = lines.row("a triangle `<number> <a> <b> <c>`", 4)?;
        let mut tri = [0u32; 3];
        for (slot, field) in tri.iter_mut().zip(&fields[1..4]) {
            *slot = lines.index(line, field, base, count)?;
        }
        out.push(tri);
    }
    Ok(out)
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
    let mut segments = Vec::with_capacity(segment_count as usize);
    for _ in 0..segment_count {
        let (line, fields) = lines.row("a segment `<number> <a> <b>`", 3)?;
        let a = lines.index(line, &fields[1], base, points.len())?;
        let b = lines.index(line, &fields[2], base, points.len())?;
        if a == b {
            return Err(lines.fail(line, "a segment from a point to itself"));
        }
        segments.push([a, b]);
    }
    let mut holes = Vec::new();
    if lines.next < lines.rows.len() {
        let (line, header) = lines.header("the hole header `<holes>`")?;
        let hole_count = lines.int(line, &header[0], "number of holes")?;
        for _ in 0..hole_count {
            let (line, fields) = lines.row("a hole `<number> <x> <y>`", 3)?;
            holes.push([lines.float(line, &fields[1], "x")?, lines.float(line, &fields[2], "y")?]);
        }
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
/// counter-clockwise. Returns the mesh and the files' numbering base.
pub fn read_mesh(path: &Path) -> Result<(Mesh, u32)> {
    let (node, ele) = mesh_paths(path);
    let (points, base) = read_node(&node)?;
    let triangles = read_ele(&ele, base, points.len())?;
    let mut mesh = Mesh { points, triangles, ..Mesh::default() };
    mesh.normalize()?;
    Ok((mesh, base))
}

/// Writes `OUT.node` and `OUT.ele` numbered from `base` (Triangle's own default is 1), each
/// replaced only once complete.
pub fn write_mesh(mesh: &Mesh, out: &Path, base: u32) -> Result<()> {
    let (node, ele) = mesh_paths(out);
    write_atomically(&node, |f| {
        writeln!(f, "{} 2 0 0", mesh.points.len())?;
        for (i, p) in mesh.points.iter().enumerate() {
            // `{:?}` prints the shortest text that reads back as the same f64.
            writeln!(f, "{} {:?} {:?}", i as u64 + u64::from(base), p[0], p[1])?;
        }
        Ok(())
    })?;
    write_atomically(&ele, |f| {
        writeln!(f, "{} 3 0", mesh.triangles.len())?;
        for (t, tri) in mesh.triangles.iter().enumerate() {
            let [a, b, c] = tri.map(|v| u64::from(v) + u64::from(base));
            writeln!(f, "{} {a} {b} {c}", t as u64 + u64::from(base))?;
        }
        Ok(())
    })
}

/// Writes through grail's one atomic writer (standard output for `-`, special files written
/// through, links followed, a temporary file renamed into place and removed on interrupt).
fn write_atomically(path: &Path, write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    grail_graph::io::write_atomically(path, write).map_err(|e| MeshError::Invalid(e.to_string()))
}
