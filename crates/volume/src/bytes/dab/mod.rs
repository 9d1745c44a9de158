//! [`DmaAlignedBuffer`]: the DMA-aligned buffer (DAB) of Shi et al. (§3–4.2) over any
//! [`BlockStore`], on the byte path.
//!
//! The buffer is an LRU of `blocks` buffer blocks of `block_sectors` sectors (default
//! 256 = 128 KiB, the ATA DMA limit). Block `b` holds the store's sectors
//! `b * block_sectors..` (the last block may be shorter), so blocks never overlap and
//! each is fetched with one aligned read. A request is served block by block:
//! buffered blocks from memory, missing ones fetched whole first (one read each).
//! Requests are counted by the paper's four cases, decided on the blocks holding the
//! request's first and last sectors (`DabCase`):
//!
//! 1. both buffered (and every block between them): a *hit*, no device I/O;
//! 2. first buffered, last not: a *partial hit*; the block holding the latter part is
//!    fetched;
//! 3. first not buffered, last buffered: a *partial hit*; the block holding the former
//!    part is fetched;
//! 4. neither: a *miss*; the aligned block(s) are fetched.
//!
//! The paper's requests span at most two blocks; a longer one whose first and last
//! blocks are buffered but a middle one is not is counted as `MiddleMissing`.
//!
//! **Writes.** Write-through: the write goes below in one call, then buffered copies
//! of the touched blocks are updated (missed blocks are not fetched). Write-back: each
//! touched block is fetched if missing (unless the write covers it whole, when no
//! fetch is needed), updated in place and marked dirty; an evicted dirty block is
//! written back whole before its slot is reused, and `flush` writes back every dirty
//! block (ascending) and then flushes below. **Trim** goes below, then zeroes the
//! buffered copies of the range. A failed write-through or trim drops the touched
//! clean copies (the store below may be partly changed); a failed write-back leaves
//! the block buffered and dirty, so nothing written is ever lost.
//!
//! Memory is bounded by `blocks * block_sectors * 512` bytes, allocated at
//! construction. Not modelled: the paper's prefetch beyond one block and its DMA
//! descriptor tables; the bytes are copied with `copy_from_slice`.

mod lru;

use super::common::{bytes, check_request};
use super::error::VolumeError;
pub use crate::dab::{DabCase, DabCounters, WritePolicy};
use lru::Blocks;
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_store::store::check_range;
use spinstack_store::{BlockStore, StoreError};

/// The paper's buffer block: 256 sectors (128 KiB), the ATA maximum DMA transfer.
pub const DEFAULT_BLOCK_SECTORS: Sectors = Sectors(256);
/// The most buffer memory a buffer may ask for (bytes), so a bad configuration is an
/// error rather than an allocation failure.
pub const MAX_BUFFER_BYTES: u64 = 16 << 30;

/// The geometry and policy of a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DabConfig {
    /// Buffer blocks (at least 1).
    pub blocks: usize,
    /// Sectors per block (at least 1).
    pub block_sectors: Sectors,
    pub policy: WritePolicy,
}

impl DabConfig {
    /// `blocks` blocks of the paper's 128 KiB.
    pub fn new(blocks: usize, policy: WritePolicy) -> DabConfig {
        DabConfig {
            blocks,
            block_sectors: DEFAULT_BLOCK_SECTORS,
            policy,
        }
    }
}

/// A DMA-aligned buffer over `S` (see the module docs).
pub struct DmaAlignedBuffer<S: BlockStore> {
    inner: S,
    config: DabConfig,
    blocks: Blocks,
    /// `config.blocks` blocks of bytes; slot `s` is at `s * block bytes`.
    arena: Vec<u8>,
    counters: DabCounters,
    dirty: Vec<usize>,
}

impl DabConfig {
    /// What is wrong with the geometry, if anything: no blocks, an empty block, or
    /// more than [`MAX_BUFFER_BYTES`] in all (the buffer is allocated whole).
    pub fn problem(&self) -> Option<&'static str> {
        if self.blocks == 0 {
            Some("a buffer needs at least one block")
        } else if self.block_sectors.0 == 0 {
            Some("a buffer block needs at least one sector")
        } else if (self.blocks as u64)
            .checked_mul(self.block_sectors.bytes())
            .is_none_or(|total| total > MAX_BUFFER_BYTES)
        {
            Some("the buffer (blocks × block size) exceeds 16 GiB, the most it may hold")
        } else {
            None
        }
    }
}

