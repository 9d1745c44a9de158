//! A drive named with its host link (`atlas10k@80MB/s`) through the binary: the link
//! is what `simulate` times, on a drive and on a volume file's members, and a bad link
//! is refused naming the reference.

use std::process::Command;

fn spinstack(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_spinstack"))
        .args(args)
        .output()
        .expect("the binary runs")
}

/// Mean response time of 500 random 64 KiB reads, from `simulate --json`.
fn mean_ms(target: &[&str]) -> (f64, serde_json::Value) {
    let mut args = vec!["simulate"];
    args.extend_from_slice(target);
    args.extend_from_slice(&["--count", "500", "--size-kib", "64", "--json"]);
    let out = spinstack(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    (
        report["response"]["mean_ms"].as_f64().expect("mean"),
        report,
    )
}

// Proves the link suffix reaches the model: the default Atlas 10K's extracted link
// (0.099 ms per sector) against 80 MB/s (0.0064 ms) saves, per 128-sector read, more
// than the fast link's whole transfer and at most the two links' difference over the
// whole request (the part of the transfer the media work hides is not saved).
#[test]
fn simulate_times_the_named_link() {
    let (slow, _) = mean_ms(&["--disk", "atlas10k"]);
    let (fast, report) = mean_ms(&["--disk", "atlas10k@80MB/s"]);
    assert_eq!(report["disk"], "atlas10k@80MB/s");
    let saved = slow - fast;
    assert!(saved > 128.0 * 0.0064, "saved {saved} ms");
    assert!(saved <= 128.0 * (0.099 - 0.0064) + 1e-6, "saved {saved} ms");
}

// Proves a volume file's members take the suffix too (the same volume is faster with
// it) and a bad link is exit status 1 with the reference in the message.
#[test]
fn volume_members_take_a_link_and_bad_links_are_refused() {
    let directory =
        std::env::temp_dir().join(format!("spinstack-host-link-cli-{}", std::process::id()));
    std::fs::create_dir_all(&directory).expect("temp dir");
    let volume = |name: &str, member: &str| {
        let path = directory.join(name);
        let text = format!(
            "level = \"raid0\"\nchunk = \"64KiB\"\nmembers = [\"{member}\", \"{member}\"]\n"
        );
        std::fs::write(&path, text).expect("write");
        path.display().to_string()
    };
    let plain = volume("plain.toml", "atlas10k");
    let linked = volume("linked.toml", "atlas10k@80MB/s");
    let (slow, _) = mean_ms(&["--volume", &plain]);
    let (fast, _) = mean_ms(&["--volume", &linked]);
    assert!(
        fast < slow - 128.0 * 0.0064,
        "linked {fast} ms, plain {slow} ms"
    );

    let bad = volume("bad.toml", "atlas10k@0MB/s");
    let out = spinstack(&["simulate", "--volume", &bad, "--count", "10"]);
    assert_eq!(out.status.code(), Some(1));
    let message = String::from_utf8_lossy(&out.stderr);
    assert!(message.contains("atlas10k@0MB/s"), "{message}");
    std::fs::remove_dir_all(&directory).ok();
}
