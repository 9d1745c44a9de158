//! Field parsing shared by the readers: integers, decimal timestamps converted
//! exactly (no floating point) to nanoseconds, and byte ranges widened to whole
//! sectors. Every error is a sentence naming the field and what was expected.

use spinstack_sim::units::{Lbn, Sectors, SECTOR_BYTES};

/// Longest slice of an offending field quoted in an error (a hostile line may be long).
const QUOTE_LIMIT: usize = 40;

/// `word` quoted for an error message, cut at [`QUOTE_LIMIT`] characters.
pub(crate) fn quote(word: &str) -> String {
    if word.chars().count() <= QUOTE_LIMIT {
        return format!("{word:?}");
    }
    let head: String = word.chars().take(QUOTE_LIMIT).collect();
    format!("{head:?}...")
}

/// The error for field `name` (1-based `position`) that is not `expected`.
pub(crate) fn field_error(position: usize, name: &str, expected: &str, found: &str) -> String {
    format!(
        "field {position} ({name}): expected {expected}, found {}",
        quote(found)
    )
}

/// A non-negative decimal integer that fits in `u64`.
pub(crate) fn parse_u64(word: &str, position: usize, name: &str) -> Result<u64, String> {
    let digits_only = !word.is_empty() && word.bytes().all(|byte| byte.is_ascii_digit());
    if !digits_only {
        return Err(field_error(
            position,
            name,
            "a non-negative decimal integer",
            word,
        ));
    }
    word.parse::<u64>().map_err(|_| {
        field_error(
            position,
            name,
            "an integer no larger than 18446744073709551615",
            word,
        )
    })
}

/// A non-negative decimal integer that fits in `u32` (device numbers).
pub(crate) fn parse_u32(word: &str, position: usize, name: &str) -> Result<u32, String> {
    let value = parse_u64(word, position, name)?;
    u32::try_from(value)
        .map_err(|_| field_error(position, name, "an integer no larger than 4294967295", word))
}

/// A non-negative decimal number `digits[.digits]` scaled by 10^`scale_digits`
/// and rounded down: with `scale_digits` 9, seconds become nanoseconds. Exact
/// (integer arithmetic); digits past the scale are dropped, which rounds down
/// to the nanosecond. Signs, exponents and overflow are errors.
pub(crate) fn parse_scaled_decimal(
    word: &str,
    scale_digits: u32,
    position: usize,
    name: &str,
    unit: &str,
) -> Result<u64, String> {
    let expected = format!("a non-negative decimal number of {unit} (digits, optional fraction)");
    let (whole, fraction) = word.split_once('.').unwrap_or((word, ""));
    let well_formed = !whole.is_empty()
        && whole.bytes().all(|byte| byte.is_ascii_digit())
        && fraction.bytes().all(|byte| byte.is_ascii_digit());
    if !well_formed {
        return Err(field_error(position, name, &expected, word));
    }
    let too_large = || {
        field_error(
            position,
            name,
            &format!("{unit} that fit in 64-bit nanoseconds"),
            word,
        )
    };
    let scale = 10u64.pow(scale_digits);
    let whole: u64 = whole.parse().map_err(|_| too_large())?;
    let mut fraction_scaled = 0u64;
    let mut place = scale;
    for digit in fraction.bytes().take(scale_digits as usize) {
        place /= 10;
        fraction_scaled += u64::from(digit - b'0') * place;
    }
    whole
        .checked_mul(scale)
        .and_then(|value| value.checked_add(fraction_scaled))
        .ok_or_else(too_large)
}

