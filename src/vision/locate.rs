//! Board localisation without markers.
//!
//! Pipeline (all on a downscaled grey image, longest side `WORK_PX`):
//! 1. X-corner (saddle point) detection: the determinant of the Hessian is strongly
//!    negative exactly where four squares meet, whatever the board's rotation.
//!    Discs sit in the middle of dark squares and hardly ever cover a square's
//!    corner, wood grain and edges give det ~ 0, discs give det > 0. When the
//!    fine scale yields no good lattice (inlay lines between the squares, strong
//!    grain), the search runs again at coarser scales (`XCORNER_SIGMAS`).
//! 2. Lattice fitting: seed an affine lattice from a strong corner and two of its
//!    neighbours, grow it with a projective model (homography lattice -> image) so
//!    perspective is followed, keep the lattice with most supporting corners.
//!    `findChessboardCornersSB` (7x7 inner corners) is run as one more candidate
//!    when the lattice is weak; it shares the same scoring.
//! 3. Extent: the lattice is only known up to an integer shift, and false corners
//!    (frame ornaments, pieces) may extend it. Every 8x8 window is scored by how
//!    well the rectified image shows a light/dark alternation inside, on its own
//!    border strips, and how *little* it alternates just outside (the frame).
//! 4. Refinement at full resolution: `cornerSubPix` on the 49 predicted inner
//!    corners, RANSAC homography, outer corners extrapolated from it.
use super::{fit_h, h_apply, h_inv, h_mul, Result, VisionError, H3};
use opencv::core::{Mat, Point2f, Size, TermCriteria, Vector};
use opencv::prelude::*;
use opencv::{calib3d, core, imgproc};

/// The windows one square over from a found one. The squares' alternation fixes the lattice
/// only up to whole squares; a border of the light squares' own colour, or pieces leaning over
/// the first row, can still put the window one row or column off. At a start position the men
/// decide: the calibration tries these windows when the found one shows no start position.
pub const ONE_SQUARE_OVER: [(f64, f64); 4] = [(0.0, 1.0), (0.0, -1.0), (1.0, 0.0), (-1.0, 0.0)];

/// The windows one square over along both axes: a frame of the squares' colour on two
/// neighbouring sides puts the window a row and a column off. Tried after [`ONE_SQUARE_OVER`]
/// by the learnt square model, whose start position cannot be one two squares over.
pub const ONE_SQUARE_ACROSS: [(f64, f64); 4] = [(1.0, 1.0), (1.0, -1.0), (-1.0, 1.0), (-1.0, -1.0)];

/// Longest side of the image the search runs on. 640 keeps squares >= ~20 px for
/// a board filling a third of the frame, and the whole search well under 100 ms.
pub const WORK_PX: i32 = 640;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum LocateMethod {
    /// Previous location confirmed on this frame.
    Tracked,
    /// Lattice fitted over detected X-corners.
    XCornerLattice,
    /// cv::findChessboardCornersSB (7x7 inner corners).
    ChessboardSB,
    /// Corners given by hand.
    Manual,
}

/// Where the playing area is in the image.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BoardLocation {
    /// Outer corners of the 8x8 playing area in image pixels: top-left, top-right,
    /// bottom-right, bottom-left as they appear in the image.
    pub corners: [[f32; 2]; 4],
    /// Board coordinates (u, v in squares, 0..=8, (0,0) = corners[0]) -> image px.
    pub h_board_to_img: H3,
    /// (width, height) of the image this location belongs to.
    pub image_size: (i32, i32),
    /// Checker-pattern score (about 2.5 for a clean board, < 1 = not a board).
    pub score: f32,
    pub method: LocateMethod,
    /// Radial lens distortion found with the lattice (0: none): see [`Lens`].
    pub lens: Lens,
}

/// One-coefficient radial lens distortion about the image centre, the shape every cheap
/// webcam lens has: a point the flat board's homography puts at `p` shows at
/// `centre + (p - centre) (1 + k1 r²)`, `r` the distance from the centre in half-diagonals
/// of the image (negative `k1`: barrel). The 49 inner corners tell it: with the right
/// `k1` they lie on one projective lattice. Without it the outer corners, extrapolated from
/// the inner ones, miss the true ones by a tenth of a square on a wide-angle camera.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Lens {
    pub k1: f64,
}

impl Lens {
    /// Image centre and half-diagonal of an image of `size`.
    fn frame(size: (i32, i32)) -> (f64, f64, f64) {
        let (w, h) = (size.0 as f64, size.1 as f64);
        (w / 2.0, h / 2.0, 0.5 * w.hypot(h))
    }

    /// Where a point of the distortion-free picture shows in the image.
    pub fn distort(&self, size: (i32, i32), x: f64, y: f64) -> (f64, f64) {
        if self.k1 == 0.0 {
            return (x, y);
        }
        let (cx, cy, d) = Lens::frame(size);
        let (dx, dy) = ((x - cx) / d, (y - cy) / d);
        let f = 1.0 + self.k1 * (dx * dx + dy * dy);
        (cx + dx * f * d, cy + dy * f * d)
    }

    /// The distortion-free point of an image point (Newton's method on the radius).
    pub fn undistort(&self, size: (i32, i32), x: f64, y: f64) -> (f64, f64) {
        if self.k1 == 0.0 {
            return (x, y);
        }
        let (cx, cy, d) = Lens::frame(size);
        let (dx, dy) = ((x - cx) / d, (y - cy) / d);
        let rd = dx.hypot(dy);
        if rd < 1e-12 {
            return (x, y);
        }
        let mut r = rd;
        for _ in 0..20 {
            let g = r * (1.0 + self.k1 * r * r) - rd;
            let slope = 1.0 + 3.0 * self.k1 * r * r;
            if slope.abs() < 1e-9 {
                break;
            }
            let step = g / slope;
            r -= step;
            if step.abs() < 1e-12 {
                break;
            }
        }
        let s = r / rd;
        (cx + dx * s * d, cy + dy * s * d)
    }
}

impl BoardLocation {
    /// Location from four hand-given corners (any order; they are sorted into
    /// TL, TR, BR, BL as they appear in the image).
    pub fn from_corners(corners: [[f32; 2]; 4], image_size: (i32, i32)) -> Result<Self> {
        let pts: Vec<(f64, f64)> = corners.iter().map(|c| (c[0] as f64, c[1] as f64)).collect();
        if pts.iter().any(|p| !p.0.is_finite() || !p.1.is_finite()) {
            return Err(VisionError::BadCorners("non-finite coordinate".into()));
        }
        let sorted = sort_corners(&pts);
        // Reject degenerate or self-intersecting quadrilaterals: all four cross
        // products of consecutive edges must have the same sign.
        let mut sign = 0.0;
        for k in 0..4 {
            let a = sorted[k];
            let b = sorted[(k + 1) % 4];
            let c = sorted[(k + 2) % 4];
            let cr = (b.0 - a.0) * (c.1 - b.1) - (b.1 - a.1) * (c.0 - b.0);
            if cr.abs() < 1.0 || (sign != 0.0 && cr.signum() != sign) {
                return Err(VisionError::BadCorners("corners do not form a convex quadrilateral".into()));
            }
            sign = cr.signum();
        }
        let h = h_from_4(&sorted)?;
        Ok(Self::new(h, image_size, 0.0, LocateMethod::Manual, Lens::default()))
    }

