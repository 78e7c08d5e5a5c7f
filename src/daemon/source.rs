//! Where a board's states come from. A source is anything that yields board observations (and
//! camera pictures for the live page): the vision pipeline over a camera, a video file or a
//! stream, or a file of observation JSON lines (`boardwatch track`'s input format) read at a
//! given pace, which tests and other recognisers use.
//!
//! Sources block; each runs on its board's own thread under the [`supervisor`](super::supervisor),
//! which reopens it when it fails.

use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use serde_json::Value;

use super::config::{BoardConfig, SourceConfig};
use super::supervisor::StopSignal;
use super::vision_source::VisionSource;
use crate::tracker::{parse_input_line, InputLine, Observation, Reading, SquareClass};

/// A JPEG picture of the board (the camera's view with the overlay) for the live page.
pub type Picture = Arc<[u8]>;

/// Something for the tracker.
#[derive(Clone, Debug, PartialEq)]
pub enum SourceInput {
    /// A board state as read.
    Observation(Box<Observation>),
    /// An operator command recorded in an observation file, as a `{"op": ...}` JSON object.
    Command(Value),
}

/// One step of a source: usually one frame.
#[derive(Clone, Debug, Default)]
pub struct SourceItem {
    /// A board state (or command) for the tracker; `None` for a frame with nothing new.
    pub input: Option<SourceInput>,
    /// Where the source stands (a file's line number), logged with the input so that a restarted
    /// daemon can continue a file source after what it already recorded.
    pub cursor: Option<u64>,
    /// A new picture for the live page.
    pub picture: Option<Picture>,
    /// Problems that do not stop the source (a malformed line).
    pub warnings: Vec<String>,
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
    /// The next item; `Ok(None)` when a finite source has ended (or `stop` was raised); an error
    /// when the device failed (the supervisor reopens it after a pause).
    fn next(&mut self, stop: &StopSignal) -> anyhow::Result<Option<SourceItem>>;
}

