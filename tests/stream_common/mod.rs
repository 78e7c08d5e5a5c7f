//! Live streams for the tests: a sample recording served by ffmpeg over HTTP in real time, as a
//! network camera serves its picture (MPEG-TS or MJPEG), from any point of the recording and at
//! any resolution; killed, or stopped (a stall), at will.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

/// Whether ffmpeg is installed (`make test` installs it); a note when it is not.
pub fn ffmpeg_present() -> bool {
    let found = Command::new("ffmpeg").arg("-version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok();
    if !found {
        eprintln!("note: ffmpeg not found; live stream test skipped");
    }
    found
}

/// `samples/recordings/NAME.mp4`.
pub fn recording(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("samples/recordings/{name}.mp4"))
}

/// A move as the tracker writes it: intermediate squares of a capture only where two captures
/// share their ends, which these games never need (`6x13x22` is written `6x22`).
pub fn compact(pdn: &str) -> String {
    match pdn.split_once('x') {
        Some((from, rest)) => format!("{from}x{}", rest.rsplit('x').next().unwrap_or(rest)),
        None => pdn.to_string(),
    }
}

/// The true moves of a recording (its `truth.json`).
pub fn true_moves(video: &Path) -> Vec<String> {
    let truth: Value = serde_json::from_str(&std::fs::read_to_string(video.with_extension("truth.json")).unwrap()).unwrap();
    truth["plies"].as_array().unwrap().iter().map(|p| compact(p["pdn"].as_str().unwrap())).collect()
}

/// A port of 127.0.0.1 free a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Format {
    /// MPEG-TS (MPEG-2 video), as many IP cameras and encoders send over HTTP.
    MpegTs,
    /// Multipart JPEG (`multipart/x-mixed-replace`), the classic webcam stream.
    Mjpeg,
}

/// ffmpeg serving a recording over HTTP to one client, in real time; killed when dropped.
pub struct StreamServer {
    child: Child,
    /// Says when the first frame went out (ffmpeg starts when the client connects).
    served: mpsc::Receiver<()>,
}

impl StreamServer {
    /// Serve `video` from `from` seconds on at `http://127.0.0.1:PORT/`, scaled to `size` if
    /// given, `speed` times real time (1.0: as a camera).
    fn start_with(
        video: &Path,
        port: u16,
        format: Format,
        from: f64,
        size: Option<(u32, u32)>,
        speed: f64,
        hold: Option<f64>,
    ) -> StreamServer {
        let mut command = Command::new("ffmpeg");
        command.args(["-hide_banner", "-nostdin", "-loglevel", "error", "-readrate", &speed.to_string()]);
        command.args(["-ss", &format!("{from:.2}")]);
        if hold.is_some() {
            command.args(["-t", "0.5"]);
        }
        command.arg("-i").arg(video).arg("-an");
        let mut filters = Vec::new();
        if let Some((w, h)) = size {
            filters.push(format!("scale={w}:{h}"));
        }
        if let Some(hold) = hold {
            // The padding is made at once; `realtime` sends it at the camera's pace.
            filters.push(format!("tpad=stop_mode=clone:stop_duration={hold},realtime"));
        }
        if !filters.is_empty() {
            command.args(["-vf", &filters.join(",")]);
        }
        let url = match format {
            Format::MpegTs => {
                command.args(["-c:v", "mpeg2video", "-q:v", "2", "-f", "mpegts"]);
                format!("http://127.0.0.1:{port}/live.ts")
            }
            Format::Mjpeg => {
                command.args(["-c:v", "mjpeg", "-q:v", "3", "-f", "mpjpeg"]);
                command.args(["-content_type", "multipart/x-mixed-replace;boundary=ffmpeg"]);
                format!("http://127.0.0.1:{port}/live.mjpg")
            }
        };
        command.args(["-listen", "1", &url, "-progress", "pipe:1", "-stats_period", "0.2"]);
        let mut child = command.stdout(Stdio::piped()).stderr(Stdio::null()).spawn().expect("ffmpeg starts");
        let stdout = child.stdout.take().unwrap();
        let (tx, served) = mpsc::channel();
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let frames = line.strip_prefix("frame=").and_then(|n| n.trim().parse::<u64>().ok());
                if frames.is_some_and(|n| n > 0) {
                    if let Some(tx) = tx.take() {
                        let _ = tx.send(());
                    }
                }
            }
        });
        StreamServer { child, served }
    }

    pub fn start(video: &Path, port: u16, format: Format, from: f64, size: Option<(u32, u32)>) -> StreamServer {
        StreamServer::start_with(video, port, format, from, size, 1.0, None)
    }

    pub fn start_at_speed(video: &Path, port: u16, format: Format, from: f64, size: Option<(u32, u32)>, speed: f64) -> StreamServer {
        StreamServer::start_with(video, port, format, from, size, speed, None)
    }

    /// Half a second of the recording from `at`, then its last frame for `hold` seconds: a
    /// board nobody touches.
    pub fn start_still(video: &Path, port: u16, format: Format, at: f64, hold: f64) -> StreamServer {
        StreamServer::start_with(video, port, format, at, None, 1.0, Some(hold))
    }

    /// Wait until a client is being served; false after `limit`.
    pub fn served_within(&self, limit: Duration) -> bool {
        self.served.recv_timeout(limit).is_ok()
    }

    /// Stop sending (SIGSTOP) without closing the connection: a camera that hangs.
    pub fn pause(&self) {
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGSTOP);
        }
    }

    /// Whether ffmpeg is still running (it ends when its client goes or the recording ends).
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for StreamServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Debian's `rtsp-server-perl` (an RTSP server that cameras and ffmpeg push to, and clients read
/// from, RTP over UDP only); killed when dropped. `None`, with a note, where it is not installed.
pub struct RtspServer {
    child: Child,
    /// Where a client reads, and where a pusher sends.
    pub client_port: u16,
    pub source_port: u16,
}

