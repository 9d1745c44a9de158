//! Replay a DiskSim "validate" trace on a [`Drive`] the way DiskSim does
//! (notes §5): closed loop with one request in flight; the first request arrives
//! at t = 0 and request k+1 arrives `think(k)` after request k completes. The
//! result carries DiskSim's demerit figure between the measured and the simulated
//! response-time distributions.

use crate::drive::{Drive, DriveError, DriveOptions};
use crate::spec::DriveSpec;
use serde::Serialize;
use spinstack_sim::device::DeviceError;
use spinstack_sim::driver::{run_closed_loop, RequestSpec};
use spinstack_sim::engine::{Engine, EngineError, EngineOptions};
use spinstack_sim::request::Completion;
use spinstack_sim::trace::ValidateRecord;

/// The outcome of one replay.
#[derive(Clone, Debug, Serialize)]
pub struct ValidateReport {
    pub drive: String,
    pub requests: usize,
    /// DiskSim's rms demerit between the measured and simulated distributions.
    pub demerit_ms: f64,
    pub mean_measured_ms: f64,
    pub mean_simulated_ms: f64,
    /// Simulated response of each request, in trace order.
    #[serde(skip)]
    pub simulated_ms: Vec<f64>,
    #[serde(skip)]
    pub completions: Vec<Completion>,
}

#[derive(Debug, thiserror::Error)]
pub enum ValidateError {
    #[error(transparent)]
    Drive(#[from] DriveError),
    #[error("trace line {line}: {source}")]
    Request { line: usize, source: DeviceError },
    #[error("the replay stopped: {0}")]
    Engine(EngineError),
    #[error("trace line {line}: the drive never completed the request")]
    Stuck { line: usize },
    #[error("the trace has no requests")]
    Empty,
}

/// Replay `records` on a fresh drive built from `spec`.
pub fn replay(
    spec: &DriveSpec,
    records: &[ValidateRecord],
) -> Result<ValidateReport, ValidateError> {
    let mut drive = Drive::new(spec, DriveOptions::default())?;
    replay_on(&mut drive, &spec.name, records)
}

/// Replay `records` on `drive` (closed loop, queue depth 1, the trace's think
/// times between a completion and the next arrival).
pub fn replay_on(
    drive: &mut Drive,
    name: &str,
    records: &[ValidateRecord],
) -> Result<ValidateReport, ValidateError> {
    if records.is_empty() {
        return Err(ValidateError::Empty);
    }
    let mut engine = Engine::new(EngineOptions::default());
    engine.add_device(drive);
    let mut issued = 0usize;
    let mut source = |_| {
        let record = records.get(issued)?;
        issued += 1;
        Some(RequestSpec {
            operation: record.operation,
            lbn: record.lbn,
            sectors: record.sectors,
            think_after: record.think,
        })
    };
    let mut completions = Vec::with_capacity(records.len());
    run_closed_loop(&mut engine, 1, &mut source, |done| {
        completions.push(done.completion)
    })
    .map_err(|error| match error {
        EngineError::Device { error, .. } => ValidateError::Request {
            line: issued,
            source: error,
        },
        other => ValidateError::Engine(other),
    })?;
    if completions.len() < records.len() {
        return Err(ValidateError::Stuck {
            line: completions.len() + 1,
        });
    }
    let measured: Vec<f64> = records.iter().map(|r| r.measured.as_ms_f64()).collect();
    let simulated: Vec<f64> = completions
        .iter()
        .map(|c| c.response_time().as_ms_f64())
        .collect();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    Ok(ValidateReport {
        drive: name.to_string(),
        requests: records.len(),
        demerit_ms: spinstack_sim::stats::demerit_ms(&measured, &simulated),
        mean_measured_ms: mean(&measured),
        mean_simulated_ms: mean(&simulated),
        simulated_ms: simulated,
        completions,
    })
}

/// DiskSim 4.0's own demerit for the drives of its validation suite (README of
/// ../shared/disksim; `None` where DiskSim cannot run the drive).
#[allow(clippy::approx_constant)] // 0.318 is cheetah4LP's demerit, not 1/pi
pub fn disksim_demerit_ms(drive: &str) -> Option<f64> {
    Some(match drive {
        "atlas_III" => 0.378,
        "barracuda" => 0.349,
        "cheetah4LP" => 0.318,
        "dec_rz26" => 0.340,
        "hp_c2247a" => 0.090,
        "hp_c3323a" => 0.306,
        "atlas10k" => 0.268,
        "ibm18es" => 0.135,
        "cheetah9LP" => 0.107,
        "hp_c2490a" => 0.254,
        _ => return None,
    })
}
