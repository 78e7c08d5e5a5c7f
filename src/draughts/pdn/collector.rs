//! The game collector: the [`Visitor`] that turns what the reader reports into
//! [`GameRecord`]s (mainline moves with their numbers, marks, comments and setups), and the
//! functions that read a whole text with it.

use super::reader::{ReadMode, Reader, Visitor};
use super::{GameResult, MoveToken, PdnError};

/// A move number as written before a move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MoveNumber {
    pub number: u32,
    /// Written with three dots (`12...`): the second player's move.
    pub black_to_move: bool,
}

/// A mainline move of a [`GameRecord`] with what was written around it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedMove {
    pub token: MoveToken,
    /// The move number written right before the move, if any.
    pub number: Option<MoveNumber>,
    /// The strength mark written right after the move (`!?`, `(?)`).
    pub strength: Option<String>,
    pub nags: Vec<u16>,
    /// Comments between this move and the next mainline move (comments inside variations are
    /// not kept).
    pub comments_after: Vec<String>,
    pub line: usize,
    pub col: usize,
    /// The FEN of a setup command written before this move (the last one, if several).
    pub setup_before: Option<String>,
}

/// One game, mainline only: variations are read and checked but not kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GameRecord {
    pub tags: Vec<(String, String)>,
    pub start_line: usize,
    /// Comments before the first mainline move.
    pub initial_comments: Vec<String>,
    pub moves: Vec<RecordedMove>,
    /// Where `...` placeholders (omitted moves) stood: each entry is the number of moves before.
    pub ellipses: Vec<usize>,
    /// A setup command after the last move.
    pub final_setup: Option<String>,
    pub result: Option<GameResult>,
    /// The result token as written (`2-0`, `1/2:1/2`, `*`).
    pub result_text: Option<String>,
    /// Deviations a lenient read accepted in this game.
    pub warnings: Vec<PdnError>,
}

impl GameRecord {
    /// The value of the first tag with this name.
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A [`Visitor`] that collects [`GameRecord`]s.
#[derive(Debug, Default)]
pub struct RecordCollector {
    pub games: Vec<GameRecord>,
    current: GameRecord,
    depth: usize,
    pending_number: Option<MoveNumber>,
    pending_setup: Option<String>,
    /// Warnings reported before the game they belong to began.
    early_warnings: Vec<PdnError>,
    in_game: bool,
}

impl RecordCollector {
    /// An empty collector; read games land in `games`.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Visitor for RecordCollector {
    fn begin_game(&mut self, line: usize) {
        self.current = GameRecord {
            start_line: line,
            warnings: std::mem::take(&mut self.early_warnings),
            ..GameRecord::default()
        };
        self.depth = 0;
        self.pending_number = None;
        self.pending_setup = None;
        self.in_game = true;
    }
    fn tag(&mut self, name: &str, value: &str) {
        self.current
            .tags
            .push((name.to_string(), value.to_string()));
    }
    fn move_number(&mut self, number: u32, black_to_move: bool) {
        if self.depth == 0 {
            self.pending_number = Some(MoveNumber {
                number,
                black_to_move,
            });
        }
    }
    fn mv(&mut self, token: &MoveToken, line: usize, col: usize) {
        if self.depth == 0 {
            self.current.moves.push(RecordedMove {
                token: token.clone(),
                number: self.pending_number.take(),
                strength: None,
                nags: Vec::new(),
                comments_after: Vec::new(),
                line,
                col,
                setup_before: self.pending_setup.take(),
            });
        }
    }
    fn ellipsis(&mut self, _line: usize, _col: usize) {
        if self.depth == 0 {
            self.current.ellipses.push(self.current.moves.len());
            // `1. ... 7-12`: the move after the placeholder is the second player's.
            if let Some(n) = self.pending_number.as_mut() {
                n.black_to_move = true;
            }
        }
    }
    fn strength(&mut self, mark: &str) {
        if self.depth == 0 {
            if let Some(m) = self.current.moves.last_mut() {
                m.strength = Some(mark.to_string());
            }
        }
    }
    fn nag(&mut self, nag: u16) {
        if self.depth == 0 {
            if let Some(m) = self.current.moves.last_mut() {
                m.nags.push(nag);
            }
        }
    }
    fn comment(&mut self, text: &str) {
        if self.depth == 0 {
            match self.current.moves.last_mut() {
                Some(m) => m.comments_after.push(text.to_string()),
                None => self.current.initial_comments.push(text.to_string()),
            }
        }
    }
    fn begin_variation(&mut self) {
        self.depth += 1;
    }
    fn end_variation(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }
    fn setup(&mut self, fen: &str) {
        if self.depth == 0 {
            self.pending_setup = Some(fen.to_string());
        }
    }
    fn result(&mut self, result: GameResult, text: &str) {
        self.current.result = Some(result);
        self.current.result_text = Some(text.to_string());
    }
    fn end_game(&mut self) {
        self.current.final_setup = self.pending_setup.take();
        self.games.push(std::mem::take(&mut self.current));
        self.in_game = false;
    }
    fn warning(&mut self, warning: &PdnError) {
        if self.in_game {
            self.current.warnings.push(warning.clone());
        } else {
            self.early_warnings.push(warning.clone());
        }
    }
}

/// Reads every game of `text` into records.
pub fn read_games(text: &str, mode: ReadMode) -> Result<Vec<GameRecord>, PdnError> {
    let mut collector = RecordCollector::new();
    Reader::with_mode(text, mode).read_all(&mut collector)?;
    Ok(collector.games)
}
