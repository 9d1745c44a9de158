//! Scrub, write-intent resync and assembly of a [`MirrorVolume`].
//!
//! A mirror resyncs a dirty region by copying, unit by unit, the first live copy over
//! the others: after a crash every copy holds the old or the new data of an
//! interrupted write, so any live copy is a correct answer. That also holds when a
//! member is missing, so a mirror assembles dirty and degraded without `force`. For
//! the same reason a read error met by the resync, the rebuild or a scrub is
//! corrected from another copy, as on the read path.

use super::common::{bytes, is_io_error, is_member_failure, Intent, RecoveryReport, ResumeRebuild};
use super::copy_layout::CopyLayout;
use super::error::VolumeError;
use super::mirror::MirrorVolume;
use super::scrub::ScrubReport;
use crate::map::Piece;
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_store::{BlockStore, StoreError};

impl<S: BlockStore, M: CopyLayout> MirrorVolume<S, M> {
    /// Assembles a mirror after a restart: `members` in map order (`None` for a missing
    /// one), the write-intent record in `intent_store`. Resyncs every dirty region from
    /// the first live copy, marks it resynced, flushes and cleans the record.
    pub fn assemble(
        map: M,
        members: Vec<Option<S>>,
        intent_store: S,
    ) -> Result<(Self, RecoveryReport), VolumeError> {
        Self::assemble_resuming(map, members, intent_store, None)
    }

    /// [`assemble`](MirrorVolume::assemble), with a rebuild in progress resumed at its
    /// cursor (member rows) before the resync, so no dirty region is copied from or
    /// to the part of the new member not yet rebuilt.
    pub fn assemble_resuming(
        map: M,
        members: Vec<Option<S>>,
        intent_store: S,
        resume: Option<ResumeRebuild>,
    ) -> Result<(Self, RecoveryReport), VolumeError> {
        let mut volume = Self::from_slots(map, members)?;
        if let Some(resume) = resume {
            volume.members.check_member(resume.member)?;
            let total = volume.rebuild_rows();
            let map = &volume.map;
            let usable = volume.members.health.resume_rebuild(
                resume.member,
                resume.cursor,
                total,
                |failed| map.survives(failed),
            );
            if !usable {
                return Err(VolumeError::ArrayFailed {
                    failed: volume.members.health.failed().to_vec(),
                });
            }
        }
        let (intent, dirty) = Intent::open(intent_store, volume.map.capacity())?;
        let mut report = RecoveryReport {
            generation: intent.record.generation(),
            ..RecoveryReport::default()
        };
        volume.intent = Some(intent);
        for &region in &dirty {
            report.units_resynced += volume.resync_region(region)?;
        }
        report.dirty_regions = dirty;
        let mut intent = volume.intent.take().expect("set above");
        let finished = intent.flush_and_clean(|| volume.flush_members());
        volume.intent = Some(intent);
        finished?;
        Ok((volume, report))
    }

    /// Copies the first live copy over the others in `region`; returns the units copied
    /// (a unit whose write failed a member is not counted).
    fn resync_region(&mut self, region: u64) -> Result<u64, VolumeError> {
        let intent = self.intent.as_ref().expect("resync needs a record");
        let (start, sectors) = intent.region_range(region);
        let unit = self.map.unit_sectors().0;
        let mut units = 0;
        let mut done = 0;
        while done < sectors.0 {
            let take = (unit - (start.0 + done) % unit).min(sectors.0 - done);
            let copied = self.copy_first_over_others(start.offset(Sectors(done)), Sectors(take))?;
            done += take;
            units += u64::from(copied);
        }
        let intent = self.intent.as_mut().expect("resync needs a record");
        intent.record.resynced(region)?;
        Ok(units)
    }

    /// Whether every live copy was written (`false`: a member failed instead).
    fn copy_first_over_others(&mut self, lbn: Lbn, sectors: Sectors) -> Result<bool, VolumeError> {
        let mut buf = std::mem::take(&mut self.unit_buf);
        let data = &mut buf[..bytes(sectors.0)];
        let result = self
            .read_copies(lbn, data, 0)
            .and_then(|()| self.write_copies(lbn, data));
        self.unit_buf = buf;
        Ok(result?)
    }

