//! Helpers shared by the layout test files: a seeded generator, zone-relative
//! positions, DiskSim's literal forward formulas (notes §2.4) as a reference,
//! and the exhaustive property check.
#![allow(dead_code)]

use spinstack_disk::layout::{Layout, LayoutError, Pbn, SectorContent};
use spinstack_disk::spec::{SparingScheme, SurfaceOrder, ZoneSpec, ZonedLayoutSpec};
use spinstack_sim::rng::SplitMix64;
use spinstack_sim::units::Lbn;
use spinstack_trackmap::{RemappedLbn, SectorLocation, TrackLocation};

/// The 11 DiskSim validation drives in ../shared/disksim/params (file stems).
pub const DISKSIM_DRIVES: [&str; 11] = [
    "atlas10k",
    "atlas_III",
    "barracuda",
    "cheetah4LP",
    "cheetah9LP",
    "dec_rz26",
    "hp_c2247a",
    "hp_c2490a",
    "hp_c3323a",
    "ibm18es",
    "st41601n",
];

/// The workspace's seeded generator with the inclusive range these tests draw from, so
/// a case is reproducible from its seed.
pub struct Rng(SplitMix64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(SplitMix64::new(seed))
    }
    pub fn next(&mut self) -> u64 {
        self.0.next_u64()
    }
    /// Uniform in `low..=high` (`low` when `high < low`).
    pub fn range(&mut self, low: u64, high: u64) -> u64 {
        if high <= low {
            return low;
        }
        low + self.next() % (high - low + 1)
    }
}

/// The logical surface index of a head (the surface order is its own inverse).
pub fn logical_surface(spec: &ZonedLayoutSpec, zone: &ZoneSpec, cylinder: u32, head: u32) -> u32 {
    let reversed = match spec.surface_order {
        SurfaceOrder::Fixed => false,
        SurfaceOrder::ReverseOnOddZoneCylinder => (cylinder - zone.first_cylinder) % 2 == 1,
        SurfaceOrder::ReverseOnOddCylinder => cylinder % 2 == 1,
    };
    if reversed {
        spec.surfaces - 1 - head
    } else {
        head
    }
}

/// DiskSim's zone-relative sector index of a PBN (notes §2.2, slips row).
pub fn zone_position(spec: &ZonedLayoutSpec, zone: &ZoneSpec, pbn: Pbn) -> u64 {
    let logical = logical_surface(spec, zone, pbn.cylinder, pbn.surface);
    let track = u64::from(pbn.cylinder - zone.first_cylinder) * u64::from(spec.surfaces)
        + u64::from(logical);
    track * u64::from(zone.sectors_per_track) + u64::from(pbn.sector)
}

/// LBNs a zone exports by the §2.2 capacity table.
pub fn zone_capacity(spec: &ZonedLayoutSpec, zone: &ZoneSpec) -> u64 {
    let cylinders = u64::from(zone.last_cylinder - zone.first_cylinder + 1);
    let tracks = cylinders * u64::from(spec.surfaces);
    let spt = u64::from(zone.sectors_per_track);
    let sectors = tracks * spt;
    let lost = match spec.sparing {
        SparingScheme::TracksPerZone => zone.spares * spt,
        SparingScheme::SectorsPerCylinder => zone.spares * cylinders,
        SparingScheme::SectorsPerTrack => zone.spares * tracks,
        SparingScheme::SlipToEndOfDisk => zone.slips.len() as u64,
        SparingScheme::SectorsPerCylinderRange => {
            zone.spares * (cylinders / u64::from(spec.sparing_range_cylinders))
        }
        SparingScheme::SectorsPerZone => zone.spares,
    };
    sectors - lost - zone.empty_sectors_at_front
}

