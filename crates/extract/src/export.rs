//! What a track map is turned into for its users: the mke2fs bad-blocks list (the
//! validation paper's ext2 integration: every file-system block that straddles a
//! track boundary is marked bad, so no block spans two tracks) and a summary
//! (zones, histogram of track sizes, serpentine numbering, blocks excluded per
//! file-system block size).

use serde::Serialize;
use spinstack_sim::units::{Sectors, SECTOR_BYTES};
use spinstack_trackmap::{Track, TrackMap};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// File-system blocks (of `block_bytes`) that straddle a track boundary, in order
/// ([`TrackMap::boundary_crossing_blocks`], for a block size given in bytes).
/// `block_bytes` must be a positive multiple of 512.
pub fn straddling_blocks(map: &TrackMap, block_bytes: u64) -> Result<Vec<u64>, String> {
    match Sectors::from_bytes(block_bytes) {
        Some(block_size) if block_size.0 > 0 => {
            Ok(map.boundary_crossing_blocks(block_size).collect())
        }
        _ => Err(format!(
            "block size {block_bytes} is not a positive multiple of 512 bytes"
        )),
    }
}

/// The bad-blocks file `mke2fs -l FILE` reads: one block number per line.
pub fn bad_blocks_list(map: &TrackMap, block_bytes: u64) -> Result<String, String> {
    let blocks = straddling_blocks(map, block_bytes)?;
    let mut out = String::with_capacity(blocks.len() * 9);
    for block in blocks {
        let _ = writeln!(out, "{block}");
    }
    Ok(out)
}

/// A run of tracks with the same regular size(s).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Zone {
    pub first_track: usize,
    pub tracks: usize,
    pub first_lbn: u64,
    /// Track sizes that recur in the zone (two or more on a serpentine drive with
    /// per-surface sizes).
    pub sectors_per_track: Vec<u64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Excluded {
    pub block_bytes: u64,
    pub blocks: usize,
    /// Share of the capacity lost to excluded blocks.
    pub fraction: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    pub drive: String,
    pub method: String,
    pub tracks: usize,
    pub capacity_sectors: u64,
    pub zones: Vec<Zone>,
    /// Track size → number of tracks.
    pub track_sizes: BTreeMap<u64, usize>,
    /// `None` when the map has no cylinder/surface (timing-only maps).
    pub serpentine: Option<bool>,
    pub uncertain_tracks: usize,
    pub excluded: Vec<Excluded>,
}

/// A run of equal sizes this long establishes a zone's regular size.
const ESTABLISHED_RUN: usize = 8;

/// Summarise a map; excluded blocks are counted for 1, 2, 4 and 8 KiB blocks.
pub fn summarize(map: &TrackMap) -> Summary {
    let mut track_sizes = BTreeMap::new();
    for size in map.track_sizes() {
        *track_sizes.entry(size.0).or_insert(0) += 1;
    }
    let excluded = [1024u64, 2048, 4096, 8192]
        .iter()
        .map(|&block_bytes| {
            let blocks = straddling_blocks(map, block_bytes).map_or(0, |b| b.len());
            let lost = blocks as u64 * block_bytes / SECTOR_BYTES;
            Excluded {
                block_bytes,
                blocks,
                fraction: lost as f64 / map.capacity().0.max(1) as f64,
            }
        })
        .collect();
    Summary {
        drive: map.drive().to_string(),
        method: map.method().to_string(),
        tracks: map.track_count(),
        capacity_sectors: map.capacity().0,
        zones: zones(map.tracks()),
        track_sizes,
        serpentine: serpentine(map.tracks()),
        uncertain_tracks: map.uncertain_track_count(),
        excluded,
    }
}

/// Zones from runs of equal track sizes: short runs (slips, spare-holding tracks)
/// stay in the zone around them; an established size already seen two runs back
/// (per-surface sizes alternating) joins the zone instead of opening a new one.
fn zones(tracks: &[Track]) -> Vec<Zone> {
    let mut zones: Vec<Zone> = Vec::new();
    let mut recent: Vec<u64> = Vec::new();
    let mut index = 0;
    while index < tracks.len() {
        let size = tracks[index].sectors.0;
        let run = tracks[index..]
            .iter()
            .take_while(|t| t.sectors.0 == size)
            .count();
        let established = run >= ESTABLISHED_RUN;
        let joins = zones.last().is_some_and(|z| {
            !established
                || z.sectors_per_track.contains(&size)
                || recent.iter().rev().nth(1) == Some(&size)
        });
        match zones.last_mut() {
            Some(zone) if joins => {
                zone.tracks += run;
                if established && !zone.sectors_per_track.contains(&size) {
                    zone.sectors_per_track.push(size);
                }
            }
            _ => zones.push(Zone {
                first_track: index,
                tracks: run,
                first_lbn: tracks[index].first.0,
                sectors_per_track: if established { vec![size] } else { Vec::new() },
            }),
        }
        if established {
            recent.push(size);
            if recent.len() > 2 {
                recent.remove(0);
            }
        }
        index += run;
    }
    zones
}

/// Serpentine numbering: consecutive tracks mostly stay on one surface and step a
/// cylinder, instead of stepping surfaces within a cylinder.
fn serpentine(tracks: &[Track]) -> Option<bool> {
    let (mut same_surface, mut same_cylinder) = (0usize, 0usize);
    for pair in tracks.windows(2) {
        let (a, b) = (pair[0].location?, pair[1].location?);
        if a.surface == b.surface && a.cylinder != b.cylinder {
            same_surface += 1;
        } else if a.cylinder == b.cylinder {
            same_cylinder += 1;
        }
    }
    Some(same_surface > same_cylinder)
}

/// The summary as a short Markdown text.
pub fn summary_markdown(summary: &Summary) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Track map summary: {} ({})\n",
        summary.drive, summary.method
    );
    let _ = writeln!(
        out,
        "{} tracks, {} sectors, {} uncertain; serpentine numbering: {}\n",
        summary.tracks,
        summary.capacity_sectors,
        summary.uncertain_tracks,
        match summary.serpentine {
            Some(true) => "yes",
            Some(false) => "no",
            None => "unknown (no physical addresses in this map)",
        }
    );
    let _ = writeln!(
        out,
        "## Zones ({})\n\n| zone | first LBN | tracks | sectors per track |\n|---|---|---|---|",
        summary.zones.len()
    );
    for (i, z) in summary.zones.iter().enumerate().take(64) {
        let sizes: Vec<String> = z.sectors_per_track.iter().map(u64::to_string).collect();
        let _ = writeln!(
            out,
            "| {i} | {} | {} | {} |",
            z.first_lbn,
            z.tracks,
            sizes.join(" / ")
        );
    }
    let _ = writeln!(out, "\n## Track sizes\n\n| sectors | tracks |\n|---|---|");
    for (size, count) in &summary.track_sizes {
        let _ = writeln!(out, "| {size} | {count} |");
    }
    let _ = writeln!(out, "\n## Blocks excluded (straddling a track boundary)\n\n| block | blocks | capacity lost |\n|---|---|---|");
    for e in &summary.excluded {
        let _ = writeln!(
            out,
            "| {} B | {} | {:.2}% |",
            e.block_bytes,
            e.blocks,
            100.0 * e.fraction
        );
    }
    out
}
