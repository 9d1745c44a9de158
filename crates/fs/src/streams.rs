//! Multimedia-like streams (validation paper §2.5 Fig. 7, §3 Fig. 10): each
//! stream is a process that reads one file sequentially at a fixed rate from a
//! random position, through the shared page cache and its own read-ahead state
//! (each stream has its own open file); one new stream starts every
//! `arrival_interval`; each new stream's start-up latency (from its start to
//! the return of its first `read` call, i.e. its first buffer of playback) and
//! the time to its first page are recorded; no new stream starts once one has
//! waited longer than `give_up_after`, and the run ends then or when the last
//! of `max_streams` has started.
//!
//! **A `read` call as Linux 2.6.16 serves it** (`do_generic_mapping_read`
//! with `page_cache_readahead`): the call walks its pages; at the start and at
//! each window edge it asks read-ahead for the next step — at most the policy's
//! window (`min(pages left in the call, window)`; a track-aligned window ends
//! at the track boundary) — submits what the plan says (the step's missing
//! pages and any ahead window, adjacent runs joined into one request as the
//! elevator would merge them), and waits until the step's pages are cached
//! before it goes on. So a call larger than the window waits for several
//! requests in turn, each queued behind whatever the other streams have
//! queued, while the ahead window of the step before is already on its way.
//!
//! A stream keeps its rate by [`Pacing`]: calls due every period from its
//! start, or a sleep of one period after each call.
//!
//! What is simplified: all streams read one large file (at independent random
//! page positions; a stream that reaches the end goes on from page 0); no CPU
//! time; a stream never skips data; no inode or directory reads (the file's
//! indirect blocks are read, [`StreamSetup::indirect`]); a page fetched again
//! after its eviction is assumed still mapped.
//!
//! A stream's state machine:
//!
//! | state | event | next |
//! |---|---|---|
//! | `Sleeping` | its wake-up (the next call is due, by its [`Pacing`]) | plans the call's first step |
//! | (planning a step) | the step needs an indirect block not cached ([`crate::indirect`]) | `Mapping`; the block is fetched through the elevator like data, or already on its way |
//! | `Mapping` | the block arrives | asks again: `Mapping` for the next block, else the step's requests go out and on as below |
//! | (planning a step) | the step's pages are all cached | the next step; after the call's last step `Sleeping` until the next due time (at once if late) |
//! | (planning a step) | a page of the step is missing | `Waiting` (the device is told to unplug, as Linux does when a reader waits for a page) |
//! | `Waiting` | a completion brings the step's last missing page | plans the next step, as above |
//! | any | the run gives up (a start-up latency past the limit) | `Stopped` |

use crate::block::BlockSize;
use crate::cache::{PageCache, PageKey};
use crate::elevator::{Elevator, ElevatorConfig};
use crate::indirect::{IndirectMap, Mapping};
use crate::readahead::{FileView, PageRange, Policy, ReadAhead, WindowLimit};
use crate::scan::joined;
use crate::view::{run_starts, LaidOutFile};
use crate::{BlockNumber, BlockRun, FileId};
use spinstack_sim::device::{BlockDevice, Control};
use spinstack_sim::driver::{Host, Io};
use spinstack_sim::engine::{DeviceCompletion, DeviceId, EngineError};
use spinstack_sim::request::RequestId;
use spinstack_sim::rng::SplitMix64;
use spinstack_sim::units::Nanoseconds;
use spinstack_trackmap::TrackMap;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

pub use report::{StartUp, StreamReport};

/// How a stream keeps its rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pacing {
    /// Calls are due every `period` from the stream's start; a late call is
    /// followed at once by the next (the rate is exact while the disk keeps up).
    FixedRate,
    /// The stream sleeps `period` after each call returns (`read; sleep`):
    /// the rate is "around" `read_pages` per period and falls as calls slow
    /// down, and the streams' calls drift out of step with each other.
    SleepAfterCall,
}

