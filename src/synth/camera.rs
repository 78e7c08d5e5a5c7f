//! The pinhole camera with radial distortion: where it stands, how board points land on pixels,
//! and which ray each pixel sees.
//!
//! Board space: x along the columns (0 at column 0's outer edge, 8 at column 7's), y along the
//! rows (0 at Black's edge), z the height above the board's surface, all in square units.
//! Pixel coordinates put pixel centres at integers (OpenCV's convention): the top-left pixel's
//! centre is (0, 0).

use super::error::SynthError;
use super::math::Vec3;
use super::scene::CameraParams;

#[derive(Clone, Debug, PartialEq)]
pub struct Camera {
    pub width: u32,
    pub height: u32,
    pub focal_px: f64,
    pub cx: f64,
    pub cy: f64,
    /// Radial distortion on normalized coordinates: distorted = undistorted * (1 + k1 r²).
    pub k1: f64,
    pub position: Vec3,
    /// Unit vectors in board space along the image's x axis, its y axis and the optical axis.
    pub right: Vec3,
    pub down: Vec3,
    pub forward: Vec3,
}

/// The board's centre: what the camera looks at before `target_offset`.
pub const BOARD_CENTER: Vec3 = Vec3::new(4.0, 4.0, 0.0);

fn focal_for(fov_deg: f64, width: u32) -> f64 {
    (width as f64 / 2.0) / (fov_deg.to_radians() / 2.0).tan()
}

