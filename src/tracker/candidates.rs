//! Every board state the tracker is ready to see next, each with what it would mean.
//!
//! From the last valid position these are: the board unchanged; each legal move complete; and
//! every state a human hand passes through while making it: the piece lifted, standing on any
//! landing square of its path, with any of the captured pieces already taken off (before or after
//! the piece moved, in any order), a crowned man not yet swapped for its king piece. Around that:
//! the crowning swap the last mover still owes (colour-coded kings), a correction of the last move
//! while the opponent has not answered it (a king set down and then slid on), and, while a move is
//! half done, the opponent's answer arriving before the camera saw it finished.
//!
//! States are compared by [`Look`]: what a camera can see. With stacked kings a king looks like a
//! man, so kings are folded into men before comparing.

use std::collections::HashMap;

use crate::draughts::bitboard::{bit, Square, Squares, DARK};
use crate::draughts::movegen::{generate, legal_moves, Duplicates, Move, MoveList};
use crate::draughts::position::{Color, Position};
use crate::draughts::rules::{PromotionInCapture, Rules};

use super::observation::SquareClass;
use super::KingStyle;

/// A board as the camera sees it: pieces per side, and which pieces look like kings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Look {
    pub black: u64,
    pub white: u64,
    pub kings: u64,
}

impl Look {
    /// `pos` with the kings on `hidden` looking like men.
    pub fn of(pos: &Position, hidden: u64) -> Look {
        Look { black: pos.black, white: pos.white, kings: pos.kings & !hidden }
    }

    pub fn class_at(&self, sq: Square) -> SquareClass {
        let b = bit(sq);
        let king = self.kings & b != 0;
        if self.black & b != 0 {
            if king {
                SquareClass::BlackKing
            } else {
                SquareClass::BlackMan
            }
        } else if self.white & b != 0 {
            if king {
                SquareClass::WhiteKing
            } else {
                SquareClass::WhiteMan
            }
        } else {
            SquareClass::Empty
        }
    }

    pub fn set(&mut self, sq: Square, class: SquareClass) {
        let b = bit(sq);
        self.black &= !b;
        self.white &= !b;
        self.kings &= !b;
        match class {
            SquareClass::Empty => {}
            SquareClass::BlackMan => self.black |= b,
            SquareClass::BlackKing => {
                self.black |= b;
                self.kings |= b;
            }
            SquareClass::WhiteMan => self.white |= b,
            SquareClass::WhiteKing => {
                self.white |= b;
                self.kings |= b;
            }
        }
    }

    /// Squares whose class differs between the two looks.
    pub fn changed(&self, other: &Look) -> u64 {
        ((self.black ^ other.black) | (self.white ^ other.white) | (self.kings ^ other.kings)) & DARK
    }
}

/// The kings that look like men: all of them with stacked kings; with colour-coded kings, those
/// whose man has not yet been swapped for a king piece.
pub fn hidden_kings(pos: &Position, uncrowned: u64, kings: KingStyle) -> u64 {
    match kings {
        KingStyle::Stacked => pos.kings,
        KingStyle::Visible => uncrowned & pos.kings,
    }
}

/// A move under way: which legal moves the state is part of, and how far the piece has got.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// The legal moves (of the side to move) this state is a step of. Empty when the state only
    /// belongs to a correction of the last move.
    pub moves: Vec<Move>,
    /// The capturing piece stands on landing square `step` of its path (0: not on a landing).
    pub step: u8,
    /// The path up to that landing, and the pieces jumped on the way (for the step's log line).
    pub path: Vec<Square>,
    pub captured: Vec<Square>,
    /// The state is (also) a step of correcting the last move.
    pub revising: bool,
}

/// What seeing a candidate state would mean, in the order the tracker applies it.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Plan {
    /// The man awaiting crowning has been swapped for a king piece.
    pub crown: bool,
    /// The last move (not yet answered) is replaced by this one, played from the same position;
    /// the flag says the crowning piece is shown (meaningful for crowning moves).
    pub revise: Option<(Move, bool)>,
    /// Moves completed, in order, each with "crowning piece shown".
    pub commits: Vec<(Move, bool)>,
    /// The opponent moved while the last mover's man still waits, uncrowned, on the last row.
    pub failed_crown: bool,
    /// A move in progress (nothing to record yet).
    pub progress: Option<Progress>,
}

