//! The NBD wire format: magic numbers, option and command codes, flag bits, and pure
//! encoders and decoders for the fixed-size parts (no I/O here, so every decoder can
//! be fuzzed on byte slices).
//!
//! Values are from the NBD project's protocol document (`doc/proto.md`). All integers
//! on the wire are big-endian.

/// The first eight bytes the server sends: "NBDMAGIC".
pub const INIT_MAGIC: u64 = 0x4e42_444d_4147_4943;
/// Newstyle negotiation marker, also the prefix of every client option: "IHAVEOPT".
pub const OPTION_MAGIC: u64 = 0x4948_4156_454f_5054;
/// Prefix of every option reply.
pub const OPTION_REPLY_MAGIC: u64 = 0x0003_e889_0455_65a9;
/// Prefix of every transmission request.
pub const REQUEST_MAGIC: u32 = 0x2560_9513;
/// Prefix of every simple reply.
pub const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;
/// Prefix of every structured reply chunk.
pub const STRUCTURED_REPLY_MAGIC: u32 = 0x668e_33ef;

/// Handshake flags the server sends.
pub const HANDSHAKE_FIXED_NEWSTYLE: u16 = 1 << 0;
pub const HANDSHAKE_NO_ZEROES: u16 = 1 << 1;
/// Client flags (the client's answer to the handshake flags).
pub const CLIENT_FIXED_NEWSTYLE: u32 = 1 << 0;
pub const CLIENT_NO_ZEROES: u32 = 1 << 1;

/// Options.
pub const OPT_EXPORT_NAME: u32 = 1;
pub const OPT_ABORT: u32 = 2;
pub const OPT_LIST: u32 = 3;
pub const OPT_STARTTLS: u32 = 5;
pub const OPT_INFO: u32 = 6;
pub const OPT_GO: u32 = 7;
pub const OPT_STRUCTURED_REPLY: u32 = 8;
pub const OPT_LIST_META_CONTEXT: u32 = 9;
pub const OPT_SET_META_CONTEXT: u32 = 10;

/// Option reply types.
pub const REP_ACK: u32 = 1;
pub const REP_SERVER: u32 = 2;
pub const REP_INFO: u32 = 3;
pub const REP_META_CONTEXT: u32 = 4;
const REP_ERROR_BIT: u32 = 1 << 31;
pub const REP_ERR_UNSUP: u32 = REP_ERROR_BIT | 1;
pub const REP_ERR_POLICY: u32 = REP_ERROR_BIT | 2;
pub const REP_ERR_INVALID: u32 = REP_ERROR_BIT | 3;
pub const REP_ERR_UNKNOWN: u32 = REP_ERROR_BIT | 6;
pub const REP_ERR_TOO_BIG: u32 = REP_ERROR_BIT | 9;

/// Information types inside `REP_INFO`.
pub const INFO_EXPORT: u16 = 0;
pub const INFO_NAME: u16 = 1;
pub const INFO_DESCRIPTION: u16 = 2;
pub const INFO_BLOCK_SIZE: u16 = 3;

/// Transmission flags (sent with the export size).
pub const FLAG_HAS_FLAGS: u16 = 1 << 0;
pub const FLAG_READ_ONLY: u16 = 1 << 1;
pub const FLAG_SEND_FLUSH: u16 = 1 << 2;
pub const FLAG_SEND_FUA: u16 = 1 << 3;
pub const FLAG_ROTATIONAL: u16 = 1 << 4;
pub const FLAG_SEND_TRIM: u16 = 1 << 5;
pub const FLAG_SEND_WRITE_ZEROES: u16 = 1 << 6;
pub const FLAG_SEND_DF: u16 = 1 << 7;
pub const FLAG_CAN_MULTI_CONN: u16 = 1 << 8;

/// Commands.
pub const CMD_READ: u16 = 0;
pub const CMD_WRITE: u16 = 1;
pub const CMD_DISC: u16 = 2;
pub const CMD_FLUSH: u16 = 3;
pub const CMD_TRIM: u16 = 4;
pub const CMD_WRITE_ZEROES: u16 = 6;
pub const CMD_BLOCK_STATUS: u16 = 7;

