//! One board: its pipeline thread (source → tracker → records → live listeners) and the state the
//! API shows.
//!
//! Every input goes through [`BoardCore::step`] under one lock, in this order: the tracker
//! judges it, the input and its events are appended to the board's log and synced, the PDN files
//! are replaced, and only then are the events published. A restart replays the log's inputs
//! through a new tracker ([`BoardCore::open`]) and so continues the game exactly where the last
//! synced record left it: nothing a listener saw can be missing, nothing is recorded twice.

use std::collections::VecDeque;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{json, Value};

use super::config::{BoardConfig, RetryConfig};
use super::source::{open_source, render_board_picture, Picture, SourceInput, SourceItem};
use super::supervisor::{supervise, SourceSink, SourceState, StopSignal};
use crate::draughts::fen::{parse_fen, to_fen};
use crate::draughts::rules::Rules;
use crate::publish::hub::{BoardEvent, Hub, HubMessage};
use crate::publish::records::{now_seconds, InputOrigin, LogRecord, PdnFiles};
use crate::publish::EventLog;
use crate::tracker::events::player_number;
use crate::tracker::{parse_input_line, Event, InputLine, Observation, Tracker, TrackerConfig};

/// Lock a mutex even if a thread panicked while holding it: the data behind these locks stays
/// consistent step by step, and one failed board must not take the API down.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Why an input was not taken.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// The tracker refused an operator command (nothing to confirm, an unclear board, ...).
    #[error("{0}")]
    Refused(String),
    /// The command itself is malformed.
    #[error("{0}")]
    Invalid(String),
    /// The board is not recording (its log could not be opened).
    #[error("{0}")]
    NotRecording(String),
    /// The log could not be written: the step was undone.
    #[error("{0}")]
    Log(String),
}

/// The tracker and the durable records of a board.
pub struct BoardCore {
    tracker: Tracker,
    log: EventLog,
    pdn: PdnFiles,
    /// The last observation handed to the tracker: the same board again says nothing new, and
    /// is not logged again.
    last_fed: Option<Observation>,
    /// Where the source stood at its last logged input.
    cursor: Option<u64>,
    /// Held while the daemon runs: two daemons writing one log would corrupt it.
    _lock: File,
}

/// Feed one logged input to a tracker. Observations go through their JSON form in both the live
/// and the replayed run, so that both hand the tracker the very same readings.
fn apply_input(tracker: &mut Tracker, input: &Value) -> Result<Vec<Event>, StepError> {
    match parse_input_line(&input.to_string()).map_err(|e| StepError::Invalid(e.to_string()))? {
        InputLine::Observation(obs) => Ok(tracker.observe(&obs)),
        InputLine::Command(command) => tracker.command(&command).map_err(|e| StepError::Refused(e.to_string())),
    }
}

