//! `blkparse`'s default text output. An event line reads
//! `MAJOR,MINOR CPU SEQUENCE SECONDS PID ACTION RWBS SECTOR + COUNT [PROCESS]`,
//! e.g. `  8,0    3        1     0.000000000  697  Q   W 223490 + 8 [kjournald]`.
//! A request shows up as several events (queued `Q`, merged, issued `D`,
//! completed `C`, ...); the reader takes one action letter
//! ([`crate::BlkparseAction`], issue `D` by default) and skips every other event.
//!
//! **RWBS.** A leading `F` is a cache flush before the request; then `D` (discard:
//! a trim), `W` (write), `R` (read) or `N` (no data); later letters (`F` force
//! unit access, `S` sync, `M` metadata, `A` read-ahead, ...) are not kept. So:
//! `D...` is a trim, `W...`/`FW...` a write, `R...` a read, a leading `F` with no
//! sectors (`FN`, `FWS 0 + 0`) a flush. Events with no data and no flush (`N`),
//! and reads, writes or trims of 0 sectors, carry no request and are skipped.
//!
//! **Summary.** After the events blkparse prints per-CPU and total counts: it
//! opens with a line `CPU<n> (MAJOR,MINOR):`, `Total (MAJOR,MINOR):`, `Throughput
//! (R/W): ...`, `Events (MAJOR,MINOR): ...` or `Skips: ...`, and what follows it
//! is skipped. An event line after the summary is an error (two blkparse outputs
//! joined together; split them), not silently dropped. Before the summary, any
//! line that is neither an event nor such an opening line is an error.
//!
//! **Device number.** The record's device is Linux's `major << 20 | minor`.

use crate::line::Line;
use crate::numbers::{field_error, parse_scaled_decimal, parse_u64, sector_range};
use crate::{BlkparseAction, TraceRecord};
use spinstack_sim::request::Operation;
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors};

/// Bits of a Linux device number that hold the minor number.
const MINOR_BITS: u32 = 20;
/// Linux major numbers have 12 bits.
const MAJOR_LIMIT: u32 = 1 << 12;

/// Whether `fields` open blkparse's closing summary: `CPU<n> (`, `Total (`,
/// `Throughput (`, `Events (` or `Skips:`. Whole words only: an event-less line that
/// merely begins with one of these letters (`Totally ...`) is not the summary.
fn opens_summary(fields: &[&str]) -> bool {
    let parenthesised = fields.get(1).is_some_and(|word| word.starts_with('('));
    match fields.first() {
        Some(&"Total" | &"Throughput" | &"Events") => parenthesised,
        Some(&"Skips:") => true,
        Some(word) => {
            word.strip_prefix("CPU")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                && parenthesised
        }
        None => false,
    }
}

pub(crate) struct Parser {
    action: char,
    /// Past the opening line of the closing summary.
    in_summary: bool,
}

impl Parser {
    pub(crate) fn new(action: BlkparseAction) -> Parser {
        Parser {
            action: action.letter(),
            in_summary: false,
        }
    }

    pub(crate) fn parse(&mut self, line: &str) -> Result<Line, String> {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let Some(first) = fields.first() else {
            return Ok(Line::Skip);
        };
        if self.in_summary {
            if first.contains(',') && fields.len() >= 6 && parse_device(first).is_ok() {
                return Err(
                    "an event after blkparse's closing summary: two outputs joined together? \
                     split them into separate traces"
                        .to_string(),
                );
            }
            return Ok(Line::Skip);
        }
        if !first.contains(',') {
            if opens_summary(&fields) {
                self.in_summary = true;
                return Ok(Line::Skip);
            }
            return Err(format!(
                "expected a blkparse event (MAJOR,MINOR CPU SEQUENCE SECONDS PID ACTION ...) \
                 or the closing summary, found {}",
                crate::numbers::quote(line.trim())
            ));
        }
        if fields.len() < 6 {
            return Err(format!(
                "expected at least 6 fields (MAJOR,MINOR CPU SEQUENCE SECONDS PID ACTION), found {}",
                fields.len()
            ));
        }
        if fields[5] != self.action.to_string() {
            return Ok(Line::Skip);
        }
        let device = parse_device(fields[0])?;
        let arrival = parse_scaled_decimal(fields[3], 9, 4, "SECONDS", "seconds")?;
        let rwbs = fields
            .get(6)
            .ok_or_else(|| format!("field 7 (RWBS): missing after action {}", self.action))?;
        let range = parse_range(&fields)?;
        let (flush_first, data) = classify(rwbs)?;
        let (operation, lbn, sectors) = match (data, range) {
            (Some(operation), Some((first, count))) if count > 0 => {
                let (lbn, sectors) = sector_range(first, count)?;
                (operation, lbn, sectors)
            }
            _ if flush_first => (Operation::Flush, Lbn(0), Sectors(0)),
            (Some(_), None) => {
                return Err(format!(
                    "expected SECTOR + COUNT after RWBS {rwbs:?}, found {}",
                    crate::numbers::quote(&fields[7.min(fields.len())..].join(" "))
                ))
            }
            // No data (`N`) or 0 sectors, and no flush: not a request.
            _ => return Ok(Line::Skip),
        };
        Ok(Line::Record(TraceRecord {
            arrival: Nanoseconds(arrival),
            device,
            operation,
            lbn,
            sectors,
        }))
    }
}

