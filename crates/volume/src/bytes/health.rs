//! The array state machine shared by every byte volume, in the style of Linux md's
//! `raid5.h` state comments.
//!
//! | from | event | to |
//! |---|---|---|
//! | `Healthy` | member `k` fails (`fail_member(k)`; a member op returns `StoreError::Failed`; a member write or trim returns an I/O error; a read error cannot be rewritten, see [`super`]) and the level survives it | `Degraded { failed: [k] }` |
//! | `Healthy` | member `k` fails and the level cannot survive it (RAID-0) | `Failed` |
//! | `Degraded { F }` | member `j` fails, the level survives `F + j` (an n-way mirror whose every chunk keeps a live copy) | `Degraded { F + j }` |
//! | `Degraded { F }` | member `j` fails, the level does not survive `F + j` (RAID-5: any second failure) | `Failed` |
//! | `Degraded { F }` | `replace_member(k, store)`, `k` in `F` | `Rebuilding { member: k, cursor: 0, failed: F - k }` |
//! | `Rebuilding { k, c, F }` | `rebuild_step` advances `c` to `c' < total` | `Rebuilding { k, c', F }` |
//! | `Rebuilding { k, c, F }` | `rebuild_step` reaches `total` | `Healthy` if `F` is empty, else `Degraded { F }` |
//! | `Rebuilding { k, c, F }` | the new member `k` fails | `Degraded { F + k }` (rebuild abandoned) |
//! | `Rebuilding { k, c, F }` | member `j != k` fails, the level survives `F + j + k` | `Rebuilding { k, c, F + j }` |
//! | `Rebuilding { k, c, F }` | member `j != k` fails, the level does not survive `F + j + k` | `Failed` |
//! | `Failed` | anything | `Failed` (terminal: every request errors) |
//!
//! While rebuilding, member `k` is live below the cursor (the rebuild has written it,
//! and every write since has gone to it) and treated as failed at and above it; the
//! cursor counts the level's rebuild units (stripes for RAID-5, member chunk rows for
//! mirrors). Survival is judged with `k` counted as failed, so a request never depends
//! on the part of `k` not yet rebuilt.

use crate::map::MemberIndex;
use std::fmt;

/// Where an array is in its life (see the module table for the transitions).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArrayState {
    /// Every member is live.
    Healthy,
    /// `failed` (ascending, non-empty) are out; every volume sector can still be read.
    Degraded { failed: Vec<MemberIndex> },
    /// `member` was replaced and is live below `cursor` (of `total` rebuild units);
    /// `failed` are other members still out (only n-way mirrors can have any).
    Rebuilding {
        member: MemberIndex,
        cursor: u64,
        total: u64,
        failed: Vec<MemberIndex>,
    },
    /// More members lost than the redundancy covers: every request returns an error.
    Failed { failed: Vec<MemberIndex> },
}

impl fmt::Display for ArrayState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArrayState::Healthy => write!(f, "healthy"),
            ArrayState::Degraded { failed } => write!(f, "degraded (failed {})", list(failed)),
            ArrayState::Rebuilding {
                member,
                cursor,
                total,
                failed,
            } => {
                write!(f, "rebuilding {member} ({cursor} of {total} units)")?;
                if !failed.is_empty() {
                    write!(f, ", failed {}", list(failed))?;
                }
                Ok(())
            }
            ArrayState::Failed { failed } => write!(f, "failed (lost {})", list(failed)),
        }
    }
}

fn list(members: &[MemberIndex]) -> String {
    let names: Vec<String> = members.iter().map(|m| m.0.to_string()).collect();
    format!("members {}", names.join(", "))
}

/// What `status()` reports.
#[derive(Clone, Debug, PartialEq)]
pub struct VolumeStatus {
    /// "RAID-0", "RAID-1", "RAID-10", "RAID-5".
    pub level: &'static str,
    pub state: ArrayState,
    /// MemberStores out of service (a member being rebuilt is not listed).
    pub failed: Vec<MemberIndex>,
    /// `Some(cursor / total)` in `0..=1` while rebuilding.
    pub rebuild_progress: Option<f64>,
    /// Per member, the sectors rebuilt from the redundancy and rewritten after a read
    /// error (the whole extent the failed read asked for), since assembly or since
    /// the member's store was replaced.
    pub corrected_read_sectors: Vec<u64>,
}

/// How a member stands for a request at a given rebuild unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Liveness {
    Live,
    Dead,
    /// Live for rebuild units below this cursor only.
    LiveBelow(u64),
}

/// The state machine plus the level's survival rule.
#[derive(Clone, Debug)]
pub(crate) struct Health {
    state: ArrayState,
    members: u32,
}

impl Health {
    pub fn new(members: u32) -> Health {
        Health {
            state: ArrayState::Healthy,
            members,
        }
    }

    pub fn state(&self) -> &ArrayState {
        &self.state
    }

    pub fn is_failed(&self) -> bool {
        matches!(self.state, ArrayState::Failed { .. })
    }

    /// MemberStores out of service, ascending (not the one being rebuilt: see
    /// [`Health::incomplete`]).
    pub fn failed(&self) -> &[MemberIndex] {
        match &self.state {
            ArrayState::Healthy => &[],
            ArrayState::Degraded { failed }
            | ArrayState::Rebuilding { failed, .. }
            | ArrayState::Failed { failed } => failed,
        }
    }

