//! RAID-5 maintenance: rebuild, scrub, flush of the members, and assembly with
//! write-intent resync.
//!
//! **Resync after a crash.** The write-intent record names the regions that may have
//! had a write in flight. For every stripe such a region overlaps, the parity is
//! recomputed from the data units (md's resync): each data unit holds its old or its
//! new contents, or a mix at sector granularity, and whatever it holds becomes the
//! truth, now protected by matching parity.
//!
//! **Dirty and degraded.** If a member is missing at assembly, a dirty stripe whose
//! data unit was on it cannot be resynced: its parity may not match the surviving
//! data, and reconstructing the missing unit from it could return data that was never
//! written (the write hole). md refuses to start such an array unless forced
//! (`start_dirty_degraded`); so does [`Raid5Volume::assemble`] with
//! [`VolumeError::DirtyDegraded`]. With `force`, it assembles, resyncs the stripes
//! whose parity member is the missing one (nothing to do) and lists the others in
//! [`RecoveryReport::unverified_stripes`]: reads of the missing unit there come from
//! parity as it is, exactly md's forced behaviour, and the caller took that risk.
//!
//! **Rebuild** writes the replaced member stripe by stripe (its unit rebuilt as the
//! XOR of the other units). The volume does not record its progress; a caller that
//! persists the cursor resumes it with [`Raid5Volume::assemble_resuming`].

use super::correct::{Attempt, MemberReader};
use super::{sized, survives, Raid5Volume, FAILED};
use crate::bytes::common::{
    bytes, is_io_error, is_member_failure, push_joined, Intent, RecoveryReport, ResumeRebuild,
};
use crate::bytes::error::VolumeError;
use crate::bytes::health::{ArrayState, Liveness};
use crate::bytes::scrub::ScrubReport;
use crate::map::{MemberIndex, ParityLayout};
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_store::{xor_into, BlockStore, StoreError};

impl<S: BlockStore, L: ParityLayout> Raid5Volume<S, L> {
    /// The volume ranges whose reads, with the member being rebuilt failed, read from
    /// the other members what rebuilding `stripes` reads: each stripe's whole data, as
    /// a degraded read of a full stripe reads every other member's unit of it (data
    /// units, and parity where the lost unit holds data). Coalesced, ascending. For a
    /// timing model, which has no rebuild traffic of its own (`serve --timing model`).
    pub fn rebuild_read_ranges(&self, stripes: std::ops::Range<u64>) -> Vec<(Lbn, Sectors)> {
        let end = stripes.end.min(self.layout.stripes());
        let mut ranges: Vec<(Lbn, Sectors)> = Vec::new();
        for stripe in stripes.start..end {
            let start = self.layout.stripe_start(stripe);
            push_joined(&mut ranges, start, self.layout.stripe_data_sectors(stripe));
        }
        ranges
    }

    /// Rebuilds up to `max_stripes` stripes of the member being rebuilt; returns how
    /// many it did (0 when nothing is being rebuilt).
    pub fn rebuild_step(&mut self, max_stripes: u64) -> Result<u64, VolumeError> {
        let mut done = 0;
        while done < max_stripes {
            let ArrayState::Rebuilding { member, cursor, .. } = *self.members.health.state() else {
                break;
            };
            let result = self.rebuild_stripe(member, cursor);
            let still_rebuilding = matches!(
                *self.members.health.state(),
                ArrayState::Rebuilding { member: m, cursor: c, .. } if m == member && c == cursor
            );
            match result {
                Ok(()) if still_rebuilding => self.members.health.advance_rebuild(cursor + 1),
                Ok(()) => break,
                Err(error) => return Err(self.maintenance_error(error)),
            }
            done += 1;
        }
        if self.members.health.is_failed() {
            return Err(self.maintenance_error(StoreError::Failed { operation: FAILED }));
        }
        Ok(done)
    }

    fn maintenance_error(&self, error: StoreError) -> VolumeError {
        if self.members.health.is_failed() {
            VolumeError::ArrayFailed {
                failed: self.members.health.failed().to_vec(),
            }
        } else {
            VolumeError::Store(error)
        }
    }

