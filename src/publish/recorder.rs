//! The tracker and the durable records of one board, kept in step: every input goes through
//! [`Recorder::step`], in this order: the tracker judges it, the input and its events are
//! appended to the event log and synced, the PDN files are replaced, and only then may the
//! caller publish the events. [`Recorder::open`] replays an existing log's inputs through a new
//! tracker and so continues the game exactly where the last synced record left it.
//!
//! `boardwatch replay` and the daemon both record through it: the same log format, the same PDN.

use std::collections::BTreeMap;
use std::path::Path;

use super::eventlog::{EventLog, EventLogError};
use super::records::{now_seconds, pdn_date, InputOrigin, LogRecord, PdnFiles};
use crate::tracker::{Command, Event, EventKind, Input, Observation, Tracker, TrackerConfig};

/// Why an input was not taken.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// The tracker refused an operator command (nothing to confirm, an unclear board, ...).
    #[error("{0}")]
    Refused(String),
    /// The log could not be written: the step was undone.
    #[error("{0}")]
    Log(String),
}

/// A tracker with its event log (optional: `replay` may keep none) and PDN files.
pub struct Recorder {
    /// The tracker's configuration at the start of the log (a rebuild replays from there).
    config: TrackerConfig,
    tracker: Tracker,
    log: Option<EventLog>,
    pdn: PdnFiles,
    /// The last observation the tracker was given (from the log after a restart).
    last_observation: Option<Observation>,
    /// Where the source stood at its last logged input.
    cursor: Option<u64>,
    /// The tracker moved on for a step the log refused and could not be rebuilt from the log
    /// yet: no step is taken until it is.
    stale: bool,
    /// The last PDN write failed: the files on disk are behind the log.
    pdn_behind: Option<String>,
    /// When the log's first record was written (seconds since 1970): names this log among the
    /// board's logs, since a log begun again (a wiped state folder) numbers its events from 1.
    started_at: Option<f64>,
    /// Each game's PDN date, by its number among the board's games (from 0): the UTC day its
    /// first observation was logged, from the log record's time, so a rebuild from the log gives
    /// the same. Kept from the last finished game on (the earlier ones are written).
    game_dates: BTreeMap<usize, String>,
}

/// Finished games a recorder's tracker keeps in memory: they are in `games.pdn` (appended when
/// they end), so memory does not grow with the games of a board that runs for months.
pub const KEPT_GAMES: usize = 4;

/// Hand one input to a tracker.
fn apply(tracker: &mut Tracker, input: &Input) -> Result<Vec<Event>, StepError> {
    match input {
        Input::Observation(obs) => Ok(tracker.observe(obs)),
        Input::Command(command) => tracker.command(command).map_err(|e| StepError::Refused(e.to_string())),
    }
}

impl Recorder {
    /// A recorder for `config`, continuing the log at `log` when it has records (created when
    /// missing). Returns it with the events already published (those of the log).
    pub fn open(config: TrackerConfig, log: Option<&Path>, pdn: PdnFiles) -> Result<(Recorder, Vec<Event>), EventLogError> {
        let (log, records) = match log {
            Some(path) => {
                let (log, records) = EventLog::open::<LogRecord>(path)?;
                (Some(log), records)
            }
            None => (None, Vec::new()),
        };
        let mut recorder = Recorder {
            config,
            tracker: Tracker::new(config).keeping_games(KEPT_GAMES),
            log,
            pdn,
            last_observation: None,
            cursor: None,
            stale: false,
            pdn_behind: None,
            started_at: records.first().map(|r| r.at),
            game_dates: BTreeMap::new(),
        };
        let where_ = recorder.log.as_ref().map(|l| l.path().display().to_string()).unwrap_or_default();
        let mut published = Vec::new();
        let mut mismatch_reported = false;
        for (index, record) in records.into_iter().enumerate() {
            let replayed = match apply(&mut recorder.tracker, &record.input) {
                Ok(events) => events,
                Err(e) => {
                    tracing::warn!("{where_}: record {}: replay refused the input: {e}", index + 1);
                    Vec::new()
                }
            };
            // The log is the truth of what was published; a different answer means the tracker
            // changed since it was written (an upgrade), and the game goes on from the replay.
            let same = replayed.len() == record.events.len()
                && replayed.iter().zip(&record.events).all(|(a, b)| a.seq == b.seq && a.line == b.line);
            if !same && !mismatch_reported {
                mismatch_reported = true;
                tracing::warn!(
                    "{where_}: record {}: the tracker now answers {:?} where the log has {:?}",
                    index + 1,
                    replayed.iter().map(|e| &e.line).collect::<Vec<_>>(),
                    record.events.iter().map(|e| &e.line).collect::<Vec<_>>()
                );
            }
            recorder.note(&record.input, record.cursor);
            let _ = recorder.note_date(record.at, &record.input, &replayed);
            // Games end one at a time: written (or found in `games.pdn`) before they leave memory.
            recorder.write_finished_games_or_note();
            published.extend(record.events);
        }
        Ok((recorder, published))
    }

