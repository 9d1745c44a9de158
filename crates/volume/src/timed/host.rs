//! What one device I/O costs the host, and the host CPU that pays it.
//!
//! The DMA-aligned-buffer paper's point (its §3) is that every device I/O costs the
//! host a fixed amount of work — building the DMA descriptor table, writing the
//! controller's registers, taking the completion interrupt — so many small device
//! I/Os are expensive however fast the disk answers them. We model that as a CPU
//! cost per device I/O, fixed plus per KiB, paid on one host CPU before the request
//! reaches the member (device I/Os are set up one after another).
//!
//! **Figures.** The DAB paper's host is a 700 MHz Celeron under Windows 2000 (its
//! Table 2). Its reference 12, Chung, Gray, Worthington and Horst, "Windows 2000
//! Disk IO Performance" (MSR-TR-2000-55), Table 11, measured on a 733 MHz Pentium
//! III: an unbuffered sequential IO costs 50 µs fixed + 0.5 µs per KB of CPU (the
//! whole path to the device and back), a buffered one (served from the file
//! cache's memory, a copy) 12 µs + 6 µs per KB. We use the first as the cost of a
//! device I/O and the second as the cost of a request served from a buffer in
//! memory (`HostCost::windows2000_buffered`).

use spinstack_sim::units::{Nanoseconds, Sectors};

/// CPU time of one I/O: `fixed + per_kib × KiB`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HostCost {
    pub fixed: Nanoseconds,
    pub per_kib: Nanoseconds,
}

impl HostCost {
    /// No host cost (a layer whose requests are not device I/Os).
    pub const NONE: HostCost = HostCost {
        fixed: Nanoseconds(0),
        per_kib: Nanoseconds(0),
    };

    /// A device I/O on the DAB paper's class of host: 50 µs + 0.5 µs/KB (Chung et
    /// al. 2000, Table 11, unbuffered sequential IO, 733 MHz Pentium III).
    pub fn windows2000_device_io() -> HostCost {
        HostCost {
            fixed: Nanoseconds::from_us(50),
            per_kib: Nanoseconds(500),
        }
    }

    /// A request served from memory with a copy on the same host: 12 µs + 6 µs/KB
    /// (Chung et al. 2000, Table 11, buffered sequential IO).
    pub fn windows2000_buffered() -> HostCost {
        HostCost {
            fixed: Nanoseconds::from_us(12),
            per_kib: Nanoseconds::from_us(6),
        }
    }

    /// The cost of an I/O of `sectors`.
    pub fn of(self, sectors: Sectors) -> Nanoseconds {
        // Two sectors per KiB; rounded up to whole nanoseconds.
        Nanoseconds(self.fixed.0 + (self.per_kib.0 * sectors.0).div_ceil(2))
    }
}

/// One host CPU that sets device I/Os up one after another.
#[derive(Clone, Copy, Debug, Default)]
pub struct HostCpu {
    cost: HostCost,
    free_at: Nanoseconds,
    busy: Nanoseconds,
}

impl HostCpu {
    pub fn new(cost: HostCost) -> HostCpu {
        HostCpu {
            cost,
            free_at: Nanoseconds::ZERO,
            busy: Nanoseconds::ZERO,
        }
    }

    pub fn cost(&self) -> HostCost {
        self.cost
    }

    /// Run an I/O of `sectors` from `now` (after the CPU's earlier work); returns
    /// when it is done, i.e. when the I/O reaches the device.
    pub fn run(&mut self, now: Nanoseconds, sectors: Sectors) -> Nanoseconds {
        let cost = self.cost.of(sectors);
        let start = self.free_at.max(now);
        self.free_at = start + cost;
        self.busy += cost;
        self.free_at
    }

    /// CPU time spent so far.
    pub fn busy(&self) -> Nanoseconds {
        self.busy
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Proves the cost formula and that the CPU serialises I/Os: two I/Os at the
    // same instant finish one cost apart.
    #[test]
    fn costs_add_up_and_serialise() {
        let cost = HostCost::windows2000_device_io();
        assert_eq!(cost.of(Sectors(8)), Nanoseconds(52_000));
        let mut cpu = HostCpu::new(cost);
        assert_eq!(cpu.run(Nanoseconds(0), Sectors(2)), Nanoseconds(50_500));
        assert_eq!(cpu.run(Nanoseconds(0), Sectors(2)), Nanoseconds(101_000));
        assert_eq!(
            cpu.run(Nanoseconds(200_000), Sectors(0)),
            Nanoseconds(250_000)
        );
        assert_eq!(cpu.busy(), Nanoseconds(151_000));
    }
}
