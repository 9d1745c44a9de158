//! Crash test of `spinstack serve` (the redb style: live state against durable state).
//! A RAID-5 served under a fio write load and a checking client is killed with
//! SIGKILL at a random instant, twenty times over; after each restart, scrub finds no
//! stripe whose parity disagrees (the write-intent record repaired the stripes in
//! flight), and every write the checker had acknowledged before a completed flush
//! reads back (or a newer write of the same block). Seeded: set SPINSTACK_SEED to
//! replay a failure; the seed is printed when it fails.

mod common;
use common::nbd_client::NbdClient;
use common::*;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

const BLOCK_BYTES: usize = 4096;
const CHECKED_BLOCKS: u64 = 1024; // the first 4 MiB belong to the checker
const ROUNDS: u32 = 20;

/// One sector of version `version` of `block`: block and version, then filler that
/// depends on both, so a torn or misplaced sector is recognised.
fn sector(block: u64, version: u64, index: usize) -> [u8; 512] {
    let mut bytes = [0u8; 512];
    bytes[0..8].copy_from_slice(&block.to_le_bytes());
    bytes[8..16].copy_from_slice(&version.to_le_bytes());
    let fill = (block.wrapping_mul(31) ^ version.wrapping_mul(131) ^ index as u64) as u8;
    bytes[16..].fill(fill);
    bytes
}

fn block_data(block: u64, version: u64) -> Vec<u8> {
    (0..BLOCK_BYTES / 512)
        .flat_map(|i| sector(block, version, i))
        .collect()
}

/// What each checked block may hold: `floor` (the last version durable by a completed
/// flush, or the contents seen at the last check; None = zeros) or any version
/// written after it.
#[derive(Clone, Default)]
struct Expect {
    floor: Option<u64>,
    since: Vec<u64>,
}

/// The workspace's one seeded generator.
type Rng = spinstack_sim::rng::Xoshiro256StarStar;

/// Writes random checked blocks with a flush every eighth write until the server
/// dies; returns the expectations.
fn checker(
    socket: std::path::PathBuf,
    mut expect: Vec<Expect>,
    seed: u64,
    next_version: u64,
    stop: Arc<AtomicBool>,
) -> (Vec<Expect>, u64) {
    let mut rng = Rng::seed_from_u64(seed);
    let mut version = next_version;
    let Ok(mut client) = NbdClient::connect(&socket) else {
        return (expect, version);
    };
    let mut written = 0u64;
    while !stop.load(Ordering::SeqCst) {
        let block = rng.next_u64() % CHECKED_BLOCKS;
        version += 1;
        expect[block as usize].since.push(version);
        if client
            .write(block * BLOCK_BYTES as u64, &block_data(block, version))
            .is_err()
        {
            break;
        }
        written += 1;
        if written & 7 == 0 {
            if client.flush().is_err() {
                break;
            }
            for entry in expect.iter_mut() {
                if let Some(&last) = entry.since.last() {
                    entry.floor = Some(last);
                    entry.since.clear();
                }
            }
        }
    }
    (expect, version)
}

/// Reads the checked region back and checks every sector against `expect`; returns
/// the new floors (what was read).
fn verify(socket: &std::path::Path, expect: &[Expect], seed: u64, round: u32) -> Vec<Expect> {
    let mut client = NbdClient::connect(socket).unwrap();
    let mut next = Vec::with_capacity(expect.len());
    for (block, entry) in expect.iter().enumerate() {
        let data = client
            .read(block as u64 * BLOCK_BYTES as u64, BLOCK_BYTES as u32)
            .unwrap();
        let mut seen = None;
        for (index, bytes) in data.chunks_exact(512).enumerate() {
            let version = if bytes.iter().all(|&b| b == 0) {
                None
            } else {
                Some(u64::from_le_bytes(bytes[8..16].try_into().unwrap()))
            };
            let allowed =
                version == entry.floor || version.is_some_and(|v| entry.since.contains(&v));
            let intact = match version {
                None => true,
                Some(v) => bytes == sector(block as u64, v, index),
            };
            assert!(
                allowed && intact,
                "seed {seed} round {round}: block {block} sector {index} holds version {version:?} \
                 (intact: {intact}); allowed {:?} or one of {:?}",
                entry.floor, entry.since
            );
            // Sectors of one block may differ after a crash (a write is not atomic);
            // the block's new floor is only known when they agree.
            seen = if index == 0 || seen == Some(version) {
                Some(version)
            } else {
                None
            };
        }
        next.push(match seen {
            Some(version) => Expect {
                floor: version,
                since: Vec::new(),
            },
            None => entry.clone(),
        });
    }
    next
}

#[test]
fn killed_server_loses_no_flushed_write_and_leaves_no_bad_parity() {
    if !have("fio") {
        return;
    }
    let seed: u64 = std::env::var("SPINSTACK_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20261124);
    eprintln!("crash test seed {seed} (SPINSTACK_SEED to replay)");
    let dir = scratch("serve-crash");
    let volume = create(
        &dir,
        &[
            "--level",
            "raid5",
            "--members",
            "4",
            "--member-size",
            "16MiB",
            "--chunk",
            "64KiB",
        ],
    );
    let path = volume.to_str().unwrap().to_string();
    let socket = dir.join("nbd.sock");
    let mut rng = Rng::seed_from_u64(seed);
    let mut expect = vec![Expect::default(); CHECKED_BLOCKS as usize];
    let mut version = 0u64;
    for round in 0..ROUNDS {
        let server = Server::start(&volume, &socket, &[]);
        let mut load = fio(
            &server.uri(),
            &[
                "--rw=randwrite",
                "--bs=4k",
                "--iodepth=16",
                "--offset=8m",
                "--size=40m",
                "--time_based",
                "--runtime=30",
            ],
        )
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let worker = {
            let (socket, expect, stop) = (socket.clone(), expect.clone(), Arc::clone(&stop));
            let checker_seed = rng.next_u64();
            std::thread::spawn(move || checker(socket, expect, checker_seed, version, stop))
        };
        std::thread::sleep(Duration::from_millis(100 + rng.next_u64() % 500));
        server.kill();
        stop.store(true, Ordering::SeqCst);
        let _ = load.kill();
        let _ = load.wait();
        (expect, version) = worker.join().unwrap();

        let server = Server::start(&volume, &socket, &[]);
        let report = volume_json(&["scrub", &path]);
        assert_eq!(
            report["mismatches"], 0,
            "seed {seed} round {round}: {report}"
        );
        expect = verify(&socket, &expect, seed, round);
        server.stop();
    }
    let flushed = expect.iter().filter(|e| e.floor.is_some()).count();
    assert!(
        flushed > 100,
        "the checker wrote too little to mean anything: {flushed} blocks"
    );
    let _ = Command::new("true").status();
    let _ = std::fs::remove_dir_all(&dir);
}
