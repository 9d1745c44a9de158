//! Property tests of the allocators, each over random track maps, layouts and
//! operation sequences drawn from a seed (printed on failure), against a
//! reference that knows only which blocks are metadata, excluded or taken:
//! no block allocated twice; excluded blocks never allocated; allocation
//! inside the capacity; a request fails exactly when the reference has too few
//! blocks; a freed block can be reused; traxtent FFS puts every file that fits
//! in a free traxtent inside one; next-free placement picks the block a
//! reference picks; a file holds exactly the indirect blocks its size needs
//! (counted level by level, independently of the allocator's rule).

mod common;

use common::{crossing_by_brute_force, map_of, small_policies};
use proptest::prelude::*;
use spinstack_fs::{
    Allocator, AllocatorConfig, BlockNumber, BlockState, FileId, IndirectBlocks, Placement,
};
use spinstack_sim::rng::SplitMix64;
use spinstack_trackmap::TrackMap;
use std::collections::{BTreeMap, BTreeSet};

/// What the reference knows: blocks no file may have, and each file's blocks.
struct Reference {
    forbidden: BTreeSet<u64>,
    excluded: BTreeSet<u64>,
    files: BTreeMap<FileId, BTreeSet<u64>>,
    block_count: u64,
}

impl Reference {
    fn new(map: &TrackMap, config: &AllocatorConfig) -> Reference {
        let sectors = config.block_size.sectors().0;
        let block_count = map.capacity().0 / sectors;
        let excluded: BTreeSet<u64> = if config.exclude_track_crossing_blocks {
            crossing_by_brute_force(map, sectors).into_iter().collect()
        } else {
            BTreeSet::new()
        };
        let mut forbidden = excluded.clone();
        for block in 0..block_count {
            if block % config.group_blocks < config.metadata_blocks_per_group {
                forbidden.insert(block);
            }
        }
        Reference {
            forbidden,
            excluded,
            files: BTreeMap::new(),
            block_count,
        }
    }
    fn taken(&self, indirect: Option<IndirectBlocks>) -> u64 {
        self.files
            .values()
            .map(|blocks| blocks.len() as u64 + indirect_for(indirect, blocks.len() as u64))
            .sum()
    }
    fn allocatable(&self, indirect: Option<IndirectBlocks>) -> u64 {
        self.block_count - self.forbidden.len() as u64 - self.taken(indirect)
    }
}

/// Indirect blocks a file of `data` blocks holds, counted as a tree: past the
/// direct blocks, each level (single, double, triple) maps up to pointers^level
/// blocks through ceil(mapped / pointers^j) blocks at each of its j = 1..level.
fn indirect_for(layout: Option<IndirectBlocks>, data: u64) -> u64 {
    let Some(layout) = layout else { return 0 };
    let pointers = layout.pointers_per_block;
    let mut rest = data.saturating_sub(layout.direct);
    let (mut total, mut span) = (0, pointers);
    for level in 1..=3 {
        let mapped = rest.min(span);
        let mut unit = pointers;
        for _ in 0..level {
            total += mapped.div_ceil(unit);
            unit *= pointers;
        }
        rest -= mapped;
        span *= pointers;
    }
    total
}

/// A random map (track sizes 3..40 sectors) and one of the four small policies
/// with a random group size.
fn setup(rng: &mut SplitMix64) -> (TrackMap, &'static str, AllocatorConfig) {
    let tracks = 8 + rng.below(50) as usize;
    let sizes: Vec<u64> = (0..tracks).map(|_| 3 + rng.below(38)).collect();
    let map = map_of(&sizes);
    let group_blocks = 8 + rng.below(40);
    let policies = small_policies(group_blocks);
    let (name, config) = policies[rng.below(policies.len() as u64) as usize];
    // Half the runs with indirect blocks, small enough that files reach the
    // double and triple levels.
    let indirect = (rng.below(2) == 0).then(|| IndirectBlocks {
        direct: 1 + rng.below(4),
        pointers_per_block: 2 + rng.below(3),
    });
    (map, name, AllocatorConfig { indirect, ..config })
}