impl Plan {
    fn noop() -> Plan {
        Plan::default()
    }

    fn in_progress(progress: Progress) -> Plan {
        Plan { progress: Some(progress), ..Plan::default() }
    }

    /// Whether nothing is recorded, corrected, crowned or refused.
    pub fn is_quiet(&self) -> bool {
        !self.crown && self.revise.is_none() && self.commits.is_empty() && !self.failed_crown
    }

    /// Same effect on the game (the details of a move in progress do not count).
    pub fn same_outcome(&self, other: &Plan) -> bool {
        let same_moves = |a: &[(Move, bool)], b: &[(Move, bool)]| {
            a.len() == b.len() && a.iter().zip(b).all(|((m, s), (n, t))| m.same_effect(n) && s == t)
        };
        self.crown == other.crown
            && self.failed_crown == other.failed_crown
            && match (&self.revise, &other.revise) {
                (None, None) => true,
                (Some(a), Some(b)) => same_moves(std::slice::from_ref(a), std::slice::from_ref(b)),
                _ => false,
            }
            && same_moves(&self.commits, &other.commits)
    }

    /// When two meanings share one look, the more useful wins: recording a move over waiting,
    /// waiting over an error.
    fn priority(&self) -> u8 {
        if self.failed_crown {
            0
        } else if self.is_quiet() {
            1
        } else {
            2
        }
    }
}

/// A board state the tracker is ready to see, with its meaning.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub look: Look,
    pub plan: Plan,
}

/// The last move while the opponent has not answered it: it may still be corrected.
#[derive(Clone, Debug, PartialEq)]
pub struct Tentative {
    pub before: Position,
    /// Kings that looked like men in `before`.
    pub before_hidden: u64,
    pub played: Move,
}

/// Everything candidates depend on.
pub struct Situation<'a> {
    pub rules: &'a Rules,
    pub kings: KingStyle,
    /// The last valid position; its side to move is the one expected to move.
    pub pos: &'a Position,
    /// Colour-coded kings: squares where the last mover's man waits to be swapped for a king.
    pub uncrowned: u64,
    pub tentative: Option<&'a Tentative>,
    /// The moves a half-done move on the board may be (for "the answer came before the camera
    /// saw the move finished").
    pub pending: &'a [Move],
}

/// How a state relates to one move.
#[derive(Clone, Debug, PartialEq)]
pub enum MoveState {
    Partial {
        step: u8,
        path: Vec<Square>,
        captured: Vec<Square>,
    },
    /// The move is complete; `swapped`: a crowning man is shown as a king (always true when kings
    /// are stacked, where the tracker crowns by itself).
    Complete {
        swapped: bool,
    },
}

/// Capture sequences longer than this enumerate only removals in jump order, not every subset.
const ALL_SUBSETS_UP_TO: usize = 8;
/// Answers to a half-done move are considered only when it is one of this few moves.
const MAX_PENDING_FOR_ANSWERS: usize = 4;

