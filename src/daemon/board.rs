//! One board of the daemon: its records (a [`Recorder`]: tracker, synced event log, PDN files),
//! its source's health, and copies of what the API shows, so that readers never wait for a disk
//! sync.
//!
//! Every input reaches the recorder under the board's one `recorder` lock, in this order: the
//! tracker judges it, the input and its events are appended to the board's log and synced, the
//! PDN files are replaced, and only then are the events published (to the copies and the live
//! hub). A restart replays the log through a new tracker ([`Board::open`]) and so continues the
//! game exactly where the last synced record left it: nothing a listener saw can be missing,
//! nothing is recorded twice. The board's thread (`runner`) feeds it; the API reads it and
//! hands it operator actions.

use std::collections::{BTreeMap, VecDeque};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{json, Value};

use super::config::BoardConfig;
use super::sources::Picture;
use super::stop::StopSignal;
use super::supervisor::SourceState;
use crate::draughts::fen::{parse_fen, to_fen};
use crate::draughts::rules::Rules;
use crate::pipeline::{BoardPipeline, PipelineError};
use crate::publish::hub::{BoardEvent, Hub, HubMessage};
use crate::publish::recorder::{Recorder, StepError};
use crate::publish::eventlog::EventLog;
use crate::publish::records::{now_seconds, GamesPdn, InputOrigin, LogRecord, PdnFiles};
use crate::tracker::events::player_number;
use crate::tracker::{parse_input_value, Command, Event, Input, Observation, Tracker, TrackerConfig};
use crate::vision::source::Frame;
use crate::vision::{board_diagram_jpeg, FrameResult};

/// Lock a mutex even if a thread panicked while holding it: the data behind these locks stays
/// consistent step by step, and one failed board must not take the API down.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Why an operator action was not taken.
#[derive(Debug, thiserror::Error)]
pub enum ActionError {
    /// The tracker refused a command (nothing to confirm, an unclear board, ...).
    #[error("{0}")]
    Refused(String),
    /// The action itself is malformed.
    #[error("{0}")]
    Invalid(String),
    /// The board is not recording (its log could not be opened).
    #[error("{0}")]
    NotRecording(String),
    /// The log could not be written: the step was undone.
    #[error("{0}")]
    Log(String),
}

impl From<StepError> for ActionError {
    fn from(e: StepError) -> ActionError {
        match e {
            StepError::Refused(m) => ActionError::Refused(m),
            StepError::Log(m) => ActionError::Log(m),
        }
    }
}

/// Open the board's folder and its log (replaying it), and start the first game if the log is
/// new. Returns the recorder, the events already published, and the folder's lock, held while
/// the daemon runs: two daemons writing one log would corrupt it.
fn open_records(config: &BoardConfig, dir: &Path) -> Result<(Recorder, Vec<Event>, File), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let lock_path = dir.join("lock");
    let lock = File::create(&lock_path).map_err(|e| format!("{}: {e}", lock_path.display()))?;
    lock.try_lock().map_err(|_| format!("{}: another boardwatch is recording this board", dir.display()))?;
    let tracker = TrackerConfig { strict: config.strict, error_after: config.error_after, ..TrackerConfig::new(config.variant, config.kings) };
    // A board's games carry the day they were played (from the log: the same after a restart).
    let pdn = PdnFiles::new(dir, crate::publish::records::board_tags(&config.id, &config.tags)).dating_games();
    let (mut recorder, mut published) =
        Recorder::open(tracker, Some(&dir.join("events.jsonl")), pdn).map_err(|e| e.to_string())?;
    if published.is_empty() && recorder.tracker().position().is_none() {
        let start = match &config.start_fen {
            Some(fen) => Command::SetStart { to_move: None, fen: Some(fen.clone()) },
            None => Command::Init,
        };
        published.extend(recorder.step(InputOrigin::Operator, None, Input::Command(start)).map_err(|e| e.to_string())?);
    }
    recorder.flush().map_err(|e| e.to_string())?;
    Ok((recorder, published, lock))
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
    /// What the operator is asked to do while the board holds (also after an outage of the
    /// camera longer than the tracker can bridge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting: Option<&'static str>,
    /// `strict` (the original program's referee) or `tolerant`.
    pub referee: &'static str,
    /// The round's tags the board's games get (from the hall, `op: tags`), by name.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub round_tags: BTreeMap<String, String>,
    /// The PDN result once the game is over.
    pub result: Option<String>,
    /// The moves of the current game, in PDN notation.
    pub moves: Vec<String>,
    /// Indices into `moves` of the moves never seen finished (inferred from a later board).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inferred: Vec<usize>,
    /// Games recorded on this board so far (the current one included).
    pub games: usize,
    /// Seconds each side used in the current game, from the moves' times (the source's clock):
    /// there is no game clock to read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_used: Option<crate::tracker::record::TimeUsed>,
}

/// The board as the camera sees it: a position in board coordinates (as the tracker's input).
pub fn grid_of_fen(fen: &str, rules: &Rules) -> Option<[String; 8]> {
    let pos = parse_fen(fen, rules).ok()?;
    Some(Observation::of_position(&pos, 0, rules).to_grid())
}

/// The operator's part when the record cannot go on by itself: a board no legal move (nor up to
/// four plies, as after the camera was away) explains has stayed.
const WAITING: &str = "Waiting for the operator: no legal move, nor up to four plies, leads from the last \
recorded position to the board the camera shows (a misplaced piece, or more missed while the camera was away). \
Put the pieces back as recorded, or set the board as it stands as a new start (set_start).";

/// Seconds the boards may stay unclear without a break before the operator is asked.
const UNCLEAR_LIMIT: f64 = 10.0;

