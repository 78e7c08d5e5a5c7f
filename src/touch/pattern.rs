//! The calibration picture: a checker pattern drawn inside the game's pinned rectangle, with a
//! white ring one square wide around it so that its outer corners stand out against the dark
//! page. The camera finds its inner corners; since their places in the rectangle are known, the
//! mapping from camera pixels to the rectangle (and so to every cell) follows.
//!
//! The number of squares follows the rectangle's shape (squares about square) and not the
//! game's grid: a 64x64 Dots grid would give squares too small to find.

use serde::{Deserialize, Serialize};

/// Squares along the longer side of the rectangle, the white ring included.
const SQUARES_LONG_SIDE: usize = 11;

/// The radius of the marker, a black disc in the middle of the ring's top side, in squares.
/// A checker looks the same turned half a turn; the marker tells which side is the top.
pub const MARKER_RADIUS_SQUARES: f64 = 0.3;

/// The pattern for a rectangle of a given shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CalibrationPattern {
    /// Squares across the rectangle, the white ring included (so the checker has `across - 2`).
    pub across: usize,
    /// Squares down the rectangle, the white ring included.
    pub down: usize,
}

impl CalibrationPattern {
    /// The pattern for a rectangle `width` by `height` (any unit; for a grid of cells, its
    /// columns and rows). At least 4 checker squares each way: OpenCV needs 3 inner corners.
    pub fn for_rectangle(width: f64, height: f64) -> CalibrationPattern {
        let (long, short) = if width >= height { (width, height) } else { (height, width) };
        let short_squares = ((SQUARES_LONG_SIDE as f64) * short / long).round().max(6.0) as usize;
        if width >= height {
            CalibrationPattern { across: SQUARES_LONG_SIDE, down: short_squares }
        } else {
            CalibrationPattern { across: short_squares, down: SQUARES_LONG_SIDE }
        }
    }

    /// The pattern for a grid of `cols` by `rows` cells.
    pub fn for_grid(cols: usize, rows: usize) -> CalibrationPattern {
        CalibrationPattern::for_rectangle(cols.max(1) as f64, rows.max(1) as f64)
    }

    /// Inner corners of the checker (the corners OpenCV's chessboard finder reports): columns and
    /// rows. The checker has `across - 2` squares, so `across - 3` inner corners.
    pub fn inner_corners(&self) -> (usize, usize) {
        (self.across - 3, self.down - 3)
    }

    /// Whether the point (fractions of the rectangle, 0..1 each way) is white.
    pub fn is_white(&self, fx: f64, fy: f64) -> bool {
        let i = (fx * self.across as f64).floor() as i64;
        let j = (fy * self.down as f64).floor() as i64;
        if i <= 0 || j <= 0 || i >= self.across as i64 - 1 || j >= self.down as i64 - 1 {
            // The ring, white but for the marker.
            let [mx, my] = self.marker_centre();
            let r = MARKER_RADIUS_SQUARES;
            let dx = (fx - mx) * self.across as f64;
            let dy = (fy - my) * self.down as f64;
            return dx * dx + dy * dy > r * r;
        }
        // The checker's top left square (1, 1) is black.
        (i + j) % 2 == 1
    }

    /// The marker's centre, as fractions of the rectangle: the middle of the ring's top side.
    pub fn marker_centre(&self) -> [f64; 2] {
        [0.5, 0.5 / self.down as f64]
    }

    /// The inner corners' places as fractions of the rectangle, row by row from the top left.
    pub fn corner_fractions(&self) -> Vec<[f64; 2]> {
        let (nx, ny) = self.inner_corners();
        let mut out = Vec::with_capacity(nx * ny);
        for j in 0..ny {
            for i in 0..nx {
                out.push([(i + 2) as f64 / self.across as f64, (j + 2) as f64 / self.down as f64]);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wide_grid_gets_more_squares_across_than_down() {
        let p = CalibrationPattern::for_grid(30, 20);
        assert_eq!(p.across, 11);
        assert_eq!(p.down, 7);
        assert_eq!(p.inner_corners(), (8, 4));
        let tall = CalibrationPattern::for_grid(8, 20);
        assert!(tall.down > tall.across);
        // A square 64x64 Dots grid: squares stay large.
        assert_eq!(CalibrationPattern::for_grid(64, 64).across, 11);
    }

    #[test]
    fn colours_change_at_every_inner_corner() {
        let p = CalibrationPattern::for_grid(10, 8);
        let e = 1e-3;
        for [fx, fy] in p.corner_fractions() {
            let tl = p.is_white(fx - e, fy - e);
            assert_eq!(p.is_white(fx + e, fy + e), tl, "diagonal squares match");
            assert_ne!(p.is_white(fx + e, fy - e), tl, "neighbours differ at {fx},{fy}");
            assert_ne!(p.is_white(fx - e, fy + e), tl);
        }
        // The ring is white but for the marker at the middle of its top side.
        assert!(p.is_white(0.01, 0.5) && p.is_white(0.5, 0.99));
        let [mx, my] = p.marker_centre();
        assert!(!p.is_white(mx, my));
        assert!(p.is_white(mx, 1.0 - my), "the bottom has no marker: the top can be told");
    }
}
