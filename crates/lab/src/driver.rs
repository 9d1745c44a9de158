//! The paper's two closed-loop workloads over any [`BlockDevice`] (§5.2):
//! *onereq* keeps one request outstanding at the disk, *tworeq* keeps one queued in
//! addition to the one being serviced. The next request is issued the instant a
//! completion arrives (no host think time).
//!
//! Head time (Figure 5): for onereq, a request's response time; for tworeq, the time
//! from the previous completion to this one. Either way the average head time is the
//! reciprocal of throughput, which is how it is computed here for tworeq.

use spinstack_sim::device::BlockDevice;
use spinstack_sim::driver::{self as sim_driver, RequestSpec};
use spinstack_sim::engine::{Engine, EngineError, EngineOptions};
use spinstack_sim::request::{Completion, Operation};
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors};

/// How many requests the host keeps at the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    OneReq,
    TwoReq,
}

impl Workload {
    pub fn outstanding(self) -> usize {
        match self {
            Workload::OneReq => 1,
            Workload::TwoReq => 2,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Workload::OneReq => "onereq",
            Workload::TwoReq => "tworeq",
        }
    }
}

/// What the host asks for: `sectors` from `lbn`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    pub operation: Operation,
    pub lbn: Lbn,
    pub sectors: Sectors,
}

/// Every completion of a run, in completion order.
#[derive(Clone, Debug)]
pub struct Run {
    pub completions: Vec<Completion>,
}

/// Requests at the start of a run that are left out of averages: the first requests
/// of tworeq see an idle disk and an empty queue, unlike the steady state.
pub const WARM_UP_REQUESTS: usize = 2;

impl Run {
    /// Steady-state completions (after the warm-up).
    pub fn measured(&self) -> &[Completion] {
        &self.completions[WARM_UP_REQUESTS.min(self.completions.len())..]
    }

    /// Average head time in milliseconds: total elapsed time between the last
    /// warm-up completion and the last completion, per request.
    pub fn mean_head_time_ms(&self) -> f64 {
        let all = &self.completions;
        if all.len() <= WARM_UP_REQUESTS {
            return f64::NAN;
        }
        let start = all[WARM_UP_REQUESTS - 1].done;
        let end = all[all.len() - 1].done;
        (end - start).as_ms_f64() / (all.len() - WARM_UP_REQUESTS) as f64
    }

    /// Response times of the measured requests, in milliseconds.
    pub fn response_times_ms(&self) -> Vec<f64> {
        self.measured()
            .iter()
            .map(|c| c.response_time().as_ms_f64())
            .collect()
    }
}

/// Run `accesses` through `device` keeping `workload.outstanding()` at the disk:
/// the engine's closed loop (the one event loop), next request issued the instant
/// a completion arrives.
pub fn run_closed_loop(
    device: &mut dyn BlockDevice,
    workload: Workload,
    accesses: &[Access],
) -> Result<Run, EngineError> {
    let mut engine = Engine::new(EngineOptions::default());
    engine.add_device(device);
    let mut pending = accesses.iter();
    let mut source = |_| {
        pending.next().map(|access| RequestSpec {
            operation: access.operation,
            lbn: access.lbn,
            sectors: access.sectors,
            think_after: Nanoseconds::ZERO,
        })
    };
    let mut completions = Vec::with_capacity(accesses.len());
    sim_driver::run_closed_loop(
        &mut engine,
        workload.outstanding() as u32,
        &mut source,
        |done| completions.push(done.completion),
    )?;
    Ok(Run { completions })
}

/// Mean and (population) standard deviation.
pub fn mean_and_deviation(values: &[f64]) -> (f64, f64) {
    if values.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / values.len() as f64;
    (mean, variance.sqrt())
}
