//! The live page in headless Chromium (driven over the DevTools protocol): it shows the boards,
//! and moves that arrive after it loaded appear without a reload. Skipped, with a note, when
//! Chromium is not installed (`apt-get install chromium`; `make deps` installs it).

mod browser_common;
mod daemon_common;

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use browser_common::{base64_decode, chromium, Browser};
use daemon_common::{sample_game, temp_dir, write_config, Daemon};
use serde_json::json;

#[test]
fn the_live_page_shows_moves_that_arrive_after_it_loaded() {
    let Some(binary) = chromium() else {
        eprintln!("note: chromium is not installed; live page test skipped (apt-get install chromium)");
        return;
    };
    let tmp = temp_dir("page");
    let dir = tmp.path();
    let (lines, moves) = sample_game(0);
    // The start, the first two moves; the rest is appended once the page is up.
    let first = 5;
    let game_file = dir.join("game.jsonl");
    std::fs::write(&game_file, lines[..first].join("\n") + "\n").unwrap();
    let config = write_config(
        &dir,
        r#"
[[boards]]
id = "table1"
name = "Table 1"
variant = "english"
source = { kind = "observations", path = "game.jsonl", follow = true }
[[boards]]
id = "table2"
name = "Table 2 (no camera)"
source = { kind = "camera", device = "/dev/video-missing-3" }
"#,
    );
    let daemon = Daemon::start(&config);
    daemon.wait_for_board("table1", "two moves", |s| s["game"]["moves"].as_array().unwrap().len() == 2);

    let mut browser = Browser::launch(binary, &dir.join("chromium-profile"));
    browser.call("Page.navigate", json!({"url": daemon.url("/")}));
    let moves_shown = "Array.from(document.querySelectorAll('#board-table1 .moves .move')).map(e => e.textContent)";
    browser.wait_for("the first two moves", moves_shown, |v| v == &json!(moves[..2]));
    browser.wait_for("the live connection", "document.getElementById('connection').textContent", |v| v == "live");

    // Ten more moves after the page has loaded.
    let more = first + 2 * 10;
    let mut file = std::fs::OpenOptions::new().append(true).open(&game_file).unwrap();
    for line in &lines[first..more] {
        writeln!(file, "{line}").unwrap();
        file.flush().unwrap();
        std::thread::sleep(Duration::from_millis(40));
    }
    browser.wait_for("the new moves", moves_shown, |v| v == &json!(moves[..12]));
    let log = browser.eval("document.querySelector('#board-table1 .log').textContent");
    assert!(log.as_str().unwrap().contains("OK: Player2- Move Success"), "{log}");
    // The diagram follows the position: 24 men minus those taken.
    let pieces = browser.eval("document.querySelectorAll('#board-table1 svg .piece').length");
    let state = daemon.get_json("/boards/table1");
    let on_board = state["game"]["grid"].as_array().unwrap().iter().map(|r| r.as_str().unwrap().chars().filter(|c| *c != '.').count()).sum::<usize>();
    assert_eq!(pieces, json!(on_board));
    // The camera view (a drawn picture for an observation source) loads; the board without a
    // camera says why.
    browser.wait_for("the camera picture", "document.querySelector('#board-table1 img.camera').naturalWidth", |v| v.as_u64() > Some(0));
    browser.wait_for("the missing camera", "document.querySelector('#board-table2 .status').textContent", |v| {
        v.as_str().is_some_and(|s| s.contains("retrying") || s.contains("starting"))
    });
    let shot = browser.call("Page.captureScreenshot", json!({"format": "png"}));
    let png = base64_decode(shot["data"].as_str().unwrap());
    assert!(png.starts_with(b"\x89PNG"));
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("live-page.png");
    std::fs::write(&out, png).unwrap();
    eprintln!("screenshot: {}", out.display());
}

#[test]
fn the_live_page_shows_the_camera_view_of_a_recording() {
    let Some(binary) = chromium() else {
        eprintln!("note: chromium is not installed; live page test skipped (apt-get install chromium)");
        return;
    };
    let Some(video) = daemon_common::sample_video() else { return };
    let tmp = temp_dir("page-video");
    let dir = tmp.path();
    let config = write_config(
        &dir,
        &format!(
            "[[boards]]\nid = \"seed\"\nname = \"Recorded table\"\nvariant = \"english\"\npalette = \"seed\"\n\
             source = {{ kind = \"video\", path = \"{}\", realtime = true }}\n",
            video.display()
        ),
    );
    let daemon = Daemon::start(&config);
    let mut browser = Browser::launch(binary, &dir.join("chromium-profile"));
    browser.call("Page.navigate", json!({"url": daemon.url("/")}));
    let width = browser.wait_for("the camera view", "document.querySelector('#board-seed img.camera').naturalWidth", |v| {
        v.as_u64() > Some(0)
    });
    assert_eq!(width, json!(640), "the overlay picture, at most 640 px wide");
    browser.wait_for("the first move", "document.querySelectorAll('#board-seed .moves .move').length", |v| {
        v.as_u64() >= Some(1)
    });
    let status = browser.eval("document.querySelector('#board-seed .status').textContent");
    assert!(status.as_str().unwrap().contains("running"), "{status}");
    let shot = browser.call("Page.captureScreenshot", json!({"format": "png"}));
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("live-page-video.png");
    std::fs::write(&out, base64_decode(shot["data"].as_str().unwrap())).unwrap();
    eprintln!("screenshot: {}", out.display());
}
