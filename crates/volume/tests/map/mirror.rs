//! RAID-1 map: every copy of every LBN, round trips and splits.

use crate::common::check_pieces;
use proptest::prelude::*;
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_volume::map::{MemberIndex, MirrorMap};

proptest! {
    // Proves locate lists one replica per member, copy c on member c, each at the
    // volume LBN, and that inverse sends every replica back.
    #[test]
    fn every_member_holds_every_lbn(
        members in 2u32..=6,
        cap in 1u64..10_000,
        pick in any::<u64>(),
    ) {
        let map = MirrorMap::new(members, Sectors(cap)).unwrap();
        prop_assert_eq!(map.copies(), members);
        let lbn = Lbn(pick % cap);
        let replicas: Vec<_> = map.locate(lbn).unwrap().collect();
        prop_assert_eq!(replicas.len(), members as usize);
        for (c, replica) in replicas.iter().enumerate() {
            prop_assert_eq!(replica.copy, c as u32);
            prop_assert_eq!(replica.member, MemberIndex(c as u32));
            prop_assert_eq!(replica.lbn, lbn);
            prop_assert_eq!(map.inverse(replica.member, replica.lbn), Some(lbn));
        }
        prop_assert_eq!(map.inverse(MemberIndex(0), Lbn(cap)), None);
    }

    // Proves split_copy_into gives one piece tiling the request on the chosen copy.
    #[test]
    fn split_copy_is_one_piece(
        members in 2u32..=6,
        cap in 1u64..10_000,
        a in any::<u64>(),
        b in any::<u64>(),
        copy in 0u32..6,
    ) {
        let map = MirrorMap::new(members, Sectors(cap)).unwrap();
        let copy = copy % members;
        let lbn = Lbn(a % cap);
        let sectors = Sectors(b % (cap - lbn.0 + 1));
        let mut pieces = Vec::new();
        map.split_copy_into(lbn, sectors, copy, &mut pieces).unwrap();
        prop_assert!(pieces.len() <= 1);
        check_pieces(&pieces, lbn, sectors, |x| (MemberIndex(copy), x));
    }
}