    /// Location from four corners as they appear in an image taken through `lens` (a
    /// calibration keeps both).
    pub fn from_corners_through(corners: [[f32; 2]; 4], image_size: (i32, i32), lens: Lens) -> Result<Self> {
        let flat = corners.map(|c| {
            let (x, y) = lens.undistort(image_size, c[0] as f64, c[1] as f64);
            [x as f32, y as f32]
        });
        let mut loc = Self::from_corners(flat, image_size)?;
        if lens.k1 != 0.0 {
            loc = Self::new(loc.h_board_to_img, image_size, loc.score, loc.method, lens);
        }
        Ok(loc)
    }

    fn new(h_board_to_img: H3, image_size: (i32, i32), score: f32, method: LocateMethod, lens: Lens) -> Self {
        let mut corners = [[0f32; 2]; 4];
        for (k, (u, v)) in [(0.0, 0.0), (8.0, 0.0), (8.0, 8.0), (0.0, 8.0)].iter().enumerate() {
            let (x, y) = h_apply(&h_board_to_img, *u, *v);
            let (x, y) = lens.distort(image_size, x, y);
            corners[k] = [x as f32, y as f32];
        }
        BoardLocation { corners, h_board_to_img, image_size, score, method, lens }
    }

    /// The same lattice, its 8x8 window moved by (`du`, `dv`) squares (see [`ONE_SQUARE_OVER`]).
    pub fn shifted(&self, du: f64, dv: f64) -> BoardLocation {
        let t: H3 = [[1.0, 0.0, du], [0.0, 1.0, dv], [0.0, 0.0, 1.0]];
        Self::new(h_mul(&self.h_board_to_img, &t), self.image_size, self.score, self.method, self.lens)
    }

    /// Image point of board coordinates (u, v) in squares.
    pub fn board_to_image(&self, u: f64, v: f64) -> (f64, f64) {
        let (x, y) = h_apply(&self.h_board_to_img, u, v);
        self.lens.distort(self.image_size, x, y)
    }
}

/// Grey image as f32, row-major, with bilinear sampling.
pub(crate) struct GrayF {
    pub w: usize,
    pub h: usize,
    pub d: Vec<f32>,
}

impl GrayF {
    fn from_mat(m: &Mat) -> Result<Self> {
        let mut f = Mat::default();
        m.convert_to(&mut f, core::CV_32F, 1.0, 0.0)?;
        let f = if f.is_continuous() { f } else { f.try_clone()? };
        Ok(GrayF { w: f.cols() as usize, h: f.rows() as usize, d: f.data_typed::<f32>()?.to_vec() })
    }
    /// Bilinear sample; None outside the image.
    #[inline]
    pub fn sample(&self, x: f64, y: f64) -> Option<f32> {
        if !(x >= 0.0 && y >= 0.0 && x < (self.w - 1) as f64 && y < (self.h - 1) as f64) {
            return None;
        }
        let (x0, y0) = (x as usize, y as usize);
        let (fx, fy) = ((x - x0 as f64) as f32, (y - y0 as f64) as f32);
        let i = y0 * self.w + x0;
        let a = self.d[i] * (1.0 - fx) + self.d[i + 1] * fx;
        let b = self.d[i + self.w] * (1.0 - fx) + self.d[i + self.w + 1] * fx;
        Some(a * (1.0 - fy) + b * fy)
    }
}

/// Convert any 8-bit 1/3/4-channel image to grey.
pub(crate) fn to_gray(img: &Mat) -> Result<Mat> {
    if img.empty() || img.depth() != core::CV_8U {
        return Err(VisionError::BadImage(format!("{}x{} depth {}", img.cols(), img.rows(), img.depth())));
    }
    let mut g = Mat::default();
    match img.channels() {
        1 => g = img.try_clone()?,
        3 => imgproc::cvt_color_def(img, &mut g, imgproc::COLOR_BGR2GRAY)?,
        4 => imgproc::cvt_color_def(img, &mut g, imgproc::COLOR_BGRA2GRAY)?,
        c => return Err(VisionError::BadImage(format!("{c} channels"))),
    }
    Ok(g)
}

/// The brightest of each pixel's channels (HSV's value) of an 8-bit colour image: where a
/// board's squares differ in hue more than in brightness (red and black plastic, whose red
/// is as dark as black to the eye's grey), they still differ in it.
pub(crate) fn to_value(img: &Mat) -> Result<Mat> {
    if img.empty() || img.depth() != core::CV_8U || img.channels() < 3 {
        return Err(VisionError::BadImage(format!("value of a {}-channel image", img.channels())));
    }
    let mut channels = core::Vector::<Mat>::new();
    core::split(img, &mut channels)?;
    let (mut value, mut both) = (Mat::default(), Mat::default());
    core::max(&channels.get(0)?, &channels.get(1)?, &mut both)?;
    core::max(&both, &channels.get(2)?, &mut value)?;
    Ok(value)
}

/// Find the board. `previous` (from an earlier frame of the same camera) is tried
/// first and kept if the checker pattern is still there (cheap tracking).
///
/// The board is looked for in the image's grey; if it is not found there, in each pixel's
/// brightest channel (`to_value`): a black and red board is a weak checker pattern in grey
/// (ray-traced scenes 1028, 1035 and 1038 of `examples/povray_sessions.rs`) and a strong one
/// there. A board found in grey is found exactly as before.
pub fn locate_board(img: &Mat, previous: Option<&BoardLocation>) -> Result<BoardLocation> {
    let in_grey = locate_board_in(to_gray(img)?, previous);
    match in_grey {
        Err(VisionError::BoardNotFound(_)) if img.channels() >= 3 => match locate_board_in(to_value(img)?, previous) {
            Ok(found) => Ok(found),
            Err(_) => in_grey,
        },
        other => other,
    }
}

