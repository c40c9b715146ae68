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

/// A slice that several threads write at provably disjoint positions.
#[derive(Clone, Copy)]
pub(crate) struct DisjointWriter<T> {
    ptr: *mut T,
    len: usize,
}

// SAFETY: used only where each position is written by exactly one task (see call sites).
unsafe impl<T: Send> Send for DisjointWriter<T> {}
unsafe impl<T: Send> Sync for DisjointWriter<T> {}

impl<T> DisjointWriter<T> {
    pub(crate) fn new(slice: &mut [T]) -> Self {
        DisjointWriter { ptr: slice.as_mut_ptr(), len: slice.len() }
    }

    /// # Safety
    /// No other task may read or write position `i` while this runs.
    #[inline]
    pub(crate) unsafe fn write(&self, i: usize, value: T) {
        assert!(i < self.len);
        // SAFETY: in bounds (checked above) and exclusive (the caller's promise).
        unsafe { self.ptr.add(i).write(value) }
    }

    /// # Safety
    /// No other task may write position `i` while this runs.
    #[inline]
    pub(crate) unsafe fn read(&self, i: usize) -> T
    where
        T: Copy,
    {
        assert!(i < self.len);
        // SAFETY: in bounds (checked above), and not written meanwhile (the caller's promise).
        unsafe { self.ptr.add(i).read() }
    }
}

/// Cuts `values` into consecutive pieces of the given lengths, so that parallel tasks can each
/// own one.
pub(crate) fn split_by_lengths<T>(mut values: &mut [T], lengths: impl Iterator<Item = usize>) -> Vec<&mut [T]> {
    let mut pieces = Vec::new();
    for len in lengths {
        let (head, tail) = values.split_at_mut(len);
        pieces.push(head);
        values = tail;
    }
    pieces
}

/// Cuts `values` at the given increasing bounds (`bounds[0] == 0`, the last is the length).
pub(crate) fn split_by_bounds<'a, T>(values: &'a mut [T], bounds: &[usize]) -> Vec<&'a mut [T]> {
    split_by_lengths(values, bounds.windows(2).map(|w| w[1] - w[0]))
}

/// Node bounds `[0, ..., n]` of groups of consecutive nodes with roughly equal work (edges plus
/// nodes) for per-node parallel loops over a CSR, a fixed number of groups per thread so that
/// power-law and road graphs both balance.
pub(crate) fn node_groups(offsets: &[u64]) -> Vec<usize> {
    node_groups_of(offsets, 32 * rayon::current_num_threads())
}

/// Node bounds of at most `groups` groups of consecutive nodes with roughly equal work, as
/// [`node_groups`].
pub(crate) fn node_groups_of(offsets: &[u64], groups: usize) -> Vec<usize> {
    let n = offsets.len() - 1;
    let groups = groups.clamp(1, n.max(1));
    // Work before node v: its edge offset plus v itself; it grows with v.
    let total = offsets[n] + n as u64;
    let mut bounds = vec![0usize];
    for g in 1..groups {
        let goal = total * g as u64 / groups as u64;
        let cut = partition_point_by(n, |v| offsets[v] + (v as u64) < goal);
        bounds.push(cut.max(*bounds.last().unwrap()));
    }
    bounds.push(n);
    bounds.dedup();
    bounds
}

/// The first `v` in `0..n` for which `before(v)` is false, where `before` is true then false.
fn partition_point_by(n: usize, before: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if before(mid) { lo = mid + 1 } else { hi = mid }
    }
    lo
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

    #[test]
    fn groups_cover_every_node_once() {
        let offsets: Vec<u64> = (0..=1000u64).map(|v| v * v).collect();
        let bounds = node_groups(&offsets);
        assert_eq!((bounds[0], *bounds.last().unwrap()), (0, 1000));
        assert!(bounds.windows(2).all(|w| w[0] < w[1]));
        let mut values: Vec<u32> = (0..10).collect();
        let pieces = split_by_bounds(&mut values, &[0, 3, 3, 10]);
        assert_eq!(pieces.iter().map(|p| p.len()).collect::<Vec<_>>(), vec![3, 0, 7]);
    }
}
