//! The vision-backed source: frames from a camera, a video file or a stream, through the vision
//! pipeline (`vision::Watcher`: board location, classification, stability), handed to the
//! tracker as observations when the board is still and shows something new.
//!
//! Capture runs on a thread of its own, so that a slow recogniser never makes a live camera lag:
//! for live sources only the newest frame waits (older ones are dropped); a video file is read
//! frame by frame, paced at its own rate when `realtime`. Recognition runs on the board's thread.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::Context;
use opencv::core::Vector;
use opencv::prelude::*;

use super::config::{BoardConfig, SourceConfig};
use super::source::{BoardSource, Picture, SourceInput, SourceItem};
use super::supervisor::StopSignal;
use crate::draughts::rules::Rules;
use crate::pipeline::observation_from_view;
use crate::vision::source::{CameraId, CameraRequest, Frame, SourceSpec};
use crate::vision::{draw_overlay, Calibration, ColourModel, WatchConfig, Watcher};

/// A live source that delivers nothing for this long has failed (a camera that hangs).
const STALL_LIMIT: Duration = Duration::from_secs(5);
/// Pictures for the live page, at most this often.
const PICTURE_INTERVAL: Duration = Duration::from_millis(500);
/// Longest side of those pictures.
const PICTURE_MAX_PX: i32 = 640;
/// How long opening a camera or a stream may take before it counts as failed.
const OPEN_LIMIT: Duration = Duration::from_secs(30);

enum Captured {
    Opened(Result<String, String>),
    Frame(Frame),
    End,
    Failed(String),
}

struct Capture {
    frames: Receiver<Captured>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Capture {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Let the thread go: a driver call may block for a while, and it ends by itself.
        drop(self.thread.take());
    }
}

pub struct VisionSource {
    board: String,
    spec: SourceSpec,
    live: bool,
    realtime: bool,
    calibration: Option<PathBuf>,
    palette: Option<String>,
    /// The variant's rules: how the view's columns map to the tracker's (mirrored boards).
    rules: Rules,
    /// Where a calibration learnt from the start position is kept, for the next start.
    learnt_path: PathBuf,
    capture: Option<Capture>,
    watcher: Option<Watcher>,
    /// The last grid handed to the tracker (the same still board is not handed on again).
    handed_on: Option<[[char; 8]; 8]>,
    last_picture: Option<Instant>,
    last_frame: Instant,
    /// Frames of a video file already recorded before a restart.
    skip_through: u64,
    learnt_saved: bool,
    describe: String,
}

impl VisionSource {
    /// `folder`: the board's folder in the state directory.
    pub fn new(board: &BoardConfig, folder: &std::path::Path) -> VisionSource {
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
            describe: super::source::describe_config(&board.source),
            spec,
            live,
            realtime,
            calibration: board.calibration.clone(),
            palette: board.palette.clone(),
            rules: board.variant.rules(),
            learnt_path: folder.join("learnt-calibration.json"),
            capture: None,
            watcher: None,
            handed_on: None,
            last_picture: None,
            last_frame: Instant::now(),
            skip_through: 0,
            learnt_saved: false,
        }
    }

    /// The recogniser: from the configured calibration, else one learnt earlier from this
    /// board's start position, else the palette alone (it learns from the next start position).
    fn watcher(&self) -> anyhow::Result<Watcher> {
        let config = WatchConfig::default();
        if let Some(path) = &self.calibration {
            let cal = Calibration::load(path).with_context(|| format!("calibration {}", path.display()))?;
            return Watcher::with_calibration(&cal, config).with_context(|| format!("calibration {}", path.display()));
        }
        if self.learnt_path.exists() {
            match Calibration::load(&self.learnt_path).and_then(|cal| Watcher::with_calibration(&cal, config)) {
                Ok(watcher) => return Ok(watcher),
                Err(e) => tracing::warn!(board = %self.board, "{}: {e}; learning again", self.learnt_path.display()),
            }
        }
        let name = self.palette.as_deref().unwrap_or("wooden");
        let palette = ColourModel::named(name).with_context(|| format!("palette {name:?}"))?;
        Ok(Watcher::new(palette, config)?)
    }

    fn start_capture(&self) -> Capture {
        let (sender, frames) = mpsc::sync_channel(if self.live { 1 } else { 4 });
        let stop = Arc::new(AtomicBool::new(false));
        let spec = self.spec.clone();
        let (live, realtime, skip_through) = (self.live, self.realtime, self.skip_through);
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name(format!("capture-{}", self.board))
            .spawn(move || capture(spec, live, realtime, skip_through, sender, flag))
            .ok();
        Capture { frames, stop, thread }
    }

    fn picture(&self, frame: &Frame, result: &crate::vision::FrameResult) -> Option<Picture> {
        let location = result.location.as_ref()?;
        let overlay = draw_overlay(&frame.image, location, result.reading.as_ref(), PICTURE_MAX_PX).ok()?;
        let mut jpeg = Vector::<u8>::new();
        opencv::imgcodecs::imencode(".jpg", &overlay, &mut jpeg, &Vector::new()).ok()?;
        Some(Arc::from(jpeg.to_vec()))
    }
}

