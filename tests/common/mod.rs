//! Helpers shared by the tracker tests: a test board edited square by square, as the seed's test
//! application does with mouse clicks, and a reader for simple PDN movetext.
#![allow(dead_code)]

use boardwatch::draughts::movegen::{legal_moves, Move};
use boardwatch::draughts::notation::{resolve_move, WrittenMove, WrittenSquare};
use boardwatch::draughts::{Position, Rules};
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

/// The moves of a PDN movetext: numbers, results and comments dropped; `10-15`, `15x22`,
/// `23x14x7` kept (numeric squares only, as in the ACF archive).
pub fn movetext_tokens(movetext: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut cleaned = String::new();
    for ch in movetext.chars() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ if depth == 0 => cleaned.push(ch),
            _ => {}
        }
    }
    for token in cleaned.split_whitespace() {
        let token = token.trim_end_matches(['!', '?', '*']);
        if token.is_empty() || token.ends_with('.') || ["1-0", "0-1", "1/2-1/2", "*"].contains(&token) {
            continue;
        }
        // `12.10-15` style: a number glued to the move.
        let token = token.rsplit('.').next().unwrap_or(token);
        if token.chars().next().is_some_and(|c| c.is_ascii_digit()) {
            out.push(token.to_string());
        }
    }
    out
}

/// Resolve a numeric move text against the legal moves of `pos`.
pub fn resolve(text: &str, pos: &Position, rules: &Rules) -> Move {
    let squares = text
        .split(['-', 'x'])
        .map(|s| WrittenSquare::Number(s.parse().unwrap_or_else(|_| panic!("bad square in `{text}`"))))
        .collect();
    let written = WrittenMove { squares, from_file: None };
    resolve_move(&written, text, pos, rules).unwrap_or_else(|e| panic!("{text}: {e}\n{pos:?}"))
}

/// A game of a PDN file: its result tag and move texts.
#[derive(Clone, Debug)]
pub struct PdnGame {
    pub result: String,
    pub moves: Vec<String>,
}

/// Split a simple PDN file (tags + movetext, no setups) into games.
pub fn read_simple_pdn(text: &str) -> Vec<PdnGame> {
    let mut games = Vec::new();
    let mut result = String::new();
    let mut movetext = String::new();
    let mut in_moves = false;
    let flush = |games: &mut Vec<PdnGame>, result: &mut String, movetext: &mut String| {
        if !movetext.trim().is_empty() {
            games.push(PdnGame { result: result.clone(), moves: movetext_tokens(movetext) });
        }
        movetext.clear();
        result.clear();
    };
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            if in_moves {
                flush(&mut games, &mut result, &mut movetext);
                in_moves = false;
            }
            if let Some(rest) = line.strip_prefix("[Result \"") {
                result = rest.trim_end_matches("\"]").to_string();
            }
        } else if !line.is_empty() {
            in_moves = true;
            movetext.push(' ');
            movetext.push_str(line);
        }
    }
    flush(&mut games, &mut result, &mut movetext);
    games
}

/// Play a game's move texts from the start, returning every move and position.
pub fn replay(moves: &[String], rules: &Rules) -> Vec<(Move, Position)> {
    let mut pos = Position::start(rules);
    let mut out = Vec::new();
    for text in moves {
        let m = resolve(text, &pos, rules);
        assert!(legal_moves(&pos, rules).iter().any(|l| l.same_effect(&m)));
        out.push((m, pos));
        pos = pos.play(&m);
    }
    out
}