/// [`locate_board`] in one grey image.
fn locate_board_in(gray: Mat, previous: Option<&BoardLocation>) -> Result<BoardLocation> {
    let (w, h) = (gray.cols(), gray.rows());
    if w < 64 || h < 64 {
        return Err(VisionError::BadImage(format!("too small: {w}x{h}")));
    }
    let scale = (WORK_PX as f64 / w.max(h) as f64).min(1.0);
    let mut small = Mat::default();
    if scale < 1.0 {
        let sz = Size::new((w as f64 * scale).round() as i32, (h as f64 * scale).round() as i32);
        imgproc::resize(&gray, &mut small, sz, 0.0, 0.0, imgproc::INTER_AREA)?;
    } else {
        small = gray.try_clone()?;
    }
    let g = GrayF::from_mat(&small)?;
    // small px = S * full px
    let s_mat: H3 = [[scale, 0.0, 0.0], [0.0, scale, 0.0], [0.0, 0.0, 1.0]];
    let s_inv: H3 = [[1.0 / scale, 0.0, 0.0], [0.0, 1.0 / scale, 0.0], [0.0, 0.0, 1.0]];

    // 0. Tracking: keep the previous homography if the pattern is still there.
    if let Some(prev) = previous {
        if prev.image_size == (w, h) {
            let sc = score_location(&g, &prev.h_board_to_img, prev.lens, (w, h), scale);
            if sc.total >= ACCEPT_SCORE {
                let refined = refine_full(&gray, &prev.h_board_to_img, prev.lens, false).map_or((prev.h_board_to_img, prev.lens), |r| (r.h, r.lens));
                let sc2 = score_location(&g, &refined.0, refined.1, (w, h), scale);
                let ((hh, lens), s) = if sc2.total >= sc.total - 0.05 { (refined, sc2.total) } else { ((prev.h_board_to_img, prev.lens), sc.total) };
                return Ok(BoardLocation::new(hh, (w, h), s, LocateMethod::Tracked, lens));
            }
        }
    }

    // 1-3. Candidates from the X-corner lattice (and SB if that looks weak).
    let mut best: Option<(H3, f32, LocateMethod)> = None;
    let mut small_f = Mat::default();
    small.convert_to(&mut small_f, core::CV_32F, 1.0 / 255.0, 0.0)?;
    // Lattices are grown from the strongest corners first. Men whose rims and grooves
    // contrast more than the squares do (black men on a pale green and lavender board) can take
    // all of those places; then the weaker corners seed lattices too.
    let mut corners_by_sigma = Vec::with_capacity(XCORNER_SIGMAS.len());
    'seeds: for seeds in [FIRST_SEEDS, MORE_SEEDS] {
        for (k, &sigma) in XCORNER_SIGMAS.iter().enumerate() {
            if corners_by_sigma.len() <= k {
                corners_by_sigma.push(detect_xcorners(&small_f, sigma)?);
            }
            for lat in fit_lattices(&corners_by_sigma[k], seeds) {
                let extent = best_extent(&g, &lat);
                tracing::trace!(
                    "lattice at sigma {sigma} from {} corners: {} nodes, best window {:?}",
                    corners_by_sigma[k].len(),
                    lat.nodes.len(),
                    extent.as_ref().map(|(hb, sc)| (h_apply(hb, 4.0, 4.0), *sc))
                );
                if let Some((hb, sc)) = extent {
                    if best.as_ref().map_or(true, |b| sc > b.1) {
                        best = Some((hb, sc, LocateMethod::XCornerLattice));
                    }
                }
            }
            if best.as_ref().is_some_and(|b| b.1 >= GOOD_SCORE) {
                break 'seeds;
            }
        }
    }
    if best.as_ref().map_or(true, |b| b.1 < GOOD_SCORE) {
        if let Some(lat) = sb_lattice(&small)? {
            if let Some((hb, sc)) = best_extent(&g, &lat) {
                if best.as_ref().map_or(true, |b| sc > b.1) {
                    best = Some((hb, sc, LocateMethod::ChessboardSB));
                }
            }
        }
    }
    let (hb_small, sc, method) = best.ok_or_else(|| VisionError::BoardNotFound("no checker lattice".into()))?;
    if sc < ACCEPT_SCORE {
        return Err(VisionError::BoardNotFound(format!("best checker score {sc:.2} < {ACCEPT_SCORE}")));
    }
    // 4. Full-resolution refinement.
    let h_full = h_mul(&s_inv, &hb_small);
    let h_full = canonical(&h_full)?;
    let first = refine_full(&gray, &h_full, Lens::default(), true);
    let refined = first.as_ref().map_or((h_full, Lens::default()), |r| (r.h, r.lens));
    // Once more from the refined fit: the corner search windows then start on
    // the corners, and the result no longer depends on how coarse the first
    // guess was (i.e. on the image's size).
    let (refined, lens) = refine_full(&gray, &refined.0, refined.1, true).map_or(refined, |r| (r.h, r.lens));
    let refined = canonical(&refined)?;
    // Compare like with like: `sc` carries best_extent's bonus for lattice support.
    let sc1 = score_board(&g, &h_mul(&s_mat, &h_full)).total;
    let sc2 = score_location(&g, &refined, lens, (w, h), scale).total;
    // A lens is only found when at least 25 inner corners agree on it to a fraction of a
    // pixel, so a refinement that found one is well supported even when the pattern score,
    // which samples fixed points of each square and is noisy by a few tenths on a bent board,
    // says a little less than for the coarse lattice.
    let margin = if lens.k1 != 0.0 { 0.3 } else { 0.05 };
    // The score only guards against a refinement that slid onto another lattice: one that
    // stayed on the coarse lattice (every outer corner within a third of a square of it) is the
    // same board found more precisely, and the coarse lattice is a few pixels off at the
    // corners (a tenth of a square and more on a small board).
    let same_lattice = {
        let coarse = BoardLocation::new(h_full, (w, h), sc1, method, Lens::default());
        let fine = BoardLocation::new(refined, (w, h), sc2, method, lens);
        let square = |c: &[[f32; 2]; 4]| (0..4).map(|k| dist(c[k], c[(k + 1) % 4])).sum::<f32>() / 32.0;
        let shift = (0..4).map(|k| dist(coarse.corners[k], fine.corners[k])).fold(0.0, f32::max);
        shift < SAME_LATTICE_SHIFT * square(&coarse.corners)
    };
    // On the same lattice, the corners measured from the coarse lattice decide: the fit of the
    // refinement can be drawn a few pixels aside by corners a man's rim pulled (a small board
    // crowded with men), and then the coarse lattice explains most corners better.
    let fits_better = first.as_ref().map_or(true, |m| m.median_miss(&refined, lens, (w, h)) <= m.median_miss(&h_full, Lens::default(), (w, h)));
    let take_refined = if same_lattice { fits_better } else { sc2 >= sc1 - margin };
    let (hh, lens, s) = if take_refined { (refined, lens, sc2) } else { (h_full, Lens::default(), sc1) };
    tracing::debug!("board by {method:?}: score {sc:.2} (pattern {sc1:.2}), refined {sc2:.2}, lens k1 {:.3}", lens.k1);
    Ok(BoardLocation::new(hh, (w, h), s, method, lens))
}

fn dist(a: [f32; 2], b: [f32; 2]) -> f32 {
    (a[0] - b[0]).hypot(a[1] - b[1])
}

/// A refined lattice whose outer corners all lie within this many squares of the coarse
/// lattice's is the same lattice (the corner search window is under a fifth of a square).
const SAME_LATTICE_SHIFT: f32 = 0.3;

/// Below this the best candidate is not called a board.
pub const ACCEPT_SCORE: f32 = 1.2;
/// Above this the lattice candidate is trusted without running SB.
const GOOD_SCORE: f32 = 2.0;
/// Smoothing scales (small-image px) of the X-corner search, tried in turn until a lattice
/// scores `GOOD_SCORE`. The fine scale finds corners of small or blurred boards; the
/// coarser ones see through inlay lines between the squares and wood grain, where the
/// fine scale puts a saddle on each square's own corner instead of one where four meet.
const XCORNER_SIGMAS: &[f64] = &[1.5, 2.5, 3.5];

// ---------------------------------------------------------------- X-corners

#[derive(Debug, Clone, Copy)]
pub(crate) struct XPt {
    x: f64,
    y: f64,
    r: f32,
}

