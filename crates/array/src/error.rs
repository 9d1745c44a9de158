//! [`ArrayError`]: every way creating, assembling or maintaining an array can fail,
//! each naming the directory or member file and the problem.

use crate::superblock::SuperblockError;
use spinstack_store::StoreError;
use spinstack_volume::bytes::VolumeError;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ArrayError {
    #[error("{}: {problem}", dir.display())]
    BadSpec { dir: PathBuf, problem: String },
    #[error("{}: already holds an array ({} exists); refusing to overwrite it", dir.display(), file.display())]
    AlreadyExists { dir: PathBuf, file: PathBuf },
    #[error("{}: no array here ({} is missing)", dir.display(), file.display())]
    NotAnArray { dir: PathBuf, file: PathBuf },
    #[error("{}: no array here: {problem}", dir.display())]
    NotADirectory { dir: PathBuf, problem: String },
    #[error("{}: the array is in use (locked; served by pid {pid}?)", dir.display())]
    Locked { dir: PathBuf, pid: String },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {source}", path.display())]
    Store { path: PathBuf, source: StoreError },
    #[error("{}: unreadable superblock (slot 0: {slot0}; slot 1: {slot1})", file.display())]
    BadSuperblock {
        file: PathBuf,
        slot0: SuperblockError,
        slot1: SuperblockError,
    },
    #[error("{}: {problem}", file.display())]
    Mismatch { file: PathBuf, problem: String },
    #[error(
        "{}: cannot assemble: members {lost:?} are missing, stale, failed or unusable, \
         more than a {level} survives{}{}",
        dir.display(),
        if unusable.is_empty() { String::new() } else { format!(" ({})", unusable.join("; ")) },
        if stale.is_empty() {
            String::new()
        } else {
            format!(
                "; members {stale:?} are behind the others (old copies put back, or \
                 updates they missed): `spinstack volume force-assemble {}` accepts \
                 their possibly stale data",
                dir.display()
            )
        }
    )]
    TooManyLost {
        dir: PathBuf,
        level: &'static str,
        lost: Vec<u32>,
        /// Why each unusable member file could not be used (each names its file).
        unusable: Vec<String>,
        /// The lost members that are only behind (a forced assembly would take them).
        stale: Vec<u32>,
    },
    #[error(
        "{}: cannot assemble: members {members:?} are at generation {behind_generation}, one \
         behind the others' {newest_generation}, but the update record (update.img) says \
         update {newest_generation} finished on every member: these files are older copies \
         (put back from a backup?), not members a crash interrupted, and the {level} cannot \
         start without them. Put the current files back, or accept their stale data with \
         `spinstack volume force-assemble {}`",
        dir.display(),
        dir.display()
    )]
    OldCopies {
        dir: PathBuf,
        members: Vec<u32>,
        behind_generation: u64,
        newest_generation: u64,
        level: &'static str,
    },
    #[error("{}: {source}", dir.display())]
    Volume { dir: PathBuf, source: VolumeError },
    #[error("{}: data path: {source}", dir.display())]
    DataPath { dir: PathBuf, source: StoreError },
    #[error("{}: member {member} does not exist (the array has {members})", dir.display())]
    NoSuchMember {
        dir: PathBuf,
        member: u32,
        members: u32,
    },
    #[error("{}: cannot {operation}: {why}", dir.display())]
    Refused {
        dir: PathBuf,
        operation: &'static str,
        why: String,
    },
    #[error("{}: drive {name:?}: {problem}", dir.display())]
    Disk {
        dir: PathBuf,
        name: String,
        problem: String,
    },
    #[error("{}: control socket: {problem}", socket.display())]
    Control { socket: PathBuf, problem: String },
}

impl ArrayError {
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> ArrayError {
        let path = path.into();
        move |source| ArrayError::Io { path, source }
    }
}
