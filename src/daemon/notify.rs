//! systemd notifications (`Type=notify` units): `READY=1` once the API listens and the boards
//! run, `WATCHDOG=1` while the daemon is healthy, `STOPPING=1` on shutdown, and a status line.
//! Outside systemd there is no `$NOTIFY_SOCKET` and every call does nothing.
//!
//! Written here as one datagram per call (sd_notify(3)'s protocol) rather than with the
//! `sd-notify` crate, because that crate sends on a blocking socket: a service manager that
//! reads slowly (the socket's queue is 10 datagrams by default) would then stall the async
//! runtime, and with it the API and shutdown. Here the socket is non-blocking and a message
//! that cannot be sent at once is dropped with a warning. Abstract socket names (`@...`) are
//! supported too.

use std::io;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};
use std::time::Duration;

fn send(message: &str) {
    let Some(path) = std::env::var_os("NOTIFY_SOCKET") else { return };
    if let Err(e) = send_to(&path, message) {
        tracing::warn!("systemd notification {:?} not sent: {e}", message.lines().next().unwrap_or_default());
    }
}

fn send_to(path: &std::ffi::OsStr, message: &str) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let bytes = path.as_bytes();
    let address = match bytes.strip_prefix(b"@") {
        Some(name) => SocketAddr::from_abstract_name(name)?,
        None => SocketAddr::from_pathname(path)?,
    };
    let socket = UnixDatagram::unbound()?;
    socket.set_nonblocking(true)?;
    let sent = socket.send_to_addr(message.as_bytes(), &address)?;
    if sent != message.len() {
        return Err(io::Error::new(io::ErrorKind::WriteZero, "incomplete datagram"));
    }
    Ok(())
}

pub fn ready(status: &str) {
    send(&format!("READY=1\nSTATUS={status}\n"));
}

pub fn status(status: &str) {
    send(&format!("STATUS={status}\n"));
}

pub fn stopping() {
    send("STOPPING=1\nSTATUS=stopping\n");
}

pub fn watchdog() {
    send("WATCHDOG=1\n");
}

/// How often to tell the watchdog that all is well: half its timeout (`WatchdogSec=`), as
/// systemd recommends; `None` when no watchdog is set for this process. As
/// sd_watchdog_enabled(3): `WATCHDOG_PID`, when set, must be this process.
pub fn watchdog_interval() -> Option<Duration> {
    let usec: u64 = std::env::var("WATCHDOG_USEC").ok()?.trim().parse().ok()?;
    if let Ok(pid) = std::env::var("WATCHDOG_PID") {
        if pid.trim().parse::<u32>().ok()? != std::process::id() {
            return None;
        }
    }
    (usec > 0).then(|| Duration::from_micros(usec / 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datagrams_reach_path_and_abstract_sockets_and_never_block() {
        let dir = tempfile::Builder::new().prefix("bw-notify-").tempdir().unwrap();
        let path = dir.path().join("notify.sock");
        let receiver = UnixDatagram::bind(&path).unwrap();
        send_to(path.as_os_str(), "READY=1\n").unwrap();
        let mut buffer = [0u8; 64];
        let n = receiver.recv(&mut buffer).unwrap();
        assert_eq!(&buffer[..n], b"READY=1\n");
        // Nobody reads: the queue fills and sending fails at once instead of waiting.
        let outcome: Vec<bool> = (0..2000).map(|_| send_to(path.as_os_str(), "WATCHDOG=1\n").is_ok()).collect();
        assert!(outcome.contains(&false), "a full queue is an error, not a wait");

        let name = format!("@bw-notify-test-{}", std::process::id());
        let abstract_receiver =
            UnixDatagram::bind_addr(&SocketAddr::from_abstract_name(&name.as_bytes()[1..]).unwrap()).unwrap();
        send_to(std::ffi::OsStr::new(&name), "STOPPING=1\n").unwrap();
        let n = abstract_receiver.recv(&mut buffer).unwrap();
        assert_eq!(&buffer[..n], b"STOPPING=1\n");
    }
}
