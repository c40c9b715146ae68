#![no_main]

use grail_graph::io::{Format, parse_graph};
use grail_graph::{BuildOptions, NoProgress};

// Binary headers are checked against the input's length before anything is allocated, so no
// input is skipped here.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = parse_graph(data, Format::Galois, &BuildOptions::AS_GIVEN, &NoProgress);
});
