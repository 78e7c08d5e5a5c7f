//! The line protocol Dots engines speak to a driver (the one oppai's command-line player reads):
//! one JSON request per line on the engine's stdin, one JSON response per line on its stdout.
//!
//! - `{"command":"Init","width":20,"height":20}` → `{"command":"Init"}`
//! - `{"command":"PutPoint","coords":{"x":3,"y":4},"player":"Red"}` → `{"command":"PutPoint","put":true}`
//! - `{"command":"Undo"}` → `{"command":"Undo","undone":true}`
//! - `{"command":"Analyze","player":"Black","constraint":{"type":"Time","value":1000}}` →
//!   `{"command":"Analyze","moves":[{"coords":{"x":5,"y":5},"weight":0.61}, ...]}`
//!
//! Written from the message shapes alone, so boardwatch's engine can be driven by the same
//! drivers (`boardwatch dots engine`) and can drive another engine in a match (`boardwatch dots
//! match`). [`EngineSession`] applies requests to a board; the search is passed in, so this
//! module stays free of clocks and I/O.

use serde::{Deserialize, Serialize};

use super::board::{Board, Player, Rules};

/// The protocol names the players with a capital (`"Red"`, `"Black"`); red moves first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ProtocolPlayer {
    Red,
    Black,
}

impl From<Player> for ProtocolPlayer {
    fn from(p: Player) -> Self {
        match p {
            Player::Red => ProtocolPlayer::Red,
            Player::Black => ProtocolPlayer::Black,
        }
    }
}

