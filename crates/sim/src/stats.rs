//! Statistics: response-time summaries, DiskSim-style histograms and the demerit
//! figure. OWNER: engine helper.

/// Demerit (Ruemmler & Wilkes) in ms between two response-time samples, computed
/// as DiskSim's `rms` tool does (see ../shared/reference/disksim-notes.md §5).
pub fn demerit_ms(measured_ms: &[f64], simulated_ms: &[f64]) -> f64 {
    let _ = (measured_ms, simulated_ms);
    todo!("engine helper")
}
