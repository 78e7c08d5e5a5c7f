//! Per-square classification of a rectified board.
//!
//! Every square is described by a few lighting-normalised features measured
//! relative to the board itself (the median light square and the median dark
//! square of this very image), so that one colour model works under different
//! lamps and exposures. The colour model (palette.rs) turns features into class
//! likelihoods.
use super::palette::ColourModel;
use super::rectify::{RECT_SIZE, SQUARE_PX};
use super::{Result, VisionError};
use opencv::core::{self, Mat};
use opencv::imgproc;
use opencv::prelude::*;

/// What a square looks like by the colour model: the dark side's (Black's, `b`/`B`) or the light
/// side's (White's, `w`/`W`) man or king, empty, or none of these. The tracker's `SquareClass`
/// names the same classes by side; both use the order of [`CLASSES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum ColourClass {
    Empty,
    DarkMan,
    LightMan,
    DarkKing,
    LightKing,
    Unknown,
}

impl ColourClass {
    /// The product's grid letter.
    pub fn letter(self) -> char {
        match self {
            ColourClass::Empty => '.',
            ColourClass::DarkMan => 'b',
            ColourClass::LightMan => 'w',
            ColourClass::DarkKing => 'B',
            ColourClass::LightKing => 'W',
            ColourClass::Unknown => '?',
        }
    }
    pub fn from_letter(c: char) -> Option<Self> {
        Some(match c {
            '.' | '_' => ColourClass::Empty,
            'b' => ColourClass::DarkMan,
            'w' => ColourClass::LightMan,
            'B' => ColourClass::DarkKing,
            'W' => ColourClass::LightKing,
            '?' => ColourClass::Unknown,
            _ => return None,
        })
    }
}

/// Index into `SquareReading::probs`.
pub const CLASSES: [ColourClass; 5] =
    [ColourClass::Empty, ColourClass::DarkMan, ColourClass::LightMan, ColourClass::DarkKing, ColourClass::LightKing];

#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct SquareReading {
    /// P(empty, dark man, light man, dark king, light king); sums to 1 - p_unknown.
    pub probs: [f32; 5],
    /// Probability that the square shows none of the modelled things (hand,
    /// foreign object, piece of another set, bad rectification).
    pub p_unknown: f32,
    /// Argmax (Unknown if p_unknown wins or the best class is not confident).
    pub class: ColourClass,
    /// Probability of `class`.
    pub confidence: f32,
    /// Whether this is a dark (playing) square.
    pub dark_square: bool,
}

impl SquareReading {
    /// Read as `class` after all, with that class's own probability as the
    /// confidence (see `StabilityDetector::judge`).
    pub fn keep_as(&mut self, class: ColourClass) {
        self.class = class;
        self.confidence = CLASSES.iter().position(|&k| k == class).map_or(0.0, |i| self.probs[i]);
    }

    /// Probability of a piece of the dark side (`dark`) or the light side, man or king.
    pub fn p_side(&self, dark: bool) -> f32 {
        if dark {
            self.probs[1] + self.probs[3]
        } else {
            self.probs[2] + self.probs[4]
        }
    }
}

/// Result of classifying a rectified board.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BoardReading {
    pub squares: [[SquareReading; 8]; 8],
    /// Square (0,0) is dark, i.e. dark squares are those with (row+col) even.
    pub top_left_dark: bool,
    /// Light/dark square contrast in L* units (0..255 scale); low = poor view.
    pub contrast: f32,
}

impl BoardReading {
    /// 8 strings of 8 chars, the product's grid format.
    pub fn grid(&self) -> Vec<String> {
        grid_strings(&self.squares)
    }
}

pub fn grid_strings(sq: &[[SquareReading; 8]; 8]) -> Vec<String> {
    sq.iter().map(|row| row.iter().map(|s| s.class.letter()).collect()).collect()
}

/// Number of features per square.
pub const NF: usize = 9;
/// Names, in order, as used in the colour-model file.
pub const FEATURE_NAMES: [&str; NF] = ["level", "rel_level", "rel_a", "rel_b", "rim", "rings", "rings_med", "top_a", "top_b"];

