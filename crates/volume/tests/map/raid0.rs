//! RAID-0 map: round trips, splits and an independent placement reference.

use crate::common::check_pieces;
use proptest::prelude::*;
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_volume::map::{MemberIndex, Raid0Map};
use std::collections::HashMap;

fn geometry() -> impl Strategy<Value = (u32, u64, u64)> {
    (2u32..=8, 1u64..=64, 1u64..=40, 0u64..64)
        .prop_map(|(members, chunk, rows, tail)| (members, chunk, rows * chunk + tail % chunk))
}

proptest! {
    // Proves inverse(locate(x)) == x for random LBNs of random geometries, and that
    // locate stays inside the used part of a real member.
    #[test]
    fn locate_then_inverse_is_identity(
        (members, chunk, cap) in geometry(),
        picks in prop::collection::vec(any::<u64>(), 1..20),
    ) {
        let map = Raid0Map::new(members, Sectors(chunk), Sectors(cap)).unwrap();
        for pick in picks {
            let lbn = Lbn(pick % map.capacity().0);
            let (member, member_lbn) = map.locate(lbn).unwrap();
            prop_assert!(member.0 < members && member_lbn.0 < map.member_used().0);
            prop_assert_eq!(map.inverse(member, member_lbn), Some(lbn));
        }
    }

    // Proves split_into tiles any request exactly, agrees with locate sector by
    // sector, and yields one piece per contiguous member run.
    #[test]
    fn split_tiles_request_and_matches_locate(
        (members, chunk, cap) in geometry(),
        a in any::<u64>(),
        b in any::<u64>(),
    ) {
        let map = Raid0Map::new(members, Sectors(chunk), Sectors(cap)).unwrap();
        let lbn = Lbn(a % map.capacity().0);
        let sectors = Sectors(b % (map.capacity().0 - lbn.0 + 1));
        let mut pieces = Vec::new();
        map.split_into(lbn, sectors, &mut pieces).unwrap();
        check_pieces(&pieces, lbn, sectors, |x| map.locate(x).unwrap());
    }

    // Proves every member sector has at most one role and the map equals a reference
    // that deals chunks to members one after another with a cursor.
    #[test]
    fn placement_matches_cursor_reference(
        (members, chunk, cap) in (2u32..=5, 1u64..=4, 1u64..=20),
    ) {
        prop_assume!(cap >= chunk);
        let map = Raid0Map::new(members, Sectors(chunk), Sectors(cap)).unwrap();
        let mut reference = HashMap::new();
        let (mut member, mut row) = (0u32, 0u64);
        for k in 0..(cap / chunk) * u64::from(members) {
            for i in 0..chunk {
                reference.insert((member, row * chunk + i), k * chunk + i);
            }
            member += 1;
            if member == members {
                member = 0;
                row += 1;
            }
        }
        let mut seen = vec![false; map.capacity().0 as usize];
        for m in 0..members {
            for l in 0..cap {
                let got = map.inverse(MemberIndex(m), Lbn(l));
                let expect = reference.get(&(m, l)).map(|&v| Lbn(v));
                prop_assert_eq!(got, expect, "member {} LBN {}", m, l);
                if let Some(v) = got {
                    prop_assert!(!seen[v.0 as usize], "volume {} stored twice", v.0);
                    seen[v.0 as usize] = true;
                }
            }
        }
        prop_assert!(seen.iter().all(|&s| s), "some volume LBN has no home");
    }
}

// Proves split_into reuses the caller's vector: a second, smaller split neither
// reallocates nor keeps stale pieces.
#[test]
fn split_reuses_the_output_vector() {
    let map = Raid0Map::new(4, Sectors(8), Sectors(1000)).unwrap();
    let mut pieces = Vec::with_capacity(64);
    map.split_into(Lbn(3), Sectors(100), &mut pieces).unwrap();
    let (capacity, pointer) = (pieces.capacity(), pieces.as_ptr());
    map.split_into(Lbn(5), Sectors(2), &mut pieces).unwrap();
    assert_eq!((pieces.capacity(), pieces.as_ptr()), (capacity, pointer));
    assert_eq!(pieces.len(), 1);
    assert_eq!(pieces[0].extent.lbn, Lbn(5));
}

// Proves the member tail beyond the last whole chunk row is unused and excluded from
// the capacity.
#[test]
fn member_tail_is_unused() {
    let map = Raid0Map::new(3, Sectors(8), Sectors(20)).unwrap();
    assert_eq!(map.capacity(), Sectors(48));
    assert_eq!(map.inverse(MemberIndex(0), Lbn(15)), Some(Lbn(31)));
    assert_eq!(map.inverse(MemberIndex(0), Lbn(16)), None);
    assert_eq!(map.inverse(MemberIndex(3), Lbn(0)), None);
}
