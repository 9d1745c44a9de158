#![allow(dead_code)] // each test binary uses a subset of the helpers
//! A raw client for the scripted tests: requests built byte by byte, negotiation by
//! hand, replies read and checked field by field.

use proptest::prelude::*;
use spinstack_nbd::wire::*;
use spinstack_nbd::{start, Address, Backend, Command, Reply, ServerConfig, ServerHandle};
use std::io::{Cursor, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::Arc;

pub fn request(
    command: u16,
    flags: u16,
    handle: u64,
    offset_bytes: u64,
    length_bytes: u32,
) -> Vec<u8> {
    encode_request_header(&RequestHeader {
        flags,
        command,
        handle,
        offset_bytes,
        length_bytes,
    })
    .to_vec()
}

pub fn read_n(stream: &mut UnixStream, n: usize) -> Vec<u8> {
    let mut buf = vec![0u8; n];
    stream.read_exact(&mut buf).unwrap();
    buf
}

/// Starts a server for `backend` on a fresh Unix socket in a directory named after
/// `name`; returns the server and the socket's path.
pub fn serve_unix(
    name: &str,
    backend: Arc<dyn Backend>,
    config: ServerConfig,
) -> (ServerHandle, PathBuf) {
    let dir = std::env::temp_dir().join(format!("spinstack-nbd-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("s.sock");
    let handle = start(&Address::Unix(path.clone()), backend, config).unwrap();
    (handle, path)
}

/// Connects and negotiates with `GO` on the default export.
pub fn connect_go(path: &std::path::Path) -> UnixStream {
    let mut stream = greeted(path);
    send_option(&mut stream, OPT_GO, &[0, 0, 0, 0, 0, 0]);
    loop {
        let (reply_type, _) = option_reply(&mut stream);
        if reply_type == REP_ACK {
            return stream;
        }
        assert_eq!(reply_type, REP_INFO);
    }
}

pub fn send_option(stream: &mut UnixStream, option: u32, data: &[u8]) {
    let mut bytes = OPTION_MAGIC.to_be_bytes().to_vec();
    bytes.extend_from_slice(&option.to_be_bytes());
    bytes.extend_from_slice(&(data.len() as u32).to_be_bytes());
    bytes.extend_from_slice(data);
    stream.write_all(&bytes).unwrap();
}

pub fn option_reply(stream: &mut UnixStream) -> (u32, Vec<u8>) {
    let header = read_n(stream, 20);
    assert_eq!(&header[0..8], &OPTION_REPLY_MAGIC.to_be_bytes());
    let reply_type = u32::from_be_bytes(header[12..16].try_into().unwrap());
    let length = u32::from_be_bytes(header[16..20].try_into().unwrap());
    (reply_type, read_n(stream, length as usize))
}

pub fn simple_reply(stream: &mut UnixStream) -> (u32, u64) {
    let reply = read_n(stream, 16);
    assert_eq!(&reply[0..4], &SIMPLE_REPLY_MAGIC.to_be_bytes());
    (
        u32::from_be_bytes(reply[4..8].try_into().unwrap()),
        u64::from_be_bytes(reply[8..16].try_into().unwrap()),
    )
}

pub fn closed(stream: &mut UnixStream) -> bool {
    let mut byte = [0u8; 1];
    matches!(stream.read(&mut byte), Ok(0) | Err(_))
}

/// Connects, reads the greeting and sends the client flags (fixed newstyle, no
/// zeroes): ready for options.
pub fn greeted(path: &std::path::Path) -> UnixStream {
    let mut stream = UnixStream::connect(path).unwrap();
    let greeting = read_n(&mut stream, 18);
    assert_eq!(&greeting[0..8], &INIT_MAGIC.to_be_bytes());
    stream
        .write_all(&(CLIENT_FIXED_NEWSTYLE | CLIENT_NO_ZEROES).to_be_bytes())
        .unwrap();
    stream
}

/// `GO` on the default export; returns the transmission flags it reported.
pub fn go(stream: &mut UnixStream) -> u16 {
    send_option(stream, OPT_GO, &[0, 0, 0, 0, 0, 0]);
    let mut flags = None;
    loop {
        let (reply_type, data) = option_reply(stream);
        if reply_type == REP_ACK {
            return flags.expect("GO sent INFO_EXPORT");
        }
        assert_eq!(reply_type, REP_INFO, "GO refused");
        if data[0..2] == INFO_EXPORT.to_be_bytes() {
            flags = Some(u16::from_be_bytes([data[10], data[11]]));
        }
    }
}

/// Connects with structured replies and, when `queries` is given, a
/// `SET_META_CONTEXT` with them; returns the stream and the transmission flags.
pub fn connect_structured(path: &std::path::Path, queries: Option<&[&[u8]]>) -> (UnixStream, u16) {
    let mut stream = greeted(path);
    send_option(&mut stream, OPT_STRUCTURED_REPLY, &[]);
    assert_eq!(option_reply(&mut stream).0, REP_ACK);
    if let Some(queries) = queries {
        let data = spinstack_nbd::meta_context::encode_meta_context_request(b"", queries);
        send_option(&mut stream, OPT_SET_META_CONTEXT, &data);
        while option_reply(&mut stream).0 != REP_ACK {}
    }
    let flags = go(&mut stream);
    (stream, flags)
}

/// Reads one structured reply chunk: its header and payload.
pub fn chunk(stream: &mut UnixStream) -> (ChunkHeader, Vec<u8>) {
    let header: [u8; CHUNK_HEADER_BYTES] = read_n(stream, CHUNK_HEADER_BYTES).try_into().unwrap();
    let header = decode_chunk_header(&header).expect("a structured reply chunk");
    let payload = read_n(stream, header.length_bytes as usize);
    (header, payload)
}

/// In-memory two-way stream for negotiation.
pub struct Duplex {
    pub input: Cursor<Vec<u8>>,
    pub output: Vec<u8>,
}
impl Read for Duplex {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.input.read(buf)
    }
}
impl Write for Duplex {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.output.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Reads bytes off a reply stream; a short read is a desynchronised stream.
pub struct Replies<'a> {
    pub bytes: &'a [u8],
    pub at: usize,
}
impl<'a> Replies<'a> {
    pub fn take(&mut self, length: usize) -> Result<&'a [u8], TestCaseError> {
        let end = self.at + length;
        prop_assert!(
            end <= self.bytes.len(),
            "reply stream ends early at {}",
            self.at
        );
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }
    pub fn u32(&mut self) -> Result<u32, TestCaseError> {
        Ok(u32::from_be_bytes(self.take(4)?.try_into().unwrap()))
    }
}

/// Carries out a read or a write on `data` (an in-memory export) and answers it;
/// hands any other command back, with its reply, for the caller to answer.
pub fn read_or_write(data: &mut [u8], command: Command, reply: Reply) -> Option<(Command, Reply)> {
    match command {
        Command::Read {
            offset_bytes,
            length_bytes,
        } => {
            let start = offset_bytes as usize;
            reply.data(&data[start..start + length_bytes as usize]);
            None
        }
        Command::Write {
            offset_bytes,
            data: bytes,
            ..
        } => {
            let start = offset_bytes as usize;
            data[start..start + bytes.len()].copy_from_slice(&bytes);
            reply.ok();
            None
        }
        other => Some((other, reply)),
    }
}