impl BoardCore {
    /// Open the board's folder, replay its log, and start the first game if the log is new.
    /// Returns the core and the events already published (from the log).
    pub fn open(config: &BoardConfig, dir: &Path) -> Result<(BoardCore, Vec<Event>), String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let lock_path = dir.join("lock");
        let lock = File::create(&lock_path).map_err(|e| format!("{}: {e}", lock_path.display()))?;
        lock.try_lock().map_err(|_| format!("{}: another boardwatch is recording this board", dir.display()))?;
        let log_path = dir.join("events.jsonl");
        let (log, records) = EventLog::open::<LogRecord>(&log_path).map_err(|e| e.to_string())?;
        let mut core = BoardCore {
            tracker: Tracker::new(TrackerConfig {
                strict: config.strict,
                error_after: config.error_after,
                ..TrackerConfig::new(config.variant, config.kings)
            }),
            log,
            pdn: PdnFiles::new(dir, config.tags.clone()),
            last_fed: None,
            cursor: None,
            _lock: lock,
        };
        let mut published = Vec::new();
        let mut mismatch_reported = false;
        for (index, record) in records.into_iter().enumerate() {
            let replayed = match apply_input(&mut core.tracker, &record.input) {
                Ok(events) => events,
                Err(e) => {
                    tracing::warn!("{}: record {}: replay refused the input: {e}", log_path.display(), index + 1);
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
                    "{}: record {}: the tracker now answers {:?} where the log has {:?}",
                    log_path.display(),
                    index + 1,
                    replayed.iter().map(|e| &e.line).collect::<Vec<_>>(),
                    record.events.iter().map(|e| &e.line).collect::<Vec<_>>()
                );
            }
            if let Ok(InputLine::Observation(obs)) = parse_input_line(&record.input.to_string()) {
                core.last_fed = Some(*obs);
            }
            if record.cursor.is_some() {
                core.cursor = record.cursor;
            }
            published.extend(record.events);
        }
        if published.is_empty() && core.tracker.position().is_none() {
            let start = match &config.start_fen {
                Some(fen) => json!({"op": "set_start", "fen": fen}),
                None => json!({"op": "init"}),
            };
            let events = core.step(InputOrigin::Operator, None, start).map_err(|e| e.to_string())?;
            published.extend(events);
        }
        core.update_pdn().map_err(|e| e.to_string())?;
        Ok((core, published))
    }

    /// Judge one input, log it with its events (synced), and return the events to publish.
    /// Observations equal to the last one are dropped (`Ok` with no events, nothing logged).
    pub fn step(&mut self, from: InputOrigin, cursor: Option<u64>, input: Value) -> Result<Vec<Event>, StepError> {
        let observation = match parse_input_line(&input.to_string()) {
            Ok(InputLine::Observation(obs)) => Some(*obs),
            Ok(InputLine::Command(_)) => None,
            Err(e) => return Err(StepError::Invalid(e.to_string())),
        };
        if let (Some(obs), Some(last)) = (&observation, &self.last_fed) {
            // The same board again is news only while the tracker waits to see whether a board
            // nothing explains stays (then time passing over it makes it an error).
            if obs.squares == last.squares && !self.tracker.is_suspecting() {
                return Ok(Vec::new());
            }
        }
        let events = apply_input(&mut self.tracker, &input)?;
        let record = LogRecord { at: now_seconds(), from, cursor, input, events };
        if let Err(e) = self.log.append(&record) {
            // The tracker has moved on but the disk has not: undo by rebuilding it from the log.
            tracing::error!("{e}; the step is dropped");
            self.rebuild();
            return Err(StepError::Log(e.to_string()));
        }
        if observation.is_some() {
            self.last_fed = observation;
        }
        if cursor.is_some() {
            self.cursor = cursor;
        }
        Ok(record.events)
    }

    /// Rebuild the tracker from the log on disk (after a failed append).
    fn rebuild(&mut self) {
        let Ok((_, records)) = EventLog::open::<LogRecord>(self.log.path()) else { return };
        let mut tracker = Tracker::new(*self.tracker.config());
        let mut last_fed = None;
        for record in &records {
            let _ = apply_input(&mut tracker, &record.input);
            if let Ok(InputLine::Observation(obs)) = parse_input_line(&record.input.to_string()) {
                last_fed = Some(*obs);
            }
        }
        self.tracker = tracker;
        self.last_fed = last_fed;
    }

    /// Rewrite the PDN files if the record changed.
    pub fn update_pdn(&mut self) -> std::io::Result<bool> {
        let games = self.tracker.games();
        self.pdn.update(&games, self.tracker.record())
    }

    pub fn tracker(&self) -> &Tracker {
        &self.tracker
    }
}

/// The game on a board, as the API shows it.
#[derive(Clone, Debug, Default, Serialize)]
pub struct GameView {
    /// The last valid position (PDN FEN), and the same in board coordinates (8 rows of 8 grid
    /// characters, row 0 at Black's edge) for drawing.
    pub fen: Option<String>,
    pub grid: Option<[String; 8]>,
    /// The player to move: 1 = Black, 2 = White.
    pub to_move: Option<u8>,
    /// The tracker is holding after an error, waiting for the board to be put back.
    pub holding: bool,
    /// `strict` (the original program's referee) or `tolerant`.
    pub referee: &'static str,
    /// The PDN result once the game is over.
    pub result: Option<String>,
    /// The moves of the current game, in PDN notation.
    pub moves: Vec<String>,
    /// Indices into `moves` of the moves never seen finished (inferred from a later board).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inferred: Vec<usize>,
    /// Games recorded on this board so far (the current one included).
    pub games: usize,
}

