//! Groute's collective operations (§2 and §4 of the paper): broadcast and all-reduce over a ring
//! of endpoints, as NCCL does over the bus, each transfer packetized so that the hops pipeline.
//! The ring's links are [`Router`]s of one input and one output (a Groute link: packets of a
//! fixed size, `buffers` of them in flight), so a collective runs where the routers do: in one
//! process, each endpoint a thread driving its device; a message-passing transport beyond one
//! node would go under the same links.
//!
//! Every endpoint of the ring calls the same collective with its own number, as in Groute (and
//! MPI); a call returns when that endpoint has its result.

use super::router::{Router, Segment, Static};

/// A ring of `endpoints` endpoints: a link from each to the next.
pub struct RingLinks<T> {
    links: Vec<Router<T>>,
    packet: usize,
}

impl<T: Clone + Send> RingLinks<T> {
    /// A ring of `endpoints` endpoints whose links carry packets of up to `packet` items,
    /// `buffers` of them in flight (at least one of each).
    pub fn new(endpoints: usize, packet: usize, buffers: usize) -> RingLinks<T> {
        assert!(endpoints > 0, "a ring needs an endpoint");
        let links = (0..endpoints).map(|_| Router::new(1, 1, buffers.max(1), Box::new(Static(|_: &Segment<T>| 0))));
        RingLinks { links: links.collect(), packet: packet.max(1) }
    }

    pub fn endpoints(&self) -> usize {
        self.links.len()
    }

    /// Sends `items` (starting at `offset` of the whole) from endpoint `me` to the next, and
    /// takes as many items from the previous endpoint, packet by packet (a send, then a
    /// receive: no endpoint waits on a full link while its own predecessor waits on it).
    /// Returns what came in, with its offset.
    fn shift(&self, me: usize, offset: u64, items: &[T], incoming: usize) -> Vec<T> {
        let k = self.links.len();
        let out = &self.links[me];
        let from = &self.links[(me + k - 1) % k];
        let mut received = Vec::with_capacity(incoming);
        let packets = items.len().div_ceil(self.packet).max(incoming.div_ceil(self.packet));
        for p in 0..packets {
            let range = (p * self.packet).min(items.len())..((p + 1) * self.packet).min(items.len());
            if !range.is_empty() {
                out.send(0, Segment { offset: offset + range.start as u64, items: items[range].to_vec() });
            }
            if received.len() < incoming {
                let segment = from.receive(0).expect("a ring's links stay open");
                received.extend(segment.items);
            }
        }
        received
    }

    /// Broadcast: endpoint `root`'s `len` items (`data` there; ignored elsewhere) to every
    /// endpoint, around the ring from the root, each endpoint passing each packet on as soon as
    /// it has it (but to the root). Every endpoint returns the root's items.
    pub fn broadcast(&self, me: usize, root: usize, data: &[T], len: usize) -> Vec<T> {
        let k = self.links.len();
        if me == root {
            assert_eq!(data.len(), len, "the root broadcasts the {len} items every endpoint expects");
            if k > 1 {
                for (p, packet) in data.chunks(self.packet).enumerate() {
                    self.links[me].send(0, Segment { offset: (p * self.packet) as u64, items: packet.to_vec() });
                }
            }
            return data.to_vec();
        }
        let from = &self.links[(me + k - 1) % k];
        let forward = (me + 1) % k != root;
        let mut items = Vec::with_capacity(len);
        while items.len() < len {
            let segment = from.receive(0).expect("a ring's links stay open");
            items.extend_from_slice(&segment.items);
            if forward {
                self.links[me].send(0, segment);
            }
        }
        items
    }

