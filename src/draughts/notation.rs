//! Square names and move text as PDN 3.0 writes them for each variant, and resolution of
//! written moves (short or full-path captures, Russian compact `ed4`) against the legal moves.

use super::bitboard::{col_of, is_dark, row_of, square, Square};
use super::movegen::{generate, Duplicates, Move, MoveList};
use super::position::Position;
use super::rules::{Rules, SquareNotation};

/// A square as written: a number (1-32) or a file and rank (`a`=0, rank 1-8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WrittenSquare {
    Number(u8),
    Algebraic { file: u8, rank: u8 },
}

/// The column as a player sees it: mirrored boards (Italian, Spanish) reverse the columns.
fn physical_col(sq: Square, rules: &Rules) -> u8 {
    if rules.mirrored {
        7 - col_of(sq)
    } else {
        col_of(sq)
    }
}

fn internal_col(physical: u8, rules: &Rules) -> u8 {
    if rules.mirrored {
        7 - physical
    } else {
        physical
    }
}

/// The square at (row, col) of the board as the players and the camera see it, row 0 at Black's
/// edge: the same square on standard boards, the column mirrored on Italian and Spanish ones.
/// `None` for a light (non-playing) square.
pub fn square_at(row: u8, col: u8, rules: &Rules) -> Option<Square> {
    if row > 7 || col > 7 {
        return None;
    }
    let sq = square(row, internal_col(col, rules));
    is_dark(sq).then_some(sq)
}

/// The (row, col) as seen of an internal square: the inverse of [`square_at`].
pub fn seen_at(sq: Square, rules: &Rules) -> (u8, u8) {
    (row_of(sq), physical_col(sq, rules))
}

/// The 1-32 number of a playing square: rows from Black's edge, left to right as seen.
pub fn square_number(sq: Square, rules: &Rules) -> u8 {
    row_of(sq) * 4 + physical_col(sq, rules) / 2 + 1
}

pub fn square_from_number(n: u8, rules: &Rules) -> Option<Square> {
    if !(1..=32).contains(&n) {
        return None;
    }
    let row = (n - 1) / 4;
    let k = (n - 1) % 4;
    // The playing square of the pair of physical columns 2k, 2k+1 in this row.
    (0..2)
        .map(|offset| square(row, internal_col(2 * k + offset, rules)))
        .find(|&sq| is_dark(sq))
}

/// Algebraic squares are seen from the side that moves first: `a1` is White's bottom-left
/// corner in the variants where White starts, and in English or pool written algebraically
/// (as online servers export them) the first mover, Black, sits on ranks 1-3, so the board is
/// turned half way round.
fn algebraic_turned(rules: &Rules) -> bool {
    rules.first_mover == super::position::Color::Black
}

pub fn square_algebraic(sq: Square, rules: &Rules) -> String {
    let (row, col) = (row_of(sq), physical_col(sq, rules));
    let (file, rank) = if algebraic_turned(rules) { (7 - col, row + 1) } else { (col, 8 - row) };
    format!("{}{rank}", (b'a' + file) as char)
}

pub fn square_from_algebraic(file: u8, rank: u8, rules: &Rules) -> Option<Square> {
    if file > 7 || !(1..=8).contains(&rank) {
        return None;
    }
    let (row, col) = if algebraic_turned(rules) { (rank - 1, 7 - file) } else { (8 - rank, file) };
    let sq = square(row, internal_col(col, rules));
    is_dark(sq).then_some(sq)
}

/// The square's name in the variant's notation.
pub fn square_name(sq: Square, rules: &Rules) -> String {
    match rules.notation {
        SquareNotation::Numeric => square_number(sq, rules).to_string(),
        SquareNotation::Algebraic => square_algebraic(sq, rules),
    }
}

pub fn resolve_square(w: WrittenSquare, rules: &Rules) -> Option<Square> {
    match w {
        WrittenSquare::Number(n) => square_from_number(n, rules),
        WrittenSquare::Algebraic { file, rank } => square_from_algebraic(file, rank, rules),
    }
}

/// Parse one square name, numeric or algebraic, whatever the variant's default.
pub fn parse_square(text: &str, rules: &Rules) -> Option<Square> {
    let text = text.trim();
    let written = if let Ok(n) = text.parse::<u8>() {
        WrittenSquare::Number(n)
    } else {
        let bytes = text.as_bytes();
        if bytes.len() != 2 || !bytes[0].is_ascii_alphabetic() || !bytes[1].is_ascii_digit() {
            return None;
        }
        WrittenSquare::Algebraic { file: bytes[0].to_ascii_lowercase() - b'a', rank: bytes[1] - b'0' }
    };
    resolve_square(written, rules)
}

/// The move as PDN writes it: `11-15`, `15x22`, or the full path `9x18x27` when another legal
/// capture shares its start and end. `legal` are the legal moves of the position it is played in.
pub fn move_text(m: &Move, legal: &[Move], rules: &Rules) -> String {
    if !m.is_capture() {
        return format!("{}-{}", square_name(m.from, rules), square_name(m.to, rules));
    }
    let ambiguous = legal.iter().any(|o| o.from == m.from && o.to == m.to && !o.same_effect(m));
    let sep = rules.capture_separator.to_string();
    if ambiguous {
        m.path().iter().map(|&s| square_name(s, rules)).collect::<Vec<_>>().join(&sep)
    } else {
        format!("{}{sep}{}", square_name(m.from, rules), square_name(m.to, rules))
    }
}

/// The full path, whatever the ambiguity (for logs that want every landing square).
pub fn full_path_text(m: &Move, rules: &Rules) -> String {
    let sep = if m.is_capture() { rules.capture_separator.to_string() } else { "-".to_string() };
    m.path().iter().map(|&s| square_name(s, rules)).collect::<Vec<_>>().join(&sep)
}

