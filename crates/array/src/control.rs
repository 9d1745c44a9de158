//! The control protocol between a server holding an array open and its clients (the
//! CLI): one JSON request per line on the Unix socket `DIR/control.sock`, one JSON
//! response per line back.
//!
//! Requests (`serde` externally tagged): `"Status"`, `{"Fail":{"member":K}}`,
//! `{"Rebuild":{"member":K}}`, `{"Scrub":{"repair":true}}`. Responses:
//! `{"Ok":VALUE}` (the value the operation returns, e.g. an `ArrayStatus`) or
//! `{"Error":"message"}`.

use crate::error::ArrayError;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

/// A request to the server holding the array.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ControlRequest {
    Status,
    Fail {
        member: u32,
    },
    /// Start a rebuild of failed `member`; the server runs it in the background.
    Rebuild {
        member: u32,
    },
    Scrub {
        repair: bool,
    },
}

/// The server's answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ControlResponse {
    Ok(serde_json::Value),
    Error(String),
}

/// The longest response line a client reads (a scrub report is far shorter).
pub const MAX_RESPONSE_BYTES: u64 = 1 << 20;

/// `DIR/control.sock`.
pub fn socket_path(dir: &Path) -> PathBuf {
    dir.join("control.sock")
}

/// Sends `request` to the server of `dir`. `Ok(None)` when no server listens (no
/// socket, or a stale one: connection refused); the server's error as
/// [`ArrayError::Control`].
pub fn send(dir: &Path, request: &ControlRequest) -> Result<Option<serde_json::Value>, ArrayError> {
    let socket = socket_path(dir);
    let control = |problem: String| ArrayError::Control {
        socket: socket.clone(),
        problem,
    };
    let stream = match UnixStream::connect(&socket) {
        Ok(stream) => stream,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
            ) =>
        {
            return Ok(None)
        }
        Err(e) => return Err(control(format!("cannot connect: {e}"))),
    };
    let mut line = serde_json::to_string(request).map_err(|e| control(e.to_string()))?;
    line.push('\n');
    (&stream)
        .write_all(line.as_bytes())
        .map_err(|e| control(format!("cannot send: {e}")))?;
    let mut reply = String::new();
    let mut reader = BufReader::new(std::io::Read::take(&stream, MAX_RESPONSE_BYTES));
    reader
        .read_line(&mut reply)
        .map_err(|e| control(format!("cannot read the reply: {e}")))?;
    if reply.trim().is_empty() {
        return Err(control(
            "the server closed the connection without a reply".into(),
        ));
    }
    match serde_json::from_str::<ControlResponse>(reply.trim()) {
        Ok(ControlResponse::Ok(value)) => Ok(Some(value)),
        Ok(ControlResponse::Error(message)) => Err(control(message)),
        Err(e) => Err(control(format!(
            "unreadable reply ({e}): {:?}",
            reply.trim()
        ))),
    }
}

/// Parses one request line (for the server); the error text is what to send back.
pub fn parse_request(line: &str) -> Result<ControlRequest, String> {
    serde_json::from_str(line.trim()).map_err(|e| format!("bad request {:?}: {e}", line.trim()))
}

/// One response line, newline included (for the server).
pub fn response_line(response: &ControlResponse) -> String {
    let mut line = serde_json::to_string(response).unwrap_or_else(|e| {
        format!(
            "{{\"Error\":\"cannot encode the response: {}\"}}",
            e.to_string().replace('"', "'")
        )
    });
    line.push('\n');
    line
}
