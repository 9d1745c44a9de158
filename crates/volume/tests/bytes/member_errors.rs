//! Member read and trim errors that are not a failed device (`ErringStore`): a read
//! error is corrected from the redundancy (rebuilt, written back, read back) with the
//! member kept, or fails the member when the rewrite fails, or is passed up unchanged
//! when nothing can supply the sectors; a trim error fails the member like a write
//! error. Never wrong data, never a panic.

use crate::common::{erring, Faults, Injected, Rng, SECTOR};
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_store::{BlockStore, StoreError};
use spinstack_volume::bytes::{ArrayState, Raid1Volume, Raid5Volume};
use spinstack_volume::map::{MemberIndex, ParityLayout, Raid5Map};
use std::rc::Rc;

const MEMBERS: usize = 4;
const CHUNK: u64 = 8;
const MEMBER_SECTORS: u64 = 128;

type Raid5 = Raid5Volume<crate::common::ErringStore, Raid5Map>;

/// A RAID-5 of erring members holding random data; returns it, the fault handles and
/// the data.
fn raid5() -> (Raid5, Vec<Rc<Faults>>, Vec<u8>) {
    let (stores, faults) = erring(MEMBERS, MEMBER_SECTORS);
    let mut volume = Raid5Volume::new(Sectors(CHUNK), stores).unwrap();
    let data = Rng::new(11).bytes(volume.capacity().0 as usize * SECTOR);
    volume.write(Lbn(0), &data).unwrap();
    (volume, faults, data)
}

/// Makes `sectors` sectors of the member holding volume `lbn` unreadable; returns the
/// member.
fn unreadable_at(volume: &Raid5, faults: &[Rc<Faults>], lbn: u64, sectors: u64) -> MemberIndex {
    let (member, at) = volume.layout().locate(Lbn(lbn)).unwrap();
    faults[member.index()]
        .unreadable
        .borrow_mut()
        .extend(at.0..at.0 + sectors);
    member
}

/// Asserts that only `member` counts corrected sectors, within `expected` (a
/// correction rewrites the whole extent the failed read asked for, inside one unit).
fn assert_corrected_only(
    corrected: &[u64],
    member: MemberIndex,
    expected: std::ops::RangeInclusive<u64>,
) {
    for (index, &sectors) in corrected.iter().enumerate() {
        match index == member.index() {
            true => assert!(expected.contains(&sectors), "{corrected:?}"),
            false => assert_eq!(sectors, 0, "{corrected:?}"),
        }
    }
}

fn read_all<S: BlockStore>(volume: &mut S) -> Result<Vec<u8>, StoreError> {
    let mut buf = vec![0u8; volume.capacity().0 as usize * SECTOR];
    volume.read(Lbn(0), &mut buf).map(|()| buf)
}

// Proves a RAID-5 read error is corrected from the rest of the stripe: the read
// returns the data, the member stays in service, its sectors were rewritten (readable
// again), and with rewritten bytes that are right (a degraded read without another
// member, which must use them, agrees). (Before, the read failed: defect "a member
// read error fails the whole request instead of reconstructing".)
#[test]
fn raid5_read_error_is_corrected_from_the_stripe() {
    let (mut volume, faults, data) = raid5();
    let member = unreadable_at(&volume, &faults, 13, 2);
    assert!(read_all(&mut volume).unwrap() == data);
    assert_eq!(volume.status().state, ArrayState::Healthy);
    assert!(faults[member.index()].unreadable.borrow().is_empty());
    assert_corrected_only(&volume.status().corrected_read_sectors, member, 2..=CHUNK);
    let other = MemberIndex((member.0 + 1) % MEMBERS as u32);
    volume.fail_member(other).unwrap();
    assert!(
        read_all(&mut volume).unwrap() == data,
        "the rewrite is right"
    );
}

