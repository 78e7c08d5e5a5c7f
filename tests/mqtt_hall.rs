//! A tournament hall over MQTT: a broker (Debian's `mosquitto`, started here on a free loopback
//! port), three daemons following 30 boards in all, and `boardwatch hall`. Mid-round the broker
//! is killed and started again (without persistence: it forgets what it had acknowledged), a
//! daemon and the hall are SIGKILLed and started again. At the end every board's events are in
//! the hall exactly once, in order, equal to the daemon's, and every game equals the daemon's
//! record; the round's PDN reads back with the project's PDN reader.

mod browser_common;
mod daemon_common;
mod mqtt_common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use boardwatch::draughts::pdn::{read_games, ReadMode};
use daemon_common::{pdn_moves, sample_game, temp_dir, Daemon, TOKEN};
use mqtt_common::{
    free_port, make_certificates, mosquitto, openssl_available, tls_listener, Broker,
};
use serde_json::Value;

const DAEMONS: usize = 3;
const BOARDS_EACH: usize = 10;

/// Daemon `d`'s folder and configuration: boards `d{d}b{k}`, each following a sample game.
fn daemon_config(dir: &Path, d: usize, port: u16) -> (PathBuf, Vec<(String, Vec<String>)>) {
    let folder = dir.join(format!("daemon{d}"));
    std::fs::create_dir_all(&folder).unwrap();
    let mut boards = String::new();
    let mut expected = Vec::new();
    for k in 0..BOARDS_EACH {
        let id = format!("d{d}b{k}");
        let (lines, moves) = sample_game((d * BOARDS_EACH + k) % 20);
        std::fs::write(folder.join(format!("{id}.jsonl")), lines.join("\n") + "\n").unwrap();
        boards.push_str(&format!(
            "[[boards]]\nid = \"{id}\"\nvariant = \"english\"\nsource = {{ kind = \"observations\", path = \"{id}.jsonl\", pace_ms = 30 }}\n[boards.tags]\nEvent = \"Hall test\"\nWhite = \"{id}\"\n"
        ));
        expected.push((id, moves));
    }
    let config = folder.join("boardwatch.toml");
    std::fs::write(
        &config,
        format!("state_dir = \"state\"\n[http]\ntoken = \"{TOKEN}\"\n[mqtt]\nurl = \"mqtt://127.0.0.1:{port}\"\nhall = \"test-hall\"\n{boards}"),
    )
    .unwrap();
    (config, expected)
}