/// The operator's part when the boards have stayed unclear (see `Tracker::unclear_for`).
const UNCLEAR_WAITING: &str = "Waiting for the operator: for 10 s or more no legal move, nor up to four plies, has \
explained the boards the camera shows, and play went on, so none stayed long enough to be called an error \
(more missed while the camera was away or behind). The record stops here: put the pieces back as recorded, \
or set the board as it stands as a new start (set_start); if the board is only unclear, confirm or reject it.";

/// What the operator is asked to do, if anything.
fn waiting_of(tracker: &Tracker) -> Option<&'static str> {
    if tracker.is_holding() {
        Some(WAITING)
    } else if tracker.unclear_for().is_some_and(|s| s >= UNCLEAR_LIMIT) {
        Some(UNCLEAR_WAITING)
    } else {
        None
    }
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
        waiting: waiting_of(tracker),
        referee: if tracker.config().strict { "strict" } else { "tolerant" },
        round_tags: tracker.round_tags().iter().cloned().collect(),
        result: tracker.record().and_then(|r| r.result).map(|r| r.pdn(tracker.config().variant).to_string()),
        moves: tracker.record().map(|r| r.move_texts()).unwrap_or_default(),
        inferred: tracker
            .record()
            .map(|r| r.moves().enumerate().filter(|(_, m)| m.inferred).map(|(i, _)| i).collect())
            .unwrap_or_default(),
        // `games_count()` leaves out a current game with nothing in it yet; it counts here.
        games: tracker.games_count() + usize::from(tracker.record().is_some_and(|r| r.is_empty())),
        time_used: tracker.time_used(),
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
    /// The last failure, kept while the source is being reopened (`error` is cleared while an
    /// attempt is under way), and since when the source has delivered nothing.
    last_error: Option<String>,
    down_since: Option<Instant>,
    frames: u64,
    recent_frames: VecDeque<Instant>,
    last_frame: Option<Instant>,
    /// Frames a live source dropped because the board was still busy with an older one: in all,
    /// and over the last `FPS_WINDOW`.
    dropped: u64,
    recent_dropped: VecDeque<(Instant, u64)>,
    /// Whether the board is falling behind its camera (see `BEHIND_SHARE`).
    behind: bool,
    /// Where the board's time goes: decoding, the vision, the tracker with its records.
    work: Work,
    warnings: u64,
    last_warning: Option<String>,
}

/// Time spent per stage over the frames of the run (mean per frame, in the API).
#[derive(Clone, Copy, Debug, Default)]
pub struct Work {
    pub decode: Duration,
    pub decoded: u64,
    pub vision: Duration,
    pub vision_frames: u64,
    pub record: Duration,
    pub record_steps: u64,
}

impl Work {
    fn to_json(self) -> Value {
        let mean = |total: Duration, n: u64| (n > 0).then(|| (total.as_secs_f64() * 1000.0 / n as f64 * 100.0).round() / 100.0);
        json!({
            "decode_ms": mean(self.decode, self.decoded),
            "vision_ms": mean(self.vision, self.vision_frames),
            "record_ms": mean(self.record, self.record_steps),
            "record_steps": self.record_steps,
            "cpu_ms": (self.decode + self.vision + self.record).as_millis() as u64,
        })
    }
}

/// The frame rate is measured over this window.
const FPS_WINDOW: Duration = Duration::from_secs(3);

/// A board that drops more than this share of its camera's frames over `FPS_WINDOW` cannot keep
/// up: it says so (`behind`, and a warning) instead of falling behind in silence.
const BEHIND_SHARE: f64 = 0.2;

impl Health {
    fn new(source: String) -> Health {
        Health {
            source,
            state: SourceState::Starting,
            error: None,
            retry_in: None,
            failures: 0,
            last_error: None,
            down_since: None,
            frames: 0,
            recent_frames: VecDeque::new(),
            last_frame: None,
            dropped: 0,
            recent_dropped: VecDeque::new(),
            behind: false,
            work: Work::default(),
            warnings: 0,
            last_warning: None,
        }
    }

    /// One item from the source, `dropped` frames dropped before it; whether the board has just
    /// begun (`Some(true)`) or stopped (`Some(false)`) falling behind.
    fn count_item(&mut self, now: Instant, dropped: u64) -> Option<bool> {
        self.frames += 1;
        self.last_frame = Some(now);
        self.recent_frames.push_back(now);
        while self.recent_frames.front().is_some_and(|t| now.duration_since(*t) > FPS_WINDOW) {
            self.recent_frames.pop_front();
        }
        self.dropped += dropped;
        if dropped > 0 {
            self.recent_dropped.push_back((now, dropped));
        }
        while self.recent_dropped.front().is_some_and(|(t, _)| now.duration_since(*t) > FPS_WINDOW) {
            self.recent_dropped.pop_front();
        }
        let lost: u64 = self.recent_dropped.iter().map(|(_, n)| n).sum();
        let read = lost + self.recent_frames.len() as u64;
        // Judged over a full window only: the first frames after a start say little.
        let full = self.recent_frames.front().is_some_and(|t| now.duration_since(*t) >= FPS_WINDOW.mul_f64(0.9));
        let behind = full && read > 0 && lost as f64 > BEHIND_SHARE * read as f64;
        let behind = if full { behind } else { self.behind };
        (behind != self.behind).then(|| {
            self.behind = behind;
            behind
        })
    }

