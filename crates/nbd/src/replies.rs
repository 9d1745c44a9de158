//! The reply side of one connection. Two ways a reply reaches the socket:
//!
//! - A reply given by the connection's reader thread itself (a backend that answers
//!   at once) is written by that thread, into the connection's buffered writer. It
//!   stays buffered until the reader is about to block (its input buffer is empty,
//!   or it waits for room in flight), so a burst of pipelined requests is answered
//!   with one write.
//! - A reply given by any other thread (a backend's worker, the pacer that holds
//!   replies until the drive model completes them) is only queued; the connection's
//!   own writer thread writes and flushes it. So a thread that serves many
//!   connections never blocks on one connection's socket: a client that stops
//!   reading its replies stalls its own connection and nobody else's.
//!
//! A reply keeps its in-flight slot, and the payload bytes it counts, until it was
//! written to the socket (or dropped, once the connection failed). The queue
//! therefore never holds more than the in-flight bound of replies, and the bytes
//! they hold count against the held-bytes bound: both limits bound memory whether a
//! reply waits in the backend or in the queue.

use crate::backend::ReplyChannel;
use crate::framing::{Framed, Head};
use std::collections::VecDeque;
use std::io::{self, BufWriter, Write};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::thread::ThreadId;

/// Requests of one connection that were read and not yet answered, and the payload
/// bytes they hold (write data not yet applied, read data not yet sent): the reader
/// waits while either is at its bound, so a client that pipelines without reading
/// replies cannot make the server hold requests or bytes without limit. Waking is
/// paid only when someone waits (a condition-variable notify is a system call even
/// with no waiter).
pub(crate) struct InFlight {
    state: Mutex<Counts>,
    changed: Condvar,
    bound: usize,
    max_held_bytes: u64,
}

#[derive(Default)]
struct Counts {
    in_flight: usize,
    held_bytes: u64,
    waiters: usize,
}

impl InFlight {
    pub fn new(bound: usize, max_held_bytes: u64) -> InFlight {
        assert!(bound > 0, "in-flight bound must be positive");
        assert!(max_held_bytes > 0, "held-bytes bound must be positive");
        InFlight {
            state: Mutex::new(Counts::default()),
            changed: Condvar::new(),
            bound,
            max_held_bytes,
        }
    }
    fn lock(&self) -> MutexGuard<'_, Counts> {
        self.state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
    /// Waits on the condition until `done` holds.
    fn wait_until(&self, done: impl Fn(&Counts) -> bool) -> MutexGuard<'_, Counts> {
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
    fn has_room(&self, counts: &Counts) -> bool {
        counts.in_flight < self.bound && counts.held_bytes < self.max_held_bytes
    }
    /// True when the next `acquire` would block.
    pub fn is_full(&self) -> bool {
        !self.has_room(&self.lock())
    }
    /// Blocks until one more request may be read (fewer than the bound in flight,
    /// and fewer held bytes than their bound), then counts it. The request's own
    /// bytes are added by `hold` once known, so one request may take the held bytes
    /// past the bound by at most its payload.
    pub fn acquire(&self) {
        self.wait_until(|counts| self.has_room(counts)).in_flight += 1;
    }
    /// Counts `bytes` of payload held by the request last acquired.
    pub fn hold(&self, bytes: u64) {
        self.lock().held_bytes += bytes;
    }
    /// One request answered: its slot and its `held_bytes` are free again.
    pub fn release(&self, held_bytes: u64) {
        let mut counts = self.lock();
        assert!(
            counts.in_flight > 0 && counts.held_bytes >= held_bytes,
            "released more than was in flight"
        );
        counts.in_flight -= 1;
        counts.held_bytes -= held_bytes;
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

/// A reply given by another thread than the reader, waiting for the writer thread.
struct Queued {
    head: Head,
    body: Vec<u8>,
    held_bytes: u64,
}

#[derive(Default)]
struct Queue {
    replies: VecDeque<Queued>,
    /// The connection is over: the writer thread ends once the queue is empty.
    closed: bool,
}

/// One connection's replies.
pub(crate) struct ConnectionReplies<W: Write + Send> {
    state: Mutex<WriterState<W>>,
    pub in_flight: InFlight,
    reader: ThreadId,
    queue: Mutex<Queue>,
    queued: Condvar,
}

impl<W: Write + Send> ConnectionReplies<W> {
    /// Replies to `writer`; the calling thread is the connection's reader.
    pub fn new(writer: W, max_in_flight: usize, max_held_bytes: u64) -> ConnectionReplies<W> {
        ConnectionReplies {
            state: Mutex::new(WriterState {
                out: BufWriter::with_capacity(256 * 1024, writer),
                failed: None,
            }),
            in_flight: InFlight::new(max_in_flight, max_held_bytes),
            reader: std::thread::current().id(),
            queue: Mutex::new(Queue::default()),
            queued: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, WriterState<W>> {
        self.state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    fn lock_queue(&self) -> MutexGuard<'_, Queue> {
        self.queue
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

    /// Writes one reply into the buffer (nothing once the connection failed).
    fn write_reply(state: &mut WriterState<W>, head: &Head, body: &[u8]) {
        if state.failed.is_none() {
            let result = state
                .out
                .write_all(head.as_bytes())
                .and_then(|()| state.out.write_all(body));
            if let Err(failure) = result {
                state.failed = Some(failure);
            }
        }
    }

    /// The writer thread's loop: writes queued replies, flushing after each batch,
    /// until `close` was called and the queue is empty.
    pub fn write_queued(&self) {
        loop {
            let batch = {
                let mut queue = self.lock_queue();
                while queue.replies.is_empty() && !queue.closed {
                    queue = self
                        .queued
                        .wait(queue)
                        .unwrap_or_else(|poison| poison.into_inner());
                }
                if queue.replies.is_empty() {
                    return;
                }
                std::mem::take(&mut queue.replies)
            };
            {
                let mut state = self.lock();
                for reply in &batch {
                    Self::write_reply(&mut state, &reply.head, &reply.body);
                }
                if state.failed.is_none() {
                    if let Err(error) = state.out.flush() {
                        state.failed = Some(error);
                    }
                }
            }
            // Only now are the bytes out of our hands: free their slots and bounds.
            for reply in batch {
                self.in_flight.release(reply.held_bytes);
            }
        }
    }

    /// Ends the writer thread once it has written what is queued.
    pub fn close(&self) {
        self.lock_queue().closed = true;
        self.queued.notify_all();
    }
}

impl<W: Write + Send> ReplyChannel for ConnectionReplies<W> {
    fn send(&self, framed: Framed<'_>, held_bytes: u64) {
        if std::thread::current().id() == self.reader {
            Self::write_reply(&mut self.lock(), &framed.head, &framed.body);
            self.in_flight.release(held_bytes);
            return;
        }
        // Never touch the socket here: this thread may serve other connections too.
        let mut queue = self.lock_queue();
        // Each queued reply still holds its in-flight slot, so the queue is bounded
        // by the in-flight bound.
        queue.replies.push_back(Queued {
            head: framed.head,
            body: framed.body.into_owned(),
            held_bytes,
        });
        drop(queue);
        self.queued.notify_one();
    }
}
