//! dr-batch-interval's evidence for the paper's reading of §3.1 (issue 10): each
//! window studied again with the whole RTO as the log application's budget. What
//! the summary says of it must stay true of the run: that reading gives Table 3's
//! intervals at 32 and 128 MB (not at 512 MB, where it plans a longer interval, nor
//! §4's 40 mode changes a day), and its recoveries overrun the 100 s RTO by the
//! transitions, while the counted plans hold it.
//!
//! Pinned like `pinned.rs` (runs are deterministic; a band is how far a change may
//! move the evidence before the summary's sentences need another look).

use indicatif::ProgressBar;
use spinstack_lab::harness::{RunContext, Scale, DEFAULT_SEED};

/// The column `name` of a CSV table, as numbers.
fn column(csv: &str, name: &str) -> Vec<f64> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    let at = header
        .iter()
        .position(|h| *h == name)
        .unwrap_or_else(|| panic!("no column {name} in {header:?}"));
    lines
        .map(|line| {
            line.split(',')
                .nth(at)
                .and_then(|cell| cell.parse().ok())
                .unwrap_or_else(|| panic!("{name}: not a number in `{line}`"))
        })
        .collect()
}

fn near(what: &str, ours: f64, pinned: f64, fraction: f64) {
    assert!(
        (ours - pinned).abs() <= fraction * pinned,
        "{what}: now {ours}, pinned {pinned} ±{}% (seed {DEFAULT_SEED})",
        fraction * 100.0
    );
}

// Proves the paper's reading reproduces Table 3's 32 and 128 MB intervals, that its
// recoveries exceed the 100 s RTO, and that the plans the claims count keep every
// recovery within it. (Until the timeline's warm-up cycle, 2026-11-28, it matched
// the 512 MB row and the 40 mode changes a day instead of the 128 MB row: 2,154 s
// and 40.1, now 2,951 s and 29.3; see pinned/HISTORY.md.)
#[test]
fn the_papers_reading_matches_table_3_at_32_and_128_mb_and_overruns_the_rto() {
    let progress = ProgressBar::hidden();
    let context = RunContext {
        scale: Scale::PAPER,
        seed: DEFAULT_SEED,
        progress: &progress,
    };
    let experiment = spinstack_lab::find("dr-batch-interval").expect("registered");
    let outcome = experiment.run(&context).expect("dr-batch-interval runs");
    let csv = outcome.data.to_csv();
    let windows = column(&csv, "window_mb");
    assert_eq!(windows, [32.0, 128.0, 512.0]);
    let read = column(&csv, "paper_reading_batch_interval_s");
    near("paper's reading, T_wnd 32 MB", read[0], 531.09, 0.03);
    near("paper's reading, T_wnd 128 MB", read[1], 1052.3, 0.03);
    near("paper's reading, T_wnd 512 MB", read[2], 2950.8, 0.03);
    let per_day = column(&csv, "paper_reading_mode_changes_per_day");
    near(
        "paper's reading, mode changes a day",
        per_day[2],
        29.28,
        0.03,
    );
    for (mb, worst) in windows
        .iter()
        .zip(column(&csv, "paper_reading_worst_recovery_s"))
    {
        assert!(
            worst > 100.0,
            "{mb} MB: the paper's reading recovered within the RTO ({worst} s); the summary \
             says it overruns it"
        );
    }
    assert!(
        column(&csv, "rto_violations").iter().all(|&v| v == 0.0),
        "a counted plan let a failover trial miss the RTO"
    );
}
