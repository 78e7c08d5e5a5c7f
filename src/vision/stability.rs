//! Stability: hand on only board states that have been still for a while.
//!
//! Two cues, both on the rectified board so camera position does not matter:
//! * motion: frame differences of a small grey picture of the board and a
//!   one-square ring around it (8 px per square, so sensor noise and a pixel of
//!   camera jitter average out), per cell of one square;
//! * foreign colours: squares the palette cannot explain (`p_unknown`), which is
//!   what a hand or an arm resting over the board looks like.
//!
//! A state is *stable* once the grid has been the same, with no motion and no
//! unknown square, for `still_secs` (default 0.3 s: hands at tournament speed leave a position still for little longer).
use opencv::core::{self, Mat, Scalar, Size};
use opencv::imgproc;
use opencv::prelude::*;

use super::classify::{BoardReading, ColourClass};
use super::locate::BoardLocation;
use super::{h_mul, h_to_mat, Result, VisionError, H3};

/// Cells per side of the motion picture: the 8 squares plus a one-square ring.
pub const MOTION_CELLS: usize = 10;
/// Pixels per cell of the motion picture (each an area average of 4x4 samples).
pub const MOTION_CELL_PX: usize = 4;
/// Samples per cell side taken from the camera frame before averaging.
const SAMPLE_PX: usize = 16;

#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StabilityConfig {
    /// How long a state must stay the same, with nothing moving, to be handed on.
    pub still_secs: f64,
    /// A cell moves when its mean absolute grey difference to the previous frame
    /// exceeds this (grey levels, 0..255).
    pub motion_threshold: f32,
    /// A square is foreign (hand, sleeve, object) above this `p_unknown`.
    pub unknown_threshold: f32,
}

impl Default for StabilityConfig {
    fn default() -> Self {
        StabilityConfig { still_secs: 0.3, motion_threshold: 12.0, unknown_threshold: 0.5 }
    }
}

impl StabilityConfig {
    pub fn validate(&self) -> Result<()> {
        if !(self.still_secs.is_finite() && self.still_secs >= 0.0 && self.still_secs <= 60.0) {
            return Err(VisionError::Calibration(format!("still time {} s: need 0..60 s", self.still_secs)));
        }
        if !(self.motion_threshold > 0.0 && self.motion_threshold < 255.0) {
            return Err(VisionError::Calibration(format!("motion threshold {}: need 0..255", self.motion_threshold)));
        }
        if !(self.unknown_threshold > 0.0 && self.unknown_threshold <= 1.0) {
            return Err(VisionError::Calibration(format!("unknown threshold {}: need 0..1", self.unknown_threshold)));
        }
        Ok(())
    }
}

/// What the detector says about one frame.
#[derive(Debug, Clone, serde::Serialize)]
pub struct StabilityReport {
    /// Largest per-cell difference to the previous frame (grey levels).
    pub motion: f32,
    /// Cells (of the 10x10 picture, ring included) that moved.
    pub moving_cells: usize,
    /// Squares (image grid) whose colours belong to no class.
    pub unknown_squares: Vec<(usize, usize)>,
    /// Something is over the board: motion or foreign colours.
    pub hand: bool,
    /// How long the current reading has been still, seconds.
    pub still_for: f64,
    /// Hand it on.
    pub stable: bool,
}

/// Small grey picture of the board and a one-square ring (MOTION_CELLS cells of
/// MOTION_CELL_PX px), straight from the camera frame: a warp to 16 samples per
/// square, then area averaging down to 4, so that sensor noise and a pixel or
/// two of camera jitter average out while a hand (a square or more) does not.
pub fn motion_picture(img: &Mat, loc: &BoardLocation) -> Result<Mat> {
    let n = (MOTION_CELLS * SAMPLE_PX) as i32;
    let s = 1.0 / SAMPLE_PX as f64;
    // picture px -> board coords: u = x / 16 - 1.
    let pic_to_board: H3 = [[s, 0.0, -1.0], [0.0, s, -1.0], [0.0, 0.0, 1.0]];
    let m = h_to_mat(&h_mul(&loc.h_board_to_img, &pic_to_board))?;
    let mut warped = Mat::default();
    imgproc::warp_perspective(
        img,
        &mut warped,
        &m,
        Size::new(n, n),
        imgproc::INTER_LINEAR | imgproc::WARP_INVERSE_MAP,
        core::BORDER_REPLICATE,
        Scalar::default(),
    )?;
    let mut gray = Mat::default();
    if warped.channels() == 3 {
        imgproc::cvt_color_def(&warped, &mut gray, imgproc::COLOR_BGR2GRAY)?;
    } else {
        gray = warped;
    }
    let k = (MOTION_CELLS * MOTION_CELL_PX) as i32;
    let mut small = Mat::default();
    imgproc::resize(&gray, &mut small, Size::new(k, k), 0.0, 0.0, imgproc::INTER_AREA)?;
    Ok(small)
}

