//! Fuzzes the drive-TOML path end to end (proptest): every catalog drive's TOML
//! with one number replaced by a hostile value (zero, negative, huge, fractional
//! where an integer is due, NaN, infinity) either is rejected with an error naming
//! the file, or builds a drive that serves a short random workload — never a
//! panic, never a hang (the workload is bounded by event count).

use proptest::prelude::*;
use spinstack_disk::catalog;
use spinstack_disk::drive::{Drive, DriveOptions};
use spinstack_sim::device::BlockDevice;
use spinstack_sim::driver::{run_closed_loop, RequestSpec};
use spinstack_sim::engine::{Engine, EngineOptions};
use spinstack_sim::request::Operation;
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors};

const HOSTILE: &[&str] = &[
    "0",
    "-1",
    "1",
    "0.0",
    "-0.5",
    "1e300",
    "-1e300",
    "4294967297",
    "18446744073709551615",
    "9223372036854775807",
    "nan",
    "inf",
    "-inf",
    "0.0001",
    "3.5",
];

/// Byte ranges of the numbers in `text` outside comments.
fn number_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let code = line.split('#').next().unwrap_or("");
        let bytes = code.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let starts = bytes[i].is_ascii_digit()
                && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'));
            if starts {
                let end = (i..bytes.len())
                    .find(|&j| !(bytes[j].is_ascii_digit() || b".eE_+-".contains(&bytes[j])))
                    .unwrap_or(bytes.len());
                spans.push((offset + i, offset + end));
                i = end;
            } else {
                i += 1;
            }
        }
        offset += line.len();
    }
    spans
}

/// Serve 40 random requests in a closed loop through the engine.
fn exercise(drive: &mut Drive, seed: u64) {
    let capacity = drive.capacity().0;
    let mut state = seed | 1;
    let mut left = 40u32;
    let mut source = |_| {
        left = left.checked_sub(1)?;
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let lbn = state % capacity.max(1);
        let sectors = (1 + state % 64).min(capacity - lbn);
        Some(RequestSpec {
            operation: if state.is_multiple_of(3) {
                Operation::Write
            } else {
                Operation::Read
            },
            lbn: Lbn(lbn),
            sectors: Sectors(sectors),
            think_after: Nanoseconds::ZERO,
        })
    };
    let mut engine = Engine::new(EngineOptions::default());
    engine.add_device(drive);
    run_closed_loop(&mut engine, 1, &mut source, |_| {}).expect("in-range requests are served");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn hostile_numbers_in_drive_toml_never_panic(
        drive_index in 0usize..64,
        span_choice in any::<prop::sample::Index>(),
        value in prop::sample::select(HOSTILE),
        seed in any::<u64>(),
    ) {
        let names = catalog::names();
        let name = names[drive_index % names.len()];
        let text = catalog::source_text(name).expect("embedded text");
        let spans = number_spans(text);
        let (start, end) = spans[span_choice.index(spans.len())];
        let mutated = format!("{}{}{}", &text[..start], value, &text[end..]);
        match catalog::parse_toml("fuzz.toml", &mutated) {
            Err(error) => prop_assert!(error.to_string().contains("fuzz.toml"), "{}", error),
            Ok(spec) => {
                if let Ok(mut drive) = Drive::new(&spec, DriveOptions::default()) {
                    exercise(&mut drive, seed);
                }
            }
        }
    }
}

/// Replace the first assignment of `key` in atlas10k's TOML with `value`.
fn atlas10k_with(key: &str, value: &str) -> String {
    let text = catalog::source_text("atlas10k").expect("embedded text");
    let start = text.find(&format!("{key} = ")).expect("key present") + key.len() + 3;
    let end = start + text[start..].find('\n').expect("line end");
    format!("{}{}{}", &text[..start], value, &text[end..])
}

/// Proves the range rule on times: a negative bus time (the value that once
/// panicked inside the bus pipeline) and a NaN head switch are errors naming the
/// file, the line and the field, while a negative write settle — which DiskSim's
/// dec_rz26 and hp_c2490a really use — is accepted.
#[test]
fn out_of_range_times_are_named_errors_and_negative_settle_is_allowed() {
    for (key, value) in [
        ("bus_sector_transfer_ms", "-0.5"),
        ("head_switch_ms", "nan"),
    ] {
        let error = catalog::parse_toml("bad.toml", &atlas10k_with(key, value))
            .expect_err("out of range")
            .to_string();
        assert!(
            error.starts_with("bad.toml: line ") && error.contains(key),
            "{error}"
        );
    }
    let settle = atlas10k_with("write_settle_ms", "-0.483");
    assert!(catalog::parse_toml("settle.toml", &settle).is_ok());
}