impl<S: BlockStore> DmaAlignedBuffer<S> {
    pub fn new(inner: S, config: DabConfig) -> Result<Self, VolumeError> {
        if let Some(why) = config.problem() {
            return Err(VolumeError::BufferGeometry { why });
        }
        Ok(DmaAlignedBuffer {
            arena: vec![0; config.blocks * bytes(config.block_sectors.0)],
            blocks: Blocks::new(config.blocks),
            inner,
            config,
            counters: DabCounters::default(),
            dirty: Vec::with_capacity(config.blocks),
        })
    }

    pub fn counters(&self) -> DabCounters {
        self.counters
    }

    pub fn config(&self) -> DabConfig {
        self.config
    }

    /// The store below, for inspection.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// The store below, for maintenance that does not change its contents (failing or
    /// replacing a RAID member, rebuild, scrub). Writing through it would make buffered
    /// copies stale.
    pub fn inner_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// Writes back every dirty block and returns the store below; on error the buffer
    /// is handed back (boxed) with the error, its dirty blocks intact.
    pub fn into_inner(mut self) -> Result<S, Box<(Self, StoreError)>> {
        match self.write_back_all() {
            Ok(()) => Ok(self.inner),
            Err(error) => Err(Box::new((self, error))),
        }
    }

    fn block_sectors(&self) -> u64 {
        self.config.block_sectors.0
    }

    /// Sectors of block `block` (the last block of the store may be short).
    fn block_len(&self, block: u64) -> u64 {
        let start = block * self.block_sectors();
        self.block_sectors().min(self.inner.capacity().0 - start)
    }

    fn slot_bytes(&mut self, slot: usize, sectors: u64) -> &mut [u8] {
        let block_bytes = bytes(self.block_sectors());
        &mut self.arena[slot * block_bytes..][..bytes(sectors)]
    }

    /// Classifies and counts a request of `sectors` from `lbn` (non-empty).
    fn classify(&mut self, lbn: Lbn, sectors: Sectors) -> DabCase {
        let first = lbn.0 / self.block_sectors();
        let last = (lbn.0 + sectors.0 - 1) / self.block_sectors();
        let case = DabCase::of(first, last, |b| self.blocks.find(b).is_some());
        self.counters.count(case);
        case
    }

    /// A slot for a new block: a free one, or the least recently used one after
    /// writing it back if dirty (on error the victim stays buffered and dirty).
    fn free_slot(&mut self) -> Result<usize, StoreError> {
        if let Some(slot) = self.blocks.take_free() {
            return Ok(slot);
        }
        let victim = self
            .blocks
            .oldest()
            .expect("no free slot means every slot is in use");
        if self.blocks.is_dirty(victim) {
            self.write_back(victim)?;
        }
        self.blocks.remove(victim);
        self.counters.evictions += 1;
        Ok(self.blocks.take_free().expect("just freed"))
    }

    /// The slot of `block`, fetched whole if missing (`fetch`), or taken empty when the
    /// caller overwrites it whole.
    fn slot_for(&mut self, block: u64, fetch: bool) -> Result<usize, StoreError> {
        if let Some(slot) = self.blocks.find(block) {
            self.blocks.touch(slot);
            return Ok(slot);
        }
        let slot = self.free_slot()?;
        if fetch {
            let len = self.block_len(block);
            let lbn = Lbn(block * self.block_sectors());
            let buf = &mut self.arena[slot * bytes(self.config.block_sectors.0)..][..bytes(len)];
            if let Err(error) = self.inner.read(lbn, buf) {
                self.blocks.give_back(slot);
                return Err(error);
            }
            self.counters.block_fetches += 1;
        } else {
            self.counters.fetches_avoided += 1;
        }
        self.blocks.insert(slot, block);
        Ok(slot)
    }

    fn write_back(&mut self, slot: usize) -> Result<(), StoreError> {
        let block = self.blocks.block_of(slot);
        let len = self.block_len(block);
        let lbn = Lbn(block * self.block_sectors());
        let block_bytes = bytes(self.block_sectors());
        self.inner
            .write(lbn, &self.arena[slot * block_bytes..][..bytes(len)])?;
        self.blocks.set_dirty(slot, false);
        self.counters.write_backs += 1;
        Ok(())
    }

