//! DiskSim's `dm_layout_g1` (notes §2): zones of equal-size tracks in
//! cylinder-major order, a surface order, and a sparing scheme with slips and
//! remapped defects.
//!
//! LBNs are numbered zone by zone in the spec's order. Inside a zone an LBN's
//! *virtual index* is its zone-relative number plus the empty space at the
//! zone front; [`SparingMap`] places virtual indices on physical positions
//! (`(cylinder - first) * surfaces * spt + logical_surface * spt + sector`),
//! and the surface order turns the logical surface into a head.
//!
//! Where this differs from DiskSim 4.0, on purpose:
//! * **Scheme 2 aliasing.** DiskSim carries an LBN that a slip pushed into the
//!   cylinder's spares to sector 0 of the next cylinder, where it collides with
//!   that cylinder's first LBN (st41601n: LBNs 349676 and 349677 both map to
//!   (243,0,0), so its validation run never finishes). Here the LBN stays in
//!   the first spare of its own cylinder ((242,16,79) for LBN 349676); only
//!   when a cylinder has more slips than spares do its last LBNs carry, ahead
//!   of the next cylinder's own LBNs. This is a bijection; DiskSim is not.
//! * **Unsorted slip lists.** DiskSim walks the slips once in file order; for
//!   a sorted list that equals counting the slips at or before the result,
//!   which is what this module does. atlas_III zone 1 lists 25 slips out of
//!   order; there DiskSim's walk undercounts for 87 LBNs, placing them on
//!   slipped sectors (which its own reverse map calls slipped) one or two
//!   sectors early. We sort the list.
//! * **Scheme 8 overflow.** A range with more slips than spares spills into
//!   the next range (DiskSim computes a cylinder in the next range and aliases
//!   it); defect replacements must lie in the defect's own range (DiskSim
//!   folds them into it with `% blocks_per_range` on the forward map only).
//! * **Scheme 1 reverse map.** DiskSim's `ptol` treats the first spare track
//!   as data (`trackno > lasttrack`); here it is unused.
//! * **Scheme 3 skew.** The slip cutoff in the angle uses the logical surface
//!   (DiskSim uses the physical head; identical under surface order 0, the
//!   only order scheme 3 is used with).
//! * **Defects.** A defective unit must hold data and its replacement must be
//!   an unused spare; otherwise the spec is rejected instead of aliasing.
//! * **Cylinder count.** A zone may end one cylinder past the spec's
//!   `cylinders` (hp_c2490a's last zone ends at cylinder 2629 of 2629);
//!   [`ZonedLayout::cylinders`] then counts the zone's cylinders. DiskSim
//!   accepts any overrun; here a zone reaching further is refused
//!   ([`MAX_CYLINDERS_PAST_COUNT`]): no drive file has one, and past the
//!   stated count the seek curve is extrapolated to times no drive has (a
//!   zone run to cylinder 20000 of atlas10k's 10042 gave 112 ms seeks).
//! * **Skews and first-block offsets** may be at most the zone's track (a
//!   whole track is one turn, as good as none): DiskSim takes any value and
//!   wraps the angle, but a longer one is no position on the track, and no
//!   drive file has one (the longest, cheetah9LP's, is 54% of its track).
//! * **Zone gaps** are accepted, as in DiskSim: cylinders between zones hold
//!   no LBN (DIXtrac's Ultrastar 18ES model has one at cylinder 257).
//! * **Track boundaries** use home positions, like DiskSim's boundary query
//!   ("ignores remapping"): a remapped LBN belongs to its defective track.

use super::angle::SectorGrid;
use super::divide::Divisor;
use super::sparing::{RegionShape, SparingMap, UnitContent};
use super::{Angle, LayoutError, Pbn, SectorContent, TrackExtent, TrackGeometry};
use crate::spec::{SparingScheme, SurfaceOrder, ZoneSpec, ZonedLayoutSpec};
use spinstack_sim::units::{Lbn, Sectors};