/// The looks of `m` (one of `paths`, all the ways of playing it) being made from `pos`.
pub fn move_states(
    pos: &Position,
    hidden: u64,
    m: &Move,
    paths: &[Move],
    rules: &Rules,
    kings: KingStyle,
) -> Vec<(Look, MoveState)> {
    let base = Look::of(pos, hidden);
    let mover = base.class_at(m.from);
    let mut lifted = base;
    lifted.set(m.from, SquareClass::Empty);
    let crowned = match pos.to_move {
        Color::Black => SquareClass::BlackKing,
        Color::White => SquareClass::WhiteKing,
    };
    let mut out = Vec::new();

    let complete = |out: &mut Vec<(Look, MoveState)>, without_captured: Look| {
        let mut look = without_captured;
        if m.crowns && kings == KingStyle::Visible && mover != crowned {
            look.set(m.to, mover);
            out.push((look, MoveState::Complete { swapped: false }));
            look.set(m.to, crowned);
            out.push((look, MoveState::Complete { swapped: true }));
        } else {
            look.set(m.to, mover);
            out.push((look, MoveState::Complete { swapped: true }));
        }
    };

    if !m.is_capture() {
        out.push((lifted, MoveState::Partial { step: 0, path: vec![m.from], captured: vec![] }));
        complete(&mut out, lifted);
        return out;
    }

    let mut all_removed = lifted;
    for sq in Squares(m.captured) {
        all_removed.set(sq, SquareClass::Empty);
    }
    complete(&mut out, all_removed);

    for p in paths.iter().filter(|p| p.same_effect(m)) {
        let path = p.path();
        let victims = p.captured_in_order();
        let k = victims.len();
        // Where a crowning man becomes a king on this path: the first landing on the last row
        // when it crowns and captures on (Russian), else the end.
        let crowned_from = (m.crowns && kings == KingStyle::Visible && mover != crowned).then(|| {
            let first_on_last_row = path.iter().position(|&sq| sq / 8 == pos.to_move.promotion_row()).unwrap_or(k);
            match rules.promotion_in_capture {
                PromotionInCapture::CrownAndContinue => first_on_last_row,
                _ => k,
            }
        });
        let subsets: Vec<u32> =
            if k <= ALL_SUBSETS_UP_TO { (0..1u32 << k).collect() } else { (0..=k).map(|j| (1u32 << j) - 1).collect() };
        for subset in subsets {
            let mut removed = lifted;
            for (j, &v) in victims.iter().enumerate() {
                if subset & 1 << j != 0 {
                    removed.set(v, SquareClass::Empty);
                }
            }
            let everything_removed = subset == (1u32 << k) - 1;
            // The piece in the air, then on its start square and on each landing.
            out.push((removed, MoveState::Partial { step: 0, path: vec![m.from], captured: vec![] }));
            // A flying king slid along a leg and paused short of its landing: with the pieces
            // taken so far (or none, or all) off the board.
            let is_prefix = (0..=k).any(|j| subset == (1u32 << j) - 1);
            if is_prefix {
                for i in 1..=k {
                    for at in between(path[i - 1], path[i]).into_iter().filter(|&sq| sq != victims[i - 1]) {
                        let mut look = removed;
                        look.set(at, mover);
                        let step = (i - 1) as u8;
                        out.push((
                            look,
                            MoveState::Partial { step, path: path[..i].to_vec(), captured: victims[..i - 1].to_vec() },
                        ));
                    }
                }
            }
            for (i, &at) in path.iter().enumerate() {
                if (i == 0 && subset == 0) || (i == k && everything_removed) {
                    continue; // the unchanged board, and the complete move (above)
                }
                let state =
                    MoveState::Partial { step: i as u8, path: path[..=i].to_vec(), captured: victims[..i].to_vec() };
                let mut look = removed;
                look.set(at, mover);
                out.push((look, state.clone()));
                if crowned_from.is_some_and(|c| i >= c) {
                    // The king piece already put down, before the capture is finished.
                    look.set(at, crowned);
                    out.push((look, state));
                }
            }
        }
    }
    out
}

/// The squares strictly between two squares of one diagonal.
fn between(a: Square, b: Square) -> Vec<Square> {
    let (ar, ac, br, bc) = ((a / 8) as i8, (a % 8) as i8, (b / 8) as i8, (b % 8) as i8);
    let (dr, dc) = ((br - ar).signum(), (bc - ac).signum());
    if (br - ar).abs() != (bc - ac).abs() {
        return Vec::new();
    }
    (1..(br - ar).abs()).map(|n| ((ar + n * dr) * 8 + ac + n * dc) as Square).collect()
}

/// All paths of the legal moves (duplicate paths kept: a hand may take any of them).
fn all_paths(pos: &Position, rules: &Rules) -> MoveList {
    let mut paths = MoveList::new();
    generate(pos, rules, Duplicates::Keep, &mut paths);
    paths
}

#[derive(Default)]
struct CandidateSet {
    list: Vec<Candidate>,
    index: HashMap<Look, usize>,
}

impl CandidateSet {
    fn insert(&mut self, look: Look, plan: Plan) {
        let Some(&i) = self.index.get(&look) else {
            self.index.insert(look, self.list.len());
            self.list.push(Candidate { look, plan });
            return;
        };
        let existing = &mut self.list[i].plan;
        if existing.same_outcome(&plan) {
            existing.progress = merge_progress(existing.progress.take(), plan.progress);
        } else if plan.priority() > existing.priority() {
            *existing = plan;
        }
    }
}

