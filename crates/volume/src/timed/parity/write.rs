//! The RAID-5 write path in simulated time: one stripe op per stripe a write or
//! trim touches, each taking its stripe's lock, reading what its plan needs, then
//! writing (the state table is in the parent module).

use super::*;

impl<D: BlockDevice, L: ParityLayout> Parity<D, L> {
    /// Queue one stripe op per stripe the write or trim touches.
    pub(super) fn issue_write(&mut self, parent: ParentId, request: BlockRequest) {
        let segments: Vec<_> = stripe_segments(&self.layout, request.lbn, request.sectors)
            .expect("range checked at submit")
            .collect();
        for segment in segments {
            let op = StripeOp {
                parent,
                stripe: segment.stripe,
                range: segment.range,
                operation: request.operation,
                force_unit_access: request.force_unit_access,
                phase: Phase::Waiting,
                outstanding: 0,
                touched: Vec::new(),
                writes_from: 0,
            };
            let index = self.new_op(op);
            self.io.members.hold(parent);
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

    /// The op holds its stripe's lock now: plan it and send its first phase.
    pub(super) fn start_op(&mut self, index: u32) {
        let op = self.op(index).clone();
        if self.lost() {
            self.io.members.state_mut(op.parent).status = Status::DeviceFailed;
            self.finish_op(index);
            return;
        }
        if op.operation == Operation::Trim
            && op.range.sectors == self.layout.stripe_data_sectors(op.stripe)
        {
            return self.trim_stripe(index);
        }
        let failed = self.failed_one();
        let cache = &self.cache;
        let stripe = op.stripe;
        let cached = |member: MemberIndex, _: Lbn, _: Sectors| cache.knows(stripe, member);
        plan_write_into(
            &self.layout,
            op.stripe,
            op.range,
            failed,
            &cached,
            self.options.write_choice,
            &mut self.write_plan,
        )
        .expect("stripe range from the layout");
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
            let sent = self.send_extents(
                op.parent,
                Operation::Read,
                false,
                Tag::OldData { op: index },
            );
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

    /// The op is done: the cache learns its units, its parent loses a hold, the
    /// next op waiting for the stripe starts.
    pub(super) fn finish_op(&mut self, index: u32) {
        let op = self.ops[index as usize].take().expect("live stripe op");
        self.free_ops.push(index);
        for extent in &op.touched {
            let unit = self.layout.unit(op.stripe, extent.member);
            if extent.lbn == unit.start && extent.sectors >= unit.used {
                self.cache.learn(op.stripe, extent.member);
            }
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
