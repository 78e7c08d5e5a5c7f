//! The synthetic renderer against its own ground truth: what the truth says is where, is there.
//! Small images (320x240) and a handful of scenes, so this runs in a few seconds.

use boardwatch::draughts::fen::parse_fen;
use boardwatch::draughts::pdn::{read_games, ReadMode};
use boardwatch::draughts::{Position, Variant};
use boardwatch::synth::recording::{frame_scene, frame_seed, plan_recording, GameMoves, RecordingOptions};
use boardwatch::synth::{random_scene, render_frame, FrameTruth, Hand, ImageSide, Palette, PieceTruth, RgbImage, Scene, SynthError};

fn start_grid() -> [String; 8] {
    Position::start(&Variant::English.rules()).to_grid()
}

fn small(mut scene: Scene) -> Scene {
    scene.width = 320;
    scene.height = 240;
    scene
}

/// Mean colour of the 3x3 pixels around a point.
fn sample(image: &RgbImage, at: [f64; 2]) -> [f64; 3] {
    let (cx, cy) = (at[0].round() as i64, at[1].round() as i64);
    let mut sum = [0.0; 3];
    for dy in -1..=1 {
        for dx in -1..=1 {
            let x = (cx + dx).clamp(0, image.width() as i64 - 1) as u32;
            let y = (cy + dy).clamp(0, image.height() as i64 - 1) as u32;
            let p = image.get_pixel(x, y).0;
            for c in 0..3 {
                sum[c] += p[c] as f64 / 9.0;
            }
        }
    }
    sum
}

fn luma(c: [f64; 3]) -> f64 {
    0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2]
}

#[test]
fn same_seed_same_bytes() {
    let scene = small(random_scene(5, Palette::FourColour));
    let hand = Hand::random(5);
    let (a, truth_a) = render_frame(&scene, &start_grid(), Some(&hand), 9).unwrap();
    let (b, truth_b) = render_frame(&scene, &start_grid(), Some(&hand), 9).unwrap();
    assert_eq!(a.as_raw(), b.as_raw());
    assert_eq!(truth_a, truth_b);
    // Another noise seed changes the pixels, not the truth.
    let (c, truth_c) = render_frame(&scene, &start_grid(), Some(&hand), 10).unwrap();
    assert_ne!(a.as_raw(), c.as_raw());
    assert_eq!(truth_a, truth_c);
}

/// Empty squares (rows 3 and 4 of the start position) sampled where the truth puts their
/// centres: every light square is brighter than the dark squares beside it.
fn check_squares(scene: &Scene, image: &RgbImage, truth: &FrameTruth) {
    for row in 3..5u8 {
        for col in 0..7u8 {
            let a = luma(sample(image, truth.square_center(row, col)));
            let b = luma(sample(image, truth.square_center(row, col + 1)));
            let (light, dark) = if (row + col) % 2 == 0 { (a, b) } else { (b, a) };
            assert!(
                light > dark + 25.0,
                "row {row}, cols {col}-{}: light {light:.0} vs dark {dark:.0}\n{}",
                col + 1,
                serde_json::to_string(scene).unwrap()
            );
        }
    }
}

#[test]
fn square_centres_from_the_truth_land_on_their_squares() {
    for seed in 0..6 {
        for palette in [Palette::FourColour, Palette::Wooden] {
            let mut scene = small(random_scene(seed, palette));
            // Glare may light a dark square above its neighbour; that is covered below.
            scene.glare.clear();
            let (image, truth) = render_frame(&scene, &start_grid(), None, seed).unwrap();
            assert!(truth.board_in_view);
            check_squares(&scene, &image, &truth);
        }
    }
}

#[test]
fn light_and_dark_squares_differ_on_average_with_every_effect() {
    for seed in 10..16 {
        let scene = small(random_scene(seed, Palette::FourColour));
        let (image, truth) = render_frame(&scene, &start_grid(), None, seed).unwrap();
        let (mut light, mut dark) = (0.0, 0.0);
        for row in 3..5u8 {
            for col in 0..8u8 {
                let l = luma(sample(&image, truth.square_center(row, col)));
                if (row + col) % 2 == 0 {
                    light += l / 8.0;
                } else {
                    dark += l / 8.0;
                }
            }
        }
        assert!(light > dark + 40.0, "seed {seed}: light {light:.0}, dark {dark:.0}");
    }
}

