//! The streams' requests: pages and indirect blocks handed to the host's
//! elevator (or straight to the device), sent on in its order, and the
//! indirect blocks' arrival, which lets the streams waiting on them go on.

use super::{Fetched, StreamState, Streams};
use crate::elevator::Elevator;
use crate::indirect::cache_block;
use crate::pages::{FileView, PageRange};
use crate::view::LaidOutFile;
use crate::BlockNumber;
use spinstack_sim::device::{BlockDevice, Control};
use spinstack_sim::driver::{Io, Issue};
use spinstack_sim::engine::EngineError;
use spinstack_sim::request::Operation;
use spinstack_sim::units::{Nanoseconds, Sectors};
use std::rc::Rc;

impl Streams<'_> {
    /// Requests issued and not completed: at the device or in the elevator.
    pub(super) fn requests_out(&self) -> usize {
        self.in_flight.len() + self.elevator.as_ref().map_or(0, Elevator::waiting)
    }

    /// Sends what the elevator lets go now (the plug below is told to
    /// unplug: the elevator already chose the order).
    pub(super) fn dispatch<D: BlockDevice>(
        &mut self,
        io: &mut Io<'_, D>,
    ) -> Result<(), EngineError> {
        let mut sent = false;
        while let Some(queued) = self.elevator.as_mut().and_then(|e| e.next(io.now())) {
            let id = io.submit(self.setup.device, queued.issue)?;
            self.in_flight.insert(id, queued.tag);
            sent = true;
        }
        if sent {
            io.control(self.setup.device, &[], Control::Unplug)?;
        }
        Ok(())
    }

    /// Adds the in-flight count since its last change to its time integral.
    pub(super) fn count_in_flight(&mut self, now: Nanoseconds) {
        let elapsed = now.0.saturating_sub(self.in_flight_since.0);
        self.report.in_flight_integral += u128::from(elapsed) * self.requests_out() as u128;
        self.in_flight_since = now;
    }

    /// Issues `range`, one request per disk-contiguous piece.
    pub(super) fn issue<D: BlockDevice>(
        &mut self,
        range: PageRange,
        io: &mut Io<'_, D>,
    ) -> Result<(), EngineError> {
        let block_size = self.setup.block_size;
        let starts = Rc::clone(&self.run_starts);
        let view = LaidOutFile::with_run_starts(
            self.setup.runs,
            &starts,
            self.setup.map,
            block_size,
            |_| false,
        );
        let mut index = range.first;
        while index < range.end() {
            let Some(block) = view.block_of(index) else {
                break;
            };
            let pages = view.contiguous_from(index).min(range.end() - index);
            let lbn = block_size.first_lbn(block);
            let sectors = Sectors(pages * block_size.sectors().0);
            let issue = Issue::new(Operation::Read, lbn, sectors);
            self.pending.extend(index..index + pages);
            let indices = (index..index + pages).collect();
            self.send(issue, Fetched::Pages(indices), io)?;
            index += pages;
        }
        self.dispatch(io)
    }

    /// Reads one indirect block (through the elevator, as any read).
    pub(super) fn issue_indirect<D: BlockDevice>(
        &mut self,
        block: BlockNumber,
        io: &mut Io<'_, D>,
    ) -> Result<(), EngineError> {
        let block_size = self.setup.block_size;
        let issue = Issue::new(
            Operation::Read,
            block_size.first_lbn(block),
            block_size.sectors(),
        );
        self.report.metadata_requests += 1;
        self.send(issue, Fetched::Indirect(block), io)?;
        self.dispatch(io)
    }

    /// Hands a request to the elevator, or to the device when there is none
    /// (the requests out change: their time integral is brought up to now).
    pub(super) fn send<D: BlockDevice>(
        &mut self,
        issue: Issue,
        fetched: Fetched,
        io: &mut Io<'_, D>,
    ) -> Result<(), EngineError> {
        self.count_in_flight(io.now());
        self.report.requests += 1;
        self.report.sectors += issue.sectors.0;
        if let Some(elevator) = self.elevator.as_mut() {
            elevator.add(issue, io.now(), fetched);
        } else {
            let id = io.submit(self.setup.device, issue)?;
            self.in_flight.insert(id, fetched);
        }
        Ok(())
    }

    /// Indirect block `block` is cached: the streams waiting for it go on.
    pub(super) fn mapped<D: BlockDevice>(
        &mut self,
        block: BlockNumber,
        io: &mut Io<'_, D>,
    ) -> Result<(), EngineError> {
        let evicted = cache_block(&mut self.setup.cache, block);
        self.count_evicted(&evicted);
        for k in self.metadata_waiters.remove(&block).unwrap_or_default() {
            if self.gave_up || self.streams[k].state != StreamState::Mapping {
                continue;
            }
            if self.map_and_issue(k, io)? && self.await_step(k, io)? {
                let stream = &mut self.streams[k];
                stream.cursor += stream.step_pages;
                stream.state = StreamState::Sleeping;
                self.steps(k, io)?;
            }
        }
        Ok(())
    }
}