/// DiskSim's literal forward map (file-order slip walk) of zone-relative LBN
/// `relative`, as a zone-relative sector index; `None` where DiskSim's result
/// is not well defined (unsorted slips, a region with more slips than spares,
/// a push past the region where DiskSim aliases, a short scheme-8 range longer
/// than a range's slots).
pub fn disksim_reference_position(
    spec: &ZonedLayoutSpec,
    zone: &ZoneSpec,
    relative: u64,
) -> Option<u64> {
    let slips = &zone.slips;
    if slips.windows(2).any(|w| w[0] >= w[1]) {
        return None;
    }
    let spt = u64::from(zone.sectors_per_track);
    let per_cylinder = spt * u64::from(spec.surfaces);
    let cylinders = u64::from(zone.last_cylinder - zone.first_cylinder + 1);
    let v = relative + zone.empty_sectors_at_front;
    let per_region = |size: u64| -> Option<u64> {
        let overflow = slips
            .iter()
            .any(|&s| slips.iter().filter(|&&t| t / size == s / size).count() as u64 > zone.spares);
        (!overflow).then_some(size)
    };
    match spec.sparing {
        SparingScheme::SectorsPerZone => {
            let mut seen = 0;
            for &s in slips {
                if s <= v + seen {
                    seen += 1;
                }
            }
            Some(v + seen)
        }
        SparingScheme::TracksPerZone => {
            let mut track = v / spt;
            for &s in slips {
                if s <= track {
                    track += 1;
                }
            }
            Some(track * spt + v % spt)
        }
        SparingScheme::SlipToEndOfDisk => {
            let (cylinder, offset) = (v / per_cylinder, v % per_cylinder);
            let base = cylinder * per_cylinder;
            let mut seen = 0;
            for &s in slips {
                if s / per_cylinder < cylinder || (s >= base && s - base <= offset + seen) {
                    seen += 1;
                }
            }
            // Slips beyond this cylinder count too once within reach, so the
            // carry into the next cylinder needs no special case.
            Some(base + offset + seen)
        }
        SparingScheme::SectorsPerCylinder | SparingScheme::SectorsPerCylinderRange => {
            let range = if spec.sparing == SparingScheme::SectorsPerCylinder {
                1
            } else {
                u64::from(spec.sparing_range_cylinders)
            };
            let size = per_region(per_cylinder * range)?;
            let slots = size - zone.spares;
            // A short last range has no spares; DiskSim's `v / slots` still
            // finds it as long as it is no longer than a range's slots.
            if (cylinders % range) * per_cylinder > slots {
                return None;
            }
            let (region, mut offset) = (v / slots, v % slots);
            let base = region * size;
            let mut seen = 0;
            for &s in slips {
                if s >= base && s - base <= offset + seen {
                    seen += 1;
                }
            }
            offset += seen;
            // Scheme 2 carries anything pushed into the spares to the next
            // cylinder (DiskSim's aliasing); scheme 8 leaves it in the range.
            let limit = if range == 1 && spec.sparing == SparingScheme::SectorsPerCylinder {
                slots
            } else {
                size
            };
            (offset < limit).then_some(base + offset)
        }
        SparingScheme::SectorsPerTrack => {
            let size = per_region(spt)?;
            let slots = size - zone.spares;
            let (track, mut offset) = (v / slots, v % slots);
            let base = track * spt;
            for &s in slips {
                if s >= base && s - base <= offset {
                    offset += 1;
                }
            }
            (offset < spt).then_some(base + offset)
        }
    }
}

/// Every property, exhaustively: LBN→PBN→LBN for every LBN, PBN→LBN→PBN for
/// every sector, `Data` sectors == capacity, track extents and the track map.
pub fn check_everything(layout: &Layout, context: &str) {
    let capacity = layout.capacity().0;
    for lbn in (0..capacity).map(Lbn) {
        let pbn = layout
            .lbn_to_pbn(lbn)
            .unwrap_or_else(|e| panic!("{lbn}: {e}\n{context}"));
        assert_eq!(
            layout.pbn_to_lbn(pbn),
            Ok(SectorContent::Data(lbn)),
            "{lbn} at {pbn:?}\n{context}"
        );
        assert!(layout.angle_of(pbn).is_ok(), "{pbn:?}\n{context}");
        let extent = layout.track_of(lbn).unwrap();
        assert!(extent.contains(lbn), "{lbn} not in {extent:?}\n{context}");
    }
    let end = Lbn(capacity);
    assert!(
        matches!(
            layout.lbn_to_pbn(end),
            Err(LayoutError::LbnOutOfRange { .. })
        ),
        "{context}"
    );
    assert!(layout.track_of(end).is_err(), "{context}");
    check_track_map(layout, context);
    assert_eq!(
        count_data_sectors(layout, context),
        capacity,
        "Data sectors vs capacity\n{context}"
    );
}

