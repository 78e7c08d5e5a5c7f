//! `boardwatch track` as a user runs it: JSON lines in, events out, PDN written.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use boardwatch::draughts::game::replay;
use boardwatch::draughts::pdn::{read_games, ReadMode};
use boardwatch::draughts::Variant;
use serde_json::Value;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_boardwatch"))
}

fn sample() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/track_sample.jsonl"))
}

/// A fresh folder in the system's temporary directory, removed when the `TempDir` is dropped.
fn temp_dir() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("boardwatch-test-").tempdir().unwrap()
}

fn events(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect()
}

#[test]
fn tracks_the_sample_and_writes_pdn() {
    let tmp = temp_dir();
    let pdn = tmp.path().join("sample.pdn");
    let output = bin().arg("track").arg(sample()).arg("--pdn").arg(&pdn).output().expect("runs");
    assert!(output.status.success(), "stderr: {}", String::from_utf8_lossy(&output.stderr));
    let events = events(&output.stdout);
    let lines: Vec<&str> = events.iter().map(|e| e["line"].as_str().unwrap()).collect();
    assert_eq!(
        lines,
        [
            "1: Init Ready",
            "2: OK: Player1- Move Success",
            "3: Wait: Player2- Board unclear",
            "4: OK: Player2- Move Success",
            "5: Back: Player2 to move",
            "6: OK: Player2- Move Success",
            "7: OK: Player1- Move Success",
            "8: OK: Player2- Capture success",
            "9: Game over: Draw",
        ]
    );
    let capture = &events[7];
    assert_eq!(capture["kind"], "move");
    assert_eq!(capture["move"], "18x9");
    assert_eq!(capture["captured"], serde_json::json!(["14"]));
    assert_eq!(capture["t"], 8.0);
    assert_eq!(capture["fen"], "B:W9,21,23-32:B1-8,11-13");
    assert_eq!(events[3]["t"], 5.0, "decided by the probability reading");
    let text = std::fs::read_to_string(&pdn).expect("pdn written");
    assert!(text.contains("[Result \"1/2-1/2\"]\n[GameType \"23\"]\n"), "{text}");
    // Each move with the time of the observation that completed it as a clock comment.
    assert!(
        text.ends_with(
            "\n1. 9-13 {[%clock 0:00:02.0]} 1... 22-18 {[%clock 0:00:06.0]} 2. 10-14 {[%clock\n\
             0:00:07.0]} 2... 18x9 {[%clock 0:00:08.0]} 1/2-1/2\n\n"
        ),
        "{text}"
    );
    // The project's reader takes it back, and the moves replay.
    let records = read_games(&text, ReadMode::Strict).expect("valid PDN");
    let game = replay(&records[0], Variant::Pool).expect("legal moves");
    let plies: Vec<&str> = game.plies.iter().map(|p| p.text.as_str()).collect();
    assert_eq!(plies, ["9-13", "22-18", "10-14", "18x9"]);
}

#[test]
fn reads_standard_input_with_variant_and_kings() {
    let mut child = bin()
        .args(["track", "--variant", "russian", "--kings", "stacked", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("runs");
    // Russian: White first; c3-d4 is [5][2] -> [4][3].
    let grid =
        r#"{"grid": [".b.b.b.b", "b.b.b.b.", ".b.b.b.b", "........", "...w....", "w...w.w.", ".w.w.w.w", "w.w.w.w."]}"#;
    child.stdin.take().unwrap().write_all(format!("{grid}\n\n").as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let events = events(&output.stdout);
    assert_eq!(events[1]["line"], "2: OK: Player2- Move Success");
    assert_eq!(events[1]["move"], "c3-d4");
}

#[test]
fn a_malformed_line_is_reported_with_its_number() {
    let tmp = temp_dir();
    let input = tmp.path().join("bad.jsonl");
    let pdn = tmp.path().join("bad.pdn");
    let start =
        r#"{"grid": [".b.b.b.b", "b.b.b.b.", ".b.b.b.b", "........", "........", "w.w.w.w.", ".w.w.w.w", "w.w.w.w."]}"#;
    std::fs::write(&input, format!("{start}\n\n{{\"grid\": [\"........\"]}}\n{start}\n")).unwrap();
    let output = bin().arg("track").arg(&input).arg("--pdn").arg(&pdn).output().expect("runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("line 3") && stderr.contains("1 rows, expected 8"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(std::fs::read_to_string(&pdn).is_ok(), "the record so far is still written");

    let output = bin().args(["track", "--fen", "X:nonsense"]).stdin(Stdio::null()).output().expect("runs");
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("--fen"));
}

#[test]
fn a_refused_command_warns_and_goes_on() {
    let tmp = temp_dir();
    let input = tmp.path().join("refused.jsonl");
    let unclear =
        r#"{"grid": [".b.b.b.b", "b.b.b.b.", ".b.b.b.b", "........", "........", "?.w.w.w.", ".w.w.w.w", "w.w.w.w."]}"#;
    std::fs::write(&input, format!("{unclear}\n{{\"op\": \"set_start\"}}\n{{\"op\": \"resign\", \"player\": 2}}\n"))
        .unwrap();
    let output = bin().arg("track").arg(&input).output().expect("runs");
    assert!(output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("line 2"));
    let events = events(&output.stdout);
    assert_eq!(events.last().unwrap()["line"], "2: Game over: Player1 wins");
    assert_eq!(events.last().unwrap()["result"], "1-0");
}

/// Four readings of a board where Black's first man went back home after 9-13: no legal story.
fn man_moved_back(times: &[f64]) -> String {
    let start = [".b.b.b.b", "b.b.b.b.", ".b.b.b.b", "........", "........", "w.w.w.w.", ".w.w.w.w", "w.w.w.w."];
    let mut moved = start;
    moved[2] = "...b.b.b";
    moved[3] = "b.......";
    let line = |grid: &[&str; 8], t: f64| format!("{}\n", serde_json::json!({"grid": grid, "t": t}));
    let mut text = line(&moved, 0.0);
    for &t in times {
        text += &line(&start, t);
    }
    text
}

fn track_stdin(args: &[&str], input: &str) -> std::process::Output {
    let mut child = bin()
        .arg("track")
        .args(["--variant", "english"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().expect("finishes")
}

#[test]
fn strict_and_error_after_switch_the_referee() {
    let input = man_moved_back(&[1.0, 2.0, 3.0, 4.5]);
    let kinds = |out: &std::process::Output| -> Vec<(String, f64)> {
        assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
        events(&out.stdout)
            .iter()
            .filter(|e| e["kind"] == "error" || e["kind"] == "uncertain")
            .map(|e| (e["kind"].as_str().unwrap().to_string(), e["t"].as_f64().unwrap()))
            .collect()
    };
    // Tolerant (default): unclear at 1 s, an error once it has stayed 3 s.
    assert_eq!(kinds(&track_stdin(&[], &input)), [("uncertain".into(), 1.0), ("error".into(), 4.5)]);
    // --error-after 1.5: at 3 s.
    assert_eq!(kinds(&track_stdin(&["--error-after", "1.5"], &input)), [("uncertain".into(), 1.0), ("error".into(), 3.0)]);
    // --strict: at once, as the original program.
    assert_eq!(kinds(&track_stdin(&["--strict"], &input)), [("error".into(), 1.0)]);
}

#[test]
fn an_impossible_error_delay_is_refused_by_name() {
    let out = track_stdin(&["--error-after=-2"], "");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--error-after") && stderr.contains("-2"), "{stderr}");
}
