//! The live side of publishing: every board's events and source status go through one broadcast
//! channel to whoever listens (SSE and WebSocket clients, the live page). Listeners that fall
//! behind lose messages from the channel, never from the record: they catch up from the board's
//! published history by sequence number.

use std::sync::Arc;

use serde::Serialize;
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

#[derive(Clone)]
pub struct Hub {
    sender: broadcast::Sender<Arc<HubMessage>>,
}

impl Hub {
    /// `capacity`: messages a slow listener may fall behind before it must catch up.
    pub fn new(capacity: usize) -> Hub {
        Hub { sender: broadcast::channel(capacity).0 }
    }

    pub fn publish(&self, message: HubMessage) {
        // No listener is not an error: the record is on disk already.
        let _ = self.sender.send(Arc::new(message));
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Arc<HubMessage>> {
        self.sender.subscribe()
    }
}
