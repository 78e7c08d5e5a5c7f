//! `boardwatch render-table`: synthetic camera frames of a grid game projected onto a table, with
//! a hand tapping cells by pointing (test material for the projected board's touch input).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use boardwatch::games::cops::map::Map;
use boardwatch::games::cops::rules::Positions;
use boardwatch::games::sokoban::level::Level;
use boardwatch::synth::table::{
    calibration_picture, cops_picture, dots_picture, grid_picture, parse_sokoban_level, plan_table_session, random_distractor_script,
    random_table_scene, render_table_frame, sokoban_picture, table_session_truth, FingertipTruth, PlannedTableFrame, TableAction, TableFrameTruth,
    TableScene, TableScript,
};
use boardwatch::synth::RgbImage;
use boardwatch::touch::pattern::CalibrationPattern;
use clap::{Args, ValueEnum};
use image::Rgb;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TableGame {
    /// A plain grid of light cells.
    Grid,
    /// A Sokoban level (--level FILE, else a small built-in one).
    Sokoban,
    /// A Cops and Robbers map (--map FILE, else a random one of --cols x --rows).
    Cops,
    /// A Dots field with some dots played.
    Dots,
}

#[derive(Args)]
pub struct RenderTableArgs {
    /// Project the calibration pattern (the checker the page shows to be found) instead of a
    /// game; a single frame without hands.
    #[arg(long, conflicts_with_all = ["script", "taps", "distractors"])]
    pattern: bool,
    /// The game the page projects.
    #[arg(long, value_enum, default_value = "grid")]
    game: TableGame,
    /// Sokoban: an XSB file; its first level is projected (see --level-index).
    #[arg(long)]
    level: Option<PathBuf>,
    /// Sokoban: which level of the file (0-based).
    #[arg(long, default_value_t = 0)]
    level_index: usize,
    /// Cops and Robbers: a map file (rows of digits 0-4).
    #[arg(long)]
    map: Option<PathBuf>,
    /// Columns of the grid (Sokoban and a map file give their own).
    #[arg(long)]
    cols: Option<usize>,
    /// Rows of the grid (Sokoban and a map file give their own).
    #[arg(long)]
    rows: Option<usize>,
    /// The session's actions as JSON: {"actions": [{"action": "tap", "cell": [col, row],
    /// "dwell_s": 0.8}, {"action": "pass_over", "side": "left", "through": [2, 3]},
    /// {"action": "rest_at_edge", "seconds": 2, "side": "bottom"}, {"action": "lean",
    /// "seconds": 2}, {"action": "page_change", "picture_index": 1}, {"action": "pause",
    /// "seconds": 1}]}. Pictures 0 to 3 are the game in four successive states.
    #[arg(long, conflicts_with_all = ["taps", "distractors"])]
    script: Option<PathBuf>,
    /// Taps on these cells, one after another: "col,row col,row ...", 1 s dwell each.
    #[arg(long, conflicts_with = "distractors")]
    taps: Option<String>,
    /// About this many seconds of hands passing over, arms resting, people leaning in and page
    /// changes, but no taps.
    #[arg(long)]
    distractors: Option<f64>,
    /// Random seed: the scene (table, projector, room, camera), the script's details and the
    /// sensor noise.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Camera tilt from vertical in degrees (0-35).
    #[arg(long)]
    tilt: Option<f64>,
    /// Rotation of the grid in the image in degrees, clockwise.
    #[arg(long)]
    yaw: Option<f64>,
    /// The projector's angle off the vertical in degrees (0-60): how much keystone the page's
    /// corner pins undo.
    #[arg(long)]
    keystone: Option<f64>,
    #[arg(long)]
    width: Option<u32>,
    #[arg(long)]
    height: Option<u32>,
    /// No blur, noise, vignette, lens distortion, gloss or uneven room light.
    #[arg(long)]
    clean: bool,
    /// Frames per second of a session.
    #[arg(long, default_value_t = 15.0)]
    fps: f64,
    /// Single frame: the moment of the session to draw, in seconds (default: the middle of
    /// the first tap's dwell, else the middle of the session).
    #[arg(long)]
    at: Option<f64>,
    /// The PNG to write (a single frame).
    #[arg(long, conflicts_with = "out_dir", required_unless_present = "out_dir")]
    out: Option<PathBuf>,
    /// With --out: also write the scene and the frame's truth as JSON.
    #[arg(long, requires = "out")]
    truth: Option<PathBuf>,
    /// Folder for a session's frames (`frame_00000.png`, ...), `truth.json` and `frames.json`.
    #[arg(long)]
    out_dir: Option<PathBuf>,
}

