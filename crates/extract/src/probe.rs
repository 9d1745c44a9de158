//! The probe interface: what an extractor may ask of a drive.
//!
//! The commands are the ones the papers use: READ CAPACITY, READ DEFECT LIST,
//! SEND/RECEIVE DIAGNOSTIC address translation (LBN → physical and back), the
//! caching mode page (read cache and prefetch off), and timed reads. A probe that
//! cannot answer a command says so with [`ProbeError::Unsupported`]; extractors
//! then fall back (SCSI translation → timing) or report that no structure was found.

use spinstack_disk::layout::{Pbn, SectorContent};
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors};

/// Which commands a probe answers. Asking first avoids issuing a command that a
/// real device would reject with a sense code.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// SEND/RECEIVE DIAGNOSTIC translate-address page (0x40).
    pub translate: bool,
    /// READ DEFECT LIST (physical sector format).
    pub defect_list: bool,
    /// Reads whose issue and completion instants the probe measures.
    pub timed_reads: bool,
    /// The caching mode page may be changed (read cache and prefetch off).
    pub cache_control: bool,
}

/// The caching mode page settings the extraction papers change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheSetting {
    /// The drive's own settings (read cache and read-ahead as shipped).
    AsShipped,
    /// Read cache disabled (RCD=1) and prefetch off (DPTL=0), as both papers did.
    ReadCacheAndPrefetchOff,
}

/// One timed read as the host saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimedRead {
    pub issued: Nanoseconds,
    pub completed: Nanoseconds,
}

impl TimedRead {
    pub fn response(&self) -> Nanoseconds {
        self.completed.saturating_sub(self.issued)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("{probe}: {command} is not supported: {reason}")]
    Unsupported {
        probe: String,
        command: &'static str,
        reason: String,
    },
    #[error(
        "{probe}: {command} at {lbn} (+{sectors} sectors) is beyond the capacity of {capacity}"
    )]
    OutOfRange {
        probe: String,
        command: &'static str,
        lbn: Lbn,
        sectors: u64,
        capacity: Sectors,
    },
    #[error("{probe}: {command} failed: {detail}")]
    Failed {
        probe: String,
        command: &'static str,
        detail: String,
    },
}

impl ProbeError {
    pub fn is_unsupported(&self) -> bool {
        matches!(self, ProbeError::Unsupported { .. })
    }
}

/// A drive an extractor can question. Implementations: [`crate::sim_probe::SimulatedProbe`]
/// (a modelled drive in simulated time) and [`crate::device::DeviceProbe`] (a real
/// block device, read-only).
pub trait Probe {
    /// What the probe talks to, for messages and map headers.
    fn name(&self) -> String;
    fn capabilities(&self) -> Capabilities;
    /// READ CAPACITY: the number of LBNs the drive exports.
    fn read_capacity(&mut self) -> Result<Sectors, ProbeError>;
    /// READ DEFECT LIST: the physical addresses of known media defects.
    fn read_defect_list(&mut self) -> Result<Vec<Pbn>, ProbeError>;
    /// Translate an LBN to the physical sector that stores it.
    fn translate_lbn(&mut self, lbn: Lbn) -> Result<Pbn, ProbeError>;
    /// Translate a physical sector to what it holds.
    fn translate_pbn(&mut self, pbn: Pbn) -> Result<SectorContent, ProbeError>;
    /// Change the caching mode page.
    fn set_caching(&mut self, setting: CacheSetting) -> Result<(), ProbeError>;
    /// The probe's clock: simulated time, or a monotonic host clock for a real device.
    fn now(&self) -> Nanoseconds;
    /// Stay idle until `instant` (returns at once when it has passed).
    fn wait_until(&mut self, instant: Nanoseconds);
    /// Read `sectors` sectors from `lbn`, issued now; returns when the read completes.
    fn timed_read(&mut self, lbn: Lbn, sectors: Sectors) -> Result<TimedRead, ProbeError>;
}

/// Counts and remembers the address translations an algorithm asks for, so that
/// "translations per track" is measured in one place and a repeated question
/// costs nothing (a real tool would remember the answer too).
pub struct Translator<'a, P: Probe + ?Sized> {
    probe: &'a mut P,
    issued: u64,
    recent: std::collections::HashMap<Lbn, Pbn>,
}

/// The answers kept, bounded so that a walk over a whole drive stays small.
const TRANSLATION_MEMORY_BOUND: usize = 4096;

impl<'a, P: Probe + ?Sized> Translator<'a, P> {
    pub fn new(probe: &'a mut P) -> Self {
        Translator {
            probe,
            issued: 0,
            recent: std::collections::HashMap::new(),
        }
    }
    /// Translations sent to the drive so far.
    pub fn issued(&self) -> u64 {
        self.issued
    }
    pub fn probe(&mut self) -> &mut P {
        self.probe
    }
    pub fn lbn(&mut self, lbn: Lbn) -> Result<Pbn, ProbeError> {
        if let Some(pbn) = self.recent.get(&lbn) {
            return Ok(*pbn);
        }
        let pbn = self.probe.translate_lbn(lbn)?;
        self.issued += 1;
        if self.recent.len() >= TRANSLATION_MEMORY_BOUND {
            self.recent.clear();
        }
        self.recent.insert(lbn, pbn);
        assert!(self.recent.len() <= TRANSLATION_MEMORY_BOUND);
        Ok(pbn)
    }
    /// Physical → logical translations are counted with the others.
    pub fn pbn(&mut self, pbn: Pbn) -> Result<SectorContent, ProbeError> {
        self.issued += 1;
        self.probe.translate_pbn(pbn)
    }
}
