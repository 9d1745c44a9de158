//! `fig3-rotational-latency` — traxtents paper §2.2 and Figure 3: expected rotational
//! latency of a track-aligned request as a function of its size (% of a track).
//!
//! Paper: an ordinary disk waits "(SPT − 1)/(2·SPT), or approximately 1/2 revolution,
//! regardless of the request size"; a zero-latency disk reads the sectors in the
//! order they pass under the head, so its expected latency falls with request size to
//! none for a full track ("only one revolution after the seek").
//!
//! Analytic model (discrete, the head arrives at one of SPT sector boundaries with
//! equal probability; the request is sectors 0..N of the track):
//! - ordinary: wait for sector 0: (SPT − 1)/(2·SPT) revolutions on average.
//! - zero-latency: arriving at sector k of the request (0 < k < N) the head reads
//!   k..N, waits out the SPT − N sectors not requested, then reads 0..k, so the
//!   non-transfer time is SPT − N sectors; arriving at k = 0 there is none; arriving
//!   outside the request (k ≥ N) it waits SPT − k sectors. Averaged:
//!   [(N − 1)(SPT − N) + (SPT − N)(SPT − N + 1)/2] / SPT² revolutions
//!   (≈ (1 − f²)/2 for f = N/SPT).
//!
//! Simulated: onereq track-aligned random reads in the first zone of the Atlas 10K II,
//! as built (zero-latency) and with zero-latency access switched off; the drive's own
//! rotational-latency component (every rotational wait of the request) is averaged.

use super::common::{curve_points, mean_breakdown, measure_points, Alignment, Curve, Point};
use crate::claim::{Claim, Tolerance};
use crate::driver::{Run, Workload};
use crate::drives::{self, ATLAS_10K_II};
use crate::harness::{Experiment, Outcome, RunContext};
use crate::plot::{Figure, LegendCorner, Mark, Panel, PanelContent, Series};
use crate::table::DataTable;
use crate::LabError;
use spinstack_sim::request::Operation;
use spinstack_sim::units::Sectors;

pub struct Fig3RotationalLatency;

/// Expected rotational latency of an ordinary disk, in revolutions.
pub fn ordinary_revolutions(sectors_per_track: u64) -> f64 {
    let spt = sectors_per_track as f64;
    (spt - 1.0) / (2.0 * spt)
}

/// Expected rotational latency of a zero-latency disk for a track-aligned request of
/// `sectors` (1 ≤ sectors ≤ SPT), in revolutions.
pub fn zero_latency_revolutions(sectors: u64, sectors_per_track: u64) -> f64 {
    assert!(sectors >= 1 && sectors <= sectors_per_track);
    let (n, spt) = (sectors as f64, sectors_per_track as f64);
    ((n - 1.0) * (spt - n) + (spt - n) * (spt - n + 1.0) / 2.0) / (spt * spt)
}

/// Request sizes: one sector, then 5% steps to a full track.
fn sizes(track: Sectors) -> Vec<Sectors> {
    let mut sizes = vec![Sectors(1)];
    sizes.extend((1..=20).map(|step| Sectors(((track.0 * step) as f64 / 20.0).round() as u64)));
    sizes.dedup();
    sizes
}

struct Curves {
    analytic: [Vec<(f64, f64)>; 2],
    simulated: [Vec<(f64, f64)>; 2],
}

