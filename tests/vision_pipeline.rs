//! The vision pipeline without real photos: bad input is an error and never a panic, a drawn
//! board seen in perspective is found, tracked and re-found after the camera moves, stability
//! follows motion, camera geometry and board coordinates are right, and every frame source
//! reports missing or corrupt input clearly.

use boardwatch::vision::source::{self, CameraId, CameraRequest, SourceError, SourceSpec};
use boardwatch::vision::*;
use opencv::core::{self, Mat, Point, Point2f, Scalar, Size};
use opencv::imgproc;
use opencv::prelude::*;

/// A board drawn in board coordinates (64 px squares, a 40 px frame) with the seed palette's
/// colours: red men (b), yellow men (w).
fn drawn_board(grid: &[&str; 8], hand: bool) -> Mat {
    let sq = 64;
    let n = 8 * sq + 2 * 40;
    let mut b = Mat::new_rows_cols_with_default(n, n, core::CV_8UC3, Scalar::new(60.0, 110.0, 150.0, 0.0)).unwrap();
    for r in 0..8 {
        for c in 0..8 {
            let dark = (r + c) % 2 == 1;
            let col = if dark { Scalar::new(80.0, 95.0, 110.0, 0.0) } else { Scalar::new(190.0, 215.0, 225.0, 0.0) };
            imgproc::rectangle(&mut b, core::Rect::new(40 + c * sq, 40 + r * sq, sq, sq), col, -1, imgproc::LINE_8, 0).unwrap();
            let ch = grid[r as usize].as_bytes()[c as usize];
            if ch != b'.' {
                let ctr = Point::new(40 + c * sq + 32, 40 + r * sq + 32);
                let (body, rim) = if ch == b'w' {
                    (Scalar::new(90.0, 230.0, 240.0, 0.0), Scalar::new(40.0, 170.0, 190.0, 0.0))
                } else {
                    (Scalar::new(60.0, 70.0, 220.0, 0.0), Scalar::new(30.0, 35.0, 140.0, 0.0))
                };
                imgproc::circle(&mut b, ctr, 24, rim, -1, imgproc::LINE_AA, 0).unwrap();
                imgproc::circle(&mut b, ctr, 21, body, -1, imgproc::LINE_AA, 0).unwrap();
            }
        }
    }
    if hand {
        // A skin-coloured arm reaching in from the right over two rows.
        imgproc::rectangle(&mut b, core::Rect::new(300, 170, 292, 90), Scalar::new(150.0, 180.0, 235.0, 0.0), -1, imgproc::LINE_8, 0).unwrap();
    }
    b
}

/// The drawn board warped into a 1280x720 frame with its playing-area corners at `dst`.
fn frame_from(board: &Mat, dst: [[f32; 2]; 4]) -> Mat {
    let src = [Point2f::new(40.0, 40.0), Point2f::new(552.0, 40.0), Point2f::new(552.0, 552.0), Point2f::new(40.0, 552.0)];
    let d: [Point2f; 4] = dst.map(|p| Point2f::new(p[0], p[1]));
    let m = imgproc::get_perspective_transform_slice_def(src, d).unwrap();
    let mut frame = Mat::default();
    imgproc::warp_perspective(board, &mut frame, &m, Size::new(1280, 720), imgproc::INTER_LINEAR, core::BORDER_CONSTANT, Scalar::new(40.0, 60.0, 90.0, 0.0))
        .unwrap();
    frame
}

const VIEW: [[f32; 2]; 4] = [[420.0, 110.0], [890.0, 130.0], [930.0, 640.0], [380.0, 620.0]];
const START: [&str; 8] = [".b.b.b.b", "b.b.b.b.", ".b.b.b.b", "........", "........", "w.w.w.w.", ".w.w.w.w", "w.w.w.w."];
const AFTER_11_15: [&str; 8] = [".b.b.b.b", "b.b.b.b.", ".b.b...b", "......b.", "........", "w.w.w.w.", ".w.w.w.w", "w.w.w.w."];

