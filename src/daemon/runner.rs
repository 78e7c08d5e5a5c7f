//! A board's thread: its source under the supervisor; frames through the board's
//! [`BoardPipeline`] (the same one `replay` runs), inputs read from a file straight to the
//! board's recorder; pictures for the live page.

use std::path::PathBuf;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::Context;

use super::board::Board;
use super::config::{RetryConfig, SourceConfig};
use super::sources::{open_source, Picture, SourceInput, SourceItem};
use super::supervisor::{supervise, SourceSink, SourceState};
use crate::pipeline::BoardPipeline;
use crate::vision::source::Frame;
use crate::vision::{overlay_jpeg, Calibration, ColourModel, FrameResult, WatchConfig, Watcher};

/// Pictures for the live page, at most this often.
const PICTURE_INTERVAL: Duration = Duration::from_millis(500);
/// Longest side of those pictures.
const PICTURE_MAX_PX: i32 = 640;

/// Start the board's thread; `None` (the reason is in the board's state) when the board is not
/// recording or no thread could be started.
pub fn start(board: &Arc<Board>, retry: RetryConfig) -> Option<JoinHandle<()>> {
    let cursor = match board.resume_cursor() {
        Ok(cursor) => cursor,
        Err(failure) => {
            board.set_state(SourceState::Stopped, Some(failure), None);
            return None;
        }
    };
    let runner = BoardRunner::new(Arc::clone(board));
    let spawned = std::thread::Builder::new().name(format!("board-{}", board.id())).spawn(move || {
        let mut runner = runner;
        let mut source = open_source(&runner.board.config);
        if let Some(cursor) = cursor {
            source.resume_after(cursor);
        }
        if let Some(t) = runner.board.last_time() {
            source.resume_clock(t);
        }
        let stop = runner.board.stop.clone();
        supervise(source.as_mut(), retry, &stop, &mut runner);
    });
    match spawned {
        Ok(handle) => Some(handle),
        Err(e) => {
            board.set_state(SourceState::Stopped, Some(format!("cannot start the board's thread: {e}")), None);
            None
        }
    }
}

struct BoardRunner {
    board: Arc<Board>,
    /// For camera, video and stream sources: built again each time the source opens.
    pipeline: Option<BoardPipeline>,
    /// Where a calibration learnt from the start position is kept, for the next start.
    learnt_path: PathBuf,
    learnt_saved: bool,
    last_picture: Option<Instant>,
}

impl BoardRunner {
    fn new(board: Arc<Board>) -> BoardRunner {
        let learnt_path = board.folder().join("learnt-calibration.json");
        BoardRunner { board, pipeline: None, learnt_path, learnt_saved: false, last_picture: None }
    }

    /// The recogniser: from the configured calibration, else one learnt earlier from this
    /// board's start position, else the palette alone (it learns from the next start position).
    fn watcher(&self) -> anyhow::Result<Watcher> {
        let board = &self.board.config;
        let config = WatchConfig { squares: board.squares, ..WatchConfig::default() };
        if let Some(path) = &board.calibration {
            let cal = Calibration::load(path).with_context(|| format!("calibration {}", path.display()))?;
            return Watcher::with_calibration(&cal, config).with_context(|| format!("calibration {}", path.display()));
        }
        if self.learnt_path.exists() {
            match Calibration::load(&self.learnt_path).and_then(|cal| Watcher::with_calibration(&cal, config)) {
                Ok(watcher) => return Ok(watcher),
                Err(e) => tracing::warn!(board = %board.id, "{}: {e}; learning again", self.learnt_path.display()),
            }
        }
        let name = board.palette.as_deref().unwrap_or("wooden");
        let palette = ColourModel::named(name).with_context(|| format!("palette {name:?}"))?;
        Ok(Watcher::new(palette, config)?)
    }

    fn frame(&mut self, frame: Frame, cursor: Option<u64>) {
        let Some(pipeline) = self.pipeline.as_mut() else { return };
        let Some(result) = self.board.process_frame(pipeline, &frame, cursor) else { return };
        if !self.learnt_saved {
            if let Some(cal) = pipeline.watcher.learnt_calibration() {
                self.learnt_saved = true;
                if let Err(e) = cal.save(&self.learnt_path) {
                    tracing::warn!(board = %self.board.id(), "{}: {e}", self.learnt_path.display());
                }
            }
        }
        if self.last_picture.is_none_or(|at| at.elapsed() >= PICTURE_INTERVAL) {
            if let Some(picture) = picture(&frame, &result) {
                self.last_picture = Some(Instant::now());
                self.board.set_picture(picture);
            }
        }
    }
}

/// The camera's view with the overlay, as JPEG; `None` while the board is not found.
fn picture(frame: &Frame, result: &FrameResult) -> Option<Picture> {
    let location = result.location.as_ref()?;
    overlay_jpeg(&frame.image, location, result.reading.as_ref(), PICTURE_MAX_PX).ok().map(Picture::from)
}

impl SourceSink for BoardRunner {
    fn prepare(&mut self) -> anyhow::Result<()> {
        if !matches!(self.board.config.source, SourceConfig::Observations { .. }) {
            self.pipeline = Some(BoardPipeline::new(self.watcher()?));
        }
        Ok(())
    }

    fn state(&mut self, state: SourceState, error: Option<String>, retry_in: Option<Duration>) {
        self.board.set_state(state, error, retry_in);
    }

    fn item(&mut self, item: SourceItem) {
        self.board.count_item(item.dropped, item.decode);
        if let Some(picture) = item.picture {
            self.board.set_picture(picture);
        }
        match item.input {
            Some(SourceInput::Frame(frame)) => self.frame(frame, item.cursor),
            Some(SourceInput::Tracker(input)) => self.board.feed(input, item.cursor),
            None => {}
        }
    }

    fn warning(&mut self, message: String) {
        self.board.warning(message);
    }
}