/// One look reached by several moves: it is a step of each of them. The unchanged board
/// (`None`) stays unchanged.
pub fn merge_progress(a: Option<Progress>, b: Option<Progress>) -> Option<Progress> {
    let (mut a, b) = (a?, b?);
    for m in b.moves {
        if !a.moves.iter().any(|x| x.same_effect(&m)) {
            a.moves.push(m);
        }
    }
    a.revising |= b.revising;
    if b.step < a.step {
        a.step = b.step;
        a.path = b.path;
        a.captured = b.captured;
    }
    Some(a)
}

fn progress_of(m: &Move, state: MoveState) -> Option<Progress> {
    match state {
        MoveState::Partial { step, path, captured } => {
            Some(Progress { moves: vec![*m], step, path, captured, revising: false })
        }
        MoveState::Complete { .. } => None,
    }
}

/// Every candidate state of `situation`, one per distinct look.
pub fn enumerate(situation: &Situation) -> Vec<Candidate> {
    let Situation { rules, kings, pos, uncrowned, tentative, pending } = *situation;
    let mut set = CandidateSet::default();
    let hidden = hidden_kings(pos, uncrowned, kings);
    set.insert(Look::of(pos, hidden), Plan::noop());

    let legal = legal_moves(pos, rules);
    let paths = all_paths(pos, rules);
    let awaiting_crown = kings == KingStyle::Visible && uncrowned != 0;
    for m in &legal {
        if !awaiting_crown {
            for (look, state) in move_states(pos, hidden, m, &paths, rules, kings) {
                let plan = match state {
                    MoveState::Complete { swapped } => Plan { commits: vec![(*m, swapped)], ..Plan::default() },
                    partial => Plan::in_progress(progress_of(m, partial).expect("partial state")),
                };
                set.insert(look, plan);
            }
            continue;
        }
        // The last mover still owes the crowning swap: the same states with the man still
        // there (an error once the move is complete) and with the king in place.
        for (look, state) in move_states(pos, hidden, m, &paths, rules, kings) {
            let plan = match state {
                MoveState::Complete { .. } => Plan { failed_crown: true, ..Plan::default() },
                partial => Plan::in_progress(progress_of(m, partial).expect("partial state")),
            };
            set.insert(look, plan);
        }
        for (look, state) in move_states(pos, 0, m, &paths, rules, kings) {
            let plan = match state {
                MoveState::Complete { swapped } => {
                    Plan { crown: true, commits: vec![(*m, swapped)], ..Plan::default() }
                }
                partial => Plan { crown: true, progress: progress_of(m, partial), ..Plan::default() },
            };
            set.insert(look, plan);
        }
    }
    if awaiting_crown {
        set.insert(Look::of(pos, 0), Plan { crown: true, ..Plan::default() });
        // The man taken off, the king not yet put down.
        let mut swapping = Look::of(pos, hidden);
        for sq in Squares(uncrowned) {
            swapping.set(sq, SquareClass::Empty);
        }
        set.insert(swapping, Plan::noop());
    }

    if let Some(t) = tentative {
        let before_paths = all_paths(&t.before, rules);
        for m in legal_moves(&t.before, rules).iter().filter(|m| m.from == t.played.from && !m.same_effect(&t.played)) {
            for (look, state) in move_states(&t.before, t.before_hidden, m, &before_paths, rules, kings) {
                let plan = match state {
                    MoveState::Complete { swapped } => Plan { revise: Some((*m, swapped)), ..Plan::default() },
                    MoveState::Partial { .. } => Plan::in_progress(Progress {
                        moves: vec![],
                        step: 0,
                        path: vec![],
                        captured: vec![],
                        revising: true,
                    }),
                };
                set.insert(look, plan);
            }
        }
    }

    if !pending.is_empty() && pending.len() <= MAX_PENDING_FOR_ANSWERS && !awaiting_crown {
        for m in pending {
            let next = pos.play(m);
            // A crowning half-done move is assumed crowned by the time the answer is seen.
            let next_hidden = hidden_kings(&next, 0, kings);
            let next_paths = all_paths(&next, rules);
            for answer in legal_moves(&next, rules) {
                for (look, state) in move_states(&next, next_hidden, &answer, &next_paths, rules, kings) {
                    if let MoveState::Complete { swapped } = state {
                        set.insert(look, Plan { commits: vec![(*m, true), (answer, swapped)], ..Plan::default() });
                    }
                }
            }
        }
    }
    set.list
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draughts::fen::parse_fen;
    use crate::draughts::rules::Variant;

    fn situation<'a>(rules: &'a Rules, pos: &'a Position, kings: KingStyle) -> Situation<'a> {
        Situation { rules, kings, pos, uncrowned: 0, tentative: None, pending: &[] }
    }

    #[test]
    fn start_position_has_each_move_and_each_lifted_piece() {
        let rules = Variant::English.rules();
        let pos = Position::start(&rules);
        let cands = enumerate(&situation(&rules, &pos, KingStyle::Visible));
        let completes = cands.iter().filter(|c| !c.plan.commits.is_empty()).count();
        let lifted = cands.iter().filter(|c| c.plan.progress.is_some()).count();
        assert_eq!(completes, 7, "seven opening moves");
        assert_eq!(lifted, 4, "four men can move (9, 10, 11, 12)");
        assert_eq!(cands.len(), 1 + 7 + 4);
    }

    #[test]
    fn a_double_capture_has_every_hand_state() {
        // English numbering: the Black man on 10 must play 10x19x26, over 15 and 23.
        let rules = Variant::English.rules();
        let pos = parse_fen("B:W15,23,32:B10", &rules).unwrap();
        let legal = legal_moves(&pos, &rules);
        assert_eq!(legal.len(), 1);
        assert_eq!(legal[0].capture_count(), 2);
        let cands = enumerate(&situation(&rules, &pos, KingStyle::Visible));
        // 4 removal subsets x (lifted + 3 squares) minus unchanged and complete, + complete + unchanged.
        let partial = cands.iter().filter(|c| c.plan.progress.is_some()).count();
        assert_eq!(partial, 4 * 4 - 2);
        assert_eq!(cands.len(), partial + 2);
        let max_step = cands.iter().filter_map(|c| c.plan.progress.as_ref()).map(|p| p.step).max();
        assert_eq!(max_step, Some(2), "the piece on its last landing, a victim still on the board");
    }

    #[test]
    fn a_flying_king_may_pause_between_landings() {
        // Pool: the king on 1 takes 15 far down the long diagonal and lands on 19, 24 or 28.
        let rules = Variant::Pool.rules();
        let pos = parse_fen("B:W15,29:BK1", &rules).unwrap();
        let cands = enumerate(&situation(&rules, &pos, KingStyle::Visible));
        let sq = |n| crate::draughts::notation::square_from_number(n, &rules).unwrap();
        // Paused on 6 (before the victim), nothing taken yet: a step of the move, not an error.
        let mut look = Look::of(&pos, 0);
        look.set(sq(1), SquareClass::Empty);
        look.set(sq(6), SquareClass::BlackKing);
        let paused = cands.iter().find(|c| c.look == look).expect("paused king is a candidate");
        assert_eq!(paused.plan.progress.as_ref().map(|p| p.step), Some(0));
        assert_eq!(between(sq(1), sq(19)), vec![sq(6), sq(10), sq(15)]);
    }

    #[test]
    fn crowning_with_visible_kings_has_an_unswapped_state() {
        let rules = Variant::Pool.rules();
        let pos = parse_fen("B:W5:B26", &rules).unwrap();
        let cands = enumerate(&situation(&rules, &pos, KingStyle::Visible));
        let completes: Vec<bool> = cands.iter().flat_map(|c| c.plan.commits.iter().map(|&(_, s)| s)).collect();
        assert_eq!(completes.iter().filter(|s| !**s).count(), 2, "two moves to the last row, man not swapped");
        assert_eq!(completes.iter().filter(|s| **s).count(), 2);
        let stacked = enumerate(&situation(&rules, &pos, KingStyle::Stacked));
        assert_eq!(stacked.iter().filter(|c| !c.plan.commits.is_empty()).count(), 2);
    }

    #[test]
    fn awaiting_crown_offers_swap_and_failure() {
        let rules = Variant::Pool.rules();
        let pos = parse_fen("W:W5:BK30", &rules).unwrap();
        let sq = crate::draughts::notation::square_from_number(30, &rules).unwrap();
        let sit = Situation { uncrowned: bit(sq), ..situation(&rules, &pos, KingStyle::Visible) };
        let cands = enumerate(&sit);
        assert!(cands.iter().any(|c| c.plan.crown && c.plan.commits.is_empty()));
        assert!(cands.iter().any(|c| c.plan.failed_crown));
        assert!(cands.iter().any(|c| c.plan.crown && c.plan.commits.len() == 1));
    }
}
