//! The primary site and the conventional secondary, measured once per workload and
//! drive model; every batch configuration is then studied against a [`Site`].
//!
//! **Primary.** TPC-C with no think time, as fast as its data volume allows: the
//! generator's page references (row changes and reads) go through a 512 MB buffer
//! pool (CLOCK); misses are page reads and evicted dirty pages are page writes on
//! the data volume, issued closed-loop with a fixed number outstanding per drive.
//! The transaction rate is the I/O the volume completes per second over the I/O per
//! transaction the pool produced; R_gen = log bytes per transaction × that rate.
//! Assumed: the CPU and the log volume are never the bottleneck (log writes are
//! sequential on their own drives); the first tenth of the transactions warm the
//! pool and are not measured; the I/O rate is measured on the first
//! `SiteConfig::io_sample` I/Os after warm-up (the stream is stationary).
//! Synchronous shipping: a commit is acknowledged an inter-site round trip after
//! its last record reaches the secondary's log volume; with enough transactions in
//! flight this adds latency, not a lower rate.
//!
//! **Conventional secondary.** Applies each record as it arrives, in LSN order,
//! through a buffer pool of the same size: a miss reads the page, an evicted dirty
//! page is written; its data volume never sleeps. Measured twice: at R_gen (I/Os
//! released when their record arrives; the drives' energy) and as fast as it can
//! (its R_apl, the "no window buffer" rate).

use crate::buffer_pool::BufferPool;
use crate::log::{log_bytes, LogRecord, PageId, PAGE_BYTES};
use crate::tpcc::{Sink, Tpcc, TransactionKind};
use crate::volume::{DataVolume, PageIo, VolumeError};
use serde::Serialize;
use spinstack_disk::drive::EnergyReport;
use spinstack_disk::spec::DriveSpec;
use spinstack_sim::request::Operation;
use spinstack_sim::units::Nanoseconds;

/// What a site is measured with.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SiteConfig {
    pub warehouses: u32,
    pub transactions: u64,
    pub seed: u64,
    /// Drives of each site's data volume (the paper's 6,400 are represented by
    /// them, see `crate::energy`). Default 8, an assumption: the paper gives no
    /// volume for its 16 and 160 warehouses, and glosses "followed the p5 595" only
    /// as "94.4% of drives hold data, the same drive type at both sites" (§4).
    /// Sizing the volume at Table 1's density instead (the p5 595's 4,033,378 tpmC
    /// over 6,400 data drives, at most 12.86 tpmC a warehouse: ⌈W / 49⌉ drives) was
    /// tried (branch `drdensity`) and not kept: it contradicts Table 3. With 4 drives
    /// at W = 160 the primary's R_gen is 161,572 B/s, too slow to fill a 512 MB
    /// window within Table 3's 2,150 s batch interval, which needs at least
    /// 512 MB / 2,150 s = 249,707 B/s; 8 drives give 332,624 B/s.
    pub data_drives: usize,
    /// Database buffer pool of the primary and of the conventional secondary.
    pub buffer_pool_bytes: u64,
    /// Page I/Os the primary keeps outstanding per drive (its many concurrent
    /// transactions).
    pub queue_depth: u32,
    /// Page I/Os an applier keeps outstanding per drive (default: as many as the
    /// primary; with 1, a redo applier working a page at a time on each drive, the
    /// LSN-order applier falls behind the primary).
    pub apply_queue_depth: u32,
    /// I/Os simulated to measure a rate (the primary's, the conventional applier's).
    pub io_sample: usize,
    /// Drives whose I/O the power-aware applier simulates (see `crate::timeline`).
    pub simulated_drives: usize,
}

impl SiteConfig {
    pub fn new(warehouses: u32, transactions: u64, seed: u64) -> SiteConfig {
        SiteConfig {
            warehouses,
            transactions,
            seed,
            data_drives: 8,
            buffer_pool_bytes: 512 << 20,
            queue_depth: 8,
            apply_queue_depth: 8,
            io_sample: 150_000,
            simulated_drives: 1,
        }
    }
}

