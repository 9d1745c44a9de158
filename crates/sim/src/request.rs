//! Block requests and their completions, as they travel down and up the stack.
//!
//! **Operations.** `Read` and `Write` move `sectors` sectors from `lbn`; `Trim`
//! tells the device the range's contents are no longer needed (every layer of
//! this stack reads trimmed sectors back as zeros); `Flush` makes every write that
//! completed before it durable and carries no range (`lbn` 0, `sectors` 0). A
//! write (or trim) with `force_unit_access` completes only once it is durable.
//!
//! **Completions** carry a [`Status`] (a request can fail: a media error, a failed
//! device, an operation the device does not support) and, when a drive served the
//! request itself, a [`DriveDetail`] with the drive-only facts (cache hit, where
//! the time went). A layer above drives (a RAID volume, a buffer) completes its
//! own requests with no drive detail: its completion is not drive-shaped.

use crate::units::{Lbn, Nanoseconds, Sectors};
use serde::{Deserialize, Serialize};

/// What a block request asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Operation {
    Read,
    Write,
    /// The range's data is no longer needed; it reads back as zeros.
    Trim,
    /// Every write completed before this request is durable when it completes.
    Flush,
}

impl Operation {
    /// Whether the operation changes the device's contents (write or trim).
    pub fn modifies(self) -> bool {
        matches!(self, Operation::Write | Operation::Trim)
    }
    pub fn name(self) -> &'static str {
        match self {
            Operation::Read => "read",
            Operation::Write => "write",
            Operation::Trim => "trim",
            Operation::Flush => "flush",
        }
    }
}

/// Identifies a request for its whole life; unique within one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct RequestId(pub u64);

/// A block request: `operation` on `sectors` sectors from `lbn`, issued at `arrival`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockRequest {
    pub id: RequestId,
    pub operation: Operation,
    pub lbn: Lbn,
    pub sectors: Sectors,
    pub arrival: Nanoseconds,
    /// Complete only once the data is durable (SCSI FUA, NBD_CMD_FLAG_FUA);
    /// meaningful for writes and trims.
    pub force_unit_access: bool,
}

impl BlockRequest {
    /// A request with no force-unit-access flag.
    pub fn new(
        id: RequestId,
        operation: Operation,
        lbn: Lbn,
        sectors: Sectors,
        arrival: Nanoseconds,
    ) -> BlockRequest {
        BlockRequest {
            id,
            operation,
            lbn,
            sectors,
            arrival,
            force_unit_access: false,
        }
    }

    /// A flush: no range.
    pub fn flush(id: RequestId, arrival: Nanoseconds) -> BlockRequest {
        BlockRequest::new(id, Operation::Flush, Lbn(0), Sectors(0), arrival)
    }

    /// One past the last LBN the request touches.
    pub fn end(&self) -> Lbn {
        self.lbn.offset(self.sectors)
    }

    /// The checks every device makes at submission, so that all of them refuse the
    /// same requests with the same errors: a flush has no range; any other request
    /// is non-empty and lies inside `capacity`.
    pub fn check(&self, capacity: Sectors) -> Result<(), DeviceError> {
        let id = self.id.0;
        if self.operation == Operation::Flush {
            if self.sectors.0 != 0 || self.lbn.0 != 0 {
                return Err(DeviceError::FlushWithRange {
                    id,
                    lbn: self.lbn.0,
                    sectors: self.sectors.0,
                });
            }
            return Ok(());
        }
        if self.sectors.0 == 0 {
            return Err(DeviceError::Empty { id });
        }
        if self
            .lbn
            .0
            .checked_add(self.sectors.0)
            .is_none_or(|end| end > capacity.0)
        {
            return Err(DeviceError::OutOfRange {
                id,
                lbn: self.lbn.0,
                sectors: self.sectors.0,
                capacity: capacity.0,
            });
        }
        Ok(())
    }
}

/// How a request ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum Status {
    #[default]
    Ok,
    /// A sector could not be read or written (the first one that failed).
    MediaError { lbn: Lbn },
    /// The device has failed (or, for a volume, too many of its members have):
    /// nothing was transferred. Never wrong data.
    DeviceFailed,
    /// The device does not implement the operation.
    Unsupported,
}

impl Status {
    pub fn is_ok(self) -> bool {
        self == Status::Ok
    }
}

/// Where the time of one request went inside a drive. Bus transfer overlaps media
/// work, so the components add up to the response time as `overhead + spin_up +
/// seek + rotational_latency + head_switch + media_transfer + (bus_transfer -
/// overlap)` (the drive model keeps this to rounding).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeBreakdown {
    /// Everything not in another component: controller overheads (command,
    /// disconnect/reconnect, completion message), waits for the HDA or the bus
    /// behind other requests at queue depth > 1, and waits for a flush.
    pub overhead: Nanoseconds,
    /// Waiting for the spindle: the rest of a spin-down in progress and the
    /// spin-up from standby (or from a low-RPM or unloaded state).
    pub spin_up: Nanoseconds,
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

/// What only a drive knows about how it served a request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DriveDetail {
    /// Whether the drive's cache served the whole request.
    pub cache_hit: bool,
    pub breakdown: TimeBreakdown,
}

/// The answer to a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Completion {
    pub request: BlockRequest,
    /// When the completion reached the issuer.
    pub done: Nanoseconds,
    pub status: Status,
    /// Present when a drive served the request itself.
    pub drive: Option<DriveDetail>,
}

impl Completion {
    /// A completion from a layer that is not a drive.
    pub fn new(request: BlockRequest, done: Nanoseconds, status: Status) -> Completion {
        Completion {
            request,
            done,
            status,
            drive: None,
        }
    }

    pub fn response_time(&self) -> Nanoseconds {
        self.done - self.request.arrival
    }

    /// Whether the drive's cache served the whole request (false for layers).
    pub fn cache_hit(&self) -> bool {
        self.drive.is_some_and(|d| d.cache_hit)
    }

    /// The drive's time breakdown (all zero for layers).
    pub fn breakdown(&self) -> TimeBreakdown {
        self.drive.map(|d| d.breakdown).unwrap_or_default()
    }
}

/// Why a device refused a request at submission.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
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
    #[error("flush {id} carries a range ({lbn}+{sectors} sectors); a flush has none")]
    FlushWithRange { id: u64, lbn: u64, sectors: u64 },
    #[error("the device queue is full ({depth} requests)")]
    QueueFull { depth: usize },
    /// A request that alone needs more member requests than a layer's tables hold:
    /// unlike `QueueFull`, waiting would never make room for it.
    #[error(
        "request {id} ({sectors} sectors) needs {children} member requests, more than the \
         {limit} the volume holds at once: issue it in smaller pieces"
    )]
    TooLarge {
        id: u64,
        sectors: u64,
        children: u64,
        limit: u32,
    },
}
