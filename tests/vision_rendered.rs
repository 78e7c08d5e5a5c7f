//! The vision pipeline on frames from the synthetic renderer: random viewpoints (tilt up to 35
//! degrees, any rotation), lamps, glare, noise, blur and lens distortion, both piece sets.
//!
//! Per scene, as a session goes: the start position is rendered and calibrates the session
//! (board found, colours learnt); then positions from random legal games are rendered in the
//! same scene with fresh sensor noise and read with that calibration, and compared square by
//! square with the truth in board coordinates (so the orientation must be right too). The same
//! frames are also read with the palette alone, in image coordinates, and reported. What each
//! palette must achieve is `bar`. Each frame's board is also found afresh and its corners
//! compared with the truth.
//!
//! A third family, `unseen`, draws boards and two-colour sets no palette was made for
//! (`synth::unseen_board_scene`: any square and border colours, 3-D men of any size, tilt up to 35
//! degrees) and reads them with the wooden palette as the prior that only names the sides:
//! everything else is learnt from each scene's start position. Its scenes 0-49 were looked at
//! while the recognition was developed; the slow check scores 5000 onwards, held apart.
//!
//! The quick test runs two scenes per family at every `cargo test`; the ignored one renders
//! thousands of frames (`make corpus`, or `cargo test --release --test vision_rendered -- --ignored --nocapture`;
//! `BOARDWATCH_RENDERED_SCENES` sets the number of scenes, `BOARDWATCH_RENDERED_PALETTE=four-colour|wooden|unseen`
//! runs one family only, `BOARDWATCH_RENDERED_FIRST` sets the first scene, `BOARDWATCH_RENDERED_FRAMES`
//! the frames read after each start, 12 by default: 0 scores only whether the sessions calibrate).

mod common;

use common::corner_error;

use boardwatch::draughts::bitboard::square;
use boardwatch::draughts::{Position, Variant};
use boardwatch::synth::{random_scene, render_frame, session, unseen_board_scene, FrameTruth, Palette, RgbImage, Scene};
use boardwatch::vision::source::rgb_image_to_mat;
use boardwatch::vision::*;
use opencv::core::Mat;

/// The kinds of rendered sessions: the two palettes' own sets, and boards and sets no palette was
/// made for (`unseen_board_scene`), read with the wooden palette only as the prior that names the
/// sides.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Family {
    FourColour,
    Wooden,
    Unseen,
}

impl Family {
    const ALL: [Family; 3] = [Family::FourColour, Family::Wooden, Family::Unseen];

    fn name(self) -> &'static str {
        match self {
            Family::FourColour => "four-colour",
            Family::Wooden => "wooden",
            Family::Unseen => "unseen",
        }
    }

    fn scene(self, seed: u64) -> Scene {
        match self {
            Family::FourColour => random_scene(seed, Palette::FourColour),
            Family::Wooden => random_scene(seed, Palette::Wooden),
            Family::Unseen => unseen_board_scene(seed),
        }
    }

    fn palette(self) -> &'static str {
        match self {
            Family::FourColour => "four-colour",
            Family::Wooden | Family::Unseen => "wooden",
        }
    }

    /// Scenes scored by the slow check. Unseen boards: scenes 0-49 were looked at while the
    /// recognition was developed; the check scores 5000 onwards, held apart from that.
    fn first_scored_scene(self) -> u64 {
        match self {
            Family::Unseen => 5000,
            _ => 0,
        }
    }
}

fn to_mat(image: &RgbImage) -> Mat {
    rgb_image_to_mat(image).unwrap()
}

/// A scene's start position as a session's calibration sees it: the picture and its truth.
fn rendered_start(scene: &Scene, scene_seed: u64) -> (Mat, FrameTruth) {
    let start = Position::start(&Variant::English.rules()).to_grid();
    let (image, truth) = render_frame(scene, &start, None, session::start_noise(scene_seed)).unwrap();
    (to_mat(&image), truth)
}

/// What a reading of these true rows should say: kings read as men when the palette does not
/// tell them apart (stacked wooden kings look like men from above).
fn as_read(rows: &[String; 8], kings_distinct: bool) -> Vec<String> {
    rows.iter().map(|row| if kings_distinct { row.clone() } else { row.to_lowercase() }).collect()
}

#[derive(Default, Debug)]
struct Tally {
    scenes: usize,
    scenes_calibrated: usize,
    frames: usize,
    /// Calibrated readings: frames whose 64 squares all match, and squares that do not.
    frames_right: usize,
    squares_wrong: usize,
    /// Of those, squares read as `?` (no confident class) rather than as a wrong one.
    squares_unknown: usize,
    /// Palette alone: frames located, frames whose 64 squares all match, squares that do not.
    palette_located: usize,
    palette_frames_right: usize,
    palette_squares_wrong: usize,
    /// Frames whose board, found afresh, has every corner within a tenth of a square of the truth.
    corners_within_tenth: usize,
    /// The largest corner error of any frame, in squares.
    worst_corner_error: f64,
    failures: Vec<String>,
}

