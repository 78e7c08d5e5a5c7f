//! The map file: rows of digits, `0` road, `1` building, `2` policeman 1, `3` thief, `4`
//! policeman 2 (pieces stand on roads). Any rectangle from 1x1 up to 64x64; exactly one of each
//! piece. Errors name the line and column (both counted from 1).

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::rules::Positions;

/// Largest width and height a map may have.
pub const MAX_SIDE: usize = 64;

/// A square of the map: `row * width + column`.
pub type Square = u16;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum MapError {
    #[error("the map is empty")]
    Empty,
    #[error("line {line}, column {column}: {found:?} is not a map digit (0 road, 1 building, 2 policeman 1, 3 thief, 4 policeman 2)")]
    BadCharacter { line: usize, column: usize, found: char },
    #[error("line {line}: {found} squares, but the first line has {expected} (a map is a rectangle)")]
    RaggedRow { line: usize, found: usize, expected: usize },
    #[error("line {line}: the map is {width} squares wide, at most {MAX_SIDE} are allowed")]
    TooWide { line: usize, width: usize },
    #[error("line {line}: the map has more than {MAX_SIDE} rows")]
    TooTall { line: usize },
    #[error("line {line}, column {column}: a second {piece} (the first is at line {first_line}, column {first_column})")]
    DuplicatePiece { line: usize, column: usize, piece: &'static str, first_line: usize, first_column: usize },
    #[error("the map has no {piece} (digit {digit})")]
    MissingPiece { piece: &'static str, digit: char },
}

impl MapError {
    /// The line the error is on (from 1), if it is on one.
    pub fn line(&self) -> Option<usize> {
        match *self {
            MapError::BadCharacter { line, .. }
            | MapError::RaggedRow { line, .. }
            | MapError::TooWide { line, .. }
            | MapError::TooTall { line }
            | MapError::DuplicatePiece { line, .. } => Some(line),
            MapError::Empty | MapError::MissingPiece { .. } => None,
        }
    }

    /// The column the error is at (from 1), if it is at one.
    pub fn column(&self) -> Option<usize> {
        match *self {
            MapError::BadCharacter { column, .. } | MapError::DuplicatePiece { column, .. } => Some(column),
            _ => None,
        }
    }
}

/// Roads and buildings, and where the pieces start.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Map {
    pub width: usize,
    pub height: usize,
    /// `true` for a road, by square.
    pub road: Vec<bool>,
    pub start: Positions,
}

impl Map {
    /// Reads a map file's text. Blank lines at the end and `\r` line ends are accepted.
    pub fn parse(text: &str) -> Result<Map, MapError> {
        let lines: Vec<&str> = text.lines().map(|l| l.trim_end_matches('\r')).collect();
        let used = lines.iter().rposition(|l| !l.trim().is_empty()).map_or(0, |last| last + 1);
        if used == 0 {
            return Err(MapError::Empty);
        }
        let mut width = 0;
        let mut road = Vec::new();
        // Policeman 1, thief, policeman 2 (digits 2, 3, 4): square and (line, column).
        let mut pieces: [Option<(Square, usize, usize)>; 3] = [None; 3];
        for (row, line) in lines[..used].iter().enumerate() {
            let number = row + 1;
            if row >= MAX_SIDE {
                return Err(MapError::TooTall { line: number });
            }
            let chars: Vec<char> = line.chars().collect();
            if row == 0 {
                width = chars.len();
                if width > MAX_SIDE {
                    return Err(MapError::TooWide { line: number, width });
                }
            }
            for (col, &c) in chars.iter().enumerate() {
                let column = col + 1;
                let is_road = match c {
                    '0' | '2' | '3' | '4' => true,
                    '1' => false,
                    found => return Err(MapError::BadCharacter { line: number, column, found }),
                };
                if let Some(digit) = c.to_digit(10).filter(|d| *d >= 2) {
                    let slot = (digit - 2) as usize;
                    if let Some((_, first_line, first_column)) = pieces[slot] {
                        return Err(MapError::DuplicatePiece { line: number, column, piece: PIECE_NAMES[slot], first_line, first_column });
                    }
                    if col < width {
                        pieces[slot] = Some(((row * width + col) as Square, number, column));
                    }
                }
                road.push(is_road);
            }
            if chars.len() != width {
                return Err(MapError::RaggedRow { line: number, found: chars.len(), expected: width });
            }
        }
        let square = |slot: usize| pieces[slot].map(|(s, _, _)| s).ok_or(MapError::MissingPiece { piece: PIECE_NAMES[slot], digit: char::from(b'2' + slot as u8) });
        let start = Positions { police1: square(0)?, thief: square(1)?, police2: square(2)? };
        Ok(Map { width, height: used, road, start })
    }

    /// The map file's text (pieces at their start squares), as [`Map::parse`] reads it.
    pub fn to_text(&self) -> String {
        let mut text = String::with_capacity((self.width + 1) * self.height);
        for row in 0..self.height {
            for col in 0..self.width {
                let square = (row * self.width + col) as Square;
                text.push(match square {
                    s if s == self.start.police1 => '2',
                    s if s == self.start.thief => '3',
                    s if s == self.start.police2 => '4',
                    s if self.road[s as usize] => '0',
                    _ => '1',
                });
            }
            text.push('\n');
        }
        text
    }

    pub fn is_road(&self, square: Square) -> bool {
        self.road[square as usize]
    }

    /// (row, column) of a square, both from 0.
    pub fn row_column(&self, square: Square) -> (usize, usize) {
        (square as usize / self.width, square as usize % self.width)
    }

    pub fn square(&self, row: usize, column: usize) -> Square {
        (row * self.width + column) as Square
    }

    /// The road squares next to `square`, in the fixed order up, down, left, right.
    pub fn road_neighbours(&self, square: Square) -> impl Iterator<Item = Square> + '_ {
        let (row, col) = self.row_column(square);
        let up = (row > 0).then(|| self.square(row - 1, col));
        let down = (row + 1 < self.height).then(|| self.square(row + 1, col));
        let left = (col > 0).then(|| self.square(row, col - 1));
        let right = (col + 1 < self.width).then(|| self.square(row, col + 1));
        [up, down, left, right].into_iter().flatten().filter(|s| self.is_road(*s))
    }

    /// A random map: each square a building with probability `building_share`, the three pieces
    /// on distinct random roads (at least three roads are kept). For tests and benchmarks.
    pub fn random(width: usize, height: usize, building_share: f64, rng: &mut impl rand::Rng) -> Map {
        assert!((1..=MAX_SIDE).contains(&width) && (1..=MAX_SIDE).contains(&height) && width * height >= 3);
        let mut road: Vec<bool> = (0..width * height).map(|_| !rng.gen_bool(building_share)).collect();
        while road.iter().filter(|r| **r).count() < 3 {
            let square = rng.gen_range(0..road.len());
            road[square] = true;
        }
        let roads: Vec<Square> = (0..road.len()).filter(|&s| road[s]).map(|s| s as Square).collect();
        let picked = rand::seq::index::sample(rng, roads.len(), 3);
        let start = Positions { police1: roads[picked.index(0)], police2: roads[picked.index(1)], thief: roads[picked.index(2)] };
        Map { width, height, road, start }
    }

    /// Number of road squares.
    pub fn road_count(&self) -> usize {
        self.road.iter().filter(|r| **r).count()
    }
}