/// Per-cell mean grey levels of a motion picture.
fn cell_means(pic: &Mat) -> Result<Vec<f32>> {
    let d = pic.data_bytes()?;
    let n = MOTION_CELLS * MOTION_CELL_PX;
    if d.len() < n * n {
        return Err(VisionError::BadImage("motion picture too small".into()));
    }
    Ok(d[..n * n].iter().map(|&v| v as f32).collect())
}

/// (largest per-cell mean absolute difference, cells above `threshold`).
fn cell_motion(prev: &[f32], cur: &[f32], threshold: f32) -> (f32, usize) {
    let n = MOTION_CELLS * MOTION_CELL_PX;
    let (mut motion, mut moving) = (0f32, 0usize);
    for cy in 0..MOTION_CELLS {
        for cx in 0..MOTION_CELLS {
            let mut s = 0f32;
            for y in cy * MOTION_CELL_PX..(cy + 1) * MOTION_CELL_PX {
                for x in cx * MOTION_CELL_PX..(cx + 1) * MOTION_CELL_PX {
                    s += (cur[y * n + x] - prev[y * n + x]).abs();
                }
            }
            let m = s / (MOTION_CELL_PX * MOTION_CELL_PX) as f32;
            motion = motion.max(m);
            if m > threshold {
                moving += 1;
            }
        }
    }
    (motion, moving)
}

/// Motion of one frame against the previous one (see [`StabilityDetector::motion`]).
#[derive(Debug, Clone)]
pub struct Motion {
    /// Largest per-cell mean absolute difference (grey levels).
    pub motion: f32,
    /// Cells (ring included) above the motion threshold.
    pub moving_cells: usize,
    /// This frame's picture, as cell-sized blocks of grey levels.
    pub cells: Vec<f32>,
}

/// Tracks stillness over frames.
pub struct StabilityDetector {
    config: StabilityConfig,
    prev: Option<Vec<f32>>,
    grid: Option<Vec<String>>,
    still_since: Option<f64>,
}

impl StabilityDetector {
    pub fn new(config: StabilityConfig) -> Self {
        StabilityDetector { config, prev: None, grid: None, still_since: None }
    }

    pub fn config(&self) -> &StabilityConfig {
        &self.config
    }

    /// Forget the past (after the board was found again: the pictures are not
    /// comparable across a change of homography).
    pub fn reset(&mut self) {
        self.prev = None;
        self.grid = None;
        self.still_since = None;
    }

    /// Since when the current reading has been still (None: it is not, e.g. a hand).
    pub fn still_since(&self) -> Option<f64> {
        self.still_since
    }

    /// Whether two pictures (`Motion::cells`) differ anywhere by more than the
    /// motion threshold: the test for "still the board that was read".
    pub fn differ(&self, a: &[f32], b: &[f32]) -> bool {
        a.len() != b.len() || cell_motion(a, b, self.config.motion_threshold).1 > 0
    }

    /// Compare a frame's motion picture with the previous frame's, and keep it
    /// as the previous one for the next frame.
    pub fn motion(&mut self, picture: &Mat) -> Result<Motion> {
        let cells = cell_means(picture)?;
        let (motion, moving_cells) = match &self.prev {
            Some(prev) => cell_motion(prev, &cells, self.config.motion_threshold),
            None => (0.0, 0),
        };
        self.prev = Some(cells.clone());
        Ok(Motion { motion, moving_cells, cells })
    }

    /// Feed one frame: its motion picture (see `motion_picture`) and reading.
    pub fn update(&mut self, t: f64, picture: &Mat, reading: &mut BoardReading) -> Result<StabilityReport> {
        let motion = self.motion(picture)?;
        Ok(self.judge(t, &motion, reading))
    }

    /// Judge a frame from its motion (see `motion`) and its reading.
    ///
    /// On a board that has been still since the last reading, one square that
    /// turns unknown (a borderline square under sensor noise) is no hand: nothing
    /// moved, so it still shows what it showed, and `reading` gets that class back.
    pub fn judge(&mut self, t: f64, motion: &Motion, reading: &mut BoardReading) -> StabilityReport {
        let mut unknown_squares = Vec::new();
        for r in 0..8 {
            for c in 0..8 {
                let s = &reading.squares[r][c];
                if s.p_unknown > self.config.unknown_threshold || s.class == ColourClass::Unknown {
                    unknown_squares.push((r, c));
                }
            }
        }
        if let ([(r, c)], 0, Some(_), Some(held)) = (unknown_squares.as_slice(), motion.moving_cells, self.still_since, &self.grid) {
            let (r, c) = (*r, *c);
            if let Some(class) = held[r].chars().nth(c).and_then(ColourClass::from_letter).filter(|&k| k != ColourClass::Unknown) {
                reading.squares[r][c].keep_as(class);
                unknown_squares.clear();
            }
        }
        let hand = motion.moving_cells > 0 || !unknown_squares.is_empty();
        let grid = reading.grid();
        if hand || self.grid.as_ref() != Some(&grid) {
            self.still_since = if hand { None } else { Some(t) };
            self.grid = Some(grid);
        } else if self.still_since.is_none() {
            self.still_since = Some(t);
        }
        let still_for = self.still_since.map_or(0.0, |s| (t - s).max(0.0));
        // A small tolerance: frame times are multiples of 1/fps.
        let stable = !hand && self.still_since.is_some() && still_for + 1e-6 >= self.config.still_secs;
        StabilityReport { motion: motion.motion, moving_cells: motion.moving_cells, unknown_squares, hand, still_for, stable }
    }

