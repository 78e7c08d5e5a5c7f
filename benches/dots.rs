//! `cargo bench --profile test --bench dots [GAMES]`: the Dots computer player.
//!
//! 1. Speed: iterations per second and seconds per move at the default level on the default
//!    20x15 board (positions from a game the AI plays against itself).
//! 2. Strength: the AI (level 1's fixed iteration budget) against a uniformly random player,
//!    GAMES games (default 200) on 10x10 under each rule set, colours alternating.
//! 3. Levels: level 2's budget against level 1's, GAMES games on 10x10, standard rules.
//!
//! `cargo bench --profile test --bench dots -- clock` instead checks the time limit: the default
//! level thinking with its clock on 30 positions of a 20x15 game, the longest answer.
//!
//! Reproducible: every game is seeded (game i uses seed i), the AI searches fixed iteration
//! budgets, so the figures do not depend on the machine's load (only the timings do).

use std::time::Instant;

use boardwatch::games::dots::board::{Board, Player, Rules};
use boardwatch::games::dots::mcts::{self, choose_move};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[derive(Clone, Copy, Debug)]
enum Contender {
    Random,
    Mcts(u32),
}

/// Play one game; returns red's margin (captured by red minus captured by black).
fn game(
    width: usize,
    height: usize,
    rules: Rules,
    red: Contender,
    black: Contender,
    seed: u64,
) -> (i64, usize) {
    let mut board = Board::new(width, height, rules).unwrap();
    board.record_enclosures = false;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    while board.end().is_none() {
        let who = if board.to_move() == Player::Red {
            red
        } else {
            black
        };
        let (x, y) = match who {
            Contender::Random => {
                let free = board.free_points();
                free[rng.gen_range(0..free.len())]
            }
            Contender::Mcts(iterations) => {
                let c = choose_move(&board, iterations, &mut rng, &mut || false)
                    .expect("a move while the game runs");
                (c.x, c.y)
            }
        };
        board.play(x, y).expect("legal");
    }
    (board.score_margin(), board.move_count())
}

/// `a` against `b`, colours alternating; prints wins/draws/losses of `a`.
fn matchup(
    name: &str,
    games: u64,
    width: usize,
    height: usize,
    rules: Rules,
    a: Contender,
    b: Contender,
) {
    let clock = Instant::now();
    let (mut wins, mut draws, mut losses, mut margin, mut moves) = (0, 0, 0, 0i64, 0);
    for i in 0..games {
        let a_red = i % 2 == 0;
        let (red, black) = if a_red { (a, b) } else { (b, a) };
        let (m, n) = game(width, height, rules, red, black, i);
        let m = if a_red { m } else { -m };
        match m.signum() {
            1 => wins += 1,
            0 => draws += 1,
            _ => losses += 1,
        }
        margin += m;
        moves += n;
    }
    println!(
        "{name}: {width}x{height} {rules:?}, {games} games: {wins} wins, {draws} draws, {losses} losses \
         (score {:.1}%), mean margin {:+.1} dots, mean {:.0} moves, {:.0} s",
        100.0 * (wins as f64 + draws as f64 / 2.0) / games as f64,
        margin as f64 / games as f64,
        moves as f64 / games as f64,
        clock.elapsed().as_secs_f64()
    );
}

/// The default level on its clock: how long the answers really take (search plus set-up).
fn clock_check() {
    let default = mcts::level(mcts::DEFAULT_LEVEL).unwrap();
    let limit = default.search_time();
    let mut board = Board::new(20, 15, Rules::Standard).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let (mut worst, mut total, mut n) = (0.0f64, 0.0, 0);
    while board.end().is_none() && n < 30 {
        let clock = Instant::now();
        let c = choose_move(&board, u32::MAX, &mut rng, &mut || clock.elapsed() >= limit).unwrap();
        let s = clock.elapsed().as_secs_f64();
        worst = worst.max(s);
        total += s;
        n += 1;
        board.play(c.x, c.y).unwrap();
        // Random replies spread the game over the board faster.
        let free = board.free_points();
        if board.end().is_none() {
            let (x, y) = free[rng.gen_range(0..free.len())];
            board.play(x, y).unwrap();
        }
    }
    println!(
        "clock: level {} ({} ms), {n} moves on 20x15: mean {:.3} s, longest {:.3} s",
        default.level,
        default.millis,
        total / n as f64,
        worst
    );
}

fn main() {
    if std::env::args().any(|a| a == "clock") {
        clock_check();
        return;
    }
    let games: u64 = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    let level1 = mcts::level(1).unwrap();
    let default = mcts::level(mcts::DEFAULT_LEVEL).unwrap();

    // 1. Speed on the default board.
    let mut board = Board::new(20, 15, Rules::Standard).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let (mut seconds, mut iterations, mut timed) = (0.0, 0u64, 0);
    let mut worst: f64 = 0.0;
    while board.end().is_none() && board.move_count() < 120 {
        let clock = Instant::now();
        let c = choose_move(&board, default.iterations, &mut rng, &mut || false).unwrap();
        let s = clock.elapsed().as_secs_f64();
        if board.move_count().is_multiple_of(4) {
            seconds += s;
            iterations += c.iterations as u64;
            timed += 1;
            worst = worst.max(s);
        }
        board.play(c.x, c.y).unwrap();
    }
    println!(
        "speed: 20x15 standard, level {} budget ({} iterations), {timed} positions (moves 0-120): \
         mean {:.3} s per move, slowest {:.3} s, {:.0} iterations/s; with the clock the level thinks {} ms",
        default.level,
        default.iterations,
        seconds / timed as f64,
        worst,
        iterations as f64 / seconds,
        default.millis
    );

    // 2. Strength against random play.
    for rules in [Rules::Standard, Rules::Classic] {
        matchup(
            "level 1 vs random",
            games,
            10,
            10,
            rules,
            Contender::Mcts(level1.iterations),
            Contender::Random,
        );
    }
    // 3. Between levels.
    matchup(
        "level 2 vs level 1",
        games,
        10,
        10,
        Rules::Standard,
        Contender::Mcts(default.iterations),
        Contender::Mcts(level1.iterations),
    );
}
