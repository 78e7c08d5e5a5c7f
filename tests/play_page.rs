//! The Cops and Robbers page in headless Chromium (driven by the `headless_chrome` crate), in
//! projector mode with the grid's corners pinned by dragging the handles: both modes are played
//! with the mouse (through the pin) and the keyboard, the page is reloaded, and screenshots are
//! checked pixel by pixel against the server's state and the pinned corners. Skipped, with a
//! note, when Chromium is not installed (`apt-get install chromium`; `make deps` installs it).

mod daemon_common;
mod play_common;
mod chrome_common;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use headless_chrome::browser::tab::point::Point;
use headless_chrome::protocol::cdp::Input::{DispatchMouseEventTypeOption, MouseButton};
use headless_chrome::protocol::cdp::Page::CaptureScreenshotFormatOption;
use headless_chrome::Tab;
use image::{Rgba, RgbaImage};
use play_common::{get, square, start_play};
use serde_json::{json, Value};
use chrome_common::{chromium, eval, launch, mouse_event, run, wait_for};

const ROAD: [u8; 3] = [0xff, 0xff, 0xff];
/// Buildings in projector mode (darker than on a monitor, for contrast on a table).
const BUILDING: [u8; 3] = [0x5a, 0x26, 0x00];
const POLICE: [u8; 3] = [0x1f, 0x5b, 0xff];
const THIEF: [u8; 3] = [0xe3, 0x16, 0x1b];
const FRAME: [u8; 3] = [0xff, 0xd4, 0x00];
const BLACK: [u8; 3] = [0, 0, 0];

/// Where the test pins the grid's corners (TL, TR, BR, BL), as fractions of the window: a
/// keystone, as a projector tilted forward and turned a little draws it.
const PIN: [[f64; 2]; 4] = [[0.14, 0.16], [0.88, 0.11], [0.80, 0.93], [0.22, 0.86]];

/// A mouse event at (x, y), the left button down while `pressed`.
fn mouse(tab: &Tab, kind: DispatchMouseEventTypeOption, point: (f64, f64), pressed: bool) {
    let released = matches!(kind, DispatchMouseEventTypeOption::MouseReleased);
    let button = if pressed || released { MouseButton::Left } else { MouseButton::None };
    mouse_event(tab, kind, point, button, if pressed { 1 } else { 0 });
}

/// Drags with the left button from `from` to `to` in a few steps.
fn drag(tab: &Tab, from: (f64, f64), to: (f64, f64)) {
    mouse(tab, DispatchMouseEventTypeOption::MouseMoved, from, false);
    mouse(tab, DispatchMouseEventTypeOption::MousePressed, from, true);
    for i in 1..=8 {
        let t = i as f64 / 8.0;
        mouse(tab, DispatchMouseEventTypeOption::MouseMoved, (from.0 + (to.0 - from.0) * t, from.1 + (to.1 - from.1) * t), true);
    }
    mouse(tab, DispatchMouseEventTypeOption::MouseReleased, to, false);
}

/// The homography taking `src` to `dst` (four points each), row-major with h8 = 1: the test's
/// own, to check the page's matrix3d against.
#[allow(clippy::needless_range_loop)]
fn homography(src: [[f64; 2]; 4], dst: [[f64; 2]; 4]) -> [f64; 9] {
    let mut m = [[0.0; 9]; 8];
    for i in 0..4 {
        let ([x, y], [u, v]) = (src[i], dst[i]);
        m[2 * i] = [x, y, 1.0, 0.0, 0.0, 0.0, -u * x, -u * y, u];
        m[2 * i + 1] = [0.0, 0.0, 0.0, x, y, 1.0, -v * x, -v * y, v];
    }
    for col in 0..8 {
        let pivot = (col..8).max_by(|&a, &b| m[a][col].abs().total_cmp(&m[b][col].abs())).unwrap();
        m.swap(col, pivot);
        for r in 0..8 {
            if r != col {
                let f = m[r][col] / m[col][col];
                for k in col..9 {
                    m[r][k] -= f * m[col][k];
                }
            }
        }
    }
    let mut h = [1.0; 9];
    for i in 0..8 {
        h[i] = m[i][8] / m[i][i];
    }
    h
}

