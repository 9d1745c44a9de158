//! # spinstack-fs: the file-system layer, as a model
//!
//! **What it models.** The parts of a file system that decide where data lies
//! on a volume and when it moves between memory and disk — the lower layers of
//! the traxtents paper's FreeBSD FFS (§4.2, §5.3) and of the Linux validation
//! paper's ext2 (§2.4–2.5, §3) — over any volume whose track map is known: a
//! drive's true map (`spinstack_disk::layout::Layout::track_map`), an extracted
//! one, or a RAID's logical map (`spinstack_array::tracks::logical_track_map`,
//! where each data unit of a track-aligned RAID-5 is one member track; the same
//! map of a timed volume, and its coarser map of whole stripes, are
//! `spinstack_volume::map::{logical_track_map, logical_stripe_map}`).
//!
//! - [`allocator`]: block allocation in groups with metadata, next-block
//!   preference, indirect blocks in the data stream, FFS's per-file group
//!   limit (`maxbpg`), traxtent FFS's excluded
//!   blocks and traxtent placement, ext2's preallocation (a window, or up to the
//!   track boundary); [`config`] holds the four presets and every parameter's
//!   source; [`traxtent`] the runs of whole blocks per track and the excluded
//!   blocks (the same list `mke2fs -l` is given by `spinstack-extract`).
//! - [`indirect`]: which indirect blocks a read must fetch first, top level
//!   first, kept in the page cache as the block device's pages.
//! - [`cache`]: a page cache bounded in bytes, LRU or Linux's active/inactive
//!   lists, with each page's write-back state; [`writeback`]: Linux 2.6.16's
//!   age and ratio rules and FFS's complete-cluster commits.
//! - [`readahead`]: FFS's sequential-count ramp, fast start, traxtent FFS,
//!   Linux 2.6.16's windows (any size limit, e.g. one or four tracks) and
//!   track-aligned fetches, as state machines over a [`readahead::FileView`];
//!   [`view`] gives that view of an allocated file.
//! - [`scan`]: the first applications, a linear scan of one file or of
//!   several read in turn (as `diff` does), through the cache and a read-ahead
//!   policy per file, as a `Host` of the one event loop
//!   (`spinstack_sim::driver::run`) over any `BlockDevice`, with a CPU cost per
//!   `read` call and per KiB copied ([`scan::ReadCost`], source stated); `head`
//!   is a scan with a read limit per file.
//! - [`program`]: programs that write as well as read (copy, Postmark,
//!   Bonnie's block write) as lists of steps, with allocation on write and
//!   the file system's write-back ([`flush`]) issuing the writes on the event
//!   loop; [`postmark`] builds Postmark v1.11's steps, [`bonnie`] Bonnie's
//!   block write.
//! - [`streams`]: multimedia-like streams (sequential readers from random
//!   positions at a fixed or an "about" rate, one new per interval, each call
//!   served a read-ahead window at a time as Linux does) and each one's
//!   start-up latency and first byte; [`elevator`]: a host elevator that holds
//!   requests and sends them a few at a time in Linux 2.6.16's anticipatory
//!   order (an ascending sweep, the oldest first when expired at its FIFO
//!   check), which the streams may use. The
//!   elevator's merging and the plug/unplug delay (plain or track-aware) are
//!   the device's below it: `spinstack_volume::timed::Striped::single` with a
//!   `PlugPolicy` is one drive with both, plus a host cost per device I/O; the
//!   scan unplugs it (`Control::Unplug`) when the reader waits for a page.
//!
//! **Invariants.** An allocator never gives a block to two files, never gives
//! metadata or (when excluding) a block that spans a track boundary, never gives
//! a block past the volume's last whole block, and a request either gets all its
//! blocks or none (other files' preallocations may have been taken back
//! trying). Traxtent placement puts a file's first allocation
//! inside one traxtent whenever some traxtent has that many free blocks in a
//! row. A page cache never holds more pages than its bound and never evicts a
//! page that is not clean: dirty data leaves memory only through write-back (or
//! when its file is truncated). Read-ahead plans never fetch a resident page or
//! leave the file; traxtent FFS and track-aligned read-ahead never cross a track
//! boundary. A program (see [`program`]) never gives a page a block another
//! live file holds, reads back from a block the page last written to it
//! (`ProgramReport::misread_pages` counts any other), keeps write-back running
//! until every dirty page is clean, and never holds more pages than the
//! cache's bound. The tests in `tests/` check each of these, against references.
//!
//! **What it does not do.** No bytes: files are block lists, pages are keys.
//! No directories, inodes' contents, fragments (FFS's 1 KB fragments of a
//! file's last block) or journaling; an inode's group is chosen by the caller.
//! Indirect blocks are placed where the file system puts them and read by the
//! scans and streams ([`indirect`]); programs neither read nor write them.
//! FFS's search for a cluster of N free blocks is approximated by next-free
//! placement (the same on an unfragmented volume).
//! Linux 2.6.16's active/inactive balance is approximated (see [`cache`]).
//! Only the allocator, cache, write-back and read-ahead decide anything; the
//! applications are the scans, `head`, the streams and the programs.

pub mod allocator;
pub mod block;
pub mod bonnie;
pub mod cache;
pub mod config;
pub mod elevator;
pub mod flush;
pub mod indirect;
mod pages;
pub mod postmark;
pub mod program;
pub mod readahead;
mod readahead_state;
pub mod scan;
pub mod space;
pub mod streams;
pub mod traxtent;
pub mod view;
pub mod writeback;

pub use allocator::{AllocError, Allocator, FileId};
pub use block::{BlockNumber, BlockRun, BlockSize};
pub use config::{AllocatorConfig, IndirectBlocks, Placement, Preallocation};
pub use space::BlockState;
pub use traxtent::Traxtents;
