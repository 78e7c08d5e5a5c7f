//! `boardwatch sokoban`: solve levels from XSB collections, and benchmark the solver.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use boardwatch::games::sokoban::files::read_levels;
use boardwatch::games::sokoban::game::Game;
use boardwatch::games::sokoban::level::Level;
use boardwatch::games::sokoban::LURD_LETTERS as LURD;
use boardwatch::games::sokoban::solver::{solve, solve_fewest_pushes, solve_in_memory, verify, Outcome, DEFAULT_MEMORY};
use clap::{Args, Subcommand};
use serde::Serialize;

#[derive(Subcommand)]
pub enum SokobanCommand {
    /// Solve the levels of a collection (or one of them) and print the solutions.
    Solve(SolveArgs),
    /// Solve every level of a collection with a time limit each; print a table and the totals.
    Bench(BenchArgs),
    /// Play a level in the terminal, one command a line (`help` lists them).
    Play(PlayArgs),
}

#[derive(Args)]
pub struct PlayArgs {
    /// An XSB/SOK/TXT collection, or a folder with one level per file.
    file: PathBuf,
    /// The level: its number in the collection (from 1) or its title.
    #[arg(long, default_value = "1")]
    level: String,
}

const PLAY_HELP: &str = "commands, one a line:
  u d l r (any number, e.g. rrdL)  move; a push happens when a box is in the way
  undo [N] | redo [N] | restart     take moves back, play them again, start over
  lurd                              print the moves so far (upper case: pushes)
  import LURD                       replay LURD from the start
  solve [SECONDS]                   look for a solution from here (10 s unless given)
  step [N]                          play the next move(s) of the solution found
  help | quit";

#[derive(Args)]
pub struct SolveArgs {
    /// An XSB/SOK/TXT collection, or a folder with one level per file.
    file: PathBuf,
    /// Only this level: its number in the collection (from 1) or its title.
    #[arg(long)]
    level: Option<String>,
    /// Seconds allowed per level.
    #[arg(long, default_value_t = 10.0)]
    time_limit: f64,
    /// GiB of memory the solver's searches may take per level (default: half of the memory
    /// available when it starts).
    #[arg(long, value_name = "GIB", allow_negative_numbers = true)]
    memory_limit: Option<f64>,
    /// One JSON object per level: title, solved (true, false when proven unsolvable, null when
    /// out of time), moves, pushes, lurd, seconds.
    #[arg(long)]
    json: bool,
    /// After the first solution, spend the rest of the time limit looking for one with the
    /// fewest pushes (plain A*); the report says whether the fewest was proven.
    #[arg(long, value_enum)]
    optimise: Option<Optimise>,
}

/// What `--optimise` improves.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Optimise {
    /// The fewest pushes (moves are not minimised among them).
    Pushes,
}

#[derive(Args)]
pub struct BenchArgs {
    /// An XSB/SOK/TXT collection, or a folder with one level per file.
    collection: PathBuf,
    /// Seconds allowed per level.
    #[arg(long)]
    time_limit: f64,
    /// GiB of memory the solver's searches may take per level (default: half of the memory
    /// available when it starts).
    #[arg(long, value_name = "GIB", allow_negative_numbers = true)]
    memory_limit: Option<f64>,
}

#[derive(Serialize)]
struct Report {
    title: String,
    solved: Option<bool>,
    moves: Option<usize>,
    pushes: Option<usize>,
    lurd: Option<String>,
    seconds: f64,
    /// With `--optimise pushes`: true when no solution has fewer pushes, false when time ran out first.
    #[serde(skip_serializing_if = "Option::is_none")]
    fewest_pushes: Option<bool>,
}

/// The bytes `--memory-limit` allows (GiB), or by default half of the memory available now.
fn memory_budget(limit: Option<f64>) -> anyhow::Result<usize> {
    match limit {
        Some(gib) if gib > 0.0 && gib.is_finite() => Ok((gib * (1u64 << 30) as f64) as usize),
        Some(gib) => bail!("--memory-limit must be a positive number of GiB, not {gib}"),
        None => Ok(available_memory().map_or(DEFAULT_MEMORY, |bytes| bytes / 2)),
    }
}

