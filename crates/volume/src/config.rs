//! Volume files: a volume described in TOML, read into a [`VolumeSpec`] with every
//! error naming the file, the line and the problem.
//!
//! ```toml
//! level = "raid5"          # single | raid0 | raid1 | raid10 | raid5 | raid5-track-aligned
//! chunk = "4KiB"           # raid0 / raid10 / raid5
//! members = ["maxtor10kv-czk", "maxtor10kv-c0k", "maxtor10kv-7gk", "maxtor10kv-s0k", "maxtor10kv-czk"]
//! copies = 2               # raid10: copies of each chunk (md "near")
//! track_units = "whole-track"  # raid5-track-aligned: whole-track | smallest-track | largest-track
//! read_balance = "shortest-queue"  # raid1 / raid10: or nearest-head
//! fill_in_parity = true    # raid5*: default on for track-aligned, off for raid5
//! stripe_cache = 256       # raid5*: stripes held in memory
//! delayed_stripes = true   # raid5*: md's delayed stripes (default on; needs [plug])
//! [buffer]                 # optional: a DMA-aligned buffer over the volume
//! block = "128KiB"
//! blocks = 64
//! policy = "write-back"    # or write-through
//! [plug]                   # optional: member queues hold requests to merge them
//! delay_ms = 3.0
//! threshold = 4
//! track_aware = false
//! [host]                   # CPU cost of one device I/O (default: Chung et al. 2000)
//! per_io_us = 50.0
//! per_kib_us = 0.5
//! ```
//!
//! Sizes are strings with a unit (`B`, `KiB`, `MiB`, `GiB`, `KB`, `MB`, `GB`) or a
//! number of bytes; they must be whole sectors. Members are catalog names or paths
//! to drive files (`.parv`, `.toml`); a relative path is taken from the volume file's
//! directory ([`read`]). Keys other than these are errors.

use crate::timed::{HostCost, PlugPolicy, ReadBalance, WritePolicy};
use serde::Deserialize;
use spinstack_sim::units::{Nanoseconds, Sectors, SECTOR_BYTES};
use std::path::Path;
use toml::Spanned;

/// Stripes a RAID-5 holds in memory unless a volume file says otherwise.
pub const DEFAULT_STRIPE_CACHE: u32 = 256;

/// The RAID level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Level {
    Single,
    Raid0,
    Raid1,
    Raid10,
    Raid5,
    Raid5TrackAligned,
}

impl Level {
    pub fn name(self) -> &'static str {
        match self {
            Level::Single => "single",
            Level::Raid0 => "raid0",
            Level::Raid1 => "raid1",
            Level::Raid10 => "raid10",
            Level::Raid5 => "raid5",
            Level::Raid5TrackAligned => "raid5-track-aligned",
        }
    }
    /// Whether a stripe read fetches the parity too when it is the only member the
    /// read skips (on for the track-aligned RAID-5, whose stripes are whole tracks).
    pub fn fill_in_parity_by_default(self) -> bool {
        self == Level::Raid5TrackAligned
    }
    /// Fewest members the level works with.
    pub fn minimum_members(self) -> usize {
        match self {
            Level::Single => 1,
            Level::Raid0 | Level::Raid1 | Level::Raid10 => 2,
            Level::Raid5 | Level::Raid5TrackAligned => 3,
        }
    }
    fn uses_chunk(self) -> bool {
        matches!(self, Level::Raid0 | Level::Raid10 | Level::Raid5)
    }
}

/// How the track-aligned RAID-5 sizes its stripe units (validation paper §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TrackUnits {
    /// Each member's whole track (heterogeneous sizes; the paper's design).
    WholeTrack,
    /// Rejected alternative: every unit as large as the smallest track.
    SmallestTrack,
    /// Rejected alternative: md chunks as large as the largest track.
    LargestTrack,
}

/// A DMA-aligned buffer over the volume.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct BufferSpec {
    pub block: Sectors,
    pub blocks: u32,
    pub policy: WritePolicy,
}

/// A volume file, checked.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct VolumeSpec {
    pub level: Level,
    pub chunk: Option<Sectors>,
    pub members: Vec<String>,
    pub copies: u32,
    pub track_units: TrackUnits,
    pub read_balance: ReadBalance,
    pub fill_in_parity: bool,
    pub stripe_cache: u32,
    /// md's delayed stripes (`ParityOptions::delay_pre_reads`; on by default).
    pub delayed_stripes: bool,
    pub buffer: Option<BufferSpec>,
    pub plug: Option<PlugPolicy>,
    pub host: HostCost,
    /// Where the spec was read from, so later errors (a member the catalog does
    /// not know) can name the file and line.
    #[serde(skip)]
    pub origin: Option<Origin>,
}

/// The file a spec came from and the line of each member.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    pub file: String,
    pub member_lines: Vec<usize>,
}

impl VolumeSpec {
    /// "FILE: line N" for member `index`, when the spec came from a file.
    pub fn member_location(&self, index: usize) -> Option<String> {
        let origin = self.origin.as_ref()?;
        let line = origin.member_lines.get(index)?;
        Some(format!("{}: line {line}", origin.file))
    }
}

