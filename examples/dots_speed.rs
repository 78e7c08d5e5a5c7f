//! Speed of the Dots search on real positions: `cargo run --release --example dots_speed --
//! RECORD.sgf...` takes the positions after 100, 300, 600 and 900 dots of each record (the ones it
//! has) and prints how long a 4,000-iteration search takes on each, in iterations a second.
//! (The fixed-budget benchmark, `cargo bench --bench dots`, measures self-play positions of
//! 20x15; the records of matches on big boards are where playouts and capture checks cost most.)

use std::time::Instant;

use boardwatch::games::dots::board::{Action, Board, Rules};
use boardwatch::games::dots::{mcts, sgf};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn main() -> anyhow::Result<()> {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    anyhow::ensure!(!paths.is_empty(), "usage: dots_speed RECORD.sgf...");
    for path in paths {
        let text = std::fs::read_to_string(&path).map_err(|e| anyhow::anyhow!("{path}: {e}"))?;
        let game = sgf::parse(&text).map_err(|e| anyhow::anyhow!("{path}: {e}"))?;
        let end = game.to_board(Some(Rules::Standard)).map_err(|e| anyhow::anyhow!("{path}: {e}"))?;
        let dots: Vec<Action> = end.history().filter(|a| matches!(a, Action::Dot { .. })).collect();
        for cut in [100usize, 300, 600, 900].into_iter().filter(|&c| c < dots.len()) {
            let mut board = Board::new(end.width(), end.height(), Rules::Standard).map_err(anyhow::Error::msg)?;
            for action in &dots[..cut] {
                if let Action::Dot { x, y, player } = *action {
                    board.play_as(x as usize, y as usize, player)?;
                }
            }
            let clock = Instant::now();
            let Some(choice) = mcts::choose_move(&board, 4_000, &mut ChaCha8Rng::seed_from_u64(1), &mut || false) else { continue };
            let seconds = clock.elapsed().as_secs_f64();
            println!(
                "{path}, {}x{}, after {cut} dots: {} iterations in {seconds:.3} s = {:.0} a second",
                end.width(),
                end.height(),
                choice.iterations,
                choice.iterations as f64 / seconds
            );
        }
    }
    Ok(())
}