/// Lighting-normalised description of one square.
///
/// * level: L* of the piece top (disc interior) between the board's median dark
///   square (0) and median light square (1).
/// * rel_level, rel_a, rel_b: piece top minus the square's own visible surface
///   (L* in board-contrast units, a*/b* in raw units): a dark man is a little
///   less red than the dark squares of this set.
/// * rim: radial minus tangential gradient on a circle of the disc's radius. A
///   disc's rim is a circle *around the found centre*, so its gradient points
///   radially; glare blotches and stray threads have no such preference. This
///   is what separates a dark man from an empty dark square.
/// * rings: the same inside the disc (the men's turned concentric grooves).
/// * rings_med: rings as the median over 12 angular sectors (robust to one
///   sector crossed by a thread or a glare edge).
/// * top_a, top_b: colour of the piece top (Lab a*, b*, 8-bit units) minus the
///   colour of the board's median light square: a white balance against the
///   board itself, so coloured pieces (red, yellow, blue, green) keep their
///   place under warm or cold light.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct SquareFeatures {
    pub f: [f32; NF],
    /// Disc centre found (offset from square centre, rectified px).
    pub centre: (f32, f32),
}

/// Per-board measurements shared by all squares.
pub struct BoardFeatures {
    pub squares: [[SquareFeatures; 8]; 8],
    pub top_left_dark: bool,
    /// Median light minus median dark square, L* (0..255 scale).
    pub contrast: f32,
}

impl BoardFeatures {
    /// Whether image-grid square (r, c) is a dark (playing) square.
    pub fn is_dark(&self, r: usize, c: usize) -> bool {
        ((r + c) % 2 == 0) == self.top_left_dark
    }
}

/// Planes of the rectified image: grey level `l` (full resolution), Lab a*, b*
/// (OpenCV 8-bit scaling, half resolution, index with `half_idx`) and the
/// gradient of `l` (per-pixel slope, 3x3 Sobel / 8).
struct Planes<'a> {
    l: &'a [u8],
    a: &'a [u8],
    b: &'a [u8],
    gx: &'a [f32],
    gy: &'a [f32],
}

/// Owner of the plane buffers (OpenCV Mats) that `Planes` borrows from.
struct PlaneMats {
    l: Mat,
    a: Mat,
    b: Mat,
    gx: Mat,
    gy: Mat,
    /// The rectified image at half resolution (BGR), for the colour planes.
    half: Mat,
}

impl PlaneMats {
    fn view(&self) -> Result<Planes<'_>> {
        Ok(Planes {
            l: self.l.data_bytes()?,
            a: self.a.data_bytes()?,
            b: self.b.data_bytes()?,
            gx: self.gx.data_typed::<f32>()?,
            gy: self.gy.data_typed::<f32>()?,
        })
    }
}

const N: usize = RECT_SIZE as usize;
const SQ: usize = SQUARE_PX as usize;
const NH: usize = N / 2;

#[inline]
fn half_idx(x: usize, y: usize) -> usize {
    (y / 2) * NH + x / 2
}

fn planes(rect: &Mat) -> Result<PlaneMats> {
    if rect.rows() != RECT_SIZE || rect.cols() != RECT_SIZE || rect.typ() != core::CV_8UC3 {
        return Err(VisionError::BadImage(format!(
            "classify needs a {RECT_SIZE}x{RECT_SIZE} BGR rectified image, got {}x{} type {}",
            rect.cols(),
            rect.rows(),
            rect.typ()
        )));
    }
    // Brightness at full resolution (grooves and rims need every pixel); the
    // colour planes at half resolution: they are only ever averaged over
    // hundreds of pixels, and a full-size Lab conversion costs ~0.7 ms.
    let mut grey = Mat::default();
    imgproc::cvt_color_def(rect, &mut grey, imgproc::COLOR_BGR2GRAY)?;
    // Grey -> Lab L* (exact for neutral colours): L* expands dark tones, which
    // is where a dark man's grooves and rim live; plain grey would shrink them
    // to half their L* contrast.
    let mut lm = Mat::default();
    core::lut(&grey, &Mat::from_slice(&l_star_lut())?, &mut lm)?;
    let mut half = Mat::default();
    imgproc::resize(rect, &mut half, core::Size::new(RECT_SIZE / 2, RECT_SIZE / 2), 0.0, 0.0, imgproc::INTER_AREA)?;
    let (mut gxm, mut gym) = (Mat::default(), Mat::default());
    // Sobel is SIMD in OpenCV; a hand loop over 512x512 costs ~1 ms more.
    imgproc::sobel(&lm, &mut gxm, core::CV_32F, 1, 0, 3, 0.125, 0.0, core::BORDER_REPLICATE)?;
    imgproc::sobel(&lm, &mut gym, core::CV_32F, 0, 1, 3, 0.125, 0.0, core::BORDER_REPLICATE)?;
    Ok(PlaneMats { l: lm, a: Mat::default(), b: Mat::default(), gx: gxm, gy: gym, half })
}