impl RtspServer {
    pub fn start() -> Option<RtspServer> {
        RtspServer::start_on(free_port(), free_port())
    }

    /// On given ports.
    pub fn start_on(client_port: u16, source_port: u16) -> Option<RtspServer> {
        // Its RTP ports: a range of its own per test run.
        let rtp = 20_000 + (std::process::id() % 2_000) * 16;
        let child = Command::new("rtsp-server-perl")
            .args(["--clientport", &client_port.to_string(), "--serverport", &source_port.to_string()])
            .args(["--client_listen_address", "127.0.0.1", "--source_listen_address", "127.0.0.1"])
            .args(["--rtp_start_port", &rtp.to_string(), "--loglevel", "1"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let Ok(child) = child else {
            eprintln!("note: rtsp-server-perl not found (apt-get install rtsp-server-perl); RTSP test skipped");
            return None;
        };
        let server = RtspServer { child, client_port, source_port };
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", source_port)).is_err() {
            assert!(std::time::Instant::now() < deadline, "rtsp-server-perl did not start listening");
            std::thread::sleep(Duration::from_millis(100));
        }
        Some(server)
    }
}

impl Drop for RtspServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// ffmpeg pushing a recording to an RTSP server in real time from `from` seconds (H.264, a key
/// frame a second, as a camera would); killed when dropped.
pub struct RtspPush {
    child: Child,
}

impl RtspPush {
    pub fn start(video: &Path, url: &str, from: f64) -> RtspPush {
        RtspPush::push(video, url, from, None)
    }

    /// From the start, its first frame held for `hold` seconds first.
    pub fn start_held(video: &Path, url: &str, hold: f64) -> RtspPush {
        RtspPush::push(video, url, 0.0, Some(hold))
    }

    fn push(video: &Path, url: &str, from: f64, hold: Option<f64>) -> RtspPush {
        let mut command = Command::new("ffmpeg");
        command.args(["-hide_banner", "-nostdin", "-loglevel", "error", "-re", "-ss", &format!("{from:.2}"), "-i"]).arg(video);
        if let Some(hold) = hold {
            command.args(["-vf", &format!("tpad=start_mode=clone:start_duration={hold}")]);
        }
        let child = command
            .args(["-an", "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-g", "10"])
            .args(["-f", "rtsp", "-rtsp_transport", "udp", url])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("ffmpeg starts");
        RtspPush { child }
    }
}

impl Drop for RtspPush {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
