//! Byte-level damage for parser fuzz tests: one mutator every "arbitrary damage never
//! panics" property shares, so each parser's test says only which bytes matter to it.
//!
//! An edit is `(operation, position, span, byte)`, drawn by proptest; positions and
//! spans are reduced modulo the current length, so every edit applies to any input
//! (an empty input gets the byte appended instead). The byte is an index into the
//! caller's alphabet of *interesting* bytes (delimiters, digits, NUL, 0xFF), so
//! mutations hit the grammar far more often than uniformly random bytes would.

/// One edit: operation selector, position, span length, alphabet index.
pub type Edit = (u8, usize, usize, u8);

/// How to damage bytes for one parser.
#[derive(Debug, Clone, Copy)]
pub struct Mutator {
    /// Bytes that matter to the parser under test.
    pub interesting: &'static [u8],
    /// Longest span one edit deletes or duplicates (exclusive bound).
    pub span_bytes_max: usize,
    /// Whether edits may also splice in a number too large for any integer field.
    pub oversized_numbers: bool,
}

/// A decimal number wider than `u64`: every integer field must refuse it cleanly.
const OVERSIZED_NUMBER: &[u8] = b"99999999999999999999";

impl Mutator {
    /// `bytes` after every edit in `edits`, applied in order.
    pub fn apply(&self, mut bytes: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
        assert!(!self.interesting.is_empty() && self.span_bytes_max > 0);
        let operations = if self.oversized_numbers { 6 } else { 5 };
        for &(operation, at, span, byte) in edits {
            let replacement = self.interesting[byte as usize % self.interesting.len()];
            if bytes.is_empty() {
                bytes.push(replacement);
                continue;
            }
            let at = at % bytes.len();
            let end = (at + span % self.span_bytes_max).min(bytes.len());
            match operation % operations {
                0 => bytes[at] = replacement,
                1 => {
                    bytes.drain(at..end);
                }
                2 => bytes.insert(at, replacement),
                3 => {
                    let copy = bytes[at..end].to_vec();
                    bytes.splice(at..at, copy);
                }
                4 => bytes.truncate(at),
                _ => {
                    bytes.splice(at..at, OVERSIZED_NUMBER.iter().copied());
                }
            }
        }
        bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MUTATOR: Mutator = Mutator {
        interesting: b",x",
        span_bytes_max: 4,
        oversized_numbers: true,
    };

    // Proves each operation does what its selector says, on a known input.
    #[test]
    fn each_operation_edits_as_documented() {
        let input = b"abcdef".to_vec();
        assert_eq!(MUTATOR.apply(input.clone(), &[(0, 1, 0, 0)]), b"a,cdef");
        assert_eq!(MUTATOR.apply(input.clone(), &[(1, 1, 2, 0)]), b"adef");
        assert_eq!(MUTATOR.apply(input.clone(), &[(2, 1, 0, 1)]), b"axbcdef");
        assert_eq!(MUTATOR.apply(input.clone(), &[(3, 1, 2, 0)]), b"abcbcdef");
        assert_eq!(MUTATOR.apply(input.clone(), &[(4, 2, 0, 0)]), b"ab");
        assert_eq!(
            MUTATOR.apply(input.clone(), &[(5, 0, 0, 0)]),
            b"99999999999999999999abcdef"
        );
        assert_eq!(MUTATOR.apply(Vec::new(), &[(1, 7, 9, 1)]), b"x");
    }

    // Proves the oversized-number splice is off unless asked for (selector 5 wraps to 0).
    #[test]
    fn five_operations_without_oversized_numbers() {
        let plain = Mutator {
            oversized_numbers: false,
            ..MUTATOR
        };
        assert_eq!(plain.apply(b"abc".to_vec(), &[(5, 0, 0, 0)]), b",bc");
    }
}