    fn to_json(&self) -> Value {
        let now = Instant::now();
        let recent = self.recent_frames.iter().filter(|t| now.duration_since(**t) <= FPS_WINDOW).count();
        let recent_dropped: u64 =
            self.recent_dropped.iter().filter(|(t, _)| now.duration_since(*t) <= FPS_WINDOW).map(|(_, n)| n).sum();
        json!({
            "source": self.source,
            "state": self.state,
            "error": self.error,
            "retry_in_ms": self.retry_in.map(|d| d.as_millis() as u64),
            "failures": self.failures,
            "last_error": self.last_error,
            "down_for_s": self.down_since.map(|t| (now.duration_since(t).as_secs_f64() * 10.0).round() / 10.0),
            "frames": self.frames,
            "fps": (recent as f64 / FPS_WINDOW.as_secs_f64() * 10.0).round() / 10.0,
            "last_frame_ms_ago": self.last_frame.map(|t| now.duration_since(t).as_millis() as u64),
            "dropped": self.dropped,
            "dropped_recent": recent_dropped,
            "behind": self.behind,
            "work": self.work.to_json(),
            "warnings": self.warnings,
            "last_warning": self.last_warning,
        })
    }
}

/// Whether the board's records are being written: after a failed write (a full disk, a file
/// size limit, an I/O error), why and since when, until a write works again.
#[derive(Default)]
struct Writing {
    /// When writing began to fail (seconds since 1970, and for the duration).
    failing_since: Option<(f64, Instant)>,
    error: Option<String>,
    /// Attempts that failed since then.
    failed_attempts: u64,
    /// The PDN files are behind the log (the log itself is fine).
    pdn_behind: bool,
}

/// Published events each board keeps in memory (at least; up to twice as many).
const KEPT_EVENTS: usize = 512;

/// A failed step is tried again after this pause, doubling up to `RETRY_MAX`.
const RETRY_FIRST: Duration = Duration::from_millis(200);
const RETRY_MAX: Duration = Duration::from_secs(3);

/// Seconds since 1970 as an ISO 8601 UTC time (`2026-11-25T09:41:07Z`).
pub fn iso_utc(seconds: f64) -> String {
    let secs = seconds.max(0.0) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem / 60 % 60, rem % 60)
}

/// What the API shows of a board besides its source: copies made after every step.
#[derive(Default)]
struct Shown {
    /// The last events published, in order (for listeners that connect late or fall behind):
    /// between `keep_events` and twice that; older ones are read from the log when asked for,
    /// so that memory does not grow with every move of a daemon that runs for months.
    published: Vec<Arc<BoardEvent>>,
    game: GameView,
    /// The current game as PDN, and every game (read from `games.pdn` when asked).
    pdn: (Arc<str>, GamesPdn),
    picture: Option<Picture>,
}

/// One board of the daemon.
pub struct Board {
    pub config: BoardConfig,
    dir: PathBuf,
    hub: Hub,
    /// `None` when the board's folder or log could not be opened (`failure` says why).
    recorder: Mutex<Option<Recorder>>,
    failure: Option<String>,
    shown: Mutex<Shown>,
    health: Mutex<Health>,
    /// Whether the records can be written (a full disk makes them fail until it has room).
    writing: Mutex<Writing>,
    /// Raised to stop the board's thread.
    pub stop: StopSignal,
    /// When the step holding the recorder began, in milliseconds after `opened` plus one; 0
    /// between steps. A step that never ends (a disk that hangs) is what the watchdog must notice.
    step_started: AtomicU64,
    opened: Instant,
    /// Published events kept in memory (see `Shown::published`).
    keep_events: usize,
    /// Which log the sequence numbers count in: when its first record was written, in
    /// milliseconds since 1970 (0 without a log). A wiped state folder begins a new log, with
    /// events from 1 again and a later epoch, which tells a hall the events are new.
    epoch: u64,
    _lock: Option<File>,
}

/// Marks a step as under way for as long as it lives.
struct StepTimer<'a>(&'a Board);

impl<'a> StepTimer<'a> {
    fn start(board: &'a Board) -> StepTimer<'a> {
        let now = board.opened.elapsed().as_millis() as u64 + 1;
        board.step_started.store(now, Ordering::Relaxed);
        StepTimer(board)
    }
}

impl Drop for StepTimer<'_> {
    fn drop(&mut self) {
        self.0.step_started.store(0, Ordering::Relaxed);
    }
}

impl Board {
    /// Open the board's records (replaying its log); a board whose records cannot be opened is
    /// still listed, with the reason, and does not run.
    pub fn open(config: BoardConfig, state_dir: &Path, hub: Hub) -> Arc<Board> {
        Board::open_keeping(config, state_dir, hub, KEPT_EVENTS)
    }

    fn open_keeping(config: BoardConfig, state_dir: &Path, hub: Hub, keep_events: usize) -> Arc<Board> {
        let dir = state_dir.join(&config.id);
        let (recorder, published, failure, folder_lock) = match open_records(&config, &dir) {
            Ok((recorder, published, folder_lock)) => (Some(recorder), published, None, Some(folder_lock)),
            Err(e) => {
                tracing::error!(board = %config.id, "not recording: {e}");
                (None, Vec::new(), Some(e), None)
            }
        };
        let rules = config.variant.rules();
        let skip = published.len().saturating_sub(keep_events);
        let published =
            published.into_iter().skip(skip).map(|event| Arc::new(board_event(&config.id, event, &rules))).collect();
        let health = Health::new(super::sources::describe_config(&config.source));
        let board = Board {
            dir,
            hub,
            failure,
            shown: Mutex::new(Shown { published, ..Shown::default() }),
            health: Mutex::new(health),
            writing: Mutex::new(Writing::default()),
            stop: StopSignal::new(),
            step_started: AtomicU64::new(0),
            opened: Instant::now(),
            keep_events,
            epoch: recorder.as_ref().and_then(Recorder::started_at).map_or(0, |at| (at * 1000.0).round() as u64),
            recorder: Mutex::new(recorder),
            _lock: folder_lock,
            config,
        };
        if let Some(recorder) = lock(&board.recorder).as_ref() {
            board.refresh(recorder);
            // Until the source shows the board again, show the last board state recorded.
            lock(&board.shown).picture = recorder.last_observation().and_then(diagram);
        }
        Arc::new(board)
    }

