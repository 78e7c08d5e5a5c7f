//! Computer players by name, games as JSON lines, and whole games between two computer players.
//!
//! A record is one `start` line (the map's rows, the mode, the players, the random seed), one
//! `move` line per move (the piece, from and to as [row, column], equal when it stayed), and one
//! `end` line (winner, reason, moves), so a page or a script can replay it move by move.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::classic;
use super::map::{Map, Square};
use super::rules::MOVE_LIMIT;
use super::rules::{Game, Mode, Outcome, Piece, Positions, Reason, Team};
use super::solver::Solution;

/// A computer player.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Ai {
    /// The original program's players (breadth-first search, random choices).
    #[value(alias = "seed")]
    Classic,
    /// Perfect play from the exact solution of the map.
    Perfect,
}

impl Ai {
    /// The name used in records and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Ai::Classic => "classic",
            Ai::Perfect => "perfect",
        }
    }

    /// This player's move for the piece to move (`None`: it has no step and stays). `solution`
    /// is needed by the perfect player.
    pub fn choose(self, map: &Map, solution: Option<&Solution>, positions: &Positions, piece: Piece, rng: &mut ChaCha8Rng) -> Option<Square> {
        match self {
            Ai::Classic => classic::choose_move(map, positions, piece, rng),
            Ai::Perfect => solution.expect("the perfect player needs the solution").best_move(map, positions, piece),
        }
    }
}

/// One line of a game record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RecordLine {
    Start { map: Vec<String>, mode: Mode, police: String, thief: String, seed: u64 },
    Move { ply: u32, piece: Piece, from: [usize; 2], to: [usize; 2] },
    End { winner: Team, reason: Reason, moves: u32 },
}

impl RecordLine {
    pub fn start(map: &Map, mode: Mode, police: &str, thief: &str, seed: u64) -> RecordLine {
        let map = map.to_text().lines().map(str::to_owned).collect();
        RecordLine::Start { map, mode, police: police.to_owned(), thief: thief.to_owned(), seed }
    }

    /// The move just played in `game` by `piece`, which stood on `from`.
    pub fn moved(map: &Map, game: &Game, piece: Piece, from: Square) -> RecordLine {
        let at = |s: Square| { let (r, c) = map.row_column(s); [r, c] };
        RecordLine::Move { ply: game.moves, piece, from: at(from), to: at(game.positions.of(piece)) }
    }

    pub fn end(outcome: &Outcome) -> RecordLine {
        RecordLine::End { winner: outcome.winner, reason: outcome.reason, moves: outcome.moves }
    }
}

/// Plays one whole game between two computer players; returns its outcome and record.
pub fn play_match_game(map: &Map, solution: Option<&Solution>, mode: Mode, police: Ai, thief: Ai, seed: u64) -> (Outcome, Vec<RecordLine>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut game = Game::new(map, mode);
    let mut record = vec![RecordLine::start(map, mode, police.name(), thief.name(), seed)];
    while game.outcome.is_none() {
        let piece = game.to_move;
        let ai = if piece.team() == Team::Police { police } else { thief };
        let from = game.positions.of(piece);
        let step = ai.choose(map, solution, &game.positions, piece, &mut rng);
        game.play(map, step).expect("computer players choose legal moves");
        record.push(RecordLine::moved(map, &game, piece, from));
    }
    let outcome = game.outcome.expect("the loop ends with an outcome");
    record.push(RecordLine::end(&outcome));
    (outcome, record)
}

