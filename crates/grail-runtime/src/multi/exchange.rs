//! The direct exchange of a bulk-synchronous superstep (Groute's links, between every pair of
//! parts): each part finds the changes it made and copies them straight into an *inbox* on the
//! device of the part that needs them, which merges or stores them there. Nothing is routed
//! through the host: between two GPUs the copy is peer to peer (over NVLink where the GPUs are
//! connected, staged by the driver where they are not); between a GPU and a CPU part it is one
//! copy to or from host memory.
//!
//! A superstep's synchronization is three rounds of the crew, every part at once:
//!
//! 1. *send ghosts* (at the end of the step): for each owner part, the ghosts it owns whose
//!    words changed go to the owner's inbox for this part ([`Route::to_owner`]), and the ghosts
//!    the kernel pushed go, as the owner's ids, to its push inbox ([`Route::to_owner_pushes`]);
//! 2. *merge*: each owner appends the pushes to its worklist, merges what every part sent into
//!    its nodes, records what those ghosts now hold, and (for properties kernels read through
//!    ghosts) sends every node whose word differs from what its ghosts hold to the ghosts'
//!    parts ([`Route::to_ghosts`]);
//! 3. *refresh*: each part stores the owners' words in its ghosts.
//!
//! A change's position counts from the start of the route's range, which both ends know: a
//! part's ghosts owned by part `o` (a range of its ghost list, [`super::bsp::Links`]) are, in the
//! same order, `o`'s mirror entries for that part (a range of `o`'s mirror list).
//!
//! Beyond one node, an inbox in another process would be one more kind of [`Place`] (writing to
//! it sends a message to that process, which copies it into the inbox before the round ends);
//! the rounds, routes and kernels stay as they are.

use std::ops::Range;

use super::Change;
use crate::error::Result;

/// Memory on the device of the part that reads it, `bytes` long (8-byte aligned), that
/// another part writes into between supersteps: [`Change`]s, or node ids (pushes).
#[derive(Clone)]
pub(crate) enum Place {
    /// A CPU part's inbox in host memory, by address.
    Host { address: usize, bytes: usize },
    /// A GPU part's inbox.
    #[cfg(feature = "gpu")]
    Device { ptr: u64, bytes: usize, context: std::sync::Arc<cudarc::driver::CudaContext> },
}

impl Place {
    pub fn bytes(&self) -> usize {
        match self {
            Place::Host { bytes, .. } => *bytes,
            #[cfg(feature = "gpu")]
            Place::Device { bytes, .. } => *bytes,
        }
    }

    /// Share `index` of the inbox when it is cut into shares of `bytes` bytes (one per property
    /// a superstep sends: the changes of each go to their own share).
    pub fn share(&self, index: usize, bytes: usize) -> Place {
        let offset = index * bytes;
        assert!(offset + bytes <= self.bytes(), "an inbox holds a share for every property a superstep sends");
        match self {
            Place::Host { address, .. } => Place::Host { address: address + offset, bytes },
            #[cfg(feature = "gpu")]
            Place::Device { ptr, context, .. } => {
                Place::Device { ptr: ptr + offset as u64, bytes, context: context.clone() }
            }
        }
    }

    /// Writes `data` (from host memory) to the start of the inbox.
    pub fn write_from_host<T: Copy>(&self, data: &[T]) -> Result<()> {
        assert!(std::mem::size_of_val(data) <= self.bytes(), "an inbox holds everything its route sends");
        match self {
            // SAFETY: the inbox holds `bytes` bytes, aligned for any plain type, and is read by
            // its part only after this round ends (the crew's rounds are the barrier).
            Place::Host { address, .. } => unsafe {
                std::ptr::copy_nonoverlapping(data.as_ptr(), *address as *mut T, data.len())
            },
            #[cfg(feature = "gpu")]
            Place::Device { ptr, context, .. } => crate::gpu::upload_to(context, *ptr, data)?,
        }
        Ok(())
    }
}

/// Where a part's ghosts live among the others, as fixed lists a device may keep copies of
/// (see [`super::bsp::Links`]): by ghost (local id minus the owned count) its owner part and its
/// position in the ghost list; by position the ghost's local id on its owner; where each owner's
/// group of positions starts.
#[derive(Clone, Copy)]
pub(crate) struct GhostMap<'a> {
    /// The part's own number.
    pub part: usize,
    pub owner_of: &'a [u32],
    pub position: &'a [u32],
    pub at_owner: &'a [u32],
    pub starts: &'a [u32],
}

/// What a part exchanges with one other part (its *peer*; a part's routes go to the others in
/// order).
pub(crate) struct Route {
    /// This part's ghosts that the peer owns: a range of its ghost list.
    pub ghosts: Range<usize>,
    /// This part's nodes that the peer holds as ghosts, in the peer's order: a range of its
    /// mirror list.
    pub mirrors: Range<usize>,
    /// The peer's inbox for the changes of this part's ghosts (`None` when it has none of the
    /// peer's nodes).
    pub to_owner: Option<Place>,
    /// The peer's inbox for this part's words of the peer's ghosts (`None` when it has none).
    pub to_ghosts: Option<Place>,
    /// The peer's inbox for this part's pushes of the peer's nodes (in the peer's ids).
    pub to_owner_pushes: Option<Place>,
    /// This part's inboxes (numbers of [`super::PartRun::open_inbox`]): the changes of the
    /// peer's ghosts, the peer's words of this part's ghosts, and the peer's pushes of this
    /// part's nodes.
    pub from_ghosts: Option<usize>,
    pub from_owner: Option<usize>,
    pub from_ghost_pushes: Option<usize>,
}

