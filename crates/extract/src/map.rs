//! The track map: what extraction produces and what the file system and RAID layers
//! consume. Text format, one track per line:
//!
//! ```text
//! # spinstack track map, format 1
//! drive atlas10k
//! method scsi-walk-jump
//! capacity 17938986
//! # first_lbn sectors cylinder surface [uncertain]
//! 0 334 0 0
//! 334 334 0 1
//! 9023 330 - - uncertain
//! remapped 4711 12 3 301
//! ```
//!
//! Header lines `drive`, `method`, `capacity` come before the first track. `-` marks
//! a cylinder or surface the method could not observe (timing-only extraction).
//! `uncertain` marks a track whose boundaries the method could not decide with the
//! stated confidence. A `remapped LBN CYLINDER SURFACE SECTOR` line records an LBN
//! whose home track is the one covering it but which the drive stores elsewhere
//! (a remapped defect). Tracks tile `[0, capacity)` in LBN order: the reader rejects
//! gaps, overlaps, and maps that stop short of or run past the capacity.

use serde::Serialize;
use spinstack_disk::layout::Pbn;
use spinstack_sim::units::{Lbn, Sectors};
use std::fmt::Write as _;
use std::path::Path;

/// One track as extracted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct MappedTrack {
    pub first: Lbn,
    pub sectors: Sectors,
    /// `(cylinder, surface)`, when the method observed it.
    pub location: Option<(u32, u32)>,
    pub uncertain: bool,
}

impl MappedTrack {
    pub fn end(&self) -> Lbn {
        self.first.offset(self.sectors)
    }
}

/// An LBN stored away from its home track (a remapped defect).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct RemappedLbn {
    pub lbn: Lbn,
    pub stored_at: Pbn,
}

/// A drive's track map.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TrackMap {
    pub drive: String,
    pub method: String,
    pub capacity: Sectors,
    pub tracks: Vec<MappedTrack>,
    pub remapped: Vec<RemappedLbn>,
}

/// A malformed track map, naming the file, the line and the problem.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: {problem}")]
pub struct MapError {
    pub file: String,
    pub line: usize,
    pub problem: String,
}

impl TrackMap {
    /// Tracks must tile `[0, capacity)`; returns the first problem found.
    pub fn check_tiling(&self) -> Result<(), String> {
        let mut next = Lbn(0);
        for (index, track) in self.tracks.iter().enumerate() {
            if track.sectors.0 == 0 {
                return Err(format!("track {index} at {} is empty", track.first));
            }
            if track.first != next {
                return Err(format!(
                    "track {index} starts at {} but the previous track ends at {next}",
                    track.first
                ));
            }
            next = track.end();
        }
        if next.0 != self.capacity.0 {
            return Err(format!(
                "tracks end at {next} but the capacity is {}",
                self.capacity
            ));
        }
        Ok(())
    }

    /// Index of the track holding `lbn` (binary search; tracks are in LBN order).
    pub fn track_index_of(&self, lbn: Lbn) -> Option<usize> {
        let index = self.tracks.partition_point(|t| t.end() <= lbn);
        (index < self.tracks.len() && self.tracks[index].first <= lbn).then_some(index)
    }

    pub fn uncertain_tracks(&self) -> usize {
        self.tracks.iter().filter(|t| t.uncertain).count()
    }

    /// The map in the text format above.
    pub fn to_text(&self) -> String {
        let mut out = String::with_capacity(self.tracks.len() * 24 + 200);
        out.push_str("# spinstack track map, format 1\n");
        let _ = writeln!(out, "drive {}", self.drive);
        let _ = writeln!(out, "method {}", self.method);
        let _ = writeln!(out, "capacity {}", self.capacity.0);
        out.push_str("# first_lbn sectors cylinder surface [uncertain]\n");
        for t in &self.tracks {
            let (cylinder, surface) = match t.location {
                Some((c, s)) => (c.to_string(), s.to_string()),
                None => ("-".to_string(), "-".to_string()),
            };
            let flag = if t.uncertain { " uncertain" } else { "" };
            let _ = writeln!(
                out,
                "{} {} {cylinder} {surface}{flag}",
                t.first.0, t.sectors.0
            );
        }
        for r in &self.remapped {
            let p = r.stored_at;
            let _ = writeln!(
                out,
                "remapped {} {} {} {}",
                r.lbn.0, p.cylinder, p.surface, p.sector
            );
        }
        out
    }

    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        std::fs::write(path, self.to_text())
    }

    pub fn read(path: &Path) -> Result<TrackMap, MapError> {
        let text = std::fs::read_to_string(path).map_err(|e| MapError {
            file: path.display().to_string(),
            line: 0,
            problem: format!("cannot read: {e}"),
        })?;
        TrackMap::parse(&text, &path.display().to_string())
    }

    /// Parse the text format; `file` names the source in errors.
    pub fn parse(text: &str, file: &str) -> Result<TrackMap, MapError> {
        let mut parser = Parser::new(file);
        for (index, raw) in text.lines().enumerate() {
            parser.line = index + 1;
            parser.take_line(raw)?;
        }
        parser.finish(text.lines().count())
    }
}

