//! Readings of the five real photos in `samples/photos` (crops of the b3nny01-checkersvision
//! set, MIT, with corrected labels): the board is found in each, the squares are read as
//! labelled, with the built-in palette and after calibrating on the start position, and the
//! readings map to board coordinates.

mod common;

use std::collections::BTreeMap;

use boardwatch::vision::source::read_image;
use boardwatch::vision::*;
use opencv::core::Mat;
use opencv::prelude::*;

const PHOTOS: [&str; 5] = ["Image_005", "Image_010", "Image_013", "Image_022", "Image_024"];
/// A known misread: an empty dark square under glare streaks (a wrinkled cover) that the
/// wooden palette takes for a dark man. It may be read either way; every other square must
/// be right.
const KNOWN: [(&str, usize, usize); 1] = [("Image_010", 2, 0)];
/// Squares of Image_022 and Image_024 the learnt square model may read wrong (of 128) after
/// calibrating on Image_013: what it reads on this held-apart session (BENCHMARKS.md).
const MAX_LEARNT_MISREADS: usize = 1;
/// The standard start position in board coordinates (row 0 = Black's edge).
const START: [&str; 8] = [".b.b.b.b", "b.b.b.b.", ".b.b.b.b", "........", "........", "w.w.w.w.", ".w.w.w.w", "w.w.w.w."];

fn labels() -> BTreeMap<String, Vec<String>> {
    let text = std::fs::read_to_string(common::repo_file("samples/photos/labels.json")).expect("labels.json");
    let v: BTreeMap<String, serde_json::Value> = serde_json::from_str(&text).expect("labels.json parses");
    v.into_iter()
        .filter(|(k, _)| !k.starts_with('_'))
        .map(|(k, g)| (k, g.as_array().unwrap().iter().map(|r| r.as_str().unwrap().to_string()).collect()))
        .collect()
}

fn photo(name: &str) -> Mat {
    read_image(&common::repo_file(&format!("samples/photos/{name}.jpg"))).expect("sample photo")
}

/// Misread squares, known ones excluded.
fn misreads(name: &str, got: &[String], want: &[String]) -> Vec<(usize, usize, char, char)> {
    let mut v = Vec::new();
    for r in 0..8 {
        for c in 0..8 {
            let (g, w) = (got[r].as_bytes()[c] as char, want[r].as_bytes()[c] as char);
            if g != w && !KNOWN.contains(&(name, r, c)) {
                v.push((r, c, w, g));
            }
        }
    }
    v
}

#[test]
fn sample_photos_are_read_as_labelled_with_the_builtin_palette() {
    let labels = labels();
    let palette = ColourModel::wooden().unwrap();
    for name in PHOTOS {
        let img = photo(name);
        let d = detect(&img, None, &palette).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(d.location.score >= locate::ACCEPT_SCORE, "{name}: weak board score {}", d.location.score);
        let bad = misreads(name, &d.grid, &labels[name]);
        assert!(bad.is_empty(), "{name}: misread (r, c, truth, read) {bad:?}");
        // Corners are ordered TL, TR, BR, BL as they appear.
        let c = d.corners;
        assert!(c[0][0] < c[1][0] && c[3][0] < c[2][0] && c[0][1] < c[3][1] && c[1][1] < c[2][1], "{name}: corner order {c:?}");
    }
}

#[test]
fn start_positions_give_the_orientation_and_map_to_board_coordinates() {
    let palette = ColourModel::wooden().unwrap();
    // Two lighting sessions; the board lies turned differently in them (top-left square dark
    // in the first, light in the second), White's men on the left in both.
    for (name, top_left_dark) in [("Image_013", true), ("Image_024", false)] {
        let d = detect(&photo(name), None, &palette).unwrap();
        assert_eq!(d.orientation.top_left_dark, top_left_dark, "{name}");
        assert_eq!(d.orientation.white_home, Some(Side::Left), "{name}");
        assert_eq!(d.orientation.white_home_confidence, 1.0, "{name}");
        let frame = BoardFrame::from_orientation(&d.orientation).unwrap();
        // With a light square in the players' near-left corner the columns are mirrored so that
        // the playing squares stay at row + col odd.
        assert_eq!(frame.mirrored(), !top_left_dark, "{name}");
        let view = to_board_coordinates(&d.reading, &frame, true, 0.0);
        assert_eq!(view.rows(), START, "{name}");
        for r in 0..8 {
            for c in 0..8 {
                let p = view.probs[r][c];
                let total: f32 = p.iter().sum::<f32>() + view.unknown[r][c];
                assert!((total - 1.0).abs() < 1e-3, "{name} ({r},{c}): probabilities sum to {total}");
                // The view's order is the project's: . b w B W.
                let best = (0..5).max_by(|&a, &b| p[a].total_cmp(&p[b])).unwrap();
                assert_eq!(".bwBW".as_bytes()[best] as char, view.grid[r][c], "{name} ({r},{c})");
            }
        }
    }
}

