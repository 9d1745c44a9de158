//! # spinstack-disk: the drive model
//!
//! **What it models.** One rotating disk drive, as DiskSim 4.0 models the drives of
//! its validation suite: the layout (zones, skews, surface order, sparing with slips
//! and remapped defects; also serpentine numbering with per-surface track sizes),
//! the mechanics (extracted or equation seek curves, head switch, write settle,
//! rotation), the firmware (overheads, segmented cache with read-ahead, write-back,
//! zero-latency access, host-link transfer, a command queue; flush, trim and
//! force-unit-access writes) and power: an idle timer, several standby levels each
//! with its own power and transition time and energy, spin-up as its own part of a
//! request's time, and energy accounting per state (`drive::power`). It also
//! imports DiskSim parameter files and carries a built-in catalog of drives in its
//! own TOML format, names a drive with the host link it is attached through
//! (`atlas10k@80MB/s`, [`host_link`]), and gives each layout's true track map
//! (`Layout::track_map`).
//!
//! **Invariants.** Mapping is pure and separate from timing: [`layout::Layout`]
//! answers LBN↔PBN and track-boundary queries with no notion of time. Simulated time
//! is integer nanoseconds at the crate boundary (picoseconds inside the mechanics so
//! that rotation matches DiskSim's integer arithmetic). A spec read from a file has
//! every time finite, within ±10^7 ms and non-negative except the write settle
//! ([`spec_check`]), so no time arithmetic can overflow or run backwards.
//!
//! **What it does not model.** Thermal recalibration, error recovery and retries,
//! the layout_g2/g4 models, MEMS devices, and RPM variation (DiskSim ignores it too).

pub mod layout;
pub mod spec;
pub mod spec_check;

pub use spec::DriveSpec;
pub mod catalog;
pub mod drive;
pub mod host_link;
pub mod import;
pub mod validate;
