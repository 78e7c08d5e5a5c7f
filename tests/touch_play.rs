//! End to end: `boardwatch play --camera` follows a rendered recording of a table where Microban 1
//! is solved by taps. The page in projector mode (headless Chromium) calibrates the camera from
//! the projected pattern, receives the taps and plays them through the same game room as the
//! mouse; the room's record equals the moves the taps were meant to make. Skipped, with a note,
//! when Chromium is not installed.

mod chrome_common;
mod daemon_common;
mod play_common;
mod touch_common;

use std::path::Path;
use std::time::Duration;

use boardwatch::games::sokoban::game::Game;
use boardwatch::games::sokoban::level::{parse_collection, Level};
use boardwatch::games::sokoban::solver::{solve, Outcome};
use boardwatch::games::sokoban::LURD_LETTERS;
use boardwatch::synth::table::{
    calibration_picture, plan_table_session, random_table_scene, sokoban_picture, table_session_truth, TableAction, TableScript,
};
use boardwatch::touch::pattern::CalibrationPattern;
use chrome_common::{calibrate_projector_camera, chromium, eval, launch, wait_for};
use play_common::{get, start_play, wait_until_camera_ended};

const FPS: f64 = 10.0;
/// How long the recording shows the pattern first: time for the browser to start and ask.
const PATTERN_SECONDS: f64 = 20.0;

/// The pushes of a solution as drags: each box's run of pushes, from its cell to where it ends.
fn drags(level: &Level, lurd: &str) -> Vec<(usize, usize)> {
    let mut game = Game::new(level.clone());
    let mut out: Vec<(usize, usize)> = Vec::new();
    for letter in lurd.chars() {
        let direction = LURD_LETTERS.iter().position(|l| *l == letter.to_ascii_lowercase()).expect("a LURD letter");
        let before = game.position.boxes.clone();
        assert!(game.step(direction), "the solution's step {letter}");
        let from = (0..before.len()).find(|&c| before[c] && !game.position.boxes[c]);
        let to = (0..before.len()).find(|&c| !before[c] && game.position.boxes[c]);
        if let (Some(from), Some(to)) = (from, to) {
            match out.last_mut() {
                Some(last) if last.1 == from => last.1 = to,
                _ => out.push((from, to)),
            }
        }
    }
    out
}

#[test]
fn a_sokoban_level_is_solved_by_taps_the_camera_sees() {
    let Some(browser_binary) = chromium() else {
        eprintln!("skipped: Chromium is not installed");
        return;
    };
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/sokoban/microban_155.xsb")).unwrap();
    let level = parse_collection(&text).unwrap().remove(0);
    let Outcome::Solved { lurd, .. } = solve(&level, None, &Default::default()) else { panic!("Microban 1 is solved") };
    let plan = drags(&level, &lurd);
    // What the room should record: the same drags, as the server makes them.
    let mut expected = Game::new(level.clone());
    let mut pictures = vec![
        calibration_picture(&CalibrationPattern::for_grid(level.width, level.height), 60 * level.width as u32, 60 * level.height as u32),
        sokoban_picture(&expected.position, 60),
    ];
    let mut actions = vec![TableAction::PageChange { picture_index: 0 }, TableAction::Pause { seconds: PATTERN_SECONDS }];
    actions.push(TableAction::PageChange { picture_index: 1 });
    actions.push(TableAction::Pause { seconds: 1.5 });
    let cell = |c: usize| [c % level.width, c / level.width];
    for &(from, to) in &plan {
        actions.push(TableAction::Tap { cell: cell(from), dwell_s: 1.0, side: None });
        actions.push(TableAction::Pause { seconds: 1.0 });
        actions.push(TableAction::Tap { cell: cell(to), dwell_s: 1.0, side: None });
        assert!(expected.drag_box(from, to), "the drag {from} -> {to}");
        pictures.push(sokoban_picture(&expected.position, 60));
        actions.push(TableAction::PageChange { picture_index: pictures.len() - 1 });
        actions.push(TableAction::Pause { seconds: 0.8 });
    }
    actions.push(TableAction::Pause { seconds: 2.0 });
    assert!(expected.is_solved());
    let script = TableScript { actions };

    // The plumbing is under test here, not the reading of hard views (`touch_sessions` measures
    // those): a camera nearly above the table, the grid large in the view.
    let mut scene = random_table_scene(34_001);
    scene.cols = level.width;
    scene.rows = level.height;
    scene.width = 640;
    scene.height = 480;
    scene.camera.tilt_deg = scene.camera.tilt_deg.min(8.0);
    scene.camera.fill = 0.85;
    let truth = table_session_truth(&scene, &script, FPS).unwrap();
    assert_eq!(truth.taps.len(), 2 * plan.len());
    let frames = plan_table_session(&scene, &script, FPS).unwrap();
    let video = Path::new(env!("CARGO_TARGET_TMPDIR")).join("touch_play_microban1.avi");
    touch_common::write_session_video(&scene, &pictures, &frames, FPS, &video);

    let server = start_play(&["--camera", video.to_str().unwrap()]);
    let (browser, tab) = launch(browser_binary);
    tab.navigate_to(&server.url("/sokoban?projector=1")).unwrap().wait_until_navigated().unwrap();
    wait_for(&tab, "the level", "typeof game !== 'undefined' && game && game.number", |v| v == 1);
    let calibration = calibrate_projector_camera(&tab);
    eprintln!("calibrated: {calibration}");

    wait_until_camera_ended(&server, Duration::from_secs(frames.len() as u64 / FPS as u64 + 60));
    let taps = eval(&tab, "Projector.touchState().taps.map(t => t.cell)");
    let intended: Vec<[usize; 2]> = truth.taps.iter().map(|t| t.cell).collect();
    assert_eq!(taps, serde_json::json!(intended), "the taps the page received");
    let lurd_seen = eval(&tab, "game.lurd");
    assert_eq!(lurd_seen, serde_json::json!(expected.lurd()), "the room's record");
    let id = eval(&tab, "game.id");
    let (_, room) = get(&server, &format!("/sokoban/games/{}", id.as_str().unwrap()));
    assert_eq!(room["lurd"], serde_json::json!(expected.lurd()), "the room on the server: {room}");
    drop(browser);
}