/// The board as the camera sees it: a position in board coordinates (as the tracker's input).
pub fn grid_of_fen(fen: &str, rules: &Rules) -> Option<[String; 8]> {
    let pos = parse_fen(fen, rules).ok()?;
    Some(Observation::of_position(&pos, 0, rules).to_grid())
}

fn view_of(tracker: &Tracker) -> GameView {
    let rules = tracker.rules();
    let pos = tracker.position();
    let fen = pos.map(|p| to_fen(p, rules));
    GameView {
        grid: fen.as_deref().and_then(|f| grid_of_fen(f, rules)),
        fen,
        to_move: pos.map(|p| player_number(p.to_move)),
        holding: tracker.is_holding(),
        referee: if tracker.config().strict { "strict" } else { "tolerant" },
        result: tracker.record().and_then(|r| r.result).map(|r| r.pdn(tracker.config().variant).to_string()),
        moves: tracker.record().map(|r| r.move_texts()).unwrap_or_default(),
        inferred: tracker
            .record()
            .map(|r| r.moves().enumerate().filter(|(_, m)| m.inferred).map(|(i, _)| i).collect())
            .unwrap_or_default(),
        // `games()` leaves out a current game with nothing in it yet; it counts here.
        games: tracker.games().len() + usize::from(tracker.record().is_some_and(|r| r.is_empty())),
    }
}

/// How the board's source is doing.
#[derive(Clone, Debug)]
struct Health {
    source: String,
    state: SourceState,
    error: Option<String>,
    retry_in: Option<Duration>,
    failures: u32,
    frames: u64,
    recent_frames: VecDeque<Instant>,
    last_frame: Option<Instant>,
    warnings: u64,
    last_warning: Option<String>,
}

/// The frame rate is measured over this window.
const FPS_WINDOW: Duration = Duration::from_secs(3);

impl Health {
    fn to_json(&self) -> Value {
        let now = Instant::now();
        let recent = self.recent_frames.iter().filter(|t| now.duration_since(**t) <= FPS_WINDOW).count();
        json!({
            "source": self.source,
            "state": self.state,
            "error": self.error,
            "retry_in_ms": self.retry_in.map(|d| d.as_millis() as u64),
            "failures": self.failures,
            "frames": self.frames,
            "fps": (recent as f64 / FPS_WINDOW.as_secs_f64() * 10.0).round() / 10.0,
            "last_frame_ms_ago": self.last_frame.map(|t| now.duration_since(t).as_millis() as u64),
            "warnings": self.warnings,
            "last_warning": self.last_warning,
        })
    }
}

/// One board of the daemon.
pub struct Board {
    pub config: BoardConfig,
    dir: PathBuf,
    hub: Hub,
    core: Mutex<Option<BoardCore>>,
    /// Why the board is not recording, when its folder or log could not be opened.
    failure: Option<String>,
    /// Every event published, in order (for listeners that connect late or fall behind).
    published: Mutex<Vec<Arc<BoardEvent>>>,
    /// Copies for the API, so that readers never wait for a disk sync.
    view: Mutex<GameView>,
    pdn_texts: Mutex<(Arc<str>, Arc<str>)>,
    health: Mutex<Health>,
    picture: Mutex<Option<Picture>>,
    stop: StopSignal,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// When the step holding the records began; `None` between steps. A step that never ends
    /// (a disk that hangs) is what the watchdog must notice.
    step_started: Mutex<Option<Instant>>,
}

/// Marks a step as under way for as long as it lives.
struct StepTimer<'a>(&'a Mutex<Option<Instant>>);

impl<'a> StepTimer<'a> {
    fn start(slot: &'a Mutex<Option<Instant>>) -> StepTimer<'a> {
        *lock(slot) = Some(Instant::now());
        StepTimer(slot)
    }
}

impl Drop for StepTimer<'_> {
    fn drop(&mut self) {
        *lock(self.0) = None;
    }
}

