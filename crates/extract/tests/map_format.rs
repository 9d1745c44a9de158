//! Proves that the track-map text format round-trips, and that the reader rejects
//! malformed maps with an error naming the file, the line and the problem.

use spinstack_disk::layout::Pbn;
use spinstack_extract::map::{MappedTrack, RemappedLbn, TrackMap};
use spinstack_sim::units::{Lbn, Sectors};

fn sample() -> TrackMap {
    TrackMap {
        drive: "test drive".to_string(),
        method: "scsi-walk-jump".to_string(),
        capacity: Sectors(25),
        tracks: vec![
            MappedTrack {
                first: Lbn(0),
                sectors: Sectors(10),
                location: Some((0, 0)),
                uncertain: false,
            },
            MappedTrack {
                first: Lbn(10),
                sectors: Sectors(10),
                location: Some((0, 1)),
                uncertain: false,
            },
            MappedTrack {
                first: Lbn(20),
                sectors: Sectors(5),
                location: None,
                uncertain: true,
            },
        ],
        remapped: vec![RemappedLbn {
            lbn: Lbn(3),
            stored_at: Pbn {
                cylinder: 0,
                surface: 1,
                sector: 11,
            },
        }],
    }
}

#[test]
fn text_round_trips() {
    let map = sample();
    let parsed = TrackMap::parse(&map.to_text(), "mem").expect("own output parses");
    assert_eq!(parsed, map);
    assert!(parsed.check_tiling().is_ok());
    assert_eq!(parsed.track_index_of(Lbn(19)), Some(1));
    assert_eq!(parsed.track_index_of(Lbn(25)), None);
}

fn error_of(text: &str) -> String {
    TrackMap::parse(text, "maps/bad.map")
        .expect_err("malformed map")
        .to_string()
}

#[test]
fn malformed_maps_name_file_line_and_problem() {
    let header = "drive d\nmethod m\ncapacity 20\n";
    let gap = format!("{header}0 10 0 0\n11 9 0 1\n");
    assert!(
        error_of(&gap).starts_with("maps/bad.map:5:"),
        "{}",
        error_of(&gap)
    );
    assert!(error_of(&gap).contains("gap"));
    let overlap = format!("{header}0 10 0 0\n9 11 0 1\n");
    assert!(error_of(&overlap).contains("overlaps"));
    let short = format!("{header}0 10 0 0\n");
    assert!(error_of(&short).contains("incomplete"));
    let past = format!("{header}0 10 0 0\n10 11 0 1\n");
    assert!(error_of(&past).contains("past the capacity"));
    let junk = format!("{header}0 ten 0 0\n");
    assert!(error_of(&junk).starts_with("maps/bad.map:4:") && error_of(&junk).contains("`ten`"));
    let flag = format!("{header}0 20 0 0 maybe\n");
    assert!(error_of(&flag).contains("unknown flag"));
    assert!(error_of("method m\ncapacity 1\n0 1 0 0\n").contains("no `drive` header"));
    assert!(error_of("drive d\nmethod m\n0 1 0 0\n").contains("before the `capacity` header"));
    let late = format!("{header}0 20 0 0\ndrive again\n");
    assert!(error_of(&late).contains("after the first track"));
}

#[test]
fn missing_file_is_named() {
    let error =
        TrackMap::read(std::path::Path::new("/nonexistent/track.map")).expect_err("no file");
    assert!(error
        .to_string()
        .starts_with("/nonexistent/track.map:0: cannot read"));
}
