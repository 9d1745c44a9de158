//! The power-aware secondary over simulated time: log arrives at R_gen; each
//! batch interval the data volume is spun up proactively (T_up before the batch),
//! applies everything that arrived, window by window, until it has caught up, and
//! is spun down again. The drives' power meters keep the books.
//!
//! **Cycle k** (k = 0, 1, …; T_wnd from the plan):
//!
//! | instant | what happens |
//! |---|---|
//! | k·T_wnd | spin-up ordered (every data drive) |
//! | k·T_wnd + T_up | apply windows, each of everything arrived so far up to B bytes, until less than 1/64 of the batch's first window is left |
//! | end of the last pass | spin-down ordered |
//!
//! The run starts at the steady state: at time 0 the backlog is R_gen·(T_wnd − T_apl)
//! and the drives are in standby. When the plan leaves no time asleep
//! (T_wnd − T_apl ≤ T_up + T_down) the drives are never spun down (batches still
//! defer the apply). A log shorter than the run is replayed cyclically (the records
//! keep their pages; a window may span the wrap, so every window but a batch's
//! last holds B bytes, as the paper's window buffer does; the log must be longer
//! than the largest window, or the replay would fold a row's changes from
//! different laps: `crate::study` refuses such a window).
//!
//! **Sampled drives.** Pages are striped over all N drives, but only the I/O of
//! the first `simulated_drives` is simulated (the records of other drives' pages
//! are left out before compaction: a row lives on one page, so folding is
//! unchanged). Striping makes the drives statistically alike; a batch window ends
//! when the last simulated drive finishes it. This keeps a cycle's cost at one
//! drive's work instead of N's.
//!
//! The energy is read at K·T_wnd; one more cycle is simulated so that every
//! disaster instant in [0, K·T_wnd) has the windows that would recover it measured.

use crate::apply::{AppliedWindow, Applier};
use crate::log::LogRecord;
use crate::volume::{DataVolume, VolumeError};
use spinstack_disk::drive::EnergyReport;
use spinstack_sim::device::{Control, StandbyLevel};
use spinstack_sim::engine::DeviceId;
use spinstack_sim::units::Nanoseconds;

/// The log, replayed cyclically, and when each byte of it arrives.
pub struct Arrivals<'a> {
    pub records: &'a [LogRecord],
    /// prefix[i] = bytes of records[..i].
    prefix: Vec<u64>,
    /// Transactions ended in records[..i].
    ends: Vec<u64>,
    pub bytes_per_s: f64,
    /// Bytes already arrived at time 0.
    pub initial_bytes: f64,
}

impl<'a> Arrivals<'a> {
    pub fn new(records: &'a [LogRecord], bytes_per_s: f64, initial_bytes: f64) -> Arrivals<'a> {
        let mut prefix = Vec::with_capacity(records.len() + 1);
        let mut ends = Vec::with_capacity(records.len() + 1);
        let (mut bytes, mut count) = (0u64, 0u64);
        prefix.push(0);
        ends.push(0);
        for record in records {
            bytes += u64::from(record.bytes);
            count += u64::from(record.ends_transaction);
            prefix.push(bytes);
            ends.push(count);
        }
        Arrivals {
            records,
            prefix,
            ends,
            bytes_per_s,
            initial_bytes,
        }
    }
    fn total(&self) -> u64 {
        *self.prefix.last().expect("prefix has its zero")
    }
    /// Records (virtual index, counting replays) wholly arrived by `at`.
    pub fn arrived(&self, at: Nanoseconds) -> u64 {
        let bytes = (self.initial_bytes + self.bytes_per_s * at.as_secs_f64()).max(0.0) as u64;
        let total = self.total().max(1);
        let (laps, rest) = (bytes / total, bytes % total);
        let within = self.prefix.partition_point(|&p| p <= rest) - 1;
        laps * self.records.len() as u64 + within as u64
    }
    /// Transactions ended in the first `virtual_index` records.
    pub fn transactions_in(&self, virtual_index: u64) -> u64 {
        let n = self.records.len() as u64;
        let lap_ends = *self.ends.last().expect("ends has its zero");
        (virtual_index / n) * lap_ends + self.ends[(virtual_index % n) as usize]
    }
    /// Bytes of records [from, to) (virtual indices).
    pub fn bytes_between(&self, from: u64, to: u64) -> u64 {
        let at = |v: u64| {
            let n = self.records.len() as u64;
            (v / n) * self.total() + self.prefix[(v % n) as usize]
        };
        at(to) - at(from)
    }
}

/// One past the last record (virtual index) of the window that starts at `from`:
/// records up to `target`, at most `window_bytes` of log (at least one record). A
/// window may span the log's wrap: the replayed log is one stream to the applier.
fn window_end(arrivals: &Arrivals, from: u64, target: u64, window_bytes: u64) -> u64 {
    let n = arrivals.records.len() as u64;
    let mut bytes = 0u64;
    for v in from..target {
        bytes += u64::from(arrivals.records[(v % n) as usize].bytes);
        if bytes > window_bytes && v > from {
            return v;
        }
    }
    target
}

/// One cycle's instants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cycle {
    pub spin_up_ordered: Nanoseconds,
    pub ready: Nanoseconds,
    pub applied: Nanoseconds,
    /// Whether the drives were spun down after the batch.
    pub sleeps: bool,
}

