//! The live page in headless Chromium (driven over the DevTools protocol): it shows the boards,
//! and moves that arrive after it loaded appear without a reload. Skipped, with a note, when
//! Chromium is not installed (`apt-get install chromium`; `make deps` installs it).

mod daemon_common;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use daemon_common::{sample_game, temp_dir, write_config, Daemon};
use serde_json::{json, Value};

fn chromium() -> Option<&'static str> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].into_iter().find(|p| Path::new(p).exists())
}

/// A headless browser and a DevTools connection to its page.
struct Browser {
    child: Child,
    page: tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<TcpStream>>,
    next_id: u64,
}

impl Browser {
    fn launch(binary: &str, profile: &Path) -> Browser {
        let mut child = Command::new(binary)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                "--window-size=1280,900",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("chromium starts");
        let (tx, rx) = mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(url) = line.split("DevTools listening on ").nth(1) {
                    let _ = tx.send(url.trim().to_string());
                }
            }
        });
        let browser_url = rx.recv_timeout(Duration::from_secs(30)).expect("chromium's DevTools address");
        let port = browser_url.trim_start_matches("ws://127.0.0.1:").split('/').next().unwrap().to_string();
        let deadline = Instant::now() + Duration::from_secs(10);
        let page_url = loop {
            let list: Value = daemon_common::client()
                .get(format!("http://127.0.0.1:{port}/json/list"))
                .send()
                .and_then(|r| r.json())
                .unwrap_or(Value::Null);
            if let Some(page) = list.as_array().and_then(|l| l.iter().find(|t| t["type"] == "page")) {
                break page["webSocketDebuggerUrl"].as_str().unwrap().to_string();
            }
            assert!(Instant::now() < deadline, "no page target in chromium");
            std::thread::sleep(Duration::from_millis(100));
        };
        let (page, _) = tungstenite::connect(page_url.as_str()).expect("DevTools WebSocket");
        Browser { child, page, next_id: 1 }
    }

    /// Send a DevTools command and wait for its answer.
    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let message = json!({"id": id, "method": method, "params": params}).to_string();
        self.page.send(tungstenite::Message::Text(message.into())).unwrap();
        loop {
            if let tungstenite::Message::Text(text) = self.page.read().unwrap() {
                let answer: Value = serde_json::from_str(&text).unwrap();
                if answer["id"] == id {
                    assert!(answer.get("error").is_none(), "{method}: {answer}");
                    return answer["result"].clone();
                }
            }
        }
    }

    fn eval(&mut self, expression: &str) -> Value {
        let result = self.call("Runtime.evaluate", json!({"expression": expression, "returnByValue": true}));
        result["result"]["value"].clone()
    }

    /// Evaluate until `check` holds for the value (or fail saying `what`).
    fn wait_for(&mut self, what: &str, expression: &str, check: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let value = self.eval(expression);
            if check(&value) {
                return value;
            }
            assert!(Instant::now() < deadline, "the page never showed {what}: last {value}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.page.send(tungstenite::Message::Text(json!({"id": 0, "method": "Browser.close"}).to_string().into()));
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Standard base64 (DevTools screenshots).
fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let digits: Vec<u8> = text.bytes().filter(|c| !c.is_ascii_whitespace() && *c != b'=').map(value).collect();
    digits
        .chunks(4)
        .flat_map(|chunk| {
            let n = chunk.iter().enumerate().fold(0u32, |acc, (i, &d)| acc | (d as u32) << (18 - 6 * i));
            let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
            bytes.into_iter().take(chunk.len() - 1).collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn the_live_page_shows_moves_that_arrive_after_it_loaded() {
    let Some(binary) = chromium() else {
        eprintln!("note: chromium is not installed; live page test skipped (apt-get install chromium)");
        return;
    };
    let dir = temp_dir("page");
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
    let dir = temp_dir("page-video");
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