struct Parser<'f> {
    file: &'f str,
    line: usize,
    drive: Option<String>,
    method: Option<String>,
    capacity: Option<Sectors>,
    tracks: Vec<MappedTrack>,
    remapped: Vec<RemappedLbn>,
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
            remapped: Vec::new(),
        }
    }

    fn error(&self, problem: impl Into<String>) -> MapError {
        MapError {
            file: self.file.to_string(),
            line: self.line,
            problem: problem.into(),
        }
    }

    fn take_line(&mut self, raw: &str) -> Result<(), MapError> {
        let line = raw.trim();
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
        let capacity = self
            .capacity
            .ok_or_else(|| self.error("track line before the `capacity` header"))?;
        let first = Lbn(self.number(fields[0], "first LBN")?);
        let sectors = Sectors(self.number(fields[1], "track length")?);
        let location = match (fields[2], fields[3]) {
            ("-", "-") => None,
            (c, s) => Some((
                self.small_number(c, "cylinder")?,
                self.small_number(s, "surface")?,
            )),
        };
        let uncertain = match fields.get(4) {
            None => false,
            Some(&"uncertain") => true,
            Some(other) => return Err(self.error(format!("unknown flag `{other}`"))),
        };
        self.check_track(first, sectors, capacity)?;
        self.tracks.push(MappedTrack {
            first,
            sectors,
            location,
            uncertain,
        });
        Ok(())
    }

    fn check_track(&self, first: Lbn, sectors: Sectors, capacity: Sectors) -> Result<(), MapError> {
        if sectors.0 == 0 {
            return Err(self.error("a track of 0 sectors"));
        }
        let expected = self.tracks.last().map_or(Lbn(0), |t| t.end());
        if first != expected {
            let what = if first < expected {
                "overlaps"
            } else {
                "leaves a gap after"
            };
            return Err(self.error(format!(
                "track at {first} {what} the previous track, which ends at {expected}"
            )));
        }
        if first.0 + sectors.0 > capacity.0 {
            return Err(self.error(format!(
                "track {first}+{} runs past the capacity of {capacity}",
                sectors.0
            )));
        }
        Ok(())
    }

    fn take_remapped(&mut self, fields: &[&str]) -> Result<(), MapError> {
        if fields.len() != 5 {
            return Err(self.error("`remapped` needs LBN CYLINDER SURFACE SECTOR"));
        }
        let lbn = Lbn(self.number(fields[1], "LBN")?);
        let stored_at = Pbn {
            cylinder: self.small_number(fields[2], "cylinder")?,
            surface: self.small_number(fields[3], "surface")?,
            sector: self.small_number(fields[4], "sector")?,
        };
        self.remapped.push(RemappedLbn { lbn, stored_at });
        Ok(())
    }

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
        let end = self.tracks.last().map_or(Lbn(0), |t| t.end());
        if end.0 != capacity.0 {
            return Err(self.error(format!(
                "the tracks end at {end} but the capacity is {capacity}: the map is incomplete"
            )));
        }
        Ok(TrackMap {
            drive,
            method,
            capacity,
            tracks: self.tracks,
            remapped: self.remapped,
        })
    }
}

/// How an extracted map compares with the true one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Comparison {
    pub exact: bool,
    pub extracted_tracks: usize,
    pub true_tracks: usize,
    /// Tracks whose first LBN and length both match a true track.
    pub matching_tracks: usize,
    pub first_difference: Option<String>,
}

/// Compare an extracted map with the truth: boundaries, lengths, locations where
/// both know them, and the remapped LBNs.
pub fn compare(extracted: &TrackMap, truth: &TrackMap) -> Comparison {
    let mut first_difference = None;
    let truth_by_first: std::collections::HashMap<Lbn, &MappedTrack> =
        truth.tracks.iter().map(|t| (t.first, t)).collect();
    let mut matching = 0;
    for t in &extracted.tracks {
        match truth_by_first.get(&t.first) {
            Some(true_track) if true_track.sectors == t.sectors => {
                let located_alike = match (t.location, true_track.location) {
                    (Some(a), Some(b)) => a == b,
                    _ => true,
                };
                if located_alike {
                    matching += 1;
                } else if first_difference.is_none() {
                    first_difference = Some(format!(
                        "track at {} is on {:?}, truly on {:?}",
                        t.first, t.location, true_track.location
                    ));
                }
            }
            other => {
                if first_difference.is_none() {
                    first_difference = Some(match other {
                        Some(tt) => format!(
                            "track at {} has {} sectors, truly {}",
                            t.first, t.sectors.0, tt.sectors.0
                        ),
                        None => format!("no true track starts at {}", t.first),
                    });
                }
            }
        }
    }
    // Only a method that sees physical addresses can see remapping.
    let observes_physical = extracted.tracks.iter().any(|t| t.location.is_some());
    let remaps_alike = !observes_physical || extracted.remapped == truth.remapped;
    if !remaps_alike && first_difference.is_none() {
        first_difference = Some(format!(
            "remapped LBNs differ: extracted {}, truly {}",
            extracted.remapped.len(),
            truth.remapped.len()
        ));
    }
    let exact = matching == truth.tracks.len()
        && extracted.tracks.len() == truth.tracks.len()
        && remaps_alike
        && extracted.uncertain_tracks() == 0;
    Comparison {
        exact,
        extracted_tracks: extracted.tracks.len(),
        true_tracks: truth.tracks.len(),
        matching_tracks: matching,
        first_difference,
    }
}
