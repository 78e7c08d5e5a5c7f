//! `boardwatch run` through its HTTP API: a game followed live over SSE and WebSocket, operator
//! actions and their token, bad configurations and sources, shutdown and systemd notifications.
//! Everything on 127.0.0.1 with ephemeral ports.

mod daemon_common;

use std::os::unix::net::UnixDatagram;
use std::time::Duration;

use daemon_common::{moves_of, write_sample_game, temp_dir, write_config, Daemon, SseClient, TOKEN};
use serde_json::Value;

/// Game 2 of the sample through an observation source; a second board whose camera is missing.
/// The folder (removed when the returned `TempDir` is dropped), the configuration and the moves.
fn game_setup(name: &str, pace_ms: u32, follow: bool) -> (tempfile::TempDir, std::path::PathBuf, Vec<String>) {
    let tmp = temp_dir(name);
    let dir = tmp.path();
    let moves = write_sample_game(&dir, 1);
    let config = write_config(
        &dir,
        &format!(
            r#"
[[boards]]
id = "table1"
name = "Table 1"
variant = "english"
source = {{ kind = "observations", path = "game.jsonl", pace_ms = {pace_ms}, follow = {follow} }}
[boards.tags]
Event = "Daemon test"
White = "Ann"
Black = "Bob"
[[boards]]
id = "table2"
variant = "english"
source = {{ kind = "camera", device = "/dev/video-missing-7" }}
"#
        ),
    );
    (tmp, config, moves)
}

#[test]
fn a_game_appears_in_order_over_sse_websocket_and_the_api() {
    let (_tmp, config, expected) = game_setup("game", 5, false);
    let daemon = Daemon::start(&config);
    let sse = SseClient::connect(&daemon.url("/boards/table1/events/stream"));
    let all = SseClient::connect(&daemon.url("/events/stream"));
    let ws_url = daemon.url("/boards/table1/events/ws").replace("http://", "ws://");
    let (mut socket, _) = tungstenite::connect(ws_url.as_str()).expect("WebSocket connects");

    let moves_seen = std::cell::Cell::new(0);
    let all_moves = |e: &Value| {
        moves_seen.set(moves_seen.get() + usize::from(e["kind"] == "move"));
        moves_seen.get() == expected.len()
    };
    let seen = sse.collect_until(Duration::from_secs(30), all_moves);
    let events: Vec<Value> = seen.iter().map(|(_, e)| e.clone()).collect();
    assert_eq!(moves_of(&events), expected, "every move over SSE, in order, once");
    assert_eq!(events[0]["line"], "1: Init Ready", "a new stream starts at the first event");
    for (id, event) in &seen {
        assert_eq!(id.as_deref(), Some(event["seq"].to_string().as_str()), "SSE ids are sequence numbers");
        assert_eq!(event["board"], "table1");
    }
    let seqs: Vec<u64> = events.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1), "no gaps, no repeats: {seqs:?}");
    let errors: Vec<&Value> = events.iter().filter(|e| e["kind"] == "error").collect();
    assert!(errors.is_empty(), "{errors:?}");

    // The same over WebSocket.
    let mut ws_events = Vec::new();
    while moves_of(&ws_events).len() < expected.len() {
        if let tungstenite::Message::Text(text) = socket.read().expect("WebSocket message") {
            ws_events.push(serde_json::from_str::<Value>(&text).unwrap());
        }
    }
    assert_eq!(moves_of(&ws_events), expected);

    // The all-boards stream has the moves (it started after the first events) and status changes.
    let last_seq = events.last().unwrap()["seq"].clone();
    let everything = all.collect_until(Duration::from_secs(10), |e| e["board"] == "table1" && e["seq"] == last_seq);
    let from_all: Vec<Value> = everything.iter().map(|(_, e)| e.clone()).filter(|e| e["board"] == "table1").collect();
    assert!(expected.ends_with(&moves_of(&from_all)), "{:?}", moves_of(&from_all));

    // The state, the PDN over HTTP and on disk.
    let state = daemon.wait_for_board("table1", "the source ending", |s| s["source"]["state"] == "ended");
    let recorded: Vec<String> = serde_json::from_value(state["game"]["moves"].clone()).unwrap();
    assert_eq!(recorded, expected);
    assert_eq!(state["name"], "Table 1");
    assert_eq!(state["variant"], "english");
    assert_eq!(state["source"]["frames"].as_u64().unwrap() as usize, 1 + 2 * expected.len());
    assert!(state["game"]["fen"].as_str().unwrap().contains(':'));
    assert_eq!(state["game"]["grid"].as_array().unwrap().len(), 8);
    assert_eq!(state["last_events"].as_array().unwrap().len(), 30, "the last 30 events by default");
    let pdn = daemon.get_text("/boards/table1/game.pdn");
    assert!(pdn.starts_with("[Event \"Daemon test\"]\n"), "{pdn}");
    assert!(pdn.contains("[White \"Ann\"]\n[Black \"Bob\"]\n") && pdn.contains("[GameType \"21\"]"), "{pdn}");
    assert_eq!(daemon_common::pdn_moves(&pdn), expected, "the live PDN is the game");
    let on_disk = std::fs::read_to_string(config.parent().unwrap().join("state/table1/game.pdn")).unwrap();
    assert_eq!(on_disk, pdn);
    let history = daemon.get_json("/boards/table1/events?after=1");
    assert_eq!(moves_of(history.as_array().unwrap()), expected);
    let jpeg = daemon_common::client().get(daemon.url("/boards/table1/frame.jpg")).send().unwrap();
    assert_eq!(jpeg.headers()["content-type"], "image/jpeg");
    assert!(jpeg.bytes().unwrap().starts_with(&[0xff, 0xd8]));

    // The board whose camera is missing says why and is retried; the game above went on.
    let other = daemon.get_json("/boards/table2");
    assert!(matches!(other["source"]["state"].as_str(), Some("retrying" | "starting")), "{other:#}");
    assert!(other["source"]["failures"].as_u64().unwrap() >= 1, "{other:#}");
    assert!(other["source"]["error"].as_str().is_some_and(|e| !e.is_empty()), "{other:#}");
    assert_eq!(other["game"]["moves"], serde_json::json!([]));
    let page = daemon.get_text("/");
    assert!(page.contains("<title>boardwatch</title>"));
}

