//! Unit tests of the timing extractor's statistics and calibration arithmetic.
//! The extractor as a whole is tested against fresh layouts in
//! `tests/timing_properties.rs` and against the catalog in `tests/catalog.rs`.

use super::calibration::Calibration;
use super::statistics::{median, robust_circular_mean, robust_sigma, wrap_half};

const REVOLUTION: f64 = 1_000.0;

/// The median takes the middle value of an odd count and the mean of the two
/// middle values of an even one, whatever the input order.
#[test]
fn median_of_odd_and_even_counts() {
    assert_eq!(median(&mut [5.0, 1.0, 3.0]), 3.0);
    assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
}

/// One wild sample (a host stall) barely moves the robust deviation, where it
/// would dominate a standard deviation.
#[test]
fn robust_sigma_ignores_one_stall() {
    let quiet = [10.0, 11.0, 12.0, 13.0, 14.0, 12.0, 11.0];
    let mut stalled = quiet.to_vec();
    stalled.push(1e9);
    let (calm, spoiled) = (robust_sigma(&quiet), robust_sigma(&stalled));
    assert!(calm > 0.0 && calm < 3.0, "calm sigma {calm}");
    assert!(
        spoiled < 2.0 * calm,
        "one stall moved sigma {calm} -> {spoiled}"
    );
}

/// Angles fold into (−R/2, R/2]: three quarters of a turn is a quarter turn
/// back, and exactly half a turn stays half a turn forward.
#[test]
fn wrap_half_folds_into_half_open_range() {
    assert_eq!(wrap_half(0.75 * REVOLUTION, REVOLUTION), -0.25 * REVOLUTION);
    assert_eq!(wrap_half(0.5 * REVOLUTION, REVOLUTION), 0.5 * REVOLUTION);
    assert_eq!(
        wrap_half(-0.25 * REVOLUTION, REVOLUTION),
        -0.25 * REVOLUTION
    );
    assert_eq!(wrap_half(2.25 * REVOLUTION, REVOLUTION), 0.25 * REVOLUTION);
}

/// Samples straddling the wrap (just below a turn and just above zero) average
/// to the wrap point, not to half a turn as a plain mean would.
#[test]
fn circular_mean_across_the_wrap() {
    let samples = [999.0, 1.0, 0.0, 998.0, 2.0];
    let (mean, agreed) = robust_circular_mean(&samples, REVOLUTION, 10.0).unwrap();
    assert_eq!(agreed, 5);
    assert!(
        mean.min(REVOLUTION - mean) < 1e-9,
        "mean {mean} is not at the wrap"
    );
}

/// Without a two-thirds majority agreeing with the median there is no mean;
/// with one, the outlier is left out.
#[test]
fn circular_mean_needs_a_majority() {
    assert_eq!(
        robust_circular_mean(&[0.0, 400.0, 200.0], REVOLUTION, 1.0),
        None
    );
    let (mean, agreed) = robust_circular_mean(&[100.0, 102.0, 400.0], REVOLUTION, 1.0).unwrap();
    assert_eq!((mean, agreed), (101.0, 2));
    assert_eq!(robust_circular_mean(&[], REVOLUTION, 1.0), None);
}

/// The gap a crossing must clear is the largest of a 64th of a revolution,
/// eight noise deviations and one and a half same-track δ.
#[test]
fn gap_is_the_largest_of_its_three_floors() {
    let calibration = Calibration {
        revolution_ns: 6_400.0,
        sample_sigma_ns: 5.0,
        same_delta_ns: 20.0,
        threshold_ns: 0.0,
    };
    assert_eq!(calibration.gap_for(20.0), 100.0); // revolution / 64
    assert_eq!(calibration.gap_for(200.0), 300.0); // 1.5 × same-track δ
    let noisy = Calibration {
        sample_sigma_ns: 50.0,
        ..calibration
    };
    assert_eq!(noisy.gap_for(20.0), 400.0); // 8 σ
}
