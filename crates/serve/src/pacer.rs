//! Real-time pacing by the drive model (`serve --timing model`): every request is
//! also given, at its wall-clock arrival, to the timed model of the volume (members
//! in simulated time, the clock advanced with the wall clock), and its reply is
//! released only when the model says the request completes.
//!
//! One thread owns the engine. Its loop: wait for a request or for the engine's next
//! event, whichever is first; run the engine up to the wall clock; release the
//! replies of the requests that completed; submit the new ones at the current
//! simulated time. Simulated time is wall time since the pacer started, in
//! nanoseconds; a reply leaves at most one loop turn (tens of µs) after its model
//! completion.
//!
//! The bytes are already read or written when a request reaches the pacer (the data
//! path does not wait for the model); only the reply is held. Clients see a reply no
//! earlier than the model allows, which is what pacing means.
//!
//! Member failures reach the model as `Control::Fail`, and a member whose rebuild
//! ended as `Control::Replace` (a new drive in its place). A member being rebuilt
//! is timed as failed until then. The timed volumes have no rebuild traffic of their
//! own (see `spinstack_volume::timed`), so each online rebuild step is given to the
//! model as the volume reads that, degraded, read what the step read from the other
//! members, and the rebuild waits for them ([`Pacer::pace_rebuild_reads`]): it goes
//! at the modelled drives' pace and loads them as clients see. Not modelled: the
//! writes to the member being rebuilt, and a DMA-aligned buffer may answer some of
//! those reads from its own blocks.

use serde::Serialize;
use spinstack_sim::device::{Control, MemberIndex};
use spinstack_sim::engine::{DeviceCompletion, DeviceId, Engine, EngineOptions};
use spinstack_sim::request::{BlockRequest, Operation, RequestId};
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors};
use spinstack_volume::build::Volume;
use std::collections::HashMap;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Sends a held reply; called by the pacer thread at the model's completion time.
/// It must not block: a reply answered from this thread is only queued for its
/// connection's writer thread (see `spinstack-nbd`), so a client that stops reading
/// cannot stall the pacer and with it every other connection.
pub type Release = Box<dyn FnOnce() + Send>;

/// One request for the model.
pub struct Paced {
    pub operation: Operation,
    pub lbn: Lbn,
    pub sectors: Sectors,
    pub force_unit_access: bool,
    pub release: Release,
}

enum Message {
    Request(Paced),
    Fail(MemberIndex),
    Replace(MemberIndex),
    /// A read an online rebuild step stands for (counted apart from clients').
    RebuildRead(Paced),
}

/// What the model has seen so far, for `volume status`.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ModelSnapshot {
    pub simulated_s: f64,
    pub requests_in_model: usize,
    /// Requests the model refused (e.g. past a drive's end); answered unpaced.
    pub unpaced_requests: u64,
    pub members: Vec<MemberUtilisation>,
    /// Members the model times as failed (ascending).
    pub failed_members: Vec<u32>,
    /// Reads the model was given for online rebuild steps, and their sectors
    /// ([`Pacer::pace_rebuild_reads`]).
    pub rebuild_reads: u64,
    pub rebuild_sectors: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct MemberUtilisation {
    pub member: u32,
    pub requests: u64,
    /// Fraction of simulated time the member had requests outstanding.
    pub utilisation: f64,
    pub mean_service_ms: f64,
}

