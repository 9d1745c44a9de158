//! `dm_mech_g1` → [`MechanicsSpec`].

use super::fields::{bad, duration_of, float_of, int_of, Fields, Schema};
use super::seek::load_seek_file;
use super::ImportError;
use crate::spec::{HplSeek, MechanicsSpec, SeekSpec};
use spinstack_param::{Param, Value};
use std::path::{Path, PathBuf};

pub(super) const MECH_SCHEMA: Schema = Schema {
    used: &[
        "Seek type",
        "Full seek curve",
        "HPL seek equation values",
        "First ten seek times",
        "Head switch time",
        "Add. write settling delay",
        "Rotation speed (in rpms)",
        "Constant seek time",
    ],
    // Stored by DiskSim but read by nothing (Access time type, Percent error), or
    // feeding only the constant/linear/curve seek types, which are not imported.
    ignored: &[
        "Access time type",
        "Percent error in rpms",
        "Single cylinder seek time",
        "Full strobe seek time",
        "Average seek time",
    ],
};

/// Which seek function the block selects, in DiskSim's file-order semantics:
/// `Full seek curve` forces `extracted`, and a later `Seek type` overrides it.
enum SeekKind<'a> {
    Extracted(Option<&'a Param>),
    Hpl,
    HplPlus10,
}

pub(super) fn mechanics(
    f: &Fields,
    provenance: &mut Vec<String>,
) -> Result<MechanicsSpec, ImportError> {
    if let Some(p) = f.get("Constant seek time") {
        return Err(bad(
            p,
            "the constant seek type is not supported (DiskSim truncates it to whole ms)".into(),
        ));
    }
    let rpm_param = f.need("Rotation speed (in rpms)")?;
    let rpm: u32 = f.count("Rotation speed (in rpms)")?;
    use crate::spec_check::{RPM_MAX, RPM_MIN, RPM_RULE};
    if !(RPM_MIN..=RPM_MAX).contains(&rpm) {
        return Err(bad(rpm_param, format!("{rpm} is out of range: {RPM_RULE}")));
    }
    // Read by DiskSim's other seek types only; a negative or absurd time is still
    // an error in the file (inputs finding 16).
    f.unused_durations(&[
        "Single cylinder seek time",
        "Full strobe seek time",
        "Average seek time",
    ])?;
    let seek = seek_spec(f, provenance)?;
    let spec = MechanicsSpec {
        rpm,
        seek,
        head_switch_ms: f.duration_ms("Head switch time")?,
        write_settle_ms: write_settle(f)?,
    };
    if let Err(error) = crate::spec_check::check_write_settle(&spec) {
        return Err(bad(
            f.need("Add. write settling delay")?,
            format!("{} ms: {}", error.value, error.rule),
        ));
    }
    Ok(spec)
}

/// `Add. write settling delay`: a time that may be negative (DiskSim's dec_rz26
/// and hp_c2490a shorten write seeks with one), finite and within the time bound.
fn write_settle(f: &Fields) -> Result<f64, ImportError> {
    let max = crate::spec_check::TIME_MS_MAX;
    f.float_in(
        "Add. write settling delay",
        -max..=max,
        "expected a time of -10,000,000 to 10,000,000 ms",
    )
}

fn seek_kind<'a>(f: &Fields<'a>) -> Result<SeekKind<'a>, ImportError> {
    let mut kind = None;
    let mut ordered: Vec<&Param> = ["Seek type", "Full seek curve"]
        .iter()
        .filter_map(|n| f.get(n))
        .collect();
    ordered.sort_by_key(|p| (p.pos.file.to_path_buf(), p.pos.line));
    for p in ordered {
        kind = Some(if p.name == "Full seek curve" {
            SeekKind::Extracted(Some(p))
        } else {
            match p.value.as_word() {
                Some("extracted") => SeekKind::Extracted(f.get("Full seek curve")),
                // Its values are required even when a later `Full seek curve`
                // makes the type extracted: a file that names hpl without them
                // would otherwise run a curve it does not mean (inputs finding 16).
                Some(word @ ("hpl" | "hplplus10")) => {
                    let needed: &[&str] = match word {
                        "hpl" => &["HPL seek equation values"],
                        _ => &["HPL seek equation values", "First ten seek times"],
                    };
                    if let Some(missing) = needed.iter().find(|name| f.get(name).is_none()) {
                        return Err(bad(
                            p,
                            format!("seek type '{word}' needs \"{missing}\", which is not set"),
                        ));
                    }
                    match word {
                        "hpl" => SeekKind::Hpl,
                        _ => SeekKind::HplPlus10,
                    }
                }
                Some(other @ ("constant" | "linear" | "curve")) => {
                    return Err(bad(
                        p,
                        format!(
                        "seek type '{other}' is not supported (use extracted, hpl or hplplus10)"
                    ),
                    ))
                }
                _ => {
                    return Err(bad(
                        p,
                        "expected one of extracted, hpl, hplplus10, constant, linear, curve".into(),
                    ))
                }
            }
        });
    }
    kind.ok_or_else(|| {
        ImportError::at(
            &f.pos,
            Some("Seek type"),
            format!("required parameter missing from {}", f.label),
        )
    })
}