    /// Judge one input, log it with its events (synced), bring the PDN files up to date, and
    /// return the events to publish. A refused command is not logged. A PDN file that cannot be
    /// written is reported and written again at the next change or [`Recorder::flush`]: the log
    /// already holds the step.
    ///
    /// When the log cannot be written (a full disk), the log is left as it was, the tracker is
    /// rebuilt from it, and the error is returned: the caller keeps the input and hands it again
    /// later, which gives the same events with the same numbers.
    pub fn step(&mut self, from: InputOrigin, cursor: Option<u64>, input: Input) -> Result<Vec<Event>, StepError> {
        self.step_at(now_seconds(), from, cursor, input)
    }

    /// [`Recorder::step`] with the log record's time given (seconds since 1970).
    pub fn step_at(&mut self, at: f64, from: InputOrigin, cursor: Option<u64>, input: Input) -> Result<Vec<Event>, StepError> {
        if self.stale {
            self.rebuild().map_err(|e| StepError::Log(format!("{e}; the tracker cannot be rebuilt from the log")))?;
        }
        if let Input::Command(Command::Tags { tags }) = &input {
            // The hall sends a board the round's tags again whenever it cannot tell that the
            // board has them (a daemon back after an outage): the same tags change nothing.
            let mut tags = tags.clone();
            tags.sort();
            if tags == self.tracker.round_tags() {
                return Ok(Vec::new());
            }
        }
        let events = apply(&mut self.tracker, &input)?;
        let record = LogRecord { at, from, cursor, input, events };
        if let Some(log) = self.log.as_mut() {
            if let Err(e) = log.append(&record) {
                // The tracker has moved on but the disk has not: undo by rebuilding it from the log.
                self.stale = true;
                if let Err(rebuild) = self.rebuild() {
                    tracing::error!("{rebuild}; the tracker is rebuilt before the next step");
                }
                return Err(StepError::Log(e.to_string()));
            }
            self.started_at.get_or_insert(record.at);
        }
        self.note(&record.input, cursor);
        let dated = self.note_date(record.at, &record.input, &record.events);
        if !record.events.is_empty() || dated || self.pdn_behind.is_some() {
            // The log holds the step: a PDN file that cannot be written is caught up later.
            let _ = self.flush();
        }
        Ok(record.events)
    }

    fn note(&mut self, input: &Input, cursor: Option<u64>) {
        match input {
            // A glimpse is not the board as it stands (see `Observation::glimpse`).
            Input::Observation(obs) if !obs.glimpse => self.last_observation = Some((**obs).clone()),
            _ => {}
        }
        if cursor.is_some() {
            self.cursor = cursor;
        }
    }

    /// A logged input's part in the games' dates: a game started (`Init`) has no date yet, and
    /// the first observation logged while a game is on dates it. True if it did (the PDN
    /// changes).
    fn note_date(&mut self, at: f64, input: &Input, events: &[Event]) -> bool {
        // The current game's number: the finished games before it.
        let number = self.tracker.finished_count();
        if events.iter().any(|e| e.kind == EventKind::Init) {
            // A game that ended without a move is not kept, and the new one takes its number.
            self.game_dates.remove(&number);
        }
        if matches!(input, Input::Observation(_)) && self.tracker.record().is_some() && !self.game_dates.contains_key(&number) {
            if let Some(date) = pdn_date(at) {
                self.game_dates.insert(number, date);
                return true;
            }
        }
        false
    }

    /// Rebuild the tracker from the log on disk (after a failed append, which left the log at
    /// its last synced record).
    fn rebuild(&mut self) -> Result<(), EventLogError> {
        let Some(path) = self.log.as_ref().map(|l| l.path().to_path_buf()) else { return Ok(()) };
        let records = EventLog::read::<LogRecord>(&path)?;
        // From the configuration the log started with, as when it was opened: a referee switch
        // is itself a logged command.
        self.tracker = Tracker::new(self.config).keeping_games(KEPT_GAMES);
        self.last_observation = None;
        self.cursor = None;
        self.game_dates.clear();
        for record in &records {
            let events = apply(&mut self.tracker, &record.input).unwrap_or_default();
            self.note(&record.input, record.cursor);
            let _ = self.note_date(record.at, &record.input, &events);
            // Only what a failed write left out is written (the rest is already in the file).
            let _ = self.write_finished_games();
        }
        self.stale = false;
        Ok(())
    }

