//! The per-frame pipeline for video and cameras: keep the board's homography
//! while the scene is static (checked cheaply whenever the board is read), find
//! the board again when it or the camera moved, rectify, classify, judge
//! stability, and map the reading to board coordinates once the orientation is
//! known (from a calibration, or from a start position seen still; optionally
//! learning the session's colours from it: self-calibration).
//!
//! Reading the squares costs most (about 4 ms at 1280x720, against 0.16 ms for
//! the motion picture), and most frames do not need it: see `plan`.
use opencv::core::Mat;
use opencv::prelude::*;

use super::calibration::Calibration;
use super::classify::{board_features_with, classify_features, BoardFeatures, BoardReading, LeanOffsets, ColourClass};
use super::locate::{check_location, locate_board, BoardLocation, PatternCheck, ONE_SQUARE_ACROSS, ONE_SQUARE_OVER};
use super::palette::ColourModel;
use super::square_model::{LearntReading, SquareModel};
use super::rectify::{rectify, start_position_side, to_board_coordinates, BoardFrame, BoardView, CameraPose};
use super::stability::{motion_picture, Motion, StabilityConfig, StabilityDetector, StabilityReport};
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
    /// Read the squares on every frame (the old way: for comparisons and benchmarks).
    /// Otherwise frames with motion are not read, and a still board that looks as
    /// when it was read keeps that reading...
    pub read_every_frame: bool,
    /// ...for at most this long (seconds) before it is read again; half the still
    /// time when the reading has foreign squares, so a passing misreading does not
    /// hold a still board back for long.
    pub reread_after_secs: f64,
    /// Who reads the playing squares: the colours alone, or the learnt square model
    /// (`square_model`), fine-tuned on the session's start position.
    pub squares: SquareReader,
}

/// Who reads the playing squares of a board.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum SquareReader {
    /// The colour model (palette) and the disc cues, learnt from the start position.
    #[default]
    Colours,
    /// The learnt square model (a small network trained on many boards and sets), its last
    /// layer fine-tuned on the start position; the colours still find the start.
    Learnt,
}

impl SquareReader {
    /// The square model this reader needs (the built-in one), if any.
    pub fn model(self) -> Result<Option<SquareModel>> {
        match self {
            SquareReader::Colours => Ok(None),
            SquareReader::Learnt => SquareModel::builtin().map(Some),
        }
    }
}