/// Command flags.
pub const CMD_FLAG_FUA: u16 = 1 << 0;
pub const CMD_FLAG_NO_HOLE: u16 = 1 << 1;
pub const CMD_FLAG_DF: u16 = 1 << 2;
pub const CMD_FLAG_REQ_ONE: u16 = 1 << 3;

/// Structured reply flags: the last chunk of a reply.
pub const REPLY_FLAG_DONE: u16 = 1 << 0;
/// Structured reply chunk types.
pub const REPLY_TYPE_NONE: u16 = 0;
pub const REPLY_TYPE_OFFSET_DATA: u16 = 1;
pub const REPLY_TYPE_BLOCK_STATUS: u16 = 5;
const REPLY_TYPE_ERROR_BIT: u16 = 1 << 15;
pub const REPLY_TYPE_ERROR: u16 = REPLY_TYPE_ERROR_BIT | 1;
pub const REPLY_TYPE_ERROR_OFFSET: u16 = REPLY_TYPE_ERROR_BIT | 2;

/// `base:allocation` status flags.
pub const STATE_HOLE: u32 = 1 << 0;
pub const STATE_ZERO: u32 = 1 << 1;

/// Error values in replies (the protocol's, which match Linux errno numbers).
pub const EPERM: u32 = 1;
pub const EIO: u32 = 5;
pub const ENOMEM: u32 = 12;
pub const EINVAL: u32 = 22;
pub const ENOSPC: u32 = 28;
pub const ENOTSUP: u32 = 95;
pub const ESHUTDOWN: u32 = 108;

/// Bytes of a transmission request header.
pub const REQUEST_HEADER_BYTES: usize = 28;
/// Bytes of an option header (magic, option, length).
pub const OPTION_HEADER_BYTES: usize = 16;
/// Bytes of a structured reply chunk header (magic, flags, type, handle, length).
pub const CHUNK_HEADER_BYTES: usize = 20;
/// Longest string the protocol allows (export names, queries, error messages).
pub const MAX_STRING_BYTES: usize = 4096;

/// A client option header: which option and how many data bytes follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptionHeader {
    pub option: u32,
    pub length_bytes: u32,
}

/// Why a message could not be decoded; each names what it refuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("bad magic {found:#x} (expected {expected:#x})")]
    BadMagic { found: u64, expected: u64 },
    #[error("{what}: {length_bytes} bytes, {rule}")]
    BadLength {
        what: &'static str,
        length_bytes: usize,
        rule: &'static str,
    },
    #[error("{what}: {rule}")]
    BadField {
        what: &'static str,
        rule: &'static str,
    },
}

/// Decodes an option header; a wrong magic means the stream cannot be trusted.
pub fn decode_option_header(bytes: &[u8; OPTION_HEADER_BYTES]) -> Result<OptionHeader, WireError> {
    let magic = u64::from_be_bytes(bytes[0..8].try_into().expect("8 bytes"));
    if magic != OPTION_MAGIC {
        return Err(WireError::BadMagic {
            found: magic,
            expected: OPTION_MAGIC,
        });
    }
    Ok(OptionHeader {
        option: u32::from_be_bytes(bytes[8..12].try_into().expect("4 bytes")),
        length_bytes: u32::from_be_bytes(bytes[12..16].try_into().expect("4 bytes")),
    })
}

/// Encodes an option reply header followed by its data.
pub fn encode_option_reply(option: u32, reply_type: u32, data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(20 + data.len());
    out.extend_from_slice(&OPTION_REPLY_MAGIC.to_be_bytes());
    out.extend_from_slice(&option.to_be_bytes());
    out.extend_from_slice(&reply_type.to_be_bytes());
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(data);
    out
}

/// A transmission request header, as sent (payload of a write not included).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestHeader {
    pub flags: u16,
    pub command: u16,
    pub handle: u64,
    pub offset_bytes: u64,
    pub length_bytes: u32,
}

