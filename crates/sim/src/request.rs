//! Block requests and their completions, as they travel down and up the stack.

use crate::units::{Lbn, Nanoseconds, Sectors};
use serde::{Deserialize, Serialize};

/// Direction of a block request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Direction {
    Read,
    Write,
}

/// Identifies a request for its whole life; unique within one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct RequestId(pub u64);

/// A block request: `sectors` sectors from `lbn`, issued at `arrival`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockRequest {
    pub id: RequestId,
    pub direction: Direction,
    pub lbn: Lbn,
    pub sectors: Sectors,
    pub arrival: Nanoseconds,
}

impl BlockRequest {
    /// One past the last LBN the request touches.
    pub fn end(&self) -> Lbn {
        self.lbn.offset(self.sectors)
    }
}

/// Where the time of one request went, as far as the layer that served it knows.
/// Bus transfer overlaps media work, so the components add up to the response time
/// as `overhead + seek + rotational_latency + head_switch + media_transfer +
/// (bus_transfer - overlap)` (the drive model keeps this to rounding).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeBreakdown {
    /// Everything not in another component: controller overheads (command,
    /// disconnect/reconnect, completion message), waits for the HDA or the bus
    /// behind other requests at queue depth > 1, and waits for a flush.
    pub overhead: Nanoseconds,
    /// The arm's move to the request's first track (including settle).
    pub seek: Nanoseconds,
    /// Every rotational wait of the request's media work: before its first
    /// sector, between its pieces on one track (a zero-latency access waiting for
    /// the start of the track to come round, other sectors passing) and after a
    /// track or cylinder switch until its next sector.
    pub rotational_latency: Nanoseconds,
    /// Track and cylinder switches after the first positioning (and the first
    /// positioning when it only changes the head).
    pub head_switch: Nanoseconds,
    /// The request's own sectors passing under the head.
    pub media_transfer: Nanoseconds,
    /// The request's data crossing the host bus (sectors × time per sector).
    pub bus_transfer: Nanoseconds,
    /// Bus transfer that ran while the request's media work was still going on
    /// (at most `bus_transfer`).
    pub overlap: Nanoseconds,
}

/// The answer to a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Completion {
    pub request: BlockRequest,
    /// When the completion reached the issuer.
    pub done: Nanoseconds,
    /// Whether the drive's cache served the whole request.
    pub cache_hit: bool,
    pub breakdown: TimeBreakdown,
}

impl Completion {
    pub fn response_time(&self) -> Nanoseconds {
        self.done - self.request.arrival
    }
}
