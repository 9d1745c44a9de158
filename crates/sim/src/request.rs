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
/// Components overlap (bus transfer overlaps media transfer), so they need not add
/// up to the response time; `overlap` says how much they overlap.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeBreakdown {
    pub overhead: Nanoseconds,
    pub seek: Nanoseconds,
    pub rotational_latency: Nanoseconds,
    pub head_switch: Nanoseconds,
    pub media_transfer: Nanoseconds,
    pub bus_transfer: Nanoseconds,
    /// Time during which media and bus transfer ran at once.
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
