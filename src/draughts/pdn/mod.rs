//! PDN 3.0 (Portable Draughts Notation) syntax layer: a streaming reader and a writer.
//!
//! Reading is split by concern, as in the `pgn-reader` crate: the lexer (`lexer.rs`) turns the
//! text into tokens with their line and column, [`reader`] parses them into games and tells a
//! [`Visitor`] about each element, and [`collector`] is the visitor that builds
//! [`GameRecord`]s. [`read_games`] stops at the first error; [`read_archive`] leaves out each
//! defective game and reads all the others, as real archives need.
//!
//! This module only knows the *syntax* of PDN: tags, move numbers, the squares of a move as they
//! are written, comments, variations, setups and results. Whether a move is legal, which variant a
//! `GameType` tag names, or what a FEN means is the business of the rules engine.
//!
//! The grammar followed is the PDN 3.0 *reading* grammar of the standard (the one the official
//! test suite in `games/succeed` and `games/fail` is written against). Real archives deviate from
//! it in a few recurring ways; [`ReadMode::Lenient`] accepts those, reporting each deviation
//! through [`Visitor::warning`], while [`ReadMode::Strict`] rejects everything the standard
//! forbids. See [`reader`] for the exact list.

pub mod collector;
mod lexer;
pub mod reader;
pub mod writer;

#[cfg(test)]
mod reading_tests;

use std::fmt;

pub use collector::{
    read_archive, read_games, ArchiveRead, Defect, GameRecord, MoveNumber, RecordCollector,
    RecordedMove,
};
pub use reader::{NullVisitor, ReadMode, Reader, Visitor};
pub use writer::{
    clock_comment, clock_comment_tenths, parse_clock, write_game, write_record, written_moves,
    WrittenMove,
};

/// What went wrong, in a form tests and callers can match on; the message says the details.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PdnErrorKind {
    /// A character or word that is no PDN token (`.`, `- -`, `9n`, a stray quote...).
    InvalidToken,
    /// A `{` comment, a `"` string or a `/` setup that is still open at the end of the input.
    Unterminated,
    /// A `}` outside a comment; in practice an attempt to nest comments.
    UnmatchedBrace,
    /// A tag that is not `[Name "value"]`.
    InvalidTag,
    /// A tag that follows movetext without a result or `*` ending the game before it.
    MissingGameTerminator,
    /// A move number that is not followed by a move.
    MoveNumberWithoutMove,
    /// A square without a separator and a second square, or a separator without a square.
    IncompleteMove,
    /// A token that may not stand where it stands (a strength mark without a move, a `-`...).
    UnexpectedToken,
    /// A `(` without `)`, a `)` without `(`, or a result inside a variation.
    UnbalancedVariation,
    /// A variation `()` or a game with nothing in it.
    Empty,
    /// A setup command that is not `/FEN "..."/`.
    InvalidSetup,
    /// A move number or NAG too large to be meant.
    NumberOutOfRange,
    /// Something a lenient read accepted; only ever seen through [`Visitor::warning`].
    Deviation,
    /// A defect that a read skipping defective games repaired because its meaning is clear
    /// (moves written as `- -` placeholders, a comment without braces after the last move);
    /// only ever seen through [`Visitor::warning`].
    Repaired,
}

/// A syntax error (or, through [`Visitor::warning`], a tolerated deviation), with the 1-based line
/// and column (counted in characters) where it was found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {col}: {message}")]
pub struct PdnError {
    pub line: usize,
    pub col: usize,
    pub message: String,
    pub kind: PdnErrorKind,
}

impl PdnError {
    /// An error of `kind` at 1-based `line` and `col`.
    pub fn new(kind: PdnErrorKind, line: usize, col: usize, message: impl Into<String>) -> Self {
        PdnError {
            line,
            col,
            message: message.into(),
            kind,
        }
    }
}

/// One square of a move, as written: numeric (`32`) or alphanumeric (`c3`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SquareToken {
    /// A square number. The grammar allows 1..=99 (Canadian 12x12 boards go up to 72); which
    /// numbers exist is for the rules of the game type to say.
    Num(u8),
    /// `file` 0 = 'a', `rank` 1-based; the grammar allows files a-h and ranks 1-8.
    Alg { file: u8, rank: u8 },
}

impl fmt::Display for SquareToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            SquareToken::Num(n) => write!(f, "{n}"),
            SquareToken::Alg { file, rank } => {
                write!(f, "{}{}", char::from(b'a' + file.min(25)), rank)
            }
        }
    }
}

/// A move as written in the movetext, before any rules are applied.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct MoveToken {
    /// The squares in the order written: two for a normal move or a short capture (`15x22`), more
    /// for a capture written with its path (`23x14x7`), and a single destination square for the
    /// Russian compact notation (`ed4`, see `compact_from_file`).
    pub squares: Vec<SquareToken>,
    /// Written with a capture separator (`x` or `:`). False for `-` and for the forms without a
    /// separator (`a3b4`, `ed4`), where the notation does not say.
    pub capture: bool,
    /// Russian compact notation (`ed4`, `gg7`): the file letter of the moving piece, the only
    /// square given being the destination.
    pub compact_from_file: Option<u8>,
    /// The move as it was written, without any whitespace inside it (the grammar lets `1- 7`
    /// stand for `1-7`) and without its strength mark.
    pub text: String,
}

