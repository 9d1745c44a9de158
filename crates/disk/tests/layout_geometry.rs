//! `Layout::track_geometry`, the planner's one-lookup track query, agrees with
//! the separate queries it replaces on every catalog drive (zoned and
//! serpentine) and every real DiskSim parameter set: its extent equals
//! `track_of`, its size `sectors_per_track`, and `angle_of_sector` equals
//! `angle_of` for the track's sectors. Every track is checked at its first and
//! last LBN and at sectors 0, 1 and the last; every 397th track at every sector.
//! `Layout::locate` equals `lbn_to_pbn` plus `angle_of` at the same LBNs.
//! The DiskSim sets are skipped with a message when `/work/shared/disksim` is absent.

mod layout_common;

use spinstack_disk::import::load_parv;
use spinstack_disk::layout::{Layout, Pbn};
use spinstack_sim::units::Lbn;

use layout_common::DISKSIM_DRIVES;

/// Checks one layout; `name` labels failures.
fn check_layout(name: &str, layout: &Layout) {
    for (number, track) in layout.tracks().iter().enumerate() {
        let spt = layout
            .sectors_per_track(track.cylinder, track.surface)
            .unwrap_or_else(|e| panic!("{name} {track:?}: {e}"));
        let all_sectors = number % 397 == 0;
        for lbn in [track.first, Lbn(track.end().0 - 1)] {
            let geometry = layout
                .track_geometry(lbn)
                .unwrap_or_else(|e| panic!("{name} {lbn}: {e}"));
            assert_eq!(geometry.extent, *track, "{name} {lbn}: extent");
            assert_eq!(geometry.sectors_per_track, spt, "{name} {lbn}: size");
            let pbn = layout.lbn_to_pbn(lbn).expect("in range");
            let angle = layout.angle_of(pbn).expect("valid");
            assert_eq!(layout.locate(lbn), Ok((pbn, angle)), "{name} {lbn}: locate");
            assert_eq!(
                geometry.sector_width(),
                ((1u64 << 32) / u64::from(spt)) as u32
            );
            let sectors: Vec<u32> = if all_sectors {
                (0..spt).collect()
            } else {
                vec![0, 1.min(spt - 1), spt - 1]
            };
            for sector in sectors {
                let pbn = Pbn {
                    cylinder: track.cylinder,
                    surface: track.surface,
                    sector,
                };
                assert_eq!(
                    Ok(geometry.angle_of_sector(sector)),
                    layout.angle_of(pbn),
                    "{name} {pbn:?}: angle"
                );
            }
        }
    }
}

// Proves the agreement on the built-in catalog (both layout kinds).
#[test]
fn catalog_drives_agree() {
    for name in spinstack_disk::catalog::names() {
        let spec = spinstack_disk::catalog::get(name).expect("catalog entry loads");
        let layout = Layout::new(&spec.layout).expect("catalog layout builds");
        check_layout(name, &layout);
    }
}

// Proves the agreement on the real DiskSim parameter sets (every sparing
// scheme they use, slips, defects and surface orders).
#[test]
fn disksim_drives_agree() {
    let Some(dir) = spinstack_testdata::disksim("params", "check the DiskSim layouts' geometry")
    else {
        return;
    };
    for name in DISKSIM_DRIVES {
        let spec =
            load_parv(&dir.join(format!("{name}.parv"))).unwrap_or_else(|e| panic!("{name}: {e}"));
        let layout = Layout::new(&spec.layout).unwrap_or_else(|e| panic!("{name}: {e}"));
        check_layout(name, &layout);
    }
}

// Proves out-of-range LBNs are errors, as for `track_of`.
#[test]
fn out_of_range_is_an_error() {
    let spec = spinstack_disk::catalog::get("atlas10k").expect("catalog has atlas10k");
    let layout = Layout::new(&spec.layout).expect("builds");
    let end = Lbn(layout.capacity().0);
    assert_eq!(
        layout.track_geometry(end).map(|g| g.extent),
        layout.track_of(end)
    );
    assert!(layout.track_geometry(end).is_err());
    assert!(layout.locate(end).is_err());
}
