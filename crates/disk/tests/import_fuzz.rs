//! Property test: `load_parv` returns `Ok` or `Err` — never panics — when any one
//! file of a real DiskSim parameter set (`.parv`, `.diskspecs`, `.model`, `.seek`)
//! is damaged: random byte edits, plus value swaps that put negative, huge,
//! fractional and word values where numbers belong, so the importer's checks (not
//! just the parser's) are exercised. The real files are copied once to a scratch
//! directory (never into the repository) and each case damages one file and
//! restores it. On failure proptest prints the minimal failing case and records
//! its seed in `proptest-regressions/`. Skips when the data folder is absent.

use proptest::prelude::*;
use spinstack_disk::import::load_parv;
use std::path::PathBuf;
use std::sync::OnceLock;

struct Scratch {
    dir: PathBuf,
    /// (file name, original bytes) for every file of the parameter sets.
    files: Vec<(String, Vec<u8>)>,
    /// Top files.
    parvs: Vec<String>,
}

fn scratch() -> Option<&'static Scratch> {
    static SCRATCH: OnceLock<Option<Scratch>> = OnceLock::new();
    SCRATCH
        .get_or_init(|| {
            let src = spinstack_testdata::disksim("params", "mutate the DiskSim parameter sets")?;
            let entries =
                std::fs::read_dir(&src).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
            let dir =
                std::env::temp_dir().join(format!("spinstack-import-fuzz-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let mut files = Vec::new();
            for path in entries.flatten().map(|e| e.path()) {
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                let bytes = std::fs::read(&path).unwrap();
                std::fs::write(dir.join(&name), &bytes).unwrap();
                files.push((name, bytes));
            }
            files.sort();
            let parvs = files
                .iter()
                .filter(|(n, _)| n.ends_with(".parv"))
                .map(|(n, _)| n.clone())
                .collect();
            Some(Scratch { dir, files, parvs })
        })
        .as_ref()
}

/// One edit: (operation, position, length, choice).
type Mutation = (u8, usize, usize, u8);

const BYTES: &[u8] = b"{}[],=;:.#\n -0123456789x";
const VALUES: &[&str] = &[
    "-1",
    "0",
    "1",
    "2",
    "99999999999",
    "9223372036854775807",
    "-9223372036854775808",
    "1.5",
    "-0.5",
    "1.0e+400",
    "0x7fffffff",
    "word",
    "[ ]",
    "[ 1, 2 ]",
    "dm_disk { }",
    "4",
    "10",
    "5",
];

fn mutate(mut bytes: Vec<u8>, edits: &[Mutation]) -> Vec<u8> {
    for &(op, at, len, choice) in edits {
        if bytes.is_empty() {
            break;
        }
        let at = at % bytes.len();
        let end = (at + len % 48).min(bytes.len());
        match op % 4 {
            0 => bytes[at] = BYTES[choice as usize % BYTES.len()],
            1 => {
                bytes.drain(at..end);
            }
            2 => bytes.truncate(at.max(1)),
            _ => swap_value(&mut bytes, at, VALUES[choice as usize % VALUES.len()]),
        }
    }
    bytes
}

/// Replace the value after the first `=` at or after `at` (up to `,`, `}` or newline).
fn swap_value(bytes: &mut Vec<u8>, at: usize, value: &str) {
    let Some(eq) = bytes[at..]
        .iter()
        .position(|&b| b == b'=')
        .map(|p| at + p + 1)
    else {
        return;
    };
    let end = bytes[eq..]
        .iter()
        .position(|&b| matches!(b, b',' | b'}' | b'\n'))
        .map_or(bytes.len(), |p| eq + p);
    bytes.splice(eq..end, format!(" {value}").into_bytes());
}

/// Case count: `PROPTEST_CASES` when set (for long runs), else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(384), ..ProptestConfig::default() })]

    #[test]
    fn damaged_parameter_sets_never_panic(
        top in any::<prop::sample::Index>(),
        target in any::<prop::sample::Index>(),
        edits in prop::collection::vec((any::<u8>(), any::<usize>(), any::<usize>(), any::<u8>()), 1..6),
    ) {
        let Some(s) = scratch() else { return Ok(()) };
        let parv = &s.parvs[top.index(s.parvs.len())];
        let stem = parv.trim_end_matches(".parv");
        // Damage one file of this drive's set (in valid/ all its names start with the stem).
        let family: Vec<&(String, Vec<u8>)> = s.files.iter().filter(|(n, _)| n.starts_with(stem)).collect();
        let (name, original) = family[target.index(family.len())];
        let path = s.dir.join(name);
        std::fs::write(&path, mutate(original.clone(), &edits)).unwrap();
        let result = std::panic::catch_unwind(|| load_parv(&s.dir.join(parv)));
        std::fs::write(&path, original).unwrap();
        prop_assert!(result.is_ok(), "load_parv panicked on damaged {name}");
    }
}
