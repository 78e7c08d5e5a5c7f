//! FEN tags as PDN 3.0 writes them: `W:W21,K5:B1-12` (side to move, then each side's pieces,
//! `K` for kings, ranges for runs of numbered squares, algebraic squares in those variants).

use super::bitboard::{bit, Square, Squares};
use super::notation::{parse_square, square_name, square_number};
use super::position::{Color, Piece, Position};
use super::rules::{Rules, SquareNotation};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FenError {
    #[error("FEN `{fen}`: {reason}")]
    Invalid { fen: String, reason: String },
}

fn invalid(fen: &str, reason: impl Into<String>) -> FenError {
    FenError::Invalid { fen: fen.to_string(), reason: reason.into() }
}

fn parse_color(c: char) -> Option<Color> {
    match c.to_ascii_uppercase() {
        'W' => Some(Color::White),
        'B' => Some(Color::Black),
        _ => None,
    }
}

pub fn parse_fen(fen: &str, rules: &Rules) -> Result<Position, FenError> {
    let text = fen.trim().trim_end_matches('.').trim();
    let mut fields = text.split(':');
    let turn = fields.next().unwrap_or("").trim();
    let mut turn_chars = turn.chars();
    let to_move = match (turn_chars.next().and_then(parse_color), turn_chars.next()) {
        (Some(c), None) => c,
        _ => return Err(invalid(fen, format!("side to move `{turn}` is not W or B"))),
    };
    let mut pos = Position::empty(to_move);
    for field in fields {
        let field = field.trim();
        let mut chars = field.chars();
        let Some(first) = chars.next() else { continue };
        // Lidraughts appends move counters (`H0`, `F1`): not part of the position.
        if matches!(first, 'H' | 'F') && chars.clone().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let color = parse_color(first).ok_or_else(|| invalid(fen, format!("field `{field}` starts with neither W nor B")))?;
        for item in field[1..].split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (king, squares) = match item.strip_prefix(['K', 'k']) {
                Some(rest) => (true, rest),
                None => (false, item),
            };
            let piece = if king { Piece::King(color) } else { Piece::Man(color) };
            for sq in expand_squares(squares, rules).ok_or_else(|| invalid(fen, format!("`{item}` is not a square or range of this board")))? {
                if pos.piece_at(sq).is_some() {
                    return Err(invalid(fen, format!("square `{}` is given twice", square_name(sq, rules))));
                }
                pos.set(sq, Some(piece));
            }
        }
    }
    Ok(pos)
}

/// `5`, `a3` or a numeric range `1-12`.
fn expand_squares(text: &str, rules: &Rules) -> Option<Vec<Square>> {
    if let Some((a, b)) = text.split_once('-') {
        let (a, b): (u8, u8) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
        if a > b {
            return None;
        }
        return (a..=b).map(|n| parse_square(&n.to_string(), rules)).collect();
    }
    parse_square(text, rules).map(|s| vec![s])
}

pub fn to_fen(pos: &Position, rules: &Rules) -> String {
    let side = |color: Color| {
        let pieces = pos.pieces(color);
        let mut items: Vec<(u8, String)> = Squares(pieces)
            .map(|sq| {
                let k = if pos.kings & bit(sq) != 0 { "K" } else { "" };
                (square_number(sq, rules), format!("{k}{}", square_name(sq, rules)))
            })
            .collect();
        items.sort_by_key(|(n, _)| *n);
        let names: Vec<String> = if rules.notation == SquareNotation::Numeric {
            compress_ranges(pos, &items, rules)
        } else {
            items.into_iter().map(|(_, s)| s).collect()
        };
        format!("{}{}", color.letter(), names.join(","))
    };
    format!("{}:{}:{}", pos.to_move.letter(), side(Color::White), side(Color::Black))
}

/// Runs of three or more consecutive numbered men are written as ranges (`1-12`).
fn compress_ranges(pos: &Position, items: &[(u8, String)], rules: &Rules) -> Vec<String> {
    let is_man = |n: u8| {
        super::notation::square_from_number(n, rules).is_some_and(|sq| pos.kings & bit(sq) == 0)
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < items.len() {
        let (n, ref text) = items[i];
        let mut j = i;
        while is_man(n) && j + 1 < items.len() && items[j + 1].0 == items[j].0 + 1 && is_man(items[j + 1].0) {
            j += 1;
        }
        if j >= i + 2 {
            out.push(format!("{}-{}", n, items[j].0));
            i = j + 1;
        } else {
            out.push(text.clone());
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draughts::rules::Variant;

    #[test]
    fn start_position_round_trips() {
        for v in Variant::ALL {
            let r = v.rules();
            let start = Position::start(&r);
            let fen = to_fen(&start, &r);
            assert_eq!(parse_fen(&fen, &r).unwrap(), start, "{v}: {fen}");
        }
        let r = Variant::English.rules();
        assert_eq!(to_fen(&Position::start(&r), &r), "B:W21-32:B1-12");
    }

    #[test]
    fn kings_ranges_and_algebraic() {
        let r = Variant::English.rules();
        let pos = parse_fen("W:W21,K5:B1-3.", &r).unwrap();
        assert_eq!(pos.to_move, Color::White);
        assert_eq!(pos.white.count_ones(), 2);
        assert_eq!(pos.black.count_ones(), 3);
        assert_eq!(pos.kings.count_ones(), 1);
        let r = Variant::Russian.rules();
        let pos = parse_fen("W:Wa3,c3,Ke1:Bb8,d8:H0:F1", &r).unwrap();
        assert_eq!(pos.white.count_ones(), 3);
        assert_eq!(to_fen(&pos, &r), "W:Wa3,c3,Ke1:Bb8,d8");
    }

    #[test]
    fn rejects_bad_fens() {
        let r = Variant::English.rules();
        for bad in ["X:W1:B2", "W:W33:B1", "W:W1,1:B2", "W:Q1", "W:W12-5:B1"] {
            assert!(parse_fen(bad, &r).is_err(), "{bad} should be rejected");
        }
    }
}
