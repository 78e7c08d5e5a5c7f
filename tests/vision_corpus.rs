//! Corpus-wide vision checks over `../shared/data` (run by `make corpus`; `#[ignore]`d
//! otherwise):
//! * the 25 b3nny01-checkersvision photos: the board is found in every photo, and at most one
//!   square of all of them together is misread (`?` counted apart), with the built-in palette
//!   and after calibrating on one start-position photo (labels: tests/data, corrected);
//! * the same photos held apart: refitted on one game's photos, calibrated and scored on the
//!   other game's; and each photo left out in turn, refitted on the 24 others (the product's bar:
//!   at most 1 misread square in 1,600, no photo scored by a model that saw it);
//! * the ray-traced recording `acf7_seed_overhead.mp4` (four-colour palette): through the per-frame
//!   pipeline, every `start`/`ply-N` frame reads as the true position in board coordinates,
//!   and no frame with a hand over the board is handed on as stable, with and without
//!   self-calibration, also with the frames' colours cast as by another lamp.

mod common;

use std::collections::BTreeMap;

use boardwatch::vision::source::{read_image, FrameSource, VideoSource};
use boardwatch::vision::*;

fn photo_labels() -> BTreeMap<String, Vec<String>> {
    let text = std::fs::read_to_string(common::repo_file("tests/data/checkersvision_labels.json")).unwrap();
    let v: BTreeMap<String, serde_json::Value> = serde_json::from_str(&text).unwrap();
    v.into_iter()
        .filter(|(k, _)| !k.starts_with('_'))
        .map(|(k, g)| (k, g.as_array().unwrap().iter().map(|r| r.as_str().unwrap().to_string()).collect()))
        .collect()
}

/// The 25 photos in the shared data (`None` without `../shared`).
fn photos_dir() -> Option<std::path::PathBuf> {
    common::shared_data().map(|data| data.join("photos/b3nny01-checkersvision/v2"))
}

/// The misread squares as "(row,col) truth->read".
fn misreads(got: &[String], want: &[String]) -> Vec<String> {
    common::grid_differences(got, want).into_iter().map(|(r, c, g, w)| format!("({r},{c}) {w}->{g}")).collect()
}

#[test]
#[ignore = "corpus: needs ../shared, run by make corpus"]
fn all_photos_palette_and_calibrated() {
    let Some(dir) = photos_dir() else { return };
    let labels = photo_labels();
    assert_eq!(labels.len(), 25);
    let palette = ColourModel::wooden().unwrap();
    let (cal, _) = Calibration::from_image(&read_image(&dir.join("Image_013.jpg")).unwrap(), &palette, None, "Image_013").unwrap();
    // Squares misread and squares read `?`, with the palette and calibrated.
    let (mut found, mut palette_counts, mut calibrated_counts) = (0, (0, 0), (0, 0));
    let mut report = Vec::new();
    let count = |wrong: &[String], counts: &mut (usize, usize)| {
        let unknown = wrong.iter().filter(|w| w.ends_with('?')).count();
        *counts = (counts.0 + wrong.len() - unknown, counts.1 + unknown);
    };
    for (name, truth) in &labels {
        let img = read_image(&dir.join(format!("{name}.jpg"))).unwrap();
        let Ok(d) = detect(&img, None, &palette) else {
            report.push(format!("{name}: no board"));
            continue;
        };
        found += 1;
        let dc = detect_calibrated(&img, &cal).unwrap();
        let (mp, mc) = (misreads(&d.grid, truth), misreads(&dc.grid, truth));
        if !mp.is_empty() || !mc.is_empty() {
            report.push(format!("{name}: palette {mp:?}, calibrated {mc:?}"));
        }
        count(&mp, &mut palette_counts);
        count(&mc, &mut calibrated_counts);
    }
    eprintln!("photos: board found {found}/25, (misread, read ?) palette {palette_counts:?}, calibrated {calibrated_counts:?}; {report:?}");
    assert_eq!(found, 25, "{report:?}");
    // The figures of 2026-11-27: palette (0, 1), calibrated (1, 1): the glare of Image_010 read
    // `?`, and calibrated on game 2's start, an empty corner square of Image_011 read as a dark man.
    assert!(palette_counts.0 <= 1 && palette_counts.1 <= 1, "palette: {palette_counts:?}; {report:?}");
    assert!(calibrated_counts.0 <= 1 && calibrated_counts.1 <= 1, "calibrated: {calibrated_counts:?}; {report:?}");
}

