//! From camera pixels to the game's cells: a homography fitted to the projected calibration
//! pattern, kept with the grid's size.

use serde::{Deserialize, Serialize};

/// A 3x3 homography, row-major, acting on (x, y, 1).
pub type Homography = [[f64; 3]; 3];

/// Applies `h` to a point; `None` at (or behind) the line at infinity.
pub fn apply(h: &Homography, [x, y]: [f64; 2]) -> Option<[f64; 2]> {
    let w = h[2][0] * x + h[2][1] * y + h[2][2];
    if w.abs() < 1e-12 {
        return None;
    }
    Some([(h[0][0] * x + h[0][1] * y + h[0][2]) / w, (h[1][0] * x + h[1][1] * y + h[1][2]) / w])
}

/// The inverse of `h`, if it has one.
pub fn invert(h: &Homography) -> Option<Homography> {
    let [[a, b, c], [d, e, f], [g, i, k]] = *h;
    let det = a * (e * k - f * i) - b * (d * k - f * g) + c * (d * i - e * g);
    if det.abs() < 1e-15 {
        return None;
    }
    let inv = [
        [(e * k - f * i) / det, (c * i - b * k) / det, (b * f - c * e) / det],
        [(f * g - d * k) / det, (a * k - c * g) / det, (c * d - a * f) / det],
        [(d * i - e * g) / det, (b * g - a * i) / det, (a * e - b * d) / det],
    ];
    Some(inv)
}

/// The homography from a quadrilateral in the image (top left, top right, bottom right, bottom
/// left) to the unit square, by the four-point solve (the square to the quadrilateral, after
/// Heckbert, then inverted); `None` when three corners lie on a line. (Tests draw maps with it;
/// the watcher's maps come from the projected pattern.)
#[cfg(test)]
pub(crate) fn quad_to_unit_square(q: [[f64; 2]; 4]) -> Option<Homography> {
    let [[x0, y0], [x1, y1], [x2, y2], [x3, y3]] = q;
    let (sx, sy) = (x0 - x1 + x2 - x3, y0 - y1 + y2 - y3);
    let (dx1, dx2, dy1, dy2) = (x1 - x2, x3 - x2, y1 - y2, y3 - y2);
    let den = dx1 * dy2 - dx2 * dy1;
    if den.abs() < 1e-12 {
        return None;
    }
    let g = (sx * dy2 - dx2 * sy) / den;
    let h = (dx1 * sy - sx * dy1) / den;
    invert(&[[x1 - x0 + g * x1, x3 - x0 + h * x3, x0], [y1 - y0 + g * y1, y3 - y0 + h * y3, y0], [g, h, 1.0]])
}

/// Where a game's grid is in the camera image.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GridMap {
    pub cols: usize,
    pub rows: usize,
    /// Camera pixel to the pinned rectangle's fractions (0..1 across, 0..1 down).
    pub camera_to_rect: Homography,
    /// The camera image's size when the map was made.
    pub image_size: [u32; 2],
}

impl GridMap {
    /// A camera pixel in cell units (column, row; a cell's centre is at +0.5). Points off the
    /// grid come out below 0 or beyond `cols`/`rows`.
    pub fn to_cells(&self, pixel: [f64; 2]) -> Option<[f64; 2]> {
        let [fx, fy] = apply(&self.camera_to_rect, pixel)?;
        Some([fx * self.cols as f64, fy * self.rows as f64])
    }

    /// The cell under a camera pixel, if it is on the grid.
    pub fn cell_at(&self, pixel: [f64; 2]) -> Option<[usize; 2]> {
        let [x, y] = self.to_cells(pixel)?;
        (x >= 0.0 && y >= 0.0 && x < self.cols as f64 && y < self.rows as f64).then_some([x as usize, y as usize])
    }

    /// A point in cell units to the camera pixel where it is seen.
    pub fn to_camera(&self, [x, y]: [f64; 2]) -> Option<[f64; 2]> {
        let inverse = invert(&self.camera_to_rect)?;
        apply(&inverse, [x / self.cols as f64, y / self.rows as f64])
    }

    /// The grid's outline in the camera image: top left, top right, bottom right, bottom left.
    pub fn outline(&self) -> Option<[[f64; 2]; 4]> {
        let (c, r) = (self.cols as f64, self.rows as f64);
        Some([self.to_camera([0.0, 0.0])?, self.to_camera([c, 0.0])?, self.to_camera([c, r])?, self.to_camera([0.0, r])?])
    }

