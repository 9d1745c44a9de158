//! The true track map of a modelled drive, straight from its layout: the yardstick
//! every extraction is checked against.

use crate::map::{MappedTrack, RemappedLbn, TrackMap};
use spinstack_disk::layout::Layout;
use spinstack_disk::spec::LayoutSpec;
use spinstack_sim::units::Lbn;

/// The layout's own tracks (home positions, as DiskSim's boundary query) and the
/// LBNs its remapped defects moved elsewhere.
pub fn true_map(layout: &Layout, drive: &str) -> TrackMap {
    let tracks: Vec<MappedTrack> = layout
        .tracks()
        .into_iter()
        .map(|t| MappedTrack {
            first: t.first,
            sectors: t.sectors,
            location: Some((t.cylinder, t.surface)),
            uncertain: false,
        })
        .collect();
    let remapped = remapped_lbns(layout, &tracks);
    TrackMap {
        drive: drive.to_string(),
        method: "truth".to_string(),
        capacity: layout.capacity(),
        tracks,
        remapped,
    }
}

/// Remapped LBNs, looked for only on tracks of zones whose spec lists defects.
fn remapped_lbns(layout: &Layout, tracks: &[MappedTrack]) -> Vec<RemappedLbn> {
    let LayoutSpec::Zoned(zoned) = layout.spec() else {
        return Vec::new();
    };
    let defective: Vec<(u32, u32)> = zoned
        .zones
        .iter()
        .filter(|z| !z.defects.is_empty())
        .map(|z| (z.first_cylinder, z.last_cylinder))
        .collect();
    let mut out = Vec::new();
    for track in tracks {
        let Some((cylinder, _)) = track.location else {
            continue;
        };
        if !defective.iter().any(|&(a, b)| (a..=b).contains(&cylinder)) {
            continue;
        }
        for lbn in track.first.0..track.end().0 {
            if layout.is_remapped(Lbn(lbn)) == Ok(true) {
                if let Ok(stored_at) = layout.lbn_to_pbn(Lbn(lbn)) {
                    out.push(RemappedLbn {
                        lbn: Lbn(lbn),
                        stored_at,
                    });
                }
            }
        }
    }
    out
}
