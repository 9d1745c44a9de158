//! A track-aligned RAID-5's track boundaries in its own (volume) LBN space: what a
//! file system above it reads instead of a drive's track map (validation paper §3:
//! "the chunk unit set to the size of a track", and §2.4's allocator and read-ahead
//! that work in tracks).
//!
//! Two maps, both [`TrackMap`]s over `[0, capacity)`, for the two granularities a
//! file system can fetch in:
//!
//! - [`logical_track_map`]: one logical *track* per data unit, in volume order
//!   (stripe 0's data units 0, 1, ..., then stripe 1's, ...). A data unit is the used
//!   part of one member track, so a request that ends inside a unit ends inside a
//!   member track. An allocator whose file system fetches one unit at a time
//!   excludes the blocks crossing these boundaries (the bad-block list `mke2fs -l`
//!   takes); the persistent array's map (`spinstack_array::tracks`) is this one.
//! - [`logical_stripe_map`]: one *track* per stripe (the members' track `s`). A fetch
//!   of one whole stripe gives every data member its whole track `s` at once (and the
//!   parity member its track by fill-in), which is the paper's RAID-5 prefetch window:
//!   "prefetching one track from each non-parity disk involves a prefetching window
//!   that is the size of a track multiplied by the number of disks that do not contain
//!   the parity information". A file system that fetches whole stripes (the lab's
//!   `raid5-bonnie` and `raid5-diff`) gives this map to both its allocator and its
//!   read-ahead: a block crossing a data-unit boundary inside a stripe is read whole
//!   by the stripe's fetch, so excluding it would only cut the file (and each fetch)
//!   at every member track, and a read-ahead of one unit would keep one data member of
//!   four busy.
//!
//! **Invariants** (checked in `tests/map/logical_tracks.rs` against a reference that
//! walks every volume LBN through `locate` and the members' own track sizes):
//! 1. each map's tracks tile `[0, capacity)` in LBN order, none empty;
//! 2. logical track `k` is data unit `k % (members - 1)` of stripe `k / (members - 1)`
//!    and is exactly `unit.used` long; all its sectors lie on that unit's member,
//!    contiguously, inside that member's track `stripe`;
//! 3. logical stripe `s` starts at `stripe_start(s)` and holds `stripe_data_sectors(s)`;
//!    every stripe boundary is a logical-track boundary (logical track
//!    `s * (members - 1)` starts there), so whole blocks of the track map are whole
//!    blocks of the stripe map.
//!
//! md's RAID-5 (and RAID-0/10) chunks ignore tracks, so those levels have no such map.

use super::{MapError, ParityLayout, TrackAlignedLayout};
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_trackmap::{Track, TrackMap};

/// The method named in the maps' header.
pub const LOGICAL_MAP_METHOD: &str = "track-aligned RAID-5 layout";

/// One logical track per data unit (see the module documentation). `volume` names
/// the map (as a drive's name names a drive's).
pub fn logical_track_map(layout: &TrackAlignedLayout, volume: &str) -> Result<TrackMap, MapError> {
    let data_members = layout.members() - 1;
    let mut sizes = Vec::with_capacity(layout.stripes() as usize * data_members as usize);
    for stripe in 0..layout.stripes() {
        for data_index in 0..data_members {
            let member = layout.data_member(stripe, data_index);
            sizes.push(layout.unit(stripe, member).used);
        }
    }
    tiled(
        volume,
        "logical tracks (data units)",
        layout.capacity(),
        sizes,
    )
}

/// One logical track per stripe (see the module documentation).
pub fn logical_stripe_map(layout: &TrackAlignedLayout, volume: &str) -> Result<TrackMap, MapError> {
    let sizes = (0..layout.stripes()).map(|stripe| layout.stripe_data_sectors(stripe));
    tiled(
        volume,
        "logical stripes",
        layout.capacity(),
        sizes.collect(),
    )
}

/// The map of consecutive runs of `sizes` from LBN 0.
fn tiled(
    volume: &str,
    what: &'static str,
    capacity: Sectors,
    sizes: Vec<Sectors>,
) -> Result<TrackMap, MapError> {
    let mut tracks = Vec::with_capacity(sizes.len());
    let mut first = Lbn(0);
    for sectors in sizes {
        tracks.push(Track {
            first,
            sectors,
            location: None,
            uncertain: false,
        });
        first = first.offset(sectors);
    }
    // The layout validated its units (none empty; the stripes' data sums to the
    // capacity), so this only fails if that contract is broken.
    TrackMap::new(volume, LOGICAL_MAP_METHOD, capacity, tracks, Vec::new()).map_err(|error| {
        MapError::LogicalMap {
            what,
            problem: error.to_string(),
        }
    })
}
