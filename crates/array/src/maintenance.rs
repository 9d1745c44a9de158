//! Assembly of an array from its member files, and the maintenance operations:
//! fail, rebuild (resumable), scrub.

use crate::array::Array;
use crate::engine::Layout;
use crate::error::ArrayError;
use crate::member::{create_member_file, member_path, open_member_store, DirLock, SuperblockFile};
use crate::superblock::{MemberRole, Superblock};
use crate::{ArraySpec, AssemblyReport, RebuildStep, ScrubReport};
use spinstack_store::BlockStore;
use spinstack_volume::bytes::{ArrayState, ResumeRebuild};
use spinstack_volume::map::MemberIndex;
use std::path::{Path, PathBuf};

/// Mismatched-stripe numbers kept in a [`ScrubReport`].
const REPORTED_STRIPES: usize = 1000;

fn mismatch(file: &Path, problem: String) -> ArrayError {
    ArrayError::Mismatch {
        file: file.to_path_buf(),
        problem,
    }
}

fn hex(id: &[u8; 16]) -> String {
    id.iter().map(|b| format!("{b:02x}")).collect()
}

/// The spec a superblock records.
fn spec_of(block: &Superblock) -> ArraySpec {
    ArraySpec {
        level: block.level,
        members: block.members,
        member_size: block.member_size,
        chunk: block.chunk,
        disks: block.disks.clone(),
        buffer: block.buffer,
        track_units: block.track_units,
    }
}

/// The spec of the array in `dir`, from its newest superblock, without assembling it
/// or taking its lock (so it works while the array is served).
pub fn read_spec(dir: &Path) -> Result<ArraySpec, ArrayError> {
    let members = read_members(dir)?;
    let newest = members
        .iter()
        .map(|m| &m.2)
        .max_by_key(|block| block.generation)
        .ok_or_else(|| ArrayError::NotAnArray {
            dir: dir.to_path_buf(),
            file: member_path(dir, 0),
        })?;
    Ok(spec_of(newest))
}

/// Reads and cross-checks every member file's superblock.
fn read_members(dir: &Path) -> Result<Vec<(u32, SuperblockFile, Superblock)>, ArrayError> {
    let mut members = Vec::new();
    for (index, path) in crate::array::member_files(dir)? {
        let file = SuperblockFile::open(&path)?;
        let block = file.read()?;
        if block.index != index {
            return Err(mismatch(
                &path,
                format!(
                    "its superblock says it is member {}, not {index} (files renamed or copied?)",
                    block.index
                ),
            ));
        }
        members.push((index, file, block));
    }
    let Some(newest) = members
        .iter()
        .map(|m| &m.2)
        .max_by_key(|b| b.generation)
        .cloned()
    else {
        return Err(ArrayError::NotAnArray {
            dir: dir.to_path_buf(),
            file: member_path(dir, 0),
        });
    };
    for (index, file, block) in &members {
        if block.volume_id != newest.volume_id {
            return Err(mismatch(
                &file.path,
                format!(
                    "belongs to volume {}, but the newest member belongs to volume {}",
                    hex(&block.volume_id),
                    hex(&newest.volume_id)
                ),
            ));
        }
        if *index >= newest.members {
            return Err(mismatch(
                &file.path,
                format!("member {index} of an array of {} members", newest.members),
            ));
        }
        if spec_of(block) != spec_of(&newest) {
            return Err(mismatch(
                &file.path,
                format!(
                    "its geometry ({:?}) differs from the newest member's ({:?})",
                    spec_of(block),
                    spec_of(&newest)
                ),
            ));
        }
    }
    Ok(members)
}

