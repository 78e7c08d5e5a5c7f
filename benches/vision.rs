//! `cargo bench --bench vision`: speed of the vision pipeline on one core.
//!
//! A sample photo (samples/photos/Image_013.jpg, ~75 px per square) is placed in a 1280x720
//! frame. Measured with OpenCV held to one thread:
//! * full localisation (no previous location): X-corners, lattice, extent, refinement; and
//!   on a rendered board with inlay lines and grain, where the X-corners are searched again at
//!   the coarser scales (the slowest case);
//! * per-frame work with the cached homography when the board is read: rectify, check of the
//!   kept location, features and classification, motion picture and stability, mapping to
//!   board coordinates (`Watcher::process` with `read_every_frame`);
//! * per-frame work on a still board that keeps its reading (the default): motion picture,
//!   stability, board coordinates, and a fresh reading now and then;
//! * its parts.
//!
//! Minimum = the cost without interference from other work on the machine; median = typical.

use std::time::Instant;

use boardwatch::vision::stability::{motion_picture, StabilityDetector};
use boardwatch::vision::*;
use opencv::core::{self, Mat, Rect, Scalar, Size};
use opencv::imgproc;
use opencv::prelude::*;

fn stats(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(|a, b| a.total_cmp(b));
    (v[0], v[v.len() / 2], v[v.len() * 95 / 100])
}

fn time<F: FnMut()>(n: usize, mut f: F) -> (f64, f64, f64) {
    f();
    stats(
        (0..n)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect(),
    )
}

fn report(name: &str, (min, med, p95): (f64, f64, f64)) {
    println!("{name:<48} min {min:7.2} ms   median {med:7.2} ms   p95 {p95:7.2} ms");
}

fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
    core::set_num_threads(1)?;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/photos/Image_013.jpg");
    let photo = source::read_image(&path)?;
    // Into a 1280x720 frame: scaled to 700 px high, centred.
    let s = 700.0 / photo.rows() as f64;
    let mut small = Mat::default();
    imgproc::resize(&photo, &mut small, Size::new(0, 0), s, s, imgproc::INTER_AREA)?;
    let mut frame = Mat::new_rows_cols_with_default(720, 1280, core::CV_8UC3, Scalar::new(30.0, 40.0, 50.0, 0.0))?;
    {
        let mut roi = Mat::roi_mut(&mut frame, Rect::new((1280 - small.cols()) / 2, 10, small.cols(), small.rows()))?;
        small.copy_to(&mut roi)?;
    }
    let palette = ColourModel::wooden()?;
    let loc = locate_board(&frame, None)?;
    let side = (loc.corners[1][0] - loc.corners[0][0]).hypot(loc.corners[1][1] - loc.corners[0][1]) / 8.0;
    println!("frame 1280x720, board {:.0} px per square, lens k1 {:.3}, OpenCV threads: {}", side, loc.lens.k1, core::get_num_threads()?);

    report("full localisation (no previous location)", time(20, || {
        locate_board(&frame, None).unwrap();
    }));
    // Rendered wooden scene 12 (1280x720): the fine scale finds no lattice there.
    let scene = boardwatch::synth::random_scene(12, boardwatch::synth::Palette::Wooden);
    let start = boardwatch::draughts::Position::start(&boardwatch::draughts::Variant::English.rules()).to_grid();
    let (image, _) = boardwatch::synth::render_frame(&scene, &start, None, 1)?;
    let rendered = source::rgb_image_to_mat(&image)?;
    locate_board(&rendered, None)?;
    report(
        &format!("full localisation, rendered board needing the coarse scales ({}x{})", image.width(), image.height()),
        time(20, || {
            locate_board(&rendered, None).unwrap();
        }),
    );
    report("tracked localisation (previous given, refined)", time(20, || {
        locate_board(&frame, Some(&loc)).unwrap();
    }));

    let cal = Calibration::from_image(&frame, &palette, None, "bench")?.0;
    // Every frame read: what a frame costs when the board has to be read (after a change).
    let mut watcher = Watcher::with_calibration(&cal, WatchConfig { read_every_frame: true, ..WatchConfig::default() })?;
    let mut t = 0.0;
    let per_frame = time(300, || {
        let r = watcher.process(&frame, t).unwrap();
        assert!(r.view.is_some() && !r.relocated && r.read);
        t += 1.0 / 30.0;
    });
    report("per frame, squares read (kept homography)", per_frame);
    // The default: a still board that has not changed keeps its reading.
    let mut watcher = Watcher::with_calibration(&cal, WatchConfig::default())?;
    let mut t = 0.0;
    let still = time(300, || {
        watcher.process(&frame, t).unwrap();
        t += 1.0 / 30.0;
    });
    println!("  ({} of 301 still frames read)", watcher.frames_read());
    report("per frame, still board (reading kept)", still);

    // The learnt square model reading the playing squares, fine-tuned on the same start.
    let mut model = SquareModel::builtin()?;
    let cal_learnt = Calibration::from_image_with(&frame, &palette, None, "bench", Some(&mut model))?.0;
    let learnt = WatchConfig { read_every_frame: true, squares: SquareReader::Learnt, ..WatchConfig::default() };
    let mut watcher = Watcher::with_calibration(&cal_learnt, learnt)?;
    let mut t = 0.0;
    let per_frame_learnt = time(300, || {
        let r = watcher.process(&frame, t).unwrap();
        assert!(r.view.is_some() && !r.relocated && r.read);
        t += 1.0 / 30.0;
    });
    report("per frame, squares read by the learnt model", per_frame_learnt);
    let mut watcher = Watcher::with_calibration(&cal_learnt, WatchConfig { squares: SquareReader::Learnt, ..WatchConfig::default() })?;
    let mut t = 0.0;
    report("per frame, still board, learnt model (reading kept)", time(300, || {
        watcher.process(&frame, t).unwrap();
        t += 1.0 / 30.0;
    }));
    report("  learnt: board area, warp made afresh (a board that moved)", time(300, || {
        boardwatch::vision::square_model::located_board_area(&frame, &loc).unwrap();
    }));
    let mut area = None;
    report("  learnt: board area, warp kept (172x172)", time(300, || {
        area = Some(model.located_area(&frame, &loc).unwrap());
    }));
    let area = area.unwrap();
    let dark = boardwatch::vision::square_model::playing_squares(true);
    report("  learnt: network on the 32 playing squares", time(300, || {
        model.embed(&area, &dark).unwrap();
    }));

    let lean = CameraPose::from_location(&loc).map(|p| p.lean(palette.piece_height as f64));
    let rect = rectify(&frame, &loc)?;
    report("  rectify (through the lens found: remap to 512x512)", time(300, || {
        rectify(&frame, &loc).unwrap();
    }));
    // The same corners without a lens: the plain perspective warp.
    let flat = BoardLocation::from_corners(loc.corners, loc.image_size)?;
    report("  rectify without a lens (perspective warp)", time(300, || {
        rectify(&frame, &flat).unwrap();
    }));
    report("  check of the kept location", time(300, || {
        check_location(&rect).unwrap();
    }));
    let mut feats = None;
    report("  features (64 squares)", time(300, || {
        feats = Some(board_features_with(&rect, lean.as_ref()).unwrap());
    }));
    let feats = feats.unwrap();
    let mut reading = None;
    report("  classification", time(300, || {
        reading = Some(classify_features(&feats, &palette));
    }));
    let mut reading = reading.unwrap();
    let mut det = StabilityDetector::new(Default::default());
    report("  motion picture + stability", time(300, || {
        let pic = motion_picture(&frame, &loc).unwrap();
        det.update(0.0, &pic, &mut reading).unwrap();
    }));
    let bf = BoardFrame { white_home: Side::Left, top_left_dark: true };
    report("  board coordinates", time(300, || {
        to_board_coordinates(&reading, &bf, true, 0.0);
    }));
    println!(
        "targets: per frame < 5 ms (colours: min {:.2}, median {:.2}; learnt model: min {:.2}, median {:.2}), full localisation < 100 ms",
        per_frame.0, per_frame.1, per_frame_learnt.0, per_frame_learnt.1
    );
    Ok(())
}