/// The colour family of a seed-palette piece, by hue (a warm lamp turns yellow towards orange).
fn hue_family(c: [f64; 3]) -> char {
    let [r, g, b] = c;
    let max = r.max(g).max(b);
    let min = r.min(g).min(b);
    if max - min < 25.0 {
        return '?';
    }
    let hue = if max == r {
        60.0 * ((g - b) / (max - min)).rem_euclid(6.0)
    } else if max == g {
        60.0 * ((b - r) / (max - min) + 2.0)
    } else {
        60.0 * ((r - g) / (max - min) + 4.0)
    };
    match hue {
        h if !(25.0..330.0).contains(&h) => 'b', // red: Black's man
        h if h < 75.0 => 'w',                    // yellow: White's man
        h if h < 175.0 => 'W',                   // green: White's king
        h if h < 290.0 => 'B',                   // blue: Black's king
        _ => '?',
    }
}

#[test]
fn piece_tops_show_the_piece_colour() {
    let rules = Variant::English.rules();
    let grid = parse_fen("W:WK5,21,22,30:BK28,1,2,10", &rules).unwrap().to_grid();
    for seed in 0..4 {
        let mut scene = small(random_scene(seed, Palette::FourColour));
        scene.glare.clear();
        scene.camera.tilt_deg = 30.0;
        scene.camera.fill = 0.95;
        let (image, truth) = render_frame(&scene, &grid, None, seed).unwrap();
        assert_eq!(truth.pieces.len(), 8);
        for piece in &truth.pieces {
            let seen = sample(&image, piece.top_center);
            assert_eq!(hue_family(seen), piece.piece, "seed {seed}, {piece:?}: colour {seen:?}");
        }
        // Seen from 30 degrees, tops stand off their footprints.
        let shift = truth.pieces.iter().map(|p| (p.top_center[0] - p.base_center[0]).hypot(p.top_center[1] - p.base_center[1])).fold(0.0, f64::max);
        assert!(shift > 1.2, "seed {seed}: largest top shift {shift:.2} px");
    }
}

#[test]
fn wooden_pieces_are_dark_and_light() {
    let grid = start_grid();
    for seed in 0..3 {
        let mut scene = small(random_scene(seed, Palette::Wooden));
        scene.glare.clear();
        let (image, truth) = render_frame(&scene, &grid, None, seed).unwrap();
        let mean = |who: char| {
            let tops: Vec<f64> = truth.pieces.iter().filter(|p| p.piece == who).map(|p| luma(sample(&image, p.top_center))).collect();
            tops.iter().sum::<f64>() / tops.len() as f64
        };
        assert!(mean('w') > 2.0 * mean('b'), "seed {seed}: white {:.0}, black {:.0}", mean('w'), mean('b'));
    }
}

#[test]
fn orientation_follows_the_yaw() {
    let mut scene = small(Scene::overhead(Palette::FourColour, 320, 240));
    for (yaw, side) in [(0.0, ImageSide::Top), (90.0, ImageSide::Right), (180.0, ImageSide::Bottom), (270.0, ImageSide::Left), (-30.0, ImageSide::Top)] {
        scene.camera.yaw_deg = yaw;
        let (_, truth) = render_frame(&scene, &start_grid(), None, 0).unwrap();
        assert_eq!(truth.orientation.row0_side, side, "yaw {yaw}");
        let expected = f64::rem_euclid(yaw, 360.0);
        let error = (truth.orientation.row0_angle_deg - expected + 540.0).rem_euclid(360.0) - 180.0;
        assert!(error.abs() < 0.5, "yaw {yaw}: {:?}", truth.orientation);
        // Corners come top-left first, clockwise.
        let [tl, tr, br, bl] = truth.corners;
        assert!(tl[0] < tr[0] && tl[1] < bl[1] && br[0] > bl[0] && br[1] > tr[1], "{:?}", truth.corners);
    }
}

