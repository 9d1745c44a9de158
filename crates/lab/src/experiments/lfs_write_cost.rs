//! `lfs-write-cost` — traxtents paper §5.5 and Figure 10: an LFS's overall write
//! cost, OWC = WriteCost × TransferInefficiency, against segment size, for
//! track-aligned and unaligned segments on the Atlas 10K II. Paper: OWC is lower
//! with track-aligned segments and lowest when a segment is one track; Matthews et
//! al.'s model TransferInefficiency = T_pos × BW / S + 1, with 5.2 ms and 40 MB/s,
//! matches the unaligned case; 44% lower OWC for track-sized segments (abstract).
//!
//! **What is reproduced.** WriteCost comes, in the paper, from Matthews et al.'s
//! trace of an Auspex file server, which we do not have, and it "is independent of
//! disk characteristics". So this experiment measures only the disk's part,
//! TransferInefficiency = actual / ideal segment transfer time, for each segment size
//! and alignment, and does not invent a cleaning cost. That is enough for the claims
//! that do not depend on the trace: at one segment size both alignments have the
//! same WriteCost, so the OWC ratio aligned / unaligned is the TransferInefficiency
//! ratio; the model line is a TransferInefficiency; the dip at the track size is the
//! disk's. Where the minimum of OWC falls does depend on WriteCost's growth with
//! segment size; the summary gives the growth it would take.
//!
//! Measured as Figure 1 measures (the paper: "measured TransferInefficiency values
//! like those in Figure 1"): random segment-sized reads in the first zone with one
//! request queued behind the one in service (tworeq); ideal time = segment sectors ×
//! revolution / sectors per track. Not writes: with write caching off the catalog's
//! Atlas 10K II moves a write's data before it seeks (§5.2's write head times), so a
//! write-through segment would add its whole bus transfer, which the paper's
//! empirical values, taken from Figure 1, do not contain; an LFS writes segments
//! from a write-back cache anyway.

use super::common::{
    curve_points, kilobytes, mean_breakdown, measure_points, sizes_up_to, Alignment, Curve,
};
use super::fig1_efficiency::efficiency;
use crate::claim::{Claim, Tolerance};
use crate::driver::Workload;
use crate::drives::{self, ATLAS_10K_II};
use crate::harness::{Experiment, Outcome, RunContext};
use crate::plot::{Figure, LegendCorner, Mark, Panel, PanelContent, Series};
use crate::table::DataTable;
use crate::LabError;
use spinstack_sim::request::Operation;
use spinstack_sim::units::{Sectors, SECTOR_BYTES};

pub struct LfsWriteCost;

const SOURCE: &str = "§5.5, Fig. 10";
/// Matthews et al.'s positioning time and bandwidth as the paper instantiates them
/// for the Atlas 10K II's first zone (2.2 ms seek + 3 ms rotational latency, 40 MB/s).
const PAPER_POSITIONING_MS: f64 = 5.2;
const PAPER_BYTES_PER_SECOND: f64 = 40e6;
/// Segments from this size up are compared with the model (smaller ones are not LFS
/// segments).
const SMALLEST_COMPARED_KB: f64 = 64.0;

/// Matthews et al.'s TransferInefficiency for a segment of `bytes`.
pub fn model_inefficiency(positioning_ms: f64, bytes_per_second: f64, bytes: f64) -> f64 {
    positioning_ms / 1e3 * bytes_per_second / bytes + 1.0
}

/// One measured segment size: (KB, aligned TI, unaligned TI).
type Row = (f64, f64, f64);

