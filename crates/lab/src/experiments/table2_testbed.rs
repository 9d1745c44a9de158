//! The traxtents paper's FFS testbed (§5.1), shared by `table2-ffs`'s reads
//! (`table2_ffs`) and writes (`table2_ffs_writes`): the Atlas 10K behind an
//! Ultra2 Wide link with tagged queuing.

use crate::drives::{self, ATLAS_10K};
use crate::LabError;
use spinstack_disk::drive::DriveOptions;
use spinstack_disk::DriveSpec;

/// The traxtents testbed's Ultra2 Wide SCSI link, 80 MB/s (§5.1).
pub(super) const HOST_LINK_MB_PER_S: f64 = 80.0;
/// FreeBSD queues commands at the disk (§4.2.2: "unmodified FreeBSD already
/// supports command queuing at the device"); the scans keep at most four
/// requests outstanding, so any depth of four or more gives the same run.
pub(super) const TAGGED_QUEUE_DEPTH: u32 = 16;

/// The Atlas 10K as the paper published it (Table 1's head switch, see
/// [`drives::as_published`]) behind the testbed's link.
pub(super) fn atlas10k_spec() -> Result<DriveSpec, LabError> {
    drives::with_host_link(&drives::as_published(ATLAS_10K)?, HOST_LINK_MB_PER_S)
}

/// The drive options of the testbed: tagged queuing at [`TAGGED_QUEUE_DEPTH`].
pub(super) fn drive_options() -> DriveOptions {
    DriveOptions {
        queue_depth: Some(TAGGED_QUEUE_DEPTH),
        ..DriveOptions::default()
    }
}
