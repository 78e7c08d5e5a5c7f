//! Helpers shared by the tracker tests: a test board edited square by square, as the seed's test
//! application does with mouse clicks, and real games from PDN files as lists of moves.
#![allow(dead_code)]

use std::path::Path;

use boardwatch::draughts::game::replay;
use boardwatch::draughts::movegen::Move;
use boardwatch::draughts::pdn::{read_games, ReadMode};
use boardwatch::draughts::Variant;
use boardwatch::tracker::{Event, Observation};

/// A board in board coordinates (row 0 at Black's edge), one grid character per square.
#[derive(Clone, Debug, PartialEq)]
pub struct Board(pub [[char; 8]; 8]);

impl Board {
    pub fn empty() -> Board {
        Board([['.'; 8]; 8])
    }

    /// The seed's `Init`: red (Black) men on the dark squares of rows 0-2, yellow (White) on 5-7.
    pub fn start() -> Board {
        let mut b = Board::empty();
        for row in 0..8 {
            for col in 0..8 {
                if (row + col) % 2 == 1 {
                    if row < 3 {
                        b.0[row][col] = 'b';
                    } else if row > 4 {
                        b.0[row][col] = 'w';
                    }
                }
            }
        }
        b
    }

    /// A board drawn as 8 lines of 8 characters (leading blanks and blank lines ignored).
    pub fn picture(text: &str) -> Board {
        let rows: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        assert_eq!(rows.len(), 8, "a board has 8 rows: {text}");
        let mut b = Board::empty();
        for (r, line) in rows.iter().enumerate() {
            assert_eq!(line.chars().count(), 8, "row {r} of {text}");
            for (c, ch) in line.chars().enumerate() {
                b.0[r][c] = ch;
            }
        }
        b
    }

    pub fn at(&self, row: usize, col: usize) -> char {
        self.0[row][col]
    }

    pub fn set(&mut self, row: usize, col: usize, ch: char) -> &mut Board {
        self.0[row][col] = ch;
        self
    }

    /// Move whatever stands on `from` to `to`.
    pub fn slide(&mut self, from: (usize, usize), to: (usize, usize)) -> &mut Board {
        let piece = self.0[from.0][from.1];
        self.0[from.0][from.1] = '.';
        self.0[to.0][to.1] = piece;
        self
    }

    pub fn rows(&self) -> Vec<String> {
        self.0.iter().map(|r| r.iter().collect()).collect()
    }

    pub fn obs(&self) -> Observation {
        Observation::from_grid(&self.rows()).expect("test boards are well formed")
    }
}

pub fn lines(events: &[Event]) -> Vec<String> {
    events.iter().map(|e| e.line.clone()).collect()
}

/// The games of a PDN file as the moves played from the start (every game must replay legally).
pub fn pdn_games(path: &Path, variant: Variant) -> Vec<Vec<Move>> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let text = String::from_utf8_lossy(&bytes);
    let records = read_games(&text, ReadMode::Lenient).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    records
        .iter()
        .map(|r| {
            let game = replay(r, variant).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            game.plies.into_iter().map(|p| p.mv).collect()
        })
        .collect()
}

/// English positions by their moves, and the boards a camera sees of them.
pub mod by_moves {
    use boardwatch::draughts::movegen::legal_moves;
    use boardwatch::draughts::notation::move_text;
    use boardwatch::draughts::position::Position;
    use boardwatch::draughts::Variant;
    use boardwatch::tracker::Observation;

    /// The start position after `moves` (PDN move texts).
    pub fn after(moves: &[&str]) -> Position {
        play(&Position::start(&Variant::English.rules()), moves)
    }

    /// `from` after `moves`.
    pub fn play(from: &Position, moves: &[&str]) -> Position {
        let rules = Variant::English.rules();
        moves.iter().fold(*from, |pos, text| {
            let legal = legal_moves(&pos, &rules);
            let m = legal.iter().find(|m| move_text(m, &legal, &rules) == *text).unwrap_or_else(|| panic!("{text} is legal"));
            pos.play(m)
        })
    }

    /// `pos` read at time `t`, every square right except those set in `edits` (row, column,
    /// grid character; `?` for a square a hand hides).
    pub fn seen(pos: &Position, t: f64, edits: &[(usize, usize, char)]) -> Observation {
        let rules = Variant::English.rules();
        let mut rows = Observation::of_position(pos, 0, &rules).to_grid();
        for &(row, col, ch) in edits {
            rows[row].replace_range(col..col + 1, &ch.to_string());
        }
        Observation::from_grid(&rows).expect("well formed").with_time(t)
    }

    /// The same, read on the way (the board not yet still).
    pub fn glimpsed(pos: &Position, t: f64, edits: &[(usize, usize, char)]) -> Observation {
        let mut obs = seen(pos, t, edits);
        obs.glimpse = true;
        obs
    }
}
