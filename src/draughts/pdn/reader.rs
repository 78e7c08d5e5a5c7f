//! Streaming PDN reader: a hand-written parser over the tokens of [`super::lexer`] that calls a
//! [`Visitor`] for every element of a game, in the style of the `pgn-reader` crate. The visitor
//! that builds [`super::GameRecord`]s is in [`super::collector`].
//!
//! # Grammar
//!
//! [`ReadMode::Strict`] follows the PDN 3.0 reading grammar:
//!
//! ```text
//! PdnFile  : Game (Separator Game)* Separator?      Separator : '*' | Result
//! Game     : Tag+ Body? | Body                      Tag       : '[' Identifier String ']'
//! Body     : (GameMove | Variation | Comment | Setup | Nag)+
//! GameMove : MoveNumber? Move Strength?             Variation : '(' Body ')'
//! Move     : Square '-' Square | Square ([x:] Square)+ | AlphaMove | '...'
//! ```
//!
//! with squares `[1-9][0-9]?` or `0[1-9]` or `[a-h][1-8]`, alphanumeric moves without separator
//! (`a3b4`), move numbers `[0-9]+.` or `[0-9]+...`, strengths `[!?]+` or `([!?]+)`, NAGs
//! `$[0-9]+`, comments `{[^}]*}` (so they do not nest), setups `/FEN "..."/`, results `1-0`,
//! `0-1`, `1/2-1/2`, `2-0`, `0-2`, `1-1` (not before a digit, so `1-10` is a move) and `0-0`.
//! Whitespace may stand between any two tokens, also inside a move (`1- 7`); a `%` starts a
//! comment that runs to the end of the line. A byte-order mark at the start is skipped.
//!
//! # Lenient mode
//!
//! [`ReadMode::Lenient`] accepts, each time with a [`Visitor::warning`] of kind
//! [`PdnErrorKind::Deviation`], the deviations found in real archives:
//!
//! - uppercase squares (`E3-D4`) and the Russian compact notation (`ed4`, `gg7`);
//! - Russian results with a colon (`1:0`, `0:1`, `1/2:1/2`, ...);
//! - tag values without quotes (`[Round 17]`) or without their closing quote (`[Round "11.1]`),
//!   and tag names starting in lowercase;
//! - comments before the first tag of a game (they are passed on after `begin_game`);
//! - comments between a move number and its move (`1. {lost} 10-14`);
//! - a move number standing for an empty game (`1. 1-0`);
//! - a game that is not ended by a result or `*` before the next game's tags: it ends there;
//! - a header that repeats a tag name (`[Event ...]` twice): header-only games written one
//!   after the other, so the repeated tag starts a new game;
//! - free text in parentheses where a variation would be (`(Roberto's first choice)`), passed
//!   on as a comment when the text does not read as a variation;
//! - `;` comments to the end of the line (from PGN);
//! - the two characters `\n` between tokens (JSON-escaped exports);
//! - an unrecognised word (`9n`, a stray `.`), skipped.
//!
//! Everything else stays an error in both modes: a move number without a move (other than
//! before a result), unknown moves written `- -`, nested comments, unbalanced or empty
//! variations, moves without a second square, unterminated comments, strings and setups.


use super::lexer::{Lexer, Tok, Token, ONCE_COMMENT_AFTER_NUMBER};
use super::{GameResult, MoveToken, PdnError, PdnErrorKind};

/// How strictly the reader applies the grammar; see the module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReadMode {
    /// The PDN 3.0 reading grammar, nothing more.
    #[default]
    Strict,
    /// Also the deviations of real archives, each reported through [`Visitor::warning`].
    Lenient,
}

/// Receives the elements of each game in the order they stand in the text. Every method has an
/// empty default, so a visitor implements only what it needs.
///
/// For each game the calls are: `begin_game`, then `tag` for each tag (in lenient mode comments
/// written before the first tag may come first, as `comment`), then `begin_movetext` (always,
/// also for a game without moves), then the movetext events, then `result` if the game ends
/// with a result or `*` (a game at the end of the input may have none), then `end_game`.
#[allow(unused_variables)]
pub trait Visitor {
    /// A game starts; `line` is where its first token stands.
    fn begin_game(&mut self, line: usize) {}
    /// A tag `[name "value"]`, value unescaped (`\"` and `\\`).
    fn tag(&mut self, name: &str, value: &str) {}
    /// The tags are over and the movetext begins.
    fn begin_movetext(&mut self) {}
    /// A move number: `12.` gives `(12, false)`, `12...` gives `(12, true)`.
    fn move_number(&mut self, number: u32, black_to_move: bool) {}
    /// A move, with the line and column of its first character.
    fn mv(&mut self, token: &MoveToken, line: usize, col: usize) {}
    /// `...` written where a move stands: an omitted or unknown move (`1. ... 7-12`).
    fn ellipsis(&mut self, line: usize, col: usize) {}
    /// A move strength mark right after the last move, as written: `!`, `?!`, `(!?)`...
    /// [`super::strength_to_nag`] maps the usual ones to NAGs.
    fn strength(&mut self, mark: &str) {}
    /// A numeric annotation glyph `$n`.
    fn nag(&mut self, nag: u16) {}
    /// A comment: the text between `{` and `}` as written (in lenient mode also a `;` comment
    /// or free text in parentheses).
    fn comment(&mut self, text: &str) {}
    /// A variation `(` opens; the moves up to the matching `end_variation` are an alternative to
    /// the last move.
    fn begin_variation(&mut self) {}
    /// The variation opened by the matching `begin_variation` closes.
    fn end_variation(&mut self) {}
    /// A setup command `/FEN "..."/`: the position given by the FEN string replaces the current
    /// one.
    fn setup(&mut self, fen: &str) {}
    /// The game ends with this result; `text` is the token as written (`2-0`, `1/2:1/2`, `*`).
    fn result(&mut self, result: GameResult, text: &str) {}
    /// The game is over (after its result, if it has one).
    fn end_game(&mut self) {}
    /// A deviation a lenient read accepted (kind [`PdnErrorKind::Deviation`]).
    fn warning(&mut self, warning: &PdnError) {}
}

/// A visitor that ignores everything; used to check that text reads, without keeping it.
pub struct NullVisitor;
impl Visitor for NullVisitor {}


