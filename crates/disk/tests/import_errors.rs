//! Malformed DiskSim inputs give an `ImportError` naming the right file, line and
//! parameter. Each test copies atlas10k's four files to a scratch directory (never
//! into the repository), damages one, and loads. Skips when the data is absent.

use spinstack_disk::import::{load_parv, ImportError};
use std::path::{Path, PathBuf};

const FILES: [&str; 4] = [
    "atlas10k.parv",
    "atlas10k.diskspecs",
    "atlas10k.model",
    "atlas10k.seek",
];

fn source_dir() -> Option<PathBuf> {
    spinstack_testdata::disksim("params", "damage the DiskSim parameter files")
}

/// Copy atlas10k to a fresh scratch dir, let `damage` edit it, and load it.
fn load_damaged(tag: &str, damage: impl FnOnce(&Path)) -> Option<(ImportError, PathBuf)> {
    let src = source_dir()?;
    let dir = std::env::temp_dir().join(format!("spinstack-import-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for f in FILES {
        std::fs::copy(src.join(f), dir.join(f)).unwrap();
    }
    damage(&dir);
    let err = load_parv(&dir.join("atlas10k.parv")).expect_err("damaged input must not load");
    Some((err, dir))
}

/// Replace the first occurrence of `from` in `file`; returns its 1-based line.
fn edit(dir: &Path, file: &str, from: &str, to: &str) -> u32 {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let at = text
        .find(from)
        .unwrap_or_else(|| panic!("{from:?} not in {file}"));
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    text[..at].matches('\n').count() as u32 + 1
}

fn assert_at(err: &ImportError, file: &str, line: u32, parameter: Option<&str>) {
    assert_eq!(err.file.file_name().unwrap(), file, "{err}");
    assert_eq!(err.line, line, "{err}");
    assert_eq!(err.parameter.as_deref(), parameter, "{err}");
    let shown = err.to_string();
    assert!(shown.contains(&format!("{file}:{line}: ")), "{shown}");
}

// Proves a file cut short is an error that names the truncated file and the line
// it ends at. (`source` is lexical, so the parser only notices at the includer's
// next token, diskspecs line 2; the message points back at the include's end.)
#[test]
fn truncated_model() {
    let mut expected = 0;
    let Some((err, _)) = load_damaged("truncated", |dir| {
        let path = dir.join("atlas10k.model");
        let text = std::fs::read_to_string(&path).unwrap();
        let cut = &text[..text.len() / 2];
        expected = cut.matches('\n').count() as u32 + 1;
        std::fs::write(&path, cut).unwrap();
    }) else {
        return;
    };
    assert_at(&err, "atlas10k.diskspecs", 2, None);
    assert!(
        err.message
            .contains(&format!("atlas10k.model:{expected}; is it truncated?")),
        "{err}"
    );
    let mut expected = 0;
    let Some((err, _)) = load_damaged("truncated-top", |dir| {
        let path = dir.join("atlas10k.parv");
        let text = std::fs::read_to_string(&path).unwrap();
        let cut = &text[..text.find("Priority scheduling = 4").unwrap()];
        expected = cut.matches('\n').count() as u32 + 1;
        std::fs::write(&path, cut).unwrap();
    }) else {
        return;
    };
    assert_at(&err, "atlas10k.parv", expected, None);
    assert!(err.message.contains("end of input"), "{err}");
}

// Proves a trailing comma is refused at its line.
#[test]
fn trailing_comma() {
    let mut line = 0;
    let Some((err, _)) = load_damaged("comma", |dir| {
        line = edit(
            dir,
            "atlas10k.diskspecs",
            "Minimum seek delay = 0.000000",
            "Minimum seek delay = 0.000000,",
        );
    }) else {
        return;
    };
    assert_at(&err, "atlas10k.diskspecs", line, None);
    assert!(err.message.contains("trailing ','"), "{err}");
}

// Proves a missing `source` target is reported at the includer's line.
#[test]
fn missing_include() {
    let Some((err, _)) = load_damaged("include", |dir| {
        std::fs::remove_file(dir.join("atlas10k.model")).unwrap()
    }) else {
        return;
    };
    assert_at(&err, "atlas10k.diskspecs", 2, None);
    assert!(err.message.contains("atlas10k.model"), "{err}");
}

// Proves a float where DiskSim requires an integer is an error naming the parameter.
#[test]
fn float_for_int() {
    let mut line = 0;
    let Some((err, _)) = load_damaged("float", |dir| {
        line = edit(
            dir,
            "atlas10k.model",
            "Rotation speed (in rpms) = 10025",
            "Rotation speed (in rpms) = 10025.0",
        );
    }) else {
        return;
    };
    assert_at(
        &err,
        "atlas10k.model",
        line,
        Some("Rotation speed (in rpms)"),
    );
    assert!(
        err.message.contains("expected an integer, found a float"),
        "{err}"
    );
    let Some((err, _)) = load_damaged("float-zone", |dir| {
        line = edit(
            dir,
            "atlas10k.model",
            "Blocks per track = 334,",
            "Blocks per track = 334.0,",
        );
    }) else {
        return;
    };
    assert_at(&err, "atlas10k.model", line, Some("Blocks per track"));
}

// Proves an unknown parameter in each checked block type is an error at its line.
#[test]
fn unknown_parameters() {
    let cases = [
        ("atlas10k.model", "Head switch time = 0.17600,", "mech"),
        ("atlas10k.model", "Sparing scheme used = 9,", "layout"),
        ("atlas10k.model", "Blocks per track = 334,", "zone"),
        ("atlas10k.model", "Number of cylinders = 10042,", "dm_disk"),
        ("atlas10k.diskspecs", "Never disconnect = 0,", "disk"),
    ];
    for (file, anchor, tag) in cases {
        let mut line = 0;
        let Some((err, _)) = load_damaged(&format!("unknown-{tag}"), |dir| {
            line = edit(dir, file, anchor, &format!("Bogus knob = 1, {anchor}"));
        }) else {
            return;
        };
        assert_at(&err, file, line, Some("Bogus knob"));
        assert!(err.message.contains("unknown parameter"), "{err}");
    }
}

// Proves a missing required parameter names the block's position and the parameter.
#[test]
fn missing_required_parameter() {
    let mut line = 0;
    let Some((err, _)) = load_damaged("missing", |dir| {
        edit(dir, "atlas10k.model", "Head switch time = 0.17600,", "");
        let text = std::fs::read_to_string(dir.join("atlas10k.model")).unwrap();
        line = text[..text.find("dm_mech_g1").unwrap()]
            .matches('\n')
            .count() as u32
            + 1;
    }) else {
        return;
    };
    assert_at(&err, "atlas10k.model", line, Some("Head switch time"));
}

// Proves unsupported sparing schemes are refused with the scheme named.
#[test]
fn unsupported_sparing_scheme() {
    for scheme in [0, 4, 5, 6, 10] {
        let mut line = 0;
        let Some((err, _)) = load_damaged(&format!("sparing{scheme}"), |dir| {
            line = edit(
                dir,
                "atlas10k.model",
                "Sparing scheme used = 9",
                &format!("Sparing scheme used = {scheme}"),
            );
        }) else {
            return;
        };
        assert_at(&err, "atlas10k.model", line, Some("Sparing scheme used"));
        assert!(
            err.message
                .contains(&format!("sparing scheme {scheme} is not supported")),
            "{err}"
        );
    }
}

// Proves seek-file problems are reported in the seek file (bad row) or at the
// `Full seek curve` line (missing file).
#[test]
fn seek_file_errors() {
    let Some((err, _)) = load_damaged("seek-row", |dir| {
        edit(dir, "atlas10k.seek", "3,\t1.16300", "3,\tfast");
    }) else {
        return;
    };
    assert_at(&err, "atlas10k.seek", 4, None);
    let Some((err, _)) = load_damaged("seek-count", |dir| {
        edit(dir, "atlas10k.seek", "measured: 138", "measured: 139");
    }) else {
        return;
    };
    assert_eq!(err.file.file_name().unwrap(), "atlas10k.seek", "{err}");
    let mut line = 0;
    let Some((err, _)) = load_damaged("seek-missing", |dir| {
        std::fs::remove_file(dir.join("atlas10k.seek")).unwrap();
        let text = std::fs::read_to_string(dir.join("atlas10k.model")).unwrap();
        line = text[..text.find("Full seek curve").unwrap()]
            .matches('\n')
            .count() as u32
            + 1;
    }) else {
        return;
    };
    assert_at(&err, "atlas10k.model", line, Some("Full seek curve"));
}

// Proves skews and the first-block offset are truncated to whole sectors.
#[test]
fn fractional_skews_truncate() {
    let Some(src) = source_dir() else { return };
    let dir = std::env::temp_dir().join(format!("spinstack-import-{}-skew", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for f in FILES {
        std::fs::copy(src.join(f), dir.join(f)).unwrap();
    }
    edit(
        &dir,
        "atlas10k.model",
        "Skew for track switch = 63.000000",
        "Skew for track switch = 63.9",
    );
    edit(
        &dir,
        "atlas10k.model",
        "Offset of first block = 0.000000",
        "Offset of first block = 2.7",
    );
    let spec = load_parv(&dir.join("atlas10k.parv")).unwrap_or_else(|e| panic!("{e}"));
    let spinstack_disk::spec::LayoutSpec::Zoned(z) = &spec.layout else {
        panic!()
    };
    assert_eq!(
        (
            z.zones[0].track_skew_sectors,
            z.zones[0].first_block_offset_sectors
        ),
        (63, 2)
    );
}
