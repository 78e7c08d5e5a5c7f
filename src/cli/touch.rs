//! `boardwatch touch`: the camera over a projected board, without the pages: find the projected
//! calibration pattern in a picture (and keep the mapping for `play --touch-maps`), or follow a
//! recording and print the taps it holds, with pictures of what the camera made of it.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use boardwatch::touch::dwell::DwellSettings;
use boardwatch::touch::grid_map::GridMap;
use boardwatch::touch::pattern::CalibrationPattern;
use boardwatch::vision::capture::{Capture, Captured, Policy};
use boardwatch::vision::source::{read_image, SourceSpec};
use boardwatch::vision::table::{find_pattern, ForegroundSettings, TableWatcher};
use clap::{Args, Subcommand};
use opencv::core::{Mat, Point, Scalar};
use opencv::imgproc;

#[derive(Subcommand)]
pub enum TouchCommand {
    /// Find the projected calibration pattern in a camera picture; print the fit, draw the
    /// grid the mapping gives, and keep the mapping for `play --touch-maps`.
    Calibrate(CalibrateArgs),
    /// Follow a recording (or a camera) of the projected table with a kept mapping: print each
    /// tap as a JSON line, and draw what the camera saw.
    Follow(FollowArgs),
}

#[derive(Args)]
pub struct CalibrateArgs {
    /// A camera picture of the table with the pattern projected (as the page shows it: key K).
    image: PathBuf,
    /// The game's grid: columns and rows of cells.
    #[arg(long)]
    cols: usize,
    #[arg(long)]
    rows: usize,
    /// Draw the grid the mapping gives onto the picture.
    #[arg(long, value_name = "PNG")]
    overlay: Option<PathBuf>,
    /// Keep the mapping in this file (the format `play --touch-maps` reads), for `--game` on
    /// `--screen`.
    #[arg(long, value_name = "FILE", requires = "game")]
    save: Option<PathBuf>,
    /// The game the mapping is for: sokoban, cops, dots, cops-arena.
    #[arg(long)]
    game: Option<String>,
    #[arg(long, default_value = "table")]
    screen: String,
}

#[derive(Args)]
pub struct FollowArgs {
    /// A recording, a camera (`camera:0`) or a stream URL.
    source: String,
    /// The mappings file (`touch calibrate --save`, or `play --touch-maps`).
    #[arg(long, value_name = "FILE")]
    maps: PathBuf,
    #[arg(long)]
    game: String,
    #[arg(long, default_value = "table")]
    screen: String,
    /// Seconds a fingertip dwells on a cell to tap it.
    #[arg(long, default_value_t = 0.6)]
    dwell: f64,
    /// Write every frame with the grid, the fingertip and the dwell ring drawn into this folder.
    #[arg(long, value_name = "DIR")]
    overlay_dir: Option<PathBuf>,
}

pub fn run(command: TouchCommand) -> anyhow::Result<ExitCode> {
    boardwatch::vision::opencv_on_calling_threads()?;
    match command {
        TouchCommand::Calibrate(args) => calibrate(args),
        TouchCommand::Follow(args) => follow(args),
    }
}

fn check_grid(cols: usize, rows: usize) -> anyhow::Result<()> {
    if !(1..=200).contains(&cols) || !(1..=200).contains(&rows) {
        bail!("--cols {cols} --rows {rows}: a grid of 1 to 200 cells each way");
    }
    Ok(())
}

fn calibrate(args: CalibrateArgs) -> anyhow::Result<ExitCode> {
    check_grid(args.cols, args.rows)?;
    let image = read_image(&args.image).with_context(|| args.image.display().to_string())?;
    let pattern = CalibrationPattern::for_grid(args.cols, args.rows);
    let fit = find_pattern(&image, &pattern, args.cols, args.rows).with_context(|| args.image.display().to_string())?;
    println!(
        "{}: pattern found ({} corners, {:.2} px from the mapping on average); grid corners at {}",
        args.image.display(),
        fit.corners,
        fit.rms_px,
        fit.map.outline().map(|o| o.iter().map(|p| format!("({:.0}, {:.0})", p[0], p[1])).collect::<Vec<_>>().join(" ")).unwrap_or_default()
    );
    if let Some(path) = &args.overlay {
        let mut picture = image.clone();
        draw_grid(&mut picture, &fit.map)?;
        write_png(path, &picture)?;
    }
    if let (Some(path), Some(game)) = (&args.save, &args.game) {
        let hub = boardwatch::web::games::touch::TouchHub::new(Some(path.clone()))?;
        hub.keep_map(&args.screen, game, fit.map)?;
        println!("kept for {game} on screen {} in {}", args.screen, path.display());
    }
    Ok(ExitCode::SUCCESS)
}