    /// Rebuilds `member`'s unit of `stripe` from the others.
    fn rebuild_stripe(&mut self, member: MemberIndex, stripe: u64) -> Result<(), StoreError> {
        let unit = self.layout.unit(stripe, member);
        let mut target = std::mem::take(&mut self.scratch.unit_a);
        // No correction of a source's read error: the member being rebuilt is not
        // live here, so the others cannot supply it; the error stops the rebuild.
        let len = bytes(unit.used.0);
        let result = self
            .xor_of_others(stripe, member, sized(&mut target, len), OnReadError::PassUp)
            .and_then(|all_read| {
                if !all_read {
                    return Ok(()); // a source failed: the state machine moved on
                }
                let written = self.members.write(member, unit.start, &target[..len]);
                self.settle(member, written).map(drop)
            });
        self.scratch.unit_a = target;
        result
    }

    /// XOR of every unit of `stripe` but `member`'s, over `member`'s `used` sectors (a
    /// shorter unit counts as zeros past its end) into `out`. `Ok(false)` if a source
    /// member failed while being read (it is then marked failed). A source's read
    /// error is handled as `on_read_error` says.
    fn xor_of_others(
        &mut self,
        stripe: u64,
        member: MemberIndex,
        out: &mut [u8],
        on_read_error: OnReadError,
    ) -> Result<bool, StoreError> {
        out.fill(0);
        let used = (out.len() / crate::bytes::common::SECTOR) as u64;
        let mut source = std::mem::take(&mut self.scratch.unit_b);
        let mut result = Ok(true);
        for index in (0..self.layout.members()).filter(|&m| m != member.0) {
            let other = MemberIndex(index);
            let unit = self.layout.unit(stripe, other);
            let len = bytes(unit.used.0.min(used));
            let buf = sized(&mut source, len);
            let correct = on_read_error == OnReadError::Correct;
            match self.read_member(other, unit.start, buf, correct) {
                Ok(()) => xor_into(&mut out[..len], buf),
                Err(Attempt::MemberFailed(failed)) => {
                    result = self.member_failed(failed).map(|()| false);
                    break;
                }
                Err(Attempt::Error(error))
                    if on_read_error == OnReadError::FailMember && is_io_error(&error) =>
                {
                    result = self.member_failed(other).map(|()| false);
                    break;
                }
                Err(Attempt::Error(error)) => {
                    result = Err(error);
                    break;
                }
            }
        }
        self.scratch.unit_b = source;
        result
    }

    /// Reads `sectors` of `member` at `lbn` (inside one unit), with or without the
    /// correction of a read error.
    fn read_member(
        &mut self,
        member: MemberIndex,
        lbn: Lbn,
        into: &mut [u8],
        correct: bool,
    ) -> Result<(), Attempt> {
        if !correct {
            return self.members.read(member, lbn, into).map_err(|error| {
                if is_member_failure(&error) {
                    Attempt::MemberFailed(member)
                } else {
                    Attempt::Error(error)
                }
            });
        }
        let extent = crate::map::MemberExtent {
            member,
            lbn,
            sectors: Sectors((into.len() / crate::bytes::common::SECTOR) as u64),
        };
        let mut reader = MemberReader {
            layout: &self.layout,
            members: &mut self.members,
            buffers: &mut self.correction,
        };
        reader.read(extent, into)
    }

    /// Compares every stripe's parity with the XOR of its data (md's `check`); with
    /// `repair`, rewrites the parity of each stripe that differs (md's `repair`).
    /// Stripes with a member out (or not yet rebuilt) are skipped. A member read error
    /// is corrected from the other members, as on the read path.
    pub fn scrub(&mut self, repair: bool) -> Result<ScrubReport, VolumeError> {
        self.members.check_usable(FAILED)?;
        let mut report = ScrubReport::default();
        let corrected_before = self.members.corrected_read_sectors_total();
        for stripe in 0..self.layout.stripes() {
            if self.failed_at(stripe)?.is_some() {
                report.stripes_skipped += 1;
                continue;
            }
            let parity = self.layout.parity_member(stripe);
            let len = bytes(self.layout.unit(stripe, parity).used.0);
            let mut expected = std::mem::take(&mut self.scratch.unit_a);
            let mut stored = std::mem::take(&mut self.scratch.unit_c);
            let result = match self.check_parity(stripe, parity, &mut expected, &mut stored) {
                Ok(None) => {
                    report.stripes_skipped += 1;
                    Ok(())
                }
                Ok(Some(matches)) => {
                    report.stripes_checked += 1;
                    if !matches {
                        report.record_mismatch(stripe);
                    }
                    if !matches && repair {
                        // Counted only if written: the parity member may fail instead.
                        self.write_parity(stripe, parity, &expected[..len])
                            .map(|written| report.repaired += u64::from(written))
                    } else {
                        Ok(())
                    }
                }
                Err(error) => Err(error),
            };
            self.scratch.unit_a = expected;
            self.scratch.unit_c = stored;
            result.map_err(|e| self.maintenance_error(e))?;
        }
        report.corrected_read_sectors =
            self.members.corrected_read_sectors_total() - corrected_before;
        Ok(report)
    }

