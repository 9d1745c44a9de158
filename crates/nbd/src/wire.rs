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

/// Option reply types.
pub const REP_ACK: u32 = 1;
pub const REP_SERVER: u32 = 2;
pub const REP_INFO: u32 = 3;
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
pub const FLAG_CAN_MULTI_CONN: u16 = 1 << 8;

/// Commands.
pub const CMD_READ: u16 = 0;
pub const CMD_WRITE: u16 = 1;
pub const CMD_DISC: u16 = 2;
pub const CMD_FLUSH: u16 = 3;
pub const CMD_TRIM: u16 = 4;
pub const CMD_WRITE_ZEROES: u16 = 6;

/// Command flags.
pub const CMD_FLAG_FUA: u16 = 1 << 0;
pub const CMD_FLAG_NO_HOLE: u16 = 1 << 1;

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

/// A client option header: which option and how many data bytes follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptionHeader {
    pub option: u32,
    pub length_bytes: u32,
}

/// Why a fixed-size header could not be decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("bad magic {found:#x} (expected {expected:#x})")]
    BadMagic { found: u64, expected: u64 },
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
    }
}
