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

/// The largest distance of a found corner from the true one, in squares (the side of the
/// playing area there over 8). Which corner is called top-left is a convention (a board turned
/// 45 degrees has two candidates), so the found corners are matched to the true ones the way
/// round that fits them best.
pub fn corner_error(found: &[[f32; 2]; 4], real: &[[f64; 2]; 4]) -> f64 {
    let error = |shift: usize| {
        (0..4)
            .map(|k| {
                let r = |j: usize| real[(k + shift + j) % 4];
                let (at, next, prev) = (r(0), r(1), r(3));
                let square = 0.5 * ((next[0] - at[0]).hypot(next[1] - at[1]) + (prev[0] - at[0]).hypot(prev[1] - at[1])) / 8.0;
                (found[k][0] as f64 - at[0]).hypot(found[k][1] as f64 - at[1]) / square
            })
            .fold(0.0, f64::max)
    };
    (0..4).map(error).fold(f64::MAX, f64::min)
}
