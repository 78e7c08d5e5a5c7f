//! Warp the playing area to a square, unrotated image.
//!
//! Also: where piece tops appear in oblique views (`CameraPose`), which way the
//! board is turned (`orientation`), and the mapping of image-grid readings to
//! board coordinates (`BoardFrame`, `to_board_coordinates`).
use super::classify::{BoardReading, LeanOffsets, ColourClass};
use super::{h_mul, h_to_mat, locate::BoardLocation, palette, Orientation, Result, Side, VisionError, H3};
use opencv::core::{self, Mat, Scalar, Size};
use opencv::imgproc;
use opencv::prelude::*;

/// Pixels per square in the rectified image. 64 keeps a disc ~35 px across,
/// plenty for colour and ring texture, while a warp stays ~1 ms.
pub const SQUARE_PX: i32 = 64;
pub const RECT_SIZE: i32 = 8 * SQUARE_PX;

/// Rectified image (RECT_SIZE x RECT_SIZE, same type as `img`): square (row r,
/// col c) covers x in [64c, 64c+64), y in [64r, 64r+64). No rotation is applied:
/// its top-left is `loc.corners[0]`.
pub fn rectify(img: &Mat, loc: &BoardLocation) -> Result<Mat> {
    if img.empty() {
        return Err(VisionError::BadImage("empty".into()));
    }
    if (img.cols(), img.rows()) != loc.image_size {
        return Err(VisionError::BadImage(format!(
            "image is {}x{} but location is for {}x{}",
            img.cols(),
            img.rows(),
            loc.image_size.0,
            loc.image_size.1
        )));
    }
    if loc.lens.k1 != 0.0 {
        return rectify_through_lens(img, loc);
    }
    let s = 1.0 / SQUARE_PX as f64;
    let rect_to_board: H3 = [[s, 0.0, 0.0], [0.0, s, 0.0], [0.0, 0.0, 1.0]];
    // dst(x,y) = src(M * (x,y)) with WARP_INVERSE_MAP: M maps rectified -> image.
    let m = h_to_mat(&h_mul(&loc.h_board_to_img, &rect_to_board))?;
    let mut out = Mat::default();
    imgproc::warp_perspective(
        img,
        &mut out,
        &m,
        Size::new(RECT_SIZE, RECT_SIZE),
        imgproc::INTER_LINEAR | imgproc::WARP_INVERSE_MAP,
        core::BORDER_REPLICATE,
        Scalar::default(),
    )?;
    Ok(out)
}

/// Pixels between the samples of the lens-corrected warp's map.
const MAP_STEP: i32 = 8;

/// The warp of a location seen through a distorting lens: no homography maps the image to
/// the board then, so a map of where every rectified pixel comes from is remapped. The map
/// is computed every `MAP_STEP` pixels (with one sample of margin around the board) and
/// resized up: the lens and the perspective bend it smoothly, and this costs a fraction of
/// computing all 262,144 points.
fn rectify_through_lens(img: &Mat, loc: &BoardLocation) -> Result<Mat> {
    let n = RECT_SIZE / MAP_STEP + 2;
    let mut coarse = Mat::new_rows_cols_with_default(n, n, core::CV_32FC2, Scalar::default())?;
    for j in 0..n {
        for i in 0..n {
            // `resize` puts coarse sample i at fine pixel MAP_STEP * (i - 1) + (MAP_STEP - 1) / 2
            // of the enlarged map, i.e. rectified pixel MAP_STEP * (i - 1) + (MAP_STEP - 1) / 2
            // once the margin of MAP_STEP pixels is cut off.
            let q = |k: i32| (MAP_STEP * (k - 1)) as f64 + (MAP_STEP - 1) as f64 / 2.0;
            let (x, y) = loc.board_to_image(q(i) / SQUARE_PX as f64, q(j) / SQUARE_PX as f64);
            *coarse.at_2d_mut::<core::Vec2f>(j, i)? = core::Vec2f::from([x as f32, y as f32]);
        }
    }
    let mut fine = Mat::default();
    imgproc::resize(&coarse, &mut fine, Size::new(n * MAP_STEP, n * MAP_STEP), 0.0, 0.0, imgproc::INTER_LINEAR)?;
    let map = Mat::roi(&fine, core::Rect::new(MAP_STEP, MAP_STEP, RECT_SIZE, RECT_SIZE))?;
    let mut out = Mat::default();
    imgproc::remap(img, &mut out, &map, &core::no_array(), imgproc::INTER_LINEAR, core::BORDER_REPLICATE, Scalar::default())?;
    Ok(out)
}