fn seek_spec(f: &Fields, provenance: &mut Vec<String>) -> Result<SeekSpec, ImportError> {
    match seek_kind(f)? {
        SeekKind::Extracted(curve) => {
            let curve = match curve {
                Some(p) => p,
                None => f.need("Full seek curve")?,
            };
            let path = seek_path(curve)?;
            let points = load_seek_file(&path)?;
            let shown = path.file_name().map_or(path.display().to_string(), |n| {
                n.to_string_lossy().into_owned()
            });
            // DiskSim reads these whatever the seek type: they must still be
            // well formed.
            if let Some(p) = f.get("HPL seek equation values") {
                hpl(p)?;
            }
            if let Some(p) = f.get("First ten seek times") {
                first_ten(p)?;
            }
            for unused in ["HPL seek equation values", "First ten seek times"] {
                if f.get(unused).is_some() {
                    provenance.push(format!("ignored: {unused} (the seek type is extracted)"));
                }
            }
            provenance.push(format!(
                "seek curve: {shown} ({} points, `Full seek curve`)",
                points.len()
            ));
            Ok(SeekSpec::Extracted { points })
        }
        SeekKind::Hpl => Ok(SeekSpec::Hpl(hpl(f.need("HPL seek equation values")?)?)),
        SeekKind::HplPlus10 => Ok(SeekSpec::HplPlus10 {
            hpl: hpl(f.need("HPL seek equation values")?)?,
            first_ten_ms: first_ten(f.need("First ten seek times")?)?,
        }),
    }
}

/// The seek file, next to the file holding the parameter, else in `LP_PATH`.
fn seek_path(p: &Param) -> Result<PathBuf, ImportError> {
    let name = p.value.as_word().ok_or_else(|| {
        bad(
            p,
            format!("expected a file name, found {}", p.value.kind_name()),
        )
    })?;
    let mut dirs = vec![p
        .pos
        .file()
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()];
    if let Some(lp_path) = std::env::var_os("LP_PATH") {
        dirs.extend(std::env::split_paths(&lp_path));
    }
    dirs.iter()
        .map(|d| d.join(name))
        .find(|c| c.is_file())
        .ok_or_else(|| {
            bad(
                p,
                format!(
                    "seek curve file '{name}' not found next to {}",
                    p.pos.file().display()
                ),
            )
        })
}

fn list_of(p: &Param, len: usize) -> Result<&[Value], ImportError> {
    match p.value.as_list() {
        Some(items) if items.len() == len => Ok(items),
        Some(items) => Err(bad(
            p,
            format!("expected {len} values, found {}", items.len()),
        )),
        None => Err(bad(
            p,
            format!("expected a list, found {}", p.value.kind_name()),
        )),
    }
}

/// List item `v` of `p` as a parameter of its own (its own position).
fn item(p: &Param, v: &Value) -> Param {
    Param {
        name: p.name.clone(),
        value: v.clone(),
        pos: v.pos.clone(),
    }
}

/// A list item that is a time ([`duration_of`]).
fn item_duration(p: &Param, v: &Value) -> Result<f64, ImportError> {
    duration_of(&item(p, v))
}

/// `[boundary cylinders (integer), V2, V3, V4, V5, V6]`; V6 = -1 means "no
/// single-cylinder override".
fn hpl(p: &Param) -> Result<HplSeek, ImportError> {
    let v = list_of(p, 6)?;
    let first = item(p, &v[0]);
    let boundary = int_of(&first)?;
    let boundary_cylinders = u32::try_from(boundary).map_err(|_| {
        bad(
            &first,
            format!("boundary must be a non-negative cylinder count, found {boundary}"),
        )
    })?;
    let single = match float_of(&item(p, &v[5]))? {
        -1.0 => None,
        _ => Some(item_duration(p, &v[5])?),
    };
    Ok(HplSeek {
        boundary_cylinders,
        short_base_ms: item_duration(p, &v[1])?,
        short_sqrt_ms: item_duration(p, &v[2])?,
        long_base_ms: item_duration(p, &v[3])?,
        long_per_cylinder_ms: item_duration(p, &v[4])?,
        single_cylinder_ms: single,
    })
}

fn first_ten(p: &Param) -> Result<Vec<f64>, ImportError> {
    list_of(p, 10)?
        .iter()
        .map(|v| item_duration(p, v))
        .collect()
}
