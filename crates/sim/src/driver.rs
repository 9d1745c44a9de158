//! The one event loop: a [`Host`] (the program above the stack: a workload, a
//! trace replay, an application model, a replica) drives an [`Engine`]. The loop
//! hands the host every completion and every wake-up it asked for, in simulated
//! time order, and the host may issue new requests, set wake-ups and send control
//! commands from inside those callbacks (closed loops, think times, a replica
//! applying a batch when its timer fires).
//!
//! **Order at equal times.** Device events due at an instant are served before a
//! host wake-up due at the same instant; wake-ups at one instant fire in the order
//! they were set. Request ids are 0, 1, 2, ... in issue order, so a run is a pure
//! function of the devices and the host.
//!
//! **Bounds.** The wake-up queue holds at most [`MAX_WAKE_UPS`] entries; setting
//! one more is an error, not a silent growth.
//!
//! Two hosts come with the loop: [`run_closed_loop`] (a fixed number of issuers per
//! device, each thinking after its request completes) and [`run_open_loop`]
//! (arrivals at given times).

use crate::device::{BlockDevice, Control, MemberIndex};
use crate::engine::{DeviceCompletion, DeviceId, Engine, EngineError};
use crate::request::{BlockRequest, Operation, RequestId};
use crate::units::{Lbn, Nanoseconds, Sectors};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Most wake-ups a host may have pending at once.
pub const MAX_WAKE_UPS: usize = 1 << 20;

/// One request a host issues (the loop assigns its id and arrival time).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Issue {
    pub operation: Operation,
    pub lbn: Lbn,
    pub sectors: Sectors,
    pub force_unit_access: bool,
}

impl Issue {
    pub fn new(operation: Operation, lbn: Lbn, sectors: Sectors) -> Issue {
        Issue {
            operation,
            lbn,
            sectors,
            force_unit_access: false,
        }
    }
}

/// The program above the stack. Every callback may issue requests, set wake-ups
/// and send control commands through `io`.
pub trait Host<D: BlockDevice> {
    type Error: From<EngineError>;
    /// Called once, at the engine's current time, before anything else.
    fn start(&mut self, io: &mut Io<'_, D>) -> Result<(), Self::Error>;
    /// A request this host issued has completed (at `io.now()`).
    fn completed(&mut self, done: &DeviceCompletion, io: &mut Io<'_, D>)
        -> Result<(), Self::Error>;
    /// A wake-up set with [`Io::wake_at`] is due (at `io.now()`).
    fn woke(&mut self, token: u64, io: &mut Io<'_, D>) -> Result<(), Self::Error>;
}

/// Pending wake-ups: (time, order set, token).
type WakeUps = BinaryHeap<Reverse<(Nanoseconds, u64, u64)>>;

/// What a host may do to the engine from inside a callback.
pub struct Io<'a, D: BlockDevice> {
    engine: &'a mut Engine<D>,
    wake_ups: &'a mut WakeUps,
    next_id: &'a mut u64,
    next_wake_order: &'a mut u64,
}

impl<D: BlockDevice> Io<'_, D> {
    pub fn now(&self) -> Nanoseconds {
        self.engine.now()
    }

    /// Issue `issue` to `device` now; returns the request's id.
    pub fn submit(&mut self, device: DeviceId, issue: Issue) -> Result<RequestId, EngineError> {
        let id = RequestId(*self.next_id);
        let request = BlockRequest {
            id,
            operation: issue.operation,
            lbn: issue.lbn,
            sectors: issue.sectors,
            arrival: self.engine.now(),
            force_unit_access: issue.force_unit_access,
        };
        self.engine.submit(device, request)?;
        *self.next_id += 1;
        Ok(id)
    }

    /// Call the host's `woke(token)` at `at` (not before now).
    pub fn wake_at(&mut self, at: Nanoseconds, token: u64) -> Result<(), EngineError> {
        if at < self.engine.now() {
            return Err(EngineError::ArrivalInPast {
                time: at,
                now: self.engine.now(),
            });
        }
        if self.wake_ups.len() >= MAX_WAKE_UPS {
            return Err(EngineError::TooManyWakeUps {
                limit: MAX_WAKE_UPS,
            });
        }
        *self.next_wake_order += 1;
        self.wake_ups
            .push(Reverse((at, *self.next_wake_order, token)));
        Ok(())
    }

    /// Send a control command to `device` (or a member below it) now.
    pub fn control(
        &mut self,
        device: DeviceId,
        path: &[MemberIndex],
        command: Control,
    ) -> Result<(), EngineError> {
        self.engine.control(device, path, command)
    }

    /// Read access to a device (its state, counters, energy).
    pub fn device(&self, id: DeviceId) -> Option<&D> {
        self.engine.device(id)
    }

    pub fn device_count(&self) -> usize {
        self.engine.device_count()
    }

    /// Requests given to `device` and not yet completed.
    pub fn outstanding(&self, device: DeviceId) -> u32 {
        self.engine.outstanding(device)
    }
}

/// What a run did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RunSummary {
    pub issued: u64,
    pub completed: u64,
    /// Simulated time when the last request completed.
    pub end: Nanoseconds,
}