impl Tally {
    fn add(&mut self, o: Tally) {
        self.scenes += o.scenes;
        self.scenes_calibrated += o.scenes_calibrated;
        self.frames += o.frames;
        self.frames_right += o.frames_right;
        self.squares_wrong += o.squares_wrong;
        self.squares_unknown += o.squares_unknown;
        self.palette_located += o.palette_located;
        self.palette_frames_right += o.palette_frames_right;
        self.palette_squares_wrong += o.palette_squares_wrong;
        self.corners_within_tenth += o.corners_within_tenth;
        self.worst_corner_error = self.worst_corner_error.max(o.worst_corner_error);
        self.failures.extend(o.failures);
    }

    fn summary(&self, family: Family) -> String {
        format!(
            "{}: {} scenes ({} calibrated), {} frames: calibrated {} right, {} squares wrong of {} ({} of them unknown); palette alone {} located, {} right, {} squares wrong; corners within 0.1 square in {} frames (worst {:.3})",
            family.name(),
            self.scenes,
            self.scenes_calibrated,
            self.frames,
            self.frames_right,
            self.squares_wrong,
            self.frames * 64,
            self.squares_unknown,
            self.palette_located,
            self.palette_frames_right,
            self.palette_squares_wrong,
            self.corners_within_tenth,
            self.worst_corner_error
        )
    }
}

fn differences(read: &[String], truth: &[String]) -> Vec<String> {
    common::grid_differences(read, truth).into_iter().map(|(r, c, a, b)| format!("({r},{c}) read {a} is {b}")).collect()
}

/// A difference `(r,c) read x is y` on a square that holds a king says so (kings read as men).
fn king_noted(difference: String, truth: &[String; 8]) -> String {
    let at = |k: usize| difference.as_bytes()[k] - b'0';
    let (r, c) = (at(1) as usize, at(3) as usize);
    if truth[r].as_bytes()[c].is_ascii_uppercase() {
        difference + " (king)"
    } else {
        difference
    }
}

/// With `BOARDWATCH_RENDERED_OVERLAYS=DIR`, the overlay of every misread frame goes there.
fn save_overlay(frame: &Mat, detection: &Detection, what: &str) {
    let Ok(dir) = std::env::var("BOARDWATCH_RENDERED_OVERLAYS") else { return };
    let overlay = draw_overlay(frame, &detection.location, Some(&detection.reading), 900).unwrap();
    let path = std::path::Path::new(&dir).join(format!("{}.png", what.replace(' ', "_")));
    opencv::imgcodecs::imwrite_def(path.to_str().unwrap(), &overlay).unwrap();
}

/// One session: calibrate on the start position, then read `frames` random positions.
/// Who reads the squares in the slow check: `BOARDWATCH_RENDERED_SQUARES=learnt` for the learnt
/// square model, the colours otherwise.
fn squares_from_env() -> SquareReader {
    match std::env::var("BOARDWATCH_RENDERED_SQUARES").as_deref() {
        Ok("learnt") => SquareReader::Learnt,
        _ => SquareReader::Colours,
    }
}

