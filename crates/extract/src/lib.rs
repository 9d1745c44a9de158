//! # spinstack-extract: track-boundary extraction
//!
//! **What it models.** How a host learns the exact LBN range of every track of a
//! drive that does not say it (traxtents §4.1; Linux validation paper §2.3):
//!
//! * [`probe::Probe`]: the questions a host may ask — READ CAPACITY, READ DEFECT
//!   LIST, SEND/RECEIVE DIAGNOSTIC address translation, the caching mode page, and
//!   timed reads. Two implementations: [`sim_probe::SimulatedProbe`] (a catalog
//!   drive in simulated time, answers from its layout and its timing model, with
//!   optional host jitter) and [`device::DeviceProbe`] (a real block device or
//!   file, read-only: O_DIRECT reads, SG_IO translation where answered);
//!   [`backing`] says which disk a probed file lives on and where (FIEMAP), so a
//!   disk that may not be opened raw can be timed through a file on it.
//! * [`scsi`]: extraction by address translation — the validation paper's
//!   walk/jump algorithm and a zone-aware galloping one in the spirit of DIXtrac.
//! * [`timing`]: extraction from read times alone (traxtents §4.1.1), robust to
//!   jitter, with a stated confidence and a list of uncertain tracks.
//! * [`compare`]: an extracted map against the truth. The map type, its text
//!   format and its queries are `spinstack-trackmap`'s; the true map of a model
//!   is its layout's (`spinstack_disk::layout::Layout::track_map`).
//! * [`export`]: the mke2fs bad-blocks list and the summary.
//! * [`experiments`]: `boundary-test` and `zero-latency-test`.
//! * [`run`]: one extraction of a catalog drive checked against its layout, or of
//!   a real device — what `spinstack extract` prints.
//!
//! **Invariants.** An extracted map tiles `[0, capacity)` in LBN order (a
//! `TrackMap` cannot be built otherwise; an extraction that would not tile fails
//! instead). A track's range is its *home* range, as the layout's boundary
//! query defines it: a remapped LBN belongs to its defective home track and is
//! listed separately with where it lives. Nothing here writes to a device: the
//! real probe opens read-only and refuses to change mode pages. Every simulated
//! run is reproducible from its seed.
//!
//! **What it does not model.** Whole tracks remapped to spare tracks (scheme 1
//! defects) and tracks whose every LBN is remapped: reverse translation finds no
//! data sector on the home track to name the moved LBNs by, so such LBNs are
//! reported on the spare track. Timing-only extraction sees neither cylinders,
//! surfaces nor remapped LBNs, and needs the read cache off. The time the drive
//! spends answering translations is not simulated (only counted).

pub mod backing;
pub mod compare;
pub mod device;
pub mod experiments;
pub mod export;
pub mod probe;
pub mod run;
pub mod scsi;
pub mod sim_probe;
pub mod timing;
