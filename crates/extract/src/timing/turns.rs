//! Reads that look for an extra turn: a boundary whose angle looks like
//! same-track spacing hides from the chains (their angles are reduced modulo a
//! revolution), but the head cannot switch in one slot's passage, so a read
//! across it travels about a turn more. The span read sees that where the host
//! link keeps up with the media; the tile reads stand in where it does not.

use super::boundary_test::Tester;
use super::statistics::INLIER_SIGMAS;
use super::Phase;
use crate::probe::{Probe, ProbeError};
use spinstack_sim::units::{Lbn, Sectors};

impl<P: Probe + ?Sized> Tester<'_, P> {
    /// Does reading `sectors` from `start` cross a boundary? A read within one
    /// track travels less than a revolution from the end of `start` to the end of
    /// its last sector, exactly the angle between the two; a read that switches
    /// tracks on the way travels that angle plus whole revolutions once the switch
    /// and the sectors after it pass a full turn. Majority of three trials.
    ///
    /// The angle is measured unwrapped, as two halves (start to middle, middle to
    /// last), each reduced modulo a revolution: a whole track's angle is a slot
    /// short of a revolution, and one number reduced modulo a revolution would
    /// wrap to nearly zero under the host's jitter (30 µs against a 10 µs slot on
    /// a 15,000 RPM drive) and look like an extra turn; each half stays near half
    /// a turn, far from either wrap.
    ///
    /// The test measures media travel only when the host link keeps up with the
    /// media: where one more sector costs the host more than twice a sector's
    /// passage (the Atlas 10K's 0.099 ms bus sector against 0.018 ms on the
    /// platter), a long read ends when its bytes reach the host, and the test
    /// says nothing (None).
    pub(super) fn span_crosses(
        &mut self,
        start: Lbn,
        sectors: Sectors,
    ) -> Result<Option<bool>, ProbeError> {
        self.phase = Phase::Span;
        let revolution = self.calibration.revolution_ns;
        if self.link_is_slow(sectors.0) || sectors.0 < 3 {
            return Ok(None);
        }
        let last = Lbn(start.0 + sectors.0 - 1);
        let middle = Lbn(start.0 + (sectors.0 - 1) / 2);
        let mut votes = 0;
        for _ in 0..3 {
            let first_alone = self.completion(start, Sectors(1))?;
            let whole = self.completion(start, sectors)?;
            let travelled = whole - first_alone - revolution;
            let again = self.completion(start, Sectors(1))?;
            let middle_alone = self.completion(middle, Sectors(1))?;
            let last_alone = self.completion(last, Sectors(1))?;
            let angle = (middle_alone - again).rem_euclid(revolution)
                + (last_alone - middle_alone).rem_euclid(revolution);
            if travelled - angle > revolution / 2.0 {
                votes += 1;
            }
        }
        Ok(Some(votes >= 2))
    }

    /// Where one more sector costs the host more than twice a sector's passage on
    /// a track of `sectors`: a long read ends when its bytes reach the host.
    pub(super) fn link_is_slow(&self, sectors: u64) -> bool {
        let sector_passage = self.calibration.revolution_ns / sectors.max(1) as f64;
        self.calibration.same_delta_ns > 2.0 * sector_passage
    }

    /// Does some read inside [start, end) travel an extra turn? The
    /// slow-link stand-in for the span read: a boundary whose angle looks like
    /// same-track spacing (a zone change after a short zone-end track) is one
    /// the head cannot make in a slot's passage, so a read across it waits a
    /// turn (or its angle is nearly one), which the chains, reduced modulo a
    /// turn, cannot see. Short reads ("tiles", overlapping by one LBN so that
    /// every pair lies in one) stay short enough for the link not to hide the
    /// turn: a tile of n sectors after a read of its first alone ends one turn
    /// plus (n − 1) same-track δ later, at most a third of a turn, or about a
    /// turn later than that across such a boundary. Tiles start at `resume`
    /// (not before `start`). Returns the first tile (from, to) that travelled
    /// the extra turn; None on a link that keeps up (the span read covers it)
    /// or where no tile did.
    pub(super) fn extra_turn(
        &mut self,
        (start, resume): (Lbn, Lbn),
        end: Lbn,
    ) -> Result<Option<(Lbn, Lbn)>, ProbeError> {
        let (start, resume, end) = (start.0, resume.0, end.0);
        let sectors = end - start;
        if sectors <= 2 {
            return Ok(None);
        }
        if !self.link_is_slow(sectors) {
            // Where the link keeps up, one span read covers the whole track.
            if resume > start {
                return Ok(None);
            }
            let crosses = self.span_crosses(Lbn(start), Sectors(sectors))?;
            return Ok((crosses == Some(true)).then_some((Lbn(start), Lbn(end - 1))));
        }
        self.phase = Phase::Tiles;
        let c = self.calibration;
        let revolution = c.revolution_ns;
        let slot = self.local_slot_ns.max(revolution / sectors as f64);
        let per_sector = self.local_same(slot);
        let step = ((revolution / 3.0 / per_sector) as u64).max(1);
        let mut from = resume.max(start);
        while from + 1 < end {
            let to = (from + step).min(end - 1);
            let predicted = (to - from) as f64 * per_sector;
            let across = revolution - c.gap_for(per_sector) - 2.0 * slot;
            let threshold = (predicted + across) / 2.0;
            // A stall on the single read's side shortens the tile; retry those.
            for _ in 0..3 {
                let alone = self.completion(Lbn(from), Sectors(1))?;
                let tile = self.completion(Lbn(from), Sectors(to - from + 1))?;
                let travelled = tile - alone - revolution;
                if travelled > threshold {
                    return Ok(Some((Lbn(from), Lbn(to))));
                }
                if travelled > predicted - INLIER_SIGMAS * c.sample_sigma_ns {
                    break;
                }
            }
            from = to;
        }
        Ok(None)
    }
}
