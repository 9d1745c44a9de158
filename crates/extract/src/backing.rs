//! Where a file lies on its block device: the device's name and the file's
//! physical extents (Linux FIEMAP), so that a disk the process may not open raw
//! can still be timed through a large file on its file system.
//!
//! **Why.** Timing extraction needs reads that reach the platters. When the raw
//! device is off limits (no root, or a sandbox device policy — this project's own
//! CI machine refuses `open("/dev/vda")` even to root) the same reads can be made
//! through a file, with O_DIRECT, provided the file's blocks are really on the
//! disk: a hole or an *unwritten* (preallocated) extent is answered by the file
//! system with zeros and never touches the device, so its read times would say
//! nothing about the disk. This module finds out which case holds, and where the
//! file's LBNs are on the device, so a report can name the disk and the device
//! LBN of the file's first sector.
//!
//! **Invariants.** The extent list is sorted by file offset and bounded
//! ([`EXTENT_COUNT_MAX`]); byte figures are converted to 512-byte sectors only when
//! the file system reports them sector aligned. Nothing here writes: FIEMAP with
//! `FIEMAP_FLAG_SYNC` flushes the file's own dirty pages, which is the file
//! system's normal write-back of data the user already wrote.
//!
//! **What it does not model.** Files on devices stacked below device-mapper or md
//! are attributed to the top device (`dm-0`, `md0`), whose LBNs are not the
//! disk's. Copy-on-write file systems may move blocks after the query.

use serde::Serialize;
use spinstack_sim::units::{Lbn, Sectors, SECTOR_BYTES};
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;

/// The most extents a file may have before the query gives up (a file this
/// fragmented is useless for timing anyway, and the list must stay bounded).
pub const EXTENT_COUNT_MAX: usize = 1 << 20;

/// One physical extent of a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct FileExtent {
    pub file_first_lbn: Lbn,
    /// LBN on the whole disk (partition start added), when known.
    pub device_first_lbn: Lbn,
    pub sectors: Sectors,
    pub kind: ExtentKind,
}

/// Whether reads of an extent reach the device sector for sector.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExtentKind {
    /// Written data at `device_first_lbn`: reads go to the disk.
    Data,
    /// Preallocated, never written: reads return zeros without device I/O.
    Unwritten,
    /// Location unknown, delayed, inline in metadata or encoded (compressed,
    /// encrypted): no one-to-one map from file sectors to device sectors.
    NotPlain,
}

/// What the file system says about where a file lives.
#[derive(Clone, Debug, Serialize)]
pub struct FileBacking {
    /// `/dev/NAME` of the whole disk holding the file, if it is a block device.
    pub device: Option<String>,
    /// Sector where the file system's partition starts on that disk.
    pub partition_start_lbn: Lbn,
    pub extents: Vec<FileExtent>,
    /// File sectors covered by no extent (holes, or tails not yet allocated).
    pub hole_sectors: u64,
}

impl FileBacking {
    /// Sectors of the file that reads cannot take from the device.
    pub fn sectors_not_on_device(&self) -> u64 {
        let elsewhere: u64 = self
            .extents
            .iter()
            .filter(|e| e.kind != ExtentKind::Data)
            .map(|e| e.sectors.0)
            .sum();
        elsewhere + self.hole_sectors
    }

    /// Device LBN of the file's first sector, when the file starts with an extent.
    pub fn device_lbn_of_file_start(&self) -> Option<Lbn> {
        self.extents
            .first()
            .filter(|e| e.file_first_lbn == Lbn(0))
            .map(|e| e.device_first_lbn)
    }
}

/// Why the backing of a file could not be learnt.
#[derive(Debug, thiserror::Error)]
pub enum BackingError {
    #[error("the file system does not report extents (FIEMAP: {0})")]
    NoExtentMap(String),
    #[error("more than {EXTENT_COUNT_MAX} extents")]
    TooFragmented,
    #[error("extent at byte {0} is not aligned to 512-byte sectors")]
    Unaligned(u64),
}

/// The device and physical extents of the regular file `file`.
pub fn file_backing(file: &File) -> Result<FileBacking, BackingError> {
    let metadata = file
        .metadata()
        .map_err(|e| BackingError::NoExtentMap(e.to_string()))?;
    let (device, partition_start_lbn) = whole_disk_of(metadata.dev());
    let extents = fiemap(file, partition_start_lbn)?;
    let covered: u64 = extents.iter().map(|e| e.sectors.0).sum();
    let file_sectors = metadata.len().div_ceil(SECTOR_BYTES);
    Ok(FileBacking {
        device,
        partition_start_lbn,
        hole_sectors: file_sectors.saturating_sub(covered),
        extents,
    })
}

/// `/dev/NAME` of the whole disk behind device number `dev`, and where the
/// partition starts on it; `(None, 0)` for file systems with no block device.
fn whole_disk_of(dev: u64) -> (Option<String>, Lbn) {
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let sysfs = format!("/sys/dev/block/{major}:{minor}");
    let Ok(resolved) = std::fs::canonicalize(&sysfs) else {
        return (None, Lbn(0));
    };
    let is_partition = resolved.join("partition").exists();
    let start = if is_partition {
        read_number(&resolved.join("start")).unwrap_or(0)
    } else {
        0
    };
    let disk_dir = if is_partition {
        resolved.parent().map(Path::to_path_buf)
    } else {
        Some(resolved)
    };
    let name = disk_dir.and_then(|dir| dir.file_name().map(|n| n.to_string_lossy().into_owned()));
    (name.map(|n| format!("/dev/{n}")), Lbn(start))
}