/// Game 1 of the photos is Image_001..Image_011, game 2 the rest (another day and lamp).
fn game_one(name: &str) -> bool {
    name.trim_start_matches("Image_").parse::<u32>().unwrap() <= 11
}

/// The squares of photos held apart from a palette's fit: the palette refitted on the photos
/// `fit_on` says (and their turns; `samples` holds each photo's fitting samples), calibrated on
/// `calibration_photo`, reads each photo `scored` says as `detect --calibration` does (the board
/// followed from the calibration photo's corners and lens). Returns the squares scored, the
/// misread ones and those read `?` (counted apart), each as "photo (row,col) truth->read".
fn read_held_apart(
    dir: &std::path::Path,
    labels: &BTreeMap<String, Vec<String>>,
    samples: &BTreeMap<String, Vec<(SquareFeatures, bool, ColourClass)>>,
    fit_on: impl Fn(&str) -> bool,
    calibration_photo: &str,
    scored: impl Fn(&str) -> bool,
) -> HeldApart {
    let fitting: Vec<_> = samples.iter().filter(|(name, _)| fit_on(name)).flat_map(|(_, v)| v.iter().copied()).collect();
    let fitted = ColourModel::fit(&ColourModel::wooden().unwrap(), &fitting).unwrap();
    let start = read_image(&dir.join(format!("{calibration_photo}.jpg"))).unwrap();
    let (cal, _) = Calibration::from_image(&start, &fitted, None, calibration_photo).unwrap();
    let mut out = HeldApart::default();
    for (name, truth) in labels.iter().filter(|(name, _)| scored(name)) {
        assert!(!fit_on(name) && name != calibration_photo, "{name} would be scored by a model that saw it");
        let img = read_image(&dir.join(format!("{name}.jpg"))).unwrap();
        let d = detect_calibrated(&img, &cal).unwrap_or_else(|e| panic!("{name}: {e}"));
        out.scored += 64;
        for wrong in misreads(&d.grid, truth) {
            let into = if wrong.ends_with('?') { &mut out.unknown } else { &mut out.misread };
            into.push(format!("{name} {wrong}"));
        }
    }
    out
}

/// Squares of photos held apart: how many were scored, the misread ones and those read `?`.
#[derive(Default)]
struct HeldApart {
    scored: usize,
    misread: Vec<String>,
    unknown: Vec<String>,
}

impl HeldApart {
    fn add(&mut self, other: HeldApart) {
        self.scored += other.scored;
        self.misread.extend(other.misread);
        self.unknown.extend(other.unknown);
    }

    /// Every one of `photos` photos scored, at most one square misread (the bar: 1 in 1,600)
    /// and at most one read `?` (none on 2026-11-27).
    fn check(&self, what: &str, photos: usize) {
        let (scored, misread, unknown) = (self.scored, &self.misread, &self.unknown);
        eprintln!("{what}: {} of {scored} squares misread, {} read ?; {misread:?} {unknown:?}", misread.len(), unknown.len());
        assert_eq!(scored, photos * 64);
        assert!(misread.len() <= 1, "{what}: {} of {scored} squares misread; {misread:?}", misread.len());
        assert!(unknown.len() <= 1, "{what}: {} of {scored} squares read ?; {unknown:?}", unknown.len());
    }
}