/// A palette for the drawn pieces, fitted on the drawn start position itself.
fn drawn_palette(frame: &Mat, loc: &BoardLocation) -> ColourModel {
    let bf = board_features(&rectify(frame, loc).unwrap()).unwrap();
    let mut samples = Vec::new();
    for r in 0..8 {
        for c in 0..8 {
            let dark = (r + c) % 2 == 1;
            let cls = ColourClass::from_letter(START[r].as_bytes()[c] as char).unwrap();
            samples.push((bf.squares[r][c], dark, cls));
        }
    }
    // The seed palette's shape (features, priors), without its kings.
    let mut template = ColourModel::four_colour().unwrap();
    template.dark_king = None;
    template.light_king = None;
    ColourModel::fit(&template, &samples).unwrap()
}

#[test]
fn bad_inputs_are_errors_not_panics() {
    assert!(locate_board(&Mat::default(), None).is_err());
    let tiny = Mat::new_rows_cols_with_default(10, 10, core::CV_8UC3, Scalar::all(0.0)).unwrap();
    assert!(locate_board(&tiny, None).is_err());
    let flat = Mat::new_rows_cols_with_default(480, 640, core::CV_8UC3, Scalar::all(128.0)).unwrap();
    assert!(matches!(locate_board(&flat, None), Err(VisionError::BoardNotFound(_))));
    let mut noise = Mat::new_rows_cols_with_default(480, 640, core::CV_8UC1, Scalar::all(0.0)).unwrap();
    core::randu(&mut noise, &Scalar::all(0.0), &Scalar::all(255.0)).unwrap();
    assert!(locate_board(&noise, None).is_err());
    let f32img = Mat::new_rows_cols_with_default(480, 640, core::CV_32FC3, Scalar::all(0.5)).unwrap();
    assert!(locate_board(&f32img, None).is_err());
    assert!(BoardLocation::from_corners([[0.0, 0.0]; 4], (640, 480)).is_err());
    assert!(BoardLocation::from_corners([[0.0, 0.0], [f32::NAN, 0.0], [1.0, 1.0], [0.0, 1.0]], (640, 480)).is_err());
    assert!(classify(&flat, &ColourModel::wooden().unwrap()).is_err());
    assert!(check_location(&flat).is_err());
    // Malformed palettes and calibrations.
    assert!(ColourModel::from_json("{}").is_err());
    assert!(ColourModel::from_json(&palette::WOODEN_JSON.replace("\"rings\"", "\"nonsense\"")).is_err());
    assert!(ColourModel::from_json(&palette::FOUR_COLOUR_JSON.replace("\"piece_height\": 0.2", "\"piece_height\": 7")).is_err());
    assert!(ColourModel::named("no-such-palette").is_err());
    assert!(Calibration::from_json("{\"format\": \"something else\"}").is_err());
    // A frame of another size than the location: an error.
    let loc = BoardLocation::from_corners(VIEW, (1280, 720)).unwrap();
    assert!(rectify(&flat, &loc).is_err());
    // Impossible stability settings.
    let mut cfg = WatchConfig::default();
    cfg.stability.still_secs = -1.0;
    assert!(Watcher::new(ColourModel::wooden().unwrap(), cfg).is_err());
    let mut w = Watcher::new(ColourModel::wooden().unwrap(), WatchConfig::default()).unwrap();
    assert!(w.process(&Mat::default(), 0.0).is_err());
    // No board: reported, nothing stable.
    let r = w.process(&flat, 0.0).unwrap();
    assert!(r.location.is_none() && !r.stability.stable);
}

