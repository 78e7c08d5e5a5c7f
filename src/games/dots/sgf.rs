//! Records in SGF `GM[40]`, the format Dots programs (zagram, oppai, playdots) exchange.
//!
//! `SZ[W:H]` (or `SZ[N]` for a square board), `W[xy]` a red dot and `B[xy]` a black one, with
//! coordinates `a`-`z` then `A`-`Z` (0 to 51) as those programs write them; a move may carry its
//! enclosing chains after a dot (`W[cd.bcdc...]`), which we skip on reading (the rules find them
//! again). Boards wider or higher than 52 points use `0`-`9`, `+` and `-` for 52 to 63: an
//! extension of ours that other programs do not read.
//!
//! Why not the `sgf-parse` crate: errors here must name the line and column of the file, and a
//! Dots record needs only the main line of play, which a hundred lines parse.

use super::board::{Action, Board, End, Player, Rules};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SgfGame {
    pub width: usize,
    pub height: usize,
    /// From `RU`: `russian` (what oppai writes) or `standard` mean the standard rules,
    /// `classic` the original program's. None when absent or unknown.
    pub rules: Option<Rules>,
    pub red_name: Option<String>,
    pub black_name: Option<String>,
    /// The dots in order, with the line and column of each in the file.
    pub moves: Vec<SgfMove>,
    /// `RE[B+R]` / `RE[W+R]`: the other player resigned.
    pub resigned: Option<Player>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SgfMove {
    pub x: usize,
    pub y: usize,
    pub player: Player,
    pub line: usize,
    pub column: usize,
}

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct SgfError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

const COORDS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-";

fn coordinate_char(i: usize) -> char {
    COORDS[i] as char
}

fn coordinate_of(c: u8) -> Option<usize> {
    COORDS.iter().position(|&k| k == c)
}

/// Write the game on `board` (every action so far) as SGF.
pub fn write(board: &Board, red_name: &str, black_name: &str) -> String {
    let rules = match board.rules() {
        Rules::Standard => "russian",
        Rules::Classic => "classic",
    };
    let mut out = format!(
        "(;GM[40]FF[4]CA[UTF-8]AP[boardwatch]SZ[{}:{}]RU[{rules}]PW[{}]PB[{}]",
        board.width(),
        board.height(),
        escape(red_name),
        escape(black_name)
    );
    if let Some(end) = board.end() {
        let result = match end {
            End::Resigned(Player::Red) => "B+R".to_string(),
            End::Resigned(Player::Black) => "W+R".to_string(),
            _ => match board.score_margin() {
                0 => "0".to_string(),
                m if m > 0 => format!("W+{m}"),
                m => format!("B+{}", -m),
            },
        };
        out.push_str(&format!("RE[{result}]"));
    }
    for action in board.history() {
        if let Action::Dot { x, y, player } = action {
            let tag = if player == Player::Red { 'W' } else { 'B' };
            out.push_str(&format!(
                ";{tag}[{}{}]",
                coordinate_char(x as usize),
                coordinate_char(y as usize)
            ));
        }
    }
    out.push_str(")\n");
    out
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace(']', "\\]")
}

struct Parser<'a> {
    text: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn position(&self, at: usize) -> (usize, usize) {
        let before = &self.text[..at.min(self.text.len())];
        let line = before.iter().filter(|&&c| c == b'\n').count() + 1;
        let column = before.iter().rev().take_while(|&&c| c != b'\n').count() + 1;
        (line, column)
    }
    fn error(&self, at: usize, message: impl Into<String>) -> SgfError {
        let (line, column) = self.position(at);
        SgfError {
            line,
            column,
            message: message.into(),
        }
    }
    fn skip_space(&mut self) {
        while self.at < self.text.len() && self.text[self.at].is_ascii_whitespace() {
            self.at += 1;
        }
    }
    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.text.get(self.at).copied()
    }
    /// One property value `[...]`; returns it unescaped with its start offset.
    fn value(&mut self) -> Result<(String, usize), SgfError> {
        let start = self.at;
        self.at += 1; // '['
        let mut bytes = Vec::new();
        loop {
            match self.text.get(self.at) {
                None => return Err(self.error(start, "property value not closed by ]")),
                Some(b']') => break,
                Some(b'\\') => {
                    self.at += 1;
                    if let Some(&c) = self.text.get(self.at) {
                        bytes.push(c);
                    }
                }
                Some(&c) => bytes.push(c),
            }
            self.at += 1;
        }
        self.at += 1;
        Ok((String::from_utf8_lossy(&bytes).into_owned(), start + 1))
    }
}

