//! Scene parameters: everything that decides how a synthetic camera frame looks, apart from the
//! position on the board and the hand. Serializable, so a frame that trips the vision pipeline can
//! be reproduced from its JSON.

use std::str::FromStr;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::camera::Camera;
use super::error::{check_finite, check_range, SynthError};

/// An sRGB colour.
pub type Rgb8 = [u8; 3];

/// The two looks of the pieces the project cares about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Palette {
    /// The original program's four colours: red men and blue kings for Black, yellow men and
    /// green kings for White, on a printed board with beige and brown squares. (`seed`, its old
    /// name, is still read, in truth files too.)
    #[serde(rename = "four-colour", alias = "seed")]
    FourColour,
    /// Dark wooden men for Black, light ones for White, with turned grooves, kings as two men
    /// stacked; on a glossy printed cream and dark-brown board like the project's real set (see
    /// `shared/data/photos`), or in some random scenes a veneer board.
    Wooden,
}

impl Palette {
    pub fn name(self) -> &'static str {
        match self {
            Palette::FourColour => "four-colour",
            Palette::Wooden => "wooden",
        }
    }
}

impl FromStr for Palette {
    type Err = String;
    fn from_str(s: &str) -> Result<Palette, String> {
        match s.to_ascii_lowercase().as_str() {
            "four-colour" | "four-color" | "fourcolour" | "seed" => Ok(Palette::FourColour),
            "wooden" | "wood" => Ok(Palette::Wooden),
            other => Err(format!("unknown palette `{other}` (expected four-colour or wooden)")),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Colors {
    pub light_square: Rgb8,
    pub dark_square: Rgb8,
    /// The border around the playing area (and the board's edges, a little darker).
    pub frame: Rgb8,
    pub table: Rgb8,
    pub black_man: Rgb8,
    pub black_king: Rgb8,
    pub white_man: Rgb8,
    pub white_king: Rgb8,
}

impl Colors {
    pub fn for_palette(palette: Palette) -> Colors {
        match palette {
            Palette::FourColour => Colors {
                light_square: [228, 216, 190],
                dark_square: [116, 96, 76],
                frame: [172, 126, 82],
                table: [118, 94, 74],
                black_man: [208, 42, 36],
                black_king: [38, 72, 200],
                white_man: [242, 212, 58],
                white_king: [48, 158, 70],
            },
            // The project's real two-colour set (see the photos in shared/data/photos): a glossy
            // printed board, cream and dark brown, with light and dark turned men.
            Palette::Wooden => Colors {
                light_square: [226, 218, 176],
                dark_square: [60, 40, 34],
                frame: [142, 100, 68],
                table: [108, 54, 36],
                black_man: [74, 56, 50],
                black_king: [74, 56, 50],
                white_man: [224, 194, 152],
                white_king: [224, 194, 152],
            },
        }
    }
}

/// The board: the 8x8 playing area (one unit per square) inside a frame, as a slab on the table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BoardShape {
    /// Width of the border around the playing area, in squares.
    pub frame_width: f64,
    /// Height of the slab above the table, in squares (its sides show in oblique views).
    pub thickness: f64,
    /// A thin dark line around the playing area, as many boards have.
    pub inlay: bool,
    /// How strongly the squares show wood grain (0 = printed flat colour).
    pub grain: f64,
    /// Veneer squares (seams between squares, varnish) rather than a printed board.
    #[serde(default)]
    pub veneer: bool,
    /// A printed key pattern in a cream band round the playing area, as on the real set.
    #[serde(default)]
    pub key_border: bool,
    /// How strongly the squares show marble veins (0 = none; up to 1, veins of mid grey):
    /// polished stone boards, whose veins cross a square as a man's edge would.
    #[serde(default)]
    pub marble: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PieceShape {
    /// Radius in squares (a real man fills about three quarters of its square).
    pub radius: f64,
    /// Height of a man in squares.
    pub height: f64,
    /// Kings are two men stacked (twice as tall, the upper a little off the lower so that two
    /// rims show); otherwise a king is a man in the king colour.
    pub stacked_kings: bool,
    /// Concentric grooves turned into a wooden man's top (the seed's moulded men have their
    /// own two rings).
    #[serde(default)]
    pub grooves: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TableKind {
    Wood,
    Cloth,
    /// A checked tablecloth: squares of `grain_scale` board squares, the table's colour and a
    /// light one, at an angle to the board. A lattice around the board, to test that the
    /// board is found where its own squares are (only from a scene file; random scenes keep
    /// wood and cloth).
    Checked,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableLook {
    pub kind: TableKind,
    /// Size of the texture's features, in squares.
    pub grain_scale: f64,
}

/// Where the camera is. The camera looks at the board's centre (plus `target_offset`) from the
/// distance at which the board with its frame spans `fill` of the image.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CameraParams {
    /// Angle between the optical axis and the vertical, 0 (straight down) to 35 degrees.
    pub tilt_deg: f64,
    /// Which way the camera leans, relative to the image: 0 = the camera stands on the image's
    /// bottom side (the far edge of the board looks smaller), 90 = on its left side.
    pub tilt_azimuth_deg: f64,
    /// Rotation of the board in the image, clockwise, any angle: 0 has Black's edge (row 0) at
    /// the top, 90 at the right.
    pub yaw_deg: f64,
    /// Horizontal field of view.
    pub fov_deg: f64,
    /// The larger of (board width / image width, board height / image height), board with frame.
    pub fill: f64,
    /// Where the optical axis meets the board, relative to its centre, in squares.
    pub target_offset: [f64; 2],
    /// Radial lens distortion (OpenCV's k1 on normalized image coordinates; negative = barrel).
    pub k1: f64,
}

/// The lamp and the light falling on the scene.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Lighting {
    /// Direction of the lamp seen from the board's centre, in board space (0 = towards the
    /// columns' increasing side, 90 = towards White's edge).
    pub azimuth_deg: f64,
    /// Height of the lamp above the horizon, seen from the board's centre (shadows lengthen as it
    /// drops).
    pub elevation_deg: f64,
    /// Light that comes from everywhere (0..1), the rest from the lamp.
    pub ambient: f64,
    /// 0 = white light, 1 = a warm tungsten lamp.
    pub warmth: f64,
    /// An extra brightness ramp across the image (uneven room light), direction in the image,
    /// 0 = brighter towards the right, 90 = brighter towards the bottom.
    pub gradient_direction_deg: f64,
    /// Relative brightness change from the image centre to its edge along that direction.
    pub gradient_strength: f64,
    /// Darkening of the image corners by the lens.
    pub vignette: f64,
    /// Overall brightness.
    pub exposure: f64,
}

/// A bright reflection of a window or lamp, drawn over the image.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GlareSpot {
    /// Centre as fractions of the image width and height.
    pub center: [f64; 2],
    /// Radius as a fraction of the image diagonal.
    pub radius: f64,
    /// Brightness added at the centre (1 = white).
    pub intensity: f64,
}

/// Everything about a frame except the position and the hand.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Scene {
    pub width: u32,
    pub height: u32,
    pub palette: Palette,
    pub colors: Colors,
    pub board: BoardShape,
    pub pieces: PieceShape,
    pub table: TableLook,
    pub camera: CameraParams,
    pub lighting: Lighting,
    pub glare: Vec<GlareSpot>,
    /// Standard deviation of the sensor noise, in 8-bit levels.
    pub noise_sigma: f64,
    /// Standard deviation of the Gaussian lens blur, in pixels (0 = sharp).
    pub blur_sigma: f64,
    /// How far pieces stand off their square centres at most, in squares (people are not exact).
    pub placement_jitter: f64,
    /// Seeds the wood grain, cloth and piece placement: the same for every frame of a recording.
    pub texture_seed: u64,
}

/// Allowed ranges, one place, so that validation and the random scenes agree.
pub mod limits {
    pub const IMAGE_SIDE: (f64, f64) = (32.0, 8192.0);
    pub const TILT_DEG: (f64, f64) = (0.0, 35.0);
    pub const FOV_DEG: (f64, f64) = (20.0, 100.0);
    pub const FILL: (f64, f64) = (0.2, 1.0);
    pub const TARGET_OFFSET: (f64, f64) = (-4.0, 4.0);
    pub const K1: (f64, f64) = (-0.3, 0.3);
    pub const BLUR_SIGMA: (f64, f64) = (0.0, 5.0);
    pub const NOISE_SIGMA: (f64, f64) = (0.0, 40.0);
    pub const ELEVATION_DEG: (f64, f64) = (20.0, 90.0);
    pub const UNIT: (f64, f64) = (0.0, 1.0);
    pub const GRADIENT: (f64, f64) = (0.0, 0.8);
    pub const VIGNETTE: (f64, f64) = (0.0, 0.8);
    pub const EXPOSURE: (f64, f64) = (0.2, 4.0);
    pub const GLARE_CENTER: (f64, f64) = (-0.5, 1.5);
    pub const GLARE_RADIUS: (f64, f64) = (0.001, 1.0);
    pub const GLARE_INTENSITY: (f64, f64) = (0.0, 3.0);
    pub const GLARE_SPOTS: usize = 8;
    pub const FRAME_WIDTH: (f64, f64) = (0.0, 3.0);
    pub const THICKNESS: (f64, f64) = (0.02, 1.0);
    pub const GRAIN: (f64, f64) = (0.0, 0.5);
    pub const PIECE_RADIUS: (f64, f64) = (0.2, 0.49);
    pub const PIECE_HEIGHT: (f64, f64) = (0.03, 0.6);
    pub const GRAIN_SCALE: (f64, f64) = (0.05, 20.0);
    pub const PLACEMENT_JITTER: (f64, f64) = (0.0, 0.1);
}

impl Scene {
    /// A plain scene: camera straight above, Black at the top, even warm light, no glare, noise,
    /// blur or distortion. A starting point for tests and for hand-made scenes.
    pub fn overhead(palette: Palette, width: u32, height: u32) -> Scene {
        let wooden = palette == Palette::Wooden;
        Scene {
            width,
            height,
            palette,
            colors: Colors::for_palette(palette),
            board: if wooden {
                BoardShape { frame_width: 0.32, thickness: 0.12, inlay: false, grain: 0.0, veneer: false, key_border: true, marble: 0.0 }
            } else {
                BoardShape { frame_width: 0.6, thickness: 0.25, inlay: true, grain: 0.03, veneer: false, key_border: false, marble: 0.0 }
            },
            pieces: if wooden {
                PieceShape { radius: 0.32, height: 0.14, stacked_kings: true, grooves: 4 }
            } else {
                PieceShape { radius: 0.38, height: 0.2, stacked_kings: false, grooves: 0 }
            },
            table: TableLook { kind: TableKind::Wood, grain_scale: 1.0 },
            camera: CameraParams {
                tilt_deg: 0.0,
                tilt_azimuth_deg: 0.0,
                yaw_deg: 0.0,
                fov_deg: 55.0,
                fill: 0.9,
                target_offset: [0.0, 0.0],
                k1: 0.0,
            },
            lighting: Lighting {
                azimuth_deg: 225.0,
                elevation_deg: 65.0,
                ambient: 0.4,
                warmth: 0.6,
                gradient_direction_deg: 0.0,
                gradient_strength: 0.0,
                vignette: 0.0,
                exposure: 1.0,
            },
            glare: Vec::new(),
            noise_sigma: 0.0,
            blur_sigma: 0.0,
            placement_jitter: 0.0,
            texture_seed: 1,
        }
    }

