//! The table under a projector, as the camera sees it: the projected calibration pattern found
//! (giving the map from camera pixels to the game's cells), hands told from the projected
//! picture, and the frame-by-frame road from a camera frame to the fingertip and its taps.
//!
//! The pure parts (pattern geometry, fingertip, dwell) are in `crate::touch`.

use image::GrayImage;
use opencv::core::{self, Mat, Point2f, Size, Vector};
use opencv::imgproc;
use opencv::prelude::*;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::{fit_h, VisionError};
use crate::touch::dwell::{DwellSettings, DwellTracker, Pointer, Tap, STILL_RADIUS};
use crate::touch::fingertip::{reaches, FingertipSettings, Reach};
use crate::touch::grid_map::{apply, invert, GridMap, Homography, TableView};
use crate::touch::pattern::CalibrationPattern;

/// Why the projected pattern gave no map.
#[derive(Debug, Error)]
pub enum PatternError {
    #[error("the calibration pattern is not seen: is the page in projector mode with the pattern shown, the projector on and the whole pinned rectangle in the camera's view?")]
    NotSeen,
    #[error("the calibration pattern is too small in the camera image ({share:.1}% of it; at least {min:.1}%): bring the camera closer or make the projected grid larger")]
    TooSmall { share: f64, min: f64 },
    #[error("the calibration pattern is seen too obliquely (its sides differ {ratio:.1} to 1; at most {max:.1}): put the camera more above the table")]
    TooOblique { ratio: f64, max: f64 },
    #[error("the calibration pattern's top could not be told (its marker is not seen)")]
    NoMarker,
    #[error(transparent)]
    Vision(#[from] VisionError),
}

impl From<opencv::Error> for PatternError {
    fn from(e: opencv::Error) -> PatternError {
        PatternError::Vision(VisionError::OpenCv(e))
    }
}

const MIN_SHARE_PERCENT: f64 = 2.0;
/// New foreground over this share of the picture in one frame is the page changing, not a hand.
const PAGE_CHANGE_SHARE: f64 = 0.2;
const MAX_SIDE_RATIO: f64 = 3.0;

/// The map found from the pattern, and how well the pattern's corners fit it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PatternFit {
    pub map: GridMap,
    /// Root mean square distance of the found corners from the fitted map, in pixels.
    pub rms_px: f64,
    pub corners: usize,
}

/// Finds the projected pattern (see [`CalibrationPattern`]) in an 8-bit BGR frame and maps the
/// pinned rectangle, cut into `cols` by `rows` cells.
pub fn find_pattern(frame: &Mat, pattern: &CalibrationPattern, cols: usize, rows: usize) -> Result<PatternFit, PatternError> {
    let grey = to_grey(frame)?;
    let (nx, ny) = pattern.inner_corners();
    // Small squares in a dim room are found more often at twice the size.
    let mut image_points: Option<Vec<(f64, f64)>> = None;
    // A dim projector on a dark table gives little contrast: local equalisation brings it back.
    let mut equalised = Mat::default();
    imgproc::create_clahe(3.0, Size::new(8, 8))?.apply(&grey, &mut equalised)?;
    for (source, scale) in [(&grey, 1.0), (&equalised, 1.0), (&equalised, 2.0)] {
        let mut work = Mat::default();
        if scale == 1.0 {
            work = source.clone();
        } else {
            imgproc::resize(source, &mut work, Size::new(0, 0), scale, scale, imgproc::INTER_CUBIC)?;
        }
        let mut found = Mat::default();
        let flags = opencv::calib3d::CALIB_CB_NORMALIZE_IMAGE | opencv::calib3d::CALIB_CB_EXHAUSTIVE | opencv::calib3d::CALIB_CB_ACCURACY;
        let ok = opencv::calib3d::find_chessboard_corners_sb(&work, Size::new(nx as i32, ny as i32), &mut found, flags)?;
        if ok && (found.rows() * found.cols()) as usize == nx * ny {
            // Back to frame pixels (pixel centres at integers in both).
            let back = |v: f32| (v as f64 + 0.5) / scale - 0.5;
            image_points = Some(found.data_typed::<Point2f>()?.iter().map(|p| (back(p.x), back(p.y))).collect());
            break;
        }
    }
    let Some(image_points) = image_points else { return Err(PatternError::NotSeen) };
    let fractions = pattern.corner_fractions();
    // The order OpenCV reports may start at any corner of the checker: try each symmetry of
    // the corner grid, keep those that do not mirror, and let the marker tell the top.
    // (marker darkness, rectangle to camera, the corners' places in the rectangle)
    type Candidate = (f64, Homography, Vec<(f64, f64)>);
    let mut best: Option<Candidate> = None;
    for symmetry in 0..8 {
        let Some(order) = reorder(nx, ny, symmetry) else { continue };
        let src: Vec<(f64, f64)> = order.iter().map(|&k| (fractions[k][0], fractions[k][1])).collect();
        let (rect_to_camera, _) = fit_h(&src, &image_points, 0.0)?;
        if mirrors(&rect_to_camera) {
            continue;
        }
        let marker = pattern.marker_centre();
        let Some(at) = apply(&rect_to_camera, marker) else { continue };
        let darkness = 255.0 - mean_around(&grey, at, 2)?;
        if best.as_ref().is_none_or(|(d, _, _)| darkness > *d) {
            best = Some((darkness, rect_to_camera, src));
        }
    }
    let Some((darkness, rect_to_camera, src)) = best else { return Err(PatternError::NoMarker) };
    // The marker must be darker than the white ring beside it.
    let ring = mean_around(&grey, apply(&rect_to_camera, [0.5 + 1.0 / pattern.across as f64, 0.5 / pattern.down as f64]).unwrap_or([0.0, 0.0]), 2)?;
    if 255.0 - darkness > ring - 30.0 {
        return Err(PatternError::NoMarker);
    }
    let corners: Vec<[f64; 2]> = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]].iter().filter_map(|&p| apply(&rect_to_camera, p)).collect();
    if corners.len() != 4 {
        return Err(PatternError::NotSeen);
    }
    let (w, h) = (frame.cols() as f64, frame.rows() as f64);
    let share = 100.0 * polygon_area(&corners) / (w * h);
    if share < MIN_SHARE_PERCENT {
        return Err(PatternError::TooSmall { share, min: MIN_SHARE_PERCENT });
    }
    let side = |a: [f64; 2], b: [f64; 2]| ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt();
    let ratio = (side(corners[0], corners[1]) / side(corners[3], corners[2]))
        .max(side(corners[3], corners[2]) / side(corners[0], corners[1]))
        .max(side(corners[0], corners[3]) / side(corners[1], corners[2]))
        .max(side(corners[1], corners[2]) / side(corners[0], corners[3]));
    if ratio > MAX_SIDE_RATIO {
        return Err(PatternError::TooOblique { ratio, max: MAX_SIDE_RATIO });
    }
    let rms_px = {
        let sum: f64 = src
            .iter()
            .zip(&image_points)
            .map(|(&(fx, fy), &(x, y))| apply(&rect_to_camera, [fx, fy]).map_or(1e6, |[px, py]| (px - x).powi(2) + (py - y).powi(2)))
            .sum();
        (sum / src.len() as f64).sqrt()
    };
    let camera_to_rect = invert(&rect_to_camera).ok_or(PatternError::NotSeen)?;
    let map = GridMap { cols, rows, camera_to_rect, image_size: [frame.cols() as u32, frame.rows() as u32] };
    Ok(PatternFit { map, rms_px, corners: nx * ny })
}

