//! Corpus-wide vision checks over `../shared/data` (run by `make corpus`; `#[ignore]`d
//! otherwise):
//! * the 25 b3nny01-checkersvision photos: the board is found in every photo, and at most one
//!   square of all of them together is misread, with the built-in palette and after
//!   calibrating on one start-position photo (labels: tests/data, corrected);
//! * the same photos held apart: refitted on one game's photos, calibrated and scored on the
//!   other game's (the figure of 2026-11-27 guarded, the bar of 1 in 1,600 not reached yet);
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
    let (mut found, mut wrong_palette, mut wrong_calibrated) = (0, 0, 0);
    let mut report = Vec::new();
    for (name, truth) in &labels {
        let img = read_image(&dir.join(format!("{name}.jpg"))).unwrap();
        let Ok(d) = detect(&img, None, &palette) else {
            report.push(format!("{name}: no board"));
            continue;
        };
        found += 1;
        let dc = detect_calibrated(&img, &cal).unwrap();
        let (mp, mc) = (misreads(&d.grid, truth), misreads(&dc.grid, truth));
        let (p, c) = (mp.len(), mc.len());
        if p + c > 0 {
            report.push(format!("{name}: palette {mp:?}, calibrated {mc:?}"));
        }
        wrong_palette += p;
        wrong_calibrated += c;
    }
    eprintln!("photos: board found {found}/25, misread palette {wrong_palette}, calibrated {wrong_calibrated}; {report:?}");
    assert_eq!(found, 25, "{report:?}");
    assert!(wrong_palette <= 1, "palette: {wrong_palette} misread squares; {report:?}");
    assert!(wrong_calibrated <= 1, "calibrated: {wrong_calibrated} misread squares; {report:?}");
}

/// The photos held apart: the palette refitted on one game's photos alone (and their turns),
/// calibrated on a start photo of the other game, scores the other game's remaining photos; then
/// the other way round. No photo is scored by a model that saw it. Each photo is read as
/// `detect --calibration` reads it: the board followed from the calibration photo's corners and
/// lens. The product's bar is 1 misread square in 1,600; this guards the figure of 2026-11-27
/// (3 of 1,472: the curled glare of Image_010 read as a light man, and two knife-edge dark men of
/// Image_014 and Image_019), which is not there yet.
#[test]
#[ignore = "corpus: needs ../shared, run by make corpus"]
fn photos_held_apart_by_game() {
    let Some(dir) = photos_dir() else { return };
    let labels = photo_labels();
    let template = ColourModel::wooden().unwrap();
    let game_one = |name: &str| name.as_bytes()[6..].iter().take(3).fold(0, |n, d| n * 10 + (d - b'0') as u32) <= 11;
    let (mut scored, mut misread) = (0, 0);
    let mut report = Vec::new();
    for (fit_on_game_one, calibration_photo) in [(false, "Image_001"), (true, "Image_024")] {
        let mut samples = Vec::new();
        for (name, truth) in labels.iter().filter(|(name, _)| game_one(name) == fit_on_game_one) {
            let img = read_image(&dir.join(format!("{name}.jpg"))).unwrap();
            samples.extend(labelled_squares(&img, truth, template.piece_height).unwrap());
        }
        let fitted = ColourModel::fit(&template, &samples).unwrap();
        let start = read_image(&dir.join(format!("{calibration_photo}.jpg"))).unwrap();
        let (cal, _) = Calibration::from_image(&start, &fitted, None, calibration_photo).unwrap();
        for (name, truth) in labels.iter().filter(|(name, _)| game_one(name) != fit_on_game_one && name.as_str() != calibration_photo) {
            let img = read_image(&dir.join(format!("{name}.jpg"))).unwrap();
            let d = detect_calibrated(&img, &cal).unwrap_or_else(|e| panic!("{name}: {e}"));
            let wrong = misreads(&d.grid, truth);
            scored += 64;
            misread += wrong.len();
            if !wrong.is_empty() {
                report.push(format!("{name}: {wrong:?}"));
            }
        }
    }
    eprintln!("photos held apart: {misread} of {scored} squares misread; {report:?}");
    assert_eq!(scored, 23 * 64);
    assert!(misread <= 3, "{misread} of {scored} squares misread (3 on 2026-11-27); {report:?}");
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
