//! Helpers for the game page tests: `boardwatch play` on an ephemeral port, JSON requests.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::process::{Command, Stdio};

use serde_json::Value;

use super::daemon_common::{client, Daemon};

/// The binary under test: cargo's, or the one named by `BOARDWATCH_BIN` (a copy taken right
/// after the build where several work trees share one target folder and overwrite its binary).
pub fn binary() -> std::path::PathBuf {
    std::env::var_os("BOARDWATCH_BIN").map_or_else(|| env!("CARGO_BIN_EXE_boardwatch").into(), Into::into)
}

/// `boardwatch play --listen 127.0.0.1:0` with more arguments (`--maps DIR` ...).
pub fn start_play<S: AsRef<OsStr>>(args: &[S]) -> Daemon {
    let mut command = Command::new(binary());
    command.args(["play", "--listen", "127.0.0.1:0"]).args(args).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
    Daemon::spawn(command)
}

/// POST a body; the status and the JSON answer (`Null` when it is not JSON).
pub fn post(server: &Daemon, path: &str, body: &str) -> (u16, Value) {
    let response = client().post(server.url(path)).header("Content-Type", "application/json").body(body.to_string()).send().unwrap();
    let status = response.status().as_u16();
    (status, response.json().unwrap_or(Value::Null))
}

/// GET; the status and the JSON answer.
pub fn get(server: &Daemon, path: &str) -> (u16, Value) {
    let response = client().get(server.url(path)).send().unwrap();
    let status = response.status().as_u16();
    (status, response.json().unwrap_or(Value::Null))
}

/// A game's state once the perfect player (if any) has solved its map.
pub fn wait_until_solved(server: &Daemon, id: &str) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let (status, state) = get(server, &format!("/cops/games/{id}"));
        assert_eq!(status, 200, "{state}");
        if state["solver"]["state"] != "solving" {
            return state;
        }
        assert!(std::time::Instant::now() < deadline, "the map was never solved: {state}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Waits until the screen's camera, a recording, has ended (at most `within`), and then a
/// moment more, for the last tap's move to reach the page.
pub fn wait_until_camera_ended(server: &Daemon, within: std::time::Duration) {
    let deadline = std::time::Instant::now() + within;
    loop {
        let (_, state) = get(server, "/touch/table");
        if state["camera"]["on"] == false && state["camera"]["message"].as_str().unwrap_or("").contains("ended") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the recording never ended: {state}");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
}

/// `[row, column]` from JSON.
pub fn square(value: &Value) -> [usize; 2] {
    [value[0].as_u64().unwrap() as usize, value[1].as_u64().unwrap() as usize]
}
