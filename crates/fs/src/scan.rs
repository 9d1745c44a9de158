//! The first application: one process reading a file from start to end
//! through the page cache and a read-ahead policy, as a [`Host`] of the
//! workspace's one event loop (`spinstack_sim::driver::run`), over any
//! [`BlockDevice`] (a drive, or a volume with its plug and host cost per
//! device I/O: `spinstack_volume::timed::Striped::single` is one drive).
//!
//! Each `read` system call asks for `read_pages` pages. The read-ahead policy
//! plans demand and read-ahead pages; each planned run is cut where the file
//! is not contiguous on disk and issued as one request. The call returns when
//! its pages are all cached, after the CPU time of the call and of copying its
//! pages ([`ReadCost`]). What is simplified: one reader, no other process, no
//! metadata (inode, indirect block) reads, no write-back.
//!
//! The reader's state machine:
//!
//! | state | event | next |
//! |---|---|---|
//! | `Ready` (at a page) | the call's pages are cached | `Copying` until the CPU is done |
//! | `Ready` | a page is missing (now fetched or in flight) | `Waiting`; the device below is told to unplug (`Control::Unplug`) |
//! | `Waiting` | a completion brings the last missing page | `Copying` |
//! | `Copying` | its wake-up | `Ready` at the next page, or `Done` at the end |

use crate::block::{BlockRun, BlockSize};
use crate::cache::{PageCache, PageKey};
use crate::readahead::{PageRange, ReadAhead};
use crate::view::LaidOutFile;
use crate::FileId;
use spinstack_sim::device::{BlockDevice, Control};
use spinstack_sim::driver::{Host, Io, Issue};
use spinstack_sim::engine::{DeviceCompletion, DeviceId, EngineError};
use spinstack_sim::request::{Operation, RequestId};
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors};
use spinstack_trackmap::TrackMap;
use std::collections::{HashMap, HashSet};

/// CPU time of a `read` call: `per_call` plus `per_kib` for each KiB copied
/// out of the cache. The caller states the source of its figures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadCost {
    pub per_call: Nanoseconds,
    pub per_kib: Nanoseconds,
}

impl ReadCost {
    /// A buffered read served from the file cache on a 733 MHz Pentium III:
    /// 12 µs per call + 6 µs per KB copied (Chung, Gray, Worthington and Horst,
    /// "Windows 2000 Disk IO Performance", MSR-TR-2000-55, Table 11; the same
    /// figure `spinstack_volume::timed::HostCost::windows2000_buffered` uses).
    /// The papers' hosts (a 550 MHz Pentium III under FreeBSD; Linux 2.6.16)
    /// were not measured; this is the nearest published figure of that era.
    pub fn pentium3_buffered() -> ReadCost {
        ReadCost {
            per_call: Nanoseconds::from_us(12),
            per_kib: Nanoseconds::from_us(6),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reader {
    Ready,
    Waiting,
    Copying,
    Done,
}

/// One disk request of a scan: where, how long, when issued and completed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScanRequest {
    pub lbn: Lbn,
    pub sectors: Sectors,
    pub issued: Nanoseconds,
    /// `None` until it completes.
    pub done: Option<Nanoseconds>,
}

/// What the scan did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScanReport {
    /// When the last call returned.
    pub elapsed: Nanoseconds,
    pub calls: u64,
    /// Every disk request, in issue order.
    pub requests: Vec<ScanRequest>,
    /// Pages fetched from disk (a page fetched twice counts twice).
    pub pages_fetched: u64,
    pub cpu: Nanoseconds,
}

/// A linear scan of one file (see the module documentation).
pub struct LinearScan<'a> {
    device: DeviceId,
    file: FileId,
    runs: &'a [BlockRun],
    map: &'a TrackMap,
    block_size: BlockSize,
    page_count: u64,
    read_pages: u64,
    cost: ReadCost,
    cache: PageCache,
    read_ahead: ReadAhead,
    /// Each request's pages and its index in the report.
    in_flight: HashMap<RequestId, (Vec<u64>, usize)>,
    pending: HashSet<u64>,
    position: u64,
    state: Reader,
    cpu_free_at: Nanoseconds,
    report: ScanReport,
}

