//! Property tests: the parser returns `Ok` or `Err` — never panics, never hangs —
//! for arbitrary text, for token soup drawn from the grammar's alphabet, and for
//! random byte mutations of DiskSim's real parameter files (whose `source`
//! includes then resolve against the real folder). On failure proptest prints the
//! minimal failing input and records its seed in `proptest-regressions/`.

use proptest::prelude::*;
use spinstack_param::parse_str;
use spinstack_testdata::mutation::Mutator;
use std::path::{Path, PathBuf};

/// The real top-level and included files, if present (read once).
fn real_files() -> &'static [(PathBuf, Vec<u8>)] {
    static FILES: std::sync::OnceLock<Vec<(PathBuf, Vec<u8>)>> = std::sync::OnceLock::new();
    FILES.get_or_init(read_real_files)
}

fn read_real_files() -> Vec<(PathBuf, Vec<u8>)> {
    let Some(dir) = spinstack_testdata::disksim("params", "mutate the real parameter files") else {
        return Vec::new();
    };
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut files: Vec<(PathBuf, Vec<u8>)> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.extension()
                .is_some_and(|e| e == "parv" || e == "diskspecs" || e == "model")
        })
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    files.sort();
    files
}

/// One edit: (operation, position, length, byte).
/// Bytes that matter to the lexer, so mutations hit the grammar often.
const MUTATOR: Mutator = Mutator {
    interesting: b"{}[],=;?:.#\n -0123456789xe+abc\x00\xff",
    span_bytes_max: 64,
    oversized_numbers: false,
};

/// Case count: `PROPTEST_CASES` when set (for long runs), else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(512), ..ProptestConfig::default() })]

    // Any Unicode text.
    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        let _ = parse_str(Path::new("fuzz/input.parv"), &text);
    }

    // Token soup from the grammar's own alphabet reaches deep parser states.
    #[test]
    fn grammar_soup_never_panics(text in "([a-z0-9]{1,4}|[-{}\\[\\],=;?:#\n .]|\\.\\.|source|topology|instantiate|as|0x1f|1\\.5e\\+3){0,120}") {
        let _ = parse_str(Path::new("fuzz/input.parv"), &text);
    }

    // Random byte-level damage to each real file.
    #[test]
    fn mutated_real_files_never_panic(
        pick in any::<prop::sample::Index>(),
        edits in prop::collection::vec((any::<u8>(), any::<usize>(), any::<usize>(), any::<u8>()), 1..8),
    ) {
        let files = real_files();
        if files.is_empty() {
            return Ok(());
        }
        let (path, bytes) = &files[pick.index(files.len())];
        let damaged = MUTATOR.apply(bytes.clone(), &edits);
        let _ = parse_str(path, &String::from_utf8_lossy(&damaged));
    }
}
