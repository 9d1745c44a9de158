//! `fig6-head-time` — traxtents paper §5.2 and Figure 6: average head time of 5,000
//! random reads in the Atlas 10K II's first zone, track-aligned vs unaligned, for the
//! onereq and tworeq workloads, plus onereq on a drive with zero bus transfer time.
//!
//! Paper: for track-sized requests, aligned head time is 18% lower (onereq) and 32%
//! lower (tworeq); tworeq aligned is 8.3 ms, which less the 2.2 ms average seek is
//! 6.1 ms, about one 6 ms revolution. The zero-bus-transfer onereq curve approximates
//! tworeq.

use super::common::{
    curve_points, kilobytes, mean_breakdown, measure_points, reduction_percent, sizes_up_to,
    track_size_index, Alignment, Curve, PAPER_SEEK_MS,
};
use crate::claim::Claim;
use crate::driver::{Run, Workload};
use crate::drives::{self, ATLAS_10K_II};
use crate::harness::{Experiment, Outcome, RunContext};
use crate::plot::{Figure, LegendCorner, Mark, Panel, PanelContent, Series};
use crate::table::DataTable;
use crate::LabError;
use spinstack_disk::drive::mechanics::PublishedSeek;
use spinstack_disk::layout::Layout;
use spinstack_disk::spec::{DriveSpec, SeekSpec};
use spinstack_sim::request::Operation;
use spinstack_sim::units::Sectors;

pub struct Fig6HeadTime;

/// The curves of Figure 6, in plotting order.
const CURVES: [(&str, Workload, Alignment, bool); 5] = [
    (
        "onereq, unaligned",
        Workload::OneReq,
        Alignment::Unaligned,
        false,
    ),
    (
        "onereq, aligned",
        Workload::OneReq,
        Alignment::Aligned,
        false,
    ),
    (
        "tworeq, unaligned",
        Workload::TwoReq,
        Alignment::Unaligned,
        false,
    ),
    (
        "tworeq, aligned",
        Workload::TwoReq,
        Alignment::Aligned,
        false,
    ),
    (
        "onereq, aligned, zero bus transfer",
        Workload::OneReq,
        Alignment::Aligned,
        true,
    ),
];

impl Experiment for Fig6HeadTime {
    fn id(&self) -> &'static str {
        "fig6-head-time"
    }
    fn title(&self) -> &'static str {
        "Average head time, track-aligned vs unaligned reads, onereq and tworeq (traxtents §5.2, Figure 6)"
    }
    fn run(&self, context: &RunContext) -> Result<Outcome, LabError> {
        let spec = drives::spec(ATLAS_10K_II)?;
        let zero_bus = drives::with_zero_bus_transfer(&spec);
        let layout = drives::layout(&spec)?;
        let zone = drives::first_zone(&spec, &layout)?;
        let spt = zone.sectors_per_track;
        let sizes = sizes_up_to(spt, 2, 8);
        let spec_of = |zero: bool| -> &DriveSpec {
            if zero {
                &zero_bus
            } else {
                &spec
            }
        };
        let curves = CURVES.map(|(_, workload, alignment, zero)| Curve {
            spec: spec_of(zero),
            zone: &zone,
            workload,
            alignment,
            operation: Operation::Read,
        });
        let points = curve_points(curves, &sizes, context);
        let runs = measure_points(&points, context)?;
        let mut data = DataTable::new(&[
            "curve",
            "sectors",
            "size_kb",
            "head_time_ms",
            "mean_seek_ms",
        ]);
        let mut series_points: Vec<Vec<(f64, f64)>> = vec![Vec::new(); CURVES.len()];
        for (index, (point, run)) in points.iter().zip(&runs).enumerate() {
            let curve = index / sizes.len();
            let head_ms = run.mean_head_time_ms();
            let seek_ms = mean_breakdown(run).seek_ms;
            let kb = kilobytes(point.sectors);
            data.push(vec![
                CURVES[curve].0.into(),
                point.sectors.0.into(),
                kb.into(),
                head_ms.into(),
                seek_ms.into(),
            ]);
            series_points[curve].push((kb, head_ms));
        }
        let size = track_size_index(&sizes, spt);
        let at_track: Vec<&Run> = (0..CURVES.len())
            .map(|c| &runs[c * sizes.len() + size])
            .collect();
        let seek = SeekFacts::of(&spec, &layout, &zone);
        let claims = claims(&at_track, drives::revolution(&spec).as_ms_f64(), &seek);
        Ok(Outcome {
            data,
            figure: figure(series_points, spt),
            claims,
            notes: notes(spt, &at_track),
        })
    }
}

/// What the drive's seek model says about the first zone (for explaining the seek).
pub struct SeekFacts {
    pub zone_cylinders: u32,
    pub drive_cylinders: u32,
    /// The fitted `Published` curve, when the drive has one.
    pub curve: Option<PublishedSeek>,
    pub curve_text: String,
}

