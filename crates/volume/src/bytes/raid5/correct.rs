//! Member reads that correct read errors, for every RAID-5 path that reads with the
//! stripe's redundancy intact (client reads, the old contents a write reads, scrub).
//!
//! A member read that returns an I/O error (`Io`, `IoAt`: typically an unreadable
//! sector) does not fail the request when the other members are all live at that
//! stripe: the extent is rebuilt as the XOR of their same unit offsets, written back
//! to the erring member (a drive reallocates a bad sector on write) and read back. The
//! request carries on with the rebuilt bytes and the member stays in service. Only a
//! rewrite or read-back that fails (or reads back other bytes) fails the member. This
//! is what md has done since Linux 2.6.15; before, md failed the member on any read
//! error, which made one bad sector on a degraded array lose the whole array.
//!
//! When the others cannot supply the extent (a member is out at that stripe, or a
//! source read errs too), the original error is passed up and nothing changes: the
//! request fails, never with wrong data, and the member is not failed for it, since
//! failing it would fail the array while only those sectors are lost.

use super::sized;
use crate::bytes::common::{bytes, is_io_error, is_member_failure};
use crate::bytes::common::{MemberStores, SECTOR};
use crate::map::{MemberExtent, MemberIndex, ParityLayout, Role};
use spinstack_sim::units::Sectors;
use spinstack_store::{xor_into, BlockStore, StoreError};

/// Why one attempt at a read stopped.
pub(super) enum Attempt {
    /// This member failed (and the array survived): plan again.
    MemberFailed(MemberIndex),
    Error(StoreError),
}

impl From<StoreError> for Attempt {
    fn from(error: StoreError) -> Attempt {
        Attempt::Error(error)
    }
}

/// Buffers of a correction, each at most one unit: the rebuilt extent, and one source
/// (then the read-back).
#[derive(Default)]
pub(super) struct CorrectionBuffers {
    rebuilt: Vec<u8>,
    source: Vec<u8>,
}

/// Member reads of one request: the members, plus what a correction needs.
pub(super) struct MemberReader<'a, S, L> {
    pub layout: &'a L,
    pub members: &'a mut MemberStores<S>,
    pub buffers: &'a mut CorrectionBuffers,
}

/// How a correction ended, when it did not return an error to pass up.
enum Corrected {
    /// Rewritten and read back: the caller's buffer holds the extent.
    Rewritten,
    /// This member failed (the erring one's rewrite or read-back, or a source that
    /// returned `StoreError::Failed`): mark it failed and plan again.
    MemberFailed(MemberIndex),
    /// The others cannot supply the extent: the original error stands.
    NotCorrectable,
}

impl<S: BlockStore, L: ParityLayout> MemberReader<'_, S, L> {
    /// Reads `extent` (inside one unit) into `into`, correcting an I/O error as the
    /// module docs say.
    pub fn read(&mut self, extent: MemberExtent, into: &mut [u8]) -> Result<(), Attempt> {
        let error = match self.members.read(extent.member, extent.lbn, into) {
            Ok(()) => return Ok(()),
            Err(error) if is_member_failure(&error) => {
                return Err(Attempt::MemberFailed(extent.member))
            }
            Err(error) if is_io_error(&error) => error,
            Err(error) => return Err(Attempt::Error(error)),
        };
        match self.correct(extent, into)? {
            Corrected::Rewritten => Ok(()),
            Corrected::MemberFailed(member) => Err(Attempt::MemberFailed(member)),
            Corrected::NotCorrectable => Err(Attempt::Error(error)),
        }
    }

    /// Rebuilds `extent` from the other members, writes it back and reads it back.
    fn correct(&mut self, extent: MemberExtent, into: &mut [u8]) -> Result<Corrected, StoreError> {
        let Some((stripe, from)) = self.unit_offset(extent) else {
            return Ok(Corrected::NotCorrectable);
        };
        let health = &self.members.health;
        let others_live = (0..self.layout.members())
            .map(MemberIndex)
            .filter(|&m| m != extent.member)
            .all(|m| health.is_live_at(m, stripe));
        if !others_live || health.is_failed() {
            return Ok(Corrected::NotCorrectable);
        }
        let len = into.len();
        let mut rebuilt = std::mem::take(&mut self.buffers.rebuilt);
        let mut source = std::mem::take(&mut self.buffers.source);
        let result = self
            .rebuild(
                stripe,
                extent.member,
                from,
                sized(&mut rebuilt, len),
                &mut source,
            )
            .and_then(|stopped| match stopped {
                None => self.write_back(extent, &rebuilt[..len], &mut source),
                Some(ended) => Ok(ended),
            });
        if let Ok(Corrected::Rewritten) = result {
            into.copy_from_slice(&rebuilt[..len]);
        }
        self.buffers.rebuilt = rebuilt;
        self.buffers.source = source;
        result
    }

    /// The stripe holding `extent` and its first unit offset, if it lies inside the
    /// used part of one unit (anything else is not reconstructable).
    fn unit_offset(&self, extent: MemberExtent) -> Option<(u64, u64)> {
        let stripe = match self.layout.inverse(extent.member, extent.lbn) {
            Role::Data(lbn) => self.layout.stripe_of(lbn).ok()?,
            Role::Parity { stripe, .. } => stripe,
            Role::Unused => return None,
        };
        let unit = self.layout.unit(stripe, extent.member);
        let from = extent.lbn.0.checked_sub(unit.start.0)?;
        (from + extent.sectors.0 <= unit.used.0).then_some((stripe, from))
    }

    /// XOR of the other members' unit offsets `from..` (as many as `out` holds; a
    /// shorter unit counts as zeros past its end) into `out`. `None` when every source
    /// was read, else how the correction ends.
    fn rebuild(
        &mut self,
        stripe: u64,
        member: MemberIndex,
        from: u64,
        out: &mut [u8],
        source: &mut Vec<u8>,
    ) -> Result<Option<Corrected>, StoreError> {
        out.fill(0);
        let to = from + (out.len() / SECTOR) as u64;
        for index in (0..self.layout.members()).filter(|&m| m != member.0) {
            let other = MemberIndex(index);
            let unit = self.layout.unit(stripe, other);
            let end = unit.used.0.min(to);
            if end <= from {
                continue;
            }
            let buf = sized(source, bytes(end - from));
            match self
                .members
                .read(other, unit.start.offset(Sectors(from)), buf)
            {
                Ok(()) => xor_into(&mut out[..buf.len()], buf),
                Err(error) if is_member_failure(&error) => {
                    return Ok(Some(Corrected::MemberFailed(other)))
                }
                Err(error) if is_io_error(&error) => return Ok(Some(Corrected::NotCorrectable)),
                Err(error) => return Err(error),
            }
        }
        Ok(None)
    }

    /// Writes the rebuilt bytes over `extent` and reads them back into `source`.
    fn write_back(
        &mut self,
        extent: MemberExtent,
        rebuilt: &[u8],
        source: &mut Vec<u8>,
    ) -> Result<Corrected, StoreError> {
        let rewritten =
            (self.members).rewrite_verified(extent.member, extent.lbn, rebuilt, source)?;
        Ok(match rewritten {
            true => Corrected::Rewritten,
            false => Corrected::MemberFailed(extent.member),
        })
    }
}
