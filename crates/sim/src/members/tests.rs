use super::*;
use crate::driver::{run_closed_loop, RequestSpec};
use crate::fake::FixedServiceDevice;
use crate::request::Operation;
use crate::units::Lbn;

/// A test layer: writes go to every member, reads to member 0 (retried on member
/// 1 when member 0 fails), flushes complete after a fixed 7 ns of "host work"
/// with no children, and a read of LBN 0 waits for a plug wake-up 50 ns later.
struct Mirror {
    members: Members<FixedServiceDevice, u8, u32>,
}

const PLUG_NS: u64 = 50;

impl Mirror {
    fn new(service_ns: [u64; 2], queue_limit: usize, limits: MemberLimits) -> Mirror {
        let members = service_ns
            .iter()
            .map(|&s| FixedServiceDevice::new(Sectors(1 << 20), Nanoseconds(s), queue_limit))
            .collect();
        Mirror {
            members: Members::new(members, limits),
        }
    }
}

impl BlockDevice for Mirror {
    fn capacity(&self) -> Sectors {
        self.members.smallest_capacity()
    }
    fn submit(&mut self, request: BlockRequest) -> Result<(), DeviceError> {
        request.check(self.capacity())?;
        let limit = self.members.limits().parents;
        let parent = self
            .members
            .open(request)
            .map_err(|_| DeviceError::QueueFull {
                depth: limit as usize,
            })?;
        let issue = Issue::new(request.operation, request.lbn, request.sectors);
        let fail = |_: MembersError| DeviceError::QueueFull {
            depth: limit as usize,
        };
        match request.operation {
            Operation::Write | Operation::Trim => {
                for member in 0..2 {
                    self.members
                        .issue(parent, MemberIndex(member), issue, 0)
                        .map_err(fail)?;
                }
            }
            Operation::Read if request.lbn.0 == 0 => {
                *self.members.state_mut(parent) = 1;
                self.members.hold(parent);
                self.members
                    .wake_at(request.arrival + Nanoseconds(PLUG_NS), u64::from(parent.0));
            }
            Operation::Read => self
                .members
                .issue(parent, MemberIndex(0), issue, 0)
                .map_err(fail)?,
            Operation::Flush => self
                .members
                .complete_at(request.arrival + Nanoseconds(7), parent),
        }
        self.members.settle(parent);
        Ok(())
    }
    fn next_event_time(&self) -> Option<Nanoseconds> {
        self.members.next_event_time()
    }
    fn advance(&mut self, now: Nanoseconds, completed: &mut Vec<Completion>) {
        while let Some(event) = self.members.poll(now) {
            match event {
                MemberEvent::Child {
                    parent,
                    member,
                    tag,
                    completion,
                    ..
                } => {
                    let read = completion.request.operation == Operation::Read;
                    if read
                        && completion.status == Status::DeviceFailed
                        && member.0 == 0
                        && tag == 0
                    {
                        // Recover: read the other copy; the parent is not failed.
                        self.members.set_status(parent, Status::Ok);
                        let r = completion.request;
                        let issue = Issue::new(r.operation, r.lbn, r.sectors);
                        self.members
                            .issue(parent, MemberIndex(1), issue, 1)
                            .unwrap();
                    }
                }
                MemberEvent::Wake { token, .. } => {
                    let parent = ParentId(token as u32);
                    let r = self.members.request(parent);
                    let issue = Issue::new(r.operation, r.lbn, r.sectors);
                    self.members
                        .issue(parent, MemberIndex(0), issue, 0)
                        .unwrap();
                    self.members.release(parent);
                }
            }
        }
        self.members.drain(completed);
    }
    fn control(
        &mut self,
        now: Nanoseconds,
        path: &[MemberIndex],
        command: Control,
    ) -> Result<(), crate::device::ControlError> {
        match path.split_first() {
            Some((&member, rest)) => self.members.control(now, member, rest, command),
            None => Err(crate::device::ControlError::Unsupported {
                device: "the test mirror",
                command,
                reason: "address a member",
            }),
        }
    }
}

fn one(
    layer: Mirror,
    operation: Operation,
    lbn: u64,
    sectors: u64,
) -> (Engine<Mirror>, Completion) {
    let mut engine = Engine::default();
    engine.add_device(layer);
    let mut left = 1;
    let mut out = Vec::new();
    let mut source = |_| {
        left -= 1;
        (left == 0).then_some(RequestSpec {
            operation,
            lbn: Lbn(lbn),
            sectors: Sectors(sectors),
            think_after: Nanoseconds::ZERO,
        })
    };
    run_closed_loop(&mut engine, 1, &mut source, |d| out.push(d.completion)).unwrap();
    (engine, out[0])
}

// Proves a parent completes when its last child does (the slower member), with
// its own request and status, and member counters count each child.
#[test]
fn parent_completes_with_its_last_child() {
    let (engine, done) = one(
        Mirror::new([100, 300], 4, MemberLimits::default()),
        Operation::Write,
        8,
        8,
    );
    assert_eq!(done.done, Nanoseconds(300));
    assert_eq!(done.status, Status::Ok);
    assert!(
        done.drive.is_none(),
        "a layer's completion carries no drive detail"
    );
    let counters = engine.devices()[0].members.counters();
    let member = counters[1];
    assert_eq!(
        (member.requests, member.sectors, member.completed),
        (1, 8, 1)
    );
    assert_eq!(member.service, Nanoseconds(300));
}