fn run_scene(family: Family, scene_seed: u64, frames: usize, squares: SquareReader) -> Tally {
    let mut tally = Tally { scenes: 1, frames, ..Tally::default() };
    let scene = family.scene(scene_seed);
    let base = ColourModel::named(family.palette()).unwrap();
    let kings_distinct = base.distinct_kings();
    let (image, _) = rendered_start(&scene, scene_seed);
    let mut model = (squares == SquareReader::Learnt).then(|| SquareModel::builtin().unwrap());
    let calibration = match Calibration::from_image_with(&image, &base, None, "rendered start", model.as_mut()) {
        Ok((cal, _)) => Some(cal),
        Err(e) => {
            tally.failures.push(format!("{} scene {scene_seed}: not calibrated: {e}", family.name()));
            None
        }
    };
    tally.scenes_calibrated = calibration.is_some() as usize;
    for (k, (grid, noise)) in session::frames(scene_seed).take(frames).enumerate() {
        let (image, truth) = render_frame(&scene, &grid, None, noise).unwrap();
        let frame = to_mat(&image);
        let what = format!("{} scene {scene_seed} frame {k}", family.name());
        if let Some(cal) = &calibration {
            match detect_calibrated_with(&frame, cal, model.as_mut()) {
                Ok(d) => {
                    let view = to_board_coordinates(&d.reading, &cal.frame(), true, 0.0);
                    let wrong: Vec<String> = differences(&view.rows(), &as_read(&truth.grid, kings_distinct))
                        .into_iter()
                        .map(|w| if kings_distinct { w } else { king_noted(w, &truth.grid) })
                        .collect();
                    tally.squares_wrong += wrong.len();
                    tally.squares_unknown += wrong.iter().filter(|w| w.contains("read ?")).count();
                    if wrong.is_empty() {
                        tally.frames_right += 1;
                    } else {
                        tally.failures.push(format!("{what}: {}", wrong.join(", ")));
                        save_overlay(&frame, &d, &what);
                    }
                }
                Err(e) => {
                    tally.squares_wrong += 64;
                    tally.failures.push(format!("{what}: {e}"));
                }
            }
        }
        if let Ok(d) = detect(&frame, None, &base) {
            let error = corner_error(&d.corners, &truth.corners);
            tally.worst_corner_error = tally.worst_corner_error.max(error);
            if error <= 0.1 {
                tally.corners_within_tenth += 1;
            } else {
                tally.failures.push(format!("{what}: corners off by {error:.2} square"));
            }
            match truth.grid_as_seen(&d.corners) {
                Some(seen) => {
                    let expected = as_read(&seen, kings_distinct);
                    tally.palette_located += 1;
                    let wrong = differences(&d.grid, &expected).len();
                    tally.palette_squares_wrong += wrong;
                    tally.palette_frames_right += (wrong == 0) as usize;
                }
                None => tally.palette_squares_wrong += 64,
            }
        } else {
            tally.palette_squares_wrong += 64;
        }
    }
    tally
}

/// Scenes `seeds` of one palette, on two threads.
fn run_scenes(family: Family, seeds: std::ops::Range<u64>, frames: usize, squares: SquareReader) -> Tally {
    let seeds: Vec<u64> = seeds.collect();
    let halves: Vec<Vec<u64>> = vec![seeds.iter().copied().step_by(2).collect(), seeds.iter().copied().skip(1).step_by(2).collect()];
    let mut total = Tally::default();
    std::thread::scope(|s| {
        let handles: Vec<_> = halves
            .into_iter()
            .map(|part| {
                s.spawn(move || {
                    let mut t = Tally::default();
                    for seed in part {
                        t.add(run_scene(family, seed, frames, squares));
                    }
                    t
                })
            })
            .collect();
        for h in handles {
            total.add(h.join().unwrap());
        }
    });
    total
}

/// What a palette must achieve over rendered sessions, as fractions.
struct Bar {
    /// Scenes whose start position was found and calibrated the session.
    calibrated_scenes: f64,
    /// Frames of calibrated scenes with all 64 squares right.
    right_frames: f64,
    /// Squares of calibrated scenes read as a wrong class (not `?`), at most.
    misread_squares: f64,
}

/// The bars, a little under what the pipeline achieves over scenes 0-99 (see BENCHMARKS.md).
/// The seed palette was fitted on other renderer scenes as well; the wooden one on real photos
/// only, and the renderer's dark wooden men on dark squares are sometimes read as empty squares.
fn bar(family: Family) -> Bar {
    match family {
        Family::FourColour => Bar { calibrated_scenes: 0.95, right_frames: 0.93, misread_squares: 0.0002 },
        Family::Wooden => Bar { calibrated_scenes: 0.75, right_frames: 0.8, misread_squares: 0.005 },
        // Measured on scenes 5000-5099, held apart (benchmarks/HISTORY.md, 2026-11-26): 99 calibrated,
        // 93.2% of frames right, 0.055% of squares misread (the bar is 0.1%); most of the
        // rest are stacked kings, which no start position shows (in a game, the positions the
        // tracker accepts teach them).
        Family::Unseen => Bar { calibrated_scenes: 0.97, right_frames: 0.9, misread_squares: 0.001 },
    }
}

fn check(family: Family, tally: &Tally) {
    check_bar(family, tally, &bar(family));
}

fn check_bar(family: Family, tally: &Tally, bar: &Bar) {
    let calibrated_frames = tally.frames * tally.scenes_calibrated / tally.scenes.max(1);
    let misread = (tally.squares_wrong - tally.squares_unknown) as f64 / (calibrated_frames.max(1) * 64) as f64;
    let problems = [
        (tally.scenes_calibrated as f64) < bar.calibrated_scenes * tally.scenes as f64,
        (tally.frames_right as f64) < bar.right_frames * calibrated_frames as f64,
        misread > bar.misread_squares,
    ];
    assert!(!problems.iter().any(|&p| p), "{}\n{}", tally.summary(family), tally.failures.iter().take(30).cloned().collect::<Vec<_>>().join("\n"));
}

