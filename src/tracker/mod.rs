//! The game tracker: turns observed board states into validated moves, as a referee would.
//!
//! This is the logic of the seed's section 2.2 (`SPEC.md` §1, "The validating logic"), made to
//! survive a real camera and real hands. It is pure: no camera, no files; `boardwatch track`
//! (`cli/track.rs`) feeds it JSON lines.
//!
//! # Input
//!
//! [`Tracker::observe`] takes an [`Observation`]: an 8x8 grid of square readings in board
//! coordinates (row 0 = the edge where Black's men start, column 0 on the left of a diagram drawn
//! with White at the bottom; light squares are ignored). A reading is a hard class, unknown, or a
//! probability per class in the fixed order `[".", "b", "w", "B", "W"]` (empty, Black man, White
//! man, Black king, White king: the order of the vision classifier); probabilities summing to
//! less than 1 leave the rest to "none of these" (a hand), which counts for no class. The seed's
//! palette maps red/blue to `b`/`B` and yellow/green to `w`/`W`. With [`KingStyle::Stacked`]
//! (two-colour sets, kings stacked) kings look like men: `B`/`W` readings count as `b`/`w` and
//! the tracker knows the kings from the game.
//!
//! As a JSON line (see [`observation::parse_input_line`]):
//! `{"grid": ["........", ...8 rows], "t": 12.5, "probs": [[null, [0.05, 0.9, 0.0, 0.05, 0.0], ...8], ...8]}`
//! where `grid` uses `.`, `b`, `B`, `w`, `W` and `?` (unknown), `t` is seconds, and `probs`, if
//! present, gives per square either `null` (use the grid's character), an array of 5 numbers in
//! the order above (a sixth: the "none of these" share), or an object such as
//! `{".": 0.1, "b": 0.85, "?": 0.05}`. Operator commands are lines
//! `{"op": "init" | "init_and_valid" | "set_start" (+ "to_move": 1|2, "fen") | "back" | "clear"
//! | "draw" | "resign" (+ "player": 1|2) | "result" (+ "result": "1-0") | "confirm" | "reject"}`.
//!
//! # What it does
//!
//! It keeps the last valid position and answers every *new* board state (a repeated one is
//! ignored, as in the seed) with events ([`Event`], see [`events`] for the lines and fields):
//!
//! - Every state the tracker is ready to see is enumerated ([`candidates`]): the board unchanged,
//!   each legal move complete (capturing is compulsory, the variant's precedence rules apply), and
//!   every partial state of a move in progress: the piece lifted or standing on any landing
//!   square, captured pieces still there or taken off one at a time, before or after the piece
//!   moved, a man on the last row not yet swapped for its king piece. Partial states never raise
//!   an error; each newly visible jump of a capture is logged `Capture success`.
//! - Each candidate is scored by likelihood ([`scoring`]); the best is accepted only when it
//!   clearly wins (about 20:1 over any state that would change the game differently), otherwise
//!   the tracker reports `uncertain` and waits. A misread square the reading is less sure of than
//!   that can at worst make it wait; a hard grid character that contradicts every candidate is an
//!   error, as in the seed.
//! - A complete move is recorded once, when its final state is seen (or, if the camera missed
//!   it, when the opponent's answer shows it). Until the opponent starts answering it can still
//!   be corrected (a king set down and slid on): the record entry is replaced.
//! - A board that no single move explains may show several plies at once (the camera missed a
//!   finished state): every sequence of up to four legal plies is tried (`Tracker::infer_plies`),
//!   and a clear winner is recorded ply by ply, the unseen plies marked `inferred`.
//! - A board nothing explains is an error (`Obligatory Capture` when a capture was due,
//!   `Invalid move` otherwise), never a guess; the tracker then holds until the board is back in
//!   the last valid state (`Now is OK`). The operator can instead set the board as a new start
//!   (a `/FEN "..."/` setup in the record) and the game goes on.
//! - Colour-coded kings: the crowning swap is its own event (`Changed pawn to dame`); the opponent
//!   moving while the man still waits on the last row is `Failed Change pawn to dame`. Stacked
//!   kings: the tracker crowns by itself.
//! - When the side to move has no legal move (or no pieces) the game is over; draws by
//!   agreement and resignations come from the operator.
//!
//! Players are numbered as in the seed: Player1 = Black (red), Player2 = White (yellow), in
//! every variant.

pub mod candidates;
pub mod events;
pub mod observation;
pub mod record;
pub mod scoring;

use std::sync::Arc;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::draughts::bitboard::{bit, Squares, DARK};
use crate::draughts::fen::{to_fen, FenError};
use crate::draughts::movegen::{legal_moves, Move};
use crate::draughts::notation::{full_path_text, move_text, seen_at, square_name};
use crate::draughts::position::{Color, Position};
use crate::draughts::rules::{Rules, Variant};