#[test]
fn a_board_in_perspective_is_found_tracked_and_read() {
    let frame = frame_from(&drawn_board(&START, false), VIEW);
    let loc = locate_board(&frame, None).expect("board found");
    for k in 0..4 {
        let d = (loc.corners[k][0] - VIEW[k][0]).hypot(loc.corners[k][1] - VIEW[k][1]);
        assert!(d < 3.0, "corner {k}: {:?} vs {:?}", loc.corners[k], VIEW[k]);
    }
    let again = locate_board(&frame, Some(&loc)).unwrap();
    assert_eq!(again.method, LocateMethod::Tracked);
    let check = check_location(&rectify(&frame, &loc).unwrap()).unwrap();
    assert!(check.aligned > 0.95 && !check.top_left_dark, "{check:?}");
    // A location a quarter square off fails the check.
    let off = BoardLocation::from_corners(VIEW.map(|p| [p[0] + 16.0, p[1] + 14.0]), (1280, 720)).unwrap();
    let bad = check_location(&rectify(&frame, &off).unwrap()).unwrap();
    assert!(bad.aligned < 0.8, "{bad:?}");
    // Hand-given corners (in any order) read the same.
    let manual = BoardLocation::from_corners([VIEW[2], VIEW[0], VIEW[3], VIEW[1]], (1280, 720)).unwrap();
    assert_eq!(manual.method, LocateMethod::Manual);
    let palette = drawn_palette(&frame, &loc);
    let reading = classify(&rectify(&frame, &manual).unwrap(), &palette).unwrap();
    assert_eq!(reading.grid(), START);
    assert_eq!(start_position_side(&reading), Some(Side::Bottom));
}

#[test]
fn the_watcher_reads_a_still_board_once_skips_motion_and_reads_changes() {
    let still = frame_from(&drawn_board(&START, false), VIEW);
    let hand = frame_from(&drawn_board(&START, true), VIEW);
    let moved = frame_from(&drawn_board(&AFTER_11_15, false), VIEW);
    let palette = drawn_palette(&still, &locate_board(&still, None).unwrap());
    let cfg = WatchConfig { auto_calibrate: false, ..Default::default() };
    let mut lazy = Watcher::new(palette.clone(), cfg).unwrap();
    let mut every = Watcher::new(palette, WatchConfig { read_every_frame: true, ..cfg }).unwrap();
    let fps = 15.0;
    let frames: Vec<&Mat> = [(&still, 10), (&hand, 6), (&moved, 10)].into_iter().flat_map(|(f, n)| std::iter::repeat(f).take(n)).collect();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for (i, f) in frames.iter().enumerate() {
        let t = i as f64 / fps;
        a.push(lazy.process(f, t).unwrap());
        b.push(every.process(f, t).unwrap());
    }
    // Same verdicts and the same positions handed on as reading every frame.
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert_eq!((x.stability.stable, x.stability.hand), (y.stability.stable, y.stability.hand), "frame {i}");
        let handed = |r: &FrameResult| r.view.as_ref().filter(|v| v.stable).map(|v| v.rows());
        assert_eq!(handed(x), handed(y), "frame {i}");
    }
    assert!(b.iter().all(|r| r.read) && every.frames_read() == frames.len() as u64);
    // The still start: read on the first frame, that reading kept, read again
    // once the still time is over and handed on from that fresh reading.
    let handed_at = a.iter().position(|r| r.stability.stable).unwrap();
    assert!(a[0].read && a[1..handed_at].iter().all(|r| !r.read && r.reading.is_some()));
    assert!(a[handed_at].read, "the reading handed on is a fresh one");
    assert!(a[handed_at + 1..10].iter().all(|r| !r.read && r.stability.stable));
    // The hand: its first frame moves and is not read; once it rests, it is read (foreign squares).
    assert!(!a[10].read && a[10].reading.is_none() && a[10].stability.hand);
    assert!(a[11].read && !a[11].stability.unknown_squares.is_empty());
    // The move: read again when the board is still, handed on after the still time.
    assert!(!a[16].read && a[17].read);
    assert_eq!(a.last().unwrap().view.as_ref().unwrap().rows(), AFTER_11_15);
    assert!(lazy.frames_read() * 2 < frames.len() as u64, "{} of {} frames read", lazy.frames_read(), frames.len());
}

