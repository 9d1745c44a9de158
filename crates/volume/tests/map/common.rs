//! Shared test helpers: random geometries, the Maxtor Atlas 10K V members of the
//! validation paper, and the checks every map must pass.

use proptest::prelude::*;
use spinstack_sim::rng::SplitMix64;
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_volume::map::{
    MemberIndex, ParityLayout, Raid5Map, Role, TrackAlignedLayout, UnitPolicy,
};

/// The workspace's seeded generator with the inclusive range these tests draw from,
/// seeded from proptest inputs.
pub struct Rng(SplitMix64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(SplitMix64::new(seed))
    }
    pub fn next(&mut self) -> u64 {
        self.0.next_u64()
    }
    /// Uniform in `low..=high`.
    pub fn range(&mut self, low: u64, high: u64) -> u64 {
        low + self.next() % (high - low + 1)
    }
}

pub fn sectors(sizes: &[u64]) -> Vec<Sectors> {
    sizes.iter().map(|&s| Sectors(s)).collect()
}

/// The five Maxtor Atlas 10K V members used in the tests, with their outermost track
/// sizes on surface 0 and surface 1 (validation paper, Table 2; C0K and C9K share a
/// numbering).
pub const MAXTOR_MEMBERS: [(&str, u64, u64); 5] = [
    ("J20 Q3 CZK", 1144, 1092),
    ("J20 Q3 C0K", 1092, 1144),
    ("J20 Q3 C9K", 1092, 1144),
    ("J20 TK 7GK", 1025, 1196),
    ("J20 TF S0K", 1060, 1170),
];

/// `tracks` track sizes in LBN order of a serpentine Maxtor member: bands of 32
/// cylinders, surfaces in the order 0, 1, 1, 0 per band (paper, Figure 2 text: top
/// surface outward, bottom inward, bottom outward, top inward, repeat). A few tracks
/// lose 1-3 sectors to defects (the paper: "track size may differ in the same zone
/// on the same surface due to defects"), placed by `seed`.
pub fn maxtor_member_tracks(
    surface0: u64,
    surface1: u64,
    tracks: usize,
    seed: u64,
) -> Vec<Sectors> {
    let mut rng = Rng::new(seed);
    (0..tracks)
        .map(|t| {
            let band = t / 32;
            let size = if matches!(band % 4, 0 | 3) {
                surface0
            } else {
                surface1
            };
            let defect = if rng.range(0, 499) == 0 {
                rng.range(1, 3)
            } else {
                0
            };
            Sectors(size - defect)
        })
        .collect()
}

pub fn maxtor_array_tracks(tracks: usize) -> Vec<Vec<Sectors>> {
    MAXTOR_MEMBERS
        .iter()
        .enumerate()
        .map(|(m, &(_, s0, s1))| maxtor_member_tracks(s0, s1, tracks, m as u64 + 1))
        .collect()
}

/// A random parity layout: an md RAID-5 or a track-aligned one with random tracks.
#[derive(Clone, Debug)]
pub enum ParityCase {
    Raid5 {
        members: u32,
        chunk: u64,
        member_capacity: u64,
    },
    Track {
        tracks: Vec<Vec<u64>>,
        policy: UnitPolicy,
    },
}

impl ParityCase {
    pub fn build(&self) -> Box<dyn ParityLayout> {
        match self {
            ParityCase::Raid5 {
                members,
                chunk,
                member_capacity,
            } => Box::new(
                Raid5Map::new(*members, Sectors(*chunk), Sectors(*member_capacity)).unwrap(),
            ),
            ParityCase::Track { tracks, policy } => Box::new(
                TrackAlignedLayout::new(tracks.iter().map(|t| sectors(t)).collect(), *policy)
                    .unwrap(),
            ),
        }
    }
}

pub fn raid5_case() -> impl Strategy<Value = ParityCase> {
    (3u32..=6, 1u64..=6, 1u64..=6, 0u64..6).prop_map(|(members, chunk, rows, tail)| {
        ParityCase::Raid5 {
            members,
            chunk,
            member_capacity: rows * chunk + tail % chunk,
        }
    })
}

pub fn track_tracks() -> impl Strategy<Value = Vec<Vec<u64>>> {
    prop::collection::vec(prop::collection::vec(1u64..=9, 1..=6), 3..=6)
}

pub fn policy() -> impl Strategy<Value = UnitPolicy> {
    prop_oneof![
        Just(UnitPolicy::WholeTrack),
        Just(UnitPolicy::SmallestTrack)
    ]
}

pub fn track_case() -> impl Strategy<Value = ParityCase> {
    (track_tracks(), policy()).prop_map(|(tracks, policy)| ParityCase::Track { tracks, policy })
}

pub fn parity_case() -> impl Strategy<Value = ParityCase> {
    prop_oneof![raid5_case(), track_case()]
}

