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
//!    words changed go to the owner's inbox for this part ([`Route::to_owner`]);
//! 2. *merge*: each owner merges what every part sent into its nodes, records what those ghosts
//!    now hold, and (for properties kernels read through ghosts) sends every node whose word
//!    differs from what its ghosts hold to the ghosts' parts ([`Route::to_ghosts`]);
//! 3. *refresh*: each part stores the owners' words in its ghosts.
//!
//! A change's position counts from the start of the route's range, which both ends know: a
//! part's ghosts owned by part `o` (a range of its ghost list, [`super::bsp::Links`]) are, in the
//! same order, `o`'s mirror entries for that part (a range of `o`'s mirror list).

use std::ops::Range;

use super::Change;
use crate::error::Result;

/// Memory on the device of the part that reads it, holding up to `capacity` [`Change`]s that
/// another part writes into between supersteps.
#[derive(Clone)]
pub(crate) enum Place {
    /// A CPU part's inbox in host memory, by address.
    Host { address: usize, capacity: usize },
    /// A GPU part's inbox.
    #[cfg(feature = "gpu")]
    Device { ptr: u64, capacity: usize, context: std::sync::Arc<cudarc::driver::CudaContext> },
}

impl Place {
    pub fn capacity(&self) -> usize {
        match self {
            Place::Host { capacity, .. } => *capacity,
            #[cfg(feature = "gpu")]
            Place::Device { capacity, .. } => *capacity,
        }
    }

    /// Writes `changes` (from host memory) to the start of the inbox.
    pub fn write_from_host(&self, changes: &[Change]) -> Result<()> {
        assert!(changes.len() <= self.capacity(), "an inbox holds every change of its route");
        match self {
            // SAFETY: the inbox holds `capacity` changes and is read by its part only after
            // this round ends (the crew's rounds are the barrier).
            Place::Host { address, .. } => unsafe {
                std::ptr::copy_nonoverlapping(changes.as_ptr(), *address as *mut Change, changes.len())
            },
            #[cfg(feature = "gpu")]
            Place::Device { ptr, context, .. } => crate::gpu::upload_to(context, *ptr, changes)?,
        }
        Ok(())
    }
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
    /// This part's inboxes (numbers of [`super::PartRun::open_inbox`]): the changes of the
    /// peer's ghosts, and the peer's words of this part's ghosts.
    pub from_ghosts: Option<usize>,
    pub from_owner: Option<usize>,
}

/// An inbox's number on its part, and where it lies.
type Inbox = (usize, Place);

/// Opens every part's inboxes and returns each part's routes: `ghost_groups[q][o]` is the range
/// of part `q`'s ghost list that part `o` owns, `mirror_groups[o][q]` the range of part `o`'s
/// mirror list that part `q` holds as ghosts (the same nodes in the same order).
pub(crate) fn routes(
    runs: &mut [Box<dyn super::PartRun + '_>],
    ghost_groups: &[Vec<Range<usize>>],
    mirror_groups: &[Vec<Range<usize>>],
) -> Result<Vec<Vec<Route>>> {
    let k = runs.len();
    // inboxes[r][s]: part r's inboxes for part s (its ghosts' changes, its words for r's ghosts).
    let mut inboxes: Vec<Vec<(Option<Inbox>, Option<Inbox>)>> = Vec::with_capacity(k);
    for (r, run) in runs.iter_mut().enumerate() {
        run.bind()?;
        let mut mine = Vec::with_capacity(k);
        for s in 0..k {
            let (from_ghosts, from_owner) = (mirror_groups[r][s].len(), ghost_groups[r][s].len());
            if s == r {
                mine.push((None, None));
                continue;
            }
            let open = |run: &mut Box<dyn super::PartRun + '_>, n: usize| -> Result<Option<Inbox>> {
                if n == 0 { Ok(None) } else { run.open_inbox(n).map(Some) }
            };
            let ghosts = open(run, from_ghosts)?;
            let owner = open(run, from_owner)?;
            mine.push((ghosts, owner));
        }
        inboxes.push(mine);
    }
    Ok((0..k)
        .map(|q| {
            (0..k)
                .filter(|&o| o != q)
                .map(|o| Route {
                    ghosts: ghost_groups[q][o].clone(),
                    mirrors: mirror_groups[q][o].clone(),
                    to_owner: inboxes[o][q].0.as_ref().map(|(_, place)| place.clone()),
                    to_ghosts: inboxes[o][q].1.as_ref().map(|(_, place)| place.clone()),
                    from_ghosts: inboxes[q][o].0.as_ref().map(|(id, _)| *id),
                    from_owner: inboxes[q][o].1.as_ref().map(|(id, _)| *id),
                })
                .collect()
        })
        .collect())
}
