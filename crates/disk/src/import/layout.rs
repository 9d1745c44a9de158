//! `dm_layout_g1` and its `dm_layout_g1_zone`s → [`ZonedLayoutSpec`].

use super::fields::{bad, int_of, ranged, truncated_sectors, Fields, Schema};
use super::ImportError;
use crate::layout::MAX_CYLINDERS_PAST_COUNT;
use crate::spec::{SparingScheme, SurfaceOrder, ZoneSpec, ZonedLayoutSpec};
use spinstack_param::{Block, Param, ParamFile, Position, Value};
use std::collections::HashMap;

pub(super) const LAYOUT_SCHEMA: Schema = Schema {
    used: &[
        "LBN-to-PBN mapping scheme",
        "Sparing scheme used",
        "Rangesize for sparing",
        "Zones",
        "Skew units",
    ],
    ignored: &[],
};

pub(super) const ZONE_SCHEMA: Schema = Schema {
    used: &[
        "First cylinder number",
        "Last cylinder number",
        "Blocks per track",
        "Offset of first block",
        "Empty space at zone front",
        "Skew for track switch",
        "Skew for cylinder switch",
        "Number of spares",
        "slips",
        "defects",
        "Skew units",
    ],
    ignored: &[],
};

/// Geometry taken from the enclosing `dm_disk` block.
pub(super) struct Geometry {
    pub surfaces: u32,
    pub cylinders: u32,
}

/// The layout spec, and where each of its zones is written (in zone order), so a
/// problem the layout finds in a zone can name the zone's file and line.
pub(super) struct ImportedLayout {
    pub spec: ZonedLayoutSpec,
    pub zone_positions: Vec<Position>,
}

pub(super) fn layout(
    file: &ParamFile,
    defs: &HashMap<&str, &Block>,
    f: &Fields,
    geometry: Geometry,
) -> Result<ImportedLayout, ImportError> {
    reject_revolutions(f)?;
    let surface_order = match f.int("LBN-to-PBN mapping scheme")? {
        0 => SurfaceOrder::Fixed,
        1 => SurfaceOrder::ReverseOnOddZoneCylinder,
        2 => SurfaceOrder::ReverseOnOddCylinder,
        v => {
            return Err(bad(
                f.need("LBN-to-PBN mapping scheme")?,
                format!("mapping scheme must be 0, 1 or 2, found {v}"),
            ))
        }
    };
    let sparing = sparing_scheme(f.need("Sparing scheme used")?)?;
    let range_param = f.need("Rangesize for sparing")?;
    let sparing_range_cylinders: u32 = f.count("Rangesize for sparing")?;
    if sparing == SparingScheme::SectorsPerCylinderRange && sparing_range_cylinders == 0 {
        return Err(bad(
            range_param,
            "must be positive for sparing scheme 8".into(),
        ));
    }
    let zones_param = f.need("Zones")?;
    let items = f.list("Zones")?;
    if items.is_empty() {
        return Err(bad(zones_param, "a layout needs at least one zone".into()));
    }
    let zones = items
        .iter()
        .map(|v| zone(file, defs, zones_param, v, &geometry))
        .collect::<Result<_, _>>()?;
    Ok(ImportedLayout {
        spec: ZonedLayoutSpec {
            surfaces: geometry.surfaces,
            cylinders: geometry.cylinders,
            surface_order,
            sparing,
            sparing_range_cylinders,
            zones,
        },
        zone_positions: items.iter().map(|v| v.pos.clone()).collect(),
    })
}

fn sparing_scheme(p: &Param) -> Result<SparingScheme, ImportError> {
    Ok(match int_of(p)? {
        1 => SparingScheme::TracksPerZone,
        2 => SparingScheme::SectorsPerCylinder,
        3 => SparingScheme::SectorsPerTrack,
        7 => SparingScheme::SlipToEndOfDisk,
        8 => SparingScheme::SectorsPerCylinderRange,
        9 => SparingScheme::SectorsPerZone,
        v => {
            return Err(bad(
                p,
                format!("sparing scheme {v} is not supported (supported: 1, 2, 3, 7, 8, 9; the valid/ drives use only these)"),
            ))
        }
    })
}

/// Skews in revolutions are unused in DiskSim's validation set and not imported.
fn reject_revolutions(f: &Fields) -> Result<(), ImportError> {
    if let Some(p) = f.get("Skew units") {
        match p.value.as_word() {
            Some("sectors") => {}
            Some("revolutions") => {
                return Err(bad(
                    p,
                    "skews in revolutions are not supported; use sectors".into(),
                ))
            }
            _ => return Err(bad(p, "expected 'sectors' or 'revolutions'".into())),
        }
    }
    Ok(())
}

