//! A tournament hall over MQTT: every daemon publishes its boards to one broker, and
//! `boardwatch hall` follows them all.
//!
//! The topic tree, below `boardwatch/{hall}/{board}/`:
//!
//! | topic | from | QoS, retained | payload |
//! |---|---|---|---|
//! | `events` | daemon | 1 | one event as the daemon's API shows it: `board`, `seq`, `line`, ..., and `epoch` |
//! | `state` | daemon | 1, retained | the board as `GET /boards/{id}` shows it (`last_seq`, `game`, `source`) |
//! | `pdn` | daemon | 1, retained | the current game as PDN (`game.pdn`) |
//! | `resend` | hall | 1 | `{"after": N}`: publish the board's events after N again |
//! | `actions` | hall | 1 | `{"token": ..., "action": {"op": ...}}`: an operator action (also `tags`: the round's tags for the board) |
//!
//! The daemon's synced log stays the source of truth: the daemon remembers, per board, the last
//! event the broker acknowledged (`mqtt-acked.json` in its state folder) and after an outage
//! or a restart publishes again from there; the hall keeps events in sequence order, drops the
//! ones it has and asks for missing ones (`resend`), so every event arrives exactly once in
//! effect, even when a broker without persistence loses what it had acknowledged.
//!
//! Sequence numbers count within one log of the board's; `epoch` (in events and states) names the
//! log by when it began, so that a daemon whose state folder was wiped, numbering from 1 again,
//! is seen by the hall as a new log and not as copies of events it has.
//!
//! - [`publisher`]: the daemon's side; [`config`]: the `[mqtt]` section both sides read.

pub mod config;
pub mod publisher;

pub use config::MqttConfig;

/// The topic of one of a board's channels (`events`, `state`, `pdn`, `resend`, `actions`).
pub fn topic(hall: &str, board: &str, channel: &str) -> String {
    format!("boardwatch/{hall}/{board}/{channel}")
}

/// The board and channel of a topic of `hall`, if it is one.
pub fn parse_topic<'a>(hall: &str, topic: &'a str) -> Option<(&'a str, &'a str)> {
    let rest = topic
        .strip_prefix("boardwatch/")?
        .strip_prefix(hall)?
        .strip_prefix('/')?;
    let (board, channel) = rest.split_once('/')?;
    (!board.is_empty() && !channel.contains('/')).then_some((board, channel))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topics_read_back_as_written() {
        let t = topic("open", "table1", "events");
        assert_eq!(t, "boardwatch/open/table1/events");
        assert_eq!(parse_topic("open", &t), Some(("table1", "events")));
        assert_eq!(parse_topic("other", &t), None);
        assert_eq!(parse_topic("open", "boardwatch/open/table1"), None);
        assert_eq!(parse_topic("open", "boardwatch/open/t/a/b"), None);
    }

    /// The publisher is a sink of the live hub: it knows the hub's boards, not the daemon's.
    #[test]
    fn mqtt_does_not_reach_into_the_daemon() {
        let daemon = concat!("crate::", "daemon");
        for (file, text) in [("mod.rs", include_str!("mod.rs")), ("config.rs", include_str!("config.rs")), ("publisher.rs", include_str!("publisher.rs"))] {
            assert!(!text.contains(daemon), "src/mqtt/{file} uses the daemon");
        }
    }
}
