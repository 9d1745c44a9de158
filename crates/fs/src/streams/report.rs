//! What a streams run reports: each stream's start-up and the run's totals.

use spinstack_sim::units::Nanoseconds;

/// One stream's start-up, in start order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StartUp {
    /// From its start to the return of its first call (`None` while that
    /// call was still waiting when the run stopped).
    pub latency: Option<Nanoseconds>,
    /// From its start to its first page being cached (the first byte).
    pub first_byte: Option<Nanoseconds>,
    /// Steps of its first call that waited for the disk.
    pub disk_waits: u32,
    /// Requests the host had in flight when it started: what its first
    /// request queues behind.
    pub queued_at_start: u64,
}

/// What the streams did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StreamReport {
    /// Every stream that started, in start order.
    pub startups: Vec<StartUp>,
    pub requests: u64,
    pub sectors: u64,
    /// Of `requests`, those reading an indirect block.
    pub metadata_requests: u64,
    /// Calls, and those that started more than one period after they were
    /// due (the stream fell behind its rate; never with `SleepAfterCall`).
    pub reads: u64,
    pub late_reads: u64,
    /// Calls that returned and the time they took in all (first calls included).
    pub calls_done: u64,
    pub call_time: Nanoseconds,
    /// When the run gave up or ended.
    pub ended: Nanoseconds,
    /// Requests in flight integrated over time (request-nanoseconds), for the
    /// time-average queue: `in_flight_integral / ended`.
    pub in_flight_integral: u128,
    /// Pages read into the cache and evicted before any stream read them:
    /// read-ahead the cache could not hold until it was wanted.
    pub evicted_unread_pages: u64,
}

impl StreamReport {
    /// Requests the host had in flight on average over the run.
    pub fn mean_in_flight(&self) -> f64 {
        self.in_flight_integral as f64 / self.ended.0.max(1) as f64
    }

    /// Start-up latencies in start order, up to the first stream whose first
    /// call had not returned when the run stopped.
    pub fn startup_latency(&self) -> Vec<Nanoseconds> {
        self.startups.iter().map_while(|s| s.latency).collect()
    }

    /// Streams that started within `limit`: those before the first whose
    /// start-up latency exceeded it (all of them when none did).
    pub fn started_within(&self, limit: Nanoseconds) -> usize {
        let latency = self.startup_latency();
        latency
            .iter()
            .position(|&l| l > limit)
            .unwrap_or(latency.len())
    }
}
