//! `spinstack serve` on persistent volumes, with real NBD clients: nbdinfo, nbdcopy,
//! qemu-img and fio's nbd engine on a RAID-5 that is healthy, degraded and
//! rebuilding; scrub finds nothing afterwards. Each test skips, saying so, when a
//! client is missing.

mod common;
use common::*;
use std::process::Command;

/// RAID-5 over 5 members of 32 MiB: 128 MiB of data.
fn raid5(dir: &std::path::Path) -> std::path::PathBuf {
    create(
        dir,
        &[
            "--level",
            "raid5",
            "--members",
            "5",
            "--member-size",
            "32MiB",
            "--chunk",
            "64KiB",
        ],
    )
}

fn fio_verify(uri: &str, size: &str) {
    run(&mut fio(
        uri,
        &[
            "--rw=randrw",
            "--bs=4k",
            "--iodepth=8",
            &format!("--size={size}"),
            "--verify=crc32c",
            "--do_verify=1",
            "--verify_fatal=1",
            "--randrepeat=0",
        ],
    ));
}

fn scrub_mismatches(volume: &std::path::Path) -> u64 {
    let report = volume_json(&["scrub", volume.to_str().unwrap()]);
    report["mismatches"]
        .as_u64()
        .unwrap_or_else(|| panic!("no mismatches field: {report}"))
}