impl Board {
    /// Open the board's records (replaying its log); a board whose records cannot be opened is
    /// still listed, with the reason, and does not run.
    pub fn open(config: BoardConfig, state_dir: &Path, hub: Hub) -> Arc<Board> {
        let dir = state_dir.join(&config.id);
        let (core, published, failure) = match BoardCore::open(&config, &dir) {
            Ok((core, published)) => (Some(core), published, None),
            Err(e) => {
                tracing::error!(board = %config.id, "not recording: {e}");
                (None, Vec::new(), Some(e))
            }
        };
        let rules = config.variant.rules();
        let published: Vec<Arc<BoardEvent>> =
            published.into_iter().map(|event| Arc::new(board_event(&config.id, event, &rules))).collect();
        let source = super::source::describe_config(&config.source);
        let board = Board {
            dir,
            hub,
            failure,
            published: Mutex::new(published),
            view: Mutex::new(GameView::default()),
            pdn_texts: Mutex::new((Arc::from(""), Arc::from(""))),
            health: Mutex::new(Health {
                source,
                state: SourceState::Starting,
                error: None,
                retry_in: None,
                failures: 0,
                frames: 0,
                recent_frames: VecDeque::new(),
                last_frame: None,
                warnings: 0,
                last_warning: None,
            }),
            picture: Mutex::new(None),
            stop: StopSignal::new(),
            thread: Mutex::new(None),
            step_started: Mutex::new(None),
            core: Mutex::new(core),
            config,
        };
        if let Some(core) = lock(&board.core).as_ref() {
            board.refresh(core);
            // Until the source shows the board again, show the last board state recorded.
            *lock(&board.picture) = core.last_fed.as_ref().and_then(render_board_picture);
        }
        Arc::new(board)
    }

    pub fn id(&self) -> &str {
        &self.config.id
    }

    /// Whether the board's records are open (false: see `failure`).
    pub fn recording(&self) -> bool {
        self.failure.is_none()
    }

    /// Start the pipeline thread: the source under its supervisor, feeding the tracker.
    pub fn start(self: &Arc<Self>, retry: RetryConfig) {
        let cursor = match lock(&self.core).as_ref() {
            Some(core) => core.cursor,
            None => {
                let failure = self.failure.clone();
                self.set_state(SourceState::Stopped, failure, None);
                return;
            }
        };
        let board = Arc::clone(self);
        let spawned = std::thread::Builder::new().name(format!("board-{}", self.id())).spawn(move || {
            let mut source = open_source(&board.config, &board.dir);
            if let Some(cursor) = cursor {
                source.resume_after(cursor);
            }
            supervise(source.as_mut(), retry, &board.stop.clone(), board.as_ref());
        });
        match spawned {
            Ok(handle) => *lock(&self.thread) = Some(handle),
            Err(e) => self.set_state(SourceState::Stopped, Some(format!("cannot start the board's thread: {e}")), None),
        }
    }

    /// Ask the pipeline to stop; [`Board::join`] waits for it.
    pub fn request_stop(&self) {
        self.stop.stop();
    }

