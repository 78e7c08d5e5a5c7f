//! A board's durable records, in its folder of the state directory:
//!
//! - `events.jsonl`: one [`LogRecord`] per step of the tracker: the input (a board state as read,
//!   or an operator command, in `boardwatch track`'s JSON line format), where the source stood
//!   (a video's frame number, a file's line), and the events it caused. Written and synced
//!   before anything is published, so that a restarted daemon can rebuild the tracker exactly by
//!   replaying the inputs, and every event a listener saw is in it. `boardwatch replay --log`
//!   writes the same records.
//! - `game.pdn` (the current game) and `games.pdn` (every game of the board), replaced atomically
//!   whenever the record changes, for broadcast tools that read files (`replay --pdn`: every
//!   game, in one file).
//!
//! [`Recorder`](super::recorder::Recorder) keeps both.

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::atomic::write_atomically;
use crate::tracker::{write_pdn_with_tags, Event, TrackedGame, Input};

/// Who gave the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputOrigin {
    /// The board's source: a camera reading or a line of an observation file.
    Source,
    /// An operator, through the HTTP API (or the daemon itself starting the first game).
    Operator,
}

/// One line of `events.jsonl`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LogRecord {
    /// When it was written: seconds since 1970 (for people reading the log).
    pub at: f64,
    pub from: InputOrigin,
    /// The source's position after this input (a video's frame number, a file's line number),
    /// to continue from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<u64>,
    /// An observation `{"grid": ..., "probs": ..., "t": ...}` or a command `{"op": ...}`.
    pub input: Input,
    /// What the tracker answered; published only once this record is on disk.
    #[serde(default)]
    pub events: Vec<Event>,
}

/// The PDN files of one board, and their current texts (served over HTTP from memory).
pub struct PdnFiles {
    /// The game on the board (`game.pdn`), if kept.
    current_path: Option<PathBuf>,
    /// Every game (`games.pdn`, or `replay --pdn`), if kept.
    all_path: Option<PathBuf>,
    tags: Vec<(String, String)>,
    current: String,
    all: String,
}

impl PdnFiles {
    /// A board's folder: `game.pdn` and `games.pdn`.
    pub fn new(dir: &Path, tags: Vec<(String, String)>) -> PdnFiles {
        PdnFiles::at(Some(dir.join("game.pdn")), Some(dir.join("games.pdn")), tags)
    }

    /// Any of the two files; a file not wanted (`None`) is only kept as text.
    pub fn at(current_path: Option<PathBuf>, all_path: Option<PathBuf>, tags: Vec<(String, String)>) -> PdnFiles {
        PdnFiles { current_path, all_path, tags, current: String::new(), all: String::new() }
    }

    /// Bring the files up to date with `games` (every game, in order) and `current` (the game on
    /// the board, possibly without moves yet); only what changed is written. True if anything was.
    pub fn update(&mut self, games: &[TrackedGame], current: Option<&TrackedGame>) -> io::Result<bool> {
        let current = current.or(games.last());
        let current_text = current.map(|g| write_pdn_with_tags(std::slice::from_ref(g), &self.tags)).unwrap_or_default();
        let all_text = write_pdn_with_tags(games, &self.tags);
        let mut wrote = false;
        for (path, text, new) in [(&self.current_path, &mut self.current, current_text), (&self.all_path, &mut self.all, all_text)] {
            let missing = path.as_ref().is_some_and(|p| !p.exists());
            if new != *text || missing {
                if let Some(path) = path {
                    write_atomically(path, new.as_bytes())?;
                    wrote = true;
                }
                *text = new;
            }
        }
        Ok(wrote)
    }

    /// The current game as PDN.
    pub fn current(&self) -> &str {
        &self.current
    }

    /// Every game as PDN.
    pub fn all(&self) -> &str {
        &self.all
    }
}

/// Seconds since 1970, for log records.
pub fn now_seconds() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draughts::{Color, Variant};
    use crate::tracker::{RecordItem, TrackedMove};

    #[test]
    fn files_follow_the_record_and_are_not_rewritten_needlessly() {
        let dir = std::env::temp_dir().join(format!("bw-records-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut files = PdnFiles::new(&dir, vec![("White".into(), "Ann".into())]);
        let mut game = TrackedGame::new(Variant::English, None, Color::Black);
        assert!(files.update(&[], Some(&game)).unwrap());
        assert!(files.current().contains("[White \"Ann\"]"));
        assert_eq!(files.all(), "");
        game.items.push(RecordItem::Move(TrackedMove {
            side: Color::Black,
            text: "11-15".into(),
            path: "11-15".into(),
            fen_after: String::new(),
            t: None,
            inferred: false,
            alternatives: Vec::new(),
        }));
        assert!(files.update(std::slice::from_ref(&game), Some(&game)).unwrap());
        assert!(!files.update(std::slice::from_ref(&game), Some(&game)).unwrap(), "nothing changed");
        let on_disk = std::fs::read_to_string(dir.join("game.pdn")).unwrap();
        assert!(on_disk.contains("1. 11-15 *"), "{on_disk}");
        assert_eq!(std::fs::read_to_string(dir.join("games.pdn")).unwrap(), on_disk);
    }

    #[test]
    fn log_records_read_back_as_written() {
        let record = LogRecord {
            at: 1.5,
            from: InputOrigin::Operator,
            cursor: None,
            input: Input::Command(crate::tracker::Command::Init),
            events: Vec::new(),
        };
        let line = serde_json::to_string(&record).unwrap();
        assert_eq!(line, r#"{"at":1.5,"from":"operator","input":{"op":"init"},"events":[]}"#);
        assert_eq!(serde_json::from_str::<LogRecord>(&line).unwrap(), record);
    }
}