#[test]
fn the_hand_covers_what_the_truth_says() {
    let mut scene = Scene::overhead(Palette::FourColour, 320, 240);
    scene.camera.tilt_deg = 10.0;
    let grid = start_grid();
    // White reaches for the man on row 5, column 2.
    let hand = Hand::reaching([2.5, 5.5], Hand::approach_for(boardwatch::draughts::Color::White));
    let (with_hand, truth) = render_frame(&scene, &grid, Some(&hand), 1).unwrap();
    let (without, plain) = render_frame(&scene, &grid, None, 1).unwrap();
    assert!(truth.hand_present && truth.hand_visible);
    assert!(!plain.hand_present && plain.hand_covered.is_empty());
    assert!(truth.hand_covered.contains(&[5, 2]), "{:?}", truth.hand_covered);
    // The arm comes from White's side, so Black's corner stays clear.
    assert_eq!(truth.hand_coverage[0][0], 0.0);
    assert!(!truth.hand_covered.iter().any(|&[row, _]| row < 3), "{:?}", truth.hand_covered);
    // Where the truth says a square is (nearly) all hand, the pixels there changed to skin.
    let mut checked = 0;
    for row in 0..8u8 {
        for col in 0..8u8 {
            if truth.hand_coverage[row as usize][col as usize] > 0.95 {
                let at = truth.square_center(row, col);
                let skin = sample(&with_hand, at);
                let board = sample(&without, at);
                assert!(skin[0] > skin[1] && skin[1] > skin[2], "({row}, {col}): {skin:?}");
                assert!((luma(skin) - luma(board)).abs() > 5.0 || (skin[0] - board[0]).abs() > 10.0, "({row}, {col})");
                checked += 1;
            }
        }
    }
    assert!(checked > 0);
    // A square the truth calls uncovered looks the same with and without the hand, shadows aside.
    let far = sample(&with_hand, truth.square_center(0, 7));
    let far_plain = sample(&without, truth.square_center(0, 7));
    assert!((luma(far) - luma(far_plain)).abs() < 3.0);
}

#[test]
fn out_of_range_parameters_are_errors_naming_them() {
    let grid = start_grid();
    let base = Scene::overhead(Palette::FourColour, 160, 120);
    type Spoil = Box<dyn Fn(&mut Scene)>;
    let cases: Vec<(&str, Spoil)> = vec![
        ("blur_sigma", Box::new(|s| s.blur_sigma = 7.5)),
        ("blur_sigma", Box::new(|s| s.blur_sigma = -1.0)),
        ("camera.k1", Box::new(|s| s.camera.k1 = 0.9)),
        ("camera.k1", Box::new(|s| s.camera.k1 = -0.31)),
        // In range, but folds the image over at this wide field of view.
        ("camera.k1", Box::new(|s| {
            s.camera.k1 = -0.3;
            s.camera.fov_deg = 100.0;
        })),
        ("camera.tilt_deg", Box::new(|s| s.camera.tilt_deg = 45.0)),
        ("noise_sigma", Box::new(|s| s.noise_sigma = f64::INFINITY)),
        ("camera.fov_deg", Box::new(|s| s.camera.fov_deg = 0.0)),
        ("width", Box::new(|s| s.width = 0)),
    ];
    for (name, spoil) in cases {
        let mut scene = base.clone();
        spoil(&mut scene);
        match render_frame(&scene, &grid, None, 0) {
            Err(err) => assert!(err.to_string().contains(name), "expected an error naming {name}, got: {err}"),
            Ok(_) => panic!("a scene with a bad {name} was rendered"),
        }
    }
    let mut grid = start_grid();
    grid[2] = "bbb".into();
    assert!(matches!(render_frame(&base, &grid, None, 0), Err(SynthError::BadGrid { row: 2, .. })));
    let mut hand = Hand::reaching([4.0, 4.0], 0.0);
    hand.size = f64::NAN;
    match render_frame(&base, &start_grid(), Some(&hand), 0) {
        Err(err) => assert!(err.to_string().contains("hand.size"), "{err}"),
        Ok(_) => panic!("a hand of NaN size was rendered"),
    }
}