    /// Checks every parameter; the error names the first one out of range.
    pub fn validate(&self) -> Result<(), SynthError> {
        use limits::*;
        check_range("width", self.width as f64, IMAGE_SIDE.0, IMAGE_SIDE.1)?;
        check_range("height", self.height as f64, IMAGE_SIDE.0, IMAGE_SIDE.1)?;

        let cam = &self.camera;
        check_range("camera.tilt_deg", cam.tilt_deg, TILT_DEG.0, TILT_DEG.1)?;
        check_finite("camera.tilt_azimuth_deg", cam.tilt_azimuth_deg)?;
        check_finite("camera.yaw_deg", cam.yaw_deg)?;
        check_range("camera.fov_deg", cam.fov_deg, FOV_DEG.0, FOV_DEG.1)?;
        check_range("camera.fill", cam.fill, FILL.0, FILL.1)?;
        check_range("camera.target_offset[0]", cam.target_offset[0], TARGET_OFFSET.0, TARGET_OFFSET.1)?;
        check_range("camera.target_offset[1]", cam.target_offset[1], TARGET_OFFSET.0, TARGET_OFFSET.1)?;
        check_range("camera.k1", cam.k1, K1.0, K1.1)?;
        if !Camera::distortion_is_monotonic(cam.k1, cam.fov_deg, self.width, self.height) {
            return Err(SynthError::DistortionFolds { k1: cam.k1, fov_deg: cam.fov_deg });
        }

        check_range("blur_sigma", self.blur_sigma, BLUR_SIGMA.0, BLUR_SIGMA.1)?;
        check_range("noise_sigma", self.noise_sigma, NOISE_SIGMA.0, NOISE_SIGMA.1)?;
        check_range("placement_jitter", self.placement_jitter, PLACEMENT_JITTER.0, PLACEMENT_JITTER.1)?;

        let light = &self.lighting;
        check_finite("lighting.azimuth_deg", light.azimuth_deg)?;
        check_range("lighting.elevation_deg", light.elevation_deg, ELEVATION_DEG.0, ELEVATION_DEG.1)?;
        check_range("lighting.ambient", light.ambient, UNIT.0, UNIT.1)?;
        check_range("lighting.warmth", light.warmth, UNIT.0, UNIT.1)?;
        check_finite("lighting.gradient_direction_deg", light.gradient_direction_deg)?;
        check_range("lighting.gradient_strength", light.gradient_strength, GRADIENT.0, GRADIENT.1)?;
        check_range("lighting.vignette", light.vignette, VIGNETTE.0, VIGNETTE.1)?;
        check_range("lighting.exposure", light.exposure, EXPOSURE.0, EXPOSURE.1)?;

        if self.glare.len() > GLARE_SPOTS {
            return Err(SynthError::OutOfRange {
                name: "glare (number of spots)".into(),
                value: self.glare.len() as f64,
                min: 0.0,
                max: GLARE_SPOTS as f64,
            });
        }
        for (i, spot) in self.glare.iter().enumerate() {
            check_range(&format!("glare[{i}].center[0]"), spot.center[0], GLARE_CENTER.0, GLARE_CENTER.1)?;
            check_range(&format!("glare[{i}].center[1]"), spot.center[1], GLARE_CENTER.0, GLARE_CENTER.1)?;
            check_range(&format!("glare[{i}].radius"), spot.radius, GLARE_RADIUS.0, GLARE_RADIUS.1)?;
            check_range(&format!("glare[{i}].intensity"), spot.intensity, GLARE_INTENSITY.0, GLARE_INTENSITY.1)?;
        }

        check_range("board.frame_width", self.board.frame_width, FRAME_WIDTH.0, FRAME_WIDTH.1)?;
        check_range("board.thickness", self.board.thickness, THICKNESS.0, THICKNESS.1)?;
        check_range("board.grain", self.board.grain, GRAIN.0, GRAIN.1)?;
        check_range("pieces.radius", self.pieces.radius, PIECE_RADIUS.0, PIECE_RADIUS.1)?;
        check_range("pieces.height", self.pieces.height, PIECE_HEIGHT.0, PIECE_HEIGHT.1)?;
        check_range("table.grain_scale", self.table.grain_scale, GRAIN_SCALE.0, GRAIN_SCALE.1)?;
        Ok(())
    }
}

/// Multiplies each channel by a random factor near 1 (a different dye lot, a different board).
fn vary_color(rng: &mut ChaCha8Rng, rgb: Rgb8, amount: f64) -> Rgb8 {
    let common = 1.0 + rng.gen_range(-amount..=amount);
    rgb.map(|c| {
        let own = 1.0 + rng.gen_range(-amount..=amount) * 0.4;
        (c as f64 * common * own).round().clamp(0.0, 255.0) as u8
    })
}

/// The wooden palette's board and men: mostly the real set's printed board with a key border and
/// small grooved men, sometimes a veneer board. Its own random stream, so that adding to it
/// leaves the seed palette's scenes as they were.
fn wooden_look(scene: &mut Scene, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x00D0_0DE4_0000_0005);
    let veneer = rng.gen_bool(0.3);
    if veneer {
        let colors = &mut scene.colors;
        colors.light_square = vary_color(&mut rng, [224, 192, 142], 0.06);
        colors.dark_square = vary_color(&mut rng, [128, 80, 46], 0.06);
        colors.frame = vary_color(&mut rng, [104, 62, 36], 0.06);
        scene.board.veneer = true;
    } else {
        scene.board.frame_width = rng.gen_range(0.25..0.45);
        scene.board.thickness = rng.gen_range(0.08..0.2);
        scene.board.grain = 0.0;
        scene.board.inlay = false;
        scene.board.key_border = true;
    }
    scene.pieces.radius = rng.gen_range(0.3..0.37);
    scene.pieces.height = rng.gen_range(0.11..0.17);
    scene.pieces.grooves = rng.gen_range(3..=5);
}