    /// A frame with motion whose squares were not read (see `Watcher`): the same
    /// verdict `judge` gives any moving frame, whatever its reading: a hand,
    /// nothing still. The grid seen before is kept; after motion the stillness
    /// restarts at the first quiet frame either way.
    pub fn judge_moving(&mut self, motion: &Motion) -> StabilityReport {
        self.still_since = None;
        StabilityReport { motion: motion.motion, moving_cells: motion.moving_cells, unknown_squares: vec![], hand: true, still_for: 0.0, stable: false }
    }

    /// A frame on which the board could not be read (not found, or covered):
    /// nothing is stable until it is seen again. The previous picture is kept
    /// (the location did not change, so the next frame's motion is still
    /// measured against it; a new location resets it).
    pub fn lost(&mut self) -> StabilityReport {
        self.grid = None;
        self.still_since = None;
        StabilityReport { motion: 0.0, moving_cells: 0, unknown_squares: vec![], hand: true, still_for: 0.0, stable: false }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vision::classify::{SquareReading, CLASSES};

    fn square(class: ColourClass) -> SquareReading {
        let mut probs = [0.0; 5];
        if let Some(i) = CLASSES.iter().position(|&k| k == class) {
            probs[i] = 0.98;
        }
        SquareReading { probs, p_unknown: if class == ColourClass::Unknown { 0.9 } else { 0.02 }, class, confidence: 0.98, dark_square: true }
    }

    /// Empty board with a dark man at (2, 1), and `unknown` squares read `?`.
    fn reading(unknown: &[(usize, usize)]) -> BoardReading {
        let mut squares = [[square(ColourClass::Empty); 8]; 8];
        squares[2][1] = square(ColourClass::DarkMan);
        for &(r, c) in unknown {
            squares[r][c] = square(ColourClass::Unknown);
        }
        BoardReading { squares, top_left_dark: false, contrast: 100.0 }
    }

    fn motion(moving_cells: usize) -> Motion {
        Motion { motion: if moving_cells > 0 { 40.0 } else { 1.0 }, moving_cells, cells: vec![] }
    }

    fn detector() -> StabilityDetector {
        StabilityDetector::new(StabilityConfig::default())
    }

    #[test]
    fn one_square_flickering_to_unknown_on_a_still_board_keeps_what_it_showed() {
        let mut d = detector();
        assert!(!d.judge(0.0, &motion(0), &mut reading(&[])).hand);
        let mut flicker = reading(&[(2, 1)]);
        let report = d.judge(0.1, &motion(0), &mut flicker);
        assert!(!report.hand && report.unknown_squares.is_empty());
        assert_eq!(flicker.squares[2][1].class, ColourClass::DarkMan);
        assert_eq!(d.judge(0.2, &motion(0), &mut reading(&[])).still_for, 0.2, "the stillness runs on");
        let report = d.judge(0.4, &motion(0), &mut reading(&[(2, 1)]));
        assert!(report.stable, "still for 0.4 s despite the flicker");
    }

    #[test]
    fn unknown_squares_after_motion_or_several_at_once_are_still_a_hand() {
        // Two squares unknown at once: a hand or an object, not noise.
        let mut d = detector();
        d.judge(0.0, &motion(0), &mut reading(&[]));
        let mut two = reading(&[(2, 1), (4, 5)]);
        assert!(d.judge(0.1, &motion(0), &mut two).hand);
        assert_eq!(two.squares[2][1].class, ColourClass::Unknown);
        // Right after motion the square may have changed: nothing to keep.
        let mut d = detector();
        d.judge(0.0, &motion(0), &mut reading(&[]));
        d.judge_moving(&motion(3));
        let mut after = reading(&[(2, 1)]);
        assert!(d.judge(0.2, &motion(0), &mut after).hand);
        assert_eq!(after.squares[2][1].class, ColourClass::Unknown);
        // A square that was unknown from the start stays unknown.
        let mut d = detector();
        assert!(d.judge(0.0, &motion(0), &mut reading(&[(3, 3)])).hand);
        assert!(d.judge(0.1, &motion(0), &mut reading(&[(3, 3)])).hand);
    }
}
