//! Drivers that feed an [`Engine`]: a closed loop (a fixed number of issuers per
//! device, each waiting for its request to complete and then thinking before the
//! next) and an open loop (arrivals at given times, regardless of completions).
//! OWNER: engine helper.
//!
//! Both assign request ids 0, 1, 2, ... in issue order, so a run is a pure function
//! of the engine's devices and the request source.

use crate::device::BlockDevice;
use crate::engine::{DeviceCompletion, DeviceId, Engine, EngineError};
use crate::request::{BlockRequest, Direction, RequestId};
use crate::units::{Lbn, Nanoseconds, Sectors};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// One request an issuer sends, and how long the issuer waits after it completes
/// before sending its next (DiskSim's validate "think" time).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestSpec {
    pub direction: Direction,
    pub lbn: Lbn,
    pub sectors: Sectors,
    pub think_after: Nanoseconds,
}

/// Where a closed loop gets its requests; `None` means this device's issuers stop.
pub trait RequestSource {
    fn next_request(&mut self, device: DeviceId) -> Option<RequestSpec>;
}

impl<F: FnMut(DeviceId) -> Option<RequestSpec>> RequestSource for F {
    fn next_request(&mut self, device: DeviceId) -> Option<RequestSpec> {
        self(device)
    }
}

/// What a driver run did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RunSummary {
    pub issued: u64,
    pub completed: u64,
    /// Simulated time when the last request completed.
    pub end: Nanoseconds,
}

/// A request in flight: which request holds an issuer slot, and its think time.
#[derive(Clone, Copy, Debug)]
struct Slot {
    request: RequestId,
    think_after: Nanoseconds,
}

/// Closed-loop state: per device, `depth` issuer slots stored contiguously.
struct ClosedLoop {
    depth: usize,
    slots: Vec<Option<Slot>>,
    /// Issuers waiting out a think time: (arrival time, issue order, device).
    thinking: BinaryHeap<Reverse<(Nanoseconds, u64, u32)>>,
    next_id: u64,
    thinking_order: u64,
}

impl ClosedLoop {
    /// Ask the source for the device's next request and submit it now into a free slot.
    fn issue<D: BlockDevice, S: RequestSource>(
        &mut self,
        engine: &mut Engine<D>,
        source: &mut S,
        device: DeviceId,
    ) -> Result<(), EngineError> {
        let Some(spec) = source.next_request(device) else {
            return Ok(());
        };
        let base = device.0 as usize * self.depth;
        let free = self.slots[base..base + self.depth]
            .iter()
            .position(Option::is_none)
            .expect("closed loop: an issuer fired with no free slot");
        let id = RequestId(self.next_id);
        self.next_id += 1;
        self.slots[base + free] = Some(Slot {
            request: id,
            think_after: spec.think_after,
        });
        let request = BlockRequest {
            id,
            direction: spec.direction,
            lbn: spec.lbn,
            sectors: spec.sectors,
            arrival: engine.now(),
        };
        engine.submit(device, request)
    }

    /// Free the completion's slot; return the time its issuer fires next.
    fn finish(&mut self, done: &DeviceCompletion) -> Nanoseconds {
        let base = done.device.0 as usize * self.depth;
        let request = done.completion.request.id;
        let slot = self.slots[base..base + self.depth]
            .iter_mut()
            .find(|slot| slot.is_some_and(|slot| slot.request == request))
            .unwrap_or_else(|| panic!("closed loop: {request:?} completed but was never issued"));
        let think = slot
            .take()
            .map_or(Nanoseconds::ZERO, |slot| slot.think_after);
        done.completion.done + think
    }
}

/// Run a closed loop: each device gets `depth` issuers, all issuing at the current
/// time; each completion frees its issuer, which issues again `think_after` later (at
/// once when zero; never before the engine's clock). Ends when every source is
/// exhausted and every request has completed. `on_completion` sees each completion.
/// The engine must hold no outstanding requests when the loop starts (a completion
/// the loop did not issue is an invariant violation and panics).
pub fn run_closed_loop<D, S, F>(
    engine: &mut Engine<D>,
    depth: u32,
    source: &mut S,
    mut on_completion: F,
) -> Result<RunSummary, EngineError>
where
    D: BlockDevice,
    S: RequestSource,
    F: FnMut(&DeviceCompletion),
{
    let depth = depth.max(1) as usize;
    let devices = engine.device_count();
    let mut state = ClosedLoop {
        depth,
        slots: vec![None; devices * depth],
        thinking: BinaryHeap::with_capacity(devices * depth),
        next_id: 0,
        thinking_order: 0,
    };
    let (issued_before, completed_before) = (engine.submitted(), engine.completed());
    for device in 0..devices as u32 {
        for _ in 0..depth {
            state.issue(engine, source, DeviceId(device))?;
        }
    }
    let mut batch = Vec::with_capacity(devices.min(1024));
    let mut end = engine.now();
    loop {
        let next_thought = state.thinking.peek().map(|Reverse((time, _, _))| *time);
        if next_thought.is_none() && engine.is_idle() {
            break;
        }
        let limit = next_thought.unwrap_or(Nanoseconds(u64::MAX));
        batch.clear();
        if engine.step(limit, &mut batch) {
            for done in &batch {
                on_completion(done);
                end = end.max(done.completion.done);
                let fire = state.finish(done);
                if fire <= engine.now() {
                    state.issue(engine, source, done.device)?;
                } else {
                    state.thinking_order += 1;
                    let order = state.thinking_order;
                    state.thinking.push(Reverse((fire, order, done.device.0)));
                }
            }
            continue;
        }
        while let Some(&Reverse((time, _, device))) = state.thinking.peek() {
            if time > engine.now() {
                break;
            }
            state.thinking.pop();
            state.issue(engine, source, DeviceId(device))?;
        }
    }
    Ok(RunSummary {
        issued: engine.submitted() - issued_before,
        completed: engine.completed() - completed_before,
        end,
    })
}

