//! Trace readers and writers. OWNER: engine helper.

use crate::request::Direction;
use crate::units::{Lbn, Nanoseconds, Sectors};

/// One line of a DiskSim "validate" trace.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ValidateRecord {
    pub direction: Direction,
    /// The real drive's cache served it (as observed when the trace was taken).
    pub measured_hit: bool,
    pub lbn: Lbn,
    pub sectors: Sectors,
    /// Response time measured on the real drive.
    pub measured: Nanoseconds,
    /// Delay after this request completes before the next is issued.
    pub think: Nanoseconds,
}

#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: {problem}")]
pub struct TraceError {
    pub file: String,
    pub line: usize,
    pub problem: String,
}

/// Read a validate trace (`R|W Hit|Miss blkno bcount service_us think_us` per line).
pub fn read_validate_trace(path: &std::path::Path) -> Result<Vec<ValidateRecord>, TraceError> {
    let _ = path;
    todo!("engine helper")
}
