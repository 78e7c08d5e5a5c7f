//! The daemon's side of the hall: every board's events (QoS 1, in sequence order), its state and
//! its current game's PDN (retained) go to the broker.
//!
//! A sink of the live hub like any other: the hub says when a board has news, and its boards
//! ([`LiveBoard`]) give their published events (from memory, or their log when the broker is
//! far behind), state and game, never from a queue of the publisher's own: what the broker has
//! not acknowledged is simply read again.
//! Per board the publisher knows the last event sent and the last one acknowledged without a
//! gap; the acknowledged ones are saved in `mqtt-acked.json` (state folder) every half second,
//! and a new connection (after an outage or a restart) sends again from there. The consumer
//! (`boardwatch hall`) drops events it has, by board and sequence number.
//!
//! Each connection is a fresh client: rumqttc would otherwise resend its own unacknowledged
//! publishes beside ours. Within one connection publishes leave in the order they were handed
//! over, so the n-th `Outgoing::Publish` belongs to the n-th publish handed over (its packet id
//! is then matched with the broker's `PubAck`).

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rumqttc::{AsyncClient, Event, Incoming, Outgoing, QoS};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::{mpsc, watch};

use super::{parse_topic, topic, MqttConfig};
use crate::publish::atomic::write_atomically;
use crate::publish::hub::{constant_time_eq, BoardEvent, Hub, HubMessage, LiveBoard};

/// Publishes handed to the client and not yet acknowledged, at most (below rumqttc's 100
/// in-flight packet ids, so that ids never collide).
const WINDOW: usize = 80;
/// How often the acknowledged positions are saved and changed states and PDNs published.
const TICK: Duration = Duration::from_millis(250);
/// A board's state and PDN are published at most this often (they are whole documents; the
/// events carry every change at once).
const STATE_EVERY: Duration = Duration::from_secs(1);
/// Pause before connecting again after a failure (doubling up to `RETRY_MAX`).
const RETRY_FIRST: Duration = Duration::from_millis(250);
const RETRY_MAX: Duration = Duration::from_secs(5);

/// On shutdown, how long events not yet acknowledged may still be sent.
const DRAIN: Duration = Duration::from_secs(5);

/// File (in the state folder) of the last event per board the broker acknowledged.
pub const ACKED_FILE: &str = "mqtt-acked.json";

/// What a publish handed to the client was.
#[derive(Clone, Copy, Debug)]
enum Sent {
    Event { board: usize, seq: u64 },
    Other,
}

/// One board as the publisher follows it.
struct Link {
    board: Arc<dyn LiveBoard>,
    /// The broker acknowledged every event up to here (saved).
    acked: u64,
    /// Acknowledged events above `acked` (a gap below them).
    acked_above: BTreeSet<u64>,
    /// Events up to here were handed to the client on this connection.
    sent: u64,
    /// The state or PDN changed since they were last published.
    dirty: bool,
    last_pdn: Option<Arc<str>>,
    last_state: Option<tokio::time::Instant>,
    /// Events read from the board and not handed over yet (after a restart they may come from
    /// a long log: read once, not once per window).
    backlog: VecDeque<Arc<BoardEvent>>,
}

impl Link {
    fn acknowledge(&mut self, seq: u64) {
        if seq <= self.acked {
            return;
        }
        self.acked_above.insert(seq);
        while self.acked_above.remove(&(self.acked + 1)) {
            self.acked += 1;
        }
    }
}

/// Per-connection bookkeeping of publishes in flight.
#[derive(Default)]
struct InFlight {
    /// Handed to the client, packet id not known yet (in order).
    handed: VecDeque<Sent>,
    /// By packet id.
    by_id: HashMap<u16, Sent>,
}

impl InFlight {
    fn len(&self) -> usize {
        self.handed.len() + self.by_id.len()
    }
}

/// A board's entry in `mqtt-acked.json`: the broker acknowledged its events up to `acked` of
/// the log of `epoch` (events of another log, begun again after a wiped state folder, were not).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
#[serde(untagged)]
enum SavedAck {
    Log {
        epoch: u64,
        acked: u64,
    },
    /// Written before logs had epochs: taken for the current log.
    Unnamed(u64),
}

