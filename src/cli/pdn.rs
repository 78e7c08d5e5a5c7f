//! `boardwatch pdn check|show`: replay PDN records through the rules engine.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use boardwatch::draughts::fen::to_fen;
use boardwatch::draughts::game::{record_variant, replay, Game};
use boardwatch::draughts::pdn::{read_games, GameRecord, ReadMode};
use boardwatch::draughts::{Position, Variant};
use clap::{Args, Subcommand};
use serde::Serialize;

#[derive(Subcommand)]
pub enum PdnCommand {
    /// Replay every game of each file and report the games that are not fully legal.
    Check(CheckArgs),
    /// Print one game move by move with the position after each move.
    Show(ShowArgs),
}

#[derive(Args)]
pub struct CheckArgs {
    /// PDN files to check.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Variant for games without a GameType tag.
    #[arg(long, default_value = "pool")]
    variant: Variant,
    /// Follow the PDN 3.0 grammar to the letter instead of accepting real archives' habits.
    #[arg(long)]
    strict: bool,
    /// One JSON object per file: file, games, legal, skipped, failures.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct ShowArgs {
    file: PathBuf,
    /// Which game of the file (1 = the first).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    game: u32,
    /// Variant for a game without a GameType tag.
    #[arg(long, default_value = "pool")]
    variant: Variant,
    /// Draw the board after every move, not only at the end.
    #[arg(long)]
    boards: bool,
}

pub fn run(command: PdnCommand) -> anyhow::Result<ExitCode> {
    match command {
        PdnCommand::Check(args) => check(args),
        PdnCommand::Show(args) => show(args),
    }
}

/// Read a PDN file of real-world encoding (Latin-1 archives exist) into records.
fn read_file(path: &Path, mode: ReadMode) -> anyhow::Result<Vec<GameRecord>> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let text = String::from_utf8_lossy(&bytes);
    read_games(&text, mode).with_context(|| format!("{}", path.display()))
}

#[derive(Serialize)]
struct Failure {
    game: usize,
    line: usize,
    ply: usize,
    #[serde(rename = "move")]
    written: String,
    reason: String,
}

#[derive(Serialize)]
struct FileReport {
    file: String,
    games: usize,
    legal: usize,
    /// Games of other games types (10x10, Frisian...), not replayed.
    skipped: usize,
    failures: Vec<Failure>,
}

fn check_file(path: &Path, args: &CheckArgs) -> FileReport {
    let mode = if args.strict { ReadMode::Strict } else { ReadMode::Lenient };
    let mut report = FileReport { file: path.display().to_string(), games: 0, legal: 0, skipped: 0, failures: vec![] };
    let records = match read_file(path, mode) {
        Ok(records) => records,
        Err(err) => {
            report.failures.push(Failure { game: 0, line: 0, ply: 0, written: String::new(), reason: format!("{err:#}") });
            return report;
        }
    };
    report.games = records.len();
    for (index, record) in records.iter().enumerate() {
        if record_variant(record, args.variant).is_err() {
            report.skipped += 1;
            continue;
        }
        match replay(record, args.variant) {
            Ok(_) => report.legal += 1,
            Err(e) => report.failures.push(Failure { game: index + 1, line: e.line, ply: e.ply, written: e.written, reason: e.reason }),
        }
    }
    report
}

fn check(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let mut all_legal = true;
    for path in &args.files {
        let report = check_file(path, &args);
        all_legal &= report.failures.is_empty();
        if args.json {
            println!("{}", serde_json::to_string(&report)?);
            continue;
        }
        let skipped = if report.skipped > 0 { format!(", {} skipped (not an 8x8 variant)", report.skipped) } else { String::new() };
        println!("{}: {} games, {} fully legal{skipped}", report.file, report.games, report.legal);
        for f in &report.failures {
            if f.game == 0 {
                println!("  {}", f.reason);
            } else {
                println!("  game {} (line {}): ply {} `{}`: {}", f.game, f.line, f.ply, f.written, f.reason);
            }
        }
    }
    Ok(if all_legal { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// The board as a diagram: Black's edge at the top, `.` light squares blank.
pub fn diagram(pos: &Position) -> String {
    let mut out = String::new();
    for (row, line) in pos.to_grid().iter().enumerate() {
        out.push_str("   ");
        for (col, ch) in line.chars().enumerate() {
            let shown = if (row + col) % 2 == 0 { ' ' } else if ch == '.' { '·' } else { ch };
            out.push(shown);
            out.push(' ');
        }
        out.push('\n');
    }
    out
}

fn show(args: ShowArgs) -> anyhow::Result<ExitCode> {
    let records = read_file(&args.file, ReadMode::Lenient)?;
    let Some(record) = records.get(args.game as usize - 1) else {
        bail!("{}: has {} games, there is no game {}", args.file.display(), records.len(), args.game);
    };
    let game = replay(record, args.variant).with_context(|| format!("{} game {}", args.file.display(), args.game))?;
    print_game(&game, &args);
    Ok(ExitCode::SUCCESS)
}

fn print_game(game: &Game, args: &ShowArgs) {
    println!("{} game {} ({}, GameType {})", args.file.display(), args.game, game.variant, game.variant.game_type());
    for (name, value) in &game.tags {
        println!("  {name}: {value}");
    }
    println!("start: {}", to_fen(&game.start, &game.rules));
    if args.boards {
        print!("{}", diagram(&game.start));
    }
    for (i, ply) in game.plies.iter().enumerate() {
        let captured = ply.mv.capture_count();
        let note = match (captured, ply.mv.crowns) {
            (0, false) => String::new(),
            (n, crown) => format!("  takes {n}{}", if crown { ", crowned" } else { "" }),
        };
        let note = if captured == 0 && ply.mv.crowns { "  crowned".to_string() } else { note };
        println!("{:>3}. {:<6} {:<14}{note:<18} {}", i + 1, ply.before.to_move.name(), ply.text, to_fen(&ply.after, &game.rules));
        if args.boards {
            print!("{}", diagram(&ply.after));
        }
    }
    let last = game.final_position();
    if !args.boards {
        print!("{}", diagram(&last));
    }
    let ending = match game.decided_winner() {
        Some(winner) => format!("{} has no move left: {} wins", last.to_move.name(), winner.name()),
        None => format!("{} to move", last.to_move.name()),
    };
    println!("result {} ({ending})", game.result);
}
