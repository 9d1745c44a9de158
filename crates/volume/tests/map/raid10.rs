//! RAID-10 near layout: an independent placement reference, md's near-2-on-3
//! example, round trips and per-copy splits.

use crate::common::check_pieces;
use proptest::prelude::*;
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_volume::map::{MemberIndex, Raid10Map};
use std::collections::HashMap;

fn geometry() -> impl Strategy<Value = (u32, u32, u64, u64)> {
    (2u32..=7, 2u32..=7, 1u64..=6, 1u64..=12, 0u64..6).prop_map(
        |(members, copies, chunk, rows, tail)| {
            (
                members,
                copies.min(members),
                chunk,
                rows * chunk + tail % chunk,
            )
        },
    )
}

/// md's near placement written as a walk: deal each chunk's copies to consecutive
/// members, wrapping to the next row after the last member; stop when a chunk's
/// copies no longer all fit. Maps (member, member LBN) to (volume LBN, copy).
fn reference(members: u32, copies: u32, chunk: u64, cap: u64) -> HashMap<(u32, u64), (u64, u32)> {
    let rows = cap / chunk;
    let mut placed = HashMap::new();
    let (mut member, mut row) = (0u32, 0u64);
    for k in 0.. {
        let last_slot_row = row + u64::from((member + copies - 1) / members);
        if last_slot_row >= rows {
            break;
        }
        for copy in 0..copies {
            for i in 0..chunk {
                placed.insert((member, row * chunk + i), (k * chunk + i, copy));
            }
            member += 1;
            if member == members {
                member = 0;
                row += 1;
            }
        }
    }
    placed
}

proptest! {
    // Proves the near layout equals the walk reference on every member sector of
    // random small geometries (members need not be a multiple of copies), so every
    // member sector has at most one role.
    #[test]
    fn placement_matches_walk_reference((members, copies, chunk, cap) in geometry()) {
        let map = Raid10Map::with_copies(members, copies, Sectors(chunk), Sectors(cap)).unwrap();
        let reference = reference(members, copies, chunk, cap);
        prop_assert_eq!(map.capacity().0 * u64::from(copies), reference.len() as u64);
        for m in 0..members {
            for l in 0..cap {
                let expect = reference.get(&(m, l)).map(|&(v, c)| (Lbn(v), c));
                let got = map.inverse(MemberIndex(m), Lbn(l));
                prop_assert_eq!(got, expect, "member {} LBN {}", m, l);
            }
        }
    }

    // Proves locate gives `copies` replicas on distinct members and inverse sends each
    // back to the LBN with its copy number.
    #[test]
    fn locate_then_inverse_is_identity(
        (members, copies, chunk, cap) in geometry(),
        picks in prop::collection::vec(any::<u64>(), 1..20),
    ) {
        let map = Raid10Map::with_copies(members, copies, Sectors(chunk), Sectors(cap)).unwrap();
        for pick in picks {
            let lbn = Lbn(pick % map.capacity().0);
            let replicas: Vec<_> = map.locate(lbn).unwrap().collect();
            prop_assert_eq!(replicas.len(), copies as usize);
            for (c, r) in replicas.iter().enumerate() {
                prop_assert_eq!(r.copy, c as u32);
                let distinct = replicas[..c].iter().all(|o| o.member != r.member);
                prop_assert!(distinct, "two copies on {}", r.member);
                prop_assert_eq!(map.inverse(r.member, r.lbn), Some((lbn, r.copy)));
            }
        }
    }

    // Proves split_copy_into tiles the request and follows locate's copy `copy`
    // sector by sector, one piece per contiguous member run.
    #[test]
    fn split_copy_tiles_request(
        (members, copies, chunk, cap) in geometry(),
        a in any::<u64>(),
        b in any::<u64>(),
        copy in 0u32..7,
    ) {
        let map = Raid10Map::with_copies(members, copies, Sectors(chunk), Sectors(cap)).unwrap();
        let copy = copy % copies;
        let lbn = Lbn(a % map.capacity().0);
        let sectors = Sectors(b % (map.capacity().0 - lbn.0 + 1));
        let mut pieces = Vec::new();
        map.split_copy_into(lbn, sectors, copy, &mut pieces).unwrap();
        check_pieces(&pieces, lbn, sectors, |x| {
            let r = map.locate(x).unwrap().nth(copy as usize).unwrap();
            (r.member, r.lbn)
        });
    }
}

// Proves md's near-2 on 3 members by hand: chunk 0 on members 0 and 1 (row 0), chunk
// 1 on member 2 (row 0) and member 0 (row 1), chunk 2 on members 1 and 2 (row 1).
#[test]
fn near_two_on_three_members_by_hand() {
    let map = Raid10Map::new(3, Sectors(4), Sectors(8)).unwrap();
    assert_eq!(map.copies(), 2);
    assert_eq!(map.capacity(), Sectors(12));
    let place = |lbn| {
        map.locate(Lbn(lbn))
            .unwrap()
            .map(|r| (r.member.0, r.lbn.0))
            .collect::<Vec<_>>()
    };
    assert_eq!(place(1), [(0, 1), (1, 1)]);
    assert_eq!(place(5), [(2, 1), (0, 5)]);
    assert_eq!(place(10), [(1, 6), (2, 6)]);
}

// Proves the slots left over in the last row (5 members, 2 copies, 1 row: 5 slots
// hold 2 chunks) are unused rather than half a chunk's copies.
#[test]
fn leftover_slot_is_unused() {
    let map = Raid10Map::new(5, Sectors(2), Sectors(2)).unwrap();
    assert_eq!(map.capacity(), Sectors(4));
    assert_eq!(map.inverse(MemberIndex(3), Lbn(0)), Some((Lbn(2), 1)));
    assert_eq!(map.inverse(MemberIndex(4), Lbn(0)), None);
}

// Proves copies == members degenerates to a mirror: each copy is one whole member,
// so a copy's split is a single piece at the volume LBN.
#[test]
fn all_copies_is_a_mirror() {
    let map = Raid10Map::with_copies(3, 3, Sectors(4), Sectors(40)).unwrap();
    let mut pieces = Vec::new();
    map.split_copy_into(Lbn(3), Sectors(30), 2, &mut pieces)
        .unwrap();
    assert_eq!(pieces.len(), 1);
    assert_eq!(
        (pieces[0].extent.member, pieces[0].extent.lbn),
        (MemberIndex(2), Lbn(3))
    );
}