    /// `Some(parity matches)`, or `None` when a member failed during the check.
    fn check_parity(
        &mut self,
        stripe: u64,
        parity: MemberIndex,
        expected: &mut Vec<u8>,
        stored: &mut Vec<u8>,
    ) -> Result<Option<bool>, StoreError> {
        let unit = self.layout.unit(stripe, parity);
        let len = bytes(unit.used.0);
        if !self.xor_of_others(stripe, parity, sized(expected, len), OnReadError::Correct)? {
            return Ok(None);
        }
        match self.read_member(parity, unit.start, sized(stored, len), true) {
            Ok(()) => Ok(Some(expected[..len] == stored[..len])),
            Err(Attempt::MemberFailed(failed)) => self.member_failed(failed).map(|()| None),
            Err(Attempt::Error(error)) => Err(error),
        }
    }

    /// Writes `stripe`'s parity, with the stripe marked in the write-intent record;
    /// returns whether it was written (`false`: the parity member failed instead).
    fn write_parity(
        &mut self,
        stripe: u64,
        parity: MemberIndex,
        data: &[u8],
    ) -> Result<bool, StoreError> {
        let start = self.layout.stripe_start(stripe);
        let sectors = self.layout.stripe_data_sectors(stripe);
        let unit_start = self.layout.unit(stripe, parity).start;
        let mut written = false;
        self.protected(start, sectors, |volume| {
            let result = volume.members.write(parity, unit_start, data);
            written = volume.settle(parity, result)?;
            Ok(())
        })?;
        Ok(written)
    }

    /// Flushes every live member; a member failing here is marked failed.
    pub(super) fn flush_members(&mut self) -> Result<(), StoreError> {
        for index in 0..self.members.count() {
            let member = MemberIndex(index);
            if self.members.health.liveness(member) == Liveness::Dead {
                continue;
            }
            // A member whose flush fails may have lost writes it accepted (a file
            // store's page cache drops them on a failed write-back), so what it holds
            // is unknown: failed, as after a write error.
            let flushed = self.members.flush(member);
            self.settle(member, flushed)?;
        }
        Ok(())
    }

    /// Assembles a RAID-5 after a restart: `members` in layout order (`None` for a
    /// missing one), the write-intent record in `intent_store`. Recomputes the parity
    /// of every stripe a dirty region overlaps, marks the regions resynced, flushes
    /// and cleans the record. Dirty and degraded: see the module docs (`force`).
    pub fn assemble(
        layout: L,
        members: Vec<Option<S>>,
        intent_store: S,
        force: bool,
    ) -> Result<(Self, RecoveryReport), VolumeError> {
        Self::assemble_resuming(layout, members, intent_store, force, None)
    }

