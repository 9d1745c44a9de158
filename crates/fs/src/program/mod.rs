//! Programs that read and write files: one process running a list of
//! [`Step`]s (create, read, write, close, delete, a synchronous metadata
//! write, a time mark, sync) through the page cache, the file system's
//! allocator, read-ahead and write-back ([`WritePolicy`]), as a [`Host`] of
//! the one event loop over any [`BlockDevice`]. Copy, Postmark and Bonnie's
//! block write are lists of steps (`crate::postmark` builds Postmark's).
//!
//! **Reads** work as in [`crate::scan`]: the file's read-ahead policy plans,
//! adjacent runs are joined and cut where the file is not contiguous on disk,
//! the call waits until each of its pages has been cached (a page evicted
//! before being copied is fetched again). **Writes** allocate the blocks a file
//! lacks (the allocator decides where, with its preallocation), dirty the
//! pages in the cache, then apply the write-back policy: FFS commits complete
//! clusters at once; a background pass starts when dirty pages pass the
//! background ratio; a writer above the throttle starts write-back and waits.
//! Write-back sends each file's pages as disk-contiguous runs of at most
//! `max_request_pages`. A periodic pass writes pages older than the age limit,
//! and keeps running after the last step until every page is clean. Every
//! call costs CPU time ([`ReadCost`], per call and per KiB copied; writes are
//! charged the same figure).
//!
//! The process's state machine:
//!
//! | state | event | next |
//! |---|---|---|
//! | `Ready` | a step that needs nothing from the disk | `Computing` (CPU time of the call) |
//! | `Ready` | a read misses, a metadata write is issued, a writer is throttled, a sync finds unclean pages | `Waiting`; the device is told to unplug |
//! | `Waiting` | the completion that satisfies the wait | `Ready` again at the same step (which now completes) |
//! | `Computing` | its wake-up | `Ready` at the next step, or `Done` after the last |
//!
//! The model tracks page identity, not bytes: `disk` records which file page
//! each block last received, so a read that brings in a block written by the
//! program can be checked against the page it is read for.
//!
//! **What it does not do.** One process; no directory lookups, inode reads,
//! indirect blocks or fragments: metadata reaches the disk only as the
//! [`Step::MetadataWrite`]s a program lists. Allocation happens when a page
//! is first written (FFS allocates when a cluster is committed, the same
//! blocks on an unfragmented volume). Whether a write completes when the
//! drive has it buffered or on the media is the device's setting. A step
//! that names a file not open, reads past a file's end or writes leaving a
//! hole stops the program with an error naming the step.

use crate::block::{BlockNumber, BlockRun, BlockSize};
use crate::cache::{CacheError, PageCache, PageKey, PageState};
use crate::flush::WritePolicy;
use crate::readahead::{Policy, ReadAhead};
use crate::scan::ReadCost;
use crate::{AllocError, Allocator, FileId};
use spinstack_sim::device::{BlockDevice, Control};
use spinstack_sim::driver::{Host, Io};
use spinstack_sim::engine::{DeviceCompletion, DeviceId, EngineError};
use spinstack_sim::request::{DriveDetail, Operation, RequestId, Status};
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors};
use spinstack_trackmap::TrackMap;
use std::collections::{HashMap, HashSet};

mod read;
mod write;

/// A program's name for a file (an index into its file table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileHandle(pub usize);

/// One system call or event of a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// A new empty file whose blocks start in `group`.
    Create { file: FileHandle, group: usize },
    /// One `read` of pages `[first, first + pages)`.
    Read {
        file: FileHandle,
        first: u64,
        pages: u64,
    },
    /// One `write` of pages `[first, first + pages)`; `first` may be at most
    /// the file's length in pages (no holes).
    Write {
        file: FileHandle,
        first: u64,
        pages: u64,
    },
    /// The file is closed: its preallocation is released.
    Close { file: FileHandle },
    /// The file is removed: its pages leave the cache, its blocks are freed.
    Delete { file: FileHandle },
    /// A synchronous write of one metadata block (an inode or a directory
    /// block), waited for.
    MetadataWrite { block: BlockNumber },
    /// Records the time in the report's `marks`.
    Mark,
    /// Waits until no page is dirty or being written back.
    Sync,
}

