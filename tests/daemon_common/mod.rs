//! Helpers for the daemon tests: a real game as observation lines, the built daemon started on an
//! ephemeral port of 127.0.0.1, and SSE / HTTP clients.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use boardwatch::draughts::game::replay;
use boardwatch::draughts::pdn::{read_games, ReadMode};
use boardwatch::draughts::Variant;
use boardwatch::tracker::Observation;
use serde_json::Value;

pub const TOKEN: &str = "test-token-5f1c";

/// A fresh, empty folder for one test, removed when the returned `TempDir` is dropped: keep it
/// alive while the test (and any daemon it started) uses the folder.
pub fn temp_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&format!("bw-daemon-{name}-")).tempdir().unwrap()
}

/// Writes sample game `index` as observations to `dir/game.jsonl`; returns its moves.
pub fn write_sample_game(dir: &Path, index: usize) -> Vec<String> {
    let (lines, moves) = sample_game(index);
    std::fs::write(dir.join("game.jsonl"), lines.join("\n") + "\n").unwrap();
    moves
}

/// Game `index` of the bundled ACF sample (English) as observation lines: for every move the
/// board with the moving piece lifted, then the board after the move; and the moves as the
/// tracker writes them.
pub fn sample_game(index: usize) -> (Vec<String>, Vec<String>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/games/acf_sample.pdn");
    let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
    let record = &read_games(&text, ReadMode::Lenient).unwrap()[index];
    let game = replay(record, Variant::English).unwrap();
    let rules = Variant::English.rules();
    let line = |obs: &Observation, t: f64| {
        let mut obs = obs.clone();
        obs.t = Some(t);
        obs.to_input_json().to_string()
    };
    let mut lines = vec![line(&Observation::of_position(&game.start, 0, &rules), 0.0)];
    let mut moves = Vec::new();
    for (i, ply) in game.plies.iter().enumerate() {
        let mut lifted = ply.before;
        lifted.set(ply.mv.from, None);
        lines.push(line(
            &Observation::of_position(&lifted, 0, &rules),
            i as f64 + 0.5,
        ));
        lines.push(line(
            &Observation::of_position(&ply.after, 0, &rules),
            i as f64 + 1.0,
        ));
        moves.push(ply.text.clone());
    }
    (lines, moves)
}

/// The bundled ray-traced recording of a real game (`samples/recordings`, with its truth file);
/// `None`, with a note, where it is missing.
pub fn sample_video() -> Option<PathBuf> {
    let video =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/recordings/acf7_four_colour.mp4");
    if video.is_file() {
        Some(video)
    } else {
        eprintln!("note: {} not found; test skipped", video.display());
        None
    }
}

/// A running daemon (killed when dropped).
pub struct Daemon {
    pub child: Child,
    pub base: String,
    /// Everything it wrote to stderr so far.
    pub log: Arc<Mutex<String>>,
}

impl Daemon {
    /// Start `boardwatch run` with this configuration file on an ephemeral port and wait until
    /// it listens.
    pub fn start(config: &Path) -> Daemon {
        Daemon::start_with(config, |_| {})
    }

    pub fn start_with(config: &Path, adjust: impl FnOnce(&mut Command)) -> Daemon {
        let mut command = Command::new(env!("CARGO_BIN_EXE_boardwatch"));
        command
            .args(["run", "--listen", "127.0.0.1:0", "--config"])
            .arg(config)
            .env("RUST_LOG", "boardwatch=info")
            .env_remove("NOTIFY_SOCKET")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        adjust(&mut command);
        Daemon::spawn(command)
    }

    /// Start a prepared `boardwatch` command (stderr piped) and wait until it logs "listening on
    /// http://ADDR"; `boardwatch play` is started this way too.
    pub fn spawn(mut command: Command) -> Daemon {
        let mut child = command.spawn().expect("the daemon starts");
        let stderr = child.stderr.take().unwrap();
        let log = Arc::new(Mutex::new(String::new()));
        let (address_tx, address_rx) = mpsc::channel();
        let sink = Arc::clone(&log);
        std::thread::spawn(move || {
            let mut address_tx = Some(address_tx);
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(rest) = line.split("listening on http://").nth(1) {
                    if let Some(tx) = address_tx.take() {
                        let _ = tx.send(rest.split('/').next().unwrap_or_default().to_string());
                    }
                }
                let mut log = sink.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        let address = match address_rx.recv_timeout(Duration::from_secs(20)) {
            Ok(a) => a,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                std::thread::sleep(Duration::from_millis(100));
                panic!(
                    "the daemon did not start listening: {}",
                    log.lock().unwrap()
                );
            }
        };
        Daemon {
            child,
            base: format!("http://{address}"),
            log,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn get_json(&self, path: &str) -> Value {
        let response = client().get(self.url(path)).send().unwrap();
        assert!(
            response.status().is_success(),
            "GET {path}: {}",
            response.status()
        );
        response.json().unwrap()
    }

    pub fn get_text(&self, path: &str) -> String {
        let response = client().get(self.url(path)).send().unwrap();
        assert!(
            response.status().is_success(),
            "GET {path}: {}",
            response.status()
        );
        response.text().unwrap()
    }

    /// POST an operator action; the status and the JSON answer.
    pub fn act(&self, board: &str, token: Option<&str>, body: &str) -> (u16, Value) {
        let mut request = client()
            .post(self.url(&format!("/boards/{board}/actions")))
            .body(body.to_string());
        if let Some(token) = token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        let response = request.send().unwrap();
        let status = response.status().as_u16();
        (status, response.json().unwrap_or(Value::Null))
    }

    /// Wait until `check` holds for `/boards/{id}` (or fail with the last state seen).
    pub fn wait_for_board(&self, id: &str, what: &str, check: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let state = self.get_json(&format!("/boards/{id}"));
            if check(&state) {
                return state;
            }
            assert!(
                Instant::now() < deadline,
                "board {id}: {what} never happened; last state {state:#}"
            );
            std::thread::sleep(Duration::from_millis(30));
        }
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM, as systemd stops a service; the exit status.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        let pid = self.child.id() as libc::pid_t;
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "the daemon did not stop on SIGTERM: {}",
                self.log.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.kill();
    }
}

/// User and system CPU seconds of process `pid` so far, from `/proc/PID/stat`; `None` when it
/// cannot be read (the process is gone, or not Linux).
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok());
    // SAFETY: sysconf only reads a system constant.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    Some((ticks(11)? + ticks(12)?) / per_second)
}

