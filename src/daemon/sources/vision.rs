//! Frames from a camera, a video file or a stream, captured on a thread of its own
//! (`vision::capture`): a live source keeps only its newest frame, so that a slow recogniser
//! never makes it lag; a video file never loses one, is paced at its own rate when `realtime`, and
//! continues after the frames already recorded before a restart.
//!
//! A live source never ends: a camera or stream that ends, stalls or fails is an error, and the
//! supervisor reconnects it. Its frames are timed by the board's own clock (monotonic, from when
//! the board started, continued from the last recorded time after a restart), never by the
//! stream's, which starts again at every reconnection: the tracker's waits and the record's
//! clock times stay right across an outage.

use std::time::{Duration, Instant};

use anyhow::Context;

use super::{BoardSource, SourceInput, SourceItem};
use crate::daemon::config::{BoardConfig, SourceConfig};
use crate::daemon::stop::StopSignal;
use crate::vision::capture::{Capture, Captured, Policy};
use crate::vision::source::{CameraId, CameraRequest, SourceSpec};

/// A live source that delivers nothing for this long has failed (a camera that hangs).
pub(crate) const STALL_LIMIT: Duration = Duration::from_secs(5);
/// How long opening a camera or a stream may take before it counts as failed.
pub(crate) const OPEN_LIMIT: Duration = Duration::from_secs(30);
/// A stream that did not answer within its open timeout is tried again after at least this
/// long: OpenCV opens one stream at a time, and a dead camera must not keep the other boards'
/// cameras from reconnecting (it holds them at most a fifth of the time).
const SILENT_PAUSE: Duration = Duration::from_secs(20);
/// Frames dropped in the first moments after opening are the stream's start-up burst (what
/// was buffered while it was probed), not a board falling behind.
const START_BURST: Duration = Duration::from_secs(2);

pub struct VisionSource {
    board: String,
    spec: SourceSpec,
    live: bool,
    realtime: bool,
    capture: Option<Capture>,
    last_frame: Instant,
    /// The board's clock for live frames: `clock_base` seconds at `clock_start`.
    clock_start: Instant,
    clock_base: f64,
    /// What the current capture had counted at the last item (decoded, decode time, dropped).
    counted: (u64, u64, u64),
    opened_at: Instant,
    /// Set when the last attempt ran into the open timeout (see `SILENT_PAUSE`).
    silent: bool,
    /// Frames of a video file already recorded before a restart.
    skip_through: u64,
    describe: String,
}

/// The frames a configured source gives: what to open, whether it is live (a camera, a
/// stream), whether a file is played at its own pace. `None` for observation files.
pub fn frame_source(source: &SourceConfig) -> Option<(SourceSpec, bool, bool)> {
    Some(match source {
        SourceConfig::Camera { device, width, height, fps } => {
            // `/dev/video2` is camera 2; anything else is (part of) a camera's name.
            let id = device
                .strip_prefix("/dev/video")
                .unwrap_or(device)
                .parse::<u32>()
                .map(CameraId::Index)
                .unwrap_or_else(|_| CameraId::Name(device.clone()));
            let mut request = CameraRequest::new(id);
            request.width = width.unwrap_or(request.width);
            request.height = height.unwrap_or(request.height);
            request.fps = fps.map_or(request.fps, |f| f.round().max(1.0) as u32);
            (SourceSpec::Camera(request), true, true)
        }
        SourceConfig::Video { path, realtime } => (SourceSpec::Video(path.clone()), false, *realtime),
        SourceConfig::Stream { url } => (SourceSpec::Stream(url.clone()), true, true),
        SourceConfig::Observations { .. } => return None,
    })
}

impl VisionSource {
    pub fn new(board: &BoardConfig) -> VisionSource {
        let (spec, live, realtime) = frame_source(&board.source).expect("observation files have their own source");
        VisionSource {
            board: board.id.clone(),
            describe: super::describe_config(&board.source),
            spec,
            live,
            realtime,
            capture: None,
            last_frame: Instant::now(),
            clock_start: Instant::now(),
            clock_base: 0.0,
            counted: (0, 0, 0),
            opened_at: Instant::now(),
            silent: false,
            skip_through: 0,
        }
    }
}

