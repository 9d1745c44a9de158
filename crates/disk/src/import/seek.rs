//! DiskSim `.seek` files: the extracted seek curve.
//!
//! Line 1 is `Seek distances measured: N`; then N rows `distance, time_ms` with an
//! optional third column (a standard deviation, unused). DiskSim skips rows it
//! cannot read with a warning; here they are errors, and so is a row count that
//! differs from N, so a damaged curve is never silently shortened.

use super::ImportError;
use crate::spec::SeekPoint;
use std::path::Path;

/// Most rows accepted (far more than any real curve; bounds memory on bad input).
const MAX_SEEK_POINTS: usize = 1_000_000;

/// Largest seek file read (real ones are a few kB).
const MAX_SEEK_FILE_BYTES: u64 = 16 * 1024 * 1024;

pub(super) fn load_seek_file(path: &Path) -> Result<Vec<SeekPoint>, ImportError> {
    let fail = |message: String| {
        ImportError::new(path, 0, None, format!("cannot read seek curve: {message}"))
    };
    let len = std::fs::metadata(path)
        .map_err(|e| fail(e.to_string()))?
        .len();
    if len > MAX_SEEK_FILE_BYTES {
        return Err(fail(format!("larger than {MAX_SEEK_FILE_BYTES} bytes")));
    }
    let bytes = std::fs::read(path).map_err(|e| fail(e.to_string()))?;
    parse_seek_text(path, &String::from_utf8_lossy(&bytes))
}

pub(super) fn parse_seek_text(path: &Path, text: &str) -> Result<Vec<SeekPoint>, ImportError> {
    let text = spinstack_sim::input_file::strip_bom(text);
    let err = |line: usize, message: String| ImportError::new(path, line as u32, None, message);
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    let (_, header) = lines
        .next()
        .ok_or_else(|| err(1, "empty seek file".into()))?;
    let count: usize = header
        .trim()
        .strip_prefix("Seek distances measured:")
        .and_then(|n| n.trim().parse().ok())
        .filter(|&n| (1..=MAX_SEEK_POINTS).contains(&n))
        .ok_or_else(|| {
            err(
                1,
                format!(
                    "expected 'Seek distances measured: N' (N from 1), found '{}'",
                    header.trim()
                ),
            )
        })?;
    let mut points = Vec::with_capacity(count.min(4096));
    for (line, row) in lines.filter(|(_, l)| !l.trim().is_empty()) {
        if points.len() == count {
            return Err(err(
                line,
                format!("more rows than the {count} announced on line 1"),
            ));
        }
        let point = parse_row(row).map_err(|m| err(line, m))?;
        // The seek model interpolates between neighbours (and refuses a curve
        // whose distances do not rise); here the row is named.
        let previous = points
            .last()
            .map_or(0, |p: &SeekPoint| p.distance_cylinders);
        if point.distance_cylinders <= previous {
            return Err(err(
                line,
                format!(
                    "distance {} does not come after the row before ({previous}): \
                     distances must rise from 1",
                    point.distance_cylinders
                ),
            ));
        }
        points.push(point);
    }
    if points.len() != count {
        let last = text.lines().count();
        return Err(err(
            last,
            format!("{} rows, but line 1 announces {count}", points.len()),
        ));
    }
    Ok(points)
}

fn parse_row(row: &str) -> Result<SeekPoint, String> {
    let mut cols = row.split(',').map(str::trim);
    let (Some(d), Some(t)) = (cols.next(), cols.next()) else {
        return Err(format!(
            "expected 'distance, milliseconds', found '{}'",
            row.trim()
        ));
    };
    if cols.clone().count() > 1 {
        return Err(format!("too many columns in '{}'", row.trim()));
    }
    if let Some(stdev) = cols.next() {
        stdev
            .parse::<f64>()
            .map_err(|_| format!("bad third column '{stdev}'"))?;
    }
    let distance_cylinders = d
        .parse::<u32>()
        .map_err(|_| format!("bad distance '{d}' (want a non-negative integer)"))?;
    let time_ms = t
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| format!("bad time '{t}'"))?;
    if !(0.0..=crate::spec_check::TIME_MS_MAX).contains(&time_ms) {
        return Err(format!(
            "seek time {t} ms: expected a duration of 0 to 10,000,000 ms"
        ));
    }
    Ok(SeekPoint {
        distance_cylinders,
        time_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Proves blank lines and the optional third column are accepted, and that a
    // count mismatch or bad row is an error at the right line.
    #[test]
    fn seek_text() {
        let p = Path::new("x.seek");
        let pts =
            parse_seek_text(p, "Seek distances measured: 2\n1, 1.5, 0.1\n\n10,\t2\n").unwrap();
        assert_eq!(pts.len(), 2);
        assert_eq!((pts[1].distance_cylinders, pts[1].time_ms), (10, 2.0));
        let e = parse_seek_text(p, "Seek distances measured: 3\n1, 1.5\n2, 1.6\n").unwrap_err();
        assert!(e.message.contains("2 rows, but line 1 announces 3"), "{e}");
        let e = parse_seek_text(p, "Seek distances measured: 2\n1, 1.5\n-2, 1.6\n").unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        let e = parse_seek_text(p, "Seek distances: 2\n").unwrap_err();
        assert_eq!(e.line, 1, "{e}");
    }
}