/// Where a property's changes lie in an inbox a part opened: the inbox's number there and the
/// share's first byte ([`Place::share`]: the `index`-th of shares of `bytes` bytes).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Share {
    pub inbox: usize,
    pub offset: usize,
}

impl Share {
    pub fn of(inbox: usize, index: usize, bytes: usize) -> Share {
        Share { inbox, offset: index * bytes }
    }
}

/// What one sender sent a part for one property: its share of an inbox, how many changes it
/// holds, and where the sender's range of the part's fixed list (its mirrors) begins.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Received {
    pub share: Share,
    pub count: usize,
    pub start: usize,
}

/// What one sender sent a part in a deferred superstep ([`super::PartRun::invoke_deferred`]):
/// as [`Received`], but the count is a word on the sender's device (`count_at`), at most `most`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Counted {
    pub share: Share,
    pub count_at: u64,
    pub most: usize,
    pub start: usize,
}

/// How many properties one superstep may send at most, so how many shares each inbox holds:
/// `changes` for the changed ghosts (properties a kernel writes through other nodes), `words` for
/// the owners' words going back to their ghosts (properties written and read through ghosts).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shares {
    pub changes: usize,
    pub words: usize,
}

/// Which of part `q`'s routes goes to part `o` (another part).
pub(crate) fn route_to(q: usize, o: usize) -> usize {
    if o < q { o } else { o - 1 }
}

/// The peer of part `q`'s route `i`.
pub(crate) fn peer(q: usize, i: usize) -> usize {
    if i < q { i } else { i + 1 }
}

/// An inbox's number on its part, and where it lies.
type Inbox = (usize, Place);

/// A part's inboxes for one other part.
#[derive(Default)]
struct Inboxes {
    ghosts: Option<Inbox>,
    owner: Option<Inbox>,
    pushes: Option<Inbox>,
}

/// Opens every part's inboxes and returns each part's routes: `ghost_groups[q][o]` is the range
/// of part `q`'s ghost list that part `o` owns, `mirror_groups[o][q]` the range of part `o`'s
/// mirror list that part `q` holds as ghosts (the same nodes in the same order).
pub(crate) fn routes(
    runs: &mut [Box<dyn super::PartRun + '_>],
    ghost_groups: &[Vec<Range<usize>>],
    mirror_groups: &[Vec<Range<usize>>],
    shares: Shares,
) -> Result<Vec<Vec<Route>>> {
    let k = runs.len();
    // inboxes[r][s]: part r's inboxes for part s (its ghosts' changes and pushes, its words for
    // r's ghosts).
    let change = std::mem::size_of::<Change>();
    let mut inboxes: Vec<Vec<Inboxes>> = Vec::with_capacity(k);
    for (r, run) in runs.iter_mut().enumerate() {
        run.bind()?;
        let mut mine = Vec::with_capacity(k);
        for s in 0..k {
            let (from_ghosts, from_owner) = (mirror_groups[r][s].len(), ghost_groups[r][s].len());
            if s == r {
                mine.push(Inboxes::default());
                continue;
            }
            let mut open = |bytes: usize| -> Result<Option<Inbox>> {
                if bytes == 0 { Ok(None) } else { run.open_inbox(bytes).map(Some) }
            };
            mine.push(Inboxes {
                ghosts: open(from_ghosts * change * shares.changes.max(1))?,
                owner: open(from_owner * change * shares.words.max(1))?,
                pushes: open(from_ghosts * 4)?,
            });
        }
        inboxes.push(mine);
    }
    let place = |inbox: &Option<Inbox>| inbox.as_ref().map(|(_, place)| place.clone());
    let id = |inbox: &Option<Inbox>| inbox.as_ref().map(|(id, _)| *id);
    Ok((0..k)
        .map(|q| {
            (0..k)
                .filter(|&o| o != q)
                .map(|o| Route {
                    ghosts: ghost_groups[q][o].clone(),
                    mirrors: mirror_groups[q][o].clone(),
                    to_owner: place(&inboxes[o][q].ghosts),
                    to_ghosts: place(&inboxes[o][q].owner),
                    to_owner_pushes: place(&inboxes[o][q].pushes),
                    from_ghosts: id(&inboxes[q][o].ghosts),
                    from_owner: id(&inboxes[q][o].owner),
                    from_ghost_pushes: id(&inboxes[q][o].pushes),
                })
                .collect()
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_inboxs_shares_follow_one_another_and_stay_inside_it() {
        let mut words = vec![0u64; 12];
        let start = words.as_mut_ptr() as usize;
        let inbox = Place::Host { address: start, bytes: 96 };
        let Place::Host { address, bytes } = inbox.share(2, 32) else { unreachable!() };
        assert_eq!((address - start, bytes), (64, 32));
        // What a share's writer writes lands where the reader's Share says it starts.
        inbox.share(1, 32).write_from_host(&[7u64, 8]).unwrap();
        let share = Share::of(0, 1, 32);
        assert_eq!(&words[share.offset / 8..share.offset / 8 + 2], &[7, 8]);
        assert!(std::panic::catch_unwind(|| inbox.share(3, 32)).is_err(), "a share past the inbox");
    }
}