    /// Wait up to `limit` for the pipeline thread; false if it is still stuck (in a driver call).
    pub fn join(&self, limit: Duration) -> bool {
        let Some(handle) = lock(&self.thread).take() else { return true };
        let deadline = Instant::now() + limit;
        while !handle.is_finished() {
            if Instant::now() >= deadline {
                tracing::warn!(board = %self.id(), "the source did not stop in time; leaving it");
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = handle.join();
        true
    }

    /// Make sure the files on disk are complete (they are after every step; this catches a PDN
    /// write that failed earlier).
    pub fn flush(&self) {
        if let Some(core) = lock(&self.core).as_mut() {
            if let Err(e) = core.update_pdn() {
                tracing::error!(board = %self.id(), "{e}");
            }
        }
    }

    /// An operator action from the API: `{"op": ...}` as `boardwatch track` reads them, plus
    /// `new_game` (with an optional `fen`) and `undo`. Returns the events it caused.
    pub fn operate(&self, action: &Value) -> Result<Vec<Arc<BoardEvent>>, StepError> {
        let commands = operator_commands(action, &self.config.variant.rules())?;
        let mut guard = lock(&self.core);
        let _timer = StepTimer::start(&self.step_started);
        let Some(core) = guard.as_mut() else {
            return Err(StepError::NotRecording(self.failure.clone().unwrap_or_default()));
        };
        let mut published = Vec::new();
        for command in commands {
            let events = core.step(InputOrigin::Operator, None, command)?;
            published.extend(self.publish(core, events));
        }
        Ok(published)
    }

    /// One input from the source.
    fn feed(&self, input: SourceInput, cursor: Option<u64>) {
        let value = match input {
            SourceInput::Observation(obs) => obs.to_input_json(),
            SourceInput::Command(op) => op,
        };
        let mut guard = lock(&self.core);
        let _timer = StepTimer::start(&self.step_started);
        let Some(core) = guard.as_mut() else { return };
        match core.step(InputOrigin::Source, cursor, value) {
            Ok(events) => {
                self.publish(core, events);
            }
            Err(e @ (StepError::Refused(_) | StepError::Invalid(_))) => {
                let where_ = cursor.map(|c| format!("line {c}: ")).unwrap_or_default();
                self.warning(format!("{where_}command refused: {e}"));
            }
            Err(e) => tracing::error!(board = %self.id(), "{e}"),
        }
    }

    /// After a logged step: PDN files, the API's copies, then the live listeners.
    fn publish(&self, core: &mut BoardCore, events: Vec<Event>) -> Vec<Arc<BoardEvent>> {
        if events.is_empty() {
            return Vec::new();
        }
        if let Err(e) = core.update_pdn() {
            tracing::error!(board = %self.id(), "{e}");
        }
        self.refresh(core);
        let rules = self.config.variant.rules();
        let events: Vec<Arc<BoardEvent>> =
            events.into_iter().map(|e| Arc::new(board_event(self.id(), e, &rules))).collect();
        lock(&self.published).extend(events.iter().cloned());
        for event in &events {
            tracing::info!(board = %self.id(), seq = event.event.seq, "{}", event.event.line);
            self.hub.publish(HubMessage::Event(Box::new((**event).clone())));
        }
        events
    }

    fn refresh(&self, core: &BoardCore) {
        *lock(&self.view) = view_of(core.tracker());
        *lock(&self.pdn_texts) = (Arc::from(core.pdn.current()), Arc::from(core.pdn.all()));
    }

    fn set_state(&self, state: SourceState, error: Option<String>, retry_in: Option<Duration>) {
        let snapshot = {
            let mut health = lock(&self.health);
            if state == SourceState::Retrying {
                health.failures += 1;
            } else if state == SourceState::Running {
                health.failures = 0;
            }
            health.state = state;
            health.error = error;
            health.retry_in = retry_in;
            health.to_json()
        };
        self.hub.publish(HubMessage::Status { board: self.id().to_string(), source: snapshot });
    }

    // ----- what the API reads -----

    /// Published events with a sequence number above `after`.
    pub fn events_after(&self, after: u64) -> Vec<Arc<BoardEvent>> {
        let published = lock(&self.published);
        let start = published.partition_point(|e| e.event.seq <= after);
        published[start..].to_vec()
    }

    pub fn last_seq(&self) -> u64 {
        lock(&self.published).last().map_or(0, |e| e.event.seq)
    }

    pub fn source_json(&self) -> Value {
        lock(&self.health).to_json()
    }

    /// The board as `/boards/{id}` shows it, with the last `recent` events.
    pub fn summary(&self, recent: usize) -> Value {
        let last_events: Vec<Arc<BoardEvent>> = {
            let published = lock(&self.published);
            published[published.len().saturating_sub(recent)..].to_vec()
        };
        // One lock at a time: never two of the board's locks held together.
        let game = lock(&self.view).clone();
        let source = self.source_json();
        let has_picture = lock(&self.picture).is_some();
        json!({
            "id": self.config.id,
            "name": self.config.name,
            "variant": self.config.variant.name(),
            "kings": self.config.kings,
            "tags": self.config.tags.iter().map(|(k, v)| (k.clone(), Value::from(v.as_str()))).collect::<serde_json::Map<_, _>>(),
            "recording": self.failure.is_none(),
            "error": self.failure,
            "folder": self.dir,
            "game": game,
            "source": source,
            "has_picture": has_picture,
            "last_seq": last_events.last().map_or(0, |e| e.event.seq),
            "last_events": last_events.iter().map(|e| e.as_ref()).collect::<Vec<_>>(),
        })
    }

    /// The current game and every game, as PDN.
    pub fn pdn(&self) -> (Arc<str>, Arc<str>) {
        lock(&self.pdn_texts).clone()
    }

    pub fn picture(&self) -> Option<Picture> {
        lock(&self.picture).clone()
    }

    /// No step has been holding the board's records for `limit` or more (the watchdog's check
    /// that no board is wedged). Never waits.
    pub fn responsive(&self, limit: Duration) -> bool {
        lock(&self.step_started).is_none_or(|started| started.elapsed() < limit)
    }
}

fn board_event(board: &str, event: Event, rules: &Rules) -> BoardEvent {
    let grid = event.fen.as_deref().and_then(|f| grid_of_fen(f, rules));
    BoardEvent { board: board.to_string(), event, grid }
}

/// The tracker commands of an operator action, checked before any is applied.
fn operator_commands(action: &Value, rules: &Rules) -> Result<Vec<Value>, StepError> {
    let invalid = |m: String| Err(StepError::Invalid(m));
    let Some(op) = action.get("op").and_then(Value::as_str) else {
        return invalid("expected a JSON object with an `op`, e.g. {\"op\": \"back\"}".into());
    };
    const KNOWN: &str =
        "new_game, set_start, init_and_valid, confirm, reject, undo (or back), result, resign, draw, clear, referee";
    let commands = match op {
        "new_game" => match action.get("fen") {
            None | Some(Value::Null) => vec![json!({"op": "init"})],
            Some(Value::String(fen)) => {
                if let Err(e) = parse_fen(fen, rules) {
                    return invalid(format!("fen: {e}"));
                }
                // A new game from a set position: end the current one first, so that the
                // position is the new game's start and not a setup inside the old one.
                vec![json!({"op": "clear"}), json!({"op": "set_start", "fen": fen})]
            }
            Some(other) => return invalid(format!("fen: expected a string, got {other}")),
        },
        "undo" => vec![json!({"op": "back"})],
        "init" | "init_and_valid" | "set_start" | "back" | "clear" | "draw" | "resign" | "confirm" | "reject"
        | "result" | "referee" => vec![action.clone()],
        other => return invalid(format!("unknown op {other:?} (expected {KNOWN})")),
    };
    for command in &commands {
        match parse_input_line(&command.to_string()) {
            Ok(InputLine::Command(_)) => {}
            Ok(InputLine::Observation(_)) => return invalid("not a command".into()),
            Err(e) => return invalid(e.to_string()),
        }
    }
    Ok(commands)
}

impl SourceSink for Board {
    fn state(&self, state: SourceState, error: Option<String>, retry_in: Option<Duration>) {
        self.set_state(state, error, retry_in);
    }

    fn item(&self, item: SourceItem) {
        {
            let mut health = lock(&self.health);
            let now = Instant::now();
            health.frames += 1;
            health.last_frame = Some(now);
            health.recent_frames.push_back(now);
            while health.recent_frames.front().is_some_and(|t| now.duration_since(*t) > FPS_WINDOW) {
                health.recent_frames.pop_front();
            }
        }
        if let Some(picture) = item.picture {
            *lock(&self.picture) = Some(picture);
        }
        if let Some(input) = item.input {
            self.feed(input, item.cursor);
        }
    }

    fn warning(&self, message: String) {
        let mut health = lock(&self.health);
        health.warnings += 1;
        // The same problem on every frame is logged once, and counted.
        if health.last_warning.as_ref() != Some(&message) {
            tracing::warn!(board = %self.id(), "{message}");
            health.last_warning = Some(message);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::config::SourceConfig;
    use crate::draughts::Variant;
    use crate::tracker::KingStyle;

    fn config() -> BoardConfig {
        BoardConfig {
            id: "t".into(),
            name: "t".into(),
            variant: Variant::Pool,
            kings: KingStyle::Visible,
            start_fen: None,
            strict: false,
            error_after: crate::tracker::DEFAULT_ERROR_AFTER,
            source: SourceConfig::Observations { path: "x".into(), pace: Duration::ZERO, follow: false },
            calibration: None,
            palette: None,
            tags: Vec::new(),
        }
    }

    fn folder(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("bw-board-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn grid(rows: [&str; 8]) -> Value {
        json!({ "grid": rows })
    }

    const START: [&str; 8] =
        [".b.b.b.b", "b.b.b.b.", ".b.b.b.b", "........", "........", "w.w.w.w.", ".w.w.w.w", "w.w.w.w."];
    const LIFTED: [&str; 8] =
        [".b.b.b.b", "b.b.b.b.", "...b.b.b", "........", "........", "w.w.w.w.", ".w.w.w.w", "w.w.w.w."];
    const MOVED: [&str; 8] =
        [".b.b.b.b", "b.b.b.b.", "...b.b.b", "b.......", "........", "w.w.w.w.", ".w.w.w.w", "w.w.w.w."];

    #[test]
    fn reopening_replays_the_log_to_the_same_game() {
        let dir = folder("replay");
        let (mut core, published) = BoardCore::open(&config(), &dir).unwrap();
        assert_eq!(published.iter().map(|e| e.line.as_str()).collect::<Vec<_>>(), ["1: Init Ready"]);
        assert!(core.step(InputOrigin::Source, Some(1), grid(START)).unwrap().is_empty());
        assert!(core.step(InputOrigin::Source, Some(2), grid(START)).unwrap().is_empty(), "the same board again");
        // A piece in the hand: no event, but the tracker's state moves on; it must be replayed.
        assert!(core.step(InputOrigin::Source, Some(3), grid(LIFTED)).unwrap().is_empty());
        let refused = core.step(InputOrigin::Operator, None, json!({"op": "confirm"}));
        assert!(matches!(refused, Err(StepError::Refused(_))));
        let moved = core.step(InputOrigin::Source, Some(4), grid(MOVED)).unwrap();
        assert_eq!(moved[0].mv.as_deref(), Some("9-13"));
        let view = view_of(core.tracker());
        drop(core);

        let log = std::fs::read_to_string(dir.join("events.jsonl")).unwrap();
        assert_eq!(log.lines().count(), 4, "init, start, lifted, moved: no repeat, no refused command\n{log}");
        let (core, published) = BoardCore::open(&config(), &dir).unwrap();
        assert_eq!(published.len(), 2);
        assert_eq!(core.cursor, Some(4));
        assert_eq!(core.last_fed.as_ref().map(|o| o.to_grid()), Some(MOVED.map(String::from)));
        let again = view_of(core.tracker());
        assert_eq!((again.fen, again.moves), (view.fen, view.moves));
        assert!(std::fs::read_to_string(dir.join("game.pdn")).unwrap().contains("1. 9-13 *"));
    }

    #[test]
    fn a_second_daemon_cannot_record_the_same_board() {
        let dir = folder("lock");
        let (_core, _) = BoardCore::open(&config(), &dir).unwrap();
        let err = BoardCore::open(&config(), &dir).err().unwrap();
        assert!(err.contains("another boardwatch is recording this board"), "{err}");
    }

    #[test]
    fn operator_actions_are_checked_before_anything_is_applied() {
        let rules = Variant::Pool.rules();
        assert_eq!(operator_commands(&json!({"op": "undo"}), &rules).unwrap(), [json!({"op": "back"})]);
        assert_eq!(
            operator_commands(&json!({"op": "new_game", "fen": "B:W18:B14"}), &rules).unwrap(),
            [json!({"op": "clear"}), json!({"op": "set_start", "fen": "B:W18:B14"})]
        );
        let err = operator_commands(&json!({"op": "resign"}), &rules).unwrap_err().to_string();
        assert!(err.contains("`resign` needs `player`"), "{err}");
        assert!(operator_commands(&json!({"grid": START}), &rules).is_err(), "boards do not come from operators");
    }
}
