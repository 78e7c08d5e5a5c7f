//! The game as the tracker wrote it down: moves with the position after each, setups made by the
//! operator, the result; and its PDN text.

use serde::{Deserialize, Serialize};

use crate::draughts::position::Color;
use crate::draughts::rules::Variant;

/// One recorded move.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordedMove {
    pub side: Color,
    /// PDN move text (full path only where ambiguous).
    pub text: String,
    /// Every square the piece stood on.
    pub path: String,
    /// The position after the move.
    pub fen_after: String,
    /// Time of the observation that completed it.
    pub t: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum RecordItem {
    Move(RecordedMove),
    /// The operator set the board as a new start in the middle of the game (PDN 3.0 setup
    /// command `/FEN "..."/`).
    Setup {
        fen: String,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum GameResult {
    Win(Color),
    Draw,
}

impl GameResult {
    /// The PDN result text. English and pool records write the first player's (Black's) score
    /// first: `1-0` is a Black win (so the ACF archive defines it, and its games ending with
    /// Black well ahead in material are `1-0`). The other variants, where White moves first,
    /// write White's score first.
    pub fn pdn(self, variant: Variant) -> &'static str {
        let black_first = matches!(variant, Variant::English | Variant::Pool);
        match (self, black_first) {
            (GameResult::Draw, _) => "1/2-1/2",
            (GameResult::Win(Color::Black), true) | (GameResult::Win(Color::White), false) => "1-0",
            (GameResult::Win(_), _) => "0-1",
        }
    }
}

/// One game: where it started, what happened, how it ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameRecord {
    pub variant: Variant,
    /// The start position when it is not the standard one (PDN `FEN` tag).
    pub setup_fen: Option<String>,
    /// The side to move at the start.
    pub first_to_move: Color,
    pub items: Vec<RecordItem>,
    pub result: Option<GameResult>,
}

impl GameRecord {
    pub fn new(variant: Variant, setup_fen: Option<String>, first_to_move: Color) -> GameRecord {
        GameRecord { variant, setup_fen, first_to_move, items: Vec::new(), result: None }
    }

    pub fn moves(&self) -> impl Iterator<Item = &RecordedMove> {
        self.items.iter().filter_map(|item| match item {
            RecordItem::Move(m) => Some(m),
            RecordItem::Setup { .. } => None,
        })
    }

    /// The move texts in order (setups left out).
    pub fn move_texts(&self) -> Vec<String> {
        self.moves().map(|m| m.text.clone()).collect()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty() && self.setup_fen.is_none() && self.result.is_none()
    }
}

/// The PDN text of the games. Points at the project's PDN writer once it exists; until then the
/// minimal writer below.
pub fn write_pdn(games: &[GameRecord]) -> String {
    write_pdn_minimal(games)
}

/// A minimal PDN 3.0 writer, standing in for `boardwatch::draughts::pdn::writer` (being written
/// elsewhere): tags `GameType`, `FEN` (non-standard start), `Result`; numbered movetext; setups
/// as `/FEN "..."/` commands; no comments, no clock times.
// TODO(lead): replace with the shared PDN writer when it lands in main.
pub fn write_pdn_minimal(games: &[GameRecord]) -> String {
    let mut out = String::new();
    for game in games {
        let result = game.result.map_or("*", |r| r.pdn(game.variant));
        out.push_str(&format!("[GameType \"{}\"]\n", game.variant.game_type()));
        if let Some(fen) = &game.setup_fen {
            out.push_str(&format!("[FEN \"{fen}\"]\n"));
        }
        out.push_str(&format!("[Result \"{result}\"]\n\n"));

        let first = game.variant.rules().first_mover;
        let mut tokens: Vec<String> = Vec::new();
        let mut number = 1u32;
        // After a start or setup, a move by the second player is written `N...`.
        let mut fresh = true;
        for item in &game.items {
            match item {
                RecordItem::Setup { fen } => {
                    tokens.push(format!("/FEN \"{fen}\"/"));
                    fresh = true;
                }
                RecordItem::Move(m) => {
                    if m.side == first {
                        tokens.push(format!("{number}."));
                    } else if fresh {
                        tokens.push(format!("{number}..."));
                    }
                    tokens.push(m.text.clone());
                    if m.side != first {
                        number += 1;
                    }
                    fresh = false;
                }
            }
        }
        tokens.push(result.to_string());
        out.push_str(&wrap(&tokens, 80));
        out.push_str("\n\n");
    }
    out
}

fn wrap(tokens: &[String], width: usize) -> String {
    let mut lines = vec![String::new()];
    for token in tokens {
        let line = lines.last_mut().expect("at least one line");
        if !line.is_empty() && line.len() + 1 + token.len() > width {
            lines.push(token.clone());
        } else {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(token);
        }
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mv(side: Color, text: &str) -> RecordItem {
        RecordItem::Move(RecordedMove { side, text: text.into(), path: text.into(), fen_after: String::new(), t: None })
    }

    #[test]
    fn minimal_pdn_numbers_moves_and_writes_setups() {
        let mut game = GameRecord::new(Variant::English, None, Color::Black);
        game.items = vec![
            mv(Color::Black, "11-15"),
            mv(Color::White, "23-19"),
            mv(Color::Black, "8-11"),
            RecordItem::Setup { fen: "W:W19,23:B11,15".into() },
            mv(Color::White, "19-16"),
        ];
        game.result = Some(GameResult::Win(Color::Black));
        let text = write_pdn(&[game]);
        assert_eq!(
            text,
            "[GameType \"21\"]\n[Result \"1-0\"]\n\n1. 11-15 23-19 2. 8-11 /FEN \"W:W19,23:B11,15\"/ 2... 19-16 1-0\n\n"
        );
    }

    #[test]
    fn white_first_variants_and_setup_tags() {
        let mut game = GameRecord::new(Variant::Russian, Some("B:Wc3:Bd6".into()), Color::Black);
        game.items = vec![mv(Color::Black, "d6-e5"), mv(Color::White, "c3-d4")];
        let text = write_pdn(&[game]);
        assert!(text.contains("[FEN \"B:Wc3:Bd6\"]"));
        assert!(text.contains("1... d6-e5 2. c3-d4 *"), "{text}");
        assert_eq!(GameResult::Win(Color::White).pdn(Variant::Russian), "1-0");
        assert_eq!(GameResult::Win(Color::White).pdn(Variant::Pool), "0-1");
    }
}
