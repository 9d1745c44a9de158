//! Real NBD clients (nbdinfo, nbdcopy, qemu-img, fio) against the server over a
//! memory store: proves the protocol implementation interoperates, independent of the
//! persistent arrays. Each test skips, saying so, when its client is not installed.

mod common;
use common::{have, run, scratch};
use spinstack_nbd::{start, Address, ServerConfig};
use spinstack_serve::StoreBackend;
use spinstack_sim::units::Sectors;
use spinstack_store::MemoryStore;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

fn serve_memory(dir: &Path, mib: u64) -> spinstack_nbd::ServerHandle {
    let store = MemoryStore::new(Sectors(mib * 2048)).unwrap();
    let backend = Arc::new(StoreBackend::new(store, None));
    start(
        &Address::Unix(dir.join("nbd.sock")),
        backend,
        ServerConfig::default(),
    )
    .unwrap()
}

fn uri(dir: &Path) -> String {
    format!("nbd+unix:///?socket={}", dir.join("nbd.sock").display())
}

/// nbdinfo sees the export's size and the flags we advertise; it negotiates
/// structured replies (so `SEND_DF` is advertised) and lists `base:allocation`.
#[test]
fn nbdinfo_describes_the_export() {
    if !have("nbdinfo") {
        return;
    }
    let dir = scratch("info");
    let _server = serve_memory(&dir, 16);
    let text = run(Command::new("nbdinfo").arg("--json").arg(uri(&dir)));
    let info: serde_json::Value = serde_json::from_str(&text).unwrap();
    let export = &info["exports"][0];
    assert_eq!(export["export-size"], 16 * 1024 * 1024, "{text}");
    assert_eq!(export["can_multi_conn"], true, "{text}");
    assert_eq!(export["can_fua"], true, "{text}");
    assert_eq!(export["can_trim"], true, "{text}");
    assert_eq!(export["is_rotational"], true, "{text}");
    assert_eq!(export["can_df"], true, "{text}");
    assert_eq!(
        export["contexts"],
        serde_json::json!(["base:allocation"]),
        "{text}"
    );
    let list = run(Command::new("nbdinfo")
        .arg("--list")
        .arg("--json")
        .arg(uri(&dir)));
    assert!(list.contains("spinstack"), "{list}");
}

/// Random data copied in and back out with nbdcopy is identical, byte for byte.
#[test]
fn nbdcopy_round_trip_is_identical() {
    if !have("nbdcopy") {
        return;
    }
    let dir = scratch("copy");
    let _server = serve_memory(&dir, 32);
    let input = dir.join("in.bin");
    let output = dir.join("out.bin");
    let data: Vec<u8> = (0..32u64 * 1024 * 1024)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    std::fs::write(&input, &data).unwrap();
    run(Command::new("nbdcopy").arg(&input).arg(uri(&dir)));
    run(Command::new("nbdcopy").arg(uri(&dir)).arg(&output));
    assert!(std::fs::read(&output).unwrap() == data, "copy differs");
}

/// qemu-img writes an image into the export and reads it back unchanged.
#[test]
fn qemu_img_convert_to_and_from() {
    if !have("qemu-img") {
        return;
    }
    let dir = scratch("qemu");
    let _server = serve_memory(&dir, 16);
    let input = dir.join("in.raw");
    let output = dir.join("out.raw");
    let data: Vec<u8> = (0..16u64 * 1024 * 1024).map(|i| (i % 251) as u8).collect();
    std::fs::write(&input, &data).unwrap();
    let target = uri(&dir);
    run(Command::new("qemu-img")
        .args(["convert", "-n", "-f", "raw", "-O", "raw"])
        .arg(&input)
        .arg(&target));
    run(Command::new("qemu-img")
        .args(["convert", "-f", "raw", "-O", "raw"])
        .arg(&target)
        .arg(&output));
    assert!(
        std::fs::read(&output).unwrap() == data,
        "qemu-img round trip differs"
    );
}

/// fio's nbd engine: random 4 KiB writes and reads at queue depth 16, verified by
/// crc32c, all succeed.
#[test]
fn fio_random_verify_passes() {
    if !have("fio") {
        return;
    }
    let dir = scratch("fio");
    let _server = serve_memory(&dir, 32);
    run(&mut common::fio(
        &uri(&dir),
        &[
            "--rw=randwrite",
            "--bs=4k",
            "--iodepth=16",
            "--size=16m",
            "--verify=crc32c",
            "--do_verify=1",
            "--verify_fatal=1",
        ],
    ));
}

/// The same export over TCP (`--listen`): nbdinfo reaches it at the bound port.
#[test]
fn nbdinfo_over_tcp() {
    if !have("nbdinfo") {
        return;
    }
    let store = MemoryStore::new(Sectors(8 * 2048)).unwrap();
    let backend = Arc::new(StoreBackend::new(store, None));
    let server = start(
        &Address::Tcp("127.0.0.1:0".parse().unwrap()),
        backend,
        ServerConfig::default(),
    )
    .unwrap();
    let Address::Tcp(bound) = server.address().clone() else {
        panic!("a TCP server reports a TCP address");
    };
    let text = run(Command::new("nbdinfo")
        .arg("--json")
        .arg(format!("nbd://127.0.0.1:{}", bound.port())));
    assert!(text.contains("\"export-size\": 8388608"), "{text}");
}
