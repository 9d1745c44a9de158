//! [`Array`]: creation, assembly, status, close and the data path.

use crate::engine::{member_disks, Engine, Layout, LayoutError, LevelVolume};
use crate::error::ArrayError;
use crate::member::{
    create_member_file, intent_path, member_path, DirLock, MemberStore, SuperblockFile,
};
use crate::superblock::{
    level_uses_chunk, MemberRole, Superblock, MAX_DISK_NAME_BYTES, MAX_MEMBERS,
};
use crate::update_record::{update_record_path, UpdateRecordFile};
use crate::{ArraySpec, ArrayStatus, AssemblyReport, ResumedRebuild};
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_store::intent::record_sectors;
use spinstack_store::{BlockStore, FileStore, StoreError};
use spinstack_volume::bytes::{ArrayState, DabConfig, ResumeRebuild, VolumeError};
use spinstack_volume::config::{Level, TrackUnits};
use std::path::{Path, PathBuf};

/// The chunk of raid0 / raid10 / raid5 when the spec gives none: 64 KiB.
pub const DEFAULT_CHUNK: Sectors = Sectors(128);

/// An assembled array (see the crate docs). `Send`; one process at a time.
pub struct Array {
    pub(crate) dir: PathBuf,
    pub(crate) spec: ArraySpec,
    pub(crate) volume_id: [u8; 16],
    pub(crate) generation: u64,
    pub(crate) roles_generation: u64,
    pub(crate) roles: Vec<MemberRole>,
    pub(crate) rebuild_cursor: u64,
    /// Superblock handles of the members not failed (`None` once failed).
    pub(crate) superblocks: Vec<Option<SuperblockFile>>,
    pub(crate) engine: Engine,
    pub(crate) layout_survives: Layout,
    /// Per member, the sectors its file had corrected after read errors before this
    /// assembly (its superblock's count); the volume counts the rest.
    pub(crate) corrected_before: Vec<u64>,
    /// Written around every superblock update (see [`crate::update_record`]).
    pub(crate) update_record: UpdateRecordFile,
    _lock: DirLock,
}

fn bad_spec(dir: &Path, problem: impl Into<String>) -> ArrayError {
    ArrayError::BadSpec {
        dir: dir.to_path_buf(),
        problem: problem.into(),
    }
}

