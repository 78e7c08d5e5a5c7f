//! A board's durable records, in its folder of the state directory:
//!
//! - `events.jsonl`: one [`LogRecord`] per step of the tracker: the input (a board state as read,
//!   or an operator command, in `boardwatch track`'s JSON line format), where the source stood
//!   (a video's frame number, a file's line), and the events it caused. Written and synced
//!   before anything is published, so that a restarted daemon can rebuild the tracker exactly by
//!   replaying the inputs, and every event a listener saw is in it. `boardwatch replay --log`
//!   writes the same records.
//! - `game.pdn` (the current game), replaced atomically whenever the record changes, and
//!   `games.pdn` (every game of the board: finished games appended as they end, the current one
//!   after them), for broadcast tools that read files (`replay --pdn`: every game, in one file).
//!
//! [`Recorder`](super::recorder::Recorder) keeps both.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

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

/// The PDN files of one board.
///
/// `game.pdn` (the game on the board) is replaced atomically when it changes. `games.pdn` is
/// the board's finished games, each appended once when it ends and never written again, then
/// the current game, rewritten in place after them: the cost of a move does not grow with the
/// number of games, and nothing but the current game is kept in memory. After a restart the
/// recorder hands every finished game again ([`PdnFiles::add_finished`]): those the file
/// already holds are only compared, and the file is cut back and written from the first one
/// that differs (a crash in the middle of a write, a missing file).
pub struct PdnFiles {
    /// The game on the board (`game.pdn`), if kept.
    current_path: Option<PathBuf>,
    /// Every game (`games.pdn`, or `replay --pdn`), if kept.
    all_path: Option<PathBuf>,
    tags: Vec<(String, String)>,
    /// Give each game the `Date` the recorder hands with it (the daemon's boards; not `replay`,
    /// whose video was filmed on a day the log's clock does not know).
    dated: bool,
    /// The text of `game.pdn`.
    current: Arc<str>,
    /// The current game as it follows the finished ones in `games.pdn` (empty until it has a
    /// move), and whether the file holds it.
    tail: Arc<str>,
    tail_on_disk: bool,
    /// Finished games at the start of `games.pdn`, and their length in bytes.
    finished_games: usize,
    finished_len: u64,
    /// Without a `games.pdn` (`replay` without `--pdn`): the finished games' text.
    finished_text: String,
    /// After a restart, until the first difference: finished games handed again are compared
    /// with the file instead of written.
    checking: bool,
}

/// Every game of a board as PDN, without holding the finished ones in memory: read when asked.
#[derive(Clone, Debug, Default)]
pub struct GamesPdn {
    /// The file whose first `len` bytes are the finished games (they never change).
    file: Option<(PathBuf, u64)>,
    /// The finished games' text when there is no file.
    finished: Arc<str>,
    /// The current game.
    tail: Arc<str>,
}

impl GamesPdn {
    /// The whole text: the finished games, then the current one.
    pub fn read(&self) -> io::Result<String> {
        let mut text = String::new();
        if let Some((path, len)) = &self.file {
            let file = File::open(path).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
            file.take(*len).read_to_string(&mut text)?;
        }
        text.push_str(&self.finished);
        text.push_str(&self.tail);
        Ok(text)
    }
}

impl PdnFiles {
    /// A board's folder: `game.pdn` and `games.pdn`.
    pub fn new(dir: &Path, tags: Vec<(String, String)>) -> PdnFiles {
        PdnFiles::at(Some(dir.join("game.pdn")), Some(dir.join("games.pdn")), tags)
    }

    /// Any of the two files; a file not wanted (`None`) is only kept as text.
    pub fn at(current_path: Option<PathBuf>, all_path: Option<PathBuf>, tags: Vec<(String, String)>) -> PdnFiles {
        PdnFiles {
            current_path,
            checking: all_path.is_some(),
            all_path,
            tags,
            dated: false,
            current: Arc::from(""),
            tail: Arc::from(""),
            tail_on_disk: false,
            finished_games: 0,
            finished_len: 0,
            finished_text: String::new(),
        }
    }

    /// Games get the date the recorder hands with them (when it knows one), unless the tags
    /// set `Date`: the configured tag wins.
    pub fn dating_games(mut self) -> PdnFiles {
        self.dated = true;
        self
    }

    /// One game as PDN, with the files' tags and `date` as its `Date` when the files date games
    /// and the tags do not set one.
    fn game_text(&self, game: &TrackedGame, date: Option<&str>) -> String {
        let games = std::slice::from_ref(game);
        // A configured Date, or the round's, wins over the day the game was played.
        let set = self.tags.iter().any(|(name, _)| name == "Date") || game.tag("Date").is_some();
        match date.filter(|_| self.dated && !set) {
            Some(date) => {
                let mut tags = self.tags.clone();
                tags.push(("Date".to_string(), date.to_string()));
                write_pdn_with_tags(games, &tags)
            }
            None => write_pdn_with_tags(games, &self.tags),
        }
    }