/// Grey level the light squares are brought to before the colour planes are
/// made (with headroom for pieces lighter than the board).
const WHITE_REF: f64 = 180.0;

impl PlaneMats {
    /// Colour planes (Lab a*, b*, half resolution) of the image balanced against
    /// the board itself: each channel scaled so the light squares' corners come
    /// out neutral grey at WHITE_REF. A warmer or colder lamp, another camera's
    /// white balance or exposure all multiply the channels, so this undoes them
    /// (as far as nothing clips) and the piece colours land where the palette
    /// expects them.
    fn balance_colour(&mut self, top_left_dark: bool) -> Result<()> {
        let half = &self.half;
        let d = half.data_bytes()?;
        let mut ch: [Vec<u8>; 3] = [Vec::with_capacity(1024), Vec::with_capacity(1024), Vec::with_capacity(1024)];
        let hs = SQ / 2;
        for r in 0..8 {
            for c in 0..8 {
                if ((r + c) % 2 == 0) == top_left_dark {
                    continue;
                }
                for &(ox, oy) in &[(2usize, 2usize), (hs - 6, 2), (2, hs - 6), (hs - 6, hs - 6)] {
                    for y in r * hs + oy..r * hs + oy + 4 {
                        for x in c * hs + ox..c * hs + ox + 4 {
                            let i = (y * NH + x) * 3;
                            for k in 0..3 {
                                ch[k].push(d[i + k]);
                            }
                        }
                    }
                }
            }
        }
        let mut gains = [1.0f64; 3];
        for k in 0..3 {
            let n = ch[k].len() / 2;
            let m = *ch[k].select_nth_unstable(n).1 as f64;
            gains[k] = WHITE_REF / m.max(8.0);
        }
        let mut balanced = Mat::default();
        core::multiply(half, &core::Scalar::new(gains[0], gains[1], gains[2], 0.0), &mut balanced, 1.0, -1)?;
        let mut lab = Mat::default();
        imgproc::cvt_color_def(&balanced, &mut lab, imgproc::COLOR_BGR2Lab)?;
        let mut planes = core::Vector::<Mat>::new();
        core::split(&lab, &mut planes)?;
        self.a = planes.get(1)?;
        self.b = planes.get(2)?;
        Ok(())
    }
}

/// 8-bit sRGB grey -> OpenCV 8-bit L* (0..255 for L* 0..100).
fn l_star_lut() -> [u8; 256] {
    let mut t = [0u8; 256];
    for (g, v) in t.iter_mut().enumerate() {
        let c = g as f64 / 255.0;
        let y = if c <= 0.04045 { c / 12.92 } else { ((c + 0.055) / 1.055).powf(2.4) };
        let f = if y > 0.008856 { y.cbrt() } else { 7.787 * y + 16.0 / 116.0 };
        *v = ((116.0 * f - 16.0) * 2.55).round().clamp(0.0, 255.0) as u8;
    }
    t
}

fn median(v: &mut [f32]) -> f32 {
    if v.is_empty() {
        return 0.0;
    }
    let k = v.len() / 2;
    v.select_nth_unstable_by(k, |a, b| a.total_cmp(b));
    v[k]
}

/// Disc radius in rectified px (the wooden men are ~0.68 square across).
const DISC_R: f32 = 22.5;
/// Radius of the piece top we average colour over (margin for misplacement).
const INNER_R: f32 = 14.0;
/// How far (px) a piece top may sit from the square centre: men are rarely put
/// down centred (and corner squares get pushed against the frame), and in
/// oblique views the top of a tall piece leans away from the camera.
const SEARCH: i32 = 16;

/// How many Hough peaks of a dark square are tried as the disc's centre.
const HOUGH_PEAKS: usize = 3;
/// Peaks closer than this (px, either axis) are one peak.
const PEAK_APART: i32 = 4;

/// The `HOUGH_PEAKS` highest of `candidates` (value, dx, dy) that lie at least `PEAK_APART`
/// apart (greedy non-maximum suppression), highest first.
fn strongest_peaks(candidates: &[(f32, i32, i32)]) -> Vec<(f32, i32, i32)> {
    let mut peaks: Vec<(f32, i32, i32)> = Vec::with_capacity(HOUGH_PEAKS);
    while peaks.len() < HOUGH_PEAKS {
        let apart = |c: &&(f32, i32, i32)| peaks.iter().all(|p| (p.1 - c.1).abs() >= PEAK_APART || (p.2 - c.2).abs() >= PEAK_APART);
        let Some(&next) = candidates.iter().filter(apart).max_by(|a, b| a.0.total_cmp(&b.0)) else { break };
        peaks.push(next);
    }
    peaks
}

