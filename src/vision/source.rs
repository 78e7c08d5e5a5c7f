//! Frame sources: still images, folders of images, video files, network streams
//! (through OpenCV's video I/O) and live cameras (through `nokhwa`, V4L2 on Linux).
//!
//! Every source hands out [`Frame`]s: an 8-bit BGR image, a time stamp in seconds
//! (from the video's own clock, the camera's arrival time, or frame index / fps
//! for images) and a name for messages and file names.
//!
//! A source is named by one string ([`SourceSpec::parse`]):
//! * `camera:0`, `cam:1`, `camera:"HD Webcam"`: a live camera by index or by
//!   (part of its) name; resolution and frame rate come from [`CameraRequest`];
//! * `rtsp://...`, `http://...`, `https://...`: a network stream;
//! * a folder: every image in it, in name order;
//! * a file: an image (by extension: jpg, jpeg, png, bmp, tif, tiff, webp) or
//!   else a video.
use std::path::{Path, PathBuf};
use std::time::Instant;

use opencv::core::Mat;
use opencv::prelude::*;
use opencv::{imgcodecs, imgproc, videoio};
use thiserror::Error;

use super::media_check;

/// Errors of the frame sources; each names the file, stream or camera.
#[derive(Debug, Error)]
pub enum SourceError {
    #[error("{0}: no such file or folder")]
    Missing(PathBuf),
    #[error("{path}: {why}")]
    Unreadable { path: PathBuf, why: String },
    #[error("{0}: folder has no images (jpg, jpeg, png, bmp, tif, tiff, webp)")]
    EmptyFolder(PathBuf),
    #[error("stream {url}: {why}")]
    Stream { url: String, why: String },
    #[error("camera {camera}: {why}")]
    Camera { camera: String, why: String },
    #[error("bad source `{spec}`: {why}")]
    BadSpec { spec: String, why: String },
}

pub type Result<T> = std::result::Result<T, SourceError>;

const IMAGE_EXTENSIONS: [&str; 7] = ["jpg", "jpeg", "png", "bmp", "tif", "tiff", "webp"];

/// Whether a path names a still image (by extension).
pub fn is_image_path(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .map(|e| IMAGE_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
        .unwrap_or(false)
}

/// Which camera and how.
#[derive(Debug, Clone, PartialEq)]
pub struct CameraRequest {
    /// Index (`0`) or a part of the camera's name.
    pub camera: CameraId,
    /// Wanted resolution; the camera's closest one is used.
    pub width: u32,
    pub height: u32,
    /// Wanted frame rate (frames per second).
    pub fps: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub enum CameraId {
    Index(u32),
    Name(String),
}

impl std::fmt::Display for CameraId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CameraId::Index(i) => write!(f, "{i}"),
            CameraId::Name(n) => write!(f, "{n:?}"),
        }
    }
}

impl CameraRequest {
    pub fn new(camera: CameraId) -> Self {
        CameraRequest { camera, width: 1280, height: 720, fps: 30 }
    }

    /// Check the numbers before a camera is asked for them.
    pub fn validate(&self) -> Result<()> {
        let bad = |why: String| Err(SourceError::Camera { camera: self.camera.to_string(), why });
        if !(16..=8192).contains(&self.width) || !(16..=8192).contains(&self.height) {
            return bad(format!("impossible resolution {}x{} (16..8192 each)", self.width, self.height));
        }
        if !(1..=480).contains(&self.fps) {
            return bad(format!("impossible frame rate {} (1..480)", self.fps));
        }
        Ok(())
    }
}

/// What a source string names.
#[derive(Debug, Clone, PartialEq)]
pub enum SourceSpec {
    /// Still images, read in this order.
    Images(Vec<PathBuf>),
    /// A video file.
    Video(PathBuf),
    /// A network stream (RTSP, HTTP MJPEG, ...), opened by OpenCV.
    Stream(String),
    /// A live camera through nokhwa.
    Camera(CameraRequest),
}