fn read_number(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Linux `struct fiemap_extent` (linux/fiemap.h).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct RawExtent {
    logical_bytes: u64,
    physical_bytes: u64,
    length_bytes: u64,
    reserved64: [u64; 2],
    flags: u32,
    reserved: [u32; 3],
}

/// Extents asked for per ioctl.
const EXTENTS_PER_CALL: usize = 256;

/// Linux `struct fiemap` with room for [`EXTENTS_PER_CALL`] extents.
#[repr(C)]
struct RawMap {
    start_bytes: u64,
    length_bytes: u64,
    flags: u32,
    mapped_extents: u32,
    extent_count: u32,
    reserved: u32,
    extents: [RawExtent; EXTENTS_PER_CALL],
}

/// FS_IOC_FIEMAP = _IOWR('f', 11, struct fiemap).
const FS_IOC_FIEMAP: libc::c_ulong = 0xC020_660B;
const FIEMAP_FLAG_SYNC: u32 = 0x1;
const FIEMAP_EXTENT_LAST: u32 = 0x1;
const FIEMAP_EXTENT_UNWRITTEN: u32 = 0x800;
/// UNKNOWN | DELALLOC | ENCODED | DATA_ENCRYPTED | NOT_ALIGNED | DATA_INLINE | DATA_TAIL.
const FIEMAP_EXTENT_NOT_PLAIN: u32 = 0x2 | 0x4 | 0x8 | 0x80 | 0x100 | 0x200 | 0x400;

/// All extents of `file`, in file order.
fn fiemap(file: &File, partition_start_lbn: Lbn) -> Result<Vec<FileExtent>, BackingError> {
    let mut extents = Vec::new();
    let mut next_bytes = 0u64;
    loop {
        let batch = fiemap_batch(file, next_bytes)?;
        let Some(last) = batch.last() else {
            return Ok(extents);
        };
        next_bytes = last.logical_bytes + last.length_bytes;
        let done = last.flags & FIEMAP_EXTENT_LAST != 0;
        for raw in batch {
            extents.push(to_extent(&raw, partition_start_lbn)?);
        }
        if extents.len() > EXTENT_COUNT_MAX {
            return Err(BackingError::TooFragmented);
        }
        if done {
            return Ok(extents);
        }
    }
}

fn fiemap_batch(file: &File, start_bytes: u64) -> Result<Vec<RawExtent>, BackingError> {
    let mut map = Box::new(RawMap {
        start_bytes,
        length_bytes: u64::MAX - start_bytes,
        flags: FIEMAP_FLAG_SYNC,
        mapped_extents: 0,
        extent_count: EXTENTS_PER_CALL as u32,
        reserved: 0,
        extents: [RawExtent::default(); EXTENTS_PER_CALL],
    });
    // SAFETY: `map` is a live, correctly laid out `struct fiemap` with room for
    // `extent_count` extents; the kernel writes at most that many.
    let rc = unsafe {
        libc::ioctl(
            file.as_raw_fd(),
            FS_IOC_FIEMAP as _,
            &mut *map as *mut RawMap,
        )
    };
    if rc != 0 {
        return Err(BackingError::NoExtentMap(
            std::io::Error::last_os_error().to_string(),
        ));
    }
    let mapped = (map.mapped_extents as usize).min(EXTENTS_PER_CALL);
    Ok(map.extents[..mapped].to_vec())
}

fn to_extent(raw: &RawExtent, partition_start_lbn: Lbn) -> Result<FileExtent, BackingError> {
    let kind = if raw.flags & FIEMAP_EXTENT_NOT_PLAIN != 0 {
        ExtentKind::NotPlain
    } else if raw.flags & FIEMAP_EXTENT_UNWRITTEN != 0 {
        ExtentKind::Unwritten
    } else {
        ExtentKind::Data
    };
    // Only extents that map sector for sector must be aligned; an inline or
    // encoded extent is reported by its (rounded-down) size and never read as disk.
    if kind != ExtentKind::NotPlain {
        for bytes in [raw.logical_bytes, raw.physical_bytes, raw.length_bytes] {
            if bytes % SECTOR_BYTES != 0 {
                return Err(BackingError::Unaligned(bytes));
            }
        }
    }
    Ok(FileExtent {
        file_first_lbn: Lbn(raw.logical_bytes / SECTOR_BYTES),
        device_first_lbn: Lbn(partition_start_lbn.0 + raw.physical_bytes / SECTOR_BYTES),
        sectors: Sectors(raw.length_bytes / SECTOR_BYTES),
        kind,
    })
}

/// Where the block device `path` is mounted (from /proc/self/mountinfo), matched by
/// device number so that `/dev/root`-style aliases are found too.
pub fn mount_point_of_device(path: &Path) -> Option<String> {
    let rdev = std::fs::metadata(path).ok()?.rdev();
    let wanted = format!("{}:{}", libc::major(rdev), libc::minor(rdev));
    let table = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    table.lines().find_map(|line| {
        let mut fields = line.split(' ');
        let device_number = fields.nth(2)?;
        let _root = fields.next()?;
        let mount_point = fields.next()?;
        (device_number == wanted).then(|| mount_point.to_string())
    })
}