/// The corner indices (into `corner_fractions`) in the order OpenCV reported them, under one
/// of the 8 symmetries of the corner grid (transposes only when the grid is square).
fn reorder(nx: usize, ny: usize, symmetry: usize) -> Option<Vec<usize>> {
    let transpose = symmetry >= 4;
    let (flip_x, flip_y) = (symmetry & 1 == 1, symmetry & 2 == 2);
    if transpose && nx != ny {
        return None;
    }
    let mut out = Vec::with_capacity(nx * ny);
    for k in 0..nx * ny {
        let (mut i, mut j) = (k % nx, k / nx);
        if transpose {
            std::mem::swap(&mut i, &mut j);
        }
        if flip_x {
            i = nx - 1 - i;
        }
        if flip_y {
            j = ny - 1 - j;
        }
        out.push(j * nx + i);
    }
    Some(out)
}

/// Whether the map from the rectangle to the image turns it over (seen from below the table).
fn mirrors(h: &Homography) -> bool {
    let (Some(o), Some(x), Some(y)) = (apply(h, [0.5, 0.5]), apply(h, [0.6, 0.5]), apply(h, [0.5, 0.6])) else { return true };
    let cross = (x[0] - o[0]) * (y[1] - o[1]) - (x[1] - o[1]) * (y[0] - o[0]);
    cross < 0.0
}

fn polygon_area(points: &[[f64; 2]]) -> f64 {
    let n = points.len();
    (0..n).map(|i| points[i][0] * points[(i + 1) % n][1] - points[(i + 1) % n][0] * points[i][1]).sum::<f64>().abs() / 2.0
}

fn to_grey(frame: &Mat) -> Result<Mat, VisionError> {
    if frame.empty() || frame.typ() != core::CV_8UC3 {
        return Err(VisionError::BadImage(format!("type {} of {}x{}", frame.typ(), frame.cols(), frame.rows())));
    }
    let mut grey = Mat::default();
    imgproc::cvt_color_def(frame, &mut grey, imgproc::COLOR_BGR2GRAY)?;
    Ok(grey)
}

/// Mean grey in a square of half-size `r` around a point (255 off the image: unseen is not dark).
fn mean_around(grey: &Mat, [x, y]: [f64; 2], r: i32) -> Result<f64, VisionError> {
    let (cx, cy) = (x.round() as i32, y.round() as i32);
    let (mut sum, mut n) = (0.0, 0);
    for yy in cy - r..=cy + r {
        for xx in cx - r..=cx + r {
            if xx >= 0 && yy >= 0 && xx < grey.cols() && yy < grey.rows() {
                sum += *grey.at_2d::<u8>(yy, xx)? as f64;
                n += 1;
            }
        }
    }
    Ok(if n == 0 { 255.0 } else { sum / n as f64 })
}

/// How the foreground (what is not the projected table) is told.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ForegroundSettings {
    /// Frames are worked on at this width (pixels), for speed and to smooth noise.
    pub work_width: u32,
    /// A pixel differs from the background by more than this (0-255, the largest channel): a
    /// region must hold some such pixels to be foreground.
    pub threshold: f64,
    /// Pixels that differ by more than this join a region holding stronger ones: a grey sleeve
    /// over a grey table is part of the arm whose hand stands out.
    pub weak_threshold: f64,
    /// How fast the background follows the table where nothing is in front of it (per frame).
    pub learn_rate: f64,
    /// How fast it takes in changes of the projected picture itself (regions not reaching the
    /// image border), per frame.
    pub absorb_rate: f64,
    /// How fast it takes in what reaches in from the border (an arm resting for long, a
    /// projected picture larger than the view), per frame: slow enough that a dwelling hand
    /// stays foreground for seconds.
    pub reaching_rate: f64,
}