/// A window of the timeline: records [start, end) (virtual indices).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimelineWindow {
    pub start: u64,
    pub end: u64,
    pub applied: AppliedWindow,
}

/// What the timeline did.
pub struct Timeline {
    pub cycles: Vec<Cycle>,
    pub windows: Vec<TimelineWindow>,
    /// Per drive, at `span`.
    pub energy: Vec<EnergyReport>,
    pub span: Nanoseconds,
    /// A batch that did not catch up before the next one was due.
    pub fell_behind: bool,
}

impl Timeline {
    /// Log bytes applied per second of applying, over the windows of the first
    /// `cycles` cycles.
    pub fn applied_bytes_per_s(&self, arrivals: &Arrivals, cycles: u32) -> f64 {
        let end = self
            .cycles
            .get(cycles as usize)
            .map_or(Nanoseconds(u64::MAX), |c| c.spin_up_ordered);
        let (mut bytes, mut time) = (0u64, 0u64);
        for window in self.windows.iter().filter(|w| w.applied.finished <= end) {
            bytes += arrivals.bytes_between(window.start, window.end);
            time += (window.applied.finished - window.applied.started).0;
        }
        bytes as f64 / (time as f64 / 1e9).max(1e-9)
    }
}

impl Timeline {
    /// Per batch of the first `cycles`: the log bytes its windows applied and the
    /// time they took (ns), over the windows holding its backlog (the log arrived
    /// by its spin-up order) when `backlog`, else over the windows after them.
    fn applied_per_cycle(
        &self,
        arrivals: &Arrivals,
        cycles: u32,
        backlog: bool,
    ) -> Vec<(u64, u64)> {
        let measured = self.cycles.iter().take(cycles as usize).enumerate();
        measured
            .map(|(index, cycle)| {
                let next = self
                    .cycles
                    .get(index + 1)
                    .map_or(Nanoseconds(u64::MAX), |c| c.spin_up_ordered);
                let backlog_end = arrivals.arrived(cycle.spin_up_ordered);
                self.windows
                    .iter()
                    .filter(|w| {
                        w.applied.started >= cycle.spin_up_ordered
                            && w.applied.finished <= next
                            && (w.start < backlog_end) == backlog
                    })
                    .fold((0, 0), |(bytes, time), window| {
                        (
                            bytes + arrivals.bytes_between(window.start, window.end),
                            time + (window.applied.finished - window.applied.started).0,
                        )
                    })
            })
            .collect()
    }

    /// Log bytes per second of applying over the windows that held each batch's
    /// backlog (the log arrived by its spin-up order), the slowest batch of the
    /// first `cycles`: what a recovery must achieve, since a disaster just before a
    /// batch leaves exactly that backlog (the windows that followed, applying what
    /// arrived during the batch, do not count here).
    pub fn backlog_bytes_per_s(&self, arrivals: &Arrivals, cycles: u32) -> f64 {
        self.applied_per_cycle(arrivals, cycles, true)
            .into_iter()
            .filter(|&(_, time)| time > 0)
            .map(|(bytes, time)| bytes as f64 / (time as f64 / 1e9))
            .fold(f64::INFINITY, f64::min)
    }

    /// Log bytes per second of applying over the windows that followed each
    /// batch's backlog (the log that arrived while the batch applied), over the
    /// first `cycles` cycles; `None` when no batch had such windows. What these
    /// windows cost beyond the backlog is why a batch applies longer than T_apl.
    pub fn catch_up_bytes_per_s(&self, arrivals: &Arrivals, cycles: u32) -> Option<f64> {
        let (bytes, time) = self
            .applied_per_cycle(arrivals, cycles, false)
            .into_iter()
            .fold((0u64, 0u64), |(b, t), (bytes, time)| (b + bytes, t + time));
        (time > 0).then(|| bytes as f64 / (time as f64 / 1e9))
    }
}

