//! The projected calibration pattern seen by the camera: the map from camera pixels to cells
//! must put every cell centre within a tenth of a cell, over keystone and camera tilt, for
//! grids from a few cells to 64x64 points; and what is not the pattern must say why.

use boardwatch::touch::grid_map::{apply, Homography};
use boardwatch::touch::pattern::CalibrationPattern;
use boardwatch::vision::table::{find_pattern, PatternError};
use opencv::core::{Mat, Point2f, Vector, CV_8UC3};
use opencv::prelude::*;

/// The homography taking the rectangle's fractions (0..1) to the four image corners.
fn rect_to_image(corners: [[f64; 2]; 4]) -> Homography {
    let src: Vector<Point2f> = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]].iter().map(|p: &[f32; 2]| Point2f::new(p[0], p[1])).collect();
    let dst: Vector<Point2f> = corners.iter().map(|p| Point2f::new(p[0] as f32, p[1] as f32)).collect();
    let m = opencv::imgproc::get_perspective_transform(&src, &dst, opencv::core::DECOMP_LU).unwrap();
    let mut h = [[0.0; 3]; 3];
    for (r, row) in h.iter_mut().enumerate() {
        for (c, v) in row.iter_mut().enumerate() {
            *v = *m.at_2d::<f64>(r as i32, c as i32).unwrap();
        }
    }
    h
}

/// A camera frame of a dim table with the pattern projected onto the quadrilateral `corners`
/// (2x2 samples a pixel, a warm projector, a little texture on the table).
/// (The synthetic renderer of `synth::table` draws whole sessions; this one is small and exact.)
fn frame(pattern: &CalibrationPattern, corners: [[f64; 2]; 4], width: i32, height: i32) -> Mat {
    let h = rect_to_image(corners);
    let inverse = boardwatch::touch::grid_map::invert(&h).unwrap();
    let mut image = Mat::new_rows_cols_with_default(height, width, CV_8UC3, opencv::core::Scalar::all(0.0)).unwrap();
    for y in 0..height {
        for x in 0..width {
            let mut sum = [0.0f64; 3];
            // Pixel (x, y) is centred on (x, y), as OpenCV counts.
            for (dx, dy) in [(-0.25, -0.25), (0.25, -0.25), (-0.25, 0.25), (0.25, 0.25)] {
                let [fx, fy] = apply(&inverse, [x as f64 + dx, y as f64 + dy]).unwrap();
                let table = 55.0 + 12.0 * (((x * 7 + y * 13) % 17) as f64 / 17.0);
                let colour = if (0.0..1.0).contains(&fx) && (0.0..1.0).contains(&fy) {
                    if pattern.is_white(fx, fy) { [205.0, 225.0, 240.0] } else { [table * 0.6 + 20.0; 3] }
                } else {
                    [table * 0.8, table * 0.9, table]
                };
                for c in 0..3 {
                    sum[c] += colour[c] / 4.0;
                }
            }
            let px = image.at_2d_mut::<opencv::core::Vec3b>(y, x).unwrap();
            *px = opencv::core::Vec3b::from([sum[0] as u8, sum[1] as u8, sum[2] as u8]);
        }
    }
    image
}

/// The largest distance, in cells, between where a cell centre is and where the found map
/// puts it.
fn worst_cell_error(cols: usize, rows: usize, corners: [[f64; 2]; 4], width: i32, height: i32) -> f64 {
    let pattern = CalibrationPattern::for_grid(cols, rows);
    let image = frame(&pattern, corners, width, height);
    let fit = find_pattern(&image, &pattern, cols, rows).unwrap_or_else(|e| panic!("{cols}x{rows} at {corners:?}: {e}"));
    let truth = rect_to_image(corners);
    let mut worst = 0.0f64;
    for r in 0..rows {
        for c in 0..cols {
            let centre = [(c as f64 + 0.5) / cols as f64, (r as f64 + 0.5) / rows as f64];
            let seen = apply(&truth, centre).unwrap();
            let [x, y] = fit.map.to_cells(seen).unwrap();
            worst = worst.max(((x - c as f64 - 0.5).powi(2) + (y - r as f64 - 0.5).powi(2)).sqrt());
        }
    }
    worst
}

#[test]
fn cell_centres_land_within_a_tenth_of_a_cell_under_keystone_and_tilt() {
    // Straight on; a camera tilted about 35 degrees (the far side narrower); turned and tilted
    // the other way; turned half a turn (the marker tells the top).
    let views: [[[f64; 2]; 4]; 4] = [
        [[120.0, 90.0], [520.0, 90.0], [520.0, 390.0], [120.0, 390.0]],
        [[180.0, 80.0], [470.0, 85.0], [560.0, 400.0], [90.0, 395.0]],
        [[150.0, 150.0], [470.0, 60.0], [560.0, 330.0], [170.0, 420.0]],
        [[520.0, 400.0], [110.0, 380.0], [150.0, 70.0], [500.0, 100.0]],
    ];
    for (cols, rows) in [(10, 8), (30, 20), (64, 64), (8, 20)] {
        for corners in views {
            let worst = worst_cell_error(cols, rows, corners, 640, 480);
            assert!(worst < 0.1, "{cols}x{rows} seen at {corners:?}: a cell centre is {worst:.3} cells off");
        }
    }
}

#[test]
fn no_pattern_and_a_tiny_pattern_say_why() {
    let pattern = CalibrationPattern::for_grid(10, 8);
    let blank = frame(&pattern, [[-10.0, -10.0], [-5.0, -10.0], [-5.0, -5.0], [-10.0, -5.0]], 320, 240);
    assert!(matches!(find_pattern(&blank, &pattern, 10, 8), Err(PatternError::NotSeen)));
    // A pattern of about 1.5% of a large frame: found, but too small to map a grid well.
    let tiny = frame(&pattern, [[600.0, 400.0], [760.0, 400.0], [760.0, 520.0], [600.0, 520.0]], 1280, 960);
    match find_pattern(&tiny, &pattern, 10, 8) {
        Err(e @ PatternError::TooSmall { .. }) => assert!(e.to_string().contains("too small"), "{e}"),
        Err(PatternError::NotSeen) => {}
        other => panic!("a pattern of 1.5% of the frame: {:?}", other.map(|f| f.rms_px)),
    }
    // Not a colour frame.
    let grey = Mat::new_rows_cols_with_default(240, 320, opencv::core::CV_8UC1, opencv::core::Scalar::all(0.0)).unwrap();
    assert!(matches!(find_pattern(&grey, &pattern, 10, 8), Err(PatternError::Vision(_))));
}

#[test]
fn a_camera_that_moved_after_calibration_is_noticed() {
    use boardwatch::vision::table::outline_holds;
    let (cols, rows) = (12, 9);
    let pattern = CalibrationPattern::for_grid(cols, rows);
    let corners = [[150.0, 100.0], [500.0, 110.0], [530.0, 380.0], [120.0, 370.0]];
    let fit = find_pattern(&frame(&pattern, corners, 640, 480), &pattern, cols, rows).unwrap();
    // The game's picture: a bright rectangle (no pattern; the ring's white stands in for it).
    let plain = CalibrationPattern { across: 3, down: 3 };
    assert_eq!(outline_holds(&frame(&plain, corners, 640, 480), &fit.map).unwrap(), Some(true));
    // The camera turned a little: the rectangle is seen 40 pixels to the right.
    let moved = corners.map(|[x, y]| [x + 40.0, y + 10.0]);
    assert_eq!(outline_holds(&frame(&plain, moved, 640, 480), &fit.map).unwrap(), Some(false));
}
