//! Sessions ray-traced with POV-Ray (Debian's `povray`): boards and sets of kinds the project's
//! own renderer (`src/synth`) never drew, to judge the recognition on material nothing in it was
//! made or tuned for.
//!
//! ```sh
//! cargo run --release --example povray_sessions -- --first 1000 --scenes 40 --frames 6
//! cargo run --release --example povray_sessions -- --first 0 --scenes 3 --frames 1 --keep /tmp/pov --render-only
//! ```
//!
//! Each scene draws, from its seed: a board (vinyl, plastic, two woods, marble or card, with a
//! frame of its own width and colour, sometimes of the light squares' colour), a set of men (flat
//! plastic, or turned wood with grooves; kings are two men stacked), a table, a main light, a
//! fill light and sometimes a lamp's spot, and a camera (tilted up to 35 degrees, turned any
//! way, the board filling half to most of the picture). As a session goes, the start position is
//! rendered and calibrates the session by itself (the wooden palette only names the sides), then
//! `--frames` positions of random English games (`synth::session::frames`, kings included) are
//! rendered in the same scene and read with that calibration, square by square against the
//! truth in board coordinates; every frame's board is also found afresh and its corners compared
//! with where the camera model puts them. The squares are read twice, by the colours and by the
//! learnt square model, each calibrated on the start by itself.
//!
//! `--keep DIR` keeps the scene files and pictures; `--reuse` then reads back those already
//! rendered from the same description (another build scored on the same pictures);
//! `--render-only` only renders.
//!
//! Scenes 0-9 are for looking at the pictures while the scene maker is written; scenes 1000-1039
//! and 1040-1079 are held apart (`models/square-model/README.md`; BENCHMARKS.md, "Ray-traced
//! boards of new kinds").
//!
//! Why a scene writer of our own: POV-Ray reads a scene description language and no crate
//! writes it; the text below is that description, nothing more.

#[path = "../tests/common/mod.rs"]
mod common;

use boardwatch::vision::*;
use opencv::core::Mat;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

type Res<T> = std::result::Result<T, Box<dyn std::error::Error>>;

type V3 = [f64; 3];

fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
fn add(a: V3, b: V3) -> V3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}
fn scale(a: V3, s: f64) -> V3 {
    [a[0] * s, a[1] * s, a[2] * s]
}
fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
fn cross(a: V3, b: V3) -> V3 {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}
fn unit(a: V3) -> V3 {
    scale(a, 1.0 / dot(a, a).sqrt())
}

/// A pinhole camera as POV-Ray's perspective camera takes it: location, unit direction, right
/// and up, and the direction's length `focal` (the picture spans -0.5..0.5 of `aspect` across
/// and of 1 down).
#[derive(Clone, Copy, Debug)]
struct Camera {
    location: V3,
    direction: V3,
    right: V3,
    up: V3,
    focal: f64,
    width: u32,
    height: u32,
}

impl Camera {
    fn aspect(&self) -> f64 {
        self.width as f64 / self.height as f64
    }

    /// A point of the scene in picture pixels (pixel centres at integers), if in front.
    fn project(&self, p: V3) -> Option<[f64; 2]> {
        let w = sub(p, self.location);
        let depth = dot(w, self.direction);
        if depth <= 1e-9 {
            return None;
        }
        let u = dot(w, self.right) * self.focal / (self.aspect() * depth);
        let v = dot(w, self.up) * self.focal / depth;
        Some([(u + 0.5) * self.width as f64 - 0.5, (0.5 - v) * self.height as f64 - 0.5])
    }

    fn pov(&self) -> String {
        let v = |a: V3| format!("<{:.6}, {:.6}, {:.6}>", a[0], a[1], a[2]);
        format!(
            "camera {{ perspective location {} direction {} right {} up {} }}\n",
            v(self.location),
            v(scale(self.direction, self.focal)),
            v(scale(self.right, self.aspect())),
            v(self.up)
        )
    }
}

/// What a scene is made of, drawn from its seed. Lengths in squares; the board lies on y = 0
/// (y up), its playing area from -4 to 4 in x and z, row 0 of the grid at z = 4 (the far side
/// from White), column 0 at x = -4.
struct Scene {
    kind: &'static str,
    dark_square: String,
    light_square: String,
    border: String,
    border_width: f64,
    table: String,
    dark_man: String,
    light_man: String,
    men_kind: &'static str,
    man_height: f64,
    man_radius: f64,
    grooves: Vec<f64>,
    lights: String,
    ambient: f64,
    camera: Camera,
    seed: u64,
}

