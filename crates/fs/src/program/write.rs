//! The write side of a program: write calls, the write-back policy's passes,
//! the writer throttle, and the requests write-back sends.

use super::{FileHandle, Process, Program, ProgramError, WAKE_PERIODIC};
use crate::block::BlockNumber;
use crate::cache::{CacheError, PageKey};
use crate::view::LaidOutFile;
use crate::FileId;
use spinstack_sim::device::BlockDevice;
use spinstack_sim::driver::Io;
use spinstack_sim::request::Operation;
use spinstack_sim::units::Nanoseconds;
use std::collections::BTreeMap;

/// Writes, write-back and the host callbacks.
impl Program<'_> {
    /// A write call: allocates what the file lacks, dirties pages (waiting when
    /// throttled or when the cache has no clean page to give), applies the
    /// write-back policy; `Some(cpu)` once every page is dirtied.
    pub(super) fn write<D: BlockDevice>(
        &mut self,
        handle: FileHandle,
        first: u64,
        pages: u64,
        io: &mut Io<'_, D>,
    ) -> Result<Option<Nanoseconds>, ProgramError> {
        let at = self.next;
        let file = self.open(at, handle)?;
        let (id, length) = (file.id, file.pages());
        let end = first + pages;
        if first > length {
            return Err(ProgramError::OutsideFile {
                step: at,
                file: handle,
                first,
                end,
                length,
            });
        }
        if self.written == 0 && self.throttled() {
            self.relieve(io)?;
            return Ok(None);
        }
        if end > length {
            self.setup
                .allocator
                .allocate(id, end - length)
                .map_err(|source| ProgramError::Allocation { step: at, source })?;
            let runs = self.setup.allocator.runs(id).unwrap_or_default().to_vec();
            self.files[handle.0].as_mut().expect("checked open").runs = runs;
        }
        while first + self.written < end {
            let key = Program::key(id, first + self.written);
            match self.setup.cache.write(key, io.now()) {
                Ok(_) => {}
                Err(CacheError::Full { .. }) => {
                    self.relieve(io)?;
                    return Ok(None);
                }
                Err(source) => return Err(ProgramError::Cache { step: at, source }),
            }
            self.written += 1;
            self.report.most_cached_pages =
                self.report.most_cached_pages.max(self.setup.cache.len());
            if let Some(cluster) = self.setup.writeback.cluster {
                let file = self.files[handle.0].as_ref().expect("checked open");
                let view = LaidOutFile::new(
                    &file.runs,
                    self.setup.map,
                    self.setup.allocator.config().block_size,
                    |_| false,
                );
                let commit = cluster.on_write(&self.setup.cache, key, |i| view.block_of(i));
                self.write_back(commit, io)?;
            }
        }
        self.background(io)?;
        Ok(Some(self.call_cost(pages)))
    }

    /// A background pass when dirty pages exceed the background ratio: the
    /// pages [`LinuxWriteback::pages_to_write`] names, at least a chunk.
    ///
    /// [`LinuxWriteback::pages_to_write`]: crate::writeback::LinuxWriteback::pages_to_write
    pub(super) fn background<D: BlockDevice>(
        &mut self,
        io: &mut Io<'_, D>,
    ) -> Result<(), ProgramError> {
        let aging = self.setup.writeback.aging;
        let limit = self.setup.cache.capacity_pages() as u64 * aging.background_percent / 100;
        if self.setup.cache.dirty_pages() as u64 <= limit {
            return Ok(());
        }
        self.write_oldest(self.setup.writeback.background_chunk_pages, io)
    }

    /// Writes what the aging rules name, and at least the `least` oldest
    /// dirty pages.
    pub(super) fn write_oldest<D: BlockDevice>(
        &mut self,
        least: usize,
        io: &mut Io<'_, D>,
    ) -> Result<(), ProgramError> {
        let mut pages = self
            .setup
            .writeback
            .aging
            .pages_to_write(&self.setup.cache, io.now());
        if pages.len() < least {
            let dirty = self.setup.cache.dirty_oldest_first();
            pages = dirty.into_iter().take(least).map(|(k, _)| k).collect();
        }
        self.write_back(pages, io)
    }

    /// A writer that must wait: when nothing is in flight to wait for, it
    /// starts write-back itself (a chunk, at least one page).
    pub(super) fn relieve<D: BlockDevice>(
        &mut self,
        io: &mut Io<'_, D>,
    ) -> Result<(), ProgramError> {
        if self.setup.cache.writing_back_pages() == 0 {
            self.write_oldest(self.setup.writeback.background_chunk_pages.max(1), io)?;
        }
        Ok(())
    }

    /// Starts the write-back of `keys` as disk-contiguous runs per file.
    pub(super) fn write_back<D: BlockDevice>(
        &mut self,
        keys: Vec<PageKey>,
        io: &mut Io<'_, D>,
    ) -> Result<(), ProgramError> {
        let started = self.setup.cache.start_writeback(&keys);
        if started.is_empty() {
            return Ok(());
        }
        let mut by_file: BTreeMap<FileId, Vec<u64>> = BTreeMap::new();
        for key in started {
            by_file.entry(key.file).or_default().push(key.index);
        }
        let block_size = self.setup.allocator.config().block_size;
        let max = self.setup.writeback.max_request_pages.max(1);
        let mut requests = Vec::new();
        for (id, mut indices) in by_file {
            indices.sort_unstable();
            let runs = self.setup.allocator.runs(id).unwrap_or_default();
            let view = LaidOutFile::new(runs, self.setup.map, block_size, |_| false);
            let mut piece: Vec<(u64, BlockNumber)> = Vec::new();
            for index in indices {
                let block = view.block_of(index).expect("dirty pages are allocated");
                let follows = piece.last().is_some_and(|&(i, b)| {
                    i + 1 == index && b.plus(1) == block && (piece.len() as u64) < max
                });
                if !follows && !piece.is_empty() {
                    requests.push((id, std::mem::take(&mut piece)));
                }
                piece.push((index, block));
            }
            if !piece.is_empty() {
                requests.push((id, piece));
            }
        }
        for (id, piece) in requests {
            let keys = piece.iter().map(|&(i, _)| Program::key(id, i)).collect();
            let blocks: Vec<BlockNumber> = piece.iter().map(|&(_, b)| b).collect();
            self.report.pages_written += piece.len() as u64;
            self.submit(
                Operation::Write,
                blocks[0],
                piece.len() as u64,
                keys,
                blocks,
                false,
                io,
            )?;
        }
        Ok(())
    }

    /// Keeps the periodic pass scheduled while the program runs or pages are
    /// unclean.
    pub(super) fn arm_periodic<D: BlockDevice>(
        &mut self,
        io: &mut Io<'_, D>,
    ) -> Result<(), ProgramError> {
        let unclean = self.setup.cache.dirty_pages() > 0;
        if !self.periodic_armed && (self.state != Process::Done || unclean) {
            let at = self.setup.writeback.aging.next_periodic_pass(io.now());
            io.wake_at(at, WAKE_PERIODIC)?;
            self.periodic_armed = true;
        }
        Ok(())
    }
}
