//! How an extracted track map compares with the truth (the layout's own map,
//! [`spinstack_disk::layout::Layout::track_map`]).

use serde::Serialize;
use spinstack_trackmap::{Track, TrackLocation, TrackMap};

/// How an extracted map compares with the true one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Comparison {
    pub exact: bool,
    pub extracted_tracks: usize,
    pub true_tracks: usize,
    /// Extracted tracks equal to a true track: same first LBN, same length, and
    /// same location where both maps know it.
    pub matching_tracks: usize,
    pub first_difference: Option<String>,
}

/// Locations agree unless both are known and differ (timing-only maps know none).
fn located_alike(a: Option<TrackLocation>, b: Option<TrackLocation>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    }
}

fn tracks_alike(extracted: &Track, truth: &Track) -> bool {
    extracted.first == truth.first
        && extracted.sectors == truth.sectors
        && located_alike(extracted.location, truth.location)
}

fn describe(location: Option<TrackLocation>) -> String {
    match location {
        Some(l) => format!("cylinder {} surface {}", l.cylinder, l.surface),
        None => "an unknown location".to_string(),
    }
}

/// Compare an extracted map with the truth: boundaries, lengths, locations where
/// both know them, and the remapped LBNs. Exact means equal track by track, in
/// order — not merely that every extracted track matches some true track (that
/// once called a map with one track twice and another missing exact).
pub fn compare(extracted: &TrackMap, truth: &TrackMap) -> Comparison {
    let mut first_difference = None;
    let mut matching = 0;
    for t in extracted.tracks() {
        let true_track = truth.track_containing(t.first);
        if true_track.is_some_and(|tt| tracks_alike(t, &tt)) {
            matching += 1;
        } else if first_difference.is_none() {
            first_difference = Some(match true_track.filter(|tt| tt.first == t.first) {
                Some(tt) if tt.sectors == t.sectors => format!(
                    "track at {} is on {}, truly on {}",
                    t.first,
                    describe(t.location),
                    describe(tt.location)
                ),
                Some(tt) => format!(
                    "track at {} has {} sectors, truly {}",
                    t.first, t.sectors.0, tt.sectors.0
                ),
                None => format!("no true track starts at {}", t.first),
            });
        }
    }
    if extracted.capacity() != truth.capacity() && first_difference.is_none() {
        first_difference = Some(format!(
            "capacity {}, truly {}",
            extracted.capacity(),
            truth.capacity()
        ));
    }
    // Only a method that sees physical addresses can see remapping.
    let observes_physical = extracted.tracks().iter().any(|t| t.location.is_some());
    let remaps_alike = !observes_physical || extracted.remapped() == truth.remapped();
    if !remaps_alike && first_difference.is_none() {
        first_difference = Some(format!(
            "remapped LBNs differ: extracted {}, truly {}",
            extracted.remapped().len(),
            truth.remapped().len()
        ));
    }
    let tracks_equal = extracted.track_count() == truth.track_count()
        && extracted
            .tracks()
            .iter()
            .zip(truth.tracks())
            .all(|(t, tt)| tracks_alike(t, tt));
    let exact = tracks_equal
        && extracted.capacity() == truth.capacity()
        && remaps_alike
        && extracted.uncertain_track_count() == 0;
    Comparison {
        exact,
        extracted_tracks: extracted.track_count(),
        true_tracks: truth.track_count(),
        matching_tracks: matching,
        first_difference,
    }
}
