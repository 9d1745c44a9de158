//! One configuration of the secondary studied against a measured [`Site`]: the
//! applier's rate for its window buffer, the batch plan (the one with the longest
//! batch interval that holds in simulation, see [`crate::search`]), the
//! power-aware timeline, the failover trials and the energy against the
//! conventional secondary; and
//! [`run_points`], which studies many configurations of one site on all cores
//! (a library function with no global state: a front end may send it any grid).

use crate::apply::{measure_rate, Applier, ApplyRate, RateLimits};
use crate::energy::{self, DriveEnergy, StorageConfiguration, P5_595};
use crate::failover::{run_trials, TrialConfig, Trials};
use crate::log::PAGE_BYTES;
use crate::plan::{plan, BatchPlan, PlanError, PlanInput};
use crate::search::{longest_holding, Verdict};
use crate::site::Site;
use crate::timeline::{run_timeline, Arrivals, Timeline, TimelineConfig};
use crate::volume::{DataVolume, VolumeError};
use serde::Serialize;
use spinstack_sim::device::StandbyLevel;
use spinstack_sim::parallel::map_in_order;
use spinstack_sim::units::Nanoseconds;

/// One configuration of the secondary.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PointConfig {
    /// Window buffer; `None`: no compaction (records applied in LSN order).
    pub window_bytes: Option<u64>,
    pub rto: Nanoseconds,
    pub standby: StandbyLevel,
    /// Batch cycles whose energy is measured.
    pub cycles: u32,
    pub failover_trials: u32,
    pub inter_site_latency: Nanoseconds,
    pub storage: StorageConfiguration,
    pub seed: u64,
}

impl PointConfig {
    pub fn new(window_bytes: Option<u64>, rto: Nanoseconds, seed: u64) -> PointConfig {
        PointConfig {
            window_bytes,
            rto,
            standby: StandbyLevel(0),
            cycles: 3,
            failover_trials: 1000,
            inter_site_latency: Nanoseconds::from_ms(1),
            storage: P5_595,
            seed,
        }
    }
}

/// Why a configuration could not be studied (a refused plan is not an error: it
/// is reported in [`PointReport::plan_refused`]).
#[derive(Debug, thiserror::Error)]
pub enum StudyError {
    #[error(transparent)]
    Volume(#[from] VolumeError),
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error("standby level {level} does not exist: {disk} has {levels} ({names})")]
    NoSuchStandby {
        level: u8,
        disk: String,
        levels: usize,
        names: String,
    },
}

/// Everything `spinstack dr --json` prints for one configuration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PointReport {
    /// TPC-C warehouses; 0 for a recorded log.
    pub warehouses: u32,
    /// Transactions generated, or the recorded log's commits.
    pub transactions: u64,
    pub disk: String,
    /// Drives of each site's data volume, and the database's share of each.
    pub data_drives: usize,
    pub database_share_of_drive: f64,
    pub standby: String,
    pub window_bytes: Option<u64>,
    pub rto_s: f64,
    /// The RTO less the standby mode's spin-up and spin-down (negative when the
    /// RTO cannot hold them): a plan's backlog is R_apl times this.
    pub apply_budget_s: f64,
    pub transactions_per_s: f64,
    pub r_gen_per_s: f64,
    /// R_apl the accepted plan used (see `crate::search`; when refused, that of
    /// the plan with the shortest interval, which failed).
    pub r_apl_per_s: f64,
    pub apply_speedup: f64,
    /// R_apl from applying full windows back to back (the first measurement; no
    /// plan the search tries assumes more).
    pub calibrated_r_apl_per_s: f64,
    /// R_apl the batches of the accepted plan's timeline achieved.
    pub timeline_r_apl_per_s: Option<f64>,
    /// Of those batches: the rate of the windows holding the backlog (the
    /// slowest batch's), and of the windows after it (the log that arrived while
    /// the batch applied).
    pub backlog_r_apl_per_s: Option<f64>,
    pub catch_up_r_apl_per_s: Option<f64>,
    /// Plans the search simulated (timeline and trials each).
    pub plan_simulations: u32,
    /// R_apl/R_gen of the plan with the shortest interval the search found not to
    /// hold, and why (none when every plan it tried held).
    pub failing_speedup: Option<f64>,
    pub failing_reason: Option<String>,
    pub records_kept_by_compaction: f64,
    /// The planner's refusal, when it refused (also when no plan held the RTO in
    /// simulation).
    pub plan_refused: Option<String>,
    /// Why an accepted plan was not simulated (no energy or trials then).
    pub not_simulated: Option<String>,
    pub plan: Option<BatchPlan>,
    pub batch_interval_s: Option<f64>,
    /// Planned T_apl.
    pub apply_time_s: Option<f64>,
    /// Mean measured apply time per batch.
    pub measured_apply_time_s: Option<f64>,
    pub sleeps: bool,
    pub normalized_power: Option<f64>,
    pub data_watts_power_aware: Option<f64>,
    pub data_watts_conventional: f64,
    /// A data drive's power in the standby mode used (the floor of its average).
    pub standby_watts: f64,
    pub log_watts: f64,
    pub mode_changes_per_day: Option<f64>,
    pub failover_trials: u32,
    pub rto_violations: u32,
    pub rpo_lost_transactions: u64,
    pub worst_recovery_s: Option<f64>,
    pub trials: Option<Trials>,
    pub fell_behind: bool,
    /// Data drive 0 of the power-aware timeline, and of the conventional run.
    pub drive_power_aware: Option<DriveEnergy>,
    pub drive_conventional: Option<DriveEnergy>,
    pub log_drive: DriveEnergy,
}