/// The memory available to new work, from Linux's `/proc/meminfo` (the daemon's platform; a
/// crate such as `sysinfo` would bring much more than this one figure). None elsewhere.
fn available_memory() -> Option<usize> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn solve_one(level: &Level, time_limit: f64, memory: usize, optimise: Option<Optimise>) -> anyhow::Result<Report> {
    if !(time_limit > 0.0 && time_limit.is_finite()) {
        bail!("--time-limit must be a positive number of seconds, not {time_limit}");
    }
    let clock = Instant::now();
    let deadline = clock + Duration::from_secs_f64(time_limit);
    let mut outcome = solve_in_memory(level, Some(deadline), &AtomicBool::new(false), memory);
    let mut fewest_pushes = None;
    if let (Some(Optimise::Pushes), Outcome::Solved { pushes, .. }) = (optimise, &outcome) {
        let found = *pushes;
        let better = solve_fewest_pushes(level, Some(deadline), &AtomicBool::new(false), memory);
        fewest_pushes = Some(matches!(better, Outcome::Solved { .. }));
        if matches!(better, Outcome::Solved { pushes, .. } if pushes <= found) {
            outcome = better;
        }
    }
    let seconds = clock.elapsed().as_secs_f64();
    let title = level.title.clone();
    Ok(match outcome {
        Outcome::Solved { lurd, moves, pushes } => {
            // The solver replays its solutions already; checking again here costs nothing.
            anyhow::ensure!(verify(level, &lurd), "level {title}: the solver's solution does not solve it");
            Report { title, solved: Some(true), moves: Some(moves), pushes: Some(pushes), lurd: Some(lurd), seconds, fewest_pushes }
        }
        Outcome::Unsolvable => Report { title, solved: Some(false), moves: None, pushes: None, lurd: None, seconds, fewest_pushes },
        Outcome::OutOfTime => Report { title, solved: None, moves: None, pushes: None, lurd: None, seconds, fewest_pushes },
    })
}

