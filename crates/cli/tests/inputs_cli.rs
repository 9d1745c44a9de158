//! Hostile command-line values through the binary (inputs findings): each is
//! refused with exit status 1 or 2, naming the option and what is wrong, before
//! any work is done.

use std::process::Command;

fn refusal(words: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_spinstack"))
        .args(words)
        .output()
        .expect("the binary runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        matches!(out.status.code(), Some(1 | 2)),
        "{words:?} was not refused ({}): {stderr}",
        out.status
    );
    stderr
}

// Guards inputs finding 25 (negative numbers on the CLI): `--read-fraction -0.1`
// said "unexpected argument '-0' found". Proves a negative value reaches each
// numeric option's own check, whose message names the option (and for the
// ranged ones the range). The old binary failed every row with clap's message.
#[test]
fn negative_numbers_get_the_options_own_message() {
    let rows: [(&[&str], &str); 11] = [
        (
            &["simulate", "--disk", "atlas10k", "--read-fraction", "-0.1"],
            "--read-fraction must be between 0 and 1, got -0.1",
        ),
        (
            &["simulate", "--disk", "atlas10k", "--count", "-1"],
            "'--count <COUNT>'",
        ),
        (
            &["simulate", "--disk", "atlas10k", "--queue-depth", "-1"],
            "'--queue-depth <QUEUE_DEPTH>'",
        ),
        (&["dr", "--rto", "-1"], "--rto must be above 0"),
        (
            &["dr", "--latency-ms", "-1"],
            "--latency-ms must be above 0",
        ),
        (&["dr", "--window", "-1"], "--window \"-1\""),
        (
            &["dr", "--transactions", "-5"],
            "'--transactions <TRANSACTIONS>'",
        ),
        (
            &[
                "dr", "plan", "--r-gen", "-1", "--r-apl", "2000", "--rto", "100",
            ],
            "--r-gen must be between 1 and",
        ),
        (
            &[
                "dr", "plan", "--r-gen", "1000", "--r-apl", "-0.5", "--rto", "100",
            ],
            "--r-apl must be between 1 and",
        ),
        (
            &[
                "dr", "plan", "--r-gen", "1000", "--r-apl", "2000", "--rto", "-1",
            ],
            "--rto must be above 0",
        ),
        (
            &["extract", "--disk", "atlas10k", "--regions", "-1"],
            "'--regions <REGIONS>'",
        ),
    ];
    for (words, says) in rows {
        let stderr = refusal(words);
        assert!(stderr.contains(says), "{words:?}: {stderr}");
        assert!(
            !stderr.contains("unexpected argument"),
            "{words:?}: {stderr}"
        );
    }
}

/// What `spinstack simulate --disk atlas10k --count COUNT` shows on a terminal
/// (run under `script`, which gives it a pseudo-terminal); None when `script`
/// is not installed.
fn simulate_on_a_terminal(count: u64) -> Option<String> {
    let line = format!(
        "'{}' simulate --disk atlas10k --count {count}",
        env!("CARGO_BIN_EXE_spinstack")
    );
    let out = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .output();
    match out {
        Ok(out) if out.status.success() => Some(String::from_utf8_lossy(&out.stdout).into_owned()),
        Ok(out) => panic!("{line} under script failed: {out:?}"),
        Err(_) => {
            eprintln!("SKIP: `script` (util-linux) is not installed; no terminal to test on");
            None
        }
    }
}

// Guards inputs finding 25 (huge counts): `simulate --count 18446744073709551615`
// ran for hours with no sign of progress. Proves a synthetic run longer than a
// second draws a bar of completed requests against --count on a terminal, a
// short run draws none, and none reaches a standard error that is not a
// terminal. The old binary printed no bar, so the first assertion fails on it.
#[test]
fn a_long_simulation_shows_its_progress_on_a_terminal() {
    let Some(long) = simulate_on_a_terminal(4_000_000) else {
        return;
    };
    assert!(
        long.contains("simulating: ") && long.contains("/4000000 requests"),
        "{long}"
    );
    let short = simulate_on_a_terminal(20_000).unwrap();
    assert!(!short.contains("simulating: "), "{short}");
    let piped = Command::new(env!("CARGO_BIN_EXE_spinstack"))
        .args(["simulate", "--disk", "atlas10k", "--count", "4000000"])
        .output()
        .unwrap();
    assert!(piped.status.success());
    assert!(
        piped.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&piped.stderr)
    );
}

// Guards inputs finding 25 (huge float echoes): `--read-fraction 1e-300` was
// echoed in the report's header as a 300-digit decimal. Proves it is echoed in
// exponent form, and an ordinary fraction as written.
#[test]
fn a_tiny_read_fraction_is_echoed_short() {
    for (given, shown) in [
        ("1e-300", "read fraction 1e-300,"),
        ("0.25", "read fraction 0.25,"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_spinstack"))
            .args([
                "simulate",
                "--disk",
                "atlas10k",
                "--count",
                "3",
                "--read-fraction",
                given,
            ])
            .output()
            .expect("the binary runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains(shown),
            "{given}: {stdout}"
        );
    }
}