impl fmt::Display for MoveToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// How a game ended. The standard's result tokens are the chess results `1-0`, `0-1`,
/// `1/2-1/2`, the international draughts results `2-0`, `0-2`, `1-1`, the double forfeit `0-0`,
/// and `*` (unknown, or the game separator alone). A lenient read also takes the Russian
/// `1:0`, `0:1`, `1/2:1/2` (and `2:0`, `0:2`, `1:1`, `0:0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GameResult {
    /// The side that moves first in the variant won: `1-0`, `2-0`. That is White in the
    /// international family and Russian, Black in English and pool (records of those games,
    /// e.g. online exports ending on a side with no move left, score the first mover first).
    FirstPlayerWin,
    /// The side that moves second won: `0-1`, `0-2`.
    SecondPlayerWin,
    /// `1/2-1/2`, `1-1`.
    Draw,
    /// `0-0`: both players lost (double forfeit).
    DoubleForfeit,
    /// `*`: unknown or unfinished.
    Unknown,
}

impl GameResult {
    /// The result a result token (or `Result` tag value) stands for, in either the standard
    /// (`-`) or the Russian (`:`) form; `None` for anything else (`4-6`, `?`...).
    pub fn from_token(text: &str) -> Option<GameResult> {
        Some(match text {
            "1-0" | "2-0" | "1:0" | "2:0" => GameResult::FirstPlayerWin,
            "0-1" | "0-2" | "0:1" | "0:2" => GameResult::SecondPlayerWin,
            "1/2-1/2" | "1-1" | "1/2:1/2" | "1:1" => GameResult::Draw,
            "0-0" | "0:0" => GameResult::DoubleForfeit,
            "*" => GameResult::Unknown,
            _ => return None,
        })
    }

    /// The chess-style token, which every PDN reader knows: `1-0`, `0-1`, `1/2-1/2`, `0-0`, `*`.
    pub fn as_str(self) -> &'static str {
        match self {
            GameResult::FirstPlayerWin => "1-0",
            GameResult::SecondPlayerWin => "0-1",
            GameResult::Draw => "1/2-1/2",
            GameResult::DoubleForfeit => "0-0",
            GameResult::Unknown => "*",
        }
    }
}

impl fmt::Display for GameResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The numeric annotation glyph a move strength mark stands for (`!` = `$1`, `?` = `$2`,
/// `!!` = `$3`, `??` = `$4`, `!?` = `$5`, `?!` = `$6`), with or without the parentheses of the
/// `(!)` form. Other combinations the grammar allows (`!?!!!`) have none.
pub fn strength_to_nag(mark: &str) -> Option<u16> {
    let mark = mark
        .strip_prefix('(')
        .and_then(|m| m.strip_suffix(')'))
        .unwrap_or(mark);
    Some(match mark {
        "!" => 1,
        "?" => 2,
        "!!" => 3,
        "??" => 4,
        "!?" => 5,
        "?!" => 6,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_display_names_line_and_column() {
        let e = PdnError::new(PdnErrorKind::InvalidToken, 3, 14, "stray '.'");
        assert_eq!(e.to_string(), "line 3, column 14: stray '.'");
    }

    #[test]
    fn result_tokens_map_to_results() {
        assert_eq!(GameResult::from_token("2-0"), Some(GameResult::FirstPlayerWin));
        assert_eq!(GameResult::from_token("0-2"), Some(GameResult::SecondPlayerWin));
        assert_eq!(GameResult::from_token("1-1"), Some(GameResult::Draw));
        assert_eq!(GameResult::from_token("1/2:1/2"), Some(GameResult::Draw));
        assert_eq!(
            GameResult::from_token("0-0"),
            Some(GameResult::DoubleForfeit)
        );
        assert_eq!(GameResult::from_token("*"), Some(GameResult::Unknown));
        assert_eq!(GameResult::from_token("4-6"), None);
        assert_eq!(GameResult::Draw.to_string(), "1/2-1/2");
    }

    #[test]
    fn strength_marks_map_to_nags() {
        assert_eq!(strength_to_nag("!"), Some(1));
        assert_eq!(strength_to_nag("(?)"), Some(2));
        assert_eq!(strength_to_nag("!?"), Some(5));
        assert_eq!(strength_to_nag("?!"), Some(6));
        assert_eq!(strength_to_nag("!?!!!"), None);
    }

    #[test]
    fn squares_display_as_written() {
        assert_eq!(SquareToken::Num(7).to_string(), "7");
        assert_eq!(SquareToken::Alg { file: 2, rank: 3 }.to_string(), "c3");
    }
}
