//! The timed drive: mechanics + firmware over a [`Layout`], served through
//! [`BlockDevice`].
//!
//! The model follows DiskSim 4.0's disk controller as described in
//! ../shared/reference/disksim-notes.md (§3, §4), but computes each request's media
//! access analytically per track (`media`) and its host transfer as a pipeline
//! (`firmware::bus_pipeline`) instead of one event per sector. Background work
//! (read-ahead after a read, the media write of a write-back write) is kept as a
//! planned `Job` and resolved lazily when the next request arrives: a prefetch is
//! cut at the arrival instant (pre-emptible), a flush is waited for. Read-ahead
//! tracks are planned lazily, one track at a time, as simulated time reaches them.
//!
//! **Modelled** (notes §6 order): host-link time per block (separate read/write
//! times), chunked transfers with water-mark reconnection, hold-bus and
//! never-disconnect; the overhead set by hit/miss × read/write × previous request;
//! data-preparation, reselect, disconnect and completion overheads; extracted,
//! HPL and HPL-plus-ten seek curves with integer interpolation, head switch and
//! (possibly negative) write settle; integer-picosecond rotation from angle 0 at
//! t = 0 with DiskSim's skew arithmetic (through [`Layout::angle_of`]);
//! zero-latency access and read-any-free-blocks; segmented cache with DiskSim's
//! priorities and LRU ties, segment windows, read-ahead limits for every `Buffer
//! continuous read` mode including the stop-at-track/cylinder rules, prefetch
//! take-over by hits and pre-emption by misses; write-back (completion when the
//! data is buffered, flush holding the arm, appending writes) and write-through
//! (media write before completion) with block-by-block data arrival, missed
//! sectors costing a revolution, DiskSim's "extra write disconnect" buffering rule
//! and minimum seek delay; slipped sectors inside a track (block by block).
//!
//! **Not modelled**: remapped-defect detours to spare sectors, DiskSim 4.0's
//! dedicated write segment and extra-write-disconnect trigger (absent in the WD
//! release that the validation figures come from), sneaky hits, preseeking levels
//! above 0, minimum read-ahead above 0, the buffer stall when a read exceeds the
//! segment before the host drains it, and the bus use of a queued request's
//! disconnect message while another request holds the bus.
//!
//! **Two resources at queue depth > 1.** The head/arm (HDA) and the host bus are
//! separate: a read frees the HDA once its last block is in the buffer, a
//! write-through write once its last block is on the media, so the next queued
//! request (chosen FCFS or SPTF, shortest positioning time from where the arm will
//! be, at that instant) seeks while the previous one's data and completion message
//! are still crossing the bus. Its controller overhead counts from its arrival (or
//! from the previous request's start, the controller taking commands in order);
//! its media work starts at max(HDA free, overhead done) and its bus transfer
//! waits until the previous completion message is sent (in-order delivery). A
//! write-back write frees the HDA only at its completion (its media write is a
//! background flush that the next request waits for anyway). A request queued at
//! the instant the HDA frees stops the previous read's read-ahead before it
//! begins. At queue depth 1 a request arrives after the previous completion, when
//! both resources are free, so nothing of this applies (timing is unchanged).
//!
//! **Time breakdown** (`TimeBreakdown`): seek, head switches, every rotational
//! wait and the request's own sectors come from the media runs; the overlap is the
//! bus time spent before the media work ended; overhead is the rest of the
//! response time, so the components add up to it.

mod cache;
mod firmware;
pub mod mechanics;
mod media;
pub mod power;

use crate::layout::{Layout, LayoutError};
pub use crate::spec::MAX_STANDBY_LEVELS;
use crate::spec::{DriveSpec, ReadAheadMode, SchedulingPolicy};
use cache::{merge_ranges, Cache, SegmentState};
use firmware::{bus_pipeline_until, BusPlan, Firmware};
use mechanics::{Mechanics, Picoseconds, PS_PER_NS};
use media::{cut_at, AccessMode, Arm, Media, Run, Span, TrackStop};
pub use power::{EnergyReport, LevelTally, PowerState};
use spinstack_sim::device::{
    refuse_member_path, BlockDevice, Control, ControlError, DeviceError, IdlePolicy, MemberIndex,
    StandbyLevel,
};
use spinstack_sim::request::{
    BlockRequest, Completion, DriveDetail, Operation, Status, TimeBreakdown,
};
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors};
use std::collections::VecDeque;