/// nbdinfo lists the export; 100 MB of random data copied in and out with nbdcopy is
/// identical; qemu-img converts to and from it; scrub finds no mismatch after.
#[test]
fn raid5_with_nbdinfo_nbdcopy_and_qemu_img() {
    if !(have("nbdinfo") && have("nbdcopy") && have("qemu-img")) {
        return;
    }
    let dir = scratch("serve-copy");
    let volume = raid5(&dir);
    let server = Server::start(&volume, &dir.join("nbd.sock"), &[]);
    let info = json(&run(Command::new("nbdinfo")
        .arg("--json")
        .arg(server.uri())));
    assert_eq!(info["exports"][0]["export-size"], 128u64 << 20, "{info}");
    let list = run(Command::new("nbdinfo").arg("--list").arg(server.uri()));
    assert!(list.contains("spinstack"), "{list}");

    let input = dir.join("in.bin");
    let output = dir.join("out.bin");
    let mut data = vec![0u8; 100_000_000];
    spinstack_sim::rng::SplitMix64::new(1).fill_bytes(&mut data);
    std::fs::write(&input, &data).unwrap();
    run(Command::new("nbdcopy").arg(&input).arg(server.uri()));
    run(Command::new("nbdcopy").arg(server.uri()).arg(&output));
    let back = std::fs::read(&output).unwrap();
    assert!(back[..data.len()] == data[..], "nbdcopy round trip differs");

    let image = dir.join("image.qcow2");
    run(Command::new("qemu-img")
        .args(["convert", "-f", "raw", "-O", "qcow2"])
        .arg(server.uri())
        .arg(&image));
    run(Command::new("qemu-img")
        .args(["convert", "-n", "-f", "qcow2", "-O", "raw"])
        .arg(&image)
        .arg(server.uri()));
    run(Command::new("nbdcopy").arg(server.uri()).arg(&output));
    assert!(
        std::fs::read(&output).unwrap()[..data.len()] == data[..],
        "qemu-img round trip differs"
    );
    server.stop();
    assert_eq!(scrub_mismatches(&volume), 0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Block status through real clients: `nbdinfo --map` over a served RAID-5 prints
/// one extent covering the whole export, of type 0 "data" (the array tracks no
/// holes, so the server claims none), and `qemu-img map --output=json` reports the
/// same single data extent. Both negotiate structured replies and `base:allocation`.
#[test]
fn nbdinfo_map_and_qemu_img_map_show_one_data_extent() {
    if !(have("nbdinfo") && have("qemu-img")) {
        return;
    }
    let dir = scratch("serve-map");
    let volume = raid5_volume(&dir, "3", "8MiB");
    let server = Server::start(&volume, &dir.join("nbd.sock"), &[]);
    let size_bytes: u64 = run(Command::new("nbdinfo").arg("--size").arg(server.uri()))
        .trim()
        .parse()
        .unwrap();
    assert!(size_bytes > 0);
    let map = run(Command::new("nbdinfo").arg("--map").arg(server.uri()));
    eprintln!("nbdinfo --map printed:\n{map}");
    let lines: Vec<Vec<&str>> = map
        .lines()
        .map(|line| line.split_whitespace().collect())
        .collect();
    let size = size_bytes.to_string();
    assert_eq!(lines, vec![vec!["0", size.as_str(), "0", "data"]], "{map}");

    let text = run(Command::new("qemu-img")
        .args(["map", "--output=json"])
        .arg(server.uri()));
    let extents = json(&text);
    let extents = extents.as_array().expect("a JSON list");
    assert_eq!(extents.len(), 1, "{text}");
    assert_eq!(extents[0]["start"], 0, "{text}");
    assert_eq!(extents[0]["length"], size_bytes, "{text}");
    assert_eq!(extents[0]["data"], true, "{text}");
    assert_eq!(extents[0]["zero"], false, "{text}");
    server.stop();
    let _ = std::fs::remove_dir_all(&dir);
}

/// fio random writes with crc32c verification pass on a healthy RAID-5; then one fio
/// run that verifies as it writes (`verify_backlog`) keeps passing while a member
/// fails under it (degraded) and is rebuilt online under it (the rebuild command
/// answers "rebuilding" while fio runs); status ends healthy and scrub finds
/// nothing. Regression (2026-11-27): the first status poll used to be required to
/// see "rebuilding", which a small volume rebuilt before the poll failed on a CI run.
#[test]
fn raid5_fio_verify_healthy_degraded_rebuilding() {
    if !have("fio") {
        return;
    }
    let dir = scratch("serve-fio");
    // 256 MiB members: a rebuild long enough to be seen under load.
    let volume = create(
        &dir,
        &[
            "--level",
            "raid5",
            "--members",
            "5",
            "--member-size",
            "256MiB",
        ],
    );
    let path = volume.to_str().unwrap();
    let server = Server::start(&volume, &dir.join("nbd.sock"), &[]);
    assert_eq!(volume_json(&["status", path])["state"], "healthy");
    fio_verify(&server.uri(), "64m");

    let load = fio(
        &server.uri(),
        &[
            "--rw=randwrite",
            "--bs=4k",
            "--iodepth=8",
            "--size=512m",
            "--time_based",
            "--runtime=5",
            "--verify=crc32c",
            "--verify_backlog=64",
            "--verify_fatal=1",
        ],
    )
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(700));
    run(spinstack().args(["volume", "fail", path, "--member", "2"]));
    let status = volume_json(&["status", path]);
    assert_eq!(status["state"], "degraded", "{status}");
    assert_eq!(status["failed"], serde_json::json!([2]), "{status}");
    std::thread::sleep(std::time::Duration::from_millis(700));
    // The server answers with the state as the rebuild starts; polling alone could
    // miss it on a small volume that is rebuilt before the first poll.
    let started = run(spinstack().args(["volume", "rebuild", path, "--member", "2"]));
    assert!(started.trim_end().ends_with(": rebuilding"), "{started}");
    let mut states = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let state = volume_json(&["status", path])["state"]
            .as_str()
            .unwrap()
            .to_string();
        if states.last() != Some(&state) {
            states.push(state.clone());
        }
        if state == "healthy" {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "rebuild did not finish: {states:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = load.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "fio under failure and rebuild: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        states == ["healthy"] || states == ["rebuilding", "healthy"],
        "{states:?}"
    );
    let status = volume_json(&["status", path]);
    assert!(
        status["serving"]["latency"]["requests"].as_u64().unwrap() > 1000,
        "{status}"
    );
    assert_eq!(scrub_mismatches(&volume), 0, "scrub while serving");
    server.stop();
    assert_eq!(scrub_mismatches(&volume), 0, "scrub at rest");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A block trace converted to fio's iolog (fitted to the export with `--wrap-to`)
/// replays through fio against `serve`: every request of the trace reaches the
/// volume (the server's request count), none fails.
#[test]
fn trace_replays_through_fio_against_serve() {
    if !have("fio") {
        return;
    }
    let dir = scratch("serve-trace");
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../trace/tests/fixtures/msr.csv");
    let iolog = dir.join("replay.iolog");
    run(spinstack()
        .args(["trace", "convert"])
        .arg(&fixture)
        .args([
            "--format",
            "msr",
            "--iolog-version",
            "3",
            "--wrap-to",
            "64MiB",
            "--out",
        ])
        .arg(&iolog));
    let info = json(&run(spinstack()
        .args(["trace", "info"])
        .arg(&fixture)
        .args(["--format", "msr", "--json"])));
    let volume = create(
        &dir,
        &[
            "--level",
            "raid5",
            "--members",
            "3",
            "--member-size",
            "32MiB",
        ],
    );
    let server = Server::start(&volume, &dir.join("nbd.sock"), &[]);
    let text = run(&mut fio(
        &server.uri(),
        &[
            &format!("--read_iolog={}", iolog.display()),
            "--output-format=json",
        ],
    ));
    let report = json(&text[text.find('{').unwrap()..]);
    let job = &report["jobs"][0];
    assert_eq!(job["error"], 0, "{job}");
    let replayed =
        job["read"]["total_ios"].as_u64().unwrap() + job["write"]["total_ios"].as_u64().unwrap();
    assert_eq!(Some(replayed), info["records"].as_u64(), "{info}");
    let served = volume_json(&["status", volume.to_str().unwrap()])["serving"]["latency"]
        ["requests"]
        .as_u64();
    assert!(
        served >= Some(replayed),
        "server saw {served:?} requests for {replayed} replayed"
    );
    server.stop();
    let _ = std::fs::remove_dir_all(&dir);
}

// Guards finding V1 of the hostile test of 2026-11-28: a rebuild that a crash of the
// server interrupted was resumed at assembly (its cursor restored) but nothing drove
// it while served, so the array stayed without redundancy, and `volume rebuild` of
// that member was refused. Proves that a server started on an array left in the
// middle of a rebuild finishes it by itself, and that the data reads back intact. The
// crash is made at rest, deterministically: a rebuild started and stepped, then the
// array dropped without a close (as SIGKILL leaves it).
#[test]
fn a_served_array_finishes_a_rebuild_a_crash_interrupted() {
    let dir = scratch("serve-resume-rebuild");
    let volume = create(
        &dir,
        &[
            "--level",
            "raid5",
            "--members",
            "4",
            "--member-size",
            "8MiB",
            "--chunk",
            "64KiB",
        ],
    );
    let mut data = vec![0u8; 24 << 20];
    spinstack_sim::rng::SplitMix64::new(5).fill_bytes(&mut data);
    {
        use spinstack_store::BlockStore;
        let (mut array, _) = spinstack_array::Array::open(&volume).unwrap();
        array.write(spinstack_sim::units::Lbn(0), &data).unwrap();
        array.fail_member(1).unwrap();
        array.start_rebuild(1).unwrap();
        let step = array.rebuild_step(4).unwrap();
        assert!(!step.done, "the rebuild must be left unfinished");
        drop(array); // a crash: no close
    }
    let server = Server::start(&volume, &dir.join("nbd.sock"), &[]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let finished = loop {
        let status = volume_json(&["status", volume.to_str().unwrap()]);
        if status["state"] == "healthy" {
            break true;
        }
        if std::time::Instant::now() > deadline {
            eprintln!("still not healthy after 60 s: {status}");
            break false;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    server.stop();
    assert!(finished, "the served array did not finish the rebuild");
    let (mut array, _) = spinstack_array::Array::open(&volume).unwrap();
    array.fail_member(2).unwrap(); // the rebuilt member 1 must now carry its share
    let mut back = vec![0u8; data.len()];
    spinstack_store::BlockStore::read(&mut array, spinstack_sim::units::Lbn(0), &mut back).unwrap();
    assert!(back == data, "data differs after the resumed rebuild");
}