/// Checks a spec and fills its defaults (chunk).
fn checked_spec(dir: &Path, spec: &ArraySpec) -> Result<ArraySpec, ArrayError> {
    let mut spec = spec.clone();
    let level = spec.level;
    if spec.members > MAX_MEMBERS || (spec.members as usize) < level.minimum_members() {
        return Err(bad_spec(
            dir,
            format!(
                "a {} needs {} ..= {MAX_MEMBERS} members, got {}",
                level.name(),
                level.minimum_members(),
                spec.members
            ),
        ));
    }
    if level == Level::Single && spec.members != 1 {
        return Err(bad_spec(dir, "a single volume has exactly one member"));
    }
    if spec.member_size.0 == 0 {
        return Err(bad_spec(dir, "member size must be at least one sector"));
    }
    // An option the level has no use for is an error, not silently dropped.
    if spec.chunk.is_some() && !level_uses_chunk(level) {
        return Err(bad_spec(
            dir,
            format!(
                "a {} has no chunk (raid0, raid10 and raid5 do)",
                level.name()
            ),
        ));
    }
    if spec.track_units.is_some() && level != Level::Raid5TrackAligned {
        return Err(bad_spec(
            dir,
            format!(
                "track units apply to raid5-track-aligned only, not to a {}",
                level.name()
            ),
        ));
    }
    spec.chunk = if level_uses_chunk(level) {
        Some(spec.chunk.unwrap_or(DEFAULT_CHUNK))
    } else {
        None
    };
    if spec.chunk.is_some_and(|c| c.0 == 0 || c > spec.member_size) {
        return Err(bad_spec(
            dir,
            "chunk must be at least one sector and at most the member size",
        ));
    }
    if spec.disks.len() > 1 && spec.disks.len() != spec.members as usize {
        return Err(bad_spec(
            dir,
            format!(
                "{} disks for {} members: give none, one, or one per member",
                spec.disks.len(),
                spec.members
            ),
        ));
    }
    if spec.disks.iter().any(|d| d.is_empty() || d.contains('\n'))
        || spec.disks.join("\n").len() > MAX_DISK_NAME_BYTES
    {
        return Err(bad_spec(
            dir,
            "disk names must be non-empty single lines, 2048 bytes in all",
        ));
    }
    // The member's drive is what `serve --timing model` times it on and where its
    // track map comes from: a member larger than that drive would have LBNs the
    // model does not (inputs finding 24). With no drive named, the default one
    // models the volume only if asked (`--timing model`, which then refuses it),
    // so a large volume for real data alone is not refused here, except where
    // the level's layout itself is made of that drive's tracks.
    let model_bounds_size = !spec.disks.is_empty() || level == Level::Raid5TrackAligned;
    for (member, name) in member_disks(&spec).iter().enumerate() {
        let disk_error = |problem: String| ArrayError::Disk {
            dir: dir.to_path_buf(),
            name: name.clone(),
            problem,
        };
        let drive =
            spinstack_disk::catalog::resolve(name).map_err(|e| disk_error(e.to_string()))?;
        let capacity = spinstack_disk::layout::Layout::new(&drive.layout)
            .map_err(|e| disk_error(e.to_string()))?
            .capacity();
        if model_bounds_size && spec.member_size > capacity {
            let which = if spec.disks.is_empty() {
                " (the default drive: no disk was named)"
            } else {
                ""
            };
            return Err(disk_error(format!(
                "member {member} is {} sectors ({} bytes), larger than the modelled drive{which}, \
                 which holds {} sectors ({} bytes): give a member size of at most the drive's \
                 capacity, or a larger drive",
                spec.member_size.0,
                spec.member_size.bytes(),
                capacity.0,
                capacity.bytes()
            )));
        }
    }
    spec.track_units = match level {
        Level::Raid5TrackAligned => Some(spec.track_units.unwrap_or(TrackUnits::WholeTrack)),
        _ => None,
    };
    if let Some(buffer) = spec.buffer {
        if buffer.blocks == 0 || buffer.block.0 == 0 {
            return Err(bad_spec(
                dir,
                "a buffer needs at least one block of at least one sector",
            ));
        }
    }
    if let Some(problem) = dab_config(&spec).and_then(|config| config.problem()) {
        return Err(bad_spec(dir, problem));
    }
    Ok(spec)
}

pub(crate) fn layout_error(dir: &Path, error: LayoutError) -> ArrayError {
    match error {
        LayoutError::Disk { name, problem } => ArrayError::Disk {
            dir: dir.to_path_buf(),
            name,
            problem,
        },
        LayoutError::Map(problem) => bad_spec(dir, problem),
    }
}

fn dab_config(spec: &ArraySpec) -> Option<DabConfig> {
    spec.buffer.map(|b| DabConfig {
        blocks: b.blocks as usize,
        block_sectors: b.block,
        policy: b.policy,
    })
}

/// A random volume id from the operating system.
fn random_volume_id() -> Result<[u8; 16], ArrayError> {
    use std::io::Read;
    let mut id = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut id))
        .map_err(|source| ArrayError::Io {
            path: PathBuf::from("/dev/urandom"),
            source,
        })?;
    Ok(id)
}

fn volume_error(dir: &Path) -> impl Fn(VolumeError) -> ArrayError + '_ {
    move |source| ArrayError::Volume {
        dir: dir.to_path_buf(),
        source,
    }
}

impl Array {
    /// Creates a new array in `dir` (created if absent) with a random volume id.
    pub fn create(dir: &Path, spec: &ArraySpec) -> Result<Array, ArrayError> {
        Array::create_with_id(dir, spec, random_volume_id()?)
    }

