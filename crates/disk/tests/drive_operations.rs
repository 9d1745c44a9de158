//! The operations beyond read and write, on the catalog Atlas 10K (a write-back
//! drive): a force-unit-access write waits for the media, a flush waits for the
//! write-back data, a trim costs only the command, and a failed drive answers every
//! request with `DeviceFailed`.

use spinstack_disk::drive::{Drive, DriveOptions};
use spinstack_sim::device::Control;
use spinstack_sim::driver::{run, Host, Io, Issue};
use spinstack_sim::engine::{DeviceCompletion, DeviceId, Engine, EngineError, EngineOptions};
use spinstack_sim::request::{Completion, Operation, Status};
use spinstack_sim::units::{Lbn, Sectors};

/// Issues `script` one request at a time (each after the previous completes).
struct Sequence {
    script: Vec<Issue>,
    done: Vec<Completion>,
}

impl Host<Drive> for Sequence {
    type Error = EngineError;
    fn start(&mut self, io: &mut Io<'_, Drive>) -> Result<(), EngineError> {
        self.script.reverse();
        self.next(io)
    }
    fn completed(
        &mut self,
        done: &DeviceCompletion,
        io: &mut Io<'_, Drive>,
    ) -> Result<(), EngineError> {
        self.done.push(done.completion);
        self.next(io)
    }
    fn woke(&mut self, _: u64, _: &mut Io<'_, Drive>) -> Result<(), EngineError> {
        Ok(())
    }
}

impl Sequence {
    fn next(&mut self, io: &mut Io<'_, Drive>) -> Result<(), EngineError> {
        match self.script.pop() {
            Some(issue) => io.submit(DeviceId(0), issue).map(|_| ()),
            None => Ok(()),
        }
    }
}

fn atlas() -> Engine<Drive> {
    let spec = spinstack_disk::catalog::get("atlas10k").expect("catalog has atlas10k");
    let mut engine = Engine::new(EngineOptions::default());
    engine.add_device(Drive::new(&spec, DriveOptions::default()).expect("drive builds"));
    engine
}

fn play(engine: &mut Engine<Drive>, script: Vec<Issue>) -> Vec<Completion> {
    let mut host = Sequence {
        script,
        done: Vec::new(),
    };
    run(engine, &mut host).expect("served");
    host.done
}

fn write(lbn: u64, force_unit_access: bool) -> Issue {
    Issue {
        force_unit_access,
        ..Issue::new(Operation::Write, Lbn(lbn), Sectors(64))
    }
}

// Proves a write with force-unit-access on a write-back drive completes only after
// its media write (much later than the same write acknowledged from the buffer),
// and the breakdown shows media work only for the FUA write.
#[test]
fn force_unit_access_waits_for_the_media() {
    let plain = play(&mut atlas(), vec![write(5_000_000, false)]);
    let fua = play(&mut atlas(), vec![write(5_000_000, true)]);
    let (plain, fua) = (plain[0], fua[0]);
    assert!(plain.cache_hit() && !fua.cache_hit());
    assert_eq!(plain.breakdown().media_transfer.0, 0);
    assert!(fua.breakdown().media_transfer.0 > 0);
    assert!(
        fua.response_time().0 > plain.response_time().0 + 1_000_000,
        "plain {} vs FUA {}",
        plain.response_time(),
        fua.response_time()
    );
}

// Proves a flush right after a write-back write completes when that write's media
// work is done (it would have taken as long as the FUA write), and a flush with
// nothing dirty costs only the command overheads (well under a millisecond).
#[test]
fn flush_waits_for_write_back_data() {
    let flush = Issue::new(Operation::Flush, Lbn(0), Sectors(0));
    let done = play(&mut atlas(), vec![write(5_000_000, false), flush]);
    let fua = play(&mut atlas(), vec![write(5_000_000, true)])[0];
    assert_eq!(done[1].request.operation, Operation::Flush);
    assert!(
        done[1].done.0 + 200_000 >= fua.done.0,
        "flush done {} vs FUA write done {}",
        done[1].done,
        fua.done
    );
    let clean = play(&mut atlas(), vec![flush])[0];
    assert!(
        clean.response_time().as_ms_f64() < 1.0,
        "{}",
        clean.response_time()
    );
    assert_eq!(clean.status, Status::Ok);
}

