//! The real-device probe: O_DIRECT timed reads and SG_IO address translation on a
//! block device or file, strictly read-only.
//!
//! The device is opened `O_RDONLY | O_DIRECT` (plain `O_RDONLY` where the file
//! system refuses O_DIRECT, with the page cache dropped for each read range before
//! the read, and the probe says so). A device the process may not open (EPERM,
//! EACCES) is an error that names it and says why. It never writes data and never
//! changes a mode page: the caching mode page can only be changed by MODE SELECT,
//! which this probe refuses to send, so `set_caching` is unsupported here and the
//! user must turn the read cache off beforehand (`sdparm --set RCD=1`) for timing
//! extraction to mean anything. Address translation uses SEND DIAGNOSTIC with the
//! translate-address page (0x40) followed by RECEIVE DIAGNOSTIC RESULTS, through
//! the SG_IO ioctl; SATA behind libata, virtio, loop, NVMe and plain files do not
//! answer it, and the probe reports that as [`ProbeError::Unsupported`].

use crate::probe::{CacheSetting, Capabilities, Probe, ProbeError, TimedRead};
use spinstack_disk::layout::{Pbn, SectorContent};
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors, SECTOR_BYTES};
use std::fs::File;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Alignment O_DIRECT needs for buffers, offsets and lengths on every Linux device
/// we meet (logical blocks are 512 or 4096 bytes).
const DIRECT_ALIGNMENT: usize = 4096;
/// The largest read the probe issues (timing extraction reads at most two tracks).
const LARGEST_READ_BYTES: usize = 4 << 20;

/// A real block device or file, opened read-only.
pub struct DeviceProbe {
    path: PathBuf,
    file: File,
    direct: bool,
    capacity: Sectors,
    translate: bool,
    epoch: Instant,
    buffer: AlignedBuffer,
}

/// A heap buffer aligned for O_DIRECT.
struct AlignedBuffer {
    storage: Vec<u8>,
    offset: usize,
}

impl AlignedBuffer {
    fn new(bytes: usize) -> AlignedBuffer {
        let storage = vec![0u8; bytes + DIRECT_ALIGNMENT];
        let offset = storage.as_ptr().align_offset(DIRECT_ALIGNMENT);
        AlignedBuffer { storage, offset }
    }
    fn slice(&mut self, bytes: usize) -> &mut [u8] {
        &mut self.storage[self.offset..self.offset + bytes]
    }
}

impl DeviceProbe {
    /// Open `path` read-only; a missing or unreadable path is an error naming it.
    pub fn open(path: &Path) -> Result<DeviceProbe, ProbeError> {
        let failed = |command: &'static str, detail: String| ProbeError::Failed {
            probe: path.display().to_string(),
            command,
            detail,
        };
        let (file, direct) = open_read_only(path).map_err(|detail| failed("open", detail))?;
        let bytes = device_bytes(&file).map_err(|e| failed("READ CAPACITY", e))?;
        let mut probe = DeviceProbe {
            path: path.to_path_buf(),
            file,
            direct,
            capacity: Sectors(bytes / SECTOR_BYTES),
            translate: false,
            epoch: Instant::now(),
            buffer: AlignedBuffer::new(LARGEST_READ_BYTES),
        };
        probe.translate = probe.translate_lbn(Lbn(0)).is_ok();
        Ok(probe)
    }

    /// Whether reads bypass the page cache.
    pub fn direct(&self) -> bool {
        self.direct
    }

    fn unsupported(&self, command: &'static str, reason: &str) -> ProbeError {
        ProbeError::Unsupported {
            probe: self.name(),
            command,
            reason: reason.to_string(),
        }
    }
}

/// Open `path` read-only, with O_DIRECT where the device or file system takes it
/// (false: buffered reads, each preceded by POSIX_FADV_DONTNEED so that a reread
/// is not served from the page cache). A refusal to open at all is explained:
/// EPERM and EACCES mean the caller may not read the device (permissions, or a
/// container's device policy), which no fallback can fix.
fn open_read_only(path: &Path) -> Result<(File, bool), String> {
    let direct = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path);
    let direct_error = match direct {
        Ok(file) => return Ok((file, true)),
        Err(e) => e,
    };
    match std::fs::OpenOptions::new().read(true).open(path) {
        Ok(file) => Ok((file, false)),
        Err(e) => Err(match e.raw_os_error() {
            Some(libc::EPERM) | Some(libc::EACCES) => format!(
                "cannot open it read-only ({e}); this process is not allowed to read the \
                 device (file permissions, or a sandbox/container device policy); nothing \
                 was read or written{}",
                through_file_hint(path)
            ),
            _ if e.kind() == direct_error.kind() => e.to_string(),
            _ => format!("{e} (with O_DIRECT: {direct_error})"),
        }),
    }
}

