//! Many boards per machine, and how late their moves come: N network cameras, each the ray-traced
//! recording of a real game (`samples/recordings/acf7_four_colour.mp4`, 57 plies, 95 s) served
//! live over HTTP (MPEG-TS, H.264) by ffmpeg in real time, at 1280x720 and 15 frames/s, followed
//! by one `boardwatch run`. It reports, per board, whether the record is the true game, the frames
//! dropped and whether the board said it fell behind; where the daemon's CPU goes (decoding, the
//! vision, the tracker with its records, from the boards' own counts, and the process's total);
//! and the latency of every move from the frame in which it is finished to its event on the
//! board's WebSocket (median, 99th percentile). The daemon also publishes to a broker (Debian's
//! mosquitto on a free loopback port) followed by `boardwatch hall`, and the same moves are
//! timed on the hall's WebSocket (`/events/ws`): the latency a broadcast or an arbiter sees.
//!
//! `cargo bench --bench streams -- --boards 8` (`--seconds S`: only the first S seconds of the
//! game; `--fps F`; `--hall 0`: no broker nor hall). The 1280x720 copy of the recording is made
//! once, in `target/bench-streams`. Exits non-zero when a board's record is not the true game, or
//! the hall's is not the daemon's.

#[path = "../tests/daemon_common/mod.rs"]
mod daemon_common;
#[path = "../tests/stream_common/mod.rs"]
mod stream_common;
#[path = "../tests/mqtt_common/mod.rs"]
mod mqtt_common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use daemon_common::{load_average, temp_dir, write_config, Daemon};
use serde_json::Value;
use stream_common::{free_port, recording, true_moves};

struct Options {
    boards: usize,
    seconds: Option<f64>,
    fps: u32,
    hall: bool,
}

fn options() -> Options {
    let mut o = Options { boards: 8, seconds: None, fps: 15, hall: true };
    let args: Vec<String> = std::env::args().collect();
    let mut i = 1;
    while i < args.len() {
        let value = || args.get(i + 1).and_then(|v| v.parse::<f64>().ok()).unwrap_or_else(|| panic!("{} needs a number", args[i]));
        match args[i].as_str() {
            "--boards" => o.boards = value() as usize,
            "--seconds" => o.seconds = Some(value()),
            "--fps" => o.fps = value() as u32,
            "--hall" => o.hall = value() != 0.0,
            _ => {}
        }
        i += if args[i].starts_with("--") && args[i] != "--bench" { 2 } else { 1 };
    }
    o
}

/// The recording as a 1280x720 camera sends it: H.264 without B-frames (as IP cameras do, for
/// latency), a key frame every second; the 4:3 picture padded, not stretched.
fn camera_copy(fps: u32) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-streams");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join(format!("acf7_1280x720_{fps}fps.mp4"));
    if !out.is_file() {
        eprintln!("making {} (once)", out.display());
        let status = Command::new("ffmpeg")
            .args(["-hide_banner", "-loglevel", "error", "-y", "-i"])
            .arg(recording("acf7_four_colour"))
            .args(["-vf", &format!("pad=1280:720:160:0,fps={fps}"), "-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency"])
            .args(["-crf", "23", "-g", &fps.to_string(), "-pix_fmt", "yuv420p", "-an"])
            .arg(&out)
            .status()
            .expect("ffmpeg runs");
        assert!(status.success(), "ffmpeg could not make {}", out.display());
    }
    out
}

/// ffmpeg sending a file as it is (no re-encoding) over HTTP in real time; when its first frame
/// went out, from its progress reports (the earliest wall time minus the stream time).
struct Camera {
    child: Child,
    start: Arc<Mutex<Option<Instant>>>,
}

