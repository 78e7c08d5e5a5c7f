//! `boardwatch play` over HTTP: Cops and Robbers games kept on the server, the computer's
//! answers, refused moves and maps with clear JSON errors, records replayed.

mod daemon_common;
mod play_common;

use boardwatch::games::cops::record::replay;
use boardwatch::games::cops::solver::{solve, DEFAULT_MAX_STATES};
use boardwatch::games::cops::{Map, Piece, Positions, Team};
use daemon_common::{client, temp_dir};
use play_common::{get, post, square, start_play, wait_until_solved};
use serde_json::{json, Value};

fn classic_map() -> Map {
    Map::parse(&std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/samples/cops/board1.txt")).unwrap()).unwrap()
}

fn positions(map: &Map, state: &Value) -> Positions {
    let at = |name: &str| {
        let [r, c] = square(&state["positions"][name]);
        map.square(r, c)
    };
    Positions { police1: at("police1"), police2: at("police2"), thief: at("thief") }
}

fn piece(name: &Value) -> Piece {
    serde_json::from_value(name.clone()).unwrap()
}

#[test]
fn a_police_game_is_played_answered_and_kept_on_the_server() {
    let tmp = temp_dir("play-records");
    let records = tmp.path();
    let server = start_play(&["--records".as_ref(), records.as_os_str()]);
    let map = classic_map();
    // The pages are served, the shared projector pieces with them.
    for path in ["/", "/cops", "/assets/projector.js", "/assets/projector.css"] {
        let response = client().get(server.url(path)).send().unwrap();
        assert_eq!(response.status(), 200, "{path}");
        assert!(!response.text().unwrap().to_lowercase().contains("seed"), "{path} speaks of the seed");
    }
    let (status, state) = post(&server, "/cops/games", r#"{"mode": "police", "ai": "classic", "seed": 3}"#);
    assert_eq!(status, 201, "{state}");
    let id = state["id"].as_str().unwrap().to_string();
    assert_eq!(state["map"]["name"], "classic");
    assert_eq!((state["map"]["width"].as_u64(), state["map"]["height"].as_u64()), (Some(20), Some(20)));
    assert_eq!(state["to_move"], "police1");
    assert_eq!(state["your_turn"], true);
    assert_eq!(state["moves"], 0);
    assert_eq!(positions(&map, &state), map.start);
    // The legal squares are the engine's.
    let legal: Vec<[usize; 2]> = state["legal"].as_array().unwrap().iter().map(square).collect();
    let expected: Vec<[usize; 2]> = map.start.legal_steps(&map, Piece::Police1).iter().map(|&s| { let (r, c) = map.row_column(s); [r, c] }).collect();
    assert_eq!(legal, expected);

    // Refused moves, each with a clear JSON error, and the game unchanged.
    let moves_path = format!("/cops/games/{id}/move");
    let [r, c] = square(&state["positions"]["police1"]);
    let refused = [
        (format!(r#"{{"to": [{}, {}]}}"#, r + 2, c), "cannot move from"),
        (format!(r#"{{"to": [{r}, {c}]}}"#), "cannot move from"),
        (r#"{"to": [20, 0]}"#.to_string(), "outside the map"),
        (r#"{"direction": "north"}"#.to_string(), "not one of up, down, left, right"),
        (r#"{"direction": "up"}"#.to_string(), "leaves the map"),
        (r#"{"stay": true}"#.to_string(), "may not stay"),
        (r#"{"to": [1, 2], "direction": "up"}"#.to_string(), "exactly one"),
        (r#"{"too": [1, 2]}"#.to_string(), "unknown field `too`"),
        ("".to_string(), "needs a JSON body"),
        ("{".to_string(), "request body"),
    ];
    for (body, words) in &refused {
        let (status, answer) = post(&server, &moves_path, body);
        assert_eq!(status, 400, "{body}: {answer}");
        let error = answer["error"].as_str().unwrap_or_else(|| panic!("{body}: no error in {answer}"));
        assert!(error.contains(words), "{body}: {error:?} does not say {words:?}");
    }
    assert_eq!(get(&server, &format!("/cops/games/{id}")).1, state, "refused moves change nothing");

    // Policeman 1 by a square, policeman 2 by a direction; then the computer's thief answers.
    let (status, after1) = post(&server, &moves_path, &json!({"to": legal[0]}).to_string());
    assert_eq!(status, 200, "{after1}");
    assert_eq!((after1["moves"].as_u64(), after1["to_move"].as_str()), (Some(1), Some("police2")));
    let p2 = square(&after1["positions"]["police2"]);
    let target = square(&after1["legal"][0]);
    let direction = match (target[0] as isize - p2[0] as isize, target[1] as isize - p2[1] as isize) {
        (-1, 0) => "up",
        (1, 0) => "down",
        (0, -1) => "left",
        _ => "right",
    };
    let (status, after3) = post(&server, &moves_path, &json!({"direction": direction}).to_string());
    assert_eq!(status, 200, "{after3}");
    assert_eq!(after3["moves"], 3, "the thief answered: {after3}");
    assert_eq!(after3["to_move"], "police1");
    let history = after3["history"].as_array().unwrap();
    assert_eq!(history.len(), 3);
    assert_eq!(history[1]["to"], json!(target));
    assert_eq!(history[2]["piece"], "thief");
    let (from, to) = (square(&history[2]["from"]), square(&history[2]["to"]));
    assert_eq!(from[0].abs_diff(to[0]) + from[1].abs_diff(to[1]), 1, "the thief steps to a neighbour: {history:?}");

    // A reload finds the same game; the page is served for it.
    assert_eq!(get(&server, &format!("/cops/games/{id}")).1, after3);
    let listed = get(&server, "/cops/games").1;
    assert_eq!(listed["games"][0]["id"], id.as_str());
    assert_eq!(client().get(server.url(&format!("/cops?game={id}"))).send().unwrap().status(), 200);

    // Play on to the end (the first legal square each time), then nothing more is accepted.
    let mut state = after3;
    while state["outcome"].is_null() {
        let (status, next) = post(&server, &moves_path, &json!({"to": state["legal"][0]}).to_string());
        assert_eq!(status, 200, "{next}");
        state = next;
    }
    let (status, answer) = post(&server, &moves_path, &json!({"to": [0, 0]}).to_string());
    assert_eq!(status, 409, "{answer}");
    assert!(answer["error"].as_str().unwrap().contains("the game is over"), "{answer}");
    let message = state["outcome"]["message"].as_str().unwrap();
    assert!(message.starts_with("The police win") || message.starts_with("The thief wins"), "{message}");

    // The record replays, in the library and on the server, to the same end; --records kept it.
    let record = client().get(server.url(&format!("/cops/games/{id}/record"))).send().unwrap().text().unwrap();
    assert_eq!(std::fs::read_to_string(records.join(format!("cops-{id}.jsonl"))).unwrap(), record);
    let replayed = replay(&record).unwrap();
    let last = replayed.frames.last().unwrap();
    assert_eq!(last.moves as u64, state["moves"].as_u64().unwrap());
    assert_eq!(serde_json::to_value(last.outcome.unwrap().winner).unwrap(), state["outcome"]["winner"]);
    let (status, frames) = post(&server, "/cops/replay", &record);
    assert_eq!(status, 200, "{frames}");
    assert_eq!(frames["frames"].as_array().unwrap().len(), replayed.frames.len());
    assert_eq!(frames["frames"].as_array().unwrap().last().unwrap()["positions"], state["positions"]);
    // A record with a jump in it is refused at that line.
    let mut lines: Vec<String> = record.lines().map(str::to_string).collect();
    lines[2] = lines[2].replace(r#""to":["#, r#""to":[9"#);
    let (status, answer) = post(&server, "/cops/replay", &lines.join("\n"));
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer["line"], 3, "{answer}");
}

#[test]
fn the_perfect_police_answer_a_thief_with_the_solution() {
    let server = start_play::<&str>(&[]);
    let map = classic_map();
    let solution = solve(&map, DEFAULT_MAX_STATES).unwrap();
    let (status, state) = post(&server, "/cops/games", r#"{"map": "classic", "mode": "thief", "ai": "perfect", "appearance": 2}"#);
    assert_eq!(status, 201, "{state}");
    assert_eq!(state["to_move"], "thief");
    assert_eq!(state["human"], "thief");
    assert_eq!(state["appearance"], 2);
    let id = state["id"].as_str().unwrap();
    let mut state = wait_until_solved(&server, id);
    assert_eq!(state["solver"]["state"], "ready", "{state}");
    // What the server's solution predicts is what the library's says.
    let start = positions(&map, &state);
    let predicted = solution.moves_to_capture(&start, Piece::Thief).filter(|&m| m <= 150);
    assert_eq!(state["solver"]["outlook"]["moves"].as_u64(), predicted.map(u64::from), "{state}");
    // Three rounds: every police move is the solution's best move from where it was made.
    for _ in 0..3 {
        let before = positions(&map, &state);
        let seen = state["history"].as_array().unwrap().len();
        let (status, next) = post(&server, &format!("/cops/games/{id}/move"), &json!({"to": state["legal"][0]}).to_string());
        assert_eq!(status, 200, "{next}");
        let history = next["history"].as_array().unwrap();
        assert_eq!(history[seen]["piece"], "thief");
        let mut at = before;
        for line in &history[seen..] {
            let mover = piece(&line["piece"]);
            let [r, c] = square(&line["to"]);
            if mover.team() == Team::Police {
                assert_eq!(solution.best_move(&map, &at, mover), Some(map.square(r, c)), "{line}");
            }
            at.set(mover, map.square(r, c));
        }
        state = next;
        if !state["outcome"].is_null() {
            break;
        }
    }
}

#[test]
fn the_map_editor_saves_only_valid_maps_and_errors_name_the_place() {
    let tmp = temp_dir("play-maps");
    let dir = tmp.path();
    let maps = dir.join("maps");
    std::fs::create_dir_all(&maps).unwrap();
    // A good map and a broken one in the folder: the broken one is listed with its place.
    std::fs::write(maps.join("corridor.txt"), "2000\n0110\n3004\n").unwrap();
    std::fs::write(maps.join("broken.txt"), "2030\n0x04\n").unwrap();
    let server = start_play(&["--maps".as_ref(), maps.as_os_str()]);
    let list = get(&server, "/cops/maps").1;
    let names: Vec<&str> = list["maps"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["classic", "corridor"], "{list}");
    assert_eq!(list["problems"][0]["file"], "broken.txt");
    assert_eq!((list["problems"][0]["line"].as_u64(), list["problems"][0]["column"].as_u64()), (Some(2), Some(2)), "{list}");

    // Every invalid map is refused, with the line and column where there is one.
    let cases = [
        ("2030\n01x4\n", Some(2), Some(3), "not a map digit"),
        ("2034\n010\n", Some(2), None, "a map is a rectangle"),
        ("2030\n0304\n", Some(2), Some(2), "a second thief"),
        ("2000\n0004\n", None, None, "no thief"),
        ("", None, None, "empty"),
    ];
    for (text, line, column, words) in cases {
        for path in ["/cops/maps/check", "/cops/maps"] {
            let (status, answer) = post(&server, path, &json!({"name": "town", "text": text}).to_string());
            assert_eq!(status, 400, "{path} {text:?}: {answer}");
            assert_eq!(answer["line"].as_u64(), line, "{text:?}: {answer}");
            assert_eq!(answer["column"].as_u64(), column, "{text:?}: {answer}");
            assert!(answer["error"].as_str().unwrap().contains(words), "{text:?}: {answer}");
        }
    }
    assert!(!maps.join("town.txt").exists(), "an invalid map was written");
    // Bad names and the bundled map's name.
    let (status, answer) = post(&server, "/cops/maps", r#"{"name": "../etc/x", "text": "234\n"}"#);
    assert_eq!((status, answer["field"].as_str()), (400, Some("name")), "{answer}");
    let (status, answer) = post(&server, "/cops/maps", r#"{"text": "234\n"}"#);
    assert_eq!((status, answer["field"].as_str()), (400, Some("name")), "{answer}");
    let (status, answer) = post(&server, "/cops/maps", r#"{"name": "classic", "text": "234\n"}"#);
    assert_eq!(status, 409, "{answer}");

    // A valid map is checked, saved to the folder, listed, and playable.
    let town = "2010\n0003\n4100\n";
    let (status, answer) = post(&server, "/cops/maps/check", &json!({"text": town}).to_string());
    assert_eq!((status, answer["roads"].as_u64()), (200, Some(10)), "{answer}");
    let (status, answer) = post(&server, "/cops/maps", &json!({"name": "town", "text": town}).to_string());
    assert_eq!(status, 201, "{answer}");
    assert_eq!(std::fs::read_to_string(maps.join("town.txt")).unwrap(), town);
    assert_eq!(get(&server, "/cops/maps/town").1["text"], town);
    let (status, state) = post(&server, "/cops/games", r#"{"map": "town", "mode": "police", "ai": "perfect"}"#);
    assert_eq!(status, 201, "{state}");
    assert_eq!(state["map"]["rows"], json!(["0010", "0000", "0100"]));
    assert_eq!(wait_until_solved(&server, state["id"].as_str().unwrap())["solver"]["state"], "ready");

    // Impossible parameters name the parameter.
    let bad_starts = [
        (r#"{"mode": "police", "map": "nowhere"}"#, 404, "no map \"nowhere\""),
        (r#"{"mode": "robbers"}"#, 400, "unknown variant `robbers`"),
        (r#"{"mode": "police", "ai": "clever"}"#, 400, "unknown variant `clever`"),
        (r#"{"mode": "police", "appearance": 3}"#, 400, "appearance: 3"),
        (r#"{"ai": "classic"}"#, 400, "missing field `mode`"),
    ];
    for (body, code, words) in bad_starts {
        let (status, answer) = post(&server, "/cops/games", body);
        assert_eq!(status, code, "{body}: {answer}");
        assert!(answer["error"].as_str().unwrap().contains(words), "{body}: {answer}");
    }
    // A map too large for the perfect player on the page: refused when the game starts.
    let open = format!("234{}\n{}", "0".repeat(17), format!("{}\n", "0".repeat(20)).repeat(19));
    assert_eq!(post(&server, "/cops/maps", &json!({"name": "open", "text": open}).to_string()).0, 201);
    let (status, answer) = post(&server, "/cops/games", r#"{"map": "open", "mode": "police", "ai": "perfect"}"#);
    assert_eq!((status, answer["field"].as_str()), (400, Some("ai")), "{answer}");
    assert_eq!(post(&server, "/cops/games", r#"{"map": "open", "mode": "police", "ai": "classic"}"#).0, 201);
    // Unknown games and routes.
    let (status, answer) = get(&server, "/cops/games/0123456789abcdef");
    assert_eq!(status, 404);
    assert!(answer["error"].as_str().unwrap().contains("no game"), "{answer}");
    assert_eq!(get(&server, "/nothing/here").0, 404);
}

#[test]
fn bad_command_lines_are_refused_clearly() {
    let refused = |args: &[&str], words: &str| {
        let output = std::process::Command::new(play_common::binary()).args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?} was accepted");
        assert!(stderr.contains(words), "{args:?}: {stderr}");
    };
    refused(&["play", "--maps", "/no/such/folder"], "--maps /no/such/folder: no such folder");
    refused(&["play", "--listen", "nowhere"], "--listen");
}
