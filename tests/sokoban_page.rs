//! The Sokoban page in headless Chromium (the `headless_chrome` crate): played with the keys, a
//! click to walk and a dragged box; solved by the solver and a LURD import; a level built in the
//! editor with the mouse (left places, right removes) and saved twice, the second time after the
//! overwrite question. Screenshots are checked cell by cell against the server's state. Skipped,
//! with a note, when Chromium is not installed.

mod daemon_common;
mod play_common;
mod chrome_common;

use std::path::Path;
use std::time::Duration;

use headless_chrome::protocol::cdp::Input::{DispatchMouseEventTypeOption, MouseButton};
use headless_chrome::protocol::cdp::Page::CaptureScreenshotFormatOption;
use headless_chrome::Tab;
use image::{Rgba, RgbaImage};
use play_common::{get, start_play};
use serde_json::{json, Value};
use chrome_common::{chromium, eval, launch, mouse_event, run, wait_for};

const WALL: [u8; 3] = [0x6b, 0x5a, 0x4a];
const FLOOR: [u8; 3] = [0xf4, 0xec, 0xd8];
const GOAL: [u8; 3] = [0xe3, 0x16, 0x1b];
const BOX: [u8; 3] = [0xd9, 0xa4, 0x41];
const BOX_ON_GOAL: [u8; 3] = [0x2f, 0xae, 0x4a];
const PLAYER: [u8; 3] = [0x1f, 0x5b, 0xff];

/// Presses at `from`, moves to `to` in steps, releases: a click when they are the same point.
fn press_and_release(tab: &Tab, from: (f64, f64), to: (f64, f64), button: MouseButton) {
    let held = if matches!(button, MouseButton::Right) { 2 } else { 1 };
    mouse_event(tab, DispatchMouseEventTypeOption::MouseMoved, from, MouseButton::None, 0);
    mouse_event(tab, DispatchMouseEventTypeOption::MousePressed, from, button.clone(), held);
    for i in 1..=6 {
        let t = i as f64 / 6.0;
        mouse_event(tab, DispatchMouseEventTypeOption::MouseMoved, (from.0 + (to.0 - from.0) * t, from.1 + (to.1 - from.1) * t), button.clone(), held);
    }
    mouse_event(tab, DispatchMouseEventTypeOption::MouseReleased, to, button, 0);
}

/// The centre of cell (row, column) of a grid on the page.
fn cell(tab: &Tab, grid: &str, [r, c]: [usize; 2]) -> (f64, f64) {
    let v = eval(tab, &format!("(() => {{ const r = document.querySelector('#{grid} .cell[data-r=\"{r}\"][data-c=\"{c}\"]').getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; }})()"));
    (v[0].as_f64().unwrap(), v[1].as_f64().unwrap())
}

fn screenshot(tab: &Tab, name: &str) -> RgbaImage {
    let png = tab.capture_screenshot(CaptureScreenshotFormatOption::Png, None, None, true).unwrap();
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&out, &png).unwrap();
    eprintln!("screenshot: {}", out.display());
    image::load_from_memory(&png).unwrap().to_rgba8()
}

fn near(a: [u8; 3], b: [u8; 3]) -> bool {
    a.iter().zip(b).all(|(x, y)| x.abs_diff(y) <= 24)
}

/// Every cell's centre has the colour its symbol in `rows` gives it.
fn check_cells(tab: &Tab, image: &RgbaImage, grid: &str, rows: &[String], name: &str) {
    check_cells_with(tab, image, grid, rows, name, |_| None);
}