// ---------------------------------------------------------------- lean of piece tops

/// How strongly the focal length is pulled towards a normal camera's (`CameraPose::from_location`):
/// the sum of squared constraint coefficients at which the homography's own estimate and the
/// prior count the same.
const FOCAL_PRIOR_WEIGHT: f64 = 3e-5;

/// Where the camera is, seen from the board: its centre in board units
/// (squares; x right, y down in the rectified image, z towards the camera),
/// estimated from the homography with square pixels, the principal point in the
/// image centre and a focal length from the homography's own constraints, pulled
/// towards a normal camera's (about the image width) as far as the view is too
/// frontal to tell.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct CameraPose {
    pub centre: [f64; 3],
    pub focal_px: f64,
}

impl CameraPose {
    pub fn from_location(loc: &BoardLocation) -> Option<CameraPose> {
        let h = &loc.h_board_to_img;
        let (w, hh) = (loc.image_size.0 as f64, loc.image_size.1 as f64);
        let (cx, cy) = (w / 2.0, hh / 2.0);
        // Columns of H with the principal point removed.
        let col = |i: usize| (h[0][i] - cx * h[2][i], h[1][i] - cy * h[2][i], h[2][i]);
        let (a1, b1, c1) = col(0);
        let (a2, b2, c2) = col(1);
        // The focal length from r1.r2 = 0 and |r1| = |r2|, in the unknown u = (F/f)^2 where F,
        // about the image width, is a normal camera's focal length: each constraint reads
        // A u + B = 0, A from the columns' image parts (in units of F), B from their perspective
        // parts, both divided by the columns' squared length so that they do not depend on the
        // homography's scale. A view straight down has A and B near zero: the constraints say
        // almost nothing and a corner found half a pixel off moves the least-squares answer
        // anywhere (phone photos of one board, one phone, gave 500 to 2,400 px). So the answer
        // is the least squares with a prior pull towards F: weight FOCAL_PRIOR_WEIGHT against
        // sum(A^2), which is 1e-4 to 1e-1 in views tilted 10 to 35 degrees (the estimate rules)
        // and 1e-6 to 1e-4 in photos taken from almost straight above (the prior does).
        let default_f = w.max(hh);
        let scale = (a1 * a1 + b1 * b1 + a2 * a2 + b2 * b2) / (2.0 * default_f * default_f);
        let constraints = [(a1 * a2 + b1 * b2, c1 * c2), (a1 * a1 + b1 * b1 - a2 * a2 - b2 * b2, c1 * c1 - c2 * c2)]
            .map(|(a, b)| (a / (default_f * default_f * scale), b / scale));
        let (saa, sab) = constraints.iter().fold((0.0, 0.0), |acc, &(a, b)| (acc.0 + a * a, acc.1 + a * b));
        // A plausible lens only, 0.3 to 4 times F: four corners that no such camera could have
        // seen (a drawn quadrilateral, a corner found on the frame) say nothing of the lens.
        let plausible = |u: f64| u.is_finite() && (1.0 / 16.0..=1.0 / 0.09).contains(&u);
        let f = if scale > 0.0 && plausible(-sab / saa) { default_f / ((FOCAL_PRIOR_WEIGHT - sab) / (saa + FOCAL_PRIOR_WEIGHT)).sqrt() } else { default_f };
        let m = |i: usize| {
            let (a, b, c) = col(i);
            [a / f, b / f, c]
        };
        let (m1, m2, m3) = (m(0), m(1), m(2));
        let norm = |v: [f64; 3]| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        let s = 2.0 / (norm(m1) + norm(m2));
        if !s.is_finite() {
            return None;
        }
        let sgn = if m3[2] * s > 0.0 { 1.0 } else { -1.0 };
        let l = s * sgn;
        let r1 = [m1[0] * l, m1[1] * l, m1[2] * l];
        let r2 = [m2[0] * l, m2[1] * l, m2[2] * l];
        let t = [m3[0] * l, m3[1] * l, m3[2] * l];
        let r3 = [r1[1] * r2[2] - r1[2] * r2[1], r1[2] * r2[0] - r1[0] * r2[2], r1[0] * r2[1] - r1[1] * r2[0]];
        // C = -R^T t, R = [r1 r2 r3] as columns.
        let dot = |a: [f64; 3], b: [f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
        let centre = [-dot(r1, t), -dot(r2, t), -dot(r3, t)];
        if centre.iter().any(|v| !v.is_finite()) {
            return None;
        }
        Some(CameraPose { centre, focal_px: f })
    }

    /// Offset (rectified px) at which the top of a piece `height` squares tall
    /// standing at the centre of each square appears: the point of the board
    /// plane on the camera ray through the top, minus the square centre.
    pub fn lean(&self, height: f64) -> LeanOffsets {
        let [x, y, z] = self.centre;
        let z = z.abs();
        let mut out = [[(0f32, 0f32); 8]; 8];
        if z <= height + 1e-6 || height <= 0.0 {
            return out;
        }
        let k = height / (z - height);
        for (r, row) in out.iter_mut().enumerate() {
            for (c, o) in row.iter_mut().enumerate() {
                let (u, v) = (c as f64 + 0.5, r as f64 + 0.5);
                *o = (((u - x) * k * SQUARE_PX as f64) as f32, ((v - y) * k * SQUARE_PX as f64) as f32);
            }
        }
        out
    }
}

// ---------------------------------------------------------------- orientation

/// Which way the board is turned. The light/dark pattern gives the parity
/// (which corner is dark) for certain; which side White plays from is only
/// certain in a start position, otherwise it is guessed from where the light
/// men are on average (weak, and wrong late in a game).
pub fn orientation(reading: &BoardReading) -> Orientation {
    use ColourClass as C;
    let g = &reading.squares;
    let is = |r: usize, c: usize, k: C| {
        let s = g[r][c].class;
        match k {
            C::DarkMan => matches!(s, C::DarkMan | C::DarkKing),
            C::LightMan => matches!(s, C::LightMan | C::LightKing),
            _ => s == k,
        }
    };
    if let Some(side) = start_position_side(reading) {
        return Orientation { top_left_dark: reading.top_left_dark, white_home: Some(side), white_home_confidence: 1.0 };
    }
    // Otherwise: mean position of light men minus that of dark men.
    let (mut n, mut rw, mut cw, mut m, mut rb, mut cb) = (0.0f32, 0.0f32, 0.0f32, 0.0f32, 0.0f32, 0.0f32);
    for r in 0..8 {
        for c in 0..8 {
            if is(r, c, C::LightMan) {
                n += 1.0;
                rw += r as f32;
                cw += c as f32;
            } else if is(r, c, C::DarkMan) {
                m += 1.0;
                rb += r as f32;
                cb += c as f32;
            }
        }
    }
    if n < 1.0 || m < 1.0 {
        return Orientation { top_left_dark: reading.top_left_dark, white_home: None, white_home_confidence: 0.0 };
    }
    let (dr, dc) = (rw / n - rb / m, cw / n - cb / m);
    let (side, d) = if dr.abs() >= dc.abs() {
        (if dr < 0.0 { Side::Top } else { Side::Bottom }, dr.abs())
    } else {
        (if dc < 0.0 { Side::Left } else { Side::Right }, dc.abs())
    };
    Orientation { top_left_dark: reading.top_left_dark, white_home: Some(side), white_home_confidence: (d / 5.0).min(1.0) * 0.5 }
}

/// If the reading is a start position (all 32 playing squares as expected, at
/// most 2 misread), the side of the image White's men start from.
pub fn start_position_side(reading: &BoardReading) -> Option<Side> {
    use ColourClass as C;
    let g = &reading.squares;
    let mut best: Option<(usize, Side)> = None;
    for side in [Side::Top, Side::Bottom, Side::Left, Side::Right] {
        let sp = palette::start_position(side, reading.top_left_dark);
        let ok = sp
            .iter()
            .filter(|&&(r, c, k)| {
                let s = g[r][c].class;
                match k {
                    C::DarkMan => s == C::DarkMan,
                    C::LightMan => s == C::LightMan,
                    _ => s == k,
                }
            })
            .count();
        if ok + 2 >= sp.len() && best.map_or(true, |b| ok > b.0) {
            best = Some((ok, side));
        }
    }
    best.map(|b| b.1)
}

// ---------------------------------------------------------------- board coordinates

/// How the image grid maps to board coordinates: row 0 = Black's edge, column 0
/// on the left as seen with White at the bottom, dark (playing) squares where
/// row + col is odd.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BoardFrame {
    /// Side of the image White's men start from.
    pub white_home: Side,
    /// Whether image grid (0,0) is a dark square.
    pub top_left_dark: bool,
}

