//! The handshake: fixed newstyle negotiation up to the transmission phase.
//!
//! States (one connection):
//!
//! | state      | event                                   | next                        |
//! |------------|-----------------------------------------|-----------------------------|
//! | Greeting   | server sends magic + handshake flags     | ClientFlags                 |
//! | ClientFlags| known flags                             | Options                     |
//! | ClientFlags| unknown flag bits                       | Closed (protocol says drop) |
//! | Options    | `LIST`, `INFO`, unsupported option       | Options (after its replies) |
//! | Options    | data over 16 KiB, up to 1 MiB (not `EXPORT_NAME`) | Options (data skipped, `REP_ERR_TOO_BIG`) |
//! | Options    | `GO` on a known export                   | Transmission                |
//! | Options    | `EXPORT_NAME` on a known export          | Transmission                |
//! | Options    | `EXPORT_NAME` on an unknown export       | Closed (no reply exists)    |
//! | Options    | `ABORT`                                  | Closed (after an ACK)       |
//! | Options    | bad magic, data over 1 MiB (`EXPORT_NAME`: over 16 KiB), too many options, EOF, deadline | Closed |
//!
//! Errors of the client's making that the protocol can express (an unknown export in
//! `GO`, a malformed `INFO`) are answered with the matching `REP_ERR_*` and the
//! negotiation continues, so clients can fall back.

use crate::wire::*;
use std::io::{self, Read, Write};

/// What the server offers in negotiation.
#[derive(Clone, Debug)]
pub struct ExportInfo {
    /// The export's name; the empty name (the default export) is accepted too.
    pub name: String,
    pub description: String,
    pub size_bytes: u64,
    pub transmission_flags: u16,
    pub preferred_block_bytes: u32,
    pub max_block_bytes: u32,
}

/// Longest option payload read and answered (the protocol's strings are at most
/// 4,096 bytes, so no honest option comes near this); a longer one is skipped and
/// answered `REP_ERR_TOO_BIG`.
pub const MAX_OPTION_BYTES: u32 = 16 * 1024;
/// Longest option payload skipped; a longer one closes the connection. Skipping
/// costs no memory, but gigabytes of it only tie up a connection slot, and the
/// protocol lets a server drop what it considers a denial of service.
pub const MAX_DISCARDED_OPTION_BYTES: u32 = 1024 * 1024;
/// Options one connection may send before it must choose an export.
pub const MAX_OPTIONS: usize = 256;

/// How negotiation ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Go to transmission.
    Transmission,
    /// The client aborted or the connection must be closed; the reason is for logs.
    Closed(String),
}

/// Runs negotiation on `stream` to its end. I/O errors are returned; protocol
/// violations end in `Outcome::Closed`.
pub fn negotiate<S: Read + Write>(stream: &mut S, export: &ExportInfo) -> io::Result<Outcome> {
    let mut greeting = Vec::with_capacity(18);
    greeting.extend_from_slice(&INIT_MAGIC.to_be_bytes());
    greeting.extend_from_slice(&OPTION_MAGIC.to_be_bytes());
    greeting.extend_from_slice(&(HANDSHAKE_FIXED_NEWSTYLE | HANDSHAKE_NO_ZEROES).to_be_bytes());
    stream.write_all(&greeting)?;
    stream.flush()?;

    let mut flags = [0u8; 4];
    stream.read_exact(&mut flags)?;
    let client_flags = u32::from_be_bytes(flags);
    if client_flags & !(CLIENT_FIXED_NEWSTYLE | CLIENT_NO_ZEROES) != 0 {
        return Ok(Outcome::Closed(format!(
            "client sent unknown flags {client_flags:#x}"
        )));
    }
    let no_zeroes = client_flags & CLIENT_NO_ZEROES != 0;

    for _ in 0..MAX_OPTIONS {
        let mut header = [0u8; OPTION_HEADER_BYTES];
        stream.read_exact(&mut header)?;
        let header = match decode_option_header(&header) {
            Ok(header) => header,
            Err(error) => return Ok(Outcome::Closed(format!("option header: {error}"))),
        };
        // `EXPORT_NAME` has no error reply, and no export has so long a name.
        let unanswerable =
            header.option == OPT_EXPORT_NAME && header.length_bytes > MAX_OPTION_BYTES;
        if header.length_bytes > MAX_DISCARDED_OPTION_BYTES || unanswerable {
            return Ok(Outcome::Closed(format!(
                "option {} carries {} bytes, over the limit of {MAX_DISCARDED_OPTION_BYTES}",
                header.option, header.length_bytes
            )));
        }
        if header.length_bytes > MAX_OPTION_BYTES {
            // Skip the data without keeping it, so the stream stays in step and the
            // client learns why; the negotiation deadline bounds the time this takes.
            let length = header.length_bytes as u64;
            let skipped = io::copy(&mut (&mut *stream).take(length), &mut io::sink())?;
            if skipped < length {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            stream.write_all(&encode_option_reply(
                header.option,
                REP_ERR_TOO_BIG,
                b"option data over 16 KiB",
            ))?;
            stream.flush()?;
            continue;
        }
        let mut data = vec![0u8; header.length_bytes as usize];
        stream.read_exact(&mut data)?;
        if let Some(outcome) = answer_option(stream, export, header.option, &data, no_zeroes)? {
            return Ok(outcome);
        }
    }
    Ok(Outcome::Closed(format!(
        "more than {MAX_OPTIONS} options without choosing an export"
    )))
}

/// Answers one option; `Some` when negotiation ends with it.
fn answer_option<S: Write>(
    stream: &mut S,
    export: &ExportInfo,
    option: u32,
    data: &[u8],
    no_zeroes: bool,
) -> io::Result<Option<Outcome>> {
    let reply = |stream: &mut S, reply_type: u32, body: &[u8]| -> io::Result<()> {
        stream.write_all(&encode_option_reply(option, reply_type, body))
    };
    let outcome = match option {
        OPT_EXPORT_NAME => {
            let name = String::from_utf8_lossy(data);
            if !knows(export, &name) {
                return Ok(Some(Outcome::Closed(format!(
                    "EXPORT_NAME asked for unknown export {name:?}"
                ))));
            }
            let mut out = Vec::with_capacity(134);
            out.extend_from_slice(&export.size_bytes.to_be_bytes());
            out.extend_from_slice(&export.transmission_flags.to_be_bytes());
            if !no_zeroes {
                out.extend_from_slice(&[0u8; 124]);
            }
            stream.write_all(&out)?;
            Some(Outcome::Transmission)
        }
        OPT_ABORT => {
            reply(stream, REP_ACK, &[])?;
            Some(Outcome::Closed("client aborted".into()))
        }
        OPT_LIST if !data.is_empty() => {
            reply(stream, REP_ERR_INVALID, b"LIST takes no data")?;
            None
        }
        OPT_LIST => {
            let mut body = Vec::new();
            body.extend_from_slice(&(export.name.len() as u32).to_be_bytes());
            body.extend_from_slice(export.name.as_bytes());
            body.extend_from_slice(export.description.as_bytes());
            reply(stream, REP_SERVER, &body)?;
            reply(stream, REP_ACK, &[])?;
            None
        }
        OPT_INFO | OPT_GO => answer_info(stream, export, option, data)?,
        OPT_STRUCTURED_REPLY | OPT_STARTTLS => {
            reply(stream, REP_ERR_UNSUP, b"not supported by this server")?;
            None
        }
        _ => {
            reply(stream, REP_ERR_UNSUP, b"unknown option")?;
            None
        }
    };
    stream.flush()?;
    Ok(outcome)
}

/// The parts of an `INFO` or `GO` request.
struct InfoRequest<'a> {
    name: &'a [u8],
    requests: Vec<u16>,
}