/// Knobs that are not facts about the drive but about the experiment.
#[derive(Clone, Debug, Default)]
pub struct DriveOptions {
    /// Overrides the spec's command-queue depth (e.g. 16 for SPTF experiments).
    pub queue_depth: Option<u32>,
    /// Overrides the spec's scheduling policy.
    pub policy: Option<crate::spec::SchedulingPolicy>,
    /// Disable the drive's cache and read-ahead (as the extraction papers do).
    pub cache_disabled: bool,
    /// Disable the drive's read-ahead (prefetch) only; its cache stays on. What
    /// `sdparm` sets with DPTL=0 (the validation paper's §2.2), and how that paper
    /// ran its track-aligned accesses after §2.5: "we disabled disk firmware
    /// prefetch for track-aligned accesses".
    pub read_ahead_disabled: bool,
    /// Spin down after an idle period (none: only when told).
    pub idle_policy: Option<IdlePolicy>,
    /// Turn the drive's write cache on (write-back, DiskSim's fast-write level
    /// 2) whatever the spec says: a write completes once buffered. Experiments
    /// set it when the paper ran its drives so (most catalog entries are
    /// write-through).
    pub write_back_cache: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum DriveError {
    #[error(transparent)]
    Layout(#[from] LayoutError),
    #[error("invalid drive spec {name}: {problem}")]
    Invalid { name: String, problem: String },
}

/// Background media work that continues after a request has completed.
#[derive(Clone, Debug)]
struct Job {
    kind: JobKind,
    /// The cache segment the work fills (prefetch) or drains (flush).
    segment: usize,
    runs: Vec<Run>,
    arm_before: Arm,
    arm_after: Arm,
    /// One past the last LBN planned.
    planned_end: u64,
    /// The LBN the segment's contiguous window is anchored on.
    anchor: u64,
    /// Where a prefetch aims to stop (its read-ahead limit); tracks beyond
    /// `planned_end` are planned lazily.
    limit: u64,
}

impl Job {
    /// A write's media work for `lbns` into `segment`, planned as `runs`, moving
    /// the arm from `arms.0` to `arms.1`.
    fn flush(segment: usize, runs: Vec<Run>, arms: (Arm, Arm), lbns: std::ops::Range<u64>) -> Job {
        Job {
            kind: JobKind::Flush,
            segment,
            runs,
            arm_before: arms.0,
            arm_after: arms.1,
            planned_end: lbns.end,
            anchor: lbns.start,
            limit: lbns.end,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum JobKind {
    /// Read-ahead: may be cut at any instant.
    Prefetch,
    /// Write-back of dirty data: holds the arm until done.
    Flush,
}

/// One simulated drive. Cloning it copies its whole state (queue, arm, cache,
/// power books): a what-if run from an instant, as the failover trials need.
#[derive(Clone)]
pub struct Drive {
    layout: Layout,
    mechanics: Mechanics,
    firmware: Firmware,
    capacity: u64,
    policy: SchedulingPolicy,
    queue_depth: usize,
    cache: Cache,
    /// Arm state when no job is planned (or before the job).
    arm: Arm,
    job: Option<Job>,
    /// Whether the last read or write served was a write (DiskSim's `lastflags`).
    last_was_write: bool,
    queue: VecDeque<BlockRequest>,
    /// Requests started and not yet reported, in completion order (the bus delivers
    /// in order). With `queue`, at most `queue_depth + 1` requests (asserted).
    in_service: VecDeque<Completion>,
    /// When the HDA has finished the own media work of the last started request:
    /// the next queued request may start then.
    hda_free_ps: Picoseconds,
    /// When the last started request's completion message has crossed the bus.
    bus_free_ps: Picoseconds,
    /// When the last request started (the controller takes commands in order).
    last_start: Nanoseconds,
    power: power::PowerMeter,
    /// Set by `Control::Fail`: every request from then on completes with
    /// `Status::DeviceFailed`.
    failed: bool,
    served: u64,
    /// Reused buffers (a run list from a finished job; per-block ready times).
    spare_runs: Vec<Run>,
    tracks: media::TrackCache,
    scratch_ready: Vec<Picoseconds>,
}

impl Drive {
    pub fn new(spec: &DriveSpec, options: DriveOptions) -> Result<Drive, DriveError> {
        let invalid = |problem: String| DriveError::Invalid {
            name: spec.name.clone(),
            problem,
        };
        // Also checked where files are read (naming the line); a spec built in code
        // must not reach the tables or the angle arithmetic out of range either.
        crate::spec_check::check_counts(spec).map_err(|error| invalid(error.to_string()))?;
        let layout = Layout::new(&spec.layout)?;
        let mechanics = Mechanics::new(&spec.mechanics, layout.cylinders()).map_err(invalid)?;
        if let Some(problem) = spec.power.problem() {
            return Err(invalid(problem));
        }
        let mut power = power::PowerMeter::new(&spec.power);
        if let Some(policy) = options.idle_policy {
            check_level(policy.level, power.standby_levels())
                .map_err(|e| invalid(e.to_string()))?;
            power.set_policy(Nanoseconds::ZERO, Some(policy));
        }
        let mut firmware_spec = spec.firmware.clone();
        if options.write_back_cache {
            firmware_spec.cache.fast_write_level = 2;
        }
        let firmware = Firmware::new(
            &firmware_spec,
            options.cache_disabled,
            options.read_ahead_disabled,
        );
        let queue_depth = options
            .queue_depth
            .unwrap_or(spec.firmware.queue.max_queue_length)
            .max(1) as usize;
        Ok(Drive {
            capacity: layout.capacity().0,
            cache: Cache::new(firmware.segments, firmware.segment_sectors),
            policy: options.policy.unwrap_or(spec.firmware.queue.policy),
            queue_depth,
            layout,
            mechanics,
            firmware,
            arm: Arm::default(),
            job: None,
            last_was_write: false,
            queue: VecDeque::with_capacity(queue_depth),
            in_service: VecDeque::with_capacity(queue_depth + 1),
            hda_free_ps: 0,
            bus_free_ps: 0,
            last_start: Nanoseconds::ZERO,
            power,
            failed: false,
            served: 0,
            spare_runs: Vec::new(),
            tracks: media::TrackCache::default(),
            scratch_ready: Vec::new(),
        })
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The rotation period in picoseconds (DiskSim's integer period).
    pub fn rotation_period_ps(&self) -> i64 {
        self.mechanics.rotation.period_ps
    }

    /// Positioning time (seek or head switch, settle, rotational latency) from where
    /// the arm will be when the drive is next free, at `now` or later, to the start
    /// of `lbn`: what SPTF minimises.
    pub fn position_time(
        &self,
        lbn: Lbn,
        operation: Operation,
        now: Nanoseconds,
    ) -> Result<Nanoseconds, LayoutError> {
        self.position_time_from(self.arm_when_free(now), lbn, operation)
    }

    /// Where the arm will be, and from when, once the drive is next free at `now`
    /// or later (a running prefetch is cut at `now`).
    fn arm_when_free(&self, now: Nanoseconds) -> Arm {
        let mut arm = self.job.as_ref().map_or(self.arm, |j| j.arm_after);
        if let Some(j) = &self.job {
            if j.kind == JobKind::Prefetch {
                arm = cut_at(
                    &j.runs,
                    ns_to_ps(now),
                    (j.arm_before, j.arm_after),
                    self.firmware.abandon_read_ahead_positioning,
                )
                .arm;
            }
        }
        arm.free_ps = arm.free_ps.max(ns_to_ps(now));
        arm
    }

    fn position_time_from(
        &self,
        arm: Arm,
        lbn: Lbn,
        operation: Operation,
    ) -> Result<Nanoseconds, LayoutError> {
        let media = Media {
            mechanics: &self.mechanics,
            layout: &self.layout,
            tracks: &self.tracks,
        };
        let t = media.positioning_time(arm, lbn.0, operation == Operation::Write)?;
        Ok(Nanoseconds((t / PS_PER_NS) as u64))
    }

    /// Power state at `now`.
    pub fn power_state(&self, now: Nanoseconds) -> PowerState {
        self.power.state_at(now, self.earliest_queued())
    }

    /// Time in each power state and energy up to `now`.
    pub fn energy(&self, now: Nanoseconds) -> EnergyReport {
        self.power.report(now, self.earliest_queued())
    }

    /// The arrival of the oldest request waiting to start (it keeps the idle timer
    /// from firing: the drive was not idle).
    fn earliest_queued(&self) -> Option<Nanoseconds> {
        self.queue.iter().map(|r| r.arrival).min()
    }

    /// When the HDA is free for the next queued request (rounded up to a whole
    /// nanosecond), if one is queued.
    fn next_start_time(&self) -> Option<Nanoseconds> {
        if self.queue.is_empty() {
            return None;
        }
        Some(Nanoseconds(
            ((self.hda_free_ps.max(0) + PS_PER_NS - 1) / PS_PER_NS) as u64,
        ))
    }

    /// Start serving the next queued request at `now` if the HDA is free by then.
    fn start_next(&mut self, now: Nanoseconds) {
        if self.next_start_time().is_none_or(|t| t > now) {
            return;
        }
        let index = match self.policy {
            SchedulingPolicy::Fcfs => 0,
            SchedulingPolicy::Sptf => self.sptf_choice(now),
        };
        let Some(request) = self.queue.remove(index) else {
            return;
        };
        // The command's overhead runs from its arrival, the controller taking
        // commands in order; its media and bus work wait for the HDA and the bus.
        let start = request.arrival.max(self.last_start);
        self.last_start = start;
        let completion = match self.serve(request, start) {
            Ok(c) => c,
            // The request was range-checked at submit; a layout failure here means
            // a layout table disagrees with its own capacity: the drive cannot find
            // the sector. Complete with a media error rather than stop the run.
            Err(_) => Completion::new(request, start, Status::MediaError { lbn: request.lbn }),
        };
        // In-order bus delivery makes completions monotone; keep the order anyway.
        let at = self
            .in_service
            .partition_point(|c| c.done <= completion.done);
        self.in_service.insert(at, completion);
    }

    fn sptf_choice(&self, now: Nanoseconds) -> usize {
        // The arm state is the same for every candidate: compute it once (cutting a
        // running prefetch allocates).
        let arm = self.arm_when_free(now);
        let mut best = (u64::MAX, 0);
        for (i, r) in self.queue.iter().enumerate() {
            let t = self
                .position_time_from(arm, r.lbn, r.operation)
                .map_or(u64::MAX, |t| t.0);
            if t < best.0 {
                best = (t, i);
            }
        }
        best.1
    }

    /// Serve one request that reaches the controller at `start`.
    fn serve(
        &mut self,
        request: BlockRequest,
        start: Nanoseconds,
    ) -> Result<Completion, LayoutError> {
        if self.failed {
            return Ok(Completion::new(request, start, Status::DeviceFailed));
        }
        let spin_up = self.power.wake(request.arrival, start);
        let t0 = ns_to_ps(start + spin_up) + self.firmware.per_request_ps;
        let outcome = match request.operation {
            Operation::Read => self.serve_read(&request, t0)?,
            Operation::Write => self.serve_write(&request, t0)?,
            Operation::Flush => self.serve_flush(t0),
            Operation::Trim => self.serve_trim(&request, t0),
        };
        self.hda_free_ps = self.hda_free_ps.max(outcome.hda_free_ps);
        self.bus_free_ps = self.bus_free_ps.max(outcome.done_ps);
        match request.operation {
            Operation::Read => self.last_was_write = false,
            Operation::Write => self.last_was_write = true,
            Operation::Flush | Operation::Trim => {}
        }
        self.served += 1;
        let done = Nanoseconds(((outcome.done_ps + PS_PER_NS - 1) / PS_PER_NS) as u64)
            .max(request.arrival);
        let mut breakdown = outcome.breakdown;
        breakdown.spin_up = spin_up;
        // Overhead is the rest of the response time (see `TimeBreakdown`).
        let b = &breakdown;
        let accounted = b.spin_up.0
            + b.seek.0
            + b.rotational_latency.0
            + b.head_switch.0
            + b.media_transfer.0
            + b.bus_transfer.0.saturating_sub(b.overlap.0);
        breakdown.overhead = Nanoseconds((done - request.arrival).0.saturating_sub(accounted));
        let background_end = self.job.as_ref().map_or(0, |j| j.arm_after.free_ps);
        let busy_end = (background_end.max(outcome.done_ps) / PS_PER_NS) as u64;
        self.power.busy(start, Nanoseconds(busy_end));
        Ok(Completion {
            request,
            done,
            status: Status::Ok,
            drive: Some(DriveDetail {
                cache_hit: outcome.cache_hit,
                breakdown,
            }),
        })
    }

    /// Carry out a power or failure command at `now`.
    fn apply_control(&mut self, now: Nanoseconds, command: Control) -> Result<(), ControlError> {
        let levels = self.power.standby_levels();
        match command {
            Control::SpinDown(level) => {
                check_level(level, levels)?;
                let busy = !self.queue.is_empty();
                self.power.order_spin_down(now, level, busy);
            }
            Control::SpinUp => self.power.spin_up(now),
            Control::SetIdlePolicy(policy) => {
                if let Some(policy) = policy {
                    check_level(policy.level, levels)?;
                }
                self.power.set_policy(now, policy);
            }
            Control::Fail => self.fail(now),
            Control::Replace => self.replace()?,
            // A drive holds no plug queue: its queue is the command queue.
            Control::Unplug => {}
        }
        Ok(())
    }

    /// The drive stops working at `now`: requests in service or queued complete
    /// with `DeviceFailed` (queued ones at once), and so does every later one.
    fn fail(&mut self, now: Nanoseconds) {
        self.failed = true;
        for completion in self.in_service.iter_mut() {
            completion.status = Status::DeviceFailed;
            completion.drive = None;
        }
        while let Some(request) = self.queue.pop_front() {
            let done = now.max(request.arrival);
            let at = self.in_service.partition_point(|c| c.done <= done);
            self.in_service
                .insert(at, Completion::new(request, done, Status::DeviceFailed));
        }
    }

    /// A new drive of the same model takes this failed one's place: it serves
    /// requests again, its buffer empty and no read-ahead or write-back planned.
    /// Requests failed before the swap still complete as failed. The power books go
    /// on (one slot, one meter); the arm is where the old one left it, as good a
    /// guess as any for a drive just spun up.
    fn replace(&mut self) -> Result<(), ControlError> {
        if !self.failed {
            return Err(ControlError::Unsupported {
                device: "a drive",
                command: Control::Replace,
                reason: "it has not failed",
            });
        }
        self.failed = false;
        self.cache = Cache::new(self.firmware.segments, self.firmware.segment_sectors);
        self.job = None;
        self.last_was_write = false;
        Ok(())
    }
}

/// A standby level the drive has, or the error naming how many it has.
fn check_level(level: StandbyLevel, levels: usize) -> Result<(), ControlError> {
    if (level.0 as usize) < levels {
        Ok(())
    } else {
        Err(ControlError::NoSuchStandbyLevel {
            level: level.0,
            levels: levels as u8,
        })
    }
}

/// What serving one request produced.
struct Outcome {
    done_ps: Picoseconds,
    /// When the HDA finished this request's own media work (no later than done).
    hda_free_ps: Picoseconds,
    cache_hit: bool,
    breakdown: TimeBreakdown,
}

fn ns_to_ps(t: Nanoseconds) -> Picoseconds {
    t.0 as i64 * PS_PER_NS
}

fn ps_to_ns(t: Picoseconds) -> Nanoseconds {
    Nanoseconds((t.max(0) / PS_PER_NS) as u64)
}

mod commands;
mod serve;

impl BlockDevice for Drive {
    fn capacity(&self) -> Sectors {
        Sectors(self.capacity)
    }
    fn submit(&mut self, request: BlockRequest) -> Result<(), DeviceError> {
        request.check(Sectors(self.capacity))?;
        // One request may be in service beyond the queue's depth, as before the
        // HDA and bus were separated.
        if self.queue.len() + self.in_service.len() > self.queue_depth {
            return Err(DeviceError::QueueFull {
                depth: self.queue_depth,
            });
        }
        self.queue.push_back(request);
        assert!(
            self.queue.len() + self.in_service.len() <= self.queue_depth + 1,
            "drive queue bound"
        );
        self.start_next(request.arrival);
        Ok(())
    }
    fn next_event_time(&self) -> Option<Nanoseconds> {
        let done = self.in_service.front().map(|c| c.done);
        match (done, self.next_start_time()) {
            (Some(d), Some(s)) => Some(d.min(s)),
            (d, s) => d.or(s),
        }
    }
    fn advance(&mut self, now: Nanoseconds, completed: &mut Vec<Completion>) {
        loop {
            let done = self
                .in_service
                .front()
                .map(|c| c.done)
                .filter(|&d| d <= now);
            let start = self.next_start_time().filter(|&s| s <= now);
            match (done, start) {
                (Some(d), Some(s)) if s < d => self.start_next(s),
                (Some(d), _) => {
                    if let Some(c) = self.in_service.pop_front() {
                        completed.push(c);
                    }
                    self.start_next(d);
                }
                (None, Some(s)) => self.start_next(s),
                (None, None) => break,
            }
        }
    }
    fn control(
        &mut self,
        now: Nanoseconds,
        path: &[MemberIndex],
        command: Control,
    ) -> Result<(), ControlError> {
        refuse_member_path("a drive", path)?;
        self.apply_control(now, command)
    }
}
