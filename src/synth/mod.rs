//! Deterministic synthetic camera frames of a checkers board, for testing the vision pipeline
//! without a camera and for the recordings in `samples/`.
//!
//! A frame is ray-cast from a small 3-D model: the board (an 8x8 playing area of unit squares in
//! a frame, a slab on a textured table), the pieces (cylinders, so that in oblique views their
//! tops shift off the square centres and their sides show), and optionally a hand. A warm lamp
//! lights it with soft shadows; then come the room and the camera: brightness gradient,
//! vignetting, glare, radial lens distortion, blur and sensor noise. Everything random is drawn
//! from seeds, so the same inputs give the same bytes.
//!
//! [`table`] renders the other kind of material: a grid game projected onto a table, a hand
//! pointing at its cells (the projected board's touch input).
//!
//! ```no_run
//! use boardwatch::synth::{random_scene, render_frame, Palette};
//! let grid = boardwatch::draughts::Position::start(&boardwatch::draughts::Variant::English.rules()).to_grid();
//! let scene = random_scene(42, Palette::FourColour);
//! let (image, truth) = render_frame(&scene, &grid, None, 42).unwrap();
//! image.save("frame.png").unwrap();
//! println!("{:?}", truth.corners);
//! ```

pub mod camera;
mod draw;
pub mod effects;
mod error;
pub mod hand;
mod math;
pub mod recording;
pub mod scene;
pub mod session;
pub mod table;
mod texture;
pub mod truth;

pub use error::SynthError;
pub use hand::Hand;
pub use image::RgbImage;
pub use table::{
    calibration_picture, grid_picture, plan_table_session, random_distractor_script, random_tap_script, random_table_scene,
    render_table_frame, table_session_truth, FingertipTruth, PlannedTableFrame, PointingHand, TableAction, TableExtra,
    Side, TableFrameTruth, TableScene, TableScript, TableSessionTruth, TruthTap,
};
pub use scene::{colour_distance, random_scene, unseen_board_scene, Palette, Scene, TableKind};
pub use truth::{parse_grid, FrameTruth, ImageSide, Orientation, PieceTruth};

use crate::draughts::{Color, Piece};
use camera::Camera;
use draw::{PieceBody, World};
use math::rgb_to_linear;
use texture::{hash_unit, mix64};
use truth::Cells;

/// A position of a random legal game of up to `max_plies` plies (kings appear in the longer
/// ones), drawn from `seed`: positions a reader meets, unlike random placements.
pub fn random_position(variant: crate::draughts::Variant, max_plies: usize, seed: u64) -> crate::draughts::Position {
    use rand::seq::SliceRandom;
    use rand::{Rng, SeedableRng};
    let rules = variant.rules();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut position = crate::draughts::Position::start(&rules);
    for _ in 0..rng.gen_range(0..=max_plies) {
        let legal = crate::draughts::movegen::legal_moves(&position, &rules);
        let Some(m) = legal.choose(&mut rng) else { break };
        position = position.play(m);
    }
    position
}

/// Renders `grid` (8 rows of `.bBwW`, row 0 at Black's edge) in `scene`, with `hand` over the
/// board if given; `seed` draws the sensor noise (the scene's own seed fixes its textures).
pub fn render_frame(scene: &Scene, grid: &[String; 8], hand: Option<&Hand>, seed: u64) -> Result<(RgbImage, FrameTruth), SynthError> {
    scene.validate()?;
    let cells = parse_grid(grid)?;
    if let Some(hand) = hand {
        hand.validate()?;
    }
    let camera = Camera::place(&scene.camera, scene.width, scene.height, 4.0 + scene.board.frame_width, scene.board.thickness)?;
    let pieces = place_pieces(scene, &cells, hand);
    let world = World::new(scene, camera, pieces, hand);
    let rendered = draw::render(&world);
    let truth = truth::frame_truth(&world, grid, &rendered)?;
    let mut linear = rendered.linear;
    effects::apply_light_falloff_and_glare(&mut linear, &rendered.reflective, scene);
    Ok((effects::develop(linear, scene, seed), truth))
}

fn piece_color(scene: &Scene, piece: Piece) -> [u8; 3] {
    let c = &scene.colors;
    match piece {
        Piece::Man(Color::Black) => c.black_man,
        Piece::King(Color::Black) => c.black_king,
        Piece::Man(Color::White) => c.white_man,
        Piece::King(Color::White) => c.white_king,
    }
}

