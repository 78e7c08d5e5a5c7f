//! `boardwatch cops solve | play | match` on small maps written by the test.

use std::io::Write;
use std::process::{Command, Stdio};

use boardwatch::games::cops::solver::{solve, DEFAULT_MAX_STATES};
use boardwatch::games::cops::{Map, Mode};

/// The map in a folder of its own, removed when the returned `TempDir` is dropped.
fn write_map(name: &str, text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::Builder::new().prefix("boardwatch-cops-").tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

fn boardwatch(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_boardwatch")).args(args).output().unwrap()
}

const MAP: &str = "2000100\n0110103\n0000000\n1011010\n4000000\n";

#[test]
fn solve_prints_the_json_shape_of_the_issue() {
    let (_dir, path) = write_map("solve.txt", MAP);
    let output = boardwatch(&["cops", "solve", path.to_str().unwrap(), "--json"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let map = Map::parse(MAP).unwrap();
    let solution = solve(&map, DEFAULT_MAX_STATES).unwrap();
    for (key, mode) in [("police_mode", Mode::Police), ("thief_mode", Mode::Thief)] {
        let moves = solution.moves_to_capture(&map.start, mode.first_piece()).expect("the police catch him on this map");
        assert_eq!(report[key]["winner"], "police", "{report}");
        assert_eq!(report[key]["moves"], moves, "{report}");
    }
    assert!(report["seconds"].as_f64().unwrap() >= 0.0);
}

#[test]
fn a_bad_map_is_an_error_naming_file_line_and_column() {
    let (_dir, path) = write_map("bad.txt", "203\n0x4\n");
    let output = boardwatch(&["cops", "solve", path.to_str().unwrap()]);
    assert!(!output.status.success());
    let message = String::from_utf8_lossy(&output.stderr);
    assert!(message.contains("bad.txt") && message.contains("line 2, column 2"), "{message}");
}

#[test]
fn match_reports_both_modes_and_writes_records() {
    let (_dir, path) = write_map("match.txt", MAP);
    let records = path.with_extension("jsonl");
    let output = boardwatch(&["cops", "match", path.to_str().unwrap(), "--police", "seed", "--thief", "perfect", "--games", "3", "--json", "--records", records.to_str().unwrap()]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let reports: Vec<serde_json::Value> = String::from_utf8_lossy(&output.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(reports.len(), 2);
    assert_eq!(reports[0]["mode"], "police");
    assert_eq!(reports[1]["mode"], "thief");
    for report in &reports {
        assert_eq!(report["police"], "classic");
        assert_eq!(report["police_wins"].as_u64().unwrap() + report["thief_wins"].as_u64().unwrap(), 3);
    }
    let text = std::fs::read_to_string(&records).unwrap();
    assert_eq!(text.lines().filter(|l| l.contains(r#""type":"start""#)).count(), 6);
    assert_eq!(text.lines().filter(|l| l.contains(r#""type":"end""#)).count(), 6);
}

#[test]
fn play_in_the_terminal_takes_typed_moves() {
    // Policeman 1 stands left of the thief: `d` (right) captures at once.
    let (_dir, path) = write_map("play.txt", "0230\n0004\n");
    let record = path.with_extension("jsonl");
    let mut child = Command::new(env!("CARGO_BIN_EXE_boardwatch"))
        .args(["cops", "play", path.to_str().unwrap(), "--mode", "police", "--ai", "perfect", "--record", record.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"x\nd\n").unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("type w, a, s, d"), "{text}");
    assert!(text.contains("The police win"), "{text}");
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&record).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[1]["to"], serde_json::json!([0, 2]));
    assert_eq!(lines[2]["winner"], "police");
}