/// Microban 3 (David W. Skinner), when no --level is given.
const DEFAULT_LEVEL: &str = "  ####\n###  ####\n#     $ #\n# #  #$ #\n# . .#@ #\n#########\n";

/// The number of pictures every game provides (its successive states).
const PICTURES: usize = 4;

fn check_args(args: &RenderTableArgs) -> anyhow::Result<()> {
    if let Some(tilt) = args.tilt {
        if !(tilt.is_finite() && (0.0..=35.0).contains(&tilt)) {
            bail!("--tilt {tilt}: the camera's tilt from vertical must be 0 to 35 degrees");
        }
    }
    if let Some(yaw) = args.yaw {
        if !yaw.is_finite() {
            bail!("--yaw {yaw}: not a number of degrees");
        }
    }
    if let Some(k) = args.keystone {
        if !(k.is_finite() && (0.0..=60.0).contains(&k)) {
            bail!("--keystone {k}: the projector's angle off the vertical must be 0 to 60 degrees");
        }
    }
    for (name, value) in [("--cols", args.cols), ("--rows", args.rows)] {
        match value {
            Some(0) => bail!("{name} 0: the grid needs at least one cell each way"),
            Some(n) if n > 64 => bail!("{name} {n}: at most 64"),
            _ => {}
        }
    }
    for (name, value) in [("--width", args.width), ("--height", args.height)] {
        if let Some(v) = value {
            if !(32..=8192).contains(&v) {
                bail!("{name} {v}: the image side must be 32 to 8192 pixels");
            }
        }
    }
    if !(args.fps.is_finite() && (1.0..=240.0).contains(&args.fps)) {
        bail!("--fps {}: must be 1 to 240", args.fps);
    }
    if let Some(s) = args.distractors {
        if !(s.is_finite() && s > 0.0 && s <= 3600.0) {
            bail!("--distractors {s}: must be more than 0 and at most 3600 seconds");
        }
    }
    if args.level.is_some() && args.game != TableGame::Sokoban {
        bail!("--level is for --game sokoban");
    }
    if args.map.is_some() && args.game != TableGame::Cops {
        bail!("--map is for --game cops");
    }
    Ok(())
}

