//! The Cops and Robbers page in headless Chromium (driven by the `headless_chrome` crate), in
//! projector mode with the grid's corners pinned by dragging the handles: both modes are played
//! with the mouse (through the pin) and the keyboard, the page is reloaded, and screenshots are
//! checked pixel by pixel against the server's state and the pinned corners. Skipped, with a
//! note, when Chromium is not installed (`apt-get install chromium`; `make deps` installs it).

mod daemon_common;
mod play_common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use headless_chrome::browser::tab::point::Point;
use headless_chrome::protocol::cdp::Input::{DispatchMouseEvent, DispatchMouseEventTypeOption, MouseButton};
use headless_chrome::protocol::cdp::Page::CaptureScreenshotFormatOption;
use headless_chrome::{Browser, LaunchOptions, Tab};
use image::{Rgba, RgbaImage};
use play_common::{get, square, start_play};
use serde_json::{json, Value};

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

fn chromium() -> Option<PathBuf> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].into_iter().map(PathBuf::from).find(|p| p.exists())
}

/// The value of a JavaScript expression (through JSON: the crate asks for references, not values).
fn eval(tab: &Tab, expression: &str) -> Value {
    let wrapped = format!("JSON.stringify({expression})");
    let result = tab.evaluate(&wrapped, false).unwrap_or_else(|e| panic!("{expression}: {e}"));
    match result.value {
        Some(Value::String(text)) => serde_json::from_str(&text).unwrap(),
        _ => Value::Null,
    }
}

/// Runs JavaScript statements.
fn run(tab: &Tab, statements: &str) {
    tab.evaluate(statements, false).unwrap_or_else(|e| panic!("{statements}: {e}"));
}

