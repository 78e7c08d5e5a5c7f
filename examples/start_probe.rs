//! Why a rendered wooden start does or does not calibrate: renders scene N's start, finds the
//! board, and prints the learnt square model's reading (head as trained, kings as men) of every
//! playing square beside what the start has there. A diagnostic for tuning scenes only.
//!
//! ```text
//! cargo run --release --example start_probe -- 226 274 358 [--png DIR]
//! ```
use boardwatch::draughts::{Position, Variant};
use boardwatch::synth::{random_scene, render_frame, session, Palette};
use boardwatch::vision::source::rgb_image_to_mat;
use boardwatch::vision::square_model::LearntReading;
use boardwatch::vision::*;

fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opt = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let png = opt("--png");
    // Men taken off the start (the board half set up): that many, of the pieces in grid order
    // from a seed-dependent offset.
    let missing: usize = opt("--missing").and_then(|v| v.parse().ok()).unwrap_or(0);
    let values: Vec<String> = args.iter().enumerate().filter(|(i, _)| *i == 0 || !matches!(args[i - 1].as_str(), "--png" | "--missing")).map(|(_, a)| a.clone()).collect();
    let base = ColourModel::named("wooden")?;
    let mut model = SquareModel::builtin()?;
    let mut taken_for_start = 0;
    let mut seeds = 0;
    for seed in values.iter().filter_map(|a| a.parse::<u64>().ok()) {
        seeds += 1;
        let scene = random_scene(seed, Palette::Wooden);
        let mut start = Position::start(&Variant::English.rules()).to_grid();
        let pieces: Vec<(usize, usize)> = (0..8).flat_map(|r| (0..8).map(move |c| (r, c))).filter(|&(r, c)| start[r].as_bytes()[c] != b'.').collect();
        for k in 0..missing {
            let (r, c) = pieces[(seed as usize * 7 + k * 5) % pieces.len()];
            start[r].replace_range(c..c + 1, ".");
        }
        let (image, _) = render_frame(&scene, &start, None, session::start_noise(seed))?;
        if let Some(dir) = &png {
            image.save(format!("{dir}/start_{seed}.png"))?;
        }
        let img = rgb_image_to_mat(&image)?;
        let Ok(loc) = locate_board(&img, None) else {
            println!("scene {seed}: board not found");
            continue;
        };
        let colours = Calibration::from_image(&img, &base, None, "probe");
        let rect = rectify(&img, &loc)?;
        let features = board_features_with(&rect, None)?;
        let learnt = LearntReading::read(&mut model, &img, &loc, features.top_left_dark)?;
        let side = learnt.start_side(&model, features.top_left_dark);
        taken_for_start += (colours.is_ok() || side.is_some()) as usize;
        println!("scene {seed}: colours {}, model's start side {side:?}", if colours.is_ok() { "calibrate" } else { "refuse" });
        for s in [Side::Top, Side::Bottom, Side::Left, Side::Right] {
            let truth = palette::start_position(s, features.top_left_dark);
            let mut line = format!("  as {s:?}:");
            let mut bad = 0;
            for (&(r, c), embedding) in learnt.squares.iter().zip(&learnt.embeddings) {
                let p = model.head().probabilities(embedding);
                let merged = [p[0], p[1] + p[3], p[2] + p[4], p[5]];
                let (best, sure) = merged.iter().enumerate().fold((0, 0.0f32), |a, (i, &v)| if v > a.1 { (i, v) } else { a });
                let want = truth.iter().find(|t| (t.0, t.1) == (r, c)).map(|t| square_model::class_index(t.2)).unwrap_or(9);
                let want = if want >= 3 && want != 5 { want - 2 } else { want };
                if best != want || sure < square_model::START_CONFIDENCE {
                    bad += 1;
                    line += &format!(" ({r},{c}) want {want} read {best} {sure:.2};");
                }
            }
            if bad <= 6 {
                println!("{line}");
            }
        }
    }
    println!("{taken_for_start} of {seeds} taken for a start ({missing} men missing)");
    Ok(())
}
