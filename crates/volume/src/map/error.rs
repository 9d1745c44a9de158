//! Errors of the address maps and plans. Every constructor and every request entry
//! point returns one of these instead of panicking; each message names the value that
//! was wrong and the limit it broke.

use super::MemberIndex;
use spinstack_sim::units::{Lbn, Sectors};

#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum MapError {
    #[error("{level} needs at least {minimum} members, got {members}")]
    TooFewMembers {
        level: &'static str,
        members: u32,
        minimum: u32,
    },
    #[error("RAID-10 needs 2 <= copies <= members, got {copies} copies on {members} members")]
    CopiesOutOfRange { copies: u32, members: u32 },
    #[error("the chunk size is zero sectors")]
    ChunkZero,
    #[error("member capacity of {member_capacity} is smaller than one stripe unit of {needed}")]
    MemberTooSmall {
        member_capacity: Sectors,
        needed: Sectors,
    },
    #[error("{member} has an empty track list")]
    TrackListEmpty { member: MemberIndex },
    #[error("{member} track {track} has zero sectors")]
    TrackEmpty { member: MemberIndex, track: u64 },
    #[error("the geometry is too large: {what} does not fit in 64 bits")]
    TooLarge { what: &'static str },
    #[error("{lbn} is beyond the volume's capacity of {capacity}")]
    LbnOutOfRange { lbn: Lbn, capacity: Sectors },
    #[error("{sectors} starting at {lbn} run past the volume's capacity of {capacity}")]
    RangeOutOfRange {
        lbn: Lbn,
        sectors: Sectors,
        capacity: Sectors,
    },
    #[error("{member} does not exist: the volume has {members} members")]
    MemberOutOfRange { member: MemberIndex, members: u32 },
    #[error("copy {copy} does not exist: the map keeps {copies} copies")]
    CopyOutOfRange { copy: u32, copies: u32 },
    #[error("stripe {stripe} does not exist: the layout has {stripes} stripes")]
    StripeOutOfRange { stripe: u64, stripes: u64 },
    #[error("{sectors} at offset {start} run past stripe {stripe}'s {stripe_data} of data")]
    StripeRangeOutOfRange {
        stripe: u64,
        start: Sectors,
        sectors: Sectors,
        stripe_data: Sectors,
    },
    #[error("a write of zero sectors has nothing to plan")]
    EmptyWrite,
    #[error("the {what} of a track-aligned layout do not tile its volume: {problem}")]
    LogicalMap { what: &'static str, problem: String },
}