pub fn run(command: SokobanCommand) -> anyhow::Result<ExitCode> {
    match command {
        SokobanCommand::Solve(args) => {
            let mut levels = read_levels(&args.file)?;
            if let Some(wanted) = &args.level {
                levels = vec![choose_level(levels, wanted, &args.file)?];
            }
            let memory = memory_budget(args.memory_limit)?;
            for level in &levels {
                let report = solve_one(level, args.time_limit, memory, args.optimise)?;
                if args.json {
                    println!("{}", serde_json::to_string(&report)?);
                } else {
                    let verdict = match report.solved {
                        Some(true) => format!(
                            "solved, {} moves, {} pushes{}",
                            report.moves.unwrap(),
                            report.pushes.unwrap(),
                            match report.fewest_pushes {
                                Some(true) => " (the fewest pushes)",
                                Some(false) => " (fewer pushes not ruled out in the time)",
                                None => "",
                            }
                        ),
                        Some(false) => "no solution exists".to_string(),
                        None => "out of time".to_string(),
                    };
                    println!("{}: {verdict} ({:.2} s)", report.title, report.seconds);
                    if let Some(lurd) = report.lurd {
                        println!("{lurd}");
                    }
                }
            }
        }
        SokobanCommand::Play(args) => {
            let level = choose_level(read_levels(&args.file)?, &args.level, &args.file)?;
            let stdin = std::io::stdin();
            play(level, stdin.lock(), &mut std::io::stdout())?;
        }
        SokobanCommand::Bench(args) => {
            let levels = read_levels(&args.collection)?;
            let memory = memory_budget(args.memory_limit)?;
            let progress = indicatif::ProgressBar::new(levels.len() as u64);
            let mut solved = 0;
            let mut total_seconds = 0.0;
            let mut rows = Vec::new();
            for level in &levels {
                let report = solve_one(level, args.time_limit, memory, None)?;
                solved += usize::from(report.solved == Some(true));
                total_seconds += report.seconds;
                progress.inc(1);
                rows.push(report);
            }
            progress.finish_and_clear();
            println!("{:<12} {:>8} {:>7} {:>7} {:>8}", "level", "result", "moves", "pushes", "seconds");
            for r in &rows {
                let result = match r.solved { Some(true) => "solved", Some(false) => "no sol.", None => "timeout" };
                let count = |n: Option<usize>| n.map_or("-".to_string(), |n| n.to_string());
                println!("{:<12} {:>8} {:>7} {:>7} {:>8.2}", r.title, result, count(r.moves), count(r.pushes), r.seconds);
            }
            let gib = memory as f64 / (1u64 << 30) as f64;
            println!("solved {solved}/{} in {total_seconds:.1} s ({} s limit and {gib:.1} GiB of memory each)", levels.len(), args.time_limit);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The level `wanted` (a number from 1 or a title) of `levels`, read from `file`.
fn choose_level(mut levels: Vec<Level>, wanted: &str, file: &std::path::Path) -> anyhow::Result<Level> {
    let index = match wanted.parse::<usize>() {
        Ok(n) if (1..=levels.len()).contains(&n) => n - 1,
        Ok(n) => bail!("--level {n}: {} has levels 1 to {}", file.display(), levels.len()),
        Err(_) => levels.iter().position(|l| l.title == wanted).with_context(|| format!("--level: no level titled {wanted:?} in {}", file.display()))?,
    };
    Ok(levels.swap_remove(index))
}

/// The terminal game: reads commands from `input` until it ends or `quit`, and writes the board
/// after each one.
fn play(level: Level, input: impl std::io::BufRead, out: &mut impl std::io::Write) -> anyhow::Result<()> {
    let mut game = Game::new(level);
    // The solution found by `solve` and how much of it has been stepped.
    let mut solution: Option<(Vec<char>, usize)> = None;
    writeln!(out, "{}\n{}", game.position.title, PLAY_HELP)?;
    show(&game, out)?;
    for line in input.lines() {
        let line = line.context("reading the terminal")?;
        let (command, argument) = line.trim().split_once(' ').map_or((line.trim(), ""), |(c, a)| (c, a.trim()));
        let count = || argument.parse::<usize>().unwrap_or(1);
        let mut keep_solution = false;
        match command {
            "" => continue,
            "quit" | "q" => break,
            "help" => writeln!(out, "{PLAY_HELP}")?,
            "undo" => {
                for _ in 0..count() {
                    game.undo();
                }
            }
            "redo" => {
                for _ in 0..count() {
                    game.redo();
                }
            }
            "restart" => game.restart(),
            "lurd" => writeln!(out, "{}", game.lurd())?,
            "import" => {
                let mut replayed = Game::new(game.start().clone());
                match replayed.play_lurd(argument) {
                    Ok(()) => game = replayed,
                    Err(e) => writeln!(out, "not imported: {e}")?,
                }
            }
            "solve" => {
                let seconds = if argument.is_empty() { 10.0 } else { argument.parse::<f64>().unwrap_or(f64::NAN) };
                if !(seconds > 0.0 && seconds.is_finite()) {
                    writeln!(out, "solve: {argument:?} is not a number of seconds")?;
                    continue;
                }
                let deadline = Instant::now() + Duration::from_secs_f64(seconds);
                keep_solution = true;
                match solve(&game.position, Some(deadline), &AtomicBool::new(false)) {
                    Outcome::Solved { lurd, moves, pushes } if verify(&game.position, &lurd) => {
                        writeln!(out, "a solution: {moves} moves, {pushes} pushes (`step` plays it)\n{lurd}")?;
                        solution = Some((lurd.chars().collect(), 0));
                    }
                    Outcome::Solved { .. } => writeln!(out, "the solver's answer did not check out")?,
                    Outcome::Unsolvable => writeln!(out, "no solution exists from here")?,
                    Outcome::OutOfTime => writeln!(out, "no solution found in {seconds} s")?,
                }
            }
            "step" => {
                keep_solution = true;
                for _ in 0..count() {
                    match &mut solution {
                        Some((lurd, next)) if *next < lurd.len() => {
                            game.play_lurd(&lurd[*next].to_string()).map_err(anyhow::Error::msg)?;
                            *next += 1;
                        }
                        Some(_) => writeln!(out, "the solution is played to its end")?,
                        None => writeln!(out, "no solution: `solve` first")?,
                    }
                }
            }
            letters if letters.chars().all(|c| "udlrUDLR".contains(c)) => {
                for letter in letters.chars() {
                    let direction = LURD.iter().position(|&l| l == letter.to_ascii_lowercase()).expect("a LURD letter");
                    if !game.step(direction) {
                        writeln!(out, "{letter}: blocked")?;
                        break;
                    }
                }
            }
            other => writeln!(out, "{other:?}: not a command (`help` lists them)")?,
        }
        if !keep_solution {
            solution = None;
        }
        show(&game, out)?;
    }
    Ok(())
}

fn show(game: &Game, out: &mut impl std::io::Write) -> anyhow::Result<()> {
    let status = if game.is_solved() { format!("solved in {} moves, {} pushes", game.moves(), game.pushes()) } else { format!("{} moves, {} pushes", game.moves(), game.pushes()) };
    writeln!(out, "{}{status}", game.position.to_xsb())?;
    Ok(())
}
