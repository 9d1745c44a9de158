//! Proves that the track-map text format round-trips, and that the reader rejects
//! malformed maps with an error naming the file, the line and the problem.

use spinstack_sim::units::{Lbn, Sectors};
use spinstack_trackmap::{RemappedLbn, SectorLocation, Track, TrackLocation, TrackMap};

fn sample() -> TrackMap {
    let track = |first, sectors, location, uncertain| Track {
        first: Lbn(first),
        sectors: Sectors(sectors),
        location,
        uncertain,
    };
    let on = |cylinder, surface| Some(TrackLocation { cylinder, surface });
    TrackMap::new(
        "test drive",
        "scsi-walk-jump",
        Sectors(25),
        vec![
            track(0, 10, on(0, 0), false),
            track(10, 10, on(0, 1), false),
            track(20, 5, None, true),
        ],
        vec![RemappedLbn {
            lbn: Lbn(3),
            stored_at: SectorLocation {
                cylinder: 0,
                surface: 1,
                sector: 11,
            },
        }],
    )
    .expect("sample tiles [0, 25)")
}

/// The writer's output reads back to an equal map, and the text is the format
/// the README shows, line for line.
#[test]
fn text_round_trips() {
    let map = sample();
    let text = map.to_text();
    assert_eq!(
        text,
        "# spinstack track map, format 1\ndrive test drive\nmethod scsi-walk-jump\ncapacity 25\n\
# first_lbn sectors cylinder surface [uncertain]\n0 10 0 0\n10 10 0 1\n20 5 - - uncertain\n\
remapped 3 0 1 11\n"
    );
    let parsed = TrackMap::parse(&text, "mem").expect("own output parses");
    assert_eq!(parsed, map);
    assert_eq!(parsed.track_index_of(Lbn(19)), Some(1));
    assert_eq!(parsed.track_index_of(Lbn(25)), None);
    assert_eq!(parsed.uncertain_track_count(), 1);
}

/// Writing to a file and reading it back gives the same map.
#[test]
fn file_round_trips() {
    let path = std::env::temp_dir().join(format!("trackmap-format-{}.map", std::process::id()));
    sample().write(&path).expect("temp file is writable");
    let read = TrackMap::read(&path);
    let _ = std::fs::remove_file(&path);
    assert_eq!(read.expect("own file parses"), sample());
}

fn error_of(text: &str) -> String {
    TrackMap::parse(text, "maps/bad.map")
        .expect_err("malformed map")
        .to_string()
}

/// Every kind of malformed map is rejected, the message starting with
/// `file:line:` of the line at fault and saying what is wrong.
#[test]
fn malformed_maps_name_file_line_and_problem() {
    let header = "drive d\nmethod m\ncapacity 20\n";
    let gap = format!("{header}0 10 0 0\n11 9 0 1\n");
    assert!(
        error_of(&gap).starts_with("maps/bad.map:5:") && error_of(&gap).contains("gap"),
        "{}",
        error_of(&gap)
    );
    let overlap = format!("{header}0 10 0 0\n9 11 0 1\n");
    assert!(error_of(&overlap).starts_with("maps/bad.map:5:"));
    assert!(error_of(&overlap).contains("overlaps"));
    let late_start = format!("{header}1 19 0 0\n");
    assert!(error_of(&late_start).starts_with("maps/bad.map:4:"));
    assert!(error_of(&late_start).contains("gap"));
    let empty = format!("{header}0 0 0 0\n0 20 0 0\n");
    assert!(error_of(&empty).starts_with("maps/bad.map:4:") && error_of(&empty).contains("empty"));
    let short = format!("{header}0 10 0 0\n");
    assert!(error_of(&short).starts_with("maps/bad.map:4:"));
    assert!(error_of(&short).contains("incomplete"));
    let past = format!("{header}0 10 0 0\n10 11 0 1\n");
    assert!(error_of(&past).starts_with("maps/bad.map:5:"));
    assert!(error_of(&past).contains("past the capacity"));
    let huge = format!("{header}0 10 0 0\n10 18446744073709551615 0 1\n");
    assert!(error_of(&huge).contains("past the capacity"));
    let remap_past = format!("{header}0 20 0 0\nremapped 3 0 0 1\n\nremapped 20 0 0 2\n");
    assert!(
        error_of(&remap_past).starts_with("maps/bad.map:7:")
            && error_of(&remap_past).contains("LBN 20"),
        "{}",
        error_of(&remap_past)
    );
    let junk = format!("{header}0 ten 0 0\n");
    assert!(error_of(&junk).starts_with("maps/bad.map:4:") && error_of(&junk).contains("`ten`"));
    let flag = format!("{header}0 20 0 0 maybe\n");
    assert!(error_of(&flag).contains("unknown flag"));
    let half_located = format!("{header}0 20 - 0\n");
    assert!(error_of(&half_located).contains("cylinder `-`"));
    let wide = format!("{header}0 20 4294967296 0\n");
    assert!(error_of(&wide).contains("too large"));
    assert!(error_of("method m\ncapacity 1\n0 1 0 0\n").contains("no `drive` header"));
    assert!(error_of("drive d\nmethod m\n0 1 0 0\n").contains("before the `capacity` header"));
    let late = format!("{header}0 20 0 0\ndrive again\n");
    assert!(error_of(&late).contains("after the first track"));
}