/// Two scenes per palette, a few frames each.
#[test]
fn rendered_sessions_read_right() {
    for family in Family::ALL {
        let tally = run_scenes(family, 1000..1002, 4, SquareReader::Colours);
        eprintln!("{}", tally.summary(family));
        if family == Family::Unseen {
            // Eight frames say little about the share of frames all right (a stacked king `?`
            // spoils one); that all scenes calibrate and nothing is misread, they do say.
            check_bar(family, &tally, &Bar { right_frames: 0.0, ..bar(family) });
        } else {
            check(family, &tally);
        }
    }
}

/// The same sessions read by the learnt square model, fine-tuned on each session's start.
#[test]
fn rendered_sessions_read_right_by_the_learnt_square_model() {
    for family in Family::ALL {
        let tally = run_scenes(family, 1000..1002, 4, SquareReader::Learnt);
        eprintln!("learnt {}", tally.summary(family));
        check_bar(family, &tally, &Bar { right_frames: 0.0, ..bar(family) });
    }
}

/// Thousands of frames at the scenes' own sizes (1280x720 or 960x720).
#[test]
#[ignore = "slow: renders thousands of frames; run by make corpus"]
fn rendered_sessions_read_right_thousands() {
    let scenes: u64 = std::env::var("BOARDWATCH_RENDERED_SCENES").ok().and_then(|s| s.parse().ok()).unwrap_or(100);
    let first: Option<u64> = std::env::var("BOARDWATCH_RENDERED_FIRST").ok().and_then(|s| s.parse().ok());
    let only = std::env::var("BOARDWATCH_RENDERED_PALETTE").ok();
    let frames: usize = std::env::var("BOARDWATCH_RENDERED_FRAMES").ok().and_then(|s| s.parse().ok()).unwrap_or(12);
    let tallies: Vec<(Family, Tally)> = Family::ALL
        .into_iter()
        .filter(|f| only.as_deref().map_or(true, |o| o == f.name() || (o == "seed" && *f == Family::FourColour)))
        .map(|f| {
            let from = first.unwrap_or(f.first_scored_scene());
            (f, run_scenes(f, from..from + scenes, frames, squares_from_env()))
        })
        .collect();
    for (family, tally) in &tallies {
        eprintln!("{}", tally.summary(*family));
        for f in &tally.failures {
            eprintln!("  {f}");
        }
    }
    for (family, tally) in &tallies {
        check(*family, tally);
    }
}

/// The learnt square model over 30 scenes per family (scenes 8000-8029, used for nothing else):
/// no more squares misread than the bar of 0.05%, and the colours' bar of frames all
/// right (`make corpus`). Here 30, 26 and 28 of 30 calibrated when it was written (misread 0, 8
/// of 19,968 and 1); since the model also tells starts the colours refuse, all 30 wooden
/// sessions calibrate, 10 squares misread of 23,040, and 30 unseen ones, 1 misread (2026-11-29).
#[test]
#[ignore = "slow: renders over a thousand frames; run by make corpus"]
fn rendered_sessions_read_right_by_the_learnt_square_model_hundreds() {
    for family in Family::ALL {
        let tally = run_scenes(family, 8000..8030, 12, SquareReader::Learnt);
        eprintln!("learnt {}", tally.summary(family));
        for f in &tally.failures {
            eprintln!("  {f}");
        }
        check_bar(family, &tally, &Bar { misread_squares: 0.0005, calibrated_scenes: 0.0, ..bar(family) });
    }
}

/// Calibration decides on the board itself whether it shows a start position: a board a few
/// moves in, in the same scene that calibrates, is refused, and says which squares disagree.
#[test]
fn calibration_refuses_a_game_in_progress() {
    let rules = Variant::English.rules();
    for palette in [Palette::FourColour, Palette::Wooden] {
        let scene = random_scene(1000, palette);
        let base = ColourModel::named(palette.name()).unwrap();
        let start = Position::start(&rules);
        let (image, _) = render_frame(&scene, &start.to_grid(), None, 1).unwrap();
        assert!(Calibration::from_image(&to_mat(&image), &base, None, "start").is_ok(), "{}: the start calibrates", palette.name());
        // 11-15 23-19 8-11 22-17: four plies in.
        let mut position = start;
        for (from, to) in [((2, 5), (3, 4)), ((5, 4), (4, 5)), ((1, 6), (2, 5)), ((5, 2), (4, 1))] {
            let piece = position.piece_at(square(from.0, from.1)).unwrap();
            position.set(square(from.0, from.1), None);
            position.set(square(to.0, to.1), Some(piece));
        }
        let (image, _) = render_frame(&scene, &position.to_grid(), None, 2).unwrap();
        match Calibration::from_image(&to_mat(&image), &base, None, "game in progress") {
            Ok(_) => panic!("{}: a game four plies in was taken for the start", palette.name()),
            Err(e) => assert!(e.to_string().contains("not a start position"), "{e}"),
        }
        // Nor does the learnt square model, which may tell a start the colours cannot, take it.
        let mut model = SquareModel::builtin().unwrap();
        match Calibration::from_image_with(&to_mat(&image), &base, None, "game in progress", Some(&mut model)) {
            Ok(_) => panic!("{}: the learnt model took a game four plies in for the start", palette.name()),
            Err(e) => assert!(e.to_string().contains("not a start position"), "{e}"),
        }
    }
}