fn zone(
    file: &ParamFile,
    defs: &HashMap<&str, &Block>,
    zones: &Param,
    v: &Value,
    geometry: &Geometry,
) -> Result<ZoneSpec, ImportError> {
    let block = v.as_block().ok_or_else(|| {
        super::fields::bad(
            zones,
            format!("expected dm_layout_g1_zone blocks, found {}", v.kind_name()),
        )
    })?;
    if file.base_type(defs, &block.type_name) != "dm_layout_g1_zone" {
        return Err(ImportError::at(
            &block.pos,
            Some("Zones"),
            format!(
                "expected a dm_layout_g1_zone block, found '{}'",
                block.type_name
            ),
        ));
    }
    let f = Fields::new(block, file.effective_params(defs, block), &ZONE_SCHEMA)?;
    reject_revolutions(&f)?;
    let skew = |name: &str| f.get(name).map_or(Ok(0), truncated_sectors);
    let first_cylinder: u32 = f.count("First cylinder number")?;
    let last_cylinder: u32 = f.count("Last cylinder number")?;
    if last_cylinder < first_cylinder {
        return Err(bad(
            f.need("Last cylinder number")?,
            format!("is below First cylinder number {first_cylinder}"),
        ));
    }
    // The layout's own bound (zoned.rs), checked here to name the line.
    let last_allowed = geometry
        .cylinders
        .saturating_add(MAX_CYLINDERS_PAST_COUNT - 1);
    if last_cylinder > last_allowed {
        return Err(bad(
            f.need("Last cylinder number")?,
            format!(
                "is past the drive's {} cylinders (Number of cylinders); a zone may end at \
                 most {MAX_CYLINDERS_PAST_COUNT} cylinder past them",
                geometry.cylinders
            ),
        ));
    }
    let sectors_per_track: u32 = f.count_at_most(
        "Blocks per track",
        crate::spec_check::SECTORS_PER_TRACK_MAX,
        "at most 1,048,576 sectors a track: a narrower sector is below the rotation's \
         angle resolution",
    )?;
    if sectors_per_track == 0 {
        return Err(bad(f.need("Blocks per track")?, "must be positive".into()));
    }
    // The layout's own bound (zoned.rs): a skew or offset longer than the track
    // is no position on it.
    let within_track = |name: &str, sectors: u32| match f.get(name) {
        Some(p) if sectors > sectors_per_track => Err(bad(
            p,
            format!("{sectors} sectors is longer than the zone's {sectors_per_track}-sector track"),
        )),
        _ => Ok(sectors),
    };
    let offset = truncated_sectors(f.need("Offset of first block")?)?;
    Ok(ZoneSpec {
        first_cylinder,
        last_cylinder,
        sectors_per_track,
        first_block_offset_sectors: within_track("Offset of first block", offset)?,
        empty_sectors_at_front: f.count("Empty space at zone front")?,
        track_skew_sectors: within_track("Skew for track switch", skew("Skew for track switch")?)?,
        cylinder_skew_sectors: within_track(
            "Skew for cylinder switch",
            skew("Skew for cylinder switch")?,
        )?,
        spares: f.count("Number of spares")?,
        slips: unit_list(f.need("slips")?)?,
        defects: defect_pairs(f.need("defects")?)?,
    })
}

/// A list of non-negative integers (zone-relative tracks or sectors).
fn unit_list(p: &Param) -> Result<Vec<u64>, ImportError> {
    let items = p
        .value
        .as_list()
        .ok_or_else(|| bad(p, format!("expected a list, found {}", p.value.kind_name())))?;
    items
        .iter()
        .map(|v| {
            let item = Param {
                name: p.name.clone(),
                value: v.clone(),
                pos: v.pos.clone(),
            };
            ranged(&item, int_of(&item)?, "a non-negative integer")
        })
        .collect()
}

fn defect_pairs(p: &Param) -> Result<Vec<(u64, u64)>, ImportError> {
    let flat = unit_list(p)?;
    if flat.len() % 2 != 0 {
        return Err(bad(
            p,
            format!(
                "expected (defective, replacement) pairs, found {} numbers",
                flat.len()
            ),
        ));
    }
    Ok(flat.chunks_exact(2).map(|c| (c[0], c[1])).collect())
}