impl Camera {
    /// The camera for `params`, moved along its line of sight until the board with its frame
    /// (`half_extent` squares from the centre each way, `depth` deep) spans `params.fill` of
    /// the image.
    pub fn place(params: &CameraParams, width: u32, height: u32, half_extent: f64, depth: f64) -> Result<Camera, SynthError> {
        let outline: Vec<Vec3> = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)]
            .iter()
            .flat_map(|&(sx, sy)| {
                let (x, y) = (4.0 + sx * half_extent, 4.0 + sy * half_extent);
                [Vec3::new(x, y, 0.0), Vec3::new(x, y, -depth)]
            })
            .collect();
        // The projected size falls off roughly as 1/distance: a few proportional steps converge.
        let mut distance = 2.5 * half_extent / (params.fov_deg.to_radians() / 2.0).tan();
        for _ in 0..30 {
            let camera = Camera::at_distance(params, width, height, distance);
            let (span, reach) = camera.span_of(&outline).ok_or(SynthError::NoView)?;
            // Also back off until the board is wholly in view (the optical axis need not pass
            // through its middle).
            let step = (span / params.fill).max(reach / 0.98);
            distance *= step;
            if (step - 1.0).abs() < 1e-9 {
                break;
            }
        }
        let camera = Camera::at_distance(params, width, height, distance);
        if !camera.position.z.is_finite() || camera.position.z <= 0.0 {
            return Err(SynthError::NoView);
        }
        Ok(camera)
    }

    /// The camera `distance` squares from the point it looks at.
    pub fn at_distance(params: &CameraParams, width: u32, height: u32, distance: f64) -> Camera {
        let yaw = params.yaw_deg.to_radians();
        let azimuth = params.tilt_azimuth_deg.to_radians();
        let tilt = params.tilt_deg.to_radians();
        // Board direction that points down the image when the camera looks straight down; the
        // board turns clockwise in the image as yaw grows.
        let down_hint = Vec3::new(yaw.sin(), yaw.cos(), 0.0);
        let left_hint = Vec3::new(-yaw.cos(), yaw.sin(), 0.0);
        let lean = down_hint * azimuth.cos() + left_hint * azimuth.sin();
        let target = BOARD_CENTER + Vec3::new(params.target_offset[0], params.target_offset[1], 0.0);
        let position = target + (lean * tilt.sin() + Vec3::UP * tilt.cos()) * distance;
        let forward = (target - position).normalized();
        let down = (down_hint - forward * down_hint.dot(forward)).normalized();
        // right = forward x down keeps the image unmirrored (checked by the tests below).
        let right = forward.cross(down);
        Camera {
            width,
            height,
            focal_px: focal_for(params.fov_deg, width),
            cx: (width as f64 - 1.0) / 2.0,
            cy: (height as f64 - 1.0) / 2.0,
            k1: params.k1,
            position,
            right,
            down,
            forward,
        }
    }

    /// The larger of the fractions of the image width and height the points span, and how far
    /// out they reach from the image centre (1 = to the image's edge); `None` if one is behind
    /// the camera.
    fn span_of(&self, points: &[Vec3]) -> Option<(f64, f64)> {
        let (mut min_u, mut max_u, mut min_v, mut max_v) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for &p in points {
            let [u, v] = self.project(p)?;
            min_u = min_u.min(u);
            max_u = max_u.max(u);
            min_v = min_v.min(v);
            max_v = max_v.max(v);
        }
        let span = ((max_u - min_u) / self.width as f64).max((max_v - min_v) / self.height as f64);
        let (half_w, half_h) = (self.width as f64 / 2.0, self.height as f64 / 2.0);
        let reach = ((self.cx - min_u).max(max_u - self.cx) / half_w).max((self.cy - min_v).max(max_v - self.cy) / half_h);
        Some((span, reach))
    }

    /// Whether `k1` keeps the distortion one-to-one out to the image corners at this field of
    /// view (barrel distortion folds back beyond some radius).
    pub fn distortion_is_monotonic(k1: f64, fov_deg: f64, width: u32, height: u32) -> bool {
        if k1 >= 0.0 {
            return true;
        }
        let focal = focal_for(fov_deg, width);
        let corner = ((width as f64 / 2.0).powi(2) + (height as f64 / 2.0).powi(2)).sqrt() / focal;
        // r (1 + k1 r²) peaks at r* = sqrt(-1 / (3 k1)) with the value 2 r* / 3.
        let peak = 2.0 / 3.0 * (-1.0 / (3.0 * k1)).sqrt();
        corner < 0.95 * peak
    }

    /// Board space to camera space (x right, y down, z along the optical axis).
    pub fn to_camera(&self, p: Vec3) -> Vec3 {
        let rel = p - self.position;
        Vec3::new(rel.dot(self.right), rel.dot(self.down), rel.dot(self.forward))
    }

    /// The pixel a board-space point lands on, distortion included; `None` behind the camera.
    pub fn project(&self, p: Vec3) -> Option<[f64; 2]> {
        let c = self.to_camera(p);
        if c.z <= 1e-6 {
            return None;
        }
        let (x, y) = self.distort(c.x / c.z, c.y / c.z);
        Some([self.cx + self.focal_px * x, self.cy + self.focal_px * y])
    }

    pub fn distort(&self, x: f64, y: f64) -> (f64, f64) {
        let factor = 1.0 + self.k1 * (x * x + y * y);
        (x * factor, y * factor)
    }

    /// Inverse of [`Camera::distort`] (Newton's method on the radius).
    pub fn undistort(&self, xd: f64, yd: f64) -> (f64, f64) {
        let rd = (xd * xd + yd * yd).sqrt();
        if self.k1 == 0.0 || rd < 1e-12 {
            return (xd, yd);
        }
        // Start from the first-order inverse; Newton then converges in two or three steps.
        let mut r = rd / (1.0 + self.k1 * rd * rd);
        for _ in 0..8 {
            let g = r * (1.0 + self.k1 * r * r) - rd;
            let slope = 1.0 + 3.0 * self.k1 * r * r;
            if slope < 1e-3 {
                break;
            }
            let next = r - g / slope;
            if (next - r).abs() < 1e-13 {
                r = next;
                break;
            }
            r = next;
        }
        let scale = r / rd;
        (xd * scale, yd * scale)
    }

    /// The unit direction, in board space, of the ray through pixel (u, v).
    pub fn ray_direction(&self, u: f64, v: f64) -> Vec3 {
        let (x, y) = self.undistort((u - self.cx) / self.focal_px, (v - self.cy) / self.focal_px);
        (self.right * x + self.down * y + self.forward).normalized()
    }

    /// The 3x3 homography from board points (x, y, 1) on the board's surface to undistorted
    /// pixels, scaled so that the bottom-right entry is 1.
    pub fn homography(&self) -> [[f64; 3]; 3] {
        let k = [[self.focal_px, 0.0, self.cx], [0.0, self.focal_px, self.cy], [0.0, 0.0, 1.0]];
        let row = |axis: Vec3| [axis.x, axis.y, -axis.dot(self.position)];
        let extrinsic = [row(self.right), row(self.down), row(self.forward)];
        let mut h = super::math::mat3_mul(&k, &extrinsic);
        let scale = h[2][2];
        if scale.abs() > 1e-12 {
            for cell in h.iter_mut().flatten() {
                *cell /= scale;
            }
        }
        h
    }
}

