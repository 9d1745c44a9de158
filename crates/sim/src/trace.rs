//! Trace readers.
//!
//! The DiskSim "validate" format has one request per line, whitespace separated:
//! `R|W  tag  blkno  bcount  service_us  think_us`. The tag (`Hit`, `Miss`, `Doub`,
//! `Trip`) records what the real drive's cache did when the trace was taken; DiskSim
//! only counts it. Blank lines are skipped; anything else that does not parse is an
//! error naming the file, the line and the problem.

use crate::request::Operation;
use crate::units::{Lbn, Nanoseconds, Sectors};
use std::path::Path;

/// The cache tag of a validate-trace line, as the tracer observed it on the real drive.
/// DiskSim only counts these; `Doub` and `Trip` occur in the HP C2247 trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValidateTag {
    Hit,
    Miss,
    Doub,
    Trip,
}

impl ValidateTag {
    fn parse(word: &str) -> Option<ValidateTag> {
        match word {
            "Hit" => Some(ValidateTag::Hit),
            "Miss" => Some(ValidateTag::Miss),
            "Doub" => Some(ValidateTag::Doub),
            "Trip" => Some(ValidateTag::Trip),
            _ => None,
        }
    }
}

/// One line of a DiskSim "validate" trace.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ValidateRecord {
    pub operation: Operation,
    /// The real drive's cache served it (as observed when the trace was taken):
    /// true exactly when `tag` is `Hit`.
    pub measured_hit: bool,
    /// The tag as written in the trace.
    pub tag: ValidateTag,
    pub lbn: Lbn,
    pub sectors: Sectors,
    /// Response time measured on the real drive.
    pub measured: Nanoseconds,
    /// Delay after this request completes before the next is issued.
    pub think: Nanoseconds,
}

impl ValidateRecord {
    /// The measured response time in milliseconds, the unit of the demerit figure.
    pub fn measured_ms(&self) -> f64 {
        self.measured.as_ms_f64()
    }
}

#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: {problem}")]
pub struct TraceError {
    pub file: String,
    /// One-based line number; 0 when the problem concerns the whole file.
    pub line: usize,
    pub problem: String,
}

/// Largest validation trace read: 1 GiB (DiskSim's are under a megabyte; each line
/// is held as a record).
pub const VALIDATE_TRACE_BYTES_MAX: u64 = 1 << 30;

/// Read a validate trace (`R|W Hit|Miss|Doub|Trip blkno bcount service_us think_us`
/// per line).
pub fn read_validate_trace(path: &Path) -> Result<Vec<ValidateRecord>, TraceError> {
    let file = path.display().to_string();
    let bytes =
        crate::input_file::read_bounded(path, VALIDATE_TRACE_BYTES_MAX).map_err(|problem| {
            TraceError {
                file: file.clone(),
                line: 0,
                problem,
            }
        })?;
    parse_validate_trace(&bytes, &file)
}

/// Parse the bytes of a validate trace; `file` names it in errors.
pub fn parse_validate_trace(bytes: &[u8], file: &str) -> Result<Vec<ValidateRecord>, TraceError> {
    let mut records = Vec::with_capacity(bytes.len() / 40);
    for (index, raw_line) in bytes.split(|&byte| byte == b'\n').enumerate() {
        let error = |problem: String| TraceError {
            file: file.to_string(),
            line: index + 1,
            problem,
        };
        let line = std::str::from_utf8(raw_line)
            .map_err(|_| error("the line is not valid UTF-8 text".to_string()))?;
        let line = match index {
            0 => crate::input_file::strip_bom(line),
            _ => line,
        };
        if line.trim().is_empty() {
            continue;
        }
        records.push(parse_line(line).map_err(error)?);
    }
    Ok(records)
}

/// Parse one non-blank line; the error is the problem alone (the caller adds file:line).
fn parse_line(line: &str) -> Result<ValidateRecord, String> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    if fields.len() != 6 {
        return Err(format!(
            "expected 6 fields (R|W tag blkno bcount service_us think_us), found {}",
            fields.len()
        ));
    }
    let operation = match fields[0] {
        "R" => Operation::Read,
        "W" => Operation::Write,
        other => return Err(format!("direction must be R or W, found {other:?}")),
    };
    let tag = ValidateTag::parse(fields[1]).ok_or_else(|| {
        format!(
            "cache tag must be Hit, Miss, Doub or Trip, found {:?}",
            fields[1]
        )
    })?;
    let lbn = parse_count(fields[2], "blkno")?;
    let sectors = parse_count(fields[3], "bcount")?;
    if sectors == 0 {
        return Err("bcount is 0: a request must cover at least one sector".to_string());
    }
    if lbn.checked_add(sectors).is_none() {
        return Err(format!("blkno {lbn} + bcount {sectors} overflows"));
    }
    Ok(ValidateRecord {
        operation,
        measured_hit: tag == ValidateTag::Hit,
        tag,
        lbn: Lbn(lbn),
        sectors: Sectors(sectors),
        measured: parse_microseconds(fields[4], "service_us")?,
        think: parse_microseconds(fields[5], "think_us")?,
    })
}

fn parse_count(word: &str, name: &str) -> Result<u64, String> {
    word.parse::<u64>()
        .map_err(|_| format!("{name} must be a non-negative integer, found {word:?}"))
}

