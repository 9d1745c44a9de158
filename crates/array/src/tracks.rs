//! The logical track map of an array: where the volume's own address space is cut
//! by track boundaries of the drives below, for file systems that allocate around
//! them (the bad-block list `mke2fs -l` takes; validation paper §2.4).
//!
//! - `single`: the drive's tracks, truncated to the member as the layout is (the
//!   sectors after the last whole track form one short final unit).
//! - `raid5-track-aligned`: each stripe's data units in logical order; each is (the
//!   used part of) one whole track of its member, so a block crossing a unit boundary
//!   would cost two member tracks (`spinstack_volume::map::logical_track_map`, which
//!   also gives the coarser map of whole stripes).
//! - other levels: no track-sized units (their chunks ignore tracks), so there is no
//!   such map; asking for one is an error saying so.

use crate::engine::Layout;
use crate::{ArrayError, ArraySpec, Level};
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_trackmap::{Track, TrackMap};
use std::path::Path;

/// The logical track map of the array `spec` describes (the array in `dir`, named
/// in errors).
pub fn logical_track_map(dir: &Path, spec: &ArraySpec) -> Result<TrackMap, ArrayError> {
    let bad = |problem: String| ArrayError::BadSpec {
        dir: dir.to_path_buf(),
        problem,
    };
    let (sizes, capacity): (Vec<Sectors>, Sectors) = match spec.level {
        Level::Single => {
            let name = crate::member_disks(spec).remove(0);
            let tracks =
                crate::engine::truncated_tracks(&name, spec.member_size).map_err(|problem| {
                    ArrayError::Disk {
                        dir: dir.to_path_buf(),
                        name,
                        problem,
                    }
                })?;
            (tracks, spec.member_size)
        }
        Level::Raid5TrackAligned => match Layout::build(spec) {
            // The volume crate's pure map (property-tested against a reference).
            Ok(Layout::TrackAligned(layout)) => {
                let name = format!("{} array in {}", spec.level.name(), dir.display());
                return spinstack_volume::map::logical_track_map(&layout, &name)
                    .map_err(|error| bad(format!("logical track map: {error}")));
            }
            Ok(_) => {
                return Err(bad(
                    "this track-aligned array uses largest-track chunks, which do not follow \
                     tracks: it has no logical track map"
                        .into(),
                ))
            }
            Err(error) => return Err(crate::array::layout_error(dir, error)),
        },
        other => {
            return Err(bad(format!(
                "{} chunks ignore track boundaries, so the volume has no logical track map \
                 (use single or raid5-track-aligned)",
                other.name()
            )))
        }
    };
    let mut tracks = Vec::with_capacity(sizes.len() + 1);
    let mut first = Lbn(0);
    for sectors in sizes.into_iter().filter(|s| s.0 > 0) {
        tracks.push(Track {
            first,
            sectors,
            location: None,
            uncertain: false,
        });
        first = first.offset(sectors);
    }
    if first.0 < capacity.0 {
        tracks.push(Track {
            first,
            sectors: Sectors(capacity.0 - first.0),
            location: None,
            uncertain: false,
        });
    }
    TrackMap::new(
        format!("{} array in {}", spec.level.name(), dir.display()),
        "array layout",
        capacity,
        tracks,
        Vec::new(),
    )
    .map_err(|error| bad(format!("logical track map: {error}")))
}
