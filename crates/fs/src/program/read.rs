//! The read side of a program: read calls, their fetches, synchronous
//! metadata writes, sync, and what a completion does.

use super::{FileHandle, InFlight, Process, Program, ProgramError, ProgramRequest, Step};
use crate::block::BlockNumber;
use crate::cache::PageKey;
use crate::readahead::{FileView, PageRange};
use crate::view::LaidOutFile;
use spinstack_sim::device::BlockDevice;
use spinstack_sim::driver::{Io, Issue};
use spinstack_sim::engine::DeviceCompletion;
use spinstack_sim::request::{Operation, RequestId, Status};
use spinstack_sim::units::{Nanoseconds, Sectors};

impl Program<'_> {
    /// A read call: `Some(cpu)` once every page has been copied, else `None`
    /// (fetches issued, the process waits).
    pub(super) fn read<D: BlockDevice>(
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
        if end > length {
            return Err(ProgramError::OutsideFile {
                step: at,
                file: handle,
                first,
                end,
                length,
            });
        }
        if !self.call_planned {
            self.call_planned = true;
            let plan = {
                let (cache, pending) = (&self.setup.cache, &self.pending_reads);
                let resident = |index: u64| {
                    let key = Program::key(id, index);
                    pending.contains(&key) || cache.contains(key)
                };
                let file = self.files[handle.0].as_mut().expect("checked open");
                let view = LaidOutFile::new(
                    &file.runs,
                    self.setup.map,
                    self.setup.allocator.config().block_size,
                    resident,
                );
                file.read_ahead.on_read(&view, first, pages)
            };
            for range in crate::scan::joined(plan.demand.iter().chain(&plan.read_ahead).copied()) {
                self.issue_read(handle, range, io)?;
            }
        }
        for index in first..end {
            if !self.copied.contains(&index) && self.setup.cache.access(Program::key(id, index)) {
                self.copied.insert(index);
            }
        }
        let lost: Vec<u64> = (first..end)
            .filter(|i| !self.copied.contains(i))
            .filter(|&i| !self.pending_reads.contains(&Program::key(id, i)))
            .collect();
        for index in &lost {
            self.issue_read(
                handle,
                PageRange {
                    first: *index,
                    pages: 1,
                },
                io,
            )?;
        }
        if self.copied.len() as u64 == pages {
            Ok(Some(self.call_cost(pages)))
        } else {
            Ok(None)
        }
    }

    /// Issues the pages of `range`, one request per disk-contiguous piece.
    pub(super) fn issue_read<D: BlockDevice>(
        &mut self,
        handle: FileHandle,
        range: PageRange,
        io: &mut Io<'_, D>,
    ) -> Result<(), ProgramError> {
        let block_size = self.setup.allocator.config().block_size;
        let file = self.files[handle.0].as_ref().expect("checked open");
        let id = file.id;
        let view = LaidOutFile::new(&file.runs, self.setup.map, block_size, |_| false);
        let mut pieces = Vec::new();
        let mut index = range.first;
        while index < range.end() {
            let block = view.block_of(index).expect("plans stay inside the file");
            let pages = view.contiguous_from(index).min(range.end() - index);
            pieces.push((index, block, pages));
            index += pages;
        }
        for (index, block, pages) in pieces {
            let keys: Vec<PageKey> = (index..index + pages)
                .map(|i| Program::key(id, i))
                .collect();
            let blocks = (0..pages).map(|k| block.plus(k)).collect();
            self.pending_reads.extend(keys.iter().copied());
            self.report.pages_read += pages;
            self.submit(Operation::Read, block, pages, keys, blocks, false, io)?;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn submit<D: BlockDevice>(
        &mut self,
        operation: Operation,
        block: BlockNumber,
        pages: u64,
        keys: Vec<PageKey>,
        blocks: Vec<BlockNumber>,
        metadata: bool,
        io: &mut Io<'_, D>,
    ) -> Result<RequestId, ProgramError> {
        let block_size = self.setup.allocator.config().block_size;
        let lbn = block_size.first_lbn(block);
        let sectors = Sectors(pages * block_size.sectors().0);
        let id = io.submit(self.setup.device, Issue::new(operation, lbn, sectors))?;
        self.in_flight.insert(
            id,
            InFlight {
                operation,
                keys,
                blocks,
                number: self.report.requests.len(),
            },
        );
        self.report.requests.push(ProgramRequest {
            operation,
            lbn,
            sectors,
            issued: io.now(),
            done: None,
            drive: None,
            metadata,
        });
        Ok(id)
    }

    pub(super) fn metadata_write<D: BlockDevice>(
        &mut self,
        block: BlockNumber,
        io: &mut Io<'_, D>,
    ) -> Result<Option<Nanoseconds>, ProgramError> {
        if !self.metadata_issued {
            let id = self.submit(Operation::Write, block, 1, vec![], vec![], true, io)?;
            self.metadata_issued = true;
            self.waiting_for = Some(id);
            return Ok(None);
        }
        // Done once the completion has cleared `waiting_for`.
        Ok(self
            .waiting_for
            .is_none()
            .then_some(self.setup.cost.per_call))
    }

    pub(super) fn sync<D: BlockDevice>(
        &mut self,
        io: &mut Io<'_, D>,
    ) -> Result<Option<Nanoseconds>, ProgramError> {
        if self.setup.cache.dirty_pages() + self.setup.cache.writing_back_pages() == 0 {
            return Ok(Some(self.setup.cost.per_call));
        }
        let dirty: Vec<PageKey> = self
            .setup
            .cache
            .dirty_oldest_first()
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        self.write_back(dirty, io)?;
        Ok(None)
    }

    pub(super) fn throttled(&self) -> bool {
        self.setup
            .writeback
            .aging
            .writer_must_wait(&self.setup.cache)
    }

    pub(super) fn finish_request(
        &mut self,
        done: &DeviceCompletion,
        now: Nanoseconds,
    ) -> Result<(), ProgramError> {
        let Some(flight) = self.in_flight.remove(&done.completion.request.id) else {
            return Ok(());
        };
        let request = &mut self.report.requests[flight.number];
        request.done = Some(now);
        request.drive = done.completion.drive;
        if done.completion.status != Status::Ok {
            return Err(ProgramError::Device {
                operation: request.operation,
                lbn: request.lbn,
                sectors: request.sectors,
                status: done.completion.status,
            });
        }
        match flight.operation {
            Operation::Write => {
                for (&key, &block) in flight.keys.iter().zip(&flight.blocks) {
                    if self.setup.cache.state(key).is_some() {
                        self.disk.insert(block, key);
                    }
                }
                self.setup.cache.finish_writeback(&flight.keys);
            }
            _ => {
                for (&key, &block) in flight.keys.iter().zip(&flight.blocks) {
                    if !self.pending_reads.remove(&key) {
                        continue; // the file was deleted meanwhile
                    }
                    if self.disk.get(&block).is_some_and(|&on_disk| on_disk != key) {
                        self.report.misread_pages += 1;
                    }
                    // Read pages are clean; the throttle keeps clean room.
                    let _ = self.setup.cache.insert(key);
                    if self.state == Process::Waiting {
                        if let Some(Step::Read { file, first, pages }) = self.steps.get(self.next) {
                            let ours = self.file_id(*file) == Some(key.file);
                            if ours
                                && (*first..first + pages).contains(&key.index)
                                && self.setup.cache.access(key)
                            {
                                self.copied.insert(key.index);
                            }
                        }
                    }
                }
            }
        }
        if self.waiting_for == Some(done.completion.request.id) {
            self.waiting_for = None;
        }
        self.report.most_cached_pages = self.report.most_cached_pages.max(self.setup.cache.len());
        Ok(())
    }
}