/// A random but realistic scene: camera within 30 degrees of vertical, any rotation of the board,
/// lamp, uneven light, glare, noise, blur and lens distortion within what real webcams and
/// phones over a table show. The same seed gives the same scene.
pub fn random_scene(seed: u64, palette: Palette) -> Scene {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5CE4_E5EE_D000_0001);
    let (width, height) = if rng.gen_bool(0.5) { (1280, 720) } else { (960, 720) };
    let mut scene = Scene::overhead(palette, width, height);
    let wooden = palette == Palette::Wooden;

    let c = &mut scene.colors;
    for color in [&mut c.light_square, &mut c.dark_square, &mut c.frame] {
        *color = vary_color(&mut rng, *color, 0.07);
    }
    c.table = vary_color(&mut rng, c.table, 0.25);
    for color in [&mut c.black_man, &mut c.black_king, &mut c.white_man, &mut c.white_king] {
        *color = vary_color(&mut rng, *color, 0.06);
    }
    if wooden {
        // A stacked king is the same wood as a man.
        c.black_king = c.black_man;
        c.white_king = c.white_man;
    }

    scene.board = BoardShape {
        frame_width: rng.gen_range(0.3..0.9),
        thickness: rng.gen_range(0.12..0.35),
        inlay: rng.gen_bool(0.6),
        grain: if wooden { rng.gen_range(0.08..0.2) } else { rng.gen_range(0.0..0.05) },
        veneer: false,
        key_border: false,
        marble: 0.0,
    };
    scene.pieces = PieceShape {
        radius: rng.gen_range(0.35..0.42),
        height: if wooden { rng.gen_range(0.12..0.18) } else { rng.gen_range(0.15..0.25) },
        stacked_kings: wooden,
        grooves: 0,
    };
    if wooden {
        wooden_look(&mut scene, seed);
    }
    scene.table = TableLook {
        kind: if rng.gen_bool(0.65) { TableKind::Wood } else { TableKind::Cloth },
        grain_scale: rng.gen_range(0.6..1.8),
    };
    scene.camera = CameraParams {
        tilt_deg: rng.gen_range(0.0..=30.0),
        tilt_azimuth_deg: rng.gen_range(0.0..360.0),
        yaw_deg: rng.gen_range(0.0..360.0),
        fov_deg: rng.gen_range(45.0..70.0),
        fill: rng.gen_range(0.62..0.95),
        target_offset: [rng.gen_range(-0.5..0.5), rng.gen_range(-0.5..0.5)],
        k1: rng.gen_range(-0.15..0.06),
    };
    scene.lighting = Lighting {
        azimuth_deg: rng.gen_range(0.0..360.0),
        elevation_deg: rng.gen_range(40.0..80.0),
        ambient: rng.gen_range(0.25..0.5),
        warmth: rng.gen_range(0.2..1.0),
        gradient_direction_deg: rng.gen_range(0.0..360.0),
        gradient_strength: rng.gen_range(0.0..0.3),
        vignette: rng.gen_range(0.0..0.35),
        exposure: rng.gen_range(0.85..1.15),
    };
    let spots = rng.gen_range(0..=2);
    scene.glare = (0..spots)
        .map(|_| GlareSpot {
            center: [rng.gen_range(0.1..0.9), rng.gen_range(0.1..0.9)],
            radius: rng.gen_range(0.02..0.09),
            intensity: rng.gen_range(0.1..0.5),
        })
        .collect();
    scene.noise_sigma = rng.gen_range(0.5..6.0);
    scene.blur_sigma = if rng.gen_bool(0.2) { 0.0 } else { rng.gen_range(0.3..1.4) };
    scene.placement_jitter = rng.gen_range(0.0..0.06);
    scene.texture_seed = rng.gen();
    scene
}