/// Annulus offsets with unit radial vectors.
struct Ring {
    o: Vec<(i32, i32, f32, f32)>,
    /// Angular sector (0..SECTORS) of each offset.
    sec: Vec<u8>,
}

const SECTORS: usize = 12;

impl Ring {
    fn new(r0: f32, r1: f32) -> Ring {
        let ri = r1.ceil() as i32;
        let mut o = Vec::new();
        let mut sec = Vec::new();
        for dy in -ri..=ri {
            for dx in -ri..=ri {
                let d = ((dx * dx + dy * dy) as f32).sqrt();
                if d >= r0 && d <= r1 && d > 0.0 {
                    o.push((dx, dy, dx as f32 / d, dy as f32 / d));
                    let a = (dy as f32).atan2(dx as f32) + std::f32::consts::PI;
                    sec.push(((a / (2.0 * std::f32::consts::PI) * SECTORS as f32) as usize).min(SECTORS - 1) as u8);
                }
            }
        }
        Ring { o, sec }
    }

    /// mean |radial gradient| - mean |tangential gradient| around (x, y).
    /// Only pixels inside `bounds` (x0, y0, x1, y1) count: the square's own
    /// borders are by far the strongest edges and must not pass for a rim.
    fn radial_score(&self, p: &Planes, x: i32, y: i32, bounds: (i32, i32, i32, i32)) -> f32 {
        let (mut s, mut n) = (0f32, 0u32);
        for &(dx, dy, ux, uy) in &self.o {
            let (px, py) = (x + dx, y + dy);
            if px < bounds.0 || py < bounds.1 || px >= bounds.2 || py >= bounds.3 {
                continue;
            }
            let i = py as usize * N + px as usize;
            let (gx, gy) = (p.gx[i], p.gy[i]);
            s += (gx * ux + gy * uy).abs() - (gy * ux - gx * uy).abs();
            n += 1;
        }
        if n == 0 { 0.0 } else { s / n as f32 }
    }
}

impl Ring {
    fn checkerboard(&self) -> Ring {
        let keep: Vec<usize> = (0..self.o.len()).filter(|&k| (self.o[k].0 + self.o[k].1).rem_euclid(2) == 0).collect();
        Ring { o: keep.iter().map(|&k| self.o[k]).collect(), sec: keep.iter().map(|&k| self.sec[k]).collect() }
    }

    /// Median over angular sectors of the per-sector radial score: a circle is
    /// radial all around, a stray thread or a glare edge only in a sector or two.
    /// Sectors entirely outside `bounds` are ignored.
    fn sector_median(&self, p: &Planes, x: i32, y: i32, bounds: (i32, i32, i32, i32)) -> f32 {
        let mut s = [0f32; SECTORS];
        let mut n = [0u32; SECTORS];
        for (k, &(dx, dy, ux, uy)) in self.o.iter().enumerate() {
            let (px, py) = (x + dx, y + dy);
            if px < bounds.0 || py < bounds.1 || px >= bounds.2 || py >= bounds.3 {
                continue;
            }
            let i = py as usize * N + px as usize;
            let (gx, gy) = (p.gx[i], p.gy[i]);
            let j = self.sec[k] as usize;
            s[j] += (gx * ux + gy * uy).abs() - (gy * ux - gx * uy).abs();
            n[j] += 1;
        }
        let mut v: Vec<f32> = (0..SECTORS).filter(|&j| n[j] >= 4).map(|j| s[j] / n[j] as f32).collect();
        if v.len() < 3 {
            return 0.0;
        }
        median(&mut v)
    }
}

/// Compute features for all squares (no lean: the piece tops are looked for
/// around the square centres).
pub fn board_features(rect: &Mat) -> Result<BoardFeatures> {
    board_features_with(rect, None)
}

/// Where piece tops appear in the rectified image relative to the square
/// centres, in rectified px (see `rectify::Lean`): tall pieces seen obliquely
/// lean away from the camera. `None` = straight above.
pub type LeanOffsets = [[(f32, f32); 8]; 8];