fn rgb(c: [f64; 3]) -> String {
    format!("rgb <{:.4}, {:.4}, {:.4}>", c[0], c[1], c[2])
}

/// A colour near `c` (linear RGB), each channel moved by up to `spread` of itself.
fn near(rng: &mut ChaCha8Rng, c: [f64; 3], spread: f64) -> [f64; 3] {
    c.map(|v| (v * (1.0 + rng.gen_range(-spread..=spread))).clamp(0.0, 1.0))
}

fn flat(rng: &mut ChaCha8Rng, c: [f64; 3], spread: f64, shine: f64) -> String {
    format!("pigment {{ color {} }} finish {{ diffuse 0.75 specular {shine:.2} roughness 0.03 }}", rgb(near(rng, c, spread)))
}

/// A wood grain of two colours, turned and shifted so that no two squares show the same grain.
fn wood(rng: &mut ChaCha8Rng, a: [f64; 3], b: [f64; 3], shine: f64) -> String {
    let (a, b) = (near(rng, a, 0.15), near(rng, b, 0.15));
    format!(
        "pigment {{ wood turbulence {:.2} color_map {{ [0 color {}] [0.6 color {}] [1 color {}] }} scale {:.2} rotate <90, {:.1}, 0> }} finish {{ diffuse 0.8 specular {shine:.2} roughness 0.05 }}",
        rng.gen_range(0.02..0.12),
        rgb(a),
        rgb(b),
        rgb(a),
        rng.gen_range(0.08..0.25),
        rng.gen_range(0.0..180.0)
    )
}

fn marble(rng: &mut ChaCha8Rng, a: [f64; 3], b: [f64; 3]) -> String {
    let (a, b) = (near(rng, a, 0.1), near(rng, b, 0.1));
    format!(
        "pigment {{ marble turbulence {:.2} color_map {{ [0 color {}] [0.8 color {}] [1 color {}] }} scale {:.2} }} finish {{ diffuse 0.7 specular 0.4 roughness 0.01 reflection 0.03 }}",
        rng.gen_range(0.6..1.2),
        rgb(a),
        rgb(a),
        rgb(b),
        rng.gen_range(0.8..2.5)
    )
}