    pub fn id(&self) -> &str {
        &self.config.id
    }

    /// Which log the sequence numbers count in (see the field).
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// The board's folder in the state directory.
    pub fn folder(&self) -> &Path {
        &self.dir
    }

    /// Whether the board's records are open (false: see `failure`).
    pub fn recording(&self) -> bool {
        self.failure.is_none()
    }

    /// Where the source stood at the last input recorded; `Err` with the reason when the board
    /// is not recording.
    pub fn resume_cursor(&self) -> Result<Option<u64>, String> {
        match lock(&self.recorder).as_ref() {
            Some(recorder) => Ok(recorder.cursor()),
            None => Err(self.failure.clone().unwrap_or_default()),
        }
    }

    /// The time of the last board state recorded (seconds on the board's clock), if any.
    pub fn last_time(&self) -> Option<f64> {
        lock(&self.recorder).as_ref()?.last_observation()?.t
    }

    /// Make sure the files on disk are complete (they are after every step; this catches a PDN
    /// write that failed earlier).
    pub fn flush(&self) {
        if let Some(recorder) = lock(&self.recorder).as_mut() {
            if let Err(e) = recorder.flush() {
                tracing::error!(board = %self.id(), "{e}");
            }
        }
    }

    /// An operator action from the API: `{"op": ...}` as `boardwatch track` reads them, plus
    /// `new_game` (with an optional `fen`) and `undo`. Returns the events it caused.
    pub fn operate(&self, action: &Value) -> Result<Vec<Arc<BoardEvent>>, ActionError> {
        let commands = operator_commands(action, &self.config.variant.rules())?;
        let mut guard = lock(&self.recorder);
        let _timer = StepTimer::start(self);
        let Some(recorder) = guard.as_mut() else {
            drop(_timer);
            return Err(ActionError::NotRecording(self.failure.clone().unwrap_or_default()));
        };
        let mut published = Vec::new();
        for command in commands {
            match recorder.step(InputOrigin::Operator, None, Input::Command(command)) {
                Ok(events) => published.extend(self.publish(recorder, events)),
                Err(StepError::Log(e)) => {
                    // Not retried here: the operator is told, and tries again.
                    drop(_timer);
                    drop(guard);
                    self.write_failed(e.clone());
                    return Err(ActionError::Log(e));
                }
                Err(e) => return Err(e.into()),
            }
        }
        self.release_after_write(guard, _timer);
        Ok(published)
    }

    /// An input read by the source (a file's line `cursor`). A board state equal to the last
    /// one says nothing new and is not logged again. An input the records cannot take (a full
    /// disk) is tried again until they can or the board stops: the source waits meanwhile, so
    /// nothing after it is read before it is recorded.
    pub fn feed(&self, input: Input, cursor: Option<u64>) {
        let mut pause = RETRY_FIRST;
        loop {
            let mut guard = lock(&self.recorder);
            let timer = StepTimer::start(self);
            let Some(recorder) = guard.as_mut() else { return };
            if let (Input::Observation(obs), Some(last)) = (&input, recorder.last_observation()) {
                // The same board again is news only while the tracker waits to see whether a
                // board nothing explains stays (then time passing over it makes it an error).
                if obs.squares == last.squares && !recorder.tracker().is_suspecting() {
                    return;
                }
            }
            match recorder.step(InputOrigin::Source, cursor, input.clone()) {
                Ok(events) => {
                    self.publish(recorder, events);
                    self.release_after_write(guard, timer);
                    return;
                }
                Err(e @ StepError::Refused(_)) => {
                    drop(timer);
                    drop(guard);
                    let where_ = cursor.map(|c| format!("line {c}: ")).unwrap_or_default();
                    self.warning(format!("{where_}command refused: {e}"));
                    return;
                }
                Err(StepError::Log(e)) => {
                    // Neither the lock nor the step timer is held while waiting: operator
                    // actions get their answer, and the watchdog sees a board that waits, not
                    // one that hangs.
                    drop(timer);
                    drop(guard);
                    self.write_failed(e);
                    if self.stop.sleep(pause) {
                        return;
                    }
                    pause = (pause * 2).min(RETRY_MAX);
                }
            }
        }
    }

    /// A camera frame through the board's pipeline (vision, tracker, records), at `cursor`;
    /// what was seen, or `None` when the frame could not be read (reported as a warning) or the
    /// board is not recording. The recorder is held for the frame: operator actions wait for at
    /// most one.
    pub fn process_frame(&self, pipeline: &mut BoardPipeline, frame: &Frame, cursor: Option<u64>) -> Option<FrameResult> {
        let mut guard = lock(&self.recorder);
        let timer = StepTimer::start(self);
        let recorder = guard.as_mut()?;
        let result = match pipeline.process(frame, cursor, recorder) {
            Ok(step) => {
                self.publish(recorder, step.events);
                self.release_after_write(guard, timer);
                self.count_work(step.vision, step.record);
                return Some(step.frame);
            }
            Err(PipelineError::Vision(e)) => {
                drop(timer);
                drop(guard);
                self.warning(format!("{}: {e}", frame.name));
                return None;
            }
            Err(PipelineError::Record(e, step)) => (e, step),
        };
        drop(timer);
        drop(guard);
        // The board state this frame handed on was not recorded: the pipeline keeps it and it
        // is handed again until the records take it, before any later frame is read, so that a
        // video's cursor never passes an unrecorded frame.
        let (mut error, frame_result) = result;
        let mut pause = RETRY_FIRST;
        loop {
            self.write_failed(error.to_string());
            if self.stop.sleep(pause) {
                return None;
            }
            pause = (pause * 2).min(RETRY_MAX);
            let mut guard = lock(&self.recorder);
            let timer = StepTimer::start(self);
            let recorder = guard.as_mut()?;
            match pipeline.retry_pending(recorder) {
                Ok(events) => {
                    self.publish(recorder, events);
                    self.release_after_write(guard, timer);
                    return Some(*frame_result);
                }
                Err(e) => error = e,
            }
        }
    }

