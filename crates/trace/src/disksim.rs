//! DiskSim's ASCII input trace ("ascii" trace format; DiskSim 2.0-4.0): five
//! whitespace-separated fields, `arrival_ms devno blkno size_blocks flags`.
//! `arrival_ms` is milliseconds after the simulation's start as a decimal;
//! `devno`, `blkno` (first 512-byte block) and `size_blocks` are decimal
//! integers; `flags` is hexadecimal (an optional `0x`), bit 0 set for a read and
//! clear for a write (DiskSim's other flag bits, such as synchronous and
//! asynchronous, are accepted and not kept). DiskSim reads exactly these five
//! fields; its manual asks for non-decreasing arrival times, which the reader
//! enforces. Blank lines are skipped.

use crate::line::Line;
use crate::numbers::{field_error, parse_scaled_decimal, parse_u32, parse_u64, sector_range};
use crate::TraceRecord;
use spinstack_sim::request::Operation;
use spinstack_sim::units::Nanoseconds;

/// DiskSim's read flag (bit 0).
const READ_FLAG: u32 = 1;

pub(crate) fn parse(line: &str) -> Result<Line, String> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    if fields.is_empty() {
        return Ok(Line::Skip);
    }
    if fields.len() != 5 {
        return Err(format!(
            "expected 5 whitespace-separated fields (arrival_ms devno blkno size_blocks flags), found {}",
            fields.len()
        ));
    }
    let arrival = parse_scaled_decimal(fields[0], 6, 1, "arrival_ms", "milliseconds")?;
    let device = parse_u32(fields[1], 2, "devno")?;
    let first = parse_u64(fields[2], 3, "blkno")?;
    let count = parse_u64(fields[3], 4, "size_blocks")?;
    let flags_text = fields[4];
    let hex = flags_text
        .strip_prefix("0x")
        .or_else(|| flags_text.strip_prefix("0X"))
        .unwrap_or(flags_text);
    let flags = (!hex.is_empty() && hex.bytes().all(|byte| byte.is_ascii_hexdigit()))
        .then(|| u32::from_str_radix(hex, 16).ok())
        .flatten()
        .ok_or_else(|| field_error(5, "flags", "a 32-bit hexadecimal number", flags_text))?;
    let operation = if flags & READ_FLAG != 0 {
        Operation::Read
    } else {
        Operation::Write
    };
    let (lbn, sectors) = sector_range(first, count)?;
    Ok(Line::Record(TraceRecord {
        arrival: Nanoseconds(arrival),
        device,
        operation,
        lbn,
        sectors,
    }))
}

/// One DiskSim ASCII line for `record` (milliseconds with six decimals: exact to
/// the nanosecond).
pub(crate) fn format_line(record: &TraceRecord) -> Result<String, String> {
    let flags = match record.operation {
        Operation::Read => READ_FLAG,
        Operation::Write => 0,
        other => {
            return Err(format!(
                "DiskSim traces hold reads and writes, not {}",
                other.name()
            ))
        }
    };
    let ns = record.arrival.0;
    Ok(format!(
        "{}.{:06} {} {} {} {flags:x}",
        ns / 1_000_000,
        ns % 1_000_000,
        record.device,
        record.lbn.0,
        record.sectors.0
    ))
}