/// A written move, as the PDN reader hands it over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WrittenMove {
    pub squares: Vec<WrittenSquare>,
    /// Russian compact notation `ed4`: only the start square's file is written.
    pub from_file: Option<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    #[error("`{0}` names a square that is not a playing square")]
    BadSquare(String),
    #[error("no legal move matches `{0}`")]
    Illegal(String),
    #[error("`{text}` is ambiguous: it matches {count} legal moves")]
    Ambiguous { text: String, count: usize },
}

/// Find the legal move a written move means. Separators are not trusted (old records write
/// captures with `-`); the squares are: start (or its file), end, and any landing squares given
/// must lie on the path in order.
pub fn resolve_move(written: &WrittenMove, text: &str, pos: &Position, rules: &Rules) -> Result<Move, MoveError> {
    match matching_moves(written, text, pos, rules)?.as_slice() {
        [] => Err(MoveError::Illegal(text.to_string())),
        [one] => Ok(*one),
        many => Err(MoveError::Ambiguous { text: text.to_string(), count: many.len() }),
    }
}

/// Every legal move (one path per distinct effect) the written move may mean.
pub fn matching_moves(written: &WrittenMove, text: &str, pos: &Position, rules: &Rules) -> Result<Vec<Move>, MoveError> {
    let squares: Vec<Square> = written
        .squares
        .iter()
        .map(|&w| resolve_square(w, rules).ok_or_else(|| MoveError::BadSquare(text.to_string())))
        .collect::<Result<_, _>>()?;
    let Some(&to) = squares.last() else {
        return Err(MoveError::Illegal(text.to_string()));
    };
    // Every path, duplicates included: the record may name landing squares of a path that
    // merged with another one into a single move.
    let mut legal = MoveList::new();
    generate(pos, rules, Duplicates::Keep, &mut legal);
    let mut found: Vec<Move> = Vec::new();
    for m in legal.iter().filter(|m| {
        if m.to != to {
            return false;
        }
        let (start_ok, via) = match written.from_file {
            Some(file) => (physical_col(m.from, rules) == file, &squares[..squares.len() - 1]),
            None if squares.len() >= 2 => (m.from == squares[0], &squares[1..squares.len() - 1]),
            None => (true, &squares[..0]),
        };
        start_ok && is_subsequence(via, &m.path()[1..])
    }) {
        // Several paths with one effect are one move.
        if !found.iter().any(|f| f.same_effect(m)) {
            found.push(*m);
        }
    }
    Ok(found)
}

fn is_subsequence(needle: &[Square], hay: &[Square]) -> bool {
    let mut it = hay.iter();
    needle.iter().all(|n| it.any(|h| h == n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draughts::rules::Variant;

    #[test]
    fn english_numbering_matches_the_standard_diagram() {
        let r = Variant::English.rules();
        assert_eq!(square_number(square(0, 1), &r), 1);
        assert_eq!(square_number(square(0, 7), &r), 4);
        assert_eq!(square_number(square(1, 0), &r), 5);
        assert_eq!(square_number(square(7, 0), &r), 29);
        assert_eq!(square_number(square(7, 6), &r), 32);
        for n in 1..=32 {
            assert_eq!(square_number(square_from_number(n, &r).unwrap(), &r), n);
        }
        assert_eq!(square_from_number(0, &r), None);
        assert_eq!(square_from_number(33, &r), None);
    }

    #[test]
    fn italian_board_is_mirrored() {
        let r = Variant::Italian.rules();
        // Square 1 is the top-left corner as the Italian player sees it: internally (0, 7).
        assert_eq!(square_from_number(1, &r), Some(square(0, 7)));
        assert_eq!(square_from_number(5, &r), Some(square(1, 6)));
        for n in 1..=32 {
            assert_eq!(square_number(square_from_number(n, &r).unwrap(), &r), n);
        }
    }

    #[test]
    fn algebraic_a1_is_bottom_left() {
        let r = Variant::Russian.rules();
        assert_eq!(square_algebraic(square(7, 0), &r), "a1");
        assert_eq!(square_algebraic(square(0, 7), &r), "h8");
        assert_eq!(parse_square("c3", &r), Some(square(5, 2)));
        assert_eq!(parse_square("a2", &r), None, "a2 is a light square");
    }

    #[test]
    fn algebraic_english_puts_the_first_mover_on_rank_one() {
        let r = Variant::English.rules();
        // Black (first) starts on 1-12 at the top of the diagram; written algebraically it is on
        // ranks 1-3: c3 is square 11 in numeric notation.
        assert_eq!(parse_square("c3", &r), square_from_number(11, &r));
        for n in 1..=32 {
            let sq = square_from_number(n, &r).unwrap();
            assert_eq!(parse_square(&square_algebraic(sq, &r), &r), Some(sq));
        }
    }

    #[test]
    fn resolves_compact_and_short_moves() {
        let r = Variant::Russian.rules();
        let pos = Position::start(&r);
        let w = WrittenMove { squares: vec![WrittenSquare::Algebraic { file: 3, rank: 4 }], from_file: Some(4) };
        let m = resolve_move(&w, "ed4", &pos, &r).unwrap();
        assert_eq!(square_algebraic(m.from, &r), "e3");
        let w = WrittenMove { squares: vec![WrittenSquare::Algebraic { file: 3, rank: 4 }], from_file: Some(0) };
        assert!(matches!(resolve_move(&w, "ad4", &pos, &r), Err(MoveError::Illegal(_))));
    }
}