impl SourceSpec {
    /// Parse one source string (see the module documentation). Folders are
    /// listed here, so a missing or empty folder is an error right away.
    pub fn parse(spec: &str) -> Result<SourceSpec> {
        let bad = |why: &str| SourceError::BadSpec { spec: spec.to_string(), why: why.to_string() };
        let lower = spec.to_ascii_lowercase();
        for prefix in ["camera:", "cam:"] {
            if lower.starts_with(prefix) {
                let rest = spec[prefix.len()..].trim().trim_matches('"');
                if rest.is_empty() {
                    return Err(bad("name a camera: camera:0 or camera:NAME"));
                }
                let id = match rest.parse::<u32>() {
                    Ok(i) => CameraId::Index(i),
                    Err(_) => CameraId::Name(rest.to_string()),
                };
                return Ok(SourceSpec::Camera(CameraRequest::new(id)));
            }
        }
        if ["rtsp://", "rtsps://", "http://", "https://", "rtmp://", "udp://", "tcp://"].iter().any(|p| lower.starts_with(p)) {
            return Ok(SourceSpec::Stream(spec.to_string()));
        }
        if spec.is_empty() {
            return Err(bad("empty"));
        }
        let path = PathBuf::from(spec);
        if path.is_dir() {
            return Ok(SourceSpec::Images(list_images(&path)?));
        }
        if !path.exists() {
            return Err(SourceError::Missing(path));
        }
        if is_image_path(&path) {
            Ok(SourceSpec::Images(vec![path]))
        } else {
            Ok(SourceSpec::Video(path))
        }
    }
}

/// The images of a folder, in name order.
pub fn list_images(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(dir).map_err(|e| SourceError::Unreadable { path: dir.to_path_buf(), why: e.to_string() })?;
    let mut v: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_file() && is_image_path(p)).collect();
    v.sort();
    if v.is_empty() {
        return Err(SourceError::EmptyFolder(dir.to_path_buf()));
    }
    Ok(v)
}

/// One frame: 8-bit BGR.
pub struct Frame {
    pub image: Mat,
    /// Seconds since the start of the source.
    pub t: f64,
    /// 0-based frame number.
    pub index: u64,
    /// File name (images) or `source#index`.
    pub name: String,
}

/// Anything that hands out frames.
pub trait FrameSource {
    /// The next frame, `Ok(None)` at the end. A corrupt file, a dropped stream
    /// or an unplugged camera is an error naming it.
    fn next_frame(&mut self) -> Result<Option<Frame>>;
    /// Human-readable description (file, URL or camera and its format).
    fn describe(&self) -> String;
}

/// Open any source.
pub fn open(spec: &SourceSpec) -> Result<Box<dyn FrameSource>> {
    Ok(match spec {
        SourceSpec::Images(paths) => Box::new(ImageSource::new(paths.clone(), 1.0)?),
        SourceSpec::Video(path) => Box::new(VideoSource::open_file(path)?),
        SourceSpec::Stream(url) => Box::new(VideoSource::open_stream(url)?),
        SourceSpec::Camera(req) => Box::new(CameraSource::open(req)?),
    })
}

/// Read one still image, EXIF orientation applied (as viewers show it).
pub fn read_image(path: &Path) -> Result<Mat> {
    if !path.exists() {
        return Err(SourceError::Missing(path.to_path_buf()));
    }
    if !path.is_file() {
        return Err(SourceError::Unreadable { path: path.to_path_buf(), why: "not a file".into() });
    }
    check_image_header(path)?;
    let img = imgcodecs::imread(path, imgcodecs::IMREAD_COLOR)
        .map_err(|e| SourceError::Unreadable { path: path.to_path_buf(), why: e.to_string() })?;
    if img.empty() {
        return Err(SourceError::Unreadable { path: path.to_path_buf(), why: "not an image OpenCV can decode".into() });
    }
    Ok(img)
}

/// Refuses an image whose header claims an absurd size, before OpenCV tries to decode it.
fn check_image_header(path: &Path) -> Result<()> {
    use std::io::Read;
    let unreadable = |why: String| SourceError::Unreadable { path: path.to_path_buf(), why };
    let file = std::fs::File::open(path).map_err(|e| unreadable(e.to_string()))?;
    let mut head = Vec::with_capacity(4096);
    file.take(media_check::IMAGE_HEADER_BYTES as u64).read_to_end(&mut head).map_err(|e| unreadable(e.to_string()))?;
    match media_check::image_header_size(&head).and_then(|(format, w, h)| media_check::refuse_image_size(format, w, h)) {
        Some(why) => Err(unreadable(why)),
        None => Ok(()),
    }
}

/// Why OpenCV could not open a video file, as far as the file shows it: an MP4 without its
/// index is named as the truncated recording it is.
fn video_open_failure(path: &Path) -> String {
    let layout = std::fs::File::open(path).ok().and_then(|mut f| media_check::mp4_layout(&mut f).ok().flatten());
    match layout {
        Some(layout) if layout.lacks_index() => media_check::truncated_mp4_message(&layout),
        _ => "not a video OpenCV can open".into(),
    }
}

