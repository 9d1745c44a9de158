//! The contract between the engine and anything that serves block requests
//! (a drive, a RAID volume, a buffer).

use crate::request::{BlockRequest, Completion};
use crate::units::{Nanoseconds, Sectors};

/// A component that serves block requests in simulated time.
///
/// The engine calls `submit` when a request reaches the device, asks
/// `next_event_time` when the device next needs attention, and calls `advance`
/// with a time no earlier than the last one; the device pushes every completion
/// that happened up to and including `now` into `completed`.
pub trait BlockDevice {
    /// Capacity in sectors.
    fn capacity(&self) -> Sectors;
    /// Hand a request to the device. `request.arrival` is the current simulated time.
    fn submit(&mut self, request: BlockRequest) -> Result<(), DeviceError>;
    /// The next instant at which something happens inside, if anything is pending.
    fn next_event_time(&self) -> Option<Nanoseconds>;
    /// Run the device up to `now`, appending completions in completion-time order.
    fn advance(&mut self, now: Nanoseconds, completed: &mut Vec<Completion>);
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DeviceError {
    #[error("request {id} ({lbn}+{sectors} sectors) runs past the device capacity of {capacity} sectors")]
    OutOfRange {
        id: u64,
        lbn: u64,
        sectors: u64,
        capacity: u64,
    },
    #[error("request {id} has zero length")]
    Empty { id: u64 },
    #[error("the device queue is full ({depth} requests)")]
    QueueFull { depth: usize },
}

/// Boxed devices (e.g. `Box<dyn BlockDevice>`) are devices, so one engine can hold
/// different kinds.
impl<T: BlockDevice + ?Sized> BlockDevice for Box<T> {
    fn capacity(&self) -> Sectors {
        (**self).capacity()
    }
    fn submit(&mut self, request: BlockRequest) -> Result<(), DeviceError> {
        (**self).submit(request)
    }
    fn next_event_time(&self) -> Option<Nanoseconds> {
        (**self).next_event_time()
    }
    fn advance(&mut self, now: Nanoseconds, completed: &mut Vec<Completion>) {
        (**self).advance(now, completed)
    }
}