/// A bad volume file: where and what. `line` is 1-based, or 0 when the problem is
/// the file as a whole (it cannot be read), which the message then does not
/// mention.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{file}: {}{problem}", at_line(*line))]
pub struct ConfigError {
    pub file: String,
    pub line: usize,
    pub problem: String,
}

/// `line N: ` for a line, nothing for the whole file (line 0).
fn at_line(line: usize) -> String {
    match line {
        0 => String::new(),
        line => format!("line {line}: "),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpec {
    level: Spanned<String>,
    chunk: Option<Spanned<toml::Value>>,
    members: Spanned<Vec<Spanned<String>>>,
    copies: Option<Spanned<i64>>,
    track_units: Option<Spanned<String>>,
    read_balance: Option<Spanned<String>>,
    fill_in_parity: Option<Spanned<bool>>,
    stripe_cache: Option<Spanned<i64>>,
    delayed_stripes: Option<Spanned<bool>>,
    buffer: Option<Spanned<RawBuffer>>,
    plug: Option<Spanned<RawPlug>>,
    host: Option<Spanned<RawHost>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBuffer {
    block: Option<Spanned<toml::Value>>,
    blocks: Option<Spanned<i64>>,
    policy: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlug {
    delay_ms: Option<Spanned<f64>>,
    threshold: Option<Spanned<i64>>,
    track_aware: Option<Spanned<bool>>,
    max_request: Option<Spanned<toml::Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHost {
    per_io_us: Spanned<f64>,
    per_kib_us: Spanned<f64>,
}

/// Largest volume file read: 1 MiB (a volume of 64 members is a few kilobytes).
pub const VOLUME_FILE_BYTES_MAX: u64 = 1 << 20;

/// Reads the file at `path`. A member that is a relative path to a drive file is
/// taken from the volume file's directory, as a file that names its neighbours
/// means them wherever it is read from.
pub fn read(path: &Path) -> Result<VolumeSpec, ConfigError> {
    let file = path.display().to_string();
    let text = spinstack_sim::input_file::read_bounded_text(path, VOLUME_FILE_BYTES_MAX).map_err(
        |problem| ConfigError {
            file: file.clone(),
            line: 0,
            problem,
        },
    )?;
    let mut spec = parse(&text, &file)?;
    let directory = path.parent().unwrap_or(Path::new(""));
    for member in &mut spec.members {
        *member = beside(directory, member);
    }
    Ok(spec)
}

/// `member` as read from a volume file in `directory`: a relative path to a drive
/// file (`.parv`, `.toml`) joined to the directory; catalog names and absolute paths
/// as they are.
fn beside(directory: &Path, member: &str) -> String {
    let path = Path::new(member);
    let drive_file = spinstack_disk::catalog::drive_file_kind(member).is_some();
    if drive_file && path.is_relative() {
        directory.join(path).display().to_string()
    } else {
        member.to_string()
    }
}

/// Parses volume-file `text`; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<VolumeSpec, ConfigError> {
    let raw: RawSpec = toml::from_str(text).map_err(|error| ConfigError {
        file: file.to_string(),
        line: error.span().map_or(0, |span| line_of(text, span.start)),
        problem: error.message().to_string(),
    })?;
    Checker { text, file }.check(raw)
}

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

mod check;
use check::Checker;

/// `"4KiB"`, `"1 MiB"`, `"512B"`, or a number of bytes, as whole sectors.
pub fn parse_size(value: &toml::Value) -> Result<Sectors, String> {
    let bytes = match value {
        toml::Value::Integer(n) if *n > 0 => *n as u64,
        toml::Value::String(text) => parse_size_text(text)?,
        other => return Err(format!("expected a size such as \"4KiB\", found {other}")),
    };
    if bytes % SECTOR_BYTES != 0 {
        return Err(format!(
            "{bytes} bytes is not a whole number of {SECTOR_BYTES}-byte sectors"
        ));
    }
    Ok(Sectors(bytes / SECTOR_BYTES))
}

fn parse_size_text(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    let (digits, unit) = trimmed.split_at(split);
    let number: u64 = digits
        .parse()
        .map_err(|_| format!("size {text:?} does not start with a whole number"))?;
    let scale: u64 = match unit.trim() {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        other => {
            return Err(format!(
                "size {text:?} has unit {other:?}; use B, KiB, MiB, GiB, KB, MB or GB"
            ))
        }
    };
    match number.checked_mul(scale) {
        Some(0) | None => Err(format!(
            "size {text:?} must be positive and below 2^64 bytes"
        )),
        Some(bytes) => Ok(bytes),
    }
}

/// Microseconds (a float from the file) as nanoseconds.
fn micros(us: f64) -> Result<Nanoseconds, String> {
    if !us.is_finite() || !(0.0..=1e9).contains(&us) {
        return Err(format!("{us} µs must be between 0 and 10^9"));
    }
    Ok(Nanoseconds((us * 1e3).round() as u64))
}

#[cfg(test)]
mod tests;
