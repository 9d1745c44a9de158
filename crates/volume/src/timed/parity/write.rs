//! The RAID-5 write path in simulated time: one stripe op per stripe a write or
//! trim touches, each taking its stripe's lock (or joining the delayed op holding
//! it), reading what its plan needs once the array lets it, then writing (the
//! state table is in the parent module).

use super::*;

impl<D: BlockDevice, L: ParityLayout> Parity<D, L> {
    /// Queue one stripe op per stripe the write or trim touches.
    pub(super) fn issue_write(&mut self, parent: ParentId, request: BlockRequest) {
        let segments: Vec<_> = stripe_segments(&self.layout, request.lbn, request.sectors)
            .expect("range checked at submit")
            .collect();
        for segment in segments {
            // The hold is released by the op that writes this segment: its own,
            // or the delayed one it joins.
            self.io.members.hold(parent);
            if self.try_join(parent, segment, &request) {
                continue;
            }
            let op = StripeOp {
                parent,
                joined: Vec::new(),
                stripe: segment.stripe,
                range: segment.range,
                gaps: Vec::new(),
                operation: request.operation,
                force_unit_access: request.force_unit_access,
                phase: Phase::Waiting,
                outstanding: 0,
                touched: Vec::new(),
                writes_from: 0,
                pre_read_allowed: false,
                released_at: Nanoseconds::ZERO,
                waited: false,
                delayed_since: None,
            };
            let index = self.new_op(op);
            match self.locks.get_mut(&segment.stripe) {
                Some(waiting) => waiting.push_back(index),
                None => {
                    self.locks.insert(segment.stripe, VecDeque::new());
                    self.start_op(index);
                }
            }
        }
    }

    pub(super) fn new_op(&mut self, op: StripeOp) -> u32 {
        match self.free_ops.pop() {
            Some(index) => {
                self.ops[index as usize] = Some(op);
                index
            }
            None => {
                self.ops.push(Some(op));
                self.ops.len() as u32 - 1
            }
        }
    }

    pub(super) fn op(&mut self, index: u32) -> &mut StripeOp {
        self.ops[index as usize].as_mut().expect("live stripe op")
    }

    /// The op holds its stripe's lock now (or was joined, or released): plan it
    /// and send its first phase, or delay it.
    pub(super) fn start_op(&mut self, index: u32) {
        let op = self.op(index);
        let (parent, stripe, range, operation) = (op.parent, op.stripe, op.range, op.operation);
        if self.lost() {
            // Set on the parent now too: a released op starts outside any
            // completion handler of its parent's.
            self.io.members.state_mut(parent).status = Status::DeviceFailed;
            self.io.members.set_status(parent, Status::DeviceFailed);
            self.finish_op(index);
            return;
        }
        if operation == Operation::Trim && range.sectors == self.layout.stripe_data_sectors(stripe)
        {
            return self.trim_stripe(index);
        }
        let failed = self.failed_one();
        let cache = &self.cache;
        let cached = |member: MemberIndex, _: Lbn, _: Sectors| cache.knows(stripe, member);
        plan_write_into(
            &self.layout,
            stripe,
            range,
            failed,
            &cached,
            self.options.write_choice,
            &mut self.write_plan,
        )
        .expect("stripe range from the layout");
        if !self.op(index).gaps.is_empty() {
            self.read_gaps(index);
        }
        if !self.write_plan.reads.is_empty() && self.try_delay(index) {
            return;
        }
        if self.write_plan.reads.is_empty() && self.op(index).waited {
            self.write_counters.filled_while_delayed += 1;
        }
        if let Some(since) = self.op(index).delayed_since.take() {
            let waited = self.io.members.now().saturating_sub(since);
            self.write_counters.delayed_time += waited;
        }
        let plan = &self.write_plan;
        let counters = &mut self.write_counters;
        match plan.kind {
            WriteKind::FullStripe => counters.full_stripe += 1,
            WriteKind::ReadModifyWrite => counters.read_modify_write += 1,
            WriteKind::ReconstructWrite => counters.reconstruct_write += 1,
            WriteKind::DegradedMixed | WriteKind::DegradedNoParity => counters.degraded += 1,
        }
        counters.pre_read_sectors += plan.reads.iter().map(|r| r.sectors.0).sum::<u64>();
        let mut touched = plan.reads.clone();
        let writes_from = touched.len();
        touched.extend_from_slice(&plan.writes);
        let entry = self.op(index);
        entry.writes_from = writes_from;
        entry.touched = touched;
        if self.write_plan.reads.is_empty() {
            self.send_writes(index);
        } else {
            self.extents.extend_from_slice(&self.write_plan.reads);
            let sent =
                self.send_extents(parent, Operation::Read, false, Tag::OldData { op: index });
            let op = self.op(index);
            op.phase = Phase::Reading;
            op.outstanding = sent;
        }
    }

    /// A whole-stripe trim: every unit trimmed (parity of zeros is zeros).
    pub(super) fn trim_stripe(&mut self, index: u32) {
        let (parent, stripe, fua) = {
            let op = self.op(index);
            (op.parent, op.stripe, op.force_unit_access)
        };
        for member in 0..self.layout.members() {
            let unit = self.layout.unit(stripe, MemberIndex(member));
            self.extents
                .push(unit.extent(MemberIndex(member), Sectors(0), unit.used));
        }
        self.op(index).touched = self.extents.clone();
        let sent = self.send_extents(parent, Operation::Trim, fua, Tag::NewData { op: index });
        self.after_send(index, Phase::Writing, sent);
    }

    pub(super) fn send_writes(&mut self, index: u32) {
        self.end_pre_read(index);
        let (parent, operation, fua) = {
            let op = self.op(index);
            (op.parent, op.operation, op.force_unit_access)
        };
        // A partial trim writes zeros: a write, as far as the members know.
        let operation = if operation == Operation::Trim {
            Operation::Write
        } else {
            operation
        };
        let op = self.ops[index as usize].as_ref().expect("live stripe op");
        self.extents
            .extend_from_slice(&op.touched[op.writes_from..]);
        let sent = self.send_extents(parent, operation, fua, Tag::NewData { op: index });
        self.after_send(index, Phase::Writing, sent);
    }

    pub(super) fn after_send(&mut self, index: u32, phase: Phase, sent: u32) {
        let op = self.op(index);
        op.phase = phase;
        op.outstanding = sent;
        if sent == 0 {
            self.finish_op(index);
        }
    }

    /// The op is done: the cache learns its units, its parent and every parent
    /// joined lose a hold (failed too if the array is lost), the next op waiting
    /// for the stripe starts.
    pub(super) fn finish_op(&mut self, index: u32) {
        self.end_pre_read(index);
        let op = self.ops[index as usize].take().expect("live stripe op");
        self.free_ops.push(index);
        for extent in &op.touched {
            let unit = self.layout.unit(op.stripe, extent.member);
            if extent.lbn == unit.start && extent.sectors >= unit.used {
                self.cache.learn(op.stripe, extent.member);
            }
        }
        for &joined in &op.joined {
            if self.lost() {
                self.io.members.state_mut(joined).status = Status::DeviceFailed;
                self.io.members.set_status(joined, Status::DeviceFailed);
            }
            self.io.members.release(joined);
        }
        self.io.members.release(op.parent);
        let next = self.locks.get_mut(&op.stripe).and_then(VecDeque::pop_front);
        match next {
            Some(next) => self.start_op(next),
            None => {
                self.locks.remove(&op.stripe);
            }
        }
    }
}
