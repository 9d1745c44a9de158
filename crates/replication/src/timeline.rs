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
//! **Warm-up.** The run starts with the plan's own estimate of the steady state: at
//! time 0 the backlog is R_gen·(T_wnd − T_apl) and the drives are in standby. It is
//! not the steady state: a batch catches up on what arrived while it applied too, and
//! applies for longer than T_apl (its last windows are small and compact little), so
//! the backlog it leaves the next batch is smaller than the one cycle 0 starts from
//! (on 8 drives at W = 160, 512 MB, RTO 100 s: 15 MB less, enough to spill cycle 0's
//! backlog into a second window). Cycle 0 is therefore a warm-up
//! ([`WARM_UP_CYCLES`]): the energy books, the measured cycles and the failover
//! instants start at cycle 1's spin-up order. When the plan leaves no time asleep
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
//! The energy is read from cycle 1's spin-up order (T_wnd) to (K + 1)·T_wnd; one
//! more cycle is simulated so that every disaster instant in that span has the
//! windows that would recover it measured, and is itself checked for falling behind.
//!
//! **Prefixes.** Before each window after the warm-up is applied, a copy of the
//! volume and applier applies its first 1/16 and 1/4 alone ([`PREFIX_CUTS`]), and
//! the copies are dropped: what a disaster that found only that much of the window
//! arrived would have to apply, measured from the same drive and buffer-pool state.

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
    /// Its prefixes' apply times, ascending, each simulated from the state the
    /// window itself started from (`None` for the warm-up's windows, which no
    /// failover instant sees unapplied).
    pub prefixes: Option<[PrefixTime; PREFIX_CUTS.len()]>,
}

/// One prefix of a window, [window start, `end`), and the time applying it alone
/// took.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PrefixTime {
    pub end: u64,
    pub time: Nanoseconds,
}

/// The prefixes measured of every window after the warm-up, as shares of its log
/// bytes (numerator, denominator). A disaster that finds a window partly arrived
/// must apply that part; the failover trials charge it the shortest measured
/// prefix that holds it, else the whole window (the part is then a subset of what
/// was timed).
///
/// **Why these two.** Between batches a sleeping volume's recovery is the
/// transition penalty plus the part's apply time, and the part grows with time, so
/// the worst sleeping instant is just before the next spin-up, when almost the whole
/// window waits: the whole window's time bounds it closely (apply time grows slowly
/// with bytes there, as a larger window folds more: 262 MB took 67 s and 505 MB
/// 73 s on 8 drives at W = 160). The one place a whole-window charge would decide
/// a verdict wrongly is just after a spin-down is ordered: the longest penalty (spin-
/// down then spin-up) with only a sliver of the next window arrived. The small cuts
/// cover that, and cost 5/16 of a window's apply; a prefix of one half and more
/// cost 2.4 times the whole dr-batch-interval run in CPU (measured with four cuts,
/// 1/4 to 7/8) and would only tighten the mean recovery, not the worst.
pub const PREFIX_CUTS: [(u64, u64); 2] = [(1, 16), (1, 4)];

impl TimelineWindow {
    /// The measured time of applying [start, `held`) alone, `held` in
    /// (start, end]: the first measured prefix holding it, else the whole window.
    pub fn time_to_apply_up_to(&self, held: u64) -> Nanoseconds {
        debug_assert!(self.start < held && held <= self.end);
        self.prefixes
            .iter()
            .flatten()
            .find(|prefix| prefix.end >= held)
            .map_or(self.applied.finished - self.applied.started, |p| p.time)
    }
}

/// Cycles simulated before the measured ones (see the module documentation).
pub const WARM_UP_CYCLES: usize = 1;

/// What the timeline did.
pub struct Timeline {
    /// Every cycle simulated: the warm-up, the measured ones, and the one after
    /// them that recovers the last instants.
    pub cycles: Vec<Cycle>,
    pub windows: Vec<TimelineWindow>,
    /// Per drive, over the measured span.
    pub energy: Vec<EnergyReport>,
    /// When the measured span starts (the first measured cycle's spin-up order).
    pub measured_from: Nanoseconds,
    /// How long the measured span is.
    pub span: Nanoseconds,
    /// A batch that did not catch up before the next one was due.
    pub fell_behind: bool,
}

impl Timeline {
    /// The measured cycles (after the warm-up), at most `cycles` of them.
    pub fn measured_cycles(&self, cycles: u32) -> &[Cycle] {
        let start = WARM_UP_CYCLES.min(self.cycles.len());
        let end = (WARM_UP_CYCLES + cycles as usize).min(self.cycles.len());
        &self.cycles[start..end]
    }

    /// Log bytes applied per second of applying, over the windows of the first
    /// `cycles` measured cycles.
    pub fn applied_bytes_per_s(&self, arrivals: &Arrivals, cycles: u32) -> f64 {
        let end = self
            .cycles
            .get(WARM_UP_CYCLES + cycles as usize)
            .map_or(Nanoseconds(u64::MAX), |c| c.spin_up_ordered);
        let (mut bytes, mut time) = (0u64, 0u64);
        let measured = self
            .windows
            .iter()
            .filter(|w| w.applied.started >= self.measured_from && w.applied.finished <= end);
        for window in measured {
            bytes += arrivals.bytes_between(window.start, window.end);
            time += (window.applied.finished - window.applied.started).0;
        }
        bytes as f64 / (time as f64 / 1e9).max(1e-9)
    }
}

