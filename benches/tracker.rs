//! `cargo bench --bench tracker [ARCHIVE.pdn]`: time per observation of the tracker over a whole
//! archive of real English games (default: the ACF archive in `$BOARDWATCH_SHARED`, else the
//! bundled 20-game sample), read as a camera would hand on still boards every half second with
//! 15% of plies faulty (the finished state never seen, one square misread for three readings, or
//! 3 to 6 squares misread for two readings), as `tests/tracker_replay.rs` drives them. Prints the
//! mean, the 99th and 99.9th percentiles and the worst observation, with its game.

use std::time::Instant;

use boardwatch::draughts::game::replay;
use boardwatch::draughts::pdn::{read_games, ReadMode};
use boardwatch::draughts::{Position, Variant};
use boardwatch::tracker::{KingStyle, Observation, Reading, SquareClass, Tracker, TrackerConfig};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const FAULT_RATE: f64 = 0.15;

/// `obs` with `count` random playing squares read as a wrong class, confidently.
fn misread(obs: &Observation, count: usize, rng: &mut StdRng) -> Observation {
    let mut out = obs.clone();
    for _ in 0..count {
        let (row, col) = loop {
            let (r, c) = (rng.gen_range(0..8), rng.gen_range(0..8));
            if (r + c) % 2 == 1 {
                break (r, c);
            }
        };
        if let Reading::Class(truth) = out.squares[row][col] {
            let wrong = SquareClass::ALL[(truth.index() + rng.gen_range(1..5)) % 5];
            out.squares[row][col] = Reading::Class(wrong);
        }
    }
    out
}

fn main() {
    let default = format!(
        "{}/data/draughts/english/ACF__EricCJoyce_Datasets__converted.pdn",
        std::env::var("BOARDWATCH_SHARED").unwrap_or_else(|_| "../shared".into())
    );
    let path = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .unwrap_or_else(|| if std::path::Path::new(&default).exists() { default } else { "samples/games/acf_sample.pdn".into() });
    let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))).into_owned();
    let rules = Variant::English.rules();
    let start = Position::start(&rules);
    let games: Vec<_> = read_games(&text, ReadMode::Lenient)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .iter()
        .filter_map(|r| replay(r, Variant::English).ok())
        .filter(|g| g.start == start)
        .collect();
    let mut times: Vec<f64> = Vec::new();
    let mut worst = (0.0, 0usize);
    let mut rng = StdRng::seed_from_u64(12);
    let clock = Instant::now();
    for (index, game) in games.iter().enumerate() {
        let mut tracker = Tracker::new(TrackerConfig::new(Variant::English, KingStyle::Visible));
        tracker.init();
        let mut t = 0.0;
        let mut readings: Vec<Observation> = Vec::new();
        for (i, ply) in game.plies.iter().enumerate() {
            let clean = Observation::of_position(&ply.after, 0, &rules);
            match rng.gen_bool(FAULT_RATE).then(|| rng.gen_range(0..3)) {
                Some(0) if i + 1 < game.plies.len() => continue,
                Some(1) => readings.extend(std::iter::repeat(misread(&clean, 1, &mut rng)).take(3)),
                Some(2) => {
                    let n = rng.gen_range(3..=6);
                    readings.push(misread(&clean, n, &mut rng));
                    readings.push(misread(&clean, n, &mut rng));
                }
                _ => {}
            }
            readings.push(clean.clone());
            let mut read = |obs: Observation, tracker: &mut Tracker| {
                t += 0.5;
                let obs = obs.with_time(t);
                let one = Instant::now();
                tracker.observe(&obs);
                let took = one.elapsed().as_secs_f64();
                if took > worst.0 {
                    worst = (took, index);
                }
                times.push(took);
            };
            for obs in readings.drain(..) {
                read(obs, &mut tracker);
            }
            // The board stays: handed on again while the tracker waits to see it stay.
            for _ in 0..8 {
                if !tracker.is_suspecting() {
                    break;
                }
                read(clean.clone(), &mut tracker);
            }
        }
    }
    let total = clock.elapsed().as_secs_f64();
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| times[((times.len() as f64 * p) as usize).min(times.len() - 1)] * 1e6;
    println!(
        "{path}: {} games, {} observations in {total:.2} s: mean {:.1} us, p99 {:.1} us, p99.9 {:.1} us, worst {:.1} us (game {})",
        games.len(),
        times.len(),
        times.iter().sum::<f64>() / times.len() as f64 * 1e6,
        pct(0.99),
        pct(0.999),
        worst.0 * 1e6,
        worst.1 + 1
    );
}