impl From<ProtocolPlayer> for Player {
    fn from(p: ProtocolPlayer) -> Self {
        match p {
            ProtocolPlayer::Red => Player::Red,
            ProtocolPlayer::Black => Player::Black,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Coords {
    pub x: u32,
    pub y: u32,
}

/// How long the engine may think: milliseconds, or an engine-defined effort in 0..=1.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "value")]
pub enum Constraint {
    Time(u64),
    Complexity(f64),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command")]
pub enum Request {
    Init { width: u32, height: u32 },
    PutPoint { coords: Coords, player: ProtocolPlayer },
    Undo,
    Analyze { player: ProtocolPlayer, constraint: Constraint },
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct WeightedMove {
    pub coords: Coords,
    pub weight: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command")]
pub enum Response {
    Init,
    PutPoint { put: bool },
    Undo { undone: bool },
    Analyze { moves: Vec<WeightedMove> },
}

impl Response {
    /// The move an `Analyze` answer recommends: the heaviest (the first of equals).
    pub fn best_move(&self) -> Option<Coords> {
        match self {
            Response::Analyze { moves } => {
                moves.iter().fold(None::<&WeightedMove>, |best, m| match best {
                    Some(b) if b.weight >= m.weight => Some(b),
                    _ => Some(m),
                })
            }
            _ => None,
        }
        .map(|m| m.coords)
    }
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ProtocolError {
    #[error("{0} before Init")]
    NotInitialised(&'static str),
    #[error("Init {width}x{height}: {reason}")]
    BadSize { width: u32, height: u32, reason: String },
    #[error("Analyze for {asked:?}, but {to_move:?} is to move: this engine plays the players in turn")]
    NotToMove { asked: ProtocolPlayer, to_move: ProtocolPlayer },
}

/// One engine's game as a driver sees it. `search` is asked for the move of the player to move
/// under the constraint; None when it has none (the game is over).
pub struct EngineSession {
    rules: Rules,
    board: Option<Board>,
}

impl EngineSession {
    pub fn new(rules: Rules) -> EngineSession {
        EngineSession { rules, board: None }
    }

    pub fn board(&self) -> Option<&Board> {
        self.board.as_ref()
    }

    pub fn handle(
        &mut self,
        request: Request,
        search: &mut dyn FnMut(&Board, Constraint) -> Option<(usize, usize)>,
    ) -> Result<Response, ProtocolError> {
        match request {
            Request::Init { width, height } => {
                let board = Board::new(width as usize, height as usize, self.rules)
                    .map_err(|reason| ProtocolError::BadSize { width, height, reason })?;
                self.board = Some(board);
                Ok(Response::Init)
            }
            Request::PutPoint { coords, player } => {
                let board = self.board.as_mut().ok_or(ProtocolError::NotInitialised("PutPoint"))?;
                // A point taken, out of play, off the board or after the end is refused, as the
                // protocol says: `put: false`, and the game goes on unchanged.
                let put = board.play_as(coords.x as usize, coords.y as usize, player.into()).is_ok();
                Ok(Response::PutPoint { put })
            }
            Request::Undo => {
                let board = self.board.as_mut().ok_or(ProtocolError::NotInitialised("Undo"))?;
                Ok(Response::Undo { undone: board.undo().is_some() })
            }
            Request::Analyze { player, constraint } => {
                let board = self.board.as_ref().ok_or(ProtocolError::NotInitialised("Analyze"))?;
                if board.end().is_some() {
                    return Ok(Response::Analyze { moves: Vec::new() });
                }
                if Player::from(player) != board.to_move() {
                    return Err(ProtocolError::NotToMove { asked: player, to_move: board.to_move().into() });
                }
                let moves = search(board, constraint)
                    .map(|(x, y)| WeightedMove { coords: Coords { x: x as u32, y: y as u32 }, weight: 1.0 })
                    .into_iter()
                    .collect();
                Ok(Response::Analyze { moves })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_free(board: &Board, _: Constraint) -> Option<(usize, usize)> {
        board.free_points().first().copied()
    }

    #[test]
    fn requests_and_responses_read_and_write_as_the_protocol_spells_them() {
        let cases: [(&str, Request); 4] = [
            (r#"{"command":"Init","width":39,"height":32}"#, Request::Init { width: 39, height: 32 }),
            (
                r#"{"command":"PutPoint","coords":{"x":1,"y":2},"player":"Red"}"#,
                Request::PutPoint { coords: Coords { x: 1, y: 2 }, player: ProtocolPlayer::Red },
            ),
            (r#"{"command":"Undo"}"#, Request::Undo),
            (
                r#"{"command":"Analyze","player":"Black","constraint":{"type":"Time","value":7000}}"#,
                Request::Analyze { player: ProtocolPlayer::Black, constraint: Constraint::Time(7000) },
            ),
        ];
        for (text, request) in cases {
            assert_eq!(serde_json::from_str::<Request>(text).unwrap(), request, "{text}");
            assert_eq!(serde_json::to_string(&request).unwrap(), text);
        }
        let answer: Response = serde_json::from_str(
            r#"{"command":"Analyze","moves":[{"coords":{"x":1,"y":2},"weight":0.25},{"coords":{"x":3,"y":4},"weight":0.5},{"coords":{"x":5,"y":6},"weight":0.5}]}"#,
        )
        .unwrap();
        assert_eq!(answer.best_move(), Some(Coords { x: 3, y: 4 }), "the heaviest, first of equals");
        assert_eq!(serde_json::to_string(&Response::PutPoint { put: true }).unwrap(), r#"{"command":"PutPoint","put":true}"#);
        assert_eq!(Response::Analyze { moves: vec![] }.best_move(), None);
    }

    #[test]
    fn a_session_plays_refuses_takes_back_and_answers_for_the_player_to_move() {
        let mut session = EngineSession::new(Rules::Standard);
        let mut search = first_free;
        assert_eq!(session.handle(Request::Undo, &mut search), Err(ProtocolError::NotInitialised("Undo")));
        assert!(matches!(session.handle(Request::Init { width: 3, height: 9 }, &mut search), Err(ProtocolError::BadSize { .. })));
        assert_eq!(session.handle(Request::Init { width: 6, height: 5 }, &mut search), Ok(Response::Init));
        let put = |x, y, player| Request::PutPoint { coords: Coords { x, y }, player };
        assert_eq!(session.handle(put(0, 0, ProtocolPlayer::Red), &mut search), Ok(Response::PutPoint { put: true }));
        assert_eq!(session.handle(put(0, 0, ProtocolPlayer::Black), &mut search), Ok(Response::PutPoint { put: false }), "taken");
        assert_eq!(session.handle(put(6, 0, ProtocolPlayer::Black), &mut search), Ok(Response::PutPoint { put: false }), "off the board");
        let analyze = |player| Request::Analyze { player, constraint: Constraint::Time(10) };
        assert_eq!(
            session.handle(analyze(ProtocolPlayer::Red), &mut search),
            Err(ProtocolError::NotToMove { asked: ProtocolPlayer::Red, to_move: ProtocolPlayer::Black })
        );
        let answer = session.handle(analyze(ProtocolPlayer::Black), &mut search).unwrap();
        assert_eq!(answer.best_move(), Some(Coords { x: 1, y: 0 }), "the search's move for black");
        assert_eq!(session.board().unwrap().move_count(), 1, "analysing plays nothing");
        assert_eq!(session.handle(Request::Undo, &mut search), Ok(Response::Undo { undone: true }));
        assert_eq!(session.handle(Request::Undo, &mut search), Ok(Response::Undo { undone: false }));
        assert_eq!(session.board().unwrap().to_move(), Player::Red);
    }
}