/// Decodes a request header; a wrong magic means the stream cannot be trusted.
pub fn decode_request_header(
    bytes: &[u8; REQUEST_HEADER_BYTES],
) -> Result<RequestHeader, WireError> {
    let magic = u32::from_be_bytes(bytes[0..4].try_into().expect("4 bytes"));
    if magic != REQUEST_MAGIC {
        return Err(WireError::BadMagic {
            found: magic as u64,
            expected: REQUEST_MAGIC as u64,
        });
    }
    Ok(RequestHeader {
        flags: u16::from_be_bytes(bytes[4..6].try_into().expect("2 bytes")),
        command: u16::from_be_bytes(bytes[6..8].try_into().expect("2 bytes")),
        handle: u64::from_be_bytes(bytes[8..16].try_into().expect("8 bytes")),
        offset_bytes: u64::from_be_bytes(bytes[16..24].try_into().expect("8 bytes")),
        length_bytes: u32::from_be_bytes(bytes[24..28].try_into().expect("4 bytes")),
    })
}

/// Encodes a request header (used by tests and hostile-client scripts).
pub fn encode_request_header(header: &RequestHeader) -> [u8; REQUEST_HEADER_BYTES] {
    let mut out = [0u8; REQUEST_HEADER_BYTES];
    out[0..4].copy_from_slice(&REQUEST_MAGIC.to_be_bytes());
    out[4..6].copy_from_slice(&header.flags.to_be_bytes());
    out[6..8].copy_from_slice(&header.command.to_be_bytes());
    out[8..16].copy_from_slice(&header.handle.to_be_bytes());
    out[16..24].copy_from_slice(&header.offset_bytes.to_be_bytes());
    out[24..28].copy_from_slice(&header.length_bytes.to_be_bytes());
    out
}

/// Encodes a simple reply header (read data, if any, follows it on the wire).
pub fn encode_simple_reply(handle: u64, error: u32) -> [u8; 16] {
    let mut out = [0u8; 16];
    out[0..4].copy_from_slice(&SIMPLE_REPLY_MAGIC.to_be_bytes());
    out[4..8].copy_from_slice(&error.to_be_bytes());
    out[8..16].copy_from_slice(&handle.to_be_bytes());
    out
}

/// A structured reply chunk header; `length_bytes` of payload follow it on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkHeader {
    pub flags: u16,
    pub reply_type: u16,
    pub handle: u64,
    pub length_bytes: u32,
}

/// Encodes a structured reply chunk header.
pub fn encode_chunk_header(header: &ChunkHeader) -> [u8; CHUNK_HEADER_BYTES] {
    let mut out = [0u8; CHUNK_HEADER_BYTES];
    out[0..4].copy_from_slice(&STRUCTURED_REPLY_MAGIC.to_be_bytes());
    out[4..6].copy_from_slice(&header.flags.to_be_bytes());
    out[6..8].copy_from_slice(&header.reply_type.to_be_bytes());
    out[8..16].copy_from_slice(&header.handle.to_be_bytes());
    out[16..20].copy_from_slice(&header.length_bytes.to_be_bytes());
    out
}

/// Decodes a structured reply chunk header (clients and tests read replies with it).
pub fn decode_chunk_header(bytes: &[u8; CHUNK_HEADER_BYTES]) -> Result<ChunkHeader, WireError> {
    let magic = be_u32(&bytes[0..4]);
    if magic != STRUCTURED_REPLY_MAGIC {
        return Err(WireError::BadMagic {
            found: magic as u64,
            expected: STRUCTURED_REPLY_MAGIC as u64,
        });
    }
    Ok(ChunkHeader {
        flags: u16::from_be_bytes([bytes[4], bytes[5]]),
        reply_type: u16::from_be_bytes([bytes[6], bytes[7]]),
        handle: u64::from_be_bytes(bytes[8..16].try_into().expect("8 bytes")),
        length_bytes: be_u32(&bytes[16..20]),
    })
}

