//! fio's iolog, the input of `fio --read_iolog=FILE` (fio's HOWTO, "Trace file
//! format v2" and "v3"). A log opens with `fio version 2 iolog` (or 3), then
//! `FILE add` and `FILE open`, one `FILE ACTION OFFSET LENGTH` line per I/O
//! (offset and length in bytes), and `FILE close`. Actions written: `read`,
//! `write`, `trim`, and `sync 0 0` for a flush.
//!
//! **Version 2** has no times: fio issues the I/Os as fast as its queue depth
//! allows. **Version 3** puts a timestamp before every line. fio's HOWTO does not
//! name the unit; fio 3.33 reads it as microseconds (a log whose second I/O is
//! stamped 1500001 waited 1.5 s on the null engine, one stamped 1501 did not).
//! fio also treats a previous timestamp of 0 as "no previous time" and skips that
//! delay, so the writer stamps `arrival_us + 1`: every gap between requests
//! survives. Arrivals are rounded down to the microsecond.
//!
//! **Limits fio sets.** fio reads the length as a 32-bit unsigned number and the
//! file name as one word of at most 256 bytes: a longer request, or a file name
//! with white space, is an error here rather than a log fio would misread.

use crate::{TraceRecord, WriteError};
use spinstack_sim::request::Operation;
use std::io::Write;

/// Longest file name fio reads from an iolog line.
pub const MAX_FILE_NAME_BYTES: usize = 256;

/// Which iolog version to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IologVersion {
    /// No timestamps.
    V2,
    /// A timestamp (microseconds) on every line.
    V3,
}

impl IologVersion {
    pub fn number(self) -> u32 {
        match self {
            IologVersion::V2 => 2,
            IologVersion::V3 => 3,
        }
    }
}

/// Whether fio can read `file` back from an iolog line: one word (no white
/// space, which would split the line) of 1 to [`MAX_FILE_NAME_BYTES`] bytes. The
/// problem, when there is one, is said without the name, so a caller can put the
/// name and where it came from (an option, say) before it.
pub fn check_file_name(file: &str) -> Result<(), String> {
    let fits = !file.is_empty()
        && file.len() <= MAX_FILE_NAME_BYTES
        && !file.chars().any(char::is_whitespace);
    if fits {
        Ok(())
    } else {
        Err(format!(
            "must be one word (no spaces, tabs or newlines) of 1 to {MAX_FILE_NAME_BYTES} bytes: \
             fio reads an iolog line's file name up to the first white space"
        ))
    }
}

/// Writes an iolog for one file (the device fio replays on).
///
/// States: *named* ([`IologWriter::new`] checks the file name and writes nothing),
/// *opened* (the header, `add` and `open`, written by the first
/// [`IologWriter::write`] or by [`IologWriter::finish`]), then *closed* by
/// [`IologWriter::finish`] (writes `close`; consumes the writer). A writer dropped
/// before any record leaves its output untouched, so a conversion that finds
/// nothing to write sends no header-only log down a pipe.
pub struct IologWriter<W: Write> {
    out: W,
    version: IologVersion,
    file: String,
    /// Timestamp of the last line written (version 3), microseconds.
    last_stamp_us: u64,
    written: u64,
    /// Whether the header, `add` and `open` are written.
    opened: bool,
}

impl<W: Write> IologWriter<W> {
    /// Start a log that replays on `file` (a path fio opens, e.g. `/dev/sdb`).
    pub fn new(out: W, version: IologVersion, file: &str) -> Result<Self, WriteError> {
        if let Err(problem) = check_file_name(file) {
            return Err(WriteError::Unrepresentable {
                index: 0,
                format: "fio iolog",
                problem: format!("the device file name {file:?} {problem}"),
            });
        }
        Ok(IologWriter {
            out,
            version,
            file: file.to_string(),
            last_stamp_us: 1,
            written: 0,
            opened: false,
        })
    }

    /// Writes the header, `add` and `open` the first time it is called.
    fn open_once(&mut self) -> Result<(), WriteError> {
        if !self.opened {
            self.opened = true;
            writeln!(self.out, "fio version {} iolog", self.version.number())?;
            self.line(1, "add")?;
            self.line(1, "open")?;
        }
        Ok(())
    }

    /// How many I/O lines have been written.
    pub fn written(&self) -> u64 {
        self.written
    }

    fn line(&mut self, stamp_us: u64, rest: &str) -> Result<(), WriteError> {
        match self.version {
            IologVersion::V2 => writeln!(self.out, "{} {rest}", self.file)?,
            IologVersion::V3 => writeln!(self.out, "{stamp_us} {} {rest}", self.file)?,
        }
        self.last_stamp_us = stamp_us;
        Ok(())
    }

    /// Write one record's I/O line.
    pub fn write(&mut self, record: &TraceRecord) -> Result<(), WriteError> {
        let index = self.written;
        let problem = |problem: String| WriteError::Unrepresentable {
            index,
            format: "fio iolog",
            problem,
        };
        let (action, offset, length) = match record.operation {
            Operation::Flush => ("sync", 0, 0),
            operation => {
                let (offset, length) = crate::numbers::sector_bytes(record.lbn, record.sectors)
                    .ok_or_else(|| problem("the byte offset passes 2^64".to_string()))?;
                if length > u64::from(u32::MAX) {
                    return Err(problem(format!(
                        "{length} bytes: fio reads an iolog length as a 32-bit number"
                    )));
                }
                (operation.name(), offset, length)
            }
        };
        let stamp_us = record.arrival.0 / 1_000 + 1;
        self.open_once()?;
        self.line(stamp_us, &format!("{action} {offset} {length}"))?;
        self.written += 1;
        Ok(())
    }

    /// Write `close` and hand back the output.
    pub fn finish(mut self) -> Result<W, WriteError> {
        self.open_once()?;
        let stamp = self.last_stamp_us;
        self.line(stamp, "close")?;
        self.out.flush()?;
        Ok(self.out)
    }
}
