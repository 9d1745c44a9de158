//! The accepted socket of one connection (Unix or TCP) and the readers and writers
//! wrapped around it: polling before sleeping in transmission, and one deadline for
//! the whole of negotiation.

use std::io;
use std::net::{Shutdown, TcpStream};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// One accepted stream of either kind.
pub(crate) enum Stream {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Stream {
    pub fn try_clone(&self) -> io::Result<Stream> {
        Ok(match self {
            Stream::Unix(stream) => Stream::Unix(stream.try_clone()?),
            Stream::Tcp(stream) => Stream::Tcp(stream.try_clone()?),
        })
    }
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Unix(stream) => stream.set_read_timeout(timeout),
            Stream::Tcp(stream) => stream.set_read_timeout(timeout),
        }
    }
    pub fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Unix(stream) => stream.set_write_timeout(timeout),
            Stream::Tcp(stream) => stream.set_write_timeout(timeout),
        }
    }
    pub fn shutdown(&self) {
        // Already closed by the peer is fine.
        let _ = match self {
            Stream::Unix(stream) => stream.shutdown(Shutdown::Both),
            Stream::Tcp(stream) => stream.shutdown(Shutdown::Both),
        };
    }
}

impl std::os::fd::AsRawFd for Stream {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        match self {
            Stream::Unix(stream) => stream.as_raw_fd(),
            Stream::Tcp(stream) => stream.as_raw_fd(),
        }
    }
}

/// Reads that poll (non-blocking receives) for a while before blocking; see
/// [`ServerConfig::poll_before_sleep`](crate::ServerConfig::poll_before_sleep).
pub(crate) struct PollingReader {
    pub stream: Stream,
    pub poll: Duration,
}

impl io::Read for PollingReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        use std::os::fd::AsRawFd;
        if !self.poll.is_zero() && !buf.is_empty() {
            let deadline = std::time::Instant::now() + self.poll;
            loop {
                // SAFETY: `buf` is a valid writable region of `buf.len()` bytes and
                // the descriptor belongs to `self.stream` for the whole call.
                let received = unsafe {
                    libc::recv(
                        self.stream.as_raw_fd(),
                        buf.as_mut_ptr().cast(),
                        buf.len(),
                        libc::MSG_DONTWAIT,
                    )
                };
                if received >= 0 {
                    return Ok(received as usize);
                }
                let error = io::Error::last_os_error();
                match error.kind() {
                    io::ErrorKind::WouldBlock if std::time::Instant::now() < deadline => {
                        std::hint::spin_loop()
                    }
                    io::ErrorKind::WouldBlock => break,
                    io::ErrorKind::Interrupted => {}
                    _ => return Err(error),
                }
            }
        }
        self.stream.read(buf)
    }
}

impl io::Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Unix(stream) => stream.read(buf),
            Stream::Tcp(stream) => stream.read(buf),
        }
    }
}

impl io::Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Unix(stream) => stream.write(buf),
            Stream::Tcp(stream) => stream.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Unix(stream) => stream.flush(),
            Stream::Tcp(stream) => stream.flush(),
        }
    }
}

/// The stream during negotiation: every read and write gets only the time left
/// until one deadline, so the whole handshake is bounded (a per-read timeout would
/// let a client that sends a byte every few seconds negotiate forever).
pub(crate) struct Deadlined<'a> {
    pub stream: &'a mut Stream,
    pub deadline: Instant,
}

impl Deadlined<'_> {
    /// Sets both socket timeouts to the time left, or fails once none is left.
    fn arm(&self) -> io::Result<()> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "negotiation did not finish in time",
            ));
        }
        self.stream.set_read_timeout(Some(left))?;
        self.stream.set_write_timeout(Some(left))
    }
}

impl io::Read for Deadlined<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.arm()?;
        self.stream.read(buf)
    }
}

impl io::Write for Deadlined<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.arm()?;
        self.stream.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.stream.flush()
    }
}