/// Bytes before the data of a final `OFFSET_DATA` chunk: its header and the offset.
pub const OFFSET_DATA_HEAD_BYTES: usize = CHUNK_HEADER_BYTES + 8;
/// Most data one `OFFSET_DATA` chunk can carry (its length field counts the offset).
pub const MAX_OFFSET_DATA_BYTES: u32 = u32::MAX - 8;

/// Encodes what precedes `data_length_bytes` (at most [`MAX_OFFSET_DATA_BYTES`]) of
/// read data in a final `OFFSET_DATA` chunk; the data follows on the wire.
pub fn encode_offset_data_head(
    handle: u64,
    offset_bytes: u64,
    data_length_bytes: u32,
) -> [u8; OFFSET_DATA_HEAD_BYTES] {
    let header = ChunkHeader {
        flags: REPLY_FLAG_DONE,
        reply_type: REPLY_TYPE_OFFSET_DATA,
        handle,
        length_bytes: data_length_bytes + 8,
    };
    let mut out = [0u8; OFFSET_DATA_HEAD_BYTES];
    out[..CHUNK_HEADER_BYTES].copy_from_slice(&encode_chunk_header(&header));
    out[CHUNK_HEADER_BYTES..].copy_from_slice(&offset_bytes.to_be_bytes());
    out
}

/// Decodes an `OFFSET_DATA` payload into its offset and data.
pub fn decode_offset_data(payload: &[u8]) -> Result<(u64, &[u8]), WireError> {
    if payload.len() < 9 {
        return Err(WireError::BadLength {
            what: "OFFSET_DATA payload",
            length_bytes: payload.len(),
            rule: "must be at least 9 (an offset and one byte of data)",
        });
    }
    let offset_bytes = u64::from_be_bytes(payload[0..8].try_into().expect("8 bytes"));
    Ok((offset_bytes, &payload[8..]))
}

/// The payload of an error chunk (`ERROR`, or `ERROR_OFFSET` with its offset).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorPayload {
    pub error: u32,
    pub message: String,
    pub offset_bytes: Option<u64>,
}

/// Encodes an `ERROR` payload; `error` must be nonzero, and a message over the
/// protocol's 4,096-byte string limit is cut at a character boundary below it.
pub fn encode_error_payload(error: u32, message: &str) -> Vec<u8> {
    let mut end = message.len().min(MAX_STRING_BYTES);
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    let message = &message.as_bytes()[..end];
    let mut out = Vec::with_capacity(6 + message.len());
    out.extend_from_slice(&error.to_be_bytes());
    out.extend_from_slice(&(message.len() as u16).to_be_bytes());
    out.extend_from_slice(message);
    out
}

/// Decodes the payload of an `ERROR` or `ERROR_OFFSET` chunk, exactly: no byte may
/// be left over, the error must be nonzero and the message UTF-8.
pub fn decode_error_payload(reply_type: u16, payload: &[u8]) -> Result<ErrorPayload, WireError> {
    let tail_bytes = match reply_type {
        REPLY_TYPE_ERROR => 0,
        REPLY_TYPE_ERROR_OFFSET => 8,
        _ => {
            return Err(WireError::BadField {
                what: "error chunk type",
                rule: "must be ERROR or ERROR_OFFSET",
            })
        }
    };
    let bad_length = |rule| WireError::BadLength {
        what: "error chunk payload",
        length_bytes: payload.len(),
        rule,
    };
    if payload.len() < 6 + tail_bytes {
        return Err(bad_length("shorter than its fixed fields"));
    }
    let error = be_u32(&payload[0..4]);
    if error == 0 {
        return Err(WireError::BadField {
            what: "error chunk error value",
            rule: "must be nonzero",
        });
    }
    let message_bytes = u16::from_be_bytes([payload[4], payload[5]]) as usize;
    if payload.len() != 6 + message_bytes + tail_bytes {
        return Err(bad_length("does not match its message length"));
    }
    let message =
        std::str::from_utf8(&payload[6..6 + message_bytes]).map_err(|_| WireError::BadField {
            what: "error chunk message",
            rule: "must be UTF-8",
        })?;
    let offset_bytes = (tail_bytes == 8)
        .then(|| u64::from_be_bytes(payload[6 + message_bytes..].try_into().expect("8 bytes")));
    Ok(ErrorPayload {
        error,
        message: message.to_owned(),
        offset_bytes,
    })
}

