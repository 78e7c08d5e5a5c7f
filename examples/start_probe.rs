//! Why a rendered wooden start does or does not calibrate: renders scene N's start, finds the
//! board, and prints the learnt square model's reading (head as trained, kings as men) of every
//! playing square where it differs from the start, for the side (or sides) the start fits best.
//! `--missing K` takes K men off the start first (a board still being set up), `--png DIR` keeps
//! the pictures. A diagnostic for tuning scenes only.
//!
//! ```text
//! cargo run --release --example start_probe -- 226 274 358 [--missing K] [--png DIR]
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
        // The model as trained, each king's probability given to its man (a start has none).
        const NAMES: [&str; 6] = ["empty", "dark man", "light man", "dark king", "light king", "other"];
        let read: Vec<(usize, f32)> = learnt
            .embeddings()
            .iter()
            .map(|embedding| {
                let merged = square_model::kings_as_men(model.head().probabilities(embedding));
                merged.iter().enumerate().fold((0, 0.0f32), |best, (k, &v)| if v > best.1 { (k, v) } else { best })
            })
            .collect();
        let disagreements: Vec<(Side, Vec<String>)> = [Side::Top, Side::Bottom, Side::Left, Side::Right]
            .into_iter()
            .map(|s| {
                let start = palette::start_position(s, features.top_left_dark);
                let odd = learnt
                    .squares
                    .iter()
                    .zip(&read)
                    .filter_map(|(&(r, c), &(best, sure))| {
                        let want = start.iter().find(|t| (t.0, t.1) == (r, c)).map(|t| square_model::class_index(t.2))?;
                        (best != want || sure < square_model::START_CONFIDENCE).then(|| format!("({r},{c}) {} read {} {sure:.2}", NAMES[want], NAMES[best]))
                    })
                    .collect();
                (s, odd)
            })
            .collect();
        let fewest = disagreements.iter().map(|d| d.1.len()).min().unwrap_or(0);
        for (s, odd) in disagreements.iter().filter(|d| d.1.len() == fewest) {
            println!("  white at the {s:?}: {}", if odd.is_empty() { "every square as the start has it".to_string() } else { odd.join("; ") });
        }
    }
    println!("{taken_for_start} of {seeds} taken for a start ({missing} men missing)");
    Ok(())
}
