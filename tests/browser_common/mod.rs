//! Headless Chromium driven over the DevTools protocol, for the page tests: launch, evaluate,
//! wait for a condition, take a screenshot. Tests skip, with a note, where Chromium is missing.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

pub fn chromium() -> Option<&'static str> {
    [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ]
    .into_iter()
    .find(|p| Path::new(p).exists())
}

/// A headless browser and a DevTools connection to its page.
pub struct Browser {
    child: Child,
    page: tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<TcpStream>>,
    next_id: u64,
}

impl Browser {
    pub fn launch(binary: &str, profile: &Path) -> Browser {
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
        let browser_url = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("chromium's DevTools address");
        let port = browser_url
            .trim_start_matches("ws://127.0.0.1:")
            .split('/')
            .next()
            .unwrap()
            .to_string();
        let deadline = Instant::now() + Duration::from_secs(10);
        let page_url = loop {
            let list: Value = reqwest::blocking::Client::builder()
                .timeout(Duration::from_secs(10))
                .build()
                .unwrap()
                .get(format!("http://127.0.0.1:{port}/json/list"))
                .send()
                .and_then(|r| r.json())
                .unwrap_or(Value::Null);
            if let Some(page) = list
                .as_array()
                .and_then(|l| l.iter().find(|t| t["type"] == "page"))
            {
                break page["webSocketDebuggerUrl"].as_str().unwrap().to_string();
            }
            assert!(Instant::now() < deadline, "no page target in chromium");
            std::thread::sleep(Duration::from_millis(100));
        };
        let (page, _) = tungstenite::connect(page_url.as_str()).expect("DevTools WebSocket");
        Browser {
            child,
            page,
            next_id: 1,
        }
    }

    /// Send a DevTools command and wait for its answer.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let message = json!({"id": id, "method": method, "params": params}).to_string();
        self.page
            .send(tungstenite::Message::Text(message.into()))
            .unwrap();
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

    pub fn eval(&mut self, expression: &str) -> Value {
        let result = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
        );
        result["result"]["value"].clone()
    }

    /// Evaluate until `check` holds for the value (or fail saying `what`).
    pub fn wait_for(
        &mut self,
        what: &str,
        expression: &str,
        check: impl Fn(&Value) -> bool,
    ) -> Value {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let value = self.eval(expression);
            if check(&value) {
                return value;
            }
            assert!(
                Instant::now() < deadline,
                "the page never showed {what}: last {value}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.page.send(tungstenite::Message::Text(
            json!({"id": 0, "method": "Browser.close"})
                .to_string()
                .into(),
        ));
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
pub fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let digits: Vec<u8> = text
        .bytes()
        .filter(|c| !c.is_ascii_whitespace() && *c != b'=')
        .map(value)
        .collect();
    digits
        .chunks(4)
        .flat_map(|chunk| {
            let n = chunk
                .iter()
                .enumerate()
                .fold(0u32, |acc, (i, &d)| acc | (d as u32) << (18 - 6 * i));
            let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
            bytes.into_iter().take(chunk.len() - 1).collect::<Vec<_>>()
        })
        .collect()
}

/// A PNG screenshot of the page.
pub fn screenshot(browser: &mut Browser) -> Vec<u8> {
    let shot = browser.call("Page.captureScreenshot", json!({"format": "png"}));
    let png = base64_decode(shot["data"].as_str().unwrap());
    assert!(png.starts_with(b"\x89PNG"));
    png
}
