//! Calibration: what one look at the start position teaches: where the board
//! is (corners), which way it is turned (orientation), and the session's actual
//! colours (the palette moved towards what this camera under this light shows).
//!
//! Stored as JSON under `calibration/` (see `calibration/README.md`); made by
//! `boardwatch calibrate` from a still, a video or a camera, or learnt by the
//! pipeline itself from the first still start position (`Watcher`).
use std::path::Path;

use opencv::core::Mat;
use opencv::prelude::*;
use serde::{Deserialize, Serialize};

use super::classify::{board_features_with, BoardFeatures};
use super::locate::{locate_board, BoardLocation, Lens, ONE_SQUARE_ACROSS, ONE_SQUARE_OVER};
use super::palette::{start_position, ColourModel};
use super::rectify::{rectify, BoardFrame, CameraPose};
use super::source::{Frame, FrameSource};
use super::square_head::SquareHead;
use super::square_model::{LearntReading, SquareModel};
use super::watch::{FrameResult, WatchConfig, Watcher};
use super::{Result, Side, VisionError};

/// File format tag.
pub const FORMAT: &str = "boardwatch-calibration/1";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Calibration {
    /// Always `boardwatch-calibration/1`.
    pub format: String,
    /// What it was made from (file, stream or camera, and frame).
    pub source: String,
    /// Seconds since 1970 (UTC) when it was made.
    pub created_unix: u64,
    /// (width, height) of the frames it belongs to.
    pub image_size: [i32; 2],
    /// Playing-area corners, image px: TL, TR, BR, BL as they appear.
    pub corners: [[f32; 2]; 4],
    /// The camera lens's radial distortion found with the board (absent: none).
    #[serde(default, skip_serializing_if = "lens_is_flat")]
    pub lens: Lens,
    /// Whether image grid (0,0) is a dark square.
    pub top_left_dark: bool,
    /// Side of the image White's men start from.
    pub white_home: Side,
    /// Name of the palette it was learnt from.
    pub base_palette: String,
    /// The learnt colours.
    pub palette: ColourModel,
    /// The learnt square model's head as this session's start position fine-tuned it (absent:
    /// made without the model; it then reads with the head as trained).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub square_head: Option<SquareHead>,
    /// Which of the model's networks the session's start chose (absent: `general`, the only
    /// one built in today, as in files made before a model could hold several).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub square_model: Option<String>,
}

impl Calibration {
    /// Learn from the features of a rectified start position.
    pub fn from_features(features: &BoardFeatures, loc: &BoardLocation, base: &ColourModel, source: &str) -> Result<Calibration> {
        // Only a start position has known classes on every square; `calibrate`
        // checks that the board shows one.
        let (palette, white_home) = base.calibrate(features)?;
        Ok(Calibration::assemble(features, loc, base, source, palette, white_home))
    }

    fn assemble(
        features: &BoardFeatures,
        loc: &BoardLocation,
        base: &ColourModel,
        source: &str,
        palette: ColourModel,
        white_home: Side,
    ) -> Calibration {
        let created_unix = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
        Calibration {
            format: FORMAT.to_string(),
            source: source.to_string(),
            created_unix,
            image_size: [loc.image_size.0, loc.image_size.1],
            corners: loc.corners,
            lens: loc.lens,
            top_left_dark: features.top_left_dark,
            white_home,
            base_palette: base.name.clone(),
            palette,
            square_head: None,
            square_model: None,
        }
    }

    /// A start position the colours refused (`refused`: why), told by the learnt square model
    /// instead (`learnt`: its reading of the same frame, by the head as trained): the colours are
    /// learnt where the model says the men stand, and the model's head is fine-tuned on it. The
    /// colours' refusal stands when the model does not see a start beyond doubt either.
    pub fn from_model_start(
        features: &BoardFeatures,
        loc: &BoardLocation,
        base: &ColourModel,
        source: &str,
        model: &mut SquareModel,
        learnt: &LearntReading,
        refused: VisionError,
    ) -> Result<Calibration> {
        let Some(side) = learnt.start_side_seen(model, features) else { return Err(refused) };
        let palette = base.calibrate_as(features, side)?;
        let mut cal = Calibration::assemble(features, loc, base, source, palette, side);
        cal.fine_tune(model, learnt);
        tracing::info!("{source}: the start position told by the learnt square model; the colours alone refused it ({refused})");
        Ok(cal)
    }