fn start_hall(config: &Path) -> Daemon {
    let mut command = Command::new(env!("CARGO_BIN_EXE_boardwatch"));
    command
        .args(["hall", "--listen", "127.0.0.1:0", "--config"])
        .arg(config)
        .env("RUST_LOG", "boardwatch=info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    Daemon::spawn(command)
}

fn wait_until(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Wait until the hall has board `id`'s events and game as the daemon logged them, then check
/// them: every event once, in order. Returns the events as (seq, line).
fn hall_has_the_daemons_events(
    hall: &Daemon,
    daemon: &Daemon,
    id: &str,
    limit: Duration,
) -> Vec<(u64, String)> {
    let logged = daemon.get_json(&format!("/boards/{id}/events"));
    let logged = logged.as_array().unwrap();
    wait_until(
        limit,
        &format!("the hall has board {id}'s {} events and game", logged.len()),
        || {
            let board = hall.get_json(&format!("/boards/{id}"));
            board["last_seq"].as_u64() == Some(logged.len() as u64)
                && hall.get_text(&format!("/boards/{id}/game.pdn"))
                    == daemon.get_text(&format!("/boards/{id}/game.pdn"))
        },
    );
    let copied = hall.get_json(&format!("/boards/{id}/events"));
    let strip = |e: &Value| {
        (
            e["seq"].as_u64().unwrap(),
            e["line"].as_str().unwrap().to_string(),
        )
    };
    let copied: Vec<_> = copied.as_array().unwrap().iter().map(strip).collect();
    let logged: Vec<_> = logged.iter().map(strip).collect();
    assert_eq!(
        copied, logged,
        "board {id}: the hall's events are the daemon's, once each, in order"
    );
    copied
}

#[test]
fn three_daemons_and_a_hall_survive_broker_daemon_and_hall_kills_with_every_event_once() {
    let Some(binary) = mosquitto() else {
        eprintln!("SKIPPED: mosquitto is not installed (`make deps` or `apt-get install mosquitto` installs it)");
        return;
    };
    let tmp = temp_dir("mqtt-hall");
    let dir = tmp.path();
    let port = free_port();
    let mut broker = Broker::start(&binary, &dir, port);
    let hall_config = dir.join("hall.toml");
    std::fs::write(
        &hall_config,
        format!("state_dir = \"hall-state\"\nround = \"Round 1\"\n[http]\ntoken = \"{TOKEN}\"\n[mqtt]\nurl = \"mqtt://127.0.0.1:{port}\"\nhall = \"test-hall\"\n"),
    )
    .unwrap();
    let mut hall = start_hall(&hall_config);
    let configs: Vec<_> = (0..DAEMONS).map(|d| daemon_config(&dir, d, port)).collect();
    let mut daemons: Vec<Daemon> = configs
        .iter()
        .map(|(config, _)| Daemon::start(config))
        .collect();

    // Mid-round: the broker dies and comes back having forgotten everything, a daemon is
    // SIGKILLed and started again, and so is the hall.
    std::thread::sleep(Duration::from_millis(1200));
    broker.kill();
    std::thread::sleep(Duration::from_millis(700));
    let mut broker = Broker::start(&binary, &dir, port);
    std::thread::sleep(Duration::from_millis(500));
    daemons[1].kill();
    daemons[1] = Daemon::start(&configs[1].0);
    std::thread::sleep(Duration::from_millis(500));
    hall.kill();
    hall = start_hall(&hall_config);
    let over_websocket = listen_over_websocket(&hall);

    // Every daemon finishes its games.
    for (daemon, (_, boards)) in daemons.iter().zip(&configs) {
        for (id, moves) in boards {
            daemon.wait_for_board(id, "the whole game", |b| {
                b["game"]["moves"]
                    .as_array()
                    .is_some_and(|m| m.len() == moves.len())
            });
        }
    }
    // The hall has every event of every board exactly once, as the daemons logged them, and
    // every game as the daemons recorded it.
    for (daemon, (_, boards)) in daemons.iter().zip(&configs) {
        for (id, moves) in boards {
            hall_has_the_daemons_events(&hall, daemon, id, Duration::from_secs(60));
            assert_eq!(
                &pdn_moves(&hall.get_text(&format!("/boards/{id}/game.pdn"))),
                moves,
                "board {id}"
            );
        }
    }
    // Each daemon knows the broker acknowledged every event (what it would send again after a
    // restart: nothing).
    for (d, (_, boards)) in configs.iter().enumerate() {
        let acked_file = dir.join(format!("daemon{d}/state/mqtt-acked.json"));
        wait_until(
            Duration::from_secs(10),
            "the daemons saved what the broker acknowledged",
            || {
                let acked: Value = std::fs::read(&acked_file)
                    .ok()
                    .and_then(|b| serde_json::from_slice(&b).ok())
                    .unwrap_or(Value::Null);
                boards.iter().all(|(id, _)| {
                    acked[id]["acked"].as_u64()
                        == daemons[d].get_json(&format!("/boards/{id}"))["last_seq"].as_u64()
                })
            },
        );
    }
    // The round: one PDN with every board's game, read back by the project's reader.
    let round = hall.get_text("/round.pdn");
    let games = read_games(&round, ReadMode::Strict).unwrap();
    assert_eq!(games.len(), DAEMONS * BOARDS_EACH);
    let overview = hall.get_json("/boards");
    assert_eq!(overview.as_array().unwrap().len(), DAEMONS * BOARDS_EACH);
    overview_page_shows_every_board(&hall, &daemons[0]);

    // The outage was real: the daemons that ran through it lost the broker and sent again (the
    // second one was started again after it).
    for daemon in [&daemons[0], &daemons[2]] {
        let log = daemon.log.lock().unwrap().clone();
        assert!(
            log.contains("connecting again"),
            "a daemon noticed the broker go:\n{log}"
        );
    }
    let dropped: u64 = overview
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["duplicates_dropped"].as_u64().unwrap())
        .sum();
    eprintln!("copies dropped by the hall after its restart: {dropped}");

    // An operator action from the hall reaches the board's daemon (with the token only).
    let (status, _) = hall.act("d2b3", Some("wrong"), r#"{"op": "new_game"}"#);
    assert_eq!(status, 401);
    let before = daemons[2].get_json("/boards/d2b3")["last_seq"]
        .as_u64()
        .unwrap();
    let (status, answer) = hall.act("d2b3", Some(TOKEN), r#"{"op": "new_game"}"#);
    assert_eq!(status, 202, "{answer}");
    let after = daemons[2].wait_for_board("d2b3", "a new game from the hall", |b| {
        b["last_seq"].as_u64() > Some(before)
    });
    assert_eq!(
        after["last_events"].as_array().unwrap().last().unwrap()["line"],
        "1: Init Ready"
    );
    wait_until(
        Duration::from_secs(10),
        "the hall shows the new game's event",
        || hall.get_json("/boards/d2b3")["last_seq"].as_u64() == after["last_seq"].as_u64(),
    );
    websocket_had_every_event_once(&hall, &over_websocket, &after);
    drop(daemons);
    broker.kill();
}

/// Every event the hall's `/events/ws` sends, as they come, gathered by a thread.
fn listen_over_websocket(hall: &Daemon) -> Arc<Mutex<Vec<Value>>> {
    let url = hall.url("/events/ws").replace("http://", "ws://");
    let (mut socket, _) =
        tungstenite::connect(url.as_str()).expect("the hall's WebSocket connects");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    std::thread::spawn(move || {
        while let Ok(message) = socket.read() {
            if let tungstenite::Message::Text(text) = message {
                let event: Value = serde_json::from_str(&text).expect("JSON over the WebSocket");
                sink.lock().unwrap().push(event);
            }
        }
    });
    seen
}

/// The WebSocket, open since the hall's restart, sent each board's events from then on once
/// each, without gaps, as the hall stored them, up to the new game taken from the hall.
fn websocket_had_every_event_once(hall: &Daemon, seen: &Mutex<Vec<Value>>, new_game: &Value) {
    wait_until(
        Duration::from_secs(10),
        "the WebSocket has the new game's event",
        || {
            seen.lock()
                .unwrap()
                .iter()
                .any(|e| e["board"] == "d2b3" && e["seq"].as_u64() == new_game["last_seq"].as_u64())
        },
    );
    let seen = seen.lock().unwrap().clone();
    assert!(
        seen.iter().all(|e| e.get("lagged").is_none()),
        "the WebSocket never lagged"
    );
    let mut boards: Vec<&str> = seen.iter().map(|e| e["board"].as_str().unwrap()).collect();
    boards.sort();
    boards.dedup();
    eprintln!(
        "over the WebSocket: {} events of {} boards",
        seen.len(),
        boards.len()
    );
    for board in boards {
        let sent: Vec<&Value> = seen.iter().filter(|e| e["board"] == board).collect();
        let first = sent[0]["seq"].as_u64().unwrap();
        let seqs: Vec<u64> = sent.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
        let expected: Vec<u64> = (first..first + seqs.len() as u64).collect();
        assert_eq!(
            seqs, expected,
            "board {board}: each event once, in order, no gap"
        );
        let stored = hall.get_json(&format!("/boards/{board}/events?after={}", first - 1));
        let stored: Vec<&str> = stored
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["line"].as_str().unwrap())
            .collect();
        let lines: Vec<&str> = sent.iter().map(|e| e["line"].as_str().unwrap()).collect();
        assert_eq!(
            lines, stored,
            "board {board}: the WebSocket's events are the hall's"
        );
    }
}

/// The overview page in headless Chromium: a card per board, with its diagram and moves as the
/// daemon has them; a screenshot is left in the target folder.
fn overview_page_shows_every_board(hall: &Daemon, daemon: &Daemon) {
    let Some(binary) = browser_common::chromium() else {
        eprintln!("note: chromium is not installed; the overview page is not looked at (apt-get install chromium)");
        return;
    };
    let tmp = temp_dir("mqtt-hall-page");
    let dir = tmp.path();
    let mut browser = browser_common::Browser::launch(binary, &dir.join("chromium-profile"));
    browser.call("Page.navigate", serde_json::json!({"url": hall.url("/")}));
    browser.wait_for(
        "every board",
        "document.querySelectorAll('.board').length",
        |v| v.as_u64() == Some((DAEMONS * BOARDS_EACH) as u64),
    );
    // A board's card: its pieces as the daemon's position has them, its last moves.
    let state = daemon.get_json("/boards/d0b1");
    let on_board: usize = state["game"]["grid"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap().chars().filter(|c| *c != '.').count())
        .sum();
    let pieces =
        browser.eval("document.querySelectorAll('.board[data-board=\"d0b1\"] .pc').length");
    assert_eq!(pieces.as_u64(), Some(on_board as u64));
    let moves =
        browser.eval("document.querySelector('.board[data-board=\"d0b1\"] .moves').textContent");
    let last_move = state["game"]["moves"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        moves.as_str().unwrap().contains(&last_move),
        "{moves} lacks {last_move}"
    );
    // Its clocks: the time each side used, from the moves' times (a move each second in the
    // sample: Black's first counts from the first board seen at 0 s).
    let used = &state["game"]["time_used"];
    let moves_made = state["game"]["moves"].as_array().unwrap().len();
    assert_eq!(
        (used["black"].as_f64(), used["white"].as_f64()),
        (
            Some(moves_made.div_ceil(2) as f64),
            Some((moves_made / 2) as f64)
        ),
        "{used}"
    );
    let clock =
        browser.eval("document.querySelector('.board[data-board=\"d0b1\"] .clock').textContent");
    let mss = |s: usize| format!("{}:{:02}", s / 60, s % 60);
    assert_eq!(
        clock,
        format!(
            "Black {} · White {}",
            mss(moves_made.div_ceil(2)),
            mss(moves_made / 2)
        )
    );
    operator_actions_from_the_page(&mut browser, daemon);
    let png = browser_common::screenshot(&mut browser);
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hall-overview.png");
    std::fs::write(&out, png).unwrap();
    eprintln!("screenshot: {}", out.display());
}

/// The page's operator bar: with a wrong token the hall refuses the action and the page says so
/// (the daemon's record does not move); with the right one the daemon takes it, and the card
/// shows the new game.
fn operator_actions_from_the_page(browser: &mut browser_common::Browser, daemon: &Daemon) {
    let board = "d0b2";
    let before = daemon.get_json(&format!("/boards/{board}"))["last_seq"]
        .as_u64()
        .unwrap();
    let click = |browser: &mut browser_common::Browser, token: &str| {
        browser.eval(&format!(
            "(() => {{ const t = document.getElementById('token'); t.value = {token:?}; \
             t.dispatchEvent(new Event('input')); \
             document.querySelector('.board[data-board=\"{board}\"] h2 span').click(); \
             document.getElementById('answer').textContent = ''; \
             [...document.querySelectorAll('#operator button')].find(b => b.textContent === 'New game').click(); \
             return true; }})()"
        ));
        browser.wait_for(
            "the hall's answer",
            "document.getElementById('answer').className",
            |v| v.as_str().is_some_and(|c| !c.is_empty()),
        );
        browser
            .eval("document.getElementById('answer').textContent")
            .as_str()
            .unwrap()
            .to_string()
    };
    let refused = click(browser, "wrong");
    assert_eq!(refused, "refused: wrong token");
    let chosen = browser.eval("document.getElementById('target').value");
    assert_eq!(chosen, board, "clicking a board's name chose it");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        daemon.get_json(&format!("/boards/{board}"))["last_seq"].as_u64(),
        Some(before),
        "a refused action does not reach the daemon"
    );
    let sent = click(browser, TOKEN);
    assert_eq!(sent, format!("new_game sent to {board}'s daemon"));
    let stored = browser.eval("localStorage.getItem('boardwatch-hall-token')");
    assert_eq!(stored, TOKEN, "the token is kept in the browser");
    let taken = daemon.wait_for_board(board, "a new game from the hall page", |b| {
        b["last_seq"].as_u64() > Some(before)
    });
    assert_eq!(
        taken["last_events"].as_array().unwrap().last().unwrap()["line"],
        "1: Init Ready"
    );
    browser.wait_for(
        "the card shows the new game",
        &format!("document.querySelector('.board[data-board=\"{board}\"] .moves').textContent"),
        |v| v == "no move yet",
    );
}

/// A broker that speaks only TLS, with a certificate from a throwaway authority, on two ports:
/// one for any client that trusts the authority (the hall), one that also asks for a client
/// certificate (the daemon). The daemon publishes over TLS and the hall receives every event.
/// A missing or malformed CA file stops the daemon and the hall with an error naming the key
/// and the file.
#[test]
fn a_daemon_and_a_hall_talk_to_the_broker_over_tls() {
    let Some(binary) = mosquitto() else {
        eprintln!("SKIPPED: mosquitto is not installed (`make deps` or `apt-get install mosquitto` installs it)");
        return;
    };
    if !openssl_available() {
        eprintln!("SKIPPED: the openssl command is not installed (it makes the test certificates)");
        return;
    }
    let tmp = temp_dir("mqtt-tls");
    let dir = tmp.path();
    make_certificates(&dir);
    let (hall_port, daemon_port) = (free_port(), free_port());
    let tls = |port, client_certificates| tls_listener(&dir, port, client_certificates);
    let _broker = Broker::start_with(
        &binary,
        &dir,
        hall_port,
        &format!(
            "per_listener_settings false\nallow_anonymous true\npersistence false\n{}{}",
            tls(hall_port, false),
            tls(daemon_port, true)
        ),
    );
    let hall_config = dir.join("hall.toml");
    std::fs::write(
        &hall_config,
        format!("state_dir = \"hall-state\"\n[mqtt]\nurl = \"mqtts://127.0.0.1:{hall_port}\"\nhall = \"tls-hall\"\nca_file = \"ca.pem\"\n"),
    )
    .unwrap();
    let hall = start_hall(&hall_config);
    let (lines, moves) = sample_game(3);
    std::fs::write(dir.join("game.jsonl"), lines.join("\n") + "\n").unwrap();
    let daemon_config = dir.join("boardwatch.toml");
    let daemon_text = format!(
        "state_dir = \"state\"\n[mqtt]\nurl = \"mqtts://127.0.0.1:{daemon_port}\"\nhall = \"tls-hall\"\n\
         ca_file = \"ca.pem\"\nclient_cert_file = \"client.pem\"\nclient_key_file = \"client.key\"\n\
         [[boards]]\nid = \"t1\"\nvariant = \"english\"\nsource = {{ kind = \"observations\", path = \"game.jsonl\", pace_ms = 20 }}\n"
    );
    std::fs::write(&daemon_config, &daemon_text).unwrap();
    let daemon = Daemon::start(&daemon_config);
    daemon.wait_for_board("t1", "the whole game", |b| {
        b["game"]["moves"]
            .as_array()
            .is_some_and(|m| m.len() == moves.len())
    });
    hall_has_the_daemons_events(&hall, &daemon, "t1", Duration::from_secs(20));
    assert_eq!(pdn_moves(&hall.get_text("/boards/t1/game.pdn")), moves);
    assert!(
        hall.log.lock().unwrap().contains("MQTT: connected"),
        "{}",
        hall.log.lock().unwrap()
    );
    drop(daemon);

    // The daemon's port does ask for a client certificate: a daemon without one is turned away.
    let uncertified = dir.join("uncertified");
    std::fs::create_dir_all(&uncertified).unwrap();
    std::fs::copy(dir.join("game.jsonl"), uncertified.join("game.jsonl")).unwrap();
    let uncertified_config = uncertified.join("boardwatch.toml");
    std::fs::write(
        &uncertified_config,
        format!(
            "state_dir = \"state\"\n[mqtt]\nurl = \"mqtts://127.0.0.1:{daemon_port}\"\nhall = \"tls-hall\"\nca_file = \"{}\"\n\
             [[boards]]\nid = \"t2\"\nvariant = \"english\"\nsource = {{ kind = \"observations\", path = \"game.jsonl\", pace_ms = 20 }}\n",
            dir.join("ca.pem").display()
        ),
    )
    .unwrap();
    let turned_away = Daemon::start(&uncertified_config);
    wait_until(
        Duration::from_secs(10),
        "the daemon without a client certificate is turned away",
        || turned_away.log.lock().unwrap().contains("connecting again"),
    );
    assert!(
        !turned_away.log.lock().unwrap().contains("MQTT: connected"),
        "{}",
        turned_away.log.lock().unwrap()
    );
    let boards = hall.get_json("/boards");
    assert!(
        boards.as_array().unwrap().iter().all(|b| b["id"] != "t2"),
        "{boards}"
    );
    drop(turned_away);

    // A CA file that is not there, or not a certificate: refused at the start, naming both.
    let refused = |args: &[&str], config: &Path| {
        let output = Command::new(env!("CARGO_BIN_EXE_boardwatch"))
            .args(args)
            .arg(config)
            .output()
            .unwrap();
        assert!(!output.status.success());
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    std::fs::write(
        &daemon_config,
        daemon_text.replace("\"ca.pem\"", "\"gone.pem\""),
    )
    .unwrap();
    let err = refused(&["run", "--config"], &daemon_config);
    eprintln!("a missing CA file:\n{err}");
    let gone = dir.join("gone.pem").display().to_string();
    assert!(
        err.contains("mqtt.ca_file") && err.contains(&gone) && err.contains("No such file"),
        "{err}"
    );
    // A client key that is not the certificate's.
    std::fs::write(
        &daemon_config,
        daemon_text.replace("\"client.key\"", "\"server.key\""),
    )
    .unwrap();
    let err = refused(&["run", "--config"], &daemon_config);
    eprintln!("a key that is not the client certificate's:\n{err}");
    assert!(
        err.contains("mqtt.client_key_file") && err.contains("does not go with"),
        "{err}"
    );
    std::fs::write(
        dir.join("bad.pem"),
        "-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    std::fs::write(
        &hall_config,
        std::fs::read_to_string(&hall_config)
            .unwrap()
            .replace("\"ca.pem\"", "\"bad.pem\""),
    )
    .unwrap();
    let err = refused(&["hall", "--config"], &hall_config);
    eprintln!("a malformed CA file:\n{err}");
    let bad = dir.join("bad.pem").display().to_string();
    assert!(
        err.contains("hall.toml: mqtt.ca_file") && err.contains(&bad),
        "{err}"
    );
}

/// A daemon whose state folder is wiped numbers its events from 1 again; its log has a new
/// epoch, so the hall takes them as new events (a copy that deduped by board and sequence
/// number alone would drop them as copies of the old ones), keeps the old copy aside and ends
/// equal to the daemon's new log. Here the board even plays another game the second time.
#[test]
fn a_daemon_with_a_wiped_state_folder_is_not_deduped_away() {
    let Some(binary) = mosquitto() else {
        eprintln!("SKIPPED: mosquitto is not installed (`make deps` or `apt-get install mosquitto` installs it)");
        return;
    };
    let tmp = temp_dir("mqtt-wiped");
    let dir = tmp.path();
    let port = free_port();
    let _broker = Broker::start(&binary, &dir, port);
    let hall_config = dir.join("hall.toml");
    std::fs::write(
        &hall_config,
        format!("state_dir = \"hall-state\"\n[mqtt]\nurl = \"mqtt://127.0.0.1:{port}\"\nhall = \"wiped\"\n"),
    )
    .unwrap();
    let hall = start_hall(&hall_config);
    let play = |game: usize| {
        let (lines, moves) = sample_game(game);
        std::fs::write(dir.join("game.jsonl"), lines.join("\n") + "\n").unwrap();
        let config = dir.join("boardwatch.toml");
        std::fs::write(
            &config,
            format!("state_dir = \"state\"\n[mqtt]\nurl = \"mqtt://127.0.0.1:{port}\"\nhall = \"wiped\"\n\
                     [[boards]]\nid = \"t1\"\nvariant = \"english\"\nsource = {{ kind = \"observations\", path = \"game.jsonl\", pace_ms = 10 }}\n"),
        )
        .unwrap();
        let daemon = Daemon::start(&config);
        let state = daemon.wait_for_board("t1", "the whole game", |b| {
            b["game"]["moves"]
                .as_array()
                .is_some_and(|m| m.len() == moves.len())
        });
        let events = hall_has_the_daemons_events(&hall, &daemon, "t1", Duration::from_secs(20));
        assert_eq!(pdn_moves(&hall.get_text("/boards/t1/game.pdn")), moves);
        (daemon, state["epoch"].as_u64().unwrap(), events)
    };
    let (mut first, old_epoch, old_events) = play(0);
    first.kill();
    std::fs::remove_dir_all(dir.join("state")).unwrap();
    let (_second, new_epoch, new_events) = play(1);
    assert!(new_epoch > old_epoch, "{new_epoch} after {old_epoch}");
    assert_eq!(new_events[0].0, 1, "the new log counts from 1 again");
    assert_ne!(new_events, old_events, "another game: other events");
    let board = hall.get_json("/boards/t1");
    assert_eq!(board["epoch"].as_u64(), Some(new_epoch));
    // The old copy is kept beside the new one.
    let kept = std::fs::read_to_string(dir.join(format!("hall-state/t1/events-{old_epoch}.jsonl")))
        .unwrap();
    assert_eq!(kept.lines().count(), old_events.len());
}

/// A broker, a hall named `name` (`hall_extra` added to its configuration's top) and a daemon
/// with one board, `table3` (its `[boards.tags]` lines `board_tags`), that has played sample game
/// `game` to its end, every event of it at the hall.
struct RoundHall {
    dir: PathBuf,
    _broker: Broker,
    hall_config: PathBuf,
    hall: Daemon,
    config: PathBuf,
    daemon: Daemon,
    moves: Vec<String>,
    /// Holds `dir`, removed when the test ends.
    _tmp: tempfile::TempDir,
}

impl RoundHall {
    fn start(binary: &Path, name: &str, hall_extra: &str, game: usize, board_tags: &str) -> RoundHall {
        let tmp = temp_dir(&format!("mqtt-{name}"));
        let dir = tmp.path().to_path_buf();
        let port = free_port();
        let broker = Broker::start(binary, &dir, port);
        let hall_config = dir.join("hall.toml");
        std::fs::write(
            &hall_config,
            format!("state_dir = \"hall-state\"\n{hall_extra}[http]\ntoken = \"{TOKEN}\"\n[mqtt]\nurl = \"mqtt://127.0.0.1:{port}\"\nhall = \"{name}\"\n"),
        )
        .unwrap();
        let hall = start_hall(&hall_config);
        let (lines, moves) = sample_game(game);
        std::fs::write(dir.join("game.jsonl"), lines.join("\n") + "\n").unwrap();
        let config = dir.join("boardwatch.toml");
        std::fs::write(
            &config,
            format!("state_dir = \"state\"\n[http]\ntoken = \"{TOKEN}\"\n[mqtt]\nurl = \"mqtt://127.0.0.1:{port}\"\nhall = \"{name}\"\n\
                     [[boards]]\nid = \"table3\"\nvariant = \"english\"\nsource = {{ kind = \"observations\", path = \"game.jsonl\", pace_ms = 10 }}\n\
                     [boards.tags]\n{board_tags}"),
        )
        .unwrap();
        let daemon = Daemon::start(&config);
        daemon.wait_for_board("table3", "the whole game", |b| b["game"]["moves"].as_array().is_some_and(|m| m.len() == moves.len()));
        hall_has_the_daemons_events(&hall, &daemon, "table3", Duration::from_secs(20));
        RoundHall { dir, _broker: broker, hall_config, hall, config, daemon, moves, _tmp: tmp }
    }
}

/// The arbiter sets the round on the hall (event, site, date, round, pairings pasted once): the
/// round PDN carries them with the board's number, in the PDN 3.0 tag order, reads back with
/// our strict reader, and keeps them across a hall restart (`round.json`).
#[test]
fn the_round_s_tags_and_pairings_are_set_on_the_hall_and_carried_by_every_game() {
    let Some(binary) = mosquitto() else {
        eprintln!("SKIPPED: mosquitto is not installed (`make deps` or `apt-get install mosquitto` installs it)");
        return;
    };
    let RoundHall { dir, _broker, hall_config, mut hall, config: _, daemon, moves, _tmp } =
        RoundHall::start(&binary, "round", "round = \"1\"\n", 2, "Event = \"Club night\"\n");
    // The daemon's own record carries the board's number.
    let own = read_games(&daemon.get_text("/boards/table3/game.pdn"), ReadMode::Strict).unwrap();
    assert_eq!((own[0].tag("Board"), own[0].tag("Event")), (Some("3"), Some("Club night")));
    // The arbiter's draw: the game is finished.
    let (status, answer) = hall.act("table3", Some(TOKEN), r#"{"op": "draw"}"#);
    assert_eq!(status, 202, "{answer}");
    daemon.wait_for_board("table3", "the draw", |b| b["game"]["result"] == "1/2-1/2");
    hall_has_the_daemons_events(&hall, &daemon, "table3", Duration::from_secs(20));

    let put = |token: &str, body: Value| {
        let response = daemon_common::client().put(hall.url("/round")).bearer_auth(token).json(&body).send().unwrap();
        (response.status().as_u16(), response.json::<Value>().unwrap_or(Value::Null))
    };
    let form = |pairings: &str| {
        serde_json::json!({"event": "Spring Open", "site": "Leeds", "date": "2026.11.28", "round": "3", "pairings": pairings})
    };
    assert_eq!(put("wrong", form("3. Ann Smith - Bob Jones")).0, 401);
    let (status, answer) = put(TOKEN, form("1. Carla Diaz - Dan Berg\n3. Ann Smith versus Bob Jones\n"));
    assert_eq!(status, 400);
    assert!(answer["error"].as_str().unwrap().starts_with("pairings line 2:"), "{answer}");
    let (status, answer) = put(TOKEN, form("1. Carla Diaz - Dan Berg\n3. Ann Smith - Bob Jones\n"));
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["pairings"].as_array().map(Vec::len), Some(2));

    let check_round = |hall: &Daemon| {
        let text = hall.get_text("/round.pdn");
        let games = read_games(&text, ReadMode::Strict).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(games.len(), 1, "{text}");
        let names: Vec<&str> = games[0].tags.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(&names[..7], ["Event", "Site", "Date", "Round", "White", "Black", "Result"], "{text}");
        let tags: Vec<Option<&str>> =
            ["Event", "Site", "Date", "Round", "White", "Black", "Result", "Board", "GameType"].iter().map(|n| games[0].tag(n)).collect();
        assert_eq!(
            tags,
            [Some("Spring Open"), Some("Leeds"), Some("2026.11.28"), Some("3"), Some("Ann Smith"), Some("Bob Jones"), Some("1/2-1/2"), Some("3"), Some("21")],
            "{text}"
        );
        assert_eq!(pdn_moves(&text), moves);
        let game = boardwatch::draughts::game::replay(&games[0], boardwatch::draughts::Variant::Pool).unwrap();
        assert_eq!(game.result, boardwatch::draughts::pdn::GameResult::Draw);
    };
    check_round(&hall);
    // A restarted hall has the round still.
    hall.kill();
    assert!(dir.join("hall-state/round.json").exists());
    let hall = start_hall(&hall_config);
    let round = hall.get_json("/round");
    assert_eq!(round["pairings_text"], "1. Carla Diaz - Dan Berg\n3. Ann Smith - Bob Jones\n");
    assert_eq!(hall.get_json("/hall")["round"], "3");
    // Killed, it may have kept an older copy of the game: the broker's retained one follows.
    wait_until(Duration::from_secs(20), "the restarted hall has the finished game", || {
        hall.get_text("/round.pdn").contains("[Result \"1/2-1/2\"]")
    });
    check_round(&hall);
}

/// The round's tags reach each board's daemon (issue 35): after `PUT /round` on the hall, the
/// daemon's own `game.pdn` (served and on disk) carries Event, Round, White, Black and Board; a
/// restarted daemon keeps them without the hall; a daemon that was down when the round was
/// corrected gets the correction when it is back; the next round goes to the next game, and the
/// finished game keeps its round and its result.
#[test]
fn the_round_s_tags_reach_the_daemon_s_own_record_and_survive_its_restart() {
    let Some(binary) = mosquitto() else {
        eprintln!("SKIPPED: mosquitto is not installed (`make deps` or `apt-get install mosquitto` installs it)");
        return;
    };
    let RoundHall { dir, _broker, hall_config, mut hall, config, mut daemon, moves, _tmp } =
        RoundHall::start(&binary, "tags", "", 4, "Event = \"Club night\"\nSite = \"Club room\"\n");

    let put = |hall: &Daemon, round: &str, pairings: &str| {
        let body = serde_json::json!({"event": "Spring Open", "date": "2026.11.28", "round": round, "pairings": pairings});
        let response = daemon_common::client().put(hall.url("/round")).bearer_auth(TOKEN).json(&body).send().unwrap();
        assert_eq!(response.status().as_u16(), 200);
    };
    let tags_of = |text: &str| -> Vec<Option<String>> {
        let games = read_games(text, ReadMode::Strict).unwrap_or_else(|e| panic!("{e}\n{text}"));
        ["Event", "Site", "Date", "Round", "White", "Black", "Result", "Board"]
            .iter()
            .map(|n| games[0].tag(n).map(str::to_string))
            .collect()
    };
    let expect = |round: &str, black: &str, result: &str| -> Vec<Option<String>> {
        ["Spring Open", "Club room", "2026.11.28", round, "Ann Smith", black, result, "3"].iter().map(|v| Some(v.to_string())).collect()
    };
    let record_file = dir.join("state/table3/game.pdn");
    let record = || std::fs::read_to_string(&record_file).unwrap();

    put(&hall, "3", "3. Ann Smith - Bob Jones\n4. Carla Diaz - Dan Berg\n");
    wait_until(Duration::from_secs(20), "the daemon's game carries the round's tags", || {
        daemon.get_text("/boards/table3/game.pdn").contains("[White \"Ann Smith\"]")
    });
    let served = daemon.get_text("/boards/table3/game.pdn");
    assert_eq!(tags_of(&served), expect("3", "Bob Jones", "*"), "{served}");
    assert_eq!(pdn_moves(&served), moves, "the moves are the daemon's");
    assert_eq!(record(), served, "the record file is the served game");
    let board = daemon.get_json("/boards/table3");
    assert_eq!(board["game"]["round_tags"]["Round"], "3", "{board}");
    let events = daemon.get_json("/boards/table3/events?after=0");
    let tag_events: Vec<&Value> = events.as_array().unwrap().iter().filter(|e| e["kind"] == "tags").collect();
    assert_eq!(tag_events.len(), 1, "logged once, though the hall may send them again: {tag_events:?}");
    // The hall copies the daemon's game as it is now, tags and all.
    wait_until(Duration::from_secs(20), "the hall has the tagged game", || {
        hall.get_text("/boards/table3/game.pdn").contains("[White \"Ann Smith\"]")
    });

    // Restarted while the hall is away: the daemon's log gives the tags back.
    hall.kill();
    daemon.kill();
    daemon = Daemon::start(&config);
    let served = daemon.get_text("/boards/table3/game.pdn");
    assert_eq!(tags_of(&served), expect("3", "Bob Jones", "*"), "{served}");
    assert_eq!(pdn_moves(&served), moves);

    // Down while the arbiter corrects a name: corrected when it is back.
    daemon.kill();
    let hall = start_hall(&hall_config);
    put(&hall, "3", "3. Ann Smith - Bob Jonas\n4. Carla Diaz - Dan Berg\n");
    std::thread::sleep(Duration::from_millis(500));
    assert!(record().contains("Bob Jones"), "the daemon is down");
    let daemon = Daemon::start(&config);
    wait_until(Duration::from_secs(30), "the restarted daemon has the corrected pairing", || {
        daemon.get_text("/boards/table3/game.pdn").contains("[Black \"Bob Jonas\"]")
    });
    assert_eq!(tags_of(&record()), expect("3", "Bob Jonas", "*"));

    // The game ends; the next round's tags go to the next game and never touch this one.
    let (status, answer) = hall.act("table3", Some(TOKEN), r#"{"op": "draw"}"#);
    assert_eq!(status, 202, "{answer}");
    daemon.wait_for_board("table3", "the draw", |b| b["game"]["result"] == "1/2-1/2");
    put(&hall, "4", "3. Eve Stone - Ann Smith\n");
    daemon.wait_for_board("table3", "the next round's tags", |b| b["game"]["round_tags"]["Round"] == "4");
    let served = daemon.get_text("/boards/table3/game.pdn");
    assert_eq!(tags_of(&served), expect("3", "Bob Jonas", "1/2-1/2"), "the finished game keeps its round: {served}");
    let (status, answer) = hall.act("table3", Some(TOKEN), r#"{"op": "new_game"}"#);
    assert_eq!(status, 202, "{answer}");
    wait_until(Duration::from_secs(20), "the new game has the next round's tags", || {
        daemon.get_text("/boards/table3/game.pdn").contains("[White \"Eve Stone\"]")
    });
    let games = daemon.get_text("/boards/table3/games.pdn");
    let games = read_games(&games, ReadMode::Strict).unwrap_or_else(|e| panic!("{e}\n{games}"));
    assert_eq!((games[0].tag("Round"), games[0].tag("Black"), games[0].tag("Result")), (Some("3"), Some("Bob Jonas"), Some("1/2-1/2")));
}
