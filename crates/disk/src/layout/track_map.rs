//! The true track map of a modelled drive, straight from its layout: the
//! yardstick every extraction is checked against, and the map the layers above
//! can allocate with on a modelled drive without extracting one.

use super::{Layout, Pbn};
use crate::spec::LayoutSpec;
use spinstack_sim::units::Lbn;
use spinstack_trackmap::{RemappedLbn, SectorLocation, Track, TrackLocation, TrackMap};

impl From<Pbn> for SectorLocation {
    fn from(pbn: Pbn) -> SectorLocation {
        SectorLocation {
            cylinder: pbn.cylinder,
            surface: pbn.surface,
            sector: pbn.sector,
        }
    }
}

impl Layout {
    /// The layout's own track map, method `truth`: its tracks at their home
    /// positions (as the boundary query [`Layout::track_of`] and DiskSim see
    /// them) and the LBNs its remapped defects moved elsewhere, in LBN order.
    pub fn track_map(&self, drive_name: &str) -> TrackMap {
        let tracks: Vec<Track> = self
            .tracks()
            .into_iter()
            .map(|t| Track {
                first: t.first,
                sectors: t.sectors,
                location: Some(TrackLocation {
                    cylinder: t.cylinder,
                    surface: t.surface,
                }),
                uncertain: false,
            })
            .collect();
        let remapped = self.remapped_lbns(&tracks);
        TrackMap::new(drive_name, "truth", self.capacity(), tracks, remapped)
            .expect("a layout's tracks partition 0..capacity (the layout property tests check it)")
    }

    /// Remapped LBNs, looked for only on tracks of zones whose spec lists
    /// defects (a whole-drive scan would cost a lookup per LBN).
    fn remapped_lbns(&self, tracks: &[Track]) -> Vec<RemappedLbn> {
        let LayoutSpec::Zoned(zoned) = self.spec() else {
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
            let Some(location) = track.location else {
                continue;
            };
            if !defective
                .iter()
                .any(|&(first, last)| (first..=last).contains(&location.cylinder))
            {
                continue;
            }
            for lbn in track.first.0..track.end().0 {
                if self.is_remapped(Lbn(lbn)) == Ok(true) {
                    if let Ok(stored_at) = self.lbn_to_pbn(Lbn(lbn)) {
                        out.push(RemappedLbn {
                            lbn: Lbn(lbn),
                            stored_at: stored_at.into(),
                        });
                    }
                }
            }
        }
        out
    }
}
