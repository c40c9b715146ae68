//! Graph generators (filled in next).
