//! Small parallel helpers shared by the substrate.

use rayon::prelude::*;

/// Items per task in the chunked scans below: large enough that the per-task cost of rayon's
/// early exit is negligible, small enough to balance well.
const SCAN_CHUNK: usize = 1 << 16;

/// The smallest `i < len` with `bad(i)`, scanning in parallel chunks.
///
/// Rayon's item-wise `position_first` checks for an early exit on every item, which is several
/// times slower than a plain loop; here each task runs a plain loop over its chunk.
pub(crate) fn first_index(len: usize, bad: impl Fn(usize) -> bool + Sync) -> Option<usize> {
    (0..len.div_ceil(SCAN_CHUNK))
        .into_par_iter()
        .find_first(|&c| (c * SCAN_CHUNK..((c + 1) * SCAN_CHUNK).min(len)).any(&bad))
        .and_then(|c| (c * SCAN_CHUNK..((c + 1) * SCAN_CHUNK).min(len)).find(|&i| bad(i)))
}

/// The first position where `values` decreases: the smallest `i` with `values[i - 1] > values[i]`.
pub(crate) fn first_decrease(values: &[u64]) -> Option<usize> {
    first_index(values.len().saturating_sub(1), |i| values[i] > values[i + 1]).map(|i| i + 1)
}

/// The first node id in `ids` that is not below `n`.
pub(crate) fn first_out_of_range(ids: &[u32], n: u64) -> Option<usize> {
    first_index(ids.len(), |i| u64::from(ids[i]) >= n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_first_offender() {
        let mut values: Vec<u64> = (0..300_000).collect();
        assert_eq!(first_decrease(&values), None);
        values[200_001] = 5;
        values[250_000] = 0;
        assert_eq!(first_decrease(&values), Some(200_001));
        let ids = vec![3u32; 200_000];
        assert_eq!(first_out_of_range(&ids, 4), None);
        assert_eq!(first_out_of_range(&ids, 3), Some(0));
        assert_eq!(first_index(0, |_| true), None);
    }
}
