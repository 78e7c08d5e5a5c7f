//! Frames from a camera, a video file or a stream, captured on a thread of its own
//! (`vision::capture`): a live source keeps only its newest frame, so that a slow recogniser
//! never makes it lag; a video file never loses one, is paced at its own rate when `realtime`, and
//! continues after the frames already recorded before a restart.

use std::time::{Duration, Instant};

use anyhow::Context;

use super::{BoardSource, SourceInput, SourceItem};
use crate::daemon::config::{BoardConfig, SourceConfig};
use crate::daemon::stop::StopSignal;
use crate::vision::capture::{Capture, Captured, Policy};
use crate::vision::source::{CameraId, CameraRequest, SourceSpec};

/// A live source that delivers nothing for this long has failed (a camera that hangs).
const STALL_LIMIT: Duration = Duration::from_secs(5);
/// How long opening a camera or a stream may take before it counts as failed.
const OPEN_LIMIT: Duration = Duration::from_secs(30);

pub struct VisionSource {
    board: String,
    spec: SourceSpec,
    live: bool,
    realtime: bool,
    capture: Option<Capture>,
    last_frame: Instant,
    /// Frames of a video file already recorded before a restart.
    skip_through: u64,
    describe: String,
}

impl VisionSource {
    pub fn new(board: &BoardConfig) -> VisionSource {
        let (spec, live, realtime) = match &board.source {
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
            SourceConfig::Observations { .. } => unreachable!("observation files have their own source"),
        };
        VisionSource {
            board: board.id.clone(),
            describe: super::describe_config(&board.source),
            spec,
            live,
            realtime,
            capture: None,
            last_frame: Instant::now(),
            skip_through: 0,
        }
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
        let described = opened.map_err(anyhow::Error::msg)?;
        tracing::info!(board = %self.board, "capturing from {described}");
        self.last_frame = Instant::now();
        self.capture = Some(capture);
        Ok(())
    }

    fn resume_after(&mut self, cursor: u64) {
        // Only a recording can go back to where it was; a camera shows the present.
        if !self.live {
            self.skip_through = cursor;
        }
    }

    fn next(&mut self, stop: &StopSignal) -> anyhow::Result<Option<SourceItem>> {
        use std::sync::mpsc::RecvTimeoutError;
        loop {
            if stop.is_stopped() {
                return Ok(None);
            }
            let capture = self.capture.as_ref().context("the source is not open")?;
            let frame = match capture.recv_timeout(Duration::from_millis(200)) {
                Ok(Captured::Frame(frame)) => frame,
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
            // A recording can continue after its last recorded frame; a camera shows the present.
            let cursor = (!self.live).then_some(frame.index);
            return Ok(Some(SourceItem { input: Some(SourceInput::Frame(frame)), cursor, ..SourceItem::default() }));
        }
    }
}
