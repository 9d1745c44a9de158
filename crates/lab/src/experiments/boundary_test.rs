//! `boundary-test` — validation paper (Qian et al.) §2.3, Figure 3: "The average
//! elapsed time for accessing 64 sectors across a track boundary is 7.3 msec,
//! compared to 5.7 msec for not crossing the track boundaries." Measured on a
//! Maxtor Atlas 10K V whose first zone has 1,144-sector tracks.
//!
//! The reads come from `spinstack_extract::experiments::boundary_test` (64-sector
//! reads at random offsets in [−128, 128) from random track boundaries of the first
//! zone's top surface, each issued at a random rotational phase) on the catalog's
//! `maxtor10kv-czk`. This module only turns them into claims and a figure.

use crate::claim::Claim;
use crate::drives::{self, Zone};
use crate::harness::{Experiment, Outcome, RunContext};
use crate::plot::{Figure, LegendCorner, Mark, Panel, PanelContent, Series};
use crate::table::{Cell, DataTable};
use crate::LabError;
use spinstack_disk::spec::DriveSpec;
use spinstack_extract::experiments::{boundary_test, BoundaryPoint, BOUNDARY_TEST_SECTORS};
use spinstack_sim::rng::SplitMix64;

pub struct BoundaryTest;

/// The drive the paper measured (its CZK firmware has 1,144-sector first-zone tracks).
const DRIVE: &str = "maxtor10kv-czk";
const PAPER_CROSSING_MS: f64 = 7.3;
const PAPER_WITHIN_MS: f64 = 5.7;
const PAPER_TRACK_SECTORS: f64 = 1144.0;
/// Data sheet track-switch time the paper quotes (0.3-0.5 ms).
const PAPER_TRACK_SWITCH_MS: (f64, f64) = (0.3, 0.5);

fn mean_of(points: &[BoundaryPoint], crossing: bool) -> (f64, usize) {
    let times: Vec<f64> = points
        .iter()
        .filter(|p| p.crosses == crossing)
        .map(|p| p.time_ms)
        .collect();
    let n = times.len();
    (times.iter().sum::<f64>() / n.max(1) as f64, n)
}

fn data_table(points: &[BoundaryPoint]) -> DataTable {
    let mut data = DataTable::new(&["offset_sectors", "crosses_boundary", "time_ms"]);
    for p in points {
        let crosses: u64 = p.crosses.into();
        data.push(vec![
            Cell::Integer(p.offset),
            crosses.into(),
            p.time_ms.into(),
        ]);
    }
    data
}

fn figure(points: &[BoundaryPoint], crossing_ms: f64, within_ms: f64) -> Figure {
    let scatter = |crossing: bool| -> Vec<(f64, f64)> {
        points
            .iter()
            .filter(|p| p.crosses == crossing)
            .map(|p| (p.offset as f64, p.time_ms))
            .collect()
    };
    let size = BOUNDARY_TEST_SECTORS as f64;
    let series = vec![
        Series::new(
            "spinstack: read crosses the boundary",
            Mark::Markers,
            1,
            scatter(true),
        ),
        Series::new(
            "spinstack: read within one track",
            Mark::Markers,
            0,
            scatter(false),
        ),
        Series::new(
            "spinstack: mean crossing",
            Mark::Line,
            2,
            vec![(-size + 1.0, crossing_ms), (-1.0, crossing_ms)],
        ),
        Series::new(
            "spinstack: mean within one track",
            Mark::Line,
            4,
            vec![(0.0, within_ms), (2.0 * size - 1.0, within_ms)],
        ),
        Series::new(
            "paper (Atlas 10K V): 7.3 ms crossing, 5.7 ms within",
            Mark::Paper,
            0,
            vec![(-size / 2.0, PAPER_CROSSING_MS), (size, PAPER_WITHIN_MS)],
        ),
    ];
    Figure {
        panels: vec![Panel {
            title: "64-sector reads around track boundaries (maxtor10kv-czk, first zone)"
                .to_string(),
            x_label: "start of the read relative to the track boundary (sectors)".to_string(),
            y_label: "response time (ms)".to_string(),
            content: PanelContent::Lines(series),
            legend: LegendCorner::UpperRight,
        }],
    }
}

/// Mean response time and number of reads, for reads that cross a boundary and for
/// reads that stay within one track.
struct Means {
    crossing_ms: f64,
    crossing_count: usize,
    within_ms: f64,
    within_count: usize,
}

impl Means {
    fn of(points: &[BoundaryPoint]) -> Means {
        let (crossing_ms, crossing_count) = mean_of(points, true);
        let (within_ms, within_count) = mean_of(points, false);
        Means {
            crossing_ms,
            crossing_count,
            within_ms,
            within_count,
        }
    }
}