/// For a mounted device: how to time it anyway, through a file on its file system.
fn through_file_hint(path: &Path) -> String {
    match crate::backing::mount_point_of_device(path) {
        Some(mount) => format!(
            ". It is mounted at {mount}: to time it through its file system, pass a large \
             file on it that holds written data (e.g. `dd if=/dev/urandom \
             of={}/spinstack-probe.img bs=1M count=1024 conv=fsync`); the report then says \
             where on the disk the file lies",
            if mount == "/" {
                "/var/tmp"
            } else {
                mount.as_str()
            }
        ),
        None => String::new(),
    }
}

/// Size in bytes: BLKGETSIZE64 for a block device, the length for a file.
fn device_bytes(file: &File) -> Result<u64, String> {
    let metadata = file.metadata().map_err(|e| e.to_string())?;
    if !metadata.file_type().is_block_device() {
        return Ok(metadata.len());
    }
    let mut bytes: u64 = 0;
    // BLKGETSIZE64 = _IOR(0x12, 114, size_t)
    const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
    // SAFETY: the ioctl writes one u64 into `bytes`, which outlives the call.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), BLKGETSIZE64 as _, &mut bytes as *mut u64) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error().to_string());
    }
    Ok(bytes)
}

/// Linux `sg_io_hdr_t` (scsi/sg.h).
#[repr(C)]
struct SgIoHeader {
    interface_id: libc::c_int,
    dxfer_direction: libc::c_int,
    cmd_len: u8,
    mx_sb_len: u8,
    iovec_count: u16,
    dxfer_len: u32,
    dxferp: *mut libc::c_void,
    cmdp: *const u8,
    sbp: *mut u8,
    timeout: u32,
    flags: u32,
    pack_id: libc::c_int,
    usr_ptr: *mut libc::c_void,
    status: u8,
    masked_status: u8,
    msg_status: u8,
    sb_len_wr: u8,
    host_status: u16,
    driver_status: u16,
    resid: libc::c_int,
    duration: u32,
    info: u32,
}

const SG_IO: libc::c_ulong = 0x2285;
const SG_DXFER_TO_DEV: libc::c_int = -2;
const SG_DXFER_FROM_DEV: libc::c_int = -3;
const TRANSLATE_ADDRESS_PAGE: u8 = 0x40;
/// Address descriptor formats (SBC): long block (8-byte LBA) and physical sector.
const LONG_BLOCK_FORMAT: u8 = 0b011;
const PHYSICAL_SECTOR_FORMAT: u8 = 0b101;

/// Issue one SCSI command through SG_IO; `Err` carries the reason.
fn sg_command(file: &File, cdb: &[u8], data: &mut [u8], to_device: bool) -> Result<(), String> {
    let mut sense = [0u8; 32];
    let mut header = SgIoHeader {
        interface_id: b'S' as libc::c_int,
        dxfer_direction: if to_device {
            SG_DXFER_TO_DEV
        } else {
            SG_DXFER_FROM_DEV
        },
        cmd_len: cdb.len() as u8,
        mx_sb_len: sense.len() as u8,
        iovec_count: 0,
        dxfer_len: data.len() as u32,
        dxferp: data.as_mut_ptr().cast(),
        cmdp: cdb.as_ptr(),
        sbp: sense.as_mut_ptr(),
        timeout: 10_000,
        flags: 0,
        pack_id: 0,
        usr_ptr: std::ptr::null_mut(),
        status: 0,
        masked_status: 0,
        msg_status: 0,
        sb_len_wr: 0,
        host_status: 0,
        driver_status: 0,
        resid: 0,
        duration: 0,
        info: 0,
    };
    // SAFETY: every pointer in the header refers to a live buffer of the stated
    // length for the duration of the ioctl.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), SG_IO as _, &mut header as *mut SgIoHeader) };
    if rc != 0 {
        return Err(format!("SG_IO: {}", std::io::Error::last_os_error()));
    }
    if header.status != 0 || header.host_status != 0 || header.driver_status != 0 {
        return Err(format!(
            "SCSI status {:#x}, host {:#x}, driver {:#x}, sense key {:#x}",
            header.status,
            header.host_status,
            header.driver_status,
            sense[2] & 0x0f
        ));
    }
    Ok(())
}

