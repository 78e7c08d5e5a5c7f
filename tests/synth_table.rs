//! The projected table renderer (`synth::table`) and `boardwatch render-table`: truth that
//! matches the pixels, sessions whose taps are the script's, and repeatable bytes.

use boardwatch::synth::table::{
    calibration_picture, grid_picture, plan_table_session, random_distractor_script, random_tap_script, render_table_frame,
    table_frame_truth, table_session_truth, PointingHand, Side, TableAction, TableExtra, TableScene, TableScript,
};
use boardwatch::synth::RgbImage;
use boardwatch::touch::pattern::CalibrationPattern;
use image::Rgb;

fn scene(width: u32, height: u32, tilt: f64, yaw: f64) -> TableScene {
    let mut scene = TableScene { width, height, ..TableScene::default() };
    scene.camera.tilt_deg = tilt;
    scene.camera.tilt_azimuth_deg = 20.0;
    scene.camera.yaw_deg = yaw;
    // A dim room and a white table, as a projected game wants.
    scene.room.level = 0.12;
    scene.table.finish = boardwatch::synth::table::TableFinish::Plain;
    scene.table.color = [232, 232, 228];
    scene
}

fn light_grid(scene: &TableScene) -> RgbImage {
    grid_picture(scene.cols, scene.rows, 20, &|c, r| if (c + r) % 2 == 0 { Rgb([240, 240, 240]) } else { Rgb([215, 215, 215]) })
}

fn luma(image: &RgbImage, p: [f64; 2]) -> f64 {
    let (x, y) = (p[0].round().clamp(0.0, image.width() as f64 - 1.0) as u32, p[1].round().clamp(0.0, image.height() as f64 - 1.0) as u32);
    let c = image.get_pixel(x, y).0;
    (c[0] as f64 + c[1] as f64 + c[2] as f64) / 3.0
}

#[test]
fn truth_corners_bound_the_bright_rectangle() {
    for (tilt, yaw) in [(0.0, 0.0), (30.0, 35.0), (22.0, 200.0)] {
        let scene = scene(320, 240, tilt, yaw);
        let (image, truth) = render_table_frame(&scene, &light_grid(&scene), &[], &[], 4).unwrap();
        let centre = truth.corners.iter().fold([0.0, 0.0], |a, c| [a[0] + c[0] / 4.0, a[1] + c[1] / 4.0]);
        for corner in truth.corners {
            let (dx, dy) = (centre[0] - corner[0], centre[1] - corner[1]);
            let len = (dx * dx + dy * dy).sqrt();
            let (ux, uy) = (dx / len, dy / len);
            let inside = luma(&image, [corner[0] + 6.0 * ux, corner[1] + 6.0 * uy]);
            let outside = luma(&image, [corner[0] - 6.0 * ux, corner[1] - 6.0 * uy]);
            assert!(inside > 110.0, "tilt {tilt}: inside {corner:?} is {inside}");
            assert!(outside < 0.6 * inside, "tilt {tilt}: outside {corner:?} is {outside}, inside {inside}");
        }
    }
}

