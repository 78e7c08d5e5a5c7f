//! The PDN lexer: turns the text into tokens that carry their byte span, line and character
//! column. It knows the shape of every token (squares, moves without separator, results, tags,
//! comments, setups) and, in a lenient read, the deviations that concern single tokens; how the
//! tokens combine into games is the business of [`super::reader`].

use super::{GameResult, PdnError, PdnErrorKind, SquareToken};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tok<'a> {
    MoveNumber { number: u32, black: bool },
    Ellipsis,
    Square(SquareToken),
    AlphaMove(SquareToken, SquareToken),
    Compact { file: u8, to: SquareToken },
    MoveSep,
    CaptureSep,
    Strength(&'a str),
    Nag(u16),
    LParen,
    RParen,
    LBracket,
    RBracket,
    Result(GameResult, &'a str),
    Setup(&'a str),
    Comment(&'a str),
    Eof,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Token<'a> {
    pub(super) tok: Tok<'a>,
    /// Byte offsets of the token in the text.
    pub(super) start: usize,
    pub(super) end: usize,
    /// 1-based line and character column of `start`.
    pub(super) line: usize,
    pub(super) col: usize,
}

/// Result tokens, longest first so that `1/2-1/2` is not read as `1`. The flag marks the
/// Russian colon forms, which only a lenient read takes.
const RESULTS: [(&str, bool); 14] = [
    ("1/2-1/2", false),
    ("1/2:1/2", true),
    ("1-0", false),
    ("0-1", false),
    ("2-0", false),
    ("0-2", false),
    ("1-1", false),
    ("0-0", false),
    ("1:0", true),
    ("0:1", true),
    ("2:0", true),
    ("0:2", true),
    ("1:1", true),
    ("0:0", true),
];

/// Kinds of deviation that are reported only once per game, because they concern every move of
/// a game written that way.
const ONCE_UPPERCASE: u32 = 1;
const ONCE_COMPACT: u32 = 2;
pub(super) const ONCE_COMMENT_AFTER_NUMBER: u32 = 4;
const ONCE_ESCAPED_NEWLINE: u32 = 8;

/// A lexing failure: `recoverable` ones are unrecognised words, which a lenient read skips.
struct LexFail {
    error: PdnError,
    recoverable: bool,
}

pub(super) struct Lexer<'a> {
    pub(super) src: &'a str,
    b: &'a [u8],
    pos: usize,
    pub(super) line: usize,
    /// Byte offset where the current line starts.
    line_start: usize,
    /// Column cache on the current line: byte `col_pos` is at character column `col`.
    col_pos: usize,
    col: usize,
    lenient: bool,
    /// Whether unrecognised words are skipped (lenient, and not while trying out a variation).
    pub(super) recover: bool,
    pub(super) warnings: Vec<PdnError>,
    pub(super) once: u32,
    /// A read that skips defective games instead of stopping at the first error: a comment may
    /// not run over the tags of a following game (its `}` was lost), and a lenient read also
    /// repairs the common defects whose meaning is clear (see [`Lexer::placeholder_moves_end`]
    /// and the glued comment in `lex_number`).
    pub(super) recovering_games: bool,
    /// A token already read, to be returned next (the comment glued to a last move).
    queued: Option<Token<'a>>,
}

fn is_word_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

/// A character that can stand inside a move or a result, so that a result cannot start right
/// after it (`10-15` holds `0-1`, which is no result).
fn is_move_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'-' | b'x' | b':' | b'/' | b'.')
}

/// The length of the result token (`1-0`, `1/2-1/2`, `0:1`, ...) at byte `i`, if one stands
/// there and does not run on into a longer word (`1-10` is a move).
fn result_len(b: &[u8], i: usize) -> Option<usize> {
    RESULTS.iter().find_map(|(text, _)| {
        let end = i + text.len();
        let after = b.get(end).copied().unwrap_or(b' ');
        (b[i..].starts_with(text.as_bytes()) && !after.is_ascii_alphanumeric())
            .then_some(text.len())
    })
}

/// Whether the movetext may end at byte `i`: only whitespace, then a result, `*`, a tag or
/// the end of the text.
fn ends_movetext(b: &[u8], i: usize) -> bool {
    let Some(next) = b[i.min(b.len())..]
        .iter()
        .position(|c| !c.is_ascii_whitespace())
    else {
        return true;
    };
    let j = i + next;
    matches!(b[j], b'[' | b'*') || result_len(b, j).is_some()
}