/// The cylinders of one piece standing with its foot at `base`: one, or for a stacked king two
/// men, the upper a little off the lower (people never stack them exactly), so that a second
/// rim shows.
fn piece_bodies(scene: &Scene, piece: Piece, center: (f64, f64), base: f64, square: Option<(u8, u8)>, grain_seed: u64) -> Vec<PieceBody> {
    let shape = &scene.pieces;
    let man = PieceBody {
        square,
        grid_char: piece.grid_char(),
        center,
        base,
        top: base + shape.height,
        radius: shape.radius,
        albedo: rgb_to_linear(piece_color(scene, piece)),
        wooden: scene.palette == Palette::Wooden,
        under_another: false,
        grain_seed,
    };
    if !(shape.stacked_kings && piece.is_king()) {
        return vec![man];
    }
    let angle = hash_unit(grain_seed, 0x57AC) * std::f64::consts::TAU;
    let off = shape.radius * (0.06 + 0.08 * hash_unit(grain_seed, 0x57AD));
    let upper = PieceBody {
        center: (center.0 + off * angle.cos(), center.1 + off * angle.sin()),
        base: man.top,
        top: man.top + shape.height,
        grain_seed: mix64(grain_seed),
        ..man.clone()
    };
    vec![PieceBody { under_another: true, ..man }, upper]
}

/// The pieces as cylinders: each a little off its square's centre (people are not exact), the
/// one in the hand between the fingertips.
fn place_pieces(scene: &Scene, cells: &Cells, hand: Option<&Hand>) -> Vec<PieceBody> {
    let mut bodies = Vec::new();
    for (row, line) in cells.iter().enumerate() {
        for (col, cell) in line.iter().enumerate() {
            let Some(piece) = *cell else { continue };
            let key = (row * 8 + col) as u64;
            let angle = hash_unit(key, scene.texture_seed ^ 0xA11C) * std::f64::consts::TAU;
            let off = hash_unit(key, scene.texture_seed ^ 0x0FF5) * scene.placement_jitter;
            let center = (col as f64 + 0.5 + off * angle.cos(), row as f64 + 0.5 + off * angle.sin());
            let grain_seed = mix64(scene.texture_seed ^ key);
            bodies.extend(piece_bodies(scene, piece, center, 0.0, Some((row as u8, col as u8)), grain_seed));
        }
    }
    if let Some(hand) = hand {
        if let Some(piece) = hand.held.and_then(Piece::from_grid_char) {
            // Held at its middle, between the fingertips.
            let height = if scene.pieces.stacked_kings && piece.is_king() { 2.0 } else { 1.0 } * scene.pieces.height;
            let base = (hand.height - height / 2.0).max(0.0);
            bodies.extend(piece_bodies(scene, piece, (hand.target[0], hand.target[1]), base, None, mix64(scene.texture_seed ^ 99)));
        }
    }
    bodies
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draughts::Variant;

    fn start() -> [String; 8] {
        crate::draughts::Position::start(&Variant::English.rules()).to_grid()
    }

    #[test]
    fn frames_repeat_byte_for_byte() {
        let mut scene = random_scene(3, Palette::Wooden);
        scene.width = 96;
        scene.height = 72;
        let hand = Hand::random(3);
        let (a, ta) = render_frame(&scene, &start(), Some(&hand), 1).unwrap();
        let (b, tb) = render_frame(&scene, &start(), Some(&hand), 1).unwrap();
        assert_eq!((a.width(), a.height()), (96, 72));
        assert_eq!(a.as_raw(), b.as_raw());
        assert_eq!(ta, tb);
    }

    #[test]
    fn a_held_piece_is_not_on_the_board() {
        let scene = Scene::overhead(Palette::FourColour, 96, 72);
        let mut grid = start();
        grid[5] = "..w.w.w.".into();
        let mut hand = Hand::reaching([1.5, 4.5], 0.0);
        hand.held = Some('w');
        hand.height = 0.5;
        let (_, truth) = render_frame(&scene, &grid, Some(&hand), 0).unwrap();
        assert_eq!(truth.pieces.len(), 23);
        assert!(truth.hand_visible);
        assert_eq!(truth.grid, grid);
    }

    #[test]
    fn bad_grids_and_hands_are_errors() {
        let scene = Scene::overhead(Palette::FourColour, 64, 48);
        let mut grid = start();
        grid[7] = "w.w.w.wx".into();
        assert!(matches!(render_frame(&scene, &grid, None, 0), Err(SynthError::BadGrid { row: 7, .. })));
        let mut hand = Hand::reaching([4.0, 4.0], 0.0);
        hand.held = Some('k');
        assert_eq!(render_frame(&scene, &start(), Some(&hand), 0).unwrap_err(), SynthError::BadHeldPiece('k'));
    }
}
