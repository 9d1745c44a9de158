//! `spinstack dr`: the power-aware disaster-recovery study of one configuration
//! (Goda and Kitsuregawa): the primary's log generation rate, the secondary's
//! application rate with eager compaction, the batch plan, the energy against a
//! conventional secondary, and failover trials. `spinstack dr plan` prints the
//! batch plan alone for given rates.

use anyhow::Context;
use spinstack_replication::pgwal;
use spinstack_replication::plan::{plan, PlanInput};
use spinstack_replication::site::{Site, SiteConfig, Workload};
use spinstack_replication::study::{study_point, PointConfig, PointReport};
use spinstack_sim::device::StandbyLevel;
use spinstack_sim::units::Nanoseconds;
use std::path::PathBuf;

/// TPC-C warehouses when `--warehouses` is absent.
const DEFAULT_WAREHOUSES: u32 = 16;
/// TPC-C transactions when `--transactions` is absent: the paper's.
const DEFAULT_TRANSACTIONS: u64 = 1_000_000;
/// Largest `--transactions`: ten times the paper's (see the check).
const TRANSACTIONS_MAX: u64 = 10_000_000;
/// Largest `--warehouses`: ten times the paper's W = 160.
const WAREHOUSES_MAX: u32 = 1_600;
/// Largest `--buffer-pool`, in MB.
const BUFFER_POOL_MB_MAX: u64 = 65_536;

/// Arguments of `spinstack dr`.
#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    command: Option<DrCommand>,
    #[command(flatten)]
    study: StudyArgs,
}

#[derive(clap::Subcommand)]
enum DrCommand {
    /// Print the batch plan (§3.1) for given rates, RTO and drive.
    Plan(PlanArgs),
}

#[derive(clap::Args)]
struct StudyArgs {
    /// TPC-C warehouses [default: 16]. Only with `--log tpcc`.
    #[arg(long)]
    warehouses: Option<u32>,
    /// TPC-C transactions generated [default: the paper's 1,000,000: at W = 16 or
    /// 160 their log fills the default 512 MB window; about a minute on one core].
    /// Only with `--log tpcc`.
    #[arg(long)]
    transactions: Option<u64>,
    /// Window buffer in whole MB (1 to 1048576), or `none` (no compaction:
    /// LSN-order apply).
    #[arg(long, default_value = "512")]
    window: String,
    /// Recovery time objective, seconds.
    #[arg(long, default_value_t = 100.0)]
    rto: f64,
    /// Catalog drive of both sites.
    #[arg(long, default_value = "ultrastar36z15")]
    disk: String,
    /// Standby mode: a name from the drive's catalog entry (`standby`; `unload`,
    /// `low-rpm`, `non-spinning`) or its index. Default: the drive's deepest.
    #[arg(long)]
    standby: Option<String>,
    /// Log source: `tpcc` (generated) or `pg:FILE` (pg_waldump output).
    #[arg(long, default_value = "tpcc")]
    log: String,
    /// Seed of the generator and the disaster instants.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Drives in each site's data volume (default 8, an assumption: the paper
    /// names none; see spinstack_replication::site::SiteConfig::data_drives).
    #[arg(long, default_value_t = 8)]
    data_drives: usize,
    /// Database buffer pool of the primary and the secondary, MB.
    #[arg(long, default_value_t = 512)]
    buffer_pool: u64,
    /// Disaster instants tried per plan (a plan is accepted only if every trial
    /// recovers within the RTO and loses no acknowledged transaction).
    #[arg(long, default_value_t = 1000)]
    trials: u32,
    /// Batch cycles simulated for the energy.
    #[arg(long, default_value_t = 3)]
    cycles: u32,
    /// One-way inter-site latency, ms (a commit is acknowledged this long after
    /// the secondary's log volume holds it).
    #[arg(long, default_value_t = 1.0)]
    latency_ms: f64,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct PlanArgs {
    /// Log generation rate, bytes per second.
    #[arg(long)]
    r_gen: f64,
    /// Log application rate, bytes per second.
    #[arg(long)]
    r_apl: f64,
    /// Recovery time objective, seconds.
    #[arg(long)]
    rto: f64,
    /// Catalog drive (its spin-up and spin-down times).
    #[arg(long, default_value = "ultrastar36z15")]
    disk: String,
    /// Standby mode (name or index; default the deepest).
    #[arg(long)]
    standby: Option<String>,
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        Some(DrCommand::Plan(plan_args)) => run_plan(plan_args),
        None => run_study(args.study),
    }
}

