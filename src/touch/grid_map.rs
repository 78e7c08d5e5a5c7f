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
}
