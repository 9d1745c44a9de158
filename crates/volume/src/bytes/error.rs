//! Errors of the byte volumes' own entry points (construction, assembly, member
//! replacement, rebuild, scrub). The data path (`read`, `write`, `flush`, `trim`) is
//! the [`BlockStore`](spinstack_store::BlockStore) contract and returns
//! [`StoreError`]; see the module docs for how array failures appear there.

use crate::map::{MapError, MemberIndex};
use spinstack_sim::units::Sectors;
use spinstack_store::{IntentError, StoreError};

/// Why a volume could not be built, assembled, repaired or maintained. Each message
/// names the member, size or state at fault.
#[derive(Debug, thiserror::Error)]
pub enum VolumeError {
    #[error("address map: {0}")]
    Map(#[from] MapError),
    #[error("{member}: {source}")]
    Member {
        member: MemberIndex,
        source: StoreError,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("write-intent record: {0}")]
    Intent(#[from] IntentError),
    #[error("the {level} map has {expected} members but {given} stores were given")]
    MemberCount {
        level: &'static str,
        expected: u32,
        given: usize,
    },
    #[error("{member} holds {capacity} but the map uses {needed} of it")]
    MemberTooSmall {
        member: MemberIndex,
        capacity: Sectors,
        needed: Sectors,
    },
    #[error(
        "{member} holds {capacity} but member 0 holds {first}: the members of this level must \
         be the same size (build the map yourself to use only part of the larger ones)"
    )]
    MemberSizesDiffer {
        member: MemberIndex,
        capacity: Sectors,
        first: Sectors,
    },
    #[error("{member} does not exist: the array has {members} members")]
    NoSuchMember { member: MemberIndex, members: u32 },
    #[error("cannot {operation}: the array is {state}")]
    WrongState {
        operation: &'static str,
        state: String,
    },
    #[error("the array has failed: members {failed:?} are lost, more than its redundancy covers")]
    ArrayFailed { failed: Vec<MemberIndex> },
    #[error("a write-intent region must hold at least one {unit}, got 0")]
    ZeroRegion { unit: &'static str },
    #[error(
        "the write-intent record has {found_count} regions of {found_sectors} but a volume of \
         {capacity} needs {expected_count} such regions: it belongs to another array"
    )]
    IntentMismatch {
        found_sectors: Sectors,
        found_count: u64,
        expected_count: u64,
        capacity: Sectors,
    },
    #[error(
        "the write-intent record marks {dirty_regions} regions dirty but {missing} is missing: \
         parity of a dirty stripe whose data unit was on it cannot be recomputed, so its \
         reconstruction could return torn data; refusing to assemble (as md refuses a dirty \
         degraded array without --force); pass force to accept that risk"
    )]
    DirtyDegraded {
        missing: MemberIndex,
        dirty_regions: usize,
    },
    #[error("buffer geometry: {why}")]
    BufferGeometry { why: &'static str },
}

/// The data-path error of an array that has lost more members than its redundancy:
/// [`StoreError::Failed`], so a layer above (a RAID over this volume) treats the whole
/// volume as a failed member, as it should.
pub(crate) fn array_failed(operation: &'static str) -> StoreError {
    StoreError::Failed { operation }
}

/// Turns a write-intent error on the data path into a [`StoreError`]: the record
/// store's own error as it is, anything else wrapped with the record named.
pub(crate) fn intent_to_store(error: IntentError) -> StoreError {
    match error {
        IntentError::Store(inner) => inner,
        other => StoreError::Io {
            operation: "update",
            path: "write-intent record".into(),
            source: std::io::Error::other(other),
        },
    }
}