impl Experiment for LfsWriteCost {
    fn id(&self) -> &'static str {
        "lfs-write-cost"
    }
    fn title(&self) -> &'static str {
        "LFS transfer inefficiency (overall write cost per unit WriteCost) vs segment size (traxtents §5.5, Figure 10)"
    }
    fn run(&self, context: &RunContext) -> Result<Outcome, LabError> {
        let spec = drives::spec(ATLAS_10K_II)?;
        let zone = drives::first_zone(&spec, &drives::layout(&spec)?)?;
        let spt = zone.sectors_per_track;
        let revolution_ms = drives::revolution(&spec).as_ms_f64();
        let sizes = sizes_up_to(spt, 8, 4);
        let curves = Curve::aligned_and_unaligned(&spec, &zone, Workload::TwoReq, Operation::Read);
        let points = curve_points(curves, &sizes, context);
        let runs = measure_points(&points, context)?;
        let mut data = DataTable::new(&[
            "alignment",
            "sectors",
            "segment_kb",
            "head_time_ms",
            "transfer_inefficiency",
            "model_5_2ms_40MBps",
            "model_this_drive",
        ]);
        // This drive's Matthews parameters: the mean seek of the aligned track-sized
        // segments plus half a revolution, and the first zone's media rate.
        let track_run = points
            .iter()
            .position(|p| p.sectors == spt && p.alignment == Alignment::Aligned)
            .expect("the track size is a point");
        let positioning_ms = mean_breakdown(&runs[track_run]).seek_ms + revolution_ms / 2.0;
        let media_bytes_per_second = (spt.0 * SECTOR_BYTES) as f64 / (revolution_ms / 1e3);
        let mut rows: Vec<Row> = sizes.iter().map(|s| (kilobytes(*s), 0.0, 0.0)).collect();
        for (index, (point, run)) in points.iter().zip(&runs).enumerate() {
            let head_ms = run.mean_head_time_ms();
            let inefficiency = 1.0 / efficiency(point.sectors, spt, revolution_ms, head_ms);
            let bytes = point.sectors.bytes() as f64;
            data.push(vec![
                point.alignment.name().into(),
                point.sectors.0.into(),
                kilobytes(point.sectors).into(),
                head_ms.into(),
                inefficiency.into(),
                model_inefficiency(PAPER_POSITIONING_MS, PAPER_BYTES_PER_SECOND, bytes).into(),
                model_inefficiency(positioning_ms, media_bytes_per_second, bytes).into(),
            ]);
            let row = &mut rows[index % sizes.len()];
            match point.alignment {
                Alignment::Aligned => row.1 = inefficiency,
                Alignment::Unaligned => row.2 = inefficiency,
            }
        }
        let track_index = sizes.iter().position(|&s| s == spt).expect("track size");
        let why = Why {
            rows: rows.clone(),
            track_index,
            track_kb: kilobytes(spt),
            revolution_ms,
            positioning_ms,
            media_bytes_per_second,
            aligned_track: mean_breakdown(&runs[track_run]),
            unaligned_track: mean_breakdown(&runs[sizes.len() + track_index]),
        };
        Ok(Outcome {
            data,
            figure: figure(&rows, &why),
            claims: why.claims(),
            notes: why.notes(spt),
        })
    }
}

/// The measured curves and what explains them.
struct Why {
    rows: Vec<Row>,
    track_index: usize,
    track_kb: f64,
    revolution_ms: f64,
    positioning_ms: f64,
    media_bytes_per_second: f64,
    aligned_track: super::common::MeanBreakdown,
    unaligned_track: super::common::MeanBreakdown,
}

impl Why {
    fn paper_model(kb: f64) -> f64 {
        model_inefficiency(PAPER_POSITIONING_MS, PAPER_BYTES_PER_SECOND, kb * 1024.0)
    }

    /// Mean |unaligned / model − 1| over the compared segment sizes.
    fn model_deviation(&self) -> f64 {
        let compared: Vec<f64> = self
            .rows
            .iter()
            .filter(|r| r.0 >= SMALLEST_COMPARED_KB)
            .map(|r| (r.2 / Why::paper_model(r.0) - 1.0).abs())
            .collect();
        compared.iter().sum::<f64>() / compared.len().max(1) as f64
    }

