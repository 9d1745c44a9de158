//! Multimedia-like streams (validation paper §2.5 Fig. 7, §3 Fig. 10): each
//! stream reads one file sequentially at a fixed rate from a random position,
//! through the shared page cache and its own read-ahead state (each stream has
//! its own open file); one new stream starts every `arrival_interval`; each
//! new stream's start-up latency (from its start to the end of its first read)
//! is recorded; no new stream starts once one has waited longer than
//! `give_up_after`, and the run ends then or when the last of `max_streams`
//! has started.
//!
//! What is simplified: all streams read one large file (at independent random
//! page positions; a stream that reaches the end goes on from page 0); no CPU
//! time; a read that completes late is followed at once by the next one
//! (a stream never skips data); no metadata reads.
//!
//! A stream's state machine:
//!
//! | state | event | next |
//! |---|---|---|
//! | `Sleeping` | its wake-up (the next read is due) | plans its read: `Waiting` if a page is missing (the device is told to unplug), else `Sleeping` until the next due time |
//! | `Waiting` | a completion brings the last missing page of its read | `Sleeping` until the next due time (at once if late) |
//! | any | the run gives up (a start-up latency past the limit) | `Stopped` |

use crate::block::BlockSize;
use crate::cache::{PageCache, PageKey};
use crate::readahead::{FileView, PageRange, Policy, ReadAhead};
use crate::view::LaidOutFile;
use crate::{BlockRun, FileId};
use spinstack_sim::device::{BlockDevice, Control};
use spinstack_sim::driver::{Host, Io, Issue};
use spinstack_sim::engine::{DeviceCompletion, DeviceId, EngineError};
use spinstack_sim::request::{Operation, RequestId};
use spinstack_sim::rng::SplitMix64;
use spinstack_sim::units::{Nanoseconds, Sectors};
use spinstack_trackmap::TrackMap;
use std::collections::{HashMap, HashSet};

/// The streams' workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamWorkload {
    /// Pages per read.
    pub read_pages: u64,
    /// Time between a stream's reads (its rate is `read_pages` per period).
    pub period: Nanoseconds,
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
    pub policy: Policy,
    pub cache: PageCache,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StreamState {
    Sleeping,
    Waiting,
    Stopped,
}

struct Stream {
    read_ahead: ReadAhead,
    position: u64,
    started: Nanoseconds,
    /// When the next read is due.
    due: Nanoseconds,
    first_read_done: bool,
    state: StreamState,
    /// Pages of the current read still missing.
    missing: HashSet<u64>,
}

/// What the streams did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StreamReport {
    /// Start-up latency of each stream, in start order (a stream still
    /// waiting when the run stopped is left out).
    pub startup_latency: Vec<Nanoseconds>,
    pub requests: u64,
    pub sectors: u64,
    /// Reads, and those that started more than one period after they were due
    /// (the stream fell behind its rate).
    pub reads: u64,
    pub late_reads: u64,
    /// When the run gave up or ended.
    pub ended: Nanoseconds,
}

/// Wake-up token of the next stream's arrival (stream wake-ups are their index).
const ARRIVAL: u64 = u64::MAX;

/// The streams (see the module documentation).
pub struct Streams<'a> {
    setup: StreamSetup<'a>,
    workload: StreamWorkload,
    page_count: u64,
    rng: SplitMix64,
    streams: Vec<Stream>,
    pending: HashSet<u64>,
    /// Streams waiting for each page.
    waiters: HashMap<u64, Vec<usize>>,
    in_flight: HashMap<RequestId, Vec<u64>>,
    gave_up: bool,
    report: StreamReport,
}

