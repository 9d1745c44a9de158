//! The first applications: one process reading files from start to end
//! through the page cache and a read-ahead policy per file — one file (a
//! linear scan) or several in turn (`diff --speed-large-files` reads its two
//! files alternately) — as a [`Host`] of the workspace's one event loop
//! (`spinstack_sim::driver::run`), over any [`BlockDevice`] (a drive, or a
//! volume with its plug and host cost per device I/O:
//! `spinstack_volume::timed::Striped::single` is one drive).
//!
//! Each `read` system call asks one file for `read_pages` pages; the files take
//! turns, one call each, until all are read. The file's read-ahead policy plans
//! demand and read-ahead pages; adjacent planned runs are joined (demand and
//! the read-ahead after it go down together), and each is cut where the file
//! is not contiguous on disk and issued as one request. The call copies each of its
//! pages as soon as it is cached (a page evicted before being copied is
//! fetched again) and returns when all are copied, after the CPU time of the
//! call and of copying its pages ([`ReadCost`]). A file with indirect blocks
//! ([`ScannedFile::indirect`]) has the ones its planned pages need read first,
//! one request each, waited for in turn ([`crate::indirect`]). What is
//! simplified: one process, no inode or directory reads, no write-back, no
//! time comparing the data; a page fetched again after its eviction is
//! assumed still mapped.
//!
//! The reader's state machine:
//!
//! | state | event | next |
//! |---|---|---|
//! | `Ready` (at a file's page) | the plan needs an indirect block not cached | `Mapping`; the block is fetched (or already on its way) and the device unplugged |
//! | `Mapping` | the block arrives | asks again: `Mapping` for the next block, else the plan is issued and on as from `Ready` |
//! | `Ready` (at a file's page) | the call's pages are cached (and so copied) | `Copying` until the CPU is done |
//! | `Ready` | a page is missing (now fetched or in flight) | `Waiting`; the device below is told to unplug (`Control::Unplug`) |
//! | `Waiting` | a completion brings the last page not yet copied | `Copying` |
//! | `Copying` | its wake-up | `Ready` at the next file's next page, or `Done` when every file is read |

use crate::block::{BlockNumber, BlockRun, BlockSize};
use crate::cache::{PageCache, PageKey};
use crate::indirect::{cache_block, IndirectMap, Mapping};
use crate::readahead::{FileView, PageRange, ReadAhead};
use crate::view::LaidOutFile;
use crate::FileId;
use spinstack_sim::device::{BlockDevice, Control};
use spinstack_sim::driver::{Host, Io, Issue};
use spinstack_sim::engine::{DeviceCompletion, DeviceId, EngineError};
use spinstack_sim::request::{DriveDetail, Operation, RequestId};
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
    /// The traxtents paper's host (a 550 MHz Pentium III under FreeBSD) was not
    /// measured; this is the nearest published figure of that era. The Linux
    /// validation paper's Pentium D 830 has its own estimate
    /// (`spinstack_volume::timed::HostCost::pentium_d_830_buffered`), which the
    /// lab passes in as a `ReadCost` of its own.
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
    Mapping,
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
    /// Where the drive spent the request's time, when the device below is a
    /// drive that says (a volume layer's completions do not carry it).
    pub drive: Option<DriveDetail>,
    /// An indirect block, not file data.
    pub metadata: bool,
}

impl ScanRequest {
    /// A request just issued (`metadata`: an indirect block).
    fn issued(lbn: Lbn, sectors: Sectors, now: Nanoseconds, metadata: bool) -> ScanRequest {
        ScanRequest {
            lbn,
            sectors,
            issued: now,
            done: None,
            drive: None,
            metadata,
        }
    }
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

/// A file to scan: its blocks (one page per block), its indirect blocks and
/// its read-ahead.
pub struct ScannedFile<'a> {
    pub runs: &'a [BlockRun],
    /// `None`: every page is mapped without reading anything.
    pub indirect: Option<IndirectMap<'a>>,
    pub read_ahead: ReadAhead,
}

struct Cursor<'a> {
    runs: &'a [BlockRun],
    indirect: Option<IndirectMap<'a>>,
    read_ahead: ReadAhead,
    page_count: u64,
    /// Where the reader stops: the file's end, or the scan's read limit.
    read_end: u64,
    position: u64,
}

