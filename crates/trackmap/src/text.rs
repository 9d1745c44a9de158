//! The text format (see the crate documentation): writer and reader.

use crate::map::{RemappedLbn, SectorLocation, TilingError, Track, TrackLocation, TrackMap};
use spinstack_sim::units::{Lbn, Sectors};
use std::fmt::Write as _;
use std::path::Path;

/// Largest track-map file read: 1 GiB (a line a track; a 2 TB drive's map is about
/// 100 MB).
pub const MAP_FILE_BYTES_MAX: u64 = 1 << 30;

/// A track map that cannot be read: the file, the line (1-based; 0 when the file
/// itself cannot be read) and the problem.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: {problem}")]
pub struct MapError {
    pub file: String,
    pub line: usize,
    pub problem: String,
}

impl TrackMap {
    /// The map in the text format.
    pub fn to_text(&self) -> String {
        let mut out = String::with_capacity(self.track_count() * 24 + 200);
        out.push_str(FORMAT_LINE_PREFIX);
        out.push_str("1\n");
        let _ = writeln!(out, "drive {}", self.drive());
        let _ = writeln!(out, "method {}", self.method());
        let _ = writeln!(out, "capacity {}", self.capacity().0);
        out.push_str("# first_lbn sectors cylinder surface [uncertain]\n");
        for t in self.tracks() {
            let (cylinder, surface) = match t.location {
                Some(l) => (l.cylinder.to_string(), l.surface.to_string()),
                None => ("-".to_string(), "-".to_string()),
            };
            let flag = if t.uncertain { " uncertain" } else { "" };
            let _ = writeln!(
                out,
                "{} {} {cylinder} {surface}{flag}",
                t.first.0, t.sectors.0
            );
        }
        for r in self.remapped() {
            let at = r.stored_at;
            let _ = writeln!(
                out,
                "remapped {} {} {} {}",
                r.lbn.0, at.cylinder, at.surface, at.sector
            );
        }
        out
    }

    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        std::fs::write(path, self.to_text())
    }

    /// Read the map in the file at `path` (a regular file of at most
    /// `MAP_FILE_BYTES_MAX`, 1 GiB); errors name the file as `path` shows.
    pub fn read(path: &Path) -> Result<TrackMap, MapError> {
        let text = spinstack_sim::input_file::read_bounded_text(path, MAP_FILE_BYTES_MAX).map_err(
            |problem| MapError {
                file: path.display().to_string(),
                line: 0,
                problem,
            },
        )?;
        TrackMap::parse(&text, &path.display().to_string())
    }

    /// Parse the text format; `file` names the source in errors. A byte-order mark
    /// at the start is skipped (spreadsheets write one).
    pub fn parse(text: &str, file: &str) -> Result<TrackMap, MapError> {
        let text = spinstack_sim::input_file::strip_bom(text);
        let mut parser = Parser::new(file);
        for (index, raw) in text.lines().enumerate() {
            parser.line = index + 1;
            parser.take_line(raw)?;
        }
        parser.finish(text.lines().count())
    }
}

/// The first line the writer puts, before the format's number.
const FORMAT_LINE_PREFIX: &str = "# spinstack track map, format ";

struct Parser<'f> {
    file: &'f str,
    /// The line being read, then the last line once all are read.
    line: usize,
    drive: Option<String>,
    method: Option<String>,
    capacity: Option<Sectors>,
    tracks: Vec<Track>,
    /// The line each track came from, to place a tiling error.
    track_lines: Vec<usize>,
    remapped: Vec<RemappedLbn>,
    remapped_lines: Vec<usize>,
}

impl<'f> Parser<'f> {
    fn new(file: &'f str) -> Self {
        Parser {
            file,
            line: 0,
            drive: None,
            method: None,
            capacity: None,
            tracks: Vec::new(),
            track_lines: Vec::new(),
            remapped: Vec::new(),
            remapped_lines: Vec::new(),
        }
    }

    fn error(&self, problem: impl Into<String>) -> MapError {
        self.error_at(self.line, problem)
    }

    fn error_at(&self, line: usize, problem: impl Into<String>) -> MapError {
        MapError {
            file: self.file.to_string(),
            line,
            problem: problem.into(),
        }
    }

