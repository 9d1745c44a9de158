//! `serve --timing model` paces replies by the drive model: fio's mean 4 KiB random-read
//! latency at queue depth 1 on a single Atlas 10K export is within 10% of what
//! `spinstack simulate` predicts for the same workload (the same drive, uniform 4 KiB
//! reads over the whole capacity, one at a time). The same test run with `--timing
//! none` shows the model is what makes the latency (tmpfs answers in microseconds).

mod common;
use common::*;

const ATLAS10K_SECTORS: u64 = 17_966_953;

fn fio_mean_latency_ms(uri: &str, size_bytes: u64, ios: u32) -> f64 {
    let text = run(&mut fio(
        uri,
        &[
            "--rw=randread",
            "--bs=4k",
            "--iodepth=1",
            &format!("--size={size_bytes}"),
            &format!("--number_ios={ios}"),
            "--randseed=7",
            "--output-format=json",
        ],
    ));
    let report = json(&text[text.find('{').expect("fio JSON")..]);
    report["jobs"][0]["read"]["lat_ns"]["mean"]
        .as_f64()
        .expect("mean latency")
        / 1e6
}

#[test]
fn model_paced_latency_matches_the_simulator() {
    if !have("fio") {
        return;
    }
    let dir = scratch("serve-timing");
    // Whole 4 KiB blocks of the drive: fio's requests stay inside the model's capacity.
    let size_bytes = ATLAS10K_SECTORS / 8 * 4096;
    let volume = create(
        &dir,
        &[
            "--level",
            "single",
            "--members",
            "1",
            "--member-size",
            &size_bytes.to_string(),
            "--disk",
            "atlas10k",
        ],
    );
    let simulated = json(&run(spinstack().args([
        "simulate",
        "--disk",
        "atlas10k",
        "--pattern",
        "random",
        "--size-kib",
        "4",
        "--count",
        "4000",
        "--queue-depth",
        "1",
        "--json",
    ])));
    let simulated_ms = simulated["response"]["mean_ms"].as_f64().unwrap();

    let server = Server::start(&volume, &dir.join("nbd.sock"), &["--timing", "model"]);
    let paced_ms = fio_mean_latency_ms(&server.uri(), size_bytes, 400);
    let status = volume_json(&["status", volume.to_str().unwrap()]);
    server.stop();
    let server = Server::start(&volume, &dir.join("nbd.sock"), &["--timing", "none"]);
    let unpaced_ms = fio_mean_latency_ms(&server.uri(), size_bytes, 400);
    server.stop();

    eprintln!(
        "simulate {simulated_ms:.3} ms, fio paced {paced_ms:.3} ms, fio unpaced {unpaced_ms:.3} ms"
    );
    let relative = (paced_ms - simulated_ms).abs() / simulated_ms;
    assert!(
        relative < 0.10,
        "paced {paced_ms:.3} ms vs simulated {simulated_ms:.3} ms ({:.1}% off)",
        relative * 100.0
    );
    assert!(
        unpaced_ms < simulated_ms / 5.0,
        "unpaced {unpaced_ms:.3} ms should be far below the model"
    );
    let model = &status["serving"]["model"];
    let utilisation = model["members"][0]["utilisation"].as_f64().unwrap_or(0.0);
    assert!(
        utilisation > 0.5,
        "one request at a time keeps the drive busy most of the time: {status}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The model's failed members, as `volume status` reports them while serving.
fn model_failed(volume: &str) -> serde_json::Value {
    volume_json(&["status", volume])["serving"]["model"]["failed_members"].clone()
}

// Proves the pacing model follows a member through failure and online rebuild:
// `volume fail` has the model time member 1 as failed; the rebuild's reads go
// through the model (every stripe's data read once from the other members, so the
// rebuild takes the modelled drives' time and loads them as clients would see);
// and once `volume rebuild` ends the model times a new drive there (no failed
// members). Before, the model kept timing a rebuilt member as failed until the
// server restarted, so a healthy array was paced as degraded, and a rebuild cost
// the model nothing (noticed 2026-11-28).
#[test]
fn the_model_follows_a_member_through_fail_and_rebuild() {
    let dir = scratch("serve-timing-rebuild");
    let volume = raid5_volume(&dir, "3", "8MiB");
    let path = volume.to_str().unwrap();
    let server = Server::start(&volume, &dir.join("nbd.sock"), &["--timing", "model"]);
    assert_eq!(model_failed(path), serde_json::json!([]));
    run(spinstack().args(["volume", "fail", path, "--member", "1"]));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while model_failed(path) != serde_json::json!([1]) {
        assert!(
            std::time::Instant::now() < deadline,
            "{}",
            model_failed(path)
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    run(spinstack().args(["volume", "rebuild", path, "--member", "1"]));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let status = volume_json(&["status", path]);
        let failed = &status["serving"]["model"]["failed_members"];
        if status["state"] == "healthy" && *failed == serde_json::json!([]) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{status}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let status = volume_json(&["status", path]);
    let model = &status["serving"]["model"];
    let capacity_sectors = status["capacity_bytes"].as_u64().unwrap() / 512;
    assert_eq!(model["rebuild_sectors"], capacity_sectors, "{status}");
    for survivor in [0, 2] {
        assert!(
            model["members"][survivor]["requests"].as_u64().unwrap() > 0,
            "{status}"
        );
    }
    server.stop();
    let _ = std::fs::remove_dir_all(&dir);
}