/// Line breaks in `b`, counted as the lexer counts them (`\n`, `\r\n` or a lone `\r`).
fn count_line_breaks(b: &[u8]) -> usize {
    b.iter()
        .enumerate()
        .filter(|&(i, &c)| c == b'\n' || (c == b'\r' && b.get(i + 1) != Some(&b'\n')))
        .count()
}

/// The offset of a `[Name` that begins a line within `from..to`: the tags of a game.
fn tag_line_within(b: &[u8], from: usize, to: usize) -> Option<usize> {
    let to = to.min(b.len());
    let mut i = from;
    while i < to {
        if b[i] == b'\n' || b[i] == b'\r' {
            let mut j = i + 1;
            while j < to && (b[j] == b' ' || b[j] == b'\t') {
                j += 1;
            }
            if j + 1 < to && b[j] == b'[' && b[j + 1].is_ascii_alphabetic() {
                return Some(j);
            }
        }
        i += 1;
    }
    None
}

impl<'a> Lexer<'a> {
    pub(super) fn new(src: &'a str, lenient: bool, recover: bool) -> Self {
        // A byte-order mark is an encoding artefact, not text.
        let start = if src.starts_with('\u{feff}') { 3 } else { 0 };
        Lexer {
            src,
            b: src.as_bytes(),
            pos: start,
            line: 1,
            line_start: start,
            col_pos: start,
            col: 1,
            lenient,
            recover,
            warnings: Vec::new(),
            once: 0,
            recovering_games: false,
            queued: None,
        }
    }

    fn at(&self, i: usize) -> u8 {
        self.b.get(i).copied().unwrap_or(0)
    }

    fn newline(&mut self, next_line_start: usize) {
        self.line += 1;
        self.line_start = next_line_start;
        self.col_pos = next_line_start;
        self.col = 1;
    }

    /// Counts the line breaks in `from..to` (text that was skipped as a whole: a comment, a
    /// string, a setup) and moves `pos` to `to`.
    fn advance_over(&mut self, from: usize, to: usize) {
        let mut i = from;
        while i < to {
            match self.b[i] {
                b'\n' => self.newline(i + 1),
                b'\r' if self.at(i + 1) != b'\n' => self.newline(i + 1),
                _ => {}
            }
            i += 1;
        }
        self.pos = to;
    }

    /// Line and character column of byte `at`, which must be on the current line or later on it.
    fn position(&mut self, at: usize) -> (usize, usize) {
        let mut at = at.min(self.b.len());
        while !self.src.is_char_boundary(at) {
            at -= 1;
        }
        if at < self.line_start {
            // Only error paths ask for an earlier position; count from the start.
            let before = &self.src[..at];
            let line = 1 + before.bytes().filter(|&c| c == b'\n').count();
            let start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
            return (line, self.src[start..at].chars().count() + 1);
        }
        if at < self.col_pos {
            self.col_pos = self.line_start;
            self.col = 1;
        }
        self.col += self.src[self.col_pos..at].chars().count();
        self.col_pos = at;
        (self.line, self.col)
    }

    fn error_at(&mut self, at: usize, kind: PdnErrorKind, message: String) -> PdnError {
        let (line, col) = self.position(at);
        PdnError::new(kind, line, col, message)
    }

    fn warn_at(&mut self, at: usize, message: String) {
        let e = self.error_at(at, PdnErrorKind::Deviation, message);
        self.warnings.push(e);
    }

    fn warn_once(&mut self, flag: u32, at: usize, message: String) {
        if self.once & flag == 0 {
            self.once |= flag;
            self.warn_at(at, message);
        }
    }