impl VisionSource {
    /// Frames dropped since the last item, and the mean decoding time of the frames read since.
    fn count(&mut self) -> (u64, Option<Duration>) {
        use std::sync::atomic::Ordering::Relaxed;
        let Some(capture) = self.capture.as_ref() else { return (0, None) };
        let stats = capture.stats();
        let now = (stats.decoded.load(Relaxed), stats.decode_us.load(Relaxed), stats.dropped.load(Relaxed));
        let (decoded, micros, dropped) =
            (now.0.saturating_sub(self.counted.0), now.1.saturating_sub(self.counted.1), now.2.saturating_sub(self.counted.2));
        self.counted = now;
        let dropped = if self.opened_at.elapsed() < START_BURST { 0 } else { dropped };
        (dropped, (decoded > 0).then(|| Duration::from_micros(micros / decoded)))
    }
}

impl BoardSource for VisionSource {
    fn describe(&self) -> String {
        self.describe.clone()
    }

    fn open(&mut self) -> anyhow::Result<()> {
        self.capture = None;
        let policy = if self.live { Policy::Live } else { Policy::File { realtime: self.realtime, skip_through: self.skip_through } };
        let spec = self.spec.clone();
        let capture = Capture::start(&format!("capture-{}", self.board), policy, move || crate::vision::source::open(&spec))
            .context("cannot start the capture thread")?;
        let opened = match capture.recv_timeout(OPEN_LIMIT) {
            Ok(Captured::Opened(result)) => result,
            Ok(_) => Err("the capture thread said nothing".into()),
            Err(_) => Err(format!("not open after {} s", OPEN_LIMIT.as_secs())),
        };
        self.silent = opened.as_ref().is_err_and(|e| e.contains(crate::vision::source::STREAM_SILENT));
        let described = opened.map_err(anyhow::Error::msg)?;
        self.opened_at = Instant::now();
        tracing::info!(board = %self.board, "capturing from {described}");
        self.last_frame = Instant::now();
        self.counted = (0, 0, 0);
        self.capture = Some(capture);
        Ok(())
    }

    fn resume_after(&mut self, cursor: u64) {
        // Only a recording can go back to where it was; a camera shows the present.
        if !self.live {
            self.skip_through = cursor;
        }
    }

    fn resume_clock(&mut self, t: f64) {
        if self.live && t.is_finite() && t > 0.0 {
            self.clock_base = t;
            self.clock_start = Instant::now();
        }
    }

    fn live(&self) -> bool {
        self.live
    }

    fn min_pause(&self) -> Option<Duration> {
        self.silent.then_some(SILENT_PAUSE)
    }

    fn next(&mut self, stop: &StopSignal) -> anyhow::Result<Option<SourceItem>> {
        use std::sync::mpsc::RecvTimeoutError;
        loop {
            if stop.is_stopped() {
                return Ok(None);
            }
            let capture = self.capture.as_ref().context("the source is not open")?;
            let mut frame = match capture.recv_timeout(Duration::from_millis(200)) {
                Ok(Captured::Frame(frame)) => frame,
                // A camera or a stream that ends has failed: it is reconnected.
                Ok(Captured::End) if self.live => anyhow::bail!("the stream ended"),
                Ok(Captured::End) => return Ok(None),
                Ok(Captured::Failed(why)) => anyhow::bail!("{why}"),
                Ok(Captured::Opened(_)) => continue,
                Err(RecvTimeoutError::Timeout) if self.live && self.last_frame.elapsed() > STALL_LIMIT => {
                    anyhow::bail!("no frame for {} s", STALL_LIMIT.as_secs())
                }
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => anyhow::bail!("the capture thread ended"),
            };
            self.last_frame = Instant::now();
            if self.live {
                frame.t = self.clock_base + self.clock_start.elapsed().as_secs_f64();
            }
            let (dropped, decode) = self.count();
            // A recording can continue after its last recorded frame; a camera shows the present.
            let cursor = (!self.live).then_some(frame.index);
            return Ok(Some(SourceItem {
                input: Some(SourceInput::Frame(frame)),
                cursor,
                dropped,
                decode,
                ..SourceItem::default()
            }));
        }
    }
}
