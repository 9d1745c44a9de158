//! The discrete-event engine: one clock for many [`BlockDevice`]s.
//!
//! **Design.** The engine owns the devices and a binary min-heap of
//! `(time, sequence, device)` entries, one live entry per device that has something
//! pending (its `next_event_time`). Popping serves the earliest device; entries with
//! equal times come out in the order they were scheduled (the sequence number), so a
//! run is deterministic. When a device's next event changes (after `submit` or
//! `advance`) a new entry is pushed and the old one becomes stale; stale entries are
//! recognised by their sequence number and dropped when popped, and the heap is
//! compacted when they pile up, so its size stays bounded.
//!
//! **Invariants (asserted).** Time never goes backwards; a device never completes a
//! request it was not given (counted per device always, checked by id in debug
//! builds); completions never precede their arrival or follow the current time; the
//! number of requests outstanding at a device, and the heap, have fixed bounds.
//!
//! **Layers above drives.** A RAID volume or a buffer is itself a [`BlockDevice`]
//! that owns its member devices in an engine of its own (through
//! [`crate::members::Members`]); heterogeneous devices go in as
//! `Engine<Box<dyn BlockDevice>>`. Devices are reached only through `submit` and
//! `control`, never by a mutable borrow, so nothing enters a device's queue
//! behind the engine's back.
//!
//! **Cost.** No allocation per event: the completion buffer is reused and the heap
//! only grows to its high-water mark.

use crate::device::{BlockDevice, Control, ControlError, DeviceError, MemberIndex};
use crate::request::{BlockRequest, Completion};
use crate::units::Nanoseconds;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Index of a device inside one engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct DeviceId(pub u32);

/// A completion and the device that produced it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceCompletion {
    pub device: DeviceId,
    pub completion: Completion,
}

/// Limits the engine enforces.
#[derive(Clone, Copy, Debug)]
pub struct EngineOptions {
    /// Most requests the engine lets one device hold at once (the device may refuse
    /// earlier with `QueueFull`).
    pub max_outstanding_per_device: u32,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            max_outstanding_per_device: 4096,
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EngineError {
    #[error("device {0:?} does not exist")]
    NoSuchDevice(DeviceId),
    #[error("device {device:?} already holds {limit} requests, the engine's bound")]
    TooManyOutstanding { device: DeviceId, limit: u32 },
    #[error("device {device:?} refused the request: {error}")]
    Device {
        device: DeviceId,
        error: DeviceError,
    },
    #[error("device {device:?} refused a control command: {error}")]
    Control {
        device: DeviceId,
        error: ControlError,
    },
    #[error("a host already has {limit} wake-ups pending, the loop's bound")]
    TooManyWakeUps { limit: usize },
    #[error("an arrival at {time:?} precedes the current time {now:?}")]
    ArrivalInPast { time: Nanoseconds, now: Nanoseconds },
}

/// Sequence number marking a device with no live heap entry.
const NOT_SCHEDULED: u64 = u64::MAX;

/// The event engine. See the module documentation. A clone is an independent
/// copy of the whole simulation at its current instant (devices included).
#[derive(Clone)]
pub struct Engine<D: BlockDevice> {
    now: Nanoseconds,
    devices: Vec<D>,
    /// Sequence number of each device's live heap entry, or `NOT_SCHEDULED`.
    live_sequence: Vec<u64>,
    /// Time of each device's live heap entry (meaningful only when scheduled).
    live_time: Vec<Nanoseconds>,
    outstanding: Vec<u32>,
    heap: BinaryHeap<Reverse<(Nanoseconds, u64, u32)>>,
    next_sequence: u64,
    options: EngineOptions,
    /// Reused buffer handed to `BlockDevice::advance`.
    scratch: Vec<Completion>,
    submitted: u64,
    completed: u64,
    #[cfg(debug_assertions)]
    given: std::collections::HashSet<(u32, u64)>,
}

impl<D: BlockDevice> Default for Engine<D> {
    fn default() -> Self {
        Engine::new(EngineOptions::default())
    }
}

impl<D: BlockDevice> Engine<D> {
    pub fn new(options: EngineOptions) -> Self {
        Engine {
            now: Nanoseconds::ZERO,
            devices: Vec::new(),
            live_sequence: Vec::new(),
            live_time: Vec::new(),
            outstanding: Vec::new(),
            heap: BinaryHeap::new(),
            next_sequence: 0,
            options,
            scratch: Vec::with_capacity(64),
            submitted: 0,
            completed: 0,
            #[cfg(debug_assertions)]
            given: std::collections::HashSet::new(),
        }
    }

