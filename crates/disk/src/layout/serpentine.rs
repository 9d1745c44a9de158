//! Serpentine numbering (validation paper, Figure 2 and Table 2).
//!
//! Cylinders are grouped into bands of `band_cylinders`. In band 0 the LBNs
//! start on surface 0 at the band's last (innermost) cylinder and run outward
//! to its first cylinder, then continue on surface 1 from the first cylinder
//! inward to the last, and so on, alternating direction at each surface. Band
//! 1 takes the surfaces in reverse order (starting on the last surface, again
//! outward first), band 2 as band 0, etc. For two surfaces and 32-cylinder
//! bands this is exactly the Maxtor Atlas 10K V of the paper: "LBA 0 starts
//! on track 31 of the top surface and increases outward to track 0, then
//! continues from the bottom surface of track 0 inward to track 31. Next, the
//! LBA jumps to track 63 of the bottom surface growing outward to track 32,
//! then switches back to the top surface's track 32 and continues inward".
//! Each band ends on the surface the next band starts on, so a band change is
//! a seek on one surface.
//!
//! Every (zone, surface) has its own track size; cylinders in no zone hold no
//! tracks. There is no sparing.
//!
//! Skews, measured in sectors of the track being entered: the first LBN of a
//! track starts `track_skew_sectors` after the previous track's first LBN when
//! the head stays on its surface (including the jump at a band change, for
//! which no separate figure exists), and `surface_switch_skew_sectors` after
//! it when the surface changes. Track 0 starts at angle 0. Angles accumulate
//! with DiskSim's gap-aware wrap so sector starts stay on the sector grid.

use super::angle::SectorGrid;
use super::{Angle, LayoutError, Pbn, SectorContent, TrackExtent, TrackGeometry};
use crate::spec::SerpentineLayoutSpec;
use spinstack_sim::units::{Lbn, Sectors};

#[derive(Clone, Copy, Debug)]
struct Track {
    first_lbn: u64,
    cylinder: u32,
    surface: u32,
    sectors_per_track: u32,
    first_angle: u32,
}

#[derive(Clone, Debug)]
pub(crate) struct SerpentineLayout {
    surfaces: u32,
    cylinders: u32,
    /// Every track in LBN order.
    tracks: Vec<Track>,
    /// Index into `tracks` by `cylinder * surfaces + surface`; `u32::MAX` for none.
    track_index: Vec<u32>,
    capacity: u64,
}

const NO_TRACK: u32 = u32::MAX;

impl SerpentineLayout {
    pub fn new(spec: &SerpentineLayoutSpec) -> Result<SerpentineLayout, LayoutError> {
        let per_cylinder = per_cylinder_track_sizes(spec)?;
        let surfaces = spec.surfaces;
        let mut tracks = Vec::new();
        let mut track_index = vec![NO_TRACK; per_cylinder.len() * surfaces as usize];
        let mut next_lbn = 0u64;
        let mut angle = 0u32;
        let mut previous_surface: Option<u32> = None;
        for (cylinder, surface) in serpentine_order(spec.cylinders, surfaces, spec.band_cylinders) {
            let Some(sizes) = per_cylinder[cylinder as usize] else {
                continue;
            };
            let spt = sizes[surface as usize];
            let grid = SectorGrid::new(spt);
            if let Some(previous) = previous_surface {
                let skew = if previous == surface {
                    spec.track_skew_sectors
                } else {
                    spec.surface_switch_skew_sectors
                };
                angle = grid.add_sectors(angle, u64::from(skew));
            }
            previous_surface = Some(surface);
            track_index[(cylinder * surfaces + surface) as usize] = tracks.len() as u32;
            tracks.push(Track {
                first_lbn: next_lbn,
                cylinder,
                surface,
                sectors_per_track: spt,
                first_angle: angle,
            });
            next_lbn += u64::from(spt);
        }
        if tracks.len() >= NO_TRACK as usize {
            return Err(LayoutError::Invalid("too many tracks".into()));
        }
        Ok(SerpentineLayout {
            surfaces,
            cylinders: spec.cylinders,
            tracks,
            track_index,
            capacity: next_lbn,
        })
    }

