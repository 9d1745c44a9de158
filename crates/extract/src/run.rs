//! One extraction run on a modelled drive, checked against the layout's own map:
//! what `spinstack extract --disk` prints.

use crate::backing;
use crate::compare::{compare, Comparison};
use crate::probe::{CacheSetting, Probe, ProbeError};
use crate::scsi::{self, Fallback, ScsiAlgorithm};
use crate::sim_probe::{Jitter, SimulatedProbe};
use crate::timing::{self, TimingOptions};
use serde::Serialize;
use spinstack_disk::DriveSpec;
use spinstack_sim::units::Lbn;
use spinstack_trackmap::TrackMap;
use std::time::Instant;

/// Which extraction algorithm to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Method {
    /// Validation paper's walk/jump with the recent-sizes + bisection fallback.
    Scsi,
    /// Validation paper's walk/jump exactly as published (walk on every size change).
    ScsiLiteral,
    /// Zone-aware galloping (DIXtrac-style).
    ZoneAware,
    /// Timing-only (traxtents §4.1.1).
    Timing,
}

impl Method {
    pub fn parse(text: &str) -> Option<Method> {
        Some(match text {
            "scsi" => Method::Scsi,
            "scsi-literal" => Method::ScsiLiteral,
            "zone-aware" | "dixtrac" => Method::ZoneAware,
            "timing" => Method::Timing,
            _ => return None,
        })
    }
}

/// How a simulated run is set up.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub method: Method,
    /// Host measurement noise on timed reads (timing method).
    pub jitter: Option<Jitter>,
    pub timing: TimingOptions,
}

/// What a run found, as printed by `--json`.
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    pub drive: String,
    pub method: String,
    pub tracks: usize,
    pub exact: bool,
    pub comparison: Comparison,
    pub remapped_lbns: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub translations: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub translations_per_track: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub galloped_tracks: Option<u64>,
    pub uncertain_tracks: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub simulated_hours: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timed_reads: Option<u64>,
    pub wall_seconds: f64,
}

/// Extract the track map of a modelled drive and compare it with the truth.
pub fn extract_simulated(
    spec: &DriveSpec,
    options: &RunOptions,
) -> Result<(RunReport, TrackMap), ProbeError> {
    let wall = Instant::now();
    let mut probe = SimulatedProbe::with_drive(spec)?;
    let truth = probe.layout().track_map(&spec.name);
    let mut report = RunReport {
        drive: spec.name.clone(),
        method: String::new(),
        tracks: 0,
        exact: false,
        comparison: compare(&truth, &truth),
        remapped_lbns: 0,
        translations: None,
        translations_per_track: None,
        galloped_tracks: None,
        uncertain_tracks: 0,
        simulated_hours: None,
        timed_reads: None,
        wall_seconds: 0.0,
    };
    let map = match options.method {
        Method::Timing => {
            probe.set_jitter(options.jitter);
            probe.set_caching(CacheSetting::ReadCacheAndPrefetchOff)?;
            let start = probe.now();
            let found = timing::extract(&mut probe, &options.timing)?;
            let elapsed = probe.now().saturating_sub(start);
            report.simulated_hours = Some(elapsed.as_secs_f64() / 3600.0);
            report.timed_reads = Some(probe.reads());
            found.map
        }
        scsi_method => {
            let algorithm = match scsi_method {
                Method::ScsiLiteral => ScsiAlgorithm::WalkJump(Fallback::WalkFromBoundary),
                Method::ZoneAware => ScsiAlgorithm::ZoneAware,
                _ => ScsiAlgorithm::WalkJump(Fallback::RecentSizesThenBisect),
            };
            let found = scsi::extract(&mut probe, algorithm)?;
            report.translations = Some(found.translations);
            report.translations_per_track = Some(found.translations_per_track());
            report.galloped_tracks = Some(found.galloped_tracks);
            found.map
        }
    };
    report.comparison = compare(&map, &truth);
    report.exact = report.comparison.exact;
    report.method = map.method().to_string();
    report.tracks = map.track_count();
    report.remapped_lbns = map.remapped().len();
    report.uncertain_tracks = map.uncertain_track_count();
    report.wall_seconds = wall.elapsed().as_secs_f64();
    Ok((report, map))
}

