//! `boardwatch sokoban`: solve levels from XSB collections, and benchmark the solver.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use boardwatch::games::sokoban::files::read_levels;
use boardwatch::games::sokoban::level::Level;
use boardwatch::games::sokoban::solver::{solve, verify, Outcome};
use clap::{Args, Subcommand};
use serde::Serialize;

#[derive(Subcommand)]
pub enum SokobanCommand {
    /// Solve the levels of a collection (or one of them) and print the solutions.
    Solve(SolveArgs),
    /// Solve every level of a collection with a time limit each; print a table and the totals.
    Bench(BenchArgs),
}

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
    /// One JSON object per level: title, solved (true, false when proven unsolvable, null when
    /// out of time), moves, pushes, lurd, seconds.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct BenchArgs {
    /// An XSB/SOK/TXT collection, or a folder with one level per file.
    collection: PathBuf,
    /// Seconds allowed per level.
    #[arg(long)]
    time_limit: f64,
}

#[derive(Serialize)]
struct Report {
    title: String,
    solved: Option<bool>,
    moves: Option<usize>,
    pushes: Option<usize>,
    lurd: Option<String>,
    seconds: f64,
}

fn solve_one(level: &Level, time_limit: f64) -> anyhow::Result<Report> {
    if !(time_limit > 0.0 && time_limit.is_finite()) {
        bail!("--time-limit must be a positive number of seconds, not {time_limit}");
    }
    let clock = Instant::now();
    let outcome = solve(level, Some(clock + Duration::from_secs_f64(time_limit)), &AtomicBool::new(false));
    let seconds = clock.elapsed().as_secs_f64();
    let title = level.title.clone();
    Ok(match outcome {
        Outcome::Solved { lurd, moves, pushes } => {
            // The solver replays its solutions already; checking again here costs nothing.
            anyhow::ensure!(verify(level, &lurd), "level {title}: the solver's solution does not solve it");
            Report { title, solved: Some(true), moves: Some(moves), pushes: Some(pushes), lurd: Some(lurd), seconds }
        }
        Outcome::Unsolvable => Report { title, solved: Some(false), moves: None, pushes: None, lurd: None, seconds },
        Outcome::OutOfTime => Report { title, solved: None, moves: None, pushes: None, lurd: None, seconds },
    })
}

pub fn run(command: SokobanCommand) -> anyhow::Result<ExitCode> {
    match command {
        SokobanCommand::Solve(args) => {
            let mut levels = read_levels(&args.file)?;
            if let Some(wanted) = &args.level {
                let index = match wanted.parse::<usize>() {
                    Ok(n) if (1..=levels.len()).contains(&n) => n - 1,
                    Ok(n) => bail!("--level {n}: {} has levels 1 to {}", args.file.display(), levels.len()),
                    Err(_) => levels.iter().position(|l| &l.title == wanted)
                        .with_context(|| format!("--level: no level titled {wanted:?} in {}", args.file.display()))?,
                };
                levels = vec![levels.swap_remove(index)];
            }
            for level in &levels {
                let report = solve_one(level, args.time_limit)?;
                if args.json {
                    println!("{}", serde_json::to_string(&report)?);
                } else {
                    let verdict = match report.solved {
                        Some(true) => format!("solved, {} moves, {} pushes", report.moves.unwrap(), report.pushes.unwrap()),
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
        SokobanCommand::Bench(args) => {
            let levels = read_levels(&args.collection)?;
            let progress = indicatif::ProgressBar::new(levels.len() as u64);
            let mut solved = 0;
            let mut total_seconds = 0.0;
            let mut rows = Vec::new();
            for level in &levels {
                let report = solve_one(level, args.time_limit)?;
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
            println!("solved {solved}/{} in {total_seconds:.1} s ({} s limit each)", levels.len(), args.time_limit);
        }
    }
    Ok(ExitCode::SUCCESS)
}