/// Saddle points of the grey image `small_f` (f32, 0..1) smoothed at `sigma`:
/// -det(Hessian), non-max suppressed.
fn detect_xcorners(small_f: &Mat, sigma: f64) -> Result<Vec<XPt>> {
    let mut b = Mat::default();
    imgproc::gaussian_blur(small_f, &mut b, Size::new(0, 0), sigma, sigma, core::BORDER_REFLECT)?;
    let (mut ixx, mut iyy, mut ixy) = (Mat::default(), Mat::default(), Mat::default());
    imgproc::sobel(&b, &mut ixx, core::CV_32F, 2, 0, 3, 1.0, 0.0, core::BORDER_REFLECT)?;
    imgproc::sobel(&b, &mut iyy, core::CV_32F, 0, 2, 3, 1.0, 0.0, core::BORDER_REFLECT)?;
    imgproc::sobel(&b, &mut ixy, core::CV_32F, 1, 1, 3, 1.0, 0.0, core::BORDER_REFLECT)?;
    let (w, h) = (b.cols() as usize, b.rows() as usize);
    let (xx, yy, xy) = (ixx.data_typed::<f32>()?, iyy.data_typed::<f32>()?, ixy.data_typed::<f32>()?);
    let mut r = vec![0f32; w * h];
    for i in 0..w * h {
        let d = xy[i] * xy[i] - xx[i] * yy[i];
        r[i] = d.max(0.0);
    }
    let maxr = r.iter().cloned().fold(0f32, f32::max);
    if maxr <= 0.0 {
        return Ok(vec![]);
    }
    let thr = maxr * 0.02;
    let rad = 4usize;
    let mut pts = Vec::new();
    for y in rad..h - rad {
        for x in rad..w - rad {
            let v = r[y * w + x];
            if v < thr {
                continue;
            }
            let mut ismax = true;
            'n: for yy2 in y - rad..=y + rad {
                for xx2 in x - rad..=x + rad {
                    let o = r[yy2 * w + xx2];
                    if o > v || (o == v && (yy2, xx2) < (y, x)) {
                        ismax = false;
                        break 'n;
                    }
                }
            }
            if ismax {
                // Quadratic sub-pixel peak.
                let (l, rr) = (r[y * w + x - 1], r[y * w + x + 1]);
                let (u, d) = (r[(y - 1) * w + x], r[(y + 1) * w + x]);
                let dx = 0.5 * (l - rr) / (l - 2.0 * v + rr).min(-1e-9);
                let dy = 0.5 * (u - d) / (u - 2.0 * v + d).min(-1e-9);
                pts.push(XPt { x: x as f64 - dx.clamp(-0.5, 0.5) as f64, y: y as f64 - dy.clamp(-0.5, 0.5) as f64, r: v });
            }
        }
    }
    pts.sort_by(|a, b| b.r.total_cmp(&a.r));
    // Enough for a board on a checked tablecloth, whose squares give hundreds of corners
    // stronger than the board's own.
    pts.truncate(MAX_XCORNERS);
    Ok(pts)
}

// ---------------------------------------------------------------- lattice

/// A lattice hypothesis: homography from integer lattice coords to small-image px,
/// plus the lattice nodes that have a detected corner.
pub(crate) struct Lattice {
    h: H3,
    nodes: Vec<(i32, i32)>,
}

/// The most X-corners kept per scale (the strongest).
const MAX_XCORNERS: usize = 1000;

/// How many lattices are grown from the strongest corners' best hypotheses, and how many more
/// from the corners those leave unexplained when one of them runs on past a board.
const MAX_LATTICES: usize = 4;
const MORE_LATTICES: usize = 3;

/// How many of the strongest X-corners seed lattice hypotheses: first, and when no board
/// was found from those.
const FIRST_SEEDS: usize = 40;
const MORE_SEEDS: usize = 120;

fn fit_lattices(pts: &[XPt], seeds: usize) -> Vec<Lattice> {
    if pts.len() < 9 {
        return vec![];
    }
    let strongest: Vec<usize> = (0..pts.len().min(seeds)).collect();
    let mut out = grow_lattices(pts, &strongest, MAX_LATTICES, &[]);
    // A lattice running on well past a board's 9x9 corners is a checked tablecloth or floor,
    // and its corners may all be stronger than the board's: the strongest corners no lattice
    // so far explains seed more.
    if out.iter().any(Lattice::beyond_a_board) {
        for _ in 0..MORE_LATTICES {
            let free: Vec<usize> = (0..pts.len()).filter(|&i| !out.iter().any(|l| l.explains(pts[i].x, pts[i].y))).take(seeds).collect();
            if free.len() < 9 {
                break;
            }
            let more = grow_lattices(pts, &free, 1, &out);
            if more.is_empty() {
                break;
            }
            out.extend(more);
        }
    }
    out
}

/// Up to `max` lattices grown from the best hypotheses seeded at corners `seeds`, none the
/// same as one of `known`.
fn grow_lattices(pts: &[XPt], seeds: &[usize], max: usize, known: &[Lattice]) -> Vec<Lattice> {
    let n = pts.len();
    // Seed hypotheses: strong corner p + two near-orthogonal neighbours of similar
    // distance = affine lattice. Count corners near lattice nodes within 2 steps.
    let mut hyps: Vec<(usize, (f64, f64), (f64, f64), usize)> = Vec::new();
    for &si in seeds {
        let p = pts[si];
        let mut nb: Vec<(f64, usize)> = (0..n)
            .filter(|&j| j != si)
            .map(|j| ((pts[j].x - p.x).hypot(pts[j].y - p.y), j))
            .filter(|&(d, _)| d > 5.0)
            .collect();
        nb.sort_by(|a, b| a.0.total_cmp(&b.0));
        nb.truncate(6);
        for a in 0..nb.len() {
            for b in a + 1..nb.len() {
                let u = (pts[nb[a].1].x - p.x, pts[nb[a].1].y - p.y);
                let v = (pts[nb[b].1].x - p.x, pts[nb[b].1].y - p.y);
                let (lu, lv) = (nb[a].0, nb[b].0);
                if lu / lv > 1.5 || lv / lu > 1.5 {
                    continue;
                }
                let cos = (u.0 * v.0 + u.1 * v.1) / (lu * lv);
                if cos.abs() > 0.45 {
                    continue;
                }
                let cnt = count_affine(pts, (p.x, p.y), u, v, 2);
                hyps.push((si, u, v, cnt));
            }
        }
    }
    hyps.sort_by(|a, b| b.3.cmp(&a.3));
    let mut out: Vec<Lattice> = Vec::new();
    for &(si, u, v, cnt) in hyps.iter().take(12) {
        if cnt < 6 {
            break;
        }
        let p = pts[si];
        if let Some(l) = grow(pts, (p.x, p.y), u, v) {
            // Skip duplicates (same lattice found from another seed).
            let dup = known.iter().chain(&out).any(|o| {
                let c = h_apply(&l.h, 0.0, 0.0);
                let inv = match h_inv(&o.h) {
                    Some(i) => i,
                    None => return false,
                };
                let (a, b) = h_apply(&inv, c.0, c.1);
                (a - a.round()).abs() < 0.2 && (b - b.round()).abs() < 0.2 && o.nodes.len() >= l.nodes.len()
            });
            if !dup {
                out.push(l);
            }
        }
        if out.len() >= max {
            break;
        }
    }
    out
}

impl Lattice {
    /// Whether its supported corners span more than a board's 9 in a direction.
    fn beyond_a_board(&self) -> bool {
        let span = |f: fn(&(i32, i32)) -> i32| {
            let (lo, hi) = self.nodes.iter().map(f).fold((i32::MAX, i32::MIN), |(l, h), x| (l.min(x), h.max(x)));
            hi - lo + 1
        };
        span(|n| n.0) > 9 || span(|n| n.1) > 9
    }

    /// Whether image point (x, y) lies on this lattice's grid, near its supported corners.
    fn explains(&self, x: f64, y: f64) -> bool {
        let Some(inv) = h_inv(&self.h) else { return false };
        let (i, j) = h_apply(&inv, x, y);
        let (lo_i, hi_i) = self.nodes.iter().fold((i32::MAX, i32::MIN), |(l, h), n| (l.min(n.0), h.max(n.0)));
        let (lo_j, hi_j) = self.nodes.iter().fold((i32::MAX, i32::MIN), |(l, h), n| (l.min(n.1), h.max(n.1)));
        let near = |v: f64, lo: i32, hi: i32| v >= (lo - 12) as f64 && v <= (hi + 12) as f64;
        (i - i.round()).hypot(j - j.round()) < 0.15 && near(i, lo_i, hi_i) && near(j, lo_j, hi_j)
    }
}