/// What probing a real device found, as printed by `--device ... --json`.
#[derive(Clone, Debug, Serialize)]
pub struct DeviceReport {
    pub device: String,
    pub capacity_sectors: u64,
    /// Reads bypass the page cache (O_DIRECT accepted).
    pub direct_io: bool,
    /// The device answered SEND/RECEIVE DIAGNOSTIC translate-address.
    pub translate_address: bool,
    pub method: String,
    pub track_structure_found: bool,
    /// Plain-language verdict.
    pub message: String,
    /// Median time of back-to-back reads of one sector (a revolution on a
    /// rotating disk with its read cache off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeat_read_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tracks: Option<usize>,
    /// For a regular file: the disk it lives on and where (absent for a device).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_backing: Option<FileBackingReport>,
    pub wall_seconds: f64,
}

/// Where a probed file lies, in brief (the extent list itself is not printed).
#[derive(Clone, Debug, Serialize)]
pub struct FileBackingReport {
    /// Whole disk holding the file (`/dev/vda`), or why it is not known.
    pub device: Option<String>,
    /// Device LBN of the file's first sector.
    pub device_lbn_of_file_start: Option<Lbn>,
    pub extents: usize,
    /// Why the file system's extent map is unknown (tmpfs, overlay, ...), if so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown_because: Option<String>,
}

/// Learn where the regular file at `path` lives. A file whose reads would not all
/// reach its disk (holes, unwritten or encoded extents) is an error: its read
/// times would describe the file system, not the disk, and the verdict would lie.
fn file_backing_report(path: &std::path::Path) -> Result<Option<FileBackingReport>, ProbeError> {
    let failed = |detail: String| ProbeError::Failed {
        probe: path.display().to_string(),
        command: "timing through a file",
        detail,
    };
    let file = std::fs::File::open(path).map_err(|e| failed(e.to_string()))?;
    if !file
        .metadata()
        .map_err(|e| failed(e.to_string()))?
        .is_file()
    {
        return Ok(None);
    }
    let backing = match backing::file_backing(&file) {
        Ok(backing) => backing,
        Err(why) => {
            return Ok(Some(FileBackingReport {
                device: None,
                device_lbn_of_file_start: None,
                extents: 0,
                unknown_because: Some(why.to_string()),
            }))
        }
    };
    let elsewhere = backing.sectors_not_on_device();
    if elsewhere > 0 && backing.device.is_some() {
        return Err(failed(format!(
            "{elsewhere} of its sectors are holes or unwritten (preallocated) or encoded extents; the file \
system answers reads of them without reading {}, so their times would say nothing about the disk. Write \
data into the whole file first, e.g. `dd if=/dev/urandom of={} bs=1M count=1024 conv=fsync`",
            backing.device.as_deref().unwrap_or("the disk"),
            path.display()
        )));
    }
    Ok(Some(FileBackingReport {
        device: backing.device.clone(),
        device_lbn_of_file_start: backing.device_lbn_of_file_start(),
        extents: backing.extents.len(),
        unknown_because: None,
    }))
}

/// Revolution times of rotating disks: 15,000 RPM (4 ms) down to 3,600 RPM (16.7 ms),
/// with room for host overhead.
const PLAUSIBLE_REVOLUTION_MS: std::ops::RangeInclusive<f64> = 3.5..=18.0;

