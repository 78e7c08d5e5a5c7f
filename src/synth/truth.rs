//! The ground truth that comes with every frame: where the playing area is in the image, the
//! position, which squares the hand hides, and which way the board is turned.

use serde::{Deserialize, Serialize};

use super::camera::{apply_homography, Camera};
use super::draw::{hidden_by_hand, Rendered, World};
use super::error::SynthError;
use crate::draughts::Piece;

/// A square counts as covered when the hand hides at least this fraction of it (or the top of
/// the piece on it).
pub const HAND_COVERED_FRACTION: f32 = 0.2;

/// Board squares as the grid has them: `cells[row][col]`.
pub type Cells = [[Option<Piece>; 8]; 8];

/// The image side nearest to which Black's edge (row 0) lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ImageSide {
    Top,
    Right,
    Bottom,
    Left,
}

/// How the board is turned in the image.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Orientation {
    pub row0_side: ImageSide,
    /// Direction from the playing area's centre to the middle of row 0's outer edge, in degrees
    /// clockwise from straight up in the image (0..360).
    pub row0_angle_deg: f64,
}

/// The lens model, to map undistorted pixels (what the homography gives) to real ones:
/// normalized = (pixel - principal_point) / focal_px, distorted = normalized * (1 + k1 r²).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Lens {
    pub focal_px: f64,
    pub principal_point: [f64; 2],
    pub k1: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PieceTruth {
    pub row: u8,
    pub col: u8,
    /// `b`, `B`, `w` or `W`.
    pub piece: char,
    /// Pixel where the centre of the piece's top face shows (shifted from the square's centre in
    /// oblique views).
    pub top_center: [f64; 2],
    /// Pixel of the centre of the piece's footprint on the board.
    pub base_center: [f64; 2],
    pub hidden_by_hand: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FrameTruth {
    pub width: u32,
    pub height: u32,
    /// Corners of the 8x8 playing area in pixels (distortion included, pixel centres at
    /// integers), ordered as they appear: top-left, top-right, bottom-right, bottom-left.
    pub corners: [[f64; 2]; 4],
    /// The board point each of `corners` is: x along the columns, y along the rows, in squares
    /// ((0, 0) is the corner at row 0, column 0).
    pub corner_board: [[f64; 2]; 4],
    /// Board point (x, y, 1) to undistorted pixel; apply `lens` for the real pixel
    /// ([`FrameTruth::board_to_image`] does both).
    pub homography: [[f64; 3]; 3],
    pub lens: Lens,
    /// The position, row 0 at Black's edge (pieces held in the hand are not on it).
    pub grid: [String; 8],
    pub pieces: Vec<PieceTruth>,
    pub hand_present: bool,
    /// Some of the hand (or a piece it holds) shows in the image.
    pub hand_visible: bool,
    /// Squares (row, col) the hand hides.
    pub hand_covered: Vec<[u8; 2]>,
    /// Fraction of each square's area, as seen, hidden by the hand: `hand_coverage[row][col]`.
    pub hand_coverage: [[f32; 8]; 8],
    pub orientation: Orientation,
    /// All four corners lie inside the image.
    pub board_in_view: bool,
    pub tilt_deg: f64,
}

impl FrameTruth {
    /// The pixel where board point (x, y) on the board's surface appears, distortion included.
    pub fn board_to_image(&self, x: f64, y: f64) -> [f64; 2] {
        let [u, v] = apply_homography(&self.homography, x, y);
        let lens = &self.lens;
        let (nx, ny) = ((u - lens.principal_point[0]) / lens.focal_px, (v - lens.principal_point[1]) / lens.focal_px);
        let factor = 1.0 + lens.k1 * (nx * nx + ny * ny);
        [lens.principal_point[0] + lens.focal_px * nx * factor, lens.principal_point[1] + lens.focal_px * ny * factor]
    }

    /// The pixel of the centre of square (row, col) on the board's surface.
    pub fn square_center(&self, row: u8, col: u8) -> [f64; 2] {
        self.board_to_image(col as f64 + 0.5, row as f64 + 0.5)
    }

    /// The position as a reader sees it in a board image straightened from `corners` (pixels,
    /// top-left, top-right, bottom-right, bottom-left as found by a reader): row 0 along the
    /// first edge, `grid`'s letters, unturned. `None` unless every corner lies within half a
    /// square of a true one (the reader found another quadrilateral). Which corner is the
    /// top-left is a convention: a board turned about 45 degrees has two candidates, and a
    /// reader that names them one place round from `corners` still found the board.
    pub fn grid_as_seen(&self, corners: &[[f32; 2]; 4]) -> Option<[String; 8]> {
        let diagonal = (self.corners[0][0] - self.corners[2][0]).hypot(self.corners[0][1] - self.corners[2][1]);
        let half_square = diagonal / 8.0 / 2f64.sqrt() / 2.0;
        let shift = self.corner_shift(corners)?;
        if self.corner_error_px(corners, shift) > half_square {
            return None;
        }
        let board = |k: usize| self.corner_board[(k + shift) % 4];
        let (top_left, top_right, bottom_left) = (board(0), board(1), board(3));
        let mut rows: [String; 8] = Default::default();
        for (r, row) in rows.iter_mut().enumerate() {
            for c in 0..8 {
                let (u, v) = ((c as f64 + 0.5) / 8.0, (r as f64 + 0.5) / 8.0);
                let x = top_left[0] + u * (top_right[0] - top_left[0]) + v * (bottom_left[0] - top_left[0]);
                let y = top_left[1] + u * (top_right[1] - top_left[1]) + v * (bottom_left[1] - top_left[1]);
                row.push(self.grid[y as usize].as_bytes()[x as usize] as char);
            }
        }
        Some(rows)
    }

    /// How many places round the reader's `corners` are named from the true ones: the shift
    /// `s` with `corners[k]` nearest `self.corners[(k + s) % 4]`.
    pub fn corner_shift(&self, corners: &[[f32; 2]; 4]) -> Option<usize> {
        (0..4).min_by(|&a, &b| self.corner_error_px(corners, a).total_cmp(&self.corner_error_px(corners, b)))
    }

    /// The largest distance (px) of a found corner from the true one `shift` places round.
    pub fn corner_error_px(&self, corners: &[[f32; 2]; 4], shift: usize) -> f64 {
        (0..4)
            .map(|k| {
                let real = self.corners[(k + shift) % 4];
                (corners[k][0] as f64 - real[0]).hypot(corners[k][1] as f64 - real[1])
            })
            .fold(0.0, f64::max)
    }
}

/// Reads a grid of 8 rows of 8 characters `.`, `b`, `B`, `w`, `W`.
pub fn parse_grid(grid: &[String; 8]) -> Result<Cells, SynthError> {
    let mut cells: Cells = [[None; 8]; 8];
    for (row, text) in grid.iter().enumerate() {
        let chars: Vec<char> = text.chars().collect();
        if chars.len() != 8 {
            return Err(SynthError::BadGrid { row, reason: format!("`{text}` has {} characters, not 8", chars.len()) });
        }
        for (col, &c) in chars.iter().enumerate() {
            cells[row][col] = match c {
                '.' => None,
                _ => Some(Piece::from_grid_char(c).ok_or_else(|| SynthError::BadGrid {
                    row,
                    reason: format!("`{c}` at column {col} is not one of . b B w W"),
                })?),
            };
        }
    }
    Ok(cells)
}

/// Puts corners in the order top-left, top-right, bottom-right, bottom-left as seen.
fn order_as_seen(points: [([f64; 2], [f64; 2]); 4]) -> [([f64; 2], [f64; 2]); 4] {
    let cx = points.iter().map(|p| p.0[0]).sum::<f64>() / 4.0;
    let cy = points.iter().map(|p| p.0[1]).sum::<f64>() / 4.0;
    // Image y grows downwards, so growing angles go clockwise; the top-left lies at -135 degrees.
    let angle = |p: &[f64; 2]| (p[1] - cy).atan2(p[0] - cx);
    let from_top_left = |p: &[f64; 2]| (angle(p) + 135f64.to_radians()).rem_euclid(std::f64::consts::TAU);
    let mut sorted = points;
    // Start at the corner nearest the top-left direction, going either way round.
    let start = (0..4)
        .min_by(|&a, &b| {
            let da = from_top_left(&points[a].0).min(std::f64::consts::TAU - from_top_left(&points[a].0));
            let db = from_top_left(&points[b].0).min(std::f64::consts::TAU - from_top_left(&points[b].0));
            da.total_cmp(&db)
        })
        .unwrap_or(0);
    let start_angle = angle(&points[start].0);
    sorted.sort_by(|a, b| {
        let ka = (angle(&a.0) - start_angle).rem_euclid(std::f64::consts::TAU);
        let kb = (angle(&b.0) - start_angle).rem_euclid(std::f64::consts::TAU);
        ka.total_cmp(&kb)
    });
    sorted
}

fn project(camera: &Camera, x: f64, y: f64, z: f64) -> Result<[f64; 2], SynthError> {
    camera.project(super::math::Vec3::new(x, y, z)).ok_or(SynthError::NoView)
}

pub(crate) fn frame_truth(world: &World, grid: &[String; 8], rendered: &Rendered) -> Result<FrameTruth, SynthError> {
    let cam = &world.camera;
    let board_corners = [[0.0, 0.0], [8.0, 0.0], [8.0, 8.0], [0.0, 8.0]];
    let mut seen = [([0.0; 2], [0.0; 2]); 4];
    for (slot, corner) in seen.iter_mut().zip(board_corners) {
        *slot = (project(cam, corner[0], corner[1], 0.0)?, corner);
    }
    let ordered = order_as_seen(seen);
    let corners = ordered.map(|(pixel, _)| pixel);
    let corner_board = ordered.map(|(_, board)| board);
    let (w, h) = (cam.width as f64, cam.height as f64);
    let board_in_view = corners.iter().all(|c| c[0] >= 0.0 && c[1] >= 0.0 && c[0] <= w - 1.0 && c[1] <= h - 1.0);

    let center = project(cam, 4.0, 4.0, 0.0)?;
    let row0 = project(cam, 4.0, 0.0, 0.0)?;
    let row0_angle_deg = (row0[0] - center[0]).atan2(-(row0[1] - center[1])).to_degrees().rem_euclid(360.0);
    let row0_side = match row0_angle_deg {
        a if !(45.0..315.0).contains(&a) => ImageSide::Top,
        a if a < 135.0 => ImageSide::Right,
        a if a < 225.0 => ImageSide::Bottom,
        _ => ImageSide::Left,
    };

    let hand_coverage: [[f32; 8]; 8] = std::array::from_fn(|row| {
        std::array::from_fn(|col| match rendered.square_pixels[row][col] {
            0 => 0.0,
            total => rendered.hand_pixels[row][col] as f32 / total as f32,
        })
    });
    let mut covered = hand_coverage.map(|line| line.map(|fraction| fraction >= HAND_COVERED_FRACTION));

    let mut pieces = Vec::new();
    for piece in &world.pieces {
        let Some((row, col)) = piece.square else { continue };
        if piece.under_another {
            continue;
        }
        let top = piece.top_center();
        let hidden = world.hand.is_some() && hidden_by_hand(world, top);
        if hidden {
            covered[row as usize][col as usize] = true;
        }
        pieces.push(PieceTruth {
            row,
            col,
            piece: piece.grid_char,
            top_center: project(cam, top.x, top.y, top.z)?,
            base_center: project(cam, top.x, top.y, 0.0)?,
            hidden_by_hand: hidden,
        });
    }
    let hand_covered = (0..8u8)
        .flat_map(|row| (0..8u8).map(move |col| [row, col]))
        .filter(|&[row, col]| covered[row as usize][col as usize])
        .collect();

    Ok(FrameTruth {
        width: cam.width,
        height: cam.height,
        corners,
        corner_board,
        homography: cam.homography(),
        lens: Lens { focal_px: cam.focal_px, principal_point: [cam.cx, cam.cy], k1: cam.k1 },
        grid: grid.clone(),
        pieces,
        hand_present: world.hand.is_some(),
        hand_visible: rendered.hand_in_image > 0,
        hand_covered,
        hand_coverage,
        orientation: Orientation { row0_side, row0_angle_deg },
        board_in_view,
        tilt_deg: cam.forward.dot(-super::math::Vec3::UP).clamp(-1.0, 1.0).acos().to_degrees(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corners_are_ordered_as_seen() {
        // A board turned by 30 degrees: the corner nearest the top-left direction comes first.
        let rotate = |x: f64, y: f64| {
            let (s, c) = 30f64.to_radians().sin_cos();
            [100.0 + x * c - y * s, 100.0 + x * s + y * c]
        };
        let pts = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)].map(|(x, y)| (rotate(x * 50.0, y * 50.0), [x, y]));
        let shuffled = [pts[2], pts[0], pts[3], pts[1]];
        let ordered = order_as_seen(shuffled);
        assert_eq!(ordered.map(|p| p.1), [[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]]);
    }

    #[test]
    fn grids_are_checked() {
        let mut grid: [String; 8] = std::array::from_fn(|_| "........".to_string());
        assert!(parse_grid(&grid).is_ok());
        grid[3] = "...x....".into();
        let err = parse_grid(&grid).unwrap_err().to_string();
        assert!(err.contains("row 3") && err.contains('x'), "{err}");
        grid[3] = "....".into();
        assert!(parse_grid(&grid).is_err());
    }
}
