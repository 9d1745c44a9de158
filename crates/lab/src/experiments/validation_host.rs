//! The Linux validation paper's host as CPU costs and as its SCSI driver's
//! queue: one place for what `ext2-bonnie`, `ext2-diff`, `raid5-bonnie` and
//! `raid5-diff` charge per device I/O and per read or write call, for how
//! their summaries state it, and for how many requests the streams
//! experiments keep out at a drive.
//!
//! The paper's Table 1: a Pentium D 830 (3 GHz, 16 KB L1, 2 × 1 MB L2) under
//! Linux 2.6.16.9. Its figures are estimates scaled from Chung et al. 2000
//! (see `spinstack_volume::timed::host`): no published per-I/O or per-call
//! measurement of that host was found. The traxtents FFS experiments
//! (`table2-ffs`, a 550 MHz Pentium III) and `dab-iometer` (a 700 MHz Celeron
//! under Windows 2000) keep Chung's 733 MHz figures.

use spinstack_disk::spec::DriveSpec;
use spinstack_fs::scan::ReadCost;
use spinstack_volume::timed::HostCost;

/// Commands the paper's SCSI driver keeps out per disk: Linux 2.6.16's
/// `aacraid` (the Adaptec 4805SAS of Table 1; the paper modified the driver to
/// bypass the controller's features) sets a queue depth of 128 on every device
/// that takes tagged commands (`aac_slave_configure` in
/// drivers/scsi/aacraid/linit.c of that kernel).
pub(crate) const AACRAID_QUEUE_DEPTH: u32 = 128;

/// Requests out at one drive behind that driver: its 128, capped by the drive's
/// own tagged queue (the catalog's `max_queue_length`; the drive refuses more).
pub(crate) fn queue_depth(spec: &DriveSpec) -> u32 {
    AACRAID_QUEUE_DEPTH.min(spec.firmware.queue.max_queue_length)
}

/// `queue_depth` of the catalog drive `name`.
pub(crate) fn queue_depth_of(name: &str) -> Result<u32, crate::LabError> {
    Ok(queue_depth(&crate::drives::spec(name)?))
}

/// What the host's CPU charges: per device I/O (paid by the volume) and per
/// buffered read or write call (paid by the file-system program).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HostProfile {
    pub device_io: HostCost,
    pub buffered_call: HostCost,
}

impl HostProfile {
    /// The validation paper's Pentium D 830 (the estimates of
    /// `HostCost::pentium_d_830_device_io` and `HostCost::pentium_d_830_buffered`).
    pub(crate) fn pentium_d_830() -> HostProfile {
        HostProfile {
            device_io: HostCost::pentium_d_830_device_io(),
            buffered_call: HostCost::pentium_d_830_buffered(),
        }
    }

    /// The per-call cost in the file-system crate's terms.
    pub(crate) fn read_cost(self) -> ReadCost {
        ReadCost {
            per_call: self.buffered_call.fixed,
            per_kib: self.buffered_call.per_kib,
        }
    }

    /// The sentence a summary's setup gives, `per_io` naming the I/O ("device
    /// I/O", "member I/O").
    pub(crate) fn note(self, per_io: &str) -> String {
        format!(
            "Host cost per {per_io} {} and per read or write call {} (the paper's Pentium \
             D 830, 3 GHz, 800 MT/s bus: estimated from Chung et al. 2000, Table 11's \
             733 MHz Pentium III, fixed and DMA set-up costs scaled by core clock, copies \
             by bus bandwidth; no published figure for this host was found).",
            self.device_io.describe(),
            self.buffered_call.describe()
        )
    }

    /// The copy rate the per-KB figure implies, in MB/s, for the notes.
    pub(crate) fn copy_megabytes_per_second(self) -> f64 {
        1024.0 / (self.buffered_call.per_kib.0 as f64 / 1e9) / 1e6
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Proves the profile hands the file-system crate the same figures the
    // volume crate's constructor holds, and the note prints them.
    #[test]
    fn read_cost_and_note_carry_the_volume_figures() {
        let host = HostProfile::pentium_d_830();
        let read = host.read_cost();
        assert_eq!(read.per_call, HostCost::pentium_d_830_buffered().fixed);
        assert_eq!(read.per_kib, HostCost::pentium_d_830_buffered().per_kib);
        let note = host.note("device I/O");
        assert!(
            note.contains("per device I/O 12.2 µs + 0.122 µs/KB"),
            "{note}"
        );
        assert!(note.contains("call 2.93 µs + 1 µs/KB"), "{note}");
        assert!((host.copy_megabytes_per_second() - 1024.0).abs() < 1e-9);
    }
}
