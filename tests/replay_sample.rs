//! The bundled recording replays to exactly its true moves: the PDN that `boardwatch replay`
//! writes, read back through the rules engine, passes through every true position.

mod common;

use std::process::Command;

use boardwatch::draughts::fen::parse_fen;
use boardwatch::draughts::game::replay;
use boardwatch::draughts::pdn::{read_games, parse_clock, ReadMode};
use boardwatch::draughts::Variant;

#[test]
fn the_sample_recording_replays_to_its_true_moves() {
    replays_to_its_true_moves("acf7_four_colour", "four-colour");
}

/// The synthetic recording of 20 plies (renderer, not ray-traced): its hand leaves a square
/// flickering between empty and unknown on a still board, which must not hold the move back.
#[test]
fn the_synthetic_seed_recording_replays_to_its_true_moves() {
    replays_to_its_true_moves("acf0_four_colour", "four-colour");
}

/// The wooden synthetic recording: dark wooden men on dark squares, and a board whose finished
/// state after 26-23 is never still before 8-11 is made (the two plies arrive in one reading and
/// the first is recorded as inferred).
#[test]
fn the_wooden_recording_replays_to_its_true_moves() {
    replays_to_its_true_moves("acf1_wooden", "wooden");
}

/// A whole game (45 plies, two kings crowned, a triple capture) on a board and set no palette
/// was made for: red and white 3-D men on a mint and red board whose border has the light
/// squares' colour, 23 degrees oblique. The wooden palette reads every man `?`; the replay waits
/// for a still scene, learns the session from the start position by itself, and finds every move.
#[test]
fn a_board_no_palette_knows_replays_to_its_true_moves() {
    replays_to_its_true_moves("acf6_unseen", "wooden");
}

/// The board no palette knows, with the learnt square model reading the squares (fine-tuned on
/// the recording's start position).
#[test]
fn a_board_no_palette_knows_replays_to_its_true_moves_with_the_learnt_square_model() {
    replays_with("acf6_unseen", "wooden", &["--squares", "learnt"]);
}

/// Quick play: a whole game (64 plies, four kings crowned, a triple capture) in turned wooden
/// men, 0.33 to 0.8 s between one hand leaving and the next arriving. Fourteen finished
/// positions are never still for the 0.3 s a still board needs; the boards glimpsed on the way
/// put the plies that arrive together in their order, and tell a man crowned from a king moved
/// where stacked kings look alike. Plies whose every board but the last was glimpsed are taken
/// from that last board at once, so fewer plies are inferred than positions were never still.
#[test]
fn a_quickly_played_game_replays_to_its_true_moves_in_order() {
    let inferred = replays_with("acf5_quick_wooden", "wooden", &[]);
    assert!(inferred >= 5, "the quick game has plies never seen still: {inferred} inferred");
}

/// Replay `samples/recordings/NAME.mp4` and compare with `NAME.truth.json`.
fn replays_to_its_true_moves(name: &str, palette: &str) {
    replays_with(name, palette, &[]);
}

/// The same, with more arguments for `replay`. Returns how many plies were inferred.
fn replays_with(name: &str, palette: &str, extra: &[&str]) -> usize {
    let video = common::repo_file(&format!("samples/recordings/{name}.mp4"));
    let truth: serde_json::Value =
        serde_json::from_str(&common::load_lossy(&common::repo_file(&format!("samples/recordings/{name}.truth.json")))).unwrap();
    let tmp = tempfile::Builder::new().prefix(&format!("bw-replay-{name}-{}-", extra.join(""))).tempdir().unwrap();
    let dir = tmp.path();
    let (pdn_path, log_path) = (dir.join("game.pdn"), dir.join("events.jsonl"));
    let output = Command::new(env!("CARGO_BIN_EXE_boardwatch"))
        .args(["replay", video.to_str().unwrap(), "--variant", "english", "--palette", palette, "--white", "Yellow"])
        .args(extra)
        .arg("--pdn")
        .arg(&pdn_path)
        .arg("--log")
        .arg(&log_path)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));

    let rules = Variant::English.rules();
    let text = std::fs::read_to_string(&pdn_path).unwrap();
    let records = read_games(&text, ReadMode::Strict).unwrap();
    assert_eq!(records.len(), 1, "{text}");
    assert_eq!(records[0].tag("White"), Some("Yellow"));
    let game = replay(&records[0], Variant::Pool).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let plies = truth["plies"].as_array().unwrap();
    assert_eq!(game.plies.len(), plies.len(), "{text}");
    for (i, (ply, true_ply)) in game.plies.iter().zip(plies).enumerate() {
        let expected = parse_fen(true_ply["fen_after"].as_str().unwrap(), &rules).unwrap();
        assert_eq!(ply.after, expected, "ply {} {} (true {})", i + 1, ply.text, true_ply["pdn"]);
    }
    // Each move carries its video time, in order; a ply the camera never saw finished shares
    // the time of the reading that showed it, and says it was inferred, unless it was seen
    // under way (a capture whose captured man was still being taken off when the answer came).
    let times: Vec<(f64, bool)> = records[0]
        .moves
        .iter()
        .map(|m| {
            let clock = m.comments_after.iter().find_map(|c| parse_clock(c)).expect("clock");
            (clock, m.comments_after.iter().any(|c| c.contains("inferred")))
        })
        .collect();
    assert!(times.windows(2).all(|w| w[0].0 <= w[1].0), "{times:?}");
    let shared = times.windows(2).filter(|w| w[0].0 == w[1].0).count();
    let inferred = times.iter().filter(|t| t.1).count();
    assert!(inferred <= shared, "every inferred ply shares its time with the next: {times:?}");
    assert!(times.windows(2).all(|w| !w[0].1 || w[0].0 == w[1].0), "an inferred ply has the time of the reading that showed it: {times:?}");

    // The daemon's log format: one record per input to the tracker with the events it caused.
    // The game starts by itself; after that every event comes from a board state seen at a
    // frame (the record's cursor) and a video time.
    let log = std::fs::read_to_string(&log_path).unwrap();
    let records: Vec<serde_json::Value> = log.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let events: Vec<&serde_json::Value> = records.iter().flat_map(|r| r["events"].as_array().unwrap()).collect();
    let moves: Vec<&&serde_json::Value> = events.iter().filter(|e| e["kind"] == "move").collect();
    assert_eq!(moves.len(), plies.len());
    assert_eq!(records[0]["input"], serde_json::json!({"op": "init"}));
    for record in &records[1..] {
        assert_eq!(record["from"], "source");
        assert!(record["cursor"].is_u64() && record["input"]["t"].is_f64(), "{record}");
        assert!(record["events"].as_array().unwrap().iter().all(|e| e["t"] == record["input"]["t"]), "{record}");
    }
    assert_eq!(events[0]["line"], "1: Init Ready");
    times.iter().filter(|t| t.1).count()
}

