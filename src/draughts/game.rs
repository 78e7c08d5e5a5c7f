//! Games: a start position and the moves played from it, replayed from PDN records with the
//! rules engine, and written back as PDN.

use super::fen::{parse_fen, to_fen};
use super::movegen::{legal_moves, Move};
use super::notation::{matching_moves, move_text, MoveError, WrittenMove, WrittenSquare};
use super::pdn::{self, GameRecord, GameResult, MoveToken, RecordedMove, SquareToken};
use super::position::{Color, Position};
use super::rules::{Rules, SquareNotation, Variant};

/// One move of a replayed game.
#[derive(Clone, Debug)]
pub struct Ply {
    pub mv: Move,
    /// The move as this program writes it (full path only when ambiguous).
    pub text: String,
    /// The move as the record wrote it.
    pub written: String,
    pub before: Position,
    pub after: Position,
    pub comments: Vec<String>,
    /// A setup command (`/FEN "..."/`) that replaced the position before this move.
    pub setup_before: Option<String>,
}

#[derive(Clone, Debug)]
pub struct Game {
    pub variant: Variant,
    pub rules: Rules,
    pub tags: Vec<(String, String)>,
    pub start: Position,
    pub plies: Vec<Ply>,
    pub result: GameResult,
}

/// Why a record does not replay: which ply (1-based; 0 for the set-up) and which move.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("ply {ply} (`{written}`, line {line}): {reason}")]
pub struct ReplayError {
    pub ply: usize,
    pub written: String,
    pub line: usize,
    pub reason: String,
}

impl From<&MoveToken> for WrittenMove {
    fn from(token: &MoveToken) -> WrittenMove {
        WrittenMove {
            squares: token
                .squares
                .iter()
                .map(|s| match *s {
                    SquareToken::Num(n) => WrittenSquare::Number(n),
                    SquareToken::Alg { file, rank } => WrittenSquare::Algebraic { file, rank },
                })
                .collect(),
            from_file: token.compact_from_file,
        }
    }
}

/// The variant a record is played under: its `GameType` tag, else `default`. `Err` names a
/// game type this engine does not play (10x10 boards, Frisian, ...).
pub fn record_variant(record: &GameRecord, default: Variant) -> Result<Variant, String> {
    match record.tag("GameType") {
        Some(tag) => Variant::from_game_type(tag).ok_or_else(|| format!("game type `{tag}` is not an 8x8 variant this program plays")),
        None => Ok(default),
    }
}

/// The 8x8 variants tried, in this order, for a record without a `GameType` tag: English
/// (American) checkers first, by far the commonest 8x8 game in PDN archives, then pool, the
/// Russian and Brazilian games, then the mirrored-board ones. [`detection_order`] moves the
/// variants whose square notation the record uses ahead of the others.
pub const DETECTION_ORDER: [Variant; 7] =
    [Variant::English, Variant::Pool, Variant::Russian, Variant::Brazilian, Variant::Italian, Variant::Spanish, Variant::Czech];

/// [`DETECTION_ORDER`] for this record: English first, then the variants written in the
/// record's notation (numeric `11-15` or algebraic `c3-d4`), then the rest. Pool and Russian
/// games often replay under each other's rules (they differ only when a man reaches the far row
/// in a capture), and the notation is what tells an archive of one from an archive of the other.
pub fn detection_order(record: &GameRecord) -> Vec<Variant> {
    let algebraic = record.moves.iter().flat_map(|m| m.token.squares.first()).next().map(|s| matches!(s, SquareToken::Alg { .. }));
    let mut order = DETECTION_ORDER.to_vec();
    if let Some(algebraic) = algebraic {
        let written_so = |v: &Variant| (v.rules().notation == SquareNotation::Algebraic) == algebraic;
        // A stable sort: the order of DETECTION_ORDER is kept within each group.
        order[1..].sort_by_key(|v| !written_so(v));
    }
    order
}

/// Where the variant a record was read under came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VariantSource {
    /// The record's `GameType` tag.
    Tagged,
    /// Given by the caller for records without a tag (`--variant`).
    Given,
    /// No tag: the first variant of [`detection_order`] under which the record replays legally.
    Detected,
    /// No tag, and it replays legally under none: the variant under which it went furthest
    /// (its error is the one worth reporting).
    Unresolved,
}

