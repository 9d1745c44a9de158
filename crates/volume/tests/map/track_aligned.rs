//! Track-aligned RAID-5 (validation paper §3) over heterogeneous members: units are
//! whole tracks, parity fits, whole-stripe reads give each member its whole track,
//! and the capacity accounting adds up; on the Maxtor Atlas 10K V members of the
//! paper's Table 2 and on random track lists.

use crate::common::{check_parity_layout, maxtor_array_tracks, policy, sectors, track_tracks};
use proptest::prelude::*;
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_volume::map::plan::{plan_read, ReadOptions};
use spinstack_volume::map::{
    MemberExtent, MemberIndex, ParityLayout, TrackAlignedLayout, UnitPolicy,
};

const WHOLE: ReadOptions = ReadOptions {
    fill_in_parity: true,
    whole_units: true,
};

/// Checks, for every stripe: each unit starts on its member's track boundary and is
/// allocated exactly that track; parity used >= every data used and <= its allocation;
/// a whole-stripe read with fill-in and whole units reads exactly each member's
/// whole track, once. Also checks data + parity + unused == raw.
fn check_track_alignment(layout: &TrackAlignedLayout, tracks: &[Vec<Sectors>]) {
    let starts: Vec<Vec<u64>> = tracks
        .iter()
        .map(|t| {
            t.iter()
                .scan(0, |next, s| {
                    let start = *next;
                    *next += s.0;
                    Some(start)
                })
                .collect()
        })
        .collect();
    for stripe in 0..layout.stripes() {
        let parity = layout.parity_member(stripe);
        let parity_unit = layout.unit(stripe, parity);
        for m in 0..layout.members() {
            let member = MemberIndex(m);
            let unit = layout.unit(stripe, member);
            let s = stripe as usize;
            assert_eq!(
                unit.start.0, starts[m as usize][s],
                "stripe {stripe} {member} start"
            );
            assert_eq!(
                unit.allocated, tracks[m as usize][s],
                "stripe {stripe} {member} allocation"
            );
            assert!(parity_unit.used >= unit.used || member == parity);
        }
        assert!(parity_unit.used <= parity_unit.allocated);
        let plan = plan_read(
            layout,
            layout.stripe_start(stripe),
            layout.stripe_data_sectors(stripe),
            None,
            WHOLE,
        )
        .unwrap();
        let mut reads = plan.reads.clone();
        reads.sort_by_key(|r| r.member);
        let whole_tracks: Vec<_> = (0..layout.members())
            .map(|m| MemberExtent {
                member: MemberIndex(m),
                lbn: Lbn(starts[m as usize][stripe as usize]),
                sectors: tracks[m as usize][stripe as usize],
            })
            .collect();
        assert_eq!(reads, whole_tracks, "stripe {stripe}: whole-stripe read");
    }
    let raw: u64 = tracks.iter().flatten().map(|s| s.0).sum();
    assert_eq!(layout.raw_sectors().0, raw);
    assert_eq!(
        layout.capacity().0 + layout.parity_sectors().0 + layout.unused_sectors().0,
        raw
    );
}

// Proves the track-alignment properties and the accounting on five Maxtor Atlas 10K
// V members (3,000 serpentine tracks each, a few shortened by defects), under both
// unit policies.
#[test]
fn maxtor_members_get_whole_tracks() {
    let tracks = maxtor_array_tracks(3_000);
    for policy in [UnitPolicy::WholeTrack, UnitPolicy::SmallestTrack] {
        let layout = TrackAlignedLayout::new(tracks.clone(), policy).unwrap();
        assert_eq!(layout.stripes(), 3_000);
        check_track_alignment(&layout, &tracks);
    }
}