/// Compute features for all squares; the search for each piece top is centred
/// where a piece standing on the square would show its top.
pub fn board_features_with(rect: &Mat, lean: Option<&LeanOffsets>) -> Result<BoardFeatures> {
    let mut pm = planes(rect)?;
    // Parity and the board's reference levels from the square corners.
    let (top_left_dark, me, mo) = parity_levels(pm.l.data_bytes()?);
    pm.balance_colour(top_left_dark)?;
    let p = pm.view()?;
    // Colour of the light squares (white balance reference), from their corners.
    // The dark squares' colour likewise: the surface a piece covering its whole square
    // is compared with.
    let (mut la, mut lb) = (Vec::with_capacity(512), Vec::with_capacity(512));
    let (mut da, mut db) = (Vec::with_capacity(512), Vec::with_capacity(512));
    for r in 0..8 {
        for c in 0..8 {
            let (va, vb) = if ((r + c) % 2 == 0) == top_left_dark { (&mut da, &mut db) } else { (&mut la, &mut lb) };
            for &(ox, oy) in &[(4usize, 4usize), (SQ - 12, 4), (4, SQ - 12), (SQ - 12, SQ - 12)] {
                for y in (r * SQ + oy..r * SQ + oy + 8).step_by(4) {
                    for x in (c * SQ + ox..c * SQ + ox + 8).step_by(4) {
                        let h = half_idx(x, y);
                        va.push(p.a[h] as f32);
                        vb.push(p.b[h] as f32);
                    }
                }
            }
        }
    }
    let (ref_a, ref_b) = (median(&mut la), median(&mut lb));
    let (dark_a, dark_b) = (median(&mut da), median(&mut db));
    let (ref_dark, ref_light) = if top_left_dark { (me, mo) } else { (mo, me) };
    let contrast = (ref_light - ref_dark).max(1.0);

    let acc = hough_acc(&p, top_left_dark);
    let rim = Ring::new(DISC_R - 1.5, DISC_R + 1.5);
    let rings = Ring::new(4.0, DISC_R - 6.0);
    // Half the pixels (checkerboard) for the centre search: same answer, half
    // the cost.
    let rim_s = rim.checkerboard();
    let rings_s = rings.checkerboard();
    let mut squares = [[SquareFeatures::default(); 8]; 8];
    // A dark square's circle votes over its search window, (votes, dx, dy).
    let mut votes = Vec::with_capacity(((SEARCH + 1) * (SEARCH + 1)) as usize);
    for r in 0..8 {
        for c in 0..8 {
            let dark = ((r + c) % 2 == 0) == top_left_dark;
            // Search centre: the square centre moved by the expected lean of a
            // piece top (kept inside the square so the window stays on it).
            // Light squares are read at their centre (men belong on the dark ones;
            // a knocked man is caught either way).
            let (lx, ly) = lean.filter(|_| dark).map_or((0, 0), |l| {
                let (x, y) = l[r][c];
                // Even offsets: the coarse search below steps by 2 px, and keeping
                // its lattice fixed keeps its peaks where they were.
                let even = |v: f32| ((v / 2.0).round() * 2.0).clamp(-(SEARCH as f32), SEARCH as f32) as i32;
                (even(x), even(y))
            });
            let (cx, cy) = ((c * SQ + SQ / 2) as i32 + lx, (r * SQ + SQ / 2) as i32 + ly);
            let m = 4;
            let bounds = ((c * SQ) as i32 + m, (r * SQ) as i32 + m, ((c + 1) * SQ) as i32 - m, ((r + 1) * SQ) as i32 - m);
            // Find the disc: the circle-Hough peaks inside the search window, each
            // pinned by a fine search of rim + rings (the grooves are concentric, so
            // they pin the centre to a pixel). Only on playing squares; light squares
            // are looked at where a man knocked there would be: the centre.
            let score = |x: i32, y: i32| rim_s.radial_score(&p, x, y, bounds) + 2.0 * rings_s.radial_score(&p, x, y, bounds);
            // The disc's centre (dx, dy), and for a dark square its grooves' median over the
            // sectors there (`rings_med`, measured while choosing among the peaks).
            let mut best = (0i32, 0i32);
            let mut concentric_at_best = None;
            if dark {
                // The few strongest Hough peaks, apart from each other: a faint disc (a dark man
                // in shade) has a peak no higher than its square's grain, and which of them is
                // highest turns on a pixel's shift of the board; the grooves tell which is the disc.
                votes.clear();
                for dy in (-SEARCH..=SEARCH).step_by(2) {
                    for dx in (-SEARCH..=SEARCH).step_by(2) {
                        let (hx, hy) = (((cx + dx) / 2).clamp(0, NH as i32 - 1), ((cy + dy) / 2).clamp(0, NH as i32 - 1));
                        votes.push((box3(&acc, hx as usize, hy as usize), dx, dy));
                    }
                }
                // Each peak pinned to a pixel by rim + grooves, then the peak whose grooves are
                // concentric all round (the median over sectors: a glare streak or a thread is
                // radial in a sector or two only).
                let mut most_concentric = f32::MIN;
                for (_, bx, by) in strongest_peaks(&votes) {
                    let mut local = (f32::MIN, 0i32, 0i32);
                    for dy in -1..=1 {
                        for dx in -1..=1 {
                            let (ox, oy) = ((bx + dx).clamp(-SEARCH, SEARCH), (by + dy).clamp(-SEARCH, SEARCH));
                            let v = score(cx + ox, cy + oy);
                            if v > local.0 {
                                local = (v, ox, oy);
                            }
                        }
                    }
                    let concentric = rings.sector_median(&p, cx + local.1, cy + local.2, bounds);
                    if concentric > most_concentric {
                        most_concentric = concentric;
                        best = (local.1, local.2);
                    }
                }
                concentric_at_best = Some(most_concentric);
            }
            let (x, y) = (cx + best.0, cy + best.1);
            let (il, ia, ib) = disc_mean(&p, x, y, INNER_R);
            // The square's own surface: inside the square (4 px margin), clear of the piece
            // wherever it stands. A piece seen obliquely covers more than its top: its body
            // sweeps from its foot (the square's centre) to its top, and a stacked king's top
            // leans twice as far as a man's, often out of the square, so the body covers
            // the square's surface on that side. Measured there, the "surface" would be the
            // piece itself and the piece would look like an empty square.
            let (mut vl, mut va, mut vb) = (Vec::new(), Vec::new(), Vec::new());
            let clear = (DISC_R + 4.0) * (DISC_R + 4.0);
            let foot = ((c * SQ + SQ / 2) as f32, (r * SQ + SQ / 2) as f32);
            let king_top = lean.filter(|_| dark).map_or(foot, |l| (foot.0 + 2.0 * l[r][c].0, foot.1 + 2.0 * l[r][c].1));
            let covered = |px: f32, py: f32| {
                distance2_to_segment((px, py), foot, (x as f32, y as f32)) <= clear || distance2_to_segment((px, py), foot, king_top) <= clear
            };
            for yy in (r * SQ + 4..(r + 1) * SQ - 4).step_by(2) {
                for xx in (c * SQ + 4..(c + 1) * SQ - 4).step_by(2) {
                    if !covered(xx as f32, yy as f32) {
                        let i = yy * N + xx;
                        vl.push(p.l[i] as f32);
                        let h = half_idx(xx, yy);
                        va.push(p.a[h] as f32);
                        vb.push(p.b[h] as f32);
                    }
                }
            }
            let own = if vl.len() >= 20 {
                (median(&mut vl), median(&mut va), median(&mut vb))
            } else if dark {
                (ref_dark, dark_a, dark_b)
            } else {
                (ref_light, ref_a, ref_b)
            };
            let ring_s = concentric_at_best.unwrap_or_else(|| rings.sector_median(&p, x, y, bounds));
            squares[r][c] = SquareFeatures {
                f: [
                    (il - ref_dark) / contrast,
                    (il - own.0) / contrast,
                    ia - own.1,
                    ib - own.2,
                    rim.radial_score(&p, x, y, bounds) / contrast * 10.0,
                    rings.radial_score(&p, x, y, bounds) / contrast * 10.0,
                    ring_s / contrast * 10.0,
                    ia - ref_a,
                    ib - ref_b,
                ],
                centre: ((x - (c * SQ + SQ / 2) as i32) as f32, (y - (r * SQ + SQ / 2) as i32) as f32),
            };
        }
    }
    Ok(BoardFeatures { squares, top_left_dark, contrast })
}