#[test]
fn the_fingertip_truth_is_on_the_skin_of_the_hand() {
    let scene = scene(320, 240, 30.0, 10.0);
    let picture = light_grid(&scene);
    for (cell, side) in [([2.5, 3.5], Side::Bottom), ([6.4, 1.6], Side::Right), ([4.5, 6.5], Side::Top)] {
        let hand = PointingHand::tapping(cell, side, &scene);
        let (with, truth) = render_table_frame(&scene, &picture, std::slice::from_ref(&hand), &[], 1).unwrap();
        let (without, _) = render_table_frame(&scene, &picture, &[], &[], 1).unwrap();
        let tip = &truth.fingertips[0];
        assert!(tip.visible, "{cell:?}");
        assert_eq!(tip.cell, Some([cell[0] as usize, cell[1] as usize]));
        let (x, y) = (tip.pixel[0].round() as u32, tip.pixel[1].round() as u32);
        let p = with.get_pixel(x, y).0;
        let q = without.get_pixel(x, y).0;
        // Skin: redder than blue; and not the table seen without the hand.
        assert!(p[0] > p[2] + 10 && p[0] >= p[1], "{cell:?}: {p:?}");
        let change: i32 = (0..3).map(|c| (p[c] as i32 - q[c] as i32).abs()).sum();
        assert!(change > 30, "{cell:?}: the hand changes the tip's pixel by {change} only");
        // The hand's shadow darkens some of the table near it.
        let darker = (0..with.width())
            .flat_map(|x| (0..with.height()).map(move |y| (x, y)))
            .filter(|&(x, y)| (with.get_pixel(x, y).0[1] as i32) + 40 < without.get_pixel(x, y).0[1] as i32)
            .count();
        assert!(darker > 100, "{cell:?}: no shadow ({darker} pixels darker)");
    }
}

#[test]
fn a_tap_script_has_exactly_its_tap_and_the_dwell_frames_point_at_the_cell() {
    let scene = scene(160, 120, 25.0, 0.0);
    let script = TableScript {
        actions: vec![
            TableAction::Pause { seconds: 0.4 },
            TableAction::Lean { seconds: 0.5, side: None },
            TableAction::Tap { cell: [5, 2], dwell_s: 0.9, side: Some(Side::Left) },
            TableAction::PageChange { picture_index: 1 },
            TableAction::Pause { seconds: 0.3 },
        ],
    };
    let fps = 20.0;
    let truth = table_session_truth(&scene, &script, fps).unwrap();
    assert_eq!(truth.taps.len(), 1);
    let tap = &truth.taps[0];
    assert_eq!(tap.cell, [5, 2]);
    assert!((tap.dwell_end_s - tap.dwell_start_s - 0.9).abs() < 1e-9);
    // After the pause and the lean (0.5 s and 1.2 s to come and go), a reach of 0.5-0.8 s.
    assert!(tap.dwell_start_s >= 0.4 + 1.7 + 0.5 - 1e-9 && tap.dwell_start_s <= 0.4 + 1.7 + 0.8 + 1e-9, "{tap:?}");
    let frames = plan_table_session(&scene, &script, fps).unwrap();
    assert_eq!(frames.len(), truth.frames);
    let mut dwelling = 0;
    for frame in &frames {
        let t = table_frame_truth(&scene, &frame.hands, &frame.extras).unwrap();
        if frame.time_s >= tap.dwell_start_s && frame.time_s < tap.dwell_end_s {
            dwelling += 1;
            assert_eq!(t.fingertips.len(), 1);
            assert_eq!(t.fingertips[0].cell, Some([5, 2]), "at {} s", frame.time_s);
            assert!(t.fingertips[0].visible);
            assert_eq!(frame.picture_index, 0);
        }
    }
    assert!(dwelling >= 17, "{dwelling} dwell frames");
    assert_eq!(frames.last().unwrap().picture_index, 1);
    // A frame of the lean has the person and no hand.
    assert!(frames.iter().any(|f| f.hands.is_empty() && matches!(f.extras.first(), Some(TableExtra::Lean(_)))));
    // The dwell's middle frame renders.
    let mid = frames.iter().find(|f| f.time_s >= (tap.dwell_start_s + tap.dwell_end_s) / 2.0).unwrap();
    render_table_frame(&scene, &light_grid(&scene), &mid.hands, &mid.extras, 0).unwrap();
}

