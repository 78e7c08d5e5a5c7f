//! What the tracker reports: one [`Event`] per thing that happened, carrying the seed's log line
//! verbatim plus structured fields.
//!
//! Players are numbered as in the seed: **Player1 = Black** (the seed's red, on rows 0-2, moving
//! first in pool and English), **Player2 = White** (yellow), in every variant, also where White
//! moves first.
//!
//! Lines are numbered like the seed's log window (`2: OK: Player1- Move Success`): the count of
//! lines since the last `Init Ready`, which is always line 1. The seed's own lines are:
//! `Init Ready`, `OK: PlayerN- Move Success`, `OK: PlayerN- Capture success`,
//! `Error: PlayerN- Obligatory Capture`, `Error: PlayerN- Invalid move`,
//! `OK: PlayerN- Changed pawn to dame`, `Error: PlayerN- Failed Change pawn to dame`,
//! `Now is OK`, `InitAndValid Success`, `InitAndValid Failed`. Events the seed does not have
//! (uncertain readings, corrections, end of game, operator commands) use lines of the same shape,
//! listed at [`EventKind`].

use serde::{Deserialize, Serialize};

use crate::draughts::position::Color;

/// The seed's player number of a side.
pub fn player_number(side: Color) -> u8 {
    match side {
        Color::Black => 1,
        Color::White => 2,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// `Init Ready`: a start position was set (standard start, or "set as start").
    Init,
    /// `InitAndValid Success` / `InitAndValid Failed`: the board was checked against the start.
    InitAndValid,
    /// `OK: PlayerN- Move Success` or `OK: PlayerN- Capture success`: a complete move, recorded.
    Move,
    /// `OK: PlayerN- Capture success`: one visible jump of a capture still under way.
    CaptureStep,
    /// `OK: PlayerN- Changed pawn to dame`: the crowning piece was put down.
    Crowned,
    /// `OK: PlayerN- Move corrected`: the last move, not yet answered, became another one (a king
    /// slid on after being set down).
    Revised,
    /// `Error: PlayerN- Invalid move` / `Obligatory Capture` / `Failed Change pawn to dame`: the
    /// tracker now waits for the board to return to the last valid state (or, in tolerant mode,
    /// to show a position legally reached from it). In tolerant mode a board nothing explains
    /// is an error only once it has stayed `error_after` seconds.
    Error,
    /// `Now is OK`: the board is back in the last valid state.
    Recovered,
    /// `Now is OK: record resynchronised`: after an error, the board showed a position clearly
    /// reached from the last valid one by legal moves (the error was a misread, or the wrong move
    /// was taken back and play went on); those moves follow as their own events. Not in strict
    /// mode, where only the last valid state ends an error, as in the original program.
    Resynchronised,
    /// `Wait: PlayerN- Board unclear`: no state clearly explains the observation; nothing changes.
    Uncertain,
    /// `Game over: ...` with the result.
    GameOver,
    /// `Back: PlayerN to move`: the operator undid the last accepted state.
    Back,
    /// `Clear`: the operator dropped the game.
    Cleared,
    /// `OK: PlayerN- Reading confirmed`: the operator took the likeliest reading of an unclear
    /// board as right; the events of that reading follow.
    Confirmed,
    /// `Wait: PlayerN- Reading rejected`: the operator dismissed an unclear board.
    Rejected,
    /// `Referee: strict (the original program's)` / `Referee: tolerant`: the operator switched
    /// the referee.
    Referee,
    /// `Tags: Round 3, White Ann Smith, ...`: the round's tags for this board's games, as the
    /// hall's arbiter set them.
    Tags,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    InvalidMove,
    ObligatoryCapture,
    FailedCrowning,
}

impl ErrorKind {
    pub fn seed_text(self) -> &'static str {
        match self {
            ErrorKind::InvalidMove => "Invalid move",
            ErrorKind::ObligatoryCapture => "Obligatory Capture",
            ErrorKind::FailedCrowning => "Failed Change pawn to dame",
        }
    }
}

/// One report. Optional fields are left out of the JSON when empty.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Counts every event of the tracker, from 1, never reset.
    pub seq: u64,
    /// The time of the observation that caused it, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t: Option<f64>,
    pub kind: EventKind,
    /// The log line as the seed's window shows it, numbered: `2: OK: Player1- Move Success`.
    pub line: String,
    /// The same line without its number.
    pub text: String,
    /// The player the line names (1 = Black, 2 = White); the winner for `game_over`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player: Option<u8>,
    /// The move in the variant's PDN notation (full path only where ambiguous).
    #[serde(rename = "move", default, skip_serializing_if = "Option::is_none")]
    pub mv: Option<String>,
    /// Every square the piece stood on, in the variant's notation (for a capture step: so far).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The squares of the pieces taken (for a capture step: so far), in jump order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub captured: Vec<String>,
    /// The move made a king.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crowned: Option<bool>,
    /// The position after the event, as a PDN FEN.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fen: Option<String>,
    /// For errors: the squares that differ from the last valid state, as the seed's diagnostic
    /// log prints them: `[row][col]` in board coordinates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorKind>,
    /// The seed's diagnostic `Current player: N` after the event: who is to move.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_player: Option<u8>,
    /// PDN result (`game_over`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// A move the camera never saw finished: a later board that only it and the moves after it
    /// explain showed it was made (several plies in one reading).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inferred: Option<bool>,
    /// Other moves that give the same board (several plies in one reading): the board cannot
    /// tell which of them was played.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alternatives: Vec<String>,
    /// `init_and_valid`: whether the board showed the start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid: Option<bool>,
    /// Free text for people: what was unclear, why the game ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl Event {
    pub fn new(seq: u64, line_number: u32, t: Option<f64>, kind: EventKind, text: String) -> Event {
        Event {
            seq,
            t,
            kind,
            line: format!("{line_number}: {text}"),
            text,
            player: None,
            mv: None,
            path: None,
            captured: Vec::new(),
            crowned: None,
            fen: None,
            changed: Vec::new(),
            error: None,
            current_player: None,
            result: None,
            valid: None,
            inferred: None,
            alternatives: Vec::new(),
            detail: None,
        }
    }
}

/// `OK: Player1- Move Success` and friends.
pub fn ok_line(side: Color, what: &str) -> String {
    format!("OK: Player{}- {what}", player_number(side))
}

pub fn error_line(side: Color, kind: ErrorKind) -> String {
    format!("Error: Player{}- {}", player_number(side), kind.seed_text())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_match_the_seed() {
        assert_eq!(ok_line(Color::Black, "Move Success"), "OK: Player1- Move Success");
        assert_eq!(error_line(Color::White, ErrorKind::InvalidMove), "Error: Player2- Invalid move");
        assert_eq!(error_line(Color::Black, ErrorKind::FailedCrowning), "Error: Player1- Failed Change pawn to dame");
        let e = Event::new(7, 3, None, EventKind::Error, error_line(Color::White, ErrorKind::InvalidMove));
        assert_eq!(e.line, "3: Error: Player2- Invalid move");
        let json = serde_json::to_string(&e).unwrap();
        assert_eq!(
            json,
            r#"{"seq":7,"kind":"error","line":"3: Error: Player2- Invalid move","text":"Error: Player2- Invalid move"}"#
        );
    }
}
