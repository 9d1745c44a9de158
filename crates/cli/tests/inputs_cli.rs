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
