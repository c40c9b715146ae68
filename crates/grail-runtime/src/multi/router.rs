//! Groute's routers (Table 1 of the paper): endpoints connected by links through a router, which
//! sends each segment to one of the destinations its routing policy allows, the first with a
//! free receive buffer. A link is packetized and multi-buffered: it holds at most `buffers`
//! segments in flight (two: double buffering), so a sender waits when every allowed destination
//! is busy, and a fast destination takes more segments than a slow one (load balancing). Inputs
//! shut down when they have nothing more to send; an output's `receive` returns `None` once
//! every input has shut down and its link is empty.
//!
//! This is the in-process router (endpoints are threads driving devices); like the asynchronous
//! mode's transport (`asynchronous.rs`), it is where a message-passing router beyond one
//! node would go. `grail pbf` (Predicate-Based Filtering, Groute's example) uses it.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};

/// A piece of a larger array on its way between endpoints: `items` starting at `offset`.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment<T> {
    pub offset: u64,
    pub items: Vec<T>,
}

/// Which outputs of a router a segment from `source` may go to (the router takes the first of
/// them that has room, in this order).
pub trait RoutingPolicy<T>: Send + Sync {
    fn destinations(&self, segment: &Segment<T>, source: usize, outputs: usize) -> Vec<usize>;
}

/// Any output, starting after the last one chosen: Groute's "first available device".
#[derive(Debug, Default)]
pub struct AnyDevice {
    next: std::sync::atomic::AtomicUsize,
}

impl<T> RoutingPolicy<T> for AnyDevice {
    fn destinations(&self, _segment: &Segment<T>, _source: usize, outputs: usize) -> Vec<usize> {
        let start = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        (0..outputs).map(|i| (start + i) % outputs).collect()
    }
}

/// The next output after the source's own number: segments go around a ring of devices.
#[derive(Debug, Default, Clone, Copy)]
pub struct Ring;

impl<T> RoutingPolicy<T> for Ring {
    fn destinations(&self, _segment: &Segment<T>, source: usize, outputs: usize) -> Vec<usize> {
        vec![(source + 1) % outputs]
    }
}

/// One output chosen from the segment itself (by its offset, say): a static routing.
pub struct Static<F>(pub F);

impl<T, F: Fn(&Segment<T>) -> usize + Send + Sync> RoutingPolicy<T> for Static<F> {
    fn destinations(&self, segment: &Segment<T>, _source: usize, outputs: usize) -> Vec<usize> {
        vec![(self.0)(segment) % outputs]
    }
}

/// What the router's links hold, under one lock: each output's segments in flight, and the
/// inputs still open.
struct Links<T> {
    queues: Vec<VecDeque<Segment<T>>>,
    open_inputs: usize,
}

/// A router of `inputs` senders and `outputs` receivers.
pub struct Router<T> {
    links: Mutex<Links<T>>,
    changed: Condvar,
    buffers: usize,
    policy: Box<dyn RoutingPolicy<T>>,
}

impl<T: Send> Router<T> {
    /// A router whose links hold `buffers` segments each (at least one).
    pub fn new(inputs: usize, outputs: usize, buffers: usize, policy: Box<dyn RoutingPolicy<T>>) -> Router<T> {
        assert!(outputs > 0, "a router needs an output");
        Router {
            links: Mutex::new(Links { queues: (0..outputs).map(|_| VecDeque::new()).collect(), open_inputs: inputs }),
            changed: Condvar::new(),
            buffers: buffers.max(1),
            policy,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Links<T>> {
        self.links.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Sends `segment` from input `source` to the first destination the policy allows that has
    /// a free buffer, waiting for one to free up; returns the destination.
    pub fn send(&self, source: usize, segment: Segment<T>) -> usize {
        let outputs = self.lock().queues.len();
        let allowed = self.policy.destinations(&segment, source, outputs);
        assert!(!allowed.is_empty(), "a routing policy named no destination");
        let mut links = self.lock();
        loop {
            if let Some(&output) = allowed.iter().find(|&&o| links.queues[o].len() < self.buffers) {
                links.queues[output].push_back(segment);
                self.changed.notify_all();
                return output;
            }
            links = self.changed.wait(links).unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }

    /// Input `source` will send nothing more.
    pub fn shutdown(&self, _source: usize) {
        let mut links = self.lock();
        links.open_inputs = links.open_inputs.saturating_sub(1);
        self.changed.notify_all();
    }

    /// The next segment for `output`, waiting for one; `None` once every input has shut down
    /// and nothing is left for it.
    pub fn receive(&self, output: usize) -> Option<Segment<T>> {
        let mut links = self.lock();
        loop {
            if let Some(segment) = links.queues[output].pop_front() {
                self.changed.notify_all();
                return Some(segment);
            }
            if links.open_inputs == 0 {
                return None;
            }
            links = self.changed.wait(links).unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segments(count: u64) -> Vec<Segment<u64>> {
        (0..count).map(|i| Segment { offset: i * 10, items: (i * 10..i * 10 + 10).collect() }).collect()
    }

    /// Two senders, three receivers: every segment arrives once, wherever it went.
    #[test]
    fn every_segment_arrives_once_through_any_device() {
        let router = Router::new(2, 3, 2, Box::new(AnyDevice::default()));
        let received = std::thread::scope(|scope| {
            let receivers: Vec<_> = (0..3)
                .map(|o| {
                    let router = &router;
                    scope.spawn(move || {
                        let mut got = Vec::new();
                        while let Some(segment) = router.receive(o) {
                            if o == 0 {
                                // A slow device: the others take more.
                                std::thread::sleep(std::time::Duration::from_millis(1));
                            }
                            got.push(segment.offset);
                        }
                        got
                    })
                })
                .collect();
            for source in 0..2 {
                for segment in segments(40).into_iter().filter(|s| (s.offset / 10) % 2 == source as u64) {
                    router.send(source, segment);
                }
                router.shutdown(source);
            }
            receivers.into_iter().map(|r| r.join().unwrap()).collect::<Vec<_>>()
        });
        let mut all: Vec<u64> = received.iter().flatten().copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..40).map(|i| i * 10).collect::<Vec<_>>());
        assert!(received[0].len() < received[1].len() + received[2].len(), "the slow device took less");
    }

    #[test]
    fn ring_and_static_policies_choose_as_they_say() {
        let segment = Segment { offset: 30, items: vec![1u32] };
        assert_eq!(Ring.destinations(&segment, 2, 3), vec![0]);
        assert_eq!(Ring.destinations(&segment, 0, 3), vec![1]);
        let by_offset = Static(|s: &Segment<u32>| (s.offset / 10) as usize);
        assert_eq!(by_offset.destinations(&segment, 0, 2), vec![1]);
        let router = Router::new(1, 2, 1, Box::new(by_offset));
        assert_eq!(router.send(0, segment.clone()), 1);
        router.shutdown(0);
        assert_eq!(router.receive(0), None);
        assert_eq!(router.receive(1), Some(segment));
        assert_eq!(router.receive(1), None);
    }
}
