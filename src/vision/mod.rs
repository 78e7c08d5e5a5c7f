//! Vision pipeline: locate the board, rectify it, classify the 64 squares.
//!
//! Frame convention (used everywhere in this module):
//! * Image coordinates are pixels of the image *as decoded with EXIF orientation
//!   applied* (OpenCV `imread` default, and what every image viewer shows). Video
//!   frames carry no EXIF, so for the live camera both conventions coincide.
//! * Board coordinates: `(u, v)` in square units, `0..=8`, `u` to the right and `v`
//!   down in the rectified image. The rectified image is the board as it appears in
//!   the photo, without any rotation: its top-left is the playing-area corner
//!   `corners[0]` (the one nearest the image's top-left).
//! * Grid: `grid[row][col]`, row 0 = board row nearest the top of the image,
//!   col 0 = leftmost.
//! * Board coordinates (what the tracker consumes, `rectify::BoardView`): row 0 =
//!   Black's edge, column 0 on the left seen with White at the bottom, playing
//!   squares where row + col is odd; `rectify::BoardFrame` maps between the two
//!   once the orientation is known (calibration or start position).
//!
//! Pipeline: `source` hands out frames; `locate` finds the board (and checks a
//! kept location cheaply); `rectify` warps it to 64 px squares and knows where
//! piece tops appear in oblique views; `classify` measures each square and
//! `palette` turns that into class probabilities; `stability` flags hands and
//! motion; `calibration` stores what a start position teaches; `watch` runs it
//! all per video frame; `capture` reads a source on a thread of its own (live or file
//! policy); `overlay` draws what was seen.

pub mod calibration;
pub mod capture;
pub mod classify;
pub mod locate;
pub mod media_check;
pub mod overlay;
pub mod palette;
pub mod rectify;
pub mod source;
pub mod square_head;
pub mod square_model;
pub mod stability;
pub mod table;
pub mod watch;

pub use calibration::Calibration;
pub use classify::{
    board_features, board_features_with, classify, classify_features, classify_with, grid_strings, BoardFeatures, BoardReading,
    LeanOffsets, ColourClass, SquareFeatures, SquareReading,
};
pub use locate::{check_location, locate_board, BoardLocation, Lens, LocateMethod, PatternCheck};
pub use overlay::{board_diagram_jpeg, draw_overlay, overlay_jpeg};
pub use palette::ColourModel;
pub use square_model::SquareModel;
pub use rectify::{orientation, rectify, start_position_side, to_board_coordinates, BoardFrame, BoardView, CameraPose, RECT_SIZE, SQUARE_PX};
pub use source::{Frame, FrameSource, SourceSpec};
pub use stability::{StabilityConfig, StabilityDetector, StabilityReport};
pub use watch::{FrameResult, SquareReader, WatchConfig, Watcher};

use thiserror::Error;

#[derive(Debug, Error)]
pub enum VisionError {
    #[error("empty or unsupported image (need 8-bit BGR, got {0})")]
    BadImage(String),
    #[error("no checkers board found: {0}")]
    BoardNotFound(String),
    #[error("invalid corners: {0}")]
    BadCorners(String),
    #[error("calibration failed: {0}")]
    Calibration(String),
    #[error("colour model: {0}")]
    Palette(String),
    #[error("opencv: {0}")]
    OpenCv(#[from] opencv::Error),
    #[error("io: {0}")]
    Io(#[from] std::io::Error),
}

pub type Result<T> = std::result::Result<T, VisionError>;

/// Run OpenCV's work on the calling thread alone, for the whole process. Its own thread pool
/// would compete with decoding (and other boards) for the cores, and it splits some sums
/// differently from run to run: with one thread, the same frames give the same readings to the
/// last bit, so `replay` and the daemon record a video alike.
pub fn opencv_on_calling_threads() -> Result<()> {
    opencv::core::set_num_threads(1)?;
    Ok(())
}

/// Which side of the (unrotated) image a player's home row is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Side {
    Top,
    Right,
    Bottom,
    Left,
}

/// How the board is turned in the image.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Orientation {
    /// True if the square at grid (0,0) is a dark (playing) square. With the
    /// usual rule "a dark square in each player's near-left corner" this means the
    /// players sit left and right of the image; false means top and bottom.
    pub top_left_dark: bool,
    /// Side of the image where White's (light men's) home row is, if it could be
    /// told: from a start position (certain) or from where the men stand (weak).
    pub white_home: Option<Side>,
    /// 1.0 = start position recognised, lower = guessed from piece distribution.
    pub white_home_confidence: f32,
}