    /// After a logged step: let go of the step timer and the recorder, then note that writing
    /// works (the PDN files may still be behind).
    fn release_after_write(&self, guard: MutexGuard<'_, Option<Recorder>>, timer: StepTimer<'_>) {
        let pdn_behind = guard.as_ref().and_then(|r| r.pdn_behind().map(str::to_string));
        drop(timer);
        drop(guard);
        self.written(pdn_behind);
    }

    /// A step reached the log: writing works (the PDN files may still be behind).
    fn written(&self, pdn_behind: Option<String>) {
        let changed = {
            let mut writing = lock(&self.writing);
            match pdn_behind {
                None if writing.failing_since.is_none() => false,
                None => {
                    let (_, since) = writing.failing_since.take().unwrap_or((0.0, Instant::now()));
                    tracing::info!(
                        board = %self.id(),
                        "recording again after {:.1} s ({} attempts failed)",
                        since.elapsed().as_secs_f64(),
                        writing.failed_attempts
                    );
                    *writing = Writing::default();
                    true
                }
                Some(e) => {
                    let first = writing.failing_since.is_none();
                    if first {
                        writing.failing_since = Some((now_seconds(), Instant::now()));
                    }
                    writing.failed_attempts += 1;
                    writing.pdn_behind = true;
                    writing.error = Some(format!("PDN files not updated: {e}"));
                    first
                }
            }
        };
        if changed {
            self.publish_status();
        }
    }

    /// A step could not be written to the log; it is tried again.
    fn write_failed(&self, error: String) {
        let first = {
            let mut writing = lock(&self.writing);
            let first = writing.failing_since.is_none();
            if first {
                writing.failing_since = Some((now_seconds(), Instant::now()));
            }
            writing.failed_attempts += 1;
            writing.pdn_behind = false;
            writing.error = Some(error.clone());
            first
        };
        if first {
            tracing::error!(board = %self.id(), "recording failing: {error}; the input is kept and tried again until writing works");
            self.publish_status();
        } else {
            tracing::debug!(board = %self.id(), "still not recording: {error}");
        }
    }

    /// Catch up PDN files that could not be written, while they are behind (the daemon calls
    /// this every few seconds, so that a board whose game has stopped catches up too).
    pub fn catch_up(&self) {
        if !lock(&self.writing).pdn_behind {
            return;
        }
        let pdn_behind = {
            let mut guard = lock(&self.recorder);
            let _timer = StepTimer::start(self);
            let Some(recorder) = guard.as_mut() else { return };
            let _ = recorder.flush();
            recorder.pdn_behind().map(str::to_string)
        };
        self.written(pdn_behind);
    }

    /// `ok`, `failing` (writing fails and is retried; `error` and `since` say why and since
    /// when) or `off` (the records could not be opened: `failure`).
    pub fn recording_json(&self) -> Value {
        if let Some(failure) = &self.failure {
            return json!({"state": "off", "error": failure});
        }
        let writing = lock(&self.writing);
        match writing.failing_since {
            None => json!({"state": "ok"}),
            Some((since, at)) => json!({
                "state": "failing",
                "error": writing.error,
                "since": iso_utc(since),
                "failing_for_s": (at.elapsed().as_secs_f64() * 10.0).round() / 10.0,
                "failed_attempts": writing.failed_attempts,
                "pdn_only": writing.pdn_behind,
            }),
        }
    }

    /// Tell live listeners (the page) that the source or the records changed state.
    fn publish_status(&self) {
        let mut source = self.source_json();
        source["recording"] = self.recording_json();
        self.hub.publish(HubMessage::Status { board: self.id().to_string(), source });
    }

    /// After a recorded step: the API's copies, then the live listeners.
    fn publish(&self, recorder: &Recorder, events: Vec<Event>) -> Vec<Arc<BoardEvent>> {
        if events.is_empty() {
            // Boards unclear for long ask for the operator without an event: show it.
            let waiting = waiting_of(recorder.tracker());
            if waiting != lock(&self.shown).game.waiting {
                self.refresh(recorder);
                self.publish_status();
            }
            return Vec::new();
        }
        self.refresh(recorder);
        let rules = self.config.variant.rules();
        let events: Vec<Arc<BoardEvent>> =
            events.into_iter().map(|e| Arc::new(board_event(self.id(), e, &rules))).collect();
        {
            let mut shown = lock(&self.shown);
            shown.published.extend(events.iter().cloned());
            if shown.published.len() >= 2 * self.keep_events {
                let cut = shown.published.len() - self.keep_events;
                shown.published.drain(..cut);
            }
        }
        for event in &events {
            tracing::info!(board = %self.id(), seq = event.event.seq, "{}", event.event.line);
            self.hub.publish(HubMessage::Event(Box::new((**event).clone())));
        }
        events
    }

    fn refresh(&self, recorder: &Recorder) {
        let game = view_of(recorder.tracker());
        let pdn = (recorder.pdn().current_shared(), recorder.pdn().games());
        let mut shown = lock(&self.shown);
        shown.game = game;
        shown.pdn = pdn;
    }