/// Why a program stopped.
#[derive(Debug, thiserror::Error)]
pub enum ProgramError {
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("step {step}: {source}")]
    Allocation { step: usize, source: AllocError },
    #[error("step {step}: {source}")]
    Cache { step: usize, source: CacheError },
    #[error("step {step}: file {file:?} is not open (never created, or deleted)")]
    NoSuchFile { step: usize, file: FileHandle },
    #[error("write-back stalled: {dirty_pages} pages still dirty {stalled:?} after the last step and no page written since {since:?} (a bookkeeping bug: after the last step every dirty page ages out within one age limit and interval)")]
    WriteBackStalled {
        dirty_pages: usize,
        stalled: Nanoseconds,
        since: Nanoseconds,
    },
    #[error("step {step}: file {file:?} already exists")]
    FileExists { step: usize, file: FileHandle },
    #[error("step {step}: pages {first}..{end} are outside file {file:?} of {length} pages (reads stay inside, writes leave no hole)")]
    OutsideFile {
        step: usize,
        file: FileHandle,
        first: u64,
        end: u64,
        length: u64,
    },
    #[error("the device failed a {operation:?} of {sectors:?} at {lbn:?}: {status:?}")]
    Device {
        operation: Operation,
        lbn: Lbn,
        sectors: Sectors,
        status: Status,
    },
}

/// One disk request of a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProgramRequest {
    pub operation: Operation,
    pub lbn: Lbn,
    pub sectors: Sectors,
    pub issued: Nanoseconds,
    pub done: Option<Nanoseconds>,
    pub drive: Option<DriveDetail>,
    /// A synchronous metadata write (else file data).
    pub metadata: bool,
}

/// What a program did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProgramReport {
    /// When the last step finished.
    pub elapsed: Nanoseconds,
    /// The time of each [`Step::Mark`], in order.
    pub marks: Vec<Nanoseconds>,
    pub requests: Vec<ProgramRequest>,
    pub pages_read: u64,
    pub pages_written: u64,
    pub cpu: Nanoseconds,
    /// Most pages the cache held at once.
    pub most_cached_pages: usize,
    /// Reads that brought in a block whose last write was another page.
    pub misread_pages: u64,
    /// Time the process spent throttled by write-back.
    pub throttled: Nanoseconds,
}

/// What a program runs over.
pub struct ProgramSetup<'a> {
    pub device: DeviceId,
    pub map: &'a TrackMap,
    pub allocator: Allocator,
    pub cache: PageCache,
    pub writeback: WritePolicy,
    /// Read-ahead policy of every file the program opens.
    pub read_ahead: Policy,
    pub cost: ReadCost,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Process {
    Ready,
    Waiting,
    Computing,
    Done,
}

struct OpenFile {
    id: FileId,
    runs: Vec<BlockRun>,
    read_ahead: ReadAhead,
}

impl OpenFile {
    fn pages(&self) -> u64 {
        self.runs.iter().map(|r| r.blocks).sum()
    }
}

/// What a request in flight carries.
struct InFlight {
    operation: Operation,
    keys: Vec<PageKey>,
    blocks: Vec<BlockNumber>,
    number: usize,
}

const WAKE_CPU: u64 = 0;
const WAKE_PERIODIC: u64 = 1;

/// The program host (see the module documentation).
pub struct Program<'a> {
    setup: ProgramSetup<'a>,
    steps: Vec<Step>,
    next: usize,
    files: Vec<Option<OpenFile>>,
    state: Process,
    in_flight: HashMap<RequestId, InFlight>,
    pending_reads: HashSet<PageKey>,
    /// Pages of the current read call already copied out.
    copied: HashSet<u64>,
    /// Pages of the current write call already dirtied.
    written: u64,
    /// A synchronous metadata write the process waits for.
    waiting_for: Option<RequestId>,
    /// The current step's metadata write was issued.
    metadata_issued: bool,
    /// The current read call's plan was issued.
    call_planned: bool,
    waiting_since: Nanoseconds,
    periodic_armed: bool,
    /// Write-back's progress at the last periodic pass that saw any: (pages
    /// written, pages dirty, when). See [`Program::check_write_back_progress`].
    progress_mark: (u64, usize, Nanoseconds),
    cpu_free_at: Nanoseconds,
    disk: HashMap<BlockNumber, PageKey>,
    report: ProgramReport,
}

impl<'a> Program<'a> {
    pub fn new(setup: ProgramSetup<'a>, steps: Vec<Step>) -> Program<'a> {
        Program {
            setup,
            steps,
            next: 0,
            files: Vec::new(),
            state: Process::Ready,
            in_flight: HashMap::new(),
            pending_reads: HashSet::new(),
            copied: HashSet::new(),
            written: 0,
            waiting_for: None,
            metadata_issued: false,
            call_planned: false,
            waiting_since: Nanoseconds::ZERO,
            periodic_armed: false,
            progress_mark: (0, 0, Nanoseconds::ZERO),
            cpu_free_at: Nanoseconds::ZERO,
            disk: HashMap::new(),
            report: ProgramReport::default(),
        }
    }

    /// Opens a file the allocator already holds (made before the program ran,
    /// not cached) as `handle`.
    pub fn with_existing(mut self, handle: FileHandle, id: FileId) -> Program<'a> {
        let runs = self.setup.allocator.runs(id).unwrap_or_default().to_vec();
        self.slot(handle);
        self.files[handle.0] = Some(OpenFile {
            id,
            runs,
            read_ahead: ReadAhead::new(self.setup.read_ahead),
        });
        self
    }