/// 3x3 homography as plain f64 (row-major), maps (x, y, 1) -> (x', y', w).
pub type H3 = [[f64; 3]; 3];

pub(crate) fn h_apply(h: &H3, x: f64, y: f64) -> (f64, f64) {
    let w = h[2][0] * x + h[2][1] * y + h[2][2];
    let w = if w.abs() < 1e-12 { 1e-12 } else { w };
    (
        (h[0][0] * x + h[0][1] * y + h[0][2]) / w,
        (h[1][0] * x + h[1][1] * y + h[1][2]) / w,
    )
}

pub(crate) fn h_mul(a: &H3, b: &H3) -> H3 {
    let mut r = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            r[i][j] = (0..3).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    r
}

pub(crate) fn h_inv(m: &H3) -> Option<H3> {
    let det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
        - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
        + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
    if !det.is_finite() || det.abs() < 1e-15 {
        return None;
    }
    let d = 1.0 / det;
    Some([
        [
            (m[1][1] * m[2][2] - m[1][2] * m[2][1]) * d,
            (m[0][2] * m[2][1] - m[0][1] * m[2][2]) * d,
            (m[0][1] * m[1][2] - m[0][2] * m[1][1]) * d,
        ],
        [
            (m[1][2] * m[2][0] - m[1][0] * m[2][2]) * d,
            (m[0][0] * m[2][2] - m[0][2] * m[2][0]) * d,
            (m[0][2] * m[1][0] - m[0][0] * m[1][2]) * d,
        ],
        [
            (m[1][0] * m[2][1] - m[1][1] * m[2][0]) * d,
            (m[0][1] * m[2][0] - m[0][0] * m[2][1]) * d,
            (m[0][0] * m[1][1] - m[0][1] * m[1][0]) * d,
        ],
    ])
}

pub(crate) fn h_from_mat(m: &opencv::core::Mat) -> Result<H3> {
    use opencv::prelude::*;
    if m.rows() != 3 || m.cols() != 3 {
        return Err(VisionError::BoardNotFound("homography fit degenerate".into()));
    }
    let mut h = [[0.0; 3]; 3];
    for (i, row) in h.iter_mut().enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            *v = *m.at_2d::<f64>(i as i32, j as i32)?;
        }
    }
    Ok(h)
}

pub(crate) fn h_to_mat(h: &H3) -> Result<opencv::core::Mat> {
    let rows: Vec<Vec<f64>> = h.iter().map(|r| r.to_vec()).collect();
    Ok(opencv::core::Mat::from_slice_2d(&rows)?)
}

/// Fit a homography src -> dst (least squares, or RANSAC if `ransac_px` > 0).
/// Returns the homography and the inlier mask.
pub(crate) fn fit_h(src: &[(f64, f64)], dst: &[(f64, f64)], ransac_px: f64) -> Result<(H3, Vec<bool>)> {
    use opencv::core::{Point2f, Vector};
    if src.len() < 4 || src.len() != dst.len() {
        return Err(VisionError::BoardNotFound("too few points for a homography".into()));
    }
    let s: Vector<Point2f> = src.iter().map(|&(x, y)| Point2f::new(x as f32, y as f32)).collect();
    let d: Vector<Point2f> = dst.iter().map(|&(x, y)| Point2f::new(x as f32, y as f32)).collect();
    let mut mask = opencv::core::Mat::default();
    let method = if ransac_px > 0.0 { opencv::calib3d::RANSAC } else { 0 };
    let m = opencv::calib3d::find_homography(&s, &d, &mut mask, method, ransac_px.max(1.0))?;
    if m.empty() {
        return Err(VisionError::BoardNotFound("homography fit failed".into()));
    }
    let h = h_from_mat(&m)?;
    use opencv::prelude::*;
    let inl = if mask.empty() {
        vec![true; src.len()]
    } else {
        (0..src.len()).map(|i| *mask.at::<u8>(i as i32).unwrap_or(&1) != 0).collect()
    };
    Ok((h, inl))
}

/// What the product's `detect` command reports for one image.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Detection {
    /// Playing-area corners, image px: TL, TR, BR, BL as they appear.
    pub corners: [[f32; 2]; 4],
    /// 8 strings of 8 chars: `.` empty, `b`/`B` dark man/king, `w`/`W` light
    /// man/king, `?` unknown. Row 0 = nearest the top of the image.
    pub grid: Vec<String>,
    /// Probability of the reported letter, per square.
    pub confidence: Vec<Vec<f32>>,
    pub orientation: Orientation,
    #[serde(skip)]
    pub location: BoardLocation,
    #[serde(skip)]
    pub reading: BoardReading,
}