impl Default for ForegroundSettings {
    fn default() -> ForegroundSettings {
        // A strong threshold of 40 missed arms over a dim projection in a dark room, whose
        // largest channel differed by 40-60 only (rendered tap scenes 53, 55, 58); 30 finds them
        // and gave no false tap in 15 minutes of tuning distractors (30-36, 54-60).
        ForegroundSettings { work_width: 320, threshold: 30.0, weak_threshold: 16.0, learn_rate: 0.05, absorb_rate: 0.2, reaching_rate: 0.01 }
    }
}

/// A running model of the table as projected, with nothing in front of it.
pub struct Foreground {
    settings: ForegroundSettings,
    background: Option<Mat>,
    /// The background without what it learnt from regions reaching in: what the table looked
    /// like before an arm came, to go back to where it has left.
    clean: Option<Mat>,
    /// The last frame's foreground.
    previous: Option<GrayImage>,
    size: Size,
}

impl Foreground {
    pub fn new(settings: ForegroundSettings) -> Foreground {
        Foreground { settings, background: None, clean: None, previous: None, size: Size::new(0, 0) }
    }

    /// Forgets the background (the projected picture changed as a whole: a new game, the
    /// pattern shown).
    pub fn reset(&mut self) {
        self.background = None;
        self.clean = None;
    }

    /// The frame at working size, as 32-bit float BGR.
    fn work(&mut self, frame: &Mat) -> Result<Mat, VisionError> {
        if frame.empty() || frame.typ() != core::CV_8UC3 {
            return Err(VisionError::BadImage(format!("type {} of {}x{}", frame.typ(), frame.cols(), frame.rows())));
        }
        let w = self.settings.work_width.min(frame.cols() as u32).max(16) as i32;
        let h = ((frame.rows() as f64) * w as f64 / frame.cols() as f64).round().max(1.0) as i32;
        self.size = Size::new(w, h);
        let mut small = Mat::default();
        imgproc::resize(frame, &mut small, self.size, 0.0, 0.0, imgproc::INTER_AREA)?;
        let mut float = Mat::default();
        small.convert_to(&mut float, core::CV_32FC3, 1.0, 0.0)?;
        Ok(float)
    }

    /// The scale from working pixels to frame pixels.
    pub fn scale_to_frame(&self, frame_width: i32) -> f64 {
        if self.size.width == 0 {
            1.0
        } else {
            frame_width as f64 / self.size.width as f64
        }
    }

    /// The foreground against the background: regions of weak change holding strong change.
    fn mask(&self, float: &Mat) -> Result<GrayImage, VisionError> {
        let largest = largest_difference(float, self.background.as_ref().expect("a background"))?;
        let strong = threshold_u8(&largest, self.settings.threshold)?;
        let weak = threshold_u8(&largest, self.settings.weak_threshold.min(self.settings.threshold))?;
        // Small holes (a knuckle's highlight) filled. No opening first: at the working width a
        // finger seen from afar is two or three pixels wide, and an opening took it away,
        // leaving the fingertip at the knuckles a cell or two short (rendered tap scene 50);
        // specks are left out below, as regions holding too few strong pixels.
        let kernel5 = imgproc::get_structuring_element(imgproc::MORPH_ELLIPSE, Size::new(5, 5), core::Point::new(-1, -1))?;
        let mut weak_closed = Mat::default();
        imgproc::morphology_ex(&weak, &mut weak_closed, imgproc::MORPH_CLOSE, &kernel5, core::Point::new(-1, -1), 1, core::BORDER_CONSTANT, imgproc::morphology_default_border_value()?)?;
        // Weak regions stay only where they hold strong pixels (hysteresis).
        let (w, h) = (weak_closed.cols() as u32, weak_closed.rows() as u32);
        let weak_image = GrayImage::from_raw(w, h, weak_closed.data_bytes()?.to_vec()).ok_or_else(|| VisionError::BadImage("mask".into()))?;
        let strong_bytes = strong.data_bytes()?;
        let labels = imageproc::region_labelling::connected_components(&weak_image, imageproc::region_labelling::Connectivity::Eight, image::Luma([0u8]));
        let count = labels.pixels().map(|p| p[0]).max().unwrap_or(0) as usize;
        let mut strong_count = vec![0usize; count + 1];
        for (i, p) in labels.pixels().enumerate() {
            if p[0] != 0 && strong_bytes[i] != 0 {
                strong_count[p[0] as usize] += 1;
            }
        }
        let min_strong = ((w * h) as f64 * 0.0005).max(3.0) as usize;
        let mut gray = GrayImage::new(w, h);
        for (x, y, p) in labels.enumerate_pixels() {
            if p[0] != 0 && strong_count[p[0] as usize] >= min_strong {
                gray.put_pixel(x, y, image::Luma([255]));
            }
        }
        Ok(gray)
    }