impl<'a> LinearScan<'a> {
    /// A scan of the file whose blocks are `runs` (one page per block), on the
    /// volume `map` describes, which the engine knows as `device`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        device: DeviceId,
        runs: &'a [BlockRun],
        map: &'a TrackMap,
        block_size: BlockSize,
        read_pages: u64,
        cost: ReadCost,
        cache: PageCache,
        read_ahead: ReadAhead,
    ) -> LinearScan<'a> {
        LinearScan {
            device,
            file: FileId(0),
            runs,
            map,
            block_size,
            page_count: runs.iter().map(|r| r.blocks).sum(),
            read_pages: read_pages.max(1),
            cost,
            cache,
            read_ahead,
            in_flight: HashMap::new(),
            pending: HashSet::new(),
            position: 0,
            state: Reader::Ready,
            cpu_free_at: Nanoseconds::ZERO,
            report: ScanReport::default(),
        }
    }

    pub fn report(&self) -> &ScanReport {
        &self.report
    }

    fn key(&self, index: u64) -> PageKey {
        PageKey {
            file: self.file,
            index,
        }
    }

    /// The pages of the current call.
    fn call_pages(&self) -> std::ops::Range<u64> {
        self.position..(self.position + self.read_pages).min(self.page_count)
    }

    /// `Ready`: plan, issue, and either start copying or wait.
    fn read<D: BlockDevice>(&mut self, io: &mut Io<'_, D>) -> Result<(), EngineError> {
        if self.position >= self.page_count {
            self.state = Reader::Done;
            return Ok(());
        }
        let plan = {
            let (cache, pending, file) = (&self.cache, &self.pending, self.file);
            let resident =
                |index: u64| pending.contains(&index) || cache.contains(PageKey { file, index });
            let view = LaidOutFile::new(self.runs, self.map, self.block_size, resident);
            self.read_ahead
                .on_read(&view, self.position, self.read_pages)
        };
        for range in plan.demand.iter().chain(&plan.read_ahead) {
            self.issue(*range, io)?;
        }
        self.report.calls += 1;
        self.finish_or_wait(io)
    }

    fn finish_or_wait<D: BlockDevice>(&mut self, io: &mut Io<'_, D>) -> Result<(), EngineError> {
        let missing: Vec<u64> = self
            .call_pages()
            .filter(|&index| !self.cache.contains(self.key(index)))
            .collect();
        if !missing.is_empty() {
            // A page evicted before the call copied it is fetched again.
            let lost: Vec<u64> = missing
                .into_iter()
                .filter(|i| !self.pending.contains(i))
                .collect();
            for first in lost {
                self.issue(PageRange { first, pages: 1 }, io)?;
            }
            if self.state != Reader::Waiting {
                // Linux runs the queue when a process waits for a page, instead
                // of leaving the request to the unplug timer.
                io.control(self.device, &[], Control::Unplug)?;
            }
            self.state = Reader::Waiting;
            return Ok(());
        }
        for index in self.call_pages() {
            self.cache.access(self.key(index));
        }
        let kib = self.call_pages().count() as u64 * self.block_size.bytes() / 1024;
        let cpu = Nanoseconds(self.cost.per_call.0 + self.cost.per_kib.0 * kib);
        let start = self.cpu_free_at.max(io.now());
        self.cpu_free_at = start + cpu;
        self.report.cpu += cpu;
        self.state = Reader::Copying;
        io.wake_at(self.cpu_free_at, 0)
    }

    /// Issues the pages of `range`, one request per disk-contiguous piece.
    fn issue<D: BlockDevice>(
        &mut self,
        range: PageRange,
        io: &mut Io<'_, D>,
    ) -> Result<(), EngineError> {
        let view = LaidOutFile::new(self.runs, self.map, self.block_size, |_| false);
        let mut index = range.first;
        while index < range.end() {
            let block = view.block_of(index).expect("plans stay inside the file");
            let pages = {
                use crate::readahead::FileView;
                view.contiguous_from(index).min(range.end() - index)
            };
            let lbn = self.block_size.first_lbn(block);
            let sectors = Sectors(pages * self.block_size.sectors().0);
            let id = io.submit(self.device, Issue::new(Operation::Read, lbn, sectors))?;
            let indices: Vec<u64> = (index..index + pages).collect();
            self.pending.extend(indices.iter().copied());
            self.in_flight
                .insert(id, (indices, self.report.requests.len()));
            self.report.requests.push(ScanRequest {
                lbn,
                sectors,
                issued: io.now(),
                done: None,
            });
            self.report.pages_fetched += pages;
            index += pages;
        }
        Ok(())
    }
}

impl<D: BlockDevice> Host<D> for LinearScan<'_> {
    type Error = EngineError;

    fn start(&mut self, io: &mut Io<'_, D>) -> Result<(), EngineError> {
        self.read(io)
    }

    fn completed(
        &mut self,
        done: &DeviceCompletion,
        io: &mut Io<'_, D>,
    ) -> Result<(), EngineError> {
        let Some((indices, number)) = self.in_flight.remove(&done.completion.request.id) else {
            return Ok(());
        };
        self.report.requests[number].done = Some(io.now());
        for index in indices {
            self.pending.remove(&index);
            // Read pages are clean: the cache can always make room for them.
            let _ = self.cache.insert(self.key(index));
        }
        if self.state == Reader::Waiting {
            self.finish_or_wait(io)?;
        }
        Ok(())
    }

    fn woke(&mut self, _token: u64, io: &mut Io<'_, D>) -> Result<(), EngineError> {
        self.report.elapsed = io.now();
        self.position = self.call_pages().end;
        self.state = Reader::Ready;
        self.read(io)
    }
}