    /// Whether aligned TI at the track size is below its neighbours (¾ and 1¼ track).
    fn dips_at_track(&self) -> bool {
        let i = self.track_index;
        let at = |j: usize| self.rows.get(j).map_or(f64::NAN, |r| r.1);
        i > 0 && at(i) < at(i - 1) && at(i) < at(i + 1)
    }

    /// The factor WriteCost must grow by from one to two tracks for one track to be
    /// the aligned OWC minimum over those two sizes: TI(1 track) / TI(2 tracks).
    fn break_even_growth(&self) -> f64 {
        let two = self
            .rows
            .iter()
            .find(|r| (r.0 - 2.0 * self.track_kb).abs() < 1e-9)
            .map_or(f64::NAN, |r| r.1);
        self.rows[self.track_index].1 / two
    }

    fn claims(&self) -> Vec<Claim> {
        let (_, aligned, unaligned) = self.rows[self.track_index];
        let model = Why::paper_model(self.track_kb);
        let per_component = format!(
            "Track-sized tworeq segment head time, aligned {:.2} ms against unaligned {:.2} ms: of \
             the {:.2} ms difference, rotational latency accounts for {:+.2} ms and head \
             switches for {:+.2} ms (mean per request).",
            aligned * self.revolution_ms,
            unaligned * self.revolution_ms,
            (unaligned - aligned) * self.revolution_ms,
            self.unaligned_track.rotational_latency_ms - self.aligned_track.rotational_latency_ms,
            self.unaligned_track.head_switch_ms - self.aligned_track.head_switch_ms
        );
        vec![
            Claim::new(
                "unaligned track-sized segments: TransferInefficiency against the model \"5.2 ms * 40 MB/s\"",
                SOURCE,
                "ratio",
                model,
                unaligned,
            )
            .explain_if_missed(format!(
                "Measured {unaligned:.3} at {:.0} KB; the model with this drive's positioning \
                 ({:.2} ms: mean seek + half a revolution) and media rate ({:.1} MB/s) gives \
                 {:.3}. The model has no track switch, which unaligned segments pay. The \
                 paper's own Figure 1, its stated source, gives unaligned track-sized reads \
                 56% of the 0.89 maximum efficiency: TransferInefficiency 1 / (0.56 × 0.89) \
                 = 2.01, as here, not the model's 1.77.",
                self.track_kb,
                self.positioning_ms,
                self.media_bytes_per_second / 1e6,
                model_inefficiency(
                    self.positioning_ms,
                    self.media_bytes_per_second,
                    self.track_kb * 1024.0
                )
            )),
            Claim::with_tolerance(
                "unaligned TransferInefficiency vs the model, mean relative difference over 64 KB-2 MB segments",
                SOURCE,
                "fraction",
                0.0,
                self.model_deviation(),
                Tolerance::Absolute(0.10),
            )
            .explain_if_missed(
                "The model charges 5.2 ms of positioning per segment; see the track-sized \
                 claim for this drive's positioning, the track switches the model omits, and \
                 what the paper's own Figure 1 gives at one track.",
            ),
            Claim::new(
                "lower overall write cost for track-sized segments, aligned vs unaligned",
                "abstract, §5.5",
                "%",
                44.0,
                100.0 * (1.0 - aligned / unaligned),
            )
            .explain_if_missed(format!(
                "At one segment size WriteCost is the same for both, so this is 1 − TI \
                 aligned / TI unaligned = 1 − {aligned:.3} / {unaligned:.3}. {per_component} \
                 The paper's own disk numbers give less than 44% too: Figure 1's Point A \
                 (0.73 aligned, 56% of 0.89 unaligned) gives 32%, §5.2's track-sized write \
                 head times (10.0 vs 13.9 ms) 28%; 44% needs unaligned segments 1.79× as \
                 costly at the same size; which sizes the paper's 44% compares is not stated \
                 beside Figure 10."
            )),
            Claim::with_tolerance(
                "aligned TransferInefficiency dips at the track size (1 = below ¾ and 1¼ track)",
                SOURCE,
                "yes=1",
                1.0,
                if self.dips_at_track() { 1.0 } else { 0.0 },
                Tolerance::Absolute(0.0),
            )
            .explain(format!(
                "Whether the dip is OWC's minimum depends on WriteCost: aligned TI falls again \
                 to {:.3} at two tracks (one track: {aligned:.3}), so one track is the aligned \
                 minimum only if WriteCost grows by more than {:.1}% from one to two tracks. \
                 Matthews et al.'s Auspex WriteCost is not available here.",
                aligned / self.break_even_growth(),
                100.0 * (self.break_even_growth() - 1.0)
            )),
        ]
    }

