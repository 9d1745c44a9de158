//! Helpers shared by the integration tests: scratch directories and deterministic
//! filler bytes.
#![allow(dead_code)] // each test binary uses its own subset

use spinstack_sim::rng::SplitMix64;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A fresh directory under `std::env::temp_dir()`, removed on drop.
pub struct ScratchDir {
    path: PathBuf,
}

impl ScratchDir {
    /// The name joins the label, the process id, a per-process counter and the clock,
    /// so parallel tests and concurrent runs never share a directory.
    pub fn new(label: &str) -> ScratchDir {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let path = std::env::temp_dir().join(format!(
            "spinstack-store-{label}-{}-{}-{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&path).expect("create scratch directory");
        ScratchDir { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// `len` bytes that depend on `seed` and on the position (the workspace's seeded
/// generator's byte stream).
pub fn pattern(seed: u64, len: usize) -> Vec<u8> {
    let mut bytes = vec![0; len];
    SplitMix64::new(seed).fill_bytes(&mut bytes);
    bytes
}
