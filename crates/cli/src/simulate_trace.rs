//! `spinstack simulate --trace FILE`: replay a block trace on a drive or a volume.
//!
//! **Open loop** (the default): each record is issued at its trace time. When the
//! device's queue is full the request waits in a host FIFO (as in an operating
//! system's block layer), and its response time counts from its trace arrival,
//! so a device slower than the trace shows growing response times. The FIFO is
//! bounded ([`MAX_WAITING`]); passing it is an error, not silent growth.
//! **Closed loop** (`--queue-depth N`): the trace's order and addresses at a
//! fixed number of outstanding requests, timestamps ignored.
//!
//! **Addresses.** A request past the device's capacity is an error naming the
//! trace line, or with `--wrap` its LBN is taken modulo the capacity (moved back
//! so the request ends inside the device); the report counts wrapped requests.
//! **Devices.** `--device K` replays that device's records; without it the first
//! record's device is replayed and other devices' records are skipped (counted).

use crate::cmd_trace::{device_name, progress_due, record_progress, TraceInput};
use crate::volume_report::VolumeReport;
use anyhow::Context;
use serde::Serialize;
use spinstack_sim::device::{BlockDevice, DeviceError};
use spinstack_sim::driver::{run, run_closed_loop, Host, Io, Issue, RequestSource, RequestSpec};
use spinstack_sim::engine::{DeviceCompletion, DeviceId, Engine, EngineError, EngineOptions};
use spinstack_sim::request::{Operation, RequestId};
use spinstack_sim::stats::{ResponseStats, ResponseSummary};
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors};
use spinstack_trace::{TraceError, TraceReader, TraceRecord};
use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::io::BufReader;
use std::path::Path;
use std::time::Instant;

/// Most requests the open loop holds back while the device's queue is full.
pub const MAX_WAITING: usize = 1 << 20;

/// Everything `simulate --trace` prints.
#[derive(Serialize, Debug)]
pub(crate) struct TraceReport {
    pub disk: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub volume: Option<VolumeReport>,
    trace: String,
    format: &'static str,
    /// "open loop" (trace times) or "closed loop" (queue depth).
    mode: &'static str,
    queue_depth: Option<u32>,
    /// The replayed device, as the trace names it.
    device: Option<String>,
    limit: Option<u64>,
    /// "error" (past capacity is an error) or "wrap" (modulo capacity).
    past_capacity: &'static str,
    capacity_sectors: u64,
    records: u64,
    reads: u64,
    writes: u64,
    trims: u64,
    flushes: u64,
    wrapped: u64,
    skipped_other_devices: u64,
    completed: u64,
    response: ResponseSummary,
    /// From the first to the last replayed arrival.
    trace_seconds: f64,
    simulated_seconds: f64,
    wall_seconds: f64,
}

/// The trace records for the device: filtered by device, limited, checked (or
/// wrapped) against the capacity, counted.
struct Feed {
    reader: TraceReader<BufReader<File>>,
    device: Option<u32>,
    limit: Option<u64>,
    wrap: bool,
    capacity: Sectors,
    counts: [u64; 4],
    wrapped: u64,
    skipped_other_devices: u64,
    first_arrival: Option<Nanoseconds>,
    last_arrival: Nanoseconds,
    progress: indicatif::ProgressBar,
}

