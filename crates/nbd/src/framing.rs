//! One answer as it goes on the wire, in the connection's reply mode.
//!
//! Without structured replies every answer is a simple reply (the read's data after
//! it on success). With them every answer is exactly one structured chunk, always
//! flagged `DONE`, so "each request answered exactly once" still means one message:
//!
//! | answer               | simple                 | structured                       |
//! |----------------------|------------------------|----------------------------------|
//! | success, no data     | error 0                | `NONE`                           |
//! | read data            | error 0, then the data | one `OFFSET_DATA` (the whole read) |
//! | block status extents | (never asked)          | one `BLOCK_STATUS`               |
//! | error                | the error number       | `ERROR` with a message           |
//!
//! Errors, reads included, use `ERROR` rather than `ERROR_OFFSET`: the backend says
//! that a command failed, not where, and an offset would claim the bytes before it
//! were good. The protocol allows simple replies to other commands than reads after
//! structured replies, but asks that errors be structured (they carry a message);
//! using chunks for every answer keeps one rule.
//!
//! A read's data is sent whole in one chunk, never fragmented: this is why the
//! server can advertise `SEND_DF` (see `transmission`). Nothing is known to be
//! wrong once a chunk starts (the data is in memory), so `DONE` on the data chunk is
//! allowed.

use crate::outcome::{CommandError, Extent};
use crate::wire::*;
use std::borrow::Cow;

/// The fixed bytes of one reply, at most an `OFFSET_DATA` head; stored inline so a
/// reply costs no allocation beyond its body.
#[derive(Clone, Copy)]
pub(crate) struct Head {
    bytes: [u8; OFFSET_DATA_HEAD_BYTES],
    length: usize,
}

impl Head {
    fn new(bytes: &[u8]) -> Head {
        let mut head = Head {
            bytes: [0; OFFSET_DATA_HEAD_BYTES],
            length: bytes.len(),
        };
        head.bytes[..bytes.len()].copy_from_slice(bytes);
        head
    }
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.length]
    }
}

/// A reply ready for the socket: its head, then its body.
pub(crate) struct Framed<'a> {
    pub head: Head,
    pub body: Cow<'a, [u8]>,
}

fn final_chunk(handle: u64, reply_type: u16, body: Vec<u8>) -> Framed<'static> {
    let header = ChunkHeader {
        flags: REPLY_FLAG_DONE,
        reply_type,
        handle,
        length_bytes: body.len() as u32,
    };
    Framed {
        head: Head::new(&encode_chunk_header(&header)),
        body: Cow::Owned(body),
    }
}

/// Success without data.
pub(crate) fn done(handle: u64, structured: bool) -> Framed<'static> {
    if structured {
        final_chunk(handle, REPLY_TYPE_NONE, Vec::new())
    } else {
        Framed {
            head: Head::new(&encode_simple_reply(handle, 0)),
            body: Cow::Borrowed(&[]),
        }
    }
}

/// A read's data (checked by the caller to be the read's length, which the request
/// checks keep within one chunk).
pub(crate) fn data(
    handle: u64,
    structured: bool,
    offset_bytes: u64,
    data: Cow<'_, [u8]>,
) -> Framed<'_> {
    let head = if structured {
        Head::new(&encode_offset_data_head(
            handle,
            offset_bytes,
            data.len() as u32,
        ))
    } else {
        Head::new(&encode_simple_reply(handle, 0))
    };
    Framed { head, body: data }
}

/// A failure, with its message when structured.
pub(crate) fn error(handle: u64, structured: bool, error: CommandError) -> Framed<'static> {
    if structured {
        let body = encode_error_payload(error.errno(), error.message());
        final_chunk(handle, REPLY_TYPE_ERROR, body)
    } else {
        Framed {
            head: Head::new(&encode_simple_reply(handle, error.errno())),
            body: Cow::Borrowed(&[]),
        }
    }
}

/// Block status extents of one context (structured replies only).
pub(crate) fn extents(
    handle: u64,
    context_id: u32,
    descriptors: &[BlockDescriptor],
) -> Framed<'static> {
    let body = encode_block_status_payload(context_id, descriptors);
    final_chunk(handle, REPLY_TYPE_BLOCK_STATUS, body)
}