#[test]
fn distractor_scripts_have_no_taps_and_never_dwell() {
    let scene = scene(160, 120, 15.0, 0.0);
    for seed in 0..6 {
        let script = random_distractor_script(seed, 15.0);
        assert!(!script.actions.is_empty());
        let truth = table_session_truth(&scene, &script, 30.0).unwrap();
        assert!(truth.taps.is_empty());
        let frames = plan_table_session(&scene, &script, 30.0).unwrap();
        assert!(frames.len() as f64 >= 15.0 * 30.0 * 0.9);
        let mut run = 0;
        let mut last = None;
        for frame in &frames {
            let t = table_frame_truth(&scene, &frame.hands, &frame.extras).unwrap();
            let cell = t.fingertips.first().and_then(|f| f.cell);
            run = if cell.is_some() && cell == last { run + 1 } else { 1 };
            assert!(run < 12, "seed {seed}: a fingertip stays {run} frames on {cell:?}");
            last = cell;
        }
    }
    // Tap scripts hold their taps, and the same number come out.
    let script = random_tap_script(9, 8, 8, 3);
    assert_eq!(table_session_truth(&scene, &script, 10.0).unwrap().taps.len(), 3);
}

#[test]
fn the_same_seed_gives_the_same_bytes() {
    let mut scene = boardwatch::synth::table::random_table_scene(11);
    scene.width = 160;
    scene.height = 120;
    let picture = light_grid(&scene);
    let hand = PointingHand::tapping([3.5, 4.5], Side::Bottom, &scene);
    let a = render_table_frame(&scene, &picture, std::slice::from_ref(&hand), &[], 3).unwrap();
    let b = render_table_frame(&scene, &picture, std::slice::from_ref(&hand), &[], 3).unwrap();
    assert_eq!(a.0.as_raw(), b.0.as_raw());
    assert_eq!(a.1, b.1);
    let c = render_table_frame(&scene, &picture, std::slice::from_ref(&hand), &[], 4).unwrap();
    assert_ne!(a.0.as_raw(), c.0.as_raw(), "the noise follows its seed");
}

/// The homography taking the unit square's corners (0,0), (1,0), (1,1), (0,1) to `corners`.
fn square_to_quad(corners: [[f64; 2]; 4]) -> [[f64; 3]; 3] {
    let src = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]];
    let mut a = [[0.0f64; 9]; 8];
    for i in 0..4 {
        let ([x, y], [u, v]) = (src[i], corners[i]);
        a[2 * i] = [x, y, 1.0, 0.0, 0.0, 0.0, -u * x, -u * y, u];
        a[2 * i + 1] = [0.0, 0.0, 0.0, x, y, 1.0, -v * x, -v * y, v];
    }
    for col in 0..8 {
        let pivot = (col..8).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs())).unwrap();
        a.swap(col, pivot);
        let pivot_row = a[col];
        for (row, line) in a.iter_mut().enumerate() {
            if row != col {
                let f = line[col] / pivot_row[col];
                for (value, p) in line.iter_mut().zip(pivot_row).skip(col) {
                    *value -= f * p;
                }
            }
        }
    }
    let h: Vec<f64> = (0..8).map(|i| a[i][8] / a[i][i]).collect();
    [[h[0], h[1], h[2]], [h[3], h[4], h[5]], [h[6], h[7], 1.0]]
}

fn apply(h: &[[f64; 3]; 3], x: f64, y: f64) -> [f64; 2] {
    let w = h[2][0] * x + h[2][1] * y + h[2][2];
    [(h[0][0] * x + h[0][1] * y + h[0][2]) / w, (h[1][0] * x + h[1][1] * y + h[1][2]) / w]
}

