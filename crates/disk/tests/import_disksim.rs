//! Import of DiskSim's validation parameter sets (`/work/shared/disksim/params`):
//! every drive loads, spot figures match the files, and malformed inputs give
//! errors naming the file, line and parameter. Skips when the folder is absent.

mod layout_common;

use spinstack_disk::import::load_parv;
use spinstack_disk::spec::{
    LayoutSpec, ReadAheadMode, SchedulingPolicy, SeekSpec, SparingScheme, SurfaceOrder,
    ZonedLayoutSpec,
};
use std::path::PathBuf;

fn params_dir() -> Option<PathBuf> {
    spinstack_testdata::disksim("params", "import the DiskSim parameter sets")
}

use layout_common::DISKSIM_DRIVES as DRIVES;

fn zoned(spec: &spinstack_disk::DriveSpec) -> &ZonedLayoutSpec {
    match &spec.layout {
        LayoutSpec::Zoned(z) => z,
        other => panic!("expected a zoned layout, got {other:?}"),
    }
}

// Proves all 11 validation drives import, with the include chain in provenance.
#[test]
fn all_drives_load() {
    let Some(dir) = params_dir() else { return };
    for name in DRIVES {
        let spec =
            load_parv(&dir.join(format!("{name}.parv"))).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(spec.name, name);
        let z = zoned(&spec);
        assert!(
            !z.zones.is_empty() && z.surfaces > 0 && z.cylinders > 0,
            "{name}"
        );
        assert!(
            spec.provenance[0].contains(".model"),
            "{name}: {:?}",
            spec.provenance
        );
        assert_eq!(spec.firmware.queue.policy, SchedulingPolicy::Fcfs, "{name}");
        assert_eq!(spec.firmware.queue.max_queue_length, 1, "{name}");
    }
}

// Proves atlas10k's figures come through exactly as written in its files.
#[test]
fn atlas10k_figures() {
    let Some(dir) = params_dir() else { return };
    let spec = load_parv(&dir.join("atlas10k.parv")).unwrap_or_else(|e| panic!("{e}"));
    let z = zoned(&spec);
    assert_eq!((z.surfaces, z.cylinders), (6, 10042));
    assert_eq!(z.surface_order, SurfaceOrder::ReverseOnOddZoneCylinder);
    assert_eq!(z.sparing, SparingScheme::SectorsPerZone);
    assert_eq!(z.zones.len(), 24);
    let z0 = &z.zones[0];
    assert_eq!(
        (z0.first_cylinder, z0.last_cylinder, z0.sectors_per_track),
        (0, 432, 334)
    );
    assert_eq!(
        (z0.track_skew_sectors, z0.cylinder_skew_sectors, z0.spares),
        (63, 113, 89)
    );
    assert_eq!(z0.slips, [55017, 358148, 394564, 420533, 483742]);
    assert_eq!(z.zones[3].cylinder_skew_sectors, 101);
    assert_eq!(spec.mechanics.rpm, 10025);
    assert_eq!(spec.mechanics.head_switch_ms, 0.176);
    assert_eq!(spec.mechanics.write_settle_ms, 0.487);
    let SeekSpec::Extracted { points } = &spec.mechanics.seek else {
        panic!("{:?}", spec.mechanics.seek)
    };
    assert_eq!(points.len(), 138);
    assert_eq!(
        (points[0].distance_cylinders, points[0].time_ms),
        (1, 1.245)
    );
    assert_eq!(spec.firmware.bus_sector_transfer_ms, 0.099);
    assert_eq!(spec.firmware.bus_write_sector_transfer_ms, None);
    let c = &spec.firmware.cache;
    assert_eq!(
        (c.segments, c.segment_sectors, c.max_read_ahead_sectors),
        (10, 374, 354)
    );
    assert_eq!(c.read_ahead, ReadAheadMode::ToEndOfNextTrack);
    assert_eq!(
        (
            c.fast_write_level,
            c.read_any_free_blocks,
            c.read_ahead_over_requested
        ),
        (2, true, 0)
    );
    assert!(spec.firmware.immediate_buffer_read && spec.firmware.immediate_buffer_write);
    assert_eq!(spec.firmware.overheads.write_hit_after_read_ms, 0.186);
    assert_eq!(spec.firmware.overheads.write_miss_after_write_ms, 0.49673);
    assert!(
        spec.description.contains("QUANTUM_TORNADO_validate"),
        "{}",
        spec.description
    );
}