fn project(h: &[f64; 9], x: f64, y: f64) -> (f64, f64) {
    let w = h[6] * x + h[7] * y + h[8];
    ((h[0] * x + h[1] * y + h[2]) / w, (h[3] * x + h[4] * y + h[5]) / w)
}

fn pixel(image: &RgbaImage, (x, y): (f64, f64)) -> [u8; 3] {
    let Rgba([r, g, b, _]) = *image.get_pixel(x.round() as u32, y.round() as u32);
    [r, g, b]
}

fn near(a: [u8; 3], b: [u8; 3]) -> bool {
    a.iter().zip(b).all(|(x, y)| x.abs_diff(y) <= 24)
}

/// The page's grid geometry: the window size, the grid's untransformed rectangle, and the
/// homography the pin should give it.
struct Geometry {
    window: (f64, f64),
    rect: (f64, f64, f64, f64),
    h: [f64; 9],
}

fn geometry(tab: &Tab) -> Geometry {
    let v = eval(tab, "(() => { const s = document.getElementById('stage'); return [innerWidth, innerHeight, parseFloat(s.style.left), parseFloat(s.style.top), s.offsetWidth, s.offsetHeight]; })()");
    let n: Vec<f64> = v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    let (width, height) = (n[4], n[5]);
    let src = [[0.0, 0.0], [width, 0.0], [width, height], [0.0, height]];
    let dst = PIN.map(|[fx, fy]| [fx * n[0], fy * n[1]]);
    Geometry { window: (n[0], n[1]), rect: (n[2], n[3], width, height), h: homography(src, dst) }
}

impl Geometry {
    /// Where the centre of the cell at (row, column) of a `rows` x `cols` grid is drawn.
    fn cell(&self, rows: usize, cols: usize, [r, c]: [usize; 2]) -> (f64, f64) {
        let (_, _, width, height) = self.rect;
        project(&self.h, (c as f64 + 0.5) * width / cols as f64, (r as f64 + 0.5) * height / rows as f64)
    }

    fn pinned(&self, i: usize) -> (f64, f64) {
        (PIN[i][0] * self.window.0, PIN[i][1] * self.window.1)
    }
}

fn state(server: &daemon_common::Daemon, id: &str) -> Value {
    let (status, state) = get(server, &format!("/cops/games/{id}"));
    assert_eq!(status, 200, "{state}");
    state
}

fn screenshot(tab: &Tab, name: &str) -> RgbaImage {
    let png = tab.capture_screenshot(CaptureScreenshotFormatOption::Png, None, None, true).unwrap();
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&out, &png).unwrap();
    eprintln!("screenshot: {}", out.display());
    image::load_from_memory(&png).unwrap().to_rgba8()
}