impl SavedAck {
    /// How far the broker has a board's current log (of `epoch`, with events up to `last_seq`).
    fn acked_of(self, epoch: u64, last_seq: u64) -> u64 {
        match self {
            SavedAck::Log {
                epoch: saved,
                acked,
            } if saved == epoch => acked,
            SavedAck::Log { .. } => 0,
            SavedAck::Unnamed(acked) => acked.min(last_seq),
        }
    }
}

/// An event as the daemon publishes it: as its API shows it, with the epoch of its log (the
/// hall's copy keeps events of one log; a later epoch begins a new copy).
#[derive(Serialize)]
struct PublishedEvent<'a> {
    #[serde(flatten)]
    event: &'a BoardEvent,
    epoch: u64,
}

fn read_acked(path: &Path) -> HashMap<String, SavedAck> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|e| {
            tracing::warn!("{}: {e}; publishing every event again", path.display());
            HashMap::new()
        }),
        Err(_) => HashMap::new(),
    }
}

/// The hall's `resend` and `actions` messages to this daemon.
struct Requests {
    token: Option<String>,
}

/// Publish the hub's boards to the broker until `shutdown`.
pub async fn run(
    config: MqttConfig,
    hub: Hub,
    state_dir: PathBuf,
    token: Option<String>,
    mut shutdown: watch::Receiver<bool>,
) {
    let acked_path = state_dir.join(ACKED_FILE);
    let saved = read_acked(&acked_path);
    let mut links: Vec<Link> = hub
        .boards()
        .into_iter()
        .map(|board| {
            let acked = saved
                .get(board.id())
                .map_or(0, |s| s.acked_of(board.epoch(), board.last_seq()));
            Link {
                board,
                acked,
                acked_above: BTreeSet::new(),
                sent: acked,
                dirty: true,
                last_pdn: None,
                last_state: None,
                backlog: VecDeque::new(),
            }
        })
        .collect();
    let default_id = format!(
        "boardwatch-{}-{}",
        config.hall,
        links.first().map_or("none", |l| l.board.id())
    );
    let requests = Requests { token };
    let mut saved_acked = saved;
    let mut pause = RETRY_FIRST;
    loop {
        let outcome = connection(
            &config,
            &default_id,
            &mut links,
            &hub,
            &acked_path,
            &mut saved_acked,
            &requests,
            &mut shutdown,
        )
        .await;
        save_acked(&links, &acked_path, &mut saved_acked);
        match outcome {
            Outcome::Stopped => return,
            Outcome::Lost { was_connected } => {
                if was_connected {
                    pause = RETRY_FIRST;
                }
                tokio::select! {
                    _ = tokio::time::sleep(pause) => {}
                    _ = stopped(&mut shutdown) => return,
                }
                pause = (pause * 2).min(RETRY_MAX);
            }
        }
    }
}

enum Outcome {
    Stopped,
    Lost { was_connected: bool },
}

fn save_acked(links: &[Link], path: &Path, saved: &mut HashMap<String, SavedAck>) {
    let now: HashMap<String, SavedAck> = links
        .iter()
        .map(|l| {
            let saved = SavedAck::Log {
                epoch: l.board.epoch(),
                acked: l.acked,
            };
            (l.board.id().to_string(), saved)
        })
        .collect();
    if now != *saved {
        match serde_json::to_vec(&now)
            .map_err(std::io::Error::other)
            .and_then(|bytes| write_atomically(path, &bytes))
        {
            Ok(()) => *saved = now,
            Err(e) => tracing::warn!("{}: {e}", path.display()),
        }
    }
}

