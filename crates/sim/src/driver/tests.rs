use super::*;
use crate::engine::EngineOptions;
use crate::fake::FixedServiceDevice;

fn engine(devices: usize, service_ns: u64) -> Engine<FixedServiceDevice> {
    let mut engine = Engine::new(EngineOptions::default());
    for _ in 0..devices {
        engine.add_device(FixedServiceDevice::new(
            Sectors(1 << 20),
            Nanoseconds(service_ns),
            64,
        ));
    }
    engine
}

fn source(count: u64, think_ns: u64) -> impl FnMut(DeviceId) -> Option<RequestSpec> {
    let mut left = count;
    move |_| {
        (left > 0).then(|| {
            left -= 1;
            RequestSpec {
                operation: Operation::Read,
                lbn: Lbn(left * 8),
                sectors: Sectors(8),
                think_after: Nanoseconds(think_ns),
            }
        })
    }
}

// Proves the closed loop at depth 1 with think time reproduces the validate timing:
// each request arrives `think` after the previous completes, so n requests of
// service s and think t end at n*s + (n-1)*t.
#[test]
fn closed_loop_depth_one_with_think() {
    let mut engine = engine(1, 100);
    let mut responses = Vec::new();
    let summary = run_closed_loop(&mut engine, 1, &mut source(10, 30), |done| {
        responses.push((
            done.completion.request.arrival.0,
            done.completion.response_time().0,
        ))
    })
    .unwrap();
    assert_eq!(
        summary,
        RunSummary {
            issued: 10,
            completed: 10,
            end: Nanoseconds(10 * 100 + 9 * 30)
        }
    );
    assert_eq!(responses[1], (130, 100));
    assert!(responses.iter().all(|&(_, response)| response == 100));
}

// Proves depth Q keeps Q requests queued at a FIFO device: response time is Q * s
// in steady state, and throughput is one per s.
#[test]
fn closed_loop_keeps_depth() {
    let mut engine = engine(2, 100);
    let mut last_response = 0;
    let summary = run_closed_loop(&mut engine, 4, &mut source(400, 0), |done| {
        last_response = done.completion.response_time().0;
    })
    .unwrap();
    assert_eq!(summary.completed, 400);
    assert_eq!(summary.end, Nanoseconds(200 * 100));
    assert_eq!(last_response, 400);
}

// Proves the open loop submits at the given times and rejects time going backwards.
#[test]
fn open_loop_arrivals() {
    let arrival = |time: u64, device: u32| Arrival {
        time: Nanoseconds(time),
        device: DeviceId(device),
        operation: Operation::Write,
        lbn: Lbn(0),
        sectors: Sectors(1),
    };
    let mut engine = engine(2, 100);
    let mut done = Vec::new();
    let summary = run_open_loop(
        &mut engine,
        [
            arrival(0, 0),
            arrival(50, 0),
            arrival(50, 1),
            arrival(500, 1),
        ],
        |d| done.push((d.device.0, d.completion.done.0)),
    )
    .unwrap();
    assert_eq!(done, vec![(0, 100), (1, 150), (0, 200), (1, 600)]);
    assert_eq!(summary.end, Nanoseconds(600));
    let error = run_open_loop(&mut engine, [arrival(10, 0)], |_| {}).unwrap_err();
    assert!(matches!(error, EngineError::ArrivalInPast { .. }));
}

/// A host that issues a chain: each completion issues the next request (to the
/// other device), and a wake-up at a fixed time spins a flush in.
struct Chain {
    left: u32,
    log: Vec<(u64, &'static str)>,
}

impl Host<FixedServiceDevice> for Chain {
    type Error = EngineError;
    fn start(&mut self, io: &mut Io<'_, FixedServiceDevice>) -> Result<(), EngineError> {
        io.wake_at(Nanoseconds(250), 7)?;
        io.submit(DeviceId(0), Issue::new(Operation::Read, Lbn(0), Sectors(1)))?;
        Ok(())
    }
    fn completed(
        &mut self,
        done: &DeviceCompletion,
        io: &mut Io<'_, FixedServiceDevice>,
    ) -> Result<(), EngineError> {
        self.log
            .push((io.now().0, done.completion.request.operation.name()));
        if self.left > 0 {
            self.left -= 1;
            let other = DeviceId(1 - done.device.0);
            io.submit(other, Issue::new(Operation::Write, Lbn(8), Sectors(1)))?;
        }
        Ok(())
    }
    fn woke(&mut self, token: u64, io: &mut Io<'_, FixedServiceDevice>) -> Result<(), EngineError> {
        assert_eq!(token, 7);
        self.log.push((io.now().0, "woke"));
        io.submit(
            DeviceId(0),
            Issue::new(Operation::Flush, Lbn(0), Sectors(0)),
        )?;
        Ok(())
    }
}

// Proves a completion callback can issue new requests and a wake-up fires at its
// time, between device events; the flush it issues queues behind the write in
// service (FIFO device) and events at one instant come in scheduling order.
#[test]
fn callbacks_issue_requests_and_wake_ups_fire() {
    let mut engine = engine(2, 100);
    let mut host = Chain {
        left: 3,
        log: Vec::new(),
    };
    let summary = run(&mut engine, &mut host).unwrap();
    assert_eq!(
        host.log,
        vec![
            (100, "read"),
            (200, "write"),
            (250, "woke"),
            (300, "write"),
            // Both devices finish at 400: device 0's event was scheduled first.
            (400, "flush"),
            (400, "write"),
        ]
    );
    assert_eq!(summary.issued, 5);
    assert_eq!(summary.end, Nanoseconds(400));
}

/// A host that asks for a wake-up in the past.
struct Backwards;
impl Host<FixedServiceDevice> for Backwards {
    type Error = EngineError;
    fn start(&mut self, io: &mut Io<'_, FixedServiceDevice>) -> Result<(), EngineError> {
        io.wake_at(Nanoseconds(10), 0)
    }
    fn completed(
        &mut self,
        _: &DeviceCompletion,
        _: &mut Io<'_, FixedServiceDevice>,
    ) -> Result<(), EngineError> {
        Ok(())
    }
    fn woke(&mut self, _: u64, io: &mut Io<'_, FixedServiceDevice>) -> Result<(), EngineError> {
        io.wake_at(Nanoseconds(5), 0)
    }
}

// Proves a wake-up before the current time is refused with an error, not run.
#[test]
fn wake_up_in_the_past_is_an_error() {
    let mut engine = engine(1, 100);
    assert!(matches!(
        run(&mut engine, &mut Backwards),
        Err(EngineError::ArrivalInPast { .. })
    ));
}
