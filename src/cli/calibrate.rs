//! `boardwatch calibrate`: learn corners, orientation and the session's colours
//! from the start position, and write them to a calibration file.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use boardwatch::vision::source::{self, SourceSpec};
use boardwatch::vision::{self, Calibration, SquareReader, StabilityConfig, WatchConfig};
use clap::Args;

use super::detect::{load_palette, write_picture};

#[derive(Args)]
pub struct CalibrateArgs {
    /// What shows the start position: an image, a folder of images, a video file, a stream URL
    /// (rtsp://, http://) or a camera (`camera:0`, `camera:NAME`).
    source: String,
    /// Palette to start from: a built-in name (`wooden`, `four-colour`) or a palette JSON file.
    #[arg(long, default_value = "wooden")]
    palette: String,
    /// Where to write the calibration (JSON).
    #[arg(long, short, default_value = "calibration/calibration.json")]
    out: PathBuf,
    /// The playing area's corners given by hand: `x,y,x,y,x,y,x,y` (stills only).
    #[arg(long, value_parser = super::detect::parse_corners)]
    corners: Option<[[f32; 2]; 4]>,
    /// Write a picture of what was seen with the calibrated colours.
    #[arg(long)]
    overlay: Option<PathBuf>,
    /// Camera resolution and frame rate (cameras only; the closest mode is used).
    #[arg(long, default_value_t = 1280)]
    width: u32,
    #[arg(long, default_value_t = 720)]
    height: u32,
    #[arg(long, default_value_t = 30)]
    fps: u32,
    /// How long the start position must be still (video, streams, cameras), seconds.
    #[arg(long, default_value_t = 0.4)]
    still: f64,
    /// Give up after this many frames (video, streams, cameras).
    #[arg(long, default_value_t = 900)]
    max_frames: u64,
    /// Also fine-tune the learnt square model on the start position (kept in the calibration,
    /// for `detect`, `replay` and boards with `squares = "learnt"`).
    #[arg(long, value_enum, default_value_t = SquareReader::default())]
    squares: SquareReader,
}

pub fn run(args: CalibrateArgs) -> anyhow::Result<ExitCode> {
    let base = load_palette(&args.palette)?;
    let mut spec = SourceSpec::parse(&args.source)?;
    if let SourceSpec::Camera(req) = &mut spec {
        req.width = args.width;
        req.height = args.height;
        req.fps = args.fps;
        req.validate()?;
    }
    if args.corners.is_some() && !matches!(spec, SourceSpec::Images(_)) {
        bail!("--corners: only for still images (video and cameras find the board themselves)");
    }
    let mut squares = args.squares.model().context("the learnt square model")?;
    let (cal, image, location) = match &spec {
        SourceSpec::Images(paths) => {
            // The first image that shows a start position.
            let mut last_err = None;
            let mut found = None;
            for path in paths {
                let image = source::read_image(path)?;
                match Calibration::from_image_with(&image, &base, args.corners, &path.display().to_string(), squares.as_mut()) {
                    Ok((cal, loc)) => {
                        found = Some((cal, image, loc));
                        break;
                    }
                    Err(e) => last_err = Some(format!("{}: {e}", path.display())),
                }
            }
            match found {
                Some(f) => f,
                None => bail!("no start position found: {}", last_err.unwrap_or_default()),
            }
        }
        _ => {
            let mut src = source::open(&spec)?;
            let config = WatchConfig {
                stability: StabilityConfig { still_secs: args.still, ..Default::default() },
                squares: args.squares,
                ..Default::default()
            };
            let (cal, frame, result) = Calibration::from_source(src.as_mut(), &base, config, args.max_frames)
                .with_context(|| format!("calibrating on {}", args.source))?;
            let loc = result.location.context("no board location")?;
            (cal, frame.image, loc)
        }
    };
    cal.save(&args.out)?;
    let white = format!("{:?}", cal.white_home).to_lowercase();
    println!(
        "{}: calibrated on {}; White's men start at the {white} of the image; top-left square {}",
        args.out.display(),
        cal.source,
        if cal.top_left_dark { "dark" } else { "light" }
    );
    let c = &cal.corners;
    println!("   corners ({:.0}, {:.0}) ({:.0}, {:.0}) ({:.0}, {:.0}) ({:.0}, {:.0})", c[0][0], c[0][1], c[1][0], c[1][1], c[2][0], c[2][1], c[3][0], c[3][1]);
    if let Some(out) = &args.overlay {
        let d = vision::detect_at_with(&image, location, &cal.palette, squares.as_mut())?;
        let picture = vision::draw_overlay(&image, &d.location, Some(&d.reading), 800)?;
        write_picture(out, &picture)?;
    }
    Ok(ExitCode::SUCCESS)
}