/// The game's grid size and its pictures (successive states), `px` pixels a cell.
fn game_pictures(args: &RenderTableArgs, rng: &mut ChaCha8Rng) -> anyhow::Result<(usize, usize, Vec<RgbImage>)> {
    let given = |default: usize| (args.cols.unwrap_or(default), args.rows.unwrap_or(default));
    let px_for = |cols: usize, rows: usize| ((960 / cols.max(rows)) as u32).clamp(12, 120);
    match args.game {
        TableGame::Grid => {
            let (cols, rows) = given(8);
            let px = px_for(cols, rows);
            let pictures = (0..PICTURES)
                .map(|k| {
                    // Each state marks another cell, as a page showing a selection would.
                    let mark = [(k * 3 + 1) % cols, (k * 5 + 2) % rows];
                    grid_picture(cols, rows, px, &|c, r| {
                        if k > 0 && [c, r] == mark {
                            Rgb([250, 200, 40])
                        } else if (c + r) % 2 == 0 {
                            Rgb([240, 240, 236])
                        } else {
                            Rgb([205, 225, 245])
                        }
                    })
                })
                .collect();
            Ok((cols, rows, pictures))
        }
        TableGame::Sokoban => {
            let level = match &args.level {
                Some(path) => {
                    let text = std::fs::read_to_string(path).with_context(|| format!("reading --level {}", path.display()))?;
                    let levels =
                        boardwatch::games::sokoban::level::parse_collection(&text).map_err(|e| anyhow::anyhow!("--level {}: {e}", path.display()))?;
                    let count = levels.len();
                    levels
                        .into_iter()
                        .nth(args.level_index)
                        .with_context(|| format!("--level-index {}: {} has {count} levels", args.level_index, path.display()))?
                }
                None => parse_sokoban_level(DEFAULT_LEVEL)?,
            };
            check_given_size(args, level.width, level.height, "the level")?;
            let px = px_for(level.width, level.height);
            let mut state = level.clone();
            let mut pictures = vec![sokoban_picture(&state, px)];
            while pictures.len() < PICTURES {
                step_sokoban_player(&mut state, rng);
                pictures.push(sokoban_picture(&state, px));
            }
            Ok((level.width, level.height, pictures))
        }
        TableGame::Cops => {
            let map = match &args.map {
                Some(path) => {
                    let text = std::fs::read_to_string(path).with_context(|| format!("reading --map {}", path.display()))?;
                    let map = Map::parse(&text).map_err(|e| anyhow::anyhow!("--map {}: {e}", path.display()))?;
                    check_given_size(args, map.width, map.height, "the map")?;
                    map
                }
                None => {
                    let (cols, rows) = given(8);
                    if cols * rows < 3 {
                        bail!("--cols {cols} --rows {rows}: a map needs room for three pieces");
                    }
                    Map::random(cols, rows, 0.25, rng)
                }
            };
            let px = px_for(map.width, map.height);
            let mut positions = map.start;
            let mut pictures = vec![cops_picture(&map, positions, &[], px)];
            while pictures.len() < PICTURES {
                positions = step_cops(&map, positions, rng);
                pictures.push(cops_picture(&map, positions, &[], px));
            }
            Ok((map.width, map.height, pictures))
        }
        TableGame::Dots => {
            let (cols, rows) = given(12);
            let px = px_for(cols, rows);
            let mut dots: Vec<([usize; 2], u8)> = Vec::new();
            let mut pictures = Vec::new();
            for k in 0..PICTURES {
                let wanted = 2 * cols * rows / 10 + k;
                let mut tries = 0;
                while dots.len() < wanted.min(cols * rows) && tries < 10_000 {
                    tries += 1;
                    let cell = [rng.gen_range(0..cols), rng.gen_range(0..rows)];
                    if dots.iter().all(|(c, _)| *c != cell) {
                        let player = (dots.len() % 2) as u8;
                        dots.push((cell, player));
                    }
                }
                pictures.push(dots_picture(cols, rows, px, &dots));
            }
            Ok((cols, rows, pictures))
        }
    }
}

fn check_given_size(args: &RenderTableArgs, cols: usize, rows: usize, what: &str) -> anyhow::Result<()> {
    if args.cols.is_some_and(|c| c != cols) || args.rows.is_some_and(|r| r != rows) {
        bail!("--cols/--rows: {what} is {cols}x{rows}; leave them out or give its size");
    }
    Ok(())
}

/// The player walks a step (not pushing): the game's next state.
fn step_sokoban_player(level: &mut Level, rng: &mut ChaCha8Rng) {
    let free: Vec<usize> = (0..4).filter_map(|d| level.neighbour(level.player, d)).filter(|&c| !level.walls[c] && !level.boxes[c]).collect();
    if !free.is_empty() {
        level.player = free[rng.gen_range(0..free.len())];
    }
}