/// `MAJOR,MINOR` as Linux's device number.
fn parse_device(word: &str) -> Result<u32, String> {
    let expected = "MAJOR,MINOR with a major below 4096 and a minor below 1048576";
    let (major, minor) = word
        .split_once(',')
        .ok_or_else(|| field_error(1, "MAJOR,MINOR", expected, word))?;
    let major =
        parse_u64(major, 1, "MAJOR").map_err(|_| field_error(1, "MAJOR,MINOR", expected, word))?;
    let minor =
        parse_u64(minor, 1, "MINOR").map_err(|_| field_error(1, "MAJOR,MINOR", expected, word))?;
    if major >= u64::from(MAJOR_LIMIT) || minor >= 1 << MINOR_BITS {
        return Err(field_error(1, "MAJOR,MINOR", expected, word));
    }
    Ok(((major as u32) << MINOR_BITS) | minor as u32)
}

/// The `SECTOR + COUNT` after the RWBS field, if present.
fn parse_range(fields: &[&str]) -> Result<Option<(u64, u64)>, String> {
    match (fields.get(7), fields.get(8), fields.get(9)) {
        (Some(first), Some(&"+"), Some(count)) => Ok(Some((
            parse_u64(first, 8, "SECTOR")?,
            parse_u64(count, 10, "COUNT")?,
        ))),
        _ => Ok(None),
    }
}

/// Whether the RWBS field starts with a flush, and the data operation it names
/// (`None` for `N`: no data). What blktrace writes: an optional `F` (flush first),
/// then the operation (`W`, `R`, `D` discard, `F` flush, `N` none; nothing after a
/// lone leading `F`), then modifiers from `F` (force unit access), `A` (read-ahead), `B`
/// (barrier), `S` (sync), `M` (metadata) and `E` (secure erase). Anything else is
/// refused rather than dropped as a request with no data.
fn classify(rwbs: &str) -> Result<(bool, Option<Operation>), String> {
    let refuse = || {
        field_error(
            7,
            "RWBS",
            "an optional F, then W, R, D, F or N, then modifiers from F, A, B, S, M, E \
             (such as R, W, WS, FWS, D, N or FN)",
            rwbs,
        )
    };
    let flush_first = rwbs.starts_with('F');
    let rest = rwbs.strip_prefix('F').unwrap_or(rwbs);
    let (flush_operation, operation, modifiers) = match rest.as_bytes().first() {
        Some(b'D') => (false, Some(Operation::Trim), &rest[1..]),
        Some(b'W') => (false, Some(Operation::Write), &rest[1..]),
        Some(b'R') => (false, Some(Operation::Read), &rest[1..]),
        Some(b'N') => (false, None, &rest[1..]),
        Some(b'F') => (true, None, &rest[1..]),
        // A lone `F`: the flush operation itself.
        None if flush_first => (true, None, ""),
        _ => return Err(refuse()),
    };
    if !modifiers.bytes().all(|byte| b"FABSME".contains(&byte)) {
        return Err(refuse());
    }
    Ok((flush_first || flush_operation, operation))
}

/// One blkparse `D` event line for `record`; `index` numbers it (sequence `index + 1`).
pub(crate) fn format_line(record: &TraceRecord, index: u64) -> Result<String, String> {
    let (rwbs, lbn, sectors) = match record.operation {
        Operation::Read => ("R", record.lbn.0, record.sectors.0),
        Operation::Write => ("W", record.lbn.0, record.sectors.0),
        Operation::Trim => ("D", record.lbn.0, record.sectors.0),
        Operation::Flush => ("FN", 0, 0),
    };
    let major = record.device >> MINOR_BITS;
    let minor = record.device & ((1 << MINOR_BITS) - 1);
    let ns = record.arrival.0;
    Ok(format!(
        "{major:>3},{minor:<3} 0 {:>8} {:>5}.{:09} 1 D {rwbs:>3} {lbn} + {sectors} [spinstack]",
        index + 1,
        ns / 1_000_000_000,
        ns % 1_000_000_000
    ))
}
