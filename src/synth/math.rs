//! The small vector algebra the renderer needs (3-D points, directions and linear RGB colours).

use std::ops::{Add, AddAssign, Mul, Neg, Sub};

/// A point or direction in board space (x along the columns, y along the rows, z = height above
/// the board, all in square units), or a linear RGB colour.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Vec3 {
    pub x: f64,
    pub y: f64,
    pub z: f64,
}

impl Vec3 {
    pub const ZERO: Vec3 = Vec3 { x: 0.0, y: 0.0, z: 0.0 };
    pub const UP: Vec3 = Vec3 { x: 0.0, y: 0.0, z: 1.0 };

    pub const fn new(x: f64, y: f64, z: f64) -> Vec3 {
        Vec3 { x, y, z }
    }
    pub const fn splat(v: f64) -> Vec3 {
        Vec3 { x: v, y: v, z: v }
    }
    pub fn dot(self, o: Vec3) -> f64 {
        self.x * o.x + self.y * o.y + self.z * o.z
    }
    pub fn cross(self, o: Vec3) -> Vec3 {
        Vec3::new(self.y * o.z - self.z * o.y, self.z * o.x - self.x * o.z, self.x * o.y - self.y * o.x)
    }
    pub fn length(self) -> f64 {
        self.dot(self).sqrt()
    }
    /// The unit vector along `self` (`self` unchanged when it is too short to have a direction).
    pub fn normalized(self) -> Vec3 {
        let len = self.length();
        if len > 1e-12 {
            self * (1.0 / len)
        } else {
            self
        }
    }
    /// Component-wise product: a colour times an albedo.
    pub fn mul(self, o: Vec3) -> Vec3 {
        Vec3::new(self.x * o.x, self.y * o.y, self.z * o.z)
    }
    pub fn lerp(self, o: Vec3, t: f64) -> Vec3 {
        self + (o - self) * t
    }
    /// Luminance of a linear RGB colour (Rec. 709 weights).
    pub fn luminance(self) -> f64 {
        0.2126 * self.x + 0.7152 * self.y + 0.0722 * self.z
    }
}

impl Add for Vec3 {
    type Output = Vec3;
    fn add(self, o: Vec3) -> Vec3 {
        Vec3::new(self.x + o.x, self.y + o.y, self.z + o.z)
    }
}
impl AddAssign for Vec3 {
    fn add_assign(&mut self, o: Vec3) {
        *self = *self + o;
    }
}
impl Sub for Vec3 {
    type Output = Vec3;
    fn sub(self, o: Vec3) -> Vec3 {
        Vec3::new(self.x - o.x, self.y - o.y, self.z - o.z)
    }
}
impl Mul<f64> for Vec3 {
    type Output = Vec3;
    fn mul(self, s: f64) -> Vec3 {
        Vec3::new(self.x * s, self.y * s, self.z * s)
    }
}
impl Neg for Vec3 {
    type Output = Vec3;
    fn neg(self) -> Vec3 {
        Vec3::new(-self.x, -self.y, -self.z)
    }
}

/// Hermite step from 0 at `edge0` to 1 at `edge1` (either order).
pub fn smoothstep(edge0: f64, edge1: f64, x: f64) -> f64 {
    let t = ((x - edge0) / (edge1 - edge0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// sRGB byte to linear intensity.
pub fn srgb_to_linear(byte: u8) -> f64 {
    let c = byte as f64 / 255.0;
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// Linear intensity (0..1) to sRGB (0..1).
pub fn linear_to_srgb(c: f64) -> f64 {
    let c = c.clamp(0.0, 1.0);
    if c <= 0.003_130_8 {
        c * 12.92
    } else {
        1.055 * c.powf(1.0 / 2.4) - 0.055
    }
}

pub fn rgb_to_linear(rgb: [u8; 3]) -> Vec3 {
    Vec3::new(srgb_to_linear(rgb[0]), srgb_to_linear(rgb[1]), srgb_to_linear(rgb[2]))
}

/// Distance from `p` to the segment `a`-`b` in the plane.
pub fn segment_distance_2d(p: (f64, f64), a: (f64, f64), b: (f64, f64)) -> f64 {
    let (bax, bay) = (b.0 - a.0, b.1 - a.1);
    let (pax, pay) = (p.0 - a.0, p.1 - a.1);
    let len2 = bax * bax + bay * bay;
    let h = if len2 > 1e-12 { ((pax * bax + pay * bay) / len2).clamp(0.0, 1.0) } else { 0.0 };
    let (dx, dy) = (pax - bax * h, pay - bay * h);
    (dx * dx + dy * dy).sqrt()
}

/// Closest approach between the ray `origin + s * dir` (s >= 0, `dir` unit) and the segment
/// `a`-`b`: (distance, s at the closest point).
pub fn ray_segment_distance(origin: Vec3, dir: Vec3, a: Vec3, b: Vec3) -> (f64, f64) {
    let ab = b - a;
    let ao = origin - a;
    let ab_len2 = ab.dot(ab);
    let d_ab = dir.dot(ab);
    let d_ao = dir.dot(ao);
    let ab_ao = ab.dot(ao);
    // Minimise |origin + s dir - (a + u ab)|² over s >= 0, 0 <= u <= 1.
    let denom = ab_len2 - d_ab * d_ab;
    let mut u = if denom > 1e-12 { ((ab_ao - d_ao * d_ab) / denom).clamp(0.0, 1.0) } else { 0.0 };
    let mut s = (u * d_ab - d_ao).max(0.0);
    if ab_len2 > 1e-12 {
        u = ((ab_ao + s * d_ab) / ab_len2).clamp(0.0, 1.0);
        s = (u * d_ab - d_ao).max(0.0);
    }
    let closest_ray = origin + dir * s;
    let closest_seg = a + ab * u;
    ((closest_ray - closest_seg).length(), s)
}

/// A 3x3 matrix product, row-major.
pub fn mat3_mul(a: &[[f64; 3]; 3], b: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
    let mut out = [[0.0; 3]; 3];
    for (i, row) in out.iter_mut().enumerate() {
        for (j, cell) in row.iter_mut().enumerate() {
            *cell = (0..3).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ray_segment_distance_finds_the_gap() {
        // A ray straight up from the origin passes 1 unit from a horizontal segment at x = 1.
        let (d, s) = ray_segment_distance(
            Vec3::ZERO,
            Vec3::UP,
            Vec3::new(1.0, -1.0, 2.0),
            Vec3::new(1.0, 1.0, 2.0),
        );
        assert!((d - 1.0).abs() < 1e-9, "{d}");
        assert!((s - 2.0).abs() < 1e-9, "{s}");
    }

    #[test]
    fn srgb_round_trip() {
        for byte in [0u8, 1, 40, 128, 200, 255] {
            let back = (linear_to_srgb(srgb_to_linear(byte)) * 255.0).round() as u8;
            assert_eq!(back, byte);
        }
    }
}
