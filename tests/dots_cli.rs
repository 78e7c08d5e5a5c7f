//! `boardwatch dots replay | show | move | engine | match` as a user or a differential-test harness runs them.

use std::io::Write;
use std::process::{Command, Stdio};

fn boardwatch(args: &[&str], stdin: &str) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_boardwatch"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn replay_answers_one_line_per_game_and_names_bad_lines() {
    let input = concat!(
        r#"{"width":7,"height":7,"moves":[[2,2,1],[2,1,0],[1,2,0],[3,2,0],[2,3,0],[5,5]]}"#,
        "\n",
        "{\"width\": 7\n",
        r#"{"width":7,"height":7,"moves":[[3,3],[3,3]]}"#,
        "\n"
    );
    let output = boardwatch(&["dots", "replay", "--rules", "classic"], input);
    assert!(
        !output.status.success(),
        "a malformed line makes the exit status a failure"
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    let first = lines[0]["results"].as_array().unwrap();
    assert_eq!(
        first[4],
        serde_json::json!({"legal": true, "player": 0, "red": 1, "black": 0, "captured": true})
    );
    assert_eq!(first[5]["player"], 0, "classic: the capturer places again");
    assert!(lines[1]["error"].as_str().unwrap().starts_with("line 2:"));
    assert!(String::from_utf8_lossy(&output.stderr).contains("stdin line 2"));
    assert_eq!(lines[2]["results"][1]["legal"], false);
}

#[test]
fn show_and_move_read_sgf_records_and_name_the_place_of_an_error() {
    let tmp = tempfile::Builder::new().prefix("boardwatch-dots-").tempdir().unwrap();
    let dir = tmp.path();
    let good = dir.join("good.sgf");
    std::fs::write(
        &good,
        "(;GM[40]FF[4]SZ[7]RU[russian];B[cc];W[cb];W[bc];W[dc];W[cd])",
    )
    .unwrap();
    let output = boardwatch(&["dots", "show", good.to_str().unwrap()], "");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.contains(".RbR...") && text.contains("captured: red 1, black 0"),
        "{text}"
    );
    let output = boardwatch(
        &[
            "dots",
            "move",
            good.to_str().unwrap(),
            "--level",
            "1",
            "--seed",
            "5",
        ],
        "",
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let answer: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(answer["player"], 1, "black moves after red's last dot");
    let bad = dir.join("bad.sgf");
    std::fs::write(&bad, "(;GM[40]SZ[7]\n;B[cc]\n;W[cc])").unwrap();
    let output = boardwatch(&["dots", "show", bad.to_str().unwrap()], "");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("bad.sgf") && stderr.contains("line 3, column 4"),
        "{stderr}"
    );
}

#[test]
fn the_engine_answers_the_dots_protocol_line_by_line() {
    let input = concat!(
        r#"{"command":"Init","width":8,"height":8}"#,
        "\n",
        r#"{"command":"PutPoint","coords":{"x":3,"y":3},"player":"Red"}"#,
        "\n",
        r#"{"command":"PutPoint","coords":{"x":3,"y":3},"player":"Black"}"#,
        "\n",
        r#"{"command":"Analyze","player":"Black","constraint":{"type":"Complexity","value":0.01}}"#,
        "\n",
        r#"{"command":"Undo"}"#,
        "\n",
        r#"{"command":"Analyze","player":"Black","constraint":{"type":"Time","value":50}}"#,
        "\n",
    );
    let output = boardwatch(&["dots", "engine"], input);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let answers: Vec<serde_json::Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(answers.len(), 5, "{stdout}\n{stderr}");
    assert_eq!(answers[0], serde_json::json!({"command": "Init"}));
    assert_eq!(answers[1], serde_json::json!({"command": "PutPoint", "put": true}));
    assert_eq!(answers[2], serde_json::json!({"command": "PutPoint", "put": false}), "the point is taken");
    let moves = answers[3]["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 1);
    let (x, y) = (moves[0]["coords"]["x"].as_u64().unwrap(), moves[0]["coords"]["y"].as_u64().unwrap());
    assert!(x < 8 && y < 8 && (x, y) != (3, 3), "a free point: ({x}, {y})");
    assert_eq!(answers[4], serde_json::json!({"command": "Undo", "undone": true}));
    // After the undo red is to move again: asking for black is refused, naming the line.
    assert!(!output.status.success());
    assert!(stderr.contains("stdin line 6") && stderr.contains("Red is to move"), "{stderr}");
}

#[test]
fn a_match_against_a_protocol_engine_keeps_records_that_agree_with_its_report() {
    let tmp = tempfile::Builder::new().prefix("boardwatch-dots-match-").tempdir().unwrap();
    let records = tmp.path().join("records");
    let engine = env!("CARGO_BIN_EXE_boardwatch");
    let output = boardwatch(
        &["dots", "match", "--size", "7x6", "--games", "2", "--millis", "20", "--records", records.to_str().unwrap(), "--", engine, "dots", "engine"],
        "",
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    let games: Vec<serde_json::Value> = stdout.lines().filter(|l| l.starts_with('{')).map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(games.len(), 2, "{stdout}");
    let mut colours: Vec<&str> = games.iter().map(|g| g["boardwatch"].as_str().unwrap()).collect();
    colours.sort();
    assert_eq!(colours, ["black", "red"], "colours alternate");
    let logged = std::fs::read_to_string(records.join("results.jsonl")).unwrap();
    assert_eq!(logged.lines().count(), 2, "{logged}");
    let summary = stdout.lines().last().unwrap();
    let wins = games.iter().filter(|g| g["result"] == "win").count();
    assert!(summary.contains(&format!("boardwatch {wins} wins")), "{summary}");
    for game in &games {
        assert_eq!(game["ended"], "Full", "{game}");
        let (ours, theirs) = (game["captured_by_boardwatch"].as_u64().unwrap(), game["captured_by_opponent"].as_u64().unwrap());
        let expected = match ours.cmp(&theirs) {
            std::cmp::Ordering::Greater => "win",
            std::cmp::Ordering::Equal => "draw",
            std::cmp::Ordering::Less => "loss",
        };
        assert_eq!(game["result"], expected, "{game}");
        // The record replays to the reported score.
        let sgf = records.join(format!("game-{:04}.sgf", game["game"].as_u64().unwrap()));
        let shown = boardwatch(&["dots", "show", sgf.to_str().unwrap()], "");
        let shown = String::from_utf8_lossy(&shown.stdout);
        let (red, black) = if game["boardwatch"] == "red" { (ours, theirs) } else { (theirs, ours) };
        assert!(shown.contains(&format!("captured: red {red}, black {black}; over: Full")), "{shown}");
        assert!(shown.contains(&format!("{} moves", game["moves"])), "{shown}");
    }
}

#[test]
fn a_match_names_an_opponent_that_cannot_start_or_does_not_speak_the_protocol() {
    let output = boardwatch(&["dots", "match", "--", "/nonexistent/oppai"], "");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("/nonexistent/oppai"), "{stderr}");
    let output = boardwatch(&["dots", "match", "--millis", "20", "--", "sh", "-c", "while read l; do echo hello; done"], "");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("not a protocol response") && stderr.contains("\"hello\""), "{stderr}");
    let output = boardwatch(&["dots", "match", "--size", "20by20", "--", "sh"], "");
    assert!(String::from_utf8_lossy(&output.stderr).contains("--size \"20by20\""));
    let output = boardwatch(&["dots", "match", "--size", "3x20", "--", "sh"], "");
    assert!(String::from_utf8_lossy(&output.stderr).contains("--size 3x20"));
}