/// The generated log and what the primary's buffer pool did with it.
pub struct Workload {
    pub records: Vec<LogRecord>,
    /// Index of the first measured record (after the warm-up transactions).
    pub first_measured: usize,
    pub transactions_measured: u64,
    /// Transactions that wrote log (others are read-only).
    pub update_transactions_measured: u64,
    /// The primary's page I/Os after warm-up, in order.
    pub primary_ios: Vec<(Operation, PageId)>,
    /// Pages the database reached.
    pub pages: u64,
}

struct PrimarySink {
    pool: BufferPool,
    records: Vec<LogRecord>,
    ios: Vec<(Operation, PageId)>,
    measuring: bool,
    transactions: u64,
    update_transactions: u64,
}

impl PrimarySink {
    fn touch(&mut self, page: PageId, write: bool) {
        let access = self.pool.access(page, write);
        if !self.measuring {
            return;
        }
        if let Some(victim) = access.write_back {
            self.ios.push((Operation::Write, victim));
        }
        if access.miss {
            self.ios.push((Operation::Read, page));
        }
    }
}

impl Sink for PrimarySink {
    fn record(&mut self, record: LogRecord) {
        self.touch(record.page, true);
        self.records.push(record);
    }
    fn read(&mut self, page: PageId) {
        self.touch(page, false);
    }
    fn end_transaction(&mut self, kind: TransactionKind) {
        if self.measuring {
            self.transactions += 1;
            if !matches!(
                kind,
                TransactionKind::OrderStatus | TransactionKind::StockLevel
            ) {
                self.update_transactions += 1;
            }
        }
    }
}

impl Workload {
    /// Generate `config`'s transactions through the primary's buffer pool.
    pub fn generate(config: &SiteConfig) -> Workload {
        let mut tpcc = Tpcc::new(config.warehouses, config.transactions, config.seed);
        let frames = (config.buffer_pool_bytes / PAGE_BYTES) as usize;
        let mut sink = PrimarySink {
            pool: BufferPool::new(frames, tpcc.layout().pages),
            records: Vec::with_capacity(config.transactions as usize * 18),
            ios: Vec::new(),
            measuring: false,
            transactions: 0,
            update_transactions: 0,
        };
        let warm_up = config.transactions / 10;
        let mut first_measured = 0;
        for index in 0..config.transactions {
            if index == warm_up {
                sink.measuring = true;
                first_measured = sink.records.len();
            }
            tpcc.next_transaction(&mut sink);
        }
        Workload {
            pages: tpcc.pages_in_use(),
            records: sink.records,
            first_measured,
            transactions_measured: sink.transactions,
            update_transactions_measured: sink.update_transactions,
            primary_ios: sink.ios,
        }
    }

    /// A workload from a recorded log (a PostgreSQL WAL): the primary's page I/O is
    /// what its buffer pool makes of the log's page writes alone (the reads behind
    /// the transactions are not in a log, so the primary's rate is an upper bound);
    /// the first tenth of the records warm the pool.
    pub fn from_log(config: &SiteConfig, records: Vec<LogRecord>, pages: u64) -> Workload {
        let frames = (config.buffer_pool_bytes / PAGE_BYTES) as usize;
        let mut sink = PrimarySink {
            pool: BufferPool::new(frames, pages),
            records: Vec::new(),
            ios: Vec::new(),
            measuring: false,
            transactions: 0,
            update_transactions: 0,
        };
        let first_measured = records.len() / 10;
        for (index, record) in records.iter().enumerate() {
            sink.measuring = index >= first_measured;
            sink.touch(record.page, true);
            if sink.measuring && record.ends_transaction {
                sink.transactions += 1;
                sink.update_transactions += 1;
            }
        }
        Workload {
            records,
            first_measured,
            transactions_measured: sink.transactions,
            update_transactions_measured: sink.update_transactions,
            primary_ios: sink.ios,
            pages,
        }
    }

