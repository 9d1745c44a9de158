//! A minimal synchronous NBD client for tests: fixed newstyle `GO`, then one request
//! at a time. Written from the protocol, independent of the server's own code, so a
//! test with it checks the server against the protocol and not against itself.

use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;

pub struct NbdClient {
    stream: UnixStream,
    pub size_bytes: u64,
    next_handle: u64,
}

fn be_u32(bytes: &[u8]) -> u32 {
    u32::from_be_bytes(bytes.try_into().unwrap())
}
fn be_u64(bytes: &[u8]) -> u64 {
    u64::from_be_bytes(bytes.try_into().unwrap())
}

impl NbdClient {
    pub fn connect(socket: &Path) -> io::Result<NbdClient> {
        let mut stream = UnixStream::connect(socket)?;
        let mut greeting = [0u8; 18];
        stream.read_exact(&mut greeting)?;
        if &greeting[0..8] != b"NBDMAGIC" || &greeting[8..16] != b"IHAVEOPT" {
            return Err(io::Error::other("not an NBD newstyle server"));
        }
        stream.write_all(&3u32.to_be_bytes())?; // fixed newstyle, no zeroes
        let mut option = b"IHAVEOPT".to_vec();
        option.extend_from_slice(&7u32.to_be_bytes()); // GO
        option.extend_from_slice(&6u32.to_be_bytes());
        option.extend_from_slice(&[0, 0, 0, 0, 0, 0]); // default export, no info requests
        stream.write_all(&option)?;
        let mut size_bytes = None;
        loop {
            let mut header = [0u8; 20];
            stream.read_exact(&mut header)?;
            let reply_type = be_u32(&header[12..16]);
            let mut data = vec![0u8; be_u32(&header[16..20]) as usize];
            stream.read_exact(&mut data)?;
            match reply_type {
                1 => break,
                3 if data.len() >= 12 && data[0..2] == [0, 0] => {
                    size_bytes = Some(be_u64(&data[2..10]))
                }
                3 => {}
                other => return Err(io::Error::other(format!("GO refused: reply {other:#x}"))),
            }
        }
        Ok(NbdClient {
            stream,
            size_bytes: size_bytes.ok_or_else(|| io::Error::other("no export size"))?,
            next_handle: 1,
        })
    }

    fn request(
        &mut self,
        command: u16,
        flags: u16,
        offset: u64,
        length: u32,
        payload: &[u8],
    ) -> io::Result<()> {
        let handle = self.next_handle;
        self.next_handle += 1;
        let mut bytes = Vec::with_capacity(28 + payload.len());
        bytes.extend_from_slice(&0x2560_9513u32.to_be_bytes());
        bytes.extend_from_slice(&flags.to_be_bytes());
        bytes.extend_from_slice(&command.to_be_bytes());
        bytes.extend_from_slice(&handle.to_be_bytes());
        bytes.extend_from_slice(&offset.to_be_bytes());
        bytes.extend_from_slice(&length.to_be_bytes());
        bytes.extend_from_slice(payload);
        self.stream.write_all(&bytes)?;
        let mut reply = [0u8; 16];
        self.stream.read_exact(&mut reply)?;
        if be_u32(&reply[0..4]) != 0x6744_6698 || be_u64(&reply[8..16]) != handle {
            return Err(io::Error::other("bad reply"));
        }
        match be_u32(&reply[4..8]) {
            0 => Ok(()),
            errno => Err(io::Error::other(format!("server error {errno}"))),
        }
    }

    pub fn write(&mut self, offset: u64, data: &[u8]) -> io::Result<()> {
        self.request(1, 0, offset, data.len() as u32, data)
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.request(3, 0, 0, 0, &[])
    }

    pub fn read(&mut self, offset: u64, length: u32) -> io::Result<Vec<u8>> {
        self.request(0, 0, offset, length, &[])?;
        let mut data = vec![0u8; length as usize];
        self.stream.read_exact(&mut data)?;
        Ok(data)
    }

    /// Gives up on a reply after `timeout` (reads then fail with `WouldBlock`).
    pub fn set_read_timeout(&self, timeout: std::time::Duration) -> io::Result<()> {
        self.stream.set_read_timeout(Some(timeout))
    }

    /// Sends reads of `length` bytes at `offset` without waiting for their replies
    /// (a client that pipelines and then stops reading).
    pub fn send_reads(&mut self, count: u32, offset: u64, length: u32) -> io::Result<()> {
        let mut bytes = Vec::with_capacity(28 * count as usize);
        for _ in 0..count {
            bytes.extend_from_slice(&0x2560_9513u32.to_be_bytes());
            bytes.extend_from_slice(&0u16.to_be_bytes()); // flags
            bytes.extend_from_slice(&0u16.to_be_bytes()); // READ
            bytes.extend_from_slice(&self.next_handle.to_be_bytes());
            bytes.extend_from_slice(&offset.to_be_bytes());
            bytes.extend_from_slice(&length.to_be_bytes());
            self.next_handle += 1;
        }
        self.stream.write_all(&bytes)
    }
}
