//! `spinstack simulate --trace` and `spinstack trace info|convert` end to end
//! through the binary, on the trace crate's hand-made fixtures: every format
//! replays on a catalog drive (open and closed loop) and on a volume; a bad line
//! and an address past the capacity are errors naming file:line (exit 1), and
//! `--wrap` replays the latter; `convert` writes an iolog fio replays.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../trace/tests/fixtures")
        .join(name)
}

fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("spinstack-cli-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn spinstack(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_spinstack"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn json_of(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

const FORMATS: [(&str, &str, u64); 4] = [
    ("msr", "msr.csv", 3),
    ("spc", "spc.csv", 3),
    ("blkparse", "blkparse.txt", 4),
    ("disksim", "disksim.trace", 3),
];

// Proves each format replays on a catalog drive by its times: every record of the
// first device completes, with positive response times, and the JSON says so.
#[test]
fn every_format_replays_open_loop() {
    for (format, file, records) in FORMATS {
        let trace = fixture(file);
        let out = spinstack(&[
            "simulate",
            "--disk",
            "maxtor10kv-czk",
            "--trace",
            trace.to_str().unwrap(),
            "--format",
            format,
            "--json",
        ]);
        let report = json_of(&out);
        assert_eq!(report["mode"], "open loop", "{format}");
        assert_eq!(report["records"], records, "{format}: {report}");
        assert_eq!(report["completed"], records, "{format}: {report}");
        assert!(
            report["response"]["mean_ms"].as_f64().unwrap() > 0.0,
            "{format}"
        );
        assert_eq!(report["past_capacity"], "error");
    }
}

// Proves the closed loop at a queue depth, --limit and --device: MSR device 1
// holds one record; --limit 2 of device 0 replays two.
#[test]
fn closed_loop_limit_and_device() {
    let trace = fixture("msr.csv");
    let trace = trace.to_str().unwrap();
    let base = [
        "simulate", "--disk", "atlas10k", "--trace", trace, "--format", "msr", "--json",
    ];
    let report = json_of(&spinstack(
        &[&base[..], &["--queue-depth", "2", "--limit", "2"]].concat(),
    ));
    assert_eq!(report["mode"], "closed loop");
    assert_eq!(report["queue_depth"], 2);
    assert_eq!(report["completed"], 2);
    let report = json_of(&spinstack(&[&base[..], &["--device", "1"]].concat()));
    assert_eq!(report["records"], 1);
    assert_eq!(report["device"], "1");
    assert_eq!(report["skipped_other_devices"], 3);
}

// Guards inputs finding 25: `--limit 0` read nothing and then said "the trace holds
// no records", true but misleading. Proves it is refused up front, naming the
// option, before the trace is opened.
#[test]
fn a_limit_of_zero_is_refused_up_front() {
    let out = spinstack(&[
        "simulate",
        "--disk",
        "atlas10k",
        "--trace",
        "/nonexistent/trace.csv",
        "--format",
        "msr",
        "--limit",
        "0",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("--limit") && stderr.contains("would replay nothing"),
        "{stderr}"
    );
    assert!(!stderr.contains("nonexistent"), "{stderr}");
}

// Proves a trace replays on a volume, whose members' traffic is reported.
#[test]
fn replays_on_a_volume() {
    let volume = temp_dir().join("raid0.toml");
    std::fs::write(
        &volume,
        "level = \"raid0\"\nchunk = \"64KiB\"\nmembers = [\"atlas10k\", \"atlas10k\"]\n",
    )
    .unwrap();
    let trace = fixture("blkparse.txt");
    let report = json_of(&spinstack(&[
        "simulate",
        "--volume",
        volume.to_str().unwrap(),
        "--trace",
        trace.to_str().unwrap(),
        "--format",
        "blkparse",
        "--json",
    ]));
    assert_eq!(report["completed"], 4, "{report}");
    let members = report["volume"]["members"].as_array().unwrap();
    let requests: u64 = members
        .iter()
        .map(|m| m["requests"].as_u64().unwrap())
        .sum();
    assert!(requests >= 3, "{report}");
}

// Proves a bad trace line stops the replay with exit 1 and names file:line and
// the field; an address past the capacity names its line too, and --wrap replays
// it, counting the wrapped requests.
#[test]
fn bad_lines_and_capacity_name_the_line() {
    let bad = temp_dir().join("bad.csv");
    std::fs::write(&bad, "0,1,512,r,0.1\n0,1,512,q,0.2\n").unwrap();
    let out = spinstack(&[
        "simulate",
        "--disk",
        "atlas10k",
        "--trace",
        bad.to_str().unwrap(),
        "--format",
        "spc",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("{}:2: field 4 (Opcode)", bad.display())),
        "{stderr}"
    );

    // atlas10k holds 17966953 sectors; the SPC fixture's first line is past that.
    let trace = fixture("spc.csv");
    let trace = trace.to_str().unwrap();
    let out = spinstack(&[
        "simulate", "--disk", "atlas10k", "--trace", trace, "--format", "spc",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("{trace}:1: ")) && stderr.contains("capacity"),
        "{stderr}"
    );
    let report = json_of(&spinstack(&[
        "simulate", "--disk", "atlas10k", "--trace", trace, "--format", "spc", "--wrap", "--json",
    ]));
    assert_eq!(report["past_capacity"], "wrap");
    assert_eq!(report["wrapped"], 2);
    assert_eq!(report["completed"], 3);
}

// Proves `trace info` counts the blkparse fixture's requests by kind.
#[test]
fn info_counts() {
    let trace = fixture("blkparse.txt");
    let info = json_of(&spinstack(&[
        "trace",
        "info",
        trace.to_str().unwrap(),
        "--format",
        "blkparse",
        "--json",
    ]));
    assert_eq!(info["records"], 4);
    assert_eq!(
        (info["reads"].as_u64(), info["writes"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(
        (info["trims"].as_u64(), info["flushes"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(info["devices"][0], "8,0");
    assert_eq!(info["lbn_end"], 223498);
}

// Proves `trace convert` writes an iolog fio replays: exit 0, no bad line, and
// the DiskSim fixture's 2 reads and 2 writes issued (versions 2 and 3).
#[test]
fn convert_output_is_accepted_by_fio() {
    if Command::new("fio").arg("--version").output().is_err() {
        eprintln!("SKIP: fio is not installed; cannot check that it accepts the converted iolog");
        return;
    }
    let dir = temp_dir();
    let device = dir.join("device");
    for version in ["2", "3"] {
        let iolog = dir.join(format!("disksim-v{version}.iolog"));
        let trace = fixture("disksim.trace");
        let out = spinstack(&[
            "trace",
            "convert",
            trace.to_str().unwrap(),
            "--format",
            "disksim",
            "--to",
            "fio-iolog",
            "--out",
            iolog.to_str().unwrap(),
            "--device-file",
            device.to_str().unwrap(),
            "--iolog-version",
            version,
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let out = Command::new("fio")
            .args([
                "--name=t",
                "--ioengine=null",
                "--size=64m",
                "--output-format=json",
            ])
            .arg(format!("--read_iolog={}", iolog.display()))
            .arg(format!("--filename={}", device.display()))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && !stderr.contains("bad iolog"),
            "{stderr}"
        );
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["jobs"][0]["read"]["total_ios"], 2, "v{version}");
        assert_eq!(report["jobs"][0]["write"]["total_ios"], 2, "v{version}");
    }
}

// Proves a trace with no requests for the replay is an error, not statistics of
// nothing (before, `simulate --trace` of an empty file printed "mean 0.000" and
// exit 0, and `convert` wrote an iolog of no I/Os); `info` just says 0 records.
#[test]
fn an_empty_trace_is_not_replayed_or_converted() {
    let dir = temp_dir();
    let empty = dir.join("empty.csv");
    std::fs::write(&empty, "").unwrap();
    let path = empty.to_str().unwrap();
    let out = spinstack(&[
        "simulate", "--disk", "atlas10k", "--trace", path, "--format", "msr",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("no requests to replay"),
        "{stderr}"
    );
    let iolog = dir.join("empty.iolog");
    let out = spinstack(&[
        "trace",
        "convert",
        "--format",
        "msr",
        path,
        "--out",
        iolog.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("no I/Os to write"),
        "{stderr}"
    );
    assert!(!iolog.exists(), "no empty iolog is left behind");
    let out = spinstack(&["trace", "info", "--format", "msr", path]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.trim_end().ends_with("0 records"),
        "{stdout}"
    );
}

// Guards input finding 12 of the hostile test of 2026-11-28: a conversion that failed
// at line 3 exited 1 but left at `--out` a well-formed iolog of lines 1 and 2 in place
// of the file that was there. Proves a failed conversion leaves the target as it was
// (and no partial file beside it), and a good one replaces it whole.
#[test]
fn a_failed_conversion_leaves_the_target_as_it_was() {
    let dir = temp_dir().join("convert-atomic");
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.disksim");
    std::fs::write(&bad, "0.0 0 100 8 1\n1.0 0 200 8 1\n2.0 0 300 8 zz\n").unwrap();
    let target = dir.join("out.iolog");
    std::fs::write(&target, "previous content\n").unwrap();
    let args = |input: &Path| {
        vec![
            "trace".to_string(),
            "convert".into(),
            input.to_str().unwrap().into(),
            "--format".into(),
            "disksim".into(),
            "--to".into(),
            "fio-iolog".into(),
            "--out".into(),
            target.to_str().unwrap().into(),
        ]
    };
    let bad_args = args(&bad);
    let out = spinstack(&bad_args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(":3:"),
        "{out:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "previous content\n"
    );
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|name| name.to_string_lossy().contains("partial"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    let good = dir.join("good.disksim");
    std::fs::write(&good, "0.0 0 100 8 1\n1.0 0 200 8 1\n").unwrap();
    let good_args = args(&good);
    let out = spinstack(&good_args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{out:?}");
    let written = std::fs::read_to_string(&target).unwrap();
    assert!(written.starts_with("fio version"), "{written}");
    assert_eq!(written.matches(" read ").count(), 2, "{written}");
}

// Guards inputs finding 25: `trace convert --device 7` (a device the trace does not
// have) to standard output wrote an iolog header, then failed. Proves the failure
// writes nothing to standard output.
#[test]
fn a_conversion_of_no_records_writes_nothing_to_standard_output() {
    let dir = temp_dir();
    let trace = dir.join("two-records.dsk");
    std::fs::write(&trace, "0.0 0 100 8 1\n1.0 0 200 8 0\n").unwrap();
    let out = spinstack(&[
        "trace",
        "convert",
        "--format",
        "disksim",
        trace.to_str().unwrap(),
        "--device",
        "7",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("no I/Os to write"),
        "{stderr}"
    );
    assert!(
        out.stdout.is_empty(),
        "{:?}",
        String::from_utf8_lossy(&out.stdout)
    );
}

// Guards inputs finding 25 (`--device-file` with a space or newline): the name was
// refused as "record 0 cannot be written as fio iolog: ...", as if a record were
// wrong. Proves it is refused up front, naming the option: the trace given does
// not even exist (an error about it would mean it was opened first), and nothing
// is written at --out.
#[test]
fn a_device_file_fio_cannot_read_is_refused_before_the_trace() {
    let dir = temp_dir().join("device-file");
    std::fs::create_dir_all(&dir).unwrap();
    let missing_trace = dir.join("no-such-trace.csv");
    let target = dir.join("out.iolog");
    for name in ["a b", "a\nb", ""] {
        let out = spinstack(&[
            "trace",
            "convert",
            "--format",
            "msr",
            missing_trace.to_str().unwrap(),
            "--device-file",
            name,
            "--out",
            target.to_str().unwrap(),
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name:?}: {stderr}");
        assert!(
            stderr.contains(&format!("--device-file {name:?} must be one word")),
            "{name:?}: {stderr}"
        );
        assert!(!stderr.contains("record 0"), "{name:?}: {stderr}");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "{name:?}");
    }
}

// Guards inputs finding 25 (`trace convert --out /proc/version` said "cannot
// write: Input/output error" without a file name). Proves every failure to open
// or write the output names it: a --out that cannot be created, a --out whose
// writes fail (a 512-byte file-size limit, its signal ignored so the write
// fails with EFBIG instead of killing the process; before, this error was
// blamed on the trace's line), and a full standard output.
#[test]
fn output_errors_name_the_output() {
    let dir = temp_dir().join("output-errors");
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("big.dsk");
    let lines: String = (0..300)
        .map(|i| format!("{i}.0 0 {} 8 1\n", i * 8))
        .collect();
    std::fs::write(&trace, lines).unwrap();
    let trace = trace.to_str().unwrap();
    let convert = ["trace", "convert", "--format", "disksim", trace];
    let stderr_of = |out: Output| {
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let uncreatable = stderr_of(spinstack(
        &[&convert[..], &["--out", "/proc/version"]].concat(),
    ));
    assert!(
        uncreatable.contains("--out /proc/version: "),
        "{uncreatable}"
    );
    let limited = dir.join("limited.iolog");
    let script = format!(
        "trap '' XFSZ; ulimit -f 1; exec \"$0\" {} --out {}",
        convert.join(" "),
        limited.display()
    );
    let out = Command::new("sh")
        .args(["-c", &script, env!("CARGO_BIN_EXE_spinstack")])
        .output()
        .unwrap();
    let too_large = stderr_of(out);
    assert!(
        too_large.contains(&format!("--out {}: cannot write", limited.display())),
        "{too_large}"
    );
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_spinstack"))
        .args(convert)
        .stdout(full)
        .output()
        .unwrap();
    let no_space = stderr_of(out);
    assert!(
        no_space.contains("standard output: cannot write"),
        "{no_space}"
    );
}

// Guards a defect found while checking inputs finding 25: `--out` was always
// written to a temporary file renamed over it, so a FIFO, a device or a symlink
// at --out was replaced by a regular file (run as root, `--out /dev/null`
// replaced /dev/null). Proves a FIFO is written in place and stays a FIFO, and a
// symlink to a file stays a link while the file it names gets the iolog. On the
// old code both assertions on the file types fail.
#[test]
fn out_keeps_a_fifo_and_a_symlink() {
    use std::os::unix::fs::FileTypeExt;
    let dir = temp_dir().join("out-kinds");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let trace = fixture("disksim.trace");
    let convert = |out: &Path| {
        spinstack(&[
            "trace",
            "convert",
            "--format",
            "disksim",
            trace.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
    };
    let fifo = dir.join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let reading = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let out = convert(&fifo);
    assert!(out.status.success(), "{out:?}");
    let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(kind.is_fifo(), "--out replaced the FIFO: {kind:?}");
    assert!(reading.join().unwrap().starts_with("fio version 2 iolog"));
    let file = dir.join("file.iolog");
    std::fs::write(&file, "previous content\n").unwrap();
    let link = dir.join("link.iolog");
    std::os::unix::fs::symlink(&file, &link).unwrap();
    let out = convert(&link);
    assert!(out.status.success(), "{out:?}");
    let kind = std::fs::symlink_metadata(&link).unwrap().file_type();
    assert!(kind.is_symlink(), "--out replaced the link: {kind:?}");
    let written = std::fs::read_to_string(&file).unwrap();
    assert!(written.starts_with("fio version 2 iolog"), "{written}");
}
