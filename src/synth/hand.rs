//! The player's hand: a forearm, palm, fingers and thumb built from capsules (segments with a
//! radius), in the pose of someone pinching a man between thumb and fingers. It hides part of
//! the board, casts a soft shadow, and may hold a piece.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::error::{check_finite, check_range, SynthError};
use super::math::{ray_segment_distance, smoothstep, Vec3};
use super::scene::Rgb8;
use crate::draughts::{Color, Piece};

/// A few skin tones, light to dark.
pub const SKIN_TONES: [Rgb8; 5] = [[233, 190, 160], [221, 168, 130], [196, 140, 104], [150, 100, 70], [104, 68, 46]];

/// Where the hand is and what it does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hand {
    /// The board point (x = column axis, y = row axis, in squares; square (r, c) spans
    /// c..c+1, r..r+1) between the pinching fingertips.
    pub target: [f64; 2],
    /// The side the arm comes from, in board space: 0 = from White's edge (rows 7, 8), 90 = from
    /// the column-7 side, 180 = from Black's edge, 270 = from the column-0 side.
    pub approach_deg: f64,
    /// Height of the fingertips above the board, in squares.
    pub height: f64,
    pub left_handed: bool,
    pub skin: Rgb8,
    /// 1 = an adult hand on a board with 4.5 cm squares.
    pub size: f64,
    /// A piece between the fingers (`b`, `B`, `w`, `W`), its middle at fingertip height.
    pub held: Option<char>,
}

impl Hand {
    /// A right hand of the middle skin tone, fingertips at `target` just above a man's middle.
    pub fn reaching(target: [f64; 2], approach_deg: f64) -> Hand {
        Hand {
            target,
            approach_deg,
            height: 0.12,
            left_handed: false,
            skin: SKIN_TONES[2],
            size: 1.1,
            held: None,
        }
    }

    /// The side a player's arm comes from: Black sits at row 0, White at row 7.
    pub fn approach_for(player: Color) -> f64 {
        match player {
            Color::Black => 180.0,
            Color::White => 0.0,
        }
    }

