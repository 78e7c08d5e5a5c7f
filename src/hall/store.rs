//! The hall's own durable copy of every board: `{state_dir}/{board}/events.jsonl` (each event
//! once, in sequence order, synced before it is shown), `state.json` and `game.pdn` (the last
//! ones the daemon published). A restarted hall reads them back and goes on from there.
//!
//! Events arrive at least once and, after an outage, possibly out of order: one already stored
//! is dropped; one after a gap waits in memory while the missing ones are asked for again
//! (`resend`); the board's retained state says how far its log goes, so a gap at the end is
//! noticed too.
//!
//! Sequence numbers count within one log of the daemon's, named by its epoch (when the log
//! began): a daemon whose state folder was wiped numbers its events from 1 again under a later
//! epoch. The copy follows the latest epoch: the events of a later one begin a new copy (the old
//! one is kept as `events-{epoch}.jsonl`), those of an earlier one (a stale retained message)
//! are dropped.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::broadcast;

use crate::daemon::board::lock;
use crate::mqtt::config::valid_topic_level;
use crate::publish::atomic::write_atomically;
use crate::publish::eventlog::EventLog;

/// Events of a board kept in memory for the overview.
const RECENT: usize = 12;
/// Events waiting after a gap, at most (more are dropped and asked for again later).
const MAX_WAITING: usize = 10_000;
/// Threads syncing boards' copies at once.
const SYNC_THREADS: usize = 8;
/// A board's missing events are asked for at most this often.
const RESEND_EVERY: Duration = Duration::from_secs(1);

/// One board as the hall knows it.
struct HallBoard {
    dir: PathBuf,
    log: EventLog,
    /// The last event stored (events run from 1 without gaps).
    last_seq: u64,
    recent: VecDeque<Value>,
    /// Events after a gap, by sequence number.
    waiting: BTreeMap<u64, Value>,
    /// The daemon's last `state` message and current game.
    state: Value,
    pdn: Arc<str>,
    /// `state.json`/`game.pdn` changed since they were written.
    files_behind: bool,
    last_resend: Option<Instant>,
    /// Copies dropped because they were stored already.
    duplicates: u64,
    /// The epoch of the daemon's log the copy follows (`None` before the first event, or for a
    /// daemon that sends none).
    epoch: Option<u64>,
    /// Messages dropped because they came from an earlier log than the copy's.
    stale: u64,
    /// The daemon's `state` messages taken so far (one comes at every connection of the
    /// daemon's and after its events: a board that is back says so).
    states: u64,
}

/// One message from the broker: a board's `events`, `state` or `pdn`.
pub struct Message {
    pub board: String,
    pub channel: String,
    pub payload: Vec<u8>,
}

/// What a batch of messages did.
#[derive(Debug, Default, PartialEq)]
pub struct Received {
    /// Events stored (and synced), in order, as JSON text.
    pub stored: Vec<Arc<str>>,
    /// Ask these boards' daemons for the events after these again.
    pub resend: Vec<(String, u64)>,
    /// Messages that could not be taken, with why.
    pub errors: Vec<String>,
}

pub struct Store {
    dir: PathBuf,
    boards: Mutex<BTreeMap<String, HallBoard>>,
    /// Every stored event, as JSON text, for live listeners.
    live: broadcast::Sender<Arc<str>>,
}

fn seq_of(event: &Value) -> Option<u64> {
    event.get("seq").and_then(Value::as_u64)
}

fn epoch_of(message: &Value) -> Option<u64> {
    message.get("epoch").and_then(Value::as_u64)
}

