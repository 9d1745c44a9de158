//! Shared test helpers: random geometries, the Maxtor Atlas 10K V members of the
//! validation paper, the checks every parity layout must pass, and a reference
//! executor that runs read and write plans over byte arrays (one byte per sector).

use proptest::prelude::*;
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_volume::map::plan::{
    plan_read, plan_write, stripe_segments, ParityMethod, ReadOptions, ReadPurpose, WriteKind,
};
use spinstack_volume::map::{
    MemberIndex, ParityLayout, Raid5Map, Role, TrackAlignedLayout, UnitPolicy,
};
use std::cell::RefCell;
use std::collections::HashMap;

/// A small deterministic generator (xorshift64*), seeded from proptest inputs.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15 | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
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

/// A parity array over bytes (one byte per sector) that runs plans as the real-bytes
/// RAID will, and a shadow copy of the volume's logical contents to judge them by.
pub struct ByteArray<'a> {
    pub layout: &'a dyn ParityLayout,
    pub members: Vec<Vec<u8>>,
    pub volume: Vec<u8>,
    pub failed: Option<MemberIndex>,
}

impl<'a> ByteArray<'a> {
    /// Random volume contents, consistent parity, random bytes in every unused sector.
    pub fn new(layout: &'a dyn ParityLayout, member_sizes: &[u64], rng: &mut Rng) -> Self {
        let mut members: Vec<Vec<u8>> = member_sizes
            .iter()
            .map(|&s| (0..s).map(|_| rng.next() as u8).collect())
            .collect();
        let volume: Vec<u8> = (0..layout.capacity().0).map(|_| rng.next() as u8).collect();
        for stripe in 0..layout.stripes() {
            let parity = layout.parity_member(stripe);
            let p = layout.unit(stripe, parity);
            for i in 0..p.used.0 {
                members[parity.index()][(p.start.0 + i) as usize] = 0;
            }
            let mut base = layout.stripe_start(stripe).0;
            for d in 0..layout.members() - 1 {
                let member = layout.data_member(stripe, d);
                let unit = layout.unit(stripe, member);
                for i in 0..unit.used.0 {
                    let byte = volume[(base + i) as usize];
                    members[member.index()][(unit.start.0 + i) as usize] = byte;
                    members[parity.index()][(p.start.0 + i) as usize] ^= byte;
                }
                base += unit.used.0;
            }
        }
        ByteArray {
            layout,
            members,
            volume,
            failed: None,
        }
    }

    /// Live data equals the shadow volume; live parity equals the XOR of the logical
    /// data (the failed member's included, as the shadow has it).
    pub fn check_consistent(&self) -> Result<(), String> {
        let layout = self.layout;
        for stripe in 0..layout.stripes() {
            let parity = layout.parity_member(stripe);
            let p = layout.unit(stripe, parity);
            let mut xor = vec![0u8; p.used.0 as usize];
            let mut base = layout.stripe_start(stripe).0;
            for d in 0..layout.members() - 1 {
                let member = layout.data_member(stripe, d);
                let unit = layout.unit(stripe, member);
                for i in 0..unit.used.0 {
                    let logical = self.volume[(base + i) as usize];
                    xor[i as usize] ^= logical;
                    let stored = self.members[member.index()][(unit.start.0 + i) as usize];
                    if Some(member) != self.failed && stored != logical {
                        return Err(format!(
                            "stripe {stripe}: {member} data offset {i} is stale"
                        ));
                    }
                }
                base += unit.used.0;
            }
            if Some(parity) != self.failed {
                let stored = &self.members[parity.index()]
                    [p.start.0 as usize..(p.start.0 + p.used.0) as usize];
                if stored != xor.as_slice() {
                    return Err(format!(
                        "stripe {stripe}: parity {stored:?} != XOR of data {xor:?}"
                    ));
                }
            }
        }
        Ok(())
    }