    pub fn report(&self) -> &ProgramReport {
        &self.report
    }
    pub fn allocator(&self) -> &Allocator {
        &self.setup.allocator
    }
    pub fn cache(&self) -> &PageCache {
        &self.setup.cache
    }
    /// The allocator's id of `handle`, while it is open.
    pub fn file_id(&self, handle: FileHandle) -> Option<FileId> {
        self.files.get(handle.0)?.as_ref().map(|f| f.id)
    }
    /// The file page the disk block last received from this program.
    pub fn disk_page(&self, block: BlockNumber) -> Option<PageKey> {
        self.disk.get(&block).copied()
    }
    /// Whether every step has run.
    pub fn is_done(&self) -> bool {
        self.state == Process::Done
    }

    fn slot(&mut self, handle: FileHandle) {
        if self.files.len() <= handle.0 {
            self.files.resize_with(handle.0 + 1, || None);
        }
    }

    fn open(&self, step: usize, handle: FileHandle) -> Result<&OpenFile, ProgramError> {
        self.files
            .get(handle.0)
            .and_then(Option::as_ref)
            .ok_or(ProgramError::NoSuchFile { step, file: handle })
    }

    fn key(id: FileId, index: u64) -> PageKey {
        PageKey { file: id, index }
    }

    /// Runs steps until one waits or computes.
    fn advance<D: BlockDevice>(&mut self, io: &mut Io<'_, D>) -> Result<(), ProgramError> {
        self.arm_periodic(io)?;
        while self.state == Process::Ready {
            let Some(&step) = self.steps.get(self.next) else {
                self.state = Process::Done;
                self.report.elapsed = io.now();
                return Ok(());
            };
            let cpu = match step {
                Step::Read { file, first, pages } => self.read(file, first, pages, io)?,
                Step::Write { file, first, pages } => self.write(file, first, pages, io)?,
                Step::MetadataWrite { block } => self.metadata_write(block, io)?,
                Step::Sync => self.sync(io)?,
                other => Some(self.bookkeeping(other, io)?),
            };
            match cpu {
                Some(cpu) => self.compute(cpu, io)?,
                None => self.wait(io)?,
            }
        }
        Ok(())
    }

    /// Steps that touch no disk; returns their CPU time.
    fn bookkeeping<D: BlockDevice>(
        &mut self,
        step: Step,
        io: &mut Io<'_, D>,
    ) -> Result<Nanoseconds, ProgramError> {
        let at = self.next;
        let allocation = |source| ProgramError::Allocation { step: at, source };
        match step {
            Step::Create { file, group } => {
                self.slot(file);
                if self.files[file.0].is_some() {
                    return Err(ProgramError::FileExists { step: at, file });
                }
                let id = self.setup.allocator.create(group).map_err(allocation)?;
                self.files[file.0] = Some(OpenFile {
                    id,
                    runs: Vec::new(),
                    read_ahead: ReadAhead::new(self.setup.read_ahead),
                });
            }
            Step::Close { file } => {
                let id = self.open(at, file)?.id;
                self.setup.allocator.close(id).map_err(allocation)?;
            }
            Step::Delete { file } => {
                let id = self.open(at, file)?.id;
                self.setup.cache.truncate_file(id);
                self.setup.allocator.delete(id).map_err(allocation)?;
                self.pending_reads.retain(|k| k.file != id);
                self.files[file.0] = None;
            }
            Step::Mark => {
                self.report.marks.push(io.now());
                return Ok(Nanoseconds::ZERO);
            }
            _ => return Ok(Nanoseconds::ZERO),
        }
        Ok(self.setup.cost.per_call)
    }

    fn compute<D: BlockDevice>(
        &mut self,
        cpu: Nanoseconds,
        io: &mut Io<'_, D>,
    ) -> Result<(), ProgramError> {
        let start = self.cpu_free_at.max(io.now());
        self.cpu_free_at = start + cpu;
        self.report.cpu += cpu;
        self.state = Process::Computing;
        self.copied.clear();
        self.written = 0;
        self.call_planned = false;
        self.metadata_issued = false;
        io.wake_at(self.cpu_free_at, WAKE_CPU)?;
        Ok(())
    }