/// Every cell's centre (where `centre` says it is drawn) has the colour `state` gives it (map
/// rows and piece positions); buildings are `building`.
#[allow(clippy::needless_range_loop)]
fn check_cells(image: &RgbaImage, state: &Value, centre: impl Fn([usize; 2]) -> (f64, f64), building: [u8; 3], name: &str) {
    let rows: Vec<&str> = state["map"]["rows"].as_array().unwrap().iter().map(|r| r.as_str().unwrap()).collect();
    let (height, width) = (rows.len(), rows[0].len());
    let mut pieces = std::collections::HashMap::new();
    // A policeman who caught the thief is drawn on his square.
    for (piece, colour) in [("thief", THIEF), ("police1", POLICE), ("police2", POLICE)] {
        pieces.insert(square(&state["positions"][piece]), colour);
    }
    let mut wrong = Vec::new();
    let mut counts = [0; 4];
    for r in 0..height {
        for c in 0..width {
            let expected = match pieces.get(&[r, c]) {
                Some(colour) => *colour,
                None if rows[r].as_bytes()[c] == b'1' => building,
                None => ROAD,
            };
            let seen = pixel(image, centre([r, c]));
            counts[[ROAD, building, POLICE, THIEF].iter().position(|k| *k == expected).unwrap()] += 1;
            if !near(seen, expected) {
                wrong.push(format!("({r}, {c}): {seen:?} instead of {expected:?}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{name}: {} of {} cells drawn wrong: {wrong:?}", wrong.len(), width * height);
    let caught = pieces.len() < 3;
    assert_eq!(counts[2..], [2, usize::from(!caught)], "{name}: two policemen and the thief (unless caught) checked");
    assert!(counts[0] > 100 && counts[1] > 100, "{name}: roads and buildings checked: {counts:?}");
}

/// The cells through the pin, the frame at each pinned corner, black just outside them and
/// where the unpinned grid's corner would be.
fn check_screenshot(image: &RgbaImage, geometry: &Geometry, state: &Value, name: &str) {
    check_cells(image, state, |cell| geometry.cell(20, 20, cell), BUILDING, name);
    let centre = (0..4).map(|i| geometry.pinned(i)).fold((0.0, 0.0), |a, p| (a.0 + p.0 / 4.0, a.1 + p.1 / 4.0));
    for i in 0..4 {
        let (x, y) = geometry.pinned(i);
        let (dx, dy) = (x - centre.0, y - centre.1);
        let length = (dx * dx + dy * dy).sqrt();
        let outward = |d: f64| (x + dx / length * d, y + dy / length * d);
        let frame = (0..=6).any(|d| near(pixel(image, outward(d as f64)), FRAME));
        assert!(frame, "{name}: no frame at the pinned corner {i} ({x:.0}, {y:.0})");
        assert_eq!(pixel(image, outward(16.0)), BLACK, "{name}: outside the pinned corner {i}");
    }
    // The grid without the pin would start at its rectangle's top left: nothing is drawn there now.
    let (left, top, width, height) = geometry.rect;
    assert_eq!(pixel(image, (left + 3.0, top + 3.0)), BLACK, "{name}: the unpinned corner is empty");
    let unpinned = (left + 0.5 * width / 20.0, top + 0.5 * height / 20.0);
    let pinned = geometry.cell(20, 20, [0, 0]);
    assert!((unpinned.0 - pinned.0).hypot(unpinned.1 - pinned.1) > 30.0, "{name}: the pin moved the grid");
}

/// The centre of the first element matching `selector`, in the window.
fn centre_of(tab: &Tab, selector: &str) -> (f64, f64) {
    let v = eval(tab, &format!("(() => {{ const r = document.querySelector({selector:?}).getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; }})()"));
    (v[0].as_f64().unwrap(), v[1].as_f64().unwrap())
}

fn click(tab: &Tab, (x, y): (f64, f64)) {
    tab.click_point(Point { x, y }).unwrap();
}

/// Clicks, where the pin draws it, the first square the piece to move may go to; returns it.
fn click_first_legal(tab: &Tab, server: &daemon_common::Daemon, id: &str, geometry: &Geometry) -> [usize; 2] {
    let target = square(&state(server, id)["legal"][0]);
    click(tab, geometry.cell(20, 20, target));
    target
}

/// Presses the arrow key that takes `piece` (the one to move) to the first square it may go to.
fn press_first_legal(tab: &Tab, server: &daemon_common::Daemon, id: &str, piece: &str) {
    let now = state(server, id);
    let (from, to) = (square(&now["positions"][piece]), square(&now["legal"][0]));
    let key = match (to[0] as isize - from[0] as isize, to[1] as isize - from[1] as isize) {
        (-1, 0) => "ArrowUp",
        (1, 0) => "ArrowDown",
        (0, -1) => "ArrowLeft",
        _ => "ArrowRight",
    };
    tab.press_key(key).unwrap();
}

/// Starts a game in `mode` from the page's menu (projector mode, the pin kept from before).
fn start_from_menu(tab: &Arc<Tab>, server: &daemon_common::Daemon, mode: &str) -> String {
    run(tab, "localStorage.removeItem('boardwatch.cops.game')");
    tab.navigate_to(&server.url("/cops?projector=1")).unwrap().wait_until_navigated().unwrap();
    wait_for(tab, "the menu", "document.getElementById('menu').open", |v| v == &json!(true));
    run(tab, &format!("document.querySelector('input[name=mode][value={mode}]').click(); document.getElementById('menu-play').click()"));
    wait_for(tab, "the game", "document.querySelectorAll('#grid .cell').length", |v| v == &json!(400));
    wait_for(tab, "the game's address", "new URLSearchParams(location.search).get('game')", |v| v.is_string()).as_str().unwrap().to_string()
}

#[test]
fn both_modes_play_in_projector_mode_through_a_dragged_corner_pin() {
    let Some(binary) = chromium() else {
        eprintln!("note: chromium is not installed; game page test skipped (apt-get install chromium)");
        return;
    };
    let server = start_play::<&str>(&[]);
    let (_browser, tab) = launch(binary);
    tab.navigate_to(&server.url("/cops")).unwrap().wait_until_navigated().unwrap();
    let key = eval(&tab, "Projector.storageKey()");
    run(&tab, &format!("localStorage.removeItem({key})"));

    // Police Team. Pin the corners by dragging the four handles where the test wants them.
    let id = start_from_menu(&tab, &server, "police");
    run(&tab, "Projector.togglePin()");
    let handles = wait_for(&tab, "the corner handles", "Array.from(document.querySelectorAll('.pin-handle')).filter(h => !h.hidden).map(h => [parseFloat(h.style.left), parseFloat(h.style.top)])", |v| v.as_array().is_some_and(|a| a.len() == 4));
    let window = geometry(&tab).window;
    for (i, handle) in handles.as_array().unwrap().iter().enumerate() {
        let from = (handle[0].as_f64().unwrap(), handle[1].as_f64().unwrap());
        drag(&tab, from, (PIN[i][0] * window.0, PIN[i][1] * window.1));
    }
    // While pinning, the handles sit on the pinned corners.
    let image = screenshot(&tab, "cops-pinning.png");
    for i in 0..4 {
        let (x, y) = (PIN[i][0] * window.0, PIN[i][1] * window.1);
        assert!((0..=24).any(|d| near(pixel(&image, (x + d as f64, y)), FRAME)), "no handle at corner {i}");
    }
    run(&tab, "Projector.togglePin()");
    let saved: Value = serde_json::from_str(eval(&tab, &format!("localStorage.getItem({key})")).as_str().expect("the pin is kept")).unwrap();
    for i in 0..4 {
        for k in 0..2 {
            let value = saved[i][k].as_f64().unwrap();
            assert!((value - PIN[i][k]).abs() < 0.002, "corner {i}: kept {saved} for {PIN:?}");
        }
    }
    // Policeman 1 by a click on a highlighted square, drawn through the pin.
    let target = click_first_legal(&tab, &server, &id, &geometry(&tab));
    wait_for(&tab, "policeman 2's turn", "document.getElementById('turn').textContent", |v| v == "Policeman 2: your move");
    assert_eq!(square(&state(&server, &id)["positions"]["police1"]), target, "the click moved policeman 1 where it was aimed");
    // Policeman 2 by the keyboard; the thief answers.
    press_first_legal(&tab, &server, &id, "police2");
    wait_for(&tab, "the thief's answer", "document.getElementById('count').textContent", |v| v == "Move 4 of 150");
    let before_reload = state(&server, &id);
    assert_eq!(before_reload["history"].as_array().unwrap().len(), 3);
    // A reload keeps the game (and projector mode, and the pin).
    tab.reload(false, None).unwrap().wait_until_navigated().unwrap();
    wait_for(&tab, "the game after the reload", "document.getElementById('count').textContent", |v| v == "Move 4 of 150");
    wait_for(&tab, "projector mode", "document.body.classList.contains('projector')", |v| v == &json!(true));
    std::thread::sleep(Duration::from_millis(300));
    let after_reload = state(&server, &id);
    assert_eq!(after_reload, before_reload);
    let geometry_police = geometry(&tab);
    let image = screenshot(&tab, "cops-police-projector.png");
    check_screenshot(&image, &geometry_police, &after_reload, "police mode");

    // Thief Team in a new game: the pin is still there for this screen.
    let id = start_from_menu(&tab, &server, "thief");
    wait_for(&tab, "the thief's turn", "document.getElementById('turn').textContent", |v| v == "Thief: your move");
    let geometry_thief = geometry(&tab);
    let target = click_first_legal(&tab, &server, &id, &geometry_thief);
    wait_for(&tab, "the policemen's answer", "document.getElementById('count').textContent", |v| v == "Move 4 of 150");
    assert_eq!(state(&server, &id)["history"][0]["to"], json!(target));
    press_first_legal(&tab, &server, &id, "thief");
    wait_for(&tab, "the second answer", "document.getElementById('count').textContent", |v| v == "Move 7 of 150" || v.as_str().is_some_and(|s| s.ends_with(" moves")));
    std::thread::sleep(Duration::from_millis(300));
    let thief_state = state(&server, &id);
    let image = screenshot(&tab, "cops-thief-projector.png");
    check_screenshot(&image, &geometry_thief, &thief_state, "thief mode");
}

#[test]
fn the_menu_the_map_editor_and_a_replay_work_on_a_monitor() {
    let Some(binary) = chromium() else {
        eprintln!("note: chromium is not installed; game page test skipped (apt-get install chromium)");
        return;
    };
    let tmp = daemon_common::temp_dir("play-page-editor");
    let dir = tmp.path();
    let maps = dir.join("maps");
    std::fs::create_dir_all(&maps).unwrap();
    let server = start_play(&["--maps".as_ref(), maps.as_os_str()]);
    // A finished game to replay, played through the API.
    let (status, mut game) = play_common::post(&server, "/cops/games", r#"{"mode": "police", "ai": "classic", "seed": 5}"#);
    assert_eq!(status, 201, "{game}");
    let id = game["id"].as_str().unwrap().to_string();
    while game["outcome"].is_null() {
        game = play_common::post(&server, &format!("/cops/games/{id}/move"), &json!({"to": game["legal"][0]}).to_string()).1;
    }
    let record = daemon_common::client().get(server.url(&format!("/cops/games/{id}/record"))).send().unwrap().text().unwrap();
    let replayed = boardwatch::games::cops::record::replay(&record).unwrap();

    let (_browser, tab) = launch(binary);
    tab.navigate_to(&server.url("/cops")).unwrap().wait_until_navigated().unwrap();
    // The menu opens first; its instructions explain the rules.
    wait_for(&tab, "the menu", "document.getElementById('menu').open", |v| v == &json!(true));
    run(&tab, "document.getElementById('menu-instructions').click()");
    let text = wait_for(&tab, "the instructions", "document.getElementById('instructions').open && document.getElementById('instructions').textContent", |v| v.is_string());
    assert!(text.as_str().unwrap().contains("150 moves"), "{text}");
    run(&tab, "document.getElementById('instructions').close(); document.getElementById('menu').close()");

    // The editor: text with a bad digit is refused at its line and column.
    run(&tab, "document.getElementById('show-editor').click()");
    run(&tab, "document.getElementById('editor-text').value = '2030\\n01x4\\n'; document.getElementById('editor-use-text').click()");
    let message = "document.getElementById('editor-message').textContent";
    wait_for(&tab, "the error's place", message, |v| v.as_str().is_some_and(|m| m.contains("line 2, column 3")));
    // A new empty map cannot be saved without its pieces.
    run(&tab, "document.getElementById('editor-width').value = 6; document.getElementById('editor-height').value = 4; document.getElementById('editor-new').click(); document.getElementById('editor-name').value = 'town'; document.getElementById('editor-save').click()");
    wait_for(&tab, "the missing piece", message, |v| v.as_str().is_some_and(|m| m.contains("no policeman 1")));
    // Buildings by dragging the mouse, the pieces by clicks; then it saves.
    let cell = |r: usize, c: usize| centre_of(&tab, &format!("#editor-grid [data-r=\"{r}\"][data-c=\"{c}\"]"));
    run(&tab, "document.querySelector('input[name=tool][value=\"1\"]').click()");
    drag(&tab, cell(1, 1), cell(1, 4));
    for (tool, r, c) in [(2, 0, 0), (3, 3, 5), (4, 0, 5)] {
        run(&tab, &format!("document.querySelector('input[name=tool][value=\"{tool}\"]').click()"));
        click(&tab, cell(r, c));
    }
    run(&tab, "document.getElementById('editor-save').click()");
    wait_for(&tab, "the saved map", message, |v| v.as_str().is_some_and(|m| m.starts_with("Saved as town")));
    assert_eq!(std::fs::read_to_string(maps.join("town.txt")).unwrap(), "200004\n011110\n000000\n000003\n");
    let image = screenshot(&tab, "cops-editor.png");
    let pixels = [((0, 0), POLICE), ((0, 5), POLICE), ((3, 5), THIEF), ((1, 2), [0x7b, 0x4a, 0x26]), ((2, 2), ROAD)];
    for ((r, c), colour) in pixels {
        assert!(near(pixel(&image, cell(r, c)), colour), "editor cell ({r}, {c}): {:?}", pixel(&image, cell(r, c)));
    }

    // The finished game, replayed move by move.
    run(&tab, "document.getElementById('show-replay').click()");
    wait_for(&tab, "the games", "document.querySelectorAll('#replay-games option').length", |v| v.as_u64() >= Some(1));
    run(&tab, &format!("document.getElementById('replay-games').value = '{id}'; document.getElementById('replay-load').click()"));
    let last = replayed.frames.len() - 1;
    wait_for(&tab, "the replay", "+document.getElementById('replay-slider').max", |v| v.as_u64() == Some(last as u64));
    for _ in 0..3 {
        tab.press_key("ArrowRight").unwrap();
    }
    wait_for(&tab, "the third move", "document.getElementById('replay-label').textContent", |v| v.as_str().is_some_and(|t| t.starts_with(&format!("after 3 of {last} moves"))));
    let image = screenshot(&tab, "cops-replay.png");
    let map = &replayed.map;
    let at = |s: u16| { let (r, c) = map.row_column(s); [r, c] };
    let positions = replayed.frames[3].positions;
    let rows: Vec<String> = (0..map.height).map(|r| (0..map.width).map(|c| if map.is_road(map.square(r, c)) { '0' } else { '1' }).collect()).collect();
    let frame = json!({"map": {"rows": rows}, "positions": {"police1": at(positions.police1), "police2": at(positions.police2), "thief": at(positions.thief)}});
    let centres = eval(&tab, "Array.from(document.querySelectorAll('#grid .cell')).map(e => { const r = e.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })");
    let centre = |[r, c]: [usize; 2]| {
        let xy = &centres[r * map.width + c];
        (xy[0].as_f64().unwrap(), xy[1].as_f64().unwrap())
    };
    check_cells(&image, &frame, centre, [0x7b, 0x4a, 0x26], "replay after 3 moves");
    tab.press_key("End").unwrap();
    wait_for(&tab, "the end", "document.getElementById('turn').textContent", |v| v.as_str().is_some_and(|t| t.starts_with("The police win") || t.starts_with("The thief wins")));

    // A game chosen in the menu on a map where policeman 1 stands beside the thief: one key
    // press catches him, and the result window says who won and why.
    let (status, answer) = play_common::post(&server, "/cops/maps", r#"{"name": "trap", "text": "23\n40\n"}"#);
    assert_eq!(status, 201, "{answer}");
    run(&tab, "document.getElementById('open-menu').click()");
    wait_for(&tab, "the trap in the menu", "document.getElementById('menu').open && Array.from(document.querySelectorAll('#menu-map option')).map(o => o.value)", |v| v.as_array().is_some_and(|a| a.contains(&json!("trap"))));
    run(&tab, "document.getElementById('menu-map').value = 'trap'; document.getElementById('menu-play').click()");
    wait_for(&tab, "the small game", "document.querySelectorAll('#grid .cell').length", |v| v == &json!(4));
    tab.press_key("d").unwrap();
    let reason = wait_for(&tab, "the result window", "document.getElementById('result').open && document.getElementById('result-reason').textContent", |v| v.is_string());
    assert_eq!(reason, "The police win: Policeman 1 caught the thief at row 1, column 2 after 1 move.");
    assert_eq!(eval(&tab, "document.getElementById('result-title').textContent"), "The police win");
    screenshot(&tab, "cops-result.png");
}