/// One descriptor of a `BLOCK_STATUS` chunk: an extent's length and its status flags
/// (for `base:allocation`: [`STATE_HOLE`], [`STATE_ZERO`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockDescriptor {
    pub length_bytes: u32,
    pub flags: u32,
}

/// Encodes a `BLOCK_STATUS` payload: the context ID, then the descriptors.
pub fn encode_block_status_payload(context_id: u32, descriptors: &[BlockDescriptor]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + 8 * descriptors.len());
    out.extend_from_slice(&context_id.to_be_bytes());
    for descriptor in descriptors {
        out.extend_from_slice(&descriptor.length_bytes.to_be_bytes());
        out.extend_from_slice(&descriptor.flags.to_be_bytes());
    }
    out
}

/// Decodes a `BLOCK_STATUS` payload: 4 + 8 × n bytes with n ≥ 1, every extent of
/// nonzero length.
pub fn decode_block_status_payload(
    payload: &[u8],
) -> Result<(u32, Vec<BlockDescriptor>), WireError> {
    if payload.len() < 12 || !(payload.len() - 4).is_multiple_of(8) {
        return Err(WireError::BadLength {
            what: "BLOCK_STATUS payload",
            length_bytes: payload.len(),
            rule: "must be 4 plus a positive multiple of 8",
        });
    }
    let context_id = be_u32(&payload[0..4]);
    let mut descriptors = Vec::with_capacity((payload.len() - 4) / 8);
    for pair in payload[4..].chunks_exact(8) {
        let length_bytes = be_u32(&pair[0..4]);
        if length_bytes == 0 {
            return Err(WireError::BadField {
                what: "BLOCK_STATUS extent length",
                rule: "must be nonzero",
            });
        }
        descriptors.push(BlockDescriptor {
            length_bytes,
            flags: be_u32(&pair[4..8]),
        });
    }
    Ok((context_id, descriptors))
}