#[test]
fn the_watcher_follows_hands_moves_and_a_moved_camera() {
    let still = frame_from(&drawn_board(&START, false), VIEW);
    let hand = frame_from(&drawn_board(&START, true), VIEW);
    let moved = frame_from(&drawn_board(&AFTER_11_15, false), VIEW);
    // The camera is bumped: the board lands elsewhere in the frame.
    let view2 = [[380.0f32, 90.0], [860.0, 100.0], [910.0, 620.0], [350.0, 610.0]];
    let bumped = frame_from(&drawn_board(&AFTER_11_15, false), view2);
    let palette = drawn_palette(&still, &locate_board(&still, None).unwrap());
    let mut cfg = WatchConfig::default();
    cfg.auto_calibrate = false;
    let mut w = Watcher::new(palette, cfg).unwrap();
    let fps = 15.0;
    let mut t = 0.0;
    let mut run = |w: &mut Watcher, img: &Mat, n: usize| -> Vec<FrameResult> {
        (0..n)
            .map(|_| {
                let r = w.process(img, t).unwrap();
                t += 1.0 / fps;
                r
            })
            .collect()
    };
    let a = run(&mut w, &still, 8);
    assert!(a[0].relocated && !a[0].stability.stable);
    assert!(a[7].stability.stable, "still for 7/15 s");
    assert_eq!(a[7].view.as_ref().unwrap().rows(), START);
    // A hand comes in: never stable while it is there, flagged on the first frame.
    let b = run(&mut w, &hand, 6);
    assert!(b.iter().all(|r| !r.stability.stable && r.stability.hand));
    assert!(b[0].stability.moving_cells > 0);
    assert!(!b[3].stability.unknown_squares.is_empty(), "the arm's colours belong to no class");
    // The move is made; stable again after the still time, with the new position.
    let c = run(&mut w, &moved, 8);
    assert!(!c[0].stability.stable && !c[5].stability.stable && c[7].stability.stable);
    assert_eq!(c[7].view.as_ref().unwrap().rows(), AFTER_11_15);
    assert!(c.iter().all(|r| !r.relocated), "the board did not move: no search");
    // The camera moves: the kept location fails its check, the board is found again.
    let d = run(&mut w, &bumped, 9);
    assert!(d.iter().any(|r| r.relocated));
    let last = d.last().unwrap();
    assert!(last.stability.stable);
    assert_eq!(last.view.as_ref().unwrap().rows(), AFTER_11_15);
    let loc = last.location.as_ref().unwrap();
    for k in 0..4 {
        assert!((loc.corners[k][0] - view2[k][0]).hypot(loc.corners[k][1] - view2[k][1]) < 3.0);
    }
}