impl<'a> Streams<'a> {
    pub fn new(setup: StreamSetup<'a>, workload: StreamWorkload) -> Streams<'a> {
        let page_count = setup.runs.iter().map(|r| r.blocks).sum();
        Streams {
            setup,
            workload: StreamWorkload {
                read_pages: workload.read_pages.max(1),
                ..workload
            },
            page_count,
            rng: SplitMix64::new(workload.seed),
            streams: Vec::new(),
            pending: HashSet::new(),
            waiters: HashMap::new(),
            in_flight: HashMap::new(),
            gave_up: false,
            report: StreamReport::default(),
        }
    }

    pub fn report(&self) -> &StreamReport {
        &self.report
    }

    fn key(index: u64) -> PageKey {
        PageKey {
            file: FileId(0),
            index,
        }
    }

    fn arrive<D: BlockDevice>(&mut self, io: &mut Io<'_, D>) -> Result<(), EngineError> {
        if self.gave_up || self.streams.len() >= self.workload.max_streams || self.page_count == 0 {
            return Ok(());
        }
        let position = self.rng.next_u64() % self.page_count;
        let now = io.now();
        self.streams.push(Stream {
            read_ahead: ReadAhead::new(self.setup.policy),
            position,
            started: now,
            due: now,
            first_read_done: false,
            state: StreamState::Sleeping,
            missing: HashSet::new(),
        });
        self.read(self.streams.len() - 1, io)?;
        io.wake_at(now + self.workload.arrival_interval, ARRIVAL)
    }

    /// Stream `k`'s next read: plan, issue, copy what is cached, wait or sleep.
    fn read<D: BlockDevice>(&mut self, k: usize, io: &mut Io<'_, D>) -> Result<(), EngineError> {
        let first = self.streams[k].position;
        let pages = self.workload.read_pages.min(self.page_count - first);
        let plan = {
            let (cache, pending) = (&self.setup.cache, &self.pending);
            let resident =
                |index: u64| pending.contains(&index) || cache.contains(Streams::key(index));
            let view = LaidOutFile::new(
                self.setup.runs,
                self.setup.map,
                self.setup.block_size,
                resident,
            );
            self.streams[k].read_ahead.on_read(&view, first, pages)
        };
        let mut ranges: Vec<PageRange> = plan
            .demand
            .iter()
            .chain(&plan.read_ahead)
            .copied()
            .filter(|r| r.pages > 0)
            .collect();
        ranges.sort_by_key(|r| r.first);
        let mut joined: Vec<PageRange> = Vec::new();
        for range in ranges {
            match joined.last_mut() {
                Some(last) if last.end() == range.first => last.pages += range.pages,
                _ => joined.push(range),
            }
        }
        for range in joined {
            self.issue(range, io)?;
        }
        let mut missing = HashSet::new();
        for index in first..first + pages {
            if !self.setup.cache.access(Streams::key(index)) {
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
        }
        let next = first + pages;
        self.streams[k].position = if next >= self.page_count { 0 } else { next };
        if missing.is_empty() {
            return self.read_done(k, io);
        }
        self.streams[k].missing = missing;
        self.streams[k].state = StreamState::Waiting;
        io.control(self.setup.device, &[], Control::Unplug)
    }

    fn read_done<D: BlockDevice>(
        &mut self,
        k: usize,
        io: &mut Io<'_, D>,
    ) -> Result<(), EngineError> {
        let now = io.now();
        let stream = &mut self.streams[k];
        if !stream.first_read_done {
            stream.first_read_done = true;
            let latency = now - stream.started;
            self.report.startup_latency.push(latency);
            // The run ends when a stream waits too long, or when the last
            // stream allowed has started (nothing more is measured).
            if latency > self.workload.give_up_after
                || self.report.startup_latency.len() >= self.workload.max_streams
            {
                self.gave_up = true;
            }
        }
        if self.gave_up {
            self.report.ended = now;
            for stream in &mut self.streams {
                stream.state = StreamState::Stopped;
            }
            return Ok(());
        }
        let stream = &mut self.streams[k];
        stream.due += self.workload.period;
        stream.state = StreamState::Sleeping;
        let due = stream.due.max(now);
        io.wake_at(due, k as u64)
    }

    /// Issues `range`, one request per disk-contiguous piece.
    fn issue<D: BlockDevice>(
        &mut self,
        range: PageRange,
        io: &mut Io<'_, D>,
    ) -> Result<(), EngineError> {
        let block_size = self.setup.block_size;
        let view = LaidOutFile::new(self.setup.runs, self.setup.map, block_size, |_| false);
        let mut index = range.first;
        while index < range.end() {
            let Some(block) = view.block_of(index) else {
                break;
            };
            let pages = view.contiguous_from(index).min(range.end() - index);
            let lbn = block_size.first_lbn(block);
            let sectors = Sectors(pages * block_size.sectors().0);
            let id = io.submit(self.setup.device, Issue::new(Operation::Read, lbn, sectors))?;
            self.pending.extend(index..index + pages);
            self.in_flight.insert(id, (index..index + pages).collect());
            self.report.requests += 1;
            self.report.sectors += sectors.0;
            index += pages;
        }
        Ok(())
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
        let Some(pages) = self.in_flight.remove(&done.completion.request.id) else {
            return Ok(());
        };
        let mut finished = Vec::new();
        for index in pages {
            self.pending.remove(&index);
            // Read pages are clean: the cache can always make room for them.
            let _ = self.setup.cache.insert(Streams::key(index));
            for k in self.waiters.remove(&index).unwrap_or_default() {
                let stream = &mut self.streams[k];
                if stream.state == StreamState::Waiting && stream.missing.remove(&index) {
                    // Copied to the reader as it arrives.
                    let _ = self.setup.cache.access(Streams::key(index));
                    if stream.missing.is_empty() {
                        finished.push(k);
                    }
                }
            }
        }
        for k in finished {
            self.read_done(k, io)?;
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
        self.read(k, io)
    }
}
