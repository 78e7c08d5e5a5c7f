//! Dots over the network: two WebSocket clients play a whole game through `boardwatch play`,
//! one drops and comes back mid-game, a spectator watches; the record (SGF) is complete and
//! saved in the records folder. Also the plain HTTP API and its errors.

mod daemon_common;
mod play_common;

use std::net::TcpStream;
use std::time::Duration;

use boardwatch::games::dots::sgf;
use play_common::{get, post, start_play};
use serde_json::{json, Value};
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

type Socket = WebSocket<MaybeTlsStream<TcpStream>>;

fn connect(server: &daemon_common::Daemon, room: &str, seat: &str) -> Socket {
    let url = server
        .url(&format!("/dots/rooms/{room}/ws?seat={seat}"))
        .replace("http://", "ws://");
    let (socket, _) = tungstenite::connect(url).expect("websocket");
    if let MaybeTlsStream::Plain(stream) = socket.get_ref() {
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
    }
    socket
}

/// The next state message (errors are returned too, as `{"error"}`).
fn next(socket: &mut Socket) -> Value {
    loop {
        match socket.read().expect("a message before the timeout") {
            Message::Text(text) => return serde_json::from_str(&text).unwrap(),
            _ => continue,
        }
    }
}

/// Read states until one with `moves == n`.
fn until_moves(socket: &mut Socket, n: u64) -> Value {
    loop {
        let state = next(socket);
        if state["moves"] == n {
            return state;
        }
    }
}

/// The first point a dot may go on, row by row (empty or a house).
fn first_free(state: &Value) -> (usize, usize) {
    for (y, row) in state["rows"].as_array().unwrap().iter().enumerate() {
        if let Some(x) = row.as_str().unwrap().find(['.', 'h', 'k']) {
            return (x, y);
        }
    }
    panic!("no free point in {state}");
}

#[test]
fn two_clients_play_a_whole_game_with_a_reconnect_and_a_spectator() {
    let tmp = daemon_common::temp_dir("dots-records");
    let records = tmp.path();
    let server = start_play(&["--records".as_ref(), records.as_os_str()]);
    let (status, state) = post(
        &server,
        "/dots/rooms",
        r#"{"mode":"network","width":5,"height":5,"rules":"standard"}"#,
    );
    assert_eq!(status, 201, "{state}");
    let id = state["id"].as_str().unwrap().to_string();
    let mut red = connect(&server, &id, "red");
    let mut black = connect(&server, &id, "black");
    let mut spectator = connect(&server, &id, "spectator");
    // A spectator cannot play; black cannot play on red's turn.
    spectator
        .send(Message::Text(
            json!({"op": "move", "x": 0, "y": 0}).to_string().into(),
        ))
        .unwrap();
    let answer = loop {
        let m = next(&mut spectator);
        if m.get("error").is_some() {
            break m;
        }
    };
    assert!(
        answer["error"].as_str().unwrap().contains("spectators"),
        "{answer}"
    );
    black
        .send(Message::Text(
            json!({"op": "move", "x": 0, "y": 0}).to_string().into(),
        ))
        .unwrap();
    let answer = loop {
        let m = next(&mut black);
        if m.get("error").is_some() {
            break m;
        }
    };
    assert!(
        answer["error"].as_str().unwrap().contains("red's turn"),
        "{answer}"
    );

    let mut played = Vec::new();
    let mut state = get(&server, &format!("/dots/rooms/{id}")).1;
    let mut dropped = false;
    while state["end"].is_null() {
        let n = state["moves"].as_u64().unwrap();
        if n == 6 && !dropped {
            // Black drops and comes back: the server still has every move.
            black.close(None).unwrap();
            while black.read().is_ok() {}
            dropped = true;
            black = connect(&server, &id, "black");
            let again = next(&mut black);
            assert_eq!(
                again["moves"], 6,
                "the reconnected client gets the whole game: {again}"
            );
            assert_eq!(again["rows"], state["rows"]);
        }
        let (x, y) = first_free(&state);
        let mover = if state["to_move"] == "red" {
            &mut red
        } else {
            &mut black
        };
        mover
            .send(Message::Text(
                json!({"op": "move", "x": x, "y": y}).to_string().into(),
            ))
            .unwrap();
        played.push((x, y, state["to_move"].as_str().unwrap().to_string()));
        state = until_moves(mover, n + 1);
    }
    assert!(dropped);
    // Everyone saw the end, the spectator too.
    let seen = until_moves(&mut spectator, played.len() as u64);
    assert_eq!(seen["end"]["kind"], "full", "{seen}");

    // The record has every move, in order, and is saved in the records folder.
    let text = daemon_common::client()
        .get(server.url(&format!("/dots/rooms/{id}/sgf")))
        .send()
        .unwrap()
        .text()
        .unwrap();
    let game = sgf::parse(&text).unwrap();
    assert_eq!(game.moves.len(), played.len());
    for (m, (x, y, who)) in game.moves.iter().zip(&played) {
        assert_eq!(
            (
                m.x,
                m.y,
                if m.player == boardwatch::games::dots::Player::Red {
                    "red"
                } else {
                    "black"
                }
            ),
            (*x, *y, who.as_str())
        );
    }
    let board = game.to_board(None).unwrap();
    assert_eq!(
        board.captured(boardwatch::games::dots::Player::Red),
        state["captured"]["red"].as_u64().unwrap() as u32
    );
    let saved = std::fs::read_to_string(records.join(format!("dots-{id}.sgf")))
        .expect("the finished game is saved");
    assert_eq!(saved, text);
}

#[test]
fn http_api_plays_against_the_computer_and_explains_errors() {
    let server = start_play::<&str>(&[]);
    let (status, state) = post(
        &server,
        "/dots/rooms",
        r#"{"mode":"ai","width":7,"height":7,"level":1,"ai_plays":"black","seed":3}"#,
    );
    assert_eq!(status, 201, "{state}");
    let id = state["id"].as_str().unwrap();
    let (status, after) = post(
        &server,
        &format!("/dots/rooms/{id}/action"),
        r#"{"op":"move","x":3,"y":3}"#,
    );
    assert_eq!(status, 200, "{after}");
    assert_eq!(
        after["moves"], 2,
        "the computer answered in the same request: {after}"
    );
    assert_eq!(after["to_move"], "red");
    let (status, e) = post(
        &server,
        &format!("/dots/rooms/{id}/action"),
        r#"{"op":"move","x":3,"y":3}"#,
    );
    assert_eq!(status, 409, "{e}");
    assert!(e["error"].as_str().unwrap().contains("taken"), "{e}");
    let (status, undone) = post(
        &server,
        &format!("/dots/rooms/{id}/action"),
        r#"{"op":"undo"}"#,
    );
    assert_eq!(
        (status, undone["moves"].as_u64()),
        (200, Some(0)),
        "undo goes back to the human's turn: {undone}"
    );
    let (status, e) = post(&server, "/dots/rooms", r#"{"mode":"local","width":70}"#);
    assert_eq!(status, 400, "{e}");
    assert!(e["error"].as_str().unwrap().contains("5 to 64"), "{e}");
    let (status, e) = post(&server, "/dots/rooms", r#"{"mode":"ai","level":9}"#);
    assert_eq!((status, e["field"].as_str()), (400, Some("level")), "{e}");
    let (status, _) = get(&server, "/dots/rooms/nope");
    assert_eq!(status, 404);
    let page = daemon_common::client()
        .get(server.url("/dots"))
        .send()
        .unwrap()
        .text()
        .unwrap();
    assert!(page.contains("Dots") && page.contains("projector.js"));
}
