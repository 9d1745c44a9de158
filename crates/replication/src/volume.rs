//! The data volume in simulated time: N catalog drives with database pages striped
//! across them page by page (page p on drive p mod N at its (p div N)-th 8 KB
//! slot), and one host that issues lists of page I/Os with a bounded number
//! outstanding per drive.
//!
//! The executor is the one way every part of the study touches the drives: the
//! primary's buffer-pool misses and write-backs (closed loop), the conventional
//! applier (I/Os released at the instant their log arrives), and the power-aware
//! applier's compacted batches (closed loop, pages in ascending order).

use crate::log::{PageId, PAGE_BYTES};
use spinstack_disk::drive::{Drive, DriveOptions};
use spinstack_disk::spec::DriveSpec;
use spinstack_sim::device::BlockDevice;
use spinstack_sim::driver::{run, Host, Io, Issue};
use spinstack_sim::engine::{DeviceCompletion, DeviceId, Engine, EngineError, EngineOptions};
use spinstack_sim::request::{Operation, Status};
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors, SECTOR_BYTES};
use std::collections::VecDeque;

/// Sectors in one page.
pub const PAGE_SECTORS: u64 = PAGE_BYTES / SECTOR_BYTES;

/// Most pages one request carries when the executor merges page I/Os that follow
/// each other on a drive (64 × 8 KB = 512 KB, the Linux block layer's default
/// largest request, `max_sectors_kb`). The block layer merges a request that
/// continues a queued one; the executor does the same with the I/Os waiting in a
/// drive's queue, in whichever applier or primary they come from. Only a sorted
/// batch produces many such neighbours: that is how sorting buys sequentiality.
pub const MAX_MERGED_PAGES: u64 = 64;

/// One page I/O, released no earlier than `at`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageIo {
    pub at: Nanoseconds,
    pub operation: Operation,
    pub page: PageId,
}

/// Why a volume could not be built or run.
#[derive(Debug, thiserror::Error)]
pub enum VolumeError {
    #[error("drive {name}: {problem}")]
    Drive { name: String, problem: String },
    #[error(
        "the database needs {pages} pages of 8 KB on {drives} drives, more than a {name} holds \
         ({capacity} pages each); use more drives"
    )]
    TooSmall {
        pages: u64,
        drives: usize,
        name: String,
        capacity: u64,
    },
    #[error(
        "the primary's buffer pool holds the whole database ({pages} pages): its data volume \
         never limits it, so no log generation rate follows; use a smaller buffer pool or a \
         larger database"
    )]
    PoolHoldsDatabase { pages: u64 },
    #[error("simulation: {0}")]
    Engine(#[from] EngineError),
    #[error("a page I/O to drive {device} failed: {status:?}")]
    Failed { device: usize, status: Status },
}

/// N drives of one model, pages striped across them.
#[derive(Clone)]
pub struct DataVolume {
    pub engine: Engine<Drive>,
    pub drives: usize,
    /// Requests issued so far (page I/Os merged into one count once).
    pub requests: u64,
    /// Pages of the database it holds, and pages one drive can hold.
    pub pages: u64,
    pub drive_capacity_pages: u64,
}

impl DataVolume {
    /// `drives` drives of `spec` (never spinning down on their own), able to hold
    /// `pages` pages.
    pub fn new(spec: &DriveSpec, drives: usize, pages: u64) -> Result<DataVolume, VolumeError> {
        let drives = drives.max(1);
        let mut engine = Engine::new(EngineOptions::default());
        let mut drive_capacity_pages = 0;
        for _ in 0..drives {
            let drive =
                Drive::new(spec, DriveOptions::default()).map_err(|e| VolumeError::Drive {
                    name: spec.name.clone(),
                    problem: e.to_string(),
                })?;
            let capacity = drive.capacity().0 / PAGE_SECTORS;
            drive_capacity_pages = capacity;
            if pages.div_ceil(drives as u64) > capacity {
                return Err(VolumeError::TooSmall {
                    pages,
                    drives,
                    name: spec.name.clone(),
                    capacity,
                });
            }
            engine.add_device(drive);
        }
        Ok(DataVolume {
            engine,
            drives,
            requests: 0,
            pages,
            drive_capacity_pages,
        })
    }

