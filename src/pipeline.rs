//! From camera frames to moves: the vision watcher hands on still board states, which become
//! tracker observations. One piece of glue shared by `replay` and the daemon.

use opencv::core::Mat;

use crate::draughts::rules::Rules;
use crate::tracker::{Event, EventKind, Observation, Reading, Tracker};
use crate::vision::{self, BoardView, FrameResult, Watcher};

/// A still view as the tracker reads it. The view keeps playing squares at row + col odd; on
/// mirrored boards (Italian, Spanish) the players' own columns run the other way, which is what
/// the tracker expects for those variants. Probabilities are reordered from the classifier's
/// `. b B w W` to the tracker's `. b w B W`; what they leave out is the chance of "none of these".
pub fn observation_from_view(view: &BoardView, rules: &Rules) -> Observation {
    let mut squares = [[Reading::Unknown; 8]; 8];
    for (row, line) in squares.iter_mut().enumerate() {
        for (col, reading) in line.iter_mut().enumerate() {
            let seen_col = if rules.mirrored { 7 - col } else { col };
            let [empty, black_man, black_king, white_man, white_king] = view.probs[row][seen_col];
            *reading = Reading::Probabilities([empty, black_man, white_man, black_king, white_king]);
        }
    }
    Observation { squares, t: Some(view.t) }
}

/// While the tracker takes the board for a misread, the still board is handed on again this
/// often (seconds), so that a board that stays becomes an error in time.
const REFEED_INTERVAL: f64 = 0.5;

/// What one frame produced.
pub struct Step {
    pub frame: FrameResult,
    /// Tracker events caused by this frame (empty for most frames).
    pub events: Vec<Event>,
}

/// One board: frames in, tracker events out.
pub struct BoardPipeline {
    pub watcher: Watcher,
    pub tracker: Tracker,
    started: bool,
    /// The last still board handed to the tracker, and when.
    last_fed: Option<([[char; 8]; 8], f64)>,
}

impl BoardPipeline {
    pub fn new(watcher: Watcher, tracker: Tracker) -> BoardPipeline {
        BoardPipeline { watcher, tracker, started: false, last_fed: None }
    }

    /// The position the tracker holds now, in the view's coordinates (the columns of mirrored
    /// variants turned back, as `observation_from_view` turned them).
    fn accepted_board(&self) -> Option<[[char; 8]; 8]> {
        let rows = self.tracker.position()?.to_grid();
        let mirrored = self.tracker.rules().mirrored;
        let mut board = [['.'; 8]; 8];
        for (r, row) in rows.iter().enumerate() {
            for (c, ch) in row.chars().enumerate().take(8) {
                board[r][if mirrored { 7 - c } else { c }] = ch;
            }
        }
        Some(board)
    }

    /// Whether a still view goes to the tracker: when it differs from the last one it saw, or,
    /// while the tracker waits to see whether a board nothing explains stays, again every
    /// `REFEED_INTERVAL`.
    fn should_feed(&self, view: &BoardView) -> bool {
        match self.last_fed {
            None => true,
            Some((grid, _)) if grid != view.grid => true,
            Some((_, fed_at)) => self.tracker.is_suspecting() && view.t - fed_at >= REFEED_INTERVAL,
        }
    }

    /// Process one frame taken at `t` seconds. Only still states reach the tracker (see
    /// `should_feed`); the game starts (`Init Ready`) at the first.
    pub fn process(&mut self, image: &Mat, t: f64) -> vision::Result<Step> {
        let frame = self.watcher.process(image, t)?;
        let mut events = Vec::new();
        if let Some(view) = frame.view.as_ref().filter(|v| v.stable) {
            if self.should_feed(view) {
                if !self.started {
                    events.extend(self.tracker.init());
                    self.started = true;
                }
                let observation = observation_from_view(view, self.tracker.rules());
                let new_events = self.tracker.observe(&observation);
                if new_events.iter().any(|e| matches!(e.kind, EventKind::Move | EventKind::Crowned | EventKind::Init | EventKind::Recovered | EventKind::Resynchronised)) {
                    if let Some(board) = self.accepted_board() {
                        self.watcher.learn_accepted(&board);
                    }
                }
                events.extend(new_events);
                self.last_fed = Some((view.grid, view.t));
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
    fn probabilities_are_reordered_for_the_tracker() {
        // Classifier order `. b B w W`: a Black king at (0, 1).
        let obs = observation_from_view(&view_with([0.0, 0.1, 0.9, 0.0, 0.0]), &Variant::Pool.rules());
        let Reading::Probabilities(p) = obs.squares[0][1] else { panic!("probabilities expected") };
        assert_eq!(p[SquareClass::from_char('B').unwrap().index()], 0.9);
        assert_eq!(p[SquareClass::from_char('b').unwrap().index()], 0.1);
        assert_eq!(obs.t, Some(2.5));
    }

    #[test]
    fn mirrored_variants_read_columns_the_players_way() {
        let obs = observation_from_view(&view_with([0.0, 0.0, 0.0, 1.0, 0.0]), &Variant::Italian.rules());
        let Reading::Probabilities(p) = obs.squares[0][6] else { panic!("probabilities expected") };
        assert_eq!(p[SquareClass::from_char('w').unwrap().index()], 1.0);
    }
}