    /// Compares every live copy of every unit with the first live copy; with `repair`,
    /// rewrites the copies that differ from it. Units with fewer than two live copies
    /// are skipped (nothing to compare).
    pub fn scrub(&mut self, repair: bool) -> Result<ScrubReport, VolumeError> {
        self.members.check_usable("scrub")?;
        let unit = self.map.unit_sectors().0;
        let units = self.map.capacity().0.div_ceil(unit);
        let mut report = ScrubReport::default();
        let corrected_before = self.members.corrected_read_sectors_total();
        let mut buffers = [vec![0u8; bytes(unit)], vec![0u8; bytes(unit)]];
        let mut pieces = Vec::new();
        for index in 0..units {
            let lbn = Lbn(index * unit);
            let sectors = Sectors(unit.min(self.map.capacity().0 - lbn.0));
            let (copies_read, differs) =
                self.compare_copies(lbn, sectors, &mut buffers, &mut pieces)?;
            if copies_read < 2 {
                report.stripes_skipped += 1;
                continue;
            }
            report.stripes_checked += 1;
            if differs.is_empty() {
                continue;
            }
            report.record_mismatch(index);
            if repair {
                let reference = &buffers[0][..bytes(sectors.0)];
                let mut written = true;
                for copy in differs {
                    self.map.split_copy_into(lbn, sectors, copy, &mut pieces)?;
                    written &= self.write_pieces_protected(lbn, sectors, &pieces, reference)?;
                }
                // Counted only if every differing copy was rewritten, not failed instead.
                report.repaired += u64::from(written);
            }
        }
        report.corrected_read_sectors =
            self.members.corrected_read_sectors_total() - corrected_before;
        Ok(report)
    }

    /// Reads every live copy of a range, the first into `buffers[0]`, each later one
    /// into `buffers[1]` to compare; returns the copies read and those that differ.
    fn compare_copies(
        &mut self,
        lbn: Lbn,
        sectors: Sectors,
        buffers: &mut [Vec<u8>; 2],
        pieces: &mut Vec<Piece>,
    ) -> Result<(u32, Vec<u32>), VolumeError> {
        let len = bytes(sectors.0);
        let mut copies_read = 0;
        let mut differs = Vec::new();
        for copy in 0..self.map.copies() {
            self.map.split_copy_into(lbn, sectors, copy, pieces)?;
            let [first, later] = buffers;
            let (into, reference) = match copies_read {
                0 => (&mut first[..len], None),
                _ => (&mut later[..len], Some(&first[..len])),
            };
            if !self.read_pieces(lbn, copy, pieces, into, reference)? {
                continue;
            }
            if copies_read > 0 && buffers[1][..len] != buffers[0][..len] {
                differs.push(copy);
            }
            copies_read += 1;
        }
        if copies_read == 0 || self.members.health.is_failed() {
            return Err(VolumeError::ArrayFailed {
                failed: self.members.health.failed().to_vec(),
            });
        }
        Ok((copies_read, differs))
    }

    /// Reads copy `copy`'s pieces of the range at volume `lbn` into `buf`; `false` when
    /// a piece is not live (or its member fails now). A read error is corrected, as on
    /// the read path, from `reference` (the first live copy, already read) or, for the
    /// first live copy itself, from a later copy; the piece then compares equal to the
    /// copy it was rewritten from.
    fn read_pieces(
        &mut self,
        lbn: Lbn,
        copy: u32,
        pieces: &[Piece],
        buf: &mut [u8],
        reference: Option<&[u8]>,
    ) -> Result<bool, VolumeError> {
        for piece in pieces {
            if !self.piece_is_live(piece) {
                return Ok(false);
            }
            let out = &mut buf[bytes(piece.offset.0)..][..bytes(piece.extent.sectors.0)];
            match self
                .members
                .read(piece.extent.member, piece.extent.lbn, out)
            {
                Ok(()) => {}
                Err(error) if is_member_failure(&error) => {
                    self.fail_member(piece.extent.member)?;
                    return Ok(false);
                }
                Err(error) if is_io_error(&error) => {
                    match reference {
                        Some(reference) => {
                            out.copy_from_slice(&reference[bytes(piece.offset.0)..][..out.len()]);
                            self.rewrite_piece(piece, out)?;
                        }
                        None => self.correct_piece(lbn, piece, copy, out, error)?,
                    }
                    if !self.piece_is_live(piece) {
                        return Ok(false);
                    }
                }
                Err(error) => return Err(error.into()),
            }
        }
        Ok(true)
    }

    /// Writes one copy's pieces from `data`, with the range marked in the record;
    /// returns whether all were written (`false`: a member failed instead).
    fn write_pieces_protected(
        &mut self,
        lbn: Lbn,
        sectors: Sectors,
        pieces: &[Piece],
        data: &[u8],
    ) -> Result<bool, VolumeError> {
        let regions = match &mut self.intent {
            Some(intent) => Some(intent.begin(lbn, sectors)?),
            None => None,
        };
        let mut result: Result<bool, StoreError> = Ok(true);
        for piece in pieces {
            let bytes_in = &data[bytes(piece.offset.0)..][..bytes(piece.extent.sectors.0)];
            let member = piece.extent.member;
            let written = self.members.write(member, piece.extent.lbn, bytes_in);
            result = self.settle(member, written);
            if !matches!(result, Ok(true)) {
                break;
            }
        }
        if let (Some(intent), Some(regions)) = (&mut self.intent, regions) {
            intent.end(regions, result.is_ok());
        }
        Ok(result?)
    }
}