#[test]
fn wild_parameters_never_panic() {
    // Garbage in every numeric field: an error or a frame, never a panic.
    let values = [f64::NAN, f64::INFINITY, -f64::INFINITY, -1e300, -3.0, -0.5, 0.0, 0.3, 1.0, 29.9, 1e300];
    let grid = start_grid();
    for (i, &v) in values.iter().enumerate() {
        for field in 0..12 {
            let mut scene = Scene::overhead(Palette::Wooden, 48, 40);
            match field {
                0 => scene.camera.tilt_deg = v,
                1 => scene.camera.yaw_deg = v,
                2 => scene.camera.fov_deg = v,
                3 => scene.camera.fill = v,
                4 => scene.camera.k1 = v,
                5 => scene.camera.target_offset[0] = v,
                6 => scene.lighting.elevation_deg = v,
                7 => scene.lighting.exposure = v,
                8 => scene.board.frame_width = v,
                9 => scene.pieces.radius = v,
                10 => scene.blur_sigma = v,
                _ => scene.noise_sigma = v,
            }
            let mut hand = Hand::random(i as u64);
            hand.target = [v, 4.0];
            let _ = render_frame(&scene, &grid, Some(&hand), 0);
            let _ = render_frame(&scene, &grid, None, 0);
        }
    }
}

#[test]
fn barrel_distortion_is_in_the_truth() {
    let mut scene = Scene::overhead(Palette::FourColour, 320, 240);
    scene.camera.k1 = -0.15;
    let (image, truth) = render_frame(&scene, &start_grid(), None, 0).unwrap();
    // Straight edges bow outwards: the middle of Black's edge lies above the chord between its
    // corners.
    let middle = truth.board_to_image(4.0, 0.0);
    let chord = (truth.corners[0][1] + truth.corners[1][1]) / 2.0;
    assert!(middle[1] < chord - 1.0, "middle {middle:?}, chord at y = {chord}");
    // The homography alone (no distortion) puts the corner elsewhere than the truth does.
    let h = truth.homography;
    let w = h[2][0] * 8.0 + h[2][1] * 8.0 + h[2][2];
    let undistorted = [(h[0][0] * 8.0 + h[0][1] * 8.0 + h[0][2]) / w, (h[1][0] * 8.0 + h[1][1] * 8.0 + h[1][2]) / w];
    assert!((undistorted[0] - truth.corners[2][0]).abs() > 1.0);
    check_squares(&scene, &image, &truth);
}

#[test]
fn a_short_game_renders_with_its_labels() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/samples/games/acf_sample.pdn")).unwrap();
    let records = read_games(&text, ReadMode::Lenient).unwrap();
    let game = GameMoves::from_record(&records[0], Variant::English, Some(6)).unwrap();
    assert_eq!(game.plies.len(), 6);
    assert_eq!(game.plies[4].pdn, "15x22");
    let scene = small(random_scene(3, Palette::FourColour));
    let options = RecordingOptions { fps: 5.0, ..RecordingOptions::default() };
    let frames = plan_recording(&game, &scene, &options).unwrap();
    let labels: Vec<&str> = frames.iter().map(|f| f.label.as_str()).collect();
    for needed in ["start", "hand-0", "ply-0", "hand-4", "partial-4", "ply-5", "end"] {
        assert!(labels.contains(&needed), "no {needed} in {labels:?}");
    }
    assert_eq!(frames.last().unwrap().grid, game.final_position().to_grid());
    // Render the first hand frame and the first still after it.
    let hand_index = labels.iter().position(|l| *l == "hand-0").unwrap();
    for index in [hand_index, labels.iter().position(|l| *l == "ply-0").unwrap()] {
        let frame = &frames[index];
        let (_, truth) = render_frame(&frame_scene(&scene, &options, index), &frame.grid, frame.hand.as_ref(), frame_seed(&options, index)).unwrap();
        assert_eq!(truth.grid, frame.grid);
        assert_eq!(truth.hand_visible, frame.hand.is_some());
    }
}