    fn write_back_all(&mut self) -> Result<(), StoreError> {
        let mut dirty = std::mem::take(&mut self.dirty);
        self.blocks.dirty_slots(&mut dirty);
        let result = dirty.iter().try_for_each(|&slot| self.write_back(slot));
        self.dirty = dirty;
        result
    }

    /// Calls `visit(slot, sector range inside the block, byte range inside the request)`
    /// for each block the request touches, in order.
    fn for_blocks(
        &mut self,
        lbn: Lbn,
        sectors: Sectors,
        mut visit: impl FnMut(
            &mut Self,
            u64,
            u64,
            u64,
            std::ops::Range<usize>,
        ) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let block_sectors = self.block_sectors();
        let mut done = 0;
        while done < sectors.0 {
            let at = lbn.0 + done;
            let block = at / block_sectors;
            let in_block = at % block_sectors;
            let take = (block_sectors - in_block).min(sectors.0 - done);
            visit(self, block, in_block, take, bytes(done)..bytes(done + take))?;
            done += take;
        }
        Ok(())
    }

    /// Drops the clean buffered copies of blocks a failed change touched.
    fn drop_clean(&mut self, lbn: Lbn, sectors: Sectors) {
        let _ = self.for_blocks(lbn, sectors, |dab, block, _, _, _| {
            if let Some(slot) = dab.blocks.find(block) {
                if !dab.blocks.is_dirty(slot) {
                    dab.blocks.remove(slot);
                }
            }
            Ok(())
        });
    }
}

impl<S: BlockStore> BlockStore for DmaAlignedBuffer<S> {
    fn capacity(&self) -> Sectors {
        self.inner.capacity()
    }

    fn read(&mut self, lbn: Lbn, buf: &mut [u8]) -> Result<(), StoreError> {
        let sectors = check_request(self.capacity(), lbn, buf.len())?;
        if sectors.0 == 0 {
            return Ok(());
        }
        self.classify(lbn, sectors);
        self.for_blocks(lbn, sectors, |dab, block, in_block, take, range| {
            let slot = dab.slot_for(block, true)?;
            let block_bytes = bytes(dab.block_sectors());
            buf[range]
                .copy_from_slice(&dab.arena[slot * block_bytes + bytes(in_block)..][..bytes(take)]);
            Ok(())
        })
    }

    fn write(&mut self, lbn: Lbn, buf: &[u8]) -> Result<(), StoreError> {
        let sectors = check_request(self.capacity(), lbn, buf.len())?;
        if sectors.0 == 0 {
            return Ok(());
        }
        self.classify(lbn, sectors);
        match self.config.policy {
            WritePolicy::WriteThrough => {
                if let Err(error) = self.inner.write(lbn, buf) {
                    self.drop_clean(lbn, sectors);
                    return Err(error);
                }
                self.for_blocks(lbn, sectors, |dab, block, in_block, take, range| {
                    if let Some(slot) = dab.blocks.find(block) {
                        dab.blocks.touch(slot);
                        let bytes_in = &buf[range];
                        dab.slot_bytes(slot, in_block + take)[bytes(in_block)..]
                            .copy_from_slice(bytes_in);
                    }
                    Ok(())
                })
            }
            WritePolicy::WriteBack => {
                self.for_blocks(lbn, sectors, |dab, block, in_block, take, range| {
                    let whole = in_block == 0 && take == dab.block_len(block);
                    let slot = dab.slot_for(block, !whole)?;
                    dab.slot_bytes(slot, in_block + take)[bytes(in_block)..]
                        .copy_from_slice(&buf[range]);
                    dab.blocks.set_dirty(slot, true);
                    Ok(())
                })
            }
        }
    }

    fn flush(&mut self) -> Result<(), StoreError> {
        self.write_back_all()?;
        self.inner.flush()
    }

    fn trim(&mut self, lbn: Lbn, sectors: Sectors) -> Result<(), StoreError> {
        check_range(self.capacity(), lbn, sectors)?;
        if let Err(error) = self.inner.trim(lbn, sectors) {
            self.drop_clean(lbn, sectors);
            return Err(error);
        }
        self.for_blocks(lbn, sectors, |dab, block, in_block, take, _| {
            if let Some(slot) = dab.blocks.find(block) {
                dab.slot_bytes(slot, in_block + take)[bytes(in_block)..].fill(0);
            }
            Ok(())
        })
    }
}
