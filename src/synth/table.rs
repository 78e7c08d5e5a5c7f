//! A projected grid game on a table, seen by a camera, with a player tapping cells by pointing:
//! test material for the projected board's touch input (issue 34).
//!
//! The world: the table is the plane z = 0, in centimetres. The game's grid is projected into a
//! rectangle pinned on it (corner pins undo the projector's keystone), its top left corner at
//! the origin, x along the columns and y along the rows; a cell is `cell_cm` square, so the
//! point (col + 0.5, row + 0.5) in cell units is a cell's centre. The projector is a point light
//! above and to one side: it lights its keystoned frame (a trapezoid larger than the rectangle)
//! with a faint grey black level, and the rectangle with the page's picture. The room adds a
//! soft light from above. A pixel's colour is the albedo of what its ray hits times the room's
//! light plus the projector's light there, less what the hands and a leaning person hold off
//! (shadows, sharp from the projector and soft from the room). The hands take the projected
//! colours where the picture falls on them.
//!
//! Then the camera: vignetting, radial lens distortion (through [`Camera`]), blur and sensor
//! noise ([`effects::develop_image`]). Everything random is drawn from seeds.
//!
//! ```no_run
//! use boardwatch::synth::table::*;
//! let scene = random_table_scene(7);
//! let picture = grid_picture(scene.cols, scene.rows, 40, &|c, r| image::Rgb(if (c + r) % 2 == 0 { [240, 240, 240] } else { [90, 160, 230] }));
//! let hand = PointingHand::tapping([2.5, 3.5], Side::Bottom, &scene);
//! let (image, truth) = render_table_frame(&scene, &picture, &[hand], &[], 1).unwrap();
//! image.save("tap.png").unwrap();
//! println!("{:?} {:?}", truth.corners, truth.fingertips[0].cell);
//! ```

use image::{Rgb, RgbImage};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::camera::Camera;
use super::effects;
use super::error::{check_finite, check_range, SynthError};
use super::hand::{Capsule, HandModel, SKIN_TONES};
use super::math::{ray_segment_distance, rgb_to_linear, smoothstep, srgb_to_linear, Vec3};
use super::scene::{CameraParams, Rgb8};
use super::texture::{cloth, fbm, hash_unit, mix64, value_noise, wood};
use crate::games::cops::map::{Map, Square};
use crate::games::cops::rules::Positions;
use crate::games::sokoban::level::Level;
use crate::touch::pattern::CalibrationPattern;

// ---------------------------------------------------------------------------------------------
// The scene
// ---------------------------------------------------------------------------------------------

/// A side of the pinned rectangle (and of the table around it), as the grid is drawn: `Top` is
/// beyond row 0, `Left` beyond column 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    Top,
    Right,
    Bottom,
    Left,
}

impl Side {
    pub const ALL: [Side; 4] = [Side::Top, Side::Right, Side::Bottom, Side::Left];

    /// The direction an arm from this side comes from ([`PointingHand::approach_deg`]).
    pub fn approach_deg(self) -> f64 {
        match self {
            Side::Bottom => 0.0,
            Side::Right => 90.0,
            Side::Top => 180.0,
            Side::Left => 270.0,
        }
    }

    /// Unit vector in the table plane pointing out of the rectangle through this side.
    fn outward(self) -> (f64, f64) {
        match self {
            Side::Top => (0.0, -1.0),
            Side::Right => (1.0, 0.0),
            Side::Bottom => (0.0, 1.0),
            Side::Left => (-1.0, 0.0),
        }
    }

    fn random(rng: &mut impl Rng) -> Side {
        Side::ALL[rng.gen_range(0..4)]
    }
}

/// What the table's top is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TableFinish {
    Wood,
    Cloth,
    /// Laminate or paint: one colour with faint blotches.
    Plain,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableSurface {
    pub finish: TableFinish,
    pub color: Rgb8,
    /// Size of the texture's features, in centimetres.
    pub grain_cm: f64,
    /// How glossy the top is: the projector lens' reflection (its hot spot), 0 (matte) to 1.
    pub gloss: f64,
}

/// The projector: a point light above the table and to one side of the rectangle.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProjectorParams {
    /// Angle between the vertical and the line from the rectangle's centre to the lens, 0 to 60
    /// degrees: the keystone the page's corner pins undo (0 = straight above).
    pub keystone_deg: f64,
    /// Which side the projector stands on, in the table plane: 0 = beyond the bottom side (the
    /// last row), 90 = beyond the right side, 180 = the top, 270 = the left.
    pub azimuth_deg: f64,
    /// Distance from the rectangle's centre to the lens, in rectangle diagonals (1 to 4).
    pub throw: f64,
    /// How much larger than the rectangle the projector's frame is (1.05 to 2): the rest of the
    /// frame is lit at the black level.
    pub frame_scale: f64,
    /// Light of full white at the rectangle's centre (linear; the room's light is `room.level`).
    pub brightness: f64,
    /// Light of black, as a fraction of white (0 to 0.2): the grey around the rectangle.
    pub black_level: f64,
    /// Colour of the projector's white (each channel 0.7 to 1.3).
    pub cast: [f64; 3],
    /// Light at the frame's corners relative to its centre (0.4 to 1).
    pub edge_light: f64,
}

/// The room's own light: from above, uneven across the table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoomLight {
    /// Light on the table at the rectangle's centre (linear, 0 to 1.5; 0 = a dark room).
    pub level: f64,
    /// Direction in the table plane the light grows towards, degrees.
    pub gradient_direction_deg: f64,
    /// Change of the light across the rectangle's diagonal, as a fraction (0 to 0.8).
    pub gradient_strength: f64,
    /// 0 = neutral white, 1 = warm (tungsten).
    pub warmth: f64,
    /// Where the ceiling light hangs, relative to the rectangle's centre, in cm (x, y, height).
    pub lamp: [f64; 3],
}

/// Where the camera is: it looks at the rectangle's centre (plus `target_offset`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableCamera {
    /// Angle between the optical axis and the vertical, 0 to 35 degrees.
    pub tilt_deg: f64,
    /// Which way the camera leans, relative to the image: 0 = from the image's bottom side.
    pub tilt_azimuth_deg: f64,
    /// Rotation of the grid in the image, clockwise, any angle (0: row 0 at the top).
    pub yaw_deg: f64,
    /// Horizontal field of view, 20 to 100 degrees.
    pub fov_deg: f64,
    /// Fraction of the image the rectangle spans (its larger extent), 0.2 to 1; used when
    /// `distance_cm` is not given.
    pub fill: f64,
    /// Distance from the lens to the point it looks at, cm; `None`: from `fill`.
    pub distance_cm: Option<f64>,
    /// Where the optical axis meets the table, relative to the rectangle's centre, in fractions
    /// of its width and height (-0.5 to 0.5).
    pub target_offset: [f64; 2],
    /// Radial lens distortion on normalized coordinates (negative = barrel), -0.3 to 0.3.
    pub k1: f64,
}

/// Everything about a table, its projector, its room and its camera.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableScene {
    pub width: u32,
    pub height: u32,
    /// The game's grid: columns and rows of square cells.
    pub cols: usize,
    pub rows: usize,
    /// Width of the pinned rectangle on the table, cm (its height follows from the grid).
    pub rect_width_cm: f64,
    pub table: TableSurface,
    pub projector: ProjectorParams,
    pub room: RoomLight,
    pub camera: TableCamera,
    /// Darkening towards the image corners, 0 to 0.8.
    pub vignette: f64,
    pub blur_sigma: f64,
    pub noise_sigma: f64,
    /// The players' skin and sleeves.
    pub skin: Rgb8,
    pub sleeve: Rgb8,
    /// The sides of the table the players stand at (taps without a side come from one of them).
    pub player_sides: Vec<Side>,
    pub texture_seed: u64,
}

impl Default for TableScene {
    /// A 640x480 view of an 8x8 grid on a light wooden table, camera straight above, projector
    /// beyond the top side, 20 degrees off the vertical.
    fn default() -> TableScene {
        TableScene {
            width: 640,
            height: 480,
            cols: 8,
            rows: 8,
            rect_width_cm: 70.0,
            table: TableSurface { finish: TableFinish::Wood, color: [196, 170, 135], grain_cm: 5.0, gloss: 0.25 },
            projector: ProjectorParams {
                keystone_deg: 20.0,
                azimuth_deg: 180.0,
                throw: 1.8,
                frame_scale: 1.3,
                brightness: 1.0,
                black_level: 0.06,
                cast: [1.0, 1.0, 1.0],
                edge_light: 0.8,
            },
            room: RoomLight { level: 0.25, gradient_direction_deg: 30.0, gradient_strength: 0.2, warmth: 0.4, lamp: [30.0, -20.0, 180.0] },
            camera: TableCamera {
                tilt_deg: 0.0,
                tilt_azimuth_deg: 0.0,
                yaw_deg: 0.0,
                fov_deg: 60.0,
                fill: 0.72,
                distance_cm: None,
                target_offset: [0.0, 0.0],
                k1: 0.0,
            },
            vignette: 0.15,
            blur_sigma: 0.6,
            noise_sigma: 2.0,
            skin: SKIN_TONES[1],
            sleeve: [60, 70, 90],
            player_sides: vec![Side::Bottom],
            texture_seed: 1,
        }
    }
}

impl TableScene {
    pub const TILT_DEG: (f64, f64) = (0.0, 35.0);

    /// Side of a cell on the table, cm.
    pub fn cell_cm(&self) -> f64 {
        self.rect_width_cm / self.cols.max(1) as f64
    }

    /// The rectangle's width and height on the table, cm.
    pub fn rect_size(&self) -> (f64, f64) {
        (self.rect_width_cm, self.cell_cm() * self.rows as f64)
    }

    /// The same scene with no blur, noise, vignette, lens distortion or uneven room light.
    pub fn clean(mut self) -> TableScene {
        self.blur_sigma = 0.0;
        self.noise_sigma = 0.0;
        self.vignette = 0.0;
        self.camera.k1 = 0.0;
        self.room.gradient_strength = 0.0;
        self.table.gloss = 0.0;
        self
    }