/// Locate, rectify and classify in one go.
pub fn detect(img: &opencv::core::Mat, previous: Option<&BoardLocation>, model: &ColourModel) -> Result<Detection> {
    let location = locate_board(img, previous)?;
    detect_at(img, location, model)
}

/// Rectify and classify at a known location (cached or hand-given corners),
/// looking for piece tops where the camera's angle puts them.
pub fn detect_at(img: &opencv::core::Mat, location: BoardLocation, model: &ColourModel) -> Result<Detection> {
    detect_at_with(img, location, model, None)
}

/// `detect_at`, the playing squares read by the learnt square model when one is given.
pub fn detect_at_with(img: &opencv::core::Mat, location: BoardLocation, model: &ColourModel, squares: Option<&mut SquareModel>) -> Result<Detection> {
    let rect = rectify(img, &location)?;
    let lean = CameraPose::from_location(&location).map(|p| p.lean(model.piece_height as f64));
    let mut reading = classify_with(&rect, model, lean.as_ref())?;
    if let Some(squares) = squares {
        let learnt = square_model::LearntReading::read(squares, img, &location, reading.top_left_dark)?;
        learnt.apply(squares, &mut reading, model.distinct_kings(), model.min_confidence);
    }
    let orientation = orientation(&reading);
    Ok(Detection {
        corners: location.corners,
        grid: reading.grid(),
        confidence: reading.squares.iter().map(|r| r.iter().map(|s| s.confidence).collect()).collect(),
        orientation,
        location,
        reading,
    })
}

/// Detection with a calibration: its corners are tried first (kept if the
/// board is still there, else the board is found again), its learnt colours
/// are used, and its orientation unless this image is itself a start position.
pub fn detect_calibrated(img: &opencv::core::Mat, cal: &Calibration) -> Result<Detection> {
    detect_calibrated_with(img, cal, None)
}

/// `detect_calibrated`, the playing squares read by the learnt square model when one is given
/// (with the calibration's head, if it has one).
pub fn detect_calibrated_with(img: &opencv::core::Mat, cal: &Calibration, squares: Option<&mut SquareModel>) -> Result<Detection> {
    let prev = cal.location()?;
    let location = locate_board(img, Some(&prev))?;
    let squares = match squares {
        Some(model) => {
            model.use_calibration(cal)?;
            Some(model)
        }
        None => None,
    };
    let mut d = detect_at_with(img, location, &cal.palette, squares)?;
    if d.orientation.white_home_confidence < 1.0 {
        d.orientation = Orientation { top_left_dark: d.orientation.top_left_dark, white_home: Some(cal.white_home), white_home_confidence: 1.0 };
    }
    Ok(d)
}

/// The squares of a labelled photo as fitting samples for a palette (`ColourModel::fit`):
/// (features, dark square?, class) for every square of the photo and of its 90/180/270-degree
/// turns (the turns teach the model how the features jitter with the view). `grid` is the
/// photo's labels, 8 rows of `.bBwW` in image-grid order. Turns whose board is not found are
/// left out; an unknown label letter is an error.
pub fn labelled_squares(img: &opencv::core::Mat, grid: &[String], piece_height: f32) -> Result<Vec<(classify::SquareFeatures, bool, ColourClass)>> {
    let mut labels: Vec<Vec<char>> = grid.iter().map(|r| r.chars().collect()).collect();
    if labels.len() != 8 || labels.iter().any(|r| r.len() != 8) {
        return Err(VisionError::Palette("fitting labels must be 8 rows of 8 squares".into()));
    }
    let mut image = img.clone();
    let mut samples = Vec::new();
    for turn in 0..4 {
        if turn > 0 {
            let mut turned = opencv::core::Mat::default();
            opencv::core::rotate(&image, &mut turned, opencv::core::ROTATE_90_CLOCKWISE)?;
            image = turned;
            labels = (0..8).map(|r| (0..8).map(|c| labels[7 - c][r]).collect()).collect();
        }
        let Ok(location) = locate_board(&image, None) else { continue };
        let rect = rectify(&image, &location)?;
        let lean = CameraPose::from_location(&location).map(|p| p.lean(piece_height as f64));
        let bf = board_features_with(&rect, lean.as_ref())?;
        for (r, row) in labels.iter().enumerate() {
            for (c, &letter) in row.iter().enumerate() {
                let class = ColourClass::from_letter(letter).ok_or_else(|| VisionError::Palette(format!("fitting label {letter:?} at ({r},{c}) is none of .bBwW")))?;
                samples.push((bf.squares[r][c], bf.is_dark(r, c), class));
            }
        }
    }
    Ok(samples)
}
