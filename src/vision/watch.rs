//! The per-frame pipeline for video and cameras: keep the board's homography
//! while the scene is static (checked cheaply on every frame), find the board
//! again when it or the camera moved, rectify, classify, judge stability, and
//! map the reading to board coordinates once the orientation is known (from a
//! calibration, or from a start position seen still; optionally learning the
//! session's colours from it: self-calibration).
use opencv::core::Mat;
use opencv::prelude::*;

use super::calibration::Calibration;
use super::classify::{board_features_with, classify_features, BoardFeatures, BoardReading, LeanOffsets};
use super::locate::{check_location, locate_board, BoardLocation, PatternCheck};
use super::palette::ColourModel;
use super::rectify::{rectify, start_position_side, to_board_coordinates, BoardFrame, BoardView, CameraPose};
use super::stability::{motion_picture, StabilityConfig, StabilityDetector, StabilityReport};
use super::{Result, VisionError};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WatchConfig {
    pub stability: StabilityConfig,
    /// Learn the session's colours (and the orientation) from the first still
    /// start position, if no calibration was given.
    pub auto_calibrate: bool,
    /// A kept location is given up when fewer than this fraction of squares
    /// show the expected light/dark pattern at their corners...
    pub min_aligned: f32,
    /// ...or the pattern's contrast fell below this fraction of what it was
    /// when the board was found.
    pub min_contrast_ratio: f32,
    /// While things move over the board a failed check waits (hands cover the
    /// pattern); after this many seconds of failing the board is looked for anyway.
    pub relocate_after_secs: f64,
}

impl Default for WatchConfig {
    fn default() -> Self {
        WatchConfig {
            stability: StabilityConfig::default(),
            auto_calibrate: true,
            min_aligned: 0.8,
            min_contrast_ratio: 0.5,
            relocate_after_secs: 1.0,
        }
    }
}

/// What the pipeline made of one frame.
#[derive(Debug, Clone)]
pub struct FrameResult {
    pub t: f64,
    /// Where the board is (None: not found yet).
    pub location: Option<BoardLocation>,
    /// The board was (re)located on this frame (full search).
    pub relocated: bool,
    /// The cheap check of the kept location.
    pub check: Option<PatternCheck>,
    /// Image-grid reading (row 0 = top of the rectified image).
    pub reading: Option<BoardReading>,
    pub stability: StabilityReport,
    /// The reading in board coordinates, once the orientation is known.
    pub view: Option<BoardView>,
    /// A calibration was learnt on this frame (self-calibration).
    pub calibrated_now: bool,
}

pub struct Watcher {
    config: WatchConfig,
    palette: ColourModel,
    calibrated: bool,
    frame: Option<BoardFrame>,
    location: Option<BoardLocation>,
    lean: Option<LeanOffsets>,
    ref_contrast: f32,
    failing_since: Option<f64>,
    stability: StabilityDetector,
    /// Source name for a learnt calibration.
    source: String,
    learnt: Option<Calibration>,
}

impl Watcher {
    /// Start with a palette and nothing else known.
    pub fn new(palette: ColourModel, config: WatchConfig) -> Result<Self> {
        config.stability.validate()?;
        Ok(Watcher {
            config,
            palette,
            calibrated: false,
            frame: None,
            location: None,
            lean: None,
            ref_contrast: 0.0,
            failing_since: None,
            stability: StabilityDetector::new(config.stability),
            source: String::new(),
            learnt: None,
        })
    }

    /// Start from a calibration: its colours, orientation and corners (the
    /// corners are checked on the first frame like any kept location).
    pub fn with_calibration(cal: &Calibration, config: WatchConfig) -> Result<Self> {
        let mut w = Watcher::new(cal.palette.clone(), config)?;
        w.calibrated = true;
        w.frame = Some(cal.frame());
        w.location = Some(cal.location()?);
        w.update_lean();
        Ok(w)
    }

    /// Use corners given by hand (or from elsewhere) as the board's location; they are
    /// checked on every frame like any kept location.
    pub fn set_board(&mut self, loc: BoardLocation) {
        self.set_location(loc);
    }

    pub fn set_source_name(&mut self, name: &str) {
        self.source = name.to_string();
    }

    pub fn palette(&self) -> &ColourModel {
        &self.palette
    }

    pub fn board_frame(&self) -> Option<BoardFrame> {
        self.frame
    }

    /// The calibration learnt from a start position (self-calibration), if any.
    pub fn learnt_calibration(&self) -> Option<&Calibration> {
        self.learnt.as_ref()
    }

    pub fn is_calibrated(&self) -> bool {
        self.calibrated
    }

    fn update_lean(&mut self) {
        self.lean = self
            .location
            .as_ref()
            .and_then(CameraPose::from_location)
            .map(|p| p.lean(self.palette.piece_height as f64));
    }

    fn set_location(&mut self, loc: BoardLocation) {
        self.location = Some(loc);
        self.ref_contrast = 0.0;
        self.failing_since = None;
        self.stability.reset();
        self.update_lean();
    }

