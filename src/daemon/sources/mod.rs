//! Where a board's frames or board states come from, one module per kind: [`vision`] (a camera,
//! a video file or a stream, captured on a thread of its own) and [`observations`] (a file of
//! `boardwatch track`'s JSON lines read at a given pace, which tests and other recognisers use).
//! Sources only read: what a frame shows is the board runner's business (`pipeline`).
//!
//! Sources block; each runs on its board's own thread under the [`supervisor`](super::supervisor),
//! which reopens it when it fails.

pub mod observations;
pub mod vision;

use std::sync::Arc;

use super::config::{BoardConfig, SourceConfig};
use super::stop::StopSignal;
use crate::tracker::Input;
use crate::vision::source::Frame;
pub use observations::ObservationFile;
pub use vision::VisionSource;

/// A JPEG picture of the board (the camera's view with the overlay) for the live page.
pub type Picture = Arc<[u8]>;

/// What a source delivers.
pub enum SourceInput {
    /// A camera frame, for the vision pipeline.
    Frame(Frame),
    /// A board state or an operator command for the tracker, read from a file.
    Tracker(Input),
}

/// One step of a source: usually one frame.
#[derive(Default)]
pub struct SourceItem {
    /// A frame or an input; `None` for a line that could not be read.
    pub input: Option<SourceInput>,
    /// Where the source stands (a file's line number), logged with the input so that a restarted
    /// daemon can continue a file source after what it already recorded.
    pub cursor: Option<u64>,
    /// A new picture for the live page.
    pub picture: Option<Picture>,
    /// Problems that do not stop the source (a malformed line).
    pub warnings: Vec<String>,
    /// Frames of a live source dropped since the last item because the board was still busy
    /// with an older one.
    pub dropped: u64,
    /// Time spent decoding this frame (on average, with the frames dropped since the last one).
    pub decode: Option<std::time::Duration>,
}

/// A board's source of observations. Implementations block in `next` (a camera waits for its
/// next frame) but return at least every second or so, and at once after `stop`.
pub trait BoardSource: Send {
    /// What it reads, for logs and the API: `camera /dev/video0`, `observations game.jsonl`.
    fn describe(&self) -> String;
    /// Open (or reopen after a failure) the device or file.
    fn open(&mut self) -> anyhow::Result<()>;
    /// Continue after `cursor` (from the event log) instead of from the start. Live sources have
    /// no past to skip and ignore it.
    fn resume_after(&mut self, _cursor: u64) {}
    /// The time (seconds, on the board's clock) of the last input recorded before a restart:
    /// a live source's clock goes on from there, so that the record's times never run backwards.
    fn resume_clock(&mut self, _t: f64) {}
    /// The shortest pause before the next attempt after a failure, when the source needs one
    /// beyond the backoff (a camera that never answered).
    fn min_pause(&self) -> Option<std::time::Duration> {
        None
    }
    /// A camera or a stream: it never ends, it is reconnected.
    fn live(&self) -> bool {
        false
    }
    /// The next item; `Ok(None)` when a finite source has ended (or `stop` was raised); an error
    /// when the device failed (the supervisor reopens it after a pause).
    fn next(&mut self, stop: &StopSignal) -> anyhow::Result<Option<SourceItem>>;
}

/// The source a board's configuration asks for.
pub fn open_source(board: &BoardConfig) -> Box<dyn BoardSource> {
    match &board.source {
        SourceConfig::Observations { path, pace, follow } => {
            Box::new(ObservationFile::new(path.clone(), *pace, *follow))
        }
        SourceConfig::Camera { .. } | SourceConfig::Video { .. } | SourceConfig::Stream { .. } => {
            Box::new(VisionSource::new(board))
        }
    }
}

/// What a configured source reads, for the API before the source is opened.
pub fn describe_config(source: &SourceConfig) -> String {
    match source {
        SourceConfig::Camera { device, .. } => format!("camera {device}"),
        SourceConfig::Video { path, .. } => format!("video {}", path.display()),
        SourceConfig::Stream { url } => format!("stream {}", without_password(url)),
        SourceConfig::Observations { path, .. } => format!("observations {}", path.display()),
    }
}

/// A URL without its user and password (`rtsp://user:pw@cam/1` → `rtsp://***@cam/1`): the API
/// and the logs show where a stream comes from, never its credentials.
pub fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://***@{}", &rest[at + 1..]),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_credentials_stay_out_of_descriptions() {
        assert_eq!(without_password("rtsp://admin:pw@10.0.0.5/live"), "rtsp://***@10.0.0.5/live");
        assert_eq!(without_password("http://cam.local/mjpeg?a=b@c"), "http://cam.local/mjpeg?a=b@c");
        assert_eq!(without_password("rtsp://cam/1"), "rtsp://cam/1");
    }
}
