//! The appliers' unit of work: one window of log applied to the data volume
//! through the secondary's buffer pool, at most `queue_depth` page I/Os
//! outstanding per drive. The power-aware applier compacts the window first, so
//! each page is touched once and its misses and write-backs go out as ascending
//! sweeps; the conventional one applies in LSN order. What it costs is measured on
//! the drive model, never assumed.
//!
//! **Why sorting pays.** The paper (§3.2): "log sorting reorders log entries in the
//! window buffer to improve disk access sequentiality. In many cases, an entry of
//! database log has a physical reference to the target record. Log sorting
//! leverages such physical information." A sorted window's misses (and its
//! evicted pages) reach each drive in ascending order, and those that continue
//! one another go out as one request (`crate::volume::MAX_MERGED_PAGES`, as a
//! host's block layer merges them): a dense window becomes long sequential
//! transfers, a sparse one stays a sweep of short seeks. The same merging applies
//! to the LSN-order applier and the primary, whose neighbours rarely meet.

use crate::buffer_pool::BufferPool;
use crate::compact::{CompactionCounts, Compactor};
use crate::log::{log_bytes, LogRecord, PageId};
use crate::volume::{DataVolume, PageIo, VolumeError};
use serde::Serialize;
use spinstack_sim::request::Operation;
use spinstack_sim::units::Nanoseconds;

/// How many of `records` the first window of at most `window_bytes` takes (at
/// least one record).
pub fn first_window(records: &[LogRecord], window_bytes: u64) -> usize {
    let mut bytes = 0u64;
    for (index, record) in records.iter().enumerate() {
        bytes += u64::from(record.bytes);
        if bytes > window_bytes && index > 0 {
            return index;
        }
    }
    records.len()
}

/// Split `records` into consecutive windows of at most `window_bytes` of log each
/// (a record larger than the window gets a window of its own).
pub fn windows(records: &[LogRecord], window_bytes: u64) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0u64);
    for (index, record) in records.iter().enumerate() {
        let size = u64::from(record.bytes);
        if bytes + size > window_bytes && index > start {
            out.push(start..index);
            start = index;
            bytes = 0;
        }
        bytes += size;
    }
    if start < records.len() {
        out.push(start..records.len());
    }
    out
}

/// One window, compacted and applied.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct AppliedWindow {
    pub counts: CompactionCounts,
    pub page_ios: u64,
    /// Requests the page I/Os went out as (adjacent ones merged).
    pub requests: u64,
    pub started: Nanoseconds,
    pub finished: Nanoseconds,
}

/// Reusable state of the applier: the secondary's buffer pool (the same size as
/// the primary's; it survives a disaster at the primary, so dirty pages may stay in
/// it while the drives sleep) and the compactor's scratch space.
#[derive(Clone)]
pub struct Applier {
    compactor: Compactor,
    compacted: Vec<LogRecord>,
    pool: BufferPool,
    /// Compact and sort each window (power-aware); otherwise LSN order.
    compacting: bool,
    reads: Vec<u64>,
    writes: Vec<u64>,
}

impl Applier {
    /// An applier with a buffer pool of `frames` pages over `pages` pages;
    /// `compacting`: fold and sort each window (else apply in LSN order, as the
    /// conventional applier does).
    pub fn new(compacting: bool, frames: usize, pages: u64) -> Applier {
        Applier {
            compactor: Compactor::default(),
            compacted: Vec::new(),
            pool: BufferPool::new(frames, pages),
            compacting,
            reads: Vec::new(),
            writes: Vec::new(),
        }
    }

    /// Whether the buffer pool is full (its steady state: each miss evicts).
    pub fn pool_is_full(&self) -> bool {
        self.pool.is_full()
    }

    /// Run `records` through the buffer pool without I/O (to start it warm, as the
    /// primary's and the conventional applier's are).
    pub fn warm(&mut self, records: &[LogRecord]) {
        for record in records {
            self.pool.access(record.page, true);
        }
    }

    /// Apply `window` (compacted first when compacting) through the buffer pool on
    /// `volume`, from its clock's current time. Compacting: the misses are read in
    /// ascending page order, then the evicted dirty pages written in ascending
    /// order. In LSN order: each record's miss and write-back as they come.
    pub fn apply(
        &mut self,
        volume: &mut DataVolume,
        window: &[LogRecord],
        queue_depth: u32,
    ) -> Result<AppliedWindow, VolumeError> {
        let started = volume.engine.now();
        let io = |operation, page| PageIo {
            at: started,
            operation,
            page: PageId(page),
        };
        let (counts, ios): (CompactionCounts, Vec<PageIo>) = if self.compacting {
            let counts = self.compactor.compact(window, &mut self.compacted);
            self.reads.clear();
            self.writes.clear();
            for record in &self.compacted {
                let access = self.pool.access(record.page, true);
                if access.miss {
                    self.reads.push(record.page.0);
                }
                if let Some(victim) = access.write_back {
                    self.writes.push(victim.0);
                }
            }
            self.reads.dedup();
            self.writes.sort_unstable();
            let reads = self.reads.iter().map(|&p| io(Operation::Read, p));
            let writes = self.writes.iter().map(|&p| io(Operation::Write, p));
            (counts, reads.chain(writes).collect())
        } else {
            let mut ios = Vec::new();
            for record in window {
                let access = self.pool.access(record.page, true);
                if let Some(victim) = access.write_back {
                    ios.push(io(Operation::Write, victim.0));
                }
                if access.miss {
                    ios.push(io(Operation::Read, record.page.0));
                }
            }
            let counts = CompactionCounts {
                records_in: window.len() as u64,
                records_out: window.len() as u64,
                bytes_in: log_bytes(window),
                bytes_out: log_bytes(window),
                pages: 0,
            };
            (counts, ios)
        };
        let page_ios = ios.len() as u64;
        let queues = volume.queues(ios);
        let requests_before = volume.requests;
        let finished = volume.execute(queues, queue_depth)?;
        Ok(AppliedWindow {
            counts,
            page_ios,
            requests: volume.requests - requests_before,
            started,
            finished,
        })
    }
}