impl Feed {
    fn taken(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The next record to replay, `None` at the end of the trace or the limit.
    fn next(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        if self.limit.is_some_and(|limit| self.taken() >= limit) {
            return Ok(None);
        }
        while let Some(record) = self.reader.next() {
            let mut record = record?;
            let device = *self.device.get_or_insert(record.device);
            if record.device != device {
                self.skipped_other_devices += 1;
                continue;
            }
            if record.operation != Operation::Flush {
                record.lbn = self.place(&record)?;
            }
            self.counts[operation_index(record.operation)] += 1;
            if progress_due(self.taken()) {
                self.progress.set_position(self.taken());
            }
            self.first_arrival.get_or_insert(record.arrival);
            self.last_arrival = record.arrival;
            return Ok(Some(record));
        }
        Ok(None)
    }

    /// `lbn` if the request fits the device, else wrapped (`--wrap`, the rule of
    /// [`TraceRecord::placed`]) or an error.
    fn place(&mut self, record: &TraceRecord) -> Result<Lbn, TraceError> {
        let capacity = self.capacity;
        match record.placed(capacity, self.wrap) {
            Some(lbn) => {
                if lbn != record.lbn {
                    self.wrapped += 1;
                }
                Ok(lbn)
            }
            None => Err(self.reader.error_here(format!(
                "{} sectors from LBN {} pass the device's capacity of {} sectors{}",
                record.sectors.0,
                record.lbn.0,
                capacity.0,
                if self.wrap {
                    ""
                } else {
                    " (--wrap takes addresses modulo the capacity)"
                }
            ))),
        }
    }
}

fn operation_index(operation: Operation) -> usize {
    match operation {
        Operation::Read => 0,
        Operation::Write => 1,
        Operation::Trim => 2,
        Operation::Flush => 3,
    }
}

/// How a trace is replayed (`simulate`'s `--limit`, `--wrap`, `--queue-depth`).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ReplayOptions {
    /// Replay at most this many records.
    pub limit: Option<u64>,
    /// Move a request past the capacity inside it instead of refusing the trace.
    pub wrap: bool,
    /// Closed loop at this depth, ignoring the trace's times; `None` replays by time.
    pub queue_depth: Option<u32>,
}

/// Replay `trace` on `device` as `args` say; the engine holds the device afterwards.
pub(crate) fn replay<D: BlockDevice>(
    device: D,
    disk: &str,
    args: &ReplayOptions,
    trace: &Path,
    input: &TraceInput,
) -> anyhow::Result<(TraceReport, Engine<D>)> {
    let mut feed = Feed {
        reader: input.open(trace)?,
        device: input.device,
        limit: args.limit,
        wrap: args.wrap,
        capacity: device.capacity(),
        counts: [0; 4],
        wrapped: 0,
        skipped_other_devices: 0,
        first_arrival: None,
        last_arrival: Nanoseconds::ZERO,
        progress: record_progress("replaying"),
    };
    let mut engine = Engine::new(EngineOptions::default());
    engine.add_device(device);
    let mut stats = ResponseStats::new();
    let started = Instant::now();
    let summary = match args.queue_depth {
        Some(depth) => {
            anyhow::ensure!(depth > 0, "--queue-depth must be at least 1");
            let mut source = ClosedSource {
                feed: &mut feed,
                error: None,
            };
            let summary = run_closed_loop(&mut engine, depth, &mut source, |done| {
                stats.record(done.completion.response_time())
            });
            if let Some(error) = source.error {
                return Err(error.into());
            }
            summary.context("the replay stopped")?
        }
        None => {
            let mut host = OpenLoop {
                feed: &mut feed,
                next: None,
                waiting: VecDeque::new(),
                arrivals: HashMap::new(),
                stats: &mut stats,
            };
            run(&mut engine, &mut host).context("the replay stopped")?
        }
    };
    let wall_seconds = started.elapsed().as_secs_f64();
    feed.progress.finish_and_clear();
    // Statistics of nothing would print as zeros that look like measurements.
    anyhow::ensure!(
        feed.taken() > 0,
        "{}: no requests to replay ({})",
        trace.display(),
        crate::cmd_trace::why_no_records(feed.skipped_other_devices)
    );
    let format = input.format();
    let report = TraceReport {
        disk: disk.to_string(),
        volume: None,
        trace: trace.display().to_string(),
        format: format.name(),
        mode: if args.queue_depth.is_some() {
            "closed loop"
        } else {
            "open loop"
        },
        queue_depth: args.queue_depth,
        device: feed.device.map(|device| device_name(format, device)),
        limit: args.limit,
        past_capacity: if args.wrap { "wrap" } else { "error" },
        capacity_sectors: feed.capacity.0,
        records: feed.taken(),
        reads: feed.counts[0],
        writes: feed.counts[1],
        trims: feed.counts[2],
        flushes: feed.counts[3],
        wrapped: feed.wrapped,
        skipped_other_devices: feed.skipped_other_devices,
        completed: summary.completed,
        response: stats.summary(),
        trace_seconds: feed
            .last_arrival
            .saturating_sub(feed.first_arrival.unwrap_or_default())
            .as_secs_f64(),
        simulated_seconds: summary.end.as_secs_f64(),
        wall_seconds,
    };
    Ok((report, engine))
}