/// Parity and reference levels from the squares' corners (discs sit in the
/// middle, so corners show the square's own surface): (top-left square dark,
/// median level of the even squares, of the odd squares).
fn parity_levels(l: &[u8]) -> (bool, f32, f32) {
    let corner_l = |r: usize, c: usize| -> f32 {
        let (x0, y0) = (c * SQ, r * SQ);
        let mut v = Vec::with_capacity(64);
        for &(ox, oy) in &[(4usize, 4usize), (SQ - 12, 4), (4, SQ - 12), (SQ - 12, SQ - 12)] {
            for y in (y0 + oy..y0 + oy + 8).step_by(2) {
                for x in (x0 + ox..x0 + ox + 8).step_by(2) {
                    v.push(l[y * N + x] as f32);
                }
            }
        }
        median(&mut v)
    };
    let (mut even, mut odd) = (Vec::with_capacity(32), Vec::with_capacity(32));
    for r in 0..8 {
        for c in 0..8 {
            let v = corner_l(r, c);
            if (r + c) % 2 == 0 { even.push(v) } else { odd.push(v) }
        }
    }
    let (me, mo) = (median(&mut even), median(&mut odd));
    (me < mo, me, mo)
}

/// 3x3 box sum (half resolution, i.e. +-2 px at full resolution) of the Hough
/// accumulator around half-res (x, y), from its summed-area table.
#[inline]
fn box3(sat: &[f32], x: usize, y: usize) -> f32 {
    let w = NH + 1;
    let (x0, y0, x1, y1) = (x.saturating_sub(1), y.saturating_sub(1), (x + 2).min(NH), (y + 2).min(NH));
    sat[y1 * w + x1] - sat[y0 * w + x1] - sat[y1 * w + x0] + sat[y0 * w + x0]
}

