//! The maintenance operations of an assembled array: fail a member, rebuild it
//! (resumable), scrub.

use crate::array::Array;
use crate::error::ArrayError;
use crate::member::{create_member_file, member_path, open_member_store, SuperblockFile};
use crate::superblock::MemberRole;
use crate::{RebuildStep, ScrubReport};
use spinstack_store::BlockStore;
use spinstack_volume::bytes::ArrayState;
use std::path::PathBuf;

/// Mismatched-stripe numbers kept in a [`ScrubReport`].
const REPORTED_STRIPES: usize = 1000;

impl Array {
    fn check_member(&self, member: u32) -> Result<(), ArrayError> {
        if member >= self.spec.members {
            return Err(ArrayError::NoSuchMember {
                dir: self.dir.clone(),
                member,
                members: self.spec.members,
            });
        }
        Ok(())
    }

    fn refused(&self, operation: &'static str, why: String) -> ArrayError {
        ArrayError::Refused {
            dir: self.dir.clone(),
            operation,
            why,
        }
    }

    /// Flushes the buffer and the members, and records in the superblocks any member
    /// the flush failed before anything else is written: an operation that goes on to
    /// persist its own change (a rebuild's start writes the role table) would
    /// otherwise record that member as active.
    fn flush_all(&mut self) -> Result<(), ArrayError> {
        let flushed = self.engine.flush();
        self.persist_roles()?;
        flushed.map_err(|source| ArrayError::DataPath {
            dir: self.dir.clone(),
            source,
        })
    }

    fn volume_error(&self) -> impl Fn(spinstack_volume::bytes::VolumeError) -> ArrayError + '_ {
        move |source| ArrayError::Volume {
            dir: self.dir.clone(),
            source,
        }
    }

    /// Marks `member` failed and records it in the surviving superblocks. Refused when
    /// the level would not survive it (the array would lose data).
    pub fn fail_member(&mut self, member: u32) -> Result<(), ArrayError> {
        self.check_member(member)?;
        if self.roles[member as usize] == MemberRole::Failed {
            return Ok(());
        }
        let mut lost: Vec<u32> = (0..self.spec.members)
            .filter(|&m| self.roles[m as usize] != MemberRole::Active)
            .collect();
        if !lost.contains(&member) {
            lost.push(member);
        }
        if !self.layout_survives.survives(&lost) {
            return Err(self.refused(
                "fail a member",
                format!(
                    "a {} cannot survive losing members {lost:?}",
                    self.spec.level.name()
                ),
            ));
        }
        self.flush_all()?;
        self.engine
            .volume_mut()
            .fail_member(member)
            .map_err(self.volume_error())?;
        self.sync_roles();
        self.persist(false, true)
    }

    /// Replaces failed `member` by a fresh member file and starts rebuilding it.
    pub fn start_rebuild(&mut self, member: u32) -> Result<(), ArrayError> {
        self.check_member(member)?;
        let why = match self.roles[member as usize] {
            MemberRole::Failed => None,
            MemberRole::Active => Some("active: only a failed member is rebuilt"),
            MemberRole::Rebuilding => Some(
                "being rebuilt already (a rebuild at rest or a server goes on from its cursor)",
            ),
        };
        if let Some(why) = why {
            return Err(self.refused("start a rebuild", format!("member {member} is {why}")));
        }
        if let Some(other) = self.roles.iter().position(|r| *r == MemberRole::Rebuilding) {
            return Err(self.refused(
                "start a rebuild",
                format!("member {other} is being rebuilt"),
            ));
        }
        self.flush_all()?;
        // Record the rebuild in the other members first: a crash before the new file
        // is in place leaves the old (stale) file, which assembly treats as failed.
        self.roles[member as usize] = MemberRole::Rebuilding;
        self.rebuild_cursor = 0;
        self.persist(false, true)?;
        let path = member_path(&self.dir, member);
        let fresh = PathBuf::from(format!("{}.new", path.display()));
        let _ = std::fs::remove_file(&fresh);
        drop(create_member_file(&fresh, self.spec.member_size)?);
        let handle = SuperblockFile::open(&fresh)?;
        // Another file, which has corrected nothing yet (the volume's count for the
        // member restarts with its store in `replace_member` below).
        self.corrected_before[member as usize] = 0;
        handle.write(&self.superblock(member, false, 0))?;
        std::fs::rename(&fresh, &path).map_err(ArrayError::io(&path))?;
        if let Ok(dir) = std::fs::File::open(&self.dir) {
            let _ = dir.sync_all();
        }
        let store = open_member_store(&path, self.spec.member_size)?;
        self.superblocks[member as usize] = Some(SuperblockFile::open(&path)?);
        self.engine
            .volume_mut()
            .replace_member(member, store)
            .map_err(self.volume_error())?;
        Ok(())
    }

    /// Rebuilds up to `max_stripes` rebuild units (stripes; member rows for mirrors),
    /// flushes, and persists the cursor (or the member's return to active).
    pub fn rebuild_step(&mut self, max_stripes: u64) -> Result<RebuildStep, ArrayError> {
        let before = match self.engine.volume().status().state {
            ArrayState::Rebuilding { member, cursor, .. } => Some((member, cursor)),
            _ => None,
        };
        let units = self.engine.volume_mut().rebuild_step(max_stripes);
        if units.is_err() {
            // A member the step failed is recorded even though the step stopped.
            self.persist_roles()?;
        }
        let units = units.map_err(self.volume_error())?;
        self.flush_all()?;
        let status = self.engine.volume().status();
        let roles_changed = self.sync_roles();
        let (done, progress) = match status.state {
            ArrayState::Rebuilding { cursor, total, .. } => {
                self.rebuild_cursor = cursor;
                (false, cursor as f64 / total.max(1) as f64)
            }
            _ => {
                self.rebuild_cursor = 0;
                (true, 1.0)
            }
        };
        if units > 0 || roles_changed {
            self.persist(false, roles_changed)?;
        }
        let read_ranges = match before {
            Some((member, cursor)) => {
                let rebuilt = cursor..cursor.saturating_add(units);
                self.engine.volume().rebuild_read_ranges(member, rebuilt)
            }
            None => Vec::new(),
        };
        Ok(RebuildStep {
            done,
            units,
            progress,
            read_ranges,
        })
    }

    /// Compares parity (copies) over the whole array; with `repair`, rewrites what
    /// disagrees.
    pub fn scrub(&mut self, repair: bool) -> Result<ScrubReport, ArrayError> {
        self.flush_all()?;
        let found = self.engine.volume_mut().scrub(repair);
        // A member the scrub failed (a repair or a read-error rewrite that failed) is
        // recorded at once, as on the data path.
        self.persist_roles()?;
        let found = found.map_err(self.volume_error())?;
        self.flush_all()?;
        Ok(ScrubReport {
            mismatches: found.mismatch_count,
            repaired: found.repaired,
            corrected_read_sectors: found.corrected_read_sectors,
            checked: found.stripes_checked,
            skipped: found.stripes_skipped,
            mismatched_stripes: found
                .mismatches
                .iter()
                .copied()
                .take(REPORTED_STRIPES)
                .collect(),
        })
    }
}
