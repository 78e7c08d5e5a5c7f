//! systemd notifications (`Type=notify` units): `READY=1` once the API listens and the boards
//! run, `WATCHDOG=1` while the daemon is healthy, `STOPPING=1` on shutdown, and a status line.
//! Through the `sd-notify` crate (a datagram to `$NOTIFY_SOCKET`, no libsystemd); outside systemd
//! there is no socket and every call does nothing.

use std::time::Duration;

use sd_notify::NotifyState;

fn send(states: &[NotifyState<'_>]) {
    // A lost notification is systemd's to notice (a start timeout, a watchdog restart); the
    // daemon itself goes on.
    if let Err(e) = sd_notify::notify(false, states) {
        tracing::warn!("systemd notification failed: {e}");
    }
}

pub fn ready(status: &str) {
    send(&[NotifyState::Ready, NotifyState::Status(status)]);
}

pub fn status(status: &str) {
    send(&[NotifyState::Status(status)]);
}

pub fn stopping() {
    send(&[NotifyState::Stopping, NotifyState::Status("stopping")]);
}

pub fn watchdog() {
    send(&[NotifyState::Watchdog]);
}

/// How often to tell the watchdog that all is well: half its timeout (`WatchdogSec=`), as
/// systemd recommends; `None` when no watchdog is set for this process. Read as
/// sd_watchdog_enabled(3) does: `WATCHDOG_PID`, when set, must be this process; unset, the
/// watchdog still applies (the sd-notify crate's helper would ignore the watchdog then).
pub fn watchdog_interval() -> Option<Duration> {
    let usec: u64 = std::env::var("WATCHDOG_USEC").ok()?.trim().parse().ok()?;
    if let Ok(pid) = std::env::var("WATCHDOG_PID") {
        if pid.trim().parse::<u32>().ok()? != std::process::id() {
            return None;
        }
    }
    (usec > 0).then(|| Duration::from_micros(usec / 2))
}