/// Checks every invariant the reference can see; `Err` names the first broken.
fn check(allocator: &Allocator, reference: &Reference, map: &TrackMap) -> Result<(), String> {
    let mut seen = BTreeSet::new();
    let sectors = allocator.config().block_size.sectors().0;
    for file in allocator.files() {
        for run in allocator.runs(file).unwrap() {
            for block in run.iter() {
                if !seen.insert(block.0) {
                    return Err(format!("{block} allocated twice"));
                }
                if reference.excluded.contains(&block.0) {
                    return Err(format!(
                        "{block} spans a track boundary but {file:?} has it"
                    ));
                }
                if reference.forbidden.contains(&block.0) {
                    return Err(format!("{block} is metadata but {file:?} has it"));
                }
                if (block.0 + 1) * sectors > map.capacity().0 {
                    return Err(format!("{block} ends past the capacity"));
                }
                if allocator.state(block) != Some(BlockState::Data) {
                    return Err(format!("{block} is {:?}", allocator.state(block)));
                }
            }
        }
        let indirect = allocator.indirect_blocks(file).unwrap();
        for &block in indirect {
            if !seen.insert(block.0) {
                return Err(format!("indirect {block} allocated twice"));
            }
            if reference.forbidden.contains(&block.0) {
                return Err(format!(
                    "{block} is metadata or excluded but {file:?} has it"
                ));
            }
            if allocator.state(block) != Some(BlockState::Indirect) {
                return Err(format!("indirect {block} is {:?}", allocator.state(block)));
            }
        }
        let ours: BTreeSet<u64> = allocator
            .runs(file)
            .unwrap()
            .iter()
            .flat_map(|r| r.iter().map(|b| b.0))
            .collect();
        let expected = indirect_for(allocator.config().indirect, ours.len() as u64);
        if indirect.len() as u64 != expected {
            return Err(format!(
                "{file:?} has {} data and {} indirect blocks, not {expected}",
                ours.len(),
                indirect.len()
            ));
        }
        if Some(&ours) != reference.files.get(&file) {
            return Err(format!(
                "{file:?}'s blocks differ from what allocate returned"
            ));
        }
    }
    let preallocated: u64 = allocator
        .files()
        .filter_map(|f| allocator.preallocated(f))
        .map(|r| r.blocks)
        .sum();
    let allocatable = reference.allocatable(allocator.config().indirect);
    if allocator.free_blocks() + preallocated != allocatable {
        return Err(format!(
            "free {} + preallocated {preallocated} != reference's {allocatable}",
            allocator.free_blocks(),
        ));
    }
    Ok(())
}

/// Does some traxtent hold `count` free blocks in a row (by the reference)?
fn some_traxtent_fits(map: &TrackMap, allocator: &Allocator, count: u64) -> bool {
    let sectors = allocator.config().block_size.sectors().0;
    map.tracks().iter().any(|t| {
        let (first, end) = (t.first.0.div_ceil(sectors), t.end().0 / sectors);
        let mut run = 0;
        (first..end.min(allocator.block_count())).any(|b| {
            run = if allocator.state(BlockNumber(b)) == Some(BlockState::Free) {
                run + 1
            } else {
                0
            };
            run >= count
        })
    })
}

/// Are the file's blocks (data and indirect) one contiguous range inside one track?
fn in_one_traxtent(map: &TrackMap, allocator: &Allocator, file: FileId) -> bool {
    let sectors = allocator.config().block_size.sectors().0;
    let blocks: BTreeSet<u64> = allocator
        .runs(file)
        .unwrap()
        .iter()
        .flat_map(|r| r.iter().map(|b| b.0))
        .chain(allocator.indirect_blocks(file).unwrap().iter().map(|b| b.0))
        .collect();
    let (first, last) = (*blocks.first().unwrap(), *blocks.last().unwrap());
    last - first + 1 == blocks.len() as u64
        && map.track_index_of(spinstack_sim::units::Lbn(first * sectors))
            == map.track_index_of(spinstack_sim::units::Lbn((last + 1) * sectors - 1))
}