#[derive(Clone, Debug)]
struct Zone {
    first_cylinder: u32,
    last_cylinder: u32,
    sectors_per_track: u32,
    first_lbn: u64,
    lbns: u64,
    empty_front_sectors: u64,
    /// Sectors per sparing unit: 1, or a whole track for scheme 1.
    unit_sectors: Divisor,
    /// Sectors per track and per cylinder, as divisors.
    track_sectors: Divisor,
    cylinder_sectors: Divisor,
    grid: SectorGrid,
    first_block_angle: u32,
    track_skew_angle: u32,
    cylinder_skew_angle: u32,
    sparing: SparingMap,
}

impl Zone {
    fn tracks(&self, surfaces: u32) -> u64 {
        u64::from(self.last_cylinder - self.first_cylinder + 1) * u64::from(surfaces)
    }
}

#[derive(Clone, Debug)]
pub(crate) struct ZonedLayout {
    surfaces: u32,
    /// `surfaces` as a divisor: a zone-relative track number splits into a
    /// zone-relative cylinder and a logical surface.
    surface_divisor: Divisor,
    cylinders: u32,
    surface_order: SurfaceOrder,
    scheme: SparingScheme,
    zones: Vec<Zone>,
    /// First LBN of each zone, in zone order (sorted).
    zone_first_lbns: Vec<u64>,
    /// Zone index of every cylinder ([`NO_ZONE`] between zones): one load
    /// instead of a search on every PBN query.
    zone_by_cylinder: Vec<u16>,
    /// The last zone starting at or before LBN `bucket << lbn_bucket_shift`,
    /// for each bucket: a zone lookup starts there and steps forward at most
    /// over the zones starting inside the bucket.
    zone_by_lbn_bucket: Vec<u16>,
    lbn_bucket_shift: u32,
    capacity: u64,
}

/// `zone_by_cylinder` entry of a cylinder that no zone covers.
const NO_ZONE: u16 = u16::MAX;
/// Target number of LBN buckets: a few per zone keeps the forward step short
/// while the table (2 bytes a bucket) stays in the L1 cache.
const LBN_BUCKETS: u64 = 4096;

/// A PBN resolved to its zone: zone-relative cylinder and logical surface.
struct TrackAddress<'a> {
    zone: &'a Zone,
    cylinder: u64,
    index: u64,
}

/// The lookup tables from zones to cylinders and LBN buckets.
struct ZoneTables {
    zone_by_cylinder: Vec<u16>,
    zone_by_lbn_bucket: Vec<u16>,
    lbn_bucket_shift: u32,
}

fn zone_tables(zones: &[Zone], cylinders: u32, capacity: u64) -> Result<ZoneTables, LayoutError> {
    if zones.len() >= usize::from(NO_ZONE) {
        return Err(LayoutError::Invalid(format!(
            "{} zones; at most {} are supported",
            zones.len(),
            NO_ZONE - 1
        )));
    }
    let mut zone_by_cylinder = vec![NO_ZONE; cylinders as usize];
    for (index, zone) in zones.iter().enumerate() {
        let span = zone.first_cylinder as usize..=zone.last_cylinder as usize;
        zone_by_cylinder[span].fill(index as u16);
    }
    let lbn_bucket_shift = (capacity / LBN_BUCKETS).max(1).ilog2();
    let first_lbns: Vec<u64> = zones.iter().map(|z| z.first_lbn).collect();
    let buckets = capacity.div_ceil(1 << lbn_bucket_shift);
    let zone_by_lbn_bucket = (0..buckets)
        .map(|bucket| {
            let start = bucket << lbn_bucket_shift;
            (first_lbns.partition_point(|&first| first <= start) - 1) as u16
        })
        .collect();
    Ok(ZoneTables {
        zone_by_cylinder,
        zone_by_lbn_bucket,
        lbn_bucket_shift,
    })
}