/// The streams' workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamWorkload {
    /// Pages per `read` call.
    pub read_pages: u64,
    /// Time between a stream's calls (its rate is `read_pages` per period).
    pub period: Nanoseconds,
    pub pacing: Pacing,
    /// Time between new streams.
    pub arrival_interval: Nanoseconds,
    /// No new stream starts once one's start-up latency exceeds this.
    pub give_up_after: Nanoseconds,
    pub max_streams: usize,
    /// Seed of the streams' start positions.
    pub seed: u64,
}

/// What the streams read through.
pub struct StreamSetup<'a> {
    pub device: DeviceId,
    pub map: &'a TrackMap,
    pub block_size: BlockSize,
    pub runs: &'a [BlockRun],
    /// The file's indirect blocks: `None` maps every page without a read.
    pub indirect: Option<IndirectMap<'a>>,
    pub policy: Policy,
    pub cache: PageCache,
    /// The host's elevator: `None` sends every request to the device at once.
    pub elevator: Option<ElevatorConfig>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StreamState {
    Sleeping,
    Mapping,
    Waiting,
    Stopped,
}

struct Stream {
    read_ahead: ReadAhead,
    /// The page the next call starts at.
    position: u64,
    /// The stream's first page (its start-up's first byte).
    first_page: u64,
    started: Nanoseconds,
    /// When the next call is due.
    due: Nanoseconds,
    first_call_done: bool,
    first_page_seen: bool,
    state: StreamState,
    /// When the current call began.
    call_started: Nanoseconds,
    /// The current call's next step starts here and the call ends at `call_end`.
    cursor: u64,
    call_end: u64,
    /// Pages of the current step still missing.
    missing: HashSet<u64>,
    /// Pages in the current step.
    step_pages: u64,
    /// The current step's planned runs, held until their pages are mapped.
    deferred: Vec<PageRange>,
}

/// What a request fetches.
#[derive(Clone, Debug)]
enum Fetched {
    Pages(Vec<u64>),
    Indirect(BlockNumber),
}

/// The streams' one file, as the cache knows it (its indirect blocks are
/// `indirect::METADATA_FILE`'s pages).
const STREAM_FILE: FileId = FileId(0);

/// Wake-up token of the next stream's arrival (stream wake-ups are their index).
const ARRIVAL: u64 = u64::MAX;

/// Pages of the next step of a call at `cursor` with `left` pages to go: the
/// policy's window, as Linux's `page_cache_readahead` returns the next index
/// at which it wants to be asked again (`min(request, max window)`); a
/// track-aligned window ends at the track boundary. FreeBSD's clustering
/// (the FFS policies) sees the whole call at once.
pub fn step_pages(policy: Policy, view: &impl FileView, cursor: u64, left: u64) -> u64 {
    let window = match policy {
        Policy::LinuxWindow {
            limit: WindowLimit::Pages(pages),
        } => pages,
        Policy::LinuxWindow {
            limit: WindowLimit::Tracks(tracks),
        } => tracks * view.track_pages_at(cursor),
        Policy::TrackAligned => view.pages_to_track_end(cursor),
        Policy::FfsSequentialCount { .. }
        | Policy::FfsFastStart { .. }
        | Policy::FfsTraxtent { .. } => left,
    };
    left.min(window.max(1))
}

/// The streams (see the module documentation).
pub struct Streams<'a> {
    setup: StreamSetup<'a>,
    workload: StreamWorkload,
    page_count: u64,
    rng: SplitMix64,
    streams: Vec<Stream>,
    /// The file page each run starts at, built once (a view per step would
    /// otherwise rebuild it: linear in the runs).
    run_starts: Rc<[u64]>,
    pending: HashSet<u64>,
    /// Streams waiting for each page.
    waiters: HashMap<u64, Vec<usize>>,
    in_flight: HashMap<RequestId, Fetched>,
    /// Requests issued but held by the host's elevator, with what they fetch.
    elevator: Option<Elevator<Fetched>>,
    /// Indirect blocks being read, and the streams waiting for each.
    metadata_waiters: HashMap<BlockNumber, Vec<usize>>,
    /// When the in-flight count last changed (for its time integral).
    in_flight_since: Nanoseconds,
    gave_up: bool,
    /// Pages read in that no stream has read yet (for `evicted_unread_pages`);
    /// bounded by the cache, since an evicted page leaves it.
    unread: HashSet<u64>,
    report: StreamReport,
}

