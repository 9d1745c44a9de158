//! A reference executor: a parity array over bytes (one byte per sector) that runs
//! read and write plans as the real-bytes RAID will, checking as it goes that a plan
//! never touches the failed member, reads everything its parity formulas need, and
//! writes exactly the request and the new parity.

use crate::common::Rng;
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_volume::map::plan::{
    plan_read, plan_write, stripe_segments, ParityMethod, ParityRun, ReadOptions, ReadPurpose,
    WriteKind, WritePlan,
};
use spinstack_volume::map::{MemberIndex, ParityLayout, Role, StripeRange};
use std::cell::RefCell;
use std::collections::HashMap;

/// A parity array over bytes (one byte per sector) that runs plans as the real-bytes
/// RAID will, and a shadow copy of the volume's logical contents to judge them by.
pub struct ByteArray<'a> {
    pub layout: &'a dyn ParityLayout,
    pub members: Vec<Vec<u8>>,
    pub volume: Vec<u8>,
    pub failed: Option<MemberIndex>,
}

impl<'a> ByteArray<'a> {
    /// Random volume contents, consistent parity, random bytes in every unused sector.
    pub fn new(layout: &'a dyn ParityLayout, member_sizes: &[u64], rng: &mut Rng) -> Self {
        let mut members: Vec<Vec<u8>> = member_sizes
            .iter()
            .map(|&s| (0..s).map(|_| rng.next() as u8).collect())
            .collect();
        let volume: Vec<u8> = (0..layout.capacity().0).map(|_| rng.next() as u8).collect();
        for stripe in 0..layout.stripes() {
            let parity = layout.parity_member(stripe);
            let p = layout.unit(stripe, parity);
            for i in 0..p.used.0 {
                members[parity.index()][(p.start.0 + i) as usize] = 0;
            }
            let mut base = layout.stripe_start(stripe).0;
            for d in 0..layout.members() - 1 {
                let member = layout.data_member(stripe, d);
                let unit = layout.unit(stripe, member);
                for i in 0..unit.used.0 {
                    let byte = volume[(base + i) as usize];
                    members[member.index()][(unit.start.0 + i) as usize] = byte;
                    members[parity.index()][(p.start.0 + i) as usize] ^= byte;
                }
                base += unit.used.0;
            }
        }
        ByteArray {
            layout,
            members,
            volume,
            failed: None,
        }
    }

    /// Live data equals the shadow volume; live parity equals the XOR of the logical
    /// data (the failed member's included, as the shadow has it).
    pub fn check_consistent(&self) -> Result<(), String> {
        let layout = self.layout;
        for stripe in 0..layout.stripes() {
            let parity = layout.parity_member(stripe);
            let p = layout.unit(stripe, parity);
            let mut xor = vec![0u8; p.used.0 as usize];
            let mut base = layout.stripe_start(stripe).0;
            for d in 0..layout.members() - 1 {
                let member = layout.data_member(stripe, d);
                let unit = layout.unit(stripe, member);
                for i in 0..unit.used.0 {
                    let logical = self.volume[(base + i) as usize];
                    xor[i as usize] ^= logical;
                    let stored = self.members[member.index()][(unit.start.0 + i) as usize];
                    if Some(member) != self.failed && stored != logical {
                        return Err(format!(
                            "stripe {stripe}: {member} data offset {i} is stale"
                        ));
                    }
                }
                base += unit.used.0;
            }
            if Some(parity) != self.failed {
                let stored = &self.members[parity.index()]
                    [p.start.0 as usize..(p.start.0 + p.used.0) as usize];
                if stored != xor.as_slice() {
                    return Err(format!(
                        "stripe {stripe}: parity {stored:?} != XOR of data {xor:?}"
                    ));
                }
            }
        }
        Ok(())
    }

