//! A position: three bitboards and the side to move.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::bitboard::{bit, row_mask, Square, DARK};
use super::rules::Rules;

/// The two sides. Black's men start on rows 0-2 (the top of a diagram) and move towards row 7;
/// in the seed's palette Black is red (kings blue) and White is yellow (kings green).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Color {
    Black,
    White,
}

impl Color {
    pub fn opponent(self) -> Color {
        match self {
            Color::Black => Color::White,
            Color::White => Color::Black,
        }
    }
    /// The row on which this side's men are crowned.
    pub fn promotion_row(self) -> u8 {
        match self {
            Color::Black => 7,
            Color::White => 0,
        }
    }
    pub fn letter(self) -> char {
        match self {
            Color::Black => 'B',
            Color::White => 'W',
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Color::Black => "Black",
            Color::White => "White",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Piece {
    Man(Color),
    King(Color),
}

impl Piece {
    pub fn color(self) -> Color {
        match self {
            Piece::Man(c) | Piece::King(c) => c,
        }
    }
    pub fn is_king(self) -> bool {
        matches!(self, Piece::King(_))
    }
    /// The grid character used by `detect` and `track`: `b`/`B` Black man/king, `w`/`W` White.
    pub fn grid_char(self) -> char {
        match self {
            Piece::Man(Color::Black) => 'b',
            Piece::King(Color::Black) => 'B',
            Piece::Man(Color::White) => 'w',
            Piece::King(Color::White) => 'W',
        }
    }
    pub fn from_grid_char(c: char) -> Option<Piece> {
        match c {
            'b' => Some(Piece::Man(Color::Black)),
            'B' => Some(Piece::King(Color::Black)),
            'w' => Some(Piece::Man(Color::White)),
            'W' => Some(Piece::King(Color::White)),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Position {
    pub black: u64,
    pub white: u64,
    pub kings: u64,
    pub to_move: Color,
}

impl Position {
    pub fn empty(to_move: Color) -> Position {
        Position { black: 0, white: 0, kings: 0, to_move }
    }

    /// Twelve men each on the dark squares of the three rows nearest their owner.
    pub fn start(rules: &Rules) -> Position {
        let black = DARK & (row_mask(0) | row_mask(1) | row_mask(2));
        let white = DARK & (row_mask(5) | row_mask(6) | row_mask(7));
        Position { black, white, kings: 0, to_move: rules.first_mover }
    }

    #[inline(always)]
    pub fn pieces(&self, color: Color) -> u64 {
        match color {
            Color::Black => self.black,
            Color::White => self.white,
        }
    }
    #[inline(always)]
    pub fn occupied(&self) -> u64 {
        self.black | self.white
    }

    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        let b = bit(sq);
        let color = if self.black & b != 0 {
            Color::Black
        } else if self.white & b != 0 {
            Color::White
        } else {
            return None;
        };
        Some(if self.kings & b != 0 { Piece::King(color) } else { Piece::Man(color) })
    }

    pub fn set(&mut self, sq: Square, piece: Option<Piece>) {
        let b = bit(sq);
        self.black &= !b;
        self.white &= !b;
        self.kings &= !b;
        if let Some(p) = piece {
            match p.color() {
                Color::Black => self.black |= b,
                Color::White => self.white |= b,
            }
            if p.is_king() {
                self.kings |= b;
            }
        }
    }

    /// The board as 8 strings of 8 grid characters (`.` empty), row 0 first.
    pub fn to_grid(&self) -> [String; 8] {
        std::array::from_fn(|row| {
            (0..8)
                .map(|col| {
                    self.piece_at((row * 8 + col) as Square).map_or('.', Piece::grid_char)
                })
                .collect()
        })
    }

}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{} to move", self.to_move.name())?;
        for row in self.to_grid() {
            writeln!(f, "{row}")?;
        }
        Ok(())
    }
}