// Proves a read error in a write's plan is corrected the same way: a reconstruct-write
// of two of a stripe's three chunks reads the third, which is unreadable; the write
// succeeds, that chunk was rewritten, and the stripe stays consistent. A read error in
// a scrub is corrected too, and the scrub finds nothing. (Before, both failed: the
// same defect.)
#[test]
fn raid5_write_and_scrub_correct_read_errors() {
    let (mut volume, faults, mut data) = raid5();
    let start = volume.layout().stripe_start(2).0;
    let untouched = unreadable_at(&volume, &faults, start + 2 * CHUNK, CHUNK);
    let new = Rng::new(12).bytes(2 * CHUNK as usize * SECTOR);
    volume.write(Lbn(start), &new).unwrap();
    data[start as usize * SECTOR..][..new.len()].copy_from_slice(&new);
    assert_eq!(volume.status().state, ArrayState::Healthy);
    assert!(faults[untouched.index()].unreadable.borrow().is_empty());
    let before = volume.status().corrected_read_sectors;
    assert_eq!(before.iter().sum::<u64>(), CHUNK, "the write's correction");
    let member = unreadable_at(&volume, &faults, 40, 3);
    let report = volume.scrub(false).unwrap();
    assert_eq!(report.mismatch_count, 0, "{report:?}");
    assert_eq!(report.stripes_checked, volume.layout().stripes());
    assert!(faults[member.index()].unreadable.borrow().is_empty());
    let after = volume.status().corrected_read_sectors;
    assert!(
        (3..=CHUNK).contains(&report.corrected_read_sectors),
        "{report:?}"
    );
    assert_eq!(
        after[member.index()] - before[member.index()],
        report.corrected_read_sectors
    );
    assert!(read_all(&mut volume).unwrap() == data);
}

// Proves a read error whose rewrite fails fails the member, and the read still
// returns the data (degraded).
#[test]
fn raid5_read_error_that_cannot_be_rewritten_fails_the_member() {
    let (mut volume, faults, data) = raid5();
    let member = unreadable_at(&volume, &faults, 30, 1);
    faults[member.index()].writes_fail.set(true);
    assert!(read_all(&mut volume).unwrap() == data);
    assert_eq!(volume.status().failed, vec![member]);
    assert_eq!(
        volume.status().corrected_read_sectors,
        vec![0; MEMBERS],
        "a failed rewrite corrected nothing"
    );
}

// Proves a read error the redundancy cannot cover (another member already out) is
// passed up unchanged: that read fails with the I/O error, the array stays degraded
// (not failed), and reads elsewhere still work.
#[test]
fn raid5_read_error_on_a_degraded_array_is_passed_up() {
    let (mut volume, faults, data) = raid5();
    let member = unreadable_at(&volume, &faults, 30, 1);
    let out = MemberIndex((member.0 + 1) % MEMBERS as u32);
    volume.fail_member(out).unwrap();
    let mut sector = vec![0u8; SECTOR];
    let result = volume.read(Lbn(30), &mut sector);
    assert!(matches!(result, Err(StoreError::IoAt { .. })), "{result:?}");
    assert_eq!(volume.status().failed, vec![out]);
    assert!(!matches!(volume.status().state, ArrayState::Failed { .. }));
    volume.read(Lbn(60), &mut sector).unwrap();
    assert!(sector[..] == data[60 * SECTOR..61 * SECTOR]);
}

// Proves a member trim error fails the member like a write error, and the trim
// completes: the range reads as zeros, the rest as before. (Before, the error was
// passed up with the member kept: the same defect as a write error.)
#[test]
fn raid5_trim_error_fails_the_member() {
    let (mut volume, faults, mut data) = raid5();
    let stripe_sectors = volume.layout().stripe_data_sectors(0).0;
    let member = MemberIndex(2);
    faults[member.index()].writes_fail.set(true);
    volume.trim(Lbn(0), Sectors(2 * stripe_sectors)).unwrap();
    assert_eq!(volume.status().failed, vec![member]);
    data[..(2 * stripe_sectors) as usize * SECTOR].fill(0);
    assert!(read_all(&mut volume).unwrap() == data);
}

/// A 2-way RAID-1 of erring members holding random data.
fn mirror() -> (
    Raid1Volume<crate::common::ErringStore>,
    Vec<Rc<Faults>>,
    Vec<u8>,
) {
    let (stores, faults) = erring(2, MEMBER_SECTORS);
    let mut volume = Raid1Volume::new(stores).unwrap();
    let data = Rng::new(13).bytes(volume.capacity().0 as usize * SECTOR);
    volume.write(Lbn(0), &data).unwrap();
    (volume, faults, data)
}

// Proves a mirror read error is corrected from the other copy: the read returns the
// data, the member stays, its sectors were rewritten right (reading it alone agrees).
// (Before, the read failed: defect "a member read error fails the whole request".)
#[test]
fn mirror_read_error_is_corrected_from_another_copy() {
    let (mut volume, faults, data) = mirror();
    faults[0].unreadable.borrow_mut().extend(20..25);
    assert!(read_all(&mut volume).unwrap() == data);
    assert_eq!(volume.status().state, ArrayState::Healthy);
    assert!(faults[0].unreadable.borrow().is_empty());
    let corrected = volume.status().corrected_read_sectors;
    assert_corrected_only(&corrected, MemberIndex(0), 5..=MEMBER_SECTORS);
    volume.fail_member(MemberIndex(1)).unwrap();
    assert!(
        read_all(&mut volume).unwrap() == data,
        "the rewrite is right"
    );
}