    /// A random hand over the board (for tests and single frames): random square, side, skin.
    pub fn random(seed: u64) -> Hand {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x4A4D_0000_0000_0007);
        let target = [rng.gen_range(1.0..7.0), rng.gen_range(1.0..7.0)];
        let approach = rng.gen_range(0..4) as f64 * 90.0 + rng.gen_range(-35.0..35.0);
        Hand {
            target,
            approach_deg: approach,
            height: rng.gen_range(0.1..1.2),
            left_handed: rng.gen_bool(0.15),
            skin: SKIN_TONES[rng.gen_range(0..SKIN_TONES.len())],
            size: rng.gen_range(0.95..1.2),
            held: None,
        }
    }

    pub fn validate(&self) -> Result<(), SynthError> {
        check_range("hand.target[0]", self.target[0], -20.0, 28.0)?;
        check_range("hand.target[1]", self.target[1], -20.0, 28.0)?;
        check_finite("hand.approach_deg", self.approach_deg)?;
        check_range("hand.height", self.height, 0.0, 6.0)?;
        check_range("hand.size", self.size, 0.3, 2.0)?;
        if let Some(c) = self.held {
            if Piece::from_grid_char(c).is_none() {
                return Err(SynthError::BadHeldPiece(c));
            }
        }
        Ok(())
    }

    /// The 3-D capsules of the hand in this pose.
    pub(crate) fn model(&self) -> HandModel {
        let a = self.approach_deg.to_radians();
        let back = Vec3::new(a.sin(), a.cos(), 0.0);
        let handedness = if self.left_handed { -1.0 } else { 1.0 };
        let side = Vec3::new(-back.y, back.x, 0.0) * handedness;
        let origin = Vec3::new(self.target[0], self.target[1], self.height);
        let s = self.size;
        // Pose coordinates: (towards the arm, sideways with the thumb on the negative side, up),
        // in squares for a hand of size 1, relative to the point between the fingertips.
        let at = |b: f64, sd: f64, u: f64| origin + back * (b * s) + side * (sd * s) + Vec3::UP * (u * s);
        let mut capsules = Vec::with_capacity(20);
        let mut limb = |points: &[(f64, f64, f64)], radii: &[f64]| {
            for (i, pair) in points.windows(2).enumerate() {
                capsules.push(Capsule { a: at(pair[0].0, pair[0].1, pair[0].2), b: at(pair[1].0, pair[1].1, pair[1].2), radius: radii[i] * s });
            }
        };
        // Forearm, thickening away from the wrist and rising gently towards the player.
        limb(&[(2.3, 0.3, 1.4), (3.6, 0.33, 1.7), (6.0, 0.38, 2.4), (16.0, 0.45, 5.0)], &[0.46, 0.6, 0.7]);
        // Palm: three broad capsules from the knuckles back to the wrist.
        limb(&[(0.75, -0.2, 1.05), (2.3, 0.1, 1.4)], &[0.35]);
        limb(&[(0.75, 0.35, 1.0), (2.3, 0.4, 1.4)], &[0.37]);
        limb(&[(0.85, 0.78, 0.9), (2.1, 0.6, 1.3)], &[0.31]);
        // Index and middle fingers reach over the piece and come down on its far side.
        limb(&[(0.75, -0.25, 1.05), (0.05, -0.22, 0.85), (-0.5, -0.12, 0.05)], &[0.19, 0.16]);
        limb(&[(0.75, 0.18, 1.02), (0.0, 0.22, 0.8), (-0.5, 0.24, 0.05)], &[0.2, 0.17]);
        // Ring and little fingers curled under.
        limb(&[(0.8, 0.52, 0.97), (0.2, 0.6, 0.72), (0.15, 0.62, 0.28)], &[0.18, 0.16]);
        limb(&[(0.9, 0.82, 0.88), (0.42, 0.86, 0.62), (0.35, 0.86, 0.3)], &[0.16, 0.14]);
        // Thumb from the heel of the palm down to the piece's near side.
        limb(&[(1.9, -0.45, 1.1), (1.1, -0.64, 0.55), (0.5, -0.22, 0.05)], &[0.24, 0.19]);

        HandModel { capsules, shadow_boxes: Vec::new(), shadow_bounds: [f64::MAX, f64::MAX, f64::MIN, f64::MIN] }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Capsule {
    pub a: Vec3,
    pub b: Vec3,
    pub radius: f64,
}

impl Capsule {
    /// Distance along the unit ray `dir` from `origin` to the capsule's surface, if hit.
    pub fn intersect(&self, origin: Vec3, dir: Vec3) -> Option<f64> {
        // Inigo Quilez's ray-capsule intersection.
        let ba = self.b - self.a;
        let oa = origin - self.a;
        let baba = ba.dot(ba);
        let bard = ba.dot(dir);
        let baoa = ba.dot(oa);
        let rdoa = dir.dot(oa);
        let oaoa = oa.dot(oa);
        let a = baba - bard * bard;
        let b = baba * rdoa - baoa * bard;
        let c = baba * oaoa - baoa * baoa - self.radius * self.radius * baba;
        let h = b * b - a * c;
        if h < 0.0 {
            return None;
        }
        // Where along the axis the infinite cylinder is entered; a ray parallel to the axis
        // meets the cap it travels towards.
        let along = if a > 1e-12 {
            let t = (-b - h.sqrt()) / a;
            let y = baoa + t * bard;
            if y > 0.0 && y < baba {
                return (t > 0.0).then_some(t);
            }
            y
        } else if bard > 0.0 {
            -1.0
        } else {
            baba + 1.0
        };
        // The end caps.
        let oc = if along <= 0.0 { oa } else { origin - self.b };
        let b = dir.dot(oc);
        let c = oc.dot(oc) - self.radius * self.radius;
        let h = b * b - c;
        if h > 0.0 {
            let t = -b - h.sqrt();
            return (t > 0.0).then_some(t);
        }
        None
    }

    pub fn distance(&self, p: Vec3) -> f64 {
        let ba = self.b - self.a;
        let pa = p - self.a;
        let h = (pa.dot(ba) / ba.dot(ba).max(1e-12)).clamp(0.0, 1.0);
        (pa - ba * h).length() - self.radius
    }
}

/// The hand as geometry.
#[derive(Clone, Debug)]
pub(crate) struct HandModel {
    pub capsules: Vec<Capsule>,
    /// Board-plane box (x0, y0, x1, y1) where each capsule's shadow can fall, once the lamp is
    /// known ([`HandModel::light_from`]).
    shadow_boxes: Vec<[f64; 4]>,
    shadow_bounds: [f64; 4],
}

impl HandModel {
    /// A body of any pose made of these capsules (shadows not yet prepared).
    pub(crate) fn from_capsules(capsules: Vec<Capsule>) -> HandModel {
        HandModel { capsules, shadow_boxes: Vec::new(), shadow_bounds: [f64::MAX, f64::MAX, f64::MIN, f64::MIN] }
    }

    /// The nearest capsule the ray hits: (distance, capsule index).
    pub fn intersect(&self, origin: Vec3, dir: Vec3, candidates: impl Iterator<Item = usize>) -> Option<(f64, usize)> {
        let mut best: Option<(f64, usize)> = None;
        for i in candidates {
            if let Some(t) = self.capsules[i].intersect(origin, dir) {
                if best.is_none_or(|(bt, _)| t < bt) {
                    best = Some((t, i));
                }
            }
        }
        best
    }

    /// Signed distance to the hand with the capsules blended smoothly where they meet.
    fn blended_distance(&self, p: Vec3) -> f64 {
        // Polynomial smooth minimum (blend width in squares).
        const BLEND: f64 = 0.12;
        let mut d = f64::MAX;
        for c in &self.capsules {
            let e = c.distance(p);
            if d == f64::MAX {
                d = e;
            } else {
                let h = (0.5 + 0.5 * (e - d) / BLEND).clamp(0.0, 1.0);
                d = e + (d - e) * h - BLEND * h * (1.0 - h);
            }
        }
        d
    }

    /// Surface normal at a point on the hand, from the blended shape: the creases where two
    /// capsules meet shade like skin over a joint instead of like a mannequin's.
    pub fn smooth_normal(&self, p: Vec3) -> Vec3 {
        const E: f64 = 0.01;
        let k = [Vec3::new(1.0, -1.0, -1.0), Vec3::new(-1.0, -1.0, 1.0), Vec3::new(-1.0, 1.0, -1.0), Vec3::new(1.0, 1.0, 1.0)];
        let mut n = Vec3::ZERO;
        for dir in k {
            n += dir * self.blended_distance(p + dir * E);
        }
        n.normalized()
    }

    /// Prepares the shadows for a lamp at `lamp`, falling on surfaces from `floor` (the table)
    /// up: each capsule's shadow lies between its ends and their projections from the lamp
    /// onto the floor, widened by its radius and the penumbra.
    pub fn light_from(&mut self, lamp: Vec3, floor: f64) {
        let project = |e: Vec3| {
            let drop = (lamp.z - e.z).max(0.05);
            let k = (e.z - floor).max(0.0) / drop;
            (e.x + (e.x - lamp.x) * k, e.y + (e.y - lamp.y) * k, (e.z - floor).max(0.0) / drop * (lamp - e).length())
        };
        self.shadow_boxes = self
            .capsules
            .iter()
            .map(|c| {
                let (ax, ay, reach_a) = project(c.a);
                let (bx, by, reach_b) = project(c.b);
                let pad = c.radius * 1.3 + 0.05 + PENUMBRA_BASE + PENUMBRA_GROWTH * reach_a.max(reach_b);
                [
                    ax.min(bx).min(c.a.x).min(c.b.x) - pad,
                    ay.min(by).min(c.a.y).min(c.b.y) - pad,
                    ax.max(bx).max(c.a.x).max(c.b.x) + pad,
                    ay.max(by).max(c.a.y).max(c.b.y) + pad,
                ]
            })
            .collect();
        self.shadow_bounds = self.shadow_boxes.iter().fold([f64::MAX, f64::MAX, f64::MIN, f64::MIN], |b, s| {
            [b[0].min(s[0]), b[1].min(s[1]), b[2].max(s[2]), b[3].max(s[3])]
        });
    }

    /// How much of the lamp's light reaches `p` past the hand (1 = all), with a penumbra that
    /// widens with the distance to the hand, as under a real lamp. Needs
    /// [`HandModel::light_from`] first (without it, nothing is shaded).
    pub fn light_passing(&self, p: Vec3, to_light: Vec3) -> f64 {
        let inside = |b: &[f64; 4]| p.x >= b[0] && p.x <= b[2] && p.y >= b[1] && p.y <= b[3];
        if !inside(&self.shadow_bounds) {
            return 1.0;
        }
        let mut light: f64 = 1.0;
        for (c, b) in self.capsules.iter().zip(&self.shadow_boxes) {
            if !inside(b) {
                continue;
            }
            let (distance, along) = ray_segment_distance(p, to_light, c.a, c.b);
            let penumbra = PENUMBRA_BASE + PENUMBRA_GROWTH * along;
            light = light.min(smoothstep(-penumbra, penumbra, distance - c.radius));
            if light <= 0.0 {
                break;
            }
        }
        light
    }
}

/// Half-width of the hand's shadow edge right under it, and its growth per square of distance.
const PENUMBRA_BASE: f64 = 0.03;
const PENUMBRA_GROWTH: f64 = 0.09;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capsule_hit_from_above() {
        let c = Capsule { a: Vec3::new(-1.0, 0.0, 1.0), b: Vec3::new(1.0, 0.0, 1.0), radius: 0.5 };
        let t = c.intersect(Vec3::new(0.0, 0.0, 10.0), -Vec3::UP).unwrap();
        assert!((t - 8.5).abs() < 1e-9);
        // The rounded end.
        let t = c.intersect(Vec3::new(1.3, 0.0, 10.0), -Vec3::UP).unwrap();
        assert!((t - (9.0 - (0.25f64 - 0.09).sqrt())).abs() < 1e-9, "{t}");
        assert!(c.intersect(Vec3::new(2.0, 0.0, 10.0), -Vec3::UP).is_none());
    }

    #[test]
    fn hand_shades_the_board_under_it() {
        let mut hand = Hand::reaching([4.0, 4.0], 0.0).model();
        hand.light_from(Vec3::new(4.0, 4.0, 30.0), -0.3);
        // Straight under the palm, lamp overhead.
        assert!(hand.light_passing(Vec3::new(4.2, 5.2, 0.0), Vec3::UP) < 0.05);
        assert_eq!(hand.light_passing(Vec3::new(0.5, 0.5, 0.0), Vec3::UP), 1.0);
    }

    #[test]
    fn bad_hands_are_rejected() {
        let mut hand = Hand::reaching([4.0, 4.0], 0.0);
        hand.height = -1.0;
        assert!(hand.validate().unwrap_err().to_string().contains("hand.height"));
        hand.height = 0.5;
        hand.held = Some('x');
        assert!(hand.validate().is_err());
    }
}
