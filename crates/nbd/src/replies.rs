//! The reply side of one connection: replies are written by whichever thread
//! answers (the connection's reader itself for a backend that answers at once, the
//! backend's threads otherwise), under a lock on the socket's buffered writer.
//!
//! Flushing: a reply written by another thread is flushed at once (nobody else would
//! push it out). A reply written by the reader thread stays buffered until the
//! reader is about to block (its input buffer is empty, or it waits for an in-flight
//! slot), so a burst of pipelined requests is answered with one write.

use crate::backend::ReplyChannel;
use crate::wire::encode_simple_reply;
use std::io::{self, BufWriter, Write};
use std::sync::{Condvar, Mutex};
use std::thread::ThreadId;

/// Requests of one connection that were read and not yet answered: the reader waits
/// while it is at its bound, so a client that pipelines without reading replies cannot
/// make the server queue without limit. Waking is paid only when someone waits (a
/// condition-variable notify is a system call even with no waiter).
pub(crate) struct InFlight {
    state: Mutex<Counts>,
    changed: Condvar,
    bound: usize,
}

#[derive(Default)]
struct Counts {
    in_flight: usize,
    waiters: usize,
}

impl InFlight {
    pub fn new(bound: usize) -> InFlight {
        assert!(bound > 0, "in-flight bound must be positive");
        InFlight {
            state: Mutex::new(Counts::default()),
            changed: Condvar::new(),
            bound,
        }
    }
    fn lock(&self) -> std::sync::MutexGuard<'_, Counts> {
        self.state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
    /// Waits on the condition until `done` holds.
    fn wait_until(&self, done: impl Fn(&Counts) -> bool) -> std::sync::MutexGuard<'_, Counts> {
        let mut counts = self.lock();
        while !done(&counts) {
            counts.waiters += 1;
            counts = self
                .changed
                .wait(counts)
                .unwrap_or_else(|poison| poison.into_inner());
            counts.waiters -= 1;
        }
        counts
    }
    /// True when the next `acquire` would block.
    pub fn is_full(&self) -> bool {
        self.lock().in_flight >= self.bound
    }
    /// Blocks until one more request may be in flight, then counts it.
    pub fn acquire(&self) {
        let bound = self.bound;
        self.wait_until(|counts| counts.in_flight < bound).in_flight += 1;
    }
    pub fn release(&self) {
        let mut counts = self.lock();
        assert!(
            counts.in_flight > 0,
            "released more requests than were in flight"
        );
        counts.in_flight -= 1;
        if counts.waiters > 0 {
            self.changed.notify_all();
        }
    }
    /// Blocks until every request in flight was answered.
    pub fn wait_empty(&self) {
        drop(self.wait_until(|counts| counts.in_flight == 0));
    }
}

struct WriterState<W: Write> {
    out: BufWriter<W>,
    /// The first write error; later replies are dropped (the connection is dead).
    failed: Option<io::Error>,
}

/// One connection's replies.
pub(crate) struct ConnectionReplies<W: Write + Send> {
    state: Mutex<WriterState<W>>,
    pub in_flight: InFlight,
    reader: ThreadId,
}

impl<W: Write + Send> ConnectionReplies<W> {
    pub fn new(writer: W, max_in_flight: usize) -> ConnectionReplies<W> {
        ConnectionReplies {
            state: Mutex::new(WriterState {
                out: BufWriter::with_capacity(256 * 1024, writer),
                failed: None,
            }),
            in_flight: InFlight::new(max_in_flight),
            reader: std::thread::current().id(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, WriterState<W>> {
        self.state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// Pushes buffered replies to the socket.
    pub fn flush(&self) {
        let mut state = self.lock();
        if state.failed.is_none() {
            if let Err(error) = state.out.flush() {
                state.failed = Some(error);
            }
        }
    }

    /// The first write error, if any, once the connection is over.
    pub fn take_failure(&self) -> Option<io::Error> {
        self.lock().failed.take()
    }
}

impl<W: Write + Send> ReplyChannel for ConnectionReplies<W> {
    fn send(&self, handle: u64, error: u32, data: &[u8]) {
        {
            let mut state = self.lock();
            if state.failed.is_none() {
                let result = state
                    .out
                    .write_all(&encode_simple_reply(handle, error))
                    .and_then(|()| state.out.write_all(data))
                    .and_then(|()| {
                        if std::thread::current().id() == self.reader {
                            Ok(())
                        } else {
                            state.out.flush()
                        }
                    });
                if let Err(failure) = result {
                    state.failed = Some(failure);
                }
            }
        }
        self.in_flight.release();
    }
}