    /// Checks every parameter; the error names the one at fault.
    pub fn validate(&self) -> Result<(), SynthError> {
        check_range("width", self.width as f64, 32.0, 8192.0)?;
        check_range("height", self.height as f64, 32.0, 8192.0)?;
        check_range("cols", self.cols as f64, 1.0, 256.0)?;
        check_range("rows", self.rows as f64, 1.0, 256.0)?;
        check_range("rect_width_cm", self.rect_width_cm, 5.0, 1000.0)?;
        check_range("table.grain_cm", self.table.grain_cm, 0.2, 100.0)?;
        check_range("table.gloss", self.table.gloss, 0.0, 1.0)?;
        let p = &self.projector;
        check_range("projector.keystone_deg", p.keystone_deg, 0.0, 60.0)?;
        check_finite("projector.azimuth_deg", p.azimuth_deg)?;
        check_range("projector.throw", p.throw, 1.0, 4.0)?;
        check_range("projector.frame_scale", p.frame_scale, 1.05, 2.0)?;
        check_range("projector.brightness", p.brightness, 0.0, 4.0)?;
        check_range("projector.black_level", p.black_level, 0.0, 0.2)?;
        for (i, c) in p.cast.iter().enumerate() {
            check_range(&format!("projector.cast[{i}]"), *c, 0.7, 1.3)?;
        }
        check_range("projector.edge_light", p.edge_light, 0.4, 1.0)?;
        let r = &self.room;
        check_range("room.level", r.level, 0.0, 1.5)?;
        check_finite("room.gradient_direction_deg", r.gradient_direction_deg)?;
        check_range("room.gradient_strength", r.gradient_strength, 0.0, 0.8)?;
        check_range("room.warmth", r.warmth, 0.0, 1.0)?;
        check_range("room.lamp[2]", r.lamp[2], 50.0, 1000.0)?;
        check_finite("room.lamp[0]", r.lamp[0])?;
        check_finite("room.lamp[1]", r.lamp[1])?;
        let c = &self.camera;
        check_range("camera.tilt_deg", c.tilt_deg, Self::TILT_DEG.0, Self::TILT_DEG.1)?;
        check_finite("camera.tilt_azimuth_deg", c.tilt_azimuth_deg)?;
        check_finite("camera.yaw_deg", c.yaw_deg)?;
        check_range("camera.fov_deg", c.fov_deg, 20.0, 100.0)?;
        check_range("camera.fill", c.fill, 0.2, 1.0)?;
        if let Some(d) = c.distance_cm {
            check_range("camera.distance_cm", d, 10.0, 10000.0)?;
        }
        check_range("camera.target_offset[0]", c.target_offset[0], -0.5, 0.5)?;
        check_range("camera.target_offset[1]", c.target_offset[1], -0.5, 0.5)?;
        check_range("camera.k1", c.k1, -0.3, 0.3)?;
        if !Camera::distortion_is_monotonic(c.k1, c.fov_deg, self.width, self.height) {
            return Err(SynthError::DistortionFolds { k1: c.k1, fov_deg: c.fov_deg });
        }
        check_range("vignette", self.vignette, 0.0, 0.8)?;
        check_range("blur_sigma", self.blur_sigma, 0.0, 5.0)?;
        check_range("noise_sigma", self.noise_sigma, 0.0, 40.0)?;
        if self.player_sides.is_empty() {
            return Err(SynthError::BadInput { what: "player_sides".into(), reason: "at least one side is needed".into() });
        }
        Ok(())
    }
}

/// A random table scene: table, projector, room, camera (tilt up to 35 degrees, any yaw), lens
/// and sensor, an 8x8 grid (set `cols`, `rows` for another game).
pub fn random_table_scene(seed: u64) -> TableScene {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x7AB1_E000_0000_0034);
    let finish = [TableFinish::Wood, TableFinish::Cloth, TableFinish::Plain][rng.gen_range(0..3)];
    let color: Rgb8 = match finish {
        TableFinish::Wood => [[200, 170, 130], [170, 130, 95], [215, 190, 155], [150, 110, 80]][rng.gen_range(0..4)],
        TableFinish::Cloth => [[225, 222, 215], [190, 200, 210], [205, 195, 175], [170, 180, 165]][rng.gen_range(0..4)],
        TableFinish::Plain => [[235, 235, 232], [215, 215, 210], [200, 205, 210], [225, 215, 200]][rng.gen_range(0..4)],
    };
    let warm = rng.gen_range(-0.1..0.1);
    let tilt = if rng.gen_bool(0.25) { rng.gen_range(0.0..5.0) } else { rng.gen_range(5.0..35.0) };
    let fov = rng.gen_range(45.0..80.0);
    // Milder barrel distortion for wide lenses, and never folding over.
    let mut k1 = rng.gen_range(-0.12..0.04);
    while !Camera::distortion_is_monotonic(k1, fov, 640, 480) {
        k1 *= 0.5;
    }
    let sides = {
        let first = Side::random(&mut rng);
        if rng.gen_bool(0.5) {
            let opposite = Side::ALL[(Side::ALL.iter().position(|s| *s == first).unwrap() + 2) % 4];
            vec![first, opposite]
        } else {
            vec![first]
        }
    };
    TableScene {
        width: 640,
        height: 480,
        cols: 8,
        rows: 8,
        rect_width_cm: rng.gen_range(45.0..100.0),
        table: TableSurface { finish, color, grain_cm: rng.gen_range(3.0..8.0), gloss: rng.gen_range(0.0..0.6) },
        projector: ProjectorParams {
            keystone_deg: rng.gen_range(5.0..40.0),
            azimuth_deg: rng.gen_range(0.0..360.0),
            throw: rng.gen_range(1.4..2.6),
            frame_scale: rng.gen_range(1.12..1.5),
            brightness: rng.gen_range(0.75..1.15),
            black_level: rng.gen_range(0.03..0.12),
            cast: [1.0 + warm + rng.gen_range(-0.05..0.05), 1.0 + rng.gen_range(-0.05..0.05), 1.0 - warm + rng.gen_range(-0.05..0.05)],
            edge_light: rng.gen_range(0.6..0.95),
        },
        room: RoomLight {
            level: rng.gen_range(0.05..0.45),
            gradient_direction_deg: rng.gen_range(0.0..360.0),
            gradient_strength: rng.gen_range(0.0..0.5),
            warmth: rng.gen_range(0.0..1.0),
            lamp: [rng.gen_range(-80.0..80.0), rng.gen_range(-80.0..80.0), rng.gen_range(150.0..260.0)],
        },
        camera: TableCamera {
            tilt_deg: tilt,
            tilt_azimuth_deg: rng.gen_range(0.0..360.0),
            yaw_deg: if rng.gen_bool(0.5) { rng.gen_range(-15.0..15.0) } else { rng.gen_range(0.0..360.0) },
            fov_deg: fov,
            fill: rng.gen_range(0.55..0.8),
            distance_cm: None,
            target_offset: [rng.gen_range(-0.08..0.08), rng.gen_range(-0.08..0.08)],
            k1,
        },
        vignette: rng.gen_range(0.0..0.35),
        blur_sigma: rng.gen_range(0.3..1.1),
        noise_sigma: rng.gen_range(0.5..5.0),
        skin: SKIN_TONES[rng.gen_range(0..SKIN_TONES.len())],
        sleeve: [[40, 45, 60], [120, 30, 35], [200, 200, 195], [70, 90, 60], [30, 30, 30], [90, 120, 170]][rng.gen_range(0..6)],
        player_sides: sides,
        texture_seed: mix64(seed ^ 0x7AB1E),
    }
}

// ---------------------------------------------------------------------------------------------
// Pictures the page projects
// ---------------------------------------------------------------------------------------------

/// The calibration picture the page projects inside its rectangle, `width_px` x `height_px`:
/// white and black as [`CalibrationPattern::is_white`] says at each pixel's centre.
pub fn calibration_picture(pattern: &CalibrationPattern, width_px: u32, height_px: u32) -> RgbImage {
    RgbImage::from_fn(width_px.max(1), height_px.max(1), |x, y| {
        let (fx, fy) = ((x as f64 + 0.5) / width_px as f64, (y as f64 + 0.5) / height_px as f64);
        if pattern.is_white(fx, fy) {
            Rgb([255, 255, 255])
        } else {
            Rgb([0, 0, 0])
        }
    })
}

/// A grid of `cols` x `rows` cells `px_per_cell` pixels square, each filled with `cells(col,
/// row)`, with thin dark lines between them and around the grid.
pub fn grid_picture(cols: usize, rows: usize, px_per_cell: u32, cells: &dyn Fn(usize, usize) -> Rgb<u8>) -> RgbImage {
    let px = px_per_cell.max(4);
    let line = (px / 24).max(1);
    let (w, h) = (cols.max(1) as u32 * px, rows.max(1) as u32 * px);
    RgbImage::from_fn(w, h, |x, y| {
        let (col, row) = ((x / px) as usize, (y / px) as usize);
        let (ix, iy) = (x % px, y % px);
        let on_line = ix < line || iy < line || x >= w - line || y >= h - line;
        if on_line {
            Rgb([25, 25, 30])
        } else {
            cells(col, row)
        }
    })
}

/// Paints a disc of `color` at the centre of cell (col, row), `fraction` of the cell across.
fn disc(image: &mut RgbImage, px: u32, col: usize, row: usize, fraction: f64, color: [u8; 3]) {
    let (cx, cy) = ((col as f64 + 0.5) * px as f64, (row as f64 + 0.5) * px as f64);
    let r = fraction * px as f64 / 2.0;
    let (x0, y0) = ((cx - r).floor().max(0.0) as u32, (cy - r).floor().max(0.0) as u32);
    let (x1, y1) = (((cx + r).ceil() as u32).min(image.width()), ((cy + r).ceil() as u32).min(image.height()));
    for y in y0..y1 {
        for x in x0..x1 {
            let d = ((x as f64 + 0.5 - cx).powi(2) + (y as f64 + 0.5 - cy).powi(2)).sqrt();
            let cover = (r - d + 0.5).clamp(0.0, 1.0);
            if cover > 0.0 {
                let p = image.get_pixel_mut(x, y);
                for (channel, &wanted) in p.0.iter_mut().zip(&color) {
                    *channel = (*channel as f64 * (1.0 - cover) + wanted as f64 * cover).round() as u8;
                }
            }
        }
    }
}

/// A Sokoban level as the page projects it: walls, floor, goals (red rings), boxes (orange;
/// green on a goal), the player (a blue disc); outside the walls stays black.
pub fn sokoban_picture(level: &Level, px_per_cell: u32) -> RgbImage {
    let inside = level.reachable(level.player, |cell| level.walls[cell]);
    let px = px_per_cell.max(4);
    let wall = Rgb([70, 80, 110]);
    let floor = Rgb([235, 232, 220]);
    let mut image = grid_picture(level.width, level.height, px, &|col, row| {
        let cell = row * level.width + col;
        if level.walls[cell] {
            wall
        } else if inside[cell] {
            floor
        } else {
            Rgb([0, 0, 0])
        }
    });
    for cell in 0..level.width * level.height {
        let (col, row) = (cell % level.width, cell / level.width);
        if level.goals[cell] {
            disc(&mut image, px, col, row, 0.5, [220, 40, 40]);
            disc(&mut image, px, col, row, 0.3, [235, 232, 220]);
        }
        if level.boxes[cell] {
            let color = if level.goals[cell] { [40, 180, 60] } else { [240, 140, 20] };
            let (m, side) = (px / 8, px - 2 * (px / 8));
            for y in row as u32 * px + m..row as u32 * px + m + side {
                for x in col as u32 * px + m..col as u32 * px + m + side {
                    image.put_pixel(x, y, Rgb(color));
                }
            }
        }
        if cell == level.player {
            disc(&mut image, px, col, row, 0.7, [30, 80, 230]);
        }
    }
    image
}

/// Reads the first level of an XSB text for [`sokoban_picture`].
pub fn parse_sokoban_level(xsb: &str) -> Result<Level, SynthError> {
    let levels = crate::games::sokoban::level::parse_collection(xsb)
        .map_err(|e| SynthError::BadInput { what: "sokoban level".into(), reason: e.to_string() })?;
    levels.into_iter().next().ok_or_else(|| SynthError::BadInput { what: "sokoban level".into(), reason: "no level in the text".into() })
}