impl PointReport {
    /// R_apl/R_gen of full windows applied back to back: the highest speed-up
    /// any plan for this point may assume (`calibrated_r_apl_per_s`).
    pub fn back_to_back_speedup(&self) -> f64 {
        self.calibrated_r_apl_per_s / self.r_gen_per_s
    }
}

fn standby_penalties(
    site: &Site,
    level: StandbyLevel,
) -> Result<(Nanoseconds, Nanoseconds, String, f64), StudyError> {
    let levels = &site.spec.power.standby;
    let spec = levels
        .get(level.0 as usize)
        .ok_or_else(|| StudyError::NoSuchStandby {
            level: level.0,
            disk: site.spec.name.clone(),
            levels: levels.len(),
            names: levels
                .iter()
                .map(|l| l.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })?;
    Ok((
        Nanoseconds::from_ms_f64(spec.exit_ms),
        Nanoseconds::from_ms_f64(spec.enter_ms),
        spec.name.clone(),
        spec.watts,
    ))
}

/// The applier of a window size: its buffer pool holds the simulated drives'
/// share of the frames and is warmed like the conventional one's.
fn applier_for(site: &Site, window_bytes: Option<u64>) -> Applier {
    let (drives, keep) = (site.config.data_drives as u64, simulated(site) as u64);
    let frames = site.config.buffer_pool_bytes / PAGE_BYTES * keep / drives;
    let mut applier = Applier::new(window_bytes.is_some(), frames as usize, site.workload.pages);
    let warm: Vec<_> = site.workload.records[..site.workload.first_measured]
        .iter()
        .filter(|r| r.page.0 % drives < keep)
        .copied()
        .collect();
    applier.warm(&warm);
    applier
}

fn simulated(site: &Site) -> usize {
    site.config
        .simulated_drives
        .clamp(1, site.config.data_drives)
}

/// Without a window buffer, work is still cut into chunks of this size.
const LSN_ORDER_CHUNK_BYTES: u64 = 8 << 20;

/// The applier's rate for `window_bytes` on a fresh data volume.
pub fn calibrate(site: &Site, window_bytes: Option<u64>) -> Result<ApplyRate, StudyError> {
    let mut volume = DataVolume::new(&site.spec, site.config.data_drives, site.workload.pages)?;
    let mut applier = applier_for(site, window_bytes);
    let limits = RateLimits {
        queue_depth: site.config.apply_queue_depth,
        max_windows: 3,
        max_page_ios: 2 * site.config.io_sample as u64,
        simulated_drives: simulated(site),
    };
    Ok(measure_rate(
        &mut applier,
        &mut volume,
        site.workload.measured(),
        window_bytes.unwrap_or(LSN_ORDER_CHUNK_BYTES),
        limits,
    )?)
}

/// Run the power-aware timeline of `batch`.
fn simulate<'a>(
    site: &Site,
    point: &PointConfig,
    batch: &BatchPlan,
    transitions: Transitions,
    records: &'a [crate::log::LogRecord],
) -> Result<(Timeline, Arrivals<'a>, bool), StudyError> {
    let Transitions { spin_up, spin_down } = transitions;
    let r_gen = site.primary.r_gen_bytes_per_s;
    let sleeps = batch.batch_interval_s - batch.apply_time_s > (spin_up + spin_down).as_secs_f64();
    let backlog = r_gen * (batch.batch_interval_s - batch.apply_time_s);
    let arrivals = Arrivals::new(records, r_gen, backlog);
    let volume = DataVolume::new(&site.spec, site.config.data_drives, site.workload.pages)?;
    let timeline = run_timeline(
        volume,
        applier_for(site, point.window_bytes),
        &arrivals,
        &TimelineConfig {
            batch_interval: Nanoseconds::from_ms_f64(batch.batch_interval_s * 1e3),
            spin_up,
            spin_down,
            standby: point.standby,
            window_bytes: point.window_bytes.unwrap_or(LSN_ORDER_CHUNK_BYTES),
            cycles: point.cycles,
            queue_depth: site.config.apply_queue_depth,
            sleeps,
            simulated_drives: simulated(site),
        },
    )?;
    Ok((timeline, arrivals, sleeps))
}

