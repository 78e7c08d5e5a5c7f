//! Computer players by name, games as JSON lines, and whole games between two computer players.
//!
//! A record is one `start` line (the map's rows, the mode, the players, the random seed), one
//! `move` line per move (the piece, from and to as [row, column], equal when it stayed), and one
//! `end` line (winner, reason, moves), so a page or a script can replay it move by move.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::classic;
use super::map::{Map, Square};
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

fn ai_name(ai: Ai) -> &'static str {
    match ai {
        Ai::Classic => "classic",
        Ai::Perfect => "perfect",
    }
}

/// Plays one whole game between two computer players; returns its outcome and record.
pub fn play_match_game(map: &Map, solution: Option<&Solution>, mode: Mode, police: Ai, thief: Ai, seed: u64) -> (Outcome, Vec<RecordLine>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut game = Game::new(map, mode);
    let mut record = vec![RecordLine::start(map, mode, ai_name(police), ai_name(thief), seed)];
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
        let RecordLine::Start { map: rows, mode, .. } = &parsed[0] else { panic!("no start line") };
        let replay_map = Map::parse(&rows.join("\n")).unwrap();
        let mut game = Game::new(&replay_map, *mode);
        for line in &parsed[1..parsed.len() - 1] {
            let RecordLine::Move { piece, to, .. } = line else { panic!("not a move: {line:?}") };
            assert_eq!(*piece, game.to_move);
            let to = replay_map.square(to[0], to[1]);
            let step = (to != game.positions.of(*piece)).then_some(to);
            game.play(&replay_map, step).unwrap();
        }
        assert_eq!(game.outcome, Some(outcome));
        assert_eq!(parsed.last(), Some(&RecordLine::end(&outcome)));
        assert_eq!(parsed.len() as u32, outcome.moves + 2);
    }
}