impl BoardFrame {
    pub fn from_orientation(o: &Orientation) -> Option<BoardFrame> {
        o.white_home.map(|white_home| BoardFrame { white_home, top_left_dark: o.top_left_dark })
    }

    /// Turning alone (White to the bottom) would put a dark square in board
    /// (0,0) when the board lies with a light square in the players' near-left
    /// corner; then columns are mirrored as well, so that the playing squares
    /// are always those with row + col odd (the rules are left-right symmetric,
    /// but square numbers of such a game read mirrored).
    pub fn mirrored(&self) -> bool {
        // Image square that lands on board (0,0) after turning only.
        let (ir, ic) = self.inverse_turn(0, 0);
        let dark = ((ir + ic) % 2 == 0) == self.top_left_dark;
        dark
    }

    fn turn(&self, r: usize, c: usize, mirror: bool) -> (usize, usize) {
        let (br, bc) = match self.white_home {
            Side::Bottom => (r, c),
            Side::Top => (7 - r, 7 - c),
            Side::Left => (7 - c, r),
            Side::Right => (c, 7 - r),
        };
        if mirror {
            (br, 7 - bc)
        } else {
            (br, bc)
        }
    }

    fn inverse_turn(&self, br: usize, bc: usize) -> (usize, usize) {
        match self.white_home {
            Side::Bottom => (br, bc),
            Side::Top => (7 - br, 7 - bc),
            Side::Left => (bc, 7 - br),
            Side::Right => (7 - bc, br),
        }
    }