    /// Append the games that ended to `games.pdn`, while the tracker still holds them.
    /// `Ok(false)` if one is no longer in memory (writing failed while more games ended than
    /// are kept).
    fn write_finished_games(&mut self) -> std::io::Result<bool> {
        while self.pdn.finished_games() < self.tracker.finished_count() {
            let number = self.pdn.finished_games();
            let Some(game) = self.tracker.finished_game(number) else { return Ok(false) };
            self.pdn.add_finished(game, self.game_dates.get(&number).map(String::as_str))?;
        }
        // Written games need no date any more, but the last one: `game.pdn` may show it.
        let keep_from = self.pdn.finished_games().saturating_sub(1);
        self.game_dates = self.game_dates.split_off(&keep_from);
        Ok(true)
    }

    /// While replaying the log: a failed write is caught up by the next flush.
    fn write_finished_games_or_note(&mut self) {
        if let Err(e) = self.write_finished_games() {
            self.pdn_behind = Some(e.to_string());
        }
    }

    /// Bring the PDN files up to date with the record (they are after every step; this catches
    /// a write that failed). True if anything was written.
    pub fn flush(&mut self) -> std::io::Result<bool> {
        let result = self.write_pdn();
        match &result {
            Ok(_) => {
                if self.pdn_behind.take().is_some() {
                    tracing::info!("the PDN files are up to date again");
                }
            }
            Err(e) => {
                if self.pdn_behind.is_none() {
                    tracing::error!("{e}; written again at the next step");
                }
                self.pdn_behind = Some(e.to_string());
            }
        }
        result
    }

    fn write_pdn(&mut self) -> std::io::Result<bool> {
        let before = self.pdn.finished_games();
        if !self.write_finished_games()? {
            // Finished games left memory before they could be written: the log has them, and a
            // replay writes each as it ends again.
            self.rebuild().map_err(|e| std::io::Error::other(e.to_string()))?;
            self.write_finished_games()?;
            if self.pdn.finished_games() < self.tracker.finished_count() {
                return Err(std::io::Error::other("games.pdn could not be caught up from the log"));
            }
        }
        let number = self.tracker.finished_count();
        let dates = &self.game_dates;
        let date = |i: usize| dates.get(&i).map(String::as_str);
        let current = self.tracker.record().map(|g| (g, date(number)));
        let last_finished = number.checked_sub(1).and_then(|i| Some((self.tracker.finished_game(i)?, date(i))));
        let wrote = self.pdn.update(current, current.or(last_finished))?;
        Ok(wrote || self.pdn.finished_games() > before)
    }

    /// Why the PDN files on disk are behind the log, while they are.
    pub fn pdn_behind(&self) -> Option<&str> {
        self.pdn_behind.as_deref()
    }

    pub fn tracker(&self) -> &Tracker {
        &self.tracker
    }

    /// When the log's first record was written (seconds since 1970), once it has one.
    pub fn started_at(&self) -> Option<f64> {
        self.started_at
    }

    pub fn pdn(&self) -> &PdnFiles {
        &self.pdn
    }

    /// The last observation handed to the tracker.
    pub fn last_observation(&self) -> Option<&Observation> {
        self.last_observation.as_ref()
    }

