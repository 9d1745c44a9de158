//! md left-symmetric RAID-5: a hand-written placement table, the parity-layout
//! contract on random geometries, splits, and the "largest track" constructor.

use crate::common::{check_parity_layout, check_pieces, member_sizes, raid5_case, sectors};
use proptest::prelude::*;
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_volume::map::{MemberIndex, ParityLayout, Raid5Map, Role};

/// Parity in the table below.
const P: i64 = -1;

/// md left-symmetric on 4 members, written out by hand from md's definition (parity
/// on member 3 - s % 4, data following it cyclically): the volume chunk each member
/// holds in each of the first 8 stripes.
const LEFT_SYMMETRIC_4: [[i64; 4]; 8] = [
    [0, 1, 2, P],
    [4, 5, P, 3],
    [8, P, 6, 7],
    [P, 9, 10, 11],
    [12, 13, 14, P],
    [16, 17, P, 15],
    [20, P, 18, 19],
    [P, 21, 22, 23],
];

// Proves the 4-member left-symmetric placement of the first 8 stripes matches the
// hand-written table, sector by sector within 3-sector chunks, both ways.
#[test]
fn four_members_match_hand_table() {
    let chunk = 3;
    let map = Raid5Map::new(4, Sectors(chunk), Sectors(8 * chunk)).unwrap();
    for (stripe, row) in LEFT_SYMMETRIC_4.iter().enumerate() {
        let stripe = stripe as u64;
        for (m, &cell) in row.iter().enumerate() {
            let member = MemberIndex(m as u32);
            for i in 0..chunk {
                let member_lbn = Lbn(stripe * chunk + i);
                let role = map.inverse(member, member_lbn);
                if cell == P {
                    assert_eq!(map.parity_member(stripe), member);
                    assert_eq!(
                        role,
                        Role::Parity {
                            stripe,
                            offset: Sectors(i)
                        }
                    );
                } else {
                    let volume = Lbn(cell as u64 * chunk + i);
                    assert_eq!(role, Role::Data(volume), "stripe {stripe} {member}");
                    assert_eq!(map.locate(volume).unwrap(), (member, member_lbn));
                }
            }
        }
    }
}

proptest! {
    // Proves the full parity-layout contract (units, roles, locate/inverse round trip,
    // capacity accounting) for random md RAID-5 geometries.
    #[test]
    fn contract_holds(case in raid5_case()) {
        let layout = case.build();
        check_parity_layout(&*layout, &member_sizes(&case));
    }

    // Proves inverse(locate(x)) == x on larger random geometries than the exhaustive
    // check reaches.
    #[test]
    fn locate_then_inverse_is_identity(
        members in 3u32..=16,
        chunk in 1u64..=1024,
        rows in 1u64..=10_000,
        picks in prop::collection::vec(any::<u64>(), 1..20),
    ) {
        let map = Raid5Map::new(members, Sectors(chunk), Sectors(rows * chunk)).unwrap();
        for pick in picks {
            let lbn = Lbn(pick % map.capacity().0);
            let (member, member_lbn) = map.locate(lbn).unwrap();
            prop_assert_eq!(map.inverse(member, member_lbn), Role::Data(lbn));
        }
    }

    // Proves the data split tiles any request, follows locate, and merges runs.
    #[test]
    fn split_tiles_request(case in raid5_case(), a in any::<u64>(), b in any::<u64>()) {
        let layout = case.build();
        let lbn = Lbn(a % layout.capacity().0);
        let sectors = Sectors(b % (layout.capacity().0 - lbn.0 + 1));
        let mut pieces = Vec::new();
        layout.split_into(lbn, sectors, &mut pieces).unwrap();
        check_pieces(&pieces, lbn, sectors, |x| layout.locate(x).unwrap());
    }
}

// Proves the paper's rejected "chunk = the largest track" is a plain RAID-5 whose
// units straddle track boundaries of members with smaller tracks.
#[test]
fn largest_track_chunk_straddles_tracks() {
    let tracks = vec![
        sectors(&[5, 7, 5]),
        sectors(&[6, 6, 6]),
        sectors(&[7, 5, 7]),
    ];
    let map = Raid5Map::with_largest_track_chunk(&tracks).unwrap();
    assert_eq!(map.chunk(), Sectors(7));
    assert_eq!(map.member_capacity(), Sectors(17));
    assert_eq!(map.stripes(), 2);
    // Member 0's stripe-0 unit is LBNs 0..7, but its first track ends at LBN 5.
    let unit = map.unit(0, MemberIndex(0));
    assert_eq!((unit.start, unit.used), (Lbn(0), Sectors(7)));
    assert!(unit.start.0 < 5 && unit.start.0 + unit.used.0 > 5);
}
