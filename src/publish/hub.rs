//! The live side of publishing: every board's events and source status go through one broadcast
//! channel to whoever listens (SSE and WebSocket clients, the live page, the MQTT publisher).
//! Listeners that fall behind lose messages from the channel, never from the record: they catch
//! up from the board's published history by sequence number, which the hub's boards
//! ([`LiveBoard`]) give, with their state and game. A sink needs nothing but the hub.

use std::sync::{Arc, RwLock};

use serde::Serialize;
use serde_json::Value;
use tokio::sync::broadcast;

use crate::tracker::Event;

/// One live message.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum HubMessage {
    /// A tracker event of a board, already in its log.
    Event(Box<BoardEvent>),
    /// A board's source changed state (a camera lost, back, a file ended); the value is the
    /// board's `source` object as `/boards/{id}` shows it.
    Status { board: String, source: serde_json::Value },
}

/// A tracker event with its board, and the board after it in board coordinates (8 rows of 8
/// grid characters, row 0 at Black's edge) when the event has a position: the live page draws it.
#[derive(Clone, Debug, Serialize)]
pub struct BoardEvent {
    pub board: String,
    #[serde(flatten)]
    pub event: Event,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grid: Option<[String; 8]>,
}

/// A board as a live sink sees it: what it has published (to catch up or send again), its state
/// and game to show, and the operator actions it takes. The daemon's boards are ones.
pub trait LiveBoard: Send + Sync {
    fn id(&self) -> &str;
    /// Which log the sequence numbers count in: a log begun again numbers from 1 again.
    fn epoch(&self) -> u64;
    /// The last event published (0 before the first).
    fn last_seq(&self) -> u64;
    /// The published events after `after`, in order.
    fn events_after(&self, after: u64) -> Vec<Arc<BoardEvent>>;
    /// The board as the daemon's `GET /boards/{id}` shows it, with its last `recent` events.
    fn state(&self, recent: usize) -> Value;
    /// The current game as PDN.
    fn game_pdn(&self) -> Arc<str>;
    /// Take an operator action (`{"op": ...}`, as `POST /boards/{id}/actions`); `Err` says why not.
    fn operate(&self, action: &Value) -> Result<(), String>;
}

#[derive(Clone)]
pub struct Hub {
    sender: broadcast::Sender<Arc<HubMessage>>,
    boards: Arc<RwLock<Vec<Arc<dyn LiveBoard>>>>,
}

impl Hub {
    /// `capacity`: messages a slow listener may fall behind before it must catch up.
    pub fn new(capacity: usize) -> Hub {
        Hub { sender: broadcast::channel(capacity).0, boards: Arc::default() }
    }

    /// Make a board known to the sinks (once it is open, before they start).
    pub fn register(&self, board: Arc<dyn LiveBoard>) {
        self.boards.write().unwrap_or_else(|poisoned| poisoned.into_inner()).push(board);
    }

    /// The boards registered, in the order they were.
    pub fn boards(&self) -> Vec<Arc<dyn LiveBoard>> {
        self.boards.read().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }

    pub fn publish(&self, message: HubMessage) {
        // No listener is not an error: the record is on disk already.
        let _ = self.sender.send(Arc::new(message));
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Arc<HubMessage>> {
        self.sender.subscribe()
    }
}

/// Compare a token given with the expected one in time independent of where they differ (no
/// hint to someone guessing it): operator actions come in through the daemon's API and through
/// live sinks (MQTT).
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = (a.len() != b.len()) as u8;
    for i in 0..a.len().max(b.len()) {
        diff |= a.get(i).copied().unwrap_or(0) ^ b.get(i).copied().unwrap_or(0);
    }
    diff == 0
}