/// Every labelled photo's fitting samples (the photo and its three turns).
fn photo_samples(dir: &std::path::Path, labels: &BTreeMap<String, Vec<String>>) -> BTreeMap<String, Vec<(SquareFeatures, bool, ColourClass)>> {
    let height = ColourModel::wooden().unwrap().piece_height;
    labels.iter().map(|(name, truth)| (name.clone(), labelled_squares(&read_image(&dir.join(format!("{name}.jpg"))).unwrap(), truth, height).unwrap())).collect()
}

/// The photos held apart by game: the palette refitted on one game's photos alone, calibrated on
/// a start photo of the other game, scores the other game's remaining photos; then the other way
/// round. This is a new session for the model: another day, lamp and camera position. Guards the
/// figure of 2026-11-27 (1 of 1,472: the curled glare of Image_010 read as a man).
#[test]
#[ignore = "corpus: needs ../shared, run by make corpus"]
fn photos_held_apart_by_game() {
    let Some(dir) = photos_dir() else { return };
    let labels = photo_labels();
    let samples = photo_samples(&dir, &labels);
    let mut total = HeldApart::default();
    for (fit_on_game_one, calibration_photo) in [(false, "Image_001"), (true, "Image_024")] {
        total.add(read_held_apart(&dir, &labels, &samples, |name| game_one(name) == fit_on_game_one, calibration_photo, |name| {
            game_one(name) != fit_on_game_one && name != calibration_photo
        }));
    }
    total.check("photos held apart by game", 23);
}

/// Each photo left out in turn: the palette refitted on the 24 others, calibrated on a start
/// photo of the left-out photo's game, reads the photo left out. Every photo is scored, each by
/// a model that did not see it: the product's bar of at most 1 misread square in 1,600.
#[test]
#[ignore = "corpus: needs ../shared, run by make corpus"]
fn photos_left_out_one_at_a_time() {
    let Some(dir) = photos_dir() else { return };
    let labels = photo_labels();
    let samples = photo_samples(&dir, &labels);
    let mut total = HeldApart::default();
    for left_out in labels.keys() {
        let calibration_photo = match (game_one(left_out), left_out.as_str()) {
            (true, "Image_001") => "Image_002",
            (true, _) => "Image_001",
            (false, "Image_024") => "Image_013",
            (false, _) => "Image_024",
        };
        total.add(read_held_apart(&dir, &labels, &samples, |name| name != left_out, calibration_photo, |name| name == left_out));
    }
    total.check("photos left out one at a time", 25);
}

/// Per-frame truth of the recording: labels, and grids (board coordinates) of still frames.
fn video_truth(path: &std::path::Path) -> (Vec<String>, Vec<Option<Vec<String>>>) {
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path.with_extension("truth.json")).unwrap()).unwrap();
    let strs = |x: &serde_json::Value| -> Vec<String> { x.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect() };
    let labels = strs(&v["frame_labels"]);
    let plies: Vec<Vec<String>> = v["plies"].as_array().unwrap().iter().map(|p| fen_grid(p["fen_after"].as_str().unwrap())).collect();
    let start = strs(&v["start_grid"]);
    let grids = labels
        .iter()
        .map(|l| {
            if l == "start" {
                Some(start.clone())
            } else {
                l.strip_prefix("ply-").map(|n| plies[n.parse::<usize>().unwrap()].clone())
            }
        })
        .collect();
    (labels, grids)
}

/// "W:W21,K22:B1,2" -> 8 strings, row 0 = Black's edge (squares 1-4 at columns 1, 3, 5, 7).
fn fen_grid(fen: &str) -> Vec<String> {
    let mut g = vec![vec!['.'; 8]; 8];
    for part in fen.split(':').skip(1) {
        let (side, list) = part.split_at(1);
        for sq in list.split(',').filter(|s| !s.is_empty()) {
            let (king, num) = sq.strip_prefix('K').map_or((false, sq), |n| (true, n));
            let n: usize = num.parse().unwrap();
            let (row, k) = ((n - 1) / 4, (n - 1) % 4);
            let col = if row % 2 == 0 { 2 * k + 1 } else { 2 * k };
            g[row][col] = match (side, king) {
                ("W", false) => 'w',
                ("W", true) => 'W',
                ("B", false) => 'b',
                _ => 'B',
            };
        }
    }
    g.into_iter().map(|r| r.into_iter().collect()).collect()
}

