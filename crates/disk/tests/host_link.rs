//! Drive references with a host link, `atlas10k@80MB/s`: `catalog::resolve` gives the
//! same drive with only its host-link time per sector (and its name) changed, for
//! catalog names and drive files alike, and refuses a bad link by naming it.

use spinstack_disk::catalog::{self, CatalogError, DriveFile};
use spinstack_disk::spec::DriveSpec;

/// What the link should leave of `spec`: everything but the link and the name.
fn without_link(mut spec: DriveSpec) -> DriveSpec {
    spec.name = String::new();
    spec.firmware.bus_sector_transfer_ms = 0.0;
    spec.firmware.bus_write_sector_transfer_ms = None;
    spec
}

/// Every catalog drive behind an 80 MB/s link is the catalog drive with 6.4 µs per
/// sector on the link, named with the suffix.
#[test]
fn a_link_changes_only_the_link_and_the_name() {
    for name in catalog::names() {
        let plain = catalog::resolve(name).expect("in catalog");
        let linked = catalog::resolve(&format!("{name}@80MB/s")).expect("valid reference");
        assert_eq!(linked.name, format!("{name}@80MB/s"));
        assert!(
            (linked.firmware.bus_sector_transfer_ms - 0.0064).abs() < 1e-12,
            "{name}: {}",
            linked.firmware.bus_sector_transfer_ms
        );
        assert_eq!(linked.firmware.bus_write_sector_transfer_ms, None);
        assert_eq!(without_link(linked), without_link(plain), "{name}");
    }
}

/// A drive file takes a link too, also one whose writes had their own link time, and
/// the suffix does not hide the file's kind from whoever resolves paths.
#[test]
fn drive_files_take_a_link() {
    let directory =
        std::env::temp_dir().join(format!("spinstack-host-link-{}", std::process::id()));
    std::fs::create_dir_all(&directory).expect("temp dir");
    let mut spec = catalog::get("atlas10k2").expect("in catalog");
    spec.firmware.bus_write_sector_transfer_ms = Some(0.02);
    let path = directory.join("drive.toml");
    std::fs::write(&path, catalog::to_toml(&spec).expect("serializes")).expect("write");
    let reference = format!("{}@160MB/s", path.display());
    assert_eq!(catalog::drive_file_kind(&reference), Some(DriveFile::Toml));
    let linked = catalog::resolve(&reference).expect("loads");
    assert!((linked.firmware.bus_sector_transfer_ms - 0.0032).abs() < 1e-12);
    assert_eq!(linked.firmware.bus_write_sector_transfer_ms, None);
    assert_eq!(linked.name, format!("{}@160MB/s", spec.name));
    assert_eq!(without_link(linked), without_link(spec));
    std::fs::remove_dir_all(&directory).ok();
}

/// Bad links and unknown drives behind a link are refused, naming what is wrong.
#[test]
fn bad_references_are_refused_by_name() {
    let error = catalog::resolve("atlas10k@0MB/s").expect_err("a zero link");
    assert!(matches!(error, CatalogError::Link { .. }), "{error}");
    assert!(error.to_string().contains("atlas10k@0MB/s"), "{error}");
    let error = catalog::resolve("atlas10k@fastMB/s").expect_err("not a number");
    assert!(
        error.to_string().contains("`fast` is not a number"),
        "{error}"
    );
    let error = catalog::resolve("no-such-drive@80MB/s").expect_err("unknown drive");
    assert!(matches!(error, CatalogError::UnknownName { ref name, .. } if name == "no-such-drive"));
    // Not a link suffix (no unit): the whole reference is taken as a name, and refused.
    let error = catalog::resolve("atlas10k@80").expect_err("no such name");
    assert!(error.to_string().contains("atlas10k@80"), "{error}");
}

mod properties {
    use proptest::prelude::*;
    use spinstack_disk::catalog;
    use spinstack_disk::host_link::{linked_name, split_reference, HostLink};
    use spinstack_disk::host_link::{LINK_MB_PER_S_MAX, LINK_MB_PER_S_MIN};

    proptest! {
        // Proves any text splits without a panic, and a reference that splits into a
        // link names a drive before it (the `@` is never swallowed into the name).
        #[test]
        fn any_reference_splits_without_panic(reference in "\\PC{0,40}") {
            if let Ok((drive, Some(_))) = split_reference(&reference) {
                prop_assert!(!drive.is_empty());
                prop_assert!(reference.starts_with(drive));
            }
        }

        // Proves the name a linked drive goes by parses back to the same drive and rate.
        #[test]
        fn linked_names_round_trip(
            drive in "[a-z0-9_./-]{1,20}",
            rate in LINK_MB_PER_S_MIN..=LINK_MB_PER_S_MAX,
        ) {
            let link = HostLink::new(rate).unwrap();
            let name = linked_name(&drive, link);
            let (back, parsed) = split_reference(&name).unwrap();
            prop_assert_eq!(back, drive.as_str());
            prop_assert_eq!(parsed, Some(link));
        }

        // Proves every accepted rate gives a drive that builds (the link time per
        // sector stays inside what a drive file may hold).
        #[test]
        fn every_accepted_rate_builds_a_drive(rate in LINK_MB_PER_S_MIN..=LINK_MB_PER_S_MAX) {
            let reference = linked_name("atlas10k", HostLink::new(rate).unwrap());
            let spec = catalog::resolve(&reference).unwrap();
            spinstack_disk::drive::Drive::new(&spec, spinstack_disk::drive::DriveOptions::default())
                .unwrap();
        }
    }
}
