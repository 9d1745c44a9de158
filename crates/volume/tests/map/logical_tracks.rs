//! The logical track and stripe maps of a track-aligned RAID-5 against a reference
//! that knows nothing of units or stripe starts: it walks every volume LBN through
//! `locate` and finds the member track holding it from the members' raw track sizes;
//! a logical track is a maximal run of LBNs on one (member, member track), a logical
//! stripe a maximal run on one member track index. Random heterogeneous members under
//! both unit policies, and the paper's five Maxtor Atlas 10K V members.

use crate::common::{maxtor_array_tracks, policy, sectors, track_tracks};
use proptest::prelude::*;
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_trackmap::TrackMap;
use spinstack_volume::map::{
    logical_stripe_map, logical_track_map, ParityLayout, TrackAlignedLayout, UnitPolicy,
};

/// A run of volume LBNs: (first, length).
type Run = (u64, u64);

/// The reference: (start, length) of each run of volume LBNs that stays on one
/// (member, member track), and of each run that stays on one member track index;
/// also checks that member LBNs inside a logical track follow each other.
fn reference(layout: &TrackAlignedLayout, tracks: &[Vec<Sectors>]) -> (Vec<Run>, Vec<Run>) {
    let track_starts: Vec<Vec<u64>> = tracks
        .iter()
        .map(|t| {
            t.iter()
                .scan(0u64, |next, s| {
                    let start = *next;
                    *next += s.0;
                    Some(start)
                })
                .collect()
        })
        .collect();
    let mut units: Vec<Run> = Vec::new();
    let mut stripes: Vec<Run> = Vec::new();
    let mut previous: Option<(u32, usize, u64)> = None;
    for lbn in 0..layout.capacity().0 {
        let (member, member_lbn) = layout.locate(Lbn(lbn)).unwrap();
        let starts = &track_starts[member.index()];
        let track = starts.partition_point(|&s| s <= member_lbn.0) - 1;
        let same_unit = matches!(previous, Some((m, t, _)) if m == member.0 && t == track);
        let same_stripe = matches!(previous, Some((_, t, _)) if t == track);
        if same_unit {
            let (_, _, last) = previous.unwrap();
            assert_eq!(
                member_lbn.0,
                last + 1,
                "LBN {lbn}: a logical track jumps on its member"
            );
            units.last_mut().unwrap().1 += 1;
        } else {
            units.push((lbn, 1));
        }
        if same_stripe {
            stripes.last_mut().unwrap().1 += 1;
        } else {
            stripes.push((lbn, 1));
        }
        previous = Some((member.0, track, member_lbn.0));
    }
    (units, stripes)
}

fn runs(map: &TrackMap) -> Vec<Run> {
    map.tracks()
        .iter()
        .map(|t| (t.first.0, t.sectors.0))
        .collect()
}

/// Both maps equal the reference's runs; each has the layout's capacity; logical track
/// `k` is `unit.used` long on its data member; every stripe start is a track start.
fn check(layout: &TrackAlignedLayout, tracks: &[Vec<Sectors>]) {
    let track_map = logical_track_map(layout, "test volume").unwrap();
    let stripe_map = logical_stripe_map(layout, "test volume").unwrap();
    let (units, stripes) = reference(layout, tracks);
    assert_eq!(runs(&track_map), units, "logical tracks");
    assert_eq!(runs(&stripe_map), stripes, "logical stripes");
    assert_eq!(track_map.capacity(), layout.capacity());
    assert_eq!(stripe_map.capacity(), layout.capacity());
    let data_members = u64::from(layout.members() - 1);
    for (k, track) in track_map.tracks().iter().enumerate() {
        let stripe = k as u64 / data_members;
        let member = layout.data_member(stripe, (k as u64 % data_members) as u32);
        assert_eq!(
            track.sectors,
            layout.unit(stripe, member).used,
            "logical track {k}"
        );
    }
    for (s, stripe) in stripe_map.tracks().iter().enumerate() {
        let k = s * data_members as usize;
        assert_eq!(track_map.tracks()[k].first, stripe.first, "stripe {s}");
    }
}

// Proves the maps against the reference on random heterogeneous members (1-9
// sectors a track, 3-6 members, up to 6 tracks each) under both unit policies.
proptest! {
    #[test]
    fn logical_maps_match_the_reference(tracks in track_tracks(), policy in policy()) {
        let tracks: Vec<Vec<Sectors>> = tracks.iter().map(|t| sectors(t)).collect();
        let layout = TrackAlignedLayout::new(tracks.clone(), policy).unwrap();
        check(&layout, &tracks);
    }
}

// Proves the maps on the paper's five Maxtor members (200 serpentine tracks each,
// some shortened by defects): a logical track is about one member track (1,025 to
// 1,196 sectors) and a stripe four of them.
#[test]
fn maxtor_members_logical_maps() {
    let tracks = maxtor_array_tracks(200);
    let layout = TrackAlignedLayout::new(tracks.clone(), UnitPolicy::WholeTrack).unwrap();
    check(&layout, &tracks);
    let track_map = logical_track_map(&layout, "maxtor").unwrap();
    assert_eq!(track_map.track_count(), 200 * 4);
    for size in track_map.track_sizes() {
        assert!((1_020..=1_196).contains(&size.0), "logical track of {size}");
    }
    let stripe_map = logical_stripe_map(&layout, "maxtor").unwrap();
    assert_eq!(stripe_map.track_count(), 200);
}