fn count_affine(pts: &[XPt], p0: (f64, f64), u: (f64, f64), v: (f64, f64), rad: i32) -> usize {
    let det = u.0 * v.1 - u.1 * v.0;
    if det.abs() < 1e-6 {
        return 0;
    }
    let mut c = 0;
    for q in pts {
        let (dx, dy) = (q.x - p0.0, q.y - p0.1);
        let i = (dx * v.1 - dy * v.0) / det;
        let j = (u.0 * dy - u.1 * dx) / det;
        let (ri, rj) = (i.round(), j.round());
        if ri.abs() <= rad as f64 && rj.abs() <= rad as f64 && (i - ri).hypot(j - rj) < 0.15 {
            c += 1;
        }
    }
    c
}

/// Grow an affine seed into a projective lattice: assign integer coordinates to
/// corners near the predicted nodes, refit the homography, widen, repeat.
fn grow(pts: &[XPt], p0: (f64, f64), u: (f64, f64), v: (f64, f64)) -> Option<Lattice> {
    let mut h: H3 = [[u.0, v.0, p0.0], [u.1, v.1, p0.1], [0.0, 0.0, 1.0]];
    let mut nodes = Vec::new();
    for &(rad, tol) in &[(2, 0.2), (3, 0.2), (5, 0.18), (8, 0.15), (11, 0.15), (11, 0.12)] {
        let inv = h_inv(&h)?;
        let mut best: std::collections::BTreeMap<(i32, i32), (f64, usize)> = Default::default();
        for (k, q) in pts.iter().enumerate() {
            let (i, j) = h_apply(&inv, q.x, q.y);
            let (ri, rj) = (i.round(), j.round());
            let e = (i - ri).hypot(j - rj);
            if ri.abs() <= rad as f64 && rj.abs() <= rad as f64 && e < tol {
                let key = (ri as i32, rj as i32);
                if best.get(&key).map_or(true, |b| e < b.0) {
                    best.insert(key, (e, k));
                }
            }
        }
        if best.len() < 6 {
            return None;
        }
        let src: Vec<(f64, f64)> = best.keys().map(|&(i, j)| (i as f64, j as f64)).collect();
        let dst: Vec<(f64, f64)> = best.values().map(|&(_, k)| (pts[k].x, pts[k].y)).collect();
        let (nh, inl) = fit_h(&src, &dst, 1.5).ok()?;
        h = nh;
        nodes = best.keys().zip(inl).filter(|(_, ok)| *ok).map(|(k, _)| *k).collect();
    }
    Some(Lattice { h, nodes })
}

/// findChessboardCornersSB on the 7x7 inner corners, as a lattice.
fn sb_lattice(small: &Mat) -> Result<Option<Lattice>> {
    let mut corners = Mat::default();
    let flags = calib3d::CALIB_CB_NORMALIZE_IMAGE | calib3d::CALIB_CB_EXHAUSTIVE;
    let found = calib3d::find_chessboard_corners_sb(small, Size::new(7, 7), &mut corners, flags)?;
    if !found || corners.rows() * corners.cols() != 49 {
        return Ok(None);
    }
    let c = corners.data_typed::<Point2f>()?;
    let mut src = Vec::new();
    let mut dst = Vec::new();
    let mut nodes = Vec::new();
    for (k, p) in c.iter().enumerate() {
        let (i, j) = ((k % 7) as i32, (k / 7) as i32);
        src.push((i as f64, j as f64));
        dst.push((p.x as f64, p.y as f64));
        nodes.push((i, j));
    }
    let (h, _) = fit_h(&src, &dst, 0.0)?;
    Ok(Some(Lattice { h, nodes }))
}

// ---------------------------------------------------------------- scoring

#[derive(Debug, Clone, Copy)]
pub(crate) struct BoardScore {
    pub total: f32,
    /// Squares with (row+col) even are the light ones (kept for debugging).
    #[allow(dead_code)]
    pub even_light: bool,
}

