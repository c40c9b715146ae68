//! Triangle meshes: the data of Delaunay mesh refinement and the other mesh-based morph
//! algorithms.
//!
//! - [`Mesh`]: points, counter-clockwise triangles, optional boundary segments and holes (what
//!   Triangle's `.node`, `.ele` and `.poly` files hold), with triangle adjacency derived from it;
//! - [`io`]: reading and writing Triangle's formats, 0- or 1-based as the files say, every error
//!   with file and line;
//! - [`predicates`]: orientation and in-circle tests with adaptive-precision arithmetic, so a
//!   verdict is never wrong by round-off;
//! - [`generate`]: the Delaunay triangulation of random points in a square;
//! - [`order`]: a mesh renumbered along a Hilbert curve, so that neighbours in the plane are
//!   neighbours in memory;
//! - [`verify`]: a verifier that trusts nothing of the code that made the mesh: a valid
//!   triangulation (indices, orientation, each edge shared by at most two triangles with opposite
//!   orientations), every edge locally Delaunay (hence the whole mesh, except across boundary
//!   segments), and the quality (minimum angle, triangles below a bound).

pub mod draw;
pub mod generate;
pub mod io;
mod mesh;
pub mod order;
pub mod predicates;
pub mod refine;
pub mod verify;

pub use mesh::{Mesh, NO_NEIGHBOR};

/// What can go wrong reading, writing or checking a mesh.
#[derive(Debug, thiserror::Error)]
pub enum MeshError {
    /// The message includes the system's, so the error has no `source` (which would print it
    /// twice in a chain of causes).
    #[error("{path}: {cause}")]
    Io { path: String, cause: std::io::Error },
    /// A malformed file: where, and what is wrong.
    #[error("{path}:{line}: {message}")]
    Malformed { path: String, line: usize, message: String },
    /// A mesh that is not what it claims (a bad index, a flipped triangle).
    #[error("{0}")]
    Invalid(String),
}

pub type Result<T, E = MeshError> = std::result::Result<T, E>;