/// A Cops and Robbers map as the page projects it: roads light, buildings dark, the squares
/// `highlighted` (where the piece to move may go, on the human's turn) framed in yellow, the two
/// policemen as blue discs and the thief as a red one at `positions` (under a policeman who
/// caught him, as on the page).
pub fn cops_picture(map: &Map, positions: Positions, highlighted: &[Square], px_per_cell: u32) -> RgbImage {
    let px = px_per_cell.max(4);
    let frame = (px as f64 * 0.12).round().max(1.0) as u32;
    let mut image = grid_picture(map.width, map.height, px, &|col, row| {
        if map.road[row * map.width + col] {
            Rgb([225, 228, 230])
        } else {
            Rgb([120, 85, 60])
        }
    });
    for &square in highlighted {
        let (row, col) = map.row_column(square);
        let (x0, y0) = (col as u32 * px, row as u32 * px);
        for y in y0..y0 + px {
            for x in x0..x0 + px {
                if x - x0 < frame || y - y0 < frame || x0 + px - 1 - x < frame || y0 + px - 1 - y < frame {
                    image.put_pixel(x, y, Rgb([255, 212, 0]));
                }
            }
        }
    }
    for (square, color) in [(positions.thief, [230, 30, 30]), (positions.police1, [20, 60, 235]), (positions.police2, [20, 60, 235])] {
        let (row, col) = map.row_column(square);
        disc(&mut image, px, col, row, 0.72, color);
    }
    image
}

/// A Dots field as the page projects it: a light ground with thin lines through the points
/// (one point a cell, at its centre), small grey points, and the players' dots (`player` 0 red,
/// 1 blue) as large discs.
pub fn dots_picture(cols: usize, rows: usize, px_per_cell: u32, dots: &[([usize; 2], u8)]) -> RgbImage {
    let px = px_per_cell.max(4);
    let (w, h) = (cols.max(1) as u32 * px, rows.max(1) as u32 * px);
    let line = (px / 20).max(1);
    let mut image = RgbImage::from_fn(w, h, |x, y| {
        let (ix, iy) = (x % px, y % px);
        let mid = px / 2;
        if ix.abs_diff(mid) < line.div_ceil(2) || iy.abs_diff(mid) < line.div_ceil(2) {
            Rgb([110, 150, 210])
        } else {
            Rgb([245, 245, 240])
        }
    });
    for row in 0..rows {
        for col in 0..cols {
            disc(&mut image, px, col, row, 0.18, [90, 90, 100]);
        }
    }
    for &([col, row], player) in dots {
        if col < cols && row < rows {
            disc(&mut image, px, col, row, 0.55, if player == 0 { [225, 25, 35] } else { [25, 70, 225] });
        }
    }
    image
}

// ---------------------------------------------------------------------------------------------
// Hands, arms and a person
// ---------------------------------------------------------------------------------------------

/// A hand pointing at the table: forearm, palm, index finger extended, the other fingers
/// curled, the thumb along them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointingHand {
    /// The table point the fingertip is over, in cells: (col + 0.5, row + 0.5) is a cell's
    /// centre.
    pub target: [f64; 2],
    /// Height of the fingertip's underside above the table, cm (0 = touching it).
    pub height_cm: f64,
    /// The direction the arm comes from, degrees in the table plane: 0 = from beyond the
    /// bottom side, 90 = the right, 180 = the top, 270 = the left.
    pub approach_deg: f64,
    pub left_handed: bool,
    pub skin: Rgb8,
    pub sleeve: Rgb8,
    /// 1 = an adult's hand.
    pub size: f64,
}

impl PointingHand {
    /// A hand of the scene's player touching the table at `target` (cells), the arm from `side`.
    pub fn tapping(target: [f64; 2], side: Side, scene: &TableScene) -> PointingHand {
        PointingHand {
            target,
            height_cm: 0.0,
            approach_deg: side.approach_deg(),
            left_handed: false,
            skin: scene.skin,
            sleeve: scene.sleeve,
            size: 1.0,
        }
    }

    pub fn validate(&self) -> Result<(), SynthError> {
        check_range("hand.target[0]", self.target[0], -300.0, 600.0)?;
        check_range("hand.target[1]", self.target[1], -300.0, 600.0)?;
        check_range("hand.height_cm", self.height_cm, 0.0, 100.0)?;
        check_finite("hand.approach_deg", self.approach_deg)?;
        check_range("hand.size", self.size, 0.5, 1.6)
    }

    /// The fingertip's centre (the pad's sphere) on the table, cm.
    fn tip_centre(&self, cell_cm: f64) -> Vec3 {
        Vec3::new(self.target[0] * cell_cm, self.target[1] * cell_cm, self.height_cm + TIP_RADIUS * self.size)
    }

    fn body(&self, cell_cm: f64) -> Body {
        let s = self.size;
        let frame = PoseFrame::new(self.tip_centre(cell_cm), self.approach_deg, self.left_handed, s);
        let skin = rgb_to_linear(self.skin);
        let sleeve = rgb_to_linear(self.sleeve);
        let mut b = BodyBuilder::new(frame);
        // Pose coordinates (cm for size 1): towards the arm, sideways (thumb negative), up;
        // relative to the fingertip's centre.
        // Index finger, extended and pointing down at the table.
        b.limb(&[(0.0, 0.0, 0.0), (2.0, 0.0, 0.9), (4.3, -0.1, 2.0), (7.0, 0.1, 3.3)], &[TIP_RADIUS, 0.86, 0.95], skin);
        // Palm from the knuckles to the wrist.
        b.limb(&[(7.2, 0.4, 3.6), (14.2, 1.4, 5.9)], &[1.9], skin);
        b.limb(&[(7.5, 2.5, 3.5), (14.2, 2.4, 5.9)], &[1.9], skin);
        b.limb(&[(7.8, 4.3, 3.2), (13.7, 3.3, 5.6)], &[1.6], skin);
        // Middle, ring and little fingers curled under the palm.
        b.limb(&[(7.4, 2.2, 3.3), (4.9, 2.3, 2.1), (5.6, 2.3, 0.8)], &[0.92, 0.85], skin);
        b.limb(&[(7.6, 3.9, 3.1), (5.3, 4.0, 1.9), (6.0, 4.0, 0.8)], &[0.88, 0.8], skin);
        b.limb(&[(8.0, 5.3, 2.9), (6.2, 5.4, 1.8), (6.8, 5.3, 0.9)], &[0.78, 0.72], skin);
        // Thumb along the curled fingers.
        b.limb(&[(12.5, -0.6, 4.4), (9.6, -2.2, 3.2), (7.2, -2.1, 2.3)], &[1.35, 1.05], skin);
        // Forearm rising to the elbow, the sleeve from there to the shoulder.
        // (Radii grow a little a segment, so that no ledge shows where two capsules meet.)
        b.limb(
            &[(13.5, 2.0, 5.7), (17.0, 2.0, 6.6), (21.0, 2.1, 7.7), (25.0, 2.2, 8.8), (29.0, 2.2, 10.0), (33.0, 2.3, 11.2), (40.0, 2.4, 13.5)],
            &[2.05, 2.25, 2.45, 2.6, 2.75, 2.9],
            skin,
        );
        b.limb(&[(37.0, 2.4, 12.6), (50.0, 2.7, 17.5), (62.0, 3.0, 22.0), (95.0, 3.0, 34.0)], &[3.6, 4.0, 4.4], sleeve);
        b.finish(0.0)
    }
}

/// Radius of a fingertip, cm, for a hand of size 1.
const TIP_RADIUS: f64 = 0.8;

/// An arm resting on the table at the rectangle's edge, hand flat, not pointing at anything.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RestingArm {
    pub side: Side,
    /// Where along the side, 0 to 1 (from its left end as seen from outside... i.e. the smaller
    /// x or y).
    pub along: f64,
    /// How far the fingertips reach past the rectangle's edge into it, cm (negative: they stop
    /// short of it).
    pub reach_cm: f64,
    /// The arm's angle away from square to the side, degrees.
    pub turn_deg: f64,
    pub left_handed: bool,
    pub skin: Rgb8,
    pub sleeve: Rgb8,
    pub size: f64,
}

impl RestingArm {
    fn tip(&self, scene: &TableScene) -> (f64, f64) {
        let (w, h) = scene.rect_size();
        let along = self.along.clamp(0.0, 1.0);
        let (ox, oy) = self.side.outward();
        let (ex, ey) = match self.side {
            Side::Top => (along * w, 0.0),
            Side::Bottom => (along * w, h),
            Side::Left => (0.0, along * h),
            Side::Right => (w, along * h),
        };
        (ex - ox * self.reach_cm, ey - oy * self.reach_cm)
    }

    fn body(&self, scene: &TableScene) -> Body {
        let (tx, ty) = self.tip(scene);
        let s = self.size;
        let frame = PoseFrame::new(Vec3::new(tx, ty, 0.75 * s), self.side.approach_deg() + self.turn_deg, self.left_handed, s);
        let skin = rgb_to_linear(self.skin);
        let sleeve = rgb_to_linear(self.sleeve);
        let mut b = BodyBuilder::new(frame);
        // Fingers extended flat (the middle finger's tip at the origin).
        b.limb(&[(1.0, -2.0, 0.0), (8.5, -1.6, 0.5)], &[0.75], skin);
        b.limb(&[(0.0, 0.0, 0.0), (8.6, 0.2, 0.6)], &[0.8], skin);
        b.limb(&[(0.9, 1.9, 0.0), (8.5, 1.9, 0.5)], &[0.76], skin);
        b.limb(&[(2.8, 3.6, -0.1), (8.3, 3.4, 0.4)], &[0.66], skin);
        // Palm and thumb.
        b.limb(&[(8.6, -1.2, 0.9), (16.0, -0.2, 1.4)], &[1.6], skin);
        b.limb(&[(8.6, 1.8, 0.9), (16.0, 1.8, 1.4)], &[1.6], skin);
        b.limb(&[(14.5, -2.2, 0.9), (10.0, -4.3, 0.3), (6.5, -4.8, 0.1)], &[1.15, 0.85], skin);
        // Forearm on the table, then the sleeve.
        b.limb(&[(16.0, 0.8, 1.7), (38.0, 1.2, 2.2)], &[2.7], skin);
        b.limb(&[(36.0, 1.2, 2.6), (75.0, 1.5, 8.0)], &[3.7], sleeve);
        b.finish(0.0)
    }
}

/// A person leaning in over the table from one side: a dark head and shoulders close to the
/// camera at the image's edge, out of focus, with their shadow.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LeaningPerson {
    pub side: Side,
    /// Where along the side, 0 to 1.
    pub along: f64,
    /// How far in: 0 = out of view, 1 = fully leaning in.
    pub lean: f64,
    pub hair: Rgb8,
    pub shirt: Rgb8,
}

/// What else is in the picture besides the pointing hands.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TableExtra {
    Lean(LeaningPerson),
    RestingArm(RestingArm),
}

/// Pose coordinates to table coordinates.
#[derive(Clone, Copy)]
struct PoseFrame {
    origin: Vec3,
    back: Vec3,
    side: Vec3,
    size: f64,
}