/// Still images as frames, `1 / fps` seconds apart.
pub struct ImageSource {
    paths: Vec<PathBuf>,
    next: usize,
    fps: f64,
}

impl ImageSource {
    pub fn new(paths: Vec<PathBuf>, fps: f64) -> Result<Self> {
        if let Some(p) = paths.iter().find(|p| !p.exists()) {
            return Err(SourceError::Missing(p.clone()));
        }
        Ok(ImageSource { paths, next: 0, fps: if fps > 0.0 { fps } else { 1.0 } })
    }
}

impl FrameSource for ImageSource {
    fn next_frame(&mut self) -> Result<Option<Frame>> {
        let Some(path) = self.paths.get(self.next) else { return Ok(None) };
        let image = read_image(path)?;
        let index = self.next as u64;
        self.next += 1;
        Ok(Some(Frame { image, t: index as f64 / self.fps, index, name: path.display().to_string() }))
    }
    fn describe(&self) -> String {
        format!("{} image(s)", self.paths.len())
    }
}

/// How long a stream may take to open, and to deliver a frame once open.
/// OpenCV opens one stream at a time in a process (a lock around FFmpeg's open): a camera that
/// accepts the connection and never answers holds every other board's reconnection for this
/// long, so it is short.
pub const STREAM_OPEN_TIMEOUT_MS: i32 = 5_000;
/// How the error of a stream that connected but sent nothing in time begins.
pub const STREAM_SILENT: &str = "cannot be opened: no answer within";
static STREAM_OPENS: std::sync::Mutex<()> = std::sync::Mutex::new(());
const STREAM_READ_TIMEOUT_MS: i32 = 5_000;

/// A video file or network stream through OpenCV (FFmpeg backend).
pub struct VideoSource {
    cap: videoio::VideoCapture,
    name: String,
    is_file: bool,
    fps: f64,
    index: u64,
    started: Instant,
}

impl VideoSource {
    pub fn open_file(path: &Path) -> Result<Self> {
        if !path.is_file() {
            return Err(SourceError::Missing(path.to_path_buf()));
        }
        let unreadable = |why: String| SourceError::Unreadable { path: path.to_path_buf(), why };
        let cap = videoio::VideoCapture::from_file(path, videoio::CAP_FFMPEG).map_err(|e| unreadable(e.to_string()))?;
        if !cap.is_opened().unwrap_or(false) {
            return Err(unreadable(video_open_failure(path)));
        }
        Self::from_capture(cap, path.display().to_string(), true)
    }

    pub fn open_stream(url: &str) -> Result<Self> {
        let err = |why: String| SourceError::Stream { url: url.to_string(), why };
        // A stream that answers nothing fails in bounded time (FFmpeg's own default is 30 s),
        // so that a dead camera is reported and retried instead of hanging its board.
        let params = opencv::core::Vector::<i32>::from_slice(&[
            videoio::CAP_PROP_OPEN_TIMEOUT_MSEC,
            STREAM_OPEN_TIMEOUT_MS,
            videoio::CAP_PROP_READ_TIMEOUT_MSEC,
            STREAM_READ_TIMEOUT_MS,
        ]);
        // Taken here so that the time measured is the stream's own, not a wait for another
        // board's open (OpenCV would serialise the opens anyway).
        let _one_at_a_time = STREAM_OPENS.lock().unwrap_or_else(|e| e.into_inner());
        let started = Instant::now();
        let cap =
            videoio::VideoCapture::from_file_with_params(url, videoio::CAP_FFMPEG, &params).map_err(|e| err(e.to_string()))?;
        if !cap.is_opened().unwrap_or(false) {
            if started.elapsed().as_millis() as i32 >= STREAM_OPEN_TIMEOUT_MS * 9 / 10 {
                return Err(err(format!("{STREAM_SILENT} {} s", STREAM_OPEN_TIMEOUT_MS / 1000)));
            }
            return Err(err("cannot be opened (unreachable, or not a video stream)".into()));
        }
        Self::from_capture(cap, url.to_string(), false)
    }

    fn from_capture(cap: videoio::VideoCapture, name: String, is_file: bool) -> Result<Self> {
        let fps = cap.get(videoio::CAP_PROP_FPS).unwrap_or(0.0);
        let fps = if fps.is_finite() && fps > 0.5 && fps < 1000.0 { fps } else { 30.0 };
        Ok(VideoSource { cap, name, is_file, fps, index: 0, started: Instant::now() })
    }

