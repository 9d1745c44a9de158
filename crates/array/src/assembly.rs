//! Assembly of an array from its member files ([`Array::open`], [`read_spec`]): read
//! every superblock, refuse what does not belong together, decide each member's role,
//! resync what the write-intent record says may be torn.

use crate::array::Array;
use crate::discovery::{find_members, hex, spec_of, Found};
use crate::engine::Layout;
use crate::error::ArrayError;
use crate::member::{member_path, open_member_store, DirLock, SuperblockFile};
use crate::superblock::{MemberRole, Superblock};
use crate::update_record::{judge_behind, read_record, Behind, RecordRead, UpdateRecordFile};
use crate::{ArraySpec, ArrayStatus, AssemblyReport, Inspection, MemberNote};
use spinstack_volume::bytes::ResumeRebuild;
use spinstack_volume::map::MemberIndex;
use std::path::Path;

/// The spec of the array in `dir`, from its newest superblock, without assembling it
/// or taking its lock (so it works while the array is served).
pub fn read_spec(dir: &Path) -> Result<ArraySpec, ArrayError> {
    Ok(spec_of(&find_members(dir)?.newest))
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
    /// What `DIR/update.img` said before assembly wrote anything.
    record: RecordRead,
    report: AssemblyReport,
}

/// How assembly treats members behind the newest generation when failing them would
/// lose the array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Behinds {
    /// Accept members exactly one behind unless the update record proves the newest
    /// update finished (then they are old copies: refuse).
    AcceptInterrupted,
    /// Accept every member behind (`volume force-assemble`): the operator takes
    /// their possibly stale data, as md's `--assemble --force` does.
    AcceptAll,
}

/// Reads the superblocks of `dir` and decides each member's role: missing, unusable
/// and stale members are failed, members one generation behind are accepted only when
/// failing them would lose the array; refuses an array that has lost more than it
/// survives, saying why each unusable member file could not be used.
fn decide_roles(dir: &Path, behinds: Behinds) -> Result<Roles, ArrayError> {
    let Found {
        usable,
        unusable,
        odd_names,
        newest,
        newest_file,
    } = find_members(dir)?;
    let spec = spec_of(&newest);
    let layout = Layout::build(&spec).map_err(|_| ArrayError::BadSpec {
        dir: dir.to_path_buf(),
        problem: "cannot rebuild the layout".into(),
    })?;
    let units = layout.rebuild_units();
    if newest.rebuild_cursor > units {
        return Err(ArrayError::Mismatch {
            file: newest_file,
            problem: format!(
                "superblock byte 96: rebuild cursor {} is beyond the array's {units} \
                 rebuild units",
                newest.rebuild_cursor
            ),
        });
    }
    let mut report = AssemblyReport {
        was_clean: newest.clean,
        odd_names: odd_names.iter().map(|p| p.display().to_string()).collect(),
        ..AssemblyReport::default()
    };
    let mut roles = newest.roles.clone();
    let mut files: Vec<Option<(SuperblockFile, u64)>> = (0..spec.members).map(|_| None).collect();
    let mut corrected = vec![0; spec.members as usize];
    let mut other_slots = Vec::new();
    for member in usable {
        let m = member.index as usize;
        corrected[m] = member.block.corrected_read_sectors;
        if let Some(other) = member.other_slot {
            other_slots.push((member.index, member.block.generation, other));
        }
        files[m] = Some((member.file, member.block.generation));
    }
    let mut unusable_errors = Vec::new();
    for member in unusable {
        roles[member.index as usize] = MemberRole::Failed;
        let note = member.error.to_string();
        report.unusable.push(MemberNote {
            member: member.index,
            note: format!("{note}: treated as failed"),
        });
        unusable_errors.push(note);
    }
    let mut behind = Vec::new();
    for m in 0..spec.members {
        let role = roles[m as usize];
        match &files[m as usize] {
            None if report.unusable.iter().any(|u| u.member == m) => {}
            None => {
                report.missing.push(m);
                roles[m as usize] = MemberRole::Failed;
            }
            Some(_) if role == MemberRole::Failed => report.recorded_failed.push(m),
            Some((_, generation))
                if *generation + 1 < newest.generation && behinds == Behinds::AcceptInterrupted =>
            {
                report.stale.push(m);
                roles[m as usize] = MemberRole::Failed;
            }
            Some((_, generation)) if *generation < newest.generation => behind.push(m),
            Some(_) => {}
        }
    }
    let lost = |roles: &[MemberRole], extra: &[u32]| -> Vec<u32> {
        (0..spec.members)
            .filter(|m| roles[*m as usize] != MemberRole::Active || extra.contains(m))
            .collect()
    };
    let record = read_record(dir);
    if layout.survives(&lost(&roles, &behind)) {
        for &m in &behind {
            roles[m as usize] = MemberRole::Failed;
            report.stale.push(m);
        }
        report.stale.sort_unstable();
    } else if !behind.is_empty() {
        let why = why_accept_behind(dir, behinds, &record, &newest, &spec, &behind)?;
        report.accepted_behind = behind;
        report.accepted_behind_why = Some(why);
    }
    report.unreadable_slots = slot_notes(dir, &newest, &report, other_slots);
    let lost_now = lost(&roles, &[]);
    if !layout.survives(&lost_now) {
        return Err(ArrayError::TooManyLost {
            dir: dir.to_path_buf(),
            level: spec.level.name(),
            lost: lost_now,
            unusable: unusable_errors,
            stale: report.stale.clone(),
        });
    }
    Ok(Roles {
        spec,
        layout,
        newest,
        roles,
        files,
        corrected,
        record,
        report,
    })
}

