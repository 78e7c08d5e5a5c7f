//! The round's tags on every board: the hall gives each board's daemon its tags (Event, Site,
//! Date, Round, White, Black, Board: [`Round::tags_for`]) as an operator action over MQTT
//! (`{"op": "tags", "tags": {...}}`, with the hall's token), so that the daemon's own records
//! carry them. The daemon's state says which tags it holds (`game.round_tags`); the hall sends
//! again while they differ: after the arbiter saves the round, and when a daemon that was away
//! (down, or cut off from the broker) publishes its state again. A daemon that is there and
//! still does not take them (another token) is asked less and less often, and the hall says so.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use rumqttc::QoS;
use serde_json::{json, Value};
use tokio::time::Instant;

use super::api::HallState;
use super::round::Round;
use crate::mqtt::topic;

/// How often the boards' tags are compared with the round's.
const CHECK_EVERY: Duration = Duration::from_millis(500);
/// Between two sends to one board, at least (its state may still show the tags before).
const MIN_GAP: Duration = Duration::from_secs(2);
/// While a board does not show the tags, the pause before the next send doubles up to this.
const MAX_WAIT: Duration = Duration::from_secs(60);
/// States showing other tags after this many sends: the daemon does not take them.
const MISSES_TO_WARN: u32 = 3;

type Tags = Vec<(String, String)>;

/// The last send of tags to one board.
#[derive(Debug)]
struct Sent {
    tags: Tags,
    at: Instant,
    wait: Duration,
    /// The board's state count when they were sent.
    states: u64,
    /// Sends the board answered with a state that still showed other tags.
    misses: u32,
    warned: bool,
}

/// Which boards are due to be sent their tags (pure: the clock and the states are handed in).
#[derive(Debug, Default)]
pub struct TagSender {
    boards: HashMap<String, Sent>,
}

/// What to do for one board.
#[derive(Debug, PartialEq)]
pub enum Due {
    Nothing,
    Send,
    /// Send, and warn: the board is there and has not taken the tags these last times.
    SendAndWarn,
}

impl TagSender {
    /// Whether to send `wanted` to `board`, whose daemon says it holds `held` (with the count
    /// of its states so far; `None` before its first state), at `now`.
    pub fn due(&mut self, board: &str, wanted: &Tags, held: Option<(&Tags, u64)>, now: Instant) -> Due {
        let states = held.map_or(0, |(_, n)| n);
        if held.is_some_and(|(tags, _)| tags == wanted) || (held.is_none() && wanted.is_empty()) {
            self.boards.remove(board);
            return Due::Nothing;
        }
        let Some(sent) = self.boards.get_mut(board) else {
            self.boards.insert(board.to_string(), Sent { tags: wanted.clone(), at: now, wait: MIN_GAP, states, misses: 0, warned: false });
            return Due::Send;
        };
        let since = now.duration_since(sent.at);
        // The round changed: at once.
        let changed = sent.tags != *wanted;
        // The daemon published a state since the last send and still shows other tags: it was
        // away (the send was lost), or it does not take them.
        let answered = sent.states != states && since >= MIN_GAP;
        if !(changed || answered || since >= sent.wait) {
            return Due::Nothing;
        }
        if changed {
            *sent = Sent { tags: wanted.clone(), at: now, wait: MIN_GAP, states, misses: 0, warned: false };
            return Due::Send;
        }
        if answered {
            sent.misses += 1;
            if sent.misses >= MISSES_TO_WARN && since < sent.wait {
                // Alive and refusing: only as the pause allows, not at every state.
                return Due::Nothing;
            }
        }
        sent.at = now;
        sent.states = states;
        sent.wait = (sent.wait * 2).min(MAX_WAIT);
        if sent.misses >= MISSES_TO_WARN && !sent.warned {
            sent.warned = true;
            return Due::SendAndWarn;
        }
        Due::Send
    }
}

/// The action that gives a board its tags.
pub fn tags_action(tags: &Tags) -> Value {
    let tags: serde_json::Map<String, Value> = tags.iter().map(|(name, value)| (name.clone(), Value::from(value.as_str()))).collect();
    json!({"op": "tags", "tags": tags})
}