/// One random run of create / allocate / close / delete, checked after every step.
fn random_operations(seed: u64) -> Result<(), String> {
    let mut rng = SplitMix64::new(seed);
    let (map, name, config) = setup(&mut rng);
    let mut allocator = Allocator::new(&map, config).map_err(|e| e.to_string())?;
    let mut reference = Reference::new(&map, &config);
    for step in 0..60 {
        let files: Vec<FileId> = allocator.files().collect();
        let pick = |rng: &mut SplitMix64| files[rng.below(files.len() as u64) as usize];
        let at = format!("seed {seed} ({name}), step {step}");
        match rng.below(10) {
            0..=2 => {
                let group = rng.below(allocator.group_count() as u64) as usize;
                let file = allocator.create(group).map_err(|e| format!("{at}: {e}"))?;
                reference.files.insert(file, BTreeSet::new());
            }
            3..=6 if !files.is_empty() => {
                let file = pick(&mut rng);
                let count = 1 + rng.below(12);
                let held = reference.files[&file].len() as u64;
                let new_file = held == 0;
                let needed = count + indirect_for(config.indirect, held + count)
                    - indirect_for(config.indirect, held);
                let fits = some_traxtent_fits(&map, &allocator, needed);
                let enough = reference.allocatable(config.indirect) >= needed;
                match allocator.allocate(file, count) {
                    Ok(runs) => {
                        if !enough {
                            return Err(format!("{at}: {count} blocks given, reference has fewer"));
                        }
                        let blocks = reference.files.get_mut(&file).unwrap();
                        for block in runs.iter().flat_map(|r| r.iter()) {
                            blocks.insert(block.0);
                        }
                        let placed = in_one_traxtent(&map, &allocator, file);
                        if config.placement == Placement::Traxtent && new_file && fits && !placed {
                            return Err(format!(
                                "{at}: {count}-block file fits a traxtent but got {runs:?}"
                            ));
                        }
                    }
                    Err(error) if enough => return Err(format!("{at}: {error}")),
                    Err(_) => {}
                }
            }
            7 if !files.is_empty() => allocator.close(pick(&mut rng)).map_err(|e| e.to_string())?,
            8 | 9 if !files.is_empty() => {
                let file = pick(&mut rng);
                let freed = allocator.delete(file).map_err(|e| e.to_string())?;
                let held = reference.files.remove(&file).unwrap();
                if freed != held.len() as u64 {
                    return Err(format!("{at}: delete freed {freed} of {}", held.len()));
                }
            }
            _ => {}
        }
        check(&allocator, &reference, &map).map_err(|why| format!("{at}: {why}"))?;
    }
    Ok(())
}

/// Fill the volume, delete one file, ask again for as many blocks: the
/// request succeeds with exactly the freed blocks (nothing else is free).
fn freed_blocks_are_reused(seed: u64) -> Result<(), String> {
    let mut rng = SplitMix64::new(seed);
    let (map, name, config) = setup(&mut rng);
    let mut allocator = Allocator::new(&map, config).map_err(|e| e.to_string())?;
    let mut files = Vec::new();
    while allocator.free_blocks() > 0 {
        let file = allocator
            .create(rng.below(allocator.group_count() as u64) as usize)
            .unwrap();
        // Small enough that the indirect blocks it needs are free too.
        let mut count = (1 + rng.below(10)).min(allocator.free_blocks());
        while count + indirect_for(config.indirect, count) > allocator.free_blocks() {
            count -= 1;
        }
        if count == 0 {
            break;
        }
        allocator
            .allocate(file, count)
            .map_err(|e| format!("seed {seed} ({name}): {e}"))?;
        allocator.close(file).unwrap();
        files.push(file);
    }
    let victim = files[rng.below(files.len() as u64) as usize];
    let blocks_of = |allocator: &Allocator, file: FileId| -> BTreeSet<u64> {
        allocator
            .runs(file)
            .unwrap()
            .iter()
            .flat_map(|r| r.iter().map(|b| b.0))
            .chain(allocator.indirect_blocks(file).unwrap().iter().map(|b| b.0))
            .collect()
    };
    let freed = blocks_of(&allocator, victim);
    let data = allocator.delete(victim).unwrap();
    let again = allocator.create(0).unwrap();
    allocator
        .allocate(again, data)
        .map_err(|e| format!("seed {seed} ({name}): freed blocks not reusable: {e}"))?;
    let got = blocks_of(&allocator, again);
    if got != freed {
        return Err(format!(
            "seed {seed} ({name}): got {got:?}, freed {freed:?}"
        ));
    }
    Ok(())
}