    /// The same grid (same rectangle) cut into another number of cells: the game on the screen
    /// changed its size, the projector and the camera did not move.
    pub fn with_grid(&self, cols: usize, rows: usize) -> GridMap {
        GridMap { cols, rows, ..self.clone() }
    }
}

/// How large things are where the camera sees them: the table nearer a tilted camera looks
/// larger than at its far side, so a finger at the far side looks thinner and blunter for its
/// size. `scale_at` gives, at an image point, the size of
/// an image pixel as if seen at the picture's centre, by distance alone: a finger is round, so
/// it is not foreshortened across its width the way the table is, and the scale is the one the
/// table has across the line of sight. With the camera square above the table it is 1
/// everywhere.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TableView {
    /// Image pixel to cells (column, row).
    to_cells: Homography,
    /// The cells per image pixel across the line of sight at the picture's centre.
    centre_scale: f64,
}

/// The largest scale either way: points near the horizon of an extreme view are not measured as
/// if a mile off.
const MAX_SCALE: f64 = 2.5;

impl TableView {
    /// The image as it is (no map known).
    pub fn identity() -> TableView {
        TableView { to_cells: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], centre_scale: 1.0 }
    }

    /// The view of the grid `map` maps, in the map's camera pixels.
    pub fn of_grid(map: &GridMap) -> Option<TableView> {
        let [c, r] = [map.cols as f64, map.rows as f64];
        let h = map.camera_to_rect;
        let to_cells = [[h[0][0] * c, h[0][1] * c, h[0][2] * c], [h[1][0] * r, h[1][1] * r, h[1][2] * r], h[2]];
        let centre_scale = across_scale(&to_cells, map.to_camera([c / 2.0, r / 2.0])?)?;
        (centre_scale > 0.0 && centre_scale.is_finite()).then_some(TableView { to_cells, centre_scale })
    }

    /// The same view of an image scaled by `s` (a frame worked on at a smaller size).
    pub fn scaled(&self, s: f64) -> TableView {
        let h = self.to_cells;
        let to_cells = [[h[0][0] / s, h[0][1] / s, h[0][2]], [h[1][0] / s, h[1][1] / s, h[1][2]], [h[2][0] / s, h[2][1] / s, h[2][2]]];
        TableView { to_cells, centre_scale: self.centre_scale / s }
    }

    /// The size of an image pixel at `p`, in pixels of the picture's centre (1 there).
    pub fn scale_at(&self, p: [f64; 2]) -> f64 {
        across_scale(&self.to_cells, p).map_or(1.0, |s| (s / self.centre_scale).clamp(1.0 / MAX_SCALE, MAX_SCALE))
    }
}