/// Why members `behind` the newest superblock, which the array cannot start
/// without, may be accepted (a sentence for the report); or the refusal when the
/// update record proves them old copies of their files (finding V4).
fn why_accept_behind(
    dir: &Path,
    behinds: Behinds,
    record: &RecordRead,
    newest: &Superblock,
    spec: &ArraySpec,
    behind: &[u32],
) -> Result<String, ArrayError> {
    Ok(
        match (
            behinds,
            judge_behind(record, newest.volume_id, newest.generation),
        ) {
            (Behinds::AcceptAll, _) => format!(
                "members {behind:?} accepted by a forced assembly: their data may be older \
                 than the rest of the array"
            ),
            (_, Behind::Interrupted) => format!(
                "members {behind:?} accepted one update behind: update {} was interrupted \
                 (the update record says it started and did not finish)",
                newest.generation
            ),
            (_, Behind::CannotTell(why)) => format!(
                "members {behind:?} accepted one update behind as the victims of an \
                 interrupted update, which the update record cannot confirm: {why}"
            ),
            (_, Behind::UpdateFinished) => {
                return Err(ArrayError::OldCopies {
                    dir: dir.to_path_buf(),
                    members: behind.to_vec(),
                    behind_generation: newest.generation - 1,
                    newest_generation: newest.generation,
                    level: spec.level.name(),
                })
            }
        },
    )
}

/// A note for each member behind the array (stale, or accepted one behind) that read
/// its superblock from one slot because the other does not decode: that other slot
/// may have held the newer update, so "stale" alone would hide the damage.
fn slot_notes(
    dir: &Path,
    newest: &Superblock,
    report: &AssemblyReport,
    other_slots: Vec<(u32, u64, crate::superblock::OtherSlot)>,
) -> Vec<MemberNote> {
    other_slots
        .into_iter()
        .filter_map(|(member, generation, other)| {
            let outcome = if report.stale.contains(&member) {
                "treated as failed (stale)"
            } else if report.accepted_behind.contains(&member) {
                "accepted one update behind"
            } else {
                return None;
            };
            Some(MemberNote {
                member,
                note: format!(
                    "{}: superblock slot {} is unreadable ({}); slot {} holds generation \
                     {generation}, behind the array's {}: {outcome}",
                    member_path(dir, member).display(),
                    other.slot,
                    other.problem,
                    1 - other.slot,
                    newest.generation,
                ),
            })
        })
        .collect()
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
    } = decide_roles(dir, Behinds::AcceptInterrupted)?;
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
            disks: crate::member_disks(&spec),
            capacity_bytes,
            generation: newest.generation,
            volume_id: hex(&newest.volume_id),
        },
        clean: newest.clean,
        report,
    })
}

/// [`Array::open`] after the lock is taken.
fn assemble(
    dir: &Path,
    lock: DirLock,
    behinds: Behinds,
) -> Result<(Array, AssemblyReport), ArrayError> {
    let Roles {
        spec,
        layout,
        newest,
        roles,
        files,
        corrected,
        record,
        mut report,
    } = decide_roles(dir, behinds)?;
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
    let update_record = UpdateRecordFile::open(
        dir,
        newest.volume_id,
        UpdateRecordFile::known_finished(&record, newest.volume_id),
    )?;
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
        update_record,
        lock,
    );
    let synced = array.sync_roles();
    array.persist(false, roles_changed || synced)?;
    report.set_aside = set_aside(dir, &report.unusable, array.generation);
    Ok((array, report))
}

/// Moves each unusable member file aside, now that the superblocks record it failed:
/// `member-N.img` becomes `member-N.img.damaged-G` (`G` the generation that recorded
/// it), so `volume rebuild` writes a fresh file (which it could not over a directory)
/// without destroying whatever the damaged one still holds.
fn set_aside(dir: &Path, unusable: &[MemberNote], generation: u64) -> Vec<MemberNote> {
    unusable
        .iter()
        .map(|u| {
            let from = member_path(dir, u.member);
            let to = dir.join(format!("member-{}.img.damaged-{generation}", u.member));
            let note = if to.symlink_metadata().is_ok() {
                format!(
                    "{}: not moved aside: {} already exists",
                    from.display(),
                    to.display()
                )
            } else {
                match std::fs::rename(&from, &to) {
                    Ok(()) => format!(
                        "{}: moved aside to {} (kept, not deleted); `volume rebuild \
                         --member {}` writes a fresh file",
                        from.display(),
                        to.display(),
                        u.member
                    ),
                    Err(error) => format!("{}: not moved aside: {error}", from.display()),
                }
            };
            MemberNote {
                member: u.member,
                note,
            }
        })
        .collect()
}

impl Array {
    /// Assembles the array in `dir` (see the crate docs), takes its lock and marks it
    /// in use (dirty).
    pub fn open(dir: &Path) -> Result<(Array, AssemblyReport), ArrayError> {
        crate::discovery::check_array_dir(dir)?;
        let lock = DirLock::take(dir)?;
        assemble(dir, lock, Behinds::AcceptInterrupted)
    }

    /// [`Array::open`] that also accepts members behind the newest generation (any
    /// number of generations, old copies included) when the array cannot start
    /// without them, as md's `--assemble --force` does: the operator takes their
    /// possibly stale data rather than losing the array. Members the array survives
    /// without are still failed. The report says which were accepted and why.
    pub fn open_forced(dir: &Path) -> Result<(Array, AssemblyReport), ArrayError> {
        crate::discovery::check_array_dir(dir)?;
        let lock = DirLock::take(dir)?;
        assemble(dir, lock, Behinds::AcceptAll)
    }
}