/// Longest time an option may give: about 31 years, far past any RTO or latency,
/// and far inside the nanosecond clock.
const SECONDS_MAX: f64 = 1e9;

fn seconds(value: f64, what: &str) -> anyhow::Result<Nanoseconds> {
    anyhow::ensure!(
        value.is_finite() && value > 0.0 && value < SECONDS_MAX,
        "{what} must be above 0 and below 1,000,000,000 seconds, got {value:.6e}"
    );
    Ok(Nanoseconds::from_ms_f64(value * 1e3))
}

/// Fastest log rate an option may give: a terabyte a second, beyond any site's log.
const BYTES_PER_S_MAX: f64 = 1e12;

fn bytes_per_second(value: f64, what: &str) -> anyhow::Result<f64> {
    anyhow::ensure!(
        value.is_finite() && (1.0..=BYTES_PER_S_MAX).contains(&value),
        "{what} must be between 1 and 1,000,000,000,000 bytes a second, got {value:.6e}"
    );
    Ok(value)
}

/// The standby level `name` names on `spec` (default: the deepest, the last).
fn standby_level(
    spec: &spinstack_disk::spec::DriveSpec,
    name: Option<&str>,
) -> anyhow::Result<StandbyLevel> {
    let levels = &spec.power.standby;
    let names = || {
        levels
            .iter()
            .map(|l| l.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let index = match name {
        None => levels.len().saturating_sub(1),
        Some(name) => match levels.iter().position(|l| l.name == name) {
            Some(index) => index,
            None => match name.parse::<usize>() {
                Ok(index) if index < levels.len() => index,
                _ => anyhow::bail!(
                    "{} has no standby mode {name:?}; its modes: {}",
                    spec.name,
                    names()
                ),
            },
        },
    };
    Ok(StandbyLevel(index as u8))
}

fn run_plan(args: PlanArgs) -> anyhow::Result<()> {
    let spec = crate::load_drive(&args.disk)?;
    let level = standby_level(&spec, args.standby.as_deref())?;
    let mode = &spec.power.standby[level.0 as usize];
    let input = PlanInput {
        r_gen_bytes_per_s: bytes_per_second(args.r_gen, "--r-gen")?,
        r_apl_bytes_per_s: bytes_per_second(args.r_apl, "--r-apl")?,
        rto: seconds(args.rto, "--rto")?,
        spin_up: Nanoseconds::from_ms_f64(mode.exit_ms),
        spin_down: Nanoseconds::from_ms_f64(mode.enter_ms),
    };
    let batch = plan(&input).with_context(|| format!("{} ({})", spec.name, mode.name))?;
    if args.json {
        let value = serde_json::json!({ "input": input, "disk": spec.name, "standby": mode.name, "plan": batch });
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        println!(
            "{} ({}: spin-up {} s, spin-down {} s), RTO {} s: apply budget {:.1} s\n\
             batch interval T_wnd {:.1} s, apply time T_apl {:.1} s, R_apl/R_gen {:.2}, \
             {:.1} mode changes a day",
            spec.name,
            mode.name,
            mode.exit_ms / 1e3,
            mode.enter_ms / 1e3,
            args.rto,
            batch.apply_budget_s,
            batch.batch_interval_s,
            batch.apply_time_s,
            batch.apply_speedup,
            86_400.0 / batch.batch_interval_s
        );
    }
    Ok(())
}

/// Largest `--window`: 1 TiB, a window buffer far beyond any secondary's memory
/// (the paper's is 512 MB), and small enough that its bytes fit any count.
const WINDOW_MB_MAX: u64 = 1 << 20;

/// `--window` in whole MB, 1 to [`WINDOW_MB_MAX`]. A fraction is refused rather
/// than rounded: the report echoes the window in MB, and `0.5` read back as
/// "window 0 MB" (inputs finding 25).
fn window_mb(text: &str) -> anyhow::Result<u64> {
    let mb: u64 = text.parse().ok().with_context(|| {
        format!("--window {text:?}: a whole number of MB (1 to {WINDOW_MB_MAX}), or `none`")
    })?;
    anyhow::ensure!(
        (1..=WINDOW_MB_MAX).contains(&mb),
        "--window {mb}: a window is 1 to {WINDOW_MB_MAX} MB (1 TiB), or `none`"
    );
    Ok(mb)
}

fn run_study(args: StudyArgs) -> anyhow::Result<()> {
    let spec = crate::load_drive(&args.disk)?;
    let standby = standby_level(&spec, args.standby.as_deref())?;
    let window_bytes = match args.window.as_str() {
        "none" => None,
        text => Some(window_mb(text)? << 20),
    };
    // `--log`: the built-in generator (`None`) or a recorded pg_waldump dump.
    let recorded_log = match args.log.as_str() {
        "tpcc" => None,
        source => Some(
            source
                .strip_prefix("pg:")
                .map(PathBuf::from)
                .with_context(|| format!("--log {source:?}: `tpcc` or `pg:FILE`"))?,
        ),
    };
    // The generator's options shape a generated log; a recorded one has its own.
    anyhow::ensure!(
        recorded_log.is_none() || (args.warehouses.is_none() && args.transactions.is_none()),
        "--warehouses and --transactions shape the TPC-C generator; --log {} brings its \
         own transactions",
        args.log
    );
    let warehouses = args.warehouses.unwrap_or(DEFAULT_WAREHOUSES);
    let transactions = args.transactions.unwrap_or(DEFAULT_TRANSACTIONS);
    // The generator holds its whole log in memory: about 0.8 KB a transaction and
    // 0.4 MB a warehouse (measured: 400,000 transactions 337 MB, W = 1,000 426 MB),
    // so each is bounded at ten times the paper's largest (1,000,000; W = 160).
    anyhow::ensure!(
        (1..=WAREHOUSES_MAX).contains(&warehouses),
        "--warehouses must be between 1 and {WAREHOUSES_MAX} (ten times the paper's W = 160; \
         each warehouse holds about 0.4 MB), got {warehouses}"
    );
    anyhow::ensure!(
        (1000..=TRANSACTIONS_MAX).contains(&transactions),
        "--transactions must be between 1000 and {TRANSACTIONS_MAX} (ten times the paper's \
         1,000,000; each holds about 0.8 KB of log), got {transactions}"
    );
    // Table 1's p5 595, the largest site the paper names, has 6,400 data drives; each
    // simulated drive costs memory (100,000 took 11 GB).
    anyhow::ensure!(
        (1..=6400).contains(&args.data_drives),
        "--data-drives must be between 1 and 6400 (Table 1's p5 595), got {}",
        args.data_drives
    );
    // A plan is accepted only once its trials held: with none, any plan would pass.
    anyhow::ensure!(
        args.trials >= 1,
        "--trials must be at least 1 (1,000 by default)"
    );
    anyhow::ensure!(args.cycles >= 1, "--cycles must be at least 1");
    // The pool keeps an entry per page of its size (8 KiB pages): 64 GiB is 8 M pages.
    anyhow::ensure!(
        (1..=BUFFER_POOL_MB_MAX).contains(&args.buffer_pool),
        "--buffer-pool must be between 1 and {BUFFER_POOL_MB_MAX} MB, got {}",
        args.buffer_pool
    );
    let mut config = SiteConfig::new(warehouses, transactions, args.seed);
    config.data_drives = args.data_drives;
    config.buffer_pool_bytes = args.buffer_pool << 20;
    let progress = stage_spinner();
    progress.set_message(match &recorded_log {
        None => format!(
            "generating {transactions} TPC-C transactions (W = {warehouses}); simulating the primary and a conventional secondary"
        ),
        Some(_) => {
            "reading the log; simulating the primary and a conventional secondary".to_string()
        }
    });
    let site = match &recorded_log {
        None => Site::measure(config, spec)?,
        Some(path) => {
            let file =
                std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
            let wal =
                pgwal::parse_reader(&path.display().to_string(), std::io::BufReader::new(file))?;
            // No warehouses; the transactions are the log's own (its commits).
            config.warehouses = 0;
            config.transactions = wal.records.iter().filter(|r| r.ends_transaction).count() as u64;
            let workload = Workload::from_log(&config, wal.records, wal.pages);
            Site::measure_workload(config, spec, workload)?
        }
    };
    let mut point = PointConfig::new(window_bytes, seconds(args.rto, "--rto")?, args.seed);
    point.standby = standby;
    point.failover_trials = args.trials;
    point.cycles = args.cycles;
    anyhow::ensure!(
        args.latency_ms.is_finite() && args.latency_ms > 0.0 && args.latency_ms / 1e3 < SECONDS_MAX,
        "--latency-ms must be above 0 and below 1,000,000,000,000 ms, got {:.6e}",
        args.latency_ms
    );
    point.inter_site_latency = Nanoseconds::from_ms_f64(args.latency_ms);
    progress.set_message(format!(
        "measuring R_apl, searching the batch plan (each plan tried: its timeline and {} failover trials)",
        args.trials
    ));
    let report = study_point(&site, &point)?;
    progress.finish_and_clear();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        let source = match &recorded_log {
            None => format!("W = {warehouses}, {transactions} TPC-C transactions"),
            Some(_) => format!(
                "{}, {} transactions after the first tenth of its records",
                args.log, site.workload.transactions_measured
            ),
        };
        print_report(&report, &source);
    }
    Ok(())
}

/// A spinner on standard error naming the stage under way (hidden when standard
/// error is not a terminal): a study at the paper's size takes about a minute.
fn stage_spinner() -> indicatif::ProgressBar {
    let spinner = indicatif::ProgressBar::new_spinner();
    spinner.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
            .expect("a fixed template"),
    );
    spinner.enable_steady_tick(std::time::Duration::from_millis(200));
    spinner
}

