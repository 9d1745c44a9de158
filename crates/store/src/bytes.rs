//! [`ByteStore`]: byte offsets and lengths of any alignment over a [`BlockStore`], as
//! an NBD server receives them.

use crate::store::{BlockStore, StoreError, ZEROS};
use spinstack_sim::units::{Lbn, Sectors, SECTOR_BYTES};

const SECTOR: usize = SECTOR_BYTES as usize;

/// How [`ByteStore::write_zeroes`] may make a range read as zeros.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZeroMode {
    /// Whole sectors may be trimmed (they read back as zeros by the store contract);
    /// where the store refuses trim, zeros are written. NBD's default.
    MayTrim,
    /// Zeros are written, so the range stays allocated (NBD's `NO_HOLE` flag).
    Allocate,
}

/// Byte-addressed access to a sector store. Requests are split into a partial first
/// sector, whole sectors in the middle (passed to the store in one call, straight
/// from or into the caller's buffer), and a partial last sector. Partial sectors are
/// read, patched and written back (read-modify-write).
///
/// Not atomic: a crash during a write may leave some sectors of the request written
/// and others not, exactly as with the store below; a partial sector's write is as
/// atomic as the store's sector writes.
#[derive(Debug)]
pub struct ByteStore<S: BlockStore> {
    inner: S,
}

/// A byte range cut at sector boundaries: `head` and `tail` are partial sectors (each
/// may be empty), `middle` the whole sectors between them.
struct Split {
    head_lbn: Lbn,
    /// Where the request starts inside the head sector.
    head_offset: usize,
    /// Bytes of the request inside the head sector (0 when it starts on a boundary).
    head_len: usize,
    middle_lbn: Lbn,
    middle_sectors: Sectors,
    tail_lbn: Lbn,
    /// Bytes of the request at the start of the tail sector.
    tail_len: usize,
}

impl Split {
    fn new(offset_bytes: u64, len_bytes: u64) -> Split {
        let head_offset = (offset_bytes % SECTOR_BYTES) as usize;
        let head_len = if head_offset == 0 {
            0
        } else {
            len_bytes.min((SECTOR - head_offset) as u64) as usize
        };
        let middle_start = offset_bytes + head_len as u64;
        let rest = len_bytes - head_len as u64;
        let middle_sectors = Sectors(rest / SECTOR_BYTES);
        let tail_len = (rest % SECTOR_BYTES) as usize;
        Split {
            head_lbn: Lbn(offset_bytes / SECTOR_BYTES),
            head_offset,
            head_len,
            middle_lbn: Lbn(middle_start / SECTOR_BYTES),
            middle_sectors,
            tail_lbn: Lbn(middle_start / SECTOR_BYTES + middle_sectors.0),
            tail_len,
        }
    }
    fn middle_bytes(&self) -> usize {
        self.middle_sectors.bytes() as usize
    }
}

impl<S: BlockStore> ByteStore<S> {
    pub fn new(inner: S) -> ByteStore<S> {
        ByteStore { inner }
    }

    pub fn capacity_bytes(&self) -> u64 {
        self.inner.capacity().bytes()
    }

    pub fn inner(&self) -> &S {
        &self.inner
    }

    pub fn inner_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    pub fn into_inner(self) -> S {
        self.inner
    }

    /// Reads `buf.len()` bytes from `offset_bytes`.
    pub fn read(&mut self, offset_bytes: u64, buf: &mut [u8]) -> Result<(), StoreError> {
        let split = self.split(offset_bytes, buf.len() as u64)?;
        let (head, rest) = buf.split_at_mut(split.head_len);
        let (middle, tail) = rest.split_at_mut(split.middle_bytes());
        let mut sector = [0u8; SECTOR];
        if !head.is_empty() {
            self.inner.read(split.head_lbn, &mut sector)?;
            head.copy_from_slice(&sector[split.head_offset..split.head_offset + head.len()]);
        }
        if !middle.is_empty() {
            self.inner.read(split.middle_lbn, middle)?;
        }
        if !tail.is_empty() {
            self.inner.read(split.tail_lbn, &mut sector)?;
            tail.copy_from_slice(&sector[..tail.len()]);
        }
        Ok(())
    }