impl Camera {
    fn start(video: &Path, port: u16, seconds: Option<f64>) -> Camera {
        let mut command = Command::new("ffmpeg");
        command.args(["-hide_banner", "-nostdin", "-loglevel", "error", "-re"]);
        if let Some(s) = seconds {
            command.args(["-t", &s.to_string()]);
        }
        command.arg("-i").arg(video).args(["-c", "copy", "-an", "-flush_packets", "1", "-f", "mpegts", "-listen", "1"]);
        command.arg(format!("http://127.0.0.1:{port}/live.ts")).args(["-progress", "pipe:1", "-stats_period", "0.1"]);
        let mut child = command.stdout(Stdio::piped()).stderr(Stdio::null()).spawn().expect("ffmpeg starts");
        let stdout = child.stdout.take().unwrap();
        let start = Arc::new(Mutex::new(None::<Instant>));
        let seen = Arc::clone(&start);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let Some(us) = line.strip_prefix("out_time_us=").and_then(|v| v.trim().parse::<i64>().ok()) else { continue };
                if us <= 0 {
                    continue;
                }
                let at = Instant::now() - Duration::from_micros(us as u64);
                let mut start = seen.lock().unwrap();
                if start.is_none_or(|s| at < s) {
                    *start = Some(at);
                }
            }
        });
        Camera { child, start }
    }
}

