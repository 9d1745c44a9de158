//! What assembly finds in an array's directory before it decides any role: the member
//! files (named `member-N.img` exactly), which of them it can use and why not the
//! others, which volume the directory holds, and the newest superblock.
//!
//! A member file that cannot be used (it cannot be opened, it is not a regular file,
//! neither superblock slot decodes, or it is shorter than its superblock says) is not
//! an error here: assembly treats it like a missing member when the level survives
//! without it, as md kicks a device whose superblock it cannot use. Files that do not
//! belong together (another volume, a renamed member, another geometry) are refused:
//! they are a mix-up to sort out, not damage.

use crate::error::ArrayError;
use crate::member::{member_path, SuperblockFile};
use crate::superblock::{OtherSlot, Superblock, DATA_OFFSET_SECTORS};
use crate::ArraySpec;
use spinstack_sim::units::SECTOR_BYTES;
use std::path::{Path, PathBuf};

/// A member file assembly can use.
pub(crate) struct Usable {
    pub index: u32,
    pub file: SuperblockFile,
    pub block: Superblock,
    /// The other slot's problem, when only one slot decodes.
    pub other_slot: Option<OtherSlot>,
}

/// A member file assembly cannot use, and why (the error names the file).
pub(crate) struct Unusable {
    pub index: u32,
    pub error: ArrayError,
}

/// Everything [`find_members`] found.
pub(crate) struct Found {
    /// By index, ascending; all of one volume and one geometry.
    pub usable: Vec<Usable>,
    /// By index, ascending.
    pub unusable: Vec<Unusable>,
    /// Files named like members but not `member-N.img` with N in plain decimal.
    pub odd_names: Vec<PathBuf>,
    /// The newest superblock of the usable members.
    pub newest: Superblock,
    /// The file it was read from.
    pub newest_file: PathBuf,
}

/// What a directory entry's name says about it.
enum Name {
    Member(u32),
    /// `member-*.img` whose middle is not a canonical index (`member-02.img`,
    /// `member-+2.img`): likely a copy someone made, never read as a member.
    LooksLikeMember,
    Other,
}

fn parse_name(name: &str) -> Name {
    let Some(middle) = name
        .strip_prefix("member-")
        .and_then(|rest| rest.strip_suffix(".img"))
    else {
        return Name::Other;
    };
    // Exactly the form `member_path` writes: digits, no sign, no leading zero.
    let canonical = !middle.is_empty()
        && middle.bytes().all(|b| b.is_ascii_digit())
        && (middle == "0" || !middle.starts_with('0'));
    match middle.parse::<u32>() {
        Ok(index) if canonical => Name::Member(index),
        _ => Name::LooksLikeMember,
    }
}

/// Member files by index, ascending.
pub(crate) type MemberFiles = Vec<(u32, PathBuf)>;

/// Member files present in `dir` by index, and the names that only look like one.
/// Refuses, before anything is written there (not even the lock file), a `dir` that
/// is not a directory holding at least one member file.
pub(crate) fn check_array_dir(dir: &Path) -> Result<(), ArrayError> {
    match std::fs::metadata(dir) {
        Ok(metadata) if metadata.is_dir() => {}
        Ok(_) => {
            return Err(ArrayError::NotADirectory {
                dir: dir.to_path_buf(),
                problem: "it is not a directory".into(),
            })
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Err(ArrayError::NotADirectory {
                dir: dir.to_path_buf(),
                problem: "the directory does not exist".into(),
            })
        }
        Err(error) => return Err(ArrayError::io(dir)(error)),
    }
    if member_files(dir)?.0.is_empty() {
        return Err(ArrayError::NotAnArray {
            dir: dir.to_path_buf(),
            file: member_path(dir, 0),
        });
    }
    Ok(())
}

pub(crate) fn member_files(dir: &Path) -> Result<(MemberFiles, Vec<PathBuf>), ArrayError> {
    let mut found = Vec::new();
    let mut odd = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(ArrayError::io(dir))? {
        let entry = entry.map_err(ArrayError::io(dir))?;
        let name = entry.file_name();
        match name.to_str().map_or(Name::Other, parse_name) {
            Name::Member(index) => found.push((index, entry.path())),
            Name::LooksLikeMember => odd.push(entry.path()),
            Name::Other => {}
        }
    }
    found.sort();
    odd.sort();
    Ok((found, odd))
}

fn mismatch(file: &Path, problem: String) -> ArrayError {
    ArrayError::Mismatch {
        file: file.to_path_buf(),
        problem,
    }
}

pub(crate) fn hex(id: &[u8; 16]) -> String {
    id.iter().map(|b| format!("{b:02x}")).collect()
}