    /// Learn from one still image of the start position (corners found, or given); with a square
    /// model, fine-tune its head on the image too (kept in the calibration), and let it tell the
    /// start where the colours cannot ([`Calibration::from_model_start`]).
    pub fn from_image_with(
        img: &Mat,
        base: &ColourModel,
        corners: Option<[[f32; 2]; 4]>,
        source: &str,
        model: Option<&mut SquareModel>,
    ) -> Result<(Calibration, BoardLocation)> {
        let loc = Calibration::location_of(img, corners)?;
        let found = Calibration::from_image_at(img, base, &loc, corners.is_some(), source);
        let Some(model) = model else { return found };
        // A new session: its start chooses the model's network afresh.
        model.forget_session();
        match found {
            Ok((mut cal, loc)) => {
                let learnt = LearntReading::read(model, img, &loc, cal.top_left_dark)?;
                cal.fine_tune(model, &learnt);
                Ok((cal, loc))
            }
            Err(refused @ VisionError::Calibration(_)) => {
                let features = Calibration::features_at(img, base, &loc)?;
                let learnt = LearntReading::read(model, img, &loc, features.top_left_dark)?;
                if learnt.start_side_seen(model, &features).is_some() || corners.is_some() {
                    return Ok((Calibration::from_model_start(&features, &loc, base, source, model, &learnt, refused)?, loc));
                }
                Calibration::model_start_one_square_over(img, base, &loc, source, model)?.ok_or(refused)
            }
            Err(e) => Err(e),
        }
    }

    /// A found location where neither the colours nor the learnt square model see a start
    /// position, moved one square over to where the model sees one (the first window of
    /// [`ONE_SQUARE_OVER`], then of [`ONE_SQUARE_ACROSS`], that shows it), with its
    /// calibration: a frame of the dark squares' own colour can put the lattice a row off (or a
    /// row and a column), as a light one can, on a set the colours cannot tell (see
    /// [`Calibration::one_square_over`] for the colours).
    pub fn model_start_one_square_over(
        img: &Mat,
        base: &ColourModel,
        loc: &BoardLocation,
        source: &str,
        model: &mut SquareModel,
    ) -> Result<Option<(Calibration, BoardLocation)>> {
        for &(du, dv) in ONE_SQUARE_OVER.iter().chain(&ONE_SQUARE_ACROSS) {
            let moved = loc.shifted(du, dv);
            let Ok(features) = Calibration::features_at(img, base, &moved) else { continue };
            let learnt = LearntReading::read(model, img, &moved, features.top_left_dark)?;
            if learnt.start_side_seen(model, &features).is_none() {
                continue;
            }
            let refused = VisionError::Calibration("no start position".into());
            let cal = Calibration::from_model_start(&features, &moved, base, source, model, &learnt, refused)?;
            tracing::info!("{source}: the board's window moved by ({du}, {dv}) squares, where the learnt square model sees the start position");
            return Ok(Some((cal, moved)));
        }
        Ok(None)
    }

    /// Fine-tune the square model's head on the start position this calibration was learnt
    /// from (`learnt`: the model's reading of that frame; a session that has not chosen its
    /// network chooses it here) and keep the head and the network's name.
    pub fn fine_tune(&mut self, model: &mut SquareModel, learnt: &LearntReading) {
        learnt.adapt(model, &start_position(self.white_home, self.top_left_dark));
        self.square_head = Some(model.head().clone());
        self.square_model = model.chosen_network().map(str::to_string);
        tracing::debug!("{}: the square model reads with its {} network", self.source, self.square_model.as_deref().unwrap_or("general"));
    }

    /// Learn from one still image of the start position (corners found, or given). Found
    /// corners one square off (see [`ONE_SQUARE_OVER`]) are put right by where the men stand.
    pub fn from_image(img: &Mat, base: &ColourModel, corners: Option<[[f32; 2]; 4]>, source: &str) -> Result<(Calibration, BoardLocation)> {
        let loc = Calibration::location_of(img, corners)?;
        Calibration::from_image_at(img, base, &loc, corners.is_some(), source)
    }

    /// The board of an image: at the corners given, or found.
    fn location_of(img: &Mat, corners: Option<[[f32; 2]; 4]>) -> Result<BoardLocation> {
        match corners {
            Some(c) => BoardLocation::from_corners(c, (img.cols(), img.rows())),
            None => locate_board(img, None),
        }
    }

    /// `from_image` at a location found (`given`: false) or given by hand.
    fn from_image_at(img: &Mat, base: &ColourModel, loc: &BoardLocation, given: bool, source: &str) -> Result<(Calibration, BoardLocation)> {
        match Calibration::at_location(img, base, loc, source) {
            Ok(cal) => Ok((cal, loc.clone())),
            // Corners given by hand are the user's word.
            Err(e) if given => Err(e),
            Err(e) => Calibration::one_square_over(img, base, loc, source).ok_or(e),
        }
    }