/// The standby mode's transitions: a plan's apply budget is the RTO less both.
#[derive(Clone, Copy)]
struct Transitions {
    spin_up: Nanoseconds,
    spin_down: Nanoseconds,
}

/// One plan simulated (its timeline and its failover trials), reduced to what a
/// report needs: the timeline's windows and the log's arrival index are dropped,
/// as the search holds two of these.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanSimulation {
    pub batch: BatchPlan,
    pub sleeps: bool,
    /// A batch was still applying when the next was due.
    pub fell_behind: bool,
    pub trials: Trials,
    /// Log bytes per second of applying over the measured cycles' windows.
    pub timeline_r_apl_per_s: f64,
    /// The windows holding each batch's backlog (the slowest batch's), and the
    /// windows after them (the log that arrived while the batch applied).
    pub backlog_r_apl_per_s: Option<f64>,
    pub catch_up_r_apl_per_s: Option<f64>,
    /// Mean power of a data drive.
    pub aware_watts: f64,
    /// Mean time a batch applied (from ready to caught up).
    pub measured_apply_time_s: f64,
    pub mode_changes_per_day: f64,
    pub drive_power_aware: Option<DriveEnergy>,
}

impl Verdict for PlanSimulation {
    fn held(&self) -> bool {
        !self.fell_behind
            && self.trials.rto_violations == 0
            && self.trials.rpo_lost_transactions == 0
    }
}

impl PlanSimulation {
    /// Why the plan did not hold, in words (empty when it held).
    pub fn failure(&self) -> String {
        let mut why = Vec::new();
        if self.trials.rto_violations > 0 {
            why.push(format!(
                "{} of {} failover trials over the RTO (worst recovery {:.1} s)",
                self.trials.rto_violations,
                self.trials.trials + self.trials.at_cycle_edges,
                self.trials.worst_recovery_s
            ));
        }
        if self.trials.rpo_lost_transactions > 0 {
            why.push(format!(
                "{} acknowledged transactions lost",
                self.trials.rpo_lost_transactions
            ));
        }
        if self.fell_behind {
            why.push("a batch was still applying when the next was due".to_string());
        }
        why.join("; ")
    }
}

/// The fewest cycles a plan below s = 2 is simulated over (see [`cycles_to_show`]).
pub const CYCLES_BELOW_TWO: u32 = 12;

