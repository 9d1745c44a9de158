//! The sparing model of one zone, common to every DiskSim sparing scheme.
//!
//! A zone is a run of *units* in physical order (sectors; whole tracks for
//! scheme 1). Units are grouped into *regions* (the whole zone for schemes
//! 1, 7 and 9, a cylinder for 2, a track for 3, a range of cylinders for 8).
//! Each region offers `nominal` slots to the zone's *virtual index* `v`
//! (zone-relative LBN plus the empty space at the zone front) and keeps the
//! rest of its units as spares at its end. Slipped units are skipped: a
//! region's data fills its good (non-slipped) units in order, so slips push
//! data into the region's spares. When a region has more slips than spares,
//! its last slots carry into the next region ahead of that region's own data;
//! a carry out of the zone's last region is an invalid layout.
//!
//! With a sorted slip list and no region overflow this is exactly what
//! DiskSim's `ltop`/`ptol` functions compute (notes §2.4); where DiskSim
//! diverges from it (scheme 2's aliasing, unsorted slip lists) see
//! `zoned.rs`. Every query is O(log slips); zones without slips are O(1).

use super::divide::Divisor;

/// Up to this many slips in a zone, slip counts are a branch-free scan: on
/// random addresses it beats a binary search, whose branches mispredict.
const LINEAR_SLIPS: usize = 32;

/// Remapped defects of a zone, in units: lookups both ways.
#[derive(Clone, Debug, Default)]
struct Defects {
    /// (defective unit, replacement unit), sorted by defective unit.
    by_defect: Vec<(u64, u64)>,
    /// (replacement unit, defective unit), sorted by replacement unit.
    by_replacement: Vec<(u64, u64)>,
}

/// What a unit holds, before the caller turns the virtual index into an LBN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum UnitContent {
    /// Holds the data of virtual unit index `v`.
    Data(u64),
    /// Slipped or an unused spare.
    Unused,
    /// A defective unit whose data lives in its replacement.
    Remapped,
}

/// The shape of a zone's sparing regions, in units.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RegionShape {
    pub zone_units: u64,
    /// Units in one full region; the last region may be shorter.
    pub region_units: u64,
    /// Spare units at the end of each full region.
    pub spares_per_region: u64,
    /// Whether a short last region keeps its spares (DiskSim scheme 8 counts
    /// spares only for whole ranges: `spares * (cylinders / rangesize)`).
    pub short_region_has_spares: bool,
}

#[derive(Clone, Debug)]
pub(crate) struct SparingMap {
    zone_units: u64,
    region_units: Divisor,
    regions: u64,
    /// Slots per full region.
    nominal: Divisor,
    /// Slots in the last region.
    last_nominal: u64,
    /// Sorted, distinct slipped units.
    slips: Vec<u64>,
    /// Regions that start early because of a carry: (region, first virtual index).
    carried: Vec<(u64, u64)>,
    /// Virtual units in the zone.
    total: u64,
    defects: Defects,
}

impl SparingMap {
    /// Builds the map; `Err` carries a description of what is inconsistent.
    pub fn new(
        shape: RegionShape,
        slips: &[u64],
        defects: &[(u64, u64)],
        region_of_defect_must_match: bool,
    ) -> Result<SparingMap, String> {
        let mut map = SparingMap::regions_only(shape, slips)?;
        map.compute_carries()?;
        map.defects = map.build_defects(defects, region_of_defect_must_match)?;
        Ok(map)
    }