/// [`Array::open`] after the lock is taken.
pub(crate) fn assemble(dir: &Path, lock: DirLock) -> Result<(Array, AssemblyReport), ArrayError> {
    let mut members = read_members(dir)?;
    let newest = members
        .iter()
        .map(|m| &m.2)
        .max_by_key(|b| b.generation)
        .cloned()
        .expect("checked");
    let spec = spec_of(&newest);
    let layout = Layout::build(&spec).map_err(|_| ArrayError::BadSpec {
        dir: dir.to_path_buf(),
        problem: "cannot rebuild the layout".into(),
    })?;
    let mut report = AssemblyReport {
        was_clean: newest.clean,
        ..AssemblyReport::default()
    };
    let mut roles = newest.roles.clone();
    let mut files: Vec<Option<(SuperblockFile, u64)>> = (0..spec.members).map(|_| None).collect();
    for (index, file, block) in members.drain(..) {
        files[index as usize] = Some((file, block.generation));
    }
    let mut behind = Vec::new();
    for m in 0..spec.members {
        let role = roles[m as usize];
        match &files[m as usize] {
            None => {
                report.missing.push(m);
                roles[m as usize] = MemberRole::Failed;
            }
            Some(_) if role == MemberRole::Failed => report.recorded_failed.push(m),
            Some((_, generation)) if *generation + 1 < newest.generation => {
                report.stale.push(m);
                roles[m as usize] = MemberRole::Failed;
            }
            Some((_, generation)) if *generation + 1 == newest.generation => behind.push(m),
            Some(_) => {}
        }
    }
    let lost = |roles: &[MemberRole], extra: &[u32]| -> Vec<u32> {
        (0..spec.members)
            .filter(|m| roles[*m as usize] != MemberRole::Active || extra.contains(m))
            .collect()
    };
    if layout.survives(&lost(&roles, &behind)) {
        for &m in &behind {
            roles[m as usize] = MemberRole::Failed;
            report.stale.push(m);
        }
        report.stale.sort_unstable();
    } else {
        report.accepted_behind = behind;
    }
    let lost_now = lost(&roles, &[]);
    if !layout.survives(&lost_now) {
        return Err(ArrayError::TooManyLost {
            dir: dir.to_path_buf(),
            level: spec.level.name(),
            lost: lost_now,
        });
    }
    let resume = roles
        .iter()
        .position(|r| *r == MemberRole::Rebuilding)
        .map(|m| ResumeRebuild {
            member: MemberIndex(m as u32),
            cursor: newest.rebuild_cursor,
        });
    let mut stores = Vec::new();
    let mut superblocks = Vec::new();
    for (m, slot) in files.into_iter().enumerate() {
        match slot {
            Some((file, _)) if roles[m] != MemberRole::Failed => {
                stores.push(Some(open_member_store(&file.path, spec.member_size)?));
                superblocks.push(Some(file));
            }
            _ => {
                stores.push(None);
                superblocks.push(None);
            }
        }
    }
    let engine = Array::assemble_volume(dir, &spec, stores, resume, &mut report)?;
    let roles_changed = roles != newest.roles;
    let mut array = Array::assembled(dir, spec, &newest, roles, superblocks, engine, layout, lock);
    let synced = array.sync_roles();
    array.persist(false, roles_changed || synced)?;
    Ok((array, report))
}

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

    fn flush_all(&mut self) -> Result<(), ArrayError> {
        self.engine.flush().map_err(|source| ArrayError::DataPath {
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
        if self.roles[member as usize] != MemberRole::Failed {
            return Err(self.refused(
                "start a rebuild",
                format!(
                    "member {member} is {:?}, not failed",
                    self.roles[member as usize]
                ),
            ));
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
        handle.write(&self.superblock(member, false))?;
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
        let units = self
            .engine
            .volume_mut()
            .rebuild_step(max_stripes)
            .map_err(self.volume_error())?;
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
        Ok(RebuildStep {
            done,
            units,
            progress,
        })
    }

    /// Compares parity (copies) over the whole array; with `repair`, rewrites what
    /// disagrees.
    pub fn scrub(&mut self, repair: bool) -> Result<ScrubReport, ArrayError> {
        self.flush_all()?;
        let found = self
            .engine
            .volume_mut()
            .scrub(repair)
            .map_err(self.volume_error())?;
        self.flush_all()?;
        Ok(ScrubReport {
            mismatches: found.mismatch_count,
            repaired: found.repaired,
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
