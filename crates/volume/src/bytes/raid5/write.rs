//! The RAID-5 write and trim paths: write plans executed over bytes, one stripe at a
//! time (see the parent module for the failure semantics).

use super::correct::Attempt;
use super::correct::MemberReader;
use super::{sized, Raid5Volume, Scratch, FAILED};
use crate::bytes::common::{bytes, check_request};
use crate::map::plan::{
    nothing_cached, plan_write_into, stripe_segments, ParityMethod, ParityRun, WriteChoice,
    WritePlan,
};
use crate::map::{MemberIndex, ParityLayout, StripeRange, StripeSegment};
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_store::store::check_range;
use spinstack_store::{xor_into, BlockStore, StoreError};

impl<S: BlockStore, L: ParityLayout> Raid5Volume<S, L> {
    pub(super) fn write_volume(&mut self, lbn: Lbn, buf: &[u8]) -> Result<(), StoreError> {
        let sectors = check_request(self.layout.capacity(), lbn, buf.len())?;
        self.protected(lbn, sectors, |volume| {
            let mut done = 0;
            while done < sectors.0 {
                let segment = volume.segment_at(lbn, sectors, done);
                let data = &buf[bytes(done)..][..bytes(segment.range.sectors.0)];
                volume.write_stripe(segment.stripe, segment.range, data)?;
                done += segment.range.sectors.0;
            }
            Ok(())
        })
    }

    pub(super) fn trim_volume(&mut self, lbn: Lbn, sectors: Sectors) -> Result<(), StoreError> {
        check_range(self.layout.capacity(), lbn, sectors)?;
        self.protected(lbn, sectors, |volume| {
            let mut done = 0;
            while done < sectors.0 {
                let segment = volume.segment_at(lbn, sectors, done);
                done += segment.range.sectors.0;
                let stripe_data = volume.layout.stripe_data_sectors(segment.stripe);
                if segment.range.start.0 == 0 && segment.range.sectors == stripe_data {
                    volume.trim_stripe(segment.stripe)?;
                } else {
                    let mut zeros = std::mem::take(&mut volume.scratch.zeros);
                    let data = sized(&mut zeros, bytes(segment.range.sectors.0));
                    let written = volume.write_stripe(segment.stripe, segment.range, data);
                    volume.scratch.zeros = zeros;
                    written?;
                }
            }
            Ok(())
        })
    }

    /// The stripe segment of the request (`sectors` from `lbn`, checked against the
    /// capacity) that starts `done` sectors into it. One `stripe_of` per segment, and
    /// no list to allocate or borrow while the stripe is written.
    fn segment_at(&self, lbn: Lbn, sectors: Sectors, done: u64) -> StripeSegment {
        let rest = Sectors(sectors.0 - done);
        let segment = stripe_segments(&self.layout, lbn.offset(Sectors(done)), rest)
            .ok()
            .and_then(|mut segments| segments.next())
            .expect("a non-empty request inside the capacity has a first segment");
        StripeSegment {
            volume_offset: Sectors(done),
            ..segment
        }
    }

    /// Runs `change` with the request's regions marked in the write-intent record
    /// (durably, before any member write) and ended afterwards; ended failed when
    /// `change` returned an error, so they stay marked until resynced.
    pub(super) fn protected(
        &mut self,
        lbn: Lbn,
        sectors: Sectors,
        change: impl FnOnce(&mut Self) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        self.members.check_usable(FAILED)?;
        let regions = match &mut self.intent {
            Some(intent) => Some(intent.begin(lbn, sectors)?),
            None => None,
        };
        let result = change(self);
        if let (Some(intent), Some(regions)) = (&mut self.intent, regions) {
            intent.end(regions, result.is_ok());
        }
        result
    }

    /// Trims every live member's unit of `stripe`.
    fn trim_stripe(&mut self, stripe: u64) -> Result<(), StoreError> {
        for index in 0..self.layout.members() {
            let member = MemberIndex(index);
            if !self.members.health.is_live_at(member, stripe) {
                continue;
            }
            let unit = self.layout.unit(stripe, member);
            let trimmed = self.members.trim(member, unit.start, unit.allocated);
            self.settle(member, trimmed)?;
        }
        Ok(())
    }

