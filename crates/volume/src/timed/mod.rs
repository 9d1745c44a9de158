//! Volumes in simulated time: each level is a [`BlockDevice`] over member
//! `BlockDevice`s (modelled drives, or other volumes), built on the shared member
//! bookkeeping ([`spinstack_sim::members`]) and the pure maps of [`crate::map`].
//!
//! | level | type | reads | writes |
//! |---|---|---|---|
//! | single, RAID-0 | [`Striped`] | pieces of the chunk map | same |
//! | RAID-1, RAID-10 | [`Mirrored`] | one copy per piece (shortest queue or nearest head) | every live copy |
//! | RAID-5 (md, track-aligned, alternatives) | [`Parity`] | the read plan (fill-in parity, whole units) | the write plan (full stripe, read-modify-write or reconstruct-write), per-stripe lock, bounded stripe cache, md's delayed stripes (pre-reads wait for the array's plug; later writes join) |
//! | DMA-aligned buffer | [`DmaBuffer`] | from memory, or whole aligned blocks fetched | write-through or write-back |
//!
//! **Shared path down** ([`io::MemberIo`]): each member request pays the host's
//! per-I/O CPU cost ([`host`]) and may wait in a plug queue that merges adjacent
//! requests (optionally track-aware); per-member statistics count requests,
//! sectors and whole-track requests.
//!
//! **Invariants.** A volume completes each request exactly once, after every member
//! request it needed (or at an explicit time for work done in memory); its
//! completion carries a status and no drive detail. A failed member is never sent
//! a request again until a `Replace` addressed to it puts a new device in its
//! place; with more failures than the level survives, requests complete
//! with `Status::DeviceFailed`, never with wrong data claimed as read. Control
//! commands with a member path reach that member; power commands to the volume
//! itself reach every member.
//!
//! **What it does not model.** The volume's own bytes (see [`crate::bytes`]); md's
//! resync and rebuild traffic in simulated time (rebuild is a byte-path operation);
//! reshaping.

pub mod buffer;
pub mod host;
pub mod io;
pub mod mirrored;
pub mod parity;
pub mod striped;

pub use crate::dab::{DabCounters, WritePolicy};
pub use buffer::DmaBuffer;
pub use host::{HostCost, HostCpu};
pub use io::{ChildDone, IoEvent, MemberIo, MemberStats, PlugPolicy};
pub use mirrored::{Mirrored, ReadBalance};
pub use parity::{Parity, ParityOptions, StripeWriteCounters};
pub use striped::Striped;

use spinstack_sim::device::{BlockDevice, Control, ControlError, MemberIndex};
use spinstack_sim::units::Nanoseconds;

/// What a control command did to one member, for the level's own books.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MemberChange {
    /// The member failed: send it nothing more.
    Failed(MemberIndex),
    /// A new device took the member's place (its data rebuilt on the byte path):
    /// use it again.
    Replaced(MemberIndex),
}

/// Route a control command: a member path goes to that member; power commands
/// to the volume itself go to every member; an unplug of the volume itself sends
/// what its plug queues hold, then goes to every member; failing or replacing the
/// volume as a whole is refused (address a member). Returns what the command did to
/// a member of this volume, if anything, so the level can stop or start using it.
fn route_control<D: BlockDevice, T: Copy, P: Default>(
    io: &mut MemberIo<D, T, P>,
    device: &'static str,
    now: Nanoseconds,
    path: &[MemberIndex],
    command: Control,
) -> Result<Option<MemberChange>, ControlError> {
    if path.is_empty() && command == Control::Unplug {
        // The plug queues are this layer's own; the members below get the
        // command too, for a plug of their own (a drive ignores it). The queue
        // goes down now, so the members' clock must be at now first.
        io.members.catch_up(now);
        for member in 0..io.count() {
            io.unplug(MemberIndex(member))
                .map_err(|_| ControlError::Unsupported {
                    device,
                    command,
                    reason: "a member refused a request its plug queue held",
                })?;
            io.members.control(now, MemberIndex(member), &[], command)?;
        }
        return Ok(None);
    }
    match path.split_first() {
        Some((&member, rest)) => {
            io.members.control(now, member, rest, command)?;
            Ok(match command {
                _ if !rest.is_empty() => None,
                Control::Fail => Some(MemberChange::Failed(member)),
                Control::Replace => Some(MemberChange::Replaced(member)),
                _ => None,
            })
        }
        None if matches!(command, Control::Fail | Control::Replace) => {
            Err(ControlError::Unsupported {
                device,
                command,
                reason: "a volume fails and replaces member by member: address one",
            })
        }
        None => {
            for member in 0..io.count() {
                io.members.control(now, MemberIndex(member), &[], command)?;
            }
            Ok(None)
        }
    }
}