    pub fn capacity(&self) -> Sectors {
        Sectors(self.capacity)
    }
    pub fn cylinders(&self) -> u32 {
        self.cylinders
    }
    pub fn surfaces(&self) -> u32 {
        self.surfaces
    }

    fn track_of_lbn(&self, lbn: Lbn) -> Result<&Track, LayoutError> {
        if lbn.0 >= self.capacity {
            return Err(LayoutError::LbnOutOfRange {
                lbn,
                capacity: self.capacity(),
            });
        }
        let index = self.tracks.partition_point(|t| t.first_lbn <= lbn.0) - 1;
        Ok(&self.tracks[index])
    }

    fn track_at(&self, pbn: Pbn) -> Result<&Track, LayoutError> {
        let out_of_range = LayoutError::PbnOutOfRange { pbn };
        if pbn.surface >= self.surfaces || pbn.cylinder >= self.cylinders {
            return Err(out_of_range);
        }
        let slot = pbn.cylinder as usize * self.surfaces as usize + pbn.surface as usize;
        match self.track_index.get(slot) {
            Some(&i) if i != NO_TRACK => Ok(&self.tracks[i as usize]),
            _ => Err(out_of_range),
        }
    }

    pub fn lbn_to_pbn(&self, lbn: Lbn) -> Result<Pbn, LayoutError> {
        let track = self.track_of_lbn(lbn)?;
        Ok(Pbn {
            cylinder: track.cylinder,
            surface: track.surface,
            sector: (lbn.0 - track.first_lbn) as u32,
        })
    }

    pub fn pbn_to_lbn(&self, pbn: Pbn) -> Result<SectorContent, LayoutError> {
        let track = self.track_at(pbn)?;
        if pbn.sector >= track.sectors_per_track {
            return Err(LayoutError::PbnOutOfRange { pbn });
        }
        Ok(SectorContent::Data(Lbn(
            track.first_lbn + u64::from(pbn.sector)
        )))
    }

    pub fn sectors_per_track(&self, cylinder: u32, surface: u32) -> Result<u32, LayoutError> {
        let pbn = Pbn {
            cylinder,
            surface,
            sector: 0,
        };
        Ok(self.track_at(pbn)?.sectors_per_track)
    }

    pub fn track_of(&self, lbn: Lbn) -> Result<TrackExtent, LayoutError> {
        Ok(extent(self.track_of_lbn(lbn)?))
    }

    pub fn tracks(&self) -> Vec<TrackExtent> {
        self.tracks.iter().map(extent).collect()
    }

    pub fn locate(&self, lbn: Lbn) -> Result<(Pbn, Angle), LayoutError> {
        let pbn = self.lbn_to_pbn(lbn)?;
        Ok((pbn, self.angle_of(pbn)?))
    }

    pub fn track_geometry(&self, lbn: Lbn) -> Result<TrackGeometry, LayoutError> {
        let track = self.track_of_lbn(lbn)?;
        Ok(TrackGeometry {
            extent: extent(track),
            sectors_per_track: track.sectors_per_track,
            first_angle: Angle(track.first_angle),
            grid: SectorGrid::new(track.sectors_per_track),
        })
    }

    pub fn angle_of(&self, pbn: Pbn) -> Result<Angle, LayoutError> {
        let track = self.track_at(pbn)?;
        if pbn.sector >= track.sectors_per_track {
            return Err(LayoutError::PbnOutOfRange { pbn });
        }
        let grid = SectorGrid::new(track.sectors_per_track);
        Ok(grid.sector_angle(track.first_angle, pbn.sector))
    }
}

