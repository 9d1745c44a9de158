//! The contract between the engine and anything that serves block requests
//! (a drive, a RAID volume, a buffer), and the control commands that reach a
//! device, or a member of a volume, without going through its request queue.

pub use crate::request::DeviceError;
use crate::request::{BlockRequest, Completion};
use crate::units::{Nanoseconds, Sectors};
use serde::{Deserialize, Serialize};

/// A component that serves block requests in simulated time.
///
/// The engine calls `submit` when a request reaches the device, asks
/// `next_event_time` when the device next needs attention, and calls `advance`
/// with a time no earlier than the last one; the device pushes every completion
/// that happened up to and including `now` into `completed`. `control` changes
/// the device's state at the current time (power, failure); a layer over members
/// routes a command with a non-empty `path` to the member it names and refuses
/// commands it cannot carry out, rather than ignoring them.
pub trait BlockDevice {
    /// Capacity in sectors.
    fn capacity(&self) -> Sectors;
    /// Hand a request to the device. `request.arrival` is the current simulated time.
    fn submit(&mut self, request: BlockRequest) -> Result<(), DeviceError>;
    /// The next instant at which something happens inside, if anything is pending.
    fn next_event_time(&self) -> Option<Nanoseconds>;
    /// Run the device up to `now`, appending completions in completion-time order.
    fn advance(&mut self, now: Nanoseconds, completed: &mut Vec<Completion>);
    /// Carry out `command` at `now` on the device `path` names below this one
    /// (empty: this device itself; `[k, ...]`: member `k` of a volume, then on down).
    fn control(
        &mut self,
        now: Nanoseconds,
        path: &[MemberIndex],
        command: Control,
    ) -> Result<(), ControlError>;
}

/// A member of a volume, by position.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct MemberIndex(pub u32);

impl MemberIndex {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl std::fmt::Display for MemberIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "member {}", self.0)
    }
}

/// A standby level of a drive, numbered from 0 in the order the drive lists them
/// (the Deskstar T7K250: 0 unloaded heads, 1 low RPM, 2 not spinning).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct StandbyLevel(pub u8);

/// Spin down after `idle_after` without a request, to `level`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdlePolicy {
    pub idle_after: Nanoseconds,
    pub level: StandbyLevel,
}

/// A command that changes a device's state now, outside its request queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Control {
    /// Enter standby `level` as soon as the work in progress is done.
    SpinDown(StandbyLevel),
    /// Leave standby now, without waiting for a request to wake the drive.
    SpinUp,
    /// Spin down after an idle period (`Some`), or only when told (`None`).
    SetIdlePolicy(Option<IdlePolicy>),
    /// The device stops working: requests still queued and every later request
    /// complete with `Status::DeviceFailed`.
    Fail,
    /// A new device takes a failed one's place (a member swapped in and rebuilt):
    /// it works again, with nothing of the old one's buffer or plans. Refused for a
    /// device that has not failed, so a stray command cannot reset a working one.
    /// A volume addressed through a member path times that member as live again.
    Replace,
    /// Send now every request a layer's plug is holding back to merge — what
    /// Linux does when a process must wait for a page (`sync_page` runs the
    /// device's queue rather than wait out the unplug timer). A device with no
    /// plug (a drive) has nothing to do.
    Unplug,
}

/// Why a control command was refused.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum ControlError {
    #[error("{device} has no {member} (it has {members})")]
    NoSuchMember {
        device: &'static str,
        member: MemberIndex,
        members: u32,
    },
    #[error("{device} has no members; the command was addressed to {member}")]
    NotAVolume {
        device: &'static str,
        member: MemberIndex,
    },
    #[error("{device} does not support {command:?}: {reason}")]
    Unsupported {
        device: &'static str,
        command: Control,
        reason: &'static str,
    },
    #[error("standby level {level} does not exist: the drive has {levels} standby levels")]
    NoSuchStandbyLevel { level: u8, levels: u8 },
}

/// Boxed devices (e.g. `Box<dyn BlockDevice>`) are devices, so one engine can hold
/// different kinds.
impl<T: BlockDevice + ?Sized> BlockDevice for Box<T> {
    fn capacity(&self) -> Sectors {
        (**self).capacity()
    }
    fn submit(&mut self, request: BlockRequest) -> Result<(), DeviceError> {
        (**self).submit(request)
    }
    fn next_event_time(&self) -> Option<Nanoseconds> {
        (**self).next_event_time()
    }
    fn advance(&mut self, now: Nanoseconds, completed: &mut Vec<Completion>) {
        (**self).advance(now, completed)
    }
    fn control(
        &mut self,
        now: Nanoseconds,
        path: &[MemberIndex],
        command: Control,
    ) -> Result<(), ControlError> {
        (**self).control(now, path, command)
    }
}

/// A borrowed device is a device, so an engine can run over a device its caller
/// keeps (the borrow keeps anyone else from reaching it during the run).
impl<T: BlockDevice + ?Sized> BlockDevice for &mut T {
    fn capacity(&self) -> Sectors {
        (**self).capacity()
    }
    fn submit(&mut self, request: BlockRequest) -> Result<(), DeviceError> {
        (**self).submit(request)
    }
    fn next_event_time(&self) -> Option<Nanoseconds> {
        (**self).next_event_time()
    }
    fn advance(&mut self, now: Nanoseconds, completed: &mut Vec<Completion>) {
        (**self).advance(now, completed)
    }
    fn control(
        &mut self,
        now: Nanoseconds,
        path: &[MemberIndex],
        command: Control,
    ) -> Result<(), ControlError> {
        (**self).control(now, path, command)
    }
}

/// The refusal a device with no members gives a command addressed to a member.
pub fn refuse_member_path(device: &'static str, path: &[MemberIndex]) -> Result<(), ControlError> {
    match path.first() {
        Some(&member) => Err(ControlError::NotAVolume { device, member }),
        None => Ok(()),
    }
}