impl<'a> Streams<'a> {
    pub fn new(setup: StreamSetup<'a>, workload: StreamWorkload) -> Streams<'a> {
        let page_count = setup.runs.iter().map(|r| r.blocks).sum();
        let elevator = setup.elevator.map(Elevator::new);
        let starts = run_starts(setup.runs).into();
        Streams {
            setup,
            workload: StreamWorkload {
                read_pages: workload.read_pages.max(1),
                ..workload
            },
            page_count,
            rng: SplitMix64::new(workload.seed),
            streams: Vec::new(),
            run_starts: starts,
            pending: HashSet::new(),
            waiters: HashMap::new(),
            in_flight: HashMap::new(),
            elevator,
            metadata_waiters: HashMap::new(),
            in_flight_since: Nanoseconds::ZERO,
            gave_up: false,
            unread: HashSet::new(),
            report: StreamReport::default(),
        }
    }

    pub fn report(&self) -> &StreamReport {
        &self.report
    }

    fn key(index: u64) -> PageKey {
        PageKey {
            file: STREAM_FILE,
            index,
        }
    }

    fn arrive<D: BlockDevice>(&mut self, io: &mut Io<'_, D>) -> Result<(), EngineError> {
        if self.gave_up || self.streams.len() >= self.workload.max_streams || self.page_count == 0 {
            return Ok(());
        }
        let position = self.rng.next_u64() % self.page_count;
        let now = io.now();
        self.report.startups.push(StartUp {
            queued_at_start: self.requests_out() as u64,
            ..StartUp::default()
        });
        self.streams.push(Stream {
            read_ahead: ReadAhead::new(self.setup.policy),
            position,
            first_page: position,
            started: now,
            due: now,
            first_call_done: false,
            first_page_seen: false,
            state: StreamState::Sleeping,
            call_started: now,
            cursor: position,
            call_end: position,
            missing: HashSet::new(),
            step_pages: 0,
            deferred: Vec::new(),
        });
        self.begin_call(self.streams.len() - 1, io)?;
        io.wake_at(now + self.workload.arrival_interval, ARRIVAL)
    }

    /// Stream `k`'s next `read` call: its pages, then its steps.
    fn begin_call<D: BlockDevice>(
        &mut self,
        k: usize,
        io: &mut Io<'_, D>,
    ) -> Result<(), EngineError> {
        let now = io.now();
        let stream = &mut self.streams[k];
        stream.call_started = now;
        stream.cursor = stream.position;
        stream.call_end = (stream.position + self.workload.read_pages).min(self.page_count);
        self.steps(k, io)
    }

    /// Plans and issues stream `k`'s steps until one has a page missing
    /// (`Waiting`) or the call is done.
    fn steps<D: BlockDevice>(&mut self, k: usize, io: &mut Io<'_, D>) -> Result<(), EngineError> {
        loop {
            let (cursor, left) = {
                let stream = &self.streams[k];
                (stream.cursor, stream.call_end - stream.cursor)
            };
            if left == 0 {
                return self.call_done(k, io);
            }
            let (step, plan) = {
                let (cache, pending) = (&self.setup.cache, &self.pending);
                let resident =
                    |index: u64| pending.contains(&index) || cache.contains(Streams::key(index));
                let view = LaidOutFile::with_run_starts(
                    self.setup.runs,
                    &self.run_starts,
                    self.setup.map,
                    self.setup.block_size,
                    resident,
                );
                let step = step_pages(self.setup.policy, &view, cursor, left);
                (
                    step,
                    self.streams[k].read_ahead.on_read(&view, cursor, step),
                )
            };
            let stream = &mut self.streams[k];
            stream.step_pages = step;
            stream.deferred = joined(plan.demand.iter().chain(&plan.read_ahead).copied());
            if !self.map_and_issue(k, io)? || !self.await_step(k, io)? {
                return Ok(());
            }
            self.streams[k].cursor += step;
        }
    }

    /// Issues stream `k`'s planned runs once the indirect blocks they need
    /// are cached (`true`), else fetches or waits for the next one
    /// (`Mapping`, `false`).
    fn map_and_issue<D: BlockDevice>(
        &mut self,
        k: usize,
        io: &mut Io<'_, D>,
    ) -> Result<bool, EngineError> {
        if let Some(map) = self.setup.indirect {
            let waiters = &self.metadata_waiters;
            let mapping = map.next_needed(&self.streams[k].deferred, &mut self.setup.cache, |b| {
                waiters.contains_key(&b)
            });
            let block = match mapping {
                Mapping::Mapped => None,
                Mapping::Wait(block) => Some(block),
                Mapping::Fetch(block) => {
                    self.issue_indirect(block, io)?;
                    Some(block)
                }
            };
            if let Some(block) = block {
                self.metadata_waiters.entry(block).or_default().push(k);
                if !self.streams[k].first_call_done {
                    self.report.startups[k].disk_waits += 1;
                }
                self.streams[k].state = StreamState::Mapping;
                // The reader waits on a synchronous read: the queue runs.
                io.control(self.setup.device, &[], Control::Unplug)?;
                return Ok(false);
            }
        }
        for range in std::mem::take(&mut self.streams[k].deferred) {
            self.issue(range, io)?;
        }
        Ok(true)
    }

    /// After stream `k`'s step went out: `true` when its pages are all cached
    /// (copied), else `Waiting` for the missing ones (`false`).
    fn await_step<D: BlockDevice>(
        &mut self,
        k: usize,
        io: &mut Io<'_, D>,
    ) -> Result<bool, EngineError> {
        let (cursor, step) = (self.streams[k].cursor, self.streams[k].step_pages);
        let mut missing = HashSet::new();
        for index in cursor..cursor + step {
            if self.setup.cache.access(Streams::key(index)) {
                self.unread.remove(&index);
                continue;
            }
            if !self.pending.contains(&index) {
                // Evicted between planning and now: fetch it again.
                self.issue(
                    PageRange {
                        first: index,
                        pages: 1,
                    },
                    io,
                )?;
            }
            missing.insert(index);
            self.waiters.entry(index).or_default().push(k);
        }
        let stream = &self.streams[k];
        if !stream.first_page_seen && !missing.contains(&stream.first_page) {
            self.page_seen(k, io.now());
        }
        let stream = &mut self.streams[k];
        if missing.is_empty() {
            return Ok(true);
        }
        if !stream.first_call_done {
            self.report.startups[k].disk_waits += 1;
        }
        stream.missing = missing;
        stream.state = StreamState::Waiting;
        io.control(self.setup.device, &[], Control::Unplug)?;
        Ok(false)
    }

    /// Counts the file's pages among `evicted` that no stream had read
    /// (`evicted_unread_pages`); every insert into the cache reports here, so
    /// `unread` never holds a page the cache let go.
    fn count_evicted(&mut self, evicted: &[PageKey]) {
        for page in evicted {
            if page.file == STREAM_FILE && self.unread.remove(&page.index) {
                self.report.evicted_unread_pages += 1;
            }
        }
    }

    /// Stream `k`'s first page is cached at `now`.
    fn page_seen(&mut self, k: usize, now: Nanoseconds) {
        let stream = &mut self.streams[k];
        if !stream.first_page_seen {
            stream.first_page_seen = true;
            self.report.startups[k].first_byte = Some(now - stream.started);
        }
    }

    fn call_done<D: BlockDevice>(
        &mut self,
        k: usize,
        io: &mut Io<'_, D>,
    ) -> Result<(), EngineError> {
        let now = io.now();
        let stream = &mut self.streams[k];
        self.report.calls_done += 1;
        self.report.call_time += now - stream.call_started;
        stream.position = if stream.call_end >= self.page_count {
            0
        } else {
            stream.call_end
        };
        if !stream.first_call_done {
            stream.first_call_done = true;
            let latency = now - stream.started;
            self.report.startups[k].latency = Some(latency);
            // The run ends when a stream waits too long, or when the last
            // stream allowed has started and every first call has returned
            // (nothing more is measured).
            if latency > self.workload.give_up_after
                || (self.streams.len() >= self.workload.max_streams
                    && self.report.startups.iter().all(|s| s.latency.is_some()))
            {
                self.gave_up = true;
            }
        }
        if self.gave_up {
            self.count_in_flight(now);
            self.report.ended = now;
            for stream in &mut self.streams {
                stream.state = StreamState::Stopped;
            }
            return Ok(());
        }
        let stream = &mut self.streams[k];
        stream.due = match self.workload.pacing {
            Pacing::FixedRate => stream.due + self.workload.period,
            Pacing::SleepAfterCall => now + self.workload.period,
        };
        stream.state = StreamState::Sleeping;
        let due = stream.due.max(now);
        io.wake_at(due, k as u64)
    }
}

impl<D: BlockDevice> Host<D> for Streams<'_> {
    type Error = EngineError;

