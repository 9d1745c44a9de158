//! Assembly of an array from its member files ([`Array::open`], [`read_spec`]): read
//! every superblock, refuse what does not belong together, decide each member's role,
//! resync what the write-intent record says may be torn.

use crate::array::Array;
use crate::engine::Layout;
use crate::error::ArrayError;
use crate::member::{member_path, open_member_store, DirLock, SuperblockFile};
use crate::superblock::{MemberRole, Superblock};
use crate::{ArraySpec, ArrayStatus, AssemblyReport, Inspection};
use spinstack_volume::bytes::ResumeRebuild;
use spinstack_volume::map::MemberIndex;
use std::path::Path;

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

/// Every member's role at assembly, decided from the superblocks alone (no file is
/// written): what [`Array::open`] will use and what [`inspect`] reports.
struct Roles {
    spec: ArraySpec,
    layout: Layout,
    newest: Superblock,
    roles: Vec<MemberRole>,
    /// Each member's superblock file and generation, where its file exists.
    files: Vec<Option<(SuperblockFile, u64)>>,
    /// Each member file's count of sectors corrected after read errors (0 where its
    /// file is missing).
    corrected: Vec<u64>,
    report: AssemblyReport,
}

/// Reads the superblocks of `dir` and decides each member's role: missing and stale
/// members are failed, members one generation behind are accepted only when failing
/// them would lose the array; refuses an array that has lost more than it survives.
fn decide_roles(dir: &Path) -> Result<Roles, ArrayError> {
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
    let mut corrected = vec![0; spec.members as usize];
    for (index, file, block) in members.drain(..) {
        files[index as usize] = Some((file, block.generation));
        corrected[index as usize] = block.corrected_read_sectors;
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
    Ok(Roles {
        spec,
        layout,
        newest,
        roles,
        files,
        corrected,
        report,
    })
}

/// The state of the array in `dir` as [`Array::open`] would assemble it, read from the
/// superblocks without taking the lock or writing anything (so a dirty array is not
/// resynced and no generation is spent). `report` says what assembly would find;
/// its resync counts stay 0 because nothing is resynced. A server holding the array
/// may change it while this reads: ask the server (its control socket) instead.
pub fn inspect(dir: &Path) -> Result<Inspection, ArrayError> {
    let Roles {
        spec,
        layout,
        newest,
        roles,
        corrected,
        report,
        ..
    } = decide_roles(dir)?;
    let failed: Vec<u32> = (0..spec.members)
        .filter(|m| roles[*m as usize] == MemberRole::Failed)
        .collect();
    let rebuilding = roles
        .iter()
        .position(|r| *r == MemberRole::Rebuilding)
        .map(|m| m as u32);
    let rebuild_progress = rebuilding.map(|_| {
        let total = layout.rebuild_units().max(1);
        newest.rebuild_cursor.min(total) as f64 / total as f64
    });
    let state = match (rebuilding, failed.is_empty()) {
        (Some(_), _) => "rebuilding",
        (None, true) => "healthy",
        (None, false) => "degraded",
    };
    let capacity_bytes = layout.capacity(&spec).bytes();
    Ok(Inspection {
        status: ArrayStatus {
            state,
            failed,
            rebuilding,
            rebuild_progress,
            corrected_read_sectors: corrected,
            level: spec.level,
            members: spec.members,
            capacity_bytes,
            generation: newest.generation,
            volume_id: hex(&newest.volume_id),
        },
        clean: newest.clean,
        report,
    })
}

/// [`Array::open`] after the lock is taken.
fn assemble(dir: &Path, lock: DirLock) -> Result<(Array, AssemblyReport), ArrayError> {
    let Roles {
        spec,
        layout,
        newest,
        roles,
        files,
        corrected,
        mut report,
    } = decide_roles(dir)?;
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
    let mut array = Array::assembled(
        dir,
        spec,
        &newest,
        roles,
        superblocks,
        engine,
        layout,
        corrected,
        lock,
    );
    let synced = array.sync_roles();
    array.persist(false, roles_changed || synced)?;
    Ok((array, report))
}

impl Array {
    /// Assembles the array in `dir` (see the crate docs), takes its lock and marks it
    /// in use (dirty).
    pub fn open(dir: &Path) -> Result<(Array, AssemblyReport), ArrayError> {
        let lock = DirLock::take(dir)?;
        assemble(dir, lock)
    }
}