/// Next-free placement (FFS and ext2 without limits or windows) against a
/// reference that knows only the free set: each new block is the first free
/// block at or after the preferred one (the block after the file's last, or its
/// group's first data block), wrapping to block 0.
fn next_free_matches_the_reference(seed: u64) -> Result<(), String> {
    let mut rng = SplitMix64::new(seed);
    let (map, _, config) = setup(&mut rng);
    let config = AllocatorConfig {
        placement: Placement::NextFree,
        preallocation: spinstack_fs::Preallocation::None,
        max_blocks_per_group_per_file: None,
        indirect: None,
        ..config
    };
    let mut allocator = Allocator::new(&map, config).map_err(|e| e.to_string())?;
    let count = allocator.block_count();
    let mut free: BTreeSet<u64> = (0..count)
        .filter(|&b| allocator.state(BlockNumber(b)) == Some(BlockState::Free))
        .collect();
    let mut last: BTreeMap<FileId, Option<u64>> = BTreeMap::new();
    let mut home: BTreeMap<FileId, u64> = BTreeMap::new();
    for step in 0..40 {
        let at = format!("seed {seed}, step {step}");
        if last.is_empty() || rng.below(4) == 0 {
            let group = rng.below(allocator.group_count() as u64);
            let file = allocator.create(group as usize).unwrap();
            let group_end = ((group + 1) * config.group_blocks).min(count);
            home.insert(
                file,
                (group * config.group_blocks + config.metadata_blocks_per_group).min(group_end - 1),
            );
            last.insert(file, None);
            continue;
        }
        let files: Vec<FileId> = last.keys().copied().collect();
        let file = files[rng.below(files.len() as u64) as usize];
        let wanted = 1 + rng.below(6);
        let Ok(runs) = allocator.allocate(file, wanted) else {
            if free.len() as u64 >= wanted {
                return Err(format!("{at}: refused with {} free", free.len()));
            }
            continue;
        };
        for block in runs.iter().flat_map(|r| r.iter()) {
            let preferred = match last[&file] {
                Some(previous) if previous + 1 < count => previous + 1,
                Some(_) => 0,
                None => home[&file],
            };
            let expected = free
                .range(preferred..)
                .next()
                .or_else(|| free.iter().next())
                .copied();
            if Some(block.0) != expected {
                return Err(format!(
                    "{at}: got {block}, reference {expected:?} (preferred {preferred})"
                ));
            }
            free.remove(&block.0);
            last.insert(file, Some(block.0));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Next-free placement picks exactly the reference's block every time.
    #[test]
    fn next_free_placement_matches_the_reference(seed in any::<u64>()) {
        next_free_matches_the_reference(seed).map_err(TestCaseError::fail)?;
    }

    /// Random operations keep every invariant and agree with the reference.
    #[test]
    fn operations_keep_the_invariants(seed in any::<u64>()) {
        random_operations(seed).map_err(TestCaseError::fail)?;
    }

    /// A full volume's freed blocks go to the next request.
    #[test]
    fn a_freed_block_can_be_reused(seed in any::<u64>()) {
        freed_blocks_are_reused(seed).map_err(TestCaseError::fail)?;
    }
}