#[test]
fn fen_grid_numbers_squares_like_the_recording() {
    let g = fen_grid("W:W21,K32:B1,K12");
    assert_eq!(g[0], ".b......");
    assert_eq!(g[2], ".......B");
    assert_eq!(g[5], "w.......");
    assert_eq!(g[7], "......W.");
}

/// `cast`: multiply the B, G, R channels of every frame (another lamp, another camera's
/// white balance and exposure).
fn run_video(auto_calibrate: bool, cast: Option<[f64; 3]>) {
    let Some(data) = common::shared_data() else { return };
    let path = data.join("videos/acf7_seed_overhead.mp4");
    let (labels, grids) = video_truth(&path);
    let config = WatchConfig { auto_calibrate, ..Default::default() };
    let mut w = Watcher::new(ColourModel::four_colour().unwrap(), config).unwrap();
    let mut src = VideoSource::open_file(&path).unwrap();
    let (mut still, mut hands, mut stable, mut moving) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    while let Some(mut f) = src.next_frame().unwrap() {
        if let Some(k) = cast {
            let mut out = opencv::core::Mat::default();
            opencv::core::multiply(&f.image, &opencv::core::Scalar::new(k[0], k[1], k[2], 0.0), &mut out, 1.0, -1).unwrap();
            f.image = out;
        }
        let i = f.index as usize;
        let r = w.process(&f.image, f.t).unwrap();
        let label = &labels[i];
        if label.starts_with("hand") {
            hands += 1;
            if r.stability.stable {
                failures.push(format!("frame {i} ({label}) handed on as stable"));
            }
        }
        stable += r.stability.stable as usize;
        if let Some(truth) = &grids[i] {
            still += 1;
            match &r.view {
                Some(v) if &v.rows() == truth => {}
                Some(v) => failures.push(format!("frame {i} ({label}): read {:?}, true {truth:?}", v.rows())),
                // Frames that differ from the one before (the first after a hand) are not
                // read: nothing could be handed on from them.
                None if r.stability.moving_cells > 0 && !r.read => moving += 1,
                None => failures.push(format!("frame {i} ({label}): no reading in board coordinates")),
            }
        }
    }
    eprintln!(
        "video (self-calibration {auto_calibrate}, cast {cast:?}): {still} start/ply frames ({moving} of them moving, not read), {hands} hand frames, {stable} stable frames; calibrated {}",
        w.is_calibrated()
    );
    assert_eq!(labels.len(), 1425);
    assert!(still > 800 && hands > 300 && stable > 400);
    assert!(moving * 10 < still, "{moving} of {still} still frames not read");
    assert_eq!(w.is_calibrated(), auto_calibrate);
    assert!(failures.is_empty(), "{} failures: {:?}", failures.len(), &failures[..failures.len().min(10)]);
}

#[test]
#[ignore = "corpus: needs ../shared, run by make corpus"]
fn seed_recording_with_self_calibration() {
    run_video(true, None);
}

#[test]
#[ignore = "corpus: needs ../shared, run by make corpus"]
fn seed_recording_under_other_lamps() {
    // Warmer and brighter; colder and darker (no channel clips).
    run_video(true, Some([0.75, 0.9, 1.1]));
    run_video(false, Some([0.9, 0.75, 0.6]));
}

#[test]
#[ignore = "corpus: needs ../shared, run by make corpus"]
fn seed_recording_with_the_builtin_palette() {
    run_video(false, None);
}