#[allow(clippy::too_many_arguments)]
async fn connection(
    config: &MqttConfig,
    default_id: &str,
    links: &mut [Link],
    hub: &Hub,
    acked_path: &Path,
    saved_acked: &mut HashMap<String, SavedAck>,
    requests: &Requests,
    shutdown: &mut watch::Receiver<bool>,
) -> Outcome {
    let (client, mut eventloop) = AsyncClient::new(config.options(default_id), 2 * WINDOW);
    // The event loop runs on its own task; its events come here in order.
    let (events_in, mut events) = mpsc::unbounded_channel();
    let poller = tokio::spawn(async move {
        loop {
            let event = eventloop.poll().await;
            let failed = event.is_err();
            if events_in.send(event).is_err() || failed {
                return;
            }
        }
    });
    let _stop_poller = AbortOnDrop(poller);
    for link in links.iter_mut() {
        link.sent = link.acked;
        link.acked_above.clear();
        link.dirty = true;
        link.last_pdn = None;
        link.last_state = None;
        link.backlog.clear();
    }
    let mut hub_messages = hub.subscribe();
    let mut tick = tokio::time::interval(TICK);
    let mut in_flight = InFlight::default();
    let mut connected = false;
    // Once the daemon stops: until when the last events may still be sent and acknowledged.
    let mut draining: Option<tokio::time::Instant> = None;
    loop {
        if connected {
            send_events(&client, &config.hall, links, &mut in_flight);
        }
        if draining.is_some() && (!connected || links.iter().all(|l| l.acked >= l.board.last_seq()))
        {
            let _ = client.try_disconnect();
            return Outcome::Stopped;
        }
        tokio::select! {
            event = events.recv() => match event {
                Some(Ok(Event::Incoming(Incoming::ConnAck(_)))) => {
                    tracing::info!("MQTT: connected to {}:{} (hall {})", config.host, config.port, config.hall);
                    connected = true;
                    for channel in ["resend", "actions"] {
                        let _ = client.try_subscribe(topic(&config.hall, "+", channel), QoS::AtLeastOnce);
                    }
                }
                Some(Ok(Event::Outgoing(Outgoing::Publish(id)))) => {
                    if let Some(sent) = in_flight.handed.pop_front() {
                        in_flight.by_id.insert(id, sent);
                    }
                }
                Some(Ok(Event::Incoming(Incoming::PubAck(ack)))) => {
                    if let Some(Sent::Event { board, seq }) = in_flight.by_id.remove(&ack.pkid) {
                        links[board].acknowledge(seq);
                    }
                }
                Some(Ok(Event::Incoming(Incoming::Publish(message)))) => {
                    handle_request(&config.hall, links, requests, &message.topic, &message.payload).await;
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    tracing::warn!("MQTT: {}:{}: {e}; connecting again", config.host, config.port);
                    return Outcome::Lost { was_connected: connected };
                }
                None => return Outcome::Lost { was_connected: connected },
            },
            // New events or a changed source: wake up to send them (the boards hold them).
            message = hub_messages.recv() => {
                if let Ok(message) = message {
                    if let HubMessage::Status { board, .. } = message.as_ref() {
                        if let Some(link) = links.iter_mut().find(|l| l.board.id() == board) {
                            link.dirty = true;
                        }
                    }
                }
            }
            _ = tick.tick() => {
                save_acked(links, acked_path, saved_acked);
                if connected {
                    send_states(&client, &config.hall, links, &mut in_flight);
                }
            }
            _ = stopped(shutdown), if draining.is_none() => {
                draining = Some(tokio::time::Instant::now() + DRAIN);
            }
            _ = tokio::time::sleep_until(draining.unwrap_or_else(tokio::time::Instant::now)), if draining.is_some() => {
                tracing::warn!("MQTT: stopping with events not acknowledged by the broker; they are sent at the next start");
                return Outcome::Stopped;
            }
        }
    }
}

/// Until the daemon stops (no borrow of the channel's value is held: the future stays `Send`).
async fn stopped(shutdown: &mut watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|stopping| *stopping).await;
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Hand the boards' new events to the client, as the window allows.
fn send_events(client: &AsyncClient, hall: &str, links: &mut [Link], in_flight: &mut InFlight) {
    for (index, link) in links.iter_mut().enumerate() {
        if in_flight.len() >= WINDOW {
            return;
        }
        if link.backlog.is_empty() {
            if link.board.last_seq() <= link.sent {
                continue;
            }
            link.backlog = link.board.events_after(link.sent).into();
        }
        while in_flight.len() < WINDOW {
            let Some(event) = link.backlog.front() else {
                break;
            };
            let published = PublishedEvent {
                event: event.as_ref(),
                epoch: link.board.epoch(),
            };
            let Ok(payload) = serde_json::to_vec(&published) else {
                link.backlog.pop_front();
                continue;
            };
            if client
                .try_publish(
                    topic(hall, link.board.id(), "events"),
                    QoS::AtLeastOnce,
                    false,
                    payload,
                )
                .is_err()
            {
                return;
            }
            in_flight.handed.push_back(Sent::Event {
                board: index,
                seq: event.event.seq,
            });
            link.sent = event.event.seq;
            link.dirty = true;
            link.backlog.pop_front();
        }
    }
}