impl Experiment for Fig3RotationalLatency {
    fn id(&self) -> &'static str {
        "fig3-rotational-latency"
    }
    fn title(&self) -> &'static str {
        "Expected rotational latency vs request size, zero-latency and ordinary disks (traxtents §2.2, Figure 3)"
    }
    fn run(&self, context: &RunContext) -> Result<Outcome, LabError> {
        // Zero bus transfer, as the paper's Figure 3 counts rotation only.
        let zero_latency = drives::with_zero_bus_transfer(&drives::spec(ATLAS_10K_II)?);
        let ordinary = drives::without_zero_latency(&zero_latency);
        let zone = drives::first_zone(&zero_latency, &drives::layout(&zero_latency)?)?;
        let spt = zone.sectors_per_track;
        let revolution_ms = drives::revolution(&zero_latency).as_ms_f64();
        let sizes = sizes(spt);
        let specs = [&zero_latency, &ordinary];
        let disks = specs.map(|spec| Curve {
            spec,
            zone: &zone,
            workload: Workload::OneReq,
            alignment: Alignment::Aligned,
            operation: Operation::Read,
        });
        let points = curve_points(disks, &sizes, context);
        let runs = measure_points(&points, context)?;
        let (data, curves) = tabulate(&points, &runs, &zero_latency.name, spt, revolution_ms);
        let claims = claims(&curves, spt, revolution_ms);
        Ok(Outcome {
            data,
            figure: figure(curves, spt, revolution_ms),
            claims,
            notes: notes(spt, revolution_ms),
        })
    }
}

/// One data row per point, and each disk's analytic and simulated curves (index 0:
/// the disk called `zero_latency_name`, 1: the ordinary one).
fn tabulate(
    points: &[Point],
    runs: &[Run],
    zero_latency_name: &str,
    spt: Sectors,
    revolution_ms: f64,
) -> (DataTable, Curves) {
    let mut data = DataTable::new(&[
        "disk",
        "sectors",
        "percent_of_track",
        "analytic_latency_ms",
        "simulated_latency_ms",
        "response_less_other_components_ms",
    ]);
    let mut curves = Curves {
        analytic: [Vec::new(), Vec::new()],
        simulated: [Vec::new(), Vec::new()],
    };
    for (point, run) in points.iter().zip(runs) {
        let index = usize::from(point.spec.name != zero_latency_name);
        let sectors = point.sectors;
        let analytic_ms = revolution_ms
            * if index == 0 {
                zero_latency_revolutions(sectors.0, spt.0)
            } else {
                ordinary_revolutions(spt.0)
            };
        let b = mean_breakdown(run);
        let simulated_ms = b.rotational_latency_ms;
        // Cross-check: the breakdown's components add up to the response time.
        let left_over_ms = b.response_ms
            - b.overhead_ms
            - b.seek_ms
            - b.head_switch_ms
            - b.media_transfer_ms
            - (b.bus_transfer_ms - b.overlap_ms);
        let percent = 100.0 * sectors.0 as f64 / spt.0 as f64;
        let disk = ["zero-latency", "ordinary"][index];
        data.push(vec![
            disk.into(),
            sectors.0.into(),
            percent.into(),
            analytic_ms.into(),
            simulated_ms.into(),
            left_over_ms.into(),
        ]);
        curves.analytic[index].push((percent, analytic_ms));
        curves.simulated[index].push((percent, simulated_ms));
    }
    (data, curves)
}

fn figure(curves: Curves, spt: Sectors, revolution_ms: f64) -> Figure {
    let half = ordinary_revolutions(spt.0) * revolution_ms;
    let [analytic_zero, analytic_ordinary] = curves.analytic;
    let [simulated_zero, simulated_ordinary] = curves.simulated;
    let series = vec![
        Series::new("ordinary, analytic", Mark::Dashed, 1, analytic_ordinary),
        Series::new("ordinary, simulated", Mark::Markers, 1, simulated_ordinary),
        Series::new("zero-latency, analytic", Mark::Dashed, 0, analytic_zero),
        Series::new("zero-latency, simulated", Mark::Markers, 0, simulated_zero),
        Series::new(
            "paper: (SPT-1)/(2 SPT) rev ordinary; 0 for a full track, zero-latency",
            Mark::Paper,
            0,
            vec![(0.0, half), (100.0, half), (100.0, 0.0)],
        ),
    ];
    Figure {
        panels: vec![Panel {
            title: format!(
                "Rotational latency, track-aligned reads (Atlas 10K II zone 0, {} sectors/track)",
                spt.0
            ),
            x_label: "request size (% of track)".to_string(),
            y_label: "mean rotational latency (ms)".to_string(),
            content: PanelContent::Lines(series),
            legend: LegendCorner::LowerLeft,
        }],
    }
}