/// Run `host` on `engine` until no request is outstanding and no wake-up is
/// pending. The engine must hold no outstanding requests when the run starts
/// (completions of requests the host did not issue would reach it).
pub fn run<D: BlockDevice, H: Host<D>>(
    engine: &mut Engine<D>,
    host: &mut H,
) -> Result<RunSummary, H::Error> {
    let (issued_before, completed_before) = (engine.submitted(), engine.completed());
    let mut wake_ups = WakeUps::new();
    let (mut next_id, mut next_wake_order) = (0u64, 0u64);
    let mut end = engine.now();
    let mut batch = Vec::with_capacity(engine.device_count().clamp(1, 1024));
    macro_rules! io {
        () => {
            &mut Io {
                engine: &mut *engine,
                wake_ups: &mut wake_ups,
                next_id: &mut next_id,
                next_wake_order: &mut next_wake_order,
            }
        };
    }
    host.start(io!())?;
    loop {
        let next_wake = wake_ups.peek().map(|Reverse((time, _, _))| *time);
        if next_wake.is_none() && engine.is_idle() {
            break;
        }
        batch.clear();
        if engine.step(next_wake.unwrap_or(Nanoseconds(u64::MAX)), &mut batch) {
            for done in &batch {
                end = end.max(done.completion.done);
                host.completed(done, io!())?;
            }
            continue;
        }
        // Nothing from the devices by the wake-up: the clock is at it now.
        while let Some(&Reverse((time, _, token))) = wake_ups.peek() {
            if time > engine.now() {
                break;
            }
            wake_ups.pop();
            host.woke(token, io!())?;
        }
    }
    Ok(RunSummary {
        issued: engine.submitted() - issued_before,
        completed: engine.completed() - completed_before,
        end,
    })
}

/// One request an issuer sends, and how long the issuer waits after it completes
/// before sending its next (DiskSim's validate "think" time).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestSpec {
    pub operation: Operation,
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

/// A request in flight: which request holds an issuer slot, and its think time.
#[derive(Clone, Copy, Debug)]
struct Slot {
    request: RequestId,
    think_after: Nanoseconds,
}

/// The closed-loop host: per device, `depth` issuer slots stored contiguously; an
/// issuer thinking sets a wake-up whose token is its device.
struct ClosedLoop<'s, S, F> {
    depth: usize,
    slots: Vec<Option<Slot>>,
    source: &'s mut S,
    on_completion: F,
}

impl<S: RequestSource, F> ClosedLoop<'_, S, F> {
    /// Ask the source for the device's next request and submit it now into a free slot.
    fn issue<D: BlockDevice>(
        &mut self,
        io: &mut Io<'_, D>,
        device: DeviceId,
    ) -> Result<(), EngineError> {
        let Some(spec) = self.source.next_request(device) else {
            return Ok(());
        };
        let base = device.0 as usize * self.depth;
        let free = self.slots[base..base + self.depth]
            .iter()
            .position(Option::is_none)
            .expect("closed loop: an issuer fired with no free slot");
        let request = io.submit(device, Issue::new(spec.operation, spec.lbn, spec.sectors))?;
        self.slots[base + free] = Some(Slot {
            request,
            think_after: spec.think_after,
        });
        Ok(())
    }

    /// Free the completion's slot; return its think time.
    fn finish(&mut self, done: &DeviceCompletion) -> Nanoseconds {
        let base = done.device.0 as usize * self.depth;
        let request = done.completion.request.id;
        let slot = self.slots[base..base + self.depth]
            .iter_mut()
            .find(|slot| slot.is_some_and(|slot| slot.request == request))
            .unwrap_or_else(|| panic!("closed loop: {request:?} completed but was never issued"));
        slot.take()
            .map_or(Nanoseconds::ZERO, |slot| slot.think_after)
    }
}

