//! The RAID-5 stripe cache as far as timing needs it: which stripes are held
//! (at most `capacity`, least recently used out first) and which members' units of
//! each are known whole in memory, so a later write need not read them again.

use crate::map::MemberIndex;
use std::collections::{BTreeMap, HashMap};

pub(super) struct StripeCache {
    capacity: u32,
    /// Stripe -> (known members as a bit set, last use).
    stripes: HashMap<u64, (u64, u64)>,
    /// Last use -> stripe, for eviction.
    by_use: BTreeMap<u64, u64>,
    clock: u64,
}

impl StripeCache {
    pub(super) fn new(capacity: u32) -> StripeCache {
        StripeCache {
            capacity,
            stripes: HashMap::new(),
            by_use: BTreeMap::new(),
            clock: 0,
        }
    }

    /// Whether `member`'s unit of `stripe` is known whole.
    pub(super) fn knows(&self, stripe: u64, member: MemberIndex) -> bool {
        member.0 < 64
            && self
                .stripes
                .get(&stripe)
                .is_some_and(|&(known, _)| known & (1 << member.0) != 0)
    }

    /// `member`'s unit of `stripe` is now known whole (it was read or written).
    pub(super) fn learn(&mut self, stripe: u64, member: MemberIndex) {
        if self.capacity == 0 || member.0 >= 64 {
            return;
        }
        self.clock += 1;
        let stamp = self.clock;
        let known = match self.stripes.get(&stripe) {
            Some(&(known, old)) => {
                self.by_use.remove(&old);
                known
            }
            None => {
                if self.stripes.len() as u32 >= self.capacity {
                    if let Some((_, victim)) = self.by_use.pop_first() {
                        self.stripes.remove(&victim);
                    }
                }
                0
            }
        };
        self.stripes.insert(stripe, (known | 1 << member.0, stamp));
        self.by_use.insert(stamp, stripe);
        debug_assert!(self.stripes.len() as u32 <= self.capacity);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Proves the cache remembers units per stripe and evicts the least recently
    // used stripe when full.
    #[test]
    fn lru_of_stripes() {
        let mut cache = StripeCache::new(2);
        cache.learn(1, MemberIndex(0));
        cache.learn(2, MemberIndex(3));
        cache.learn(1, MemberIndex(2));
        assert!(cache.knows(1, MemberIndex(0)) && cache.knows(1, MemberIndex(2)));
        cache.learn(3, MemberIndex(1));
        assert!(
            !cache.knows(2, MemberIndex(3)),
            "stripe 2 was least recently used"
        );
        assert!(cache.knows(1, MemberIndex(0)) && cache.knows(3, MemberIndex(1)));
    }
}