    /// Writes `data` at `range` of `stripe`: plan, read the old contents, compute the
    /// new parity, write. A member failing during the reads replans the stripe.
    fn write_stripe(
        &mut self,
        stripe: u64,
        range: StripeRange,
        data: &[u8],
    ) -> Result<(), StoreError> {
        for _ in 0..=self.members.count() {
            let failed = self.failed_at(stripe)?;
            let planned = plan_write_into(
                &self.layout,
                stripe,
                range,
                failed,
                &nothing_cached,
                WriteChoice::Cheapest,
                &mut self.write_plan,
            );
            debug_assert!(planned.is_ok(), "segment from stripe_segments: {planned:?}");
            self.load_stripe(stripe);
            let mut reader = MemberReader {
                layout: &self.layout,
                members: &mut self.members,
                buffers: &mut self.correction,
            };
            match read_old(&mut reader, &self.write_plan, &mut self.scratch) {
                Ok(()) => {}
                Err(Attempt::MemberFailed(member)) => {
                    self.member_failed(member)?;
                    continue;
                }
                Err(Attempt::Error(error)) => return Err(error),
            }
            compute_parity(&self.write_plan, range, data, &mut self.scratch);
            return self.write_planned(stripe, range, data);
        }
        Err(StoreError::Failed { operation: FAILED })
    }

    /// Issues the plan's writes; a member failing now (gone, or an I/O error) is marked
    /// failed and skipped (the parity already holds its new contents).
    fn write_planned(
        &mut self,
        stripe: u64,
        range: StripeRange,
        data: &[u8],
    ) -> Result<(), StoreError> {
        let parity_member = self.layout.parity_member(stripe);
        let parity_start = self.write_plan.parity_runs.first().map_or(0, |r| r.start.0);
        for index in 0..self.write_plan.writes.len() {
            let write = self.write_plan.writes[index];
            if !self.members.health.is_live_at(write.member, stripe) {
                continue;
            }
            let unit = self.scratch.units[write.member.index()];
            let offset = write.lbn.0 - unit.start.0;
            let bytes_out = if write.member == parity_member {
                &self.scratch.parity[bytes(offset - parity_start)..][..bytes(write.sectors.0)]
            } else {
                let base = self.scratch.data_base[write.member.index()].expect("a data unit");
                &data[bytes(base + offset - range.start.0)..][..bytes(write.sectors.0)]
            };
            let written = self.members.write(write.member, write.lbn, bytes_out);
            self.settle(write.member, written)?;
        }
        Ok(())
    }
}

/// Reads every old extent of the plan into `scratch.old` (before any write),
/// correcting read errors where the other members can.
fn read_old<S: BlockStore, L: ParityLayout>(
    reader: &mut MemberReader<'_, S, L>,
    plan: &WritePlan,
    scratch: &mut Scratch,
) -> Result<(), Attempt> {
    scratch.old_at.clear();
    let mut total = 0;
    for read in &plan.reads {
        scratch.old_at.push(total);
        total += bytes(read.sectors.0);
    }
    let old = sized(&mut scratch.old, total);
    for (read, &at) in plan.reads.iter().zip(&scratch.old_at) {
        reader.read(*read, &mut old[at..][..bytes(read.sectors.0)])?;
    }
    Ok(())
}

/// Old contents of `member`'s unit offsets `from..to`, from the plan's reads.
fn old_slice<'a>(
    plan: &WritePlan,
    scratch: &'a Scratch,
    member: MemberIndex,
    from: u64,
    to: u64,
) -> &'a [u8] {
    let start = scratch.units[member.index()].start.0 + from;
    let end = start + (to - from);
    let index = plan
        .reads
        .iter()
        .position(|r| r.member == member && r.lbn.0 <= start && end <= r.end().0)
        .expect("a write plan reads every old sector its parity formula needs");
    let read = plan.reads[index];
    &scratch.old[scratch.old_at[index] + bytes(start - read.lbn.0)..][..bytes(to - from)]
}