/// What a scan reads through and pays (see the module documentation).
pub struct ScanSetup<'a> {
    /// The device in the engine.
    pub device: DeviceId,
    /// The volume's track map (for track-aligned read-ahead).
    pub map: &'a TrackMap,
    pub block_size: BlockSize,
    /// Pages per `read` call.
    pub read_pages: u64,
    pub cost: ReadCost,
    pub cache: PageCache,
}

/// Files read in turn, one call each (see the module documentation).
pub struct Scan<'a> {
    setup: ScanSetup<'a>,
    files: Vec<Cursor<'a>>,
    turn: usize,
    /// Each request's file, pages and index in the report.
    in_flight: HashMap<RequestId, (usize, Vec<u64>, usize)>,
    /// Indirect blocks being read, with their index in the report.
    metadata_in_flight: HashMap<RequestId, (BlockNumber, usize)>,
    /// The current call's planned runs, held until their pages are mapped.
    deferred: Vec<PageRange>,
    pending: HashSet<PageKey>,
    /// Pages of the current call already copied to the reader (Linux copies
    /// each page as soon as it is up to date, so a page evicted afterwards is
    /// not needed again).
    copied: HashSet<u64>,
    state: Reader,
    cpu_free_at: Nanoseconds,
    report: ScanReport,
}

