//! `boardwatch play` over HTTP, Sokoban: collections, games kept on the server (moves, refused
//! moves, undo/redo, walking, dragging, LURD), the solver in the background (found, stepped
//! along, cancelled, proven unsolvable) and the editor's operations and save checks.

mod daemon_common;
mod play_common;

use std::time::{Duration, Instant};

use boardwatch::games::sokoban::level::{parse_collection, Level};
use std::sync::atomic::AtomicBool;

use boardwatch::games::sokoban::solver::{solve, verify, Outcome};
use daemon_common::{client, temp_dir, Daemon};
use play_common::{get, post, start_play};
use serde_json::{json, Value};

fn microban() -> Vec<Level> {
    parse_collection(&std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/samples/sokoban/microban_155.xsb")).unwrap()).unwrap()
}

/// The state's rows back as XSB (inside floor `-` as space, trailing spaces dropped).
fn xsb(state: &Value) -> String {
    state["rows"].as_array().unwrap().iter().map(|r| r.as_str().unwrap().replace('-', " ").trim_end().to_string() + "\n").collect()
}

fn start(server: &Daemon, collection: &str, level: Value) -> (String, Value) {
    let (status, state) = post(server, "/sokoban/games", &json!({"collection": collection, "level": level}).to_string());
    assert_eq!(status, 201, "{state}");
    (state["id"].as_str().unwrap().to_string(), state)
}

/// Waits for the solver to finish; its final state.
fn wait_for_solver(server: &Daemon, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (status, state) = get(server, &format!("/sokoban/games/{id}"));
        assert_eq!(status, 200, "{state}");
        if state["solver"]["state"] != "solving" {
            return state;
        }
        assert!(Instant::now() < deadline, "the solver never finished: {state}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_level_is_played_undone_imported_and_refused_moves_change_nothing() {
    let server = start_play::<&str>(&[]);
    for path in ["/", "/sokoban"] {
        let response = client().get(server.url(path)).send().unwrap();
        assert_eq!(response.status(), 200, "{path}");
        let text = response.text().unwrap();
        assert!(!text.to_lowercase().contains("seed"), "{path} speaks of the seed");
        if path == "/" {
            assert!(text.contains("href=\"sokoban\""), "the games index links the Sokoban page");
        }
    }
    let (status, list) = get(&server, "/sokoban/collections");
    assert_eq!(status, 200);
    assert_eq!(list["collections"][0]["name"], "microban");
    assert_eq!(list["collections"][0]["levels"].as_array().unwrap().len(), 155);
    assert_eq!(list["collections"][1]["levels"].as_array().unwrap().len(), 0);

    let levels = microban();
    let (id, state) = start(&server, "microban", json!(1));
    assert_eq!(xsb(&state), levels[0].to_xsb());
    assert_eq!((state["moves"].as_u64(), state["pushes"].as_u64(), &state["solved"]), (Some(0), Some(0), &json!(false)));
    assert_eq!(state["can_undo"], false);
    let moves = format!("/sokoban/games/{id}/move");
    let refused = [
        (r#"{"direction": "north"}"#, 400, "not one of up, down, left, right"),
        (r#"{"direction": "up", "walk": [1, 1]}"#, 400, "exactly one"),
        (r#"{"walk": [40, 1]}"#, 400, "outside the level"),
        (r#"{"walk": [0, 0]}"#, 400, "cannot walk"),
        (r#"{"drag": {"from": [1, 1], "to": [1, 2]}}"#, 400, "no box"),
        (r#"{"steps": 3}"#, 400, "unknown field"),
        ("", 400, "needs a JSON body"),
    ];
    for (body, code, words) in refused {
        let (status, answer) = post(&server, &moves, body);
        assert_eq!(status, code, "{body}: {answer}");
        assert!(answer["error"].as_str().unwrap().contains(words), "{body}: {answer}");
    }
    for (path, code, words) in [("undo", 409, "nothing to undo"), ("redo", 409, "nothing to redo"), ("step", 409, "press Solve"), ("fly", 404, "no action")] {
        let (status, answer) = post(&server, &format!("/sokoban/games/{id}/{path}"), "");
        assert_eq!(status, code, "{path}: {answer}");
        assert!(answer["error"].as_str().unwrap().contains(words), "{path}: {answer}");
    }
    assert_eq!(get(&server, &format!("/sokoban/games/{id}")).1, state, "refused requests change nothing");

    // A walk is many moves and no push; undo takes them back one at a time, redo replays them.
    let player = [state["player"][0].as_u64().unwrap() as usize, state["player"][1].as_u64().unwrap() as usize];
    let (status, walked) = post(&server, &moves, &json!({"walk": [player[0] + 1, player[1]]}).to_string());
    assert_eq!(status, 200, "{walked}");
    assert_eq!((walked["moves"].as_u64(), walked["pushes"].as_u64()), (Some(1), Some(0)));
    let (_, undone) = post(&server, &format!("/sokoban/games/{id}/undo"), "");
    assert_eq!(xsb(&undone), levels[0].to_xsb());
    assert_eq!(undone["can_redo"], true);
    let (_, redone) = post(&server, &format!("/sokoban/games/{id}/redo"), "");
    assert_eq!(xsb(&redone), xsb(&walked));

    // A LURD with an illegal move is refused and names the move; a solution solves the level.
    let (status, answer) = post(&server, &format!("/sokoban/games/{id}/lurd"), r#"{"lurd": "ddx"}"#);
    assert_eq!(status, 400, "{answer}");
    assert!(answer["error"].as_str().unwrap().contains("move 3"), "{answer}");
    let Outcome::Solved { lurd: solution, .. } = solve(&levels[0], None, &AtomicBool::new(false)) else { panic!("Microban 1 is solvable") };
    let solution = solution.as_str();
    let (status, solved) = post(&server, &format!("/sokoban/games/{id}/lurd"), &json!({ "lurd": solution }).to_string());
    assert_eq!(status, 200, "{solved}");
    assert_eq!(solved["solved"], true);
    assert_eq!(solved["lurd"], solution);
    let pushes = solution.chars().filter(char::is_ascii_uppercase).count();
    assert_eq!(solved["message"], format!("Solved in {} moves, {pushes} pushes.", solution.len()));
    let (_, restarted) = post(&server, &format!("/sokoban/games/{id}/restart"), "");
    assert_eq!((xsb(&restarted), restarted["moves"].as_u64()), (levels[0].to_xsb(), Some(0)));

    // A box dragged to a square: pushed along the best path (Microban 1: the box at row 4,
    // column 3 from 0, one square left).
    let (id2, state2) = start(&server, "microban", json!("1"));
    assert_eq!(&state2["rows"][4].as_str().unwrap()[3..4], "$");
    let (status, dragged) = post(&server, &format!("/sokoban/games/{id2}/move"), r#"{"drag": {"from": [4, 3], "to": [4, 2]}}"#);
    assert_eq!(status, 200, "{dragged}");
    assert_eq!(dragged["pushes"], 1);
    assert_eq!(&dragged["rows"][4].as_str().unwrap()[2..4], "$@", "the player stands where the box was");
    let (status, answer) = post(&server, &format!("/sokoban/games/{id2}/move"), r#"{"drag": {"from": [4, 2], "to": [0, 0]}}"#);
    assert_eq!(status, 400, "{answer}");
    assert!(answer["error"].as_str().unwrap().contains("cannot be pushed"), "{answer}");
    let (status, _) = post(&server, "/sokoban/games", r#"{"collection": "microban", "level": 156}"#);
    assert_eq!(status, 404);
    let (status, answer) = post(&server, "/sokoban/games", r#"{"collection": "nope", "level": 1}"#);
    assert_eq!(status, 404);
    assert!(answer["error"].as_str().unwrap().contains("collections: microban, mine"), "{answer}");
}

#[test]
fn the_solver_finds_steps_cancels_and_proves() {
    let tmp = temp_dir("sokoban-levels");
    let folder = tmp.path();
    // A level whose box starts in a corner (proven unsolvable at once) and a file that is no level.
    std::fs::write(folder.join("corner.xsb"), "######\n#$  .#\n#  @ #\n######\n").unwrap();
    std::fs::write(folder.join("broken.txt"), "#####\n#@$x#\n#####\n").unwrap();
    let server = start_play(&["--sokoban-levels".as_ref(), folder.as_os_str()]);
    let (_, list) = get(&server, "/sokoban/collections");
    assert_eq!(list["collections"][1]["levels"][0]["title"], "corner");
    let problems = list["problems"].as_array().unwrap();
    assert!(
        problems.len() == 1 && problems[0].as_str().unwrap().contains("broken.txt") && problems[0].as_str().unwrap().contains("line 2, column 4"),
        "{list}"
    );

    let levels = microban();
    let (id, _) = start(&server, "microban", json!(3));
    let (status, answer) = post(&server, &format!("/sokoban/games/{id}/solve"), r#"{"time_limit": 0}"#);
    assert_eq!(status, 400, "{answer}");
    let (status, started) = post(&server, &format!("/sokoban/games/{id}/solve"), r#"{"time_limit": 20}"#);
    assert_eq!(status, 202, "{started}");
    let found = wait_for_solver(&server, &id);
    let solver = &found["solver"];
    assert_eq!(solver["state"], "found", "{found}");
    let lurd = solver["lurd"].as_str().unwrap();
    assert!(verify(&levels[2], lurd), "the reported solution solves the level");
    assert_eq!(solver["length"].as_u64(), Some(lurd.len() as u64));
    // Step along it to the end, back one, forward again.
    let step = format!("/sokoban/games/{id}/step");
    let mut state = found.clone();
    for _ in 0..lurd.len() {
        let (status, next) = post(&server, &step, "");
        assert_eq!(status, 200, "{next}");
        state = next;
    }
    assert_eq!(state["solved"], true);
    assert_eq!(state["lurd"], lurd);
    assert_eq!(post(&server, &step, "").0, 409, "past the end");
    let (_, back) = post(&server, &format!("/sokoban/games/{id}/step-back"), "");
    assert_eq!((back["solved"].clone(), back["solver"]["next"].as_u64()), (json!(false), Some(lurd.len() as u64 - 1)));
    // A move by hand drops the solution.
    let (_, undone) = post(&server, &format!("/sokoban/games/{id}/undo"), "");
    assert_eq!(undone["solver"]["state"], "idle");

    // Microban 93 takes this solver far longer than a moment: cancelled while it runs.
    let (hard, _) = start(&server, "microban", json!(93));
    let (status, _) = post(&server, &format!("/sokoban/games/{hard}/solve"), r#"{"time_limit": 120}"#);
    assert_eq!(status, 202);
    assert_eq!(post(&server, &format!("/sokoban/games/{hard}/solve"), "").0, 409, "one search at a time");
    let (status, busy) = post(&server, &format!("/sokoban/games/{id}/solve"), "");
    assert_eq!(status, 409, "one search at a time over all games: {busy}");
    assert!(busy["error"].as_str().unwrap().contains("busy with another game"), "{busy}");
    let (status, cancelled) = post(&server, &format!("/sokoban/games/{hard}/cancel"), "");
    assert_eq!(status, 200, "{cancelled}");
    assert_eq!(cancelled["solver"]["state"], "cancelled");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(get(&server, &format!("/sokoban/games/{hard}")).1["solver"]["state"], "cancelled", "a late answer is dropped");

    let (corner, _) = start(&server, "mine", json!("corner"));
    post(&server, &format!("/sokoban/games/{corner}/solve"), r#"{"time_limit": 5}"#);
    assert_eq!(wait_for_solver(&server, &corner)["solver"]["state"], "unsolvable");
}

/// An editor grid (20 rows) with `level` drawn from its top left corner.
fn grid(level: &[&str]) -> Vec<String> {
    (0..20).map(|y| format!("{:<30}", level.get(y).copied().unwrap_or(""))).collect()
}

#[test]
fn the_editor_edits_checks_and_saves_with_overwrite_confirmation() {
    let tmp = temp_dir("sokoban-saved");
    let folder = tmp.path();
    let server = start_play(&["--sokoban-levels".as_ref(), folder.as_os_str()]);
    let edit = |body: Value| post(&server, "/sokoban/editor", &body.to_string());
    // Place, remove, combine.
    let (status, placed) = edit(json!({"rows": grid(&[]), "op": "place", "x": 2, "y": 1, "piece": "goal"}));
    assert_eq!(status, 200, "{placed}");
    let (_, placed) = edit(json!({"rows": placed["rows"], "op": "place", "x": 2, "y": 1, "piece": "box"}));
    assert_eq!(&placed["rows"][1].as_str().unwrap()[2..3], "*", "box and goal combine");
    let (_, removed) = edit(json!({"rows": placed["rows"], "op": "remove", "x": 2, "y": 1}));
    assert_eq!(&removed["rows"][1].as_str().unwrap()[2..3], ".", "removing takes the box first");
    let (_, shifted) = edit(json!({"rows": removed["rows"], "op": "shift", "dx": -3, "dy": 0}));
    assert_eq!(&shifted["rows"][1].as_str().unwrap()[29..30], ".", "shifting wraps around");
    let (_, filled) = edit(json!({"rows": grid(&["", " @"]), "op": "fill"}));
    assert_eq!(filled["rows"][0], "#".repeat(30));
    assert_eq!(&filled["rows"][1].as_str().unwrap()[..3], "#@#");
    let (_, cleared) = edit(json!({"rows": filled["rows"], "op": "clear"}));
    assert_eq!(cleared["rows"], json!(grid(&[])));
    let bad = [
        (json!({"rows": grid(&["#x"]), "op": "clear"}), "row 1, column 2"),
        (json!({"rows": grid(&[]), "op": "place", "x": 30, "y": 0, "piece": "box"}), "outside"),
        (json!({"rows": grid(&[]), "op": "place", "x": 1, "y": 0, "piece": "crate"}), "not one of"),
        (json!({"rows": grid(&[]), "op": "spin"}), "not one of"),
        (json!({"rows": grid(&[]), "op": "shift"}), "dx"),
        (json!({"rows": grid(&[]), "op": "normalise"}), "exactly one player"),
    ];
    for (body, words) in bad {
        let (status, answer) = edit(body.clone());
        assert_eq!(status, 400, "{body}: {answer}");
        assert!(answer["error"].as_str().unwrap().contains(words), "{body}: {answer}");
    }
    // Normalise drops what the player cannot reach and centres; a symmetry turns the level.
    let level = ["#######", "#@ $ .#", "#######", "", "  #.#"];
    let (_, normal) = edit(json!({"rows": grid(&level), "op": "normalise"}));
    let text: Vec<&str> = normal["rows"].as_array().unwrap().iter().map(|r| r.as_str().unwrap().trim()).filter(|r| !r.is_empty()).collect();
    assert_eq!(text, ["#######", "#@ $ .#", "#######"]);
    let (_, turned) = edit(json!({"rows": grid(&level), "op": "symmetry", "index": 1}));
    assert!(turned["rows"].as_array().unwrap().iter().any(|r| r.as_str().unwrap().trim() == "#. $ @#"), "{turned}");

    // The save checks, each refused with its reason.
    let save = |rows: Vec<String>, name: &str, overwrite: bool| {
        post(&server, "/sokoban/editor/save", &json!({"rows": rows, "name": name, "overwrite": overwrite}).to_string())
    };
    let refusals = [
        (grid(&["#####", "#$ .#", "#####"]), "ok", "exactly one player"),
        (grid(&["#####", "#@$ #", "#####"]), "ok", "as many goals as boxes"),
        (grid(&["#####", "#@ *#", "#####"]), "ok", "already on a goal"),
        (grid(&["#####", "#@$. ", "#####"]), "ok", "walk off the board"),
        (grid(&level[..3]), "bad name", "a level name"),
    ];
    for (rows, name, words) in refusals {
        let (status, answer) = save(rows, name, false);
        assert_eq!(status, 400, "{words}: {answer}");
        assert!(answer["error"].as_str().unwrap().contains(words), "{words}: {answer}");
    }
    let (status, saved) = save(grid(&level[..3]), "line", false);
    assert_eq!(status, 201, "{saved}");
    assert_eq!(saved["xsb"], "#######\n#@ $ .#\n#######\n");
    let written = std::fs::read_to_string(folder.join("line.xsb")).unwrap();
    assert_eq!(parse_collection(&written).unwrap()[0].to_xsb(), "#######\n#@ $ .#\n#######\n");
    // The same name again: asked to confirm, then replaced.
    let other = ["######", "#@$ .#", "######"];
    let (status, answer) = save(grid(&other), "line", false);
    assert_eq!((status, &answer["exists"]), (409, &json!(true)), "{answer}");
    let (status, replaced) = save(grid(&other), "line", true);
    assert_eq!((status, &replaced["replaced"]), (200, &json!(true)), "{replaced}");
    let (_, list) = get(&server, "/sokoban/collections");
    assert_eq!(list["collections"][1]["levels"].as_array().unwrap().len(), 1);
    let (_, state) = start(&server, "mine", json!("line"));
    assert_eq!(xsb(&state), "######\n#@$ .#\n######\n");
    // A saved level loads back into the editor, centred.
    let (status, loaded) = get(&server, "/sokoban/collections/mine/1");
    assert_eq!(status, 200, "{loaded}");
    assert!(loaded["editor_rows"][9].as_str().unwrap().contains("#@$ .#"), "{loaded}");
}

#[test]
fn the_terminal_game_moves_undoes_solves_and_steps() {
    use std::io::Write;
    let mut child = std::process::Command::new(play_common::binary())
        .args(["sokoban", "play", concat!(env!("CARGO_MANIFEST_DIR"), "/samples/sokoban/microban_155.xsb"), "--level", "2"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"r\nundo\nredo\nxyz\nrestart\nsolve 20\nstep\nstep\nstep 9\n").unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("1 moves, 0 pushes") && text.contains("\"xyz\": not a command"), "{text}");
    let lurd = text.lines().skip_while(|l| !l.starts_with("a solution:")).nth(1).expect("a solution printed");
    assert!(verify(&microban()[1], lurd), "{lurd}");
    // The input ends before the solution is played out: the last board is 11 steps in.
    assert!(lurd.len() > 11);
    let pushes = lurd[..11].chars().filter(char::is_ascii_uppercase).count();
    assert!(text.trim_end().ends_with(&format!("11 moves, {pushes} pushes")), "{text}");
}
