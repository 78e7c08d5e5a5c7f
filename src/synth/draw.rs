//! The ray caster: for every pixel, the ray through it meets the table, the board slab, a piece
//! (a vertical cylinder) or the hand (capsules), and is shaded by a warm lamp with soft shadows.
//! Pixels on an edge between two surfaces are sampled four more times (anti-aliasing); the rest
//! once. The result is linear RGB, before the camera effects of `effects.rs`.

use super::camera::{Camera, BOARD_CENTER};
use super::hand::{Hand, HandModel};
use super::math::{rgb_to_linear, segment_distance_2d, smoothstep, Vec3};
use super::scene::{Palette, Scene, TableKind};
use super::texture::{cloth, end_grain, fbm, hash_unit, marble, wood};

/// Distance of the lamp from the board's centre, in squares: close enough to light the board
/// unevenly, as a desk lamp does.
const LAMP_DISTANCE: f64 = 30.0;
/// Image tiles for the candidate lists of pieces and hand parts.
const TILE: usize = 16;

/// One piece as a cylinder.
#[derive(Clone, Debug)]
pub(crate) struct PieceBody {
    /// The board square it stands on (`None` for one held in the hand).
    pub square: Option<(u8, u8)>,
    pub grid_char: char,
    pub center: (f64, f64),
    pub base: f64,
    pub top: f64,
    pub radius: f64,
    pub albedo: Vec3,
    pub wooden: bool,
    /// The lower man of a stacked king (the truth reports the stack once, by its upper man).
    pub under_another: bool,
    pub grain_seed: u64,
}

impl PieceBody {
    pub fn top_center(&self) -> Vec3 {
        Vec3::new(self.center.0, self.center.1, self.top)
    }