const PIECE_NAMES: [&str; 3] = ["policeman 1 (digit 2)", "thief (digit 3)", "policeman 2 (digit 4)"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_map_and_writes_it_back() {
        let text = "2001\n0103\n4000\n";
        let map = Map::parse(text).unwrap();
        assert_eq!((map.width, map.height), (4, 3));
        assert_eq!(map.start.police1, 0);
        assert_eq!(map.start.thief, 7);
        assert_eq!(map.start.police2, 8);
        assert!(!map.is_road(3) && map.is_road(7) && !map.is_road(5));
        assert_eq!(map.road_count(), 10);
        assert_eq!(map.to_text(), text);
        assert_eq!(Map::parse("2001\r\n0103\r\n4000\r\n\r\n").unwrap(), map);
        assert_eq!(map.road_neighbours(4).collect::<Vec<_>>(), vec![0, 8]);
    }

    #[test]
    fn every_error_names_its_place() {
        assert_eq!(Map::parse(""), Err(MapError::Empty));
        assert_eq!(Map::parse("\n  \n"), Err(MapError::Empty));
        assert_eq!(Map::parse("203\n0x4\n"), Err(MapError::BadCharacter { line: 2, column: 2, found: 'x' }));
        assert_eq!(Map::parse("203\n04\n"), Err(MapError::RaggedRow { line: 2, found: 2, expected: 3 }));
        assert_eq!(Map::parse("203\n0400\n"), Err(MapError::RaggedRow { line: 2, found: 4, expected: 3 }));
        let wide = format!("234{}\n", "0".repeat(62));
        assert_eq!(Map::parse(&wide), Err(MapError::TooWide { line: 1, width: 65 }));
        let tall = format!("234\n{}", "000\n".repeat(64));
        assert_eq!(Map::parse(&tall), Err(MapError::TooTall { line: 65 }));
        assert!(matches!(Map::parse("2302\n4000\n"), Err(MapError::DuplicatePiece { line: 1, column: 4, first_line: 1, first_column: 1, .. })));
        assert!(matches!(Map::parse("2000\n4000\n"), Err(MapError::MissingPiece { digit: '3', .. })));
        assert!(matches!(Map::parse("2300\n0000\n"), Err(MapError::MissingPiece { digit: '4', .. })));
        let error = Map::parse("203\n0x4\n").unwrap_err();
        assert_eq!((error.line(), error.column()), (Some(2), Some(2)));
        assert_eq!(Map::parse("203\n04\n").unwrap_err().line(), Some(2));
        assert_eq!(Map::parse("2000\n4000\n").unwrap_err().line(), None);
        let message = error.to_string();
        assert!(message.contains("line 2, column 2"), "{message}");
        // A 64x64 map is allowed.
        let largest = format!("234{}\n{}", "0".repeat(61), format!("{}\n", "0".repeat(64)).repeat(63));
        assert_eq!(Map::parse(&largest).map(|m| (m.width, m.height)), Ok((64, 64)));
    }
}
