//! Sequential reference algorithms and verifiers (filled in next).