/// The capture thread: open the source, then hand on frames until the end, a failure or stop.
/// Frames up to `skip_through` (recorded before a restart) are read past at once.
fn capture(
    spec: SourceSpec,
    live: bool,
    realtime: bool,
    skip_through: u64,
    sender: SyncSender<Captured>,
    stop: Arc<AtomicBool>,
) {
    let mut source = match crate::vision::source::open(&spec) {
        Ok(source) => {
            let _ = sender.send(Captured::Opened(Ok(source.describe())));
            source
        }
        Err(e) => {
            let _ = sender.send(Captured::Opened(Err(e.to_string())));
            return;
        }
    };
    // When the first frame after the skipped ones was read, and its time stamp.
    let mut clock: Option<(Instant, f64)> = None;
    while !stop.load(Ordering::Relaxed) {
        let frame = match source.next_frame() {
            Ok(Some(frame)) => frame,
            Ok(None) => {
                let _ = sender.send(Captured::End);
                return;
            }
            Err(e) => {
                let _ = sender.send(Captured::Failed(e.to_string()));
                return;
            }
        };
        if !live && frame.index <= skip_through && skip_through > 0 {
            continue;
        }
        if realtime && !live {
            // A recording played as if live: each frame at its time stamp after the first.
            let (started, t0) = *clock.get_or_insert((Instant::now(), frame.t));
            let due = Duration::from_secs_f64((frame.t - t0).max(0.0));
            if let Some(wait) = due.checked_sub(started.elapsed()) {
                std::thread::sleep(wait);
            }
        }
        let mut message = Captured::Frame(frame);
        loop {
            match sender.try_send(message) {
                Ok(()) => break,
                // Live: the recogniser is behind; this frame is dropped, the next one is newer.
                Err(TrySendError::Full(_)) if live => break,
                Err(TrySendError::Full(m)) => {
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    message = m;
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(TrySendError::Disconnected(_)) => return,
            }
        }
    }
}

impl BoardSource for VisionSource {
    fn describe(&self) -> String {
        self.describe.clone()
    }

    fn open(&mut self) -> anyhow::Result<()> {
        self.capture = None;
        self.watcher = Some(self.watcher()?);
        self.handed_on = None;
        let capture = self.start_capture();
        let opened = match capture.frames.recv_timeout(OPEN_LIMIT) {
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
        loop {
            if stop.is_stopped() {
                return Ok(None);
            }
            let capture = self.capture.as_ref().context("the source is not open")?;
            let frame = match capture.frames.recv_timeout(Duration::from_millis(200)) {
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
            return Ok(Some(self.recognise(frame)));
        }
    }
}

impl VisionSource {
    fn recognise(&mut self, frame: Frame) -> SourceItem {
        let cursor = (!self.live).then_some(frame.index);
        let watcher = self.watcher.as_mut().expect("open");
        let result = match watcher.process(&frame.image, frame.t) {
            Ok(result) => result,
            Err(e) => return SourceItem { cursor: None, warnings: vec![format!("{}: {e}", frame.name)], ..SourceItem::default() },
        };
        if !self.learnt_saved {
            if let Some(cal) = watcher.learnt_calibration() {
                self.learnt_saved = true;
                if let Err(e) = cal.save(&self.learnt_path) {
                    tracing::warn!(board = %self.board, "{}: {e}", self.learnt_path.display());
                }
            }
        }
        let picture = match self.last_picture {
            Some(at) if at.elapsed() < PICTURE_INTERVAL => None,
            _ => {
                let picture = self.picture(&frame, &result);
                if picture.is_some() {
                    self.last_picture = Some(Instant::now());
                }
                picture
            }
        };
        let input = match &result.view {
            Some(view) if view.stable && self.handed_on != Some(view.grid) => {
                self.handed_on = Some(view.grid);
                Some(SourceInput::Observation(Box::new(observation_from_view(view, &self.rules))))
            }
            _ => None,
        };
        // Only frames that hand something on move the cursor: a restart then replays the frames
        // after the last recorded board, and the recogniser sees the board settle again.
        let cursor = if input.is_some() { cursor } else { None };
        SourceItem { input, cursor, picture, warnings: Vec::new() }
    }
}