/// Robust brightness of square (c, r) in board coords (may be outside 0..8):
/// median of 8 samples away from the square centre, where discs sit.
fn square_level(g: &GrayF, h: &dyn Fn(f64, f64) -> (f64, f64), c: i32, r: i32) -> Option<f32> {
    const OFF: [(f64, f64); 8] =
        [(0.12, 0.12), (0.88, 0.12), (0.12, 0.88), (0.88, 0.88), (0.5, 0.1), (0.5, 0.9), (0.1, 0.5), (0.9, 0.5)];
    let mut v = [0f32; 8];
    for (k, (du, dv)) in OFF.iter().enumerate() {
        let (x, y) = h(c as f64 + du, r as f64 + dv);
        v[k] = g.sample(x, y)?;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    Some(0.5 * (v[3] + v[4]))
}

/// Score an 8x8 board hypothesis (board coords -> small image px).
/// total = mean alternation inside + weakest border strip inside
///         - alternation continuing outside (+ small bonus terms elsewhere).
pub(crate) fn score_board(g: &GrayF, h: &H3) -> BoardScore {
    score_board_by(g, &|u, v| h_apply(h, u, v))
}

/// [`score_board`] of a location seen through a lens: `small_px` scales full-resolution
/// pixels to the small image's.
fn score_location(g: &GrayF, h_full: &H3, lens: Lens, size: (i32, i32), small_px: f64) -> BoardScore {
    score_board_by(g, &|u, v| {
        let (x, y) = h_apply(h_full, u, v);
        let (x, y) = lens.distort(size, x, y);
        (x * small_px, y * small_px)
    })
}

/// [`score_board`] with any map from board coordinates to small-image px.
fn score_board_by(g: &GrayF, h: &dyn Fn(f64, f64) -> (f64, f64)) -> BoardScore {
    let bad = BoardScore { total: -10.0, even_light: true };
    // Reject hypotheses with a tiny or wildly distorted footprint.
    let c: Vec<(f64, f64)> = [(0.0, 0.0), (8.0, 0.0), (8.0, 8.0), (0.0, 8.0)].iter().map(|&(u, v)| h(u, v)).collect();
    let side: Vec<f64> = (0..4).map(|k| (c[k].0 - c[(k + 1) % 4].0).hypot(c[k].1 - c[(k + 1) % 4].1)).collect();
    let (mn, mx) = (side.iter().cloned().fold(f64::MAX, f64::min), side.iter().cloned().fold(0.0, f64::max));
    if mn < 40.0 || mx / mn > 3.0 {
        return bad;
    }
    let mut m = [[0f32; 8]; 8];
    for r in 0..8 {
        for cc in 0..8 {
            match square_level(g, h, cc, r) {
                Some(v) => m[r as usize][cc as usize] = v,
                None => return bad,
            }
        }
    }
    let (mut se, mut so, mut ne, mut no) = (0f32, 0f32, 0f32, 0f32);
    for r in 0..8 {
        for cc in 0..8 {
            if (r + cc) % 2 == 0 {
                se += m[r][cc];
                ne += 1.0;
            } else {
                so += m[r][cc];
                no += 1.0;
            }
        }
    }
    let (me, mo) = (se / ne, so / no);
    let even_light = me > mo;
    let k = (me - mo).abs();
    if k < 8.0 {
        return BoardScore { total: -5.0, even_light };
    }
    let mid = 0.5 * (me + mo);
    // s(r,c) = +1 where the square should be light.
    let sgn = |r: i32, c: i32| -> f32 {
        if ((r + c).rem_euclid(2) == 0) == even_light {
            1.0
        } else {
            -1.0
        }
    };
    // Alternation amplitude of a strip of squares: 1 = perfect continuation of the
    // board's pattern, 0 = uniform, clipped per square so glare can't dominate.
    // Outside the window, squares off the image are left out: a strip counts from 3 squares in
    // view (a lattice running on past the window, a checked tablecloth, shows within a few).
    let alt = |cells: &[(i32, i32)]| -> Option<f32> {
        let (mut s, mut n) = (0.0, 0);
        for &(r, c) in cells {
            let v = if (0..8).contains(&r) && (0..8).contains(&c) {
                m[r as usize][c as usize]
            } else {
                match square_level(g, h, c, r) {
                    Some(v) => v,
                    None => continue,
                }
            };
            s += (sgn(r, c) * (v - mid) / (0.5 * k)).clamp(-1.5, 1.5);
            n += 1;
        }
        (n >= 3).then(|| s / n as f32)
    };
    let row = |r: i32| -> Vec<(i32, i32)> { (0..8).map(|c| (r, c)).collect() };
    let col = |c: i32| -> Vec<(i32, i32)> { (0..8).map(|r| (r, c)).collect() };
    let mut inner = 0.0;
    for r in 0..8 {
        inner += alt(&row(r)).unwrap_or(0.0);
    }
    inner /= 8.0;
    let border_in = [alt(&row(0)), alt(&row(7)), alt(&col(0)), alt(&col(7))];
    let min_in = border_in.iter().map(|x| x.unwrap_or(0.0)).fold(f32::MAX, f32::min);
    // Outside strips: missing (off-image) counts as not continuing.
    let outside = [alt(&row(-1)), alt(&row(8)), alt(&col(-1)), alt(&col(8))];
    let out_pen: f32 = outside.iter().map(|x| x.unwrap_or(0.0).max(0.0)).sum();
    BoardScore { total: inner.min(1.2) + min_in.min(1.2) - 0.7 * out_pen, even_light }
}

/// Try every 8x8 window of the lattice and return (board->small H, score).
fn best_extent(g: &GrayF, lat: &Lattice) -> Option<(H3, f32)> {
    let imin = lat.nodes.iter().map(|n| n.0).min()?;
    let imax = lat.nodes.iter().map(|n| n.0).max()?;
    let jmin = lat.nodes.iter().map(|n| n.1).min()?;
    let jmax = lat.nodes.iter().map(|n| n.1).max()?;
    let set: std::collections::HashSet<(i32, i32)> = lat.nodes.iter().cloned().collect();
    let mut best: Option<(H3, f32)> = None;
    // Window [i0, i0+8]: its inner corners i0+1..i0+7 must overlap the nodes.
    for i0 in (imin - 7)..=(imax - 1) {
        for j0 in (jmin - 7)..=(jmax - 1) {
            let support = (1..8)
                .flat_map(|a| (1..8).map(move |b| (a, b)))
                .filter(|&(a, b)| set.contains(&(i0 + a, j0 + b)))
                .count();
            if support < 12 {
                continue;
            }
            let t: H3 = [[1.0, 0.0, i0 as f64], [0.0, 1.0, j0 as f64], [0.0, 0.0, 1.0]];
            let hb = h_mul(&lat.h, &t);
            let s = score_board(g, &hb);
            let total = s.total + 0.5 * support as f32 / 49.0;
            if best.as_ref().map_or(true, |b| total > b.1) {
                best = Some((hb, total));
            }
        }
    }
    best
}

// ---------------------------------------------------------------- geometry

/// Sort 4 points into TL, TR, BR, BL as they appear in the image: clockwise on
/// screen (y down), starting with the one nearest the image's top-left.
pub(crate) fn sort_corners(p: &[(f64, f64)]) -> [(f64, f64); 4] {
    let cx = p.iter().map(|q| q.0).sum::<f64>() / 4.0;
    let cy = p.iter().map(|q| q.1).sum::<f64>() / 4.0;
    let mut v: Vec<(f64, f64)> = p.to_vec();
    v.sort_by(|a, b| (a.1 - cy).atan2(a.0 - cx).total_cmp(&(b.1 - cy).atan2(b.0 - cx)));
    let tl = (0..4).min_by(|&a, &b| (v[a].0 + v[a].1).total_cmp(&(v[b].0 + v[b].1))).unwrap_or(0);
    [v[tl], v[(tl + 1) % 4], v[(tl + 2) % 4], v[(tl + 3) % 4]]
}

fn h_from_4(c: &[(f64, f64); 4]) -> Result<H3> {
    let src = [(0.0, 0.0), (8.0, 0.0), (8.0, 8.0), (0.0, 8.0)];
    let (h, _) = fit_h(&src, c, 0.0)?;
    Ok(h)
}

/// Re-express a board homography so that board (0,0) is the TL corner in the
/// image, (8,0) TR, etc. (the lattice may come out rotated or mirrored).
fn canonical(h: &H3) -> Result<H3> {
    let corners: Vec<(f64, f64)> = [(0.0, 0.0), (8.0, 0.0), (8.0, 8.0), (0.0, 8.0)].iter().map(|&(u, v)| h_apply(h, u, v)).collect();
    let sorted = sort_corners(&corners);
    // Find the board-coordinate symmetry that maps the sorted corners back, and
    // compose so inner structure (not just the 4 corners) is preserved exactly.
    let board: Vec<(f64, f64)> = sorted
        .iter()
        .map(|p| {
            let k = corners.iter().position(|q| q == p).unwrap_or(0);
            [(0.0, 0.0), (8.0, 0.0), (8.0, 8.0), (0.0, 8.0)][k]
        })
        .collect();
    // g: canonical board -> original board coords (an exact square symmetry).
    let (g, _) = fit_h(&[(0.0, 0.0), (8.0, 0.0), (8.0, 8.0), (0.0, 8.0)], &board, 0.0)?;
    let mut g = g;
    for row in g.iter_mut() {
        for v in row.iter_mut() {
            *v = (*v * 8.0).round() / 8.0;
        }
    }
    Ok(h_mul(h, &g))
}

/// A lattice refined at full resolution, with the inner corners it was fitted to: lattice
/// points and where they were measured in the image.
struct Refined {
    h: H3,
    lens: Lens,
    board: Vec<(f64, f64)>,
    image: Vec<(f64, f64)>,
}

impl Refined {
    /// Median distance (px) of the measured corners from where the lattice `h` seen through
    /// `lens` puts them: how well a lattice explains the corners, robust to the few a man's
    /// rim pulled aside.
    fn median_miss(&self, h: &H3, lens: Lens, size: (i32, i32)) -> f64 {
        let mut miss: Vec<f64> = self
            .board
            .iter()
            .zip(&self.image)
            .map(|(&(u, v), &(x, y))| {
                let (px, py) = h_apply(h, u, v);
                let (px, py) = lens.distort(size, px, py);
                (px - x).hypot(py - y)
            })
            .collect();
        miss.sort_by(f64::total_cmp);
        miss.get(miss.len() / 2).copied().unwrap_or(f64::MAX)
    }
}

/// Refine a board homography (board -> distortion-free full-res px) by sub-pixel corner search
/// on the 49 inner corners and a RANSAC fit. The corners are looked for where `lens` puts them;
/// with `fit_lens_too` the lens is measured again on them (a found board), else it is kept (a
/// board followed from frame to frame: the camera's lens does not change, and measuring it
/// costs about a millisecond).
fn refine_full(gray: &Mat, h: &H3, lens: Lens, fit_lens_too: bool) -> Option<Refined> {
    let size = (gray.cols(), gray.rows());
    let at = |u: f64, v: f64| {
        let (x, y) = h_apply(h, u, v);
        lens.distort(size, x, y)
    };
    let sq = {
        let a = at(3.0, 4.0);
        let b = at(5.0, 4.0);
        let c = at(4.0, 3.0);
        let d = at(4.0, 5.0);
        0.25 * ((a.0 - b.0).hypot(a.1 - b.1) + (c.0 - d.0).hypot(c.1 - d.1))
    };
    let win = ((sq * 0.18).round() as i32).clamp(2, 20);
    let (w, hh) = (gray.cols() as f64, gray.rows() as f64);
    let mut src = Vec::new();
    let mut pts: Vector<Point2f> = Vector::new();
    for j in 1..8 {
        for i in 1..8 {
            let (x, y) = at(i as f64, j as f64);
            if x < (win + 2) as f64 || y < (win + 2) as f64 || x > w - (win + 3) as f64 || y > hh - (win + 3) as f64 {
                continue;
            }
            src.push((i as f64, j as f64));
            pts.push(Point2f::new(x as f32, y as f32));
        }
    }
    if src.len() < 12 {
        return None;
    }
    let before = pts.clone();
    let crit = TermCriteria::new(core::TermCriteria_COUNT + core::TermCriteria_EPS, 30, 0.01).ok()?;
    imgproc::corner_sub_pix(gray, &mut pts, Size::new(win, win), Size::new(-1, -1), crit).ok()?;
    // Drop corners that wandered off (occluded / glare): they would bias the fit.
    let mut s2 = Vec::new();
    let mut d2 = Vec::new();
    for k in 0..src.len() {
        let (a, b) = (before.get(k).ok()?, pts.get(k).ok()?);
        if ((a.x - b.x) as f64).hypot((a.y - b.y) as f64) < 0.2 * sq {
            s2.push(src[k]);
            d2.push((b.x as f64, b.y as f64));
        }
    }
    if s2.len() < 12 {
        return None;
    }
    let ransac_px = (0.04 * sq).max(1.0);
    let (_, inl) = fit_h(&s2, &d2, ransac_px).ok()?;
    if inl.iter().filter(|x| **x).count() < 12 {
        return None;
    }
    let lens = if fit_lens_too { fit_lens(size, &s2, &d2, &inl, sq) } else { lens };
    let flat: Vec<(f64, f64)> = d2.iter().map(|&(x, y)| lens.undistort(size, x, y)).collect();
    let (nh, inl) = fit_h(&s2, &flat, ransac_px).ok()?;
    if inl.iter().filter(|x| **x).count() < 12 {
        return None;
    }
    Some(Refined { h: nh, lens, board: s2, image: d2 })
}

/// The lens under which the found inner corners (`img`, of lattice points `board`; `inlier`
/// says which to trust) lie best on one projective lattice. Kept at none unless it explains
/// the corners clearly better (a flat, undistorted view must not pick up a lens from noise),
/// and only with corners spread over most of the board (a distortion is told by its curve).
fn fit_lens(size: (i32, i32), board: &[(f64, f64)], img: &[(f64, f64)], inlier: &[bool], square_px: f64) -> Lens {
    let (b, d): (Vec<(f64, f64)>, Vec<(f64, f64)>) =
        board.iter().zip(img).zip(inlier).filter(|(_, &ok)| ok).map(|((b, d), _)| (*b, *d)).unzip();
    let spread = |k: usize| b.iter().map(|p| if k == 0 { p.0 } else { p.1 }).fold((f64::MAX, f64::MIN), |m, v| (m.0.min(v), m.1.max(v)));
    let ((u0, u1), (v0, v1)) = (spread(0), spread(1));
    if b.len() < 25 || u1 - u0 < 4.0 || v1 - v0 < 4.0 {
        return Lens::default();
    }
    // Mean squared distance of the corners from the lattice fitted through them at `k1`.
    let residual = |k1: f64| -> f64 {
        let lens = Lens { k1 };
        let flat: Vec<(f64, f64)> = d.iter().map(|&(x, y)| lens.undistort(size, x, y)).collect();
        let Ok((h, _)) = fit_h(&b, &flat, 0.0) else { return f64::MAX };
        b.iter()
            .zip(&d)
            .map(|(&(u, v), &(x, y))| {
                let (px, py) = h_apply(&h, u, v);
                let (px, py) = lens.distort(size, px, py);
                (px - x).powi(2) + (py - y).powi(2)
            })
            .sum::<f64>()
            / b.len() as f64
    };
    // Golden-section search: the residual is unimodal in k1 over the lenses of real cameras.
    let (mut lo, mut hi) = (-LENS_K1_MAX, LENS_K1_MAX);
    let phi = (5f64.sqrt() - 1.0) / 2.0;
    let (mut x1, mut x2) = (hi - phi * (hi - lo), lo + phi * (hi - lo));
    let (mut f1, mut f2) = (residual(x1), residual(x2));
    for _ in 0..24 {
        if f1 < f2 {
            hi = x2;
            (x2, f2) = (x1, f1);
            x1 = hi - phi * (hi - lo);
            f1 = residual(x1);
        } else {
            lo = x1;
            (x1, f1) = (x2, f2);
            x2 = lo + phi * (hi - lo);
            f2 = residual(x2);
        }
    }
    let k1 = 0.5 * (lo + hi);
    let (flat, bent) = (residual(0.0), residual(k1));
    tracing::debug!("lens fit: k1 {k1:.3}, mean squared error {bent:.3} px² against {flat:.3} flat, {} corners", b.len());
    // A barrel lens is kept when it explains the corners' bend beyond their noise (an F-test of
    // the one more parameter: 2n coordinates, 9 fitted); a pincushion only when it explains
    // most of the flat lattice's error, which must be more than sub-pixel noise (0.005 square).
    let dof = (2 * b.len()) as f64 - 9.0;
    let significance = if bent > 0.0 { (flat - bent) * dof / bent } else { f64::MAX };
    let kept = if k1 < 0.0 { significance >= BARREL_LENS_F } else { bent < LENS_RATIO * flat && flat > (0.005 * square_px).powi(2) };
    if kept {
        Lens { k1 }
    } else {
        Lens::default()
    }
}

/// The strongest distortion looked for (in half-diagonals; a fisheye is beyond this).
const LENS_K1_MAX: f64 = 0.4;

/// How much of the flat lattice's squared error a lens must explain to be kept. Real photos
/// (a phone's, at 77 px a square) leave 0.47-0.66 of it from corner noise and a board that is
/// not quite flat: a lens fitted to that bent the edge squares and misread one more square of
/// the 25 photos; a true wide-angle lens leaves well under a third.
const LENS_RATIO: f64 = 0.4;

/// A barrel lens (k1 below zero: the wide-angle lenses of webcams) is kept when the F statistic
/// of its one parameter reaches this (noise alone: about 1 in 500 fits). On a small or steeply
/// tilted board crowded with men the bend is not much larger than the corners' noise, and yet,
/// ignored, it puts the outer corners a tenth of a square out. The photos' warped board reads as
/// a pincushion, which keeps `LENS_RATIO`.
const BARREL_LENS_F: f64 = 10.0;

/// How well a rectified board still shows the checker pattern where the cached
/// homography says the squares are: the cheap per-frame check of a kept
/// location (about 0.1 ms at 512x512).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct PatternCheck {
    /// Median light square minus median dark square (grey levels), sampled
    /// close to the squares' corners.
    pub contrast: f32,
    /// Fraction of the 64 squares whose corners are on the right side of the
    /// light/dark midpoint. About 1 when aligned; a shift of ~0.1 square or
    /// more puts the samples into the neighbouring squares and drops it
    /// towards 0.5. Hands and pieces cover square centres, not corners, so it
    /// stays high while people play.
    pub aligned: f32,
    /// Whether the top-left square is the dark one.
    pub top_left_dark: bool,
}