impl PoseFrame {
    fn new(origin: Vec3, approach_deg: f64, left_handed: bool, size: f64) -> PoseFrame {
        let a = approach_deg.to_radians();
        let back = Vec3::new(a.sin(), a.cos(), 0.0);
        let handedness = if left_handed { -1.0 } else { 1.0 };
        let side = Vec3::new(-back.y, back.x, 0.0) * handedness;
        PoseFrame { origin, back, side, size }
    }

    fn at(&self, (b, sd, u): (f64, f64, f64)) -> Vec3 {
        self.origin + (self.back * b + self.side * sd + Vec3::UP * u) * self.size
    }
}

struct BodyBuilder {
    frame: PoseFrame,
    capsules: Vec<Capsule>,
    albedo: Vec<Vec3>,
}

impl BodyBuilder {
    fn new(frame: PoseFrame) -> BodyBuilder {
        BodyBuilder { frame, capsules: Vec::new(), albedo: Vec::new() }
    }

    fn limb(&mut self, points: &[(f64, f64, f64)], radii: &[f64], albedo: Vec3) {
        for (pair, r) in points.windows(2).zip(radii) {
            self.capsules.push(Capsule { a: self.frame.at(pair[0]), b: self.frame.at(pair[1]), radius: r * self.frame.size });
            self.albedo.push(albedo);
        }
    }

    fn finish(self, soft: f64) -> Body {
        Body { model: HandModel::from_capsules(self.capsules), albedo: self.albedo, soft, pixel_box: [0.0; 4], shadow_boxes: Vec::new() }
    }
}

/// Something that stands between the lights, the camera and the table.
struct Body {
    model: HandModel,
    albedo: Vec<Vec3>,
    /// 0 = a sharp surface; else the width (cm) of the soft edge of a blurred blob (a person
    /// close to the lens, out of focus) drawn with coverage instead of a surface.
    soft: f64,
    /// Image box (x0, y0, x1, y1) that holds all of it.
    pixel_box: [f64; 4],
    /// Per light, per capsule: the table box its shadow can fall in.
    shadow_boxes: Vec<Vec<[f64; 4]>>,
}

impl Body {
    fn capsules(&self) -> &[Capsule] {
        &self.model.capsules
    }

    /// Signed distance with the capsules blended where they meet (`blend` cm wide).
    fn blended_distance(&self, p: Vec3, blend: f64) -> f64 {
        let mut d = f64::MAX;
        for c in self.capsules() {
            let e = c.distance(p);
            if d == f64::MAX {
                d = e;
            } else {
                let h = (0.5 + 0.5 * (e - d) / blend).clamp(0.0, 1.0);
                d = e + (d - e) * h - blend * h * (1.0 - h);
            }
        }
        d
    }

    /// Surface normal from the blended shape: joints shade like skin over a joint, without
    /// the seams of separate capsules.
    fn smooth_normal(&self, p: Vec3) -> Vec3 {
        const E: f64 = 0.02;
        let k = [Vec3::new(1.0, -1.0, -1.0), Vec3::new(-1.0, -1.0, 1.0), Vec3::new(-1.0, 1.0, -1.0), Vec3::new(1.0, 1.0, 1.0)];
        let mut n = Vec3::ZERO;
        for dir in k {
            n += dir * self.blended_distance(p + dir * E, 0.9);
        }
        n.normalized()
    }
}

// ---------------------------------------------------------------------------------------------
// The renderer
// ---------------------------------------------------------------------------------------------

/// What a rendered frame shows, in image pixels (pixel centres at integers; lens distortion
/// included).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableFrameTruth {
    /// The pinned rectangle's corners: top left, top right, bottom right, bottom left (as the
    /// grid is drawn: row 0 at the top, column 0 at the left).
    pub corners: [[f64; 2]; 4],
    /// One per pointing hand, in the order given.
    pub fingertips: Vec<FingertipTruth>,
    /// The camera's distance to the point it looks at, cm, and one cell's size in pixels at
    /// the rectangle's centre (for tolerances).
    pub camera_distance_cm: f64,
    pub cell_px: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FingertipTruth {
    /// Where the fingertip (the centre of its pad) is in the image.
    pub pixel: [f64; 2],
    /// Where the table point right under it is in the image.
    pub table_pixel: [f64; 2],
    /// The table point under it, in cells.
    pub target: [f64; 2],
    /// The cell under it, `[col, row]`; `None` outside the grid.
    pub cell: Option<[usize; 2]>,
    pub height_cm: f64,
    /// Whether the camera sees the fingertip (inside the image, nothing in front of it).
    pub visible: bool,
}

struct Projector {
    position: Vec3,
    right: Vec3,
    up: Vec3,
    forward: Vec3,
    /// The frame in the projector's normalized coordinates: x0, y0, x1, y1.
    frame: [f64; 4],
    centre_distance: f64,
    centre_cos: f64,
}

impl Projector {
    fn new(scene: &TableScene) -> Projector {
        let p = &scene.projector;
        let (w, h) = scene.rect_size();
        let centre = Vec3::new(w / 2.0, h / 2.0, 0.0);
        let diagonal = (w * w + h * h).sqrt();
        let (k, az) = (p.keystone_deg.to_radians(), p.azimuth_deg.to_radians());
        let direction = Vec3::new(az.sin() * k.sin(), az.cos() * k.sin(), k.cos());
        let position = centre + direction * (p.throw * diagonal);
        let forward = (centre - position).normalized();
        let mut right = forward.cross(Vec3::new(az.sin(), az.cos(), 0.0));
        if right.length() < 1e-6 {
            right = Vec3::new(1.0, 0.0, 0.0);
        }
        let right = right.normalized();
        let up = right.cross(forward).normalized();
        let mut projector = Projector { position, right, up, forward, frame: [0.0; 4], centre_distance: p.throw * diagonal, centre_cos: k.cos() };
        let corners = [(0.0, 0.0), (w, 0.0), (w, h), (0.0, h)].map(|(x, y)| projector.normalized(Vec3::new(x, y, 0.0)));
        let (mut x0, mut y0, mut x1, mut y1) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
        for [x, y] in corners {
            (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x), y1.max(y));
        }
        let (mx, my, hx, hy) = ((x0 + x1) / 2.0, (y0 + y1) / 2.0, (x1 - x0) / 2.0 * p.frame_scale, (y1 - y0) / 2.0 * p.frame_scale);
        projector.frame = [mx - hx, my - hy, mx + hx, my + hy];
        projector
    }

    fn normalized(&self, q: Vec3) -> [f64; 2] {
        let rel = q - self.position;
        let z = rel.dot(self.forward).max(1e-9);
        [rel.dot(self.right) / z, rel.dot(self.up) / z]
    }
}

struct TableWorld<'a> {
    scene: &'a TableScene,
    camera: Camera,
    projector: Projector,
    /// Lights that cast shadows: the projector (0) and the ceiling lamp (1), with their
    /// penumbra at the occluder and its growth per cm of distance.
    lights: [(Vec3, f64, f64); 2],
    room_colour: Vec3,
    room_centre: Vec3,
    picture: Vec<Vec3>,
    picture_size: (usize, usize),
    rect: (f64, f64),
    bodies: Vec<Body>,
    table_albedo: Vec3,
}

fn camera_params(scene: &TableScene) -> CameraParams {
    let (w, h) = scene.rect_size();
    let c = &scene.camera;
    // The synth camera looks at the board centre (4, 4) plus an offset.
    let target = [w / 2.0 + c.target_offset[0] * w, h / 2.0 + c.target_offset[1] * h];
    CameraParams {
        tilt_deg: c.tilt_deg,
        tilt_azimuth_deg: c.tilt_azimuth_deg,
        yaw_deg: c.yaw_deg,
        fov_deg: c.fov_deg,
        fill: c.fill,
        target_offset: [target[0] - 4.0, target[1] - 4.0],
        k1: c.k1,
    }
}

/// The scene's camera: at `distance_cm`, or where the rectangle spans `fill` of the image and
/// lies wholly in it.
pub fn table_camera(scene: &TableScene) -> Result<Camera, SynthError> {
    let params = camera_params(scene);
    let (w, h) = scene.rect_size();
    if let Some(d) = scene.camera.distance_cm {
        return Ok(Camera::at_distance(&params, scene.width, scene.height, d));
    }
    let outline = [(0.0, 0.0), (w, 0.0), (w, h), (0.0, h)].map(|(x, y)| Vec3::new(x, y, 0.0));
    let mut distance = 1.2 * w.max(h) / (scene.camera.fov_deg.to_radians() / 2.0).tan();
    for _ in 0..40 {
        let camera = Camera::at_distance(&params, scene.width, scene.height, distance);
        let (mut x0, mut y0, mut x1, mut y1) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
        for p in outline {
            let [u, v] = camera.project(p).ok_or(SynthError::NoView)?;
            (x0, y0, x1, y1) = (x0.min(u), y0.min(v), x1.max(u), y1.max(v));
        }
        let span = ((x1 - x0) / scene.width as f64).max((y1 - y0) / scene.height as f64);
        let reach = ((camera.cx - x0).max(x1 - camera.cx) / (scene.width as f64 / 2.0))
            .max((camera.cy - y0).max(y1 - camera.cy) / (scene.height as f64 / 2.0));
        let step = (span / scene.camera.fill).max(reach / 0.97);
        distance *= step;
        if (step - 1.0).abs() < 1e-9 {
            break;
        }
    }
    let camera = Camera::at_distance(&params, scene.width, scene.height, distance);
    if !camera.position.z.is_finite() || camera.position.z <= 0.0 {
        return Err(SynthError::NoView);
    }
    Ok(camera)
}

/// Where a leaning person's head is: beyond `side` so that, fully leaning, the head's centre is
/// a little inside the image's edge.
fn person_body(scene: &TableScene, camera: &Camera, person: &LeaningPerson) -> Body {
    let (w, h) = scene.rect_size();
    let along = person.along.clamp(0.0, 1.0);
    let (ox, oy) = person.side.outward();
    let edge = match person.side {
        Side::Top => Vec3::new(along * w, 0.0, 0.0),
        Side::Bottom => Vec3::new(along * w, h, 0.0),
        Side::Left => Vec3::new(0.0, along * h, 0.0),
        Side::Right => Vec3::new(w, along * h, 0.0),
    };
    let out = Vec3::new(ox, oy, 0.0);
    let head_height = 42.0;
    let inside = |d: f64| {
        let p = edge + out * d + Vec3::UP * head_height;
        camera.project(p).is_some_and(|[u, v]| u >= 0.0 && v >= 0.0 && u <= scene.width as f64 - 1.0 && v <= scene.height as f64 - 1.0)
    };
    let mut exit = 0.0;
    while exit < 400.0 && inside(exit) {
        exit += 1.0;
    }
    let lean = person.lean.clamp(0.0, 1.0);
    let d = exit + 12.0 - lean * 22.0;
    let head = edge + out * d + Vec3::UP * head_height;
    let across = Vec3::new(-oy, ox, 0.0);
    let shoulders = head + out * 14.0 - Vec3::UP * 14.0;
    let hair = rgb_to_linear(person.hair);
    let shirt = rgb_to_linear(person.shirt);
    let capsules = vec![
        Capsule { a: head, b: head + out * 3.0, radius: 10.0 },
        Capsule { a: head + out * 6.0, b: shoulders, radius: 6.0 },
        Capsule { a: shoulders - across * 17.0, b: shoulders + across * 17.0, radius: 10.0 },
        Capsule { a: shoulders, b: shoulders + out * 30.0 - Vec3::UP * 20.0, radius: 16.0 },
    ];
    Body {
        model: HandModel::from_capsules(capsules),
        albedo: vec![hair, shirt, shirt, shirt],
        soft: 4.0,
        pixel_box: [0.0; 4],
        shadow_boxes: Vec::new(),
    }
}

