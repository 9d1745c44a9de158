//! The secondary's normalized power and its inverse: what the data drives must
//! average for a target (dr-power-highend's evidence for a miss) gives back the
//! target when put through `normalized_power`, for any storage mix and watts.

use proptest::prelude::*;
use spinstack_replication::energy::{aware_data_watts_for, normalized_power, StorageConfiguration};

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn aware_watts_for_a_target_round_trip(
        data_share in 0.05f64..0.99,
        aware in 0.0f64..50.0,
        conventional in 0.1f64..50.0,
        log in 0.0f64..50.0,
    ) {
        let mix = StorageConfiguration { data_drives: 100, log_drives: 10, data_share };
        let normalized = normalized_power(&mix, aware, conventional, log);
        let back = aware_data_watts_for(&mix, normalized, conventional, log);
        prop_assert!((back - aware).abs() <= 1e-9 * (1.0 + aware), "{back} vs {aware}");
    }
}

// Proves the inverse on the paper's mix with numbers worked by hand: data
// drives at 4.15 W against 34.96 W conventional, log drives at 25.9 W, give
// 0.1558 (84.4% saved, dr-power-highend's W = 160 ceiling); 80% saved needs
// the data drives at 5.763 W.
#[test]
fn the_paper_mix_needs_5_76_watts_for_80_percent() {
    let mix = spinstack_replication::energy::P5_595;
    let normalized = normalized_power(&mix, 4.15, 34.96, 25.9);
    assert!((normalized - 0.1558).abs() < 5e-4, "{normalized}");
    let needed = aware_data_watts_for(&mix, 0.2, 34.96, 25.9);
    assert!((needed - 5.763).abs() < 1e-3, "{needed}");
}