/// Probe a real block device (or file) read-only: translation when it answers,
/// otherwise timing when its reads show a rotation; otherwise say plainly that no
/// track structure was found.
pub fn extract_device(
    path: &std::path::Path,
    timing_options: &TimingOptions,
) -> Result<(DeviceReport, Option<TrackMap>), ProbeError> {
    let (mut report, map) = probe_device(path, timing_options)?;
    let through = report.file_backing.as_ref().and_then(|file| {
        let device = file.device.as_ref()?;
        Some(format!(
            "through a file on {device} (file sector 0 at device LBN {}, {} extents; a map's \
LBNs are the file's): ",
            file.device_lbn_of_file_start
                .map_or("unknown".to_string(), |lbn| lbn.0.to_string()),
            file.extents
        ))
    });
    if let Some(through) = through {
        report.message.insert_str(0, &through);
    }
    Ok((report, map))
}

fn probe_device(
    path: &std::path::Path,
    timing_options: &TimingOptions,
) -> Result<(DeviceReport, Option<TrackMap>), ProbeError> {
    let wall = Instant::now();
    let mut probe = crate::device::DeviceProbe::open(path)?;
    let capacity = probe.read_capacity()?.0;
    let file_backing = file_backing_report(path)?;
    let mut report = DeviceReport {
        device: path.display().to_string(),
        capacity_sectors: capacity,
        direct_io: probe.direct(),
        translate_address: probe.capabilities().translate,
        method: String::new(),
        track_structure_found: false,
        message: String::new(),
        repeat_read_ms: None,
        tracks: None,
        file_backing,
        wall_seconds: 0.0,
    };
    if report.translate_address {
        let found = scsi::extract(
            &mut probe,
            ScsiAlgorithm::WalkJump(Fallback::RecentSizesThenBisect),
        )?;
        report.method = found.map.method().to_string();
        report.track_structure_found = true;
        report.tracks = Some(found.map.track_count());
        report.message = format!("{} tracks by address translation", found.map.track_count());
        report.wall_seconds = wall.elapsed().as_secs_f64();
        return Ok((report, Some(found.map)));
    }
    report.method = "timing".to_string();
    let io_note = if report.direct_io {
        ""
    } else {
        " (O_DIRECT refused: buffered reads, page cache dropped before each)"
    };
    if capacity < 2 {
        report.message =
            "no track structure found: the device holds fewer than two sectors".to_string();
        return Ok((report, None));
    }
    let repeat_ms = repeat_read_ms(&mut probe)?;
    report.repeat_read_ms = Some(repeat_ms);
    if !PLAUSIBLE_REVOLUTION_MS.contains(&repeat_ms) {
        report.message = format!(
            "no track structure found: the device does not answer SCSI address translation, and reading one \
sector again right after reading it takes {repeat_ms:.3} ms, not the full revolution (4-17 ms) of a rotating disk \
with its read cache off; it is solid-state, virtual (virtio, loop, a file) or caching{io_note}"
        );
        report.wall_seconds = wall.elapsed().as_secs_f64();
        return Ok((report, None));
    }
    let found = timing::extract(&mut probe, timing_options)?;
    report.track_structure_found = true;
    report.tracks = Some(found.map.track_count());
    report.message = format!(
        "{} tracks by timing ({} uncertain)",
        found.map.track_count(),
        found.map.uncertain_track_count()
    );
    report.wall_seconds = wall.elapsed().as_secs_f64();
    Ok((report, Some(found.map)))
}

/// Median of back-to-back reads of LBN 0.
fn repeat_read_ms<P: Probe + ?Sized>(probe: &mut P) -> Result<f64, ProbeError> {
    use spinstack_sim::units::{Lbn, Sectors};
    probe.timed_read(Lbn(0), Sectors(1))?;
    let mut times: Vec<f64> = (0..21)
        .map(|_| {
            probe
                .timed_read(Lbn(0), Sectors(1))
                .map(|r| r.response().as_ms_f64())
        })
        .collect::<Result<_, _>>()?;
    times.sort_by(|a, b| a.total_cmp(b));
    Ok(times[times.len() / 2])
}
