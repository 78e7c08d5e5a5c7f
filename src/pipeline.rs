//! One board's road from camera frames to the record: the vision watcher hands on still board
//! states, which become tracker observations, which the [`Recorder`] judges, logs and writes down.
//! `replay` (a video file) and the daemon (cameras, video files, streams) both run it, so that
//! both write the same log and the same record for the same frames.

use crate::draughts::rules::Rules;
use crate::publish::recorder::{Recorder, StepError};
use crate::publish::records::InputOrigin;
use crate::tracker::{probabilities, Event, EventKind, Input, Observation, Reading, Tracker};
use crate::vision::source::Frame;
use crate::vision::{self, BoardView, FrameResult, Watcher};

/// The one orientation convention, applied here and nowhere else: a view's coordinates are the
/// rules engine's own (row 0 = Black's edge, playing squares at row + col odd, as
/// `Position::to_grid` has them); a tracker observation is the board as the players see it,
/// whose columns run the other way on mirrored variants (Italian, Spanish; see
/// `notation::square_at`). The view's column of the players' column `col`:
fn view_col(col: usize, rules: &Rules) -> usize {
    if rules.mirrored {
        7 - col
    } else {
        col
    }
}

/// A still view as the tracker reads it. Probabilities keep their order (`. b w B W`
/// everywhere); what they leave out is the chance of "none of these".
pub fn observation_from_view(view: &BoardView, rules: &Rules) -> Observation {
    let mut squares = [[Reading::Unknown; 8]; 8];
    for (row, line) in squares.iter_mut().enumerate() {
        for (col, reading) in line.iter_mut().enumerate() {
            let p = view.probs[row][view_col(col, rules)].map(f64::from);
            *reading = Reading::Probabilities(probabilities([p[0], p[1], p[2], p[3], p[4], 0.0]));
        }
    }
    Observation { squares, t: Some(view.t), glimpse: !view.stable }
}

/// The position the tracker holds now, in the view's coordinates (the engine's own).
fn accepted_board(tracker: &Tracker) -> Option<[[char; 8]; 8]> {
    let rows = tracker.position()?.to_grid();
    Some(rows.map(|row| {
        let mut line = ['.'; 8];
        for (cell, ch) in line.iter_mut().zip(row.chars()) {
            *cell = ch;
        }
        line
    }))
}

/// While the tracker takes the board for a misread, the still board is handed on again this
/// often (seconds), so that a board that stays becomes an error in time.
const REFEED_INTERVAL: f64 = 0.5;

/// What one frame produced.
pub struct Step {
    pub frame: FrameResult,
    /// Tracker events caused by this frame (empty for most frames), already recorded.
    pub events: Vec<Event>,
    /// CPU time the vision took on the frame, and the tracker with its records when the frame
    /// handed a still board on (where a board's time goes).
    pub vision: std::time::Duration,
    pub record: Option<std::time::Duration>,
}

#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error(transparent)]
    Vision(#[from] vision::VisionError),
    /// The frame was seen (the result) but the board state it handed on was not recorded (a
    /// full disk): the pipeline keeps it for [`BoardPipeline::retry_pending`].
    #[error("not recorded: {0}")]
    Record(StepError, Box<FrameResult>),
}

/// A still board handed to the recorder that it could not write.
struct Pending {
    input: Input,
    cursor: Option<u64>,
    view: ([[char; 8]; 8], f64),
}

/// One board: frames in, recorded tracker events out.
pub struct BoardPipeline {
    pub watcher: Watcher,
    /// The last still board handed to the tracker, and when.
    last_fed: Option<([[char; 8]; 8], f64)>,
    /// A still board the recorder could not write, to hand again before the next frame.
    pending: Option<Pending>,
    /// The last board handed on as a glimpse (read, not yet still).
    last_glimpse: Option<[[char; 8]; 8]>,
}

impl BoardPipeline {
    pub fn new(watcher: Watcher) -> BoardPipeline {
        BoardPipeline { watcher, last_fed: None, pending: None, last_glimpse: None }
    }

    /// Whether a still view goes to the tracker: when it differs from the last one it saw, or,
    /// while the tracker waits to see whether a board nothing explains stays, again every
    /// `REFEED_INTERVAL`.
    fn should_feed(&self, view: &BoardView, tracker: &Tracker) -> bool {
        match self.last_fed {
            None => true,
            Some((grid, _)) if grid != view.grid => true,
            Some((_, fed_at)) => tracker.is_suspecting() && view.t - fed_at >= REFEED_INTERVAL,
        }
    }