impl<'a> TableWorld<'a> {
    fn new(scene: &'a TableScene, picture: &RgbImage, hands: &[PointingHand], extras: &[TableExtra]) -> Result<TableWorld<'a>, SynthError> {
        let camera = table_camera(scene)?;
        let projector = Projector::new(scene);
        let rect = scene.rect_size();
        let centre = Vec3::new(rect.0 / 2.0, rect.1 / 2.0, 0.0);
        let lamp = centre + Vec3::new(scene.room.lamp[0], scene.room.lamp[1], scene.room.lamp[2]);
        let warm = scene.room.warmth;
        let room_colour = Vec3::new(1.0, 1.0 - 0.08 * warm, 1.0 - 0.25 * warm);
        let table_albedo = rgb_to_linear(scene.table.color);
        let cell = scene.cell_cm();
        let mut bodies: Vec<Body> = hands.iter().map(|hand| hand.body(cell)).collect();
        for extra in extras {
            bodies.push(match extra {
                TableExtra::Lean(person) => person_body(scene, &camera, person),
                TableExtra::RestingArm(arm) => arm.body(scene),
            });
        }
        let lights = [(projector.position, 0.04, 0.025), (lamp, 0.3, 0.35)];
        for body in &mut bodies {
            body.pixel_box = pixel_box(&camera, body.capsules(), body.soft);
            body.shadow_boxes = lights.iter().map(|&(light, base, growth)| shadow_boxes(body.capsules(), light, base, growth, body.soft)).collect();
        }
        let (pw, ph) = (picture.width() as usize, picture.height() as usize);
        let table: Vec<f64> = (0..=255u8).map(srgb_to_linear).collect();
        let linear = picture.pixels().map(|p| Vec3::new(table[p.0[0] as usize], table[p.0[1] as usize], table[p.0[2] as usize])).collect();
        Ok(TableWorld {
            scene,
            camera,
            projector,
            lights,
            room_colour,
            room_centre: centre,
            picture: linear,
            picture_size: (pw, ph),
            rect,
            bodies,
            table_albedo,
        })
    }

    /// The picture's colour (linear) at rectangle fractions, bilinearly.
    fn picture_at(&self, fx: f64, fy: f64) -> Vec3 {
        let (w, h) = self.picture_size;
        if w == 0 || h == 0 {
            return Vec3::ZERO;
        }
        let x = (fx * w as f64 - 0.5).clamp(0.0, (w - 1) as f64);
        let y = (fy * h as f64 - 0.5).clamp(0.0, (h - 1) as f64);
        let (x0, y0) = (x.floor() as usize, y.floor() as usize);
        let (x1, y1) = ((x0 + 1).min(w - 1), (y0 + 1).min(h - 1));
        let (tx, ty) = (x - x0 as f64, y - y0 as f64);
        let p = |x: usize, y: usize| self.picture[y * w + x];
        let top = p(x0, y0).lerp(p(x1, y0), tx);
        let bottom = p(x0, y1).lerp(p(x1, y1), tx);
        top.lerp(bottom, ty)
    }

    /// The projector's light arriving at `q` (before the surface's angle and any shadow): the
    /// picture in the rectangle, the black level elsewhere in the frame, nothing outside it.
    fn projected(&self, q: Vec3) -> Vec3 {
        let pr = &self.projector;
        let [nx, ny] = pr.normalized(q);
        let f = pr.frame;
        if nx < f[0] || nx > f[2] || ny < f[1] || ny > f[3] || (q.z >= pr.position.z) {
            return Vec3::ZERO;
        }
        // Where this ray of the projector meets the table.
        let k = pr.position.z / (pr.position.z - q.z);
        let t = pr.position + (q - pr.position) * k;
        let p = &self.scene.projector;
        let black = p.black_level;
        let (w, h) = self.rect;
        let content = if t.x >= 0.0 && t.y >= 0.0 && t.x <= w && t.y <= h {
            let c = self.picture_at(t.x / w, t.y / h);
            c * (1.0 - black) + Vec3::splat(black)
        } else {
            Vec3::splat(black)
        };
        // The lamp's own falloff towards the frame's corners.
        let (cx, cy, hx, hy) = ((f[0] + f[2]) / 2.0, (f[1] + f[3]) / 2.0, (f[2] - f[0]) / 2.0, (f[3] - f[1]) / 2.0);
        let r2 = (((nx - cx) / hx).powi(2) + ((ny - cy) / hy).powi(2)) / 2.0;
        let falloff = 1.0 - (1.0 - p.edge_light) * r2;
        let distance = (pr.position - q).length();
        let inverse_square = (pr.centre_distance / distance).powi(2);
        let cast = Vec3::new(p.cast[0], p.cast[1], p.cast[2]);
        content.mul(cast) * (p.brightness * falloff * inverse_square / pr.centre_cos)
    }

    /// How much of light `index` reaches `p` past the bodies (not `skip`, the one `p` is on).
    fn light_passing(&self, p: Vec3, index: usize, skip: Option<usize>, on_table: bool) -> f64 {
        let (light, base, growth) = self.lights[index];
        let to_light = light - p;
        let reach = to_light.length();
        let dir = to_light * (1.0 / reach);
        let mut passing: f64 = 1.0;
        for (i, body) in self.bodies.iter().enumerate() {
            if Some(i) == skip {
                continue;
            }
            for (c, b) in body.capsules().iter().zip(&body.shadow_boxes[index]) {
                if on_table && !(p.x >= b[0] && p.x <= b[2] && p.y >= b[1] && p.y <= b[3]) {
                    continue;
                }
                let (distance, along) = ray_segment_distance(p, dir, c.a, c.b);
                if along > reach {
                    continue;
                }
                let penumbra = base + growth * along + body.soft;
                passing = passing.min(smoothstep(-penumbra, penumbra, distance - c.radius));
                if passing <= 0.0 {
                    return 0.0;
                }
            }
        }
        passing
    }

    /// Room light falling on `p` with normal `n`.
    fn room_light(&self, p: Vec3, n: Vec3, skip: Option<usize>, on_table: bool) -> Vec3 {
        let room = &self.scene.room;
        if room.level <= 0.0 {
            return Vec3::ZERO;
        }
        let (s, c) = room.gradient_direction_deg.to_radians().sin_cos();
        let (w, h) = self.rect;
        let diagonal = (w * w + h * h).sqrt();
        let along = ((p.x - self.room_centre.x) * s + (p.y - self.room_centre.y) * c) / diagonal;
        let ramp = (1.0 + room.gradient_strength * along).max(0.05);
        let lamp = self.lights[1].0;
        let to_lamp = (lamp - p).normalized();
        let direct = wrap(n.dot(to_lamp), on_table).max(0.0);
        let shadow = if direct > 0.0 { self.light_passing(p, 1, skip, on_table) } else { 1.0 };
        // Half the room's light comes from everywhere (walls, ceiling), dimmed under a body.
        let ambient = 0.5 * (0.55 + 0.45 * shadow) * (0.6 + 0.4 * n.z.max(0.0));
        self.room_colour * (room.level * ramp * (ambient + 0.5 * direct * shadow))
    }

    fn projector_light(&self, p: Vec3, n: Vec3, skip: Option<usize>, on_table: bool) -> Vec3 {
        let to_projector = (self.projector.position - p).normalized();
        let facing = wrap(n.dot(to_projector), on_table);
        if facing <= 0.0 {
            return Vec3::ZERO;
        }
        let light = self.projected(p);
        if light == Vec3::ZERO {
            return light;
        }
        light * (facing * self.light_passing(p, 0, skip, on_table))
    }

    fn table_albedo_at(&self, x: f64, y: f64) -> Vec3 {
        let t = &self.scene.table;
        let seed = self.scene.texture_seed;
        let angle = hash_unit(3, seed) * std::f64::consts::PI;
        let (s, c) = angle.sin_cos();
        // In the synth textures' units (a board square, 4.5 cm).
        let (u, v) = ((x * c - y * s) / 4.5, (x * s + y * c) / 4.5);
        let scale = t.grain_cm / 4.5;
        let base = self.table_albedo;
        match t.finish {
            TableFinish::Wood => {
                let plank_width = 3.0 * scale;
                let plank = (v / plank_width).floor();
                let within = v / plank_width - plank;
                let plank_seed = seed ^ (plank as i64 as u64).wrapping_mul(0x2545_F491);
                let tone = 1.0 + 0.1 * (hash_unit(plank as i64 as u64, seed) - 0.5);
                let g = wood(u + hash_unit(9, plank_seed) * 40.0, v, 1.2 * scale, plank_seed);
                let seam = 0.6 + 0.4 * smoothstep(0.0, 0.015, within.min(1.0 - within));
                base * (tone * (1.0 + 0.12 * g) * seam)
            }
            TableFinish::Cloth => base * (1.0 + 0.08 * cloth(u, v, scale, seed)),
            TableFinish::Plain => base * (1.0 + 0.04 * fbm(u / scale, v / scale, seed, 3)),
        }
    }

    /// Colour of the table at `p` seen along `dir`.
    fn shade_table(&self, p: Vec3, dir: Vec3) -> Vec3 {
        let albedo = self.table_albedo_at(p.x, p.y);
        let room = self.room_light(p, Vec3::UP, None, true);
        let projected = self.projector_light(p, Vec3::UP, None, true);
        let mut colour = albedo.mul(room + projected);
        let gloss = self.scene.table.gloss;
        if gloss > 0.0 && projected != Vec3::ZERO {
            // The lens' reflection: where the mirrored view ray points at the projector.
            let mirrored = Vec3::new(dir.x, dir.y, -dir.z);
            let to_projector = (self.projector.position - p).normalized();
            let cos = mirrored.dot(to_projector).clamp(-1.0, 1.0);
            let angle = cos.acos().to_degrees();
            let spot = (-(angle / 7.0).powi(2)).exp() + 0.3 * (-(angle / 20.0).powi(2)).exp();
            colour += projected * (0.5 * gloss * spot);
        }
        colour
    }

    fn shade_body(&self, index: usize, capsule: usize, p: Vec3, dir: Vec3) -> Vec3 {
        let body = &self.bodies[index];
        let mut n = body.smooth_normal(p);
        if n.dot(dir) > 0.0 {
            // A crease facing away: fall back to the capsule's own normal.
            let c = &body.capsules()[capsule];
            let ba = c.b - c.a;
            let h = ((p - c.a).dot(ba) / ba.dot(ba).max(1e-12)).clamp(0.0, 1.0);
            n = (p - (c.a + ba * h)).normalized();
        }
        let mottle = 1.0 + 0.05 * fbm(p.x * 0.9, p.y * 0.9 + p.z * 0.7, 77, 2);
        let albedo = body.albedo[capsule] * mottle;
        // Skin and cloth scatter light: wrap-around diffuse keeps the sides away from a light
        // from going black.
        let room = self.room_light(p, n, Some(index), false);
        let projected = self.projector_light(p, n, Some(index), false);
        let sheen = 0.04 * (1.0 - (-dir).dot(n).max(0.0)).powi(3);
        albedo.mul(room + projected) + (room + projected) * sheen
    }

    /// Shaded colour of the soft blob `index` (a person) along the ray, and its coverage.
    fn soft_body(&self, index: usize, o: Vec3, dir: Vec3) -> Option<(Vec3, f64, f64)> {
        let body = &self.bodies[index];
        let mut best: Option<(f64, f64, usize)> = None;
        for (i, c) in body.capsules().iter().enumerate() {
            let (distance, along) = ray_segment_distance(o, dir, c.a, c.b);
            let cover = smoothstep(c.radius + body.soft, c.radius - body.soft, distance);
            if cover > 0.0 && best.is_none_or(|(bc, ba, _)| cover > bc + 1e-9 || (cover > bc - 1e-9 && along < ba)) {
                best = Some((cover, along, i));
            }
        }
        let (cover, along, i) = best?;
        let c = &body.capsules()[i];
        let p = o + dir * along;
        // Lit mostly by the room; a little of the projector's black level spills onto it.
        let depth = 1.0 - (ray_segment_distance(o, dir, c.a, c.b).0 / c.radius).clamp(0.0, 1.0);
        let room = self.scene.room.level * (0.35 + 0.45 * depth);
        let projected = self.projected(p).luminance() * 0.3;
        Some((body.albedo[i] * (room + projected), cover, along))
    }

    /// The colour seen through pixel (u, v).
    fn pixel(&self, u: f64, v: f64) -> Vec3 {
        let o = self.camera.position;
        let dir = self.camera.ray_direction(u, v);
        let mut nearest: Option<(f64, usize, usize)> = None;
        let mut soft: Vec<(Vec3, f64, f64)> = Vec::new();
        for (i, body) in self.bodies.iter().enumerate() {
            let b = body.pixel_box;
            if u < b[0] || u > b[2] || v < b[1] || v > b[3] {
                continue;
            }
            if body.soft > 0.0 {
                soft.extend(self.soft_body(i, o, dir));
                continue;
            }
            if let Some((t, c)) = body.model.intersect(o, dir, 0..body.capsules().len()) {
                if nearest.is_none_or(|(bt, _, _)| t < bt) {
                    nearest = Some((t, i, c));
                }
            }
        }
        let table_t = if dir.z < -1e-9 { -o.z / dir.z } else { f64::MAX };
        let mut colour = match nearest {
            Some((t, i, c)) if t < table_t => self.shade_body(i, c, o + dir * t, dir),
            _ if table_t < f64::MAX => self.shade_table(o + dir * table_t, dir),
            _ => Vec3::ZERO,
        };
        // Soft blobs nearer than what is behind them cover it.
        soft.sort_by(|a, b| b.2.total_cmp(&a.2));
        let behind = nearest.map_or(table_t, |(t, _, _)| t.min(table_t));
        for (c, cover, along) in soft {
            if along < behind {
                colour = colour.lerp(c, cover);
            }
        }
        colour
    }

    /// Whether the camera sees the fingertip whose pad is centred at `tip` (radius `radius`) on
    /// body `index`: the first thing its pixel's ray meets is the finger within `radius` of the
    /// pad's surface.
    fn sees_tip(&self, tip: Vec3, radius: f64, index: usize) -> bool {
        let Some([u, v]) = self.camera.project(tip) else { return false };
        if u < 0.0 || v < 0.0 || u > self.scene.width as f64 - 1.0 || v > self.scene.height as f64 - 1.0 {
            return false;
        }
        let o = self.camera.position;
        let dir = (tip - o).normalized();
        let own = &self.bodies[index];
        let Some((hit, _)) = own.model.intersect(o, dir, 0..own.capsules().len()) else { return false };
        if (o + dir * hit - tip).length() > 2.0 * radius {
            return false;
        }
        for (i, body) in self.bodies.iter().enumerate() {
            if i == index {
                continue;
            }
            if body.soft > 0.0 {
                if self.soft_body(i, o, dir).is_some_and(|(_, cover, along)| cover > 0.5 && along < hit) {
                    return false;
                }
            } else if body.model.intersect(o, dir, 0..body.capsules().len()).is_some_and(|(t, _)| t < hit) {
                return false;
            }
        }
        true
    }
}

/// Diffuse falloff with the angle to a light: Lambert's on the table, wrapped round on skin and
/// cloth (light scattered inside them reaches past the terminator).
fn wrap(cos: f64, on_table: bool) -> f64 {
    if on_table {
        cos
    } else {
        (cos + 0.4) / 1.4
    }
}

/// Image box of capsules (projected ends, padded by the projected radius).
fn pixel_box(camera: &Camera, capsules: &[Capsule], soft: f64) -> [f64; 4] {
    let mut b = [f64::MAX, f64::MAX, f64::MIN, f64::MIN];
    for c in capsules {
        for end in [c.a, c.b] {
            let depth = camera.to_camera(end).z;
            let Some([u, v]) = camera.project(end).filter(|_| depth > c.radius + soft + 1.0) else {
                return [f64::MIN, f64::MIN, f64::MAX, f64::MAX];
            };
            let pad = (c.radius + soft) * camera.focal_px / (depth - c.radius - soft) * 1.4 + 3.0;
            b = [b[0].min(u - pad), b[1].min(v - pad), b[2].max(u + pad), b[3].max(v + pad)];
        }
    }
    b
}

/// Table boxes where each capsule's shadow from `light` can fall.
fn shadow_boxes(capsules: &[Capsule], light: Vec3, base: f64, growth: f64, soft: f64) -> Vec<[f64; 4]> {
    let project = |e: Vec3| {
        let drop = (light.z - e.z).max(0.05);
        let k = e.z.max(0.0) / drop;
        (e.x + (e.x - light.x) * k, e.y + (e.y - light.y) * k, k * (light - e).length())
    };
    capsules
        .iter()
        .map(|c| {
            let (ax, ay, reach_a) = project(c.a);
            let (bx, by, reach_b) = project(c.b);
            let pad = c.radius * 1.5 + 0.5 + base + soft + growth * reach_a.max(reach_b) * 1.2;
            [
                ax.min(bx).min(c.a.x).min(c.b.x) - pad,
                ay.min(by).min(c.a.y).min(c.b.y) - pad,
                ax.max(bx).max(c.a.x).max(c.b.x) + pad,
                ay.max(by).max(c.a.y).max(c.b.y) + pad,
            ]
        })
        .collect()
}

/// Renders the scene with `picture` projected into the rectangle, the pointing `hands` and
/// `extras`; `seed` draws the sensor noise.
pub fn render_table_frame(
    scene: &TableScene,
    picture: &RgbImage,
    hands: &[PointingHand],
    extras: &[TableExtra],
    seed: u64,
) -> Result<(RgbImage, TableFrameTruth), SynthError> {
    scene.validate()?;
    for hand in hands {
        hand.validate()?;
    }
    if picture.width() == 0 || picture.height() == 0 {
        return Err(SynthError::BadInput { what: "picture".into(), reason: "the picture is empty".into() });
    }
    let world = TableWorld::new(scene, picture, hands, extras)?;
    let (w, h) = (scene.width as usize, scene.height as usize);
    let mut linear = vec![[0f32; 3]; w * h];
    let (cx, cy) = ((w as f64 - 1.0) / 2.0, (h as f64 - 1.0) / 2.0);
    let half_diagonal = (cx * cx + cy * cy).sqrt().max(1.0);
    for y in 0..h {
        for x in 0..w {
            let c = world.pixel(x as f64, y as f64);
            let (dx, dy) = ((x as f64 - cx) / half_diagonal, (y as f64 - cy) / half_diagonal);
            let vignette = (1.0 - scene.vignette * (dx * dx + dy * dy)) as f32;
            linear[y * w + x] = [c.x as f32 * vignette, c.y as f32 * vignette, c.z as f32 * vignette];
        }
    }
    let truth = frame_truth(&world, hands)?;
    Ok((effects::develop_image(linear, scene.width, scene.height, scene.blur_sigma, scene.noise_sigma, seed), truth))
}

/// The truth of a frame without rendering it.
pub fn table_frame_truth(scene: &TableScene, hands: &[PointingHand], extras: &[TableExtra]) -> Result<TableFrameTruth, SynthError> {
    scene.validate()?;
    let blank = RgbImage::new(1, 1);
    let world = TableWorld::new(scene, &blank, hands, extras)?;
    frame_truth(&world, hands)
}

fn frame_truth(world: &TableWorld, hands: &[PointingHand]) -> Result<TableFrameTruth, SynthError> {
    let scene = world.scene;
    let (w, h) = world.rect;
    let cam = &world.camera;
    let project = |p: Vec3| cam.project(p).ok_or(SynthError::NoView);
    let corners =
        [project(Vec3::new(0.0, 0.0, 0.0))?, project(Vec3::new(w, 0.0, 0.0))?, project(Vec3::new(w, h, 0.0))?, project(Vec3::new(0.0, h, 0.0))?];
    let cell = scene.cell_cm();
    let centre = Vec3::new(w / 2.0, h / 2.0, 0.0);
    let a = project(centre)?;
    let b = project(centre + Vec3::new(cell, 0.0, 0.0))?;
    let cell_px = ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt();
    let mut fingertips = Vec::with_capacity(hands.len());
    for (i, hand) in hands.iter().enumerate() {
        let tip = hand.tip_centre(cell);
        let on_table = Vec3::new(tip.x, tip.y, 0.0);
        let pixel = cam.project(tip).unwrap_or([f64::NAN, f64::NAN]);
        let table_pixel = cam.project(on_table).unwrap_or([f64::NAN, f64::NAN]);
        let [tx, ty] = hand.target;
        let inside = tx >= 0.0 && ty >= 0.0 && tx < scene.cols as f64 && ty < scene.rows as f64;
        let visible = world.sees_tip(tip, TIP_RADIUS * hand.size, i);
        fingertips.push(FingertipTruth {
            pixel,
            table_pixel,
            target: hand.target,
            cell: inside.then(|| [tx.floor() as usize, ty.floor() as usize]),
            height_cm: hand.height_cm,
            visible,
        });
    }
    Ok(TableFrameTruth { corners, fingertips, camera_distance_cm: (cam.position - centre).length(), cell_px })
}

// ---------------------------------------------------------------------------------------------
// Sessions
// ---------------------------------------------------------------------------------------------

/// One thing that happens at the table. Actions follow one another.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum TableAction {
    /// A hand reaches in (0.5 to 0.8 s), dwells on the cell `[col, row]` for `dwell_s` with a
    /// small tremor, and withdraws. The side is one of the scene's players' when not given.
    Tap {
        cell: [usize; 2],
        dwell_s: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        side: Option<Side>,
    },
    /// A hand sweeps in from `side` over the cell `through` (taken modulo the grid, so that a
    /// script drawn without a grid fits any) and back out, never longer than 0.2 s on a cell.
    PassOver { side: Side, through: [usize; 2] },
    /// An arm lies at the edge of the table for `seconds`, fingertips outside the grid or just
    /// inside its border.
    RestAtEdge { seconds: f64, side: Side },
    /// Someone leans in over the table for `seconds`.
    Lean {
        seconds: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        side: Option<Side>,
    },
    /// The page shows another picture from now on (an animation, a game's new state).
    PageChange { picture_index: usize },
    /// Nothing happens.
    Pause { seconds: f64 },
}