/// As [`check_cells`], with `extra` giving the colour of symbols of the test's own.
fn check_cells_with(tab: &Tab, image: &RgbaImage, grid: &str, rows: &[String], name: &str, extra: impl Fn(char) -> Option<[u8; 3]>) {
    // Every cell's centre at once (one round trip to the browser).
    let centres = eval(tab, &format!("Array.from(document.querySelectorAll('#{grid} .cell')).map(e => {{ const r = e.getBoundingClientRect(); return [+e.dataset.r, +e.dataset.c, r.left + r.width / 2, r.top + r.height / 2]; }})"));
    let centre: std::collections::HashMap<[u64; 2], (f64, f64)> = centres
        .as_array()
        .unwrap()
        .iter()
        .map(|v| ([v[0].as_u64().unwrap(), v[1].as_u64().unwrap()], (v[2].as_f64().unwrap(), v[3].as_f64().unwrap())))
        .collect();
    let mut wrong = Vec::new();
    let mut checked = 0;
    for (r, row) in rows.iter().enumerate() {
        for (c, symbol) in row.chars().enumerate() {
            let expected = match symbol {
                _ if extra(symbol).is_some() => extra(symbol).unwrap(),
                '#' => WALL,
                '-' => FLOOR,
                '.' => GOAL,
                '$' => BOX,
                '*' => BOX_ON_GOAL,
                '@' | '+' => PLAYER,
                _ => continue,
            };
            let (x, y) = centre[&[r as u64, c as u64]];
            let Rgba([red, green, blue, _]) = *image.get_pixel(x.round() as u32, y.round() as u32);
            checked += 1;
            if !near([red, green, blue], expected) {
                wrong.push(format!("({r}, {c}) {symbol:?}: {:?} instead of {expected:?}", [red, green, blue]));
            }
        }
    }
    assert!(checked > 10, "{name}: only {checked} cells checked");
    assert!(wrong.is_empty(), "{name}: {wrong:?}");
}

fn server_state(server: &daemon_common::Daemon, tab: &Tab) -> Value {
    let id = eval(tab, "game.id");
    let (status, state) = get(server, &format!("/sokoban/games/{}", id.as_str().unwrap()));
    assert_eq!(status, 200, "{state}");
    state
}

fn rows(state: &Value) -> Vec<String> {
    state["rows"].as_array().unwrap().iter().map(|r| r.as_str().unwrap().to_string()).collect()
}

/// Waits until the page shows `moves` moves, and checks that the server agrees.
fn wait_moves(server: &daemon_common::Daemon, tab: &Tab, moves: u64) -> Value {
    wait_for(tab, &format!("{moves} moves"), "game.moves", |v| v == &json!(moves));
    let state = server_state(server, tab);
    assert_eq!(state["moves"], moves);
    state
}