/// The descriptors for a backend's `extents` answering a query of `length_bytes`:
/// cut where they reach the length (the protocol lets the last one run past it,
/// but nothing is known past the query, and `REQ_ONE` forbids it), neighbours with
/// the same flags merged, at most `most` of them. `None` when nothing can be said
/// honestly: no extents, or one of zero length before the query is covered.
pub(crate) fn descriptors(
    extents: &[Extent],
    length_bytes: u32,
    most: usize,
) -> Option<Vec<BlockDescriptor>> {
    let mut out: Vec<BlockDescriptor> = Vec::new();
    let mut covered_bytes: u32 = 0;
    for extent in extents {
        if covered_bytes >= length_bytes {
            break;
        }
        if extent.length_bytes == 0 {
            return None;
        }
        let take_bytes = extent.length_bytes.min(length_bytes - covered_bytes);
        let flags = extent.flags();
        let full = out.len() == most;
        match out.last_mut() {
            // The sum stays within `length_bytes`, so this cannot overflow.
            Some(last) if last.flags == flags => last.length_bytes += take_bytes,
            _ if full => break,
            _ => out.push(BlockDescriptor {
                length_bytes: take_bytes,
                flags,
            }),
        }
        covered_bytes += take_bytes;
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn extent(length_bytes: u32, hole: bool, zero: bool) -> Extent {
        Extent {
            length_bytes,
            hole,
            zero,
        }
    }

    proptest! {
        /// Whatever a backend answers, the descriptors keep the protocol's rules: at
        /// least one, none empty, at most `most`, consecutive ones differ, the total
        /// within the query's length, and the whole query covered when the extents
        /// cover it and the cap does not cut them.
        #[test]
        fn descriptors_keep_the_rules(
            raw in proptest::collection::vec((1u32..5000, any::<bool>(), any::<bool>()), 0..40),
            length_bytes in 1u32..100_000,
            most in 1usize..8,
        ) {
            let extents: Vec<Extent> = raw.iter().map(|&(l, h, z)| extent(l, h, z)).collect();
            let Some(out) = descriptors(&extents, length_bytes, most) else {
                prop_assert!(extents.is_empty());
                return Ok(());
            };
            prop_assert!(!out.is_empty() && out.len() <= most);
            prop_assert!(out.iter().all(|d| d.length_bytes > 0));
            prop_assert!(out.windows(2).all(|pair| pair[0].flags != pair[1].flags));
            let total: u64 = out.iter().map(|d| d.length_bytes as u64).sum();
            prop_assert!(total <= length_bytes as u64);
            let offered: u64 = extents.iter().map(|e| e.length_bytes as u64).sum();
            let distinct_runs = 1 + extents.windows(2).filter(|p| p[0].flags() != p[1].flags()).count();
            if distinct_runs <= most {
                prop_assert_eq!(total, offered.min(length_bytes as u64));
            }
        }
    }

    /// Extents with no progress, or none at all, cannot be answered honestly.
    #[test]
    fn an_empty_or_stuck_answer_is_refused() {
        assert_eq!(descriptors(&[], 4096, 8), None);
        assert_eq!(descriptors(&[extent(0, false, false)], 4096, 8), None);
        let stuck = [extent(512, true, true), extent(0, false, false)];
        assert_eq!(descriptors(&stuck, 4096, 8), None);
        // A zero-length extent after the query is covered is never looked at.
        let past = [extent(4096, false, false), extent(0, false, false)];
        assert_eq!(descriptors(&past, 4096, 8).unwrap().len(), 1);
    }

    /// The default answer (one extent, flags 0) becomes one descriptor of the
    /// query's length; `REQ_ONE` keeps only the first run, cut at the length.
    #[test]
    fn one_extent_answers() {
        let whole = descriptors(&[Extent::allocated(65536)], 65536, 1).unwrap();
        assert_eq!(
            whole,
            [BlockDescriptor {
                length_bytes: 65536,
                flags: 0
            }]
        );
        let runs = [extent(8192, true, true), extent(100_000, false, false)];
        let first = descriptors(&runs, 4096, 1).unwrap();
        assert_eq!(
            first,
            [BlockDescriptor {
                length_bytes: 4096,
                flags: STATE_HOLE | STATE_ZERO
            }]
        );
    }

    /// Structured answers are single chunks flagged `DONE`, with the payload layout
    /// the protocol gives; simple ones are the 16-byte reply.
    #[test]
    fn framing_follows_the_mode() {
        let simple = error(7, false, CommandError::Invalid);
        assert_eq!(simple.head.as_bytes(), encode_simple_reply(7, EINVAL));
        assert!(simple.body.is_empty());
        let chunk = error(7, true, CommandError::Invalid);
        let header = decode_chunk_header(chunk.head.as_bytes().try_into().unwrap()).unwrap();
        assert_eq!(
            (header.flags, header.reply_type, header.handle),
            (REPLY_FLAG_DONE, REPLY_TYPE_ERROR, 7)
        );
        assert_eq!(header.length_bytes as usize, chunk.body.len());
        let payload = decode_error_payload(REPLY_TYPE_ERROR, &chunk.body).unwrap();
        assert_eq!(payload.error, EINVAL);
        assert_eq!(payload.message, CommandError::Invalid.message());
        let none = done(8, true);
        let header = decode_chunk_header(none.head.as_bytes().try_into().unwrap()).unwrap();
        assert_eq!(
            (header.reply_type, header.length_bytes),
            (REPLY_TYPE_NONE, 0)
        );
        let read = data(9, true, 4096, Cow::Borrowed(b"abc"));
        assert_eq!(read.head.as_bytes().len(), OFFSET_DATA_HEAD_BYTES);
    }
}