    /// How many finished games `games.pdn` holds.
    pub fn finished_games(&self) -> usize {
        self.finished_games
    }

    /// Append the next finished game to `games.pdn` (after a restart: check that it is there).
    /// `date`: the game's PDN date, if known (see [`PdnFiles::dating_games`]).
    pub fn add_finished(&mut self, game: &TrackedGame, date: Option<&str>) -> io::Result<()> {
        let text = self.game_text(game, date);
        match &self.all_path {
            None => self.finished_text.push_str(&text),
            Some(path) => {
                if !(self.checking && file_holds(path, self.finished_len, text.as_bytes())) {
                    self.checking = false;
                    // The current game's text after the finished ones is overwritten: it is
                    // written again by the next `update`.
                    self.tail_on_disk = false;
                    write_at(path, self.finished_len, text.as_bytes())?;
                }
            }
        }
        self.finished_games += 1;
        self.finished_len += text.len() as u64;
        Ok(())
    }

    /// Bring the files up to date with `current` (the game on the board, with a move or not;
    /// `None` after a clear) and `shown` (what `game.pdn` shows: the current game, or else the
    /// last finished one), each with its PDN date if known; only what changed is written. True
    /// if anything was.
    pub fn update(&mut self, current: Option<(&TrackedGame, Option<&str>)>, shown: Option<(&TrackedGame, Option<&str>)>) -> io::Result<bool> {
        self.checking = false;
        let current_text = shown.map(|(g, date)| self.game_text(g, date)).unwrap_or_default();
        let tail = current.filter(|(g, _)| !g.is_empty()).map(|(g, date)| self.game_text(g, date)).unwrap_or_default();
        let mut wrote = false;
        let missing = self.current_path.as_ref().is_some_and(|p| !p.exists());
        if *current_text != *self.current || missing {
            if let Some(path) = &self.current_path {
                write_atomically(path, current_text.as_bytes())?;
                wrote = true;
            }
            self.current = Arc::from(current_text);
        }
        if *tail != *self.tail || !self.tail_on_disk {
            if let Some(path) = &self.all_path {
                self.tail_on_disk = false;
                write_at(path, self.finished_len, tail.as_bytes())?;
                wrote = true;
            }
            self.tail = Arc::from(tail);
            self.tail_on_disk = true;
        }
        Ok(wrote)
    }

    /// The current game as PDN.
    pub fn current(&self) -> &str {
        &self.current
    }

    /// The current game, shared (for copies that readers take without waiting).
    pub fn current_shared(&self) -> Arc<str> {
        self.current.clone()
    }

    /// Every game as PDN, to read when asked.
    pub fn games(&self) -> GamesPdn {
        GamesPdn {
            file: self.all_path.clone().map(|p| (p, self.finished_len)),
            finished: Arc::from(self.finished_text.as_str()),
            tail: self.tail.clone(),
        }
    }

    /// Every game as PDN.
    pub fn all(&self) -> io::Result<String> {
        self.games().read()
    }
}

/// Whether the file at `path` holds `text` at byte `offset`.
fn file_holds(path: &Path, offset: u64, text: &[u8]) -> bool {
    let mut on_disk = Vec::with_capacity(text.len());
    let read = File::open(path).and_then(|mut f| {
        f.seek(SeekFrom::Start(offset))?;
        f.take(text.len() as u64).read_to_end(&mut on_disk)
    });
    read.is_ok() && on_disk == text
}

/// Write `text` at byte `offset` of the file at `path` (created if missing), cut the file just
/// after it and sync it: what comes before `offset` is left as it is.
fn write_at(path: &Path, offset: u64, text: &[u8]) -> io::Result<()> {
    let result = (|| {
        let created = !path.exists();
        let mut file = OpenOptions::new().write(true).create(true).truncate(false).open(path)?;
        file.seek(SeekFrom::Start(offset))?;
        file.write_all(text)?;
        file.set_len(offset + text.len() as u64)?;
        file.sync_data()?;
        if created {
            // The new file's name must reach the disk too.
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                File::open(dir)?.sync_all()?;
            }
        }
        Ok(())
    })();
    result.map_err(|e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", path.display())))
}

/// The number a board's id ends with: `3` for `3`, `table3` or `board-03`.
pub fn board_number(id: &str) -> Option<u32> {
    let digits = id.len() - id.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    id[id.len() - digits..].parse().ok()
}