impl SeekFacts {
    pub fn of(spec: &DriveSpec, layout: &Layout, zone: &drives::Zone) -> SeekFacts {
        let last = zone.tracks.last().map_or(0, |t| t.cylinder);
        let first = zone.tracks[0].cylinder;
        let drive_cylinders = layout.tracks().last().map_or(1, |t| t.cylinder + 1);
        let (curve, curve_text) = match &spec.mechanics.seek {
            SeekSpec::Published {
                single_cylinder_ms,
                average_ms,
                full_stroke_ms,
            } => {
                let fitted = PublishedSeek::fit(
                    *single_cylinder_ms,
                    *average_ms,
                    *full_stroke_ms,
                    drive_cylinders,
                );
                let text = format!(
                    "t(d) = {single_cylinder_ms} + {:.4}·√(d−1) + {:.6}·(d−1) ms, fitted to the \
                     data sheet's single-cylinder ({single_cylinder_ms} ms), average \
                     ({average_ms} ms over random seeks of the whole {drive_cylinders}-cylinder \
                     disk) and full-stroke ({full_stroke_ms} ms) times",
                    fitted.sqrt_ms, fitted.per_cylinder_ms
                );
                (Some(fitted), text)
            }
            _ => (None, "the drive's own (extracted) seek curve".to_string()),
        };
        SeekFacts {
            zone_cylinders: last - first + 1,
            drive_cylinders,
            curve,
            curve_text,
        }
    }

    /// Why the workload's mean seek is what it is, with the curve's own numbers.
    pub fn explain(&self, seek_ms: f64, paper_seek_ms: f64) -> String {
        let third = (self.zone_cylinders / 3).max(1);
        let mut text = format!(
            "The catalog's first zone spans {} of the drive's {} cylinders ({:.1}% of the \
             stroke); random requests in it seek about a third of the zone ({third} cylinders) \
             on average. The seek curve is {}.",
            self.zone_cylinders,
            self.drive_cylinders,
            100.0 * f64::from(self.zone_cylinders) / f64::from(self.drive_cylinders.max(1)),
            self.curve_text
        );
        if let Some(curve) = &self.curve {
            let reach = (1..self.drive_cylinders).find(|&d| curve.time_ms(d) >= paper_seek_ms);
            text.push_str(&format!(
                " It gives t({third}) = {:.2} ms (measured mean {seek_ms:.2} ms)",
                curve.time_ms(third)
            ));
            if let Some(d) = reach {
                text.push_str(&format!(
                    "; it reaches the paper's {paper_seek_ms} ms at {d} cylinders (the mean \
                     of a concave curve over the zone's distances is below its value at \
                     the mean distance)"
                ));
            }
            text.push('.');
        }
        text
    }
}

/// `at_track`: the track-sized run of each curve, in CURVES order.
fn claims(at_track: &[&Run], revolution_ms: f64, seek: &SeekFacts) -> Vec<Claim> {
    let tworeq_aligned = at_track[3];
    let seek_ms = mean_breakdown(tworeq_aligned).seek_ms;
    let queue = queue_explanation(at_track);
    let mut claims = reduction_claims(at_track, seek_ms, &queue);
    claims.extend(tworeq_aligned_claims(
        tworeq_aligned.mean_head_time_ms(),
        seek_ms,
        revolution_ms,
        seek,
        &queue,
    ));
    claims
}

/// Why tworeq head times are shorter than onereq's: the next request's positioning
/// overlaps the bus transfer that ends an aligned read.
fn queue_explanation(at_track: &[&Run]) -> String {
    let head = |curve: usize| at_track[curve].mean_head_time_ms();
    let aligned = mean_breakdown(at_track[1]);
    let exposed_bus_ms = aligned.bus_transfer_ms - aligned.overlap_ms;
    format!(
        "tworeq head time is {:.2} ms aligned and {:.2} ms unaligned against \
         onereq's {:.2} / {:.2} ms. An aligned onereq read ends with {exposed_bus_ms:.2} ms of \
         bus transfer after its media work (bus {:.2} ms less {:.2} ms overlapped); at queue \
         depth 2 the model frees the arm when the media work ends, so the next request's \
         positioning can run during that transfer.",
        head(3),
        head(2),
        head(1),
        head(0),
        aligned.bus_transfer_ms,
        aligned.overlap_ms
    )
}