/// What the timeline runs with.
pub struct TimelineConfig {
    pub batch_interval: Nanoseconds,
    pub spin_up: Nanoseconds,
    pub spin_down: Nanoseconds,
    pub standby: StandbyLevel,
    pub window_bytes: u64,
    pub cycles: u32,
    pub queue_depth: u32,
    pub sleeps: bool,
    /// Drives of the volume whose I/O is simulated (the first ones; see the
    /// module documentation).
    pub simulated_drives: usize,
}

fn order_all(volume: &mut DataVolume, command: Control) -> Result<(), VolumeError> {
    for drive in 0..volume.drives {
        volume
            .engine
            .control(DeviceId(drive as u32), &[], command)
            .map_err(|e| VolumeError::Drive {
                name: format!("data drive {drive}"),
                problem: e.to_string(),
            })?;
    }
    Ok(())
}

/// Run `config.cycles` cycles (plus one for the trials) on a fresh volume.
pub fn run_timeline(
    volume: DataVolume,
    mut applier: Applier,
    arrivals: &Arrivals,
    config: &TimelineConfig,
) -> Result<Timeline, VolumeError> {
    let mut volume = volume;
    let mut out = Vec::new();
    if config.sleeps {
        order_all(&mut volume, Control::SpinDown(config.standby))?;
    }
    let n = arrivals.records.len() as u64;
    let (mut applied_to, mut cycles, mut windows) = (0u64, Vec::new(), Vec::new());
    let mut span = Nanoseconds(config.batch_interval.0 * u64::from(config.cycles));
    let mut energy = Vec::new();
    let mut fell_behind = false;
    let mut sampled = Vec::new();
    for k in 0..=config.cycles {
        let start = Nanoseconds(config.batch_interval.0 * u64::from(k));
        if volume.engine.now() > start {
            fell_behind = true;
        }
        volume
            .engine
            .run_until(start.max(volume.engine.now()), &mut out);
        if k == config.cycles {
            // A batch that overran ends the span where it ended.
            (energy, span) = crate::energy::drive_reports(
                &volume,
                config.simulated_drives,
                span.max(volume.engine.now()),
            );
        }
        let spin_up_ordered = volume.engine.now();
        if config.sleeps {
            order_all(&mut volume, Control::SpinUp)?;
        }
        let ready = spin_up_ordered
            + if config.sleeps {
                config.spin_up
            } else {
                Nanoseconds::ZERO
            };
        volume.engine.run_until(ready, &mut out);
        let next_start = Nanoseconds(config.batch_interval.0 * u64::from(k + 1));
        let mut first_window_bytes = None;
        // Each window takes everything arrived so far, up to B: the backlog, then
        // what arrived while it was applied, until less than 1/64 of the batch's
        // first window is left (or the next batch is due: the timeline then
        // reports that it fell behind).
        while volume.engine.now() < next_start {
            let target = arrivals.arrived(volume.engine.now());
            if target <= applied_to {
                break;
            }
            let backlog = arrivals.bytes_between(applied_to, target);
            if first_window_bytes.is_some_and(|first: u64| backlog < first / 64) {
                break;
            }
            let end = window_end(arrivals, applied_to, target, config.window_bytes);
            first_window_bytes.get_or_insert(arrivals.bytes_between(applied_to, end));
            let drives = volume.drives as u64;
            let keep = config.simulated_drives as u64;
            sampled.clear();
            sampled.extend(
                (applied_to..end)
                    .map(|v| arrivals.records[(v % n) as usize])
                    .filter(|r| r.page.0 % drives < keep),
            );
            let applied = applier.apply(&mut volume, &sampled, config.queue_depth)?;
            windows.push(TimelineWindow {
                start: applied_to,
                end,
                applied,
            });
            applied_to = end;
        }
        let applied = volume.engine.now();
        if config.sleeps {
            order_all(&mut volume, Control::SpinDown(config.standby))?;
        }
        cycles.push(Cycle {
            spin_up_ordered,
            ready,
            applied,
            sleeps: config.sleeps,
        });
    }
    Ok(Timeline {
        cycles,
        windows,
        energy,
        span,
        fell_behind,
    })
}