#[test]
fn a_level_is_played_solved_and_a_new_one_built_in_the_editor() {
    let Some(binary) = chromium() else {
        eprintln!("note: chromium is not installed; Sokoban page test skipped (apt-get install chromium)");
        return;
    };
    let tmp = daemon_common::temp_dir("sokoban-page-levels");
    let folder = tmp.path();
    let server = start_play(&["--sokoban-levels".as_ref(), folder.as_os_str()]);
    let (_browser, tab) = launch(binary);
    tab.navigate_to(&server.url("/sokoban")).unwrap().wait_until_navigated().unwrap();
    run(&tab, "localStorage.removeItem('boardwatch.sokoban.game')");
    tab.navigate_to(&server.url("/sokoban")).unwrap().wait_until_navigated().unwrap();
    // Microban 1 (7 rows of 6): the player at row 3, column 2, a box at row 4, column 3.
    wait_for(&tab, "Microban 1", "document.querySelectorAll('#grid .cell').length", |v| v == &json!(42));
    let start = server_state(&server, &tab);
    assert_eq!(start["title"], "1");

    // Keys: down, then undo (Z) and redo (Y).
    tab.press_key("ArrowDown").unwrap();
    wait_moves(&server, &tab, 1);
    tab.press_key("z").unwrap();
    wait_moves(&server, &tab, 0);
    tab.press_key("y").unwrap();
    let state = wait_moves(&server, &tab, 1);
    assert_eq!(&rows(&state)[4][2..3], "@");
    // A click on a floor square walks there (row 1, column 2 is the goal at the top).
    let target = cell(&tab, "grid", [2, 1]);
    press_and_release(&tab, target, target, MouseButton::Left);
    let state = wait_moves(&server, &tab, 4);
    assert_eq!(state["player"], json!([2, 1]));
    // Drag the box at row 4, column 3 one square left.
    press_and_release(&tab, cell(&tab, "grid", [4, 3]), cell(&tab, "grid", [4, 2]), MouseButton::Left);
    wait_for(&tab, "the dragged box", "game.pushes", |v| v == &json!(1));
    let state = server_state(&server, &tab);
    assert_eq!(&rows(&state)[4][2..3], "$");
    std::thread::sleep(Duration::from_millis(200));
    let image = screenshot(&tab, "sokoban-play.png");
    check_cells(&tab, &image, "grid", &rows(&state), "after the drag");
    assert!(eval(&tab, "document.getElementById('count').textContent").as_str().unwrap().contains("Pushes 1"));

    // That push lost the level: Solve says so. From the start, Solve finds a solution; step
    // along it to the end.
    run(&tab, "document.getElementById('solve').click()");
    wait_for(&tab, "no solution", "game.solver.state", |v| v == &json!("unsolvable"));
    assert!(eval(&tab, "document.getElementById('solver-status').textContent").as_str().unwrap().starts_with("No solution exists"));
    run(&tab, "document.getElementById('restart').click()");
    wait_moves(&server, &tab, 0);
    run(&tab, "document.getElementById('solve').click()");
    let length = wait_for(&tab, "a solution", "game.solver.state === 'found' && game.solver.length", |v| v.as_u64().is_some_and(|n| n > 0)).as_u64().unwrap();
    for i in 1..=length {
        run(&tab, "document.getElementById('step').click()");
        wait_for(&tab, "the next step", "game.solver.next", |v| v == &json!(i));
    }
    let state = server_state(&server, &tab);
    assert_eq!(state["solved"], true);
    assert!(eval(&tab, "document.getElementById('message').textContent").as_str().unwrap().starts_with("Solved in"));
    run(&tab, "document.getElementById('step-back').click()");
    wait_for(&tab, "a step back", "game.solved", |v| v == &json!(false));

    // The whole game so far exported as LURD, imported on a restarted level: the dialog says solved.
    run(&tab, "document.getElementById('step').click()");
    wait_for(&tab, "solved again", "game.solved", |v| v == &json!(true));
    let lurd = eval(&tab, "document.getElementById('lurd').value");
    run(&tab, "document.getElementById('restart').click()");
    wait_moves(&server, &tab, 0);
    run(&tab, &format!("document.getElementById('lurd').value = {lurd}; document.getElementById('lurd-import').click()"));
    wait_for(&tab, "the solved dialog", "document.getElementById('result').open", |v| v == &json!(true));
    let text = eval(&tab, "document.getElementById('result-text').textContent");
    assert!(text.as_str().unwrap().starts_with("Solved in"), "{text}");
    screenshot(&tab, "sokoban-solved.png");
    run(&tab, "document.getElementById('result').close()");
    let image = screenshot(&tab, "sokoban-solved-closed.png");
    check_cells(&tab, &image, "grid", &rows(&server_state(&server, &tab)), "solved");

    // The editor: fill with walls, carve a corridor with the floor tool (a drag), place the
    // player, a box and a goal, remove a stray box with the right button, save.
    run(&tab, "document.getElementById('show-editor').click()");
    wait_for(&tab, "the editor grid", "document.querySelectorAll('#editor-grid .cell').length", |v| v == &json!(600));
    run(&tab, "document.querySelector('[data-op=fill]').click()");
    wait_for(&tab, "walls", "editorRows[0]", |v| v == &json!("#".repeat(30)));
    let tool = |name: &str| run(&tab, &format!("document.querySelector('input[name=tool][value={name}]').click()"));
    tool("floor");
    press_and_release(&tab, cell(&tab, "editor-grid", [5, 5]), cell(&tab, "editor-grid", [5, 10]), MouseButton::Left);
    wait_for(&tab, "the corridor", "editorRows[5].slice(4, 12)", |v| v == &json!("#      #"));
    let place = |name: &str, x: usize| {
        tool(name);
        let at = cell(&tab, "editor-grid", [5, x]);
        press_and_release(&tab, at, at, MouseButton::Left);
    };
    place("player", 5);
    place("box", 7);
    place("goal", 9);
    place("box", 10);
    wait_for(&tab, "the pieces", "editorRows[5].slice(4, 12)", |v| v == &json!("#@ $ .$#"));
    let stray = cell(&tab, "editor-grid", [5, 10]);
    press_and_release(&tab, stray, stray, MouseButton::Right);
    wait_for(&tab, "the stray box removed", "editorRows[5].slice(4, 12)", |v| v == &json!("#@ $ . #"));
    let image = screenshot(&tab, "sokoban-editor.png");
    let editor_rows: Vec<String> = eval(&tab, "editorRows").as_array().unwrap().iter().map(|r| r.as_str().unwrap().replace(' ', "-")).collect();
    check_cells(&tab, &image, "editor-grid", &editor_rows, "the editor");

    run(&tab, "document.getElementById('editor-name').value = 'corridor'; document.getElementById('editor-save').click()");
    wait_for(&tab, "saved", "document.getElementById('editor-message').textContent", |v| v.as_str().is_some_and(|t| t.starts_with("Saved as corridor")));
    let written = std::fs::read_to_string(folder.join("corridor.xsb")).unwrap();
    assert!(written.contains("#@ $ . #"), "{written}");
    // Saved again: the page asks before overwriting (answered no, then yes).
    run(&tab, "window.confirm = () => false; document.getElementById('editor-save').click()");
    wait_for(&tab, "not saved", "document.getElementById('editor-message').textContent", |v| v == &json!("Not saved."));
    run(&tab, "document.querySelector('[data-op=shift][data-dx=\"1\"]').click()");
    wait_for(&tab, "shifted", "editorRows[5].slice(5, 13)", |v| v == &json!("#@ $ . #"));
    run(&tab, "window.confirm = () => true; document.getElementById('editor-save').click()");
    wait_for(&tab, "saved again", "document.getElementById('editor-message').textContent", |v| v.as_str().is_some_and(|t| t.starts_with("Saved as corridor")));
    // Played from the editor: the new level in "my levels".
    run(&tab, "document.getElementById('editor-play').click()");
    wait_for(&tab, "the saved level", "game && game.collection === 'mine' && game.title", |v| v == &json!("corridor"));
    tab.press_key("ArrowRight").unwrap();
    tab.press_key("ArrowRight").unwrap();
    tab.press_key("ArrowRight").unwrap();
    wait_for(&tab, "the level solved", "game.solved", |v| v == &json!(true));

    // Projector mode (P): the grid fills the window in high contrast, the controls are hidden.
    run(&tab, "document.getElementById('result').close()");
    tab.press_key("p").unwrap();
    wait_for(&tab, "projector mode", "document.body.classList.contains('projector')", |v| v == &json!(true));
    let size = wait_for(&tab, "large cells", "document.querySelector('#grid .cell').getBoundingClientRect().width", |v| v.as_f64().is_some_and(|w| w > 60.0));
    assert_eq!(eval(&tab, "getComputedStyle(document.querySelector('header')).display"), json!("none"));
    std::thread::sleep(Duration::from_millis(200));
    let image = screenshot(&tab, "sokoban-projector.png");
    let mut projected = rows(&server_state(&server, &tab));
    // Floor is white on the projector.
    projected.iter_mut().for_each(|r| *r = r.replace('-', "w"));
    check_cells_with(&tab, &image, "grid", &projected, "projector mode", |s| (s == 'w').then_some([0xff, 0xff, 0xff]));
    eprintln!("projector cells: {size} px");
}