fn random_scene(seed: u64, width: u32, height: u32) -> Scene {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x90_7a_7e);
    // Linear RGB (POV-Ray's assumed_gamma 1): a cream of 0.8 shows as about 230 of 255.
    let (kind, dark_square, light_square, border) = match rng.gen_range(0..6) {
        0 => ("green and cream vinyl", flat(&mut rng, [0.05, 0.2, 0.08], 0.3, 0.15), flat(&mut rng, [0.75, 0.7, 0.5], 0.1, 0.15), [0.8, 0.8, 0.75]),
        // Played on the black squares, as such boards are.
        1 => ("black and red plastic", flat(&mut rng, [0.02, 0.02, 0.02], 0.3, 0.4), flat(&mut rng, [0.45, 0.03, 0.03], 0.2, 0.4), [0.02, 0.02, 0.02]),
        2 => {
            let dark = wood(&mut rng, [0.12, 0.05, 0.02], [0.22, 0.1, 0.04], 0.1);
            let light = wood(&mut rng, [0.65, 0.45, 0.25], [0.5, 0.32, 0.15], 0.1);
            ("walnut and maple", dark, light, [0.15, 0.07, 0.03])
        }
        3 => ("grey and white marble", marble(&mut rng, [0.15, 0.16, 0.17], [0.4, 0.4, 0.4]), marble(&mut rng, [0.85, 0.85, 0.82], [0.5, 0.5, 0.5]), [0.1, 0.1, 0.1]),
        4 => ("blue and white card", flat(&mut rng, [0.04, 0.08, 0.35], 0.3, 0.05), flat(&mut rng, [0.85, 0.85, 0.85], 0.05, 0.05), [0.04, 0.08, 0.35]),
        _ => ("brown and beige print", flat(&mut rng, [0.25, 0.12, 0.05], 0.3, 0.1), flat(&mut rng, [0.7, 0.55, 0.35], 0.15, 0.1), [0.4, 0.25, 0.12]),
    };
    // A frame of the light squares' colour now and then: the lattice must not move onto it.
    let border = if rng.gen_bool(0.2) {
        light_square.clone()
    } else {
        flat(&mut rng, border, 0.3, 0.1)
    };
    let border_width = rng.gen_range(0.15..1.2);
    let table = match rng.gen_range(0..3) {
        0 => wood(&mut rng, [0.35, 0.2, 0.1], [0.2, 0.1, 0.05], 0.2),
        1 => {
            let cloth = [rng.gen_range(0.05..0.6), rng.gen_range(0.05..0.6), rng.gen_range(0.05..0.6)];
            flat(&mut rng, cloth, 0.0, 0.0)
        }
        _ => flat(&mut rng, [0.5, 0.5, 0.48], 0.3, 0.05),
    };
    let (men_kind, dark_man, light_man) = match rng.gen_range(0..4) {
        0 => ("red and white plastic", flat(&mut rng, [0.5, 0.02, 0.02], 0.2, 0.6), flat(&mut rng, [0.85, 0.85, 0.8], 0.05, 0.6)),
        1 => ("black and white plastic", flat(&mut rng, [0.02, 0.02, 0.02], 0.5, 0.6), flat(&mut rng, [0.85, 0.83, 0.75], 0.05, 0.6)),
        2 => ("turned dark and light wood", wood(&mut rng, [0.08, 0.03, 0.01], [0.15, 0.07, 0.03], 0.3), wood(&mut rng, [0.7, 0.5, 0.3], [0.55, 0.38, 0.2], 0.3)),
        _ => ("brown and yellow plastic", flat(&mut rng, [0.2, 0.08, 0.02], 0.2, 0.5), flat(&mut rng, [0.8, 0.6, 0.1], 0.1, 0.5)),
    };
    let man_height = if men_kind.contains("wood") { rng.gen_range(0.18..0.35) } else { rng.gen_range(0.1..0.22) };
    let man_radius = rng.gen_range(0.34..0.43);
    let grooves = if men_kind.contains("wood") || rng.gen_bool(0.4) {
        (1..=rng.gen_range(2..4)).map(|k| man_radius * k as f64 / 4.0).collect()
    } else {
        Vec::new()
    };
    // A main light high above, a weaker fill, sometimes a lamp's spot on part of the board.
    let mut lights = String::new();
    let main = [rng.gen_range(-8.0..8.0), rng.gen_range(10.0..20.0), rng.gen_range(-8.0..8.0)];
    let strength = rng.gen_range(0.7..1.1);
    let warm = [1.0, rng.gen_range(0.85..1.0), rng.gen_range(0.65..1.0)];
    let _ = writeln!(
        lights,
        "light_source {{ <{:.2}, {:.2}, {:.2}> color {} area_light <2, 0, 0>, <0, 0, 2>, 3, 3 adaptive 1 jitter }}",
        main[0],
        main[1],
        main[2],
        rgb(scale(warm, strength))
    );
    let _ = writeln!(
        lights,
        "light_source {{ <{:.2}, 15, {:.2}> color {} shadowless }}",
        rng.gen_range(-10.0..10.0),
        rng.gen_range(-10.0..10.0),
        rgb([0.25, 0.25, 0.27])
    );
    if rng.gen_bool(0.4) {
        let at = [rng.gen_range(-3.0..3.0), rng.gen_range(-3.0..3.0)];
        let _ = writeln!(
            lights,
            "light_source {{ <{:.2}, {:.2}, {:.2}> color {} spotlight point_at <{:.2}, 0, {:.2}> radius {:.1} falloff {:.1} }}",
            at[0] + rng.gen_range(-3.0..3.0),
            rng.gen_range(5.0..9.0),
            at[1] + rng.gen_range(-3.0..3.0),
            rgb([0.6, 0.55, 0.45]),
            at[0],
            at[1],
            rng.gen_range(8.0..14.0),
            rng.gen_range(16.0..24.0)
        );
    }
    let ambient = rng.gen_range(0.05..0.25);
    // The camera: tilted up to 35 degrees from straight down, from any side, turned any way.
    let tilt = rng.gen_range(0.0f64..35.0).to_radians();
    let azimuth = rng.gen_range(0.0f64..360.0).to_radians();
    let roll = rng.gen_range(-45.0f64..45.0).to_radians();
    let fov = rng.gen_range(50.0f64..65.0).to_radians();
    let target = [rng.gen_range(-0.6..0.6), 0.0, rng.gen_range(-0.6..0.6)];
    let fill = rng.gen_range(0.55..0.85);
    let far = [azimuth.sin(), 0.0, azimuth.cos()];
    let direction = unit(add(scale(far, tilt.sin()), [0.0, -tilt.cos(), 0.0]));
    let up0 = unit(add(scale([0.0, 1.0, 0.0], tilt.sin()), scale(far, tilt.cos())));
    let right0 = unit(cross(up0, direction));
    let (right, up) = (
        unit(add(scale(right0, roll.cos()), scale(up0, roll.sin()))),
        unit(add(scale(up0, roll.cos()), scale(right0, -roll.sin()))),
    );
    let focal = 0.5 * (width as f64 / height as f64) / (fov / 2.0).tan();
    let mut distance = 8.0;
    let outline = {
        let b = 4.0 + border_width;
        [[-b, 0.0, -b], [b, 0.0, -b], [b, 0.0, b], [-b, 0.0, b]]
    };
    // Back off until the board with its frame fills `fill` of the picture's height at most.
    let camera = loop {
        let location = sub(target, scale(direction, distance));
        let camera = Camera { location, direction, right, up, focal, width, height };
        let points: Vec<[f64; 2]> = outline.iter().filter_map(|&p| camera.project(p)).collect();
        let fits = points.len() == 4
            && points.iter().all(|p| p[0] >= 0.0 && p[1] >= 0.0 && p[0] < width as f64 && p[1] < height as f64)
            && points.iter().map(|p| p[1]).fold(f64::MIN, f64::max) - points.iter().map(|p| p[1]).fold(f64::MAX, f64::min) <= fill * height as f64;
        if fits || distance > 200.0 {
            break camera;
        }
        distance *= 1.03;
    };
    Scene {
        kind,
        dark_square,
        light_square,
        border,
        border_width,
        table,
        dark_man,
        light_man,
        men_kind,
        man_height,
        man_radius,
        grooves,
        lights,
        ambient,
        camera,
        seed,
    }
}

