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
//! | "draw" | "resign" (+ "player": 1|2) | "result" (+ "result": "1-0") | "confirm" | "reject"
//! | "referee" (+ "strict": true|false)}`.
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
//! - A board seen but not yet still (`Observation::glimpse`) decides nothing: it is remembered,
//!   and when a later board shows several plies at once, their order (and the choice between
//!   outcomes the board cannot tell apart) follows the boards seen on the way.
//! - A board that no single move explains may show several plies at once (the camera missed a
//!   finished state): every sequence of up to four legal plies is tried (`Tracker::find_story`),
//!   and a clear winner is recorded ply by ply, the unseen plies marked `inferred`, once the
//!   board has stayed `infer_after` seconds (1 by default; at once for untimed observations), so
//!   that a burst of misreads that happens to look like a few moves never enters the record;
//!   at once too when every ply but the last was glimpsed on the way. When more plies than four
//!   were missed (a loaded machine drops the frames of still boards), the glimpses are followed
//!   ply by ply (`Tracker::line_on_the_way`), each counting only where it reads every square its
//!   ply changed, so that a hand carrying a man is no ply.
//! - A board nothing explains is first taken for a misread (`uncertain`); if it stays
//!   `error_after` seconds (3 by default) it is an error (`Obligatory Capture` when a capture was
//!   due, `Invalid move` otherwise), never a guess. The tracker then holds until the board is back
//!   in the last valid state (`Now is OK`) or shows a position clearly reached from it by up to
//!   four legal plies (`Now is OK: record resynchronised`, the plies recorded): a misread or a
//!   taken-back move never stops the record for the rest of the game. The operator can instead
//!   set the board as a new start (a `/FEN "..."/` setup in the record) and the game goes on.
//! - Strict mode ([`TrackerConfig::strict`]) is the original program's referee, for teaching:
//!   errors at once, no plies inferred, and only the last valid state ends an error.
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

use std::collections::{HashMap, VecDeque};
use std::str::FromStr;
use std::sync::Arc;

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

/// The most plies one reading may show (see `Tracker::find_story`).
const MAX_INFERRED_PLIES: usize = 4;

/// How many lines to the same board are kept to name a ply's alternatives.
const MAX_ALTERNATIVE_LINES: usize = 8;

/// What each extra ply in one reading costs against a shorter story (a deficit, as `scoring`
/// counts them): plies the camera missed are the exception, and a flying king's move can be
/// told as two shorter moves around the opponent's, giving the same board one ply later. One
/// more unseen ply must be as much less likely as a rival outcome must be to be set aside.
const PLY_PRIOR: f32 = 3.0;

/// How long (seconds of observation time) a board that no legal story explains must stay before
/// it is an error, unless configured otherwise: long enough for a misread of a second or two to
/// come right, short enough for a referee.
pub const DEFAULT_ERROR_AFTER: f64 = 3.0;

/// How long (seconds) a board that only several plies explain must stay before they are
/// recorded: a camera hands a still board on again every half second while the tracker waits,
/// and a burst of misreads does not stay.
pub const DEFAULT_INFER_AFTER: f64 = 1.0;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrackerConfig {
    pub variant: Variant,
    pub kings: KingStyle,
    pub thresholds: Thresholds,
    /// The chance that a hard grid character is wrong.
    pub hard_error: f32,
    /// The original program's referee, for teaching: a board nothing explains is an error at
    /// once, several plies in one reading are not inferred, and after an error only the last
    /// valid position ends the hold.
    pub strict: bool,
    /// Tolerant mode: a board no legal sequence explains is an error only once it has stayed this
    /// many seconds (observations without a time count as one second apart); until then it is
    /// taken for a misread. 0 raises at once (but still resynchronises).
    pub error_after: f64,
    /// Tolerant mode: seconds a board that only several plies explain must stay before they are
    /// recorded. Observations without a time are taken as still boards: at once.
    pub infer_after: f64,
}

impl TrackerConfig {
    pub fn new(variant: Variant, kings: KingStyle) -> TrackerConfig {
        TrackerConfig {
            variant,
            kings,
            thresholds: Thresholds::default(),
            hard_error: 0.01,
            strict: false,
            error_after: DEFAULT_ERROR_AFTER,
            infer_after: DEFAULT_INFER_AFTER,
        }
    }