/// Every piece steps to a neighbouring road, if it has one free.
fn step_cops(map: &Map, mut p: Positions, rng: &mut ChaCha8Rng) -> Positions {
    for slot in 0..3 {
        let taken = [p.police1, p.thief, p.police2];
        let square = taken[slot];
        let options: Vec<_> = map.road_neighbours(square).filter(|s| !taken.contains(s)).collect();
        if options.is_empty() {
            continue;
        }
        let next = options[rng.gen_range(0..options.len())];
        match slot {
            0 => p.police1 = next,
            1 => p.thief = next,
            _ => p.police2 = next,
        }
    }
    p
}

fn parse_taps(text: &str, cols: usize, rows: usize) -> anyhow::Result<TableScript> {
    let mut actions = vec![TableAction::Pause { seconds: 0.5 }];
    for item in text.split_whitespace() {
        let parsed = item.split_once(',').and_then(|(c, r)| Some([c.trim().parse::<usize>().ok()?, r.trim().parse::<usize>().ok()?]));
        let Some(cell) = parsed else { bail!("--taps: {item:?} is not col,row (two whole numbers)") };
        if cell[0] >= cols || cell[1] >= rows {
            bail!("--taps: cell {item} is outside the {cols}x{rows} grid (columns 0 to {}, rows 0 to {})", cols - 1, rows - 1);
        }
        actions.push(TableAction::Tap { cell, dwell_s: 1.0, side: None });
        actions.push(TableAction::Pause { seconds: 0.6 });
    }
    if actions.len() == 1 {
        bail!("--taps: no cells given");
    }
    Ok(TableScript { actions })
}

fn read_script(path: &Path) -> anyhow::Result<TableScript> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading --script {}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("--script {}: line {}, column {}: {e}", path.display(), e.line(), e.column()))
}

#[derive(Serialize)]
struct SingleFrameReport<'a> {
    seed: u64,
    time_s: Option<f64>,
    scene: &'a TableScene,
    truth: &'a TableFrameTruth,
}

#[derive(Serialize)]
struct FrameEntry<'a> {
    index: usize,
    file: String,
    time_s: f64,
    picture_index: usize,
    corners: [[f64; 2]; 4],
    fingertips: &'a [FingertipTruth],
    extras: Vec<&'static str>,
}

fn write_json(path: &Path, value: &impl Serialize) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(value)?;
    std::fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))
}