/// The machine's load averages over 1, 5 and 15 minutes, as `/proc/loadavg` gives them.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn client() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

/// An SSE client on its own thread: each `data:` message parsed as JSON, with its `id:`.
pub struct SseClient {
    pub received: mpsc::Receiver<(Option<String>, Value)>,
}

impl SseClient {
    pub fn connect(url: &str) -> SseClient {
        let response = reqwest::blocking::Client::builder()
            .timeout(None)
            .build()
            .unwrap()
            .get(url)
            .header("Accept", "text/event-stream")
            .send()
            .unwrap_or_else(|e| panic!("GET {url}: {e}"));
        assert!(
            response.status().is_success(),
            "GET {url}: {}",
            response.status()
        );
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || read_sse(response, tx));
        SseClient { received: rx }
    }

    /// Messages until `done` says so (the one that did included) or `limit` passes.
    pub fn collect_until(
        &self,
        limit: Duration,
        done: impl Fn(&Value) -> bool,
    ) -> Vec<(Option<String>, Value)> {
        let deadline = Instant::now() + limit;
        let mut seen = Vec::new();
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.received.recv_timeout(left) {
                Ok(message) => {
                    let finished = done(&message.1);
                    seen.push(message);
                    if finished {
                        break;
                    }
                }
                Err(_) => break,
            }
        }
        seen
    }
}

fn read_sse(response: impl Read, tx: mpsc::Sender<(Option<String>, Value)>) {
    let mut id = None;
    let mut data = String::new();
    for line in BufReader::new(response).lines() {
        let Ok(line) = line else { return };
        if line.is_empty() {
            if !data.is_empty() {
                let value = serde_json::from_str(&data)
                    .unwrap_or_else(|e| panic!("SSE data is not JSON: {data}: {e}"));
                if tx.send((id.take(), value)).is_err() {
                    return;
                }
            }
            data.clear();
        } else if let Some(rest) = line.strip_prefix("data:") {
            data.push_str(rest.trim_start());
        } else if let Some(rest) = line.strip_prefix("id:") {
            id = Some(rest.trim().to_string());
        }
    }
}

/// A configuration with one board reading `observations` and optional extra TOML.
pub fn write_config(dir: &Path, boards: &str) -> PathBuf {
    let path = dir.join("boardwatch.toml");
    let text = format!("state_dir = \"state\"\n[http]\ntoken = \"{TOKEN}\"\n[retry]\ninitial_ms = 100\nmax_ms = 400\n{boards}");
    std::fs::write(&path, text).unwrap();
    path
}

/// A configuration of one English board `t` following sample game `index` (written to
/// `dir/game.jsonl` as observations, one every `pace_ms`); its path and the game's moves.
pub fn sample_game_config(dir: &Path, index: usize, pace_ms: u32) -> (PathBuf, Vec<String>) {
    let moves = write_sample_game(dir, index);
    let board = format!(
        "[[boards]]\nid = \"t\"\nvariant = \"english\"\n\
         source = {{ kind = \"observations\", path = \"game.jsonl\", pace_ms = {pace_ms} }}\n"
    );
    (write_config(dir, &board), moves)
}

/// The moves of the first game of a PDN text, read back with the project's reader and replayed
/// by the rules engine (so the record is checked to be legal, not only to contain the texts).
pub fn pdn_moves(text: &str) -> Vec<String> {
    let records =
        read_games(text, ReadMode::Strict).unwrap_or_else(|e| panic!("not PDN: {e}\n{text}"));
    let game = replay(&records[0], Variant::English)
        .unwrap_or_else(|e| panic!("does not replay: {e}\n{text}"));
    game.plies.into_iter().map(|p| p.text).collect()
}

/// The move texts of a list of events (kind `move`), in order.
pub fn moves_of(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["kind"] == "move")
        .map(|e| e["move"].as_str().unwrap().to_string())
        .collect()
}