    /// Reads through a read plan, as the real-bytes RAID will.
    pub fn read(
        &self,
        lbn: Lbn,
        sectors: Sectors,
        options: ReadOptions,
    ) -> Result<Vec<u8>, String> {
        let plan = plan_read(self.layout, lbn, sectors, self.failed, options)
            .map_err(|e| e.to_string())?;
        let mut out = vec![0u8; sectors.0 as usize];
        let mut covered: Vec<Vec<bool>> = plan
            .reads
            .iter()
            .map(|r| vec![false; r.sectors.0 as usize])
            .collect();
        for read in &plan.reads {
            if Some(read.member) == self.failed {
                return Err(format!("plan reads the failed {}", read.member));
            }
        }
        for piece in &plan.lost {
            if Some(piece.extent.member) != self.failed {
                return Err(format!("lost piece on live {}", piece.extent.member));
            }
        }
        for use_ in &plan.uses {
            let read = plan.reads[use_.read];
            if use_.skip.0 + use_.sectors.0 > read.sectors.0 || use_.sectors.0 == 0 {
                return Err(format!("use {use_:?} outside read {read:?}"));
            }
            for i in 0..use_.sectors.0 {
                let at = use_.skip.0 + i;
                covered[use_.read][at as usize] = true;
                let byte = self.members[read.member.index()][(read.lbn.0 + at) as usize];
                match use_.purpose {
                    ReadPurpose::Data { volume_offset } => {
                        let expect = Role::Data(Lbn(lbn.0 + volume_offset.0 + i));
                        if self.layout.inverse(read.member, Lbn(read.lbn.0 + at)) != expect {
                            return Err(format!("data use {use_:?} reads the wrong sector"));
                        }
                        out[(volume_offset.0 + i) as usize] = byte;
                    }
                    ReadPurpose::Reconstruct { volume_offset } => {
                        out[(volume_offset.0 + i) as usize] ^= byte
                    }
                    ReadPurpose::FillIn | ReadPurpose::UnusedTail => {}
                }
            }
        }
        if let Some((r, _)) = covered.iter().enumerate().find(|(_, c)| c.contains(&false)) {
            return Err(format!(
                "read {:?} has sectors no use explains",
                plan.reads[r]
            ));
        }
        Ok(out)
    }

    /// Writes `data` at `lbn` through write plans; `cache_seed` decides which member
    /// extents the (imaginary) stripe cache holds.
    pub fn write(&mut self, lbn: Lbn, data: &[u8], cache_seed: u64) -> Result<(), String> {
        let segments: Vec<_> = stripe_segments(self.layout, lbn, Sectors(data.len() as u64))
            .map_err(|e| e.to_string())?
            .collect();
        for segment in segments {
            let new = &data[segment.volume_offset.0 as usize..][..segment.range.sectors.0 as usize];
            self.write_stripe(segment.stripe, segment.range.start.0, new, cache_seed)?;
            let start = (lbn.0 + segment.volume_offset.0) as usize;
            self.volume[start..start + new.len()].copy_from_slice(new);
        }
        Ok(())
    }

    fn write_stripe(
        &mut self,
        stripe: u64,
        start: u64,
        new: &[u8],
        cache_seed: u64,
    ) -> Result<(), String> {
        let layout = self.layout;
        let queries = RefCell::new(Vec::new());
        let cached = |member: MemberIndex, lbn: Lbn, sectors: Sectors| {
            let hit = cache_seed % 3 == 0
                && Rng::new(cache_seed ^ lbn.0 ^ (u64::from(member.0) << 40)).next() % 2 == 0;
            queries.borrow_mut().push((member, lbn, sectors, hit));
            hit
        };
        let range = spinstack_volume::map::StripeRange {
            start: Sectors(start),
            sectors: Sectors(new.len() as u64),
        };
        let plan =
            plan_write(layout, stripe, range, self.failed, &cached).map_err(|e| e.to_string())?;
        // What the executor knows of the old contents: what it read, and what the cache held.
        let mut known: HashMap<(u32, u64), u8> = HashMap::new();
        for read in &plan.reads {
            if Some(read.member) == self.failed {
                return Err(format!("plan reads the failed {}", read.member));
            }
            for l in read.lbn.0..read.end().0 {
                known.insert(
                    (read.member.0, l),
                    self.members[read.member.index()][l as usize],
                );
            }
        }
        for &(member, lbn, sectors, hit) in queries.borrow().iter() {
            if Some(member) == self.failed {
                return Err(format!("plan asks the cache about the failed {member}"));
            }
            for l in (lbn.0..lbn.0 + sectors.0).filter(|_| hit) {
                known.insert((member.0, l), self.members[member.index()][l as usize]);
            }
        }
        let new_parity = self.new_parity(stripe, start, new, &plan.parity_runs, &known)?;
        self.apply_writes(stripe, start, new, &plan, &new_parity)?;
        if plan.kind == WriteKind::FullStripe && !plan.reads.is_empty() {
            return Err("a full-stripe write read something".into());
        }
        Ok(())
    }