pub fn run(args: RenderTableArgs) -> anyhow::Result<ExitCode> {
    check_args(&args)?;
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed ^ 0x6A3E);
    let (cols, rows, mut pictures) = game_pictures(&args, &mut rng)?;
    let mut scene = random_table_scene(args.seed);
    scene.cols = cols;
    scene.rows = rows;
    if let Some(t) = args.tilt {
        scene.camera.tilt_deg = t;
    }
    if let Some(y) = args.yaw {
        scene.camera.yaw_deg = y;
    }
    if let Some(k) = args.keystone {
        scene.projector.keystone_deg = k;
    }
    if let Some(w) = args.width {
        scene.width = w;
    }
    if let Some(h) = args.height {
        scene.height = h;
    }
    if args.clean {
        scene = scene.clean();
    }
    scene.validate().context("the scene")?;
    if args.pattern {
        let pattern = CalibrationPattern::for_grid(cols, rows);
        let (w, h) = (pictures[0].width(), pictures[0].height());
        pictures = vec![calibration_picture(&pattern, w, h)];
    }

    let script = if let Some(path) = &args.script {
        let script = read_script(path)?;
        if script.max_picture_index() >= pictures.len() {
            bail!(
                "--script {}: picture_index {} but the page has {} pictures (0 to {})",
                path.display(),
                script.max_picture_index(),
                pictures.len(),
                pictures.len() - 1
            );
        }
        Some(script)
    } else if let Some(text) = &args.taps {
        Some(parse_taps(text, cols, rows)?)
    } else {
        args.distractors.map(|s| random_distractor_script(args.seed, s))
    };
    let script_context = || args.script.as_ref().map_or_else(|| "the session".to_string(), |p| format!("--script {}", p.display()));

    match (&args.out, &args.out_dir, script) {
        (Some(out), _, script) => {
            let (frame, time) = match &script {
                Some(script) => {
                    let frames = plan_table_session(&scene, script, args.fps).with_context(script_context)?;
                    let truth = table_session_truth(&scene, script, args.fps)?;
                    let time = args.at.unwrap_or_else(|| {
                        truth.taps.first().map_or(frames.len() as f64 / args.fps / 2.0, |t| (t.dwell_start_s + t.dwell_end_s) / 2.0)
                    });
                    let index = ((time * args.fps).round() as usize).min(frames.len().saturating_sub(1));
                    (frames.get(index).cloned(), Some(time))
                }
                None => (None, None),
            };
            let frame = frame.unwrap_or(PlannedTableFrame { time_s: 0.0, hands: Vec::new(), extras: Vec::new(), picture_index: 0, action: None });
            let clock = Instant::now();
            let picture = &pictures[frame.picture_index.min(pictures.len() - 1)];
            let (image, truth) = render_table_frame(&scene, picture, &frame.hands, &frame.extras, args.seed)?;
            tracing::info!("rendered {}x{} in {:.3} s", scene.width, scene.height, clock.elapsed().as_secs_f64());
            image.save(out).with_context(|| format!("writing {}", out.display()))?;
            if let Some(path) = &args.truth {
                write_json(path, &SingleFrameReport { seed: args.seed, time_s: time, scene: &scene, truth: &truth })?;
            }
            Ok(ExitCode::SUCCESS)
        }
        (None, Some(dir), script) => {
            let Some(script) = script else { bail!("--out-dir needs a session: --script, --taps or --distractors") };
            let frames = plan_table_session(&scene, &script, args.fps).with_context(script_context)?;
            let truth = table_session_truth(&scene, &script, args.fps)?;
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            let clock = Instant::now();
            let mut lines = Vec::with_capacity(frames.len());
            for (index, frame) in frames.iter().enumerate() {
                let picture = &pictures[frame.picture_index.min(pictures.len() - 1)];
                let noise = args.seed.wrapping_mul(1_000_003).wrapping_add(index as u64);
                let (image, frame_truth) =
                    render_table_frame(&scene, picture, &frame.hands, &frame.extras, noise).with_context(|| format!("frame {index}"))?;
                let file = format!("frame_{index:05}.png");
                let target = dir.join(&file);
                image.save(&target).with_context(|| format!("writing {}", target.display()))?;
                let entry = FrameEntry {
                    index,
                    file,
                    time_s: frame.time_s,
                    picture_index: frame.picture_index,
                    corners: frame_truth.corners,
                    fingertips: &frame_truth.fingertips,
                    extras: frame
                        .extras
                        .iter()
                        .map(|e| match e {
                            boardwatch::synth::TableExtra::Lean(_) => "lean",
                            boardwatch::synth::TableExtra::RestingArm(_) => "resting_arm",
                        })
                        .collect(),
                };
                lines.push(serde_json::to_string(&entry)?);
                if index % 25 == 24 {
                    tracing::info!("{} of {} frames, {:.1} s", index + 1, frames.len(), clock.elapsed().as_secs_f64());
                }
            }
            write_json(&dir.join("truth.json"), &truth)?;
            let frames_path = dir.join("frames.json");
            std::fs::write(&frames_path, format!("[\n{}\n]\n", lines.join(",\n"))).with_context(|| format!("writing {}", frames_path.display()))?;
            println!(
                "wrote {} frames ({:.1} s at {} fps, {} taps) and truth.json, frames.json to {} in {:.1} s",
                frames.len(),
                frames.len() as f64 / args.fps,
                args.fps,
                truth.taps.len(),
                dir.display(),
                clock.elapsed().as_secs_f64()
            );
            Ok(ExitCode::SUCCESS)
        }
        (None, None, _) => bail!("give --out FILE.png (a single frame) or --out-dir DIR (a session)"),
    }
}
