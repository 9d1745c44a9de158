//! MSR Cambridge block traces (SNIA IOTTA): comma-separated
//! `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`, one request a
//! line. `Timestamp` is a Windows filetime (100 ns ticks since 1601); the first
//! record's timestamp is the trace's start. `Type` is `Read` or `Write` (any
//! case); `Offset` and `Size` are bytes; `ResponseTime` (ticks) is checked to be
//! an integer and not kept. A first line starting `Timestamp,` is a header and is
//! skipped, as are blank lines.

use crate::line::Line;
use crate::numbers::{field_error, parse_u32, parse_u64, sector_bytes, widen_to_sectors};
use crate::TraceRecord;
use spinstack_sim::request::Operation;
use spinstack_sim::units::Nanoseconds;

/// Nanoseconds in one filetime tick.
const TICK_NS: u64 = 100;

/// The filetime [`crate::write_record`] writes for arrival 0 (a moment in 2007,
/// when the MSR traces were taken).
pub const FILETIME_ORIGIN: u64 = 128_166_372_000_000_000;

const FIELDS: [&str; 7] = [
    "Timestamp",
    "Hostname",
    "DiskNumber",
    "Type",
    "Offset",
    "Size",
    "ResponseTime",
];

/// The MSR parser remembers the first record's timestamp (the trace's start).
#[derive(Default)]
pub(crate) struct Parser {
    origin_ticks: Option<u64>,
}

impl Parser {
    pub(crate) fn parse(&mut self, line: &str, number: u64) -> Result<Line, String> {
        if line.trim().is_empty() || (number == 1 && line.starts_with("Timestamp,")) {
            return Ok(Line::Skip);
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() != FIELDS.len() {
            return Err(format!(
                "expected {} comma-separated fields ({}), found {}",
                FIELDS.len(),
                FIELDS.join(","),
                fields.len()
            ));
        }
        let ticks = parse_u64(fields[0], 1, FIELDS[0])?;
        let device = parse_u32(fields[2], 3, FIELDS[2])?;
        let operation = match fields[3].to_ascii_lowercase().as_str() {
            "read" => Operation::Read,
            "write" => Operation::Write,
            _ => return Err(field_error(4, FIELDS[3], "Read or Write", fields[3])),
        };
        let offset_bytes = parse_u64(fields[4], 5, FIELDS[4])?;
        let size_bytes = parse_u64(fields[5], 6, FIELDS[5])?;
        parse_u64(fields[6], 7, FIELDS[6])?;
        let (lbn, sectors) = widen_to_sectors(offset_bytes, size_bytes)?;
        let origin = *self.origin_ticks.get_or_insert(ticks);
        let since_start = ticks.checked_sub(origin).ok_or_else(|| {
            format!(
                "time goes backwards: Timestamp {ticks} is before the first record's {origin} \
                 (records must be in time order; sort the trace first)"
            )
        })?;
        let arrival = since_start.checked_mul(TICK_NS).ok_or_else(|| {
            format!("Timestamp {ticks} is more than 2^64 ns after the trace's start")
        })?;
        Ok(Line::Record(TraceRecord {
            arrival: Nanoseconds(arrival),
            device,
            operation,
            lbn,
            sectors,
        }))
    }
}

/// One MSR line for `record` (hostname `spinstack`, response time 0).
pub(crate) fn format_line(record: &TraceRecord) -> Result<String, String> {
    let operation = match record.operation {
        Operation::Read => "Read",
        Operation::Write => "Write",
        other => {
            return Err(format!(
                "MSR traces hold reads and writes, not {}",
                other.name()
            ))
        }
    };
    if !record.arrival.0.is_multiple_of(TICK_NS) {
        return Err(format!(
            "arrival {} ns is not a whole number of 100 ns filetime ticks",
            record.arrival.0
        ));
    }
    let ticks = FILETIME_ORIGIN
        .checked_add(record.arrival.0 / TICK_NS)
        .ok_or("the arrival passes the filetime range")?;
    let (offset, length) =
        sector_bytes(record.lbn, record.sectors).ok_or("the byte offset passes 2^64")?;
    Ok(format!(
        "{ticks},spinstack,{},{operation},{offset},{length},0",
        record.device
    ))
}