    /// The squares' features of the board at `loc`.
    fn features_at(img: &Mat, base: &ColourModel, loc: &BoardLocation) -> Result<BoardFeatures> {
        let rect = rectify(img, loc)?;
        let lean = CameraPose::from_location(loc).map(|p| p.lean(base.piece_height as f64));
        board_features_with(&rect, lean.as_ref())
    }

    /// The start position read at `loc`.
    fn at_location(img: &Mat, base: &ColourModel, loc: &BoardLocation, source: &str) -> Result<Calibration> {
        Calibration::from_features(&Calibration::features_at(img, base, loc)?, loc, base, source)
    }

    /// A found location that shows no start position, moved one square over to where one shows
    /// (the first window of [`ONE_SQUARE_OVER`] that does), with its calibration.
    pub fn one_square_over(img: &Mat, base: &ColourModel, loc: &BoardLocation, source: &str) -> Option<(Calibration, BoardLocation)> {
        ONE_SQUARE_OVER.iter().find_map(|&(du, dv)| {
            let moved = loc.shifted(du, dv);
            let cal = Calibration::at_location(img, base, &moved, source).ok()?;
            tracing::info!("{source}: the board's window moved by ({du}, {dv}) squares, where the start position's men stand");
            Some((cal, moved))
        })
    }

    /// Learn from a video or camera: frames are watched until the start
    /// position has been still for the still time, at most `max_frames`.
    /// Returns the calibration and the frame it was learnt on.
    pub fn from_source(
        src: &mut dyn FrameSource,
        base: &ColourModel,
        config: WatchConfig,
        max_frames: u64,
    ) -> std::result::Result<(Calibration, Frame, FrameResult), CalibrateError> {
        let mut config = config;
        config.auto_calibrate = true;
        let mut w = Watcher::new(base.clone(), config)?;
        w.set_source_name(&src.describe());
        let mut seen = 0u64;
        let mut found = 0u64;
        while seen < max_frames {
            let Some(frame) = src.next_frame()? else { break };
            seen += 1;
            w.set_source_name(&frame.name);
            let r = w.process(&frame.image, frame.t)?;
            if r.location.is_some() && r.reading.is_some() {
                found += 1;
            }
            if r.calibrated_now {
                let cal = w.learnt_calibration().cloned().ok_or_else(|| VisionError::Calibration("lost the calibration".into()))?;
                return Ok((cal, frame, r));
            }
        }
        Err(CalibrateError::NoStartPosition { frames: seen, board_found: found })
    }

    pub fn load(path: &Path) -> Result<Calibration> {
        let text = std::fs::read_to_string(path).map_err(|e| VisionError::Calibration(format!("{}: {e}", path.display())))?;
        Self::from_json(&text).map_err(|e| VisionError::Calibration(format!("{}: {e}", path.display())))
    }

    pub fn from_json(text: &str) -> Result<Calibration> {
        let mut c: Calibration = serde_json::from_str(text).map_err(|e| VisionError::Calibration(e.to_string()))?;
        if c.format != FORMAT {
            return Err(VisionError::Calibration(format!("format {:?}, expected {FORMAT:?}", c.format)));
        }
        c.palette.prepare()?;
        // Corners must make a proper quadrilateral inside a sane image.
        c.location()?;
        Ok(c)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    pub fn save(&self, path: &Path) -> Result<()> {
        if let Some(dir) = path.parent() {
            if !dir.as_os_str().is_empty() {
                std::fs::create_dir_all(dir).map_err(|e| VisionError::Calibration(format!("{}: {e}", dir.display())))?;
            }
        }
        std::fs::write(path, self.to_json() + "\n").map_err(|e| VisionError::Calibration(format!("{}: {e}", path.display())))
    }

    /// The board location the corners describe.
    pub fn location(&self) -> Result<BoardLocation> {
        let [w, h] = self.image_size;
        if !(16..=20000).contains(&w) || !(16..=20000).contains(&h) {
            return Err(VisionError::Calibration(format!("impossible image size {w}x{h}")));
        }
        BoardLocation::from_corners_through(self.corners, (w, h), self.lens)
    }

    pub fn frame(&self) -> BoardFrame {
        BoardFrame { white_home: self.white_home, top_left_dark: self.top_left_dark }
    }
}

fn lens_is_flat(lens: &Lens) -> bool {
    lens.k1 == 0.0
}

#[derive(Debug, thiserror::Error)]
pub enum CalibrateError {
    #[error(transparent)]
    Vision(#[from] VisionError),
    #[error(transparent)]
    Source(#[from] super::source::SourceError),
    #[error("no still start position in {frames} frame(s) (board found in {board_found}); show the start position, keep hands off, and try again")]
    NoStartPosition { frames: u64, board_found: u64 },
}
