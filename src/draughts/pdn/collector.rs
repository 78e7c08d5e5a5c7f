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
    /// The game's place in the text, 1 for the first (defective games skipped by a read that
    /// skips them count too, so the number is the one a reader of the file would give).
    pub number: usize,
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
    /// Games met so far, defective ones included.
    games_met: usize,
    /// The games a read skipping defective games left out, in the order met.
    pub defects: Vec<Defect>,
}

/// A game that a read skipping defective games left out: where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("game {game}, {error}; skipped to line {resumed_at_line}")]
pub struct Defect {
    /// The game's place in the text, 1 for the first.
    pub game: usize,
    /// The error: its line, column, kind and message.
    pub error: PdnError,
    /// Where reading went on: the next game's tags, or the line of the result that ended the
    /// defective game.
    pub resumed_at_line: usize,
}

impl RecordCollector {
    /// An empty collector; read games land in `games`.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Visitor for RecordCollector {
    fn begin_game(&mut self, line: usize) {
        self.games_met += 1;
        self.current = GameRecord {
            number: self.games_met,
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
    fn defective_game(&mut self, error: &PdnError, resumed_at_line: usize) {
        if !self.in_game {
            // The error came before the game's first token could be read.
            self.games_met += 1;
        }
        self.current = GameRecord::default();
        self.early_warnings.clear();
        self.in_game = false;
        self.defects.push(Defect {
            game: self.games_met,
            error: error.clone(),
            resumed_at_line,
        });
    }
}

/// What a read that skips defective games found in a text: every game that reads, and where
/// and why each other game was left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ArchiveRead {
    /// The games that read, each with its [`GameRecord::number`] in the text; repaired defects
    /// are among their warnings (kind [`super::PdnErrorKind::Repaired`]).
    pub games: Vec<GameRecord>,
    pub defects: Vec<Defect>,
}

impl ArchiveRead {
    /// Games in the text, defective ones included.
    pub fn games_in_text(&self) -> usize {
        self.games.len() + self.defects.len()
    }
}

/// Reads every game of `text` that reads, skipping each defective game to the next (see
/// [`Reader::skipping_defective_games`]): one bad game in an archive costs that game only.
pub fn read_archive(text: &str, mode: ReadMode) -> ArchiveRead {
    let mut collector = RecordCollector::new();
    let mut reader = Reader::with_mode(text, mode).skipping_defective_games();
    // Cannot fail: errors become defects.
    while let Ok(Some(())) = reader.read_game(&mut collector) {}
    ArchiveRead {
        games: collector.games,
        defects: collector.defects,
    }
}

/// Reads every game of `text` into records.
pub fn read_games(text: &str, mode: ReadMode) -> Result<Vec<GameRecord>, PdnError> {
    let mut collector = RecordCollector::new();
    Reader::with_mode(text, mode).read_all(&mut collector)?;
    Ok(collector.games)
}