    /// Where the source stood at the last logged input that said (a frame number, a line).
    pub fn cursor(&self) -> Option<u64> {
        self.cursor
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draughts::Variant;
    use crate::tracker::{Command, KingStyle};

    /// A folder of its own, removed when the test ends.
    fn folder(name: &str) -> tempfile::TempDir {
        tempfile::Builder::new().prefix(&format!("bw-recorder-{name}-")).tempdir().unwrap()
    }

    fn observation(rows: [&str; 8]) -> Input {
        Input::Observation(Box::new(Observation::from_grid(&rows).unwrap()))
    }

    const START: [&str; 8] =
        [".b.b.b.b", "b.b.b.b.", ".b.b.b.b", "........", "........", "w.w.w.w.", ".w.w.w.w", "w.w.w.w."];
    const MOVED: [&str; 8] =
        [".b.b.b.b", "b.b.b.b.", "...b.b.b", "b.......", "........", "w.w.w.w.", ".w.w.w.w", "w.w.w.w."];

    #[test]
    fn a_reopened_log_continues_the_game_and_refused_commands_are_not_logged() {
        let tmp = folder("reopen");
        let dir = tmp.path();
        let config = TrackerConfig::new(Variant::Pool, KingStyle::Visible);
        let open = || Recorder::open(config, Some(&dir.join("events.jsonl")), PdnFiles::at(None, Some(dir.join("all.pdn")), Vec::new())).unwrap();
        let (mut recorder, published) = open();
        assert!(published.is_empty());
        recorder.step(InputOrigin::Operator, None, Input::Command(Command::Init)).unwrap();
        recorder.step(InputOrigin::Source, Some(10), observation(START)).unwrap();
        assert!(matches!(recorder.step(InputOrigin::Operator, None, Input::Command(Command::Confirm)), Err(StepError::Refused(_))));
        let moved = recorder.step(InputOrigin::Source, Some(20), observation(MOVED)).unwrap();
        assert_eq!(moved[0].mv.as_deref(), Some("9-13"));
        assert!(std::fs::read_to_string(dir.join("all.pdn")).unwrap().contains("1. 9-13 *"));
        drop(recorder);

        let log = std::fs::read_to_string(dir.join("events.jsonl")).unwrap();
        assert_eq!(log.lines().count(), 3, "{log}");
        let (recorder, published) = open();
        assert_eq!(published.len(), 2);
        assert_eq!(recorder.cursor(), Some(20));
        assert_eq!(recorder.last_observation().map(|o| o.to_grid()), Some(MOVED.map(String::from)));
        assert_eq!(recorder.tracker().record().unwrap().move_texts(), ["9-13"]);
    }

    /// The round's tags (from the hall) are logged like any operator command: the current game
    /// and the next ones carry them over the configured tags, a restart replays them, the same
    /// tags again are not logged, and a finished game keeps its round and its result.
    #[test]
    fn the_round_s_tags_are_logged_carried_by_the_games_and_replayed() {
        let tmp = folder("tags");
        let dir = tmp.path();
        let config = TrackerConfig::new(Variant::English, KingStyle::Visible);
        let configured = vec![("Event".to_string(), "Club night".to_string()), ("Board".to_string(), "3".to_string())];
        let open = || Recorder::open(config, Some(&dir.join("events.jsonl")), PdnFiles::new(&dir, configured.clone())).unwrap().0;
        let tags = |round: &str, black: &str| Command::Tags {
            tags: [("White", "Ann Smith"), ("Black", black), ("Round", round), ("Event", "Spring Open"), ("Board", "3")]
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .to_vec(),
        };
        let tag_of = |text: &str, name: &str| {
            let games = crate::draughts::pdn::read_games(text, crate::draughts::pdn::ReadMode::Strict).unwrap();
            games.last().unwrap().tag(name).map(str::to_string)
        };
        let game_pdn = || std::fs::read_to_string(dir.join("game.pdn")).unwrap();
        let mut recorder = open();
        recorder.step(InputOrigin::Operator, None, Input::Command(Command::Init)).unwrap();
        recorder.step(InputOrigin::Source, None, observation(START)).unwrap();
        let events = recorder.step(InputOrigin::Operator, None, Input::Command(tags("3", "Bob Jones"))).unwrap();
        assert_eq!(events[0].kind, EventKind::Tags);
        assert!(events[0].text.contains("Black Bob Jones"), "{}", events[0].text);
        let text = game_pdn();
        for (name, value) in [("White", "Ann Smith"), ("Black", "Bob Jones"), ("Round", "3"), ("Event", "Spring Open"), ("Board", "3")] {
            assert_eq!(tag_of(&text, name).as_deref(), Some(value), "{text}");
        }
        // Sent again (the hall cannot tell the board has them): nothing logged.
        assert!(recorder.step(InputOrigin::Operator, None, Input::Command(tags("3", "Bob Jones"))).unwrap().is_empty());
        let lines = || std::fs::read_to_string(dir.join("events.jsonl")).unwrap().lines().count();
        assert_eq!(lines(), 3);
        drop(recorder);

        // A restart replays them.
        let mut recorder = open();
        recorder.flush().unwrap();
        assert_eq!(tag_of(&recorder.pdn().current_shared(), "White").as_deref(), Some("Ann Smith"));
        let moved = recorder.step(InputOrigin::Source, None, observation(MOVED)).unwrap();
        assert_eq!(moved[0].mv.as_deref(), Some("9-13"));
        recorder.step(InputOrigin::Operator, None, Input::Command(Command::Draw)).unwrap();
        // A correction within the round reaches the finished game; its result stays.
        recorder.step(InputOrigin::Operator, None, Input::Command(tags("3", "Bob Jonas"))).unwrap();
        let text = game_pdn();
        assert_eq!((tag_of(&text, "Black").as_deref(), tag_of(&text, "Result").as_deref()), (Some("Bob Jonas"), Some("1/2-1/2")), "{text}");
        // The next round: the finished game keeps its own, the next game gets the new ones.
        let events = recorder.step(InputOrigin::Operator, None, Input::Command(tags("4", "Carla Diaz"))).unwrap();
        assert_eq!(events[0].detail.as_deref(), Some("from the next game on"));
        assert_eq!(tag_of(&game_pdn(), "Round").as_deref(), Some("3"));
        recorder.step(InputOrigin::Operator, None, Input::Command(Command::Init)).unwrap();
        let text = game_pdn();
        assert_eq!((tag_of(&text, "Round").as_deref(), tag_of(&text, "Black").as_deref()), (Some("4"), Some("Carla Diaz")), "{text}");
        let all = std::fs::read_to_string(dir.join("games.pdn")).unwrap();
        let games = crate::draughts::pdn::read_games(&all, crate::draughts::pdn::ReadMode::Strict).unwrap();
        assert_eq!((games[0].tag("Round"), games[0].tag("Black"), games[0].tag("Result")), (Some("3"), Some("Bob Jonas"), Some("1/2-1/2")));
        // No tags: the configured ones again, for the game on (it is not over).
        recorder.step(InputOrigin::Operator, None, Input::Command(Command::Tags { tags: Vec::new() })).unwrap();
        let text = game_pdn();
        assert_eq!((tag_of(&text, "Event").as_deref(), tag_of(&text, "White").as_deref()), (Some("Club night"), Some("?")), "{text}");
    }

    /// Play `games` one-move games through the recorder (each started by `init`, which ends the
    /// previous one).
    fn play_games(recorder: &mut Recorder, games: usize) {
        for _ in 0..games {
            recorder.step(InputOrigin::Operator, None, Input::Command(Command::Init)).unwrap();
            recorder.step(InputOrigin::Source, None, observation(START)).unwrap();
            let moved = recorder.step(InputOrigin::Source, None, observation(MOVED)).unwrap();
            assert_eq!(moved[0].mv.as_deref(), Some("9-13"));
        }
    }

    fn games_in(path: &Path) -> usize {
        let text = std::fs::read_to_string(path).unwrap();
        let games = crate::draughts::pdn::read_games(&text, crate::draughts::pdn::ReadMode::Strict).unwrap();
        assert!(games.iter().all(|g| g.moves.len() == 1), "every game has its move");
        games.len()
    }

    #[test]
    fn memory_holds_a_bounded_number_of_games_and_the_file_every_one() {
        let tmp = folder("many");
        let dir = tmp.path();
        let config = TrackerConfig::new(Variant::Pool, KingStyle::Visible);
        let log = dir.join("events.jsonl");
        let open = || Recorder::open(config, Some(&log), PdnFiles::new(&dir, Vec::new())).unwrap().0;
        let mut recorder = open();
        play_games(&mut recorder, 40);
        assert_eq!(recorder.tracker().games_count(), 40);
        assert!(recorder.tracker().kept_finished() <= KEPT_GAMES, "{} games in memory", recorder.tracker().kept_finished());
        assert!(recorder.tracker().games().len() <= KEPT_GAMES + 1);
        assert_eq!(games_in(&dir.join("games.pdn")), 40);
        assert_eq!(recorder.pdn().all().unwrap(), std::fs::read_to_string(dir.join("games.pdn")).unwrap());
        drop(recorder);

        // A restart continues the same file: nothing lost, nothing twice.
        let mut recorder = open();
        assert_eq!(games_in(&dir.join("games.pdn")), 40);
        play_games(&mut recorder, 2);
        assert_eq!(games_in(&dir.join("games.pdn")), 42);
        assert_eq!(recorder.tracker().games_count(), 42);
    }

    #[test]
    fn games_are_dated_by_their_first_logged_observation_and_a_rebuild_dates_them_the_same() {
        let tmp = folder("dates");
        let dir = tmp.path();
        let config = TrackerConfig::new(Variant::Pool, KingStyle::Visible);
        let log = dir.join("events.jsonl");
        let open = || Recorder::open(config, Some(&log), PdnFiles::new(&dir, Vec::new()).dating_games()).unwrap().0;
        let init = || Input::Command(Command::Init);
        let mut recorder = open();
        // UTC: 2026-11-27 23:59:50, then 2026-11-28 00:00:10: the game is dated by its first
        // observation, not by the init before midnight.
        recorder.step_at(1_795_823_990.0, InputOrigin::Operator, None, init()).unwrap();
        recorder.step_at(1_795_824_010.0, InputOrigin::Source, None, observation(START)).unwrap();
        assert!(recorder.pdn().current().contains("[Date \"2026.11.28\"]"), "{}", recorder.pdn().current());
        // That game ends without a move: the next one (2026-11-29 10:00) takes its number and
        // its own date; a move the next day leaves it.
        recorder.step_at(1_795_946_400.0, InputOrigin::Operator, None, init()).unwrap();
        recorder.step_at(1_795_946_405.0, InputOrigin::Source, None, observation(START)).unwrap();
        recorder.step_at(1_796_029_200.0, InputOrigin::Source, None, observation(MOVED)).unwrap();
        // Finished by the next init (2026-12-01); the next game first seen on 2026-12-02.
        recorder.step_at(1_796_126_400.0, InputOrigin::Operator, None, init()).unwrap();
        recorder.step_at(1_796_198_400.0, InputOrigin::Source, None, observation(START)).unwrap();
        let moved = recorder.step_at(1_796_198_460.0, InputOrigin::Source, None, observation(MOVED)).unwrap();
        assert_eq!(moved[0].mv.as_deref(), Some("9-13"));

        let dates = |path: &Path| -> Vec<String> {
            let text = std::fs::read_to_string(path).unwrap();
            let games = crate::draughts::pdn::read_games(&text, crate::draughts::pdn::ReadMode::Strict).unwrap();
            games.iter().map(|g| g.tag("Date").unwrap_or("none").to_string()).collect()
        };
        assert_eq!(dates(&dir.join("games.pdn")), ["2026.11.29", "2026.12.02"]);
        assert_eq!(dates(&dir.join("game.pdn")), ["2026.12.02"]);
        let first_line = std::fs::read_to_string(&log).unwrap().lines().next().unwrap().to_string();
        assert!(first_line.starts_with(r#"{"at":1795823990.0,"#), "the log keeps the given time: {first_line}");
        let (game, games) = (std::fs::read(dir.join("game.pdn")).unwrap(), std::fs::read(dir.join("games.pdn")).unwrap());
        drop(recorder);

        // A restart with the PDN files gone: rebuilt from the log, the same dates (not today's).
        std::fs::remove_file(dir.join("game.pdn")).unwrap();
        std::fs::remove_file(dir.join("games.pdn")).unwrap();
        let mut recorder = open();
        recorder.flush().unwrap();
        assert_eq!(std::fs::read(dir.join("games.pdn")).unwrap(), games);
        assert_eq!(std::fs::read(dir.join("game.pdn")).unwrap(), game);
        // A cleared board shows the last finished game, still with its date.
        recorder.step_at(1_796_200_000.0, InputOrigin::Operator, None, Input::Command(Command::Clear)).unwrap();
        assert_eq!(dates(&dir.join("game.pdn")), ["2026.12.02"]);
    }

    #[test]
    fn games_that_left_memory_while_the_file_could_not_be_written_come_from_the_log() {
        let tmp = folder("late");
        let dir = tmp.path();
        let config = TrackerConfig::new(Variant::Pool, KingStyle::Visible);
        // `games.pdn` in a folder that does not exist yet: every write of it fails.
        let games_file = dir.join("later").join("games.pdn");
        let files = PdnFiles::at(Some(dir.join("game.pdn")), Some(games_file.clone()), Vec::new());
        let (mut recorder, _) = Recorder::open(config, Some(&dir.join("events.jsonl")), files).unwrap();
        play_games(&mut recorder, 3 * KEPT_GAMES);
        assert!(recorder.pdn_behind().is_some());
        assert!(recorder.tracker().kept_finished() <= KEPT_GAMES);
        std::fs::create_dir_all(games_file.parent().unwrap()).unwrap();
        recorder.flush().unwrap();
        assert!(recorder.pdn_behind().is_none());
        assert_eq!(games_in(&games_file), 3 * KEPT_GAMES);
    }
}