    /// (distance, hit the top face) of the ray's first meeting with the cylinder.
    fn intersect(&self, o: Vec3, d: Vec3) -> Option<(f64, bool)> {
        let (dx, dy) = (o.x - self.center.0, o.y - self.center.1);
        let r2 = self.radius * self.radius;
        let mut best: Option<(f64, bool)> = None;
        if d.z < 0.0 {
            let t = (self.top - o.z) / d.z;
            let (px, py) = (dx + t * d.x, dy + t * d.y);
            if t > 0.0 && px * px + py * py <= r2 {
                best = Some((t, true));
            }
        }
        let a = d.x * d.x + d.y * d.y;
        if a > 1e-12 {
            let b = dx * d.x + dy * d.y;
            let c = dx * dx + dy * dy - r2;
            let disc = b * b - a * c;
            if disc >= 0.0 {
                let t = (-b - disc.sqrt()) / a;
                let z = o.z + t * d.z;
                if t > 0.0 && z >= self.base && z <= self.top && best.is_none_or(|(bt, _)| t < bt) {
                    best = Some((t, false));
                }
            }
        }
        best
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Surface {
    Nothing,
    Table,
    BoardTop,
    BoardSide(Vec3),
    PieceTop(usize),
    PieceSide(usize),
    Hand,
}

/// What a pixel sees: everything the shading and the truth need.
struct Hit {
    t: f64,
    surface: Surface,
}

/// A veined stone board's veins, the same over the whole board (drawn once from the scene).
struct Stone {
    strength: f64,
    angle: f64,
    spacing: f64,
    seed: u64,
}

impl Stone {
    fn new(strength: f64, texture_seed: u64) -> Stone {
        let seed = texture_seed ^ 0x3A2B_1E00;
        Stone { strength, angle: hash_unit(0, seed) * std::f64::consts::PI, spacing: 0.6 + hash_unit(1, seed) * 1.2, seed }
    }
}

/// The scene as geometry and materials.
pub(crate) struct World {
    pub camera: Camera,
    pub pieces: Vec<PieceBody>,
    pub hand: Option<HandModel>,
    hand_albedo: Vec3,
    half: f64,
    thickness: f64,
    inlay: bool,
    grain: f64,
    wooden: bool,
    veneer: bool,
    key_border: bool,
    stone: Option<Stone>,
    grooves: u8,
    light_square: Vec3,
    dark_square: Vec3,
    frame: Vec3,
    table: Vec3,
    table_kind: TableKind,
    table_scale: f64,
    texture_seed: u64,
    lamp: Vec3,
    lamp_color: Vec3,
    ambient_color: Vec3,
    ambient: f64,
    lamp_norm: f64,
    /// Board-plane box each piece's shadow can reach, for a quick rejection.
    shadow_boxes: Vec<[f64; 4]>,
}

/// Per-pixel results of a render.
pub(crate) struct Rendered {
    /// Linear RGB, row-major.
    pub linear: Vec<[f32; 3]>,
    /// For each square: pixels whose ray crosses its area, and how many of those see the hand.
    pub square_pixels: [[u32; 8]; 8],
    pub hand_pixels: [[u32; 8]; 8],
    /// Pixels anywhere in the image showing the hand or a piece it holds.
    pub hand_in_image: u32,
    /// Per pixel, the share of it that shows the board, pieces or table rather than the hand:
    /// reflections (glare) of the room on the board do not show on the hand above it.
    pub reflective: Vec<f32>,
}

fn warm_light(warmth: f64) -> Vec3 {
    let c = Vec3::new(1.0, 1.0, 1.0).lerp(Vec3::new(1.0, 0.76, 0.5), warmth);
    c * (1.0 / c.luminance())
}

impl World {
    pub fn new(scene: &Scene, camera: Camera, pieces: Vec<PieceBody>, hand: Option<&Hand>) -> World {
        let light = &scene.lighting;
        let (az, el) = (light.azimuth_deg.to_radians(), light.elevation_deg.to_radians());
        let lamp = BOARD_CENTER + Vec3::new(el.cos() * az.cos(), el.cos() * az.sin(), el.sin()) * LAMP_DISTANCE;
        let lamp_color = warm_light(light.warmth);
        let ambient_color = warm_light(light.warmth * 0.6);
        let colors = &scene.colors;
        let mut world = World {
            camera,
            pieces,
            hand: hand.map(Hand::model),
            hand_albedo: hand.map_or(Vec3::ZERO, |h| rgb_to_linear(h.skin)),
            half: 4.0 + scene.board.frame_width,
            thickness: scene.board.thickness,
            inlay: scene.board.inlay,
            grain: scene.board.grain,
            wooden: scene.palette == Palette::Wooden,
            veneer: scene.board.veneer,
            key_border: scene.board.key_border,
            stone: (scene.board.marble > 0.0).then(|| Stone::new(scene.board.marble, scene.texture_seed)),
            grooves: scene.pieces.grooves,
            light_square: rgb_to_linear(colors.light_square),
            dark_square: rgb_to_linear(colors.dark_square),
            frame: rgb_to_linear(colors.frame),
            table: rgb_to_linear(colors.table),
            table_kind: scene.table.kind,
            table_scale: scene.table.grain_scale,
            texture_seed: scene.texture_seed,
            lamp,
            lamp_color,
            ambient_color,
            ambient: light.ambient,
            lamp_norm: LAMP_DISTANCE * LAMP_DISTANCE,
            shadow_boxes: Vec::new(),
        };
        world.shadow_boxes = world.pieces.iter().map(|p| world.shadow_box(p)).collect();
        let floor = -world.thickness;
        if let Some(hand) = world.hand.as_mut() {
            hand.light_from(lamp, floor);
        }
        world
    }

    /// Offset on the board plane, per unit of height, of a shadow cast towards `p` from the lamp.
    fn shadow_offset(&self, p: Vec3) -> (f64, f64) {
        let l = self.lamp - p;
        let rise = l.z.max(0.05);
        (-l.x / rise, -l.y / rise)
    }

    fn shadow_box(&self, piece: &PieceBody) -> [f64; 4] {
        let c = Vec3::new(piece.center.0, piece.center.1, 0.0);
        let (ox, oy) = self.shadow_offset(c);
        let reach = piece.radius + 0.3 + piece.top * 0.15;
        let xs = [c.x + ox * piece.base, c.x + ox * piece.top];
        let ys = [c.y + oy * piece.base, c.y + oy * piece.top];
        [xs[0].min(xs[1]) - reach, ys[0].min(ys[1]) - reach, xs[0].max(xs[1]) + reach, ys[0].max(ys[1]) + reach]
    }

    fn trace(&self, o: Vec3, d: Vec3, pieces: &[u16], capsules: &[u16]) -> Hit {
        let mut best = Hit { t: f64::INFINITY, surface: Surface::Nothing };
        if d.z < 0.0 {
            best = Hit { t: (-self.thickness - o.z) / d.z, surface: Surface::Table };
            let t = -o.z / d.z;
            let p = o + d * t;
            if (p.x - 4.0).abs() <= self.half && (p.y - 4.0).abs() <= self.half {
                best = Hit { t, surface: Surface::BoardTop };
            }
        }
        // The slab's sides, where the camera is beyond them.
        for (axis, sign) in [(0, 1.0), (0, -1.0), (1, 1.0), (1, -1.0)] {
            let (oa, da) = if axis == 0 { (o.x, d.x) } else { (o.y, d.y) };
            let plane = 4.0 + sign * self.half;
            if (oa - plane) * sign <= 0.0 || da * sign >= 0.0 {
                continue;
            }
            let t = (plane - oa) / da;
            if t >= best.t {
                continue;
            }
            let p = o + d * t;
            let other = if axis == 0 { p.y } else { p.x };
            if p.z <= 0.0 && p.z >= -self.thickness && (other - 4.0).abs() <= self.half {
                let normal = if axis == 0 { Vec3::new(sign, 0.0, 0.0) } else { Vec3::new(0.0, sign, 0.0) };
                best = Hit { t, surface: Surface::BoardSide(normal) };
            }
        }
        for &i in pieces {
            if let Some((t, top)) = self.pieces[i as usize].intersect(o, d) {
                if t < best.t {
                    let i = i as usize;
                    best = Hit { t, surface: if top { Surface::PieceTop(i) } else { Surface::PieceSide(i) } };
                }
            }
        }
        if let Some(hand) = &self.hand {
            if let Some((t, _)) = hand.intersect(o, d, capsules.iter().map(|&c| c as usize)) {
                if t < best.t {
                    best = Hit { t, surface: Surface::Hand };
                }
            }
        }
        best
    }

    /// Lamp plus ambient light on a surface point.
    #[allow(clippy::too_many_arguments)]
    fn light(&self, p: Vec3, n: Vec3, view: Vec3, albedo: Vec3, gloss: (f64, f64), shadow: f64, occlusion: f64, wrap: f64) -> Vec3 {
        let to_lamp = self.lamp - p;
        let dist2 = to_lamp.dot(to_lamp);
        let l = to_lamp * (1.0 / dist2.sqrt());
        let falloff = self.lamp_norm / dist2;
        let diffuse = ((n.dot(l) + wrap) / (1.0 + wrap)).max(0.0) * falloff * shadow;
        let (strength, shininess) = gloss;
        let half = (l + view).normalized();
        let alignment = n.dot(half);
        // Far from the mirror direction the highlight is nil: skip the power.
        let specular = if alignment > 0.5 { strength * alignment.powf(shininess) * falloff * shadow } else { 0.0 };
        let received = self.ambient_color * (self.ambient * occlusion) + self.lamp_color * ((1.0 - self.ambient) * 1.15 * diffuse);
        albedo.mul(received) + self.lamp_color * specular
    }

    fn hand_light(&self, p: Vec3) -> f64 {
        match &self.hand {
            Some(hand) => hand.light_passing(p, (self.lamp - p).normalized()),
            None => 1.0,
        }
    }

    /// Light reaching a point on the board's surface past the pieces, and the darkening at their
    /// feet.
    fn piece_shadows(&self, p: Vec3) -> (f64, f64) {
        let (ox, oy) = self.shadow_offset(p);
        let (mut light, mut occlusion) = (1.0f64, 1.0f64);
        for (piece, b) in self.pieces.iter().zip(&self.shadow_boxes) {
            if p.x < b[0] || p.x > b[2] || p.y < b[1] || p.y > b[3] {
                continue;
            }
            let (cx, cy) = piece.center;
            let from = (cx + ox * piece.base, cy + oy * piece.base);
            let to = (cx + ox * piece.top, cy + oy * piece.top);
            let penumbra = 0.03 + 0.12 * (piece.base + piece.top) * 0.5;
            let edge = segment_distance_2d((p.x, p.y), from, to) - piece.radius;
            light = light.min(smoothstep(-penumbra, penumbra, edge));
            if piece.base < 0.01 {
                let gap = ((p.x - cx).powi(2) + (p.y - cy).powi(2)).sqrt() - piece.radius;
                occlusion = occlusion.min(1.0 - 0.4 * (1.0 - smoothstep(0.0, 0.12, gap)));
            }
        }
        (light, occlusion)
    }

    /// Colour of the board's top surface at (x, y), and an id that changes at every colour edge.
    fn board_albedo(&self, x: f64, y: f64) -> (Vec3, u32) {
        if (0.0..8.0).contains(&x) && (0.0..8.0).contains(&y) {
            let (row, col) = (y.floor() as u64, x.floor() as u64);
            let square = row * 8 + col;
            let dark = (row + col) % 2 == 1;
            let mut base = if dark { self.dark_square } else { self.light_square };
            if let Some(stone) = &self.stone {
                // Each square is cut from another part of the stone; the veins go towards mid
                // grey, darker than light squares and lighter than dark ones.
                let (dx, dy) = (hash_unit(square, stone.seed) * 40.0, hash_unit(square + 64, stone.seed) * 40.0);
                base = base.lerp(Vec3::splat(0.2), stone.strength * marble(x + dx, y + dy, stone.angle, stone.spacing, stone.seed));
            }
            let mut shade = 1.0;
            if self.grain > 0.0 {
                // Veneer squares have their grain turned alternately.
                let seed = self.texture_seed ^ square.wrapping_mul(0x51);
                let shift = hash_unit(square, self.texture_seed) * 50.0;
                let g = if dark { wood(y + shift, x, 0.9, seed) } else { wood(x + shift, y, 0.9, seed) };
                shade *= 1.0 + self.grain * g;
            }
            if self.veneer {
                // The seam between two veneer squares.
                let fx = x - x.floor();
                let fy = y - y.floor();
                let seam = fx.min(1.0 - fx).min(fy).min(1.0 - fy);
                shade *= 0.9 + 0.1 * smoothstep(0.0, 0.012, seam);
            }
            return (base * shade, 100 + square as u32);
        }
        let outside = (x - 4.0).abs().max((y - 4.0).abs()) - 4.0;
        if self.inlay && outside < 0.05 {
            return (self.dark_square * 0.55, 11);
        }
        if self.key_border && (0.04..0.2).contains(&outside) {
            return (self.key_pattern(x, y, (outside - 0.04) / 0.16), 12);
        }
        // The frame's grain runs along each side.
        let along_x = (y - 4.0).abs() > (x - 4.0).abs();
        let g = if along_x { wood(x, y, 1.4, self.texture_seed ^ 0xF4A3) } else { wood(y, x, 1.4, self.texture_seed ^ 0xF4A5) };
        (self.frame * (1.0 + self.grain.max(0.06) * 1.3 * g), 10)
    }

    /// The printed border: a cream band between two dark lines with a meander along it;
    /// `across` runs 0..1 over the band's width.
    fn key_pattern(&self, x: f64, y: f64, across: f64) -> Vec3 {
        let cream = self.light_square * 0.95;
        let ink = self.dark_square;
        let along = if (y - 4.0).abs() > (x - 4.0).abs() { x } else { y };
        let period = (along * 7.0).rem_euclid(1.0);
        let line = |lo: f64, hi: f64| (lo..hi).contains(&across);
        let meander = (line(0.3, 0.4) && period < 0.75)
            || (line(0.6, 0.7) && (0.25..1.0).contains(&period))
            || (line(0.3, 0.7) && ((0.0..0.08).contains(&period) || (0.67..0.75).contains(&period)));
        if line(0.0, 0.1) || line(0.9, 1.0) || meander {
            ink
        } else {
            cream
        }
    }

    fn table_albedo(&self, x: f64, y: f64) -> Vec3 {
        let angle = hash_unit(3, self.texture_seed) * std::f64::consts::PI;
        let (s, c) = angle.sin_cos();
        let (u, v) = (x * c - y * s, x * s + y * c);
        let scale = self.table_scale;
        match self.table_kind {
            TableKind::Wood => {
                let plank_width = 3.0 * scale;
                let plank = (v / plank_width).floor();
                let within = v / plank_width - plank;
                let seed = self.texture_seed ^ (plank as i64 as u64).wrapping_mul(0x2545_F491);
                let tone = 1.0 + 0.12 * (hash_unit(plank as i64 as u64, self.texture_seed) - 0.5);
                let g = wood(u + hash_unit(9, seed) * 40.0, v, 1.2 * scale, seed);
                let seam = 0.55 + 0.45 * smoothstep(0.0, 0.02, within.min(1.0 - within));
                self.table * (tone * (1.0 + 0.16 * g) * seam)
            }
            TableKind::Cloth => self.table * (1.0 + 0.1 * cloth(u, v, scale, self.texture_seed)),
            TableKind::Checked => {
                let odd = ((u / scale).floor() + (v / scale).floor()).rem_euclid(2.0) == 1.0;
                let weave = 1.0 + 0.05 * cloth(u, v, 0.3, self.texture_seed);
                if odd {
                    Vec3::new(0.85, 0.84, 0.8) * weave
                } else {
                    self.table * weave
                }
            }
        }
    }

    /// Colour seen along the ray, and an id of the surface (for finding edges).
    fn shade(&self, o: Vec3, d: Vec3, hit: &Hit) -> (Vec3, u32) {
        let p = o + d * hit.t;
        let view = -d;
        match hit.surface {
            Surface::Nothing => (Vec3::splat(0.02), 0),
            Surface::Table => {
                let albedo = self.table_albedo(p.x, p.y);
                // The board's shadow and the dark gap under its edge.
                let (ox, oy) = self.shadow_offset(p);
                let lift = self.thickness;
                let (qx, qy) = (p.x - ox * lift, p.y - oy * lift);
                let outside = |x: f64, y: f64| {
                    let (ex, ey) = ((x - 4.0).abs() - self.half, (y - 4.0).abs() - self.half);
                    let out = (ex.max(0.0).powi(2) + ey.max(0.0).powi(2)).sqrt();
                    out + ex.max(ey).min(0.0)
                };
                let penumbra = 0.05 + 0.15 * lift;
                let shadow = smoothstep(-penumbra, penumbra, outside(qx, qy)) * self.hand_light(p);
                let occlusion = 0.55 + 0.45 * smoothstep(0.0, 0.35, outside(p.x, p.y));
                (self.light(p, Vec3::UP, view, albedo, (0.03, 8.0), shadow, occlusion, 0.0), 1)
            }
            Surface::BoardTop => {
                let (albedo, id) = self.board_albedo(p.x, p.y);
                let (piece_light, occlusion) = self.piece_shadows(p);
                let shadow = piece_light * self.hand_light(p);
                let gloss = match (self.wooden, self.veneer) {
                    // Polished stone.
                    _ if self.stone.is_some() => (0.2, 60.0),
                    (_, true) => (0.12, 30.0),
                    // The real set's board is glossy printed card.
                    (true, false) => (0.16, 45.0),
                    (false, false) => (0.07, 24.0),
                };
                (self.light(p, Vec3::UP, view, albedo, gloss, shadow, occlusion, 0.0), id)
            }
            Surface::BoardSide(normal) => {
                let along = if normal.x != 0.0 { p.y } else { p.x };
                let g = wood(along, p.z * 3.0, 1.0, self.texture_seed ^ 0x51DE);
                let albedo = self.frame * (0.8 * (1.0 + 0.1 * g));
                let shadow = self.hand_light(p);
                let id = 2 + (normal.x.max(0.0) + 2.0 * normal.y.abs() + normal.y.max(0.0)) as u32;
                (self.light(p, normal, view, albedo, (0.05, 16.0), shadow, 0.9, 0.0), id)
            }
            Surface::PieceTop(i) => (self.shade_piece_top(&self.pieces[i], p, view), 1000 + 2 * i as u32),
            Surface::PieceSide(i) => (self.shade_piece_side(&self.pieces[i], p, view), 1001 + 2 * i as u32),
            Surface::Hand => {
                let n = self.hand.as_ref().map_or(Vec3::UP, |hand| hand.smooth_normal(p));
                let mottle = 1.0 + 0.05 * fbm(p.x * 4.0, p.y * 4.0 + p.z * 3.0, 77, 2);
                // Skin scatters light: wrap-around diffuse, a weak broad sheen.
                (self.light(p, n, view, self.hand_albedo * mottle, (0.06, 10.0), 1.0, 1.0, 0.35), 5000)
            }
        }
    }

    fn piece_gloss(&self, piece: &PieceBody) -> (f64, f64) {
        if piece.wooden {
            // Oiled wood: a soft, small sheen (a broad one greys the dark men).
            (0.05, 40.0)
        } else {
            (0.35, 60.0)
        }
    }

    fn shade_piece_top(&self, piece: &PieceBody, p: Vec3, view: Vec3) -> Vec3 {
        let (dx, dy) = ((p.x - piece.center.0) / piece.radius, (p.y - piece.center.1) / piece.radius);
        let r = (dx * dx + dy * dy).sqrt();
        let radial = if r > 1e-9 { Vec3::new(dx / r, dy / r, 0.0) } else { Vec3::ZERO };
        // The rounded rim: the normal turns outwards over the last part of the radius.
        let rim = smoothstep(0.84, 1.0, r);
        let n = (Vec3::UP * (1.0 - 0.8 * rim) + radial * rim).normalized();
        let groove = |at: f64, width: f64, depth: f64| 1.0 - depth * (-((r - at) / width).powi(2)).exp();
        let mut albedo = piece.albedo;
        let mut n = n;
        if piece.wooden {
            albedo = albedo * (1.0 + 0.13 * end_grain(dx, dy, piece.grain_seed));
            // Turned grooves: each darkens and tilts the surface on its two flanks.
            let count = self.grooves.max(1) as f64;
            let (width, depth) = (0.22 / (count + 1.0), 0.35);
            for k in 1..=self.grooves.max(1) {
                let at = 0.9 * k as f64 / (count + 0.5);
                let x = (r - at) / width;
                let profile = (-x * x).exp();
                albedo = albedo * (1.0 - depth * profile);
                n = (n + radial * (1.2 * x * profile)).normalized();
            }
        } else {
            albedo = albedo * (groove(0.68, 0.035, 0.22) * groove(0.38, 0.03, 0.12));
        }
        let shadow = self.hand_light(p);
        self.light(p, n, view, albedo, self.piece_gloss(piece), shadow, 1.0, 0.0)
    }

    fn shade_piece_side(&self, piece: &PieceBody, p: Vec3, view: Vec3) -> Vec3 {
        let (dx, dy) = (p.x - piece.center.0, p.y - piece.center.1);
        let radial = Vec3::new(dx, dy, 0.0).normalized();
        let tangent = Vec3::new(-radial.y, radial.x, 0.0);
        let angle = dy.atan2(dx);
        let mut n = radial;
        let mut albedo = piece.albedo;
        if piece.wooden {
            albedo = albedo * (1.0 + 0.1 * wood(p.z * 8.0, angle * 2.0, 1.0, piece.grain_seed));
        } else {
            // Moulded ridges round the edge.
            n = (n + tangent * (0.18 * (angle * 36.0).sin())).normalized();
        }
        let top_round = smoothstep(piece.top - 0.035, piece.top, p.z);
        n = (n * (1.0 - 0.6 * top_round) + Vec3::UP * top_round).normalized();
        // Rounded bottom edge: a dark line where a man stands on the board or on another man.
        let bottom_round = 1.0 - smoothstep(piece.base, piece.base + 0.025, p.z);
        n = (n * (1.0 - 0.5 * bottom_round) - Vec3::UP * bottom_round).normalized();
        let foot = if piece.base < 0.01 { 0.75 + 0.25 * smoothstep(0.0, 0.04, p.z - piece.base) } else { 1.0 };
        let shadow = self.hand_light(p);
        self.light(p, n, view, albedo, self.piece_gloss(piece), shadow, foot, 0.0)
    }
}

/// For each image tile, the pieces and hand capsules whose image may fall in it.
struct TileIndex {
    columns: usize,
    rows: usize,
    pieces: Vec<Vec<u16>>,
    capsules: Vec<Vec<u16>>,
}

impl TileIndex {
    fn build(world: &World) -> TileIndex {
        let cam = &world.camera;
        let columns = (cam.width as usize).div_ceil(TILE);
        let rows = (cam.height as usize).div_ceil(TILE);
        let mut index = TileIndex { columns, rows, pieces: vec![Vec::new(); columns * rows], capsules: vec![Vec::new(); columns * rows] };
        for (i, piece) in world.pieces.iter().enumerate() {
            let outline: Vec<Vec3> = (0..24)
                .flat_map(|k| {
                    let a = k as f64 / 24.0 * std::f64::consts::TAU;
                    let (x, y) = (piece.center.0 + piece.radius * a.cos(), piece.center.1 + piece.radius * a.sin());
                    [Vec3::new(x, y, piece.base), Vec3::new(x, y, piece.top)]
                })
                .collect();
            let bbox = index.bbox(cam, &outline, 3.0);
            index.add(bbox, |t| &mut t.pieces, i as u16);
        }
        if let Some(hand) = &world.hand {
            for (i, capsule) in hand.capsules.iter().enumerate() {
                // Points along the axis, padded by the radius seen from the camera.
                let mut points = Vec::new();
                let mut pad: f64 = 3.0;
                for k in 0..=8 {
                    let p = capsule.a + (capsule.b - capsule.a) * (k as f64 / 8.0);
                    let depth = cam.to_camera(p).z;
                    if depth <= 0.05 {
                        pad = f64::INFINITY;
                        break;
                    }
                    pad = pad.max(capsule.radius * cam.focal_px / depth * (1.0 + 2.0 * cam.k1.abs()) * 1.25 + 3.0);
                    points.push(p);
                }
                let bbox = index.bbox(cam, &points, pad);
                index.add(bbox, |t| &mut t.capsules, i as u16);
            }
        }
        index
    }

    /// Pixel box of the projected points padded by `pad`; the whole image if any point is
    /// behind the camera.
    fn bbox(&self, cam: &Camera, points: &[Vec3], pad: f64) -> [f64; 4] {
        let everything = [0.0, 0.0, cam.width as f64, cam.height as f64];
        if !pad.is_finite() {
            return everything;
        }
        let mut b = [f64::MAX, f64::MAX, f64::MIN, f64::MIN];
        for &p in points {
            let Some([u, v]) = cam.project(p) else { return everything };
            b = [b[0].min(u), b[1].min(v), b[2].max(u), b[3].max(v)];
        }
        [b[0] - pad, b[1] - pad, b[2] + pad, b[3] + pad]
    }

    fn add(&mut self, bbox: [f64; 4], list: impl Fn(&mut TileIndex) -> &mut Vec<Vec<u16>>, item: u16) {
        let last_col = self.columns as f64 - 1.0;
        let last_row = self.rows as f64 - 1.0;
        if bbox[2] < 0.0 || bbox[3] < 0.0 || bbox[0] / TILE as f64 > last_col + 1.0 || bbox[1] / TILE as f64 > last_row + 1.0 {
            return;
        }
        let c0 = (bbox[0] / TILE as f64).floor().clamp(0.0, last_col) as usize;
        let c1 = (bbox[2] / TILE as f64).floor().clamp(0.0, last_col) as usize;
        let r0 = (bbox[1] / TILE as f64).floor().clamp(0.0, last_row) as usize;
        let r1 = (bbox[3] / TILE as f64).floor().clamp(0.0, last_row) as usize;
        let columns = self.columns;
        let lists = list(self);
        for r in r0..=r1 {
            for c in c0..=c1 {
                lists[r * columns + c].push(item);
            }
        }
    }

    fn tile(&self, u: f64, v: f64) -> usize {
        let c = ((u.max(0.0) as usize) / TILE).min(self.columns - 1);
        let r = ((v.max(0.0) as usize) / TILE).min(self.rows - 1);
        r * self.columns + c
    }
}

/// Offsets of the extra samples on edge pixels (a rotated grid).
const EDGE_SAMPLES: [(f64, f64); 4] = [(-0.125, -0.375), (0.375, -0.125), (0.125, 0.375), (-0.375, 0.125)];

pub(crate) fn render(world: &World) -> Rendered {
    let cam = &world.camera;
    let (w, h) = (cam.width as usize, cam.height as usize);
    let tiles = TileIndex::build(world);
    let origin = cam.position;
    let sample = |u: f64, v: f64| -> (Vec3, u32, Surface, Vec3) {
        let d = cam.ray_direction(u, v);
        let tile = tiles.tile(u, v);
        let hit = world.trace(origin, d, &tiles.pieces[tile], &tiles.capsules[tile]);
        let (color, id) = world.shade(origin, d, &hit);
        (color, id, hit.surface, d)
    };

    let mut linear = vec![[0f32; 3]; w * h];
    let mut ids = vec![0u32; w * h];
    let mut square_pixels = [[0u32; 8]; 8];
    let mut hand_pixels = [[0u32; 8]; 8];
    let mut hand_in_image = 0;
    let mut reflective = vec![1f32; w * h];
    let is_hand = |surface: Surface| match surface {
        Surface::Hand => true,
        Surface::PieceTop(i) | Surface::PieceSide(i) => world.pieces[i].square.is_none(),
        _ => false,
    };
    for y in 0..h {
        for x in 0..w {
            let (color, id, surface, d) = sample(x as f64, y as f64);
            linear[y * w + x] = [color.x as f32, color.y as f32, color.z as f32];
            ids[y * w + x] = id;
            let hand_seen = is_hand(surface);
            hand_in_image += hand_seen as u32;
            if hand_seen {
                reflective[y * w + x] = 0.0;
            }
            // Which square's area this ray crosses, and whether the hand hides it there.
            if d.z < 0.0 {
                let t = -origin.z / d.z;
                let (bx, by) = (origin.x + d.x * t, origin.y + d.y * t);
                if (0.0..8.0).contains(&bx) && (0.0..8.0).contains(&by) {
                    let (row, col) = (by as usize, bx as usize);
                    square_pixels[row][col] += 1;
                    hand_pixels[row][col] += hand_seen as u32;
                }
            }
        }
    }

    // Anti-aliasing: pixels that differ from a neighbour in what they see get four more samples.
    let mut edge = vec![false; w * h];
    for y in 0..h {
        for x in 0..w {
            let id = ids[y * w + x];
            if x + 1 < w && ids[y * w + x + 1] != id {
                edge[y * w + x] = true;
                edge[y * w + x + 1] = true;
            }
            if y + 1 < h && ids[(y + 1) * w + x] != id {
                edge[y * w + x] = true;
                edge[(y + 1) * w + x] = true;
            }
        }
    }
    for (i, _) in edge.iter().enumerate().filter(|(_, &e)| e) {
        let (x, y) = ((i % w) as f64, (i / w) as f64);
        let mut sum = Vec3::new(linear[i][0] as f64, linear[i][1] as f64, linear[i][2] as f64);
        let mut not_hand = reflective[i];
        for (dx, dy) in EDGE_SAMPLES {
            let (color, _, surface, _) = sample(x + dx, y + dy);
            sum += color;
            not_hand += if is_hand(surface) { 0.0 } else { 1.0 };
        }
        let count = (EDGE_SAMPLES.len() + 1) as f64;
        let mean = sum * (1.0 / count);
        linear[i] = [mean.x as f32, mean.y as f32, mean.z as f32];
        reflective[i] = not_hand / count as f32;
    }
    Rendered { linear, square_pixels, hand_pixels, hand_in_image, reflective }
}

/// Whether the straight line from the camera to `p` passes through the hand or a held piece
/// before reaching `p`.
pub(crate) fn hidden_by_hand(world: &World, p: Vec3) -> bool {
    let o = world.camera.position;
    let to_p = p - o;
    let distance = to_p.length();
    let d = to_p * (1.0 / distance);
    let before = |t: f64| t < distance - 1e-6;
    if let Some(hand) = &world.hand {
        if hand.intersect(o, d, 0..hand.capsules.len()).is_some_and(|(t, _)| before(t)) {
            return true;
        }
    }
    world
        .pieces
        .iter()
        .filter(|piece| piece.square.is_none())
        .any(|piece| piece.intersect(o, d).is_some_and(|(t, _)| before(t)))
}