    /// The word starting at `at`, for messages: up to whitespace or a bracket, at most 20 chars.
    fn word_at(&self, at: usize) -> &'a str {
        let rest = &self.src[at.min(self.src.len())..];
        let end = rest
            .char_indices()
            .find(|&(_, c)| c.is_whitespace() || "{}[]()\"".contains(c))
            .map(|(i, _)| i)
            .unwrap_or(rest.len());
        let word = &rest[..end];
        match word.char_indices().nth(20) {
            Some((i, _)) => &word[..i],
            None => word,
        }
    }

    fn char_at(&self, at: usize) -> char {
        self.src[at..].chars().next().unwrap_or('\0')
    }

    /// Skips whitespace and `%` line comments (and, leniently, literal `\n` escapes).
    fn skip_trivia(&mut self) {
        while self.pos < self.b.len() {
            match self.b[self.pos] {
                b' ' | b'\t' | 0x0b | 0x0c => self.pos += 1,
                b'\n' => {
                    self.pos += 1;
                    self.newline(self.pos);
                }
                b'\r' => {
                    self.pos += 1;
                    if self.at(self.pos) != b'\n' {
                        self.newline(self.pos);
                    }
                }
                b'%' => {
                    while self.pos < self.b.len() && !matches!(self.b[self.pos], b'\n' | b'\r') {
                        self.pos += 1;
                    }
                }
                b'\\' if self.lenient && matches!(self.at(self.pos + 1), b'n' | b'r' | b't') => {
                    let at = self.pos;
                    let msg = "the characters '\\n' (an escaped line break) stand between tokens";
                    self.warn_once(ONCE_ESCAPED_NEWLINE, at, msg.to_string());
                    self.pos += 2;
                }
                _ => break,
            }
        }
    }

    /// The next token; in a recovering read, unrecognised words are skipped with a warning.
    pub(super) fn next_token(&mut self) -> Result<Token<'a>, PdnError> {
        if let Some(t) = self.queued.take() {
            return Ok(t);
        }
        loop {
            self.skip_trivia();
            let start = self.pos;
            match self.lex_one() {
                Ok(t) => return Ok(t),
                Err(f) if f.recoverable && self.recover => {
                    let word = self.word_at(start);
                    self.warn_at(start, format!("skipped unrecognised text '{word}'"));
                    self.skip_word(start);
                }
                Err(f) => return Err(f.error),
            }
        }
    }

    /// Moves past the word at `from` (at least one character), to whitespace or a bracket.
    fn skip_word(&mut self, from: usize) {
        let mut i = from + self.char_at(from).len_utf8().max(1);
        while i < self.b.len() {
            let c = self.b[i];
            if c.is_ascii_whitespace() || matches!(c, b'{' | b'[' | b'(' | b')') {
                break;
            }
            i += 1;
        }
        self.pos = i.min(self.b.len());
    }

    fn fail(&mut self, at: usize, kind: PdnErrorKind, message: String) -> LexFail {
        LexFail {
            error: self.error_at(at, kind, message),
            recoverable: false,
        }
    }

    fn bad_word(&mut self, at: usize, message: String) -> LexFail {
        LexFail {
            error: self.error_at(at, PdnErrorKind::InvalidToken, message),
            recoverable: true,
        }
    }

    fn token(&mut self, tok: Tok<'a>, start: usize, end: usize) -> Token<'a> {
        let (line, col) = self.position(start);
        self.pos = end;
        Token {
            tok,
            start,
            end,
            line,
            col,
        }
    }

    fn lex_one(&mut self) -> Result<Token<'a>, LexFail> {
        let start = self.pos;
        if start >= self.b.len() {
            return Ok(self.token(Tok::Eof, start, start));
        }
        let c = self.b[start];
        match c {
            b'{' => {
                let Some(len) = self.b[start + 1..].iter().position(|&c| c == b'}') else {
                    return Err(self.fail(
                        start,
                        PdnErrorKind::Unterminated,
                        "comment '{' is never closed by '}'".to_string(),
                    ));
                };
                let end = start + 1 + len + 1;
                if self.recovering_games {
                    if let Some(tag) = tag_line_within(self.b, start + 1, end - 1) {
                        let line = self.line + count_line_breaks(&self.b[start..tag]);
                        let msg = format!(
                            "comment '{{' is not closed before the tags at line {line} (its '}}' is missing)"
                        );
                        return Err(self.fail(start, PdnErrorKind::Unterminated, msg));
                    }
                }
                let t = self.token(Tok::Comment(&self.src[start + 1..end - 1]), start, end);
                self.advance_over(start, end);
                Ok(t)
            }
            b'}' => Err(self.fail(
                start,
                PdnErrorKind::UnmatchedBrace,
                "'}' outside a comment (comments cannot be nested)".to_string(),
            )),
            b'(' => {
                // `(!?)` is a strength mark, not a variation (longest match).
                let marks = self.b[start + 1..]
                    .iter()
                    .take_while(|&&c| c == b'!' || c == b'?');
                let n = marks.count();
                if n > 0 && self.at(start + 1 + n) == b')' {
                    let end = start + n + 2;
                    Ok(self.token(Tok::Strength(&self.src[start..end]), start, end))
                } else {
                    Ok(self.token(Tok::LParen, start, start + 1))
                }
            }
            b')' => Ok(self.token(Tok::RParen, start, start + 1)),
            b'[' => Ok(self.token(Tok::LBracket, start, start + 1)),
            b']' => Ok(self.token(Tok::RBracket, start, start + 1)),
            b'*' => Ok(self.token(Tok::Result(GameResult::Unknown, "*"), start, start + 1)),
            b'!' | b'?' => {
                let n = self.b[start..]
                    .iter()
                    .take_while(|&&c| c == b'!' || c == b'?')
                    .count();
                let end = start + n;
                Ok(self.token(Tok::Strength(&self.src[start..end]), start, end))
            }
            b'$' => {
                let n = self.b[start + 1..]
                    .iter()
                    .take_while(|c| c.is_ascii_digit())
                    .count();
                if n == 0 {
                    return Err(self.bad_word(start, "'$' without a number".to_string()));
                }
                let end = start + 1 + n;
                match self.src[start + 1..end].parse::<u16>() {
                    Ok(nag) => Ok(self.token(Tok::Nag(nag), start, end)),
                    Err(_) => Err(self.fail(
                        start,
                        PdnErrorKind::NumberOutOfRange,
                        format!("NAG '{}' is too large", &self.src[start..end]),
                    )),
                }
            }
            b'/' => {
                let Some(len) = self.b[start + 1..].iter().position(|&c| c == b'/') else {
                    return Err(self.fail(
                        start,
                        PdnErrorKind::Unterminated,
                        "setup '/' is never closed by '/'".to_string(),
                    ));
                };
                let end = start + 1 + len + 1;
                let t = self.token(Tok::Setup(&self.src[start + 1..end - 1]), start, end);
                self.advance_over(start, end);
                Ok(t)
            }
            b'-' => Ok(self.token(Tok::MoveSep, start, start + 1)),
            b'x' | b':' => Ok(self.token(Tok::CaptureSep, start, start + 1)),
            b'.' => {
                if self.at(start + 1) == b'.' && self.at(start + 2) == b'.' {
                    Ok(self.token(Tok::Ellipsis, start, start + 3))
                } else {
                    Err(self.bad_word(start, "stray '.'".to_string()))
                }
            }
            b'0'..=b'9' => self.lex_number(start),
            b'a'..=b'h' => self.lex_alpha(start, b'a'),
            b'A'..=b'H' if self.lenient => self.lex_alpha(start, b'A'),
            b';' if self.lenient => {
                let len = self.b[start..]
                    .iter()
                    .position(|&c| c == b'\n' || c == b'\r');
                let end = start + len.unwrap_or(self.b.len() - start);
                self.warn_at(start, "';' comment (PGN, not PDN 3.0)".to_string());
                Ok(self.token(Tok::Comment(&self.src[start + 1..end]), start, end))
            }
            b'"' => Err(self.bad_word(start, "a quoted string outside a tag".to_string())),
            _ => {
                let ch = self.char_at(start);
                Err(self.bad_word(start, format!("unexpected character '{ch}'")))
            }
        }
    }

    /// A result, a move number or a numeric square.
    fn lex_number(&mut self, start: usize) -> Result<Token<'a>, LexFail> {
        let rest = &self.b[start..];
        // Every result starts with 0, 1 or 2 and a separator; most numbers are not results.
        let maybe_result = matches!(rest, [b'0'..=b'2', b'-' | b'/' | b':', ..]);
        for (text, colon) in RESULTS.iter().copied().filter(|_| maybe_result) {
            if !rest.starts_with(text.as_bytes()) {
                continue;
            }
            let after = self.at(start + text.len());
            // `1-1` before a digit is the start of a move such as `1-10`; the same for `1:1`.
            if (text == "1-1" || text == "1:1") && after.is_ascii_digit() {
                continue;
            }
            if colon && !self.lenient {
                if text == "1:1" {
                    continue; // a capture from 1 to 1, as far as the grammar goes
                }
                return Err(self.fail(
                    start,
                    PdnErrorKind::InvalidToken,
                    format!("'{text}' is not a PDN 3.0 result (results are written with '-')"),
                ));
            }
            if colon {
                self.warn_at(start, format!("Russian-style result '{text}'"));
            }
            let end = start + text.len();
            let result = GameResult::from_token(text).unwrap_or(GameResult::Unknown);
            return Ok(self.token(Tok::Result(result, &self.src[start..end]), start, end));
        }
        let digits = rest.iter().take_while(|c| c.is_ascii_digit()).count();
        let end = start + digits;
        let text = &self.src[start..end];
        if self.at(end) == b'.' {
            let black = self.at(end + 1) == b'.' && self.at(end + 2) == b'.';
            let token_end = if black { end + 3 } else { end + 1 };
            let Ok(number) = text.parse::<u32>() else {
                return Err(self.fail(
                    start,
                    PdnErrorKind::NumberOutOfRange,
                    format!("move number '{text}' is too large"),
                ));
            };
            return Ok(self.token(Tok::MoveNumber { number, black }, start, token_end));
        }
        // Squares are [1-9][0-9]? or 0[1-9] (a leading zero is allowed when reading).
        let valid = match digits {
            1 => text != "0",
            2 => text != "00",
            _ => false,
        };
        if !valid {
            return Err(self.bad_word(
                start,
                format!("'{text}' is neither a square nor a move number"),
            ));
        }
        let n: u8 = text.parse().unwrap_or(0);
        if is_word_char(self.at(end)) && self.at(end) != b'x' {
            if let Some(square) = self.square_with_glued_comment(start, end, n) {
                return Ok(square);
            }
            let word = self.word_at(start);
            return Err(self.bad_word(start, format!("'{word}' is not a PDN token")));
        }
        Ok(self.token(Tok::Square(SquareToken::Num(n)), start, end))
    }

    /// An alphanumeric square or move; `base` is `b'a'`, or `b'A'` for a lenient uppercase one.
    fn lex_alpha(&mut self, start: usize, base: u8) -> Result<Token<'a>, LexFail> {
        let file_of = |c: u8| (c >= base && c < base + 8).then(|| c - base);
        let rank_of = |c: u8| (b'1'..=b'8').contains(&c).then(|| c - b'0');
        let file = self.b[start] - base;
        let (tok, end) = match (rank_of(self.at(start + 1)), file_of(self.at(start + 1))) {
            (Some(rank), _) => {
                let from = SquareToken::Alg { file, rank };
                match (file_of(self.at(start + 2)), rank_of(self.at(start + 3))) {
                    (Some(f2), Some(r2)) => (
                        Tok::AlphaMove(from, SquareToken::Alg { file: f2, rank: r2 }),
                        start + 4,
                    ),
                    _ => (Tok::Square(from), start + 2),
                }
            }
            (None, Some(to_file)) if self.lenient => match rank_of(self.at(start + 2)) {
                Some(rank) => {
                    self.warn_once(
                        ONCE_COMPACT,
                        start,
                        "Russian compact notation ('ed4': file of the piece, destination)"
                            .to_string(),
                    );
                    let to = SquareToken::Alg {
                        file: to_file,
                        rank,
                    };
                    (Tok::Compact { file, to }, start + 3)
                }
                None => return Err(self.not_a_token(start)),
            },
            _ => return Err(self.not_a_token(start)),
        };
        if is_word_char(self.at(end)) && self.at(end) != b'x' {
            return Err(self.not_a_token(start));
        }
        if base == b'A' {
            self.warn_once(ONCE_UPPERCASE, start, "uppercase square names".to_string());
        }
        Ok(self.token(tok, start, end))
    }

    /// A recovering lenient read of `8-11Redoversteppedthetimecontrolonthismove.`: a comment
    /// written without braces, glued to the last square of the last move. Taken as the square
    /// `n` (bytes `start..end`) and a comment running to the end of the line (or to a result on
    /// it), when only a result, the next game's tags or the end of the text follow. The comment
    /// is queued as the next token.
    fn square_with_glued_comment(&mut self, start: usize, end: usize, n: u8) -> Option<Token<'a>> {
        let ends_a_move = start > 0 && matches!(self.b[start - 1], b'-' | b'x' | b':');
        if !(self.recovering_games
            && self.lenient
            && ends_a_move
            && self.at(end).is_ascii_alphabetic())
        {
            return None;
        }
        let line_end = self.b[end..]
            .iter()
            .position(|&c| c == b'\n' || c == b'\r')
            .map_or(self.b.len(), |i| end + i);
        // A result on the same line ends the comment (`...move. 0-1`).
        let stop = (end + 1..line_end)
            .find(|&i| {
                self.b[i - 1].is_ascii_whitespace()
                    && (self.b[i] == b'*' || result_len(self.b, i).is_some())
            })
            .unwrap_or(line_end);
        let text = self.src[end..stop].trim_end();
        // Braces or more moves in the text: not a plain comment, the meaning is unclear.
        let holds_a_move = text.as_bytes().windows(3).any(|w| {
            w[0].is_ascii_digit() && matches!(w[1], b'-' | b'x' | b':') && w[2].is_ascii_digit()
        });
        if holds_a_move || text.contains(['{', '}']) || !ends_movetext(self.b, end + text.len()) {
            return None;
        }
        let square = self.token(Tok::Square(SquareToken::Num(n)), start, end);
        let shown: String = text.chars().take(40).collect();
        let msg = format!("a comment without braces after the last move: '{shown}'");
        self.repair_at(end, msg);
        let comment = self.token(Tok::Comment(text), end, end + text.len());
        self.queued = Some(comment);
        Some(square)
    }

    /// Records a defect that a recovering read repaired (kind [`PdnErrorKind::Repaired`]).
    fn repair_at(&mut self, at: usize, message: String) {
        let e = self.error_at(at, PdnErrorKind::Repaired, message);
        self.warnings.push(e);
    }

    /// A recovering lenient read of a game whose moves are unknown and written as placeholders,
    /// `1. - - 2. - - ... 25. - -` (the standard's only unknown move is `...`). From the move
    /// number at `from`: the end of the run of placeholders, if a result, the next game's tags
    /// or the end of the text follows it (so that the meaning is clear). Also records the repair.
    pub(super) fn placeholder_moves_end(&mut self, from: usize) -> Option<usize> {
        if !(self.recovering_games && self.lenient) {
            return None;
        }
        let b = self.b;
        let skip_ws = |mut i: usize| {
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            i
        };
        let (mut i, mut end, mut count) = (from, from, 0);
        loop {
            i = skip_ws(i);
            let digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
            if digits == 0 || b.get(i + digits) != Some(&b'.') {
                break;
            }
            i += digits + 1;
            while b.get(i) == Some(&b'.') {
                i += 1;
            }
            i = skip_ws(i);
            if b.get(i) != Some(&b'-') {
                break;
            }
            i = skip_ws(i + 1);
            if b.get(i) == Some(&b'-') {
                i += 1;
            }
            end = i;
            count += 1;
        }
        if count == 0 || !ends_movetext(b, end) {
            return None;
        }
        // The first two placeholders show the form, e.g. `1. - - 2. - - ...`.
        let words: Vec<&str> = self.src[from..end].split_whitespace().collect();
        let mut shown = words[..words.len().min(6)].join(" ");
        if words.len() > 6 {
            shown.push_str(" ...");
        }
        let msg = format!(
            "moves written as placeholders ('{shown}', {count} moves): moves unknown, the game is read without moves"
        );
        self.repair_at(from, msg);
        Some(end)
    }

    /// Where a read that skips defective games goes on after an error at or after byte `from`:
    /// right after the next result token (or `*`), or at the next `[` that begins a line (the
    /// tags of the next game), whichever comes first; the end of the text if neither. After an
    /// error `in_tags`, the tag lines that follow still belong to the defective game: only a
    /// `[` after its movetext starts the next game.
    pub(super) fn resume_point(&self, from: usize, in_tags: bool) -> usize {
        let b = self.b;
        let mut i = from.min(b.len());
        let mut line_start = b[..i]
            .iter()
            .rev()
            .take_while(|&&c| c != b'\n' && c != b'\r')
            .all(|&c| c == b' ' || c == b'\t');
        let mut in_tags = in_tags;
        while i < b.len() {
            let c = b[i];
            match c {
                b'\n' | b'\r' => {
                    line_start = true;
                    i += 1;
                    continue;
                }
                b' ' | b'\t' => {
                    i += 1;
                    continue;
                }
                b'[' if line_start && !in_tags => return i,
                _ if line_start && c != b'[' => in_tags = false,
                _ => {}
            }
            match c {
                // In the tags, results are only ever inside strings.
                _ if in_tags => {}
                b'*' => return i + 1,
                b'{' => {
                    // A closed comment is skipped whole (it may hold `1-0` or `[`), unless the
                    // tags of a game come first: then this `{` lost its `}`.
                    let close = b[i..].iter().position(|&c| c == b'}').map(|n| i + n);
                    if let Some(close) = close {
                        if tag_line_within(b, i + 1, close).is_none() {
                            i = close;
                        }
                    }
                }
                b'"' => {
                    // A string (a tag value) is skipped to its closing quote on the same line.
                    let rest = &b[i + 1..];
                    let eol = rest.iter().position(|&c| c == b'\n' || c == b'\r');
                    let quote = rest.iter().position(|&c| c == b'"');
                    if let (Some(q), e) = (quote, eol) {
                        if e.map_or(true, |e| q < e) {
                            i += 1 + q;
                        }
                    }
                }
                b'%' if line_start => {
                    while i < b.len() && b[i] != b'\n' && b[i] != b'\r' {
                        i += 1;
                    }
                    continue;
                }
                b'0'..=b'2' if i == 0 || !is_move_char(b[i - 1]) => {
                    if let Some(len) = result_len(b, i) {
                        return i + len;
                    }
                }
                _ => {}
            }
            line_start = false;
            i += 1;
        }
        b.len()
    }

    /// Moves the lexer to byte `to` (forward or back), keeping line and column counts right and
    /// dropping anything queued or pending.
    pub(super) fn pos(&self) -> usize {
        self.pos
    }

    pub(super) fn seek(&mut self, to: usize) {
        let to = to.min(self.b.len());
        self.queued = None;
        if to >= self.pos {
            self.advance_over(self.pos, to);
            return;
        }
        self.line -= count_line_breaks(&self.b[to..self.pos]);
        let bom = if self.src.starts_with('\u{feff}') {
            3
        } else {
            0
        };
        self.line_start = self.b[..to]
            .iter()
            .rposition(|&c| c == b'\n' || c == b'\r')
            .map_or(0, |i| i + 1)
            .max(bom);
        self.col_pos = self.line_start;
        self.col = 1;
        self.pos = to;
    }

    fn not_a_token(&mut self, start: usize) -> LexFail {
        let word = self.word_at(start);
        self.bad_word(start, format!("'{word}' is not a PDN token"))
    }

    /// After a `[`: `Name "value"]`. Returns the name and the unescaped value.
    pub(super) fn read_tag(&mut self) -> Result<(&'a str, String), PdnError> {
        self.skip_trivia();
        let name_start = self.pos;
        let first = self.at(name_start);
        let first_ok = first.is_ascii_uppercase()
            || (self.lenient && (first.is_ascii_lowercase() || first == b'_'));
        if !first_ok {
            let (kind, msg) = (
                PdnErrorKind::InvalidTag,
                "a tag name (an uppercase letter, then letters, digits, '_') must follow '['",
            );
            return Err(self.error_at(name_start, kind, msg.to_string()));
        }
        let len = self.b[name_start..]
            .iter()
            .take_while(|&&c| c.is_ascii_alphanumeric() || c == b'_')
            .count();
        let name = &self.src[name_start..name_start + len];
        if !first.is_ascii_uppercase() {
            self.warn_at(
                name_start,
                format!("tag name '{name}' does not start uppercase"),
            );
        }
        self.pos = name_start + len;
        self.skip_trivia();
        let value_start = self.pos;
        let value = if self.at(value_start) == b'"' {
            match self.read_quoted_value(value_start)? {
                Some(value) => value,
                None => return Ok((name, self.unclosed_quote_value(name, value_start)?)),
            }
        } else if self.lenient && self.at(value_start) != b']' {
            // `[Round 17]`, `[Game # 612]`: the value runs to the `]` on the same line.
            let len = self.b[value_start..]
                .iter()
                .position(|&c| matches!(c, b']' | b'\n' | b'\r' | b'['));
            match len {
                Some(len) if self.at(value_start + len) == b']' => {
                    let value = self.src[value_start..value_start + len].trim_end();
                    self.warn_at(value_start, format!("tag value '{value}' without quotes"));
                    self.pos = value_start + len;
                    value.to_string()
                }
                _ => {
                    let msg = format!("tag '{name}' is not closed by ']' on its line");
                    return Err(self.error_at(value_start, PdnErrorKind::InvalidTag, msg));
                }
            }
        } else {
            let msg = format!("tag '{name}' needs a value in double quotes");
            return Err(self.error_at(value_start, PdnErrorKind::InvalidTag, msg));
        };
        // Reported where the `]` is missing, not at whatever stands next (often the next line).
        let value_end = self.pos;
        self.skip_trivia();
        if self.at(self.pos) != b']' {
            let msg = format!("tag '{name}' is not closed by ']'");
            return Err(self.error_at(value_end, PdnErrorKind::InvalidTag, msg));
        }
        self.pos += 1;
        Ok((name, value))
    }

    /// The quoted value of a tag and the `]` after it. Returns `None` when, in a lenient read, the
    /// value looks like one whose closing quote is missing (the caller then reads it again).
    fn read_quoted_value(&mut self, start: usize) -> Result<Option<String>, PdnError> {
        let saved = self.save();
        let value = match self.read_string(start) {
            Ok(value) => value,
            Err(_) if self.lenient => {
                self.restore(saved);
                return Ok(None);
            }
            Err(e) => return Err(e),
        };
        let save_after = self.save();
        self.skip_trivia();
        let closed = self.at(self.pos) == b']';
        self.restore(save_after);
        if !closed && self.lenient && self.line_of_closes(start) {
            self.restore(saved);
            return Ok(None);
        }
        Ok(Some(value))
    }

    /// Whether the line of byte `start` ends with `]` (ignoring trailing whitespace).
    fn line_of_closes(&self, start: usize) -> bool {
        let rest = &self.src[start..];
        let line = &rest[..rest.find(['\n', '\r']).unwrap_or(rest.len())];
        line.trim_end().ends_with(']')
    }

    /// Lenient `[Round "11.1]`: the value runs from the quote to the last `]` on the line; moves
    /// past that `]`.
    fn unclosed_quote_value(&mut self, name: &str, start: usize) -> Result<String, PdnError> {
        let rest = &self.src[start + 1..];
        let line = &rest[..rest.find(['\n', '\r']).unwrap_or(rest.len())];
        let Some(close) = line.rfind(']') else {
            let msg = format!("the value of tag '{name}' is never closed by '\"'");
            return Err(self.error_at(start, PdnErrorKind::Unterminated, msg));
        };
        let value = line[..close].trim_end_matches('"').to_string();
        self.warn_at(
            start,
            format!("the value of tag '{name}' lacks its closing quote"),
        );
        self.pos = start + 1 + close + 1;
        Ok(value)
    }

    fn save(&self) -> (usize, usize, usize, usize, usize) {
        (self.pos, self.line, self.line_start, self.col_pos, self.col)
    }

    fn restore(&mut self, s: (usize, usize, usize, usize, usize)) {
        (self.pos, self.line, self.line_start, self.col_pos, self.col) = s;
    }

    /// A `"` string at `start`: `\"` stands for `"` and `\\` for `\`; any other backslash is kept
    /// (file paths such as `C:\games` are common in tag values).
    fn read_string(&mut self, start: usize) -> Result<String, PdnError> {
        let mut value = String::new();
        let mut i = start + 1;
        let mut chunk = i;
        loop {
            match self.b.get(i) {
                None => {
                    let msg = "string '\"' is never closed".to_string();
                    return Err(self.error_at(start, PdnErrorKind::Unterminated, msg));
                }
                Some(b'"') => break,
                Some(b'\\') if matches!(self.at(i + 1), b'"' | b'\\') => {
                    value.push_str(&self.src[chunk..i]);
                    value.push(char::from(self.b[i + 1]));
                    i += 2;
                    chunk = i;
                }
                Some(_) => i += 1,
            }
        }
        value.push_str(&self.src[chunk..i]);
        self.advance_over(start, i + 1);
        Ok(value)
    }

    /// Puts the lexer right after byte `to` has been skipped, counting lines on the way.
    pub(super) fn jump_to(&mut self, to: usize) {
        let from = self.pos;
        self.advance_over(from, to);
    }
}