/// Circle Hough accumulator (as a summed-area table) for radius DISC_R (+-1): every pixel with some
/// gradient votes at DISC_R along and against its gradient (rims of dark men
/// can be darker or lighter than the square around them), weighted by the
/// clipped gradient magnitude. Pixels on the squares' own borders don't vote:
/// their straight edges would pile votes on lines through every square.
fn hough_acc(p: &Planes, top_left_dark: bool) -> Vec<f32> {
    // Half-resolution accumulator (fits in cache; the peak only needs to be
    // within a pixel or two, the fine search does the rest).
    let mut acc = vec![0f32; NH * NH];
    // Only pixels of playing squares vote: discs are looked for there only,
    // and it halves the work. (A man overhanging into a light square still has
    // most of its rim on its own square.)
    let playing = |x: usize, y: usize| (((x / SQ) + (y / SQ)) % 2 == 0) == top_left_dark;
    let border = |v: usize| {
        let m = v % SQ;
        m < 5 || m >= SQ - 5
    };
    // Every other pixel in each direction votes (4x cheaper); the rim of a disc
    // still casts ~35 votes and the box blur below fills the gaps.
    for y in (2..N - 2).step_by(2) {
        if border(y) {
            continue;
        }
        for x in (2..N - 2).step_by(2) {
            if border(x) || !playing(x, y) {
                continue;
            }
            let i = y * N + x;
            let (gx, gy) = (p.gx[i], p.gy[i]);
            let m2 = gx * gx + gy * gy;
            if m2 < 2.25 {
                continue;
            }
            let m = m2.sqrt();
            let w = m.min(8.0);
            let (ux, uy) = (gx / m, gy / m);
            for s in [-1.0f32, 1.0] {
                {
                    let rr = DISC_R;
                    let vx = ((x as f32 + s * rr * ux) * 0.5).round() as i32;
                    let vy = ((y as f32 + s * rr * uy) * 0.5).round() as i32;
                    if vx >= 0 && vy >= 0 && (vx as usize) < NH && (vy as usize) < NH {
                        acc[vy as usize * NH + vx as usize] += w;
                    }
                }
            }
        }
    }
    // Summed-area table: the search below reads 5x5 box sums (so a slightly
    // elliptic rim still makes one peak) only inside the search windows, which
    // is much cheaper than blurring the whole accumulator.
    let w = NH + 1;
    let mut sat = vec![0f32; w * w];
    for y in 0..NH {
        let mut run = 0f32;
        for x in 0..NH {
            run += acc[y * NH + x];
            sat[(y + 1) * w + x + 1] = sat[y * w + x + 1] + run;
        }
    }
    sat
}

/// Squared distance from `p` to the segment `a`-`b`.
fn distance2_to_segment(p: (f32, f32), a: (f32, f32), b: (f32, f32)) -> f32 {
    let (vx, vy) = (b.0 - a.0, b.1 - a.1);
    let len2 = vx * vx + vy * vy;
    let t = if len2 > 0.0 { (((p.0 - a.0) * vx + (p.1 - a.1) * vy) / len2).clamp(0.0, 1.0) } else { 0.0 };
    let (dx, dy) = (p.0 - a.0 - t * vx, p.1 - a.1 - t * vy);
    dx * dx + dy * dy
}

