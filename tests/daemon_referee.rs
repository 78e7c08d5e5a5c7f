//! The daemon's referee (issue 12): a misread that stays becomes an error, the record
//! resynchronises when play goes on, the API shows both plainly, and the strict referee of the
//! original program is a configuration key and an operator action that survive a restart.

mod daemon_common;

use daemon_common::{moves_of, temp_dir, write_config, Daemon, TOKEN};
use serde_json::{json, Value};

const START: [&str; 8] = [".b.b.b.b", "b.b.b.b.", ".b.b.b.b", "........", "........", "w.w.w.w.", ".w.w.w.w", "w.w.w.w."];

fn board(edit: impl FnOnce(&mut [String; 8])) -> [String; 8] {
    let mut rows = START.map(String::from);
    edit(&mut rows);
    rows
}

fn set(rows: &mut [String; 8], row: usize, col: usize, ch: char) {
    let mut chars: Vec<char> = rows[row].chars().collect();
    chars[col] = ch;
    rows[row] = chars.into_iter().collect();
}

/// 9-13; then the man is seen back on 9 for 4 s (an error once it has stayed 3 s); then White's
/// 24-20 from the position after 9-13 (the board comes right and play went on); then two plies
/// in one reading.
fn write_stream(dir: &std::path::Path) {
    let after_9_13 = board(|r| {
        set(r, 2, 1, '.');
        set(r, 3, 0, 'b');
    });
    let back_home = board(|_| {});
    let answered = {
        let mut r = after_9_13.clone();
        set(&mut r, 5, 6, '.');
        set(&mut r, 4, 7, 'w');
        r
    };
    let mut lines = vec![json!({"grid": START, "t": 0.0}), json!({"grid": after_9_13, "t": 1.0})];
    for t in [2.0, 3.0, 4.0, 5.0, 6.0] {
        lines.push(json!({"grid": back_home, "t": t}));
    }
    lines.push(json!({"grid": answered, "t": 7.0}));
    // 10-14 and 22-18 in one reading: the first never seen finished.
    let mut two_more = answered.clone();
    set(&mut two_more, 2, 3, '.');
    set(&mut two_more, 3, 2, 'b');
    set(&mut two_more, 5, 2, '.');
    set(&mut two_more, 4, 3, 'w');
    // A recogniser hands a still board on again while it stays (the camera pipeline does so
    // every half second): plies seen at once are taken once the board has stayed 1 s.
    for t in [8.0, 8.5, 9.0] {
        lines.push(json!({"grid": two_more, "t": t}));
    }
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.join("game.jsonl"), text).unwrap();
}

/// A folder with the stream and a configuration of one English board reading it, with `extra`
/// keys for the board: the folder (removed when the `TempDir` is dropped) and the configuration.
fn setup(name: &str, extra: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = temp_dir(name);
    let dir = tmp.path();
    write_stream(&dir);
    let board = format!(
        "[[boards]]\nid = \"table1\"\nvariant = \"english\"\n{extra}\n\
         source = {{ kind = \"observations\", path = \"game.jsonl\", pace_ms = 5 }}\n"
    );
    let config = write_config(&dir, &board);
    (tmp, config)
}

fn events(daemon: &Daemon) -> Vec<Value> {
    daemon.get_json("/boards/table1/events?after=0").as_array().unwrap().clone()
}

#[test]
fn an_error_then_resynchronised_record_and_a_strict_referee_that_survives_a_restart() {
    let (_tmp, config) = setup("referee", "");
    let mut daemon = Daemon::start(&config);
    let state = daemon.wait_for_board("table1", "four moves", |s| s["game"]["moves"].as_array().is_some_and(|m| m.len() == 4));
    assert_eq!(state["game"]["moves"], json!(["9-13", "24-20", "10-14", "22-18"]));
    assert_eq!(state["game"]["inferred"], json!([2]), "the unseen ply is marked in the state");
    assert_eq!(state["game"]["referee"], "tolerant");
    assert_eq!(state["game"]["holding"], false);
    let all = events(&daemon);
    let kinds: Vec<&str> = all.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["init", "move", "uncertain", "error", "resynchronised", "move", "move", "move"], "{all:#?}");
    assert_eq!(all[6]["inferred"], true);
    let error = &all[3];
    assert_eq!(error["text"], "Error: Player2- Invalid move");
    assert_eq!(error["t"], 5.0, "an error once the board stayed 3 s");
    assert_eq!(all[4]["line"], "5: Now is OK: record resynchronised");
    assert!(all[4]["detail"].as_str().unwrap().contains("24-20"), "{}", all[4]);
    assert_eq!(moves_of(&all), ["9-13", "24-20", "10-14", "22-18"]);

    // The operator switches to the strict referee: an event, and the state says so.
    let (status, answer) = daemon.act("table1", Some(TOKEN), r#"{"op": "referee", "strict": true}"#);
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["events"][0]["kind"], "referee");
    assert_eq!(daemon.get_json("/boards/table1")["game"]["referee"], "strict");
    let (status, answer) = daemon.act("table1", Some(TOKEN), r#"{"op": "referee", "strict": "yes"}"#);
    assert_eq!(status, 400, "{answer}");
    assert!(answer["error"].as_str().unwrap().contains("strict"), "{answer}");

    // Restarted, the daemon replays its log: the same moves, and still the strict referee.
    assert!(daemon.terminate().success());
    let daemon = Daemon::start(&config);
    let state = daemon.wait_for_board("table1", "the game back", |s| s["game"]["moves"].as_array().is_some_and(|m| m.len() == 4));
    assert_eq!(state["game"]["referee"], "strict");
    assert_eq!(state["game"]["moves"], json!(["9-13", "24-20", "10-14", "22-18"]));
}

#[test]
fn a_board_configured_strict_errs_at_once() {
    let (_tmp, config) = setup("referee-strict", "strict = true");
    let daemon = Daemon::start(&config);
    let state = daemon.wait_for_board("table1", "an error", |s| s["game"]["holding"] == true);
    assert_eq!(state["game"]["referee"], "strict");
    // Held to the end of the stream: 24-20 after the error does not end it in strict mode.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let all = events(&daemon);
    let kinds: Vec<&str> = all.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["init", "move", "error"], "{all:#?}");
    assert_eq!(all[2]["t"], 2.0, "at once");
}
