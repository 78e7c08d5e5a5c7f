//! `boardwatch detect` and `boardwatch calibrate` as a user runs them.

mod common;

use std::process::Command;

fn boardwatch(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_boardwatch")).args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn detect_prints_json_and_writes_an_overlay() {
    let tmp = tempfile::Builder::new().prefix("boardwatch-overlay-").tempdir().unwrap();
    let overlay = tmp.path().join("overlay.png");
    let (ok, out, err) = boardwatch(&["detect", "samples/photos/Image_024.jpg", "--json", "--overlay", overlay.to_str().unwrap()]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["corners"].as_array().unwrap().len(), 4);
    assert_eq!(v["grid"][0], ".w...b.b");
    assert_eq!(v["orientation"]["white_home"], "Left");
    assert_eq!(v["orientation"]["top_left_dark"], false);
    assert_eq!(v["confidence"].as_array().unwrap().len(), 8);
    let pic = opencv::imgcodecs::imread(overlay.to_str().unwrap(), opencv::imgcodecs::IMREAD_COLOR).unwrap();
    use opencv::prelude::*;
    assert!(pic.cols() > 100);
}

#[test]
fn detect_says_when_there_is_no_board_or_no_image() {
    let (ok, _, err) = boardwatch(&["detect", "Cargo.toml"]);
    assert!(!ok && err.contains("Cargo.toml") && err.contains("not an image"), "{err}");
    let (ok, _, err) = boardwatch(&["detect", "no/such.jpg"]);
    assert!(!ok && err.contains("no/such.jpg"), "{err}");
    let (ok, _, err) = boardwatch(&["detect", "samples/photos/Image_013.jpg", "--palette", "no-such"]);
    assert!(!ok && err.contains("no-such"), "{err}");
    let (ok, _, err) = boardwatch(&["detect", "samples/photos/Image_013.jpg", "--corners", "1,2,3"]);
    assert!(!ok && err.contains("8 numbers"), "{err}");
}

#[test]
fn calibrate_writes_a_file_that_detect_uses() {
    let tmp = tempfile::Builder::new().prefix("boardwatch-cal-cli-").tempdir().unwrap();
    let cal = tmp.path().join("cal.json");
    let (ok, out, err) = boardwatch(&["calibrate", "samples/photos/Image_024.jpg", "-o", cal.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(out.contains("left of the image"), "{out}");
    let (ok, out, err) = boardwatch(&["detect", "samples/photos/Image_022.jpg", "--calibration", cal.to_str().unwrap(), "--json"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["orientation"]["white_home"], "Left");
    assert_eq!(v["orientation"]["white_home_confidence"], 1.0);
    let _ = std::fs::remove_file(&cal);
    // Not a start position; a camera that is not there.
    let (ok, _, err) = boardwatch(&["calibrate", "samples/photos/Image_010.jpg", "-o", cal.to_str().unwrap()]);
    assert!(!ok && err.contains("start position"), "{err}");
    let (ok, _, err) = boardwatch(&["calibrate", "camera:93", "-o", cal.to_str().unwrap()]);
    assert!(!ok && err.contains("camera 93"), "{err}");
    assert!(!cal.exists());
}

/// `--squares learnt`: the calibration keeps the session's head, and `detect` reads with it.
#[test]
fn calibrate_and_detect_with_the_learnt_square_model() {
    let tmp = tempfile::Builder::new().prefix("boardwatch-cal-learnt-cli-").tempdir().unwrap();
    let cal = tmp.path().join("cal.json");
    let (ok, _, err) = boardwatch(&["calibrate", "samples/photos/Image_024.jpg", "-o", cal.to_str().unwrap(), "--squares", "learnt"]);
    assert!(ok, "{err}");
    let saved: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&cal).unwrap()).unwrap();
    assert_eq!(saved["square_head"]["weights"].as_array().map(Vec::len), Some(6), "the session's head is kept");
    let (ok, out, err) = boardwatch(&["detect", "samples/photos/Image_022.jpg", "--calibration", cal.to_str().unwrap(), "--squares", "learnt", "--json"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let labels: serde_json::Value = serde_json::from_str(&std::fs::read_to_string("samples/photos/labels.json").unwrap()).unwrap();
    let (got, want) = (v["grid"].as_array().unwrap(), labels["Image_022"].as_array().unwrap());
    let wrong: usize = got
        .iter()
        .zip(want)
        .map(|(g, w)| g.as_str().unwrap().chars().zip(w.as_str().unwrap().chars()).filter(|(a, b)| a != b).count())
        .sum();
    assert!(wrong <= 1, "{got:?} against {want:?}");
    let (ok, _, err) = boardwatch(&["detect", "samples/photos/Image_022.jpg", "--squares", "neural"]);
    assert!(!ok && err.contains("--squares"), "{err}");
}