    /// [`assemble`](Raid5Volume::assemble), with a rebuild in progress resumed at its
    /// cursor (`resume.member`'s store is the replacement, live below the cursor)
    /// *before* the resync, so dirty stripes above the cursor are not resynced from
    /// the unrebuilt part of the new member.
    pub fn assemble_resuming(
        layout: L,
        members: Vec<Option<S>>,
        intent_store: S,
        force: bool,
        resume: Option<ResumeRebuild>,
    ) -> Result<(Self, RecoveryReport), VolumeError> {
        let mut volume = Self::from_slots(layout, members)?;
        if let Some(resume) = resume {
            volume.members.check_member(resume.member)?;
            let total = volume.layout.stripes();
            let usable =
                volume
                    .members
                    .health
                    .resume_rebuild(resume.member, resume.cursor, total, survives);
            if !usable {
                return Err(VolumeError::ArrayFailed {
                    failed: volume.members.health.failed().to_vec(),
                });
            }
        }
        let (intent, dirty) = Intent::open(intent_store, volume.layout.capacity())?;
        // A member being rebuilt counts as missing: above its cursor it holds nothing,
        // so a dirty stripe there is as unverifiable as on a failed member.
        let missing = volume.members.health.incomplete().first().copied();
        if let (Some(missing), false, false) = (missing, dirty.is_empty(), force) {
            return Err(VolumeError::DirtyDegraded {
                missing,
                dirty_regions: dirty.len(),
            });
        }
        let mut report = RecoveryReport {
            generation: intent.record.generation(),
            ..RecoveryReport::default()
        };
        volume.intent = Some(intent);
        for &region in &dirty {
            volume.resync_region(region, force, &mut report)?;
        }
        report.dirty_regions = dirty;
        let mut intent = volume.intent.take().expect("set above");
        let finished = intent.flush_and_clean(|| volume.flush_members());
        volume.intent = Some(intent);
        finished?;
        Ok((volume, report))
    }

    /// Recomputes the parity of every stripe `region` overlaps, then marks it resynced.
    fn resync_region(
        &mut self,
        region: u64,
        force: bool,
        report: &mut RecoveryReport,
    ) -> Result<(), VolumeError> {
        let intent = self.intent.as_ref().expect("resync needs a record");
        let (start, sectors) = intent.region_range(region);
        if sectors.0 > 0 {
            let first = self.layout.stripe_of(start)?;
            let last = self.layout.stripe_of(Lbn(start.0 + sectors.0 - 1))?;
            for stripe in first..=last {
                self.resync_stripe(stripe, force, report)?;
            }
        }
        let intent = self.intent.as_mut().expect("resync needs a record");
        intent.record.resynced(region)?;
        Ok(())
    }

    fn resync_stripe(
        &mut self,
        stripe: u64,
        force: bool,
        report: &mut RecoveryReport,
    ) -> Result<(), VolumeError> {
        let parity = self.layout.parity_member(stripe);
        match self.failed_at(stripe)? {
            Some(failed) if failed == parity => return Ok(()),
            Some(_) => {
                if !report.unverified_stripes.contains(&stripe) {
                    report.unverified_stripes.push(stripe);
                }
                return Ok(());
            }
            None => {}
        }
        let unit = self.layout.unit(stripe, parity);
        let mut expected = std::mem::take(&mut self.scratch.unit_a);
        let len = bytes(unit.used.0);
        // No correction of a data unit's read error: this stripe's parity may be stale,
        // so rebuilding from it could write data nobody wrote. Without `force` the
        // error is returned (the assembly refuses, as for any dirty stripe with a data
        // member out). With it the member is failed, so the array assembles instead of
        // staying offline over one bad sector, and the stripe, whose data on that
        // member now rests on parity that may be stale, is reported unverified. Only a
        // stripe whose parity was written is resynced: a member that fails on the way
        // (a source, or the parity member) is marked failed and the stripe not counted.
        let on_read_error = match force {
            true => OnReadError::FailMember,
            false => OnReadError::PassUp,
        };
        let written = self
            .xor_of_others(stripe, parity, sized(&mut expected, len), on_read_error)
            .and_then(|all_read| {
                if !all_read {
                    return Ok(false);
                }
                let result = self.members.write(parity, unit.start, &expected[..len]);
                self.settle(parity, result)
            });
        self.scratch.unit_a = expected;
        report.units_resynced += u64::from(written?);
        if let Some(failed) = self.failed_at(stripe)? {
            if failed != parity && !report.unverified_stripes.contains(&stripe) {
                report.unverified_stripes.push(stripe);
            }
        }
        Ok(())
    }
}

/// What a maintenance read of a source unit does with an I/O error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OnReadError {
    /// Return it (rebuild: the member being rebuilt is out here, so nothing can
    /// supply the sectors, and failing the source would fail the array).
    PassUp,
    /// Correct it from the other members (scrub, with every member live).
    Correct,
    /// Fail the source member (a forced resync: parity may be stale, so the sectors
    /// cannot be rebuilt, and a refused assembly would keep the whole array offline).
    FailMember,
}