    /// Add a device; it gets the next [`DeviceId`].
    pub fn add_device(&mut self, device: D) -> DeviceId {
        let id = u32::try_from(self.devices.len()).expect("more than 2^32 devices");
        self.devices.push(device);
        self.live_sequence.push(NOT_SCHEDULED);
        self.live_time.push(Nanoseconds::ZERO);
        self.outstanding.push(0);
        self.reschedule(id);
        DeviceId(id)
    }

    pub fn now(&self) -> Nanoseconds {
        self.now
    }
    pub fn device_count(&self) -> usize {
        self.devices.len()
    }
    pub fn device(&self, id: DeviceId) -> Option<&D> {
        self.devices.get(id.0 as usize)
    }
    pub fn devices(&self) -> &[D] {
        &self.devices
    }
    /// Carry out a control command on device `id` (or a member below it) at the
    /// current time, then re-read its next event. Devices are reachable only
    /// through `submit` and `control`, so nothing can reach a device's queue
    /// behind the engine's back.
    pub fn control(
        &mut self,
        id: DeviceId,
        path: &[MemberIndex],
        command: Control,
    ) -> Result<(), EngineError> {
        let now = self.now;
        let device = self
            .devices
            .get_mut(id.0 as usize)
            .ok_or(EngineError::NoSuchDevice(id))?;
        let result = device.control(now, path, command);
        self.reschedule(id.0);
        result.map_err(|error| EngineError::Control { device: id, error })
    }

    /// Requests submitted to and completed by all devices so far.
    pub fn submitted(&self) -> u64 {
        self.submitted
    }
    pub fn completed(&self) -> u64 {
        self.completed
    }
    /// Requests given to `id` and not yet completed.
    pub fn outstanding(&self, id: DeviceId) -> u32 {
        self.outstanding.get(id.0 as usize).copied().unwrap_or(0)
    }
    /// True when no device has anything pending.
    pub fn is_idle(&self) -> bool {
        self.next_event_time().is_none()
    }

    /// The earliest pending device event, if any.
    pub fn next_event_time(&self) -> Option<Nanoseconds> {
        // Every mutation ends with `drop_stale_top`, so the top entry is live.
        self.heap.peek().map(|Reverse((time, _, _))| *time)
    }

    /// Hand `request` to device `id` at the current time. The engine stamps
    /// `request.arrival` with [`Engine::now`].
    pub fn submit(&mut self, id: DeviceId, mut request: BlockRequest) -> Result<(), EngineError> {
        let index = id.0 as usize;
        let device = self
            .devices
            .get_mut(index)
            .ok_or(EngineError::NoSuchDevice(id))?;
        let limit = self.options.max_outstanding_per_device;
        if self.outstanding[index] >= limit {
            return Err(EngineError::TooManyOutstanding { device: id, limit });
        }
        request.arrival = self.now;
        device
            .submit(request)
            .map_err(|error| EngineError::Device { device: id, error })?;
        self.outstanding[index] += 1;
        self.submitted += 1;
        #[cfg(debug_assertions)]
        assert!(
            self.given.insert((id.0, request.id.0)),
            "request {:?} submitted twice to device {id:?}",
            request.id
        );
        self.reschedule(id.0);
        Ok(())
    }