use candidates::{enumerate, hidden_kings, merge_progress, Candidate, Look, Plan, Progress, Situation, Tentative};
pub use events::{ErrorKind, Event, EventKind};
pub use observation::{parse_input_line, parse_input_value, probabilities, Command, Input, Observation, Reading, SquareClass};
pub use record::{write_pdn, write_pdn_with_tags, TrackedGame, Outcome, RecordItem, TrackedMove};
use scoring::{decide, Decision, Evidence, Thresholds};

use events::{error_line, ok_line, player_number};

/// Whether kings can be told from men on the board.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KingStyle {
    /// Kings have their own colour (the seed: blue and green); a crowning is a swap of pieces.
    #[default]
    Visible,
    /// Kings are two men stacked and look like men from above.
    Stacked,
}

impl FromStr for KingStyle {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "visible" => Ok(KingStyle::Visible),
            "stacked" => Ok(KingStyle::Stacked),
            other => Err(format!("unknown king style `{other}` (expected visible or stacked)")),
        }
    }
}

/// The most plies one reading may show (see `Tracker::infer_plies`).
const MAX_INFERRED_PLIES: usize = 4;

/// What each extra ply in one reading costs against a shorter story (a deficit, as `scoring`
/// counts them): plies the camera missed are the exception, and a flying king's move can be
/// told as two shorter moves around the opponent's, giving the same board one ply later. One
/// more unseen ply must be as much less likely as a rival outcome must be to be set aside.
const PLY_PRIOR: f32 = 3.0;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrackerConfig {
    pub variant: Variant,
    pub kings: KingStyle,
    pub thresholds: Thresholds,
    /// The chance that a hard grid character is wrong.
    pub hard_error: f32,
}

impl TrackerConfig {
    pub fn new(variant: Variant, kings: KingStyle) -> TrackerConfig {
        TrackerConfig { variant, kings, thresholds: Thresholds::default(), hard_error: 0.01 }
    }
}