impl<D: BlockDevice, S: RequestSource, F: FnMut(&DeviceCompletion)> Host<D>
    for ClosedLoop<'_, S, F>
{
    type Error = EngineError;

    fn start(&mut self, io: &mut Io<'_, D>) -> Result<(), EngineError> {
        for device in 0..io.device_count() as u32 {
            for _ in 0..self.depth {
                self.issue(io, DeviceId(device))?;
            }
        }
        Ok(())
    }

    fn completed(
        &mut self,
        done: &DeviceCompletion,
        io: &mut Io<'_, D>,
    ) -> Result<(), EngineError> {
        (self.on_completion)(done);
        let think = self.finish(done);
        if think == Nanoseconds::ZERO {
            self.issue(io, done.device)
        } else {
            io.wake_at(io.now() + think, u64::from(done.device.0))
        }
    }

    fn woke(&mut self, device: u64, io: &mut Io<'_, D>) -> Result<(), EngineError> {
        self.issue(io, DeviceId(device as u32))
    }
}

/// Run a closed loop: each device gets `depth` issuers, all issuing at the current
/// time; each completion frees its issuer, which issues again `think_after` later
/// (at once when zero). Ends when every source is exhausted and every request has
/// completed. `on_completion` sees each completion.
pub fn run_closed_loop<D, S, F>(
    engine: &mut Engine<D>,
    depth: u32,
    source: &mut S,
    on_completion: F,
) -> Result<RunSummary, EngineError>
where
    D: BlockDevice,
    S: RequestSource,
    F: FnMut(&DeviceCompletion),
{
    let depth = depth.max(1) as usize;
    let mut host = ClosedLoop {
        depth,
        slots: vec![None; engine.device_count() * depth],
        source,
        on_completion,
    };
    run(engine, &mut host)
}

/// One open-loop arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    pub time: Nanoseconds,
    pub device: DeviceId,
    pub operation: Operation,
    pub lbn: Lbn,
    pub sectors: Sectors,
}

/// The open-loop host: one wake-up at a time, for the next arrival.
struct OpenLoop<I: Iterator<Item = Arrival>, F> {
    arrivals: std::iter::Peekable<I>,
    on_completion: F,
}

impl<I: Iterator<Item = Arrival>, F> OpenLoop<I, F> {
    /// Submit every arrival due now, then set a wake-up for the next one.
    fn submit_due<D: BlockDevice>(&mut self, io: &mut Io<'_, D>) -> Result<(), EngineError> {
        while let Some(arrival) = self.arrivals.peek().copied() {
            if arrival.time < io.now() {
                return Err(EngineError::ArrivalInPast {
                    time: arrival.time,
                    now: io.now(),
                });
            }
            if arrival.time > io.now() {
                return io.wake_at(arrival.time, 0);
            }
            self.arrivals.next();
            io.submit(
                arrival.device,
                Issue::new(arrival.operation, arrival.lbn, arrival.sectors),
            )?;
        }
        Ok(())
    }
}

impl<D: BlockDevice, I: Iterator<Item = Arrival>, F: FnMut(&DeviceCompletion)> Host<D>
    for OpenLoop<I, F>
{
    type Error = EngineError;
    fn start(&mut self, io: &mut Io<'_, D>) -> Result<(), EngineError> {
        self.submit_due(io)
    }
    fn completed(&mut self, done: &DeviceCompletion, _: &mut Io<'_, D>) -> Result<(), EngineError> {
        (self.on_completion)(done);
        Ok(())
    }
    fn woke(&mut self, _: u64, io: &mut Io<'_, D>) -> Result<(), EngineError> {
        self.submit_due(io)
    }
}

/// Run an open loop: submit each arrival at its time (times must not decrease and
/// must not precede the engine's clock), then run until every request completes.
pub fn run_open_loop<D, I, F>(
    engine: &mut Engine<D>,
    arrivals: I,
    on_completion: F,
) -> Result<RunSummary, EngineError>
where
    D: BlockDevice,
    I: IntoIterator<Item = Arrival>,
    F: FnMut(&DeviceCompletion),
{
    let mut host = OpenLoop {
        arrivals: arrivals.into_iter().peekable(),
        on_completion,
    };
    run(engine, &mut host)
}

#[cfg(test)]
mod tests;