// Proves a parent the layer completes itself (no children) completes at the time
// it chose, and a wake-up the layer set fires at its time, its follow-up child
// keeping the parent open until it completes.
#[test]
fn explicit_completion_and_wake_up() {
    let (_, flush) = one(
        Mirror::new([100, 100], 4, MemberLimits::default()),
        Operation::Flush,
        0,
        0,
    );
    assert_eq!(flush.done, Nanoseconds(7));
    let (_, plugged) = one(
        Mirror::new([100, 100], 4, MemberLimits::default()),
        Operation::Read,
        0,
        8,
    );
    assert_eq!(plugged.done, Nanoseconds(PLUG_NS + 100));
}

// Proves a member failure fails the parent unless the layer recovers: the read
// is retried on the other member inside the completion handler and succeeds.
#[test]
fn failure_propagates_unless_recovered() {
    let mut layer = Mirror::new([100, 100], 4, MemberLimits::default());
    layer
        .control(Nanoseconds::ZERO, &[MemberIndex(0)], Control::Fail)
        .unwrap();
    let (_, write) = one(layer, Operation::Write, 8, 8);
    assert_eq!(write.status, Status::DeviceFailed);
    let mut layer = Mirror::new([100, 100], 4, MemberLimits::default());
    layer
        .control(Nanoseconds::ZERO, &[MemberIndex(0)], Control::Fail)
        .unwrap();
    let (_, read) = one(layer, Operation::Read, 8, 8);
    assert_eq!((read.status, read.done), (Status::Ok, Nanoseconds(200)));
}

// Proves children wait in a per-member FIFO when the member's queue is full and
// are sent on as it completes: eight writes through members that hold one request
// each all complete, each member serving them back to back.
#[test]
fn full_member_queue_waits_in_fifo() {
    let mut engine = Engine::default();
    engine.add_device(Mirror::new([100, 100], 1, MemberLimits::default()));
    let mut left = 8u64;
    let mut done = Vec::new();
    let mut source = |_| {
        left = left.checked_sub(1)?;
        Some(RequestSpec {
            operation: Operation::Write,
            lbn: Lbn(8 + left * 8),
            sectors: Sectors(8),
            think_after: Nanoseconds::ZERO,
        })
    };
    run_closed_loop(&mut engine, 8, &mut source, |d| {
        done.push(d.completion.done.0)
    })
    .unwrap();
    assert_eq!(done, (1..=8).map(|k| k * 100).collect::<Vec<_>>());
}

// Proves the parent table is bounded: one request more than the limit is refused
// with QueueFull, and a slot is reused after its parent completes.
#[test]
fn parent_table_is_bounded() {
    let limits = MemberLimits {
        parents: 2,
        children: 16,
    };
    let mut layer = Mirror::new([100, 100], 4, limits);
    let write = |id| {
        BlockRequest::new(
            RequestId(id),
            Operation::Write,
            Lbn(8),
            Sectors(8),
            Nanoseconds::ZERO,
        )
    };
    layer.submit(write(0)).unwrap();
    layer.submit(write(1)).unwrap();
    assert_eq!(
        layer.submit(write(2)),
        Err(DeviceError::QueueFull { depth: 2 })
    );
    let mut out = Vec::new();
    layer.advance(Nanoseconds(1_000), &mut out);
    assert_eq!(out.len(), 2);
    let later = BlockRequest::new(
        RequestId(3),
        Operation::Write,
        Lbn(8),
        Sectors(8),
        Nanoseconds(1_000),
    );
    layer.submit(later).unwrap();
}

// Proves one merged member request serves several parents: each part gets its own
// event, both parents complete with it, and the member saw one request.
#[test]
fn merged_child_serves_every_part() {
    let device = FixedServiceDevice::new(Sectors(1 << 20), Nanoseconds(100), 4);
    let mut members: Members<FixedServiceDevice, u8> =
        Members::new(vec![device], MemberLimits::default());
    let request = |id, lbn| {
        BlockRequest::new(
            RequestId(id),
            Operation::Read,
            Lbn(lbn),
            Sectors(8),
            Nanoseconds::ZERO,
        )
    };
    let a = members.open(request(0, 0)).unwrap();
    let b = members.open(request(1, 8)).unwrap();
    let merged = Issue::new(Operation::Read, Lbn(0), Sectors(16));
    members
        .issue_merged(MemberIndex(0), merged, &[(a, 1), (b, 2)])
        .unwrap();
    let mut tags = Vec::new();
    while let Some(event) = members.poll(Nanoseconds(100)) {
        if let MemberEvent::Child { parent, tag, .. } = event {
            tags.push((parent, tag));
        }
    }
    assert_eq!(tags, vec![(a, 1), (b, 2)]);
    let mut done = Vec::new();
    members.drain(&mut done);
    let mut ids: Vec<u64> = done.iter().map(|c| c.request.id.0).collect();
    ids.sort_unstable();
    assert_eq!(ids, vec![0, 1]);
    assert!(done.iter().all(|c| c.done == Nanoseconds(100)));
    let member = members.counters()[0];
    assert_eq!(
        (member.requests, member.sectors, member.service),
        (1, 16, Nanoseconds(100))
    );
}