impl Default for TrackerConfig {
    fn default() -> Self {
        TrackerConfig::new(Variant::default(), KingStyle::default())
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TrackerError {
    #[error("no board has been observed yet")]
    NoObservation,
    #[error("the board is not clear enough to set as the start: unclear squares {0}")]
    Unclear(String),
    #[error(transparent)]
    Fen(#[from] FenError),
    #[error("no unclear board is waiting for a decision")]
    NothingUncertain,
    #[error("no game is on")]
    NoGame,
    #[error("unknown result `{0}` (expected 1-0, 0-1 or 1/2-1/2)")]
    BadResult(String),
}

/// A move under way on the board.
#[derive(Clone, Debug)]
struct Pending {
    moves: Vec<Move>,
    /// The last jump already logged as `Capture success`.
    step_logged: u8,
}

/// After an error: what went wrong and where.
#[derive(Clone, Debug)]
struct Hold {
    changed: u64,
}

/// The game before a move, to undo it.
#[derive(Clone, Debug)]
struct Snapshot {
    pos: Position,
    uncrowned: u64,
    record_len: usize,
    over: bool,
    result: Option<Outcome>,
}

#[derive(Clone, Debug)]
struct Game {
    /// The last valid position.
    pos: Position,
    /// Colour-coded kings: where the last mover's man waits to be swapped for its king.
    uncrowned: u64,
    tentative: Option<Tentative>,
    pending: Option<Pending>,
    /// The board as last accepted (the position, or a partial state of a move in progress).
    accepted: Look,
    hold: Option<Hold>,
    /// The last observation was uncertain (reported once per run of them).
    uncertain: bool,
    history: Vec<Snapshot>,
    record: TrackedGame,
    over: bool,
    // Arc, not Rc: the daemon moves trackers between threads.
    candidates: Option<Arc<Vec<Candidate>>>,
}

impl Game {
    /// Go back to the state before the last accepted change; false when there is none.
    fn restore_last_snapshot(&mut self) -> bool {
        let Some(s) = self.history.pop() else { return false };
        self.pos = s.pos;
        self.uncrowned = s.uncrowned;
        self.record.items.truncate(s.record_len);
        self.over = s.over;
        self.record.result = s.result;
        true
    }
}

pub struct Tracker {
    config: TrackerConfig,
    rules: Rules,
    game: Option<Game>,
    finished: Vec<TrackedGame>,
    seq: u64,
    line_number: u32,
    last_observation: Option<Observation>,
    last_evidence: Option<Evidence>,
}

impl Tracker {
    /// A tracker with no game: call [`Tracker::init`] or [`Tracker::set_start_position`] first
    /// (observations before that are ignored, as the seed's logic waits for `InitBoard`).
    pub fn new(config: TrackerConfig) -> Tracker {
        Tracker {
            rules: config.variant.rules(),
            config,
            game: None,
            finished: Vec::new(),
            seq: 0,
            line_number: 0,
            last_observation: None,
            last_evidence: None,
        }
    }

    pub fn config(&self) -> &TrackerConfig {
        &self.config
    }

    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// The last valid position, if a game is on.
    pub fn position(&self) -> Option<&Position> {
        self.game.as_ref().map(|g| &g.pos)
    }

    /// The current game's record.
    pub fn record(&self) -> Option<&TrackedGame> {
        self.game.as_ref().map(|g| &g.record)
    }

    /// Whether the tracker is holding after an error.
    pub fn is_holding(&self) -> bool {
        self.game.as_ref().is_some_and(|g| g.hold.is_some())
    }

    /// Every game so far: those ended by init or clear, then the current one.
    pub fn games(&self) -> Vec<TrackedGame> {
        let mut games = self.finished.clone();
        if let Some(g) = &self.game {
            if !g.record.is_empty() {
                games.push(g.record.clone());
            }
        }
        games
    }

    fn event(&mut self, t: Option<f64>, kind: EventKind, text: String) -> Event {
        self.seq += 1;
        self.line_number += 1;
        Event::new(self.seq, self.line_number, t, kind, text)
    }

    fn hidden(&self, g: &Game) -> u64 {
        hidden_kings(&g.pos, g.uncrowned, self.config.kings)
    }

    fn seen_names(&self, squares: u64) -> Vec<String> {
        seen_square_names(squares, &self.rules)
    }

    // ----- operator commands -----

    pub fn command(&mut self, command: &Command) -> Result<Vec<Event>, TrackerError> {
        Ok(match command {
            Command::Init => self.init(),
            Command::InitAndValid => self.init_and_valid(),
            Command::SetStart { to_move, fen: Some(fen) } => {
                let mut pos = crate::draughts::fen::parse_fen(fen, &self.rules)?;
                if let Some(side) = to_move {
                    pos.to_move = *side;
                }
                self.set_start_position(pos)
            }
            Command::SetStart { to_move, fen: None } => self.set_start(*to_move)?,
            Command::Back => self.back(),
            Command::Clear => self.clear(),
            Command::Draw => self.end_by_operator(Outcome::Draw),
            Command::Resign { side } => self.end_by_operator(Outcome::Win(side.opponent())),
            Command::Confirm => self.settle_uncertain(true)?,
            Command::Reject => self.settle_uncertain(false)?,
            Command::Result { pdn } => self.set_result(pdn)?,
        })
    }

    /// The operator decides an unclear board (after an `uncertain` event): `accept` takes the
    /// likeliest state as if it had clearly won; otherwise the reading is dropped and the tracker
    /// waits for the next board (the same board again stays ignored).
    pub fn settle_uncertain(&mut self, accept: bool) -> Result<Vec<Event>, TrackerError> {
        let waiting = self.game.as_ref().is_some_and(|g| g.uncertain && g.hold.is_none() && !g.over);
        let (Some(evidence), true) = (self.last_evidence.clone(), waiting) else {
            return Err(TrackerError::NothingUncertain);
        };
        let t = self.last_observation.as_ref().and_then(|o| o.t);
        let candidates = self.candidates();
        let Decision::Uncertain { best, .. } = decide(&evidence, &candidates, &self.config.thresholds) else {
            return Err(TrackerError::NothingUncertain);
        };
        self.game_mut().uncertain = false;
        let side = self.game.as_ref().expect("game").pos.to_move;
        let (kind, what) = if accept { (EventKind::Confirmed, "confirmed") } else { (EventKind::Rejected, "rejected") };
        let text = if accept { ok_line(side, "Reading confirmed") } else { format!("Wait: Player{}- Reading rejected", player_number(side)) };
        let mut e = self.event(t, kind, text);
        e.player = Some(player_number(side));
        e.detail = Some(format!("{} {what} by the operator", self.describe(&candidates[best].plan)));
        let mut events = vec![e];
        if accept {
            let progress = candidates[best].plan.progress.clone();
            self.apply(&candidates[best], progress, &evidence, t, &mut events);
        }
        Ok(events)
    }

    /// The operator enters the result (`1-0`, `0-1`, `1/2-1/2`; the first mover's score first).
    pub fn set_result(&mut self, pdn: &str) -> Result<Vec<Event>, TrackerError> {
        if self.game.is_none() {
            return Err(TrackerError::NoGame);
        }
        let first = self.rules.first_mover;
        let result = match pdn.trim() {
            "1-0" | "2-0" => Outcome::Win(first),
            "0-1" | "0-2" => Outcome::Win(first.opponent()),
            "1/2-1/2" | "1-1" | "draw" => Outcome::Draw,
            other => return Err(TrackerError::BadResult(other.to_string())),
        };
        let mut events = self.end_by_operator(result);
        for e in &mut events {
            e.detail = Some("result entered by the operator".into());
        }
        Ok(events)
    }

    /// Set up the standard start position and accept it: `Init Ready`.
    pub fn init(&mut self) -> Vec<Event> {
        let start = Position::start(&self.rules);
        vec![self.start_game(start, None)]
    }

    fn start_game(&mut self, pos: Position, setup_fen: Option<String>) -> Event {
        if let Some(old) = self.game.take() {
            if !old.record.is_empty() {
                self.finished.push(old.record);
            }
        }
        let hidden = hidden_kings(&pos, 0, self.config.kings);
        self.game = Some(Game {
            pos,
            uncrowned: 0,
            tentative: None,
            pending: None,
            accepted: Look::of(&pos, hidden),
            hold: None,
            uncertain: false,
            history: Vec::new(),
            record: TrackedGame::new(self.config.variant, setup_fen, pos.to_move),
            over: false,
            candidates: None,
        });
        self.last_evidence = None;
        tracing::debug!("Init new Board");
        tracing::debug!("Current player: {}", player_number(pos.to_move));
        // The seed's window starts again at line 1 with every init.
        self.line_number = 0;
        let mut e = self.event(None, EventKind::Init, "Init Ready".into());
        e.fen = Some(to_fen(&pos, &self.rules));
        e.current_player = Some(player_number(pos.to_move));
        e
    }

    /// Set up the standard start and check that the last observed board shows it:
    /// `Init Ready` + `InitAndValid Success`, or only `InitAndValid Failed`.
    pub fn init_and_valid(&mut self) -> Vec<Event> {
        let start = Position::start(&self.rules);
        let look = Look::of(&start, hidden_kings(&start, 0, self.config.kings));
        let margin = self.config.thresholds.margin;
        let wrong = match &self.last_observation {
            None => None,
            Some(obs) => {
                let ev = Evidence::new(obs, &self.rules, self.config.kings, self.config.hard_error);
                Some(
                    Squares(DARK)
                        .filter(|&sq| !ev.confident(sq, look.class_at(sq), margin))
                        .fold(0u64, |a, sq| a | bit(sq)),
                )
            }
        };
        let mut events = Vec::new();
        if wrong == Some(0) {
            events.push(self.start_game(start, None));
            let mut e = self.event(None, EventKind::InitAndValid, "InitAndValid Success".into());
            e.valid = Some(true);
            events.push(e);
        } else {
            let mut e = self.event(None, EventKind::InitAndValid, "InitAndValid Failed".into());
            e.valid = Some(false);
            match wrong {
                Some(squares) => e.changed = self.seen_names(squares),
                None => e.detail = Some("no board observed yet".into()),
            }
            events.push(e);
        }
        events
    }

    /// "Set as Init": accept the last observed board as the start, `to_move` (default: the
    /// variant's first mover) to move. Every playing square must be read clearly. With stacked
    /// kings every piece is taken for a man; give a FEN ([`Tracker::set_start_position`]) instead.
    pub fn set_start(&mut self, to_move: Option<Color>) -> Result<Vec<Event>, TrackerError> {
        let obs = self.last_observation.as_ref().ok_or(TrackerError::NoObservation)?;
        let ev = Evidence::new(obs, &self.rules, self.config.kings, self.config.hard_error);
        let mut pos = Position::empty(to_move.unwrap_or(self.rules.first_mover));
        let mut unclear = 0u64;
        for sq in Squares(DARK) {
            match ev.read(sq, self.config.thresholds.margin) {
                Some(class) => pos.set(sq, class.piece()),
                None => unclear |= bit(sq),
            }
        }
        if unclear != 0 {
            return Err(TrackerError::Unclear(self.seen_names(unclear).join(" ")));
        }
        Ok(self.set_start_position(pos))
    }

    /// Accept `pos` as the start. In the middle of a game the game goes on from it, with a
    /// `/FEN "..."/` setup in the record; otherwise it is the game's start (`FEN` tag).
    pub fn set_start_position(&mut self, pos: Position) -> Vec<Event> {
        let fen = to_fen(&pos, &self.rules);
        let mid_game = self.game.as_ref().is_some_and(|g| !g.record.items.is_empty() && !g.over);
        if !mid_game {
            let setup = (pos != Position::start(&self.rules)).then(|| fen.clone());
            return vec![self.start_game(pos, setup)];
        }
        let hidden = hidden_kings(&pos, 0, self.config.kings);
        let g = self.game.as_mut().expect("mid-game");
        g.record.items.push(RecordItem::Setup { fen: fen.clone() });
        g.pos = pos;
        g.uncrowned = 0;
        g.tentative = None;
        g.pending = None;
        g.hold = None;
        g.uncertain = false;
        g.history.clear();
        g.accepted = Look::of(&pos, hidden);
        g.candidates = None;
        self.last_evidence = None;
        self.line_number = 0;
        let mut e = self.event(None, EventKind::Init, "Init Ready".into());
        e.fen = Some(fen);
        e.current_player = Some(player_number(pos.to_move));
        vec![e]
    }

    /// Undo the last accepted state: a move in progress, or else the last recorded move. Any
    /// error hold ends; the next board is judged against the restored state.
    pub fn back(&mut self) -> Vec<Event> {
        let Some(g) = self.game.as_mut() else { return Vec::new() };
        g.hold = None;
        g.uncertain = false;
        if g.pending.take().is_none() {
            if g.restore_last_snapshot() {
                g.tentative = None;
            }
        }
        g.candidates = None;
        let (pos, uncrowned) = (g.pos, g.uncrowned);
        let accepted = Look::of(&pos, hidden_kings(&pos, uncrowned, self.config.kings));
        self.game.as_mut().expect("game").accepted = accepted;
        self.last_evidence = None;
        let mut e = self.event(None, EventKind::Back, format!("Back: Player{} to move", player_number(pos.to_move)));
        e.fen = Some(to_fen(&pos, &self.rules));
        e.current_player = Some(player_number(pos.to_move));
        vec![e]
    }

    /// Forget the game: nothing is tracked until the next init.
    pub fn clear(&mut self) -> Vec<Event> {
        if let Some(old) = self.game.take() {
            if !old.record.is_empty() {
                self.finished.push(old.record);
            }
        }
        self.last_evidence = None;
        vec![self.event(None, EventKind::Cleared, "Clear".into())]
    }

    fn end_by_operator(&mut self, result: Outcome) -> Vec<Event> {
        let Some(g) = self.game.as_mut() else { return Vec::new() };
        g.over = true;
        g.record.result = Some(result);
        let detail = match result {
            Outcome::Draw => "draw by agreement".to_string(),
            Outcome::Win(side) => format!("Player{} resigned", player_number(side.opponent())),
        };
        vec![self.game_over_event(None, result, detail)]
    }

    fn game_over_event(&mut self, t: Option<f64>, result: Outcome, detail: String) -> Event {
        let text = match result {
            Outcome::Draw => "Game over: Draw".to_string(),
            Outcome::Win(side) => format!("Game over: Player{} wins", player_number(side)),
        };
        let mut e = self.event(t, EventKind::GameOver, text);
        e.result = Some(result.pdn(self.config.variant).to_string());
        if let Outcome::Win(side) = result {
            e.player = Some(player_number(side));
        }
        e.detail = Some(detail);
        e
    }

    // ----- observations -----

    /// Judge one observed board state.
    pub fn observe(&mut self, obs: &Observation) -> Vec<Event> {
        self.last_observation = Some(obs.clone());
        let evidence = Evidence::new(obs, &self.rules, self.config.kings, self.config.hard_error);
        // As the seed's `BoardIsNew`: the same board again says nothing new.
        if self.last_evidence.as_ref() == Some(&evidence) {
            return Vec::new();
        }
        self.last_evidence = Some(evidence.clone());
        let mut events = Vec::new();
        let Some(g) = self.game.as_ref() else { return events };
        if g.over && g.tentative.is_none() {
            return events;
        }
        if g.hold.is_some() {
            self.try_recover(&evidence, obs.t, &mut events);
            return events;
        }
        let candidates = self.candidates();
        let decision = decide(&evidence, &candidates, &self.config.thresholds);
        if self.game.as_ref().is_some_and(|g| g.over) {
            // The game ended with a move that may still be corrected (a king set down short of
            // its square): only a correction counts; anything else is the board being cleared.
            if let Decision::Accept { best, .. } = decision {
                if candidates[best].plan.revise.is_some() {
                    self.apply(&candidates[best], None, &evidence, obs.t, &mut events);
                }
            }
            return events;
        }
        match decision {
            Decision::Accept { best, near } => {
                self.game_mut().uncertain = false;
                // A look shared by several states: log only as far as all of them agree.
                let progress = near.iter().fold(candidates[best].plan.progress.clone(), |acc, &i| {
                    merge_progress(acc, candidates[i].plan.progress.clone())
                });
                self.apply(&candidates[best], progress, &evidence, obs.t, &mut events);
            }
            Decision::Uncertain { best, rival, deficit, gap } => {
                let g = self.game_mut();
                if !g.uncertain {
                    g.uncertain = true;
                    let side = g.pos.to_move;
                    let detail = match rival {
                        Some(r) => format!(
                            "{} or {} (likelihood ratio {:.1})",
                            self.describe(&candidates[best].plan),
                            self.describe(&candidates[r].plan),
                            gap.exp()
                        ),
                        None => format!(
                            "{} fits only loosely (deficit {deficit:.1})",
                            self.describe(&candidates[best].plan)
                        ),
                    };
                    let mut e = self.event(
                        obs.t,
                        EventKind::Uncertain,
                        format!("Wait: Player{}- Board unclear", player_number(side)),
                    );
                    e.player = Some(player_number(side));
                    e.detail = Some(detail);
                    events.push(e);
                }
            }
            Decision::Unexplained { .. } if self.infer_plies(&evidence, obs.t, &mut events) => {
                self.game_mut().uncertain = false;
            }
            Decision::Unexplained { .. } => {
                self.game_mut().uncertain = false;
                let g = self.game.as_ref().expect("game");
                let side = g.pos.to_move;
                let capture_due = legal_moves(&g.pos, &self.rules).iter().any(Move::is_capture);
                let kind = if capture_due { ErrorKind::ObligatoryCapture } else { ErrorKind::InvalidMove };
                self.raise(kind, side, &evidence, obs.t, &mut events);
            }
        }
        events
    }

    /// A board no move (or move under way) explains may show several plies at once: the camera
    /// missed a finished state (the next hand came in before the board was still). Every
    /// sequence of 2..=`MAX_INFERRED_PLIES` legal plies from the last valid position is scored
    /// like any candidate, plus `PLY_PRIOR` per extra ply; a clear winner (explaining the board,
    /// and `margin` ahead of every other resulting position) is recorded ply by ply, all but the
    /// last marked as inferred, and the game goes on. Otherwise nothing changes (false).
    fn infer_plies(&mut self, evidence: &Evidence, t: Option<f64>, events: &mut Vec<Event>) -> bool {
        let Some(g) = self.game.as_ref() else { return false };
        // Only from a settled position: no move under way, no king waiting to be swapped.
        if g.over || g.pending.is_some() || g.uncrowned != 0 {
            return false;
        }
        let (rules, kings, th) = (self.rules, self.config.kings, self.config.thresholds);
        // Best score per resulting position (the same position by other orders is one outcome).
        // (score, deficit, plies)
        let mut outcomes: std::collections::HashMap<Position, (f32, f32, Vec<Move>)> = std::collections::HashMap::new();
        let mut seen: std::collections::HashSet<(Position, usize)> = std::collections::HashSet::new();
        let mut stack: Vec<(Position, Vec<Move>)> = vec![(g.pos, Vec::new())];
        while let Some((pos, line)) = stack.pop() {
            if line.len() >= 2 {
                let deficit = evidence.deficit(&Look::of(&pos, hidden_kings(&pos, 0, kings)));
                let score = deficit + PLY_PRIOR * (line.len() - 1) as f32;
                let entry = outcomes.entry(pos).or_insert((f32::MAX, f32::MAX, Vec::new()));
                if score < entry.0 {
                    *entry = (score, deficit, line.clone());
                }
            }
            if line.len() == MAX_INFERRED_PLIES || !seen.insert((pos, line.len())) {
                continue;
            }
            for m in legal_moves(&pos, &rules) {
                let mut next = line.clone();
                next.push(m);
                stack.push((pos.play(&m), next));
            }
        }
        let mut ranked: Vec<(f32, f32, Vec<Move>)> = outcomes.into_values().collect();
        ranked.sort_by(|a, b| a.0.total_cmp(&b.0));
        let Some((best, deficit, line)) = ranked.first().cloned() else { return false };
        let rival = ranked.get(1).map_or(f32::MAX, |r| r.0);
        if deficit > th.explain || rival - best < th.margin {
            return false;
        }
        let last = line.len() - 1;
        for (i, m) in line.into_iter().enumerate() {
            let mut ply_events = Vec::new();
            self.commit(m, true, EventKind::Move, t, &mut ply_events);
            if i < last {
                if let Some(RecordItem::Move(recorded)) = self.game_mut().record.items.last_mut() {
                    recorded.inferred = true;
                }
                for e in ply_events.iter_mut().filter(|e| e.kind == EventKind::Move) {
                    e.inferred = Some(true);
                    e.detail = Some("not seen on the board: a later board shows it was made".into());
                }
            }
            events.extend(ply_events);
            if self.game.as_ref().is_some_and(|g| g.over) {
                break;
            }
        }
        let g = self.game_mut();
        g.accepted = Look::of(&g.pos, hidden_kings(&g.pos, 0, kings));
        true
    }

    fn game_mut(&mut self) -> &mut Game {
        self.game.as_mut().expect("a game is on")
    }

    fn candidates(&mut self) -> Arc<Vec<Candidate>> {
        let g = self.game.as_ref().expect("a game is on");
        if let Some(c) = &g.candidates {
            return c.clone();
        }
        let pending: &[Move] = g.pending.as_ref().map_or(&[], |p| &p.moves);
        let situation = Situation {
            rules: &self.rules,
            kings: self.config.kings,
            pos: &g.pos,
            uncrowned: g.uncrowned,
            tentative: g.tentative.as_ref(),
            pending,
        };
        let list = Arc::new(enumerate(&situation));
        self.game_mut().candidates = Some(list.clone());
        list
    }

    fn describe(&self, plan: &Plan) -> String {
        let mut parts = Vec::new();
        if plan.crown {
            parts.push("crowning".to_string());
        }
        if let Some((m, _)) = &plan.revise {
            parts.push(format!("correction to {}", full_path_text(m, &self.rules)));
        }
        for (m, _) in &plan.commits {
            parts.push(full_path_text(m, &self.rules));
        }
        if plan.failed_crown {
            parts.push("a move before crowning".to_string());
        }
        if parts.is_empty() {
            parts.push(if plan.progress.is_some() { "a move in progress" } else { "no change" }.to_string());
        }
        parts.join(" + ")
    }

    fn raise(&mut self, kind: ErrorKind, side: Color, evidence: &Evidence, t: Option<f64>, events: &mut Vec<Event>) {
        let margin = self.config.thresholds.margin;
        let g = self.game.as_ref().expect("game");
        let changed = evidence.changed_from(&g.accepted, margin);
        let to_move = g.pos.to_move;
        let names = self.seen_names(changed);
        // The seed's diagnostic log: the error, then the changed squares.
        tracing::info!("{}", kind.seed_text());
        for name in &names {
            tracing::info!("{name}");
        }
        self.game_mut().hold = Some(Hold { changed });
        let mut e = self.event(t, EventKind::Error, error_line(side, kind));
        e.player = Some(player_number(side));
        e.error = Some(kind);
        e.changed = names;
        e.current_player = Some(player_number(to_move));
        events.push(e);
    }

    /// After an error: back in the last accepted state (or the last position) means `Now is OK`.
    fn try_recover(&mut self, evidence: &Evidence, t: Option<f64>, events: &mut Vec<Event>) {
        let th = self.config.thresholds;
        let g = self.game.as_ref().expect("game");
        let base = Look::of(&g.pos, self.hidden(g));
        let changed = g.hold.as_ref().map_or(0, |h| h.changed);
        let back_to = [g.accepted, base].into_iter().find(|target| {
            evidence.deficit(target) <= th.explain
                && Squares(changed).all(|sq| evidence.confident(sq, target.class_at(sq), th.margin))
        });
        let Some(target) = back_to else { return };
        let g = self.game_mut();
        g.hold = None;
        if target != g.accepted {
            g.accepted = target;
            g.pending = None;
            g.candidates = None;
        }
        let to_move = g.pos.to_move;
        tracing::debug!("Current player: {}", player_number(to_move));
        let mut e = self.event(t, EventKind::Recovered, "Now is OK".into());
        e.current_player = Some(player_number(to_move));
        events.push(e);
    }

    fn apply(
        &mut self,
        cand: &Candidate,
        progress: Option<Progress>,
        evidence: &Evidence,
        t: Option<f64>,
        events: &mut Vec<Event>,
    ) {
        let plan = &cand.plan;
        if plan.failed_crown {
            let crowning_side = self.game.as_ref().expect("game").pos.to_move.opponent();
            self.raise(ErrorKind::FailedCrowning, crowning_side, evidence, t, events);
            return;
        }
        if plan.crown {
            self.crown_swapped(t, events);
        }
        if let Some((m, swapped)) = plan.revise {
            self.undo_tentative();
            self.commit(m, swapped, EventKind::Revised, t, events);
        }
        for &(m, swapped) in &plan.commits {
            self.commit(m, swapped, EventKind::Move, t, events);
        }
        match progress {
            Some(p) => self.advance(p, t, events),
            None if plan.is_quiet() => {
                // The board is back to the position: nothing under way any more.
                let g = self.game_mut();
                if g.pending.take().is_some() {
                    g.candidates = None;
                }
            }
            None => {}
        }
        self.game_mut().accepted = cand.look;
    }

    fn crown_swapped(&mut self, t: Option<f64>, events: &mut Vec<Event>) {
        let g = self.game_mut();
        let side = g.pos.to_move.opponent();
        g.uncrowned = 0;
        g.candidates = None;
        let pos = g.pos;
        let mut e = self.event(t, EventKind::Crowned, ok_line(side, "Changed pawn to dame"));
        e.player = Some(player_number(side));
        e.crowned = Some(true);
        e.fen = Some(to_fen(&pos, &self.rules));
        e.current_player = Some(player_number(pos.to_move));
        events.push(e);
    }

    fn undo_tentative(&mut self) {
        let g = self.game_mut();
        g.tentative = None;
        g.restore_last_snapshot();
    }

    fn commit(&mut self, m: Move, swapped: bool, kind: EventKind, t: Option<f64>, events: &mut Vec<Event>) {
        let rules = self.rules;
        let kings = self.config.kings;
        let g = self.game.as_mut().expect("game");
        let before = g.pos;
        let legal = legal_moves(&before, &rules);
        let text = move_text(&m, &legal, &rules);
        let path = full_path_text(&m, &rules);
        let side = before.to_move;
        g.history.push(Snapshot {
            pos: before,
            uncrowned: g.uncrowned,
            record_len: g.record.items.len(),
            over: g.over,
            result: g.record.result,
        });
        let before_hidden = hidden_kings(&before, g.uncrowned, kings);
        g.pos = before.play(&m);
        g.uncrowned = if kings == KingStyle::Visible && m.crowns && !swapped { bit(m.to) } else { 0 };
        g.tentative = Some(Tentative { before, before_hidden, played: m });
        g.pending = None;
        g.candidates = None;
        let pos = g.pos;
        let fen = to_fen(&pos, &rules);
        g.record.items.push(RecordItem::Move(TrackedMove {
            side,
            text: text.clone(),
            path: path.clone(),
            fen_after: fen.clone(),
            t,
            inferred: false,
        }));
        let line = match (kind, m.is_capture()) {
            (EventKind::Revised, _) => ok_line(side, "Move corrected"),
            (_, true) => ok_line(side, "Capture success"),
            (_, false) => ok_line(side, "Move Success"),
        };
        tracing::debug!("Current player: {}", player_number(pos.to_move));
        let mut e = self.event(t, kind, line);
        e.player = Some(player_number(side));
        e.mv = Some(text);
        e.path = Some(path);
        e.captured = m.captured_in_order().into_iter().map(|sq| square_name(sq, &rules)).collect();
        e.crowned = Some(m.crowns);
        e.fen = Some(fen);
        e.current_player = Some(player_number(pos.to_move));
        events.push(e);
        if kings == KingStyle::Visible && m.crowns && swapped {
            // The king piece was already put down: the swap is logged as the seed does.
            let mut c = self.event(t, EventKind::Crowned, ok_line(side, "Changed pawn to dame"));
            c.player = Some(player_number(side));
            c.crowned = Some(true);
            c.fen = Some(to_fen(&pos, &rules));
            c.current_player = Some(player_number(pos.to_move));
            events.push(c);
        }
        if !pos.has_legal_move(&rules) {
            let result = Outcome::Win(side);
            let g = self.game_mut();
            g.over = true;
            g.record.result = Some(result);
            let who = player_number(pos.to_move);
            let detail = if pos.pieces(pos.to_move) == 0 {
                format!("Player{who} has no pieces left")
            } else {
                format!("Player{who} has no legal move")
            };
            let e = self.game_over_event(t, result, detail);
            events.push(e);
        }
    }

    fn advance(&mut self, p: Progress, t: Option<f64>, events: &mut Vec<Event>) {
        let rules = self.rules;
        let g = self.game_mut();
        if p.moves.is_empty() {
            return; // only a correction of the last move under way
        }
        if !p.revising {
            // The side to move has started: the last move stands.
            if g.tentative.take().is_some() {
                g.candidates = None;
            }
        }
        let same_move =
            g.pending.as_ref().is_some_and(|q| q.moves.iter().any(|m| p.moves.iter().any(|n| n.same_effect(m))));
        let logged = if same_move { g.pending.as_ref().map_or(0, |q| q.step_logged) } else { 0 };
        // The last jump is logged with the complete move, once the captured pieces are gone.
        let last_jump = p.moves.iter().map(|m| m.capture_count() as u8).min().unwrap_or(0);
        let new_step = p.step > logged && p.step < last_jump;
        let changed_moves = !g.pending.as_ref().is_some_and(|q| {
            q.moves.len() == p.moves.len() && q.moves.iter().zip(&p.moves).all(|(a, b)| a.same_effect(b))
        });
        if changed_moves {
            g.candidates = None;
        }
        g.pending = Some(Pending { moves: p.moves.clone(), step_logged: if new_step { p.step } else { logged } });
        if new_step {
            let side = g.pos.to_move;
            let sep = rules.capture_separator.to_string();
            let path: Vec<String> = p.path.iter().map(|&sq| square_name(sq, &rules)).collect();
            let mut e = self.event(t, EventKind::CaptureStep, ok_line(side, "Capture success"));
            e.player = Some(player_number(side));
            e.path = Some(path.join(&sep));
            e.captured = p.captured.iter().map(|&sq| square_name(sq, &rules)).collect();
            e.current_player = Some(player_number(side));
            events.push(e);
        }
    }
}

/// The squares as `[row][col]` in board coordinates (for messages about a set of squares).
pub fn seen_square_names(squares: u64, rules: &Rules) -> Vec<String> {
    let mut list: Vec<(u8, u8)> = Squares(squares).map(|sq| seen_at(sq, rules)).collect();
    list.sort();
    list.into_iter().map(|(r, c)| format!("[{r}][{c}]")).collect()
}