    /// Serve the earliest device event if it is at or before `limit`: the clock moves
    /// to it and every device due at that instant runs (in scheduling order), their
    /// completions appended to `out`. Returns false, with the clock moved to `limit`
    /// (if later), when nothing is due by then.
    pub fn step(&mut self, limit: Nanoseconds, out: &mut Vec<DeviceCompletion>) -> bool {
        let Some((time, device)) = self.pop_live_at_or_before(limit) else {
            if limit > self.now {
                self.now = limit;
            }
            return false;
        };
        self.now = time;
        self.serve_device(device, out);
        while let Some((_, device)) = self.pop_live_at_or_before(time) {
            self.serve_device(device, out);
        }
        true
    }

    /// Serve every event at or before `limit`, then set the clock to `limit`.
    pub fn run_until(&mut self, limit: Nanoseconds, out: &mut Vec<DeviceCompletion>) {
        while self.step(limit, out) {}
    }

    /// Serve events until no device has anything pending; the clock stops at the last one.
    pub fn run_until_idle(&mut self, out: &mut Vec<DeviceCompletion>) {
        while let Some((time, device)) = self.pop_live_at_or_before(Nanoseconds(u64::MAX)) {
            self.now = time;
            self.serve_device(device, out);
        }
    }

    /// Pop the earliest live entry if due by `limit`, leaving its device unscheduled.
    fn pop_live_at_or_before(&mut self, limit: Nanoseconds) -> Option<(Nanoseconds, u32)> {
        while let Some(&Reverse((time, sequence, device))) = self.heap.peek() {
            if self.live_sequence[device as usize] != sequence {
                self.heap.pop();
                continue;
            }
            if time > limit {
                return None;
            }
            assert!(
                time >= self.now,
                "time went backwards: device {device} has an event at {time:?}, now is {:?}",
                self.now
            );
            self.heap.pop();
            self.live_sequence[device as usize] = NOT_SCHEDULED;
            return Some((time, device));
        }
        None
    }

    /// Advance one device to `now`, check its completions and append them to `out`.
    fn serve_device(&mut self, device: u32, out: &mut Vec<DeviceCompletion>) {
        let index = device as usize;
        self.scratch.clear();
        self.devices[index].advance(self.now, &mut self.scratch);
        let mut scratch = std::mem::take(&mut self.scratch);
        for completion in &scratch {
            self.check_completion(device, completion);
            self.outstanding[index] -= 1;
            out.push(DeviceCompletion {
                device: DeviceId(device),
                completion: *completion,
            });
        }
        self.completed += scratch.len() as u64;
        scratch.clear();
        self.scratch = scratch;
        self.reschedule(device);
    }

    /// Record the device's next event in the heap if it changed.
    fn reschedule(&mut self, device: u32) {
        let index = device as usize;
        let Some(time) = self.devices[index].next_event_time() else {
            self.live_sequence[index] = NOT_SCHEDULED;
            self.drop_stale_top();
            return;
        };
        assert!(
            time >= self.now,
            "device {device} asks for an event at {time:?}, before now {:?}",
            self.now
        );
        if self.live_sequence[index] != NOT_SCHEDULED && self.live_time[index] == time {
            return;
        }
        let sequence = self.next_sequence;
        self.next_sequence += 1;
        self.live_sequence[index] = sequence;
        self.live_time[index] = time;
        self.heap.push(Reverse((time, sequence, device)));
        if self.heap.len() > self.heap_bound() {
            self.compact_heap();
        }
        self.drop_stale_top();
    }

    /// Pop stale entries off the top, so the top (if any) is a live event.
    fn drop_stale_top(&mut self) {
        while let Some(&Reverse((_, sequence, device))) = self.heap.peek() {
            if self.live_sequence[device as usize] == sequence {
                return;
            }
            self.heap.pop();
        }
    }

    /// Stale entries allowed before compaction: a few per device.
    fn heap_bound(&self) -> usize {
        4 * self.devices.len() + 64
    }

    /// Drop stale entries; afterwards the heap holds at most one entry per device.
    fn compact_heap(&mut self) {
        let live = &self.live_sequence;
        self.heap
            .retain(|Reverse((_, sequence, device))| live[*device as usize] == *sequence);
        assert!(
            self.heap.len() <= self.devices.len(),
            "heap holds stale entries"
        );
    }

