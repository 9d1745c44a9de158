//! Range checks on every time in a [`DriveSpec`], and on the counts and ratios the
//! model sizes tables or divides by ([`check_counts`]), run where specs come in from
//! files (catalog TOML, DiskSim import) so that a hostile or mistyped value is an
//! error naming the field, not a panic, an overflow or an allocation of gigabytes
//! deep in the timing model.
//!
//! The rule is uniform: every `*_ms` figure (and every element of an `*_ms` list)
//! is finite, at most [`TIME_MS_MAX`] in magnitude, and not negative — except the
//! fields in [`NEGATIVE_ALLOWED_MS`], which DiskSim's validated drives really set
//! below zero (dec_rz26 and hp_c2490a shorten write seeks with a negative write
//! settle). The walk goes over the spec's serialized form, so a field added later
//! is covered without touching this file.

use crate::spec::{DriveSpec, LayoutSpec, MechanicsSpec};

/// Most sectors on one track. The rotation's angle arithmetic is DiskSim's: a
/// transfer time is computed from the angle shifted right by 12 bits, 2^20 steps a
/// revolution, so a sector narrower than one step (more than 2^20 on a track) takes
/// no time and divides by zero. Real tracks hold a few thousand sectors.
pub const SECTORS_PER_TRACK_MAX: u32 = 1 << 20;
/// Most recording surfaces: far above any drive (a 3.5-inch drive has up to about
/// 20), low enough that tables per surface stay small.
pub const SURFACES_MAX: u32 = 1024;
/// Fastest spindle: no rotating drive turns above 15,000 rpm; this leaves room and
/// keeps a revolution many sectors long in picoseconds.
pub const RPM_MAX: u32 = 100_000;
/// Slowest spindle: real drives turn at 3,600 rpm (1.8-inch and old drives) to
/// 15,000, and multi-speed (DRPM) studies go no lower than 3,600. A thousand
/// leaves room for what-if studies below any product while refusing the absurd:
/// at `rpm = 1` a revolution takes a minute and every request tens of seconds.
pub const RPM_MIN: u32 = 1_000;
/// What [`RPM_MIN`] and [`RPM_MAX`] allow, as said in errors.
pub const RPM_RULE: &str = "between 1,000 and 100,000 rpm (drives turn at 3,600 to 15,000)";
/// Most buffer segments (each is a table entry; drives have 1 to a few dozen).
pub const CACHE_SEGMENTS_MAX: u32 = 4096;
/// Largest buffer segment: 2^24 sectors, 8 GiB.
pub const SEGMENT_SECTORS_MAX: u32 = 1 << 24;
/// Deepest tagged queue (SCSI allows 256 tags a target; some models set more).
pub const QUEUE_LENGTH_MAX: u32 = 65_536;

/// Largest magnitude of any time in a spec: 10,000 s. Far above any drive figure
/// (a spin-up is seconds), and far enough below the picosecond `i64` range
/// (about 9.2 × 10^9 ms) that sums of many such times cannot overflow.
pub const TIME_MS_MAX: f64 = 1.0e7;

/// Fields that may be negative, with the reason in the module doc.
pub const NEGATIVE_ALLOWED_MS: &[&str] = &["write_settle_ms"];

/// A time field out of range: its path in the spec (`firmware.bus_sector_transfer_ms`),
/// its value and the rule it breaks.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("`{path}` = {value}: {rule}")]
pub struct TimeFieldError {
    pub path: String,
    pub value: f64,
    pub rule: &'static str,
}

impl TimeFieldError {
    /// The field's own name (the last path component), for finding it in a file.
    pub fn field_name(&self) -> &str {
        field_name_of(&self.path)
    }
}

/// `firmware.overheads.read_completion_ms` -> `read_completion_ms`;
/// `mechanics.first_ten_ms[3]` -> `first_ten_ms`.
fn field_name_of(path: &str) -> &str {
    let last = path.rsplit('.').next().unwrap_or(path);
    last.split('[').next().unwrap_or(last)
}

/// Check every time in `spec`; the first field out of range is the error.
pub fn check_times(spec: &DriveSpec) -> Result<(), TimeFieldError> {
    // The TOML tree keeps NaN and infinities as floats (JSON would turn them into
    // null, indistinguishable from an absent optional field) and omits `None`s.
    match toml::Value::try_from(spec) {
        Ok(tree) => walk(&tree, "", false),
        // Serialization refuses nothing a spec can hold; should it ever, the timing
        // model's own checks still apply.
        Err(_) => Ok(()),
    }
}