/// A record replayed under the variant chosen for it, and why that one.
#[derive(Debug, Clone)]
pub struct ReadAs {
    pub variant: Variant,
    pub source: VariantSource,
    pub replay: Result<Game, ReplayError>,
}

/// Replay a record under its `GameType` tag, else `given`, else the variant under which it
/// replays legally (see [`detection_order`]). `Err` names a game type this engine does not
/// play. Pure: the caller says to the user what was chosen.
pub fn replay_choosing(record: &GameRecord, given: Option<Variant>) -> Result<ReadAs, String> {
    if record.tag("GameType").is_some() {
        let variant = record_variant(record, Variant::default())?;
        return Ok(ReadAs { variant, source: VariantSource::Tagged, replay: replay(record, variant) });
    }
    if let Some(variant) = given {
        return Ok(ReadAs { variant, source: VariantSource::Given, replay: replay(record, variant) });
    }
    let mut furthest: Option<(Variant, ReplayError)> = None;
    for variant in detection_order(record) {
        match replay(record, variant) {
            Ok(game) => return Ok(ReadAs { variant, source: VariantSource::Detected, replay: Ok(game) }),
            // Ties keep the commoner variant.
            Err(e) if furthest.as_ref().is_none_or(|(_, best)| e.ply > best.ply) => furthest = Some((variant, e)),
            Err(_) => {}
        }
    }
    let (variant, error) = furthest.expect("the detection order is not empty");
    Ok(ReadAs { variant, source: VariantSource::Unresolved, replay: Err(error) })
}

/// Replay a record move by move; every move must be legal.
///
/// Two habits of real records are understood: a multi-capture written leg by leg as if each leg
/// were a move (`e5xc3 c3xa1`, as some online servers export), and a compact Russian move
/// (`hg7`) that two legal moves fit, settled by which of them the rest of the game follows.
pub fn replay(record: &GameRecord, default: Variant) -> Result<Game, ReplayError> {
    let setup_error = |reason: String| ReplayError { ply: 0, written: String::new(), line: record.start_line, reason };
    let variant = record_variant(record, default).map_err(setup_error)?;
    let rules = variant.rules();
    let start = match record.tag("FEN") {
        Some(fen) => parse_fen(fen, &rules).map_err(|e| setup_error(e.to_string()))?,
        None => Position::start(&rules),
    };
    let mut plies = Vec::with_capacity(record.moves.len());
    replay_moves(&record.moves, 0, start, &rules, &mut plies)?;
    let result = record
        .result
        .or_else(|| record.tag("Result").and_then(GameResult::from_token))
        .unwrap_or(GameResult::Unknown);
    Ok(Game { variant, rules, tags: record.tags.clone(), start, plies, result })
}

/// How many ambiguous moves may be settled by trying the rest of the game (bounds the search).
const MAX_AMBIGUITY_DEPTH: usize = 8;