impl Experiment for BoundaryTest {
    fn id(&self) -> &'static str {
        "boundary-test"
    }
    fn title(&self) -> &'static str {
        "64-sector reads across vs within a track boundary (validation paper §2.3, Figure 3)"
    }
    fn run(&self, context: &RunContext) -> Result<Outcome, LabError> {
        context.progress.set_length(1);
        let spec = drives::spec(DRIVE)?;
        let zone = drives::first_zone(&spec, &drives::layout(&spec)?)?;
        let seed = SplitMix64::for_label(context.seed, "boundary-test").next_u64();
        let points =
            boundary_test(&spec, context.scale.requests_per_point, seed).map_err(|error| {
                LabError::Run {
                    id: self.id().to_string(),
                    problem: error.to_string(),
                }
            })?;
        context.progress.inc(1);
        let means = Means::of(&points);
        Ok(Outcome {
            data: data_table(&points),
            figure: figure(&points, means.crossing_ms, means.within_ms),
            claims: claims(&means, &spec, &zone),
            notes: notes(&means, &zone, points.len()),
        })
    }
}

fn claims(means: &Means, spec: &DriveSpec, zone: &Zone) -> Vec<Claim> {
    let source = "Qian §2.3, Fig. 3";
    let (crossing, within) = (means.crossing_ms, means.within_ms);
    let revolution_ms = drives::revolution(spec).as_ms_f64();
    vec![
        Claim::new(
            "first-zone track size of the top surface (the one tested)",
            source,
            "sectors",
            PAPER_TRACK_SECTORS,
            zone.tracks[0].sectors.0 as f64,
        )
        .input(
            "Input, not a check: the catalog's maxtor10kv-czk was built from this number \
             (the validation paper's Table 2 gives 1,144 sectors for the outermost track \
             of surface 0), so it agrees by construction. Shown to confirm the test ran \
             on the track size the paper's drive had.",
        ),
        Claim::new(
            "mean time, read crosses a track boundary",
            source,
            "ms",
            PAPER_CROSSING_MS,
            crossing,
        ),
        Claim::new(
            "mean time, read within one track",
            source,
            "ms",
            PAPER_WITHIN_MS,
            within,
        )
        .explain_if_missed(format!(
            "Half a revolution of the model is {:.2} ms; the other {:.2} ms of the mean is \
             controller overhead, the seek between random first-zone boundaries and the \
             64-sector transfer (not separated: this test records only response times). \
             The paper's reads also paid its host's overheads and its drive's seeks; \
             neither is known here, so the {:.2} ms gap is reported, not attributed.",
            revolution_ms / 2.0,
            within - revolution_ms / 2.0,
            PAPER_WITHIN_MS - within
        )),
        Claim::new(
            "crossing minus within",
            source,
            "ms",
            PAPER_CROSSING_MS - PAPER_WITHIN_MS,
            crossing - within,
        )
        .explain(difference_explanation(
            crossing - within,
            spec.mechanics.head_switch_ms,
        )),
    ]
}

/// Set the crossing reads' extra time beside the paper's puzzle and the model's head
/// switch (the test has no breakdown to attribute it with).
fn difference_explanation(difference: f64, head_switch_ms: f64) -> String {
    format!(
        "The paper found its 1.6 ms much larger than the data sheet's track switch \
         ({:.1}-{:.1} ms) and left it unexplained. The model's head switch is \
         {head_switch_ms:.2} ms and its crossing reads take {difference:.2} ms longer \
         on average (this test records only response times, so the difference is not \
         decomposed further here).",
        PAPER_TRACK_SWITCH_MS.0, PAPER_TRACK_SWITCH_MS.1,
    )
}

fn notes(means: &Means, zone: &Zone, reads: usize) -> Vec<String> {
    vec![format!(
        "Drive: {DRIVE} (built-in catalog), caches as shipped, first zone ({} sectors per \
         track on the top surface, {} on the other). {} reads of {BOUNDARY_TEST_SECTORS} sectors ({} crossing, \
         {} within one track), each starting at a random offset in [−128, 128) \
         sectors from a random boundary of the first zone's top surface and issued after an \
         idle time drawn uniformly from one revolution, so that the rotational phase is \
         random; each read also seeks from the previous one's boundary. A read crosses \
         when it starts 1-63 sectors before the boundary. Data from \
         spinstack-extract's boundary test (the same code as `spinstack extract \
         --experiment boundary-test`).",
        zone.tracks[0].sectors.0,
        // The other surface's first track: in serpentine order the next tracks in
        // LBN order stay on the top surface for a whole band of cylinders.
        zone.tracks
            .iter()
            .find(|t| t.surface != zone.tracks[0].surface)
            .map_or(0, |t| t.sectors.0),
        reads,
        means.crossing_count,
        means.within_count
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    // Regression (issue 12 review): the setup note took the zone's second track in LBN
    // order as "the other surface", but in serpentine order that track is on the same
    // surface, so the note said 1144 and 1144 where the paper's Table 2 gives the CZK
    // drive 1144 (surface 0) and 1092 (surface 1).
    #[test]
    fn setup_note_names_both_surfaces_track_sizes() {
        let spec = spinstack_disk::catalog::get(DRIVE).unwrap();
        let zone = drives::first_zone(&spec, &drives::layout(&spec).unwrap()).unwrap();
        let means = Means {
            crossing_ms: 0.0,
            crossing_count: 0,
            within_ms: 0.0,
            within_count: 0,
        };
        let note = &notes(&means, &zone, 0)[0];
        assert!(
            note.contains("1144 sectors per track on the top surface, 1092 on the other"),
            "{note}"
        );
    }
}