/// How a game's movetext ended.
enum Ending<'a> {
    Result(GameResult, &'a str),
    Tag { at: Token<'a> },
    Eof,
}

/// Reads the games of a PDN text one at a time.
///
/// ```text
/// let mut reader = Reader::new(text);
/// let mut collector = RecordCollector::default();
/// while reader.read_game(&mut collector)?.is_some() {}
/// ```
pub struct Reader<'a> {
    lex: Lexer<'a>,
    peeked: Option<Token<'a>>,
    lenient: bool,
    /// Trying out whether a parenthesis holds a variation: no free-text parentheses inside.
    trial: bool,
    /// Lenient: parentheses before this byte offset are known to be real variations.
    validated_until: usize,
    finished: bool,
    /// Lenient: a tag that repeated a name of the header it was in, so it opens the next game.
    carried_tag: Option<(&'a str, String, Token<'a>)>,
    /// Reused for every move, so that reading allocates nothing per move.
    move_buf: MoveToken,
}

impl<'a> Reader<'a> {
    /// A strict reader (the PDN 3.0 reading grammar).
    pub fn new(text: &'a str) -> Self {
        Self::with_mode(text, ReadMode::Strict)
    }

    /// A lenient reader for real-world archives; see the module documentation.
    pub fn lenient(text: &'a str) -> Self {
        Self::with_mode(text, ReadMode::Lenient)
    }

    /// A reader in the given mode.
    pub fn with_mode(text: &'a str, mode: ReadMode) -> Self {
        let lenient = mode == ReadMode::Lenient;
        Reader {
            lex: Lexer::new(text, lenient, lenient),
            peeked: None,
            lenient,
            trial: false,
            validated_until: 0,
            finished: false,
            carried_tag: None,
            move_buf: MoveToken {
                squares: Vec::with_capacity(4),
                capture: false,
                compact_from_file: None,
                text: String::with_capacity(16),
            },
        }
    }

    /// Reads the next game, calling `visitor` for each of its elements. `Ok(None)` at the end of
    /// the input. After an error the reader stops: later calls return `Ok(None)`.
    pub fn read_game<V: Visitor>(&mut self, visitor: &mut V) -> Result<Option<()>, PdnError> {
        if self.finished {
            return Ok(None);
        }
        let result = self.game(visitor);
        if !matches!(result, Ok(Some(()))) {
            self.finished = true;
        }
        result
    }

    /// Reads all remaining games; returns how many there were.
    pub fn read_all<V: Visitor>(&mut self, visitor: &mut V) -> Result<usize, PdnError> {
        let mut games = 0;
        while self.read_game(visitor)?.is_some() {
            games += 1;
        }
        Ok(games)
    }

    fn flush_warnings<V: Visitor>(&mut self, v: &mut V) {
        for w in self.lex.warnings.drain(..) {
            v.warning(&w);
        }
    }