    /// The foreground of a frame (at working size; 255 = foreground), then the background
    /// learns from the frame: fast where the change does not reach the image border (the
    /// projected picture changed), slowly where nothing is in front, not at all under a hand.
    ///
    /// `picture`: the projected rectangle's corners in frame pixels, when known (a region
    /// partly outside it is an arm reaching in, even when the rest of the arm is not seen);
    /// `view`: how large things are where the frame sees them, when known (fingertips are
    /// judged at the size a finger has there).
    pub fn update(&mut self, frame: &Mat, picture: Option<[[f64; 2]; 4]>, view: Option<&TableView>) -> Result<(GrayImage, Vec<Reach>), VisionError> {
        let float = self.work(frame)?;
        if self.background.as_ref().is_none_or(|b| b.size().ok() != Some(float.size().unwrap_or_default())) {
            self.clean = Some(float.clone());
            self.background = Some(float);
            let (w, h) = (self.size.width as u32, self.size.height as u32);
            return Ok((GrayImage::new(w, h), Vec::new()));
        }
        let scale = self.size.width as f64 / frame.cols() as f64;
        let quad = picture.map(|q| q.map(|[x, y]| [x * scale, y * scale]));
        self.restore_uncovered(&float)?;
        let mut gray = self.mask(&float)?;
        // The page changed as a whole (a new state, the pattern gone): what is new inside the
        // picture is taken into the background at once, except where a hand already was.
        if let Some(q) = quad {
            let previous = self.previous.take();
            let fresh = gray
                .enumerate_pixels()
                .filter(|(x, y, p)| p[0] != 0 && inside_quad(&q, [*x as f64, *y as f64]) && previous.as_ref().is_none_or(|m| m.get_pixel(*x, *y)[0] == 0))
                .count();
            if fresh as f64 > PAGE_CHANGE_SHARE * polygon_area(&q) {
                let (w, h) = gray.dimensions();
                let mut take = GrayImage::from_pixel(w, h, image::Luma([255]));
                if let Some(m) = &previous {
                    for (x, y, p) in m.enumerate_pixels() {
                        if p[0] != 0 {
                            take.put_pixel(x, y, image::Luma([0]));
                        }
                    }
                }
                let take = Mat::new_rows_cols_with_data(h as i32, w as i32, take.as_raw())?.try_clone()?;
                for model in [self.background.as_mut(), self.clean.as_mut()].into_iter().flatten() {
                    float.copy_to_masked(model, &take)?;
                }
                gray = self.mask(&float)?;
            }
        }
        self.previous = Some(gray.clone());
        let closed = Mat::new_rows_cols_with_data(gray.height() as i32, gray.width() as i32, gray.as_raw())?.try_clone()?;
        let (w, h) = gray.dimensions();
        let background = self.background.as_mut().expect("set above");
        let outside_picture = |x: u32, y: u32| quad.is_some_and(|q| !inside_quad(&q, [x as f64, y as f64]));
        let view = view.map_or(TableView::identity(), |v| v.scaled(scale));
        let found = reaches(&gray, &FingertipSettings::default(), &outside_picture, &view);

        // Learning: regions reaching in (arms, people) are learnt very slowly; other foreground
        // (the picture changing in places) is taken in fast; the rest follows slowly.
        let mut reaching = GrayImage::new(w, h);
        if !found.is_empty() {
            let labels = imageproc::region_labelling::connected_components(&gray, imageproc::region_labelling::Connectivity::Eight, image::Luma([0u8]));
            let mut border_labels = std::collections::HashSet::new();
            for (x, y, p) in labels.enumerate_pixels() {
                if p[0] != 0 && (x == 0 || y == 0 || x == w - 1 || y == h - 1 || outside_picture(x, y)) {
                    border_labels.insert(p[0]);
                }
            }
            for (x, y, p) in labels.enumerate_pixels() {
                if border_labels.contains(&p[0]) {
                    reaching.put_pixel(x, y, image::Luma([255]));
                }
            }
        }
        let reaching_mat = Mat::new_rows_cols_with_data(h as i32, w as i32, reaching.as_raw())?.try_clone()?;
        let mut absorb = Mat::default();
        let mut not_reaching = Mat::default();
        core::bitwise_not(&reaching_mat, &mut not_reaching, &core::no_array())?;
        core::bitwise_and(&closed, &not_reaching, &mut absorb, &core::no_array())?;
        let mut still = Mat::default();
        let mut not_closed = Mat::default();
        core::bitwise_not(&closed, &mut not_closed, &core::no_array())?;
        core::bitwise_and(&not_closed, &not_reaching, &mut still, &core::no_array())?;
        imgproc::accumulate_weighted(&float, background, self.settings.absorb_rate, &absorb)?;
        imgproc::accumulate_weighted(&float, background, self.settings.learn_rate, &still)?;
        imgproc::accumulate_weighted(&float, background, self.settings.reaching_rate, &reaching_mat)?;
        if let Some(clean) = self.clean.as_mut() {
            imgproc::accumulate_weighted(&float, clean, self.settings.absorb_rate, &absorb)?;
            imgproc::accumulate_weighted(&float, clean, self.settings.learn_rate, &still)?;
        }
        Ok((gray, found))
    }

    /// Where the frame is nearer the clean background than the background (an arm has left
    /// the pixel), the background goes back to the clean one: else the faint trace the arm left
    /// there joins a change of the page beside it into a region reaching in (a ghost arm).
    fn restore_uncovered(&mut self, float: &Mat) -> Result<(), VisionError> {
        let (Some(background), Some(clean)) = (self.background.as_mut(), self.clean.as_ref()) else { return Ok(()) };
        let mut nearer_clean = Mat::default();
        core::compare(&largest_difference(float, clean)?, &largest_difference(float, background)?, &mut nearer_clean, core::CMP_LT)?;
        clean.copy_to_masked(background, &nearer_clean)?;
        Ok(())
    }
}

/// Per pixel, the largest difference of the channels of two images of the same size and type.
fn largest_difference(a: &Mat, b: &Mat) -> Result<Mat, VisionError> {
    let mut diff = Mat::default();
    core::absdiff(a, b, &mut diff)?;
    let mut channels = Vector::<Mat>::new();
    core::split(&diff, &mut channels)?;
    let mut largest = channels.get(0)?;
    for c in 1..channels.len() {
        let mut m = Mat::default();
        core::max(&largest, &channels.get(c)?, &mut m)?;
        largest = m;
    }
    Ok(largest)
}

/// Whether a point is inside a convex quadrilateral (either winding).
fn inside_quad(q: &[[f64; 2]; 4], p: [f64; 2]) -> bool {
    let mut sign = 0.0f64;
    for i in 0..4 {
        let (a, b) = (q[i], q[(i + 1) % 4]);
        let cross = (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]);
        if cross != 0.0 {
            if sign != 0.0 && cross.signum() != sign {
                return false;
            }
            sign = cross.signum();
        }
    }
    true
}