// Proves a trim costs only the command (no media work), and a flush with a range
// is refused.
#[test]
fn trim_is_a_command_and_flush_has_no_range() {
    let trim = Issue::new(Operation::Trim, Lbn(1000), Sectors(4096));
    let done = play(&mut atlas(), vec![trim])[0];
    assert!(done.response_time().as_ms_f64() < 1.0);
    assert_eq!(done.breakdown().media_transfer.0, 0);
    let mut engine = atlas();
    let bad = Issue::new(Operation::Flush, Lbn(8), Sectors(1));
    let mut host = Sequence {
        script: vec![bad],
        done: Vec::new(),
    };
    let error = run(&mut engine, &mut host).unwrap_err();
    assert!(error.to_string().contains("a flush has none"), "{error}");
}

// Proves a failed drive completes every later request with DeviceFailed and no
// drive detail, and the failure is a control command through the engine.
#[test]
fn failed_drive_answers_device_failed() {
    let mut engine = atlas();
    engine
        .control(DeviceId(0), &[], Control::Fail)
        .expect("drives can fail");
    let done = play(
        &mut engine,
        vec![
            Issue::new(Operation::Read, Lbn(0), Sectors(8)),
            write(100, false),
        ],
    );
    assert!(done
        .iter()
        .all(|c| c.status == Status::DeviceFailed && c.drive.is_none()));
}

// Proves a replaced drive serves again: a failed drive swapped for a new one (the
// pacer's rebuilt member) completes reads and writes Ok, and a replace addressed to
// a drive that has not failed is refused, so a stray command cannot reset it.
#[test]
fn replaced_drive_serves_again() {
    let mut engine = atlas();
    let refused = engine.control(DeviceId(0), &[], Control::Replace);
    assert!(
        refused.is_err_and(|error| error.to_string().contains("has not failed")),
        "a working drive is not replaced"
    );
    engine.control(DeviceId(0), &[], Control::Fail).unwrap();
    let failed = play(
        &mut engine,
        vec![Issue::new(Operation::Read, Lbn(0), Sectors(8))],
    );
    assert_eq!(failed[0].status, Status::DeviceFailed);
    engine.control(DeviceId(0), &[], Control::Replace).unwrap();
    let done = play(
        &mut engine,
        vec![
            Issue::new(Operation::Read, Lbn(0), Sectors(8)),
            write(100, false),
        ],
    );
    assert!(
        done.iter()
            .all(|c| c.status == Status::Ok && c.drive.is_some()),
        "{done:?}"
    );
}

// Regression test (found building the DMA-buffer experiment of issue 8): on a drive
// whose host link is faster than its media (the DJNA-371350 on ATA/66), 4 KB
// sequential reads must stream from the read-ahead, well under a revolution each;
// with DiskSim's 'Allow almost read hits' and 'Read-ahead on idle hit' off (as
// the hand-made catalog had them) each one missed by a full revolution (8.6 ms).
#[test]
fn sequential_reads_stream_from_read_ahead() {
    let spec = spinstack_disk::catalog::get("djna371350").expect("catalog drive");
    let mean_ms = |spec: &spinstack_disk::DriveSpec| {
        let mut engine = Engine::new(EngineOptions::default());
        engine.add_device(Drive::new(spec, DriveOptions::default()).expect("drive builds"));
        let script = (0..2000)
            .map(|k| Issue::new(Operation::Read, Lbn(8 * k), Sectors(8)))
            .collect();
        let done = play(&mut engine, script);
        done.iter()
            .map(|c| c.response_time().as_ms_f64())
            .sum::<f64>()
            / done.len() as f64
    };
    let streaming = mean_ms(&spec);
    let revolution_ms = 60_000.0 / f64::from(spec.mechanics.rpm);
    assert!(
        streaming < 0.1 * revolution_ms,
        "{streaming:.3} ms per 4 KB read"
    );
    let mut off = spec.clone();
    off.firmware.cache.allow_almost_read_hits = false;
    off.firmware.cache.read_ahead_on_idle_hit = false;
    assert!(
        mean_ms(&off) > 0.9 * revolution_ms,
        "the flags are what makes the difference"
    );
}