/// How far past the spec's `cylinders` a zone may end (module docs): one
/// cylinder, as hp_c2490a's last zone does.
pub const MAX_CYLINDERS_PAST_COUNT: u32 = 1;

/// A zoned spec the layout refuses: the zone the problem is in (its index in
/// the spec), when it is in one, so that a file reader can name that zone's line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZonedProblem {
    pub zone: Option<usize>,
    pub error: LayoutError,
}

impl ZonedProblem {
    fn in_zone(index: usize, zone: &ZoneSpec, problem: &str) -> ZonedProblem {
        ZonedProblem {
            zone: Some(index),
            error: LayoutError::Invalid(format!(
                "zone {index} (cylinders {}-{}): {problem}",
                zone.first_cylinder, zone.last_cylinder
            )),
        }
    }

    fn whole(error: LayoutError) -> ZonedProblem {
        ZonedProblem { zone: None, error }
    }
}

impl ZonedLayout {
    pub fn new(spec: &ZonedLayoutSpec) -> Result<ZonedLayout, ZonedProblem> {
        check_geometry(spec)?;
        let mut zones = Vec::with_capacity(spec.zones.len());
        let mut next_lbn = 0u64;
        for (index, zone) in spec.zones.iter().enumerate() {
            let built = build_zone(spec, zone, next_lbn)
                .map_err(|problem| ZonedProblem::in_zone(index, zone, &problem))?;
            next_lbn += built.lbns;
            zones.push(built);
        }
        let cylinders = zones
            .iter()
            .map(|z| z.last_cylinder + 1)
            .fold(spec.cylinders, u32::max);
        let tables = zone_tables(&zones, cylinders, next_lbn).map_err(ZonedProblem::whole)?;
        Ok(ZonedLayout {
            surfaces: spec.surfaces,
            surface_divisor: Divisor::new(u64::from(spec.surfaces)),
            cylinders,
            surface_order: spec.surface_order,
            scheme: spec.sparing,
            zone_first_lbns: zones.iter().map(|z| z.first_lbn).collect(),
            zones,
            zone_by_cylinder: tables.zone_by_cylinder,
            zone_by_lbn_bucket: tables.zone_by_lbn_bucket,
            lbn_bucket_shift: tables.lbn_bucket_shift,
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

    #[inline]
    fn zone_of_lbn(&self, lbn: Lbn) -> Result<&Zone, LayoutError> {
        if lbn.0 >= self.capacity {
            return Err(LayoutError::LbnOutOfRange {
                lbn,
                capacity: self.capacity(),
            });
        }
        // The last zone starting at or before the LBN; empty zones share their
        // successor's first LBN and are skipped by taking the last match.
        let bucket = (lbn.0 >> self.lbn_bucket_shift) as usize;
        let mut index = usize::from(self.zone_by_lbn_bucket[bucket]);
        let firsts = &self.zone_first_lbns;
        while index + 1 < firsts.len() && firsts[index + 1] <= lbn.0 {
            index += 1;
        }
        Ok(&self.zones[index])
    }

    #[inline]
    fn zone_of_cylinder(&self, cylinder: u32) -> Option<&Zone> {
        match *self.zone_by_cylinder.get(cylinder as usize)? {
            NO_ZONE => None,
            index => Some(&self.zones[usize::from(index)]),
        }
    }

    /// The head that logical surface `index` of `cylinder` lands on (§2.3);
    /// the map is its own inverse.
    #[inline]
    fn head_of(&self, zone: &Zone, cylinder: u32, index: u32) -> u32 {
        let reversed = match self.surface_order {
            SurfaceOrder::Fixed => false,
            SurfaceOrder::ReverseOnOddZoneCylinder => (cylinder - zone.first_cylinder) % 2 == 1,
            SurfaceOrder::ReverseOnOddCylinder => cylinder % 2 == 1,
        };
        if reversed {
            self.surfaces - 1 - index
        } else {
            index
        }
    }

    #[inline]
    fn pbn_of_position(&self, zone: &Zone, position: u64) -> Pbn {
        let (cylinder, in_cylinder) = zone.cylinder_sectors.div_rem(position);
        let (index, sector) = zone.track_sectors.div_rem(in_cylinder);
        let cylinder = zone.first_cylinder + cylinder as u32;
        Pbn {
            cylinder,
            surface: self.head_of(zone, cylinder, index as u32),
            sector: sector as u32,
        }
    }

    /// The virtual unit of an LBN of `zone`, and the sector within the unit.
    fn virtual_unit(zone: &Zone, lbn: Lbn) -> (u64, u64) {
        zone.unit_sectors
            .div_rem(lbn.0 - zone.first_lbn + zone.empty_front_sectors)
    }

    /// The zone, zone-relative cylinder and logical surface of a PBN,
    /// checking every field.
    #[inline]
    fn address_of_pbn(&self, pbn: Pbn) -> Result<TrackAddress<'_>, LayoutError> {
        let zone = match self.zone_of_cylinder(pbn.cylinder) {
            Some(zone) if pbn.surface < self.surfaces && pbn.sector < zone.sectors_per_track => {
                zone
            }
            _ => return Err(LayoutError::PbnOutOfRange { pbn }),
        };
        Ok(TrackAddress {
            zone,
            cylinder: u64::from(pbn.cylinder - zone.first_cylinder),
            index: u64::from(self.head_of(zone, pbn.cylinder, pbn.surface)),
        })
    }

    /// The zone and zone-relative position of a PBN, checking every field.
    fn position_of_pbn(&self, pbn: Pbn) -> Result<(&Zone, u64), LayoutError> {
        let TrackAddress {
            zone,
            cylinder,
            index,
        } = self.address_of_pbn(pbn)?;
        let spt = u64::from(zone.sectors_per_track);
        let position = (cylinder * u64::from(self.surfaces) + index) * spt + u64::from(pbn.sector);
        Ok((zone, position))
    }

    pub fn lbn_to_pbn(&self, lbn: Lbn) -> Result<Pbn, LayoutError> {
        let zone = self.zone_of_lbn(lbn)?;
        let (unit, offset) = Self::virtual_unit(zone, lbn);
        let position = zone.sparing.physical_unit(unit) * zone.unit_sectors.get() + offset;
        Ok(self.pbn_of_position(zone, position))
    }

    /// [`ZonedLayout::lbn_to_pbn`] and the angle of that sector, from one
    /// zone lookup.
    pub fn locate(&self, lbn: Lbn) -> Result<(Pbn, Angle), LayoutError> {
        let zone = self.zone_of_lbn(lbn)?;
        let (unit, offset) = Self::virtual_unit(zone, lbn);
        let position = zone.sparing.physical_unit(unit) * zone.unit_sectors.get() + offset;
        let (cylinder, in_cylinder) = zone.cylinder_sectors.div_rem(position);
        let (index, sector) = zone.track_sectors.div_rem(in_cylinder);
        let address = TrackAddress {
            zone,
            cylinder,
            index,
        };
        let first = self.first_angle(&address);
        let cylinder = zone.first_cylinder + cylinder as u32;
        let pbn = Pbn {
            cylinder,
            surface: self.head_of(zone, cylinder, index as u32),
            sector: sector as u32,
        };
        Ok((pbn, zone.grid.sector_angle(first, pbn.sector)))
    }

    /// Whether `lbn` lives in a replacement sector rather than its home sector.
    pub fn is_remapped(&self, lbn: Lbn) -> Result<bool, LayoutError> {
        let zone = self.zone_of_lbn(lbn)?;
        if !zone.sparing.has_defects() {
            return Ok(false);
        }
        let (unit, _) = Self::virtual_unit(zone, lbn);
        Ok(zone.sparing.physical_unit(unit) != zone.sparing.home_unit(unit))
    }

    pub fn pbn_to_lbn(&self, pbn: Pbn) -> Result<SectorContent, LayoutError> {
        let (zone, position) = self.position_of_pbn(pbn)?;
        let (unit, offset) = zone.unit_sectors.div_rem(position);
        Ok(match zone.sparing.content(unit) {
            UnitContent::Unused => SectorContent::Unused,
            UnitContent::Remapped => SectorContent::Remapped,
            UnitContent::Data(unit) => {
                let virtual_sector = unit * zone.unit_sectors.get() + offset;
                match virtual_sector.checked_sub(zone.empty_front_sectors) {
                    Some(relative) => SectorContent::Data(Lbn(zone.first_lbn + relative)),
                    None => SectorContent::Unused,
                }
            }
        })
    }

    pub fn sectors_per_track(&self, cylinder: u32, surface: u32) -> Result<u32, LayoutError> {
        let pbn = Pbn {
            cylinder,
            surface,
            sector: 0,
        };
        match self.zone_of_cylinder(cylinder) {
            Some(zone) if surface < self.surfaces => Ok(zone.sectors_per_track),
            _ => Err(LayoutError::PbnOutOfRange { pbn }),
        }
    }

    pub fn track_of(&self, lbn: Lbn) -> Result<TrackExtent, LayoutError> {
        self.home_track(lbn).map(|(_, extent)| extent)
    }

    /// The address of `lbn`'s home track and that track's extent.
    #[inline]
    fn home_track(&self, lbn: Lbn) -> Result<(TrackAddress<'_>, TrackExtent), LayoutError> {
        let zone = self.zone_of_lbn(lbn)?;
        let (unit, offset) = Self::virtual_unit(zone, lbn);
        let position = zone.sparing.home_unit(unit) * zone.unit_sectors.get() + offset;
        let track = zone.track_sectors.div(position);
        let (cylinder, index) = self.surface_divisor.div_rem(track);
        let address = TrackAddress {
            zone,
            cylinder,
            index,
        };
        let extent = self.track_extent_at(&address, track);
        debug_assert!(extent.is_some_and(|e| e.contains(lbn)));
        match extent {
            Some(extent) => Ok((address, extent)),
            None => Err(LayoutError::Invalid(format!(
                "{lbn}: home track holds no LBN"
            ))),
        }
    }

    /// [`ZonedLayout::track_of`], the track's size and the angle of its
    /// sector 0, from one zone lookup.
    pub fn track_geometry(&self, lbn: Lbn) -> Result<TrackGeometry, LayoutError> {
        let (address, extent) = self.home_track(lbn)?;
        let zone = address.zone;
        Ok(TrackGeometry {
            extent,
            sectors_per_track: zone.sectors_per_track,
            first_angle: Angle(self.first_angle(&address)),
            grid: zone.grid,
        })
    }

    /// The LBNs whose home is zone-relative track `track`, if any.
    fn track_extent(&self, zone: &Zone, track: u64) -> Option<TrackExtent> {
        let (cylinder, index) = self.surface_divisor.div_rem(track);
        let address = TrackAddress {
            zone,
            cylinder,
            index,
        };
        self.track_extent_at(&address, track)
    }

    /// [`ZonedLayout::track_extent`] with the track's address already split.
    #[inline]
    fn track_extent_at(&self, address: &TrackAddress, track: u64) -> Option<TrackExtent> {
        let zone = address.zone;
        let spt = u64::from(zone.sectors_per_track);
        let unit = zone.unit_sectors;
        // A track is a whole number of units (a unit is a sector or a track).
        let first = zone.sparing.virtual_below(unit.div(track * spt)) * unit.get();
        let end = zone.sparing.virtual_below(unit.div((track + 1) * spt)) * unit.get();
        let first = first.max(zone.empty_front_sectors) - zone.empty_front_sectors;
        let end = end.max(zone.empty_front_sectors) - zone.empty_front_sectors;
        (end > first).then(|| {
            let cylinder = zone.first_cylinder + address.cylinder as u32;
            TrackExtent {
                first: Lbn(zone.first_lbn + first),
                sectors: Sectors(end - first),
                cylinder,
                surface: self.head_of(zone, cylinder, address.index as u32),
            }
        })
    }

    pub fn tracks(&self) -> Vec<TrackExtent> {
        let mut out = Vec::new();
        for zone in &self.zones {
            let tracks = zone.tracks(self.surfaces);
            out.extend((0..tracks).filter_map(|t| self.track_extent(zone, t)));
        }
        out
    }

    /// §2.5: first-block offset, one track skew per track switch and one
    /// cylinder skew per cylinder switch since the zone start, one sector per
    /// earlier slip for schemes 2 and 3, then the sector itself.
    pub fn angle_of(&self, pbn: Pbn) -> Result<Angle, LayoutError> {
        let address = self.address_of_pbn(pbn)?;
        let first = self.first_angle(&address);
        Ok(address.zone.grid.sector_angle(first, pbn.sector))
    }

    /// The angle where logical sector 0 of a track starts (§2.5, see `angle_of`).
    #[inline]
    fn first_angle(&self, address: &TrackAddress) -> u32 {
        let &TrackAddress {
            zone,
            cylinder,
            index,
        } = address;
        let spt = u64::from(zone.sectors_per_track);
        let surfaces = u64::from(self.surfaces);
        let grid = zone.grid;
        let mut angle = zone.first_block_angle;
        angle = grid.add_steps(
            angle,
            index + (surfaces - 1) * cylinder,
            zone.track_skew_angle,
        );
        angle = grid.add_steps(angle, cylinder, zone.cylinder_skew_angle);
        let cutoff = match self.scheme {
            SparingScheme::SectorsPerCylinder => Some(cylinder * surfaces * spt),
            SparingScheme::SectorsPerTrack => Some((cylinder * surfaces + index) * spt),
            _ => None,
        };
        let slips = zone.sparing.slips();
        match cutoff {
            Some(cutoff) if !slips.is_empty() => {
                let earlier = slips.partition_point(|&s| s < cutoff);
                grid.add_sectors(angle, earlier as u64)
            }
            _ => angle,
        }
    }
}

fn check_geometry(spec: &ZonedLayoutSpec) -> Result<(), ZonedProblem> {
    let invalid = |m: String| Err(ZonedProblem::whole(LayoutError::Invalid(m)));
    if spec.surfaces == 0 || spec.cylinders == 0 || spec.zones.is_empty() {
        return invalid("a zoned layout needs surfaces, cylinders and zones".into());
    }
    if spec.sparing == SparingScheme::SectorsPerCylinderRange && spec.sparing_range_cylinders == 0 {
        return invalid("sparing_range_cylinders must be at least 1 for scheme 8".into());
    }
    let last_allowed = spec.cylinders.saturating_add(MAX_CYLINDERS_PAST_COUNT - 1);
    for (index, zone) in spec.zones.iter().enumerate() {
        let problem = |text: String| Err(ZonedProblem::in_zone(index, zone, &text));
        if zone.first_cylinder > zone.last_cylinder {
            return problem("the cylinder range is reversed".into());
        }
        if zone.last_cylinder > last_allowed {
            return problem(format!(
                "ends past the drive's {} cylinders (0-{}); a zone may end at most \
                 {MAX_CYLINDERS_PAST_COUNT} cylinder past them",
                spec.cylinders,
                spec.cylinders - 1
            ));
        }
        let spt = zone.sectors_per_track;
        for (what, sectors) in [
            ("first-block offset", zone.first_block_offset_sectors),
            ("track skew", zone.track_skew_sectors),
            ("cylinder skew", zone.cylinder_skew_sectors),
        ] {
            if spt > 0 && sectors > spt {
                return problem(format!(
                    "{what} of {sectors} sectors is longer than the zone's {spt}-sector track"
                ));
            }
        }
    }
    // Zones in cylinder order, each with its index in the spec, to find overlaps.
    let mut ranges: Vec<(u32, u32, usize)> = spec
        .zones
        .iter()
        .enumerate()
        .map(|(index, z)| (z.first_cylinder, z.last_cylinder, index))
        .collect();
    ranges.sort_unstable();
    if let Some(w) = ranges.windows(2).find(|w| w[1].0 <= w[0].1) {
        let later = w[0].2.max(w[1].2);
        return Err(ZonedProblem {
            zone: Some(later),
            error: LayoutError::Invalid(format!(
                "zones {}-{} and {}-{} overlap",
                w[0].0, w[0].1, w[1].0, w[1].1
            )),
        });
    }
    Ok(())
}

/// The sparing regions of a zone under the layout's scheme (notes §2.2, §2.4).
fn region_shape(spec: &ZonedLayoutSpec, zone: &ZoneSpec) -> Result<(RegionShape, u64), String> {
    let spt = u64::from(zone.sectors_per_track);
    let tracks = zone.cylinders() * u64::from(spec.surfaces);
    let sectors = zone.physical_sectors(spec.surfaces);
    let per_cylinder = spt * u64::from(spec.surfaces);
    let shape = |zone_units, region_units, spares| RegionShape {
        zone_units,
        region_units,
        spares_per_region: spares,
        short_region_has_spares: false,
    };
    Ok(match spec.sparing {
        SparingScheme::TracksPerZone => (shape(tracks, tracks, zone.spares), spt),
        SparingScheme::SectorsPerCylinder => (shape(sectors, per_cylinder, zone.spares), 1),
        SparingScheme::SectorsPerTrack => (shape(sectors, spt, zone.spares), 1),
        SparingScheme::SectorsPerZone => (shape(sectors, sectors, zone.spares), 1),
        SparingScheme::SlipToEndOfDisk => {
            if zone.spares != 0 {
                return Err(format!(
                    "scheme 7 needs 0 spares (DiskSim's capacity ignores them), found {}",
                    zone.spares
                ));
            }
            (shape(sectors, sectors, zone.slips.len() as u64), 1)
        }
        SparingScheme::SectorsPerCylinderRange => {
            let range = per_cylinder * u64::from(spec.sparing_range_cylinders);
            (shape(sectors, range, zone.spares), 1)
        }
    })
}

fn build_zone(spec: &ZonedLayoutSpec, zone: &ZoneSpec, first_lbn: u64) -> Result<Zone, String> {
    if zone.sectors_per_track == 0 {
        return Err("sectors_per_track is 0".into());
    }
    let (shape, unit_sectors) = region_shape(spec, zone)?;
    let same_range = spec.sparing == SparingScheme::SectorsPerCylinderRange;
    let sparing = SparingMap::new(shape, &zone.slips, &zone.defects, same_range)?;
    let slots = sparing.total() * unit_sectors;
    let per_cylinder = u64::from(zone.sectors_per_track) * u64::from(spec.surfaces);
    let lbns = slots
        .checked_sub(zone.empty_sectors_at_front)
        .ok_or_else(|| {
            format!(
                "{} empty sectors at the front exceed the zone's {slots} data sectors",
                zone.empty_sectors_at_front
            )
        })?;
    let grid = SectorGrid::new(zone.sectors_per_track);
    Ok(Zone {
        first_cylinder: zone.first_cylinder,
        last_cylinder: zone.last_cylinder,
        sectors_per_track: zone.sectors_per_track,
        first_lbn,
        lbns,
        empty_front_sectors: zone.empty_sectors_at_front,
        unit_sectors: Divisor::new(unit_sectors),
        track_sectors: Divisor::new(u64::from(zone.sectors_per_track)),
        cylinder_sectors: Divisor::new(per_cylinder),
        grid,
        first_block_angle: grid.sectors(zone.first_block_offset_sectors),
        track_skew_angle: grid.sectors(zone.track_skew_sectors),
        cylinder_skew_angle: grid.sectors(zone.cylinder_skew_sectors),
        sparing,
    })
}