    // ----- what the board's thread reports -----

    pub fn set_state(&self, state: SourceState, error: Option<String>, retry_in: Option<Duration>) {
        let snapshot = {
            let mut health = lock(&self.health);
            if matches!(state, SourceState::Retrying | SourceState::Reconnecting) {
                health.failures += 1;
                health.last_error = error.clone();
                health.down_since.get_or_insert_with(Instant::now);
            }
            health.state = state;
            health.error = error;
            health.retry_in = retry_in;
            health.to_json()
        };
        self.hub.publish(HubMessage::Status { board: self.id().to_string(), source: snapshot });
    }

    /// The source delivered something (for the frame rate), `dropped` frames having been dropped
    /// before it, the frame decoded in `decode`. A delivery ends an outage.
    pub fn count_item(&self, dropped: u64, decode: Option<Duration>) {
        let (changed, snapshot) = {
            let mut health = lock(&self.health);
            if health.down_since.take().is_some() || health.failures > 0 {
                // Back: the attempts start counting again at the next outage.
                health.failures = 0;
                health.last_error = None;
            }
            if let Some(decode) = decode {
                health.work.decode += decode;
                health.work.decoded += 1 + dropped;
            }
            let changed = health.count_item(Instant::now(), dropped);
            if changed == Some(true) {
                tracing::warn!(
                    board = %self.id(),
                    "the board cannot keep up with its camera: {} frames dropped in the last {} s",
                    health.recent_dropped.iter().map(|(_, n)| n).sum::<u64>(),
                    FPS_WINDOW.as_secs()
                );
                health.warnings += 1;
                health.last_warning =
                    Some("the board cannot keep up with its camera: frames are dropped (see `dropped`)".into());
            }
            (changed, changed.map(|_| health.to_json()))
        };
        if let (Some(_), Some(source)) = (changed, snapshot) {
            self.hub.publish(HubMessage::Status { board: self.id().to_string(), source });
        }
    }

    /// Time the vision and the tracker (with its records) took for one frame.
    fn count_work(&self, vision: Duration, record: Option<Duration>) {
        let mut health = lock(&self.health);
        health.work.vision += vision;
        health.work.vision_frames += 1;
        if let Some(record) = record {
            health.work.record += record;
            health.work.record_steps += 1;
        }
    }

    pub fn set_picture(&self, picture: Picture) {
        lock(&self.shown).picture = Some(picture);
    }

    /// A problem that does not stop the source; the same problem on every frame is logged once,
    /// and counted.
    pub fn warning(&self, message: String) {
        let mut health = lock(&self.health);
        health.warnings += 1;
        if health.last_warning.as_ref() != Some(&message) {
            tracing::warn!(board = %self.id(), "{message}");
            health.last_warning = Some(message);
        }
    }

    // ----- what the API reads -----

    /// Published events with a sequence number above `after`.
    pub fn events_after(&self, after: u64) -> Vec<Arc<BoardEvent>> {
        let shown = lock(&self.shown);
        // Sequence numbers run from 1 without gaps: a first one above `after + 1` means the
        // ones in between are no longer in memory.
        if shown.published.first().is_none_or(|e| e.event.seq <= after + 1) {
            let start = shown.published.partition_point(|e| e.event.seq <= after);
            return shown.published[start..].to_vec();
        }
        drop(shown);
        // The log holds every published event (written before they were published).
        let path = self.dir.join("events.jsonl");
        let rules = self.config.variant.rules();
        let mut events: Vec<Arc<BoardEvent>> = match EventLog::read::<LogRecord>(&path) {
            Ok(records) => records
                .into_iter()
                .flat_map(|r| r.events)
                .filter(|e| e.seq > after)
                .map(|e| Arc::new(board_event(self.id(), e, &rules)))
                .collect(),
            Err(e) => {
                tracing::warn!(board = %self.id(), "events after {after}: {e}; only the recent ones are served");
                Vec::new()
            }
        };
        let last = events.last().map_or(after, |e| e.event.seq);
        let shown = lock(&self.shown);
        let start = shown.published.partition_point(|e| e.event.seq <= last);
        events.extend(shown.published[start..].iter().cloned());
        events
    }

    pub fn last_seq(&self) -> u64 {
        lock(&self.shown).published.last().map_or(0, |e| e.event.seq)
    }

    pub fn source_json(&self) -> Value {
        lock(&self.health).to_json()
    }

    /// The last `recent` published events, the game and whether there is a picture: the
    /// board's part of `/boards/{id}`, read under one lock.
    pub fn shown(&self, recent: usize) -> (Vec<Arc<BoardEvent>>, GameView, bool) {
        let shown = lock(&self.shown);
        let last = shown.published[shown.published.len().saturating_sub(recent)..].to_vec();
        (last, shown.game.clone(), shown.picture.is_some())
    }

    /// Why the board is not recording, if it is not.
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }

    /// The current game as PDN.
    pub fn game_pdn(&self) -> Arc<str> {
        lock(&self.shown).pdn.0.clone()
    }

    /// Every game as PDN (the finished ones read from `games.pdn`).
    pub fn games_pdn(&self) -> std::io::Result<String> {
        let games = lock(&self.shown).pdn.1.clone();
        games.read()
    }

    pub fn picture(&self) -> Option<Picture> {
        lock(&self.shown).picture.clone()
    }

    /// No step has been holding the board's records for `limit` or more (the watchdog's check
    /// that no board is wedged). Never waits.
    pub fn responsive(&self, limit: Duration) -> bool {
        match self.step_started.load(Ordering::Relaxed) {
            0 => true,
            started => self.opened.elapsed().as_millis() as u64 + 1 - started < limit.as_millis() as u64,
        }
    }
}