/// An sRGB colour from hue (degrees), saturation and value (0..1).
fn hsv(h: f64, s: f64, v: f64) -> Rgb8 {
    let c = v * s;
    let hp = (h.rem_euclid(360.0)) / 60.0;
    let x = c * (1.0 - (hp % 2.0 - 1.0).abs());
    let (r, g, b) = match hp as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = v - c;
    [r, g, b].map(|u| ((u + m) * 255.0).round().clamp(0.0, 255.0) as u8)
}

/// Rough perceived distance of two colours (mean absolute channel difference, 0..255): enough to
/// keep a drawn set from hiding its men on its own squares, as no real set does.
pub fn colour_distance(a: Rgb8, b: Rgb8) -> f64 {
    (0..3).map(|k| (a[k] as f64 - b[k] as f64).abs()).sum::<f64>() / 3.0
}

/// A board and a two-colour set that no palette was made for: test material for recognition
/// that must learn the session from its start position (`calibrate`, self-calibration).
///
/// Everything `random_scene` varies, plus: the squares' colours (light squares of any pale tint,
/// dark squares green, brown, red, blue, grey or black), a border of any colour (a quarter of the
/// scenes the light squares' own colour, the hardest case for finding the playing area; some the
/// dark squares'), men of two colours drawn from the sets people play with (black, brown, red,
/// green or blue against white, cream, ivory, natural wood or yellow), any radius and height
/// (3-D discs with side walls, shading, cast shadows and highlights; kings stacked), grooves or
/// none, tilt up to 35 degrees, and any lamp colour. The pieces use the two-colour renderer
/// (`Palette::Wooden`), so the wooden palette can serve as the prior that names the sides.
pub fn unseen_board_scene(seed: u64) -> Scene {
    let mut scene = random_scene(seed, Palette::Wooden);
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x0BEE_F00D_0000_0011);
    let light_square = hsv(rng.gen_range(0.0..360.0), rng.gen_range(0.0..0.35), rng.gen_range(0.7..0.96));
    let dark_square = loop {
        let c = match rng.gen_range(0..6) {
            0 => hsv(rng.gen_range(90.0..160.0), rng.gen_range(0.3..0.7), rng.gen_range(0.25..0.55)), // green
            1 => hsv(rng.gen_range(15.0..40.0), rng.gen_range(0.4..0.75), rng.gen_range(0.2..0.55)),  // brown
            2 => hsv(rng.gen_range(-10.0..15.0), rng.gen_range(0.5..0.85), rng.gen_range(0.3..0.6)),  // red
            3 => hsv(rng.gen_range(190.0..240.0), rng.gen_range(0.3..0.7), rng.gen_range(0.25..0.55)), // blue
            4 => hsv(rng.gen_range(0.0..360.0), rng.gen_range(0.0..0.12), rng.gen_range(0.3..0.5)),  // grey
            _ => hsv(rng.gen_range(0.0..360.0), rng.gen_range(0.0..0.3), rng.gen_range(0.06..0.2)),  // black
        };
        if colour_distance(c, light_square) > 70.0 {
            break c;
        }
    };
    let (black_man, white_man) = loop {
        let dark = match rng.gen_range(0..5) {
            0 => hsv(rng.gen_range(0.0..360.0), rng.gen_range(0.0..0.25), rng.gen_range(0.05..0.2)), // black
            1 => hsv(rng.gen_range(10.0..35.0), rng.gen_range(0.5..0.8), rng.gen_range(0.2..0.45)),  // brown
            2 => hsv(rng.gen_range(-8.0..10.0), rng.gen_range(0.65..0.95), rng.gen_range(0.5..0.85)), // red
            3 => hsv(rng.gen_range(100.0..150.0), rng.gen_range(0.5..0.85), rng.gen_range(0.25..0.55)), // green
            _ => hsv(rng.gen_range(200.0..235.0), rng.gen_range(0.55..0.9), rng.gen_range(0.3..0.65)), // blue
        };
        let light = match rng.gen_range(0..5) {
            0 => hsv(rng.gen_range(0.0..360.0), rng.gen_range(0.0..0.06), rng.gen_range(0.88..0.98)), // white
            1 => hsv(rng.gen_range(35.0..55.0), rng.gen_range(0.12..0.3), rng.gen_range(0.85..0.97)), // cream
            2 => hsv(rng.gen_range(40.0..60.0), rng.gen_range(0.05..0.15), rng.gen_range(0.9..1.0)),  // ivory
            3 => hsv(rng.gen_range(25.0..40.0), rng.gen_range(0.3..0.5), rng.gen_range(0.75..0.92)),  // natural wood
            _ => hsv(rng.gen_range(45.0..60.0), rng.gen_range(0.55..0.85), rng.gen_range(0.85..1.0)), // yellow
        };
        // Men must stand out from the squares they stand on, and the sides from each other.
        if colour_distance(dark, dark_square) > 30.0 && colour_distance(light, dark_square) > 60.0 && colour_distance(dark, light) > 80.0 {
            break (dark, light);
        }
    };
    let frame = match rng.gen_range(0..20) {
        0..=4 => light_square,
        5..=7 => dark_square,
        _ => hsv(rng.gen_range(0.0..360.0), rng.gen_range(0.0..0.6), rng.gen_range(0.1..0.97)),
    };
    let c = &mut scene.colors;
    c.light_square = light_square;
    c.dark_square = dark_square;
    c.frame = frame;
    c.black_man = black_man;
    c.black_king = black_man;
    c.white_man = white_man;
    c.white_king = white_man;
    scene.board = BoardShape {
        frame_width: rng.gen_range(0.12..1.0),
        thickness: rng.gen_range(0.05..0.35),
        inlay: rng.gen_bool(0.4),
        grain: if rng.gen_bool(0.4) { rng.gen_range(0.03..0.15) } else { 0.0 },
        veneer: false,
        key_border: false,
        marble: 0.0,
    };
    scene.pieces = PieceShape {
        radius: rng.gen_range(0.3..0.42),
        height: rng.gen_range(0.08..0.25),
        stacked_kings: true,
        grooves: if rng.gen_bool(0.5) { rng.gen_range(2..=5) } else { 0 },
    };
    scene.camera.tilt_deg = rng.gen_range(0.0..=35.0);
    scene.lighting.warmth = rng.gen_range(0.0..1.0);
    scene.lighting.exposure = rng.gen_range(0.75..1.25);
    scene
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_scenes_are_valid_and_repeatable() {
        for seed in 0..200 {
            for palette in [Palette::FourColour, Palette::Wooden] {
                let scene = random_scene(seed, palette);
                scene.validate().unwrap_or_else(|e| panic!("seed {seed}: {e}"));
                assert_eq!(scene, random_scene(seed, palette));
            }
        }
        assert_ne!(random_scene(1, Palette::FourColour), random_scene(2, Palette::FourColour));
    }

    #[test]
    fn unseen_board_scenes_are_valid_repeatable_and_varied() {
        let mut borders_like_light_squares = 0;
        for seed in 0..200 {
            let scene = unseen_board_scene(seed);
            scene.validate().unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            assert_eq!(scene, unseen_board_scene(seed));
            let c = &scene.colors;
            assert!(colour_distance(c.black_man, c.dark_square) > 30.0, "seed {seed}: dark men hidden on their squares");
            assert!(colour_distance(c.light_square, c.dark_square) > 70.0, "seed {seed}: squares alike");
            borders_like_light_squares += (c.frame == c.light_square) as usize;
        }
        // The hard case (a border of the light squares' colour) is well represented.
        assert!((30..=70).contains(&borders_like_light_squares), "{borders_like_light_squares}");
        assert_ne!(unseen_board_scene(1).colors, unseen_board_scene(2).colors);
    }

    #[test]
    fn out_of_range_parameters_are_named() {
        let mut scene = Scene::overhead(Palette::FourColour, 320, 240);
        scene.blur_sigma = 9.0;
        let err = scene.validate().unwrap_err();
        assert!(err.to_string().contains("blur_sigma"), "{err}");

        let mut scene = Scene::overhead(Palette::FourColour, 320, 240);
        scene.camera.k1 = -0.8;
        assert!(scene.validate().unwrap_err().to_string().contains("camera.k1"));

        let mut scene = Scene::overhead(Palette::FourColour, 320, 240);
        scene.camera.tilt_deg = f64::NAN;
        assert!(scene.validate().unwrap_err().to_string().contains("camera.tilt_deg"));
    }

    #[test]
    fn scene_json_round_trip() {
        let scene = random_scene(7, Palette::Wooden);
        let json = serde_json::to_string(&scene).unwrap();
        let back: Scene = serde_json::from_str(&json).unwrap();
        assert_eq!(back, scene);
    }
}
