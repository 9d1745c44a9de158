//! One extraction run on a modelled drive, checked against the layout's own map:
//! what `spinstack extract --disk` prints.

use crate::map::{compare, Comparison, TrackMap};
use crate::probe::{CacheSetting, Probe, ProbeError};
use crate::scsi::{self, Fallback, ScsiAlgorithm};
use crate::sim_probe::{Jitter, SimulatedProbe};
use crate::timing::{self, TimingOptions};
use crate::truth::true_map;
use serde::Serialize;
use spinstack_disk::DriveSpec;
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
pub fn extract_simulated(spec: &DriveSpec, options: &RunOptions) -> Result<(RunReport, TrackMap), ProbeError> {
    let wall = Instant::now();
    let mut probe = SimulatedProbe::with_drive(spec)?;
    let truth = true_map(probe.layout(), &spec.name);
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
    report.method = map.method.clone();
    report.tracks = map.tracks.len();
    report.remapped_lbns = map.remapped.len();
    report.uncertain_tracks = map.uncertain_tracks();
    report.wall_seconds = wall.elapsed().as_secs_f64();
    Ok((report, map))
}
