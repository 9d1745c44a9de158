//! # spinstack-trace: block I/O traces in, fio iologs out
//!
//! **What it models.** A block trace as a stream of [`TraceRecord`]s: when a
//! request arrived (nanoseconds after the trace's start), on which device, what it
//! did (read, write, and from `blkparse` also trim and flush) and which 512-byte
//! sectors it covered. [`TraceReader`] reads four text formats ([`TraceFormat`]):
//!
//! | format | a line | time | address and size |
//! |---|---|---|---|
//! | MSR Cambridge CSV | `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime` | Windows filetime (100 ns ticks); the first record is time 0 | bytes |
//! | SPC / UMass | `ASU,LBA,Size,Opcode,Timestamp[,...]` | seconds, decimal | LBA in sectors, size in bytes |
//! | `blkparse` text | `8,0 3 1 0.000000000 697 D W 223490 + 8 [kjournald]` | seconds, decimal | sectors |
//! | DiskSim ASCII | `arrival_ms devno blkno size_blocks flags` (flags hex, bit 0 = read) | milliseconds, decimal | sectors |
//!
//! [`fio::IologWriter`] writes fio's iolog (version 2, or 3 with timestamps) for
//! `fio --read_iolog`.
//!
//! **Invariants.** Every record covers at least one sector and its end fits in
//! `u64` (a flush covers none: `Lbn(0)`, `Sectors(0)`, as in `spinstack-sim`).
//! Byte offsets and sizes that are not multiples of 512 are *widened* to whole
//! sectors: the start rounds down, the end rounds up, so a record always covers
//! every byte the trace named. Arrivals never decrease: a line whose time is
//! earlier than the record before it is an error naming that line (traces are not
//! silently re-sorted; sort the file first). Decimal times are converted exactly,
//! with digits below a nanosecond dropped. Reading is streaming: one line in
//! memory at a time, lines longer than [`MAX_LINE_BYTES`] are an error. Every
//! error names the file, the line, the field and what was expected; after an
//! error the reader yields nothing more. No input makes a reader panic.
//!
//! **What it does not do.** No binary formats (blktrace's own `.blktrace.N`
//! files: run `blkparse` first), no per-record response times (the MSR and
//! blkparse completion data are not kept), no replay: `spinstack simulate
//! --trace` drives the engine with these records.

mod blkparse;
mod disksim;
pub mod fio;
mod line;
mod msr;
mod numbers;
mod reader;
mod spc;

pub use reader::{TraceReader, MAX_LINE_BYTES};

use spinstack_sim::request::Operation;
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors};
use std::io::Write;

/// One request of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceRecord {
    /// When the request arrived, after the trace's start.
    pub arrival: Nanoseconds,
    /// The trace's device or disk number (MSR `DiskNumber`, SPC `ASU`, DiskSim
    /// `devno`; for blkparse the Linux device number `major << 20 | minor`).
    pub device: u32,
    pub operation: Operation,
    /// First sector (512 bytes each).
    pub lbn: Lbn,
    pub sectors: Sectors,
}

impl TraceRecord {
    /// The record's first sector on a device of `capacity` sectors: unchanged when
    /// the request fits; otherwise (`wrap`) the LBN modulo the capacity, moved back so
    /// the request ends inside the device. `None` when it does not fit and `wrap` is
    /// off, or when the request is longer than the device. One rule for every replay
    /// (`simulate --trace --wrap`, `trace convert --wrap-to`).
    pub fn placed(&self, capacity: Sectors, wrap: bool) -> Option<Lbn> {
        let fits = self
            .lbn
            .0
            .checked_add(self.sectors.0)
            .is_some_and(|end| end <= capacity.0);
        if fits {
            Some(self.lbn)
        } else if wrap && self.sectors.0 <= capacity.0 && capacity.0 > 0 {
            Some(Lbn(
                (self.lbn.0 % capacity.0).min(capacity.0 - self.sectors.0)
            ))
        } else {
            None
        }
    }
}

/// The text formats the readers understand; see the crate documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TraceFormat {
    Msr,
    Spc,
    Blkparse,
    Disksim,
}

impl TraceFormat {
    pub const ALL: [TraceFormat; 4] = [
        TraceFormat::Msr,
        TraceFormat::Spc,
        TraceFormat::Blkparse,
        TraceFormat::Disksim,
    ];
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Msr => "msr",
            TraceFormat::Spc => "spc",
            TraceFormat::Blkparse => "blkparse",
            TraceFormat::Disksim => "disksim",
        }
    }
}

/// Which `blkparse` event stands for a request. A request appears several times in
/// blkparse output (queued, merged, issued to the driver, completed); one of them
/// is taken, the others skipped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BlkparseAction {
    /// `Q`: the request was queued by the block layer (what the application asked).
    Queue,
    /// `D`: issued to the driver (what the device saw; after merging).
    #[default]
    Issue,
    /// `C`: completed.
    Complete,
}

impl BlkparseAction {
    pub fn letter(self) -> char {
        match self {
            BlkparseAction::Queue => 'Q',
            BlkparseAction::Issue => 'D',
            BlkparseAction::Complete => 'C',
        }
    }
}

/// Choices a reader needs beyond its format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReaderOptions {
    pub blkparse_action: BlkparseAction,
}

/// A problem in a trace, with where it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {problem}")]
pub struct TraceError {
    pub file: String,
    /// One-based line number; 0 when the problem concerns the whole file.
    pub line: u64,
    pub problem: String,
}

/// A record a writer cannot express in its format (an address past the format's
/// range) or an output error.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("cannot write: {0}")]
    Io(#[from] std::io::Error),
    #[error("record {index} cannot be written as {format}: {problem}")]
    Unrepresentable {
        index: u64,
        format: &'static str,
        problem: String,
    },
}

/// Write `record` as one line of `format` (the inverse of the readers, used by
/// round-trip tests and to make small traces). `index` numbers the record in
/// errors. Times are written at the format's resolution (MSR: 100 ns, SPC and
/// blkparse: 1 ns, DiskSim: 1 ns as a millisecond fraction); an MSR trace starts
/// at filetime [`msr::FILETIME_ORIGIN`] so the first record it writes reads back
/// as time 0 only when its arrival is 0.
pub fn write_record(
    format: TraceFormat,
    record: &TraceRecord,
    index: u64,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    let line = match format {
        TraceFormat::Msr => msr::format_line(record),
        TraceFormat::Spc => spc::format_line(record),
        TraceFormat::Blkparse => blkparse::format_line(record, index),
        TraceFormat::Disksim => disksim::format_line(record),
    }
    .map_err(|problem| WriteError::Unrepresentable {
        index,
        format: format.name(),
        problem,
    })?;
    writeln!(out, "{line}")?;
    Ok(())
}

pub use msr::FILETIME_ORIGIN;