    /// The drive and LBN of `page`.
    pub fn place(&self, page: PageId) -> (usize, Lbn) {
        let n = self.drives as u64;
        ((page.0 % n) as usize, Lbn(page.0 / n * PAGE_SECTORS))
    }

    /// Split `ios` by drive, keeping their order.
    pub fn queues(&self, ios: impl IntoIterator<Item = PageIo>) -> Vec<VecDeque<PageIo>> {
        let mut queues = vec![VecDeque::new(); self.drives];
        for io in ios {
            queues[self.place(io.page).0].push_back(io);
        }
        queues
    }

    /// Issue every queued I/O (each drive's in order, at most `depth` outstanding per
    /// drive, none before its `at`) and return when the last completes (the clock's
    /// time if there was nothing to do).
    pub fn execute(
        &mut self,
        queues: Vec<VecDeque<PageIo>>,
        depth: u32,
    ) -> Result<Nanoseconds, VolumeError> {
        let mut host = Executor {
            drives: self.drives as u64,
            queues,
            outstanding: vec![0; self.drives],
            wake_set: vec![None; self.drives],
            depth: depth.max(1),
            requests: 0,
        };
        let start = self.engine.now();
        let summary = run(&mut self.engine, &mut host)?;
        self.requests += host.requests;
        Ok(summary.end.max(start).max(self.engine.now()))
    }
}

struct Executor {
    drives: u64,
    queues: Vec<VecDeque<PageIo>>,
    outstanding: Vec<u32>,
    /// The wake-up set for a drive's next release, if any.
    wake_set: Vec<Option<Nanoseconds>>,
    depth: u32,
    requests: u64,
}

impl Executor {
    fn fill<D: BlockDevice>(
        &mut self,
        device: usize,
        io: &mut Io<'_, D>,
    ) -> Result<(), VolumeError> {
        while self.outstanding[device] < self.depth {
            let Some(&next) = self.queues[device].front() else {
                return Ok(());
            };
            if next.at > io.now() {
                if self.wake_set[device] != Some(next.at) {
                    io.wake_at(next.at, device as u64)?;
                    self.wake_set[device] = Some(next.at);
                }
                return Ok(());
            }
            self.queues[device].pop_front();
            let slot = next.page.0 / self.drives;
            let mut pages = 1;
            // Merge the queued I/Os that continue this one on the drive.
            while pages < MAX_MERGED_PAGES {
                match self.queues[device].front() {
                    Some(following)
                        if following.operation == next.operation
                            && following.at <= io.now()
                            && following.page.0 / self.drives == slot + pages =>
                    {
                        self.queues[device].pop_front();
                        pages += 1;
                    }
                    _ => break,
                }
            }
            io.submit(
                DeviceId(device as u32),
                Issue::new(
                    next.operation,
                    Lbn(slot * PAGE_SECTORS),
                    Sectors(pages * PAGE_SECTORS),
                ),
            )?;
            self.outstanding[device] += 1;
            self.requests += 1;
        }
        Ok(())
    }
}

impl<D: BlockDevice> Host<D> for Executor {
    type Error = VolumeError;
    fn start(&mut self, io: &mut Io<'_, D>) -> Result<(), VolumeError> {
        for device in 0..self.queues.len() {
            self.fill(device, io)?;
        }
        Ok(())
    }
    fn completed(
        &mut self,
        done: &DeviceCompletion,
        io: &mut Io<'_, D>,
    ) -> Result<(), VolumeError> {
        let device = done.device.0 as usize;
        if done.completion.status != Status::Ok {
            return Err(VolumeError::Failed {
                device,
                status: done.completion.status,
            });
        }
        self.outstanding[device] -= 1;
        self.fill(device, io)
    }
    fn woke(&mut self, token: u64, io: &mut Io<'_, D>) -> Result<(), VolumeError> {
        let device = token as usize;
        self.wake_set[device] = None;
        self.fill(device, io)
    }
}
