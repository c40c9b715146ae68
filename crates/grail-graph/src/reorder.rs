//! Node reorderings (filled in next).
