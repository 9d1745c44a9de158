//! Typed, checked access to one block's parameters: every failure names the file,
//! line and parameter; unknown names are rejected up front.

use super::ImportError;
use spinstack_param::{Block, Param, Position, Value};

/// What a block accepts.
pub(super) struct Schema {
    /// Parameters the importer reads.
    pub used: &'static [&'static str],
    /// Parameters DiskSim accepts but that have no effect on timing.
    pub ignored: &'static [&'static str],
}

/// The parameters of one block (inherited ones included), checked against a schema.
pub(super) struct Fields<'a> {
    pub label: String,
    pub pos: Position,
    params: Vec<&'a Param>,
}

impl<'a> Fields<'a> {
    pub fn new(
        block: &Block,
        params: Vec<&'a Param>,
        schema: &Schema,
    ) -> Result<Fields<'a>, ImportError> {
        let label = match &block.name {
            Some(name) => format!("{} block '{name}'", block.type_name),
            None => format!("{} block", block.type_name),
        };
        for p in &params {
            let known =
                schema.used.contains(&p.name.as_str()) || schema.ignored.contains(&p.name.as_str());
            if !known {
                return Err(ImportError::at(
                    &p.pos,
                    Some(&p.name),
                    format!("unknown parameter in {label}"),
                ));
            }
        }
        Ok(Fields {
            label,
            pos: block.pos.clone(),
            params,
        })
    }

    pub fn get(&self, name: &str) -> Option<&'a Param> {
        self.params.iter().copied().find(|p| p.name == name)
    }

    /// A required parameter.
    pub fn need(&self, name: &str) -> Result<&'a Param, ImportError> {
        self.get(name).ok_or_else(|| {
            ImportError::at(
                &self.pos,
                Some(name),
                format!("required parameter missing from {}", self.label),
            )
        })
    }

    pub fn int(&self, name: &str) -> Result<i64, ImportError> {
        int_of(self.need(name)?)
    }

    /// A duration in milliseconds: finite, not negative, and within
    /// [`crate::spec_check::TIME_MS_MAX`].
    pub fn duration_ms(&self, name: &str) -> Result<f64, ImportError> {
        duration_of(self.need(name)?)
    }

    /// Each of `names` that is set must be a duration ([`Fields::duration_ms`]),
    /// although nothing reads it: a negative or absurd time in a drive file is an
    /// error in the file whether or not this model uses it.
    pub fn unused_durations(&self, names: &[&str]) -> Result<(), ImportError> {
        names
            .iter()
            .filter_map(|name| self.get(name))
            .try_for_each(|p| duration_of(p).map(drop))
    }

    /// A non-negative integer that fits in `T` and is at most `max`; `rule` says
    /// why the bound is there.
    pub fn count_at_most<T: TryFrom<i64> + Into<u64> + Copy>(
        &self,
        name: &str,
        max: T,
        rule: &str,
    ) -> Result<T, ImportError> {
        let v: T = self.count(name)?;
        if v.into() > max.into() {
            return Err(bad(
                self.need(name)?,
                format!("{} is too large: {rule}", v.into()),
            ));
        }
        Ok(v)
    }

    /// A float within `range`; `rule` says what the range is.
    pub fn float_in(
        &self,
        name: &str,
        range: std::ops::RangeInclusive<f64>,
        rule: &str,
    ) -> Result<f64, ImportError> {
        let p = self.need(name)?;
        let v = float_of(p)?;
        if !range.contains(&v) {
            return Err(bad(p, format!("{rule}, found {v}")));
        }
        Ok(v)
    }

    /// A non-negative integer that fits in `T`.
    pub fn count<T: TryFrom<i64>>(&self, name: &str) -> Result<T, ImportError> {
        let p = self.need(name)?;
        ranged(p, int_of(p)?, "a non-negative integer in range")
    }

    /// An on/off flag. DiskSim stores these as C integers and tests them for
    /// non-zero, so any non-zero integer is on (hp_c2490a sets `Enable caching in
    /// buffer = 2`). A float is still an error.
    pub fn flag(&self, name: &str) -> Result<bool, ImportError> {
        Ok(int_of(self.need(name)?)? != 0)
    }

    pub fn list(&self, name: &str) -> Result<&'a [Value], ImportError> {
        let p = self.need(name)?;
        p.value.as_list().ok_or_else(|| wrong_type(p, "a list"))
    }

    /// A parameter that DiskSim accepts but spinstack does not model: it must be
    /// absent or zero.
    pub fn must_be_zero(&self, name: &str) -> Result<(), ImportError> {
        if let Some(p) = self.get(name) {
            if float_of(p)? != 0.0 {
                return Err(bad(
                    p,
                    "is not modelled by spinstack; only 0 is supported".into(),
                ));
            }
        }
        Ok(())
    }
}

/// A duration in milliseconds ([`Fields::duration_ms`]) from one parameter or
/// list item.
pub(super) fn duration_of(p: &Param) -> Result<f64, ImportError> {
    let v = float_of(p)?;
    if !(0.0..=crate::spec_check::TIME_MS_MAX).contains(&v) {
        return Err(bad(
            p,
            format!("expected a duration of 0 to 10,000,000 ms, found {v}"),
        ));
    }
    Ok(v)
}

pub(super) fn bad(p: &Param, message: String) -> ImportError {
    ImportError::at(&p.value.pos, Some(&p.name), message)
}

fn wrong_type(p: &Param, want: &str) -> ImportError {
    bad(p, format!("expected {want}, found {}", p.value.kind_name()))
}

/// An integer; a float is an error, as in DiskSim.
pub(super) fn int_of(p: &Param) -> Result<i64, ImportError> {
    p.value.as_int().ok_or_else(|| wrong_type(p, "an integer"))
}

/// A finite float; an integer is converted, as in DiskSim.
pub(super) fn float_of(p: &Param) -> Result<f64, ImportError> {
    let v = p
        .value
        .as_float()
        .ok_or_else(|| wrong_type(p, "a number"))?;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(bad(p, format!("must be finite, found {v}")))
    }
}

pub(super) fn ranged<T: TryFrom<i64>>(p: &Param, v: i64, want: &str) -> Result<T, ImportError> {
    if v < 0 {
        return Err(bad(p, format!("expected {want}, found {v}")));
    }
    T::try_from(v).map_err(|_| bad(p, format!("expected {want}, found {v} (too large)")))
}

/// Truncate a float toward zero into a non-negative whole count, as DiskSim's
/// `(int)value` does for skews and `Offset of first block`.
pub(super) fn truncated_sectors(p: &Param) -> Result<u32, ImportError> {
    let v = float_of(p)?.trunc();
    if !(0.0..=f64::from(u32::MAX)).contains(&v) {
        return Err(bad(
            p,
            format!("expected a non-negative sector count, found {v}"),
        ));
    }
    Ok(v as u32)
}