/// The whole sectors covering `size_bytes` bytes from byte `offset_bytes`: the
/// start is rounded down and the end up to a sector boundary, so a range that is
/// not sector-aligned is widened, never cut. A zero size and a range whose end
/// passes 2^64 bytes are errors.
pub(crate) fn widen_to_sectors(
    offset_bytes: u64,
    size_bytes: u64,
) -> Result<(Lbn, Sectors), String> {
    if size_bytes == 0 {
        return Err("the size is 0 bytes: a request must cover at least one byte".to_string());
    }
    let end_bytes = offset_bytes.checked_add(size_bytes).ok_or_else(|| {
        format!("offset {offset_bytes} + size {size_bytes} bytes passes 2^64 bytes")
    })?;
    let first = offset_bytes / SECTOR_BYTES;
    let end = end_bytes / SECTOR_BYTES + u64::from(end_bytes % SECTOR_BYTES != 0);
    Ok((Lbn(first), Sectors(end - first)))
}

/// A sector range given in sectors: non-empty, its end within `u64`.
pub(crate) fn sector_range(first: u64, count: u64) -> Result<(Lbn, Sectors), String> {
    if count == 0 {
        return Err("the size is 0 sectors: a request must cover at least one sector".to_string());
    }
    first
        .checked_add(count)
        .ok_or_else(|| format!("sector {first} + {count} sectors passes 2^64 sectors"))?;
    Ok((Lbn(first), Sectors(count)))
}

/// Bytes in `sectors` sectors from `lbn`: (offset, length), or `None` on overflow.
pub(crate) fn sector_bytes(lbn: Lbn, sectors: Sectors) -> Option<(u64, u64)> {
    Some((
        lbn.0.checked_mul(SECTOR_BYTES)?,
        sectors.0.checked_mul(SECTOR_BYTES)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Proves decimal timestamps convert exactly, drop digits past the scale
    // (rounding down) and refuse signs, exponents, blanks and overflow.
    #[test]
    fn scaled_decimals() {
        let seconds = |word| parse_scaled_decimal(word, 9, 1, "t", "seconds");
        assert_eq!(seconds("0.000000001"), Ok(1));
        assert_eq!(seconds("1.5"), Ok(1_500_000_000));
        assert_eq!(seconds("12"), Ok(12_000_000_000));
        assert_eq!(seconds("2."), Ok(2_000_000_000));
        assert_eq!(seconds("0.0000000019"), Ok(1));
        assert_eq!(seconds("18446744073.709551615"), Ok(u64::MAX));
        for bad in [
            "",
            ".5",
            "-1",
            "+1",
            "1e3",
            "1.2.3",
            " 1",
            "18446744074",
            "99999999999999999999999",
        ] {
            let error = seconds(bad).unwrap_err();
            assert!(
                error.starts_with("field 1 (t): expected"),
                "{bad:?}: {error}"
            );
        }
    }

    // Proves byte ranges widen to whole sectors (start down, end up) and that zero
    // sizes and overflowing ends are errors.
    #[test]
    fn widening() {
        assert_eq!(widen_to_sectors(0, 512), Ok((Lbn(0), Sectors(1))));
        assert_eq!(widen_to_sectors(511, 2), Ok((Lbn(0), Sectors(2))));
        assert_eq!(widen_to_sectors(1024, 1), Ok((Lbn(2), Sectors(1))));
        assert_eq!(widen_to_sectors(100, 4096), Ok((Lbn(0), Sectors(9))));
        assert_eq!(
            widen_to_sectors(u64::MAX - 1023, 512),
            Ok((Lbn(u64::MAX / 512 - 1), Sectors(1)))
        );
        assert!(widen_to_sectors(5, 0).is_err());
        assert!(widen_to_sectors(u64::MAX, 1).is_err());
    }

    // Proves integer fields refuse signs, blanks and values past their width.
    #[test]
    fn integers() {
        assert_eq!(parse_u64("42", 2, "x"), Ok(42));
        assert!(parse_u64("-1", 2, "x").is_err());
        assert!(parse_u64("", 2, "x").is_err());
        assert!(parse_u64("18446744073709551616", 2, "x").is_err());
        assert!(parse_u32("4294967296", 2, "x").is_err());
        assert_eq!(parse_u32("4294967295", 2, "x"), Ok(u32::MAX));
    }
}