    /// [`Array::create`] with a given volume id (tests, reproducible runs).
    pub fn create_with_id(
        dir: &Path,
        spec: &ArraySpec,
        volume_id: [u8; 16],
    ) -> Result<Array, ArrayError> {
        let spec = checked_spec(dir, spec)?;
        // Everything that can refuse the spec is checked before any file is made.
        let layout = Layout::build(&spec).map_err(|e| layout_error(dir, e))?;
        std::fs::create_dir_all(dir).map_err(ArrayError::io(dir))?;
        let lock = DirLock::take(dir)?;
        let existing = crate::discovery::member_files(dir)?
            .0
            .into_iter()
            .map(|(_, p)| p)
            .chain(Some(intent_path(dir)).filter(|p| p.exists()))
            .next();
        if let Some(file) = existing {
            return Err(ArrayError::AlreadyExists {
                dir: dir.to_path_buf(),
                file,
            });
        }
        let members = spec.members;
        let created = Array::create_locked(dir, spec, layout, volume_id, lock);
        if created.is_err() {
            // None of these existed (checked above): a create that failed part way
            // (a member file the file system refuses, say) leaves nothing that
            // would make the next create refuse to overwrite "an array".
            for member in 0..members {
                let _ = std::fs::remove_file(member_path(dir, member));
            }
            let _ = std::fs::remove_file(intent_path(dir));
            let _ = std::fs::remove_file(update_record_path(dir));
        }
        created
    }

    /// The rest of [`Array::create_with_id`], in a directory it holds the lock of and
    /// that holds no array, with the spec's layout already built (and checked).
    fn create_locked(
        dir: &Path,
        spec: ArraySpec,
        layout: Layout,
        volume_id: [u8; 16],
        lock: DirLock,
    ) -> Result<Array, ArrayError> {
        let layout_survives = Layout::build(&spec).map_err(|e| layout_error(dir, e))?;
        // Member files first (no valid superblock yet: a crash here leaves files that
        // `open` refuses and `create` will not overwrite), then the record, then the
        // superblocks that make it an array.
        let mut stores = Vec::new();
        let mut superblocks = Vec::new();
        for member in 0..spec.members {
            let path = member_path(dir, member);
            let file = create_member_file(&path, spec.member_size)?;
            superblocks.push(Some(SuperblockFile::open(&path)?));
            let store = MemberStore::data(file, spec.member_size)
                .map_err(|source| ArrayError::Store { path, source })?;
            stores.push(store);
        }
        let intent = create_intent(dir, &spec)?;
        let volume = LevelVolume::create(layout, stores, intent).map_err(volume_error(dir))?;
        let engine = Engine::new(volume, dab_config(&spec)).map_err(volume_error(dir))?;
        let update_record = UpdateRecordFile::open(dir, volume_id, 0)?;
        let mut array = Array {
            dir: dir.to_path_buf(),
            volume_id,
            generation: 0,
            roles_generation: 1,
            roles: vec![MemberRole::Active; spec.members as usize],
            rebuild_cursor: 0,
            superblocks,
            engine,
            layout_survives,
            corrected_before: vec![0; spec.members as usize],
            update_record,
            spec,
            _lock: lock,
        };
        array.persist(false, true)?;
        Ok(array)
    }

