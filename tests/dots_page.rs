//! The Dots page in headless Chromium: a room with a capture is opened by its link, a dot is
//! placed with the mouse (through the WebSocket), and the screenshot is checked at the dots, the
//! captured dot and the enclosing chain. Skipped, with a note, when Chromium is not installed.

mod daemon_common;
mod play_common;
mod chrome_common;

use std::path::Path;
use std::time::{Duration, Instant};

use headless_chrome::browser::tab::point::Point;
use headless_chrome::protocol::cdp::Page::CaptureScreenshotFormatOption;
use headless_chrome::{Browser, LaunchOptions, Tab};
use play_common::{get, post, start_play};
use serde_json::Value;
use chrome_common::{chromium, eval, wait_for};

/// Window coordinates of the centre of point (x, y) of the grid.
fn point_centre(tab: &Tab, x: usize, y: usize) -> (f64, f64) {
    let v = eval(tab, &format!("(() => {{ const r = document.querySelector('rect.hit[data-x=\"{x}\"][data-y=\"{y}\"]').getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; }})()"));
    (v[0].as_f64().unwrap(), v[1].as_f64().unwrap())
}

fn pixel(image: &image::RgbaImage, (x, y): (f64, f64)) -> [u8; 3] {
    let p = image.get_pixel(x.round() as u32, y.round() as u32);
    [p[0], p[1], p[2]]
}

fn near(a: [u8; 3], b: [u8; 3]) -> bool {
    a.iter().zip(b).all(|(&x, y)| x.abs_diff(y) <= 40)
}

#[test]
fn a_capture_is_drawn_and_a_dot_is_placed_with_the_mouse() {
    let Some(binary) = chromium() else {
        eprintln!("note: Chromium is not installed; the Dots page test is skipped");
        return;
    };
    let server = start_play::<&str>(&[]);
    let (status, state) = post(
        &server,
        "/dots/rooms",
        r#"{"mode":"local","width":9,"height":9,"rules":"standard"}"#,
    );
    assert_eq!(status, 201, "{state}");
    let id = state["id"].as_str().unwrap().to_string();
    // Red closes a diamond round the black dot at (4, 4).
    for (x, y) in [(4, 3), (4, 4), (3, 4), (0, 0), (5, 4), (8, 8), (4, 5)] {
        let (status, answer) = post(
            &server,
            &format!("/dots/rooms/{id}/action"),
            &format!(r#"{{"op":"move","x":{x},"y":{y}}}"#),
        );
        assert_eq!(status, 200, "{answer}");
    }
    let state = get(&server, &format!("/dots/rooms/{id}")).1;
    assert_eq!(state["captured"]["red"], 1);

    let options = LaunchOptions::default_builder()
        .path(Some(binary))
        .headless(true)
        .sandbox(false)
        .window_size(Some((1100, 800)))
        .idle_browser_timeout(Duration::from_secs(120))
        .build()
        .unwrap();
    let browser = Browser::new(options).expect("chromium starts");
    let tab = browser.new_tab().unwrap();
    tab.set_default_timeout(Duration::from_secs(30));
    tab.navigate_to(&server.url(&format!("/dots?room={id}")))
        .unwrap()
        .wait_until_navigated()
        .unwrap();
    wait_for(
        &tab,
        "the room's dots",
        "document.querySelectorAll('#grid circle').length",
        |v| v.as_u64() >= Some(8),
    );
    assert_eq!(
        eval(&tab, "document.getElementById('score-red').textContent"),
        "1"
    );
    assert!(eval(&tab, "document.getElementById('turn').textContent")
        .as_str()
        .unwrap()
        .starts_with("Black to move"));

    // Black plays (6, 6) with the mouse.
    let (x, y) = point_centre(&tab, 6, 6);
    tab.click_point(Point { x, y }).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while get(&server, &format!("/dots/rooms/{id}")).1["moves"] != 8 {
        assert!(
            Instant::now() < deadline,
            "the click never reached the server"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    wait_for(
        &tab,
        "red to move",
        "document.getElementById('turn').textContent",
        |v| v.as_str().is_some_and(|t| t.starts_with("Red to move")),
    );
    std::thread::sleep(Duration::from_millis(200));

    let png = tab
        .capture_screenshot(CaptureScreenshotFormatOption::Png, None, None, true)
        .unwrap();
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dots-page.png");
    std::fs::write(&out, &png).unwrap();
    eprintln!("screenshot: {}", out.display());
    let image = image::load_from_memory(&png).unwrap().to_rgba8();
    const RED: [u8; 3] = [0xe3, 0x16, 0x1b];
    const BLACK: [u8; 3] = [0x1b, 0x1b, 0x1b];
    const PAPER: [u8; 3] = [0xff, 0xff, 0xff];
    for (x, y) in [(4, 3), (3, 4), (5, 4), (4, 5)] {
        assert!(
            near(pixel(&image, point_centre(&tab, x, y)), RED),
            "red dot at ({x}, {y})"
        );
    }
    assert!(
        near(pixel(&image, point_centre(&tab, 6, 6)), BLACK),
        "the clicked black dot"
    );
    assert!(near(pixel(&image, point_centre(&tab, 8, 8)), BLACK));
    // The captured dot is drawn faded (not black, not paper); an empty point is paper.
    let captured = pixel(&image, point_centre(&tab, 4, 4));
    assert!(
        !near(captured, BLACK) && !near(captured, PAPER),
        "captured dot {captured:?}"
    );
    let (ex, ey) = point_centre(&tab, 2, 7);
    let cell = point_centre(&tab, 3, 7).0 - ex;
    assert!(
        near(pixel(&image, (ex + cell * 0.25, ey + cell * 0.25)), PAPER),
        "empty paper"
    );
    // The chain: halfway between (4, 3) and (5, 4) is on a red line.
    let (ax, ay) = point_centre(&tab, 4, 3);
    let (bx, by) = point_centre(&tab, 5, 4);
    assert!(
        near(pixel(&image, ((ax + bx) / 2.0, (ay + by) / 2.0)), RED),
        "the enclosing chain is drawn"
    );

    // Projector mode (P): the grid fills the screen; the dots are still where the page says.
    let normal_cell = point_centre(&tab, 1, 0).0 - point_centre(&tab, 0, 0).0;
    tab.press_key("p").unwrap();
    wait_for(
        &tab,
        "projector mode",
        "document.body.classList.contains('projector')",
        |v| v == &Value::Bool(true),
    );
    std::thread::sleep(Duration::from_millis(300));
    let png = tab
        .capture_screenshot(CaptureScreenshotFormatOption::Png, None, None, true)
        .unwrap();
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dots-projector.png");
    std::fs::write(&out, &png).unwrap();
    eprintln!("screenshot: {}", out.display());
    let image = image::load_from_memory(&png).unwrap().to_rgba8();
    let cell = point_centre(&tab, 1, 0).0 - point_centre(&tab, 0, 0).0;
    let screen = eval(&tab, "innerHeight").as_f64().unwrap();
    assert!(
        cell > normal_cell && cell * 9.0 > screen - 160.0,
        "the grid fills the screen: {normal_cell} -> {cell} px a point, {screen} px high"
    );
    for (x, y) in [(4, 3), (3, 4), (5, 4), (4, 5)] {
        assert!(
            near(pixel(&image, point_centre(&tab, x, y)), RED),
            "projector: red dot at ({x}, {y})"
        );
    }
    assert!(
        near(pixel(&image, point_centre(&tab, 6, 6)), BLACK),
        "projector: black dot"
    );
}