/// 255 where `value` (one channel, 32-bit float) is above `threshold`, else 0.
fn threshold_u8(value: &Mat, threshold: f64) -> Result<Mat, VisionError> {
    let mut mask = Mat::default();
    imgproc::threshold(value, &mut mask, threshold, 255.0, imgproc::THRESH_BINARY)?;
    let mut mask8 = Mat::default();
    mask.convert_to(&mut mask8, core::CV_8U, 1.0, 0.0)?;
    Ok(mask8)
}

/// What one frame gave: where the fingertip is and the tap it ended, if any.
#[derive(Clone, Debug, Serialize)]
pub struct TouchFrame {
    pub time: f64,
    pub pointer: Pointer,
    pub tap: Option<Tap>,
    /// The fingertip in frame pixels, when a pointing hand is seen.
    pub fingertip_px: Option<[f64; 2]>,
}

/// A camera over a projected game: frames in, fingertip and taps out.
pub struct TableWatcher {
    map: GridMap,
    outline: Option<[[f64; 2]; 4]>,
    /// How large things are where the camera sees them (fingertips are judged at that size).
    view: Option<TableView>,
    foreground: Foreground,
    dwell: DwellTracker,
    last_tip: Option<[f64; 2]>,
    /// The tip of the hand followed when no pointing fingertip is on the grid, in frame pixels.
    last_hand: Option<[f64; 2]>,
    /// The hand followed, while it lies still: its flatness judged over those frames.
    settled: Option<Settled>,
    /// The last frame's foreground and its regions (for pictures of what the camera saw).
    last_seen: (GrayImage, Vec<Reach>),
}

impl TableWatcher {
    pub fn new(map: GridMap, foreground: ForegroundSettings, dwell: DwellSettings) -> TableWatcher {
        let dwell = DwellTracker::new(dwell, map.cols, map.rows);
        TableWatcher {
            outline: map.outline(),
            view: TableView::of_grid(&map),
            map,
            foreground: Foreground::new(foreground),
            dwell,
            last_tip: None,
            last_hand: None,
            settled: None,
            last_seen: (GrayImage::new(1, 1), Vec::new()),
        }
    }

    pub fn map(&self) -> &GridMap {
        &self.map
    }

    /// The last frame's foreground mask (at the working size) and the regions found in it.
    pub fn last_seen(&self) -> (&GrayImage, &[Reach]) {
        (&self.last_seen.0, &self.last_seen.1)
    }

    /// The game on the screen changed its grid (same rectangle).
    pub fn set_grid(&mut self, cols: usize, rows: usize) {
        if (cols, rows) != (self.map.cols, self.map.rows) {
            self.map = self.map.with_grid(cols, rows);
            self.view = TableView::of_grid(&self.map);
            let settings = *self.dwell.settings();
            self.dwell = DwellTracker::new(settings, cols, rows);
        }
    }

    /// One camera frame at `time` seconds.
    pub fn frame(&mut self, time: f64, frame: &Mat) -> Result<TouchFrame, VisionError> {
        let (mask, found) = self.foreground.update(frame, self.outline, self.view.as_ref())?;
        let scale = self.foreground.scale_to_frame(frame.cols());
        // Every region's fingertip in frame pixels and in cells, once.
        let (cols, rows) = (self.map.cols as f64, self.map.rows as f64);
        let settled = self.settled;
        let hands: Vec<Hand> = found
            .iter()
            .filter_map(|r| {
                let px = [r.fingertip[0] * scale, r.fingertip[1] * scale];
                let cells = self.map.to_cells(px)?;
                // Flat in this frame, or on average over the frames it has lain still.
                let flat = r.flat || settled.is_some_and(|s| s.flat_with(cells, r.near_fill));
                let resting = r.pointing
                    && flat
                    && self.map.to_cells([r.entry[0] * scale, r.entry[1] * scale]).is_some_and(|e| rests_across_an_edge(cells, e, cols, rows));
                Some(Hand { px, cells, reach: r.reach, near_fill: r.near_fill, pointing: r.pointing, resting })
            })
            .collect();
        // Of the pointing hands whose fingertip is on the grid (a flat hand lying across the
        // edge rests, it does not point), the one nearest the last fingertip (a second hand
        // passing does not steal the dwell), else the farthest reach.
        let on_grid = hands.iter().filter(|h| {
            let c = h.cells;
            h.pointing && !h.resting && c[0] >= 0.0 && c[1] >= 0.0 && c[0] < cols && c[1] < rows
        });
        let chosen = follow(on_grid, self.last_tip);
        self.last_tip = chosen.map(|c| c.px);
        // Without one, the hand followed (pointing or not, on the grid or off it) is still told
        // to the dwell tracker: a hand that lay still before its fingertip counted on a cell
        // was not brought there.
        let hand = chosen.or_else(|| follow(hands.iter(), self.last_hand));
        self.last_hand = hand.map(|h| h.px);
        self.settled = hand.map(|h| match self.settled {
            Some(s) if dist(s.at, h.cells) <= STILL_RADIUS => Settled { near_sum: s.near_sum + h.near_fill, frames: s.frames + 1, ..s },
            _ => Settled { at: h.cells, near_sum: h.near_fill, frames: 1 },
        });
        let tap = self.dwell.update(time, chosen.map(|c| c.cells), hand.map(|h| h.cells));
        // The hand followed lies flat across the edge: resting, not a fingertip lost.
        if hand.is_some_and(|h| h.resting) {
            self.dwell.hand_rests();
        }
        self.last_seen = (mask, found);
        Ok(TouchFrame { time, pointer: self.dwell.pointer(time), tap, fingertip_px: self.last_tip })
    }
}

