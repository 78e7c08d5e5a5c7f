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

/// A still view as the tracker reads it. The view keeps playing squares at row + col odd; on
/// mirrored boards (Italian, Spanish) the players' own columns run the other way, which is what
/// the tracker expects for those variants. Probabilities keep their order (`. b w B W`
/// everywhere); what they leave out is the chance of "none of these".
pub fn observation_from_view(view: &BoardView, rules: &Rules) -> Observation {
    let mut squares = [[Reading::Unknown; 8]; 8];
    for (row, line) in squares.iter_mut().enumerate() {
        for (col, reading) in line.iter_mut().enumerate() {
            let seen_col = if rules.mirrored { 7 - col } else { col };
            let p = view.probs[row][seen_col].map(f64::from);
            *reading = Reading::Probabilities(probabilities([p[0], p[1], p[2], p[3], p[4], 0.0]));
        }
    }
    Observation { squares, t: Some(view.t) }
}

/// What one frame produced.
pub struct Step {
    pub frame: FrameResult,
    /// Tracker events caused by this frame (empty for most frames), already recorded.
    pub events: Vec<Event>,
}

#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error(transparent)]
    Vision(#[from] vision::VisionError),
    #[error("not recorded: {0}")]
    Record(#[from] StepError),
}

/// One board: frames in, recorded tracker events out.
pub struct BoardPipeline {
    pub watcher: Watcher,
    /// The grid of the last view handed to the tracker.
    last_fed: Option<[[char; 8]; 8]>,
}

impl BoardPipeline {
    pub fn new(watcher: Watcher) -> BoardPipeline {
        BoardPipeline { watcher, last_fed: None }
    }

    /// The position the tracker holds now, in the view's coordinates (the columns of mirrored
    /// variants turned back, as `observation_from_view` turned them).
    fn accepted_board(tracker: &Tracker) -> Option<[[char; 8]; 8]> {
        let rows = tracker.position()?.to_grid();
        let mirrored = tracker.rules().mirrored;
        let mut board = [['.'; 8]; 8];
        for (r, row) in rows.iter().enumerate() {
            for (c, ch) in row.chars().enumerate().take(8) {
                board[r][if mirrored { 7 - c } else { c }] = ch;
            }
        }
        Some(board)
    }

    /// Process one frame. Only still states reach the tracker, and only when they differ from
    /// the last one it saw; each is recorded with the frame's number as the source's cursor.
    /// Positions the tracker accepts teach the watcher the session's colours.
    pub fn process(&mut self, image: &Frame, recorder: &mut Recorder) -> Result<Step, PipelineError> {
        let frame = self.watcher.process(&image.image, image.t)?;
        let mut events = Vec::new();
        if let Some(view) = frame.view.as_ref().filter(|v| v.stable) {
            if self.last_fed != Some(view.grid) {
                let observation = observation_from_view(view, recorder.tracker().rules());
                let input = Input::Observation(Box::new(observation));
                let new_events = recorder.step(InputOrigin::Source, Some(image.index), input)?;
                if new_events.iter().any(|e| matches!(e.kind, EventKind::Move | EventKind::Crowned | EventKind::Init | EventKind::Recovered)) {
                    if let Some(board) = Self::accepted_board(recorder.tracker()) {
                        self.watcher.learn_accepted(&board);
                    }
                }
                events.extend(new_events);
                self.last_fed = Some(view.grid);
            }
        }
        Ok(Step { frame, events })
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

    #[test]
    fn mirrored_variants_read_columns_the_players_way() {
        let obs = observation_from_view(&view_with([0.0, 0.0, 1.0, 0.0, 0.0]), &Variant::Italian.rules());
        let Reading::Probabilities(p) = obs.squares[0][6] else { panic!("probabilities expected") };
        assert_eq!(p[SquareClass::from_char('w').unwrap().index()], 1.0);
    }
}
