//! How late a camera tap reaches a page: `boardwatch run` records a board (the sample recording,
//! played at its pace) and follows a camera over a projected table (a rendered recording of taps,
//! played at its pace, as a camera would send it), and a page's client listens on the screen's
//! event stream. For every tap: from the moment its dwell ends (the recording's true time, from
//! when the daemon said the camera was on) to the tap event received, and the taps on their cell.
//!
//! `cargo bench --bench touch` (`--taps N`, default 30; `--no-board`: the camera alone). The
//! recording is made once, in `target/bench-touch`. Exits non-zero when fewer than 90% of the taps
//! arrive on their cell.

#[path = "../tests/daemon_common/mod.rs"]
mod daemon_common;
#[path = "../tests/touch_common/mod.rs"]
mod touch_common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use boardwatch::synth::table::{
    calibration_picture, grid_picture, plan_table_session, random_table_scene, table_session_truth, TableAction, TableScene, TableScript, TruthTap,
};
use boardwatch::touch::pattern::CalibrationPattern;
use daemon_common::{client, cpu_seconds, load_average, sample_video, temp_dir, write_config, Daemon, SseClient};
use rand::{Rng, SeedableRng};

const FPS: f64 = 12.0;
const COLS: usize = 10;
const ROWS: usize = 8;
/// How long the recording shows the calibration pattern first.
const PATTERN_SECONDS: f64 = 6.0;

struct Options {
    taps: usize,
    board: bool,
}

fn options() -> Options {
    let mut o = Options { taps: 30, board: true };
    let args: Vec<String> = std::env::args().collect();
    let mut i = 1;
    while i < args.len() {
        match args[i].as_str() {
            "--taps" => {
                o.taps = args.get(i + 1).and_then(|v| v.parse().ok()).expect("--taps needs a number");
                i += 1;
            }
            "--no-board" => o.board = false,
            _ => {}
        }
        i += 1;
    }
    o
}

/// A camera nearly above a 10x8 grid (the reading of hard views is measured by `touch_sessions`;
/// here it is the time from the camera to the page).
fn scene() -> TableScene {
    let mut scene = random_table_scene(34_002);
    scene.cols = COLS;
    scene.rows = ROWS;
    scene.width = 640;
    scene.height = 480;
    scene.camera.tilt_deg = scene.camera.tilt_deg.min(15.0);
    scene.camera.fill = 0.85;
    scene
}

/// The pattern, then `taps` taps on cells drawn at random, a second apart.
fn script(taps: usize) -> TableScript {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(34_002);
    let mut actions = vec![TableAction::PageChange { picture_index: 0 }, TableAction::Pause { seconds: PATTERN_SECONDS }];
    actions.push(TableAction::PageChange { picture_index: 1 });
    actions.push(TableAction::Pause { seconds: 1.5 });
    for _ in 0..taps {
        actions.push(TableAction::Tap { cell: [rng.gen_range(0..COLS), rng.gen_range(0..ROWS)], dwell_s: rng.gen_range(0.8..1.3), side: None });
        actions.push(TableAction::Pause { seconds: rng.gen_range(0.6..1.2) });
    }
    actions.push(TableAction::Pause { seconds: 2.0 });
    TableScript { actions }
}

fn recording(scene: &TableScene, script: &TableScript, taps: usize) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-touch");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("taps_{taps}.avi"));
    if !path.is_file() {
        eprintln!("rendering {} (once)", path.display());
        let pictures = vec![
            calibration_picture(&CalibrationPattern::for_grid(COLS, ROWS), 60 * COLS as u32, 60 * ROWS as u32),
            grid_picture(COLS, ROWS, 60, &|c, r| image::Rgb(if (c + r) % 2 == 0 { [235, 235, 225] } else { [200, 225, 240] })),
        ];
        let frames = plan_table_session(scene, script, FPS).unwrap();
        let partial = path.with_extension("partial.avi");
        touch_common::write_session_video(scene, &pictures, &frames, FPS, &partial);
        std::fs::rename(&partial, &path).unwrap();
    }
    path
}