/// The cycles a plan at speed-up `s` is simulated over: `asked`, and below s = 2 at
/// least [`CYCLES_BELOW_TWO`], enough for an error in the backlog to show.
///
/// **Why.** A batch applies its backlog b and what arrives meanwhile, which takes
/// b / (R_gen (s − 1)); the next backlog is what arrives in the rest of the interval.
/// So an error e in one cycle's backlog becomes −e / (s − 1) in the next: damped
/// above s = 2, amplified below, where batches alternate long and short until one is
/// still applying when the next is due or a recovery misses the RTO. Over twelve
/// cycles an error grows at least tenfold for s ≤ 1.82 (by (1/(s − 1))¹²); closer to
/// 2 the growth is slower than an affordable run shows, and a plan there may still
/// hold in simulation and not over days. Measured 2026-11-28 at W = 16 with no window
/// buffer (LSN-order apply, s at most 1.67): over one cycle the plan at s = 1.25
/// (T_wnd 372 s) held; over three, eight or twelve no plan held (a batch still
/// applying when the next was due, and recoveries up to 113.8 s). A shorter rule,
/// simulating until an error would have grown tenfold (two cycles at s = 1.3), let
/// `reproduce`'s W = 16 point hold at s = 1.31: not enough.
pub fn cycles_to_show(s: f64, asked: u32) -> u32 {
    match s > 1.0 && s < 2.0 {
        true => asked.max(CYCLES_BELOW_TWO),
        false => asked,
    }
}

/// Plan at speed-up `s` (§3.1's formulas), run its timeline and its trials, over
/// [`cycles_to_show`] cycles.
fn simulate_at(
    site: &Site,
    point: &PointConfig,
    s: f64,
    transitions: Transitions,
) -> Result<PlanSimulation, StudyError> {
    let point = &PointConfig {
        cycles: cycles_to_show(s, point.cycles),
        ..point.clone()
    };
    let r_gen = site.primary.r_gen_bytes_per_s;
    let batch = plan_at(site, point, s * r_gen, transitions)?;
    let (timeline, arrivals, sleeps) =
        simulate(site, point, &batch, transitions, site.workload.measured())?;
    let trials = run_trials(
        &timeline,
        &arrivals,
        &TrialConfig {
            trials: point.failover_trials,
            seed: point.seed,
            rto: point.rto,
            spin_up: transitions.spin_up,
            spin_down: transitions.spin_down,
            inter_site_latency: point.inter_site_latency,
            calibrated_bytes_per_s: s * r_gen,
        },
    );
    let measured_cycles = timeline.measured_cycles(point.cycles);
    let measured_apply_time_s = measured_cycles
        .iter()
        .map(|c| (c.applied - c.ready).as_secs_f64())
        .sum::<f64>()
        / measured_cycles.len().max(1) as f64;
    let spin_ups: u64 = timeline.energy.iter().map(|r| r.spin_ups).sum();
    let days = timeline.span.as_secs_f64() / 86_400.0;
    Ok(PlanSimulation {
        batch,
        sleeps,
        fell_behind: timeline.fell_behind,
        trials,
        timeline_r_apl_per_s: timeline.applied_bytes_per_s(&arrivals, point.cycles),
        backlog_r_apl_per_s: Some(timeline.backlog_bytes_per_s(&arrivals, point.cycles))
            .filter(|rate| rate.is_finite()),
        catch_up_r_apl_per_s: timeline.catch_up_bytes_per_s(&arrivals, point.cycles),
        aware_watts: energy::mean_watts(&timeline.energy, timeline.span),
        measured_apply_time_s,
        mode_changes_per_day: spin_ups as f64
            / timeline.energy.len().max(1) as f64
            / days.max(1e-12),
        drive_power_aware: timeline
            .energy
            .first()
            .map(|r| DriveEnergy::of(r, timeline.span)),
    })
}

/// The plan at speed-up `s` = R_apl/R_gen for `point`, simulated as the search
/// simulates each s it tries (for exploring the frontier; `study_point` is the
/// study).
pub fn simulate_speedup(
    site: &Site,
    point: &PointConfig,
    s: f64,
) -> Result<PlanSimulation, StudyError> {
    let (spin_up, spin_down, ..) = standby_penalties(site, point.standby)?;
    simulate_at(site, point, s, Transitions { spin_up, spin_down })
}