    /// The number of frames a video file says it has (streams: `None`).
    pub fn frame_count(&self) -> Option<u64> {
        let n = self.cap.get(videoio::CAP_PROP_FRAME_COUNT).ok()?;
        (self.is_file && n.is_finite() && n > 0.0).then_some(n as u64)
    }

    pub fn fps(&self) -> f64 {
        self.fps
    }
}

impl FrameSource for VideoSource {
    fn next_frame(&mut self) -> Result<Option<Frame>> {
        let mut image = Mat::default();
        let reading = Instant::now();
        let ok = self.cap.read(&mut image).map_err(|e| self.error(e.to_string()))?;
        if !ok || image.empty() {
            // A stream that sends nothing is cut off by the read timeout: a stall, not an end.
            if !self.is_file && reading.elapsed().as_millis() as i32 >= STREAM_READ_TIMEOUT_MS * 9 / 10 {
                return Err(self.error(format!("no frame for {} s (the stream stalled)", STREAM_READ_TIMEOUT_MS / 1000)));
            }
            if self.index == 0 {
                return Err(self.error("no frame could be decoded".into()));
            }
            return Ok(None);
        }
        let image = to_bgr(image).map_err(|e| self.error(e.to_string()))?;
        // Files: the video's own clock (frame index / fps, which is what the
        // container's time stamps are for constant-rate video); streams: arrival time.
        let t = if self.is_file { self.index as f64 / self.fps } else { self.started.elapsed().as_secs_f64() };
        let index = self.index;
        self.index += 1;
        Ok(Some(Frame { image, t, index, name: format!("{}#{index}", self.name) }))
    }
    fn describe(&self) -> String {
        format!("{} ({:.1} fps)", self.name, self.fps)
    }
}

impl VideoSource {
    fn error(&self, why: String) -> SourceError {
        if self.is_file {
            SourceError::Unreadable { path: PathBuf::from(&self.name), why }
        } else {
            SourceError::Stream { url: self.name.clone(), why }
        }
    }
}

/// 1/3/4-channel 8-bit image to 3-channel BGR.
fn to_bgr(image: Mat) -> opencv::Result<Mat> {
    match image.channels() {
        3 => Ok(image),
        1 => {
            let mut out = Mat::default();
            imgproc::cvt_color_def(&image, &mut out, imgproc::COLOR_GRAY2BGR)?;
            Ok(out)
        }
        4 => {
            let mut out = Mat::default();
            imgproc::cvt_color_def(&image, &mut out, imgproc::COLOR_BGRA2BGR)?;
            Ok(out)
        }
        _ => Ok(image),
    }
}

/// A live camera through nokhwa. Frames arrive as MJPEG, YUYV, NV12, grey or
/// raw RGB/BGR and are converted with OpenCV (no extra JPEG decoder).
pub struct CameraSource {
    camera: nokhwa::Camera,
    label: String,
    format: nokhwa::utils::CameraFormat,
    index: u64,
    started: Instant,
}

impl CameraSource {
    pub fn open(req: &CameraRequest) -> Result<Self> {
        use nokhwa::utils::{ApiBackend, CameraFormat, CameraIndex, FrameFormat, RequestedFormat, RequestedFormatType, Resolution};
        req.validate()?;
        let label = req.camera.to_string();
        let err = |why: String| SourceError::Camera { camera: label.clone(), why };
        let index = match &req.camera {
            CameraId::Index(i) => CameraIndex::Index(*i),
            CameraId::Name(name) => {
                let list = nokhwa::query(ApiBackend::Auto).map_err(|e| err(format!("cannot list cameras: {e}")))?;
                let want = name.to_lowercase();
                let found = list.iter().find(|c| c.human_name().to_lowercase().contains(&want));
                match found {
                    Some(c) => c.index().clone(),
                    None => {
                        let names: Vec<String> = list.iter().map(|c| format!("{} ({})", c.human_name(), c.index())).collect();
                        return Err(err(format!(
                            "no camera with that name; present: {}",
                            if names.is_empty() { "none".to_string() } else { names.join(", ") }
                        )));
                    }
                }
            }
        };
        if let CameraIndex::Index(i) = &index {
            // nokhwa's V4L2 backend opens /dev/videoN; say plainly when it is not there.
            if cfg!(target_os = "linux") && !Path::new(&format!("/dev/video{i}")).exists() {
                return Err(err(format!("no such camera (/dev/video{i} does not exist)")));
            }
        }
        const FORMATS: [FrameFormat; 6] =
            [FrameFormat::MJPEG, FrameFormat::YUYV, FrameFormat::NV12, FrameFormat::GRAY, FrameFormat::RAWRGB, FrameFormat::RAWBGR];
        let wanted = CameraFormat::new(Resolution::new(req.width, req.height), FrameFormat::MJPEG, req.fps);
        let requested = RequestedFormat::with_formats(RequestedFormatType::Closest(wanted), &FORMATS);
        let mut camera = nokhwa::Camera::new(index, requested).map_err(|e| err(e.to_string()))?;
        camera.open_stream().map_err(|e| err(format!("cannot start streaming: {e}")))?;
        let format = camera.camera_format();
        Ok(CameraSource { camera, label, format, index: 0, started: Instant::now() })
    }
}