/// Applies a homography to a point.
pub fn apply_homography(h: &[[f64; 3]; 3], x: f64, y: f64) -> [f64; 2] {
    let w = h[2][0] * x + h[2][1] * y + h[2][2];
    [(h[0][0] * x + h[0][1] * y + h[0][2]) / w, (h[1][0] * x + h[1][1] * y + h[1][2]) / w]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::scene::{Palette, Scene};

    fn params(tilt: f64, azimuth: f64, yaw: f64, k1: f64) -> CameraParams {
        let mut p = Scene::overhead(Palette::FourColour, 640, 480).camera;
        p.tilt_deg = tilt;
        p.tilt_azimuth_deg = azimuth;
        p.yaw_deg = yaw;
        p.k1 = k1;
        p
    }

    #[test]
    fn straight_down_is_unmirrored_with_black_on_top() {
        let cam = Camera::place(&params(0.0, 0.0, 0.0, 0.0), 640, 480, 4.6, 0.25).unwrap();
        let top_left = cam.project(Vec3::new(0.0, 0.0, 0.0)).unwrap();
        let top_right = cam.project(Vec3::new(8.0, 0.0, 0.0)).unwrap();
        let bottom_left = cam.project(Vec3::new(0.0, 8.0, 0.0)).unwrap();
        assert!(top_right[0] > top_left[0] + 100.0);
        assert!((top_right[1] - top_left[1]).abs() < 1e-6);
        assert!(bottom_left[1] > top_left[1] + 100.0);
    }

    #[test]
    fn yaw_turns_the_board_clockwise() {
        let cam = Camera::place(&params(0.0, 0.0, 90.0, 0.0), 640, 480, 4.6, 0.25).unwrap();
        let center = cam.project(BOARD_CENTER).unwrap();
        let row0_mid = cam.project(Vec3::new(4.0, 0.0, 0.0)).unwrap();
        assert!(row0_mid[0] > center[0] + 100.0, "row 0 should be on the right: {row0_mid:?}");
    }

    #[test]
    fn fill_fits_the_board() {
        for (tilt, az, yaw) in [(0.0, 0.0, 0.0), (30.0, 0.0, 0.0), (30.0, 135.0, 45.0), (17.0, 290.0, 200.0)] {
            let cam = Camera::place(&params(tilt, az, yaw, -0.1), 640, 480, 4.6, 0.25).unwrap();
            let (span, reach) = cam
                .span_of(&[(-0.6, -0.6), (8.6, -0.6), (8.6, 8.6), (-0.6, 8.6)].map(|(x, y)| Vec3::new(x, y, 0.0)))
                .unwrap();
            assert!(reach < 1.0);
            // The fit also counts the slab's lower edges and keeps the board wholly in view, so
            // the top outline may span a little less.
            assert!(span <= 0.9 + 1e-6 && span > 0.8, "tilt {tilt}: span {span}");
            let tilt_seen = cam.forward.dot(-Vec3::UP).acos().to_degrees();
            assert!((tilt_seen - tilt).abs() < 1e-6);
        }
    }

    #[test]
    fn rays_hit_what_projects_there() {
        let cam = Camera::place(&params(25.0, 60.0, 130.0, -0.12), 640, 480, 4.6, 0.25).unwrap();
        for p in [Vec3::new(1.0, 2.0, 0.0), Vec3::new(7.5, 0.5, 0.2), Vec3::new(4.0, 4.0, 0.0)] {
            let [u, v] = cam.project(p).unwrap();
            let dir = cam.ray_direction(u, v);
            let to_p = (p - cam.position).normalized();
            assert!((dir - to_p).length() < 1e-9, "{p:?}");
        }
    }

    #[test]
    fn homography_matches_projection_without_distortion() {
        let cam = Camera::place(&params(22.0, 10.0, 33.0, 0.0), 640, 480, 4.6, 0.25).unwrap();
        let h = cam.homography();
        for (x, y) in [(0.0, 0.0), (8.0, 0.0), (3.5, 6.25)] {
            let a = apply_homography(&h, x, y);
            let b = cam.project(Vec3::new(x, y, 0.0)).unwrap();
            assert!((a[0] - b[0]).abs() < 1e-6 && (a[1] - b[1]).abs() < 1e-6);
        }
    }

    #[test]
    fn strong_barrel_distortion_is_caught() {
        assert!(Camera::distortion_is_monotonic(-0.1, 60.0, 1280, 720));
        assert!(!Camera::distortion_is_monotonic(-0.3, 100.0, 1280, 720));
    }
}