/// Parses `u32 name length, name, u16 count, count × u16`; exact length required.
fn parse_info(data: &[u8]) -> Option<InfoRequest<'_>> {
    let name_length = u32::from_be_bytes(data.get(0..4)?.try_into().ok()?) as usize;
    let name_end = 4usize.checked_add(name_length)?;
    let name = data.get(4..name_end)?;
    let count_bytes = data.get(name_end..name_end.checked_add(2)?)?;
    let count = u16::from_be_bytes(count_bytes.try_into().ok()?) as usize;
    let list = data.get(name_end + 2..)?;
    if list.len() != count * 2 {
        return None;
    }
    let requests = list
        .chunks_exact(2)
        .map(|pair| u16::from_be_bytes([pair[0], pair[1]]))
        .collect();
    Some(InfoRequest { name, requests })
}

fn answer_info<S: Write>(
    stream: &mut S,
    export: &ExportInfo,
    option: u32,
    data: &[u8],
) -> io::Result<Option<Outcome>> {
    let reply = |stream: &mut S, reply_type: u32, body: &[u8]| -> io::Result<()> {
        stream.write_all(&encode_option_reply(option, reply_type, body))
    };
    let Some(request) = parse_info(data) else {
        reply(stream, REP_ERR_INVALID, b"malformed INFO/GO request")?;
        return Ok(None);
    };
    let name = String::from_utf8_lossy(request.name);
    if !knows(export, &name) {
        reply(stream, REP_ERR_UNKNOWN, b"no such export")?;
        return Ok(None);
    }
    let mut info = Vec::with_capacity(12);
    info.extend_from_slice(&INFO_EXPORT.to_be_bytes());
    info.extend_from_slice(&export.size_bytes.to_be_bytes());
    info.extend_from_slice(&export.transmission_flags.to_be_bytes());
    reply(stream, REP_INFO, &info)?;
    for &wanted in &request.requests {
        match wanted {
            INFO_BLOCK_SIZE => {
                let mut body = Vec::with_capacity(14);
                body.extend_from_slice(&INFO_BLOCK_SIZE.to_be_bytes());
                body.extend_from_slice(&1u32.to_be_bytes());
                body.extend_from_slice(&export.preferred_block_bytes.to_be_bytes());
                body.extend_from_slice(&export.max_block_bytes.to_be_bytes());
                reply(stream, REP_INFO, &body)?;
            }
            INFO_NAME => {
                let mut body = INFO_NAME.to_be_bytes().to_vec();
                body.extend_from_slice(export.name.as_bytes());
                reply(stream, REP_INFO, &body)?;
            }
            INFO_DESCRIPTION => {
                let mut body = INFO_DESCRIPTION.to_be_bytes().to_vec();
                body.extend_from_slice(export.description.as_bytes());
                reply(stream, REP_INFO, &body)?;
            }
            // Unknown information requests are ignored, as the protocol asks.
            _ => {}
        }
    }
    reply(stream, REP_ACK, &[])?;
    Ok((option == OPT_GO).then_some(Outcome::Transmission))
}

fn knows(export: &ExportInfo, name: &str) -> bool {
    name.is_empty() || name == export.name
}
