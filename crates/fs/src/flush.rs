//! When a program's dirty pages go to disk: the file system's write-back
//! policy as a [`Program`](crate::program::Program) applies it, with every
//! parameter's source.
//!
//! Three rules decide (see [`WritePolicy`]):
//! - **cluster commit** (FFS only): after each page written, the pages
//!   [`FfsClusterWriteback::on_write`] says are a complete cluster go down at
//!   once (traxtents §5.3: "FFS commits dirty buffers as soon as a complete
//!   cluster is created");
//! - **aging and background ratio** ([`LinuxWriteback`]): a periodic pass
//!   writes pages dirty for `expire`; when dirty pages exceed
//!   `background_percent` of the cache, a background pass writes the oldest
//!   ones, at least `background_chunk_pages` of them (Linux's pdflush); FFS's
//!   syncer is the same aging rule with its own interval and no background
//!   ratio;
//! - **writer throttle**: a writer that finds dirty and in-flight pages above
//!   `throttle_percent` of the cache starts write-back and waits until they
//!   drop below it (Linux `balance_dirty_pages`; FreeBSD `bwillwrite`).

use crate::writeback::{FfsClusterWriteback, LinuxWriteback};
use spinstack_sim::units::Nanoseconds;

/// One file system's write-back (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WritePolicy {
    /// FFS's cluster commit; `None` for Linux.
    pub cluster: Option<FfsClusterWriteback>,
    /// Aging, background ratio and throttle.
    pub aging: LinuxWriteback,
    /// Least pages a background pass writes when it runs.
    pub background_chunk_pages: usize,
    /// Longest write request, in pages (a dirty run longer than this is cut).
    pub max_request_pages: u64,
}

/// Linux 2.6.16's `MAX_WRITEBACK_PAGES` (mm/page-writeback.c): a background
/// pass writes 1024 pages before it checks the background ratio again.
pub const LINUX_WRITEBACK_CHUNK_PAGES: usize = 1024;
/// The largest request Linux sends a SCSI disk here, 1 MiB (256 pages of 4
/// KB; the same figure as `spinstack_volume::timed::PlugPolicy::linux26`'s
/// `max_request`, so the plug and write-back agree).
pub const LINUX_MAX_REQUEST_PAGES_4_KIB: u64 = 256;

/// FreeBSD's syncer: a dirty buffer is written once it has been dirty for
/// `filedelay` = 30 s; the syncer runs once a second (kern/vfs_subr.c,
/// `syncdelay` / `filedelay` = 30, one worklist slot per second).
pub const FREEBSD_SYNCER_DELAY: Nanoseconds = Nanoseconds(30_000_000_000);
pub const FREEBSD_SYNCER_INTERVAL: Nanoseconds = Nanoseconds(1_000_000_000);
/// Stands for FreeBSD 4.x's `hidirtybuffers`: a writer waits in `bwillwrite`
/// while more buffers than that are dirty. Known loose: a 4.x kern/vfs_bio.c
/// (`bufinit`) sets `hidirtybuffers = nbuf / 4 + 20`, and `nbuf` counts buffer
/// headers (1,483 or 2,917 on a 128 MB i386, by whether `BKVASIZE` is 16 or 8 KB),
/// so the bound is 390 or 749 buffers, 2.4% or 4.6% of a 128 MB cache's 8 KB
/// blocks, not a quarter of the cache; nor does the model have the buffer daemon
/// that starts writing halfway between `lodirtybuffers` and that bound
/// (table2-ffs's Postmark note measures what it would change). No pinned result
/// depends on this value (the copy's clusters go to disk as they complete). The
/// model counts in-flight writes too, so reads always find a clean page to
/// replace (FreeBSD 4.0 had no separate bound on in-flight writes).
pub const FREEBSD_HIDIRTY_PERCENT: u64 = 25;

impl WritePolicy {
    /// Linux 2.6.16: no cluster commit, [`LinuxWriteback::linux_2_6_16`]
    /// (30 s age, 5 s interval, 10% background, 40% throttle), 1024-page
    /// background passes, 1 MiB requests of 4 KB pages.
    pub fn linux_2_6_16() -> WritePolicy {
        WritePolicy {
            cluster: None,
            aging: LinuxWriteback::linux_2_6_16(),
            background_chunk_pages: LINUX_WRITEBACK_CHUNK_PAGES,
            max_request_pages: LINUX_MAX_REQUEST_PAGES_4_KIB,
        }
    }

    /// FreeBSD 4 FFS: clusters of `cluster_blocks` committed when complete
    /// (and requests no longer than one), the syncer's 30 s age checked every
    /// second, no background ratio, writers throttled at a quarter of the
    /// cache.
    pub fn freebsd_ffs(cluster_blocks: u64) -> WritePolicy {
        WritePolicy {
            cluster: Some(FfsClusterWriteback { cluster_blocks }),
            aging: LinuxWriteback {
                expire: FREEBSD_SYNCER_DELAY,
                interval: FREEBSD_SYNCER_INTERVAL,
                background_percent: 100,
                throttle_percent: FREEBSD_HIDIRTY_PERCENT,
            },
            background_chunk_pages: 0,
            max_request_pages: cluster_blocks.max(1),
        }
    }
}