/// A record read back and checked against the rules: the position before the first move and
/// after every move.
#[derive(Clone, Debug, Serialize)]
pub struct Replay {
    pub map: Map,
    pub mode: Mode,
    pub police: String,
    pub thief: String,
    pub seed: u64,
    /// The game at the start, then after each move (`frames[i]`: after `i` moves).
    pub frames: Vec<Game>,
    /// The record's move lines, in order.
    pub moves: Vec<RecordLine>,
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum RecordError {
    #[error("the record is empty")]
    Empty,
    #[error("line {line}: {message}")]
    Line { line: usize, message: String },
}

impl RecordError {
    pub fn line(&self) -> Option<usize> {
        match self {
            RecordError::Empty => None,
            RecordError::Line { line, .. } => Some(*line),
        }
    }
}

/// Reads a game record (JSON lines, blank lines skipped) and replays it by the rules: every move
/// must be the piece to move stepping from where it stands to a legal square, and an `end` line
/// must agree with the outcome. A record without an `end` line is a game still going on.
pub fn replay(text: &str) -> Result<Replay, RecordError> {
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l.trim())).filter(|(_, l)| !l.is_empty());
    let fail = |line: usize, message: String| RecordError::Line { line, message };
    let read = |line: usize, text: &str| {
        serde_json::from_str::<RecordLine>(text).map_err(|e| fail(line, format!("not a record line: {e}")))
    };
    let (first, text_line) = lines.next().ok_or(RecordError::Empty)?;
    let RecordLine::Start { map: rows, mode, police, thief, seed } = read(first, text_line)? else {
        return Err(fail(first, "the record must begin with its start line (\"type\": \"start\")".into()));
    };
    let map = Map::parse(&rows.join("\n")).map_err(|e| fail(first, format!("the map: {e}")))?;
    let mut game = Game::new(&map, mode);
    let mut frames = vec![game.clone()];
    let mut moves = Vec::new();
    let mut ended = false;
    for (number, text_line) in lines {
        let line = read(number, text_line)?;
        if ended {
            return Err(fail(number, "a line after the end line".into()));
        }
        match &line {
            RecordLine::Start { .. } => return Err(fail(number, "a second start line".into())),
            RecordLine::Move { ply, piece, from, to } => {
                if *piece != game.to_move {
                    return Err(fail(number, format!("{piece:?} moves, but it is {:?}'s turn", game.to_move)));
                }
                let at = map.row_column(game.positions.of(*piece));
                if *from != [at.0, at.1] {
                    return Err(fail(number, format!("{piece:?} moves from {from:?}, but it stands on {:?}", [at.0, at.1])));
                }
                if to[0] >= map.height || to[1] >= map.width {
                    return Err(fail(number, format!("{to:?} is outside the {}x{} map", map.height, map.width)));
                }
                let target = map.square(to[0], to[1]);
                let step = (to != from).then_some(target);
                game.play(&map, step).map_err(|e| fail(number, format!("{e} (from {from:?} to {to:?})")))?;
                if *ply != game.moves {
                    return Err(fail(number, format!("ply {ply}, but this is move {} of the game", game.moves)));
                }
                frames.push(game.clone());
                moves.push(line);
            }
            RecordLine::End { winner, reason, moves: count } => {
                let claimed = Outcome { winner: *winner, reason: *reason, moves: *count };
                if game.outcome != Some(claimed) {
                    return Err(fail(number, format!("the end line says {claimed:?}, but the moves give {:?} (limit {MOVE_LIMIT})", game.outcome)));
                }
                ended = true;
            }
        }
    }
    Ok(Replay { map, mode, police, thief, seed, frames, moves })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::cops::solver::{solve, DEFAULT_MAX_STATES};

    #[test]
    fn a_record_replays_to_its_outcome() {
        let map = Map::random(8, 8, 0.25, &mut ChaCha8Rng::seed_from_u64(3));
        let solution = solve(&map, DEFAULT_MAX_STATES).unwrap();
        let (outcome, record) = play_match_game(&map, Some(&solution), Mode::Thief, Ai::Classic, Ai::Perfect, 5);
        // Every line survives JSON; replaying the moves reaches the same outcome.
        let lines: Vec<String> = record.iter().map(|l| serde_json::to_string(l).unwrap()).collect();
        assert!(lines[0].starts_with(r#"{"type":"start""#), "{}", lines[0]);
        let parsed: Vec<RecordLine> = lines.iter().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(parsed, record);
        let replayed = replay(&lines.join("\n")).unwrap();
        assert_eq!(replayed.map, map);
        assert_eq!(replayed.mode, Mode::Thief);
        assert_eq!(replayed.frames.last().unwrap().outcome, Some(outcome));
        assert_eq!(replayed.frames.len() as u32, outcome.moves + 1);
        assert_eq!(parsed.last(), Some(&RecordLine::end(&outcome)));
        assert_eq!(parsed.len() as u32, outcome.moves + 2);
    }

    #[test]
    fn a_record_that_breaks_the_rules_is_refused_at_its_line() {
        let map = Map::parse("2003\n0110\n4000\n").unwrap();
        let (_, record) = play_match_game(&map, None, Mode::Police, Ai::Classic, Ai::Classic, 1);
        let lines: Vec<String> = record.iter().map(|l| serde_json::to_string(l).unwrap()).collect();
        assert!(replay(&lines.join("\n")).is_ok());
        assert_eq!(replay("\n \n").unwrap_err(), RecordError::Empty);
        // The first move made by the wrong piece.
        let mut wrong = lines.clone();
        wrong[1] = wrong[1].replace("police1", "thief");
        let error = replay(&wrong.join("\n")).unwrap_err();
        assert_eq!(error.line(), Some(2), "{error}");
        assert!(error.to_string().contains("turn"), "{error}");
        // A jump of two squares.
        let mut jump = lines.clone();
        jump[1] = r#"{"type":"move","ply":1,"piece":"police1","from":[0,0],"to":[0,2]}"#.into();
        let error = replay(&jump.join("\n")).unwrap_err();
        assert_eq!(error.line(), Some(2), "{error}");
        // A false end line, a line that is not JSON, a record without its start.
        let mut end = lines.clone();
        let last = end.len() - 1;
        end[last] = end[last].replace("\"moves\":", "\"moves\":1");
        assert_eq!(replay(&end.join("\n")).unwrap_err().line(), Some(end.len()));
        assert_eq!(replay(&format!("{}\nnot json", lines[0])).unwrap_err().line(), Some(2));
        assert_eq!(replay(&lines[1..].join("\n")).unwrap_err().line(), Some(1));
        // A game still going on replays up to where it is.
        let partial = replay(&lines[..4].join("\n")).unwrap();
        assert_eq!(partial.frames.len(), 4);
        assert!(partial.frames[3].outcome.is_none());
    }
}
