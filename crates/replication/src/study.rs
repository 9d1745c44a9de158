//! One configuration of the secondary studied against a measured [`Site`]: the
//! applier's rate for its window buffer, the batch plan, the power-aware timeline,
//! the failover trials and the energy against the conventional secondary; and
//! [`run_points`], which studies many configurations of one site on all cores
//! (a library function with no global state: a front end may send it any grid).

use crate::apply::{measure_rate, Applier, ApplyRate, RateLimits};
use crate::energy::{self, DriveEnergy, StorageConfiguration, P5_595};
use crate::failover::{run_trials, TrialConfig, Trials};
use crate::log::PAGE_BYTES;
use crate::plan::{plan, BatchPlan, PlanInput};
use crate::site::Site;
use crate::timeline::{run_timeline, Arrivals, TimelineConfig};
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
    pub warehouses: u32,
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
    /// R_apl the accepted plan used (measured; see `plan_attempts`).
    pub r_apl_per_s: f64,
    pub apply_speedup: f64,
    /// R_apl from applying full windows back to back (the first measurement).
    pub calibrated_r_apl_per_s: f64,
    /// R_apl the batches of the last timeline achieved.
    pub timeline_r_apl_per_s: Option<f64>,
    /// Of those batches: the rate of the windows holding the backlog (the
    /// slowest batch's), and of the windows after it (the log that arrived while
    /// the batch applied).
    pub backlog_r_apl_per_s: Option<f64>,
    pub catch_up_r_apl_per_s: Option<f64>,
    /// Plans tried (a plan is replaced when its batches applied slower than it
    /// assumed or a trial missed the RTO).
    pub plan_attempts: u32,
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

/// Most times a configuration is planned and simulated before its result stands
/// (after that it is refused).
pub const MAX_PLAN_ATTEMPTS: u32 = 4;

/// Most times the calibration is repeated at the backlog a plan implies.
const BACKLOG_REFINEMENTS: u32 = 4;

