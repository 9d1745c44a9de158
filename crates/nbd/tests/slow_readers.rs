//! Clients that do not read their replies, against backends that answer from their
//! own threads (as the drive-model pacer of `serve --timing model` does): such a
//! client stalls only its own connection, and the read data a connection holds is
//! bounded in bytes, not only in requests.

mod common;
use common::*;
use spinstack_nbd::transmission::Limits;
use spinstack_nbd::wire::*;
use spinstack_nbd::{Backend, Command, Reply, ServerConfig};
use std::io::Write;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const SIZE_BYTES: u64 = 1 << 20;
const READ_BYTES: u32 = 64 * 1024;

fn serve(
    name: &str,
    backend: Arc<dyn Backend>,
    limits: Limits,
) -> (spinstack_nbd::ServerHandle, std::path::PathBuf) {
    let config = ServerConfig {
        limits,
        ..ServerConfig::default()
    };
    serve_unix(name, backend, config)
}

/// Answers every connection's requests from one thread of its own, in arrival order:
/// the shape of the pacer, which releases all connections' replies.
struct OneWorker {
    sender: Mutex<mpsc::Sender<(Command, Reply)>>,
}

impl OneWorker {
    fn start() -> OneWorker {
        let (sender, receiver) = mpsc::channel::<(Command, Reply)>();
        std::thread::spawn(move || {
            for (command, reply) in receiver {
                match command {
                    Command::Read { length_bytes, .. } => {
                        reply.data_vec(vec![0x5A; length_bytes as usize])
                    }
                    _ => reply.ok(),
                }
            }
        });
        OneWorker {
            sender: Mutex::new(sender),
        }
    }
}

impl Backend for OneWorker {
    fn size_bytes(&self) -> u64 {
        SIZE_BYTES
    }
    fn rotational(&self) -> bool {
        false
    }
    fn submit(&self, command: Command, reply: Reply) {
        let _ = self.sender.lock().unwrap().send((command, reply));
    }
}

// Guards finding NBD-F1 (2026-11-28): under `--timing model` one pacer thread wrote
// every connection's replies with blocking socket writes, so a client that stopped
// reading stalled every other client until it disconnected. Proves that with one
// thread answering all connections, a client with 8 MiB of unread replies (far past
// a socket buffer) does not delay another client's read.
#[test]
fn a_client_that_reads_no_replies_stalls_only_itself() {
    let limits = Limits {
        max_payload_bytes: READ_BYTES,
        max_in_flight: 128,
        // Not the bound under test here: large enough never to stop the reader.
        max_held_bytes: 1 << 30,
    };
    let (_server, path) = serve("stall", Arc::new(OneWorker::start()), limits);
    let mut hostile = connect_go(&path);
    for handle in 0..128 {
        hostile
            .write_all(&request(CMD_READ, 0, handle, 0, READ_BYTES))
            .unwrap();
    }
    // Let the worker reach the hostile connection's full socket.
    std::thread::sleep(Duration::from_millis(300));

    let mut other = connect_go(&path);
    other
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let started = Instant::now();
    other
        .write_all(&request(CMD_READ, 0, 9999, 0, 4096))
        .unwrap();
    let mut header = [0u8; 16];
    let answered = std::io::Read::read_exact(&mut other, &mut header);
    assert!(
        answered.is_ok(),
        "the other client got no reply in {:?}: {answered:?}",
        started.elapsed()
    );
    assert_eq!(&header[0..4], &SIMPLE_REPLY_MAGIC.to_be_bytes());
    assert_eq!(u64::from_be_bytes(header[8..16].try_into().unwrap()), 9999);
    assert_eq!(read_n(&mut other, 4096), vec![0x5A; 4096]);
    drop(hostile);
}

/// Keeps every read's reply until the test lets them go; counts the requests that
/// reached it.
#[derive(Default)]
struct Holding {
    held: Mutex<Vec<(Reply, u32)>>,
    received: Mutex<usize>,
}

impl Holding {
    fn received(&self) -> usize {
        *self.received.lock().unwrap()
    }
    /// Answers what is held, from the calling (test) thread.
    fn answer_all(&self) {
        let held: Vec<_> = self.held.lock().unwrap().drain(..).collect();
        for (reply, length) in held {
            reply.data_vec(vec![0xC3; length as usize]);
        }
    }
}

impl Backend for Holding {
    fn size_bytes(&self) -> u64 {
        SIZE_BYTES
    }
    fn rotational(&self) -> bool {
        false
    }
    fn submit(&self, command: Command, reply: Reply) {
        *self.received.lock().unwrap() += 1;
        match command {
            Command::Read { length_bytes, .. } => {
                self.held.lock().unwrap().push((reply, length_bytes))
            }
            _ => reply.ok(),
        }
    }
}

/// Waits (bounded) until `count` reaches `at_least`, then a little longer for any
/// more to come, and returns it.
fn settled(count: impl Fn() -> usize, at_least: usize) -> usize {
    let deadline = Instant::now() + Duration::from_secs(10);
    while count() < at_least && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(200));
    count()
}

// Guards finding NBD-F2 (2026-11-28): under `--timing model` a connection's held read
// replies kept their data, bounded only by 128 requests × 32 MiB (4 GiB per
// connection). Proves a connection stops reading requests once the read data it holds
// reaches `max_held_bytes` (here 4 reads' worth, with room for 64 requests), resumes
// as replies leave, and answers every request in the end.
#[test]
fn held_read_data_is_bounded_per_connection() {
    let limits = Limits {
        max_payload_bytes: READ_BYTES,
        max_in_flight: 64,
        max_held_bytes: 4 * READ_BYTES as u64,
    };
    let backend = Arc::new(Holding::default());
    let (_server, path) = serve("held", backend.clone(), limits);
    let mut client = connect_go(&path);
    let requests = 40u64;
    for handle in 0..requests {
        client
            .write_all(&request(CMD_READ, 0, handle, 0, READ_BYTES))
            .unwrap();
    }
    let reached = settled(|| backend.received(), 4);
    assert_eq!(reached, 4, "requests read while 4 reads' data were held");

    client
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    // Answer from another thread, as the pacer does, until every reply arrived.
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let answerer = {
        let (backend, done) = (backend.clone(), done.clone());
        std::thread::spawn(move || {
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                assert!(backend.held.lock().unwrap().len() <= 4, "over the bound");
                backend.answer_all();
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    for handle in 0..requests {
        assert_eq!(simple_reply(&mut client), (0, handle), "replies in order");
        assert_eq!(
            read_n(&mut client, READ_BYTES as usize),
            vec![0xC3; READ_BYTES as usize]
        );
    }
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    answerer.join().expect("never over the bound");
}
