//! Read and write plans of the parity layouts: which member extents a volume request
//! reads and writes, and what each sector read is for. Written once for every
//! [`ParityLayout`], pure, and shared by the simulated-time RAID (which issues the
//! extents to modelled drives) and the real-bytes RAID (which also moves and XORs the
//! bytes the tags describe).
//!
//! **Reads** ([`plan_read_into`]): per stripe, each data unit the request touches is
//! read at the touched unit offsets. Lost data (on the failed member) is rebuilt from
//! the same unit offsets of every other member, parity included. Optionally the
//! validation paper's *fill-in* (§3) reads the parity too when it is the only live
//! member the stripe would not otherwise read, and *whole units* widens a read that
//! covers a unit's whole `used` range to its whole `allocated` range (the rest of the
//! track). Overlapping or touching reads of one member in one stripe become one
//! extent, so an extent may serve several purposes: [`ReadPlan::uses`] says which
//! sectors of which read serve which purpose.
//!
//! **Writes** ([`plan_write_into`]), one stripe at a time (cut a volume range with
//! [`stripe_segments`]): see [`WriteKind`] for the cases, [`ParityRun`] for how new
//! parity is computed from what the plan read.
//!
//! Invariants (property-tested with a reference executor over bytes): executing a
//! write plan keeps every stripe's parity equal to the XOR of its data, healthy or with
//! one failed member, and never reads or writes the failed member; executing a read
//! plan yields the volume's data, reconstructing what the failed member held.
//!
//! Plans are filled into caller-owned structs ([`ReadPlan`], [`WritePlan`]) whose
//! vectors (and private scratch) are reused: after warm-up, planning allocates nothing.

mod read;
mod write;

pub use super::parity::{stripe_segments, StripeRange, StripeSegment, StripeSegments};
pub use read::{plan_read, plan_read_into, ReadOptions, ReadPlan, ReadPurpose, ReadUse};
pub use write::{
    nothing_cached, plan_write, plan_write_into, ParityMethod, ParityRun, WriteChoice, WriteKind,
    WritePlan,
};

use super::{MapError, MemberIndex, ParityLayout, Unit};

/// Checks that `failed` names a member of `layout`.
fn check_failed<L: ParityLayout + ?Sized>(
    layout: &L,
    failed: Option<MemberIndex>,
) -> Result<(), MapError> {
    match failed {
        Some(member) if member.0 >= layout.members() => Err(MapError::MemberOutOfRange {
            member,
            members: layout.members(),
        }),
        _ => Ok(()),
    }
}

/// Fills `units` with every member's unit of `stripe`, indexed by member.
fn load_units<L: ParityLayout + ?Sized>(layout: &L, stripe: u64, units: &mut Vec<Unit>) {
    units.clear();
    units.extend((0..layout.members()).map(|m| layout.unit(stripe, MemberIndex(m))));
}