impl Timeline {
    /// Per batch of the first `cycles` measured ones: the log bytes its windows
    /// applied and the time they took (ns), over the windows holding its backlog
    /// (the log arrived by its spin-up order) when `backlog`, else over the windows
    /// after them.
    fn applied_per_cycle(
        &self,
        arrivals: &Arrivals,
        cycles: u32,
        backlog: bool,
    ) -> Vec<(u64, u64)> {
        let measured = self.cycles.iter().enumerate().skip(WARM_UP_CYCLES);
        measured
            .take(cycles as usize)
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
    /// first `cycles` measured ones: what a recovery must achieve, since a disaster
    /// just before a batch leaves exactly that backlog (the windows that followed,
    /// applying what arrived during the batch, do not count here).
    pub fn backlog_bytes_per_s(&self, arrivals: &Arrivals, cycles: u32) -> f64 {
        self.applied_per_cycle(arrivals, cycles, true)
            .into_iter()
            .filter(|&(_, time)| time > 0)
            .map(|(bytes, time)| bytes as f64 / (time as f64 / 1e9))
            .fold(f64::INFINITY, f64::min)
    }

    /// Log bytes per second of applying over the windows that followed each
    /// batch's backlog (the log that arrived while the batch applied), over the
    /// first `cycles` measured cycles; `None` when no batch had such windows. What
    /// these windows cost beyond the backlog is why a batch applies longer than
    /// T_apl.
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

/// Run the warm-up, `config.cycles` measured cycles and one more for the trials, on
/// a fresh volume.
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
    let warm_up = WARM_UP_CYCLES as u32;
    let last = warm_up + config.cycles;
    let (mut energy_from, mut measured_from) = (Vec::new(), Nanoseconds::ZERO);
    let (mut energy, mut span) = (Vec::new(), Nanoseconds::ZERO);
    let mut fell_behind = false;
    let mut sampled = Vec::new();
    for k in 0..=last {
        let start = Nanoseconds(config.batch_interval.0 * u64::from(k));
        if volume.engine.now() > start {
            fell_behind = true;
        }
        volume
            .engine
            .run_until(start.max(volume.engine.now()), &mut out);
        // The books' two readings; a batch that overran moves one to where it ended.
        let reading = || {
            crate::energy::drive_reports(
                &volume,
                config.simulated_drives,
                start.max(volume.engine.now()),
            )
        };
        if k == warm_up {
            (energy_from, measured_from) = reading();
        }
        if k == last {
            let (at_end, end) = reading();
            span = end - measured_from;
            energy = at_end
                .iter()
                .zip(&energy_from)
                .map(|(later, earlier)| later.since(earlier))
                .collect();
            for (drive, report) in energy.iter().enumerate() {
                crate::energy::assert_conserved(report, span, drive);
            }
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
            let prefixes = match k >= warm_up {
                true => Some(measure_prefixes(
                    &volume, &applier, arrivals, applied_to, end, config,
                )?),
                false => None,
            };
            let applied = applier.apply(&mut volume, &sampled, config.queue_depth)?;
            windows.push(TimelineWindow {
                start: applied_to,
                end,
                applied,
                prefixes,
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
    // The last cycle has no next one to find it still applying: check it here.
    if volume.engine.now() > Nanoseconds(config.batch_interval.0 * u64::from(last + 1)) {
        fell_behind = true;
    }
    Ok(Timeline {
        cycles,
        windows,
        energy,
        measured_from,
        span,
        fell_behind,
    })
}

/// The apply time of each [`PREFIX_CUTS`] prefix of the window [start, end), each
/// on a copy of the volume and applier as they stand before the window (the copies
/// are dropped: the timeline goes on with the whole window).
fn measure_prefixes(
    volume: &DataVolume,
    applier: &Applier,
    arrivals: &Arrivals,
    start: u64,
    end: u64,
    config: &TimelineConfig,
) -> Result<[PrefixTime; PREFIX_CUTS.len()], VolumeError> {
    let n = arrivals.records.len() as u64;
    let (drives, keep) = (volume.drives as u64, config.simulated_drives as u64);
    let whole = arrivals.bytes_between(start, end);
    let mut prefix_end = start;
    let mut out = [PrefixTime {
        end,
        time: Nanoseconds::ZERO,
    }; PREFIX_CUTS.len()];
    for (slot, &(numerator, denominator)) in out.iter_mut().zip(&PREFIX_CUTS) {
        let cut_bytes = whole * numerator / denominator;
        while prefix_end < end && arrivals.bytes_between(start, prefix_end) < cut_bytes {
            prefix_end += 1;
        }
        let records: Vec<LogRecord> = (start..prefix_end.max(start + 1))
            .map(|v| arrivals.records[(v % n) as usize])
            .filter(|r| r.page.0 % drives < keep)
            .collect();
        let (mut volume, mut applier) = (volume.clone(), applier.clone());
        let applied = applier.apply(&mut volume, &records, config.queue_depth)?;
        *slot = PrefixTime {
            end: prefix_end.max(start + 1),
            time: applied.finished - applied.started,
        };
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
