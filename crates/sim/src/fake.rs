//! A trivial device for tests and benchmarks of the engine: FIFO, one request at a
//! time, a fixed service time per request. It measures the engine, not a disk.

use crate::device::{BlockDevice, Control, ControlError, DeviceError, MemberIndex};
use crate::request::{BlockRequest, Completion, DriveDetail, Status, TimeBreakdown};
use crate::units::{Nanoseconds, Sectors};
use std::collections::VecDeque;

/// FIFO device with a fixed service time and a bounded queue. Every operation
/// (flush and trim too) takes the service time; after `Control::Fail` every
/// request completes with `Status::DeviceFailed`. It has no power states.
#[derive(Clone, Debug)]
pub struct FixedServiceDevice {
    failed: bool,
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
            failed: false,
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
        request.check(self.capacity)?;
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
            let status = if self.failed {
                Status::DeviceFailed
            } else {
                Status::Ok
            };
            completed.push(Completion {
                request,
                done: self.head_done,
                status,
                drive: Some(DriveDetail {
                    cache_hit: false,
                    breakdown: TimeBreakdown {
                        media_transfer: self.service,
                        ..TimeBreakdown::default()
                    },
                }),
            });
            if let Some(next) = self.queue.front() {
                self.head_done = self.head_done.max(next.arrival) + self.service;
            }
        }
    }

    fn control(
        &mut self,
        _now: Nanoseconds,
        path: &[MemberIndex],
        command: Control,
    ) -> Result<(), ControlError> {
        crate::device::refuse_member_path("a fixed-service device", path)?;
        match command {
            Control::Fail => {
                self.failed = true;
                Ok(())
            }
            Control::Replace if self.failed => {
                self.failed = false;
                Ok(())
            }
            Control::Replace => Err(ControlError::Unsupported {
                device: "a fixed-service device",
                command,
                reason: "it has not failed",
            }),
            // No plug: nothing is held back.
            Control::Unplug => Ok(()),
            _ => Err(ControlError::Unsupported {
                device: "a fixed-service device",
                command,
                reason: "it has no power states",
            }),
        }
    }
}
