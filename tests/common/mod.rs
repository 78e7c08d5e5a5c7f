//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The project's shared data folder (`../shared/data` beside the repository, or the folder named
/// by `BOARDWATCH_SHARED`/`data`). Corpus tests are `#[ignore]`d and run by `make corpus`; they
/// print a note and pass when the folder is missing (a user's clone has no `../shared`).
pub fn shared_data() -> Option<PathBuf> {
    let root = match std::env::var_os("BOARDWATCH_SHARED") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"),
    };
    let data = root.join("data");
    if data.is_dir() {
        Some(data)
    } else {
        eprintln!("note: {} not found; corpus test skipped", data.display());
        None
    }
}

/// A file from the repository's own `samples/` or `tests/data/`.
pub fn repo_file(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

/// A file's text as a caller hands it over: bytes converted lossily (Latin-1 archives exist).
pub fn load_lossy(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The squares where two 8x8 grids of letters differ: (row, col, letter in `read`, letter in
/// `truth`).
pub fn grid_differences(read: &[String], truth: &[String]) -> Vec<(usize, usize, char, char)> {
    let mut out = Vec::new();
    for r in 0..8 {
        for c in 0..8 {
            let (a, b) = (read[r].as_bytes()[c] as char, truth[r].as_bytes()[c] as char);
            if a != b {
                out.push((r, c, a, b));
            }
        }
    }
    out
}
