//! Feeds arbitrary bytes (decoded lossily) to the parser: it must return, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = spinstack_param::parse_str(std::path::Path::new("fuzz/input.parv"), &text);
});