/// The closed loop's source: the feed, with its first error kept for the caller.
struct ClosedSource<'f> {
    feed: &'f mut Feed,
    error: Option<TraceError>,
}

impl RequestSource for ClosedSource<'_> {
    fn next_request(&mut self, _: DeviceId) -> Option<RequestSpec> {
        match self.feed.next() {
            Ok(record) => record.map(|record| RequestSpec {
                operation: record.operation,
                lbn: record.lbn,
                sectors: record.sectors,
                think_after: Nanoseconds::ZERO,
            }),
            Err(error) => {
                self.error.get_or_insert(error);
                None
            }
        }
    }
}

/// The open-loop host: one wake-up at a time, for the next record's arrival.
struct OpenLoop<'f> {
    feed: &'f mut Feed,
    /// The next record, read ahead to know when to wake.
    next: Option<TraceRecord>,
    /// Arrived requests the device's queue had no room for, oldest first.
    waiting: VecDeque<(Nanoseconds, Issue)>,
    /// Trace arrival of each request given to the device.
    arrivals: HashMap<RequestId, Nanoseconds>,
    stats: &'f mut ResponseStats,
}

const DEVICE: DeviceId = DeviceId(0);

impl OpenLoop<'_> {
    /// Give waiting requests to the device, oldest first, until it is full.
    fn drain<D: BlockDevice>(&mut self, io: &mut Io<'_, D>) -> anyhow::Result<()> {
        while let Some(&(arrival, issue)) = self.waiting.front() {
            match io.submit(DEVICE, issue) {
                Ok(id) => {
                    self.arrivals.insert(id, arrival);
                    self.waiting.pop_front();
                }
                Err(error) if is_full(&error) => return Ok(()),
                Err(error) => return Err(error.into()),
            }
        }
        Ok(())
    }

    /// Issue every record due now, then wake at the next one's arrival.
    fn arrive<D: BlockDevice>(&mut self, io: &mut Io<'_, D>) -> anyhow::Result<()> {
        loop {
            if self.next.is_none() {
                self.next = self.feed.next()?;
            }
            let Some(record) = self.next else {
                return Ok(());
            };
            if record.arrival > io.now() {
                return Ok(io.wake_at(record.arrival, 0)?);
            }
            self.next = None;
            if self.waiting.len() >= MAX_WAITING {
                return Err(self
                    .feed
                    .reader
                    .error_here(format!(
                        "the device is {MAX_WAITING} requests behind the trace: it cannot keep up \
                     with the trace's arrivals (--queue-depth N replays as a closed loop)"
                    ))
                    .into());
            }
            let issue = Issue::new(record.operation, record.lbn, record.sectors);
            self.waiting.push_back((record.arrival, issue));
            self.drain(io)?;
        }
    }
}

/// The device (or the engine's per-device bound) has no room now.
fn is_full(error: &EngineError) -> bool {
    matches!(
        error,
        EngineError::Device {
            error: DeviceError::QueueFull { .. },
            ..
        } | EngineError::TooManyOutstanding { .. }
    )
}

impl<D: BlockDevice> Host<D> for OpenLoop<'_> {
    type Error = anyhow::Error;

    fn start(&mut self, io: &mut Io<'_, D>) -> anyhow::Result<()> {
        self.arrive(io)
    }

    fn completed(&mut self, done: &DeviceCompletion, io: &mut Io<'_, D>) -> anyhow::Result<()> {
        let id = done.completion.request.id;
        let arrival = self
            .arrivals
            .remove(&id)
            .with_context(|| format!("request {id:?} completed but was never issued"))?;
        self.stats.record(io.now().saturating_sub(arrival));
        self.drain(io)
    }

    fn woke(&mut self, _: u64, io: &mut Io<'_, D>) -> anyhow::Result<()> {
        self.arrive(io)
    }
}

