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

/// [`load_damaged`] with one edit ([`edit`]): the error and the edited line.
fn load_edited(tag: &str, file: &str, from: &str, to: &str) -> Option<(ImportError, u32)> {
    let mut line = 0;
    let (err, _) = load_damaged(tag, |dir| line = edit(dir, file, from, to))?;
    Some((err, line))
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
    let Some((err, line)) = load_edited(
        "comma",
        "atlas10k.diskspecs",
        "Minimum seek delay = 0.000000",
        "Minimum seek delay = 0.000000,",
    ) else {
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
    let Some((err, line)) = load_edited(
        "float",
        "atlas10k.model",
        "Rotation speed (in rpms) = 10025",
        "Rotation speed (in rpms) = 10025.0",
    ) else {
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
    let Some((err, line)) = load_edited(
        "float-zone",
        "atlas10k.model",
        "Blocks per track = 334,",
        "Blocks per track = 334.0,",
    ) else {
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
        let Some((err, line)) = load_edited(
            &format!("unknown-{tag}"),
            file,
            anchor,
            &format!("Bogus knob = 1, {anchor}"),
        ) else {
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
        let Some((err, line)) = load_edited(
            &format!("sparing{scheme}"),
            "atlas10k.model",
            "Sparing scheme used = 9",
            &format!("Sparing scheme used = {scheme}"),
        ) else {
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

/// Load atlas10k after `damage`, expecting it to load; the spec.
fn load_repaired(tag: &str, damage: impl FnOnce(&Path)) -> Option<spinstack_disk::DriveSpec> {
    let src = source_dir()?;
    let dir = std::env::temp_dir().join(format!("spinstack-import-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for f in FILES {
        std::fs::copy(src.join(f), dir.join(f)).unwrap();
    }
    damage(&dir);
    Some(load_parv(&dir.join("atlas10k.parv")).unwrap_or_else(|e| panic!("{tag}: {e}")))
}

// Guards inputs finding 19: a negative head switch was reported at
// `atlas10k.parv:0` and a negative seek time too, although the values are at
// atlas10k.model:17 and atlas10k.seek:3. Proves each is named at its own file and
// line, with the parameter.
#[test]
fn time_errors_name_the_file_and_line_of_the_value() {
    let Some((err, line)) = load_edited(
        "headswneg",
        "atlas10k.model",
        "Head switch time = 0.17600",
        "Head switch time = -1",
    ) else {
        return;
    };
    assert_eq!(line, 17);
    assert_at(&err, "atlas10k.model", 17, Some("Head switch time"));
    let Some((err, _)) = load_damaged("seek-neg", |dir| {
        edit(dir, "atlas10k.seek", "2,\t1.15700", "2,\t-1.157");
    }) else {
        return;
    };
    assert_at(&err, "atlas10k.seek", 3, None);
    assert!(err.message.contains("-1.157"), "{err}");
    let Some((err, _)) = load_damaged("seek-order", |dir| {
        edit(dir, "atlas10k.seek", "3,\t1.16300", "1,\t1.16300");
    }) else {
        return;
    };
    assert_at(&err, "atlas10k.seek", 4, None);
    assert!(err.message.contains("distances must rise"), "{err}");
}

// Guards inputs finding 19: layout problems named the drive ("cannot build drive
// \"atlas10k\": invalid layout: zones 0-432 and 400-848 overlap"), not the file.
// Proves an overlap is named at the later zone's line in the .model, and a slip
// beyond its zone at that zone's line.
#[test]
fn layout_errors_name_the_zone_line() {
    let zone_line = |dir: &Path, band: &str| {
        let text = std::fs::read_to_string(dir.join("atlas10k.model")).unwrap();
        text[..text.find(&format!("# band {band} ")).unwrap()]
            .matches('\n')
            .count() as u32
            + 1
    };
    let mut line = 0;
    let Some((err, _)) = load_damaged("zoneoverlap", |dir| {
        edit(
            dir,
            "atlas10k.model",
            "First cylinder number = 433",
            "First cylinder number = 400",
        );
        line = zone_line(dir, "1");
    }) else {
        return;
    };
    assert_at(&err, "atlas10k.model", line, Some("Zones"));
    assert!(err.message.contains("overlap"), "{err}");
    let Some((err, _)) = load_damaged("slip-beyond", |dir| {
        edit(dir, "atlas10k.model", "[ 55017,", "[ 999999999,");
        line = zone_line(dir, "0");
    }) else {
        return;
    };
    assert_at(&err, "atlas10k.model", line, Some("Zones"));
    assert!(err.message.contains("zone 0"), "{err}");
}

// Guards inputs finding 19: a model cut just before its `] # Zones` was blamed on
// the .diskspecs without the "is it truncated?" hint other cuts get. Proves the
// hint names the model and the line it ends at.
#[test]
fn a_model_cut_before_its_zone_list_ends_is_called_truncated() {
    let mut end = 0;
    let Some((err, _)) = load_damaged("truncated-zones", |dir| {
        let path = dir.join("atlas10k.model");
        let text = std::fs::read_to_string(&path).unwrap();
        let cut = &text[..text.find("] # Zones").unwrap()];
        end = cut.matches('\n').count() as u32 + 1;
        std::fs::write(&path, cut).unwrap();
    }) else {
        return;
    };
    assert_eq!(err.file.file_name().unwrap(), "atlas10k.diskspecs", "{err}");
    assert!(
        err.message.contains(&format!(
            "atlas10k.model:{end} ended with 3 blocks or lists still open; is it truncated?"
        )),
        "{err}"
    );
}

// Guards inputs finding 16: `Block count` was never compared with the capacity the
// zones give (0, 1000 and 99999999999 ran alike; 100 surfaces gave 17 times the
// count). Proves a count more than a factor 2 from the zones' capacity is refused
// at its line with both numbers, and that one within it (as 7 of DiskSim's own
// files have: atlas10k's 17938986 against 17966953) loads with a warning saying so.
#[test]
fn block_count_is_compared_with_the_zones() {
    for (tag, from, to) in [
        ("blocks0", "Block count =  17938986", "Block count = 0"),
        (
            "blocks1000",
            "Block count =  17938986",
            "Block count = 1000",
        ),
        (
            "blocks-huge",
            "Block count =  17938986",
            "Block count = 99999999999",
        ),
        (
            "surfaces100",
            "Number of data surfaces = 6",
            "Number of data surfaces = 100",
        ),
    ] {
        let Some((err, _)) = load_damaged(tag, |dir| {
            edit(dir, "atlas10k.model", from, to);
        }) else {
            return;
        };
        assert_at(&err, "atlas10k.model", 4, Some("Block count"));
        assert!(
            err.message
                .contains("blocks: more than a factor of 2 apart"),
            "{tag}: {err}"
        );
    }
    let Some(spec) = load_repaired("blocks-real", |_| {}) else {
        return;
    };
    let warnings: Vec<&str> = spec.warnings().collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0]
            .contains("atlas10k.model:4: Block count 17938986 disagrees with the 17966953 blocks"),
        "{warnings:?}"
    );
    let Some(spec) = load_repaired("blocks-equal", |dir| {
        edit(
            dir,
            "atlas10k.model",
            "Block count =  17938986",
            "Block count = 17966953",
        );
    }) else {
        return;
    };
    assert_eq!(spec.warnings().count(), 0);
}

// Guards inputs finding 16: negative seek times that this model does not use, and
// an absurd negative write settle, were accepted. Proves each is refused at its
// line, while DiskSim's real negative settles (dec_rz26, hp_c2490a) still load
// (all_drives_load in import_disksim.rs).
#[test]
fn negative_seek_times_and_settles_are_refused() {
    for (tag, from, to, parameter) in [
        (
            "single-neg",
            "Single cylinder seek time = 1.24500",
            "Single cylinder seek time = -1",
            "Single cylinder seek time",
        ),
        (
            "strobe-neg",
            "Full strobe seek time = 10.82800",
            "Full strobe seek time = -5",
            "Full strobe seek time",
        ),
        (
            "settle-neg",
            "Add. write settling delay = 0.48700",
            "Add. write settling delay = -1000",
            "Add. write settling delay",
        ),
    ] {
        let Some((err, line)) = load_edited(tag, "atlas10k.model", from, to) else {
            return;
        };
        assert_at(&err, "atlas10k.model", line, Some(parameter));
    }
}

// Guards inputs finding 16: `Offset of first block = 100000` (a 334-sector track)
// and a zone ending at cylinder 20000 of 10042 were accepted (the latter with
// 112 ms seeks). Proves each is refused at its line, while a zone gap (real: the
// Ultrastar 18ES model has one at cylinder 257) still loads, with fewer LBNs.
#[test]
fn geometry_nonsense_is_refused_and_gaps_are_not() {
    for (tag, from, to, parameter) in [
        (
            "offset",
            "Offset of first block = 0.000000",
            "Offset of first block = 100000",
            "Offset of first block",
        ),
        (
            "skew",
            "Skew for track switch = 63.000000",
            "Skew for track switch = 100000",
            "Skew for track switch",
        ),
        (
            "past-cylinders",
            "Last cylinder number = 10041",
            "Last cylinder number = 20000",
            "Last cylinder number",
        ),
    ] {
        let Some((err, line)) = load_edited(tag, "atlas10k.model", from, to) else {
            return;
        };
        assert_at(&err, "atlas10k.model", line, Some(parameter));
    }
    let Some(spec) = load_repaired("gap", |dir| {
        edit(
            dir,
            "atlas10k.model",
            "First cylinder number = 433",
            "First cylinder number = 440",
        );
    }) else {
        return;
    };
    let layout = spinstack_disk::layout::Layout::new(&spec.layout).unwrap();
    assert!(layout.capacity().0 < 17966953);
}

// Guards inputs finding 16: `Seek type = hpl` with its values commented out ran
// the extracted curve silently. Proves it is refused at the `Seek type` line,
// naming the missing parameter.
#[test]
fn a_seek_type_without_its_values_is_refused() {
    let Some((err, line)) = load_edited(
        "hpl-novalues",
        "atlas10k.model",
        "Seek type = extracted",
        "Seek type = hpl",
    ) else {
        return;
    };
    assert_at(&err, "atlas10k.model", line, Some("Seek type"));
    assert!(err.message.contains("HPL seek equation values"), "{err}");
}

// Guards inputs finding 16: a .parv with no `instantiate` line for its disk, or
// one naming an undefined spec (`as NOPE`), loaded the only disksim_disk block
// anyway; DiskSim would stop. Proves both are refused, the second at its line.
#[test]
fn the_disk_must_be_instantiated_as_a_defined_type() {
    let Some((err, line)) = load_edited(
        "instantiate-nope",
        "atlas10k.parv",
        "as  QUANTUM_TORNADO_validate",
        "as  NOPE",
    ) else {
        return;
    };
    assert_at(&err, "atlas10k.parv", line, None);
    assert!(
        err.message.contains("'NOPE', which no block defines"),
        "{err}"
    );
    let Some((err, _)) = load_damaged("instantiate-none", |dir| {
        edit(
            dir,
            "atlas10k.parv",
            "instantiate [ disk0 ]   as  QUANTUM_TORNADO_validate",
            "",
        );
    }) else {
        return;
    };
    assert_at(&err, "atlas10k.diskspecs", 1, None);
    assert!(err.message.contains("is never instantiated"), "{err}");
}

// Guards inputs finding 25: a UTF-8 byte-order mark (as Windows editors write)
// broke the .parv and the .seek. Proves files starting with one load as without.
#[test]
fn byte_order_marks_are_skipped() {
    let Some(spec) = load_repaired("bom", |dir| {
        for file in FILES {
            let path = dir.join(file);
            let text = std::fs::read_to_string(&path).unwrap();
            std::fs::write(&path, format!("\u{feff}{text}")).unwrap();
        }
    }) else {
        return;
    };
    let plain = load_repaired("bom-plain", |_| {}).unwrap();
    assert_eq!(spec.layout, plain.layout);
    assert_eq!(spec.mechanics, plain.mechanics);
}

// Guards inputs finding 25 (a .parv that `source`s a .diskspecs file twice).
// Proves the two cases apart: the same file sourced twice defines the same
// blocks twice and loads as if sourced once (DiskSim keeps the first definition,
// which says what the repeat says), while a second, different definition of the
// same name (another version of the file) is refused, naming both places. The
// old loader kept the first silently in both cases, so the second half fails on
// it (the load succeeded with the other file's buffer segments ignored).
#[test]
fn a_repeated_include_is_harmless_and_a_different_redefinition_is_refused() {
    let include = "source atlas10k.diskspecs\n";
    let once = load_repaired("include-once", |_| {});
    let twice = load_repaired("include-twice", |dir| {
        edit(
            dir,
            "atlas10k.parv",
            include,
            &format!("{include}{include}"),
        );
    });
    let (Some(once), Some(twice)) = (once, twice) else {
        return;
    };
    assert_eq!(
        format!("{:?}", once.firmware),
        format!("{:?}", twice.firmware)
    );
    assert_eq!(format!("{:?}", once.layout), format!("{:?}", twice.layout));
    let Some((err, dir)) = load_damaged("include-other", |dir| {
        let text = std::fs::read_to_string(dir.join("atlas10k.diskspecs")).unwrap();
        let other = text.replacen(
            "Number of buffer segments = 10",
            "Number of buffer segments = 2",
            1,
        );
        assert_ne!(text, other, "the edit applies");
        std::fs::write(dir.join("other.diskspecs"), other).unwrap();
        edit(
            dir,
            "atlas10k.parv",
            include,
            &format!("{include}source other.diskspecs\n"),
        );
    }) else {
        return;
    };
    assert_at(&err, "other.diskspecs", 1, None);
    let first = dir.join("atlas10k.diskspecs");
    assert!(
        err.message
            .contains("\"QUANTUM_TORNADO_validate\" is defined again")
            && err.message.contains(&format!("{}:1", first.display())),
        "{err}"
    );
}

// Guards inputs finding 16/25 (an absurd rotation speed in a .parv drive was
// accepted: `Rotation speed (in rpms) = 1` gave 40-second requests). Proves a
// speed below 1,000 rpm is refused at the .model line with the parameter and the
// range; the old importer refused only 0 and more than 100,000.
#[test]
fn an_absurd_rotation_speed_is_refused() {
    let Some((err, line)) = load_edited(
        "rpm1",
        "atlas10k.model",
        "Rotation speed (in rpms) = 10025",
        "Rotation speed (in rpms) = 1",
    ) else {
        return;
    };
    assert_at(
        &err,
        "atlas10k.model",
        line,
        Some("Rotation speed (in rpms)"),
    );
    assert!(
        err.message
            .contains("1 is out of range: between 1,000 and 100,000 rpm"),
        "{err}"
    );
}
