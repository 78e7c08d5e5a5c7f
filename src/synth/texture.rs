//! Procedural textures (wood grain, cloth, speckle) from integer hashing: no images to ship, and
//! the same seed gives the same texture on every machine.

use std::f64::consts::TAU;

/// A well-mixed 64-bit hash (SplitMix64's finalizer).
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Hash of a lattice point and a seed, as a number in [0, 1).
fn lattice(ix: i64, iy: i64, seed: u64) -> f64 {
    let h = mix64(seed ^ (ix as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (iy as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F));
    (h >> 11) as f64 / (1u64 << 53) as f64
}

/// A uniform number in [0, 1) for an integer key (e.g. a square) and a seed.
pub fn hash_unit(key: u64, seed: u64) -> f64 {
    (mix64(key.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ mix64(seed)) >> 11) as f64 / (1u64 << 53) as f64
}

/// Smooth value noise in [-1, 1].
pub fn value_noise(x: f64, y: f64, seed: u64) -> f64 {
    let (fx, fy) = (x.floor(), y.floor());
    let (ix, iy) = (fx as i64, fy as i64);
    let (tx, ty) = (x - fx, y - fy);
    let (sx, sy) = (tx * tx * (3.0 - 2.0 * tx), ty * ty * (3.0 - 2.0 * ty));
    let a = lattice(ix, iy, seed);
    let b = lattice(ix + 1, iy, seed);
    let c = lattice(ix, iy + 1, seed);
    let d = lattice(ix + 1, iy + 1, seed);
    let top = a + (b - a) * sx;
    let bottom = c + (d - c) * sx;
    (top + (bottom - top) * sy) * 2.0 - 1.0
}

/// Fractal noise: `octaves` layers of value noise, each twice as fine and half as strong.
pub fn fbm(x: f64, y: f64, seed: u64, octaves: u32) -> f64 {
    let (mut sum, mut amplitude, mut frequency, mut norm) = (0.0, 1.0, 1.0, 0.0);
    for octave in 0..octaves {
        sum += amplitude * value_noise(x * frequency, y * frequency, seed.wrapping_add(octave as u64 * 7919));
        norm += amplitude;
        amplitude *= 0.5;
        frequency *= 2.0;
    }
    sum / norm
}

/// Wood grain in [-1, 1] for a plank whose grain runs along `along` (the other coordinate is
/// `across`), features about `scale` squares long: long streaks with wavy growth rings.
pub fn wood(along: f64, across: f64, scale: f64, seed: u64) -> f64 {
    let (u, v) = (along / scale, across / scale);
    let warp = 1.6 * fbm(u * 0.35, v * 1.2, seed, 3);
    let rings = (TAU * (v * 5.0 + warp)).sin();
    let streaks = fbm(u * 0.6, v * 14.0, seed ^ 0xA5A5, 2);
    (0.55 * rings + 0.45 * streaks).clamp(-1.0, 1.0)
}

/// End grain as on the top of a wooden man: rings around a point off the piece's centre.
pub fn end_grain(dx: f64, dy: f64, seed: u64) -> f64 {
    let ox = hash_unit(1, seed) * 1.6 - 0.8;
    let oy = hash_unit(2, seed) * 1.6 - 0.8;
    let r = ((dx - ox).powi(2) + (dy - oy).powi(2)).sqrt();
    let warp = 0.5 * fbm(dx * 3.0, dy * 3.0, seed, 2);
    0.7 * (TAU * (r * 9.0 + warp)).sin() + 0.3 * fbm(dx * 12.0, dy * 12.0, seed ^ 0x5A5A, 2)
}

/// Marble in [0, 1], 1 on a vein: turbulent veins running across the stone at `angle` (radians)
/// about `spacing` squares apart.
pub fn marble(x: f64, y: f64, angle: f64, spacing: f64, seed: u64) -> f64 {
    let (u, v) = (x / spacing, y / spacing);
    let along = u * angle.cos() + v * angle.sin();
    let turbulence = 1.8 * fbm(u * 1.3, v * 1.3, seed, 4);
    let phase = std::f64::consts::PI * (along + turbulence);
    // Veins of every width, over broad bands of the stone's two shades and a cloudiness.
    let vein = (1.0 - phase.sin().abs()).powi(4);
    let band = 0.5 + 0.5 * (0.5 * phase).sin();
    let cloud = 0.5 + 0.5 * fbm(u * 2.0, v * 2.0, seed ^ 0x3C3C, 3);
    (0.55 * vein + 0.3 * band + 0.15 * cloud).clamp(0.0, 1.0)
}

/// Woven cloth in [-1, 1]: a fine weave over soft blotches.
pub fn cloth(x: f64, y: f64, scale: f64, seed: u64) -> f64 {
    let weave = (x * 60.0 / scale).sin() * (y * 60.0 / scale).sin();
    let blotch = fbm(x / scale, y / scale, seed, 3);
    (0.35 * weave + 0.65 * blotch).clamp(-1.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noise_stays_in_range_and_repeats() {
        for i in 0..500 {
            let (x, y) = (i as f64 * 0.37 - 50.0, i as f64 * 0.91 - 20.0);
            let n = fbm(x, y, 3, 4);
            assert!((-1.0..=1.0).contains(&n));
            assert_eq!(n, fbm(x, y, 3, 4));
            assert!((-1.0..=1.0).contains(&wood(x, y, 1.0, 9)));
            assert!((0.0..=1.0).contains(&marble(x, y, 0.7, 0.8, 9)));
        }
    }

    #[test]
    fn marble_has_veins_across_a_square() {
        // Across one square the stone goes from its ground to a vein, as a man's edge would.
        let values: Vec<f64> = (0..400).map(|i| marble((i % 20) as f64 / 20.0, (i / 20) as f64 / 20.0, 0.4, 0.8, 3)).collect();
        let (lo, hi) = values.iter().fold((1.0f64, 0.0f64), |(lo, hi), &v| (lo.min(v), hi.max(v)));
        assert!(hi - lo > 0.4, "marble too even: {lo:.2}..{hi:.2}");
        assert_ne!(marble(0.3, 0.3, 0.4, 0.8, 3), marble(0.3, 0.3, 0.4, 0.8, 4));
    }
}