    /// Process one frame taken at `t` seconds.
    pub fn process(&mut self, img: &Mat, t: f64) -> Result<FrameResult> {
        if img.empty() {
            return Err(VisionError::BadImage("empty frame".into()));
        }
        let size = (img.cols(), img.rows());
        let mut relocated = false;
        if self.location.as_ref().map_or(true, |l| l.image_size != size) {
            match locate_board(img, None) {
                Ok(loc) => {
                    self.set_location(loc);
                    relocated = true;
                }
                Err(VisionError::BoardNotFound(_)) => return Ok(self.lost(t, None)),
                Err(e) => return Err(e),
            }
        }
        let (mut rect, mut check) = self.rectify_and_check(img)?;
        if !self.check_ok(&check) && !relocated {
            // Hands hide the pattern while they move; a moved board or camera
            // leaves a still scene with the pattern in the wrong place.
            let fail_start = *self.failing_since.get_or_insert(t);
            let picture = motion_picture(img, self.location.as_ref().expect("location set"))?;
            let quiet = self.quiet_picture(&picture);
            if quiet || t - fail_start >= self.config.relocate_after_secs {
                let prev = self.location.clone();
                // The old location as a start (cheap, follows small moves); if the
                // pattern is still not where it says, a full search.
                let found = match locate_board(img, prev.as_ref()) {
                    Ok(loc) => {
                        let r = rectify(img, &loc)?;
                        let c = check_location(&r)?;
                        if c.aligned >= self.config.min_aligned {
                            Ok(loc)
                        } else {
                            locate_board(img, None)
                        }
                    }
                    Err(e) => Err(e),
                };
                match found {
                    Ok(loc) => {
                        self.set_location(loc);
                        relocated = true;
                        let (r, c) = self.rectify_and_check(img)?;
                        rect = r;
                        check = c;
                    }
                    Err(VisionError::BoardNotFound(_)) => {
                        self.failing_since = Some(fail_start);
                        return Ok(self.lost(t, Some(check)));
                    }
                    Err(e) => return Err(e),
                }
            } else {
                // Keep the old location, but nothing is stable now.
                let r = self.lost(t, Some(check));
                self.failing_since = Some(fail_start);
                return Ok(r);
            }
        } else {
            self.failing_since = None;
        }
        if self.ref_contrast <= 0.0 || relocated {
            self.ref_contrast = check.contrast;
        } else {
            // Follow slow lighting changes.
            self.ref_contrast = 0.98 * self.ref_contrast + 0.02 * check.contrast;
        }
        let loc = self.location.clone().expect("location set");
        let features = board_features_with(&rect, self.lean.as_ref())?;
        let reading = classify_features(&features, &self.palette);
        let picture = motion_picture(img, &loc)?;
        let stability = self.stability.update(t, &picture, &reading)?;
        let mut calibrated_now = false;
        if self.frame.is_none() {
            // A start position tells the orientation at once (32 squares agree);
            // learning colours waits until it is still.
            if let Some(side) = start_position_side(&reading) {
                self.frame = Some(BoardFrame { white_home: side, top_left_dark: reading.top_left_dark });
            }
        }
        if stability.stable && !self.calibrated && self.config.auto_calibrate {
            calibrated_now = self.learn_from_start(&features, &reading, &loc);
        }
        let reading = if calibrated_now { classify_features(&features, &self.palette) } else { reading };
        let view = self.frame.as_ref().map(|f| to_board_coordinates(&reading, f, stability.stable, t));
        Ok(FrameResult { t, location: Some(loc), relocated, check: Some(check), reading: Some(reading), stability, view, calibrated_now })
    }

    fn rectify_and_check(&self, img: &Mat) -> Result<(Mat, PatternCheck)> {
        let loc = self.location.as_ref().expect("location set");
        let rect = rectify(img, loc)?;
        let check = check_location(&rect)?;
        Ok((rect, check))
    }

    fn check_ok(&self, c: &PatternCheck) -> bool {
        c.aligned >= self.config.min_aligned && (self.ref_contrast <= 0.0 || c.contrast >= self.config.min_contrast_ratio * self.ref_contrast)
    }

    /// Whether the motion picture shows no motion against the previous one
    /// (without updating the detector).
    fn quiet_picture(&self, picture: &Mat) -> bool {
        self.stability.is_quiet(picture)
    }

    fn lost(&mut self, t: f64, check: Option<PatternCheck>) -> FrameResult {
        let stability = self.stability.lost();
        FrameResult {
            t,
            location: self.location.clone(),
            relocated: false,
            check,
            reading: None,
            stability,
            view: None,
            calibrated_now: false,
        }
    }

    /// A still start position: fix the orientation and (self-calibration) learn
    /// the colours. Returns whether the palette changed.
    fn learn_from_start(&mut self, features: &BoardFeatures, reading: &BoardReading, loc: &BoardLocation) -> bool {
        let Some(side) = start_position_side(reading) else { return false };
        if self.frame.is_none() {
            self.frame = Some(BoardFrame { white_home: side, top_left_dark: reading.top_left_dark });
        }
        if self.calibrated || !self.config.auto_calibrate {
            return false;
        }
        match Calibration::from_features(features, loc, &self.palette, &self.source) {
            Ok(cal) => {
                self.palette = cal.palette.clone();
                self.frame = Some(cal.frame());
                self.calibrated = true;
                self.update_lean();
                self.learnt = Some(cal);
                true
            }
            Err(e) => {
                tracing::debug!("self-calibration refused: {e}");
                false
            }
        }
    }
}