fn be_u32(bytes: &[u8]) -> u32 {
    u32::from_be_bytes(bytes.try_into().expect("4 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Round trip: every request header encodes and decodes to itself.
        #[test]
        fn request_header_round_trips(flags: u16, command: u16, handle: u64, offset_bytes: u64, length_bytes: u32) {
            let header = RequestHeader { flags, command, handle, offset_bytes, length_bytes };
            prop_assert_eq!(decode_request_header(&encode_request_header(&header)), Ok(header));
        }

        /// Arbitrary bytes never panic the decoders, and only the right magic passes.
        #[test]
        fn decoders_take_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 28)) {
            let request: [u8; 28] = bytes[..].try_into().unwrap();
            let option: [u8; 16] = bytes[..16].try_into().unwrap();
            prop_assert_eq!(decode_request_header(&request).is_ok(), bytes[0..4] == REQUEST_MAGIC.to_be_bytes());
            prop_assert_eq!(decode_option_header(&option).is_ok(), bytes[0..8] == OPTION_MAGIC.to_be_bytes());
        }

        /// Round trip: every chunk header encodes and decodes to itself, and only the
        /// structured magic decodes.
        #[test]
        fn chunk_header_round_trips(flags: u16, reply_type: u16, handle: u64, length_bytes: u32, magic: u32) {
            let header = ChunkHeader { flags, reply_type, handle, length_bytes };
            let mut bytes = encode_chunk_header(&header);
            prop_assert_eq!(decode_chunk_header(&bytes), Ok(header));
            bytes[0..4].copy_from_slice(&magic.to_be_bytes());
            prop_assert_eq!(decode_chunk_header(&bytes).is_ok(), magic == STRUCTURED_REPLY_MAGIC);
        }

        /// Round trip: an `OFFSET_DATA` head plus its data decodes to the offset and
        /// data, and the header's length counts the offset.
        #[test]
        fn offset_data_round_trips(handle: u64, offset_bytes: u64, data in proptest::collection::vec(any::<u8>(), 1..64)) {
            let head = encode_offset_data_head(handle, offset_bytes, data.len() as u32);
            let header = decode_chunk_header(head[..CHUNK_HEADER_BYTES].try_into().unwrap()).unwrap();
            prop_assert_eq!(header.flags, REPLY_FLAG_DONE);
            prop_assert_eq!(header.length_bytes as usize, 8 + data.len());
            let mut payload = head[CHUNK_HEADER_BYTES..].to_vec();
            payload.extend_from_slice(&data);
            prop_assert_eq!(decode_offset_data(&payload), Ok((offset_bytes, &data[..])));
        }

        /// Round trip: an error payload decodes to its error and message.
        #[test]
        fn error_payload_round_trips(error in 1u32.., message in ".{0,40}") {
            let decoded = decode_error_payload(REPLY_TYPE_ERROR, &encode_error_payload(error, &message));
            prop_assert_eq!(decoded, Ok(ErrorPayload { error, message, offset_bytes: None }));
        }

        /// Round trip: a block status payload decodes to its context and extents.
        #[test]
        fn block_status_round_trips(context_id: u32, extents in proptest::collection::vec((1u32.., any::<u32>()), 1..20)) {
            let descriptors: Vec<BlockDescriptor> = extents
                .iter()
                .map(|&(length_bytes, flags)| BlockDescriptor { length_bytes, flags })
                .collect();
            let payload = encode_block_status_payload(context_id, &descriptors);
            prop_assert_eq!(decode_block_status_payload(&payload), Ok((context_id, descriptors)));
        }

        /// Arbitrary payloads never panic the payload decoders.
        #[test]
        fn payload_decoders_take_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..64), reply_type: u16) {
            let _ = decode_offset_data(&bytes);
            let _ = decode_error_payload(reply_type, &bytes);
            let _ = decode_block_status_payload(&bytes);
        }
    }

    /// The decoders refuse malformed payloads and say which rule failed.
    #[test]
    fn decoders_name_what_they_refuse() {
        let refusal = |result: Result<(), WireError>| result.unwrap_err().to_string();
        assert_eq!(
            refusal(decode_offset_data(&[0; 8]).map(drop)),
            "OFFSET_DATA payload: 8 bytes, must be at least 9 (an offset and one byte of data)"
        );
        assert_eq!(
            refusal(decode_block_status_payload(&[0; 8]).map(drop)),
            "BLOCK_STATUS payload: 8 bytes, must be 4 plus a positive multiple of 8"
        );
        assert_eq!(
            refusal(decode_block_status_payload(&[0; 12]).map(drop)),
            "BLOCK_STATUS extent length: must be nonzero"
        );
        assert_eq!(
            refusal(decode_error_payload(REPLY_TYPE_ERROR, &[0; 6]).map(drop)),
            "error chunk error value: must be nonzero"
        );
        assert_eq!(
            refusal(decode_error_payload(REPLY_TYPE_ERROR, &[0, 0, 0, 5, 0, 3, b'a']).map(drop)),
            "error chunk payload: 7 bytes, does not match its message length"
        );
        assert_eq!(
            refusal(decode_error_payload(REPLY_TYPE_NONE, &[]).map(drop)),
            "error chunk type: must be ERROR or ERROR_OFFSET"
        );
        let mut with_offset = encode_error_payload(EIO, "at");
        with_offset.extend_from_slice(&4096u64.to_be_bytes());
        assert_eq!(
            decode_error_payload(REPLY_TYPE_ERROR_OFFSET, &with_offset)
                .unwrap()
                .offset_bytes,
            Some(4096)
        );
    }

    /// An over-long message is cut to the protocol's string limit, never mid-character.
    #[test]
    fn error_messages_are_cut_at_the_string_limit() {
        let message = "é".repeat(3000);
        let payload = encode_error_payload(EIO, &message);
        let decoded = decode_error_payload(REPLY_TYPE_ERROR, &payload).unwrap();
        assert_eq!(decoded.message.len(), MAX_STRING_BYTES);
    }
}
