//! # spinstack-trackmap: track maps
//!
//! **What a track map is.** The LBN range of every track of one drive, in LBN
//! order: where each track starts, how many sectors it holds, where it lies
//! (cylinder and surface) when that was observed, and whether its boundaries are
//! certain. Extraction (`spinstack-extract`) produces one; a modelled drive's
//! layout gives its true one (`spinstack_disk::layout::Layout::track_map`); the
//! layers that allocate on track boundaries (the track-aligned RAID volume, the
//! ext2 integration of the Linux validation paper) read one, through this crate
//! alone. A track's range is its *home* range, as the drive's boundary query
//! defines it: an LBN the drive stores elsewhere (a remapped defect) still
//! belongs to its home track, and the map lists it separately with where it
//! lives ([`RemappedLbn`]).
//!
//! **The invariant: tiling.** A [`TrackMap`] always tiles `[0, capacity)`: no
//! empty track, no gap, no overlap, the first track starts at LBN 0 and the last
//! ends exactly at the capacity; every remapped LBN is inside the capacity. The
//! only ways to get one ([`TrackMap::new`], [`TrackMap::parse`],
//! [`TrackMap::read`]) check it and its fields are private, so holding a
//! `TrackMap` proves it tiles. The queries rely on that: they binary-search the
//! track starts (maps have up to ~150,000 tracks) and need no error paths.
//!
//! **The text format**, one track per line (what `spinstack extract --output`
//! writes and the README's "Track-map format" section shows):
//!
//! ```text
//! # spinstack track map, format 1
//! drive atlas10k
//! method scsi-walk-jump
//! capacity 17938986
//! # first_lbn sectors cylinder surface [uncertain]
//! 0 334 0 0
//! 334 334 0 1
//! 9023 330 - - uncertain
//! remapped 4711 12 3 301
//! ```
//!
//! Header lines `drive`, `method`, `capacity` come before the first track, each
//! once (a second one is an error, not an override). `-`
//! marks a cylinder or surface the method could not observe (timing-only
//! extraction). `uncertain` marks a track whose boundaries the method could not
//! decide with the stated confidence. A `remapped LBN CYLINDER SURFACE SECTOR`
//! line records an LBN whose home track is the one covering it but which the
//! drive stores elsewhere. Blank lines and lines starting with `#` are comments;
//! a UTF-8 byte-order mark at the start of the text is skipped. The
//! `# spinstack track map, format N` line may be left out (hand-written maps),
//! but a format other than 1 is an error.
//! The reader rejects anything that does not tile — gaps, overlaps, empty
//! tracks, maps that stop short of or run past the capacity, remapped LBNs past
//! it — and every error names the file and the line ([`MapError`]). The writer's
//! output reads back to an equal map.
//!
//! ```
//! use spinstack_sim::units::{Lbn, Sectors};
//! use spinstack_trackmap::TrackMap;
//!
//! let text = "drive d\nmethod m\ncapacity 30\n0 10 0 0\n10 12 0 1\n22 8 1 0\n";
//! let map = TrackMap::parse(text, "example.map").expect("tiles [0, 30)");
//! assert_eq!(map.track_index_of(Lbn(12)), Some(1));
//! assert_eq!(map.next_boundary_after(Lbn(12)), Some(Lbn(22)));
//! assert_eq!(map.whole_tracks(Lbn(10), Sectors(20)), Some(2));
//! // 4-sector blocks 2 = [8, 12) and 5 = [20, 24) each hold a track boundary.
//! assert_eq!(map.boundary_crossing_blocks(Sectors(4)).collect::<Vec<_>>(), vec![2, 5]);
//! assert_eq!(TrackMap::parse(&map.to_text(), "again.map").unwrap(), map);
//! ```
//!
//! **What it does not do.** It does not find tracks (that is extraction) nor
//! know any drive's geometry beyond what a map says: it translates no LBN to a
//! physical address, and a remapped LBN's home track is simply the one covering
//! it. It does not judge how good a map is (the comparison with the truth lives
//! in `spinstack-extract`); an `uncertain` track is carried and counted, never
//! resolved. It keeps one format version; `drive` and `method` are free text on
//! one line, so runs of spaces in them read back as one.

mod map;
mod text;

pub use map::{RemappedLbn, SectorLocation, TilingError, Track, TrackLocation, TrackMap};
pub use text::MapError;
