//! Many boards per machine, and how late their moves come: N network cameras, each the ray-traced
//! recording of a real game (`samples/recordings/acf7_four_colour.mp4`, 57 plies, 95 s) served
//! live over HTTP (MPEG-TS, H.264) by ffmpeg in real time, at 1280x720 and 15 frames/s, followed
//! by one `boardwatch run`. It reports, per board, whether the record is the true game, the frames
//! dropped and whether the board said it fell behind; where the daemon's CPU goes (decoding, the
//! vision, the tracker with its records, from the boards' own counts, and the process's total);
//! and the latency of every move from the frame in which it is finished to its event on the
//! board's WebSocket (median, 99th percentile).
//!
//! `cargo bench --bench streams -- --boards 8` (`--seconds S`: only the first S seconds of the
//! game; `--fps F`). The 1280x720 copy of the recording is made once, in `target/bench-streams`.
//! Exits non-zero when a board's record is not the true game.

#[path = "../tests/daemon_common/mod.rs"]
mod daemon_common;
#[path = "../tests/stream_common/mod.rs"]
mod stream_common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use daemon_common::{temp_dir, write_config, Daemon};
use serde_json::Value;
use stream_common::{free_port, recording, true_moves};

struct Options {
    boards: usize,
    seconds: Option<f64>,
    fps: u32,
}

fn options() -> Options {
    let mut o = Options { boards: 8, seconds: None, fps: 15 };
    let args: Vec<String> = std::env::args().collect();
    let mut i = 1;
    while i < args.len() {
        let value = || args.get(i + 1).and_then(|v| v.parse::<f64>().ok()).unwrap_or_else(|| panic!("{} needs a number", args[i]));
        match args[i].as_str() {
            "--boards" => o.boards = value() as usize,
            "--seconds" => o.seconds = Some(value()),
            "--fps" => o.fps = value() as u32,
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

/// User + system CPU seconds of a process so far.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat.rsplit_once(')').map_or("", |(_, rest)| rest).split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").unwrap_or_default().split_whitespace().take(3).collect::<Vec<_>>().join(" ")
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
    let ports: Vec<u16> = (0..o.boards).map(|_| free_port()).collect();
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
    let daemon = Daemon::start(&write_config(&dir, &boards));
    let pid = daemon.child.id();

    // Every board's WebSocket: the moves, with the moment each arrived.
    let arrivals: Vec<Arc<Mutex<Vec<(Instant, Value)>>>> = (0..o.boards).map(|_| Arc::new(Mutex::new(Vec::new()))).collect();
    for (i, sink) in arrivals.iter().enumerate() {
        let url = daemon.url(&format!("/boards/b{i}/events/ws")).replacen("http://", "ws://", 1);
        let sink = Arc::clone(sink);
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
    let load = load_average();
    std::thread::sleep(Duration::from_secs(2));

    println!("boards: {}, 1280x720 H.264 at {} frames/s, {:.0} s each; load average at the end {load}", o.boards, o.fps, length);
    println!("board  moves  right  frames  dropped  behind  decode_ms  vision_ms  record_ms");
    let mut all_right = true;
    let mut latencies = Vec::new();
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
        let Some(start) = *camera.start.lock().unwrap() else { continue };
        let seen = arrivals[i].lock().unwrap();
        for (k, (at, _)) in seen.iter().filter(|(_, e)| e["kind"] == "move").enumerate().take(expected.len()) {
            latencies.push(at.duration_since(start).as_secs_f64() - finished[k]);
        }
    }
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
    println!("every record the true game ({} moves): {all_right}", expected.len());
    drop(daemon);
    if !all_right {
        std::process::exit(1);
    }
}
