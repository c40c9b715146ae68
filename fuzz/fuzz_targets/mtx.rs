#![no_main]

use grail_graph::io::{Format, parse_graph};
use grail_graph::{BuildOptions, NoProgress};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if grail_fuzz::names_a_huge_graph(data) {
        return;
    }
    let _ = parse_graph(data, Format::MatrixMarket, &BuildOptions::AS_GIVEN, &NoProgress);
});
