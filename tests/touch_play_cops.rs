//! End to end: `boardwatch play --camera` follows a rendered recording of a table where a game of
//! Cops and Robbers on the classic map is played by taps (Thief Team: a tap on a highlighted
//! square next to the thief moves him there). The computer's policemen answer in the game room
//! as in any game; the recording is planned against those answers, played out beforehand with
//! the same classic players and the game's own random numbers. The page in projector mode
//! (headless Chromium) calibrates the camera from the projected pattern and receives the taps;
//! the room's record equals the game the recording shows, and the page shows its end. Skipped,
//! with a note, when Chromium is not installed.

mod chrome_common;
mod daemon_common;
mod play_common;
mod touch_common;

use std::collections::VecDeque;
use std::path::Path;
use std::time::{Duration, Instant};

use boardwatch::games::cops::record::{Ai, RecordLine};
use boardwatch::games::cops::{Game, Map, Mode, Piece, Square, Team};
use boardwatch::synth::table::{
    calibration_picture, cops_picture, plan_table_session, random_table_scene, table_session_truth, Side, TableAction, TableScript,
};
use boardwatch::touch::pattern::CalibrationPattern;
use chrome_common::{calibrate_projector_camera, chromium, eval, launch, wait_for};
use headless_chrome::protocol::cdp::Page::CaptureScreenshotFormatOption;
use play_common::{post, start_play, wait_until_camera_ended};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::json;

const FPS: f64 = 10.0;
/// How long the recording shows the pattern first: time for the browser to start and ask (3.5 s
/// on a busy machine).
const PATTERN_SECONDS: f64 = 15.0;
/// The game room's random numbers, given when the game starts, so that the policemen's answers
/// can be known before the recording is made.
const GAME_NUMBERS: u64 = 34;
/// Pixels a cell in the projected pictures.
const PX: u32 = 30;

/// The game the recording shows: the human's thief steps, and the room's record of the whole game.
struct Planned {
    /// The squares the thief is moved to, in order: one tap each.
    steps: Vec<Square>,
    record: Vec<RecordLine>,
    /// The position after the start and after each of the human's moves with the answers to it,
    /// with the squares the page highlights (none once the game is over).
    pages: Vec<(Game, Vec<Square>)>,
    end: Game,
}

/// Road distances from `from` to every square (`u32::MAX`: unreachable).
fn distances(map: &Map, from: Square) -> Vec<u32> {
    let mut distance = vec![u32::MAX; map.road.len()];
    distance[from as usize] = 0;
    let mut queue = VecDeque::from([from]);
    while let Some(square) = queue.pop_front() {
        for next in map.road_neighbours(square) {
            if distance[next as usize] == u32::MAX {
                distance[next as usize] = distance[square as usize] + 1;
                queue.push_back(next);
            }
        }
    }
    distance
}

/// A short game, Thief Team against the classic police: the human's thief walks towards the
/// nearer policeman (the first of the best steps, in the order the rules list them) until he is
/// caught. The policemen's answers are the room's: the classic player with the room's random
/// numbers, and a piece with no step stays, as the room plays it.
fn plan_game(map: &Map) -> Planned {
    let mut rng = ChaCha8Rng::seed_from_u64(GAME_NUMBERS);
    let mut game = Game::new(map, Mode::Thief);
    let mut record = vec![RecordLine::start(map, Mode::Thief, "classic", "human", GAME_NUMBERS)];
    let mut steps = Vec::new();
    let mut pages = Vec::new();
    let play = |game: &mut Game, step: Option<Square>, record: &mut Vec<RecordLine>| {
        let (piece, from) = (game.to_move, game.positions.of(game.to_move));
        game.play(map, step).unwrap_or_else(|e| panic!("{piece:?}'s move {step:?}: {e}"));
        record.push(RecordLine::moved(map, game, piece, from));
    };
    loop {
        // What the room plays without waiting for the human.
        while game.outcome.is_none() && (game.to_move.team() == Team::Police || game.legal_steps(map).is_empty()) {
            let step =
                if game.to_move.team() == Team::Police { Ai::Classic.choose(map, None, &game.positions, game.to_move, &mut rng) } else { None };
            play(&mut game, step, &mut record);
        }
        let legal = if game.outcome.is_none() { game.legal_steps(map) } else { Vec::new() };
        pages.push((game.clone(), legal.clone()));
        if game.outcome.is_some() {
            break;
        }
        assert_eq!(game.to_move, Piece::Thief);
        let police = [distances(map, game.positions.police1), distances(map, game.positions.police2)];
        let step = *legal.iter().min_by_key(|s| police[0][**s as usize].min(police[1][**s as usize])).expect("the thief has a step");
        steps.push(step);
        play(&mut game, Some(step), &mut record);
    }
    record.push(RecordLine::end(game.outcome.as_ref().expect("the game ended")));
    Planned { steps, record, pages, end: game }
}