impl Default for WatchConfig {
    fn default() -> Self {
        WatchConfig {
            stability: StabilityConfig::default(),
            auto_calibrate: true,
            min_aligned: 0.8,
            min_contrast_ratio: 0.5,
            relocate_after_secs: 1.0,
            read_every_frame: false,
            reread_after_secs: 1.0,
            squares: SquareReader::default(),
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
    /// The cheap check of the kept location, when made on this frame (not on
    /// frames that reuse a reading, and at a limited rate while things move).
    pub check: Option<PatternCheck>,
    /// Image-grid reading (row 0 = top of the rectified image). None while
    /// things move over the board (nothing is read then) or the board is lost.
    pub reading: Option<BoardReading>,
    /// The squares were read on this frame (false: the reading is the last one,
    /// kept for a still board that has not changed since; or nothing was read).
    pub read: bool,
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
    /// The colours as calibrated, before following the session (see `learn_accepted`): the
    /// floor of every update, and what a board found again starts from.
    calibrated_palette: Option<ColourModel>,
    /// The last reading, with what the board looked like then.
    last: Option<LastReading>,
    /// When the location was last checked.
    checked_at: Option<f64>,
    /// Frames whose squares were read.
    reads: u64,
    /// Since when nothing has moved over the board, whatever its reading says. Before the
    /// session's colours are learnt the palette may read every square `?` (a board and set it
    /// was not made for), and the stability detector takes that for a hand; a still scene is
    /// what self-calibration needs, and the calibration itself decides whether it shows a
    /// start position.
    quiet_since: Option<f64>,
    /// The learnt square model, when it reads the squares (`SquareReader::Learnt`).
    square_model: Option<SquareModel>,
}

/// A reading kept for the frames after it, while the board stays as it was.
struct LastReading {
    t: f64,
    /// The motion picture of the frame that was read.
    cells: Vec<f32>,
    reading: BoardReading,
    /// For learning colours from it, should that wait for a later frame.
    features: BoardFeatures,
    /// The square model's embeddings of the same frame, for the same reason.
    learnt: Option<LearntReading>,
    has_unknown: bool,
}

/// How much of the pipeline a frame needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Work {
    /// Rectify, check the location, read the squares.
    Read,
    /// The board is still and looks as when it was last read: that reading stands.
    Reuse,
    /// Things move over the board: no reading could be handed on, so none is
    /// taken. The location is checked at a limited rate, so that a board or
    /// camera that keeps moving is still found again after `relocate_after_secs`.
    Moving { check: bool },
}

/// What `plan` decides from: cheap facts about a frame.
#[derive(Debug, Clone, Copy)]
struct Facts {
    t: f64,
    /// Motion against the previous frame.
    moving: bool,
    /// The last check of the location failed.
    failing: bool,
    /// When the last reading was taken (None: none to reuse).
    read_at: Option<f64>,
    /// The picture differs from the one of the last reading.
    changed: bool,
    /// The last reading has squares no class explains (a hand, an object).
    unknown_in_reading: bool,
    /// Since when the stability detector has seen the board still.
    still_since: Option<f64>,
    /// When the location was last checked.
    checked_at: Option<f64>,
}

/// An accepted position may differ from the reading it is learnt from on this many squares
/// (the misreads learning is for); more, and the frame shows something else.
const FOLLOW_MAX_DISAGREEING: usize = 3;

/// Frame times are multiples of 1/fps: a little tolerance in comparisons.
const EPS: f64 = 1e-6;

/// How much of the pipeline a frame needs. Reading is skipped only where it
/// cannot change what is handed on: a moving frame is a hand whatever its
/// reading, and a still board whose picture matches the read one (no cell off
/// by more than the motion threshold) is taken to read the same. That guess is
/// checked: the reading handed on first in a still period is always a fresh
/// one, and a kept reading is read again after `reread_after_secs`.
fn plan(f: &Facts, config: &WatchConfig) -> Work {
    if config.read_every_frame {
        return Work::Read;
    }
    if f.moving {
        let due = f.checked_at.map_or(true, |c| f.t - c + EPS >= config.relocate_after_secs / 4.0 || f.t < c);
        return Work::Moving { check: due };
    }
    let Some(read_at) = f.read_at else { return Work::Read };
    if f.failing || f.changed || f.t < read_at {
        return Work::Read;
    }
    let still_secs = config.stability.still_secs;
    if let Some(since) = f.still_since {
        // About to be handed on: the reading that is handed on must itself come
        // from the end of the still time, not only its start.
        if f.t - since + EPS >= still_secs && read_at + EPS < since + still_secs {
            return Work::Read;
        }
    }
    let reread = if f.unknown_in_reading { still_secs / 2.0 } else { config.reread_after_secs };
    if f.t - read_at + EPS >= reread {
        Work::Read
    } else {
        Work::Reuse
    }
}

impl Watcher {
    /// Start with a palette and nothing else known.
    pub fn new(palette: ColourModel, config: WatchConfig) -> Result<Self> {
        config.stability.validate()?;
        if !(config.reread_after_secs.is_finite() && config.reread_after_secs > 0.0) {
            return Err(VisionError::Calibration(format!("re-read time {} s: need more than 0", config.reread_after_secs)));
        }
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
            calibrated_palette: None,
            last: None,
            checked_at: None,
            reads: 0,
            quiet_since: None,
            square_model: config.squares.model()?,
        })
    }

    /// Start from a calibration: its colours, orientation and corners (the
    /// corners are checked on the first frame like any kept location).
    pub fn with_calibration(cal: &Calibration, config: WatchConfig) -> Result<Self> {
        let mut w = Watcher::new(cal.palette.clone(), config)?;
        w.calibrated = true;
        w.calibrated_palette = Some(cal.palette.clone());
        w.frame = Some(cal.frame());
        w.location = Some(cal.location()?);
        w.update_lean();
        if let Some(model) = w.square_model.as_mut() {
            model.use_calibration(cal)?;
        }
        Ok(w)
    }

    pub fn set_source_name(&mut self, name: &str) {
        self.source = name.to_string();
    }

    pub fn palette(&self) -> &ColourModel {
        &self.palette
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

    /// Follow how long nothing has moved over the board (see `quiet_since`).
    fn note_motion(&mut self, t: f64, motion: &Motion) {
        if motion.moving_cells > 0 {
            self.quiet_since = None;
        } else if self.quiet_since.map_or(true, |q| t < q) {
            self.quiet_since = Some(t);
        }
    }

    /// Whether this frame may teach the session's colours: not yet calibrated, and the board
    /// stable, or at least still for the still time (before calibration the palette's reading
    /// cannot be trusted to tell a hand from a set it does not know).
    fn may_calibrate(&self, t: f64, stability: &StabilityReport) -> bool {
        if self.calibrated || !self.config.auto_calibrate {
            return false;
        }
        let quiet = self.quiet_since.is_some_and(|q| t - q + EPS >= self.config.stability.still_secs);
        stability.stable || (quiet && stability.moving_cells == 0)
    }

    /// Follow the session's colours from a position the game accepted (`board`: `.bBwW` in
    /// board coordinates, as the view handed on): the squares of the reading that was handed on
    /// teach their classes by a bounded step (`ColourModel::follow`). Nothing is learnt before
    /// calibration, nor from a frame the position does not fit (more than
    /// `FOLLOW_MAX_DISAGREEING` squares read otherwise: a move in progress, a hand); a board or
    /// camera that moved starts again from the calibrated colours. Returns whether it learnt.
    pub fn learn_accepted(&mut self, board: &[[char; 8]; 8]) -> bool {
        let (Some(frame), Some(last), Some(floor)) = (self.frame, self.last.as_ref(), self.calibrated_palette.as_ref()) else {
            return false;
        };
        if !self.calibrated {
            return false;
        }
        let distinct = self.palette.distinct_kings();
        let mut labels = [[ColourClass::Unknown; 8]; 8];
        let mut disagreeing = 0;
        for (r, row) in labels.iter_mut().enumerate() {
            for (c, label) in row.iter_mut().enumerate() {
                let (br, bc) = frame.to_board(r, c);
                let Some(mut class) = ColourClass::from_letter(board[br][bc]) else { return false };
                if !distinct {
                    class = match class {
                        ColourClass::DarkKing => ColourClass::DarkMan,
                        ColourClass::LightKing => ColourClass::LightMan,
                        other => other,
                    };
                }
                let seen = last.reading.squares[r][c].class;
                if seen != class && seen != ColourClass::Unknown {
                    disagreeing += 1;
                }
                *label = class;
            }
        }
        if disagreeing > FOLLOW_MAX_DISAGREEING {
            return false;
        }
        match self.palette.follow(&last.features, &labels, floor) {
            Ok(()) => true,
            Err(e) => {
                tracing::debug!("not following the session's colours: {e}");
                false
            }
        }
    }

    fn set_location(&mut self, loc: BoardLocation) {
        if let Some(calibrated) = &self.calibrated_palette {
            // What was followed belonged to the old view of the board.
            self.palette = calibrated.clone();
        }
        self.quiet_since = None;
        self.location = Some(loc);
        self.last = None;
        self.ref_contrast = 0.0;
        self.failing_since = None;
        self.stability.reset();
        self.update_lean();
    }

    /// Process one frame taken at `t` seconds.
    ///
    /// The motion picture (cheap) is taken on every frame and decides how much
    /// else the frame needs (see `plan`): while things move nothing can be handed
    /// on, so the squares are not read; while the board stays still and looks as
    /// when it was last read, that reading stands. A reading is always taken
    /// afresh before a still period is first handed on.
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
        let mut motion = self.stability.motion(&motion_picture(img, self.location.as_ref().expect("location set"))?)?;
        self.note_motion(t, &motion);
        let work = if relocated {
            Work::Read
        } else {
            let last = self.last.as_ref();
            plan(
                &Facts {
                    t,
                    moving: motion.moving_cells > 0,
                    failing: self.failing_since.is_some(),
                    read_at: last.map(|l| l.t),
                    changed: last.map_or(true, |l| self.stability.differ(&l.cells, &motion.cells)),
                    unknown_in_reading: last.map_or(false, |l| l.has_unknown),
                    still_since: self.stability.still_since(),
                    checked_at: self.checked_at,
                },
                &self.config,
            )
        };
        match work {
            Work::Reuse => return Ok(self.reuse(t, &motion)),
            Work::Moving { check: false } => return Ok(self.moving(t, &motion, None)),
            Work::Moving { check: true } | Work::Read => {}
        }
        let (mut rect, mut check) = self.rectify_and_check(img)?;
        self.checked_at = Some(t);
        if !self.check_ok(&check) && !relocated {
            // Hands hide the pattern while they move; a moved board or camera
            // leaves a still scene with the pattern in the wrong place.
            let fail_start = *self.failing_since.get_or_insert(t);
            let quiet = motion.moving_cells == 0;
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
                        // The pictures of the old location mean nothing here.
                        motion = self.stability.motion(&motion_picture(img, self.location.as_ref().expect("location set"))?)?;
                        self.note_motion(t, &motion);
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
        if work != Work::Read && !relocated {
            // Checked while things move: the location holds, nothing to read.
            return Ok(self.moving(t, &motion, Some(check)));
        }
        let mut loc = self.location.clone().expect("location set");
        let mut features = board_features_with(&rect, self.lean.as_ref())?;
        let mut reading = classify_features(&features, &self.palette);
        let mut learnt = match self.square_model.as_mut() {
            Some(model) => Some(LearntReading::read(model, img, &loc, reading.top_left_dark)?),
            None => None,
        };
        self.apply_learnt(learnt.as_ref(), &mut reading);
        let stability = self.stability.judge(t, &motion, &mut reading);
        let mut calibrated_now = false;
        if self.frame.is_none() {
            // A start position tells the orientation at once (32 squares agree);
            // learning colours waits until it is still.
            if let Some(side) = start_position_side(&reading) {
                self.frame = Some(BoardFrame { white_home: side, top_left_dark: reading.top_left_dark });
            }
        }
        if self.may_calibrate(t, &stability) {
            calibrated_now = self.learn_from_start(&features, learnt.as_ref(), &reading, &loc);
            if !calibrated_now && !self.calibrated && self.config.auto_calibrate {
                if let Some((moved, moved_features, moved_learnt)) = self.start_one_square_over(img, &loc)? {
                    self.location = Some(moved.clone());
                    calibrated_now = self.learn_from_start(&moved_features, moved_learnt.as_ref(), &reading, &moved);
                    (loc, features, learnt) = (moved, moved_features, moved_learnt);
                }
            }
        }
        let reading = if calibrated_now { self.read_again(&features, learnt.as_ref()) } else { reading };
        let view = self.frame.as_ref().map(|f| to_board_coordinates(&reading, f, stability.stable, t));
        self.reads += 1;
        self.last = if calibrated_now {
            // New colours and piece height: the next frame reads the squares afresh.
            None
        } else {
            // The squares the stability detector found foreign in this very reading.
            let has_unknown = !stability.unknown_squares.is_empty();
            Some(LastReading { t, cells: motion.cells, reading: reading.clone(), features, learnt, has_unknown })
        };
        Ok(FrameResult { t, location: Some(loc), relocated, check: Some(check), reading: Some(reading), read: true, stability, view, calibrated_now })
    }

    /// A still board that looks as when it was last read: that reading again.
    fn reuse(&mut self, t: f64, motion: &Motion) -> FrameResult {
        let mut last = self.last.take().expect("a reading to reuse");
        let stability = self.stability.judge(t, motion, &mut last.reading);
        let loc = self.location.clone().expect("location set");
        let mut calibrated_now = false;
        if self.may_calibrate(t, &stability) {
            // Only when learning failed on the fresh reading: try again, as on every stable frame.
            calibrated_now = self.learn_from_start(&last.features, last.learnt.as_ref(), &last.reading, &loc);
        }
        let reading = if calibrated_now { self.read_again(&last.features, last.learnt.as_ref()) } else { last.reading.clone() };
        let view = self.frame.as_ref().map(|f| to_board_coordinates(&reading, f, stability.stable, t));
        self.last = if calibrated_now { None } else { Some(last) };
        FrameResult { t, location: Some(loc), relocated: false, check: None, reading: Some(reading), read: false, stability, view, calibrated_now }
    }

    /// Things move over the board: no reading (none could be handed on).
    fn moving(&mut self, t: f64, motion: &Motion, check: Option<PatternCheck>) -> FrameResult {
        let stability = self.stability.judge_moving(motion);
        FrameResult { t, location: self.location.clone(), relocated: false, check, reading: None, read: false, stability, view: None, calibrated_now: false }
    }

    /// How many frames had their squares read (the rest reused a reading or were skipped).
    pub fn frames_read(&self) -> u64 {
        self.reads
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

    fn lost(&mut self, t: f64, check: Option<PatternCheck>) -> FrameResult {
        self.quiet_since = None;
        let stability = self.stability.lost();
        FrameResult {
            t,
            location: self.location.clone(),
            relocated: false,
            check,
            reading: None,
            read: false,
            stability,
            view: None,
            calibrated_now: false,
        }
    }

    /// The square model's verdicts on the playing squares, in place of the colours'.
    fn apply_learnt(&self, learnt: Option<&LearntReading>, reading: &mut BoardReading) {
        if let (Some(model), Some(learnt)) = (self.square_model.as_ref(), learnt) {
            learnt.apply(model, reading, self.palette.distinct_kings(), self.palette.min_confidence);
        }
    }

    /// The squares of a frame read again with what calibrating on it taught.
    fn read_again(&self, features: &BoardFeatures, learnt: Option<&LearntReading>) -> BoardReading {
        let mut reading = classify_features(features, &self.palette);
        self.apply_learnt(learnt, &mut reading);
        reading
    }

    /// Self-calibration on a window one square over from the found one, when the found one
    /// shows no start position and that one does (see `Calibration::one_square_over`): the
    /// moved location, its squares' features and the square model's reading there.
    fn start_one_square_over(&mut self, img: &Mat, loc: &BoardLocation) -> Result<Option<(BoardLocation, BoardFeatures, Option<LearntReading>)>> {
        for (n, &(du, dv)) in ONE_SQUARE_OVER.iter().chain(&ONE_SQUARE_ACROSS).enumerate() {
            let straight = n < ONE_SQUARE_OVER.len();
            if !straight && self.square_model.is_none() {
                break;
            }
            let moved = loc.shifted(du, dv);
            let Ok(rect) = rectify(img, &moved) else { continue };
            let lean = CameraPose::from_location(&moved).map(|p| p.lean(self.palette.piece_height as f64));
            let features = board_features_with(&rect, lean.as_ref())?;
            let learnt = match self.square_model.as_mut() {
                Some(model) => Some(LearntReading::read(model, img, &moved, features.top_left_dark)?),
                None => None,
            };
            // A start the colours see there (one square over along an axis), or the learnt
            // square model (as on the window found; also a row and a column over).
            let colours_start = || straight && Calibration::from_features(&features, &moved, &self.palette, &self.source).is_ok();
            let model_start = || match (self.square_model.as_ref(), learnt.as_ref()) {
                (Some(model), Some(learnt)) => learnt.start_side_seen(model, &features).is_some(),
                _ => false,
            };
            if !colours_start() && !model_start() {
                continue;
            }
            tracing::info!("{}: the board's window moved by ({du}, {dv}) squares, where the start position's men stand", self.source);
            return Ok(Some((moved, features, learnt)));
        }
        Ok(None)
    }

    /// A still start position: fix the orientation and (self-calibration) learn
    /// the colours, and fine-tune the square model on it. Returns whether the palette changed.
    fn learn_from_start(&mut self, features: &BoardFeatures, learnt: Option<&LearntReading>, reading: &BoardReading, loc: &BoardLocation) -> bool {
        if let (None, Some(side)) = (self.frame, start_position_side(reading)) {
            self.frame = Some(BoardFrame { white_home: side, top_left_dark: reading.top_left_dark });
        }
        if self.calibrated || !self.config.auto_calibrate {
            return false;
        }
        // Whether this is a start position is decided by the calibration on the
        // board itself: the palette may misread the session's colours, which is
        // what calibrating is for.
        // With the learnt square model, the model may tell a start the colours cannot.
        let found = match (Calibration::from_features(features, loc, &self.palette, &self.source), self.square_model.as_mut(), learnt) {
            (Ok(mut cal), Some(model), Some(learnt)) => {
                cal.fine_tune(model, learnt);
                Ok(cal)
            }
            (Err(refused @ VisionError::Calibration(_)), Some(model), Some(learnt)) => {
                Calibration::from_model_start(features, loc, &self.palette, &self.source, model, learnt, refused)
            }
            (found, _, _) => found,
        };
        match found {
            Ok(cal) => {
                self.palette = cal.palette.clone();
                self.calibrated_palette = Some(cal.palette.clone());
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A still board read at t = 1.0, still since then, checked then.
    fn still(t: f64) -> Facts {
        Facts { t, moving: false, failing: false, read_at: Some(1.0), changed: false, unknown_in_reading: false, still_since: Some(1.0), checked_at: Some(1.0) }
    }

    #[test]
    fn a_still_unchanged_board_reuses_its_reading_until_it_is_handed_on() {
        let c = WatchConfig::default();
        assert_eq!(plan(&still(1.1), &c), Work::Reuse);
        assert_eq!(plan(&still(1.0 + c.stability.still_secs / 2.0), &c), Work::Reuse);
        // The still time is over: read once more before handing it on...
        assert_eq!(plan(&still(1.0 + c.stability.still_secs), &c), Work::Read);
        // ...after which that reading stands...
        let confirmed = Facts { read_at: Some(1.0 + c.stability.still_secs), ..still(1.5) };
        assert_eq!(plan(&confirmed, &c), Work::Reuse);
        // ...until it is old.
        let old = Facts { t: 1.0 + c.stability.still_secs + c.reread_after_secs, ..confirmed };
        assert_eq!(plan(&old, &c), Work::Read);
    }

    #[test]
    fn motion_skips_reading_and_checks_the_location_at_a_limited_rate() {
        let c = WatchConfig::default();
        let moving = Facts { moving: true, still_since: None, ..still(1.05) };
        assert_eq!(plan(&moving, &c), Work::Moving { check: false });
        assert_eq!(plan(&Facts { t: 1.0 + c.relocate_after_secs / 4.0, ..moving }, &c), Work::Moving { check: true });
        assert_eq!(plan(&Facts { checked_at: None, ..moving }, &c), Work::Moving { check: true });
        // Even with no reading to reuse.
        assert_eq!(plan(&Facts { read_at: None, ..moving }, &c), Work::Moving { check: false });
    }

    #[test]
    fn a_change_a_failed_check_or_nothing_read_means_reading() {
        let c = WatchConfig::default();
        assert_eq!(plan(&Facts { changed: true, ..still(1.1) }, &c), Work::Read);
        assert_eq!(plan(&Facts { failing: true, ..still(1.1) }, &c), Work::Read);
        assert_eq!(plan(&Facts { read_at: None, ..still(1.1) }, &c), Work::Read);
        // Time going back (a restarted source): no reuse.
        assert_eq!(plan(&still(0.5), &c), Work::Read);
        // After motion the stillness restarts at the first quiet frame: reuse if unchanged.
        assert_eq!(plan(&Facts { still_since: None, ..still(1.2) }, &c), Work::Reuse);
    }

    #[test]
    fn foreign_squares_are_read_again_sooner_and_every_frame_when_asked() {
        let c = WatchConfig::default();
        let hand = Facts { unknown_in_reading: true, still_since: None, ..still(1.0 + c.stability.still_secs / 2.0) };
        assert_eq!(plan(&hand, &c), Work::Read);
        assert_eq!(plan(&Facts { t: 1.05, ..hand }, &c), Work::Reuse);
        let every = WatchConfig { read_every_frame: true, ..c };
        assert_eq!(plan(&still(1.1), &every), Work::Read);
        assert_eq!(plan(&Facts { moving: true, ..still(1.1) }, &every), Work::Read);
    }
}