/// The source a board's configuration asks for; `folder` is the board's folder in the state
/// directory (the vision source keeps a calibration learnt from the start position there).
pub fn open_source(board: &BoardConfig, folder: &Path) -> Box<dyn BoardSource> {
    match &board.source {
        SourceConfig::Observations { path, pace, follow } => {
            Box::new(ObservationFile::new(path.clone(), *pace, *follow))
        }
        SourceConfig::Camera { .. } | SourceConfig::Video { .. } | SourceConfig::Stream { .. } => {
            Box::new(VisionSource::new(board, folder))
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

/// Board states from a file of JSON lines (`boardwatch track` input), one every `pace`.
/// With `follow`, the end of the file is not the end: lines appended later are read as they come
/// (as `tail -f`), which lets another program or a test play a game into a running daemon.
pub struct ObservationFile {
    path: PathBuf,
    pace: Duration,
    follow: bool,
    reader: Option<BufReader<File>>,
    /// Lines read so far (the cursor of the last line).
    line_number: u64,
    /// Lines up to this one were recorded before a restart.
    skip_through: u64,
    /// A line written only in part (no newline yet) while following.
    partial: String,
    delivered_any: bool,
}

impl ObservationFile {
    pub fn new(path: PathBuf, pace: Duration, follow: bool) -> ObservationFile {
        ObservationFile {
            path,
            pace,
            follow,
            reader: None,
            line_number: 0,
            skip_through: 0,
            partial: String::new(),
            delivered_any: false,
        }
    }

    /// The next complete line, or `None` at the end of the file (for now, when following).
    fn read_line(&mut self) -> anyhow::Result<Option<String>> {
        let reader = self.reader.as_mut().context("the file is not open")?;
        let mut chunk = String::new();
        let read = reader.read_line(&mut chunk).with_context(|| format!("reading {}", self.path.display()))?;
        if read == 0 {
            return Ok(None);
        }
        self.partial.push_str(&chunk);
        // While following, a line without its newline is still being written; the last line of
        // a finished file needs none.
        if !self.partial.ends_with('\n') && self.follow {
            return Ok(None);
        }
        self.line_number += 1;
        Ok(Some(std::mem::take(&mut self.partial)))
    }
}

impl BoardSource for ObservationFile {
    fn describe(&self) -> String {
        format!("observations {}", self.path.display())
    }

    fn open(&mut self) -> anyhow::Result<()> {
        let file = File::open(&self.path).with_context(|| format!("opening {}", self.path.display()))?;
        let mut reader = BufReader::new(file);
        reader.seek(SeekFrom::Start(0))?;
        self.reader = Some(reader);
        self.line_number = 0;
        self.partial.clear();
        Ok(())
    }

    fn resume_after(&mut self, cursor: u64) {
        self.skip_through = cursor;
    }

    fn next(&mut self, stop: &StopSignal) -> anyhow::Result<Option<SourceItem>> {
        loop {
            let Some(line) = self.read_line()? else {
                if !self.follow {
                    return Ok(None);
                }
                if stop.sleep(Duration::from_millis(50)) {
                    return Ok(None);
                }
                continue;
            };
            if self.line_number <= self.skip_through || line.trim().is_empty() {
                continue;
            }
            // The pace is the time between board states, as a camera would see them come.
            if self.delivered_any && stop.sleep(self.pace) {
                return Ok(None);
            }
            self.delivered_any = true;
            let cursor = Some(self.line_number);
            let where_ = format!("{}: line {}", self.path.display(), self.line_number);
            let item = match parse_input_line(&line) {
                Ok(InputLine::Observation(obs)) => SourceItem {
                    picture: render_board_picture(&obs),
                    input: Some(SourceInput::Observation(obs)),
                    cursor,
                    warnings: Vec::new(),
                },
                Ok(InputLine::Command(_)) => {
                    let op: Value = serde_json::from_str(&line).context("re-reading a command")?;
                    SourceItem { input: Some(SourceInput::Command(op)), cursor, ..SourceItem::default() }
                }
                // A bad line is a bad frame: reported, and the file goes on.
                Err(e) => SourceItem { cursor, warnings: vec![format!("{where_}: {e}")], ..SourceItem::default() },
            };
            return Ok(Some(item));
        }
    }
}

/// A drawn picture of an observed board (for sources without a camera): dark and light squares,
/// pieces as discs, kings with a ring, unknown squares grey, probabilities as their likeliest
/// class. `None` if encoding fails (the page then keeps the previous picture).
pub fn render_board_picture(obs: &Observation) -> Option<Picture> {
    use opencv::core::{Mat, Point, Scalar, Vector, CV_8UC3};
    use opencv::imgproc::{circle, rectangle_points, FILLED, LINE_AA};
    use opencv::prelude::*;

    const CELL: i32 = 40;
    let bgr = |r: f64, g: f64, b: f64| Scalar::new(b, g, r, 0.0);
    let mut img = Mat::new_rows_cols_with_default(8 * CELL, 8 * CELL, CV_8UC3, bgr(240.0, 217.0, 181.0)).ok()?;
    for row in 0..8 {
        for col in 0..8 {
            let (x, y) = (col as i32 * CELL, row as i32 * CELL);
            let dark = (row + col) % 2 == 1;
            let square = if dark { bgr(181.0, 136.0, 99.0) } else { bgr(240.0, 217.0, 181.0) };
            rectangle_points(&mut img, Point::new(x, y), Point::new(x + CELL - 1, y + CELL - 1), square, FILLED, 8, 0)
                .ok()?;
            let class = match obs.squares[row][col] {
                Reading::Class(c) => Some(c),
                Reading::Unknown => None,
                Reading::Probabilities(p) => {
                    let best = (0..5).max_by(|&a, &b| p[a].total_cmp(&p[b])).unwrap_or(0);
                    Some(SquareClass::ALL[best])
                }
            };
            let centre = Point::new(x + CELL / 2, y + CELL / 2);
            let (fill, king) = match class {
                None => (Some(bgr(150.0, 150.0, 150.0)), false),
                Some(SquareClass::Empty) => (None, false),
                Some(SquareClass::BlackMan) => (Some(bgr(170.0, 30.0, 30.0)), false),
                Some(SquareClass::BlackKing) => (Some(bgr(170.0, 30.0, 30.0)), true),
                Some(SquareClass::WhiteMan) => (Some(bgr(250.0, 245.0, 230.0)), false),
                Some(SquareClass::WhiteKing) => (Some(bgr(250.0, 245.0, 230.0)), true),
            };
            if let Some(fill) = fill {
                circle(&mut img, centre, CELL * 2 / 5, fill, FILLED, LINE_AA, 0).ok()?;
                if king {
                    circle(&mut img, centre, CELL / 5, bgr(230.0, 180.0, 30.0), 3, LINE_AA, 0).ok()?;
                }
            }
        }
    }
    let mut jpeg = Vector::<u8>::new();
    opencv::imgcodecs::imencode(".jpg", &img, &mut jpeg, &Vector::new()).ok()?;
    Some(Arc::from(jpeg.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const START: &str = r#"{"grid":[".b.b.b.b","b.b.b.b.",".b.b.b.b","........","........","w.w.w.w.",".w.w.w.w","w.w.w.w."]}"#;

    fn temp_file(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("bw-source-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("obs.jsonl");
        std::fs::write(&path, text).unwrap();
        path
    }

    fn drain(source: &mut ObservationFile) -> Vec<SourceItem> {
        let stop = StopSignal::new();
        let mut items = Vec::new();
        while let Some(item) = source.next(&stop).unwrap() {
            items.push(item);
        }
        items
    }

    #[test]
    fn reads_observations_commands_and_reports_bad_lines() {
        let path = temp_file("read", &format!("{START}\n\n{{\"op\":\"back\"}}\nnot json\n{START}"));
        let mut source = ObservationFile::new(path, Duration::ZERO, false);
        assert!(source.next(&StopSignal::new()).is_err(), "not opened yet");
        source.open().unwrap();
        let items = drain(&mut source);
        assert_eq!(items.iter().map(|i| i.cursor.unwrap()).collect::<Vec<_>>(), [1, 3, 4, 5]);
        assert!(matches!(items[0].input, Some(SourceInput::Observation(_))));
        assert!(items[0].picture.as_ref().is_some_and(|p| p.starts_with(&[0xff, 0xd8])), "a JPEG");
        assert_eq!(items[1].input, Some(SourceInput::Command(serde_json::json!({"op": "back"}))));
        assert!(items[2].input.is_none());
        assert!(items[2].warnings[0].contains("obs.jsonl: line 4: "), "{:?}", items[2].warnings);
        assert!(matches!(items[3].input, Some(SourceInput::Observation(_))), "no newline at the end");
    }

    #[test]
    fn resumes_after_the_recorded_line() {
        let path = temp_file("resume", &format!("{START}\n{START}\n{{\"op\":\"draw\"}}\n"));
        let mut source = ObservationFile::new(path, Duration::ZERO, false);
        source.resume_after(2);
        source.open().unwrap();
        let items = drain(&mut source);
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].cursor, Some(3));
    }

    #[test]
    fn following_reads_lines_appended_later_and_waits_for_whole_lines() {
        let path = temp_file("follow", &format!("{START}\n"));
        let mut source = ObservationFile::new(path.clone(), Duration::ZERO, true);
        source.open().unwrap();
        let stop = StopSignal::new();
        assert_eq!(source.next(&stop).unwrap().unwrap().cursor, Some(1));
        let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(b"{\"op\":").unwrap();
        file.flush().unwrap();
        let writer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(150));
            file.write_all(b"\"clear\"}\n").unwrap();
        });
        let item = source.next(&stop).unwrap().unwrap();
        assert_eq!(item.input, Some(SourceInput::Command(serde_json::json!({"op": "clear"}))));
        writer.join().unwrap();
        let stopper = stop.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            stopper.stop();
        });
        assert!(source.next(&stop).unwrap().is_none(), "stop ends the wait");
    }

    #[test]
    fn stream_credentials_stay_out_of_descriptions() {
        assert_eq!(without_password("rtsp://admin:pw@10.0.0.5/live"), "rtsp://***@10.0.0.5/live");
        assert_eq!(without_password("http://cam.local/mjpeg?a=b@c"), "http://cam.local/mjpeg?a=b@c");
        assert_eq!(without_password("rtsp://cam/1"), "rtsp://cam/1");
    }

    #[test]
    fn a_missing_file_is_named() {
        let mut source = ObservationFile::new("/nonexistent-bw/obs.jsonl".into(), Duration::ZERO, false);
        let err = format!("{:#}", source.open().unwrap_err());
        assert!(err.contains("opening /nonexistent-bw/obs.jsonl: No such file"), "{err}");
    }
}