    fn start(&mut self, io: &mut Io<'_, D>) -> Result<(), EngineError> {
        self.arrive(io)
    }

    fn completed(
        &mut self,
        done: &DeviceCompletion,
        io: &mut Io<'_, D>,
    ) -> Result<(), EngineError> {
        let now = io.now();
        if self.in_flight.contains_key(&done.completion.request.id) {
            self.count_in_flight(now);
        }
        let Some(fetched) = self.in_flight.remove(&done.completion.request.id) else {
            return Ok(());
        };
        if let Some(elevator) = self.elevator.as_mut() {
            elevator.done();
        }
        self.dispatch(io)?;
        let pages = match fetched {
            Fetched::Pages(pages) => pages,
            Fetched::Indirect(block) => return self.mapped(block, io),
        };
        let mut finished = Vec::new();
        for index in pages {
            self.pending.remove(&index);
            // Read pages are clean: the cache can always make room for them.
            let key = Streams::key(index);
            if !self.setup.cache.contains(key) {
                self.unread.insert(index);
            }
            let evicted = self.setup.cache.insert(key).unwrap_or_default();
            self.count_evicted(&evicted);
            for k in self.waiters.remove(&index).unwrap_or_default() {
                let stream = &mut self.streams[k];
                if stream.state == StreamState::Waiting && stream.missing.remove(&index) {
                    // Copied to the reader as it arrives.
                    let _ = self.setup.cache.access(Streams::key(index));
                    self.unread.remove(&index);
                    if index == stream.first_page {
                        self.page_seen(k, now);
                    }
                    if self.streams[k].missing.is_empty() {
                        finished.push(k);
                    }
                }
            }
        }
        for k in finished {
            if self.gave_up {
                break;
            }
            let stream = &mut self.streams[k];
            stream.cursor += stream.step_pages;
            stream.state = StreamState::Sleeping;
            self.steps(k, io)?;
        }
        Ok(())
    }

    fn woke(&mut self, token: u64, io: &mut Io<'_, D>) -> Result<(), EngineError> {
        if token == ARRIVAL {
            return self.arrive(io);
        }
        let k = token as usize;
        if self.gave_up
            || self
                .streams
                .get(k)
                .is_none_or(|s| s.state != StreamState::Sleeping)
        {
            return Ok(());
        }
        self.report.reads += 1;
        if io.now() > self.streams[k].due + self.workload.period {
            self.report.late_reads += 1;
        }
        self.begin_call(k, io)
    }
}

mod report;
mod requests;
#[cfg(test)]
mod tests;
