//! The learnt square model against the colours on labelled photos of one session, as a user
//! meets them: calibrate on one start photo, then read the session's other photos.
//!
//! ```text
//! cargo run --release --example square_eval -- --calib Image_024 --photos Image_013,Image_014,... \
//!     [--images DIR] [--labels FILE] [--palette wooden] [--squares colours|learnt|both]
//! ```
//! Prints every square read wrong (`?` counted apart) and the totals.
use std::collections::BTreeMap;
use std::path::PathBuf;

use boardwatch::vision::source::read_image;
use boardwatch::vision::*;

type R<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn opt(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned()
}

fn main() {
    if let Err(e) = run() {
        eprintln!("square_eval: {e}");
        std::process::exit(1);
    }
}

fn run() -> R<()> {
    opencv_on_calling_threads()?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let images = PathBuf::from(opt(&args, "--images").unwrap_or("../shared/data/photos/b3nny01-checkersvision/v2".into()));
    let labels_file = opt(&args, "--labels").unwrap_or("tests/data/checkersvision_labels.json".into());
    let labels: BTreeMap<String, serde_json::Value> = serde_json::from_str(&std::fs::read_to_string(&labels_file)?)?;
    let calib = opt(&args, "--calib").ok_or("--calib PHOTO")?;
    let photos: Vec<String> = opt(&args, "--photos").ok_or("--photos A,B,...")?.split(',').map(str::to_string).collect();
    let palette = ColourModel::named(&opt(&args, "--palette").unwrap_or("wooden".into()))?;
    let readers = match opt(&args, "--squares").as_deref() {
        Some("colours") => vec![SquareReader::Colours],
        Some("learnt") => vec![SquareReader::Learnt],
        _ => vec![SquareReader::Colours, SquareReader::Learnt],
    };
    for reader in readers {
        let mut model = (reader == SquareReader::Learnt).then(SquareModel::builtin).transpose()?;
        let calib_image = read_image(&images.join(format!("{calib}.jpg")))?;
        let (cal, _) = Calibration::from_image_with(&calib_image, &palette, None, &calib, model.as_mut())?;
        let (mut wrong, mut unknown, mut squares) = (0, 0, 0);
        for name in photos.iter().filter(|p| **p != calib) {
            let truth: Vec<String> = labels[name].as_array().ok_or("label rows")?.iter().map(|r| r.as_str().unwrap_or("").to_string()).collect();
            let d = detect_calibrated_with(&read_image(&images.join(format!("{name}.jpg")))?, &cal, model.as_mut())?;
            squares += 64;
            for r in 0..8 {
                for c in 0..8 {
                    let (got, want) = (d.grid[r].as_bytes()[c] as char, truth[r].as_bytes()[c] as char);
                    if got != want {
                        if got == '?' {
                            unknown += 1;
                        } else {
                            wrong += 1;
                        }
                        println!("{reader:?} {name} ({r},{c}): {want} read {got} ({:.2})", d.confidence[r][c]);
                    }
                }
            }
        }
        println!("{reader:?}: calibrated on {calib}: {wrong} misread and {unknown} `?` of {squares} squares");
    }
    Ok(())
}