/// A fingertip this close to the grid's outer edge (in cells) is in the outer half of a
/// border cell, where the fingers of a hand resting at the table's edge lie.
const EDGE_ZONE: f64 = 0.5;

/// Whether a hand whose fingertip and arm's entry are at `tip` and `entry` (in cells) lies across
/// an edge of the grid as a resting hand does: the fingertip within `EDGE_ZONE` of that edge (or
/// beyond it) and the arm going out over it, within 45 degrees of square to it. A flat hand so
/// (fingers side by side, `Reach::flat`) rests at the edge and does not point; a flat-looking
/// tip elsewhere is a finger with its shadow, or one reaching along the edge to a corner cell
/// (rendered tap scene 930010), and a finger may point anywhere.
pub fn rests_across_an_edge(tip: [f64; 2], entry: [f64; 2], cols: f64, rows: f64) -> bool {
    let (dx, dy) = (entry[0] - tip[0], entry[1] - tip[1]);
    // Per edge: the tip's distance inside it, and the arm's run outward across it and along it.
    let edges = [(tip[0], -dx, dy), (cols - tip[0], dx, dy), (tip[1], -dy, dx), (rows - tip[1], dy, dx)];
    edges.iter().any(|&(inside, outward, along)| inside < EDGE_ZONE && outward > along.abs())
}

/// A hand that has lain still this many frames (with the present one) is judged flat or not by
/// its mean `Reach::near_fill` over them, against `SETTLED_FLAT_NEAR_FILL`.
const SETTLED_FRAMES: u32 = 3;

/// A hand lying still whose tip fills this much close up on average is flat. A resting arm's
/// fingers whose fill sits on `FingertipSettings::flat_near_fill` (0.29-0.31 frame by frame,
/// 0.295 on average; rendered distractor 1450021) are flat and pointing by turns frame by
/// frame, but flat on average; fingers of taps lying across the edge as a resting hand does
/// filled at most 0.273 on average over their dwells (24 taps of the retired sets
/// 940001-960010, 0.12-0.27). A thin margin either side: hand-made cues end here.
const SETTLED_FLAT_NEAR_FILL: f64 = 0.285;

/// The hand followed while its tip stays within `STILL_RADIUS` of where it stopped (in cells),
/// with its near fills summed over those frames.
#[derive(Clone, Copy, Debug)]
struct Settled {
    at: [f64; 2],
    near_sum: f64,
    frames: u32,
}

impl Settled {
    /// Whether a hand at `cells` whose near fill this frame is `near_fill` is this hand still
    /// lying where it stopped, flat on average over those frames.
    fn flat_with(&self, cells: [f64; 2], near_fill: f64) -> bool {
        dist(self.at, cells) <= STILL_RADIUS
            && self.frames + 1 >= SETTLED_FRAMES
            && (self.near_sum + near_fill) / (self.frames + 1) as f64 > SETTLED_FLAT_NEAR_FILL
    }
}

/// A region reaching in, as the watcher follows it.
#[derive(Clone, Copy)]
struct Hand {
    /// The fingertip in frame pixels and in cells.
    px: [f64; 2],
    cells: [f64; 2],
    reach: f64,
    near_fill: f64,
    pointing: bool,
    /// A pointing hand that lies flat across the grid's edge (`rests_across_an_edge`).
    resting: bool,
}

/// Of hands, the one nearest the one followed last frame (a second hand passing does not
/// steal it), else the one reaching farthest.
fn follow<'a>(hands: impl Iterator<Item = &'a Hand>, last: Option<[f64; 2]>) -> Option<&'a Hand> {
    match last {
        Some(last) => hands.min_by(|a, b| dist(a.px, last).total_cmp(&dist(b.px, last))),
        None => hands.max_by(|a, b| a.reach.total_cmp(&b.reach)),
    }
}

fn dist(a: [f64; 2], b: [f64; 2]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt()
}