#[test]
fn calibrating_on_a_start_position_reads_every_sample() {
    let labels = labels();
    let base = ColourModel::wooden().unwrap();
    let (cal, _) = Calibration::from_image(&photo("Image_013"), &base, None, "Image_013").unwrap();
    assert_eq!(cal.white_home, Side::Left);
    assert!(cal.top_left_dark);
    // Through a file and back.
    let tmp = tempfile::Builder::new().prefix("boardwatch-cal-").tempdir().unwrap();
    let path = tmp.path().join("cal.json");
    cal.save(&path).unwrap();
    let cal = Calibration::load(&path).unwrap();
    for name in PHOTOS {
        let d = detect_calibrated(&photo(name), &cal).unwrap_or_else(|e| panic!("{name}: {e}"));
        let bad = misreads(name, &d.grid, &labels[name]);
        assert!(bad.is_empty(), "{name} (calibrated): misread {bad:?}");
        assert_eq!(d.orientation.white_home, Some(Side::Left), "{name}");
    }
    // Not a start position: refused.
    assert!(Calibration::from_image(&photo("Image_010"), &base, None, "Image_010").is_err());
}

/// The learnt square model on a session it never saw (the photos of game 2, Image_013-027,
/// are held apart from its training): calibrated on the start photo, through a file and back,
/// it reads the session's other photos as labelled.
#[test]
fn the_learnt_square_model_reads_a_session_it_never_saw() {
    let labels = labels();
    let base = ColourModel::wooden().unwrap();
    let mut model = SquareModel::builtin().unwrap();
    let trained = model.head().clone();
    let (cal, _) = Calibration::from_image_with(&photo("Image_013"), &base, None, "Image_013", Some(&mut model)).unwrap();
    let head = cal.square_head.clone().expect("the calibration keeps the session's head");
    assert_ne!(head, trained, "the start position fine-tuned the head");
    let tmp = tempfile::Builder::new().prefix("boardwatch-cal-learnt-").tempdir().unwrap();
    let path = tmp.path().join("cal.json");
    cal.save(&path).unwrap();
    let cal = Calibration::load(&path).unwrap();
    assert_eq!(cal.square_head.as_ref(), Some(&head));
    let chosen = cal.square_model.clone().expect("the calibration names the network its start chose");
    // A fresh model: the network and its head come from the file.
    let mut model = SquareModel::builtin().unwrap();
    model.use_calibration(&cal).unwrap();
    assert_eq!(model.chosen_network(), Some(chosen.as_str()));
    assert_eq!(model.head(), &head);
    let mut wrong = Vec::new();
    for name in ["Image_022", "Image_024"] {
        let d = detect_calibrated_with(&photo(name), &cal, Some(&mut model)).unwrap_or_else(|e| panic!("{name}: {e}"));
        wrong.extend(misreads(name, &d.grid, &labels[name]).into_iter().map(|m| format!("{name} {m:?}")));
    }
    assert!(wrong.len() <= MAX_LEARNT_MISREADS, "{wrong:?}");
}

#[test]
fn a_still_start_position_becomes_stable_and_self_calibrates() {
    let img = photo("Image_024");
    let mut w = Watcher::new(ColourModel::wooden().unwrap(), WatchConfig::default()).unwrap();
    let mut first_stable = None;
    for i in 0..10 {
        let t = i as f64 / 15.0;
        let r = w.process(&img, t).unwrap();
        let view = r.view.expect("orientation known from the start position");
        assert_eq!(view.rows(), START, "frame {i}");
        if r.stability.stable && first_stable.is_none() {
            first_stable = Some(t);
        }
        assert!(!r.stability.hand, "frame {i}: nothing moves");
    }
    // Stable once the still time has passed (at the first frame after it), not before.
    let still = StabilityConfig::default().still_secs;
    let t = first_stable.expect("became stable");
    assert!((still - 0.01..still + 1.0 / 15.0 + 0.01).contains(&t), "stable at {t}, still time {still}");
    assert!(w.is_calibrated());
    let cal = w.learnt_calibration().unwrap();
    assert!(!cal.top_left_dark);
    assert_eq!(cal.white_home, Side::Left);
}

#[test]
fn overlay_shows_the_board() {
    let img = photo("Image_005");
    let d = detect(&img, None, &ColourModel::wooden().unwrap()).unwrap();
    let pic = draw_overlay(&img, &d.location, Some(&d.reading), 600).unwrap();
    assert_eq!(pic.cols().max(pic.rows()), 600);
    assert_eq!(pic.channels(), 3);
}

#[test]
fn the_example_calibration_loads_and_reads_its_photo() {
    let cal = Calibration::load(&common::repo_file("calibration/example-wooden.json")).expect("example calibration");
    assert_eq!(cal.base_palette, "wooden");
    let d = detect_calibrated(&photo("Image_013"), &cal).unwrap();
    assert_eq!(d.location.method, LocateMethod::Tracked, "its corners are this photo's");
    let frame = BoardFrame::from_orientation(&d.orientation).unwrap();
    assert_eq!(to_board_coordinates(&d.reading, &frame, true, 0.0).rows(), START);
}