/// The smaller singular value of a homography's Jacobian at `p`: how much it stretches the
/// image across the line of sight (of a plane seen in perspective, the other way is
/// foreshortened and stretched more).
fn across_scale(h: &Homography, [x, y]: [f64; 2]) -> Option<f64> {
    let w = h[2][0] * x + h[2][1] * y + h[2][2];
    if w.abs() < 1e-12 {
        return None;
    }
    let [u, v] = apply(h, [x, y])?;
    let (a, b) = ((h[0][0] - u * h[2][0]) / w, (h[0][1] - u * h[2][1]) / w);
    let (c, d) = ((h[1][0] - v * h[2][0]) / w, (h[1][1] - v * h[2][1]) / w);
    let sum = a * a + b * b + c * c + d * d;
    let det = a * d - b * c;
    Some(((sum - (sum * sum - 4.0 * det * det).max(0.0).sqrt()) / 2.0).max(0.0).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A map whose rectangle is seen as the image rectangle (40, 30)-(440, 330), 8x6 cells.
    fn straight() -> GridMap {
        let h = [[1.0 / 400.0, 0.0, -40.0 / 400.0], [0.0, 1.0 / 300.0, -30.0 / 300.0], [0.0, 0.0, 1.0]];
        GridMap { cols: 8, rows: 6, camera_to_rect: h, image_size: [640, 480] }
    }

    #[test]
    fn pixels_map_to_cells_and_back() {
        let map = straight();
        assert_eq!(map.cell_at([40.0 + 50.0 * 3.5, 30.0 + 50.0 * 2.2]), Some([3, 2]));
        assert_eq!(map.cell_at([20.0, 100.0]), None, "left of the grid");
        let back = map.to_camera([3.5, 2.5]).unwrap();
        assert!((back[0] - 215.0).abs() < 1e-9 && (back[1] - 155.0).abs() < 1e-9, "{back:?}");
        let outline = map.outline().unwrap();
        assert!((outline[2][0] - 440.0).abs() < 1e-9 && (outline[2][1] - 330.0).abs() < 1e-9);
    }

    #[test]
    fn a_perspective_map_inverts() {
        let h = [[0.9, 0.1, 3.0], [-0.05, 1.1, 7.0], [0.0004, 0.0002, 1.0]];
        let inv = invert(&h).unwrap();
        let p = apply(&h, [120.0, 80.0]).unwrap();
        let q = apply(&inv, p).unwrap();
        assert!((q[0] - 120.0).abs() < 1e-6 && (q[1] - 80.0).abs() < 1e-6, "{q:?}");
        assert!(invert(&[[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 0.0, 1.0]]).is_none());
    }

    /// The map of an 8x6 grid of square cells seen by a pinhole camera (focal length 500
    /// pixels, 640x480) tilted `tilt` degrees about the grid's rows, its far side at the top.
    fn tilted(tilt: f64) -> GridMap {
        let (f, d, t) = (500.0, 14.0, tilt.to_radians());
        // Cells (X, Y) to the image: camera coordinates (X - 4, (Y - 3) cos t, d - (Y - 3) sin t).
        let cells_to_image = [
            [f, -320.0 * t.sin(), -4.0 * f + 320.0 * (d + 3.0 * t.sin())],
            [0.0, f * t.cos() - 240.0 * t.sin(), -3.0 * f * t.cos() + 240.0 * (d + 3.0 * t.sin())],
            [0.0, -t.sin(), d + 3.0 * t.sin()],
        ];
        let h = invert(&cells_to_image).unwrap();
        let camera_to_rect = [h[0].map(|v| v / 8.0), h[1].map(|v| v / 6.0), h[2]];
        GridMap { cols: 8, rows: 6, camera_to_rect, image_size: [640, 480] }
    }

    #[test]
    fn a_straight_view_has_one_scale_and_a_tilted_one_sizes_near_and_far_alike() {
        let view = TableView::of_grid(&straight()).unwrap();
        for p in [[40.0, 30.0], [215.0, 155.0], [600.0, 10.0]] {
            assert!((view.scale_at(p) - 1.0).abs() < 1e-9, "{p:?}: {}", view.scale_at(p));
        }
        let straight_down = tilted(0.0);
        let view = TableView::of_grid(&straight_down).unwrap();
        assert!((view.scale_at(straight_down.to_camera([0.5, 0.5]).unwrap()) - 1.0).abs() < 1e-9);
        let tilted = tilted(35.0);
        let view = TableView::of_grid(&tilted).unwrap();
        let at = |c: [f64; 2]| tilted.to_camera(c).unwrap();
        let (far, near) = (at([4.0, 0.5]), at([4.0, 5.5]));
        assert!(far[1] < near[1], "the far side at the top: {far:?} {near:?}");
        assert!(view.scale_at(far) > 1.1 && view.scale_at(near) < 0.9, "far {} near {}", view.scale_at(far), view.scale_at(near));
        // A cell's width across the line of sight, in pixels of the centre, is the same far
        // and near, though it looks wider near.
        let pixels = |row: f64| {
            let (a, b) = (at([3.5, row]), at([4.5, row]));
            ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt()
        };
        assert!(pixels(5.5) > 1.2 * pixels(0.5), "{} {}", pixels(5.5), pixels(0.5));
        let width = |row: f64| pixels(row) * view.scale_at(at([4.0, row]));
        assert!((width(0.5) / width(5.5) - 1.0).abs() < 0.02, "{} {}", width(0.5), width(5.5));
        // At half the size, the same view.
        let half = view.scaled(0.5);
        assert!((view.scale_at([300.0, 200.0]) - half.scale_at([150.0, 100.0])).abs() < 1e-9);
    }
}