    /// Reads through a read plan, as the real-bytes RAID will.
    pub fn read(
        &self,
        lbn: Lbn,
        sectors: Sectors,
        options: ReadOptions,
    ) -> Result<Vec<u8>, String> {
        let plan = plan_read(self.layout, lbn, sectors, self.failed, options)
            .map_err(|e| e.to_string())?;
        let mut out = vec![0u8; sectors.0 as usize];
        let mut covered: Vec<Vec<bool>> = plan
            .reads
            .iter()
            .map(|r| vec![false; r.sectors.0 as usize])
            .collect();
        for read in &plan.reads {
            if Some(read.member) == self.failed {
                return Err(format!("plan reads the failed {}", read.member));
            }
        }
        for piece in &plan.lost {
            if Some(piece.extent.member) != self.failed {
                return Err(format!("lost piece on live {}", piece.extent.member));
            }
        }
        for use_ in &plan.uses {
            let read = plan.reads[use_.read];
            if use_.skip.0 + use_.sectors.0 > read.sectors.0 || use_.sectors.0 == 0 {
                return Err(format!("use {use_:?} outside read {read:?}"));
            }
            for i in 0..use_.sectors.0 {
                let at = use_.skip.0 + i;
                covered[use_.read][at as usize] = true;
                let byte = self.members[read.member.index()][(read.lbn.0 + at) as usize];
                match use_.purpose {
                    ReadPurpose::Data { volume_offset } => {
                        let expect = Role::Data(Lbn(lbn.0 + volume_offset.0 + i));
                        if self.layout.inverse(read.member, Lbn(read.lbn.0 + at)) != expect {
                            return Err(format!("data use {use_:?} reads the wrong sector"));
                        }
                        out[(volume_offset.0 + i) as usize] = byte;
                    }
                    ReadPurpose::Reconstruct { volume_offset } => {
                        out[(volume_offset.0 + i) as usize] ^= byte
                    }
                    ReadPurpose::FillIn | ReadPurpose::UnusedTail => {}
                }
            }
        }
        if let Some((r, _)) = covered.iter().enumerate().find(|(_, c)| c.contains(&false)) {
            return Err(format!(
                "read {:?} has sectors no use explains",
                plan.reads[r]
            ));
        }
        Ok(out)
    }

    /// Writes `data` at `lbn` through write plans; `cache_seed` decides which member
    /// extents the (imaginary) stripe cache holds.
    pub fn write(&mut self, lbn: Lbn, data: &[u8], cache_seed: u64) -> Result<(), String> {
        let segments: Vec<_> = stripe_segments(self.layout, lbn, Sectors(data.len() as u64))
            .map_err(|e| e.to_string())?
            .collect();
        for segment in segments {
            let new = &data[segment.volume_offset.0 as usize..][..segment.range.sectors.0 as usize];
            self.write_stripe(segment.stripe, segment.range.start.0, new, cache_seed)?;
            let start = (lbn.0 + segment.volume_offset.0) as usize;
            self.volume[start..start + new.len()].copy_from_slice(new);
        }
        Ok(())
    }

    fn write_stripe(
        &mut self,
        stripe: u64,
        start: u64,
        new: &[u8],
        cache_seed: u64,
    ) -> Result<(), String> {
        let layout = self.layout;
        let queries = RefCell::new(Vec::new());
        let cached = |member: MemberIndex, lbn: Lbn, sectors: Sectors| {
            let hit = cache_seed.is_multiple_of(3)
                && Rng::new(cache_seed ^ lbn.0 ^ (u64::from(member.0) << 40))
                    .next()
                    .is_multiple_of(2);
            queries.borrow_mut().push((member, lbn, sectors, hit));
            hit
        };
        let range = StripeRange {
            start: Sectors(start),
            sectors: Sectors(new.len() as u64),
        };
        let plan =
            plan_write(layout, stripe, range, self.failed, &cached).map_err(|e| e.to_string())?;
        // What the executor knows of the old contents: what it read, and what the cache held.
        let mut known: HashMap<(u32, u64), u8> = HashMap::new();
        for read in &plan.reads {
            if Some(read.member) == self.failed {
                return Err(format!("plan reads the failed {}", read.member));
            }
            for l in read.lbn.0..read.end().0 {
                known.insert(
                    (read.member.0, l),
                    self.members[read.member.index()][l as usize],
                );
            }
        }
        for &(member, lbn, sectors, hit) in queries.borrow().iter() {
            if Some(member) == self.failed {
                return Err(format!("plan asks the cache about the failed {member}"));
            }
            for l in (lbn.0..lbn.0 + sectors.0).filter(|_| hit) {
                known.insert((member.0, l), self.members[member.index()][l as usize]);
            }
        }
        let new_parity = self.new_parity(stripe, start, new, &plan.parity_runs, &known)?;
        self.apply_writes(stripe, start, new, &plan, &new_parity)?;
        if plan.kind == WriteKind::FullStripe && !plan.reads.is_empty() {
            return Err("a full-stripe write read something".into());
        }
        Ok(())
    }