impl FrameSource for CameraSource {
    fn next_frame(&mut self) -> Result<Option<Frame>> {
        let err = |why: String| SourceError::Camera { camera: self.label.clone(), why };
        let raw = self.camera.frame_raw().map_err(|e| err(format!("frame capture failed: {e}")))?;
        let t = self.started.elapsed().as_secs_f64();
        let res = self.format.resolution();
        let image = decode_raw(&raw, self.format.format(), res.width() as i32, res.height() as i32).map_err(err)?;
        let index = self.index;
        self.index += 1;
        Ok(Some(Frame { image, t, index, name: format!("camera {}#{index}", self.label) }))
    }
    fn describe(&self) -> String {
        format!("camera {} ({})", self.label, self.format)
    }
}

/// An RGB picture of the `image` crate (a rendered frame, say) as an OpenCV BGR frame.
pub fn rgb_image_to_mat(image: &image::RgbImage) -> std::result::Result<Mat, String> {
    decode_raw(image.as_raw(), nokhwa::utils::FrameFormat::RAWRGB, image.width() as i32, image.height() as i32)
}

/// Convert one raw camera buffer to BGR.
pub fn decode_raw(raw: &[u8], format: nokhwa::utils::FrameFormat, w: i32, h: i32) -> std::result::Result<Mat, String> {
    use nokhwa::utils::FrameFormat as F;
    let e = |x: opencv::Error| x.to_string();
    if w <= 0 || h <= 0 {
        return Err(format!("bad frame size {w}x{h}"));
    }
    let need = |n: usize| if raw.len() < n { Err(format!("short frame: {} bytes, need {n}", raw.len())) } else { Ok(()) };
    let (w_, h_) = (w as usize, h as usize);
    let mut out = Mat::default();
    match format {
        F::MJPEG => {
            let buf = opencv::core::Vector::<u8>::from_slice(raw);
            out = imgcodecs::imdecode(&buf, imgcodecs::IMREAD_COLOR).map_err(e)?;
            if out.empty() {
                return Err("corrupt MJPEG frame".into());
            }
        }
        F::YUYV => {
            need(w_ * h_ * 2)?;
            let m = Mat::new_rows_cols_with_data(h, w * 2, &raw[..w_ * h_ * 2]).map_err(e)?;
            let m = m.reshape(2, h).map_err(e)?;
            imgproc::cvt_color_def(&m, &mut out, imgproc::COLOR_YUV2BGR_YUYV).map_err(e)?;
        }
        F::NV12 => {
            need(w_ * h_ * 3 / 2)?;
            let m = Mat::new_rows_cols_with_data(h * 3 / 2, w, &raw[..w_ * h_ * 3 / 2]).map_err(e)?;
            imgproc::cvt_color_def(&m, &mut out, imgproc::COLOR_YUV2BGR_NV12).map_err(e)?;
        }
        F::GRAY => {
            need(w_ * h_)?;
            let m = Mat::new_rows_cols_with_data(h, w, &raw[..w_ * h_]).map_err(e)?;
            imgproc::cvt_color_def(&m, &mut out, imgproc::COLOR_GRAY2BGR).map_err(e)?;
        }
        F::RAWRGB | F::RAWBGR => {
            need(w_ * h_ * 3)?;
            let m = Mat::new_rows_cols_with_data(h, w * 3, &raw[..w_ * h_ * 3]).map_err(e)?;
            let m = m.reshape(3, h).map_err(e)?;
            if format == F::RAWRGB {
                imgproc::cvt_color_def(&m, &mut out, imgproc::COLOR_RGB2BGR).map_err(e)?;
            } else {
                out = m.try_clone().map_err(e)?;
            }
        }
    }
    Ok(out)
}
