//! The page cache and the write-back policies: the state table, scan
//! resistance of the active/inactive lists, Linux's age and ratio rules with
//! 2.6.16's defaults, FFS's cluster commits; then seeded random operations
//! against a reference (bound never exceeded, a dirty page never dropped
//! before write-back, LRU victims exactly the reference LRU's), and of the
//! write-back policies' decisions against their rules.

use proptest::prelude::*;
use spinstack_fs::cache::{CacheError, PageCache, PageKey, PageState, Replacement};
use spinstack_fs::writeback::{FfsClusterWriteback, LinuxWriteback};
use spinstack_fs::{BlockNumber, FileId};
use spinstack_sim::rng::SplitMix64;
use spinstack_sim::units::Nanoseconds;
use std::collections::BTreeMap;

fn page(file: u64, index: u64) -> PageKey {
    PageKey {
        file: FileId(file),
        index,
    }
}

fn seconds(s: u64) -> Nanoseconds {
    Nanoseconds::from_ms(s * 1000)
}

/// Every row of the state table, and eviction refusing unclean pages.
#[test]
fn page_states_follow_the_table() {
    let mut cache = PageCache::new(2 * 4096, 4096, Replacement::Lru).unwrap();
    let a = page(1, 0);
    cache.write(a, seconds(1)).unwrap();
    cache.write(a, seconds(2)).unwrap();
    assert_eq!(
        cache.state(a),
        Some(PageState::Dirty { since: seconds(1) }),
        "first dirtying counts"
    );
    assert_eq!(cache.start_writeback(&[a, page(9, 9)]), vec![a]);
    assert_eq!(cache.state(a), Some(PageState::WritingBack));
    cache.write(a, seconds(3)).unwrap();
    assert_eq!(
        cache.state(a),
        Some(PageState::Redirtied { since: seconds(3) })
    );
    cache.finish_writeback(&[a]);
    assert_eq!(cache.state(a), Some(PageState::Dirty { since: seconds(3) }));
    cache.start_writeback(&[a]);
    cache.finish_writeback(&[a]);
    assert_eq!(cache.state(a), Some(PageState::Clean));
    // Two dirty pages fill a 2-page cache: a third cannot come in.
    cache.write(page(1, 1), seconds(4)).unwrap();
    cache.write(a, seconds(4)).unwrap();
    assert_eq!(
        cache.insert(page(1, 2)),
        Err(CacheError::Full {
            dirty: 2,
            writing_back: 0
        })
    );
    assert_eq!(cache.truncate_file(FileId(1)), 2);
    assert!(cache.is_empty());
    assert!(PageCache::new(4095, 4096, Replacement::Lru).is_err());
}

/// A hot set read twice survives a one-pass scan larger than the cache under
/// the active/inactive lists, and does not under LRU.
#[test]
fn active_inactive_lists_resist_a_scan() {
    for (replacement, hot_survives) in [
        (Replacement::ActiveInactive, true),
        (Replacement::Lru, false),
    ] {
        let mut cache = PageCache::new(10 * 4096, 4096, replacement).unwrap();
        for index in 0..3 {
            cache.insert(page(1, index)).unwrap();
            assert!(cache.access(page(1, index)));
            assert!(cache.access(page(1, index)));
        }
        for index in 0..30 {
            cache.insert(page(2, index)).unwrap();
        }
        let survivors = (0..3).filter(|&i| cache.contains(page(1, i))).count();
        assert_eq!(
            survivors == 3,
            hot_survives,
            "{replacement:?}: {survivors} hot pages left"
        );
        assert!(cache.len() <= 10);
    }
}

/// Linux 2.6's use-once rule (`mark_page_accessed`): one access marks a page,
/// the second while it is inactive promotes it; a read completing for a cached
/// page is no access.
#[test]
fn a_page_is_promoted_on_its_second_access() {
    let mut cache = PageCache::new(10 * 4096, 4096, Replacement::ActiveInactive).unwrap();
    cache.insert(page(1, 0)).unwrap();
    cache.insert(page(1, 0)).unwrap();
    assert_eq!(cache.active_pages(), 0, "read in twice, never read");
    assert!(cache.access(page(1, 0)));
    assert_eq!(cache.active_pages(), 0, "used once: stays inactive");
    assert!(cache.access(page(1, 0)));
    assert_eq!(cache.active_pages(), 1, "used twice: active");
    cache.write(page(1, 1), seconds(0)).unwrap();
    assert!(cache.access(page(1, 1)));
    assert_eq!(cache.active_pages(), 2, "written, then read: two accesses");
}