    /// Image grid (row, col) -> board (row, col).
    pub fn to_board(&self, r: usize, c: usize) -> (usize, usize) {
        self.turn(r, c, self.mirrored())
    }

    /// Board (row, col) -> image grid (row, col).
    pub fn to_image(&self, br: usize, bc: usize) -> (usize, usize) {
        let bc = if self.mirrored() { 7 - bc } else { bc };
        self.inverse_turn(br, bc)
    }

    /// Any 8x8 array from image-grid to board coordinates.
    pub fn map_grid<T: Copy>(&self, g: &[[T; 8]; 8]) -> [[T; 8]; 8] {
        let mut out = *g;
        for (r, row) in g.iter().enumerate() {
            for (c, v) in row.iter().enumerate() {
                let (br, bc) = self.to_board(r, c);
                out[br][bc] = *v;
            }
        }
        out
    }
}

/// One reading in board coordinates: what the tracker consumes.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BoardView {
    /// `.bBwW?` per square; row 0 = Black's edge.
    pub grid: [[char; 8]; 8],
    /// Class probabilities per square in the project's one order, `. b w B W` (the classifier's
    /// `CLASSES`, the tracker's `CLASS_CHARS`); sum = 1 - unknown.
    pub probs: [[[f32; 5]; 8]; 8],
    /// Probability that the square shows none of the palette's classes.
    pub unknown: [[f32; 8]; 8],
    /// The reading has been the same, with nothing moving, for the still time.
    pub stable: bool,
    /// Time stamp of the frame, seconds.
    pub t: f64,
    /// Columns were mirrored to keep the playing squares at row + col odd.
    pub mirrored: bool,
}

impl BoardView {
    /// The grid as 8 strings (row 0 = Black's edge).
    pub fn rows(&self) -> Vec<String> {
        self.grid.iter().map(|r| r.iter().collect()).collect()
    }
}

/// Map a reading in image-grid coordinates to board coordinates.
pub fn to_board_coordinates(reading: &BoardReading, frame: &BoardFrame, stable: bool, t: f64) -> BoardView {
    let mut grid = [['?'; 8]; 8];
    let mut probs = [[[0f32; 5]; 8]; 8];
    let mut unknown = [[0f32; 8]; 8];
    for r in 0..8 {
        for c in 0..8 {
            let s = &reading.squares[r][c];
            grid[r][c] = s.class.letter();
            probs[r][c] = s.probs;
            unknown[r][c] = s.p_unknown;
        }
    }
    BoardView {
        grid: frame.map_grid(&grid),
        probs: frame.map_grid(&probs),
        unknown: frame.map_grid(&unknown),
        stable,
        t,
        mirrored: frame.mirrored(),
    }
}
