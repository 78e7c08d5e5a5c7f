//! `boardwatch replay`: a recorded game from video to PDN, as fast as the machine decodes it.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use boardwatch::draughts::Variant;
use boardwatch::pipeline::BoardPipeline;
use boardwatch::publish::recorder::Recorder;
use boardwatch::publish::records::{InputOrigin, PdnFiles};
use boardwatch::tracker::{Command, EventKind, Input, KingStyle, TrackerConfig};
use boardwatch::vision::capture::{Capture, Captured, Policy};
use boardwatch::vision::source::VideoSource;
use boardwatch::vision::{Calibration, ColourModel, FrameSource, SquareReader, WatchConfig, Watcher};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use super::overlay_video::OverlayVideo;

#[derive(Args)]
pub struct ReplayArgs {
    /// The recorded video (any format OpenCV's FFmpeg backend reads).
    video: PathBuf,
    #[arg(long, default_value = "english")]
    variant: Variant,
    /// Colour model: `four-colour` (red/yellow men, blue/green kings, the original program's), `wooden`, or a palette file.
    #[arg(long, default_value = "four-colour")]
    palette: String,
    /// A calibration made by `boardwatch calibrate`; without one the first still start
    /// position calibrates the session.
    #[arg(long)]
    calibration: Option<PathBuf>,
    /// Who reads the playing squares: the colours, or the learnt square model, fine-tuned on
    /// the start position (or the calibration's, when it was made with `--squares learnt`).
    #[arg(long, value_enum, default_value_t = SquareReader::default())]
    squares: SquareReader,
    /// Whether kings have their own colour (`visible`) or are stacked men (`stacked`);
    /// by default: visible for palettes with king colours.
    #[arg(long)]
    kings: Option<KingStyle>,
    /// Write the game record here (replaced atomically).
    #[arg(long)]
    pdn: Option<PathBuf>,
    /// Write the event log here: one JSON line per board state handed to the tracker (with its
    /// frame number and video time) and the events it caused, as the daemon's `events.jsonl`.
    #[arg(long)]
    log: Option<PathBuf>,
    /// Replace an existing --log file instead of refusing to touch it.
    #[arg(long)]
    overwrite: bool,
    #[arg(long)]
    event: Option<String>,
    #[arg(long)]
    site: Option<String>,
    #[arg(long)]
    date: Option<String>,
    #[arg(long)]
    round: Option<String>,
    #[arg(long)]
    white: Option<String>,
    #[arg(long)]
    black: Option<String>,
    /// Also write what was seen as a video (board crop, grid, each square's reading, status),
    /// 720x752 px at the recording's frame rate: Motion-JPEG for `.avi`, MPEG-4 otherwise.
    /// Encoding slows the replay down.
    #[arg(long, value_name = "OUT")]
    overlay_video: Option<PathBuf>,
    /// Only decode the frames and report the speed (the benchmark's baseline).
    #[arg(long, hide = true)]
    decode_only: bool,
    /// Read the squares on every frame, as before frames were skipped (for comparisons).
    #[arg(long, hide = true)]
    read_every_frame: bool,
}

fn game_tags(args: &ReplayArgs) -> Vec<(String, String)> {
    [("Event", &args.event), ("Site", &args.site), ("Date", &args.date), ("Round", &args.round), ("White", &args.white), ("Black", &args.black)]
        .into_iter()
        .filter_map(|(name, value)| value.as_ref().map(|v| (name.to_string(), v.clone())))
        .collect()
}

/// An existing log is never continued nor overwritten without `--overwrite`.
fn clear_log(path: &Path, overwrite: bool) -> anyhow::Result<()> {
    if path.exists() {
        if !overwrite {
            bail!("--log {}: the file exists; choose another name or pass --overwrite", path.display());
        }
        std::fs::remove_file(path).with_context(|| format!("--log {}", path.display()))?;
    }
    Ok(())
}

fn progress_bar(frames: Option<u64>) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = frames.map_or_else(ProgressBar::new_spinner, ProgressBar::new);
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} frames {per_sec} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    Some(bar)
}