/// The applier's measured rate for one window size.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ApplyRate {
    pub window_bytes: u64,
    /// Log bytes (before compaction) applied per second.
    pub bytes_per_s: f64,
    pub windows_measured: usize,
    /// Records after / before compaction (of the simulated drives' records).
    pub records_kept: f64,
    /// Distinct pages per record before compaction (likewise).
    pub pages_per_record: f64,
    /// Page I/Os per record before compaction (likewise).
    pub page_ios_per_record: f64,
    /// Page I/Os per request (adjacent page I/Os merged into one request).
    pub pages_per_request: f64,
    /// Distinct pages a window touched over the simulated drives' pages.
    pub database_fraction_touched: f64,
    /// Mean time of one page I/O on a simulated drive, ms.
    pub ms_per_page_io: f64,
}

/// How a rate is measured.
#[derive(Clone, Copy, Debug)]
pub struct RateLimits {
    pub queue_depth: u32,
    pub max_windows: usize,
    /// Stop after the window that brings the page I/Os to this many.
    pub max_page_ios: u64,
    /// Simulate only the records of pages on the first this-many drives.
    pub simulated_drives: usize,
}

/// Apply `records` window by window on a fresh `volume` and measure the rate
/// (log bytes of the whole windows over the time the simulated drives took).
/// Windows applied before the buffer pool is full are not measured (a pool with
/// free frames evicts nothing, so it would flatter the rate); the log is replayed
/// (at most four times) until enough windows were measured.
pub fn measure_rate(
    applier: &mut Applier,
    volume: &mut DataVolume,
    records: &[LogRecord],
    window_bytes: u64,
    limits: RateLimits,
) -> Result<ApplyRate, VolumeError> {
    let RateLimits {
        queue_depth,
        max_windows,
        max_page_ios,
        simulated_drives,
    } = limits;
    let drives = volume.drives as u64;
    let mut sampled = Vec::new();
    let (mut bytes, mut time, mut ios, mut requests) = (0u64, 0u64, 0u64, 0u64);
    let (mut records_in, mut records_out, mut pages) = (0u64, 0u64, 0u64);
    let mut measured = 0;
    let ranges = windows(records, window_bytes);
    let laps = ranges.iter().cycle().take(ranges.len() * 4);
    // Windows applied while the pool still had free frames, measured only if it
    // never fills (the simulated drives' share of the database fits in it).
    let mut filling = (0u64, 0u64, 0u64, 0u64, 0u64, 0u64, 0usize, 0u64);
    for range in laps {
        if measured >= max_windows {
            break;
        }
        let window = &records[range.clone()];
        let steady = applier.pool_is_full();
        sampled.clear();
        sampled.extend(
            window
                .iter()
                .filter(|r| r.page.0 % drives < simulated_drives as u64),
        );
        let applied = applier.apply(volume, &sampled, queue_depth)?;
        if !steady {
            filling.0 += log_bytes(window);
            filling.1 += (applied.finished - applied.started).0;
            filling.2 += applied.counts.records_in;
            filling.3 += applied.counts.records_out;
            filling.4 += applied.counts.pages;
            filling.5 += applied.page_ios;
            filling.6 += 1;
            filling.7 += applied.requests;
            continue;
        }
        bytes += log_bytes(window);
        time += (applied.finished - applied.started).0;
        records_in += applied.counts.records_in;
        records_out += applied.counts.records_out;
        pages += applied.counts.pages;
        ios += applied.page_ios;
        requests += applied.requests;
        measured += 1;
        if ios >= max_page_ios {
            break;
        }
    }
    if measured == 0 {
        (
            bytes,
            time,
            records_in,
            records_out,
            pages,
            ios,
            measured,
            requests,
        ) = filling;
    }
    let simulated_pages = volume.pages.div_ceil(drives) * simulated_drives as u64;
    Ok(ApplyRate {
        window_bytes,
        bytes_per_s: bytes as f64 / (time as f64 / 1e9).max(1e-9),
        windows_measured: measured,
        records_kept: records_out as f64 / records_in.max(1) as f64,
        pages_per_record: pages as f64 / records_in.max(1) as f64,
        page_ios_per_record: ios as f64 / records_in.max(1) as f64,
        pages_per_request: ios as f64 / requests.max(1) as f64,
        database_fraction_touched: pages as f64
            / measured.max(1) as f64
            / simulated_pages.max(1) as f64,
        ms_per_page_io: time as f64 / 1e6 * simulated_drives as f64 / ios.max(1) as f64,
    })
}