    /// The same, as the original program's strict referee.
    pub fn strict(self) -> TrackerConfig {
        TrackerConfig { strict: true, ..self }
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

/// A board no legal story explains, not yet an error (tolerant mode): it becomes one when it has
/// stayed `error_after` seconds; any board that a legal story explains drops it.
#[derive(Clone, Debug)]
struct Suspect {
    /// The squares read confidently, and as what: the same board read again keeps the clock.
    reads: [Option<SquareClass>; 64],
    /// When it was first seen (observation time, or the reading count for untimed input).
    since: f64,
    evidence: Evidence,
    kind: ErrorKind,
}

/// A board that only several plies explain, not yet taken (tolerant mode): its plies are
/// recorded once it has stayed `infer_after` seconds, or when a later board shows them continued;
/// so a burst of misreads that happens to look like a few moves never enters the record, while a
/// board that stays only a moment before the next hand comes in still counts.
#[derive(Clone, Debug)]
struct PendingStory {
    reads: [Option<SquareClass>; 64],
    since: f64,
    story: Story,
}

/// Plies that explain a board together (`Tracker::find_story`), with, per ply, the other moves
/// that give the same board (the board cannot tell them apart).
#[derive(Clone, Debug)]
struct Story {
    line: Vec<Move>,
    alternatives: Vec<Vec<String>>,
}

impl Story {
    /// Whether this story is `earlier` with more plies after it (the same moves first).
    fn continues(&self, earlier: &Story) -> bool {
        self.line.len() > earlier.line.len() && earlier.line.iter().zip(&self.line).all(|(a, b)| a.same_effect(b))
    }
}

/// What a board that no single move explains is, as far as plies go.
enum StoryCheck {
    /// Several plies explain it, and it has stayed (or carries no time): take them.
    Ready(Story),
    /// Several plies explain it; wait to see it stay.
    Pending,
    /// No line of plies explains it.
    None,
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
    /// When the run of uncertain observations began (the tracker's clock).
    uncertain_since: Option<f64>,
    history: Vec<Snapshot>,
    record: TrackedGame,
    over: bool,
    /// The time of the game's first observation (the start of its first move's time).
    started_t: Option<f64>,
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
    /// The last finished games (every one unless `kept_games` bounds them: the daemon keeps
    /// only a few, as they are on disk and a board runs for months).
    finished: VecDeque<TrackedGame>,
    /// Games finished since the tracker began, including those no longer kept.
    finished_count: usize,
    kept_games: usize,
    seq: u64,
    line_number: u32,
    last_observation: Option<Observation>,
    last_evidence: Option<Evidence>,
    suspect: Option<Suspect>,
    story: Option<PendingStory>,
    /// The boards seen since the last valid position, to order the plies of a story.
    on_the_way: OnTheWay,
    /// The clock of untimed observations: one second per observation.
    readings: u64,
    /// The round's tags (`Command::Tags`): every game started from now on gets them.
    round_tags: Vec<(String, String)>,
    /// The time of the last still observation (its `t`, else one second per reading).
    clock: f64,
}

/// The boards seen since the last valid position, in order, glimpses included: when a board
/// shows several plies at once and they could have been made in more than one order, the
/// order these boards passed through is the one recorded (`Tracker::find_story`).
#[derive(Clone, Debug, Default)]
struct OnTheWay {
    from: Option<Position>,
    boards: Vec<Evidence>,
}

/// At most this many boards are kept on the way: when more come (a long wait over a hand),
/// every other one is dropped, so that the kept ones still span the whole way.
const MAX_BOARDS_ON_THE_WAY: usize = 48;

impl OnTheWay {
    /// Remember `board`, seen while `from` was the last valid position.
    fn remember(&mut self, from: &Position, board: &Evidence) {
        if self.from.as_ref() != Some(from) {
            self.from = Some(*from);
            self.boards.clear();
        }
        if self.boards.last() == Some(board) {
            return;
        }
        if self.boards.len() == MAX_BOARDS_ON_THE_WAY {
            let mut i = 0;
            self.boards.retain(|_| {
                i += 1;
                i % 2 == 0
            });
        }
        self.boards.push(board.clone());
    }

    /// The boards seen while `from` was the last valid position (none if it no longer is).
    fn boards_from(&self, from: &Position) -> &[Evidence] {
        if self.from.as_ref() == Some(from) { &self.boards } else { &[] }
    }
}

/// How badly `boards`, in order, fit the line of plies `line` from `from`: the best assignment of
/// each board to a position along the line (never going back), summed deficits.
fn misfit_of(boards: &[Evidence], from: &Position, line: &[Move], kings: KingStyle) -> f32 {
    let mut positions = vec![*from];
    for m in line {
        let next = positions.last().expect("one at least").play(m);
        positions.push(next);
    }
    let looks: Vec<Look> = positions.iter().map(|p| Look::of(p, hidden_kings(p, 0, kings))).collect();
    // best[k]: the least misfit of the boards so far, the last one at position k.
    let mut best = vec![0f32; looks.len()];
    for board in boards {
        let mut so_far = f32::MAX;
        for (k, look) in looks.iter().enumerate() {
            so_far = so_far.min(best[k]);
            best[k] = so_far + board.deficit(look);
        }
    }
    best.into_iter().fold(f32::MAX, f32::min)
}

impl Tracker {
    /// A tracker with no game: call [`Tracker::init`] or [`Tracker::set_start_position`] first
    /// (observations before that are ignored, as the seed's logic waits for `InitBoard`).
    pub fn new(config: TrackerConfig) -> Tracker {
        Tracker {
            rules: config.variant.rules(),
            config,
            game: None,
            finished: VecDeque::new(),
            finished_count: 0,
            kept_games: usize::MAX,
            seq: 0,
            line_number: 0,
            last_observation: None,
            last_evidence: None,
            suspect: None,
            story: None,
            on_the_way: OnTheWay::default(),
            readings: 0,
            round_tags: Vec::new(),
            clock: 0.0,
        }
    }

    pub fn config(&self) -> &TrackerConfig {
        &self.config
    }

    /// The round's tags the games get (see `Command::Tags`), sorted by name.
    pub fn round_tags(&self) -> &[(String, String)] {
        &self.round_tags
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

    /// The time each side used in the current game, from the moves' times.
    pub fn time_used(&self) -> Option<record::TimeUsed> {
        self.game.as_ref().and_then(|g| g.record.time_used(g.started_t))
    }

    /// How long (seconds of the observations' clock) the boards have stayed unclear without a
    /// break, when they are: none explained by a legal move (nor a few plies), and none stayed
    /// long enough to be an error. A game played on after the camera missed more than four
    /// plies looks like this: every board differs from the last, so none becomes an error, and
    /// only the operator can bring the record back.
    pub fn unclear_for(&self) -> Option<f64> {
        let g = self.game.as_ref()?;
        if !g.uncertain || g.hold.is_some() || g.over {
            return None;
        }
        g.uncertain_since.map(|since| (self.clock - since).max(0.0))
    }

    /// Whether the tracker is holding after an error.
    pub fn is_holding(&self) -> bool {
        self.game.as_ref().is_some_and(|g| g.hold.is_some())
    }

    /// Whether the board last seen is one no legal story explains, not yet an error: it will be
    /// one if it stays: feed the still board again as time passes (about every half second).
    pub fn is_suspecting(&self) -> bool {
        self.suspect.is_some() || self.story.is_some()
    }

    fn forget_suspicions(&mut self) {
        self.suspect = None;
        self.story = None;
    }

    /// Strict (the original program's referee) or tolerant mode; takes effect from the next
    /// observation.
    pub fn set_strict(&mut self, strict: bool) {
        self.config.strict = strict;
        self.forget_suspicions();
    }

    /// Keep only the last `n` finished games in memory (at least one, for `game.pdn` after a
    /// clear): [`Tracker::games`] then returns those and the current one.
    pub fn keeping_games(mut self, n: usize) -> Tracker {
        self.kept_games = n.max(1);
        self
    }

    /// Every game so far (the last ones kept, see [`Tracker::keeping_games`]): those ended by
    /// init or clear, then the current one.
    pub fn games(&self) -> Vec<TrackedGame> {
        let mut games: Vec<TrackedGame> = self.finished.iter().cloned().collect();
        if let Some(g) = &self.game {
            if !g.record.is_empty() {
                games.push(g.record.clone());
            }
        }
        games
    }

    /// How many games have finished (ended by init or clear), kept in memory or not.
    pub fn finished_count(&self) -> usize {
        self.finished_count
    }

    /// Finished game number `index` (from 0, in order), while it is kept in memory.
    pub fn finished_game(&self, index: usize) -> Option<&TrackedGame> {
        let first_kept = self.finished_count - self.finished.len();
        index.checked_sub(first_kept).and_then(|i| self.finished.get(i))
    }

    /// How many finished games are kept in memory.
    pub fn kept_finished(&self) -> usize {
        self.finished.len()
    }

    /// Every game so far, the current one included once it has a move or setup.
    pub fn games_count(&self) -> usize {
        self.finished_count + usize::from(self.game.as_ref().is_some_and(|g| !g.record.is_empty()))
    }

    fn finish_game(&mut self, record: TrackedGame) {
        if record.is_empty() {
            return;
        }
        self.finished.push_back(record);
        self.finished_count += 1;
        while self.finished.len() > self.kept_games {
            self.finished.pop_front();
        }
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
            Command::Referee { strict } => self.referee(*strict),
            Command::Tags { tags } => self.set_round_tags(tags),
        })
    }

    /// The round's tags: every game from now on takes them, and so does the current one unless
    /// it is over. A finished game keeps the round it was played in; it takes only corrections
    /// within that round (the same `Round`: a name mistyped, pairings typed late).
    pub fn set_round_tags(&mut self, tags: &[(String, String)]) -> Vec<Event> {
        let mut tags = tags.to_vec();
        tags.sort();
        self.round_tags = tags.clone();
        let round_of = |tags: &[(String, String)]| tags.iter().find(|(n, _)| n == "Round").map(|(_, v)| v.clone());
        let applies_now = match self.game.as_mut() {
            Some(g) if !g.over || (round_of(&g.record.tags).is_some() && round_of(&g.record.tags) == round_of(&tags)) => {
                g.record.tags = tags.clone();
                true
            }
            _ => false,
        };
        let listed = if tags.is_empty() {
            "none (the board's own)".to_string()
        } else {
            tags.iter().map(|(name, value)| format!("{name} {value}")).collect::<Vec<_>>().join(", ")
        };
        let t = self.last_observation.as_ref().and_then(|o| o.t);
        let mut e = self.event(t, EventKind::Tags, format!("Tags: {listed}"));
        e.detail = Some(if applies_now { "for this game and the next ones" } else { "from the next game on" }.into());
        vec![e]
    }

    /// Switch between the original program's strict referee and the tolerant one.
    pub fn referee(&mut self, strict: bool) -> Vec<Event> {
        self.set_strict(strict);
        let text = if strict { "Referee: strict (the original program's)" } else { "Referee: tolerant" };
        vec![self.event(None, EventKind::Referee, text.into())]
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
            self.finish_game(old.record);
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
            uncertain_since: None,
            history: Vec::new(),
            record: TrackedGame::new(self.config.variant, setup_fen, pos.to_move).with_tags(self.round_tags.clone()),
            over: false,
            candidates: None,
            started_t: self.last_observation.as_ref().and_then(|o| o.t),
        });
        self.last_evidence = None;
        self.forget_suspicions();
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
        self.forget_suspicions();
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
        self.forget_suspicions();
        let mut e = self.event(None, EventKind::Back, format!("Back: Player{} to move", player_number(pos.to_move)));
        e.fen = Some(to_fen(&pos, &self.rules));
        e.current_player = Some(player_number(pos.to_move));
        vec![e]
    }

    /// Forget the game: nothing is tracked until the next init.
    pub fn clear(&mut self) -> Vec<Event> {
        if let Some(old) = self.game.take() {
            self.finish_game(old.record);
        }
        self.last_evidence = None;
        self.forget_suspicions();
        vec![self.event(None, EventKind::Cleared, "Clear".into())]
    }

    fn end_by_operator(&mut self, result: Outcome) -> Vec<Event> {
        let Some(g) = self.game.as_mut() else { return Vec::new() };
        g.over = true;
        g.record.result = Some(result);
        // The arbiter's result is final: no reading may correct the last move any more (which
        // would take the game back to before it, result and all).
        g.tentative = None;
        g.pending = None;
        g.candidates = None;
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
        if obs.glimpse {
            // Nothing is decided from a board that is not still; it is only remembered.
            if let Some(g) = self.game.as_ref().filter(|g| !g.over) {
                let evidence = Evidence::new(obs, &self.rules, self.config.kings, self.config.hard_error);
                self.on_the_way.remember(&g.pos, &evidence);
            }
            return Vec::new();
        }
        let events = self.observe_still(obs);
        // Remembered after the decision: a story's own board is not a board on its way.
        if let (Some(g), Some(evidence)) = (self.game.as_ref(), self.last_evidence.as_ref()) {
            self.on_the_way.remember(&g.pos, evidence);
        }
        events
    }

    /// [`Tracker::observe`] for a board handed on as still.
    fn observe_still(&mut self, obs: &Observation) -> Vec<Event> {
        self.last_observation = Some(obs.clone());
        if let Some(game) = self.game.as_mut() {
            game.started_t = game.started_t.or(obs.t);
        }
        self.readings += 1;
        let now = obs.t.unwrap_or(self.readings as f64);
        self.clock = now;
        let evidence = Evidence::new(obs, &self.rules, self.config.kings, self.config.hard_error);
        let mut events = Vec::new();
        // As the seed's `BoardIsNew`: the same board again says nothing new, except that time
        // passed over a board nothing explains.
        if self.last_evidence.as_ref() == Some(&evidence) {
            if self.is_suspecting() {
                let reads = self.reads_of(&evidence);
                self.check_suspect(&reads, now, obs.t, &mut events);
            }
            return events;
        }
        self.last_evidence = Some(evidence.clone());
        let Some(g) = self.game.as_ref() else { return events };
        if g.over && g.tentative.is_none() {
            return events;
        }
        if g.hold.is_some() {
            if !self.try_recover(&evidence, obs.t, &mut events) && !self.config.strict {
                self.try_resync(&evidence, now, obs.t, &mut events);
            }
            return events;
        }
        let candidates = self.candidates();
        let decision = decide(&evidence, &candidates, &self.config.thresholds);
        if self.game.as_ref().is_some_and(|g| g.over) {
            // The game ended with a move that may still be corrected (a king set down short of
            // its square): only a correction counts; anything else is the board being cleared,
            // and from then on the result stands whatever the board shows.
            match decision {
                Decision::Accept { best, .. } if candidates[best].plan.revise.is_some() => {
                    self.apply(&candidates[best], None, &evidence, obs.t, &mut events);
                }
                Decision::Accept { best, .. } if candidates[best].plan.is_quiet() => {}
                _ => {
                    let g = self.game_mut();
                    g.tentative = None;
                    g.candidates = None;
                }
            }
            return events;
        }
        if !matches!(decision, Decision::Unexplained { .. }) {
            // A legal story explains the board: whatever looked wrong before was a misread.
            self.forget_suspicions();
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
                    g.uncertain_since = Some(now);
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
            Decision::Unexplained { .. } => {
                let g = self.game.as_ref().expect("game");
                let capture_due = legal_moves(&g.pos, &self.rules).iter().any(Move::is_capture);
                let kind = if capture_due { ErrorKind::ObligatoryCapture } else { ErrorKind::InvalidMove };
                if self.config.strict {
                    self.game_mut().uncertain = false;
                    let side = self.game.as_ref().expect("game").pos.to_move;
                    self.raise(kind, side, &evidence, obs.t, &mut events);
                } else {
                    match self.story_for(&evidence, now, obs.t) {
                        StoryCheck::Ready(story) => self.adopt_story(story, obs.t, &mut events),
                        StoryCheck::Pending => {}
                        StoryCheck::None => self.suspect_board(kind, evidence, now, obs.t, &mut events),
                    }
                }
            }
        }
        events
    }

    /// The squares `evidence` reads confidently, and as what (to tell the same board read again).
    fn reads_of(&self, evidence: &Evidence) -> [Option<SquareClass>; 64] {
        let margin = self.config.thresholds.margin;
        std::array::from_fn(|sq| (DARK & bit(sq as u8) != 0).then(|| evidence.read(sq as u8, margin)).flatten())
    }

    /// Whether several plies explain the board, and whether to take them now: when the board
    /// has stayed `infer_after` seconds, when it continues the story of a board seen before, or
    /// when it carries no time (taken as a still board).
    fn story_for(&mut self, evidence: &Evidence, now: f64, t: Option<f64>) -> StoryCheck {
        let Some(story) = self.find_story(evidence) else { return StoryCheck::None };
        if t.is_none() || self.every_step_seen(&story) {
            self.story = None;
            return StoryCheck::Ready(story);
        }
        let reads = self.reads_of(evidence);
        match &self.story {
            Some(p) if p.reads == reads => {}
            Some(p) if story.continues(&p.story) => {
                self.story = None;
                return StoryCheck::Ready(story);
            }
            _ => self.story = Some(PendingStory { reads, since: now, story }),
        }
        self.take_story_if_stayed(now).map_or(StoryCheck::Pending, StoryCheck::Ready)
    }

    /// The pending story, if its board has stayed `infer_after` seconds.
    fn take_story_if_stayed(&mut self, now: f64) -> Option<Story> {
        let stayed = self.story.as_ref().is_some_and(|p| now - p.since >= self.config.infer_after);
        stayed.then(|| self.story.take().map(|p| p.story)).flatten()
    }

    /// Record the plies of a story; after an error, as a resynchronisation.
    fn adopt_story(&mut self, story: Story, t: Option<f64>, events: &mut Vec<Event>) {
        self.forget_suspicions();
        if self.game.as_ref().is_some_and(|g| g.uncrowned != 0) {
            // The king piece was put down while the camera looked away.
            self.crown_swapped(t, events);
        }
        let holding = self.game.as_ref().is_some_and(|g| g.hold.is_some());
        if holding {
            let g = self.game_mut();
            g.hold = None;
            // What was under way before the error is back on the board or part of the plies.
            g.pending = None;
            g.candidates = None;
            let mut plies = Vec::new();
            self.record_story(story, t, &mut plies);
            self.resynchronised(t, plies, events);
        } else {
            self.game_mut().uncertain = false;
            self.record_story(story, t, events);
        }
    }

    /// Tolerant mode: a board no legal story explains is first taken for a misread (reported
    /// once as an unclear board); [`Tracker::check_suspect`] makes it an error if it stays.
    fn suspect_board(&mut self, kind: ErrorKind, evidence: Evidence, now: f64, t: Option<f64>, events: &mut Vec<Event>) {
        let reads = self.reads_of(&evidence);
        let same_board = self.suspect.as_ref().is_some_and(|s| s.reads == reads);
        if !same_board {
            self.suspect = Some(Suspect { reads, since: now, evidence, kind });
        }
        self.check_suspect(&reads, now, t, events);
        if !same_board && self.suspect.is_some() {
            // Not an error yet: say once that the board is unclear.
            let g = self.game_mut();
            if !g.uncertain {
                g.uncertain = true;
                g.uncertain_since = Some(now);
                let side = g.pos.to_move;
                let mut e = self.event(t, EventKind::Uncertain, format!("Wait: Player{}- Board unclear", player_number(side)));
                e.player = Some(player_number(side));
                e.detail = Some(format!(
                    "no legal move explains the board: taken for a misread, an error if it stays {:.1} s",
                    self.config.error_after
                ));
                events.push(e);
            }
        }
    }

    /// Time passed over a suspect board: one several plies explain that has stayed `infer_after`
    /// seconds is taken as those plies; one nothing explains that has stayed `error_after`
    /// seconds is a referee's error.
    fn check_suspect(&mut self, reads: &[Option<SquareClass>; 64], now: f64, t: Option<f64>, events: &mut Vec<Event>) {
        if self.game.as_ref().is_none_or(|g| g.over) {
            return;
        }
        // Only the board itself staying counts, not time passing over another board.
        if self.story.as_ref().is_some_and(|p| p.reads == *reads) {
            if let Some(story) = self.take_story_if_stayed(now) {
                self.adopt_story(story, t, events);
            }
            return;
        }
        let Some(suspect) = self.suspect.as_ref().filter(|s| s.reads == *reads) else { return };
        if now - suspect.since < self.config.error_after {
            return;
        }
        let suspect = self.suspect.take().expect("checked");
        let g = self.game.as_mut().expect("checked");
        if g.hold.is_none() {
            g.uncertain = false;
            let side = g.pos.to_move;
            self.raise(suspect.kind, side, &suspect.evidence, t, events);
        }
    }

    /// A board no move (or move under way) explains may show several plies at once: the camera
    /// missed a finished state (the next hand came in before the board was still). Every
    /// sequence of 2..=`MAX_INFERRED_PLIES` legal plies from the last valid position is scored
    /// like any candidate, plus `PLY_PRIOR` per extra ply; a clear winner (explaining the board,
    /// and `margin` ahead of every other resulting position) is the story. When none is (more
    /// plies than that were missed: a loaded machine dropped the frames of several still
    /// boards), the boards seen on the way are followed ply by ply (`Tracker::line_on_the_way`).
    /// A move seen under way counts for nothing here: its board may have been a partial state
    /// of the first ply, which the story then completes, or a misread. A man waiting on the last
    /// row to be swapped for its king piece is taken as swapped on the way (the story's boards
    /// show the king).
    fn find_story(&self, evidence: &Evidence) -> Option<Story> {
        let g = self.game.as_ref()?;
        if g.over {
            return None;
        }
        let Some(lines) = self.clear_lines(&g.pos, evidence, 2, true) else { return self.line_on_the_way(&g.pos, evidence) };
        self.story_in_order(lines, &g.pos, self.on_the_way.boards_from(&g.pos))
    }

    /// Of `lines` from `from` that reach the same board by other orders, the one `boards` (seen
    /// on the way, glimpses included) fit best; the orders they cannot tell from it stay, their
    /// moves named as the plies' alternatives (the record takes the first line).
    fn story_in_order(&self, lines: Vec<Vec<Move>>, from: &Position, boards: &[Evidence]) -> Option<Story> {
        let (kings, margin) = (self.config.kings, self.config.thresholds.margin);
        let mut fitted: Vec<(f32, Vec<Move>)> = lines.into_iter().map(|l| (misfit_of(boards, from, &l, kings), l)).collect();
        fitted.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (least, first) = (fitted.first()?.0, fitted[0].1.clone());
        let lines: Vec<Vec<Move>> = fitted
            .into_iter()
            .filter(|(misfit, l)| misfit - least < margin || l.iter().zip(&first).all(|(a, b)| a.same_effect(b)))
            .map(|(_, l)| l)
            .collect();
        let alternatives = ply_alternatives(&lines, from, &self.rules);
        Some(Story { line: lines.into_iter().next()?, alternatives })
    }

    /// The lines of `min_plies..=MAX_INFERRED_PLIES` legal plies from `from` that reach the
    /// position which clearly explains `evidence` (within `explain`, and `margin` ahead of every
    /// other position so reached), shortest first; `None` when no position clearly does.
    /// `by_the_way`: outcomes the board cannot tell apart are told by how well the boards seen
    /// on the way fit their lines (for the board that ends them, not for the boards themselves).
    fn clear_lines(&self, from: &Position, evidence: &Evidence, min_plies: usize, by_the_way: bool) -> Option<Vec<Vec<Move>>> {
        let (rules, kings, th) = (self.rules, self.config.kings, self.config.thresholds);
        // Per resulting position (the same position by other orders is one outcome): the best
        // score, its deficit, and every shortest line reaching it.
        let mut outcomes: HashMap<Position, (f32, f32, Vec<Vec<Move>>)> = HashMap::new();
        // Lines through the same position after as many plies are expanded a few times, not
        // once: two captures that leave the same board (26x19 15x24x31 and 27x18 15x22x31) must
        // both reach the plies after them, for the boards seen on the way to choose.
        let mut expanded: HashMap<(Position, usize), usize> = HashMap::new();
        let mut stack: Vec<(Position, Vec<Move>)> = vec![(*from, Vec::new())];
        while let Some((pos, line)) = stack.pop() {
            if line.len() >= min_plies {
                let deficit = evidence.deficit(&Look::of(&pos, hidden_kings(&pos, 0, kings)));
                let score = deficit + PLY_PRIOR * line.len().saturating_sub(1) as f32;
                let entry = outcomes.entry(pos).or_insert((f32::MAX, f32::MAX, Vec::new()));
                if score < entry.0 {
                    *entry = (score, deficit, vec![line.clone()]);
                } else if score == entry.0 && entry.2.len() < MAX_ALTERNATIVE_LINES {
                    entry.2.push(line.clone());
                }
            }
            if line.len() == MAX_INFERRED_PLIES {
                continue;
            }
            let times = expanded.entry((pos, line.len())).or_insert(0);
            if *times == MAX_ALTERNATIVE_LINES {
                continue;
            }
            *times += 1;
            for m in legal_moves(&pos, &rules) {
                let mut next = line.clone();
                next.push(m);
                stack.push((pos.play(&m), next));
            }
        }
        let mut ranked: Vec<(f32, f32, Vec<Vec<Move>>)> = outcomes.into_values().collect();
        ranked.sort_by(|a, b| a.0.total_cmp(&b.0));
        // Outcomes the board itself cannot tell apart (stacked kings: a king moved, or a man
        // crowned, look alike): the boards seen on the way may. Each is charged how much worse
        // its best line fits them than the best-fitting one does.
        let first_score = ranked.first()?.0;
        let contenders = ranked.iter().take_while(|r| r.0 - first_score < th.margin).count();
        if contenders > 1 && by_the_way {
            let misfits: Vec<f32> = ranked[..contenders]
                .iter()
                .map(|(_, _, lines)| lines.iter().map(|l| misfit_of(self.on_the_way.boards_from(from), from, l, kings)).fold(f32::MAX, f32::min))
                .collect();
            let least = misfits.iter().copied().fold(f32::MAX, f32::min);
            for (r, m) in ranked.iter_mut().zip(&misfits) {
                r.0 += m - least;
            }
            ranked.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        let (best, deficit, mut lines) = ranked.first().cloned()?;
        let rival = ranked.get(1).map_or(f32::MAX, |r| r.0);
        if deficit > th.explain || rival - best < th.margin {
            return None;
        }
        lines.sort_by_key(Vec::len);
        Some(lines)
    }

    /// More plies than one reading may show, followed through the boards seen on the way: each
    /// board that clearly shows a position up to `MAX_INFERRED_PLIES` plies on from the last
    /// one reached is a step (a board with a hand over it, or in the middle of a move, shows
    /// none clearly and is passed over), and `evidence` must clearly be the last step's
    /// position or a few plies on. Only a line of two plies or more counts, as for any story.
    fn line_on_the_way(&self, from: &Position, evidence: &Evidence) -> Option<Story> {
        let boards = self.on_the_way.boards_from(from);
        // The order of the plies of a step is told by the boards since the last step (none of
        // them a step: a hand over them).
        let mut pos = *from;
        let mut story = Story { line: Vec::new(), alternatives: Vec::new() };
        let mut since = 0;
        for (i, board) in boards.iter().enumerate() {
            let Some(lines) = self.clear_lines(&pos, board, 0, false) else { continue };
            let Some(step) = self.story_in_order(lines, &pos, &boards[since..i]) else { continue };
            let reached = step.line.iter().fold(pos, |p, m| p.play(m));
            if self.shows_step(board, &pos, &reached) {
                pos = reached;
                story.line.extend(step.line);
                story.alternatives.extend(step.alternatives);
                since = i + 1;
            }
        }
        let last = self.story_in_order(self.clear_lines(&pos, evidence, 0, false)?, &pos, &boards[since..])?;
        story.line.extend(last.line);
        story.alternatives.extend(last.alternatives);
        (story.line.len() >= 2).then_some(story)
    }

    /// Whether `board` shows the step from `before` to `after`: it reads every square the step
    /// changed as `after` has it. A hand over the board hides squares, so that a man lifted
    /// looks like a man moved to wherever the hand is; such a board shows no step.
    fn shows_step(&self, board: &Evidence, before: &Position, after: &Position) -> bool {
        let (kings, margin) = (self.config.kings, self.config.thresholds.margin);
        let (was, is) = (Look::of(before, hidden_kings(before, 0, kings)), Look::of(after, hidden_kings(after, 0, kings)));
        let changed = was.changed(&is);
        changed != 0 && (0..64u8).filter(|&sq| changed & bit(sq) != 0).all(|sq| board.read(sq, margin) == Some(is.class_at(sq)))
    }

    /// Whether every position a story passes through before its last was seen on the way, in
    /// order: then its plies were each on the board, and it is taken without waiting for its
    /// own board to stay.
    fn every_step_seen(&self, story: &Story) -> bool {
        let Some(mut pos) = self.game.as_ref().map(|g| g.pos) else { return false };
        let mut boards = self.on_the_way.boards_from(&pos).iter();
        story.line[..story.line.len() - 1].iter().all(|m| {
            let next = pos.play(m);
            let seen = boards.any(|board| self.shows_step(board, &pos, &next));
            pos = next;
            seen
        })
    }

    /// Record a story ply by ply, all but the last marked as inferred.
    fn record_story(&mut self, story: Story, t: Option<f64>, events: &mut Vec<Event>) {
        let kings = self.config.kings;
        let last = story.line.len() - 1;
        for (i, m) in story.line.into_iter().enumerate() {
            let mut ply_events = Vec::new();
            self.commit(m, true, EventKind::Move, t, &mut ply_events);
            if let Some(RecordItem::Move(recorded)) = self.game_mut().record.items.last_mut() {
                recorded.inferred = i < last;
                recorded.alternatives = story.alternatives[i].clone();
            }
            for e in ply_events.iter_mut().filter(|e| e.kind == EventKind::Move) {
                if i < last {
                    e.inferred = Some(true);
                    e.detail = Some("not seen on the board: a later board shows it was made".into());
                }
                e.alternatives = story.alternatives[i].clone();
            }
            events.extend(ply_events);
            if self.game.as_ref().is_some_and(|g| g.over) {
                break;
            }
        }
        let g = self.game_mut();
        g.accepted = Look::of(&g.pos, hidden_kings(&g.pos, 0, kings));
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

    /// Tolerant mode, after an error: a board that shows a complete move, or several plies, from
    /// the last valid position (and clearly wins, as any reading must) ends the hold: the error
    /// was a misread, or the players took back the wrong move and went on. The plies are recorded
    /// (unseen ones inferred) after a `Now is OK` that says the record was resynchronised. A move
    /// merely under way does not end the hold.
    fn try_resync(&mut self, evidence: &Evidence, now: f64, t: Option<f64>, events: &mut Vec<Event>) {
        let candidates = self.candidates();
        match decide(evidence, &candidates, &self.config.thresholds) {
            Decision::Accept { best, near }
                if !candidates[best].plan.failed_crown
                    && (!candidates[best].plan.commits.is_empty() || candidates[best].plan.crown) =>
            {
                self.game_mut().hold = None;
                let progress = near.iter().fold(candidates[best].plan.progress.clone(), |acc, &i| {
                    merge_progress(acc, candidates[i].plan.progress.clone())
                });
                let mut moves = Vec::new();
                self.apply(&candidates[best], progress, evidence, t, &mut moves);
                self.resynchronised(t, moves, events);
            }
            Decision::Unexplained { .. } => {
                if let StoryCheck::Ready(story) = self.story_for(evidence, now, t) {
                    self.adopt_story(story, t, events);
                }
            }
            _ => {}
        }
    }

    /// The hold has ended on a board legally reached from the last valid position: the
    /// resynchronising line, then the events of the moves it recorded (`moves`).
    fn resynchronised(&mut self, t: Option<f64>, moves: Vec<Event>, events: &mut Vec<Event>) {
        self.forget_suspicions();
        let g = self.game_mut();
        g.uncertain = false;
        g.candidates = None;
        let to_move = g.pos.to_move;
        let plies: Vec<String> = moves.iter().filter_map(|e| e.mv.clone().filter(|_| e.kind == EventKind::Move)).collect();
        let mut e = self.event(t, EventKind::Resynchronised, "Now is OK: record resynchronised".into());
        e.current_player = Some(player_number(to_move));
        e.detail = Some(format!(
            "the board shows {} played from the last valid position; the error is left behind",
            if plies.is_empty() { "the crowning".to_string() } else { plies.join(" ") }
        ));
        events.push(e);
        // The resynchronising line comes first, then the moves it recorded.
        let offset = events.len() - 1;
        events.extend(moves);
        renumber_after(&mut events[offset..]);
    }

    /// After an error: back in the last accepted state (or the last position) means `Now is OK`.
    fn try_recover(&mut self, evidence: &Evidence, t: Option<f64>, events: &mut Vec<Event>) -> bool {
        let th = self.config.thresholds;
        let g = self.game.as_ref().expect("game");
        let base = Look::of(&g.pos, self.hidden(g));
        let changed = g.hold.as_ref().map_or(0, |h| h.changed);
        let back_to = [g.accepted, base].into_iter().find(|target| {
            evidence.deficit(target) <= th.explain
                && Squares(changed).all(|sq| evidence.confident(sq, target.class_at(sq), th.margin))
        });
        let Some(target) = back_to else { return false };
        self.forget_suspicions();
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
        e.detail = Some("the board is back in the last valid position".into());
        events.push(e);
        true
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
            alternatives: Vec::new(),
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

/// For each ply of `lines[0]` (lines of equal length from `start` to one board), the other
/// moves the other lines make at that ply, as move texts, where they differ.
fn ply_alternatives(lines: &[Vec<Move>], start: &Position, rules: &Rules) -> Vec<Vec<String>> {
    let texts: Vec<Vec<String>> = lines
        .iter()
        .map(|line| {
            let mut pos = *start;
            line.iter()
                .map(|m| {
                    let text = move_text(m, &legal_moves(&pos, rules), rules);
                    pos = pos.play(m);
                    text
                })
                .collect()
        })
        .collect();
    (0..lines[0].len())
        .map(|i| {
            let mut others: Vec<String> = texts[1..].iter().map(|t| t[i].clone()).filter(|t| *t != texts[0][i]).collect();
            others.sort();
            others.dedup();
            others
        })
        .collect()
}

/// Give `events` the sequence and line numbers they already hold, in their new order (events
/// made in one order and reported in another).
fn renumber_after(events: &mut [Event]) {
    let mut numbers: Vec<(u64, String)> = events
        .iter()
        .map(|e| (e.seq, e.line.split_once(": ").map_or_else(String::new, |(n, _)| n.to_string())))
        .collect();
    numbers.sort_by_key(|(seq, _)| *seq);
    for (e, (seq, n)) in events.iter_mut().zip(numbers) {
        e.seq = seq;
        e.line = format!("{n}: {}", e.text);
    }
}

/// The squares as `[row][col]` in board coordinates (for messages about a set of squares).
pub fn seen_square_names(squares: u64, rules: &Rules) -> Vec<String> {
    let mut list: Vec<(u8, u8)> = Squares(squares).map(|sq| seen_at(sq, rules)).collect();
    list.sort();
    list.into_iter().map(|(r, c)| format!("[{r}][{c}]")).collect()
}