pub fn run(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    let mut source = VideoSource::open_file(&args.video).with_context(|| format!("{}", args.video.display()))?;
    let total = source.frame_count();
    let fps = source.fps();
    if args.decode_only {
        return decode_only(&mut source, total);
    }
    let config = WatchConfig { read_every_frame: args.read_every_frame, squares: args.squares, ..WatchConfig::default() };
    let watcher = match &args.calibration {
        Some(path) => {
            let cal = Calibration::load(path).with_context(|| format!("--calibration {}", path.display()))?;
            Watcher::with_calibration(&cal, config)?
        }
        None => {
            let palette = ColourModel::named(&args.palette).context("--palette")?;
            Watcher::new(palette, config)?
        }
    };
    let kings = args.kings.unwrap_or(if watcher.palette().dark_king.is_some() { KingStyle::Visible } else { KingStyle::Stacked });
    let mut pipeline = BoardPipeline::new(watcher);
    if let Some(path) = &args.log {
        clear_log(path, args.overwrite)?;
    }
    let pdn_files = PdnFiles::at(None, args.pdn.clone(), game_tags(&args));
    let (mut recorder, _) = Recorder::open(TrackerConfig::new(args.variant, kings), args.log.as_deref(), pdn_files)?;
    // The game starts at the standard position, as the daemon starts a new board's.
    recorder.step(InputOrigin::Operator, None, Input::Command(Command::Init))?;
    let mut overlay = args.overlay_video.as_deref().map(|p| OverlayVideo::create(p, fps)).transpose()?;

    // The vision work on this thread alone, so that its CPU time is the whole cost of the
    // pipeline (and its readings the daemon's).
    boardwatch::vision::opencv_on_calling_threads().context("OpenCV threads")?;
    let bar = progress_bar(total);
    let (cpu_start, vision_cpu_start) = (process_cpu_secs(), thread_cpu_secs());
    let clock = Instant::now();
    let mut last_report = Instant::now();
    let (mut frames, mut moves) = (0u64, 0usize);
    let policy = Policy::File { realtime: false, skip_through: 0 };
    let decoder = Capture::start("decode", policy, move || Ok::<_, String>(Box::new(source) as Box<dyn FrameSource>))
        .context("starting the decoding thread")?;
    for captured in decoder.iter() {
        let frame = match captured {
            Captured::Frame(frame) => frame,
            Captured::Opened(_) => continue,
            Captured::End => break,
            Captured::Failed(why) => bail!("{}: {why}", args.video.display()),
        };
        frames += 1;
        let step = pipeline.process(&frame, Some(frame.index), &mut recorder).with_context(|| format!("{} frame {}", args.video.display(), frame.index))?;
        if let Some(overlay) = overlay.as_mut() {
            overlay.write(&frame.image, &step.frame)?;
        }
        for event in step.events {
            if event.kind == EventKind::Move {
                moves += 1;
                let line = format!("{:>7.2}s  {}  {}", frame.t, event.line, event.mv.as_deref().unwrap_or(""));
                match &bar {
                    Some(bar) => bar.println(line),
                    None => println!("{line}"),
                }
            } else if matches!(event.kind, EventKind::Error | EventKind::Uncertain) {
                tracing::info!(frame = frame.index, t = frame.t, "{}", event.line);
            }
        }
        match &bar {
            Some(bar) => {
                bar.set_position(frames);
                bar.set_message(format!("{moves} moves"));
            }
            None if last_report.elapsed() > Duration::from_secs(5) => {
                last_report = Instant::now();
                eprintln!("{frames} frames, {moves} moves, {:.0} frames/s", frames as f64 / clock.elapsed().as_secs_f64());
            }
            None => {}
        }
    }
    if !decoder.join() {
        bail!("{}: the decoding thread failed", args.video.display());
    }
    if let Some(overlay) = overlay {
        overlay.finish()?;
    }
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let seconds = clock.elapsed().as_secs_f64();
    let vision_cpu = thread_cpu_secs() - vision_cpu_start;
    let decode_cpu = (process_cpu_secs() - cpu_start - vision_cpu).max(0.0);
    recorder.flush().with_context(|| format!("--pdn {}", args.pdn.as_deref().unwrap_or(Path::new("")).display()))?;
    println!("\n{}", recorder.pdn().all().context("reading the games back")?);
    eprintln!(
        "{frames} frames in {seconds:.1} s ({:.0} frames/s), {moves} moves; squares read on {} frames",
        frames as f64 / seconds.max(1e-9),
        pipeline.watcher.frames_read()
    );
    if frames > 0 {
        let per_frame = |cpu: f64| cpu * 1e3 / frames as f64;
        eprintln!(
            "CPU time a frame: vision and tracking {:.2} ms, decoding (all other threads) {:.2} ms",
            per_frame(vision_cpu),
            per_frame(decode_cpu)
        );
    }
    if frames == 0 {
        bail!("{}: no frame could be decoded", args.video.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// CPU seconds used by the whole process so far (0 if the system cannot tell).
fn process_cpu_secs() -> f64 {
    cpu_clock(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// CPU seconds used by the calling thread so far (0 if the system cannot tell).
fn thread_cpu_secs() -> f64 {
    cpu_clock(libc::CLOCK_THREAD_CPUTIME_ID)
}

fn cpu_clock(clock: libc::clockid_t) -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime only writes the timespec it is given.
    if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn decode_only(source: &mut VideoSource, total: Option<u64>) -> anyhow::Result<ExitCode> {
    let cpu_start = process_cpu_secs();
    let clock = Instant::now();
    let mut frames = 0u64;
    while source.next_frame()?.is_some() {
        frames += 1;
    }
    let seconds = clock.elapsed().as_secs_f64();
    println!(
        "decoded {frames} frames (file says {}) in {seconds:.2} s: {:.0} frames/s, {:.2} ms CPU a frame",
        total.map_or("?".into(), |t| t.to_string()),
        frames as f64 / seconds.max(1e-9),
        (process_cpu_secs() - cpu_start) * 1e3 / frames.max(1) as f64
    );
    Ok(ExitCode::SUCCESS)
}
