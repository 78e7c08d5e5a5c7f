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
//!
//! # Skipping defective games
//!
//! A reader made with [`Reader::skipping_defective_games`] does not stop at an error: it reports
//! the game to [`Visitor::defective_game`] and goes on at the next game, so that one defective
//! game costs only itself. Leniently, it also repairs two common defects whose meaning is clear
//! (`- -` placeholders for unknown moves, a comment without braces after the last move).

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
///
/// In a read that skips defective games ([`Reader::skipping_defective_games`]), a game in which
/// an error is found ends with `defective_game` instead of `end_game` (also, for an error before
/// the game's first token could be read, without a `begin_game` before it).
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
    /// A deviation a lenient read accepted (kind [`PdnErrorKind::Deviation`]), or a defect a
    /// read skipping defective games repaired (kind [`PdnErrorKind::Repaired`]).
    fn warning(&mut self, warning: &PdnError) {}
    /// A read skipping defective games abandons the current game at `error`; reading goes on at
    /// line `resumed_at_line` (the next game's tags, or right after the result that ended the
    /// defective game). What the visitor was told of the game so far is to be dropped.
    fn defective_game(&mut self, error: &PdnError, resumed_at_line: usize) {}
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
    /// After an error, skip to the next game instead of stopping.
    skip_defective: bool,
    /// Byte offset where the game being read starts (where a skip must get past).
    game_start: usize,
    /// Whether the game being read is still in its tags (its movetext not begun).
    in_tags: bool,
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
            skip_defective: false,
            game_start: 0,
            in_tags: false,
            carried_tag: None,
            move_buf: MoveToken {
                squares: Vec::with_capacity(4),
                capture: false,
                compact_from_file: None,
                text: String::with_capacity(16),
            },
        }
    }

    /// A reader that, instead of stopping at the first error, reports a game with an error to
    /// [`Visitor::defective_game`] and goes on with the next game (at the next `[` that begins a
    /// line, or right after the next result token), so that one defective game does not cost
    /// the others. A lenient reader then also repairs the common defects whose meaning is clear,
    /// reporting each as a warning of kind [`PdnErrorKind::Repaired`]: moves written as
    /// placeholders (`1. - - 2. - -`, moves unknown: a game without moves) and a comment without
    /// braces glued to the last move (`8-11Redoverstepped...`). It also takes a comment that
    /// runs over the tags of a following game for what it is, a comment that lost its `}`.
    pub fn skipping_defective_games(mut self) -> Self {
        self.skip_defective = true;
        self.lex.recovering_games = true;
        self
    }

    /// Reads the next game, calling `visitor` for each of its elements. `Ok(None)` at the end of
    /// the input. After an error the reader stops: later calls return `Ok(None)` (unless it
    /// skips defective games: then the error goes to [`Visitor::defective_game`], the call
    /// returns `Ok(Some(()))` and the next call reads the next game).
    pub fn read_game<V: Visitor>(&mut self, visitor: &mut V) -> Result<Option<()>, PdnError> {
        if self.finished {
            return Ok(None);
        }
        let result = self.game(visitor);
        match result {
            Err(error) if self.skip_defective => {
                self.skip_to_next_game();
                visitor.defective_game(&error, self.lex.line);
                Ok(Some(()))
            }
            Ok(Some(())) => Ok(Some(())),
            _ => {
                self.finished = true;
                result
            }
        }
    }

    /// After an error in the game that started at `game_start`: moves to where the next game
    /// starts, always past `game_start` so that reading advances.
    fn skip_to_next_game(&mut self) {
        let from = self.peeked.map_or(self.lex.pos(), |t| t.start);
        let from = from.min(self.lex.pos()).max(self.game_start + 1);
        let to = self.lex.resume_point(from, self.in_tags);
        self.peeked = None;
        self.carried_tag = None;
        self.lex.warnings.clear();
        self.lex.seek(to);
    }

    /// Reads all remaining games; returns how many there were (in a read that skips defective
    /// games, counting the defective ones).
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
        self.in_tags = true;
        self.game_start = match (&self.carried_tag, self.peeked) {
            (Some((_, _, open)), _) => open.start,
            (None, Some(t)) => t.start,
            (None, None) => self.lex.pos(),
        };
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
        self.in_tags = false;
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
        let mut mainline_moves = 0usize;
        loop {
            let t = self.peek(v)?;
            match t.tok {
                Tok::MoveNumber { number, black } => {
                    self.bump();
                    if mainline_moves == 0 && open.is_empty() && self.placeholder_moves(v, &t)? {
                        // `1. - - 2. - -` repaired: moves unknown; the result comes next.
                        items += 1;
                        continue;
                    }
                    v.move_number(number, black);
                    if !self.after_move_number(v, &t, open.is_empty())? {
                        // Lenient `1. 1-0`: an empty game; the result comes next.
                        continue;
                    }
                    let span = self.game_move(v)?;
                    last_item = Some((t.start, span.1));
                    items += 1;
                    mainline_moves += usize::from(open.is_empty());
                }
                Tok::Square(_) | Tok::AlphaMove(..) | Tok::Compact { .. } | Tok::Ellipsis => {
                    last_item = Some(self.game_move(v)?);
                    items += 1;
                    mainline_moves += usize::from(open.is_empty());
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

    /// Whether the move number `number` starts a run of `- -` placeholders that a recovering
    /// lenient read repairs (see [`Lexer::placeholder_moves_end`]); if so, moves past the run.
    fn placeholder_moves<V: Visitor>(
        &mut self,
        v: &mut V,
        number: &Token<'a>,
    ) -> Result<bool, PdnError> {
        if self.peek(v)?.tok != Tok::MoveSep {
            return Ok(false);
        }
        let Some(end) = self.lex.placeholder_moves_end(number.start) else {
            return Ok(false);
        };
        self.bump();
        self.lex.seek(end);
        self.flush_warnings(v);
        Ok(true)
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