/// One open-loop arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    pub time: Nanoseconds,
    pub device: DeviceId,
    pub direction: Direction,
    pub lbn: Lbn,
    pub sectors: Sectors,
}

/// Run an open loop: submit each arrival at its time (times must not decrease and
/// must not precede the engine's clock), then run until every request completes.
pub fn run_open_loop<D, I, F>(
    engine: &mut Engine<D>,
    arrivals: I,
    mut on_completion: F,
) -> Result<RunSummary, EngineError>
where
    D: BlockDevice,
    I: IntoIterator<Item = Arrival>,
    F: FnMut(&DeviceCompletion),
{
    let (issued_before, completed_before) = (engine.submitted(), engine.completed());
    let mut batch = Vec::with_capacity(64);
    let mut end = engine.now();
    let mut next_id = 0u64;
    let mut deliver = |batch: &mut Vec<DeviceCompletion>, end: &mut Nanoseconds| {
        for done in batch.iter() {
            on_completion(done);
            *end = (*end).max(done.completion.done);
        }
        batch.clear();
    };
    for arrival in arrivals {
        if arrival.time < engine.now() {
            return Err(EngineError::ArrivalInPast {
                time: arrival.time,
                now: engine.now(),
            });
        }
        while engine.step(arrival.time, &mut batch) {
            deliver(&mut batch, &mut end);
        }
        let request = BlockRequest {
            id: RequestId(next_id),
            direction: arrival.direction,
            lbn: arrival.lbn,
            sectors: arrival.sectors,
            arrival: arrival.time,
        };
        next_id += 1;
        engine.submit(arrival.device, request)?;
    }
    engine.run_until_idle(&mut batch);
    deliver(&mut batch, &mut end);
    Ok(RunSummary {
        issued: engine.submitted() - issued_before,
        completed: engine.completed() - completed_before,
        end,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::EngineOptions;
    use crate::fake::FixedServiceDevice;

    fn engine(devices: usize, service_ns: u64) -> Engine<FixedServiceDevice> {
        let mut engine = Engine::new(EngineOptions::default());
        for _ in 0..devices {
            engine.add_device(FixedServiceDevice::new(
                Sectors(1 << 20),
                Nanoseconds(service_ns),
                64,
            ));
        }
        engine
    }

    fn source(count: u64, think_ns: u64) -> impl FnMut(DeviceId) -> Option<RequestSpec> {
        let mut left = count;
        move |_| {
            (left > 0).then(|| {
                left -= 1;
                RequestSpec {
                    direction: Direction::Read,
                    lbn: Lbn(left * 8),
                    sectors: Sectors(8),
                    think_after: Nanoseconds(think_ns),
                }
            })
        }
    }

    // Proves the closed loop at depth 1 with think time reproduces the validate timing:
    // each request arrives `think` after the previous completes, so n requests of
    // service s and think t end at n*s + (n-1)*t.
    #[test]
    fn closed_loop_depth_one_with_think() {
        let mut engine = engine(1, 100);
        let mut responses = Vec::new();
        let summary = run_closed_loop(&mut engine, 1, &mut source(10, 30), |done| {
            responses.push((
                done.completion.request.arrival.0,
                done.completion.response_time().0,
            ))
        })
        .unwrap();
        assert_eq!(
            summary,
            RunSummary {
                issued: 10,
                completed: 10,
                end: Nanoseconds(10 * 100 + 9 * 30)
            }
        );
        assert_eq!(responses[1], (130, 100));
        assert!(responses.iter().all(|&(_, response)| response == 100));
    }

    // Proves depth Q keeps Q requests queued at a FIFO device: response time is Q * s
    // in steady state, and throughput is one per s.
    #[test]
    fn closed_loop_keeps_depth() {
        let mut engine = engine(2, 100);
        let mut last_response = 0;
        let summary = run_closed_loop(&mut engine, 4, &mut source(400, 0), |done| {
            last_response = done.completion.response_time().0;
        })
        .unwrap();
        assert_eq!(summary.completed, 400);
        assert_eq!(summary.end, Nanoseconds(200 * 100));
        assert_eq!(last_response, 400);
    }

    // Proves the open loop submits at the given times and rejects time going backwards.
    #[test]
    fn open_loop_arrivals() {
        let arrival = |time: u64, device: u32| Arrival {
            time: Nanoseconds(time),
            device: DeviceId(device),
            direction: Direction::Write,
            lbn: Lbn(0),
            sectors: Sectors(1),
        };
        let mut engine = engine(2, 100);
        let mut done = Vec::new();
        let summary = run_open_loop(
            &mut engine,
            [
                arrival(0, 0),
                arrival(50, 0),
                arrival(50, 1),
                arrival(500, 1),
            ],
            |d| done.push((d.device.0, d.completion.done.0)),
        )
        .unwrap();
        assert_eq!(done, vec![(0, 100), (1, 150), (0, 200), (1, 600)]);
        assert_eq!(summary.end, Nanoseconds(600));
        let error = run_open_loop(&mut engine, [arrival(10, 0)], |_| {}).unwrap_err();
        assert!(matches!(error, EngineError::ArrivalInPast { .. }));
    }
}
