//! SPC / UMass trace repository format: comma-separated
//! `ASU,LBA,Size,Opcode,Timestamp[,...]`. `ASU` (application storage unit) is the
//! device; `LBA` is in 512-byte sectors; `Size` is bytes (widened to whole
//! sectors); `Opcode` is `r`/`R` or `w`/`W`; `Timestamp` is seconds after the
//! trace's start as a decimal. Fields after the fifth (some traces add more) are
//! ignored. Blank lines are skipped.

use crate::line::Line;
use crate::numbers::{
    field_error, parse_scaled_decimal, parse_u32, parse_u64, sector_range, widen_to_sectors,
};
use crate::TraceRecord;
use spinstack_sim::request::Operation;
use spinstack_sim::units::{Nanoseconds, SECTOR_BYTES};

pub(crate) fn parse(line: &str) -> Result<Line, String> {
    if line.trim().is_empty() {
        return Ok(Line::Skip);
    }
    let fields: Vec<&str> = line.split(',').map(str::trim).collect();
    if fields.len() < 5 {
        return Err(format!(
            "expected at least 5 comma-separated fields (ASU,LBA,Size,Opcode,Timestamp), found {}",
            fields.len()
        ));
    }
    let device = parse_u32(fields[0], 1, "ASU")?;
    let first = parse_u64(fields[1], 2, "LBA")?;
    let size_bytes = parse_u64(fields[2], 3, "Size")?;
    let operation = match fields[3] {
        "r" | "R" => Operation::Read,
        "w" | "W" => Operation::Write,
        other => return Err(field_error(4, "Opcode", "r, R, w or W", other)),
    };
    let arrival = parse_scaled_decimal(fields[4], 9, 5, "Timestamp", "seconds")?;
    // The LBA is already in sectors: widen the size alone, then check the end.
    let (_, sectors) = widen_to_sectors(0, size_bytes)?;
    let (lbn, sectors) = sector_range(first, sectors.0)?;
    Ok(Line::Record(TraceRecord {
        arrival: Nanoseconds(arrival),
        device,
        operation,
        lbn,
        sectors,
    }))
}

/// One SPC line for `record` (time with nine decimals: exact to the nanosecond).
pub(crate) fn format_line(record: &TraceRecord) -> Result<String, String> {
    let opcode = match record.operation {
        Operation::Read => 'r',
        Operation::Write => 'w',
        other => {
            return Err(format!(
                "SPC traces hold reads and writes, not {}",
                other.name()
            ))
        }
    };
    let bytes = record
        .sectors
        .0
        .checked_mul(SECTOR_BYTES)
        .ok_or("the size in bytes passes 2^64")?;
    let ns = record.arrival.0;
    Ok(format!(
        "{},{},{bytes},{opcode},{}.{:09}",
        record.device,
        record.lbn.0,
        ns / 1_000_000_000,
        ns % 1_000_000_000
    ))
}