    fn notes(&self, spt: Sectors) -> Vec<String> {
        vec![
            format!(
                "Drive: Atlas 10K II (built-in catalog), first zone, {} sectors \
                 ({:.0} KB) per track. Random segment-sized transfers measured as Figure 1 \
                 measures them (reads, as the paper takes its values from Figure 1), tworeq, \
                 aligned starting on a \
                 track's first LBN, unaligned anywhere in the zone. TransferInefficiency = mean \
                 head time / (segment sectors × revolution / sectors per track).",
                spt.0, self.track_kb
            ),
            "WriteCost: not reproduced. The paper multiplies by the WriteCost Matthews et al. \
             measured on an Auspex server trace (not available to us, and not derivable from \
             the disk); we plot TransferInefficiency, which is OWC per unit WriteCost, and \
             claim only what does not depend on the trace. A cleaning model (e.g. Rosenblum's \
             2/(1 − u)) would need a utilisation per segment size that only the trace gives."
                .to_string(),
            format!(
                "Model lines: Matthews et al.'s TI = T_pos × BW / S + 1 with the paper's 5.2 ms \
                 and 40 MB/s (10^6 B), and with this drive's {:.2} ms and {:.1} MB/s.",
                self.positioning_ms,
                self.media_bytes_per_second / 1e6
            ),
        ]
    }
}

fn figure(rows: &[Row], why: &Why) -> Figure {
    let pick = |f: &dyn Fn(&Row) -> f64| -> Vec<(f64, f64)> {
        rows.iter()
            .filter(|r| r.0 >= 128.0)
            .map(|r| (r.0, f(r)))
            .collect()
    };
    let series = vec![
        Series::new("track-aligned (measured)", Mark::Line, 0, pick(&|r| r.1)),
        Series::new("unaligned (measured)", Mark::Line, 1, pick(&|r| r.2)),
        Series::new(
            "model \"5.2 ms*40 MB/s\" (paper's)",
            Mark::Dashed,
            6,
            pick(&|r| Why::paper_model(r.0)),
        ),
        Series::new(
            &format!(
                "model {:.2} ms*{:.1} MB/s (this drive)",
                why.positioning_ms,
                why.media_bytes_per_second / 1e6
            ),
            Mark::Dashed,
            2,
            pick(&|r| {
                model_inefficiency(why.positioning_ms, why.media_bytes_per_second, r.0 * 1024.0)
            }),
        ),
    ];
    Figure {
        panels: vec![Panel {
            title: "LFS segments (measured as Figure 1): overall write cost per unit WriteCost (Atlas 10K II)"
                .to_string(),
            x_label: "segment size (KB)".to_string(),
            y_label: "TransferInefficiency = OWC / WriteCost".to_string(),
            content: PanelContent::Lines(series),
            legend: LegendCorner::UpperRight,
        }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Proves the model line's arithmetic: 5.2 ms × 40 MB/s is 208,000 bytes of
    // positioning, so a 208,000-byte segment costs twice its transfer.
    #[test]
    fn model_doubles_at_the_positioning_bytes() {
        let at = model_inefficiency(PAPER_POSITIONING_MS, PAPER_BYTES_PER_SECOND, 208_000.0);
        assert!((at - 2.0).abs() < 1e-12, "{at}");
        assert!(model_inefficiency(5.2, 40e6, 4e6) < 1.06);
    }
}
