//! Replies leave in the order the backend answers, not the order requests came: a
//! backend that holds four reads and answers them last-first is seen by a pipelining
//! client as four replies in reverse, each carrying its own handle and its own data.

use spinstack_nbd::wire::*;
use spinstack_nbd::{start, Address, Backend, Command, Reply, ServerConfig};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};

/// Holds replies until four are waiting, then answers them newest first; a read's
/// data is its offset's low byte repeated.
#[derive(Default)]
struct Reversing {
    held: Mutex<Vec<(Reply, u64, u32)>>,
}

impl Backend for Reversing {
    fn size_bytes(&self) -> u64 {
        1 << 20
    }
    fn rotational(&self) -> bool {
        false
    }
    fn submit(&self, command: Command, reply: Reply) {
        let Command::Read {
            offset_bytes,
            length_bytes,
        } = command
        else {
            return reply.ok();
        };
        let mut held = self.held.lock().unwrap();
        held.push((reply, offset_bytes, length_bytes));
        if held.len() == 4 {
            let batch: Vec<_> = held.drain(..).rev().collect();
            drop(held);
            // Answer from another thread, as a timed backend does.
            std::thread::spawn(move || {
                for (reply, offset, length) in batch {
                    reply.data(&vec![offset as u8; length as usize]);
                }
            });
        }
    }
}

#[test]
fn replies_follow_the_backend_not_the_request_order() {
    let dir = std::env::temp_dir().join(format!("spinstack-nbd-order-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("s.sock");
    let _server = start(
        &Address::Unix(path.clone()),
        Arc::new(Reversing::default()),
        ServerConfig::default(),
    )
    .unwrap();
    let mut stream = UnixStream::connect(&path).unwrap();
    let mut greeting = [0u8; 18];
    stream.read_exact(&mut greeting).unwrap();
    stream
        .write_all(&(CLIENT_FIXED_NEWSTYLE | CLIENT_NO_ZEROES).to_be_bytes())
        .unwrap();
    let mut option = OPTION_MAGIC.to_be_bytes().to_vec();
    option.extend_from_slice(&OPT_EXPORT_NAME.to_be_bytes());
    option.extend_from_slice(&0u32.to_be_bytes());
    stream.write_all(&option).unwrap();
    let mut export = [0u8; 10];
    stream.read_exact(&mut export).unwrap();

    for handle in 1..=4u64 {
        let header = RequestHeader {
            flags: 0,
            command: CMD_READ,
            handle,
            offset_bytes: handle * 4096 + handle,
            length_bytes: 100,
        };
        stream.write_all(&encode_request_header(&header)).unwrap();
    }
    let mut order = Vec::new();
    for _ in 0..4 {
        let mut reply = [0u8; 16];
        stream.read_exact(&mut reply).unwrap();
        assert_eq!(&reply[0..4], &SIMPLE_REPLY_MAGIC.to_be_bytes());
        assert_eq!(&reply[4..8], &[0, 0, 0, 0]);
        let handle = u64::from_be_bytes(reply[8..16].try_into().unwrap());
        let mut data = [0u8; 100];
        stream.read_exact(&mut data).unwrap();
        assert_eq!(
            data,
            [(handle * 4096 + handle) as u8; 100],
            "handle {handle}'s data"
        );
        order.push(handle);
    }
    assert_eq!(order, vec![4, 3, 2, 1]);
}