/// Regression (issue 9, ext2-streams' jump when the 2 GB cache first filled):
/// pages a stream read once must leave before its read-ahead that nobody has
/// read yet. With one access promoting, the used pages were all active when the
/// cache filled, the first reclaim demoted them past the read-ahead, and the
/// read-ahead was evicted first.
#[test]
fn pending_read_ahead_outlives_pages_read_once() {
    let mut cache = PageCache::new(100 * 4096, 4096, Replacement::ActiveInactive).unwrap();
    // A stream has read pages 0..96 (each read in, then read once).
    for index in 0..96 {
        cache.insert(page(1, index)).unwrap();
        assert!(cache.access(page(1, index)));
    }
    // Its read-ahead brings 96..100, not yet read; then another stream's pages
    // arrive and the cache must reclaim.
    for index in 96..100 {
        cache.insert(page(1, index)).unwrap();
    }
    for index in 0..50 {
        cache.insert(page(2, index)).unwrap();
    }
    let pending = (96..100).filter(|&i| cache.contains(page(1, i))).count();
    assert_eq!(pending, 4, "read-ahead not yet read was evicted");
    assert!(
        !cache.contains(page(1, 0)),
        "the oldest page read once is the first to go"
    );
}

/// Linux 2.6.16's defaults: nothing is written before 30 s unless dirty pages
/// pass 10% of the cache; writers wait past 40%; passes every 5 s.
#[test]
fn linux_writeback_by_age_and_ratio() {
    let policy = LinuxWriteback::linux_2_6_16();
    assert_eq!(policy.expire, seconds(30));
    assert_eq!(policy.next_periodic_pass(seconds(7)), seconds(10));
    let mut cache = PageCache::new(100 * 4096, 4096, Replacement::ActiveInactive).unwrap();
    for index in 0..10 {
        cache.write(page(1, index), seconds(index)).unwrap();
    }
    assert!(
        policy.pages_to_write(&cache, seconds(29)).is_empty(),
        "10 dirty of 100: at the background limit"
    );
    assert_eq!(
        policy.pages_to_write(&cache, seconds(31)),
        vec![page(1, 0), page(1, 1)],
        "dirty at 0 s and 1 s expired"
    );
    for index in 10..15 {
        cache.write(page(1, index), seconds(20)).unwrap();
    }
    // 15 dirty: the 5 oldest go, down to the background limit of 10.
    assert_eq!(policy.pages_to_write(&cache, seconds(20)).len(), 5);
    assert!(!policy.writer_must_wait(&cache));
    for index in 15..41 {
        cache.write(page(1, index), seconds(21)).unwrap();
    }
    assert!(policy.writer_must_wait(&cache), "41 of 100 pages dirty");
}

/// FFS commits a cluster of 16 blocks when the 16th sequential block is
/// written, and the run before a block that does not follow it on disk.
#[test]
fn ffs_commits_complete_clusters() {
    let policy = FfsClusterWriteback::freebsd();
    let mut cache = PageCache::new(64 * 8192, 8192, Replacement::Lru).unwrap();
    // File blocks 0..20 on disk blocks 100..120, except an excluded block
    // skipped after file block 9 (file block 10 is at disk block 111).
    let block_of = |index: u64| Some(BlockNumber(100 + index + u64::from(index >= 10)));
    let mut commits = Vec::new();
    for index in 0..30 {
        cache.write(page(1, index), seconds(0)).unwrap();
        let commit = policy.on_write(&cache, page(1, index), block_of);
        if !commit.is_empty() {
            commits.push((index, commit.first().unwrap().index, commit.len()));
            cache.start_writeback(&commit);
        }
    }
    assert_eq!(commits, vec![(10, 0, 10), (25, 10, 16)]);
}