#[test]
fn a_missing_or_corrupt_video_is_a_clear_error() {
    let tmp = tempfile::Builder::new().prefix("bw-replay-bad-").tempdir().unwrap();
    let dir = tmp.path();
    let corrupt = dir.join("corrupt.mp4");
    std::fs::write(&corrupt, b"this is not a video at all").unwrap();
    for (path, says) in [(dir.join("missing.mp4"), "missing.mp4"), (corrupt, "corrupt.mp4")] {
        let output = Command::new(env!("CARGO_BIN_EXE_boardwatch")).arg("replay").arg(&path).output().unwrap();
        assert!(!output.status.success());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(says) && !stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn the_overlay_video_is_written_and_readable() {
    use boardwatch::vision::source::VideoSource;
    use boardwatch::vision::FrameSource;
    use opencv::prelude::*;
    use opencv::{core, videoio};

    let tmp = tempfile::Builder::new().prefix("bw-replay-overlay-").tempdir().unwrap();
    let dir = tmp.path();
    // A short clip: the sample's first two seconds (the start position, then the first hand).
    let (clip, frames) = (dir.join("clip.avi"), 30);
    let mut source = VideoSource::open_file(&common::repo_file("samples/recordings/acf7_four_colour.mp4")).unwrap();
    let mut writer = None;
    for _ in 0..frames {
        let frame = source.next_frame().unwrap().unwrap();
        let w = writer.get_or_insert_with(|| {
            let fourcc = videoio::VideoWriter::fourcc('M', 'J', 'P', 'G').unwrap();
            videoio::VideoWriter::new_with_backend(clip.to_str().unwrap(), videoio::CAP_FFMPEG, fourcc, source.fps(), frame.image.size().unwrap(), true).unwrap()
        });
        w.write(&frame.image).unwrap();
    }
    writer.unwrap().release().unwrap();

    let out = dir.join("overlay.mp4");
    let output = Command::new(env!("CARGO_BIN_EXE_boardwatch")).arg("replay").arg(&clip).arg("--overlay-video").arg(&out).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    // One overlay frame per input frame, all of one size, showing a picture (not blank).
    let mut overlay = VideoSource::open_file(&out).unwrap();
    let mut n = 0;
    let mut size = None;
    while let Some(frame) = overlay.next_frame().unwrap() {
        n += 1;
        let s = frame.image.size().unwrap();
        assert_eq!(*size.get_or_insert(s), s);
        let mean = core::mean_def(&frame.image).unwrap();
        assert!(mean[0] + mean[1] + mean[2] > 3.0 * 40.0, "frame {}: mean {mean:?}", frame.index);
    }
    assert_eq!(n, frames);
    let size = size.unwrap();
    assert!(size.width >= 320 && size.height >= 320, "{size:?}");

    // A folder that does not exist: a clear error naming the option, before any work.
    let output = Command::new(env!("CARGO_BIN_EXE_boardwatch"))
        .arg("replay")
        .arg(&clip)
        .arg("--overlay-video")
        .arg(dir.join("no-such-folder/overlay.mp4"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success() && stderr.contains("--overlay-video") && !stderr.contains("panicked"), "{stderr}");
}