fn extent(track: &Track) -> TrackExtent {
    TrackExtent {
        first: Lbn(track.first_lbn),
        sectors: Sectors(u64::from(track.sectors_per_track)),
        cylinder: track.cylinder,
        surface: track.surface,
    }
}

/// Track sizes by surface for every cylinder (`None` for cylinders in no zone).
fn per_cylinder_track_sizes(
    spec: &SerpentineLayoutSpec,
) -> Result<Vec<Option<&[u32]>>, LayoutError> {
    let invalid = |m: String| Err(LayoutError::Invalid(m));
    if spec.surfaces == 0 || spec.cylinders == 0 || spec.band_cylinders == 0 {
        return invalid("a serpentine layout needs surfaces, cylinders and band_cylinders".into());
    }
    let mut sizes: Vec<Option<&[u32]>> = vec![None; spec.cylinders as usize];
    for (index, zone) in spec.zones.iter().enumerate() {
        let name = format!(
            "serpentine zone {index} (cylinders {}-{})",
            zone.first_cylinder, zone.last_cylinder
        );
        if zone.first_cylinder > zone.last_cylinder || zone.last_cylinder >= spec.cylinders {
            return invalid(format!("{name} does not fit in 0-{}", spec.cylinders - 1));
        }
        if zone.sectors_per_track_by_surface.len() != spec.surfaces as usize {
            return invalid(format!(
                "{name} gives {} track sizes for {} surfaces",
                zone.sectors_per_track_by_surface.len(),
                spec.surfaces
            ));
        }
        if zone.sectors_per_track_by_surface.contains(&0) {
            return invalid(format!("{name} has a surface with 0 sectors per track"));
        }
        // A skew longer than a track is no position on it (the zoned layout
        // refuses one too; no drive file has one).
        let shortest = zone.sectors_per_track_by_surface.iter().min().copied();
        for (what, sectors) in [
            ("track skew", spec.track_skew_sectors),
            ("surface-switch skew", spec.surface_switch_skew_sectors),
        ] {
            if let Some(spt) = shortest.filter(|&spt| sectors > spt) {
                return invalid(format!(
                    "the {what} of {sectors} sectors is longer than {name}'s {spt}-sector track"
                ));
            }
        }
        for slot in &mut sizes[zone.first_cylinder as usize..=zone.last_cylinder as usize] {
            if slot.is_some() {
                return invalid(format!("{name} overlaps another zone"));
            }
            *slot = Some(&zone.sectors_per_track_by_surface);
        }
    }
    Ok(sizes)
}

/// Every (cylinder, surface) in serpentine LBN order.
fn serpentine_order(cylinders: u32, surfaces: u32, band: u32) -> impl Iterator<Item = (u32, u32)> {
    let bands = cylinders.div_ceil(band);
    (0..bands).flat_map(move |b| {
        let first = b * band;
        let last = (first + band).min(cylinders) - 1;
        (0..surfaces).flat_map(move |i| {
            let surface = if b % 2 == 0 { i } else { surfaces - 1 - i };
            let outward = i % 2 == 0;
            (first..=last).map(move |c| {
                let cylinder = if outward { last - (c - first) } else { c };
                (cylinder, surface)
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Proves the order matches the paper's description for 2 surfaces and
    // 32-cylinder bands: surface 0 cylinders 31..0, surface 1 0..31, then
    // surface 1 63..32, surface 0 32..63.
    #[test]
    fn order_matches_paper() {
        let order: Vec<(u32, u32)> = serpentine_order(64, 2, 32).collect();
        assert_eq!(order[0], (31, 0));
        assert_eq!(order[31], (0, 0));
        assert_eq!(order[32], (0, 1));
        assert_eq!(order[63], (31, 1));
        assert_eq!(order[64], (63, 1));
        assert_eq!(order[95], (32, 1));
        assert_eq!(order[96], (32, 0));
        assert_eq!(order[127], (63, 0));
    }
}
