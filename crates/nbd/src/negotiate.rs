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
//! | Options    | `STRUCTURED_REPLY` without data          | Options (`ACK`; structured replies on, a repeat is acknowledged again) |
//! | Options    | `STRUCTURED_REPLY` with data             | Options (`REP_ERR_INVALID`, nothing changes) |
//! | Options    | `LIST_META_CONTEXT`, `SET_META_CONTEXT`  | Options (see below)         |
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
//!
//! A repeated `STRUCTURED_REPLY` is acknowledged, not refused (the protocol allows
//! either): after a refusal a client could believe structured replies off while they
//! are on, and read the transmission phase wrongly.
//!
//! Meta contexts (the queries are in [`crate::meta_context`]): before structured
//! replies both options are refused `REP_ERR_INVALID`, as are malformed data; an
//! unknown export gets `REP_ERR_UNKNOWN`. A `SET_META_CONTEXT` clears the
//! selection first, so a refused one leaves none, as the protocol says.
//!
//! `GO`, `INFO` and `EXPORT_NAME` send the export's transmission flags, plus
//! `SEND_DF` once structured replies are negotiated (the protocol forbids it before;
//! see [`transmission`](crate::transmission) for why the server can honour it).

use crate::meta_context::{self, BASE_ALLOCATION, BASE_ALLOCATION_ID};
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

/// What a connection negotiated, in force for its transmission phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Negotiated {
    /// The transmission flags the client was sent.
    pub transmission_flags: u16,
    /// Replies are structured (`STRUCTURED_REPLY` was acknowledged).
    pub structured_replies: bool,
    /// The ID of `base:allocation` when the last `SET_META_CONTEXT` selected it;
    /// `BLOCK_STATUS` is allowed only then.
    pub base_allocation: Option<u32>,
}

impl Negotiated {
    /// A connection with nothing negotiated beyond the export: simple replies.
    pub fn simple(transmission_flags: u16) -> Negotiated {
        Negotiated {
            transmission_flags,
            structured_replies: false,
            base_allocation: None,
        }
    }
}

/// How negotiation ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Go to transmission with what was negotiated.
    Transmission(Negotiated),
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
    let mut state = State {
        no_zeroes: client_flags & CLIENT_NO_ZEROES != 0,
        structured_replies: false,
        base_allocation: None,
    };

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
        if let Some(outcome) = answer_option(stream, export, header.option, &data, &mut state)? {
            return Ok(outcome);
        }
    }
    Ok(Outcome::Closed(format!(
        "more than {MAX_OPTIONS} options without choosing an export"
    )))
}

/// What the options so far have set.
struct State {
    no_zeroes: bool,
    structured_replies: bool,
    base_allocation: Option<u32>,
}

impl State {
    /// The transmission flags a `GO`, `INFO` or `EXPORT_NAME` now sends.
    fn transmission_flags(&self, export: &ExportInfo) -> u16 {
        if self.structured_replies {
            export.transmission_flags | FLAG_SEND_DF
        } else {
            export.transmission_flags
        }
    }
    fn negotiated(&self, export: &ExportInfo) -> Negotiated {
        Negotiated {
            transmission_flags: self.transmission_flags(export),
            structured_replies: self.structured_replies,
            base_allocation: self.base_allocation,
        }
    }
}

/// Answers one option; `Some` when negotiation ends with it.
fn answer_option<S: Write>(
    stream: &mut S,
    export: &ExportInfo,
    option: u32,
    data: &[u8],
    state: &mut State,
) -> io::Result<Option<Outcome>> {
    let reply = |stream: &mut S, reply_type: u32, body: &[u8]| -> io::Result<()> {
        stream.write_all(&encode_option_reply(option, reply_type, body))
    };
    let outcome = match option {
        OPT_EXPORT_NAME => Some(answer_export_name(stream, export, state, data)?),
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
        OPT_INFO | OPT_GO => answer_info(stream, export, state, option, data)?,
        OPT_STRUCTURED_REPLY if !data.is_empty() => {
            reply(stream, REP_ERR_INVALID, b"STRUCTURED_REPLY takes no data")?;
            None
        }
        OPT_STRUCTURED_REPLY => {
            state.structured_replies = true;
            reply(stream, REP_ACK, &[])?;
            None
        }
        OPT_LIST_META_CONTEXT | OPT_SET_META_CONTEXT => {
            answer_meta_context(stream, export, state, option, data)?;
            None
        }
        OPT_STARTTLS => {
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

/// Answers `EXPORT_NAME`, which has no error reply: an unknown export closes.
fn answer_export_name<S: Write>(
    stream: &mut S,
    export: &ExportInfo,
    state: &State,
    data: &[u8],
) -> io::Result<Outcome> {
    let name = String::from_utf8_lossy(data);
    if !knows(export, &name) {
        return Ok(Outcome::Closed(format!(
            "EXPORT_NAME asked for unknown export {name:?}"
        )));
    }
    let mut out = Vec::with_capacity(134);
    out.extend_from_slice(&export.size_bytes.to_be_bytes());
    out.extend_from_slice(&state.transmission_flags(export).to_be_bytes());
    if !state.no_zeroes {
        out.extend_from_slice(&[0u8; 124]);
    }
    stream.write_all(&out)?;
    Ok(Outcome::Transmission(state.negotiated(export)))
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
    state: &State,
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
    info.extend_from_slice(&state.transmission_flags(export).to_be_bytes());
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
    Ok((option == OPT_GO).then(|| Outcome::Transmission(state.negotiated(export))))
}

/// Answers `LIST_META_CONTEXT` or `SET_META_CONTEXT` (see the module doc).
fn answer_meta_context<S: Write>(
    stream: &mut S,
    export: &ExportInfo,
    state: &mut State,
    option: u32,
    data: &[u8],
) -> io::Result<()> {
    let reply = |stream: &mut S, reply_type: u32, body: &[u8]| -> io::Result<()> {
        stream.write_all(&encode_option_reply(option, reply_type, body))
    };
    let set = option == OPT_SET_META_CONTEXT;
    if set {
        // The protocol: a SET replaces the selection even when it fails.
        state.base_allocation = None;
    }
    if !state.structured_replies {
        return reply(stream, REP_ERR_INVALID, b"negotiate STRUCTURED_REPLY first");
    }
    let request = match meta_context::decode_meta_context_request(data) {
        Ok(request) => request,
        Err(error) => return reply(stream, REP_ERR_INVALID, error.to_string().as_bytes()),
    };
    if !knows(export, &String::from_utf8_lossy(request.export_name)) {
        return reply(stream, REP_ERR_UNKNOWN, b"no such export");
    }
    let found = if set {
        meta_context::set_selects_base_allocation(&request.queries)
    } else {
        meta_context::list_finds_base_allocation(&request.queries)
    };
    if found {
        // LIST replies carry the reserved ID zero; SET gives the context its ID.
        let id = if set { BASE_ALLOCATION_ID } else { 0 };
        let mut body = id.to_be_bytes().to_vec();
        body.extend_from_slice(BASE_ALLOCATION.as_bytes());
        reply(stream, REP_META_CONTEXT, &body)?;
        if set {
            state.base_allocation = Some(id);
        }
    }
    reply(stream, REP_ACK, &[])
}

fn knows(export: &ExportInfo, name: &str) -> bool {
    name.is_empty() || name == export.name
}