/// A drawn picture of a board state, for sources without a camera.
pub fn diagram(obs: &Observation) -> Option<Picture> {
    board_diagram_jpeg(&obs.to_grid()).ok().map(Picture::from)
}

fn board_event(board: &str, event: Event, rules: &Rules) -> BoardEvent {
    let grid = event.fen.as_deref().and_then(|f| grid_of_fen(f, rules));
    BoardEvent { board: board.to_string(), event, grid }
}

/// The tracker commands of an operator action, checked before any is applied.
fn operator_commands(action: &Value, rules: &Rules) -> Result<Vec<Command>, ActionError> {
    let invalid = |m: String| Err(ActionError::Invalid(m));
    let Some(op) = action.get("op").and_then(Value::as_str) else {
        return invalid("expected a JSON object with an `op`, e.g. {\"op\": \"back\"}".into());
    };
    const KNOWN: &str =
        "new_game, set_start, init_and_valid, confirm, reject, undo (or back), result, resign, draw, clear, referee, tags";
    match op {
        "new_game" => match action.get("fen") {
            None | Some(Value::Null) => Ok(vec![Command::Init]),
            Some(Value::String(fen)) => {
                if let Err(e) = parse_fen(fen, rules) {
                    return invalid(format!("fen: {e}"));
                }
                // A new game from a set position: end the current one first, so that the
                // position is the new game's start and not a setup inside the old one.
                Ok(vec![Command::Clear, Command::SetStart { to_move: None, fen: Some(fen.clone()) }])
            }
            Some(other) => invalid(format!("fen: expected a string, got {other}")),
        },
        "undo" => Ok(vec![Command::Back]),
        "init" | "init_and_valid" | "set_start" | "back" | "clear" | "draw" | "resign" | "confirm" | "reject"
        | "result" | "referee" | "tags" => match parse_input_value(action.clone()) {
            Ok(Input::Command(command)) => Ok(vec![command]),
            Ok(Input::Observation(_)) => invalid("not a command".into()),
            Err(e) => invalid(e.to_string()),
        },
        other => invalid(format!("unknown op {other:?} (expected {KNOWN})")),
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
            squares: Default::default(),
            tags: Vec::new(),
        }
    }

    /// A state folder of its own, removed when the test ends.
    fn folder(name: &str) -> tempfile::TempDir {
        tempfile::Builder::new().prefix(&format!("bw-board-{name}-")).tempdir().unwrap()
    }

    fn grid(rows: [&str; 8]) -> Input {
        Input::Observation(Box::new(Observation::from_grid(&rows).unwrap()))
    }

    fn open(dir: &Path) -> Arc<Board> {
        Board::open(config(), dir.parent().unwrap(), Hub::new(16))
    }

    fn lines(events: &[Arc<BoardEvent>]) -> Vec<&str> {
        events.iter().map(|e| e.event.line.as_str()).collect()
    }

    const START: [&str; 8] =
        [".b.b.b.b", "b.b.b.b.", ".b.b.b.b", "........", "........", "w.w.w.w.", ".w.w.w.w", "w.w.w.w."];
    const LIFTED: [&str; 8] =
        [".b.b.b.b", "b.b.b.b.", "...b.b.b", "........", "........", "w.w.w.w.", ".w.w.w.w", "w.w.w.w."];
    const MOVED: [&str; 8] =
        [".b.b.b.b", "b.b.b.b.", "...b.b.b", "b.......", "........", "w.w.w.w.", ".w.w.w.w", "w.w.w.w."];

    #[test]
    fn reopening_replays_the_log_to_the_same_game() {
        let state = folder("replay");
        let dir = state.path().join("t");
        let board = open(&dir);
        assert_eq!(lines(&board.events_after(0)), ["1: Init Ready"]);
        board.feed(grid(START), Some(1));
        board.feed(grid(START), Some(2));
        assert_eq!(board.last_seq(), 1, "the same board again");
        // A piece in the hand: no event, but the tracker's state moves on; it must be replayed.
        board.feed(grid(LIFTED), Some(3));
        let refused = board.operate(&serde_json::json!({"op": "confirm"}));
        assert!(matches!(refused, Err(ActionError::Refused(_))));
        board.feed(grid(MOVED), Some(4));
        let moved = board.events_after(1);
        assert_eq!(moved[0].event.mv.as_deref(), Some("9-13"));
        let game = board.shown(0).1;
        drop(board);

        let log = std::fs::read_to_string(dir.join("events.jsonl")).unwrap();
        assert_eq!(log.lines().count(), 4, "init, start, lifted, moved: no repeat, no refused command\n{log}");
        let board = open(&dir);
        assert_eq!(board.events_after(0).len(), 2);
        assert_eq!(board.resume_cursor(), Ok(Some(4)));
        let last = lock(&board.recorder).as_ref().unwrap().last_observation().map(|o| o.to_grid());
        assert_eq!(last, Some(MOVED.map(String::from)));
        let again = board.shown(0).1;
        assert_eq!((again.fen, again.moves), (game.fen, game.moves));
        assert!(std::fs::read_to_string(dir.join("game.pdn")).unwrap().contains("1. 9-13 *"));
    }

    /// Back after the camera was away for six plies (more than the tracker infers): no move is
    /// guessed, the board holds once the board has stayed `error_after` seconds, and the operator
    /// is told what to do; up to four plies are recovered (marked inferred).
    #[test]
    fn a_board_more_than_four_plies_on_waits_for_the_operator() {
        use crate::draughts::game::replay;
        use crate::draughts::pdn::{read_games, ReadMode};
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/samples/games/acf_sample.pdn")).unwrap();
        let game = replay(&read_games(&text, ReadMode::Lenient).unwrap()[0], crate::draughts::Variant::English).unwrap();
        let rules = crate::draughts::Variant::English.rules();
        let seen = |pos: &crate::draughts::position::Position, t: f64| {
            let mut obs = Observation::of_position(pos, 0, &rules);
            obs.t = Some(t);
            Input::Observation(Box::new(obs))
        };
        let english = BoardConfig { variant: crate::draughts::Variant::English, ..config() };
        for (missed, recovered) in [(4, true), (6, false)] {
            let state = folder(&format!("away-{missed}"));
            let dir = state.path().join("t");
            let board = Board::open(english.clone(), dir.parent().unwrap(), Hub::new(16));
            board.feed(seen(&game.start, 0.0), None);
            board.feed(seen(&game.plies[0].after, 1.0), None);
            // The camera away; back showing the board `missed` plies later, still for 5 s.
            for t in [20.0, 21.0, 22.5, 24.0, 25.0] {
                board.feed(seen(&game.plies[missed].after, t), None);
            }
            let view = board.shown(0).1;
            if recovered {
                assert_eq!(view.moves.len(), missed + 1, "{view:?}");
                assert_eq!(view.inferred, (1..missed).collect::<Vec<_>>());
                assert!(!view.holding && view.waiting.is_none());
            } else {
                assert_eq!(view.moves.len(), 1, "nothing guessed: {view:?}");
                assert!(view.holding, "{view:?}");
                assert!(view.waiting.is_some_and(|w| w.contains("operator") && w.contains("four plies")), "{view:?}");
            }
        }

        // Back more than four plies on while play goes on (a fast game, or a machine too busy
        // for every frame): every board differs from the last, so none stays long enough to be
        // an error; after 10 s of them the operator is asked all the same.
        let state = folder("away-playing");
        let dir = state.path().join("t");
        let board = Board::open(english.clone(), dir.parent().unwrap(), Hub::new(16));
        let mut status = board.hub.subscribe();
        board.feed(seen(&game.start, 0.0), None);
        board.feed(seen(&game.plies[0].after, 1.0), None);
        for (k, ply) in (6..=20).enumerate() {
            let t = 20.0 + k as f64;
            board.feed(seen(&game.plies[ply].after, t), None);
            let view = board.shown(0).1;
            assert_eq!(view.moves.len(), 1, "nothing guessed: {view:?}");
            assert!(!view.holding, "{view:?}");
            if t < 30.0 {
                assert!(view.waiting.is_none(), "at {t} s: {view:?}");
            } else {
                assert!(view.waiting.is_some_and(|w| w.contains("operator") && w.contains("set_start")), "at {t} s: {view:?}");
            }
        }
        let mut told = false;
        while let Ok(message) = status.try_recv() {
            told |= matches!(message.as_ref(), HubMessage::Status { .. });
        }
        assert!(told, "live listeners (the MQTT publisher, the page) are told of the change");
        board.operate(&json!({"op": "set_start"})).unwrap();
        let view = board.shown(0).1;
        assert!(view.waiting.is_none() && !view.holding, "{view:?}");
    }

    #[test]
    fn a_second_daemon_cannot_record_the_same_board() {
        let state = folder("lock");
        let dir = state.path().join("t");
        let _first = open(&dir);
        let second = open(&dir);
        let err = second.resume_cursor().unwrap_err();
        assert!(err.contains("another boardwatch is recording this board"), "{err}");
    }

    #[test]
    fn events_no_longer_in_memory_are_read_from_the_log() {
        let state = folder("history");
        let dir = state.path().join("t");
        let board = Board::open_keeping(config(), dir.parent().unwrap(), Hub::new(16), 4);
        for _ in 0..40 {
            board.operate(&json!({"op": "init"})).unwrap();
        }
        assert!(lock(&board.shown).published.len() < 8, "memory keeps only the last ones");
        let seqs = |events: Vec<Arc<BoardEvent>>| events.iter().map(|e| e.event.seq).collect::<Vec<_>>();
        assert_eq!(seqs(board.events_after(0)), (1..=41).collect::<Vec<_>>());
        assert_eq!(seqs(board.events_after(30)), (31..=41).collect::<Vec<_>>());
        assert_eq!(seqs(board.events_after(40)), [41]);
        assert_eq!(board.events_after(0)[5].board, "t");
        assert!(board.events_after(0)[5].grid.is_some(), "events from the log are drawn as the live ones");
        assert_eq!(board.last_seq(), 41);
    }

    #[test]
    fn times_are_written_in_utc() {
        assert_eq!(iso_utc(0.0), "1970-01-01T00:00:00Z");
        assert_eq!(iso_utc(1_764_063_667.4), "2025-11-25T09:41:07Z");
        assert_eq!(iso_utc(951_868_799.0), "2000-02-29T23:59:59Z");
    }

    #[test]
    fn operator_actions_are_checked_before_anything_is_applied() {
        let rules = Variant::Pool.rules();
        assert_eq!(operator_commands(&json!({"op": "undo"}), &rules).unwrap(), [Command::Back]);
        assert_eq!(
            operator_commands(&json!({"op": "new_game", "fen": "B:W18:B14"}), &rules).unwrap(),
            [Command::Clear, Command::SetStart { to_move: None, fen: Some("B:W18:B14".into()) }]
        );
        let err = operator_commands(&json!({"op": "resign"}), &rules).unwrap_err().to_string();
        assert!(err.contains("`resign` needs `player`"), "{err}");
        assert!(operator_commands(&json!({"grid": START}), &rules).is_err(), "boards do not come from operators");
    }
}
