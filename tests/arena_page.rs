//! The moving-walls arena page (`/cops-arena`): its API through `boardwatch play`, and the page
//! in headless Chromium: a match watched to its end, the thief planned by hand with the clock
//! paused, a screenshot checked against the server's board. The browser part is skipped, with a
//! note, when Chromium is not installed.

mod daemon_common;
mod play_common;
mod chrome_common;

use std::time::Duration;

use boardwatch::games::cops::arena::{replay, GameRecord};
use headless_chrome::protocol::cdp::Page::CaptureScreenshotFormatOption;
use headless_chrome::{Browser, LaunchOptions, Tab};
use image::Rgba;
use play_common::{get, post, start_play};
use serde_json::Value;
use chrome_common::{chromium, eval, wait_for};

#[test]
fn the_api_waits_for_a_human_checks_his_plan_and_records_the_game() {
    let server = start_play::<&str>(&[]);
    let (status, bad) = post(&server, "/cops-arena/matches", r#"{"thief":"human","police":"astar","params":{"k":"zero"}}"#);
    assert_eq!((status, bad["field"].as_str()), (400, Some("k")), "{bad}");
    let (status, bad) = post(&server, "/cops-arena/matches", r#"{"thief":"ext:true","police":"astar"}"#);
    assert_eq!((status, bad["field"].as_str()), (400, Some("thief")), "{bad}");
    let (status, state) = post(&server, "/cops-arena/matches", r#"{"thief":"human","police":"astar","seed":5,"params":{"T":30}}"#);
    assert_eq!(status, 201, "{state}");
    let id = state["id"].as_str().unwrap().to_string();
    let (_, state) = post(&server, &format!("/cops-arena/matches/{id}/step"), r#"{"ticks":10}"#);
    assert_eq!(state["status"]["waiting"][0], "thief", "{state}");
    let (status, _) = post(&server, &format!("/cops-arena/matches/{id}/plan"), r#"{"role":"thief","moves":[["U"]]}"#);
    assert_eq!(status, 409);
    let (status, _) = post(&server, &format!("/cops-arena/matches/{id}/record"), "");
    assert_eq!(status, 405);
    let (status, _) = get(&server, &format!("/cops-arena/matches/{id}/record"));
    assert_eq!(status, 409, "not over yet");
    loop {
        let (_, state) = post(&server, &format!("/cops-arena/matches/{id}/step"), r#"{"ticks":100}"#);
        if state["status"] == "over" {
            break;
        }
        assert_eq!(state["status"]["waiting"][0], "thief", "{state}");
        let (status, _) = post(&server, &format!("/cops-arena/matches/{id}/plan"), r#"{"role":"thief","moves":[["S","S","S","S","S"]]}"#);
        assert_eq!(status, 200);
    }
    let (status, record) = get(&server, &format!("/cops-arena/matches/{id}/record"));
    assert_eq!(status, 200);
    let record: GameRecord = serde_json::from_value(record).unwrap();
    assert_eq!(record.thief, "human");
    let frames = replay(&record).unwrap();
    assert!(frames.windows(2).all(|w| w[0].thief == w[1].thief), "the human thief stayed as planned");
    let (status, replayed) = post(&server, "/cops-arena/replay", &serde_json::to_string(&record).unwrap());
    assert_eq!(status, 200);
    assert_eq!(replayed["frames"].as_array().unwrap().len(), frames.len());
    let (status, _) = get(&server, "/cops-arena/matches/nope");
    assert_eq!(status, 404);
}

fn click(tab: &Tab, selector: &str) {
    tab.find_element(selector).unwrap_or_else(|e| panic!("{selector}: {e}")).click().unwrap();
}

#[test]
fn the_page_plays_a_human_thief_and_draws_what_the_server_holds() {
    let Some(binary) = chromium() else {
        eprintln!("note: chromium is not installed; arena page test skipped (apt-get install chromium)");
        return;
    };
    let server = start_play::<&str>(&[]);
    let options = LaunchOptions::default_builder().path(Some(binary)).headless(true).sandbox(false).window_size(Some((1280, 900))).build().unwrap();
    let browser = Browser::new(options).expect("chromium starts");
    let tab = browser.new_tab().unwrap();
    tab.set_default_timeout(Duration::from_secs(30));
    tab.navigate_to(&server.url("/cops-arena")).unwrap().wait_until_navigated().unwrap();

    // A human thief: the page stops at the planning tick and shows the planner.
    tab.evaluate(
        r#"document.getElementById("thief").value = "human"; document.getElementById("police").value = "strong"; document.getElementById("seed").value = "4""#,
        false,
    )
    .unwrap();
    click(&tab, "#start");
    wait_for(&tab, "the planner", r#"!document.getElementById("planner").hidden"#, |v| v == true);
    let before = eval(&tab, "arena.match.board.thief");
    for key in ["ArrowLeft", "ArrowLeft", "ArrowUp"] {
        tab.press_key(key).unwrap();
    }
    assert_eq!(eval(&tab, "arena.human.moves"), serde_json::json!([["L", "L", "U"]]));
    click(&tab, "#send");
    wait_for(&tab, "the first tick played", "arena.match && arena.match.board.t", |v| v.as_u64() >= Some(1));
    let (_, state) = get(&server, &format!("/cops-arena/matches/{}", eval(&tab, "arena.match.id").as_str().unwrap()));
    assert_eq!(state["plans"]["thief"], serde_json::json!([["L", "L", "U", "S", "S"]]), "the server holds the plan sent");
    assert!(state["board"]["t"].as_u64() >= Some(1));
    assert!(before.is_array());

    // Computer against computer, played to the end.
    tab.evaluate(
        r#"document.getElementById("thief").value = "astar"; document.getElementById("police").value = "strong"; document.getElementById("seed").value = "7""#,
        false,
    )
    .unwrap();
    click(&tab, "#start");
    click(&tab, "#play");
    wait_for(&tab, "the end of the match", "arena.match && arena.match.status", |v| v == "over");
    let status = eval(&tab, r#"document.getElementById("status").textContent"#);
    assert!(status.as_str().unwrap().contains("payoff"), "{status}");
    let id = eval(&tab, "arena.match.id");
    let (_, state) = get(&server, &format!("/cops-arena/matches/{}", id.as_str().unwrap()));
    let board = &state["board"];

    // The finished game as a record, replayed: the last frame is the board the server ended on.
    let (_, record) = get(&server, &format!("/cops-arena/matches/{}/record", id.as_str().unwrap()));
    let record_text = serde_json::to_string(&record.to_string()).unwrap();
    tab.evaluate(&format!("arena.loadRecord({record_text})"), false).unwrap();
    let frames = wait_for(&tab, "the replay", "arena.replay && arena.replay.frames.length", |v| v.as_u64().is_some());
    let last = frames.as_u64().unwrap() - 1;
    tab.evaluate(&format!("document.getElementById('frame').value = {last}; arena.showFrame({last})"), false).unwrap();
    assert_eq!(eval(&tab, &format!("arena.replay.frames[{last}].thief")), board["thief"]);
    let info = eval(&tab, r#"document.getElementById("frameinfo").textContent"#);
    assert!(info.as_str().unwrap().contains(&format!("after {} of", board["t"])), "{info}");

    let png = tab.capture_screenshot(CaptureScreenshotFormatOption::Png, None, None, true).unwrap();
    let out = std::env::temp_dir().join("boardwatch-arena-page.png");
    std::fs::write(&out, &png).unwrap();
    eprintln!("screenshot: {}", out.display());
    let image = image::load_from_memory(&png).unwrap().to_rgba8();
    let rect = eval(&tab, r#"(() => { const r = document.getElementById("board").getBoundingClientRect(); return [r.left + 2, r.top + 2, r.width - 4]; })()"#);
    let (left, top, size) = (rect[0].as_f64().unwrap(), rect[1].as_f64().unwrap(), rect[2].as_f64().unwrap());
    let n = state["params"]["n"].as_f64().unwrap();
    let colour_at = |square: &Value, dx: f64| {
        let (r, c) = (square[0].as_f64().unwrap(), square[1].as_f64().unwrap());
        let (x, y) = (left + (c + 0.5 + dx) * size / n, top + (r + 0.5) * size / n);
        let Rgba([red, green, blue, _]) = *image.get_pixel(x.round() as u32, y.round() as u32);
        [red, green, blue]
    };
    let near = |a: [u8; 3], b: [u8; 3]| a.iter().zip(b).all(|(x, y)| x.abs_diff(y) <= 30);
    // Off-centre so that the piece letters do not get in the way.
    if board["ending"]["kind"] != "caught" {
        assert!(near(colour_at(&board["thief"], 0.25), [0xe3, 0x16, 0x1b]), "the thief is drawn red: {:?}", colour_at(&board["thief"], 0.25));
    }
    let wall = &board["walls"][0][0];
    let on_piece = board["police"].as_array().unwrap().contains(wall) || &board["thief"] == wall;
    if !on_piece {
        assert!(near(colour_at(wall, 0.0), [0x7a, 0x4a, 0x1d]), "a wall square is brown: {:?}", colour_at(wall, 0.0));
    }
    let gate = &board["gates"][0][0];
    if &board["thief"] != gate {
        assert!(
            near(colour_at(gate, 0.4), [0x2a, 0x9d, 0x3a]) || near(colour_at(gate, 0.4), [0x7a, 0x4a, 0x1d]),
            "a gate square is green (or under a wall): {:?}",
            colour_at(gate, 0.4)
        );
    }
}