#[test]
fn the_calibration_picture_has_its_corners_where_the_pattern_says() {
    for (cols, rows, tilt, yaw) in [(8, 8, 0.0, 0.0), (12, 8, 25.0, 15.0), (6, 9, 30.0, 95.0)] {
        let mut s = scene(320, 240, tilt, yaw).clean();
        s.cols = cols;
        s.rows = rows;
        let pattern = CalibrationPattern::for_grid(cols, rows);
        let picture = calibration_picture(&pattern, cols as u32 * 40, rows as u32 * 40);
        let (image, truth) = render_table_frame(&s, &picture, &[], &[], 0).unwrap();
        let h = square_to_quad(truth.corners);
        // The pattern's white and black as seen, from the ring and a black square.
        let white = luma(&image, apply(&h, 0.5 / pattern.across as f64, 0.5));
        let black = luma(&image, apply(&h, 1.5 / pattern.across as f64, 1.5 / pattern.down as f64));
        assert!(white > black + 80.0, "white {white}, black {black}");
        let mid = (white + black) / 2.0;
        let corners = pattern.corner_fractions();
        assert_eq!(corners.len(), pattern.inner_corners().0 * pattern.inner_corners().1);
        for [fx, fy] in corners {
            let at = apply(&h, fx, fy);
            // Three pixels from the corner in each quadrant, along the squares' own diagonals.
            let (ex, ey) = (0.5 / pattern.across as f64, 0.5 / pattern.down as f64);
            for (sx, sy) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                let towards = apply(&h, fx + sx * ex, fy + sy * ey);
                let (dx, dy) = (towards[0] - at[0], towards[1] - at[1]);
                let len = (dx * dx + dy * dy).sqrt();
                let sample = [at[0] + 3.0 * dx / len, at[1] + 3.0 * dy / len];
                let seen_white = luma(&image, sample) > mid;
                assert_eq!(seen_white, pattern.is_white(fx + sx * ex, fy + sy * ey), "{cols}x{rows} tilt {tilt}: corner {fx},{fy} quadrant {sx},{sy}");
            }
        }
    }
}

fn boardwatch(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_boardwatch")).args(args).output().unwrap()
}

#[test]
fn render_table_names_its_bad_parameters() {
    let tmp = tempfile::Builder::new().prefix("synth_table_cli_").tempdir().unwrap();
    let dir = tmp.path();
    let out = dir.join("f.png");
    let out = out.to_str().unwrap();
    let failed = |args: &[&str], wanted: &str| {
        let o = boardwatch(args);
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        assert!(!o.status.success() && err.contains(wanted), "{args:?}: {err}");
    };
    failed(&["render-table", "--tilt", "40", "--out", out], "--tilt 40");
    failed(&["render-table", "--cols", "0", "--out", out], "--cols 0");
    failed(&["render-table", "--taps", "3,9", "--out", out], "--taps: cell 3,9");
    let script = dir.join("bad.json");
    std::fs::write(&script, "{\"actions\": [\n  {\"action\": \"tap\", \"cell\": [1, 1], \"dwell_s\": 1},\n  {\"action\": \"jump\"}\n]}\n").unwrap();
    failed(&["render-table", "--script", script.to_str().unwrap(), "--out", out], "line 3");

    // A short session: frames, truth.json and frames.json.
    let session = dir.join("session");
    let o = boardwatch(&["render-table", "--game", "sokoban", "--taps", "4,2", "--width", "96", "--height", "72", "--fps", "4", "--seed", "2", "--out-dir", session.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let truth: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(session.join("truth.json")).unwrap()).unwrap();
    assert_eq!(truth["taps"].as_array().unwrap().len(), 1);
    assert_eq!(truth["taps"][0]["cell"], serde_json::json!([4, 2]));
    let frames = truth["frames"].as_u64().unwrap() as usize;
    assert!(session.join(format!("frame_{:05}.png", frames - 1)).exists());
    let listed: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(session.join("frames.json")).unwrap()).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), frames);
}

#[test]
fn a_fingertip_under_another_hand_is_not_visible() {
    let scene = scene(160, 120, 0.0, 0.0);
    let below = PointingHand::tapping([4.5, 4.5], Side::Bottom, &scene);
    let above = PointingHand { height_cm: 6.0, ..PointingHand::tapping([4.5, 4.5], Side::Left, &scene) };
    let truth = table_frame_truth(&scene, &[below.clone(), above], &[]).unwrap();
    assert!(!truth.fingertips[0].visible);
    assert!(truth.fingertips[1].visible);
    assert!(table_frame_truth(&scene, &[below], &[]).unwrap().fingertips[0].visible);
}