/// A session's actions, in order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableScript {
    pub actions: Vec<TableAction>,
}

impl TableScript {
    /// The highest picture index the script shows (0 when it never changes the page).
    pub fn max_picture_index(&self) -> usize {
        self.actions
            .iter()
            .filter_map(|a| match a {
                TableAction::PageChange { picture_index } => Some(*picture_index),
                _ => None,
            })
            .max()
            .unwrap_or(0)
    }
}

/// One frame of a session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlannedTableFrame {
    pub time_s: f64,
    pub hands: Vec<PointingHand>,
    pub extras: Vec<TableExtra>,
    pub picture_index: usize,
    /// The action under way (index into the script), if any.
    pub action: Option<usize>,
}

/// An intended tap: exactly the script's `Tap` actions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TruthTap {
    pub cell: [usize; 2],
    pub dwell_start_s: f64,
    pub dwell_end_s: f64,
    pub action: usize,
}

/// What a rendered session holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableSessionTruth {
    pub fps: f64,
    pub frames: usize,
    pub taps: Vec<TruthTap>,
    pub scene: TableScene,
    pub script: TableScript,
}

/// What an action does over its span.
enum Motion {
    Tap { side: Side, target: [f64; 2], hover: f64, reach: f64, dwell: f64, withdraw: f64, left: bool },
    Pass { side: Side, target: [f64; 2], leg: f64, height: f64, left: bool },
    Rest { arm: RestingArm, seconds: f64 },
    Lean { person: LeaningPerson, seconds: f64 },
    Page(usize),
    Pause(f64),
}