/// The head-time reductions from alignment, onereq then tworeq.
fn reduction_claims(at_track: &[&Run], seek_ms: f64, queue: &str) -> Vec<Claim> {
    let head = |curve: usize| at_track[curve].mean_head_time_ms();
    let source = "§5.2, Fig. 6";
    // The seek is the same with and without alignment, so a longer one shrinks the
    // relative saving: show the reduction at the paper's seek.
    let seek_gap = PAPER_SEEK_MS - seek_ms;
    vec![
        Claim::new(
            "track-sized reads, onereq: head-time reduction from alignment",
            source,
            "%",
            18.0,
            reduction_percent(head(0), head(1)),
        )
        .explain_if_missed(format!(
            "Unaligned {:.2} ms, aligned {:.2} ms: alignment saves {:.2} ms. The workload's \
             mean seek is {seek_ms:.2} ms against the paper's {PAPER_SEEK_MS} ms; with \
             {seek_gap:.2} ms added to both head times the same saving would be a {:.1}% \
             reduction (arithmetic, not a run).",
            head(0),
            head(1),
            head(0) - head(1),
            reduction_percent(head(0) + seek_gap, head(1) + seek_gap)
        )),
        Claim::new(
            "track-sized reads, tworeq: head-time reduction from alignment",
            source,
            "%",
            32.0,
            reduction_percent(head(2), head(3)),
        )
        .explain(queue),
    ]
}

/// tworeq, aligned, track-sized: the head time, its seek, and the revolution left
/// when the seek is taken out.
fn tworeq_aligned_claims(
    tworeq_aligned: f64,
    seek_ms: f64,
    revolution_ms: f64,
    seek: &SeekFacts,
    queue: &str,
) -> Vec<Claim> {
    let source = "§5.2, Fig. 6";
    vec![
        Claim::new(
            "tworeq, aligned, track-sized: head time",
            source,
            "ms",
            8.3,
            tworeq_aligned,
        )
        .explain_if_missed(format!(
            "Less its seek the head time is {:.2} ms (paper: 8.3 − 2.2 = 6.1 ms); the \
             difference from the paper is mostly the seek ({seek_ms:.2} vs {PAPER_SEEK_MS} ms, \
             see the average-seek claim).",
            tworeq_aligned - seek_ms
        )),
        Claim::new(
            "average seek of the workload",
            source,
            "ms",
            PAPER_SEEK_MS,
            seek_ms,
        )
        .calibration(format!(
            "Calibration, not a check: the catalog's first-zone width was fitted to this \
             2.2 ms (crates/disk/catalog/atlas10k2.toml header; tools/catalog/gen_catalog.py, \
             infer_first_zone: the mean seek between two random cylinders of the zone on \
             the drive's seek curve). The run measures {seek_ms:.3} ms. {}",
            seek.explain(seek_ms, PAPER_SEEK_MS)
        )),
        Claim::new(
            "tworeq aligned head time less the seek (≈ one revolution)",
            source,
            "ms",
            6.1,
            tworeq_aligned - seek_ms,
        )
        .explain(format!(
            "Head time less seek less one revolution ({revolution_ms:.3} ms) is {:+.2} ms: \
             controller overhead and bus transfer that the next request's positioning does \
             not hide, less whatever part of the seek itself ran during the previous \
             request's transfer (not separated here for tworeq). {queue}",
            tworeq_aligned - seek_ms - revolution_ms
        )),
    ]
}

fn figure(series_points: Vec<Vec<(f64, f64)>>, spt: Sectors) -> Figure {
    // tworeq dashed, in its own colours, so that both workloads show where they meet.
    let marks = [
        Mark::Line,
        Mark::Line,
        Mark::Dashed,
        Mark::Dashed,
        Mark::Markers,
    ];
    let colors = [1, 0, 3, 2, 4];
    let mut series: Vec<Series> = series_points
        .into_iter()
        .enumerate()
        .map(|(i, points)| Series::new(CURVES[i].0, marks[i], colors[i], points))
        .collect();
    series.push(Series::new(
        "paper: tworeq aligned, track-sized: 8.3 ms",
        Mark::Paper,
        0,
        vec![(kilobytes(spt), 8.3)],
    ));
    Figure {
        panels: vec![Panel {
            title: "Average head time, random reads in the first zone (Atlas 10K II)".to_string(),
            x_label: "request size (KB)".to_string(),
            y_label: "average head time (ms)".to_string(),
            content: PanelContent::Lines(series),
            legend: LegendCorner::UpperLeft,
        }],
    }
}

fn notes(spt: Sectors, at_track: &[&Run]) -> Vec<String> {
    let zero_bus = format!(
        "The paper says (qualitatively) that onereq with zero bus transfer approximates \
         tworeq. Here, aligned track-sized: onereq with zero bus transfer {:.2} ms, tworeq \
         {:.2} ms, onereq {:.2} ms.",
        at_track[4].mean_head_time_ms(),
        at_track[3].mean_head_time_ms(),
        at_track[1].mean_head_time_ms()
    );
    vec![
        zero_bus,
        format!(
            "Drive: Atlas 10K II (built-in catalog), first zone, {} sectors per track ({:.0} KB). \
         Head time as in Figure 5: onereq = response time; tworeq = time between \
         consecutive completions (averaged as elapsed time per request). The zero bus \
         transfer curve runs the same drive with its host-link time per sector set to \
         zero, as the paper's simulator did.",
            spt.0,
            kilobytes(spt)
        ),
    ]
}