fn replay_moves(moves: &[RecordedMove], mut i: usize, mut pos: Position, rules: &Rules, plies: &mut Vec<Ply>) -> Result<(), ReplayError> {
    let mut ambiguities = 0;
    while i < moves.len() {
        let recorded = &moves[i];
        let fail = |reason: String| ReplayError { ply: plies.len() + 1, written: recorded.token.text.clone(), line: recorded.line, reason };
        if let Some(fen) = &recorded.setup_before {
            pos = parse_fen(fen, rules).map_err(|e| fail(format!("setup: {e}")))?;
        }
        let (candidates, consumed) = candidates_at(moves, i, &pos, rules).map_err(|e| fail(format!("{e} ({} to move in {})", pos.to_move.name(), to_fen(&pos, rules))))?;
        let written: Vec<&str> = moves[i..i + consumed].iter().map(|m| m.token.text.as_str()).collect();
        let comments: Vec<String> = moves[i..i + consumed].iter().flat_map(|m| m.comments_after.iter().cloned()).collect();
        let ply_of = |mv: Move| {
            let legal = legal_moves(&pos, rules);
            Ply {
                mv,
                text: move_text(&mv, &legal, rules),
                written: written.join(" "),
                before: pos,
                after: pos.play(&mv),
                comments: comments.clone(),
                setup_before: recorded.setup_before.clone(),
            }
        };
        match candidates.as_slice() {
            [] => return Err(fail(format!("no legal move matches it ({} to move in {})", pos.to_move.name(), to_fen(&pos, rules)))),
            [one] => {
                let ply = ply_of(*one);
                pos = ply.after;
                plies.push(ply);
                i += consumed;
            }
            many => {
                ambiguities += 1;
                if ambiguities > MAX_AMBIGUITY_DEPTH {
                    return Err(fail(format!("ambiguous: {} legal moves fit it", many.len())));
                }
                let mut followed: Vec<Vec<Ply>> = Vec::new();
                for &mv in many {
                    let mut tried = plies.clone();
                    let ply = ply_of(mv);
                    let after = ply.after;
                    tried.push(ply);
                    if replay_moves(moves, i + consumed, after, rules, &mut tried).is_ok() {
                        followed.push(tried);
                    }
                }
                if followed.len() == 1 {
                    *plies = followed.pop().expect("one line");
                    return Ok(());
                }
                if followed.len() > 1 {
                    return Err(fail(format!("ambiguous: {} legal moves fit it and the rest of the game does not tell them apart", many.len())));
                }
                return Err(fail(format!("ambiguous: {} legal moves fit it and the game goes on after none of them", many.len())));
            }
        }
    }
    Ok(())
}

/// The legal moves the record's move `i` may mean, and how many recorded moves it spans (more
/// than one when a capture is written leg by leg).
fn candidates_at(moves: &[RecordedMove], i: usize, pos: &Position, rules: &Rules) -> Result<(Vec<Move>, usize), MoveError> {
    let first = &moves[i].token;
    let mut written = WrittenMove::from(first);
    let found = matching_moves(&written, &first.text, pos, rules)?;
    if !found.is_empty() || written.squares.len() < 2 || written.from_file.is_some() {
        return Ok((found, 1));
    }
    // A capture continued by the next "moves", each starting where the last one landed.
    let mut consumed = 1;
    while let Some(next) = moves.get(i + consumed) {
        let next_written = WrittenMove::from(&next.token);
        if next_written.from_file.is_some() || next_written.squares.first() != written.squares.last() || next.setup_before.is_some() {
            break;
        }
        written.squares.extend_from_slice(&next_written.squares[1..]);
        consumed += 1;
        let found = matching_moves(&written, &first.text, pos, rules)?;
        if !found.is_empty() {
            return Ok((found, consumed));
        }
    }
    Ok((vec![], 1))
}

impl Game {
    /// The position after the last move.
    pub fn final_position(&self) -> Position {
        self.plies.last().map_or(self.start, |p| p.after)
    }

    /// The game as PDN: the record's tags (with `GameType` and, for a set-up start, `FEN`), the
    /// moves in this program's notation with their comments, and the result.
    pub fn to_pdn(&self) -> String {
        let mut tags: Vec<(String, String)> =
            self.tags.iter().filter(|(n, _)| !matches!(n.as_str(), "GameType" | "FEN" | "SetUp")).cloned().collect();
        tags.push(("GameType".into(), self.variant.game_type().to_string()));
        if self.start != Position::start(&self.rules) {
            tags.push(("SetUp".into(), "1".into()));
            tags.push(("FEN".into(), to_fen(&self.start, &self.rules)));
        }
        let moves: Vec<pdn::WrittenMove> = self
            .plies
            .iter()
            .map(|p| {
                let comment = (!p.comments.is_empty()).then(|| p.comments.join(" "));
                pdn::WrittenMove { text: p.text.clone(), comment, setup_before: p.setup_before.clone() }
            })
            .collect();
        let second_first = self.start.to_move != self.rules.first_mover;
        pdn::write_game(&tags, &moves, &self.result, 1, second_first)
    }

    /// The winner when the side to move at the end has no legal move (or no pieces).
    pub fn decided_winner(&self) -> Option<Color> {
        let last = self.final_position();
        (!last.has_legal_move(&self.rules)).then(|| last.to_move.opponent())
    }
}