/// One seeded random run against a reference of states and, under LRU, of
/// recency order.
fn random_cache_operations(seed: u64) -> Result<(), String> {
    let mut rng = SplitMix64::new(seed);
    let capacity = 1 + rng.below(12) as usize;
    let replacement = if rng.below(2) == 0 {
        Replacement::Lru
    } else {
        Replacement::ActiveInactive
    };
    let mut cache = PageCache::new(capacity as u64 * 4096, 4096, replacement).unwrap();
    let mut states: BTreeMap<PageKey, PageState> = BTreeMap::new();
    let mut recency: Vec<PageKey> = Vec::new(); // least recent first (LRU reference)
    for step in 0..300 {
        let at = format!("seed {seed} ({replacement:?}, {capacity} pages), step {step}");
        let now = Nanoseconds(step);
        let key = page(rng.below(3), rng.below(8));
        let touch = |recency: &mut Vec<PageKey>| {
            recency.retain(|&k| k != key);
            recency.push(key);
        };
        match rng.below(6) {
            0..=2 => {
                let is_write = rng.below(3) == 0;
                let present = states.contains_key(&key);
                let all_unclean = states.values().all(|s| !s.is_clean());
                let result = if is_write {
                    cache.write(key, now)
                } else {
                    cache.insert(key)
                };
                match result {
                    Ok(evicted) => {
                        for gone in &evicted {
                            match states.remove(gone) {
                                Some(PageState::Clean) => {}
                                other => {
                                    return Err(format!(
                                        "{at}: evicted {gone:?} in state {other:?}"
                                    ))
                                }
                            }
                        }
                        if replacement == Replacement::Lru && !present {
                            let expected: Vec<PageKey> = recency
                                .iter()
                                .copied()
                                .filter(|k| !states.contains_key(k))
                                .collect();
                            if evicted != expected {
                                return Err(format!(
                                    "{at}: evicted {evicted:?}, LRU reference {expected:?}"
                                ));
                            }
                            recency.retain(|k| !evicted.contains(k));
                        }
                        let state = states.entry(key).or_insert(PageState::Clean);
                        if is_write {
                            *state = match *state {
                                PageState::Clean => PageState::Dirty { since: now },
                                PageState::WritingBack => PageState::Redirtied { since: now },
                                other => other,
                            };
                        }
                        touch(&mut recency);
                    }
                    Err(CacheError::Full { .. })
                        if !present && states.len() == capacity && all_unclean => {}
                    Err(error) => return Err(format!("{at}: {error}")),
                }
            }
            3 => {
                let hit = cache.access(key);
                if hit != states.contains_key(&key) {
                    return Err(format!("{at}: access hit {hit}"));
                }
                if hit {
                    touch(&mut recency);
                }
            }
            4 => {
                let dirty: Vec<PageKey> = states
                    .iter()
                    .filter(|(_, s)| matches!(s, PageState::Dirty { .. }))
                    .map(|(&k, _)| k)
                    .collect();
                let chosen: Vec<PageKey> =
                    dirty.into_iter().filter(|_| rng.below(2) == 0).collect();
                let started = cache.start_writeback(&chosen);
                if started != chosen {
                    return Err(format!("{at}: started {started:?} of {chosen:?}"));
                }
                for k in chosen {
                    states.insert(k, PageState::WritingBack);
                }
            }
            _ => {
                let flying: Vec<PageKey> = states
                    .iter()
                    .filter(|(_, s)| {
                        matches!(s, PageState::WritingBack | PageState::Redirtied { .. })
                    })
                    .map(|(&k, _)| k)
                    .collect();
                let done: Vec<PageKey> = flying.into_iter().filter(|_| rng.below(2) == 0).collect();
                cache.finish_writeback(&done);
                for k in done {
                    let s = states.get_mut(&k).unwrap();
                    *s = match *s {
                        PageState::Redirtied { since } => PageState::Dirty { since },
                        _ => PageState::Clean,
                    };
                }
            }
        }
        if cache.len() > capacity || cache.bytes() > capacity as u64 * 4096 {
            return Err(format!(
                "{at}: {} pages in a {capacity}-page cache",
                cache.len()
            ));
        }
        for (&k, &s) in &states {
            if cache.state(k) != Some(s) {
                return Err(format!(
                    "{at}: {k:?} is {:?}, reference {s:?}",
                    cache.state(k)
                ));
            }
        }
        if cache.len() != states.len() {
            return Err(format!(
                "{at}: {} pages, reference {}",
                cache.len(),
                states.len()
            ));
        }
        let unclean = states
            .values()
            .filter(|s| matches!(s, PageState::Dirty { .. } | PageState::Redirtied { .. }))
            .count();
        if cache.dirty_pages() != unclean {
            return Err(format!(
                "{at}: {} dirty, reference {unclean}",
                cache.dirty_pages()
            ));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// The bound holds, dirty pages stay until written back, LRU evicts what a
    /// reference LRU evicts, and states and counts match the reference.
    #[test]
    fn cache_operations_match_the_reference(seed in any::<u64>()) {
        random_cache_operations(seed).map_err(TestCaseError::fail)?;
    }
}

/// One seeded run of the write-back policies' decisions against their rules:
/// Linux's pass writes only dirty pages, every expired one, the oldest first,
/// and leaves at most the background share dirty; FFS commits only dirty
/// pages, in runs contiguous in the file and on disk, none longer than a
/// cluster.
fn writeback_rules(seed: u64) -> Result<(), String> {
    let mut rng = SplitMix64::new(seed);
    let capacity = 20 + rng.below(100);
    let mut cache = PageCache::new(capacity * 4096, 4096, Replacement::Lru).unwrap();
    let policy = LinuxWriteback {
        expire: Nanoseconds(1 + rng.below(50)),
        interval: Nanoseconds(5),
        background_percent: rng.below(60),
        throttle_percent: 40,
    };
    let ffs = FfsClusterWriteback {
        cluster_blocks: 1 + rng.below(8),
    };
    // Disk blocks of file 0's pages: contiguous with a gap every so often.
    let gaps: Vec<u64> = (0..capacity)
        .map(|_| u64::from(rng.below(6) == 0))
        .collect();
    let block_of = |index: u64| {
        Some(BlockNumber(
            1000 + index + gaps[..index as usize].iter().sum::<u64>(),
        ))
    };
    for step in 0..200 {
        let at = format!("seed {seed}, step {step}");
        let now = Nanoseconds(step);
        let written = page(0, rng.below(capacity));
        if cache.write(written, now).is_err() {
            let oldest: Vec<PageKey> = cache.dirty_oldest_first().iter().map(|&(k, _)| k).collect();
            cache.start_writeback(&oldest);
            cache.finish_writeback(&oldest);
            continue;
        }
        let commit = ffs.on_write(&cache, written, block_of);
        // Consecutive pages of the file, contiguous on disk except at most once
        // (between the run before a gap and the run after it).
        let mut breaks = 0;
        for pair in commit.windows(2) {
            if pair[1].index != pair[0].index + 1 {
                return Err(format!("{at}: FFS commit {commit:?} skips a page"));
            }
            if block_of(pair[1].index) != block_of(pair[0].index).map(|b| b.plus(1)) {
                breaks += 1;
            }
        }
        if breaks > 1 {
            return Err(format!("{at}: FFS commit {commit:?} is more than two runs"));
        }
        if commit
            .iter()
            .any(|&k| !matches!(cache.state(k), Some(PageState::Dirty { .. })))
        {
            return Err(format!(
                "{at}: FFS commits a page that is not dirty: {commit:?}"
            ));
        }
        if commit.len() as u64 > 2 * ffs.cluster_blocks {
            return Err(format!("{at}: FFS commits {} pages", commit.len()));
        }
        cache.start_writeback(&commit);
        let dirty = cache.dirty_oldest_first();
        let chosen = policy.pages_to_write(&cache, now);
        if chosen.iter().zip(&dirty).any(|(&c, &(d, _))| c != d) || chosen.len() > dirty.len() {
            return Err(format!(
                "{at}: Linux writes {chosen:?}, not the oldest dirty pages first"
            ));
        }
        let expired = dirty
            .iter()
            .filter(|&&(_, since)| now.saturating_sub(since) >= policy.expire)
            .count();
        let background = (capacity * policy.background_percent / 100) as usize;
        if chosen.len() < expired || dirty.len() - chosen.len() > background {
            return Err(format!(
                "{at}: {} chosen of {} dirty ({expired} expired, background limit {background})",
                chosen.len(),
                dirty.len()
            ));
        }
        if rng.below(3) == 0 {
            let started = cache.start_writeback(&chosen);
            cache.finish_writeback(&started);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// The write-back policies keep their rules on random caches.
    #[test]
    fn writeback_policies_keep_their_rules(seed in any::<u64>()) {
        writeback_rules(seed).map_err(TestCaseError::fail)?;
    }
}