impl Drop for Camera {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// User + system CPU seconds of a process so far (0 when it cannot be read).
fn cpu_seconds(pid: u32) -> f64 {
    daemon_common::cpu_seconds(pid).unwrap_or(0.0)
}

/// Events as a WebSocket client got them, each with the moment it arrived.
type Arrivals = Arc<Mutex<Vec<(Instant, Value)>>>;

/// Read a WebSocket's events into `sink` with the moment each arrived, until it closes.
fn listen(url: String, sink: Arrivals) {
    std::thread::spawn(move || {
        let (mut socket, _) = tungstenite::connect(url.as_str()).expect("WebSocket connects");
        while let Ok(message) = socket.read() {
            if let tungstenite::Message::Text(text) = message {
                let at = Instant::now();
                if let Ok(event) = serde_json::from_str::<Value>(text.as_str()) {
                    sink.lock().unwrap().push((at, event));
                }
            }
        }
    });
}

/// The latency of each move event of `seen` (the first `plies`), from the frame in which it was
/// finished (`finished`, seconds into the stream that began at `start`).
fn move_latencies(seen: &[(Instant, Value)], start: Instant, finished: &[f64], plies: usize) -> Vec<f64> {
    seen.iter()
        .filter(|(_, e)| e["kind"] == "move")
        .take(plies)
        .enumerate()
        .map(|(k, (at, _))| at.duration_since(start).as_secs_f64() - finished[k])
        .collect()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (p / 100.0 * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn main() {
    let o = options();
    let video = camera_copy(o.fps);
    let truth_path = recording("acf7_four_colour");
    let mut expected = true_moves(&truth_path);
    let truth: Value = serde_json::from_str(&std::fs::read_to_string(truth_path.with_extension("truth.json")).unwrap()).unwrap();
    // The frame (of the 15 frames/s recording) in which each ply is finished: its first `ply-N`.
    let labels: Vec<String> = serde_json::from_value(truth["frame_labels"].clone()).unwrap();
    let finished: Vec<f64> = (0..expected.len())
        .map(|k| labels.iter().position(|l| *l == format!("ply-{k}")).expect("every ply labelled") as f64 / 15.0)
        .collect();
    if let Some(s) = o.seconds {
        // Only the plies finished (and still for a moment) within the part served.
        let n = finished.iter().filter(|&&t| t + 1.0 < s).count();
        expected.truncate(n);
    }

    let dir = temp_dir("bench-streams");
    // The hall: a broker, and `boardwatch hall` following it; the daemon publishes to it.
    let mosquitto = mqtt_common::mosquitto();
    if o.hall && mosquitto.is_none() {
        eprintln!("streams: mosquitto is not installed (`make deps` installs it): the hall's side is not measured (--hall 0 to skip it)");
    }
    let hall_parts = mosquitto.filter(|_| o.hall).map(|binary| {
        let port = mqtt_common::free_port();
        let broker = mqtt_common::Broker::start(&binary, &dir, port);
        let mqtt = format!("[mqtt]\nurl = \"mqtt://127.0.0.1:{port}\"\nhall = \"bench\"\n");
        std::fs::write(dir.join("hall.toml"), format!("state_dir = \"hall-state\"\n[http]\ntoken = \"{}\"\n{mqtt}", daemon_common::TOKEN)).unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_boardwatch"));
        command
            .args(["hall", "--listen", "127.0.0.1:0", "--config"])
            .arg(dir.join("hall.toml"))
            .env("RUST_LOG", "boardwatch=warn,boardwatch::hall=info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        (broker, Daemon::spawn(command), mqtt)
    });
    let ports: Vec<u16> = (0..o.boards).map(|_| free_port()).collect();
    let mqtt_section = hall_parts.as_ref().map_or(String::new(), |(_, _, mqtt)| mqtt.clone());
    let boards: String = ports
        .iter()
        .enumerate()
        .map(|(i, port)| {
            format!(
                "[[boards]]\nid = \"b{i}\"\nvariant = \"english\"\npalette = \"four-colour\"\n\
                 source = {{ kind = \"stream\", url = \"http://127.0.0.1:{port}/live.ts\" }}\n"
            )
        })
        .collect();
    let daemon = Daemon::start(&write_config(&dir, &format!("{mqtt_section}{boards}")));
    let pid = daemon.child.id();

    // Every board's WebSocket: the moves, with the moment each arrived.
    let arrivals: Vec<Arrivals> = (0..o.boards).map(|_| Arc::new(Mutex::new(Vec::new()))).collect();
    for (i, sink) in arrivals.iter().enumerate() {
        listen(daemon.url(&format!("/boards/b{i}/events/ws")).replacen("http://", "ws://", 1), Arc::clone(sink));
    }
    // The hall's WebSocket: every board's events, as a broadcast or the overview page gets them.
    let hall_arrivals: Arrivals = Arc::default();
    if let Some((_, hall, _)) = &hall_parts {
        listen(hall.url("/events/ws").replacen("http://", "ws://", 1), Arc::clone(&hall_arrivals));
    }

    let hall_pid = hall_parts.as_ref().map(|(_, hall, _)| hall.child.id());
    let hall_cpu_before = hall_pid.map_or(0.0, cpu_seconds);
    let cpu_before = cpu_seconds(pid);
    let started = Instant::now();
    let mut cameras: Vec<Camera> = ports.iter().map(|&port| Camera::start(&video, port, o.seconds)).collect();
    let length = o.seconds.unwrap_or(95.0);
    let deadline = started + Duration::from_secs_f64(length + 40.0);
    while cameras.iter_mut().any(|c| matches!(c.child.try_wait(), Ok(None))) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
    let served_for = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds(pid) - cpu_before;
    let hall_cpu = hall_pid.map_or(0.0, cpu_seconds) - hall_cpu_before;
    let load = load_average();
    std::thread::sleep(Duration::from_secs(2));

    println!("boards: {}, 1280x720 H.264 at {} frames/s, {:.0} s each; load average at the end {load}", o.boards, o.fps, length);
    println!("board  moves  right  frames  dropped  behind  decode_ms  vision_ms  record_ms");
    let mut all_right = true;
    let mut latencies = Vec::new();
    let mut hall_latencies = Vec::new();
    // The hall's own part: the same move on the hall's WebSocket after the daemon's.
    let mut hall_after_daemon = Vec::new();
    let mut hall_right = true;
    let (mut decode_total, mut vision_total, mut record_total) = (0.0, 0.0, 0.0);
    for (i, camera) in cameras.iter().enumerate() {
        let state = daemon.get_json(&format!("/boards/b{i}"));
        let moves: Vec<String> = serde_json::from_value(state["game"]["moves"].clone()).unwrap_or_default();
        let right = moves == expected;
        all_right &= right;
        let source = &state["source"];
        let work = &source["work"];
        let ms = |k: &str| work[k].as_f64().unwrap_or(0.0);
        let frames = source["frames"].as_f64().unwrap_or(0.0);
        let dropped = source["dropped"].as_f64().unwrap_or(0.0);
        decode_total += ms("decode_ms") * (frames + dropped) / 1000.0;
        vision_total += ms("vision_ms") * frames / 1000.0;
        record_total += ms("record_ms") * work["record_steps"].as_f64().unwrap_or(0.0) / 1000.0;
        println!(
            "b{i:<4} {:>5}  {:>5}  {:>6}  {:>7}  {:>6}  {:>9.2}  {:>9.2}  {:>9.2}",
            moves.len(),
            right,
            frames,
            dropped,
            source["behind"],
            ms("decode_ms"),
            ms("vision_ms"),
            ms("record_ms")
        );
        if frames == 0.0 {
            // Why a board saw nothing: its source's state and last error, as the page shows them.
            println!("      no frame: source {} after {} attempts; last error: {}", source["state"], source["failures"], source["last_error"]);
        }
        let Some(start) = *camera.start.lock().unwrap() else { continue };
        latencies.extend(move_latencies(&arrivals[i].lock().unwrap(), start, &finished, expected.len()));
        if hall_parts.is_some() {
            let id = format!("b{i}");
            let at_hall: Vec<(Instant, Value)> =
                hall_arrivals.lock().unwrap().iter().filter(|(_, e)| e["board"] == id.as_str()).cloned().collect();
            let hall_moves: Vec<&str> = at_hall.iter().filter(|(_, e)| e["kind"] == "move").filter_map(|(_, e)| e["move"].as_str()).collect();
            // Every move the daemon recorded reached the hall's listener once, in order.
            hall_right &= hall_moves == moves.iter().map(String::as_str).collect::<Vec<_>>();
            let at_hall_moves = move_latencies(&at_hall, start, &finished, expected.len());
            let at_daemon = move_latencies(&arrivals[i].lock().unwrap(), start, &finished, expected.len());
            hall_after_daemon.extend(at_hall_moves.iter().zip(&at_daemon).map(|(hall, daemon)| hall - daemon));
            hall_latencies.extend(at_hall_moves);
        }
    }
    hall_latencies.sort_by(f64::total_cmp);
    hall_after_daemon.sort_by(f64::total_cmp);
    latencies.sort_by(f64::total_cmp);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "daemon CPU: {cpu:.1} s over {served_for:.1} s = {:.2} of {cores} cores ({:.3} core per board); of which the boards counted \
         decoding {decode_total:.1} s (capture threads), vision {vision_total:.1} s, tracker and records {record_total:.2} s; \
         the rest ({:.1} s: FFmpeg's decoder threads, colour conversion, the page's pictures, the API) not split",
        cpu / served_for,
        cpu / served_for / o.boards as f64,
        cpu - decode_total - vision_total - record_total
    );
    println!(
        "latency, finished frame to WebSocket event, {} moves: median {:.2} s, p90 {:.2} s, p99 {:.2} s, max {:.2} s \
         (the still time of 0.3 s included)",
        latencies.len(),
        percentile(&latencies, 50.0),
        percentile(&latencies, 90.0),
        percentile(&latencies, 99.0),
        latencies.last().copied().unwrap_or(f64::NAN)
    );
    if hall_parts.is_some() {
        println!(
            "latency, finished frame to the hall's WebSocket event (daemon, MQTT broker, hall's synced copy), {} moves: \
             median {:.2} s, p90 {:.2} s, p99 {:.2} s, max {:.2} s; after the daemon's WebSocket: median {:.0} ms, p99 {:.0} ms; \
             the hall's CPU {:.1} s ({:.3} core); every board's moves reached the hall's listener once, in order: {hall_right}",
            hall_latencies.len(),
            percentile(&hall_latencies, 50.0),
            percentile(&hall_latencies, 90.0),
            percentile(&hall_latencies, 99.0),
            hall_latencies.last().copied().unwrap_or(f64::NAN),
            percentile(&hall_after_daemon, 50.0) * 1000.0,
            percentile(&hall_after_daemon, 99.0) * 1000.0,
            hall_cpu,
            hall_cpu / served_for
        );
    }
    println!("every record the true game ({} moves): {all_right}", expected.len());
    drop(daemon);
    drop(hall_parts);
    if !all_right || !hall_right {
        std::process::exit(1);
    }
}
