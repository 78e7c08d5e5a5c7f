//! `boardwatch sokoban solve` as a user runs it: JSON reports, `--optimise pushes`, bad limits.

use std::process::Command;

use boardwatch::games::sokoban::level::parse_collection;
use boardwatch::games::sokoban::solver::verify;

fn boardwatch(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_boardwatch")).args(args).output().unwrap()
}

const MICROBAN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/sokoban/microban_155.xsb");

#[test]
fn solve_reports_verified_json_and_the_fewest_pushes_when_asked() {
    let levels = parse_collection(include_str!("../samples/sokoban/microban_155.xsb")).unwrap();
    for (level, optimise) in [(2, false), (2, true), (5, true)] {
        let mut args = vec!["sokoban", "solve", MICROBAN, "--level", if level == 2 { "2" } else { "5" }, "--time-limit", "20", "--json"];
        if optimise {
            args.extend(["--optimise", "pushes"]);
        }
        let output = boardwatch(&args);
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(report["solved"], true, "{report}");
        let lurd = report["lurd"].as_str().unwrap();
        assert!(verify(&levels[level - 1], lurd), "level {level}: {lurd}");
        let pushes = lurd.chars().filter(char::is_ascii_uppercase).count();
        assert_eq!(report["pushes"].as_u64(), Some(pushes as u64));
        assert_eq!(report["moves"].as_u64(), Some(lurd.len() as u64));
        if optimise {
            assert_eq!(report["fewest_pushes"], true, "{report}");
        } else {
            assert!(report.get("fewest_pushes").is_none(), "{report}");
        }
    }
}

#[test]
fn bad_time_limits_and_optimise_values_are_named() {
    let output = boardwatch(&["sokoban", "solve", MICROBAN, "--level", "1", "--time-limit", "0"]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("--time-limit"));
    let output = boardwatch(&["sokoban", "solve", MICROBAN, "--level", "1", "--optimise", "boxes"]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("pushes"), "{}", String::from_utf8_lossy(&output.stderr));
}

#[test]
fn memory_limits_are_checked_and_stated() {
    for bad in ["0", "-1", "inf"] {
        let output = boardwatch(&["sokoban", "solve", MICROBAN, "--level", "1", "--memory-limit", bad]);
        assert!(!output.status.success(), "--memory-limit {bad} was accepted");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("--memory-limit"), "{stderr}");
    }
    // A small budget still solves small levels, and the table states the budget.
    let tmp = tempfile::Builder::new().prefix("boardwatch-sokoban-").tempdir().unwrap();
    let two = tmp.path().join("two.xsb");
    std::fs::write(&two, "; 1\n#####\n#@$.#\n#####\n\n; 2\n######\n#@$ .#\n######\n").unwrap();
    let output = boardwatch(&["sokoban", "bench", two.to_str().unwrap(), "--time-limit", "5", "--memory-limit", "0.25"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("solved 2/2") && stdout.contains("0.2 GiB of memory each"), "{stdout}");
}