impl Probe for DeviceProbe {
    fn name(&self) -> String {
        self.path.display().to_string()
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            translate: self.translate,
            defect_list: false,
            timed_reads: true,
            cache_control: false,
        }
    }

    fn read_capacity(&mut self) -> Result<Sectors, ProbeError> {
        Ok(self.capacity)
    }

    fn read_defect_list(&mut self) -> Result<Vec<Pbn>, ProbeError> {
        Err(self.unsupported("READ DEFECT LIST", "not implemented for real devices"))
    }

    fn translate_lbn(&mut self, lbn: Lbn) -> Result<Pbn, ProbeError> {
        let mut page = [0u8; 14];
        page[0] = TRANSLATE_ADDRESS_PAGE;
        page[3] = 10; // page length
        page[4] = LONG_BLOCK_FORMAT;
        page[5] = PHYSICAL_SECTOR_FORMAT;
        page[6..14].copy_from_slice(&lbn.0.to_be_bytes());
        let send = [0x1d, 0x10, 0, 0, page.len() as u8, 0]; // SEND DIAGNOSTIC, PF=1
        let mut answer = [0u8; 16];
        let receive = [0x1c, 0x01, TRANSLATE_ADDRESS_PAGE, 0, answer.len() as u8, 0];
        sg_command(&self.file, &send, &mut page, true)
            .and_then(|()| sg_command(&self.file, &receive, &mut answer, false))
            .map_err(|reason| {
                self.unsupported("SEND/RECEIVE DIAGNOSTIC translate address", &reason)
            })?;
        if answer[0] != TRANSLATE_ADDRESS_PAGE || answer[5] & 0x07 != PHYSICAL_SECTOR_FORMAT {
            return Err(self.unsupported("translate address", "unexpected answer page"));
        }
        Ok(Pbn {
            cylinder: u32::from_be_bytes([0, answer[8], answer[9], answer[10]]),
            surface: u32::from(answer[11]),
            sector: u32::from_be_bytes([answer[12], answer[13], answer[14], answer[15]]),
        })
    }

    fn translate_pbn(&mut self, _pbn: Pbn) -> Result<SectorContent, ProbeError> {
        Err(self.unsupported(
            "translate physical address",
            "not implemented for real devices",
        ))
    }

    fn set_caching(&mut self, setting: CacheSetting) -> Result<(), ProbeError> {
        match setting {
            CacheSetting::AsShipped => Ok(()),
            CacheSetting::ReadCacheAndPrefetchOff => Err(self.unsupported(
                "MODE SELECT caching page",
                "this probe never changes a device's settings; run `sdparm --set RCD=1` first",
            )),
        }
    }

    fn now(&self) -> Nanoseconds {
        Nanoseconds(self.epoch.elapsed().as_nanos() as u64)
    }

    fn wait_until(&mut self, instant: Nanoseconds) {
        while self.now() < instant {
            std::hint::spin_loop();
        }
    }

    fn timed_read(&mut self, lbn: Lbn, sectors: Sectors) -> Result<TimedRead, ProbeError> {
        if sectors.0 == 0 || lbn.0 + sectors.0 > self.capacity.0 {
            return Err(ProbeError::OutOfRange {
                probe: self.name(),
                command: "READ",
                lbn,
                sectors: sectors.0,
                capacity: self.capacity,
            });
        }
        // O_DIRECT needs whole aligned blocks: widen the read to them.
        let align = DIRECT_ALIGNMENT as u64;
        let start = lbn.0 * SECTOR_BYTES / align * align;
        let end = ((lbn.0 + sectors.0) * SECTOR_BYTES).div_ceil(align) * align;
        let end = end.min(self.capacity.0 * SECTOR_BYTES);
        let length = (end - start) as usize;
        if length > LARGEST_READ_BYTES {
            return Err(ProbeError::Failed {
                probe: self.name(),
                command: "READ",
                detail: format!("{} bytes is more than the probe reads at once", length),
            });
        }
        if !self.direct {
            // Buffered reads: drop the range from the page cache so the device, not
            // memory, answers. Advice only; a failure leaves timings cache-hot,
            // which the repeat-read check then reports as "no track structure".
            // SAFETY: plain syscall on an open descriptor.
            unsafe {
                libc::posix_fadvise(
                    self.file.as_raw_fd(),
                    start as libc::off_t,
                    length as libc::off_t,
                    libc::POSIX_FADV_DONTNEED,
                );
            }
        }
        let issued = self.now();
        let buffer = self.buffer.slice(length);
        // SAFETY: `buffer` is valid for `length` bytes.
        let got = unsafe {
            libc::pread(
                self.file.as_raw_fd(),
                buffer.as_mut_ptr().cast(),
                length,
                start as libc::off_t,
            )
        };
        let completed = self.now();
        if got < 0 {
            return Err(ProbeError::Failed {
                probe: self.name(),
                command: "READ",
                detail: std::io::Error::last_os_error().to_string(),
            });
        }
        Ok(TimedRead { issued, completed })
    }
}