    /// Process one frame. Only still states reach the tracker (see `should_feed`); each is
    /// recorded with `cursor` (a file's frame number, to continue
    /// after it; `None` for a camera, which has no past). Positions the tracker accepts teach the
    /// watcher the session's colours.
    pub fn process(&mut self, image: &Frame, cursor: Option<u64>, recorder: &mut Recorder) -> Result<Step, PipelineError> {
        let started = vision::capture::thread_cpu_time();
        let frame = self.watcher.process(&image.image, image.t)?;
        let vision = vision::capture::thread_cpu_time().saturating_sub(started);
        let mut events = Vec::new();
        let mut record = None;
        if let Some(view) = frame.view.as_ref().filter(|v| v.stable) {
            if self.should_feed(view, recorder.tracker()) {
                let cpu = vision::capture::thread_cpu_time();
                let observation = observation_from_view(view, recorder.tracker().rules());
                self.pending = Some(Pending { input: Input::Observation(Box::new(observation)), cursor, view: (view.grid, view.t) });
                match self.retry_pending(recorder) {
                    Ok(new_events) => events = new_events,
                    Err(e) => return Err(PipelineError::Record(e, Box::new(frame))),
                }
                // CPU time, the log's sync excluded (waiting for the disk uses no core).
                record = Some(vision::capture::thread_cpu_time().saturating_sub(cpu));
            }
        } else if let Some(view) = frame.view.as_ref().filter(|v| frame.read && self.should_glimpse(v)) {
            // A board read before it was still: with quick hands it may never be still, and
            // the tracker needs it to put in order plies a later board shows at once.
            let observation = observation_from_view(view, recorder.tracker().rules());
            self.last_glimpse = Some(view.grid);
            if let Err(e) = recorder.step(InputOrigin::Source, cursor, Input::Observation(Box::new(observation))) {
                // A glimpse only helps to order plies; the still boards carry the record.
                tracing::warn!("a board seen on the way was not recorded: {e}");
            }
        }
        Ok(Step { frame, events, vision, record })
    }

    /// Whether a board read before it was still goes to the tracker as a glimpse: when it
    /// differs from the last glimpse and from the last still board.
    fn should_glimpse(&self, view: &BoardView) -> bool {
        !view.stable
            && self.last_glimpse != Some(view.grid)
            && self.last_fed.is_none_or(|(grid, _)| grid != view.grid)
    }

    /// Hand the recorder the board state it could not write last time (nothing if none): the
    /// events, or the error again (the state is kept).
    pub fn retry_pending(&mut self, recorder: &mut Recorder) -> Result<Vec<Event>, StepError> {
        let Some(pending) = self.pending.as_ref() else { return Ok(Vec::new()) };
        let new_events = recorder.step(InputOrigin::Source, pending.cursor, pending.input.clone())?;
        let pending = self.pending.take().expect("checked above");
        if new_events.iter().any(|e| matches!(e.kind, EventKind::Move | EventKind::Crowned | EventKind::Init | EventKind::Recovered | EventKind::Resynchronised)) {
            if let Some(board) = accepted_board(recorder.tracker()) {
                self.watcher.learn_accepted(&board);
            }
        }
        self.last_fed = Some(pending.view);
        Ok(new_events)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draughts::Variant;
    use crate::tracker::SquareClass;

    fn view_with(probs_at_0_1: [f32; 5]) -> BoardView {
        let mut probs = [[[1.0, 0.0, 0.0, 0.0, 0.0]; 8]; 8];
        probs[0][1] = probs_at_0_1;
        BoardView { grid: [['.'; 8]; 8], probs, unknown: [[0.0; 8]; 8], stable: true, t: 2.5, mirrored: false }
    }

    #[test]
    fn probabilities_keep_their_classes() {
        // `. b w B W`: a Black king at (0, 1).
        let obs = observation_from_view(&view_with([0.0, 0.1, 0.0, 0.9, 0.0]), &Variant::Pool.rules());
        let Reading::Probabilities(p) = obs.squares[0][1] else { panic!("probabilities expected") };
        assert_eq!(p[SquareClass::from_char('B').unwrap().index()], 0.9);
        assert_eq!(p[SquareClass::from_char('b').unwrap().index()], 0.1);
        assert_eq!(obs.t, Some(2.5));
    }

    /// A view of the position the tracker holds reads back as that position, in every variant:
    /// what the watcher learns from (`accepted_board`) and what the tracker is given
    /// (`observation_from_view`) agree on where each piece stands.
    #[test]
    fn an_accepted_position_seen_again_is_the_same_position() {
        for variant in [Variant::Pool, Variant::Italian, Variant::Spanish, Variant::Russian] {
            let rules = variant.rules();
            let mut tracker = Tracker::new(crate::tracker::TrackerConfig::new(variant, crate::tracker::KingStyle::Visible));
            tracker.init();
            let board = accepted_board(&tracker).unwrap();
            let mut view = view_with([1.0, 0.0, 0.0, 0.0, 0.0]);
            for (r, row) in board.iter().enumerate() {
                for (c, &ch) in row.iter().enumerate() {
                    let class = SquareClass::from_char(ch).unwrap();
                    view.probs[r][c] = std::array::from_fn(|i| if i == class.index() { 1.0 } else { 0.0 });
                }
            }
            let seen = observation_from_view(&view, &rules);
            let expected = Observation::of_position(tracker.position().unwrap(), 0, &rules);
            assert_eq!(seen.to_grid(), expected.to_grid(), "{variant:?}");
        }
    }

    #[test]
    fn mirrored_variants_read_columns_the_players_way() {
        let obs = observation_from_view(&view_with([0.0, 0.0, 1.0, 0.0, 0.0]), &Variant::Italian.rules());
        let Reading::Probabilities(p) = obs.squares[0][6] else { panic!("probabilities expected") };
        assert_eq!(p[SquareClass::from_char('w').unwrap().index()], 1.0);
    }
}
