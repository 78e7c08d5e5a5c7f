//! What the room and the camera add to the rendered scene: uneven light across the image,
//! vignetting, glare spots, lens blur, sensor noise, and the sRGB encoding of the final bytes.

use image::{Rgb, Rgb32FImage, RgbImage};
use imageproc::filter::gaussian_blur_f32;
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::math::linear_to_srgb;
use super::scene::Scene;

/// Brightness ramp, vignette and glare, applied to linear RGB in place. `reflective` (one per
/// pixel, 0..1, or empty for all 1) is how much of each pixel can show glare: not the hand.
pub fn apply_light_falloff_and_glare(linear: &mut [[f32; 3]], reflective: &[f32], scene: &Scene) {
    let (w, h) = (scene.width as usize, scene.height as usize);
    let light = &scene.lighting;
    let (cx, cy) = ((w as f64 - 1.0) / 2.0, (h as f64 - 1.0) / 2.0);
    let half_diagonal = (cx * cx + cy * cy).sqrt().max(1.0);
    let (gs, gc) = light.gradient_direction_deg.to_radians().sin_cos();
    let diagonal = 2.0 * half_diagonal;
    let warm_white = [1.0, 0.93, 0.82];
    for y in 0..h {
        for x in 0..w {
            let (dx, dy) = ((x as f64 - cx) / half_diagonal, (y as f64 - cy) / half_diagonal);
            let ramp = 1.0 + light.gradient_strength * (dx * gc + dy * gs);
            let vignette = 1.0 - light.vignette * (dx * dx + dy * dy);
            let gain = (ramp * vignette * light.exposure).max(0.0) as f32;
            let mut glare = 0.0;
            for spot in &scene.glare {
                let (sx, sy) = (spot.center[0] * w as f64, spot.center[1] * h as f64);
                let sigma = spot.radius * diagonal;
                let d2 = (x as f64 - sx).powi(2) + (y as f64 - sy).powi(2);
                if d2 < 16.0 * sigma * sigma {
                    // A bright core in a wider halo, like a lamp's reflection.
                    glare += spot.intensity * (0.6 * (-d2 / (2.0 * sigma * sigma)).exp() + 0.4 * (-d2 / (0.5 * sigma * sigma)).exp());
                }
            }
            let glare = glare * reflective.get(y * w + x).copied().unwrap_or(1.0) as f64;
            let px = &mut linear[y * w + x];
            for (c, tint) in px.iter_mut().zip(warm_white) {
                *c = *c * gain + (glare * tint) as f32;
            }
        }
    }
}

/// Highlights roll off instead of clipping hard, as a camera's tone curve does.
fn tone(c: f32) -> f32 {
    const KNEE: f32 = 0.8;
    if c <= KNEE {
        c.max(0.0)
    } else {
        KNEE + (1.0 - KNEE) * (1.0 - (-(c - KNEE) / (1.0 - KNEE)).exp())
    }
}

/// A table from linear intensity (0..1 in `SRGB_STEPS` steps) to sRGB levels (0..255).
const SRGB_STEPS: usize = 8192;

fn srgb_table() -> Vec<f32> {
    (0..=SRGB_STEPS).map(|i| (linear_to_srgb(i as f64 / SRGB_STEPS as f64) * 255.0) as f32).collect()
}

/// An approximately normal number (sum of four uniforms), mean 0, standard deviation 1.
fn gaussian(rng: &mut ChaCha8Rng) -> f32 {
    let bits = rng.next_u64();
    let sum: f32 = (0..4).map(|k| ((bits >> (16 * k)) & 0xFFFF) as f32 / 65535.0).sum();
    (sum - 2.0) * 3f32.sqrt()
}

/// Lens blur, tone curve, sRGB encoding and sensor noise: the bytes the camera delivers.
pub fn develop(linear: Vec<[f32; 3]>, scene: &Scene, noise_seed: u64) -> RgbImage {
    develop_image(linear, scene.width, scene.height, scene.blur_sigma, scene.noise_sigma, noise_seed)
}

/// [`develop`] for any renderer: `linear` is `width * height` pixels, row by row.
pub fn develop_image(linear: Vec<[f32; 3]>, w: u32, h: u32, blur_sigma: f64, noise_sigma: f64, noise_seed: u64) -> RgbImage {
    let mut buffer = Rgb32FImage::from_fn(w, h, |x, y| Rgb(linear[(y * w + x) as usize]));
    drop(linear);
    if blur_sigma > 0.0 {
        buffer = gaussian_blur_f32(&buffer, blur_sigma as f32);
    }
    let table = srgb_table();
    let encode = |c: f32| table[((tone(c) * SRGB_STEPS as f32) as usize).min(SRGB_STEPS)];
    let mut rng = ChaCha8Rng::seed_from_u64(noise_seed ^ 0x0015_E5E0_0000_0042);
    let sigma = noise_sigma as f32;
    let mut out = RgbImage::new(w, h);
    for (src, dst) in buffer.pixels().zip(out.pixels_mut()) {
        let levels = src.0.map(encode);
        if sigma > 0.0 {
            // Mostly brightness noise, some colour noise; brighter pixels are a little noisier
            // (shot noise).
            let brightness = (levels[0] + levels[1] + levels[2]) / (3.0 * 255.0);
            let scale = sigma * (0.6 + 0.6 * brightness.sqrt());
            let common = gaussian(&mut rng) * 0.8;
            for (c, level) in levels.iter().enumerate() {
                let own = gaussian(&mut rng) * 0.6;
                dst.0[c] = (level + scale * (common + own)).round().clamp(0.0, 255.0) as u8;
            }
        } else {
            dst.0 = levels.map(|l| l.round().clamp(0.0, 255.0) as u8);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::scene::{GlareSpot, Palette};

    #[test]
    fn tone_curve_is_monotonic_and_bounded() {
        let mut last = -1.0;
        for i in 0..400 {
            let v = tone(i as f32 * 0.01);
            assert!(v >= last && v < 1.0 + 1e-6);
            last = v;
        }
    }

    #[test]
    fn glare_brightens_its_spot_only() {
        let mut scene = Scene::overhead(Palette::FourColour, 64, 48);
        scene.glare = vec![GlareSpot { center: [0.25, 0.5], radius: 0.05, intensity: 1.0 }];
        let mut linear = vec![[0.2f32; 3]; 64 * 48];
        apply_light_falloff_and_glare(&mut linear, &[], &scene);
        assert!(linear[24 * 64 + 16][0] > 0.9);
        assert!((linear[24 * 64 + 60][0] - 0.2).abs() < 1e-3);
        // Not on the hand.
        let mut hand = vec![[0.2f32; 3]; 64 * 48];
        apply_light_falloff_and_glare(&mut hand, &vec![0.0; 64 * 48], &scene);
        assert!((hand[24 * 64 + 16][0] - 0.2).abs() < 1e-3);
    }

    #[test]
    fn noise_follows_its_seed() {
        let mut scene = Scene::overhead(Palette::FourColour, 32, 32);
        scene.noise_sigma = 5.0;
        let linear = vec![[0.3f32; 3]; 32 * 32];
        let a = develop(linear.clone(), &scene, 1);
        assert_eq!(a, develop(linear.clone(), &scene, 1));
        assert_ne!(a, develop(linear, &scene, 2));
    }
}