impl HallBoard {
    fn open(dir: PathBuf) -> anyhow::Result<HallBoard> {
        std::fs::create_dir_all(&dir).map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
        let (log, events) = EventLog::open::<Value>(&dir.join("events.jsonl"))?;
        let last_seq = events.last().and_then(seq_of).unwrap_or(0);
        let recent = events
            .iter()
            .skip(events.len().saturating_sub(RECENT))
            .cloned()
            .collect();
        let state = std::fs::read(dir.join("state.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or(Value::Null);
        let pdn = std::fs::read_to_string(dir.join("game.pdn")).unwrap_or_default();
        let epoch = events.last().and_then(epoch_of);
        Ok(HallBoard {
            dir,
            log,
            last_seq,
            recent,
            waiting: BTreeMap::new(),
            state,
            pdn: Arc::from(pdn),
            files_behind: false,
            last_resend: None,
            duplicates: 0,
            epoch,
            stale: 0,
            states: 0,
        })
    }

    /// Whether a message of the daemon's log `epoch` belongs to the copy, beginning a new copy
    /// for a later log. A daemon that names no epoch is taken as it comes.
    fn same_log(&mut self, epoch: Option<u64>) -> anyhow::Result<bool> {
        match (self.epoch, epoch) {
            (_, None) => Ok(true),
            (Some(current), Some(epoch)) if epoch < current => {
                self.stale += 1;
                if self.stale == 1 {
                    tracing::warn!(
                        "{}: dropping messages of an older log of the daemon's (epoch {epoch}, the copy follows {current}); a daemon whose state folder was wiped goes unseen if its clock is behind",
                        self.dir.display()
                    );
                }
                Ok(false)
            }
            (Some(current), Some(epoch)) if epoch > current => {
                self.begin_log(current, epoch)?;
                Ok(true)
            }
            (_, Some(epoch)) => {
                self.epoch = Some(epoch);
                Ok(true)
            }
        }
    }

    /// The daemon began a new log: keep the copy of the old one as `events-{old}.jsonl` and
    /// follow the new one from its first event.
    fn begin_log(&mut self, old: u64, new: u64) -> anyhow::Result<()> {
        let path = self.log.path().to_path_buf();
        self.log.sync()?;
        let kept = self.dir.join(format!("events-{old}.jsonl"));
        std::fs::rename(&path, &kept)
            .map_err(|e| anyhow::anyhow!("{} to {}: {e}", path.display(), kept.display()))?;
        std::fs::File::open(&self.dir).and_then(|d| d.sync_all())?;
        tracing::info!(
            "{}: the daemon began a new log (epoch {new}); the copy of the last one is {}",
            self.dir.display(),
            kept.display()
        );
        self.log = EventLog::open::<Value>(&path)?.0;
        self.epoch = Some(new);
        self.last_seq = 0;
        self.recent.clear();
        self.waiting.clear();
        self.last_resend = None;
        Ok(())
    }

    fn store(
        &mut self,
        event: Value,
        text: Arc<str>,
        stored: &mut Vec<Arc<str>>,
    ) -> anyhow::Result<()> {
        self.log.append_unsynced(&event)?;
        self.last_seq += 1;
        self.recent.push_back(event);
        if self.recent.len() > RECENT {
            self.recent.pop_front();
        }
        stored.push(text);
        Ok(())
    }

    /// The events after the last stored one, to ask for again (once a second at most).
    fn ask_again(&mut self) -> Option<u64> {
        let now = Instant::now();
        if self
            .last_resend
            .is_none_or(|t| now.duration_since(t) >= RESEND_EVERY)
        {
            self.last_resend = Some(now);
            return Some(self.last_seq);
        }
        None
    }

    /// An event: stored if it is the next one (with those waiting after it), kept if it comes
    /// after a gap, dropped if stored already. Returns where to ask again from, if anywhere.
    fn event(&mut self, payload: &[u8], stored: &mut Vec<Arc<str>>) -> anyhow::Result<Option<u64>> {
        let event: Value = serde_json::from_slice(payload)?;
        let seq = seq_of(&event).ok_or_else(|| anyhow::anyhow!("an event without seq"))?;
        if !self.same_log(epoch_of(&event))? {
            return Ok(None);
        }
        if seq <= self.last_seq || self.waiting.contains_key(&seq) {
            self.duplicates += 1;
            return Ok(None);
        }
        if seq > self.last_seq + 1 {
            if self.waiting.len() < MAX_WAITING {
                self.waiting.insert(seq, event);
            }
            return Ok(self.ask_again());
        }
        self.store(event, Arc::from(String::from_utf8_lossy(payload)), stored)?;
        while let Some(next) = self.waiting.remove(&(self.last_seq + 1)) {
            let text = Arc::from(next.to_string());
            self.store(next, text, stored)?;
        }
        Ok(if self.waiting.is_empty() {
            None
        } else {
            self.ask_again()
        })
    }

    /// The daemon's retained state: if its log goes further than the copy, ask.
    fn state(&mut self, payload: &[u8]) -> anyhow::Result<Option<u64>> {
        let state: Value = serde_json::from_slice(payload)?;
        if !self.same_log(epoch_of(&state))? {
            return Ok(None);
        }
        let daemon_last = state.get("last_seq").and_then(Value::as_u64).unwrap_or(0);
        self.state = state;
        self.states += 1;
        self.files_behind = true;
        Ok(if daemon_last > self.last_seq {
            self.ask_again()
        } else {
            None
        })
    }
}

impl Store {
    /// Open the copy in `dir` (every board folder found there).
    pub fn open(dir: &Path) -> anyhow::Result<Store> {
        std::fs::create_dir_all(dir)
            .map_err(|e| anyhow::anyhow!("state_dir: {}: {e}", dir.display()))?;
        let mut boards = BTreeMap::new();
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().to_string();
            if entry.file_type()?.is_dir() && valid_topic_level(&name) {
                boards.insert(name, HallBoard::open(entry.path())?);
            }
        }
        Ok(Store {
            dir: dir.to_path_buf(),
            boards: Mutex::new(boards),
            live: broadcast::channel(4096).0,
        })
    }

    fn board<'a>(
        &self,
        boards: &'a mut BTreeMap<String, HallBoard>,
        id: &str,
    ) -> anyhow::Result<&'a mut HallBoard> {
        if !boards.contains_key(id) {
            boards.insert(id.to_string(), HallBoard::open(self.dir.join(id))?);
        }
        Ok(boards.get_mut(id).expect("just inserted"))
    }

    /// Take a batch of messages: events are appended to the boards' copies, which are synced
    /// once per board for the batch (group commit), and only then handed to live listeners.
    pub fn receive(&self, messages: &[Message]) -> Received {
        let mut received = Received::default();
        let mut boards = lock(&self.boards);
        let mut touched: Vec<(String, Vec<Arc<str>>)> = Vec::new();
        for message in messages {
            let board = match self.board(&mut boards, &message.board) {
                Ok(b) => b,
                Err(e) => {
                    received.errors.push(format!("{}: {e}", message.board));
                    continue;
                }
            };
            let mut stored = Vec::new();
            let asked = match message.channel.as_str() {
                "events" => board.event(&message.payload, &mut stored),
                "state" => board.state(&message.payload),
                "pdn" => {
                    board.pdn = Arc::from(String::from_utf8_lossy(&message.payload));
                    board.files_behind = true;
                    Ok(None)
                }
                _ => Ok(None),
            };
            match asked {
                Ok(Some(after)) => received.resend.push((message.board.clone(), after)),
                Ok(None) => {}
                Err(e) => received
                    .errors
                    .push(format!("{} {}: {e}", message.board, message.channel)),
            }
            if !stored.is_empty() {
                match touched.iter_mut().find(|(id, _)| *id == message.board) {
                    Some((_, texts)) => texts.extend(stored),
                    None => touched.push((message.board.clone(), stored)),
                }
            }
        }
        // One sync per board touched, several at once: the file system merges them into few
        // journal commits, where one after the other they would each wait for the disk.
        let ids: Vec<String> = touched.iter().map(|(id, _)| id.clone()).collect();
        let mut to_sync: Vec<(&String, &mut HallBoard)> = boards
            .iter_mut()
            .filter(|(id, _)| ids.contains(id))
            .collect();
        let chunk = to_sync.len().div_ceil(SYNC_THREADS).max(1);
        let failed: Vec<(String, String)> = std::thread::scope(|scope| {
            let workers: Vec<_> = to_sync
                .chunks_mut(chunk)
                .map(|part| {
                    scope.spawn(move || {
                        part.iter_mut()
                            .filter_map(|(id, board)| {
                                board
                                    .log
                                    .sync()
                                    .err()
                                    .map(|e| (id.to_string(), e.to_string()))
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|w| w.join().unwrap_or_default())
                .collect()
        });
        for (id, texts) in touched {
            match failed.iter().find(|(failed_id, _)| *failed_id == id) {
                None => received.stored.extend(texts),
                Some((_, e)) => {
                    // Not on disk: forget the board's state in memory; it is read back from
                    // the copy at its next message, and the missing events are asked for.
                    received.errors.push(format!("{id}: {e}"));
                    boards.remove(&id);
                }
            }
        }
        drop(boards);
        for text in &received.stored {
            let _ = self.live.send(text.clone());
        }
        received
    }

    /// Write the states and games that changed (every second or so, and at the end).
    pub fn write_files(&self) {
        let behind: Vec<(PathBuf, Vec<u8>, Arc<str>)> = {
            let mut boards = lock(&self.boards);
            boards
                .values_mut()
                .filter(|b| b.files_behind)
                .map(|b| {
                    b.files_behind = false;
                    (
                        b.dir.clone(),
                        serde_json::to_vec(&b.state).unwrap_or_default(),
                        b.pdn.clone(),
                    )
                })
                .collect()
        };
        for (dir, state, pdn) in behind {
            if let Err(e) = write_atomically(&dir.join("state.json"), &state)
                .and_then(|_| write_atomically(&dir.join("game.pdn"), pdn.as_bytes()))
            {
                tracing::warn!("{e}");
            }
        }
    }

    /// Every board: id, last event stored, the daemon's state, recent events.
    pub fn overview(&self) -> Vec<Value> {
        let boards = lock(&self.boards);
        boards
            .iter()
            .map(|(id, b)| {
                serde_json::json!({
                    "id": id,
                    "last_seq": b.last_seq,
                    "waiting": b.waiting.len(),
                    "duplicates_dropped": b.duplicates,
                    "epoch": b.epoch,
                    "stale_dropped": b.stale,
                    "state": b.state,
                    "recent_events": b.recent,
                })
            })
            .collect()
    }

    /// The round's tags a board's daemon says its games get (`game.round_tags` of its state,
    /// sorted by name), with the number of states taken from it so far; `None` before its first
    /// state.
    pub fn round_tags(&self, board: &str) -> Option<(Vec<(String, String)>, u64)> {
        let boards = lock(&self.boards);
        let b = boards.get(board)?;
        if b.state.is_null() {
            return None;
        }
        let tags = b.state["game"]["round_tags"]
            .as_object()
            .map(|tags| {
                let mut tags: Vec<(String, String)> = tags
                    .iter()
                    .map(|(name, value)| (name.clone(), value.as_str().unwrap_or_default().to_string()))
                    .collect();
                tags.sort();
                tags
            })
            .unwrap_or_default();
        Some((tags, b.states))
    }

    pub fn board_ids(&self) -> Vec<String> {
        lock(&self.boards).keys().cloned().collect()
    }

    /// The current game of a board as PDN.
    pub fn game_pdn(&self, board: &str) -> Option<Arc<str>> {
        lock(&self.boards).get(board).map(|b| b.pdn.clone())
    }

    /// Every board's current game that has begun, in board order.
    pub fn games(&self) -> Vec<(String, Arc<str>)> {
        lock(&self.boards)
            .iter()
            .filter(|(_, b)| !b.pdn.trim().is_empty())
            .map(|(id, b)| (id.clone(), b.pdn.clone()))
            .collect()
    }

    /// The round: every board's current game, in board order, as one PDN file.
    pub fn round_pdn(&self) -> String {
        let boards = lock(&self.boards);
        let mut text = String::new();
        for b in boards.values().filter(|b| !b.pdn.trim().is_empty()) {
            text.push_str(b.pdn.trim_end());
            text.push_str("\n\n");
        }
        text
    }

    /// The stored events of a board after `after` (read from the copy on disk).
    pub fn events_after(&self, board: &str, after: u64) -> Option<anyhow::Result<Vec<Value>>> {
        let path = lock(&self.boards)
            .get(board)
            .map(|b| b.log.path().to_path_buf())?;
        Some(
            EventLog::read::<Value>(&path)
                .map(|events| {
                    events
                        .into_iter()
                        .filter(|e| seq_of(e).is_some_and(|s| s > after))
                        .collect()
                })
                .map_err(Into::into),
        )
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Arc<str>> {
        self.live.subscribe()
    }

    /// The last event stored per board.
    pub fn last_seqs(&self) -> HashMap<String, u64> {
        lock(&self.boards)
            .iter()
            .map(|(id, b)| (id.clone(), b.last_seq))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(channel: &str, payload: Vec<u8>) -> Vec<Message> {
        vec![Message {
            board: "t".into(),
            channel: channel.into(),
            payload,
        }]
    }

    fn event(seq: u64) -> Vec<Message> {
        message(
            "events",
            serde_json::json!({"board": "t", "seq": seq, "line": format!("{seq}: x")})
                .to_string()
                .into_bytes(),
        )
    }

    #[test]
    fn events_are_stored_once_in_order_and_gaps_are_asked_for() {
        let tmp = tempfile::Builder::new().prefix("bw-hall-store-").tempdir().unwrap();
        let dir = tmp.path();
        let store = Store::open(&dir).unwrap();
        assert_eq!(store.receive(&event(1)).stored.len(), 1);
        assert!(
            store.receive(&event(1)).stored.is_empty(),
            "a copy is dropped"
        );
        let gap = store.receive(&event(3));
        assert_eq!(
            (gap.stored.len(), gap.resend),
            (0, vec![("t".to_string(), 1)])
        );
        let batch: Vec<Message> = [event(2), event(4), event(2)]
            .into_iter()
            .flatten()
            .collect();
        assert_eq!(
            store.receive(&batch).stored.len(),
            3,
            "2, the waiting 3, and 4; not 2 again"
        );
        store.receive(&message("state", br#"{"last_seq": 5}"#.to_vec()));
        store.receive(&message("pdn", b"[Event \"x\"]\n1. 11-15 *\n".to_vec()));
        let bad = store.receive(&message("events", b"{\"no\": 1}".to_vec()));
        assert!(bad.errors[0].contains("without seq"), "{bad:?}");
        store.write_files();
        drop(store);

        let store = Store::open(&dir).unwrap();
        assert_eq!(store.last_seqs()["t"], 4, "read back after a restart");
        assert!(store.receive(&event(3)).stored.is_empty());
        assert!(store.round_pdn().contains("1. 11-15 *"));
        let seqs: Vec<u64> = store
            .events_after("t", 1)
            .unwrap()
            .unwrap()
            .iter()
            .filter_map(seq_of)
            .collect();
        assert_eq!(seqs, [2, 3, 4]);
    }

    fn event_of_log(seq: u64, epoch: u64, line: &str) -> Vec<Message> {
        message(
            "events",
            serde_json::json!({"board": "t", "seq": seq, "line": line, "epoch": epoch})
                .to_string()
                .into_bytes(),
        )
    }

    /// A daemon whose state folder was wiped numbers its events from 1 again under a later
    /// epoch: they are new events, not copies; an earlier epoch's messages are stale.
    #[test]
    fn a_new_log_of_the_daemon_begins_a_new_copy() {
        let tmp = tempfile::Builder::new().prefix("bw-hall-epoch-").tempdir().unwrap();
        let dir = tmp.path();
        let store = Store::open(&dir).unwrap();
        for seq in 1..=3 {
            assert_eq!(
                store.receive(&event_of_log(seq, 100, "old")).stored.len(),
                1
            );
        }
        let new = store.receive(&event_of_log(1, 200, "new"));
        assert_eq!(new.stored.len(), 1, "seq 1 of a later log is a new event");
        assert!(
            store
                .receive(&event_of_log(2, 100, "old"))
                .stored
                .is_empty(),
            "an earlier log's event is stale"
        );
        let stale_state = store.receive(&message(
            "state",
            br#"{"last_seq": 3, "epoch": 100}"#.to_vec(),
        ));
        assert!(stale_state.resend.is_empty(), "{stale_state:?}");
        let gap = store.receive(&message(
            "state",
            br#"{"last_seq": 2, "epoch": 200}"#.to_vec(),
        ));
        assert_eq!(gap.resend, vec![("t".to_string(), 1)]);
        let overview = &store.overview()[0];
        assert_eq!(
            (
                &overview["epoch"],
                &overview["stale_dropped"],
                &overview["last_seq"]
            ),
            (
                &serde_json::json!(200),
                &serde_json::json!(2),
                &serde_json::json!(1)
            )
        );
        drop(store);

        let kept = EventLog::read::<Value>(&dir.join("t/events-100.jsonl")).unwrap();
        assert_eq!(kept.len(), 3, "the old log's copy is kept");
        let store = Store::open(&dir).unwrap();
        assert_eq!(store.last_seqs()["t"], 1, "read back after a restart");
        assert!(store
            .receive(&event_of_log(1, 200, "new"))
            .stored
            .is_empty());
        assert_eq!(store.receive(&event_of_log(2, 200, "new")).stored.len(), 1);
        let lines: Vec<Value> = store.events_after("t", 0).unwrap().unwrap();
        assert!(lines.iter().all(|e| e["line"] == "new"), "{lines:?}");
    }
}