/// Whether the projected rectangle is still where the map puts it: along each side, the picture
/// just inside is brighter than the dark page just outside. `None` when too little of the
/// outline is in view to tell. A camera or projector that moved shifts the bright rectangle
/// away from the mapped sides.
pub fn outline_holds(frame: &Mat, map: &GridMap) -> Result<Option<bool>, VisionError> {
    const BAND: f64 = 0.03;
    const MARGIN: f64 = 12.0;
    let grey = to_grey(frame)?;
    let Some(rect_to_camera) = invert(&map.camera_to_rect) else { return Ok(None) };
    let sides: [([f64; 2], [f64; 2], [f64; 2]); 4] = [
        ([0.0, 0.0], [1.0, 0.0], [0.0, 1.0]),  // top: inward is down
        ([1.0, 0.0], [1.0, 1.0], [-1.0, 0.0]), // right
        ([0.0, 1.0], [1.0, 1.0], [0.0, -1.0]), // bottom
        ([0.0, 0.0], [0.0, 1.0], [1.0, 0.0]),  // left
    ];
    let (w, h) = (grey.cols() as f64, grey.rows() as f64);
    let seen = |p: [f64; 2]| p[0] >= 2.0 && p[1] >= 2.0 && p[0] < w - 2.0 && p[1] < h - 2.0;
    let (mut measured, mut holding) = (0, 0);
    for (a, b, inward) in sides {
        let (mut inside, mut outside, mut n) = (0.0, 0.0, 0);
        for k in 1..20 {
            let t = 0.05 + 0.9 * k as f64 / 20.0;
            let on = [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t];
            let i = [on[0] + inward[0] * BAND, on[1] + inward[1] * BAND];
            let o = [on[0] - inward[0] * BAND, on[1] - inward[1] * BAND];
            let (Some(pi), Some(po)) = (apply(&rect_to_camera, i), apply(&rect_to_camera, o)) else { continue };
            if seen(pi) && seen(po) {
                inside += mean_around(&grey, pi, 1)?;
                outside += mean_around(&grey, po, 1)?;
                n += 1;
            }
        }
        if n >= 8 {
            measured += 1;
            if (inside - outside) / n as f64 > MARGIN {
                holding += 1;
            }
        }
    }
    Ok((measured >= 2).then_some(holding * 2 >= measured))
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::core::{Rect, Scalar};

    /// The projected picture of the test frames, (40, 20) to (280, 220) of a 320x240 frame.
    const PICTURE: [[f64; 2]; 4] = [[40.0, 20.0], [280.0, 20.0], [280.0, 220.0], [40.0, 220.0]];
    const PICTURE_RECT: Rect = Rect { x: 40, y: 20, width: 240, height: 200 };

    /// A dark table with a light projected picture, a red arm reaching in from the bottom to
    /// (160, 100) when `arm`, and a square of the picture just above the fingertip turned dark
    /// when `changed` (a piece leaving the square above the tapped one).
    fn table_frame(arm: bool, changed: bool) -> Mat {
        let mut frame = Mat::new_rows_cols_with_default(240, 320, core::CV_8UC3, Scalar::all(100.0)).unwrap();
        let fill =
            |frame: &mut Mat, rect: Rect, colour: Scalar| imgproc::rectangle(frame, rect, colour, imgproc::FILLED, imgproc::LINE_8, 0).unwrap();
        fill(&mut frame, PICTURE_RECT, Scalar::all(210.0));
        if changed {
            fill(&mut frame, Rect::new(152, 84, 16, 14), Scalar::new(200.0, 60.0, 60.0, 0.0));
        }
        if arm {
            fill(&mut frame, Rect::new(148, 130, 24, 110), Scalar::new(40.0, 40.0, 220.0, 0.0));
            fill(&mut frame, Rect::new(156, 100, 8, 30), Scalar::new(90.0, 110.0, 230.0, 0.0));
        }
        frame
    }

    /// A table of grey `table` with a picture of grey `picture`, and an arm from the bottom
    /// border of colour `arm` whose finger, `finger_px` wide, ends at (160, 100).
    fn arm_frame(table: f64, picture: f64, arm: Option<Scalar>, finger_px: i32) -> Mat {
        let mut frame = Mat::new_rows_cols_with_default(240, 320, core::CV_8UC3, Scalar::all(table)).unwrap();
        let fill =
            |frame: &mut Mat, rect: Rect, colour: Scalar| imgproc::rectangle(frame, rect, colour, imgproc::FILLED, imgproc::LINE_8, 0).unwrap();
        fill(&mut frame, PICTURE_RECT, Scalar::all(picture));
        if let Some(arm) = arm {
            fill(&mut frame, Rect::new(148, 140, 24, 100), arm);
            fill(&mut frame, Rect::new(160 - finger_px / 2, 100, finger_px, 40), arm);
        }
        frame
    }

    /// The fingertip found once an arm has reached in over a learnt background.
    fn fingertip_of(table: f64, picture: f64, arm: Scalar, finger_px: i32) -> Option<[f64; 2]> {
        let quad = Some(PICTURE);
        let mut foreground = Foreground::new(ForegroundSettings::default());
        for _ in 0..5 {
            foreground.update(&arm_frame(table, picture, None, finger_px), quad, None).unwrap();
        }
        let (_, found) = foreground.update(&arm_frame(table, picture, Some(arm), finger_px), quad, None).unwrap();
        found.iter().find(|r| r.pointing).map(|r| r.fingertip)
    }

    #[test]
    fn a_finger_two_pixels_wide_is_seen_to_its_tip() {
        // Seen from afar at the working width, a finger is two or three pixels wide.
        let tip = fingertip_of(60.0, 200.0, Scalar::new(40.0, 60.0, 200.0, 0.0), 2).expect("a pointing finger");
        assert!((tip[1] - 100.0).abs() < 5.0 && (tip[0] - 160.0).abs() < 3.0, "the fingertip, not the knuckles at y = 140: {tip:?}");
    }

    #[test]
    fn an_arm_over_a_dim_projection_is_seen() {
        // A dark room: the arm differs from the dim picture and table by 35 in its largest
        // channel, all along.
        let tip = fingertip_of(70.0, 70.0, Scalar::new(70.0, 70.0, 105.0, 0.0), 8).expect("a pointing finger");
        assert!((tip[1] - 100.0).abs() < 5.0, "{tip:?}");
    }

    #[test]
    fn a_page_change_where_a_dwelling_arm_was_is_not_taken_for_an_arm() {
        let picture = Some(PICTURE);
        let mut foreground = Foreground::new(ForegroundSettings::default());
        for _ in 0..5 {
            foreground.update(&table_frame(false, false), picture, None).unwrap();
        }
        // The arm dwells for 1.7 s at 12 frames a second: an arm reaching in all along.
        for k in 0..20 {
            let (_, found) = foreground.update(&table_frame(true, false), picture, None).unwrap();
            assert_eq!(found.len(), 1, "frame {k} of the dwell: {found:?}");
        }
        // It leaves; two frames on, the square above where its fingertip was changes.
        for _ in 0..2 {
            let (mask, found) = foreground.update(&table_frame(false, false), picture, None).unwrap();
            assert!(found.is_empty(), "the arm has left: {found:?}");
            assert_eq!(mask.pixels().filter(|p| p[0] != 0).count(), 0);
        }
        for k in 0..6 {
            let (mask, found) = foreground.update(&table_frame(false, true), picture, None).unwrap();
            if k == 0 {
                assert!(mask.get_pixel(160, 90)[0] != 0, "the page's change is seen");
            }
            assert!(found.is_empty(), "frame {k} after the page changed: nothing reaches in, yet {found:?}");
        }
    }

    /// A watcher of an 8x8 grid over the picture (cells 30 by 25 pixels) and the taps it finds
    /// in a second of frames where a hand of grey 60 reaches in from the left border to (52,
    /// 127), 0.4 of a cell inside the left column: a finger 4 pixels wide (`None`), or a flat
    /// hand `Some(width)` pixels wide ending in its fingers' round line (12: as thin a tip as a
    /// finger's at the tip radius, fuller close up).
    fn taps_of_a_hand_at_the_left_edge(flat: Option<i32>) -> (Vec<Tap>, Vec<Pointer>, Vec<Reach>) {
        let map = GridMap { cols: 8, rows: 8, camera_to_rect: [[1.0 / 240.0, 0.0, -40.0 / 240.0], [0.0, 1.0 / 200.0, -20.0 / 200.0], [0.0, 0.0, 1.0]], image_size: [320, 240] };
        let mut watcher = TableWatcher::new(map, ForegroundSettings::default(), DwellSettings::default());
        let empty = arm_frame(100.0, 210.0, None, 0);
        let mut hand = empty.clone();
        let grey = Scalar::all(60.0);
        if let Some(width) = flat {
            let half = width / 2;
            imgproc::rectangle(&mut hand, Rect::new(0, 127 - half, 52 - half, width), grey, imgproc::FILLED, imgproc::LINE_8, 0).unwrap();
            imgproc::ellipse(&mut hand, core::Point::new(52 - half, 127), core::Size::new(half, half), 0.0, -90.0, 90.0, grey, imgproc::FILLED, imgproc::LINE_8, 0)
                .unwrap();
        } else {
            imgproc::rectangle(&mut hand, Rect::new(0, 115, 38, 24), grey, imgproc::FILLED, imgproc::LINE_8, 0).unwrap();
            imgproc::rectangle(&mut hand, Rect::new(34, 125, 19, 4), grey, imgproc::FILLED, imgproc::LINE_8, 0).unwrap();
        }
        let (mut taps, mut pointers, mut regions, mut t) = (Vec::new(), Vec::new(), Vec::new(), 0.0);
        for (k, frame) in std::iter::repeat_n(&empty, 6).chain(std::iter::repeat_n(&hand, 12)).chain(std::iter::repeat_n(&empty, 6)).enumerate() {
            let seen = watcher.frame(t, frame).unwrap();
            taps.extend(seen.tap);
            pointers.push(seen.pointer);
            if k == 10 {
                regions = watcher.last_seen().1.to_vec();
            }
            t += 1.0 / 12.0;
        }
        (taps, pointers, regions)
    }

    #[test]
    fn a_flat_hand_resting_at_the_grids_edge_is_no_tap_but_a_finger_pointing_there_is() {
        let (taps, _, _) = taps_of_a_hand_at_the_left_edge(None);
        assert_eq!(taps.len(), 1, "{taps:?}");
        assert_eq!(taps[0].cell, [0, 4]);
        let (taps, pointers, regions) = taps_of_a_hand_at_the_left_edge(Some(12));
        assert!(regions.iter().any(|r| r.pointing && r.flat), "thin enough a tip to point, flat close up: {regions:?}");
        assert!(taps.is_empty(), "{taps:?}");
        assert!(pointers.iter().all(|p| p.cell.is_none()), "{pointers:?}");
    }

    #[test]
    fn a_hand_resting_at_the_grids_edge_flat_on_average_but_not_frame_by_frame_is_no_tap() {
        // Narrower than the flat hand above: not flat in any one frame, flat over the frames it
        // lies still (a resting arm's fingers on the threshold, rendered distractor 1450021).
        let (taps, pointers, regions) = taps_of_a_hand_at_the_left_edge(Some(WIDTH_ON_THE_THRESHOLD));
        let settings = FingertipSettings::default();
        assert!(
            regions.iter().any(|r| r.pointing && !r.flat && r.near_fill > SETTLED_FLAT_NEAR_FILL && r.near_fill <= settings.flat_near_fill),
            "points, and is flat on average only: {regions:?}"
        );
        assert!(taps.is_empty(), "{taps:?}");
        // Followed only until it has lain still the frames it takes to judge: the ring never
        // fills halfway.
        assert!(pointers.iter().all(|p| p.progress < 0.5), "{pointers:?}");
    }

    /// Width of a flat hand whose tip fills, close up, between `SETTLED_FLAT_NEAR_FILL` and
    /// `flat_near_fill` (0.29 here; 8 pixels fill 0.28, 10 fill 0.33).
    const WIDTH_ON_THE_THRESHOLD: i32 = 9;

    #[test]
    fn a_hand_rests_across_an_edge_when_its_tip_is_in_the_outer_half_of_a_border_cell_and_its_arm_goes_out_over_that_edge() {
        // 8x8: across the bottom edge, square and turned 30 degrees; across the left edge.
        assert!(rests_across_an_edge([3.5, 7.7], [3.5, 12.0], 8.0, 8.0));
        assert!(rests_across_an_edge([3.5, 7.7], [5.8, 11.7], 8.0, 8.0));
        assert!(rests_across_an_edge([0.3, 4.0], [-5.0, 4.5], 8.0, 8.0));
        // Further in than half a cell; or along the bottom edge to the corner cell.
        assert!(!rests_across_an_edge([3.5, 7.4], [3.5, 12.0], 8.0, 8.0));
        assert!(!rests_across_an_edge([0.4, 7.6], [12.0, 8.6], 8.0, 8.0));
        // A hand reaching across the board from the top to the bottom row: its arm goes out
        // over the top edge.
        assert!(!rests_across_an_edge([4.0, 7.7], [4.0, -4.0], 8.0, 8.0));
    }
}
