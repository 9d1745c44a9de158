//! # spinstack-testdata: the one way tests reach DiskSim's validation data
//!
//! **What it models.** Where DiskSim's validation files are (`shared/disksim` beside the
//! workspace: parameter sets and traces, read in place and never copied into the
//! project), and what a test that needs them does when they are absent. Every such
//! test asks [`disksim`] for its folder; that is the only place the path is written.
//!
//! **Invariants.** [`disksim`] returns `Some(path)` only for a path that exists. When
//! it is absent the test skips *visibly*: one line `SKIP: <what> because <path> is
//! absent` on standard error (shown by `cargo test -- --nocapture`, and with the
//! failure output of a failing test). When the environment variable
//! [`REQUIRE_VARIABLE`] (`SPINSTACK_REQUIRE_DISKSIM`) is set, an absent path is a
//! failure instead: `.ci/run` sets it wherever `../shared/disksim` exists, so a test
//! that would skip there (a wrong path, a renamed folder) fails CI rather than
//! counting as passed.
//!
//! [`mutation`] is the byte mutator the parsers' never-panic properties share.
//!
//! **What it does not do.** Read or parse the files, or decide anything about other
//! tools a test may need (the NBD and fio tests use `SPINSTACK_REQUIRE_TOOLS`).

pub mod mutation;

use std::path::{Path, PathBuf};

/// Set (to anything) where the DiskSim data must be present: tests fail, not skip.
pub const REQUIRE_VARIABLE: &str = "SPINSTACK_REQUIRE_DISKSIM";

/// `shared/disksim` beside the workspace (this crate lives at `<workspace>/crates/testdata`).
pub fn disksim_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let beside_workspace = manifest
        .ancestors()
        .nth(3)
        .expect("the crate sits three levels below the folder holding the workspace");
    beside_workspace.join("shared").join("disksim")
}

/// `relative` (e.g. `params`, `traces`) under the DiskSim folder, for a test that
/// would do `what` with it (said in the SKIP line). `None` after a SKIP line when it
/// is absent; panics instead when [`REQUIRE_VARIABLE`] is set.
pub fn disksim(relative: &str, what: &str) -> Option<PathBuf> {
    let required = std::env::var_os(REQUIRE_VARIABLE).is_some();
    match locate(&disksim_root().join(relative), what, required) {
        Ok(found) => found,
        Err(message) => panic!("{message}"),
    }
}

/// The decision of [`disksim`] for `path`, apart from the environment: `Ok(Some)` when
/// present, `Ok(None)` after printing the SKIP line, `Err` (the failure message) when
/// absent but `required`.
pub fn locate(path: &Path, what: &str, required: bool) -> Result<Option<PathBuf>, String> {
    if path.exists() {
        return Ok(Some(path.to_path_buf()));
    }
    if required {
        return Err(format!(
            "cannot {what}: {} is absent, and {REQUIRE_VARIABLE} is set (.ci/run sets it \
             where ../shared/disksim exists), so this test may not skip",
            path.display()
        ));
    }
    eprintln!(
        "SKIP: not able to {what} because {} is absent (set {REQUIRE_VARIABLE}=1 to make \
         this a failure)",
        path.display()
    );
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Guards issue 12 §2 "tests that need ../shared/disksim return early and count as
    // passed": with the requirement set, an absent folder is an error naming the
    // variable, not a skip; without it, a skip (None); a present path is returned.
    #[test]
    fn absent_data_fails_only_when_required() {
        let scratch = std::env::temp_dir().join(format!(
            "spinstack-testdata-{}-absent/params",
            std::process::id()
        ));
        let error = locate(&scratch, "parse the parameter sets", true).unwrap_err();
        assert!(error.contains(REQUIRE_VARIABLE), "{error}");
        assert!(error.contains("parse the parameter sets"), "{error}");
        assert_eq!(locate(&scratch, "parse", false), Ok(None));
        let here = Path::new(env!("CARGO_MANIFEST_DIR"));
        assert_eq!(locate(here, "read", true), Ok(Some(here.to_path_buf())));
    }

    /// Every `.rs` file under `directory`, recursively.
    fn rust_files(directory: &Path, found: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(directory) else {
            return;
        };
        for path in entries.flatten().map(|e| e.path()) {
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "target") {
                    rust_files(&path, found);
                }
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.push(path);
            }
        }
    }

    // Guards the same defect from the other side: no test, bench or source file of the
    // workspace builds the path to the DiskSim folder itself (each used to, with its
    // own silent early return); they all go through `disksim`, so the SKIP line and the
    // CI requirement hold for every one.
    #[test]
    fn every_disksim_user_goes_through_this_crate() {
        let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut files = Vec::new();
        rust_files(&crates, &mut files);
        assert!(files.len() > 50, "found only {} .rs files", files.len());
        let this_crate = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let own_path: Vec<String> = files
            .iter()
            .filter(|path| !path.starts_with(&this_crate))
            .filter(|path| {
                let text = std::fs::read_to_string(path).unwrap_or_default();
                text.contains(&["../../../shared", "/disksim"].concat())
            })
            .map(|path| path.display().to_string())
            .collect();
        assert!(
            own_path.is_empty(),
            "these files reach shared/disksim themselves; use spinstack_testdata::disksim: {own_path:#?}"
        );
    }

    // Proves the root is the folder beside the workspace, as `.ci/run` tests for.
    #[test]
    fn root_is_beside_the_workspace() {
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let workspace = workspace.canonicalize().unwrap();
        let beside = workspace.parent().unwrap().join("shared").join("disksim");
        assert_eq!(disksim_root(), beside);
    }
}