/// §3.1's plan at `r_apl`.
fn plan_at(
    site: &Site,
    point: &PointConfig,
    r_apl: f64,
    transitions: Transitions,
) -> Result<BatchPlan, PlanError> {
    plan(&PlanInput {
        r_gen_bytes_per_s: site.primary.r_gen_bytes_per_s,
        r_apl_bytes_per_s: r_apl,
        rto: point.rto,
        spin_up: transitions.spin_up,
        spin_down: transitions.spin_down,
    })
}

/// A report with the site's and the calibration's figures and no plan yet.
fn unplanned_report(
    site: &Site,
    point: &PointConfig,
    rate: &ApplyRate,
    standby: (String, f64),
    transitions: Transitions,
) -> Result<PointReport, StudyError> {
    let r_gen = site.primary.r_gen_bytes_per_s;
    let log_bytes_per_s = r_gen / site.config.data_drives as f64
        * f64::from(point.storage.data_drives)
        / f64::from(point.storage.log_drives);
    let (log_watts, log_drive) = energy::log_drive_watts(&site.spec, log_bytes_per_s, 20_000)?;
    let conventional_span = Nanoseconds::from_ms_f64(site.conventional.span_s * 1e3);
    Ok(PointReport {
        warehouses: site.config.warehouses,
        transactions: site.config.transactions,
        disk: site.spec.name.clone(),
        data_drives: site.config.data_drives,
        database_share_of_drive: site.primary.database_share_of_drive,
        standby: standby.0,
        window_bytes: point.window_bytes,
        rto_s: point.rto.as_secs_f64(),
        apply_budget_s: point.rto.as_secs_f64()
            - (transitions.spin_up + transitions.spin_down).as_secs_f64(),
        transactions_per_s: site.primary.transactions_per_s,
        r_gen_per_s: r_gen,
        r_apl_per_s: rate.bytes_per_s,
        apply_speedup: rate.bytes_per_s / r_gen,
        calibrated_r_apl_per_s: rate.bytes_per_s,
        timeline_r_apl_per_s: None,
        backlog_r_apl_per_s: None,
        catch_up_r_apl_per_s: None,
        plan_simulations: 0,
        failing_speedup: None,
        failing_reason: None,
        records_kept_by_compaction: rate.records_kept,
        plan_refused: None,
        not_simulated: None,
        plan: None,
        batch_interval_s: None,
        apply_time_s: None,
        measured_apply_time_s: None,
        sleeps: false,
        normalized_power: None,
        data_watts_power_aware: None,
        data_watts_conventional: site.conventional.watts_per_drive,
        standby_watts: standby.1,
        log_watts,
        mode_changes_per_day: None,
        failover_trials: 0,
        rto_violations: 0,
        rpo_lost_transactions: 0,
        worst_recovery_s: None,
        trials: None,
        fell_behind: false,
        drive_power_aware: None,
        drive_conventional: site
            .conventional
            .energy
            .first()
            .map(|r| DriveEnergy::of(r, conventional_span)),
        log_drive,
    })
}

/// Why a window cannot be simulated on this site's log, if it cannot.
fn too_large_for_the_log(site: &Site, window_bytes: Option<u64>) -> Option<String> {
    let log_total = crate::log::log_bytes(site.workload.measured());
    // The timeline replays the log cyclically; a window longer than the log would
    // fold one row's changes from different laps, a folding no real log offers.
    window_bytes.filter(|&w| w > log_total).map(|window| {
        format!(
            "the window buffer ({:.2} MB) is larger than the measured log ({:.2} MB of {} \
             transactions, after the first tenth warmed the buffer pool): choose a smaller \
             window, or a log of at least {} transactions like these",
            window as f64 / 1048576.0,
            log_total as f64 / 1048576.0,
            site.workload.transactions_measured,
            transactions_to_fill(&site.workload, window)
        )
    })
}

/// Transactions (warm-up included) whose measured log fills `window_bytes`, at
/// `workload`'s log bytes per transaction, rounded up to ten thousand.
pub fn transactions_to_fill(workload: &crate::site::Workload, window_bytes: u64) -> u64 {
    let measured = workload.measured();
    let per_transaction =
        crate::log::log_bytes(measured) as f64 / workload.transactions_measured.max(1) as f64;
    // The warm-up's records are not measured: scale by all records over measured ones.
    let warm_up_factor = workload.records.len() as f64 / measured.len().max(1) as f64;
    let needed = window_bytes as f64 / per_transaction.max(1.0) * warm_up_factor;
    (needed / 10_000.0).ceil() as u64 * 10_000
}