/// Of a model's networks, a session reads with the one whose head as trained reads its start
/// surer: of the built-in network and the same network with a spoilt head (empty and dark man
/// swapped), the start of tuning scene 34 (told by the model, the colours refuse it) and of
/// scene 3 (the colours calibrate) choose the built-in one, whichever comes first; the
/// calibration names it, and a calibration naming a network the model lacks is refused by name.
#[test]
fn a_session_reads_with_the_network_that_reads_its_start_surer() {
    let mut spoilt: serde_json::Value = serde_json::from_str(square_model::BUILTIN_JSON).unwrap();
    for key in ["weights", "bias"] {
        spoilt["head"][key].as_array_mut().unwrap().swap(0, 1);
    }
    let spoilt = spoilt.to_string();
    let general = ("general", square_model::BUILTIN_ONNX, square_model::BUILTIN_JSON);
    let spoilt = ("spoilt", square_model::BUILTIN_ONNX, spoilt.as_str());
    let base = ColourModel::named("wooden").unwrap();
    for seed in [34, 3] {
        let (image, _) = rendered_start(&random_scene(seed, Palette::Wooden), seed);
        for networks in [[general, spoilt], [spoilt, general]] {
            let mut model = SquareModel::from_networks(&networks).unwrap();
            assert_eq!(model.chosen_network(), None, "no network is chosen before a start");
            let (cal, _) =
                Calibration::from_image_with(&image, &base, None, "wooden start", Some(&mut model)).unwrap_or_else(|e| panic!("scene {seed}: {e}"));
            assert_eq!(cal.square_model.as_deref(), Some("general"), "scene {seed}");
            assert_eq!(model.chosen_network(), Some("general"));
            let mut fresh = SquareModel::from_networks(&networks).unwrap();
            fresh.use_calibration(&cal).unwrap();
            assert_eq!(fresh.chosen_network(), Some("general"));
            assert_eq!(fresh.head(), cal.square_head.as_ref().unwrap(), "the session's head goes to the network it chose");
        }
    }
    let (image, _) = rendered_start(&random_scene(3, Palette::Wooden), 3);
    let mut model = SquareModel::from_networks(&[general]).unwrap();
    let (mut cal, _) = Calibration::from_image_with(&image, &base, None, "wooden start", Some(&mut model)).unwrap();
    cal.square_model = Some("marble".into());
    let err = model.use_calibration(&cal).unwrap_err().to_string();
    assert!(err.contains("no network named \"marble\"") && err.contains("general"), "{err}");
}

