//! # spinstack-array: persistent RAID volumes over member files
//!
//! **What it models.** An *array* is a directory `DIR` holding one file per member
//! (`member-0.img`, `member-1.img`, ...), the write-intent record `intent.img`, the
//! superblock update record `update.img` (`update_record`), the lock file `lock`
//! and, while a server runs, `control.sock`. Each member file opens
//! with two superblock slots (like Linux md's superblock: volume id, level, geometry,
//! member roles, generation, checksum; byte format in [`superblock`]) followed by the
//! member's data sectors. [`Array`] assembles the files into one
//! [`BlockStore`](spinstack_store::BlockStore): the optional DMA-aligned buffer over
//! the level's byte volume (`spinstack_volume::bytes`) over the members' data.
//!
//! **Assembly** ([`Array::open`]) reads every member file (named `member-N.img`
//! exactly; a name like `member-02.img` is only warned about, in
//! [`AssemblyReport::odd_names`]). A member file it cannot use (it cannot be opened,
//! is not a regular file, has no readable superblock slot, or is shorter than its
//! superblock says) is treated like a missing member, failed, with a note naming the
//! file and why ([`AssemblyReport::unusable`]), as md kicks a device it cannot use;
//! `open` then moves that file aside (`member-N.img.damaged-G`,
//! [`AssemblyReport::set_aside`]) so a rebuild can write a fresh one. Assembly
//! refuses, naming the file: members of another volume or another geometry than most
//! member files agree on (with no majority, it lists each group), a file whose
//! recorded index is not its name's, a rebuild cursor beyond the rebuild units, and
//! more members missing, unusable or failed than the level survives (saying why each
//! unusable file could not be used). A member whose generation is behind the newest
//! is *stale* (it missed an update, possibly a failure record or writes) and is
//! treated as failed, reported in [`AssemblyReport::stale`]. One exception keeps a
//! crash during a superblock update from killing the array: members exactly one
//! generation behind are accepted when treating them as failed would lose the array,
//! unless the update record (`update.img`, written around every superblock update)
//! says the newest update finished on every member: then they are old copies of
//! their files, and assembly refuses them ([`ArrayError::OldCopies`], finding V4).
//! [`Array::open_forced`] accepts members any number of generations behind when the
//! array cannot start without them (md's `--assemble --force`). Accepted members are
//! reported, with why, in
//! [`AssemblyReport::accepted_behind`]. A member behind because its newer slot does
//! not decode is reported with that slot's problem
//! ([`AssemblyReport::unreadable_slots`]).
//! [`inspect`] decides the same roles from the superblocks without taking the lock or
//! writing anything (`spinstack volume status` at rest): a dirty array is reported
//! dirty, not resynced.
//!
//! **Crash safety.** Every data write of a redundant level is bracketed by the
//! write-intent record (`intent.img`, format in `spinstack_store::intent`): at `open`
//! the regions that may have had writes in flight are resynced (parity recomputed,
//! mirror copies made equal) before anything else, so a scrub finds no mismatch; a
//! write whose flush returned is on the members. Superblock slots alternate by
//! generation, so a torn superblock write leaves the previous one readable. Dirty
//! *and* degraded RAID-5 assembles anyway (md's `start_dirty_degraded`): stripes
//! whose parity could not be verified are listed in
//! [`AssemblyReport::unverified_stripes`].
//!
//! **Member roles** (state machine in [`superblock::MemberRole`]) live in the role
//! table of every superblock; `fail_member`, `start_rebuild` and the end of a
//! rebuild change it (persisted in every member not failed, generation + 1), and so
//! does a member the volume fails by itself (it returned `Failed`, a write or trim
//! error, or a read error that could not be rewritten; see `spinstack_volume::bytes`;
//! a member file found cut short, shorter than its superblock says, answers `Failed`:
//! its lost range is not a bad sector to correct where clients happen to read):
//! that is persisted before the request (read, write, trim, flush), rebuild step or
//! scrub that failed it returns, so no write is acknowledged while a crash could
//! still bring the failed member back as active. The rebuild cursor is persisted at the end of every
//! [`Array::rebuild_step`] (after the rebuilt member is flushed), so an interrupted
//! rebuild resumes there.
//!
//! **Invariants.** No panic on any file contents (the decoder is fuzzed); a refused
//! request changes nothing; at most one process has an array open (`flock` on
//! `DIR/lock`).
//!
//! **What it does not do.** No concurrent access (`&mut self`), no reshape, no
//! hot spares, no automatic rebuild.

mod array;
mod assembly;
pub mod control;
mod discovery;
mod engine;
mod error;
mod maintenance;
mod member;
pub mod superblock;
pub mod tracks;
mod update_record;

pub use array::Array;
pub use assembly::{inspect, read_spec};
pub use engine::{member_disks, DEFAULT_DISK};
pub use error::ArrayError;
pub use member::{intent_path, member_path};
pub use spinstack_volume::config::{BufferSpec, Level, TrackUnits};
pub use spinstack_volume::dab::WritePolicy;
pub use update_record::update_record_path;

use serde::Serialize;
use spinstack_sim::units::{Lbn, Sectors};