/// Every [`ParityLayout`] contract item that can be checked by enumeration: stripes
/// tile the volume; units are well formed and disjoint; each member sector's role
/// agrees with the units; `locate` and `inverse` are mutual inverses; the capacity
/// accounting matches a count of roles. `member_sizes` are the raw member sizes.
pub fn check_parity_layout(layout: &dyn ParityLayout, member_sizes: &[u64]) {
    let n = layout.members();
    let mut next_start = 0;
    // Role each member sector should have, built from the units alone.
    let mut expected: Vec<Vec<Role>> = member_sizes
        .iter()
        .map(|&s| vec![Role::Unused; s as usize])
        .collect();
    for stripe in 0..layout.stripes() {
        assert_eq!(
            layout.stripe_start(stripe),
            Lbn(next_start),
            "stripe {stripe} start"
        );
        let parity = layout.parity_member(stripe);
        let mut max_data_used = 0;
        let mut data_total = 0;
        for d in 0..n - 1 {
            let member = layout.data_member(stripe, d);
            assert_ne!(member, parity);
            assert_eq!(layout.data_index(stripe, member), Some(d));
            let unit = layout.unit(stripe, member);
            assert!(unit.used <= unit.allocated && unit.used.0 > 0);
            for i in 0..unit.used.0 {
                let slot = &mut expected[member.index()][(unit.start.0 + i) as usize];
                assert_eq!(
                    *slot,
                    Role::Unused,
                    "{member} sector {} in two units",
                    unit.start.0 + i
                );
                *slot = Role::Data(Lbn(next_start + data_total + i));
            }
            max_data_used = max_data_used.max(unit.used.0);
            data_total += unit.used.0;
        }
        assert_eq!(layout.data_index(stripe, parity), None);
        let unit = layout.unit(stripe, parity);
        assert_eq!(unit.used.0, max_data_used, "stripe {stripe} parity used");
        assert!(unit.used <= unit.allocated);
        for i in 0..unit.used.0 {
            let slot = &mut expected[parity.index()][(unit.start.0 + i) as usize];
            assert_eq!(*slot, Role::Unused);
            *slot = Role::Parity {
                stripe,
                offset: Sectors(i),
            };
        }
        assert_eq!(layout.stripe_data_sectors(stripe), Sectors(data_total));
        next_start += data_total;
    }
    assert_eq!(layout.capacity(), Sectors(next_start));
    let mut counts = [0u64; 3];
    for (m, roles) in expected.iter().enumerate() {
        for (lbn, role) in roles.iter().enumerate() {
            let member = MemberIndex(m as u32);
            assert_eq!(
                layout.inverse(member, Lbn(lbn as u64)),
                *role,
                "{member} LBN {lbn}"
            );
            counts[match role {
                Role::Data(_) => 0,
                Role::Parity { .. } => 1,
                Role::Unused => 2,
            }] += 1;
            if let Role::Data(volume) = role {
                assert_eq!(layout.locate(*volume).unwrap(), (member, Lbn(lbn as u64)));
                let stripe = layout.stripe_of(*volume).unwrap();
                let start = layout.stripe_start(stripe).0;
                assert!(
                    start <= volume.0 && volume.0 < start + layout.stripe_data_sectors(stripe).0
                );
            }
        }
    }
    assert_eq!(counts[0], layout.capacity().0, "data sectors");
    assert_eq!(counts[1], layout.parity_sectors().0, "parity sectors");
    assert_eq!(counts[2], layout.unused_sectors().0, "unused sectors");
    assert_eq!(layout.raw_sectors().0, member_sizes.iter().sum::<u64>());
    assert_eq!(layout.inverse(MemberIndex(n), Lbn(0)), Role::Unused);
}

pub fn member_sizes(case: &ParityCase) -> Vec<u64> {
    match case {
        ParityCase::Raid5 {
            members,
            member_capacity,
            ..
        } => vec![*member_capacity; *members as usize],
        ParityCase::Track { tracks, .. } => tracks.iter().map(|t| t.iter().sum()).collect(),
    }
}

/// Checks that `pieces` tile the request (`sectors` from `lbn`) in volume order, that
/// every sector lands where `locate` says, and that no two neighbours could have been
/// one piece (one piece per contiguous member run).
pub fn check_pieces(
    pieces: &[spinstack_volume::map::Piece],
    lbn: Lbn,
    sectors: Sectors,
    locate: impl Fn(Lbn) -> (MemberIndex, Lbn),
) {
    let mut next = 0;
    for (i, piece) in pieces.iter().enumerate() {
        assert_eq!(
            piece.offset.0, next,
            "piece {i} does not continue the request"
        );
        assert!(piece.extent.sectors.0 > 0, "empty piece {i}");
        for s in 0..piece.extent.sectors.0 {
            let expect = locate(Lbn(lbn.0 + next + s));
            assert_eq!(
                (piece.extent.member, Lbn(piece.extent.lbn.0 + s)),
                expect,
                "piece {i} sector {s}"
            );
        }
        if i > 0 {
            let before = pieces[i - 1].extent;
            let mergeable =
                before.member == piece.extent.member && before.end() == piece.extent.lbn;
            assert!(!mergeable, "pieces {} and {i} should be one", i - 1);
        }
        next += piece.extent.sectors.0;
    }
    assert_eq!(next, sectors.0, "pieces do not cover the request");
}