/// `tracks()` partitions 0..capacity; every LBN of an extent has it as its
/// `track_of` and, unless remapped, lies on that physical track. `track_map()`
/// holds the same tracks and lists exactly the remapped LBNs, where they live.
fn check_track_map(layout: &Layout, context: &str) {
    let mut next = Lbn(0);
    let mut remapped = Vec::new();
    let extents = layout.tracks();
    for &extent in &extents {
        assert_eq!(
            extent.first, next,
            "gap or overlap at {extent:?}\n{context}"
        );
        assert!(extent.sectors.0 > 0, "{context}");
        for lbn in (extent.first.0..extent.end().0).map(Lbn) {
            assert_eq!(layout.track_of(lbn).unwrap(), extent, "{lbn}\n{context}");
            let pbn = layout.lbn_to_pbn(lbn).unwrap();
            if layout.is_remapped(lbn).unwrap() {
                remapped.push(RemappedLbn {
                    lbn,
                    stored_at: SectorLocation::from(pbn),
                });
            } else {
                assert_eq!(
                    (pbn.cylinder, pbn.surface),
                    (extent.cylinder, extent.surface),
                    "{lbn}\n{context}"
                );
            }
        }
        next = extent.end();
    }
    assert_eq!(
        next,
        Lbn(layout.capacity().0),
        "track map does not end at capacity\n{context}"
    );
    let map = layout.track_map("checked");
    assert_eq!((map.drive(), map.method()), ("checked", "truth"));
    assert_eq!(map.capacity(), layout.capacity(), "{context}");
    assert_eq!(map.track_count(), extents.len(), "{context}");
    for (track, extent) in map.tracks().iter().zip(&extents) {
        let location = TrackLocation {
            cylinder: extent.cylinder,
            surface: extent.surface,
        };
        assert_eq!(
            (track.first, track.sectors, track.location, track.uncertain),
            (extent.first, extent.sectors, Some(location), false),
            "{context}"
        );
    }
    assert_eq!(map.remapped(), &remapped[..], "{context}");
}

/// Scans every physical sector: `Data(l)` must map back to it; sectors past a
/// track's end, heads past the last surface and cylinders in no zone are errors.
fn count_data_sectors(layout: &Layout, context: &str) -> u64 {
    let mut data = 0;
    for cylinder in 0..=layout.cylinders() {
        for surface in 0..=layout.surfaces() {
            let pbn = |sector| Pbn {
                cylinder,
                surface,
                sector,
            };
            let Ok(spt) = layout.sectors_per_track(cylinder, surface) else {
                assert!(
                    layout.pbn_to_lbn(pbn(0)).is_err(),
                    "{:?}\n{context}",
                    pbn(0)
                );
                continue;
            };
            assert!(
                surface < layout.surfaces() && cylinder < layout.cylinders(),
                "{context}"
            );
            assert!(layout.pbn_to_lbn(pbn(spt)).is_err(), "{context}");
            assert!(layout.angle_of(pbn(spt)).is_err(), "{context}");
            for sector in 0..spt {
                if let SectorContent::Data(lbn) = layout.pbn_to_lbn(pbn(sector)).unwrap() {
                    assert_eq!(layout.lbn_to_pbn(lbn), Ok(pbn(sector)), "{lbn}\n{context}");
                    data += 1;
                }
            }
        }
    }
    data
}
