//! `cargo bench --bench cops [MAP]`: solve time and memory of the Cops and Robbers solver on
//! board1 (path as the argument, default `$BOARDWATCH_SHARED/data/cops/board1.txt`) and random 32x32
//! and 64x64 maps, then match statistics of the classic and perfect players on board1, both modes.

use std::time::Instant;

use boardwatch::games::cops::record::{play_match_game, Ai};
use boardwatch::games::cops::solver::{solve, table_bytes};
use boardwatch::games::cops::{Map, Mode, Team};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Largest resident memory of this process so far, in MiB.
fn peak_rss_mib() -> f64 {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage fills the struct it is given.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    usage.ru_maxrss as f64 / 1024.0
}

/// Most states the bench solves: 20 * 10^9 states is about 8 GiB of tables (a 64x64 map with
/// 60% buildings has about 14 * 10^9).
const MAX_STATES: u64 = 20_000_000_000;

fn time_solve(name: &str, map: &Map, runs: u32) {
    let mut best = f64::MAX;
    for _ in 0..runs {
        let clock = Instant::now();
        match solve(map, MAX_STATES) {
            Ok(solution) => {
                best = best.min(clock.elapsed().as_secs_f64());
                drop(solution);
            }
            Err(e) => {
                println!("{name}: {}x{}, {} roads: not solved: {e}", map.width, map.height, map.road_count());
                return;
            }
        }
    }
    let roads = map.road_count() as u64;
    let states = roads.pow(3) * 3;
    println!(
        "{name}: {}x{}, {roads} roads, {states} states: best of {runs} {best:.3} s, table {:.0} MiB, peak RSS so far {:.0} MiB",
        map.width, map.height, table_bytes(roads as usize) as f64 / 1048576.0, peak_rss_mib()
    );
}

fn main() {
    let path = std::env::args().nth(1).filter(|a| !a.starts_with('-')).unwrap_or_else(|| {
        format!("{}/data/cops/board1.txt", std::env::var("BOARDWATCH_SHARED").unwrap_or_else(|_| "../shared".into()))
    });
    let board1 = Map::parse(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))).expect("board1 parses");
    // What the process holds before any solve (the library's linked code), to read the figures by.
    println!("peak RSS before solving {:.0} MiB", peak_rss_mib());
    time_solve("board1", &board1, 3);
    time_solve("random 32x32 (60% buildings)", &Map::random(32, 32, 0.6, &mut ChaCha8Rng::seed_from_u64(32)), 1);
    time_solve("random 64x64 (60% buildings)", &Map::random(64, 64, 0.6, &mut ChaCha8Rng::seed_from_u64(64)), 1);

    let solution = solve(&board1, 1_000_000_000).expect("board1 solves");
    const GAMES: u64 = 200;
    for (police, thief) in [(Ai::Classic, Ai::Classic), (Ai::Perfect, Ai::Classic), (Ai::Classic, Ai::Perfect), (Ai::Perfect, Ai::Perfect)] {
        for mode in [Mode::Police, Mode::Thief] {
            let (mut police_wins, mut moves) = (0, 0);
            for seed in 0..GAMES {
                let (outcome, _) = play_match_game(&board1, Some(&solution), mode, police, thief, seed);
                police_wins += (outcome.winner == Team::Police) as u32;
                moves += outcome.moves as u64;
            }
            println!(
                "board1 {mode:?} Team mode, police {police:?} vs thief {thief:?}: police win {police_wins}/{GAMES}, mean {:.1} moves",
                moves as f64 / GAMES as f64
            );
        }
    }
}
