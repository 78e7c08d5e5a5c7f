//! `replay --overlay-video`: what the watcher saw, frame by frame, as a video.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use boardwatch::vision::{draw_overlay, FrameResult};
use opencv::core::{self, Mat, Point, Rect, Scalar, Size};
use opencv::prelude::*;
use opencv::{imgproc, videoio};

/// Side of the (square) output frames, pixels: the board crop is scaled to fit.
pub const OVERLAY_PX: i32 = 720;
/// Room above the picture for the status line.
const STATUS_PX: i32 = 32;

pub struct OverlayVideo {
    writer: videoio::VideoWriter,
    path: PathBuf,
    size: Size,
}

impl OverlayVideo {
    /// A new video at `path` (replaced if it exists): Motion-JPEG for `.avi`, MPEG-4 otherwise.
    pub fn create(path: &Path, fps: f64) -> anyhow::Result<OverlayVideo> {
        let avi = path.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("avi"));
        let fourcc = if avi { videoio::VideoWriter::fourcc('M', 'J', 'P', 'G') } else { videoio::VideoWriter::fourcc('m', 'p', '4', 'v') }?;
        let size = Size::new(OVERLAY_PX, OVERLAY_PX + STATUS_PX);
        let name = path.to_str().with_context(|| format!("--overlay-video {}: not a UTF-8 path", path.display()))?;
        let writer = videoio::VideoWriter::new_with_backend(name, videoio::CAP_FFMPEG, fourcc, fps, size, true).with_context(|| format!("--overlay-video {}", path.display()))?;
        if !writer.is_opened().unwrap_or(false) {
            bail!("--overlay-video {}: cannot be written (does the folder exist? is the format known?)", path.display());
        }
        Ok(OverlayVideo { writer, path: path.to_path_buf(), size })
    }

    /// One output frame: the board crop with the grid and readings (the whole
    /// frame while no board is known) and a status line.
    pub fn write(&mut self, image: &Mat, result: &FrameResult) -> anyhow::Result<()> {
        self.write_frame(image, result).with_context(|| format!("--overlay-video {}", self.path.display()))
    }

    fn write_frame(&mut self, image: &Mat, result: &FrameResult) -> anyhow::Result<()> {
        let picture = match &result.location {
            Some(loc) => draw_overlay(image, loc, result.reading.as_ref(), OVERLAY_PX)?,
            None => image.clone(),
        };
        // Fit the picture (any size) below the status line.
        let s = (OVERLAY_PX as f64 / picture.cols().max(1) as f64).min(OVERLAY_PX as f64 / picture.rows().max(1) as f64);
        let fit = Size::new(((picture.cols() as f64 * s) as i32).clamp(1, OVERLAY_PX), ((picture.rows() as f64 * s) as i32).clamp(1, OVERLAY_PX));
        let mut scaled = Mat::default();
        if fit == picture.size()? {
            scaled = picture;
        } else {
            imgproc::resize(&picture, &mut scaled, fit, 0.0, 0.0, imgproc::INTER_AREA)?;
        }
        let mut canvas = Mat::new_size_with_default(self.size, core::CV_8UC3, Scalar::all(0.0))?;
        {
            let at = Rect::new((OVERLAY_PX - fit.width) / 2, STATUS_PX + (OVERLAY_PX - fit.height) / 2, fit.width, fit.height);
            let mut roi = Mat::roi_mut(&mut canvas, at)?;
            scaled.copy_to(&mut roi)?;
        }
        let st = &result.stability;
        let (status, colour) = if result.location.is_none() {
            ("board not found".to_string(), Scalar::new(0.0, 0.0, 255.0, 0.0))
        } else if st.stable {
            ("stable".to_string(), Scalar::new(0.0, 220.0, 0.0, 0.0))
        } else if st.hand {
            ("hand / motion".to_string(), Scalar::new(0.0, 140.0, 255.0, 0.0))
        } else {
            (format!("still {:.1} s", st.still_for), Scalar::new(200.0, 200.0, 200.0, 0.0))
        };
        let read = if result.read { "  (read)" } else { "" };
        let text = format!("{:8.2} s  {status}{read}", result.t);
        imgproc::put_text(&mut canvas, &text, Point::new(8, STATUS_PX - 9), imgproc::FONT_HERSHEY_SIMPLEX, 0.7, colour, 2, imgproc::LINE_AA, false)?;
        self.writer.write(&canvas)?;
        Ok(())
    }

    /// Finish the file (the container is written on release).
    pub fn finish(mut self) -> anyhow::Result<()> {
        self.writer.release().with_context(|| format!("--overlay-video {}", self.path.display()))
    }
}