    fn take_line(&mut self, raw: &str) -> Result<(), MapError> {
        let line = raw.trim();
        if let Some(format) = line.strip_prefix(FORMAT_LINE_PREFIX) {
            // Another format may put other things in the same columns: read as
            // format 1 it would give a wrong map, not an error.
            if format.trim() != "1" {
                return Err(self.error(format!(
                    "track-map format {:?}: this build reads format 1 only (written by a \
                     newer spinstack?)",
                    format.trim()
                )));
            }
        }
        if line.is_empty() || line.starts_with('#') {
            return Ok(());
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        match fields[0] {
            "drive" | "method" | "capacity" => self.take_header(&fields),
            "remapped" => self.take_remapped(&fields),
            _ => self.take_track(&fields),
        }
    }

    fn take_header(&mut self, fields: &[&str]) -> Result<(), MapError> {
        if !self.tracks.is_empty() {
            return Err(self.error(format!("header line `{}` after the first track", fields[0])));
        }
        if fields.len() < 2 {
            return Err(self.error(format!("`{}` needs a value", fields[0])));
        }
        let value = fields[1..].join(" ");
        // A header said twice is refused: the last would silently win (a second
        // `drive` line renamed the map).
        let already = match fields[0] {
            "drive" => self.drive.is_some(),
            "method" => self.method.is_some(),
            _ => self.capacity.is_some(),
        };
        if already {
            return Err(self.error(format!(
                "a second `{}` header (a map has one of each)",
                fields[0]
            )));
        }
        match fields[0] {
            "drive" => self.drive = Some(value),
            "method" => self.method = Some(value),
            _ => {
                let sectors = value.parse::<u64>().map_err(|_| {
                    self.error(format!(
                        "capacity `{value}` is not a whole number of sectors"
                    ))
                })?;
                self.capacity = Some(Sectors(sectors));
            }
        }
        Ok(())
    }

    fn number(&self, field: &str, what: &str) -> Result<u64, MapError> {
        field
            .parse::<u64>()
            .map_err(|_| self.error(format!("{what} `{field}` is not a non-negative integer")))
    }

    fn small_number(&self, field: &str, what: &str) -> Result<u32, MapError> {
        let value = self.number(field, what)?;
        u32::try_from(value).map_err(|_| self.error(format!("{what} {value} is too large")))
    }

    fn take_track(&mut self, fields: &[&str]) -> Result<(), MapError> {
        if !(4..=5).contains(&fields.len()) {
            return Err(self.error(format!(
                "a track line has 4 or 5 fields (first_lbn sectors cylinder surface [uncertain]), found {}",
                fields.len()
            )));
        }
        if self.capacity.is_none() {
            return Err(self.error("track line before the `capacity` header"));
        }
        let first = Lbn(self.number(fields[0], "first LBN")?);
        let sectors = Sectors(self.number(fields[1], "track length")?);
        let location = match (fields[2], fields[3]) {
            ("-", "-") => None,
            (cylinder, surface) => Some(TrackLocation {
                cylinder: self.small_number(cylinder, "cylinder")?,
                surface: self.small_number(surface, "surface")?,
            }),
        };
        let uncertain = match fields.get(4) {
            None => false,
            Some(&"uncertain") => true,
            Some(other) => return Err(self.error(format!("unknown flag `{other}`"))),
        };
        self.tracks.push(Track {
            first,
            sectors,
            location,
            uncertain,
        });
        self.track_lines.push(self.line);
        Ok(())
    }

    fn take_remapped(&mut self, fields: &[&str]) -> Result<(), MapError> {
        if fields.len() != 5 {
            return Err(self.error("`remapped` needs LBN CYLINDER SURFACE SECTOR"));
        }
        let lbn = Lbn(self.number(fields[1], "LBN")?);
        let stored_at = SectorLocation {
            cylinder: self.small_number(fields[2], "cylinder")?,
            surface: self.small_number(fields[3], "surface")?,
            sector: self.small_number(fields[4], "sector")?,
        };
        self.remapped.push(RemappedLbn { lbn, stored_at });
        self.remapped_lines.push(self.line);
        Ok(())
    }

    /// The map, once every line is read; tiling is checked here, by the map's
    /// own constructor, and a violation is placed on the line of the track (or
    /// remapped entry) at fault, or on the last line when the map stops short.
    fn finish(mut self, lines: usize) -> Result<TrackMap, MapError> {
        self.line = lines;
        let drive = self
            .drive
            .take()
            .ok_or_else(|| self.error("no `drive` header"))?;
        let method = self
            .method
            .take()
            .ok_or_else(|| self.error("no `method` header"))?;
        let capacity = self
            .capacity
            .ok_or_else(|| self.error("no `capacity` header"))?;
        let tracks = std::mem::take(&mut self.tracks);
        let remapped = std::mem::take(&mut self.remapped);
        TrackMap::new(drive, method, capacity, tracks, remapped).map_err(|tiling| {
            let line = match tiling {
                TilingError::EmptyTrack { index, .. }
                | TilingError::Gap { index, .. }
                | TilingError::Overlap { index, .. }
                | TilingError::PastCapacity { index, .. } => self.track_lines[index],
                TilingError::RemappedPastCapacity { index, .. } => self.remapped_lines[index],
                TilingError::Incomplete { .. } => lines,
            };
            self.error_at(line, tiling.to_string())
        })
    }
}