/// Pinhole camera looking at the board: board (u, v, 0) -> image, for a camera at `c`
/// (board units, z towards the camera is negative here as in CameraPose) looking at `target`.
fn homography_of_camera(c: [f64; 3], target: [f64; 3], f: f64, size: (f64, f64)) -> [[f64; 3]; 3] {
    let sub = |a: [f64; 3], b: [f64; 3]| [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    let cross = |a: [f64; 3], b: [f64; 3]| [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
    let norm = |a: [f64; 3]| {
        let l = (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt();
        [a[0] / l, a[1] / l, a[2] / l]
    };
    let z = norm(sub(target, c)); // viewing direction
    let x = norm(cross([0.0, 1.0, 0.0], z)); // roughly board +u... choose image x along board u
    let x = if x[0] < 0.0 { [-x[0], -x[1], -x[2]] } else { x };
    let y = cross(z, x);
    // Rows of R are the camera axes; t = -R c.
    let r = [x, y, z];
    let t = [-(r[0][0] * c[0] + r[0][1] * c[1] + r[0][2] * c[2]), -(r[1][0] * c[0] + r[1][1] * c[1] + r[1][2] * c[2]), -(r[2][0] * c[0] + r[2][1] * c[1] + r[2][2] * c[2])];
    let k = [[f, 0.0, size.0 / 2.0], [0.0, f, size.1 / 2.0], [0.0, 0.0, 1.0]];
    // H = K [r1 r2 t] with r1, r2 the first two columns of R.
    let m = [[r[0][0], r[0][1], t[0]], [r[1][0], r[1][1], t[1]], [r[2][0], r[2][1], t[2]]];
    let mut h = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            h[i][j] = (0..3).map(|q| k[i][q] * m[q][j]).sum();
        }
    }
    h
}

#[test]
fn the_camera_is_found_from_the_homography_and_tops_lean_away_from_it() {
    let size = (1280.0, 720.0);
    // Oblique: camera 12 squares above, 9 squares in front of the board's near edge.
    let cam = [4.0, 17.0, -12.0];
    let h = homography_of_camera(cam, [4.0, 4.0, 0.0], 1000.0, size);
    let corners: Vec<[f32; 2]> = [(0.0, 0.0), (8.0, 0.0), (8.0, 8.0), (0.0, 8.0)]
        .iter()
        .map(|&(u, v)| {
            let w = h[2][0] * u + h[2][1] * v + h[2][2];
            [((h[0][0] * u + h[0][1] * v + h[0][2]) / w) as f32, ((h[1][0] * u + h[1][1] * v + h[1][2]) / w) as f32]
        })
        .collect();
    let loc = BoardLocation::from_corners([corners[0], corners[1], corners[2], corners[3]], (1280, 720)).unwrap();
    let pose = CameraPose::from_location(&loc).expect("pose");
    assert!((pose.focal_px - 1000.0).abs() < 30.0, "focal {}", pose.focal_px);
    // from_corners sorts the corners as they appear; the board may come out turned, so
    // compare distances, which do not depend on it.
    let height = pose.centre[2].abs();
    assert!((height - 12.0).abs() < 0.5, "height {height} ({:?})", pose.centre);
    let lean = pose.lean(0.3);
    // Tops lean away from the camera: the far squares more, and all in one direction.
    let far = lean[0][3].0.hypot(lean[0][3].1);
    let near = lean[7][3].0.hypot(lean[7][3].1);
    assert!(far > near && near > 0.5, "far {far}, near {near}");
    // Straight above: the lean points outwards from the centre and is small.
    let h2 = homography_of_camera([4.0, 4.001, -15.0], [4.0, 4.0, 0.0], 1000.0, size);
    let c2: Vec<[f32; 2]> = [(0.0, 0.0), (8.0, 0.0), (8.0, 8.0), (0.0, 8.0)]
        .iter()
        .map(|&(u, v)| {
            let w = h2[2][0] * u + h2[2][1] * v + h2[2][2];
            [((h2[0][0] * u + h2[0][1] * v + h2[0][2]) / w) as f32, ((h2[1][0] * u + h2[1][1] * v + h2[1][2]) / w) as f32]
        })
        .collect();
    let loc2 = BoardLocation::from_corners([c2[0], c2[1], c2[2], c2[3]], (1280, 720)).unwrap();
    let l2 = CameraPose::from_location(&loc2).unwrap().lean(0.2);
    assert!(l2[0][0].0 < 0.0 && l2[0][0].1 < 0.0 && l2[7][7].0 > 0.0 && l2[7][7].1 > 0.0, "{:?} {:?}", l2[0][0], l2[7][7]);
    assert!(l2[0][0].0.abs() < 8.0);
}

/// A camera nearly straight above the board (a phone held over it), its corners found half a
/// pixel off here and there: the homography barely tells the focal length, and the estimate
/// stays with a normal lens (the true 1,000 px against 1,280) instead of swinging to 500 or
/// 2,400 px as the corners' noise pulls it (the lean of the piece tops scales with it).
#[test]
fn a_view_from_almost_straight_above_keeps_a_plausible_focal_length() {
    let size = (1280.0, 720.0);
    let noise = [[0.5f32, -0.4], [-0.6, 0.3], [0.4, 0.6], [-0.3, -0.5]];
    let mut focals = Vec::new();
    for (k, offset) in [(0.0, 0.6), (0.5, -0.4), (-0.7, 0.3), (0.4, 0.7)].into_iter().enumerate() {
        let h = homography_of_camera([4.0 + offset.0, 4.0 + offset.1, -17.0], [4.0, 4.0, 0.0], 1000.0, size);
        let corners: Vec<[f32; 2]> = [(0.0, 0.0), (8.0, 0.0), (8.0, 8.0), (0.0, 8.0)]
            .iter()
            .enumerate()
            .map(|(i, &(u, v))| {
                let w = h[2][0] * u + h[2][1] * v + h[2][2];
                let n = noise[(i + k) % 4];
                [((h[0][0] * u + h[0][1] * v + h[0][2]) / w) as f32 + n[0], ((h[1][0] * u + h[1][1] * v + h[1][2]) / w) as f32 + n[1]]
            })
            .collect();
        let loc = BoardLocation::from_corners([corners[0], corners[1], corners[2], corners[3]], (1280, 720)).unwrap();
        focals.push(CameraPose::from_location(&loc).unwrap().focal_px);
    }
    assert!(focals.iter().all(|f| (800.0..1600.0).contains(f)), "focal lengths {focals:?}");
}

#[test]
fn board_coordinates_put_black_on_row_0_and_playing_squares_on_odd_sums() {
    for side in [Side::Top, Side::Bottom, Side::Left, Side::Right] {
        for top_left_dark in [false, true] {
            let f = BoardFrame { white_home: side, top_left_dark };
            let mut seen = [[false; 8]; 8];
            for r in 0..8 {
                for c in 0..8 {
                    let (br, bc) = f.to_board(r, c);
                    assert_eq!(f.to_image(br, bc), (r, c));
                    seen[br][bc] = true;
                    let dark = ((r + c) % 2 == 0) == top_left_dark;
                    assert_eq!(dark, (br + bc) % 2 == 1, "{side:?} {top_left_dark}: ({r},{c}) -> ({br},{bc})");
                    // White's home edge of the image lands on board row 7.
                    let on_white_edge = match side {
                        Side::Top => r == 0,
                        Side::Bottom => r == 7,
                        Side::Left => c == 0,
                        Side::Right => c == 7,
                    };
                    assert_eq!(on_white_edge, br == 7);
                }
            }
            assert!(seen.iter().flatten().all(|&s| s));
        }
    }
    // The start position drawn in any orientation maps to the standard one.
    let palette_side = palette::start_position(Side::Left, true);
    let mut g = [['.'; 8]; 8];
    for (r, c, k) in palette_side {
        g[r][c] = k.letter();
    }
    let f = BoardFrame { white_home: Side::Left, top_left_dark: true };
    let b = f.map_grid(&g);
    let rows: Vec<String> = b.iter().map(|r| r.iter().collect()).collect();
    assert_eq!(rows, START);
}

#[test]
fn sources_report_missing_and_corrupt_input() {
    let tmp = tempfile::Builder::new().prefix("boardwatch-src-").tempdir().unwrap();
    let dir = tmp.path();
    assert!(matches!(SourceSpec::parse("/no/such/file.mp4"), Err(SourceError::Missing(_))));
    assert!(matches!(SourceSpec::parse(dir.to_str().unwrap()), Err(SourceError::EmptyFolder(_))));
    assert!(matches!(SourceSpec::parse("camera:"), Err(SourceError::BadSpec { .. })));
    assert_eq!(SourceSpec::parse("cam:2").unwrap(), SourceSpec::Camera(CameraRequest::new(CameraId::Index(2))));
    assert_eq!(SourceSpec::parse("camera:HD Webcam").unwrap(), SourceSpec::Camera(CameraRequest::new(CameraId::Name("HD Webcam".into()))));
    assert!(matches!(SourceSpec::parse("rtsp://127.0.0.1:1/x").unwrap(), SourceSpec::Stream(_)));
    // A camera that is not there, and impossible camera settings.
    let r = source::open(&SourceSpec::Camera(CameraRequest::new(CameraId::Index(97))));
    assert!(matches!(r, Err(SourceError::Camera { .. })), "camera 97 should not exist");
    let mut req = CameraRequest::new(CameraId::Index(0));
    req.fps = 0;
    assert!(req.validate().is_err());
    // A corrupt video and a corrupt image.
    let bad_video = dir.join("corrupt.mp4");
    std::fs::write(&bad_video, b"\x00\x00\x00\x18ftypmp42 definitely not a video").unwrap();
    let spec = SourceSpec::parse(bad_video.to_str().unwrap()).unwrap();
    match source::open(&spec) {
        Err(e) => assert!(e.to_string().contains("corrupt.mp4"), "{e}"),
        Ok(mut s) => assert!(s.next_frame().is_err()),
    }
    let bad_image = dir.join("corrupt.jpg");
    std::fs::write(&bad_image, b"not a jpeg").unwrap();
    let mut s = source::open(&SourceSpec::parse(bad_image.to_str().unwrap()).unwrap()).unwrap();
    let e = s.next_frame().err().expect("corrupt image is an error");
    assert!(e.to_string().contains("corrupt.jpg"));
    // A real video written here and read back: frames, time stamps, end.
    let video = dir.join("board.avi");
    let frame = frame_from(&drawn_board(&START, false), VIEW);
    let fourcc = opencv::videoio::VideoWriter::fourcc('M', 'J', 'P', 'G').unwrap();
    let mut wr = opencv::videoio::VideoWriter::new(video.to_str().unwrap(), fourcc, 10.0, Size::new(1280, 720), true).unwrap();
    assert!(wr.is_opened().unwrap());
    for _ in 0..5 {
        wr.write(&frame).unwrap();
    }
    wr.release().unwrap();
    let mut s = source::open(&SourceSpec::parse(video.to_str().unwrap()).unwrap()).unwrap();
    let mut n = 0;
    while let Some(f) = s.next_frame().unwrap() {
        assert_eq!((f.image.cols(), f.image.rows()), (1280, 720));
        assert!((f.t - n as f64 / 10.0).abs() < 1e-6);
        n += 1;
    }
    assert_eq!(n, 5);
    // A folder of images, in name order.
    let imgs = dir.join("imgs");
    std::fs::create_dir_all(&imgs).unwrap();
    for name in ["b.png", "a.png"] {
        opencv::imgcodecs::imwrite(imgs.join(name).to_str().unwrap(), &frame, &core::Vector::new()).unwrap();
    }
    match SourceSpec::parse(imgs.to_str().unwrap()).unwrap() {
        SourceSpec::Images(v) => assert!(v[0].ends_with("a.png") && v[1].ends_with("b.png")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn raw_camera_buffers_are_converted() {
    use nokhwa::utils::FrameFormat;
    // YUYV: 4x2 mid-grey.
    let yuyv = vec![128u8; 4 * 2 * 2];
    let m = source::decode_raw(&yuyv, FrameFormat::YUYV, 4, 2).unwrap();
    assert_eq!((m.cols(), m.rows(), m.channels()), (4, 2, 3));
    // Short buffers and corrupt MJPEG are errors.
    assert!(source::decode_raw(&yuyv[..5], FrameFormat::YUYV, 4, 2).is_err());
    assert!(source::decode_raw(b"nope", FrameFormat::MJPEG, 4, 2).is_err());
    assert!(source::decode_raw(&[0u8; 3], FrameFormat::GRAY, 0, 2).is_err());
    let rgb = vec![10u8, 20, 30].repeat(4);
    let m = source::decode_raw(&rgb, FrameFormat::RAWRGB, 2, 2).unwrap();
    assert_eq!(*m.at_2d::<core::Vec3b>(0, 0).unwrap(), core::Vec3b::from([30, 20, 10]));
}