    /// The records after warm-up.
    pub fn measured(&self) -> &[LogRecord] {
        &self.records[self.first_measured..]
    }
}

/// The primary's measured rates.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Primary {
    pub transactions_per_s: f64,
    pub r_gen_bytes_per_s: f64,
    pub page_ios_per_transaction: f64,
    pub page_reads_per_transaction: f64,
    pub log_bytes_per_transaction: f64,
    pub records_per_transaction: f64,
    /// Mean time of one of its page I/Os on a drive (the volume's time × drives
    /// over the I/Os), ms.
    pub ms_per_page_io: f64,
    /// The database's share of each drive (pages per drive over its capacity).
    pub database_share_of_drive: f64,
}

/// The conventional secondary's measured behaviour.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Conventional {
    /// Its fastest application rate (the "no window buffer" R_apl).
    pub r_apl_bytes_per_s: f64,
    pub page_ios_per_record: f64,
    /// Data-volume drives at R_gen: energy per drive over the simulated span.
    #[serde(skip)]
    pub energy: Vec<EnergyReport>,
    pub span_s: f64,
    pub watts_per_drive: f64,
}

/// A workload measured on one drive model.
pub struct Site {
    pub config: SiteConfig,
    pub spec: DriveSpec,
    pub workload: Workload,
    pub primary: Primary,
    pub conventional: Conventional,
}

fn closed_loop_rate(
    spec: &DriveSpec,
    config: &SiteConfig,
    pages: u64,
    ios: impl Iterator<Item = (Operation, PageId)>,
) -> Result<(u64, Nanoseconds, u64), VolumeError> {
    let mut volume = DataVolume::new(spec, config.data_drives, pages)?;
    let mut count = 0;
    let ios: Vec<PageIo> = ios
        .take(config.io_sample)
        .map(|(operation, page)| {
            count += 1;
            PageIo {
                at: Nanoseconds::ZERO,
                operation,
                page,
            }
        })
        .collect();
    let queues = volume.queues(ios);
    let end = volume.execute(queues, config.queue_depth)?;
    Ok((count, end, volume.drive_capacity_pages))
}

impl Site {
    /// Generate the workload and measure the primary and the conventional secondary.
    pub fn measure(config: SiteConfig, spec: DriveSpec) -> Result<Site, VolumeError> {
        let workload = Workload::generate(&config);
        Site::measure_workload(config, spec, workload)
    }

    /// Measure the primary and the conventional secondary on a given workload.
    pub fn measure_workload(
        config: SiteConfig,
        spec: DriveSpec,
        workload: Workload,
    ) -> Result<Site, VolumeError> {
        let primary = measure_primary(&config, &spec, &workload)?;
        let conventional = measure_conventional(&config, &spec, &workload, &primary)?;
        Ok(Site {
            config,
            spec,
            workload,
            primary,
            conventional,
        })
    }
}

fn measure_primary(
    config: &SiteConfig,
    spec: &DriveSpec,
    workload: &Workload,
) -> Result<Primary, VolumeError> {
    let transactions = workload.transactions_measured.max(1) as f64;
    let ios_per_transaction = workload.primary_ios.len() as f64 / transactions;
    if workload.primary_ios.is_empty() {
        return Err(VolumeError::PoolHoldsDatabase {
            pages: workload.pages,
        });
    }
    let reads = workload
        .primary_ios
        .iter()
        .filter(|(op, _)| *op == Operation::Read)
        .count() as f64;
    let (count, elapsed, capacity) = closed_loop_rate(
        spec,
        config,
        workload.pages,
        workload.primary_ios.iter().copied(),
    )?;
    let ios_per_s = count as f64 / elapsed.as_secs_f64().max(1e-9);
    let transactions_per_s = ios_per_s / ios_per_transaction.max(1e-9);
    let log_bytes_per_transaction = log_bytes(workload.measured()) as f64 / transactions;
    Ok(Primary {
        transactions_per_s,
        r_gen_bytes_per_s: transactions_per_s * log_bytes_per_transaction,
        page_ios_per_transaction: ios_per_transaction,
        page_reads_per_transaction: reads / transactions,
        log_bytes_per_transaction,
        records_per_transaction: workload.measured().len() as f64 / transactions,
        ms_per_page_io: elapsed.as_secs_f64() * 1e3 * config.data_drives as f64
            / count.max(1) as f64,
        database_share_of_drive: workload.pages.div_ceil(config.data_drives as u64) as f64
            / capacity.max(1) as f64,
    })
}

