//! `serve --timing model` against clients that stop reading their replies: the
//! pacer releases every connection's replies, and such a client must neither stall
//! the others nor make the server hold its read data without bound.

mod common;
use common::nbd_client::NbdClient;
use common::*;
use std::time::{Duration, Instant};

fn small_raid5(dir: &std::path::Path) -> std::path::PathBuf {
    raid5_volume(dir, "3", "16MiB")
}

/// The server process's resident memory, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find(|line| line.starts_with("VmRSS:"))
        .expect("VmRSS line");
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

// Guards finding NBD-F1 (2026-11-28): the pacer thread wrote released replies with
// blocking socket writes, so one client with 128 unread 64 KiB replies stalled every
// other client's replies until it disconnected. Proves another client's 4 KiB read
// is answered within seconds while that client stays connected.
#[test]
fn a_client_that_reads_no_replies_does_not_stall_others_under_the_model() {
    let dir = scratch("serve-hostile-stall");
    let volume = small_raid5(&dir);
    let server = Server::start(&volume, &dir.join("nbd.sock"), &["--timing", "model"]);
    let mut hostile = NbdClient::connect(&server.socket).unwrap();
    hostile.send_reads(128, 0, 64 * 1024).unwrap();
    // The model completes them in well under a second; then the pacer would block.
    std::thread::sleep(Duration::from_secs(1));
    let mut other = NbdClient::connect(&server.socket).unwrap();
    other.set_read_timeout(Duration::from_secs(10)).unwrap();
    let started = Instant::now();
    let answer = other.read(1 << 20, 4096);
    assert!(
        answer.is_ok(),
        "no reply for the other client after {:?}: {answer:?}",
        started.elapsed()
    );
    drop(hostile);
}

// Guards finding NBD-F2 (2026-11-28): held read replies kept their data, 128 × up to
// 32 MiB per connection (the tester saw ~1 GiB resident from one client). Proves a
// client pipelining 128 reads of 4 MiB without reading replies (512 MiB if all were
// held) leaves the server under 150 MiB resident.
#[test]
fn held_read_data_stays_bounded_under_the_model() {
    let dir = scratch("serve-hostile-rss");
    let volume = small_raid5(&dir);
    let server = Server::start(&volume, &dir.join("nbd.sock"), &["--timing", "model"]);
    let mut hostile = NbdClient::connect(&server.socket).unwrap();
    hostile.send_reads(128, 0, 4 << 20).unwrap();
    let mut peak_kib = 0;
    for _ in 0..30 {
        std::thread::sleep(Duration::from_millis(100));
        peak_kib = peak_kib.max(rss_kib(server.child.id()));
    }
    assert!(
        peak_kib < 150 * 1024,
        "server resident memory reached {peak_kib} KiB"
    );
    drop(hostile);
}

// Guards finding NBD-F4 (2026-11-28): a client refused for the connection limit saw
// only a closed connection, and the server said nothing. Proves `--max-connections
// 1` refuses a second client, and the server logs the limit once for three refused
// clients in a row.
#[test]
fn the_connection_limit_is_logged_once_per_spell() {
    let dir = scratch("serve-hostile-limit");
    let volume = small_raid5(&dir);
    let socket = dir.join("nbd.sock");
    let mut child = spinstack()
        .arg("serve")
        .arg(&volume)
        .arg("--socket")
        .arg(&socket)
        .args(["--max-connections", "1"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    // The only slot goes to this client (a probe connection would take it too).
    let holder = loop {
        if let Ok(client) = NbdClient::connect(&socket) {
            break client;
        }
        assert!(Instant::now() < deadline, "server did not come up");
        std::thread::sleep(Duration::from_millis(20));
    };
    for _ in 0..3 {
        assert!(
            NbdClient::connect(&socket).is_err(),
            "a client past the limit must be refused"
        );
    }
    drop(holder);
    // SAFETY: plain kill(2) on our own child's pid.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("serve did not stop after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("connection limit reached").count(),
        1,
        "{stderr}"
    );
}