// Guards inputs finding 25: a second `capacity` or `drive` header was accepted,
// the last winning (`drive other` renamed the map). Proves each header said twice
// is refused at the second one's line.
#[test]
fn a_header_said_twice_is_refused() {
    for (header, twice) in [
        (
            "capacity",
            "drive d\nmethod m\ncapacity 20\ncapacity 30\n0 20 0 0\n",
        ),
        (
            "drive",
            "drive d\nmethod m\ncapacity 20\ndrive other\n0 20 0 0\n",
        ),
        (
            "method",
            "drive d\nmethod m\nmethod n\ncapacity 20\n0 20 0 0\n",
        ),
    ] {
        let message = error_of(twice);
        assert!(
            message.contains(&format!("a second `{header}` header")),
            "{message}"
        );
    }
    assert!(
        error_of("drive d\nmethod m\ncapacity 20\ncapacity 30\n0 20 0 0\n")
            .starts_with("maps/bad.map:4:")
    );
}

// Guards inputs finding 25: a map starting with a UTF-8 byte-order mark gave "a
// track line has 4 or 5 fields ... found 6" (its `#` comment was no longer one).
// Proves the mark is skipped and the map reads as without.
#[test]
fn a_byte_order_mark_at_the_start_is_skipped() {
    let text = sample().to_text();
    let marked = TrackMap::parse(&format!("\u{feff}{text}"), "marked.map").expect("reads");
    assert_eq!(marked, sample());
}

/// A file that cannot be read is named, with line 0.
#[test]
fn missing_file_is_named() {
    let error =
        TrackMap::read(std::path::Path::new("/nonexistent/track.map")).expect_err("no file");
    assert!(error
        .to_string()
        .starts_with("/nonexistent/track.map:0: cannot read"));
}

// Guards inputs finding 25 (track maps): `# spinstack track map, format 2` was
// read as format 1, silently. Proves another format number is refused at its
// line, naming it, while a map without the format line (hand-written) still
// reads.
#[test]
fn another_format_number_is_refused() {
    let text = sample().to_text();
    let format_2 = text.replacen("format 1", "format 2", 1);
    let error = TrackMap::parse(&format_2, "map.txt")
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("map.txt:1: ")
            && error.contains("format \"2\": this build reads format 1"),
        "{error}"
    );
    let without: String = text
        .lines()
        .skip(1)
        .map(|line| format!("{line}\n"))
        .collect();
    assert_eq!(TrackMap::parse(&without, "map.txt").unwrap(), sample());
}
