//! The zoned layout against DiskSim 4.0 on the 11 validation parameter sets:
//! capacities (notes §2.2 table), zone-0 track sizes and sample mappings
//! (§2.6, measured with a driver linked to DiskSim's diskmodel) and the
//! atlas10k skew example (§2.5). Skips with a message when
//! `/work/shared/disksim` is absent.

use spinstack_disk::import::load_parv;
use spinstack_disk::layout::{Angle, Layout, Pbn, SectorContent};
use spinstack_sim::units::{Lbn, Sectors};
use std::path::{Path, PathBuf};

fn params_dir() -> Option<PathBuf> {
    spinstack_testdata::disksim("params", "check the DiskSim layout vectors")
}

fn load(dir: &Path, name: &str) -> Layout {
    let spec =
        load_parv(&dir.join(format!("{name}.parv"))).unwrap_or_else(|e| panic!("{name}: {e}"));
    Layout::new(&spec.layout).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn pbn(cylinder: u32, surface: u32, sector: u32) -> Pbn {
    Pbn {
        cylinder,
        surface,
        sector,
    }
}

/// A sample LBN and its PBN as (cylinder, head, sector).
type Sample = (u64, (u32, u32, u32));

/// (drive, simulated capacity, zone-0 sectors per track, sample mapping).
const VECTORS: [(&str, u64, u32, Sample); 10] = [
    ("atlas10k", 17_966_953, 334, (1_000_000, (499, 0, 93))),
    ("atlas_III", 17_797_944, 256, (0, (50, 0, 0))),
    ("barracuda", 4_217_670, 186, (1_000_000, (1092, 2, 84))),
    ("cheetah4LP", 8_887_940, 195, (1_000_000, (644, 5, 109))),
    ("cheetah9LP", 17_918_387, 254, (1_000_000, (328, 1, 9))),
    ("dec_rz26", 2_050_860, 58, (0, (29, 0, 0))),
    ("hp_c2247a", 2_054_864, 96, (0, (1, 4, 0))),
    ("hp_c2490a", 4_165_272, 108, (0, (1, 4, 0))),
    ("hp_c3323a", 2_056_008, 120, (100_000, (120, 4, 40))),
    ("ibm18es", 18_033_753, 390, (0, (1, 0, 0))),
];

// Proves capacity, zone-0 track size and one mapping per drive equal DiskSim's,
// and that the sample maps back to its LBN.
#[test]
fn disksim_test_vectors() {
    let Some(dir) = params_dir() else { return };
    for (name, capacity, spt, (lbn, (c, h, s))) in VECTORS {
        let layout = load(&dir, name);
        assert_eq!(layout.capacity(), Sectors(capacity), "{name} capacity");
        let zone0 = layout.lbn_to_pbn(Lbn(0)).unwrap();
        assert_eq!(
            layout.sectors_per_track(zone0.cylinder, 0).unwrap(),
            spt,
            "{name} zone-0 spt"
        );
        let got = layout.lbn_to_pbn(Lbn(lbn)).unwrap();
        assert_eq!(got, pbn(c, h, s), "{name} LBN {lbn}");
        assert_eq!(
            layout.pbn_to_lbn(got).unwrap(),
            SectorContent::Data(Lbn(lbn)),
            "{name}"
        );
    }
}

// Proves the §2.5 skew arithmetic on atlas10k (spt 334, track skew 63, cylinder
// skew 113, surface order 1): LBN 334 is the second track, angle 63 sectors;
// LBN 2004 starts cylinder 1 whose logical surface 0 is head 5, angle
// (5*63 + 113) mod 334 = 94 sectors; LBN 1000000 has DiskSim's angle 3664867155.
#[test]
fn atlas10k_angles() {
    let Some(dir) = params_dir() else { return };
    let layout = load(&dir, "atlas10k");
    let width = (1u64 << 32) as f64 / 334.0;
    let width = width.floor() as u32;
    let at = |lbn: u64| {
        let p = layout.lbn_to_pbn(Lbn(lbn)).unwrap();
        (p, layout.angle_of(p).unwrap())
    };
    assert_eq!(at(334), (pbn(0, 1, 0), Angle(63 * width)));
    assert_eq!(at(2004), (pbn(1, 5, 0), Angle(94 * width)));
    assert_eq!(at(1_000_000), (pbn(499, 0, 93), Angle(3_664_867_155)));
}

// Proves the capacities of the §2.2 table for every drive, including
// st41601n, whose capacity equals its file's Block count.
#[test]
fn capacities_match_disksim() {
    let Some(dir) = params_dir() else { return };
    for (name, capacity) in [
        ("st41601n", 2_676_846u64),
        ("atlas10k", 17_966_953),
        ("hp_c3323a", 2_056_008),
    ] {
        assert_eq!(load(&dir, name).capacity(), Sectors(capacity), "{name}");
    }
}

// Proves the deliberate fix of DiskSim's scheme-2 aliasing on st41601n: the
// slip at zone sector 351027 (cylinder 242, offset 1337 of 1445, 6 spares)
// pushes LBN 349676 into the cylinder's first spare, (242,16,79), instead of
// DiskSim's (243,0,0), which LBN 349677 keeps. Both map back, and the track
// boundaries of each contain it.
#[test]
fn st41601n_scheme2_is_a_bijection() {
    let Some(dir) = params_dir() else { return };
    let layout = load(&dir, "st41601n");
    assert_eq!(layout.lbn_to_pbn(Lbn(349_676)).unwrap(), pbn(242, 16, 79));
    assert_eq!(layout.lbn_to_pbn(Lbn(349_677)).unwrap(), pbn(243, 0, 0));
    // The slipped sector itself: zone sector 351027 = cylinder 242 (from 349690),
    // offset 1337 = track 15 (1275) + sector 62.
    assert_eq!(
        layout.pbn_to_lbn(pbn(242, 15, 62)).unwrap(),
        SectorContent::Unused
    );
    assert_eq!(
        layout.pbn_to_lbn(pbn(242, 16, 80)).unwrap(),
        SectorContent::Unused
    );
    for lbn in [349_676, 349_677] {
        let p = layout.lbn_to_pbn(Lbn(lbn)).unwrap();
        assert_eq!(layout.pbn_to_lbn(p).unwrap(), SectorContent::Data(Lbn(lbn)));
        assert!(layout.track_of(Lbn(lbn)).unwrap().contains(Lbn(lbn)));
    }
    let last_track = layout.track_of(Lbn(349_676)).unwrap();
    assert_eq!((last_track.cylinder, last_track.surface), (242, 16));
    assert_eq!(last_track.end(), Lbn(349_677));
}