/// Give every board the round's tags until it holds them, until the hall stops.
pub async fn run(app: Arc<HallState>) {
    let mut sender = TagSender::default();
    let mut shutdown = app.shutdown.clone();
    let mut warned_no_token = false;
    loop {
        tokio::select! {
            _ = tokio::time::sleep(CHECK_EVERY) => {}
            _ = app.round_saved.notified() => {}
            _ = shutdown.wait_for(|stopping| *stopping) => return,
        }
        let round: Round = app.round.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone();
        let now = Instant::now();
        for board in app.store.board_ids() {
            let wanted = round.tags_for(&board);
            let held = app.store.round_tags(&board);
            let due = sender.due(&board, &wanted, held.as_ref().map(|(tags, n)| (tags, *n)), now);
            if due == Due::Nothing {
                continue;
            }
            let Some(token) = &app.token else {
                if !warned_no_token {
                    warned_no_token = true;
                    tracing::warn!("the round's tags are not given to the boards: the daemons take them only with their operator token (set http.token or http.token_file in hall.toml)");
                }
                continue;
            };
            if due == Due::SendAndWarn {
                tracing::warn!(board = %board, "the board's daemon has not taken the round's tags: is its operator token the hall's?");
            }
            let message = json!({"token": token, "action": tags_action(&wanted)}).to_string();
            if let Err(e) = app.client.try_publish(topic(&app.hall, &board, "actions"), QoS::AtLeastOnce, false, message) {
                tracing::warn!(board = %board, "the round's tags not sent: {e}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(round: &str) -> Tags {
        vec![("Board".into(), "1".into()), ("Round".into(), round.into())]
    }

    #[test]
    fn boards_are_sent_their_tags_until_they_hold_them() {
        let mut sender = TagSender::default();
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_millis(s);
        let (want, none) = (tags("3"), Vec::new());
        // A board whose daemon holds none: sent at once, then not before the pause.
        assert_eq!(sender.due("b", &want, Some((&none, 1)), at(0)), Due::Send);
        assert_eq!(sender.due("b", &want, Some((&none, 1)), at(1000)), Due::Nothing);
        assert_eq!(sender.due("b", &want, Some((&none, 1)), at(2000)), Due::Send, "after the pause");
        assert_eq!(sender.due("b", &want, Some((&none, 1)), at(5000)), Due::Nothing, "the pause doubled");
        // The daemon comes back: its state shows the old tags, sent again without waiting.
        assert_eq!(sender.due("b", &want, Some((&none, 2)), at(5000)), Due::Send);
        // It holds them: nothing more.
        assert_eq!(sender.due("b", &want, Some((&want, 3)), at(5500)), Due::Nothing);
        assert_eq!(sender.due("b", &want, Some((&want, 3)), at(90_000)), Due::Nothing);
        // The arbiter changes the round: at once.
        let next = tags("4");
        assert_eq!(sender.due("b", &next, Some((&want, 3)), at(90_100)), Due::Send);
        assert_eq!(sender.due("b", &next, Some((&want, 3)), at(90_200)), Due::Nothing);
        let other = tags("5");
        assert_eq!(sender.due("b", &other, Some((&want, 3)), at(90_300)), Due::Send, "changed again");
        // An empty round to a board that never said anything: nothing to give.
        assert_eq!(sender.due("c", &none, None, at(0)), Due::Nothing);
        assert_eq!(sender.due("c", &want, None, at(0)), Due::Send);
    }

    #[test]
    fn a_daemon_that_answers_without_taking_them_is_asked_less_often_and_the_hall_warns() {
        let mut sender = TagSender::default();
        let t0 = Instant::now();
        let (want, none) = (tags("3"), Vec::new());
        let mut sends = 0;
        let mut warned = 0;
        // A state every second for ten minutes, never with the tags.
        for second in 0..600u64 {
            match sender.due("b", &want, Some((&none, second)), t0 + Duration::from_secs(second)) {
                Due::Send => sends += 1,
                Due::SendAndWarn => {
                    sends += 1;
                    warned += 1
                }
                Due::Nothing => {}
            }
        }
        assert_eq!(warned, 1);
        assert!(sends < 25, "{sends} sends in ten minutes");
    }

    #[test]
    fn the_action_is_the_daemon_s_tags_op() {
        let action = tags_action(&tags("3"));
        assert_eq!(action, json!({"op": "tags", "tags": {"Board": "1", "Round": "3"}}));
        let parsed = crate::tracker::parse_input_value(action).unwrap();
        assert_eq!(parsed, crate::tracker::Input::Command(crate::tracker::Command::Tags { tags: tags("3") }));
    }
}