/// File names, for messages: `member-0.img, member-1.img`.
fn names<'a>(paths: impl IntoIterator<Item = &'a Path>) -> String {
    paths
        .into_iter()
        .map(|p| p.file_name().unwrap_or(p.as_os_str()).to_string_lossy())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The length check of a usable member: a file shorter than the geometry says has
/// lost the range past its end.
fn check_length(member: &Usable, newest: &Superblock) -> Result<(), ArrayError> {
    let needed = newest.member_size.0 + DATA_OFFSET_SECTORS;
    let held = member.file.len_bytes()? / SECTOR_BYTES;
    if held < needed {
        return Err(mismatch(
            &member.file.path,
            format!("file holds {held} sectors but its superblock says {needed} (truncated?)"),
        ));
    }
    Ok(())
}

/// Reads every member file of `dir`; see the module doc for what is refused.
pub(crate) fn find_members(dir: &Path) -> Result<Found, ArrayError> {
    check_array_dir(dir)?;
    let (files, odd_names) = member_files(dir)?;
    let mut usable = Vec::new();
    let mut unusable = Vec::new();
    for (index, path) in files {
        let read = SuperblockFile::open(&path)
            .and_then(|file| file.read_with_other_slot().map(|read| (file, read)));
        match read {
            Ok((file, (block, other_slot))) => usable.push(Usable {
                index,
                file,
                block,
                other_slot,
            }),
            Err(error) => unusable.push(Unusable { index, error }),
        }
    }
    if usable.is_empty() {
        return Err(match unusable.into_iter().next() {
            Some(first) => first.error,
            None => ArrayError::NotAnArray {
                dir: dir.to_path_buf(),
                file: member_path(dir, 0),
            },
        });
    }
    check_agreement(
        dir,
        &usable,
        "volume",
        |m| m.block.volume_id,
        |id| format!("volume {}", hex(id)),
    )?;
    check_agreement(
        dir,
        &usable,
        "geometry",
        |m| spec_of(&m.block),
        |_| "one geometry".to_string(),
    )?;
    let newest = usable
        .iter()
        .max_by_key(|m| m.block.generation)
        .map(|m| (m.block.clone(), m.file.path.clone()))
        .expect("at least one usable member");
    let (newest, newest_file) = newest;
    for member in &usable {
        let path = &member.file.path;
        if member.block.index != member.index {
            return Err(mismatch(
                path,
                format!(
                    "its superblock says it is member {}, not {} (files renamed or copied?)",
                    member.block.index, member.index
                ),
            ));
        }
        if member.index >= newest.members {
            return Err(mismatch(
                path,
                format!(
                    "member {} of an array of {} members",
                    member.index, newest.members
                ),
            ));
        }
    }
    let mut kept = Vec::new();
    for member in usable {
        match check_length(&member, &newest) {
            Ok(()) => kept.push(member),
            Err(error) => unusable.push(Unusable {
                index: member.index,
                error,
            }),
        }
    }
    unusable.sort_by_key(|m| m.index);
    Ok(Found {
        usable: kept,
        unusable,
        odd_names,
        newest,
        newest_file,
    })
}

/// The member files grouped by `key`, largest group first (among equal sizes, the
/// one holding the lowest index first).
fn groups<K: PartialEq>(usable: &[Usable], key: impl Fn(&Usable) -> K) -> Vec<(K, Vec<&Usable>)> {
    let mut groups: Vec<(K, Vec<&Usable>)> = Vec::new();
    for member in usable {
        let k = key(member);
        match groups.iter_mut().find(|(other, _)| *other == k) {
            Some((_, members)) => members.push(member),
            None => groups.push((k, vec![member])),
        }
    }
    groups.sort_by_key(|(_, members)| std::cmp::Reverse(members.len()));
    groups
}

fn paths_of<'a>(members: &'a [&'a Usable]) -> impl Iterator<Item = &'a Path> + 'a {
    members.iter().map(|m| m.file.path.as_path())
}

/// The member files must agree on `key` (the volume id, the geometry): what most of
/// them say is the array's, and the others are refused by name, not the majority
/// (as an error that blamed a good member once did: finding V6). With no majority,
/// the directory is refused, listing each group.
fn check_agreement<K: PartialEq>(
    dir: &Path,
    usable: &[Usable],
    what: &str,
    key: impl Fn(&Usable) -> K,
    describe: impl Fn(&K) -> String,
) -> Result<(), ArrayError> {
    let groups = groups(usable, key);
    if groups.len() == 1 {
        return Ok(());
    }
    if groups[0].1.len() == groups[1].1.len() {
        let listed: Vec<String> = groups
            .iter()
            .map(|(k, members)| format!("{}: {}", names(paths_of(members)), describe(k)))
            .collect();
        return Err(ArrayError::Refused {
            dir: dir.to_path_buf(),
            operation: "assemble",
            why: format!(
                "its member files disagree on the {what}, and no {what} has a majority \
                 ({}); move the files that do not belong away",
                listed.join("; ")
            ),
        });
    }
    let majority = &groups[0].1;
    let odd: Vec<&Usable> = groups[1..]
        .iter()
        .flat_map(|(_, m)| m.iter().copied())
        .collect();
    let first = odd[0];
    let others = match odd.len() {
        1 => String::new(),
        _ => format!(
            " (so do {})",
            names(odd[1..].iter().map(|m| m.file.path.as_path()))
        ),
    };
    let majority_names = names(paths_of(majority));
    let problem = match what {
        "volume" => format!(
            "belongs to volume {}, but {majority_names} belong to volume {}: a file of \
             another array{others}",
            hex(&first.block.volume_id),
            hex(&majority[0].block.volume_id),
        ),
        _ => format!(
            "its geometry differs from that of {majority_names}{others}: {}",
            spec_differences(&spec_of(&first.block), &spec_of(&majority[0].block)).join("; ")
        ),
    };
    Err(mismatch(&first.file.path, problem))
}

/// The spec a superblock records.
pub(crate) fn spec_of(block: &Superblock) -> ArraySpec {
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

/// Disk names for a message, shortened: a long list says little more.
fn disks_text(disks: &[String]) -> String {
    if disks.is_empty() {
        return "the default drive".into();
    }
    let text = disks.join(", ");
    match text.char_indices().nth(60) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text,
    }
}

/// Each field where `spec` differs from `newest`, in words: "member size 40000
/// sectors, not 32768".
fn spec_differences(spec: &ArraySpec, newest: &ArraySpec) -> Vec<String> {
    let sectors = |s: Option<spinstack_sim::units::Sectors>| {
        s.map_or("none".to_string(), |s| format!("{} sectors", s.0))
    };
    let buffer = |b: Option<crate::BufferSpec>| {
        b.map_or("none".to_string(), |b| {
            let policy = match b.policy {
                crate::WritePolicy::WriteBack => "write-back",
                crate::WritePolicy::WriteThrough => "write-through",
            };
            format!("{} blocks of {} sectors, {policy}", b.blocks, b.block.0)
        })
    };
    let units = |u: Option<crate::TrackUnits>| match u {
        None => "none",
        Some(crate::TrackUnits::WholeTrack) => "whole-track",
        Some(crate::TrackUnits::SmallestTrack) => "smallest-track",
        Some(crate::TrackUnits::LargestTrack) => "largest-track",
    };
    let fields = [
        (
            "level",
            spec.level.name().into(),
            newest.level.name().into(),
        ),
        (
            "members",
            spec.members.to_string(),
            newest.members.to_string(),
        ),
        (
            "member size",
            format!("{} sectors", spec.member_size.0),
            format!("{} sectors", newest.member_size.0),
        ),
        ("chunk", sectors(spec.chunk), sectors(newest.chunk)),
        ("disks", disks_text(&spec.disks), disks_text(&newest.disks)),
        ("buffer", buffer(spec.buffer), buffer(newest.buffer)),
        (
            "track units",
            units(spec.track_units).into(),
            units(newest.track_units).into(),
        ),
    ];
    fields
        .into_iter()
        .filter(|(_, this, other): &(&str, String, String)| this != other)
        .map(|(field, this, other)| format!("{field} {this}, not {other}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    // Guards finding V7e (2026-11-28): `member-02.img` and `member-+2.img` were read
    // as member 2 (`u32::parse`), so a copy beside `member-2.img` could stand in for
    // it. Proves only the canonical name is a member and the others are set apart to
    // be warned about.
    #[test]
    fn only_canonical_member_names_are_members() {
        for (name, index) in [
            ("member-0.img", 0),
            ("member-2.img", 2),
            ("member-63.img", 63),
        ] {
            assert!(
                matches!(parse_name(name), Name::Member(i) if i == index),
                "{name}"
            );
        }
        for name in [
            "member-02.img",
            "member-+2.img",
            "member--2.img",
            "member-.img",
            "member-00.img",
            "member- 2.img",
            "member-99999999999.img",
        ] {
            assert!(matches!(parse_name(name), Name::LooksLikeMember), "{name}");
        }
        for name in [
            "member-2.img.new",
            "member-2.img.damaged-7",
            "intent.img",
            "lock",
        ] {
            assert!(matches!(parse_name(name), Name::Other), "{name}");
        }
    }
}