/// Publish (retained) the state and the PDN of the boards that changed.
fn send_states(client: &AsyncClient, hall: &str, links: &mut [Link], in_flight: &mut InFlight) {
    let now = tokio::time::Instant::now();
    for link in links.iter_mut().filter(|l| {
        l.dirty
            && l.last_state
                .is_none_or(|t| now.duration_since(t) >= STATE_EVERY)
    }) {
        if in_flight.len() + 2 > WINDOW {
            return;
        }
        let state = link.board.state(10);
        let Ok(state) = serde_json::to_vec(&state) else {
            continue;
        };
        if client
            .try_publish(
                topic(hall, link.board.id(), "state"),
                QoS::AtLeastOnce,
                true,
                state,
            )
            .is_err()
        {
            return;
        }
        in_flight.handed.push_back(Sent::Other);
        let pdn = link.board.game_pdn();
        if link.last_pdn.as_ref() != Some(&pdn) {
            if client
                .try_publish(
                    topic(hall, link.board.id(), "pdn"),
                    QoS::AtLeastOnce,
                    true,
                    pdn.as_bytes().to_vec(),
                )
                .is_err()
            {
                return;
            }
            in_flight.handed.push_back(Sent::Other);
            link.last_pdn = Some(pdn);
        }
        link.dirty = false;
        link.last_state = Some(now);
    }
}

/// `resend {"after": N}`: send the board's events after N again. `actions {"token", "action"}`:
/// an operator action from the hall, taken only with this daemon's operator token.
async fn handle_request(
    hall: &str,
    links: &mut [Link],
    requests: &Requests,
    topic: &str,
    payload: &[u8],
) {
    let Some((board_id, channel)) = parse_topic(hall, topic) else {
        return;
    };
    let Some(link) = links.iter_mut().find(|l| l.board.id() == board_id) else {
        return;
    };
    let Ok(message) = serde_json::from_slice::<Value>(payload) else {
        tracing::warn!(board = board_id, "MQTT {channel}: not JSON");
        return;
    };
    match channel {
        "resend" => {
            if let Some(after) = message.get("after").and_then(Value::as_u64) {
                if after < link.sent {
                    link.sent = after;
                    link.backlog.clear();
                }
            }
        }
        "actions" => {
            let authorised = match (
                &requests.token,
                message.get("token").and_then(Value::as_str),
            ) {
                (Some(expected), Some(given)) => {
                    constant_time_eq(expected.as_bytes(), given.as_bytes())
                }
                _ => false,
            };
            if !authorised {
                tracing::warn!(
                    board = board_id,
                    "MQTT action refused: no or wrong operator token"
                );
                return;
            }
            let Some(action) = message.get("action").cloned() else {
                return;
            };
            let board = link.board.clone();
            let outcome = tokio::task::spawn_blocking(move || board.operate(&action)).await;
            match outcome {
                Ok(Ok(_)) => tracing::info!(board = board_id, "operator action from the hall"),
                Ok(Err(e)) => tracing::warn!(
                    board = board_id,
                    "operator action from the hall refused: {e}"
                ),
                Err(e) => tracing::warn!(
                    board = board_id,
                    "operator action from the hall failed: {e}"
                ),
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the broker acknowledged counts for the log it was saved for: a board folder begun
    /// again (same name, later epoch) is published from its first event.
    #[test]
    fn acknowledged_events_count_for_their_own_log() {
        let saved: HashMap<String, SavedAck> =
            serde_json::from_str(r#"{"a": {"epoch": 100, "acked": 40}, "b": 7}"#).unwrap();
        assert_eq!(saved["a"].acked_of(100, 50), 40);
        assert_eq!(saved["a"].acked_of(200, 3), 0, "a new log");
        assert_eq!(saved["b"], SavedAck::Unnamed(7), "the file before epochs");
        assert_eq!(saved["b"].acked_of(100, 50), 7);
        assert_eq!(saved["b"].acked_of(100, 2), 2);
        let written = serde_json::to_value(SavedAck::Log { epoch: 1, acked: 2 }).unwrap();
        assert_eq!(written, serde_json::json!({"epoch": 1, "acked": 2}));
    }
}