/// Study one configuration: calibrate R_apl on back-to-back windows, then search
/// for the plan with the longest batch interval that holds in simulation
/// (`crate::search`), and report that plan's energy and trials.
pub fn study_point(site: &Site, point: &PointConfig) -> Result<PointReport, StudyError> {
    let (spin_up, spin_down, standby_name, standby_watts) = standby_penalties(site, point.standby)?;
    let transitions = Transitions { spin_up, spin_down };
    let rate = calibrate(site, point.window_bytes)?;
    let standby = (standby_name, standby_watts);
    let mut report = unplanned_report(site, point, &rate, standby, transitions)?;
    let max_speedup = report.apply_speedup;
    // An RTO not above the transitions, or no batch faster than the log: no
    // smaller s changes either.
    if let Err(refusal) = plan_at(site, point, rate.bytes_per_s, transitions) {
        report.plan_refused = Some(refusal.to_string());
        return Ok(report);
    }
    if let Some(why) = too_large_for_the_log(site, point.window_bytes) {
        report.not_simulated = Some(why);
        return Ok(report);
    }
    let found = longest_holding(max_speedup, |s| simulate_at(site, point, s, transitions))?;
    report.plan_simulations = found.simulations;
    if let Some((s, failed)) = &found.failed {
        report.failing_speedup = Some(*s);
        report.failing_reason = Some(failed.failure());
    }
    match found.held {
        Some((s, held)) => accept(&mut report, point, s, held),
        None => {
            let s = report
                .failing_speedup
                .expect("nothing held: something failed");
            report.r_apl_per_s = s * report.r_gen_per_s;
            report.apply_speedup = s;
            report.plan_refused = Some(format!(
                "no plan held in simulation, not even the one with the shortest batch interval \
                 (R_apl/R_gen = {s:.2}; windows applied back to back give {max_speedup:.2}): {}",
                report.failing_reason.as_deref().unwrap_or("")
            ));
        }
    }
    Ok(report)
}

/// Fill `report` with the accepted plan at speed-up `s`.
fn accept(report: &mut PointReport, point: &PointConfig, s: f64, held: PlanSimulation) {
    assert!(held.held(), "only a plan that held is accepted");
    report.r_apl_per_s = s * report.r_gen_per_s;
    report.apply_speedup = s;
    report.timeline_r_apl_per_s = Some(held.timeline_r_apl_per_s);
    report.backlog_r_apl_per_s = held.backlog_r_apl_per_s;
    report.catch_up_r_apl_per_s = held.catch_up_r_apl_per_s;
    report.plan = Some(held.batch);
    report.batch_interval_s = Some(held.batch.batch_interval_s);
    report.apply_time_s = Some(held.batch.apply_time_s);
    report.measured_apply_time_s = Some(held.measured_apply_time_s);
    report.sleeps = held.sleeps;
    report.normalized_power = Some(energy::normalized_power(
        &point.storage,
        held.aware_watts,
        report.data_watts_conventional,
        report.log_watts,
    ));
    report.data_watts_power_aware = Some(held.aware_watts);
    report.mode_changes_per_day = Some(held.mode_changes_per_day);
    report.failover_trials = held.trials.trials;
    report.rto_violations = held.trials.rto_violations;
    report.rpo_lost_transactions = held.trials.rpo_lost_transactions;
    report.worst_recovery_s = Some(held.trials.worst_recovery_s);
    report.fell_behind = held.fell_behind;
    report.trials = Some(held.trials);
    report.drive_power_aware = held.drive_power_aware;
}

/// Study every point of `points` against `site`, on all cores, results in the
/// order of `points`; `on_done` is called once per finished point (progress).
pub fn run_points(
    site: &Site,
    points: &[PointConfig],
    on_done: &(dyn Fn() + Sync),
) -> Vec<Result<PointReport, StudyError>> {
    map_in_order(points, |point| study_point(site, point), on_done)
}
