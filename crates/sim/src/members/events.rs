//! The half of the member bookkeeping that runs as time passes: serving member
//! events in time order, putting child completions back on their parents, and
//! completing parents.

use super::*;

impl<D: BlockDevice, T: Copy, P: Default> Members<D, T, P> {
    /// Finish parents whose children are all done and that the layer did not
    /// follow up.
    pub(super) fn finish_settled(&mut self) {
        while let Some(parent) = self.maybe_done.pop() {
            let slot = &self.parents[parent.0 as usize];
            if slot.open && slot.outstanding == 0 && slot.holds == 0 && !slot.explicit {
                let done = slot.last_done.max(slot.request.arrival);
                self.finish(parent, done);
            }
        }
    }

    pub(super) fn finish(&mut self, parent: ParentId, done: Nanoseconds) {
        let slot = &mut self.parents[parent.0 as usize];
        assert!(slot.open, "parent {parent:?} completed twice");
        slot.open = false;
        slot.explicit = false;
        let completion = Completion::new(slot.request, done, slot.status);
        // A parent completed explicitly may still have children in flight (a
        // layer that does not wait for them); it is freed when they are done.
        if slot.is_free() {
            self.free_parents.push(parent.0);
        }
        self.finished.push_back(completion);
    }

    /// The next thing that happened at or before `now`, in time order, or `None`.
    pub fn poll(&mut self, now: Nanoseconds) -> Option<MemberEvent<T>> {
        loop {
            if let Some(event) = self.events.pop_front() {
                return Some(event);
            }
            self.finish_settled();
            if let Some(&done) = self.arrived.get(self.arrived_next) {
                self.arrived_next += 1;
                if self.arrived_next == self.arrived.len() {
                    self.arrived.clear();
                    self.arrived_next = 0;
                }
                self.child_done(done);
                continue;
            }
            let engine_next = self.engine.next_event_time().filter(|&t| t <= now);
            let delayed_next = self
                .delayed
                .peek()
                .map(|Reverse((t, _, _))| *t)
                .filter(|&t| t <= now);
            // Member events first at equal times, then delayed work in order.
            let engine_first = match (engine_next, delayed_next) {
                (Some(e), Some(d)) => e <= d,
                (e, _) => e.is_some(),
            };
            match (engine_next, delayed_next) {
                (Some(e), _) if engine_first => {
                    self.engine.step(e, &mut self.arrived);
                }
                (_, Some(d)) => {
                    self.catch_up(d);
                    let Reverse((at, _, key)) = self.delayed.pop().expect("peeked");
                    let work = self.delayed_work[key as usize]
                        .take()
                        .expect("delayed work");
                    self.free_delayed.push(key);
                    if let Some(event) = self.run_delayed(at, work) {
                        return Some(event);
                    }
                }
                _ => {
                    self.catch_up(now);
                    if self.arrived.is_empty() {
                        self.finish_settled();
                        return None;
                    }
                }
            }
        }
    }

    fn run_delayed(&mut self, at: Nanoseconds, work: Delayed) -> Option<MemberEvent<T>> {
        match work {
            Delayed::Issue { slot, issue } => {
                // A refusal has failed the child's parent already.
                let _ = self.send(slot, issue);
                None
            }
            Delayed::Complete { parent } => {
                if self.parents[parent.0 as usize].open {
                    self.finish(parent, at);
                }
                None
            }
            Delayed::Wake { token } => Some(MemberEvent::Wake { token, at }),
        }
    }

    /// Put a child's completion back on its parent part(s) and queue one event per
    /// part for the layer.
    pub(super) fn child_done(&mut self, done: DeviceCompletion) {
        let member = MemberIndex(done.device.0);
        let completion = done.completion;
        let counters = &mut self.counters[member.index()];
        counters.completed += 1;
        counters.service += completion.response_time();
        if self.outstanding_at(member) == 0 {
            if let Some(since) = self.busy_since[member.index()].take() {
                self.counters[member.index()].busy += completion.done - since;
            }
        }
        let slot = completion.request.id.0 as usize;
        let child = self
            .children
            .get_mut(slot)
            .and_then(Option::take)
            .expect("a member completed a child it was not given");
        self.free_children.push(slot as u32);
        let mut part = Some((child.parent, child.tag));
        let mut more = child.more;
        while let Some((parent, tag)) = part {
            self.part_done(member, parent, tag, completion);
            part = (more != NO_PART).then(|| {
                let next = self.parts[more as usize];
                self.free_parts.push(more);
                more = next.more;
                (next.parent, next.tag)
            });
        }
        self.drain_waiting(member);
    }

    fn part_done(&mut self, member: MemberIndex, id: ParentId, tag: T, completion: Completion) {
        let parent = &mut self.parents[id.0 as usize];
        parent.outstanding -= 1;
        parent.last_done = parent.last_done.max(completion.done);
        if parent.status.is_ok() && !completion.status.is_ok() {
            parent.status = completion.status;
        }
        let parent_outstanding = parent.outstanding;
        if parent_outstanding == 0 {
            self.maybe_done.push(id);
        }
        if parent.is_free() {
            self.free_parents.push(id.0);
        }
        self.events.push_back(MemberEvent::Child {
            parent: id,
            member,
            tag,
            completion,
            parent_outstanding,
        });
    }

    /// Move the parents finished so far into `completed`.
    pub fn drain(&mut self, completed: &mut Vec<Completion>) {
        self.finish_settled();
        completed.extend(self.finished.drain(..));
    }

    /// When something next happens below the layer.
    pub fn next_event_time(&self) -> Option<Nanoseconds> {
        let times = [
            self.finished.front().map(|c| c.done),
            self.arrived
                .get(self.arrived_next)
                .map(|c| c.completion.done),
            (!self.maybe_done.is_empty() || !self.events.is_empty()).then_some(self.engine.now()),
            self.engine.next_event_time(),
            self.delayed.peek().map(|Reverse((t, _, _))| *t),
        ];
        times.into_iter().flatten().min()
    }
}
