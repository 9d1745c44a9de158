//! Fuzzes the track-map reader (proptest): arbitrary bytes, soups of the format's
//! own words, and single-character mutations of a valid map never panic; every
//! rejection names the file and a line inside the text; every accepted map tiles
//! its capacity; and any map built from random track sizes round-trips through
//! its text exactly.

use proptest::prelude::*;
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_trackmap::{Track, TrackLocation, TrackMap};

const VALID: &str = "# spinstack track map, format 1\ndrive d\nmethod timing\ncapacity 30\n\
0 10 0 0\n10 10 - -\n20 10 1 0 uncertain\nremapped 3 1 1 4\n";

/// Parses `text`; on error, checks the message names the file and a real line;
/// on success, checks the map tiles (tracks back to back from 0 to the capacity).
fn parse_checked(text: &str) -> Result<(), TestCaseError> {
    match TrackMap::parse(text, "fuzz.map") {
        Err(error) => {
            let message = error.to_string();
            prop_assert!(message.starts_with("fuzz.map:"), "{}", message);
            let lines = text.lines().count();
            // A line of the text (line 0 only when there is none).
            prop_assert!(
                error.line <= lines && (error.line >= 1 || lines == 0),
                "line {} of {}: {}",
                error.line,
                lines,
                message
            );
        }
        Ok(map) => {
            let mut end = Lbn(0);
            for track in map.tracks() {
                prop_assert_eq!(track.first, end);
                prop_assert!(track.sectors.0 > 0);
                end = track.end();
            }
            prop_assert_eq!(end.0, map.capacity().0);
        }
    }
    Ok(())
}

fn map_from_sizes(sizes: &[u64]) -> TrackMap {
    let mut first = 0;
    let tracks = sizes
        .iter()
        .enumerate()
        .map(|(index, &size)| {
            let track = Track {
                first: Lbn(first),
                sectors: Sectors(size),
                location: (index % 3 != 0).then_some(TrackLocation {
                    cylinder: index as u32 / 4,
                    surface: index as u32 % 4,
                }),
                uncertain: index % 5 == 4,
            };
            first += size;
            track
        })
        .collect();
    TrackMap::new("random", "timing", Sectors(first), tracks, Vec::new())
        .expect("back-to-back tracks tile")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Any bytes at all: no panic, and a rejection names a real line.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        parse_checked(&String::from_utf8_lossy(&bytes))?;
    }

    /// Lines made of the format's own words and numbers (some huge, some
    /// negative) get further into the reader than random bytes do.
    #[test]
    fn word_soup_never_panics(
        lines in proptest::collection::vec(
            proptest::collection::vec(
                prop_oneof!["drive", "method", "capacity", "remapped", "uncertain", "-", "#",
                    "-?[0-9]{0,22}", "1844674407370955161[0-9]", "[a-z]{0,4}"],
                0..7),
            0..12)
    ) {
        let text: String = lines.iter().map(|words| words.join(" ") + "\n").collect();
        parse_checked(&text)?;
    }

    /// One character of a valid map replaced by up to three others.
    #[test]
    fn mutations_of_a_valid_map_never_panic(
        position in 0usize..VALID.len(),
        replacement in "[ -~\n]{0,3}",
    ) {
        let mut text = VALID.to_string();
        text.replace_range(position..position + 1, &replacement);
        parse_checked(&text)?;
    }

    /// Any tiling map reads back from its own text unchanged.
    #[test]
    fn random_maps_round_trip(sizes in proptest::collection::vec(1u64..5000, 1..60)) {
        let map = map_from_sizes(&sizes);
        let parsed = TrackMap::parse(&map.to_text(), "round.map").expect("own output parses");
        prop_assert_eq!(parsed, map);
    }
}

/// The mutation fuzzer starts from a map the reader accepts.
#[test]
fn mutation_seed_is_valid() {
    let map = TrackMap::parse(VALID, "seed.map").expect("seed map parses");
    assert_eq!(map.track_count(), 3);
    assert_eq!(map.remapped().len(), 1);
}
