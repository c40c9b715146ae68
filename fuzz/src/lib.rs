//! Helpers shared by the fuzz targets.

/// Whether the input holds a number that is valid as a node count or id but large enough to
/// make the graph huge (more than a million nodes). Such inputs are legal, and building their
/// graph legitimately needs gigabytes, which libFuzzer would report as an out-of-memory crash;
/// targets skip them. Numbers too large for 32 bits are kept: they exercise the overflow errors.
pub fn names_a_huge_graph(data: &[u8]) -> bool {
    data.split(|b| !b.is_ascii_digit()).any(|digits| {
        let value = digits.iter().try_fold(0u64, |v, &d| v.checked_mul(10)?.checked_add(u64::from(d - b'0')));
        value.is_some_and(|v| v > 1 << 20 && v <= u64::from(u32::MAX))
    })
}