/// Print `report` as text or JSON (volume lines by the caller's printer).
pub(crate) fn print(report: &TraceReport, json: bool) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string(report)?);
        return Ok(());
    }
    println!(
        "{}: replayed {} ({}) {}{}: {} records (reads {}, writes {}, trims {}, flushes {}), device {}",
        report.disk,
        report.trace,
        report.format,
        report.mode,
        report.queue_depth.map_or(String::new(), |depth| format!(" at queue depth {depth}")),
        report.records,
        report.reads,
        report.writes,
        report.trims,
        report.flushes,
        report.device.as_deref().unwrap_or("-"),
    );
    let response = &report.response;
    println!(
        "response time (ms): mean {:.3}  p50 {:.3}  p90 {:.3}  p99 {:.3}  max {:.3}  ({} completed)",
        response.mean_ms, response.p50_ms, response.p90_ms, response.p99_ms, response.max_ms, report.completed
    );
    println!(
        "trace spans {:.3} s; simulated {:.3} s in {:.3} s wall",
        report.trace_seconds, report.simulated_seconds, report.wall_seconds
    );
    println!(
        "addresses past the capacity of {} sectors: {}{}",
        report.capacity_sectors,
        if report.past_capacity == "wrap" {
            "wrapped modulo the capacity"
        } else {
            "an error"
        },
        if report.past_capacity == "wrap" {
            format!(" ({} requests wrapped)", report.wrapped)
        } else {
            String::new()
        }
    );
    if report.skipped_other_devices > 0 {
        println!(
            "skipped {} records of other devices",
            report.skipped_other_devices
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd_trace::{ActionArg, FormatArg};
    use spinstack_sim::fake::FixedServiceDevice;

    /// Replay `text` (DiskSim ASCII) on a FIFO device serving each request in 2 ms
    /// with room for `room` requests.
    fn replay_text(text: &str, room: usize, options: ReplayOptions) -> anyhow::Result<TraceReport> {
        let path = std::env::temp_dir().join(format!(
            "spinstack-replay-{}-{}-{}.trace",
            std::process::id(),
            text.len() ^ room,
            u8::from(options.wrap) + options.queue_depth.map_or(0, |_| 2)
        ));
        std::fs::write(&path, text).unwrap();
        let input = TraceInput {
            format: FormatArg::Disksim,
            blkparse_action: ActionArg::D,
            device: None,
        };
        let device = FixedServiceDevice::new(Sectors(1000), Nanoseconds(2_000_000), room);
        let result = replay(device, "fake", &options, &path, &input).map(|(report, _)| report);
        std::fs::remove_file(&path).ok();
        result
    }

    // Proves the open loop issues at trace times and holds arrivals the full device
    // refuses in a FIFO, counting their wait: four requests at time 0 on a device
    // with room for one complete at 2, 4, 6, 8 ms (mean 5); spaced 10 ms apart
    // each takes 2 ms, and the run ends at 32 ms.
    #[test]
    fn open_loop_waits_in_a_host_fifo_and_keeps_trace_times() {
        let burst = "0 0 1 1 1\n0 0 2 1 1\n0 0 3 1 1\n0 0 4 1 1\n";
        let report = replay_text(burst, 1, ReplayOptions::default()).unwrap();
        assert_eq!(report.completed, 4);
        assert!(
            (report.response.mean_ms - 5.0).abs() < 1e-9,
            "{:?}",
            report.response
        );
        let spaced = "0 0 1 1 1\n10 0 2 1 1\n20 0 3 1 1\n30 0 4 1 1\n";
        let report = replay_text(spaced, 1, ReplayOptions::default()).unwrap();
        assert!(
            (report.response.max_ms - 2.0).abs() < 1e-9,
            "{:?}",
            report.response
        );
        assert!((report.simulated_seconds - 0.032).abs() < 1e-12);
        // The closed loop ignores the times: four back-to-back 2 ms requests.
        let report = replay_text(
            spaced,
            1,
            ReplayOptions {
                queue_depth: Some(1),
                ..ReplayOptions::default()
            },
        )
        .unwrap();
        assert!((report.simulated_seconds - 0.008).abs() < 1e-12);
    }

    // Proves --wrap moves a request past the capacity inside it (and counts it),
    // and that without it the error names the line.
    #[test]
    fn wrap_or_error_past_capacity() {
        let text = "0 0 10 1 1\n1 0 1990 20 1\n";
        let error = replay_text(text, 4, ReplayOptions::default()).unwrap_err();
        assert!(
            format!("{error:#}").contains(".trace:2: 20 sectors from LBN 1990"),
            "{error:#}"
        );
        let report = replay_text(
            text,
            4,
            ReplayOptions {
                wrap: true,
                ..ReplayOptions::default()
            },
        )
        .unwrap();
        assert_eq!((report.wrapped, report.completed), (1, 2));
    }
}