    fn wait<D: BlockDevice>(&mut self, io: &mut Io<'_, D>) -> Result<(), ProgramError> {
        if self.state != Process::Waiting {
            self.waiting_since = io.now();
            // A process that waits for the disk runs the queue (Linux's
            // `sync_page`) rather than leave it to the unplug timer.
            io.control(self.setup.device, &[], Control::Unplug)?;
        }
        self.state = Process::Waiting;
        Ok(())
    }

    /// Asserts write-back progresses once the steps are done: then nothing new is
    /// dirtied, so every dirty page is due within one age limit plus one pass
    /// interval. A pass that finds pages dirty, none written and none cleaned for
    /// twice that long is a bug, reported instead of re-arming the periodic pass
    /// forever (which would hang the run).
    fn check_write_back_progress(&mut self, now: Nanoseconds) -> Result<(), ProgramError> {
        let dirty = self.setup.cache.dirty_pages();
        let (written, was_dirty, since) = self.progress_mark;
        if self.report.pages_written != written || dirty != was_dirty || dirty == 0 {
            self.progress_mark = (self.report.pages_written, dirty, now);
            return Ok(());
        }
        let aging = self.setup.writeback.aging;
        let limit = Nanoseconds(2 * (aging.expire.0 + aging.interval.0));
        let quiet_from = since.max(self.report.elapsed);
        if self.state == Process::Done && now.saturating_sub(quiet_from) > limit {
            return Err(ProgramError::WriteBackStalled {
                dirty_pages: dirty,
                stalled: now.saturating_sub(self.report.elapsed),
                since,
            });
        }
        Ok(())
    }

    fn call_cost(&self, pages: u64) -> Nanoseconds {
        let kib = pages * self.setup.allocator.config().block_size.bytes() / 1024;
        Nanoseconds(self.setup.cost.per_call.0 + self.setup.cost.per_kib.0 * kib)
    }
}

impl<D: BlockDevice> Host<D> for Program<'_> {
    type Error = ProgramError;

    fn start(&mut self, io: &mut Io<'_, D>) -> Result<(), ProgramError> {
        self.advance(io)
    }

    fn completed(
        &mut self,
        done: &DeviceCompletion,
        io: &mut Io<'_, D>,
    ) -> Result<(), ProgramError> {
        self.finish_request(done, io.now())?;
        if self.state != Process::Waiting {
            return Ok(());
        }
        // Retry the step; it completes or issues more and keeps waiting.
        let step = self.steps[self.next];
        let writing = matches!(step, Step::Write { .. });
        if writing && self.throttled() {
            return self.relieve(io);
        }
        let cpu = match step {
            Step::Read { file, first, pages } => self.read(file, first, pages, io)?,
            Step::Write { file, first, pages } => self.write(file, first, pages, io)?,
            Step::MetadataWrite { block } => self.metadata_write(block, io)?,
            Step::Sync => self.sync(io)?,
            _ => Some(Nanoseconds::ZERO),
        };
        let Some(cpu) = cpu else {
            return Ok(());
        };
        if writing {
            self.report.throttled += io.now().saturating_sub(self.waiting_since);
        }
        self.compute(cpu, io)
    }

    fn woke(&mut self, token: u64, io: &mut Io<'_, D>) -> Result<(), ProgramError> {
        if token == WAKE_PERIODIC {
            self.periodic_armed = false;
            let pages = self
                .setup
                .writeback
                .aging
                .pages_to_write(&self.setup.cache, io.now());
            self.write_back(pages, io)?;
            self.check_write_back_progress(io.now())?;
            return self.arm_periodic(io);
        }
        self.next += 1;
        self.state = Process::Ready;
        self.advance(io)
    }
}

/// Every page of a file as the program left it: `true` when the page is
/// clean in the cache or absent, and the disk holds it at its block.
pub fn on_disk_in_place(program: &Program<'_>, handle: FileHandle) -> Option<bool> {
    let id = program.file_id(handle)?;
    let runs = program.allocator().runs(id)?;
    let map_ok = runs
        .iter()
        .flat_map(|r| r.iter())
        .enumerate()
        .all(|(index, block)| program.disk_page(block) == Some(Program::key(id, index as u64)));
    let clean = runs.iter().map(|r| r.blocks).sum::<u64>() == 0
        || (0..runs.iter().map(|r| r.blocks).sum::<u64>()).all(|index| {
            matches!(
                program.cache().state(Program::key(id, index)),
                None | Some(PageState::Clean)
            )
        });
    Some(map_ok && clean)
}

/// A file's pages per block size: how many pages `bytes` bytes take.
pub fn pages_for(bytes: u64, block_size: BlockSize) -> u64 {
    bytes.div_ceil(block_size.bytes())
}

#[cfg(test)]
mod tests;
