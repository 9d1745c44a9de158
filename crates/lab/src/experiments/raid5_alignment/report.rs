//! The table, figure, claims and notes of `raid5-alignment`.

use super::*;

pub(super) fn data_table(runs: &[Measured]) -> DataTable {
    let mut data = DataTable::new(&[
        "layout",
        "workload",
        "member_requests",
        "mean_member_request_sectors",
        "whole_track_share",
        "track_crossing_share",
        "member_head_time_ms_per_member_request",
        "member_head_time_us_per_sector",
        "volume_mib_per_second",
        "unused_capacity_fraction",
    ]);
    for run in runs {
        data.push(vec![
            LAYOUTS[run.layout].1.into(),
            WORKLOADS[run.workload].1.into(),
            (run.requests() as u64).into(),
            run.mean_request_sectors().into(),
            run.whole_track_share().into(),
            run.crossing_share().into(),
            run.head_ms_per_request().into(),
            run.head_us_per_sector().into(),
            run.mib_per_second.into(),
            run.unused_fraction.into(),
        ]);
    }
    data
}

fn find(runs: &[Measured], layout: Layout, workload: usize) -> &Measured {
    runs.iter()
        .find(|r| LAYOUTS[r.layout].0 == layout && r.workload == workload)
        .expect("every layout ran every workload")
}

pub(super) fn figure(runs: &[Measured]) -> Figure {
    let categories: Vec<String> = LAYOUTS.iter().map(|(_, label)| label.to_string()).collect();
    let panel = |title: &str, x_label: &str, value: fn(&Measured) -> f64| {
        let components = WORKLOADS
            .iter()
            .enumerate()
            .map(|(workload, (_, name))| {
                let values = LAYOUTS
                    .iter()
                    .map(|&(layout, _)| value(find(runs, layout, workload)))
                    .collect();
                (name.to_string(), values)
            })
            .collect();
        Panel {
            title: title.to_string(),
            x_label: x_label.to_string(),
            y_label: String::new(),
            content: PanelContent::Bars(Bars {
                categories: categories.clone(),
                components,
                stacked: false,
            }),
            legend: LegendCorner::LowerRight,
        }
    };
    let capacity = Panel {
        title: "Raw capacity the layout leaves unused".to_string(),
        x_label: "% of the members' sectors".to_string(),
        y_label: String::new(),
        content: PanelContent::Bars(Bars {
            categories: categories.clone(),
            components: vec![(
                "any workload".to_string(),
                LAYOUTS
                    .iter()
                    .map(|&(layout, _)| 100.0 * find(runs, layout, 0).unused_fraction)
                    .collect(),
            )],
            stacked: false,
        }),
        legend: LegendCorner::LowerRight,
    };
    Figure {
        panels: vec![
            panel(
                "Member requests that are exactly one whole track",
                "share of member requests (%)",
                |r| 100.0 * r.whole_track_share(),
            ),
            panel(
                "Member head time per sector read",
                "µs per sector",
                Measured::head_us_per_sector,
            ),
            panel(
                "Volume bandwidth (random whole-stripe reads, one at a time)",
                "MB/s (2^20 bytes)",
                |r| r.mib_per_second,
            ),
            capacity,
        ],
    }
}

pub(super) fn claims(runs: &[Measured], first_zone: (f64, f64)) -> Vec<Claim> {
    let (first_zone_loss, first_zone_worst) = first_zone;
    let source = "validation paper §3";
    let (stripe, multiple) = (0, 1);
    let aligned = find(runs, Layout::TrackAligned, multiple);
    let conventional = find(runs, Layout::Conventional, multiple);
    let largest = find(runs, Layout::LargestTrack, stripe);
    let smallest = find(runs, Layout::SmallestTrack, stripe);
    let whole_share = runs
        .iter()
        .filter(|r| LAYOUTS[r.layout].0 == Layout::TrackAligned)
        .map(Measured::whole_track_share)
        .fold(1.0, f64::min);
    vec![
        Claim::with_tolerance(
            "track-aligned RAID-5: every member request of a stripe-aligned read is one whole track",
            source,
            "share",
            1.0,
            whole_share,
            Tolerance::Absolute(0.0),
        )
        .rule(
            "Rule, not a check: the layout's stripe units are the members' own tracks, so a \
             read of whole stripes from a stripe boundary asks every member for whole tracks \
             (fill-in parity and whole units on).",
        ),
        Claim::with_tolerance(
            "chunk = largest track: chunks span 1+ tracks on some disks (member requests crossing a track boundary)",
            source,
            "share",
            0.0,
            largest.crossing_share(),
            Tolerance::GreaterThan,
        )
        .rule(
            "Rule, not a check: Table 2's track sizes alone decide it. The members' tracks \
             differ, so a chunk as long as the largest is longer than the others' tracks and \
             must cross their boundaries.",
        ),
        Claim::with_tolerance(
            "chunk = smallest track: sectors left unused on the disks with larger tracks",
            source,
            "%",
            10.0,
            100.0 * smallest.unused_fraction,
            Tolerance::Absolute(3.0),
        )
        .explain_if_missed(format!(
            "The paper's 'about 10%' compares tracks of one zone (its Table 2 gives only \
             the outermost ones): in the outermost zone, cutting every member's track to \
             the smallest of the five loses up to {:.1}% of the largest track (the \
             paper's figure) and {:.1}% of the five members' sectors. One chunk size for the whole \
             disk must fit the innermost zone's smallest track, which the layout here \
             does, so every larger track of every zone loses its excess: {:.1}% of the \
             raw capacity over the whole disks (whole-track units lose {:.1}%).",
            100.0 * first_zone_worst,
            100.0 * first_zone_loss,
            100.0 * smallest.unused_fraction,
            100.0 * find(runs, Layout::TrackAligned, stripe).unused_fraction
        )),
        Claim::with_tolerance(
            "track-aligned member requests take less head time per sector than conventional ones",
            source,
            "ratio",
            1.0,
            aligned.head_us_per_sector() / conventional.head_us_per_sector(),
            Tolerance::LessThan,
        ),
        Claim::with_tolerance(
            "track-aligned RAID-5 reads large requests faster than conventional (Fig. 8's direction: +57% Bonnie reads)",
            source,
            "ratio",
            1.0,
            aligned.mib_per_second / conventional.mib_per_second,
            Tolerance::GreaterThan,
        )
        .explain(
            "Fig. 8 measures Bonnie through ext2 and the page cache; that comparison \
             belongs with the file-system layer. Here the same random stripe-aligned \
             reads go straight to each volume.",
        ),
    ]
}

pub(super) fn notes(aligned: &TrackAlignedLayout, requests: u64) -> Vec<String> {
    let stripe = stripes_sectors(aligned, 0, 1).0;
    vec![
        format!(
            "Members: {} (catalog drives built from the paper's Table 2 track sizes; \
             serpentine, 32-cylinder bands). Each workload issues {requests} random reads, \
             one at a time, of one or four whole stripes: the layouts with track units \
             read their own stripes (the first one holds {stripe} sectors of data); the md \
             layouts read as much as the whole-track layout's stripes at a random place \
             hold, from one of their own stripe boundaries. The same random stream \
             serves every layout. No host cost, no plug: the numbers are the disks'.",
            MEMBERS.join(", ")
        ),
        "Member head time is the time a member has requests outstanding (they queue at \
         the drive: one volume read sends a member several), per member request or per \
         sector the member read (data, fill-in parity and unused tails included). \
         Unused capacity counts allocated-but-unused sectors, tracks beyond the shortest \
         member's, and (md layouts) member space beyond the smallest member."
            .to_string(),
    ]
}