#[test]
fn a_cops_and_robbers_game_is_played_by_taps_the_camera_sees() {
    let Some(browser_binary) = chromium() else {
        eprintln!("skipped: Chromium is not installed");
        return;
    };
    let map_text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/cops/board1.txt")).unwrap();
    let map = Map::parse(&map_text).unwrap();
    let planned = plan_game(&map);
    let moves = planned.record.iter().filter(|l| matches!(l, RecordLine::Move { .. })).count();
    eprintln!("the game: {} taps, {moves} moves, {:?}", planned.steps.len(), planned.end.outcome);
    assert!(planned.steps.len() >= 5, "a game of a few taps at least: {} taps", planned.steps.len());
    let cell = |square: Square| {
        let (row, col) = map.row_column(square);
        [col, row]
    };

    let mut pictures = vec![calibration_picture(&CalibrationPattern::for_grid(map.width, map.height), PX * map.width as u32, PX * map.height as u32)];
    for (game, legal) in &planned.pages {
        pictures.push(cops_picture(&map, game.positions, legal, PX));
    }
    let mut actions = vec![TableAction::PageChange { picture_index: 0 }, TableAction::Pause { seconds: PATTERN_SECONDS }];
    actions.push(TableAction::PageChange { picture_index: 1 });
    actions.push(TableAction::Pause { seconds: 1.5 });
    for (k, &step) in planned.steps.iter().enumerate() {
        actions.push(TableAction::Tap { cell: cell(step), dwell_s: 1.4, side: None });
        actions.push(TableAction::PageChange { picture_index: k + 2 });
        actions.push(TableAction::Pause { seconds: 1.2 });
    }
    actions.push(TableAction::Pause { seconds: 2.0 });
    let script = TableScript { actions };

    // As in the Sokoban game: the plumbing is under test, not the reading of hard views. The
    // classic map's 20x20 cells are small in a 640x480 view: the camera nearly above the table
    // and square to the grid, the grid as large in the view as it goes, 3.5 cm cells, one player
    // at the bottom side, and a lit room (in a dark one a finger over the dark buildings is lost
    // and the tip is read at the knuckles, cells away).
    let mut scene = random_table_scene(34_004);
    scene.cols = map.width;
    scene.rows = map.height;
    scene.width = 640;
    scene.height = 480;
    scene.rect_width_cm = 70.0;
    scene.camera.tilt_deg = scene.camera.tilt_deg.min(8.0);
    scene.camera.yaw_deg = 0.0;
    scene.camera.fill = 0.85;
    scene.player_sides = vec![Side::Bottom];
    scene.room.level = scene.room.level.max(0.3);
    let truth = table_session_truth(&scene, &script, FPS).unwrap();
    assert_eq!(truth.taps.len(), planned.steps.len());
    let frames = plan_table_session(&scene, &script, FPS).unwrap();
    let video = Path::new(env!("CARGO_TARGET_TMPDIR")).join("touch_play_cops.avi");
    let clock = Instant::now();
    touch_common::write_session_video(&scene, &pictures, &frames, FPS, &video);
    eprintln!("rendered {} frames ({:.0} s) in {:.1} s", frames.len(), frames.len() as f64 / FPS, clock.elapsed().as_secs_f64());

    let server = start_play(&["--camera", video.to_str().unwrap()]);
    let playing = Instant::now();
    let (status, started) =
        post(&server, "/cops/games", &json!({"map": "classic", "mode": "thief", "ai": "classic", "seed": GAME_NUMBERS}).to_string());
    assert_eq!(status, 201, "{started}");
    let id = started["id"].as_str().unwrap().to_string();
    let (browser, tab) = launch(browser_binary);
    tab.navigate_to(&server.url(&format!("/cops?projector=1&game={id}"))).unwrap().wait_until_navigated().unwrap();
    wait_for(&tab, "the game", "typeof game !== 'undefined' && game && game.id", |v| v == &json!(id));
    // The page highlights the squares the recording shows highlighted.
    let mut first: Vec<[usize; 2]> = planned.pages[0].1.iter().map(|&s| cell(s)).map(|[c, r]| [r, c]).collect();
    first.sort();
    let highlighted = eval(&tab, "Array.from(document.querySelectorAll('#grid .cell.legal')).map(c => [+c.dataset.r, +c.dataset.c])");
    assert_eq!(highlighted, json!(first), "the squares highlighted at the start");
    let calibration = calibrate_projector_camera(&tab);
    eprintln!("calibrated {:.1} s into the recording: {calibration}", playing.elapsed().as_secs_f64());

    wait_until_camera_ended(&server, Duration::from_secs(frames.len() as u64 / FPS as u64 + 60));
    let taps = eval(&tab, "Projector.touchState().taps");
    let intended: Vec<[usize; 2]> = truth.taps.iter().map(|t| t.cell).collect();
    let dwells: Vec<String> = truth.taps.iter().map(|t| format!("{:?} {:.1}-{:.1} s", t.cell, t.dwell_start_s, t.dwell_end_s)).collect();
    // Exactly the intended taps, none after the last: the last page change (policeman 2 leaves
    // the square above the one just tapped) once joined the faint trace the dwelling arm had left
    // in the background model, and the pair was read as an arm pointing at the square he left.
    let cells: Vec<&serde_json::Value> = taps.as_array().unwrap().iter().map(|t| &t["cell"]).collect();
    assert_eq!(json!(cells), json!(intended), "the taps the page received: {taps}; intended: {dwells:?}");

    // The room's record: the thief's steps the taps made, and the policemen's answers the
    // recording was planned against.
    let record_text = daemon_common::client().get(server.url(&format!("/cops/games/{id}/record"))).send().unwrap().text().unwrap();
    let record: Vec<RecordLine> = record_text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}"))).collect();
    assert_eq!(record, planned.record, "the room's record:\n{record_text}");

    // The page shows the end: the pieces where the game left them (the policeman who caught the
    // thief on his square), who won, and every move in the list beside the grid.
    let end = &planned.end;
    let mut expected_pieces: Vec<(usize, usize, &str)> = Vec::new();
    for (piece, name) in [(Piece::Thief, "Thief"), (Piece::Police1, "Policeman 1"), (Piece::Police2, "Policeman 2")] {
        let (row, col) = map.row_column(end.positions.of(piece));
        expected_pieces.retain(|p| (p.0, p.1) != (row, col));
        expected_pieces.push((row, col, name));
    }
    expected_pieces.sort();
    let pieces = eval(
        &tab,
        "Array.from(document.querySelectorAll('#grid .cell')).filter(c => c.querySelector('svg')).map(c => [+c.dataset.r, +c.dataset.c, c.querySelector('svg').getAttribute('aria-label')])",
    );
    assert_eq!(pieces, json!(expected_pieces), "the pieces on the page");
    assert_eq!(eval(&tab, "document.querySelectorAll('#grid .cell.legal').length"), json!(0), "no square is highlighted once the game is over");
    assert_eq!(eval(&tab, "document.getElementById('turn').textContent"), json!("The police win"));
    assert_eq!(eval(&tab, "document.getElementById('count').textContent"), json!(format!("{moves} moves")));
    let (caught_row, caught_col) = map.row_column(end.positions.thief);
    let reason = eval(&tab, "document.getElementById('result').open && document.getElementById('result-reason').textContent");
    let reason = reason.as_str().unwrap_or_else(|| panic!("the result is not shown: {reason}"));
    assert!(reason.contains(&format!("row {}, column {} after {moves} moves", caught_row + 1, caught_col + 1)), "the result: {reason}");
    let place = |[r, c]: [usize; 2]| format!("row {} col {}", r + 1, c + 1);
    let listed: Vec<String> = planned
        .record
        .iter()
        .filter_map(|l| match l {
            RecordLine::Move { piece, from, to, .. } => {
                let name = match piece {
                    Piece::Police1 => "Policeman 1",
                    Piece::Police2 => "Policeman 2",
                    Piece::Thief => "Thief",
                };
                Some(format!("{name} {} → {}", place(*from), place(*to)))
            }
            _ => None,
        })
        .collect();
    assert_eq!(eval(&tab, "Array.from(document.querySelectorAll('#history li')).map(li => li.textContent)"), json!(listed), "the moves on the page");
    let png = tab.capture_screenshot(CaptureScreenshotFormatOption::Png, None, None, true).unwrap();
    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("touch_play_cops.png");
    std::fs::write(&shot, png).unwrap();
    eprintln!("the page at the end: {}", shot.display());
    drop(browser);
}