/// Microseconds with an optional fraction, as the traces write them, to whole nanoseconds.
fn parse_microseconds(word: &str, name: &str) -> Result<Nanoseconds, String> {
    let microseconds: f64 = word
        .parse()
        .map_err(|_| format!("{name} must be a number of microseconds, found {word:?}"))?;
    // An hour bounds any plausible single-request time and keeps the conversion exact.
    const LIMIT_US: f64 = 3.6e9;
    if !(0.0..=LIMIT_US).contains(&microseconds) {
        return Err(format!(
            "{name} must be between 0 and {LIMIT_US} microseconds, found {word:?}"
        ));
    }
    Ok(Nanoseconds((microseconds * 1_000.0).round() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn parse(text: &str) -> Result<Vec<ValidateRecord>, TraceError> {
        parse_validate_trace(text.as_bytes(), "test.trace")
    }

    // Guards inputs finding 25: every text input skips a UTF-8 byte-order mark at its
    // start. Proves a validate trace starting with one reads as without.
    #[test]
    fn a_byte_order_mark_at_the_start_is_skipped() {
        let text = "R Hit 7563004 4 14368.00000 28778.0\n";
        assert_eq!(
            parse(&format!("\u{feff}{text}")).unwrap(),
            parse(text).unwrap()
        );
    }

    // Proves every field is read, with fractional microseconds converted exactly, and
    // that blank lines are skipped without shifting line numbers.
    #[test]
    fn parses_fields_and_skips_blank_lines() {
        let records =
            parse("R Hit 7563004 4 14368.00000 28778.0\n\n  \nW Doub 5 2 1414.270 9632.52\n")
                .unwrap();
        assert_eq!(records.len(), 2);
        assert_eq!(records[0].operation, Operation::Read);
        assert!(records[0].measured_hit);
        assert_eq!(records[0].lbn, Lbn(7563004));
        assert_eq!(records[0].sectors, Sectors(4));
        assert_eq!(records[0].measured, Nanoseconds(14_368_000));
        assert_eq!(records[0].think, Nanoseconds(28_778_000));
        assert_eq!(records[1].operation, Operation::Write);
        assert_eq!(records[1].tag, ValidateTag::Doub);
        assert!(!records[1].measured_hit);
        assert_eq!(records[1].measured, Nanoseconds(1_414_270));
        assert_eq!(records[1].think, Nanoseconds(9_632_520));
    }

    // Proves errors name the file, the right line number (counting blank lines) and the problem.
    #[test]
    fn errors_name_file_line_and_problem() {
        let cases = [
            ("R Hit 1 1 1.0 1.0\n\nX Hit 1 1 1 1\n", 3, "direction"),
            ("R Maybe 1 1 1 1\n", 1, "cache tag"),
            ("R Hit -1 1 1 1\n", 1, "blkno"),
            ("R Hit 1 0 1 1\n", 1, "bcount is 0"),
            ("R Hit 1 1 nan 1\n", 1, "service_us"),
            ("R Hit 1 1 1 -2\n", 1, "think_us"),
            ("R Hit 1 1 1\n", 1, "expected 6 fields"),
            ("R Hit 1 1 1 1 7\n", 1, "expected 6 fields"),
        ];
        for (text, line, problem) in cases {
            let error = parse(text).unwrap_err();
            assert_eq!(error.line, line, "{text:?}");
            let message = error.to_string();
            assert!(
                message.starts_with(&format!("test.trace:{line}: ")),
                "{message}"
            );
            assert!(message.contains(problem), "{message}");
        }
    }

    // Proves a missing file is an error naming it, not a panic.
    #[test]
    fn missing_file_is_an_error() {
        let error = read_validate_trace(Path::new("/nonexistent/x.trace")).unwrap_err();
        assert!(error.to_string().contains("/nonexistent/x.trace"));
    }

    // Proves all seven shared validation traces parse completely (one record per line).
    #[test]
    fn shared_traces_parse() {
        let Some(folder) =
            spinstack_testdata::disksim("traces", "parse the shared validation traces")
        else {
            return;
        };
        let names = [
            "atlas_III",
            "barracuda",
            "cheetah4LP",
            "dec_rz26",
            "hp_c2247a",
            "hp_c3323a",
            "st41601n",
        ];
        for name in names {
            let path = folder.join(format!("{name}.trace"));
            let text = std::fs::read_to_string(&path).unwrap();
            let lines = text.lines().filter(|line| !line.trim().is_empty()).count();
            let records = read_validate_trace(&path).unwrap_or_else(|error| panic!("{error}"));
            assert_eq!(records.len(), lines, "{name}");
            assert!(records
                .iter()
                .all(|record| record.measured > Nanoseconds::ZERO));
        }
    }

    proptest! {
        // Proves the parser never panics on arbitrary bytes or on near-miss text.
        #[test]
        fn never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let _ = parse_validate_trace(&bytes, "fuzz");
        }

        #[test]
        fn never_panics_on_tokens(
            lines in proptest::collection::vec(
                proptest::collection::vec(
                    prop_oneof!["R", "W", "Hit", "Miss", "Trip", "-?[0-9]{0,25}(\\.[0-9]{0,6})?", "[a-z.e+-]{0,5}"],
                    0..8),
                0..6)
        ) {
            let text: String = lines.iter().map(|words| words.join(" ") + "\n").collect();
            let _ = parse(&text);
        }
    }
}
