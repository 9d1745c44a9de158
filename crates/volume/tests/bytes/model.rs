//! Model-based tests: every level against a flat `MemoryStore` reference.
//!
//! Each run does random reads, writes, flushes and trims (sizes 1..=2 stripes, any
//! alignment) and compares every read byte for byte with the reference. Redundant
//! levels also lose a random member at a random point, carry on degraded, get a
//! replacement (full of garbage) later and rebuild it in small steps interleaved with
//! the operations, still comparing; a scrub right after the rebuild and another at the
//! end (after the whole volume is compared) must find no mismatch. `VOLUME_MODEL_OPS` sets the
//! operations per level (default 10,000), `VOLUME_MODEL_SEED` the seed.

use crate::common::{env_u64, member_sectors, memories, memory, Array, Rng, SECTOR};
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_store::{BlockStore, MemoryStore};
use spinstack_volume::bytes::{
    ArrayState, DabConfig, DmaAlignedBuffer, Raid0Volume, Raid10Volume, Raid1Volume, Raid5Volume,
    WritePolicy,
};
use spinstack_volume::map::{ParityLayout, Raid5Map, TrackAlignedLayout, UnitPolicy};

const DEFAULT_OPS: u64 = 10_000;

/// Ops per level and the seed for level `salt`.
fn run_params(salt: u64) -> (u64, u64) {
    let ops = env_u64("VOLUME_MODEL_OPS", DEFAULT_OPS);
    let seed = env_u64("VOLUME_MODEL_SEED", 0x5EED_0000) ^ salt;
    (ops, seed)
}

/// When the member failure, the replacement and the failed member happen.
struct FailurePlan {
    fail_at: u64,
    replace_at: u64,
    member: u32,
}

/// Runs the model test on `array` (see the module docs); panics with the seed on a
/// mismatch.
fn run_model(name: &str, array: &mut dyn Array, stripe_sectors: u64, salt: u64) {
    let (ops, seed) = run_params(salt);
    let mut rng = Rng::new(seed);
    let capacity = array.capacity().0;
    let mut reference = memory(capacity);
    let failure = array.redundant().then(|| {
        let fail_at = rng.below(ops / 2 + 1);
        FailurePlan {
            fail_at,
            replace_at: fail_at + rng.range(1, ops / 4 + 1),
            member: rng.below(u64::from(array.members())) as u32,
        }
    });
    let max_sectors = (2 * stripe_sectors).min(capacity);
    let mut buf = vec![0u8; max_sectors as usize * SECTOR];
    let mut expected = vec![0u8; buf.len()];
    let context = |op: u64| format!("{name}: seed {seed:#x} (VOLUME_MODEL_SEED={seed}), op {op}");
    for op in 0..ops {
        if let Some(plan) = &failure {
            if op == plan.fail_at {
                array.fail(plan.member);
                assert!(
                    matches!(array.status().state, ArrayState::Degraded { .. }),
                    "{}",
                    context(op)
                );
            }
            if op == plan.replace_at {
                array.replace(plan.member, &mut rng);
            }
        }
        // One unit every ~12 operations: the rebuild spans hundreds of operations.
        if matches!(array.status().state, ArrayState::Rebuilding { .. }) && rng.below(12) == 0 {
            array.rebuild(1);
            // Right after the rebuild, before later writes overwrite what it missed.
            if array.status().state == ArrayState::Healthy {
                let report = array.scrub();
                assert!(
                    report.mismatches.is_empty(),
                    "{}: after rebuild {report:?}",
                    context(op)
                );
            }
        }
        let sectors = rng.range(1, max_sectors);
        let lbn = Lbn(rng.below(capacity - sectors + 1));
        let len = sectors as usize * SECTOR;
        match rng.below(100) {
            0..=44 => {
                array
                    .read(lbn, &mut buf[..len])
                    .unwrap_or_else(|e| panic!("{}: read: {e}", context(op)));
                reference
                    .read(lbn, &mut expected[..len])
                    .expect("reference");
                compare(&buf[..len], &expected[..len], lbn, || context(op));
            }
            45..=84 => {
                rng.fill(&mut buf[..len]);
                array
                    .write(lbn, &buf[..len])
                    .unwrap_or_else(|e| panic!("{}: write: {e}", context(op)));
                reference.write(lbn, &buf[..len]).expect("reference");
            }
            85..=94 => {
                array
                    .trim(lbn, Sectors(sectors))
                    .unwrap_or_else(|e| panic!("{}: trim: {e}", context(op)));
                reference.trim(lbn, Sectors(sectors)).expect("reference");
            }
            _ => array
                .flush()
                .unwrap_or_else(|e| panic!("{}: flush: {e}", context(op))),
        }
    }
    finish_and_check(name, array, &mut reference, || context(ops));
}