fn walk(value: &toml::Value, path: &str, in_time: bool) -> Result<(), TimeFieldError> {
    use toml::Value;
    match value {
        Value::Table(fields) => fields.iter().try_for_each(|(key, child)| {
            let child_path = if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            };
            walk(child, &child_path, key.ends_with("_ms"))
        }),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .try_for_each(|(index, item)| walk(item, &format!("{path}[{index}]"), in_time)),
        Value::Float(number) if in_time => check_one(path, *number),
        Value::Integer(number) if in_time => check_one(path, *number as f64),
        _ => Ok(()),
    }
}

fn check_one(path: &str, value: f64) -> Result<(), TimeFieldError> {
    let error = |rule| {
        Err(TimeFieldError {
            path: path.to_string(),
            value,
            rule,
        })
    };
    let name = field_name_of(path);
    if !value.is_finite() {
        return error("a time must be a finite number");
    }
    if value.abs() > TIME_MS_MAX {
        return error("a time must be at most 10,000,000 ms (10,000 s) in magnitude");
    }
    if value < 0.0 && !NEGATIVE_ALLOWED_MS.contains(&name) {
        return error("a time must not be negative (only write_settle_ms may be)");
    }
    Ok(())
}

/// Check the counts and ratios of `spec` against what the model can hold: track
/// sizes, surfaces and spindle speed against the angle arithmetic; buffer segments,
/// segment size and queue depth against the tables sized from them; water marks and
/// the overhead scale against their meaning. The first field out of range is the
/// error (with the same shape as a time's).
pub fn check_counts(spec: &DriveSpec) -> Result<(), TimeFieldError> {
    let error = |path: &str, value: f64, rule: &'static str| {
        Err(TimeFieldError {
            path: path.to_string(),
            value,
            rule,
        })
    };
    // The largest track of each zone, found before any path is formatted (this runs
    // for every drive built).
    let (surfaces, largest_track) = match &spec.layout {
        LayoutSpec::Zoned(zoned) => (
            zoned.surfaces,
            zoned
                .zones
                .iter()
                .enumerate()
                .map(|(i, z)| (i, z.sectors_per_track, "sectors_per_track"))
                .max_by_key(|&(_, spt, _)| spt),
        ),
        LayoutSpec::Serpentine(serpentine) => (
            serpentine.surfaces,
            serpentine
                .zones
                .iter()
                .enumerate()
                .flat_map(|(i, z)| {
                    z.sectors_per_track_by_surface
                        .iter()
                        .map(move |&spt| (i, spt, "sectors_per_track_by_surface"))
                })
                .max_by_key(|&(_, spt, _)| spt),
        ),
    };
    if surfaces > SURFACES_MAX {
        return error(
            "layout.surfaces",
            f64::from(surfaces),
            "at most 1024 surfaces (a real drive has up to about 20)",
        );
    }
    if let Some((zone, spt, field)) =
        largest_track.filter(|&(_, spt, _)| spt > SECTORS_PER_TRACK_MAX)
    {
        return error(
            &format!("layout.zones[{zone}].{field}"),
            f64::from(spt),
            "at most 1,048,576 sectors a track: a narrower sector is below the rotation's \
             angle resolution (2^20 steps a revolution) and would take no time",
        );
    }
    if !(RPM_MIN..=RPM_MAX).contains(&spec.mechanics.rpm) {
        return error("mechanics.rpm", f64::from(spec.mechanics.rpm), RPM_RULE);
    }
    let firmware = &spec.firmware;
    let cache = &firmware.cache;
    if cache.segments > CACHE_SEGMENTS_MAX {
        return error(
            "firmware.cache.segments",
            f64::from(cache.segments),
            "at most 4096 buffer segments",
        );
    }
    if cache.segment_sectors > SEGMENT_SECTORS_MAX {
        return error(
            "firmware.cache.segment_sectors",
            f64::from(cache.segment_sectors),
            "at most 16,777,216 sectors (8 GiB) a segment",
        );
    }
    if cache.enabled && (cache.segments == 0 || cache.segment_sectors == 0) {
        let (path, value) = match cache.segments {
            0 => ("firmware.cache.segments", 0.0),
            _ => ("firmware.cache.segment_sectors", 0.0),
        };
        return error(
            path,
            value,
            "an enabled cache needs at least one segment of at least one sector",
        );
    }
    let queue = firmware.queue.max_queue_length;
    if !(1..=QUEUE_LENGTH_MAX).contains(&queue) {
        return error(
            "firmware.queue.max_queue_length",
            f64::from(queue),
            "a drive queues 1 to 65,536 requests",
        );
    }
    for (path, mark) in [
        ("firmware.cache.low_water_mark", cache.low_water_mark),
        ("firmware.cache.high_water_mark", cache.high_water_mark),
    ] {
        if !(0.0..=1.0).contains(&mark) {
            return error(
                path,
                mark,
                "a water mark is a fraction of the buffer, 0 to 1",
            );
        }
    }
    check_write_settle(&spec.mechanics)?;
    let scale = firmware.overhead_time_scale;
    if !(scale.is_finite() && (0.0..=1.0e6).contains(&scale)) {
        return error(
            "firmware.overhead_time_scale",
            scale,
            "a scale factor on the overheads: finite, 0 to 1,000,000",
        );
    }
    Ok(())
}