fn wait_for(tab: &Tab, what: &str, expression: &str, check: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let value = eval(tab, expression);
        if check(&value) {
            return value;
        }
        assert!(Instant::now() < deadline, "the page never showed {what}: last {value}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A mouse event at (x, y), the left button down while `pressed`.
fn mouse(tab: &Tab, kind: DispatchMouseEventTypeOption, (x, y): (f64, f64), pressed: bool) {
    let released = matches!(kind, DispatchMouseEventTypeOption::MouseReleased);
    tab.call_method(DispatchMouseEvent {
        Type: kind,
        x,
        y,
        modifiers: None,
        timestamp: None,
        button: Some(if pressed || released { MouseButton::Left } else { MouseButton::None }),
        buttons: Some(if pressed { 1 } else { 0 }),
        click_count: Some(1),
        force: None,
        tangential_pressure: None,
        tilt_x: None,
        tilt_y: None,
        twist: None,
        delta_x: None,
        delta_y: None,
        pointer_Type: None,
    })
    .unwrap();
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

/// Every cell's centre, drawn through the pin, has the colour the server's state gives it; the
/// frame is at the pinned corners, and the screen is black just outside them and where the
/// unpinned grid's corner would be.
fn check_screenshot(image: &RgbaImage, geometry: &Geometry, state: &Value, name: &str) {
    let rows: Vec<&str> = state["map"]["rows"].as_array().unwrap().iter().map(|r| r.as_str().unwrap()).collect();
    let (height, width) = (rows.len(), rows[0].len());
    let mut pieces = std::collections::HashMap::new();
    for (piece, colour) in [("police1", POLICE), ("police2", POLICE), ("thief", THIEF)] {
        pieces.insert(square(&state["positions"][piece]), colour);
    }
    let mut wrong = Vec::new();
    let mut counts = [0; 4];
    for r in 0..height {
        for c in 0..width {
            let expected = match pieces.get(&[r, c]) {
                Some(colour) => *colour,
                None if rows[r].as_bytes()[c] == b'1' => BUILDING,
                None => ROAD,
            };
            let seen = pixel(image, geometry.cell(height, width, [r, c]));
            counts[[ROAD, BUILDING, POLICE, THIEF].iter().position(|k| *k == expected).unwrap()] += 1;
            if !near(seen, expected) {
                wrong.push(format!("({r}, {c}): {seen:?} instead of {expected:?}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{name}: {} of {} cells drawn wrong: {wrong:?}", wrong.len(), width * height);
    assert_eq!(counts[2..], [2, 1], "{name}: two policemen and a thief checked");
    assert!(counts[0] > 100 && counts[1] > 100, "{name}: roads and buildings checked: {counts:?}");
    // The frame around the grid at each pinned corner; black a little further out.
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
    let (left, top, _, _) = geometry.rect;
    assert_eq!(pixel(image, (left + 3.0, top + 3.0)), BLACK, "{name}: the unpinned corner is empty");
    let unpinned = (left + 0.5 * geometry.rect.2 / width as f64, top + 0.5 * geometry.rect.3 / height as f64);
    let pinned = geometry.cell(height, width, [0, 0]);
    assert!((unpinned.0 - pinned.0).hypot(unpinned.1 - pinned.1) > 30.0, "{name}: the pin moved the grid");
}

fn key_for(from: [usize; 2], to: [usize; 2]) -> &'static str {
    match (to[0] as isize - from[0] as isize, to[1] as isize - from[1] as isize) {
        (-1, 0) => "ArrowUp",
        (1, 0) => "ArrowDown",
        (0, -1) => "ArrowLeft",
        _ => "ArrowRight",
    }
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
    let options = LaunchOptions::default_builder()
        .path(Some(binary))
        .headless(true)
        .sandbox(false)
        .window_size(Some((1280, 900)))
        .idle_browser_timeout(Duration::from_secs(300))
        .build()
        .unwrap();
    let browser = Browser::new(options).expect("chromium starts");
    let tab = browser.new_tab().unwrap();
    tab.set_default_timeout(Duration::from_secs(30));
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
    run(&tab, "Projector.togglePin()");
    let saved: Value = serde_json::from_str(eval(&tab, &format!("localStorage.getItem({key})")).as_str().expect("the pin is kept")).unwrap();
    for i in 0..4 {
        for k in 0..2 {
            let value = saved[i][k].as_f64().unwrap();
            assert!((value - PIN[i][k]).abs() < 0.002, "corner {i}: kept {saved} for {PIN:?}");
        }
    }
    let geometry_police = geometry(&tab);
    // Policeman 1 by a click on a highlighted square, drawn through the pin.
    let start = state(&server, &id);
    let target = square(&start["legal"][0]);
    let (x, y) = geometry_police.cell(20, 20, target);
    tab.click_point(Point { x, y }).unwrap();
    wait_for(&tab, "policeman 2's turn", "document.getElementById('turn').textContent", |v| v == "Policeman 2: your move");
    let now = state(&server, &id);
    assert_eq!(square(&now["positions"]["police1"]), target, "the click moved policeman 1 where it was aimed");
    // Policeman 2 by the keyboard; the thief answers.
    let key_name = key_for(square(&now["positions"]["police2"]), square(&now["legal"][0]));
    tab.press_key(key_name).unwrap();
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
    let start = state(&server, &id);
    let target = square(&start["legal"][0]);
    let (x, y) = geometry_thief.cell(20, 20, target);
    tab.click_point(Point { x, y }).unwrap();
    wait_for(&tab, "the policemen's answer", "document.getElementById('count').textContent", |v| v == "Move 4 of 150");
    let now = state(&server, &id);
    assert_eq!(now["history"][0]["to"], json!(target));
    let key_name = key_for(square(&now["positions"]["thief"]), square(&now["legal"][0]));
    tab.press_key(key_name).unwrap();
    wait_for(&tab, "the second answer", "document.getElementById('count').textContent", |v| v == "Move 7 of 150" || v.as_str().is_some_and(|s| s.ends_with(" moves")));
    std::thread::sleep(Duration::from_millis(300));
    let thief_state = state(&server, &id);
    let image = screenshot(&tab, "cops-thief-projector.png");
    check_screenshot(&image, &geometry_thief, &thief_state, "thief mode");
}
