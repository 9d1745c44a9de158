//! The RAID-5 read path: read plans executed over bytes.
//!
//! Per part of the request (the whole request, or the parts below and above the
//! rebuild cursor): zero the output at every lost piece, then for each planned read
//! either read straight into the output (a read with a single `Data` use covering it,
//! the healthy case) or into scratch and then copy its `Data` uses and XOR its
//! `Reconstruct` uses into the output. A member failing mid-read is marked failed and
//! the read starts over with the new plan (every output byte is rewritten). A member
//! read error is corrected from the other members where they can supply it (see
//! [`super::correct`]); where they cannot, the read fails with that error.

use super::correct::{Attempt, MemberReader};
use super::{sized, Raid5Volume, FAILED};
use crate::bytes::common::{bytes, check_request};
use crate::bytes::health::ArrayState;
use crate::map::plan::{plan_read_into, ReadOptions, ReadPlan, ReadPurpose, ReadUse};
use crate::map::{MemberIndex, ParityLayout};
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_store::{xor_into, BlockStore, StoreError};

/// One part of a request with a single failed member (or none).
#[derive(Clone, Copy, Debug)]
pub(super) struct Part {
    pub lbn: Lbn,
    pub sectors: Sectors,
    /// Sectors from the request's start.
    pub offset: Sectors,
    pub failed: Option<MemberIndex>,
}

impl<S: BlockStore, L: ParityLayout> Raid5Volume<S, L> {
    pub(super) fn read_volume(&mut self, lbn: Lbn, buf: &mut [u8]) -> Result<(), StoreError> {
        let sectors = check_request(self.layout.capacity(), lbn, buf.len())?;
        // Each retry follows a member failure the array survived; there can be at most
        // one before the array has failed, plus one with a rebuilding member.
        for _ in 0..=self.members.count() {
            match self.try_read(lbn, sectors, buf) {
                Ok(()) => return Ok(()),
                Err(Attempt::Error(error)) => return Err(error),
                Err(Attempt::MemberFailed(member)) => self.member_failed(member)?,
            }
        }
        Err(StoreError::Failed { operation: FAILED })
    }

    fn try_read(&mut self, lbn: Lbn, sectors: Sectors, buf: &mut [u8]) -> Result<(), Attempt> {
        for part in self.parts(lbn, sectors)?.into_iter().flatten() {
            let planned = plan_read_into(
                &self.layout,
                part.lbn,
                part.sectors,
                part.failed,
                ReadOptions::default(),
                &mut self.read_plan,
            );
            debug_assert!(planned.is_ok(), "request checked: {planned:?}");
            let out = &mut buf[bytes(part.offset.0)..][..bytes(part.sectors.0)];
            let mut reader = MemberReader {
                layout: &self.layout,
                members: &mut self.members,
                buffers: &mut self.correction,
            };
            execute_read(&mut reader, &self.read_plan, out, &mut self.scratch.read)?;
        }
        Ok(())
    }

    /// The request cut at the rebuild cursor, each part with the member it must treat
    /// as failed.
    pub(super) fn parts(
        &self,
        lbn: Lbn,
        sectors: Sectors,
    ) -> Result<[Option<Part>; 2], StoreError> {
        let whole = |failed| Part {
            lbn,
            sectors,
            offset: Sectors(0),
            failed,
        };
        match self.members.health.state() {
            ArrayState::Rebuilding { member, cursor, .. } if *cursor < self.layout.stripes() => {
                let boundary = self.layout.stripe_start(*cursor).0;
                let end = lbn.0 + sectors.0;
                if end <= boundary {
                    return Ok([Some(whole(None)), None]);
                }
                if lbn.0 >= boundary {
                    return Ok([Some(whole(Some(*member))), None]);
                }
                let below = boundary - lbn.0;
                Ok([
                    Some(Part {
                        sectors: Sectors(below),
                        ..whole(None)
                    }),
                    Some(Part {
                        lbn: Lbn(boundary),
                        sectors: Sectors(sectors.0 - below),
                        offset: Sectors(below),
                        failed: Some(*member),
                    }),
                ])
            }
            _ => Ok([Some(whole(self.failed_at(0)?)), None]),
        }
    }
}

/// Runs `plan` into `out` (the part's bytes); see the module docs.
fn execute_read<S: BlockStore, L: ParityLayout>(
    reader: &mut MemberReader<'_, S, L>,
    plan: &ReadPlan,
    out: &mut [u8],
    scratch: &mut Vec<u8>,
) -> Result<(), Attempt> {
    for piece in &plan.lost {
        out[bytes(piece.offset.0)..][..bytes(piece.extent.sectors.0)].fill(0);
    }
    let mut next_use = 0;
    for (index, read) in plan.reads.iter().enumerate() {
        let first_use = next_use;
        while next_use < plan.uses.len() && plan.uses[next_use].read == index {
            next_use += 1;
        }
        let uses = &plan.uses[first_use..next_use];
        if let [only] = uses {
            if let ReadPurpose::Data { volume_offset } = only.purpose {
                if only.skip.0 == 0 && only.sectors == read.sectors {
                    let into = &mut out[bytes(volume_offset.0)..][..bytes(read.sectors.0)];
                    reader.read(*read, into)?;
                    continue;
                }
            }
        }
        let data = sized(scratch, bytes(read.sectors.0));
        reader.read(*read, data)?;
        apply_uses(uses, data, out);
    }
    debug_assert_eq!(
        next_use,
        plan.uses.len(),
        "uses are grouped by read, in order"
    );
    Ok(())
}

/// Copies each `Data` use of one read's bytes (`data`) to the output and XORs each
/// `Reconstruct` use into it; drops the rest.
fn apply_uses(uses: &[ReadUse], data: &[u8], out: &mut [u8]) {
    for used in uses {
        let from = &data[bytes(used.skip.0)..][..bytes(used.sectors.0)];
        match used.purpose {
            ReadPurpose::Data { volume_offset } => {
                out[bytes(volume_offset.0)..][..from.len()].copy_from_slice(from)
            }
            ReadPurpose::Reconstruct { volume_offset } => {
                xor_into(&mut out[bytes(volume_offset.0)..][..from.len()], from)
            }
            ReadPurpose::FillIn | ReadPurpose::UnusedTail => {}
        }
    }
}
