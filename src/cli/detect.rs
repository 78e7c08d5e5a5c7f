//! `boardwatch detect`: read the board in still images.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use boardwatch::vision::{self, BoardLocation, Calibration, ColourModel, Detection, SquareModel, SquareReader};
use clap::Args;
use opencv::core::Mat;
use opencv::imgcodecs;
use opencv::prelude::*;
use serde::Serialize;

#[derive(Args)]
pub struct DetectArgs {
    /// Images to read (JPEG, PNG, ...; EXIF orientation is applied as viewers show it).
    #[arg(required = true)]
    images: Vec<PathBuf>,
    /// Colour model: a built-in name (`wooden`, `four-colour`; files in `models/`) or a palette JSON file.
    #[arg(long, default_value = "wooden")]
    palette: String,
    /// A calibration file (`boardwatch calibrate`): its learnt colours replace the palette, its
    /// corners are tried first (the board is looked for again if it is not there), and its
    /// orientation is reported unless the image is itself a start position.
    #[arg(long, conflicts_with = "palette")]
    calibration: Option<PathBuf>,
    /// The playing area's corners given by hand: `x,y,x,y,x,y,x,y` (any order).
    #[arg(long, value_parser = parse_corners)]
    corners: Option<[[f32; 2]; 4]>,
    /// Write a picture of what was seen (corners, grid, class and confidence per square).
    /// With several images, the image's name is added: `OUT-Image_001.png`.
    #[arg(long)]
    overlay: Option<PathBuf>,
    /// One JSON object per image: image, corners, grid, orientation, confidence.
    #[arg(long)]
    json: bool,
    /// Who reads the playing squares: the colours, or the learnt square model (with a
    /// calibration made with it, fine-tuned on that session's start position).
    #[arg(long, value_enum, default_value_t = SquareReader::default())]
    squares: SquareReader,
}

pub fn parse_corners(text: &str) -> Result<[[f32; 2]; 4], String> {
    let values: Vec<f32> = text
        .split(',')
        .map(|v| v.trim().parse::<f32>().map_err(|e| format!("`{v}`: {e}")))
        .collect::<Result<_, _>>()?;
    if values.len() != 8 {
        return Err(format!("expected 8 numbers (four x,y pairs), got {}", values.len()));
    }
    Ok(std::array::from_fn(|i| [values[2 * i], values[2 * i + 1]]))
}

/// A palette by name (`models/NAME.json`, built in) or by file path.
pub fn load_palette(name: &str) -> anyhow::Result<ColourModel> {
    ColourModel::named(name).with_context(|| "--palette".to_string())
}

pub fn read_image(path: &Path) -> anyhow::Result<Mat> {
    Ok(vision::source::read_image(path)?)
}

/// Write a picture; the extension picks the format.
pub fn write_picture(out: &Path, picture: &Mat) -> anyhow::Result<()> {
    let written = imgcodecs::imwrite(out, picture, &opencv::core::Vector::new()).with_context(|| format!("writing {}", out.display()))?;
    if !written {
        bail!("{}: could not write the overlay (unknown image extension?)", out.display());
    }
    Ok(())
}

#[derive(Serialize)]
struct Report<'a> {
    image: String,
    #[serde(flatten)]
    detection: &'a Detection,
}

fn overlay_path(base: &Path, image: &Path, several: bool) -> PathBuf {
    if !several {
        return base.to_path_buf();
    }
    let stem = base.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let image_stem = image.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    base.with_file_name(format!("{stem}-{image_stem}.png"))
}

fn detect_one(
    path: &Path,
    model: &ColourModel,
    calibration: Option<&Calibration>,
    mut squares: Option<&mut SquareModel>,
    args: &DetectArgs,
) -> anyhow::Result<Detection> {
    let image = read_image(path)?;
    let detection = match (args.corners, calibration) {
        (Some(corners), _) => {
            let location = BoardLocation::from_corners(corners, (image.cols(), image.rows())).context("--corners")?;
            // `detect_calibrated_with` picks the calibration's head itself; corners by hand skip it.
            if let (Some(m), Some(cal)) = (squares.as_deref_mut(), calibration) {
                m.use_calibration(cal).context("--calibration")?;
            }
            let mut d = vision::detect_at_with(&image, location, model, squares)?;
            if let Some(cal) = calibration {
                if d.orientation.white_home_confidence < 1.0 {
                    d.orientation.white_home = Some(cal.white_home);
                    d.orientation.white_home_confidence = 1.0;
                }
            }
            d
        }
        (None, Some(cal)) => vision::detect_calibrated_with(&image, cal, squares).with_context(|| format!("{}", path.display()))?,
        (None, None) => {
            let location = vision::locate_board(&image, None).with_context(|| format!("{}", path.display()))?;
            vision::detect_at_with(&image, location, model, squares).with_context(|| format!("{}", path.display()))?
        }
    };
    if let Some(base) = &args.overlay {
        let out = overlay_path(base, path, args.images.len() > 1);
        let picture = vision::draw_overlay(&image, &detection.location, Some(&detection.reading), 800)?;
        write_picture(&out, &picture)?;
    }
    Ok(detection)
}

pub fn run(args: DetectArgs) -> anyhow::Result<ExitCode> {
    let calibration = match &args.calibration {
        Some(p) => Some(Calibration::load(p).with_context(|| "--calibration".to_string())?),
        None => None,
    };
    let model = match &calibration {
        Some(c) => c.palette.clone(),
        None => load_palette(&args.palette)?,
    };
    let mut squares = args.squares.model().context("the learnt square model")?;
    let mut all_found = true;
    for path in &args.images {
        match detect_one(path, &model, calibration.as_ref(), squares.as_mut(), &args) {
            Ok(detection) => {
                if args.json {
                    println!("{}", serde_json::to_string(&Report { image: path.display().to_string(), detection: &detection })?);
                } else {
                    print_detection(path, &detection);
                }
            }
            Err(err) => {
                all_found = false;
                eprintln!("error: {err:#}");
            }
        }
    }
    Ok(if all_found { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

fn print_detection(path: &Path, d: &Detection) {
    let corners: Vec<String> = d.corners.iter().map(|c| format!("({:.0}, {:.0})", c[0], c[1])).collect();
    println!("{}: board at {}", path.display(), corners.join(" "));
    for (row, line) in d.grid.iter().enumerate() {
        let least = d.confidence[row].iter().cloned().fold(1.0f32, f32::min);
        println!("   {line}   lowest confidence {least:.2}");
    }
    let o = &d.orientation;
    let home = o.white_home.map_or("unknown".to_string(), |s| format!("{s:?} (confidence {:.2})", o.white_home_confidence));
    println!("   top-left square {}, White's home side: {home}", if o.top_left_dark { "dark" } else { "light" });
}