impl Scene {
    /// The scene description of this scene with `grid`'s men on it (row 0 at Black's edge);
    /// `frame` moves each man a little off its square's centre, differently in every frame.
    fn pov(&self, grid: &[String; 8], frame: u64) -> String {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed.wrapping_mul(1_000_003).wrapping_add(frame));
        let mut s = String::new();
        let _ = writeln!(s, "#version 3.7;\nglobal_settings {{ assumed_gamma 1.0 ambient_light rgb {:.3} }}", self.ambient);
        s.push_str(&self.camera.pov());
        s.push_str(&self.lights);
        let b = 4.0 + self.border_width;
        let _ = writeln!(s, "plane {{ y, -0.12 texture {{ {} }} }}", self.table);
        let _ = writeln!(s, "box {{ <{:.3}, -0.12, {:.3}>, <{:.3}, -0.001, {:.3}> texture {{ {} }} }}", -b, -b, b, b, self.border);
        for r in 0..8 {
            for c in 0..8 {
                let (x, z) = (c as f64 - 4.0, 4.0 - r as f64);
                let texture = if (r + c) % 2 == 1 { &self.dark_square } else { &self.light_square };
                let _ = writeln!(
                    s,
                    "box {{ <{x:.3}, -0.02, {:.3}>, <{:.3}, 0, {z:.3}> texture {{ {texture} translate <{:.2}, 0, {:.2}> }} }}",
                    z - 1.0,
                    x + 1.0,
                    rng.gen_range(-3.0..3.0),
                    rng.gen_range(-3.0..3.0)
                );
            }
        }
        let (h, rad) = (self.man_height, self.man_radius);
        let e = (h * 0.3).min(0.05);
        let man = |texture: &str, y: f64, x: f64, z: f64, turn: f64| {
            let mut grooves = String::new();
            for g in &self.grooves {
                let _ = write!(grooves, " torus {{ {g:.3}, 0.015 translate y*{h:.3} }}");
            }
            format!(
                "difference {{ union {{ cylinder {{ <0, 0, 0>, <0, {:.3}, 0>, {rad:.3} }} cylinder {{ <0, {:.3}, 0>, <0, {h:.3}, 0>, {:.3} }} torus {{ {:.3}, {e:.3} translate y*{:.3} }} }}{grooves} texture {{ {texture} }} rotate y*{turn:.1} translate <{x:.3}, {y:.3}, {z:.3}> }}\n",
                h - e,
                h - e,
                rad - e,
                rad - e,
                h - e
            )
        };
        for (r, row) in grid.iter().enumerate() {
            for (c, piece) in row.chars().enumerate() {
                let texture = match piece {
                    'b' | 'B' => &self.dark_man,
                    'w' | 'W' => &self.light_man,
                    _ => continue,
                };
                let off = self.man_radius * 0.15;
                let (x, z) = (c as f64 - 3.5 + rng.gen_range(-off..=off), 3.5 - r as f64 + rng.gen_range(-off..=off));
                s.push_str(&man(texture, 0.0, x, z, rng.gen_range(0.0..360.0)));
                if piece.is_ascii_uppercase() {
                    // A king: a second man of the same set on top, as rarely quite centred.
                    let (dx, dz) = (rng.gen_range(-0.04..0.04), rng.gen_range(-0.04..0.04));
                    s.push_str(&man(texture, h, x + dx, z + dz, rng.gen_range(0.0..360.0)));
                }
            }
        }
        s
    }

    /// The playing area's corners in picture pixels, in the order they go round in the picture
    /// (clockwise as seen, starting anywhere).
    fn corners(&self) -> Option<[[f64; 2]; 4]> {
        let mut points = Vec::new();
        for p in [[-4.0, 0.0, 4.0], [4.0, 0.0, 4.0], [4.0, 0.0, -4.0], [-4.0, 0.0, -4.0]] {
            points.push(self.camera.project(p)?);
        }
        let centre = [points.iter().map(|p| p[0]).sum::<f64>() / 4.0, points.iter().map(|p| p[1]).sum::<f64>() / 4.0];
        points.sort_by(|a, b| (a[1] - centre[1]).atan2(a[0] - centre[0]).total_cmp(&(b[1] - centre[1]).atan2(b[0] - centre[0])));
        Some([points[0], points[1], points[2], points[3]])
    }
}