impl Motion {
    fn duration(&self) -> f64 {
        match *self {
            Motion::Tap { reach, dwell, withdraw, .. } => reach + dwell + withdraw,
            Motion::Pass { leg, .. } => 2.0 * leg,
            Motion::Rest { seconds, .. } => seconds + 0.8,
            Motion::Lean { seconds, .. } => seconds + 1.2,
            Motion::Page(_) => 0.0,
            Motion::Pause(s) => s,
        }
    }
}

fn check_seconds(name: String, value: f64) -> Result<(), SynthError> {
    check_range(&name, value, 0.0, 3600.0)
}

/// How far (in cells) from `target` along the arm's direction the fingertip must go to take
/// the hand out of the rectangle and well clear of it.
fn out_of_view_distance(scene: &TableScene, target: [f64; 2], side: Side) -> f64 {
    let (cols, rows) = (scene.cols as f64, scene.rows as f64);
    let to_edge = match side {
        Side::Top => target[1],
        Side::Bottom => rows - target[1],
        Side::Left => target[0],
        Side::Right => cols - target[0],
    };
    to_edge + 45.0 / scene.cell_cm()
}

fn plan_motions(scene: &TableScene, script: &TableScript) -> Result<Vec<Motion>, SynthError> {
    let mut motions = Vec::with_capacity(script.actions.len());
    let cell_cm = scene.cell_cm();
    for (index, action) in script.actions.iter().enumerate() {
        let mut rng = ChaCha8Rng::seed_from_u64(mix64(scene.texture_seed ^ (index as u64).wrapping_mul(0x9E37_79B9)));
        let name = |field: &str| format!("actions[{index}].{field}");
        let left = rng.gen_bool(0.12);
        motions.push(match *action {
            TableAction::Tap { cell, dwell_s, side } => {
                if cell[0] >= scene.cols || cell[1] >= scene.rows {
                    return Err(SynthError::BadInput {
                        what: name("cell"),
                        reason: format!("[{}, {}] is outside the {}x{} grid", cell[0], cell[1], scene.cols, scene.rows),
                    });
                }
                check_range(&name("dwell_s"), dwell_s, 0.0, 600.0)?;
                let side = side.unwrap_or(scene.player_sides[rng.gen_range(0..scene.player_sides.len())]);
                let target = [cell[0] as f64 + 0.5 + rng.gen_range(-0.18..0.18), cell[1] as f64 + 0.5 + rng.gen_range(-0.18..0.18)];
                let hover = if rng.gen_bool(0.6) { 0.0 } else { rng.gen_range(0.2..1.2) };
                Motion::Tap { side, target, hover, reach: rng.gen_range(0.5..0.8), dwell: dwell_s, withdraw: rng.gen_range(0.45..0.7), left }
            }
            TableAction::PassOver { side, through } => {
                let through = [through[0] % scene.cols, through[1] % scene.rows];
                let (ox, oy) = side.outward();
                // Turn back 1.5 cells beyond the cell, inside the grid where there is room.
                let mut target = [through[0] as f64 + 0.5 - ox * 1.5, through[1] as f64 + 0.5 - oy * 1.5];
                target[0] = target[0].clamp(0.2, scene.cols as f64 - 0.2);
                target[1] = target[1].clamp(0.2, scene.rows as f64 - 0.2);
                let distance = out_of_view_distance(scene, target, side) * cell_cm;
                // Fast enough to cross a cell's diagonal in 0.15 s.
                let speed = (cell_cm * std::f64::consts::SQRT_2 / 0.15).max(distance / 0.9);
                Motion::Pass { side, target, leg: distance / speed, height: rng.gen_range(3.0..8.0), left }
            }
            TableAction::RestAtEdge { seconds, side } => {
                check_seconds(name("seconds"), seconds)?;
                let cell = cell_cm;
                // Fingertips short of the rectangle, or just inside its outer cells' edge strip.
                let reach = if rng.gen_bool(0.5) { rng.gen_range(-10.0..-1.0) } else { rng.gen_range(0.0..0.3 * cell) };
                let arm = RestingArm {
                    side,
                    along: rng.gen_range(0.15..0.85),
                    reach_cm: reach,
                    turn_deg: rng.gen_range(-25.0..25.0),
                    left_handed: left,
                    skin: scene.skin,
                    sleeve: scene.sleeve,
                    size: rng.gen_range(0.9..1.1),
                };
                Motion::Rest { arm, seconds }
            }
            TableAction::Lean { seconds, side } => {
                check_seconds(name("seconds"), seconds)?;
                let side = side.unwrap_or_else(|| Side::random(&mut rng));
                let person = LeaningPerson {
                    side,
                    along: rng.gen_range(0.2..0.8),
                    lean: 1.0,
                    hair: [[25, 20, 18], [60, 40, 25], [15, 15, 15], [110, 80, 50]][rng.gen_range(0..4)],
                    shirt: [[35, 40, 55], [90, 30, 30], [50, 50, 50], [30, 60, 40]][rng.gen_range(0..4)],
                };
                Motion::Lean { person, seconds }
            }
            TableAction::PageChange { picture_index } => Motion::Page(picture_index),
            TableAction::Pause { seconds } => {
                check_seconds(name("seconds"), seconds)?;
                Motion::Pause(seconds)
            }
        });
    }
    Ok(motions)
}

fn ease(t: f64) -> f64 {
    let t = t.clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// The hand of a tap or a pass at time `t` into the motion.
fn hand_at(scene: &TableScene, motion: &Motion, t: f64, key: u64) -> Option<PointingHand> {
    let cell_cm = scene.cell_cm();
    let hand = |target: [f64; 2], height: f64, side: Side, left: bool, turn: f64| PointingHand {
        target,
        height_cm: height.max(0.0),
        approach_deg: side.approach_deg() + turn,
        left_handed: left,
        skin: scene.skin,
        sleeve: scene.sleeve,
        size: 1.0,
    };
    let turn = (hash_unit(key, 0x7u64) - 0.5) * 40.0;
    match *motion {
        Motion::Tap { side, target, hover, reach, dwell, withdraw, left } => {
            let (ox, oy) = side.outward();
            let out = out_of_view_distance(scene, target, side);
            let start = [target[0] + ox * out, target[1] + oy * out];
            let along = |u: f64| [start[0] + (target[0] - start[0]) * u, start[1] + (target[1] - start[1]) * u];
            if t < reach {
                let u = ease(t / reach);
                Some(hand(along(u), hover + (1.0 - u) * 8.0 + 4.0 * (std::f64::consts::PI * u).sin(), side, left, turn))
            } else if t < reach + dwell {
                // A small tremor: well inside the cell.
                let amp = (0.25 / cell_cm).min(0.1);
                let s = (t - reach) * 3.0;
                let jx = amp * value_noise(s, 0.5, key);
                let jy = amp * value_noise(s, 7.5, key ^ 0x55);
                let lift = if hover > 0.0 { 0.2 * value_noise(s, 3.3, key ^ 0x99) } else { 0.0 };
                Some(hand([target[0] + jx, target[1] + jy], hover + lift, side, left, turn))
            } else {
                let u = ease((t - reach - dwell) / withdraw);
                Some(hand(along(1.0 - u), hover + u * 8.0 + 3.0 * (std::f64::consts::PI * u).sin(), side, left, turn))
            }
        }
        Motion::Pass { side, target, leg, height, left } => {
            let (ox, oy) = side.outward();
            let out = out_of_view_distance(scene, target, side);
            let start = [target[0] + ox * out, target[1] + oy * out];
            // At an even speed in and out: no slowing on any cell.
            let u = if t < leg { t / leg } else { (2.0 * leg - t) / leg }.clamp(0.0, 1.0);
            Some(hand([start[0] + (target[0] - start[0]) * u, start[1] + (target[1] - start[1]) * u], height, side, left, turn))
        }
        _ => None,
    }
}

fn extra_at(motion: &Motion, t: f64) -> Option<TableExtra> {
    match motion {
        Motion::Rest { arm, seconds } => {
            // Slides in and out over 0.4 s.
            let u = ease((t / 0.4).min((seconds + 0.8 - t) / 0.4));
            let mut arm = arm.clone();
            arm.reach_cm -= (1.0 - u) * 60.0;
            Some(TableExtra::RestingArm(arm))
        }
        Motion::Lean { person, seconds } => {
            let u = ease((t / 0.6).min((seconds + 1.2 - t) / 0.6));
            let mut person = person.clone();
            person.lean = u;
            (u > 0.0).then_some(TableExtra::Lean(person))
        }
        _ => None,
    }
}

fn plan(scene: &TableScene, script: &TableScript, fps: f64) -> Result<(Vec<PlannedTableFrame>, Vec<TruthTap>), SynthError> {
    scene.validate()?;
    check_range("fps", fps, 1.0, 240.0)?;
    let motions = plan_motions(scene, script)?;
    let mut starts = Vec::with_capacity(motions.len());
    let mut clock = 0.0;
    let mut taps = Vec::new();
    for (index, motion) in motions.iter().enumerate() {
        starts.push(clock);
        if let (Motion::Tap { reach, dwell, .. }, TableAction::Tap { cell, .. }) = (motion, &script.actions[index]) {
            taps.push(TruthTap { cell: *cell, dwell_start_s: clock + reach, dwell_end_s: clock + reach + dwell, action: index });
        }
        clock += motion.duration();
    }
    let total = clock;
    let count = (total * fps).ceil() as usize;
    let mut frames = Vec::with_capacity(count);
    let mut current = 0;
    let mut picture = 0;
    for i in 0..count {
        let time = i as f64 / fps;
        // Move on past the actions that ended (page changes take no time).
        while current < motions.len() && starts[current] + motions[current].duration() <= time {
            if let Motion::Page(p) = motions[current] {
                picture = p;
            }
            current += 1;
        }
        let mut frame = PlannedTableFrame { time_s: time, hands: Vec::new(), extras: Vec::new(), picture_index: picture, action: None };
        if current < motions.len() {
            let t = time - starts[current];
            let key = mix64(scene.texture_seed ^ current as u64);
            frame.hands.extend(hand_at(scene, &motions[current], t, key));
            frame.extras.extend(extra_at(&motions[current], t));
            frame.action = Some(current);
        }
        frames.push(frame);
    }
    Ok((frames, taps))
}

/// The frames of a session at `fps`: per frame its time, the hands, the extras and the picture
/// shown. Deterministic from the scene's texture seed.
pub fn plan_table_session(scene: &TableScene, script: &TableScript, fps: f64) -> Result<Vec<PlannedTableFrame>, SynthError> {
    Ok(plan(scene, script, fps)?.0)
}

/// What the session holds: the taps intended (exactly the script's `Tap` actions, with the time
/// their dwell starts and ends), its frames, scene and script.
pub fn table_session_truth(scene: &TableScene, script: &TableScript, fps: f64) -> Result<TableSessionTruth, SynthError> {
    let (frames, taps) = plan(scene, script, fps)?;
    Ok(TableSessionTruth { fps, frames: frames.len(), taps, scene: scene.clone(), script: script.clone() })
}

fn random_distractor(rng: &mut ChaCha8Rng) -> (TableAction, f64) {
    match rng.gen_range(0..5) {
        0 | 1 => (TableAction::PassOver { side: Side::random(rng), through: [rng.gen_range(0..64), rng.gen_range(0..64)] }, 1.3),
        2 => {
            let seconds = rng.gen_range(1.5..4.0);
            (TableAction::RestAtEdge { seconds, side: Side::random(rng) }, seconds + 0.8)
        }
        3 => {
            let seconds = rng.gen_range(1.0..3.0);
            (TableAction::Lean { seconds, side: Some(Side::random(rng)) }, seconds + 1.2)
        }
        _ => (TableAction::PageChange { picture_index: rng.gen_range(0..4) }, 0.0),
    }
}

/// About `seconds` of things that are not taps: hands passing over, arms resting at the edge,
/// people leaning in, page changes (picture indices 0 to 3), pauses.
pub fn random_distractor_script(seed: u64, seconds: f64) -> TableScript {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xD157_AC70);
    let mut actions = Vec::new();
    let mut clock = 0.0;
    while clock < seconds {
        let pause = rng.gen_range(0.3..1.5);
        actions.push(TableAction::Pause { seconds: pause });
        clock += pause;
        if clock >= seconds {
            break;
        }
        let (action, length) = random_distractor(&mut rng);
        actions.push(action);
        clock += length;
    }
    TableScript { actions }
}