/// Completes any rebuild, compares the whole volume, and scrubs.
fn finish_and_check(
    name: &str,
    array: &mut dyn Array,
    reference: &mut MemoryStore,
    context: impl Fn() -> String,
) {
    while matches!(array.status().state, ArrayState::Rebuilding { .. }) {
        array.rebuild(64);
    }
    if array.redundant() {
        assert_eq!(array.status().state, ArrayState::Healthy, "{}", context());
    }
    let capacity = array.capacity().0;
    let chunk = 256u64;
    let mut got = vec![0u8; chunk as usize * SECTOR];
    let mut want = got.clone();
    for start in (0..capacity).step_by(chunk as usize) {
        let len = chunk.min(capacity - start) as usize * SECTOR;
        array.read(Lbn(start), &mut got[..len]).expect("final read");
        reference
            .read(Lbn(start), &mut want[..len])
            .expect("reference");
        compare(&got[..len], &want[..len], Lbn(start), &context);
    }
    let report = array.scrub();
    assert!(
        report.mismatches.is_empty(),
        "{name}: scrub found {:?}; {}",
        report.mismatches,
        context()
    );
}

fn compare(got: &[u8], want: &[u8], lbn: Lbn, context: impl Fn() -> String) {
    if got != want {
        let at = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(0);
        panic!(
            "{}: read at {lbn} differs from the reference at byte {at} (sector {})",
            context(),
            lbn.0 + (at / SECTOR) as u64
        );
    }
}

/// Heterogeneous track sizes: `tracks` tracks per member, sizes 11..=17 sectors.
fn random_tracks(members: usize, tracks: usize, seed: u64) -> Vec<Vec<Sectors>> {
    let mut rng = Rng::new(seed);
    (0..members)
        .map(|_| (0..tracks).map(|_| Sectors(rng.range(11, 17))).collect())
        .collect()
}

fn layout_stores<L: ParityLayout>(layout: &L) -> Vec<MemoryStore> {
    (0..layout.members())
        .map(|m| memory(member_sectors(layout, m) + 7))
        .collect()
}

// Proves RAID-0 reads back what was written (no failure: RAID-0 has no redundancy).
#[test]
fn raid0_matches_reference() {
    let mut volume = Raid0Volume::new(Sectors(8), memories(4, 1024)).unwrap();
    run_model("RAID-0", &mut volume, 32, 1);
}

// Proves a 2-way mirror serves correct data healthy, degraded, rebuilding and after.
#[test]
fn raid1_two_copies_matches_reference() {
    let mut volume = Raid1Volume::new(memories(2, 4096)).unwrap();
    run_model("RAID-1x2", &mut volume, 128, 2);
}

// Proves the same for a 3-way mirror.
#[test]
fn raid1_three_copies_matches_reference() {
    let mut volume = Raid1Volume::new(memories(3, 4096)).unwrap();
    run_model("RAID-1x3", &mut volume, 128, 3);
}

// Proves RAID-10 near-2 on 4 members through failure and rebuild.
#[test]
fn raid10_near2_four_members_matches_reference() {
    let mut volume = Raid10Volume::new(Sectors(8), 2, memories(4, 1024)).unwrap();
    run_model("RAID-10 n2x4", &mut volume, 32, 4);
}