// Proves a mirror read error whose rewrite fails fails the member, the read still
// returning the data; and a read error with no other copy left is passed up, the
// array degraded, not failed.
#[test]
fn mirror_read_error_fails_the_member_or_is_passed_up() {
    let (mut volume, faults, data) = mirror();
    faults[0].unreadable.borrow_mut().insert(7);
    faults[0].writes_fail.set(true);
    assert!(read_all(&mut volume).unwrap() == data);
    assert_eq!(volume.status().failed, vec![MemberIndex(0)]);
    faults[1].unreadable.borrow_mut().insert(9);
    let mut sector = vec![0u8; SECTOR];
    let result = volume.read(Lbn(9), &mut sector);
    assert!(matches!(result, Err(StoreError::IoAt { .. })), "{result:?}");
    assert_eq!(volume.status().failed, vec![MemberIndex(0)]);
    volume.read(Lbn(10), &mut sector).unwrap();
    assert!(sector[..] == data[10 * SECTOR..11 * SECTOR]);
}

// Proves a mirror scrub corrects a read error on any copy (the second one from the
// first), finding no mismatch.
#[test]
fn mirror_scrub_corrects_a_read_error() {
    let (mut volume, faults, data) = mirror();
    faults[1].unreadable.borrow_mut().extend(3..6);
    let report = volume.scrub(false).unwrap();
    assert_eq!(report.mismatch_count, 0, "{report:?}");
    assert!(faults[1].unreadable.borrow().is_empty());
    let corrected = volume.status().corrected_read_sectors;
    assert_corrected_only(&corrected, MemberIndex(1), 3..=MEMBER_SECTORS);
    assert_eq!(report.corrected_read_sectors, corrected[1]);
    volume.fail_member(MemberIndex(0)).unwrap();
    assert!(read_all(&mut volume).unwrap() == data);
}

// Proves a member whose flush returns an I/O error is failed and the flush completes
// degraded, for RAID-5 and mirrors, every read still returning what was written: a
// member whose flush failed may have lost writes it had accepted, so keeping it would
// let it serve them stale. (Before, the error was passed up and the member kept:
// noticed in the review of the member-error change, 2026-11-28.)
#[test]
fn a_member_flush_error_fails_the_member_and_the_flush_completes() {
    let (mut volume, faults, data) = raid5();
    faults[1].next_flush.set(Some(Injected::Io));
    volume.flush().unwrap();
    assert_eq!(volume.status().failed, vec![MemberIndex(1)]);
    assert!(read_all(&mut volume).unwrap() == data);

    let (mut volume, faults, data) = mirror();
    faults[0].next_flush.set(Some(Injected::Io));
    volume.flush().unwrap();
    assert_eq!(volume.status().failed, vec![MemberIndex(0)]);
    assert!(read_all(&mut volume).unwrap() == data);
}

// Proves the count of corrected read errors belongs to the device: replacing a
// member's store (a rebuild onto a fresh one) starts it at zero, the other members'
// counts kept.
#[test]
fn a_replaced_member_starts_with_no_corrected_read_errors() {
    let (mut volume, faults, _) = raid5();
    let member = unreadable_at(&volume, &faults, 13, 2);
    let other = MemberIndex((member.0 + 1) % MEMBERS as u32);
    // In another stripe: two unreadable units in one stripe cannot be corrected.
    let later_stripe = volume.layout().stripe_start(3).0;
    let other_lbn = (later_stripe..volume.capacity().0)
        .find(|&lbn| volume.layout().locate(Lbn(lbn)).unwrap().0 == other)
        .unwrap();
    unreadable_at(&volume, &faults, other_lbn, 1);
    read_all(&mut volume).unwrap();
    let before = volume.status().corrected_read_sectors;
    assert!(
        before[member.index()] > 0 && before[other.index()] > 0,
        "{before:?}"
    );
    volume.fail_member(member).unwrap();
    let (fresh, _) = erring(1, MEMBER_SECTORS);
    let fresh = fresh.into_iter().next().unwrap();
    volume.replace_member(member, fresh).unwrap();
    let after = volume.status().corrected_read_sectors;
    assert_eq!(after[member.index()], 0, "{after:?}");
    assert_eq!(after[other.index()], before[other.index()], "{after:?}");
}
