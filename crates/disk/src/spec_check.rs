//! Range checks on every time in a [`DriveSpec`], run where specs come in from
//! files (catalog TOML, DiskSim import) so that a hostile or mistyped value is an
//! error naming the field, not a panic or an overflow deep in the timing model.
//!
//! The rule is uniform: every `*_ms` figure (and every element of an `*_ms` list)
//! is finite, at most [`TIME_MS_MAX`] in magnitude, and not negative — except the
//! fields in [`NEGATIVE_ALLOWED_MS`], which DiskSim's validated drives really set
//! below zero (dec_rz26 and hp_c2490a shorten write seeks with a negative write
//! settle). The walk goes over the spec's serialized form, so a field added later
//! is covered without touching this file.

use crate::spec::DriveSpec;

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