// Proves the paper's figure for the rejected "chunk = the smallest track": about 10%
// of the Maxtor members' sectors go unused (we accept 5-15%), and using whole tracks
// loses less.
#[test]
fn smallest_track_loses_about_ten_percent() {
    let tracks = maxtor_array_tracks(3_000);
    let unused_fraction = |policy| {
        let layout = TrackAlignedLayout::new(tracks.clone(), policy).unwrap();
        layout.unused_sectors().0 as f64 / layout.raw_sectors().0 as f64
    };
    let smallest = unused_fraction(UnitPolicy::SmallestTrack);
    let whole = unused_fraction(UnitPolicy::WholeTrack);
    eprintln!("unused: smallest track {smallest:.4}, whole track {whole:.4}");
    assert!(
        (0.05..=0.15).contains(&smallest),
        "smallest-track policy leaves {smallest:.3} unused"
    );
    assert!(
        whole < smallest,
        "whole tracks leave {whole:.3} unused, smallest track {smallest:.3}"
    );
}

// Proves stripe_of is right at full scale (5 members x 152,704 tracks, the Maxtor
// track count) at sampled stripe boundaries, and reports the lookup rate.
#[test]
fn stripe_of_at_full_scale() {
    let tracks = maxtor_array_tracks(152_704);
    let layout = TrackAlignedLayout::new(tracks, UnitPolicy::WholeTrack).unwrap();
    assert_eq!(layout.stripes(), 152_704);
    for stripe in (1..layout.stripes()).step_by(997) {
        let start = layout.stripe_start(stripe);
        assert_eq!(layout.stripe_of(start).unwrap(), stripe);
        assert_eq!(layout.stripe_of(Lbn(start.0 - 1)).unwrap(), stripe - 1);
    }
    let last = Lbn(layout.capacity().0 - 1);
    assert_eq!(layout.stripe_of(last).unwrap(), layout.stripes() - 1);
    let began = std::time::Instant::now();
    let lookups = 1_000_000u64;
    let mut sum = 0;
    for i in 0..lookups {
        sum += layout
            .stripe_of(Lbn(i.wrapping_mul(0x9E37_79B9) % layout.capacity().0))
            .unwrap();
    }
    eprintln!(
        "stripe_of: {:.0} ns per lookup (checksum {sum})",
        began.elapsed().as_nanos() as f64 / lookups as f64
    );
}

// Proves a worked example: members with tracks 10/12/11 under WholeTrack. Stripe 0's
// parity is on member 2 (track 11): member 1's 12-sector track uses 11, so parity
// uses 11; member 0 uses 10.
#[test]
fn whole_track_worked_example() {
    let tracks = vec![sectors(&[10, 10]), sectors(&[12, 12]), sectors(&[11, 11])];
    let layout = TrackAlignedLayout::new(tracks, UnitPolicy::WholeTrack).unwrap();
    let used = |m| layout.unit(0, MemberIndex(m)).used.0;
    assert_eq!(layout.parity_member(0), MemberIndex(2));
    assert_eq!((used(0), used(1), used(2)), (10, 11, 11));
    assert_eq!(layout.stripe_data_sectors(0), Sectors(21));
    // Stripe 1's parity is on member 1 (track 12): no data is clipped, but parity
    // uses only 11 of its 12 sectors. Unused: one sector on member 1 in each stripe.
    assert_eq!(layout.stripe_data_sectors(1), Sectors(21));
    assert_eq!(layout.unit(1, MemberIndex(1)).used, Sectors(11));
    assert_eq!(layout.unused_sectors(), Sectors(2));
}

proptest! {
    // Proves the parity-layout contract and the track-alignment properties for random
    // heterogeneous track lists under both policies.
    #[test]
    fn random_members_get_whole_tracks(tracks in track_tracks(), policy in policy()) {
        let tracks: Vec<Vec<Sectors>> = tracks.iter().map(|t| sectors(t)).collect();
        let layout = TrackAlignedLayout::new(tracks.clone(), policy).unwrap();
        let sizes: Vec<u64> = tracks.iter().map(|t| t.iter().map(|s| s.0).sum()).collect();
        check_parity_layout(&layout, &sizes);
        check_track_alignment(&layout, &tracks);
        if policy == UnitPolicy::SmallestTrack {
            let striped = layout.stripes() as usize;
            let smallest = tracks.iter().flat_map(|t| &t[..striped]).min().copied();
            prop_assert_eq!(Some(layout.smallest_track()), smallest);
        }
    }
}