    /// The new value of `member`'s unit offset `offset` if the write covers it.
    fn new_byte(
        &self,
        stripe: u64,
        start: u64,
        new: &[u8],
        member: MemberIndex,
        offset: u64,
    ) -> Option<u8> {
        let unit = self.layout.unit(stripe, member);
        let Role::Data(volume) = self.layout.inverse(member, Lbn(unit.start.0 + offset)) else {
            return None;
        };
        let in_stripe = volume.0 - self.layout.stripe_start(stripe).0;
        (start..start + new.len() as u64)
            .contains(&in_stripe)
            .then(|| new[(in_stripe - start) as usize])
    }

    /// New parity per unit offset, by each run's formula, from known old contents only.
    fn new_parity(
        &self,
        stripe: u64,
        start: u64,
        new: &[u8],
        runs: &[ParityRun],
        known: &HashMap<(u32, u64), u8>,
    ) -> Result<HashMap<u64, u8>, String> {
        let layout = self.layout;
        let parity = layout.parity_member(stripe);
        let old = |member: MemberIndex, offset: u64| {
            let lbn = layout.unit(stripe, member).start.0 + offset;
            known.get(&(member.0, lbn)).copied().ok_or_else(|| {
                format!("stripe {stripe}: parity needs old {member} offset {offset}, unknown")
            })
        };
        let mut out = HashMap::new();
        for run in runs {
            for o in run.start.0..run.start.0 + run.sectors.0 {
                let mut p = match run.method {
                    ParityMethod::ReadModifyWrite => old(parity, o)?,
                    ParityMethod::ReconstructWrite => 0,
                };
                for d in 0..layout.members() - 1 {
                    let member = layout.data_member(stripe, d);
                    if layout.unit(stripe, member).used.0 <= o {
                        continue;
                    }
                    let new_byte = self.new_byte(stripe, start, new, member, o);
                    p ^= match (run.method, new_byte) {
                        (ParityMethod::ReadModifyWrite, Some(b)) => old(member, o)? ^ b,
                        (ParityMethod::ReadModifyWrite, None) => 0,
                        (ParityMethod::ReconstructWrite, Some(b)) => b,
                        (ParityMethod::ReconstructWrite, None) => old(member, o)?,
                    };
                }
                if out.insert(o, p).is_some() {
                    return Err(format!("parity offset {o} in two runs"));
                }
            }
        }
        Ok(out)
    }

    fn apply_writes(
        &mut self,
        stripe: u64,
        start: u64,
        new: &[u8],
        plan: &WritePlan,
        new_parity: &HashMap<u64, u8>,
    ) -> Result<(), String> {
        let parity = self.layout.parity_member(stripe);
        let parity_start = self.layout.unit(stripe, parity).start.0;
        let (mut data_written, mut parity_written) = (0u64, 0u64);
        for write in &plan.writes {
            if Some(write.member) == self.failed {
                return Err(format!("plan writes the failed {}", write.member));
            }
            for l in write.lbn.0..write.end().0 {
                let unit_start = self.layout.unit(stripe, write.member).start.0;
                let byte = if write.member == parity {
                    parity_written += 1;
                    *new_parity
                        .get(&(l - parity_start))
                        .ok_or("parity write without a run")?
                } else {
                    data_written += 1;
                    self.new_byte(stripe, start, new, write.member, l - unit_start)
                        .ok_or_else(|| format!("data write {write:?} outside the request"))?
                };
                self.members[write.member.index()][l as usize] = byte;
            }
        }
        let live_new: u64 = (0..new.len() as u64)
            .filter(|&i| {
                let volume = Lbn(self.layout.stripe_start(stripe).0 + start + i);
                Some(self.layout.locate(volume).unwrap().0) != self.failed
            })
            .count() as u64;
        if data_written != live_new || parity_written != new_parity.len() as u64 {
            return Err(format!(
                "wrote {data_written} data (want {live_new}) and {parity_written} parity (want {})",
                new_parity.len()
            ));
        }
        Ok(())
    }
}