fn at(points: &[(f64, f64)], percent: f64) -> f64 {
    points
        .iter()
        .min_by(|a, b| (a.0 - percent).abs().total_cmp(&(b.0 - percent).abs()))
        .map_or(f64::NAN, |p| p.1)
}

fn claims(curves: &Curves, spt: Sectors, revolution_ms: f64) -> Vec<Claim> {
    let half_ms = ordinary_revolutions(spt.0) * revolution_ms;
    let half_track_ms = zero_latency_revolutions(spt.0 / 2, spt.0) * revolution_ms;
    let [zero, ordinary] = &curves.simulated;
    // Zero has no relative tolerance; 10% of the ordinary disk's half revolution is.
    let none = Tolerance::Absolute(0.1 * half_ms);
    vec![
        Claim::new("ordinary disk, 1-sector request: (SPT-1)/(2 SPT) revolution", "§2.2, Fig. 3", "ms", half_ms, at(ordinary, 0.0)),
        Claim::new("ordinary disk, track-sized request: still (SPT-1)/(2 SPT) revolution", "§2.2, Fig. 3", "ms", half_ms, at(ordinary, 100.0)),
        Claim::new("zero-latency disk, 1-sector request: same as ordinary", "§2.2, Fig. 3", "ms", half_ms, at(zero, 0.0)),
        Claim::new("zero-latency disk, half-track request (Fig. 3 curve, from §2.2's mechanism)", "§2.2, Fig. 3", "ms", half_track_ms, at(zero, 50.0))
            .explain("The paper gives this point only as a curve; its value here is the analytic model of the mechanism §2.2 describes."),
        Claim::with_tolerance("zero-latency disk, track-sized request: no rotational latency", "§2.2, Fig. 3", "ms", 0.0, at(zero, 100.0), none),
    ]
}

fn notes(spt: Sectors, revolution_ms: f64) -> Vec<String> {
    vec![format!(
        "Drive: Atlas 10K II from the built-in catalog, first zone ({} sectors per track, \
         one revolution = {:.3} ms), run with zero bus transfer time. \"ordinary\" is the \
         same drive with zero-latency access switched off (immediate buffer read and \
         read-any-free-blocks off; the catalog's Atlas 10K II has zero-latency \
         access, so this is a counterfactual on the same geometry, not another drive). \
         Simulated points: onereq, track-aligned random reads; the mean of the drive's \
         rotational_latency component, which holds every rotational wait of the media \
         work, including a zero-latency read's wait, after reading the tail of its \
         request, for the head to come round to the request's start. data.csv also has \
         the response time less every other component (equal to it when the components \
         add up). The analytic curves are the discrete model in the module \
         documentation.",
        spt.0, revolution_ms
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    // Proves the zero-latency model meets the paper's end points: equal to the
    // ordinary disk for one sector, zero for a full track, and decreasing between.
    #[test]
    fn zero_latency_model_end_points() {
        let spt = 528;
        assert!((zero_latency_revolutions(1, spt) - ordinary_revolutions(spt)).abs() < 1e-12);
        assert_eq!(zero_latency_revolutions(spt, spt), 0.0);
        let curve: Vec<f64> = (1..=spt)
            .map(|n| zero_latency_revolutions(n, spt))
            .collect();
        assert!(curve.windows(2).all(|w| w[1] <= w[0]));
        // Continuous approximation (1 - f^2)/2 at f = 1/2.
        assert!((zero_latency_revolutions(spt / 2, spt) - 0.375).abs() < 0.005);
    }
}