fn print_report(r: &PointReport, source: &str) {
    let window = r.window_bytes.map_or("none".to_string(), |b| {
        format!("{:.0} MB", b as f64 / 1048576.0)
    });
    println!(
        "{} ({}), {source}, window {window}, RTO {} s",
        r.disk, r.standby, r.rto_s
    );
    println!(
        "data volume: {} drives per site, the database fills {:.1}% of each",
        r.data_drives,
        100.0 * r.database_share_of_drive
    );
    if let Some(why) = &r.not_simulated {
        // The rates measured on less log than one window are not the window's.
        println!(
            "primary: {:.0} transactions/s, R_gen {:.0} B/s",
            r.transactions_per_s, r.r_gen_per_s
        );
        println!("secondary not studied: {why}");
        return;
    }
    println!(
        "primary: {:.0} transactions/s, R_gen {:.0} B/s; secondary R_apl {:.0} B/s (R_apl/R_gen {:.2})",
        r.transactions_per_s, r.r_gen_per_s, r.r_apl_per_s, r.apply_speedup
    );
    println!(
        "plan search: windows applied back to back give R_apl/R_gen {:.2}; {} plans simulated{}",
        r.back_to_back_speedup(),
        r.plan_simulations,
        match (r.failing_speedup, r.failing_reason.as_deref()) {
            (Some(s), Some(why)) =>
                format!(", the nearest that failed at R_apl/R_gen {s:.2}: {why}"),
            _ => String::new(),
        }
    );
    if let Some(refusal) = &r.plan_refused {
        println!("plan refused: {refusal}");
        return;
    }
    let opt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
    println!(
        "batch interval {} s, planned apply {} s, measured apply {} s, drives sleep: {}",
        opt(r.batch_interval_s),
        opt(r.apply_time_s),
        opt(r.measured_apply_time_s),
        r.sleeps
    );
    println!(
        "normalized power {} (data drive {} W power-aware, {:.2} W conventional; log drive {:.2} W), \
         {} mode changes per drive per day",
        opt(r.normalized_power),
        opt(r.data_watts_power_aware),
        r.data_watts_conventional,
        r.log_watts,
        opt(r.mode_changes_per_day)
    );
    let edges = r.trials.as_ref().map_or(0, |t| t.at_cycle_edges);
    println!(
        "failover: {} trials at random instants and {edges} at the cycles' edges, {} RTO \
         violations, worst recovery {} s; {} acknowledged transactions lost (zero by \
         synchronous shipping: bookkeeping, not a test)",
        r.failover_trials,
        r.rto_violations,
        opt(r.worst_recovery_s),
        r.rpo_lost_transactions
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use spinstack_replication::site::Workload;

    #[derive(clap::Parser)]
    struct DrCommandLine {
        #[command(flatten)]
        study: StudyArgs,
    }

    /// Options that would make the study vacuous or exhaust memory are refused
    /// before anything runs, naming the option: no failover trials (any plan would
    /// pass the acceptance test), more data drives than the paper's largest site.
    #[test]
    fn refuses_vacuous_or_oversized_studies() {
        for (option, value, says) in [
            ("--trials", "0", "--trials must be at least 1"),
            (
                "--data-drives",
                "100000",
                "--data-drives must be between 1 and 6400",
            ),
            (
                "--data-drives",
                "0",
                "--data-drives must be between 1 and 6400",
            ),
        ] {
            let args = DrCommandLine::parse_from(["dr", option, value]).study;
            let error = run_study(args).unwrap_err().to_string();
            assert!(error.contains(says), "{option} {value}: {error}");
        }
    }

    /// The TPC-C generator's options with a recorded log are refused, not ignored
    /// (before, `--log pg:FILE --transactions 5000` ran on the file as if the option
    /// were not there, and the report's first line said "W = 16, 5000 transactions"
    /// of a log that has neither).
    #[test]
    fn generator_options_with_a_recorded_log_are_refused() {
        for option in ["--warehouses", "--transactions"] {
            let words = ["dr", "--log", "pg:/nonexistent.txt", option, "5000"];
            let error = run_study(DrCommandLine::parse_from(words).study)
                .unwrap_err()
                .to_string();
            assert!(
                error.contains("shape the TPC-C generator"),
                "{option}: {error}"
            );
        }
    }

    /// `spinstack dr` with no options studies something: its default transactions
    /// generate more measured log than its default window holds. (Before, 200,000
    /// transactions gave about 194 MB against the 512 MB window, and the bare
    /// command printed only "generate more transactions".)
    #[test]
    fn the_defaults_fill_the_default_window() {
        let defaults = DrCommandLine::parse_from(["dr"]).study;
        let window_bytes = window_mb(&defaults.window).expect("a size") << 20;
        assert_eq!((defaults.warehouses, defaults.transactions), (None, None));
        let sample = Workload::generate(&SiteConfig::new(DEFAULT_WAREHOUSES, 20_000, 1));
        let needed = spinstack_replication::study::transactions_to_fill(&sample, window_bytes);
        assert!(
            DEFAULT_TRANSACTIONS >= needed,
            "default {DEFAULT_TRANSACTIONS} transactions; the default {} MB window needs about {needed}",
            window_bytes >> 20
        );
    }
}