/// Check a rectified board (`rectify::RECT_SIZE` square, BGR or grey).
pub fn check_location(rect: &Mat) -> Result<PatternCheck> {
    use super::rectify::RECT_SIZE;
    if rect.rows() != RECT_SIZE || rect.cols() != RECT_SIZE {
        return Err(VisionError::BadImage(format!("check_location needs a {RECT_SIZE}x{RECT_SIZE} rectified image")));
    }
    let in_grey = check_pattern(&to_gray(rect)?)?;
    // As for finding the board: a board whose squares differ in hue more than in brightness
    // is checked in each pixel's brightest channel too, when grey leaves any square in doubt,
    // and judged there if more of its squares alternate there.
    if in_grey.aligned < 1.0 && rect.channels() >= 3 {
        let in_value = check_pattern(&to_value(rect)?)?;
        if in_value.aligned > in_grey.aligned {
            return Ok(in_value);
        }
    }
    Ok(in_grey)
}

/// [`check_location`] in one grey image of the rectified board.
fn check_pattern(gray: &Mat) -> Result<PatternCheck> {
    use super::rectify::{RECT_SIZE, SQUARE_PX};
    let gray = if gray.is_continuous() { gray.clone() } else { gray.try_clone()? };
    let d = gray.data_bytes()?;
    let n = RECT_SIZE as usize;
    let sq = SQUARE_PX as usize;
    // Per square: median of four 4x4 patches 3..7 px in from its corners.
    let mut level = [[0f32; 8]; 8];
    let mut v: Vec<u8> = Vec::with_capacity(64);
    for r in 0..8 {
        for c in 0..8 {
            v.clear();
            for &(ox, oy) in &[(3usize, 3usize), (sq - 7, 3), (3, sq - 7), (sq - 7, sq - 7)] {
                for y in r * sq + oy..r * sq + oy + 4 {
                    for x in c * sq + ox..c * sq + ox + 4 {
                        v.push(d[y * n + x]);
                    }
                }
            }
            let k = v.len() / 2;
            v.select_nth_unstable(k);
            level[r][c] = v[k] as f32;
        }
    }
    let (mut even, mut odd): (Vec<f32>, Vec<f32>) = (Vec::with_capacity(32), Vec::with_capacity(32));
    for r in 0..8 {
        for c in 0..8 {
            if (r + c) % 2 == 0 { even.push(level[r][c]) } else { odd.push(level[r][c]) }
        }
    }
    let med = |x: &mut Vec<f32>| {
        let k = x.len() / 2;
        x.select_nth_unstable_by(k, |a, b| a.total_cmp(b));
        x[k]
    };
    let (me, mo) = (med(&mut even), med(&mut odd));
    let mid = 0.5 * (me + mo);
    let even_light = me > mo;
    let mut ok = 0;
    for r in 0..8 {
        for c in 0..8 {
            let light = ((r + c) % 2 == 0) == even_light;
            if (level[r][c] > mid) == light {
                ok += 1;
            }
        }
    }
    Ok(PatternCheck { contrast: (me - mo).abs(), aligned: ok as f32 / 64.0, top_left_dark: !even_light })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A flat board of 60 px squares from (160, 60) to (640, 540) on a brown table, its squares
    /// red and a grey exactly as bright as that red to the eye's grey.
    fn red_and_black_board() -> Mat {
        let mut img = Mat::new_rows_cols_with_default(600, 800, core::CV_8UC3, core::Scalar::new(30.0, 90.0, 140.0, 0.0)).unwrap();
        for r in 0..8 {
            for c in 0..8 {
                let colour = if (r + c) % 2 == 0 { core::Scalar::new(0.0, 0.0, 200.0, 0.0) } else { core::Scalar::new(60.0, 60.0, 60.0, 0.0) };
                let square = core::Rect::new(160 + 60 * c, 60 + 60 * r, 60, 60);
                imgproc::rectangle(&mut img, square, colour, imgproc::FILLED, imgproc::LINE_8, 0).unwrap();
            }
        }
        img
    }

    #[test]
    fn a_board_whose_squares_differ_in_hue_not_brightness_is_found_and_checked() {
        let img = red_and_black_board();
        assert!(locate_board_in(to_gray(&img).unwrap(), None).is_err(), "in grey the squares are all alike");
        let loc = locate_board(&img, None).expect("found in the brightest channel");
        let truth = [[160.0, 60.0], [640.0, 60.0], [640.0, 540.0], [160.0, 540.0]];
        for (found, real) in loc.corners.iter().zip(truth) {
            // Pixel edges: the corner of a filled square lies half a pixel before its first pixel.
            assert!((found[0] - real[0] + 0.5).abs() < 1.5 && (found[1] - real[1] + 0.5).abs() < 1.5, "{:?}", loc.corners);
        }
        let check = check_location(&super::super::rectify::rectify(&img, &loc).unwrap()).unwrap();
        assert!(check.aligned > 0.95, "{check:?}");
        // Following it from frame to frame keeps it.
        let again = locate_board(&img, Some(&loc)).unwrap();
        assert!(again.corners.iter().zip(loc.corners).all(|(a, b)| (a[0] - b[0]).abs() < 1.0 && (a[1] - b[1]).abs() < 1.0));
    }

    #[test]
    fn a_slight_barrel_lens_on_a_small_board_is_kept_and_a_slight_pincushion_is_not() {
        // A board of 40 px squares in a corner of the picture, the corners found with a third
        // of a pixel of noise: the lens bends them by little more than that.
        let size = (1280, 720);
        let h: H3 = [[40.0, 4.0, 120.0], [-3.0, 38.0, 60.0], [0.00002, 0.00001, 1.0]];
        let board: Vec<(f64, f64)> = (1..8).flat_map(|j| (1..8).map(move |i| (i as f64, j as f64))).collect();
        let mut state = 12345u64;
        let mut noise = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 33) as f64 / (1u64 << 31) as f64 - 0.5) * 0.9
        };
        let noise: Vec<(f64, f64)> = board.iter().map(|_| (noise(), noise())).collect();
        let found = |k1: f64| {
            let lens = Lens { k1 };
            let img: Vec<(f64, f64)> = board
                .iter()
                .zip(&noise)
                .map(|(&(u, v), &(nx, ny))| {
                    let (x, y) = h_apply(&h, u, v);
                    let (x, y) = lens.distort(size, x, y);
                    (x + nx, y + ny)
                })
                .collect();
            fit_lens(size, &board, &img, &vec![true; board.len()], 40.0).k1
        };
        let barrel = found(-0.05);
        assert!(barrel < -0.03, "barrel lens found {barrel}");
        assert_eq!(found(0.06), 0.0, "a pincushion this slight is a warped board, not a lens");
    }

    /// Points of a lattice seen through a lens: the fit finds the lens back, and a flat
    /// lattice gets none.
    #[test]
    fn the_lens_is_told_by_the_bend_of_the_inner_corners() {
        let size = (1280, 720);
        let h: H3 = [[75.0, 6.0, 300.0], [-5.0, 72.0, 20.0], [0.00002, 0.00001, 1.0]];
        let board: Vec<(f64, f64)> = (1..8).flat_map(|j| (1..8).map(move |i| (i as f64, j as f64))).collect();
        for k1 in [-0.12, 0.0, 0.08] {
            let lens = Lens { k1 };
            let img: Vec<(f64, f64)> = board
                .iter()
                .map(|&(u, v)| {
                    let (x, y) = h_apply(&h, u, v);
                    let back = lens.undistort(size, lens.distort(size, x, y).0, lens.distort(size, x, y).1);
                    assert!((back.0 - x).abs() < 1e-6 && (back.1 - y).abs() < 1e-6, "undistort inverts distort");
                    lens.distort(size, x, y)
                })
                .collect();
            let found = fit_lens(size, &board, &img, &vec![true; board.len()], 72.0);
            assert!((found.k1 - k1).abs() < 0.01, "k1 {k1}: found {}", found.k1);
        }
    }
}
