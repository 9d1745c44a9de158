//! A host elevator: the requests a host has issued but not yet sent to its
//! device, sent at most `depth` at a time, in the order Linux 2.6.16's
//! anticipatory scheduler picks reads: in ascending LBN order from where the
//! last one ended, wrapping to the lowest (one-way; its limited backward seeks
//! are left out), except that at most once per `read_expire` it looks at the
//! oldest request and, if that has waited `read_expire`, sends it next
//! (`as_fifo_expired` checks the FIFO only once per expiry period).
//!
//! Anticipation (idling for one process's next read) is not modelled. Below a
//! tagged queue it seldom holds anything back: the scheduler gives up waiting
//! for a process while that process still has a request at the device
//! (`as_can_break_anticipation` tests its dispatched count), and with many
//! requests out the one it last sent is nearly always still there. Over a
//! one-deep queue it would idle up to `antic_expire` (HZ/150) after a process's
//! last request; a caller choosing depth 1 leaves that out.
//!
//! | state | event | next |
//! |---|---|---|
//! | FIFO checked less than `read_expire` ago | the device has room | the lowest-LBN request at or after the sweep's position, else the lowest (wrap) |
//! | FIFO due for a check | the device has room | the oldest if it has waited `read_expire`, else as above; the check's time is noted |

use spinstack_sim::driver::Issue;
use spinstack_sim::units::{Lbn, Nanoseconds};

/// The elevator's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ElevatorConfig {
    /// A read older than this is sent next, when the FIFO is checked (at
    /// most once per this period).
    pub read_expire: Nanoseconds,
    /// Requests at the device at once.
    pub depth: u32,
}

impl ElevatorConfig {
    /// Linux 2.6.16's anticipatory scheduler for reads: `read_expire` =
    /// HZ/8 = 125 ms (block/as-iosched.c `default_read_expire`), `depth`
    /// requests at the device at once (the driver's queue depth: the caller
    /// names its source).
    pub fn linux26_reads(depth: u32) -> ElevatorConfig {
        ElevatorConfig {
            read_expire: Nanoseconds::from_ms(125),
            depth,
        }
    }
}

/// A request waiting in the elevator.
#[derive(Clone, Debug)]
pub struct Queued<T> {
    pub issue: Issue,
    pub arrival: Nanoseconds,
    pub tag: T,
}

/// See the module documentation.
#[derive(Clone, Debug)]
pub struct Elevator<T> {
    config: ElevatorConfig,
    /// In arrival order (the oldest first).
    queue: Vec<Queued<T>>,
    /// Where the last sent request ended.
    head: Lbn,
    /// When the FIFO was last checked.
    fifo_checked: Option<Nanoseconds>,
    outstanding: u32,
}

impl<T> Elevator<T> {
    pub fn new(config: ElevatorConfig) -> Elevator<T> {
        Elevator {
            config,
            queue: Vec::new(),
            head: Lbn(0),
            fifo_checked: None,
            outstanding: 0,
        }
    }

    /// Requests waiting (not yet sent).
    pub fn waiting(&self) -> usize {
        self.queue.len()
    }

    pub fn add(&mut self, issue: Issue, now: Nanoseconds, tag: T) {
        self.queue.push(Queued {
            issue,
            arrival: now,
            tag,
        });
    }

    /// A sent request completed.
    pub fn done(&mut self) {
        self.outstanding = self.outstanding.saturating_sub(1);
    }

    /// The next request to send at `now`, if the device has room.
    pub fn next(&mut self, now: Nanoseconds) -> Option<Queued<T>> {
        if self.queue.is_empty() || self.outstanding >= self.config.depth.max(1) {
            return None;
        }
        let check_due = self
            .fifo_checked
            .is_none_or(|at| at + self.config.read_expire <= now);
        let expired = check_due && {
            self.fifo_checked = Some(now);
            self.queue[0].arrival + self.config.read_expire <= now
        };
        let pick = if expired {
            0
        } else {
            self.lowest_from(self.head)
                .or_else(|| self.lowest_from(Lbn(0)))?
        };
        let request = self.queue.remove(pick);
        self.head = request.issue.lbn.offset(request.issue.sectors);
        self.outstanding += 1;
        Some(request)
    }

    /// The waiting request with the lowest LBN at or after `from`.
    fn lowest_from(&self, from: Lbn) -> Option<usize> {
        self.queue
            .iter()
            .enumerate()
            .filter(|(_, q)| q.issue.lbn >= from)
            .min_by_key(|(_, q)| q.issue.lbn)
            .map(|(index, _)| index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spinstack_sim::request::Operation;
    use spinstack_sim::units::Sectors;

    fn read(lbn: u64) -> Issue {
        Issue::new(Operation::Read, Lbn(lbn), Sectors(8))
    }

    // Proves the elevator sweeps upward from its position and wraps, one
    // request at a time, and that an expired request goes first when the FIFO
    // is due for its check, but not between checks.
    #[test]
    fn sweeps_up_wraps_and_serves_expired_requests_at_fifo_checks() {
        let config = ElevatorConfig {
            read_expire: Nanoseconds::from_ms(100),
            depth: 1,
        };
        let mut elevator = Elevator::new(config);
        for (lbn, tag) in [(500, 'a'), (100, 'b'), (300, 'c')] {
            elevator.add(read(lbn), Nanoseconds::ZERO, tag);
        }
        let ms = Nanoseconds::from_ms;
        assert_eq!(elevator.next(ms(1)).map(|q| q.tag), Some('b'));
        assert!(elevator.next(ms(1)).is_none(), "one at a time");
        elevator.done();
        assert_eq!(elevator.next(ms(1)).map(|q| q.tag), Some('c'));
        elevator.done();
        elevator.add(read(50), ms(1), 'd');
        assert_eq!(elevator.next(ms(1)).map(|q| q.tag), Some('a'));
        elevator.done();
        // Nothing above 508: wrap to the lowest.
        assert_eq!(elevator.next(ms(2)).map(|q| q.tag), Some('d'));
        elevator.done();
        // 'e' waits behind the sweep; expired at 150 ms but the FIFO was
        // checked at 1 ms, so the next check is due at 101 ms: at 150 ms it is
        // found expired and goes before 'f', which is ahead of the sweep.
        elevator.add(read(10), ms(2), 'e');
        elevator.add(read(900), ms(2), 'f');
        elevator.add(read(950), ms(2), 'g');
        assert_eq!(elevator.next(ms(50)).map(|q| q.tag), Some('f'));
        elevator.done();
        assert_eq!(elevator.next(ms(150)).map(|q| q.tag), Some('e'));
        elevator.done();
        // Checked at 150 ms: the next check is not due at 200 ms, so the
        // sweep goes on upward from where 'e' ended.
        elevator.add(read(20), ms(200), 'h');
        assert_eq!(elevator.next(ms(200)).map(|q| q.tag), Some('h'));
        assert_eq!(elevator.waiting(), 1);
    }
}