impl<'a> Scan<'a> {
    /// A scan of `files`, file `k` cached as [`FileId`]`(k)`.
    pub fn new(setup: ScanSetup<'a>, files: Vec<ScannedFile<'a>>) -> Scan<'a> {
        let files = files
            .into_iter()
            .map(|file| Cursor {
                runs: file.runs,
                indirect: file.indirect,
                read_ahead: file.read_ahead,
                page_count: file.runs.iter().map(|r| r.blocks).sum(),
                read_end: file.runs.iter().map(|r| r.blocks).sum(),
                position: 0,
            })
            .collect();
        Scan {
            setup: ScanSetup {
                read_pages: setup.read_pages.max(1),
                ..setup
            },
            files,
            turn: 0,
            in_flight: HashMap::new(),
            metadata_in_flight: HashMap::new(),
            deferred: Vec::new(),
            pending: HashSet::new(),
            copied: HashSet::new(),
            state: Reader::Ready,
            cpu_free_at: Nanoseconds::ZERO,
            report: ScanReport::default(),
        }
    }

    /// Reads only the first `pages` pages of each file (`head` reads one
    /// call's worth); read-ahead still sees the whole file.
    pub fn with_read_limit(mut self, pages: u64) -> Scan<'a> {
        for cursor in &mut self.files {
            cursor.read_end = cursor.page_count.min(pages);
        }
        self
    }

    pub fn report(&self) -> &ScanReport {
        &self.report
    }

    fn key(file: usize, index: u64) -> PageKey {
        PageKey {
            file: FileId(file as u64),
            index,
        }
    }

    /// The pages of the current call.
    fn call_pages(&self) -> std::ops::Range<u64> {
        let cursor = &self.files[self.turn];
        cursor.position..(cursor.position + self.setup.read_pages).min(cursor.read_end)
    }

    /// The next file with pages left after `from` (cyclically, `from` last).
    fn next_turn(&self, from: usize) -> Option<usize> {
        let count = self.files.len();
        (1..=count)
            .map(|step| (from + step) % count)
            .find(|&k| self.files[k].position < self.files[k].read_end)
    }

    /// `Ready`: plan, issue, and either start copying or wait.
    fn read<D: BlockDevice>(&mut self, io: &mut Io<'_, D>) -> Result<(), EngineError> {
        let turn = self.turn;
        let plan = {
            let (cache, pending) = (&self.setup.cache, &self.pending);
            let resident = |index: u64| {
                let key = Scan::key(turn, index);
                pending.contains(&key) || cache.contains(key)
            };
            let cursor = &mut self.files[turn];
            let view =
                LaidOutFile::new(cursor.runs, self.setup.map, self.setup.block_size, resident);
            cursor
                .read_ahead
                .on_read(&view, cursor.position, self.setup.read_pages)
        };
        self.deferred = joined(plan.demand.iter().chain(&plan.read_ahead).copied());
        self.report.calls += 1;
        self.map_then_issue(io)
    }

    /// Issues the call's planned runs once the indirect blocks they need are
    /// cached, else fetches (or waits for) the next one (`Mapping`).
    fn map_then_issue<D: BlockDevice>(&mut self, io: &mut Io<'_, D>) -> Result<(), EngineError> {
        let turn = self.turn;
        if let Some(map) = self.files[turn].indirect {
            let in_flight = &self.metadata_in_flight;
            match map.next_needed(&self.deferred, &mut self.setup.cache, |block| {
                in_flight.values().any(|&(fetching, _)| fetching == block)
            }) {
                Mapping::Mapped => {}
                Mapping::Wait(_) => {
                    self.state = Reader::Mapping;
                    return Ok(());
                }
                Mapping::Fetch(block) => {
                    self.fetch_indirect(block, io)?;
                    self.state = Reader::Mapping;
                    // A synchronous read: the reader waits, so the queue runs.
                    return io.control(self.setup.device, &[], Control::Unplug);
                }
            }
        }
        for range in std::mem::take(&mut self.deferred) {
            self.issue(turn, range, io)?;
        }
        self.state = Reader::Ready;
        self.finish_or_wait(io)
    }

    /// Reads one indirect block.
    fn fetch_indirect<D: BlockDevice>(
        &mut self,
        block: BlockNumber,
        io: &mut Io<'_, D>,
    ) -> Result<(), EngineError> {
        let lbn = self.setup.block_size.first_lbn(block);
        let sectors = self.setup.block_size.sectors();
        let id = io.submit(self.setup.device, Issue::new(Operation::Read, lbn, sectors))?;
        self.metadata_in_flight
            .insert(id, (block, self.report.requests.len()));
        self.report
            .requests
            .push(ScanRequest::issued(lbn, sectors, io.now(), true));
        Ok(())
    }

    /// Copies the call's page `index` if it is cached.
    fn copy_if_cached(&mut self, index: u64) {
        let key = Scan::key(self.turn, index);
        if self.call_pages().contains(&index) && self.setup.cache.access(key) {
            self.copied.insert(index);
        }
    }

    fn finish_or_wait<D: BlockDevice>(&mut self, io: &mut Io<'_, D>) -> Result<(), EngineError> {
        let turn = self.turn;
        for index in self.call_pages() {
            if !self.copied.contains(&index) {
                self.copy_if_cached(index);
            }
        }
        let missing: Vec<u64> = self
            .call_pages()
            .filter(|index| !self.copied.contains(index))
            .collect();
        if !missing.is_empty() {
            // A page evicted before the call copied it is fetched again.
            let lost: Vec<u64> = missing
                .into_iter()
                .filter(|&index| !self.pending.contains(&Scan::key(turn, index)))
                .collect();
            for first in lost {
                self.issue(turn, PageRange { first, pages: 1 }, io)?;
            }
            if self.state != Reader::Waiting {
                // Linux runs the queue when a process waits for a page, instead
                // of leaving the request to the unplug timer.
                io.control(self.setup.device, &[], Control::Unplug)?;
            }
            self.state = Reader::Waiting;
            return Ok(());
        }
        self.copied.clear();
        let kib = self.call_pages().count() as u64 * self.setup.block_size.bytes() / 1024;
        let cpu = Nanoseconds(self.setup.cost.per_call.0 + self.setup.cost.per_kib.0 * kib);
        let start = self.cpu_free_at.max(io.now());
        self.cpu_free_at = start + cpu;
        self.report.cpu += cpu;
        self.state = Reader::Copying;
        io.wake_at(self.cpu_free_at, 0)
    }

    /// Issues the pages of `range` of file `turn`, one request per
    /// disk-contiguous piece.
    fn issue<D: BlockDevice>(
        &mut self,
        turn: usize,
        range: PageRange,
        io: &mut Io<'_, D>,
    ) -> Result<(), EngineError> {
        let block_size = self.setup.block_size;
        let view = LaidOutFile::new(self.files[turn].runs, self.setup.map, block_size, |_| false);
        let mut index = range.first;
        while index < range.end() {
            let block = view.block_of(index).expect("plans stay inside the file");
            let pages = view.contiguous_from(index).min(range.end() - index);
            let lbn = block_size.first_lbn(block);
            let sectors = Sectors(pages * block_size.sectors().0);
            let id = io.submit(self.setup.device, Issue::new(Operation::Read, lbn, sectors))?;
            let indices: Vec<u64> = (index..index + pages).collect();
            self.pending
                .extend(indices.iter().map(|&i| Scan::key(turn, i)));
            self.in_flight
                .insert(id, (turn, indices, self.report.requests.len()));
            self.report
                .requests
                .push(ScanRequest::issued(lbn, sectors, io.now(), false));
            self.report.pages_fetched += pages;
            index += pages;
        }
        Ok(())
    }
}