/// With `reuse`, a picture already rendered from the same description is read back instead.
fn render(pov: &str, dir: &Path, name: &str, scene: &Scene, reuse: bool) -> Res<Mat> {
    let pov_path = dir.join(format!("{name}.pov"));
    let png = dir.join(format!("{name}.png"));
    if reuse && png.exists() && std::fs::read_to_string(&pov_path).is_ok_and(|kept| kept == pov) {
        return Ok(opencv::imgcodecs::imread(png.to_str().ok_or("path")?, opencv::imgcodecs::IMREAD_COLOR)?);
    }
    std::fs::write(&pov_path, pov)?;
    let out = Command::new("povray")
        .arg(format!("+I{}", pov_path.display()))
        .arg(format!("+O{}", png.display()))
        .args([format!("+W{}", scene.camera.width), format!("+H{}", scene.camera.height)])
        .args(["-D", "+FN", "+A0.2", "+AM2", "+R2", "+Q9", "+WT1", "-GA"])
        .output()
        .map_err(|e| format!("povray: {e} (install it: apt-get install povray)"))?;
    if !out.status.success() || !png.exists() {
        return Err(format!("povray failed on {}: {}", pov_path.display(), String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("")).into());
    }
    let image = opencv::imgcodecs::imread(png.to_str().ok_or("path")?, opencv::imgcodecs::IMREAD_COLOR)?;
    Ok(image)
}

/// One reader's figures over the sessions.
#[derive(Default)]
struct Reading {
    calibrated: usize,
    frames: usize,
    frames_right: usize,
    squares_wrong: usize,
    squares_unknown: usize,
}

impl Reading {
    /// One session: calibrate on `start` by itself (the wooden palette names the sides only),
    /// then read `pictures` against `positions`. Prints what went wrong.
    fn session(&mut self, name: &str, start: &Mat, pictures: &[Mat], positions: &[[String; 8]], mut model: Option<SquareModel>) {
        let base = ColourModel::named("wooden").expect("built-in palette");
        let calibration = match Calibration::from_image_with(start, &base, None, "ray-traced start", model.as_mut()) {
            Ok((cal, _)) => cal,
            Err(e) => {
                println!("  {name}: not calibrated: {e}");
                return;
            }
        };
        self.calibrated += 1;
        for (k, (frame, grid)) in pictures.iter().zip(positions).enumerate() {
            self.frames += 1;
            let d = match detect_calibrated_with(frame, &calibration, model.as_mut()) {
                Ok(d) => d,
                Err(e) => {
                    self.squares_wrong += 64;
                    println!("  {name} frame {k}: {e}");
                    continue;
                }
            };
            let read = to_board_coordinates(&d.reading, &calibration.frame(), true, 0.0).rows();
            // Stacked kings look like men from above: read as men, as the wooden prior says.
            let mut wrong = Vec::new();
            for r in 0..8 {
                for c in 0..8 {
                    let (a, b) = (read[r].as_bytes()[c] as char, grid[r].as_bytes()[c] as char);
                    if a != b.to_ascii_lowercase() {
                        wrong.push(format!("({r},{c}) read {a} is {b}"));
                    }
                }
            }
            self.squares_wrong += wrong.len();
            self.squares_unknown += wrong.iter().filter(|w| w.contains("read ?")).count();
            if wrong.is_empty() {
                self.frames_right += 1;
            } else {
                println!("  {name} frame {k}: {}", wrong.join(", "));
            }
        }
    }