/// What an array is made of; recorded in every superblock.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ArraySpec {
    pub level: Level,
    pub members: u32,
    /// Data sectors per member (the file is 16 sectors longer: the superblocks).
    pub member_size: Sectors,
    /// Chunk of raid0 / raid10 / raid5 (default 64 KiB); ignored by other levels.
    pub chunk: Option<Sectors>,
    /// Catalog drive names for the timing model and the track maps: none (the
    /// default drive), one for every member, or one per member.
    pub disks: Vec<String>,
    /// A DMA-aligned buffer over the volume.
    pub buffer: Option<BufferSpec>,
    /// raid5-track-aligned only (default whole-track).
    pub track_units: Option<TrackUnits>,
}

/// What `status()` reports.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ArrayStatus {
    /// "healthy", "degraded", "rebuilding" or "failed".
    pub state: &'static str,
    /// Members out of service (not the one being rebuilt).
    pub failed: Vec<u32>,
    pub rebuilding: Option<u32>,
    /// In `0..=1` while rebuilding.
    pub rebuild_progress: Option<f64>,
    /// Per member, the sectors its file has had rebuilt from the redundancy and
    /// rewritten after read errors, over the file's life (its superblock's count,
    /// plus what this assembly corrected); a count that keeps rising marks a member
    /// worth replacing before it fails.
    pub corrected_read_sectors: Vec<u64>,
    pub level: Level,
    pub members: u32,
    /// The drive each member models (timing and track maps), one per member: the
    /// default drive's name where none was given, a host link where one was
    /// (`atlas10k@80MB/s`).
    pub disks: Vec<String>,
    pub capacity_bytes: u64,
    pub generation: u64,
    /// 32 hex digits.
    pub volume_id: String,
}

/// An array read at rest without assembling it ([`inspect`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Inspection {
    pub status: ArrayStatus,
    /// Whether the array was closed cleanly (an unclean one is resynced at open).
    pub clean: bool,
    /// What assembly would find (its resync counts are 0: nothing was resynced).
    pub report: AssemblyReport,
}

/// A rebuild found in progress at assembly and resumed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResumedRebuild {
    pub member: u32,
    /// Rebuild units already done (stripes for RAID-5, member rows for mirrors).
    pub cursor: u64,
}

/// A member assembly has something to say about, in plain words naming its file.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MemberNote {
    pub member: u32,
    pub note: String,
}

/// What assembly found and did.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct AssemblyReport {
    /// Member files absent from the directory.
    pub missing: Vec<u32>,
    /// Member files present but unusable (cannot be opened, not a regular file, no
    /// readable superblock slot, shorter than the superblock says), treated as failed
    /// like missing ones; each note names the file and why.
    pub unusable: Vec<MemberNote>,
    /// Unusable member files [`Array::open`] moved aside (renamed
    /// `member-N.img.damaged-G`, G the generation that recorded them failed), so a
    /// rebuild writes a fresh file without destroying the old one; or why it could not.
    pub set_aside: Vec<MemberNote>,
    /// Members behind the array whose other superblock slot is unreadable (its newest
    /// update may be the one lost), with that slot's problem.
    pub unreadable_slots: Vec<MemberNote>,
    /// Files named like a member but not `member-N.img` with N in plain decimal
    /// (`member-02.img`): never read as members.
    pub odd_names: Vec<String>,
    /// Members behind the newest generation, now treated as failed.
    pub stale: Vec<u32>,
    /// Members behind accepted as current because the array cannot start without
    /// them: one generation behind after an interrupted update, or any, forced.
    pub accepted_behind: Vec<u32>,
    /// Which members behind were accepted and why (what the update record said, or
    /// that assembly was forced), as a sentence.
    pub accepted_behind_why: Option<String>,
    /// Members every superblock already recorded as failed.
    pub recorded_failed: Vec<u32>,
    /// Whether the array had been closed cleanly.
    pub was_clean: bool,
    /// Write-intent regions found dirty and resynced.
    pub dirty_regions: u64,
    /// Stripes (RAID-5) or chunks (mirrors) rewritten by the resync.
    pub units_resynced: u64,
    /// Dirty stripes of a degraded RAID-5 whose parity could not be verified.
    pub unverified_stripes: Vec<u64>,
    pub resumed_rebuild: Option<ResumedRebuild>,
}

/// What one `rebuild_step` did.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RebuildStep {
    /// True once no rebuild is in progress (finished, or none was running).
    pub done: bool,
    /// Rebuild units done by this step.
    pub units: u64,
    /// In `0..=1`; 1 when done.
    pub progress: f64,
    /// The volume ranges whose reads, with the member being rebuilt failed, read from
    /// the other members what this step read (coalesced): how a timing model, which
    /// has no rebuild traffic of its own, is given the step's load.
    pub read_ranges: Vec<(Lbn, Sectors)>,
}

/// What a scrub found.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ScrubReport {
    /// Stripes (RAID-5) or units (mirrors) whose parity or copies disagreed.
    pub mismatches: u64,
    /// Of those, rewritten (with `repair`).
    pub repaired: u64,
    /// Sectors a member could not read during the scrub, rebuilt from the redundancy,
    /// rewritten and read back (with or without `repair`).
    pub corrected_read_sectors: u64,
    pub checked: u64,
    /// Not comparable: a member holding them is out.
    pub skipped: u64,
    /// The first mismatching stripes, ascending (at most 1000).
    pub mismatched_stripes: Vec<u64>,
}