/// Read the first game of an SGF file (its main line of play).
pub fn parse(text: &str) -> Result<SgfGame, SgfError> {
    let mut p = Parser {
        text: text.as_bytes(),
        at: 0,
    };
    if p.peek() != Some(b'(') {
        return Err(p.error(p.at, "an SGF record starts with '('"));
    }
    p.at += 1;
    // Properties of the main line: (name, value, offset of the value).
    let mut props: Vec<(String, String, usize)> = Vec::new();
    let mut depth = 1;
    loop {
        match p.peek() {
            None => return Err(p.error(p.at, "record not closed by ')'")),
            Some(b';') => p.at += 1,
            Some(b'(') => {
                // A variation: the first one is the main line, skip any later ones.
                p.at += 1;
                depth += 1;
            }
            Some(b')') => {
                p.at += 1;
                depth -= 1;
                if depth == 0 {
                    break;
                }
                // End of a variation: skip the sibling variations that follow.
                while p.peek() == Some(b'(') {
                    skip_tree(&mut p)?;
                }
            }
            Some(c) if c.is_ascii_uppercase() => {
                let start = p.at;
                while p.at < p.text.len() && p.text[p.at].is_ascii_alphabetic() {
                    p.at += 1;
                }
                let name: String = String::from_utf8_lossy(&p.text[start..p.at])
                    .chars()
                    .filter(|c| c.is_ascii_uppercase())
                    .collect();
                if p.peek() != Some(b'[') {
                    return Err(p.error(p.at, format!("property {name} has no value")));
                }
                while p.peek() == Some(b'[') {
                    let (value, at) = p.value()?;
                    props.push((name.clone(), value, at));
                }
            }
            Some(c) => return Err(p.error(p.at, format!("unexpected {:?}", c as char))),
        }
    }
    game_from(&p, props)
}

fn skip_tree(p: &mut Parser) -> Result<(), SgfError> {
    let start = p.at;
    let mut depth = 0;
    loop {
        match p.peek() {
            None => return Err(p.error(start, "variation not closed by ')'")),
            Some(b'(') => depth += 1,
            Some(b')') => {
                depth -= 1;
                if depth == 0 {
                    p.at += 1;
                    return Ok(());
                }
            }
            Some(b'[') => {
                p.value()?;
                continue;
            }
            _ => {}
        }
        p.at += 1;
    }
}

fn game_from(p: &Parser, props: Vec<(String, String, usize)>) -> Result<SgfGame, SgfError> {
    let find = |name: &str| props.iter().find(|(n, _, _)| n == name);
    match find("GM") {
        Some((_, v, _)) if v.trim() == "40" => {}
        Some((_, v, at)) => {
            return Err(p.error(*at, format!("GM[{v}] is not a Dots record (GM[40])")))
        }
        None => return Err(p.error(0, "no GM[40] property: not a Dots record")),
    }
    let (size, at) = match find("SZ") {
        Some((_, v, at)) => (v.trim().to_string(), *at),
        None => return Err(p.error(0, "no SZ property (board size)")),
    };
    let parse_side = |s: &str| {
        s.trim()
            .parse::<usize>()
            .map_err(|_| p.error(at, format!("board size {size:?} is not a number")))
    };
    let (width, height) = match size.split_once(':') {
        Some((w, h)) => (parse_side(w)?, parse_side(h)?),
        None => {
            let n = parse_side(&size)?;
            (n, n)
        }
    };
    if Board::new(width, height, Rules::Standard).is_err() {
        return Err(p.error(
            at,
            format!("board size {width}x{height}: each side must be 5 to 64"),
        ));
    }
    let rules = find("RU").and_then(|(_, v, _)| match v.trim().to_ascii_lowercase().as_str() {
        "russian" | "standard" => Some(Rules::Standard),
        "classic" => Some(Rules::Classic),
        _ => None,
    });
    let resigned = find("RE").and_then(|(_, v, _)| match v.trim() {
        "B+R" | "B+Resign" => Some(Player::Red),
        "W+R" | "W+Resign" => Some(Player::Black),
        _ => None,
    });
    let mut moves = Vec::new();
    for (name, value, at) in &props {
        let player = match name.as_str() {
            "W" | "AW" => Player::Red,
            "B" | "AB" => Player::Black,
            _ => continue,
        };
        // The dot, then optionally ".chain.chain" (ignored).
        let dot = value.split('.').next().unwrap_or("");
        if dot.is_empty() {
            continue; // a pass, which some programs write
        }
        let b = dot.as_bytes();
        let (x, y) = match (
            b.len(),
            b.first().and_then(|&c| coordinate_of(c)),
            b.get(1).and_then(|&c| coordinate_of(c)),
        ) {
            (2, Some(x), Some(y)) => (x, y),
            _ => return Err(p.error(*at, format!("{name}[{value}]: a point is two letters"))),
        };
        if x >= width || y >= height {
            return Err(p.error(
                *at,
                format!("{name}[{value}]: ({x}, {y}) is off the {width}x{height} board"),
            ));
        }
        let (line, column) = p.position(*at);
        moves.push(SgfMove {
            x,
            y,
            player,
            line,
            column,
        });
    }
    let name = |tag: &str| {
        find(tag)
            .map(|(_, v, _)| v.clone())
            .filter(|v| !v.is_empty())
    };
    Ok(SgfGame {
        width,
        height,
        rules,
        red_name: name("PW"),
        black_name: name("PB"),
        moves,
        resigned,
    })
}

impl SgfGame {
    /// Replay the record under `rules` (else its own `RU`, else the standard rules). An illegal
    /// dot is an error naming its place in the file.
    pub fn to_board(&self, rules: Option<Rules>) -> Result<Board, SgfError> {
        let rules = rules.or(self.rules).unwrap_or_default();
        let mut board = Board::new(self.width, self.height, rules).map_err(|message| SgfError {
            line: 1,
            column: 1,
            message,
        })?;
        for m in &self.moves {
            board.play_as(m.x, m.y, m.player).map_err(|e| SgfError {
                line: m.line,
                column: m.column,
                message: format!("illegal dot: {e}"),
            })?;
        }
        if let Some(player) = self.resigned {
            let _ = board.resign(player);
        }
        Ok(board)
    }
}
