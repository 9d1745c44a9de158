//! The track-aligned RAID-5 over five catalog Maxtor Atlas 10K V drives of four
//! different track-size variants (validation paper Table 2).

use super::common::*;
use spinstack_disk::drive::Drive;
use spinstack_sim::request::{Operation, Status};
use spinstack_sim::rng::Xoshiro256StarStar;
use spinstack_sim::units::Sectors;
use spinstack_volume::map::{ParityLayout, TrackAlignedLayout, UnitPolicy};
use spinstack_volume::timed::{HostCost, Parity, ParityOptions};

const MEMBERS: [&str; 5] = [
    "maxtor10kv-czk",
    "maxtor10kv-c0k",
    "maxtor10kv-7gk",
    "maxtor10kv-s0k",
    "maxtor10kv-czk",
];

fn volume() -> Parity<Drive, TrackAlignedLayout> {
    let (drives, maps): (Vec<_>, Vec<_>) = MEMBERS.iter().map(|name| drive_with_map(name)).unzip();
    let tracks = maps.iter().map(|m| m.track_sizes().collect()).collect();
    let layout = TrackAlignedLayout::new(tracks, UnitPolicy::WholeTrack).unwrap();
    let maps = maps.into_iter().map(Some).collect();
    Parity::new(
        drives,
        maps,
        layout,
        ParityOptions::track_aligned(),
        HostCost::NONE,
        None,
    )
}

// Proves the validation paper's property (issue 8's done-when): every member
// request of a stripe-aligned read of whole stripes is exactly one whole track
// of that member, though the members' track sizes differ (1025 to 1196 sectors in
// the first zone), for 300 random reads of 1 to 3 stripes (seed 8).
#[test]
fn stripe_aligned_reads_are_whole_tracks() {
    let seed = 8;
    let probe = volume();
    let layout = probe.layout();
    let mut rng = Xoshiro256StarStar::seed_from_u64(seed);
    let mut script = Vec::new();
    for _ in 0..300 {
        let stripes = 1 + rng.below(3);
        let first = rng.below(layout.stripes() - stripes);
        let start = layout.stripe_start(first);
        let end = layout.stripe_start(first + stripes);
        script.push(issue(Operation::Read, start.0, end.sectors_since(start).0));
    }
    let sizes: Vec<u64> = (0..5)
        .map(|m| {
            layout
                .unit(0, spinstack_sim::device::MemberIndex(m))
                .allocated
                .0
        })
        .collect();
    assert!(
        sizes.iter().min() < sizes.iter().max(),
        "heterogeneous: {sizes:?}"
    );
    let (engine, done) = play(probe, script, 1);
    assert!(done.iter().all(|c| c.status == Status::Ok));
    let stats = engine.devices()[0].stats();
    for (member, s) in stats.iter().enumerate() {
        assert!(s.requests >= 300, "seed {seed}: member {member}: {s:?}");
        assert_eq!(
            s.whole_track_requests, s.requests,
            "seed {seed}: member {member}: {s:?}"
        );
    }
    let _ = Sectors(0);
}
