//! A trivial device for tests and benchmarks of the engine: FIFO, one request at a
//! time, a fixed service time per request. It measures the engine, not a disk.

use crate::device::{BlockDevice, DeviceError};
use crate::request::{BlockRequest, Completion, TimeBreakdown};
use crate::units::{Nanoseconds, Sectors};
use std::collections::VecDeque;

/// FIFO device with a fixed service time and a bounded queue.
#[derive(Clone, Debug)]
pub struct FixedServiceDevice {
    capacity: Sectors,
    service: Nanoseconds,
    queue_limit: usize,
    queue: VecDeque<BlockRequest>,
    /// When the request at the head of the queue completes (meaningful if non-empty).
    head_done: Nanoseconds,
}

impl FixedServiceDevice {
    pub fn new(capacity: Sectors, service: Nanoseconds, queue_limit: usize) -> Self {
        FixedServiceDevice {
            capacity,
            service,
            queue_limit,
            queue: VecDeque::with_capacity(queue_limit),
            head_done: Nanoseconds::ZERO,
        }
    }
    pub fn queued(&self) -> usize {
        self.queue.len()
    }
}

impl BlockDevice for FixedServiceDevice {
    fn capacity(&self) -> Sectors {
        self.capacity
    }

    fn submit(&mut self, request: BlockRequest) -> Result<(), DeviceError> {
        if request.sectors.0 == 0 {
            return Err(DeviceError::Empty { id: request.id.0 });
        }
        if request.end() > crate::units::Lbn(self.capacity.0) {
            return Err(DeviceError::OutOfRange {
                id: request.id.0,
                lbn: request.lbn.0,
                sectors: request.sectors.0,
                capacity: self.capacity.0,
            });
        }
        if self.queue.len() >= self.queue_limit {
            return Err(DeviceError::QueueFull {
                depth: self.queue_limit,
            });
        }
        if self.queue.is_empty() {
            self.head_done = request.arrival + self.service;
        }
        self.queue.push_back(request);
        Ok(())
    }

    fn next_event_time(&self) -> Option<Nanoseconds> {
        (!self.queue.is_empty()).then_some(self.head_done)
    }

    fn advance(&mut self, now: Nanoseconds, completed: &mut Vec<Completion>) {
        while self.head_done <= now {
            let Some(request) = self.queue.pop_front() else {
                return;
            };
            completed.push(Completion {
                request,
                done: self.head_done,
                cache_hit: false,
                breakdown: TimeBreakdown {
                    media_transfer: self.service,
                    ..TimeBreakdown::default()
                },
            });
            if let Some(next) = self.queue.front() {
                self.head_done = self.head_done.max(next.arrival) + self.service;
            }
        }
    }
}