    /// Members that do not hold every rebuild unit, ascending: the failed ones plus the
    /// one being rebuilt (live only below its cursor). What a check for a degraded
    /// array must count, where [`Health::failed`] leaves the rebuilding member out.
    pub fn incomplete(&self) -> Vec<MemberIndex> {
        match &self.state {
            ArrayState::Rebuilding { member, failed, .. } => with(failed.clone(), *member),
            _ => self.failed().to_vec(),
        }
    }

    pub fn liveness(&self, member: MemberIndex) -> Liveness {
        match &self.state {
            ArrayState::Healthy => Liveness::Live,
            ArrayState::Rebuilding {
                member: rebuilding,
                cursor,
                ..
            } if *rebuilding == member => Liveness::LiveBelow(*cursor),
            state
                if self.failed().contains(&member)
                    || matches!(state, ArrayState::Failed { .. }) =>
            {
                Liveness::Dead
            }
            _ => Liveness::Live,
        }
    }

    /// Whether `member` holds valid data at rebuild unit `unit`.
    pub fn is_live_at(&self, member: MemberIndex, unit: u64) -> bool {
        match self.liveness(member) {
            Liveness::Live => true,
            Liveness::Dead => false,
            Liveness::LiveBelow(cursor) => unit < cursor,
        }
    }

    /// Member `member` failed; `survives` says whether the level still serves every
    /// sector with the given members out. Returns whether the array is still usable.
    pub fn member_failed(
        &mut self,
        member: MemberIndex,
        survives: impl Fn(&[MemberIndex]) -> bool,
    ) -> bool {
        debug_assert!(member.0 < self.members);
        let next = match std::mem::replace(&mut self.state, ArrayState::Healthy) {
            ArrayState::Healthy => degrade(vec![member], &survives),
            ArrayState::Degraded { failed } => degrade(with(failed, member), &survives),
            ArrayState::Rebuilding {
                member: rebuilding,
                failed,
                ..
            } if rebuilding == member => degrade(with(failed, member), &survives),
            ArrayState::Rebuilding {
                member: rebuilding,
                cursor,
                total,
                failed,
            } => {
                let failed = with(failed, member);
                if survives(&with(failed.clone(), rebuilding)) {
                    ArrayState::Rebuilding {
                        member: rebuilding,
                        cursor,
                        total,
                        failed,
                    }
                } else {
                    ArrayState::Failed {
                        failed: with(failed, rebuilding),
                    }
                }
            }
            ArrayState::Failed { failed } => ArrayState::Failed {
                failed: with(failed, member),
            },
        };
        self.state = next;
        !self.is_failed()
    }

    /// `member` (failed) has a new store: start rebuilding it over `total` units.
    pub fn start_rebuild(&mut self, member: MemberIndex, total: u64) -> Result<(), String> {
        match &self.state {
            ArrayState::Degraded { failed } if failed.contains(&member) => {
                let failed = failed.iter().copied().filter(|&m| m != member).collect();
                self.state = if total == 0 {
                    after_rebuild(failed)
                } else {
                    ArrayState::Rebuilding {
                        member,
                        cursor: 0,
                        total,
                        failed,
                    }
                };
                Ok(())
            }
            state => Err(state.to_string()),
        }
    }

    /// Assembly of an array whose `member` was being rebuilt and had reached `cursor`
    /// of `total` units (a persisted rebuild cursor): the same as `member_failed`,
    /// `start_rebuild` and `advance_rebuild(cursor)` in a row, so the rebuild resumes
    /// instead of starting over. Returns whether the array is still usable.
    pub fn resume_rebuild(
        &mut self,
        member: MemberIndex,
        cursor: u64,
        total: u64,
        survives: impl Fn(&[MemberIndex]) -> bool,
    ) -> bool {
        if !self.member_failed(member, survives) {
            return false;
        }
        if self.start_rebuild(member, total).is_ok() {
            self.advance_rebuild(cursor.min(total));
        }
        true
    }

    /// The rebuild has written every unit below `cursor`.
    pub fn advance_rebuild(&mut self, new_cursor: u64) {
        if let ArrayState::Rebuilding {
            cursor,
            total,
            failed,
            ..
        } = &mut self.state
        {
            debug_assert!(new_cursor >= *cursor && new_cursor <= *total);
            *cursor = new_cursor;
            if new_cursor >= *total {
                let failed = std::mem::take(failed);
                self.state = after_rebuild(failed);
            }
        }
    }

    pub fn rebuild_progress(&self) -> Option<f64> {
        match self.state {
            ArrayState::Rebuilding { cursor, total, .. } => Some(cursor as f64 / total as f64),
            _ => None,
        }
    }
}

fn with(mut failed: Vec<MemberIndex>, member: MemberIndex) -> Vec<MemberIndex> {
    if !failed.contains(&member) {
        failed.push(member);
        failed.sort_unstable();
    }
    failed
}

fn degrade(failed: Vec<MemberIndex>, survives: &impl Fn(&[MemberIndex]) -> bool) -> ArrayState {
    if survives(&failed) {
        ArrayState::Degraded { failed }
    } else {
        ArrayState::Failed { failed }
    }
}

fn after_rebuild(failed: Vec<MemberIndex>) -> ArrayState {
    if failed.is_empty() {
        ArrayState::Healthy
    } else {
        ArrayState::Degraded { failed }
    }
}