/// Mean L, a, b within radius r of (x, y).
fn disc_mean(p: &Planes, x: i32, y: i32, r: f32) -> (f32, f32, f32) {
    let (mut sl, mut sa, mut sb, mut n) = (0f32, 0f32, 0f32, 0f32);
    let ri = r.ceil() as i32;
    for dy in -ri..=ri {
        for dx in -ri..=ri {
            if (dx * dx + dy * dy) as f32 > r * r {
                continue;
            }
            let (px, py) = (x + dx, y + dy);
            if px < 0 || py < 0 || px >= N as i32 || py >= N as i32 {
                continue;
            }
            let i = py as usize * N + px as usize;
            sl += p.l[i] as f32;
            let h = half_idx(px as usize, py as usize);
            sa += p.a[h] as f32;
            sb += p.b[h] as f32;
            n += 1.0;
        }
    }
    let n = n.max(1.0);
    (sl / n, sa / n, sb / n)
}

/// Classify every square of a rectified board with a colour model.
pub fn classify(rect: &Mat, model: &ColourModel) -> Result<BoardReading> {
    let bf = board_features(rect)?;
    Ok(classify_features(&bf, model))
}

/// Classify with the expected lean of piece tops (oblique views).
pub fn classify_with(rect: &Mat, model: &ColourModel, lean: Option<&LeanOffsets>) -> Result<BoardReading> {
    let bf = board_features_with(rect, lean)?;
    Ok(classify_features(&bf, model))
}

/// Classification from precomputed features (lets calibration reuse them).
pub fn classify_features(bf: &BoardFeatures, model: &ColourModel) -> BoardReading {
    let mut squares = [[model.read(&SquareFeatures::default(), true); 8]; 8];
    for r in 0..8 {
        for c in 0..8 {
            squares[r][c] = model.read(&bf.squares[r][c], bf.is_dark(r, c));
        }
    }
    BoardReading { squares, top_left_dark: bf.top_left_dark, contrast: bf.contrast }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::core::{Point, Scalar};

    #[test]
    fn peaks_closer_than_the_suppression_distance_count_once() {
        let votes = [(9.0, 0, 0), (8.5, 2, 2), (7.0, -10, 4), (6.0, 10, -10), (5.0, 11, -8)];
        let peaks = strongest_peaks(&votes);
        assert_eq!(peaks.iter().map(|p| (p.1, p.2)).collect::<Vec<_>>(), vec![(0, 0), (-10, 4), (10, -10)]);
        assert_eq!(strongest_peaks(&votes[..1]).len(), 1);
    }

    /// A faint grooved man off the square's centre, and beside it a bright half-circle
    /// (a glare edge, a thread): the half-circle draws more circle votes than the faint rim,
    /// but only the man has concentric grooves all round, and the man is where the disc is read.
    #[test]
    fn a_faint_grooved_man_is_found_beside_a_brighter_half_circle() {
        let mut rect = Mat::new_rows_cols_with_default(RECT_SIZE, RECT_SIZE, core::CV_8UC3, Scalar::all(0.0)).unwrap();
        let sq = SQUARE_PX;
        let (dark, light) = (Scalar::all(70.0), Scalar::all(200.0));
        for r in 0..8 {
            for c in 0..8 {
                let colour = if (r + c) % 2 == 1 { dark } else { light };
                imgproc::rectangle(&mut rect, core::Rect::new(c * sq, r * sq, sq, sq), colour, -1, imgproc::LINE_8, 0).unwrap();
            }
        }
        let (r, c) = (3, 2);
        let centre = Point::new(c * sq + sq / 2, r * sq + sq / 2);
        let man = centre + Point::new(-9, -9);
        imgproc::circle(&mut rect, man, DISC_R as i32, Scalar::all(84.0), -1, imgproc::LINE_AA, 0).unwrap();
        for (radius, level) in [(15, 74.0), (12, 92.0), (9, 74.0), (6, 92.0)] {
            imgproc::circle(&mut rect, man, radius, Scalar::all(level), 2, imgproc::LINE_AA, 0).unwrap();
        }
        let decoy = centre + Point::new(6, 6);
        imgproc::ellipse(&mut rect, decoy, core::Size::new(22, 22), 0.0, -30.0, 140.0, Scalar::all(170.0), 2, imgproc::LINE_AA, 0).unwrap();
        let bf = board_features(&rect).unwrap();
        assert!(bf.is_dark(r as usize, c as usize));
        let found = bf.squares[r as usize][c as usize].centre;
        assert!((found.0 + 9.0).abs() <= 2.0 && (found.1 + 9.0).abs() <= 2.0, "disc read at {found:?}, the man is at (-9, -9)");
    }
}
