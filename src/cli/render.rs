//! `boardwatch render`: synthetic camera frames of a position, or a whole game as a recording
//! (PNG frames plus a truth file), for testing the vision pipeline without a camera.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use boardwatch::draughts::fen::parse_fen;
use boardwatch::draughts::game::replay_choosing;
use boardwatch::draughts::pdn::GameRecord;
use boardwatch::draughts::{Position, Variant};
use boardwatch::synth::recording::{frame_scene, frame_seed, plan_recording, GameMoves, RecordingOptions, RecordingTruth};
use boardwatch::synth::{random_scene, render_frame, unseen_board_scene, FrameTruth, Hand, Palette, Scene};
use clap::Args;
use serde::Serialize;

#[derive(Args)]
pub struct RenderArgs {
    /// The position as a PDN FEN (e.g. `W:W21-32:B1-12`); the default is the start position.
    #[arg(long, conflicts_with_all = ["grid", "game"])]
    fen: Option<String>,
    /// The position as 8 rows of `.bBwW` separated by `/`, row 0 (Black's edge) first.
    #[arg(long, conflicts_with = "game")]
    grid: Option<String>,
    /// Render a whole game of this PDN file as a recording into --out-dir.
    #[arg(long, requires = "out_dir")]
    game: Option<PathBuf>,
    /// Which game of the file (0-based, counting every game in it).
    #[arg(long, default_value_t = 0)]
    game_index: usize,
    /// Rule set for the FEN and the game: pool, brazilian, russian, english, italian, spanish,
    /// czech. A FEN is read as English checkers by default; a game under its GameType tag, or
    /// without one under the rules it replays legally under (English checkers first).
    #[arg(long)]
    variant: Option<Variant>,
    /// Piece look: four-colour (red/blue against yellow/green, the original program's) or wooden (dark against light, stacked kings).
    #[arg(long, default_value = "four-colour")]
    palette: Palette,
    /// A board and two-colour set no palette was made for: random square, border and piece
    /// colours, 3-D men of any size, tilt up to 35 degrees (drawn from --seed).
    #[arg(long, conflicts_with = "scene")]
    unseen_board: bool,
    /// Seed of the random scene (viewpoint, light, effects) and of the sensor noise.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Use this scene instead of a random one: a scene's JSON, or a truth file holding one
    /// (`scene` of a frame's, `scene_params` of a recording's).
    #[arg(long)]
    scene: Option<PathBuf>,
    /// Camera tilt from vertical in degrees (0-35), overriding the scene's.
    #[arg(long)]
    tilt: Option<f64>,
    /// Rotation of the board in the image in degrees, clockwise, overriding the scene's.
    #[arg(long)]
    yaw: Option<f64>,
    #[arg(long)]
    width: Option<u32>,
    #[arg(long)]
    height: Option<u32>,
    /// No glare, gradient, vignette, noise, blur or lens distortion.
    #[arg(long)]
    clean: bool,
    /// Put a hand over the board (single frames).
    #[arg(long, conflicts_with = "game")]
    hand: bool,
    /// The PNG to write (single frames).
    #[arg(long, required_unless_present = "game")]
    out: Option<PathBuf>,
    /// Also write the scene and the frame's ground truth as JSON.
    #[arg(long)]
    truth: Option<PathBuf>,
    /// Folder for a recording's frames (`frame_00000.png`, ...) and `truth.json`.
    #[arg(long)]
    out_dir: Option<PathBuf>,
    /// Frames per second of the recording.
    #[arg(long, default_value_t = 10.0)]
    fps: f64,
    /// How long each position stands still between two hands, in seconds (each pause is 0.8
    /// to 1.25 times this, as people's are; a capture's intermediate state 0.8 times that).
    /// 1 s is unhurried play; 0.45 s is quick play at tournament speed.
    #[arg(long, default_value_t = 1.0)]
    still: f64,
    /// Stop the recording after this many plies.
    #[arg(long)]
    max_plies: Option<usize>,
}

#[derive(Serialize)]
struct SingleFrameReport<'a> {
    seed: u64,
    scene: &'a Scene,
    truth: &'a FrameTruth,
}