fn main() {
    let options = options();
    let scene = scene();
    let script = script(options.taps);
    let truth = table_session_truth(&scene, &script, FPS).unwrap();
    let video = recording(&scene, &script, options.taps);

    let dir = temp_dir("touch-bench");
    let mut config = format!("[[screens]]\nname = \"table\"\nsource = {{ kind = \"video\", path = \"{}\" }}\n", video.display());
    if options.board {
        let board = sample_video().expect("the sample recording");
        config.push_str(&format!(
            "[[boards]]\nid = \"b1\"\nvariant = \"english\"\npalette = \"four-colour\"\nsource = {{ kind = \"video\", path = \"{}\" }}\n",
            board.display()
        ));
    }
    let config = write_config(&dir, &config);
    let daemon = Daemon::start(&config);
    let events = SseClient::connect(&daemon.url("/games/touch/table/events"));

    // The recording's clock starts when the daemon says the camera is on.
    let camera_on = wait_for(&events, Duration::from_secs(30), |m| m["camera"]["on"] == true).expect("the camera on");
    let calibrated = client()
        .post(daemon.url("/games/touch/table/calibrate"))
        .body(format!("{{\"game\": \"sokoban\", \"cols\": {COLS}, \"rows\": {ROWS}}}"))
        .header("Content-Type", "application/json")
        .send()
        .expect("calibration request");
    let status = calibrated.status();
    let answer = calibrated.text().unwrap_or_default();
    assert!(status.is_success(), "calibration: {status} {answer}");
    eprintln!("calibrated {:.1} s after the camera came on: {answer}", camera_on.elapsed().as_secs_f64());

    let cpu_before = cpu_seconds(daemon.child.id());
    let mut taps: Vec<(Instant, [usize; 2])> = Vec::new();
    let end = camera_on + Duration::from_secs_f64(truth.frames as f64 / FPS + 10.0);
    while Instant::now() < end {
        let Ok((_, message)) = events.received.recv_timeout(Duration::from_millis(200)) else { continue };
        let received = Instant::now();
        if let Some(cell) = message.get("tap").and_then(|t| serde_json::from_value::<[usize; 2]>(t["cell"].clone()).ok()) {
            taps.push((received, cell));
        }
        if message["camera"]["on"] == false && message["camera"]["message"].as_str().is_some_and(|m| m.contains("ended")) {
            break;
        }
    }
    let cpu = cpu_seconds(daemon.child.id()).zip(cpu_before).map(|(a, b)| a - b);
    let seconds = camera_on.elapsed().as_secs_f64();
    if options.board {
        // The board was recorded meanwhile (its game is longer than the taps' recording).
        let moves = daemon.get_json("/boards/b1")["game"]["moves"].as_array().map_or(0, |m| m.len());
        println!("the board recorded {moves} moves meanwhile");
        assert!(moves >= 20, "the board recorded only {moves} moves");
    }
    report(&truth.taps, &taps, camera_on, options.board, cpu.map(|c| c / seconds));
}

fn wait_for(events: &SseClient, limit: Duration, check: impl Fn(&serde_json::Value) -> bool) -> Option<Instant> {
    let deadline = Instant::now() + limit;
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        let (_, message) = events.received.recv_timeout(left).ok()?;
        if check(&message) {
            return Some(Instant::now());
        }
    }
    None
}

/// Each received tap belongs to the intended tap whose dwell ended last before it.
fn report(intended: &[TruthTap], received: &[(Instant, [usize; 2])], camera_on: Instant, board: bool, cores: Option<f64>) {
    let mut latencies = Vec::new();
    let (mut right, mut wrong, mut unmatched) = (0, 0, 0);
    let mut used = vec![false; intended.len()];
    for (at, cell) in received {
        let t = at.duration_since(camera_on).as_secs_f64();
        let owner = intended.iter().enumerate().rfind(|(i, tap)| !used[*i] && tap.dwell_end_s <= t && t - tap.dwell_end_s < 1.5);
        match owner {
            Some((i, tap)) => {
                used[i] = true;
                if tap.cell == *cell {
                    right += 1;
                    latencies.push(t - tap.dwell_end_s);
                } else {
                    wrong += 1;
                }
            }
            None => unmatched += 1,
        }
    }
    latencies.sort_by(f64::total_cmp);
    let at = |q: f64| latencies.get(((latencies.len() as f64 - 1.0) * q).round() as usize).copied().unwrap_or(f64::NAN) * 1000.0;
    println!(
        "camera taps{}: {right} of {} on their cell, {wrong} on another cell, {unmatched} not matched; dwell end to the page's event: \
         median {:.0} ms, p90 {:.0} ms, max {:.0} ms{}",
        if board { " (the daemon also recording a board)" } else { "" },
        intended.len(),
        at(0.5),
        at(0.9),
        at(1.0),
        cores.map_or(String::new(), |c| format!("; the daemon used {c:.2} cores"))
    );
    println!("load average {}", load_average());
    if (right as f64) < 0.9 * intended.len() as f64 {
        eprintln!("too few taps on their cell");
        std::process::exit(1);
    }
}