/// A board's game tags: the configured ones, and `Board` (the number its id ends with, else
/// the id) unless they name it, as broadcast sites sort a round's games by it.
pub fn board_tags(id: &str, configured: &[(String, String)]) -> Vec<(String, String)> {
    let mut tags = configured.to_vec();
    if !tags.iter().any(|(name, _)| name == "Board") {
        tags.push(("Board".to_string(), board_number(id).map_or_else(|| id.to_string(), |n| n.to_string())));
    }
    tags
}

/// The UTC day of `at` (seconds since 1970, a log record's time) as PDN writes dates,
/// `YYYY.MM.DD`; None for a time that is not after 1970 (a clock that was wrong: `now_seconds`
/// gives 0 for a clock before 1970) or past year 9999.
pub fn pdn_date(at: f64) -> Option<String> {
    if !(at.is_finite() && at > 0.0) {
        return None;
    }
    let days = (at / 86_400.0).floor() as i64;
    let (year, month, day) = civil_from_days(days);
    (year <= 9999).then(|| format!("{year:04}.{month:02}.{day:02}"))
}

/// The proleptic Gregorian date (year, month, day) of day `days` since 1970-01-01: the inverse
/// of the usual days-from-civil count. Neither `chrono` nor `time` is a dependency, and one date
/// per game does not warrant one, so the calendar is computed here: the days are counted from
/// 0000-03-01 in 400-year eras (146 097 days each, the Gregorian cycle), with years that start
/// in March so that the leap day falls at the end of a year.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    // 719 468 days from 0000-03-01 to 1970-01-01.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097); // 0..=146 096
    // Years of the era: 365 days each, one more every 4, one less every 100, one more at 400.
    let year_of_era = (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365; // 0..=399
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100); // 0..=365
    // Months from March: their lengths 31 30 31 30 31 31 30 31 30 31 31 (28/29) follow
    // (153 * m + 2) / 5 days before month m.
    let march_month = (5 * day_of_year + 2) / 153; // 0..=11
    let day = (day_of_year - (153 * march_month + 2) / 5 + 1) as u32;
    let month = if march_month < 10 { march_month + 3 } else { march_month - 9 } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
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

    fn game_with(moves: &[&str]) -> TrackedGame {
        let mut game = TrackedGame::new(Variant::English, None, Color::Black);
        for (i, text) in moves.iter().enumerate() {
            game.items.push(RecordItem::Move(TrackedMove {
                side: if i % 2 == 0 { Color::Black } else { Color::White },
                text: text.to_string(),
                path: text.to_string(),
                fen_after: String::new(),
                t: None,
                inferred: false,
                alternatives: Vec::new(),
            }));
        }
        game
    }

    /// A folder of its own, removed when the test ends.
    fn folder(name: &str) -> tempfile::TempDir {
        tempfile::Builder::new().prefix(&format!("bw-records-{name}-")).tempdir().unwrap()
    }

    #[test]
    fn files_follow_the_record_and_are_not_rewritten_needlessly() {
        let tmp = folder("follow");
        let dir = tmp.path();
        let mut files = PdnFiles::new(&dir, vec![("White".into(), "Ann".into())]);
        let mut game = TrackedGame::new(Variant::English, None, Color::Black);
        assert!(files.update(Some((&game, None)), Some((&game, None))).unwrap());
        assert!(files.current().contains("[White \"Ann\"]"));
        assert_eq!(files.all().unwrap(), "");
        game = game_with(&["11-15"]);
        assert!(files.update(Some((&game, None)), Some((&game, None))).unwrap());
        assert!(!files.update(Some((&game, None)), Some((&game, None))).unwrap(), "nothing changed");
        let on_disk = std::fs::read_to_string(dir.join("game.pdn")).unwrap();
        assert!(on_disk.contains("1. 11-15 *"), "{on_disk}");
        assert_eq!(std::fs::read_to_string(dir.join("games.pdn")).unwrap(), on_disk);
    }

    #[test]
    fn finished_games_are_appended_and_checked_again_after_a_restart() {
        let tmp = folder("append");
        let dir = tmp.path();
        let games = [game_with(&["11-15", "23-19"]), game_with(&["9-13"]), game_with(&["10-14", "22-17"])];
        let mut files = PdnFiles::new(&dir, Vec::new());
        files.update(Some((&games[0], None)), Some((&games[0], None))).unwrap();
        files.add_finished(&games[0], None).unwrap();
        files.update(Some((&games[1], None)), Some((&games[1], None))).unwrap();
        let all = std::fs::read_to_string(dir.join("games.pdn")).unwrap();
        assert_eq!(all, write_pdn_with_tags(&games[..2], &[]));
        assert_eq!(files.all().unwrap(), all);
        // A longer current game, then a shorter one (an undo): the tail follows it exactly.
        files.update(Some((&games[2], None)), Some((&games[2], None))).unwrap();
        files.update(Some((&games[1], None)), Some((&games[1], None))).unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("games.pdn")).unwrap(), all);

        // A restart: the finished game already there is not written again (its bytes are
        // corrupted here after the check would have read them: a write would repair them).
        let mtime = || std::fs::metadata(dir.join("games.pdn")).unwrap().modified().unwrap();
        let before = mtime();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let mut again = PdnFiles::new(&dir, Vec::new());
        again.add_finished(&games[0], None).unwrap();
        assert_eq!(mtime(), before, "checked, not written");
        again.add_finished(&games[1], None).unwrap();
        again.update(Some((&games[2], None)), Some((&games[2], None))).unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("games.pdn")).unwrap(), write_pdn_with_tags(&games, &[]));

        // A file cut in the middle of a game (a crash while writing) is written from there.
        let full = std::fs::read(dir.join("games.pdn")).unwrap();
        std::fs::write(dir.join("games.pdn"), &full[..full.len() / 2]).unwrap();
        let mut third = PdnFiles::new(&dir, Vec::new());
        for game in &games[..2] {
            third.add_finished(game, None).unwrap();
        }
        third.update(Some((&games[2], None)), Some((&games[2], None))).unwrap();
        assert_eq!(std::fs::read(dir.join("games.pdn")).unwrap(), full);
    }

    #[test]
    fn a_board_s_games_carry_its_number() {
        assert_eq!(board_number("table12"), Some(12));
        assert_eq!(board_number("board-03"), Some(3));
        assert_eq!(board_number("hall"), None);
        let configured = vec![("Event".to_string(), "Open".to_string())];
        assert_eq!(board_tags("t7", &configured)[1], ("Board".to_string(), "7".to_string()));
        assert_eq!(board_tags("east", &[])[0].1, "east");
        let given = vec![("Board".to_string(), "12".to_string())];
        assert_eq!(board_tags("t7", &given), given, "a configured Board tag stands");
    }

    #[test]
    fn log_times_give_pdn_dates_in_utc() {
        assert_eq!(pdn_date(1.0).as_deref(), Some("1970.01.01"));
        assert_eq!(pdn_date(951_782_400.0).as_deref(), Some("2000.02.29"), "a leap day of a 400-year leap year");
        assert_eq!(pdn_date(951_782_399.9).as_deref(), Some("2000.02.28"));
        assert_eq!(pdn_date(1_700_000_000.0).as_deref(), Some("2023.11.14"));
        assert_eq!(pdn_date(1_798_761_599.5).as_deref(), Some("2026.12.31"));
        assert_eq!(pdn_date(1_798_761_600.0).as_deref(), Some("2027.01.01"));
        assert_eq!(pdn_date(4_107_542_400.0).as_deref(), Some("2100.03.01"), "2100 is no leap year");
        assert_eq!(pdn_date(4_107_456_000.0).as_deref(), Some("2100.02.28"));
        for wrong in [0.0, -5.0, f64::NAN, f64::INFINITY, 1e15] {
            assert_eq!(pdn_date(wrong), None, "{wrong}");
        }
        // Every day of four centuries against a plain count of days by month.
        let mut days = 0i64;
        for year in 1970..2370 {
            let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
            for (month, length) in [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31].into_iter().enumerate() {
                for day in 1..=length {
                    assert_eq!(civil_from_days(days), (year, month as u32 + 1, day));
                    days += 1;
                }
            }
        }
    }

    #[test]
    fn a_date_is_written_only_when_dating_and_the_configured_one_wins() {
        let game = game_with(&["11-15"]);
        let date = |files: &PdnFiles| {
            let games = crate::draughts::pdn::read_games(files.current(), crate::draughts::pdn::ReadMode::Strict).unwrap();
            games[0].tag("Date").map(str::to_string)
        };
        let mut plain = PdnFiles::at(None, None, Vec::new());
        plain.update(Some((&game, Some("2026.11.28"))), Some((&game, Some("2026.11.28")))).unwrap();
        assert_eq!(date(&plain).as_deref(), Some("????.??.??"), "replay's files are not dated");
        let mut dated = PdnFiles::at(None, None, Vec::new()).dating_games();
        dated.update(Some((&game, Some("2026.11.28"))), Some((&game, Some("2026.11.28")))).unwrap();
        assert_eq!(date(&dated).as_deref(), Some("2026.11.28"));
        let configured = vec![("Date".to_string(), "2025.01.02".to_string())];
        let mut given = PdnFiles::at(None, None, configured).dating_games();
        given.update(Some((&game, Some("2026.11.28"))), Some((&game, Some("2026.11.28")))).unwrap();
        assert_eq!(date(&given).as_deref(), Some("2025.01.02"));
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
