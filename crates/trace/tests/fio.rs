//! The iolog writer's output is accepted by the installed fio: `fio
//! --ioengine=null --read_iolog=FILE` exits 0, reports no bad iolog line, and
//! issues exactly the reads, writes and syncs written (versions 2 and 3). Also
//! the lines themselves, and the errors for what fio cannot read. Skips, saying
//! so, when fio is absent.

use spinstack_sim::request::Operation;
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors};
use spinstack_trace::fio::{IologVersion, IologWriter};
use spinstack_trace::TraceRecord;
use std::process::Command;

fn record(arrival_us: u64, operation: Operation, lbn: u64, sectors: u64) -> TraceRecord {
    TraceRecord {
        arrival: Nanoseconds(arrival_us * 1_000),
        device: 0,
        operation,
        lbn: Lbn(lbn),
        sectors: Sectors(sectors),
    }
}

fn sample() -> Vec<TraceRecord> {
    vec![
        record(0, Operation::Read, 0, 8),
        record(150, Operation::Write, 2048, 16),
        record(150, Operation::Read, 100, 1),
        record(900, Operation::Flush, 0, 0),
        record(2_000, Operation::Write, 8, 8),
    ]
}

fn iolog(version: IologVersion, file: &str, records: &[TraceRecord]) -> String {
    let mut writer = IologWriter::new(Vec::new(), version, file).unwrap();
    for record in records {
        writer.write(record).unwrap();
    }
    String::from_utf8(writer.finish().unwrap()).unwrap()
}

// Proves the exact lines of both versions: header, add/open, byte offsets and
// lengths, sync for a flush, v3 stamps of arrival_us + 1, and close.
#[test]
fn lines_of_both_versions() {
    let records = &sample()[..4];
    assert_eq!(
        iolog(IologVersion::V2, "/dev/sdz", records),
        "fio version 2 iolog\n/dev/sdz add\n/dev/sdz open\n/dev/sdz read 0 4096\n\
         /dev/sdz write 1048576 8192\n/dev/sdz read 51200 512\n/dev/sdz sync 0 0\n/dev/sdz close\n"
    );
    assert_eq!(
        iolog(IologVersion::V3, "/dev/sdz", records),
        "fio version 3 iolog\n1 /dev/sdz add\n1 /dev/sdz open\n1 /dev/sdz read 0 4096\n\
         151 /dev/sdz write 1048576 8192\n151 /dev/sdz read 51200 512\n901 /dev/sdz sync 0 0\n\
         901 /dev/sdz close\n"
    );
}

// Proves what fio could not read is refused: a length past 32 bits, a file name
// with a space or past 256 bytes.
#[test]
fn refuses_what_fio_cannot_read() {
    let mut writer = IologWriter::new(Vec::new(), IologVersion::V2, "/dev/sdz").unwrap();
    let huge = record(0, Operation::Read, 0, (1 << 23) + 1);
    assert!(writer
        .write(&huge)
        .unwrap_err()
        .to_string()
        .contains("32-bit"));
    assert!(IologWriter::new(Vec::new(), IologVersion::V2, "a b").is_err());
    assert!(IologWriter::new(Vec::new(), IologVersion::V2, &"x".repeat(257)).is_err());
}

// Proves fio accepts both versions and issues exactly the I/Os written.
#[test]
fn fio_replays_the_log() {
    if Command::new("fio").arg("--version").output().is_err() {
        eprintln!("SKIP: fio is not installed; cannot check that it accepts the iolog");
        return;
    }
    let dir = std::env::temp_dir().join(format!("spinstack-trace-fio-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let device = dir.join("device");
    for version in [IologVersion::V2, IologVersion::V3] {
        let path = dir.join(format!("v{}.iolog", version.number()));
        std::fs::write(&path, iolog(version, device.to_str().unwrap(), &sample())).unwrap();
        let out = Command::new("fio")
            .args([
                "--name=t",
                "--ioengine=null",
                "--size=16m",
                "--output-format=json",
            ])
            .arg(format!("--read_iolog={}", path.display()))
            .arg(format!("--filename={}", device.display()))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "fio failed on {}: {stderr}",
            path.display()
        );
        assert!(!stderr.contains("bad iolog"), "{stderr}");
        let report: serde_json::Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|error| {
                panic!(
                    "fio's JSON: {error}: {}",
                    String::from_utf8_lossy(&out.stdout)
                )
            });
        let job = &report["jobs"][0];
        assert_eq!(job["error"], 0, "{job}");
        assert_eq!(job["read"]["total_ios"], 2, "reads of {}", path.display());
        assert_eq!(job["write"]["total_ios"], 2, "writes of {}", path.display());
        assert_eq!(job["sync"]["total_ios"], 1, "syncs of {}", path.display());
    }
    std::fs::remove_dir_all(&dir).ok();
}
