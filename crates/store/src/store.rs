//! The contract every store and every layer over stores implements: [`BlockStore`],
//! its error type [`StoreError`], and the argument checks all implementations share
//! so that every layer refuses bad input with the same words.

use spinstack_sim::units::{Lbn, Sectors, SECTOR_BYTES};
use std::path::PathBuf;

/// A fixed-size array of 512-byte sectors holding real bytes.
///
/// Every method is required: there are no default methods, so a layer (RAID, cache,
/// fault injector) must say what each operation means for it, or refuse it with
/// [`StoreError::Unsupported`], instead of silently passing it through.
///
/// Contract, for every implementation:
/// - Buffers are whole sectors: `buf.len()` is a multiple of [`SECTOR_BYTES`]
///   (otherwise [`StoreError::BufferNotWholeSectors`]); an empty buffer is a no-op
///   that still checks `lbn`.
/// - `lbn + sectors <= capacity()` (otherwise [`StoreError::OutOfRange`]); nothing is
///   read or written when a request is refused.
/// - Bad arguments are errors, never panics.
/// - After `flush` returns `Ok`, everything written or trimmed before the call is
///   durable: it survives a crash of the process and of the machine.
/// - Trimmed sectors read back as zeros until written again (whether the store frees
///   the space is its own business).
pub trait BlockStore {
    /// Sectors the store holds; never zero and constant for the store's lifetime.
    fn capacity(&self) -> Sectors;

    /// Reads `buf.len() / 512` sectors starting at `lbn` into `buf`.
    fn read(&mut self, lbn: Lbn, buf: &mut [u8]) -> Result<(), StoreError>;

    /// Writes `buf.len() / 512` sectors starting at `lbn` from `buf`.
    fn write(&mut self, lbn: Lbn, buf: &[u8]) -> Result<(), StoreError>;

    /// Makes everything written or trimmed before this call durable.
    fn flush(&mut self) -> Result<(), StoreError>;

    /// Discards `sectors` sectors from `lbn`: they read back as zeros afterwards.
    fn trim(&mut self, lbn: Lbn, sectors: Sectors) -> Result<(), StoreError>;
}

/// Why a store refused or failed an operation. Every message names what and where.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{lbn} + {sectors} reaches past the end of the store (capacity {capacity})")]
    OutOfRange {
        lbn: Lbn,
        sectors: Sectors,
        capacity: Sectors,
    },
    #[error(
        "byte range {offset_bytes} + {len_bytes} reaches past the end of the store \
         ({capacity_bytes} bytes)"
    )]
    ByteRangeOutOfRange {
        offset_bytes: u64,
        len_bytes: u64,
        capacity_bytes: u64,
    },
    #[error("buffer of {len_bytes} bytes is not a whole number of {SECTOR_BYTES}-byte sectors")]
    BufferNotWholeSectors { len_bytes: usize },
    #[error("capacity {capacity} is not usable: {why}")]
    InvalidCapacity {
        capacity: Sectors,
        why: &'static str,
    },
    #[error("file {} is {len_bytes} bytes: {why}", path.display())]
    BadFileLength {
        path: PathBuf,
        len_bytes: u64,
        why: &'static str,
    },
    #[error("could not {operation} {}: {source}", path.display())]
    Io {
        operation: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("could not {operation} {lbn} + {sectors} of {}: {source}", path.display())]
    IoAt {
        operation: &'static str,
        path: PathBuf,
        lbn: Lbn,
        sectors: Sectors,
        source: std::io::Error,
    },
    #[error("{store} does not support {operation}")]
    Unsupported {
        operation: &'static str,
        store: &'static str,
    },
    /// The store is gone (a failed device, an injected fault, a member file cut
    /// short): nothing was done, and a RAID above fails the member.
    #[error("store failed: {operation} refused")]
    Failed { operation: &'static str },
    #[error("power cut: {operation} not applied")]
    PowerCut { operation: &'static str },
}

/// The sectors in a buffer of `len_bytes`, or [`StoreError::BufferNotWholeSectors`].
pub fn buffer_sectors(len_bytes: usize) -> Result<Sectors, StoreError> {
    Sectors::from_bytes(len_bytes as u64).ok_or(StoreError::BufferNotWholeSectors { len_bytes })
}

/// Checks that `sectors` sectors from `lbn` lie inside `capacity`, without overflow.
pub fn check_range(capacity: Sectors, lbn: Lbn, sectors: Sectors) -> Result<(), StoreError> {
    match lbn.0.checked_add(sectors.0) {
        Some(end) if end <= capacity.0 => Ok(()),
        _ => Err(StoreError::OutOfRange {
            lbn,
            sectors,
            capacity,
        }),
    }
}

/// Both checks for a read or write buffer; returns the sectors it covers.
pub fn check_buffer(capacity: Sectors, lbn: Lbn, len_bytes: usize) -> Result<Sectors, StoreError> {
    let sectors = buffer_sectors(len_bytes)?;
    check_range(capacity, lbn, sectors)?;
    Ok(sectors)
}

/// Checks a capacity for a new store: at least one sector, and small enough that its
/// byte size fits an `i64` (file offsets are signed) and a `usize`.
pub fn check_capacity(capacity: Sectors) -> Result<(), StoreError> {
    let why = if capacity.0 == 0 {
        "a store needs at least one sector"
    } else if capacity.0 > i64::MAX as u64 / SECTOR_BYTES
        || capacity.0 > usize::MAX as u64 / SECTOR_BYTES
    {
        "its size in bytes does not fit a signed 64-bit file offset"
    } else {
        return Ok(());
    };
    Err(StoreError::InvalidCapacity { capacity, why })
}

/// A mutable borrow of a store is a store: a layer can run over a store its caller
/// keeps. Every operation goes to the borrowed store, unchanged.
impl<S: BlockStore + ?Sized> BlockStore for &mut S {
    fn capacity(&self) -> Sectors {
        (**self).capacity()
    }
    fn read(&mut self, lbn: Lbn, buf: &mut [u8]) -> Result<(), StoreError> {
        (**self).read(lbn, buf)
    }
    fn write(&mut self, lbn: Lbn, buf: &[u8]) -> Result<(), StoreError> {
        (**self).write(lbn, buf)
    }
    fn flush(&mut self) -> Result<(), StoreError> {
        (**self).flush()
    }
    fn trim(&mut self, lbn: Lbn, sectors: Sectors) -> Result<(), StoreError> {
        (**self).trim(lbn, sectors)
    }
}

/// A boxed store is a store, so arrays can mix kinds (`Vec<Box<dyn BlockStore>>`).
impl<S: BlockStore + ?Sized> BlockStore for Box<S> {
    fn capacity(&self) -> Sectors {
        (**self).capacity()
    }
    fn read(&mut self, lbn: Lbn, buf: &mut [u8]) -> Result<(), StoreError> {
        (**self).read(lbn, buf)
    }
    fn write(&mut self, lbn: Lbn, buf: &[u8]) -> Result<(), StoreError> {
        (**self).write(lbn, buf)
    }
    fn flush(&mut self) -> Result<(), StoreError> {
        (**self).flush()
    }
    fn trim(&mut self, lbn: Lbn, sectors: Sectors) -> Result<(), StoreError> {
        (**self).trim(lbn, sectors)
    }
}

/// 64 KiB of zeros, for writing zeros without allocating.
pub(crate) static ZEROS: [u8; 64 * 1024] = [0; 64 * 1024];