    /// The new value of `member`'s unit offset `offset` if the write covers it.
    fn new_byte(
        &self,
        stripe: u64,
        start: u64,
        new: &[u8],
        member: MemberIndex,
        offset: u64,
    ) -> Option<u8> {
        let unit = self.layout.unit(stripe, member);
        let Role::Data(volume) = self.layout.inverse(member, Lbn(unit.start.0 + offset)) else {
            return None;
        };
        let in_stripe = volume.0 - self.layout.stripe_start(stripe).0;
        (start..start + new.len() as u64)
            .contains(&in_stripe)
            .then(|| new[(in_stripe - start) as usize])
    }

    /// New parity per unit offset, by each run's formula, from known old contents only.
    fn new_parity(
        &self,
        stripe: u64,
        start: u64,
        new: &[u8],
        runs: &[spinstack_volume::map::plan::ParityRun],
        known: &HashMap<(u32, u64), u8>,
    ) -> Result<HashMap<u64, u8>, String> {
        let layout = self.layout;
        let parity = layout.parity_member(stripe);
        let old = |member: MemberIndex, offset: u64| {
            let lbn = layout.unit(stripe, member).start.0 + offset;
            known.get(&(member.0, lbn)).copied().ok_or_else(|| {
                format!("stripe {stripe}: parity needs old {member} offset {offset}, not read or cached")
            })
        };
        let mut out = HashMap::new();
        for run in runs {
            for o in run.start.0..run.start.0 + run.sectors.0 {
                let mut p = match run.method {
                    ParityMethod::ReadModifyWrite => old(parity, o)?,
                    ParityMethod::ReconstructWrite => 0,
                };
                for d in 0..layout.members() - 1 {
                    let member = layout.data_member(stripe, d);
                    if layout.unit(stripe, member).used.0 <= o {
                        continue;
                    }
                    let new_byte = self.new_byte(stripe, start, new, member, o);
                    p ^= match (run.method, new_byte) {
                        (ParityMethod::ReadModifyWrite, Some(b)) => old(member, o)? ^ b,
                        (ParityMethod::ReadModifyWrite, None) => 0,
                        (ParityMethod::ReconstructWrite, Some(b)) => b,
                        (ParityMethod::ReconstructWrite, None) => old(member, o)?,
                    };
                }
                if out.insert(o, p).is_some() {
                    return Err(format!("parity offset {o} in two runs"));
                }
            }
        }
        Ok(out)
    }

    fn apply_writes(
        &mut self,
        stripe: u64,
        start: u64,
        new: &[u8],
        plan: &spinstack_volume::map::plan::WritePlan,
        new_parity: &HashMap<u64, u8>,
    ) -> Result<(), String> {
        let parity = self.layout.parity_member(stripe);
        let parity_start = self.layout.unit(stripe, parity).start.0;
        let (mut data_written, mut parity_written) = (0u64, 0u64);
        for write in &plan.writes {
            if Some(write.member) == self.failed {
                return Err(format!("plan writes the failed {}", write.member));
            }
            for l in write.lbn.0..write.end().0 {
                let unit_start = self.layout.unit(stripe, write.member).start.0;
                let byte = if write.member == parity {
                    parity_written += 1;
                    *new_parity
                        .get(&(l - parity_start))
                        .ok_or("parity write without a run")?
                } else {
                    data_written += 1;
                    self.new_byte(stripe, start, new, write.member, l - unit_start)
                        .ok_or_else(|| format!("data write {write:?} outside the request"))?
                };
                self.members[write.member.index()][l as usize] = byte;
            }
        }
        let live_new: u64 = (0..new.len() as u64)
            .filter(|&i| {
                let volume = Lbn(self.layout.stripe_start(stripe).0 + start + i);
                Some(self.layout.locate(volume).unwrap().0) != self.failed
            })
            .count() as u64;
        if data_written != live_new || parity_written != new_parity.len() as u64 {
            return Err(format!(
                "wrote {data_written} data (want {live_new}) and {parity_written} parity (want {})",
                new_parity.len()
            ));
        }
        Ok(())
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
