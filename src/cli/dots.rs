//! `boardwatch dots`: the machine interface for differential tests (`replay`), reading an SGF
//! record (`show`), a computer move for a record (`move`), and the engine protocol with matches
//! against other engines (`engine`, `match`, in [`super::dots_match`]). The engine is
//! `boardwatch::games::dots`; this module only reads files and stdin.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use boardwatch::games::dots::board::{Board, Point, Rules};
use boardwatch::games::dots::{mcts, replay, sgf};
use clap::{Args, Subcommand};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

#[derive(Subcommand)]
pub enum DotsCommand {
    /// Read one game per line on stdin, {"width": W, "height": H, "moves": [[x, y, p], ...]}, and
    /// print per move whether it was legal, who played it and the captured counts (JSON lines).
    Replay(ReplayArgs),
    /// Read an SGF (GM[40]) record and print the final position and the captured counts.
    Show(ShowArgs),
    /// The computer's move for the position at the end of an SGF record.
    Move(MoveArgs),
    /// Serve the engine on stdin/stdout in the JSON line protocol of Dots programs (Init,
    /// PutPoint, Undo, Analyze), so match drivers and other programs can play it.
    Engine(super::dots_match::EngineArgs),
    /// Play games against another engine that speaks the same protocol (e.g. oppai's
    /// command-line player), at equal time a move, colours alternating; prints a line a game.
    Match(super::dots_match::MatchArgs),
}

#[derive(Args)]
pub struct ReplayArgs {
    /// classic (the original program's rules) or standard (the competitive rules).
    #[arg(long, default_value = "standard")]
    rules: Rules,
}

#[derive(Args)]
pub struct ShowArgs {
    record: PathBuf,
    /// Override the record's RU property: classic or standard.
    #[arg(long)]
    rules: Option<Rules>,
}

#[derive(Args)]
pub struct MoveArgs {
    record: PathBuf,
    #[arg(long)]
    rules: Option<Rules>,
    /// Strength 1-4 (thinking time 0.1, 0.4, 1.5, 5 s).
    #[arg(long, default_value_t = mcts::DEFAULT_LEVEL)]
    level: u8,
    /// Reproducible: search the level's fixed number of iterations with this RNG seed
    /// instead of thinking for the level's time.
    #[arg(long)]
    seed: Option<u64>,
}

pub fn run(command: DotsCommand) -> anyhow::Result<ExitCode> {
    match command {
        DotsCommand::Replay(args) => run_replay(args),
        DotsCommand::Show(args) => run_show(args),
        DotsCommand::Move(args) => run_move(args),
        DotsCommand::Engine(args) => super::dots_match::run_engine(args),
        DotsCommand::Match(args) => super::dots_match::run_match(args),
    }
}

fn run_replay(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    let stdin = std::io::stdin().lock();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut failed = false;
    for (i, line) in stdin.lines().enumerate() {
        let line = line.context("reading stdin")?;
        if line.trim().is_empty() {
            continue;
        }
        match replay::replay_line(&line, args.rules) {
            Ok(results) => writeln!(out, "{}", serde_json::to_string(&results)?)?,
            Err(e) => {
                // The error goes to stderr; stdout keeps one line per game, so an empty one here.
                out.flush()?;
                eprintln!("stdin line {}: {e}", i + 1);
                writeln!(
                    out,
                    "{}",
                    serde_json::json!({ "error": format!("line {}: {e}", i + 1) })
                )?;
                failed = true;
            }
        }
    }
    out.flush()?;
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn load(record: &PathBuf, rules: Option<Rules>) -> anyhow::Result<Board> {
    let text =
        std::fs::read_to_string(record).with_context(|| format!("reading {}", record.display()))?;
    let game = sgf::parse(&text).with_context(|| format!("{}", record.display()))?;
    game.to_board(rules)
        .with_context(|| format!("{}", record.display()))
}

fn run_show(args: ShowArgs) -> anyhow::Result<ExitCode> {
    let board = load(&args.record, args.rules)?;
    for y in 0..board.height() {
        let row: String = (0..board.width())
            .map(|x| match board.point(x, y) {
                Point::Empty => '.',
                Point::House(_) => ',',
                Point::Dot(p) => ['R', 'B'][p.index()],
                Point::CapturedDot(p) => ['r', 'b'][p.index()],
                Point::Territory(p) => ['+', '-'][p.index()],
            })
            .collect();
        println!("{row}");
    }
    println!(
        "{:?} rules, {} moves; captured: red {}, black {}{}",
        board.rules(),
        board.move_count(),
        board.captured(boardwatch::games::dots::Player::Red),
        board.captured(boardwatch::games::dots::Player::Black),
        board
            .end()
            .map(|e| format!("; over: {e:?}"))
            .unwrap_or_default()
    );
    Ok(ExitCode::SUCCESS)
}

fn run_move(args: MoveArgs) -> anyhow::Result<ExitCode> {
    let board = load(&args.record, args.rules)?;
    let Some(level) = mcts::level(args.level) else {
        bail!("--level {}: expected 1 to 4", args.level)
    };
    let clock = Instant::now();
    let choice = match args.seed {
        Some(seed) => mcts::choose_move(
            &board,
            level.iterations,
            &mut ChaCha8Rng::seed_from_u64(seed),
            &mut || false,
        ),
        None => {
            let limit = level.search_time();
            mcts::choose_move(
                &board,
                u32::MAX,
                &mut ChaCha8Rng::from_entropy(),
                &mut || clock.elapsed() >= limit,
            )
        }
    };
    match choice {
        Some(c) => println!(
            "{{\"x\":{},\"y\":{},\"player\":{},\"iterations\":{},\"seconds\":{:.3}}}",
            c.x,
            c.y,
            board.to_move().index(),
            c.iterations,
            clock.elapsed().as_secs_f64()
        ),
        None => bail!("{}: the game is over", args.record.display()),
    }
    Ok(ExitCode::SUCCESS)
}
