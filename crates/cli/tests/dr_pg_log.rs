//! `spinstack dr --log pg:FILE` end to end through the binary: a pg_waldump dump
//! it cannot read is an error naming the file and the line (exit 1): a missing
//! file, a garbled line, a line that is not UTF-8, a dump cut short.

use std::path::PathBuf;
use std::process::{Command, Output};

const LINE: &str = "rmgr: Heap        len (rec/tot):     72/    72, tx:        736, lsn: 0/0465C420, prev 0/0465C3E0, desc: HOT_UPDATE off 4 xmax 736 flags 0x21 ; new off 5 xmax 0, blkref #0: rel 1663/5/16397 blk 0\n";
const COMMIT: &str = "rmgr: Transaction len (rec/tot):     34/    34, tx:        736, lsn: 0/0465C468, prev 0/0465C420, desc: COMMIT 2026-11-24 05:36:37.897084 UTC\n";

fn dump(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("spinstack-cli-dr-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn dr_on(path: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_spinstack"))
        .args(["dr", "--log", &format!("pg:{}", path.display()), "--json"])
        .output()
        .expect("the binary runs")
}

/// The run failed with exit status 1 and its message contains `expected`.
fn fails_saying(out: &Output, expected: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(expected),
        "expected {expected:?} in {stderr}"
    );
}

// Proves each kind of bad dump is refused with its file and line named.
#[test]
fn bad_dumps_are_named_by_file_and_line() {
    let missing = std::env::temp_dir().join("spinstack-no-such-dump.txt");
    fails_saying(&dr_on(&missing), "spinstack-no-such-dump.txt");

    let garbled = dump(
        "garbled.txt",
        format!("{LINE}{}", LINE.replace("tx:", "tx;")).as_bytes(),
    );
    fails_saying(&dr_on(&garbled), "garbled.txt:2: no `tx:` field");

    // A byte that is never UTF-8, 20 bytes into the third line.
    let mut bytes = format!("{LINE}{COMMIT}{LINE}").into_bytes();
    bytes[LINE.len() + COMMIT.len() + 20] = 0xfe;
    let not_text = dump("not_text.txt", &bytes);
    fails_saying(&dr_on(&not_text), "not_text.txt:3: not UTF-8 text");

    let cut = format!("{LINE}{COMMIT}{}", &LINE[..40]);
    let cut = dump("cut.txt", cut.as_bytes());
    fails_saying(
        &dr_on(&cut),
        "cut.txt:3: the dump ends in the middle of this line (truncated)",
    );
}