    fn peek<V: Visitor>(&mut self, v: &mut V) -> Result<Token<'a>, PdnError> {
        if let Some(t) = self.peeked {
            return Ok(t);
        }
        let t = self.lex.next_token();
        self.flush_warnings(v);
        let t = t?;
        self.peeked = Some(t);
        Ok(t)
    }

    fn bump(&mut self) {
        self.peeked = None;
    }

    fn warn<V: Visitor>(&mut self, v: &mut V, at: &Token<'a>, message: String) {
        v.warning(&PdnError::new(
            PdnErrorKind::Deviation,
            at.line,
            at.col,
            message,
        ));
    }

    fn err(t: &Token<'a>, kind: PdnErrorKind, message: String) -> PdnError {
        PdnError::new(kind, t.line, t.col, message)
    }

    fn text(&self, t: &Token<'a>) -> &'a str {
        &self.lex.src[t.start..t.end]
    }

    fn game<V: Visitor>(&mut self, v: &mut V) -> Result<Option<()>, PdnError> {
        self.lex.once = 0;
        if let Some((name, value, at)) = self.carried_tag.take() {
            v.begin_game(at.line);
            v.tag(name, &value);
            return self.rest_of_game(v, vec![name], Vec::new());
        }
        let first = self.peek(v)?;
        if first.tok == Tok::Eof {
            return Ok(None);
        }
        // Lenient: comments written above the tags belong to the game below them.
        let mut early_comments: Vec<(Token<'a>, &'a str)> = Vec::new();
        if self.lenient {
            while let Tok::Comment(text) = self.peek(v)?.tok {
                early_comments.push((self.peek(v)?, text));
                self.bump();
            }
        }
        let header_follows = self.peek(v)?.tok == Tok::LBracket;
        v.begin_game(first.line);
        if header_follows {
            if let Some((t, _)) = early_comments.first() {
                let t = *t;
                self.warn(v, &t, "comment before the tags of a game".to_string());
            }
            for (_, text) in early_comments.drain(..) {
                v.comment(text);
            }
        }
        self.rest_of_game(v, Vec::new(), early_comments)
    }

    /// A game after `begin_game`: the (rest of the) header, the movetext and the result.
    fn rest_of_game<V: Visitor>(
        &mut self,
        v: &mut V,
        mut tag_names: Vec<&'a str>,
        early_comments: Vec<(Token<'a>, &'a str)>,
    ) -> Result<Option<()>, PdnError> {
        while self.peek(v)?.tok == Tok::LBracket {
            let open = self.peek(v)?;
            self.bump();
            let (name, value) = self.lex.read_tag()?;
            self.flush_warnings(v);
            if self.lenient && tag_names.contains(&name) {
                // Header-only games written one after the other without `*` between them.
                let msg = format!(
                    "tag '{name}' repeats: a new game starts (the game before has no movetext)"
                );
                self.warn(v, &open, msg);
                self.carried_tag = Some((name, value, open));
                v.begin_movetext();
                v.end_game();
                return Ok(Some(()));
            }
            v.tag(name, &value);
            tag_names.push(name);
        }
        let tags = tag_names.len();
        v.begin_movetext();
        let mut items = early_comments.len();
        for (_, text) in early_comments {
            v.comment(text);
        }
        let (body_items, ending, last_item) = self.body(v)?;
        items += body_items;
        match ending {
            Ending::Result(result, text) => {
                if tags == 0 && items == 0 {
                    let t = self.peek(v)?;
                    let msg = format!("result '{text}' without a game before it (empty game)");
                    return Err(Self::err(&t, PdnErrorKind::Empty, msg));
                }
                self.bump();
                v.result(result, text);
            }
            Ending::Tag { at } => {
                let mut msg =
                    "a tag follows the movetext, but no result or '*' ended the game".to_string();
                if let Some((start, end)) = last_item {
                    let last = &self.lex.src[start..end];
                    msg.push_str(&format!(" (the last item, '{last}', is not a result)"));
                }
                if !self.lenient {
                    return Err(Self::err(&at, PdnErrorKind::MissingGameTerminator, msg));
                }
                // The tag stays unread: it starts the next game.
                self.warn(v, &at, msg);
            }
            Ending::Eof => {}
        }
        v.end_game();
        Ok(Some(()))
    }

    /// The movetext of a game (or, when trying out a parenthesis, of a variation) up to a result,
    /// a tag or the end. Returns the number of top-level items, how it ended and the byte span of
    /// the last item (for messages).
    #[allow(clippy::type_complexity)]
    fn body<V: Visitor>(
        &mut self,
        v: &mut V,
    ) -> Result<(usize, Ending<'a>, Option<(usize, usize)>), PdnError> {
        // Open variations, as (items of the enclosing level, the '(' token); kept on the heap so
        // that deep nesting cannot overflow the stack.
        let mut open: Vec<(usize, Token<'a>)> = Vec::new();
        let mut items = 0usize;
        let mut last_item = None;
        loop {
            let t = self.peek(v)?;
            match t.tok {
                Tok::MoveNumber { number, black } => {
                    self.bump();
                    v.move_number(number, black);
                    if !self.after_move_number(v, &t, open.is_empty())? {
                        // Lenient `1. 1-0`: an empty game; the result comes next.
                        continue;
                    }
                    let span = self.game_move(v)?;
                    last_item = Some((t.start, span.1));
                    items += 1;
                }
                Tok::Square(_) | Tok::AlphaMove(..) | Tok::Compact { .. } | Tok::Ellipsis => {
                    last_item = Some(self.game_move(v)?);
                    items += 1;
                }
                Tok::Strength(mark) => {
                    let msg = format!("move strength '{mark}' without a move before it");
                    return Err(Self::err(&t, PdnErrorKind::UnexpectedToken, msg));
                }
                Tok::Nag(nag) => {
                    self.bump();
                    v.nag(nag);
                    last_item = Some((t.start, t.end));
                    items += 1;
                }
                Tok::Comment(text) => {
                    self.bump();
                    v.comment(text);
                    last_item = Some((t.start, t.end));
                    items += 1;
                }
                Tok::Setup(content) => {
                    self.bump();
                    let fen = Self::setup_fen(content).ok_or_else(|| {
                        let msg = format!("setup '/{content}/' is not of the form /FEN \"...\"/");
                        Self::err(&t, PdnErrorKind::InvalidSetup, msg)
                    })?;
                    v.setup(fen);
                    last_item = Some((t.start, t.end));
                    items += 1;
                }
                Tok::LParen => {
                    if self.lenient && !self.trial && t.start >= self.validated_until {
                        if let Some(text) = self.prose_in_parentheses(&t)? {
                            self.warn(v, &t, "free text in parentheses, read as a comment".into());
                            v.comment(text);
                            items += 1;
                            continue;
                        }
                    }
                    self.bump();
                    v.begin_variation();
                    open.push((items, t));
                    items = 0;
                }
                Tok::RParen => {
                    let Some((outer_items, open_token)) = open.pop() else {
                        let msg = "')' without a '(' before it".to_string();
                        return Err(Self::err(&t, PdnErrorKind::UnbalancedVariation, msg));
                    };
                    if items == 0 {
                        let msg = format!(
                            "empty variation (opened at line {}, column {})",
                            open_token.line, open_token.col
                        );
                        return Err(Self::err(&t, PdnErrorKind::Empty, msg));
                    }
                    self.bump();
                    v.end_variation();
                    items = outer_items + 1;
                    last_item = Some((open_token.start, t.end));
                }
                Tok::Result(_, _) | Tok::LBracket | Tok::Eof => {
                    if let Some((_, open_token)) = open.last() {
                        let what = match t.tok {
                            Tok::Result(_, text) => format!("result '{text}'"),
                            Tok::LBracket => "tag".to_string(),
                            _ => "end of input".to_string(),
                        };
                        let msg = format!(
                            "{what} inside a variation: '(' at line {}, column {} is not closed",
                            open_token.line, open_token.col
                        );
                        return Err(Self::err(&t, PdnErrorKind::UnbalancedVariation, msg));
                    }
                    let ending = match t.tok {
                        Tok::Result(result, text) => Ending::Result(result, text),
                        Tok::LBracket => Ending::Tag { at: t },
                        _ => Ending::Eof,
                    };
                    return Ok((items, ending, last_item));
                }
                Tok::RBracket => {
                    let msg = "']' outside a tag".to_string();
                    return Err(Self::err(&t, PdnErrorKind::UnexpectedToken, msg));
                }
                Tok::MoveSep | Tok::CaptureSep => {
                    let msg = format!("'{}' without a square before it", self.text(&t));
                    return Err(Self::err(&t, PdnErrorKind::IncompleteMove, msg));
                }
            }
        }
    }

    /// After a move number: checks that a move follows. Returns false when (leniently) the number
    /// stands for an empty game and the result follows instead.
    fn after_move_number<V: Visitor>(
        &mut self,
        v: &mut V,
        number: &Token<'a>,
        top_level: bool,
    ) -> Result<bool, PdnError> {
        loop {
            let t = self.peek(v)?;
            match t.tok {
                Tok::Square(_) | Tok::AlphaMove(..) | Tok::Compact { .. } | Tok::Ellipsis => {
                    return Ok(true)
                }
                Tok::Comment(text) if self.lenient => {
                    if self.lex.once & ONCE_COMMENT_AFTER_NUMBER == 0 {
                        self.lex.once |= ONCE_COMMENT_AFTER_NUMBER;
                        self.warn(v, &t, "comment between a move number and its move".into());
                    }
                    self.bump();
                    v.comment(text);
                }
                Tok::Result(_, text) if self.lenient && top_level => {
                    let msg = format!(
                        "move number '{}' without a move before result '{text}' (empty game)",
                        self.text(number)
                    );
                    self.warn(v, number, msg);
                    return Ok(false);
                }
                _ => {
                    let found = match t.tok {
                        Tok::Eof => "the end of the input".to_string(),
                        _ => format!("'{}'", self.text(&t)),
                    };
                    let msg = format!(
                        "move number '{}' is not followed by a move (found {found})",
                        self.text(number)
                    );
                    return Err(Self::err(number, PdnErrorKind::MoveNumberWithoutMove, msg));
                }
            }
        }
    }

    /// A move (the next token starts one) and its strength mark. Returns its byte span.
    fn game_move<V: Visitor>(&mut self, v: &mut V) -> Result<(usize, usize), PdnError> {
        let first = self.peek(v)?;
        self.bump();
        let mut token = std::mem::take(&mut self.move_buf);
        token.squares.clear();
        token.text.clear();
        token.capture = false;
        token.compact_from_file = None;
        let result = self.move_into(v, first, &mut token);
        self.move_buf = token;
        result
    }

    fn move_into<V: Visitor>(
        &mut self,
        v: &mut V,
        first: Token<'a>,
        token: &mut MoveToken,
    ) -> Result<(usize, usize), PdnError> {
        let mut end = first.end;
        match first.tok {
            Tok::Ellipsis => {
                v.ellipsis(first.line, first.col);
                self.strength(v)?;
                return Ok((first.start, first.end));
            }
            Tok::AlphaMove(a, b) => token.squares.extend([a, b]),
            Tok::Compact { file, to } => {
                token.squares.push(to);
                token.compact_from_file = Some(file);
            }
            Tok::Square(s) => {
                token.squares.push(s);
                let sep = self.peek(v)?;
                match sep.tok {
                    Tok::MoveSep => {
                        self.bump();
                        token.text.push_str(self.text(&first));
                        token.text.push('-');
                        end = self.square_after(v, &sep, token)?;
                    }
                    Tok::CaptureSep => {
                        token.capture = true;
                        token.text.push_str(self.text(&first));
                        while let Tok::CaptureSep = self.peek(v)?.tok {
                            let sep = self.peek(v)?;
                            self.bump();
                            token.text.push_str(self.text(&sep));
                            end = self.square_after(v, &sep, token)?;
                        }
                    }
                    _ => {
                        let msg = format!(
                            "square '{}' is not followed by '-', 'x' or ':' and a square",
                            self.text(&first)
                        );
                        return Err(Self::err(&first, PdnErrorKind::IncompleteMove, msg));
                    }
                }
            }
            _ => {
                // Not reached: callers check that a move starts here. An error, not a panic.
                let msg = format!("'{}' does not start a move", self.text(&first));
                return Err(Self::err(&first, PdnErrorKind::UnexpectedToken, msg));
            }
        }
        if token.text.is_empty() {
            token.text.push_str(self.text(&first));
        }
        v.mv(token, first.line, first.col);
        self.strength(v)?;
        Ok((first.start, end))
    }

    fn square_after<V: Visitor>(
        &mut self,
        v: &mut V,
        sep: &Token<'a>,
        token: &mut MoveToken,
    ) -> Result<usize, PdnError> {
        let t = self.peek(v)?;
        match t.tok {
            Tok::Square(s) => {
                self.bump();
                token.squares.push(s);
                token.text.push_str(self.text(&t));
                Ok(t.end)
            }
            _ => {
                let msg = format!("'{}' is not followed by a square", self.text(sep));
                Err(Self::err(sep, PdnErrorKind::IncompleteMove, msg))
            }
        }
    }

    fn strength<V: Visitor>(&mut self, v: &mut V) -> Result<(), PdnError> {
        if let Tok::Strength(mark) = self.peek(v)?.tok {
            self.bump();
            v.strength(mark);
        }
        Ok(())
    }

    /// The FEN of a setup command's content `FEN "..."`.
    fn setup_fen(content: &str) -> Option<&str> {
        let rest = content.trim().strip_prefix("FEN")?;
        let rest = rest.trim_start().strip_prefix('"')?;
        let (fen, tail) = rest.split_once('"')?;
        tail.trim().is_empty().then_some(fen)
    }

    /// Lenient: whether the parenthesis at `open` holds free text rather than a variation. If so,
    /// moves past it and returns the text; if it reads as a variation, marks it as checked.
    fn prose_in_parentheses(&mut self, open: &Token<'a>) -> Result<Option<&'a str>, PdnError> {
        let src = self.lex.src;
        let Some(close) = matching_paren(src.as_bytes(), open.start) else {
            let msg = "'(' is never closed by ')'".to_string();
            return Err(Self::err(open, PdnErrorKind::UnbalancedVariation, msg));
        };
        let inner = &src[open.start + 1..close];
        let mut trial = Reader::with_mode(inner, ReadMode::Lenient);
        trial.trial = true;
        trial.lex.recover = false;
        let reads = matches!(trial.body(&mut NullVisitor), Ok((n, Ending::Eof, _)) if n > 0);
        if reads {
            self.validated_until = close + 1;
            return Ok(None);
        }
        self.bump();
        self.lex.jump_to(close + 1);
        Ok(Some(inner))
    }
}

/// The byte offset of the `)` closing the `(` at `open`, skipping `{}` comments.
fn matching_paren(b: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = open;
    while i < b.len() {
        match b[i] {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            b'{' => i += b[i..].iter().position(|&c| c == b'}')?,
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draughts::pdn::{read_games, GameRecord, MoveNumber, RecordCollector, SquareToken};

    fn strict(text: &str) -> Vec<GameRecord> {
        read_games(text, ReadMode::Strict).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    fn lenient(text: &str) -> Vec<GameRecord> {
        read_games(text, ReadMode::Lenient).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    fn strict_err(text: &str) -> PdnError {
        match read_games(text, ReadMode::Strict) {
            Ok(games) => panic!("accepted: {text:?} -> {games:?}"),
            Err(e) => e,
        }
    }

    fn lenient_err(text: &str) -> PdnError {
        match read_games(text, ReadMode::Lenient) {
            Ok(games) => panic!("accepted leniently: {text:?} -> {games:?}"),
            Err(e) => e,
        }
    }

    fn texts(game: &GameRecord) -> Vec<&str> {
        game.moves.iter().map(|m| m.token.text.as_str()).collect()
    }

    /// Records every call, to check the order of events.
    #[derive(Default)]
    struct Log(Vec<String>);
    impl Visitor for Log {
        fn begin_game(&mut self, line: usize) {
            self.0.push(format!("begin@{line}"));
        }
        fn tag(&mut self, name: &str, value: &str) {
            self.0.push(format!("tag {name}={value}"));
        }
        fn begin_movetext(&mut self) {
            self.0.push("movetext".into());
        }
        fn move_number(&mut self, number: u32, black: bool) {
            self.0
                .push(format!("#{number}{}", if black { "..." } else { "." }));
        }
        fn mv(&mut self, token: &MoveToken, line: usize, col: usize) {
            self.0.push(format!("mv {}@{line}:{col}", token.text));
        }
        fn ellipsis(&mut self, _: usize, _: usize) {
            self.0.push("...".into());
        }
        fn strength(&mut self, mark: &str) {
            self.0.push(format!("strength {mark}"));
        }
        fn nag(&mut self, nag: u16) {
            self.0.push(format!("${nag}"));
        }
        fn comment(&mut self, text: &str) {
            self.0.push(format!("{{{text}}}"));
        }
        fn begin_variation(&mut self) {
            self.0.push("(".into());
        }
        fn end_variation(&mut self) {
            self.0.push(")".into());
        }
        fn setup(&mut self, fen: &str) {
            self.0.push(format!("setup {fen}"));
        }
        fn result(&mut self, result: GameResult, text: &str) {
            self.0.push(format!("result {result:?} {text}"));
        }
        fn end_game(&mut self) {
            self.0.push("end".into());
        }
        fn warning(&mut self, w: &PdnError) {
            self.0.push(format!("warning {}", w.message));
        }
    }

    fn log(text: &str, mode: ReadMode) -> Vec<String> {
        let mut log = Log::default();
        Reader::with_mode(text, mode).read_all(&mut log).unwrap();
        log.0
    }

    #[test]
    fn reads_a_simple_game_into_a_record() {
        let text = "[Event \"Test\"]\n[Result \"1-0\"]\n\n1. 11-15 23-19 2. 8-11 22-17 1-0\n";
        let games = strict(text);
        assert_eq!(games.len(), 1);
        let g = &games[0];
        assert_eq!(g.tag("Event"), Some("Test"));
        assert_eq!(g.start_line, 1);
        assert_eq!(texts(g), ["11-15", "23-19", "8-11", "22-17"]);
        assert_eq!(
            g.moves[0].token.squares,
            [SquareToken::Num(11), SquareToken::Num(15)]
        );
        assert!(!g.moves[0].token.capture);
        assert_eq!(
            g.moves[0].number,
            Some(MoveNumber {
                number: 1,
                black_to_move: false
            })
        );
        assert_eq!(g.moves[1].number, None);
        assert_eq!((g.moves[2].line, g.moves[2].col), (4, 19));
        assert_eq!(g.result, Some(GameResult::FirstPlayerWin));
        assert_eq!(g.result_text.as_deref(), Some("1-0"));
    }

    #[test]
    fn visitor_sees_events_in_order() {
        let text =
            "[White \"A\"]\n1. 32-28! $1 {good} (1. 33-29 {also}) 19-23 /FEN \"W:W31:B1\"/ 2-0";
        let expected = [
            "begin@1",
            "tag White=A",
            "movetext",
            "#1.",
            "mv 32-28@2:4",
            "strength !",
            "$1",
            "{good}",
            "(",
            "#1.",
            "mv 33-29@2:25",
            "{also}",
            ")",
            "mv 19-23@2:39",
            "setup W:W31:B1",
            "result FirstPlayerWin 2-0",
            "end",
        ];
        assert_eq!(log(text, ReadMode::Strict), expected);
    }

    #[test]
    fn black_move_numbers_and_ellipsis() {
        let g = &strict("12... 20-25 13. 33-28 *")[0];
        assert_eq!(
            g.moves[0].number,
            Some(MoveNumber {
                number: 12,
                black_to_move: true
            })
        );
        assert_eq!(
            g.moves[1].number,
            Some(MoveNumber {
                number: 13,
                black_to_move: false
            })
        );
        assert_eq!(g.result, Some(GameResult::Unknown));
        // `1. ... 7-12` is the older way of writing `1... 7-12`.
        let g = &strict("1. ... 7-12 2. 32-28 *")[0];
        assert_eq!(g.ellipses, [0]);
        assert_eq!(
            g.moves[0].number,
            Some(MoveNumber {
                number: 1,
                black_to_move: true
            })
        );
        assert_eq!(texts(g), ["7-12", "32-28"]);
    }

    #[test]
    fn captures_with_and_without_path() {
        let g = &strict("23x14x7 15x22 a3:c5:e7 c3xe5 *")[0];
        assert_eq!(texts(g), ["23x14x7", "15x22", "a3:c5:e7", "c3xe5"]);
        let path: Vec<_> = [23, 14, 7].map(SquareToken::Num).into();
        assert_eq!(g.moves[0].token.squares, path);
        assert!(g.moves.iter().all(|m| m.token.capture));
        assert_eq!(
            g.moves[2].token.squares,
            [
                SquareToken::Alg { file: 0, rank: 3 },
                SquareToken::Alg { file: 2, rank: 5 },
                SquareToken::Alg { file: 4, rank: 7 }
            ]
        );
    }

    #[test]
    fn alphanumeric_moves_without_separator() {
        // The official suite's alphanumeric.pdn.
        let g = &strict("1.a3b4\n")[0];
        assert_eq!(texts(g), ["a3b4"]);
        let sq = &g.moves[0].token.squares;
        assert_eq!(
            sq,
            &[
                SquareToken::Alg { file: 0, rank: 3 },
                SquareToken::Alg { file: 1, rank: 4 }
            ]
        );
        assert_eq!(g.moves[0].token.compact_from_file, None);
    }

    #[test]
    fn strength_marks_including_the_parenthesised_form() {
        // The official suite's movestrength.pdn: `(!?!!!)` is a mark, not a variation.
        let g = &strict("1.32-28!? 19-23(!?!!!) 2.28x19 *")[0];
        let marks: Vec<_> = g.moves.iter().map(|m| m.strength.as_deref()).collect();
        assert_eq!(marks, [Some("!?"), Some("(!?!!!)"), None]);
        assert_eq!(strict_err("{x} !").kind, PdnErrorKind::UnexpectedToken);
    }

    #[test]
    fn nags_attach_to_the_move_before() {
        let g = &strict("32-28 $12 $1 19-23 *")[0];
        assert_eq!(g.moves[0].nags, [12, 1]);
        assert_eq!(strict_err("32-28 $ *").kind, PdnErrorKind::InvalidToken);
        assert_eq!(
            strict_err("32-28 $99999 *").kind,
            PdnErrorKind::NumberOutOfRange
        );
    }

    #[test]
    fn comments_span_lines_and_keep_positions_right() {
        let text = "{ a comment\nover two lines } 32-28 {after}\n  19-23 % a line comment 40-50\n*";
        let g = &strict(text)[0];
        assert_eq!(g.initial_comments, [" a comment\nover two lines "]);
        assert_eq!(g.moves[0].comments_after, ["after"]);
        assert_eq!((g.moves[0].line, g.moves[0].col), (2, 18));
        assert_eq!((g.moves[1].line, g.moves[1].col), (3, 3));
        assert_eq!(texts(g), ["32-28", "19-23"]);
    }

    #[test]
    fn variations_are_checked_but_not_recorded() {
        // The official suite's variation.pdn.
        let text = "32-28 19-23 (18-23 38-32 (37-32? 23-29! { Black wins }) 12-18) 28x19 14x23";
        let g = &strict(text)[0];
        assert_eq!(texts(g), ["32-28", "19-23", "28x19", "14x23"]);
        assert!(g.moves[1].comments_after.is_empty());
        assert_eq!(strict_err("32-28 () 19-23").kind, PdnErrorKind::Empty);
        assert_eq!(
            strict_err("32-28 (19-23").kind,
            PdnErrorKind::UnbalancedVariation
        );
        assert_eq!(
            strict_err("32-28 19-23)").kind,
            PdnErrorKind::UnbalancedVariation
        );
        assert_eq!(
            strict_err("32-28 (19-23 1-0)").kind,
            PdnErrorKind::UnbalancedVariation
        );
    }

    #[test]
    fn deep_nesting_does_not_overflow_the_stack() {
        let text = format!(
            "32-28 {}19-23{} *",
            "(".repeat(100_000),
            ")".repeat(100_000)
        );
        assert_eq!(strict(&text)[0].moves.len(), 1);
        let text = format!("32-28 {} *", "(".repeat(100_000));
        assert_eq!(strict_err(&text).kind, PdnErrorKind::UnbalancedVariation);
        assert_eq!(lenient_err(&text).kind, PdnErrorKind::UnbalancedVariation);
    }

    #[test]
    fn setup_commands() {
        let g = &strict("1.31-26 17-21 /FEN \"B:B1-16,18-21:W26,28,33-50\"/ 2. 32-28 *")[0];
        assert_eq!(
            g.moves[2].setup_before.as_deref(),
            Some("B:B1-16,18-21:W26,28,33-50")
        );
        let g = &strict("32-28 /FEN \"B::\"/ *")[0];
        assert_eq!(g.final_setup.as_deref(), Some("B::"));
        assert_eq!(
            strict_err("32-28 /W:W31:B1/ *").kind,
            PdnErrorKind::InvalidSetup
        );
        assert_eq!(
            strict_err("32-28 /FEN \"W").kind,
            PdnErrorKind::Unterminated
        );
    }

    #[test]
    fn all_standard_results() {
        let cases = [
            ("1-0", GameResult::FirstPlayerWin),
            ("2-0", GameResult::FirstPlayerWin),
            ("0-1", GameResult::SecondPlayerWin),
            ("0-2", GameResult::SecondPlayerWin),
            ("1/2-1/2", GameResult::Draw),
            ("1-1", GameResult::Draw),
            ("0-0", GameResult::DoubleForfeit),
            ("*", GameResult::Unknown),
        ];
        for (text, result) in cases {
            let g = &strict(&format!("32-28 {text}"))[0];
            assert_eq!(
                (g.result, g.result_text.as_deref()),
                (Some(result), Some(text))
            );
        }
        // `1-10` is a move, `1-1` before something else a result.
        let g = &strict("1-10 1-1")[0];
        assert_eq!(texts(g), ["1-10"]);
        assert_eq!(g.result, Some(GameResult::Draw));
        // Results are game separators.
        let games = strict("32-28 1-0 33-28 0-2 [Event \"x\"] *");
        assert_eq!(games.len(), 3);
        assert_eq!(games[2].tag("Event"), Some("x"));
        assert_eq!(strict_err("32-28 1-0 1-0").kind, PdnErrorKind::Empty);
    }

    #[test]
    fn russian_results_only_when_lenient() {
        let e = strict_err("cb4 fg5 1:0");
        assert_eq!(e.kind, PdnErrorKind::InvalidToken);
        let e = strict_err("c3-b4 f6-g5 1/2:1/2");
        assert!(e.message.contains("not a PDN 3.0 result"), "{e}");
        let g = &lenient("c3-b4 f6-g5 1/2:1/2")[0];
        assert_eq!(
            (g.result, g.result_text.as_deref()),
            (Some(GameResult::Draw), Some("1/2:1/2"))
        );
        assert_eq!(g.warnings.len(), 1);
        // Strictly, `1:1` is a (nonsensical) capture from 1 to 1, as far as syntax goes.
        assert_eq!(texts(&strict("1:1 *")[0]), ["1:1"]);
    }

    #[test]
    fn tags_with_escapes_on_one_line_and_without_movetext() {
        // The official suite's string.pdn, and a game ending at the end of the input.
        let text = "[White \"This is a string with an escaped character \\\"\"] 32-28";
        let g = &strict(text)[0];
        assert_eq!(
            g.tag("White"),
            Some("This is a string with an escaped character \"")
        );
        assert_eq!(g.result, None);
        let g = &strict("[A \"back\\\\slash \\n kept\"][B \"x\"]")[0];
        assert_eq!(
            g.tags,
            [
                ("A".into(), "back\\slash \\n kept".into()),
                ("B".into(), "x".into())
            ]
        );
        assert!(g.moves.is_empty());
        let games = strict("[FEN \"W:W31-50:B1-20\"]\r\n*\r\n\r\n[FEN \"?:W29:B22\"]\r\n*\r\n");
        assert_eq!(games.len(), 2);
        assert_eq!(games[1].start_line, 4);
        assert_eq!(strict_err("[event \"x\"]").kind, PdnErrorKind::InvalidTag);
        assert_eq!(strict_err("[Event x]").kind, PdnErrorKind::InvalidTag);
        assert_eq!(strict_err("[Event \"x\"").kind, PdnErrorKind::InvalidTag);
        assert_eq!(strict_err("[Event \"x]\n").kind, PdnErrorKind::Unterminated);
    }

    #[test]
    fn real_world_layout() {
        // BOM, CRLF, blank lines, no tags, moves split over lines and with spaces inside.
        let text = "\u{feff}\r\n\r\n1. 32-\r\n28 19 -23\r\n 2. 1- 7 01-06 *\r\n\r\n\r\n33-28 *";
        let games = strict(text);
        assert_eq!(games.len(), 2);
        assert_eq!(texts(&games[0]), ["32-28", "19-23", "1-7", "01-06"]);
        assert_eq!(
            games[0].moves[3].token.squares,
            [SquareToken::Num(1), SquareToken::Num(6)]
        );
        assert_eq!((games[0].moves[0].line, games[0].moves[0].col), (3, 4));
        assert_eq!(games[1].start_line, 8);
    }

    #[test]
    fn reader_returns_none_at_the_end_and_after_an_error() {
        let mut reader = Reader::new("32-28 * 33-28 *");
        let mut c = RecordCollector::new();
        assert_eq!(reader.read_game(&mut c), Ok(Some(())));
        assert_eq!(reader.read_game(&mut c), Ok(Some(())));
        assert_eq!(reader.read_game(&mut c), Ok(None));
        assert_eq!(c.games.len(), 2);
        let mut reader = Reader::new("32-28 } 33-28 *");
        assert!(reader.read_game(&mut c).is_err());
        assert_eq!(reader.read_game(&mut c), Ok(None));
        assert_eq!(Reader::new("").read_all(&mut c), Ok(0));
        assert_eq!(
            Reader::new(" \n% only a comment line\n").read_all(&mut c),
            Ok(0)
        );
    }

    #[test]
    fn errors_name_line_and_character_column() {
        let e = strict_err("[White \"Ñandú\"] {é} 32-28 . 19-23");
        assert_eq!((e.line, e.col, e.kind), (1, 27, PdnErrorKind::InvalidToken));
        assert_eq!(e.to_string(), "line 1, column 27: stray '.'");
    }

    #[test]
    fn what_the_standard_forbids() {
        let cases = [
            (
                "1. 33-29 19-23 2. 35-30 { nested { comment } }",
                PdnErrorKind::UnmatchedBrace,
            ),
            ("1. 32-28 - - 2. 33-28", PdnErrorKind::IncompleteMove),
            ("1. - - 2. - -", PdnErrorKind::MoveNumberWithoutMove),
            ("1. 1-0", PdnErrorKind::MoveNumberWithoutMove),
            ("1. 32-28 2.", PdnErrorKind::MoveNumberWithoutMove),
            (
                "32-28 19-23 [Event \"next\"]",
                PdnErrorKind::MissingGameTerminator,
            ),
            ("32 28", PdnErrorKind::IncompleteMove),
            ("32-", PdnErrorKind::IncompleteMove),
            ("32-28x", PdnErrorKind::IncompleteMove),
            ("x 32", PdnErrorKind::IncompleteMove),
            ("123-28", PdnErrorKind::InvalidToken),
            ("00-28", PdnErrorKind::InvalidToken),
            // Longest match, as in the grammar's lexer: `0-2` is a result, so this is an empty
            // game followed by `8`.
            ("0-28", PdnErrorKind::Empty),
            ("i3-b4", PdnErrorKind::InvalidToken),
            ("a9-b4", PdnErrorKind::InvalidToken),
            ("ed4 fe5", PdnErrorKind::InvalidToken),
            ("E3-D4", PdnErrorKind::InvalidToken),
            ("32-28 ; PGN comment", PdnErrorKind::InvalidToken),
            ("32-28 {open", PdnErrorKind::Unterminated),
            ("32-28 ]", PdnErrorKind::UnexpectedToken),
            ("32-28 \"string\"", PdnErrorKind::InvalidToken),
            ("99999999999. 32-28", PdnErrorKind::NumberOutOfRange),
        ];
        for (text, kind) in cases {
            assert_eq!(strict_err(text).kind, kind, "{text}");
        }
        let e = strict_err("64. 38-32 13-19 4-6\n\n[Event \"next\"]");
        assert_eq!((e.line, e.col), (3, 1));
        assert!(e.message.contains("'4-6'"), "{e}");
    }

    #[test]
    fn lenient_deviations_are_accepted_with_warnings() {
        // Russian compact and uppercase notation.
        let g = &lenient("1. ed4 gg7 2. E3-D4 F6:H4 *")[0];
        assert_eq!(texts(g), ["ed4", "gg7", "E3-D4", "F6:H4"]);
        assert_eq!(g.moves[0].token.compact_from_file, Some(4));
        assert_eq!(
            g.moves[0].token.squares,
            [SquareToken::Alg { file: 3, rank: 4 }]
        );
        assert_eq!(g.moves[1].token.compact_from_file, Some(6));
        assert_eq!(
            g.moves[2].token.squares[0],
            SquareToken::Alg { file: 4, rank: 3 }
        );
        assert!(g.moves[3].token.capture);
        assert_eq!(
            g.warnings.len(),
            2,
            "one per kind and game: {:?}",
            g.warnings
        );
        assert!(g.warnings.iter().all(|w| w.kind == PdnErrorKind::Deviation));

        // Tags: no quotes, lowercase name, a missing closing quote.
        let g = &lenient("[Round 17]\n[Game # 612]\n[event \"e\"]\n[Date \"1.1]\n32-28 *")[0];
        let tags: Vec<_> = g
            .tags
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            tags,
            [
                ("Round", "17"),
                ("Game", "# 612"),
                ("event", "e"),
                ("Date", "1.1")
            ]
        );
        assert_eq!(g.warnings.len(), 4);

        // A comment above the tags, one between number and move, a `;` comment.
        let games = lenient("{ file comment }\n[Event \"a\"]\n1. {lost} 10-14 ; rest of line\n*");
        assert_eq!(games.len(), 1);
        assert_eq!(games[0].initial_comments, [" file comment ", "lost"]);
        assert_eq!(games[0].moves[0].comments_after, [" rest of line"]);

        // `1. 1-0` as an empty game; a missing result before the next tags; repeated headers.
        let games =
            lenient("[Event \"a\"]\n1. 1-0\n[Event \"b\"]\n32-28\n[Event \"c\"]\n[Event \"d\"]\n*");
        let events: Vec<_> = games.iter().map(|g| g.tag("Event").unwrap()).collect();
        assert_eq!(events, ["a", "b", "c", "d"]);
        assert_eq!(
            (games[0].moves.len(), games[0].result),
            (0, Some(GameResult::FirstPlayerWin))
        );
        assert_eq!(games[1].result, None);
        assert_eq!(games[3].start_line, 6);

        // Free text in parentheses, next to a real variation.
        let g = &lenient("9-13 22-18 (Roberto's first choice, 1.) 11-16 (11-15 23-19) 18-14 *")[0];
        assert_eq!(texts(g), ["9-13", "22-18", "11-16", "18-14"]);
        assert_eq!(g.moves[1].comments_after, ["Roberto's first choice, 1."]);
        assert_eq!(g.warnings.len(), 1);

        // JSON-escaped line breaks between tags, and a garbled move number.
        let g = &lenient("[Event \"a\"]\\n[Site \"b\"]\\n\n8. 37-31 26x37\n9n 32x41 19-23 *")[0];
        assert_eq!(g.tag("Site"), Some("b"));
        assert_eq!(texts(g), ["37-31", "26x37", "32x41", "19-23"]);
        assert!(
            g.warnings.iter().any(|w| w.message.contains("'9n'")),
            "{:?}",
            g.warnings
        );
    }

    #[test]
    fn lenient_mode_still_rejects_what_no_archive_needs() {
        assert_eq!(
            lenient_err("1. 33-29 { nested { comment } }").kind,
            PdnErrorKind::UnmatchedBrace
        );
        assert_eq!(
            lenient_err("1. - - 2. - - 1-0").kind,
            PdnErrorKind::MoveNumberWithoutMove
        );
        assert_eq!(
            lenient_err("5. 41-37 48x31 6.\n\n[Event \"x\"]").kind,
            PdnErrorKind::MoveNumberWithoutMove
        );
        assert_eq!(
            lenient_err("32-28 (19-23").kind,
            PdnErrorKind::UnbalancedVariation
        );
        assert_eq!(lenient_err("32-28 {open").kind, PdnErrorKind::Unterminated);
    }

    #[test]
    fn warnings_reach_the_visitor_within_their_game() {
        let events = log("{top}\n[Event \"a\"]\n1. ed4 *", ReadMode::Lenient);
        assert_eq!(events[0], "begin@1");
        assert!(
            events[1].starts_with("warning comment before the tags"),
            "{events:?}"
        );
        assert_eq!(events[2], "{top}");
        assert_eq!(events[3], "tag Event=a");
        assert!(events
            .iter()
            .any(|e| e.starts_with("warning Russian compact")));
    }

    /// A small deterministic generator, so that the fuzz tests need no dependency.
    struct XorShift(u64);
    impl XorShift {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// Reads `text` in both modes with a visitor that records everything; all that matters is
    /// that it returns.
    fn read_both(text: &str) {
        for mode in [ReadMode::Strict, ReadMode::Lenient] {
            let mut c = RecordCollector::new();
            let _ = Reader::with_mode(text, mode).read_all(&mut c);
            let _ = Reader::with_mode(text, mode).read_all(&mut Log::default());
        }
    }

    const SAMPLE: &str =
        "\u{feff}% header line\r\n{ Ünïcode comment }\n[Event \"E \\\"q\\\" \\\\\"]\n\
        [Round 3]\n[FEN \"W:W31-50:B1-20\"]\n1. 32-28! 19-23 (18-23 38-32 (37-32? 23-29!) 12-18)\n\
        2. 28x19 14x23 $4 3. a3b4 ed4 4. E3:G5 1- 7 /FEN \"B:W1:B2\"/ 5... 23x14x7(?) ; x\n\
        (Prose, here.) 6. ... 12-18 1/2:1/2\n\n[Event \"2\"]\n1. 1-0 [Event \"3\"] 32-28 \\n 9n *";

    #[test]
    fn fuzz_random_bytes_never_panic() {
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
        let alphabet = b"0123456789-x:./!?()[]{}\"$*%;\\ \n\rabcdefghEFGHWB#\xc3\xa9\xff";
        for _ in 0..20_000 {
            let len = rng.below(160);
            let bytes: Vec<u8> = if rng.below(2) == 0 {
                (0..len)
                    .map(|_| alphabet[rng.below(alphabet.len())])
                    .collect()
            } else {
                (0..len).map(|_| rng.next() as u8).collect()
            };
            read_both(&String::from_utf8_lossy(&bytes));
        }
    }

    #[test]
    fn fuzz_truncations_and_mutations_of_real_text_never_panic() {
        for (i, _) in SAMPLE.char_indices() {
            read_both(&SAMPLE[..i]);
            read_both(&SAMPLE[i..]);
        }
        let mut rng = XorShift(12345);
        let pieces = [
            "(", ")", "{", "}", "\"", "[", "]", "/", "1.", "...", "x", "-", "1-0", "\n",
        ];
        for _ in 0..5000 {
            let mut text = SAMPLE.to_string();
            for _ in 0..1 + rng.below(4) {
                let mut at = rng.below(text.len() + 1);
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                if rng.below(2) == 0 {
                    text.insert_str(at, pieces[rng.below(pieces.len())]);
                } else {
                    let mut end = (at + 1 + rng.below(6)).min(text.len());
                    while !text.is_char_boundary(end) {
                        end += 1;
                    }
                    text.replace_range(at..end, "");
                }
            }
            read_both(&text);
        }
    }

    #[test]
    fn sample_reads_leniently_as_intended() {
        let games = lenient(SAMPLE);
        assert_eq!(games.len(), 3);
        assert_eq!(games[0].tag("Event"), Some("E \"q\" \\"));
        assert_eq!(games[0].moves.len(), 10);
        assert_eq!(games[0].result_text.as_deref(), Some("1/2:1/2"));
        assert_eq!(games[1].moves.len(), 0);
        assert_eq!(texts(&games[2]), ["32-28"]);
    }
}
