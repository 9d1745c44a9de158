//! A member may not be larger than the drive that models it: the timed model and
//! the track maps know only the drive's LBNs.

mod common;

use common::{spec, temp_dir};
use spinstack_array::{Array, Level};
use spinstack_sim::units::Sectors;

/// The capacity of a catalog drive's model, in sectors.
fn capacity_of(name: &str) -> u64 {
    let drive = spinstack_disk::catalog::get(name).expect("catalog drive");
    spinstack_disk::layout::Layout::new(&drive.layout)
        .expect("catalog layout")
        .capacity()
        .0
}

// Guards inputs finding 24: `--member-size 100GiB --disk atlas10k` was accepted
// although the modelled drive holds 9.2 GB. Proves a member one sector larger than
// its drive is refused before any file is made, naming the member, the drive and
// both sizes; each member is held to its own drive; with none named, only a
// track-aligned RAID-5 is held to the default drive; a member exactly the drive's
// size is accepted.
#[test]
fn a_member_larger_than_its_drive_is_refused() {
    let atlas = capacity_of("atlas10k");
    let mut one = spec(Level::Single, 1, atlas + 1);
    one.disks = vec!["atlas10k".into()];
    let dir = temp_dir("member-too-large");
    let message = Array::create(&dir, &one)
        .err()
        .expect("a member past the drive must be refused")
        .to_string();
    for part in [
        "member 0",
        "\"atlas10k\"",
        &format!("{} sectors", atlas + 1),
        &format!("holds {atlas} sectors"),
    ] {
        assert!(message.contains(part), "{part:?} missing from: {message}");
    }
    assert!(
        std::fs::read_dir(&dir).unwrap().next().is_none(),
        "a refused create leaves no files"
    );

    // Each member against its own drive: member 1's drive is the smaller one.
    let small = ["atlas10k", "ibm18es"]
        .into_iter()
        .min_by_key(|name| capacity_of(name))
        .unwrap();
    let large = if small == "atlas10k" {
        "ibm18es"
    } else {
        "atlas10k"
    };
    let between = capacity_of(small) + 1;
    assert!(between <= capacity_of(large));
    let mut mirror = spec(Level::Raid1, 2, between);
    mirror.disks = vec![large.into(), small.into()];
    let message = Array::create(&temp_dir("member-too-large-mixed"), &mirror)
        .err()
        .expect("member 1 is larger than its drive")
        .to_string();
    assert!(
        message.contains("member 1") && message.contains(&format!("{small:?}")),
        "{message}"
    );

    // No drive named: the default drive models the volume only when asked
    // (`serve --timing model` refuses it then), so a large volume for real data is
    // made; a track-aligned RAID-5, whose units are the default drive's tracks, is
    // still held to it.
    let past_default = capacity_of(spinstack_array::DEFAULT_DISK) + 1;
    let dir = temp_dir("member-large-no-drive");
    Array::create(&dir, &spec(Level::Single, 1, past_default))
        .expect("no drive named: the size is the user's")
        .close()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let aligned = spec(Level::Raid5TrackAligned, 3, past_default);
    let message = Array::create(&temp_dir("member-too-large-default"), &aligned)
        .err()
        .expect("larger than the default drive's tracks")
        .to_string();
    assert!(message.contains("default drive"), "{message}");

    // Exactly the drive's capacity fits (the member file is sparse).
    let mut exact = spec(Level::Single, 1, atlas);
    exact.disks = vec!["atlas10k".into()];
    let dir = temp_dir("member-exact");
    let array = Array::create(&dir, &exact).expect("a member of the drive's size");
    assert_eq!(array.capacity(), Sectors(atlas));
    array.close().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
