//! `boardwatch cops arena`: a small tournament end to end, its records, and its errors.

use std::process::Command;

use boardwatch::games::cops::arena::{replay, GameRecord};

fn boardwatch(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_boardwatch")).args(args).output().unwrap()
}

#[test]
fn a_tournament_reports_both_roles_and_writes_records_that_replay() {
    let tmp = tempfile::Builder::new().prefix("boardwatch-arena-").tempdir().unwrap();
    let dir = tmp.path();
    let records = dir.join("games.jsonl");
    let output = boardwatch(&[
        "cops",
        "arena",
        "--thief",
        "astar",
        "--police",
        "random",
        "--games",
        "6",
        "--seed",
        "40",
        "--param",
        "T=60",
        "--param",
        "k=4",
        "--json",
        "--records",
        records.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let lines: Vec<serde_json::Value> = String::from_utf8(output.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2, "both roles");
    assert_eq!((lines[0]["thief"].as_str(), lines[0]["police"].as_str()), (Some("astar"), Some("random")));
    assert_eq!((lines[1]["thief"].as_str(), lines[1]["police"].as_str()), (Some("random"), Some("astar")));
    let text = std::fs::read_to_string(&records).unwrap();
    let games: Vec<GameRecord> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(games.len(), 12);
    for (summary, games) in lines.iter().zip(games.chunks(6)) {
        assert_eq!(summary["games"], 6);
        let mean = games.iter().map(|g| g.payoff as f64).sum::<f64>() / 6.0;
        assert!((summary["mean_payoff"].as_f64().unwrap() - mean).abs() < 1e-9);
        let ends = ["caught", "escaped", "survived"].iter().map(|k| summary[k].as_u64().unwrap()).sum::<u64>();
        assert_eq!(ends, 6);
    }
    for game in &games {
        assert_eq!((game.params.t_max, game.params.k), (60, 4));
        assert!((0..=119).contains(&game.payoff));
        replay(game).unwrap();
    }
}

#[test]
fn a_bad_parameter_is_named() {
    for (param, named) in [("speed=3", "speed"), ("k=zero", "k"), ("p_wall_turn=2", "p_wall_turn"), ("n=1000", "n")] {
        let output = boardwatch(&["cops", "arena", "--games", "1", "--param", param]);
        assert!(!output.status.success());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(named) && !stderr.contains("panicked"), "{param}: {stderr}");
    }
    let output = boardwatch(&["cops", "arena", "--thief", "clever"]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("astar, strong"));
}

#[test]
fn a_crashing_external_player_does_not_stop_the_tournament() {
    let crash = format!("ext:sh {}/tests/data/cops_arena/crash.sh", env!("CARGO_MANIFEST_DIR"));
    let output = boardwatch(&[
        "cops",
        "arena",
        "--thief",
        &crash,
        "--police",
        "astar",
        "--games",
        "3",
        "--one-way",
        "--param",
        "T=30",
        "--param",
        "plan_ms=100",
        "--json",
    ]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(summary["games"], 3);
    let plans = &summary["thief_plans"];
    assert_eq!(plans["failed"].as_u64().unwrap() + plans["late"].as_u64().unwrap(), plans["plans"].as_u64().unwrap());
}