fn build_scene(args: &RenderArgs) -> anyhow::Result<Scene> {
    let mut scene = match &args.scene {
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
            let mut value: serde_json::Value = serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?;
            for key in ["scene", "scene_params"] {
                if value.get(key).is_some_and(|v| v.is_object()) {
                    value = value[key].take();
                    break;
                }
            }
            serde_json::from_value(value).with_context(|| format!("{}: not a scene", path.display()))?
        }
        None if args.unseen_board => unseen_board_scene(args.seed),
        None => random_scene(args.seed, args.palette),
    };
    if let Some(tilt) = args.tilt {
        scene.camera.tilt_deg = tilt;
    }
    if let Some(yaw) = args.yaw {
        scene.camera.yaw_deg = yaw;
    }
    if let Some(width) = args.width {
        scene.width = width;
    }
    if let Some(height) = args.height {
        scene.height = height;
    }
    if args.clean {
        scene.glare.clear();
        scene.lighting.gradient_strength = 0.0;
        scene.lighting.vignette = 0.0;
        scene.noise_sigma = 0.0;
        scene.blur_sigma = 0.0;
        scene.camera.k1 = 0.0;
    }
    scene.validate().context("scene")?;
    Ok(scene)
}

fn parse_grid_arg(text: &str) -> anyhow::Result<[String; 8]> {
    let rows: Vec<String> = text.split(['/', ',']).map(|r| r.trim().to_string()).collect();
    let Ok(grid) = <[String; 8]>::try_from(rows) else {
        bail!("--grid: expected 8 rows separated by `/`");
    };
    boardwatch::synth::parse_grid(&grid).context("--grid")?;
    Ok(grid)
}

pub fn run(args: RenderArgs) -> anyhow::Result<ExitCode> {
    let scene = build_scene(&args)?;
    match &args.game {
        Some(game) => run_game(&args, scene, game),
        None => run_single(&args, scene),
    }
}

fn run_single(args: &RenderArgs, scene: Scene) -> anyhow::Result<ExitCode> {
    let rules = args.variant.unwrap_or(Variant::English).rules();
    let grid = match (&args.grid, &args.fen) {
        (Some(text), _) => parse_grid_arg(text)?,
        (None, Some(fen)) => parse_fen(fen, &rules).context("--fen")?.to_grid(),
        (None, None) => Position::start(&rules).to_grid(),
    };
    let hand = args.hand.then(|| Hand::random(args.seed));
    let clock = Instant::now();
    let (image, truth) = render_frame(&scene, &grid, hand.as_ref(), args.seed)?;
    tracing::info!("rendered {}x{} in {:.3} s", scene.width, scene.height, clock.elapsed().as_secs_f64());
    let out = args.out.as_deref().context("--out is required")?;
    image.save(out).with_context(|| format!("writing {}", out.display()))?;
    if let Some(path) = &args.truth {
        let report = SingleFrameReport { seed: args.seed, scene: &scene, truth: &truth };
        write_json(path, &report)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn write_json(path: &Path, value: &impl Serialize) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(value)?;
    std::fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))
}

/// One line of a recording's `frames.json`: what a test of the vision needs per frame (the
/// full truth of any frame can be had again from the scene, the plan and the seed).
#[derive(Serialize)]
struct FrameEntry<'a> {
    index: usize,
    file: String,
    label: &'a str,
    grid: &'a [String; 8],
    corners: [[f64; 2]; 4],
    hand_visible: bool,
    hand_covered: Vec<[u8; 2]>,
}

/// The rules to render a game under: `--variant`, else its GameType tag, else those it replays
/// legally under (said on stderr).
fn game_variant(record: &GameRecord, given: Option<Variant>) -> anyhow::Result<Variant> {
    if let Some(variant) = given {
        return Ok(variant);
    }
    let read = replay_choosing(record, None).map_err(anyhow::Error::msg)?;
    match (super::pdn::read_as_note(&read), &read.replay) {
        // Its first moves may still be worth rendering (`--max-plies`): the render stops at the bad one.
        (Some(note), Err(e)) => eprintln!("warning: {note}: {e}"),
        (Some(note), Ok(_)) => eprintln!("{note}"),
        (None, _) => {}
    }
    Ok(read.variant)
}

