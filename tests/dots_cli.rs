//! `boardwatch dots replay | show | move` as a user or a differential-test harness runs them.

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
