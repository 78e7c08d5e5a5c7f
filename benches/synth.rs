//! `cargo bench --bench synth`: time to render one 1280x720 synthetic frame (start position,
//! a hand over the board), best of three per scene, over a few random scenes of each palette.

use std::time::Instant;

use boardwatch::draughts::{Position, Variant};
use boardwatch::synth::{random_scene, render_frame, Hand, Palette};

fn main() {
    let grid = Position::start(&Variant::English.rules()).to_grid();
    let mut worst: f64 = 0.0;
    for palette in [Palette::FourColour, Palette::Wooden] {
        for seed in 0..4 {
            let mut scene = random_scene(seed, palette);
            scene.width = 1280;
            scene.height = 720;
            let hand = Hand::random(seed);
            let mut best = f64::MAX;
            for _ in 0..3 {
                let clock = Instant::now();
                let (image, _) = render_frame(&scene, &grid, Some(&hand), seed).expect("valid scene");
                std::hint::black_box(image);
                best = best.min(clock.elapsed().as_secs_f64());
            }
            worst = worst.max(best);
            println!("{} seed {seed}: {:.3} s (tilt {:.0}, blur {:.1})", palette.name(), best, scene.camera.tilt_deg, scene.blur_sigma);
        }
    }
    println!("slowest 1280x720 frame: {worst:.3} s");
}
