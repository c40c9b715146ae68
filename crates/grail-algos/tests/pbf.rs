//! Predicate-based filtering through routers on CPU devices: the kept values equal a plain
//! filter's, in order, and every segment went to exactly one device.

use grail_algos::pbf::{Options, filter, random_values, reference};
use grail_ir::OptConfig;
use grail_runtime::multi::Device;

#[test]
fn routed_filtering_keeps_what_a_plain_filter_keeps() {
    for (count, segment, devices, divisor) in
        [(0, 10, 1, 7), (1, 10, 2, 1), (10_000, 1_000, 3, 7), (25_001, 777, 4, 3), (5_000, 5_000, 2, 1_000_003)]
    {
        let values = random_values(count, count as u64 + 1);
        let options =
            Options { devices: vec![Device::Cpu; devices], segment, divisor, threads: 1, opt: OptConfig::all() };
        let filtered = filter(&values, &options).unwrap();
        assert_eq!(
            filtered.kept,
            reference(&values, divisor),
            "{count} values in segments of {segment}, {devices} devices"
        );
        assert_eq!(filtered.shares.iter().map(|s| s.values).sum::<usize>(), count);
        assert_eq!(filtered.shares.iter().map(|s| s.segments).sum::<usize>(), count.div_ceil(segment));
    }
}

#[test]
fn a_divisor_of_zero_and_no_devices_are_refused() {
    let options = Options { devices: vec![Device::Cpu], segment: 10, divisor: 0, threads: 1, opt: OptConfig::all() };
    assert!(filter(&[1, 2, 3], &options).unwrap_err().to_string().contains("divisor"));
    let options = Options { devices: Vec::new(), divisor: 7, ..options };
    assert!(filter(&[1, 2, 3], &options).is_err());
}
