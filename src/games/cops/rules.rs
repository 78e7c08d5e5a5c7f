//! The rules: a move takes one piece one square up, down, left or right onto an empty road; a
//! policeman may step onto the thief, which is the capture. The turn order is policeman 1,
//! policeman 2, thief, repeated; the Police Team mode starts with policeman 1, the Thief Team
//! mode with the thief. The thief wins after [`MOVE_LIMIT`] moves (one move = one step of one
//! piece). A piece with no empty road beside it stays where it is, and that counts as its move
//! (the original program's pieces cannot pass otherwise).

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::map::{Map, Square};

/// The thief wins when this many moves have been made without a capture.
pub const MOVE_LIMIT: u32 = 150;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Piece {
    Police1,
    Police2,
    Thief,
}

impl Piece {
    /// The piece that moves after this one (the same cycle in both modes).
    pub fn next(self) -> Piece {
        match self {
            Piece::Police1 => Piece::Police2,
            Piece::Police2 => Piece::Thief,
            Piece::Thief => Piece::Police1,
        }
    }

    pub fn team(self) -> Team {
        if self == Piece::Thief { Team::Thief } else { Team::Police }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Team {
    Police,
    Thief,
}

/// Which team the human plays: Police Team starts with policeman 1, Thief Team with the thief.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Police,
    Thief,
}

impl Mode {
    pub fn first_piece(self) -> Piece {
        match self {
            Mode::Police => Piece::Police1,
            Mode::Thief => Piece::Thief,
        }
    }
}

/// Where the three pieces stand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Positions {
    pub police1: Square,
    pub police2: Square,
    pub thief: Square,
}

impl Positions {
    pub fn of(&self, piece: Piece) -> Square {
        match piece {
            Piece::Police1 => self.police1,
            Piece::Police2 => self.police2,
            Piece::Thief => self.thief,
        }
    }

    pub fn set(&mut self, piece: Piece, square: Square) {
        match piece {
            Piece::Police1 => self.police1 = square,
            Piece::Police2 => self.police2 = square,
            Piece::Thief => self.thief = square,
        }
    }

    /// The squares `piece` may step to: road neighbours not held by another piece, except that a
    /// policeman may step onto the thief. Empty when the piece must stay.
    pub fn legal_steps(&self, map: &Map, piece: Piece) -> Vec<Square> {
        map.road_neighbours(self.of(piece))
            // Only the policemen block: a policeman may step onto the thief.
            .filter(|&to| to != self.police1 && to != self.police2)
            .collect()
    }

    pub fn is_capture(&self) -> bool {
        self.police1 == self.thief || self.police2 == self.thief
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// A policeman stepped onto the thief.
    Capture,
    /// [`MOVE_LIMIT`] moves went by without a capture.
    MoveLimit,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    pub winner: Team,
    pub reason: Reason,
    /// Moves made in the whole game.
    pub moves: u32,
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum MoveError {
    #[error("the game is over")]
    GameOver,
    #[error("{piece:?} cannot step from square {from} to square {to}")]
    Illegal { piece: Piece, from: Square, to: Square },
    #[error("{piece:?} has a legal step, so it may not stay")]
    MayNotStay { piece: Piece },
}

/// A game in progress.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Game {
    pub positions: Positions,
    pub to_move: Piece,
    pub moves: u32,
    pub outcome: Option<Outcome>,
}

impl Game {
    pub fn new(map: &Map, mode: Mode) -> Game {
        Game { positions: map.start, to_move: mode.first_piece(), moves: 0, outcome: None }
    }

    /// The squares the piece to move may step to (empty: it must stay).
    pub fn legal_steps(&self, map: &Map) -> Vec<Square> {
        self.positions.legal_steps(map, self.to_move)
    }

    /// Plays one move of the piece to move: `Some(square)` steps there, `None` stays (allowed only
    /// when it has no legal step).
    pub fn play(&mut self, map: &Map, step: Option<Square>) -> Result<(), MoveError> {
        if self.outcome.is_some() {
            return Err(MoveError::GameOver);
        }
        let piece = self.to_move;
        let steps = self.legal_steps(map);
        match step {
            Some(to) if steps.contains(&to) => self.positions.set(piece, to),
            Some(to) => return Err(MoveError::Illegal { piece, from: self.positions.of(piece), to }),
            None if steps.is_empty() => {}
            None => return Err(MoveError::MayNotStay { piece }),
        }
        self.moves += 1;
        self.to_move = piece.next();
        if self.positions.is_capture() {
            self.outcome = Some(Outcome { winner: Team::Police, reason: Reason::Capture, moves: self.moves });
        } else if self.moves >= MOVE_LIMIT {
            self.outcome = Some(Outcome { winner: Team::Thief, reason: Reason::MoveLimit, moves: self.moves });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_step_onto_empty_roads_and_a_policeman_captures() {
        // 2 0 3
        // 1 1 0
        // 4 0 0
        let map = Map::parse("203\n110\n400\n").unwrap();
        let mut game = Game::new(&map, Mode::Police);
        assert_eq!(game.to_move, Piece::Police1);
        assert_eq!(game.legal_steps(&map), vec![1]);
        assert_eq!(game.play(&map, Some(3)), Err(MoveError::Illegal { piece: Piece::Police1, from: 0, to: 3 }));
        assert_eq!(game.play(&map, None), Err(MoveError::MayNotStay { piece: Piece::Police1 }));
        game.play(&map, Some(1)).unwrap();
        assert_eq!(game.to_move, Piece::Police2);
        game.play(&map, Some(7)).unwrap();
        assert_eq!(game.to_move, Piece::Thief);
        // The thief may not step onto a policeman.
        assert_eq!(game.legal_steps(&map), vec![5]);
        game.play(&map, Some(5)).unwrap();
        assert_eq!(game.to_move, Piece::Police1);
        game.play(&map, Some(2)).unwrap();
        game.play(&map, Some(8)).unwrap();
        assert_eq!(game.legal_steps(&map), Vec::<Square>::new(), "the thief is boxed in");
        game.play(&map, None).unwrap();
        // Policeman 1 steps onto the thief at 5: capture.
        game.play(&map, Some(5)).unwrap();
        assert_eq!(game.outcome, Some(Outcome { winner: Team::Police, reason: Reason::Capture, moves: 7 }));
        assert_eq!(game.play(&map, None), Err(MoveError::GameOver));
    }

    #[test]
    fn thief_mode_starts_with_the_thief_and_policemen_do_not_share_a_square() {
        let map = Map::parse("240\n003\n").unwrap();
        let game = Game::new(&map, Mode::Thief);
        assert_eq!(game.to_move, Piece::Thief);
        // Policeman 1 may not step onto policeman 2.
        assert_eq!(map.start.legal_steps(&map, Piece::Police1), vec![3]);
    }

    #[test]
    fn the_thief_wins_after_the_move_limit() {
        // The two policemen are walled off from the thief.
        let map = Map::parse("2410\n0010\n0013\n").unwrap();
        let mut game = Game::new(&map, Mode::Thief);
        let mut moves = 0;
        while game.outcome.is_none() {
            let step = game.legal_steps(&map).first().copied();
            game.play(&map, step).unwrap();
            moves += 1;
        }
        assert_eq!(moves, MOVE_LIMIT);
        assert_eq!(game.outcome, Some(Outcome { winner: Team::Thief, reason: Reason::MoveLimit, moves: MOVE_LIMIT }));
    }
}
