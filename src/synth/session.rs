//! A rendered session as the vision checks play it (tests/vision_rendered.rs): the sensor noise
//! of its start frame, and the frames after the start. One source for the checks and for the
//! tools that show one of their frames (`vision_eval rendered-frame`).
use super::random_position;
use crate::draughts::Variant;
use rand::{Rng, SeedableRng};

/// Sensor noise of the start frame of the session of `scene_seed`.
pub fn start_noise(scene_seed: u64) -> u64 {
    scene_seed.wrapping_mul(7919)
}

/// The frames after the start, endless: (position, sensor noise). The positions are those of
/// random English games of up to 90 plies, so kings appear.
pub fn frames(scene_seed: u64) -> impl Iterator<Item = ([String; 8], u64)> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(scene_seed ^ 0x5eed);
    std::iter::repeat_with(move || (random_position(Variant::English, 90, rng.gen()).to_grid(), rng.gen()))
}