/// Run the power-aware timeline of `batch`.
fn simulate<'a>(
    site: &Site,
    point: &PointConfig,
    batch: &BatchPlan,
    spin_up: Nanoseconds,
    spin_down: Nanoseconds,
    records: &'a [crate::log::LogRecord],
) -> Result<(crate::timeline::Timeline, Arrivals<'a>, bool), StudyError> {
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

/// Study one configuration.
pub fn study_point(site: &Site, point: &PointConfig) -> Result<PointReport, StudyError> {
    let (spin_up, spin_down, standby_name, standby_watts) = standby_penalties(site, point.standby)?;
    let r_gen = site.primary.r_gen_bytes_per_s;
    let mut rate = calibrate(site, point.window_bytes)?;
    let window_rate = rate.bytes_per_s;
    let plan_for = |r_apl: f64| {
        plan(&PlanInput {
            r_gen_bytes_per_s: r_gen,
            r_apl_bytes_per_s: r_apl,
            rto: point.rto,
            spin_up,
            spin_down,
        })
    };
    let mut planned = plan_for(rate.bytes_per_s);
    // A batch backlog smaller than the window buffer fills only part of it, and a
    // smaller window compacts less: measure at the backlog's size and plan again,
    // until the backlog the plan implies is applied at the rate it assumed.
    if let Some(window) = point.window_bytes {
        for _ in 0..BACKLOG_REFINEMENTS {
            let Ok(p) = &planned else { break };
            let backlog = (r_gen * (p.batch_interval_s - p.apply_time_s)) as u64;
            if backlog >= window {
                break;
            }
            let smaller = calibrate(site, Some(backlog.max(PAGE_BYTES)))?;
            if smaller.bytes_per_s >= rate.bytes_per_s {
                break;
            }
            rate.bytes_per_s = smaller.bytes_per_s;
            planned = plan_for(rate.bytes_per_s);
        }
    }
    let log_bytes_per_s = r_gen / site.config.data_drives as f64
        * f64::from(point.storage.data_drives)
        / f64::from(point.storage.log_drives);
    let (log_watts, log_drive) = energy::log_drive_watts(&site.spec, log_bytes_per_s, 20_000)?;
    let conventional_watts = site.conventional.watts_per_drive;
    let conventional_span = Nanoseconds::from_ms_f64(site.conventional.span_s * 1e3);
    let mut report = PointReport {
        warehouses: site.config.warehouses,
        transactions: site.config.transactions,
        disk: site.spec.name.clone(),
        data_drives: site.config.data_drives,
        database_share_of_drive: site.primary.database_share_of_drive,
        standby: standby_name,
        window_bytes: point.window_bytes,
        rto_s: point.rto.as_secs_f64(),
        apply_budget_s: point.rto.as_secs_f64() - (spin_up + spin_down).as_secs_f64(),
        transactions_per_s: site.primary.transactions_per_s,
        r_gen_per_s: r_gen,
        r_apl_per_s: rate.bytes_per_s,
        apply_speedup: rate.bytes_per_s / r_gen,
        calibrated_r_apl_per_s: window_rate,
        timeline_r_apl_per_s: None,
        backlog_r_apl_per_s: None,
        catch_up_r_apl_per_s: None,
        plan_attempts: 0,
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
        data_watts_conventional: conventional_watts,
        standby_watts,
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
    };
    let log_total = crate::log::log_bytes(site.workload.measured());
    if let Some(window) = point.window_bytes.filter(|&w| w > log_total) {
        // The timeline replays the log cyclically; a window longer than the log
        // would fold one row's changes from different laps, a folding no real log
        // offers.
        report.not_simulated = Some(format!(
            "the window buffer ({} MB) is larger than the generated log ({} MB); generate \
             more transactions",
            window >> 20,
            log_total >> 20
        ));
        return Ok(report);
    }
    // R_apl is what applying the batches measures: plan with the calibrated rate,
    // run the timeline, and while its batches applied slower than planned (or a
    // trial missed the RTO) plan again with the rate they achieved.
    let records = site.workload.measured();
    let mut attempt = 0;
    let (batch, sleeps, arrivals, timeline, trials) = loop {
        attempt += 1;
        let batch = match planned {
            Ok(batch) => batch,
            Err(refusal) => {
                report.plan_refused = Some(refusal.to_string());
                report.r_apl_per_s = rate.bytes_per_s;
                report.apply_speedup = rate.bytes_per_s / r_gen;
                report.plan_attempts = attempt;
                return Ok(report);
            }
        };
        let (timeline, arrivals, sleeps) =
            simulate(site, point, &batch, spin_up, spin_down, records)?;
        let trials = run_trials(
            &timeline,
            &arrivals,
            &TrialConfig {
                trials: point.failover_trials,
                seed: point.seed,
                rto: point.rto,
                spin_up,
                spin_down,
                inter_site_latency: point.inter_site_latency,
                calibrated_bytes_per_s: rate.bytes_per_s,
            },
        );
        let achieved = timeline.applied_bytes_per_s(&arrivals, point.cycles);
        let held = trials.rto_violations == 0 && !timeline.fell_behind;
        if held {
            break (batch, sleeps, arrivals, timeline, trials);
        }
        if attempt >= MAX_PLAN_ATTEMPTS {
            report.plan_refused = Some(format!(
                "no plan held the RTO in simulation after {attempt} attempts (the last: T_wnd \
                 {:.0} s, {} of {} failover trials over the RTO, worst recovery {:.1} s{})",
                batch.batch_interval_s,
                trials.rto_violations,
                trials.trials,
                trials.worst_recovery_s,
                if timeline.fell_behind {
                    "; a batch was still applying when the next was due"
                } else {
                    ""
                }
            ));
            report.r_apl_per_s = rate.bytes_per_s;
            report.apply_speedup = rate.bytes_per_s / r_gen;
            report.plan_attempts = attempt;
            return Ok(report);
        }
        // Plan again with the rate the batches achieved, when they fell behind
        // (each must finish before the next is due), and with the rate that would
        // have brought the worst trial's apply time within the budget, when a
        // trial missed the RTO; the slower of the two, less 3%.
        let budget = (point.rto.saturating_sub(spin_up + spin_down)).as_secs_f64();
        let worst_apply = trials.worst_recovery_s - (spin_up + spin_down).as_secs_f64();
        let by_trials = if trials.rto_violations > 0 && worst_apply > budget {
            rate.bytes_per_s * budget / worst_apply
        } else {
            f64::INFINITY
        };
        let by_batches = if timeline.fell_behind {
            achieved
        } else {
            f64::INFINITY
        };
        let measured = by_trials.min(by_batches);
        rate.bytes_per_s = if measured < rate.bytes_per_s {
            measured * 0.97
        } else {
            rate.bytes_per_s * 0.8
        };
        planned = plan_for(rate.bytes_per_s);
    };
    report.r_apl_per_s = rate.bytes_per_s;
    report.apply_speedup = rate.bytes_per_s / r_gen;
    report.plan_attempts = attempt;
    report.timeline_r_apl_per_s = Some(timeline.applied_bytes_per_s(&arrivals, point.cycles));
    report.backlog_r_apl_per_s =
        Some(timeline.backlog_bytes_per_s(&arrivals, point.cycles)).filter(|rate| rate.is_finite());
    report.catch_up_r_apl_per_s = timeline.catch_up_bytes_per_s(&arrivals, point.cycles);
    let aware_watts = energy::mean_watts(&timeline.energy, timeline.span);
    let measured_cycles = &timeline.cycles[..point.cycles as usize];
    let apply_s: f64 = measured_cycles
        .iter()
        .map(|c| (c.applied - c.ready).as_secs_f64())
        .sum::<f64>()
        / measured_cycles.len().max(1) as f64;
    let spin_ups: u64 = timeline.energy.iter().map(|r| r.spin_ups).sum();
    let days = timeline.span.as_secs_f64() / 86_400.0;
    report.plan = Some(batch);
    report.batch_interval_s = Some(batch.batch_interval_s);
    report.apply_time_s = Some(batch.apply_time_s);
    report.measured_apply_time_s = Some(apply_s);
    report.sleeps = sleeps;
    report.normalized_power = Some(energy::normalized_power(
        &point.storage,
        aware_watts,
        conventional_watts,
        log_watts,
    ));
    report.data_watts_power_aware = Some(aware_watts);
    report.mode_changes_per_day =
        Some(spin_ups as f64 / timeline.energy.len().max(1) as f64 / days.max(1e-12));
    report.failover_trials = trials.trials;
    report.rto_violations = trials.rto_violations;
    report.rpo_lost_transactions = trials.rpo_lost_transactions;
    report.worst_recovery_s = Some(trials.worst_recovery_s);
    report.trials = Some(trials);
    report.fell_behind = timeline.fell_behind;
    report.drive_power_aware = timeline
        .energy
        .first()
        .map(|r| DriveEnergy::of(r, timeline.span));
    Ok(report)
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