/// `taps` taps on random cells of a `cols` x `rows` grid (dwell 0.7 to 1.6 s), with pauses,
/// distractors between them, and page changes after some (the game's new state; picture
/// indices 0 to 3).
pub fn random_tap_script(seed: u64, cols: usize, rows: usize, taps: usize) -> TableScript {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x7A95_C417);
    let mut actions = vec![TableAction::Pause { seconds: rng.gen_range(0.3..1.0) }];
    let mut picture = 0;
    for _ in 0..taps {
        if rng.gen_bool(0.35) {
            actions.push(random_distractor(&mut rng).0);
            actions.push(TableAction::Pause { seconds: rng.gen_range(0.3..1.0) });
        }
        actions.push(TableAction::Tap {
            cell: [rng.gen_range(0..cols.max(1)), rng.gen_range(0..rows.max(1))],
            dwell_s: rng.gen_range(0.7..1.6),
            side: None,
        });
        actions.push(TableAction::Pause { seconds: rng.gen_range(0.2..0.8) });
        if rng.gen_bool(0.5) {
            picture = (picture + 1) % 4;
            actions.push(TableAction::PageChange { picture_index: picture });
        }
    }
    TableScript { actions }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> TableScene {
        TableScene { width: 160, height: 120, ..TableScene::default() }
    }

    fn light_grid(scene: &TableScene) -> RgbImage {
        grid_picture(scene.cols, scene.rows, 16, &|_, _| Rgb([235, 235, 235]))
    }

    #[test]
    fn tilt_beyond_35_degrees_is_refused_by_name() {
        let mut scene = small();
        scene.camera.tilt_deg = 40.0;
        let err = render_table_frame(&scene, &light_grid(&scene), &[], &[], 0).unwrap_err();
        assert!(err.to_string().contains("camera.tilt_deg"), "{err}");
        scene.camera.tilt_deg = 10.0;
        scene.cols = 0;
        assert!(scene.validate().unwrap_err().to_string().contains("cols"));
    }

    #[test]
    fn the_rectangle_is_bright_and_the_table_around_it_dim() {
        let mut scene = small().clean();
        scene.room.level = 0.1;
        let (image, truth) = render_table_frame(&scene, &light_grid(&scene), &[], &[], 0).unwrap();
        let [tl, _, br, _] = truth.corners;
        let luma = |x: f64, y: f64| {
            let p = image.get_pixel(x.round() as u32, y.round() as u32).0;
            (p[0] as u32 + p[1] as u32 + p[2] as u32) / 3
        };
        // The middle of a cell next to the centre (the centre is on a grid line).
        let (cx, cy) = (tl[0] + (br[0] - tl[0]) * 0.56, tl[1] + (br[1] - tl[1]) * 0.56);
        assert!(luma(cx, cy) > 150, "inside {}", luma(cx, cy));
        // Just outside the top-left corner, towards the image's corner.
        assert!(luma(tl[0] - 6.0, tl[1] - 6.0) < luma(cx, cy) / 2);
    }

    #[test]
    fn projector_frame_is_larger_than_the_rectangle() {
        let scene = random_table_scene(5);
        let projector = Projector::new(&scene);
        let (w, h) = scene.rect_size();
        let f = projector.frame;
        for (x, y) in [(-0.5, -0.5), (w + 0.5, -0.5), (w + 0.5, h + 0.5), (-0.5, h + 0.5)] {
            let [nx, ny] = projector.normalized(Vec3::new(x, y, 0.0));
            assert!(nx > f[0] && nx < f[2] && ny > f[1] && ny < f[3]);
        }
    }

    #[test]
    fn a_planned_tap_dwells_on_its_cell() {
        let scene = small();
        let script = TableScript { actions: vec![TableAction::Pause { seconds: 0.5 }, TableAction::Tap { cell: [6, 1], dwell_s: 0.8, side: None }] };
        let truth = table_session_truth(&scene, &script, 10.0).unwrap();
        assert_eq!(truth.taps.len(), 1);
        let tap = &truth.taps[0];
        assert_eq!(tap.cell, [6, 1]);
        assert!((tap.dwell_end_s - tap.dwell_start_s - 0.8).abs() < 1e-9);
        assert!(tap.dwell_start_s >= 1.0 && tap.dwell_start_s <= 1.3);
        let frames = plan_table_session(&scene, &script, 10.0).unwrap();
        let during: Vec<_> = frames.iter().filter(|f| f.time_s >= tap.dwell_start_s && f.time_s < tap.dwell_end_s).collect();
        assert!(during.len() >= 7);
        for f in during {
            let t = f.hands[0].target;
            assert_eq!([t[0].floor() as usize, t[1].floor() as usize], [6, 1]);
        }
        // Nobody in the first pause.
        assert!(frames[0].hands.is_empty());
    }

    #[test]
    fn a_pass_over_stays_under_0_4_s_on_any_cell() {
        let scene = small();
        let script = TableScript { actions: vec![TableAction::PassOver { side: Side::Left, through: [3, 3] }] };
        let frames = plan_table_session(&scene, &script, 100.0).unwrap();
        let mut run = 0;
        let mut last: Option<[i64; 2]> = None;
        for f in &frames {
            let cell = f.hands.first().map(|h| [h.target[0].floor() as i64, h.target[1].floor() as i64]);
            run = if cell.is_some() && cell == last { run + 1 } else { 1 };
            assert!(run < 40, "{run} frames on {cell:?}");
            last = cell;
        }
        assert!(table_session_truth(&scene, &script, 100.0).unwrap().taps.is_empty());
    }

    #[test]
    fn random_scripts_round_trip_through_json() {
        let script = random_tap_script(3, 8, 6, 4);
        let text = serde_json::to_string(&script).unwrap();
        assert_eq!(serde_json::from_str::<TableScript>(&text).unwrap(), script);
        assert_eq!(script.actions.iter().filter(|a| matches!(a, TableAction::Tap { .. })).count(), 4);
        let d = random_distractor_script(3, 20.0);
        assert!(d.actions.iter().all(|a| !matches!(a, TableAction::Tap { .. })));
        assert!(serde_json::from_str::<TableScript>(r#"{"actions":[{"action":"tap","cell":[1,2],"dwell_s":0.8}]}"#).is_ok());
    }

    #[test]
    fn the_cops_page_frames_the_highlighted_squares_and_a_policeman_covers_a_caught_thief() {
        let map = Map::parse("0000\n0200\n0340\n").unwrap();
        let px = 25;
        let colour = |image: &RgbImage, [row, col]: [usize; 2], [fx, fy]: [f64; 2]| {
            image.get_pixel(((col as f64 + fx) * px as f64) as u32, ((row as f64 + fy) * px as f64) as u32).0
        };
        let image = cops_picture(&map, map.start, &[map.square(0, 1)], px);
        assert_eq!(colour(&image, [0, 1], [0.06, 0.5]), [255, 212, 0], "the frame of a highlighted square");
        assert_eq!(colour(&image, [0, 2], [0.06, 0.5]), [225, 228, 230], "a road without a frame");
        assert_eq!(colour(&image, [0, 1], [0.5, 0.5]), [225, 228, 230], "the middle of a highlighted square stays road");
        assert_eq!(colour(&image, [2, 1], [0.5, 0.5]), [230, 30, 30], "the thief");
        let caught = Positions { police1: map.square(2, 1), ..map.start };
        let image = cops_picture(&map, caught, &[], px);
        assert_eq!(colour(&image, [2, 1], [0.5, 0.5]), [20, 60, 235], "the policeman on the thief's square");
    }

    #[test]
    fn a_cell_outside_the_grid_is_refused() {
        let scene = small();
        let script = TableScript { actions: vec![TableAction::Tap { cell: [8, 0], dwell_s: 0.8, side: None }] };
        let err = plan_table_session(&scene, &script, 10.0).unwrap_err().to_string();
        assert!(err.contains("actions[0].cell"), "{err}");
    }
}