/// A negative write settle (see the module doc) must be shorter than the
/// one-cylinder seek: the model clamps a write's positioning at zero, so a longer
/// one makes every short write seek free. DiskSim's two negative settles are about
/// half their drive's one-cylinder seek (dec_rz26: -0.483 against 1.014 ms).
pub fn check_write_settle(mechanics: &MechanicsSpec) -> Result<(), TimeFieldError> {
    let settle = mechanics.write_settle_ms;
    if settle >= 0.0 {
        return Ok(());
    }
    // A curve the seek model refuses is reported where the drive is built.
    let Ok(curve) = crate::drive::mechanics::SeekCurve::new(&mechanics.seek) else {
        return Ok(());
    };
    let one_cylinder_ms = curve.seek_ps(1) as f64 / 1e9;
    if -settle >= one_cylinder_ms {
        return Err(TimeFieldError {
            path: "mechanics.write_settle_ms".into(),
            value: settle,
            rule: "a negative write settle must be shorter than the one-cylinder seek, or \
                   every short write seek would take no time",
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::LayoutSpec;

    fn zoned_catalog_drive() -> DriveSpec {
        crate::catalog::get("ultrastar36z15").expect("catalog")
    }

    // Guards input findings 1, 4 and 18 of the hostile test of 2026-11-28: a track of
    // 10^8 sectors divided by zero in the media timing, 4e9 buffer segments aborted on
    // a 128 GB allocation, a queue of 0 requests was accepted. Proves each is refused
    // naming its field, and that every catalog drive passes.
    #[test]
    fn counts_the_model_cannot_hold_are_refused_by_field() {
        for name in crate::catalog::names() {
            let spec = crate::catalog::get(name).unwrap();
            check_counts(&spec).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        let mut spec = zoned_catalog_drive();
        let LayoutSpec::Zoned(zoned) = &mut spec.layout else {
            panic!("zoned")
        };
        zoned.zones[1].sectors_per_track = SECTORS_PER_TRACK_MAX + 1;
        let error = check_counts(&spec).unwrap_err();
        assert_eq!(error.path, "layout.zones[1].sectors_per_track");

        let mut spec = zoned_catalog_drive();
        spec.firmware.cache.segments = 4_000_000_000;
        assert_eq!(
            check_counts(&spec).unwrap_err().path,
            "firmware.cache.segments"
        );

        let mut spec = zoned_catalog_drive();
        spec.firmware.queue.max_queue_length = 0;
        let error = check_counts(&spec).unwrap_err();
        assert_eq!(error.path, "firmware.queue.max_queue_length");

        let mut spec = zoned_catalog_drive();
        spec.firmware.overhead_time_scale = -5.0;
        let error = check_counts(&spec).unwrap_err();
        assert_eq!(error.path, "firmware.overhead_time_scale");

        let mut spec = zoned_catalog_drive();
        spec.firmware.cache.high_water_mark = 2.0;
        let error = check_counts(&spec).unwrap_err();
        assert_eq!(error.path, "firmware.cache.high_water_mark");
    }

    // Proves the track-size bound is the angle arithmetic's: at the bound a sector
    // still takes time; one more sector a track and it would not.
    #[test]
    fn the_track_size_bound_is_where_a_sector_stops_taking_time() {
        let rotation = crate::drive::mechanics::Rotation::from_rpm(10_000);
        let width = |spt: u64| ((1u64 << 32) / spt) as u32;
        let at_bound = u64::from(SECTORS_PER_TRACK_MAX);
        assert!(rotation.xfertime(1, width(at_bound)) > 0);
        assert_eq!(rotation.xfertime(1, width(at_bound + 1)), 0);
    }
}
