//! `spinstack dr` end to end through the binary, on generated TPC-C logs small
//! enough for a test.

use std::process::Command;

// Proves a window larger than the measured log is reported as not studied, with the
// transactions it would need, and without an R_apl (before, the report printed an
// R_apl measured on less than one window: 3·10¹⁵ B/s in one case).
#[test]
fn a_window_larger_than_the_log_is_not_studied() {
    let out = Command::new(env!("CARGO_BIN_EXE_spinstack"))
        .args([
            "dr",
            "--transactions",
            "1000",
            "--window",
            "1",
            "--trials",
            "1",
        ])
        .output()
        .expect("the binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("secondary not studied"), "{stdout}");
    assert!(
        stdout.contains("a log of at least 10000 transactions"),
        "{stdout}"
    );
    assert!(!stdout.contains("R_apl"), "{stdout}");
}

// Guards inputs finding 25: `--window 0.5` ran and was echoed as "window 0 MB", and
// `--window 18446744073709551615` as "window 17592186044416 MB" (the value
// changed). Proves a fraction and a window past 1 TiB are refused, naming the
// option and the range, before anything runs.
#[test]
fn a_window_that_cannot_be_echoed_as_given_is_refused() {
    for window in ["0.5", "0", "18446744073709551615", "1048577", "-1"] {
        let out = Command::new(env!("CARGO_BIN_EXE_spinstack"))
            .args(["dr", "--transactions", "1000", "--trials", "1"])
            .arg(format!("--window={window}"))
            .output()
            .expect("the binary runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{window}: {stderr}");
        assert!(
            stderr.contains("--window") && stderr.contains("1048576"),
            "{window}: {stderr}"
        );
    }
}