fn follow(args: FollowArgs) -> anyhow::Result<ExitCode> {
    let maps = boardwatch::web::games::touch::read_maps(&args.maps).context("--maps")?;
    let map = maps
        .get(&args.screen)
        .and_then(|games| games.get(&args.game))
        .with_context(|| format!("--maps {}: no mapping for {} on screen {}", args.maps.display(), args.game, args.screen))?
        .clone();
    let dwell = DwellSettings::for_dwell(args.dwell);
    dwell.validate().map_err(|e| anyhow::anyhow!("--dwell: {e}"))?;
    if let Some(dir) = &args.overlay_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("--overlay-dir {}", dir.display()))?;
    }
    let spec = SourceSpec::parse(&args.source).map_err(|e| anyhow::anyhow!("{}: {e}", args.source))?;
    let live = matches!(spec, SourceSpec::Camera(_) | SourceSpec::Stream(_));
    let policy = if live { Policy::Live } else { Policy::File { realtime: false, skip_through: 0 } };
    let capture = Capture::start("capture-touch", policy, move || boardwatch::vision::source::open(&spec))?;
    let mut watcher = TableWatcher::new(map.clone(), ForegroundSettings::default(), dwell);
    let (mut frames, mut taps) = (0u64, 0u64);
    for message in capture.iter() {
        let frame = match message {
            Captured::Opened(Ok(_)) => continue,
            Captured::Opened(Err(e)) | Captured::Failed(e) => bail!("{}: {e}", args.source),
            Captured::End => break,
            Captured::Frame(frame) => frame,
        };
        let read = watcher.frame(frame.t, &frame.image)?;
        if let Some(tap) = read.tap {
            taps += 1;
            println!("{}", serde_json::json!({ "time": frame.t, "frame": frame.index, "cell": tap.cell, "dwell_start": tap.dwell_start, "dwell_end": tap.dwell_end }));
        }
        if let Some(dir) = &args.overlay_dir {
            let mut picture = frame.image.clone();
            draw_grid(&mut picture, &map)?;
            draw_pointer(&mut picture, &map, &read)?;
            write_png(&dir.join(format!("frame_{:05}.png", frame.index)), &picture)?;
        }
        frames += 1;
    }
    eprintln!("{frames} frames, {taps} taps");
    Ok(ExitCode::SUCCESS)
}

fn write_png(path: &Path, picture: &Mat) -> anyhow::Result<()> {
    let ok = opencv::imgcodecs::imwrite(path.to_str().context("a file name in UTF-8")?, picture, &opencv::core::Vector::new())
        .with_context(|| format!("writing {}", path.display()))?;
    if !ok {
        bail!("writing {}: not a picture format OpenCV writes (use .png)", path.display());
    }
    Ok(())
}

fn point(p: [f64; 2]) -> Point {
    Point::new(p[0].round() as i32, p[1].round() as i32)
}

/// The grid's lines as the mapping puts them on the camera picture.
fn draw_grid(picture: &mut Mat, map: &GridMap) -> anyhow::Result<()> {
    let colour = Scalar::new(0.0, 212.0, 255.0, 0.0);
    let (cols, rows) = (map.cols as f64, map.rows as f64);
    let mut line = |a: [f64; 2], b: [f64; 2], thickness: i32| -> anyhow::Result<()> {
        if let (Some(p), Some(q)) = (map.to_camera(a), map.to_camera(b)) {
            imgproc::line(picture, point(p), point(q), colour, thickness, imgproc::LINE_AA, 0)?;
        }
        Ok(())
    };
    for c in 0..=map.cols {
        line([c as f64, 0.0], [c as f64, rows], if c == 0 || c == map.cols { 2 } else { 1 })?;
    }
    for r in 0..=map.rows {
        line([0.0, r as f64], [cols, r as f64], if r == 0 || r == map.rows { 2 } else { 1 })?;
    }
    Ok(())
}

/// The fingertip and the ring around the cell it dwells on, filled as far as the dwell has gone.
fn draw_pointer(picture: &mut Mat, map: &GridMap, read: &boardwatch::vision::table::TouchFrame) -> anyhow::Result<()> {
    if let Some(tip) = read.fingertip_px {
        imgproc::circle(picture, point(tip), 4, Scalar::new(0.0, 212.0, 255.0, 0.0), -1, imgproc::LINE_AA, 0)?;
    }
    if let (Some([c, r]), Some(centre)) = (read.pointer.cell, read.pointer.cell.and_then(|[c, r]| map.to_camera([c as f64 + 0.5, r as f64 + 0.5]))) {
        let edge = map.to_camera([c as f64 + 0.9, r as f64 + 0.5]).unwrap_or(centre);
        let radius = ((edge[0] - centre[0]).hypot(edge[1] - centre[1])).max(6.0).round() as i32;
        let full = read.pointer.progress >= 1.0;
        let colour = if full { Scalar::new(132.0, 220.0, 61.0, 0.0) } else { Scalar::new(0.0, 212.0, 255.0, 0.0) };
        imgproc::circle(picture, point(centre), radius, Scalar::new(255.0, 255.0, 255.0, 0.0), 1, imgproc::LINE_AA, 0)?;
        imgproc::ellipse(
            picture,
            point(centre),
            opencv::core::Size::new(radius, radius),
            -90.0,
            0.0,
            360.0 * read.pointer.progress,
            colour,
            3,
            imgproc::LINE_AA,
            0,
        )?;
    }
    if let Some(tap) = read.tap {
        if let Some(centre) = map.to_camera([tap.cell[0] as f64 + 0.5, tap.cell[1] as f64 + 0.5]) {
            imgproc::put_text(picture, "tap", point([centre[0] - 12.0, centre[1] + 4.0]), imgproc::FONT_HERSHEY_SIMPLEX, 0.5, Scalar::new(132.0, 220.0, 61.0, 0.0), 2, imgproc::LINE_AA, false)?;
        }
    }
    Ok(())
}