    /// All-reduce: every endpoint's `values` (the same length everywhere) combined element by
    /// element with `op` (associative and commutative), returned to every endpoint. The ring
    /// algorithm: the values cut into one chunk per endpoint; in `k - 1` steps each endpoint
    /// passes a partly reduced chunk on and combines the one it receives into its own
    /// (reduce-scatter), then in `k - 1` more passes the finished chunks around (all-gather).
    /// Each endpoint sends and receives about `2 (k - 1) / k` times the values, whatever `k`.
    pub fn all_reduce(&self, me: usize, values: &[T], op: impl Fn(&T, &T) -> T) -> Vec<T> {
        let k = self.links.len();
        let n = values.len();
        let chunk = |c: usize| (c * n / k)..((c + 1) * n / k);
        let mut mine = values.to_vec();
        if k == 1 {
            return mine;
        }
        // Step s: send chunk (me - s), receive chunk (me - s - 1) and combine it in.
        for s in 0..k - 1 {
            let send = chunk((me + k - s) % k);
            let take = chunk((me + 2 * k - s - 1) % k);
            let incoming = self.shift(me, send.start as u64, &mine[send], take.len());
            for (slot, v) in mine[take].iter_mut().zip(&incoming) {
                *slot = op(slot, v);
            }
        }
        // Endpoint `me` now holds chunk (me + 1) reduced over every endpoint; pass them round.
        for s in 0..k - 1 {
            let send = chunk((me + 1 + k - s) % k);
            let take = chunk((me + 2 * k - s) % k);
            let incoming = self.shift(me, send.start as u64, &mine[send], take.len());
            mine[take].clone_from_slice(&incoming);
        }
        mine
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `f(me)` on every endpoint of `ring` at once; the results by endpoint.
    fn on_every_endpoint<T: Clone + Send, R: Send>(ring: &RingLinks<T>, f: impl Fn(usize) -> R + Sync) -> Vec<R> {
        std::thread::scope(|scope| {
            let f = &f;
            let handles: Vec<_> = (0..ring.endpoints()).map(|me| scope.spawn(move || f(me))).collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        })
    }

    /// Every endpoint gets the root's items, from every root, for lengths shorter and longer
    /// than a packet and than the ring, and with one buffer per link.
    #[test]
    fn broadcast_gives_every_endpoint_the_roots_items() {
        for k in 1..=5 {
            for (len, packet, buffers) in [(0, 4, 2), (1, 4, 1), (3, 1, 1), (37, 4, 2), (100, 7, 3)] {
                let ring = RingLinks::new(k, packet, buffers);
                for root in 0..k {
                    let data: Vec<u64> = (0..len as u64).map(|i| i * 31 + root as u64).collect();
                    let got = on_every_endpoint(&ring, |me| {
                        ring.broadcast(me, root, if me == root { &data } else { &[] }, len)
                    });
                    for (me, items) in got.iter().enumerate() {
                        assert_eq!(items, &data, "{k} endpoints, root {root}, endpoint {me}, {len} items");
                    }
                }
            }
        }
    }

    /// Every endpoint gets the element-wise sum (and minimum) of all endpoints' values, for
    /// lengths that do not divide evenly among the endpoints (some chunks empty).
    #[test]
    fn all_reduce_gives_every_endpoint_the_combined_values() {
        for k in 1..=5 {
            for (len, packet, buffers) in [(0, 3, 1), (2, 3, 1), (5, 1, 1), (64, 5, 2), (101, 8, 2)] {
                let ring = RingLinks::new(k, packet, buffers);
                let values =
                    |me: usize| -> Vec<u64> { (0..len as u64).map(|i| (i * 7 + me as u64 * 13) % 23).collect() };
                let sums = on_every_endpoint(&ring, |me| ring.all_reduce(me, &values(me), |a, b| a + b));
                let mins = on_every_endpoint(&ring, |me| ring.all_reduce(me, &values(me), |a, b| *a.min(b)));
                let sum: Vec<u64> = (0..len).map(|i| (0..k).map(|e| values(e)[i]).sum()).collect();
                let min: Vec<u64> = (0..len).map(|i| (0..k).map(|e| values(e)[i]).min().unwrap()).collect();
                for me in 0..k {
                    assert_eq!(sums[me], sum, "{k} endpoints, {len} values, endpoint {me}");
                    assert_eq!(mins[me], min, "{k} endpoints, {len} values, endpoint {me}");
                }
            }
        }
    }
}