/// The pacing thread's handle; dropping it lets the thread finish what it holds and
/// end.
pub struct Pacer {
    sender: Option<mpsc::Sender<Message>>,
    snapshot: Arc<Mutex<ModelSnapshot>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Pacer {
    /// Starts pacing by `volume` (its clock starts now).
    pub fn start(volume: Volume) -> std::io::Result<Pacer> {
        let (sender, receiver) = mpsc::channel();
        let snapshot = Arc::new(Mutex::new(ModelSnapshot::default()));
        let shared = Arc::clone(&snapshot);
        let thread = std::thread::Builder::new()
            .name("pacer".into())
            .spawn(move || PacerLoop::new(volume, shared).run(receiver))?;
        Ok(Pacer {
            sender: Some(sender),
            snapshot,
            thread: Some(thread),
        })
    }

    /// Hands a request to the model; its `release` runs when the model completes it.
    pub fn submit(&self, paced: Paced) {
        self.send_paced(paced, Message::Request);
    }

    /// Sends `paced` to the pacer thread as `message`; if that thread is gone, runs
    /// its `release` now: answered unpaced rather than never.
    fn send_paced(&self, paced: Paced, message: fn(Paced) -> Message) {
        let Some(sender) = &self.sender else {
            return (paced.release)();
        };
        if let Err(mpsc::SendError(Message::Request(paced) | Message::RebuildRead(paced))) =
            sender.send(message(paced))
        {
            (paced.release)();
        }
    }

    /// Fails a member in the model too, so timing follows the degraded array.
    pub fn fail_member(&self, member: MemberIndex) {
        if let Some(sender) = &self.sender {
            let _ = sender.send(Message::Fail(member));
        }
    }

    /// Gives the model the reads of one online rebuild step (volume `ranges` read with
    /// the member being rebuilt failed: the other members' share of the step) and
    /// returns once it has completed them, so a rebuild under `--timing model` goes at
    /// the modelled drives' pace and its load delays clients as on the drives. The
    /// rebuilt member's writes are not modelled (it is timed as failed until its
    /// rebuild ends, so no client request waits on it either).
    pub fn pace_rebuild_reads(&self, ranges: &[(Lbn, Sectors)]) {
        let (done, finished) = mpsc::channel();
        for &(lbn, sectors) in ranges {
            let done = done.clone();
            let paced = Paced {
                operation: Operation::Read,
                lbn,
                sectors,
                force_unit_access: false,
                release: Box::new(move || {
                    let _ = done.send(());
                }),
            };
            self.send_paced(paced, Message::RebuildRead);
        }
        drop(done);
        // Each release sends once; a pacer that ends drops the rest, which ends this.
        for _ in ranges {
            if finished.recv().is_err() {
                break;
            }
        }
    }

    /// A failed member was rebuilt: the model times a new drive in its place, so
    /// timing follows the healthy array again.
    pub fn replace_member(&self, member: MemberIndex) {
        if let Some(sender) = &self.sender {
            let _ = sender.send(Message::Replace(member));
        }
    }

    pub fn snapshot(&self) -> ModelSnapshot {
        self.snapshot
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .clone()
    }
}

impl Drop for Pacer {
    fn drop(&mut self) {
        self.sender.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

struct PacerLoop {
    engine: Engine<Volume>,
    device: DeviceId,
    start: Instant,
    held: HashMap<u64, Release>,
    next_id: u64,
    unpaced: u64,
    completions: Vec<DeviceCompletion>,
    shared: Arc<Mutex<ModelSnapshot>>,
    last_snapshot: Instant,
    failed: Vec<u32>,
    rebuild_reads: u64,
    rebuild_sectors: u64,
}

impl PacerLoop {
    fn new(volume: Volume, shared: Arc<Mutex<ModelSnapshot>>) -> PacerLoop {
        let mut engine = Engine::new(EngineOptions::default());
        let device = engine.add_device(volume);
        PacerLoop {
            engine,
            device,
            start: Instant::now(),
            held: HashMap::new(),
            next_id: 0,
            unpaced: 0,
            completions: Vec::new(),
            shared,
            last_snapshot: Instant::now(),
            failed: Vec::new(),
            rebuild_reads: 0,
            rebuild_sectors: 0,
        }
    }

    fn wall_now(&self) -> Nanoseconds {
        Nanoseconds(self.start.elapsed().as_nanos() as u64)
    }

    fn run(mut self, receiver: mpsc::Receiver<Message>) {
        loop {
            let received = match self.engine.next_event_time() {
                Some(due) => {
                    let wait = due.saturating_sub(self.wall_now());
                    receiver.recv_timeout(Duration::from_nanos(wait.0))
                }
                None => receiver.recv().map_err(|_| RecvTimeoutError::Disconnected),
            };
            match received {
                Ok(message) => {
                    self.catch_up();
                    self.accept(message);
                    while let Ok(message) = receiver.try_recv() {
                        self.accept(message);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            self.catch_up();
            self.publish(false);
        }
        // No more requests will come: let the model finish what it holds, in time.
        while let Some(due) = self.engine.next_event_time() {
            let wait = due.saturating_sub(self.wall_now());
            std::thread::sleep(Duration::from_nanos(wait.0));
            self.catch_up();
        }
        for (_, release) in self.held.drain() {
            release();
        }
        self.publish(true);
    }

    /// Runs the engine to the wall clock and releases what completed.
    fn catch_up(&mut self) {
        let now = self.wall_now();
        self.engine.run_until(now, &mut self.completions);
        for done in self.completions.drain(..) {
            if let Some(release) = self.held.remove(&done.completion.request.id.0) {
                release();
            }
        }
    }

    fn accept(&mut self, message: Message) {
        match message {
            Message::Request(paced) => self.submit(paced),
            Message::RebuildRead(paced) => {
                self.rebuild_reads += 1;
                self.rebuild_sectors += paced.sectors.0;
                self.submit(paced);
            }
            Message::Fail(member) => {
                // A model that cannot fail the member keeps timing it healthy.
                let failed = self.engine.control(self.device, &[member], Control::Fail);
                if failed.is_ok() && !self.failed.contains(&member.0) {
                    self.failed.push(member.0);
                    self.failed.sort_unstable();
                    self.publish(true);
                }
            }
            Message::Replace(member) => {
                // Only a member the model times as failed has anything to replace.
                if !self.failed.contains(&member.0) {
                    return;
                }
                let replaced = self
                    .engine
                    .control(self.device, &[member], Control::Replace);
                if replaced.is_ok() {
                    self.failed.retain(|&m| m != member.0);
                    self.publish(true);
                }
            }
        }
    }

    fn submit(&mut self, paced: Paced) {
        let id = RequestId(self.next_id);
        self.next_id += 1;
        let now = self.engine.now();
        let mut request = if paced.operation == Operation::Flush {
            BlockRequest::flush(id, now)
        } else {
            BlockRequest::new(id, paced.operation, paced.lbn, paced.sectors, now)
        };
        request.force_unit_access = paced.force_unit_access;
        match self.engine.submit(self.device, request) {
            Ok(()) => {
                self.held.insert(id.0, paced.release);
            }
            Err(_) => {
                self.unpaced += 1;
                (paced.release)();
            }
        }
    }

    /// Refreshes the shared snapshot at most ten times a second (or when asked).
    fn publish(&mut self, force: bool) {
        if !force && self.last_snapshot.elapsed() < Duration::from_millis(100) {
            return;
        }
        self.last_snapshot = Instant::now();
        let elapsed = self.engine.now().0.max(1) as f64;
        let members = match self.engine.device(self.device) {
            Some(volume) => volume
                .member_stats()
                .iter()
                .enumerate()
                .map(|(index, stats)| MemberUtilisation {
                    member: index as u32,
                    requests: stats.requests,
                    utilisation: stats.busy.0 as f64 / elapsed,
                    mean_service_ms: if stats.completed == 0 {
                        0.0
                    } else {
                        stats.service.0 as f64 / stats.completed as f64 / 1e6
                    },
                })
                .collect(),
            None => Vec::new(),
        };
        let snapshot = ModelSnapshot {
            simulated_s: elapsed / 1e9,
            requests_in_model: self.held.len(),
            unpaced_requests: self.unpaced,
            members,
            failed_members: self.failed.clone(),
            rebuild_reads: self.rebuild_reads,
            rebuild_sectors: self.rebuild_sectors,
        };
        *self
            .shared
            .lock()
            .unwrap_or_else(|poison| poison.into_inner()) = snapshot;
    }
}