/// The conventional applier's page I/Os for `records`, each stamped with the
/// instant its record arrives at `bytes_per_s` (zero: all at once), and the log
/// bytes they cover.
fn conventional_ios(
    config: &SiteConfig,
    workload: &Workload,
    bytes_per_s: f64,
) -> (Vec<PageIo>, u64) {
    let frames = (config.buffer_pool_bytes / PAGE_BYTES) as usize;
    let mut pool = BufferPool::new(frames, workload.pages);
    // Warm the pool on the warm-up records, as the primary's was.
    for record in &workload.records[..workload.first_measured] {
        pool.access(record.page, true);
    }
    let mut ios = Vec::new();
    let mut bytes = 0u64;
    for record in workload.measured() {
        if ios.len() >= config.io_sample {
            break;
        }
        let at = if bytes_per_s > 0.0 {
            Nanoseconds((bytes as f64 / bytes_per_s * 1e9) as u64)
        } else {
            Nanoseconds::ZERO
        };
        bytes += u64::from(record.bytes);
        let access = pool.access(record.page, true);
        if let Some(victim) = access.write_back {
            ios.push(PageIo {
                at,
                operation: Operation::Write,
                page: victim,
            });
        }
        if access.miss {
            ios.push(PageIo {
                at,
                operation: Operation::Read,
                page: record.page,
            });
        }
    }
    (ios, bytes)
}

fn measure_conventional(
    config: &SiteConfig,
    spec: &DriveSpec,
    workload: &Workload,
    primary: &Primary,
) -> Result<Conventional, VolumeError> {
    // Fastest rate: everything released at once.
    let (ios, bytes) = conventional_ios(config, workload, 0.0);
    let io_count = ios.len();
    let records = workload.measured().len().max(1) as f64;
    let mut volume = DataVolume::new(spec, config.data_drives, workload.pages)?;
    let queues = volume.queues(ios);
    let elapsed = volume.execute(queues, config.apply_queue_depth)?;
    let r_apl = bytes as f64 / elapsed.as_secs_f64().max(1e-9);
    let covered = bytes as f64 / log_bytes(workload.measured()).max(1) as f64;
    let page_ios_per_record = io_count as f64 / (records * covered.max(1e-9));
    // At R_gen: I/Os released as their log arrives; the span is the log's arrival time.
    let (ios, bytes) = conventional_ios(config, workload, primary.r_gen_bytes_per_s);
    let mut volume = DataVolume::new(spec, config.data_drives, workload.pages)?;
    let queues = volume.queues(ios);
    let done = volume.execute(queues, config.apply_queue_depth)?;
    let span = Nanoseconds((bytes as f64 / primary.r_gen_bytes_per_s * 1e9) as u64).max(done);
    let (energy, span) = crate::energy::drive_reports(&volume, volume.drives, span);
    let watts_per_drive = crate::energy::mean_watts(&energy, span);
    Ok(Conventional {
        r_apl_bytes_per_s: r_apl,
        page_ios_per_record,
        energy,
        span_s: span.as_secs_f64(),
        watts_per_drive,
    })
}