#[test]
fn operator_actions_need_the_right_token_and_say_what_is_wrong() {
    let (_tmp, config, expected) = game_setup("actions", 0, false);
    let daemon = Daemon::start(&config);
    daemon.wait_for_board("table1", "the game", |s| s["game"]["moves"].as_array().unwrap().len() == expected.len());

    let (status, body) = daemon.act("table1", None, r#"{"op": "undo"}"#);
    assert_eq!(status, 401);
    assert!(body["error"].as_str().unwrap().contains("missing bearer token"), "{body}");
    let (status, body) = daemon.act("table1", Some("guess"), r#"{"op": "undo"}"#);
    assert_eq!((status, body["error"].as_str().unwrap()), (401, "wrong token"));
    let response = daemon_common::client()
        .post(daemon.url("/boards/table1/actions"))
        .header("Authorization", "Basic dXNlcjpwdw==")
        .body("{}")
        .send()
        .unwrap();
    assert_eq!(response.status().as_u16(), 401);
    assert_eq!(response.headers()["www-authenticate"], "Bearer realm=\"boardwatch\"");

    let token = Some(TOKEN);
    let (status, body) = daemon.act("table1", token, r#"{"op": "undo"}"#);
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["events"][0]["kind"], "back");
    let state = daemon.get_json("/boards/table1");
    assert_eq!(state["game"]["moves"].as_array().unwrap().len(), expected.len() - 1, "one move undone");

    let (status, body) = daemon.act("table1", token, r#"{"op": "confirm"}"#);
    assert_eq!((status, body["error"].as_str().unwrap()), (409, "no unclear board is waiting for a decision"));
    let (status, body) = daemon.act("table1", token, r#"{"op": "castle"}"#);
    assert_eq!(status, 400);
    assert!(body["error"].as_str().unwrap().starts_with("unknown op \"castle\" (expected new_game,"), "{body}");
    let (status, body) = daemon.act("table1", token, "op=draw");
    assert_eq!(status, 400);
    assert!(body["error"].as_str().unwrap().contains("not JSON"), "{body}");
    let (status, body) = daemon.act("table1", token, r#"{"op": "new_game", "fen": "X:nonsense"}"#);
    assert_eq!(status, 400);
    assert!(body["error"].as_str().unwrap().starts_with("fen: "), "{body}");
    let (status, body) = daemon.act("nowhere", token, r#"{"op": "draw"}"#);
    assert_eq!(status, 404);
    assert!(body["error"].as_str().unwrap().contains("no board \"nowhere\""), "{body}");

    let (status, body) = daemon.act("table1", token, r#"{"op": "result", "result": "0-1"}"#);
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["events"][0]["result"], "0-1");
    assert!(daemon.get_text("/boards/table1/game.pdn").contains("[Result \"0-1\"]"));
    let (status, body) = daemon.act("table1", token, r#"{"op": "new_game"}"#);
    assert_eq!(status, 200, "{body}");
    let state = daemon.get_json("/boards/table1");
    assert_eq!(state["game"]["moves"], serde_json::json!([]));
    assert_eq!(state["game"]["games"], 2);
    assert_eq!(daemon.get_text("/boards/table1/games.pdn").matches("[Event ").count(), 1, "the new game has no moves yet");
    let (status, body) = daemon.act("table1", token, r#"{"op": "new_game", "fen": "B:W18:B14"}"#);
    assert_eq!(status, 200, "{body}");
    let kinds: Vec<&str> = body["events"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["cleared", "init"]);
    assert!(daemon.get_text("/boards/table1/game.pdn").contains("[FEN \"B:W18:B14\"]"));
    for op in [r#"{"op": "resign", "player": 1}"#, r#"{"op": "draw"}"#] {
        let (status, body) = daemon.act("table1", token, op);
        assert_eq!(status, 200, "{op}: {body}");
    }
}

#[test]
fn without_a_configured_token_operator_actions_are_off() {
    let tmp = temp_dir("no-token");
    let dir = tmp.path();
    std::fs::write(dir.join("game.jsonl"), "").unwrap();
    let config = dir.join("boardwatch.toml");
    std::fs::write(
        &config,
        "state_dir = \"state\"\n[[boards]]\nid = \"t\"\nsource = { kind = \"observations\", path = \"game.jsonl\" }\n",
    )
    .unwrap();
    let daemon = Daemon::start(&config);
    let (status, body) = daemon.act("t", Some("anything"), r#"{"op": "draw"}"#);
    assert_eq!(status, 403);
    assert!(body["error"].as_str().unwrap().contains("set http.token"), "{body}");
}

#[test]
fn a_bad_configuration_is_refused_naming_the_key() {
    let tmp = temp_dir("bad-config");
    let dir = tmp.path();
    let config = write_config(
        &dir,
        "[[boards]]\nid = \"a\"\nvariant = \"chess\"\nsource = { kind = \"observations\", path = \"x\" }\n\
         [[boards]]\nid = \"b\"\nsource = { kind = \"video\", url = \"rtsp://x\" }\n",
    );
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_boardwatch"))
        .args(["run", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("boards[0].variant: unknown variant \"chess\" (expected one of pool,"), "{stderr}");
    assert!(stderr.contains("boards[1].source.url: not used by a video source"), "{stderr}");
    assert!(stderr.contains("boards[1].source.path: missing"), "{stderr}");
    assert!(stderr.contains(&config.display().to_string()), "the file is named: {stderr}");

    let output = std::process::Command::new(env!("CARGO_BIN_EXE_boardwatch"))
        .args(["run", "--config", "/nonexistent/boardwatch.toml"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("/nonexistent/boardwatch.toml"), "{stderr}");

    let good = write_config(&dir, "[[boards]]\nid = \"a\"\nsource = { kind = \"camera\", device = 0 }\n");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_boardwatch"))
        .args(["run", "--check", "--config"])
        .arg(&good)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stdout).contains("board a (a): pool, camera 0"));
}

#[test]
fn a_missing_source_file_and_a_corrupt_log_are_reported_and_the_other_boards_go_on() {
    let tmp = temp_dir("bad-sources");
    let dir = tmp.path();
    let expected = write_sample_game(&dir, 0);
    // A log damaged in the middle (not a torn last line, which is normal after a crash).
    std::fs::create_dir_all(dir.join("state/broken")).unwrap();
    std::fs::write(dir.join("state/broken/events.jsonl"), "{\"at\":1}\nnot json\n{}\n").unwrap();
    let config = write_config(
        &dir,
        r#"
[[boards]]
id = "good"
variant = "english"
source = { kind = "observations", path = "game.jsonl", pace_ms = 5 }
[[boards]]
id = "missing"
variant = "english"
source = { kind = "observations", path = "not-there.jsonl" }
[[boards]]
id = "broken"
source = { kind = "observations", path = "game.jsonl" }
"#,
    );
    let daemon = Daemon::start(&config);
    let missing = daemon.wait_for_board("missing", "a retry", |s| s["source"]["failures"].as_u64() >= Some(2));
    let error = missing["source"]["error"].as_str().unwrap();
    assert!(error.contains("not-there.jsonl") && error.contains("No such file"), "{error}");
    let broken = daemon.get_json("/boards/broken");
    assert_eq!(broken["recording"], "off");
    let error = broken["error"].as_str().unwrap();
    assert!(error.contains("broken/events.jsonl, line 1: not a log record"), "{error}");
    let (status, body) = daemon.act("broken", Some(TOKEN), r#"{"op": "draw"}"#);
    assert_eq!(status, 503, "{body}");
    assert_eq!(
        std::fs::read_to_string(dir.join("state/broken/events.jsonl")).unwrap(),
        "{\"at\":1}\nnot json\n{}\n",
        "a damaged log is left as it is for a person to look at"
    );
    let good = daemon.wait_for_board("good", "the game", |s| s["source"]["state"] == "ended");
    let recorded: Vec<String> = serde_json::from_value(good["game"]["moves"].clone()).unwrap();
    assert_eq!(recorded, expected);

    // The missing file appears: the retry picks it up.
    std::fs::copy(dir.join("game.jsonl"), dir.join("not-there.jsonl")).unwrap();
    let found = daemon.wait_for_board("missing", "the file found", |s| s["source"]["state"] == "ended");
    assert_eq!(found["game"]["moves"], good["game"]["moves"]);
    let health = daemon.get_json("/health");
    assert_eq!(health["status"], "ok");
}

#[test]
fn sigterm_stops_cleanly_and_systemd_hears_ready_watchdog_and_stopping() {
    let (_tmp, config, expected) = game_setup("notify", 0, true);
    let dir = config.parent().unwrap().to_path_buf();
    let socket_path = dir.join("notify.sock");
    let socket = UnixDatagram::bind(&socket_path).unwrap();
    // Read as systemd does, all the time.
    let (heard_tx, heard) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        let mut buffer = [0u8; 512];
        while let Ok(n) = socket.recv(&mut buffer) {
            if heard_tx.send(String::from_utf8_lossy(&buffer[..n]).into_owned()).is_err() {
                return;
            }
        }
    });
    let mut daemon = Daemon::start_with(&config, |command| {
        command.env("NOTIFY_SOCKET", &socket_path).env("WATCHDOG_USEC", "200000");
    });
    let wait_for = |what: &str| loop {
        let message = heard.recv_timeout(Duration::from_secs(10)).unwrap_or_else(|_| panic!("no {what}"));
        if message.contains(what) {
            return message;
        }
    };
    assert!(wait_for("READY=1").contains("STATUS=2 boards, API on 127.0.0.1:"));
    wait_for("WATCHDOG=1");
    daemon.wait_for_board("table1", "the game", |s| s["game"]["moves"].as_array().unwrap().len() == expected.len());
    let sse = SseClient::connect(&daemon.url("/boards/table1/events/stream"));
    let status = daemon.terminate();
    assert!(status.success(), "exit status {status}: {}", daemon.log.lock().unwrap());
    wait_for("STOPPING=1");
    // The open event stream was ended by the shutdown (not left to time out), after what it had
    // sent in order; a client would reconnect with Last-Event-ID for the rest.
    let waiting = std::time::Instant::now();
    let events = sse.collect_until(Duration::from_secs(5), |_| false);
    assert!(waiting.elapsed() < Duration::from_secs(4), "the stream was not closed");
    let streamed = moves_of(&events.into_iter().map(|(_, e)| e).collect::<Vec<_>>());
    assert!(expected.starts_with(&streamed), "{streamed:?}");
    let log = daemon.log.lock().unwrap().clone();
    assert!(log.contains("SIGTERM: shutting down") && log.contains("stopped"), "{log}");
    assert!(!log.contains("did not close in time") && !log.contains("did not stop in time"), "{log}");
    let pdn = std::fs::read_to_string(dir.join("state/table1/game.pdn")).unwrap();
    assert_eq!(daemon_common::pdn_moves(&pdn), expected);
}

#[test]
fn the_daemon_serves_the_grid_games_beside_the_boards() {
    let (_tmp, config, _) = game_setup("games", 5, false);
    let daemon = Daemon::start(&config);
    let index = daemon.get_text("/games/");
    assert!(index.contains("Cops and Robbers"), "{index}");
    assert!(daemon.get_text("/").contains("href=\"/games/\""), "the live page links to the games");
    // A game on the server, as `boardwatch play` serves it.
    let client = daemon_common::client();
    let started: Value = client
        .post(daemon.url("/games/cops/games"))
        .json(&serde_json::json!({"map": "classic", "mode": "police", "ai": "classic"}))
        .send()
        .unwrap()
        .json()
        .unwrap();
    let id = started["id"].as_str().unwrap_or_else(|| panic!("{started}"));
    let state = daemon.get_json(&format!("/games/cops/games/{id}"));
    assert_eq!(state["id"], id);
    // Maps saved from the editor and finished games' records live in the state folder.
    let state_dir = config.parent().unwrap().join("state/games");
    assert!(state_dir.join("cops-maps").is_dir() && state_dir.join("records").is_dir());
    // Sokoban too: its collections, and its levels folder in the state folder.
    let sokoban = daemon.get_json("/games/sokoban/collections");
    assert_eq!(sokoban["collections"][0]["levels"].as_array().map(Vec::len), Some(155), "{sokoban}");
    assert!(state_dir.join("sokoban-levels").is_dir());
}