    fn summary(&self, scenes: u64, name: &str) -> String {
        format!(
            "{name}: {} of {scenes} sessions calibrated by themselves; {} frames read, {} all right; {} squares wrong of {} ({} of them `?`)",
            self.calibrated,
            self.frames,
            self.frames_right,
            self.squares_wrong,
            self.frames * 64,
            self.squares_unknown
        )
    }
}

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned()
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let first: u64 = arg(&args, "--first").map_or(Ok(0), |s| s.parse())?;
    let scenes: u64 = arg(&args, "--scenes").map_or(Ok(1), |s| s.parse())?;
    let frames: usize = arg(&args, "--frames").map_or(Ok(6), |s| s.parse())?;
    let (width, height) = match arg(&args, "--size") {
        Some(s) => {
            let (w, h) = s.split_once('x').ok_or("--size: WIDTHxHEIGHT")?;
            (w.parse()?, h.parse()?)
        }
        None => (1280, 720),
    };
    let render_only = args.iter().any(|a| a == "--render-only");
    let keep = arg(&args, "--keep").map(PathBuf::from);
    let reuse = keep.is_some() && args.iter().any(|a| a == "--reuse");
    let work = keep.clone().unwrap_or_else(|| std::env::temp_dir().join(format!("povray-sessions-{}", std::process::id())));
    std::fs::create_dir_all(&work)?;
    let base = ColourModel::named("wooden")?;
    let start = boardwatch::draughts::Position::start(&boardwatch::draughts::Variant::English.rules()).to_grid();
    let (mut colours, mut learnt) = (Reading::default(), Reading::default());
    let (mut corner_frames, mut corners_within_tenth, mut worst_corner) = (0usize, 0usize, 0f64);
    for seed in first..first + scenes {
        let scene = random_scene(seed, width, height);
        let truth_corners = scene.corners().ok_or("a corner behind the camera")?;
        println!(
            "scene {seed}: {} board, frame {:.2} square, {} men {:.2} tall, camera {:.1} squares away",
            scene.kind,
            scene.border_width,
            scene.men_kind,
            scene.man_height,
            dot(sub([0.0; 3], scene.camera.location), scene.camera.direction)
        );
        let image = render(&scene.pov(&start, 0), &work, &format!("scene{seed}-start"), &scene, reuse)?;
        let positions: Vec<[String; 8]> = boardwatch::synth::session::frames(seed).take(frames).map(|(grid, _)| grid).collect();
        let mut pictures = Vec::new();
        for (k, grid) in positions.iter().enumerate() {
            pictures.push(render(&scene.pov(grid, k as u64 + 1), &work, &format!("scene{seed}-frame{k}"), &scene, reuse)?);
        }
        if render_only {
            continue;
        }
        colours.session("colours", &image, &pictures, &positions, None);
        learnt.session("learnt", &image, &pictures, &positions, Some(SquareModel::builtin()?));
        for (k, frame) in pictures.iter().enumerate() {
            corner_frames += 1;
            match detect(frame, None, &base) {
                Ok(d) => {
                    let error = common::corner_error(&d.corners, &truth_corners);
                    worst_corner = worst_corner.max(error);
                    if error <= 0.1 {
                        corners_within_tenth += 1;
                    } else {
                        println!("  frame {k}: corners off by {error:.2} square");
                    }
                }
                Err(e) => println!("  frame {k}: board not found afresh: {e}"),
            }
        }
    }
    if !render_only {
        println!("{}", colours.summary(scenes, "the colours"));
        println!("{}", learnt.summary(scenes, "the learnt square model"));
        println!("board found afresh: corners within 0.1 square in {corners_within_tenth} of {corner_frames} frames (worst {worst_corner:.3})");
    }
    if keep.is_none() {
        let _ = std::fs::remove_dir_all(&work);
    }
    Ok(())
}