/// Fills `scratch.parity` with the new parity of every run of the plan.
fn compute_parity(plan: &WritePlan, range: StripeRange, data: &[u8], scratch: &mut Scratch) {
    let (Some(first), Some(last)) = (plan.parity_runs.first(), plan.parity_runs.last()) else {
        return;
    };
    let parity_start = first.start.0;
    let len = bytes(last.start.0 + last.sectors.0 - parity_start);
    let mut parity = std::mem::take(&mut scratch.parity);
    sized(&mut parity, len);
    for run in &plan.parity_runs {
        let out = &mut parity[bytes(run.start.0 - parity_start)..][..bytes(run.sectors.0)];
        parity_run(plan, range, data, scratch, run, out);
    }
    scratch.parity = parity;
}

/// One run's new parity into `out` (see `map::plan` for the two formulas).
fn parity_run(
    plan: &WritePlan,
    range: StripeRange,
    data: &[u8],
    scratch: &Scratch,
    run: &ParityRun,
    out: &mut [u8],
) {
    let (a, b) = (run.start.0, run.start.0 + run.sectors.0);
    let parity_member = plan
        .parity_writes()
        .first()
        .map(|w| w.member)
        .expect("a parity run comes with a parity write");
    match run.method {
        ParityMethod::ReadModifyWrite => {
            out.copy_from_slice(old_slice(plan, scratch, parity_member, a, b))
        }
        ParityMethod::ReconstructWrite => out.fill(0),
    }
    for (index, base) in scratch.data_base.iter().enumerate() {
        let Some(base) = *base else { continue };
        let end = b.min(scratch.units[index].used.0);
        if a < end {
            let unit = RunUnit {
                member: MemberIndex(index as u32),
                base,
                from: a,
                to: end,
            };
            add_unit(plan, range, data, scratch, run.method, &unit, out);
        }
    }
}

/// A data unit's part of a parity run: unit offsets `from..to` (`from` is the run's
/// start, `to` the run's end or the unit's end), the unit's data starting at stripe
/// data offset `base`.
struct RunUnit {
    member: MemberIndex,
    base: u64,
    from: u64,
    to: u64,
}

/// XORs one data unit's contribution to a run into `out` (indexed from `unit.from`).
fn add_unit(
    plan: &WritePlan,
    range: StripeRange,
    data: &[u8],
    scratch: &Scratch,
    method: ParityMethod,
    unit: &RunUnit,
    out: &mut [u8],
) {
    let (a, end, base) = (unit.from, unit.to, unit.base);
    let used_end = base + scratch.units[unit.member.index()].used.0;
    // The unit offsets this write covers inside the run, possibly empty.
    let written_from = range.start.0.max(base).saturating_sub(base).max(a);
    let written_to = range.end().0.min(used_end).saturating_sub(base).min(end);
    let target = |from: u64, to: u64| bytes(from - a)..bytes(to - a);
    let old = |from: u64, to: u64| old_slice(plan, scratch, unit.member, from, to);
    if written_from < written_to {
        let span = target(written_from, written_to);
        let new =
            &data[bytes(base + written_from - range.start.0)..][..bytes(written_to - written_from)];
        xor_into(&mut out[span.clone()], new);
        if method == ParityMethod::ReadModifyWrite {
            xor_into(&mut out[span], old(written_from, written_to));
        }
    }
    if method == ParityMethod::ReconstructWrite {
        // Unwritten offsets of an existing unit contribute their old contents.
        let (before, after) = if written_from < written_to {
            ((a, written_from), (written_to, end))
        } else {
            ((a, end), (end, end))
        };
        for (from, to) in [before, after] {
            if from < to {
                xor_into(&mut out[target(from, to)], old(from, to));
            }
        }
    }
}