    /// Writes `buf` at `offset_bytes`.
    pub fn write(&mut self, offset_bytes: u64, buf: &[u8]) -> Result<(), StoreError> {
        let split = self.split(offset_bytes, buf.len() as u64)?;
        let (head, rest) = buf.split_at(split.head_len);
        let (middle, tail) = rest.split_at(split.middle_bytes());
        self.patch_sector(split.head_lbn, split.head_offset, head)?;
        if !middle.is_empty() {
            self.inner.write(split.middle_lbn, middle)?;
        }
        self.patch_sector(split.tail_lbn, 0, tail)
    }

    /// Makes every earlier write durable (the store's `flush`).
    pub fn flush(&mut self) -> Result<(), StoreError> {
        self.inner.flush()
    }

    /// Discards `len_bytes` from `offset_bytes`: whole sectors are trimmed, the bytes
    /// of partial sectors zeroed; all of it reads back as zeros. If the store refuses
    /// trim, nothing is changed and its refusal returned.
    pub fn trim(&mut self, offset_bytes: u64, len_bytes: u64) -> Result<(), StoreError> {
        let split = self.split(offset_bytes, len_bytes)?;
        // Whole sectors first: a store that refuses trim then refuses it unchanged.
        if split.middle_sectors.0 > 0 {
            self.inner.trim(split.middle_lbn, split.middle_sectors)?;
        }
        self.zero_partial(&split)
    }

    /// Makes `len_bytes` from `offset_bytes` read as zeros, trimming whole sectors
    /// when `mode` allows it.
    pub fn write_zeroes(
        &mut self,
        offset_bytes: u64,
        len_bytes: u64,
        mode: ZeroMode,
    ) -> Result<(), StoreError> {
        let split = self.split(offset_bytes, len_bytes)?;
        self.zero_partial(&split)?;
        if split.middle_sectors.0 == 0 {
            return Ok(());
        }
        if mode == ZeroMode::MayTrim {
            match self.inner.trim(split.middle_lbn, split.middle_sectors) {
                Err(StoreError::Unsupported { .. }) => {}
                other => return other,
            }
        }
        self.write_zero_sectors(split.middle_lbn, split.middle_sectors)
    }

    /// Checks the byte range against the capacity and cuts it at sector boundaries.
    fn split(&self, offset_bytes: u64, len_bytes: u64) -> Result<Split, StoreError> {
        let capacity_bytes = self.capacity_bytes();
        match offset_bytes.checked_add(len_bytes) {
            Some(end) if end <= capacity_bytes => Ok(Split::new(offset_bytes, len_bytes)),
            _ => Err(StoreError::ByteRangeOutOfRange {
                offset_bytes,
                len_bytes,
                capacity_bytes,
            }),
        }
    }

    /// Read-modify-write of `bytes` at `offset` inside sector `lbn`; no-op when empty.
    fn patch_sector(&mut self, lbn: Lbn, offset: usize, bytes: &[u8]) -> Result<(), StoreError> {
        if bytes.is_empty() {
            return Ok(());
        }
        debug_assert!(offset + bytes.len() <= SECTOR);
        let mut sector = [0u8; SECTOR];
        self.inner.read(lbn, &mut sector)?;
        sector[offset..offset + bytes.len()].copy_from_slice(bytes);
        self.inner.write(lbn, &sector)
    }

    fn zero_partial(&mut self, split: &Split) -> Result<(), StoreError> {
        self.patch_sector(split.head_lbn, split.head_offset, &ZEROS[..split.head_len])?;
        self.patch_sector(split.tail_lbn, 0, &ZEROS[..split.tail_len])
    }

    fn write_zero_sectors(&mut self, lbn: Lbn, sectors: Sectors) -> Result<(), StoreError> {
        let chunk_sectors = ZEROS.len() as u64 / SECTOR_BYTES;
        let mut done = 0u64;
        while done < sectors.0 {
            let take = (sectors.0 - done).min(chunk_sectors);
            let bytes = (take * SECTOR_BYTES) as usize;
            self.inner
                .write(lbn.offset(Sectors(done)), &ZEROS[..bytes])?;
            done += take;
        }
        Ok(())
    }
}