/// Many random viewpoints, run with `cargo test --test synth_render -- --ignored`: squares and
/// (seed palette) piece colours where the truth puts them, on every frame.
#[test]
#[ignore]
fn many_random_viewpoints() {
    let grid = start_grid();
    for seed in 100..400 {
        let palette = if seed % 2 == 0 { Palette::FourColour } else { Palette::Wooden };
        let mut scene = random_scene(seed, palette);
        scene.width = 240;
        scene.height = 180;
        scene.glare.clear();
        let (image, truth) = render_frame(&scene, &grid, Some(&Hand::random(seed)).filter(|_| seed % 3 == 0), seed).unwrap();
        assert!(truth.board_in_view, "seed {seed}");
        assert!(truth.tilt_deg <= 30.0 + 1e-9);
        let visible = |p: &&PieceTruth| !p.hidden_by_hand && truth.hand_coverage[p.row as usize][p.col as usize] == 0.0;
        for piece in truth.pieces.iter().filter(visible).filter(|_| palette == Palette::FourColour) {
            let seen = sample(&image, piece.top_center);
            assert_eq!(hue_family(seen), piece.piece, "seed {seed}, {piece:?}: colour {seen:?}");
        }
        if !truth.hand_present {
            check_squares(&scene, &image, &truth);
        }
    }
}

/// Which found corner is called top-left is a convention: corners named one place round
/// (as a reader may name them on a board turned 45 degrees) still count as the board found,
/// and the grid as seen turns with them.
#[test]
fn corners_named_one_place_round_still_find_the_board() {
    let scene = small(random_scene(3, Palette::Wooden));
    let grid = Position::start(&Variant::English.rules()).to_grid();
    let (_, truth) = render_frame(&scene, &grid, None, 3).unwrap();
    let found = truth.corners.map(|c| [c[0] as f32, c[1] as f32]);
    let seen = truth.grid_as_seen(&found).expect("the true corners find the board");
    assert_eq!(truth.corner_shift(&found), Some(0));
    let round = [found[1], found[2], found[3], found[0]];
    assert_eq!(truth.corner_shift(&round), Some(1));
    let turned = truth.grid_as_seen(&round).expect("corners named one place round find the board");
    // Named one place round, the first edge is the old right edge: row r of the turned view
    // is column 7 - r of the old one, read top to bottom.
    for r in 0..8 {
        for c in 0..8 {
            assert_eq!(turned[r].as_bytes()[c], seen[c].as_bytes()[7 - r], "square ({r},{c})");
        }
    }
    // Another quadrilateral is still refused.
    let shifted = found.map(|c| [c[0] + 40.0, c[1]]);
    assert!(truth.grid_as_seen(&shifted).is_none());
}

/// Quick play (`render --still 0.45`): every position stands still between two hands for 0.36
/// to 0.57 s (a capture's intermediate state 0.8 times that), where unhurried play stands about
/// a second; a pause the renderer cannot make is refused naming `--still`.
#[test]
fn quick_play_pauses_as_briefly_as_asked() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/samples/games/acf_sample.pdn")).unwrap();
    let records = read_games(&text, ReadMode::Lenient).unwrap();
    let game = GameMoves::from_record(&records[0], Variant::English, Some(12)).unwrap();
    let scene = small(random_scene(3, Palette::Wooden));
    let pauses = |still_seconds: f64| {
        let options = RecordingOptions { fps: 15.0, still_seconds, ..RecordingOptions::default() };
        let frames = plan_recording(&game, &scene, &options).unwrap();
        let mut runs: Vec<(String, usize)> = Vec::new();
        for f in &frames {
            match runs.last_mut() {
                Some((label, n)) if *label == f.label => *n += 1,
                _ => runs.push((f.label.clone(), 1)),
            }
        }
        // The still runs between hands (not the start or the end), in seconds.
        runs.into_iter().filter(|(l, _)| l.starts_with("ply-") || l.starts_with("partial-")).map(|(_, n)| n as f64 / 15.0).collect::<Vec<f64>>()
    };
    let quick = pauses(0.45);
    assert!(quick.iter().all(|&s| (0.26..=0.6).contains(&s)), "{quick:?}");
    let unhurried = pauses(1.0);
    assert!(unhurried.iter().all(|&s| s >= 0.6), "{unhurried:?}");
    let tmp = tempfile::Builder::new().prefix("bw-still-").tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_boardwatch"))
        .args(["render", "--game", concat!(env!("CARGO_MANIFEST_DIR"), "/samples/games/acf_sample.pdn"), "--still", "0.01", "--out-dir"])
        .arg(tmp.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("--still 0.01"), "{stderr}");
}