    fn regions_only(shape: RegionShape, slips: &[u64]) -> Result<SparingMap, String> {
        let RegionShape {
            zone_units,
            region_units,
            spares_per_region,
            short_region_has_spares,
        } = shape;
        if region_units == 0 || zone_units == 0 {
            return Err("zone has no sectors".into());
        }
        if spares_per_region >= region_units {
            return Err(format!(
                "{spares_per_region} spares leave no room for data in a sparing region of {region_units} units"
            ));
        }
        let regions = zone_units.div_ceil(region_units);
        let last_units = zone_units - (regions - 1) * region_units;
        let nominal = region_units - spares_per_region;
        let last_nominal = if last_units == region_units || short_region_has_spares {
            last_units.checked_sub(spares_per_region).ok_or_else(|| {
                format!("{spares_per_region} spares do not fit in the last region of {last_units} units")
            })?
        } else {
            last_units
        };
        let mut sorted = slips.to_vec();
        sorted.sort_unstable();
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            return Err(format!("slip {} is listed twice", w[0]));
        }
        if let Some(&bad) = sorted.last().filter(|&&s| s >= zone_units) {
            return Err(format!(
                "slip {bad} lies beyond the zone's {zone_units} units"
            ));
        }
        Ok(SparingMap {
            zone_units,
            region_units: Divisor::new(region_units),
            regions,
            nominal: Divisor::new(nominal),
            last_nominal,
            slips: sorted,
            carried: Vec::new(),
            total: (regions - 1) * nominal + last_nominal,
            defects: Defects::default(),
        })
    }

    /// Virtual units (slots) the zone offers, including its empty front.
    pub fn total(&self) -> u64 {
        self.total
    }

    pub fn slips(&self) -> &[u64] {
        &self.slips
    }

    pub fn has_defects(&self) -> bool {
        !self.defects.by_defect.is_empty()
    }

    fn region_size(&self, region: u64) -> u64 {
        if region + 1 == self.regions {
            self.zone_units - region * self.region_units.get()
        } else {
            self.region_units.get()
        }
    }

    fn region_nominal(&self, region: u64) -> u64 {
        if region + 1 == self.regions {
            self.last_nominal
        } else {
            self.nominal.get()
        }
    }

    /// Slipped units strictly below `unit`.
    #[inline]
    fn slips_below(&self, unit: u64) -> u64 {
        if self.slips.len() <= LINEAR_SLIPS {
            return self.slips.iter().map(|&s| u64::from(s < unit)).sum();
        }
        self.slips.partition_point(|&s| s < unit) as u64
    }

    /// Walks the regions holding slips, propagating overflow into later regions.
    fn compute_carries(&mut self) -> Result<(), String> {
        let mut carry = 0u64;
        let mut region = match self.slips.first() {
            Some(&s) => self.region_units.div(s),
            None => return Ok(()),
        };
        loop {
            let base = region * self.region_units.get();
            let size = self.region_size(region);
            let slipped = self.slips_below(base + size) - self.slips_below(base);
            if carry > 0 {
                self.carried
                    .push((region, region * self.nominal.get() - carry));
            }
            let wanted = self.region_nominal(region) + carry;
            let stored = wanted.min(size - slipped);
            carry = wanted - stored;
            if region + 1 == self.regions {
                break;
            }
            if carry > 0 {
                region += 1;
            } else {
                let next = self.slips_below(base + size) as usize;
                match self.slips.get(next) {
                    Some(&s) => region = self.region_units.div(s),
                    None => break,
                }
            }
        }
        if carry > 0 {
            return Err(format!(
                "{carry} units more are slipped than the zone's spares can absorb"
            ));
        }
        Ok(())
    }

    /// The region holding `unit` (`unit < zone_units`).
    fn region_of_unit(&self, unit: u64) -> u64 {
        if self.regions == 1 {
            return 0;
        }
        self.region_units.div(unit).min(self.regions - 1)
    }

    /// First virtual index stored in `region` (`region == regions` gives the total).
    fn region_start(&self, region: u64) -> u64 {
        if region >= self.regions {
            return self.total;
        }
        if !self.carried.is_empty() {
            if let Ok(i) = self.carried.binary_search_by_key(&region, |&(r, _)| r) {
                return self.carried[i].1;
            }
        }
        region * self.nominal.get()
    }

    /// Good (non-slipped) units before the start of `region`.
    fn good_before_region(&self, region: u64) -> u64 {
        let base = region * self.region_units.get();
        base - self.slips_below(base)
    }

    /// The `good`-th (0-based) non-slipped unit of the zone.
    #[inline]
    fn select_good(&self, good: u64) -> u64 {
        if self.slips.is_empty() {
            return good;
        }
        // slips[i] - i is non-decreasing for sorted distinct slips; the slips
        // counted are exactly those at or before the answer.
        if self.slips.len() <= LINEAR_SLIPS {
            let skipped: u64 = (0u64..)
                .zip(&self.slips)
                .map(|(i, &s)| u64::from(s - i <= good))
                .sum();
            return good + skipped;
        }
        let (mut low, mut high) = (0usize, self.slips.len());
        while low < high {
            let mid = low + (high - low) / 2;
            if self.slips[mid] - mid as u64 <= good {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        let skipped = low;
        good + skipped as u64
    }

    /// The region holding virtual index `v` (`v < total`).
    fn region_of_virtual(&self, v: u64) -> u64 {
        if self.regions == 1 {
            return 0;
        }
        let mut region = self.nominal.div(v).min(self.regions - 1);
        if !self.carried.is_empty() {
            while region + 1 < self.regions && self.region_start(region + 1) <= v {
                region += 1;
            }
        }
        region
    }

    /// The unit where virtual index `v` lives before defect remapping.
    #[inline]
    pub fn home_unit(&self, v: u64) -> u64 {
        debug_assert!(v < self.total);
        if self.regions == 1 {
            // One region (schemes 1, 7, 9 and small zones): no carries, and
            // the region's data fills its good units from unit 0.
            return self.select_good(v);
        }
        self.home_unit_in_regions(v)
    }

    fn home_unit_in_regions(&self, v: u64) -> u64 {
        let region = self.region_of_virtual(v);
        if self.slips.is_empty() {
            // No slips, hence no carries: slots fill each region from its start.
            return region * self.region_units.get() + (v - region * self.nominal.get());
        }
        let good = self.good_before_region(region) + (v - self.region_start(region));
        self.select_good(good)
    }

    /// The unit where virtual index `v` is stored (after defect remapping).
    pub fn physical_unit(&self, v: u64) -> u64 {
        let home = self.home_unit(v);
        self.replacement_of(home).unwrap_or(home)
    }

    fn replacement_of(&self, unit: u64) -> Option<u64> {
        let list = &self.defects.by_defect;
        if list.is_empty() {
            return None;
        }
        list.binary_search_by_key(&unit, |&(d, _)| d)
            .ok()
            .map(|i| list[i].1)
    }

    /// What `unit` holds, ignoring defect remapping.
    pub fn home_content(&self, unit: u64) -> UnitContent {
        debug_assert!(unit < self.zone_units);
        if self.slips.binary_search(&unit).is_ok() {
            return UnitContent::Unused;
        }
        let region = self.region_of_unit(unit);
        let rel = unit - self.slips_below(unit) - self.good_before_region(region);
        let start = self.region_start(region);
        if rel >= self.region_start(region + 1) - start {
            UnitContent::Unused
        } else {
            UnitContent::Data(start + rel)
        }
    }

    /// What `unit` holds, with defect remapping.
    pub fn content(&self, unit: u64) -> UnitContent {
        if self.defects.by_defect.is_empty() {
            return self.home_content(unit);
        }
        if self.replacement_of(unit).is_some() {
            return UnitContent::Remapped;
        }
        let list = &self.defects.by_replacement;
        match list.binary_search_by_key(&unit, |&(r, _)| r) {
            Ok(i) => self.home_content(list[i].1),
            Err(_) => self.home_content(unit),
        }
    }

    /// Virtual indices whose home unit is below `unit` (`unit <= zone_units`).
    #[inline]
    pub fn virtual_below(&self, unit: u64) -> u64 {
        if unit >= self.zone_units {
            return self.total;
        }
        if self.regions == 1 {
            // The general case below with region 0: it starts at virtual 0
            // and ends at `total`, and no unit is slipped below unit 0.
            return (unit - self.slips_below(unit)).min(self.total);
        }
        let region = self.region_of_unit(unit);
        let rel = unit - self.slips_below(unit) - self.good_before_region(region);
        let start = self.region_start(region);
        start + rel.min(self.region_start(region + 1) - start)
    }

    /// Validates and indexes the (defective, replacement) pairs. Pairs whose
    /// replacement equals the defect are ignored, as DiskSim's `ltop` does.
    fn build_defects(&self, pairs: &[(u64, u64)], same_region: bool) -> Result<Defects, String> {
        let mut by_defect: Vec<(u64, u64)> =
            pairs.iter().copied().filter(|(d, r)| d != r).collect();
        by_defect.sort_unstable();
        let mut by_replacement: Vec<(u64, u64)> = by_defect.iter().map(|&(d, r)| (r, d)).collect();
        by_replacement.sort_unstable();
        if let Some(w) = by_defect.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(format!("defect {} is listed twice", w[0].0));
        }
        if let Some(w) = by_replacement.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(format!("unit {} replaces two defects", w[0].0));
        }
        for &(defect, replacement) in &by_defect {
            self.check_defect_pair(defect, replacement, same_region)?;
            if by_defect
                .binary_search_by_key(&replacement, |&(d, _)| d)
                .is_ok()
            {
                return Err(format!("replacement {replacement} is itself defective"));
            }
        }
        Ok(Defects {
            by_defect,
            by_replacement,
        })
    }

    fn check_defect_pair(
        &self,
        defect: u64,
        replacement: u64,
        same_region: bool,
    ) -> Result<(), String> {
        let pair = format!("defect ({defect}, {replacement})");
        if defect >= self.zone_units || replacement >= self.zone_units {
            return Err(format!(
                "{pair} lies beyond the zone's {} units",
                self.zone_units
            ));
        }
        if !matches!(self.home_content(defect), UnitContent::Data(_)) {
            return Err(format!(
                "{pair}: the defective unit holds no data (slipped or spare)"
            ));
        }
        if self.home_content(replacement) != UnitContent::Unused
            || self.slips.binary_search(&replacement).is_ok()
        {
            return Err(format!("{pair}: the replacement is not an unused spare"));
        }
        if same_region && self.region_of_unit(defect) != self.region_of_unit(replacement) {
            return Err(format!(
                "{pair}: the replacement must be in the defect's sparing range"
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(zone_units: u64, region_units: u64, spares: u64) -> RegionShape {
        RegionShape {
            zone_units,
            region_units,
            spares_per_region: spares,
            short_region_has_spares: true,
        }
    }

    // Proves slips push data into the region's spares: regions of 10 units with
    // 2 spares (8 slots). A slip at unit 3 moves slots 3..8 up by one, so slot 7
    // lands on unit 8 (the first spare) and unit 9 stays a spare.
    #[test]
    fn slip_pushes_into_spare() {
        let map = SparingMap::new(shape(30, 10, 2), &[3], &[], false).unwrap();
        assert_eq!(map.total(), 24);
        let homes: Vec<u64> = (0..8).map(|v| map.home_unit(v)).collect();
        assert_eq!(homes, vec![0, 1, 2, 4, 5, 6, 7, 8]);
        assert_eq!(map.home_unit(8), 10);
        assert_eq!(map.home_content(3), UnitContent::Unused);
        assert_eq!(map.home_content(9), UnitContent::Unused);
        assert_eq!(map.home_content(8), UnitContent::Data(7));
        assert_eq!(map.virtual_below(10), 8);
        assert_eq!(map.virtual_below(9), 8);
        assert_eq!(map.virtual_below(4), 3);
    }

    // Proves the carry: region 0 (units 0..10, 8 slots) has 3 slips at 0,1,2, so
    // only 7 good units: slot 7 carries to region 1, which then starts at v = 7
    // and stores v 7..16 (9 values) in its 10 good units; region 2 is untouched.
    #[test]
    fn overflow_carries_into_next_region() {
        let map = SparingMap::new(shape(30, 10, 2), &[0, 1, 2], &[], false).unwrap();
        assert_eq!(map.home_unit(0), 3);
        assert_eq!(map.home_unit(6), 9);
        assert_eq!(map.home_unit(7), 10);
        assert_eq!(map.home_unit(15), 18);
        assert_eq!(map.home_unit(16), 20);
        assert_eq!(map.home_content(19), UnitContent::Unused);
        assert_eq!(map.home_content(10), UnitContent::Data(7));
        assert_eq!(map.virtual_below(20), 16);
    }

    // Proves that overflow out of the zone's last region is rejected.
    #[test]
    fn overflow_at_zone_end_is_an_error() {
        assert!(SparingMap::new(shape(20, 10, 2), &[11, 12, 13], &[], false).is_err());
    }

    // Proves defect remapping both ways: unit 4 (v 4) is defective and replaced
    // by spare unit 9; unit 4 then reads as Remapped and unit 9 holds v 4.
    #[test]
    fn defect_remaps_to_spare() {
        let map = SparingMap::new(shape(10, 10, 2), &[], &[(4, 9)], false).unwrap();
        assert_eq!(map.physical_unit(4), 9);
        assert_eq!(map.content(4), UnitContent::Remapped);
        assert_eq!(map.content(9), UnitContent::Data(4));
        assert!(SparingMap::new(shape(10, 10, 2), &[], &[(4, 5)], false).is_err());
    }
}