    fn check_completion(&mut self, device: u32, completion: &Completion) {
        let index = device as usize;
        assert!(
            self.outstanding[index] > 0,
            "device {device} completed {:?} while holding no request",
            completion.request.id
        );
        assert!(
            completion.done <= self.now && completion.done >= completion.request.arrival,
            "device {device} completed {:?} at {:?}: outside [{:?}, now {:?}]",
            completion.request.id,
            completion.done,
            completion.request.arrival,
            self.now
        );
        #[cfg(debug_assertions)]
        assert!(
            self.given.remove(&(device, completion.request.id.0)),
            "device {device} completed {:?}, which it was not given",
            completion.request.id
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake::FixedServiceDevice;
    use crate::request::{Operation, RequestId, Status};
    use crate::units::{Lbn, Sectors};

    fn device(service_ns: u64) -> FixedServiceDevice {
        FixedServiceDevice::new(Sectors(1 << 20), Nanoseconds(service_ns), 64)
    }

    fn request(id: u64) -> BlockRequest {
        BlockRequest::new(
            RequestId(id),
            Operation::Read,
            Lbn(id * 8),
            Sectors(8),
            Nanoseconds::ZERO,
        )
    }

    // Proves requests queue FIFO on one device and complete at the right times, and the
    // engine stamps arrival with its clock.
    #[test]
    fn one_device_fifo() {
        let mut engine = Engine::default();
        let id = engine.add_device(device(100));
        engine.run_until(Nanoseconds(50), &mut Vec::new());
        engine.submit(id, request(0)).unwrap();
        engine.submit(id, request(1)).unwrap();
        let mut out = Vec::new();
        engine.run_until_idle(&mut out);
        let times: Vec<_> = out
            .iter()
            .map(|done| (done.completion.request.id.0, done.completion.done.0))
            .collect();
        assert_eq!(times, vec![(0, 150), (1, 250)]);
        assert_eq!(out[0].completion.request.arrival, Nanoseconds(50));
        assert_eq!(engine.now(), Nanoseconds(250));
        assert!(engine.is_idle());
        assert_eq!((engine.submitted(), engine.completed()), (2, 2));
    }

    // Proves devices finishing at the same instant are served in the order they were
    // scheduled (FIFO at equal times), not by device number.
    #[test]
    fn equal_times_are_fifo() {
        let mut engine = Engine::default();
        let ids: Vec<_> = (0..4).map(|_| engine.add_device(device(100))).collect();
        for (order, &id) in [3usize, 1, 0, 2]
            .iter()
            .map(|&index| &ids[index])
            .enumerate()
        {
            engine.submit(id, request(order as u64)).unwrap();
        }
        let mut out = Vec::new();
        assert!(engine.step(Nanoseconds(1000), &mut out));
        let devices: Vec<_> = out.iter().map(|done| done.device.0).collect();
        assert_eq!(devices, vec![3, 1, 0, 2]);
        assert_eq!(engine.now(), Nanoseconds(100));
    }

    // Proves `step` stops at the limit without serving later events, and moves the clock.
    #[test]
    fn step_respects_limit() {
        let mut engine = Engine::default();
        let id = engine.add_device(device(100));
        engine.submit(id, request(0)).unwrap();
        let mut out = Vec::new();
        assert!(!engine.step(Nanoseconds(99), &mut out));
        assert!(out.is_empty());
        assert_eq!(engine.now(), Nanoseconds(99));
        assert_eq!(engine.next_event_time(), Some(Nanoseconds(100)));
        assert!(engine.step(Nanoseconds(100), &mut out));
        assert_eq!(out.len(), 1);
    }

    // Proves refusals come back as errors: unknown device, device errors, engine bound.
    #[test]
    fn refusals_are_errors() {
        let mut engine = Engine::new(EngineOptions {
            max_outstanding_per_device: 2,
        });
        let id = engine.add_device(device(100));
        assert_eq!(
            engine.submit(DeviceId(7), request(0)),
            Err(EngineError::NoSuchDevice(DeviceId(7)))
        );
        let mut empty = request(1);
        empty.sectors = Sectors(0);
        assert!(matches!(
            engine.submit(id, empty),
            Err(EngineError::Device { .. })
        ));
        engine.submit(id, request(2)).unwrap();
        engine.submit(id, request(3)).unwrap();
        assert_eq!(
            engine.submit(id, request(4)),
            Err(EngineError::TooManyOutstanding {
                device: id,
                limit: 2
            })
        );
        assert_eq!(engine.outstanding(id), 2);
    }

    /// A broken device that reports a completion for a request it never received.
    struct Liar;
    impl BlockDevice for Liar {
        fn capacity(&self) -> Sectors {
            Sectors(100)
        }
        fn submit(&mut self, _: BlockRequest) -> Result<(), DeviceError> {
            Ok(())
        }
        fn next_event_time(&self) -> Option<Nanoseconds> {
            Some(Nanoseconds(10))
        }
        fn advance(&mut self, now: Nanoseconds, completed: &mut Vec<Completion>) {
            completed.push(Completion::new(request(99), now, Status::Ok));
        }
        fn control(
            &mut self,
            _: Nanoseconds,
            _: &[MemberIndex],
            _: Control,
        ) -> Result<(), ControlError> {
            Ok(())
        }
    }

    // Proves the engine refuses to accept a completion of a request never given.
    #[test]
    #[should_panic(expected = "holding no request")]
    fn invented_completion_panics() {
        let mut engine = Engine::default();
        engine.add_device(Liar);
        engine.run_until_idle(&mut Vec::new());
    }

    // Proves the heap stays bounded when a device is rescheduled many times without
    // its event being popped (stale entries are compacted away).
    #[test]
    fn heap_stays_bounded() {
        let mut engine = Engine::default();
        let ids: Vec<_> = (0..3)
            .map(|_| engine.add_device(device(1_000_000)))
            .collect();
        let mut out = Vec::new();
        for round in 0..200u64 {
            for &id in &ids {
                engine
                    .submit(id, request(round * 3 + u64::from(id.0)))
                    .unwrap();
                engine.run_until(engine.now() + Nanoseconds(1_000_000), &mut out);
            }
        }
        assert!(engine.heap.len() <= engine.heap_bound());
        engine.run_until_idle(&mut out);
        assert_eq!(out.len(), 600);
    }

    // Proves a control command reaches the device and its effect is scheduled: a
    // failed fixed-service device completes later requests with DeviceFailed, and
    // a command for a member of a device with none is refused.
    #[test]
    fn control_reaches_the_device() {
        let mut engine = Engine::default();
        let id = engine.add_device(device(100));
        engine.control(id, &[], Control::Fail).unwrap();
        engine.submit(id, request(0)).unwrap();
        let mut out = Vec::new();
        engine.run_until_idle(&mut out);
        assert_eq!(
            out[0].completion.status,
            crate::request::Status::DeviceFailed
        );
        assert!(matches!(
            engine.control(id, &[MemberIndex(1)], Control::Fail),
            Err(EngineError::Control { .. })
        ));
        assert_eq!(
            engine.control(DeviceId(5), &[], Control::Fail),
            Err(EngineError::NoSuchDevice(DeviceId(5)))
        );
    }

    // Proves heterogeneous devices work through boxed trait objects.
    #[test]
    fn boxed_devices() {
        let mut engine: Engine<Box<dyn BlockDevice>> = Engine::default();
        let slow = engine.add_device(Box::new(device(300)));
        let fast = engine.add_device(Box::new(device(100)));
        engine.submit(slow, request(0)).unwrap();
        engine.submit(fast, request(1)).unwrap();
        let mut out = Vec::new();
        engine.run_until_idle(&mut out);
        assert_eq!(out[0].device, fast);
        assert_eq!(out[1].device, slow);
    }
}