/// The plan's runs with adjacent ones joined: the demand pages and the
/// read-ahead that follows them go down as one request where the file is
/// contiguous, as FreeBSD's `cluster_read` builds one cluster from the demand
/// block on and Linux's `mpage_readpages` submits one bio for a window that
/// holds the demand page.
pub(crate) fn joined(ranges: impl Iterator<Item = PageRange>) -> Vec<PageRange> {
    let mut sorted: Vec<PageRange> = ranges.filter(|r| r.pages > 0).collect();
    sorted.sort_by_key(|r| r.first);
    let mut out: Vec<PageRange> = Vec::new();
    for range in sorted {
        match out.last_mut() {
            Some(last) if last.end() == range.first => last.pages += range.pages,
            _ => out.push(range),
        }
    }
    out
}

impl<D: BlockDevice> Host<D> for Scan<'_> {
    type Error = EngineError;

    fn start(&mut self, io: &mut Io<'_, D>) -> Result<(), EngineError> {
        match self.next_turn(self.files.len().saturating_sub(1)) {
            Some(turn) => {
                self.turn = turn;
                self.read(io)
            }
            None => {
                self.state = Reader::Done;
                Ok(())
            }
        }
    }

    fn completed(
        &mut self,
        done: &DeviceCompletion,
        io: &mut Io<'_, D>,
    ) -> Result<(), EngineError> {
        if let Some((block, number)) = self.metadata_in_flight.remove(&done.completion.request.id) {
            self.report.requests[number].done = Some(io.now());
            self.report.requests[number].drive = done.completion.drive;
            cache_block(&mut self.setup.cache, block);
            if self.state == Reader::Mapping {
                return self.map_then_issue(io);
            }
            return Ok(());
        }
        let Some((file, indices, number)) = self.in_flight.remove(&done.completion.request.id)
        else {
            return Ok(());
        };
        self.report.requests[number].done = Some(io.now());
        self.report.requests[number].drive = done.completion.drive;
        for index in indices {
            let key = Scan::key(file, index);
            self.pending.remove(&key);
            // Read pages are clean: the cache can always make room for them.
            let _ = self.setup.cache.insert(key);
            if self.state == Reader::Waiting && file == self.turn {
                self.copy_if_cached(index);
            }
        }
        if self.state == Reader::Waiting {
            self.finish_or_wait(io)?;
        }
        Ok(())
    }

    fn woke(&mut self, _token: u64, io: &mut Io<'_, D>) -> Result<(), EngineError> {
        self.report.elapsed = io.now();
        let end = self.call_pages().end;
        self.files[self.turn].position = end;
        match self.next_turn(self.turn) {
            Some(turn) => {
                self.turn = turn;
                self.state = Reader::Ready;
                self.read(io)
            }
            None => {
                self.state = Reader::Done;
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Proves the demand run and the read-ahead right after it become one run,
    // while a gap (a resident page between them) keeps two.
    #[test]
    fn adjacent_runs_are_joined_and_gaps_kept() {
        let run = |first, pages| PageRange { first, pages };
        let plan = [run(0, 1), run(1, 19), run(21, 4)];
        assert_eq!(joined(plan.into_iter()), vec![run(0, 20), run(21, 4)]);
        assert_eq!(joined([run(5, 0)].into_iter()), vec![]);
    }
}
