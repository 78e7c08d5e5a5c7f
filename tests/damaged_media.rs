//! Damaged and hostile media files get errors a user can act on: an image whose header claims
//! an absurd size is refused before it is decoded, and a recording cut off before its index was
//! written is named as such, with the remedy.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn boardwatch(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_boardwatch")).args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// A folder for the test's files, removed when the `TempDir` is dropped.
fn temp_dir() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("boardwatch-media-").tempdir().unwrap()
}

fn temp_file(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// A small real PNG with the size in its IHDR chunk replaced (its checksum no longer matches;
/// the check must refuse the file before anything would notice).
fn png_claiming(width: u32, height: u32) -> Vec<u8> {
    let mut png = Vec::new();
    let image = image::RgbImage::from_pixel(4, 4, image::Rgb([200, 30, 30]));
    image.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png).unwrap();
    png[16..20].copy_from_slice(&width.to_be_bytes());
    png[20..24].copy_from_slice(&height.to_be_bytes());
    png
}

/// A sample JPEG with the size in its first frame header (SOFn) replaced.
fn jpeg_claiming(width: u16, height: u16) -> Vec<u8> {
    let mut jpeg = std::fs::read(common::repo_file("samples/photos/Image_024.jpg")).unwrap();
    let mut i = 2;
    loop {
        let marker = jpeg[i + 1];
        let len = u16::from_be_bytes([jpeg[i + 2], jpeg[i + 3]]) as usize;
        if (0xC0..=0xCF).contains(&marker) && ![0xC4, 0xC8, 0xCC].contains(&marker) {
            jpeg[i + 5..i + 7].copy_from_slice(&height.to_be_bytes());
            jpeg[i + 7..i + 9].copy_from_slice(&width.to_be_bytes());
            return jpeg;
        }
        i += 2 + len;
    }
}

#[test]
fn an_image_claiming_an_absurd_size_is_refused_with_its_name_and_size() {
    let tmp = temp_dir();
    let png = temp_file(tmp.path(), "huge.png", &png_claiming(100_000, 100_000));
    let (ok, err) = boardwatch(&["detect", png.to_str().unwrap()]);
    assert!(!ok, "{err}");
    assert!(err.contains(png.to_str().unwrap()) && err.contains("100000x100000"), "{err}");
    assert!(!err.contains("Assertion") && !err.contains("panicked"), "{err}");

    let jpeg = temp_file(tmp.path(), "huge.jpg", &jpeg_claiming(60_000, 60_000));
    let (ok, err) = boardwatch(&["detect", jpeg.to_str().unwrap()]);
    assert!(!ok && err.contains(jpeg.to_str().unwrap()) && err.contains("60000x60000"), "{err}");

    // The same photo with its true size still reads (the check refuses only absurd sizes).
    let (ok, err) = boardwatch(&["detect", "samples/photos/Image_024.jpg", "--json"]);
    assert!(ok, "{err}");
}

#[test]
fn a_recording_without_its_index_is_named_truncated_with_the_remedy() {
    let whole = std::fs::read(common::repo_file("samples/recordings/acf7_four_colour.mp4")).unwrap();
    let tmp = temp_dir();
    let half = temp_file(tmp.path(), "half.mp4", &whole[..whole.len() / 2]);
    let (ok, err) = boardwatch(&["replay", half.to_str().unwrap(), "--variant", "english"]);
    assert!(!ok, "{err}");
    assert!(err.contains(half.to_str().unwrap()), "{err}");
    assert!(err.contains("truncated or unfinished MP4") && err.contains("'moov'"), "{err}");
    assert!(err.contains("Matroska") && err.contains("frag_keyframe+empty_moov") && err.contains("untrunc"), "{err}");

    // A file that is no video at all keeps the plain message.
    let junk = temp_file(tmp.path(), "junk.mp4", b"this is not a video at all");
    let (ok, err) = boardwatch(&["replay", junk.to_str().unwrap(), "--variant", "english"]);
    assert!(!ok && err.contains("not a video OpenCV can open") && !err.contains("truncated"), "{err}");
}
