//! Write-back policies: which dirty pages a file system sends to disk, and
//! when. Pure decisions over a [`PageCache`]; the caller starts the writes
//! ([`PageCache::start_writeback`]) and reports them done.

use crate::block::BlockNumber;
use crate::cache::{PageCache, PageKey, PageState};
use spinstack_sim::units::Nanoseconds;

/// Linux 2.6's write-back by age and by dirty ratio (pdflush), with the
/// defaults of Linux 2.6.16 (the validation paper's kernel), from
/// mm/page-writeback.c:
///
/// | parameter | 2.6.16 default | sysctl |
/// |---|---|---|
/// | `expire` | 30 s (`dirty_expire_interval = 30 * HZ`) | `vm.dirty_expire_centisecs` = 3000 |
/// | `interval` | 5 s (`dirty_writeback_interval = 5 * HZ`) | `vm.dirty_writeback_centisecs` = 500 |
/// | `background_percent` | 10 (`dirty_background_ratio`) | `vm.dirty_background_ratio` |
/// | `throttle_percent` | 40 (`vm_dirty_ratio`) | `vm.dirty_ratio` |
///
/// Ratios are taken of the cache's page capacity (Linux takes them of
/// dirtyable memory, which the cache's bound stands for here).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinuxWriteback {
    pub expire: Nanoseconds,
    pub interval: Nanoseconds,
    pub background_percent: u64,
    pub throttle_percent: u64,
}

impl LinuxWriteback {
    /// Linux 2.6.16's defaults (table above).
    pub fn linux_2_6_16() -> LinuxWriteback {
        LinuxWriteback {
            expire: Nanoseconds::from_ms(30_000),
            interval: Nanoseconds::from_ms(5_000),
            background_percent: 10,
            throttle_percent: 40,
        }
    }

    /// When the periodic (kupdate-style) pass after `now` runs: the next
    /// multiple of `interval`.
    pub fn next_periodic_pass(&self, now: Nanoseconds) -> Nanoseconds {
        let interval = self.interval.0.max(1);
        Nanoseconds((now.0 / interval + 1) * interval)
    }

    /// What a pass at `now` writes: every page dirty for at least `expire`,
    /// then, while the dirty pages left exceed `background_percent` of the
    /// cache, the oldest others. Oldest dirtying first.
    pub fn pages_to_write(&self, cache: &PageCache, now: Nanoseconds) -> Vec<PageKey> {
        let background = self.limit_pages(cache, self.background_percent);
        let dirty = cache.dirty_oldest_first();
        let mut left = cache.dirty_pages();
        dirty
            .into_iter()
            .take_while(|&(_, since)| {
                let write = now.saturating_sub(since) >= self.expire || left > background;
                left -= usize::from(write);
                write
            })
            .map(|(key, _)| key)
            .collect()
    }

    /// Whether a process writing now must wait for write-back (dirty and
    /// in-flight pages above `throttle_percent` of the cache:
    /// `balance_dirty_pages`).
    pub fn writer_must_wait(&self, cache: &PageCache) -> bool {
        cache.dirty_pages() + cache.writing_back_pages()
            > self.limit_pages(cache, self.throttle_percent)
    }

    fn limit_pages(&self, cache: &PageCache, percent: u64) -> usize {
        (cache.capacity_pages() as u64 * percent / 100) as usize
    }
}

/// FreeBSD FFS's clustered write-back (traxtents §5.3: "FFS commits dirty
/// buffers as soon as a complete cluster is created"): a run of dirty blocks
/// that are consecutive in the file and on disk is written when it reaches
/// `cluster_blocks`, or when the next written block does not follow it on
/// disk (traxtent FFS's excluded blocks end clusters this way).
///
/// `cluster_blocks` is FFS's `maxcontig`; FreeBSD's newfs sets it to
/// `MAX(1, MAXPHYS / bsize)` = 128 KB / 8 KB = 16 blocks (sbin/newfs/newfs.c;
/// `MAXPHYS` = 128 KB in FreeBSD 4.x; some releases subtract one, giving 15).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FfsClusterWriteback {
    pub cluster_blocks: u64,
}

/// FFS's cluster of 16 blocks (see [`FfsClusterWriteback`]).
pub const FFS_CLUSTER_BLOCKS: u64 = 16;

impl FfsClusterWriteback {
    pub fn freebsd() -> FfsClusterWriteback {
        FfsClusterWriteback {
            cluster_blocks: FFS_CLUSTER_BLOCKS,
        }
    }

    /// After a write of `written` (a page per file block), the pages to commit
    /// now: the dirty run before it when `written` does not follow it on disk,
    /// and the run ending at `written` once it is a whole cluster.
    /// `block_of(index)` is the disk block holding the file's page `index`.
    pub fn on_write(
        &self,
        cache: &PageCache,
        written: PageKey,
        block_of: impl Fn(u64) -> Option<BlockNumber>,
    ) -> Vec<PageKey> {
        let follows = |index: u64| -> bool {
            index > 0
                && matches!(
                    (block_of(index - 1), block_of(index)),
                    (Some(before), Some(this)) if before.plus(1) == this
                )
        };
        let is_dirty = |index: u64| {
            matches!(
                cache.state(PageKey {
                    file: written.file,
                    index
                }),
                Some(PageState::Dirty { .. })
            )
        };
        // The dirty run ending at `end` (inclusive), no longer than a cluster,
        // going back while pages are dirty and contiguous on disk.
        let run_ending_at = |end: u64| -> Vec<PageKey> {
            let mut first = end;
            while end - first + 1 < self.cluster_blocks && follows(first) && is_dirty(first - 1) {
                first -= 1;
            }
            (first..=end)
                .map(|index| PageKey {
                    file: written.file,
                    index,
                })
                .collect()
        };
        let mut commit = Vec::new();
        if !is_dirty(written.index) {
            return commit;
        }
        if written.index > 0 && !follows(written.index) && is_dirty(written.index - 1) {
            commit.extend(run_ending_at(written.index - 1));
        }
        let run = run_ending_at(written.index);
        if run.len() as u64 >= self.cluster_blocks {
            commit.extend(run);
        }
        commit
    }
}