fn run_game(args: &RenderArgs, scene: Scene, path: &Path) -> anyhow::Result<ExitCode> {
    if !(args.still.is_finite() && (0.1..=30.0).contains(&args.still)) {
        anyhow::bail!("--still {}: the pause between hands must be 0.1 to 30 seconds", args.still);
    }
    // Defective games are left out (with a warning) and do not shift the others' numbers.
    let read = super::pdn::read_file_reporting(path)?;
    let number = args.game_index + 1;
    if let Some(d) = read.defects.iter().find(|d| d.game == number) {
        anyhow::bail!("{}: game index {} is defective: {}", path.display(), args.game_index, d.error);
    }
    let record = read.games.iter().find(|g| g.number == number).with_context(|| {
        format!("{} has {} games, no game {}", path.display(), read.games_in_text(), args.game_index)
    })?;
    let variant = game_variant(record, args.variant).with_context(|| format!("{}: game index {}", path.display(), args.game_index))?;
    let game = GameMoves::from_record(record, variant, args.max_plies).with_context(|| format!("game {}", args.game_index))?;
    let options = RecordingOptions { fps: args.fps, still_seconds: args.still, seed: args.seed, ..RecordingOptions::default() };
    let frames = plan_recording(&game, &scene, &options)?;
    let out_dir = args.out_dir.as_deref().context("--out-dir is required with --game")?;
    std::fs::create_dir_all(out_dir).with_context(|| format!("creating {}", out_dir.display()))?;

    let clock = Instant::now();
    let mut entries = Vec::with_capacity(frames.len());
    for (index, frame) in frames.iter().enumerate() {
        let frame_scene = frame_scene(&scene, &options, index);
        let (image, truth) = render_frame(&frame_scene, &frame.grid, frame.hand.as_ref(), frame_seed(&options, index))
            .with_context(|| format!("frame {index}"))?;
        let file = format!("frame_{index:05}.png");
        let target = out_dir.join(&file);
        image.save(&target).with_context(|| format!("writing {}", target.display()))?;
        entries.push(FrameEntry {
            index,
            file,
            label: &frame.label,
            grid: &frame.grid,
            corners: truth.corners,
            hand_visible: truth.hand_visible,
            hand_covered: truth.hand_covered,
        });
        if index % 50 == 49 {
            tracing::info!("{} of {} frames, {:.1} s", index + 1, frames.len(), clock.elapsed().as_secs_f64());
        }
    }

    let truth = RecordingTruth {
        source: path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        game_index: args.game_index,
        tags: record.tags.iter().cloned().collect(),
        variant,
        palette: scene.palette.name().to_string(),
        scene: "synthetic".to_string(),
        tilt: scene.camera.tilt_deg,
        yaw: scene.camera.yaw_deg,
        fps: options.fps,
        frames: frames.len(),
        plies: game.plies.clone(),
        start_grid: game.start.to_grid(),
        final_grid: game.final_position().to_grid(),
        frame_labels: frames.iter().map(|f| f.label.clone()).collect(),
        frame_files: entries.iter().map(|e| e.file.clone()).collect(),
        scene_params: scene.clone(),
        options: options.clone(),
    };
    write_json(&out_dir.join("truth.json"), &truth)?;
    // One frame per line: readable, and an order of magnitude smaller than pretty-printed.
    let lines: Vec<String> = entries.iter().map(serde_json::to_string).collect::<Result<_, _>>()?;
    let frames_json = format!("[\n{}\n]\n", lines.join(",\n"));
    let frames_path = out_dir.join("frames.json");
    std::fs::write(&frames_path, frames_json).with_context(|| format!("writing {}", frames_path.display()))?;
    println!(
        "wrote {} frames ({:.1} s of video) and truth.json, frames.json to {} in {:.1} s",
        frames.len(),
        frames.len() as f64 / options.fps,
        out_dir.display(),
        clock.elapsed().as_secs_f64()
    );
    println!(
        "encode: ffmpeg -framerate {} -i {}/frame_%05d.png -c:v libx264 -preset slow -crf 28 -g 50 -pix_fmt yuv420p recording.mp4",
        options.fps,
        out_dir.display()
    );
    Ok(ExitCode::SUCCESS)
}