// Proves hp_c2247a's HPL+first-ten seek, its bus times (read 0.1701, write 0.18686)
// and its per-zone first-block offsets.
#[test]
fn hp_c2247a_figures() {
    let Some(dir) = params_dir() else { return };
    let spec = load_parv(&dir.join("hp_c2247a.parv")).unwrap_or_else(|e| panic!("{e}"));
    let SeekSpec::HplPlus10 { hpl, first_ten_ms } = &spec.mechanics.seek else {
        panic!("{:?}", spec.mechanics.seek)
    };
    assert_eq!(hpl.boundary_cylinders, 300);
    assert_eq!(
        (
            hpl.short_base_ms,
            hpl.short_sqrt_ms,
            hpl.long_base_ms,
            hpl.long_per_cylinder_ms
        ),
        (3.81, 0.33, 7.75, 0.0059)
    );
    assert_eq!(hpl.single_cylinder_ms, None);
    assert_eq!(first_ten_ms.len(), 10);
    assert_eq!((first_ten_ms[0], first_ten_ms[9]), (2.89, 4.99));
    assert_eq!(spec.firmware.bus_sector_transfer_ms, 0.1701);
    assert_eq!(spec.firmware.bus_write_sector_transfer_ms, Some(0.18686));
    let z = zoned(&spec);
    assert_eq!(z.sparing, SparingScheme::TracksPerZone);
    assert_eq!((z.surfaces, z.cylinders), (13, 2051));
    assert_eq!(
        (
            z.zones[0].empty_sectors_at_front,
            z.zones[1].first_block_offset_sectors
        ),
        (1632, 14)
    );
    assert!(spec.firmware.overheads.extra_write_disconnect);
    assert_eq!(spec.firmware.overheads.minimum_seek_delay_ms, 0.6);
    assert_eq!(spec.mechanics.rpm, 5400);
}

// Proves the remaining per-drive distinctions: sparing schemes, bus times, the
// dec_rz26 HPL list ignored under an extracted seek type, negative write settle.
#[test]
fn other_drive_figures() {
    let Some(dir) = params_dir() else { return };
    let load =
        |n: &str| load_parv(&dir.join(format!("{n}.parv"))).unwrap_or_else(|e| panic!("{e}"));
    let st = load("st41601n");
    assert_eq!(zoned(&st).sparing, SparingScheme::SectorsPerCylinder);
    assert_eq!(st.firmware.bus_sector_transfer_ms, 0.09552);
    let dec = load("dec_rz26");
    assert_eq!(zoned(&dec).sparing, SparingScheme::SectorsPerTrack);
    assert!(matches!(dec.mechanics.seek, SeekSpec::Extracted { .. }));
    assert_eq!(dec.mechanics.write_settle_ms, -0.483);
    assert_eq!(dec.firmware.bus_sector_transfer_ms, 0.07069);
    let cheetah = load("cheetah4LP");
    assert_eq!(
        zoned(&cheetah).sparing,
        SparingScheme::SectorsPerCylinderRange
    );
    assert_eq!(zoned(&cheetah).sparing_range_cylinders, 12);
    assert_eq!(
        zoned(&load("atlas_III")).sparing,
        SparingScheme::SlipToEndOfDisk
    );
    assert_eq!(load("hp_c3323a").firmware.bus_sector_transfer_ms, 0.1455);
    assert_eq!(load("hp_c2490a").firmware.bus_sector_transfer_ms, 0.14841);
}