/// A wooden set whose men the session's colours cannot tell from its squares (tuning scene 34:
/// after learning from the start the colours still read four of its men empty or misplaced):
/// the learnt square model tells the start instead, the colours are learnt where it says the
/// men stand, and the session's frames are read right; the colours alone refuse it.
#[test]
fn a_start_the_colours_cannot_tell_is_told_by_the_learnt_square_model() {
    let scene = random_scene(34, Palette::Wooden);
    let base = ColourModel::named("wooden").unwrap();
    let (image, _) = rendered_start(&scene, 34);
    let refused = Calibration::from_image(&image, &base, None, "wooden start").expect_err("the colours alone refuse this start");
    assert!(refused.to_string().contains("not a start position"), "{refused}");
    let mut model = SquareModel::builtin().unwrap();
    let (cal, _) = Calibration::from_image_with(&image, &base, None, "wooden start", Some(&mut model)).unwrap_or_else(|e| panic!("{e}"));
    assert!(cal.square_head.is_some(), "the model's head is fine-tuned on the start");
    for (k, (grid, noise)) in session::frames(34).take(4).enumerate() {
        let (image, truth) = render_frame(&scene, &grid, None, noise).unwrap();
        let d = detect_calibrated_with(&to_mat(&image), &cal, Some(&mut model)).unwrap();
        let view = to_board_coordinates(&d.reading, &cal.frame(), true, 0.0);
        assert_eq!(differences(&view.rows(), &as_read(&truth.grid, false)), Vec::<String>::new(), "frame {k}");
    }
    // Tuning scene 100: the model as trained reads one dark man of the start empty, which it may.
    let (image_100, _) = rendered_start(&random_scene(100, Palette::Wooden), 100);
    assert!(Calibration::from_image(&image_100, &base, None, "wooden start").is_err(), "the colours alone refuse scene 100");
    let (cal_100, _) = Calibration::from_image_with(&image_100, &base, None, "wooden start", Some(&mut model)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(cal_100.white_home, Side::Bottom, "white's men stand at the bottom of scene 100's picture");
    // Tuning scene 226: two dark men read empty, as many squares as the colours may find odd in
    // a start. The same board with three men still to be set on it is no start for either.
    let scene_226 = random_scene(226, Palette::Wooden);
    let (image_226, _) = rendered_start(&scene_226, 226);
    assert!(Calibration::from_image(&image_226, &base, None, "wooden start").is_err(), "the colours alone refuse scene 226");
    Calibration::from_image_with(&image_226, &base, None, "wooden start", Some(&mut model)).unwrap_or_else(|e| panic!("scene 226: {e}"));
    let mut setting_up = Position::start(&Variant::English.rules()).to_grid();
    for (r, c) in [(0, 1), (1, 4), (6, 3)] {
        assert_ne!(&setting_up[r][c..c + 1], ".", "a man stands on ({r},{c}) at the start");
        setting_up[r].replace_range(c..c + 1, ".");
    }
    let (unfinished, _) = render_frame(&scene_226, &setting_up, None, session::start_noise(226)).unwrap();
    let refused = Calibration::from_image_with(&to_mat(&unfinished), &base, None, "board being set up", Some(&mut model));
    assert!(
        refused.as_ref().is_err_and(|e| e.to_string().contains("not a start position")),
        "three men missing: {:?}",
        refused.map(|c| c.0.white_home)
    );
    // A watcher (replay, the daemon) calibrating by itself on the same still start does likewise
    // with the model, and not without it.
    for (squares, calibrates) in [(SquareReader::Colours, false), (SquareReader::Learnt, true)] {
        let mut watcher = Watcher::new(base.clone(), WatchConfig { squares, ..WatchConfig::default() }).unwrap();
        for i in 0..12 {
            watcher.process(&image, i as f64 / 15.0).unwrap();
        }
        assert_eq!(watcher.is_calibrated(), calibrates, "{squares:?}");
    }
}

/// Under a lamp bright enough that the red men come out as light as the yellow ones (scene 85),
/// lightness cannot tell the sides apart; the palette's colours can, and the start calibrates
/// with White (yellow) on the side where the palette reads the yellow men.
#[test]
fn a_start_whose_men_are_equally_light_calibrates_by_their_colour() {
    let scene = random_scene(85, Palette::FourColour);
    let base = ColourModel::named("four-colour").unwrap();
    let (image, truth) = rendered_start(&scene, 85);
    let (cal, _) = Calibration::from_image(&image, &base, None, "bright start").unwrap_or_else(|e| panic!("{e}"));
    let d = detect_calibrated(&image, &cal).unwrap();
    let view = to_board_coordinates(&d.reading, &cal.frame(), true, 0.0);
    assert_eq!(differences(&view.rows(), &as_read(&truth.grid, true)), Vec::<String>::new());
}

/// A wide-angle lens bends the board's outer rows (scene 5072 of the unseen boards: barrel
/// distortion k1 = -0.147). A flat lattice through the inner corners put the outer corners
/// 0.18 square out; the lens found with the lattice puts them within a tenth, the calibration
/// keeps it, and the start position is read right through it. Without distortion no lens is
/// made up.
#[test]
fn the_lens_is_found_with_the_board_and_the_corners_stay_within_a_tenth() {
    let base = ColourModel::named("wooden").unwrap();
    let start = Position::start(&Variant::English.rules()).to_grid();
    let bent = unseen_board_scene(5072);
    assert!(bent.camera.k1 < -0.1, "the scene has a strong barrel distortion");
    let (image, truth) = render_frame(&bent, &start, None, 1).unwrap();
    let frame = to_mat(&image);
    let location = locate_board(&frame, None).unwrap();
    let error = corner_error(&location.corners, &truth.corners);
    assert!(error <= 0.1, "corners off by {error:.3} square ({:?}, {:?}, score {:.2})", location.lens, location.method, location.score);
    assert!(location.lens.k1 < -0.05, "barrel distortion found: k1 {}", location.lens.k1);
    let (cal, _) = Calibration::from_image(&frame, &base, None, "wide-angle start").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(cal.lens, location.lens);
    let again = Calibration::from_json(&cal.to_json()).unwrap().location().unwrap();
    assert!(corner_error(&again.corners, &truth.corners) <= 0.1, "the calibration file keeps the lens");
    let d = detect_calibrated(&frame, &cal).unwrap();
    let view = to_board_coordinates(&d.reading, &cal.frame(), true, 0.0);
    assert_eq!(differences(&view.rows(), &as_read(&truth.grid, false)), Vec::<String>::new());

    let mut flat = bent.clone();
    flat.camera.k1 = 0.0;
    let (image, truth) = render_frame(&flat, &start, None, 1).unwrap();
    let location = locate_board(&to_mat(&image), None).unwrap();
    assert_eq!(location.lens, Lens::default(), "no lens made up for an undistorted view");
    assert!(corner_error(&location.corners, &truth.corners) <= 0.1);
}

/// Black men with bright grooves on a pale green and lavender board (unseen scene 13011): the
/// strongest X-corners of the picture are all on the men, none on the board, and lattices grown
/// from the strongest corners alone never covered the board ("no checkers board found"). The
/// weaker corners seed lattices too when the strong ones find no board.
#[test]
fn a_board_whose_men_outshine_its_squares_is_found() {
    let scene = unseen_board_scene(13011);
    let (image, truth) = rendered_start(&scene, 13011);
    let location = locate_board(&image, None).unwrap_or_else(|e| panic!("{e}"));
    let error = corner_error(&location.corners, &truth.corners);
    assert!(error <= 0.1, "corners off by {error:.3} square");
    Calibration::from_image(&image, &ColourModel::wooden().unwrap(), None, "start").unwrap_or_else(|e| panic!("{e}"));
}

/// A small board crowded with men (unseen scene 13064, frame 6 of the rendered check): the rims
/// of men pull a dozen inner corners 2-4 px aside, and the refined lattice fitted through them
/// put two outer corners 0.17 square out, while the coarse lattice was within 0.05. The corners
/// measured from the coarse lattice now decide between the two.
#[test]
fn corners_pulled_aside_by_men_do_not_carry_the_lattice_away() {
    let (scene_seed, frame) = (13064u64, 6);
    let scene = unseen_board_scene(scene_seed);
    let (grid, noise) = session::frames(scene_seed).nth(frame).unwrap();
    let (image, truth) = render_frame(&scene, &grid, None, noise).unwrap();
    let location = locate_board(&to_mat(&image), None).unwrap_or_else(|e| panic!("{e}"));
    let error = corner_error(&location.corners, &truth.corners);
    assert!(error <= 0.1, "corners off by {error:.3} square");
}

/// A window one square over (a border of the light squares' own colour taken for a row, the
/// far row left out) shows no start position; where the men stand puts it right: from each of
/// the four wrong windows the calibration comes back to the board's own corners. Corners given
/// by hand are never moved.
#[test]
fn a_window_one_square_off_is_put_right_by_the_start_positions_men() {
    let mut scene = unseen_board_scene(5);
    // A border of the light squares' colour, and tall men leaning over the first rows.
    scene.colors.frame = scene.colors.light_square;
    scene.board.frame_width = 0.8;
    scene.pieces.height = 0.35;
    let base = ColourModel::wooden().unwrap();
    let start = Position::start(&Variant::English.rules()).to_grid();
    let (image, truth) = render_frame(&scene, &start, None, 3).unwrap();
    let frame = to_mat(&image);
    let found = locate_board(&frame, None).unwrap_or_else(|e| panic!("{e}"));
    assert!(corner_error(&found.corners, &truth.corners) <= 0.1, "the board itself is found");
    for (du, dv) in [(0.0, 1.0), (0.0, -1.0), (1.0, 0.0), (-1.0, 0.0)] {
        let off = found.shifted(du, dv);
        assert!(corner_error(&off.corners, &truth.corners) > 0.9, "({du}, {dv}) is a square off");
        // Taken as given, the window shows no start position.
        assert!(Calibration::from_image(&frame, &base, Some(off.corners), "by hand").is_err(), "({du}, {dv})");
        let (cal, moved) = Calibration::one_square_over(&frame, &base, &off, "found").unwrap_or_else(|| panic!("({du}, {dv}): not put right"));
        let error = corner_error(&moved.corners, &truth.corners);
        assert!(error <= 0.1, "({du}, {dv}): corners off by {error:.3} square after moving");
        assert!(corner_error(&cal.corners, &truth.corners) <= 0.1);
    }
}

/// The same with a set the colours cannot tell (tuning scene 34, whose start only the learnt
/// square model tells): from each of the four windows one square off, and the four a row and a
/// column off, the model's start puts the window back on the board's own corners.
#[test]
fn a_window_one_square_off_is_put_right_by_the_men_the_learnt_model_sees() {
    let scene = random_scene(34, Palette::Wooden);
    let base = ColourModel::wooden().unwrap();
    let (frame, truth) = rendered_start(&scene, 34);
    let found = locate_board(&frame, None).unwrap_or_else(|e| panic!("{e}"));
    assert!(corner_error(&found.corners, &truth.corners) <= 0.1, "the board itself is found");
    let mut model = SquareModel::builtin().unwrap();
    for (du, dv) in [(0.0, 1.0), (0.0, -1.0), (1.0, 0.0), (-1.0, 0.0), (1.0, 1.0), (-1.0, 1.0), (1.0, -1.0), (-1.0, -1.0)] {
        let off = found.shifted(du, dv);
        assert!(Calibration::one_square_over(&frame, &base, &off, "found").is_none(), "({du}, {dv}): the colours alone cannot tell this start");
        model.forget_session();
        let (cal, moved) = Calibration::model_start_one_square_over(&frame, &base, &off, "found", &mut model)
            .unwrap()
            .unwrap_or_else(|| panic!("({du}, {dv}): not put right"));
        let error = corner_error(&moved.corners, &truth.corners);
        assert!(error <= 0.1, "({du}, {dv}): corners off by {error:.3} square after moving");
        assert!(corner_error(&cal.corners, &truth.corners) <= 0.1 && cal.square_head.is_some());
    }
}

/// A set whose two colours the model cannot tell apart (a network whose head reads every man
/// half dark, half light, made from the built-in one) still shows a start by where its men stand: on tuning
/// scene 34, which the colours refuse, the start is taken by occupancy, its sides told by which
/// group's tops are darker, and White's home is where the built-in model puts it.
#[test]
fn a_start_is_told_by_where_the_men_stand_when_the_model_cannot_tell_their_colours() {
    let mut colour_blind: serde_json::Value = serde_json::from_str(square_model::BUILTIN_JSON).unwrap();
    // Dark and light man get the mean of their two rows: every man reads half dark, half light.
    let head = colour_blind["head"].clone();
    let rows: Vec<Vec<f64>> = (1..3).map(|k| head["weights"][k].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect()).collect();
    let mean_row: Vec<f64> = rows[0].iter().zip(&rows[1]).map(|(a, b)| (a + b) / 2.0).collect();
    let mean_bias = (head["bias"][1].as_f64().unwrap() + head["bias"][2].as_f64().unwrap()) / 2.0;
    for k in 1..3 {
        colour_blind["head"]["weights"][k] = serde_json::json!(mean_row);
        colour_blind["head"]["bias"][k] = serde_json::json!(mean_bias);
    }
    let colour_blind = colour_blind.to_string();
    let scene = random_scene(34, Palette::Wooden);
    let base = ColourModel::wooden().unwrap();
    let (image, _) = rendered_start(&scene, 34);
    let mut model = SquareModel::builtin().unwrap();
    let (reference, _) = Calibration::from_image_with(&image, &base, None, "wooden start", Some(&mut model)).unwrap();
    let mut blind = SquareModel::from_networks(&[("colour-blind", square_model::BUILTIN_ONNX, colour_blind.as_str())]).unwrap();
    let loc = locate_board(&image, None).unwrap();
    let features = board_features_with(&rectify(&image, &loc).unwrap(), None).unwrap();
    let learnt = square_model::LearntReading::read(&mut blind, &image, &loc, features.top_left_dark).unwrap();
    assert_eq!(learnt.start_side(&blind, features.top_left_dark), None, "the colour-blind network reads no start by the men's colours");
    assert!(learnt.start_by_occupancy(&blind, features.top_left_dark).is_some(), "it sees where the men stand");
    let (cal, _) = Calibration::from_image_with(&image, &base, None, "wooden start", Some(&mut blind)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(cal.white_home, reference.white_home);
}

/// A checked tablecloth around the board: a lattice of squares beyond the board's edge, of
/// about the board's square size. The board is found where its own squares are.
#[test]
fn a_board_on_a_checked_tablecloth_is_found_where_its_squares_are() {
    use boardwatch::synth::TableKind;
    let start = Position::start(&Variant::English.rules()).to_grid();
    for seed in [21u64, 22, 23] {
        let mut scene = unseen_board_scene(seed);
        scene.table.kind = TableKind::Checked;
        scene.table.grain_scale = 0.9 + 0.1 * (seed % 3) as f64;
        let (image, truth) = render_frame(&scene, &start, None, 3).unwrap();
        let location = locate_board(&to_mat(&image), None).unwrap_or_else(|e| panic!("scene {seed}: {e}"));
        let error = corner_error(&location.corners, &truth.corners);
        assert!(error <= 0.1, "scene {seed}: corners off by {error:.3} square");
    }
}