    pub fn spec(&self) -> &ArraySpec {
        &self.spec
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn capacity(&self) -> Sectors {
        self.engine.capacity()
    }

    /// Each member's role, as recorded.
    pub fn roles(&self) -> &[MemberRole] {
        &self.roles
    }

    pub fn status(&self) -> ArrayStatus {
        let status = self.engine.volume().status();
        let (state, rebuilding) = match &status.state {
            ArrayState::Healthy => ("healthy", None),
            ArrayState::Degraded { .. } => ("degraded", None),
            ArrayState::Rebuilding { member, .. } => ("rebuilding", Some(member.0)),
            ArrayState::Failed { .. } => ("failed", None),
        };
        ArrayStatus {
            state,
            failed: status.failed.iter().map(|m| m.0).collect(),
            rebuilding,
            rebuild_progress: status.rebuild_progress,
            corrected_read_sectors: self.corrected_read_sectors(),
            level: self.spec.level,
            members: self.spec.members,
            disks: member_disks(&self.spec),
            capacity_bytes: self.capacity().bytes(),
            generation: self.generation,
            volume_id: self.volume_id.iter().map(|b| format!("{b:02x}")).collect(),
        }
    }

    /// Flushes everything (the buffer, the members), clears the write-intent record
    /// and marks every superblock clean.
    pub fn close(mut self) -> Result<(), ArrayError> {
        self.engine.flush().map_err(|source| ArrayError::DataPath {
            dir: self.dir.clone(),
            source,
        })?;
        let dir = self.dir.clone();
        self.engine
            .volume_mut()
            .flush_and_clean()
            .map_err(volume_error(&dir))?;
        let roles_changed = self.sync_roles();
        self.persist(true, roles_changed)
    }

    /// Per member, the sectors its file has had rewritten after read errors: what its
    /// superblock said at assembly plus what the volume corrected since.
    pub fn corrected_read_sectors(&self) -> Vec<u64> {
        let since = self.engine.volume().status().corrected_read_sectors;
        self.corrected_before
            .iter()
            .zip(since.iter().chain(std::iter::repeat(&0)))
            .map(|(before, since)| before + since)
            .collect()
    }

    /// The superblock of member `index` at the current generation, carrying
    /// `corrected_read_sectors` as that member file's count.
    pub(crate) fn superblock(
        &self,
        index: u32,
        clean: bool,
        corrected_read_sectors: u64,
    ) -> Superblock {
        Superblock {
            volume_id: self.volume_id,
            generation: self.generation,
            roles_generation: self.roles_generation,
            level: self.spec.level,
            track_units: self.spec.track_units,
            buffer: self.spec.buffer,
            clean,
            members: self.spec.members,
            index,
            member_size: self.spec.member_size,
            chunk: self.spec.chunk,
            rebuild_cursor: self.rebuild_cursor,
            copies: if self.spec.level == Level::Raid10 {
                2
            } else {
                0
            },
            disks: self.spec.disks.clone(),
            roles: self.roles.clone(),
            corrected_read_sectors,
        }
    }

    /// Generation + 1, written to every member not failed, between "started" and
    /// "finished" in the update record (so assembly can tell a member this update
    /// missed from an old copy of its file).
    pub(crate) fn persist(&mut self, clean: bool, roles_changed: bool) -> Result<(), ArrayError> {
        self.generation += 1;
        self.update_record.start(self.generation)?;
        if roles_changed {
            self.roles_generation = self.generation;
        }
        let corrected = self.corrected_read_sectors();
        for index in 0..self.spec.members {
            if self.roles[index as usize] == MemberRole::Failed {
                self.superblocks[index as usize] = None;
            }
            if let Some(file) = &self.superblocks[index as usize] {
                file.write(&self.superblock(index, clean, corrected[index as usize]))?;
            }
        }
        self.update_record.finish(self.generation)
    }

    /// Brings the role table in line with the volume's health (a member may have
    /// failed on the data path); returns whether it changed.
    pub(crate) fn sync_roles(&mut self) -> bool {
        let status = self.engine.volume().status();
        // The common case, checked without allocating: nothing failed, nothing recorded.
        let all_active = self.roles.iter().all(|r| *r == MemberRole::Active);
        if status.state == ArrayState::Healthy && all_active {
            return false;
        }
        let mut roles = vec![MemberRole::Active; self.roles.len()];
        for m in &status.failed {
            roles[m.index()] = MemberRole::Failed;
        }
        if let ArrayState::Rebuilding { member, .. } = status.state {
            roles[member.index()] = MemberRole::Rebuilding;
        }
        if let ArrayState::Failed { failed } = &status.state {
            for m in failed {
                roles[m.index()] = MemberRole::Failed;
            }
        }
        let changed = roles != self.roles;
        self.roles = roles;
        changed
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn assembled(
        dir: &Path,
        spec: ArraySpec,
        newest: &Superblock,
        roles: Vec<MemberRole>,
        superblocks: Vec<Option<SuperblockFile>>,
        engine: Engine,
        layout_survives: Layout,
        corrected_before: Vec<u64>,
        update_record: UpdateRecordFile,
        lock: DirLock,
    ) -> Array {
        Array {
            dir: dir.to_path_buf(),
            spec,
            volume_id: newest.volume_id,
            generation: newest.generation,
            roles_generation: newest.roles_generation,
            roles,
            rebuild_cursor: newest.rebuild_cursor,
            superblocks,
            engine,
            layout_survives,
            corrected_before,
            update_record,
            _lock: lock,
        }
    }

    /// Opens the level's volume over the members that are usable (`stores`).
    pub(crate) fn assemble_volume(
        dir: &Path,
        spec: &ArraySpec,
        stores: Vec<Option<MemberStore>>,
        resume: Option<ResumeRebuild>,
        report: &mut AssemblyReport,
    ) -> Result<Engine, ArrayError> {
        let layout = Layout::build(spec).map_err(|e| layout_error(dir, e))?;
        let intent = match spec.level {
            Level::Single | Level::Raid0 => None,
            _ => {
                let path = intent_path(dir);
                if !path.exists() {
                    return Err(ArrayError::NotAnArray {
                        dir: dir.to_path_buf(),
                        file: path,
                    });
                }
                let file = FileStore::open(&path).map_err(|source| ArrayError::Store {
                    path: path.clone(),
                    source,
                })?;
                let capacity = file.capacity();
                Some(
                    MemberStore::new(file, Sectors(0), capacity)
                        .map_err(|source| ArrayError::Store { path, source })?,
                )
            }
        };
        let (volume, recovery) = LevelVolume::assemble(layout, stores, intent, resume).map_err(
            |source| match source {
                VolumeError::Intent(_) | VolumeError::IntentMismatch { .. } => {
                    ArrayError::Mismatch {
                        file: intent_path(dir),
                        problem: source.to_string(),
                    }
                }
                source => ArrayError::Volume {
                    dir: dir.to_path_buf(),
                    source,
                },
            },
        )?;
        report.dirty_regions = recovery.dirty_regions.len() as u64;
        report.units_resynced = recovery.units_resynced;
        report.unverified_stripes = recovery.unverified_stripes;
        report.resumed_rebuild = resume.map(|r| ResumedRebuild {
            member: r.member.0,
            cursor: r.cursor,
        });
        Engine::new(volume, dab_config(spec)).map_err(volume_error(dir))
    }
}

/// A new, clean write-intent file large enough for any region size this crate
/// picks (at least one sector per region).
fn create_intent(dir: &Path, spec: &ArraySpec) -> Result<MemberStore, ArrayError> {
    let path = intent_path(dir);
    let volume_sectors = spec.member_size.0.saturating_mul(u64::from(spec.members));
    let sectors = record_sectors(volume_sectors).unwrap_or(Sectors(1));
    let file = FileStore::create(&path, sectors).map_err(|source| ArrayError::Store {
        path: path.clone(),
        source,
    })?;
    MemberStore::new(file, Sectors(0), sectors).map_err(|source| ArrayError::Store { path, source })
}

impl Array {
    /// Records in the superblocks any member the data path has just failed (a member
    /// gone, a write error, a read error that could not be rewritten), before the
    /// request that failed it returns. A write acknowledged while the failed member is
    /// still recorded active would, after a crash, bring that member back at assembly
    /// holding stale data, with nothing left to say so (md likewise updates its
    /// superblock before it completes a write that failed a member). A record that
    /// cannot be written fails the request, whose outcome would not survive a crash.
    pub(crate) fn record_failures(&mut self) -> Result<(), StoreError> {
        self.persist_roles().map_err(|error| StoreError::Io {
            operation: "record a member failure in",
            path: self.dir.clone(),
            source: std::io::Error::other(error.to_string()),
        })
    }

    /// Persists the role table if the volume's health changed it.
    pub(crate) fn persist_roles(&mut self) -> Result<(), ArrayError> {
        if self.sync_roles() {
            self.persist(false, true)?;
        }
        Ok(())
    }
}

/// Every request records in the superblocks the member failures it caused before it
/// returns, whether it succeeded or not (see the crate docs, "Member roles").
impl BlockStore for Array {
    fn capacity(&self) -> Sectors {
        self.engine.capacity()
    }
    fn read(&mut self, lbn: Lbn, buf: &mut [u8]) -> Result<(), StoreError> {
        let result = self.engine.read(lbn, buf);
        self.record_failures()?;
        result
    }
    fn write(&mut self, lbn: Lbn, buf: &[u8]) -> Result<(), StoreError> {
        let result = self.engine.write(lbn, buf);
        self.record_failures()?;
        result
    }
    fn flush(&mut self) -> Result<(), StoreError> {
        let result = self.engine.flush();
        self.record_failures()?;
        result
    }
    fn trim(&mut self, lbn: Lbn, sectors: Sectors) -> Result<(), StoreError> {
        let result = self.engine.trim(lbn, sectors);
        self.record_failures()?;
        result
    }
}

#[cfg(test)]
mod tests;