// Proves RAID-10 near-2 on 5 members (copies straddle rows) through failure and rebuild.
#[test]
fn raid10_near2_five_members_matches_reference() {
    let mut volume = Raid10Volume::new(Sectors(8), 2, memories(5, 1024)).unwrap();
    run_model("RAID-10 n2x5", &mut volume, 40, 5);
}

// Proves md RAID-5 on 3 members through failure and rebuild, parity consistent after.
#[test]
fn raid5_three_members_matches_reference() {
    let mut volume = Raid5Volume::new(Sectors(8), memories(3, 1024)).unwrap();
    run_model("RAID-5x3", &mut volume, 16, 6);
}

// Proves md RAID-5 on 5 members through failure and rebuild, parity consistent after.
#[test]
fn raid5_five_members_matches_reference() {
    let mut volume = Raid5Volume::new(Sectors(8), memories(5, 1024)).unwrap();
    run_model("RAID-5x5", &mut volume, 32, 7);
}

// Proves the track-aligned RAID-5 (whole-track units, heterogeneous tracks) end to end.
#[test]
fn track_aligned_whole_track_matches_reference() {
    let layout = TrackAlignedLayout::new(random_tracks(5, 60, 8), UnitPolicy::WholeTrack).unwrap();
    let stores = layout_stores(&layout);
    let mut volume = Raid5Volume::with_layout(layout, stores).unwrap();
    run_model("track-aligned whole-track", &mut volume, 68, 8);
}

// Proves the track-aligned RAID-5 under the smallest-track unit policy end to end.
#[test]
fn track_aligned_smallest_track_matches_reference() {
    let layout =
        TrackAlignedLayout::new(random_tracks(4, 80, 9), UnitPolicy::SmallestTrack).unwrap();
    let stores = layout_stores(&layout);
    let mut volume = Raid5Volume::with_layout(layout, stores).unwrap();
    run_model("track-aligned smallest-track", &mut volume, 44, 9);
}

// Proves the paper's largest-track chunk alternative (md RAID-5 with chunk = the
// largest track) end to end.
#[test]
fn largest_track_chunk_matches_reference() {
    let layout = Raid5Map::with_largest_track_chunk(&random_tracks(4, 70, 10)).unwrap();
    let stores = layout_stores(&layout);
    let mut volume = Raid5Volume::with_layout(layout, stores).unwrap();
    run_model("largest-track chunk", &mut volume, 51, 10);
}

fn dab_over_raid5(policy: WritePolicy) -> DmaAlignedBuffer<Raid5Volume<MemoryStore, Raid5Map>> {
    let raid = Raid5Volume::new(Sectors(8), memories(5, 1024)).unwrap();
    let config = DabConfig {
        blocks: 8,
        block_sectors: Sectors(16),
        policy,
    };
    DmaAlignedBuffer::new(raid, config).unwrap()
}

// Proves the write-back DAB over RAID-5 returns the reference data through member
// failure and rebuild (dirty blocks, evictions and flushes included).
#[test]
fn dab_write_back_over_raid5_matches_reference() {
    let mut dab = dab_over_raid5(WritePolicy::WriteBack);
    run_model("DAB write-back over RAID-5", &mut dab, 32, 11);
    let counters = dab.counters();
    assert!(
        counters.hits > 0 && counters.misses > 0 && counters.write_backs > 0,
        "{counters:?}"
    );
}

// Proves the write-through DAB over RAID-5 returns the reference data likewise.
#[test]
fn dab_write_through_over_raid5_matches_reference() {
    let mut dab = dab_over_raid5(WritePolicy::WriteThrough);
    run_model("DAB write-through over RAID-5", &mut dab, 32, 12);
    let counters = dab.counters();
    assert!(
        counters.hits > 0 && counters.write_backs == 0,
        "{counters:?}"
    );
}
